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
 * callee) stays. In the copies, a node with an effect is copied too (each
 * call runs its own), unless the enclosing code uses it as well (its home is
 * outside the literal, ir/walk.h FnHomes): that one stays shared, run once.
 * A literal whose one use is as the callee of one call (found by one scan
 * before the rewrite) needs no copy: its parameters are substituted before
 * its body is rewritten (defuse_pre), so the body appears once, rewritten
 * once; 10,000 nested `fn () {...}()` are linear, where copying each level's
 * already inlined inner levels again was quadratic (63 s).
 */
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ops/op_call.h"
#include "ops/op_traits.h"
#include "sema/infer.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

bool pass_DEFUSE_OPS(PassCtx *c);

typedef struct Defuse {
  PtrMap effects;   /* has_effects' memo */
  Function *fn;     /* the global being rewritten */
  FnHomes homes;    /* its nodes shared across literals, computed on first need */
  bool homes_ready;
  FnCaptures captures; /* each original literal's captured nodes (ir/walk.h) */
  PtrMap single;    /* original calls whose callee literal is used by them alone */
} Defuse;

/* The calls in fn whose callee is a function literal that nothing else uses
 * (one edge into it in the whole function, nested literals included). */
static void find_single_use_callees(Defuse *st, Function *fn) {
  DagScan s;
  dag_scan_roots(&s, &fn->body, 1, true);
  for (uint32_t k = 0; k < s.n; k++) {
    Expr *e = s.pre[k];
    uint32_t callee;
    if (e->kind == EXPR_CALL && e->call.fn->kind == EXPR_FN && dag_scanned(&s, e->call.fn, &callee) &&
        s.uses[callee] == 1)
      ptrmap_put(&st->single, e, 1);
  }
  dag_free(&s);
}

/* Whether some argument has an effect: inlining would move it to its first
 * use in the body, or drop it with an unused parameter, so such a call stays
 * a call (TVM inlines it anyway, changing what the program computes). */
static bool args_have_effects(Defuse *st, Expr *const *args, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (dag_has_effects(&st->effects, args[i])) return true;
  return false;
}

/* Whether the literal f called with args can be inlined without typing its
 * body at more precise types than it was checked at: false when some
 * parameter's type has a `?` extent and its argument's type is another one
 * (`(2, 3)` for `(?, ?)`). A relation may refuse at the argument's type what
 * it took with `?` (nn.bias_add takes a one-value bias for `?` channels, not
 * for 3), so such a call stays a call. (ResolveStaticRefs gives up on the same
 * programs through its less_precise check.) */
static bool args_keep_param_types(const Function *f, Expr *const *args, uint32_t n) {
  for (uint32_t i = 0; i < n && i < f->nparams; i++) {
    const Type *p = type_solved(f->params[i]->type), *a = type_solved(args[i]->type);
    if (p && a && type_has_unknown_extent(p) && !type_equal(p, a)) return false;
  }
  return true;
}

/* A call of a literal used by this call alone: the literal's body, rewritten
 * with the (rewritten) arguments for its parameters, in place of the call;
 * NULL (the general path, defuse_post) for any other node. */
static Expr *defuse_pre(Rewriter *rw, Expr *e) {
  Defuse *st = rw->ud;
  if (e->kind != EXPR_CALL || !ptrmap_find(&st->single, e)) return NULL;
  Function *f = e->call.fn->fn;
  uint32_t n = e->call.nargs;
  if (f->nparams != n || f->ntparams) return NULL; /* polymorphic: see defuse_post */
  if (!args_keep_param_types(f, e->call.args, n)) return NULL;
  Expr **args = mem_calloc(n + 1, sizeof *args);
  for (uint32_t i = 0; i < n; i++) args[i] = rw_expr(rw, e->call.args[i]);
  Expr *body = NULL;
  if (!args_have_effects(st, args, n)) {
    for (uint32_t i = 0; i < n; i++) rw_subst(rw, f->params[i], args[i]);
    body = rw_expr(rw, f->body);
  }
  mem_free(args);
  return body;
}

/* The nodes the literal `lit` (the original node) uses from the enclosing
 * code (their home is outside it): a copy of its body keeps them shared,
 * whole (evaluated once, outside; each inlined call gets its own copy of
 * everything else, so a node with an effect of its own runs per call). The
 * homes are those of the original function, so the walk is over lit's
 * original body, and each node found is kept as the rewriter made it (a
 * `ref(%0(3))` whose inner call was inlined first is a new node: it was
 * copied, one ref per call). */
static void outside_nodes(Defuse *st, Rewriter *rw, Expr *lit, PtrMap *keep) {
  if (!st->homes_ready) {
    fn_homes_add(&st->homes, st->fn);
    st->homes_ready = true;
  }
  if (!st->homes.cross.len) return;
  uint32_t n = 0;
  Expr **xs = fn_captures_of(&st->captures, &st->homes, lit, &n);
  /* A literal among them may be called in lit's body, and that call was
   * inlined already: the rewritten body holds the nodes that literal keeps
   * outside itself, and those outside lit too stay shared in lit's copy (a
   * `ref(100)` read and written by a closure that lit calls: copied, each
   * call of lit wrote a fresh cell and the program read 100 for 130). */
  ExprVec work = {0};
  PtrMap done = {0};
  for (uint32_t i = 0; i < n; i++) vec_push(work, xs[i]);
  while (work.len) {
    Expr *x = work.data[--work.len];
    if (ptrmap_find(&done, x)) continue;
    ptrmap_put(&done, x, 1);
    int64_t now = 0;
    ptrmap_put(keep, x, 1);
    if (ptrmap_get(&rw->memo, x, &now)) ptrmap_put(keep, (Expr *)(intptr_t)now, 1);
    uint32_t nin = 0;
    Expr **in = x->kind == EXPR_FN ? fn_captures_of(&st->captures, &st->homes, x, &nin) : NULL;
    for (uint32_t i = 0; i < nin; i++)
      if (fn_homes_captured(&st->homes, in[i], lit)) vec_push(work, in[i]);
  }
  vec_free(work);
  ptrmap_free(&done);
}

static Expr *defuse_post(Rewriter *rw, Expr *old, Expr *e) {
  Defuse *st = rw->ud;
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_FN) return e;
  Function *f = e->call.fn->fn;
  if (f->nparams != e->call.nargs) return e;
  /* a polymorphic literal (never a FuseOps group) stays: inlined at two call
   * sites it would share its body's callee nodes between calls at different
   * types (@g in `fn [a](%x: a) { @g(%x) }` applied to 1 and to (2, 2)),
   * and a callee node is typed once, so the re-typing failed */
  if (f->ntparams) return e;
  if (args_have_effects(st, e->call.args, e->call.nargs)) return e;
  /* fresh binders: a literal called twice (a shared `%g = fn ...`) is
   * inlined twice, and the same let binder twice in one function printed as
   * one name and re-parsed as two (print -> parse -> print differed) */
  /* the callee was another expression that an inlining made a literal (the
   * result of `%5()` where `%5 = fn () { %3 }`): which of its nodes the
   * enclosing code shares is known for original literals only (FnHomes of
   * the original function), and a copy that made its own `ref(100)` for a
   * shared one changed the value (a closure returned by another closure
   * incremented a fresh cell: 100 for 120), so such a call stays a call */
  if (old->kind != EXPR_CALL || old->call.fn->kind != EXPR_FN) return e;
  if (!args_keep_param_types(old->call.fn->fn, old->call.args, f->nparams)) return e;
  int before = rw->d->nerrors;
  PtrMap keep = {0};
  outside_nodes(st, rw, old->call.fn, &keep);
  Expr *body = rw_copy_fresh_keep(rw->m, rw->d, f->body, f->params, e->call.args, f->nparams, &keep);
  ptrmap_free(&keep);
  if (rw->d->nerrors != before) rw->failed = true;
  return body;
}

static bool defuse_function(PassCtx *c, GlobalDef *g) {
  Rewriter rw;
  rw_init(&rw, c->m, c->d);
  Defuse st = {.fn = g->fn};
  find_single_use_callees(&st, g->fn);
  rw.pre = defuse_pre;
  rw.post = defuse_post;
  rw.ud = &st;
  bool ok = rw_function(&rw, g->fn);
  rw_fini(&rw);
  ptrmap_free(&st.effects);
  fn_homes_free(&st.homes);
  fn_captures_free(&st.captures);
  ptrmap_free(&st.single);
  return ok;
}

bool pass_DEFUSE_OPS(PassCtx *c) { return pass_for_each_function(c, defuse_function); }
