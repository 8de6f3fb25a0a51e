/* sema/resolve.c — name resolution: the pre-resolve AST becomes the bound AST.
 *
 * Two walks over the definitions in textual order (defs and type definitions
 * merged by source position). The first collects every global, type name and
 * constructor (duplicates are errors), so globals and types may be referred
 * to before their definition. The second rewrites each definition in place:
 * locals get their binder, identifier chains become operators or
 * constructors (a constructor only once its type definition has been passed,
 * §5.5), graph bindings vanish and every `%N` use becomes the one resolved
 * node (the tree becomes a DAG), `meta[relay.Constant][i]` becomes one shared
 * EXPR_CONST per index, type names become type variables or ADTs, and
 * operator call attributes are normalised through the registry.
 *
 * Scoping is lexical (sema/scope.h): a binding hides every older binding of
 * its name; a let variable is visible in its value only when the value is a
 * function (otherwise it is a hidden placeholder while the value is
 * resolved, and a use that skips it draws a warning). Each walker pops
 * exactly the bindings it pushed, so blocks, branches, clauses and call
 * arguments scope themselves.
 *
 * Depth: let / graph-binding / free_var chains — the deep path of real
 * programs — are followed by a loop; other recursion checks stack_exhausted()
 * and reports "expression nested too deeply" once.
 */
#include "sema/resolve.h"

#include <stdio.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "sema/scope.h"

/* A sparse graph number and its binding node (EXPR_GRAPH_BIND, whose value
 * has been replaced by the resolved value); bind == NULL: empty slot. */
typedef struct GraphSlot {
  uint32_t num;
  Expr *bind;
} GraphSlot;

/* The innermost local variable a graph binding's value uses from outside
 * itself: the binding is usable wherever that variable is still bound. */
typedef struct GraphNeed {
  Var *var;
  uint32_t index;      /* its binding's index in the locals stack */
  const Expr *bind;    /* the binding node (EXPR_GRAPH_BIND) */
} GraphNeed;

/* A graph binding whose value is being resolved: locals below `depth` are
 * outside the value; `need` is the innermost of those it uses so far. */
typedef struct GraphTracker {
  uint32_t depth;
  GraphNeed need;
} GraphTracker;

/* A let variable whose (non-function) value is being resolved. */
typedef struct Pending {
  Var *var;
} Pending;

typedef struct Resolver {
  Module *m;
  Diag *d;
  Scope *locals;       /* Var*, lexical */
  Scope *tvars;        /* TypeParam*, lexical */
  ScopeMap *free_vars; /* Var*: free_var declarations seen so far */
  ScopeMap *globals;   /* GlobalDef* */
  ScopeMap *types;     /* TypeDef* */
  ScopeMap *all_ctors; /* Ctor*: every constructor of the text */
  ScopeMap *ctors;     /* Ctor*: constructors whose type definition was passed */
  Expr **dense;        /* binding nodes indexed by number, for dense numbers */
  uint32_t dense_cap;
  GraphSlot *graph;    /* sparse numbers: open addressing, power-of-two size */
  uint32_t graph_cap, nsparse;
  uint32_t graph_n;    /* graph bindings so far */
  VEC(GraphNeed) needs; /* a binding node's is needs[mark - 1] (validated by bind; none: the value uses no local) */
  VEC(GraphTracker) trackers; /* graph values being resolved, outermost first (depths increase) */
  Expr **meta_exprs;   /* the shared EXPR_CONST of each meta[relay.Constant][i] */
  VEC(Pending) pending;
  uint32_t next_group; /* group tags for parameter lists and patterns; 0 = lets */
  bool attr_name;      /* resolving a bare name given as an attribute value */
  bool too_deep;       /* "nested too deeply" already reported */
  bool expr_mode;      /* a bare expression: undefined globals are left to inference */
  struct { const char *name; int32_t id; } op_seen[64]; /* operator names met last, by address (res_op_id) */
} Resolver;

static Expr *res_expr_at(Resolver *r, Expr *e, bool callee);
static Expr *res_expr(Resolver *r, Expr *e) { return res_expr_at(r, e, false); }
static void res_type(Resolver *r, Type *t);
static void res_attrs(Resolver *r, Attrs *a, Span sp);
static void res_track(Resolver *r, Var *v, uint32_t index);

/* ----------------------------------------------------------------- helpers */

/* Largest edit distance accepted for a "did you mean" suggestion. */
static size_t res_cap(const char *name) {
  size_t n = strlen(name);
  return n < 6 ? 1 : n / 3;
}

static bool res_deep(Resolver *r, Span sp) {
  if (!stack_exhausted()) return false;
  if (!r->too_deep) diag_error(r->d, sp, "expression nested too deeply");
  r->too_deep = true;
  return true;
}

/* Turns a node whose resolution failed into an inert unit tuple. */
static Expr *res_poison(Expr *e) {
  e->kind = EXPR_TUPLE;
  e->tuple.fields = NULL;
  e->tuple.n = 0;
  return e;
}

/* ---------------------------------------------------------------- metadata */

/* The length of the list under `key`, if the metadata section has that key. */
static bool res_meta_count(Resolver *r, const char *key, uint32_t *count) {
  Module *m = r->m;
  bool is_const = strcmp(key, "relay.Constant") == 0;
  for (uint32_t i = 0; i < m->nmeta_keys; i++) {
    if (strcmp(m->meta_keys[i].key, key) == 0) {
      *count = is_const ? m->nmeta_consts : m->meta_keys[i].count;
      return true;
    }
  }
  if (is_const && m->nmeta_consts) {
    *count = m->nmeta_consts;
    return true;
  }
  return false;
}

static void res_meta_suggest(Resolver *r, const char *key, Span sp) {
  const char *best = NULL;
  size_t cap = res_cap(key), best_d = cap + 1;
  for (uint32_t i = 0; i < r->m->nmeta_keys; i++) {
    size_t dist = edit_distance(key, r->m->meta_keys[i].key, cap);
    if (dist < best_d) best_d = dist, best = r->m->meta_keys[i].key;
  }
  if (best) diag_note(r->d, sp, "did you mean \"%s\"?", best);
}

/* Checks that meta[key][index] names an entry of the metadata section. */
static bool res_meta_check(Resolver *r, const char *key, uint64_t index, Span sp) {
  if (!r->m->has_metadata) {
    diag_error(r->d, sp, "meta[%s][%llu] used, but the text has no #[metadata] section", key,
               (unsigned long long)index);
    return false;
  }
  uint32_t count;
  if (!res_meta_count(r, key, &count)) {
    diag_error(r->d, sp, "the metadata section has no key \"%s\"", key);
    if (!r->d->suppressed) res_meta_suggest(r, key, sp);
    return false;
  }
  if (index >= count) {
    diag_error(r->d, sp, "meta[%s][%llu] is out of range: the metadata section has %u %s entr%s",
               key, (unsigned long long)index, count, key, count == 1 ? "y" : "ies");
    return false;
  }
  return true;
}

/* Key of a metadata list holding attribute objects (TVM: a BaseAttrsNode);
 * the same rule as the parser's (relay.attrs.*, attrs.*, *Attrs). */
static bool res_is_attrs_key(const char *key) {
  size_t n = strlen(key);
  return strncmp(key, "relay.attrs.", 12) == 0 || strncmp(key, "attrs.", 6) == 0 ||
         (n >= 5 && strcmp(key + n - 5, "Attrs") == 0);
}

static Expr *res_meta_expr(Resolver *r, Expr *e) {
  const char *key = e->meta.key;
  uint32_t idx = e->meta.index;
  if (!res_meta_check(r, key, idx, e->span)) return res_poison(e);
  if (strcmp(key, "relay.Constant") != 0) {
    diag_error(r->d, e->span,
               "meta[%s][%u] cannot be used as an expression: only meta[relay.Constant][i] "
               "entries are supported",
               key, idx);
    return res_poison(e);
  }
  if (r->meta_exprs[idx]) return r->meta_exprs[idx];
  ConstTensor *c = r->m->meta_consts[idx];
  if (!c) return res_poison(e); /* the metadata reader reported why */
  e->kind = EXPR_CONST;
  e->constant = c;
  r->meta_exprs[idx] = e;
  return e;
}

/* ---------------------------------------------------------------- bindings */

/* Binds a local; `group` != 0 makes a second binding of the name in the same
 * group (one parameter list, one pattern) an error. */
static void res_bind(Resolver *r, Var *v, uint32_t group, const char *what) {
  if (!var_name(v)[0]) return;
  if (group) {
    ScopeHit hit;
    Var *old = scope_lookup(r->locals, var_name(v), &hit);
    if (old && hit.group == group) {
      diag_error(r->d, v->span, "%s %%%s is bound twice", what, var_name(v));
      diag_note(r->d, old->span, "%%%s is first bound here", var_name(v));
    }
  }
  scope_push(r->locals, var_name(v), v, group);
}

static Pending *res_find_pending(Resolver *r, const char *name) {
  for (size_t i = r->pending.len; i-- > 0;)
    if (strcmp(var_name(r->pending.data[i].var), name) == 0) return &r->pending.data[i];
  return NULL;
}

static void res_unbound_local(Resolver *r, Expr *e, bool skipped) {
  const char *name = e->var.name;
  diag_error(r->d, e->span, "unbound local variable %%%s", name);
  if (r->d->suppressed) return;
  Pending *p = skipped ? res_find_pending(r, name) : NULL;
  if (p) {
    diag_note(r->d, p->var->span,
              "a let variable is visible in its own value only when the value is a function");
    return;
  }
  void *val = NULL;
  const char *best = scope_suggest(r->locals, name, res_cap(name), &val);
  if (!best) best = scope_map_suggest(r->free_vars, name, res_cap(name), &val);
  if (best) diag_note(r->d, ((Var *)val)->span, "did you mean %%%s?", best);
}

static Expr *res_local(Resolver *r, Expr *e) {
  if (e->var.var) return e;
  const char *name = e->var.name;
  ScopeHit hit;
  Var *v = scope_lookup(r->locals, name, &hit);
  if (!v) v = scope_map_get(r->free_vars, name);
  if (!v) {
    res_unbound_local(r, e, hit.skipped_placeholder);
    e->var.var = var_new(r->m, name, e->span, NULL);
    return e;
  }
  /* A non-function let value that mentions its own name sees the outer binding
   * (relayc's lexical rule). TVM would read a self-reference there; we stay
   * silent, since relayc is silent on success and TVM never prints such text. */
  e->var.var = v;
  if (r->trackers.len && scope_at(r->locals, hit.index) == v) res_track(r, v, hit.index);
  return e;
}

/* ------------------------------------------------------------ graph table */

/* Graph numbers are nearly always dense (TVM prints %0..%N-1), so a number
 * close to the count seen so far indexes an array of binding nodes directly;
 * a sparse one (%4000000000) goes to a small open-addressing hash table. The
 * binding node keeps the resolved value and the position of `%N`.
 *
 * Scope (spec/text-format.md §5.2): one table for the whole text, as in TVM's
 * parser, since TVM's printer binds a shared node where it is first referenced
 * (in a branch, a function literal, even an earlier global) and refers to it
 * later from outside. What must hold is that the value's own variables are
 * still bound at the use: `%0 = add(%y, 1f)` inside `fn (%y)` used after the
 * literal would share a node that reads %y where no %y exists (TVM rejects
 * the module later, as a free variable). The innermost local a value uses from
 * outside itself is recorded with the binding (tracked while its value is
 * resolved: locals are a stack, so that one variable is bound at a use iff
 * all of them are), and a use where it is no longer bound is an error. */

/* Notes a use of the local bound at stack index `index` for every graph value
 * being resolved that it is outside of (innermost first, until one binds it).
 * A tracker whose need is already at least as deep stops the walk early: the
 * use that set it reached every enclosing tracker of greater depth then, so
 * only those of depth at most that need are left (deep nestings stay linear). */
static void res_track(Resolver *r, Var *v, uint32_t index) {
  uint32_t done_above = UINT32_MAX; /* trackers deeper than this already need >= index */
  for (size_t k = r->trackers.len; k-- > 0;) {
    GraphTracker *t = &r->trackers.data[k];
    if (index >= t->depth) return;
    if (t->depth > done_above) continue;
    if (t->need.var && t->need.index >= index) {
      if (t->need.index == index) return;
      done_above = t->need.index;
      continue;
    }
    t->need = (GraphNeed){v, index, NULL};
  }
}

static Expr *res_graph_find(Resolver *r, uint32_t num) {
  if (num < r->dense_cap && r->dense[num]) return r->dense[num];
  if (!r->graph_cap) return NULL;
  uint32_t mask = r->graph_cap - 1;
  for (uint32_t j = (num * 2654435761u) & mask; r->graph[j].bind; j = (j + 1) & mask)
    if (r->graph[j].num == num) return r->graph[j].bind;
  return NULL;
}

static void res_sparse_put(GraphSlot *slots, uint32_t cap, GraphSlot g) {
  uint32_t j = (g.num * 2654435761u) & (cap - 1);
  while (slots[j].bind) j = (j + 1) & (cap - 1);
  slots[j] = g;
}

static void res_sparse_add(Resolver *r, uint32_t num, Expr *bind) {
  if (2 * (r->nsparse + 1) > r->graph_cap) {
    GraphSlot *old = r->graph;
    uint32_t old_cap = r->graph_cap;
    r->graph_cap = old_cap ? old_cap * 2 : 64;
    r->graph = mem_calloc(r->graph_cap, sizeof *r->graph);
    for (uint32_t i = 0; i < old_cap; i++)
      if (old[i].bind) res_sparse_put(r->graph, r->graph_cap, old[i]);
    mem_free(old);
  }
  res_sparse_put(r->graph, r->graph_cap, (GraphSlot){num, bind});
  r->nsparse++;
}

/* Makes the dense array cover `num` if that keeps it within about twice the
 * number of bindings (plus slack); false when `num` is too sparse for it. */
static bool res_dense_cover(Resolver *r, uint32_t num) {
  if (num < r->dense_cap) return true;
  if (num >= 2 * (uint64_t)r->graph_n + 4096) return false;
  uint64_t cap = r->dense_cap ? 2 * (uint64_t)r->dense_cap : 256;
  if (cap <= num) cap = (uint64_t)num + 1;
  r->dense = mem_realloc(r->dense, cap * sizeof *r->dense);
  memset(r->dense + r->dense_cap, 0, (cap - r->dense_cap) * sizeof *r->dense);
  r->dense_cap = (uint32_t)cap;
  return true;
}

/* Span of the `%N` that starts a graph binding (the node's span, narrowed to
 * the sigil and digits when the source shows them there). */
static Span res_graph_name_span(Resolver *r, Expr *e) {
  Source *s = r->m->src;
  uint32_t lo = e->span.lo;
  if (!s || lo >= s->len || s->text[lo] != '%') return e->span;
  uint32_t hi = lo + 1;
  while (hi < s->len && s->text[hi] >= '0' && s->text[hi] <= '9') hi++;
  return span_make(lo, hi);
}

static void res_graph_bind(Resolver *r, Expr *e) {
  uint32_t num = e->graph_bind.num;
  vec_push(r->trackers, ((GraphTracker){scope_mark(r->locals), {NULL, 0, NULL}}));
  e->graph_bind.value = res_expr(r, e->graph_bind.value);
  GraphNeed need = r->trackers.data[--r->trackers.len].need;
  if (need.var) { /* (the enclosing values saw each use themselves) */
    need.bind = e;
    vec_push(r->needs, need);
    e->mark = (uint32_t)r->needs.len; /* the binding node leaves the tree here: its mark is ours */
  }
  Expr *old = res_graph_find(r, num);
  if (old) {
    diag_error(r->d, res_graph_name_span(r, e), "graph variable %%%u is already bound", num);
    diag_note(r->d, res_graph_name_span(r, old), "%%%u is first bound here", num);
    return;
  }
  if (res_dense_cover(r, num)) r->dense[num] = e;
  else res_sparse_add(r, num, e);
  r->graph_n++;
}

static Expr *res_graph_ref(Resolver *r, Expr *e) {
  uint32_t num = e->graph_ref.num;
  Expr *bind = res_graph_find(r, num);
  if (!bind) {
    diag_error(r->d, e->span, "graph variable %%%u is not bound", num);
    return res_poison(e);
  }
  uint32_t k = bind->mark;
  if (!k || k > r->needs.len || r->needs.data[k - 1].bind != bind) return bind->graph_bind.value;
  GraphNeed need = r->needs.data[k - 1];
  if (scope_at(r->locals, need.index) == need.var) {
    res_track(r, need.var, need.index);
    return bind->graph_bind.value;
  }
  diag_error(r->d, e->span, "graph variable %%%u is used outside the scope of %%%s, which its value uses", num,
             var_name(need.var));
  diag_note(r->d, res_graph_name_span(r, bind), "%%%u is bound here", num);
  diag_note(r->d, need.var->span, "%%%s is bound here; its scope ends before this use", var_name(need.var));
  return res_poison(e);
}

/* ----------------------------------------------------------------- types */

/* Binds a list of type parameters in a fresh group (duplicates are errors). */
static void res_tparams(Resolver *r, TypeParam **ps, uint32_t n) {
  uint32_t group = ++r->next_group;
  for (uint32_t i = 0; i < n; i++) {
    ScopeHit hit;
    TypeParam *old = scope_lookup(r->tvars, ps[i]->name, &hit);
    if (old && hit.group == group) {
      diag_error(r->d, ps[i]->span, "duplicate type parameter %s", ps[i]->name);
      diag_note(r->d, old->span, "%s is first declared here", old->name);
    }
    scope_push(r->tvars, ps[i]->name, ps[i], group);
  }
}

static void res_unknown_type(Resolver *r, Type *t, const char *name) {
  diag_error(r->d, t->span, "unknown type %s", name);
  if (r->d->suppressed) return;
  void *val = NULL;
  const char *best = scope_suggest(r->tvars, name, res_cap(name), &val);
  if (best) {
    diag_note(r->d, ((TypeParam *)val)->span, "did you mean %s?", best);
    return;
  }
  best = scope_map_suggest(r->types, name, res_cap(name), &val);
  if (best) diag_note(r->d, ((TypeDef *)val)->span, "did you mean %s?", best);
}

static void res_type_name(Resolver *r, Type *t) {
  const char *name = t->name.name;
  Type **args = t->name.args;
  uint32_t nargs = t->name.nargs;
  for (uint32_t i = 0; i < nargs; i++) res_type(r, args[i]);
  TypeParam *p = scope_lookup(r->tvars, name, NULL);
  if (p) {
    if (nargs) diag_error(r->d, t->span, "type parameter %s cannot take type arguments", name);
    t->kind = TYPE_VAR;
    t->var.param = p;
    return;
  }
  TypeDef *td = scope_map_get(r->types, name);
  if (td) {
    t->kind = TYPE_ADT;
    t->adt.def = td;
    t->adt.args = args;
    t->adt.nargs = nargs;
    return;
  }
  res_unknown_type(r, t, name);
  t->kind = TYPE_INCOMPLETE;
}

static void res_type(Resolver *r, Type *t) {
  if (!t || res_deep(r, t->span)) return;
  switch (t->kind) {
  case TYPE_TENSOR:
    for (uint32_t i = 0; i < t->tensor.ndim; i++)
      if (t->tensor.dims[i].kind == DIM_SYM)
        res_meta_check(r, "tir.SizeVar", (uint64_t)t->tensor.dims[i].value, t->span);
    break;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++) res_type(r, t->tuple.fields[i]);
    break;
  case TYPE_FUNC: {
    uint32_t mark = scope_mark(r->tvars);
    res_tparams(r, t->func.tparams, t->func.ntparams);
    for (uint32_t i = 0; i < t->func.nargs; i++) res_type(r, t->func.args[i]);
    res_type(r, t->func.ret);
    scope_pop(r->tvars, mark);
    break;
  }
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++) res_type(r, t->adt.args[i]);
    break;
  case TYPE_REF:
    res_type(r, t->ref.inner);
    break;
  case TYPE_NAME:
    res_type_name(r, t);
    break;
  case TYPE_VAR:
  case TYPE_INCOMPLETE:
  case TYPE_UVAR:
    break;
  }
}

/* ------------------------------------------------------------- attributes */

static void res_attr_value(Resolver *r, AttrValue *v) {
  if (!v || res_deep(r, v->span)) return;
  switch (v->kind) {
  case AV_META:
    res_meta_check(r, v->meta.key, v->meta.index, v->span);
    break;
  case AV_ARRAY:
    for (uint32_t i = 0; i < v->arr.n; i++) res_attr_value(r, v->arr.items[i]);
    break;
  case AV_EXPR:
    r->attr_name = v->expr->kind == EXPR_NAME;
    v->expr = res_expr(r, v->expr);
    r->attr_name = false;
    break;
  default:
    break;
  }
}

static void res_attrs(Resolver *r, Attrs *a, Span sp) {
  if (!a) return;
  for (uint32_t i = 0; i < a->n; i++) res_attr_value(r, a->items[i].value);
  if (a->meta_key) res_meta_check(r, a->meta_key, a->meta_index, sp);
}

/* ---------------------------------------------------- names and constructors */

static void res_unknown_op(Resolver *r, Expr *e) {
  const char *name = e->op.name;
  diag_error(r->d, e->span, "unknown operator \"%s\"", name);
  if (r->d->suppressed) return;
  const char *best = op_suggest(name);
  if (best) diag_note(r->d, e->span, "did you mean \"%s\"?", best);
  if (r->attr_name)
    diag_note(r->d, e->span, "a string attribute value must be quoted: \"%s\"", name);
}

/* op_lookup(name), remembered by the name's address: the parser interns
 * names, so a program's thousands of `add` are a few pointers, and the
 * registry does not change while a module is resolved. */
static int32_t res_op_id(Resolver *r, const char *name) {
  size_t k = ((uintptr_t)name >> 3) % (sizeof r->op_seen / sizeof r->op_seen[0]);
  if (!name || r->op_seen[k].name != name) {
    r->op_seen[k].id = op_lookup(name);
    r->op_seen[k].name = name;
    if (r->op_seen[k].id == OP_GRADIENT) r->m->mentions_gradient = true;
  }
  return r->op_seen[k].id;
}

static Expr *res_name(Resolver *r, Expr *e, bool callee) {
  const char *name = e->name.name;
  Ctor *c = scope_map_get(r->ctors, name);
  if (c) {
    e->kind = EXPR_CTOR;
    e->ctor.ctor = c;
    /* a field-less constructor written without a call is a call */
    if (c->nfields == 0 && !callee) return expr_call(r->m, e, NULL, 0, NULL, e->span);
    return e;
  }
  int32_t id = res_op_id(r, name);
  e->kind = EXPR_OP;
  e->op.name = name;
  e->op.id = id;
  if (id >= 0) return e;
  Ctor *later = scope_map_get(r->all_ctors, name);
  if (later) {
    const char *owner = later->owner ? later->owner->name : "?";
    diag_error(r->d, e->span, "constructor %s is used before its type %s is defined", name, owner);
    diag_note(r->d, later->owner ? later->owner->span : later->span,
              "type %s is defined here; a constructor is usable only after its type definition",
              owner);
    return e;
  }
  res_unknown_op(r, e);
  return e;
}

static Expr *res_global(Resolver *r, Expr *e) {
  if (e->global.def) return e;
  const char *name = e->global.name;
  GlobalDef *g = scope_map_get(r->globals, name);
  if (g) {
    e->global.def = g;
    return e;
  }
  /* Like TVM's parse_expr, a bare expression may mention a global that no
   * definition provides; only type inference rejects it (spec §5.3). */
  if (r->expr_mode) return e;
  diag_error(r->d, e->span, "undefined global @%s", name);
  if (r->d->suppressed) return e;
  void *val = NULL;
  const char *best = scope_map_suggest(r->globals, name, res_cap(name), &val);
  if (best) diag_note(r->d, ((GlobalDef *)val)->span, "did you mean @%s?", best);
  return e;
}

/* ---------------------------------------------------------------- patterns */

static void res_pattern(Resolver *r, Pattern *p, uint32_t group);

static void res_pattern_ctor(Resolver *r, Pattern *p, uint32_t group) {
  const char *name = p->ctor.name;
  Ctor *c = p->ctor.ctor ? p->ctor.ctor : scope_map_get(r->ctors, name);
  if (!c) {
    diag_error(r->d, p->span, "undefined constructor %s", name);
    Ctor *later = scope_map_get(r->all_ctors, name);
    void *val = NULL;
    const char *best = NULL;
    if (later && later->owner)
      diag_note(r->d, later->owner->span,
                "%s belongs to type %s, defined later; a constructor is usable only after its "
                "type definition",
                name, later->owner->name);
    else if (!r->d->suppressed && (best = scope_map_suggest(r->ctors, name, res_cap(name), &val)))
      diag_note(r->d, ((Ctor *)val)->span, "did you mean %s?", best);
  } else if (p->ctor.nargs != c->nfields) {
    diag_error(r->d, p->span, "constructor %s has %u field%s, but the pattern gives %u", name,
               c->nfields, c->nfields == 1 ? "" : "s", p->ctor.nargs);
  }
  p->ctor.ctor = c;
  for (uint32_t i = 0; i < p->ctor.nargs; i++) res_pattern(r, p->ctor.args[i], group);
}

static void res_pattern(Resolver *r, Pattern *p, uint32_t group) {
  if (res_deep(r, p->span)) return;
  switch (p->kind) {
  case PAT_WILDCARD:
    break;
  case PAT_VAR:
    res_type(r, p->var->annot);
    res_bind(r, p->var, group, "pattern variable");
    break;
  case PAT_CTOR:
    res_pattern_ctor(r, p, group);
    break;
  case PAT_TUPLE:
    for (uint32_t i = 0; i < p->tuple.n; i++) res_pattern(r, p->tuple.fields[i], group);
    break;
  }
}

/* ------------------------------------------------------------- expressions */

static void res_function(Resolver *r, Function *f) {
  uint32_t tmark = scope_mark(r->tvars), mark = scope_mark(r->locals);
  res_tparams(r, f->tparams, f->ntparams);
  uint32_t group = ++r->next_group;
  for (uint32_t i = 0; i < f->nparams; i++) {
    Var *p = f->params[i];
    res_type(r, p->annot);
    res_attrs(r, var_attrs(p), p->span);
    res_bind(r, p, group, "parameter");
  }
  res_type(r, f->ret_annot);
  res_attrs(r, f->attrs, f->span);
  f->body = res_expr(r, f->body);
  scope_pop(r->locals, mark);
  scope_pop(r->tvars, tmark);
}

/* Span of the trailing `meta[K][i]` argument of a call, found in the source
 * text (the parser records only the key and index); the call span otherwise. */
static Span res_meta_arg_span(Resolver *r, Expr *call, const char *key, uint32_t idx) {
  Source *s = r->m->src;
  char pat[160];
  int n = snprintf(pat, sizeof pat, "meta[%s][%u]", key, idx);
  if (!s || n <= 0 || (size_t)n >= sizeof pat || call->span.hi > s->len) return call->span;
  for (uint32_t lo = call->span.hi; lo-- > call->span.lo;)
    if (lo + (uint32_t)n <= call->span.hi && memcmp(s->text + lo, pat, (size_t)n) == 0)
      return span_make(lo, lo + (uint32_t)n);
  return call->span;
}

/* A trailing meta argument that is not an attribute object is an ordinary
 * argument (spec §3.6): move it from the attrs to the argument list. */
static void res_call_meta_arg(Resolver *r, Expr *e) {
  Attrs *a = e->call.attrs;
  if (!a || !a->meta_key || res_is_attrs_key(a->meta_key) || a->n) return;
  Expr *arg = expr_new(r->m, EXPR_META, res_meta_arg_span(r, e, a->meta_key, a->meta_index));
  arg->meta.key = a->meta_key;
  arg->meta.index = a->meta_index;
  Expr **args = arena_alloc(r->m->arena, (e->call.nargs + 1) * sizeof *args);
  if (e->call.nargs) memcpy(args, e->call.args, e->call.nargs * sizeof *args);
  args[e->call.nargs] = arg;
  e->call.args = args;
  e->call.nargs++;
  e->call.attrs = NULL;
}

static Expr *res_call(Resolver *r, Expr *e) {
  res_call_meta_arg(r, e);
  e->call.fn = res_expr_at(r, e->call.fn, true);
  for (uint32_t i = 0; i < e->call.nargs; i++) e->call.args[i] = res_expr(r, e->call.args[i]);
  res_attrs(r, e->call.attrs, e->span);
  Expr *fn = e->call.fn;
  if (fn->kind == EXPR_OP && fn->op.id >= 0)
    op_attrs_normalize(r->m, op_get(fn->op.id), &e->call.attrs, e->span, r->d);
  return e;
}

static Expr *res_match(Resolver *r, Expr *e) {
  e->match.scrut = res_expr(r, e->match.scrut);
  for (uint32_t i = 0; i < e->match.nclauses; i++) {
    Clause *c = &e->match.clauses[i];
    uint32_t mark = scope_mark(r->locals);
    res_pattern(r, c->pattern, ++r->next_group);
    c->body = res_expr(r, c->body);
    scope_pop(r->locals, mark);
  }
  return e;
}

/* Every form except the binding chains handled by res_expr_at. */
static Expr *res_node(Resolver *r, Expr *e, bool callee) {
  switch (e->kind) {
  case EXPR_CONST:
  case EXPR_CTOR:
    return e;
  case EXPR_OP: /* built by expr_op(): the id is looked up here */
    if (e->op.id < 0 && (e->op.id = res_op_id(r, e->op.name)) < 0) res_unknown_op(r, e);
    return e;
  case EXPR_VAR:
    return res_local(r, e);
  case EXPR_GLOBAL:
    return res_global(r, e);
  case EXPR_CALL:
    return res_call(r, e);
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) e->tuple.fields[i] = res_expr(r, e->tuple.fields[i]);
    return e;
  case EXPR_PROJ:
    e->proj.tuple = res_expr(r, e->proj.tuple);
    return e;
  case EXPR_FN:
    res_function(r, e->fn);
    return e;
  case EXPR_IF:
    e->if_.cond = res_expr(r, e->if_.cond);
    e->if_.then_ = res_expr(r, e->if_.then_);
    e->if_.else_ = res_expr(r, e->if_.else_);
    return e;
  case EXPR_MATCH:
    return res_match(r, e);
  case EXPR_REF_NEW:
  case EXPR_REF_READ:
    e->ref.arg = res_expr(r, e->ref.arg);
    return e;
  case EXPR_REF_WRITE:
    e->ref_write.ref = res_expr(r, e->ref_write.ref);
    e->ref_write.value = res_expr(r, e->ref_write.value);
    return e;
  case EXPR_NAME:
    return res_name(r, e, callee);
  case EXPR_GRAPH_REF:
    return res_graph_ref(r, e);
  case EXPR_META:
    return res_meta_expr(r, e);
  case EXPR_LET:
  case EXPR_GRAPH_BIND:
  case EXPR_FREE_VAR:
  case EXPR_KIND_COUNT:
    break;
  }
  UNREACHABLE();
}

/* The binding part of `let %x = value;`: the variable is visible in its value
 * only when the value is a function; it stays bound for the let's body. */
static void res_let_head(Resolver *r, Expr *e) {
  Var *v = e->let.var;
  res_type(r, v->annot);
  if (!var_name(v)[0]) {
    e->let.value = res_expr(r, e->let.value);
    return;
  }
  if (e->let.value->kind == EXPR_FN) {
    scope_push(r->locals, var_name(v), v, 0);
    e->let.value = res_expr(r, e->let.value);
    return;
  }
  uint32_t slot = scope_push(r->locals, var_name(v), NULL, 0);
  vec_push(r->pending, ((Pending){v}));
  e->let.value = res_expr(r, e->let.value);
  r->pending.len--;
  scope_fill(r->locals, slot, v);
}

static void res_free_var(Resolver *r, Expr *e) {
  Var *v = e->free_var.var;
  v->is_free = true;
  res_type(r, v->annot);
  scope_map_set(r->free_vars, var_name(v), v);
}

/* Resolves `e` and returns its replacement. Follows let / graph-binding /
 * free_var chains iteratively, then pops every local bound along the way. */
static Expr *res_expr_at(Resolver *r, Expr *e, bool callee) {
  if (res_deep(r, e->span)) return e;
  uint32_t mark = scope_mark(r->locals);
  Expr *root = NULL, **slot = &root;
  for (;;) {
    if (e->kind == EXPR_LET) {
      res_let_head(r, e);
      *slot = e;
      slot = &e->let.body;
      e = e->let.body;
    } else if (e->kind == EXPR_GRAPH_BIND) {
      res_graph_bind(r, e);
      e = e->graph_bind.body;
    } else if (e->kind == EXPR_FREE_VAR) {
      res_free_var(r, e);
      e = e->free_var.body;
    } else {
      *slot = res_node(r, e, callee);
      break;
    }
  }
  scope_pop(r->locals, mark);
  return root;
}

/* ----------------------------------------------------------------- module */

/* One definition in textual order: a def or a type definition. */
typedef struct Item {
  GlobalDef *def;
  TypeDef *type;
} Item;

/* Defs and type definitions merged by source position. */
static Item *res_items(Module *m, uint32_t *n) {
  *n = m->ndefs + m->ntypes;
  Item *items = mem_calloc(*n ? *n : 1, sizeof *items);
  uint32_t i = 0, j = 0, k = 0;
  while (i < m->ndefs || j < m->ntypes) {
    bool take_def = j == m->ntypes || (i < m->ndefs && m->defs[i]->span.lo <= m->types[j]->span.lo);
    if (take_def) items[k++].def = m->defs[i++];
    else items[k++].type = m->types[j++];
  }
  return items;
}

static void res_collect_type(Resolver *r, TypeDef *td) {
  TypeDef *old = scope_map_put(r->types, td->name, td);
  if (old) {
    diag_error(r->d, td->span, "duplicate definition of type %s", td->name);
    diag_note(r->d, old->span, "type %s is first defined here", td->name);
  }
  for (uint32_t i = 0; i < td->nctors; i++) {
    Ctor *c = td->ctors[i];
    if (!c->owner) c->owner = td, c->tag = i;
    Ctor *oc = scope_map_put(r->all_ctors, c->name, c);
    if (oc) {
      diag_error(r->d, c->span, "duplicate constructor %s", c->name);
      diag_note(r->d, oc->span, "%s is first defined here, in type %s", c->name,
                oc->owner ? oc->owner->name : "?");
    }
  }
}

static void res_collect_def(Resolver *r, GlobalDef *g) {
  GlobalDef *old = scope_map_put(r->globals, g->name, g);
  if (old) {
    diag_error(r->d, g->span, "duplicate definition of @%s", g->name);
    diag_note(r->d, old->span, "@%s is first defined here", g->name);
  }
}

static void res_typedef(Resolver *r, TypeDef *td) {
  uint32_t mark = scope_mark(r->tvars);
  res_tparams(r, td->tparams, td->ntparams);
  for (uint32_t i = 0; i < td->nctors; i++)
    for (uint32_t k = 0; k < td->ctors[i]->nfields; k++) res_type(r, td->ctors[i]->fields[k]);
  scope_pop(r->tvars, mark);
  for (uint32_t i = 0; i < td->nctors; i++) {
    Ctor *c = td->ctors[i];
    if (scope_map_get(r->all_ctors, c->name) == c) scope_map_put(r->ctors, c->name, c);
  }
}

static void res_init(Resolver *r, Module *m, Diag *d) {
  memset(r, 0, sizeof *r);
  r->m = m;
  r->d = d;
  r->locals = scope_new();
  r->tvars = scope_new();
  r->free_vars = scope_map_new();
  r->globals = scope_map_new();
  r->types = scope_map_new();
  r->all_ctors = scope_map_new();
  r->ctors = scope_map_new();
  r->meta_exprs = mem_calloc(m->nmeta_consts ? m->nmeta_consts : 1, sizeof *r->meta_exprs);
}

static void res_fini(Resolver *r) {
  scope_free(r->locals);
  scope_free(r->tvars);
  scope_map_free(r->free_vars);
  scope_map_free(r->globals);
  scope_map_free(r->types);
  scope_map_free(r->all_ctors);
  scope_map_free(r->ctors);
  mem_free(r->graph);
  mem_free(r->dense);
  mem_free(r->meta_exprs);
  vec_free(r->pending);
  vec_free(r->needs);
  vec_free(r->trackers);
}

/* Resolves the definitions of `m` and then its bare expression, if any. */
static bool res_run(Module *m, Diag *d, bool expr_mode) {
  Resolver r;
  res_init(&r, m, d);
  r.expr_mode = expr_mode;
  int before = d->nerrors;
  uint32_t n;
  Item *items = res_items(m, &n);
  for (uint32_t i = 0; i < n; i++) {
    if (items[i].type) res_collect_type(&r, items[i].type);
    else res_collect_def(&r, items[i].def);
  }
  for (uint32_t i = 0; i < n; i++) {
    if (items[i].type) res_typedef(&r, items[i].type);
    else res_function(&r, items[i].def->fn);
  }
  if (m->expr) m->expr = res_expr(&r, m->expr);
  mem_free(items);
  res_fini(&r);
  return d->nerrors == before;
}

bool resolve_module(Module *m, Diag *d) { return res_run(m, d, false); }

bool resolve_expression(Module *m, Diag *d) { return res_run(m, d, true); }

GlobalDef *module_find_def(Module *m, const char *name) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, name) == 0) return m->defs[i];
  return NULL;
}
