/* transform/lambda_lift.c — LambdaLift (spec/passes.md §8.3).
 *
 * Every nested function literal (not Primitive ones; not inside functions
 * with a Compiler attribute) becomes a global, innermost first:
 *  - no free variables: `def @lifted_nameN(params) { body }`, and the
 *    occurrence becomes `@lifted_nameN`;
 *  - free variables c1..cm: `def @lifted_nameN(%c1: T1, ..., Closure=1) ->
 *    fn (P...) -> R { fn (params...) -> R { body } }` with fresh same-name
 *    binders for the captures, and the occurrence becomes
 *    `@lifted_nameN(%c1, ..., %cm)`;
 *  - a literal bound by `let %f = fn ...` that calls itself: uses of %f
 *    inside become `@lifted_nameN(captures...)` (or `@lifted_nameN`).
 * Type parameters the literal uses but does not bind (nor a `fn [A](...)`
 * type in it) become the lifted global's type parameters. A polymorphic literal stays usable at several
 * types: each use of its `@lifted` reference is its own node (inference types
 * a node once), a let variable bound to it is annotated with its polymorphic
 * type, and a capturing one returns a `fn [A](...)` type with its own A. A
 * variable bound to a polymorphic literal is never captured (a parameter has
 * one type): its uses in a later literal call the literal's global. TVM names globals by a structural hash relayc
 * cannot reproduce; relayc numbers them in visiting order (lifted_name1,
 * lifted_name2, ... skipping names in use), which is deterministic.
 * After the pass the only function values in the module are globals (and
 * Primitive literals). A literal that uses a graph-shared node with an
 * effect from the enclosing code (dag_literal_captures_effect: relayc runs it
 * once, where the literal is made; the lifted body would run it per call) is
 * prepared first: the node is let-bound where A-normal form puts it
 * (transform/normal_form.h normal_form_bind_captured_effects) and the literal
 * captures the variable. What that leaves (a node a let binds already and the
 * literal uses directly) is refused.
 */
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/walk.h"
#include "transform/dagscan.h"
#include "transform/normal_form.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef VEC(TypeParam *) TPVec;

/* A let-bound polymorphic literal after lifting: its variable stands for
 * `@g` (no captures) or `@g(c1, ..., cn)`. */
typedef struct PolyLift {
  GlobalDef *g;
  Var **caps;
  uint32_t ncaps;
} PolyLift;

typedef struct Lift {
  PtrMap self_of;   /* Function* of a let-bound literal -> its let Var* */
  PtrMap poly;      /* lifted globals with type parameters of their own and no captures */
  PtrMap poly_var;  /* let Var* of a lifted polymorphic literal -> its PolyLift* */
  uint32_t counter;
  uint32_t lifted;
  bool has_literal;  /* the function being scanned has a non-Primitive literal */
  FvCache *fv;      /* free variables of the ORIGINAL literals (inner ones lifted first
                       capture the same variables they did before) */
} Lift;

/* The type parameters bound where a type is being walked: the literal's own
 * (`fn`), then those of each polymorphic function type `fn [A, ...]` entered
 * (`poly`), innermost first. */
typedef struct Binders {
  const PtrMap *fn;
  const Type *poly;
  const struct Binders *up;
} Binders;

static bool binders_bind(const Binders *b, const TypeParam *tp) {
  for (; b; b = b->up) {
    if (b->fn && ptrmap_find(b->fn, tp)) return true;
    for (uint32_t i = 0; b->poly && i < b->poly->func.ntparams; i++)
      if (b->poly->func.tparams[i] == tp) return true;
  }
  return false;
}

/* Type parameters mentioned in t that nothing in `b` binds, appended to out
 * once. A `fn [A, B](...)` inside binds its A and B everywhere in it (TVM's
 * FreeTypeVars leaves them out): the lifted `fn () { @foldr }` has no type
 * parameter of its own (fuzz session 15: it got @foldr's A and B, and
 * instantiating them rewrote the A and B of the polymorphic type it returns). */
static void free_tvars(const Type *t, const Binders *b, TPVec *out) {
  if (!t || stack_exhausted()) return;
  switch (t->kind) {
  case TYPE_VAR:
    if (binders_bind(b, t->var.param)) return;
    for (size_t i = 0; i < out->len; i++)
      if (out->data[i] == t->var.param) return;
    vec_push(*out, t->var.param);
    return;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++) free_tvars(t->tuple.fields[i], b, out);
    return;
  case TYPE_FUNC: {
    Binders inner = {NULL, t, b};
    const Binders *in = t->func.ntparams ? &inner : b;
    for (uint32_t i = 0; i < t->func.nargs; i++) free_tvars(t->func.args[i], in, out);
    free_tvars(t->func.ret, in, out);
    return;
  }
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++) free_tvars(t->adt.args[i], b, out);
    return;
  case TYPE_REF: free_tvars(t->ref.inner, b, out); return;
  default: return;
  }
}

/* ------------------------------------------------------------------ lifting */

static void add_capture(ExprVarList *caps, Var *v) {
  for (size_t i = 0; i < caps->len; i++)
    if (caps->data[i] == v) return;
  vec_push(*caps, v);
}

static Expr **var_uses(Module *m, Var *const *vs, size_t n, Span sp) {
  Expr **xs = arena_alloc(m->arena, (n ? n : 1) * sizeof *xs);
  for (size_t i = 0; i < n; i++) xs[i] = build_var(m, vs[i], sp);
  return xs;
}

/* A polymorphic function type `fn [A](...) -> ...` with its own, fresh type parameters. */
static Type *poly_type_copy(Module *m, const Type *ot) {
  uint32_t n = ot->func.ntparams;
  TypeParam **fp = arena_alloc(m->arena, n * sizeof *fp);
  Type **with = arena_alloc(m->arena, n * sizeof *with);
  for (uint32_t i = 0; i < n; i++) {
    fp[i] = build_type_param(m, ot->func.tparams[i]->name);
    with[i] = build_type_var(m, fp[i]);
  }
  Type *r = build_type_subst(m, (Type *)ot, ot->func.tparams, with, n);
  Type *c = type_new(m, TYPE_FUNC, ot->span);
  c->func = r->func;
  c->func.tparams = fp;
  return c;
}

/* A capture cannot be polymorphic: a parameter of the lifted global has one
 * type (TVM makes it a parameter all the same, annotated with the
 * polymorphic type). A captured variable bound to a polymorphic literal,
 * lifted already, is not captured: its uses become its global (applied to
 * that literal's captures, which this literal captures in its stead).
 * `caps` gets the captures, `polys` the variables left out. */
static void captures_without_polymorphic(Lift *st, const Function *f, const Var *self, ExprVarList *caps,
                                         ExprVarList *polys) {
  ExprVarList all = {0};
  fv_cache_get(st->fv, f, self, &all);
  for (size_t i = 0; i < all.len; i++) {
    int64_t pl = 0;
    if (!ptrmap_get(&st->poly_var, all.data[i], &pl)) {
      add_capture(caps, all.data[i]);
      continue;
    }
    vec_push(*polys, all.data[i]);
    const PolyLift *p = (const PolyLift *)(intptr_t)pl;
    for (uint32_t k = 0; k < p->ncaps; k++) add_capture(caps, p->caps[k]);
  }
  vec_free(all);
}

/* What a left-out polymorphic variable becomes inside the lifted body:
 * `@g`, or `@g(...)` of the fresh binders of its literal's captures. */
static Expr *poly_use(Module *m, const Lift *st, Var *v, const ExprVarList *caps, Var *const *fresh, Span sp) {
  int64_t pl = 0;
  ptrmap_get(&st->poly_var, v, &pl);
  const PolyLift *p = (const PolyLift *)(intptr_t)pl;
  Expr *ref = build_global(m, p->g, sp);
  if (!p->ncaps) return ref;
  Expr **args = arena_alloc(m->arena, p->ncaps * sizeof *args);
  for (uint32_t k = 0; k < p->ncaps; k++)
    for (size_t i = 0; i < caps->len; i++)
      if (caps->data[i] == p->caps[k]) args[k] = build_var(m, fresh[i], sp);
  return build_call(m, ref, args, p->ncaps, sp);
}

static void note_poly_var(Module *m, Lift *st, Var *self, GlobalDef *g, const ExprVarList *caps) {
  PolyLift *p = arena_alloc(m->arena, sizeof *p);
  p->g = g;
  p->ncaps = (uint32_t)caps->len;
  p->caps = caps->len ? arena_memdup(m->arena, caps->data, caps->len * sizeof *p->caps) : NULL;
  ptrmap_put(&st->poly_var, self, (int64_t)(intptr_t)p);
}

static Expr *lift(Rewriter *rw, Expr *old, Expr *e) {
  Module *m = rw->m;
  Lift *st = rw->ud;
  Function *f = e->fn;
  int64_t selfp = 0;
  Var *self = ptrmap_get(&st->self_of, old->fn, &selfp) ? (Var *)(intptr_t)selfp : NULL;
  ExprVarList caps = {0}, polys = {0};
  captures_without_polymorphic(st, old->fn, self, &caps, &polys);
  uint32_t nc = (uint32_t)caps.len;

  char name[64];
  do snprintf(name, sizeof name, "lifted_name%u", ++st->counter);
  while (module_find_global(m, name));
  Function *gf = build_function(m, NULL, 0, NULL, NULL, NULL, e->span);
  GlobalDef *g = build_global_def(m, name, gf, e->span);
  st->lifted++;

  /* fresh binders for the captures; substitute them and the self reference */
  Var **fresh = arena_alloc(m->arena, (nc ? nc : 1) * sizeof *fresh);
  for (uint32_t i = 0; i < nc; i++) fresh[i] = var_new_as(m, caps.data[i], caps.data[i]->type);
  Rewriter sub;
  rw_init(&sub, m, rw->d);
  sub.enter_fns = true;
  for (uint32_t i = 0; i < nc; i++) rw_subst(&sub, caps.data[i], build_var(m, fresh[i], e->span));
  for (size_t i = 0; i < polys.len; i++) rw_subst(&sub, polys.data[i], poly_use(m, st, polys.data[i], &caps, fresh, e->span));
  if (self) {
    Expr *ref = build_global(m, g, e->span);
    if (nc) ref = build_call(m, ref, var_uses(m, fresh, nc, e->span), nc, e->span);
    rw_subst(&sub, self, ref);
  }
  Expr *body = (nc || self || polys.len) ? rw_expr(&sub, f->body) : f->body;
  rw_fini(&sub);

  /* inner parameters keep their annotation, or get their checked type */
  Var **ps = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof *ps);
  for (uint32_t i = 0; i < f->nparams; i++) {
    ps[i] = f->params[i];
    if (!ps[i]->annot && ps[i]->type) ps[i]->annot = ps[i]->type;
  }
  Type *ret = f->ret_annot ? f->ret_annot
                           : (old->type && old->type->kind == TYPE_FUNC ? old->type->func.ret : NULL);

  /* free type parameters: those the literal's type and the captures mention */
  PtrMap bound = {0};
  for (uint32_t i = 0; i < f->ntparams; i++) ptrmap_put(&bound, f->tparams[i], 1);
  TPVec ftv = {0};
  Binders own = {&bound, NULL, NULL};
  free_tvars(old->type, &own, &ftv);
  for (uint32_t i = 0; i < nc; i++) free_tvars(caps.data[i]->type, &own, &ftv);
  ptrmap_free(&bound);

  if (nc == 0) {
    gf->params = ps;
    gf->nparams = f->nparams;
    gf->ret_annot = ret;
    gf->body = body;
    gf->attrs = f->attrs;
    gf->tparams = f->tparams;
    gf->ntparams = f->ntparams;
  } else {
    Function *inner = build_function(m, ps, f->nparams, ret, body, f->attrs, e->span);
    inner->tparams = f->tparams;
    inner->ntparams = f->ntparams;
    gf->params = fresh;
    gf->nparams = nc;
    gf->ret_annot = old->type;
    /* the returned closure's type `fn [A](A) -> ...` binds its own A: the
     * same TypeParam objects in it and in the inner literal made the module
     * differ from its re-parse ("type parameters differ") */
    if (old->type && old->type->kind == TYPE_FUNC && old->type->func.ntparams)
      gf->ret_annot = poly_type_copy(m, old->type);
    gf->body = build_fn(m, inner, e->span);
    Attr a = {"Closure", attr_int(m, 1), e->span, false};
    gf->attrs = arena_alloc(m->arena, sizeof *gf->attrs);
    gf->attrs->items = arena_memdup(m->arena, &a, sizeof a);
    gf->attrs->n = 1;
  }
  if (ftv.len) {
    TypeParam **tps = arena_memdup(m->arena, ftv.data, ftv.len * sizeof *tps);
    if (nc == 0 && f->ntparams) { /* keep the literal's own first, then the free ones */
      TypeParam **all = arena_alloc(m->arena, (f->ntparams + ftv.len) * sizeof *all);
      memcpy(all, f->tparams, f->ntparams * sizeof *all);
      memcpy(all + f->ntparams, tps, ftv.len * sizeof *all);
      gf->tparams = all;
      gf->ntparams = f->ntparams + (uint32_t)ftv.len;
    } else {
      gf->tparams = tps;
      gf->ntparams = (uint32_t)ftv.len;
    }
  }
  vec_free(ftv);

  Expr *occ = build_global(m, g, e->span);
  if (nc) occ = build_call(m, occ, var_uses(m, caps.data, nc, e->span), nc, e->span);
  else if (f->ntparams) {
    ptrmap_put(&st->poly, g, 1);
    /* `let %f = fn [A](...) {...}` becomes `let %f = @lifted`: inference
     * instantiates a global used as a value, so %f would get ONE instance
     * where the literal gave it the polymorphic type (as TVM types a
     * GlobalVar); the annotation keeps %f polymorphic */
    if (self && !self->annot && old->type && old->type->kind == TYPE_FUNC && old->type->func.ntparams)
      self->annot = poly_type_copy(m, old->type), self->type = NULL;
  }
  if (self && f->ntparams) note_poly_var(m, st, self, g, &caps);
  vec_free(caps);
  vec_free(polys);
  return occ;
}

/* A shared polymorphic literal becomes ONE `@lifted` node used by every
 * parent of the literal; inference types a node once, with one instance of
 * its type, where the literal (typed by its polymorphic type) was usable at
 * several types (`%0 = fn [A](%x: A) {...}; (@apply(%0, 1), @apply(%0, 2f))`).
 * Each further use of such a node gets its own copy. */
static void unshare_slot(Module *m, const Lift *st, PtrMap *seen, Expr **slot) {
  Expr *c = *slot;
  if (c->kind != EXPR_GLOBAL || !c->global.def || !ptrmap_find(&st->poly, c->global.def)) return;
  if (!ptrmap_find(seen, c)) ptrmap_put(seen, c, 1);
  else *slot = build_copy(m, c);
}

static void unshare_poly(Module *m, const Lift *st, Expr **root) {
  PtrMap seen = {0}, visited = {0};
  ExprVec stack = {0};
  unshare_slot(m, st, &seen, root);
  vec_push(stack, *root);
  while (stack.len) {
    Expr *e = stack.data[--stack.len];
    if (ptrmap_find(&visited, e)) continue;
    ptrmap_put(&visited, e, 1);
    Expr **few[3] = {NULL, NULL, NULL}, **many = NULL;
    uint32_t nmany = 0;
    switch (e->kind) {
    case EXPR_CALL: few[0] = &e->call.fn; many = e->call.args; nmany = e->call.nargs; break;
    case EXPR_TUPLE: many = e->tuple.fields; nmany = e->tuple.n; break;
    case EXPR_PROJ: few[0] = &e->proj.tuple; break;
    case EXPR_FN: few[0] = &e->fn->body; break;
    case EXPR_LET: few[0] = &e->let.value; few[1] = &e->let.body; break;
    case EXPR_IF: few[0] = &e->if_.cond; few[1] = &e->if_.then_; few[2] = &e->if_.else_; break;
    case EXPR_MATCH:
      few[0] = &e->match.scrut;
      for (uint32_t i = 0; i < e->match.nclauses; i++) {
        unshare_slot(m, st, &seen, &e->match.clauses[i].body);
        vec_push(stack, e->match.clauses[i].body);
      }
      break;
    case EXPR_REF_NEW: case EXPR_REF_READ: few[0] = &e->ref.arg; break;
    case EXPR_REF_WRITE: few[0] = &e->ref_write.ref; few[1] = &e->ref_write.value; break;
    default: break;
    }
    for (uint32_t i = 0; i < 3 && few[i]; i++) {
      unshare_slot(m, st, &seen, few[i]);
      vec_push(stack, *few[i]);
    }
    for (uint32_t i = 0; i < nmany; i++) {
      unshare_slot(m, st, &seen, &many[i]);
      vec_push(stack, many[i]);
    }
  }
  vec_free(stack);
  ptrmap_free(&seen);
  ptrmap_free(&visited);
}

static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  if (e->kind != EXPR_FN || fn_has_attr(e->fn, "Primitive")) return e;
  return lift(rw, old, e);
}

static void note_self(Expr *e, void *ud) {
  Lift *st = ud;
  if (e->kind == EXPR_FN && !fn_has_attr(e->fn, "Primitive")) st->has_literal = true;
  if (e->kind == EXPR_LET && e->let.value->kind == EXPR_FN)
    ptrmap_put(&st->self_of, e->let.value->fn, (int64_t)(intptr_t)e->let.var);
}

bool pass_LAMBDA_LIFT(PassCtx *c) {
  Module *m = c->m;
  Lift st = {0};
  st.fv = fv_cache_new(m);
  uint32_t n = m->ndefs; /* lifted globals are appended: they are already lifted */
  bool ok = normal_form_bind_captured_effects(c, NULL);
  for (uint32_t i = 0; i < n && ok; i++) {
    GlobalDef *g = m->defs[i];
    if (!g->fn || fn_has_attr(g->fn, "Compiler") || fn_has_attr(g->fn, "Primitive")) continue;
    st.has_literal = false;
    walk_post_order(g->fn->body, true, note_self, &st);
    if (!st.has_literal) continue; /* nothing to lift: no rewrite of a 100,000-node body */
    if (dag_literal_captures_effect(g->fn)) {
      diag_error(c->d, g->span, "LambdaLift: in @%s a function literal uses a node with an effect that the "
                                "enclosing code shares: it runs once, where the literal is made, but lifted it "
                                "would run on every call", g->name);
      ok = false;
      break;
    }
    Rewriter rw;
    rw_init(&rw, m, c->d);
    rw.post = post;
    rw.ud = &st;
    size_t npoly = st.poly.len;
    uint32_t first_new = m->ndefs;
    ok = rw_function(&rw, g->fn);
    rw_fini(&rw);
    if (ok && st.poly.len != npoly) { /* this global lifted polymorphic literals: its code and theirs */
      unshare_poly(m, &st, &g->fn->body);
      for (uint32_t k = first_new; k < m->ndefs; k++)
        if (m->defs[k]->fn) unshare_poly(m, &st, &m->defs[k]->fn->body);
    }
  }
  ptrmap_free(&st.self_of);
  ptrmap_free(&st.poly);
  ptrmap_free(&st.poly_var);
  fv_cache_free(st.fv);
  return ok;
}
