/* transform/div_to_mul.c — DivToMul (spec/passes.md §4.7).
 *
 * divide(x, C) with C a float16/32/64 constant whose first element is not
 * zero → multiply(x, C') with C' of C's shape and dtype holding 1/C. TVM
 * writes only element 0 of C' (garbage elsewhere for non-scalar divisors);
 * relayc inverts every element. The reciprocal is computed as TVM does:
 * float32 as (float)(1.0 / (double)c), float64 in double, float16 through
 * float32 (1.0 / c in double, rounded to float, then to half). Integer,
 * zero-first or non-constant divisors stay.
 */
#include <string.h>

#include "ir/build.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "transform/call_pass.h"

static Expr *reciprocal(Module *m, const ConstTensor *c, Span sp) {
  DType dt = c->dtype;
  if (dt.code != DT_FLOAT || dt.lanes != 1 || c->nbytes == 0) return NULL;
  uint64_t n = c->nbytes / dtype_size(dt);
  void *out = arena_alloc_aligned(m->arena, c->nbytes, 64);
  if (dt.bits == 32) {
    const float *x = c->data;
    if (x[0] == 0) return NULL;
    for (uint64_t i = 0; i < n; i++) ((float *)out)[i] = (float)(1.0 / (double)x[i]);
  } else if (dt.bits == 64) {
    const double *x = c->data;
    if (x[0] == 0) return NULL;
    for (uint64_t i = 0; i < n; i++) ((double *)out)[i] = 1.0 / x[i];
  } else if (dt.bits == 16) {
    const uint16_t *x = c->data;
    if (half_to_float(x[0]) == 0) return NULL;
    for (uint64_t i = 0; i < n; i++)
      ((uint16_t *)out)[i] = float_to_half((float)(1.0 / (double)half_to_float(x[i])));
  } else {
    return NULL;
  }
  return build_const(m, dt, (uint32_t)c->ndim, c->shape, out, sp);
}

static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  (void)old;
  if (op_call_id(e) != OP_DIVIDE || e->call.nargs != 2 || e->call.args[1]->kind != EXPR_CONST) return e;
  Expr *inv = reciprocal(rw->m, e->call.args[1]->constant, e->call.args[1]->span);
  if (!inv) return e;
  Expr *args[2] = {e->call.args[0], inv};
  return op_call(rw->m, "multiply", args, 2, NULL, e->span);
}

bool pass_DIV_TO_MUL(PassCtx *c); /* the entry point passes.def names */
bool pass_DIV_TO_MUL(PassCtx *c) {
  static const int32_t ops[] = {OP_DIVIDE};
  return call_pass_run(c, &(CallPass){.ops = ops, .nops = 1, .post = post});
}
