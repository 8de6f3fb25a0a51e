/* transform/lazy_gradient_init.c — LazyGradientInit (spec/gradient.md §2,
 * spec/passes.md §8.6, the GradCell library of §11.7).
 *
 * Code produced by reverse-mode AD builds many all-zero and all-one tensors
 * (gradient cells, seeds, `ones_like(x)·g`). This pass makes every tensor of a
 * function a `GradCell[T]` value — `Raw(t)`, or a thunk known to give all
 * ones (`One(f)`) or all zeros (`Zero(f)`) — so zeros/ones are built only
 * when something needs their elements, and `add`/`multiply` of two equally
 * typed cells go through `@AddGradCell`/`@MultiplyGradCell`, which skip the
 * arithmetic when one side is a Zero or a One.
 *
 * The rewrite, per global function (the globals present when the pass
 * starts; the library's own functions are left alone):
 *  - tensor types in annotations (binders, function results, nested in
 *    tuples, function types, refs and ADT arguments) → GradCell[T];
 *  - a constant c → Raw(c);
 *  - add/multiply(a, b) with structurally equal argument types →
 *    @AddGradCell(fn (%lhs: T, %rhs: T) -> T { add(%lhs, %rhs) }, a', b');
 *  - zeros/ones(...) → Zero/One(fn () -> T { zeros/ones(...) });
 *    zeros_like/ones_like(x) → Zero/One(fn () -> T { ..._like(@FromGradCell(x')) })
 *    (TVM builds One for zeros_like too, a bug: relayc uses Zero);
 *  - any other operator call → Raw(op(@FromGradCell(a1'), ..., attrs));
 *  - everything else structurally.
 * @main then becomes a wrapper with its original signature: tensor
 * parameters wrapped in Raw (tuples field by field through let-bound
 * projections), the rewritten literal called, the result unwrapped with
 * @FromGradCell — so its type never changes (what every TVM test checks).
 *
 * Deviations from TVM, all keeping values right where TVM's output does not
 * type-check: every global other than @main is rewritten in place with a
 * cell-typed signature instead of being wrapped (TVM wraps each function, so
 * a call of one global from another's rewritten body is ill-typed; in place,
 * calls between globals stay as written, tail calls included — Gradient's
 * `_grad` globals, which take refs, need this); a call of @main from
 * rewritten code unwraps its arguments and wraps its result; an `if`
 * condition is unwrapped; tuple-typed operator arguments (concatenate) are
 * unwrapped and tuple results (split) wrapped field by field; an operator used
 * as a value is eta-expanded into a function over cells; graph sharing is
 * kept (the Rewriter's memo) where TVM rejects it. What cannot be expressed —
 * @main taking or returning a list, a closure or a ref holding tensors, a
 * constructor whose field is a tensor type rather than a type parameter — is
 * reported, never left mistyped.
 *
 * The GradCell type and its three functions are added to the module (built
 * node by node, printed like TVM's std/gradient.rly) unless it already has
 * them, e.g. when the output of an earlier run is read back.
 */
#include <stdio.h>
#include <string.h>

#include "ir/build.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/print.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef struct Lazy {
  Module *m;
  Diag *d;
  TypeDef *cell;              /* GradCell */
  Ctor *raw, *one, *zero;     /* its constructors */
  GlobalDef *from, *add, *mul; /* @FromGradCell, @AddGradCell, @MultiplyGradCell */
  PtrMap callees;             /* EXPR_OP / EXPR_GLOBAL nodes in callee position */
  PtrMap tensor_adts;         /* TypeDef* -> 1 (a field holds a tensor) or 2 (not) */
  GlobalDef *entry;           /* @main: keeps its signature through a wrapper */
  bool failed;
} Lazy;

/* let-bound values in order, closed around a body at the end (TVM's LetList) */
typedef struct LetList {
  VEC(Var *) vars;
  VEC(Expr *) vals;
} LetList;

static const Type *rt(const Type *t) {
  while (t && t->kind == TYPE_UVAR && t->uvar.link) t = t->uvar.link;
  return t;
}

static Expr *ll_push(Lazy *L, LetList *ll, Expr *value, Span sp) {
  Var *v = build_fresh_var(L->m, "x", NULL, sp);
  vec_push(ll->vars, v);
  vec_push(ll->vals, value);
  return build_var(L->m, v, sp);
}

static Expr *ll_close(Lazy *L, LetList *ll, Expr *body, Span sp) {
  for (size_t i = ll->vars.len; i-- > 0;) body = build_let(L->m, ll->vars.data[i], ll->vals.data[i], body, sp);
  vec_free(ll->vars);
  vec_free(ll->vals);
  return body;
}

/* ------------------------------------------------------------------ types */

static bool adt_holds_tensor(Lazy *L, TypeDef *def);

/* Does a value of type t contain a tensor (through tuples, functions, refs,
 * ADT arguments, or an ADT's concretely typed fields)? */
static bool has_tensor(Lazy *L, const Type *t) {
  t = rt(t);
  if (!t || stack_exhausted()) return false;
  switch (t->kind) {
  case TYPE_TENSOR: return true;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (has_tensor(L, t->tuple.fields[i])) return true;
    return false;
  case TYPE_FUNC:
    for (uint32_t i = 0; i < t->func.nargs; i++)
      if (has_tensor(L, t->func.args[i])) return true;
    return has_tensor(L, t->func.ret);
  case TYPE_REF: return has_tensor(L, t->ref.inner);
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++)
      if (has_tensor(L, t->adt.args[i])) return true;
    return adt_holds_tensor(L, t->adt.def);
  default: return false;
  }
}

/* Does a constructor of def have a field whose declared type holds a tensor
 * (not through a type parameter)? Recursive ADTs are assumed not to while
 * being decided. */
static bool adt_holds_tensor(Lazy *L, TypeDef *def) {
  int64_t got = 0;
  if (ptrmap_get(&L->tensor_adts, def, &got)) return got == 1;
  ptrmap_put(&L->tensor_adts, def, 2);
  bool holds = false;
  for (uint32_t i = 0; i < def->nctors && !holds; i++)
    for (uint32_t j = 0; j < def->ctors[i]->nfields && !holds; j++) holds = has_tensor(L, def->ctors[i]->fields[j]);
  ptrmap_put(&L->tensor_adts, def, holds ? 1 : 2);
  return holds;
}

/* A value of type t can be turned into its cell form by Raw on tensors and
 * field-by-field on tuples (else it must hold no tensor at all). */
static bool crossable(Lazy *L, const Type *t) {
  t = rt(t);
  if (t && t->kind == TYPE_TENSOR) return true;
  if (t && t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (!crossable(L, t->tuple.fields[i])) return false;
    return true;
  }
  return !has_tensor(L, t);
}

static Type *cell_of(Lazy *L, Type *t) { return build_type_adt(L->m, L->cell, &t, 1); }

/* The type with every tensor type T replaced by GradCell[T] (t itself when
 * nothing changes). */
static Type *lz_type(Lazy *L, Type *t) {
  t = (Type *)rt(t);
  if (!t || stack_exhausted()) return t;
  Module *m = L->m;
  switch (t->kind) {
  case TYPE_TENSOR: return cell_of(L, t);
  case TYPE_TUPLE: {
    Type **fs = NULL;
    for (uint32_t i = 0; i < t->tuple.n; i++) {
      Type *f = lz_type(L, t->tuple.fields[i]);
      if (f != t->tuple.fields[i] && !fs) fs = arena_memdup(m->arena, t->tuple.fields, t->tuple.n * sizeof *fs);
      if (fs) fs[i] = f;
    }
    if (!fs) return t;
    Type *c = type_new(m, TYPE_TUPLE, t->span);
    c->tuple.fields = fs;
    c->tuple.n = t->tuple.n;
    return c;
  }
  case TYPE_FUNC: {
    Type **as = NULL;
    for (uint32_t i = 0; i < t->func.nargs; i++) {
      Type *a = lz_type(L, t->func.args[i]);
      if (a != t->func.args[i] && !as) as = arena_memdup(m->arena, t->func.args, t->func.nargs * sizeof *as);
      if (as) as[i] = a;
    }
    Type *r = lz_type(L, t->func.ret);
    if (!as && r == t->func.ret) return t;
    Type *c = type_new(m, TYPE_FUNC, t->span);
    c->func = t->func;
    if (as) c->func.args = as;
    c->func.ret = r;
    return c;
  }
  case TYPE_REF: {
    Type *in = lz_type(L, t->ref.inner);
    if (in == t->ref.inner) return t;
    Type *c = type_new(m, TYPE_REF, t->span);
    c->ref.inner = in;
    return c;
  }
  case TYPE_ADT: {
    Type **as = NULL;
    for (uint32_t i = 0; i < t->adt.nargs; i++) {
      Type *a = lz_type(L, t->adt.args[i]);
      if (a != t->adt.args[i] && !as) as = arena_memdup(m->arena, t->adt.args, t->adt.nargs * sizeof *as);
      if (as) as[i] = a;
    }
    if (!as) return t;
    return build_type_adt(m, t->adt.def, as, t->adt.nargs);
  }
  default: return t;
  }
}

/* ------------------------------------------------------ building cells */

static Expr *call1(Module *m, Expr *callee, Expr *arg, Span sp) { return build_call(m, callee, &arg, 1, sp); }
static Expr *from_cell(Lazy *L, Expr *e, Span sp) { return call1(L->m, build_global(L->m, L->from, sp), e, sp); }
static Expr *make_cell(Lazy *L, Ctor *c, Expr *e, Span sp) { return call1(L->m, build_ctor(L->m, c, sp), e, sp); }

/* A tuple-typed value as something cheap to project: a variable, or a new let. */
static Expr *atom(Lazy *L, LetList *ll, Expr *e, Span sp) {
  return e->kind == EXPR_VAR ? e : ll_push(L, ll, e, sp);
}

/* A plain value e of type t in cell form (TVM's WrapExpr). */
static Expr *wrap(Lazy *L, LetList *ll, Expr *e, const Type *t, Span sp) {
  t = rt(t);
  if (t && t->kind == TYPE_TENSOR) return make_cell(L, L->raw, e, sp);
  if (!t || t->kind != TYPE_TUPLE || !has_tensor(L, t)) return e;
  Expr **fs = arena_alloc(L->m->arena, (t->tuple.n ? t->tuple.n : 1) * sizeof *fs);
  if (e->kind == EXPR_TUPLE && e->tuple.n == t->tuple.n) {
    for (uint32_t i = 0; i < t->tuple.n; i++) fs[i] = wrap(L, ll, e->tuple.fields[i], t->tuple.fields[i], sp);
  } else {
    Expr *v = atom(L, ll, e, sp);
    for (uint32_t i = 0; i < t->tuple.n; i++)
      fs[i] = wrap(L, ll, ll_push(L, ll, build_proj(L->m, build_copy(L->m, v), i, sp), sp), t->tuple.fields[i], sp);
  }
  return build_tuple(L->m, fs, t->tuple.n, sp);
}

/* A cell-form value e whose plain type is t, back in plain form (TVM's UnwrapExpr). */
static Expr *unwrap(Lazy *L, LetList *ll, Expr *e, const Type *t, Span sp) {
  t = rt(t);
  if (t && t->kind == TYPE_TENSOR) return from_cell(L, e, sp);
  if (!t || t->kind != TYPE_TUPLE || !has_tensor(L, t)) return e;
  Expr **fs = arena_alloc(L->m->arena, (t->tuple.n ? t->tuple.n : 1) * sizeof *fs);
  if (e->kind == EXPR_TUPLE && e->tuple.n == t->tuple.n) {
    for (uint32_t i = 0; i < t->tuple.n; i++) fs[i] = unwrap(L, ll, e->tuple.fields[i], t->tuple.fields[i], sp);
  } else {
    Expr *v = atom(L, ll, e, sp);
    for (uint32_t i = 0; i < t->tuple.n; i++)
      fs[i] = unwrap(L, ll, ll_push(L, ll, build_proj(L->m, build_copy(L->m, v), i, sp), sp), t->tuple.fields[i], sp);
  }
  return build_tuple(L->m, fs, t->tuple.n, sp);
}

static void cannot_cross(Lazy *L, Span sp, const char *what, const Type *t) {
  if (!L->failed)
    diag_error(L->d, sp,
               "LazyGradientInit: %s has type %s; only tensors, tuples of tensors and types without tensors "
               "can cross a function boundary",
               what, type_to_string(L->m->arena, t));
  L->failed = true;
}

/* ------------------------------------------------------------- rewrite */

/* callee(unwrap(args)) wrapped back, for callees that keep plain signatures:
 * operators and monomorphic globals. `arg_types`/`ret` are the plain types. */
static Expr *plain_call(Lazy *L, Expr *callee, Expr **args, Type **arg_types, uint32_t n, const Type *ret,
                        const Attrs *attrs, Span sp) {
  LetList ll = {0};
  Expr **un = arena_alloc(L->m->arena, (n ? n : 1) * sizeof *un);
  for (uint32_t i = 0; i < n; i++) un[i] = unwrap(L, &ll, args[i], arg_types[i], sp);
  Expr *call = build_call(L->m, callee, un, n, sp);
  if (attrs) call->call.attrs = (Attrs *)attrs;
  return ll_close(L, &ll, wrap(L, &ll, call, ret, sp), sp);
}

/* A callee used as a value, as a function over cells:
 * fn (%p1: cell(T1), ...) -> cell(R) { wrap(callee(unwrap(%p1), ...)) }. */
static Expr *eta(Lazy *L, Expr *callee, const Type *ft, const char *what, Span sp) {
  ft = rt(ft);
  if (!ft || ft->kind != TYPE_FUNC || ft->func.ntparams) {
    cannot_cross(L, sp, what, ft);
    return callee;
  }
  uint32_t n = ft->func.nargs;
  for (uint32_t i = 0; i < n; i++)
    if (!crossable(L, ft->func.args[i])) cannot_cross(L, sp, what, ft);
  if (!crossable(L, ft->func.ret)) cannot_cross(L, sp, what, ft);
  Var **ps = arena_alloc(L->m->arena, (n ? n : 1) * sizeof *ps);
  Expr **uses = arena_alloc(L->m->arena, (n ? n : 1) * sizeof *uses);
  for (uint32_t i = 0; i < n; i++) {
    ps[i] = build_fresh_var(L->m, "p", lz_type(L, ft->func.args[i]), sp);
    uses[i] = build_var(L->m, ps[i], sp);
  }
  Expr *body = plain_call(L, callee, uses, ft->func.args, n, ft->func.ret, NULL, sp);
  return build_fn(L->m, build_function(L->m, ps, n, lz_type(L, ft->func.ret), body, NULL, sp), sp);
}

/* An operator call: `old` the original (typed), `e` the same call over cells. */
static Expr *op_call_cells(Lazy *L, Expr *old, Expr *e) {
  Module *m = L->m;
  Span sp = old->span;
  int32_t id = op_call_id(old);
  uint32_t n = old->call.nargs;
  Expr **args = e->call.args;
  if ((id == OP_ADD || id == OP_MULTIPLY) && n == 2 &&
      type_equal(rt(old->call.args[0]->type), rt(old->call.args[1]->type))) {
    Type *t = (Type *)rt(old->call.args[0]->type);
    Var *ps[2] = {var_new(m, "lhs", sp, t), var_new(m, "rhs", sp, t)};
    Expr *op = op_call(m, old->call.fn->op.name, (Expr *[]){build_var(m, ps[0], sp), build_var(m, ps[1], sp)}, 2,
                       NULL, sp);
    Expr *fallback = build_fn(m, build_function(m, ps, 2, t, op, NULL, sp), sp);
    return build_call(m, build_global(m, id == OP_ADD ? L->add : L->mul, sp),
                      (Expr *[]){fallback, args[0], args[1]}, 3, sp);
  }
  Type **tys = arena_alloc(m->arena, (n ? n : 1) * sizeof *tys);
  for (uint32_t i = 0; i < n; i++) tys[i] = old->call.args[i]->type;
  Expr *callee = build_copy(m, old->call.fn); /* one callee node per call */
  Ctor *thunk = id == OP_ZEROS || id == OP_ZEROS_LIKE ? L->zero : id == OP_ONES || id == OP_ONES_LIKE ? L->one : NULL;
  if (thunk && rt(old->type) && rt(old->type)->kind == TYPE_TENSOR) {
    Type *t = (Type *)rt(old->type);
    Expr *body = plain_call(L, callee, args, tys, n, NULL, e->call.attrs, sp); /* plain result */
    Expr *f = build_fn(m, build_function(m, NULL, 0, t, body, NULL, sp), sp);
    return make_cell(L, thunk, f, sp);
  }
  return plain_call(L, callee, args, tys, n, old->type, e->call.attrs, sp);
}

/* @main keeps its plain signature (it is the wrapper): a call of it from
 * rewritten code crosses from cells to plain values and back. Every other
 * global takes and returns cells. */
static bool is_boundary_global(const Lazy *L, const Expr *g) {
  return g->kind == EXPR_GLOBAL && g->global.def && g->global.def == L->entry;
}

static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  Lazy *L = rw->ud;
  Module *m = L->m;
  Span sp = old->span;
  switch (old->kind) {
  case EXPR_CONST: return make_cell(L, L->raw, e, sp);
  case EXPR_OP:
    if (ptrmap_find(&L->callees, old)) return e;
    return eta(L, e, old->type, "an operator used as a value", sp);
  case EXPR_GLOBAL:
    if (ptrmap_find(&L->callees, old) || !is_boundary_global(L, old) || !has_tensor(L, old->type)) return e;
    return eta(L, e, old->type, "a global function used as a value", sp);
  case EXPR_CTOR:
    if (adt_holds_tensor(L, old->ctor.ctor->owner)) {
      if (!L->failed)
        diag_error(L->d, sp,
                   "LazyGradientInit: constructor %s of type %s has a tensor-typed field; the pass supports "
                   "tensors inside ADTs only through type parameters",
                   old->ctor.ctor->name, old->ctor.ctor->owner->name);
      L->failed = true;
    }
    return e;
  case EXPR_CALL: {
    Expr *f = old->call.fn;
    if (f->kind == EXPR_OP) return op_call_cells(L, old, e);
    if (!is_boundary_global(L, f)) return e;
    uint32_t n = old->call.nargs;
    Type **tys = arena_alloc(m->arena, (n ? n : 1) * sizeof *tys);
    bool any = has_tensor(L, old->type);
    for (uint32_t i = 0; i < n; i++) {
      tys[i] = old->call.args[i]->type;
      any = any || has_tensor(L, tys[i]);
      if (!crossable(L, tys[i])) cannot_cross(L, old->call.args[i]->span, "this argument", tys[i]);
    }
    if (!crossable(L, old->type)) cannot_cross(L, sp, "this call's result", old->type);
    if (!any) return e;
    return plain_call(L, e->call.fn, e->call.args, tys, n, old->type, e->call.attrs, sp);
  }
  case EXPR_IF: {
    /* TVM leaves the condition a cell (ill-typed); unwrap it */
    Expr *c = e == old ? build_copy(m, old) : e;
    c->if_.cond = from_cell(L, c->if_.cond, sp);
    return c;
  }
  case EXPR_FN: {
    Function *fn = e->fn;
    Type *r = fn->ret_annot ? lz_type(L, fn->ret_annot) : NULL;
    if (r == fn->ret_annot) return e;
    Expr *c = e == old ? build_copy(m, old) : e;
    Function *nf = arena_memdup(m->arena, fn, sizeof *nf);
    nf->ret_annot = r;
    nf->type = NULL;
    c->fn = nf;
    return c;
  }
  default: return e;
  }
}

/* Binders with a written annotation get the cell form of it. */
static Var *rebind(Rewriter *rw, Var *v) {
  Lazy *L = rw->ud;
  if (!v->annot) return v;
  Type *t = lz_type(L, v->annot);
  if (t == v->annot) return v;
  Var *n = var_new(L->m, v->name, v->span, t);
  n->attrs = v->attrs;
  return n;
}

static void note_callee(Expr *e, void *ud) {
  if (e->kind == EXPR_CALL && (e->call.fn->kind == EXPR_OP || e->call.fn->kind == EXPR_GLOBAL))
    ptrmap_put(ud, e->call.fn, 1);
}

/* ------------------------------------------------------- the library */

static TypeDef *find_type(const Module *m, const char *name) {
  for (uint32_t i = 0; i < m->ntypes; i++)
    if (strcmp(m->types[i]->name, name) == 0) return m->types[i];
  return NULL;
}

static Pattern *pat_ctor(Module *m, Ctor *c, Pattern *arg, Span sp) {
  Pattern *p = pattern_new(m, PAT_CTOR, sp);
  p->ctor.name = c->name;
  p->ctor.ctor = c;
  p->ctor.args = arena_alloc(m->arena, sizeof *p->ctor.args);
  p->ctor.args[0] = arg;
  p->ctor.nargs = 1;
  return p;
}

static Pattern *pat_wild(Module *m, Span sp) { return pattern_new(m, PAT_WILDCARD, sp); }

static Pattern *pat_pair(Module *m, Pattern *a, Pattern *b, Span sp) {
  Pattern *p = pattern_new(m, PAT_TUPLE, sp);
  p->tuple.fields = arena_alloc(m->arena, 2 * sizeof *p->tuple.fields);
  p->tuple.fields[0] = a;
  p->tuple.fields[1] = b;
  p->tuple.n = 2;
  return p;
}

static Function *generic_fn(Module *m, TypeParam *tp, Var **ps, uint32_t n, Type *ret, Expr *body, Span sp) {
  Function *f = build_function(m, ps, n, ret, body, NULL, sp);
  f->tparams = arena_alloc(m->arena, sizeof *f->tparams);
  f->tparams[0] = tp;
  f->ntparams = 1;
  return f;
}

/* type GradCell[T] { Raw(T), One(fn () -> T), Zero(fn () -> T) } */
static TypeDef *build_cell_type(Module *m, Span sp) {
  TypeDef *td = arena_alloc(m->arena, sizeof *td);
  memset(td, 0, sizeof *td);
  td->name = "GradCell";
  td->span = sp;
  td->tparams = arena_alloc(m->arena, sizeof *td->tparams);
  td->tparams[0] = build_type_param(m, "T");
  td->ntparams = 1;
  td->has_body = true;
  td->nctors = 3;
  td->ctors = arena_alloc(m->arena, 3 * sizeof *td->ctors);
  static const char *const names[3] = {"Raw", "One", "Zero"};
  for (uint32_t i = 0; i < 3; i++) {
    Ctor *c = arena_alloc(m->arena, sizeof *c);
    memset(c, 0, sizeof *c);
    c->name = names[i];
    c->span = sp;
    c->owner = td;
    c->tag = i;
    c->nfields = 1;
    c->fields = arena_alloc(m->arena, sizeof *c->fields);
    Type *tv = build_type_var(m, td->tparams[0]);
    if (i == 0) {
      c->fields[0] = tv;
    } else {
      Type *f = type_new(m, TYPE_FUNC, sp);
      f->func.ret = tv;
      c->fields[0] = f;
    }
    td->ctors[i] = c;
  }
  TypeDef **types = arena_alloc(m->arena, (m->ntypes + 1) * sizeof *types);
  if (m->ntypes) memcpy(types, m->types, m->ntypes * sizeof *types);
  types[m->ntypes++] = td;
  m->types = types;
  return td;
}

/* def @FromGradCell[T](%g: GradCell[T]) -> T {
 *   match (%g) { Raw(%x) => %x, One(%x) => %x(), Zero(%x) => %x() } } */
static GlobalDef *build_from_cell(Lazy *L, Span sp) {
  Module *m = L->m;
  TypeParam *tp = build_type_param(m, "T");
  Type *t = build_type_var(m, tp);
  Var *g = var_new(m, "g", sp, cell_of(L, t));
  Clause *cl = arena_alloc(m->arena, 3 * sizeof *cl);
  Ctor *cs[3] = {L->raw, L->one, L->zero};
  for (uint32_t i = 0; i < 3; i++) {
    Var *x = var_new(m, "x", sp, NULL);
    Pattern *pv = pattern_new(m, PAT_VAR, sp);
    pv->var = x;
    cl[i].pattern = pat_ctor(m, cs[i], pv, sp);
    cl[i].body = i == 0 ? build_var(m, x, sp) : build_call(m, build_var(m, x, sp), NULL, 0, sp);
    cl[i].span = sp;
  }
  Expr *body = build_match(m, build_var(m, g, sp), cl, 3, false, sp);
  return build_global_def(m, "FromGradCell", generic_fn(m, tp, &g, 1, t, body, sp), sp);
}

/* def @AddGradCell[T](%add: fn (T, T) -> T, %l: GradCell[T], %r: GradCell[T]) -> GradCell[T] {
 *   match ((%l, %r)) { (Zero(_), _) => %r, (_, Zero(_)) => %l, _ => Raw(%add(@FromGradCell(%l), @FromGradCell(%r))) } }
 * and @MultiplyGradCell with the clauses (Zero(_), _) => %l, (_, Zero(_)) => %r,
 * (One(_), _) => %r, (_, One(_)) => %l before the fallback. */
static GlobalDef *build_binary(Lazy *L, bool is_add, Span sp) {
  Module *m = L->m;
  TypeParam *tp = build_type_param(m, "T");
  Type *t = build_type_var(m, tp);
  Type *ft = type_new(m, TYPE_FUNC, sp);
  ft->func.args = arena_alloc(m->arena, 2 * sizeof *ft->func.args);
  ft->func.args[0] = ft->func.args[1] = t;
  ft->func.nargs = 2;
  ft->func.ret = t;
  Var *ps[3] = {var_new(m, is_add ? "add" : "multiply", sp, ft), var_new(m, "l", sp, cell_of(L, t)),
                var_new(m, "r", sp, cell_of(L, t))};
  Var *l = ps[1], *r = ps[2];
  /* (which side is matched, constructor, result) per clause before the fallback */
  struct { int side; Ctor *c; Var *res; } rows[4] = {
      {0, L->zero, is_add ? r : l}, {1, L->zero, is_add ? l : r}, {0, L->one, r}, {1, L->one, l}};
  uint32_t nrows = is_add ? 2 : 4;
  Clause *cl = arena_alloc(m->arena, (nrows + 1) * sizeof *cl);
  for (uint32_t i = 0; i < nrows; i++) {
    Pattern *c = pat_ctor(m, rows[i].c, pat_wild(m, sp), sp);
    cl[i].pattern = rows[i].side == 0 ? pat_pair(m, c, pat_wild(m, sp), sp) : pat_pair(m, pat_wild(m, sp), c, sp);
    cl[i].body = build_var(m, rows[i].res, sp);
    cl[i].span = sp;
  }
  Expr *op = build_call(m, build_var(m, ps[0], sp),
                        (Expr *[]){from_cell(L, build_var(m, l, sp), sp), from_cell(L, build_var(m, r, sp), sp)}, 2,
                        sp);
  cl[nrows].pattern = pat_wild(m, sp);
  cl[nrows].body = make_cell(L, L->raw, op, sp);
  cl[nrows].span = sp;
  Expr *scrut = build_tuple(m, (Expr *[]){build_var(m, l, sp), build_var(m, r, sp)}, 2, sp);
  Expr *body = build_match(m, scrut, cl, nrows + 1, false, sp);
  return build_global_def(m, is_add ? "AddGradCell" : "MultiplyGradCell",
                          generic_fn(m, tp, ps, 3, cell_of(L, t), body, sp), sp);
}

static bool library_error(Lazy *L, const char *fmt, const char *name) {
  char msg[256];
  snprintf(msg, sizeof msg, fmt, name);
  diag_error(L->d, span_make(0, 0), "LazyGradientInit: %s", msg);
  return false;
}

/* GradCell, its constructors and the three functions: the module's own when
 * it has them (checked for shape), else built and added. */
static bool import_library(Lazy *L) {
  Module *m = L->m;
  Span sp = span_make(0, 0);
  static const char *const ctor_names[3] = {"Raw", "One", "Zero"};
  TypeDef *td = find_type(m, "GradCell");
  for (uint32_t i = 0; i < m->ntypes; i++) {
    if (m->types[i] == td) continue;
    for (uint32_t j = 0; j < m->types[i]->nctors; j++)
      for (uint32_t k = 0; k < 3; k++)
        if (strcmp(m->types[i]->ctors[j]->name, ctor_names[k]) == 0)
          return library_error(L, "the constructor name %s is taken by another type; GradCell needs it",
                               ctor_names[k]);
  }
  if (td) {
    bool ok = td->ntparams == 1 && td->nctors == 3;
    for (uint32_t k = 0; ok && k < 3; k++)
      ok = strcmp(td->ctors[k]->name, ctor_names[k]) == 0 && td->ctors[k]->nfields == 1;
    if (!ok) return library_error(L, "the module's type %s is not the GradCell library's", "GradCell");
  } else {
    td = build_cell_type(m, sp);
  }
  L->cell = td;
  L->raw = td->ctors[0];
  L->one = td->ctors[1];
  L->zero = td->ctors[2];
  static const char *const fns[3] = {"FromGradCell", "AddGradCell", "MultiplyGradCell"};
  GlobalDef **slots[3] = {&L->from, &L->add, &L->mul};
  for (uint32_t k = 0; k < 3; k++) {
    GlobalDef *g = module_find_global(m, fns[k]);
    if (g && (!g->fn || g->fn->ntparams != 1 || g->fn->nparams != (k == 0 ? 1u : 3u)))
      return library_error(L, "the module's @%s is not the GradCell library's", fns[k]);
    *slots[k] = g;
  }
  if (!L->from) L->from = build_from_cell(L, sp);
  if (!L->add) L->add = build_binary(L, true, sp);
  if (!L->mul) L->mul = build_binary(L, false, sp);
  return true;
}

/* -------------------------------------------------------------- driver */

static bool is_library(const Lazy *L, const GlobalDef *g) { return g == L->from || g == L->add || g == L->mul; }

/* Rewrites one global: @main into a wrapper (original signature) around its
 * cell-typed literal, any other global in place with a cell-typed signature
 * (so calls between globals stay as written, tail calls included). */
static bool lazy_global(Lazy *L, GlobalDef *g) {
  Module *m = L->m;
  Function *f = g->fn;
  Span sp = f->span;
  const Type *ft = rt(f->type);
  if (!ft || ft->kind != TYPE_FUNC || ft->func.nargs != f->nparams) return true; /* untyped: leave */
  bool converted = g != L->entry;
  for (uint32_t i = 0; i < f->nparams && !converted; i++)
    if (!crossable(L, ft->func.args[i])) {
      char what[160];
      snprintf(what, sizeof what, "parameter %%%.100s of @%.40s", f->params[i]->name, g->name);
      cannot_cross(L, f->params[i]->span, what, ft->func.args[i]);
    }
  if (!converted && !crossable(L, ft->func.ret)) {
    char what[160];
    snprintf(what, sizeof what, "the result of @%.100s", g->name);
    cannot_cross(L, g->span, what, ft->func.ret);
  }
  if (L->failed) return false;

  Rewriter rw;
  rw_init(&rw, m, L->d);
  rw.ud = L;
  rw.post = post;
  rw.rebind = rebind;
  ptrmap_free(&L->callees);
  walk_post_order(f->body, true, note_callee, &L->callees);
  Var **ps = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof *ps);
  for (uint32_t i = 0; i < f->nparams; i++) {
    Var *p = f->params[i];
    ps[i] = var_new(m, p->name, p->span, lz_type(L, p->annot ? p->annot : ft->func.args[i]));
    ps[i]->attrs = p->attrs;
    rw_subst(&rw, p, build_var(m, ps[i], p->span));
  }
  Expr *body = rw_expr(&rw, f->body);
  bool failed = rw.failed;
  rw_fini(&rw);
  if (failed || L->failed) return false;
  if (body == f->body && !has_tensor(L, ft)) return true; /* nothing to do (TVM: same_as) */

  Type *ret = lz_type(L, ft->func.ret);
  if (converted) {
    Function *nf = arena_memdup(m->arena, f, sizeof *nf);
    nf->params = ps;
    nf->ret_annot = ret;
    nf->body = body;
    nf->type = NULL;
    g->fn = nf;
    return true;
  }
  Expr *lit = build_fn(m, build_function(m, ps, f->nparams, ret, body, NULL, sp), sp);
  LetList ll = {0};
  Expr **args = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof *args);
  for (uint32_t i = 0; i < f->nparams; i++)
    args[i] = wrap(L, &ll, build_var(m, f->params[i], sp), ft->func.args[i], sp);
  Expr *res = ll_push(L, &ll, build_call(m, lit, args, f->nparams, sp), sp);
  Function *w = arena_memdup(m->arena, f, sizeof *w);
  w->body = ll_close(L, &ll, unwrap(L, &ll, res, ft->func.ret, sp), sp);
  w->type = NULL;
  g->fn = w;
  return true;
}

bool pass_LAZY_GRADIENT_INIT(PassCtx *c); /* the entry point passes.def names */
bool pass_LAZY_GRADIENT_INIT(PassCtx *c) {
  Lazy L = {.m = c->m, .d = c->d};
  uint32_t n = c->m->ndefs; /* the globals present when the pass starts */
  GlobalDef **defs = mem_malloc((n ? n : 1) * sizeof *defs);
  if (n) memcpy(defs, c->m->defs, n * sizeof *defs);
  bool ok = import_library(&L);
  L.entry = module_find_global(c->m, "main");
  for (uint32_t i = 0; ok && i < n; i++) {
    GlobalDef *g = defs[i];
    if (!g->fn || is_library(&L, g) || fn_skipped_by_function_passes(g->fn)) continue;
    ok = lazy_global(&L, g);
  }
  mem_free(defs);
  ptrmap_free(&L.callees);
  ptrmap_free(&L.tensor_adts);
  return ok && !L.failed;
}
