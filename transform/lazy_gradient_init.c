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
 *
 * Typed output: every node the pass builds gets the type inference would
 * give it (sema/typeof.h), so the runner's re-typing keeps the whole output
 * instead of inferring it again (the 20 MB module: 2.5M nodes). A rewritten
 * node of plain type T has type lz(T) (T with each tensor type made a
 * GradCell); rebound binders take lz of their type; a rebuilt operator call
 * keeps its original's type (its arguments are unwrapped to the original
 * argument types) unless its relation reads constant arguments, which are
 * cells now. The types of one tensor type's cell form, its @FromGradCell /
 * Raw / @AddGradCell instantiations and its thunks are built once
 * (CellTypes) and shared. Where a child is untyped or a type is not ground
 * (polymorphic code, matches), the node stays untyped and the re-typing
 * infers it; RELAYC_VERIFY_RETYPE=1 checks the rest.
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
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "sema/typeof.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

/* The types of one ground plain type T's cell form, built once per distinct
 * T and shared by every node of that type the pass builds. */
typedef struct CellTypes {
  Type *t;       /* T (the shared object) */
  Type *cell;    /* GradCell[T] */
  Type *from_fn; /* fn (GradCell[T]) -> T: @FromGradCell instantiated at T */
  Type *raw_fn;  /* fn (T) -> GradCell[T]: Raw at T */
  Type *unop;    /* fn (T) -> T: a unary operator's callee */
  Type *binop;   /* fn (T, T) -> T: the add/multiply fallback literal and its operator */
  Type *cellop;  /* fn (fn (T, T) -> T, GradCell[T], GradCell[T]) -> GradCell[T]: @AddGradCell at T */
  Type *thunk;   /* fn () -> T */
  Type *lazy_fn; /* fn (fn () -> T) -> GradCell[T]: One / Zero at T */
  /* The callee nodes all calls at T share, made on first use (TVM too has
   * one Op, GlobalVar or Constructor object for all its uses; inference
   * instantiates a shared callee per call, the printer and structural
   * equality take atoms by value): a third of the pass's allocations. */
  Expr *from_node, *raw_node; /* @FromGradCell, Raw */
  Expr *thunk_ctor[2];        /* One, Zero */
  Expr *cellop_node[2];       /* @AddGradCell, @MultiplyGradCell */
  Expr **unary_ops, **binary_ops; /* by operator id: callees typed unop / binop */
} CellTypes;

#define CELL_CACHE 64 /* CellTypes by type address, direct-mapped */

/* An operator the pass builds calls of (add/multiply fallbacks): its
 * normalised attributes, made once by op_call and shared. */
typedef struct BuiltOp {
  int32_t id;
  const Attrs *attrs;
  bool made;
} BuiltOp;

typedef struct Lazy {
  Module *m;
  Diag *d;
  TypeDef *cell;              /* GradCell */
  Ctor *raw, *one, *zero;     /* its constructors */
  GlobalDef *from, *add, *mul; /* @FromGradCell, @AddGradCell, @MultiplyGradCell */
  Expr *callee;               /* the callee of the call the rewriter entered last (see pre) */
  PtrMap tensor_adts;         /* TypeDef* -> 1 (a field holds a tensor) or 2 (not) */
  PtrMap new_sigs;            /* GlobalDef* -> Type*: the cell-typed signature of a global rewritten in place */
  GlobalDef *entry;           /* @main: keeps its signature through a wrapper */
  TypeofCx tc;                /* shared types, types of other nodes from their children */
  PtrMap cell_index;          /* shared T -> index + 1 in cells */
  VEC(CellTypes *) cells;
  struct { const Type *key; CellTypes *ct; } cell_cache[CELL_CACHE];
  CellTypes *last_tensor; /* of the tensor type looked up last */
  BuiltOp binops[2];          /* add, multiply */
  bool failed;
} Lazy;

/* let-bound values in order, closed around a body at the end (TVM's LetList) */
typedef struct LetList {
  VEC(Var *) vars;
  VEC(Expr *) vals;
} LetList;

static Expr *ll_push(Lazy *L, LetList *ll, Expr *value, Span sp) {
  Var *v = build_fresh_var(L->m, "x", NULL, sp);
  v->type = value->type; /* a let binder: its value's type */
  vec_push(ll->vars, v);
  vec_push(ll->vals, value);
  return typeof_set(&L->tc, build_var(L->m, v, sp));
}

static Expr *ll_close(Lazy *L, LetList *ll, Expr *body, Span sp) {
  for (size_t i = ll->vars.len; i-- > 0;)
    body = typeof_set(&L->tc, build_let(L->m, ll->vars.data[i], ll->vals.data[i], body, sp));
  vec_free(ll->vars);
  vec_free(ll->vals);
  return body;
}

/* ------------------------------------------------------------------ types */

static bool adt_holds_tensor(Lazy *L, TypeDef *def);

/* Does a value of type t contain a tensor (through tuples, functions, refs,
 * ADT arguments, or an ADT's concretely typed fields)? */
static bool has_tensor(Lazy *L, const Type *t) {
  t = type_solved(t);
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
  t = type_solved(t);
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
  t = (Type *)type_solved(t);
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

/* The CellTypes of T, built on first use; NULL when T is not a ground type
 * (then the nodes of that type stay untyped). */
static CellTypes *cell_types(Lazy *L, const Type *t) {
  t = type_solved(t);
  if (!t) return NULL;
  size_t slot = ((uintptr_t)t >> 4) % CELL_CACHE;
  if (L->cell_cache[slot].key == t) return L->cell_cache[slot].ct;
  /* an input's node types are objects of their own, mostly equal to the
   * tensor type seen last: compared, not cached by address */
  if (L->last_tensor && t->kind == TYPE_TENSOR && type_equal(t, L->last_tensor->t)) return L->last_tensor;
  CellTypes *ct = NULL;
  if (typeof_ground(t)) {
    TypeofCx *tc = &L->tc;
    Type *s = typeof_shared(tc, (Type *)t);
    int64_t at = 0;
    if (ptrmap_get(&L->cell_index, s, &at)) {
      ct = L->cells.data[at - 1];
    } else {
      CellTypes *c = arena_alloc(L->m->arena, sizeof *c);
      c->t = s;
      c->cell = typeof_adt_type(tc, L->cell, &s, 1);
      c->from_fn = typeof_fn_type(tc, &c->cell, 1, s);
      c->raw_fn = typeof_fn_type(tc, &s, 1, c->cell);
      c->unop = typeof_fn_type(tc, &s, 1, s);
      c->binop = typeof_fn_type(tc, (Type *[]){s, s}, 2, s);
      c->cellop = typeof_fn_type(tc, (Type *[]){c->binop, c->cell, c->cell}, 3, c->cell);
      c->thunk = typeof_fn_type(tc, NULL, 0, s);
      c->lazy_fn = typeof_fn_type(tc, &c->thunk, 1, c->cell);
      vec_push(L->cells, c);
      ptrmap_put(&L->cell_index, s, (int64_t)L->cells.len);
      ct = c;
    }
  }
  L->cell_cache[slot].key = t;
  L->cell_cache[slot].ct = ct;
  if (ct && t->kind == TYPE_TENSOR) L->last_tensor = ct;
  return ct;
}

/* lz_type for the types of nodes and binders: shared objects; NULL when t is
 * not ground (the node is left to the re-typing). */
static Type *lz_ty(Lazy *L, const Type *t) {
  t = type_solved(t);
  if (!t || stack_exhausted()) return NULL;
  TypeofCx *tc = &L->tc;
  Type *small[8];
  uint32_t n;
  Type **ps;
  Type *r = NULL;
  switch (t->kind) {
  case TYPE_TENSOR: {
    CellTypes *ct = cell_types(L, t);
    return ct ? ct->cell : NULL;
  }
  case TYPE_REF: {
    Type *in = lz_ty(L, t->ref.inner);
    return in ? typeof_ref_type(tc, in) : NULL;
  }
  case TYPE_TUPLE: n = t->tuple.n; break;
  case TYPE_ADT: n = t->adt.nargs; break;
  case TYPE_FUNC:
    if (t->func.ntparams) return NULL;
    n = t->func.nargs + 1;
    break;
  default: return NULL;
  }
  ps = n <= 8 ? small : mem_malloc(n * sizeof *ps);
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; i++) {
    const Type *p = t->kind == TYPE_TUPLE ? t->tuple.fields[i] : t->kind == TYPE_ADT ? t->adt.args[i]
                    : i < t->func.nargs ? t->func.args[i] : t->func.ret;
    ok = (ps[i] = lz_ty(L, p)) != NULL;
  }
  if (ok && t->kind == TYPE_TUPLE) r = typeof_tuple_type(tc, ps, n);
  else if (ok && t->kind == TYPE_ADT) r = typeof_adt_type(tc, t->adt.def, ps, n);
  else if (ok) r = typeof_fn_type(tc, ps, n - 1, ps[n - 1]);
  if (ps != small) mem_free(ps);
  return r;
}

/* ------------------------------------------------------ building cells */

static Expr *call1(Module *m, Expr *callee, Expr *arg, Span sp) { return build_call(m, callee, &arg, 1, sp); }

/* A call typed `type` of a callee typed `callee_type` (both or neither). */
static Expr *typed_call(Expr *call, Type *type, Type *callee_type) {
  if (type && callee_type) {
    call->type = type;
    call->call.fn->type = callee_type;
  }
  return call;
}

/* The CellTypes of the T in a value of type GradCell[T]. */
static CellTypes *of_cell(Lazy *L, const Type *t) {
  t = type_solved(t);
  if (!t || t->kind != TYPE_ADT || t->adt.def != L->cell || t->adt.nargs != 1) return NULL;
  CellTypes *ct = cell_types(L, t->adt.args[0]);
  return ct && (ct->cell == t || type_equal(ct->cell, t)) ? ct : NULL;
}

/* @FromGradCell(e): e's tensor, typed T when e is a GradCell[T]. */
static Expr *from_cell(Lazy *L, Expr *e, Span sp) {
  CellTypes *ct = of_cell(L, e->type);
  if (!ct) return call1(L->m, build_global(L->m, L->from, sp), e, sp);
  if (!ct->from_node) ct->from_node = build_typed(build_global(L->m, L->from, sp), ct->from_fn);
  return build_typed(call1(L->m, ct->from_node, e, sp), ct->t);
}

/* Raw(e) (e a tensor of type T) or One/Zero(e) (e a thunk fn () -> T),
 * typed GradCell[T]. */
static Expr *make_cell(Lazy *L, Ctor *c, Expr *e, Span sp) {
  const Type *t = type_solved(e->type);
  if (c != L->raw) t = t && t->kind == TYPE_FUNC && t->func.nargs == 0 ? t->func.ret : NULL;
  CellTypes *ct = t ? cell_types(L, t) : NULL;
  if (ct && c != L->raw && !(ct->thunk == e->type || type_equal(ct->thunk, e->type))) ct = NULL;
  if (!ct) return call1(L->m, build_ctor(L->m, c, sp), e, sp);
  Expr **slot = c == L->raw ? &ct->raw_node : &ct->thunk_ctor[c == L->one ? 0 : 1];
  if (!*slot) *slot = build_typed(build_ctor(L->m, c, sp), c == L->raw ? ct->raw_fn : ct->lazy_fn);
  return build_typed(call1(L->m, *slot, e, sp), ct->cell);
}

/* A tuple-typed value as something cheap to project: a variable, or a new let. */
static Expr *atom(Lazy *L, LetList *ll, Expr *e, Span sp) {
  return e->kind == EXPR_VAR ? e : ll_push(L, ll, e, sp);
}

static Expr *proj_of(Lazy *L, Expr *v, uint32_t i, Span sp) {
  return typeof_set(&L->tc, build_proj(L->m, typeof_set(&L->tc, build_copy(L->m, v)), i, sp));
}

/* A plain value e of type t in cell form (TVM's WrapExpr). */
static Expr *wrap(Lazy *L, LetList *ll, Expr *e, const Type *t, Span sp) {
  t = type_solved(t);
  if (t && t->kind == TYPE_TENSOR) return make_cell(L, L->raw, e, sp);
  if (!t || t->kind != TYPE_TUPLE || !has_tensor(L, t)) return e;
  Expr **fs = arena_alloc(L->m->arena, (t->tuple.n ? t->tuple.n : 1) * sizeof *fs);
  if (e->kind == EXPR_TUPLE && e->tuple.n == t->tuple.n) {
    for (uint32_t i = 0; i < t->tuple.n; i++) fs[i] = wrap(L, ll, e->tuple.fields[i], t->tuple.fields[i], sp);
  } else {
    Expr *v = atom(L, ll, e, sp);
    for (uint32_t i = 0; i < t->tuple.n; i++)
      fs[i] = wrap(L, ll, ll_push(L, ll, proj_of(L, v, i, sp), sp), t->tuple.fields[i], sp);
  }
  return typeof_set(&L->tc, build_tuple(L->m, fs, t->tuple.n, sp));
}

/* A cell-form value e whose plain type is t, back in plain form (TVM's UnwrapExpr). */
static Expr *unwrap(Lazy *L, LetList *ll, Expr *e, const Type *t, Span sp) {
  t = type_solved(t);
  if (t && t->kind == TYPE_TENSOR) return from_cell(L, e, sp);
  if (!t || t->kind != TYPE_TUPLE || !has_tensor(L, t)) return e;
  Expr **fs = arena_alloc(L->m->arena, (t->tuple.n ? t->tuple.n : 1) * sizeof *fs);
  if (e->kind == EXPR_TUPLE && e->tuple.n == t->tuple.n) {
    for (uint32_t i = 0; i < t->tuple.n; i++) fs[i] = unwrap(L, ll, e->tuple.fields[i], t->tuple.fields[i], sp);
  } else {
    Expr *v = atom(L, ll, e, sp);
    for (uint32_t i = 0; i < t->tuple.n; i++)
      fs[i] = unwrap(L, ll, ll_push(L, ll, proj_of(L, v, i, sp), sp), t->tuple.fields[i], sp);
  }
  return typeof_set(&L->tc, build_tuple(L->m, fs, t->tuple.n, sp));
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

/* What an operator call rebuilt over plain values is typed when its
 * arguments have the types they had (op_types). */
typedef struct OpTypes {
  Type **args;      /* the argument types expected (shared objects) */
  Type *call;       /* the call's */
  Type *callee;     /* its operator's: fn (args) -> call */
  Expr *shared_op;  /* the callee node shared at that type, when there is one */
  Type *small[4];
} OpTypes;

/* callee(unwrap(args)) wrapped back, for callees that keep plain signatures:
 * operators and monomorphic globals. `arg_types`/`ret` are the plain types;
 * `ot` the call's types when its arguments come out as before (most
 * operator calls); otherwise the call is typed from its children where it
 * can be (sema/typeof.h). */
static Expr *plain_call(Lazy *L, Expr *callee, Expr **args, Type **arg_types, uint32_t n, const Type *ret,
                        const Attrs *attrs, const OpTypes *ot, Span sp) {
  LetList ll = {0};
  Expr *small[4];
  Expr **un = n <= 4 ? small : arena_alloc(L->m->arena, n * sizeof *un);
  bool as_before = ot != NULL; /* every argument unwrapped to the type it had */
  for (uint32_t i = 0; i < n; i++) {
    un[i] = unwrap(L, &ll, args[i], arg_types[i], sp);
    as_before = as_before && (un[i]->type == ot->args[i] || (un[i]->type && type_equal(un[i]->type, ot->args[i])));
  }
  if (ot) /* an operator: its shared node at this type, or a node of this call's own */
    callee = as_before && ot->shared_op ? ot->shared_op : build_copy(L->m, callee);
  Expr *call = build_call(L->m, callee, un, n, sp);
  if (attrs) call->call.attrs = (Attrs *)attrs;
  if (as_before) typed_call(call, ot->call, ot->callee);
  else typeof_set(&L->tc, call);
  Expr *r = wrap(L, &ll, call, ret, sp);
  return ll.vars.len ? ll_close(L, &ll, r, sp) : r;
}

/* A callee used as a value, as a function over cells:
 * fn (%p1: cell(T1), ...) -> cell(R) { wrap(callee(unwrap(%p1), ...)) }. */
static Expr *eta(Lazy *L, Expr *callee, const Type *ft, const char *what, Span sp) {
  ft = type_solved(ft);
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
    ps[i]->type = lz_ty(L, ft->func.args[i]);
    uses[i] = typeof_set(&L->tc, build_var(L->m, ps[i], sp));
  }
  Expr *body = plain_call(L, callee, uses, ft->func.args, n, ft->func.ret, NULL, NULL, sp);
  return typeof_set(&L->tc, build_fn(L->m, build_function(L->m, ps, n, lz_type(L, ft->func.ret), body, NULL, sp), sp));
}

/* The operator node `id` typed fn (T) -> T (n = 1) or fn (T, T) -> T
 * (n = 2) that the calls at ct's T share; made from `like` (an operator
 * node) on first use. */
static Expr *shared_op(Lazy *L, CellTypes *ct, int32_t id, uint32_t n, const Expr *like) {
  Expr ***table = n == 1 ? &ct->unary_ops : &ct->binary_ops;
  if (!*table) *table = mem_calloc(op_count(), sizeof **table);
  Expr **slot = &(*table)[id];
  if (!*slot) *slot = build_typed(build_copy(L->m, like), n == 1 ? ct->unop : ct->binop);
  return *slot;
}

/* A call of add or multiply (k = 0 or 1) over args, its callee the node
 * shared at ct's T (none when ct is NULL): the first one built by op_call,
 * the rest share its normalised attributes. */
static Expr *binop_call(Lazy *L, uint32_t k, Expr **args, CellTypes *ct, Span sp) {
  BuiltOp *b = &L->binops[k];
  Expr *callee;
  if (!b->made) {
    Expr *e = op_call(L->m, k == 0 ? "add" : "multiply", args, 2, NULL, sp);
    b->id = e->call.fn->op.id;
    b->attrs = e->call.attrs;
    b->made = true;
    callee = e->call.fn;
  } else {
    callee = expr_new(L->m, EXPR_OP, sp);
    callee->op.name = op_get(b->id)->name;
    callee->op.id = b->id;
  }
  if (ct) callee = shared_op(L, ct, b->id, 2, callee);
  return expr_call(L->m, callee, args, 2, (Attrs *)b->attrs, sp);
}

/* The types of an operator call rebuilt over unwrapped arguments when each
 * has the type the original argument had: the original call's, and its
 * callee's fn (arg types) -> result. False when inference might give
 * another even then (a relation that reads constant arguments, which are
 * cells now; an argument that unwrap leaves in cell form; a type not ground
 * or missing). */
static bool op_types(Lazy *L, const Expr *old, OpTypes *ot) {
  if (op_type_reads_consts(op_call_id(old))) return false;
  CellTypes *r = cell_types(L, old->type);
  Type *ret = r ? r->t : type_solved(old->type) && typeof_ground(type_solved(old->type)) ? typeof_shared(&L->tc, (Type *)type_solved(old->type)) : NULL;
  if (!ret) return false;
  uint32_t n = old->call.nargs;
  ot->args = n <= 4 ? ot->small : arena_alloc(L->m->arena, n * sizeof *ot->args);
  bool same = true;
  for (uint32_t i = 0; i < n; i++) {
    const Type *t = type_solved(old->call.args[i]->type);
    CellTypes *ct = t && t->kind == TYPE_TENSOR ? cell_types(L, t) : NULL;
    /* an argument of another type holding tensors (a function) stays in cell form */
    ot->args[i] = ct ? ct->t : t && typeof_ground(t) && crossable(L, t) ? typeof_shared(&L->tc, (Type *)t) : NULL;
    if (!ot->args[i]) return false;
    same = same && ot->args[i] == ret;
  }
  ot->call = ret;
  ot->callee = same && r && n == 1 ? r->unop : same && r && n == 2 ? r->binop : typeof_fn_type(&L->tc, ot->args, n, ret);
  ot->shared_op = same && r && (n == 1 || n == 2) ? shared_op(L, r, op_call_id(old), n, old->call.fn) : NULL;
  return ot->callee != NULL;
}

/* An operator call: `old` the original (typed), `e` the same call over cells. */
static Expr *op_call_cells(Lazy *L, Expr *old, Expr *e) {
  Module *m = L->m;
  Span sp = old->span;
  int32_t id = op_call_id(old);
  uint32_t n = old->call.nargs;
  Expr **args = e->call.args;
  if ((id == OP_ADD || id == OP_MULTIPLY) && n == 2 &&
      type_equal(type_solved(old->call.args[0]->type), type_solved(old->call.args[1]->type))) {
    Type *t = (Type *)type_solved(old->call.args[0]->type);
    CellTypes *ct = cell_types(L, t);
    uint32_t k = id == OP_ADD ? 0 : 1;
    Var *ps[2] = {var_new(m, "lhs", sp, t), var_new(m, "rhs", sp, t)};
    Expr *uses[2] = {build_var(m, ps[0], sp), build_var(m, ps[1], sp)};
    Expr *op = binop_call(L, k, uses, ct, sp);
    Expr *fallback = build_fn(m, build_function(m, ps, 2, t, op, NULL, sp), sp);
    bool cells = ct != NULL;
    for (uint32_t i = 0; i < 2 && cells; i++) cells = args[i]->type == ct->cell || of_cell(L, args[i]->type) == ct;
    if (cells && !ct->cellop_node[k])
      ct->cellop_node[k] = build_typed(build_global(m, k == 0 ? L->add : L->mul, sp), ct->cellop);
    Expr *call = build_call(m, cells ? ct->cellop_node[k] : build_global(m, k == 0 ? L->add : L->mul, sp),
                            (Expr *[]){fallback, args[0], args[1]}, 3, sp);
    if (!ct) return call;
    for (uint32_t i = 0; i < 2; i++) ps[i]->type = uses[i]->type = ct->t;
    op->type = ct->t;
    fallback->type = fallback->fn->type = ct->binop;
    return cells ? build_typed(call, ct->cell) : call;
  }
  Type *small[4];
  Type **tys = n <= 4 ? small : arena_alloc(m->arena, n * sizeof *tys);
  for (uint32_t i = 0; i < n; i++) tys[i] = old->call.args[i]->type;
  Expr *callee = old->call.fn; /* copied or shared by plain_call */
  OpTypes ot;
  const OpTypes *known = op_types(L, old, &ot) ? &ot : NULL;
  Ctor *thunk = id == OP_ZEROS || id == OP_ZEROS_LIKE ? L->zero : id == OP_ONES || id == OP_ONES_LIKE ? L->one : NULL;
  if (thunk && type_solved(old->type) && type_solved(old->type)->kind == TYPE_TENSOR) {
    Type *t = (Type *)type_solved(old->type);
    /* plain result */
    Expr *body = plain_call(L, callee, args, tys, n, NULL, e->call.attrs, known, sp);
    Expr *f = build_fn(m, build_function(m, NULL, 0, t, body, NULL, sp), sp);
    CellTypes *ct = cell_types(L, t);
    if (ct && body->type == ct->t) f->type = f->fn->type = ct->thunk;
    return make_cell(L, thunk, f, sp);
  }
  return plain_call(L, callee, args, tys, n, old->type, e->call.attrs, known, sp);
}

/* @main keeps its plain signature (it is the wrapper): a call of it from
 * rewritten code crosses from cells to plain values and back. Every other
 * global takes and returns cells. */
static bool is_boundary_global(const Lazy *L, const Expr *g) {
  return g->kind == EXPR_GLOBAL && g->global.def && g->global.def == L->entry;
}

/* A global rewritten in place in callee or value position: a new node with
 * its cell-typed signature (the old one keeps the plain type). */
static Expr *converted_global(Lazy *L, Expr *old, Expr *e) {
  int64_t sig = 0;
  if (!old->global.def || !ptrmap_get(&L->new_sigs, old->global.def, &sig) || !sig) return e;
  Expr *c = build_copy(L->m, e);
  c->type = (Type *)(intptr_t)sig;
  return c;
}

/* A constructor pattern of an ADT with a tensor-typed field in p (the
 * constructor itself is refused where it builds a value; a function that
 * only matches one binds a plain tensor where a cell is due). */
static const Pattern *tensor_adt_pattern(Lazy *L, const Pattern *p) {
  if (p->kind == PAT_CTOR) {
    if (p->ctor.ctor && adt_holds_tensor(L, p->ctor.ctor->owner)) return p;
    for (uint32_t i = 0; i < p->ctor.nargs; i++) {
      const Pattern *q = tensor_adt_pattern(L, p->ctor.args[i]);
      if (q) return q;
    }
  } else if (p->kind == PAT_TUPLE) {
    for (uint32_t i = 0; i < p->tuple.n; i++) {
      const Pattern *q = tensor_adt_pattern(L, p->tuple.fields[i]);
      if (q) return q;
    }
  }
  return NULL;
}

static Expr *rewrite_node(Rewriter *rw, Expr *old, Expr *e) {
  Lazy *L = rw->ud;
  Module *m = L->m;
  Span sp = old->span;
  bool callee = old == L->callee;
  switch (old->kind) {
  case EXPR_CONST: return make_cell(L, L->raw, e, sp);
  case EXPR_OP:
    if (callee) return e;
    return eta(L, e, old->type, "an operator used as a value", sp);
  case EXPR_GLOBAL:
    if (!is_boundary_global(L, old)) return converted_global(L, old, e);
    if (callee || !has_tensor(L, old->type)) return e;
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
    return plain_call(L, e->call.fn, e->call.args, tys, n, old->type, e->call.attrs, NULL, sp);
  }
  case EXPR_MATCH:
    for (uint32_t i = 0; i < old->match.nclauses && !L->failed; i++) {
      const Pattern *q = tensor_adt_pattern(L, old->match.clauses[i].pattern);
      if (!q) continue;
      diag_error(L->d, q->span,
                 "LazyGradientInit: constructor %s of type %s has a tensor-typed field; the pass supports "
                 "tensors inside ADTs only through type parameters",
                 q->ctor.ctor->name, q->ctor.ctor->owner->name);
      L->failed = true;
    }
    return e;
  case EXPR_IF: {
    /* TVM leaves the condition a cell (ill-typed); unwrap it */
    Expr *c = build_copy(m, e);
    c->if_.cond = from_cell(L, c->if_.cond, sp);
    return c;
  }
  case EXPR_FN: {
    Function *fn = e->fn;
    Type *r = fn->ret_annot ? lz_type(L, fn->ret_annot) : NULL;
    if (r == fn->ret_annot) return e;
    Expr *c = build_copy(m, e);
    Function *nf = arena_memdup(m->arena, fn, sizeof *nf);
    nf->ret_annot = r;
    nf->type = NULL;
    c->fn = nf;
    return c;
  }
  default: return e;
  }
}

/* The rewrite of one node, typed from its children when it is new and the
 * rule above did not type it. */
static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  Lazy *L = rw->ud;
  Expr *r = rewrite_node(rw, old, e);
  if (r != old && !r->type) typeof_set(&L->tc, r);
  return r;
}

/* Notes the callee of a call about to be visited: the rewriter visits it
 * right after this, before anything else (rewrite.h: pre, then the children
 * in order, the callee first), so `post` knows an operator or global in
 * callee position from one used as a value without a scan of the body. */
static Expr *pre(Rewriter *rw, Expr *e) {
  if (e->kind == EXPR_CALL) ((Lazy *)rw->ud)->callee = e->call.fn;
  return NULL;
}

/* Binders whose type holds a tensor get the cell form: the annotation's
 * (as written, for printing) and the type's (shared, for the re-typing).
 * The rewriter gives a rebound binder ONE use node for all its uses, so a
 * binder whose type is not ground (a polymorphic literal used at two types)
 * is rebound only for its annotation, as before, and left to the re-typing. */
static Var *rebind(Rewriter *rw, Var *v) {
  Lazy *L = rw->ud;
  Type *a = v->annot ? lz_type(L, v->annot) : NULL;
  Type *t = v->type && has_tensor(L, v->type) ? lz_ty(L, v->type) : v->type;
  if (a == v->annot && (t == v->type || !t)) return v;
  Var *n = var_new_as_with_attrs(L->m, v, a);
  n->type = t;
  return n;
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

/* fn[T](ps...) -> ret { body }, with the signature inference gives it (its
 * annotations: fn[T](P1, ...) -> R), so the re-typing keeps the calls of it
 * the pass types. */
static Function *generic_fn(Module *m, TypeParam *tp, Var **ps, uint32_t n, Type *ret, Expr *body, Span sp) {
  Function *f = build_function(m, ps, n, ret, body, NULL, sp);
  f->tparams = arena_alloc(m->arena, sizeof *f->tparams);
  f->tparams[0] = tp;
  f->ntparams = 1;
  Type *sig = type_new(m, TYPE_FUNC, sp);
  sig->func.args = arena_alloc(m->arena, (n ? n : 1) * sizeof *sig->func.args);
  for (uint32_t i = 0; i < n; i++) sig->func.args[i] = ps[i]->annot;
  sig->func.nargs = n;
  sig->func.ret = ret;
  sig->func.tparams = f->tparams;
  sig->func.ntparams = 1;
  f->type = sig;
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
  const Type *ft = type_solved(f->type);
  if (!ft || ft->kind != TYPE_FUNC || ft->func.nargs != f->nparams) return true; /* untyped: leave */
  bool converted = g != L->entry;
  for (uint32_t i = 0; i < f->nparams && !converted; i++)
    if (!crossable(L, ft->func.args[i])) {
      char what[160];
      snprintf(what, sizeof what, "parameter %%%.100s of @%.40s", var_name(f->params[i]), g->name);
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
  rw.pre = pre;
  rw.post = post;
  rw.rebind = rebind;
  rw.keep_types = true; /* a rebuilt node whose children kept their types keeps its own */
  rw.mark_memo = true;  /* nothing in the hooks writes marks */
  L->callee = NULL;
  Var **ps = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof *ps);
  for (uint32_t i = 0; i < f->nparams; i++) {
    Var *p = f->params[i];
    ps[i] = var_new_as_with_attrs(m, p, lz_type(L, p->annot ? p->annot : ft->func.args[i]));
    ps[i]->type = lz_ty(L, ft->func.args[i]);
    rw_subst(&rw, p, typeof_set(&L->tc, build_var(m, ps[i], p->span)));
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
    int64_t sig = 0;
    nf->type = ptrmap_get(&L->new_sigs, g, &sig) ? (Type *)(intptr_t)sig : NULL;
    g->fn = nf;
    return true;
  }
  TypeofCx *tc = &L->tc;
  Expr *lit = typeof_set(tc, build_fn(m, build_function(m, ps, f->nparams, ret, body, NULL, sp), sp));
  LetList ll = {0};
  Expr **args = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof *args);
  for (uint32_t i = 0; i < f->nparams; i++)
    args[i] = wrap(L, &ll, typeof_set(tc, build_var(m, f->params[i], sp)), ft->func.args[i], sp);
  Expr *res = ll_push(L, &ll, typeof_set(tc, build_call(m, lit, args, f->nparams, sp)), sp);
  Function *w = arena_memdup(m->arena, f, sizeof *w);
  w->body = ll_close(L, &ll, unwrap(L, &ll, res, ft->func.ret, sp), sp);
  w->type = f->type; /* the same signature */
  g->fn = w;
  return true;
}

/* The globals to rewrite, and the cell-typed signature of each one rewritten
 * in place (for the nodes that use it, typed before it is rewritten). */
static void note_signatures(Lazy *L, GlobalDef *const *defs, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    GlobalDef *g = defs[i];
    if (!g->fn || is_library(L, g) || fn_skipped_by_function_passes(g->fn) || g == L->entry) continue;
    const Type *ft = type_solved(g->fn->type);
    if (!ft || ft->kind != TYPE_FUNC || ft->func.nargs != g->fn->nparams || !has_tensor(L, ft)) continue;
    Type *sig = lz_ty(L, ft);
    if (sig) ptrmap_put(&L->new_sigs, g, (int64_t)(intptr_t)sig);
  }
}

bool pass_LAZY_GRADIENT_INIT(PassCtx *c); /* the entry point passes.def names */
bool pass_LAZY_GRADIENT_INIT(PassCtx *c) {
  Lazy L = {.m = c->m, .d = c->d};
  uint32_t n = c->m->ndefs; /* the globals present when the pass starts */
  GlobalDef **defs = mem_malloc((n ? n : 1) * sizeof *defs);
  if (n) memcpy(defs, c->m->defs, n * sizeof *defs);
  typeof_init(&L.tc, c->m);
  bool ok = import_library(&L);
  L.entry = module_find_global(c->m, "main");
  if (ok) note_signatures(&L, defs, n);
  for (uint32_t i = 0; ok && i < n; i++) {
    GlobalDef *g = defs[i];
    if (!g->fn || is_library(&L, g) || fn_skipped_by_function_passes(g->fn)) continue;
    ok = lazy_global(&L, g);
  }
  mem_free(defs);
  ptrmap_free(&L.tensor_adts);
  ptrmap_free(&L.new_sigs);
  ptrmap_free(&L.cell_index);
  for (size_t i = 0; i < L.cells.len; i++) {
    mem_free(L.cells.data[i]->unary_ops);
    mem_free(L.cells.data[i]->binary_ops);
  }
  vec_free(L.cells);
  typeof_fini(&L.tc);
  return ok && !L.failed;
}
