/* transform/pattern.c — the dataflow-pattern matcher and TVM's rewrite loop
 * (see pattern.h; spec/passes.md §1.3).
 *
 * One application of one rewrite to a function:
 *  1. the distinct nodes of the body (nested functions included) in post
 *     order, with their operator ids, by one iterative DFS (Graph);
 *  2. roots tried from the last node backwards; a quick filter on the root
 *     operator (the pattern's possible root operators as a bitmap) skips most
 *     nodes; a match records its slots and its inner nodes (those matched by
 *     call and constant patterns); it is accepted unless an inner call node
 *     is already claimed, or has a consumer outside the match that the root
 *     does not post-dominate (the post-dominator tree is built on first need);
 *  3. a Rewriter pass whose post hook calls the callback at accepted roots.
 * The graph is rebuilt only after an application changed the function, so a
 * round over an unchanged function costs one walk plus a filter per rewrite.
 * Matching recurses on the pattern (small) and on the expression only as
 * deep as the pattern reaches.
 */
#include "transform/pattern.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "sema/infer.h"
#include "transform/dagscan.h"
#include "transform/rewrite.h"

/* ------------------------------------------------------------ pattern pool */

struct DfPool {
  VEC(void *) blocks;
};

DfPool *dfp_pool_new(void) {
  DfPool *p = calloc(1, sizeof *p);
  if (!p) abort();
  return p;
}

void dfp_pool_free(DfPool *p) {
  if (!p) return;
  for (size_t i = 0; i < p->blocks.len; i++) free(p->blocks.data[i]);
  vec_free(p->blocks);
  free(p);
}

static void *pool_alloc(DfPool *p, size_t n) {
  void *b = calloc(1, n);
  if (!b) abort();
  vec_push(p->blocks, b);
  return b;
}

static DfPat *pat_new(DfPool *p, DfPatKind k, int slot) {
  if (slot >= DFP_MAX_SLOTS) abort();
  DfPat *d = pool_alloc(p, sizeof *d);
  d->pool = p;
  d->kind = k;
  d->slot = slot;
  d->cls = -1;
  d->nargs = -1;
  return d;
}

DfPat *dfp_wild(DfPool *p, int slot) { return pat_new(p, DFP_WILD, slot); }
DfPat *dfp_const(DfPool *p, int slot) { return pat_new(p, DFP_CONST, slot); }

static void set_args(DfPool *p, DfPat *d, int nargs, va_list ap) {
  d->nargs = nargs;
  if (nargs > 0) {
    d->args = pool_alloc(p, (size_t)nargs * sizeof *d->args);
    for (int i = 0; i < nargs; i++) d->args[i] = va_arg(ap, DfPat *);
  }
}

DfPat *dfp_call(DfPool *p, int slot, const char *ops, int nargs, ...) {
  DfPat *d = pat_new(p, DFP_CALL, slot);
  for (const char *s = ops; *s;) {
    const char *bar = strchr(s, '|');
    size_t n = bar ? (size_t)(bar - s) : strlen(s);
    char name[64];
    if (n < sizeof name) {
      memcpy(name, s, n);
      name[n] = 0;
      int32_t id = op_lookup(name);
      if (id >= 0 && d->nops < (int)(sizeof d->ops / sizeof d->ops[0])) d->ops[d->nops++] = id;
    }
    s += n + (bar ? 1 : 0);
  }
  d->commutative = d->nops == 1 && (d->ops[0] == OP_ADD || d->ops[0] == OP_MULTIPLY);
  va_list ap;
  va_start(ap, nargs);
  set_args(p, d, nargs, ap);
  va_end(ap);
  return d;
}

DfPat *dfp_call_class(DfPool *p, int slot, OpPattern cls, int nargs, ...) {
  DfPat *d = pat_new(p, DFP_CALL, slot);
  d->cls = (int)cls;
  va_list ap;
  va_start(ap, nargs);
  set_args(p, d, nargs, ap);
  va_end(ap);
  return d;
}

DfPat *dfp_alt(DfPool *p, int slot, DfPat *l, DfPat *r) {
  DfPat *d = pat_new(p, DFP_ALT, slot);
  d->l = l;
  d->r = r;
  return d;
}

DfPat *dfp_any(DfPool *p, int slot, int n, ...) {
  va_list ap;
  va_start(ap, n);
  DfPat **xs = pool_alloc(p, (size_t)(n > 0 ? n : 1) * sizeof *xs);
  for (int i = 0; i < n; i++) xs[i] = va_arg(ap, DfPat *);
  va_end(ap);
  DfPat *acc = xs[n - 1];
  for (int i = n - 2; i >= 0; i--) acc = dfp_alt(p, -1, xs[i], acc);
  if (slot >= 0) acc = dfp_alt(p, slot, acc, acc); /* a slot on the whole alternative */
  return acc;
}

/* ------------------------------------------------------------ the graph */

typedef struct Graph {
  DagScan s;          /* the nodes in post order (children before parents; the body last) */
  int32_t *opid;      /* per node: operator id of an operator call, -2 for a constant, else -1 */
  /* consumers (CSR), built on first need */
  bool have_users;
  uint32_t *ustart, *users;
  /* post-dominators, built on first need */
  bool have_pdom;
  uint32_t *ipdom, *depth;
  /* per node: claimed[i] == stamp marks cmask[i] (a bit per rewrite) as current */
  uint32_t *claimed, *cmask, stamp;
} Graph;

static inline int32_t callee_op(const Expr *e) {
  return e->kind == EXPR_CALL && e->call.fn->kind == EXPR_OP ? e->call.fn->op.id : -1;
}

static inline int32_t node_code(const Expr *e) { return e->kind == EXPR_CONST ? -2 : callee_op(e); }

static void graph_build(Graph *g, Expr *root) {
  dag_scan(&g->s, root);
  g->opid = mem_malloc((g->s.n + 1) * sizeof *g->opid);
  for (uint32_t i = 0; i < g->s.n; i++) g->opid[i] = node_code(dag_node(&g->s, i));
}

static void graph_free(Graph *g) {
  dag_free(&g->s);
  mem_free(g->opid);
  mem_free(g->ustart);
  mem_free(g->users);
  mem_free(g->ipdom);
  mem_free(g->depth);
  mem_free(g->claimed);
  mem_free(g->cmask);
  memset(g, 0, sizeof *g);
}

static uint32_t node_index(const Graph *g, const Expr *e) { return dag_index(&g->s, e); }

static void graph_users(Graph *g) {
  if (g->have_users) return;
  uint32_t n = g->s.n;
  g->ustart = mem_calloc(n + 2, sizeof *g->ustart);
  for (uint32_t i = 0; i < n; i++) {
    Expr *e = dag_node(&g->s, i), *k;
    for (uint32_t j = 0; (k = dag_child(e, j)); j++) {
      uint32_t c = node_index(g, k);
      if (c != UINT32_MAX) g->ustart[c + 2]++;
    }
  }
  for (uint32_t i = 2; i < n + 2; i++) g->ustart[i] += g->ustart[i - 1];
  g->users = mem_calloc(g->ustart[n + 1] + 1, sizeof *g->users);
  for (uint32_t i = 0; i < n; i++) {
    Expr *e = dag_node(&g->s, i), *k;
    for (uint32_t j = 0; (k = dag_child(e, j)); j++) {
      uint32_t c = node_index(g, k);
      if (c != UINT32_MAX) g->users[g->ustart[c + 1]++] = i;
    }
  }
  /* ustart[c + 1] now ends c's list; ustart[c] starts it */
  g->have_users = true;
}

/* Immediate post-dominators over the consumer edges, the body (last node)
 * being the exit: a node's ipdom is the common ancestor of its consumers. */
static void graph_pdom(Graph *g) {
  if (g->have_pdom) return;
  graph_users(g);
  uint32_t n = g->s.n;
  g->ipdom = mem_calloc(n + 1, sizeof *g->ipdom);
  g->depth = mem_calloc(n + 1, sizeof *g->depth);
  if (n == 0) return;
  g->ipdom[n - 1] = n - 1;
  for (uint32_t i = n - 1; i-- > 0;) {
    uint32_t a = UINT32_MAX;
    for (uint32_t k = g->ustart[i]; k < g->ustart[i + 1]; k++) {
      uint32_t b = g->users[k];
      if (a == UINT32_MAX) { a = b; continue; }
      while (a != b) {
        if (g->depth[a] > g->depth[b]) a = g->ipdom[a];
        else if (g->depth[b] > g->depth[a]) b = g->ipdom[b];
        else { a = g->ipdom[a]; b = g->ipdom[b]; }
      }
    }
    if (a == UINT32_MAX) a = n - 1; /* unreachable in practice */
    g->ipdom[i] = a;
    g->depth[i] = g->depth[a] + 1;
  }
  g->have_pdom = true;
}

/* Whether every path from node c to the exit passes through node r. */
static bool post_dominates(Graph *g, uint32_t r, uint32_t c) {
  graph_pdom(g);
  while (g->depth[c] > g->depth[r]) c = g->ipdom[c];
  return c == r;
}

/* ------------------------------------------------------------ matching */

typedef struct Matcher {
  Expr *slot[DFP_MAX_SLOTS];
  VEC(int) trail;       /* slots bound, in order (for undo) */
  VEC(Expr *) inner;    /* nodes matched by call / constant patterns */
} Matcher;

static bool same_node(const Expr *a, const Expr *b) {
  if (a == b) return true;
  if (a->kind == EXPR_VAR && b->kind == EXPR_VAR) return a->var.var == b->var.var;
  if (a->kind == EXPR_CONST && b->kind == EXPR_CONST) return a->constant == b->constant;
  return false;
}

static void undo(Matcher *mt, size_t trail, size_t inner) {
  while (mt->trail.len > trail) mt->slot[mt->trail.data[--mt->trail.len]] = NULL;
  mt->inner.len = inner;
}

static bool bind(Matcher *mt, int slot, Expr *e) {
  if (slot < 0) return true;
  if (mt->slot[slot]) return same_node(mt->slot[slot], e);
  mt->slot[slot] = e;
  vec_push(mt->trail, slot);
  return true;
}

static bool match(Matcher *mt, const DfPat *p, Expr *e);

static bool match_args(Matcher *mt, DfPat *const *ps, Expr **es, int n, bool swap) {
  for (int i = 0; i < n; i++)
    if (!match(mt, ps[swap ? n - 1 - i : i], es[i])) return false;
  return true;
}

static bool match_call(Matcher *mt, const DfPat *p, Expr *e) {
  int32_t id = callee_op(e);
  if (id < 0) return false;
  if (p->cls >= 0) {
    if ((int)op_pattern(id) != p->cls) return false;
  } else {
    bool in = false;
    for (int i = 0; i < p->nops && !in; i++) in = p->ops[i] == id;
    if (!in) return false;
  }
  if (p->nargs >= 0) {
    if ((int)e->call.nargs != p->nargs) return false;
    size_t tw = mt->trail.len, iw = mt->inner.len;
    if (!match_args(mt, p->args, e->call.args, p->nargs, false)) {
      undo(mt, tw, iw);
      if (!p->commutative || p->nargs != 2 || !match_args(mt, p->args, e->call.args, 2, true)) {
        undo(mt, tw, iw);
        return false;
      }
    }
  }
  vec_push(mt->inner, e);
  return true;
}

static void root_ops(const DfPat *p, uint8_t *bits, uint32_t nbits, bool *any, int depth);
static bool pattern_accepts_const(const DfPat *p, int depth);

/* Cheap rejection: e cannot match p when it is not a call of one of p's
 * possible root operators (nor a constant where p accepts one). Computed once
 * per pattern node; turns a failing alternative tree into one bit test. */
static void filter_init(DfPat *p) {
  if (!p->filter) {
    uint32_t nbits = op_count();
    p->filter = pool_alloc(p->pool, nbits / 8 + 1);
    p->filter_nbits = nbits;
    bool any = false;
    root_ops(p, p->filter, nbits, &any, 0);
    p->filter_any = any;
    p->filter_const = pattern_accepts_const(p, 0);
  }
}

/* The same test on a node's precomputed operator id (-1: not an operator
 * call, -2: a constant). */
static bool may_match_id(DfPat *p, int32_t id) {
  if (p->kind == DFP_WILD) return true;
  filter_init(p);
  if (p->filter_any) return true;
  if (id == -2) return p->filter_const;
  return id >= 0 && (uint32_t)id < p->filter_nbits && (p->filter[id / 8] >> (id % 8)) & 1;
}

static bool may_match(DfPat *p, const Expr *e) { return may_match_id(p, node_code(e)); }

static bool match_passed(Matcher *mt, const DfPat *p, Expr *e);

/* An alternative: left, else right; each side is entered only when its
 * filter lets e through (computed once for both sides). */
static bool match_alt(Matcher *mt, const DfPat *p, Expr *e) {
  int32_t code = node_code(e);
  if (may_match_id(p->l, code) && match_passed(mt, p->l, e)) return true;
  return p->r != p->l && may_match_id(p->r, code) && match_passed(mt, p->r, e);
}

/* A wildcard only binds its slot (nothing to undo when that fails), without
 * the call. */
static bool match(Matcher *mt, const DfPat *p, Expr *e) {
  if (p->kind == DFP_WILD) return bind(mt, p->slot, e);
  return may_match((DfPat *)p, e) && match_passed(mt, p, e);
}

/* match once e passed p's filter. */
static bool match_passed(Matcher *mt, const DfPat *p, Expr *e) {
  if (stack_exhausted()) return false;
  size_t tw = mt->trail.len, iw = mt->inner.len;
  bool ok = false;
  switch (p->kind) {
  case DFP_WILD: ok = true; break;
  case DFP_CONST:
    ok = e->kind == EXPR_CONST;
    if (ok) vec_push(mt->inner, e);
    break;
  case DFP_CALL: ok = match_call(mt, p, e); break;
  case DFP_ALT: ok = match_alt(mt, p, e); break;
  }
  if (ok) ok = bind(mt, p->slot, e);
  if (!ok) undo(mt, tw, iw);
  return ok;
}

static bool pattern_accepts_const(const DfPat *p, int depth) {
  if (depth > 16) return true;
  switch (p->kind) {
  case DFP_WILD:
  case DFP_CONST: return true;
  case DFP_CALL: return false;
  case DFP_ALT: return pattern_accepts_const(p->l, depth + 1) || pattern_accepts_const(p->r, depth + 1);
  }
  return true;
}

/* Operators that can be at the root of p (bitmap by id); *any is set when
 * the root may be anything (a wildcard). Used once per pattern node (may_match). */
static void root_ops(const DfPat *p, uint8_t *bits, uint32_t nbits, bool *any, int depth) {
  if (depth > 16) { *any = true; return; }
  switch (p->kind) {
  case DFP_WILD: *any = true; break;
  case DFP_CONST: break;
  case DFP_CALL:
    if (p->cls >= 0) {
      for (uint32_t id = 0; id < nbits; id++)
        if ((int)op_pattern((int32_t)id) == p->cls) bits[id / 8] |= (uint8_t)(1u << (id % 8));
      break;
    }
    for (int i = 0; i < p->nops; i++)
      if ((uint32_t)p->ops[i] < nbits) bits[p->ops[i] / 8] |= (uint8_t)(1u << (p->ops[i] % 8));
    break;
  case DFP_ALT:
    root_ops(p->l, bits, nbits, any, depth + 1);
    root_ops(p->r, bits, nbits, any, depth + 1);
    break;
  }
}

/* ------------------------------------------------------------ equality */

static bool attrs_eq(const Attrs *a, const Attrs *b) {
  if (a == b) return true;
  uint32_t na = a ? a->n : 0, nb = b ? b->n : 0;
  if (na != nb) return false;
  if ((a ? a->meta_key : NULL) != (b ? b->meta_key : NULL)) return false;
  for (uint32_t i = 0; i < na; i++) {
    if (strcmp(a->items[i].key, b->items[i].key) != 0) return false;
    if (!attr_value_equal(a->items[i].value, b->items[i].value)) return false;
  }
  return true;
}

static bool const_eq(const ConstTensor *a, const ConstTensor *b) {
  if (a == b) return true;
  if (!dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim || a->nbytes != b->nbytes) return false;
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return memcmp(a->data, b->data, a->nbytes) == 0;
}

typedef VEC(const Expr *) PairStack;

/* The fields of one pair (not the children); children are pushed. */
static bool node_eq(const Expr *a, const Expr *b, PairStack *st) {
  if (a->kind != b->kind) return false;
#define PUSH2(x, y) do { vec_push(*st, (x)); vec_push(*st, (y)); } while (0)
  switch (a->kind) {
  case EXPR_CONST: return const_eq(a->constant, b->constant);
  case EXPR_VAR: return a->var.var == b->var.var;
  case EXPR_GLOBAL: return a->global.def == b->global.def;
  case EXPR_OP: return a->op.id == b->op.id;
  case EXPR_CTOR: return a->ctor.ctor == b->ctor.ctor;
  case EXPR_CALL:
    if (a->call.nargs != b->call.nargs || !attrs_eq(a->call.attrs, b->call.attrs)) return false;
    PUSH2(a->call.fn, b->call.fn);
    for (uint32_t i = 0; i < a->call.nargs; i++) PUSH2(a->call.args[i], b->call.args[i]);
    return true;
  case EXPR_TUPLE:
    if (a->tuple.n != b->tuple.n) return false;
    for (uint32_t i = 0; i < a->tuple.n; i++) PUSH2(a->tuple.fields[i], b->tuple.fields[i]);
    return true;
  case EXPR_PROJ:
    if (a->proj.index != b->proj.index) return false;
    PUSH2(a->proj.tuple, b->proj.tuple);
    return true;
  case EXPR_FN: {
    const Function *f = a->fn, *g = b->fn;
    if (f->nparams != g->nparams || f->attrs != g->attrs || f->ret_annot != g->ret_annot) return false;
    for (uint32_t i = 0; i < f->nparams; i++)
      if (f->params[i] != g->params[i]) return false;
    PUSH2(f->body, g->body);
    return true;
  }
  case EXPR_LET:
    if (a->let.var != b->let.var) return false;
    PUSH2(a->let.value, b->let.value);
    PUSH2(a->let.body, b->let.body);
    return true;
  case EXPR_IF:
    PUSH2(a->if_.cond, b->if_.cond);
    PUSH2(a->if_.then_, b->if_.then_);
    PUSH2(a->if_.else_, b->if_.else_);
    return true;
  case EXPR_MATCH:
    if (a->match.nclauses != b->match.nclauses || a->match.partial != b->match.partial) return false;
    for (uint32_t i = 0; i < a->match.nclauses; i++) {
      if (a->match.clauses[i].pattern != b->match.clauses[i].pattern) return false;
      PUSH2(a->match.clauses[i].body, b->match.clauses[i].body);
    }
    PUSH2(a->match.scrut, b->match.scrut);
    return true;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: PUSH2(a->ref.arg, b->ref.arg); return true;
  case EXPR_REF_WRITE:
    PUSH2(a->ref_write.ref, b->ref_write.ref);
    PUSH2(a->ref_write.value, b->ref_write.value);
    return true;
  default: return false;
  }
#undef PUSH2
}

bool dfp_equal(const Expr *a, const Expr *b) {
  if (a == b) return true;
  PairStack st = {0};
  PtrMap seen = {0}; /* a -> b already compared */
  vec_push(st, a);
  vec_push(st, b);
  bool eq = true;
  while (eq && st.len) {
    const Expr *y = st.data[--st.len], *x = st.data[--st.len];
    if (x == y) continue;
    const int64_t *s = ptrmap_find(&seen, x);
    if (s && (const Expr *)(intptr_t)*s == y) continue;
    ptrmap_put(&seen, x, (int64_t)(intptr_t)y);
    eq = node_eq(x, y, &st);
  }
  vec_free(st);
  ptrmap_free(&seen);
  return eq;
}

/* ------------------------------------------------------------ one application */

typedef struct Group {
  Expr *root;
  Expr *slot[DFP_MAX_SLOTS];
} Group;

typedef struct Apply {
  const DfRewrite *rw;
  DfCtx cx;
  Graph *g;
  VEC(Group) groups;
  PtrMap roots; /* root node -> group index + 1 */
  bool changed; /* some callback returned a real replacement */
} Apply;

static bool in_list(Expr *const *xs, size_t n, const Expr *e) {
  for (size_t i = 0; i < n; i++)
    if (xs[i] == e) return true;
  return false;
}

static bool claimed_by(const Graph *g, uint32_t i, uint32_t stamp, int r) {
  return g->claimed[i] == stamp && (g->cmask[i] >> r) & 1;
}

/* Per node code (operator id, -2 a constant, -1 anything else): a bit per
 * rewrite whose pattern may match a node of that code at its root
 * (may_match_id), so that a node is offered only to those rewrites, not
 * asked of each in turn. */
typedef struct RootMasks {
  uint32_t *by_op; /* nops of them, each computed when a node of that operator is first met */
  uint8_t *known;  /* by_op[id] computed */
  uint32_t nops, on_const, on_other;
} RootMasks;

static uint32_t rewrites_matching(const DfRewrite *rws, int n, int32_t code) {
  uint32_t mask = 0;
  for (int r = 0; r < n; r++)
    if (may_match_id(rws[r].pattern, code)) mask |= 1u << r;
  return mask;
}

static void root_masks_init(RootMasks *rm, const DfRewrite *rws, int n) {
  rm->nops = op_count();
  rm->by_op = mem_malloc((rm->nops + 1) * sizeof *rm->by_op);
  rm->known = mem_calloc(rm->nops + 1, 1);
  rm->on_const = rewrites_matching(rws, n, -2);
  rm->on_other = rewrites_matching(rws, n, -1);
}

static void root_masks_free(RootMasks *rm) {
  mem_free(rm->by_op);
  mem_free(rm->known);
}

static uint32_t root_mask(RootMasks *rm, const DfRewrite *rws, int n, int32_t code) {
  if (code == -2) return rm->on_const;
  if (code < 0) return rm->on_other;
  if ((uint32_t)code >= rm->nops) return rewrites_matching(rws, n, code);
  if (!rm->known[code]) {
    rm->by_op[code] = rewrites_matching(rws, n, code);
    rm->known[code] = 1;
  }
  return rm->by_op[code];
}

/* The bits of rewrites [k, last). */
static uint32_t rewrite_range(int k, int last) {
  uint32_t below_last = last >= 32 ? UINT32_MAX : (1u << last) - 1;
  return below_last & ~((1u << k) - 1);
}

static bool group_ok(Graph *g, uint32_t stamp, int r, Matcher *mt, uint32_t root) {
  for (size_t i = 0; i < mt->inner.len; i++) {
    Expr *e = mt->inner.data[i];
    if (e->kind == EXPR_CONST) continue; /* constants may be shared freely */
    uint32_t k = node_index(g, e);
    if (k == UINT32_MAX || claimed_by(g, k, stamp, r)) return false;
    if (k == root) continue;
    graph_users(g);
    for (uint32_t u = g->ustart[k]; u < g->ustart[k + 1]; u++) {
      uint32_t c = g->users[u];
      if (in_list(mt->inner.data, mt->inner.len, dag_node(&g->s, c))) continue;
      if (!post_dominates(g, root, c)) return false;
    }
  }
  return true;
}

static Expr *apply_post(Rewriter *rw, Expr *old, Expr *e) {
  Apply *ap = rw->ud;
  const int64_t *gi = ptrmap_find(&ap->roots, old);
  if (!gi) return e;
  Group *gr = &ap->groups.data[*gi - 1];
  DfMatch m;
  memset(&m, 0, sizeof m);
  for (int s = 0; s < DFP_MAX_SLOTS; s++) {
    m.pre[s] = gr->slot[s];
    m.post[s] = !gr->slot[s] ? NULL : gr->slot[s] == old ? e : rw_expr(rw, gr->slot[s]);
  }
  Expr *r = ap->rw->fn(&ap->cx, old, e, &m);
  if (!r || r == e) return e;
  if (dfp_equal(r, e)) return e;
  ap->changed = true;
  return r;
}

/* Finds the accepted matches of rewrites [k, n) on the graph in one sweep
 * over the nodes (node-major: a node's neighbourhood is tried by every
 * rewrite while it is in cache), each rewrite with its own claims, exactly
 * as if each ran alone on this graph. Stops collecting after the first
 * rewrite j whose matches would change something (asked speculatively, as if
 * no child changed: when every match declines that way, nothing changes);
 * returns j, or n when none would. aps[k..j] hold the matches. */
static int collect(Module *m, Diag *d, Graph *g, const DfRewrite *rws, int k, int n, void *ud, Apply *aps,
                   RootMasks *rm) {
  uint32_t nn = g->s.n;
  if (!g->claimed) {
    g->claimed = mem_calloc(nn + 1, sizeof *g->claimed);
    g->cmask = mem_calloc(nn + 1, sizeof *g->cmask);
  }
  uint32_t stamp = ++g->stamp; /* node i is claimed by rewrite r: claimed[i] == stamp && bit r of cmask[i] */
  for (int r = k; r < n; r++) aps[r] = (Apply){.rw = &rws[r], .cx = {m, d, ud}, .g = g};
  int last = n; /* rewrites beyond the first changing one are not needed */
  Matcher mt;
  memset(&mt, 0, sizeof mt);
  for (uint32_t i = nn; i-- > 0;) {
    uint32_t cand = root_mask(rm, rws, n, g->opid[i]) & rewrite_range(k, last);
    if (cand && g->claimed[i] == stamp) cand &= ~g->cmask[i]; /* a match of r claims bit r only */
    for (; cand; cand &= rewrite_range(k, last)) {
      int r = __builtin_ctz(cand);
      cand &= cand - 1;
      Expr *e = dag_node(&g->s, i);
      memset(mt.slot, 0, sizeof mt.slot);
      mt.trail.len = mt.inner.len = 0;
      if (!match(&mt, rws[r].pattern, e)) continue;
      if (!group_ok(g, stamp, r, &mt, i)) continue;
      for (size_t q = 0; q < mt.inner.len; q++) {
        uint32_t j = node_index(g, mt.inner.data[q]);
        if (j == UINT32_MAX || mt.inner.data[q]->kind == EXPR_CONST) continue;
        if (g->claimed[j] != stamp) g->claimed[j] = stamp, g->cmask[j] = 0;
        g->cmask[j] |= 1u << r;
      }
      Apply *ap = &aps[r];
      Group gr;
      memset(&gr, 0, sizeof gr);
      gr.root = e;
      memcpy(gr.slot, mt.slot, sizeof gr.slot);
      vec_push(ap->groups, gr);
      if (!ap->changed) {
        DfMatch sm;
        memcpy(sm.pre, mt.slot, sizeof sm.pre);
        memcpy(sm.post, mt.slot, sizeof sm.post);
        Expr *rep = rws[r].fn(&ap->cx, e, e, &sm);
        if (rep && rep != e && !dfp_equal(rep, e)) {
          ap->changed = true;
          /* rewrites after r will see another graph: stop collecting for them */
          for (int q = r + 1; q < last; q++) {
            vec_free(aps[q].groups);
            ptrmap_free(&aps[q].roots);
            aps[q].changed = false;
          }
          last = r + 1;
        }
      }
    }
  }
  vec_free(mt.trail);
  vec_free(mt.inner);
  for (int r = k; r < last; r++)
    if (aps[r].changed) return r;
  return n;
}

/* Rebuilds f with ap's matches rewritten; true when the body changed. */
static bool rewrite(Module *m, Diag *d, Function *f, Apply *ap, bool *failed) {
  for (size_t i = 0; i < ap->groups.len; i++) ptrmap_put(&ap->roots, ap->groups.data[i].root, (int64_t)i + 1);
  ap->changed = false;
  Rewriter r;
  rw_init(&r, m, d);
  r.post = apply_post;
  r.ud = ap;
  Expr *body = rw_expr(&r, f->body);
  if (r.failed) *failed = true;
  rw_fini(&r);
  if (ap->changed && body != f->body) {
    f->body = body;
    return true;
  }
  return false;
}

static void apply_free(Apply *ap) {
  vec_free(ap->groups);
  ptrmap_free(&ap->roots);
}

bool dfp_rewrite_function(Module *m, Diag *d, Function *f, const DfRewrite *rewrites, int n, void *ud,
                          const char *what) {
  if (n > DFP_MAX_REWRITES) abort(); /* a bug in the caller */
  int rounds = 0;
  Graph g;
  memset(&g, 0, sizeof g);
  Apply *aps = mem_calloc((size_t)n + 1, sizeof *aps);
  RootMasks rm;
  root_masks_init(&rm, rewrites, n);
  bool have_graph = false, failed = false, equal;
  Expr *original = f->body;
  do {
    Expr *round_start = f->body;
    for (int k = 0; k < n && !failed;) {
      if (!have_graph) {
        graph_build(&g, f->body);
        have_graph = true;
      }
      int j = collect(m, d, &g, rewrites, k, n, ud, aps, &rm);
      bool changed = j < n && rewrite(m, d, f, &aps[j], &failed);
      for (int r = k; r < n && r <= j; r++) apply_free(&aps[r]);
      k = j + 1;
      if (changed) {
        graph_free(&g);
        have_graph = false;
        int before = d->nerrors;
        if (!infer_untyped(m, f->body, d)) {
          if (d->nerrors == before)
            diag_plain(d, DIAG_ERROR, "%s: rewrite %s built an ill-typed expression", what, rewrites[j].name);
          failed = true;
        }
      }
    }
    equal = f->body == round_start || dfp_equal(f->body, round_start);
    rounds++;
  } while (!failed && !equal && rounds < DFP_MAX_ROUNDS);
  graph_free(&g);
  mem_free(aps);
  root_masks_free(&rm);
  if (failed) return false;
  if (!equal)
    diag_plain(d, DIAG_WARNING,
               "%s: no fixed point after %d rounds of %d rewrites; the program is kept as far as it was "
               "simplified (TVM aborts after 100 rewrite applications: \"Observed 100 rewrite passes\")",
               what, rounds, n);
  if (f->body != original) f->type = NULL;
  return true;
}
