/* ir/tensor_blob.c — base64 and the NDArray record of spec §6.4 (see tensor_blob.h).
 *
 * Decoding reads through one small input abstraction (BlobIn) that is either
 * raw bytes or a streaming base64 reader, so the record parser is written
 * once. The streaming reader decodes whole 4-character groups straight into
 * the caller's buffer and keeps at most one partial group (3 bytes) aside,
 * which is how the tensor data lands in its final buffer without a copy.
 * Every size in the header is checked against the bytes actually present
 * before anything is allocated. Encoding streams through a 4 KiB buffer.
 *
 * The record is little-endian; relayc targets little-endian hosts (asserted
 * below), so element data is copied as is.
 */
#include "ir/tensor_blob.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "ir/base64_simd.h"
#include "ir/dims_text.h"
#include "ir/dtype.h"
#include "ir/mem.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "tensor blobs assume a little-endian host");

/* ================================================================== base64 */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Character -> 6-bit value; 255 for characters outside the alphabet. */
static const uint8_t b64_value[256] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,  62, 255, 255, 255,  63,
     52,  53,  54,  55,  56,  57,  58,  59,  60,  61, 255, 255, 255, 255, 255, 255,
    255,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13,  14,
     15,  16,  17,  18,  19,  20,  21,  22,  23,  24,  25, 255, 255, 255, 255, 255,
    255,  26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,  38,  39,  40,
     41,  42,  43,  44,  45,  46,  47,  48,  49,  50,  51, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
};

size_t base64_encoded_len(size_t n) { return (n / 3 + (n % 3 != 0)) * 4; }

/* Encodes k (1..3) bytes as one group of 4 characters, padding with '='. */
static void b64_encode_group(const uint8_t *in, size_t k, char *out) {
  uint32_t v = (uint32_t)in[0] << 16;
  if (k > 1) v |= (uint32_t)in[1] << 8;
  if (k > 2) v |= in[2];
  out[0] = b64_alphabet[v >> 18];
  out[1] = b64_alphabet[(v >> 12) & 63];
  out[2] = k > 1 ? b64_alphabet[(v >> 6) & 63] : '=';
  out[3] = k > 2 ? b64_alphabet[v & 63] : '=';
}

char *base64_encode(const void *data, size_t n, size_t *out_len) {
  const uint8_t *p = data;
  size_t m = base64_encoded_len(n);
  char *out = mem_malloc(m + 1), *o = out;
  for (; n >= 3; n -= 3, p += 3, o += 4) b64_encode_group(p, 3, o);
  if (n) b64_encode_group(p, n, o);
  out[m] = 0;
  if (out_len) *out_len = m;
  return out;
}

size_t base64_decoded_len(const char *s, size_t n) {
  if (n % 4) return SIZE_MAX;
  if (n == 0) return 0;
  size_t pad = s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0;
  return n / 4 * 3 - pad;
}

/* Offset within a group of its first character outside the alphabet. */
static size_t b64_first_bad(const unsigned char *g, size_t k) {
  size_t i = 0;
  while (i < k && b64_value[g[i]] != 255) i++;
  return i;
}

/* Decodes one group of 4 valid-or-not characters; bit 7 of the result's top
 * byte is set when any of them is outside the alphabet. */
static inline uint32_t b64_group_value(const unsigned char *q, uint32_t *acc) {
  uint32_t a = b64_value[q[0]], b = b64_value[q[1]], c = b64_value[q[2]], d = b64_value[q[3]];
  *acc |= a | b | c | d;
  return a << 18 | b << 12 | c << 6 | d;
}

/* Decodes `ngroups` full groups (no padding) from s into out. On a bad
 * character returns false with *bad = its offset from s. The vector kernels
 * (ir/base64_simd.h) decode the bulk; from where they stop, the scalar loop works
 * in blocks of 16 groups, checks validity once per block and stores 4 bytes
 * per group (the 4th is overwritten by the next group). */
static bool b64_decode_groups(const unsigned char *s, size_t ngroups, uint8_t *out, size_t *bad) {
  enum { BLOCK = 16 };
  size_t g = base64_simd_groups(s, ngroups, out); /* the bulk, up to a block with a bad character */
  for (; g + BLOCK <= ngroups; g += BLOCK) {
    uint32_t acc = 0;
    const unsigned char *q = s + 4 * g;
    uint8_t *o = out + 3 * g;
    for (int k = 0; k < BLOCK - 1; k++, q += 4, o += 3) {
      uint32_t w = __builtin_bswap32(b64_group_value(q, &acc) << 8);
      memcpy(o, &w, 4);
    }
    uint32_t v = b64_group_value(q, &acc);
    o[0] = (uint8_t)(v >> 16);
    o[1] = (uint8_t)(v >> 8);
    o[2] = (uint8_t)v;
    if (acc & 0x80) break; /* located below */
  }
  for (; g < ngroups; g++) {
    uint32_t acc = 0, v = b64_group_value(s + 4 * g, &acc);
    if (acc & 0x80) {
      *bad = g * 4 + b64_first_bad(s + 4 * g, 4);
      return false;
    }
    out[3 * g] = (uint8_t)(v >> 16);
    out[3 * g + 1] = (uint8_t)(v >> 8);
    out[3 * g + 2] = (uint8_t)v;
  }
  return true;
}

/* Decodes the final group (which may end in "=" or "==") into out; returns
 * its byte count (1..3), or 0 with *bad = offset within the group. */
static unsigned b64_decode_last(const unsigned char *g, uint8_t out[3], size_t *bad) {
  unsigned nchars = g[3] != '=' ? 4 : g[2] != '=' ? 3 : 2;
  size_t k = b64_first_bad(g, nchars);
  if (k < nchars) {
    *bad = k;
    return 0;
  }
  uint32_t v = 0;
  for (unsigned i = 0; i < 4; i++) v = v << 6 | (i < nchars ? b64_value[g[i]] : 0);
  out[0] = (uint8_t)(v >> 16);
  out[1] = (uint8_t)(v >> 8);
  out[2] = (uint8_t)v;
  return nchars - 1;
}

size_t base64_decode(const char *s, size_t n, void *out, size_t *bad) {
  size_t total = base64_decoded_len(s, n), where = 0;
  if (total == SIZE_MAX) {
    if (bad) *bad = n - n % 4;
    return SIZE_MAX;
  }
  if (n == 0) return 0;
  const unsigned char *u = (const unsigned char *)s;
  size_t full = n / 4 - 1;
  if (!b64_decode_groups(u, full, out, &where)) {
    if (bad) *bad = where;
    return SIZE_MAX;
  }
  uint8_t tail[3];
  unsigned k = b64_decode_last(u + 4 * full, tail, &where);
  if (!k) {
    if (bad) *bad = 4 * full + where;
    return SIZE_MAX;
  }
  memcpy((uint8_t *)out + 3 * full, tail, k);
  return total;
}

/* ------------------------------------------------------ streaming decoding */

/* Reads decoded bytes in arbitrary pieces. Invariant: groups [0, next) have
 * been decoded; bytes pend[lo..hi) of the last one are not yet delivered. */
typedef struct B64Reader {
  const unsigned char *s;
  size_t ngroups, next;
  uint8_t pend[3];
  unsigned lo, hi;
  size_t bad; /* offset of the offending character after a failure */
} B64Reader;

/* Copies k bytes into dst; false on a bad character or when input runs out. */
static bool b64r_read(B64Reader *r, uint8_t *dst, size_t k) {
  while (k) {
    if (r->lo < r->hi) {
      size_t c = r->hi - r->lo < k ? r->hi - r->lo : k;
      memcpy(dst, r->pend + r->lo, c);
      r->lo += (unsigned)c;
      dst += c;
      k -= c;
    } else if (k >= 3 && r->next + 1 < r->ngroups) {
      size_t g = k / 3, left = r->ngroups - 1 - r->next, where = 0;
      if (g > left) g = left;
      if (!b64_decode_groups(r->s + 4 * r->next, g, dst, &where)) {
        r->bad = 4 * r->next + where;
        return false;
      }
      r->next += g;
      dst += 3 * g;
      k -= 3 * g;
    } else if (r->next < r->ngroups) {
      const unsigned char *g = r->s + 4 * r->next;
      size_t where = 0;
      unsigned got;
      if (r->next + 1 < r->ngroups) {
        got = b64_decode_groups(g, 1, r->pend, &where) ? 3 : 0;
      } else {
        got = b64_decode_last(g, r->pend, &where);
      }
      if (!got) {
        r->bad = 4 * r->next + where;
        return false;
      }
      r->next++;
      r->lo = 0;
      r->hi = got;
    } else {
      r->bad = 4 * r->ngroups;
      return false;
    }
  }
  return true;
}

/* ============================================================= blob input */

/* The record's bytes, raw or as base64 text. `pos` counts bytes consumed. */
typedef struct BlobIn {
  const uint8_t *raw; /* NULL: read through b64 */
  B64Reader b64;
  size_t nchars;      /* length of the base64 text */
  size_t total, pos;  /* decoded size, bytes consumed */
} BlobIn;

static void blob_err(const BlobIn *in, BlobError *e, size_t lo, size_t hi, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Records a failure at record bytes [lo, hi), mapped to characters for base64. */
static void blob_err(const BlobIn *in, BlobError *e, size_t lo, size_t hi, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  if (hi < lo) hi = lo;
  if (in->raw) {
    e->lo = lo;
    e->hi = hi;
  } else {
    e->lo = lo / 3 * 4;
    e->hi = (hi + 2) / 3 * 4;
    if (e->hi > in->nchars) e->hi = in->nchars;
    if (e->lo > e->hi) e->lo = e->hi;
  }
}

/* The error for a character outside the alphabet at offset `at` of the text. */
static void b64_bad_char(const unsigned char *s, size_t nchars, size_t at, BlobError *e) {
  unsigned char c = at < nchars ? s[at] : 0;
  if (c > 32 && c < 127) {
    snprintf(e->msg, sizeof e->msg, "invalid base64 character '%c' in tensor blob", c);
  } else {
    snprintf(e->msg, sizeof e->msg, "invalid base64 character (byte 0x%02x) in tensor blob", c);
  }
  e->lo = at;
  e->hi = at < nchars ? at + 1 : at;
}

/* Reads k bytes (the caller has checked that they are present). */
static bool blob_read(BlobIn *in, void *dst, size_t k, BlobError *e) {
  if (in->raw) {
    memcpy(dst, in->raw + in->pos, k);
    in->pos += k;
    return true;
  }
  if (b64r_read(&in->b64, dst, k)) {
    in->pos += k;
    return true;
  }
  b64_bad_char(in->b64.s, in->nchars, in->b64.bad, e);
  return false;
}

static void normalise_bool(uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = p[i] != 0;
}

static uint64_t get_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t get_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

/* ============================================================ blob decode */

/* Element types a constant may have (lanes checked separately). */
static bool blob_dtype_supported(DType t) {
  switch (t.code) {
  case DT_INT: return t.bits >= 8 && t.bits <= 64 && t.bits % 8 == 0;
  case DT_UINT: return t.bits == 1 || (t.bits >= 8 && t.bits <= 64 && t.bits % 8 == 0);
  case DT_FLOAT: return t.bits == 16 || t.bits == 32 || t.bits == 64;
  case DT_BFLOAT: return t.bits == 16;
  case DT_E4M3: case DT_E5M2: return t.bits == 8;
  default: return false;
  }
}

bool tensor_blob_dtype_supported(DType t) { return t.lanes == 1 && blob_dtype_supported(t); }

static bool blob_dtype_code_known(uint8_t code) {
  return code <= DT_BFLOAT || code == DT_E4M3 || code == DT_E5M2;
}

/* "(2, 3) float32" (shortened if long) into buf. */
static void shape_text(const int64_t *shape, int32_t ndim, DType t, char *buf, size_t n) {
  char name[32];
  size_t k = strlen(dims_text(buf, n, shape, ndim, DIMS_PLAIN));
  snprintf(buf + k, n - k, " %s", dtype_name(t, name));
}

/* The fixed 32-byte head: magic, device, rank, dtype. */
static bool blob_check_head(BlobIn *in, const uint8_t *h, ConstTensor *out, BlobError *e) {
  uint64_t magic = get_u64(h);
  if (magic != TENSOR_BLOB_MAGIC) {
    blob_err(in, e, 0, 8, "bad tensor blob magic 0x%016" PRIX64 " (expected 0x%016llX)", magic,
             TENSOR_BLOB_MAGIC);
    return false;
  }
  if (in->total < 32) {
    blob_err(in, e, 0, in->total, "truncated tensor blob: %zu bytes, the header alone needs 40",
             in->total);
    return false;
  }
  int32_t dev = (int32_t)get_u32(h + 16);
  if (dev != TENSOR_BLOB_CPU) {
    blob_err(in, e, 16, 20, "tensor blob is on device type %" PRId32 "; only CPU (1) is supported",
             dev);
    return false;
  }
  int32_t ndim = (int32_t)get_u32(h + 24);
  if (ndim < 0 || ndim > TENSOR_BLOB_MAX_NDIM) {
    blob_err(in, e, 24, 28, "tensor blob has %s rank %" PRId32 " (at most %d is supported)",
             ndim < 0 ? "negative" : "absurd", ndim, TENSOR_BLOB_MAX_NDIM);
    return false;
  }
  DType t = {h[28], h[29], get_u16(h + 30)};
  char name[32];
  if (!blob_dtype_code_known(t.code)) {
    blob_err(in, e, 28, 29, "tensor blob has unknown dtype code %u", t.code);
    return false;
  }
  if (t.lanes != 1) {
    blob_err(in, e, 28, 32, "tensor blob has %u lanes per element; constants must have 1",
             t.lanes);
    return false;
  }
  if (!blob_dtype_supported(t)) {
    blob_err(in, e, 28, 32, "tensor blob has unsupported dtype %s (code %u, %u bits)",
             dtype_name(t, name), t.code, t.bits);
    return false;
  }
  out->dtype = t;
  out->ndim = ndim;
  return true;
}

/* Shape and byte count; checks extents, overflow and agreement with the data present. */
static bool blob_read_shape(BlobIn *in, Arena *a, ConstTensor *out, BlobError *e) {
  size_t need = 8 * (size_t)out->ndim + 8;
  if (in->total - in->pos < need) {
    blob_err(in, e, in->pos, in->total,
             "truncated tensor blob: rank %" PRId32 " needs %zu more header bytes, %zu present",
             out->ndim, need, in->total - in->pos);
    return false;
  }
  uint8_t buf[8 * TENSOR_BLOB_MAX_NDIM + 8];
  size_t at = in->pos;
  if (!blob_read(in, buf, need, e)) return false;
  out->shape = arena_alloc(a, sizeof(int64_t) * (size_t)(out->ndim ? out->ndim : 1));
  uint64_t count = 1;
  bool overflow = false;
  for (int32_t i = 0; i < out->ndim; i++) {
    int64_t x = (int64_t)get_u64(buf + 8 * i);
    if (x < 0) {
      blob_err(in, e, at + 8 * (size_t)i, at + 8 * (size_t)i + 8,
               "tensor blob has negative extent %" PRId64 " in dimension %" PRId32, x, i);
      return false;
    }
    out->shape[i] = x;
    overflow |= __builtin_mul_overflow(count, (uint64_t)x, &count);
  }
  size_t esize = (size_t)(out->dtype.bits + 7) / 8;
  uint64_t expect = 0;
  overflow |= __builtin_mul_overflow(count, (uint64_t)esize, &expect);
  int64_t size = (int64_t)get_u64(buf + 8 * (size_t)out->ndim);
  size_t size_at = at + 8 * (size_t)out->ndim;
  char st[96];
  shape_text(out->shape, out->ndim, out->dtype, st, sizeof st);
  if (overflow) {
    blob_err(in, e, at, size_at, "tensor blob shape %s has too many elements", st);
    return false;
  }
  if (size < 0 || (uint64_t)size != expect) {
    blob_err(in, e, size_at, size_at + 8,
             "tensor blob byte count %" PRId64 " disagrees with its shape %s (%" PRIu64 " bytes)",
             size, st, expect);
    return false;
  }
  size_t left = in->total - in->pos;
  if (left < expect) {
    blob_err(in, e, in->pos, in->total,
             "truncated tensor blob: %s needs %" PRIu64 " data bytes, %zu present", st, expect,
             left);
    return false;
  }
  if (left > expect) {
    blob_err(in, e, in->pos + expect, in->total,
             "tensor blob has %zu unexpected bytes after its data", (size_t)(left - expect));
    return false;
  }
  out->nbytes = expect;
  return true;
}

/* Header and shape checked, data allocated but not read. */
static bool blob_decode_head(BlobIn *in, Arena *a, ConstTensor *out, BlobError *e) {
  memset(out, 0, sizeof *out);
  out->meta_index = -1;
  uint8_t head[32] = {0};
  size_t k = in->total < 32 ? in->total : 32;
  if (k < 8) {
    blob_err(in, e, 0, in->total, "truncated tensor blob: %zu bytes, the header alone needs 40",
             in->total);
    return false;
  }
  if (!blob_read(in, head, k, e)) return false;
  if (!blob_check_head(in, head, out, e)) return false;
  if (!blob_read_shape(in, a, out, e)) return false;
  out->data = arena_alloc_big(a, (size_t)out->nbytes);
  return true;
}

bool tensor_blob_decode(const void *bytes, size_t n, Arena *a, ConstTensor *out, BlobError *err) {
  BlobIn in = {.raw = bytes, .total = n};
  if (!blob_decode_head(&in, a, out, err)) return false;
  if (!blob_read(&in, out->data, (size_t)out->nbytes, err)) return false;
  if (dtype_is_bool(out->dtype)) normalise_bool(out->data, (size_t)out->nbytes);
  return true;
}

bool tensor_blob_begin_base64(const char *s, size_t n, Arena *a, ConstTensor *out, BlobRest *rest,
                              BlobError *err) {
  memset(rest, 0, sizeof *rest);
  BlobIn in = {.nchars = n};
  in.total = base64_decoded_len(s, n);
  if (in.total == SIZE_MAX) {
    memset(out, 0, sizeof *out);
    out->meta_index = -1;
    snprintf(err->msg, sizeof err->msg,
             "tensor blob base64 length %zu is not a multiple of 4 (truncated?)", n);
    err->lo = n - n % 4;
    err->hi = n;
    return false;
  }
  in.b64.s = (const unsigned char *)s;
  in.b64.ngroups = n / 4;
  if (!blob_decode_head(&in, a, out, err)) return false;
  /* data bytes already decoded with the header's last group; the rest is whole groups */
  B64Reader *r = &in.b64;
  size_t k = r->hi - r->lo;
  if (k > out->nbytes) k = (size_t)out->nbytes;
  if (k && !blob_read(&in, out->data, k, err)) return false;
  bool boolean = dtype_is_bool(out->dtype);
  if (boolean) normalise_bool(out->data, k);
  *rest = (BlobRest){s, n, r->next, r->ngroups - r->next, (uint8_t *)out->data + k,
                     (size_t)out->nbytes - k, boolean};
  return true;
}

bool tensor_blob_rest_decode(const BlobRest *rest, size_t lo, size_t hi, BlobError *err) {
  if (hi > rest->ngroups) hi = rest->ngroups;
  if (lo >= hi) return true;
  const unsigned char *s = (const unsigned char *)rest->s, *g = s + 4 * (rest->group0 + lo);
  uint8_t *dst = rest->dst + 3 * lo;
  bool last = hi == rest->ngroups;
  size_t full = hi - lo - last, where = 0, bytes = 3 * full;
  if (!b64_decode_groups(g, full, dst, &where)) {
    b64_bad_char(s, rest->nchars, 4 * (rest->group0 + lo) + where, err);
    return false;
  }
  if (last) {
    uint8_t tail[3];
    unsigned got = b64_decode_last(g + 4 * full, tail, &where);
    if (!got) {
      b64_bad_char(s, rest->nchars, 4 * (rest->group0 + hi - 1) + where, err);
      return false;
    }
    size_t want = rest->nbytes - 3 * (rest->ngroups - 1); /* equals got: sizes were checked */
    memcpy(dst + bytes, tail, got < want ? got : want);
    bytes += got < want ? got : want;
  }
  if (rest->boolean) normalise_bool(dst, bytes);
  return true;
}

bool tensor_blob_decode_base64(const char *s, size_t n, Arena *a, ConstTensor *out,
                               BlobError *err) {
  BlobRest rest;
  return tensor_blob_begin_base64(s, n, a, out, &rest, err) &&
         tensor_blob_rest_decode(&rest, 0, rest.ngroups, err);
}

/* ============================================================ blob encode */

size_t tensor_blob_size(const ConstTensor *c) {
  return 40 + 8 * (size_t)c->ndim + (size_t)c->nbytes;
}

static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

/* The header (40 + 8 * ndim bytes) into h; returns its length. */
static size_t blob_header(const ConstTensor *c, uint8_t *h) {
  put_u64(h, TENSOR_BLOB_MAGIC);
  put_u64(h + 8, 0);
  put_u32(h + 16, TENSOR_BLOB_CPU);
  put_u32(h + 20, 0);
  put_u32(h + 24, (uint32_t)c->ndim);
  h[28] = c->dtype.code;
  h[29] = c->dtype.bits;
  put_u16(h + 30, c->dtype.lanes);
  for (int32_t i = 0; i < c->ndim; i++) put_u64(h + 32 + 8 * (size_t)i, (uint64_t)c->shape[i]);
  put_u64(h + 32 + 8 * (size_t)c->ndim, c->nbytes);
  return 40 + 8 * (size_t)c->ndim;
}

unsigned char *tensor_blob_encode(const ConstTensor *c, size_t *len) {
  RELAYC_ASSERT(c->ndim >= 0 && c->ndim <= TENSOR_BLOB_MAX_NDIM);
  size_t n = tensor_blob_size(c);
  uint8_t *p = mem_malloc(n);
  size_t h = blob_header(c, p);
  if (c->nbytes) memcpy(p + h, c->data, (size_t)c->nbytes);
  if (len) *len = n;
  return p;
}

/* Streaming base64 encoder: whole groups go to a buffer flushed to `out`. */
typedef struct B64Writer {
  FILE *out;
  uint8_t pend[3];
  unsigned npend;
  size_t nbuf;
  char buf[4096];
} B64Writer;

static void b64w_group(B64Writer *w, const uint8_t *in, size_t k) {
  if (w->nbuf + 4 > sizeof w->buf) {
    fwrite(w->buf, 1, w->nbuf, w->out);
    w->nbuf = 0;
  }
  b64_encode_group(in, k, w->buf + w->nbuf);
  w->nbuf += 4;
}

static void b64w_put(B64Writer *w, const uint8_t *p, size_t n) {
  while (n && w->npend) {
    w->pend[w->npend++] = *p++;
    n--;
    if (w->npend == 3) {
      b64w_group(w, w->pend, 3);
      w->npend = 0;
    }
  }
  for (; n >= 3; p += 3, n -= 3) b64w_group(w, p, 3);
  while (n--) w->pend[w->npend++] = *p++;
}

static void b64w_finish(B64Writer *w) {
  if (w->npend) b64w_group(w, w->pend, w->npend);
  fwrite(w->buf, 1, w->nbuf, w->out);
  w->npend = 0;
  w->nbuf = 0;
}

void tensor_blob_write_base64(FILE *out, const ConstTensor *c) {
  RELAYC_ASSERT(c->ndim >= 0 && c->ndim <= TENSOR_BLOB_MAX_NDIM);
  uint8_t h[40 + 8 * TENSOR_BLOB_MAX_NDIM];
  B64Writer w = {.out = out};
  b64w_put(&w, h, blob_header(c, h));
  if (c->nbytes) b64w_put(&w, c->data, (size_t)c->nbytes);
  b64w_finish(&w);
}
