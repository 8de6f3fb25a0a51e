/* ir/walk.c — visiting every distinct node of a DAG once, without recursion
 * (see walk.h). An explicit stack and a state per node, found through
 * Expr.mark (restored afterwards) instead of a hash map: each node is
 * expanded once and visited after all its children, so a graph binding used
 * a thousand times costs one visit and a 100,000-long chain costs no C stack.
 */
#include "ir/walk.h"

#include "ir/diag.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"

#include <string.h>

void walk_push_children(Expr *e, bool enter_fns, ExprVec *st) {
  switch (e->kind) {
  case EXPR_CALL:
    vec_push(*st, e->call.fn);
    for (uint32_t i = 0; i < e->call.nargs; i++) vec_push(*st, e->call.args[i]);
    break;
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) vec_push(*st, e->tuple.fields[i]);
    break;
  case EXPR_PROJ: vec_push(*st, e->proj.tuple); break;
  case EXPR_FN:
    if (enter_fns) vec_push(*st, e->fn->body);
    break;
  case EXPR_LET:
    vec_push(*st, e->let.value);
    vec_push(*st, e->let.body);
    break;
  case EXPR_IF:
    vec_push(*st, e->if_.cond);
    vec_push(*st, e->if_.then_);
    vec_push(*st, e->if_.else_);
    break;
  case EXPR_MATCH:
    vec_push(*st, e->match.scrut);
    for (uint32_t i = 0; i < e->match.nclauses; i++) vec_push(*st, e->match.clauses[i].body);
    break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: vec_push(*st, e->ref.arg); break;
  case EXPR_REF_WRITE:
    vec_push(*st, e->ref_write.ref);
    vec_push(*st, e->ref_write.value);
    break;
  default: break;
  }
}

/* Expr.mark holds 1 + the node's index in `nodes` while the walk runs
 * (validated against the array, so stale marks are harmless, as in
 * transform/dagscan.c); the marks found are saved and put back at the end, so
 * a walk inside a pass that keeps its own table in the marks (a rewrite
 * memo, a numbering) leaves that table intact — no hashing per node. */
void walk_post_order(Expr *root, bool enter_fns, ExprVisitFn visit, void *ud) {
  typedef struct {
    Expr *e;
    uint32_t saved; /* the mark before the walk */
    uint8_t state;  /* 0 pushed, 1 children pushed, 2 visited */
  } Node;
  VEC(Node) nodes = {0};
  VEC(uint32_t) st = {0}; /* indices into nodes */
  ExprVec kids = {0};
  vec_push(nodes, ((Node){root, root->mark, 0}));
  root->mark = 1;
  vec_push(st, 0);
  while (st.len) {
    uint32_t id = st.data[st.len - 1];
    Node *n = &nodes.data[id];
    if (n->state == 2) { st.len--; continue; }
    if (n->state == 1) {
      n->state = 2;
      st.len--;
      visit(n->e, ud);
      continue;
    }
    n->state = 1;
    kids.len = 0;
    walk_push_children(n->e, enter_fns, &kids);
    /* push in reverse so the first child is visited first */
    for (size_t i = kids.len; i-- > 0;) {
      Expr *k = kids.data[i];
      uint32_t m = k->mark;
      if (m >= 1 && m <= nodes.len && nodes.data[m - 1].e == k) {
        if (nodes.data[m - 1].state != 0) continue; /* expanded or visited already */
        vec_push(st, m - 1);
        continue;
      }
      vec_push(nodes, ((Node){k, m, 0}));
      k->mark = (uint32_t)nodes.len;
      vec_push(st, (uint32_t)nodes.len - 1);
    }
  }
  for (size_t i = nodes.len; i-- > 0;) nodes.data[i].e->mark = nodes.data[i].saved;
  vec_free(nodes);
  vec_free(st);
  vec_free(kids);
}

/* ------------------------------------------------------------ run tags */

static uint32_t walk_last_tag; /* the tag the last walk_new_tag returned */

uint32_t walk_new_tag(void) {
  walk_last_tag = WALK_TAG_BIT | ((walk_last_tag + 2) & ~WALK_TAG_BIT & ~(uint32_t)1);
  return walk_last_tag;
}

/* A node walk_each_once entered, with the mark it had. */
typedef struct Entered {
  Expr *e;
  uint32_t saved;
} Entered;

void walk_each_once(Expr *root, bool enter_fns, ExprVisitFn visit, void *ud) {
  uint32_t tag = walk_new_tag(); /* a mark no node has before this walk */
  ExprVec st = {0};
  VEC(Entered) entered = {0};
  vec_push(entered, ((Entered){root, root->mark}));
  root->mark = tag;
  vec_push(st, root);
  while (st.len) {
    Expr *e = st.data[--st.len];
    visit(e, ud);
    size_t from = st.len;
    walk_push_children(e, enter_fns, &st);
    size_t keep = from; /* the children not entered yet stay on the stack */
    for (size_t i = from; i < st.len; i++) {
      Expr *c = st.data[i];
      if (c->mark == tag) continue;
      vec_push(entered, ((Entered){c, c->mark}));
      c->mark = tag;
      st.data[keep++] = c;
    }
    st.len = keep;
  }
  for (size_t i = 0; i < entered.len; i++) entered.data[i].e->mark = entered.data[i].saved;
  vec_free(entered);
  vec_free(st);
}

/* ------------------------------------------------------------ node counts */

/* Tags c as entered and stacks it, unless it was entered already. */
static inline void count_enter(Expr *c, uint32_t tag, ExprVec *st) {
  if (c->mark == tag) return;
  c->mark = tag;
  vec_push(*st, c);
}

/* Distinct nodes reachable from root (function bodies entered), each node
 * tagged as it is first met: no order to keep, no state per node, no visit
 * call; a let's body is stacked before its value, so a let chain's values are
 * counted as they are met and the stack stays short. */
static uint64_t count_distinct(Expr *root, ExprVec *st) {
  uint32_t tag = walk_new_tag();
  uint64_t n = 0;
  st->len = 0;
  count_enter(root, tag, st);
  while (st->len) {
    Expr *e = st->data[--st->len];
    n++;
    switch (e->kind) {
    case EXPR_CALL:
      count_enter(e->call.fn, tag, st);
      for (uint32_t i = 0; i < e->call.nargs; i++) count_enter(e->call.args[i], tag, st);
      break;
    case EXPR_TUPLE:
      for (uint32_t i = 0; i < e->tuple.n; i++) count_enter(e->tuple.fields[i], tag, st);
      break;
    case EXPR_PROJ: count_enter(e->proj.tuple, tag, st); break;
    case EXPR_FN: count_enter(e->fn->body, tag, st); break;
    case EXPR_LET:
      count_enter(e->let.body, tag, st);
      count_enter(e->let.value, tag, st);
      break;
    case EXPR_IF:
      count_enter(e->if_.cond, tag, st);
      count_enter(e->if_.then_, tag, st);
      count_enter(e->if_.else_, tag, st);
      break;
    case EXPR_MATCH:
      count_enter(e->match.scrut, tag, st);
      for (uint32_t i = 0; i < e->match.nclauses; i++) count_enter(e->match.clauses[i].body, tag, st);
      break;
    case EXPR_REF_NEW:
    case EXPR_REF_READ: count_enter(e->ref.arg, tag, st); break;
    case EXPR_REF_WRITE:
      count_enter(e->ref_write.ref, tag, st);
      count_enter(e->ref_write.value, tag, st);
      break;
    default: break;
    }
  }
  return n;
}

uint64_t expr_node_count(Expr *root) {
  ExprVec st = {0};
  uint64_t n = count_distinct(root, &st);
  vec_free(st);
  return n;
}

uint64_t module_node_count(Module *m) {
  uint64_t n = 0;
  ExprVec st = {0};
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn) n += count_distinct(m->defs[i]->fn->body, &st);
  if (m->expr) n += count_distinct(m->expr, &st);
  vec_free(st);
  return n;
}

/* ---------------------------------------------------------- free variables */

typedef struct Fv {
  PtrMap bound, seen;
  ExprVarList *out;
} Fv;

static void bind_var(Var *v, void *ud) {
  Fv *fv = ud;
  ptrmap_put(&fv->bound, v, 1);
}

static void note_binders(Expr *e, void *ud) {
  Fv *fv = ud;
  if (e->kind == EXPR_LET) ptrmap_put(&fv->bound, e->let.var, 1);
  else if (e->kind == EXPR_FN)
    for (uint32_t i = 0; i < e->fn->nparams; i++) ptrmap_put(&fv->bound, e->fn->params[i], 1);
  else if (e->kind == EXPR_MATCH)
    for (uint32_t i = 0; i < e->match.nclauses; i++) pattern_each_var(e->match.clauses[i].pattern, bind_var, fv);
}

static void note_uses(Expr *e, void *ud) {
  Fv *fv = ud;
  if (e->kind != EXPR_VAR) return;
  Var *v = e->var.var;
  if (ptrmap_find(&fv->bound, v) || ptrmap_find(&fv->seen, v)) return;
  ptrmap_put(&fv->seen, v, 1);
  vec_push(*fv->out, v);
}

void fn_free_vars(const Function *f, const Var *exclude, ExprVarList *out) {
  Fv fv = {{0}, {0}, out};
  for (uint32_t i = 0; i < f->nparams; i++) ptrmap_put(&fv.bound, f->params[i], 1);
  if (exclude) ptrmap_put(&fv.bound, exclude, 1);
  walk_post_order(f->body, true, note_binders, &fv);
  walk_post_order(f->body, true, note_uses, &fv);
  ptrmap_free(&fv.bound);
  ptrmap_free(&fv.seen);
}

/* ------------------------------------------------------ free variable cache */

typedef struct FvSet {
  Var **v;
  uint32_t n;
} FvSet;

struct FvCache {
  Module *m;
  PtrMap sets;  /* Expr* -> FvSet*; Function* -> FvSet* (its literal's set) */
  PtrMap tmp;   /* scratch for merging */
  ExprVarList buf;
};

static FvSet empty_set;

FvCache *fv_cache_new(Module *m) {
  FvCache *c = mem_calloc(1, sizeof *c);
  c->m = m;
  return c;
}

void fv_cache_free(FvCache *c) {
  if (!c) return;
  ptrmap_free(&c->sets);
  ptrmap_free(&c->tmp);
  vec_free(c->buf);
  mem_free(c);
}

static FvSet *set_of(FvCache *c, const void *k) {
  const int64_t *v = ptrmap_find(&c->sets, k);
  return v ? (FvSet *)(intptr_t)*v : &empty_set;
}

/* Merging: add a set's variables not yet in buf (tmp marks members with a generation). */
static void merge(FvCache *c, const FvSet *s, int64_t gen) {
  for (uint32_t i = 0; i < s->n; i++) {
    int64_t *slot = ptrmap_slot(&c->tmp, s->v[i]);
    if (*slot == gen) continue;
    *slot = gen;
    vec_push(c->buf, s->v[i]);
  }
}

static void drop(FvCache *c, const Var *v) {
  for (size_t i = 0; i < c->buf.len; i++)
    if (c->buf.data[i] == v) {
      memmove(c->buf.data + i, c->buf.data + i + 1, (c->buf.len - i - 1) * sizeof *c->buf.data);
      c->buf.len--;
      return;
    }
}

static void drop_var(Var *v, void *ud) { drop(ud, v); }

static int64_t fv_gen;

static void fv_node(Expr *e, void *ud) {
  FvCache *c = ud;
  int64_t gen = ++fv_gen;
  c->buf.len = 0;
  switch (e->kind) {
  case EXPR_VAR: {
    FvSet s = {&e->var.var, 1};
    merge(c, &s, gen);
    break;
  }
  case EXPR_CALL:
    merge(c, set_of(c, e->call.fn), gen);
    for (uint32_t i = 0; i < e->call.nargs; i++) merge(c, set_of(c, e->call.args[i]), gen);
    break;
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) merge(c, set_of(c, e->tuple.fields[i]), gen);
    break;
  case EXPR_PROJ: merge(c, set_of(c, e->proj.tuple), gen); break;
  case EXPR_FN:
    merge(c, set_of(c, e->fn->body), gen);
    for (uint32_t i = 0; i < e->fn->nparams; i++) drop(c, e->fn->params[i]);
    break;
  case EXPR_LET:
    merge(c, set_of(c, e->let.value), gen);
    merge(c, set_of(c, e->let.body), gen);
    drop(c, e->let.var);
    break;
  case EXPR_IF:
    merge(c, set_of(c, e->if_.cond), gen);
    merge(c, set_of(c, e->if_.then_), gen);
    merge(c, set_of(c, e->if_.else_), gen);
    break;
  case EXPR_MATCH: {
    /* fv(scrut) + each clause's (fv(body) - its pattern variables) */
    ExprVarList acc = {0};
    ExprVarList saved = c->buf;
    for (uint32_t i = 0; i < e->match.nclauses; i++) {
      c->buf = (ExprVarList){0};
      merge(c, set_of(c, e->match.clauses[i].body), ++fv_gen);
      pattern_each_var(e->match.clauses[i].pattern, drop_var, c);
      for (size_t k = 0; k < c->buf.len; k++) vec_push(acc, c->buf.data[k]);
      vec_free(c->buf);
    }
    c->buf = saved;
    gen = ++fv_gen;
    merge(c, set_of(c, e->match.scrut), gen);
    FvSet all = {acc.data, (uint32_t)acc.len};
    merge(c, &all, gen);
    vec_free(acc);
    break;
  }
  case EXPR_REF_NEW:
  case EXPR_REF_READ: merge(c, set_of(c, e->ref.arg), gen); break;
  case EXPR_REF_WRITE:
    merge(c, set_of(c, e->ref_write.ref), gen);
    merge(c, set_of(c, e->ref_write.value), gen);
    break;
  default: break;
  }
  FvSet *s = &empty_set;
  if (c->buf.len) s = arena_alloc(c->m->arena, sizeof *s);
  if (s != &empty_set) {
    s->n = (uint32_t)c->buf.len;
    s->v = arena_memdup(c->m->arena, c->buf.data, c->buf.len * sizeof *s->v);
  }
  ptrmap_put(&c->sets, e, (int64_t)(intptr_t)s);
  if (e->kind == EXPR_FN) ptrmap_put(&c->sets, e->fn, (int64_t)(intptr_t)s);
}

/* Post-order over the nodes below root whose sets are not cached yet (a
 * cached node's subtree is never entered again: linear over many queries). */
static void fv_compute(FvCache *c, Expr *root) {
  ExprVec st = {0}, kids = {0};
  PtrMap open = {0};
  if (!ptrmap_find(&c->sets, root)) vec_push(st, root);
  while (st.len) {
    Expr *e = st.data[st.len - 1];
    if (ptrmap_find(&c->sets, e)) { st.len--; continue; }
    int64_t *o = ptrmap_slot(&open, e);
    if (*o) {
      st.len--;
      fv_node(e, c);
      continue;
    }
    *o = 1;
    kids.len = 0;
    walk_push_children(e, true, &kids);
    for (size_t i = kids.len; i-- > 0;)
      if (!ptrmap_find(&c->sets, kids.data[i])) vec_push(st, kids.data[i]);
  }
  vec_free(st);
  vec_free(kids);
  ptrmap_free(&open);
}

void fv_cache_get(FvCache *c, const Function *f, const Var *exclude, ExprVarList *out) {
  if (!ptrmap_find(&c->sets, f)) {
    /* not computed yet (or empty): compute the body, then this literal */
    fv_compute(c, f->body);
    int64_t gen = ++fv_gen;
    c->buf.len = 0;
    merge(c, set_of(c, f->body), gen);
    for (uint32_t i = 0; i < f->nparams; i++) drop(c, f->params[i]);
    FvSet *s = arena_alloc(c->m->arena, sizeof *s);
    s->n = (uint32_t)c->buf.len;
    s->v = c->buf.len ? arena_memdup(c->m->arena, c->buf.data, c->buf.len * sizeof *s->v) : NULL;
    ptrmap_put(&c->sets, f, (int64_t)(intptr_t)s);
  }
  const FvSet *s = set_of(c, f);
  for (uint32_t i = 0; i < s->n; i++)
    if (s->v[i] != exclude) vec_push(*out, s->v[i]);
}

/* ------------------------------------------------------------ scope trees */

/* Skew-binary jump pointers: a node's jump skips to an ancestor such that a
 * walk up to any depth takes O(log depth) steps (the node's jump is its
 * parent's jump's jump when the two previous jumps have equal length). */
uint32_t scope_tree_add(ScopeTree *t, uint32_t parent) {
  ScopeTreeNode n = {SCOPE_TREE_NONE, (uint32_t)t->len, 0};
  if (parent != SCOPE_TREE_NONE) {
    const ScopeTreeNode *pn = &t->data[parent];
    const ScopeTreeNode *j = &t->data[pn->jump];
    n.parent = parent;
    n.depth = pn->depth + 1;
    n.jump = (pn->depth - j->depth == j->depth - t->data[j->jump].depth) ? j->jump : parent;
  }
  vec_push(*t, n);
  return (uint32_t)(t->len - 1);
}

/* The ancestor of s at `depth` (<= its own). */
uint32_t scope_tree_up(const ScopeTree *t, uint32_t s, uint32_t depth) {
  while (t->data[s].depth > depth)
    s = t->data[t->data[s].jump].depth >= depth ? t->data[s].jump : t->data[s].parent;
  return s;
}

uint32_t scope_tree_lca(const ScopeTree *t, uint32_t a, uint32_t b) {
  if (a == SCOPE_TREE_NONE || b == SCOPE_TREE_NONE) return SCOPE_TREE_NONE;
  if (t->data[a].depth > t->data[b].depth) a = scope_tree_up(t, a, t->data[b].depth);
  else if (t->data[b].depth > t->data[a].depth) b = scope_tree_up(t, b, t->data[a].depth);
  while (a != b) { /* equal depths from here on */
    if (t->data[a].parent == SCOPE_TREE_NONE) return SCOPE_TREE_NONE; /* two roots */
    if (t->data[a].jump != t->data[b].jump) {
      a = t->data[a].jump;
      b = t->data[b].jump;
    } else {
      a = t->data[a].parent;
      b = t->data[b].parent;
    }
  }
  return a;
}

void scope_tree_free(ScopeTree *t) {
  vec_free(*t);
}

/* ------------------------------------------------------------ homes */

static bool homes_trivial(const Expr *e) {
  return e->kind == EXPR_VAR || e->kind == EXPR_CONST || e->kind == EXPR_GLOBAL || e->kind == EXPR_OP ||
         e->kind == EXPR_CTOR;
}

uint32_t fn_homes_fn(const FnHomes *h, const void *key) {
  const int64_t *i = key ? ptrmap_find(&h->fn_of, key) : NULL;
  return i ? (uint32_t)(*i - 1) : SCOPE_TREE_NONE;
}

uint32_t fn_homes_home(const FnHomes *h, const Expr *e) {
  const int64_t *i = ptrmap_find(&h->home, e);
  return i ? (uint32_t)(*i - 1) : SCOPE_TREE_NONE;
}

/* One use of e from function ctx (FN_HOMES_NONE: from a node shared across roots). */
static void homes_edge(FnHomes *h, Expr *e, uint32_t ctx) {
  int64_t *slot = ptrmap_slot(&h->home, e);
  if (!*slot) {
    *slot = (int64_t)ctx + 1;
    return;
  }
  uint32_t old = (uint32_t)(*slot - 1);
  if (old == ctx || old == FN_HOMES_NONE) return;
  uint32_t l = ctx == FN_HOMES_NONE ? SCOPE_TREE_NONE : scope_tree_lca(&h->tree, old, ctx);
  if (l == SCOPE_TREE_NONE) l = FN_HOMES_NONE;
  *slot = (int64_t)l + 1;
  if (l != FN_HOMES_NONE) ptrmap_put(&h->cross, e, 1);
}

static void homes_collect(Expr *e, void *ud) { vec_push(*(ExprVec *)ud, e); }

void fn_homes_add(FnHomes *h, Function *root) {
  if (!root || !root->body || ptrmap_find(&h->fn_of, root)) return;
  uint32_t r = scope_tree_add(&h->tree, SCOPE_TREE_NONE);
  ptrmap_put(&h->fn_of, root, (int64_t)r + 1);
  ExprVec order = {0}, kids = {0};
  walk_post_order(root->body, true, homes_collect, &order);
  if (!homes_trivial(root->body)) homes_edge(h, root->body, r);
  for (size_t i = order.len; i-- > 0;) { /* parents before children */
    Expr *p = order.data[i];
    uint32_t at = fn_homes_home(h, p);
    if (at == SCOPE_TREE_NONE) continue; /* trivial: not tracked */
    if (p->kind == EXPR_FN && at != FN_HOMES_NONE && !ptrmap_find(&h->fn_of, p)) {
      uint32_t k = scope_tree_add(&h->tree, at);
      ptrmap_put(&h->fn_of, p, (int64_t)k + 1);
    }
    uint32_t ctx = at;
    if (p->kind == EXPR_FN && at != FN_HOMES_NONE) ctx = fn_homes_fn(h, p);
    kids.len = 0;
    walk_push_children(p, true, &kids);
    for (size_t k = 0; k < kids.len; k++)
      if (!homes_trivial(kids.data[k])) homes_edge(h, kids.data[k], ctx);
  }
  vec_free(order);
  vec_free(kids);
}

bool fn_homes_captured(const FnHomes *h, const Expr *e, const Expr *lit) {
  if (!h->cross.len || !ptrmap_find(&h->cross, e)) return false;
  uint32_t at = fn_homes_home(h, e), l = fn_homes_fn(h, lit);
  if (at >= FN_HOMES_NONE || l == SCOPE_TREE_NONE) return false;
  return h->tree.data[at].depth < h->tree.data[l].depth && scope_tree_lca(&h->tree, at, l) == at;
}

void fn_homes_free(FnHomes *h) {
  scope_tree_free(&h->tree);
  ptrmap_free(&h->fn_of);
  ptrmap_free(&h->home);
  ptrmap_free(&h->cross);
}

/* ------------------------------------------------------------ captures */

static const struct FnCaptured *captured_list(FnCaptures *c, const FnHomes *h, Expr *lit);

static void push_children_first_on_top(Expr *e, ExprVec *st) {
  size_t before = st->len;
  walk_push_children(e, true, st);
  for (size_t i = before, j = st->len; i + 1 < j; i++, j--) {
    Expr *t = st->data[i];
    st->data[i] = st->data[j - 1];
    st->data[j - 1] = t;
  }
}

/* The walk of lit's body; a nested literal's list (its nodes are either in
 * that list or homed inside it, reachable from nowhere else) is walked in
 * its order in place of its body. `deep`: too deep to recurse: walk bodies. */
static void captures_walk(FnCaptures *c, const FnHomes *h, Expr *lit, ExprVec *out, bool deep) {
  PtrMap seen = {0};
  ExprVec st = {0};
  vec_push(st, lit->fn->body);
  while (st.len) {
    Expr *e = st.data[--st.len];
    if (ptrmap_find(&seen, e)) continue;
    ptrmap_put(&seen, e, 1);
    if (fn_homes_captured(h, e, lit)) {
      vec_push(*out, e);
      continue;
    }
    const struct FnCaptured *in = e->kind == EXPR_FN && !deep ? captured_list(c, h, e) : NULL;
    if (!in) {
      push_children_first_on_top(e, &st);
      continue;
    }
    for (uint32_t i = in->n; i-- > 0;) vec_push(st, in->xs[i]); /* the first on top */
  }
  vec_free(st);
  ptrmap_free(&seen);
}

/* lit's list, memoised; NULL when the nesting is too deep to recurse. */
static const struct FnCaptured *captured_list(FnCaptures *c, const FnHomes *h, Expr *lit) {
  int64_t k = 0;
  if (ptrmap_get(&c->memo, lit, &k)) return &c->lists.data[k - 1];
  if (stack_exhausted()) return NULL;
  ExprVec out = {0};
  captures_walk(c, h, lit, &out, false);
  vec_push(c->lists, ((struct FnCaptured){out.data, (uint32_t)out.len}));
  ptrmap_put(&c->memo, lit, (int64_t)c->lists.len);
  return &c->lists.data[c->lists.len - 1];
}

Expr **fn_captures_of(FnCaptures *c, const FnHomes *h, Expr *lit, uint32_t *n) {
  const struct FnCaptured *l = captured_list(c, h, lit);
  if (!l) { /* too deep to recurse: the same list by walking every body below lit */
    ExprVec out = {0};
    captures_walk(c, h, lit, &out, true);
    vec_push(c->lists, ((struct FnCaptured){out.data, (uint32_t)out.len}));
    ptrmap_put(&c->memo, lit, (int64_t)c->lists.len);
    l = &c->lists.data[c->lists.len - 1];
  }
  *n = l->n;
  return l->xs;
}

void fn_captures_free(FnCaptures *c) {
  for (size_t i = 0; i < c->lists.len; i++) mem_free(c->lists.data[i].xs);
  vec_free(c->lists);
  ptrmap_free(&c->memo);
}

/* ------------------------------------------------------------ patterns */

void pattern_each_var(const Pattern *p, PatternVarFn visit, void *ud) {
  if (stack_exhausted()) return;
  switch (p->kind) {
  case PAT_VAR: visit(p->var, ud); break;
  case PAT_CTOR:
    for (uint32_t i = 0; i < p->ctor.nargs; i++) pattern_each_var(p->ctor.args[i], visit, ud);
    break;
  case PAT_TUPLE:
    for (uint32_t i = 0; i < p->tuple.n; i++) pattern_each_var(p->tuple.fields[i], visit, ud);
    break;
  default: break;
  }
}
