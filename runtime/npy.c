/* runtime/npy.c — .npy reading and writing, .npz writing (see npy.h).
 *
 * CRC-32s for .npz members come from zlib (also runtime/npz.c's inflate).
 * Reading goes through one small Reader (a memory cursor or a stream) so the
 * file, stdin and in-memory paths share every check. The header dict is parsed
 * by a tiny scanner of Python literals (strings, True/False, integers, tuples);
 * it never recurses, and every failure names what was expected. The byte
 * count the shape needs is compared with the bytes available (the buffer, the
 * regular file's size, or what a pipe actually delivers) before the tensor is
 * allocated. Writing reproduces numpy.save's header byte for byte.
 */
#include "runtime/npy.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "ir/dims_text.h"
#include "ir/mem.h"

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static bool npy_fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool npy_fail(char *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, NPY_ERR_SIZE, fmt, ap);
    va_end(ap);
  }
  return false;
}

static bool host_is_little(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* ============================================================== reading */

typedef struct Reader {
  FILE *f;            /* stream, or NULL for memory */
  const uint8_t *buf; /* memory image */
  size_t len, pos;
} Reader;

static size_t rd_read(Reader *r, void *dst, size_t n) {
  if (r->f) return fread(dst, 1, n, r->f);
  size_t k = r->len - r->pos < n ? r->len - r->pos : n;
  memcpy(dst, r->buf + r->pos, k);
  r->pos += k;
  return k;
}

/* Bytes known to remain, or -1 when unknown (a pipe). */
static int64_t rd_remaining(Reader *r) {
  if (!r->f) return (int64_t)(r->len - r->pos);
  struct stat st;
  long here = ftell(r->f);
  if (here < 0 || fstat(fileno(r->f), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return st.st_size > here ? (int64_t)(st.st_size - here) : 0;
}

/* What the header says. */
typedef struct NpyHeader {
  DType dtype;
  bool swap;        /* data is in the other byte order */
  bool fortran;     /* column-major data */
  int32_t ndim;
  int64_t shape[TENSOR_MAX_NDIM];
} NpyHeader;

/* ---- the header dict scanner */

typedef struct Scan {
  const char *p, *end;
  char *err;
} Scan;

static void sc_ws(Scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

static bool sc_eat(Scan *s, char c) {
  sc_ws(s);
  if (s->p < s->end && *s->p == c) {
    s->p++;
    return true;
  }
  return false;
}

/* Describes the next character for messages. */
static const char *sc_here(Scan *s, char *buf) {
  if (s->p >= s->end) return "the end of the header";
  unsigned char c = (unsigned char)*s->p;
  if (isprint(c))
    snprintf(buf, 16, "'%c'", c);
  else
    snprintf(buf, 16, "byte 0x%02x", c);
  return buf;
}

static bool sc_expect(Scan *s, char c, const char *what) {
  char b[16];
  if (sc_eat(s, c)) return true;
  return npy_fail(s->err, "malformed .npy header: expected %s, found %s", what, sc_here(s, b));
}

/* A quoted string without escapes (numpy never writes any); into out[cap]. */
static bool sc_string(Scan *s, char *out, size_t cap, const char *what) {
  char b[16];
  sc_ws(s);
  if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
    return npy_fail(s->err, "malformed .npy header: expected %s, found %s", what, sc_here(s, b));
  char q = *s->p++;
  size_t n = 0;
  while (s->p < s->end && *s->p != q) {
    if (*s->p == '\\' || *s->p == '\n' || n + 1 >= cap)
      return npy_fail(s->err, "malformed .npy header: unexpected %s", what);
    out[n++] = *s->p++;
  }
  if (s->p >= s->end) return npy_fail(s->err, "malformed .npy header: unterminated string");
  s->p++;
  out[n] = 0;
  return true;
}

static bool sc_word(Scan *s, const char *w) {
  size_t n = strlen(w);
  sc_ws(s);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0) return false;
  if (s->p + n < s->end && (isalnum((unsigned char)s->p[n]) || s->p[n] == '_')) return false;
  s->p += n;
  return true;
}

static bool sc_bool(Scan *s, bool *out) {
  char b[16];
  if (sc_word(s, "True")) return *out = true, true;
  if (sc_word(s, "False")) return *out = false, true;
  return npy_fail(s->err, "malformed .npy header: 'fortran_order' must be True or False, found %s",
                  sc_here(s, b));
}

static bool sc_extent(Scan *s, int64_t *out) {
  char b[16];
  sc_ws(s);
  if (s->p < s->end && *s->p == '-')
    return npy_fail(s->err, "invalid .npy shape: negative dimension");
  if (s->p >= s->end || !isdigit((unsigned char)*s->p))
    return npy_fail(s->err, "malformed .npy header: expected a dimension in 'shape', found %s",
                    sc_here(s, b));
  int64_t v = 0;
  while (s->p < s->end && isdigit((unsigned char)*s->p)) {
    int d = *s->p++ - '0';
    if (v > (INT64_MAX - d) / 10) return npy_fail(s->err, "invalid .npy shape: dimension too large");
    v = v * 10 + d;
  }
  if (s->p < s->end && (*s->p == 'L' || *s->p == 'l')) s->p++; /* Python 2 long */
  *out = v;
  return true;
}

static bool sc_shape(Scan *s, NpyHeader *h) {
  if (!sc_expect(s, '(', "a tuple for 'shape'")) return false;
  h->ndim = 0;
  while (!sc_eat(s, ')')) {
    if (h->ndim == TENSOR_MAX_NDIM)
      return npy_fail(s->err, "invalid .npy shape: more than %d dimensions", TENSOR_MAX_NDIM);
    if (!sc_extent(s, &h->shape[h->ndim++])) return false;
    if (sc_eat(s, ')')) break;
    if (!sc_expect(s, ',', "',' or ')' in 'shape'")) return false;
  }
  return true;
}

/* Maps a descr string like "<f4" onto a dtype and byte order. */
static bool npy_parse_descr(const char *d, NpyHeader *h, char *err) {
  static const struct { char kind; int size; DType dt; } kinds[] = {
      {'b', 1, DTYPE(DT_UINT, 1)}, {'i', 1, DTYPE(DT_INT, 8)},    {'i', 2, DTYPE(DT_INT, 16)},
      {'i', 4, DTYPE(DT_INT, 32)}, {'i', 8, DTYPE(DT_INT, 64)},   {'u', 1, DTYPE(DT_UINT, 8)},
      {'u', 2, DTYPE(DT_UINT, 16)}, {'u', 4, DTYPE(DT_UINT, 32)}, {'u', 8, DTYPE(DT_UINT, 64)},
      {'f', 2, DTYPE(DT_FLOAT, 16)}, {'f', 4, DTYPE(DT_FLOAT, 32)}, {'f', 8, DTYPE(DT_FLOAT, 64)},
  };
  char order = d[0];
  if ((order == '<' || order == '>' || order == '|' || order == '=') && d[1] && d[2] && !d[3] &&
      d[2] >= '1' && d[2] <= '9') {
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
      if (kinds[i].kind != d[1] || kinds[i].size != d[2] - '0') continue;
      h->dtype = kinds[i].dt;
      bool little = order == '<' || ((order == '|' || order == '=') && host_is_little());
      h->swap = kinds[i].size > 1 && little != host_is_little();
      return true;
    }
  }
  return npy_fail(err,
                  "unsupported .npy dtype '%s' (supported: bool, int8/16/32/64, uint8/16/32/64, "
                  "float16/32/64)",
                  d);
}

static bool npy_parse_header(const char *text, size_t n, NpyHeader *h, char *err) {
  Scan s = {text, text + n, err};
  char key[32], descr[32];
  bool seen_descr = false, seen_fortran = false, seen_shape = false;
  if (!sc_expect(&s, '{', "'{' (the header is not a dict)")) return false;
  while (!sc_eat(&s, '}')) {
    if (!sc_string(&s, key, sizeof key, "a key")) return false;
    if (!sc_expect(&s, ':', "':' after a key")) return false;
    bool *seen = NULL;
    if (strcmp(key, "descr") == 0) {
      seen = &seen_descr;
      sc_ws(&s);
      if (s.p < s.end && *s.p == '[')
        return npy_fail(err, "unsupported .npy dtype: structured arrays are not supported");
      if (!sc_string(&s, descr, sizeof descr, "a dtype string for 'descr'")) return false;
      if (!npy_parse_descr(descr, h, err)) return false;
    } else if (strcmp(key, "fortran_order") == 0) {
      seen = &seen_fortran;
      if (!sc_bool(&s, &h->fortran)) return false;
    } else if (strcmp(key, "shape") == 0) {
      seen = &seen_shape;
      if (!sc_shape(&s, h)) return false;
    } else {
      return npy_fail(err, "malformed .npy header: unexpected key '%s'", key);
    }
    if (*seen) return npy_fail(err, "malformed .npy header: duplicate key '%s'", key);
    *seen = true;
    if (sc_eat(&s, '}')) break;
    if (!sc_expect(&s, ',', "',' or '}' in the header dict")) return false;
  }
  sc_ws(&s);
  if (s.p != s.end) return npy_fail(err, "malformed .npy header: text after the dict");
  if (!seen_descr) return npy_fail(err, "malformed .npy header: missing key 'descr'");
  if (!seen_fortran) return npy_fail(err, "malformed .npy header: missing key 'fortran_order'");
  if (!seen_shape) return npy_fail(err, "malformed .npy header: missing key 'shape'");
  return true;
}

/* ---- preamble: magic, version, header length, header text */

static bool npy_read_preamble(Reader *r, NpyHeader *h, char *err) {
  uint8_t pre[12];
  size_t got = rd_read(r, pre, 8);
  if (got < 6 || memcmp(pre, npy_magic, 6) != 0)
    return npy_fail(err, "not a .npy file (bad magic)");
  if (got < 8) return npy_fail(err, "truncated .npy file (no version)");
  unsigned major = pre[6], minor = pre[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return npy_fail(err, "unsupported .npy format version %u.%u", major, minor);
  size_t lenbytes = major == 1 ? 2 : 4;
  if (rd_read(r, pre + 8, lenbytes) != lenbytes)
    return npy_fail(err, "truncated .npy file (no header length)");
  uint32_t hlen = pre[8] | (uint32_t)pre[9] << 8;
  if (lenbytes == 4) hlen |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
  if (hlen > NPY_MAX_HEADER)
    return npy_fail(err, "corrupt .npy file: header length %" PRIu32 " is too large", hlen);
  char *text = mem_malloc_try(hlen + 1);
  if (!text) return npy_fail(err, "out of memory reading a .npy header");
  size_t n = rd_read(r, text, hlen);
  bool ok;
  if (n != hlen)
    ok = npy_fail(err, "truncated .npy header (%zu of %" PRIu32 " bytes)", n, hlen);
  else
    ok = npy_parse_header(text, hlen, h, err);
  mem_free(text);
  return ok;
}

/* ---- data fix-ups */

static void npy_byteswap(uint8_t *p, size_t w, uint64_t nbytes) {
  for (uint64_t off = 0; off + w <= nbytes; off += w)
    for (size_t i = 0; i < w / 2; i++) {
      uint8_t t = p[off + i];
      p[off + i] = p[off + w - 1 - i];
      p[off + w - 1 - i] = t;
    }
}

/* Column-major `src` into row-major `dst`: walks dst in order with an
 * odometer over the indices, tracking the matching source offset. */
static void npy_from_fortran(uint8_t *dst, const uint8_t *src, const NpyHeader *h, size_t w,
                             int64_t numel) {
  int64_t idx[TENSOR_MAX_NDIM] = {0}, fstride[TENSOR_MAX_NDIM];
  int64_t acc = 1;
  for (int32_t k = 0; k < h->ndim; k++) {
    fstride[k] = acc;
    acc *= h->shape[k];
  }
  int64_t off = 0;
  for (int64_t i = 0; i < numel; i++) {
    memcpy(dst + (size_t)i * w, src + (size_t)off * w, w);
    for (int32_t k = h->ndim - 1; k >= 0; k--) {
      if (++idx[k] < h->shape[k]) {
        off += fstride[k];
        break;
      }
      off -= fstride[k] * (h->shape[k] - 1);
      idx[k] = 0;
    }
  }
}

/* Reads exactly `n` bytes into dst; from a pipe, into a buffer grown as bytes
 * arrive, so an absurd shape costs only what the sender actually sends. */
static bool npy_read_exact(Reader *r, uint8_t *dst, uint64_t n, char *err) {
  uint64_t got = rd_read(r, dst, (size_t)n);
  if (got != n)
    return npy_fail(err, "truncated .npy data (%" PRIu64 " of %" PRIu64 " bytes)", got, n);
  return true;
}

static bool npy_slurp_pipe(Reader *r, uint64_t need, uint8_t **out, char *err) {
  size_t cap = 0, len = 0;
  uint8_t *buf = NULL;
  while (len < need) {
    if (len == cap) {
      size_t ncap = cap ? cap * 2 : 1 << 16;
      if (ncap > need) ncap = (size_t)need;
      uint8_t *nb = mem_malloc_try(ncap);
      if (!nb) {
        mem_free(buf);
        return npy_fail(err, "out of memory reading .npy data");
      }
      if (len) memcpy(nb, buf, len);
      mem_free(buf);
      buf = nb;
      cap = ncap;
    }
    size_t k = rd_read(r, buf + len, cap - len);
    if (k == 0) break;
    len += k;
  }
  if (len < need) {
    mem_free(buf);
    return npy_fail(err, "truncated .npy data (%zu of %" PRIu64 " bytes)", len, need);
  }
  *out = buf;
  return true;
}

static Tensor *npy_read_reader(Reader *r, char *err) {
  NpyHeader h;
  memset(&h, 0, sizeof h);
  if (!npy_read_preamble(r, &h, err)) return NULL;
  int64_t numel = 0;
  size_t w = dtype_size(h.dtype);
  if (!tensor_shape_numel(h.ndim, h.shape, &numel)) {
    npy_fail(err, "invalid .npy shape: too many elements");
    return NULL;
  }
  if ((uint64_t)numel > TENSOR_MAX_BYTES / w) {
    npy_fail(err, "invalid .npy shape: %" PRId64 " elements exceed the %" PRIu64 "-byte tensor limit",
             numel, TENSOR_MAX_BYTES);
    return NULL;
  }
  uint64_t nbytes = (uint64_t)numel * w;
  int64_t avail = rd_remaining(r);
  if (avail >= 0 && (uint64_t)avail < nbytes) {
    npy_fail(err, "truncated .npy data (%" PRId64 " of %" PRIu64 " bytes)", avail, nbytes);
    return NULL;
  }
  uint8_t *piped = NULL;
  if (avail < 0 && !npy_slurp_pipe(r, nbytes, &piped, err)) return NULL;
  TensorError te;
  Tensor *t = tensor_new_checked(h.dtype, h.ndim, h.shape, &te);
  uint8_t *scratch = NULL;
  if (t && h.fortran && h.ndim > 1 && !piped) {
    scratch = mem_malloc_try(nbytes ? (size_t)nbytes : 1);
    if (!scratch) te = TENSOR_ENOMEM;
  }
  if (!t || (h.fortran && h.ndim > 1 && !piped && !scratch)) {
    npy_fail(err, "cannot hold the .npy data: %s", tensor_error_message(te));
    tensor_release(t);
    mem_free(piped);
    return NULL;
  }
  uint8_t *src = piped ? piped : scratch ? scratch : t->data;
  if (!piped && !npy_read_exact(r, src, nbytes, err)) {
    tensor_release(t);
    mem_free(scratch);
    return NULL;
  }
  if (h.fortran && h.ndim > 1)
    npy_from_fortran(t->data, src, &h, w, numel);
  else if (src != t->data)
    memcpy(t->data, src, (size_t)nbytes);
  mem_free(piped);
  mem_free(scratch);
  uint8_t *d = t->data;
  if (h.swap) npy_byteswap(d, w, nbytes);
  if (dtype_is_bool(h.dtype))
    for (uint64_t i = 0; i < nbytes; i++) d[i] = d[i] != 0;
  return t;
}

Tensor *npy_read_mem(const void *buf, size_t len, char *err) {
  Reader r = {NULL, buf, len, 0};
  return npy_read_reader(&r, err);
}

Tensor *npy_read_stream(FILE *in, char *err) {
  Reader r = {in, NULL, 0, 0};
  Tensor *t = npy_read_reader(&r, err);
  if (!t && ferror(in)) npy_fail(err, "read error: %s", strerror(errno));
  return t;
}

Tensor *npy_read_file(const char *path, char *err) {
  if (strcmp(path, "-") == 0) return npy_read_stream(stdin, err);
  FILE *f = fopen(path, "rb");
  if (!f) {
    npy_fail(err, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    npy_fail(err, "cannot read %s: is a directory", path);
    return NULL;
  }
  Tensor *t = npy_read_stream(f, err);
  fclose(f);
  return t;
}

/* ============================================================== writing */

/* numpy's descr for a dtype, or NULL. */
static bool npy_descr(DType dt, char out[8]) {
  char order = host_is_little() ? '<' : '>';
  char kind;
  if (dt.lanes != 1) return false;
  if (dtype_is_bool(dt)) return strcpy(out, "|b1"), true;
  switch (dt.code) {
  case DT_INT: kind = 'i'; break;
  case DT_UINT: kind = 'u'; break;
  case DT_FLOAT: kind = 'f'; break;
  default: return false;
  }
  if (dt.code == DT_FLOAT ? !(dt.bits == 16 || dt.bits == 32 || dt.bits == 64)
                          : !(dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64))
    return false;
  snprintf(out, 8, "%c%c%d", dt.bits == 8 ? '|' : order, kind, dt.bits / 8);
  return true;
}

size_t npy_header(const Tensor *t, char *buf, size_t cap, char *err) {
  char descr[8];
  if (!npy_descr(t->dtype, descr)) {
    char name[32];
    npy_fail(err, "dtype %s has no .npy equivalent", dtype_name(t->dtype, name));
    return 0;
  }
  /* The dict: at most 64 extents of at most 19 digits, so 2 KiB is plenty. */
  char dict[2048];
  size_t n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': ", descr);
  n += strlen(dims_text(dict + n, sizeof dict - n, t->shape, t->ndim, DIMS_TUPLE));
  n += (size_t)snprintf(dict + n, sizeof dict - n, ", }");
  if (t->ndim > 0) { /* numpy's spare room for growing axis 0 in place */
    char num[24];
    for (int i = snprintf(num, sizeof num, "%" PRId64, t->shape[0]); i < 21; i++) dict[n++] = ' ';
  }
  /* Padding: spaces then '\n' so the data starts at a multiple of 64. */
  size_t hlen = n + 1, pre = 10;
  size_t pad = 64 - (pre + hlen) % 64;
  if (hlen + pad > 65535) { /* format 2.0: a 4-byte length */
    pre = 12;
    pad = 64 - (pre + hlen) % 64;
  }
  size_t total = pre + hlen + pad;
  if (total > cap) return total;
  uint32_t field = (uint32_t)(hlen + pad);
  memcpy(buf, npy_magic, 6);
  buf[6] = pre == 10 ? 1 : 2;
  buf[7] = 0;
  for (size_t i = 0; i < pre - 8; i++) buf[8 + i] = (char)(uint8_t)(field >> (8 * i));
  memcpy(buf + pre, dict, n);
  memset(buf + pre + n, ' ', pad);
  buf[total - 1] = '\n';
  return total;
}

/* The header in a fresh buffer (free with mem_free). */
static char *npy_header_alloc(const Tensor *t, size_t *len, char *err) {
  size_t n = npy_header(t, NULL, 0, err);
  if (!n) return NULL;
  char *h = mem_malloc(n);
  npy_header(t, h, n, err);
  *len = n;
  return h;
}

static bool npy_put(FILE *out, const void *p, size_t n, char *err) {
  if (n && fwrite(p, 1, n, out) != n) return npy_fail(err, "write error: %s", strerror(errno));
  return true;
}

bool npy_write_stream(FILE *out, const Tensor *t, char *err) {
  size_t hlen;
  char *h = npy_header_alloc(t, &hlen, err);
  if (!h) return false;
  bool ok = npy_put(out, h, hlen, err) && npy_put(out, t->data, (size_t)t->nbytes, err);
  mem_free(h);
  return ok;
}

/* Opens a path for writing ("-" is standard output). */
static FILE *npy_open_out(const char *path, char *err) {
  if (strcmp(path, "-") == 0) return stdout;
  FILE *f = fopen(path, "wb");
  if (!f) npy_fail(err, "cannot write %s: %s", path, strerror(errno));
  return f;
}

static bool npy_close_out(FILE *f, bool ok, const char *path, char *err) {
  int rc = f == stdout ? fflush(f) : fclose(f);
  if (rc != 0 && ok) return npy_fail(err, "cannot write %s: %s", path, strerror(errno));
  return ok;
}

bool npy_write_file(const char *path, const Tensor *t, char *err) {
  FILE *f = npy_open_out(path, err);
  if (!f) return false;
  return npy_close_out(f, npy_write_stream(f, t, err), path, err);
}

/* ================================================================= .npz */

/* zlib's CRC-32 (the same polynomial; word-at-a-time, ~10x a byte table). */
uint32_t npy_crc32(uint32_t crc, const void *data, size_t n) {
  return (uint32_t)crc32_z(crc, data, n);
}

/* Little-endian field writers into a byte buffer. */
static uint8_t *le16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  return p + 2;
}
static uint8_t *le32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
  return p + 4;
}

enum { ZIP_DOS_DATE = (0 << 9) | (1 << 5) | 1 }; /* 1980-01-01, the ZIP epoch */

typedef struct ZipEntry {
  char *name;     /* "NAME.npy" */
  uint32_t crc, size, offset;
} ZipEntry;

/* Local file header or central directory record for one stored member. */
static size_t zip_record(uint8_t *p, const ZipEntry *e, bool central) {
  uint8_t *q = p;
  size_t nlen = strlen(e->name);
  q = le32(q, central ? 0x02014b50u : 0x04034b50u);
  if (central) q = le16(q, 20);    /* version made by: 2.0 */
  q = le16(q, 20);                 /* version needed: 2.0 */
  q = le16(q, 0);                  /* flags */
  q = le16(q, 0);                  /* method: stored */
  q = le16(q, 0);                  /* time 00:00 */
  q = le16(q, ZIP_DOS_DATE);       /* date */
  q = le32(q, e->crc);
  q = le32(q, e->size);            /* compressed */
  q = le32(q, e->size);            /* uncompressed */
  q = le16(q, (uint32_t)nlen);
  q = le16(q, 0);                  /* extra length */
  if (central) {
    q = le16(q, 0);                /* comment length */
    q = le16(q, 0);                /* disk */
    q = le16(q, 0);                /* internal attributes */
    q = le32(q, 0100644u << 16);   /* external: a regular file, rw-r--r-- */
    q = le32(q, e->offset);
  }
  memcpy(q, e->name, nlen);
  return (size_t)(q - p) + nlen;
}

static bool npz_member(FILE *out, const Tensor *t, ZipEntry *e, uint64_t *pos, char *err) {
  size_t hlen;
  char *h = npy_header_alloc(t, &hlen, err);
  if (!h) return false;
  uint64_t size = hlen + t->nbytes;
  bool ok = true;
  if (size > 0xfffffffeu || *pos > 0xfffffffeu) {
    ok = npy_fail(err, "result too large for .npz (members over 4 GiB are not supported)");
  } else {
    e->size = (uint32_t)size;
    e->offset = (uint32_t)*pos;
    e->crc = npy_crc32(npy_crc32(0, h, hlen), t->data, (size_t)t->nbytes);
    uint8_t rec[64 + 512];
    size_t rlen = zip_record(rec, e, false);
    ok = npy_put(out, rec, rlen, err) && npy_put(out, h, hlen, err) &&
         npy_put(out, t->data, (size_t)t->nbytes, err);
    *pos += rlen + size;
  }
  mem_free(h);
  return ok;
}

bool npz_write_stream(FILE *out, Tensor *const *tensors, const char *const *names, size_t n,
                      char *err) {
  if (n > 65535) return npy_fail(err, "too many tensors for one .npz (%zu)", n);
  ZipEntry *es = mem_calloc(n ? n : 1, sizeof *es);
  uint64_t pos = 0;
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    char auto_name[32];
    const char *nm = names ? names[i] : (snprintf(auto_name, sizeof auto_name, "arr_%zu", i), auto_name);
    size_t nl = strlen(nm);
    if (nl == 0 || nl > 400) {
      ok = npy_fail(err, "invalid .npz member name");
      break;
    }
    es[i].name = mem_malloc(nl + 5);
    memcpy(es[i].name, nm, nl);
    memcpy(es[i].name + nl, ".npy", 5);
    ok = npz_member(out, tensors[i], &es[i], &pos, err);
  }
  uint64_t cd_start = pos;
  for (size_t i = 0; i < n && ok; i++) {
    uint8_t rec[64 + 512];
    size_t rlen = zip_record(rec, &es[i], true);
    ok = npy_put(out, rec, rlen, err);
    pos += rlen;
  }
  if (ok && pos > 0xfffffffeu) ok = npy_fail(err, "result too large for .npz");
  if (ok) {
    uint8_t end[22], *q = end;
    q = le32(q, 0x06054b50u);
    q = le16(q, 0);                   /* this disk */
    q = le16(q, 0);                   /* disk with the directory */
    q = le16(q, (uint32_t)n);         /* entries here */
    q = le16(q, (uint32_t)n);         /* entries in all */
    q = le32(q, (uint32_t)(pos - cd_start));
    q = le32(q, (uint32_t)cd_start);
    le16(q, 0);                       /* comment length */
    ok = npy_put(out, end, sizeof end, err);
  }
  for (size_t i = 0; i < n; i++) mem_free(es[i].name);
  mem_free(es);
  return ok;
}

bool npz_write_file(const char *path, Tensor *const *tensors, const char *const *names, size_t n,
                    char *err) {
  FILE *f = npy_open_out(path, err);
  if (!f) return false;
  return npy_close_out(f, npz_write_stream(f, tensors, names, n, err), path, err);
}
