/* ops/kernels/k_cvt.h — whole-tensor dtype conversion for the heavy kernels.
 *
 * Convolution, dense/matmul, pooling and batch_norm compute in one of three
 * compute types chosen from the result dtype: float32 (for float16,
 * bfloat16 and float32 results, spec/ops.md §2: half precision is computed
 * in float32), float64, or int64 for integer/bool results (wrapping to the
 * result width happens on store; two's-complement wrap commutes with + and ·,
 * so accumulating in 64 bits and wrapping once equals wrapping every step).
 *
 * kcvt_load gives a tensor's elements as a compute-type array, each element
 * first CAST to dtype `as` (the operator's out_dtype, §2 cast rules:
 * int→int wraps, float→int truncates and saturates, →bool is x != 0) and
 * then widened. When no conversion is needed it returns the tensor's own
 * data (*owned = false); otherwise a 64-byte aligned buffer to free with
 * mem_free (*owned = true). NULL when that allocation fails.
 */
#ifndef RELAYC_OPS_K_CVT_H
#define RELAYC_OPS_K_CVT_H

#include <stdbool.h>

#include "runtime/tensor.h"

typedef enum { KC_F32, KC_F64, KC_I64 } KCompute;

KCompute kcvt_kind(DType out);
size_t kcvt_size(KCompute k);
void *kcvt_load(const Tensor *t, DType as, KCompute k, bool *owned);
/* A fresh 64-byte aligned compute buffer of n elements (NULL on failure). */
void *kcvt_alloc(KCompute k, int64_t n);
/* Writes n compute-type elements into `out` (dtype out->dtype), rounding
 * float16 to nearest even and wrapping integers. */
void kcvt_store(Tensor *out, const void *buf, KCompute k);
/* True when `out`'s data can be used directly as the compute buffer. */
bool kcvt_is_native(DType dt, KCompute k);

#endif
