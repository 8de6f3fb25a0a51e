/* transform/gradient.c — the Gradient pass: TVM's higher-order reverse mode (spec/gradient.md
 * §1.2-1.4, §1.6-1.7), the checks both modes share, and the pass entry points.
 *
 * Every tensor value v of the source becomes a pair (v, ref(gradient of v));
 * tuples, functions, refs and ADTs are translated structurally (a function
 * gains a trailing parameter: the tape, a `ref(fn () -> ())` holding the
 * backpropagator built so far). Each operator call, when it runs, pushes a
 * closure onto the tape that reads its result's gradient cell, applies the
 * operator's rule from the registry (ops/gradients/grad.h) and adds the
 * input adjoints into the inputs' cells, then calls the previous closure.
 * The top level seeds the first leaf of the result with ones_like and runs
 * the tape once. Output is A-normal form: every intermediate is let-bound.
 *
 * Invariants and trade-offs:
 *  - Translation is memoised by node pointer, so a DAG-shared node is
 *    translated once and its one gradient cell receives every use's
 *    contribution (§1.6; TVM instead rejects graph sharing). A memo entry is
 *    only valid while the scope (function body, branch, clause) that bound
 *    it is open; a node first met inside a branch is translated again when
 *    it is met outside (the branches are exclusive, so values stay right; a
 *    node with an effect is let-bound before the branch first,
 *    bind_shared_effects).
 *  - Rules receive the let-bound forward result (no recomputation, §1.4).
 *  - Calls whose result or inputs hold no float tensor push no closure and
 *    need no rule; integer and bool parameters get zero gradients (§1.2).
 *  - Constants and captured variables (constants of the differentiated
 *    function) are passed to operator calls as they are: no cell, and their
 *    adjoints are not computed (a training step's data gets no gradient).
 *  - An ADT whose constructors hold tensors or functions gets a translated
 *    copy `T_grad` with constructors `C_grad` over pair types (§1.7).
 *  - A polymorphic function literal stays polymorphic: each call instantiates
 *    its type parameters with translated types (a tensor: the pair).
 *  - annotation.checkpoint(e) recomputes e in the backward pass (§1.8), the
 *    one construct the transform treats specially besides calls of rules.
 *  - Let chains are walked with a loop; other nesting recurses with a
 *    stack_exhausted() guard.
 *  - Every node is built typed where its type follows from its children's
 *    (the ty_* builders, sema/typeof.h; rule outputs typed with typeof_tree
 *    once the rule returns; the forward call gets the source call's type):
 *    the runner's incremental re-typing then keeps the output instead of
 *    inferring all of it (~50 nodes per source operator call). Polymorphic code,
 *    constructors and match are left untyped: inference fills them in. The
 *    types are shared objects (pairs, tapes, backpropagators: a few for the
 *    whole output), and the rules' operator calls go through a per-pass
 *    GradOpCache (attribute text parsed once per operator and text) and
 *    sema/typeof.h typeof_op_call: typed as built, the calls of one operator
 *    at one type sharing one callee node (TVM has one Op object per operator).
 */
#include "transform/gradient.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/build.h"
#include "ir/equal.h"
#include "ir/print.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"
#include "ops/gradients/grad.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "sema/typeof.h"
#include "transform/normal_form.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

/* ================================================================ shared checks */

static const char *type_text(Module *m, const Type *t) { return t ? type_to_string(m->arena, t) : "_"; }

bool grad_type_has_float(const Type *t) {
  t = type_solved(t);
  if (!t) return false;
  if (t->kind == TYPE_TENSOR) return dtype_is_float(t->tensor.dtype);
  if (t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (grad_type_has_float(t->tuple.fields[i])) return true;
  }
  return false;
}

bool grad_call_needs_rule(const Expr *call) {
  if (!grad_type_has_float(call->type)) return false;
  for (uint32_t i = 0; i < call->call.nargs; i++)
    if (grad_type_has_float(call->call.args[i]->type)) return true;
  return false;
}

typedef struct MissingUse {
  Span sp;
  const char *op;
} MissingUse;

typedef struct RuleScan {
  VEC(MissingUse) missing;
  VEC(Function *) todo;
  PtrMap seen; /* GlobalDef* already queued */
  bool with_globals;
  bool in_root;      /* scanning f's own body (todo[0]) */
  bool root_has_fn;  /* f's body holds a function literal */
  bool scoped;       /* f or a global scanned holds a function literal, an if or a match */
  size_t root_compound, root_lets; /* f's body: its nodes that are not atoms, its lets */
  ExprVisitFn also;   /* a caller's visitor for the nodes of f's own body, or NULL */
  void *also_ud;
} RuleScan;

static void scan_node(Expr *e, void *ud) {
  RuleScan *s = ud;
  if (s->in_root && s->also) s->also(e, s->also_ud);
  if (e->kind == EXPR_FN || e->kind == EXPR_IF || e->kind == EXPR_MATCH) s->scoped = true;
  if (s->in_root) {
    if (e->kind == EXPR_FN) s->root_has_fn = true;
    s->root_compound += e->kind != EXPR_VAR && e->kind != EXPR_CONST && e->kind != EXPR_GLOBAL && e->kind != EXPR_OP &&
                        e->kind != EXPR_CTOR;
    s->root_lets += e->kind == EXPR_LET;
  }
  if (e->kind == EXPR_CALL && e->call.fn->kind == EXPR_OP) {
    const OpDef *op = op_get(e->call.fn->op.id);
    if (op && !op->grad && grad_call_needs_rule(e)) vec_push(s->missing, ((MissingUse){e->span, op->name}));
  } else if (e->kind == EXPR_GLOBAL && s->with_globals && e->global.def && e->global.def->fn) {
    int64_t *slot = ptrmap_slot(&s->seen, e->global.def);
    if (!*slot) {
      *slot = 1;
      vec_push(s->todo, e->global.def->fn);
    }
  }
}

static int cmp_use(const void *a, const void *b) {
  const MissingUse *x = a, *y = b;
  return x->sp.lo < y->sp.lo ? -1 : x->sp.lo > y->sp.lo;
}

/* The walk of the rule check (f's body, then the globals it calls when
 * with_globals), `also` visiting f's own nodes on the way. */
static void rule_scan(RuleScan *s, Function *f, bool with_globals, ExprVisitFn also, void *also_ud) {
  *s = (RuleScan){.with_globals = with_globals, .also = also, .also_ud = also_ud};
  vec_push(s->todo, f);
  for (size_t i = 0; i < s->todo.len; i++) {
    s->in_root = i == 0;
    walk_each_once(s->todo.data[i]->body, true, scan_node, s); /* order-free: spans sort the report */
  }
}

static void rule_scan_free(RuleScan *s) {
  vec_free(s->missing);
  vec_free(s->todo);
  ptrmap_free(&s->seen);
}

/* Reports what the scan found missing, in one diagnostic; frees the scan. */
static bool rule_report(RuleScan *s, Diag *d) {
  bool ok = s->missing.len == 0;
  if (!ok) {
    qsort(s->missing.data, s->missing.len, sizeof *s->missing.data, cmp_use);
    /* the distinct operator names, in order of first use */
    char names[1024];
    size_t len = 0, ndistinct = 0;
    names[0] = 0;
    for (size_t i = 0; i < s->missing.len; i++) {
      bool dup = false;
      for (size_t j = 0; j < i && !dup; j++) dup = strcmp(s->missing.data[j].op, s->missing.data[i].op) == 0;
      if (dup) continue;
      ndistinct++;
      if (len + strlen(s->missing.data[i].op) + 8 < sizeof names)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", s->missing.data[i].op);
    }
    diag_error(d, s->missing.data[0].sp,
               "cannot differentiate: %zu operator%s ha%s no gradient rule: %s (%zu use%s, listed here and below)",
               ndistinct, ndistinct == 1 ? "" : "s", ndistinct == 1 ? "s" : "ve", names, s->missing.len,
               s->missing.len == 1 ? "" : "s");
    for (size_t i = 1; i < s->missing.len; i++)
      diag_note(d, s->missing.data[i].sp, "%s has no gradient rule", s->missing.data[i].op);
  }
  rule_scan_free(s);
  return ok;
}

/* What the higher-order mode learns from the rule check's walk of f's body. */
typedef struct RootFacts {
  bool has_fn;           /* a function literal */
  bool scoped;           /* a literal, if or match in f or a global it calls (the memo's scopes) */
  size_t compound, lets; /* nodes that are not atoms; lets (the memo's and binder map's sizes) */
} RootFacts;

/* The rule check (grad_check_rules_after without a visitor; `with_globals`:
 * also the globals f calls, transitively), telling also what the higher-order
 * mode wants to know of f's body (the one walk over the input both need). */
static bool check_rules(Function *f, bool with_globals, Diag *d, RootFacts *facts) {
  RuleScan s;
  rule_scan(&s, f, with_globals, NULL, NULL);
  if (facts) *facts = (RootFacts){s.root_has_fn, s.scoped, s.root_compound, s.root_lets};
  return rule_report(&s, d);
}

bool grad_check_rules_after(Function *f, ExprVisitFn visit, void *ud, bool (*first)(void *ud, Diag *d), Diag *d) {
  RuleScan s;
  rule_scan(&s, f, false, visit, ud);
  if (!first(ud, d)) {
    rule_scan_free(&s);
    return false;
  }
  return rule_report(&s, d);
}

/* Tensor, or tuples of them (nested); empty tuples only when allowed. */
static bool tensors_only(const Type *t, bool allow_empty) {
  t = type_solved(t);
  if (!t) return false;
  if (t->kind == TYPE_TENSOR) return true;
  if (t->kind != TYPE_TUPLE) return false;
  if (t->tuple.n == 0) return allow_empty;
  for (uint32_t i = 0; i < t->tuple.n; i++)
    if (!tensors_only(t->tuple.fields[i], allow_empty)) return false;
  return true;
}

/* The seed follows the first field of every tuple: it must reach a tensor. */
static bool seedable(const Type *t) {
  t = type_solved(t);
  while (t && t->kind == TYPE_TUPLE && t->tuple.n > 0) t = type_solved(t->tuple.fields[0]);
  return t && t->kind == TYPE_TENSOR;
}

bool grad_check_signature(Module *m, Function *f, bool first_order, Diag *d) {
  bool ok = true;
  if (f->ntparams) {
    diag_error(d, f->span, "cannot differentiate a polymorphic function (it has type parameters)");
    return false;
  }
  for (uint32_t i = 0; i < f->nparams; i++) {
    const Var *p = f->params[i];
    if (!tensors_only(p->type, true)) {
      diag_error(d, p->span, "cannot differentiate with respect to %%%s of type %s: parameters must be tensors or tuples of tensors",
                 var_name(p), type_text(m, p->type));
      ok = false;
    }
  }
  const Type *r = f->type && type_solved(f->type)->kind == TYPE_FUNC ? type_solved(f->type)->func.ret : f->body->type;
  if (!tensors_only(r, true) || (!first_order && !seedable(r))) {
    diag_error(d, f->ret_annot ? f->ret_annot->span : f->body->span,
               "cannot differentiate a function returning %s: the result must be a tensor or a tuple of tensors%s",
               type_text(m, r), first_order ? "" : " whose first field (recursively) is a tensor (the seeded part)");
    ok = false;
  }
  return ok;
}

Type *grad_result_annotation(Module *m, const Function *f) {
  if (!f->ret_annot) return NULL;
  Type **ps = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof *ps);
  for (uint32_t i = 0; i < f->nparams; i++) {
    if (!f->params[i]->annot) return NULL;
    ps[i] = f->params[i]->annot;
  }
  Type *grads = type_new(m, TYPE_TUPLE, f->ret_annot->span);
  grads->tuple.fields = ps;
  grads->tuple.n = f->nparams;
  Type *res = type_new(m, TYPE_TUPLE, f->ret_annot->span);
  res->tuple.fields = arena_alloc(m->arena, 2 * sizeof(Type *));
  res->tuple.fields[0] = f->ret_annot;
  res->tuple.fields[1] = grads;
  res->tuple.n = 2;
  return res;
}

Expr *grad_op_call(TypeofCx *tc, GradOp *op, Expr **args, uint32_t nargs, Span sp) {
  if (op->id < 0) { /* the first call: the operator looked up, its attributes normalised */
    Expr *e = op_call(tc->m, op->name, args, nargs, NULL, sp);
    op->id = e->call.fn->op.id;
    op->attrs = e->call.attrs;
  }
  return typeof_op_call(tc, op->id, op->attrs, args, nargs, sp);
}

/* memo's slot for a call of op with vals' types and result ret: the entry when
 * it holds that key (*hit), else the slot to fill; NULL when not kept. */
static GradForwardSeen *forward_seen(GradForwardMemo *memo, int32_t op, Expr **vals, uint32_t n, Type *ret, bool *hit) {
  *hit = false;
  if (!memo || n > GRAD_FORWARD_SEEN_ARGS) return NULL;
  uintptr_t h = (uintptr_t)(uint32_t)op * 0x9E3779B1u ^ (uintptr_t)ret >> 4;
  for (uint32_t i = 0; i < n; i++) h = h * 31 + ((uintptr_t)vals[i]->type >> 4);
  GradForwardSeen *s = &memo->seen[(h ^ h >> 7) % GRAD_FORWARD_SEEN];
  bool same = s->fn && s->op == op && s->n == n && s->ret == ret;
  for (uint32_t i = 0; i < n && same; i++) same = s->args[i] == vals[i]->type;
  *hit = same;
  return s;
}

/* The forward call's callee: its function type built from vals' types and
 * ret, and the node shared by that operator's calls at that type (both a
 * function of the type objects, so remembered in memo by them). */
static Expr *forward_callee(TypeofCx *tc, GradForwardMemo *memo, const Expr *e, Expr **vals, Type *ret) {
  uint32_t n = e->call.nargs;
  int32_t op = e->call.fn->op.id;
  bool hit;
  GradForwardSeen *s = forward_seen(memo, op, vals, n, ret, &hit);
  if (hit) return s->callee;
  Type *small[8], **ats = n <= 8 ? small : mem_calloc(n, sizeof *ats);
  for (uint32_t i = 0; i < n; i++) ats[i] = vals[i]->type;
  Type *fn = typeof_fn_type(tc, ats, n, ret);
  if (ats != small) mem_free(ats);
  if (!fn) {
    Expr *callee = build_copy(tc->m, e->call.fn);
    callee->type = e->call.fn->type;
    return callee;
  }
  Expr *callee = typeof_op_node(tc, op, fn, e->span);
  if (s) {
    *s = (GradForwardSeen){.op = op, .n = n, .ret = ret, .fn = fn, .callee = callee};
    for (uint32_t i = 0; i < n; i++) s->args[i] = vals[i]->type;
  }
  return callee;
}

Expr *grad_forward_call(TypeofCx *tc, GradForwardMemo *memo, const Expr *e, Expr **vals) {
  Module *m = tc->m;
  uint32_t n = e->call.nargs;
  bool known = typeof_ground(e->type) && e->call.fn->type;
  for (uint32_t i = 0; i < n && known; i++) {
    const Type *want = type_solved(e->call.args[i]->type);
    known = vals[i]->type && (vals[i]->type == want || type_equal(vals[i]->type, want));
  }
  if (!known) return expr_call(m, build_copy(m, e->call.fn), vals, n, e->call.attrs, e->span);
  Type *ret = typeof_shared(tc, e->type); /* the shared object: later look-ups go by address */
  Expr *callee = forward_callee(tc, memo, e, vals, ret);
  Expr *call = expr_call(m, callee, vals, n, e->call.attrs, e->span);
  call->type = ret;
  return call;
}

/* ============================================================= higher-order mode */



/* A let list being built: the lets themselves, each linked into the one
 * before through its body as it is pushed (no side array: the 100k chain's
 * outermost list held 600k bindings, 10 MB the kernel had to clear), closed
 * by wrap with the body. A let is typed (its body's type, as typeof_let types
 * it) when its own binding checks and every let after it is typed:
 * `untyped_to` is the last let whose binding did not, which with those
 * before it stays untyped. Each let takes `type`, the body's type foreseen,
 * as it is pushed, so that wrap need not go back over the lets (600k cache
 * misses on the chain) unless the body's type turns out otherwise. A long
 * list's lets come from blocks of their own, one after another in memory,
 * as wrapping them from the end used to lay them out: the re-typing then
 * walks the chain as an array and loads the values ahead instead of chasing
 * one let to find the next. */
typedef struct LetList {
  Expr *first, *last; /* NULL when empty; last's body is NULL until wrapped */
  Expr *untyped_to;   /* or NULL */
  Type *type;         /* the body's type foreseen, or NULL */
  char *block, *block_end; /* where the next lets go, once the list is long */
  uint32_t n;         /* lets so far */
} LetList;

enum { LET_BLOCK_AFTER = 16, LET_BLOCK = 512 }; /* lets (48 bytes each): 24 KiB blocks after the 16th */

/* A let node of the list (fields but kind and span to fill). */
static inline __attribute__((always_inline)) Expr *let_list_node(Module *m, LetList *ll, Span sp) {
  size_t size = offsetof(Expr, constant) + expr_payload_size(EXPR_LET);
  if (ll->block == ll->block_end) {
    if (ll->n++ < LET_BLOCK_AFTER) return expr_new(m, EXPR_LET, sp);
    ll->block = arena_alloc_aligned(m->arena, LET_BLOCK * size, 8); /* zero */
    ll->block_end = ll->block + LET_BLOCK * size;
  }
  Expr *e = (Expr *)ll->block;
  ll->block += size;
  e->kind = EXPR_LET;
  e->span = sp;
  return e;
}

/* A translated variable as the memo and the binder map keep it (VarRef below):
 * the Var, or a typed use of it once one was made, shared by every later use. */
typedef int64_t VarRef;

/* A memo entry: source node `key` translated to v in scope `scope`. The
 * entry's number (1 + its index) is kept in key's Expr.mark while the pass
 * runs, validated by `key` (other walks' stale marks never match), and the
 * mark the node had before is put back when the pass ends: no hash map (a
 * 4 MB table of fresh pages and a cache miss per look-up on the 100k chain). */
typedef struct MemoVal {
  Expr *key;
  VarRef v;
  uint32_t scope;
  uint32_t saved_mark;
} MemoVal;

/* The types pair_of gave the pair (x, ref(z)) last, for x and z of the types
 * x_t and z_t: the next pair of the same two type objects (nearly every
 * forward result of a chain) gets them without the shared-type look-ups. */
typedef struct PairTypes {
  const Type *x_t, *z_t;
  Type *ref_t, *pair_t;
} PairTypes;

typedef struct AD {
  Module *m;
  Diag *d;
  LetList *ll;        /* where bindings go now */
  Var *k;             /* the tape of the code being translated */
  Expr *k_use;        /* a typed use of k, shared by its later uses, or NULL */
  PtrMap vmap;        /* source Var* -> translated variable (VarRef) */
  PtrMap gmap;        /* GlobalDef* -> its @g_grad */
  VEC(MemoVal) memo_vals; /* the memo (MemoVal) */
  VEC(uint8_t) open;  /* scope id -> still open */
  uint32_t scope;
  PtrMap tpmap;       /* TypeParam* -> TypeParam* (a translated global's own) */
  PtrMap adt_needs;   /* TypeDef* -> 1 translate / 2 keep */
  PtrMap adt_map;     /* TypeDef* -> shadow TypeDef* */
  PtrMap ctor_map;    /* Ctor* -> shadow Ctor* */
  FnHomes homes;      /* nodes shared across function literals (ir/walk.h) */
  FnCaptures captures; /* each literal's captured nodes (tr_captured_nodes) */
  bool failed;
  bool in_dataflow_first; /* tr_dataflow_first is running (tr() does not start another) */
  GradOp zeros_like, ones_like, add; /* the calls the transform itself builds */
  GradOpCache *ops;   /* the calls the rules build (ops/gradients/grad.h) */
  TypeofCx tc;        /* types of the nodes built (sema/typeof.h) */
  PairTypes pair_last; /* the types of the pair pair_of made last */
  GradForwardMemo forward; /* grad_forward_call's */
  Type *bp_fn_type;   /* `fn () -> ()` as ty_backprop gives it, once made */
} AD;

/* ------------------------------------------------------------ typed builders
 *
 * The ir/build.h constructors, each giving the new node the type inference
 * would give it from its children's (sema/typeof.h), so the runner's re-typing
 * keeps the output instead of inferring it all again; a node whose type is
 * not determined that way (polymorphic code, constructors, match) stays
 * untyped and is inferred. */

static Expr *ty_var(AD *a, Var *v, Span sp) { return typeof_var(&a->tc, v, sp); }
static Expr *ty_tuple(AD *a, Expr **fs, uint32_t n, Span sp) { return typeof_set(&a->tc, build_tuple(a->m, fs, n, sp)); }
static Expr *ty_proj(AD *a, Expr *t, uint32_t i, Span sp) { return typeof_proj(&a->tc, t, i, sp); }
static Expr *ty_if(AD *a, Expr *c, Expr *t, Expr *f, Span sp) { return typeof_set(&a->tc, build_if(a->m, c, t, f, sp)); }
static Expr *ty_call(AD *a, Expr *f, Expr **args, uint32_t n, Span sp) {
  return typeof_set(&a->tc, build_call(a->m, f, args, n, sp));
}
static Expr *ty_expr_call(AD *a, Expr *f, Expr **args, uint32_t n, Attrs *attrs, Span sp) {
  return typeof_set(&a->tc, expr_call(a->m, f, args, n, attrs, sp));
}
static Expr *ty_global(AD *a, GlobalDef *g, Span sp) { return typeof_set(&a->tc, build_global(a->m, g, sp)); }
static Expr *ty_ctor(AD *a, Ctor *c, Span sp) { return typeof_set(&a->tc, build_ctor(a->m, c, sp)); }
static Expr *ty_ref_new(AD *a, Expr *x, Span sp) { return typeof_set(&a->tc, build_ref_new(a->m, x, sp)); }
static Expr *ty_ref_read(AD *a, Expr *r, Span sp) { return typeof_ref_read(&a->tc, r, sp); }
static Expr *ty_ref_write(AD *a, Expr *r, Expr *v, Span sp) { return typeof_ref_write(&a->tc, r, v, sp); }
static Expr *ty_match(AD *a, Expr *s, Clause *cs, uint32_t n, bool partial, Span sp) {
  return typeof_set(&a->tc, build_match(a->m, s, cs, n, partial, sp));
}
static Expr *ty_fn(AD *a, Function *f, Span sp) { return typeof_set(&a->tc, build_fn(a->m, f, sp)); }

/* A backpropagator `fn () -> () { ...; %prev() }` as a node: typed as ty_fn
 * types it, the type `fn () -> ()` taken from the first one whose body is
 * `()` (typeof_set's rule gives every such literal that shared type: it is a
 * function of the unit type object alone). */
static Expr *ty_backprop(AD *a, Function *bp, Span sp) {
  Type *unit = a->tc.unit;
  if (!a->bp_fn_type || bp->ntparams || bp->nparams || bp->ret_annot != unit || bp->body->type != unit) {
    Expr *e = ty_fn(a, bp, sp);
    if (!a->bp_fn_type && e->type && !bp->ntparams && !bp->nparams && bp->ret_annot == unit && bp->body->type == unit)
      a->bp_fn_type = e->type;
    return e;
  }
  Expr *e = build_fn(a->m, bp, sp);
  e->type = bp->type = a->bp_fn_type;
  return e;
}


/* ------------------------------------------------------------ let lists */

static Expr *use(AD *a, Var *v, Span sp) { return ty_var(a, v, sp); }

/* Variable uses are atoms: the printer writes one in place wherever it
 * occurs, so one use node can stand for every use of a variable (as TVM's
 * one Var object does). A VarRef holds the translated Var until a typed use
 * of it is made, then that use (tagged by its low bit); an untyped use is
 * made afresh each time (inference types each occurrence). In the 100k
 * graph chain's output this is 378k of 975k use nodes fewer (15 MB of fresh
 * memory the kernel no longer clears). */
static VarRef ref_of_var(Var *v) { return (VarRef)(intptr_t)v; }
static VarRef ref_of_use(Expr *u) { return (VarRef)((intptr_t)u | 1); }
static bool ref_is_use(VarRef r) { return r & 1; }

/* A use of the variable *r names; *r becomes the use when it is typed. */
static Expr *ref_use(AD *a, VarRef *r, Span sp) {
  if (ref_is_use(*r)) return (Expr *)(intptr_t)(*r & ~(VarRef)1);
  Expr *u = use(a, (Var *)(intptr_t)*r, sp);
  if (u->type) *r = ref_of_use(u);
  return u;
}

/* A use of the tape a->k (read and written once per operator call). */
static Expr *k_use(AD *a, Span sp) {
  if (a->k_use) return a->k_use;
  Expr *u = use(a, a->k, sp);
  if (u->type) a->k_use = u;
  return u;
}

/* Makes v the tape of the code translated next; returns the previous one's state. */
typedef struct TapeState {
  Var *k;
  Expr *k_use;
} TapeState;

static TapeState tape_set(AD *a, Var *v) {
  TapeState old = {a->k, a->k_use};
  a->k = v;
  a->k_use = NULL;
  return old;
}

static void tape_restore(AD *a, TapeState old) {
  a->k = old.k;
  a->k_use = old.k_use;
}

/* The translated variable of source variable v, when v is bound in the code translated. */
static VarRef *vmap_ref(AD *a, const Var *v) { return (VarRef *)ptrmap_find(&a->vmap, v); }

/* Types the lets after untyped_to, up to `stop`, with t. */
static void let_list_retype(LetList *ll, Expr *stop, Type *t) {
  for (Expr *l = ll->untyped_to ? ll->untyped_to->let.body : ll->first; l != stop; l = l->let.body) l->type = t;
}

/* `last`, just pushed, does not bind its value's type: it and the lets
 * before it stay untyped (those after untyped_to were typed as pushed). */
static __attribute__((noinline)) void let_list_untyped_to(LetList *ll, Expr *last) {
  let_list_retype(ll, last, NULL);
  ll->untyped_to = last;
}

/* A binder without a type gets its value's (its annotation's when they agree). */
static inline __attribute__((always_inline)) Var *push_var(AD *a, Var *v, Expr *e) {
  if (!v->type && e->type && (!v->annot || type_equal(v->annot, e->type))) v->type = v->annot ? v->annot : e->type;
  LetList *ll = a->ll;
  Expr *let = let_list_node(a->m, ll, e->span);
  let->let.var = v;
  let->let.value = e;
  if (ll->last) ll->last->let.body = let;
  else ll->first = let;
  ll->last = let;
  if (typeof_let_binds(v, e)) let->type = ll->type;
  else let_list_untyped_to(ll, let);
  return v;
}

/* Binds e to a fresh variable; returns a use. */
static inline __attribute__((always_inline)) Expr *push(AD *a, const char *prefix, Expr *e) {
  return use(a, push_var(a, build_fresh_var(a->m, prefix, NULL, e->span), e), e->span);
}

/* `e;` — evaluated for its effect (a unit result). */
static inline __attribute__((always_inline)) void push_unit(AD *a, Expr *e) { push_var(a, var_new(a->m, "", e->span, NULL), e); }

static bool is_atom(const Expr *e) {
  return e->kind == EXPR_VAR || e->kind == EXPR_CONST || e->kind == EXPR_GLOBAL || e->kind == EXPR_OP ||
         e->kind == EXPR_CTOR;
}

static Expr *atomize(AD *a, const char *prefix, Expr *e) { return is_atom(e) ? e : push(a, prefix, e); }

/* let b1; ...; let bn; body — the list's lets closed by body. Empties the list. */
static Expr *wrap(LetList *ll, Expr *body) {
  Expr *first = ll->first;
  if (!first) return body;
  ll->last->let.body = body;
  if (!typeof_same(ll->type, body->type)) let_list_retype(ll, body, body->type); /* foreseen wrongly */
  *ll = (LetList){0};
  return first;
}

static uint32_t scope_open(AD *a) {
  uint8_t one = 1;
  vec_push(a->open, one);
  uint32_t prev = a->scope;
  a->scope = (uint32_t)a->open.len - 1;
  return prev;
}

static void scope_close(AD *a, uint32_t prev) {
  a->open.data[a->scope] = 0;
  a->scope = prev;
}

/* ------------------------------------------------------------- types */

/* ref(fn () -> ()), the tape's type (shared, sema/typeof.h) */
static Type *bp_type(AD *a) { return typeof_ref_type(&a->tc, typeof_fn_type(&a->tc, NULL, 0, a->tc.unit)); }

static bool adt_needs_shadow(AD *a, TypeDef *def);

/* Does translating t change it? */
static bool type_changes(AD *a, const Type *t) {
  t = type_solved(t);
  if (!t) return false;
  switch (t->kind) {
  case TYPE_TENSOR:
  case TYPE_FUNC: return true;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (type_changes(a, t->tuple.fields[i])) return true;
    return false;
  case TYPE_REF: return type_changes(a, t->ref.inner);
  case TYPE_ADT:
    if (adt_needs_shadow(a, t->adt.def)) return true;
    for (uint32_t i = 0; i < t->adt.nargs; i++)
      if (type_changes(a, t->adt.args[i])) return true;
    return false;
  default: return false;
  }
}

/* An ADT needs a translated copy when a constructor field's type changes
 * (a tensor, a function...), assuming recursive occurrences do not: the
 * least fixpoint, computed per definition on first use. */
static bool adt_needs_shadow(AD *a, TypeDef *def) {
  int64_t st = 0;
  if (ptrmap_get(&a->adt_needs, def, &st)) return st == 1;
  ptrmap_put(&a->adt_needs, def, 2); /* provisional "no" for recursive uses */
  bool needs = false;
  for (uint32_t i = 0; i < def->nctors && !needs; i++)
    for (uint32_t j = 0; j < def->ctors[i]->nfields && !needs; j++) needs = type_changes(a, def->ctors[i]->fields[j]);
  ptrmap_put(&a->adt_needs, def, needs ? 1 : 2);
  return needs;
}

static TypeDef *shadow_adt(AD *a, TypeDef *def);

/* τ̂ (spec/gradient.md §1.4); NULL for a type that cannot be written (`_`). */
static Type *tr_type(AD *a, const Type *t) {
  t = type_solved(t);
  if (!t) return NULL;
  switch (t->kind) {
  case TYPE_TENSOR: /* (t, ref(t)), shared */
    return typeof_tuple_type(&a->tc, (Type *[]){(Type *)t, typeof_ref_type(&a->tc, (Type *)t)}, 2);
  case TYPE_TUPLE: {
    Type **fs = mem_calloc(t->tuple.n + 1, sizeof *fs);
    bool ok = true;
    for (uint32_t i = 0; i < t->tuple.n && ok; i++) ok = (fs[i] = tr_type(a, t->tuple.fields[i])) != NULL;
    Type *p = ok ? typeof_tuple_type(&a->tc, fs, t->tuple.n) : NULL;
    mem_free(fs);
    return p;
  }
  case TYPE_FUNC: {
    Type *f = type_new(a->m, TYPE_FUNC, t->span);
    /* its binders as its uses read them (TYPE_VAR below): a literal's type
     * parameters translated already (tr_function) are the new ones */
    f->func.tparams = t->func.ntparams ? arena_alloc(a->m->arena, t->func.ntparams * sizeof(TypeParam *)) : NULL;
    for (uint32_t i = 0; i < t->func.ntparams; i++) {
      int64_t np = 0;
      f->func.tparams[i] = ptrmap_get(&a->tpmap, t->func.tparams[i], &np) ? (TypeParam *)(intptr_t)np : t->func.tparams[i];
    }
    f->func.ntparams = t->func.ntparams;
    f->func.nargs = t->func.nargs + 1;
    f->func.args = arena_alloc(a->m->arena, f->func.nargs * sizeof(Type *));
    for (uint32_t i = 0; i < t->func.nargs; i++)
      if (!(f->func.args[i] = tr_type(a, t->func.args[i]))) return NULL;
    f->func.args[t->func.nargs] = bp_type(a);
    if (!(f->func.ret = tr_type(a, t->func.ret))) return NULL;
    return f;
  }
  case TYPE_REF: {
    Type *in = tr_type(a, t->ref.inner);
    return in ? typeof_ref_type(&a->tc, in) : NULL;
  }
  case TYPE_ADT: {
    Type *r = type_new(a->m, TYPE_ADT, t->span);
    r->adt.def = shadow_adt(a, t->adt.def);
    r->adt.nargs = t->adt.nargs;
    r->adt.args = t->adt.nargs ? arena_alloc(a->m->arena, t->adt.nargs * sizeof(Type *)) : NULL;
    for (uint32_t i = 0; i < t->adt.nargs; i++)
      if (!(r->adt.args[i] = tr_type(a, t->adt.args[i]))) return NULL;
    return r;
  }
  case TYPE_VAR: {
    int64_t np = 0;
    if (ptrmap_get(&a->tpmap, t->var.param, &np)) {
      Type *v = type_new(a->m, TYPE_VAR, t->span);
      v->var.param = (TypeParam *)(intptr_t)np;
      return v;
    }
    return (Type *)t;
  }
  default: return NULL;
  }
}

/* The translated copy `T_grad` of an ADT whose fields change (or def itself). */
static TypeDef *shadow_adt(AD *a, TypeDef *def) {
  if (!adt_needs_shadow(a, def)) return def;
  int64_t got = 0;
  if (ptrmap_get(&a->adt_map, def, &got)) return (TypeDef *)(intptr_t)got;
  Module *m = a->m;
  TypeDef *s = arena_alloc(m->arena, sizeof *s);
  *s = *def;
  char buf[256];
  snprintf(buf, sizeof buf, "%.200s_grad", def->name);
  s->name = arena_strdup(m->arena, buf);
  s->is_extern = false;
  s->has_body = true;
  ptrmap_put(&a->adt_map, def, (int64_t)(intptr_t)s);
  s->tparams = def->ntparams ? arena_alloc(m->arena, def->ntparams * sizeof *s->tparams) : NULL;
  for (uint32_t i = 0; i < def->ntparams; i++) {
    s->tparams[i] = type_param_new(m, def->tparams[i]->name, def->tparams[i]->span);
    ptrmap_put(&a->tpmap, def->tparams[i], (int64_t)(intptr_t)s->tparams[i]);
  }
  s->ctors = def->nctors ? arena_alloc(m->arena, def->nctors * sizeof *s->ctors) : NULL;
  for (uint32_t i = 0; i < def->nctors; i++) {
    Ctor *c = arena_alloc(m->arena, sizeof *c);
    *c = *def->ctors[i];
    snprintf(buf, sizeof buf, "%.200s_grad", def->ctors[i]->name);
    c->name = arena_strdup(m->arena, buf);
    c->owner = s;
    c->fields = c->nfields ? arena_alloc(m->arena, c->nfields * sizeof *c->fields) : NULL;
    s->ctors[i] = c;
    ptrmap_put(&a->ctor_map, def->ctors[i], (int64_t)(intptr_t)c);
  }
  for (uint32_t i = 0; i < def->nctors; i++)
    for (uint32_t j = 0; j < def->ctors[i]->nfields; j++) {
      Type *ft = tr_type(a, def->ctors[i]->fields[j]);
      if (!ft) {
        diag_error(a->d, def->ctors[i]->span, "cannot translate the fields of constructor %s for differentiation",
                   def->ctors[i]->name);
        a->failed = true;
        ft = def->ctors[i]->fields[j];
      }
      s->ctors[i]->fields[j] = ft;
    }
  /* append to the module's type list */
  TypeDef **types = arena_alloc(m->arena, (m->ntypes + 1) * sizeof *types);
  if (m->ntypes) memcpy(types, m->types, m->ntypes * sizeof *types);
  types[m->ntypes++] = s;
  m->types = types;
  return s;
}

static Ctor *map_ctor(AD *a, Ctor *c) {
  shadow_adt(a, c->owner);
  int64_t got = 0;
  return ptrmap_get(&a->ctor_map, c, &got) ? (Ctor *)(intptr_t)got : c;
}

/* A new binder for source var v: same name, translated annotation when v had one
 * (or always, for parameters). */
static Var *new_binder(AD *a, Var *v, bool annotate) {
  Type *ann = annotate || v->annot ? tr_type(a, v->type ? v->type : v->annot) : NULL;
  Var *n = var_new_as(a->m, v, ann);
  if (annotate && typeof_ground(ann)) n->type = ann; /* a parameter: its annotation */
  ptrmap_put(&a->vmap, v, ref_of_var(n));
  return n;
}

/* ------------------------------------------------- lifted pair helpers */

/* One of the structural helpers below, applied to an atom x of source type t. */
typedef Expr *PerLeaf(AD *a, Expr *x, const Type *t, Span sp);

/* The tuple of leaf(field i of x) for a tuple type t: each field projected into a
 * let named "x", each result atomized under the name hint. */
static Expr *per_field(AD *a, Expr *x, const Type *t, Span sp, const char *hint, PerLeaf *leaf) {
  Expr **fs = mem_calloc(t->tuple.n + 1, sizeof *fs);
  for (uint32_t i = 0; i < t->tuple.n; i++) {
    Expr *f = push(a, "x", ty_proj(a, x, i, sp));
    fs[i] = atomize(a, hint, leaf(a, f, t->tuple.fields[i], sp));
  }
  Expr *r = ty_tuple(a, fs, t->tuple.n, sp);
  mem_free(fs);
  return r;
}

/* pair(x) = (x, ref(zeros_like(x))), structurally over tuples (x an atom of type t) */
static Expr *pair_of(AD *a, Expr *x, const Type *t, Span sp) {
  t = type_solved(t);
  if (t && t->kind == TYPE_TUPLE) return per_field(a, x, t, sp, "p", pair_of);
  Expr *z = grad_op_call(&a->tc, &a->zeros_like, &x, 1, sp);
  PairTypes *last = &a->pair_last;
  if (x->type && z->type && x->type == last->x_t && z->type == last->z_t) {
    Expr *cell = build_ref_new(a->m, z, sp);
    cell->type = last->ref_t;
    Expr *pair = build_tuple(a->m, (Expr *[]){x, cell}, 2, sp);
    pair->type = last->pair_t;
    return pair;
  }
  Expr *cell = ty_ref_new(a, z, sp);
  Expr *pair = ty_tuple(a, (Expr *[]){x, cell}, 2, sp);
  if (cell->type && pair->type) *last = (PairTypes){x->type, z->type, cell->type, pair->type};
  return pair;
}

/* val(p): the forward value of a translated value p of source type t */
static Expr *value_of(AD *a, Expr *p, const Type *t, Span sp) {
  t = type_solved(t);
  if (t && t->kind == TYPE_TUPLE) return per_field(a, p, t, sp, "v", value_of);
  return ty_proj(a, p, 0, sp);
}

/* grad(p): the current contents of p's gradient cells */
static Expr *grad_of(AD *a, Expr *p, const Type *t, Span sp) {
  t = type_solved(t);
  if (t && t->kind == TYPE_TUPLE) return per_field(a, p, t, sp, "g", grad_of);
  return ty_ref_read(a, ty_proj(a, p, 1, sp), sp);
}

/* acc(p, d): add d into p's cells (d an expression of source type t) */
static void accumulate(AD *a, Expr *p, Expr *d, const Type *t, Span sp) {
  t = type_solved(t);
  if (!grad_type_has_float(t)) return;
  if (t->kind == TYPE_TUPLE) {
    Expr *dv = atomize(a, "d", d);
    for (uint32_t i = 0; i < t->tuple.n; i++) {
      if (!grad_type_has_float(t->tuple.fields[i])) continue;
      Expr *pi = push(a, "x", ty_proj(a, p, i, sp));
      accumulate(a, pi, ty_proj(a, dv, i, sp), t->tuple.fields[i], sp);
    }
    return;
  }
  Expr *cur = ty_ref_read(a, ty_proj(a, p, 1, sp), sp);
  Expr *sum = grad_op_call(&a->tc, &a->add, (Expr *[]){cur, d}, 2, sp);
  push_unit(a, ty_ref_write(a, ty_proj(a, p, 1, sp), sum, sp));
}

/* ------------------------------------------------------------ translation */

static Expr *tr(AD *a, Expr *e);
static Expr *tr_value(AD *a, Expr *e);

static bool fail(AD *a, Span sp, const char *msg) {
  if (!a->failed || a->d->nerrors == 0) diag_error(a->d, sp, "%s", msg);
  a->failed = true;
  return false;
}

static Expr *unit(AD *a, Span sp) { return ty_tuple(a, NULL, 0, sp); }

static Expr *rule_bind(GradCtx *c, Expr *e) {
  typeof_tree(&((AD *)c->pass)->tc, e);
  return push((AD *)c->pass, "t", e);
}

/* The rules' operator calls: typed as they are built (their arguments
 * usually are), the callee node shared (sema/typeof.h typeof_op_call). */
static Expr *rule_call(GradCtx *c, int32_t op, Attrs *attrs, Expr **args, uint32_t nargs) {
  return typeof_op_call(&((AD *)c->pass)->tc, op, attrs, args, nargs, c->sp);
}

/* An operator call (§1.4 table, row `op(e1..en)`). */
static Expr *tr_op_call(AD *a, Expr *e) {
  Module *m = a->m;
  Span sp = e->span;
  uint32_t n = e->call.nargs;
  enum { SMALL = 8 }; /* most calls: arrays on the stack, not 4 mallocs per call */
  Expr *args_s[SMALL] = {0}, *vals_s[SMALL] = {0}, *dx_s[SMALL] = {0};
  const Type *types_s[SMALL] = {0};
  bool small = n <= SMALL;
  Expr **args = small ? args_s : mem_calloc(n, sizeof *args), **vals = small ? vals_s : mem_calloc(n, sizeof *vals);
  const Type **types = small ? types_s : mem_calloc(n, sizeof *types);
  /* a constant argument is used as it is: it has no gradient cell to fill; so is a
   * captured variable (a constant of the differentiated function: its cell would never
   * be read), so that its adjoint is not computed (gradient(fn (%w) {... %x ...}) with
   * data %x: no data gradient) */
  for (uint32_t i = 0; i < n; i++) {
    const Expr *x = e->call.args[i];
    if (x->kind != EXPR_CONST && !(x->kind == EXPR_VAR && !ptrmap_get(&a->vmap, x->var.var, NULL)))
      args[i] = tr(a, e->call.args[i]);
  }
  for (uint32_t i = 0; i < n; i++) {
    types[i] = type_solved(e->call.args[i]->type);
    vals[i] = args[i] ? atomize(a, "v", value_of(a, args[i], types[i], sp)) : e->call.args[i];
  }
  Expr *y = push(a, "y", grad_forward_call(&a->tc, &a->forward, e, vals));
  Expr *r = push(a, "r", pair_of(a, y, e->type, sp));
  const OpDef *op = op_get(e->call.fn->op.id);
  if (grad_call_needs_rule(e) && op && op->grad) {
    Expr *prev = push(a, "prev", ty_ref_read(a, k_use(a, sp), sp));
    LetList body = {.type = a->tc.unit}, *saved = a->ll;
    a->ll = &body;
    Expr *gy = atomize(a, "g", grad_of(a, r, e->type, sp));
    Expr **dx = small ? dx_s : mem_calloc(n, sizeof *dx);
    GradCtx gc = {.m = m, .d = a->d, .sp = sp, .op = e->call.fn->op.id, .attrs = e->call.attrs, .n = n,
                  .x = vals, .xt = types, .out = y, .out_t = type_solved(e->type), .g = gy, .dx = dx,
                  .bind = rule_bind, .pass = a, .ops = a->ops, .call = rule_call};
    int before = a->d->nerrors;
    if (!op->grad(&gc) || a->d->nerrors > before) a->failed = true;
    for (uint32_t i = 0; i < n && !a->failed; i++)
      if (dx[i] && args[i] && grad_type_has_float(types[i])) {
        typeof_tree(&a->tc, dx[i]);
        accumulate(a, args[i], dx[i], types[i], sp);
      }
    if (!small) mem_free(dx);
    Expr *ret = ty_call(a, prev, NULL, 0, sp);
    a->ll = saved;
    Function *bp = build_function(m, NULL, 0, a->tc.unit, wrap(&body, ret), NULL, sp);
    push_unit(a, ty_ref_write(a, k_use(a, sp), ty_backprop(a, bp, sp), sp));
  }
  if (!small) {
    mem_free(args);
    mem_free(vals);
    mem_free(types);
  }
  return r;
}

/* ---- annotation.checkpoint (§1.8): recompute instead of keeping intermediates ---- */

typedef struct CkptCopy {
  AD *a;
  PtrMap free; /* the body's free variables */
} CkptCopy;

/* In the forward copy, a free variable becomes the forward value of its pair. */
static Expr *ckpt_pre(Rewriter *rw, Expr *e) {
  CkptCopy *cc = rw->ud;
  if (e->kind != EXPR_VAR || !ptrmap_find(&cc->free, e->var.var)) return NULL;
  VarRef *r = vmap_ref(cc->a, e->var.var);
  if (!r) return NULL;
  return atomize(cc->a, "v", value_of(cc->a, ref_use(cc->a, r, e->span), e->var.var->type, e->span));
}

/* Copies the gradient cells of `from` into the cells of `to` (pairs of type t), per leaf. */
static void transfer_grads(AD *a, Expr *from, Expr *to, const Type *t, Span sp) {
  t = type_solved(t);
  if (t && t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->tuple.n; i++)
      transfer_grads(a, push(a, "x", ty_proj(a, from, i, sp)), push(a, "x", ty_proj(a, to, i, sp)),
                     t->tuple.fields[i], sp);
    return;
  }
  push_unit(a, ty_ref_write(a, ty_proj(a, to, 1, sp), ty_ref_read(a, ty_proj(a, from, 1, sp), sp), sp));
}

static Expr *tr_op_call(AD *a, Expr *e);

/* The forward pass evaluates the checkpointed expression without AD (its free variables
 * read as values) and pairs the result; the pushed closure translates it again on a
 * local tape, seeds the copy's result cells with the checkpoint's, runs the local tape
 * (reaching the free variables' cells) and then the previous closure. A body whose free
 * variables are not all tensors or tuples of tensors cannot be evaluated without AD (a
 * translated closure needs a tape): then the annotation is the identity. */
static Expr *tr_checkpoint(AD *a, Expr *call) {
  Module *m = a->m;
  Span sp = call->span;
  Expr *body = call->call.args[0];
  Function *tmp = build_function(m, NULL, 0, NULL, body, NULL, sp);
  ExprVarList fv = {0};
  fn_free_vars(tmp, NULL, &fv);
  CkptCopy cc = {a, {0}};
  bool plain = true;
  for (size_t i = 0; i < fv.len; i++) {
    plain &= tensors_only(fv.data[i]->type, true);
    ptrmap_put(&cc.free, fv.data[i], 1);
  }
  mem_free(fv.data);
  if (!plain || !grad_type_has_float(call->type)) {
    ptrmap_free(&cc.free);
    return tr_op_call(a, call);
  }
  Rewriter rw;
  rw_init(&rw, m, a->d);
  rw.pre = ckpt_pre;
  rw.ud = &cc;
  Expr *fwd = rw_expr(&rw, body);
  if (rw.failed) a->failed = true;
  rw_fini(&rw);
  ptrmap_free(&cc.free);
  Expr *y = push(a, "y", fwd);
  Expr *r = push(a, "r", pair_of(a, y, call->type, sp));
  Expr *prev = push(a, "prev", ty_ref_read(a, k_use(a, sp), sp));
  LetList cb = {.type = a->tc.unit}, *saved_ll = a->ll;
  a->ll = &cb;
  uint32_t prev_scope = scope_open(a);
  Function *empty = build_function(m, NULL, 0, a->tc.unit, unit(a, sp), NULL, sp);
  Var *lk = push_var(a, build_fresh_var(m, "tape", NULL, sp), ty_ref_new(a, ty_fn(a, empty, sp), sp));
  TapeState saved_k = tape_set(a, lk);
  Expr *dup = tr(a, body);
  tape_restore(a, saved_k);
  transfer_grads(a, r, dup, call->type, sp);
  push_unit(a, ty_call(a, ty_ref_read(a, use(a, lk, sp), sp), NULL, 0, sp));
  Expr *ret = ty_call(a, prev, NULL, 0, sp);
  scope_close(a, prev_scope);
  a->ll = saved_ll;
  Function *bp = build_function(m, NULL, 0, a->tc.unit, wrap(&cb, ret), NULL, sp);
  push_unit(a, ty_ref_write(a, k_use(a, sp), ty_backprop(a, bp, sp), sp));
  return r;
}

/* fn (x1..xn) { body }  ->  fn (x̂1..x̂n, %k) { [[body]]_k } */
static Function *tr_function(AD *a, Function *f, Span sp) {
  Module *m = a->m;
  /* a polymorphic literal stays polymorphic (each call instantiates A with the
   * translated type, a pair for a tensor): fresh type parameters, unless
   * grad_global made them already */
  TypeParam **tps = f->ntparams ? arena_alloc(m->arena, f->ntparams * sizeof *tps) : NULL;
  for (uint32_t i = 0; i < f->ntparams; i++) {
    int64_t got = 0;
    if (ptrmap_get(&a->tpmap, f->tparams[i], &got)) {
      tps[i] = (TypeParam *)(intptr_t)got;
      continue;
    }
    tps[i] = type_param_new(m, f->tparams[i]->name, f->tparams[i]->span);
    ptrmap_put(&a->tpmap, f->tparams[i], (int64_t)(intptr_t)tps[i]);
  }
  Var **ps = mem_calloc(f->nparams + 2, sizeof *ps);
  for (uint32_t i = 0; i < f->nparams; i++) ps[i] = new_binder(a, f->params[i], true);
  Var *k = build_fresh_var(m, "k", bp_type(a), sp);
  k->type = k->annot;
  ps[f->nparams] = k;
  LetList body = {0}, *saved_ll = a->ll;
  a->ll = &body;
  TapeState saved_k = tape_set(a, k);
  uint32_t prev_scope = scope_open(a);
  Expr *res = tr(a, f->body);
  scope_close(a, prev_scope);
  a->ll = saved_ll;
  tape_restore(a, saved_k);
  const Type *ft = type_solved(f->type);
  Type *ret = ft && ft->kind == TYPE_FUNC ? tr_type(a, ft->func.ret) : NULL;
  Function *nf = build_function(m, ps, f->nparams + 1, ret, wrap(&body, res), NULL, sp);
  nf->tparams = tps;
  nf->ntparams = f->ntparams;
  mem_free(ps);
  return nf;
}

/* @g -> @g_grad, created on first use (registered before its body is
 * translated, so recursion finds it). */
static GlobalDef *grad_global(AD *a, GlobalDef *g) {
  int64_t got = 0;
  if (ptrmap_get(&a->gmap, g, &got)) return (GlobalDef *)(intptr_t)got;
  Module *m = a->m;
  char buf[256];
  snprintf(buf, sizeof buf, "%.200s_grad", g->name);
  Function *of = g->fn;
  Function *nf = build_function(m, NULL, 0, NULL, NULL, NULL, of->span);
  GlobalDef *ng = build_global_def(m, module_fresh_global_name(m, buf), nf, g->span);
  ptrmap_put(&a->gmap, g, (int64_t)(intptr_t)ng);
  if (of->ntparams) {
    nf->ntparams = of->ntparams;
    nf->tparams = arena_alloc(m->arena, of->ntparams * sizeof *nf->tparams);
    for (uint32_t i = 0; i < of->ntparams; i++) {
      nf->tparams[i] = type_param_new(m, of->tparams[i]->name, of->tparams[i]->span);
      ptrmap_put(&a->tpmap, of->tparams[i], (int64_t)(intptr_t)nf->tparams[i]);
    }
  }
  /* translate in a fresh memo scope: the global's body is its own world */
  fn_homes_add(&a->homes, of);
  Function *t = tr_function(a, of, of->span);
  nf->params = t->params;
  nf->nparams = t->nparams;
  nf->ret_annot = t->ret_annot;
  nf->body = t->body;
  return ng;
}

static Pattern *tr_pattern(AD *a, Pattern *p) {
  Pattern *q = pattern_new(a->m, p->kind, p->span);
  switch (p->kind) {
  case PAT_WILDCARD: break;
  case PAT_VAR: q->var = new_binder(a, p->var, false); break;
  case PAT_CTOR:
    q->ctor = p->ctor;
    q->ctor.ctor = p->ctor.ctor ? map_ctor(a, p->ctor.ctor) : NULL;
    if (q->ctor.ctor) q->ctor.name = q->ctor.ctor->name;
    q->ctor.args = p->ctor.nargs ? arena_alloc(a->m->arena, p->ctor.nargs * sizeof(Pattern *)) : NULL;
    for (uint32_t i = 0; i < p->ctor.nargs; i++) q->ctor.args[i] = tr_pattern(a, p->ctor.args[i]);
    break;
  case PAT_TUPLE:
    q->tuple.n = p->tuple.n;
    q->tuple.fields = p->tuple.n ? arena_alloc(a->m->arena, p->tuple.n * sizeof(Pattern *)) : NULL;
    for (uint32_t i = 0; i < p->tuple.n; i++) q->tuple.fields[i] = tr_pattern(a, p->tuple.fields[i]);
    break;
  }
  return q;
}

/* [[branch]] in its own scope and let list */
static Expr *tr_block(AD *a, Expr *e) {
  LetList body = {0}, *saved = a->ll;
  a->ll = &body;
  uint32_t prev = scope_open(a);
  Expr *res = tr(a, e);
  scope_close(a, prev);
  a->ll = saved;
  return wrap(&body, res);
}

/* e's memo entry while its scope is open, or NULL. */
static MemoVal *memo_find(AD *a, const Expr *e) {
  uint32_t k = e->mark;
  if (k == 0 || k > a->memo_vals.len) return NULL;
  MemoVal *mv = &a->memo_vals.data[k - 1];
  return mv->key == e && a->open.data[mv->scope] ? mv : NULL;
}

static Expr *memo_get(AD *a, Expr *e) {
  MemoVal *mv = memo_find(a, e);
  return mv ? ref_use(a, &mv->v, e->span) : NULL;
}

static void memo_put(AD *a, Expr *e, VarRef v) {
  MemoVal mv = {e, v, a->scope, e->mark};
  vec_push(a->memo_vals, mv);
  e->mark = (uint32_t)a->memo_vals.len;
}

static bool memo_has(AD *a, Expr *e) { return memo_find(a, e) != NULL; }

/* The memo's marks taken back, newest first (a node entered twice, once per
 * scope, gets the mark it had before the first). */
static void memo_free(AD *a) {
  for (size_t i = a->memo_vals.len; i-- > 0;) a->memo_vals.data[i].key->mark = a->memo_vals.data[i].saved_mark;
  vec_free(a->memo_vals);
}

static bool is_dataflow(const Expr *e) {
  return (e->kind == EXPR_CALL && !(e->call.fn->kind == EXPR_OP && e->call.fn->op.id == OP_ANNOTATION_CHECKPOINT &&
                                    e->call.nargs == 1)) ||
         e->kind == EXPR_TUPLE || e->kind == EXPR_PROJ;
}

/* The i-th expression tr_value(e) passes to tr() (e a dataflow node), or NULL. */
static Expr *tr_child(AD *a, Expr *e, uint32_t i) {
  switch (e->kind) {
  case EXPR_CALL:
    if (e->call.fn->kind == EXPR_OP) { /* tr_op_call: no constants, no captured variables */
      for (uint32_t k = 0, seen = 0; k < e->call.nargs; k++) {
        Expr *x = e->call.args[k];
        if (x->kind == EXPR_CONST || (x->kind == EXPR_VAR && !ptrmap_get(&a->vmap, x->var.var, NULL))) continue;
        if (seen++ == i) return x;
      }
      return NULL;
    }
    if (e->call.fn->kind == EXPR_CTOR) return i < e->call.nargs ? e->call.args[i] : NULL;
    return i == 0 ? e->call.fn : i <= e->call.nargs ? e->call.args[i - 1] : NULL;
  case EXPR_TUPLE: return i < e->tuple.n ? e->tuple.fields[i] : NULL;
  default: return i == 0 ? e->proj.tuple : NULL;
  }
}

/* Before tr(root) recurses down a long dataflow chain (a 100,000-node graph
 * binding chain nested 100,000 C frames of ~1 KB: the stack pages cost more
 * than the translation), its dataflow descendants are translated bottom-up
 * with an explicit stack, calling tr() on exactly the expressions, in
 * exactly the order, the recursion would: each tr_value then finds its
 * children memoised. The walk stops (leaving the rest to the recursion) at
 * the first child whose translation has effects but is not memoised (a
 * captured variable, a global, an operator or constructor value), since
 * translating it out of turn would reorder the output. */
static void tr_dataflow_first(AD *a, Expr *root) {
  typedef struct {
    Expr *e;
    uint32_t next;
  } Frame;
  VEC(Frame) st = {0};
  vec_push(st, ((Frame){root, 0}));
  while (st.len && !a->failed) {
    Frame *f = &st.data[st.len - 1];
    Expr *e = f->e;
    Expr *c = tr_child(a, e, f->next++);
    if (!c) {
      st.len--;
      if (st.len) tr(a, e); /* the root: the caller */
      continue;
    }
    if (is_atom(c) && c->kind != EXPR_CONST) {
      if (c->kind == EXPR_VAR && ptrmap_get(&a->vmap, c->var.var, NULL)) continue; /* a plain use */
      break; /* effects: the recursion takes over from here */
    }
    if (is_dataflow(c) && !memo_has(a, c)) vec_push(st, ((Frame){c, 0}));
    else tr(a, c);
  }
  vec_free(st);
}

/* [[e]] as an atom (a variable), memoised by node. */
static Expr *tr(AD *a, Expr *e) {
  if (is_atom(e) && e->kind != EXPR_CONST) return tr_value(a, e);
  Expr *got = memo_get(a, e);
  if (got) return got;
  if (is_dataflow(e) && !a->in_dataflow_first) {
    a->in_dataflow_first = true;
    tr_dataflow_first(a, e);
    a->in_dataflow_first = false;
  }
  Expr *v = tr_value(a, e);
  if (v->kind != EXPR_VAR) v = push(a, e->kind == EXPR_CONST ? "c" : "x", v);
  memo_put(a, e, v->type ? ref_of_use(v) : ref_of_var(v->var.var)); /* (v: a use made by ty_var) */
  return v;
}

/* Before literal `lit` is translated: the shared nodes it uses whose home is
 * outside it (used outside it too, or by another literal) are translated
 * here, in the enclosing scope, as TVM's A-normal form binds them: evaluated
 * once, before the closure, with one gradient cell for every use. Inside the
 * literal they are found in the memo (this scope stays open meanwhile);
 * translated inside, they ran again at each call of the closure and a `ref`
 * effect in them repeated (the value differed from the program's). */
static void tr_captured_nodes(AD *a, Expr *lit) {
  if (!a->homes.cross.len) return;
  uint32_t n = 0;
  Expr **xs = fn_captures_of(&a->captures, &a->homes, lit, &n); /* (stable while tr adds lists) */
  for (uint32_t i = 0; i < n && !a->failed; i++) tr(a, xs[i]);
}

static Expr *tr_let_chain(AD *a, Expr *e) {
  while (e->kind == EXPR_LET && !a->failed) {
    Var *x = e->let.var;
    Expr *val = e->let.value;
    Expr *got = memo_get(a, val);
    if (!got && val->kind == EXPR_FN) { /* possibly recursive: bind the name first */
      tr_captured_nodes(a, val);
      Var *nx = new_binder(a, x, false);
      Function *nf = tr_function(a, val->fn, val->span);
      push_var(a, nx, ty_fn(a, nf, val->span));
      memo_put(a, val, ref_of_var(nx));
    } else {
      Expr *tv = got ? got : tr_value(a, val);
      Var *nx = new_binder(a, x, false);
      push_var(a, nx, tv);
      /* a value translated before keeps its first variable: x aliases it, and
       * x is monomorphic where the first may be a polymorphic literal */
      if (!got && !is_atom(val)) memo_put(a, val, ref_of_var(nx));
    }
    e = e->let.body;
  }
  /* the chain's result may be a shared node translated already (a node read
   * before the let and returned after it): its value, not a second run */
  Expr *got = is_atom(e) ? NULL : memo_get(a, e);
  return got ? got : tr_value(a, e);
}

/* An operator or constructor used as a value, as the typed source literal
 * fn (%a1, ..., %an) { op(%a1, ..., %an) } (its inferred function type gives
 * the parameter and result types; an operator value has default attributes).
 * NULL when the type is not a monomorphic function type. */
static Function *eta_expand(AD *a, Expr *e) {
  const Type *t = type_solved(e->type);
  if (!t || t->kind != TYPE_FUNC || t->func.ntparams) return NULL;
  Module *m = a->m;
  uint32_t n = t->func.nargs;
  Var **ps = mem_calloc(n + 1, sizeof *ps);
  Expr **args = mem_calloc(n + 1, sizeof *args);
  for (uint32_t i = 0; i < n; i++) {
    ps[i] = build_fresh_var(m, "a", NULL, e->span);
    ps[i]->type = t->func.args[i];
    args[i] = build_var(m, ps[i], e->span);
    args[i]->type = t->func.args[i];
  }
  Expr *body = expr_call(m, build_copy(m, e), args, n, NULL, e->span);
  body->type = t->func.ret;
  Function *f = build_function(m, ps, n, NULL, body, NULL, e->span);
  f->type = (Type *)t;
  mem_free(ps);
  mem_free(args);
  return f;
}

/* The translation of e as an expression (bindings for its parts pushed). */
static Expr *tr_value(AD *a, Expr *e) {
  Span sp = e->span;
  if (a->failed) return unit(a, sp);
  if (stack_exhausted()) {
    fail(a, sp, "expression nested too deeply");
    return unit(a, sp);
  }
  switch (e->kind) {
  case EXPR_VAR: {
    VarRef *r = vmap_ref(a, e->var.var);
    if (r) return ref_use(a, r, sp);
    /* a captured variable: a constant of the differentiated function */
    if (tensors_only(e->var.var->type, true)) return pair_of(a, e, e->var.var->type, sp);
    fail(a, sp, "cannot differentiate through a captured variable that is not a tensor");
    return unit(a, sp);
  }
  case EXPR_CONST: return pair_of(a, e, e->type, sp);
  case EXPR_GLOBAL:
    if (!e->global.def || !e->global.def->fn) {
      fail(a, sp, "cannot differentiate a call of an external global");
      return unit(a, sp);
    }
    return ty_global(a, grad_global(a, e->global.def), sp);
  case EXPR_OP:
  case EXPR_CTOR: {
    if (e->kind == EXPR_CTOR && e->ctor.ctor->nfields == 0) return ty_ctor(a, map_ctor(a, e->ctor.ctor), sp);
    Function *f = eta_expand(a, e);
    if (f) return ty_fn(a, tr_function(a, f, sp), sp);
    fail(a, sp, e->kind == EXPR_OP ? "cannot differentiate an operator used as a value whose type is not known: wrap it in a function, e.g. fn (%x) { op(%x) }"
                                   : "cannot differentiate a constructor used as a value whose type is not known: wrap it in a function");
    return unit(a, sp);
  }
  case EXPR_CALL: {
    Expr *fn = e->call.fn;
    if (fn->kind == EXPR_OP && e->call.nargs == 1 && (op_traits_flags(fn->op.id) & OPF_IDENTITY) &&
        !tensors_only(e->call.args[0]->type, true))
      return tr(a, e->call.args[0]); /* on_device etc. of a closure, ref or ADT: the value itself (the interpreter's rule) */
    if (fn->kind == EXPR_OP)
      return fn->op.id == OP_ANNOTATION_CHECKPOINT && e->call.nargs == 1 ? tr_checkpoint(a, e) : tr_op_call(a, e);
    uint32_t n = e->call.nargs;
    Expr **args = mem_calloc(n + 2, sizeof *args);
    Expr *r;
    if (fn->kind == EXPR_CTOR) {
      for (uint32_t i = 0; i < n; i++) args[i] = tr(a, e->call.args[i]);
      r = ty_expr_call(a, ty_ctor(a, map_ctor(a, fn->ctor.ctor), fn->span), args, n, NULL, sp);
    } else {
      Expr *f = tr(a, fn);
      for (uint32_t i = 0; i < n; i++) args[i] = tr(a, e->call.args[i]);
      args[n] = k_use(a, sp);
      r = ty_call(a, f, args, n + 1, sp);
    }
    mem_free(args);
    return r;
  }
  case EXPR_TUPLE: {
    Expr **fs = mem_calloc(e->tuple.n + 1, sizeof *fs);
    for (uint32_t i = 0; i < e->tuple.n; i++) fs[i] = tr(a, e->tuple.fields[i]);
    Expr *r = ty_tuple(a, fs, e->tuple.n, sp);
    mem_free(fs);
    return r;
  }
  case EXPR_PROJ: return ty_proj(a, tr(a, e->proj.tuple), e->proj.index, sp);
  case EXPR_FN:
    tr_captured_nodes(a, e);
    return ty_fn(a, tr_function(a, e->fn, sp), sp);
  case EXPR_LET: return tr_let_chain(a, e);
  case EXPR_IF: {
    Expr *c = tr(a, e->if_.cond);
    Expr *cv = push(a, "cond", ty_proj(a, c, 0, sp));
    Expr *t = tr_block(a, e->if_.then_);
    Expr *f = tr_block(a, e->if_.else_);
    return ty_if(a, cv, t, f, sp);
  }
  case EXPR_MATCH: {
    Expr *s = tr(a, e->match.scrut);
    Clause *cs = mem_calloc(e->match.nclauses + 1, sizeof *cs);
    for (uint32_t i = 0; i < e->match.nclauses; i++) {
      cs[i].span = e->match.clauses[i].span;
      cs[i].pattern = tr_pattern(a, e->match.clauses[i].pattern);
      cs[i].body = tr_block(a, e->match.clauses[i].body);
    }
    Expr *r = ty_match(a, s, cs, e->match.nclauses, e->match.partial, sp);
    mem_free(cs);
    return r;
  }
  case EXPR_REF_NEW: return ty_ref_new(a, tr(a, e->ref.arg), sp);
  case EXPR_REF_READ: return ty_ref_read(a, tr(a, e->ref.arg), sp);
  case EXPR_REF_WRITE: {
    Expr *r = tr(a, e->ref_write.ref);
    return ty_ref_write(a, r, tr(a, e->ref_write.value), sp);
  }
  default:
    fail(a, sp, "unexpected expression in a resolved module");
    return unit(a, sp);
  }
}

static void ad_free(AD *a) {
  ptrmap_free(&a->vmap);
  ptrmap_free(&a->gmap);
  ptrmap_free(&a->tpmap);
  ptrmap_free(&a->adt_needs);
  ptrmap_free(&a->adt_map);
  ptrmap_free(&a->ctor_map);
  memo_free(a);
  vec_free(a->open);
  fn_homes_free(&a->homes);
  fn_captures_free(&a->captures);
  grad_op_cache_free(a->ops);
  typeof_fini(&a->tc);
}

/* The type of the top level's result, (value, (gradient of each parameter)),
 * as it will be built, or NULL (LetList.type). */
static Type *top_result_type(AD *a, const Function *f) {
  Type *small[8];
  Type **gs = f->nparams <= 8 ? small : mem_malloc(f->nparams * sizeof *gs);
  bool ok = typeof_ground_known(&a->tc, f->body->type);
  for (uint32_t i = 0; i < f->nparams && ok; i++) ok = typeof_ground_known(&a->tc, gs[i] = f->params[i]->type);
  Type *t = ok ? typeof_tuple_type(&a->tc, (Type *[]){f->body->type, typeof_tuple_type(&a->tc, gs, f->nparams)}, 2) : NULL;
  if (gs != small) mem_free(gs);
  return t;
}

/* The top level (§1.4): pair the parameters, run the translated body on a
 * fresh tape, seed the first leaf of the result, run the tape, return
 * (value, (gradient of each parameter)). */
static Expr *gradient_higher_order(Module *m, Function *f, const RootFacts *facts, Diag *d) {
  AD a = {.m = m, .d = d, .zeros_like = {"zeros_like", -1, NULL}, .ones_like = {"ones_like", -1, NULL},
          .add = {"add", -1, NULL}, .ops = grad_op_cache_new()};
  typeof_init(&a.tc, m);
  /* the homes of shared nodes matter only to the literals in f (tr_captured_nodes;
   * a called global's body is added when it is translated): none, no map of f's nodes */
  if (facts->has_fn) fn_homes_add(&a.homes, f);
  a.memo_vals.data = mem_calloc(facts->compound + 1, sizeof *a.memo_vals.data); /* grown once, not by doubling */
  a.memo_vals.cap = facts->compound + 1;
  ptrmap_reserve(&a.vmap, facts->lets + f->nparams);
  uint8_t one = 1;
  vec_push(a.open, one);
  a.scope = 0;
  LetList top = {.type = top_result_type(&a, f)};
  a.ll = &top;
  Span sp = f->span;
  Function *empty = build_function(m, NULL, 0, a.tc.unit, unit(&a, sp), NULL, sp);
  Var *tape = build_fresh_var(m, "tape", NULL, sp);
  push_var(&a, tape, ty_ref_new(&a, ty_fn(&a, empty, sp), sp));
  a.k = tape;
  Expr **qs = mem_calloc(f->nparams + 1, sizeof *qs);
  for (uint32_t i = 0; i < f->nparams; i++) {
    Var *p = f->params[i];
    qs[i] = push(&a, var_name(p), pair_of(&a, use(&a, p, p->span), p->type, p->span));
    ptrmap_put(&a.vmap, p, qs[i]->type ? ref_of_use(qs[i]) : ref_of_var(qs[i]->var.var));
  }
  Expr *res = tr(&a, f->body);
  Expr *out = NULL;
  if (!a.failed) {
    /* seed: ones_like at the first leaf (overwriting its cell) */
    const Type *t = type_solved(f->body->type);
    Expr *leaf = res;
    while (t->kind == TYPE_TUPLE) {
      leaf = push(&a, "x", ty_proj(&a, leaf, 0, sp));
      t = type_solved(t->tuple.fields[0]);
    }
    Expr *ones = grad_op_call(&a.tc, &a.ones_like, (Expr *[]){ty_proj(&a, leaf, 0, sp)}, 1, sp);
    push_unit(&a, ty_ref_write(&a, ty_proj(&a, leaf, 1, sp), ones, sp));
    push_unit(&a, ty_call(&a, ty_ref_read(&a, k_use(&a, sp), sp), NULL, 0, sp));
    Expr *value = atomize(&a, "v", value_of(&a, res, f->body->type, sp));
    Expr **gs = mem_calloc(f->nparams + 1, sizeof *gs);
    for (uint32_t i = 0; i < f->nparams; i++) gs[i] = grad_of(&a, qs[i], f->params[i]->type, sp);
    Expr *grads = ty_tuple(&a, gs, f->nparams, sp);
    mem_free(gs);
    Expr *body = wrap(&top, ty_tuple(&a, (Expr *[]){value, grads}, 2, sp));
    Function *nf = build_function(m, f->params, f->nparams, grad_result_annotation(m, f), body, f->attrs, sp);
    out = ty_fn(&a, nf, sp);
  }
  mem_free(qs);
  ad_free(&a);
  return out;
}

/* ================================================================== entry points */

Expr *gradient_of_function(Module *m, Function *f, GradMode mode, Diag *d) {
  int before = d->nerrors;
  if (!grad_check_signature(m, f, mode == GRAD_FIRST_ORDER, d)) return NULL;
  if (mode == GRAD_FIRST_ORDER) return gradient_first_order(m, f, d);
  RootFacts facts;
  if (!check_rules(f, true, d, &facts)) return NULL;
  Expr *r = gradient_higher_order(m, f, &facts, d);
  return d->nerrors > before ? NULL : r;
}

static GlobalDef *main_of(PassCtx *c) {
  GlobalDef *main = module_find_global(c->m, "main");
  if (main && main->fn) return main;
  diag_plain(c->d, DIAG_ERROR, "pass %s: the module has no @main function", c->def->name);
  return NULL;
}

static bool run_on_main(PassCtx *c, GradMode mode) {
  GlobalDef *main = main_of(c);
  Expr *g = main ? gradient_of_function(c->m, main->fn, mode, c->d) : NULL;
  if (!g) return false;
  main->fn = g->fn;
  return true;
}

/* A graph-shared node with an effect used in a scope (a literal, a branch,
 * a clause) and outside it runs once, where A-normal form binds it (before
 * the scope); the translation's memo is scoped, so such a node would be
 * translated, and run, twice (a ref made twice, a read moved after a
 * write). Bound first, as PartialEvaluate does; the module is re-typed only
 * when a function changed (*changed). */
static bool bind_shared_effects(PassCtx *c, bool *changed) {
  Module *m = c->m;
  Expr **bodies = mem_calloc(m->ndefs + 1, sizeof *bodies);
  for (uint32_t i = 0; i < m->ndefs; i++) bodies[i] = m->defs[i]->fn ? m->defs[i]->fn->body : NULL;
  bool ok = normal_form_bind_lifted_effects(c, NULL);
  *changed = false;
  for (uint32_t i = 0; i < m->ndefs && ok; i++) *changed |= m->defs[i]->fn && m->defs[i]->fn->body != bodies[i];
  mem_free(bodies);
  return ok && (!*changed || pass_retype(c));
}

/* gradient_of_function's higher-order mode on @main, shared effects bound
 * first where the code has scopes (code without any, a straight chain,
 * skips that walk of the module). */
static bool run_higher_order_on_main(PassCtx *c) {
  GlobalDef *main = main_of(c);
  if (!main) return false;
  Function *f = main->fn;
  int before = c->d->nerrors;
  RootFacts facts;
  if (!grad_check_signature(c->m, f, false, c->d) || !check_rules(f, true, c->d, &facts)) return false;
  bool changed = false;
  if (facts.scoped && !bind_shared_effects(c, &changed)) return false;
  if (changed && !check_rules(f, true, c->d, &facts)) return false; /* (the sizes changed) */
  Expr *g = gradient_higher_order(c->m, f, &facts, c->d);
  if (!g || c->d->nerrors > before) return false;
  main->fn = g->fn;
  return true;
}

bool pass_GRADIENT(PassCtx *c);
bool pass_GRADIENT(PassCtx *c) {
  const char *mode = pass_opt_string(c, "mode");
  if (strcmp(mode, "higher_order") == 0) return run_higher_order_on_main(c);
  if (strcmp(mode, "first_order") == 0) return run_on_main(c, GRAD_FIRST_ORDER);
  diag_plain(c->d, DIAG_ERROR, "pass Gradient: mode must be higher_order or first_order, not '%s'", mode);
  return false;
}

bool pass_FIRST_ORDER_GRADIENT(PassCtx *c);
bool pass_FIRST_ORDER_GRADIENT(PassCtx *c) { return run_on_main(c, GRAD_FIRST_ORDER); }
