/* transform/partial_eval.c — PartialEvaluate, TVM's PartialEval (spec/passes.md §8.5).
 *
 * An online partial evaluator. Every value is partially static: an optional
 * static part (a constant tensor, a tuple or ADT value of partially static
 * values, a reference cell, a function) plus a residual atom that computes it
 * at run time. Every value produced is let-bound in the residual code (`let
 * %x_N = ...;`), so the output is in A-normal form; DeadCodeElimination
 * (inline_once=True) afterwards removes what the static parts made
 * unnecessary, as in TVM's tests.
 *
 *  - operator calls with all arguments static and no state are computed now
 *    (with the interpreter, bit-identical to running them: FoldConstant's
 *    fold_eval_call);
 *  - constructor calls build static ADT values, `match` and `if` on static
 *    values pick their branch, projections of static tuples pick the field;
 *  - `ref` makes a static cell; writes to it update the store, reads return
 *    the stored value; an unknown write, an unknown call, a residual `if` or
 *    `match`, and the body of a residualised literal forget every cell;
 *  - calls of static functions (literals, closures, globals) are unfolded
 *    when the fuel allows it: fuel compares the arguments with the meet
 *    (componentwise least value, as TVM) of the enclosing unfoldings of the
 *    same function — each argument's creation order and, for rank-0
 *    integers, its value (clamped at 0) — and unfolds only when some
 *    component strictly decreased (the first call always unfolds). Beyond
 *    TVM, two more components: the callee's own creation order (a closure
 *    calling an older closure of the same literal, a gradient's tape) and
 *    the first integer inside a static tuple argument (a gradient's
 *    (counter, cell) pair). So `@loop(%x) { @loop(%x) }` stays one residual call, while a
 *    countdown on a constant or a walk down a static list unfolds fully. An
 *    overall budget of unfoldings is the safety net TVM lacks (it can run out
 *    of memory on exponential unfoldings): past it, calls are residual; and
 *    an outermost call whose unfolding unfolds more than PE_ATTEMPT_UNFOLDS
 *    calls is rolled back and stays a call. The residual literals made below
 *    it do not count there: each one's body unfolds the closures it calls
 *    again (a gradient's backward closure, the whole tape before it), n^2/2
 *    unfoldings for a tape of n, copies DeadCodeElimination usually drops;
 *    the overall budget still bounds them;
 *  - a literal may escape, so it also gets a residual form (its body with
 *    unknown parameters), in its place in the residual code; beyond TVM,
 *    which makes it at once, that form is made only when something needs
 *    it, as it would have been made there (literal(): else nested
 *    continuations cost 2^depth); every global function is replaced by its
 *    residual form;
 *  - last, beyond TVM: a cell the residual code only writes to (every read
 *    was answered statically, it never escapes) goes with its writes, in
 *    rounds with the unused plain lets that held it (tuples, closures):
 *    nothing can observe them, and DeadCodeElimination, which keeps every
 *    write, can then clear a gradient's tape exactly (TVM's tests instead
 *    run it with ignore_impurity, which also drops writes still read).
 * Binders in the output are all fresh, so unfolding a body twice never binds
 * one variable twice. Shared nodes (graph bindings) are evaluated once per
 * evaluation of their enclosing body and scope (TVM aborts on sharing); a
 * shared node with an effect whose uses span several scopes (inside and
 * outside a function literal or branch) is first let-bound where ANF puts it
 * (transform/normal_form.h), so a closure or branch does not run it again.
 */
#include <string.h>

#include "ir/build.h"
#include "ir/diag.h"
#include "ir/mem.h"
#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/op_traits.h"
#include "sema/infer.h"
#include "sema/typeof.h"
#include "transform/fold_constant.h"
#include "transform/normal_form.h"
#include "transform/pass.h"
#include "transform/dagscan.h"
#include "transform/rewrite.h"

#define PE_MAX_UNFOLDS 20000 /* calls unfolded in one pass before every call becomes residual */
#define PE_ATTEMPT_UNFOLDS 1000 /* unfoldings below one outermost call before it is rolled back;
                                   those made for residual literals created below it do not count */

typedef struct PV PV;
typedef struct Closure Closure;
typedef struct Frame Frame;
typedef struct LL LL;

/* Where and in what state a literal was made: its residual literal is made
 * only when something needs it as a value (most continuations are only ever
 * called, and unfolded), but then exactly as it would have been made there
 * and then: in the let list it was made in, at its place, with the
 * unfoldings then in progress (fuel) and the residual-literal nesting then. */
typedef struct Home {
  LL *ll;                 /* the let list, open while the literal is reachable */
  size_t open;            /* ... its index in Pe.open */
  uint64_t serial;        /* ... checked, with the slot's `lazy`, before it is written */
  size_t slot;            /* the binding kept for it */
  const Frame *frames;    /* the unfoldings in progress */
  uint32_t literal_depth; /* p->literal_depth and p->literal_in_call */
  bool literal_in_call;
  bool over;              /* p->over */
  Span span;
} Home;

/* The instantiation the code being evaluated runs at: the type parameters of
 * the polymorphic globals being unfolded, in terms of the residual context. */
typedef struct Inst {
  TypeParam **ps;
  Type **with;
  uint32_t n;
} Inst;

typedef enum { S_NONE, S_TENSOR, S_TUPLE, S_ADT, S_REF, S_FUNC } SKind;

/* A partially static value. */
struct PV {
  SKind kind;
  Expr *d;          /* residual atom (a variable, global, constant or operator) */
  uint64_t stamp;   /* creation order (fuel) */
  union {
    Expr *constant;                            /* S_TENSOR: an EXPR_CONST */
    struct { PV **f; uint32_t n; } tup;        /* S_TUPLE */
    struct { Ctor *c; PV **f; uint32_t n; } adt; /* S_ADT */
    uint32_t cell;                             /* S_REF: index into the store */
    Closure *fn;                               /* S_FUNC */
  };
};

/* A static function: a global, or a literal with the values of its captures. */
struct Closure {
  GlobalDef *g;     /* a global, or NULL */
  Function *lit;    /* a literal, or NULL */
  Var *self;        /* the let variable a literal is bound to */
  bool recursive;   /* ... and its body uses it */
  PV *selfv;
  Var **caps;       /* the literal's free variables (arena) ... */
  uint32_t ncaps;
  PV **capv;        /* ... and their values when it was made */
  const Inst *inst; /* the instantiation its types are read at */
  Home home;        /* where its residual literal goes (home.ll NULL: where it is first needed) */
};

/* A let binding of the residual code; v NULL: the place kept for the
 * residual literal of closure `lazy`, not made (yet). */
typedef struct Binding {
  Var *v;
  union {
    Expr *e;  /* v set */
    PV *lazy; /* v NULL */
  };
} Binding;

/* Residual code being built: let bindings, in order. Open from ll_open to
 * ll_wrap, at index `open` of Pe.open; serial tells it from a later one at
 * the same address. */
struct LL {
  VEC(Binding) b;
  size_t kept;     /* places kept for residual literals (ll_wrap drops the unmade ones) */
  uint64_t serial;
  size_t open;
};

typedef struct Undo {
  const void *key;
  int64_t old;
} Undo;

/* The environment: Var* -> PV*, a dense array indexed by Var id (ids are
 * dense within a module, and the lookup is on every variable occurrence),
 * with an undo log so scopes are left by undoing back to a mark. */
typedef struct EnvUndo {
  uint32_t id;
  PV *old;
} EnvUndo;

typedef struct Env {
  PV **val;   /* NULL: unbound */
  size_t cap;
  VEC(EnvUndo) undo;
} Env;

/* A scoped map (memo): puts are undone back to a mark. 0 = absent. */
typedef struct Scoped {
  PtrMap map;
  VEC(Undo) undo;
} Scoped;

/* The unfolding of one function, for fuel; up: the one it is in. In the
 * arena, so a literal's Home can keep the chain it was made under. */
struct Frame {
  const void *fn;
  uint64_t *fuel;
  uint32_t n;
  const Frame *up;
};

typedef struct Pe {
  Module *m;
  Diag *d;
  Env env;               /* Var* -> PV* */
  Scoped *memo;          /* Expr* -> PV* for the body being evaluated: shared nodes only */
  DagScan nodes;         /* every node of the program's globals, with its parent count */
  VEC(PV *) store;       /* cell contents (NULL: unknown) */
  const Frame *frames;   /* unfoldings in progress, innermost first (NULL: none) */
  VEC(LL *) open;        /* let lists being built, innermost last */
  uint64_t ll_serial;
  PtrMap self_of;        /* Function* of a let-bound literal -> the let Var* ... */
  bool self_noted;       /* ... filled (from `nodes`) when the first literal is met */
  const Inst *inst;      /* instantiation of the code being evaluated (NULL: none) */
  uint64_t stamp;
  uint64_t unfolds;      /* in the whole pass */
  uint64_t attempt;      /* below the outermost unfolding in progress, residual literals apart */
  uint32_t literal_depth; /* residual literal bodies being made (residualise), nested */
  bool literal_in_call;  /* the outermost of them is below an unfolding: its unfoldings are not in attempt */
  bool over;             /* that unfolding went over PE_ATTEMPT_UNFOLDS: it is rolled back */
  const void *residualising; /* the function whose residual form is being made */
  FvCache *fv;           /* free variables of literals */
  bool droppable;        /* a let of something other than a call was built: drop_dead_cells has work */
  bool failed;
} Pe;

static PV *pe(Pe *p, Expr *e, LL *ll);
static void note_let_bound_literals(Pe *p);
static void residualise(Pe *p, PV *v, Span sp, LL *ll);
static Expr *atom(Pe *p, PV *v, LL *ll);
static bool residualise_at_home(Pe *p, PV *v);

/* ------------------------------------------------------------- scoped maps */

static void sc_put(Scoped *s, const void *k, const void *v) {
  int64_t *slot = ptrmap_slot(&s->map, k);
  Undo u = {k, *slot};
  vec_push(s->undo, u);
  *slot = (int64_t)(intptr_t)v;
}

static void *sc_get(Scoped *s, const void *k) {
  const int64_t *v = ptrmap_find(&s->map, k);
  return v ? (void *)(intptr_t)*v : NULL;
}

/* Only a node with two or more parents (DAG sharing) can be reached twice in
 * one body's evaluation (each parent is evaluated at most once there, by
 * induction from the root), so only those are memoised: most nodes skip
 * the map. A node the scan cannot vouch for (its mark reused since) is
 * memoised. */
static bool shared_node(const Pe *p, const Expr *e) {
  uint32_t k;
  return !dag_scanned(&p->nodes, e, &k) || p->nodes.uses[k] > 1;
}

static PV *memo_get(Pe *p, const Expr *e) { return shared_node(p, e) ? sc_get(p->memo, e) : NULL; }

static size_t sc_mark(Scoped *s) { return s->undo.len; }

static void sc_undo(Scoped *s, size_t mark) {
  while (s->undo.len > mark) {
    Undo u = s->undo.data[--s->undo.len];
    *ptrmap_slot(&s->map, u.key) = u.old;
  }
}

static void sc_free(Scoped *s) {
  ptrmap_free(&s->map);
  vec_free(s->undo);
}

static void env_reserve(Pe *p, size_t n) {
  if (n <= p->env.cap) return;
  size_t cap = p->env.cap ? p->env.cap : 1024;
  while (cap < n) cap *= 2;
  if (!p->env.cap) { /* the first, module-sized array: zero pages, touched where bound */
    p->env.val = mem_calloc(cap, sizeof *p->env.val);
  } else {
    p->env.val = mem_realloc(p->env.val, cap * sizeof *p->env.val);
    memset(p->env.val + p->env.cap, 0, (cap - p->env.cap) * sizeof *p->env.val);
  }
  p->env.cap = cap;
}

static void bind(Pe *p, Var *v, PV *val) {
  env_reserve(p, (size_t)v->id + 1);
  EnvUndo u = {v->id, p->env.val[v->id]};
  vec_push(p->env.undo, u);
  p->env.val[v->id] = val;
}

static PV *env_get(Pe *p, const Var *v) { return v->id < p->env.cap ? p->env.val[v->id] : NULL; }

static size_t env_mark(Pe *p) { return p->env.undo.len; }

static void env_undo(Pe *p, size_t mark) {
  while (p->env.undo.len > mark) {
    EnvUndo u = p->env.undo.data[--p->env.undo.len];
    p->env.val[u.id] = u.old;
  }
}

/* ---------------------------------------------------------------- values */

static PV *pv_new(Pe *p, SKind k, Expr *d) {
  PV *v = arena_alloc(p->m->arena, sizeof *v);
  memset(v, 0, sizeof *v);
  v->kind = k;
  v->d = d;
  v->stamp = ++p->stamp;
  return v;
}

/* Binds e to a fresh %x_N; the atom using it. A typed e gives the binder and
 * the use its type (see `typed` below). */
static Expr *ll_push(Pe *p, LL *ll, Expr *e) {
  if (e->kind != EXPR_CALL || e->call.fn->kind == EXPR_CTOR) p->droppable = true;
  Var *v = build_fresh_var(p->m, "x", NULL, e->span);
  v->type = e->type;
  Binding b = {v, {e}};
  vec_push(ll->b, b);
  return build_typed(build_var(p->m, v, e->span), e->type);
}

/* Starts a let list (ended by ll_wrap). */
static void ll_open(Pe *p, LL *ll) {
  memset(ll, 0, sizeof *ll);
  ll->serial = ++p->ll_serial;
  ll->open = p->open.len;
  vec_push(p->open, ll);
}

/* Whether the let list opened as `serial` at `ll` is still being built (an
 * ended one may share its address, or its index): O(1), for the residual
 * literals of a chain of closures, each capturing the last, are made from
 * ever deeper let lists. */
static bool ll_is_open(const Pe *p, const LL *ll, size_t open, uint64_t serial) {
  return open < p->open.len && p->open.data[open] == ll && ll->serial == serial;
}

/* Drops the places kept for residual literals nothing needed. */
static void ll_drop_unmade(LL *ll) {
  if (!ll->kept) return;
  size_t k = 0;
  for (size_t i = 0; i < ll->b.len; i++)
    if (ll->b.data[i].v) ll->b.data[k++] = ll->b.data[i];
  ll->b.len = k;
}

/* The residual code is built typed where that is free: a node rebuilt from a
 * node of the program takes the program node's type when each child has
 * the type of the child it replaces (rw_rebuilt_type; not inside an
 * instantiated polymorphic body, whose program types name its type
 * parameters), a binder and its uses take their value's type, a let its
 * body's. Every typed node has typed children only, so types_quietly and
 * the runner's re-typing infer just the rest: the nodes whose arguments
 * became more static than the program's, and what is built around them. */
static Expr *typed_like(Pe *p, const Expr *old, Expr *now) {
  if (!p->inst || !p->inst->n) now->type = rw_rebuilt_type(old, now);
  return now;
}

/* A use of a variable of the program (a parameter left unknown), typed as
 * inference would type it. */
static Expr *typed_use(Pe *p, Var *v, Span sp) {
  Expr *u = build_var(p->m, v, sp);
  if (!p->inst || !p->inst->n) u->type = typeof_known(v->type) ? v->type : NULL;
  return u;
}

/* let v1 = e1; ... body. `let %x = e; %x` at the end is written `e`, so a
 * call in tail position stays one (a residual loop keeps running in constant
 * space). */
static Expr *ll_wrap(Pe *p, LL *ll, Expr *body) {
  if (p->open.len && p->open.data[p->open.len - 1] == ll) p->open.len--;
  ll_drop_unmade(ll);
  if (ll->b.len && body->kind == EXPR_VAR && body->var.var == ll->b.data[ll->b.len - 1].v)
    body = ll->b.data[--ll->b.len].e;
  for (size_t i = ll->b.len; i-- > 0;) {
    Expr *val = ll->b.data[i].e;
    Expr *let = build_let(p->m, ll->b.data[i].v, val, body, val->span);
    body = build_typed(let, val->type ? body->type : NULL); /* a let has its body's type */
  }
  vec_free(ll->b);
  return body;
}

static Expr **dyn_list(Pe *p, PV **vs, uint32_t n, LL *ll) {
  Expr **out = arena_alloc(p->m->arena, (n ? n : 1) * sizeof *out);
  for (uint32_t i = 0; i < n; i++) out[i] = atom(p, vs[i], ll);
  return out;
}

static void forget_store(Pe *p) {
  for (size_t i = 0; i < p->store.len; i++) p->store.data[i] = NULL;
}

static PV **save_store(Pe *p) {
  PV **s = arena_alloc(p->m->arena, (p->store.len ? p->store.len : 1) * sizeof *s);
  if (p->store.len) memcpy(s, p->store.data, p->store.len * sizeof *s);
  return s;
}

static void restore_store(Pe *p, PV **s, size_t n) {
  for (size_t i = 0; i < p->store.len; i++) p->store.data[i] = i < n ? s[i] : NULL;
}

/* A constant or a tuple of constants: a static value of it, let-bound. */
static PV *static_const(Pe *p, Expr *c, LL *ll) {
  if (c->kind == EXPR_TUPLE) {
    PV **f = arena_alloc(p->m->arena, (c->tuple.n ? c->tuple.n : 1) * sizeof *f);
    for (uint32_t i = 0; i < c->tuple.n; i++) f[i] = static_const(p, c->tuple.fields[i], ll);
    Expr *tup = build_tuple(p->m, dyn_list(p, f, c->tuple.n, ll), c->tuple.n, c->span);
    PV *v = pv_new(p, S_TUPLE, ll_push(p, ll, typed_like(p, c, tup)));
    v->tup.f = f;
    v->tup.n = c->tuple.n;
    return v;
  }
  PV *v = pv_new(p, S_TENSOR, c); /* a constant is an atom: used in place */
  v->constant = c;
  return v;
}

/* The constant form of a fully static tensor / tuple value, or NULL. */
static Expr *as_const(Pe *p, PV *v) {
  if (v->kind == S_TENSOR) return v->constant;
  if (v->kind != S_TUPLE) return NULL;
  Expr **f = arena_alloc(p->m->arena, (v->tup.n ? v->tup.n : 1) * sizeof *f);
  for (uint32_t i = 0; i < v->tup.n; i++)
    if (!(f[i] = as_const(p, v->tup.f[i]))) return NULL;
  return build_tuple(p->m, f, v->tup.n, v->d->span);
}

static bool has_type_var(const Type *t) {
  if (!t) return false;
  switch (t->kind) {
  case TYPE_VAR: case TYPE_INCOMPLETE: case TYPE_UVAR: return true;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (has_type_var(t->tuple.fields[i])) return true;
    return false;
  default: return false;
  }
}

/* A type read from the program, at the current instantiation. */
static Type *inst_type(Pe *p, Type *t) {
  const Inst *in = p->inst;
  return in && in->n ? build_type_subst(p->m, t, in->ps, in->with, in->n) : t;
}

/* A fresh binder like v, its annotation instantiated. */
static Var *fresh_like(Pe *p, const Var *v) {
  Var *n = build_var_like(p->m, v);
  /* the checked type when none was written: the residual code may no longer
   * hold the use that let inference find it */
  n->annot = inst_type(p, v->annot ? v->annot : v->type);
  return n;
}

/* The instantiation of global g called at the (program) type `at`. */
static const Inst *inst_for(Pe *p, GlobalDef *g, Type *at) {
  Function *f = g->fn;
  if (!f->ntparams) return NULL;
  Inst *in = arena_alloc(p->m->arena, sizeof *in);
  in->ps = f->tparams;
  in->n = f->ntparams;
  in->with = arena_alloc(p->m->arena, f->ntparams * sizeof *in->with);
  memset(in->with, 0, f->ntparams * sizeof *in->with);
  build_type_match(f->type, inst_type(p, at), f->tparams, in->with, f->ntparams);
  for (uint32_t i = 0; i < in->n; i++)
    if (!in->with[i]) in->with[i] = type_new(p->m, TYPE_INCOMPLETE, (Span){0, 0});
  return in;
}

/* ----------------------------------------------------------- functions */


/* The function's body evaluated with its parameters bound to args. */
static PV *unfold(Pe *p, Closure *c, PV **args, uint32_t n, Type *at, LL *ll) {
  Function *f = c->g ? c->g->fn : c->lit;
  size_t mark = env_mark(p);
  const Inst *saved_inst = p->inst;
  p->inst = c->g ? inst_for(p, c->g, at) : c->inst;
  if (c->lit) {
    for (uint32_t i = 0; i < c->ncaps; i++) bind(p, c->caps[i], c->capv[i]);
    if (c->self) bind(p, c->self, c->selfv);
  }
  for (uint32_t i = 0; i < n && i < f->nparams; i++) bind(p, f->params[i], args[i]);
  Scoped memo = {0}, *saved = p->memo;
  p->memo = &memo;
  PV *r = pe(p, f->body, ll);
  p->memo = saved;
  p->inst = saved_inst;
  sc_free(&memo);
  env_undo(p, mark);
  return r;
}

/* Fuel components of a call: each argument's creation order and, for rank-0
 * integers, value; last, the callee's own creation order (beyond TVM: a
 * closure calling an older closure made by the same literal, as a gradient's
 * backward closures call the previous tape entry, counts as progress). */
#define FUEL_N(n) (2 * (n) + 1)
/* The value component: a static rank-0 integer, clamped at 0; beyond TVM,
 * also the first one inside a static tuple (a gradient passes an int32
 * counter as the pair (value, its gradient cell)). UINT64_MAX: none. */
static uint64_t fuel_value(const PV *v, int depth) {
  if (v->kind == S_TENSOR) {
    const ConstTensor *t = v->constant->constant;
    if (t->ndim == 0 && t->dtype.code == DT_INT && (t->dtype.bits == 32 || t->dtype.bits == 64)) {
      int64_t x = const_scalar_as_int(t);
      return x < 0 ? 0 : (uint64_t)x;
    }
  } else if (v->kind == S_TUPLE && depth < 4) {
    for (uint32_t i = 0; i < v->tup.n; i++) {
      uint64_t x = fuel_value(v->tup.f[i], depth + 1);
      if (x != UINT64_MAX) return x;
    }
  }
  return UINT64_MAX;
}

static uint64_t *fuel_of(Pe *p, PV *callee, PV **args, uint32_t n) {
  uint64_t *fu = arena_alloc(p->m->arena, FUEL_N(n) * sizeof *fu);
  fu[2 * n] = callee->stamp;
  for (uint32_t i = 0; i < n; i++) {
    fu[2 * i] = args[i]->stamp;
    fu[2 * i + 1] = fuel_value(args[i], 0);
  }
  return fu;
}

static const Frame *enclosing_frame(Pe *p, const void *fn) {
  for (const Frame *f = p->frames; f; f = f->up)
    if (f->fn == fn) return f;
  return NULL;
}

static bool may_unfold(Pe *p, const void *fn, PV **args, const uint64_t *fu, uint32_t n) {
  if (p->unfolds >= PE_MAX_UNFOLDS || p->over) return false;
  /* a recursive call with nothing static gains nothing from unrolling once more */
  bool any_static = false;
  for (uint32_t i = 0; i < n; i++) any_static |= args[i]->kind != S_NONE;
  if (!any_static && n > 0) {
    if (fn == p->residualising || enclosing_frame(p, fn)) return false;
  }
  const Frame *fr = enclosing_frame(p, fn);
  if (!fr) return true; /* the first unfolding of this function on this path */
  for (uint32_t k = 0; k < FUEL_N(n) && k < FUEL_N(fr->n); k++)
    if (fu[k] < fr->fuel[k]) return true;
  return false;
}

/* The fuel a new unfolding runs with: TVM's meet, the least value of each
 * component over the enclosing unfoldings of the same function, so each
 * component can only decrease finitely often (termination). */
static uint64_t *fuel_meet(Pe *p, const void *fn, uint64_t *fu, uint32_t n) {
  const Frame *fr = enclosing_frame(p, fn);
  if (!fr) return fu;
  for (uint32_t k = 0; k < FUEL_N(n) && k < FUEL_N(fr->n); k++)
    if (fr->fuel[k] < fu[k]) fu[k] = fr->fuel[k];
  return fu;
}

static PV *call_static(Pe *p, Expr *e, PV *fv, PV **args, uint32_t n, LL *ll) {
  Closure *c = fv->fn;
  const void *key = c->g ? (const void *)c->g : (const void *)c->lit;
  uint64_t *fu = fuel_of(p, fv, args, n);
  if (may_unfold(p, key, args, fu, n)) {
    fu = fuel_meet(p, key, fu, n);
    bool outermost = !p->frames;
    size_t ll_mark = ll->b.len, nstore = p->store.len;
    PV **store = outermost ? save_store(p) : NULL;
    if (outermost) p->attempt = 0;
    p->unfolds++;
    if (!(p->literal_depth && p->literal_in_call) && ++p->attempt > PE_ATTEMPT_UNFOLDS) p->over = true;
    Frame *fr = arena_alloc(p->m->arena, sizeof *fr);
    *fr = (Frame){key, fu, n, p->frames};
    p->frames = fr;
    PV *r = unfold(p, c, args, n, e->call.fn->type, ll);
    p->frames = fr->up;
    if (!outermost || !p->over) return r;
    /* too much unfolding below this call (exponential recursion, a long
     * static loop): keep the call as it was */
    p->over = false;
    ll->b.len = ll_mark;
    p->store.len = nstore;
    restore_store(p, store, nstore);
  }
  if (!fv->d && !residualise_at_home(p, fv)) residualise(p, fv, e->span, ll); /* a literal applied on the spot: here */
  Expr *call = build_call(p->m, fv->d, dyn_list(p, args, n, ll), n, e->span);
  forget_store(p);
  return pv_new(p, S_NONE, ll_push(p, ll, call));
}

/* A literal as a static closure (captures recorded); its residual form is
 * made by residualise(). */
static PV *closure_of(Pe *p, Expr *e) {
  Module *m = p->m;
  Function *f = e->fn;
  Closure *c = arena_alloc(m->arena, sizeof *c);
  memset(c, 0, sizeof *c);
  c->lit = f;
  c->inst = p->inst;
  int64_t sv;
  if (!p->self_noted) note_let_bound_literals(p);
  if (ptrmap_get(&p->self_of, f, &sv)) c->self = (Var *)(intptr_t)sv;
  ExprVarList fvs = {0};
  fv_cache_get(p->fv, f, NULL, &fvs);
  c->caps = arena_alloc(m->arena, (fvs.len ? fvs.len : 1) * sizeof *c->caps);
  c->capv = arena_alloc(m->arena, (fvs.len ? fvs.len : 1) * sizeof *c->capv);
  for (size_t i = 0; i < fvs.len; i++) {
    if (c->self && fvs.data[i] == c->self) {
      c->recursive = true;
      continue;
    }
    c->caps[c->ncaps] = fvs.data[i];
    PV *v = env_get(p, fvs.data[i]);
    c->capv[c->ncaps++] = v ? v : pv_new(p, S_NONE, build_var(m, fvs.data[i], e->span));
  }
  vec_free(fvs);
  PV *v = pv_new(p, S_FUNC, NULL);
  v->fn = c;
  c->selfv = v;
  return v;
}

/* The residual literal of closure v: its body evaluated with unknown
 * parameters and an unknown store (it runs later, when any cell may hold
 * anything), bound to a fresh %x_N that becomes v's atom (a recursive
 * literal refers to itself through it). Returns that binding. */
static Binding residual_literal(Pe *p, PV *v, Span sp) {
  Module *m = p->m;
  Closure *c = v->fn;
  Function *f = c->lit;
  Var *x = build_fresh_var(m, "x", NULL, sp);
  v->d = build_var(m, x, sp);
  const Inst *saved_inst = p->inst;
  p->inst = c->inst;
  size_t mark = env_mark(p);
  for (uint32_t i = 0; i < c->ncaps; i++) bind(p, c->caps[i], c->capv[i]);
  if (c->self) bind(p, c->self, v);
  Var **ps = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof *ps);
  for (uint32_t i = 0; i < f->nparams; i++) {
    ps[i] = fresh_like(p, f->params[i]);
    bind(p, f->params[i], pv_new(p, S_NONE, build_var(m, ps[i], sp)));
  }
  size_t nstore = p->store.len;
  PV **saved_store = save_store(p);
  forget_store(p);
  Scoped memo = {0}, *saved = p->memo;
  p->memo = &memo;
  const void *saved_res = p->residualising;
  p->residualising = f;
  LL body;
  ll_open(p, &body);
  bool saved_in_call = p->literal_in_call;
  if (!p->literal_depth++) p->literal_in_call = p->frames != NULL;
  PV *r = pe(p, f->body, &body);
  Expr *rd = atom(p, r, &body);
  p->literal_in_call = saved_in_call;
  p->literal_depth--;
  p->residualising = saved_res;
  p->memo = saved;
  sc_free(&memo);
  restore_store(p, saved_store, nstore);
  env_undo(p, mark);
  Function *nf = build_function(m, ps, f->nparams, inst_type(p, f->ret_annot), ll_wrap(p, &body, rd), f->attrs, sp);
  nf->tparams = f->tparams;
  nf->ntparams = f->ntparams;
  p->inst = saved_inst;
  p->droppable = true;
  return (Binding){x, {build_fn(m, nf, sp)}};
}

/* The residual literal of closure v, bound at the end of ll. */
static void residualise(Pe *p, PV *v, Span sp, LL *ll) {
  Binding b = residual_literal(p, v, sp);
  vec_push(ll->b, b);
}

/* The residual literal of a closure `literal` made, made now as it would
 * have been made then (the state its Home kept), in the place kept for it.
 * False when that place is gone (the closure should then be unreachable). */
static bool residualise_at_home(Pe *p, PV *v) {
  const Home *h = &v->fn->home;
  if (!h->ll || !ll_is_open(p, h->ll, h->open, h->serial) || h->slot >= h->ll->b.len || h->ll->b.data[h->slot].v || h->ll->b.data[h->slot].lazy != v)
    return false;
  const Frame *frames = p->frames;
  uint32_t depth = p->literal_depth;
  bool in_call = p->literal_in_call, over = p->over;
  uint64_t attempt = p->attempt;
  p->frames = h->frames;
  p->literal_depth = h->literal_depth;
  p->literal_in_call = h->literal_in_call;
  p->over = h->over;
  Binding b = residual_literal(p, v, h->span);
  p->frames = frames;
  p->literal_depth = depth;
  p->literal_in_call = in_call;
  p->over = over;
  p->attempt = attempt;
  h->ll->b.data[h->slot] = b; /* the list may have grown meanwhile: indexed afresh */
  return true;
}

/* v's residual atom, made now if v is a closure whose residual literal is
 * not made yet (at its home, else at the end of ll). */
static inline Expr *atom(Pe *p, PV *v, LL *ll) {
  if (!v->d && v->kind == S_FUNC && !residualise_at_home(p, v)) residualise(p, v, v->fn->lit->span, ll);
  return v->d;
}

/* A literal used as a value: it may escape, so it gets a place for its
 * residual literal here; the literal is made there when first needed.
 * TVM makes it now, but most literals, continuations above all, are only
 * called (and unfolded), and making one evaluates the residual bodies of
 * the literals in it once more: 2^depth evaluations for nested
 * continuations (ToCPS,UnCPS output, fuzz session 15). One nothing needs
 * went anyway, an unused let, in drop_dead_cells; a recursive one uses
 * itself and stays there, as in TVM's output: it is made now. */
static PV *literal(Pe *p, Expr *e, LL *ll) {
  if (fn_has_attr(e->fn, "Primitive")) return pv_new(p, S_NONE, ll_push(p, ll, e));
  PV *v = closure_of(p, e);
  if (v->fn->recursive) {
    residualise(p, v, e->span, ll);
    return v;
  }
  v->fn->home = (Home){ll, ll->open, ll->serial, ll->b.len, p->frames, p->literal_depth, p->literal_in_call, p->over, e->span};
  Binding keep = {NULL, {.lazy = v}};
  vec_push(ll->b, keep);
  ll->kept++;
  return v;
}

/* ------------------------------------------------------------- matching */

typedef enum { M_NO, M_YES, M_UNKNOWN } MatchResult;

/* Binds the pattern's variables when the static value surely matches. */
static MatchResult match_static(Pe *p, Pattern *pat, PV *v) {
  switch (pat->kind) {
  case PAT_WILDCARD: return M_YES;
  case PAT_VAR: bind(p, pat->var, v); return M_YES;
  case PAT_CTOR:
    if (v->kind != S_ADT) return M_UNKNOWN;
    if (v->adt.c != pat->ctor.ctor) return M_NO;
    for (uint32_t i = 0; i < pat->ctor.nargs && i < v->adt.n; i++) {
      MatchResult r = match_static(p, pat->ctor.args[i], v->adt.f[i]);
      if (r != M_YES) return r;
    }
    return M_YES;
  case PAT_TUPLE:
    if (v->kind != S_TUPLE) return M_UNKNOWN;
    for (uint32_t i = 0; i < pat->tuple.n && i < v->tup.n; i++) {
      MatchResult r = match_static(p, pat->tuple.fields[i], v->tup.f[i]);
      if (r != M_YES) return r;
    }
    return M_YES;
  }
  return M_UNKNOWN;
}

/* A fresh copy of a pattern whose variables become unknown values. */
static Pattern *fresh_pattern(Pe *p, Pattern *pat) {
  Pattern *q = pattern_new(p->m, pat->kind, pat->span);
  switch (pat->kind) {
  case PAT_VAR:
    q->var = fresh_like(p, pat->var);
    bind(p, pat->var, pv_new(p, S_NONE, build_var(p->m, q->var, pat->span)));
    break;
  case PAT_CTOR:
    q->ctor = pat->ctor;
    q->ctor.args = arena_alloc(p->m->arena, (pat->ctor.nargs ? pat->ctor.nargs : 1) * sizeof(Pattern *));
    for (uint32_t i = 0; i < pat->ctor.nargs; i++) q->ctor.args[i] = fresh_pattern(p, pat->ctor.args[i]);
    break;
  case PAT_TUPLE:
    q->tuple.n = pat->tuple.n;
    q->tuple.fields = arena_alloc(p->m->arena, (pat->tuple.n ? pat->tuple.n : 1) * sizeof(Pattern *));
    for (uint32_t i = 0; i < pat->tuple.n; i++) q->tuple.fields[i] = fresh_pattern(p, pat->tuple.fields[i]);
    break;
  default: break;
  }
  return q;
}

/* A residual branch: e evaluated in its own let list and memo scope, from the store `st`. */
static Expr *branch(Pe *p, Expr *e, PV **st, size_t nst) {
  restore_store(p, st, nst);
  size_t mm = sc_mark(p->memo);
  LL ll;
  ll_open(p, &ll);
  PV *r = pe(p, e, &ll);
  Expr *rd = atom(p, r, &ll);
  sc_undo(p->memo, mm);
  return ll_wrap(p, &ll, rd);
}

static PV *pe_match(Pe *p, Expr *e, LL *ll) {
  PV *s = pe(p, e->match.scrut, ll);
  for (uint32_t i = 0; i < e->match.nclauses; i++) {
    size_t mark = env_mark(p);
    MatchResult r = match_static(p, e->match.clauses[i].pattern, s);
    if (r == M_YES) {
      PV *v = pe(p, e->match.clauses[i].body, ll);
      env_undo(p, mark);
      return v;
    }
    env_undo(p, mark);
    if (r == M_UNKNOWN) break;
  }
  size_t nst = p->store.len;
  PV **st = save_store(p);
  Clause *cl = arena_alloc(p->m->arena, (e->match.nclauses ? e->match.nclauses : 1) * sizeof *cl);
  for (uint32_t i = 0; i < e->match.nclauses; i++) {
    size_t mark = env_mark(p);
    cl[i] = e->match.clauses[i];
    cl[i].pattern = fresh_pattern(p, e->match.clauses[i].pattern);
    cl[i].body = branch(p, e->match.clauses[i].body, st, nst);
    env_undo(p, mark);
  }
  forget_store(p);
  Expr *m = build_match(p->m, atom(p, s, ll), cl, e->match.nclauses, e->match.partial, e->span);
  return pv_new(p, S_NONE, ll_push(p, ll, m));
}

static PV *pe_if(Pe *p, Expr *e, LL *ll) {
  PV *c = pe(p, e->if_.cond, ll);
  if (c->kind == S_TENSOR && c->constant->constant->ndim == 0)
    return pe(p, const_scalar_as_int(c->constant->constant) ? e->if_.then_ : e->if_.else_, ll);
  size_t nst = p->store.len;
  PV **st = save_store(p);
  Expr *t = branch(p, e->if_.then_, st, nst);
  Expr *f = branch(p, e->if_.else_, st, nst);
  forget_store(p);
  return pv_new(p, S_NONE, ll_push(p, ll, build_if(p->m, atom(p, c, ll), t, f, e->span)));
}

/* ---------------------------------------------------------------- calls */

static PV **pe_into(Pe *p, Expr **xs, uint32_t n, PV **out, LL *ll) {
  for (uint32_t i = 0; i < n; i++) out[i] = pe(p, xs[i], ll);
  return out;
}

static PV **pe_list(Pe *p, Expr **xs, uint32_t n, LL *ll) {
  return pe_into(p, xs, n, arena_alloc(p->m->arena, (n ? n : 1) * sizeof(PV *)), ll);
}

static PV *pe_op_call(Pe *p, Expr *e, PV **args, LL *ll) {
  Module *m = p->m;
  uint32_t n = e->call.nargs;
  int32_t id = e->call.fn->op.id;
  bool all_static = n > 0 && !op_is_stateful(id) && !op_is_noncomputational(id);
  for (uint32_t i = 0; i < n && all_static; i++) all_static = args[i]->kind == S_TENSOR || args[i]->kind == S_TUPLE;
  Expr **cargs = all_static ? arena_alloc(m->arena, n * sizeof *cargs) : NULL;
  for (uint32_t i = 0; i < n && all_static; i++) all_static = (cargs[i] = as_const(p, args[i])) != NULL;
  if (all_static) {
    Expr *call = build_copy(m, e);
    call->call.fn = build_copy(m, e->call.fn);
    call->call.args = cargs;
    Type *t = inst_type(p, e->type);
    call->type = has_type_var(t) ? NULL : t;
    Expr *c = fold_eval_call(m, call);
    if (c) return static_const(p, c, ll);
  }
  /* a call typed as the program's keeps the program's callee node, typed
   * for it (infer types a shared operator callee per call anyway); one
   * whose type is left to inference gets its own */
  Expr *call = build_copy(m, e);
  call->call.args = dyn_list(p, args, n, ll);
  if (!typed_like(p, e, call)->type) call->call.fn = build_copy(m, e->call.fn);
  return pv_new(p, S_NONE, ll_push(p, ll, call));
}

static PV *pe_call(Pe *p, Expr *e, LL *ll) {
  Module *m = p->m;
  Expr *f = e->call.fn;
  uint32_t n = e->call.nargs;
  if (f->kind == EXPR_OP) { /* the argument values are not kept: no arena array for the usual few */
    PV *few[8];
    PV **args = n <= 8 ? few : arena_alloc(m->arena, n * sizeof *args);
    return pe_op_call(p, e, pe_into(p, e->call.args, n, args, ll), ll);
  }
  if (f->kind == EXPR_CTOR) {
    PV **args = pe_list(p, e->call.args, n, ll);
    Expr *call = build_call(m, build_ctor(m, f->ctor.ctor, f->span), dyn_list(p, args, n, ll), n, e->span);
    PV *v = pv_new(p, S_ADT, ll_push(p, ll, call));
    v->adt.c = f->ctor.ctor;
    v->adt.f = args;
    v->adt.n = n;
    return v;
  }
  /* a literal applied on the spot cannot escape: no residual form unless the call stays */
  PV *fv = f->kind == EXPR_FN && !fn_has_attr(f->fn, "Primitive") && !memo_get(p, f) ? closure_of(p, f) : pe(p, f, ll);
  if (fv->kind == S_NONE && (fv->d->kind == EXPR_OP || fv->d->kind == EXPR_CTOR)) {
    /* an operator or constructor that arrived as a value: call it directly */
    Expr *direct = build_copy(m, e);
    direct->call.fn = fv->d;
    return pe_call(p, direct, ll);
  }
  PV **args = pe_list(p, e->call.args, n, ll);
  if (fv->kind == S_FUNC) return call_static(p, e, fv, args, n, ll);
  forget_store(p);
  return pv_new(p, S_NONE, ll_push(p, ll, build_call(m, fv->d, dyn_list(p, args, n, ll), n, e->span)));
}

/* ------------------------------------------------------------ expressions */

static PV *pe_kind(Pe *p, Expr *e, LL *ll) {
  Module *m = p->m;
  switch (e->kind) {
  case EXPR_CONST: return static_const(p, e, ll);
  case EXPR_VAR: {
    PV *v = env_get(p, e->var.var);
    return v ? v : pv_new(p, S_NONE, e);
  }
  case EXPR_GLOBAL: {
    if (!e->global.def || !e->global.def->fn) return pv_new(p, S_NONE, e);
    PV *v = pv_new(p, S_FUNC, build_copy(m, e)); /* a global node is typed per use */
    v->fn = arena_alloc(m->arena, sizeof *v->fn);
    memset(v->fn, 0, sizeof *v->fn);
    v->fn->g = e->global.def;
    return v;
  }
  case EXPR_OP:
  case EXPR_CTOR: return pv_new(p, S_NONE, build_copy(m, e));
  case EXPR_FN: return literal(p, e, ll);
  case EXPR_CALL: return pe_call(p, e, ll);
  case EXPR_TUPLE: {
    PV **f = pe_list(p, e->tuple.fields, e->tuple.n, ll);
    Expr *tup = build_tuple(m, dyn_list(p, f, e->tuple.n, ll), e->tuple.n, e->span);
    PV *v = pv_new(p, S_TUPLE, ll_push(p, ll, typed_like(p, e, tup)));
    v->tup.f = f;
    v->tup.n = e->tuple.n;
    return v;
  }
  case EXPR_PROJ: {
    PV *t = pe(p, e->proj.tuple, ll);
    if (t->kind == S_TUPLE && e->proj.index < t->tup.n) return t->tup.f[e->proj.index];
    return pv_new(p, S_NONE, ll_push(p, ll, typed_like(p, e, build_proj(m, atom(p, t, ll), e->proj.index, e->span))));
  }
  case EXPR_LET: {
    /* a chain of lets: bind each, then the body; unbind after */
    size_t mark = env_mark(p);
    Expr *cur = e;
    while (cur->kind == EXPR_LET && !memo_get(p, cur)) {
      bind(p, cur->let.var, pe(p, cur->let.value, ll));
      cur = cur->let.body;
    }
    PV *r = pe(p, cur, ll);
    env_undo(p, mark);
    return r;
  }
  case EXPR_IF: return pe_if(p, e, ll);
  case EXPR_MATCH: return pe_match(p, e, ll);
  case EXPR_REF_NEW: {
    PV *init = pe(p, e->ref.arg, ll);
    PV *v = pv_new(p, S_REF, ll_push(p, ll, build_ref_new(m, atom(p, init, ll), e->span)));
    v->cell = (uint32_t)p->store.len;
    vec_push(p->store, init);
    return v;
  }
  case EXPR_REF_READ: {
    PV *r = pe(p, e->ref.arg, ll);
    if (r->kind == S_REF && p->store.data[r->cell]) return p->store.data[r->cell];
    return pv_new(p, S_NONE, ll_push(p, ll, build_ref_read(m, atom(p, r, ll), e->span)));
  }
  case EXPR_REF_WRITE: {
    PV *r = pe(p, e->ref_write.ref, ll);
    PV *v = pe(p, e->ref_write.value, ll);
    if (r->kind == S_REF) p->store.data[r->cell] = v;
    else forget_store(p);
    Expr *rd = atom(p, r, ll), *vd = atom(p, v, ll);
    PV *u = pv_new(p, S_TUPLE, ll_push(p, ll, build_ref_write(m, rd, vd, e->span)));
    return u;
  }
  default:
    return pv_new(p, S_NONE, e);
  }
}

static PV *pe(Pe *p, Expr *e, LL *ll) {
  bool shared = shared_node(p, e);
  PV *v = shared ? sc_get(p->memo, e) : NULL;
  if (v) return v;
  if (p->failed) return pv_new(p, S_NONE, e);
  if (stack_exhausted()) {
    diag_error(p->d, e->span, "expression nested too deeply");
    p->failed = true;
    return pv_new(p, S_NONE, e);
  }
  v = pe_kind(p, e, ll);
  if (shared) sc_put(p->memo, e, v);
  return v;
}

/* ----------------------------------------------------------------- driver */

/* One scan of every global's body: the parent count of each node. */
static void scan_program(Pe *p) {
  Module *m = p->m;
  Expr **roots = mem_malloc((m->ndefs ? m->ndefs : 1) * sizeof *roots);
  uint32_t nroots = 0;
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn && m->defs[i]->fn->body) roots[nroots++] = m->defs[i]->fn->body;
  dag_scan_roots(&p->nodes, roots, nroots, true);
  mem_free(roots);
}

/* The let variable each let-bound literal is bound to (the last such let in
 * post order), from the scan's node list: made when the first literal is
 * met, so programs without literals skip the loop. */
static void note_let_bound_literals(Pe *p) {
  p->self_noted = true;
  for (uint32_t k = 0; k < p->nodes.n; k++) {
    Expr *e = dag_node(&p->nodes, k);
    if (e->kind == EXPR_LET && e->let.value->kind == EXPR_FN)
      ptrmap_put(&p->self_of, e->let.value->fn, (int64_t)(intptr_t)e->let.var);
  }
}

/* The residual form of a global function: its body with unknown parameters. */
static Expr *residual_body(Pe *p, GlobalDef *g) {
  Function *f = g->fn;
  p->residualising = g;
  Scoped memo = {0};
  p->memo = &memo;
  size_t mark = env_mark(p);
  for (uint32_t i = 0; i < f->nparams; i++)
    bind(p, f->params[i], pv_new(p, S_NONE, typed_use(p, f->params[i], f->span)));
  forget_store(p);
  LL ll;
  ll_open(p, &ll);
  PV *r = pe(p, f->body, &ll);
  Expr *rd = atom(p, r, &ll);
  env_undo(p, mark);
  sc_free(&memo);
  p->memo = NULL;
  return ll_wrap(p, &ll, rd);
}

/* ------------------------------------------------------- dead cells */

/* A reference the residual code only ever writes to (every read of it was
 * answered statically, and it never escapes: its only uses are as the target
 * of ref_write) can never be observed: its `ref(...)` and every write to it
 * go. Beyond TVM, whose DeadCodeElimination keeps all writes (its tests run
 * it with ignore_impurity, which drops them even when they are read); this
 * removes only writes nothing can read, so the result stays exact. Values
 * must be atoms (the residual code is in A-normal form), so nothing with an
 * effect of its own is dropped. */
enum { CELL_USED = 1, CELL_OTHER = 2, CELL_CANDIDATE = 4, CELL_KEEP = 8 };

/* The flags of a round, by Var.id (ids are dense in a module: no hash map
 * on every variable use). owner[id] is the variable they belong to; a
 * second variable with the same id (a copy that kept it) makes both
 * unremovable. Allocated once per pass, cleared through `touched`. */
typedef struct Cells {
  Var **owner;
  uint8_t *flags;
  uint32_t n;
  uint8_t junk;           /* the flags of a variable outside the arrays */
  VEC(uint32_t) touched;  /* ids with flags set this round */
  VEC(Expr *) sites;      /* lets and writes: what a round may drop */
} Cells;

enum { CELL_POISON = CELL_USED | CELL_OTHER | CELL_KEEP };

static uint8_t *cell_flags(Cells *c, Var *v) {
  uint32_t id = v->id;
  if (id >= c->n) return c->junk = CELL_POISON, &c->junk;
  if (!c->owner[id]) {
    c->owner[id] = v;
    vec_push(c->touched, id);
  } else if (c->owner[id] != v) {
    c->flags[id] = CELL_POISON;
    return c->junk = CELL_POISON, &c->junk;
  }
  return &c->flags[id];
}

static uint8_t cell_get(const Cells *c, const Var *v) {
  if (v->id >= c->n || (c->owner[v->id] && c->owner[v->id] != v)) return CELL_POISON;
  return c->flags[v->id]; /* 0 when nothing set any */
}

static void cells_clear(Cells *c) {
  for (size_t i = 0; i < c->touched.len; i++) {
    c->owner[c->touched.data[i]] = NULL;
    c->flags[c->touched.data[i]] = 0;
  }
  c->touched.len = 0;
  c->sites.len = 0;
}

static bool is_atom_expr(const Expr *e) {
  return e->kind == EXPR_VAR || e->kind == EXPR_CONST || e->kind == EXPR_GLOBAL || e->kind == EXPR_OP ||
         e->kind == EXPR_CTOR || (e->kind == EXPR_TUPLE && e->tuple.n == 0);
}

static void cell_edge(Cells *c, const Expr *child, bool write_target) {
  if (child->kind != EXPR_VAR) return;
  *cell_flags(c, child->var.var) |= CELL_USED | (write_target ? 0 : CELL_OTHER);
}

static void cell_scan(Expr *e, void *ud) {
  Cells *c = ud;
  switch (e->kind) {
  case EXPR_CALL:
    cell_edge(c, e->call.fn, false);
    for (uint32_t i = 0; i < e->call.nargs; i++) cell_edge(c, e->call.args[i], false);
    break;
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) cell_edge(c, e->tuple.fields[i], false);
    break;
  case EXPR_PROJ: cell_edge(c, e->proj.tuple, false); break;
  case EXPR_LET:
    cell_edge(c, e->let.value, false);
    cell_edge(c, e->let.body, false);
    if (e->let.value->kind == EXPR_REF_NEW)
      *cell_flags(c, e->let.var) |= CELL_CANDIDATE | (is_atom_expr(e->let.value->ref.arg) ? 0 : CELL_KEEP);
    vec_push(c->sites, e);
    break;
  case EXPR_IF:
    cell_edge(c, e->if_.cond, false);
    cell_edge(c, e->if_.then_, false);
    cell_edge(c, e->if_.else_, false);
    break;
  case EXPR_MATCH:
    cell_edge(c, e->match.scrut, false);
    for (uint32_t i = 0; i < e->match.nclauses; i++) cell_edge(c, e->match.clauses[i].body, false);
    break;
  case EXPR_REF_NEW: case EXPR_REF_READ: cell_edge(c, e->ref.arg, false); break;
  case EXPR_REF_WRITE:
    cell_edge(c, e->ref_write.ref, true);
    cell_edge(c, e->ref_write.value, false);
    if (e->ref_write.ref->kind == EXPR_VAR && !is_atom_expr(e->ref_write.value))
      *cell_flags(c, e->ref_write.ref->var.var) |= CELL_KEEP;
    vec_push(c->sites, e);
    break;
  case EXPR_FN: cell_edge(c, e->fn->body, false); break;
  default: break;
  }
}

static bool dead_var(const Cells *c, const Var *v) {
  uint8_t f = cell_get(c, v);
  return (f & CELL_CANDIDATE) && !(f & (CELL_OTHER | CELL_KEEP));
}

static bool dead_cell(const Cells *c, const Expr *ref) { return ref->kind == EXPR_VAR && dead_var(c, ref->var.var); }

/* A value whose evaluation has no effect and that holds cells only as
 * data: an atom, a function literal (a residual closure, e.g. a gradient's
 * backward step nobody calls), or a tuple / projection / constructor call
 * of atoms. */
static bool is_plain_value(const Expr *e) {
  if (is_atom_expr(e) || e->kind == EXPR_FN) return true;
  if (e->kind == EXPR_PROJ) return is_atom_expr(e->proj.tuple);
  if (e->kind == EXPR_TUPLE) {
    for (uint32_t i = 0; i < e->tuple.n; i++)
      if (!is_atom_expr(e->tuple.fields[i])) return false;
    return true;
  }
  if (e->kind == EXPR_CALL && e->call.fn->kind == EXPR_CTOR) {
    for (uint32_t i = 0; i < e->call.nargs; i++)
      if (!is_atom_expr(e->call.args[i])) return false;
    return true;
  }
  return false;
}

/* Whether the round drops the let or write `old` (a write becomes `()`, a
 * let its body). */
static bool cell_drops(const Cells *c, const Expr *old) {
  if (old->kind == EXPR_REF_WRITE) return dead_cell(c, old->ref_write.ref);
  if (old->kind != EXPR_LET) return false;
  Expr *v = old->let.value;
  if (v->kind == EXPR_REF_NEW && dead_var(c, old->let.var)) return true; /* only writes used it */
  if (cell_get(c, old->let.var) & CELL_USED) return false;
  /* an unused write to a dead cell; an unused plain value (it may hold a
   * cell, which may then be dead in the next round; DeadCodeElimination
   * would drop it anyway) */
  return v->kind == EXPR_REF_WRITE ? dead_cell(c, v->ref_write.ref) : is_plain_value(v);
}

static Expr *cells_post(Rewriter *rw, Expr *old, Expr *e) {
  if (!cell_drops(rw->ud, old)) return e;
  if (e->kind == EXPR_LET) return e->let.body;
  return build_typed(build_tuple(rw->m, NULL, 0, e->span), old->type); /* a write's type is () */
}

/* Rounds of scan + rewrite until nothing changes (a cell kept alive only by
 * a tuple nobody uses dies in the next round). */
static bool cells_any_drop(const Cells *c) {
  for (size_t i = 0; i < c->sites.len; i++)
    if (cell_drops(c, c->sites.data[i])) return true;
  return false;
}

/* Rounds of scan + rewrite until nothing changes (a cell kept alive only by
 * a tuple nobody uses dies in the next round); no rewrite when the scan
 * finds nothing to drop, and no scan at all of a body whose lets all bind
 * calls (Pe.droppable: only a let of a cell, a write or a plain value can
 * go, and every let of the residual code was built by ll_push or
 * residualise, or sits in a literal they bound). Rebuilt nodes keep their
 * types (a let that goes has its body's type). */
static Expr *drop_dead_cells(Pe *p, Cells *c, Expr *body) {
  if (!c->flags) {
    c->n = p->m->next_id;
    c->owner = mem_calloc(c->n ? c->n : 1, sizeof *c->owner);
    c->flags = mem_calloc(c->n ? c->n : 1, 1);
  }
  for (int round = 0; round < 16 && !p->failed; round++) {
    walk_post_order(body, true, cell_scan, c);
    Expr *nb = body;
    if (cells_any_drop(c)) {
      Rewriter rw;
      rw_init(&rw, p->m, p->d);
      rw.post = cells_post;
      rw.ud = c;
      rw.mark_memo = true; /* cells_post reads tables keyed by Var only */
      rw.keep_types = true;
      nb = rw_expr(&rw, body);
      if (rw.failed) p->failed = true;
      rw_fini(&rw);
    }
    cells_clear(c);
    if (nb == body) break;
    body = nb;
  }
  return body;
}

static void cells_free(Cells *c) {
  mem_free(c->owner);
  mem_free(c->flags);
  vec_free(c->touched);
  vec_free(c->sites);
}

/* Whether the residual body e type-checks, reporting nothing. Values
 * computed now can make it more static than the program was (arange of
 * computed bounds: (4) where the program had (?), then an add with a (3)
 * tensor) or feed a relation that reads them (arange's empty range): the
 * program fails there at run time, the residual would fail the re-type (an
 * internal error). Such a global keeps its original body. */
static bool types_quietly(Module *m, Expr *e) {
  Diag quiet;
  diag_init_silent(&quiet, m->src);
  return infer_untyped(m, e, &quiet);
}

/* Whether a residual body's type t can meet the function's return
 * annotation: no known extent, rank or dtype of a tensor (in tuples too)
 * contradicts it. A value computed now can be (3) where the program's (?)
 * met an annotated (0) (fuzz session 15: UnCPS's @main -> Tensor[(0)] over
 * arange of a computed step): the program is only checked at run time there,
 * the residual would fail the re-type. */
static bool fits_annotation(const Type *t, const Type *annot) {
  t = type_solved(t);
  annot = type_solved(annot);
  if (!t || !annot || t->kind != annot->kind) return true; /* left to the re-typing */
  if (t->kind == TYPE_TUPLE) {
    if (t->tuple.n != annot->tuple.n) return false;
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (!fits_annotation(t->tuple.fields[i], annot->tuple.fields[i])) return false;
    return true;
  }
  if (t->kind != TYPE_TENSOR) return true;
  if (t->tensor.ndim != annot->tensor.ndim || !dtype_eq(t->tensor.dtype, annot->tensor.dtype)) return false;
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    const Dim *a = &t->tensor.dims[i], *b = &annot->tensor.dims[i];
    if (a->kind == DIM_INT && b->kind == DIM_INT && a->value != b->value) return false;
  }
  return true;
}

bool pass_PARTIAL_EVALUATE(PassCtx *c) {
  Module *m = c->m;
  /* one scan per function says what the two checks below can skip: most
   * functions have no effect at all (the dependency graph of the first and
   * the node homes of the second cost more than the evaluation itself) */
  uint32_t ndefs = m->ndefs;
  DagEffects *fx = mem_calloc(ndefs ? ndefs : 1, sizeof *fx);
  bool *effectful = mem_calloc(ndefs ? ndefs : 1, sizeof *effectful);
  for (uint32_t i = 0; i < ndefs; i++)
    if (m->defs[i]->fn && m->defs[i]->fn->body) {
      fx[i] = dag_effects(m->defs[i]->fn->body);
      effectful[i] = fx[i].own;
    }
  /* a graph-shared node with an effect used in several scopes is bound once
   * first, in the scope ANF gives it, so it is not evaluated at every use */
  bool bound = normal_form_bind_lifted_effects(c, effectful);
  mem_free(effectful);
  if (!bound) {
    mem_free(fx);
    return false;
  }
  /* what that leaves: a literal using a node of an enclosing function with a
   * direct effect (a `ref(1)` also bound by a let, fuzz seed 5 input 4) would
   * be run on each call of the literal: the module is left as it was */
  for (uint32_t i = 0; i < ndefs && i < m->ndefs; i++)
    if (fx[i].literal && fx[i].direct && dag_literal_captures_effect(m->defs[i]->fn)) {
      diag_warning(c->d, m->defs[i]->fn->span, "PartialEvaluate left the module as it was: in @%s a function literal "
                                               "uses a node with an effect that the enclosing code shares",
                   m->defs[i]->name);
      mem_free(fx);
      return true;
    }
  mem_free(fx);
  Pe p = {0};
  p.m = m;
  p.d = c->d;
  p.fv = fv_cache_new(m);
  env_reserve(&p, m->next_id);
  scan_program(&p);
  /* all residual bodies from the original ones, then swap them in */
  uint32_t n = m->ndefs;
  Expr **bodies = arena_alloc(m->arena, (n ? n : 1) * sizeof *bodies);
  bool *droppable = mem_calloc(n ? n : 1, sizeof *droppable);
  for (uint32_t i = 0; i < n && !p.failed; i++) {
    Function *f = m->defs[i]->fn;
    p.droppable = false;
    bodies[i] = f && !fn_has_attr(f, "Primitive") && !fn_skipped_by_function_passes(f) ? residual_body(&p, m->defs[i]) : NULL;
    droppable[i] = p.droppable;
  }
  Cells cells = {0};
  for (uint32_t i = 0; i < n && !p.failed; i++)
    if (bodies[i] && droppable[i]) bodies[i] = drop_dead_cells(&p, &cells, bodies[i]);
  cells_free(&cells);
  mem_free(droppable);
  for (uint32_t i = 0; i < n && !p.failed; i++)
    if (bodies[i]) {
      Function *f = m->defs[i]->fn;
      Expr *orig = f->body;
      f->body = bodies[i];
      if (!types_quietly(m, f->body) || (f->ret_annot && !fits_annotation(f->body->type, f->ret_annot))) {
        f->body = orig;
        diag_warning(c->d, f->span, "PartialEvaluate left @%s as it was: its residual form, with the values "
                                    "computed now, does not type-check (its shapes are checked when it runs)",
                     m->defs[i]->name);
      }
    }
  mem_free(p.env.val);
  vec_free(p.env.undo);
  vec_free(p.store);
  vec_free(p.open);
  ptrmap_free(&p.self_of);
  dag_free(&p.nodes);
  fv_cache_free(p.fv);
  return !p.failed;
}
