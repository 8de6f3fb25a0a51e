/* transform/defuse_ops.c — DefuseOps: calls of function literals are
 * replaced by the literal's body with the parameters replaced by the
 * arguments (spec/passes.md §6.2), so DefuseOps(FuseOps(m)) == m.
 *
 * Bottom-up with the Rewriter: the callee literal's body is rewritten first
 * (nested literal calls inline too), then it is copied with fresh binders
 * and the arguments for the parameters (rw_copy_fresh, which keeps the
 * body's sharing): a literal called twice gives two copies with their own
 * binders. A polymorphic literal is not inlined (see defuse_post). TVM
 * matches parameters by name (and aborts on repeated names); relayc's
 * variables are resolved binders, so the substitution is by binder and
 * repeated names are harmless. Primitive or not, every literal called
 * directly with the right number of arguments is inlined — unless an
 * argument has an effect (references, calls of functions, stateful ops),
 * which inlining would move or drop; a literal that is only a value (not a
 * callee) stays.
 */
#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/op_traits.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

bool pass_DEFUSE_OPS(PassCtx *c);

/* Does evaluating e (not the bodies of literals it makes) have an effect or
 * depend on when it runs: a reference operation, a call of anything but an
 * operator or constructor, a stateful operator? */
static void note_effect(Expr *e, void *ud) {
  if (e->kind == EXPR_REF_NEW || e->kind == EXPR_REF_READ || e->kind == EXPR_REF_WRITE) *(bool *)ud = true;
  else if (e->kind == EXPR_CALL) {
    int32_t id = op_call_id(e);
    if (id >= 0 ? op_is_stateful(id) : e->call.fn->kind != EXPR_CTOR) *(bool *)ud = true;
  }
}

static bool has_effects(Expr *e) {
  bool eff = false;
  walk_post_order(e, false, note_effect, &eff);
  return eff;
}

static Expr *defuse_post(Rewriter *rw, Expr *old, Expr *e) {
  (void)old;
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_FN) return e;
  Function *f = e->call.fn->fn;
  if (f->nparams != e->call.nargs) return e;
  /* a polymorphic literal (never a FuseOps group) stays: inlined at two call
   * sites it would share its body's callee nodes between calls at different
   * types (@g in `fn [a](%x: a) { @g(%x) }` applied to 1 and to (2, 2)),
   * and a callee node is typed once, so the re-typing failed */
  if (f->ntparams) return e;
  /* an argument with an effect would move to its first use in the body, or
   * vanish with an unused parameter: such a call stays a call (TVM inlines
   * it anyway, changing what the program computes) */
  for (uint32_t i = 0; i < e->call.nargs; i++)
    if (has_effects(e->call.args[i])) return e;
  /* fresh binders: a literal called twice (a shared `%g = fn ...`) is
   * inlined twice, and the same let binder twice in one function printed as
   * one name and re-parsed as two (print -> parse -> print differed) */
  int before = rw->d->nerrors;
  Expr *body = rw_copy_fresh(rw->m, rw->d, f->body, f->params, e->call.args, f->nparams);
  if (rw->d->nerrors != before) rw->failed = true;
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
