/* sema/infer.c — the inference walk over a resolved module.
 *
 * One TyCx for the whole module: every global first gets its signature
 * (annotations, `_` and missing ones as uvars, so callers see the annotated
 * signature and mutually recursive globals need nothing special), then the
 * bodies are walked in textual order. A function type with type parameters
 * (a polymorphic global's, literal's, or a variable's bound to one) is
 * instantiated freshly where it is called, as in TVM; as a value it stays
 * polymorphic (a constructor value is instantiated where it stands). A
 * global without type parameters is monomorphic (not generalized). Operator
 * calls add relation constraints to the solver, which runs them eagerly and
 * wakes them when their inputs get bound. Each Expr is typed once (the
 * resolved tree is a DAG: e->type set means visited), except globals,
 * variables and constructors, typed at each use (typed_per_use). A failed
 * node gets the error type, which unifies silently,
 * so one mistake gives one message. At the end unsolved relations are
 * reported and every recorded type is zonked in place.
 */
#include "sema/infer.h"
#include "ir/walk.h"

#include <string.h>

#include "ir/equal.h"
#include "ir/print.h"
#include "ir/ptrmap.h"
#include "ir/type_any.h"
#include "ops/registry.h"
#include "sema/call_memo.h"
#include "sema/typing.h"

typedef struct Inf {
  TyCx cx;
  VEC(Expr *) exprs;       /* every typed expression, for zonking */
  VEC(Var *) vars;
  VEC(Function *) fns;
  CallMemo calls;          /* operator calls typed so far, by (operator, attributes, argument types) */
  bool deep_reported;
} Inf;

static Type *infer(Inf *I, Expr *e);
static Type *infer_kind(Inf *I, Expr *e);

/* ------------------------------------------------------------------ helpers */

static Type *err_at(Inf *I) { return I->cx.err; }

static const char *tstr(Inf *I, Type *t) { return ty_str(&I->cx, t); }

/* A variable's type: its annotation (with `_` as fresh uvars) on first use. */
static Type *var_type(Inf *I, Var *v) {
  if (!v->type) {
    v->type = ty_from_annot(&I->cx, v->annot);
    vec_push(I->vars, v);
  }
  return v->type;
}

/* A global, variable or constructor node is typed at each use, not once:
 * one node may stand at several uses (a pass that inlines a literal at
 * several places keeps the `@id` of its body as one node, DeadCodeElimination
 * inlining `%0 = let %u = 1; @id` puts that @id at each use of %0), and a
 * polymorphic one stays polymorphic as a value (`let %f = @id` gives %f
 * @id's type, fn [A](A) -> A) and is instantiated where it is called: each
 * callee use records its own instance (infer_call). */
static bool typed_per_use(const Expr *e) {
  return e->kind == EXPR_GLOBAL || e->kind == EXPR_VAR || e->kind == EXPR_CTOR;
}

static Expr *tail_of(Expr *e) {
  while (e->kind == EXPR_LET) e = e->let.body;
  return e;
}

/* Name of a callee for messages. */
static const char *callee_name(Inf *I, Expr *f) {
  Arena *a = I->cx.a;
  char buf[256];
  switch (f->kind) {
  case EXPR_GLOBAL: snprintf(buf, sizeof buf, "@%s", f->global.name); break;
  case EXPR_VAR: snprintf(buf, sizeof buf, "%%%s", f->var.var ? var_name(f->var.var) : f->var.name); break;
  case EXPR_CTOR: snprintf(buf, sizeof buf, "constructor %s", f->ctor.ctor->name); break;
  case EXPR_OP: snprintf(buf, sizeof buf, "%s", f->op.name); break;
  default: return "the function";
  }
  return arena_strdup(a, buf);
}

static Type *const_type(Inf *I, const ConstTensor *c) {
  Type *t = type_new(I->cx.m, TYPE_TENSOR, (Span){0, 0});
  t->tensor.dtype = c->dtype;
  t->tensor.ndim = (uint32_t)(c->ndim > 0 ? c->ndim : 0);
  t->tensor.dims = arena_alloc(I->cx.a, (t->tensor.ndim ? t->tensor.ndim : 1) * sizeof(Dim));
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    t->tensor.dims[i] = (Dim){DIM_INT, DTYPE(DT_INT, 32), c->shape[i]};
  return t;
}

/* fn[A..](fields) -> Owner[A..] */
static Type *ctor_type(Inf *I, Ctor *c) {
  TypeDef *td = c->owner;
  Type *ret = type_new(I->cx.m, TYPE_ADT, c->span);
  ret->adt.def = td;
  ret->adt.nargs = td->ntparams;
  ret->adt.args = arena_alloc(I->cx.a, (td->ntparams ? td->ntparams : 1) * sizeof(Type *));
  for (uint32_t i = 0; i < td->ntparams; i++) {
    Type *v = type_new(I->cx.m, TYPE_VAR, td->tparams[i]->span);
    v->var.param = td->tparams[i];
    ret->adt.args[i] = v;
  }
  Type *f = ty_func(&I->cx, c->fields, c->nfields, ret);
  f->func.tparams = td->tparams;
  f->func.ntparams = td->ntparams;
  return f;
}

/* ------------------------------------------------------------------- calls */

static Type *infer_op_value(Inf *I, Expr *e) {
  const OpDef *op = e->op.id >= 0 ? op_get(e->op.id) : NULL;
  if (!op) {
    diag_error(I->cx.d, e->span, "unknown operator %s", e->op.name);
    return err_at(I);
  }
  uint32_t n = op->num_inputs > 0 ? (uint32_t)op->num_inputs : 0;
  Type **args = arena_alloc(I->cx.a, (n + 1) * sizeof *args);
  for (uint32_t i = 0; i <= n; i++) args[i] = ty_fresh(&I->cx);
  solver_add_rel(&I->cx, op, NULL, NULL, args, n, e->span);
  return ty_func(&I->cx, args, n, args[n]);
}

static Type *infer_op_call(Inf *I, Expr *e) {
  Expr *f = e->call.fn;
  uint32_t n = e->call.nargs;
  Type **args = arena_alloc(I->cx.a, (n + 1) * sizeof *args);
  for (uint32_t i = 0; i < n; i++) args[i] = infer(I, e->call.args[i]);
  const OpDef *op = f->op.id >= 0 ? op_get(f->op.id) : NULL;
  if (!op) {
    diag_error(I->cx.d, f->span, "unknown operator %s", f->op.name);
    f->type = err_at(I);
    vec_push(I->exprs, f);
    return err_at(I);
  }
  if (op->num_inputs >= 0 && (uint32_t)op->num_inputs != n) {
    diag_error(I->cx.d, e->span, "%s expects %d argument%s but %u %s given", op->name, op->num_inputs,
               op->num_inputs == 1 ? "" : "s", n, n == 1 ? "was" : "were");
    f->type = err_at(I);
    vec_push(I->exprs, f);
    return err_at(I);
  }
  /* a call equal to one typed before (same operator, attributes and argument
   * types: sema/call_memo.h) gets its types without running the relation
   * again; what the relation would have run first still runs first */
  uint64_t h;
  bool keyed;
  Type *ret;
  if (call_memo_lookup(&I->calls, e, &keyed, &h, &f->type, &ret)) {
    vec_push(I->exprs, f);
    solver_drain(&I->cx);
    return ret;
  }
  args[n] = ty_fresh(&I->cx);
  f->type = ty_func(&I->cx, args, n, args[n]);
  vec_push(I->exprs, f);
  solver_add_rel(&I->cx, op, e->call.attrs, e->call.args, args, n, e->span);
  if (keyed) call_memo_add_types(&I->calls, I->cx.m, e, f->type, args[n], h);
  return args[n];
}

static Type *infer_call(Inf *I, Expr *e) {
  Expr *f = e->call.fn;
  /* An operator callee is typed per call even when a pass made several calls
   * share one EXPR_OP node (its recorded type is the last call's). */
  if (f->kind == EXPR_OP) return infer_op_call(I, e);
  TyCx *cx = &I->cx;
  /* A polymorphic callee is instantiated here, at the call, as TVM does,
   * and a global, constructor or variable callee records this call's
   * instantiation (typed_per_use: it may be shared by several calls, or a
   * typed callee of a call a pass rebuilt with new arguments, FoldConstant
   * folding `arange(...)` in `@id(arange(...))`, whose old record would be
   * stale: infer_untyped keeps typed nodes). */
  Type *ft = ty_instantiate(cx, infer(I, f));
  if (typed_per_use(f) && ft != cx->err) f->type = ft;
  uint32_t n = e->call.nargs;
  Type **at = arena_alloc(cx->a, (n ? n : 1) * sizeof *at);
  for (uint32_t i = 0; i < n; i++) at[i] = infer(I, e->call.args[i]);
  Type *r = ty_find(ft);
  if (r->kind == TYPE_UVAR) {
    Type **ps = arena_alloc(cx->a, (n ? n : 1) * sizeof *ps);
    for (uint32_t i = 0; i < n; i++) ps[i] = ty_fresh(cx);
    Type *fn = ty_func(cx, ps, n, ty_fresh(cx));
    ty_unify(cx, r, fn);
    r = fn;
  }
  if (r == cx->err) return cx->err;
  if (r->kind != TYPE_FUNC) {
    diag_error(cx->d, f->span, "%s has type %s and cannot be called", callee_name(I, f), tstr(I, r));
    return cx->err;
  }
  if (r->func.nargs != n) {
    diag_error(cx->d, e->span, "%s expects %u argument%s but %u %s given", callee_name(I, f),
               r->func.nargs, r->func.nargs == 1 ? "" : "s", n, n == 1 ? "was" : "were");
    return cx->err;
  }
  bool ok = true;
  for (uint32_t i = 0; i < n; i++) {
    if (ty_unify_here(cx, r->func.args[i], at[i])) continue;
    diag_error(cx->d, e->call.args[i]->span, "argument %u of %s: expected %s, found %s", i + 1,
               callee_name(I, f), tstr(I, r->func.args[i]), tstr(I, at[i]));
    ty_note_occurs(cx, e->call.args[i]->span);
    ok = false;
  }
  solver_drain(cx);
  return ok ? r->func.ret : cx->err;
}

/* --------------------------------------------------------------- functions */

/* Parameter and return types of fn, and its function type (fn->type). */
static Type *fn_signature(Inf *I, Function *fn) {
  Type **ps = arena_alloc(I->cx.a, (fn->nparams ? fn->nparams : 1) * sizeof *ps);
  for (uint32_t i = 0; i < fn->nparams; i++) ps[i] = var_type(I, fn->params[i]);
  Type *ret = ty_from_annot(&I->cx, fn->ret_annot);
  Type *ft = ty_func(&I->cx, ps, fn->nparams, ret);
  ft->func.tparams = fn->tparams;
  ft->func.ntparams = fn->ntparams;
  fn->type = ft;
  vec_push(I->fns, fn);
  return ft;
}

/* A return-type mismatch is reported only when the body itself was clean:
 * after an error inside, it is almost always a consequence of that error. */
static void fn_body(Inf *I, Function *fn, const char *what) {
  int before = I->cx.d->nerrors;
  Type *bt = infer(I, fn->body);
  Type *ret = fn->type->func.ret;
  if (ty_unify_here(&I->cx, ret, bt)) {
    solver_drain(&I->cx);
    return;
  }
  if (I->cx.d->nerrors != before) return;
  Expr *tail = tail_of(fn->body);
  if (fn->ret_annot)
    diag_error(I->cx.d, tail->span, "%s returns %s but its declared return type is %s", what, tstr(I, bt),
               tstr(I, ret));
  else
    diag_error(I->cx.d, tail->span, "%s returns %s but %s is expected", what, tstr(I, bt), tstr(I, ret));
  ty_note_occurs(&I->cx, tail->span);
}

static Type *infer_fn(Inf *I, Expr *e, Var *self) {
  Function *fn = e->fn;
  Type *ft = fn_signature(I, fn);
  if (self) {
    e->type = ft; /* visible to recursive uses through the let variable */
    if (!ty_unify(&I->cx, var_type(I, self), ft))
      diag_error(I->cx.d, e->span, "%%%s is annotated %s but bound to a function of type %s", var_name(self),
                 tstr(I, self->type), tstr(I, ft));
  }
  fn_body(I, fn, "the function");
  return ft;
}

/* ---------------------------------------------------------------- patterns */

static void var_err(Var *v, void *ud) {
  Inf *I = ud;
  if (v->type) return;
  v->type = I->cx.err;
  vec_push(I->vars, v);
}

/* The pattern's variables not typed yet get the error type. */
static void pattern_vars_err(Inf *I, Pattern *p) { pattern_each_var(p, var_err, I); }

static void check_pattern(Inf *I, Pattern *p, Type *t) {
  TyCx *cx = &I->cx;
  if (stack_exhausted()) {
    pattern_vars_err(I, p);
    return;
  }
  switch (p->kind) {
  case PAT_WILDCARD:
    return;
  case PAT_VAR: {
    Var *v = p->var;
    if (v->annot) {
      Type *vt = var_type(I, v);
      if (!ty_unify(cx, vt, t))
        diag_error(cx->d, p->span, "%%%s is annotated %s but matches a value of type %s", var_name(v),
                   tstr(I, vt), tstr(I, t));
    } else if (!v->type) {
      v->type = t;
      vec_push(I->vars, v);
    }
    return;
  }
  case PAT_CTOR: {
    Ctor *c = p->ctor.ctor;
    if (!c) {
      pattern_vars_err(I, p);
      return;
    }
    TypeDef *td = c->owner;
    Type **with = arena_alloc(cx->a, (td->ntparams ? td->ntparams : 1) * sizeof *with);
    for (uint32_t i = 0; i < td->ntparams; i++) with[i] = ty_fresh(cx);
    Type *adt = type_new(cx->m, TYPE_ADT, p->span);
    adt->adt.def = td;
    adt->adt.args = with;
    adt->adt.nargs = td->ntparams;
    if (!ty_unify(cx, t, adt)) {
      diag_error(cx->d, p->span, "constructor pattern %s matches values of type %s, but the value has type %s",
                 c->name, tstr(I, adt), tstr(I, t));
      pattern_vars_err(I, p);
      return;
    }
    if (p->ctor.nargs != c->nfields) {
      diag_error(cx->d, p->span, "constructor %s has %u field%s but the pattern gives %u", c->name,
                 c->nfields, c->nfields == 1 ? "" : "s", p->ctor.nargs);
      pattern_vars_err(I, p);
      return;
    }
    for (uint32_t i = 0; i < c->nfields; i++)
      check_pattern(I, p->ctor.args[i], ty_subst(cx, c->fields[i], td->tparams, with, td->ntparams));
    return;
  }
  case PAT_TUPLE: {
    Type *r = ty_find(t);
    uint32_t n = p->tuple.n;
    if (r->kind == TYPE_UVAR) {
      Type **fs = arena_alloc(cx->a, (n ? n : 1) * sizeof *fs);
      for (uint32_t i = 0; i < n; i++) fs[i] = ty_fresh(cx);
      r = ty_tuple(cx, fs, n);
      ty_unify(cx, t, r);
    }
    if (r == cx->err) {
      pattern_vars_err(I, p);
      return;
    }
    if (r->kind != TYPE_TUPLE || r->tuple.n != n) {
      diag_error(cx->d, p->span, "a tuple pattern with %u field%s cannot match a value of type %s", n,
                 n == 1 ? "" : "s", tstr(I, r));
      pattern_vars_err(I, p);
      return;
    }
    for (uint32_t i = 0; i < n; i++) check_pattern(I, p->tuple.fields[i], r->tuple.fields[i]);
    return;
  }
  }
}

static Type *infer_match(Inf *I, Expr *e) {
  TyCx *cx = &I->cx;
  Type *st = infer(I, e->match.scrut);
  Type *res = ty_fresh(cx);
  int before = cx->d->nerrors;
  bool bad = false;
  for (uint32_t i = 0; i < e->match.nclauses; i++) {
    Clause *cl = &e->match.clauses[i];
    check_pattern(I, cl->pattern, st);
    solver_drain(cx);
    Type *bt = infer(I, cl->body);
    if (!ty_unify_here(cx, res, bt)) {
      bad = true;
      diag_error(cx->d, tail_of(cl->body)->span, "this match clause has type %s but %s type %s", tstr(I, bt),
                 i == 1 ? "the first clause has" : "the clauses before it have", tstr(I, res));
      ty_note_occurs(cx, tail_of(cl->body)->span);
    }
  }
  if (cx->d->nerrors == before) exhaust_check(cx, e);
  return bad ? cx->err : res;
}

/* -------------------------------------------------------------- the walker */

static Type *infer_let_chain(Inf *I, Expr *e) {
  TyCx *cx = &I->cx;
  VEC(Expr *) chain = {0};
  while (e->kind == EXPR_LET && !e->type) {
    vec_push(chain, e);
    Var *v = e->let.var;
    Expr *val = e->let.value;
    Type *vt;
    if (val->kind == EXPR_FN && !val->type) {
      vt = infer_fn(I, val, v);
      vec_push(I->exprs, val);
    } else {
      /* an unannotated variable its value does not name (only a function
       * may) takes the value's type as it is, no uvar unified with it */
      bool bare = !v->annot && !v->type;
      Type *want = bare ? NULL : var_type(I, v);
      vt = infer(I, val);
      if (bare && !v->type) {
        v->type = vt;
        vec_push(I->vars, v);
      } else if (!ty_unify(cx, want ? want : (want = v->type), vt)) {
        if (v->annot)
          diag_error(cx->d, val->span, "%%%s is annotated %s but its value has type %s", var_name(v),
                     tstr(I, want), tstr(I, vt));
        else
          diag_error(cx->d, val->span, "the value of %%%s has type %s but %s is expected", var_name(v),
                     tstr(I, vt), tstr(I, want));
      }
    }
    solver_drain(cx);
    e = e->let.body;
  }
  Type *t = infer(I, e);
  for (size_t i = 0; i < chain.len; i++) {
    chain.data[i]->type = t;
    vec_push(I->exprs, chain.data[i]);
  }
  vec_free(chain);
  return t;
}

/* Of two unified types, the one to use as the result: when both are function
 * types, the one with fewer type parameters (TVM's unifier returns the
 * less polymorphic side, so `if (c) { fn [a](%x: a) { %x } } else { fn (%z) { %z } }`
 * has the monomorphic type of the else-branch). */
static Type *less_generic(Type *a, Type *b) {
  Type *fa = ty_find(a), *fb = ty_find(b);
  if (fa->kind == TYPE_FUNC && fb->kind == TYPE_FUNC && fb->func.ntparams < fa->func.ntparams) return b;
  return a;
}

static Type *infer_if(Inf *I, Expr *e) {
  TyCx *cx = &I->cx;
  Type *ct = infer(I, e->if_.cond);
  Type *b = ty_tensor_scalar(cx, DT_BOOL_T);
  if (!ty_unify(cx, ct, b))
    diag_error(cx->d, e->if_.cond->span, "the condition of if must be bool (Tensor[(), bool]), found %s",
               tstr(I, ct));
  Type *tt = infer(I, e->if_.then_);
  Type *et = infer(I, e->if_.else_);
  if (!ty_unify_here(cx, tt, et)) {
    diag_error(cx->d, tail_of(e->if_.else_)->span,
               "the branches of if have different types: then-branch %s, else-branch %s", tstr(I, tt),
               tstr(I, et));
    ty_note_occurs(cx, tail_of(e->if_.else_)->span);
    return cx->err;
  }
  return less_generic(tt, et);
}

static Type *infer_kind(Inf *I, Expr *e) {
  TyCx *cx = &I->cx;
  switch (e->kind) {
  case EXPR_CONST:
    return const_type(I, e->constant);
  case EXPR_VAR: {
    Var *v = e->var.var;
    if (!v) {
      diag_error(cx->d, e->span, "unbound variable %%%s", e->var.name);
      return cx->err;
    }
    return var_type(I, v);
  }
  case EXPR_GLOBAL: {
    GlobalDef *g = e->global.def;
    if (!g || !g->fn || !g->fn->type) {
      diag_error(cx->d, e->span, "undefined global @%s", e->global.name);
      return cx->err;
    }
    return g->fn->type;
  }
  case EXPR_OP:
    return infer_op_value(I, e);
  case EXPR_CTOR:
    return ty_instantiate(cx, ctor_type(I, e->ctor.ctor));
  case EXPR_CALL:
    return infer_call(I, e);
  case EXPR_TUPLE: {
    uint32_t n = e->tuple.n;
    Type **fs = arena_alloc(cx->a, (n ? n : 1) * sizeof *fs);
    for (uint32_t i = 0; i < n; i++) fs[i] = infer(I, e->tuple.fields[i]);
    return ty_tuple(cx, fs, n);
  }
  case EXPR_PROJ: {
    Type *tt = infer(I, e->proj.tuple);
    Type *out = ty_fresh(cx);
    solver_add_proj(cx, tt, e->proj.index, out, e->span);
    return out;
  }
  case EXPR_FN:
    return infer_fn(I, e, NULL);
  case EXPR_LET:
    return infer_let_chain(I, e);
  case EXPR_IF:
    return infer_if(I, e);
  case EXPR_MATCH:
    return infer_match(I, e);
  case EXPR_REF_NEW: {
    Type *r = type_new(cx->m, TYPE_REF, (Span){0, 0});
    r->ref.inner = infer(I, e->ref.arg);
    return r;
  }
  case EXPR_REF_READ: {
    Type *rt = infer(I, e->ref.arg);
    Type *inner = ty_fresh(cx);
    Type *want = type_new(cx->m, TYPE_REF, (Span){0, 0});
    want->ref.inner = inner;
    if (!ty_unify(cx, rt, want)) {
      diag_error(cx->d, e->ref.arg->span, "ref_read expects a reference, found %s", tstr(I, rt));
      return cx->err;
    }
    return inner;
  }
  case EXPR_REF_WRITE: {
    Type *rt = infer(I, e->ref_write.ref);
    Type *vt = infer(I, e->ref_write.value);
    Type *want = type_new(cx->m, TYPE_REF, (Span){0, 0});
    want->ref.inner = ty_fresh(cx);
    if (!ty_unify(cx, rt, want))
      diag_error(cx->d, e->ref_write.ref->span, "ref_write expects a reference, found %s", tstr(I, rt));
    else if (!ty_unify_here(cx, want->ref.inner, vt)) {
      diag_error(cx->d, e->ref_write.value->span, "ref_write stores %s into a reference of type %s",
                 tstr(I, vt), tstr(I, rt));
      ty_note_occurs(cx, e->ref_write.value->span);
    }
    return ty_tuple(cx, NULL, 0);
  }
  default:
    diag_error(cx->d, e->span, "internal: unresolved %s reached type inference", expr_kind_name(e->kind));
    return cx->err;
  }
}

static Type *infer(Inf *I, Expr *e) {
  if (e->type && !(typed_per_use(e) && e->type != I->cx.err)) return e->type;
  if (stack_exhausted()) {
    if (!I->deep_reported) diag_error(I->cx.d, e->span, "expression nested too deeply");
    I->deep_reported = true;
    e->type = I->cx.err;
    return e->type;
  }
  Type *t = infer_kind(I, e);
  if (!e->type) vec_push(I->exprs, e);
  e->type = t;
  return t;
}

/* ------------------------------------------------------------------ driver */

/* Type objects zonk_all found final, by address: most nodes share a few
 * (a tensor type, the call memo's callee types). */
#define ZONK_SEEN 64u

/* ty_zonk(t, final): a tensor type is final as it is (its extents hold no
 * uvar), and so is an object zonked before that came back unchanged (its
 * uvars resolved in place; nothing unifies during zonk_all). */
static Type *zonk_once(TyCx *cx, const Type **seen, Type *t) {
  if (!t || t->kind == TYPE_TENSOR) return t;
  const Type **s = &seen[((uintptr_t)t >> 4) % ZONK_SEEN];
  if (*s == t) return t;
  Type *r = ty_zonk(cx, t, true);
  if (r == t) *s = t;
  return r;
}

static void zonk_all(Inf *I) {
  TyCx *cx = &I->cx;
  const Type *seen[ZONK_SEEN] = {0};
  for (size_t i = 0; i < I->exprs.len; i++) {
    Expr *e = I->exprs.data[i];
    e->type = zonk_once(cx, seen, e->type);
  }
  for (size_t i = 0; i < I->vars.len; i++) {
    Var *v = I->vars.data[i];
    v->type = zonk_once(cx, seen, v->type);
  }
  for (size_t i = 0; i < I->fns.len; i++) {
    Function *f = I->fns.data[i];
    f->type = zonk_once(cx, seen, f->type);
  }
}

static bool finish(Inf *I, int before) {
  solver_report_unsolved(&I->cx);
  zonk_all(I);
  bool ok = I->cx.d->nerrors == before;
  ty_fini(&I->cx);
  call_memo_free(&I->calls);
  vec_free(I->exprs);
  vec_free(I->vars);
  vec_free(I->fns);
  return ok;
}

/* Sets up an empty inference over `m`; returns the error count so far, which
 * finish compares against. */
static int start(Inf *I, Module *m, Diag *d) {
  memset(I, 0, sizeof *I);
  ty_init(&I->cx, m, d);
  return d->nerrors;
}

/* The globals with a body (of them, only those `only` marks by index, when
 * given): every signature first, then the bodies in textual order. */
static void infer_globals(Inf *I, Module *m, const bool *only) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn && (!only || only[i])) fn_signature(I, m->defs[i]->fn);
  for (uint32_t i = 0; i < m->ndefs; i++) {
    GlobalDef *g = m->defs[i];
    if (!g->fn || (only && !only[i])) continue;
    char what[300];
    snprintf(what, sizeof what, "@%s", g->name);
    fn_body(I, g->fn, what);
  }
}

bool infer_module(Module *m, Diag *d) {
  Inf I;
  int before = start(&I, m, d);
  kind_check_typedefs(&I.cx);
  infer_globals(&I, m, NULL);
  if (m->expr) infer(&I, m->expr);
  return finish(&I, before);
}

/* ------------------------------------------------------------ clearing */

static bool has_unknown_dim(const Type *t, void *ctx) {
  if (t->kind != TYPE_TENSOR) return false;
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    if (t->tensor.dims[i].kind != DIM_INT) return true;
  return false;
}

bool type_has_unknown_extent(const Type *t) {
  return type_any(t, has_unknown_dim, NULL, TYPE_ANY_SOLVED | TYPE_ANY_MISSING);
}

static void clear_var(Var *v, void *ud) {
  (void)ud;
  v->type = NULL;
}

static void clear_function(Function *f) {
  f->type = NULL;
  for (uint32_t i = 0; i < f->nparams; i++) f->params[i]->type = NULL;
}

static void clear_node(Expr *e, void *ud) {
  (void)ud;
  e->type = NULL;
  switch (e->kind) {
  case EXPR_VAR: e->var.var->type = NULL; break;
  case EXPR_LET: e->let.var->type = NULL; break;
  case EXPR_FN: clear_function(e->fn); break;
  case EXPR_MATCH:
    for (uint32_t i = 0; i < e->match.nclauses; i++) pattern_each_var(e->match.clauses[i].pattern, clear_var, NULL);
    break;
  default: break;
  }
}

void infer_clear_tree(Expr *root) { walk_post_order(root, true, clear_node, NULL); }

void infer_clear(Module *m) {
  for (uint32_t i = 0; i < m->ndefs; i++) {
    Function *f = m->defs[i]->fn;
    if (!f) continue;
    clear_function(f);
    infer_clear_tree(f->body);
  }
  if (m->expr) infer_clear_tree(m->expr);
}

bool infer_untyped(Module *m, Expr *e, Diag *d) {
  Inf I;
  int before = start(&I, m, d);
  infer(&I, e);
  return finish(&I, before);
}

bool infer_expression(Module *m, Diag *d) {
  Inf I;
  int before = start(&I, m, d);
  kind_check_typedefs(&I.cx);
  if (m->expr) infer(&I, m->expr);
  return finish(&I, before);
}

/* ------------------------------------------------- incremental re-typing
 *
 * After a pass, most of a module is what it was: globals the pass did not
 * touch, and inside the others the nodes it kept (shared with its input).
 * infer_module_incremental re-infers only the rest. A node keeps its type
 * (becomes a typed leaf for infer(), which stops at e->type != NULL) only
 * when that type is a function of the node's own subtree, so a full
 * inference would give it again:
 *   - its type is ground (no uvar, no `_`, no type parameter);
 *   - every child keeps its type (a child a pass replaced in place by a new,
 *     untyped node makes the parent new too);
 *   - a variable use: the variable is "stable" (below) and the use has its type;
 *   - a global: monomorphic, with the type its definition has now;
 *   - a call of a polymorphic global or constructor: every type parameter
 *     occurs in a parameter type (else the result came from the context,
 *     as for Nil); a constructor or operator used as a value never keeps it;
 *   - a function literal: a ground type and its return annotation intact.
 * A variable is stable when its type cannot have changed: a parameter
 * annotated with a ground type it still has; a let variable annotated that
 * way, or unannotated with a kept value of its type; a pattern variable
 * whose match keeps its scrutinee. Unstable variables are cleared (their
 * binder gives them a type again) and every use of them is re-inferred.
 * The judgement is one walk (binders before uses: a let's value, then its
 * variable, then its body; recursive while shallow, an explicit stack
 * below JUDGE_REC_DEPTH) that touches each node once, memoised
 * in Expr.mark (tagged per run, not put back: see judge_memo below; only
 * for the runner, between passes). Nodes that fail it are cleared; infer() then
 * types them with the kept ones as leaves. Types a pass assigned to nodes it
 * built are taken as kept too: RELAYC_VERIFY_RETYPE (infer_verify_module)
 * re-infers everything and compares, for the sweeps and the fuzzer.
 */

/* No uvar, `_` or unresolved name; type parameters only when tvars_ok. */
static bool ground(const Type *t, bool tvars_ok) { return type_ground(t, tvars_ok); }

static bool same_type(const Type *a, const Type *b) { return a == b || (a && b && type_equal(a, b)); }

static bool is_that_param(const Type *t, void *p) { return t->kind == TYPE_VAR && t->var.param == p; }

static bool mentions_param(const Type *t, const TypeParam *p) {
  return type_any(t, is_that_param, (void *)p, TYPE_ANY_MISSING);
}

/* Every type parameter occurs in some argument type: a call's result is then
 * fixed by its arguments. */
static bool params_determined(TypeParam *const *ps, uint32_t np, Type *const *args, uint32_t nargs) {
  for (uint32_t i = 0; i < np; i++) {
    bool found = false;
    for (uint32_t j = 0; j < nargs && !found; j++) found = mentions_param(args[j], ps[i]);
    if (!found) return false;
  }
  return true;
}

/* The memo lives in Expr.mark: a node the walk has entered holds this run's
 * tag, whose low bit is the verdict (1 keep, 0 re-infer; a node on the stack
 * holds 1 until it is finished: in a DAG nothing meets it again before).
 * Tags come from ir/walk.h walk_new_tag: stale marks for every other user,
 * and a new run's tag makes the last run's stale too: nothing is reset or put back
 * afterwards (the walk touches each node once and needs no memory of its
 * own per node). The runner calls infer_module_incremental between passes,
 * where no mark-keyed table is alive. */
enum { J_REDO = 0, J_KEEP = 1 };

/* ground(t, false) of the types seen last, by address: a pass's output has
 * millions of nodes of a few shared types */
#define GROUND_CACHE 256u

/* A node whose children are being judged. */
/* A let whose body needs a frame hands its own frame to the body (a
 * 1M-binding chain needs no 1M frames): the frame then judges the body of a
 * chain of `lets` lets from first_let (each the body of the one before),
 * which wait for its verdict. A let keeps its type when its value, variable
 * and type do ("its own verdict") and its body keeps: the outer redo_lets of
 * the chain (up to the innermost whose own verdict failed) are re-inferred
 * whatever the body's verdict, the others keep iff the body keeps. */
typedef struct JFrame {
  Expr *e;
  Expr *first_let;
  uint32_t i;         /* next child step */
  uint32_t lets;      /* waiting lets, from first_let */
  uint32_t redo_lets; /* the outer ones to re-infer in any case */
  bool ok;            /* every child judged so far keeps its type */
} JFrame;

typedef struct Judge {
  uint32_t tag; /* this run's marks: tag | verdict */
  uint32_t callee_tag; /* the mark of a callee counted (judge_count_callee) */
  uint64_t callees;    /* callees counted, less those entered afterwards */
  const Type *ground_seen[GROUND_CACHE]; /* types known ground, by address */
  VEC(JFrame) stack;
  uintptr_t *vdecided; /* by Var.id: the variable decided (ids may repeat after copies) | 1 if stable */
  uint32_t nv;
  InferIncStats *st;
  VEC(Var *) undecided; /* variables used before any binder of theirs was met */
  VEC(GlobalDef *) kept_refs; /* the globals whose type a kept node holds (a use, or a call) */
} Judge;

/* ground(t, false), remembered for the last type seen at each cache slot. */
static bool judge_ground(Judge *J, const Type *t) {
  if (!t) return false;
  if (t->kind == TYPE_TENSOR) return true;
  const Type **c = &J->ground_seen[((uintptr_t)t >> 4) % GROUND_CACHE];
  if (*c == t) return true;
  if (!ground(t, false)) return false;
  *c = t;
  return true;
}

static void var_decide(Judge *J, Var *v, bool stable) {
  if (v->id < J->nv) J->vdecided[v->id] = (uintptr_t)v | (stable ? 1u : 0u);
  if (!stable) v->type = NULL;
}

static bool var_is_decided(const Judge *J, const Var *v) {
  return v->id < J->nv && (J->vdecided[v->id] & ~(uintptr_t)1) == (uintptr_t)v;
}

static bool var_is_stable(const Judge *J, const Var *v) {
  return v->id < J->nv && J->vdecided[v->id] == ((uintptr_t)v | 1u);
}

/* A parameter (or annotated binder) keeps its type iff it is its ground annotation. */
static void decide_annotated(Judge *J, Var *v) {
  var_decide(J, v, v->annot && ground(v->annot, true) && v->type && same_type(v->type, v->annot));
}

/* A pattern variable keeps its type iff the match keeps its own and the type
 * is ground and equal to its annotation, if any. */
typedef struct DecideVars {
  Judge *J;
  bool keep;
} DecideVars;

static void decide_var(Var *v, void *ud) {
  const DecideVars *dv = ud;
  bool ok = dv->keep && v->type && ground(v->type, false);
  if (ok && v->annot) ok = ground(v->annot, true) && same_type(v->type, v->annot);
  var_decide(dv->J, v, ok);
}

static void decide_pattern(Judge *J, Pattern *p, bool keep) { pattern_each_var(p, decide_var, &(DecideVars){J, keep}); }

/* (the walk below runs them once per node of a module: inlined) */
#define JUDGE_INL static inline __attribute__((always_inline))

/* The checks of a node itself, its children judged (ok = all of them keep). */
static inline __attribute__((always_inline)) bool judge_self(Judge *J, Expr *e, bool ok) {
  if (!ok || !judge_ground(J, e->type)) return false;
  switch (e->kind) {
  case EXPR_CONST:
    return true;
  case EXPR_VAR:
    return e->var.var && var_is_stable(J, e->var.var) && same_type(e->type, e->var.var->type);
  case EXPR_GLOBAL: {
    GlobalDef *g = e->global.def;
    return g && g->fn && g->fn->type && g->fn->ntparams == 0 && same_type(e->type, g->fn->type);
  }
  case EXPR_CTOR:
    return e->ctor.ctor && e->ctor.ctor->owner->ntparams == 0;
  case EXPR_CALL: {
    Expr *f = e->call.fn;
    /* a global or constructor callee records the call's instance: not when
     * a pass put a node typed elsewhere there (a polymorphic @g used as a
     * value, `let %f = @g; %f(x)` with %f replaced by that @g) */
    if ((f->kind == EXPR_GLOBAL || f->kind == EXPR_CTOR) && !judge_ground(J, f->type)) return false;
    if (f->kind == EXPR_GLOBAL) {
      GlobalDef *g = f->global.def;
      if (!g || !g->fn || !g->fn->type || g->fn->type->kind != TYPE_FUNC) return false;
      const Type *ft = g->fn->type;
      return params_determined(ft->func.tparams, ft->func.ntparams, ft->func.args, ft->func.nargs);
    }
    if (f->kind == EXPR_CTOR) {
      Ctor *c = f->ctor.ctor;
      return c && params_determined(c->owner->tparams, c->owner->ntparams, c->fields, c->nfields);
    }
    return true;
  }
  case EXPR_FN: {
    Function *fn = e->fn;
    if (!fn->type || fn->type->kind != TYPE_FUNC || !judge_ground(J, fn->type)) return false;
    if (!fn->ret_annot) return true;
    /* (judge_ground(t) implies ground(t, true)) */
    if (!judge_ground(J, fn->ret_annot) && !ground(fn->ret_annot, true)) return true;
    return same_type(fn->ret_annot, fn->type->func.ret);
  }
  case EXPR_TUPLE:
  case EXPR_PROJ:
  case EXPR_LET:
  case EXPR_IF:
  case EXPR_MATCH:
  case EXPR_REF_NEW:
  case EXPR_REF_READ:
  case EXPR_REF_WRITE:
    return true;
  default:
    return false; /* operators as values, pre-resolve forms */
  }
}

/* A let's variable, decided once its value is judged (ok: the value keeps
 * its type); returns whether the let itself can still keep. */
JUDGE_INL bool judge_let_var(Judge *J, Expr *e, bool ok) {
  Var *v = e->let.var;
  Expr *val = e->let.value;
  if (v->annot && ground(v->annot, true)) {
    decide_annotated(J, v);
    return ok && var_is_stable(J, v);
  }
  bool stable = ok && e->type && v->type && val->type && judge_ground(J, v->type) && same_type(v->type, val->type);
  var_decide(J, v, stable);
  return stable && var_is_stable(J, v); /* (false when its id is past the table's) */
}

/* The next child of the top frame to judge, or NULL when all are done;
 * decides binders on the way. */
static Expr *judge_next(Judge *J, JFrame *f) {
  Expr *e = f->e;
  uint32_t i = f->i++;
  switch (e->kind) {
  case EXPR_CALL: {
    if (i == 0) {
      ExprKind k = e->call.fn->kind;
      /* operator, global and constructor callees are typed per call: the call decides */
      if (k != EXPR_OP && k != EXPR_GLOBAL && k != EXPR_CTOR) return e->call.fn;
      i = f->i++;
    }
    return i - 1 < e->call.nargs ? e->call.args[i - 1] : NULL;
  }
  case EXPR_TUPLE: return i < e->tuple.n ? e->tuple.fields[i] : NULL;
  case EXPR_PROJ: return i == 0 ? e->proj.tuple : NULL;
  case EXPR_FN:
    if (i == 0) {
      for (uint32_t k = 0; k < e->fn->nparams; k++) {
        decide_annotated(J, e->fn->params[k]);
        if (!var_is_stable(J, e->fn->params[k])) f->ok = false;
      }
      return e->fn->body;
    }
    return NULL;
  case EXPR_LET:
    if (i == 0) return e->let.value;
    if (i == 1) {
      f->ok = judge_let_var(J, e, f->ok);
      return e->let.body;
    }
    return NULL;
  case EXPR_IF:
    return i == 0 ? e->if_.cond : i == 1 ? e->if_.then_ : i == 2 ? e->if_.else_ : NULL;
  case EXPR_MATCH:
    if (i == 0) return e->match.scrut;
    if (i == 1)
      for (uint32_t k = 0; k < e->match.nclauses; k++) decide_pattern(J, e->match.clauses[k].pattern, f->ok && e->type);
    return i - 1 < e->match.nclauses ? e->match.clauses[i - 1].body : NULL;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: return i == 0 ? e->ref.arg : NULL;
  case EXPR_REF_WRITE: return i == 0 ? e->ref_write.ref : i == 1 ? e->ref_write.value : NULL;
  default: return NULL;
  }
}


/* The rare steps, out of line so that the inlined part stays short. */
static __attribute__((noinline)) void judge_undecided(Judge *J, Var *v) { vec_push(J->undecided, v); }
static __attribute__((noinline)) void judge_grow_stack(Judge *J) {
  J->stack.cap = J->stack.cap ? 2 * J->stack.cap : 256;
  J->stack.data = mem_realloc(J->stack.data, J->stack.cap * sizeof *J->stack.data);
}

/* Starts loading what judging e will read soon: a pass's output is far
 * larger than the caches. In a let chain, the next let's value and
 * variable and the let after it (the next let itself was asked for one let
 * before: it arrives while this one's value is judged). */
JUDGE_INL void judge_prefetch(const Expr *e) {
  switch (e->kind) {
  case EXPR_LET: {
    const Expr *next = e->let.body;
    __builtin_prefetch(e->let.value);
    if (next->kind == EXPR_LET) {
      __builtin_prefetch(next->let.body);
      __builtin_prefetch(next->let.value);
      __builtin_prefetch(next->let.var);
    }
    break;
  }
  case EXPR_CALL: __builtin_prefetch(e->call.args); break;
  default: break;
  }
}

/* Marks e entered, its verdict `keep` (for a node with children: until it
 * is finished). */
JUDGE_INL void judge_enter(Judge *J, Expr *e, bool keep) {
  if (e->mark == J->callee_tag) J->callees--; /* counted once, as the node it is */
  e->mark = J->tag | (keep ? J_KEEP : J_REDO);
  if (e->kind == EXPR_VAR && e->var.var) {
    Var *v = e->var.var; /* binders come before uses, except a recursive let's own value */
    if (!var_is_decided(J, v)) judge_undecided(J, v);
  }
}

/* A frame for e, entered; the stack grows out of line (rarely). */
JUDGE_INL void judge_push(Judge *J, Expr *e) {
  judge_prefetch(e);
  judge_enter(J, e, true);
  if (J->stack.len == J->stack.cap) judge_grow_stack(J);
  J->stack.data[J->stack.len++] = (JFrame){.e = e, .ok = true};
}

/* A callee typed per call (an operator, global or constructor: not
 * entered, judge_next), counted once for InferIncStats.nodes_counted: its
 * mark becomes callee_tag unless it was entered (then it counts as that). */
static __attribute__((noinline)) void judge_count_callee(Judge *J, Expr *f) {
  uint32_t m = f->mark;
  if (m == J->callee_tag || (m & ~(uint32_t)1) == J->tag) return;
  f->mark = J->callee_tag;
  J->callees++;
}

/* What a verdict on e does: a node to re-infer loses its type. */
JUDGE_INL bool judge_apply(Judge *J, Expr *e, bool ok) {
  if (e->kind == EXPR_CALL && e->call.fn->mark != J->callee_tag) {
    ExprKind k = e->call.fn->kind;
    if (k == EXPR_OP || k == EXPR_GLOBAL || k == EXPR_CTOR) judge_count_callee(J, e->call.fn);
  }
  if (ok) {
    J->st->nodes_kept++;
    if (e->kind == EXPR_GLOBAL) vec_push(J->kept_refs, e->global.def);
    else if (e->kind == EXPR_CALL && e->call.fn->kind == EXPR_GLOBAL) vec_push(J->kept_refs, e->call.fn->global.def);
  } else {
    J->st->nodes_retyped++;
    e->type = NULL;
    if (e->kind == EXPR_FN) e->fn->type = NULL;
    /* a global or constructor callee is not judged: the call types it
     * again (infer_call keeps a callee's recorded type otherwise) */
    if (e->kind == EXPR_CALL && (e->call.fn->kind == EXPR_GLOBAL || e->call.fn->kind == EXPR_CTOR))
      e->call.fn->type = NULL;
  }
  return ok;
}

/* Records the verdict on a node with children (entered as kept), and applies it. */
JUDGE_INL bool judge_finish(Judge *J, Expr *e, bool ok) {
  if (!ok) e->mark = J->tag | J_REDO;
  return judge_apply(J, e, ok);
}

/* Nodes with no child to judge: judged on the spot, without a frame. */
static bool judge_leaf(const Expr *e) {
  return e->kind == EXPR_VAR || e->kind == EXPR_CONST || e->kind == EXPR_GLOBAL || e->kind == EXPR_OP ||
         e->kind == EXPR_CTOR;
}

/* -1: not entered in this run; else J_KEEP or J_REDO. */
JUDGE_INL int judge_memo(const Judge *J, const Expr *e) {
  uint32_t m = e->mark;
  return (m & ~(uint32_t)1) == J->tag ? (int)(m & 1) : -1;
}

/* A let's body needs a frame: the let's frame becomes the body's, the let
 * waits (JFrame). */
JUDGE_INL void judge_let_to_body(Judge *J, JFrame *f, Expr *body) {
  if (!f->lets) f->first_let = f->e;
  f->lets++;
  if (!judge_self(J, f->e, f->ok)) f->redo_lets = f->lets;
  judge_prefetch(body);
  judge_enter(J, body, true);
  f->e = body;
  f->i = 0;
  f->ok = true;
}

/* The verdicts on the frame's waiting lets, given their body's (body_ok);
 * returns the outermost's. Kept lets are not touched again. */
static bool judge_lets(Judge *J, const JFrame *f, bool body_ok) {
  uint32_t redo = body_ok ? f->redo_lets : f->lets;
  Expr *e = f->first_let;
  for (uint32_t k = 0; k < redo; k++, e = e->let.body) judge_finish(J, e, false);
  J->st->nodes_kept += f->lets - redo;
  return redo == 0;
}

/* Judges every node under root; clears the types of those to re-infer.
 * True if root keeps its type. */
static bool judge_tree(Judge *J, Expr *root) {
  int r = judge_memo(J, root);
  if (r >= 0) return r == J_KEEP;
  judge_push(J, root);
  bool last = false;
  while (J->stack.len) {
    JFrame *f = &J->stack.data[J->stack.len - 1];
    Expr *c;
    bool pushed = false;
    while (!pushed && (c = judge_next(J, f))) { /* the frame's children up to one that needs a frame */
      int m = judge_memo(J, c);
      if (m < 0 && judge_leaf(c)) { /* judged as it is entered */
        bool ok = judge_self(J, c, true);
        judge_enter(J, c, ok);
        if (!judge_apply(J, c, ok)) f->ok = false;
      } else if (m < 0 && f->e->kind == EXPR_LET && c == f->e->let.body && f->i == 2) {
        judge_let_to_body(J, f, c);
      } else if (m < 0) {
        judge_push(J, c); /* (f may move) */
        pushed = true;
      } else if (m != J_KEEP) {
        f->ok = false;
      }
    }
    if (pushed) continue;
    bool ok = judge_finish(J, f->e, judge_self(J, f->e, f->ok));
    if (f->lets) ok = judge_lets(J, f, ok);
    J->stack.len--;
    if (J->stack.len) {
      if (!ok) J->stack.data[J->stack.len - 1].ok = false;
    } else {
      last = ok;
    }
  }
  return last;
}

/* The same judgement by recursion, for the common shallow case: a node's
 * children are reached by C calls (no frame records, no per-step dispatch
 * on the parent's kind), a let chain is a loop, and below JUDGE_REC_DEPTH
 * nested non-let nodes the rest of a subtree goes to the frame machine
 * above (judge_tree), so deep nesting costs no C stack. Each node gets the
 * verdict, mark and count judge_tree would give it, binders decided in the
 * same order (a let's value, its variable, its body; a function's
 * parameters before its body; a match's scrutinee, its patterns, its
 * clauses). The re-typing after Gradient on the 100k graph chain (4.08M
 * nodes, all kept): 521 M -> 329 M instructions (callgrind,
 * --toggle-collect=infer_module_incremental). */
enum { JUDGE_REC_DEPTH = 200 };

static bool judge_rec(Judge *J, Expr *e, unsigned depth);

/* A variable use met for the first time: its verdict, recorded and counted
 * (judge_self, judge_enter and judge_apply for EXPR_VAR, in one). */
JUDGE_INL bool judge_var_use(Judge *J, Expr *e) {
  Var *v = e->var.var;
  if (v && judge_ground(J, e->type) && var_is_stable(J, v) && same_type(e->type, v->type)) {
    e->mark = J->tag | J_KEEP; /* (a stable variable is decided) */
    J->st->nodes_kept++;
    return true;
  }
  judge_enter(J, e, false);
  return judge_apply(J, e, false);
}

/* The verdict on a node with children that judge_self only asks to have a
 * ground type (tuple, projection, let, if, match, references), its
 * children's verdicts in ok; recorded and counted (judge_finish). */
JUDGE_INL bool judge_finish_plain(Judge *J, Expr *e, bool ok) {
  if (ok && judge_ground(J, e->type)) {
    J->st->nodes_kept++;
    return true;
  }
  e->mark = J->tag | J_REDO;
  J->st->nodes_retyped++;
  e->type = NULL;
  return false;
}

/* The verdict on c, a child of a node being judged at `depth`. */
JUDGE_INL bool judge_child(Judge *J, Expr *c, unsigned depth) {
  uint32_t m = c->mark;
  if ((m ^ J->tag) <= 1) return m & J_KEEP; /* met before in this run: its verdict */
  if (c->kind == EXPR_VAR) return judge_var_use(J, c);
  if (judge_leaf(c)) {
    bool ok = judge_self(J, c, true);
    judge_enter(J, c, ok);
    return judge_apply(J, c, ok);
  }
  if (depth >= JUDGE_REC_DEPTH) return judge_tree(J, c);
  return judge_rec(J, c, depth + 1);
}

/* A chain of lets from `first` (entered): each let's value and variable,
 * then the next let while the body is one not met yet; the lets wait for
 * the innermost body's verdict as in judge_let_to_body / judge_lets. */
static bool judge_let_chain(Judge *J, Expr *first, unsigned depth) {
  Expr *e = first;
  uint32_t lets = 0, redo = 0; /* lets waiting (outer ones), the outer `redo` to re-infer anyway */
  bool ok;
  for (;;) {
    ok = judge_let_var(J, e, judge_child(J, e->let.value, depth));
    Expr *body = e->let.body;
    if (body->kind != EXPR_LET || judge_memo(J, body) >= 0) {
      bool body_ok = judge_child(J, body, depth);
      ok = ok && body_ok;
      break;
    }
    lets++;
    if (!ok || !judge_ground(J, e->type)) redo = lets;
    judge_prefetch(body);
    body->mark = J->tag | J_KEEP; /* (entered: judge_enter for a let) */
    e = body;
  }
  bool inner = judge_finish_plain(J, e, ok);
  if (!lets) return inner;
  uint32_t n = inner ? redo : lets;
  Expr *x = first;
  for (uint32_t k = 0; k < n; k++, x = x->let.body) judge_finish(J, x, false);
  J->st->nodes_kept += lets - n;
  return n == 0;
}

/* A function literal (entered): its parameters, then its body. */
static __attribute__((noinline)) bool judge_fn(Judge *J, Expr *e, unsigned depth) {
  Function *fn = e->fn;
  bool ok = true;
  for (uint32_t k = 0; k < fn->nparams; k++) {
    decide_annotated(J, fn->params[k]);
    if (!var_is_stable(J, fn->params[k])) ok = false;
  }
  ok &= judge_child(J, fn->body, depth);
  return judge_finish(J, e, judge_self(J, e, ok));
}

/* A match (entered): its scrutinee, its patterns' variables, its clauses. */
static __attribute__((noinline)) bool judge_match(Judge *J, Expr *e, unsigned depth) {
  bool ok = judge_child(J, e->match.scrut, depth);
  for (uint32_t k = 0; k < e->match.nclauses; k++) decide_pattern(J, e->match.clauses[k].pattern, ok && e->type);
  for (uint32_t k = 0; k < e->match.nclauses; k++) ok &= judge_child(J, e->match.clauses[k].body, depth);
  return judge_finish_plain(J, e, ok);
}

/* Judges e (not met yet, not a leaf) and its subtree; true if e keeps its type. */
static bool judge_rec(Judge *J, Expr *e, unsigned depth) {
  judge_prefetch(e);
  e->mark = J->tag | J_KEEP; /* entered (judge_enter: not a leaf, so never a counted callee) */
  bool ok = true;
  switch (e->kind) {
  case EXPR_CALL: {
    ExprKind k = e->call.fn->kind;
    /* operator, global and constructor callees are typed per call: the call decides */
    if (k != EXPR_OP && k != EXPR_GLOBAL && k != EXPR_CTOR) ok = judge_child(J, e->call.fn, depth);
    for (uint32_t i = 0; i < e->call.nargs; i++) ok &= judge_child(J, e->call.args[i], depth);
    break;
  }
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) ok &= judge_child(J, e->tuple.fields[i], depth);
    return judge_finish_plain(J, e, ok);
  case EXPR_PROJ: return judge_finish_plain(J, e, judge_child(J, e->proj.tuple, depth));
  case EXPR_FN: return judge_fn(J, e, depth);
  case EXPR_LET: return judge_let_chain(J, e, depth);
  case EXPR_IF:
    ok = judge_child(J, e->if_.cond, depth);
    ok &= judge_child(J, e->if_.then_, depth);
    ok &= judge_child(J, e->if_.else_, depth);
    return judge_finish_plain(J, e, ok);
  case EXPR_MATCH: return judge_match(J, e, depth);
  case EXPR_REF_NEW:
  case EXPR_REF_READ: return judge_finish_plain(J, e, judge_child(J, e->ref.arg, depth));
  case EXPR_REF_WRITE:
    ok = judge_child(J, e->ref_write.ref, depth);
    ok &= judge_child(J, e->ref_write.value, depth);
    return judge_finish_plain(J, e, ok);
  default: break;
  }
  return judge_finish(J, e, judge_self(J, e, ok));
}

/* Judges every node under root; true if root keeps its type. */
static bool judge_root(Judge *J, Expr *root) { return judge_child(J, root, 0); }

static bool tensors_only(const Type *t) {
  if (stack_exhausted()) return false;
  if (t->kind == TYPE_TENSOR) return true;
  if (t->kind != TYPE_TUPLE) return false;
  for (uint32_t i = 0; i < t->tuple.n; i++)
    if (!tensors_only(t->tuple.fields[i])) return false;
  return true;
}

/* An untouched global can be skipped when its signature is fixed by its own
 * annotations: otherwise its callers may have decided it (`def @f(%x) {...}`
 * called at float32), and a changed caller may decide it differently. */
static bool signature_self_determined(const Function *fn) {
  if (!fn->type || fn->type->kind != TYPE_FUNC || !ground(fn->type, true)) return false;
  for (uint32_t i = 0; i < fn->nparams; i++) {
    const Var *v = fn->params[i];
    if (!v->annot || !ground(v->annot, true) || !v->type || !same_type(v->type, v->annot)) return false;
  }
  if (fn->ret_annot && ground(fn->ret_annot, true)) return same_type(fn->ret_annot, fn->type->func.ret);
  /* an unannotated result is fixed by the body unless a polymorphic value
   * (Nil, a type parameter only in a result) let the context choose it:
   * tensors (and tuples of them) never come from there */
  return tensors_only(fn->type->func.ret);
}

typedef struct GlobalRefScan {
  const bool *sig_changed; /* by def index */
  Module *m;
  bool found;
} GlobalRefScan;

static void scan_global_ref(Expr *e, void *ud) {
  GlobalRefScan *s = ud;
  if (e->kind != EXPR_GLOBAL || !e->global.def || s->found) return;
  for (uint32_t i = 0; i < s->m->ndefs; i++)
    if (s->sig_changed[i] && s->m->defs[i] == e->global.def) s->found = true;
}

InferIncResult infer_module_incremental(Module *m, const bool *changed, Type *const *old_sigs, Diag *d,
                                        InferIncStats *st) {
  InferIncStats dummy;
  if (!st) st = &dummy;
  memset(st, 0, sizeof *st);
  if (m->expr) {
    infer_clear(m);
    return infer_module(m, d) ? INFER_INC_OK : INFER_INC_ERROR;
  }
  uint32_t n = m->ndefs;
  bool *redo = mem_calloc(n + 1, sizeof *redo);
  for (uint32_t i = 0; i < n; i++) {
    Function *fn = m->defs[i]->fn;
    redo[i] = fn && (changed[i] || !signature_self_determined(fn));
  }
  /* judge the bodies to re-check */
  Judge J;
  memset(&J, 0, sizeof J);
  J.st = st;
  J.tag = walk_new_tag();
  J.callee_tag = walk_new_tag();
  J.nv = m->next_id;
  J.vdecided = mem_calloc(J.nv + 1, sizeof *J.vdecided);
  for (uint32_t i = 0; i < n; i++) {
    if (!m->defs[i]->fn) continue;
    if (!redo[i]) {
      st->globals_skipped++;
      continue;
    }
    st->globals_checked++;
    Function *fn = m->defs[i]->fn;
    for (uint32_t k = 0; k < fn->nparams; k++) decide_annotated(&J, fn->params[k]);
    judge_root(&J, fn->body);
    for (size_t k = 0; k < J.undecided.len && !st->unbound_suspect; k++) {
      Var *v = J.undecided.data[k];
      if (!var_is_decided(&J, v)) st->unbound_suspect = i + 1;
    }
    J.undecided.len = 0;
    st->counted_global = i + 1;
  }
  /* every node visited got one verdict, callees aside (judge_count_callee) */
  st->nodes_counted = st->nodes_kept + st->nodes_retyped + J.callees;
  if (st->globals_checked != 1) {
    st->counted_global = 0;
    st->nodes_counted = 0;
  }
  vec_free(J.stack);
  vec_free(J.undecided);
  GlobalDef **kept_refs = J.kept_refs.data;
  size_t nkept_refs = J.kept_refs.len;
  mem_free(J.vdecided);

  /* infer what was cleared, with the rest as given */
  Inf I;
  int before = start(&I, m, d);
  kind_check_typedefs(&I.cx);
  infer_globals(&I, m, redo);
  bool ok = finish(&I, before);
  InferIncResult res = ok ? INFER_INC_OK : INFER_INC_ERROR;
  if (ok) {
    /* a global whose signature changed invalidates the kept uses of it */
    bool *sig_changed = mem_calloc(n + 1, sizeof *sig_changed);
    bool any = false;
    for (uint32_t i = 0; i < n; i++) {
      if (!redo[i] || !old_sigs || !old_sigs[i]) continue;
      sig_changed[i] = !same_type(old_sigs[i], m->defs[i]->fn->type);
      any = any || sig_changed[i];
    }
    if (any) {
      /* in the globals re-checked, only a kept node can hold the old
       * signature (the rest was inferred against the new one); the globals
       * not visited are scanned */
      GlobalRefScan s = {sig_changed, m, false};
      PtrMap chg = {0};
      for (uint32_t i = 0; i < n; i++)
        if (sig_changed[i]) ptrmap_put(&chg, m->defs[i], 1);
      for (size_t k = 0; k < nkept_refs && !s.found; k++) s.found = ptrmap_find(&chg, kept_refs[k]) != NULL;
      ptrmap_free(&chg);
      for (uint32_t i = 0; i < n && !s.found; i++)
        if (m->defs[i]->fn && !redo[i]) walk_post_order(m->defs[i]->fn->body, true, scan_global_ref, &s);
      if (s.found) res = INFER_INC_NEED_FULL;
    }
    mem_free(sig_changed);
  }
  mem_free(kept_refs);
  mem_free(redo);
  return res;
}

/* ----------------------------------------------------- verification */

typedef struct Recorded {
  VEC(Expr *) exprs;
  VEC(Type *) types;
} Recorded;

static void record_node(Expr *e, void *ud) {
  Recorded *r = ud;
  if (e->kind == EXPR_OP) return; /* a shared operator callee holds the last call's type */
  vec_push(r->exprs, e);
  vec_push(r->types, e->type);
}

bool infer_verify_module(Module *m, Diag *d, const char *who) {
  Recorded r = {0};
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn) walk_post_order(m->defs[i]->fn->body, true, record_node, &r);
  if (m->expr) walk_post_order(m->expr, true, record_node, &r);
  infer_clear(m);
  int before = d->nerrors;
  bool ok = infer_module(m, d);
  if (!ok) {
    if (d->nerrors > before)
      diag_plain(d, DIAG_NOTE, "internal error: %s: the incremental re-typing accepted the module, the full one does not", who);
  }
  int diffs = 0;
  for (size_t i = 0; ok && i < r.exprs.len; i++) {
    Expr *e = r.exprs.data[i];
    Type *old = r.types.data[i];
    if (same_type(old, e->type)) continue;
    if (++diffs > 5) break;
    char *a = old ? type_to_string(m->arena, old) : "(none)";
    char *b = e->type ? type_to_string(m->arena, e->type) : "(none)";
    diag_error(d, e->span,
               "internal error: %s: stale type after incremental re-typing: this %s has type %s, full inference gives %s",
               who, expr_kind_name(e->kind), a, b);
  }
  vec_free(r.exprs);
  vec_free(r.types);
  return ok && diffs == 0;
}
