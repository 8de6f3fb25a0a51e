/* transform/inline.c — Inline, TVM's InlineGlobals (spec/passes.md §8.1).
 *
 * A global is inlinable when it is a Relay function with a nonzero Inline
 * attribute, is not recursive (directly or through a cycle of the call
 * graph), and — after its own inlinable callees were inlined into it —
 * mentions no other global. Globals are processed callees first, so chains
 * collapse completely. A call @g(a1..an) of an inlinable @g becomes g's body
 * with fresh binders and the parameters replaced by the (rewritten) argument
 * nodes, each shared by all its uses (no let) — unless an argument has an
 * effect (a reference operation, a call): then, beyond TVM, which would drop
 * or move it, the non-atomic arguments are let-bound in order first; with
 * Compiler/Extern it
 * becomes a call of a copy of the literal. Any other occurrence of @g
 * becomes a copy of the literal. Afterwards every non-recursive Inline
 * function that was referenced is deleted; one that could not be inlined is
 * an error (TVM aborts). Unlike TVM, a function mentioning the same inlinable
 * global twice has both occurrences inlined.
 */
#include <string.h>

#include "ir/build.h"
#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/op_traits.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef VEC(uint32_t) U32Vec;

typedef struct Graph {
  Module *m;
  uint32_t n;
  PtrMap index;          /* GlobalDef* -> i */
  U32Vec *edges;         /* distinct callees of each global */
  bool *recursive;       /* on a cycle (incl. a self edge) */
  bool *referenced;      /* mentioned by some function before the pass */
  bool *inlinable;
} Graph;

typedef struct Collect {
  Graph *g;
  uint32_t from;
  PtrMap seen;
} Collect;

static void collect_global(Expr *e, void *ud) {
  Collect *c = ud;
  if (e->kind != EXPR_GLOBAL || !e->global.def) return;
  int64_t to;
  if (!ptrmap_get(&c->g->index, e->global.def, &to)) return;
  if (ptrmap_find(&c->seen, e->global.def)) return;
  ptrmap_put(&c->seen, e->global.def, 1);
  vec_push(c->g->edges[c->from], (uint32_t)to);
  c->g->referenced[to] = true;
}

static void build_graph(Graph *g, Module *m) {
  g->m = m;
  g->n = m->ndefs;
  memset(&g->index, 0, sizeof g->index);
  g->edges = mem_calloc(g->n ? g->n : 1, sizeof *g->edges);
  g->recursive = mem_calloc(g->n ? g->n : 1, sizeof(bool));
  g->referenced = mem_calloc(g->n ? g->n : 1, sizeof(bool));
  g->inlinable = mem_calloc(g->n ? g->n : 1, sizeof(bool));
  for (uint32_t i = 0; i < g->n; i++) ptrmap_put(&g->index, m->defs[i], i);
  for (uint32_t i = 0; i < g->n; i++) {
    if (!m->defs[i]->fn) continue;
    Collect c = {g, i, {0}};
    walk_post_order(m->defs[i]->fn->body, true, collect_global, &c);
    ptrmap_free(&c.seen);
  }
}

static void free_graph(Graph *g) {
  for (uint32_t i = 0; i < g->n; i++) vec_free(g->edges[i]);
  mem_free(g->edges);
  mem_free(g->recursive);
  mem_free(g->referenced);
  mem_free(g->inlinable);
  ptrmap_free(&g->index);
}

/* Tarjan's strongly connected components, iteratively: marks nodes on a cycle
 * and produces a callees-first order (components are emitted in reverse
 * topological order of the call graph). */
static void order_and_cycles(Graph *g, U32Vec *order) {
  uint32_t n = g->n;
  int64_t *idx = mem_malloc((n ? n : 1) * sizeof *idx), *low = mem_malloc((n ? n : 1) * sizeof *low);
  bool *on = mem_calloc(n ? n : 1, sizeof *on);
  for (uint32_t i = 0; i < n; i++) idx[i] = -1;
  U32Vec st = {0};
  typedef struct { uint32_t v, next; } Frame;
  VEC(Frame) call = {0};
  int64_t counter = 0;
  for (uint32_t r = 0; r < n; r++) {
    if (idx[r] >= 0) continue;
    Frame f0 = {r, 0};
    vec_push(call, f0);
    idx[r] = low[r] = counter++;
    vec_push(st, r);
    on[r] = true;
    while (call.len) {
      Frame *f = &call.data[call.len - 1];
      uint32_t v = f->v;
      if (f->next < g->edges[v].len) {
        uint32_t w = g->edges[v].data[f->next++];
        if (w == v) g->recursive[v] = true;
        if (idx[w] < 0) {
          idx[w] = low[w] = counter++;
          vec_push(st, w);
          on[w] = true;
          Frame fw = {w, 0};
          vec_push(call, fw);
        } else if (on[w] && idx[w] < low[v]) {
          low[v] = idx[w];
        }
        continue;
      }
      call.len--;
      if (call.len) {
        uint32_t p = call.data[call.len - 1].v;
        if (low[v] < low[p]) low[p] = low[v];
      }
      if (low[v] == idx[v]) {
        size_t start = st.len;
        while (st.data[start - 1] != v) start--;
        start--;
        bool cyc = st.len - start > 1;
        for (size_t k = start; k < st.len; k++) {
          on[st.data[k]] = false;
          if (cyc) g->recursive[st.data[k]] = true;
          vec_push(*order, st.data[k]);
        }
        st.len = start;
      }
    }
  }
  vec_free(st);
  vec_free(call);
  mem_free(idx);
  mem_free(low);
  mem_free(on);
}

typedef struct Inl {
  Graph *g;
  Diag *d;
} Inl;

static bool is_inlinable(Inl *st, GlobalDef *def) {
  int64_t i;
  return def && ptrmap_get(&st->g->index, def, &i) && st->g->inlinable[i];
}

/* Does evaluating e (not the bodies of literals it makes) have an effect:
 * a reference operation, a call of a function, a stateful operator? */
static void note_effect(Expr *e, void *ud) {
  if (e->kind == EXPR_REF_NEW || e->kind == EXPR_REF_READ || e->kind == EXPR_REF_WRITE) *(bool *)ud = true;
  else if (e->kind == EXPR_CALL) {
    int32_t id = op_call_id(e);
    if (id >= 0 ? op_is_stateful(id) : e->call.fn->kind != EXPR_CTOR) *(bool *)ud = true;
  }
}

static bool has_effects(Expr *e) {
  bool eff = false;
  walk_post_order(e, false, note_effect, &eff);
  return eff;
}

static Expr *copy_literal(Rewriter *rw, GlobalDef *def, Span sp) {
  Expr *lit = build_fn(rw->m, def->fn, sp);
  return rw_copy_fresh(rw->m, rw->d, lit, NULL, NULL, 0);
}

static Expr *pre(Rewriter *rw, Expr *e) {
  Inl *st = rw->ud;
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_GLOBAL || !is_inlinable(st, e->call.fn->global.def))
    return NULL;
  GlobalDef *def = e->call.fn->global.def;
  Function *f = def->fn;
  uint32_t n = e->call.nargs;
  Expr **args = arena_alloc(rw->m->arena, (n ? n : 1) * sizeof *args);
  for (uint32_t i = 0; i < n; i++) args[i] = rw_expr(rw, e->call.args[i]);
  if (fn_has_attr(f, "Compiler") || fn_has_attr(f, "Extern")) {
    Expr *c = build_copy(rw->m, e);
    c->call.fn = copy_literal(rw, def, e->span);
    c->call.args = args;
    return c;
  }
  if (n != f->nparams) return NULL; /* ill-typed; leave it to the checker */
  bool effects = false;
  for (uint32_t i = 0; i < n && !effects; i++) effects = has_effects(args[i]);
  if (!effects) return rw_copy_fresh(rw->m, rw->d, f->body, f->params, args, n);
  /* an argument with an effect would run where (and if) the body first uses
   * its parameter: every non-atomic argument is let-bound first, in order */
  Var **vs = arena_alloc(rw->m->arena, n * sizeof *vs);
  Expr **uses = arena_alloc(rw->m->arena, n * sizeof *uses);
  for (uint32_t i = 0; i < n; i++) {
    bool atom = args[i]->kind == EXPR_VAR || args[i]->kind == EXPR_CONST || args[i]->kind == EXPR_GLOBAL;
    vs[i] = atom ? NULL : build_var_like(rw->m, f->params[i]);
    uses[i] = atom ? args[i] : build_var(rw->m, vs[i], args[i]->span);
  }
  Expr *body = rw_copy_fresh(rw->m, rw->d, f->body, f->params, uses, n);
  for (uint32_t i = n; i-- > 0;)
    if (vs[i]) body = build_let(rw->m, vs[i], args[i], body, e->span);
  return body;
}

static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  Inl *st = rw->ud;
  if (e->kind == EXPR_GLOBAL && is_inlinable(st, e->global.def)) return copy_literal(rw, e->global.def, e->span);
  return e;
}

static void note_global(Expr *e, void *ud) {
  if (e->kind == EXPR_GLOBAL) *(bool *)ud = true;
}

static bool mentions_globals(Function *f) {
  bool found = false;
  walk_post_order(f->body, true, note_global, &found);
  return found;
}

bool pass_INLINE(PassCtx *c) {
  Module *m = c->m;
  Graph g;
  build_graph(&g, m);
  U32Vec order = {0};
  order_and_cycles(&g, &order);
  Inl st = {&g, c->d};
  bool ok = true;
  for (size_t k = 0; k < order.len && ok; k++) {
    uint32_t i = order.data[k];
    GlobalDef *def = m->defs[i];
    if (!def->fn) continue;
    /* only a function that calls an inlinable global changes (inlined bodies
     * mention no global, so the callees of the call graph are all there is) */
    bool calls_inlinable = false;
    for (size_t k2 = 0; k2 < g.edges[i].len && !calls_inlinable; k2++) calls_inlinable = g.inlinable[g.edges[i].data[k2]];
    if (!calls_inlinable) {
      g.inlinable[i] = fn_has_attr(def->fn, "Inline") && !g.recursive[i] && !mentions_globals(def->fn);
      continue;
    }
    Rewriter rw;
    rw_init(&rw, m, c->d);
    rw.pre = pre;
    rw.post = post;
    rw.ud = &st;
    ok = rw_function(&rw, def->fn);
    rw_fini(&rw);
    g.inlinable[i] = fn_has_attr(def->fn, "Inline") && !g.recursive[i] && !mentions_globals(def->fn);
  }
  /* delete the referenced, non-recursive Inline functions */
  uint32_t kept = 0;
  for (uint32_t i = 0; i < g.n && ok; i++) {
    GlobalDef *def = m->defs[i];
    bool marked = def->fn && fn_has_attr(def->fn, "Inline");
    if (marked && g.referenced[i] && !g.recursive[i]) {
      if (!g.inlinable[i]) {
        diag_error(c->d, def->span, "@%s is marked Inline=1 but cannot be inlined: it calls a global that is not inlinable",
                   def->name);
        ok = false;
      }
      continue;
    }
    m->defs[kept++] = def;
  }
  if (ok) m->ndefs = kept;
  vec_free(order);
  free_graph(&g);
  return ok;
}
