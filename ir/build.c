/* ir/build.c — expression constructors for passes (see build.h).
 *
 * Thin wrappers over ir/ast.c's allocators: they fill exactly one node and
 * copy argument arrays into the module's arena, so callers may pass stack
 * arrays. Fresh variable names come from one per-module counter so every
 * pass names its variables the same way (x_0, x_1, ...).
 */
#include "ir/build.h"
#include "ir/fresh_name.h"

#include <stdio.h>
#include <string.h>

/* "prefix_N" into the module's arena, cut to FRESH_NAME_MAX characters. */
const char *build_numbered_name(Module *m, const char *prefix, uint32_t n) {
  char buf[FRESH_NAME_MAX + 1];
  size_t len = fresh_name_format(buf, prefix, n);
  return arena_strndup(m->arena, buf, len);
}

Var *build_numbered_var(Module *m, const char *prefix, uint32_t n, Type *annot, Span sp) {
  if (n > FRESH_NAME_LAZY_MAX) return var_new(m, build_numbered_name(m, prefix, n), sp, annot);
  Var *v = var_new(m, prefix, sp, annot);
  v->fresh = n + 1; /* spelled when asked for (var_name) */
  return v;
}

Var *build_fresh_var(Module *m, const char *prefix, Type *annot, Span sp) {
  return build_numbered_var(m, prefix, m->next_fresh++, annot, sp);
}

Var *build_var_like(Module *m, const Var *v) {
  return var_new_as_with_attrs(m, v, v->annot);
}

static Expr **dup_exprs(Module *m, Expr **xs, uint32_t n) {
  if (!n) return NULL;
  Expr **c = arena_alloc_aligned(m->arena, n * sizeof *xs, _Alignof(Expr *));
  for (uint32_t i = 0; i < n; i++) c[i] = xs[i]; /* a few: no library call */
  return c;
}

Expr *build_tuple(Module *m, Expr **fields, uint32_t n, Span sp) {
  Expr *e = expr_new(m, EXPR_TUPLE, sp);
  e->tuple.fields = dup_exprs(m, fields, n);
  e->tuple.n = n;
  return e;
}

Expr *build_if(Module *m, Expr *cond, Expr *then_, Expr *else_, Span sp) {
  Expr *e = expr_new(m, EXPR_IF, sp);
  e->if_.cond = cond;
  e->if_.then_ = then_;
  e->if_.else_ = else_;
  return e;
}

Expr *build_call(Module *m, Expr *callee, Expr **args, uint32_t nargs, Span sp) {
  return expr_call(m, callee, args, nargs, NULL, sp);
}

Expr *build_global(Module *m, GlobalDef *g, Span sp) {
  Expr *e = expr_new(m, EXPR_GLOBAL, sp);
  e->global.name = g->name;
  e->global.def = g;
  return e;
}

Expr *build_ctor(Module *m, Ctor *c, Span sp) {
  Expr *e = expr_new(m, EXPR_CTOR, sp);
  e->ctor.ctor = c;
  return e;
}

Expr *build_match(Module *m, Expr *scrut, Clause *clauses, uint32_t n, bool partial, Span sp) {
  Expr *e = expr_new(m, EXPR_MATCH, sp);
  e->match.scrut = scrut;
  e->match.clauses = n ? arena_memdup(m->arena, clauses, n * sizeof *clauses) : NULL;
  e->match.nclauses = n;
  e->match.partial = partial;
  return e;
}

Function *build_function(Module *m, Var **params, uint32_t nparams, Type *ret, Expr *body,
                         Attrs *attrs, Span sp) {
  Function *f = arena_alloc(m->arena, sizeof *f);
  f->span = sp;
  f->params = nparams ? arena_memdup(m->arena, params, nparams * sizeof *params) : NULL;
  f->nparams = nparams;
  f->ret_annot = ret;
  f->attrs = attrs;
  f->body = body;
  return f;
}

Expr *build_fn(Module *m, Function *f, Span sp) {
  Expr *e = expr_new(m, EXPR_FN, sp);
  e->fn = f;
  return e;
}

Expr *build_typed(Expr *e, Type *t) {
  e->type = t;
  return e;
}

Type *build_fn_type(Module *m, const Function *f) {
  Type *ret = f->ret_annot ? f->ret_annot : f->body ? f->body->type : NULL;
  if (!ret) return NULL;
  Type **args = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof *args);
  for (uint32_t i = 0; i < f->nparams; i++)
    if (!(args[i] = f->params[i]->type)) return NULL;
  Type *t = type_new(m, TYPE_FUNC, f->span);
  t->func.tparams = f->tparams;
  t->func.ntparams = f->ntparams;
  t->func.args = args;
  t->func.nargs = f->nparams;
  t->func.ret = ret;
  return t;
}

Expr *build_fn_typed(Module *m, Function *f, Span sp) {
  Expr *e = build_fn(m, f, sp);
  Type *t = build_fn_type(m, f);
  if (t) f->type = e->type = t;
  return e;
}

Expr *build_const(Module *m, DType dt, uint32_t ndim, const int64_t *shape, const void *data, Span sp) {
  Expr *e = expr_new(m, EXPR_CONST, sp);
  ConstTensor *c = arena_alloc(m->arena, sizeof *c);
  uint64_t n = 1;
  for (uint32_t i = 0; i < ndim; i++) n *= (uint64_t)shape[i];
  c->dtype = dt;
  c->ndim = (int32_t)ndim;
  c->shape = arena_alloc(m->arena, (ndim ? ndim : 1) * sizeof(int64_t));
  if (ndim) memcpy(c->shape, shape, ndim * sizeof(int64_t));
  c->nbytes = n * dtype_size(dt);
  c->data = arena_alloc_aligned(m->arena, c->nbytes < 8 ? 8 : c->nbytes, 64);
  if (c->nbytes) memcpy(c->data, data, c->nbytes);
  c->meta_index = -1;
  e->constant = c;
  return e;
}

Expr *build_copy(Module *m, const Expr *e) {
  Expr *n = expr_new(m, e->kind, e->span);
  size_t hdr = offsetof(Expr, constant);
  memcpy((char *)n + hdr, (const char *)e + hdr, expr_payload_size(e->kind));
  n->type = NULL;
  n->mark = 0;
  return n;
}

GlobalDef *build_global_def(Module *m, const char *name, Function *fn, Span sp) {
  GlobalDef *g = arena_alloc(m->arena, sizeof *g);
  g->name = arena_strdup(m->arena, name);
  g->span = sp;
  g->fn = fn;
  if (m->ndefs >= m->defs_cap) { /* grow by doubling: LambdaLift may add one global per closure */
    uint32_t cap = m->ndefs < 8 ? 16 : 2 * m->ndefs;
    GlobalDef **defs = arena_alloc(m->arena, cap * sizeof *defs);
    if (m->ndefs) memcpy(defs, m->defs, m->ndefs * sizeof *defs);
    m->defs = defs;
    m->defs_cap = cap;
  }
  m->defs[m->ndefs++] = g;
  return g;
}

GlobalDef *module_find_global(const Module *m, const char *name) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, name) == 0) return m->defs[i];
  return NULL;
}

const char *module_fresh_global_name(Module *m, const char *base) {
  if (!module_find_global(m, base)) return arena_strdup(m->arena, base);
  char buf[256];
  for (uint32_t i = 1;; i++) {
    snprintf(buf, sizeof buf, "%.200s%u", base, i);
    if (!module_find_global(m, buf)) return arena_strdup(m->arena, buf);
  }
}

/* ------------------------------------------------------------------ types */

static Type **subst_list(Module *m, Type **xs, uint32_t n, TypeParam *const *ps, Type *const *with,
                         uint32_t np, bool *changed) {
  Type **out = NULL;
  for (uint32_t i = 0; i < n; i++) {
    Type *r = build_type_subst(m, xs[i], ps, with, np);
    if (r != xs[i] && !out) {
      out = arena_alloc(m->arena, n * sizeof *out);
      memcpy(out, xs, n * sizeof *out);
    }
    if (out) out[i] = r;
  }
  *changed = out != NULL;
  return out ? out : xs;
}

Type *build_type_subst(Module *m, Type *t, TypeParam *const *ps, Type *const *with, uint32_t n) {
  if (!t || n == 0 || stack_exhausted()) return t;
  bool ch = false, ch2 = false;
  Type *c;
  switch (t->kind) {
  case TYPE_VAR:
    for (uint32_t i = 0; i < n; i++)
      if (t->var.param == ps[i]) return with[i];
    return t;
  case TYPE_TUPLE: {
    Type **f = subst_list(m, t->tuple.fields, t->tuple.n, ps, with, n, &ch);
    if (!ch) return t;
    c = type_new(m, TYPE_TUPLE, t->span);
    c->tuple.fields = f;
    c->tuple.n = t->tuple.n;
    return c;
  }
  case TYPE_FUNC: {
    Type **a = subst_list(m, t->func.args, t->func.nargs, ps, with, n, &ch);
    Type *r = build_type_subst(m, t->func.ret, ps, with, n);
    if (!ch && r == t->func.ret) return t;
    c = type_new(m, TYPE_FUNC, t->span);
    c->func = t->func;
    c->func.args = a;
    c->func.ret = r;
    return c;
  }
  case TYPE_ADT: {
    Type **a = subst_list(m, t->adt.args, t->adt.nargs, ps, with, n, &ch2);
    if (!ch2) return t;
    c = type_new(m, TYPE_ADT, t->span);
    c->adt = t->adt;
    c->adt.args = a;
    return c;
  }
  case TYPE_REF: {
    Type *in = build_type_subst(m, t->ref.inner, ps, with, n);
    if (in == t->ref.inner) return t;
    c = type_new(m, TYPE_REF, t->span);
    c->ref.inner = in;
    return c;
  }
  default:
    return t;
  }
}

TypeParam *build_type_param(Module *m, const char *name) {
  return type_param_new(m, arena_strdup(m->arena, name), (Span){0, 0});
}

Type *build_type_var(Module *m, TypeParam *p) {
  Type *t = type_new(m, TYPE_VAR, p->span);
  t->var.param = p;
  return t;
}

Type *build_type_adt(Module *m, TypeDef *def, Type *const *args, uint32_t n) {
  Type *t = type_new(m, TYPE_ADT, (Span){0, 0});
  t->adt.def = def;
  t->adt.nargs = n;
  t->adt.args = n ? arena_memdup(m->arena, args, n * sizeof *args) : NULL;
  return t;
}

void build_type_match(const Type *gen, Type *conc, TypeParam *const *ps, Type **with, uint32_t n) {
  if (!gen || !conc || stack_exhausted()) return;
  if (gen->kind == TYPE_VAR) {
    for (uint32_t i = 0; i < n; i++)
      if (ps[i] == gen->var.param && !with[i]) with[i] = conc;
    return;
  }
  if (gen->kind != conc->kind) return;
  switch (gen->kind) {
  case TYPE_FUNC:
    for (uint32_t i = 0; i < gen->func.nargs && i < conc->func.nargs; i++)
      build_type_match(gen->func.args[i], conc->func.args[i], ps, with, n);
    build_type_match(gen->func.ret, conc->func.ret, ps, with, n);
    return;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < gen->tuple.n && i < conc->tuple.n; i++)
      build_type_match(gen->tuple.fields[i], conc->tuple.fields[i], ps, with, n);
    return;
  case TYPE_ADT:
    for (uint32_t i = 0; i < gen->adt.nargs && i < conc->adt.nargs; i++)
      build_type_match(gen->adt.args[i], conc->adt.args[i], ps, with, n);
    return;
  case TYPE_REF: build_type_match(gen->ref.inner, conc->ref.inner, ps, with, n); return;
  default: return;
  }
}
