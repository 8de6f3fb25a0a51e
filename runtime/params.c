/* runtime/params.c — TVM's .params files in and out (see params.h).
 *
 * Reading walks the image with one bounds-checked cursor: every field is
 * taken through cur_take(), which fails instead of reading past the end, so
 * a file cut at any byte gives "truncated" with the offset and the tensor it
 * was reading. A record's element data is copied once, from the (mapped)
 * image straight into the tensor's final 64-byte-aligned buffer.
 *
 * The NDArray record is the one ir/tensor_blob.c decodes from the metadata
 * section's base64 text; that decoder builds module constants in an arena
 * from one whole record, while parameters are run-time tensors read from a
 * sequence of records, so the record is parsed here again (sharing its
 * constants) rather than bent to fit both.
 */
#include "runtime/params.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ir/mem.h"
#include "ir/tensor_blob.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, ".params files are little-endian");

/* ================================================================ reading */

typedef struct Cursor {
  const uint8_t *p;
  size_t n, pos;
  char what[160]; /* what is being read, for messages: "the name list", "tensor 'w' (#3)" */
} Cursor;

/* The next k bytes, or NULL (with a "truncated" message) when fewer remain. */
static const uint8_t *cur_take(Cursor *c, size_t k, const char *field, char *err) {
  if (c->n - c->pos < k) {
    bundle_fail(err, "truncated at byte %zu: %s of %s needs %zu bytes, %zu left", c->pos, field,
                c->what, k, c->n - c->pos);
    return NULL;
  }
  const uint8_t *q = c->p + c->pos;
  c->pos += k;
  return q;
}

static bool cur_u64(Cursor *c, uint64_t *v, const char *field, char *err) {
  const uint8_t *q = cur_take(c, 8, field, err);
  if (q) memcpy(v, q, 8);
  return q != NULL;
}

/* Element types relayc's tensors hold (lanes checked separately). */
static bool params_dtype_ok(DType t) {
  switch (t.code) {
  case DT_INT: return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  case DT_UINT: return t.bits == 1 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  case DT_FLOAT: return t.bits == 16 || t.bits == 32 || t.bits == 64;
  case DT_BFLOAT: return t.bits == 16;
  case DT_E4M3: case DT_E5M2: return t.bits == 8;
  default: return false;
  }
}

/* "'name' (#i)" with bytes outside printable ASCII shown as '?', cut at 100 bytes. */
static void tensor_label(char *buf, size_t cap, const uint8_t *name, size_t len, uint64_t i) {
  char shown[104];
  size_t k = len > 100 ? 100 : len;
  for (size_t j = 0; j < k; j++) shown[j] = name[j] >= 32 && name[j] < 127 ? (char)name[j] : '?';
  snprintf(buf, cap, "tensor '%.*s%s' (#%" PRIu64 ")", (int)k, shown, len > k ? "..." : "", i);
}

/* One NDArray record at the cursor -> a new tensor (NULL with a message). */
static Tensor *read_record(Cursor *c, char *err) {
  size_t start = c->pos;
  const uint8_t *h = cur_take(c, 32, "the record header", err);
  if (!h) return NULL;
  uint64_t magic;
  int32_t dev, ndim;
  memcpy(&magic, h, 8);
  memcpy(&dev, h + 16, 4);
  memcpy(&ndim, h + 24, 4);
  DType dt = {h[28], h[29], 0};
  memcpy(&dt.lanes, h + 30, 2);
  if (magic != TENSOR_BLOB_MAGIC) {
    bundle_fail(err, "byte %zu: %s does not start with the NDArray magic 0x%016llX (found 0x%016" PRIX64 ")",
                start, c->what, TENSOR_BLOB_MAGIC, magic);
    return NULL;
  }
  if (dev != TENSOR_BLOB_CPU) {
    bundle_fail(err, "byte %zu: %s is on device type %" PRId32 "; only CPU (1) is supported",
                start + 16, c->what, dev);
    return NULL;
  }
  if (ndim < 0 || ndim > TENSOR_MAX_NDIM) {
    bundle_fail(err, "byte %zu: %s has rank %" PRId32 " (0 to %d is supported)", start + 24,
                c->what, ndim, TENSOR_MAX_NDIM);
    return NULL;
  }
  char name[32];
  if (dt.lanes != 1) {
    bundle_fail(err, "byte %zu: %s has %u lanes per element; only 1 is supported", start + 28,
                c->what, dt.lanes);
    return NULL;
  }
  if (!params_dtype_ok(dt)) {
    bundle_fail(err, "byte %zu: %s has an unsupported dtype (code %u, %u bits%s%s)", start + 28,
                c->what, dt.code, dt.bits, dt.bits ? ": " : "", dt.bits ? dtype_name(dt, name) : "");
    return NULL;
  }
  int64_t shape[TENSOR_MAX_NDIM];
  const uint8_t *s = cur_take(c, 8 * (size_t)ndim + 8, "the shape and byte count", err);
  if (!s) return NULL;
  memcpy(shape, s, 8 * (size_t)ndim);
  uint64_t count = 1, expect = 0;
  bool overflow = false;
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] < 0) {
      bundle_fail(err, "byte %zu: %s has negative extent %" PRId64 " in dimension %" PRId32,
                  start + 32 + 8 * (size_t)i, c->what, shape[i], i);
      return NULL;
    }
    overflow |= __builtin_mul_overflow(count, (uint64_t)shape[i], &count);
  }
  overflow |= __builtin_mul_overflow(count, (uint64_t)(dt.bits + 7) / 8, &expect);
  int64_t size;
  memcpy(&size, s + 8 * (size_t)ndim, 8);
  size_t size_at = start + 32 + 8 * (size_t)ndim;
  if (overflow) {
    bundle_fail(err, "byte %zu: %s has a shape with too many elements", start + 32, c->what);
    return NULL;
  }
  if (size < 0 || (uint64_t)size != expect) {
    bundle_fail(err, "byte %zu: %s says it holds %" PRId64 " data bytes, its shape needs %" PRIu64,
                size_at, c->what, size, expect);
    return NULL;
  }
  const uint8_t *data = cur_take(c, (size_t)expect, "the element data", err);
  if (!data) return NULL;
  TensorError te = TENSOR_OK;
  Tensor *t = tensor_new_checked(dt, ndim, shape, &te);
  if (!t) {
    bundle_fail(err, "%s: %s", c->what,
                te == TENSOR_ENOMEM ? "out of memory" : "tensor too large");
    return NULL;
  }
  if (expect) memcpy(t->data, data, (size_t)expect);
  if (dtype_is_bool(dt)) {
    uint8_t *b = t->data;
    for (uint64_t i = 0; i < expect; i++) b[i] = b[i] != 0;
  }
  return t;
}

bool params_read_mem(const void *p, size_t n, TensorBundle *out, char *err) {
  Cursor c = {p, n, 0, "the file header"};
  uint64_t magic, reserved, nnames, ntensors;
  if (!cur_u64(&c, &magic, "the magic number", err)) return false;
  if (magic != PARAMS_MAGIC)
    return bundle_fail(err, "not a TVM .params file (magic 0x%016" PRIX64 ", expected 0x%016llX)",
                       magic, PARAMS_MAGIC);
  if (!cur_u64(&c, &reserved, "the reserved word", err)) return false;
  snprintf(c.what, sizeof c.what, "the name list");
  if (!cur_u64(&c, &nnames, "the name count", err)) return false;
  if (nnames > (n - c.pos) / 8)
    return bundle_fail(err, "byte %zu: %" PRIu64 " names need at least %" PRIu64 " more bytes, %zu left (truncated or corrupt)",
                       c.pos - 8, nnames, nnames > UINT64_MAX / 8 ? UINT64_MAX : nnames * 8, n - c.pos);
  size_t first = out->n;
  const uint8_t **names = mem_calloc((size_t)nnames + 1, sizeof *names);
  size_t *lens = mem_calloc((size_t)nnames + 1, sizeof *lens);
  bool ok = true;
  for (uint64_t i = 0; i < nnames && ok; i++) {
    snprintf(c.what, sizeof c.what, "name #%" PRIu64, i + 1);
    uint64_t len;
    size_t at = c.pos;
    ok = cur_u64(&c, &len, "the length", err);
    if (ok && len > n - c.pos) {
      ok = bundle_fail(err, "truncated at byte %zu: name #%" PRIu64 " is %" PRIu64 " bytes long, %zu left",
                       c.pos, i + 1, len, n - c.pos);
    }
    if (ok) {
      names[i] = cur_take(&c, (size_t)len, "the text", err);
      lens[i] = (size_t)len;
      if (memchr(names[i], 0, lens[i]))
        ok = bundle_fail(err, "byte %zu: name #%" PRIu64 " contains a NUL byte", at + 8, i + 1);
    }
  }
  if (ok) {
    snprintf(c.what, sizeof c.what, "the tensor list");
    ok = cur_u64(&c, &ntensors, "the tensor count", err);
    if (ok && ntensors != nnames)
      ok = bundle_fail(err, "byte %zu: the file has %" PRIu64 " names but %" PRIu64 " tensors",
                       c.pos - 8, nnames, ntensors);
  }
  for (uint64_t i = 0; i < nnames && ok; i++) {
    tensor_label(c.what, sizeof c.what, names[i], lens[i], i + 1);
    Tensor *t = read_record(&c, err);
    if (t) bundle_add(out, (const char *)names[i], lens[i], t);
    ok = t != NULL;
  }
  if (ok && c.pos != n)
    ok = bundle_fail(err, "byte %zu: %zu unexpected bytes after the last tensor", c.pos, n - c.pos);
  mem_free(names);
  mem_free(lens);
  if (!ok) bundle_truncate(out, first); /* leave *out as it was */
  return ok;
}

/* ================================================================ writing */

static bool put(FILE *f, const void *p, size_t n, char *err) {
  if (n && fwrite(p, 1, n, f) != n) return bundle_fail(err, "write error: %s", strerror(errno));
  return true;
}

static bool put_u64(FILE *f, uint64_t v, char *err) { return put(f, &v, 8, err); }

bool params_write_stream(FILE *f, const TensorBundle *b, char *err) {
  for (size_t i = 0; i < b->n; i++) {
    char name[32];
    if (b->tensors[i]->dtype.lanes != 1 || !params_dtype_ok(b->tensors[i]->dtype))
      return bundle_fail(err, "'%s': dtype %s cannot be written to a .params file", b->names[i],
                         dtype_name(b->tensors[i]->dtype, name));
  }
  bool ok = put_u64(f, PARAMS_MAGIC, err) && put_u64(f, 0, err) && put_u64(f, b->n, err);
  for (size_t i = 0; i < b->n && ok; i++) {
    size_t len = strlen(b->names[i]);
    ok = put_u64(f, len, err) && put(f, b->names[i], len, err);
  }
  ok = ok && put_u64(f, b->n, err);
  for (size_t i = 0; i < b->n && ok; i++) {
    const Tensor *t = b->tensors[i];
    uint8_t h[32] = {0};
    uint64_t magic = TENSOR_BLOB_MAGIC;
    int32_t dev = TENSOR_BLOB_CPU, ndim = t->ndim;
    memcpy(h, &magic, 8);
    memcpy(h + 16, &dev, 4);
    memcpy(h + 24, &ndim, 4);
    h[28] = t->dtype.code;
    h[29] = t->dtype.bits;
    memcpy(h + 30, &t->dtype.lanes, 2);
    ok = put(f, h, sizeof h, err) && put(f, t->shape, 8 * (size_t)t->ndim, err) &&
         put_u64(f, t->nbytes, err) && put(f, t->data, (size_t)t->nbytes, err);
  }
  return ok;
}
