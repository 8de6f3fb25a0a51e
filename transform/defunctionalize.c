/* transform/defunctionalize.c — Defunctionalization (spec/passes.md §8.4),
 * applied to @main and every global it reaches.
 *
 * Reynolds' defunctionalization with monomorphisation: every function value
 * becomes a constructor of an ADT that stands for its (concrete) function
 * type, and every call of an unknown function becomes a call of that type's
 * apply function, which matches on the constructor:
 *
 *   type Func0 { Func0_1(float32), Func0_2, }      // fn (float32) -> float32
 *   def @apply0(%f: Func0, %a: float32) -> float32 {
 *     match (%f) { Func0_1(%c) => add(%a, %c), Func0_2 => @g(%a), }
 *   }
 *
 * A literal with free variables v1..vk becomes Func_j(v1, ..., vk); a global,
 * constructor or operator used as a value becomes a field-less constructor;
 * a literal in callee position is beta-reduced (let-bound arguments; a shared
 * literal at its first call only, later calls go through apply); a call
 * of a global whose instantiated type involves functions goes to a clone of
 * that global for the instantiation (`@map_1`), with function types replaced
 * by their ADTs throughout. A recursive `let %f = fn ...` refers to itself
 * through the matched constructor.
 * A polymorphic global used as a value has the global's polymorphic type
 * (it is instantiated where it is called, sema/infer.c): it is encoded at
 * the type its use expects (a call's parameter, or the call's own type for
 * a callee: through the lets and ifs that yield it, conv_at), and a variable
 * let-bound to it stands for it (the let is dropped; each use is the
 * global's, at the use's type). What has no such type is refused.
 *
 * relayc's deviations from TVM (which works with ONE encoded function type:
 * all names derive from the kind FuncType, constructors are named by bare
 * decimal counters): one ADT and one apply function per distinct function
 * type, constructor names that are identifiers, and functions may be stored
 * in ADTs and tuples (List[fn (A) -> B] becomes List[Func0]).
 * Preconditions (reported, not aborted): @main has no type parameters and no
 * function in its parameter or result types. A literal that uses a
 * graph-shared node with an effect of its enclosing code is prepared as in
 * LambdaLift (the node let-bound first, transform/normal_form.h); what that
 * leaves is refused (the apply clause would run the node per call).
 */
#include <string.h>

#include "ir/build.h"
#include "ir/equal.h"
#include "ir/type_any.h"
#include "ir/walk.h"
#include "transform/dagscan.h"
#include "transform/normal_form.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef VEC(Ctor *) CtorVec;
typedef VEC(Clause) ClauseVec;

/* One instantiation of a global (or @main itself): types substituted, then converted. */
typedef struct Inst {
  GlobalDef *orig;
  TypeParam **ps;
  Type **with;    /* concrete types for orig's type parameters */
  uint32_t n;
  GlobalDef *out; /* the clone (or orig itself, converted in place) */
  bool done;
} Inst;

/* How a constructor of a function type's ADT applies. */
typedef enum { CASE_LIT, CASE_GLOBAL, CASE_CTOR, CASE_OP } CaseKind;

typedef struct Case {
  CaseKind kind;
  Ctor *ctor;          /* the encoding constructor */
  Expr *lit;           /* CASE_LIT: the literal (original node) */
  Var *self;           /* CASE_LIT: let variable the literal is bound to, or NULL */
  ExprVarList fvs;     /* CASE_LIT: its free variables (original vars) */
  const Inst *ctx;     /* CASE_LIT: the instantiation it was found in */
  GlobalDef *target;   /* CASE_GLOBAL */
  Ctor *vctor;         /* CASE_CTOR */
  Expr *op;            /* CASE_OP: the operator node */
  bool done;
} Case;

typedef struct FnT {
  Type *type;          /* concrete function type, unconverted */
  TypeDef *adt;
  GlobalDef *apply;
  Var *fparam;         /* %f of the apply function */
  Var **aparams;       /* its %a1..%an */
  VEC(Case *) cases;
  uint32_t ctor_cap;   /* room in adt->ctors (grown by doubling: one copy per case was quadratic) */
} FnT;

typedef struct Df {
  Module *m;
  Diag *d;
  VEC(FnT *) types;
  VEC(Inst *) insts;
  PtrMap self_of;      /* Function* of a let-bound literal -> the let Var* */
  PtrMap alias_of;     /* Var* let-bound to a polymorphic global -> that EXPR_GLOBAL node */
  FvCache *fv;         /* free variables of the literals, linear over nested ones (made on first need) */
  bool any_literal;    /* note_literals met a function literal */
  bool failed;
} Df;

/* What converting one body needs. */
typedef struct Cx {
  Df *df;
  const Inst *inst;
  PtrMap vars;         /* original Var* -> Expr* (its use in the output) */
  PtrMap memo;         /* original Expr* -> converted Expr* (keeps sharing) */
  PtrMap reduced;      /* literals already beta-reduced at a call (at most once each) */
  PtrMap at_of;        /* original Expr* converted by conv_at -> the Type* it was converted at */
} Cx;

static Expr *conv(Cx *c, Expr *e);
static Type *conv_type(Df *df, Type *t);

static bool fail(Df *df, Span sp, const char *msg) {
  if (!df->failed) diag_error(df->d, sp, "Defunctionalization: %s", msg);
  df->failed = true;
  return false;
}

/* The polymorphic global that `let %v = @g` bound v to (the let is dropped:
 * each use of v is converted as a use of @g, at that use's type), or NULL. */
static Expr *alias_of(Df *df, const Var *v) {
  int64_t x;
  return ptrmap_get(&df->alias_of, v, &x) ? (Expr *)(intptr_t)x : NULL;
}

/* ------------------------------------------------------------------- types */

static bool is_fn_type(const Type *t, void *ctx) { return t->kind == TYPE_FUNC; }

static bool has_fn(const Type *t) { return type_any(t, is_fn_type, NULL, 0); }

/* A type variable or an unknown; a polymorphic function type is no instance
 * either, even where the instantiation substituted its variables (a lifted
 * literal's global shares its enclosing global's type parameters). */
static bool not_instance(const Type *t, void *ctx) {
  return t->kind == TYPE_VAR || t->kind == TYPE_INCOMPLETE || t->kind == TYPE_UVAR
         || (t->kind == TYPE_FUNC && t->func.ntparams);
}

static bool has_tvar(const Type *t) { return type_any(t, not_instance, NULL, 0); }

/* The type of an original node under the instantiation. */
static Type *ty(Cx *c, Type *t) {
  return c->inst ? build_type_subst(c->df->m, t, c->inst->ps, c->inst->with, c->inst->n) : t;
}

static FnT *intern(Df *df, Type *t) {
  for (size_t i = 0; i < df->types.len; i++)
    if (type_equal(df->types.data[i]->type, t)) return df->types.data[i];
  Module *m = df->m;
  FnT *f = arena_alloc(m->arena, sizeof *f);
  memset(f, 0, sizeof *f);
  f->type = t;
  char name[64];
  snprintf(name, sizeof name, "Func%zu", df->types.len);
  f->adt = arena_alloc(m->arena, sizeof *f->adt);
  memset(f->adt, 0, sizeof *f->adt);
  f->adt->name = arena_strdup(m->arena, name);
  f->adt->has_body = true;
  snprintf(name, sizeof name, "apply%zu", df->types.len);
  f->apply = build_global_def(m, module_fresh_global_name(m, name), NULL, (Span){0, 0});
  vec_push(df->types, f);
  /* the apply function's parameters (their types converted: may intern more) */
  Type *adt_t = build_type_adt(m, f->adt, NULL, 0);
  f->fparam = var_new(m, "f", (Span){0, 0}, adt_t);
  f->aparams = arena_alloc(m->arena, (t->func.nargs ? t->func.nargs : 1) * sizeof(Var *));
  for (uint32_t i = 0; i < t->func.nargs; i++) f->aparams[i] = var_new(m, "a", (Span){0, 0}, conv_type(df, t->func.args[i]));
  /* the ADT joins the module's type definitions */
  TypeDef **types = arena_alloc(m->arena, (m->ntypes + 1) * sizeof *types);
  if (m->ntypes) memcpy(types, m->types, m->ntypes * sizeof *types);
  types[m->ntypes++] = f->adt;
  m->types = types;
  return f;
}

static Type **conv_types(Df *df, Type **ts, uint32_t n, bool *changed) {
  Type **out = arena_alloc(df->m->arena, (n ? n : 1) * sizeof *out);
  *changed = false;
  for (uint32_t i = 0; i < n; i++) {
    out[i] = conv_type(df, ts[i]);
    *changed |= out[i] != ts[i];
  }
  return out;
}

/* Function types become their ADTs, everywhere inside t. */
static Type *conv_type(Df *df, Type *t) {
  if (!t || !has_fn(t) || stack_exhausted()) return t;
  bool ch = false;
  Type *r;
  switch (t->kind) {
  case TYPE_FUNC:
    return build_type_adt(df->m, intern(df, t)->adt, NULL, 0);
  case TYPE_TUPLE:
    r = type_new(df->m, TYPE_TUPLE, t->span);
    r->tuple.fields = conv_types(df, t->tuple.fields, t->tuple.n, &ch);
    r->tuple.n = t->tuple.n;
    return r;
  case TYPE_ADT:
    r = type_new(df->m, TYPE_ADT, t->span);
    r->adt = t->adt;
    r->adt.args = conv_types(df, t->adt.args, t->adt.nargs, &ch);
    return r;
  case TYPE_REF:
    r = type_new(df->m, TYPE_REF, t->span);
    r->ref.inner = conv_type(df, t->ref.inner);
    return r;
  default:
    return t;
  }
}

/* ----------------------------------------------------------- instantiation */

static bool needs_clone(GlobalDef *g) {
  Function *f = g->fn;
  if (f->ntparams) return true;
  for (uint32_t i = 0; i < f->nparams; i++)
    if (has_fn(f->params[i]->annot ? f->params[i]->annot : f->params[i]->type)) return true;
  return has_fn(f->type ? f->type->func.ret : f->ret_annot);
}

/* A type nothing constrained (`_`: e.g. the element type of `Cons(Nil, Nil)`'s
 * inner list) can be any type: use (), so the instance is concrete. */
static Type *fill_unknown(Df *df, Type *t) {
  if (!t || stack_exhausted()) return t;
  Type *r;
  bool ch = false;
  switch (t->kind) {
  case TYPE_INCOMPLETE: case TYPE_UVAR:
    r = type_new(df->m, TYPE_TUPLE, t->span);
    return r;
  case TYPE_TUPLE: {
    Type **f = arena_alloc(df->m->arena, (t->tuple.n ? t->tuple.n : 1) * sizeof *f);
    for (uint32_t i = 0; i < t->tuple.n; i++) ch |= (f[i] = fill_unknown(df, t->tuple.fields[i])) != t->tuple.fields[i];
    if (!ch) return t;
    r = type_new(df->m, TYPE_TUPLE, t->span);
    r->tuple.fields = f;
    r->tuple.n = t->tuple.n;
    return r;
  }
  case TYPE_ADT: {
    Type **a = arena_alloc(df->m->arena, (t->adt.nargs ? t->adt.nargs : 1) * sizeof *a);
    for (uint32_t i = 0; i < t->adt.nargs; i++) ch |= (a[i] = fill_unknown(df, t->adt.args[i])) != t->adt.args[i];
    if (!ch) return t;
    r = type_new(df->m, TYPE_ADT, t->span);
    r->adt = t->adt;
    r->adt.args = a;
    return r;
  }
  case TYPE_FUNC: {
    Type **a = arena_alloc(df->m->arena, (t->func.nargs ? t->func.nargs : 1) * sizeof *a);
    for (uint32_t i = 0; i < t->func.nargs; i++) ch |= (a[i] = fill_unknown(df, t->func.args[i])) != t->func.args[i];
    Type *ret = fill_unknown(df, t->func.ret);
    if (!ch && ret == t->func.ret) return t;
    r = type_new(df->m, TYPE_FUNC, t->span);
    r->func = t->func;
    r->func.args = a;
    r->func.ret = ret;
    return r;
  }
  case TYPE_REF: {
    Type *in = fill_unknown(df, t->ref.inner);
    if (in == t->ref.inner) return t;
    r = type_new(df->m, TYPE_REF, t->span);
    r->ref.inner = in;
    return r;
  }
  default:
    return t;
  }
}

/* The global to call for @g used at the concrete type `at`. */
static GlobalDef *instance(Df *df, GlobalDef *g, Type *at, Span sp) {
  Function *f = g->fn;
  uint32_t n = f->ntparams;
  Type **with = arena_alloc(df->m->arena, (n ? n : 1) * sizeof *with);
  memset(with, 0, (n ? n : 1) * sizeof *with);
  build_type_match(f->type, at, f->tparams, with, n);
  for (uint32_t i = 0; i < n; i++) {
    with[i] = with[i] ? fill_unknown(df, with[i]) : type_new(df->m, TYPE_TUPLE, sp);
    if (has_tvar(with[i])) {
      fail(df, sp, "the type arguments of this call are not known (annotate the polymorphic function's use)");
      return g;
    }
  }
  for (size_t i = 0; i < df->insts.len; i++) {
    Inst *in = df->insts.data[i];
    if (in->orig != g) continue;
    bool same = true;
    for (uint32_t k = 0; k < n && same; k++) same = type_equal(in->with[k], with[k]);
    if (same) return in->out;
  }
  Inst *in = arena_alloc(df->m->arena, sizeof *in);
  memset(in, 0, sizeof *in);
  in->orig = g;
  in->ps = f->tparams;
  in->with = with;
  in->n = n;
  if (needs_clone(g)) {
    char name[256];
    snprintf(name, sizeof name, "%.200s_defunc", g->name);
    in->out = build_global_def(df->m, module_fresh_global_name(df->m, name), NULL, g->span);
  } else {
    in->out = g;
  }
  vec_push(df->insts, in);
  return in->out;
}

/* -------------------------------------------------------------- encodings */

static Case *new_case(Df *df, FnT *ft, CaseKind kind, Type **fields, uint32_t nfields) {
  Module *m = df->m;
  Case *cs = arena_alloc(m->arena, sizeof *cs);
  memset(cs, 0, sizeof *cs);
  cs->kind = kind;
  Ctor *k = arena_alloc(m->arena, sizeof *k);
  memset(k, 0, sizeof *k);
  char name[96];
  snprintf(name, sizeof name, "%s_%zu", ft->adt->name, ft->cases.len + 1);
  k->name = arena_strdup(m->arena, name);
  k->fields = nfields ? arena_memdup(m->arena, fields, nfields * sizeof *fields) : NULL;
  k->nfields = nfields;
  k->owner = ft->adt;
  k->tag = (uint32_t)ft->cases.len;
  cs->ctor = k;
  vec_push(ft->cases, cs);
  if (ft->adt->nctors == ft->ctor_cap) {
    ft->ctor_cap = ft->ctor_cap ? 2 * ft->ctor_cap : 4;
    Ctor **ctors = arena_alloc(m->arena, ft->ctor_cap * sizeof *ctors);
    if (ft->adt->nctors) memcpy(ctors, ft->adt->ctors, ft->adt->nctors * sizeof *ctors);
    ft->adt->ctors = ctors;
  }
  ft->adt->ctors[ft->adt->nctors++] = k;
  return cs;
}

/* A field-less case for a global / constructor / operator value (one each). */
static Expr *encode_named(Cx *c, FnT *ft, CaseKind kind, const void *what, Expr *e) {
  for (size_t i = 0; i < ft->cases.len; i++) {
    Case *cs = ft->cases.data[i];
    if (cs->kind == kind && (kind == CASE_GLOBAL ? (const void *)cs->target
                             : kind == CASE_CTOR ? (const void *)cs->vctor
                                                 : (const void *)(intptr_t)cs->op->op.id) == what)
      return build_call(c->df->m, build_ctor(c->df->m, cs->ctor, e->span), NULL, 0, e->span);
  }
  Case *cs = new_case(c->df, ft, kind, NULL, 0);
  if (kind == CASE_GLOBAL) cs->target = (GlobalDef *)what;
  else if (kind == CASE_CTOR) cs->vctor = (Ctor *)what;
  else cs->op = e;
  return build_call(c->df->m, build_ctor(c->df->m, cs->ctor, e->span), NULL, 0, e->span);
}

static Expr *use_of(Cx *c, Var *v, Span sp) {
  int64_t x;
  if (ptrmap_get(&c->vars, v, &x)) return (Expr *)(intptr_t)x;
  return build_var(c->df->m, v, sp); /* free in the program: left alone */
}

/* A literal used as a value: a new constructor of its function type's ADT.
 * `at` (or NULL) is the concrete type the use expects: a polymorphic literal
 * (`fn [A](%x: A) -> A {...}` passed to a higher-order function) is encoded
 * at that instance, its type parameters substituted in the apply clause. */
static Expr *encode_literal(Cx *c, Expr *e, Type *at) {
  Df *df = c->df;
  Type *t = ty(c, e->type);
  const Inst *ctx = c->inst;
  Function *lf = e->fn;
  if (lf->ntparams && at && at->kind == TYPE_FUNC && !has_tvar(at)) {
    uint32_t n0 = ctx ? ctx->n : 0, n = n0 + lf->ntparams;
    Inst *in = arena_alloc(df->m->arena, sizeof *in);
    memset(in, 0, sizeof *in);
    in->ps = arena_alloc(df->m->arena, n * sizeof *in->ps);
    in->with = arena_alloc(df->m->arena, n * sizeof *in->with);
    memset(in->with, 0, n * sizeof *in->with);
    if (n0) {
      memcpy(in->ps, ctx->ps, n0 * sizeof *in->ps);
      memcpy(in->with, ctx->with, n0 * sizeof *in->with);
    }
    memcpy(in->ps + n0, lf->tparams, lf->ntparams * sizeof *in->ps);
    build_type_match(t, at, lf->tparams, in->with + n0, lf->ntparams);
    for (uint32_t i = n0; i < n; i++)
      in->with[i] = in->with[i] ? fill_unknown(df, in->with[i]) : type_new(df->m, TYPE_TUPLE, e->span);
    in->n = n;
    in->orig = ctx ? ctx->orig : NULL;
    ctx = in;
    t = at;
  }
  if (has_tvar(t)) {
    fail(df, e->span, "a polymorphic function literal used as a value is not supported");
    return e;
  }
  FnT *ft = intern(df, t);
  int64_t sv = 0;
  Var *self = ptrmap_get(&df->self_of, e->fn, &sv) ? (Var *)(intptr_t)sv : NULL;
  ExprVarList fvs = {0};
  if (!df->fv) df->fv = fv_cache_new(df->m);
  fv_cache_get(df->fv, e->fn, self, &fvs);
  size_t kept = 0; /* a variable standing for a global is no capture */
  for (size_t i = 0; i < fvs.len; i++)
    if (!alias_of(df, fvs.data[i])) fvs.data[kept++] = fvs.data[i];
  fvs.len = kept;
  Type **fields = arena_alloc(df->m->arena, (fvs.len ? fvs.len : 1) * sizeof *fields);
  Expr **args = arena_alloc(df->m->arena, (fvs.len ? fvs.len : 1) * sizeof *args);
  for (size_t i = 0; i < fvs.len; i++) {
    fields[i] = conv_type(df, ty(c, fvs.data[i]->type));
    args[i] = use_of(c, fvs.data[i], e->span);
  }
  Case *cs = new_case(df, ft, CASE_LIT, fields, (uint32_t)fvs.len);
  cs->lit = e;
  cs->self = self;
  cs->fvs = fvs;
  cs->ctx = ctx;
  return build_call(df->m, build_ctor(df->m, cs->ctor, e->span), args, (uint32_t)fvs.len, e->span);
}

/* ------------------------------------------------------------ expressions */

static Var *fresh_binder(Cx *c, Var *v) {
  Var *n = var_new_as(c->df->m, v, conv_type(c->df, ty(c, v->type)));
  ptrmap_put(&c->vars, v, (int64_t)(intptr_t)build_var(c->df->m, n, v->span));
  return n;
}

static Pattern *conv_pattern(Cx *c, Pattern *p) {
  Pattern *q = pattern_new(c->df->m, p->kind, p->span);
  switch (p->kind) {
  case PAT_VAR: q->var = fresh_binder(c, p->var); break;
  case PAT_CTOR:
    q->ctor = p->ctor;
    q->ctor.args = arena_alloc(c->df->m->arena, (p->ctor.nargs ? p->ctor.nargs : 1) * sizeof(Pattern *));
    for (uint32_t i = 0; i < p->ctor.nargs; i++) q->ctor.args[i] = conv_pattern(c, p->ctor.args[i]);
    break;
  case PAT_TUPLE:
    q->tuple.n = p->tuple.n;
    q->tuple.fields = arena_alloc(c->df->m->arena, (p->tuple.n ? p->tuple.n : 1) * sizeof(Pattern *));
    for (uint32_t i = 0; i < p->tuple.n; i++) q->tuple.fields[i] = conv_pattern(c, p->tuple.fields[i]);
    break;
  default: break;
  }
  return q;
}

static Expr **conv_list(Cx *c, Expr **xs, uint32_t n) {
  Expr **out = arena_alloc(c->df->m->arena, (n ? n : 1) * sizeof *out);
  for (uint32_t i = 0; i < n; i++) out[i] = conv(c, xs[i]);
  return out;
}

/* A polymorphic global used as a value: its type is the global's own, not
 * an instance (it is instantiated where it is called, sema/infer.c). */
static bool is_polymorphic_global(const Expr *e) {
  return e->kind == EXPR_GLOBAL && e->global.def && e->global.def->fn && e->type && e->type->kind == TYPE_FUNC &&
         e->type->func.ntparams;
}

/* The polymorphic global node that value e stands for (@g itself, or a
 * variable let-bound to it), or NULL: a let of it binds an alias. */
static Expr *let_alias(Df *df, Expr *e) {
  if (is_polymorphic_global(e)) return e;
  return e->kind == EXPR_VAR && e->var.var ? alias_of(df, e->var.var) : NULL;
}

/* A global used as a value, at the type `at` its use expects (NULL: its own
 * type, which must then be an instance). */
static Expr *encode_global(Cx *c, Expr *e, Type *at) {
  Type *t = at ? at : ty(c, e->type);
  if (!t || t->kind != TYPE_FUNC || has_tvar(t)) {
    fail(c->df, e->span, "cannot tell the type of this function value (a polymorphic global used as a value, "
                         "not where a function type is expected)");
    return e;
  }
  return encode_named(c, intern(c->df, t), CASE_GLOBAL, instance(c->df, e->global.def, t, e->span), e);
}

static bool is_polymorphic_type(const Type *t) { return t && t->kind == TYPE_FUNC && t->func.ntparams; }

static Expr *conv_tail(Cx *c, Expr *e, Type *at);

/* e at the type `at` its use expects (a call's parameter, the call's own
 * type for its callee, a function's result type for its body), or NULL: a
 * polymorphic value's own type is no instance, so each polymorphic global
 * or literal it yields is encoded at `at` (through lets, ifs and matches:
 * conv_tail). Other values are converted as they are. A let, if or match
 * shared by uses at two instances cannot be one encoding: refused. */
static Expr *conv_at(Cx *c, Expr *e, Type *at) {
  if (!at || at->kind != TYPE_FUNC) return conv(c, e);
  if (e->kind == EXPR_FN) return e->fn->ntparams ? encode_literal(c, e, at) : conv(c, e);
  if (let_alias(c->df, e)) return encode_global(c, let_alias(c->df, e), at);
  if (e->kind != EXPR_LET && e->kind != EXPR_IF && e->kind != EXPR_MATCH) return conv(c, e);
  int64_t x;
  if (ptrmap_get(&c->memo, e, &x)) {
    int64_t was;
    bool same = ptrmap_get(&c->at_of, e, &was) ? type_equal((Type *)(intptr_t)was, at) : !is_polymorphic_type(e->type);
    if (same) return (Expr *)(intptr_t)x;
    fail(c->df, e->span, "a polymorphic function value used at two types is not supported");
    return e;
  }
  if (c->df->failed) return e;
  Expr *r = conv_tail(c, e, at);
  ptrmap_put(&c->memo, e, (int64_t)(intptr_t)r);
  ptrmap_put(&c->at_of, e, (int64_t)(intptr_t)at);
  return r;
}

/* A let, if or match, its value(s) converted at `at` (NULL: as they are). */
static Expr *conv_tail(Cx *c, Expr *e, Type *at) {
  Module *m = c->df->m;
  switch (e->kind) {
  case EXPR_LET: {
    if (let_alias(c->df, e->let.value)) {
      ptrmap_put(&c->df->alias_of, e->let.var, (int64_t)(intptr_t)let_alias(c->df, e->let.value));
      return conv_at(c, e->let.body, at);
    }
    Var *v = fresh_binder(c, e->let.var);
    Expr *val = conv(c, e->let.value);
    return build_let(m, v, val, conv_at(c, e->let.body, at), e->span);
  }
  case EXPR_IF:
    return build_if(m, conv(c, e->if_.cond), conv_at(c, e->if_.then_, at), conv_at(c, e->if_.else_, at), e->span);
  case EXPR_MATCH: {
    Expr *scrut = conv(c, e->match.scrut);
    Clause *cl = arena_alloc(m->arena, (e->match.nclauses ? e->match.nclauses : 1) * sizeof *cl);
    for (uint32_t i = 0; i < e->match.nclauses; i++) {
      cl[i] = e->match.clauses[i];
      cl[i].pattern = conv_pattern(c, e->match.clauses[i].pattern);
      cl[i].body = conv_at(c, e->match.clauses[i].body, at);
    }
    return build_match(m, scrut, cl, e->match.nclauses, e->match.partial, e->span);
  }
  default:
    return conv(c, e);
  }
}

/* The arguments of a call whose callee has the (instantiated, unconverted)
 * function type `ft`: a polymorphic literal argument is encoded at the
 * parameter's type. */
static Expr **conv_args(Cx *c, Expr **xs, uint32_t n, Type *ft) {
  Expr **out = arena_alloc(c->df->m->arena, (n ? n : 1) * sizeof *out);
  bool typed = ft && ft->kind == TYPE_FUNC && ft->func.nargs == n;
  for (uint32_t i = 0; i < n; i++) out[i] = typed ? conv_at(c, xs[i], ft->func.args[i]) : conv(c, xs[i]);
  return out;
}

/* The callee's type at this call, from the call's own argument and result
 * types: a global callee node shared by several calls (LambdaLift lifts a
 * literal called at two types into ONE @lifted node) records only the last
 * call's instantiation, and both calls went to that instance (ill-typed:
 * pass fuzzer, session 9 seed 8 input 4923). The callee's record when a type
 * is missing (and, at the caller, when an argument is a polymorphic literal,
 * whose own type is no instance). */
static Type *call_instance_type(Module *m, Expr *e) {
  uint32_t n = e->call.nargs;
  if (!e->type) return e->call.fn->type;
  for (uint32_t i = 0; i < n; i++)
    if (!e->call.args[i]->type) return e->call.fn->type;
  Type *t = type_new(m, TYPE_FUNC, e->span);
  t->func.nargs = n;
  t->func.args = arena_alloc(m->arena, (n ? n : 1) * sizeof *t->func.args);
  for (uint32_t i = 0; i < n; i++) t->func.args[i] = e->call.args[i]->type;
  t->func.ret = e->type;
  return t;
}

/* e, a call of global g (written as @g, or as a variable let-bound to it):
 * a call of g's instance at this call's type. */
static Expr *call_global(Cx *c, Expr *e, GlobalDef *def) {
  Module *m = c->df->m;
  Expr *f = e->call.fn;
  Type *at = ty(c, call_instance_type(m, e));
  if (has_tvar(at)) at = ty(c, f->type); /* a polymorphic argument: its type is not the instance */
  GlobalDef *g = instance(c->df, def, at, f->span);
  return build_call(m, build_global(m, g, f->span), conv_args(c, e->call.args, e->call.nargs, at), e->call.nargs,
                    e->span);
}

static Expr *conv_call(Cx *c, Expr *e) {
  Df *df = c->df;
  Module *m = df->m;
  Expr *f = e->call.fn;
  Expr *r;
  switch (f->kind) {
  case EXPR_OP:
  case EXPR_CTOR:
    r = build_copy(m, e);
    r->call.fn = build_copy(m, f); /* a callee node is typed per use: never share it across instances */
    r->call.args = conv_list(c, e->call.args, e->call.nargs);
    return r;
  case EXPR_GLOBAL:
    if (f->global.def && f->global.def->fn) return call_global(c, e, f->global.def);
    break;
  case EXPR_VAR:
    if (f->var.var && alias_of(df, f->var.var)) return call_global(c, e, alias_of(df, f->var.var)->global.def);
    break;
  case EXPR_FN: {
    /* (fn (p...) { b })(a...)  ->  let %p = a; ... b */
    Function *fn = f->fn;
    /* a polymorphic literal goes through apply at this call's instance: its
     * binders' types name its own type parameters, which no instantiation
     * here substitutes (fuzz session 15: `%v is annotated A`) */
    if (fn->nparams != e->call.nargs || fn->ntparams) break;
    /* a shared literal called again goes through apply like any function
     * value: its body's conversion is memoised by node, so a second
     * reduction would reuse the first one's nodes, which use the first
     * call's parameter binders (shared_let_fn.relay printed `add(%z, ...)`
     * with %z bound only in the first copy) */
    if (ptrmap_find(&c->reduced, f)) break;
    ptrmap_put(&c->reduced, f, 1);
    Expr **args = conv_list(c, e->call.args, e->call.nargs);
    Var **ps = arena_alloc(m->arena, (fn->nparams ? fn->nparams : 1) * sizeof *ps);
    for (uint32_t i = 0; i < fn->nparams; i++) ps[i] = fresh_binder(c, fn->params[i]);
    r = conv_at(c, fn->body, ty(c, e->type));
    for (uint32_t i = fn->nparams; i-- > 0;) r = build_let(m, ps[i], args[i], r, e->span);
    return r;
  }
  default:
    break;
  }
  Type *ft = ty(c, f->type);
  if (is_polymorphic_type(ft)) ft = ty(c, call_instance_type(m, e)); /* instantiated here, at the call */
  if (!ft || ft->kind != TYPE_FUNC || has_tvar(ft)) {
    fail(df, e->span, "cannot tell the type of the function called here");
    return e;
  }
  FnT *t = intern(df, ft);
  Expr **args = arena_alloc(m->arena, (e->call.nargs + 1) * sizeof *args);
  args[0] = conv_at(c, f, ft);
  Expr **rest = conv_args(c, e->call.args, e->call.nargs, ft);
  memcpy(args + 1, rest, e->call.nargs * sizeof *args);
  return build_call(m, build_global(m, t->apply, e->span), args, e->call.nargs + 1, e->span);
}

static Expr *conv_value(Cx *c, Expr *e, CaseKind kind, const void *what) {
  Type *t = ty(c, e->type);
  if (!t || t->kind != TYPE_FUNC || has_tvar(t)) {
    fail(c->df, e->span, "cannot tell the type of this function value");
    return e;
  }
  return encode_named(c, intern(c->df, t), kind, what, e);
}

static Expr *conv_kind(Cx *c, Expr *e) {
  Module *m = c->df->m;
  Expr *r;
  switch (e->kind) {
  case EXPR_VAR:
    if (alias_of(c->df, e->var.var)) return encode_global(c, alias_of(c->df, e->var.var), ty(c, e->type));
    return use_of(c, e->var.var, e->span);
  case EXPR_CONST: return e;
  case EXPR_GLOBAL:
    if (!e->global.def || !e->global.def->fn) return e;
    return encode_global(c, e, NULL);
  case EXPR_CTOR: return conv_value(c, e, CASE_CTOR, e->ctor.ctor);
  case EXPR_OP: return conv_value(c, e, CASE_OP, (const void *)(intptr_t)e->op.id);
  case EXPR_FN: return encode_literal(c, e, NULL);
  case EXPR_CALL: return conv_call(c, e);
  case EXPR_TUPLE: return build_tuple(m, conv_list(c, e->tuple.fields, e->tuple.n), e->tuple.n, e->span);
  case EXPR_PROJ: return build_proj(m, conv(c, e->proj.tuple), e->proj.index, e->span);
  case EXPR_LET:
  case EXPR_IF:
  case EXPR_MATCH:
    return conv_tail(c, e, NULL);
  case EXPR_REF_NEW: return build_ref_new(m, conv(c, e->ref.arg), e->span);
  case EXPR_REF_READ: return build_ref_read(m, conv(c, e->ref.arg), e->span);
  case EXPR_REF_WRITE:
    return build_ref_write(m, conv(c, e->ref_write.ref), conv(c, e->ref_write.value), e->span);
  default:
    r = e;
    return r;
  }
}

static Expr *conv(Cx *c, Expr *e) {
  int64_t x;
  if (ptrmap_get(&c->memo, e, &x)) return (Expr *)(intptr_t)x;
  if (c->df->failed) return e;
  if (stack_exhausted()) {
    fail(c->df, e->span, "expression nested too deeply");
    return e;
  }
  Expr *r = conv_kind(c, e);
  ptrmap_put(&c->memo, e, (int64_t)(intptr_t)r);
  return r;
}

/* ---------------------------------------------------------------- driving */

static void cx_init(Cx *c, Df *df, const Inst *in) {
  memset(c, 0, sizeof *c);
  c->df = df;
  c->inst = in;
}

static void cx_fini(Cx *c) {
  ptrmap_free(&c->vars);
  ptrmap_free(&c->memo);
  ptrmap_free(&c->reduced);
  ptrmap_free(&c->at_of);
}

static void do_inst(Df *df, Inst *in) {
  in->done = true;
  Module *m = df->m;
  Function *f = in->orig->fn;
  Cx c;
  cx_init(&c, df, in);
  Var **ps = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof *ps);
  for (uint32_t i = 0; i < f->nparams; i++) ps[i] = fresh_binder(&c, f->params[i]);
  Type *ret = conv_type(df, ty(&c, f->type->func.ret));
  Expr *body = conv_at(&c, f->body, ty(&c, f->type->func.ret));
  Function *nf = build_function(m, ps, f->nparams, ret, body, f->attrs, f->span);
  if (in->out == in->orig && f->ntparams) { /* never: polymorphic globals are cloned */
    nf->tparams = f->tparams;
    nf->ntparams = f->ntparams;
  }
  in->out->fn = nf;
  cx_fini(&c);
}

static Clause make_clause(Df *df, FnT *ft, Case *cs) {
  Module *m = df->m;
  Span sp = {0, 0};
  uint32_t na = ft->type->func.nargs;
  Expr **args = arena_alloc(m->arena, (na ? na : 1) * sizeof *args);
  for (uint32_t i = 0; i < na; i++) args[i] = build_var(m, ft->aparams[i], sp);
  Pattern *p = pattern_new(m, PAT_CTOR, sp);
  p->ctor.name = cs->ctor->name;
  p->ctor.ctor = cs->ctor;
  Clause cl = {p, NULL, sp};
  switch (cs->kind) {
  case CASE_GLOBAL: cl.body = build_call(m, build_global(m, cs->target, sp), args, na, sp); break;
  case CASE_CTOR: cl.body = build_call(m, build_ctor(m, cs->vctor, sp), args, na, sp); break;
  case CASE_OP: {
    Expr *op = build_copy(m, cs->op);
    cl.body = build_call(m, op, args, na, sp);
    break;
  }
  case CASE_LIT: {
    Cx c;
    cx_init(&c, df, cs->ctx);
    uint32_t nf = (uint32_t)cs->fvs.len;
    p->ctor.args = arena_alloc(m->arena, (nf ? nf : 1) * sizeof(Pattern *));
    p->ctor.nargs = nf;
    for (uint32_t i = 0; i < nf; i++) {
      Pattern *pv = pattern_new(m, PAT_VAR, sp);
      pv->var = fresh_binder(&c, cs->fvs.data[i]);
      p->ctor.args[i] = pv;
    }
    Function *lf = cs->lit->fn;
    for (uint32_t i = 0; i < lf->nparams && i < na; i++)
      ptrmap_put(&c.vars, lf->params[i], (int64_t)(intptr_t)args[i]);
    if (cs->self) ptrmap_put(&c.vars, cs->self, (int64_t)(intptr_t)build_var(m, ft->fparam, sp));
    cl.body = conv_at(&c, lf->body, ft->type->func.ret);
    cx_fini(&c);
    break;
  }
  }
  cs->done = true;
  return cl;
}

static void note_self(Expr *e, void *ud) {
  Df *df = ud;
  if (e->kind == EXPR_FN) df->any_literal = true;
  if (e->kind == EXPR_LET && e->let.value->kind == EXPR_FN)
    ptrmap_put(&df->self_of, e->let.value->fn, (int64_t)(intptr_t)e->let.var);
}

/* One walk of every global (literal bodies entered): the let variable of
 * each let-bound literal into df->self_of (afresh); true when the globals
 * hold any function literal at all. */
static bool note_literals(Df *df) {
  ptrmap_free(&df->self_of);
  df->self_of = (PtrMap){0};
  df->any_literal = false;
  for (uint32_t i = 0; i < df->m->ndefs; i++)
    if (df->m->defs[i]->fn) walk_post_order(df->m->defs[i]->fn->body, true, note_self, df);
  return df->any_literal;
}

/* Notes the let-bound literals (note_literals). A literal using a shared
 * node with an effect captures it let-bound; what binding leaves is refused
 * (false). Code without literals has no such node (two scans of every node
 * for it were 39% of the pass's instructions on a 10,000-let chain), code
 * where no literal captured one nothing to refuse. */
static bool prepare_literals(Df *df, PassCtx *pc) {
  bool captured = false;
  if (!note_literals(df)) return true;
  if (!normal_form_bind_captured_effects(pc, &captured)) return false;
  if (!captured) return true;
  for (uint32_t i = 0; i < df->m->ndefs; i++)
    if (df->m->defs[i]->fn && dag_literal_captures_effect(df->m->defs[i]->fn))
      return fail(df, df->m->defs[i]->span, "a function literal uses a node with an effect that the enclosing code "
                                            "shares: it runs once, where the literal is made, but would run on every "
                                            "call of the literal's apply clause");
  note_literals(df); /* the binding rebuilt literals */
  return true;
}

bool pass_DEFUNCTIONALIZATION(PassCtx *pc) {
  Module *m = pc->m;
  GlobalDef *main = module_find_global(m, "main");
  if (!main || !main->fn) return true;
  Df df = {0};
  df.m = m;
  df.d = pc->d;
  Function *f = main->fn;
  if (f->ntparams) return fail(&df, main->span, "@main must not have type parameters");
  for (uint32_t i = 0; i < f->nparams; i++)
    if (has_fn(f->params[i]->type))
      return fail(&df, f->params[i]->span, "@main must not take functions as parameters");
  if (has_fn(f->type->func.ret)) return fail(&df, main->span, "@main must not return a function");
  if (!prepare_literals(&df, pc)) {
    ptrmap_free(&df.self_of);
    return false;
  }
  Inst *root = arena_alloc(m->arena, sizeof *root);
  memset(root, 0, sizeof *root);
  root->orig = main;
  root->out = main;
  vec_push(df.insts, root);
  /* work list: instantiations and apply clauses until nothing new appears */
  VEC(ClauseVec) clauses = {0};
  bool progress = true;
  while (progress && !df.failed) {
    progress = false;
    for (size_t i = 0; i < df.insts.len && !df.failed; i++)
      if (!df.insts.data[i]->done) {
        do_inst(&df, df.insts.data[i]);
        progress = true;
      }
    for (size_t t = 0; t < df.types.len && !df.failed; t++) {
      while (clauses.len <= t) {
        ClauseVec empty = {0};
        vec_push(clauses, empty);
      }
      FnT *ft = df.types.data[t];
      for (size_t k = 0; k < ft->cases.len && !df.failed; k++)
        if (!ft->cases.data[k]->done) {
          Clause cl = make_clause(&df, ft, ft->cases.data[k]);
          vec_push(clauses.data[t], cl);
          progress = true;
        }
    }
  }
  for (size_t t = 0; t < df.types.len && !df.failed; t++) {
    FnT *ft = df.types.data[t];
    uint32_t na = ft->type->func.nargs;
    Var **ps = arena_alloc(m->arena, (na + 1) * sizeof *ps);
    ps[0] = ft->fparam;
    if (na) memcpy(ps + 1, ft->aparams, na * sizeof *ps); /* fn () -> T: no parameters, maybe NULL */
    ClauseVec *cv = &clauses.data[t];
    Expr *body = build_match(m, build_var(m, ft->fparam, (Span){0, 0}), cv->data, (uint32_t)cv->len, false,
                             (Span){0, 0});
    ft->apply->fn = build_function(m, ps, na + 1, conv_type(&df, ft->type->func.ret), body, NULL, (Span){0, 0});
  }
  for (size_t t = 0; t < clauses.len; t++) vec_free(clauses.data[t]);
  vec_free(clauses);
  for (size_t t = 0; t < df.types.len; t++)
    for (size_t k = 0; k < df.types.data[t]->cases.len; k++) vec_free(df.types.data[t]->cases.data[k]->fvs);
  for (size_t t = 0; t < df.types.len; t++) vec_free(df.types.data[t]->cases);
  vec_free(df.types);
  vec_free(df.insts);
  ptrmap_free(&df.self_of);
  ptrmap_free(&df.alias_of);
  fv_cache_free(df.fv);
  return !df.failed;
}
