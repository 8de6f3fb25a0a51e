/* tests/unit/kt_util.h — helpers for the kernel unit tests (check_k_*.c).
 *
 * kt_attrs builds call attributes from "key=value; key=value" text (values
 * in canonical attribute syntax, parsed into module m); kt_call runs an
 * operator's kernel on borrowed inputs the way the interpreter does and
 * returns its single result (or a tuple through kt_call_tuple); the fill and
 * compare helpers make deterministic data and measure errors; kt_permuted
 * and kt_lt give the other layouts of a tensor.
 */
#ifndef RELAYC_TESTS_KT_UTIL_H
#define RELAYC_TESTS_KT_UTIL_H

#include <stdint.h>

#include "ir/ast.h"
#include "runtime/tensor.h"

Attrs *kt_attrs(Module *m, const char *spec);
/* Runs the kernel of op on inputs (borrowed); the result (owned) or NULL
 * with the kernel's message in err (KERNEL_ERR_SIZE bytes) when it fails. */
Tensor *kt_call(int32_t op, const Attrs *a, Tensor **ins, uint32_t n, char *err);
/* Tuple result: *nout tensors in a mem_malloc'ed array (each owned), or NULL. */
Tensor **kt_call_tuple(int32_t op, const Attrs *a, Tensor **ins, uint32_t n, uint32_t *nout,
                       char *err);

Tensor *kt_new(DType dt, int32_t ndim, const int64_t *shape);
/* Deterministic pseudo-random fill: floats uniform in [lo, hi); integers
 * uniform in [lo, hi] (rounded). */
void kt_fill(Tensor *t, uint32_t seed, double lo, double hi);
/* max |a − b| / max(max |b|, 1e-30) over all elements (NaN: both must be NaN). */
double kt_rel_err(const Tensor *got, const Tensor *want);
/* true when same shape and every element is bitwise/int-equal (via int64 or double). */
bool kt_equal(const Tensor *got, const Tensor *want);
/* A copy of t with its dims permuted: result dim j = t dim perm[j]. */
Tensor *kt_permuted(const Tensor *t, const int *perm);
/* layout_transform(t, src -> dst) through its own kernel (ops/kernels/k_shape.c),
 * attributes in module m; fails the running Check test when the kernel does. */
Tensor *kt_lt(Module *m, const Tensor *t, const char *src, const char *dst);

#endif
