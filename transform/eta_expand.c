/* transform/eta_expand.c — EtaExpand (spec/passes.md §8.2).
 *
 * expand_constructor: a constructor used as a value (not as a callee) becomes
 *   fn [A...](%eta_expand_param: T1, ...) -> Adt[A...] { Ctor(%eta_expand_param, ...) }
 *   with fresh type parameters (named like the ADT's own) for the ADT's.
 * expand_global_var: every occurrence of a global function, in callee
 *   position too, becomes fn (%eta_expand_param: P1, ...) -> R { @g(...) }
 *   with fresh type parameters named like @g's, and @g's attributes.
 * As in TVM (a constructor or global is one node there, and its mutator
 * memoises by node), all occurrences of one constructor / global in one
 * function share ONE literal. At least one option must be true (TVM's check).
 */
#include <string.h>

#include "ir/build.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef struct Eta {
  bool ctors, globals;
  PtrMap lits; /* Ctor* or GlobalDef* -> Expr* (the shared literal) */
  const Function *current; /* the global function being rewritten */
} Eta;

static Expr *cached(Eta *st, const void *key) {
  const int64_t *v = ptrmap_find(&st->lits, key);
  return v ? (Expr *)(intptr_t)*v : NULL;
}

static Var **eta_params(Module *m, Type **types, uint32_t n, Span sp) {
  Var **ps = arena_alloc(m->arena, (n ? n : 1) * sizeof *ps);
  for (uint32_t i = 0; i < n; i++) ps[i] = var_new(m, "eta_expand_param", sp, types[i]);
  return ps;
}

static Expr **uses(Module *m, Var **ps, uint32_t n, Span sp) {
  Expr **as = arena_alloc(m->arena, (n ? n : 1) * sizeof *as);
  for (uint32_t i = 0; i < n; i++) as[i] = build_var(m, ps[i], sp);
  return as;
}

/* n fresh type parameters named like `like` (into *tps) and the types that
 * refer to them (returned): what a literal standing for a polymorphic
 * constructor or global abstracts over. */
static Type **fresh_tparams(Module *m, TypeParam *const *like, uint32_t n, TypeParam ***tps) {
  TypeParam **ps = arena_alloc(m->arena, (n ? n : 1) * sizeof *ps);
  Type **targs = arena_alloc(m->arena, (n ? n : 1) * sizeof *targs);
  for (uint32_t i = 0; i < n; i++) {
    ps[i] = build_type_param(m, like[i]->name);
    targs[i] = build_type_var(m, ps[i]);
  }
  *tps = ps;
  return targs;
}

/* fn [tps](%eta_expand_param: ptys..., n of them) -> ret { callee(those) },
 * with the function attributes attrs, remembered under key (the constructor
 * or the global) for its other occurrences in the function. */
static Expr *literal(Module *m, Eta *st, const void *key, Expr *callee, Type **ptys, uint32_t n, Type *ret,
                     Attrs *attrs, TypeParam **tps, uint32_t nt) {
  Span sp = callee->span;
  Var **ps = eta_params(m, ptys, n, sp);
  Function *f = build_function(m, ps, n, ret, build_call(m, callee, uses(m, ps, n, sp), n, sp), attrs, sp);
  f->tparams = tps;
  f->ntparams = nt;
  Expr *lit = build_fn(m, f, sp);
  ptrmap_put(&st->lits, key, (int64_t)(intptr_t)lit);
  return lit;
}

static Expr *ctor_literal(Module *m, Eta *st, Expr *e) {
  Ctor *c = e->ctor.ctor;
  Expr *lit = cached(st, c);
  if (lit) return lit;
  TypeDef *td = c->owner;
  uint32_t nt = td->ntparams;
  TypeParam **tps;
  Type **targs = fresh_tparams(m, td->tparams, nt, &tps);
  Type **ftys = arena_alloc(m->arena, (c->nfields ? c->nfields : 1) * sizeof *ftys);
  for (uint32_t i = 0; i < c->nfields; i++)
    ftys[i] = build_type_subst(m, c->fields[i], td->tparams, targs, nt);
  return literal(m, st, c, build_ctor(m, c, e->span), ftys, c->nfields, build_type_adt(m, td, targs, nt), NULL, tps,
                 nt);
}

/* t with params replaced by targs, or t itself when targs is NULL. */
static Type *subst_or_same(Module *m, Type *t, TypeParam **params, Type **targs, uint32_t n) {
  return targs ? build_type_subst(m, t, params, targs, n) : t;
}

static Expr *global_literal(Module *m, Eta *st, Expr *e) {
  GlobalDef *g = e->global.def;
  Expr *lit = cached(st, g);
  if (lit) return lit;
  Function *gf = g->fn;
  /* polymorphic over fresh type parameters (named like @g's: inside @g's own
   * body @g's are already bound), except where that needs polymorphic recursion */
  uint32_t nt = gf->ntparams;
  TypeParam **tps;
  Type **targs;
  if (gf == st->current && !gf->ret_annot) {
    /* @g inside its own body with its result not written: there its type
     * is still being inferred, monomorphic in @g's own type parameters, so
     * the literal is monomorphic too, written in those parameters (in scope
     * here). A literal over fresh ones would need polymorphic recursion
     * (the re-typing failed: "@g returns A but A is expected"), and one
     * binding @g's parameters again would print as a fresh `fn [A]` that
     * reads back as the same failure. */
    tps = NULL;
    nt = 0;
    targs = NULL;
  } else {
    targs = fresh_tparams(m, gf->tparams, nt, &tps);
  }
  Type **ptys = arena_alloc(m->arena, (gf->nparams ? gf->nparams : 1) * sizeof *ptys);
  for (uint32_t i = 0; i < gf->nparams; i++)
    ptys[i] = subst_or_same(m, gf->params[i]->annot ? gf->params[i]->annot : gf->params[i]->type,
                            gf->tparams, targs, nt);
  Type *ret = gf->ret_annot ? gf->ret_annot : (gf->type && gf->type->kind == TYPE_FUNC ? gf->type->func.ret : NULL);
  if (ret) ret = subst_or_same(m, ret, gf->tparams, targs, nt);
  return literal(m, st, g, build_global(m, g, e->span), ptys, gf->nparams, ret, gf->attrs, tps, nt);
}

/* A constructor in callee position stays (its arguments are still visited). */
static Expr *pre(Rewriter *rw, Expr *e) {
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_CTOR) return NULL;
  bool ch = false;
  Expr **args = arena_alloc(rw->m->arena, (e->call.nargs ? e->call.nargs : 1) * sizeof *args);
  for (uint32_t i = 0; i < e->call.nargs; i++) {
    args[i] = rw_expr(rw, e->call.args[i]);
    ch |= args[i] != e->call.args[i];
  }
  if (!ch) return e;
  Expr *c = build_copy(rw->m, e);
  c->call.args = args;
  return c;
}

static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  Eta *st = rw->ud;
  if (e->kind == EXPR_CTOR && st->ctors) return ctor_literal(rw->m, st, e);
  if (e->kind == EXPR_GLOBAL && st->globals && e->global.def && e->global.def->fn) return global_literal(rw->m, st, e);
  return e;
}

bool pass_ETA_EXPAND(PassCtx *c) {
  Eta st = {pass_opt_bool(c, "expand_constructor"), pass_opt_bool(c, "expand_global_var"), {0}, NULL};
  if (!st.ctors && !st.globals) {
    diag_plain(c->d, DIAG_ERROR,
               "EtaExpand needs expand_constructor=True or expand_global_var=True (both are False by default)");
    return false;
  }
  /* the literals are built from the globals as they were before the pass */
  Rewriter rw;
  rw_init(&rw, c->m, c->d);
  rw.pre = pre;
  rw.post = post;
  rw.ud = &st;
  rw.mark_memo = true; /* the hooks build literals only: nothing writes Expr.mark */
  uint32_t n = c->m->ndefs;
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; i++) {
    if (!c->m->defs[i]->fn) continue;
    /* one shared literal per constructor / global within a function (TVM's
     * memo); never one node shared by two global functions */
    ptrmap_free(&st.lits);
    rw_reset_memo(&rw);
    st.current = c->m->defs[i]->fn;
    ok = rw_function(&rw, c->m->defs[i]->fn);
  }
  rw_fini(&rw);
  ptrmap_free(&st.lits);
  return ok;
}
