/* transform/fuse_partition.c — FuseOps' graph, post-dominator tree and
 * grouping (see fuse_partition.h; spec/passes.md §6.1).
 *
 * The graph: one node per dataflow expression (constants, variables, calls,
 * tuples, projections, and as opaque stops let/if/match/ref nodes). An edge
 * runs from a producer to each consumer with the consumer's pattern class
 * (a broadcast consumer whose argument already has the result's shape gives
 * an elementwise edge); tuple fields and projections give injective edges;
 * everything else referenced from a non-dataflow position (the function
 * result, parameters, let values and bodies, branches, ...) is marked
 * extern and cut off.
 *
 * The post-dominator of a node is the least common ancestor of its
 * consumers in the tree built so far (consumers come later in post-order, so
 * one reverse sweep builds the tree), with the strongest class met on the
 * way. Three sweeps then try to merge each node into its post-dominator's
 * group (union-find), under the class rules of TVM's partitioner: O nodes
 * take elementwise epilogues (sweep 1), E/B nodes join injective, reduction
 * or O groups (sweeps 1-2), I nodes and tuples join injective groups
 * (sweep 2), and injective nodes join tuples already merged into injective
 * groups (sweep 3). max_depth bounds the nodes per group. TVM's
 * max_function_args limit is 0 (unlimited) for relayc's single CPU target,
 * so its argument counting is not needed.
 */
#include "transform/fuse_partition.h"

#include <string.h>

#include "ir/diag.h"
#include "ops/op_traits.h"
#include "transform/dagscan.h"
#include "transform/rewrite.h"

/* ---------------------------------------------------------------- graph */

static const void *key_of(const Expr *e) { return e->kind == EXPR_VAR ? (const void *)e->var.var : (const void *)e; }

/* Expressions that become nodes (function literals, operators, globals and
 * constructors never do). */
static bool is_node_kind(ExprKind k) {
  return k != EXPR_FN && k != EXPR_OP && k != EXPR_GLOBAL && k != EXPR_CTOR;
}

static uint32_t node_for_key(FusePartition *fp, const void *key) {
  int64_t *slot = ptrmap_find(&fp->ids, key);
  if (slot) return (uint32_t)*slot;
  FuseNode n = {.index = -1, .pattern = OPAT_OPAQUE, .extern_ref = 0, .out_head = -1, .out_tail = -1};
  vec_push(fp->nodes, n);
  vec_push(fp->keys, key);
  vec_push(fp->visited, 0);
  uint32_t id = (uint32_t)fp->nodes.len - 1;
  ptrmap_put(&fp->ids, key, id);
  return id;
}

/* The node id of an expression of a node kind, through its mark when that
 * is valid (set here on first use). A variable's node is found through the
 * map (one node per binder); any other expression with no valid mark has no
 * node yet (nothing else writes marks while the graph is built), so it gets
 * one without a hash insertion. */
static uint32_t node_of_expr(FusePartition *fp, const Expr *e) {
  const void *key = key_of(e);
  uint32_t m = e->mark;
  if (m && m <= fp->keys.len && fp->keys.data[m - 1] == key) return m - 1;
  uint32_t id;
  if (e->kind == EXPR_VAR) {
    id = node_for_key(fp, key);
  } else {
    FuseNode n = {.index = -1, .pattern = OPAT_OPAQUE, .extern_ref = 0, .out_head = -1, .out_tail = -1};
    vec_push(fp->nodes, n);
    vec_push(fp->keys, key);
    vec_push(fp->visited, 0);
    id = (uint32_t)fp->nodes.len - 1;
  }
  ((Expr *)e)->mark = id + 1;
  return id;
}

/* TVM's Update: parent < 0 marks e extern, else adds the edge e -> parent. */
static void update(FusePartition *fp, const Expr *e, int32_t parent, uint8_t pattern) {
  if (!is_node_kind(e->kind)) return;
  uint32_t id = node_of_expr(fp, e);
  if (parent < 0) {
    fp->nodes.data[id].extern_ref = 1;
    return;
  }
  FuseEdge ed = {(uint32_t)parent, pattern, -1};
  vec_push(fp->edges, ed);
  int32_t eid = (int32_t)fp->edges.len - 1;
  FuseNode *n = &fp->nodes.data[id];
  if (n->out_tail < 0) n->out_head = eid;
  else fp->edges.data[n->out_tail].next = eid;
  n->out_tail = eid;
}

static void update_var(FusePartition *fp, Var *v, int32_t parent) {
  uint32_t id = node_for_key(fp, v);
  if (parent < 0) fp->nodes.data[id].extern_ref = 1;
}

static void add_node_id(FusePartition *fp, uint32_t id) {
  if (fp->nodes.data[id].index >= 0) return;
  fp->nodes.data[id].index = (int32_t)fp->post.len;
  vec_push(fp->post, id);
}

static void add_node(FusePartition *fp, const void *key) { add_node_id(fp, node_for_key(fp, key)); }

static bool same_shape(const Type *a, const Type *b) {
  if (a->tensor.ndim != b->tensor.ndim) return false;
  for (uint32_t i = 0; i < a->tensor.ndim; i++) {
    const Dim *x = &a->tensor.dims[i], *y = &b->tensor.dims[i];
    if (x->kind != y->kind) return false;
    if (x->kind != DIM_ANY && (x->value != y->value || !dtype_eq(x->dtype, y->dtype))) return false;
  }
  return true;
}

static bool is_tensor(const Expr *e) {
  const Type *t = type_solved(e->type);
  return t && t->kind == TYPE_TENSOR;
}

/* Pattern of a constant: scalar int32/int64/float32/float64/bool are
 * elementwise (fused into their consumer), anything else opaque. */
static uint8_t const_pattern(const ConstTensor *c) {
  DType d = c->dtype;
  bool simple = d.lanes == 1 && ((d.code == DT_INT && (d.bits == 32 || d.bits == 64)) ||
                                 (d.code == DT_FLOAT && (d.bits == 32 || d.bits == 64)) ||
                                 (d.code == DT_UINT && d.bits == 1));
  return c->ndim == 0 && simple ? OPAT_ELEMWISE : OPAT_OPAQUE;
}

/* The pre-actions of TVM's IndexedForwardGraphCreator at the first visit of e
 * (its node already exists: its parent created it). */
static void pre_visit(FusePartition *fp, Expr *e) {
  int32_t self = (int32_t)node_of_expr(fp, e);
  switch (e->kind) {
  case EXPR_CALL: {
    uint8_t pat = OPAT_OPAQUE;
    Expr *callee = e->call.fn;
    if (callee->kind == EXPR_OP) pat = (uint8_t)op_pattern(callee->op.id);
    else update(fp, callee, self, OPAT_OPAQUE);
    fp->nodes.data[self].pattern = pat;
    update(fp, callee, -1, OPAT_OPAQUE);
    const Type *rt = type_solved(e->type);
    for (uint32_t i = 0; i < e->call.nargs; i++) {
      Expr *a = e->call.args[i];
      const Type *at = type_solved(a->type);
      uint8_t ep = pat;
      if (ep == OPAT_BROADCAST && rt && at && rt->kind == TYPE_TENSOR && at->kind == TYPE_TENSOR && same_shape(rt, at))
        ep = OPAT_ELEMWISE;
      update(fp, a, self, ep);
    }
    break;
  }
  case EXPR_TUPLE:
    fp->nodes.data[self].pattern = OPAT_TUPLE;
    for (uint32_t i = 0; i < e->tuple.n; i++) {
      Expr *f = e->tuple.fields[i];
      if (is_tensor(f)) update(fp, f, self, OPAT_INJECTIVE);
      else update(fp, f, -1, OPAT_OPAQUE);
    }
    break;
  case EXPR_PROJ: {
    const Type *tt = type_solved(e->proj.tuple->type);
    bool all_tensors = tt && tt->kind == TYPE_TUPLE;
    for (uint32_t i = 0; all_tensors && i < tt->tuple.n; i++) {
      const Type *ft = type_solved(tt->tuple.fields[i]);
      all_tensors = ft && ft->kind == TYPE_TENSOR;
    }
    if (!all_tensors) {
      update(fp, e->proj.tuple, -1, OPAT_OPAQUE);
    } else {
      fp->nodes.data[self].pattern = OPAT_INJECTIVE;
      update(fp, e->proj.tuple, self, OPAT_INJECTIVE);
    }
    break;
  }
  case EXPR_LET:
    update_var(fp, e->let.var, -1);
    update(fp, e->let.value, -1, OPAT_OPAQUE);
    update(fp, e->let.body, -1, OPAT_OPAQUE);
    add_node(fp, e->let.var); /* the binder is visited first */
    break;
  case EXPR_IF:
    update(fp, e->if_.cond, -1, OPAT_OPAQUE);
    update(fp, e->if_.then_, -1, OPAT_OPAQUE);
    update(fp, e->if_.else_, -1, OPAT_OPAQUE);
    break;
  case EXPR_MATCH:
    update(fp, e->match.scrut, -1, OPAT_OPAQUE);
    for (uint32_t i = 0; i < e->match.nclauses; i++) update(fp, e->match.clauses[i].body, -1, OPAT_OPAQUE);
    break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: update(fp, e->ref.arg, -1, OPAT_OPAQUE); break;
  case EXPR_REF_WRITE:
    update(fp, e->ref_write.ref, -1, OPAT_OPAQUE);
    update(fp, e->ref_write.value, -1, OPAT_OPAQUE);
    break;
  default: break;
  }
}

/* A function's parameters and body: extern, parameters visited at once. */
static void enter_function(FusePartition *fp, Function *f) {
  for (uint32_t i = 0; i < f->nparams; i++) update_var(fp, f->params[i], -1);
  update(fp, f->body, -1, OPAT_OPAQUE);
  for (uint32_t i = 0; i < f->nparams; i++) add_node(fp, f->params[i]);
}

typedef struct Frame {
  Expr *e;
  uint32_t next;    /* next child to visit */
  bool started;     /* pre-actions done */
} Frame;

/* TVM's post-DFS visit of the function's body, with an explicit stack: a
 * node's pre-actions run at its first visit, its children follow in order,
 * then it gets its post-DFS index. */
static void build_graph(FusePartition *fp, Function *fn) {
  PtrMap seen = {0};
  VEC(Frame) st = {0};
  enter_function(fp, fn);
  vec_push(st, ((Frame){fn->body, 0, false}));
  while (st.len) {
    Frame *fr = &st.data[st.len - 1];
    Expr *e = fr->e;
    if (!fr->started) {
      fr->started = true;
      if (e->kind == EXPR_OP || e->kind == EXPR_GLOBAL || e->kind == EXPR_CTOR) {
        st.len--; /* leaves that do nothing: meeting one again is harmless */
        continue;
      }
      if (e->kind == EXPR_FN) {
        if (ptrmap_get(&seen, e, NULL)) {
          st.len--;
          continue;
        }
        ptrmap_put(&seen, e, 1);
      }
      uint32_t id = 0;
      if (e->kind != EXPR_FN) {
        id = node_of_expr(fp, e); /* variables: one node per binder */
        if (fp->visited.data[id]) {
          st.len--;
          continue;
        }
        fp->visited.data[id] = 1;
      }
      bool leaf = true;
      switch (e->kind) {
      case EXPR_VAR: add_node_id(fp, id); break;
      case EXPR_CONST:
        fp->nodes.data[id].pattern = const_pattern(e->constant);
        add_node_id(fp, id);
        break;
      case EXPR_OP:
      case EXPR_GLOBAL:
      case EXPR_CTOR: break;
      case EXPR_FN:
        if (fn_has_attr(e->fn, "Compiler")) break; /* external codegen: not entered */
        enter_function(fp, e->fn);
        leaf = false;
        break;
      default:
        pre_visit(fp, e);
        leaf = false;
        break;
      }
      if (leaf) {
        st.len--;
        continue;
      }
    }
    Expr *c = dag_child(e, fr->next); /* TVM's visiting order: a call's callee, then its arguments */
    if (c) {
      fr->next++;
      vec_push(st, ((Frame){c, 0, false}));
      continue;
    }
    st.len--;
    if (e->kind != EXPR_FN) add_node_id(fp, node_of_expr(fp, e)); /* (the mark is valid: one check) */
  }
  vec_free(st);
  ptrmap_free(&seen);
}

/* ------------------------------------------------------- post-dominators */

static uint8_t combine(uint8_t a, uint8_t b) { return a > b ? a : b; }

/* LCA of two tree nodes (indices, -1 = none), folding the patterns met. */
static int32_t lca2(FusePartition *fp, int32_t l, int32_t r, uint8_t *ep) {
  while (l != r) {
    if (l < 0 || r < 0) return -1;
    if (fp->dom_depth[l] < fp->dom_depth[r]) {
      *ep = combine(*ep, fp->dom_pattern[r]);
      r = fp->dom_parent[r];
    } else if (fp->dom_depth[r] < fp->dom_depth[l]) {
      *ep = combine(*ep, fp->dom_pattern[l]);
      l = fp->dom_parent[l];
    } else {
      *ep = combine(*ep, fp->dom_pattern[l]);
      *ep = combine(*ep, fp->dom_pattern[r]);
      l = fp->dom_parent[l];
      r = fp->dom_parent[r];
    }
  }
  return l;
}

static void post_dominators(FusePartition *fp) {
  size_t n = fp->post.len;
  for (size_t i = n; i-- > 0;) {
    const FuseNode *g = &fp->nodes.data[fp->post.data[i]];
    if (g->extern_ref || g->out_head < 0) {
      /* TVM: an extern node is a root; a node without consumers has no LCA */
      fp->dom_parent[i] = -1;
      fp->dom_depth[i] = 1;
      fp->dom_pattern[i] = g->extern_ref ? OPAT_OPAQUE : OPAT_ELEMWISE;
      continue;
    }
    uint8_t ep = OPAT_ELEMWISE;
    const FuseEdge *ed = &fp->edges.data[g->out_head];
    int32_t parent = fp->nodes.data[ed->node].index;
    ep = combine(ep, ed->pattern);
    for (int32_t k = ed->next; k >= 0; k = fp->edges.data[k].next) {
      const FuseEdge *e2 = &fp->edges.data[k];
      parent = lca2(fp, parent, fp->nodes.data[e2->node].index, &ep);
      ep = combine(ep, e2->pattern);
    }
    fp->dom_parent[i] = parent;
    fp->dom_depth[i] = parent >= 0 ? fp->dom_depth[parent] + 1 : 1;
    fp->dom_pattern[i] = ep;
  }
}

/* ---------------------------------------------------------------- groups */

static int32_t find_root(FusePartition *fp, int32_t g) {
  int32_t r = g;
  while (fp->gparent[r] >= 0) r = fp->gparent[r];
  while (g != r) { /* path compression */
    int32_t p = fp->gparent[g];
    fp->gparent[g] = r;
    g = p;
  }
  return r;
}

static void merge_from_to(FusePartition *fp, int32_t child, int32_t parent) {
  child = find_root(fp, child);
  parent = find_root(fp, parent);
  if (child == parent) return;
  fp->gnum[parent] += fp->gnum[child];
  fp->gparent[child] = parent;
  if (fp->ganchor[child]) {
    fp->ganchor[parent] = 1;
    fp->gpattern[parent] = combine(fp->gpattern[child], fp->gpattern[parent]);
  }
}

static uint32_t out_index(const FusePartition *fp, int32_t k) { return (uint32_t)fp->nodes.data[fp->edges.data[k].node].index; }

static int32_t first_edge(const FusePartition *fp, uint32_t idx) { return fp->nodes.data[fp->post.data[idx]].out_head; }

typedef bool (*PathCond)(uint8_t kind, bool is_sink);

/* Every node on a path from src's consumers to sink (inclusive) satisfies
 * cond on its group's pattern. */
static bool check_path(FusePartition *fp, uint32_t src, uint32_t sink, PathCond cond) {
  fp->gen++;
  VecU32 st = fp->stack;
  st.len = 0;
  for (int32_t k = first_edge(fp, src); k >= 0; k = fp->edges.data[k].next) vec_push(st, out_index(fp, k));
  bool ok = true;
  while (st.len && ok) {
    uint32_t v = st.data[--st.len];
    if (fp->stamp[v] == fp->gen) continue;
    fp->stamp[v] = fp->gen;
    if (!cond(fp->gpattern[find_root(fp, (int32_t)v)], v == sink)) ok = false;
    else if (v != sink)
      for (int32_t k = first_edge(fp, v); k >= 0; k = fp->edges.data[k].next) vec_push(st, out_index(fp, k));
  }
  fp->stack = st;
  return ok;
}

/* Merges src and every node between it and sink into sink's group. */
static void commit_fuse(FusePartition *fp, uint32_t src, uint32_t sink) {
  int32_t target = (int32_t)sink;
  fp->gen++;
  VecU32 st = fp->stack;
  st.len = 0;
  vec_push(st, src);
  while (st.len) {
    uint32_t v = st.data[--st.len];
    if (v == sink || fp->stamp[v] == fp->gen) continue;
    fp->stamp[v] = fp->gen;
    merge_from_to(fp, (int32_t)v, target);
    for (int32_t k = first_edge(fp, v); k >= 0; k = fp->edges.data[k].next) vec_push(st, out_index(fp, k));
  }
  fp->stack = st;
}

/* The size of sink's group if child (and everything up to sink) joined it.
 * Like TVM, the count of a node already merged elsewhere is its own group
 * object's count at the time it stopped being a root. */
static uint64_t fused_size(FusePartition *fp, uint32_t child, uint32_t sink) {
  uint64_t sum = fp->gnum[find_root(fp, (int32_t)sink)];
  fp->gen++;
  VecU32 st = fp->stack;
  st.len = 0;
  vec_push(st, child);
  while (st.len) {
    uint32_t v = st.data[--st.len];
    if (v == sink || fp->stamp[v] == fp->gen) continue;
    fp->stamp[v] = fp->gen;
    sum += fp->gnum[v];
    for (int32_t k = first_edge(fp, v); k >= 0; k = fp->edges.data[k].next) vec_push(st, out_index(fp, k));
  }
  fp->stack = st;
  return sum;
}

static bool cond_le_broadcast(uint8_t k, bool sink) { (void)sink; return k <= OPAT_BROADCAST; }
static bool cond_le_injective(uint8_t k, bool sink) { (void)sink; return k <= OPAT_INJECTIVE; }
static bool cond_ewise_anchor(uint8_t k, bool sink) {
  if (!sink) return k <= OPAT_INJECTIVE;
  return k <= OPAT_BROADCAST || k == OPAT_REDUCE || k == OPAT_INJECTIVE || k == OPAT_OUT_FUSABLE;
}

static void run_fuse(FusePartition *fp, int phase) {
  size_t n = fp->post.len;
  for (size_t i = 0; i < n; i++) {
    uint8_t pat = fp->gpattern[i]; /* the node's own group object */
    if (pat == OPAT_OPAQUE) continue;
    int32_t dp = fp->dom_parent[i];
    if (dp < 0) continue;
    if (fused_size(fp, (uint32_t)i, (uint32_t)dp) > fp->max_depth) continue;
    if (phase == 2) {
      if (pat > OPAT_INJECTIVE) continue;
      int32_t droot = find_root(fp, dp);
      if (fp->gpattern[droot] == OPAT_TUPLE) continue;
      if (fp->gpattern[dp] == OPAT_TUPLE && fp->gpattern[droot] <= OPAT_INJECTIVE &&
          check_path(fp, (uint32_t)i, (uint32_t)dp, cond_le_injective))
        commit_fuse(fp, (uint32_t)i, (uint32_t)dp);
      continue;
    }
    if (find_root(fp, (int32_t)i) == find_root(fp, dp)) continue;
    if (fp->gpattern[dp] == OPAT_TUPLE) continue;
    if (pat == OPAT_OUT_FUSABLE) {
      if (phase != 0) continue;
      if (fp->dom_pattern[i] == OPAT_ELEMWISE && check_path(fp, (uint32_t)i, (uint32_t)dp, cond_le_broadcast))
        commit_fuse(fp, (uint32_t)i, (uint32_t)dp);
    } else if (pat <= OPAT_BROADCAST) {
      uint8_t ep = fp->dom_pattern[i];
      if ((ep <= OPAT_INJECTIVE || ep == OPAT_REDUCE) && check_path(fp, (uint32_t)i, (uint32_t)dp, cond_ewise_anchor))
        commit_fuse(fp, (uint32_t)i, (uint32_t)dp);
    } else if (pat == OPAT_INJECTIVE || pat == OPAT_TUPLE) {
      if (phase != 1) continue;
      if (check_path(fp, (uint32_t)i, (uint32_t)dp, cond_le_injective)) commit_fuse(fp, (uint32_t)i, (uint32_t)dp);
    }
  }
}

void fuse_partition_build(FusePartition *fp, Function *fn, int opt_level, uint32_t max_depth) {
  memset(fp, 0, sizeof *fp);
  fp->max_depth = max_depth;
  build_graph(fp, fn);
  size_t n = fp->post.len ? fp->post.len : 1;
  fp->dom_parent = mem_calloc(n, sizeof *fp->dom_parent);
  fp->dom_depth = mem_calloc(n, sizeof *fp->dom_depth);
  fp->dom_pattern = mem_calloc(n, sizeof *fp->dom_pattern);
  fp->gparent = mem_calloc(n, sizeof *fp->gparent);
  fp->gpattern = mem_calloc(n, sizeof *fp->gpattern);
  fp->ganchor = mem_calloc(n, sizeof *fp->ganchor);
  fp->gnum = mem_calloc(n, sizeof *fp->gnum);
  fp->stamp = mem_calloc(n, sizeof *fp->stamp);
  for (size_t i = 0; i < fp->post.len; i++) {
    uint8_t p = fp->nodes.data[fp->post.data[i]].pattern;
    fp->gparent[i] = -1;
    fp->gpattern[i] = p;
    fp->ganchor[i] = p == OPAT_OUT_FUSABLE;
    fp->gnum[i] = 1;
  }
  if (opt_level == 0) return;
  post_dominators(fp);
  for (int phase = 0; phase < 3; phase++) run_fuse(fp, phase);
}

void fuse_partition_free(FusePartition *fp) {
  ptrmap_free(&fp->ids);
  vec_free(fp->keys);
  vec_free(fp->visited);
  vec_free(fp->nodes);
  vec_free(fp->edges);
  vec_free(fp->post);
  vec_free(fp->stack);
  mem_free(fp->dom_parent);
  mem_free(fp->dom_depth);
  mem_free(fp->dom_pattern);
  mem_free(fp->gparent);
  mem_free(fp->gpattern);
  mem_free(fp->ganchor);
  mem_free(fp->gnum);
  mem_free(fp->stamp);
  memset(fp, 0, sizeof *fp);
}

int32_t fuse_node_of(const FusePartition *fp, const Expr *e, uint32_t mark) {
  if (!is_node_kind(e->kind)) return -1;
  if (mark && mark <= fp->keys.len && fp->keys.data[mark - 1] == key_of(e)) return fp->nodes.data[mark - 1].index;
  int64_t id;
  if (e->kind != EXPR_VAR || !ptrmap_get(&fp->ids, e->var.var, &id)) return -1;
  return fp->nodes.data[id].index;
}

int32_t fuse_group_of(FusePartition *fp, const Expr *e, uint32_t mark) {
  int32_t i = fuse_node_of(fp, e, mark);
  return i < 0 ? -1 : find_root(fp, i);
}
