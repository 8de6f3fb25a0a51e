/* transform/fast_math.c — FastMath (spec/passes.md §4.8): exp → fast_exp,
 * erf → fast_erf, tanh → fast_tanh, nn.softmax(x, axis=a) →
 * nn.fast_softmax(x, axis=a), whatever the dtype (the fast kernels compute
 * TVM's polynomials for float32 — fast_erf also for float16 — and the exact
 * function otherwise, spec §11.3). Level 4: in no -O pipeline.
 */
#include "ir/build.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

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

static bool fast_global(PassCtx *c, GlobalDef *g) {
  static bool ids[OP_BUILTIN_COUNT];
  ids[OP_EXP] = ids[OP_ERF] = ids[OP_TANH] = ids[OP_NN_SOFTMAX] = true;
  if (!dag_calls_any(g->fn->body, ids, OP_BUILTIN_COUNT)) return true; /* nothing to rewrite */
  Rewriter rw;
  rw_init(&rw, c->m, c->d);
  rw.post = post;
  rw.mark_memo = true; /* the hook builds calls only: nothing writes Expr.mark */
  rw.keep_types = true;
  bool ok = rw_function(&rw, g->fn);
  rw_fini(&rw);
  return ok;
}

bool pass_FAST_MATH(PassCtx *c); /* the entry point passes.def names */
bool pass_FAST_MATH(PassCtx *c) { return pass_for_each_function(c, fast_global); }
