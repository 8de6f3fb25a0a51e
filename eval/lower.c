/* eval/lower.c — lowering: resolved, typed AST → register bytecode (eval/code.h).
 *
 * One Code per function. Per function, a pre-pass counts how many parents
 * each node of the body DAG has (not entering nested function literals):
 * nodes reached more than once (graph bindings) get a memo register and are
 * compiled as `JSET r, done; <compute into r>; done:` at every use, so each is
 * evaluated at most once per activation, whichever path reaches it first.
 * Function literals are compiled later from a work list: their free
 * variables (computed by an iterative walk) become the captures, plus the
 * shared nodes they use whose home is outside them (ir/walk.h FnHomes: a
 * node used inside a literal and outside it is evaluated outside, once per
 * activation there, as TVM's A-normal form does, and the closure captures its
 * value; it is not re-evaluated at each call of the closure), and a
 * let-bound function that mentions its own variable gets the closure itself
 * in a register at call time instead of capturing it (no refcount cycle).
 * Calls in tail position (function body, if branches, clause bodies, let
 * bodies) become TCALL/TCALLG. After a function is emitted, a backward
 * liveness pass (all jumps go forward, so one reverse sweep suffices) marks
 * every register read that is the value's last use with ARG_MOVE.
 *
 * Peepholes, in order: before liveness, arguments of a self tail call are
 * computed directly into their parameters where nothing in between reads the
 * parameter (retarget_self_args); after it, typed comparisons fuse with their
 * JMPF, adjacent typed ADD/SUB/MUL pairs whose temporary dies fuse into one
 * instruction (fuse_arith), clear lists are computed, and self tail calls
 * with few moving arguments become TSELFM or TSELF1 (compact_self_moves).
 * Nested typed float32 arithmetic (and a comparison on top) is emitted as
 * one FX instruction evaluating the whole tree (emit_fx). Last, straight
 * lines of FX / typed arithmetic / fused comparisons leading to a self tail
 * call become FXB traces (fx_traces, eval/code.h).
 *
 * Registers are allocated stack-wise; let chains are iterated, other nesting
 * recurses under stack_exhausted() guards.
 */
#include "eval/lower.h"

#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "runtime/tensor.h"

/* ------------------------------------------------------------ state */

/* A function waiting to be lowered. */
typedef struct Pending {
  Function *fn;
  Code *code;
  Var **caps;
  uint32_t ncaps;
  Var *self;
  const void *key;   /* its node in FnHomes: the root Function or the EXPR_FN literal; NULL: none */
  Expr **ncaps_e;    /* shared nodes it captures (computed by an enclosing function) */
  uint32_t nncaps;
} Pending;

typedef struct Lower {
  Module *m;
  Diag *d;
  bool failed;
  VEC(Code *) codes;
  PtrMap globals;       /* GlobalDef* → index */
  PtrMap op_codes;      /* (op id + 1) → code index of the op as a function value */
  PtrMap ctor_codes;    /* Ctor* → code index of the ctor as a function value */
  VEC(Pending) pending;
  Value *global_vals;
  /* Nodes shared across function literals (ir/walk.h FnHomes): a node used
   * from more than one function is evaluated in its home function, once per
   * activation, and captured by the literals that use it, as in TVM (which
   * interprets the A-normal form), not re-evaluated per closure call. */
  FnHomes homes;
  FnCaptures captures; /* each literal's captured shared nodes (when has_cross) */
  PtrMap cross_head;   /* home tree index + 1 -> 1 + first index in cross_list */
  VEC(struct CrossItem { Expr *e; uint32_t next; }) cross_list;
  bool has_cross;
  /* Captures of each function literal met (free_vars), innermost first: a
   * literal's walk takes a nested literal's captures from here instead of
   * walking its body again (10,000 nested literals were quadratic). */
  PtrMap fv_memo; /* EXPR_FN node -> 1 + index in fv_list */
  VEC(struct FvInfo { Var **vars; uint32_t n; Expr **ncaps; uint32_t nncaps; }) fv_list;
} Lower;

/* A shared node evaluated before the branches of `owner` (conversion order: ix). */
typedef struct Hoist {
  const Expr *owner;
  uint32_t owner_ix, ix;
  Expr *e;
} Hoist;
typedef VEC(Hoist) HoistList;

typedef struct F {
  Lower *L;
  Code *code;
  VEC(uint32_t) ins;
  VEC(Value) consts;
  VEC(const Ctor *) ctors;
  VEC(OpCall) ops;
  VEC(SpanEntry) spans;
  PtrMap vars;   /* Var* → register */
  PtrMap uses;   /* Expr* → parent count (body DAG, outside nested fns) */
  PtrMap memo;   /* Expr* → memo register */
  PtrMap inl;    /* EXPR_FN literal → 1: its only use is as a callee, lowered in place */
  /* Shared nodes known to be computed at the current emission point: node →
   * the control region it was computed in; valid while that region is open.
   * Regions open for each if branch, match clause and JSET-guarded body. */
  PtrMap avail;
  VEC(uint8_t) region_open; /* by region id; region 0 (the function body) is always open */
  uint32_t region;          /* the innermost open region */
  uint32_t top, maxreg;
  PtrMap imm_out;         /* (pc + 1) → 1: the instruction writes an immediate (by type) */
  VEC(uint32_t) clears;   /* Code.clears */
  VEC(uint32_t) xprog;    /* Code.xprog: FX step programs */
  const Function *fn;     /* the Relay function, for parameter types (NULL: op/ctor wrappers) */
  Var *const *caps;       /* its captured variables */
  uint32_t nvarcaps;
  Expr *const *ncaps_e;   /* then its captured shared nodes (in memo, always available) */
  PtrMap ncapset;         /* those nodes -> 1 */
  /* Shared nodes evaluated before an if's / match's branches (hoist_scan):
   * the if/match node -> 1 + first index in hoist_list; a run ends at a
   * different owner. */
  PtrMap hoist_head;
  HoistList hoist_list;
} F;

static const char *const opnames[] = {
#define X(name, layout) #name,
    EVAL_OPCODES(X)
#undef X
};
static const char *const layouts[] = {
#define X(name, layout) layout,
    EVAL_OPCODES(X)
#undef X
};
const char *code_opname(Opcode op) { return opnames[op]; }
const char *code_layout(Opcode op) { return layouts[op]; }

Span code_span_at(const Code *c, uint32_t pc) {
  uint32_t lo = 0, hi = c->nspans;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (c->spans[mid].pc <= pc) lo = mid + 1;
    else hi = mid;
  }
  return lo ? c->spans[lo - 1].span : c->span;
}

static void fail(F *f, Span sp, const char *msg) {
  if (!f->L->failed) diag_error(f->L->d, sp, "%s", msg);
  f->L->failed = true;
}

static bool too_deep(F *f, Span sp) {
  if (!stack_exhausted()) return false;
  fail(f, sp, "expression nested too deeply");
  return true;
}

/* ------------------------------------------------------------ emission */

static uint32_t pc_now(F *f) { return (uint32_t)f->ins.len; }
static void w(F *f, uint32_t word) { vec_push(f->ins, word); }
static void op(F *f, Opcode o, Span sp) {
  SpanEntry e = {pc_now(f), sp};
  vec_push(f->spans, e);
  w(f, (uint32_t)o);
}
/* Emits a jump-target placeholder; returns its position for patching. */
static uint32_t hole(F *f) {
  w(f, 0);
  return pc_now(f) - 1;
}
static void patch(F *f, uint32_t at) { f->ins.data[at] = pc_now(f); }

static uint32_t reg_alloc(F *f) {
  uint32_t r = f->top++;
  if (f->top > f->maxreg) f->maxreg = f->top;
  return r;
}

static uint32_t add_const(F *f, Value v) {
  vec_push(f->consts, v);
  return (uint32_t)f->consts.len - 1;
}

static uint32_t add_ctor(F *f, const Ctor *c) {
  for (size_t i = 0; i < f->ctors.len; i++)
    if (f->ctors.data[i] == c) return (uint32_t)i;
  vec_push(f->ctors, c);
  return (uint32_t)f->ctors.len - 1;
}

static uint32_t add_opcall(F *f, int32_t id, const Attrs *attrs, const Type *ty) {
  OpCall oc = {.op = id, .attrs = attrs, .out_type = ty, .cast_imm = false, .cast_to = DT_I32, .span = {0}};
  const AttrValue *a = id == OP_CAST && attrs ? attrs_get(attrs, "dtype") : NULL;
  if (a && a->kind == AV_STRING && dtype_parse(a->s.chars, a->s.len, &oc.cast_to) &&
      value_dtype_is_immediate(oc.cast_to))
    oc.cast_imm = true;
  vec_push(f->ops, oc);
  return (uint32_t)f->ops.len - 1;
}

static Value const_value(const ConstTensor *c) {
  if (c->ndim == 0 && value_dtype_is_immediate(c->dtype)) {
    if (dtype_is_float(c->dtype)) return value_float(c->dtype, tensor_load_f64(c->dtype, c->data));
    return value_int(c->dtype, tensor_load_i64(c->dtype, c->data));
  }
  Tensor *t = tensor_from_const(c);
  if (!t) mem_oom(sizeof(Tensor));
  return (Value){VK_TENSOR, 0, {.t = t}};
}

/* ------------------------------------------------------------ DAG walks */

/* Children of an expression in evaluation order (not entering fn bodies). */
static uint32_t children(Expr *e, Expr **out, uint32_t cap, Expr ***many) {
  *many = NULL;
  switch (e->kind) {
  case EXPR_CALL: *many = e->call.args; out[0] = e->call.fn; return e->call.nargs + 1;
  case EXPR_TUPLE: *many = e->tuple.fields; return e->tuple.n;
  case EXPR_PROJ: out[0] = e->proj.tuple; return 1;
  case EXPR_LET: out[0] = e->let.value; out[1] = e->let.body; return 2;
  case EXPR_IF: out[0] = e->if_.cond; out[1] = e->if_.then_; out[2] = e->if_.else_; return 3;
  case EXPR_MATCH: out[0] = e->match.scrut; return 1; /* clause bodies handled by callers */
  case EXPR_REF_NEW:
  case EXPR_REF_READ: out[0] = e->ref.arg; return 1;
  case EXPR_REF_WRITE: out[0] = e->ref_write.ref; out[1] = e->ref_write.value; return 2;
  default: (void)cap; return 0;
  }
}

typedef VEC(Expr *) ExprStack;

/* Pushes every direct child of e (including clause bodies; fn bodies only
 * when `into_fns`). */
static void push_children(ExprStack *st, Expr *e, bool into_fns) {
  Expr *few[3], **many;
  uint32_t n = children(e, few, 3, &many);
  if (e->kind == EXPR_CALL) {
    vec_push(*st, e->call.fn);
    for (uint32_t i = 0; i < e->call.nargs; i++) vec_push(*st, e->call.args[i]);
  } else if (many) {
    for (uint32_t i = 0; i < n; i++) vec_push(*st, many[i]);
  } else {
    for (uint32_t i = 0; i < n; i++) vec_push(*st, few[i]);
  }
  if (e->kind == EXPR_MATCH)
    for (uint32_t i = 0; i < e->match.nclauses; i++) vec_push(*st, e->match.clauses[i].body);
  if (e->kind == EXPR_FN && into_fns) vec_push(*st, e->fn->body);
}

/* Adds one parent to `root` and, when root is new, counts the parents of
 * the nodes below it (nested fn bodies excluded). Calls whose callee is a
 * function literal are collected in `fn_calls` (may be NULL). */

static void count_uses_from(Expr *root, PtrMap *uses, ExprVec *fn_calls, const PtrMap *stop) {
  int64_t *r = ptrmap_slot(uses, root);
  if ((*r)++ > 0) return;
  ExprStack st = {0};
  vec_push(st, root);
  while (st.len) {
    Expr *e = st.data[--st.len];
    if (stop && stop->len && ptrmap_find(stop, e)) continue; /* a captured shared node: a leaf here */
    if (fn_calls && e->kind == EXPR_CALL && e->call.fn->kind == EXPR_FN) vec_push(*fn_calls, e);
    size_t before = st.len;
    push_children(&st, e, false);
    /* count each new edge; descend only on first sight */
    size_t keep = before;
    for (size_t i = before; i < st.len; i++) {
      Expr *c = st.data[i];
      int64_t n = 0;
      bool seen = ptrmap_get(uses, c, &n);
      ptrmap_put(uses, c, n + 1);
      if (!seen) st.data[keep++] = c;
    }
    st.len = keep;
  }
  vec_free(st);
}

/* Direct calls of function literals (`fn (...) {...}(args)`, FuseOps'
 * Primitive=1 groups) whose literal has no other use are lowered in place:
 * the arguments go to registers bound to the parameters and the body is
 * emitted right there, so the call makes no closure and pushes no frame.
 * Their bodies count as part of this function (`uses`), found to a fixed
 * point (an inlined body may hold more such calls). A literal whose count
 * rises above one once every body is counted (a body shares it) is
 * excluded and the counting restarts without it. */
static void count_uses_inlining(F *f, Expr *body) {
  PtrMap excluded = {0};
  for (;;) {
    ExprVec calls = {0}, chosen = {0};
    count_uses_from(body, &f->uses, &calls, &f->ncapset);
    for (size_t i = 0; i < calls.len; i++) {
      Expr *call = calls.data[i], *lit = call->call.fn;
      int64_t n = 0;
      ptrmap_get(&f->uses, lit, &n);
      /* a literal the enclosing code shares (captured here) is a closure
       * made there: lowered in place, its body's shared nodes were computed
       * anew per call (a `ref(100)` per call of the capturing closure) */
      if (n != 1 || lit->fn->nparams != call->call.nargs || ptrmap_get(&excluded, lit, NULL) ||
          ptrmap_get(&f->inl, lit, NULL) || ptrmap_get(&f->ncapset, lit, NULL))
        continue;
      ptrmap_put(&f->inl, lit, 1);
      vec_push(chosen, lit);
      count_uses_from(lit->fn->body, &f->uses, &calls, &f->ncapset); /* appends further calls */
    }
    bool redo = false;
    for (size_t i = 0; i < chosen.len; i++) {
      int64_t n = 0;
      ptrmap_get(&f->uses, chosen.data[i], &n);
      if (n != 1) {
        ptrmap_put(&excluded, chosen.data[i], 1);
        redo = true;
      }
    }
    vec_free(calls);
    vec_free(chosen);
    if (!redo) break;
    ptrmap_free(&f->uses);
    ptrmap_free(&f->inl);
    memset(&f->uses, 0, sizeof f->uses);
    memset(&f->inl, 0, sizeof f->inl);
  }
  ptrmap_free(&excluded);
}

static bool trivial(const Expr *e) {
  return e->kind == EXPR_VAR || e->kind == EXPR_CONST || e->kind == EXPR_GLOBAL ||
         e->kind == EXPR_OP || e->kind == EXPR_CTOR;
}

static void pattern_binders(Pattern *p, PtrMap *bound) {
  VEC(Pattern *) st = {0};
  vec_push(st, p);
  while (st.len) {
    Pattern *q = st.data[--st.len];
    if (q->kind == PAT_VAR) ptrmap_put(bound, q->var, 1);
    else if (q->kind == PAT_CTOR)
      for (uint32_t i = 0; i < q->ctor.nargs; i++) vec_push(st, q->ctor.args[i]);
    else if (q->kind == PAT_TUPLE)
      for (uint32_t i = 0; i < q->tuple.n; i++) vec_push(st, q->tuple.fields[i]);
  }
  vec_free(st);
}

/* ------------------------------------------------------------ hoisting */

/* Where a shared node is evaluated inside its function. TVM's interpreter
 * runs the A-normal form (its Prepare converts first): a shared node is bound
 * in the innermost scope (the function body, an if branch, a match clause)
 * enclosing all its uses, at the point the conversion first meets it, so one
 * first met inside a branch but also used outside that branch is evaluated
 * before the if / match (after its condition or scrutinee), even when the
 * branch is not taken. The JSET guards alone would evaluate it lazily inside
 * the branch, which effects (a ref read or write) make visible: `%r =
 * ref_read(%c); if (%p) { ref_write(%c, 10); %r } else { 0 }; ... %r` reads
 * before the if. hoist_scan finds, for each if and match of the function,
 * the shared nodes to evaluate before its branches, in conversion order
 * (children left to right, call arguments before the callee, post-order).
 * Linear in the body, plus an O(log depth) scope-tree step per edge into a
 * shared node. Not covered: a node captured by a nested literal created
 * inside a branch (emit_fn evaluates it where the literal is made). */

/* The children of e in conversion order, with the scope each sits in: `s` itself, or a new branch /
 * clause scope under it owned by e. Shared nodes captured from outside and
 * atoms are left out (no scope needed). */
typedef struct HoistEdge {
  Expr *child;
  uint32_t scope;
} HoistEdge;

static bool hoist_leaf(F *f, const Expr *e) { return trivial(e) || (f->ncapset.len && ptrmap_find(&f->ncapset, e)); }

typedef VEC(HoistEdge) HoistEdges;

static void hoist_children(F *f, Expr *e, uint32_t s, ScopeTree *t, PtrMap *owner, HoistEdges *out) {
#define HC(c, sc)                                                                                  \
  do {                                                                                             \
    Expr *c_ = (c);                                                                                \
    if (c_ && !hoist_leaf(f, c_)) vec_push(*out, ((HoistEdge){c_, (sc)}));                        \
  } while (0)
  switch (e->kind) {
  case EXPR_CALL:
    for (uint32_t i = 0; i < e->call.nargs; i++) HC(e->call.args[i], s);
    HC(e->call.fn, s);
    break;
  case EXPR_FN:
    if (ptrmap_find(&f->inl, e)) HC(e->fn->body, s); /* lowered in place: part of this function */
    break;
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) HC(e->tuple.fields[i], s);
    break;
  case EXPR_PROJ: HC(e->proj.tuple, s); break;
  case EXPR_LET:
    HC(e->let.value, s);
    HC(e->let.body, s);
    break;
  case EXPR_IF: {
    HC(e->if_.cond, s);
    uint32_t a = t ? scope_tree_add(t, s) : 0, b = t ? scope_tree_add(t, s) : 0;
    if (t) {
      ptrmap_put(owner, (void *)(uintptr_t)(a + 1), (int64_t)(uintptr_t)e);
      ptrmap_put(owner, (void *)(uintptr_t)(b + 1), (int64_t)(uintptr_t)e);
    }
    HC(e->if_.then_, a);
    HC(e->if_.else_, b);
    break;
  }
  case EXPR_MATCH:
    HC(e->match.scrut, s);
    for (uint32_t i = 0; i < e->match.nclauses; i++) {
      uint32_t a = t ? scope_tree_add(t, s) : 0;
      if (t) ptrmap_put(owner, (void *)(uintptr_t)(a + 1), (int64_t)(uintptr_t)e);
      HC(e->match.clauses[i].body, a);
    }
    break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: HC(e->ref.arg, s); break;
  case EXPR_REF_WRITE:
    HC(e->ref_write.ref, s);
    HC(e->ref_write.value, s);
    break;
  default: break;
  }
#undef HC
}

static int hoist_cmp(const void *a, const void *b) {
  const Hoist *x = a, *y = b;
  if (x->owner_ix != y->owner_ix) return x->owner_ix < y->owner_ix ? -1 : 1;
  return x->ix < y->ix ? -1 : x->ix > y->ix;
}

static void hoist_scan(F *f, Expr *body) {
  if (hoist_leaf(f, body)) return;
  /* 1. post-order in conversion order: index of each node, and the order */
  PtrMap ix = {0};   /* node -> post-order index + 1 (0 while open) */
  ExprVec order = {0};
  HoistEdges kids = {0};
  struct Frame { Expr *e; bool done; };
  VEC(struct Frame) st = {0};
  bool branches = false;
  vec_push(st, ((struct Frame){body, false}));
  while (st.len) {
    struct Frame fr = st.data[--st.len];
    if (fr.done) {
      ptrmap_put(&ix, fr.e, (int64_t)order.len + 1);
      vec_push(order, fr.e);
      continue;
    }
    if (ptrmap_find(&ix, fr.e)) continue;
    ptrmap_put(&ix, fr.e, 0);
    if (fr.e->kind == EXPR_IF || fr.e->kind == EXPR_MATCH) branches = true;
    vec_push(st, ((struct Frame){fr.e, true}));
    kids.len = 0;
    hoist_children(f, fr.e, 0, NULL, NULL, &kids);
    for (size_t i = kids.len; i-- > 0;)
      if (!ptrmap_find(&ix, kids.data[i].child)) vec_push(st, ((struct Frame){kids.data[i].child, false}));
  }
  vec_free(st);
  if (!branches) goto done;
  /* 2. scopes, parents before children (reverse post-order): a node's scope
   * is the innermost one enclosing every use; each edge into a shared node
   * is kept with the scope of its use */
  ScopeTree t = {0};
  PtrMap scope = {0}, owner = {0};
  HoistEdges uses = {0};
  ptrmap_put(&scope, body, (int64_t)scope_tree_add(&t, SCOPE_TREE_NONE) + 1); /* scope + 1 */
  for (size_t k = order.len; k-- > 0;) {
    Expr *e = order.data[k];
    int64_t s = 0;
    ptrmap_get(&scope, e, &s);
    kids.len = 0;
    hoist_children(f, e, (uint32_t)(s - 1), &t, &owner, &kids);
    for (size_t i = 0; i < kids.len; i++) {
      HoistEdge h = kids.data[i];
      int64_t *cs = ptrmap_slot(&scope, h.child); /* 0: no use seen yet */
      *cs = *cs ? (int64_t)scope_tree_lca(&t, (uint32_t)(*cs - 1), h.scope) + 1 : (int64_t)h.scope + 1;
      if (ptrmap_find(&f->memo, h.child)) vec_push(uses, h);
    }
  }
  /* 3. a use in a scope strictly inside the node's own scope: the node is
   * evaluated before the if / match owning the branch on the way there */
  for (size_t i = 0; i < uses.len; i++) {
    Expr *c = uses.data[i].child;
    int64_t cs = 0;
    ptrmap_get(&scope, c, &cs);
    uint32_t home = (uint32_t)(cs - 1), at = uses.data[i].scope;
    if (at == home) continue;
    uint32_t br = scope_tree_up(&t, at, t.data[home].depth + 1);
    int64_t o = 0, oi = 0, ci = 0;
    if (!ptrmap_get(&owner, (void *)(uintptr_t)(br + 1), &o)) continue;
    ptrmap_get(&ix, (Expr *)(uintptr_t)o, &oi);
    ptrmap_get(&ix, c, &ci);
    Hoist hh = {(const Expr *)(uintptr_t)o, (uint32_t)oi, (uint32_t)ci, c};
    vec_push(f->hoist_list, hh);
  }
  if (f->hoist_list.len) {
    qsort(f->hoist_list.data, f->hoist_list.len, sizeof *f->hoist_list.data, hoist_cmp);
    size_t k = 0;
    for (size_t i = 0; i < f->hoist_list.len; i++) { /* drop repeats */
      if (k && f->hoist_list.data[k - 1].owner == f->hoist_list.data[i].owner &&
          f->hoist_list.data[k - 1].e == f->hoist_list.data[i].e)
        continue;
      f->hoist_list.data[k++] = f->hoist_list.data[i];
    }
    f->hoist_list.len = k;
    for (size_t i = k; i-- > 0;) ptrmap_put(&f->hoist_head, f->hoist_list.data[i].owner, (int64_t)i + 1);
  }
  vec_free(uses);
  ptrmap_free(&scope);
  ptrmap_free(&owner);
  scope_tree_free(&t);
done:
  vec_free(kids);
  vec_free(order);
  ptrmap_free(&ix);
}

/* ------------------------------------------------------------ homes */

/* After fn_homes_add on every root: the cross nodes listed under their home. */
static void home_index(Lower *L) {
  for (size_t i = 0; i < L->homes.cross.cap; i++) {
    Expr *e = (Expr *)L->homes.cross.slots[i].key;
    if (!e) continue;
    uint32_t h = fn_homes_home(&L->homes, e);
    if (h >= FN_HOMES_NONE) continue;
    int64_t *head = ptrmap_slot(&L->cross_head, (void *)(uintptr_t)(h + 1));
    struct CrossItem it = {e, (uint32_t)*head};
    vec_push(L->cross_list, it);
    *head = (int64_t)L->cross_list.len;
    L->has_cross = true;
  }
}

/* The captures of the literal `lit` (an EXPR_FN node whose nested literals
 * have theirs in L->fv_memo already): its free variables in first-use order
 * and, when the global has cross nodes, the shared nodes it captures (ir/walk.h
 * fn_captures_of; their home is outside it: evaluated there, their variables
 * are not captured for them). A nested literal is not entered: its own
 * captures stand for it, each variable as a use here, each captured node
 * either captured here too or (its home is in here) walked here, in the same
 * depth-first order as fn_captures_of's walk. */
static const struct FvInfo *fv_of(Lower *L, Expr *lit);

static void fv_compute(Lower *L, Expr *lit_node) {
  Function *fn = lit_node->fn;
  PtrMap seen = {0}, bound = {0}, used = {0};
  VEC(Var *) order = {0};
  const Expr *lit = L->has_cross ? lit_node : NULL;
  for (uint32_t i = 0; i < fn->nparams; i++) ptrmap_put(&bound, fn->params[i], 1);
  ExprStack st = {0};
  vec_push(st, fn->body);
  while (st.len) {
    Expr *e = st.data[--st.len];
    if (ptrmap_get(&seen, e, NULL)) continue;
    ptrmap_put(&seen, e, 1);
    if (lit && !trivial(e) && fn_homes_captured(&L->homes, e, lit)) continue; /* in fn_captures_of's list */
    switch (e->kind) {
    case EXPR_VAR:
      if (!ptrmap_get(&used, e->var.var, NULL)) {
        ptrmap_put(&used, e->var.var, 1);
        vec_push(order, e->var.var);
      }
      break;
    case EXPR_LET: ptrmap_put(&bound, e->let.var, 1); break;
    case EXPR_FN: {
      int64_t k = 0;
      /* fv_of computed it first (else now, recursing) */
      const struct FvInfo *in = ptrmap_get(&L->fv_memo, e, &k) ? &L->fv_list.data[k - 1] : fv_of(L, e);
      for (uint32_t i = 0; i < in->n; i++)
        if (!ptrmap_get(&used, in->vars[i], NULL)) {
          ptrmap_put(&used, in->vars[i], 1);
          vec_push(order, in->vars[i]);
        }
      for (uint32_t i = in->nncaps; i-- > 0;) vec_push(st, in->ncaps[i]); /* captured here or walked; the first on top */
      continue;
    }
    case EXPR_MATCH:
      for (uint32_t i = 0; i < e->match.nclauses; i++) pattern_binders(e->match.clauses[i].pattern, &bound);
      break;
    default: break;
    }
    size_t before = st.len;
    push_children(&st, e, false);
    /* visit children left to right: reverse the pushed run */
    for (size_t i = before, j = st.len; i + 1 < j; i++, j--) {
      Expr *t = st.data[i];
      st.data[i] = st.data[j - 1];
      st.data[j - 1] = t;
    }
  }
  struct FvInfo in = {0};
  in.vars = arena_alloc(L->m->arena, (order.len + 1) * sizeof *in.vars);
  for (size_t i = 0; i < order.len; i++)
    if (!ptrmap_get(&bound, order.data[i], NULL)) in.vars[in.n++] = order.data[i];
  if (lit) in.ncaps = fn_captures_of(&L->captures, &L->homes, lit_node, &in.nncaps);
  vec_push(L->fv_list, in);
  ptrmap_put(&L->fv_memo, lit_node, (int64_t)L->fv_list.len);
  vec_free(st);
  vec_free(order);
  ptrmap_free(&seen);
  ptrmap_free(&bound);
  ptrmap_free(&used);
}

/* The captures of literal `lit`, computing first those of every literal
 * nested in it that has none yet, innermost first (an explicit post-order
 * walk, which stops at known literals and at nodes lit captures). */
static const struct FvInfo *fv_of(Lower *L, Expr *lit) {
  int64_t k = 0;
  if (ptrmap_get(&L->fv_memo, lit, &k)) return &L->fv_list.data[k - 1];
  typedef struct { Expr *e; bool post; } Item;
  VEC(Item) st = {0};
  ExprStack kids = {0};
  PtrMap seen = {0};
  vec_push(st, ((Item){lit, false}));
  while (st.len) {
    Item it = st.data[--st.len];
    Expr *e = it.e;
    if (it.post) {
      fv_compute(L, e);
      continue;
    }
    if (ptrmap_get(&seen, e, NULL) || (e->kind == EXPR_FN && ptrmap_get(&L->fv_memo, e, NULL))) continue;
    ptrmap_put(&seen, e, 1);
    if (e != lit && L->has_cross && !trivial(e) && fn_homes_captured(&L->homes, e, lit)) continue;
    if (e->kind == EXPR_FN) vec_push(st, ((Item){e, true}));
    kids.len = 0;
    push_children(&kids, e, true);
    for (size_t i = 0; i < kids.len; i++) vec_push(st, ((Item){kids.data[i], false}));
  }
  vec_free(kids);
  vec_free(st);
  ptrmap_free(&seen);
  ptrmap_get(&L->fv_memo, lit, &k);
  return &L->fv_list.data[k - 1];
}

/* Free variables of a function literal, in first-use order (a fresh arena
 * array: the caller may edit it), and the shared nodes it captures in
 * *ncaps (see fv_compute). */
static Var **free_vars(Lower *L, Expr *lit, uint32_t *n, Expr ***ncaps, uint32_t *nncaps) {
  const struct FvInfo *in = fv_of(L, lit);
  *n = in->n;
  *ncaps = in->ncaps;
  *nncaps = in->nncaps;
  return arena_memdup(L->m->arena, in->vars, (in->n + 1) * sizeof *in->vars);
}

/* ------------------------------------------------------------ codes */

static Code *code_new(Lower *L, const char *name, Span sp) {
  Code *c = mem_calloc(1, sizeof *c);
  c->name = name;
  c->span = sp;
  c->self_reg = -1;
  vec_push(L->codes, c);
  return c;
}

static uint32_t code_index(Lower *L, const Code *c) {
  for (size_t i = L->codes.len; i-- > 0;)
    if (L->codes.data[i] == c) return (uint32_t)i;
  UNREACHABLE();
}

static void f_finish(F *f);

/* The body of a code object that stands for an operator or a constructor as
 * a function value (op_code, ctor_code): instruction `o` (I_KOP or I_ADT,
 * with operand-table index `what`) over the n parameters into register n,
 * returned. */
static void forwarding_body(F *f, Opcode o, uint32_t what, uint32_t n, Span sp) {
  f->code->nparams = n;
  f->top = f->maxreg = n + 1;
  op(f, o, sp);
  w(f, n);
  w(f, what);
  w(f, n);
  for (uint32_t i = 0; i < n; i++) w(f, i);
  op(f, I_RET, sp);
  w(f, n);
  w(f, 0); /* clear list, filled by heap_clears */
  f_finish(f);
}

/* A code object implementing operator `id` as a function value. */
static uint32_t op_code(Lower *L, int32_t id, Span sp) {
  int64_t idx;
  if (ptrmap_get(&L->op_codes, (void *)(intptr_t)(id + 1), &idx)) return (uint32_t)idx;
  const OpDef *def = op_get(id);
  Code *c = code_new(L, def->name, sp);
  F f = {.L = L, .code = c};
  uint32_t n = def->num_inputs > 0 ? (uint32_t)def->num_inputs : 0;
  forwarding_body(&f, I_KOP, add_opcall(&f, id, NULL, NULL), n, sp);
  idx = (int64_t)code_index(L, c);
  ptrmap_put(&L->op_codes, (void *)(intptr_t)(id + 1), idx);
  return (uint32_t)idx;
}

/* A code object implementing constructor `ctor` as a function value. */
static uint32_t ctor_code(Lower *L, const Ctor *ctor, Span sp) {
  int64_t idx;
  if (ptrmap_get(&L->ctor_codes, ctor, &idx)) return (uint32_t)idx;
  Code *c = code_new(L, ctor->name, sp);
  F f = {.L = L, .code = c};
  forwarding_body(&f, I_ADT, add_ctor(&f, ctor), ctor->nfields, sp);
  idx = (int64_t)code_index(L, c);
  ptrmap_put(&L->ctor_codes, ctor, idx);
  return (uint32_t)idx;
}

/* ------------------------------------------------------------ expressions */

static void emit_expr(F *f, Expr *e, uint32_t dst);
static void emit_tail(F *f, Expr *e);
static uint32_t operand(F *f, Expr *e);
static bool memo_reg(F *f, Expr *e, uint32_t *r);

static uint32_t var_reg(F *f, Var *v, Span sp) {
  int64_t r;
  if (ptrmap_get(&f->vars, v, &r)) return (uint32_t)r;
  fail(f, sp, "internal error: variable without a register");
  return 0;
}

/* Evaluates the operands of a call into registers (left to right). */
static uint32_t *operands(F *f, Expr **args, uint32_t n, uint32_t *buf, uint32_t cap) {
  uint32_t *regs = n <= cap ? buf : mem_malloc(n * sizeof *regs);
  for (uint32_t i = 0; i < n; i++) regs[i] = operand(f, args[i]);
  return regs;
}

static void emit_list(F *f, const uint32_t *regs, uint32_t n) {
  w(f, n);
  for (uint32_t i = 0; i < n; i++) w(f, regs[i]);
}

static Opcode fast_binop(int32_t id) {
  switch (id) {
  case OP_ADD: return I_ADD;
  case OP_SUBTRACT: return I_SUB;
  case OP_MULTIPLY: return I_MUL;
  case OP_LESS: return I_LT;
  case OP_LESS_EQUAL: return I_LE;
  case OP_GREATER: return I_GT;
  case OP_GREATER_EQUAL: return I_GE;
  case OP_EQUAL: return I_EQ;
  case OP_NOT_EQUAL: return I_NE;
  case OP_DIVIDE: case OP_FLOOR_DIVIDE: case OP_TRUNC_DIVIDE: case OP_MOD: case OP_FLOOR_MOD:
  case OP_TRUNC_MOD: case OP_POWER: case OP_MAXIMUM: case OP_MINIMUM: case OP_LOGICAL_AND:
  case OP_LOGICAL_OR: case OP_LOGICAL_XOR: case OP_BITWISE_AND: case OP_BITWISE_OR:
  case OP_BITWISE_XOR: case OP_LEFT_SHIFT: case OP_RIGHT_SHIFT:
    return I_BIN;
  default: return I_COUNT;
  }
}

/* Rank-0 int32 / float32 inferred type of e: 'I', 'F', or 0 (other or unknown). */
static char scalar_kind(const Expr *e) {
  const Type *t = type_solved(e->type);
  if (!t || t->kind != TYPE_TENSOR || t->tensor.ndim != 0 || t->tensor.dtype.lanes != 1) return 0;
  DType dt = t->tensor.dtype;
  if (dt.code == DT_INT && dt.bits == 32) return 'I';
  if (dt.code == DT_FLOAT && dt.bits == 32) return 'F';
  return 0;
}

/* Whether values of type t are always immediates (rank-0 bool/int/uint/float32/64). */
static bool is_immediate_type(const Type *t) {
  t = type_solved(t);
  return t && t->kind == TYPE_TENSOR && t->tensor.ndim == 0 && value_dtype_is_immediate(t->tensor.dtype);
}

/* Records that the instruction just started writes an immediate. */
static void mark_imm(F *f) {
  ptrmap_put(&f->imm_out, (void *)(uintptr_t)(f->spans.data[f->spans.len - 1].pc + 1), 1);
}

/* The immediate word of constant operand K[word] of kind `kind`, if it is one. */
static bool imm_word(F *f, uint32_t word, char kind, uint32_t *out) {
  const Value *v = &f->consts.data[ARG_REG(word)];
  if (kind == 'I' && v->tag == TAG_I32) {
    *out = (uint32_t)(int32_t)v->i;
    return true;
  }
  if (kind == 'F' && v->tag == TAG_F32) {
    float x = (float)v->f;
    memcpy(out, &x, sizeof x);
    return true;
  }
  return false;
}

/* The comparison with its operands swapped: a < b  <=>  b > a. */
static Opcode swapped_cmp(Opcode o) {
  switch (o) {
  case I_LT: return I_GT;
  case I_LE: return I_GE;
  case I_GT: return I_LT;
  case I_GE: return I_LE;
  default: return o; /* ADD MUL EQ NE commute */
  }
}

/* Picks the typed variant (eval/code.h) of fast binary opcode o (ADD..NE)
 * for operands `args` whose words are regs[0..1] (ARG_K for constants);
 * rewrites regs for it (immediate word, operands swapped so the immediate
 * is on the right). Returns o itself when no variant applies. */
static Opcode typed_binop(F *f, Opcode o, Expr **args, uint32_t *regs) {
  if (o == I_BIN) return o;
  char k0 = scalar_kind(args[0]), k1 = scalar_kind(args[1]);
  if (!k0 || k0 != k1) return o;
  bool c0 = regs[0] & ARG_K, c1 = regs[1] & ARG_K;
  uint32_t imm;
  uint32_t base = (uint32_t)(o - I_ADD); /* index in ADD SUB MUL LT LE GT GE EQ NE */
  if (c0 && c1) return o;
  if (c0) { /* constant on the left: swap when the operator allows it */
    if (o == I_SUB) return o;
    o = swapped_cmp(o);
    base = (uint32_t)(o - I_ADD);
    uint32_t t = regs[0];
    regs[0] = regs[1];
    regs[1] = t;
    c1 = true;
  }
  /* opcode blocks: ADD SUB MUL have 4 variants, each comparison 8 */
  uint32_t first = base < 3 ? I_ADDII + 4 * base : I_LTII + 8 * (base - 3);
  uint32_t variant = (k0 == 'F' ? 2 : 0) + (c1 ? 1 : 0);
  if (c1) {
    if (!imm_word(f, regs[1], k0, &imm)) return o;
    regs[1] = imm;
  }
  return (Opcode)(first + variant);
}

/* ------------------------------------------------------------ float32 trees */

/* Nodes per FX tree: bounds the recursion below and the leaf count. */
#define FX_MAX_NODES 24

/* The FX operator of registry op `id`, or FXO_COUNT. */
static uint32_t fx_op(int32_t id) {
  switch (id) {
  case OP_ADD: return FXO_ADD;
  case OP_SUBTRACT: return FXO_SUB;
  case OP_MULTIPLY: return FXO_MUL;
  case OP_LESS: return FXO_LT;
  case OP_LESS_EQUAL: return FXO_LE;
  case OP_GREATER: return FXO_GT;
  case OP_GREATER_EQUAL: return FXO_GE;
  case OP_EQUAL: return FXO_EQ;
  case OP_NOT_EQUAL: return FXO_NE;
  default: return FXO_COUNT;
  }
}

/* An unshared rank-0 float32 constant: an FX K operand. */
static bool fx_const(F *f, const Expr *a) {
  return a->kind == EXPR_CONST && !ptrmap_get(&f->memo, a, NULL) && a->constant->ndim == 0 &&
         a->constant->dtype.code == DT_FLOAT && a->constant->dtype.bits == 32 && a->constant->dtype.lanes == 1;
}

/* A binary operator call with float32 operands whose FX operator is in
 * [lo, hi], not shared, not of two constants. */
static bool fx_call(F *f, const Expr *e, uint32_t lo, uint32_t hi) {
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_OP || e->call.nargs != 2) return false;
  uint32_t o = fx_op(e->call.fn->op.id);
  if (o < lo || o > hi || ptrmap_get(&f->memo, e, NULL)) return false;
  Expr *x = e->call.args[0], *y = e->call.args[1];
  return scalar_kind(x) == 'F' && scalar_kind(y) == 'F' && !(fx_const(f, x) && fx_const(f, y));
}

/* An interior node of a tree: typed float32 add/subtract/multiply. */
static bool fx_inner(F *f, const Expr *e) { return fx_call(f, e, FXO_ADD, FXO_MUL) && scalar_kind(e) == 'F'; }

/* Stack slots the tree under node e needs; counts its nodes into *nodes
 * (stops descending past FX_MAX_NODES, answering "too many"). */
static uint32_t fx_need(F *f, Expr *e, uint32_t *nodes) {
  if (++*nodes > FX_MAX_NODES) return FX_STACK + 1;
  Expr *x = e->call.args[0], *y = e->call.args[1];
  bool xi = fx_inner(f, x), yi = fx_inner(f, y);
  uint32_t nx = xi ? fx_need(f, x, nodes) : 0, ny = yi ? fx_need(f, y, nodes) : 0;
  if (xi && yi) return nx > ny + 1 ? nx : ny + 1;
  return xi ? nx : ny;
}

/* The leaves of a tree: operand registers, in evaluation order. */
typedef struct FxLeaves {
  Expr *e[2 * FX_MAX_NODES];
  uint32_t reg[2 * FX_MAX_NODES];
  uint32_t n;      /* leaf expressions */
  uint32_t regs[2 * FX_MAX_NODES];
  uint32_t nregs;  /* distinct registers (the instruction's L list) */
} FxLeaves;

/* Evaluates the non-constant leaves under e left to right, as the unfused
 * code would. */
static void fx_leaves(F *f, Expr *e, FxLeaves *lv) {
  for (uint32_t i = 0; i < 2; i++) {
    Expr *a = e->call.args[i];
    if (fx_inner(f, a)) {
      fx_leaves(f, a, lv);
    } else if (!fx_const(f, a)) {
      uint32_t r = operand(f, a), k = 0;
      while (k < lv->nregs && lv->regs[k] != r) k++;
      if (k == lv->nregs) lv->regs[lv->nregs++] = r;
      lv->e[lv->n] = a;
      lv->reg[lv->n++] = k;
    }
  }
}

static uint32_t fx_leaf(const FxLeaves *lv, const Expr *a) {
  for (uint32_t i = 0; i < lv->n; i++)
    if (lv->e[i] == a) return lv->reg[i];
  UNREACHABLE();
}

static uint32_t fx_kbits(const Expr *a) {
  float x = (float)tensor_load_f64(a->constant->dtype, a->constant->data);
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* Emits the steps computing node e into the running value (pushing the
 * previous one first when `push`). */
static void fx_gen(F *f, Expr *e, bool push, const FxLeaves *lv) {
  Expr *x = e->call.args[0], *y = e->call.args[1];
  uint32_t o = fx_op(e->call.fn->op.id);
  bool xi = fx_inner(f, x), yi = fx_inner(f, y), xk = !xi && fx_const(f, x), yk = !yi && fx_const(f, y);
  uint32_t form;
  if (!xi && !yi) {
    form = xk ? FX_KL : yk ? FX_LK : FX_LL;
  } else if (!yi) {
    fx_gen(f, x, push, lv);
    form = yk ? FX_AK : FX_AL;
    push = false;
  } else if (!xi) {
    fx_gen(f, y, push, lv);
    form = xk ? FX_KA : FX_LA;
    push = false;
  } else {
    fx_gen(f, x, push, lv);
    fx_gen(f, y, true, lv);
    form = FX_SA;
    push = false;
  }
  uint32_t k = add_opcall(f, e->call.fn->op.id, e->call.attrs, e->type);
  f->ops.data[k].span = e->span;
  vec_push(f->xprog, form | o << 4 | (push ? FX_PUSH : 0));
  vec_push(f->xprog, k);
  char xk_ = fx_x_kind(form), yk_ = fx_y_kind(form);
  if (xk_) vec_push(f->xprog, xk_ == 'L' ? fx_leaf(lv, x) : fx_kbits(x));
  if (yk_) vec_push(f->xprog, yk_ == 'L' ? fx_leaf(lv, y) : fx_kbits(y));
}

/* Emits call e (a typed float32 add/subtract/multiply or comparison with at
 * least one such operand nested in it) as one FX / FXC instruction into
 * dst. False (nothing emitted) when e is not such a tree or is too big. */
static bool emit_fx(F *f, Expr *e, uint32_t dst) {
  if (!fx_call(f, e, FXO_ADD, FXO_NE)) return false;
  bool cmp = fx_op(e->call.fn->op.id) >= FXO_LT;
  if (!cmp && scalar_kind(e) != 'F') return false;
  if (!fx_inner(f, e->call.args[0]) && !fx_inner(f, e->call.args[1])) return false;
  uint32_t nodes = 0;
  if (fx_need(f, e, &nodes) > FX_STACK || nodes > FX_MAX_NODES) return false;
  uint32_t save = f->top;
  FxLeaves lv;
  lv.n = lv.nregs = 0;
  fx_leaves(f, e, &lv);
  uint32_t at = (uint32_t)f->xprog.len;
  fx_gen(f, e, false, &lv);
  if (!cmp) vec_push(f->xprog, FX_END);
  op(f, cmp ? I_FXC : I_FX, e->span);
  w(f, dst);
  w(f, at);
  emit_list(f, lv.regs, lv.nregs);
  f->top = save;
  return true;
}

/* A call of a literal lowered in place (count_uses_inlining): arguments into
 * registers that become the parameters, then the body into dst (or as the
 * tail). */
static void emit_inline_call(F *f, Expr *e, uint32_t dst, bool tail) {
  Function *fn = e->call.fn->fn;
  uint32_t save = f->top;
  for (uint32_t i = 0; i < e->call.nargs; i++) ptrmap_put(&f->vars, fn->params[i], operand(f, e->call.args[i]));
  if (tail) emit_tail(f, fn->body);
  else emit_expr(f, fn->body, dst);
  f->top = save;
}

/* The call of an operator, constructor, global or closure into dst, or as
 * a tail call when dst is UINT32_MAX. */
/* Can a kernel take a value of type t: a tensor or a tuple of tensors
 * (eval/vm.c flattens a tuple argument into its fields)? */
static bool kernel_takes(const Type *t) {
  t = type_solved(t);
  if (!t) return true; /* untyped: as before */
  if (t->kind == TYPE_TENSOR) return true;
  if (t->kind != TYPE_TUPLE) return false;
  for (uint32_t i = 0; i < t->tuple.n; i++) {
    const Type *ft = type_solved(t->tuple.fields[i]);
    if (!ft || ft->kind != TYPE_TENSOR) return false;
  }
  return true;
}

static void emit_call(F *f, Expr *e, uint32_t dst, bool tail) {
  Expr *callee = e->call.fn;
  uint32_t n = e->call.nargs, save = f->top, buf[8];
  if (callee->kind == EXPR_FN && ptrmap_get(&f->inl, callee, NULL)) {
    emit_inline_call(f, e, dst, tail);
    return;
  }
  if (callee->kind == EXPR_CTOR && callee->ctor.ctor->nfields == 0) {
    op(f, I_LOADK, e->span);
    w(f, dst);
    w(f, add_const(f, value_adt_new(callee->ctor.ctor)));
    return;
  }
  if (callee->kind == EXPR_OP && !tail && emit_fx(f, e, dst)) return;
  if (callee->kind == EXPR_OP && n == 1 && (op_traits_flags(callee->op.id) & OPF_IDENTITY) &&
      !kernel_takes(e->call.args[0]->type)) {
    /* an annotation of a ref, closure, ADT or nested tuple (ToANormalForm
     * wraps every value it binds under on_device in on_device): its kernel
     * takes tensors and flat tuples only, and the result is the value */
    uint32_t r = operand(f, e->call.args[0]);
    op(f, I_MOVE, e->span);
    w(f, dst);
    w(f, r);
    f->top = save;
    return;
  }
  uint32_t *regs;
  if (callee->kind == EXPR_OP && n == 2 && fast_binop(callee->op.id) != I_COUNT) {
    regs = buf;
    for (uint32_t i = 0; i < 2; i++) {
      Expr *a = e->call.args[i];
      bool konst = a->kind == EXPR_CONST && !ptrmap_get(&f->memo, a, NULL) && a->constant->ndim == 0 &&
                   value_dtype_is_immediate(a->constant->dtype);
      regs[i] = konst ? 0 : operand(f, a);
    }
  } else {
    regs = operands(f, e->call.args, n, buf, 8);
  }
  switch (callee->kind) {
  case EXPR_OP: {
    uint32_t k = add_opcall(f, callee->op.id, e->call.attrs, e->type);
    Opcode o = n == 2 ? fast_binop(callee->op.id) : I_COUNT;
    if (o != I_COUNT) {
      for (uint32_t i = 0; i < 2; i++) {
        Expr *a = e->call.args[i];
        if (a->kind == EXPR_CONST && !ptrmap_get(&f->memo, a, NULL) && a->constant->ndim == 0 &&
            value_dtype_is_immediate(a->constant->dtype))
          regs[i] = ARG_K | add_const(f, const_value(a->constant));
      }
      o = typed_binop(f, o, e->call.args, regs);
      op(f, o, e->span);
      if (is_immediate_type(e->type)) mark_imm(f);
      w(f, dst);
      w(f, k);
      w(f, regs[0]);
      w(f, regs[1]);
    } else {
      op(f, I_KOP, e->span);
      if (is_immediate_type(e->type)) mark_imm(f);
      w(f, dst);
      w(f, k);
      emit_list(f, regs, n);
    }
    break;
  }
  case EXPR_CTOR:
    op(f, I_ADT, e->span);
    w(f, dst);
    w(f, add_ctor(f, callee->ctor.ctor));
    emit_list(f, regs, n);
    break;
  case EXPR_GLOBAL: {
    int64_t g = 0;
    if (!ptrmap_get(&f->L->globals, callee->global.def, &g)) fail(f, callee->span, "internal error: unknown global");
    op(f, tail ? I_TCALLG : I_CALLG, e->span);
    if (!tail) w(f, dst);
    w(f, (uint32_t)g);
    if (tail) w(f, 0); /* clear list */
    else if (is_immediate_type(e->type)) mark_imm(f);
    emit_list(f, regs, n);
    break;
  }
  default: {
    uint32_t fr = operand(f, callee);
    op(f, tail ? I_TCALL : I_CALL, e->span);
    if (!tail) w(f, dst);
    w(f, fr);
    if (tail) w(f, 0); /* clear list */
    else if (is_immediate_type(e->type)) mark_imm(f);
    emit_list(f, regs, n);
    break;
  }
  }
  if (regs != buf) mem_free(regs);
  f->top = save;
}

/* Closure creation for a function literal; `self` is the let variable the
 * literal is bound to (or NULL). */
static void emit_fn(F *f, Expr *e, uint32_t dst, Var *self, const char *name) {
  Lower *L = f->L;
  uint32_t n, nn = 0;
  Expr **ncaps = NULL;
  Var **caps = free_vars(L, e, &n, &ncaps, &nn);
  bool has_self = false;
  if (self) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (caps[i] == self) has_self = true;
      else caps[k++] = caps[i];
    }
    n = k;
  }
  /* captured shared nodes: evaluated here if no earlier use did (where A-normal
   * form binds them: before the literal, in the scope enclosing their uses) */
  uint32_t *nregs = nn ? mem_calloc(nn, sizeof *nregs) : NULL;
  for (uint32_t i = 0; i < nn; i++)
    if (!memo_reg(f, ncaps[i], &nregs[i])) fail(f, ncaps[i]->span, "internal error: shared node without a register");
  Code *c = code_new(L, name ? name : "fn", e->fn->span);
  Pending p = {e->fn, c, caps, n, has_self ? self : NULL, e, ncaps, nn};
  vec_push(L->pending, p);
  op(f, I_CLOSURE, e->span);
  w(f, dst);
  w(f, code_index(L, c));
  w(f, n + nn);
  for (uint32_t i = 0; i < n; i++) w(f, var_reg(f, caps[i], e->span));
  for (uint32_t i = 0; i < nn; i++) w(f, nregs[i]);
  mem_free(nregs);
}

/* Control regions: code emitted inside one runs only on some paths. */
static uint32_t region_enter(F *f) {
  if (f->region_open.len == 0) vec_push(f->region_open, 1); /* region 0 */
  uint32_t outer = f->region;
  f->region = (uint32_t)f->region_open.len;
  vec_push(f->region_open, 1);
  return outer;
}

static void region_leave(F *f, uint32_t outer) {
  f->region_open.data[f->region] = 0;
  f->region = outer;
}

/* Pattern test + bindings of `p` against register r; failing tests jump to
 * holes collected in `fails`. */
typedef VEC(uint32_t) Holes;

static void emit_pattern(F *f, Pattern *p, uint32_t r, Holes *fails) {
  if (too_deep(f, p->span)) return;
  switch (p->kind) {
  case PAT_WILDCARD: return;
  case PAT_VAR: {
    uint32_t v = reg_alloc(f);
    ptrmap_put(&f->vars, p->var, v);
    op(f, I_MOVE, p->span);
    w(f, v);
    w(f, r);
    return;
  }
  case PAT_CTOR:
  case PAT_TUPLE: {
    Pattern **args = p->kind == PAT_CTOR ? p->ctor.args : p->tuple.fields;
    uint32_t n = p->kind == PAT_CTOR ? p->ctor.nargs : p->tuple.n;
    if (p->kind == PAT_CTOR && p->ctor.ctor->owner && p->ctor.ctor->owner->nctors != 1) {
      op(f, I_TESTCTOR, p->span);
      w(f, r);
      w(f, add_ctor(f, p->ctor.ctor));
      vec_push(*fails, hole(f));
    }
    for (uint32_t i = 0; i < n; i++) {
      Pattern *q = args[i];
      if (q->kind == PAT_WILDCARD) continue;
      uint32_t t = reg_alloc(f);
      if (q->kind == PAT_VAR) ptrmap_put(&f->vars, q->var, t);
      op(f, I_FIELD, q->span);
      w(f, t);
      w(f, r);
      w(f, i);
      if (q->kind != PAT_VAR) emit_pattern(f, q, t, fails);
    }
    return;
  }
  }
}

/* The shared nodes A-normal form evaluates right before e's branches (hoist_scan). */
static void emit_hoisted(F *f, const Expr *e) {
  int64_t h;
  if (!f->hoist_head.len || !ptrmap_get(&f->hoist_head, e, &h)) return;
  for (size_t i = (size_t)h - 1; i < f->hoist_list.len && f->hoist_list.data[i].owner == e; i++) {
    uint32_t r;
    memo_reg(f, f->hoist_list.data[i].e, &r);
  }
}

static void emit_match(F *f, Expr *e, uint32_t dst, bool tail) {
  uint32_t save = f->top;
  uint32_t s = operand(f, e->match.scrut);
  emit_hoisted(f, e);
  Holes ends = {0};
  for (uint32_t i = 0; i < e->match.nclauses; i++) {
    Clause *cl = &e->match.clauses[i];
    uint32_t inner = f->top;
    Holes fails = {0};
    uint32_t outer = region_enter(f);
    emit_pattern(f, cl->pattern, s, &fails);
    if (tail) {
      emit_tail(f, cl->body);
    } else {
      emit_expr(f, cl->body, dst);
      op(f, I_JMP, cl->span);
      vec_push(ends, hole(f));
    }
    region_leave(f, outer);
    for (size_t k = 0; k < fails.len; k++) patch(f, fails.data[k]);
    vec_free(fails);
    f->top = inner;
  }
  op(f, I_MATCHFAIL, e->span);
  for (size_t k = 0; k < ends.len; k++) patch(f, ends.data[k]);
  vec_free(ends);
  f->top = save;
}

static void emit_if(F *f, Expr *e, uint32_t dst, bool tail) {
  uint32_t save = f->top;
  uint32_t c = operand(f, e->if_.cond);
  emit_hoisted(f, e); /* above c: c stays live until the JMPF */
  f->top = save;
  op(f, I_JMPF, e->span);
  w(f, c);
  uint32_t to_else = hole(f);
  uint32_t outer = region_enter(f);
  if (tail) {
    emit_tail(f, e->if_.then_);
    region_leave(f, outer);
    patch(f, to_else);
    outer = region_enter(f);
    emit_tail(f, e->if_.else_);
    region_leave(f, outer);
    return;
  }
  emit_expr(f, e->if_.then_, dst);
  op(f, I_JMP, e->span);
  uint32_t to_end = hole(f);
  region_leave(f, outer);
  patch(f, to_else);
  outer = region_enter(f);
  emit_expr(f, e->if_.else_, dst);
  region_leave(f, outer);
  patch(f, to_end);
}

/* Binds the variable of the let `e` (which the caller is computing, whether
 * or not it is shared) and of the unshared lets in its body; returns the
 * first body that is not such a let. A shared let further down the chain is
 * left to its own memo guard. (The head must not be tested against the memo
 * table: a shared let reaches here from its own guarded computation, and
 * stopping at it would re-enter the guard forever.) */
/* `let %v = value; %v` whose value is not a function (so %v is used nowhere
 * else): in tail position the value itself is the tail (A-normal form binds
 * every tail call this way). */
static bool let_returns_value(const Expr *e) {
  return e->kind == EXPR_LET && e->let.body->kind == EXPR_VAR && e->let.body->var.var == e->let.var &&
         e->let.value->kind != EXPR_FN;
}

/* Emits a let chain's bindings and returns what follows them; with
 * `tail`, stops before a final `let %v = value; %v` (returned as is). */
static Expr *emit_lets_ex(F *f, Expr *e, bool tail) {
  for (bool head = true; e->kind == EXPR_LET && (head || !ptrmap_get(&f->memo, e, NULL)); head = false) {
    if (tail && let_returns_value(e)) break;
    uint32_t r = reg_alloc(f);
    Expr *v = e->let.value;
    if (v->kind == EXPR_FN && !ptrmap_get(&f->memo, v, NULL)) {
      const char *nm = var_name(e->let.var);
      char *name = arena_alloc(f->L->m->arena, strlen(nm) + 2);
      name[0] = '%';
      strcpy(name + 1, nm);
      emit_fn(f, v, r, e->let.var, name);
    } else {
      emit_expr(f, v, r);
    }
    ptrmap_put(&f->vars, e->let.var, r);
    e = e->let.body;
  }
  return e;
}

static Expr *emit_lets(F *f, Expr *e) { return emit_lets_ex(f, e, false); }

/* Computes e (not consulting the memo table for e itself) into dst. */
static void emit_compute(F *f, Expr *e, uint32_t dst) {
  if (too_deep(f, e->span)) return;
  uint32_t save = f->top;
  switch (e->kind) {
  case EXPR_CONST:
    op(f, I_LOADK, e->span);
    w(f, dst);
    w(f, add_const(f, const_value(e->constant)));
    break;
  case EXPR_VAR:
    op(f, I_MOVE, e->span);
    w(f, dst);
    w(f, var_reg(f, e->var.var, e->span));
    break;
  case EXPR_GLOBAL: {
    int64_t g = 0;
    if (!ptrmap_get(&f->L->globals, e->global.def, &g)) fail(f, e->span, "internal error: unknown global");
    op(f, I_LOADK, e->span);
    w(f, dst);
    w(f, add_const(f, f->L->global_vals[g]));
    break;
  }
  case EXPR_OP: {
    uint32_t k = op_code(f->L, e->op.id, e->span);
    op(f, I_LOADK, e->span);
    w(f, dst);
    w(f, add_const(f, value_closure_immortal(f->L->codes.data[k])));
    break;
  }
  case EXPR_CTOR: {
    Value v;
    if (e->ctor.ctor->nfields == 0) {
      v = value_adt_new(e->ctor.ctor);
    } else {
      /* the index first: ctor_code may grow (move) L->codes */
      uint32_t k = ctor_code(f->L, e->ctor.ctor, e->span);
      v = value_closure_immortal(f->L->codes.data[k]);
    }
    op(f, I_LOADK, e->span);
    w(f, dst);
    w(f, add_const(f, v));
    break;
  }
  case EXPR_CALL: emit_call(f, e, dst, false); break;
  case EXPR_TUPLE: {
    uint32_t buf[8];
    uint32_t *regs = operands(f, e->tuple.fields, e->tuple.n, buf, 8);
    op(f, I_TUPLE, e->span);
    w(f, dst);
    emit_list(f, regs, e->tuple.n);
    if (regs != buf) mem_free(regs);
    break;
  }
  case EXPR_PROJ: {
    uint32_t t = operand(f, e->proj.tuple);
    op(f, I_PROJ, e->span);
    w(f, dst);
    w(f, t);
    w(f, e->proj.index);
    break;
  }
  case EXPR_FN: emit_fn(f, e, dst, NULL, NULL); break;
  case EXPR_LET: {
    Expr *body = emit_lets(f, e);
    emit_expr(f, body, dst);
    break;
  }
  case EXPR_IF: emit_if(f, e, dst, false); break;
  case EXPR_MATCH: emit_match(f, e, dst, false); break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: {
    uint32_t a = operand(f, e->ref.arg);
    op(f, e->kind == EXPR_REF_NEW ? I_REFNEW : I_REFREAD, e->span);
    w(f, dst);
    w(f, a);
    break;
  }
  case EXPR_REF_WRITE: {
    uint32_t r = operand(f, e->ref_write.ref);
    uint32_t v = operand(f, e->ref_write.value);
    op(f, I_REFWRITE, e->span);
    w(f, dst);
    w(f, r);
    w(f, v);
    break;
  }
  default: fail(f, e->span, "internal error: unresolved expression reached the interpreter"); break;
  }
  f->top = save;
}

/* Shared node: makes sure its memo register holds the value; returns it.
 * Once its guarded computation has been emitted on the current path, later
 * uses read the register directly: re-emitting the guarded code at every use
 * would make code size exponential in chains of shared nodes. */
static bool memo_reg(F *f, Expr *e, uint32_t *r) {
  int64_t m, reg;
  if (!ptrmap_get(&f->memo, e, &m)) return false;
  *r = (uint32_t)m;
  if (ptrmap_get(&f->avail, e, &reg) && (reg == 0 || f->region_open.data[reg])) return true;
  op(f, I_JSET, e->span);
  w(f, *r);
  uint32_t done = hole(f);
  uint32_t outer = region_enter(f); /* what the guarded body computes may be skipped */
  emit_compute(f, e, *r);
  region_leave(f, outer);
  patch(f, done);
  ptrmap_put(&f->avail, e, f->region);
  return true;
}

static void emit_expr(F *f, Expr *e, uint32_t dst) {
  uint32_t r;
  if (memo_reg(f, e, &r)) {
    op(f, I_MOVE, e->span);
    w(f, dst);
    w(f, r);
    return;
  }
  emit_compute(f, e, dst);
}

static uint32_t operand(F *f, Expr *e) {
  uint32_t r;
  if (e->kind == EXPR_VAR) return var_reg(f, e->var.var, e->span);
  if (memo_reg(f, e, &r)) return r;
  r = reg_alloc(f);
  emit_compute(f, e, r);
  return r;
}

static void emit_ret_of(F *f, Expr *e) {
  uint32_t save = f->top;
  uint32_t r = operand(f, e);
  op(f, I_RET, e->span);
  w(f, r);
  w(f, 0); /* clear list, filled by heap_clears */
  f->top = save;
}

static void emit_tail(F *f, Expr *e) {
  if (too_deep(f, e->span)) return;
  if (ptrmap_get(&f->memo, e, NULL)) {
    emit_ret_of(f, e);
    return;
  }
  uint32_t save = f->top;
  switch (e->kind) {
  case EXPR_CALL:
    if (e->call.fn->kind == EXPR_OP || e->call.fn->kind == EXPR_CTOR) emit_ret_of(f, e);
    else emit_call(f, e, UINT32_MAX, true);
    break;
  case EXPR_IF: emit_if(f, e, 0, true); break;
  case EXPR_MATCH: emit_match(f, e, 0, true); break;
  case EXPR_LET: {
    Expr *rest = emit_lets_ex(f, e, true);
    if (rest->kind == EXPR_LET && let_returns_value(rest) &&
        (rest == e || !ptrmap_get(&f->memo, rest, NULL)))
      emit_tail(f, rest->let.value); /* `let %v = call; %v`: still a tail call */
    else
      emit_tail(f, rest);
    break;
  }
  default: emit_ret_of(f, e); break;
  }
  f->top = save;
}

/* ------------------------------------------------------------ retargeting */

/* Per-instruction facts for the straight-line peepholes below. */
typedef struct Insns {
  VEC(uint32_t) starts;  /* instruction start pcs, in order */
  uint8_t *target;       /* by pc: some jump lands here */
} Insns;

static uint32_t ins_operands(const uint32_t *ins, uint32_t pc, void (*fn)(void *, uint32_t, bool), void *arg);

static void insns_scan(F *f, Insns *is) {
  uint32_t *ins = f->ins.data, n = (uint32_t)f->ins.len;
  is->starts.len = 0;
  is->target = mem_calloc(n + 1, 1);
  for (uint32_t pc = 0; pc < n;) {
    vec_push(is->starts, pc);
    const char *lay = code_layout((Opcode)ins[pc]);
    uint32_t at = pc + 1;
    for (; *lay; lay++) {
      if (*lay == 'j') is->target[ins[at]] = 1;
      at += *lay == 'L' ? ins[at] + 1 : 1;
    }
    pc = at;
  }
}

static bool has_jump(const uint32_t *ins, uint32_t pc) { return strchr(code_layout((Opcode)ins[pc]), 'j') != NULL; }

/* Register-operand visitor state: does the instruction touch register r? */
typedef struct Touch {
  const uint32_t *ins;
  uint32_t r;
  bool read, written;
} Touch;

static void touch_visit(void *arg, uint32_t at, bool is_write) {
  Touch *t = arg;
  uint32_t wd = t->ins[at];
  if (is_write) t->written |= wd == t->r;
  else if (!(wd & ARG_K) && ARG_REG(wd) == t->r) t->read = true;
}

static Touch touch(const uint32_t *ins, uint32_t pc, uint32_t r) {
  Touch t = {ins, r, false, false};
  ins_operands(ins, pc, touch_visit, &t);
  return t;
}

typedef struct Rename {
  uint32_t *ins;
  uint32_t from, to;
} Rename;

static void rename_visit(void *arg, uint32_t at, bool is_write) {
  Rename *rn = arg;
  uint32_t wd = rn->ins[at];
  if (!is_write && !(wd & ARG_K) && ARG_REG(wd) == rn->from) rn->ins[at] = (wd & ARG_MOVE) | rn->to;
}

/* Self tail calls: argument i computed into a temporary s by an instruction W
 * of the same straight-line block is computed directly into parameter i
 * instead, when nothing between W and the call reads or writes parameter i
 * and no other argument reads it (reads of s in between read i instead). The
 * argument is then left in place and the call copies nothing for it. Runs
 * before liveness, on plain register words. */
static void retarget_self_args(F *f) {
  Code *c = f->code;
  if (c->ncaps || c->self_reg >= 0) return;
  uint32_t *ins = f->ins.data, first_temp = c->memo_lo + c->nmemo;
  Insns is = {0};
  insns_scan(f, &is);
  for (size_t ci = 0; ci < is.starts.len; ci++) {
    uint32_t pc = is.starts.data[ci];
    if (ins[pc] != I_TCALLG || f->L->codes.data[ins[pc + 1]] != c || ins[pc + 3] != c->nparams) continue;
    uint32_t n = ins[pc + 3], *list = ins + pc + 4;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t s = list[i];
      bool ok = s >= first_temp && !is.target[pc];
      for (uint32_t j = 0; j < n && ok; j++) ok = j == i || (list[j] != s && list[j] != i);
      size_t k = ci;
      while (ok && k-- > 0) {
        uint32_t at = is.starts.data[k];
        if (has_jump(ins, at)) ok = false;
        else if (touch(ins, at, s).written) break; /* W */
        else if (is.target[at] || touch(ins, at, i).read || touch(ins, at, i).written) ok = false;
      }
      if (!ok || k == SIZE_MAX) continue;
      uint32_t wpc = is.starts.data[k];
      if (code_layout((Opcode)ins[wpc])[0] != 'a') continue;
      ins[wpc + 1] = i;
      Rename rn = {ins, s, i};
      for (size_t m = k + 1; m < ci; m++) ins_operands(ins, is.starts.data[m], rename_visit, &rn);
      list[i] = i;
    }
  }
  mem_free(is.target);
  vec_free(is.starts);
}

/* ------------------------------------------------------------ liveness */

/* Visits the register operands of the instruction at pc: reads get their
 * word index, writes too (is_write). Returns the next pc. */
typedef void (*OperandFn)(void *arg, uint32_t at, bool is_write);

static uint32_t ins_operands(const uint32_t *ins, uint32_t pc, OperandFn fn, void *arg) {
  const char *lay = code_layout((Opcode)ins[pc]);
  uint32_t at = pc + 1;
  for (; *lay; lay++) {
    switch (*lay) {
    case 'a': if (fn) fn(arg, at, true); at++; break;
    case 'r': if (fn) fn(arg, at, false); at++; break;
    case 'k':
    case 'i':
    case 'j': at++; break;
    case 'L': {
      uint32_t n = ins[at++];
      for (uint32_t i = 0; i < n; i++, at++)
        if (fn) fn(arg, at, false);
      break;
    }
    case 'P': { /* only in finished code (TSELFM): no analysis visits it */
      uint32_t n = ins[at++];
      at += 2 * n;
      break;
    }
    }
  }
  return at;
}

typedef struct Live {
  uint8_t *live;      /* current live set (one byte per register) */
  uint32_t *ins;
  VEC(uint32_t) reads; /* read operand positions of the current instruction */
} Live;

static void collect_read(void *arg, uint32_t at, bool is_write) {
  Live *lv = arg;
  if (!is_write && !(lv->ins[at] & ARG_K)) vec_push(lv->reads, at);
}

/* The rightmost read of a register that is dead afterwards becomes a move
 * (the VM processes operands left to right). */
static void mark_reads(Live *lv) {
  for (size_t i = lv->reads.len; i-- > 0;) {
    uint32_t at = lv->reads.data[i];
    uint32_t r = ARG_REG(lv->ins[at]);
    if (!lv->live[r]) {
      lv->ins[at] |= ARG_MOVE;
      lv->live[r] = 1;
    }
  }
  lv->reads.len = 0;
}

static void kill_write(void *arg, uint32_t at, bool is_write) {
  Live *lv = arg;
  if (is_write) lv->live[lv->ins[at]] = 0;
}

/* Marks last uses. Instructions are processed in reverse; the live set at a
 * jump's target is saved when the sweep passes that target. */
static void liveness(F *f) {
  uint32_t nregs = f->maxreg, n = (uint32_t)f->ins.len;
  uint32_t *ins = f->ins.data;
  VEC(uint32_t) starts = {0};
  for (uint32_t pc = 0; pc < n;) {
    vec_push(starts, pc);
    pc = ins_operands(ins, pc, NULL, NULL);
  }
  /* live-in sets saved at jump targets, keyed by target pc */
  PtrMap at_target = {0};
  VEC(uint8_t *) saved = {0};
  for (size_t i = 0; i < starts.len; i++) {
    uint32_t pc = starts.data[i];
    Opcode o = (Opcode)ins[pc];
    const char *lay = code_layout(o);
    uint32_t at = pc + 1;
    for (; *lay; lay++) {
      if (*lay == 'j' && !ptrmap_get(&at_target, (void *)(uintptr_t)(ins[at] + 1), NULL)) {
        uint8_t *s = mem_calloc(nregs + 1, 1);
        vec_push(saved, s);
        ptrmap_put(&at_target, (void *)(uintptr_t)(ins[at] + 1), (int64_t)saved.len - 1);
      }
      if (*lay == 'L') at += ins[at] + 1;
      else at++;
    }
  }
  Live lv = {mem_calloc(nregs + 1, 1), ins, {0}};
  for (size_t i = starts.len; i-- > 0;) {
    uint32_t pc = starts.data[i];
    Opcode o = (Opcode)ins[pc];
    /* live-out */
    bool falls = o != I_JMP && o != I_RET && o != I_TCALL && o != I_TCALLG && o != I_MATCHFAIL;
    if (!falls) memset(lv.live, 0, nregs + 1);
    const char *lay = code_layout(o);
    uint32_t at = pc + 1;
    for (; *lay; lay++) {
      if (*lay == 'j') {
        int64_t idx;
        if (ptrmap_get(&at_target, (void *)(uintptr_t)(ins[at] + 1), &idx))
          for (uint32_t r = 0; r < nregs; r++) lv.live[r] |= saved.data[idx][r];
      }
      if (*lay == 'L') at += ins[at] + 1;
      else at++;
    }
    /* JSET's register stays live on the jump path: the value is reused */
    ins_operands(ins, pc, kill_write, &lv);
    if (o == I_JSET) {
      /* the test itself only peeks; never move */
      lv.live[ARG_REG(ins[pc + 1])] = 1;
    } else {
      ins_operands(ins, pc, collect_read, &lv);
      mark_reads(&lv);
    }
    int64_t idx;
    if (ptrmap_get(&at_target, (void *)(uintptr_t)(pc + 1), &idx)) memcpy(saved.data[idx], lv.live, nregs + 1);
  }
  mem_free(lv.live);
  vec_free(lv.reads);
  for (size_t i = 0; i < saved.len; i++) mem_free(saved.data[i]);
  vec_free(saved);
  vec_free(starts);
  ptrmap_free(&at_target);
}

/* ------------------------------------------------------------ fusion */

_Static_assert(I_SUB == I_ADD + 1 && I_NE == I_ADD + 8, "ADD..NE are contiguous");
_Static_assert(I_LTII == I_ADDII + 12 && I_JNEFK == I_LTII + 47 && I_JLTII == I_LTII + 4,
               "typed opcode blocks: 3 x 4 arithmetic, 6 x 8 comparisons");

static bool typed_cmp_unfused(Opcode o) { return o >= I_LTII && o <= I_JNEFK && (o - I_LTII) % 8 < 4; }

/* Whether the immediate operand of typed opcode o is a float32's bits. */
static bool imm_is_float(Opcode o) {
  uint32_t i = o < I_LTII ? (uint32_t)(o - I_ADDII) : (uint32_t)(o - I_LTII);
  return i % 4 >= 2;
}

/* Whether a self tail call's argument list (count, then words) can be
 * performed as the in-order moves R[i] = arg i: every argument register is
 * either i itself (moved or not: left in place) or not a parameter at all,
 * so no move overwrites a parameter a later argument still reads. */
static bool self_moves_plain(F *f, const uint32_t *list) {
  uint32_t n = list[0];
  if (n != f->code->nparams || f->code->ncaps || f->code->self_reg >= 0) return false;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t r = ARG_REG(list[1 + i]);
    if (r != i && r < n) return false;
  }
  return true;
}

/* Runs after liveness: each typed comparison directly followed by the JMPF
 * that consumes (moves) its result becomes its fused J-form, unless some
 * jump lands on that JMPF (then the comparison's register must be written);
 * a self tail call with plain argument moves becomes TSELF. */
static void fuse_branches(F *f) {
  uint32_t *ins = f->ins.data, n = (uint32_t)f->ins.len;
  uint8_t *target = mem_calloc(n + 1, 1);
  for (uint32_t pc = 0; pc < n;) {
    const char *lay = code_layout((Opcode)ins[pc]);
    uint32_t at = pc + 1;
    for (; *lay; lay++) {
      if (*lay == 'j') target[ins[at]] = 1;
      at += *lay == 'L' ? ins[at] + 1 : 1;
    }
    pc = at;
  }
  for (uint32_t pc = 0; pc < n;) {
    uint32_t next = ins_operands(ins, pc, NULL, NULL);
    Opcode o = (Opcode)ins[pc];
    if (typed_cmp_unfused(o) && next < n && ins[next] == I_JMPF && !target[next] &&
        (ins[next + 1] & ARG_MOVE) && ARG_REG(ins[next + 1]) == ins[pc + 1])
      ins[pc] = (uint32_t)(o + 4);
    if (o == I_FXC && next < n && ins[next] == I_JMPF && !target[next] && (ins[next + 1] & ARG_MOVE) &&
        ARG_REG(ins[next + 1]) == ins[pc + 1])
      ins[pc] = I_FXJ;
    if (o == I_TCALLG && f->L->codes.data[ins[pc + 1]] == f->code && self_moves_plain(f, ins + pc + 3))
      ins[pc] = I_TSELF;
    pc = next;
  }
  mem_free(target);
}

/* After the clear lists: a TSELFI whose arguments are mostly in place already
 * (see retarget_self_args) becomes TSELFM, which copies only the others. */
static void compact_self_moves(F *f) {
  uint32_t *ins = f->ins.data, n = (uint32_t)f->ins.len;
  for (uint32_t pc = 0; pc < n;) {
    uint32_t next = ins_operands(ins, pc, NULL, NULL);
    if (ins[pc] == I_TSELFI) {
      uint32_t nargs = ins[pc + 3], m = 0, clear = ins[pc + 2];
      for (uint32_t i = 0; i < nargs; i++) m += ARG_REG(ins[pc + 4 + i]) != i;
      if (2 * m <= nargs + 1) {
        uint32_t pairs[2 * 16], k = 0;
        if (m <= 16) {
          for (uint32_t i = 0; i < nargs; i++) {
            uint32_t r = ARG_REG(ins[pc + 4 + i]);
            if (r == i) continue;
            pairs[k++] = i * (uint32_t)sizeof(Value);
            pairs[k++] = r * (uint32_t)sizeof(Value);
          }
          uint32_t at = pc;
          ins[at++] = m == 1 && f->clears.data[clear] == 0 ? I_TSELF1 : I_TSELFM;
          ins[at++] = clear;
          ins[at++] = m;
          for (uint32_t i = 0; i < k; i++) ins[at++] = pairs[i];
          while (at < next) ins[at++] = I_NOP;
        }
      }
    }
    pc = next;
  }
}

static bool is_fused(Opcode o) { return o >= I_FIADDADD && o <= I_FFMULMUL; }

/* A typed ADD/SUB/MUL: its operator (0 add, 1 sub, 2 mul), type ('I'/'F') and
 * whether its second operand is an immediate word. */
static bool typed_arith(Opcode o, uint32_t *opi, char *ty, bool *imm) {
  if (o < I_ADDII || o >= I_LTII) return false;
  uint32_t v = (uint32_t)(o - I_ADDII);
  *opi = v / 4;
  *ty = v % 4 >= 2 ? 'F' : 'I';
  *imm = v % 2 == 1;
  return true;
}

/* The constant-table word (ARG_K) of a typed immediate operand word. */
static uint32_t imm_const(F *f, uint32_t word, char ty) {
  if (ty == 'I') return ARG_K | add_const(f, value_i32((int32_t)word));
  float x;
  memcpy(&x, &word, sizeof x);
  return ARG_K | add_const(f, value_f32(x));
}

/* Runs after liveness (it needs the last-use marks): each typed ADD/SUB/MUL
 * writing a temporary that the directly following typed ADD/SUB/MUL of the
 * same type reads for the last time (in one operand) becomes one fused
 * instruction (eval/code.h, F<T><op1><op2>) that never writes the temporary.
 * No jump may land on the second instruction. */
static void fuse_arith(F *f) {
  uint32_t *ins = f->ins.data, first_temp = f->code->memo_lo + f->code->nmemo;
  Insns is = {0};
  insns_scan(f, &is);
  for (size_t i = 0; i + 1 < is.starts.len; i++) {
    uint32_t p = is.starts.data[i], c = is.starts.data[i + 1], op1, op2;
    char ty1, ty2;
    bool imm1, imm2;
    if (!typed_arith((Opcode)ins[p], &op1, &ty1, &imm1) || !typed_arith((Opcode)ins[c], &op2, &ty2, &imm2) ||
        ty1 != ty2 || is.target[c])
      continue;
    uint32_t t = ins[p + 1], cx = ins[c + 3], cy = ins[c + 4], z;
    bool left = ARG_REG(cx) == t, right = !imm2 && ARG_REG(cy) == t;
    if (t < first_temp || left == right) continue;
    if (left) {
      if (!(cx & ARG_MOVE)) continue;
      z = imm2 ? imm_const(f, cy, ty2) : ARG_REG(cy);
    } else {
      if (!(cy & ARG_MOVE)) continue;
      z = ARG_REG(cx);
      if (op2 == 1) op2 = 2; /* z - t: RSUB (index 2 among ADD SUB RSUB MUL) */
      else if (op2 == 2) op2 = 3;
    }
    if (left && op2 == 2) op2 = 3; /* MUL */
    uint32_t x = ARG_REG(ins[p + 3]);
    uint32_t y = imm1 ? imm_const(f, ins[p + 4], ty1) : ARG_REG(ins[p + 4]);
    uint32_t words[10] = {(uint32_t)((ty1 == 'I' ? I_FIADDADD : I_FFADDADD) + 4 * op1 + op2),
                          ins[c + 1], ins[p + 2], ins[c + 2], x, y, z, 0, 0, 0};
    memcpy(ins + p, words, sizeof words);
    i++; /* the second instruction is gone */
  }
  mem_free(is.target);
  vec_free(is.starts);
}

/* Last step: the register words of typed instructions become plain byte
 * offsets (eval/code.h). */
static void typed_offsets(F *f) {
  uint32_t *ins = f->ins.data, n = (uint32_t)f->ins.len;
  for (uint32_t pc = 0; pc < n;) {
    uint32_t next = ins_operands(ins, pc, NULL, NULL);
    Opcode o = (Opcode)ins[pc];
    if (o == I_FX || o == I_FXC || o == I_FXJ) {
      ins[pc + 1] *= (uint32_t)sizeof(Value);
      for (uint32_t k = pc + 4; k < next; k++) ins[k] = ARG_REG(ins[k]) * (uint32_t)sizeof(Value);
    } else if (is_fused(o)) {
      ins[pc + 1] *= (uint32_t)sizeof(Value);
      for (uint32_t k = pc + 4; k < pc + 7; k++)
        ins[k] = ARG_REG(ins[k]) * (uint32_t)sizeof(Value) + ((ins[k] & ARG_K) ? 1 : 0);
    } else if (o >= I_ADDII) {
      ins[pc + 1] *= (uint32_t)sizeof(Value);
      ins[pc + 3] = ARG_REG(ins[pc + 3]) * (uint32_t)sizeof(Value);
      if (code_layout(o)[3] == 'r') ins[pc + 4] = ARG_REG(ins[pc + 4]) * (uint32_t)sizeof(Value);
    }
    pc = next;
  }
}

/* Last of all: the leaf operand words of FX step programs (indices into
 * the instruction's L list) become the leaves' byte offsets. */
static void fx_resolve(F *f) {
  uint32_t *ins = f->ins.data, n = (uint32_t)f->ins.len;
  for (uint32_t pc = 0; pc < n;) {
    uint32_t next = ins_operands(ins, pc, NULL, NULL);
    Opcode o = (Opcode)ins[pc];
    if (o == I_FX || o == I_FXC || o == I_FXJ) {
      uint32_t *p = f->xprog.data + ins[pc + 2];
      for (;;) {
        uint32_t form = p[0] & 15, at = 2;
        if (form == FX_END) break;
        if (fx_x_kind(form) == 'L') p[at] = ins[pc + 4 + p[at]];
        if (fx_x_kind(form)) at++;
        if (fx_y_kind(form) == 'L') p[at] = ins[pc + 4 + p[at]];
        if (((p[0] >> 4) & 15) >= FXO_LT) break;
        p += fx_step_words(form);
      }
    }
    pc = next;
  }
}

static bool fxb_tail(F *f, const uint32_t *ins) {
  return (ins[0] == I_TSELF1 || ins[0] == I_TSELFM) && f->clears.data[ins[1]] == 0 && f->code->nmemo == 0 &&
         f->code->ncaps == 0 && f->code->self_reg < 0;
}

/* ------------------------------------------------------------ traces */

/* Building one FXB trace (eval/code.h): which registers (byte offsets) it
 * has written or checked, and as which type. */
#define FXT_MAX_REGS 64
#define FXT_MAX_INS 32

typedef struct Fxt {
  uint32_t off[FXT_MAX_REGS];
  char kind[FXT_MAX_REGS]; /* 'F' / 'I' */
  uint32_t n;
  VEC(uint32_t) fin, iin, steps;
  bool ok;
} Fxt;

/* Register `off` read as `kind`: checked on entry unless written before. */
static void fxt_read(Fxt *t, uint32_t off, char kind) {
  for (uint32_t i = 0; i < t->n; i++)
    if (t->off[i] == off) {
      if (t->kind[i] != kind) t->ok = false;
      return;
    }
  if (t->n >= FXT_MAX_REGS) {
    t->ok = false;
    return;
  }
  t->off[t->n] = off, t->kind[t->n++] = kind;
  if (kind == 'F') vec_push(t->fin, off);
  else vec_push(t->iin, off);
}

static void fxt_write(Fxt *t, uint32_t off, char kind) {
  for (uint32_t i = 0; i < t->n; i++)
    if (t->off[i] == off) {
      t->kind[i] = kind;
      return;
    }
  if (t->n >= FXT_MAX_REGS) {
    t->ok = false;
    return;
  }
  t->off[t->n] = off, t->kind[t->n++] = kind;
}

/* The steps of a resolved FX/FXC program (eval/code.h): copied, leaves read. */
static void fxt_tree(F *f, Fxt *t, uint32_t at) {
  for (;;) {
    const uint32_t *p = f->xprog.data + at;
    uint32_t wd = p[0], form = wd & 15, o = (wd >> 4) & 15, k = 2;
    if (form == FX_END) return;
    vec_push(t->steps, wd);
    vec_push(t->steps, p[1]);
    for (int i = 0; i < 2; i++) {
      char kind = i ? fx_y_kind(form) : fx_x_kind(form);
      if (!kind) continue;
      uint32_t v = f->xprog.data[at + k++];
      if (kind == 'L') fxt_read(t, v, 'F');
      vec_push(t->steps, v);
    }
    if (o >= FXO_LT) return;
    at += k;
  }
}

/* A fused typed comparison (J<cmp>II..FK): its FX operator and variant (0 II, 1 IK, 2 FF, 3 FK). */
static bool fxt_jcmp(Opcode o, uint32_t *fo, uint32_t *v) {
  if (o < I_LTII || o > I_JNEFK || (o - I_LTII) % 8 < 4) return false;
  *fo = FXO_LT + (uint32_t)(o - I_LTII) / 8;
  *v = (uint32_t)(o - I_LTII) % 4;
  return true;
}

/* Whether the trace instruction at pc can be a trace's member (not its tail). */
static bool fxt_member(F *f, uint32_t pc) {
  const uint32_t *ins = f->ins.data;
  uint32_t fo, v, opi;
  char ty;
  bool imm;
  return ins[pc] == I_FX || ins[pc] == I_FXJ || fxt_jcmp((Opcode)ins[pc], &fo, &v) ||
         typed_arith((Opcode)ins[pc], &opi, &ty, &imm);
}

/* The two successors of a fused comparison at pc (its JMPF at *jmpf): when
 * the outcome is true / false. */
static void fxt_edges(F *f, uint32_t pc, uint32_t *on_true, uint32_t *on_false) {
  const uint32_t *ins = f->ins.data;
  uint32_t jmpf = ins_operands(ins, pc, NULL, NULL);
  *on_true = jmpf + 3;
  *on_false = ins[jmpf + 2];
}

/* Whether straight-line members from pc (choosing edges freely) reach a
 * self tail call the trace can restart through. */
static bool fxt_reaches_tail(F *f, uint32_t pc, uint32_t budget) {
  const uint32_t *ins = f->ins.data;
  uint32_t fo, v;
  while (budget--) {
    if (fxb_tail(f, ins + pc)) return true;
    if (!fxt_member(f, pc)) return false;
    if (ins[pc] == I_FXJ || fxt_jcmp((Opcode)ins[pc], &fo, &v)) {
      uint32_t t, e;
      fxt_edges(f, pc, &t, &e);
      return fxt_reaches_tail(f, e, budget) || fxt_reaches_tail(f, t, budget);
    }
    pc = ins_operands(ins, pc, NULL, NULL);
  }
  return false;
}

/* Builds the trace from pc S into xprog (*at); false when there is none
 * worth having. */
static bool fxt_build(F *f, uint32_t S, uint32_t *at) {
  const uint32_t *ins = f->ins.data;
  Fxt t = {.ok = true};
  uint32_t pc = S, count = 0, nfx = 0;
  bool restart = false;
  for (; t.ok && count < FXT_MAX_INS; count++) {
    Opcode o = (Opcode)ins[pc];
    uint32_t next = ins_operands(ins, pc, NULL, NULL), fo = 0, v = 0, opi;
    char ty;
    bool imm;
    if (fxb_tail(f, ins + pc)) {
      for (uint32_t i = 0; i < ins[pc + 2]; i++) {
        uint32_t d = ins[pc + 3 + 2 * i], s = ins[pc + 4 + 2 * i];
        char kind = 0; /* the source's type when known */
        for (uint32_t j = 0; j < t.n; j++)
          if (t.off[j] == s) kind = t.kind[j];
        vec_push(t.steps, (uint32_t)FXT_COPY | (kind == 'F' ? 1u : kind == 'I' ? 2u : 0u) << 4);
        vec_push(t.steps, d);
        vec_push(t.steps, s);
        fxt_write(&t, d, kind);
      }
      restart = true;
      break;
    }
    bool cond = o == I_FXJ || fxt_jcmp(o, &fo, &v);
    uint32_t on_t = 0, on_f = 0, want = 0, follow = 0;
    if (cond) {
      fxt_edges(f, pc, &on_t, &on_f);
      if (fxt_reaches_tail(f, on_f, FXT_MAX_INS)) follow = on_f, want = 1;
      else if (fxt_reaches_tail(f, on_t, FXT_MAX_INS)) follow = on_t, want = 0;
      else break;
    } else if (!fxt_member(f, pc)) {
      break;
    }
    if (o == I_FX || o == I_FXJ) {
      nfx++;
      fxt_tree(f, &t, ins[pc + 2]);
      if (o == I_FX) {
        vec_push(t.steps, (uint32_t)FXT_OUT);
        vec_push(t.steps, ins[pc + 1]);
        fxt_write(&t, ins[pc + 1], 'F');
      }
    } else if (cond || typed_arith(o, &opi, &ty, &imm)) {
      uint32_t op, var;
      if (cond) op = fo, var = v;
      else op = FXO_ADD + opi, var = (ty == 'I' ? 0 : 2) + imm;
      bool k = var & 1;
      if (var < 2) {
        fxt_read(&t, ins[pc + 3], 'I');
        if (!k) fxt_read(&t, ins[pc + 4], 'I');
        vec_push(t.steps, (k ? FXT_IRK : FXT_IRR) | op << 4);
        if (!cond) vec_push(t.steps, ins[pc + 1]);
      } else {
        fxt_read(&t, ins[pc + 3], 'F');
        if (!k) fxt_read(&t, ins[pc + 4], 'F');
        vec_push(t.steps, (k ? FX_LK : FX_LL) | op << 4);
        vec_push(t.steps, ins[pc + 2]);
      }
      vec_push(t.steps, ins[pc + 3]);
      vec_push(t.steps, ins[pc + 4]);
      if (!cond && var >= 2) {
        vec_push(t.steps, (uint32_t)FXT_OUT);
        vec_push(t.steps, ins[pc + 1]);
      }
      if (!cond) fxt_write(&t, ins[pc + 1], var < 2 ? 'I' : 'F');
    }
    if (cond) {
      vec_push(t.steps, want);
      vec_push(t.steps, want ? on_t : on_f);
      next = follow;
    }
    pc = next;
  }
  bool ok = t.ok && nfx && (count >= 2 || restart) && count < FXT_MAX_INS;
  if (ok) {
    if (!restart) {
      vec_push(t.steps, (uint32_t)FXT_END);
      vec_push(t.steps, pc);
    } else {
      bool loop = S == 0; /* the checks still hold at the restart (FXT_LOOP) */
      for (uint32_t j = 0; j < t.n && loop; j++) {
        char want = 0;
        for (size_t i = 0; i < t.fin.len; i++) want = t.fin.data[i] == t.off[j] ? 'F' : want;
        for (size_t i = 0; i < t.iin.len; i++) want = t.iin.data[i] == t.off[j] ? 'I' : want;
        loop = !want || t.kind[j] == want;
      }
      vec_push(t.steps, (uint32_t)(loop ? FXT_LOOP : FXT_END));
      vec_push(t.steps, 0u);
    }
    *at = (uint32_t)f->xprog.len;
    vec_push(f->xprog, (uint32_t)(2 + t.fin.len + t.iin.len + t.steps.len));
    vec_push(f->xprog, (uint32_t)t.fin.len);
    for (size_t i = 0; i < t.fin.len; i++) vec_push(f->xprog, t.fin.data[i]);
    vec_push(f->xprog, (uint32_t)t.iin.len);
    for (size_t i = 0; i < t.iin.len; i++) vec_push(f->xprog, t.iin.data[i]);
    for (size_t i = 0; i < t.steps.len; i++) vec_push(f->xprog, t.steps.data[i]);
    uint32_t len = ins_operands(ins, S, NULL, NULL) - S;
    vec_push(f->xprog, len);
    for (uint32_t i = 0; i < len; i++) vec_push(f->xprog, ins[S + i]);
  }
  vec_free(t.fin);
  vec_free(t.iin);
  vec_free(t.steps);
  return ok;
}

/* Last of all: traces (eval/code.h) start at the FX, FXJ or fused typed
 * comparison instructions that lead to a restarting self tail call, and at
 * the first of two or more adjacent members that contain an FX. */
static void fx_traces(F *f) {
  uint32_t *ins = f->ins.data, n = (uint32_t)f->ins.len;
  for (uint32_t pc = 0; pc < n;) {
    uint32_t next = ins_operands(ins, pc, NULL, NULL), at;
    if (fxt_member(f, pc) && next - pc >= 2 && fxt_build(f, pc, &at)) {
      ins[pc] = I_FXB;
      ins[pc + 1] = at;
      for (uint32_t k = pc + 2; k < next; k++) ins[k] = I_NOP;
    }
    pc = next;
  }
}

/* ------------------------------------------------------------ clear lists */

/* The forward "may hold a heap value" analysis behind the clear lists of RET,
 * TCALL, TCALLG and TSELF (eval/code.h). State H: one byte per register, set
 * when the register may hold a heap object. Entry: parameters and captures
 * whose type is not an immediate one, and the self closure. A write sets its
 * register unless the value is an immediate (typed instructions; LOADK of an
 * immediate; calls and operators whose inferred type is an immediate one;
 * MOVE of a register that holds none); a read marked ARG_MOVE empties its
 * register (typed instructions carry no moves; TSELF leaves an argument that
 * is already in place; the JMPF after a fused comparison does not run on the
 * fused path, and there the comparison leaves its register as it was). Jumps
 * only go forward, so one pass in program order, merging the sets saved at
 * jump targets, reaches the fixpoint. */
typedef struct Heap {
  F *f;
  uint8_t *h;
  uint32_t nregs;
} Heap;

static bool heap_entry_reg(F *f, uint32_t r) {
  const Code *c = f->code;
  if (!f->fn) return r < c->nparams;
  if (r < c->nparams) return !is_immediate_type(f->fn->params[r]->type);
  if (r < c->nparams + f->nvarcaps) return !is_immediate_type(f->caps[r - c->nparams]->type);
  if (r < c->nparams + c->ncaps) return !is_immediate_type(f->ncaps_e[r - c->nparams - f->nvarcaps]->type);
  return c->self_reg >= 0 && r == (uint32_t)c->self_reg;
}

/* Appends the clear list of the registers in H (within [lo, hi), plus the
 * memo registers when `memo`); returns its offset. */
static uint32_t heap_list(Heap *hp, uint32_t lo, uint32_t hi, bool memo) {
  F *f = hp->f;
  uint32_t at = (uint32_t)f->clears.len;
  vec_push(f->clears, 0);
  for (uint32_t r = lo; r < hi; r++) {
    bool m = memo && r >= f->code->memo_lo && r < f->code->memo_lo + f->code->nmemo;
    if (hp->h[r] || m) {
      vec_push(f->clears, r);
      f->clears.data[at]++;
    }
  }
  return at;
}

static void heap_read(Heap *hp, uint32_t wd, bool honours_move) {
  if (honours_move && (wd & ARG_MOVE) && !(wd & ARG_K)) hp->h[ARG_REG(wd)] = 0;
}

/* Applies the instruction at pc to H; fills its clear list; returns whether
 * execution may fall through to the next instruction. */
static bool heap_step(Heap *hp, uint32_t pc, bool after_fused) {
  F *f = hp->f;
  uint32_t *ins = f->ins.data;
  Opcode o = (Opcode)ins[pc];
  const char *lay = code_layout(o);
  bool typed = o >= I_ADDII;
  uint32_t at = pc + 1, dst = UINT32_MAX;
  uint8_t moved_from = o == I_MOVE ? hp->h[ARG_REG(ins[pc + 2])] : 0;
  if (o == I_CALLG || o == I_TSELF) { /* copy-only forms when no argument can be a heap object */
    const uint32_t *list = ins + pc + 3;
    bool plain = true;
    for (uint32_t i = 0; i < list[0]; i++) {
      uint32_t r = ARG_REG(list[1 + i]);
      if (o == I_TSELF && r != i) plain &= !hp->h[i];
      if (o == I_CALLG || r != i) plain &= !hp->h[r];
    }
    if (plain) ins[pc] = o == I_CALLG ? I_CALLGI : I_TSELFI;
  }
  for (; *lay; lay++) {
    switch (*lay) {
    case 'a': dst = ins[at++]; break;
    case 'r': heap_read(hp, ins[at++], !typed && !after_fused); break;
    case 'L': {
      uint32_t n = ins[at++];
      for (uint32_t i = 0; i < n; i++, at++)
        if (!((o == I_TSELF || o == I_TSELFI) && ARG_REG(ins[at]) == i)) heap_read(hp, ins[at], !typed);
      break;
    }
    default: at++; break;
    }
  }
  int64_t known;
  switch (o) {
  case I_RET: ins[pc + 2] = heap_list(hp, 0, hp->nregs, false); return false;
  case I_TCALL:
  case I_TCALLG: ins[pc + 2] = heap_list(hp, 0, hp->nregs, false); return false;
  case I_TSELF:
  case I_TSELFI: ins[pc + 2] = heap_list(hp, ins[pc + 3], hp->nregs, true); return false;
  case I_JMP:
  case I_MATCHFAIL: return false;
  default: break;
  }
  if (dst == UINT32_MAX) return true;
  if (typed) {
    /* a fused comparison does not write; the unfused one writes a bool */
    if (typed_cmp_unfused(o) || o < I_LTII || is_fused(o) || o == I_FX || o == I_FXC) hp->h[dst] = 0;
  } else if (o == I_LOADK) {
    hp->h[dst] = value_is_heap(f->consts.data[ins[pc + 2]]);
  } else if (o == I_MOVE) {
    hp->h[dst] = moved_from;
  } else {
    hp->h[dst] = !ptrmap_get(&f->imm_out, (void *)(uintptr_t)(pc + 1), &known);
  }
  return true;
}

static void heap_clears(F *f) {
  uint32_t *ins = f->ins.data, n = (uint32_t)f->ins.len;
  Heap hp = {f, mem_calloc(f->maxreg + 1, 1), f->maxreg};
  PtrMap at_target = {0}; /* (target pc + 1) → index in saved */
  VEC(uint8_t *) saved = {0};
  for (uint32_t r = 0; r < hp.nregs; r++) hp.h[r] = heap_entry_reg(f, r);
  bool falls = true, fused = false;
  for (uint32_t pc = 0; pc < n;) {
    int64_t idx;
    if (!falls) memset(hp.h, 0, hp.nregs);
    if (ptrmap_get(&at_target, (void *)(uintptr_t)(pc + 1), &idx))
      for (uint32_t r = 0; r < hp.nregs; r++) hp.h[r] |= saved.data[idx][r];
    Opcode o = (Opcode)ins[pc];
    falls = heap_step(&hp, pc, fused && o == I_JMPF);
    fused = (o >= I_LTII && o <= I_JNEFK && !typed_cmp_unfused(o)) || o == I_FXJ;
    /* jumps: the state after the instruction's reads flows to the target */
    const char *lay = code_layout(o);
    uint32_t at = pc + 1;
    for (; *lay; lay++) {
      if (*lay == 'j') {
        if (!ptrmap_get(&at_target, (void *)(uintptr_t)(ins[at] + 1), &idx)) {
          vec_push(saved, mem_calloc(hp.nregs + 1, 1));
          idx = (int64_t)saved.len - 1;
          ptrmap_put(&at_target, (void *)(uintptr_t)(ins[at] + 1), idx);
        }
        for (uint32_t r = 0; r < hp.nregs; r++) saved.data[idx][r] |= hp.h[r];
      }
      at += *lay == 'L' ? ins[at] + 1 : 1;
    }
    pc = at;
  }
  for (size_t i = 0; i < saved.len; i++) mem_free(saved.data[i]);
  vec_free(saved);
  ptrmap_free(&at_target);
  mem_free(hp.h);
}

/* ------------------------------------------------------------ functions */

static void f_finish(F *f) {
  Code *c = f->code;
  if (f->maxreg >= (UINT32_C(1) << 27)) fail(f, c->span, "function needs too many registers");
  if (!f->L->failed) retarget_self_args(f);
  liveness(f);
  if (!f->L->failed) {
    fuse_branches(f);
    fuse_arith(f);
    heap_clears(f);
    compact_self_moves(f);
    typed_offsets(f);
    fx_resolve(f);
    fx_traces(f);
  }
  c->nregs = f->maxreg;
/* the Code takes over the builder's array `name` and its length (n<name>) */
#define CODE_TAKE(name) (c->n##name = (uint32_t)f->name.len, c->name = f->name.data)
  CODE_TAKE(ins);
  CODE_TAKE(consts);
  CODE_TAKE(ctors);
  CODE_TAKE(ops);
  CODE_TAKE(spans);
  CODE_TAKE(clears);
  CODE_TAKE(xprog);
#undef CODE_TAKE
  ptrmap_free(&f->imm_out);
  ptrmap_free(&f->vars);
  ptrmap_free(&f->uses);
  ptrmap_free(&f->inl);
  ptrmap_free(&f->memo);
  ptrmap_free(&f->avail);
  ptrmap_free(&f->ncapset);
  ptrmap_free(&f->hoist_head);
  vec_free(f->hoist_list);
  vec_free(f->region_open);
}

static void lower_function(Lower *L, Pending *p) {
  Function *fn = p->fn;
  Code *c = p->code;
  F f = {.L = L, .code = c};
  uint32_t r = 0;
  for (uint32_t i = 0; i < fn->nparams; i++) ptrmap_put(&f.vars, fn->params[i], r++);
  for (uint32_t i = 0; i < p->ncaps; i++) ptrmap_put(&f.vars, p->caps[i], r++);
  for (uint32_t i = 0; i < p->nncaps; i++) { /* captured shared nodes: read, never computed here */
    ptrmap_put(&f.memo, p->ncaps_e[i], r++);
    ptrmap_put(&f.avail, p->ncaps_e[i], 0);
    ptrmap_put(&f.ncapset, p->ncaps_e[i], 1);
  }
  c->nparams = fn->nparams;
  c->ncaps = p->ncaps + p->nncaps;
  if (p->self) {
    c->self_reg = (int32_t)r;
    ptrmap_put(&f.vars, p->self, r++);
  }
  /* memo registers for shared nodes (of the body and of the literals lowered in place) */
  count_uses_inlining(&f, fn->body);
  /* the shared nodes whose home is this function (or a literal lowered in
   * place here) are evaluated here, once, for the literals that capture them */
  PtrMap home_here = {0};
  if (L->has_cross) {
    VEC(const void *) keys = {0};
    if (p->key) vec_push(keys, p->key);
    for (size_t i = 0; i < f.inl.cap; i++)
      if (f.inl.slots[i].key) vec_push(keys, f.inl.slots[i].key);
    for (size_t k = 0; k < keys.len; k++) {
      uint32_t t = fn_homes_fn(&L->homes, keys.data[k]);
      const int64_t *head = t == SCOPE_TREE_NONE ? NULL : ptrmap_find(&L->cross_head, (void *)(uintptr_t)(t + 1));
      for (uint32_t j = head ? (uint32_t)*head : 0; j; j = L->cross_list.data[j - 1].next) {
        Expr *x = L->cross_list.data[j - 1].e;
        if (ptrmap_find(&f.ncapset, x)) continue;
        count_uses_from(x, &f.uses, NULL, &f.ncapset);
        ptrmap_put(&home_here, x, 1);
      }
    }
    vec_free(keys);
  }
  c->memo_lo = r;
  for (uint32_t i = 0; i < f.uses.cap; i++) {
    const Expr *e = f.uses.slots[i].key;
    if (e && !trivial(e) && !ptrmap_find(&f.ncapset, e) &&
        (f.uses.slots[i].val > 1 || (home_here.len && ptrmap_find(&home_here, e))))
      ptrmap_put(&f.memo, e, r++);
  }
  ptrmap_free(&home_here);
  c->nmemo = r - c->memo_lo;
  if (c->nmemo) hoist_scan(&f, fn->body);
  f.fn = fn;
  f.caps = p->caps;
  f.nvarcaps = p->ncaps;
  f.ncaps_e = p->ncaps_e;
  f.top = f.maxreg = r;
  emit_tail(&f, fn->body);
  f_finish(&f);
}

/* Lowers every global (unless `globals` is false: then a reference to one
 * fails to lower) and, when expr_body is given, that expression as the
 * zero-parameter entry function. */
static Program *lower_all(Lower *L, Expr *expr_body, bool globals) {
  Module *m = L->m;
  uint32_t nglobals = globals ? m->ndefs : 0;
  L->global_vals = mem_calloc(nglobals + 1, sizeof(Value));
  for (uint32_t i = 0; i < nglobals; i++) {
    GlobalDef *g = m->defs[i];
    char *name = arena_alloc(m->arena, strlen(g->name) + 2);
    name[0] = '@';
    strcpy(name + 1, g->name);
    Code *c = code_new(L, name, g->fn ? g->fn->span : g->span);
    ptrmap_put(&L->globals, g, i);
    L->global_vals[i] = value_closure_immortal(c);
    Pending p = {g->fn, c, NULL, 0, NULL, g->fn, NULL, 0};
    vec_push(L->pending, p);
  }
  Code *entry = NULL;
  Function expr_fn = {0}; /* lives until the pending functions are lowered below */
  if (expr_body) {
    expr_fn.span = expr_body->span;
    expr_fn.body = expr_body;
    entry = code_new(L, "<expression>", expr_body->span);
    Pending p = {&expr_fn, entry, NULL, 0, NULL, &expr_fn, NULL, 0};
    vec_push(L->pending, p);
  }
  for (size_t i = 0; i < L->pending.len; i++) fn_homes_add(&L->homes, L->pending.data[i].fn);
  home_index(L);
  for (size_t i = 0; i < L->pending.len && !L->failed; i++) {
    Pending p = L->pending.data[i];
    lower_function(L, &p);
  }
  Program *prog = mem_calloc(1, sizeof *prog);
  prog->m = m;
  prog->codes = L->codes.data;
  prog->ncodes = (uint32_t)L->codes.len;
  prog->nglobals = nglobals;
  prog->global_vals = L->global_vals;
  prog->entry = entry;
  vec_free(L->pending);
  fn_homes_free(&L->homes);
  fn_captures_free(&L->captures);
  ptrmap_free(&L->fv_memo);
  vec_free(L->fv_list);
  ptrmap_free(&L->cross_head);
  vec_free(L->cross_list);
  ptrmap_free(&L->globals);
  ptrmap_free(&L->op_codes);
  ptrmap_free(&L->ctor_codes);
  if (L->failed) {
    program_free(prog);
    return NULL;
  }
  return prog;
}

Program *lower_module(Module *m, Diag *d) {
  Lower L = {.m = m, .d = d};
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (!m->defs[i]->fn) {
      diag_error(d, m->defs[i]->span, "internal error: global without a body");
      return NULL;
    }
  return lower_all(&L, NULL, true);
}

Program *lower_expression(Module *m, Diag *d) {
  Lower L = {.m = m, .d = d};
  if (!m->expr) {
    diag_plain(d, DIAG_ERROR, "no expression to evaluate");
    return NULL;
  }
  return lower_all(&L, m->expr, true);
}

Program *lower_closed(Module *m, Expr *e, Diag *d) {
  Lower L = {.m = m, .d = d};
  return lower_all(&L, e, false);
}

void program_free(Program *p) {
  if (!p) return;
  for (uint32_t i = 0; i < p->ncodes; i++) {
    Code *c = p->codes[i];
    for (uint32_t k = 0; k < c->nconsts; k++) value_release(c->consts[k]);
    mem_free(c->consts);
    mem_free(c->ins);
    mem_free(c->ctors);
    mem_free(c->ops);
    mem_free(c->spans);
    mem_free(c->clears);
    mem_free(c->xprog);
    mem_free(c);
  }
  mem_free(p->codes);
  mem_free(p->global_vals);
  mem_free(p);
}

int32_t program_global(const Program *p, const char *name) {
  for (uint32_t i = 0; i < p->nglobals; i++)
    if (strcmp(p->codes[i]->name + 1, name) == 0) return (int32_t)i;
  return -1;
}

/* An FX step program: `[mul R2 R2; push mul R3 R3; sub S A; ...]`. */
static void fx_dump(FILE *out, const uint32_t *p) {
  static const char *const ops[FXO_COUNT] = {"add", "sub", "mul", "lt", "le", "gt", "ge", "eq", "ne"};
  fputs(" [", out);
  for (;;) {
    uint32_t wd = p[0], form = wd & 15, o = (wd >> 4) & 15, at = 2;
    if (form == FX_END) break;
    char xy[2][32];
    for (int i = 0; i < 2; i++) {
      char kind = i ? fx_y_kind(form) : fx_x_kind(form);
      float kf;
      if (kind == 'K') memcpy(&kf, &p[at], sizeof kf);
      if (kind == 'L') snprintf(xy[i], sizeof xy[i], "R%u", p[at++] / (uint32_t)sizeof(Value));
      else if (kind == 'K') snprintf(xy[i], sizeof xy[i], "#%g", (double)kf), at++;
      else snprintf(xy[i], sizeof xy[i], "%s", i == 0 && form == FX_SA ? "S" : "A");
    }
    fprintf(out, "%s%s %s %s", (wd & FX_PUSH) ? "push " : "", ops[o], xy[0], xy[1]);
    if (o >= FXO_LT) break;
    p += at;
    if ((p[0] & 15) != FX_END) fputs("; ", out);
  }
  fputc(']', out);
}

/* An FXB trace: `{F R2 R3 I R4; ieq R4 #100 ?1>8; ...; end 0}`: the checked
 * registers, then the steps (FX steps as fx_dump, `?want>pc` after a
 * comparison, `>Rd` after a result written). */
static void fxb_dump(FILE *out, const uint32_t *p) {
  static const char *const ops[FXO_COUNT] = {"add", "sub", "mul", "lt", "le", "gt", "ge", "eq", "ne"};
  uint32_t V = (uint32_t)sizeof(Value), n = *++p;
  p++;
  fputs(" {F", out);
  for (uint32_t i = 0; i < n; i++) fprintf(out, " R%u", *p++ / V);
  n = *p++;
  fputs(" I", out);
  for (uint32_t i = 0; i < n; i++) fprintf(out, " R%u", *p++ / V);
  for (;;) {
    uint32_t wd = *p++, form = wd & 15, o = (wd >> 4) & 15;
    if (form == FXT_END || form == FXT_LOOP) {
      fprintf(out, "; %s %u}", form == FXT_END ? "end" : "loop", *p);
      return;
    }
    if (form == FXT_OUT) {
      fprintf(out, " >R%u", *p++ / V);
      continue;
    }
    if (form == FXT_COPY) {
      fprintf(out, "; R%u>R%u", p[1] / V, p[0] / V);
      p += 2;
      continue;
    }
    if (form == FXT_IRR || form == FXT_IRK) {
      fprintf(out, "; i%s", ops[o]);
      if (o < FXO_LT) fprintf(out, " >R%u", *p++ / V);
      fprintf(out, " R%u", *p++ / V);
      if (form == FXT_IRK) fprintf(out, " #%d", (int32_t)*p++);
      else fprintf(out, " R%u", *p++ / V);
    } else {
      fprintf(out, "; %s%s", (wd & FX_PUSH) ? "push " : "", ops[o]);
      p++;
      for (int i = 0; i < 2; i++) {
        char kind = i ? fx_y_kind(form) : fx_x_kind(form);
        float kf;
        if (kind == 'K') memcpy(&kf, p, sizeof kf);
        if (kind == 'L') fprintf(out, " R%u", *p++ / V);
        else if (kind == 'K') fprintf(out, " #%g", (double)kf), p++;
        else fprintf(out, " %s", i == 0 && form == FX_SA ? "S" : "A");
      }
    }
    if (o >= FXO_LT) {
      fprintf(out, " ?%u>%u", p[0], p[1]);
      p += 2;
    }
  }
}

void program_dump(FILE *out, const Program *p) {
  for (uint32_t i = 0; i < p->ncodes; i++) {
    const Code *c = p->codes[i];
    fprintf(out, "code %u %s: params %u caps %u self %d regs %u\n", i, c->name, c->nparams, c->ncaps,
            c->self_reg, c->nregs);
    for (uint32_t pc = 0; pc < c->nins;) {
      Opcode o = (Opcode)c->ins[pc];
      fprintf(out, "  %4u %-9s", pc, code_opname(o));
      uint32_t next = ins_operands(c->ins, pc, NULL, NULL);
      const char *lay = code_layout(o);
      for (uint32_t k = pc + 1; k < next; k++) {
        uint32_t wd = c->ins[k];
        if (*lay == 'i' && imm_is_float(o)) {
          float x;
          memcpy(&x, &wd, sizeof x);
          fprintf(out, " #%g", (double)x);
        } else if (*lay == 'i') {
          fprintf(out, " #%d", (int32_t)wd);
        } else if (*lay == 'k' && ((k == pc + 2 && (o == I_RET || o == I_TCALL || o == I_TCALLG ||
                                                    o == I_TSELF || o == I_TSELFI)) ||
                                   (k == pc + 1 && (o == I_TSELFM || o == I_TSELF1)))) {
          fputs(" {", out);
          for (uint32_t j = 1; j <= c->clears[wd]; j++) fprintf(out, "%s%u", j > 1 ? "," : "", c->clears[wd + j]);
          fputc('}', out);
        } else if ((o >= I_ADDII && (*lay == 'a' || *lay == 'r')) || (*lay == 'P' && k > pc + 2) ||
                   (o >= I_FX && o <= I_FXJ && *lay == 'L' && k > pc + 3)) {
          fprintf(out, " %s%u", (wd & 1) ? "K" : "", wd / (uint32_t)sizeof(Value));
        } else {
          fprintf(out, " %s%u%s", (wd & ARG_K) ? "K" : "", ARG_REG(wd), (wd & ARG_MOVE) ? "!" : "");
        }
        if (*lay && *lay != 'L' && *lay != 'P') lay++;
      }
      if (o == I_FXB) fxb_dump(out, c->xprog + c->ins[pc + 1]);
      else if (o >= I_FX) fx_dump(out, c->xprog + c->ins[pc + 2]);
      fputc('\n', out);
      pc = next;
    }
  }
}
