/* tests/unit/kr_util.h — small helpers for the shape/index/reduce/nn/math kernel
 * tests (check_k_shape.c, check_k_index.c, check_k_reduce.c, check_k_nn.c,
 * check_k_math.c), on top of tests/unit/kt_util.h.
 *
 * kr_run runs an operator's kernel with attributes written as
 * "key=value; ..." (parsed into a process-wide module) on BORROWED inputs
 * and returns its result, or NULL with the message in kr_err. Tensors are
 * built from double arrays (kr_make) or as 0, 1, 2, ... (kr_iota).
 */
#ifndef RELAYC_TESTS_KR_UTIL_H
#define RELAYC_TESTS_KR_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/tensor.h"

extern char kr_err[256];

Tensor *kr_make(DType dt, int32_t ndim, const int64_t *shape, const double *vals);
Tensor *kr_iota(DType dt, int32_t ndim, const int64_t *shape);
Tensor *kr_scalar(DType dt, double v);
Tensor *kr_run(int32_t op, const char *attrs, Tensor **ins, uint32_t n);
/* Tuple result (mem_malloc'ed array of owned tensors) or NULL. */
Tensor **kr_run_tuple(int32_t op, const char *attrs, Tensor **ins, uint32_t n, uint32_t *nout);
/* True when t has exactly this shape. */
bool kr_shape_is(const Tensor *t, int32_t ndim, const int64_t *shape);
/* Releases up to 4 tensors (NULL ignored). */
void kr_free(Tensor *a, Tensor *b, Tensor *c, Tensor *d);
/* Runs the kernel with a UNIQUE input 0 (ownership handed over) and tells
 * whether the result reused that input's storage. */
bool kr_runs_in_place(int32_t op, const char *attrs, Tensor *in0, Tensor **rest, uint32_t nrest, Tensor **out);

#endif
