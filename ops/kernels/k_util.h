/* ops/kernels/k_util.h — helpers shared by the shape, index, reduction, nn and math
 * kernels (ops/kernels/k_shape.c, k_index.c, k_reduce.c, k_nn.c, k_math.c).
 *
 * Vocabulary: a tensor axis splits a compact row-major shape into
 * (outer, n, inner) = (product of the dims before it, its extent, product of
 * the dims after it); most kernels here are loops over that triple. Float
 * kernels compute natively in float32 or float64; float16 and bfloat16 go
 * through a float32 copy (ku_float_in) and are rounded back on output
 * (ku_float_out), as spec/ops.md §2 prescribes. Typed loops over every dtype
 * are written once with KU_SWITCH, which calls a macro with the C element
 * type and its unsigned twin (integer arithmetic wraps through the latter).
 */
#ifndef RELAYC_OPS_K_UTIL_H
#define RELAYC_OPS_K_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ops/kernels/kernel.h"

/* Element kinds a kernel dispatches on. */
typedef enum {
  KU_OTHER = 0, /* vector lanes, float8, handles: unsupported by typed loops */
  KU_BOOL,      /* uint1 stored as one byte 0/1 */
  KU_I8, KU_I16, KU_I32, KU_I64,
  KU_U8, KU_U16, KU_U32, KU_U64,
  KU_F16,       /* IEEE binary16: computed through float32 */
  KU_BF16,      /* bfloat16: computed through float32 */
  KU_F32, KU_F64,
} KuType;

static inline KuType ku_type(DType t) {
  if (t.lanes != 1) return KU_OTHER;
  switch (t.code) {
  case DT_INT: return t.bits == 8 ? KU_I8 : t.bits == 16 ? KU_I16 : t.bits == 32 ? KU_I32 : t.bits == 64 ? KU_I64 : KU_OTHER;
  case DT_UINT:
    return t.bits == 1 ? KU_BOOL : t.bits == 8 ? KU_U8 : t.bits == 16 ? KU_U16 : t.bits == 32 ? KU_U32
         : t.bits == 64 ? KU_U64 : KU_OTHER;
  case DT_FLOAT: return t.bits == 16 ? KU_F16 : t.bits == 32 ? KU_F32 : t.bits == 64 ? KU_F64 : KU_OTHER;
  case DT_BFLOAT: return t.bits == 16 ? KU_BF16 : KU_OTHER;
  default: return KU_OTHER;
  }
}

/* Runs M(T, U) for the C type T of a native dtype (U: the unsigned type of the
 * same width, for wrapping integer arithmetic; U = T for floats); runs OTHER
 * for float16/bfloat16/unsupported dtypes. */
#define KU_SWITCH(dt, M, OTHER)                      \
  switch (ku_type(dt)) {                             \
  case KU_F32: M(float, float); break;               \
  case KU_F64: M(double, double); break;             \
  case KU_I8: M(int8_t, uint8_t); break;             \
  case KU_I16: M(int16_t, uint16_t); break;          \
  case KU_I32: M(int32_t, uint32_t); break;          \
  case KU_I64: M(int64_t, uint64_t); break;          \
  case KU_BOOL:                                      \
  case KU_U8: M(uint8_t, uint8_t); break;            \
  case KU_U16: M(uint16_t, uint16_t); break;         \
  case KU_U32: M(uint32_t, uint32_t); break;         \
  case KU_U64: M(uint64_t, uint64_t); break;         \
  default: OTHER; break;                             \
  }

/* axis in [-ndim, ndim) → [0, ndim); false when out of range. */
static inline bool ku_axis(int64_t *axis, int64_t ndim) {
  if (*axis < -ndim || *axis >= ndim) return false;
  if (*axis < 0) *axis += ndim;
  return true;
}

/* Product of shape[lo..hi). */
static inline int64_t ku_prod(const int64_t *shape, int64_t lo, int64_t hi) {
  int64_t p = 1;
  for (int64_t i = lo; i < hi; i++) p *= shape[i];
  return p;
}

static inline bool ku_is_half(DType t) {
  KuType k = ku_type(t);
  return k == KU_F16 || k == KU_BF16;
}

/* Copies one element of `es` bytes (1, 2, 4, 8 inlined). */
static inline void ku_copy1(void *d, const void *s, size_t es) {
  switch (es) {
  case 1: *(uint8_t *)d = *(const uint8_t *)s; break;
  case 2: memcpy(d, s, 2); break;
  case 4: memcpy(d, s, 4); break;
  case 8: memcpy(d, s, 8); break;
  default: memcpy(d, s, es); break;
  }
}

/* Element i of an integer (or bool) index tensor as int64. */
static inline int64_t ku_index(const Tensor *ix, int64_t i) {
  const void *p = ix->data;
  switch (ku_type(ix->dtype)) {
  case KU_I64: return ((const int64_t *)p)[i];
  case KU_I32: return ((const int32_t *)p)[i];
  case KU_I16: return ((const int16_t *)p)[i];
  case KU_I8: return ((const int8_t *)p)[i];
  case KU_U8: case KU_BOOL: return ((const uint8_t *)p)[i];
  case KU_U16: return ((const uint16_t *)p)[i];
  case KU_U32: return ((const uint32_t *)p)[i];
  case KU_U64: return (int64_t)((const uint64_t *)p)[i];
  default: return tensor_load_i64(ix->dtype, (const char *)p + (size_t)i * dtype_size(ix->dtype));
  }
}

/* The tensor to compute a float kernel on: `x` itself when it is float32 or
 * float64, else (float16, bfloat16, integers) a new float32 copy stored in
 * *tmp, which the caller releases. NULL when out of memory. */
const Tensor *ku_float_in(const Tensor *x, Tensor **tmp);
/* A float32/float64 result `r` (consumed) becomes the output in dtype `dt`:
 * set as is when the dtypes agree, else converted (float16 rounds to nearest
 * even; integers truncate with saturation). KERNEL_ERROR when out of memory. */
int ku_float_out(KernelCtx *c, Tensor *r, DType dt);
/* The compute dtype of a float kernel for data of dtype t: float64 stays,
 * everything else computes in float32. */
static inline DType ku_compute_dtype(DType t) { return ku_type(t) == KU_F64 ? DT_F64 : DT_F32; }

/* Sets the output to input i reshaped to (ndim, shape) without copying data
 * when possible (runtime/tensor.h tensor_reshape). Element counts must agree. */
int ku_view(KernelCtx *c, uint32_t i, int32_t ndim, const int64_t *shape);

/* Per-element cast of spec/ops.md §2 (float→int truncates and saturates, NaN
 * → 0; anything→bool is x != 0, NaN → False; int→int wraps by the source's
 * signedness). */
void ku_cast(DType from, const void *p, DType to, void *q);
/* Casts n elements, typed fast paths for the common pairs. */
void ku_cast_n(DType from, const void *src, DType to, void *dst, int64_t n);

/* An integer array attribute that may hold `None` entries: number of
 * elements (-1 when absent/None); none[i] tells a None entry. */
int32_t ku_attr_opt_ints(const KernelCtx *c, const char *name, int64_t *out, bool *none, int32_t cap);

/* The output shape recorded by type inference, when the call has one: rank
 * or -1. */
int32_t ku_out_shape(const KernelCtx *c, int64_t *shape, int32_t cap);

#endif
