/* transform/normal_form.c — ToANormalForm, ToBasicBlockNormalForm and
 * ToGraphNormalForm (spec/passes.md §2.1–2.3): the conversions between
 * dataflow form (`%N = ...` shared nodes) and A-normal form (let chains).
 *
 * ANF and BBNF follow TVM's three steps, per global function:
 *  1. A dependency graph: one node per distinct expression (every use of a
 *     variable, global, operator or constructor is ONE node, as in TVM where
 *     those are shared objects), plus a "scope" node under each if branch,
 *     let, function body and match clause. Edges run from a user to what it
 *     uses; each node's users are kept in the order TVM adds them (dataflow
 *     nodes: callee then arguments; if: condition, then, else; ...).
 *  2. Scopes: in reverse post-order, a node's scope is the lowest common
 *     ancestor of its users' scopes; a scope node opens a child scope. A node
 *     is "lifted" when that LCA differs from its FIRST user's scope.
 *  3. Fill: a rebuild in TVM's visiting order (call: arguments left to right,
 *     then the callee; if: condition, then, else; let: value, then body) that
 *     appends `let` bindings to each node's scope as nodes are converted. ANF
 *     binds every non-atom (constants included) to a fresh `x_N`; BBNF binds
 *     only lifted nodes and rebuilds the rest in place with sharing intact
 *     (unlike TVM, in a function that lifts a node with an effect, every
 *     node with an effect, and every if and match, is bound too, and every
 *     let flattened, so effects keep their order).
 *     A converted `let` flattens its bindings into the enclosing scope and
 *     binds its result to a fresh variable (so ANF is not idempotent), and
 *     after `let %y = %x` later uses of %x become %y (TVM's memo quirk).
 *     Fresh names come from the module's counter, consumed exactly where TVM
 *     calls Var::GenSym (also when BBNF then decides not to bind).
 *     `on_device(e, constrain_result=True)` (constrain_body true too) is looked
 *     through, as TVM does (spec §11.4, test_let_as_subexpr): e is converted
 *     with that annotation as the lexical device, every value bound meanwhile
 *     (and every node BBNF rebuilds in place) is wrapped in the same
 *     on_device (variables, globals, operators, constructors and function
 *     literals never are; a function literal's body has no device), no `let`
 *     is made for the annotation itself, and its result is on_device(result).
 *     Every node built is typed (the forms keep every expression's type): a
 *     rebuilt node has its original's type, a new binder and its uses the
 *     type of the value bound, a let the type of its body; the runner's
 *     incremental re-typing then keeps them (sema/infer.c).
 *
 * Linear time: nodes are found through Expr.mark (validated by a back
 * pointer), variables and operators through tables indexed by their ids,
 * globals and constructors through a pointer map; scope LCAs
 * use skew-binary jump pointers (O(log depth) on the 100,000-deep scope
 * chains of long let chains, where TVM's parent walk is quadratic); let lists
 * are linked lists spliced in O(1) when a let is flattened. Dataflow nodes
 * (calls, tuples, projections, refs) and let chains are walked with explicit
 * stacks; the remaining recursion (branches, function literals, matches) is
 * bounded by stack_exhausted().
 *
 * GNF: each `let %v = e; b` becomes b with %v replaced by the (one, shared)
 * rewritten e; a recursive local function keeps `let %v = e'; %v` as the
 * shared node. Unlike TVM, a let whose value has an effect or depends on when
 * it runs (references, calls of functions, stateful operators) stays a let in
 * its place, so graph form never changes what a program computes (TVM drops
 * an unused `let %u = ref_write(...)` and loses effect order, spec §2.3).
 */
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "transform/dagscan.h"
#include "transform/normal_form.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

#define NONE UINT32_MAX

/* ------------------------------------------------------------------ scopes */

typedef struct Binding {
  Var *var;
  Expr *value;
  Span sp;
  struct Binding *next;
} Binding;

/* A scope: its place in the scope tree (parent, skew-binary jump pointer,
 * level) and the let bindings collected for it, in order. */
typedef struct Scope {
  struct Scope *parent, *jump;
  uint32_t level;
  Binding *head, *tail;
} Scope;

/* -------------------------------------------------------- dependency graph */

typedef struct DgNode {
  const void *key;     /* Expr *, or the Var, GlobalDef or Ctor an atom names, an operator's id * 2 + 1; NULL: a scope node */
  Expr *result;        /* Fill's memo (when `done`): the converted form */
  Scope *scope;
  uint32_t parents;    /* first edge of the users list (NONE: no users) */
  uint32_t last;       /* last edge of that list */
  uint32_t sub;        /* if/let/fn/match: index of the first of its consecutive scope nodes */
  bool new_scope;      /* a scope node */
  bool visited;        /* added to the post-order */
  bool lifted;         /* BBNF binds it */
  bool is_op;          /* an operator: never lifted */
  bool done;           /* converted by Fill */
  bool self;           /* an atom that stands for itself (result unused) */
  bool expr_key;       /* key is the Expr itself (not an atom's target) */
} DgNode;

typedef struct Edge {
  uint32_t user;
  uint32_t next;
} Edge;

typedef VEC(uint32_t) U32Vec;

/* The explicit stack the dataflow walks (dg_visit, fill_dataflow) use: one
 * per Nf, each walk working above the length it found (a walk may start
 * another through the nodes it visits or fills, which returns the stack as
 * it found it). */
typedef struct DfItem {
  Expr *e;
  bool expanded; /* its children are pushed */
} DfItem;
typedef VEC(DfItem) DfStack;

typedef struct Nf {
  Module *m;
  Diag *d;
  bool bbnf;           /* ToBasicBlockNormalForm (else ToANormalForm) */
  Arena *tmp;          /* scopes and bindings of the current function (reset per function) */
  VEC(DgNode) nodes;
  VEC(Edge) edges;
  VEC(uint32_t) post;  /* post-order of the dependency graph */
  PtrMap atoms;        /* globals and constructors -> node index + 1 (validated by the node's key) */
  U32Vec by_var;       /* Var.id -> node index (validated by the node's key) */
  U32Vec by_op;        /* operator id -> node index (validated likewise) */
  bool failed;         /* nesting too deep */
  bool bind_effects;   /* BBNF, this function lifts a node with an effect: bind every such node */
  VEC(Expr *) device;  /* lexical on_device annotations (NULL: a function body, no device) */
  PtrMap filling;      /* Var* -> 1 while its let's value is converted (a use is recursion) */
  Expr *filling_let;   /* the let whose value is being converted */
  DfStack df;          /* the dataflow walks' stack */
} Nf;

static bool nf_too_deep(Nf *nf, Span sp) {
  if (!stack_exhausted()) return false;
  if (!nf->failed) diag_error(nf->d, sp, "expression nested too deeply");
  nf->failed = true;
  return true;
}

static uint32_t new_node(Nf *nf, const void *key) {
  DgNode n = {.key = key, .parents = NONE, .last = NONE, .sub = NONE};
  vec_push(nf->nodes, n);
  return (uint32_t)nf->nodes.len - 1;
}

/* The node of an atom found through a small integer (a Var's id, an
 * operator's id): a direct table, validated by the node's key, so nothing
 * needs clearing between functions. */
static uint32_t id_node(Nf *nf, U32Vec *t, uint32_t id, const void *key, bool is_op) {
  while (t->len <= id) vec_push(*t, UINT32_MAX);
  uint32_t i = t->data[id];
  if (i < nf->nodes.len && nf->nodes.data[i].key == key) return i;
  i = new_node(nf, key);
  nf->nodes.data[i].is_op = is_op;
  t->data[id] = i;
  return i;
}

static uint32_t var_node(Nf *nf, Var *v) { return id_node(nf, &nf->by_var, v->id, v, false); }

/* The node of a global or constructor atom (key: what it names). */
static uint32_t atom_node(Nf *nf, const void *key) {
  int64_t *slot = ptrmap_slot(&nf->atoms, key);
  uint32_t i = (uint32_t)(*slot - 1);
  if (*slot && i < nf->nodes.len && nf->nodes.data[i].key == key) return i; /* else stale: an earlier function's */
  i = new_node(nf, key);
  *ptrmap_slot(&nf->atoms, key) = i + 1;
  return i;
}

/* The node of e, created when absent. Its graph key: atoms that TVM shares
 * by identity map to what they name (dagscan.h dag_atom_key; an operator by
 * its id as an odd value no object has, so no registry lookup per use), any
 * other node is its own key. */
static uint32_t node_of(Nf *nf, Expr *e) {
  switch (e->kind) {
  case EXPR_VAR:
    if (e->var.var) return var_node(nf, e->var.var);
    break;
  case EXPR_OP:
    if (e->op.id >= 0)
      return id_node(nf, &nf->by_op, (uint32_t)e->op.id, (const void *)(((uintptr_t)e->op.id << 1) | 1), true);
    break;
  case EXPR_GLOBAL: case EXPR_CTOR: {
    const void *key = dag_atom_key(e);
    if (key) return atom_node(nf, key);
    break;
  }
  default: break;
  }
  uint32_t i = e->mark - 1;
  if (e->mark && i < nf->nodes.len && nf->nodes.data[i].key == e) return i;
  i = new_node(nf, e);
  nf->nodes.data[i].expr_key = true;
  e->mark = i + 1;
  return i;
}

/* `user` uses `used`: appended to used's users list. */
static void edge(Nf *nf, uint32_t user, uint32_t used) {
  Edge ed = {user, NONE};
  vec_push(nf->edges, ed);
  uint32_t k = (uint32_t)nf->edges.len - 1;
  DgNode *n = &nf->nodes.data[used];
  if (n->last == NONE) n->parents = k;
  else nf->edges.data[n->last].next = k;
  n->last = k;
}

static void post(Nf *nf, uint32_t i) { vec_push(nf->post, i); }

static bool is_dataflow(const Expr *e) {
  switch (e->kind) {
  case EXPR_CALL: case EXPR_TUPLE: case EXPR_PROJ: case EXPR_REF_NEW: case EXPR_REF_READ: case EXPR_REF_WRITE:
    return true;
  default: return false;
  }
}

static bool dg_visited(Nf *nf, Expr *e) {
  uint32_t i = node_of(nf, e); /* may grow the node array */
  return nf->nodes.data[i].visited;
}

static void dg_visit(Nf *nf, Expr *e);

/* Visits `used` (if new) and records that `user` uses it. */
static void depend(Nf *nf, uint32_t user, Expr *used) {
  dg_visit(nf, used);
  edge(nf, user, node_of(nf, used));
}

static void depend_var(Nf *nf, uint32_t user, Var *v) {
  uint32_t i = var_node(nf, v);
  if (!nf->nodes.data[i].visited) {
    nf->nodes.data[i].visited = true;
    post(nf, i);
  }
  edge(nf, user, i);
}

static uint32_t scope_nodes(Nf *nf, uint32_t owner, uint32_t count) {
  uint32_t first = (uint32_t)nf->nodes.len;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t k = new_node(nf, NULL);
    nf->nodes.data[k].new_scope = true;
  }
  nf->nodes.data[owner].sub = first;
  return first;
}

/* A let chain: for each let, outer to inner, its scope node, binder and
 * value; then, inner to outer, the body and the post-order entries (TVM's
 * ExpandANormalForm with pre- and post-visits). */
static void dg_let(Nf *nf, Expr *l, uint32_t li) {
  VEC(uint32_t) lets = {0};
  VEC(Expr *) exprs = {0};
  Expr *cur = l;
  uint32_t ci = li;
  for (;;) {
    uint32_t b = scope_nodes(nf, ci, 1);
    edge(nf, ci, b);
    depend_var(nf, b, cur->let.var);
    depend(nf, b, cur->let.value);
    vec_push(lets, ci);
    vec_push(exprs, cur);
    Expr *body = cur->let.body;
    if (body->kind != EXPR_LET || dg_visited(nf, body)) break;
    cur = body;
    ci = node_of(nf, cur);
    nf->nodes.data[ci].visited = true;
  }
  for (size_t i = lets.len; i-- > 0;) {
    uint32_t b = nf->nodes.data[lets.data[i]].sub;
    depend(nf, b, exprs.data[i]->let.body);
    post(nf, b);
    if (i) post(nf, lets.data[i]);
  }
  vec_free(lets);
  vec_free(exprs);
}

/* TVM's DependencyGraph::Creator::VisitLeaf: the node's own edges (children
 * of dataflow nodes are already visited), then its post-order entry. */
static void dg_leaf(Nf *nf, Expr *e) {
  uint32_t i = node_of(nf, e);
  if (nf->nodes.data[i].visited) return;
  nf->nodes.data[i].visited = true;
  if (nf_too_deep(nf, e->span)) return;
  switch (e->kind) {
  case EXPR_CALL:
    depend(nf, i, e->call.fn);
    for (uint32_t k = 0; k < e->call.nargs; k++) depend(nf, i, e->call.args[k]);
    break;
  case EXPR_TUPLE:
    for (uint32_t k = 0; k < e->tuple.n; k++) depend(nf, i, e->tuple.fields[k]);
    break;
  case EXPR_PROJ: depend(nf, i, e->proj.tuple); break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: depend(nf, i, e->ref.arg); break;
  case EXPR_REF_WRITE:
    depend(nf, i, e->ref_write.ref);
    depend(nf, i, e->ref_write.value);
    break;
  case EXPR_IF: {
    depend(nf, i, e->if_.cond);
    uint32_t t = scope_nodes(nf, i, 2), f = t + 1;
    edge(nf, i, t);
    edge(nf, i, f);
    depend(nf, t, e->if_.then_);
    depend(nf, f, e->if_.else_);
    post(nf, f);
    post(nf, t);
    break;
  }
  case EXPR_FN: {
    uint32_t b = scope_nodes(nf, i, 1);
    edge(nf, i, b);
    for (uint32_t k = 0; k < e->fn->nparams; k++) depend_var(nf, b, e->fn->params[k]);
    depend(nf, b, e->fn->body);
    post(nf, b);
    break;
  }
  case EXPR_LET: dg_let(nf, e, i); break;
  case EXPR_MATCH: {
    depend(nf, i, e->match.scrut);
    uint32_t n = e->match.nclauses, b = scope_nodes(nf, i, n);
    for (uint32_t k = 0; k < n; k++) {
      edge(nf, i, b + k);
      depend(nf, b + k, e->match.clauses[k].body);
    }
    for (uint32_t k = n; k-- > 0;) post(nf, b + k);
    break;
  }
  default: break; /* constants, variables, globals, operators, constructors */
  }
  post(nf, i);
}

/* The helpers two hot loops share are inlined into each (a function call
 * per node cost ToANormalForm ~2% more instructions). */
#define NF_INLINE static inline __attribute__((always_inline))

/* Pushes x's dataflow children in reverse, so that they are popped in order:
 * a call's callee first, then its arguments (TVM's MixedModeVisitor), or with
 * callee_first false its arguments, then its callee (Fill's order). */
NF_INLINE void push_dataflow_children(DfStack *st, Expr *x, bool callee_first) {
  switch (x->kind) {
  case EXPR_CALL:
    if (!callee_first) vec_push(*st, ((DfItem){x->call.fn, false}));
    for (uint32_t k = x->call.nargs; k-- > 0;) vec_push(*st, ((DfItem){x->call.args[k], false}));
    if (callee_first) vec_push(*st, ((DfItem){x->call.fn, false}));
    break;
  case EXPR_TUPLE:
    for (uint32_t k = x->tuple.n; k-- > 0;) vec_push(*st, ((DfItem){x->tuple.fields[k], false}));
    break;
  case EXPR_PROJ: vec_push(*st, ((DfItem){x->proj.tuple, false})); break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: vec_push(*st, ((DfItem){x->ref.arg, false})); break;
  case EXPR_REF_WRITE:
    vec_push(*st, ((DfItem){x->ref_write.value, false}));
    vec_push(*st, ((DfItem){x->ref_write.ref, false}));
    break;
  default: break;
  }
}

/* TVM's MixedModeVisitor::VisitExpr: dataflow nodes children first with an
 * explicit stack (a call: the callee, then the arguments in order); any
 * other node is a leaf of that walk. */
static void dg_visit(Nf *nf, Expr *e) {
  if (dg_visited(nf, e)) return;
  if (!is_dataflow(e)) {
    dg_leaf(nf, e);
    return;
  }
  DfStack *st = &nf->df;
  size_t base = st->len;
  vec_push(*st, ((DfItem){e, false}));
  while (st->len > base) {
    DfItem *top = &st->data[st->len - 1];
    Expr *x = top->e;
    if (dg_visited(nf, x)) {
      st->len--;
      continue;
    }
    if (!is_dataflow(x) || top->expanded) {
      st->len--;
      dg_leaf(nf, x); /* may walk above st->len */
      continue;
    }
    top->expanded = true;
    push_dataflow_children(st, x, true);
  }
}

/* ----------------------------------------------------------- scope tree */

static Scope *scope_new(Nf *nf, Scope *parent) {
  Scope *s = arena_alloc(nf->tmp, sizeof *s);
  if (!parent) {
    s->jump = s;
    return s;
  }
  s->parent = parent;
  s->level = parent->level + 1;
  Scope *j = parent->jump;
  s->jump = (parent->level - j->level == j->level - j->jump->level) ? j->jump : parent;
  return s;
}

/* The ancestor of s at `level` (<= s->level). */
static Scope *scope_ancestor(Scope *s, uint32_t level) {
  while (s->level > level) s = s->jump->level >= level ? s->jump : s->parent;
  return s;
}

static Scope *scope_lca(Scope *a, Scope *b) {
  if (a->level > b->level) a = scope_ancestor(a, b->level);
  else if (b->level > a->level) b = scope_ancestor(b, a->level);
  while (a != b) {
    if (a->jump != b->jump) {
      a = a->jump;
      b = b->jump;
    } else {
      a = a->parent;
      b = b->parent;
    }
  }
  return a;
}

/* TVM's CalcScope. BBNF: a lifted node with an effect is bound where it is
 * first converted, which may be before effects that the unconverted code
 * runs first (`(@next(%r), if (c) { %0 } else { %0 })` with %0 = @next(%r)
 * swapped the two calls); so in such a function every node with an effect
 * is bound as ANF binds it, in evaluation order (TVM reorders). "With an
 * effect" counts the lifted node's whole evaluation (a shared let or tuple
 * whose parts read or write a ref), not only its own operation. */
static void calc_scopes(Nf *nf) {
  bool global_used = false;
  nf->bind_effects = false;
  PtrMap effects = {0}; /* dag_has_effects' memo */
  for (size_t k = nf->post.len; k-- > 0;) {
    DgNode *n = &nf->nodes.data[nf->post.data[k]];
    Scope *s;
    if (n->parents == NONE) {
      RELAYC_ASSERT(!global_used);
      global_used = true;
      s = scope_new(nf, NULL);
    } else {
      const Edge *ed = &nf->edges.data[n->parents];
      Scope *first = nf->nodes.data[ed->user].scope;
      s = first;
      for (uint32_t j = ed->next; j != NONE; j = nf->edges.data[j].next)
        s = scope_lca(s, nf->nodes.data[nf->edges.data[j].user].scope);
      if (s != first && n->key && !n->is_op) n->lifted = true;
      if (nf->bbnf && n->lifted && n->expr_key && !nf->bind_effects)
        nf->bind_effects = dag_has_effects(&effects, (Expr *)n->key);
    }
    n->scope = n->new_scope ? scope_new(nf, s) : s;
  }
  ptrmap_free(&effects);
}

/* ------------------------------------------------------------------- fill */

static void scope_push(Nf *nf, Scope *s, Var *v, Expr *value, Span sp) {
  Binding *b = arena_alloc(nf->tmp, sizeof *b);
  b->var = v;
  b->value = value;
  b->sp = sp;
  if (s->tail) s->tail->next = b;
  else s->head = b;
  s->tail = b;
}

/* TVM's LetList::Get: the scope's bindings wrapped around body (the list is used up). */
static Expr *scope_get(Nf *nf, Scope *s, Expr *body) {
  Expr *first = NULL, *prev = NULL;
  for (Binding *b = s->head; b; b = b->next) {
    Expr *l = build_let(nf->m, b->var, b->value, NULL, b->sp);
    if (prev) prev->let.body = l;
    else first = l;
    prev = l;
  }
  s->head = s->tail = NULL;
  if (!prev) return body;
  prev->let.body = body;
  for (Expr *l = first;; l = l->let.body) {
    l->type = body->type; /* a let has its body's type */
    if (l == prev) break;
  }
  return first;
}

static DgNode *node(Nf *nf, Expr *e) {
  uint32_t i = node_of(nf, e);
  return &nf->nodes.data[i];
}

/* A use of v, with v's type. */
static Expr *typed_use(Nf *nf, Var *v, Span sp) { return build_typed(build_var(nf->m, v, sp), v->type); }

/* The converted form of a done node, for its occurrence `e`: a variable
 * result is a fresh use node (leaves are not shared), an atom that stands
 * for itself is e. */
static Expr *result_for(Nf *nf, DgNode *n, Expr *e) {
  if (n->self) return e;
  Expr *r = n->result;
  if (r->kind == EXPR_VAR) return typed_use(nf, r->var.var, e->span);
  return r;
}

/* A fresh binder, consuming the module's counter exactly where TVM calls
 * Var::GenSym; `make` false only consumes the number. */
static Var *gensym(Nf *nf, bool make, Span sp) {
  uint32_t n = nf->m->next_fresh++;
  if (!make) return NULL;
  return build_numbered_var(nf->m, "x", n, NULL, sp);
}

/* on_device(e) fixing both its result and its body (TVM's is_fixed). */
static bool on_device_fixed(const Expr *e) {
  if (op_call_id(e) != OP_ON_DEVICE || e->call.nargs != 1) return false;
  const AttrValue *r = attrs_get(e->call.attrs, "constrain_result"), *b = attrs_get(e->call.attrs, "constrain_body");
  return r && r->kind == AV_BOOL && r->b && (!b || (b->kind == AV_BOOL && b->b));
}

/* The annotation `ann` (an on_device call) around `body`: its own callee node
 * and the body's type (on_device is the identity). */
static Expr *on_device_around(Nf *nf, Expr *ann, Expr *body) {
  Expr *c = build_copy(nf->m, ann);
  c->call.fn = build_copy(nf->m, ann->call.fn);
  c->call.args = arena_alloc(nf->m->arena, sizeof *c->call.args);
  c->call.args[0] = body;
  c->type = body->type;
  return c;
}

/* TVM's MaybeOnDeviceFixed with the lexical device: `now` wrapped in the
 * innermost enclosing on_device, unless there is none or `now` is an atom
 * that carries no device (a variable, global, operator, constructor), a
 * function literal or already an on_device. */
static Expr *on_lexical_device(Nf *nf, Expr *now) {
  Expr *ann = nf->device.len ? nf->device.data[nf->device.len - 1] : NULL;
  if (!ann) return now;
  switch (now->kind) {
  case EXPR_VAR: case EXPR_GLOBAL: case EXPR_OP: case EXPR_CTOR: case EXPR_FN: return now;
  default: break;
  }
  return op_call_id(now) == OP_ON_DEVICE ? now : on_device_around(nf, ann, now);
}

static Expr *fill(Nf *nf, Expr *e, Var *v);

/* A fixed on_device: its body converted under it (v passes through), no
 * binding of its own; the result is on_device(converted body). */
static Expr *fill_on_device(Nf *nf, Expr *e, Var *v) {
  vec_push(nf->device, e);
  Expr *body = fill(nf, e->call.args[0], v);
  nf->device.len--;
  DgNode *n = node(nf, e);
  n->done = true;
  n->result = on_device_around(nf, e, body);
  return n->result;
}

/* TVM's Fill::Compound for a non-let node: bind `now` (the rebuilt orig) to v
 * or a fresh variable in orig's scope — unless BBNF does not lift it. */
static Expr *compound(Nf *nf, DgNode *n, Expr *orig, Expr *now, Var *v) {
  now = on_lexical_device(nf, now);
  /* with bind_effects, an if/match is bound too: its branches may hold
   * effects, which would otherwise run after effects bound later in the
   * fill (`(if (%d) { %f() } else { %f() }, ref_read(%r))` read %r first) */
  bool in_order = dag_own_effect(orig) || orig->kind == EXPR_IF || orig->kind == EXPR_MATCH;
  bool not_included = nf->bbnf && !n->lifted && !(nf->bind_effects && in_order);
  Var *var = v ? v : gensym(nf, !not_included, orig->span);
  n->done = true;
  if (!v && not_included) {
    n->result = now;
    return now;
  }
  if (!v) var->type = now->type; /* a fresh binder has its value's type */
  scope_push(nf, n->scope, var, now, orig->span);
  n->result = typed_use(nf, var, orig->span);
  return n->result; /* this first use may be the memo's node; later uses copy it */
}

/* e rebuilt around its children mapped by `kid` (a call: the callee first,
 * then the arguments), with e's type when inference would give it again
 * (each new child has the type of the child it replaces: rw_rebuilt_type; a
 * let-bound value in place of its variable has the variable's type); e itself
 * when no child changed. Calls, tuples, projections, references, if, match
 * and function literals; any other node is returned as it is. Shared by
 * Fill (ToANormalForm, ToBasicBlockNormalForm) and ToGraphNormalForm. */
typedef Expr *(*KidFn)(void *st, Expr *child);
NF_INLINE Expr *rebuild_around(Module *m, Expr *e, KidFn kid, void *st);

NF_INLINE Expr *rebuild_typed(Module *m, Expr *e, KidFn kid, void *st) {
  Expr *c = rebuild_around(m, e, kid, st);
  if (c != e) {
    c->type = rw_rebuilt_type(e, c);
    if (c->kind == EXPR_FN) c->fn->type = c->type;
  }
  return c;
}

NF_INLINE Expr *rebuild_around(Module *m, Expr *e, KidFn kid, void *st) {
  Expr *c;
  switch (e->kind) {
  case EXPR_CALL: {
    Expr *fn = kid(st, e->call.fn), **args = NULL;
    for (uint32_t k = 0; k < e->call.nargs; k++) {
      Expr *a = kid(st, e->call.args[k]);
      if (a != e->call.args[k] && !args) args = arena_memdup(m->arena, e->call.args, e->call.nargs * sizeof *args);
      if (args) args[k] = a;
    }
    if (fn == e->call.fn && !args) return e;
    c = build_copy(m, e);
    c->call.fn = fn;
    if (args) c->call.args = args;
    return c;
  }
  case EXPR_TUPLE: {
    Expr **fs = NULL;
    for (uint32_t k = 0; k < e->tuple.n; k++) {
      Expr *f = kid(st, e->tuple.fields[k]);
      if (f != e->tuple.fields[k] && !fs) fs = arena_memdup(m->arena, e->tuple.fields, e->tuple.n * sizeof *fs);
      if (fs) fs[k] = f;
    }
    if (!fs) return e;
    c = build_copy(m, e);
    c->tuple.fields = fs;
    return c;
  }
  case EXPR_PROJ: {
    Expr *t = kid(st, e->proj.tuple);
    if (t == e->proj.tuple) return e;
    c = build_copy(m, e);
    c->proj.tuple = t;
    return c;
  }
  case EXPR_REF_NEW:
  case EXPR_REF_READ: {
    Expr *a = kid(st, e->ref.arg);
    if (a == e->ref.arg) return e;
    c = build_copy(m, e);
    c->ref.arg = a;
    return c;
  }
  case EXPR_REF_WRITE: {
    Expr *r = kid(st, e->ref_write.ref), *v = kid(st, e->ref_write.value);
    if (r == e->ref_write.ref && v == e->ref_write.value) return e;
    c = build_copy(m, e);
    c->ref_write.ref = r;
    c->ref_write.value = v;
    return c;
  }
  case EXPR_IF: {
    Expr *a = kid(st, e->if_.cond), *t = kid(st, e->if_.then_), *f = kid(st, e->if_.else_);
    if (a == e->if_.cond && t == e->if_.then_ && f == e->if_.else_) return e;
    return build_if(m, a, t, f, e->span);
  }
  case EXPR_FN: {
    Expr *body = kid(st, e->fn->body);
    if (body == e->fn->body) return e;
    Function *nfn = arena_alloc(m->arena, sizeof *nfn);
    *nfn = *e->fn;
    nfn->body = body;
    nfn->type = NULL;
    c = build_copy(m, e);
    c->fn = nfn;
    return c;
  }
  case EXPR_MATCH: {
    Expr *s = kid(st, e->match.scrut);
    Clause *cl = NULL;
    for (uint32_t k = 0; k < e->match.nclauses; k++) {
      Expr *b = kid(st, e->match.clauses[k].body);
      if (b != e->match.clauses[k].body && !cl) cl = arena_memdup(m->arena, e->match.clauses, e->match.nclauses * sizeof *cl);
      if (cl) cl[k].body = b;
    }
    if (s == e->match.scrut && !cl) return e;
    c = build_copy(m, e);
    c->match.scrut = s;
    if (cl) c->match.clauses = cl;
    return c;
  }
  default: return e;
  }
}

/* A child of a dataflow node Fill rebuilds: converted already (its result). */
static Expr *filled_child(void *nf, Expr *e) { return fill(nf, e, NULL); }

/* Dataflow nodes in Fill's order (a call: arguments left to right, then the
 * callee) with an explicit stack; other nodes met on the way are filled by
 * fill (recursion bounded by real nesting). */
static Expr *fill_dataflow(Nf *nf, Expr *e, Var *v) {
  DfStack *st = &nf->df;
  size_t base = st->len;
  vec_push(*st, ((DfItem){e, false}));
  Expr *out = NULL;
  while (st->len > base) {
    DfItem *top = &st->data[st->len - 1];
    Expr *x = top->e;
    DgNode *n = node(nf, x);
    if (n->done && x != e) {
      st->len--;
      continue;
    }
    if (x != e && (!is_dataflow(x) || on_device_fixed(x))) {
      st->len--;
      fill(nf, x, NULL); /* may walk above st->len */
      continue;
    }
    if (!top->expanded) {
      top->expanded = true;
      push_dataflow_children(st, x, false);
      continue;
    }
    st->len--;
    Expr *now = rebuild_typed(nf->m, x, filled_child, nf); /* likewise */
    Expr *r = compound(nf, node(nf, x), x, now, x == e ? v : NULL);
    if (x == e) out = r;
  }
  return out;
}

/* A function type with type parameters (through inference links). */
static bool type_polymorphic(const Type *t) {
  t = type_solved(t);
  return t && t->kind == TYPE_FUNC && t->func.ntparams;
}

/* Is the atom e (a global, constructor or operator) typed anew at each use:
 * a global or constructor with type parameters, an operator (typed by its
 * relation), or a variable of a polymorphic function type (bound to a
 * polymorphic literal)? Then `let %v = e` must not stand for the later uses
 * of e: %v has the one type of its first use (a let-bound variable is
 * monomorphic), and `@id(1)` and `@id((2, 2))` cannot both become `%v(...)`. */
static bool atom_instantiated_per_use(const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR: return e->var.var && type_polymorphic(e->var.var->annot ? e->var.var->annot : e->var.var->type);
  case EXPR_GLOBAL: {
    const Function *f = e->global.def ? e->global.def->fn : NULL;
    return f && (f->ntparams || (f->type && f->type->kind == TYPE_FUNC && f->type->func.ntparams));
  }
  case EXPR_CTOR: return e->ctor.ctor && e->ctor.ctor->owner && e->ctor.ctor->owner->ntparams;
  case EXPR_OP: return true;
  default: return false;
  }
}

/* A let chain: each value bound to its own variable (outer to inner), the
 * final body, then each let's scope flattened into the enclosing one from the
 * inside out (TVM's VisitExpr_(Let) + Compound, without recursion). */
static Expr *fill_let(Nf *nf, Expr *l, Var *v) {
  VEC(Expr *) chain = {0};
  Expr *cur = l;
  for (;;) {
    vec_push(chain, cur);
    Expr *outer = nf->filling_let;
    nf->filling_let = cur;
    ptrmap_put(&nf->filling, cur->let.var, 1);
    fill(nf, cur->let.value, cur->let.var);
    ptrmap_put(&nf->filling, cur->let.var, 0);
    nf->filling_let = outer;
    Expr *body = cur->let.body;
    if (body->kind != EXPR_LET || node(nf, body)->done) break;
    cur = body;
  }
  Expr *body = fill(nf, cur->let.body, NULL);
  for (size_t i = chain.len; i-- > 0;) {
    Expr *x = chain.data[i];
    DgNode *n = node(nf, x);
    Scope *inner = nf->nodes.data[n->sub].scope;
    Var *bind = i == 0 ? v : NULL;
    /* with bind_effects, a let is flattened too, as an if/match is bound
     * (compound): its values may hold effects, which would otherwise run
     * after effects bound later in the fill */
    bool not_included = nf->bbnf && !n->lifted && !nf->bind_effects;
    Var *var = bind ? bind : gensym(nf, !not_included, x->span);
    n->done = true;
    if (!bind && not_included) {
      n->result = on_lexical_device(nf, scope_get(nf, inner, body));
      body = n->result;
      continue;
    }
    /* flatten: the inner scope's bindings, then any let the body still is */
    Scope *s = n->scope;
    if (inner->head) {
      if (s->tail) s->tail->next = inner->head;
      else s->head = inner->head;
      s->tail = inner->tail;
      inner->head = inner->tail = NULL;
    }
    Expr *b = body;
    while (b->kind == EXPR_LET) {
      scope_push(nf, s, b->let.var, b->let.value, b->span);
      b = b->let.body;
    }
    Expr *val = on_lexical_device(nf, b);
    if (!bind && atom_instantiated_per_use(val)) {
      /* the let's value is a polymorphic atom (`(let %f = %g; %g)` shared,
       * called at two types): a fresh binder would be monomorphic, so every
       * use of the let is the atom itself */
      n->result = val;
      body = val;
      continue;
    }
    if (!bind) var->type = val->type;
    scope_push(nf, s, var, val, x->span);
    n->result = typed_use(nf, var, x->span);
    body = n->result;
  }
  vec_free(chain);
  return body;
}

static Expr *fill_fn_literal(Nf *nf, Expr *e, DgNode *n) {
  Function *f = e->fn;
  if (fn_has_attr(f, "Primitive")) return e;
  vec_push(nf->device, NULL); /* TVM: the literal's own (unconstrained) device */
  Expr *body = fill(nf, f->body, NULL);
  nf->device.len--;
  body = scope_get(nf, nf->nodes.data[n->sub].scope, body);
  if (body == f->body) return e;
  Function *nfn = arena_alloc(nf->m->arena, sizeof *nfn);
  *nfn = *f;
  nfn->body = body;
  Expr *c = build_copy(nf->m, e);
  c->fn = nfn;
  nfn->type = c->type = rw_rebuilt_type(e, c);
  return c;
}

/* Is v's let value being converted (a use of v is then recursion)? */
static bool nf_filling(Nf *nf, const Var *v) {
  int64_t k = 0;
  return nf->filling.len && ptrmap_get(&nf->filling, v, &k) && k;
}

/* TVM's Fill::VisitExpr(e, v): memoised conversion of e; with v, e's value
 * is bound to v. Returns what to use at this occurrence of e. */
static Expr *fill(Nf *nf, Expr *e, Var *v) {
  DgNode *n = node(nf, e);
  if (n->done) {
    Expr *r = result_for(nf, n, e);
    if (v) scope_push(nf, n->scope, v, r, e->span);
    return r;
  }
  if (nf_too_deep(nf, e->span)) {
    n->done = n->self = true;
    return e;
  }
  switch (e->kind) {
  case EXPR_VAR: case EXPR_GLOBAL: case EXPR_OP: case EXPR_CTOR:
    n->done = true;
    if (!v) {
      n->self = true;
      return e;
    }
    if (e->kind == EXPR_VAR && nf_filling(nf, e->var.var)) {
      /* `let %v = %f` inside %f's own value (a recursive local function):
       * bound where it was written, not in %f's scope, which runs before
       * %f is bound (free_var %f at the top); no aliasing */
      Scope *at = node(nf, nf->filling_let)->scope;
      node(nf, e)->done = false;
      scope_push(nf, at, v, e, e->span);
      return typed_use(nf, v, e->span);
    }
    scope_push(nf, n->scope, v, e, e->span);
    n->self = atom_instantiated_per_use(e); /* later uses stay the atom */
    n->result = typed_use(nf, v, e->span);
    return n->result;
  case EXPR_CONST: return compound(nf, n, e, e, v);
  case EXPR_CALL:
    if (on_device_fixed(e)) return fill_on_device(nf, e, v);
    return fill_dataflow(nf, e, v);
  case EXPR_TUPLE: case EXPR_PROJ: case EXPR_REF_NEW: case EXPR_REF_READ: case EXPR_REF_WRITE:
    return fill_dataflow(nf, e, v);
  case EXPR_LET: return fill_let(nf, e, v);
  case EXPR_IF: {
    Expr *c = fill(nf, e->if_.cond, NULL);
    Expr *t = scope_get(nf, nf->nodes.data[n->sub].scope, fill(nf, e->if_.then_, NULL));
    n = node(nf, e);
    Expr *f = scope_get(nf, nf->nodes.data[n->sub + 1].scope, fill(nf, e->if_.else_, NULL));
    n = node(nf, e);
    Expr *now = e;
    if (c != e->if_.cond || t != e->if_.then_ || f != e->if_.else_)
      now = build_if(nf->m, c, t, f, e->span);
    if (now != e) now->type = rw_rebuilt_type(e, now);
    return compound(nf, n, e, now, v);
  }
  case EXPR_FN: {
    Expr *now = fill_fn_literal(nf, e, n);
    return compound(nf, node(nf, e), e, now, v);
  }
  case EXPR_MATCH: {
    Expr *s = fill(nf, e->match.scrut, NULL);
    Clause *cl = NULL;
    for (uint32_t k = 0; k < e->match.nclauses; k++) {
      Expr *body = fill(nf, e->match.clauses[k].body, NULL);
      n = node(nf, e);
      body = scope_get(nf, nf->nodes.data[n->sub + k].scope, body);
      if (body != e->match.clauses[k].body && !cl)
        cl = arena_memdup(nf->m->arena, e->match.clauses, e->match.nclauses * sizeof *cl);
      if (cl) cl[k].body = body;
    }
    Expr *now = e;
    if (s != e->match.scrut || cl) {
      now = build_copy(nf->m, e);
      now->match.scrut = s;
      if (cl) now->match.clauses = cl;
      now->type = rw_rebuilt_type(e, now);
    }
    return compound(nf, node(nf, e), e, now, v);
  }
  default:
    n->done = n->self = true;
    return e;
  }
}

/* One global function: graph, scopes, fill. With only_effects_lifted (BBNF),
 * the fill runs only when the function lifts a node with an effect, and the
 * function is otherwise left exactly as it was. */
static bool normal_form_function(Nf *nf, GlobalDef *g, bool only_effects_lifted, const bool *effectful) {
  Function *f = g->fn;
  if (!f || fn_has_attr(f, "Compiler") || fn_has_attr(f, "Primitive")) return true;
  /* nothing with an effect (a reference operation, a call of a global or a
   * closure, a stateful operator): nothing to bind, and one scan of the
   * nodes is much cheaper than the dependency graph */
  if (only_effects_lifted && !(effectful ? *effectful : dag_effects(f->body).own)) return true;
  nf->nodes.len = nf->edges.len = nf->post.len = nf->device.len = 0;
  arena_reset(nf->tmp); /* the last function's scopes and bindings: the same pages again */
  Expr *root = build_fn(nf->m, f, f->span);
  dg_visit(nf, root);
  if (!nf->failed) {
    calc_scopes(nf);
    if (only_effects_lifted && !nf->bind_effects) return true;
    DgNode *rn = node(nf, root);
    rn->done = rn->self = true; /* a global function is not let-bound */
    Expr *body = fill(nf, f->body, NULL);
    body = scope_get(nf, nf->nodes.data[node(nf, root)->sub].scope, body);
    if (!nf->failed && body != f->body) {
      f->body = body;
      f->type = NULL;
    }
  }
  return !nf->failed;
}

static void nf_free(Nf *nf) {
  arena_free(nf->tmp);
  vec_free(nf->by_var);
  vec_free(nf->by_op);
  vec_free(nf->nodes);
  vec_free(nf->edges);
  vec_free(nf->post);
  vec_free(nf->device);
  vec_free(nf->df);
  ptrmap_free(&nf->atoms);
  ptrmap_free(&nf->filling);
}

/* Every global function (only_effects_lifted: see normal_form_function). */
static bool run_normal_form(PassCtx *c, bool bbnf, bool only_effects_lifted, const bool *effectful) {
  Nf nf = {.m = c->m, .d = c->d, .bbnf = bbnf};
  nf.tmp = arena_new();
  bool ok = true;
  for (uint32_t i = 0; i < c->m->ndefs && ok; i++)
    ok = normal_form_function(&nf, c->m->defs[i], only_effects_lifted, effectful ? &effectful[i] : NULL);
  nf_free(&nf);
  return ok;
}

bool normal_form_bind_lifted_effects(PassCtx *c, const bool *effectful) {
  return run_normal_form(c, true, true, effectful);
}

bool normal_form_bind_captured_effects(PassCtx *c, bool *captured) {
  if (captured) *captured = false;
  for (uint32_t i = 0; i < c->m->ndefs; i++)
    if (c->m->defs[i]->fn && dag_literal_captures_effect(c->m->defs[i]->fn)) {
      if (captured) *captured = true;
      return normal_form_bind_lifted_effects(c, NULL) && pass_retype(c);
    }
  return true;
}

bool pass_TO_ANF(PassCtx *c) { return run_normal_form(c, false, false, NULL); }
bool pass_TO_BBNF(PassCtx *c) { return run_normal_form(c, true, false, NULL); }

/* -------------------------------------------------------------- graph form */

/* The variables of `let %v = fn ...` used inside their own value (recursive
 * local functions) in the body `root`, as keys of *rec: one walk of the
 * whole body (a walk of each let's value was quadratic in 10,000 nested
 * let-bound literals). Each distinct node is visited once, a let's value
 * before its body, with a count of the let-bound literals being walked per
 * variable: a use of %v met while %v's value is open is recursion. A node
 * shared between the value and the body is in the value (met there first):
 * a use of %v outside its value lies in its body, after it. */
static void find_recursive_lets(Expr *root, PtrMap *rec) {
  typedef struct { Expr *e; const Var *leave; } Item; /* leave: the end of that variable's value */
  VEC(Item) st = {0};
  ExprVec kids = {0};
  PtrMap seen = {0}, open = {0};
  vec_push(st, ((Item){root, NULL}));
  while (st.len) {
    Item it = st.data[--st.len];
    if (it.leave) {
      (*ptrmap_slot(&open, it.leave))--;
      continue;
    }
    Expr *e = it.e;
    if (ptrmap_find(&seen, e)) continue;
    ptrmap_put(&seen, e, 1);
    if (e->kind == EXPR_VAR) {
      const int64_t *n = open.len ? ptrmap_find(&open, e->var.var) : NULL;
      if (n && *n > 0) ptrmap_put(rec, e->var.var, 1);
      continue;
    }
    if (e->kind == EXPR_LET && e->let.value->kind == EXPR_FN) {
      vec_push(st, ((Item){e->let.body, NULL}));
      vec_push(st, ((Item){NULL, e->let.var}));
      vec_push(st, ((Item){e->let.value, NULL}));
      (*ptrmap_slot(&open, e->let.var))++;
      continue;
    }
    kids.len = 0;
    walk_push_children(e, true, &kids);
    for (size_t i = 0; i < kids.len; i++) vec_push(st, ((Item){kids.data[i], NULL}));
  }
  vec_free(st);
  vec_free(kids);
  ptrmap_free(&seen);
  ptrmap_free(&open);
}

/* GNF's rewrite: a memo through Expr.mark (validated by a back pointer,
 * cheaper than a pointer map on 100,000-node functions), the substitution of
 * let-bound variables in a pointer map, dataflow nodes and let chains walked
 * with explicit stacks. Unchanged subtrees stay the same pointers. */
typedef struct GMemo {
  Expr *key, *result;
} GMemo;

typedef struct Gnf {
  Module *m;
  Diag *d;
  VEC(GMemo) memo;
  PtrMap subst; /* Var* -> Expr* */
  PtrMap effects; /* Expr* -> 1 no effect, 2 an effect (gnf_has_effects) */
  Expr *root;      /* the function body being rewritten */
  PtrMap rec;      /* find_recursive_lets of root, made at the first let-bound literal */
  bool rec_ready;
  bool failed;
} Gnf;

static Expr *gnf_done(Gnf *g, Expr *e) {
  uint32_t i = e->mark - 1;
  if (e->mark && i < g->memo.len && g->memo.data[i].key == e) return g->memo.data[i].result;
  return NULL;
}

static Expr *gnf_remember(Gnf *g, Expr *e, Expr *r) {
  vec_push(g->memo, ((GMemo){e, r}));
  e->mark = (uint32_t)g->memo.len;
  return r;
}

static Expr *gnf(Gnf *g, Expr *e);

static Expr *gnf_kid(void *g, Expr *e) { return gnf(g, e); }

/* e rebuilt around its rewritten children, typed (rebuild_typed). */
static Expr *gnf_rebuild(Gnf *g, Expr *e) { return rebuild_typed(g->m, e, gnf_kid, g); }

/* Does evaluating e (not the bodies of literals it makes) have an effect or
 * depend on when or how often it runs: a new reference (its identity), a
 * reference read or write, a call of a function (which may do any of these),
 * a stateful operator? */
static void note_effect(Expr *e, void *ud) {
  bool *eff = ud;
  if (e->kind == EXPR_REF_NEW || e->kind == EXPR_REF_READ || e->kind == EXPR_REF_WRITE) *eff = true;
  else if (e->kind == EXPR_CALL) {
    int32_t id = op_call_id(e);
    if (id >= 0 ? op_is_stateful(id) : e->call.fn->kind != EXPR_CTOR) *eff = true;
  }
}

/* Whether e has an effect, with every node's answer remembered in g->effects (1 = none,
 * 2 = an effect), each distinct node examined once per function: asking
 * afresh at every let of a value nested 10,000 lets deep walked the nested
 * value again at each level (ToGraphNormalForm took minutes, quadratic). */
static bool gnf_has_effects(Gnf *g, Expr *root) {
  int64_t known;
  if (ptrmap_get(&g->effects, root, &known)) return known == 2;
  typedef struct { Expr *e; bool expanded; } Item;
  VEC(Item) st = {0};
  vec_push(st, ((Item){root, false}));
  while (st.len) {
    Item *top = &st.data[st.len - 1];
    Expr *e = top->e;
    if (ptrmap_find(&g->effects, e)) {
      st.len--;
      continue;
    }
    Expr *kids[3] = {NULL, NULL, NULL}, **more = NULL;
    uint32_t nk = 0, nmore = 0;
    switch (e->kind) {
    case EXPR_CALL: kids[nk++] = e->call.fn; more = e->call.args; nmore = e->call.nargs; break;
    case EXPR_TUPLE: more = e->tuple.fields; nmore = e->tuple.n; break;
    case EXPR_PROJ: kids[nk++] = e->proj.tuple; break;
    case EXPR_LET: kids[nk++] = e->let.value; kids[nk++] = e->let.body; break;
    case EXPR_IF: kids[nk++] = e->if_.cond; kids[nk++] = e->if_.then_; kids[nk++] = e->if_.else_; break;
    case EXPR_MATCH: kids[nk++] = e->match.scrut; break;
    case EXPR_REF_NEW: case EXPR_REF_READ: kids[nk++] = e->ref.arg; break;
    case EXPR_REF_WRITE: kids[nk++] = e->ref_write.ref; kids[nk++] = e->ref_write.value; break;
    default: break; /* leaves; a function literal's body is not evaluated here */
    }
    uint32_t nclauses = e->kind == EXPR_MATCH ? e->match.nclauses : 0;
    if (!top->expanded) {
      top->expanded = true;
      for (uint32_t i = 0; i < nk; i++) vec_push(st, ((Item){kids[i], false}));
      for (uint32_t i = 0; i < nmore; i++) vec_push(st, ((Item){more[i], false}));
      for (uint32_t i = 0; i < nclauses; i++) vec_push(st, ((Item){e->match.clauses[i].body, false}));
      continue;
    }
    bool eff = false;
    note_effect(e, &eff);
    for (uint32_t i = 0; i < nk && !eff; i++) eff = *ptrmap_find(&g->effects, kids[i]) == 2;
    for (uint32_t i = 0; i < nmore && !eff; i++) eff = *ptrmap_find(&g->effects, more[i]) == 2;
    for (uint32_t i = 0; i < nclauses && !eff; i++) eff = *ptrmap_find(&g->effects, e->match.clauses[i].body) == 2;
    ptrmap_put(&g->effects, e, eff ? 2 : 1);
    st.len--;
  }
  vec_free(st);
  return *ptrmap_find(&g->effects, root) == 2;
}

/* A let chain: each value rewritten and substituted for its variable (a
 * recursive local function stays `let %f = fn ...; %f`), then the body.
 * Unlike TVM (spec/passes.md §2.3: an unused `let %u = ref_write(...)`
 * vanishes there and effect order is lost), a let whose value has an effect
 * or depends on when it runs stays a let, in order: graph form never changes
 * what a program computes. */
static Expr *gnf_let(Gnf *g, Expr *e) {
  Expr *cur = e;
  VEC(Expr *) kept = {0};
  while (cur->kind == EXPR_LET && (cur == e || !gnf_done(g, cur))) {
    Var *v = cur->let.var;
    Expr *val = gnf(g, cur->let.value);
    if (gnf_has_effects(g, cur->let.value)) {
      vec_push(kept, build_let(g->m, v, val, NULL, cur->span));
    } else {
      if (cur->let.value->kind == EXPR_FN && !g->rec_ready) {
        find_recursive_lets(g->root, &g->rec);
        g->rec_ready = true;
      }
      if (cur->let.value->kind == EXPR_FN && ptrmap_find(&g->rec, v))
        val = build_typed(build_let(g->m, v, val, build_typed(build_var(g->m, v, cur->span), v->type), cur->span),
                          v->type);
      ptrmap_put(&g->subst, v, (int64_t)(intptr_t)val);
    }
    cur = cur->let.body;
  }
  Expr *r = gnf(g, cur);
  /* `let %v = e; %v` is `e` (a call in tail position stays a tail call) */
  if (kept.len && r->kind == EXPR_VAR && r->var.var == kept.data[kept.len - 1]->let.var)
    r = kept.data[--kept.len]->let.value;
  for (size_t i = kept.len; i-- > 0;) {
    kept.data[i]->let.body = r;
    kept.data[i]->type = r->type;
    r = kept.data[i];
  }
  vec_free(kept);
  return r;
}

static bool gnf_stacked(const Expr *e) { return is_dataflow(e); }

static Expr *gnf(Gnf *g, Expr *e) {
  switch (e->kind) {
  case EXPR_VAR: {
    const int64_t *s = g->subst.len ? ptrmap_find(&g->subst, e->var.var) : NULL;
    if (!s) return e;
    Expr *val = (Expr *)(intptr_t)*s;
    /* an atom value is copied per use: inference types a node once, so one
     * `@id` node in two places would get ONE instance of its polymorphic
     * type, where the printed text (atoms are never shared) gets two */
    if (val->kind == EXPR_VAR || val->kind == EXPR_GLOBAL || val->kind == EXPR_CTOR || val->kind == EXPR_OP) {
      return build_typed(build_copy(g->m, val), val->type);
    }
    return val;
  }
  case EXPR_CONST: case EXPR_GLOBAL: case EXPR_OP: case EXPR_CTOR: return e;
  default: break;
  }
  Expr *r = gnf_done(g, e);
  if (r) return r;
  if (stack_exhausted()) {
    if (!g->failed) diag_error(g->d, e->span, "expression nested too deeply");
    g->failed = true;
    return e;
  }
  if (e->kind == EXPR_LET) return gnf_remember(g, e, gnf_let(g, e));
  if (gnf_stacked(e)) {
    /* children first with an explicit stack, so long dataflow chains use no C stack */
    VEC(Expr *) st = {0};
    vec_push(st, e);
    while (st.len) {
      Expr *x = st.data[st.len - 1];
      if (gnf_done(g, x)) {
        st.len--;
        continue;
      }
      size_t before = st.len;
      Expr *kids[2], **ks = kids;
      uint32_t nk = 0;
      switch (x->kind) {
      case EXPR_CALL:
        for (uint32_t k = x->call.nargs; k-- > 0;)
          if (gnf_stacked(x->call.args[k]) && !gnf_done(g, x->call.args[k])) vec_push(st, x->call.args[k]);
        if (gnf_stacked(x->call.fn) && !gnf_done(g, x->call.fn)) vec_push(st, x->call.fn);
        break;
      case EXPR_TUPLE:
        for (uint32_t k = x->tuple.n; k-- > 0;)
          if (gnf_stacked(x->tuple.fields[k]) && !gnf_done(g, x->tuple.fields[k])) vec_push(st, x->tuple.fields[k]);
        break;
      case EXPR_PROJ: kids[nk++] = x->proj.tuple; break;
      case EXPR_REF_NEW: case EXPR_REF_READ: kids[nk++] = x->ref.arg; break;
      case EXPR_REF_WRITE:
        kids[nk++] = x->ref_write.value;
        kids[nk++] = x->ref_write.ref;
        break;
      default: break;
      }
      for (uint32_t k = 0; k < nk; k++)
        if (gnf_stacked(ks[k]) && !gnf_done(g, ks[k])) vec_push(st, ks[k]);
      if (st.len != before) continue; /* children first */
      st.len--;
      gnf_remember(g, x, gnf_rebuild(g, x));
    }
    vec_free(st);
    return gnf_done(g, e);
  }
  return gnf_remember(g, e, gnf_rebuild(g, e));
}

static bool gnf_function(PassCtx *c, GlobalDef *gd) {
  Gnf g = {.m = c->m, .d = c->d, .root = gd->fn->body};
  Expr *body = gnf(&g, gd->fn->body);
  if (!g.failed && body != gd->fn->body) {
    gd->fn->body = body;
    gd->fn->type = NULL;
  }
  vec_free(g.memo);
  ptrmap_free(&g.subst);
  ptrmap_free(&g.effects);
  ptrmap_free(&g.rec);
  return !g.failed;
}

bool pass_TO_GNF(PassCtx *c) { return pass_for_each_function(c, gnf_function); }
