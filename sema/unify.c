/* sema/unify.c — unification variables, unification, substitution, zonking.
 *
 * Invariants: a bound uvar is never rebound; ty_find returns a non-uvar or an
 * unbound uvar; binding performs an occurs check so types stay finite; the
 * error type (cx->err) unifies with anything without binding it, and a uvar
 * unified with it becomes the error type. Tensor dims unify as TVM's solver
 * does: equal extents, or `?` on either side (Any matches everything), and a
 * symbolic size matches any extent. Walkers are bounded by stack_exhausted().
 */
#include "sema/typing.h"

#include <string.h>

#include "ir/print.h"
#include "ir/type_any.h"

void ty_init(TyCx *cx, Module *m, Diag *d) {
  memset(cx, 0, sizeof *cx);
  cx->m = m;
  cx->d = d;
  cx->a = m->arena;
  cx->err = type_new(m, TYPE_INCOMPLETE, (Span){0, 0});
  cx->unknown = type_new(m, TYPE_INCOMPLETE, (Span){0, 0});
}

void ty_fini(TyCx *cx) {
  vec_free(cx->waits);
  vec_free(cx->cons);
  vec_free(cx->queue);
}

Type *ty_fresh(TyCx *cx) {
  Type *t = type_new(cx->m, TYPE_UVAR, (Span){0, 0});
  t->uvar.id = (uint32_t)cx->waits.len;
  vec_push(cx->waits, NULL);
  return t;
}

Type *ty_find(Type *t) {
  Type *r = type_solved(t);
  while (t->kind == TYPE_UVAR && t->uvar.link && t->uvar.link != r) {
    Type *next = t->uvar.link;
    t->uvar.link = r;
    t = next;
  }
  return r;
}

bool ty_is_err(TyCx *cx, Type *t) { return ty_find(t) == cx->err; }

Type *ty_tensor_scalar(TyCx *cx, DType dt) { return type_scalar(cx->m, dt); }

Type *ty_func(TyCx *cx, Type **args, uint32_t n, Type *ret) {
  Type *t = type_new(cx->m, TYPE_FUNC, (Span){0, 0});
  t->func.args = n ? arena_memdup(cx->a, args, n * sizeof *args) : NULL;
  t->func.nargs = n;
  t->func.ret = ret;
  return t;
}

Type *ty_tuple(TyCx *cx, Type **fields, uint32_t n) {
  Type *t = type_new(cx->m, TYPE_TUPLE, (Span){0, 0});
  t->tuple.fields = n ? arena_memdup(cx->a, fields, n * sizeof *fields) : NULL;
  t->tuple.n = n;
  return t;
}

/* ------------------------------------------------------------ occurs check */

static bool is_that_uvar(const Type *t, void *u) { return t == u; }

/* Does u occur in t (links followed)? Too deep to tell counts as yes. */
static bool occurs(Type *u, Type *t) { return type_any(t, is_that_uvar, u, TYPE_ANY_SOLVED | TYPE_ANY_MISSING); }

static void bind(TyCx *cx, Type *u, Type *t) {
  u->uvar.link = t;
  if (u->uvar.id < cx->waits.len && cx->waits.data[u->uvar.id]) solver_wake(cx, u->uvar.id);
}

/* -------------------------------------------------------------- unification */

static bool dims_unify(const Type *a, const Type *b) {
  if (!dtype_eq(a->tensor.dtype, b->tensor.dtype)) return false;
  if (a->tensor.ndim != b->tensor.ndim) return false;
  for (uint32_t i = 0; i < a->tensor.ndim; i++) {
    Dim x = a->tensor.dims[i], y = b->tensor.dims[i];
    if (x.kind == DIM_ANY || y.kind == DIM_ANY) continue;
    if (x.kind == DIM_SYM && y.kind == DIM_SYM) {
      if (x.value != y.value) return false;
      continue;
    }
    if (x.kind == DIM_SYM || y.kind == DIM_SYM) continue;
    if (x.value != y.value) return false;
  }
  return true;
}

static bool unify_list(TyCx *cx, Type **a, Type **b, uint32_t n) {
  bool ok = true;
  for (uint32_t i = 0; i < n; i++)
    if (!ty_unify(cx, a[i], b[i])) ok = false;
  return ok;
}

static Type *var_type(TyCx *cx, TypeParam *p) {
  Type *t = type_new(cx->m, TYPE_VAR, p->span);
  t->var.param = p;
  return t;
}

/* Function types unify as in TVM: with a the side with more type parameters,
 * a's first parameters are renamed to b's and its extra ones instantiated with
 * fresh unknowns, so `fn [a](a) -> a` is accepted where `fn (b) -> b` is
 * expected (a polymorphic function passed or returned as a monomorphic one). */
static bool unify_funcs(TyCx *cx, Type *a, Type *b) {
  if (a->func.nargs != b->func.nargs) return false;
  if (a->func.ntparams < b->func.ntparams) {
    Type *t = a;
    a = b;
    b = t;
  }
  uint32_t n = a->func.ntparams;
  if (n) {
    Type **with = arena_alloc(cx->a, n * sizeof *with);
    for (uint32_t i = 0; i < n; i++)
      with[i] = i < b->func.ntparams ? var_type(cx, b->func.tparams[i]) : ty_fresh(cx);
    Type *na = type_new(cx->m, TYPE_FUNC, a->span);
    na->func = a->func;
    na->func.tparams = NULL;
    na->func.ntparams = 0;
    a = ty_subst(cx, na, a->func.tparams, with, n);
  }
  bool ok = unify_list(cx, a->func.args, b->func.args, a->func.nargs);
  if (!ty_unify(cx, a->func.ret, b->func.ret)) ok = false;
  return ok;
}

bool ty_unify(TyCx *cx, Type *a, Type *b) {
  a = ty_find(a);
  b = ty_find(b);
  if (a == b) return true;
  if (a == cx->err || b == cx->err) {
    if (a->kind == TYPE_UVAR) bind(cx, a, cx->err);
    if (b->kind == TYPE_UVAR) bind(cx, b, cx->err);
    return true;
  }
  if (a->kind == TYPE_INCOMPLETE || b->kind == TYPE_INCOMPLETE) return true;
  if (a->kind == TYPE_UVAR || b->kind == TYPE_UVAR) {
    Type *u = a->kind == TYPE_UVAR ? a : b, *t = u == a ? b : a;
    if (t->kind != TYPE_UVAR && t->kind != TYPE_TENSOR && occurs(u, t)) {
      cx->occurs_var = u;
      cx->occurs_in = t;
      return false;
    }
    bind(cx, u, t);
    return true;
  }
  if (a->kind != b->kind) return false;
  if (stack_exhausted()) return false;
  switch (a->kind) {
  case TYPE_TENSOR:
    return dims_unify(a, b);
  case TYPE_TUPLE:
    return a->tuple.n == b->tuple.n && unify_list(cx, a->tuple.fields, b->tuple.fields, a->tuple.n);
  case TYPE_FUNC:
    return unify_funcs(cx, a, b);
  case TYPE_VAR:
    return a->var.param == b->var.param;
  case TYPE_ADT:
    return a->adt.def == b->adt.def && a->adt.nargs == b->adt.nargs &&
           unify_list(cx, a->adt.args, b->adt.args, a->adt.nargs);
  case TYPE_REF:
    return ty_unify(cx, a->ref.inner, b->ref.inner);
  default:
    return false;
  }
}

/* ------------------------------------------------------------- substitution */

/* The function a type rewrite applies to each child type (env: the rewrite's own data). */
typedef Type *ChildFn(TyCx *cx, Type *t, void *env);

/* Applies f to each of xs; copies the list only when an element changed
 * (setting *changed), so unchanged types stay shared. */
static Type **map_list(TyCx *cx, Type **xs, uint32_t n, bool *changed, ChildFn *f, void *env) {
  Type **out = NULL;
  for (uint32_t i = 0; i < n; i++) {
    Type *x = f(cx, xs[i], env);
    if (x != xs[i] && !out) {
      out = arena_alloc(cx->a, n * sizeof *out);
      memcpy(out, xs, i * sizeof *out);
    }
    if (out) out[i] = x;
  }
  if (out) *changed = true;
  return out ? out : xs;
}

/* t with each child type x replaced by f(x) (tuple fields; function arguments, then the
 * result; ADT arguments; a reference's contents): a new node only when a child changed,
 * else t itself (unchanged types stay shared). Other kinds are returned as they are. */
static Type *map_children(TyCx *cx, Type *t, ChildFn *f, void *env) {
  bool changed = false;
  Type *c;
  switch (t->kind) {
  case TYPE_TUPLE: {
    Type **fs = map_list(cx, t->tuple.fields, t->tuple.n, &changed, f, env);
    if (!changed) return t;
    c = type_new(cx->m, TYPE_TUPLE, t->span);
    c->tuple.fields = fs;
    c->tuple.n = t->tuple.n;
    return c;
  }
  case TYPE_FUNC: {
    Type **as = map_list(cx, t->func.args, t->func.nargs, &changed, f, env);
    Type *ret = f(cx, t->func.ret, env);
    if (!changed && ret == t->func.ret) return t;
    c = type_new(cx->m, TYPE_FUNC, t->span);
    c->func = t->func;
    c->func.args = as;
    c->func.ret = ret;
    return c;
  }
  case TYPE_ADT: {
    Type **as = map_list(cx, t->adt.args, t->adt.nargs, &changed, f, env);
    if (!changed) return t;
    c = type_new(cx->m, TYPE_ADT, t->span);
    c->adt = t->adt;
    c->adt.args = as;
    return c;
  }
  case TYPE_REF: {
    Type *in = f(cx, t->ref.inner, env);
    if (in == t->ref.inner) return t;
    c = type_new(cx->m, TYPE_REF, t->span);
    c->ref.inner = in;
    return c;
  }
  default:
    return t;
  }
}

/* ty_subst's parameters, for map_children. */
typedef struct Subst {
  TypeParam **ps;
  Type **with;
  uint32_t n;
} Subst;

static Type *subst_child(TyCx *cx, Type *t, void *env) {
  const Subst *s = env;
  return ty_subst(cx, t, s->ps, s->with, s->n);
}

Type *ty_subst(TyCx *cx, Type *t, TypeParam **ps, Type **with, uint32_t n) {
  Type *r = ty_find(t);
  if (n == 0 || stack_exhausted()) return r;
  if (r->kind == TYPE_VAR) {
    for (uint32_t i = 0; i < n; i++)
      if (ps[i] == r->var.param) return with[i];
    return r;
  }
  Subst s = {ps, with, n};
  return map_children(cx, r, subst_child, &s);
}

Type *ty_instantiate(TyCx *cx, Type *t) {
  Type *r = ty_find(t);
  if (r->kind != TYPE_FUNC || r->func.ntparams == 0) return r;
  uint32_t n = r->func.ntparams;
  Type **with = arena_alloc(cx->a, n * sizeof *with);
  for (uint32_t i = 0; i < n; i++) with[i] = ty_fresh(cx);
  Type *mono = type_new(cx->m, TYPE_FUNC, r->span);
  mono->func = r->func;
  mono->func.tparams = NULL;
  mono->func.ntparams = 0;
  return ty_subst(cx, mono, r->func.tparams, with, n);
}

/* -------------------------------------------------------------- annotations */

static Type *from_annot(TyCx *cx, Type *t);

static Type *annot_child(TyCx *cx, Type *t, void *env) { return from_annot(cx, t); }

static Type *from_annot(TyCx *cx, Type *t) {
  if (stack_exhausted()) return cx->err;
  if (t->kind == TYPE_INCOMPLETE) return t == cx->err ? t : ty_fresh(cx);
  return map_children(cx, t, annot_child, NULL);
}

Type *ty_from_annot(TyCx *cx, Type *annot) {
  if (!annot) return ty_fresh(cx);
  if (!kind_check_type(cx, annot)) return cx->err;
  return from_annot(cx, annot);
}

/* ------------------------------------------------------------------ zonking */

static Type *zonk(TyCx *cx, Type *t);

static Type *zonk_child(TyCx *cx, Type *t, void *env) { return zonk(cx, t); }

/* Copying resolution for messages: nothing is mutated. */
static Type *zonk(TyCx *cx, Type *t) {
  Type *r = ty_find(t);
  if (r->kind == TYPE_UVAR) return cx->unknown;
  if (stack_exhausted()) return r;
  return map_children(cx, r, zonk_child, NULL);
}

/* Final resolution, in place: every bound uvar inside a type is replaced by
 * its resolution and every unbound one by `_`. Replacing a bound uvar by what
 * it stands for changes no meaning, so sharing is harmless; each node is
 * rewritten once (later visits find no uvar left). */
static Type *zonk_final(TyCx *cx, Type *t) {
  Type *r = ty_find(t);
  if (r->kind == TYPE_UVAR) {
    Type *inc = type_new(cx->m, TYPE_INCOMPLETE, (Span){0, 0});
    r->uvar.link = inc;
    return inc;
  }
  if (stack_exhausted()) return r;
  switch (r->kind) {
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < r->tuple.n; i++)
      r->tuple.fields[i] = zonk_final(cx, r->tuple.fields[i]);
    break;
  case TYPE_FUNC:
    for (uint32_t i = 0; i < r->func.nargs; i++) r->func.args[i] = zonk_final(cx, r->func.args[i]);
    r->func.ret = zonk_final(cx, r->func.ret);
    break;
  case TYPE_ADT:
    for (uint32_t i = 0; i < r->adt.nargs; i++) r->adt.args[i] = zonk_final(cx, r->adt.args[i]);
    break;
  case TYPE_REF:
    r->ref.inner = zonk_final(cx, r->ref.inner);
    break;
  default:
    break;
  }
  if (t != r && t->kind == TYPE_UVAR) t->uvar.link = r;
  return r;
}

Type *ty_zonk(TyCx *cx, Type *t, bool final) {
  if (!t) return NULL;
  return final ? zonk_final(cx, t) : zonk(cx, t);
}

const char *ty_str(TyCx *cx, Type *t) { return type_to_string(cx->a, ty_zonk(cx, t, false)); }

bool ty_unify_here(TyCx *cx, Type *a, Type *b) {
  cx->occurs_var = cx->occurs_in = NULL;
  return ty_unify(cx, a, b);
}

void ty_note_occurs(TyCx *cx, Span sp) {
  if (!cx->occurs_var) return;
  diag_note(cx->d, sp, "the unknown type %s would have to be %s, a type containing itself (an infinite type)",
            ty_str(cx, cx->occurs_var), ty_str(cx, cx->occurs_in));
  cx->occurs_var = cx->occurs_in = NULL;
}
