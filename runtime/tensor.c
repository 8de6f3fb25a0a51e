/* runtime/tensor.c — tensor lifetime, checked sizes and element conversions.
 *
 * A Tensor is one mem_malloc'ed header (with the shape in its tail) plus, when
 * owned, one 64-byte aligned data block padded to a multiple of 64 bytes
 * (runtime/bufpool.c: big blocks are recycled and pre-faulted).
 * Sizes are checked before anything is allocated: extents are non-negative,
 * the element count fits int64 and the byte count fits TENSOR_MAX_BYTES, so a
 * corrupt shape is an error value, never a crash or an allocator abort.
 * Element conversions here are the slow, general path (tests, printing, .npy
 * byteswaps do their own thing); kernels work on typed pointers directly.
 */
#include "runtime/tensor.h"

#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ir/mem.h"
#include "runtime/bufpool.h"

/* ------------------------------------------------------------- sizes */

bool tensor_shape_numel(int32_t ndim, const int64_t *shape, int64_t *numel) {
  int64_t n = 1;
  bool overflow = false;
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] < 0) return false;
    if (shape[i] == 0) {
      n = 0;
    } else if (!overflow && n > INT64_MAX / shape[i]) {
      overflow = true; /* keep scanning: a later 0 makes the product 0 */
    } else if (!overflow) {
      n *= shape[i];
    }
  }
  if (n == 0) {
    *numel = 0;
    return true;
  }
  if (overflow) return false;
  *numel = n;
  return true;
}

/* tensor_set_budget: 0 = none; live_bytes counts padded owned blocks while
 * a live budget is set (atomically: kernels may allocate on pool threads). */
static uint64_t budget_max_bytes, budget_live_max, budget_live;

void tensor_set_budget(uint64_t max_bytes, uint64_t max_live_bytes) {
  budget_max_bytes = max_bytes;
  budget_live_max = max_live_bytes;
}

/* Validates dtype and shape; on success sets numel and nbytes. */
static TensorError tensor_check(DType dtype, int32_t ndim, const int64_t *shape, int64_t *numel,
                                uint64_t *nbytes) {
  if (ndim < 0 || ndim > TENSOR_MAX_NDIM || (ndim > 0 && !shape)) return TENSOR_EBADSHAPE;
  if (dtype.bits == 0 || dtype.lanes == 0) return TENSOR_EBADDTYPE;
  for (int32_t i = 0; i < ndim; i++)
    if (shape[i] < 0) return TENSOR_EBADSHAPE;
  if (!tensor_shape_numel(ndim, shape, numel)) return TENSOR_ETOOBIG;
  uint64_t esize = dtype_size(dtype);
  uint64_t cap = budget_max_bytes && budget_max_bytes < TENSOR_MAX_BYTES ? budget_max_bytes : TENSOR_MAX_BYTES;
  if ((uint64_t)*numel > cap / esize) return TENSOR_ETOOBIG;
  *nbytes = (uint64_t)*numel * esize;
  return TENSOR_OK;
}

static Tensor *tensor_header(DType dtype, int32_t ndim, const int64_t *shape) {
  Tensor *t = mem_malloc_try(sizeof *t + (size_t)ndim * sizeof(int64_t));
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  t->dtype = dtype;
  t->ndim = ndim;
  t->shape = t->dims;
  if (ndim > 0) memcpy(t->dims, shape, (size_t)ndim * sizeof(int64_t));
  t->refcount = 1;
  return t;
}

/* ------------------------------------------------------- construction */

/* Bytes of an owned data block: nbytes rounded up to TENSOR_ALIGN, at least one
 * unit (what bufpool_alloc was asked for, so bufpool_free gets the same). */
static size_t tensor_padded_bytes(uint64_t nbytes) {
  uint64_t padded = (nbytes + TENSOR_ALIGN - 1) / TENSOR_ALIGN * TENSOR_ALIGN;
  return (size_t)(padded ? padded : TENSOR_ALIGN);
}

Tensor *tensor_new_checked(DType dtype, int32_t ndim, const int64_t *shape, TensorError *err) {
  int64_t numel = 0;
  uint64_t nbytes = 0;
  TensorError e = tensor_check(dtype, ndim, shape, &numel, &nbytes);
  Tensor *t = NULL;
  if (e == TENSOR_OK) {
    uint64_t padded = tensor_padded_bytes(nbytes);
    if (budget_live_max &&
        __atomic_add_fetch(&budget_live, padded, __ATOMIC_RELAXED) > budget_live_max) {
      __atomic_sub_fetch(&budget_live, padded, __ATOMIC_RELAXED);
      if (err) *err = TENSOR_ETOOBIG;
      return NULL;
    }
    void *data = bufpool_alloc((size_t)padded);
    t = data ? tensor_header(dtype, ndim, shape) : NULL;
    if (!t) {
      bufpool_free(data, (size_t)padded);
      if (budget_live_max) __atomic_sub_fetch(&budget_live, padded, __ATOMIC_RELAXED);
      e = TENSOR_ENOMEM;
    } else {
      t->data = data;
      t->numel = numel;
      t->nbytes = nbytes;
      /* padding is zeroed so SIMD tails and hashes see defined bytes */
      memset((char *)data + nbytes, 0, (size_t)(padded - nbytes));
    }
  }
  if (err) *err = e;
  return t;
}

Tensor *tensor_new(DType dtype, int32_t ndim, const int64_t *shape) {
  return tensor_new_checked(dtype, ndim, shape, NULL);
}

Tensor *tensor_new_zeros(DType dtype, int32_t ndim, const int64_t *shape) {
  Tensor *t = tensor_new(dtype, ndim, shape);
  if (t) memset(t->data, 0, (size_t)t->nbytes);
  return t;
}

/* The shared zero mapping: reserved once, PROT_READ, never populated (reads
 * map the kernel's zero page: no resident memory). Main thread only, like
 * every tensor construction. */
#define ZERO_REGION_BYTES ((size_t)1 << 32)
static void *zero_region;
static bool zero_region_failed;

static const void *zero_window(uint64_t nbytes) {
  if (nbytes > ZERO_REGION_BYTES || zero_region_failed) return NULL;
  if (!zero_region) {
    void *p = mmap(NULL, ZERO_REGION_BYTES, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      zero_region_failed = true;
      return NULL;
    }
    zero_region = p;
  }
  return zero_region;
}

Tensor *tensor_new_zero(DType dtype, int32_t ndim, const int64_t *shape) {
  int64_t numel = 0;
  uint64_t nbytes = 0;
  if (tensor_check(dtype, ndim, shape, &numel, &nbytes) != TENSOR_OK) return NULL;
  /* under a live-memory budget (tensor_set_budget: fuzzing) zeros are ordinary
   * tensors, counted like every other allocation */
  const void *data = budget_live_max ? NULL : zero_window(tensor_padded_bytes(nbytes));
  if (!data) {
    Tensor *t = tensor_new_zeros(dtype, ndim, shape);
    if (t) t->flags |= TENSOR_READONLY | TENSOR_ZERO; /* owned, but never written again */
    return t;
  }
  Tensor *t = tensor_header(dtype, ndim, shape);
  if (!t) return NULL;
  t->data = (void *)data; /* never written: READONLY */
  t->numel = numel;
  t->nbytes = nbytes;
  t->flags = TENSOR_BORROWED | TENSOR_READONLY | TENSOR_ZERO;
  return t;
}

Tensor *tensor_new_like(const Tensor *like) { return tensor_new(like->dtype, like->ndim, like->shape); }

Tensor *tensor_new_scalar_int(DType dtype, int64_t v) {
  Tensor *t = tensor_new(dtype, 0, NULL);
  if (!t) return NULL;
  memset(t->data, 0, (size_t)t->nbytes);
  if (dtype_is_float(dtype))
    tensor_store_f64(dtype, t->data, (double)v);
  else
    tensor_store_i64(dtype, t->data, v);
  return t;
}

Tensor *tensor_new_scalar_float(DType dtype, double v) {
  Tensor *t = tensor_new(dtype, 0, NULL);
  if (!t) return NULL;
  memset(t->data, 0, (size_t)t->nbytes);
  tensor_store_f64(dtype, t->data, v);
  return t;
}

Tensor *tensor_new_scalar_bool(bool v) { return tensor_new_scalar_int(DT_BOOL_T, v); }
Tensor *tensor_new_scalar_i32(int32_t v) { return tensor_new_scalar_int(DT_I32, v); }
Tensor *tensor_new_scalar_i64(int64_t v) { return tensor_new_scalar_int(DT_I64, v); }
Tensor *tensor_new_scalar_f32(float v) { return tensor_new_scalar_float(DT_F32, v); }
Tensor *tensor_new_scalar_f64(double v) { return tensor_new_scalar_float(DT_F64, v); }

Tensor *tensor_from_const(const ConstTensor *c) {
  int64_t numel = 0;
  uint64_t nbytes = 0;
  if (tensor_check(c->dtype, c->ndim, c->shape, &numel, &nbytes) != TENSOR_OK) return NULL;
  if (nbytes != c->nbytes || (nbytes > 0 && !c->data)) return NULL;
  Tensor *t = tensor_header(c->dtype, c->ndim, c->shape);
  if (!t) return NULL;
  static const uint64_t empty[1];
  t->data = c->data ? c->data : (void *)empty; /* never NULL, never written */
  t->numel = numel;
  t->nbytes = nbytes;
  t->flags = TENSOR_BORROWED | TENSOR_READONLY;
  return t;
}

Tensor *tensor_copy(const Tensor *src) {
  Tensor *t = tensor_new_like(src);
  if (t) memcpy(t->data, src->data, (size_t)src->nbytes);
  return t;
}

/* --------------------------------------------------------- references */

Tensor *tensor_retain(Tensor *t) {
  if (t) t->refcount++;
  return t;
}

void tensor_release(Tensor *t) {
  if (!t) return;
  RELAYC_ASSERT(t->refcount > 0);
  if (--t->refcount > 0) return;
  if (!(t->flags & TENSOR_BORROWED)) {
    size_t padded = tensor_padded_bytes(t->nbytes);
    bufpool_free(t->data, padded);
    if (budget_live_max) __atomic_sub_fetch(&budget_live, padded, __ATOMIC_RELAXED);
  }
  Tensor *base = t->base; /* never a view itself: no recursion */
  mem_free(t);
  tensor_release(base);
}

Tensor *tensor_reshape(Tensor *t, int32_t ndim, const int64_t *shape) {
  int64_t numel = 0;
  if (!t) return NULL;
  if (ndim < 0 || ndim > TENSOR_MAX_NDIM || (ndim > 0 && !shape) || !tensor_shape_numel(ndim, shape, &numel) ||
      numel != t->numel) {
    tensor_release(t);
    return NULL;
  }
  if (t->refcount == 1 && ndim <= t->ndim) { /* the header has room: rewrite it */
    t->ndim = ndim;
    if (ndim > 0) memmove(t->dims, shape, (size_t)ndim * sizeof(int64_t));
    return t;
  }
  Tensor *v = tensor_header(t->dtype, ndim, shape);
  if (!v) {
    tensor_release(t);
    return NULL;
  }
  v->data = t->data;
  v->numel = t->numel;
  v->nbytes = t->nbytes;
  v->flags = TENSOR_BORROWED | (t->flags & (TENSOR_READONLY | TENSOR_ZERO));
  if (t->base) {
    v->base = tensor_retain(t->base);
    tensor_release(t);
  } else if (t->flags & TENSOR_BORROWED) {
    tensor_release(t); /* module constant: its data outlives every tensor */
  } else {
    v->base = t;
  }
  return v;
}

Tensor *tensor_make_writable(Tensor *t) {
  if (!t || tensor_is_unique(t)) return t;
  Tensor *c = tensor_copy(t);
  tensor_release(t);
  return c;
}

/* ------------------------------------------------------------ queries */

bool tensor_is_writable(const Tensor *t) { return !(t->flags & TENSOR_READONLY); }
bool tensor_is_unique(const Tensor *t) {
  return t->refcount == 1 && tensor_is_writable(t) && (!t->base || t->base->refcount == 1);
}
bool tensor_is_zero(const Tensor *t) { return (t->flags & TENSOR_ZERO) != 0; }
int64_t tensor_numel(const Tensor *t) { return t->numel; }
uint64_t tensor_nbytes(const Tensor *t) { return t->nbytes; }

bool tensor_same_type(const Tensor *a, const Tensor *b) {
  if (!dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim) return false;
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

bool tensor_equal(const Tensor *a, const Tensor *b) {
  return tensor_same_type(a, b) && memcmp(a->data, b->data, (size_t)a->nbytes) == 0;
}

const char *tensor_error_message(TensorError e) {
  switch (e) {
  case TENSOR_OK: return "no error";
  case TENSOR_EBADSHAPE: return "invalid tensor shape";
  case TENSOR_EBADDTYPE: return "invalid tensor dtype";
  case TENSOR_ETOOBIG: return "tensor too large";
  case TENSOR_ENOMEM: return "out of memory allocating a tensor";
  }
  return "unknown tensor error";
}

/* ------------------------------------------------ element conversions */

/* Bytes of one lane as stored: 1, 2, 4 or 8 (0 for unsupported widths). */
static unsigned lane_bytes(DType dt) {
  unsigned w = (dt.bits + 7u) / 8u;
  return (w == 1 || w == 2 || w == 4 || w == 8) ? w : 0;
}

static uint64_t load_bits(const void *p, unsigned w) {
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64 = 0;
  switch (w) {
  case 1: memcpy(&u8, p, 1); return u8;
  case 2: memcpy(&u16, p, 2); return u16;
  case 4: memcpy(&u32, p, 4); return u32;
  case 8: memcpy(&u64, p, 8); return u64;
  }
  return 0;
}

static void store_bits(void *p, unsigned w, uint64_t v) {
  uint8_t u8 = (uint8_t)v;
  uint16_t u16 = (uint16_t)v;
  uint32_t u32 = (uint32_t)v;
  switch (w) {
  case 1: memcpy(p, &u8, 1); break;
  case 2: memcpy(p, &u16, 2); break;
  case 4: memcpy(p, &u32, 4); break;
  case 8: memcpy(p, &v, 8); break;
  }
}

static float f32_from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* float8 e4m3fn: bias 7, no infinities, S.1111.111 is NaN. */
static double e4m3_decode(uint8_t b) {
  int sign = b >> 7, exp = (b >> 3) & 15, man = b & 7;
  double v;
  if (exp == 15 && man == 7) return NAN;
  if (exp == 0)
    v = ldexp(man / 8.0, -6);
  else
    v = ldexp(1.0 + man / 8.0, exp - 7);
  return sign ? -v : v;
}

/* float8 e5m2: the upper byte of an IEEE binary16. */
static double e5m2_decode(uint8_t b) { return half_to_float((uint16_t)(b << 8)); }

/* Nearest float8 code (ties to the even code), by search over the codes of
 * the right sign: stores are rare. Beyond max + half an ulp: inf (e5m2) or
 * NaN (e4m3fn has no infinity). */
static uint8_t fp8_encode(DTypeCode code, double v) {
  double (*dec)(uint8_t) = code == DT_E4M3 ? e4m3_decode : e5m2_decode;
  if (isnan(v)) return code == DT_E4M3 ? 0x7f : 0x7e;
  uint8_t sign = signbit(v) ? 0x80 : 0;
  double a = fabs(v);
  double limit = code == DT_E4M3 ? 464.0 : 61440.0;
  if (a >= limit) return (uint8_t)(sign | (code == DT_E4M3 ? 0x7f : 0x7c));
  uint8_t best = 0;
  double best_d = INFINITY;
  for (unsigned c = 0; c < 128; c++) {
    double x = dec((uint8_t)c);
    if (isnan(x) || isinf(x)) continue;
    double d = fabs(x - a);
    if (d < best_d || (d == best_d && !(c & 1))) {
      best_d = d;
      best = (uint8_t)c;
    }
  }
  return (uint8_t)(sign | best);
}

static uint16_t bf16_encode(float f) {
  uint32_t b = f32_bits(f);
  if (isnan(f)) return (uint16_t)((b >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((b >> 16) & 1);
  return (uint16_t)((b + rounding) >> 16);
}

static int64_t sign_extend(uint64_t v, unsigned bits) {
  if (bits >= 64) return (int64_t)v;
  uint64_t m = (uint64_t)1 << (bits - 1);
  v &= ((uint64_t)1 << bits) - 1;
  return (int64_t)((v ^ m) - m);
}

double tensor_load_f64(DType dt, const void *p) {
  unsigned w = lane_bytes(dt);
  uint64_t b = load_bits(p, w);
  switch (dt.code) {
  case DT_FLOAT:
    if (dt.bits == 16) return half_to_float((uint16_t)b);
    if (dt.bits == 32) return f32_from_bits((uint32_t)b);
    if (dt.bits == 64) {
      double d;
      memcpy(&d, &b, 8);
      return d;
    }
    return 0;
  case DT_BFLOAT: return f32_from_bits((uint32_t)b << 16);
  case DT_E4M3: return e4m3_decode((uint8_t)b);
  case DT_E5M2: return e5m2_decode((uint8_t)b);
  case DT_UINT:
    if (dt.bits == 1) return b != 0;
    return (double)(dt.bits >= 64 ? b : b & (((uint64_t)1 << dt.bits) - 1));
  default: return (double)sign_extend(b, dt.bits);
  }
}

/* Double to int64 like a C cast, but defined for NaN and out-of-range values. */
static int64_t f64_to_i64(double v) {
  if (isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

int64_t tensor_f64_to_int(DType dt, double v) {
  if (dtype_is_bool(dt)) return v < 0 || v > 0;
  if (isnan(v)) return 0;
  unsigned bits = dt.bits;
  if (dt.code == DT_UINT) {
    if (!(v > -1.0)) return 0; /* the integral part of (-1, 0) is 0 */
    if (bits >= 64) return v >= 18446744073709551616.0 ? (int64_t)UINT64_MAX : (int64_t)(uint64_t)v;
    double hi = ldexp(1, (int)bits) - 1;
    return v >= hi ? (int64_t)hi : (int64_t)v;
  }
  if (bits >= 64) return f64_to_i64(v);
  double hi = ldexp(1, (int)bits - 1) - 1, lo = -ldexp(1, (int)bits - 1);
  if (v >= hi) return (int64_t)hi;
  if (v <= lo) return (int64_t)lo;
  return (int64_t)v;
}

int64_t tensor_load_i64(DType dt, const void *p) {
  if (dtype_is_float(dt)) return f64_to_i64(tensor_load_f64(dt, p));
  uint64_t b = load_bits(p, lane_bytes(dt));
  if (dt.code == DT_UINT) {
    if (dt.bits == 1) return b != 0;
    return (int64_t)(dt.bits >= 64 ? b : b & (((uint64_t)1 << dt.bits) - 1));
  }
  return sign_extend(b, dt.bits);
}

void tensor_store_f64(DType dt, void *p, double v) {
  unsigned w = lane_bytes(dt);
  switch (dt.code) {
  case DT_FLOAT:
    if (dt.bits == 16) store_bits(p, 2, float_to_half((float)v));
    if (dt.bits == 32) store_bits(p, 4, f32_bits((float)v));
    if (dt.bits == 64) memcpy(p, &v, 8);
    return;
  case DT_BFLOAT: store_bits(p, 2, bf16_encode((float)v)); return;
  case DT_E4M3:
  case DT_E5M2: store_bits(p, 1, fp8_encode((DTypeCode)dt.code, v)); return;
  case DT_UINT:
  case DT_INT: store_bits(p, w, (uint64_t)tensor_f64_to_int(dt, v)); return;
  default: store_bits(p, w, (uint64_t)f64_to_i64(v)); return;
  }
}

void tensor_store_i64(DType dt, void *p, int64_t v) {
  if (dtype_is_float(dt)) {
    tensor_store_f64(dt, p, (double)v);
    return;
  }
  if (dtype_is_bool(dt)) v = v != 0;
  store_bits(p, lane_bytes(dt), (uint64_t)v);
}

static void *lane_ptr(const Tensor *t, int64_t i) {
  RELAYC_ASSERT(i >= 0 && i < t->numel * (int64_t)t->dtype.lanes);
  return (char *)t->data + (size_t)i * ((t->dtype.bits + 7u) / 8u);
}

double tensor_get_f64(const Tensor *t, int64_t i) { return tensor_load_f64(t->dtype, lane_ptr(t, i)); }
int64_t tensor_get_i64(const Tensor *t, int64_t i) { return tensor_load_i64(t->dtype, lane_ptr(t, i)); }
void tensor_set_f64(Tensor *t, int64_t i, double v) { tensor_store_f64(t->dtype, lane_ptr(t, i), v); }
void tensor_set_i64(Tensor *t, int64_t i, int64_t v) { tensor_store_i64(t->dtype, lane_ptr(t, i), v); }

/* A run allocates and frees one tensor per operator call. By default glibc
 * serves big blocks with fresh mmaps and trims freed heap tops, so every
 * activation costs page faults (measured: a third of MobileNet-V2's time).
 * Keeping freed memory in the heap lets the next tensor reuse warm pages;
 * the peak footprint is unchanged. RELAYC_MALLOC_DEFAULT=1 keeps glibc's policy. */
void tensor_heap_keep_freed(void) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
  const char *keep = getenv("RELAYC_MALLOC_DEFAULT");
  if (keep && *keep && strcmp(keep, "0") != 0) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's maximum */
  mallopt(M_TRIM_THRESHOLD, -1);
#endif
}
