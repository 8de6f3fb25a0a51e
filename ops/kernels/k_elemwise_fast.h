/* ops/kernels/k_elemwise_fast.h — typed, vectorised, threaded elementwise kernels.
 *
 * ops/kernels/k_elemwise.c's tensor entry points call these first; they handle the
 * common dtypes (float32, float64, int32, int64; bool for the logical ops)
 * and return KFAST_DECLINED for everything else (float16, rare ops, integer
 * division), which then goes through the generic path. Results follow
 * spec/ops.md §2–4 exactly (bit for bit with the generic path) except the
 * float32 transcendental functions exp, log, log2, log10, tanh, erf,
 * sigmoid (and their fast_* forms), which use ops/kernels/k_vmath.h: within 1e-6
 * relative of libm.
 */
#ifndef RELAYC_OPS_K_ELEMWISE_FAST_H
#define RELAYC_OPS_K_ELEMWISE_FAST_H

#include <stdbool.h>

#include "ops/kernels/kernel.h"

enum { KFAST_DECLINED = -1 };

/* Elementwise binary op c->op_id (add ... greater_equal) on c's two inputs
 * with numpy broadcasting; in place into a dying input of the result's shape
 * and dtype. KERNEL_OK (output set), KERNEL_ERROR (message set) or
 * KFAST_DECLINED (nothing done: use the generic path). */
int kfast_binary(KernelCtx *c);
/* Elementwise unary op c->op_id (negative ... isfinite) on c's input. */
int kfast_unary(KernelCtx *c);

/* Test and benchmark hook: false makes both entry points decline, so the
 * generic path runs. The initial state is on unless the environment
 * variable RELAYC_ELEMWISE_FAST is "0". Not thread-safe against running
 * kernels (set it between calls). */
void kfast_set_enabled(bool on);
bool kfast_enabled(void);

#endif
