/* transform/dagscan.c — post-order DAG scan with marks instead of a hash
 * map (dagscan.h). An explicit stack of (node, next child) frames; a node is
 * numbered when first reached and listed in post order when its children are
 * done. The DAG has no cycles, so a numbered node met again is finished or an
 * ancestor on the stack only through a cycle, which cannot happen. Also the
 * effect test the passes that move or drop code share (dag_has_effects).
 */
#include "transform/dagscan.h"

#include <string.h>

#include "ir/mem.h"
#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/op_traits.h"

Expr *dag_child(const Expr *e, uint32_t i) {
  switch (e->kind) {
  case EXPR_CALL: return i == 0 ? e->call.fn : i <= e->call.nargs ? e->call.args[i - 1] : NULL;
  case EXPR_TUPLE: return i < e->tuple.n ? e->tuple.fields[i] : NULL;
  case EXPR_PROJ: return i == 0 ? e->proj.tuple : NULL;
  case EXPR_FN: return i == 0 ? e->fn->body : NULL;
  case EXPR_LET: return i == 0 ? e->let.value : i == 1 ? e->let.body : NULL;
  case EXPR_IF: return i == 0 ? e->if_.cond : i == 1 ? e->if_.then_ : i == 2 ? e->if_.else_ : NULL;
  case EXPR_MATCH: return i == 0 ? e->match.scrut : i <= e->match.nclauses ? e->match.clauses[i - 1].body : NULL;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: return i == 0 ? e->ref.arg : NULL;
  case EXPR_REF_WRITE: return i == 0 ? e->ref_write.ref : i == 1 ? e->ref_write.value : NULL;
  default: return NULL;
  }
}

static bool seen(const DagScan *s, const Expr *e) {
  uint32_t m = e->mark;
  return m >= 1 && m <= s->n && s->pre[m - 1] == e;
}

uint32_t dag_index(const DagScan *s, const Expr *e) { return seen(s, e) ? s->pos[e->mark - 1] : UINT32_MAX; }

static void number(DagScan *s, Expr *e) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 256;
    s->pre = mem_realloc(s->pre, s->cap * sizeof *s->pre);
    s->post = mem_realloc(s->post, s->cap * sizeof *s->post);
    s->pos = mem_realloc(s->pos, s->cap * sizeof *s->pos);
    if (s->counting) s->uses = mem_realloc(s->uses, s->cap * sizeof *s->uses);
  }
  if (s->counting) s->uses[s->n] = 0;
  s->pre[s->n] = e;
  e->mark = ++s->n;
}

void dag_scan_roots(DagScan *s, Expr *const *roots, uint32_t nroots, bool count_uses) {
  s->pre = NULL, s->post = NULL, s->pos = NULL, s->uses = NULL, s->n = s->cap = 0;
  s->counting = count_uses;
  typedef struct { uint32_t idx, next; } Frame;
  VEC(Frame) st = {0};
  uint32_t done = 0;
  for (uint32_t r = 0; r < nroots; r++) {
    if (seen(s, roots[r])) continue;
    number(s, roots[r]);
    vec_push(st, ((Frame){s->n - 1, 0}));
    while (st.len) {
      Frame *f = &st.data[st.len - 1];
      Expr *c = dag_child(s->pre[f->idx], f->next++);
      if (c) {
        if (!seen(s, c)) {
          number(s, c);
          vec_push(st, ((Frame){s->n - 1, 0}));
        }
        if (count_uses && s->uses[c->mark - 1] < UINT8_MAX) s->uses[c->mark - 1]++;
        continue;
      }
      s->pos[f->idx] = done;
      s->post[done++] = f->idx;
      st.len--;
    }
  }
  vec_free(st);
}

void dag_scan(DagScan *s, Expr *root) { dag_scan_roots(s, &root, 1, false); }

bool dag_scanned(const DagScan *s, const Expr *e, uint32_t *k) {
  if (!seen(s, e)) return false;
  *k = e->mark - 1;
  return true;
}

bool dag_any(Expr *root, bool (*pred)(const Expr *e, void *ud), void *ud) {
  DagScan s;
  dag_scan(&s, root);
  bool any = false;
  for (uint32_t i = 0; i < s.n && !any; i++) any = pred(s.pre[i], ud);
  dag_free(&s);
  return any;
}

typedef struct IdSet {
  const bool *ids;
  uint32_t n;
} IdSet;

static bool call_in(const Expr *e, void *ud) {
  const IdSet *set = ud;
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_OP) return false;
  int32_t id = e->call.fn->op.id;
  return id >= 0 && (uint32_t)id < set->n && set->ids[id];
}

bool dag_calls_any(Expr *root, const bool *ids, uint32_t n) {
  IdSet set = {ids, n};
  return dag_any(root, call_in, &set);
}

void dag_free(DagScan *s) {
  mem_free(s->pre);
  mem_free(s->post);
  mem_free(s->pos);
  mem_free(s->uses);
  s->pre = NULL, s->post = NULL, s->pos = NULL, s->uses = NULL, s->n = s->cap = 0;
}

/* ------------------------------------------------------------ effects */

/* Does evaluating e itself (not its children, not the bodies of literals it
 * makes) have an effect or depend on when it runs: a reference operation, a
 * call of anything but an operator or constructor, a stateful operator? */
bool dag_own_effect(const Expr *e) {
  if (e->kind == EXPR_REF_NEW || e->kind == EXPR_REF_READ || e->kind == EXPR_REF_WRITE) return true;
  if (e->kind == EXPR_CALL) {
    int32_t id = op_call_id(e);
    return id >= 0 ? op_is_stateful(id) : e->call.fn->kind != EXPR_CTOR;
  }
  return false;
}

/* Whether evaluating e has an effect anywhere below it (literal bodies not
 * entered). Memoised per node in *memo (1 none, 2 effect) for the whole
 * function: every fused call asks about its arguments, which in a chain are
 * the whole program above it — without the memo a 100,000-node chain is
 * quadratic. Iterative (explicit stack). */
bool dag_has_effects(PtrMap *memo, Expr *root) {
  const int64_t *v = ptrmap_find(memo, root);
  if (v) return *v == 2;
  typedef struct {
    Expr *e;
    uint32_t next;
    bool eff;
  } Frame;
  VEC(Frame) st = {0};
  vec_push(st, ((Frame){root, 0, dag_own_effect(root)}));
  bool result = false;
  while (st.len) {
    Frame *f = &st.data[st.len - 1];
    Expr *c = f->e->kind == EXPR_FN ? NULL : dag_child(f->e, f->next++);
    if (c) {
      const int64_t *cv = ptrmap_find(memo, c);
      if (cv) f->eff |= *cv == 2;
      else vec_push(st, ((Frame){c, 0, dag_own_effect(c)}));
      continue;
    }
    bool eff = f->eff;
    ptrmap_put(memo, f->e, eff ? 2 : 1);
    st.len--;
    if (st.len) st.data[st.len - 1].eff |= eff;
    else result = eff;
  }
  vec_free(st);
  return result;
}

/* A reference operation, a stateful operator call, or a call of a function
 * that may have one: a closure (not known here), or a global whose body has
 * an effect (dag_has_effects, memoised in *globals: a call in it counts). A
 * shared call of a global with operator calls only may run twice harmlessly.
 * (Fuzz session 15: a shared @bump(%r), which reads and writes %r, captured
 * by a literal, was not bound first, and LambdaLift's global ran it per call.) */
static bool direct_effect(const Expr *e, PtrMap *globals) {
  if (e->kind == EXPR_CALL) {
    int32_t id = op_call_id(e);
    if (id >= 0) return op_is_stateful(id);
    const Expr *f = e->call.fn;
    if (f->kind == EXPR_CTOR) return false;
    if (f->kind != EXPR_GLOBAL) return true;
    const GlobalDef *g = f->global.def;
    return !g || !g->fn || !g->fn->body || dag_has_effects(globals, g->fn->body);
  }
  return dag_own_effect(e);
}

/* Per node of s (post-order position): whether a direct effect is below it
 * (function literal bodies not entered); parents[i] counts its parents when
 * `parents` is not NULL. The caller frees the result. */
static bool *effects_below(const DagScan *s, uint32_t *parents) {
  bool *eff = mem_calloc(s->n ? s->n : 1, sizeof *eff);
  PtrMap globals = {0};
  for (uint32_t i = 0; i < s->n; i++) {
    Expr *e = dag_node(s, i);
    bool x = direct_effect(e, &globals);
    for (uint32_t k = 0; dag_child(e, k); k++) {
      uint32_t c = dag_index(s, dag_child(e, k));
      if (parents) parents[c]++;
      if (e->kind != EXPR_FN) x = x || eff[c];
    }
    eff[i] = x;
  }
  ptrmap_free(&globals);
  return eff;
}

DagEffects dag_effects(Expr *root) {
  DagEffects fx = {false, false, false};
  DagScan s;
  PtrMap globals = {0};
  dag_scan(&s, root);
  for (uint32_t i = 0; i < s.n && !(fx.literal && fx.own && fx.direct); i++) {
    const Expr *e = s.pre[i];
    if (e->kind == EXPR_FN) fx.literal = true;
    if (!fx.own && dag_own_effect(e)) fx.own = true;
    if (!fx.direct && direct_effect(e, &globals)) fx.direct = true;
  }
  ptrmap_free(&globals);
  dag_free(&s);
  return fx;
}

bool dag_literal_captures_effect(Function *root) {
  /* most functions have no literal or no effect: one scan of the nodes
   * instead of the homes of every node (a pointer map per node) */
  if (!root->body) return false;
  DagEffects fx = dag_effects(root->body);
  if (!fx.literal || !fx.direct) return false;
  FnHomes h = {0};
  fn_homes_add(&h, root);
  bool found = false;
  if (h.cross.len) {
    DagScan s;
    dag_scan(&s, root->body);
    bool *eff = effects_below(&s, NULL);
    for (uint32_t i = 0; i < s.n && !found; i++) found = eff[i] && ptrmap_find(&h.cross, dag_node(&s, i));
    mem_free(eff);
    dag_free(&s);
  }
  fn_homes_free(&h);
  return found;
}
