/* ir/equal.c — structural equality of resolved modules (ir/equal.h).
 *
 * Alpha-equivalence: bound variables (parameters, let and pattern variables)
 * and type parameters are paired at their binders, and a use must refer to
 * the paired binder; free variables are paired at first sight. DAG-aware:
 * every compound node of `a` is paired with exactly one node of `b` (maps in
 * both directions), so sharing must agree. Atoms — variables, globals,
 * operators, constructors and constants — are compared by value only, since
 * the printer repeats them in place rather than sharing them. Constants
 * compare by dtype, shape and bytes; attributes by attr_value_equal; types
 * structurally, with bound unification variables followed.
 *
 * Expressions are compared with an explicit work stack, so long chains do not
 * use the C stack; types and patterns recurse under stack_exhausted().
 * A binder is always paired before the pairs below it are popped.
 */
#include "ir/equal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"

/* --------------------------------------------------------- pointer maps */

/* Pointer → pointer maps (node pairings) over ir/ptrmap.h. */
typedef PtrMap EqMap;

static const void *eqm_get(const EqMap *m, const void *k) {
  const int64_t *v = ptrmap_find(m, k);
  return v ? (const void *)(intptr_t)*v : NULL;
}

static void eqm_put(EqMap *m, const void *k, const void *v) { ptrmap_put(m, k, (int64_t)(intptr_t)v); }

static void eqm_free(EqMap *m) { ptrmap_free(m); }

/* A pairing: both directions, so a node of b cannot be paired twice. */
typedef struct Pairing {
  EqMap fwd, rev;
} Pairing;

/* true if (a, b) is a consistent pairing (recording it when new). */
static bool pairing_add(Pairing *p, const void *a, const void *b) {
  const void *fa = eqm_get(&p->fwd, a);
  if (fa) return fa == b;
  if (eqm_get(&p->rev, b)) return false;
  eqm_put(&p->fwd, a, b);
  eqm_put(&p->rev, b, a);
  return true;
}

static void pairing_free(Pairing *p) {
  eqm_free(&p->fwd);
  eqm_free(&p->rev);
}

/* -------------------------------------------------------------- context */

typedef struct ExprPair {
  const Expr *a, *b;
} ExprPair;

typedef struct Eq {
  Pairing exprs, vars, tparams;
  VEC(ExprPair) work;
  FILE *why;
  Source *src;       /* of module a, for positions in the reason */
  const char *where; /* "@main", "type List", "expression" */
  bool failed;
} Eq;

static bool eq_fail(Eq *q, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool eq_fail(Eq *q, Span sp, const char *fmt, ...) {
  if (q->failed) return false;
  q->failed = true;
  if (!q->why) return false;
  fprintf(q->why, "%s: ", q->where ? q->where : "module");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(q->why, fmt, ap);
  va_end(ap);
  if (q->src && sp.lo < q->src->len) {
    uint32_t line, col;
    source_line_col(q->src, sp.lo, &line, &col);
    fprintf(q->why, " (at %s:%u:%u)", q->src->name ? q->src->name : "?", line, col);
  }
  fputc('\n', q->why);
  return false;
}

static void eq_free(Eq *q) {
  pairing_free(&q->exprs);
  pairing_free(&q->vars);
  pairing_free(&q->tparams);
  vec_free(q->work);
}

static bool str_eq(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

/* ---------------------------------------------------------------- types */

static const Type *ty_follow(const Type *t) {
  for (uint32_t guard = 0; t && t->kind == TYPE_UVAR && t->uvar.link && guard < (1u << 24); guard++)
    t = t->uvar.link;
  return t;
}

static bool ty_eq(Eq *q, const Type *a, const Type *b);

static bool ty_list_eq(Eq *q, Type *const *a, Type *const *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!ty_eq(q, a[i], b[i])) return false;
  return true;
}

static bool tparams_pair(Eq *q, TypeParam *const *a, TypeParam *const *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!pairing_add(&q->tparams, a[i], b[i])) return false;
  return true;
}

static bool dim_eq(const Dim *a, const Dim *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == DIM_ANY) return true;
  if (a->value != b->value) return false;
  return a->kind != DIM_INT || dtype_eq(a->dtype, b->dtype);
}

static bool ty_eq(Eq *q, const Type *a, const Type *b) {
  a = ty_follow(a);
  b = ty_follow(b);
  if (!a || !b) return a == b;
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  if (stack_exhausted()) return false;
  switch (a->kind) {
  case TYPE_TENSOR:
    if (!dtype_eq(a->tensor.dtype, b->tensor.dtype) || a->tensor.ndim != b->tensor.ndim) return false;
    for (uint32_t i = 0; i < a->tensor.ndim; i++)
      if (!dim_eq(&a->tensor.dims[i], &b->tensor.dims[i])) return false;
    return true;
  case TYPE_TUPLE:
    return a->tuple.n == b->tuple.n && ty_list_eq(q, a->tuple.fields, b->tuple.fields, a->tuple.n);
  case TYPE_FUNC:
    return a->func.ntparams == b->func.ntparams && a->func.nargs == b->func.nargs &&
           tparams_pair(q, a->func.tparams, b->func.tparams, a->func.ntparams) &&
           ty_list_eq(q, a->func.args, b->func.args, a->func.nargs) &&
           ty_eq(q, a->func.ret, b->func.ret);
  case TYPE_VAR: {
    const void *pa = eqm_get(&q->tparams.fwd, a->var.param);
    if (pa) return pa == b->var.param;
    return a->var.param == b->var.param;
  }
  case TYPE_ADT:
    return str_eq(a->adt.def ? a->adt.def->name : NULL, b->adt.def ? b->adt.def->name : NULL) &&
           a->adt.nargs == b->adt.nargs && ty_list_eq(q, a->adt.args, b->adt.args, a->adt.nargs);
  case TYPE_REF: return ty_eq(q, a->ref.inner, b->ref.inner);
  case TYPE_INCOMPLETE: return true;
  case TYPE_NAME:
    return str_eq(a->name.name, b->name.name) && a->name.nargs == b->name.nargs &&
           ty_list_eq(q, a->name.args, b->name.args, a->name.nargs);
  case TYPE_UVAR: return false; /* distinct unbound variables */
  }
  return false;
}

bool type_equal(const Type *a, const Type *b) {
  Eq q = {0};
  bool ok = ty_eq(&q, a, b);
  eq_free(&q);
  return ok;
}

/* ---------------------------------------------------------- attributes */

static bool attrs_empty(const Attrs *a) { return !a || (a->n == 0 && !a->meta_key); }

static bool attrs_eq(Eq *q, const Attrs *a, const Attrs *b, Span sp) {
  if (attrs_empty(a) || attrs_empty(b)) {
    if (attrs_empty(a) && attrs_empty(b)) return true;
    return eq_fail(q, sp, "attributes present on one side only");
  }
  if (a->n != b->n) return eq_fail(q, sp, "attribute count differs (%u vs %u)", a->n, b->n);
  for (uint32_t i = 0; i < a->n; i++) {
    if (!str_eq(a->items[i].key, b->items[i].key))
      return eq_fail(q, a->items[i].span, "attribute key differs (%s vs %s)", a->items[i].key,
                     b->items[i].key);
    if (!attr_value_equal(a->items[i].value, b->items[i].value))
      return eq_fail(q, a->items[i].span, "value of attribute %s differs", a->items[i].key);
  }
  if (!str_eq(a->meta_key, b->meta_key) || (a->meta_key && a->meta_index != b->meta_index))
    return eq_fail(q, sp, "attribute meta reference differs");
  return true;
}

/* ------------------------------------------------------------ variables */

static bool var_bind(Eq *q, const Var *a, const Var *b) {
  if (!a || !b) return a == b || eq_fail(q, (Span){0, 0}, "missing variable");
  if (a->is_free != b->is_free) return eq_fail(q, a->span, "free variable vs bound variable %%%s", a->name);
  if (!ty_eq(q, a->annot, b->annot))
    return eq_fail(q, a->span, "annotation of %%%s differs", a->name);
  if (!attrs_eq(q, a->attrs, b->attrs, a->span)) return false;
  if (!pairing_add(&q->vars, a, b))
    return eq_fail(q, a->span, "variable %%%s bound inconsistently", a->name);
  return true;
}

static bool var_use(Eq *q, const Expr *a, const Expr *b) {
  const Var *va = a->var.var, *vb = b->var.var;
  if (!va || !vb) {
    if (va == vb && str_eq(a->var.name, b->var.name)) return true;
    return eq_fail(q, a->span, "unresolved variable %%%s", a->var.name ? a->var.name : "");
  }
  const void *pa = eqm_get(&q->vars.fwd, va);
  if (pa) return pa == vb || eq_fail(q, a->span, "%%%s refers to a different binder", va->name);
  if (eqm_get(&q->vars.rev, vb))
    return eq_fail(q, a->span, "%%%s refers to a different binder", va->name);
  return var_bind(q, va, vb); /* a free variable, paired at first sight */
}

/* ------------------------------------------------------------- patterns */

static const char *pat_ctor_name(const Pattern *p) {
  return p->ctor.ctor ? p->ctor.ctor->name : p->ctor.name;
}

static bool pat_eq(Eq *q, const Pattern *a, const Pattern *b) {
  if (a->kind != b->kind) return eq_fail(q, a->span, "pattern kind differs");
  if (stack_exhausted()) return eq_fail(q, a->span, "pattern nested too deeply");
  switch (a->kind) {
  case PAT_WILDCARD: return true;
  case PAT_VAR: return var_bind(q, a->var, b->var);
  case PAT_CTOR:
    if (!str_eq(pat_ctor_name(a), pat_ctor_name(b)) || a->ctor.nargs != b->ctor.nargs)
      return eq_fail(q, a->span, "constructor pattern differs (%s vs %s)", pat_ctor_name(a),
                     pat_ctor_name(b));
    for (uint32_t i = 0; i < a->ctor.nargs; i++)
      if (!pat_eq(q, a->ctor.args[i], b->ctor.args[i])) return false;
    return true;
  case PAT_TUPLE:
    if (a->tuple.n != b->tuple.n) return eq_fail(q, a->span, "tuple pattern size differs");
    for (uint32_t i = 0; i < a->tuple.n; i++)
      if (!pat_eq(q, a->tuple.fields[i], b->tuple.fields[i])) return false;
    return true;
  }
  return false;
}

/* ---------------------------------------------------------- expressions */

static bool const_eq(const ConstTensor *a, const ConstTensor *b) {
  if (!dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim || a->nbytes != b->nbytes) return false;
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

static void push(Eq *q, const Expr *a, const Expr *b) { vec_push(q->work, ((ExprPair){a, b})); }

/* Signature of a function: type parameters, parameters, return type, attrs. */
static bool func_head_eq(Eq *q, const Function *a, const Function *b) {
  if (a->ntparams != b->ntparams || !tparams_pair(q, a->tparams, b->tparams, a->ntparams))
    return eq_fail(q, a->span, "type parameters differ");
  if (a->nparams != b->nparams)
    return eq_fail(q, a->span, "parameter count differs (%u vs %u)", a->nparams, b->nparams);
  for (uint32_t i = 0; i < a->nparams; i++)
    if (!var_bind(q, a->params[i], b->params[i])) return false;
  if (!ty_eq(q, a->ret_annot, b->ret_annot)) return eq_fail(q, a->span, "return type differs");
  return attrs_eq(q, a->attrs, b->attrs, a->span);
}

/* Atoms: compared by value, never paired. */
static bool atom_eq(Eq *q, const Expr *a, const Expr *b) {
  switch (a->kind) {
  case EXPR_CONST:
    return const_eq(a->constant, b->constant) || eq_fail(q, a->span, "constants differ");
  case EXPR_VAR: return var_use(q, a, b);
  case EXPR_GLOBAL:
    return str_eq(a->global.name, b->global.name) ||
           eq_fail(q, a->span, "global @%s vs @%s", a->global.name, b->global.name);
  case EXPR_OP:
    return str_eq(a->op.name, b->op.name) ||
           eq_fail(q, a->span, "operator %s vs %s", a->op.name, b->op.name);
  case EXPR_CTOR: {
    const char *na = a->ctor.ctor ? a->ctor.ctor->name : NULL;
    const char *nb = b->ctor.ctor ? b->ctor.ctor->name : NULL;
    return str_eq(na, nb) || eq_fail(q, a->span, "constructor %s vs %s", na, nb);
  }
  case EXPR_NAME: return str_eq(a->name.name, b->name.name) || eq_fail(q, a->span, "name differs");
  case EXPR_GRAPH_REF:
    return a->graph_ref.num == b->graph_ref.num || eq_fail(q, a->span, "graph reference differs");
  case EXPR_META:
    return (str_eq(a->meta.key, b->meta.key) && a->meta.index == b->meta.index) ||
           eq_fail(q, a->span, "meta reference differs");
  default: return false;
  }
}

static bool is_atom(ExprKind k) {
  return k == EXPR_CONST || k == EXPR_VAR || k == EXPR_GLOBAL || k == EXPR_OP || k == EXPR_CTOR ||
         k == EXPR_NAME || k == EXPR_GRAPH_REF || k == EXPR_META;
}

/* Compares the fields of one compound pair and queues its children. */
static bool compound_eq(Eq *q, const Expr *a, const Expr *b) {
  switch (a->kind) {
  case EXPR_CALL:
    if (a->call.nargs != b->call.nargs)
      return eq_fail(q, a->span, "call argument count differs (%u vs %u)", a->call.nargs,
                     b->call.nargs);
    if (!attrs_eq(q, a->call.attrs, b->call.attrs, a->span)) return false;
    for (uint32_t i = a->call.nargs; i-- > 0;) push(q, a->call.args[i], b->call.args[i]);
    push(q, a->call.fn, b->call.fn);
    return true;
  case EXPR_TUPLE:
    if (a->tuple.n != b->tuple.n)
      return eq_fail(q, a->span, "tuple size differs (%u vs %u)", a->tuple.n, b->tuple.n);
    for (uint32_t i = a->tuple.n; i-- > 0;) push(q, a->tuple.fields[i], b->tuple.fields[i]);
    return true;
  case EXPR_PROJ:
    if (a->proj.index != b->proj.index) return eq_fail(q, a->span, "projection index differs");
    push(q, a->proj.tuple, b->proj.tuple);
    return true;
  case EXPR_FN:
    if (!func_head_eq(q, a->fn, b->fn)) return false;
    push(q, a->fn->body, b->fn->body);
    return true;
  case EXPR_LET:
    if (!var_bind(q, a->let.var, b->let.var)) return false;
    push(q, a->let.body, b->let.body);
    push(q, a->let.value, b->let.value);
    return true;
  case EXPR_IF:
    push(q, a->if_.else_, b->if_.else_);
    push(q, a->if_.then_, b->if_.then_);
    push(q, a->if_.cond, b->if_.cond);
    return true;
  case EXPR_MATCH:
    if (a->match.partial != b->match.partial) return eq_fail(q, a->span, "match vs match?");
    if (a->match.nclauses != b->match.nclauses)
      return eq_fail(q, a->span, "clause count differs (%u vs %u)", a->match.nclauses,
                     b->match.nclauses);
    for (uint32_t i = 0; i < a->match.nclauses; i++)
      if (!pat_eq(q, a->match.clauses[i].pattern, b->match.clauses[i].pattern)) return false;
    for (uint32_t i = a->match.nclauses; i-- > 0;)
      push(q, a->match.clauses[i].body, b->match.clauses[i].body);
    push(q, a->match.scrut, b->match.scrut);
    return true;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: push(q, a->ref.arg, b->ref.arg); return true;
  case EXPR_REF_WRITE:
    push(q, a->ref_write.value, b->ref_write.value);
    push(q, a->ref_write.ref, b->ref_write.ref);
    return true;
  case EXPR_GRAPH_BIND:
    if (a->graph_bind.num != b->graph_bind.num) return eq_fail(q, a->span, "graph binding differs");
    push(q, a->graph_bind.body, b->graph_bind.body);
    push(q, a->graph_bind.value, b->graph_bind.value);
    return true;
  case EXPR_FREE_VAR:
    if (!var_bind(q, a->free_var.var, b->free_var.var)) return false;
    push(q, a->free_var.body, b->free_var.body);
    return true;
  default: return eq_fail(q, a->span, "unexpected node %s", expr_kind_name(a->kind));
  }
}

static bool expr_eq(Eq *q, const Expr *ra, const Expr *rb) {
  size_t base = q->work.len;
  push(q, ra, rb);
  while (q->work.len > base) {
    ExprPair pr = q->work.data[--q->work.len];
    const Expr *a = pr.a, *b = pr.b;
    if (!a || !b) {
      if (a == b) continue;
      return eq_fail(q, a ? a->span : (Span){0, 0}, "missing expression");
    }
    if (a->kind != b->kind)
      return eq_fail(q, a->span, "%s vs %s", expr_kind_name(a->kind), expr_kind_name(b->kind));
    if (is_atom(a->kind)) {
      if (!atom_eq(q, a, b)) return false;
      continue;
    }
    const void *seen = eqm_get(&q->exprs.fwd, a);
    if (seen) {
      if (seen != b) return eq_fail(q, a->span, "sharing differs (%s)", expr_kind_name(a->kind));
      continue;
    }
    if (!pairing_add(&q->exprs, a, b))
      return eq_fail(q, a->span, "sharing differs (%s)", expr_kind_name(a->kind));
    if (!compound_eq(q, a, b)) return false;
  }
  return true;
}

/* -------------------------------------------------------------- modules */

static int cmp_typedef(const void *x, const void *y) {
  return strcmp((*(TypeDef *const *)x)->name, (*(TypeDef *const *)y)->name);
}

static int cmp_def(const void *x, const void *y) {
  return strcmp((*(GlobalDef *const *)x)->name, (*(GlobalDef *const *)y)->name);
}

/* A copy of a pointer array sorted with cmp (caller frees). */
static void *sorted_copy(void *const *items, uint32_t n, int (*cmp)(const void *, const void *)) {
  void **c = mem_malloc((n ? n : 1) * sizeof *c);
  if (n) memcpy(c, items, n * sizeof *c);
  qsort(c, n, sizeof *c, cmp);
  return c;
}

static bool typedef_eq(Eq *q, const TypeDef *a, const TypeDef *b) {
  if (!str_eq(a->name, b->name)) return eq_fail(q, a->span, "type %s vs %s", a->name, b->name);
  if (a->ntparams != b->ntparams || !tparams_pair(q, a->tparams, b->tparams, a->ntparams))
    return eq_fail(q, a->span, "type %s: type parameters differ", a->name);
  if (a->nctors != b->nctors)
    return eq_fail(q, a->span, "type %s: constructor count differs (%u vs %u)", a->name, a->nctors,
                   b->nctors);
  for (uint32_t i = 0; i < a->nctors; i++) {
    const Ctor *ca = a->ctors[i], *cb = b->ctors[i];
    if (!str_eq(ca->name, cb->name) || ca->nfields != cb->nfields ||
        !ty_list_eq(q, ca->fields, cb->fields, ca->nfields))
      return eq_fail(q, ca->span, "type %s: constructor %s differs", a->name, ca->name);
  }
  return true;
}

static bool types_eq(Eq *q, const Module *a, const Module *b) {
  if (a->ntypes != b->ntypes)
    return eq_fail(q, (Span){0, 0}, "type definition count differs (%u vs %u)", a->ntypes, b->ntypes);
  TypeDef **ta = sorted_copy((void *const *)a->types, a->ntypes, cmp_typedef);
  TypeDef **tb = sorted_copy((void *const *)b->types, b->ntypes, cmp_typedef);
  bool ok = true;
  for (uint32_t i = 0; ok && i < a->ntypes; i++) ok = typedef_eq(q, ta[i], tb[i]);
  mem_free(ta);
  mem_free(tb);
  return ok;
}

static bool def_eq(Eq *q, const GlobalDef *a, const GlobalDef *b) {
  if (!a->fn || !b->fn) return a->fn == b->fn || eq_fail(q, a->span, "missing function");
  if (!func_head_eq(q, a->fn, b->fn)) return false;
  return expr_eq(q, a->fn->body, b->fn->body);
}

static bool defs_eq(Eq *q, const Module *a, const Module *b) {
  if (a->ndefs != b->ndefs)
    return eq_fail(q, (Span){0, 0}, "function count differs (%u vs %u)", a->ndefs, b->ndefs);
  GlobalDef **da = sorted_copy((void *const *)a->defs, a->ndefs, cmp_def);
  GlobalDef **db = sorted_copy((void *const *)b->defs, b->ndefs, cmp_def);
  bool ok = true;
  char where[256];
  for (uint32_t i = 0; ok && i < a->ndefs; i++) {
    snprintf(where, sizeof where, "@%s", da[i]->name);
    q->where = where;
    if (!str_eq(da[i]->name, db[i]->name)) {
      ok = eq_fail(q, da[i]->span, "function @%s vs @%s", da[i]->name, db[i]->name);
      break;
    }
    ok = def_eq(q, da[i], db[i]);
  }
  q->where = NULL;
  mem_free(da);
  mem_free(db);
  return ok;
}

bool module_equal(Module *a, Module *b, FILE *why) {
  Eq q = {0};
  q.why = why;
  q.src = a->src;
  bool ok = types_eq(&q, a, b) && defs_eq(&q, a, b);
  if (ok && (a->expr || b->expr)) {
    q.where = "expression";
    ok = (a->expr && b->expr) ? expr_eq(&q, a->expr, b->expr)
                              : eq_fail(&q, (Span){0, 0}, "expression present on one side only");
  }
  eq_free(&q);
  return ok;
}
