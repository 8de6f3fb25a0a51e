/* transform/static_refs.c — ResolveStaticRefs, relayc's run-pipeline rewrite of
 * a function whose references and closures are all known at compile time into
 * pure dataflow (not a TVM pass; `relayc --run` runs it unless -O0).
 *
 * Gradient's higher-order output (spec/gradient.md §1.4) keeps every adjoint in
 * a `ref` cell and the backward pass in a chain of closures stored in a tape
 * cell, each calling the one before it. For straight-line code all of that is
 * static: which cell a `ref_read` reads, which closure a call runs. This pass
 * evaluates such a function symbolically, in evaluation order: operator calls
 * become residual nodes (a DAG: graph form), tuples and projections of known
 * tuples are forwarded, `ref`/`ref_read`/`ref_write` act on a compile-time
 * store, and a call of a known closure evaluates its body in place. The
 * function's body becomes the residual expression of its result, so later
 * rewrites (FuseDenseTranspose, FuseScaledAdd) see the gradient's products next
 * to the update that consumes them, and nothing is left of the cells, the tape
 * or the closures. `subtract(x, z)` with z a `zeros_like`/`zeros` result and x
 * of the result's type becomes x, and so does `add(z, x)` / `add(x, z)` unless
 * x is a float that may hold -0: 0 + -0 is +0 (IEEE 754), so x itself would
 * keep a negative zero the program turns positive. A sum, mean or matrix
 * product (a reduction starting from +0) never gives -0, nor do what moves its
 * elements and a few more (never_negative_zero); elsewhere the add stays, and
 * the kernel skips its arithmetic where x has no -0 (ops/kernels/k_elemwise.c).
 *
 * Fires only on a function that uses references, and keeps it unchanged
 * unless ALL of it fits: no if/match, no calls of globals or constructors, no
 * stateful operator, no polymorphic literal, no literal run twice (each node
 * is then evaluated at most once, so one memo keyed by node stands for every
 * activation), no node with an effect shared by two function bodies (the
 * interpreter may run it where a closure is made), a callee with an effect only in a
 * call whose arguments are variables or constants, and neither a reference
 * nor a closure reaching an operator or the result. Operator calls nothing
 * uses are dropped (pure). Linear: every node is evaluated at most once;
 * nesting recurses, and a nest too deep for the stack leaves the function as
 * it was.
 */
#include <stdint.h>

#include "ir/arena.h"
#include "ir/build.h"
#include "ir/diag.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "transform/dagscan.h"
#include "transform/pass.h"

bool pass_RESOLVE_STATIC_REFS(PassCtx *c);

typedef enum {
  SV_ATOM,  /* a residual node */
  SV_PARAM, /* a parameter of the function rewritten (a new use per materialisation) */
  SV_TUPLE, /* a tuple of static values */
  SV_REF,   /* a compile-time cell */
  SV_CLOS,  /* a function literal (its free variables are in the one binding map) */
} SvKind;

typedef struct SVal SVal;
struct SVal {
  SvKind kind;
  bool zero;       /* SV_ATOM: a zeros_like/zeros result (every element +0) */
  const Type *t;   /* the type of the expression it is the value of */
  Expr *atom;      /* SV_ATOM: the node; SV_TUPLE: its materialised tuple, once built */
  Var *param;      /* SV_PARAM */
  SVal **fields;   /* SV_TUPLE */
  uint32_t n;      /* SV_TUPLE: fields */
  uint32_t cell;   /* SV_REF: index into Straight.cells */
  Function *fn;    /* SV_CLOS */
};

typedef struct Straight {
  Module *m;
  Arena *a;             /* the SVals */
  PtrMap vars;          /* Var -> SVal */
  PtrMap memo;          /* Expr -> SVal (every node is evaluated at most once) */
  PtrMap ran;           /* Function -> 1 once its body was evaluated */
  VEC(SVal *) cells;    /* the store */
  VEC(Expr *) made;     /* residual calls, projections and tuples, in evaluation order */
  bool failed;          /* the function does not fit: keep it */
} Straight;

static SVal *eval(Straight *s, Expr *e);

static SVal *give_up(Straight *s) {
  s->failed = true;
  return NULL;
}

static SVal *sval(Straight *s, SvKind k, const Type *t) {
  SVal *v = arena_alloc(s->a, sizeof *v);
  *v = (SVal){.kind = k, .t = t};
  return v;
}

static SVal *atom(Straight *s, Expr *e, const Type *t) {
  SVal *v = sval(s, SV_ATOM, t);
  v->atom = e;
  return v;
}

/* The residual expression of v: atoms as they are, a tuple built once (shared
 * by its uses); NULL (and give up) for a cell or a closure. */
static Expr *materialise(Straight *s, SVal *v) {
  switch (v->kind) {
  case SV_ATOM: return v->atom;
  case SV_PARAM: return build_typed(build_var(s->m, v->param, v->param->span), v->param->type);
  case SV_TUPLE: {
    if (v->atom) return v->atom;
    Expr **f = v->n ? arena_alloc(s->a, v->n * sizeof *f) : NULL;
    for (uint32_t i = 0; i < v->n; i++)
      if (!(f[i] = materialise(s, v->fields[i]))) return NULL;
    v->atom = build_typed(build_tuple(s->m, f, v->n, (Span){0}), (Type *)v->t);
    vec_push(s->made, v->atom);
    return v->atom;
  }
  case SV_REF:
  case SV_CLOS: break;
  }
  give_up(s);
  return NULL;
}

/* Whether no element of residual e can be -0 whatever the inputs (depth
 * bounds the look through the operators that move or select elements): a
 * reduction that starts from +0 (+0 + -0 is +0) as TVM's and relayc's kernels
 * compute them, a zero, one or exp, an add with such an operand, a subtract
 * of such a minuend (-0 - +0 is the only way to -0). */
static bool never_negative_zero_expr(const Expr *e, int depth) {
  int32_t id = op_call_id(e);
  if (id < 0 || depth <= 0) return false;
  const Expr *const *a = (const Expr *const *)e->call.args;
  switch (id) {
  case OP_SUM: case OP_MEAN: case OP_NN_DENSE: case OP_NN_MATMUL: case OP_NN_BATCH_MATMUL:
  case OP_ZEROS: case OP_ZEROS_LIKE: case OP_ONES: case OP_ONES_LIKE: case OP_EXP:
    return true;
  case OP_COLLAPSE_SUM_LIKE: case OP_RESHAPE: case OP_TRANSPOSE: case OP_EXPAND_DIMS: case OP_SQUEEZE:
  case OP_BROADCAST_TO: case OP_BROADCAST_TO_LIKE: case OP_SUBTRACT:
    return never_negative_zero_expr(a[0], depth - 1);
  case OP_ADD:
    return never_negative_zero_expr(a[0], depth - 1) || never_negative_zero_expr(a[1], depth - 1);
  case OP_WHERE:
    return never_negative_zero_expr(a[1], depth - 1) && never_negative_zero_expr(a[2], depth - 1);
  default: return false;
  }
}

/* Whether no element of v (of tensor type t) can be -0: a non-float, or a
 * residual as above. */
static bool never_negative_zero(const SVal *v, const Type *t) {
  if (!dtype_is_float(t->tensor.dtype)) return true;
  return v->kind == SV_ATOM && never_negative_zero_expr(v->atom, 8);
}

/* x when `op(a, b)` is subtract(x, z), or add(z, x) / add(x, z) with x never
 * -0, z known zero and x of the call's own type; else NULL. */
static SVal *zero_operand_fold(int32_t id, SVal *a, SVal *b, const Type *t) {
  SVal *keep = NULL;
  if ((id == OP_ADD || id == OP_SUBTRACT) && b->kind == SV_ATOM && b->zero) keep = a;
  else if (id == OP_ADD && a->kind == SV_ATOM && a->zero) keep = b;
  if (!keep || (keep->kind != SV_ATOM && keep->kind != SV_PARAM)) return NULL;
  const Type *kt = type_solved_tensor(keep->t), *rt = type_solved(t);
  if (!kt || !rt || !type_equal(kt, rt)) return NULL;
  return id == OP_ADD && !never_negative_zero(keep, kt) ? NULL : keep;
}

/* An operator call: a new node over the arguments' residuals (the old callee
 * node moves to it: each old call is evaluated at most once). */
static SVal *eval_op_call(Straight *s, Expr *e) {
  int32_t id = op_call_id(e);
  if (op_is_stateful(id)) return give_up(s);
  uint32_t n = e->call.nargs;
  SVal **vals = n ? arena_alloc(s->a, n * sizeof *vals) : NULL;
  for (uint32_t i = 0; i < n; i++)
    if (!(vals[i] = eval(s, e->call.args[i]))) return NULL;
  if (n == 2) {
    SVal *kept = zero_operand_fold(id, vals[0], vals[1], e->type);
    if (kept) return kept;
  }
  Expr **args = n ? arena_alloc(s->a, n * sizeof *args) : NULL;
  for (uint32_t i = 0; i < n; i++)
    if (!(args[i] = materialise(s, vals[i]))) return NULL;
  Expr *r = build_call(s->m, e->call.fn, args, n, e->span);
  r->call.attrs = e->call.attrs;
  r->type = e->type;
  vec_push(s->made, r);
  SVal *v = atom(s, r, e->type);
  v->zero = id == OP_ZEROS_LIKE || id == OP_ZEROS;
  return v;
}

static bool plain_atom(const Expr *e) { return e->kind == EXPR_VAR || e->kind == EXPR_CONST; }

/* A call of a closure: its body evaluated with the parameters bound. */
static SVal *eval_closure_call(Straight *s, Expr *e) {
  if (e->call.fn->kind != EXPR_VAR && e->call.fn->kind != EXPR_FN)
    for (uint32_t i = 0; i < e->call.nargs; i++)
      if (!plain_atom(e->call.args[i])) return give_up(s); /* effect order: keep it simple */
  SVal *f = eval(s, e->call.fn);
  if (!f) return NULL;
  if (f->kind != SV_CLOS || f->fn->nparams != e->call.nargs) return give_up(s);
  if (ptrmap_find(&s->ran, f->fn)) return give_up(s); /* a second activation */
  ptrmap_put(&s->ran, f->fn, 1);
  for (uint32_t i = 0; i < e->call.nargs; i++) {
    SVal *a = eval(s, e->call.args[i]);
    if (!a) return NULL;
    ptrmap_put(&s->vars, f->fn->params[i], (int64_t)(intptr_t)a);
  }
  return eval(s, f->fn->body);
}

static SVal *eval_call(Straight *s, Expr *e) {
  switch (e->call.fn->kind) {
  case EXPR_OP: return eval_op_call(s, e);
  case EXPR_GLOBAL:
  case EXPR_CTOR: return give_up(s);
  default: return eval_closure_call(s, e);
  }
}

static SVal *eval_tuple(Straight *s, Expr *e) {
  SVal *v = sval(s, SV_TUPLE, e->type);
  v->n = e->tuple.n;
  v->fields = v->n ? arena_alloc(s->a, v->n * sizeof *v->fields) : NULL;
  for (uint32_t i = 0; i < v->n; i++)
    if (!(v->fields[i] = eval(s, e->tuple.fields[i]))) return NULL;
  return v;
}

static SVal *eval_proj(Straight *s, Expr *e) {
  SVal *t = eval(s, e->proj.tuple);
  if (!t) return NULL;
  if (t->kind == SV_TUPLE) return e->proj.index < t->n ? t->fields[e->proj.index] : give_up(s);
  Expr *base = t->kind == SV_ATOM || t->kind == SV_PARAM ? materialise(s, t) : NULL;
  if (!base) return give_up(s);
  Expr *r = build_typed(build_proj(s->m, base, e->proj.index, e->span), e->type);
  vec_push(s->made, r);
  return atom(s, r, e->type);
}

/* A let chain, iteratively. */
static SVal *eval_let(Straight *s, Expr *e) {
  while (e->kind == EXPR_LET) {
    SVal *v = eval(s, e->let.value);
    if (!v) return NULL;
    ptrmap_put(&s->vars, e->let.var, (int64_t)(intptr_t)v);
    e = e->let.body;
  }
  return eval(s, e);
}

static SVal *eval_ref(Straight *s, Expr *e) {
  switch (e->kind) {
  case EXPR_REF_NEW: {
    SVal *init = eval(s, e->ref.arg);
    if (!init) return NULL;
    SVal *r = sval(s, SV_REF, e->type);
    r->cell = (uint32_t)s->cells.len;
    vec_push(s->cells, init);
    return r;
  }
  case EXPR_REF_READ: {
    SVal *r = eval(s, e->ref.arg);
    if (!r) return NULL;
    return r->kind == SV_REF ? s->cells.data[r->cell] : give_up(s);
  }
  default: { /* EXPR_REF_WRITE: the cell, then the value (left to right) */
    SVal *r = eval(s, e->ref_write.ref);
    SVal *v = r ? eval(s, e->ref_write.value) : NULL;
    if (!v) return NULL;
    if (r->kind != SV_REF) return give_up(s);
    s->cells.data[r->cell] = v;
    return sval(s, SV_TUPLE, e->type); /* () */
  }
  }
}

static SVal *eval_node(Straight *s, Expr *e) {
  switch (e->kind) {
  case EXPR_CONST: return atom(s, e, e->type);
  case EXPR_VAR: {
    int64_t v;
    return ptrmap_get(&s->vars, e->var.var, &v) ? (SVal *)(intptr_t)v : give_up(s);
  }
  case EXPR_CALL: return eval_call(s, e);
  case EXPR_TUPLE: return eval_tuple(s, e);
  case EXPR_PROJ: return eval_proj(s, e);
  case EXPR_LET: return eval_let(s, e);
  case EXPR_FN: {
    if (e->fn->ntparams) return give_up(s);
    SVal *v = sval(s, SV_CLOS, e->type);
    v->fn = e->fn;
    return v;
  }
  case EXPR_REF_NEW:
  case EXPR_REF_READ:
  case EXPR_REF_WRITE: return eval_ref(s, e);
  default: return give_up(s); /* if, match, globals, operators or constructors as values */
  }
}

/* Whether value v of node e has another type than e (a Tensor[(?)] forwarded
 * through a let or a parameter annotated (2), a field of such a tuple): the
 * residual nodes over it keep the types inferred for e, which a full
 * inference would not give them. Cells and closures are checked where their
 * contents are read or their bodies run. */
static bool less_precise(const SVal *v, const Expr *e) {
  if (v->kind == SV_REF || v->kind == SV_CLOS || !v->t || !e->type) return false;
  return !type_equal(v->t, e->type);
}

static SVal *eval(Straight *s, Expr *e) {
  if (s->failed) return NULL;
  if (stack_exhausted()) return give_up(s);
  int64_t hit;
  if (e->kind != EXPR_VAR && ptrmap_get(&s->memo, e, &hit)) return (SVal *)(intptr_t)hit;
  SVal *v = eval_node(s, e);
  if (v && less_precise(v, e)) return give_up(s);
  if (v && e->kind != EXPR_VAR) ptrmap_put(&s->memo, e, (int64_t)(intptr_t)v);
  return v;
}

static bool is_ref_op(const Expr *e, void *ud) {
  (void)ud;
  return e->kind == EXPR_REF_NEW || e->kind == EXPR_REF_READ || e->kind == EXPR_REF_WRITE;
}

/* Whether a node whose evaluation has an effect is shared between two
 * function bodies (the function's and a literal's, or two literals'): the
 * interpreter may evaluate it where the closure is made rather than at its
 * first use. Within one body graph sharing means "at the first use", which is
 * what the symbolic evaluation does. Each node is entered once (from the
 * first body that reaches it); effects below a node reached again from
 * another body are asked of dag_has_effects (memoised, iterative). */
static bool effect_shared_across_bodies(Expr *root) {
  PtrMap owner = {0}, eff = {0};
  VEC(Expr *) bodies = {0};
  VEC(Expr *) st = {0};
  vec_push(bodies, root);
  bool shared = false;
  for (size_t b = 0; b < bodies.len && !shared; b++) {
    st.len = 0;
    vec_push(st, bodies.data[b]);
    while (st.len && !shared) {
      Expr *e = st.data[--st.len];
      int64_t *o = ptrmap_find(&owner, e);
      if (o) {
        if (*o != (int64_t)b + 1) shared = dag_has_effects(&eff, e);
        continue;
      }
      ptrmap_put(&owner, e, (int64_t)b + 1);
      if (e->kind == EXPR_FN) {
        vec_push(bodies, e->fn->body);
        continue;
      }
      Expr *k;
      for (uint32_t i = 0; (k = dag_child(e, i)); i++) vec_push(st, k);
    }
  }
  vec_free(st);
  vec_free(bodies);
  ptrmap_free(&owner);
  ptrmap_free(&eff);
  return shared;
}

/* ---- the residual as a let chain in evaluation order
 *
 * A residual node used more than once is let-bound where the original
 * program evaluated it, so lifetimes stay as they were: a graph-form result
 * would have the interpreter evaluate each output at its first use (a weight
 * gradient of the first layer would pull the whole backward pass in and keep
 * every later layer's inputs alive until their own output's turn), and its
 * memo guards make lowering a large function slow. A node used once is nested
 * into its user when nothing bound lies between them in evaluation order
 * (what the program wrote as one nested expression: transpose into nn.dense,
 * a scale into its update), else bound too. */

/* A fresh use of a leaf shared by several users (a variable use per use; a
 * constant copied, so no leaf is a memoised graph node), else e itself. */
static Expr *leaf_use(Module *m, const DagScan *scan, Expr *e) {
  uint32_t k;
  if (!dag_scanned(scan, e, &k) || scan->uses[k] <= 1) return e;
  if (e->kind == EXPR_VAR) return build_typed(build_var(m, e->var.var, e->span), e->type);
  if (e->kind == EXPR_CONST) return build_typed(build_copy(m, e), e->type);
  return e;
}

/* Child slot i of a residual node (call arguments, tuple fields, the projected tuple), or NULL. */
static Expr **child_slot(Expr *e, uint32_t i) {
  switch (e->kind) {
  case EXPR_CALL: return i < e->call.nargs ? &e->call.args[i] : NULL;
  case EXPR_TUPLE: return i < e->tuple.n ? &e->tuple.fields[i] : NULL;
  case EXPR_PROJ: return i == 0 ? &e->proj.tuple : NULL;
  default: return NULL;
  }
}

static Expr *as_let_chain(Straight *s, Expr *root) {
  DagScan scan;
  dag_scan_roots(&scan, &root, 1, true);
  size_t n = s->made.len;
  PtrMap order = {0}, consumer = {0}, bound = {0};
  for (size_t i = 0; i < n; i++) ptrmap_put(&order, s->made.data[i], (int64_t)i);
  for (uint32_t k = 0; k < scan.n; k++) { /* the user of each single-use node */
    Expr *p = scan.pre[k], **slot;
    for (uint32_t i = 0; (slot = child_slot(p, i)); i++) {
      uint32_t c;
      if (dag_scanned(&scan, *slot, &c) && scan.uses[c] == 1) ptrmap_put(&consumer, *slot, (int64_t)(intptr_t)p);
    }
  }
  int64_t next_bound = INT64_MAX; /* the earliest bound node after the current one */
  for (size_t i = n; i-- > 0;) {
    Expr *e = s->made.data[i];
    uint32_t k;
    if (e == root || !dag_scanned(&scan, e, &k)) continue;
    int64_t user, at;
    bool nest = scan.uses[k] == 1 && ptrmap_get(&consumer, e, &user) &&
                ptrmap_get(&order, (void *)(intptr_t)user, &at) && next_bound >= at;
    if (nest) continue;
    ptrmap_put(&bound, e, 1);
    next_bound = (int64_t)i;
  }
  VEC(Var *) vars = {0};
  VEC(Expr *) vals = {0};
  PtrMap var_of = {0};
  for (size_t i = 0; i < n; i++) { /* children first: creation order is a topological order */
    Expr *e = s->made.data[i], **slot;
    uint32_t k;
    if (!dag_scanned(&scan, e, &k)) continue;
    for (uint32_t j = 0; (slot = child_slot(e, j)); j++) {
      int64_t v;
      if (ptrmap_get(&var_of, *slot, &v)) *slot = build_typed(build_var(s->m, (Var *)(intptr_t)v, e->span), (*slot)->type);
      else *slot = leaf_use(s->m, &scan, *slot);
    }
    if (!ptrmap_find(&bound, e)) continue;
    Var *v = build_fresh_var(s->m, "x", NULL, e->span);
    v->type = e->type;
    ptrmap_put(&var_of, e, (int64_t)(intptr_t)v);
    vec_push(vars, v);
    vec_push(vals, e);
  }
  Expr *body = root;
  for (size_t i = vars.len; i-- > 0;) body = build_typed(build_let(s->m, vars.data[i], vals.data[i], body, vals.data[i]->span), body->type);
  vec_free(vars);
  vec_free(vals);
  ptrmap_free(&var_of);
  ptrmap_free(&order);
  ptrmap_free(&consumer);
  ptrmap_free(&bound);
  dag_free(&scan);
  return body;
}

/* The residual body of f, or NULL when f does not fit. */
static Expr *straighten(Module *m, Function *f) {
  Straight s = {.m = m, .a = arena_new()};
  if (!s.a) return NULL;
  for (uint32_t i = 0; i < f->nparams; i++) {
    SVal *p = sval(&s, SV_PARAM, f->params[i]->type);
    p->param = f->params[i];
    ptrmap_put(&s.vars, f->params[i], (int64_t)(intptr_t)p);
  }
  ptrmap_put(&s.ran, f, 1);
  SVal *r = eval(&s, f->body);
  Expr *body = r ? materialise(&s, r) : NULL;
  if (s.failed) body = NULL;
  if (body) body = as_let_chain(&s, body);
  ptrmap_free(&s.vars);
  ptrmap_free(&s.memo);
  ptrmap_free(&s.ran);
  vec_free(s.cells);
  vec_free(s.made);
  arena_free(s.a);
  return body;
}

static bool static_refs_function(PassCtx *c, GlobalDef *g) {
  Function *f = g->fn;
  if (f->ntparams || !dag_any(f->body, is_ref_op, NULL) || effect_shared_across_bodies(f->body)) return true;
  Expr *body = straighten(c->m, f);
  if (body) {
    f->body = body;
    f->type = NULL;
  }
  return true;
}

bool pass_RESOLVE_STATIC_REFS(PassCtx *c) { return pass_for_each_function(c, static_refs_function); }
