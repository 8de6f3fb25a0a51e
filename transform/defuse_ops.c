/* transform/defuse_ops.c — DefuseOps: calls of function literals are
 * replaced by the literal's body with the parameters replaced by the
 * arguments (spec/passes.md §6.2), so DefuseOps(FuseOps(m)) == m.
 *
 * Bottom-up with the Rewriter: the callee literal's body is rewritten first
 * (nested literal calls inline too), then its parameters are substituted by
 * a second Rewriter over that body, which keeps the body's sharing. TVM
 * matches parameters by name (and aborts on repeated names); relayc's
 * variables are resolved binders, so the substitution is by binder and
 * repeated names are harmless. Primitive or not, every literal called
 * directly with the right number of arguments is inlined; a literal that is
 * only a value (not a callee) stays.
 */
#include "transform/pass.h"
#include "transform/rewrite.h"

bool pass_DEFUSE_OPS(PassCtx *c);

static Expr *defuse_post(Rewriter *rw, Expr *old, Expr *e) {
  (void)old;
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_FN) return e;
  Function *f = e->call.fn->fn;
  if (f->nparams != e->call.nargs) return e;
  Rewriter sub;
  rw_init(&sub, rw->m, rw->d);
  for (uint32_t i = 0; i < f->nparams; i++) rw_subst(&sub, f->params[i], e->call.args[i]);
  Expr *body = rw_expr(&sub, f->body);
  if (sub.failed) rw->failed = true;
  rw_fini(&sub);
  return body;
}

static bool defuse_function(PassCtx *c, GlobalDef *g) {
  Rewriter rw;
  rw_init(&rw, c->m, c->d);
  rw.post = defuse_post;
  bool ok = rw_function(&rw, g->fn);
  rw_fini(&rw);
  return ok;
}

bool pass_DEFUSE_OPS(PassCtx *c) { return pass_for_each_function(c, defuse_function); }
