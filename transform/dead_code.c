/* transform/dead_code.c — DeadCodeElimination (spec/passes.md §3.1).
 *
 * TVM's three steps, over every global function (Primitive, Extern and
 * Compiler ones included):
 *  1. Purity (skipped with ignore_impurity, which makes every binding pure):
 *     per expression, is evaluating it pure, and is calling its value pure.
 *     Operators are pure to call unless the registry marks them stateful
 *     (ops/op_traits.h); ref_read/ref_write are effects; `ref(e)` is as pure as
 *     e (TVM calls it pure whatever e is, so `let %w = ref(ref_read(%v))`
 *     could move past a write: relayc does not copy that); a call is pure when
 *     callee, arguments and the call are; calling a global is as pure as its
 *     body (assumed pure while it is analysed, for recursion; when a recursive
 *     use saw that assumption and the body turned out impure, the analysis
 *     runs again with the results as the assumptions, until none is
 *     contradicted: otherwise `let %u = @rec_writer(...)` in a caller analysed
 *     after @rec_writer read the stale assumption and was deleted); function-typed
 *     parameters and functions taken out of tuples, references or ADTs are
 *     impure to call; calls nested deeper than 25 count as impure. Globals
 *     marked Primitive or Extern are analysed only when an analysed function
 *     references them (Extern never), so their own lets stay.
 *  2. Usage: the uses of each let-bound variable; a pure value is looked at
 *     only once its variable has a use (so bindings used only by dead values
 *     die in the same run); a use inside a function literal nested deeper than
 *     the binding counts twice; a node reached through sharing is inspected at
 *     most twice.
 *  3. Rewrite: a pure binding with no use is deleted; with inline_once, a pure
 *     binding used once is moved to its use; everything else stays put.
 *
 * As in TVM, every use of a variable, global, operator or constructor is one
 * node for memoisation (relayc has one EXPR_VAR node per use, so those tables
 * are keyed by the Var, GlobalDef, OpDef or Ctor). Per-expression tables use
 * Expr.mark validated by a back pointer. Let chains are walked with loops;
 * other nesting recurses under stack_exhausted().
 */
#include <string.h>

#include "ir/build.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"
#include "ops/op_traits.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

#define MAX_CALL_DEPTH 25

/* ----------------------------------------------------------- node tables */

/* A table key -> integer (0 when new): what TVM memoises by, the object an
 * atom names (dagscan.h dag_atom_key): a variable by its id (unique in a
 * module) in a direct table validated by the Var and the table's generation,
 * the other atoms in a pointer map; any other node through Expr.mark
 * (validated by the back pointer). table_restart empties it in O(1) but for
 * the few non-variable atoms, so that one table serves every function. */
typedef struct TEntry {
  const Expr *key;
  int64_t val;
} TEntry;

typedef struct VarEntry {
  const Var *key;
  uint32_t gen;
  int64_t val;
} VarEntry;

typedef struct Table {
  VEC(TEntry) exprs;
  VEC(VarEntry) vars; /* by Var.id */
  uint32_t gen;
  PtrMap atoms;
} Table;

static int64_t *var_slot(Table *t, const Var *v) {
  while (t->vars.len <= v->id) vec_push(t->vars, ((VarEntry){NULL, 0, 0}));
  VarEntry *s = &t->vars.data[v->id];
  if (s->key != v || s->gen != t->gen) *s = (VarEntry){v, t->gen, 0};
  return &s->val;
}

static void table_restart(Table *t) {
  t->exprs.len = 0;
  t->gen++;
  ptrmap_clear(&t->atoms);
}

static int64_t *table_slot(Table *t, const Expr *e) {
  if (e->kind == EXPR_VAR && e->var.var) return var_slot(t, e->var.var);
  const void *key = dag_atom_key(e);
  if (key) return ptrmap_slot(&t->atoms, key);
  Expr *x = (Expr *)e;
  uint32_t i = x->mark - 1;
  if (!(x->mark && i < t->exprs.len && t->exprs.data[i].key == e)) {
    vec_push(t->exprs, ((TEntry){e, 0}));
    i = (uint32_t)t->exprs.len - 1;
    x->mark = i + 1;
  }
  return &t->exprs.data[i].val;
}

static void table_free(Table *t) {
  vec_free(t->exprs);
  vec_free(t->vars);
  ptrmap_free(&t->atoms);
}

/* ------------------------------------------------------------------ purity */

typedef struct Purity {
  bool eval; /* evaluating the expression is pure */
  bool call; /* calling its value (when a function) is pure */
} Purity;

static uint32_t pack(Purity p) { return 4u | (p.eval ? 1u : 0u) | (p.call ? 2u : 0u); }
static Purity unpack(uint32_t v) { return (Purity){(v & 1) != 0, (v & 2) != 0}; }

typedef struct Pv {
  Module *m;
  Table memo;        /* node -> packed Purity */
  PtrMap vars;       /* Var* -> packed Purity */
  PtrMap globals;    /* GlobalDef* -> packed Purity (| PV_BUSY, PV_ASSUMED) */
  PtrMap known;      /* GlobalDef* -> packed Purity: the previous round's results */
  bool contradicted; /* an assumption a recursive use saw was wrong: run again */
  int depth;         /* current call depth */
} Pv;

#define PV_BUSY 8     /* being analysed: the value is an assumption */
#define PV_ASSUMED 16 /* ... which a recursive use has read */

static bool first_order_type(const Type *t) {
  t = type_solved(t);
  return !t || t->kind != TYPE_FUNC;
}

static Purity pv_expr(Pv *p, Expr *e);

static Purity pv_global(Pv *p, GlobalDef *g) {
  int64_t *s = ptrmap_find(&p->globals, g);
  if (s) {
    if (*s & PV_BUSY) *s |= PV_ASSUMED;
    return unpack((uint32_t)*s);
  }
  /* assumed while analysed: pure in the first round, then the last result */
  const int64_t *k = ptrmap_find(&p->known, g);
  Purity assumed = k ? unpack((uint32_t)*k) : (Purity){true, true};
  ptrmap_put(&p->globals, g, pack(assumed) | PV_BUSY);
  Purity r = (Purity){true, true};
  /* the function itself: parameters, then the body */
  for (uint32_t i = 0; i < g->fn->nparams; i++)
    ptrmap_put(&p->vars, g->fn->params[i], pack((Purity){true, first_order_type(g->fn->params[i]->type)}));
  Purity b = pv_expr(p, g->fn->body);
  r.call = b.eval && b.call;
  s = ptrmap_find(&p->globals, g);
  if ((*s & PV_ASSUMED) && r.call != assumed.call) p->contradicted = true;
  ptrmap_put(&p->globals, g, pack(r));
  return r;
}

static void pv_pattern_var(Var *v, void *ud) {
  Pv *p = ud;
  ptrmap_put(&p->vars, v, pack((Purity){true, first_order_type(v->type)}));
}

static Purity pv_compute(Pv *p, Expr *e) {
  switch (e->kind) {
  case EXPR_CONST:
  case EXPR_CTOR: return (Purity){true, true};
  case EXPR_OP: return (Purity){true, !op_is_stateful(e->op.id)};
  case EXPR_GLOBAL: {
    GlobalDef *g = e->global.def;
    if (g && g->fn && !fn_has_attr(g->fn, "Extern")) return pv_global(p, g);
    return (Purity){true, false};
  }
  case EXPR_VAR: {
    int64_t *s = ptrmap_find(&p->vars, e->var.var);
    bool call = s ? unpack((uint32_t)*s).call : first_order_type(e->type);
    return (Purity){true, call};
  }
  case EXPR_FN: {
    Function *f = e->fn;
    for (uint32_t i = 0; i < f->nparams; i++)
      ptrmap_put(&p->vars, f->params[i], pack((Purity){true, first_order_type(f->params[i]->type)}));
    Purity b = pv_expr(p, f->body);
    return (Purity){true, b.eval && b.call};
  }
  case EXPR_LET: {
    bool all = true;
    Expr *cur = e;
    while (cur->kind == EXPR_LET) {
      Var *v = cur->let.var;
      ptrmap_put(&p->vars, v, pack((Purity){true, true})); /* a recursive function: assumed */
      Purity vp = pv_expr(p, cur->let.value);
      ptrmap_put(&p->vars, v, pack(vp));
      all = all && vp.eval;
      cur = cur->let.body;
    }
    Purity b = pv_expr(p, cur);
    return (Purity){all && b.eval, b.call};
  }
  case EXPR_CALL: {
    if (p->depth >= MAX_CALL_DEPTH) return (Purity){false, first_order_type(e->type)};
    p->depth++;
    Purity callee = pv_expr(p, e->call.fn);
    bool args = true;
    for (uint32_t i = 0; i < e->call.nargs; i++) args = pv_expr(p, e->call.args[i]).eval && args;
    p->depth--;
    return (Purity){args && callee.eval && callee.call, first_order_type(e->type) || callee.call};
  }
  case EXPR_IF: {
    Purity c = pv_expr(p, e->if_.cond), t = pv_expr(p, e->if_.then_), f = pv_expr(p, e->if_.else_);
    return (Purity){c.eval && t.eval && f.eval, t.call && f.call};
  }
  case EXPR_TUPLE: {
    bool all = true;
    for (uint32_t i = 0; i < e->tuple.n; i++) all = pv_expr(p, e->tuple.fields[i]).eval && all;
    return (Purity){all, true};
  }
  case EXPR_PROJ: return (Purity){pv_expr(p, e->proj.tuple).eval, first_order_type(e->type)};
  case EXPR_REF_NEW: return (Purity){pv_expr(p, e->ref.arg).eval, true}; /* TVM: always pure (unsound) */
  case EXPR_REF_WRITE:
    pv_expr(p, e->ref_write.ref);
    pv_expr(p, e->ref_write.value);
    return (Purity){false, true};
  case EXPR_REF_READ:
    pv_expr(p, e->ref.arg);
    return (Purity){false, first_order_type(e->type)};
  case EXPR_MATCH: {
    Purity d = pv_expr(p, e->match.scrut);
    bool ev = true, call = true;
    for (uint32_t i = 0; i < e->match.nclauses; i++) {
      pattern_each_var(e->match.clauses[i].pattern, pv_pattern_var, p);
      Purity r = pv_expr(p, e->match.clauses[i].body);
      ev = ev && r.eval;
      call = call && r.call;
    }
    return (Purity){d.eval && ev, call};
  }
  default: return (Purity){false, false};
  }
}

/* Memoised per node (per named object for atoms), like TVM's memo_. */
static Purity pv_expr(Pv *p, Expr *e) {
  int64_t v = *table_slot(&p->memo, e);
  if (v) return unpack((uint32_t)v);
  Purity r = stack_exhausted() ? (Purity){false, false} : pv_compute(p, e);
  *table_slot(&p->memo, e) = pack(r);
  return r;
}

/* ------------------------------------------------------------------- usage */

typedef struct LetInfo {
  Expr *value;
  uint32_t uses;
  int level;
} LetInfo;

typedef struct Uv {
  const PtrMap *purity; /* Var* -> packed Purity, or NULL when impurity is ignored */
  bool default_pure;
  Table visits;         /* node -> times inspected */
  PtrMap lets;          /* Var* -> index into infos + 1 */
  VEC(LetInfo) infos;
  int level;
  bool failed;
} Uv;

static bool var_pure(const PtrMap *purity, bool dflt, const Var *v) {
  const int64_t *s = purity ? ptrmap_find(purity, v) : NULL;
  return s ? unpack((uint32_t)*s).eval : dflt;
}

static LetInfo *let_info(Uv *u, const Var *v) {
  const int64_t *s = ptrmap_find(&u->lets, v);
  return s ? &u->infos.data[*s - 1] : NULL;
}

static void uv_expr(Uv *u, Expr *e);

static void uv_dispatch(Uv *u, Expr *e) {
  switch (e->kind) {
  case EXPR_FN:
    u->level++;
    uv_expr(u, e->fn->body);
    u->level--;
    break;
  case EXPR_LET: {
    Expr *cur = e;
    while (cur->kind == EXPR_LET) {
      (*table_slot(&u->visits, cur))++;
      Var *v = cur->let.var;
      int64_t *s = ptrmap_slot(&u->lets, v);
      /* a let chain reached again through sharing keeps the uses counted
       * so far: its inner nodes may not be inspected again (at most twice),
       * so starting from 0 lost uses and deleted a binding still used */
      if (!*s) {
        vec_push(u->infos, ((LetInfo){0}));
        *s = (int64_t)u->infos.len;
      }
      LetInfo *li = &u->infos.data[*s - 1];
      li->value = cur->let.value;
      li->level = u->level;
      if (!var_pure(u->purity, u->default_pure, v)) uv_expr(u, cur->let.value); /* must run: visit now */
      cur = cur->let.body;
    }
    uv_expr(u, cur);
    break;
  }
  case EXPR_VAR: {
    LetInfo *li = let_info(u, e->var.var);
    if (!li) break; /* a parameter or pattern variable */
    li->uses++;
    int bound = li->level;
    if (li->uses == 1 && var_pure(u->purity, u->default_pure, e->var.var)) {
      uv_expr(u, li->value); /* now known to be needed */
      li = let_info(u, e->var.var);
    }
    if (bound < u->level) li->uses++; /* inside a literal: assume two calls */
    break;
  }
  case EXPR_CALL:
    uv_expr(u, e->call.fn);
    for (uint32_t i = 0; i < e->call.nargs; i++) uv_expr(u, e->call.args[i]);
    break;
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) uv_expr(u, e->tuple.fields[i]);
    break;
  case EXPR_PROJ: uv_expr(u, e->proj.tuple); break;
  case EXPR_IF:
    uv_expr(u, e->if_.cond);
    uv_expr(u, e->if_.then_);
    uv_expr(u, e->if_.else_);
    break;
  case EXPR_MATCH:
    uv_expr(u, e->match.scrut);
    for (uint32_t i = 0; i < e->match.nclauses; i++) uv_expr(u, e->match.clauses[i].body);
    break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: uv_expr(u, e->ref.arg); break;
  case EXPR_REF_WRITE:
    uv_expr(u, e->ref_write.ref);
    uv_expr(u, e->ref_write.value);
    break;
  default: break;
  }
}

static void uv_expr(Uv *u, Expr *e) {
  int64_t *n = table_slot(&u->visits, e);
  if (++*n > 2) return; /* seen twice: nothing more to learn */
  if (stack_exhausted()) {
    u->failed = true;
    return;
  }
  uv_dispatch(u, e);
}

/* ---------------------------------------------------------------- rewrite */

typedef enum { ACT_KEEP, ACT_ELIDE, ACT_INLINE } Action;

typedef struct El {
  Uv *u;
  bool inline_once;
} El;

static Action action_for(const El *el, const Var *v) {
  const LetInfo *li = let_info(el->u, v);
  if (!li) return ACT_KEEP;
  if (!var_pure(el->u->purity, el->u->default_pure, v)) return ACT_KEEP;
  if (li->uses == 0) return ACT_ELIDE;
  if (li->uses == 1 && el->inline_once) return ACT_INLINE;
  return ACT_KEEP;
}

static Expr *el_pre(Rewriter *rw, Expr *e) {
  El *el = rw->ud;
  if (e->kind == EXPR_VAR && action_for(el, e->var.var) == ACT_INLINE)
    return rw_expr(rw, let_info(el->u, e->var.var)->value);
  return NULL;
}

static Expr *el_post(Rewriter *rw, Expr *old, Expr *e) {
  El *el = rw->ud;
  if (old->kind == EXPR_LET && action_for(el, old->let.var) != ACT_KEEP) return e->let.body;
  return e;
}

/* ------------------------------------------------------------------ driver */

bool pass_DCE(PassCtx *c) {
  Module *m = c->m;
  bool ignore = pass_opt_bool(c, "ignore_impurity");
  Pv pv = {.m = m};
  /* Results only fall from pure to impure from one round to the next, so
   * this ends; a round is repeated only for recursion that writes. */
  for (uint32_t round = 0; !ignore; round++) {
    pv.contradicted = false;
    for (uint32_t i = 0; i < m->ndefs; i++) {
      GlobalDef *g = m->defs[i];
      if (!g->fn || fn_has_attr(g->fn, "Primitive") || fn_has_attr(g->fn, "Extern")) continue;
      pv_global(&pv, g);
    }
    if (!pv.contradicted || round > 2 * m->ndefs + 2) break;
    ptrmap_free(&pv.known);
    pv.known = pv.globals;
    memset(&pv.globals, 0, sizeof pv.globals);
    table_free(&pv.memo);
    memset(&pv.memo, 0, sizeof pv.memo);
    ptrmap_free(&pv.vars);
    memset(&pv.vars, 0, sizeof pv.vars);
  }
  bool ok = true;
  Table visits = {0}; /* every function's u.visits in turn, restarted for each */
  for (uint32_t i = 0; i < m->ndefs && ok; i++) {
    GlobalDef *g = m->defs[i];
    if (!g->fn) continue;
    table_restart(&visits);
    Uv u = {.purity = ignore ? NULL : &pv.vars, .default_pure = ignore, .visits = visits};
    u.level = 1; /* the global function's own body */
    uv_expr(&u, g->fn->body);
    if (u.failed) {
      diag_error(c->d, g->fn->body->span, "expression nested too deeply");
      ok = false;
    } else if (u.infos.len) { /* only lets are touched */
      El el = {&u, pass_opt_bool(c, "inline_once")};
      Rewriter rw;
      rw_init(&rw, m, c->d);
      rw.pre = el_pre;
      rw.post = el_post;
      rw.ud = &el;
      rw.mark_memo = true; /* the hooks use no Expr.mark table */
      ok = rw_function(&rw, g->fn);
      rw_fini(&rw);
    }
    visits = u.visits;
    ptrmap_free(&u.lets);
    vec_free(u.infos);
  }
  table_free(&visits);
  table_free(&pv.memo);
  ptrmap_free(&pv.vars);
  ptrmap_free(&pv.globals);
  ptrmap_free(&pv.known);
  return ok;
}
