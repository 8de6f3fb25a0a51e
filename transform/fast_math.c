/* transform/fast_math.c — FastMath (spec/passes.md §4.8): exp → fast_exp,
 * erf → fast_erf, tanh → fast_tanh, nn.softmax(x, axis=a) →
 * nn.fast_softmax(x, axis=a), whatever the dtype (the fast kernels compute
 * TVM's polynomials for float32 — fast_erf also for float16 — and the exact
 * function otherwise, spec §11.3). Level 4: in no -O pipeline.
 */
#include "ir/build.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "transform/call_pass.h"

static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  const char *to;
  switch (op_call_id(e)) {
  case OP_EXP: to = "fast_exp"; break;
  case OP_ERF: to = "fast_erf"; break;
  case OP_TANH: to = "fast_tanh"; break;
  case OP_NN_SOFTMAX: to = "nn.fast_softmax"; break;
  default: return e;
  }
  /* the fast forms have the types of the originals (same relation), as do
   * the rewriter's copies above them (keep_types): nothing to infer again */
  return build_typed(op_call_attrs(rw->m, to, e->call.args, e->call.nargs, e->call.attrs, e->span),
                     rw_rebuilt_type(old, e));
}

bool pass_FAST_MATH(PassCtx *c); /* the entry point passes.def names */
bool pass_FAST_MATH(PassCtx *c) {
  static const int32_t ops[] = {OP_EXP, OP_ERF, OP_TANH, OP_NN_SOFTMAX};
  /* the hook builds calls only (nothing writes Expr.mark) and types them */
  return call_pass_run(c, &(CallPass){.ops = ops, .nops = 4, .post = post, .keep_types = true, .mark_memo = true});
}
