/* transform/gradient_fo.c — first-order reverse mode (spec/gradient.md §1.5), TVM's
 * FirstOrderGradient: a staged backward pass over pure dataflow code, so the output has
 * no references and no closures.
 *
 * The forward walk binds every operator call, tuple and projection to a
 * variable (memoised by node: a DAG-shared node is computed once and has one
 * accumulator, §1.6) and records a backward action; a function literal
 * applied on the spot is inlined, its body's nodes memoised for that call
 * only. The result's accumulator is seeded (ones for a tensor, ones for EVERY
 * leaf of a tuple result: TVM's first-order seed, §1.3), then the actions run
 * in reverse creation order, each adding its input adjoints into the inputs'
 * accumulators, and the parameters' accumulators are returned. One let chain
 * holds forward and backward code, each let made as its variable is bound.
 *
 * Fresh memory is most of the cost on a 100,000-binding chain (the kernel
 * clears every page first), so the walk keeps little of its own: the memo
 * lives in the source nodes' marks (Expr.mark = 1 + the node's index in
 * FO.memo, checked against the entry; each mark is put back when its entry is
 * dropped), the walk has explicit stacks (no C recursion, any depth), and the
 * values, actions and memo go to a scratch arena freed at the end.
 *
 * Accumulators are symbolic: a tensor accumulator is NULL until something is
 * added (zero), so an operation whose result receives no adjoint runs no
 * rule, and a parameter nothing reached gets zeros_like(p). Rules are linear
 * in the adjoint, so skipping zero contributions changes no value.
 *
 * Nodes are built typed (sema/typeof.h: each type follows from the
 * children's; rule outputs are typed once the rule returns), so the runner's
 * re-typing keeps the output instead of inferring it again; the lets take the
 * expected result type as they are made (checked at the end).
 *
 * Rejected, each at its location, with a hint to use mode=higher_order: let,
 * if, match and constructors, references, global functions, function
 * literals that are not applied on the spot (TVM's feature check).
 */
#include <string.h>

#include "ir/build.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"
#include "ops/gradients/grad.h"
#include "ops/op_call.h"
#include "ops/registry.h"
#include "sema/typeof.h"
#include "transform/gradient.h"

typedef struct Acc Acc;
struct Acc {
  Expr *e;    /* tensor: the sum so far (an atom), NULL = zero */
  Acc *kids;  /* tuple: one per field */
  uint32_t n;
  bool tuple;
};

typedef struct FoVal {
  Expr *fwd;     /* the forward value, an atom */
  const Type *t; /* its type */
  Acc acc;
  bool constant; /* a constant: its adjoint is never wanted, nothing accumulates */
} FoVal;

typedef enum {
  ACT_OP,    /* res = op(args) */
  ACT_TUPLE, /* res = (args...) */
  ACT_PROJ,  /* res = args[0].index */
} ActKind;

/* Each linked to the one recorded before it (the backward walk's order). */
typedef struct Action Action;
struct Action {
  ActKind kind;
  uint32_t n;
  uint32_t index;
  Expr *call; /* ACT_OP: the source call */
  FoVal *res;
  const Action *prev;
  FoVal *args[];
};

typedef struct MemoEntry {
  Expr *e;
  FoVal *val;
  uint32_t saved; /* e's mark before the pass took it */
} MemoEntry;

typedef struct FO {
  Module *m;
  Diag *d;
  Arena *scratch; /* what only the pass reads (values, actions, the memo), freed at its end: the
                     output nodes stay dense in the module's arena for the passes after */
  Expr *lets;        /* the let chain, built as bound: each let's body is the next let */
  Expr **lets_end;   /* where the next let goes (the last let's body) */
  Type *lets_type;   /* the type every let is given as built: the result's, as expected */
  size_t nlets;
  size_t untyped_to; /* lets 1..untyped_to stay untyped: one of them binds an untyped value */
  const Action *last_act;
  struct {
    MemoEntry *data; /* in `scratch`: room for every node (huge pages, not 4 KiB faults as it grows) */
    size_t len, cap;
  } memo; /* the nodes walked, an inlined body's after its caller's */
  PtrMap env;       /* Var* -> FoVal* */
  bool failed;
  GradOp zeros_like, ones_like, add; /* the calls the transform itself builds */
  GradOpCache *ops; /* the calls the rules build (ops/gradients/grad.h) */
  GradForwardMemo forward; /* grad_forward_call's */
  TypeofCx tc;      /* types of the nodes built (sema/typeof.h) */
} FO;

/* Binds e to a fresh variable at the end of the let chain; returns a use of it.
 * The let's body is filled by the next one (lets_close gives the last its
 * body), its type is the expected result's. */
static Expr *push(FO *f, const char *prefix, Expr *e) {
  Var *v = build_fresh_var(f->m, prefix, NULL, e->span);
  v->type = typeof_set(&f->tc, e)->type;
  Expr *let = build_let(f->m, v, e, NULL, e->span);
  let->type = v->type ? f->lets_type : NULL;
  *f->lets_end = let;
  f->lets_end = &let->let.body;
  if (!v->type) f->untyped_to = f->nlets + 1;
  f->nlets++;
  return typeof_set(&f->tc, build_var(f->m, v, e->span));
}

/* The expected type of the result, (the body's, (each parameter's)), as the
 * shared object typeof gives the tuple built last. */
static Type *expected_result_type(FO *f, const Function *fn) {
  Type *small[8];
  Type **ps = fn->nparams <= 8 ? small : mem_calloc(fn->nparams, sizeof *ps);
  for (uint32_t i = 0; i < fn->nparams; i++) ps[i] = fn->params[i]->type;
  Type *parts[2] = {fn->body->type, typeof_tuple_type(&f->tc, ps, fn->nparams)};
  if (ps != small) mem_free(ps);
  return parts[0] && parts[1] ? typeof_tuple_type(&f->tc, parts, 2) : NULL;
}

/* The chain around `body`. A let is typed as its body when its value is
 * typed (sema/typeof.h let rule), so every let from the last untyped one out
 * stays untyped; each let took the expected type, walked again only when the
 * body's is another. */
static Expr *lets_close(FO *f, Expr *body) {
  *f->lets_end = body;
  if (body->type && body->type == f->lets_type && !f->untyped_to) return f->lets;
  size_t i = 0;
  for (Expr *l = f->lets; l != body; l = l->let.body) l->type = ++i > f->untyped_to ? body->type : NULL;
  return f->lets;
}

/* A zero accumulator of type t (arena memory is zeroed). */
static void acc_init(FO *f, Acc *a, const Type *t) {
  t = type_solved(t);
  if (t && t->kind == TYPE_TUPLE) {
    a->tuple = true;
    a->n = t->tuple.n;
    a->kids = a->n ? arena_alloc(f->scratch, a->n * sizeof *a->kids) : NULL;
    for (uint32_t i = 0; i < a->n; i++) acc_init(f, &a->kids[i], t->tuple.fields[i]);
  }
}

static FoVal *val_new(FO *f, Expr *fwd, const Type *t) {
  FoVal *v = arena_alloc(f->scratch, sizeof *v);
  v->fwd = fwd;
  v->t = type_solved(t);
  acc_init(f, &v->acc, t);
  return v;
}

/* ------------------------------------------------------------ accumulators */

static bool acc_zero(const Acc *a) {
  if (!a->tuple) return a->e == NULL;
  for (uint32_t i = 0; i < a->n; i++)
    if (!acc_zero(&a->kids[i])) return false;
  return true;
}

static void acc_add_acc(FO *f, Acc *dst, const Acc *src, Span sp) {
  if (src->tuple) {
    for (uint32_t i = 0; i < src->n && i < dst->n; i++) acc_add_acc(f, &dst->kids[i], &src->kids[i], sp);
    return;
  }
  if (!src->e) return;
  dst->e = dst->e ? push(f, "d", grad_op_call(&f->tc, &f->add, (Expr *[]){dst->e, src->e}, 2, sp)) : src->e;
}

/* dst += d, an expression of type t */
static void acc_add_expr(FO *f, Acc *dst, Expr *d, const Type *t, Span sp) {
  t = type_solved(t);
  if (!grad_type_has_float(t)) return;
  Expr *dv = d->kind == EXPR_VAR || d->kind == EXPR_CONST ? d : push(f, "d", d);
  if (t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->tuple.n; i++)
      acc_add_expr(f, &dst->kids[i], typeof_set(&f->tc, build_proj(f->m, dv, i, sp)), t->tuple.fields[i], sp);
    return;
  }
  dst->e = dst->e ? push(f, "d", grad_op_call(&f->tc, &f->add, (Expr *[]){dst->e, dv}, 2, sp)) : dv;
}

/* The accumulated adjoint as an expression (zeros where nothing arrived). */
static Expr *acc_value(FO *f, const Acc *a, Expr *fwd, const Type *t, Span sp) {
  t = type_solved(t);
  if (!a->tuple) return a->e ? a->e : grad_op_call(&f->tc, &f->zeros_like, &fwd, 1, sp);
  Expr **fs = mem_calloc(a->n + 1, sizeof *fs);
  for (uint32_t i = 0; i < a->n; i++) {
    Expr *fi = push(f, "x", build_proj(f->m, fwd, i, sp));
    fs[i] = acc_value(f, &a->kids[i], fi, t->tuple.fields[i], sp);
  }
  Expr *r = typeof_set(&f->tc, build_tuple(f->m, fs, a->n, sp));
  mem_free(fs);
  return r;
}

/* Seed: ones at every leaf (overwriting). */
static void acc_seed(FO *f, Acc *a, Expr *fwd, const Type *t, Span sp) {
  t = type_solved(t);
  if (!a->tuple) {
    a->e = push(f, "seed", grad_op_call(&f->tc, &f->ones_like, &fwd, 1, sp));
    return;
  }
  for (uint32_t i = 0; i < a->n; i++)
    acc_seed(f, &a->kids[i], push(f, "x", build_proj(f->m, fwd, i, sp)), t->tuple.fields[i], sp);
}

/* ------------------------------------------------------------ feature check */

/* The first use (in source order) of each construct first-order mode rejects. */
enum { F_LET, F_IF, F_MATCH, F_CTOR, F_REF, F_GLOBAL, F_COUNT };
static const char *const feat_names[F_COUNT] = {
    "let bindings", "if expressions", "match expressions", "constructors (ADT values)", "references",
    "calls of global functions",
};

typedef struct FeatScan {
  bool seen[F_COUNT];
  Span first[F_COUNT];
  size_t nodes; /* distinct nodes: room for the memo */
} FeatScan;

static void feat_node(Expr *e, void *ud) {
  FeatScan *s = ud;
  s->nodes++;
  int k = -1;
  switch (e->kind) {
  case EXPR_LET: k = F_LET; break;
  case EXPR_IF: k = F_IF; break;
  case EXPR_MATCH: k = F_MATCH; break;
  case EXPR_CTOR: k = F_CTOR; break;
  case EXPR_REF_NEW: case EXPR_REF_READ: case EXPR_REF_WRITE: k = F_REF; break;
  case EXPR_GLOBAL: k = F_GLOBAL; break;
  default: return;
  }
  if (!s->seen[k] || e->span.lo < s->first[k].lo) s->first[k] = e->span;
  s->seen[k] = true;
}

/* One error per rejected kind of construct, at its first use, in source order. */
static bool feat_report(void *ud, Diag *d) {
  const FeatScan *s = ud;
  bool done[F_COUNT] = {0}, ok = true;
  for (;;) {
    int best = -1;
    for (int k = 0; k < F_COUNT; k++)
      if (s->seen[k] && !done[k] && (best < 0 || s->first[k].lo < s->first[best].lo)) best = k;
    if (best < 0) return ok;
    done[best] = true;
    ok = false;
    diag_error(d, s->first[best], "first-order gradient does not support %s (use --pass='Gradient(mode=higher_order)')",
               feat_names[best]);
  }
}

/* -------------------------------------------------------------- forward walk */

static FoVal *memo_get(const FO *f, const Expr *e) {
  uint32_t m = e->mark;
  return m && m <= f->memo.len && f->memo.data[m - 1].e == e ? f->memo.data[m - 1].val : NULL;
}

static void memo_reserve(FO *f, size_t cap) {
  MemoEntry *data = arena_alloc_aligned(f->scratch, cap * sizeof *data, _Alignof(MemoEntry));
  if (f->memo.len) memcpy(data, f->memo.data, f->memo.len * sizeof *data);
  f->memo.data = data;
  f->memo.cap = cap;
}

static void memo_put(FO *f, Expr *e, FoVal *v) {
  if (f->memo.len == f->memo.cap) memo_reserve(f, 2 * f->memo.cap + 8); /* only if the count was short */
  f->memo.data[f->memo.len++] = (MemoEntry){e, v, e->mark};
  e->mark = (uint32_t)f->memo.len;
}

/* Drops the entries from `start` on (an inlined body's), putting their marks back. */
static void memo_pop(FO *f, size_t start) {
  while (f->memo.len > start) {
    MemoEntry *me = &f->memo.data[--f->memo.len];
    me->e->mark = me->saved;
  }
}

static FoVal *fail(FO *f, Span sp, const char *msg) {
  if (!f->failed) diag_error(f->d, sp, "%s", msg);
  f->failed = true;
  return NULL;
}

static void act(FO *f, ActKind k, Expr *call, FoVal *res, FoVal **args, uint32_t n, uint32_t index) {
  Action *a = arena_alloc_aligned(f->scratch, sizeof *a + n * sizeof *args, _Alignof(Action));
  *a = (Action){k, n, index, call, res, f->last_act};
  for (uint32_t i = 0; i < n; i++) a->args[i] = args[i];
  f->last_act = a;
}

/* The forward walk is iterative (a 100,000-binding chain is that deep): a
 * stack of frames, one per node being walked, and a stack of the values of
 * the children walked so far, which a node takes off when it is done. */
enum { NO_SCOPE = UINT32_MAX };
typedef struct Frame {
  Expr *e;
  uint32_t next;  /* the next child to walk */
  uint32_t scope; /* a literal's call whose body is being walked: where the body's memo entries start */
} Frame;

typedef struct Walk {
  VEC(Frame) frames;
  VEC(FoVal *) vals;
} Walk;

/* The i-th child walked before e (NULL when there is none left). A call's
 * callee is not one: an operator or a literal applied on the spot. */
static Expr *fwd_child(const Expr *e, uint32_t i) {
  switch (e->kind) {
  case EXPR_CALL: return i < e->call.nargs ? e->call.args[i] : NULL;
  case EXPR_TUPLE: return i < e->tuple.n ? e->tuple.fields[i] : NULL;
  case EXPR_PROJ: return i == 0 ? e->proj.tuple : NULL;
  default: return NULL;
  }
}

static bool fwd_leaf(const Expr *e) { return e->kind != EXPR_CALL && e->kind != EXPR_TUPLE && e->kind != EXPR_PROJ; }

/* A leaf's value; NULL (after an error) for what first-order mode rejects. */
static FoVal *fo_leaf(FO *f, Expr *e) {
  switch (e->kind) {
  case EXPR_VAR: {
    int64_t v = 0;
    if (!ptrmap_get(&f->env, e->var.var, &v)) return fail(f, e->span, "first-order gradient: unbound variable");
    return (FoVal *)(intptr_t)v;
  }
  case EXPR_CONST: {
    FoVal *r = val_new(f, e, e->type);
    r->constant = true;
    return r;
  }
  case EXPR_FN:
    return fail(f, e->span,
                "first-order gradient only supports function literals applied on the spot (use --pass='Gradient(mode=higher_order)')");
  default:
    return fail(f, e->span, "first-order gradient does not support this expression (use --pass='Gradient(mode=higher_order)')");
  }
}

/* res = op(args): the forward call bound, its backward action recorded. */
static FoVal *fo_op_call(FO *f, Expr *e, FoVal **args) {
  uint32_t n = e->call.nargs;
  Expr *small[8], **vals = n <= 8 ? small : mem_calloc(n, sizeof *vals);
  for (uint32_t i = 0; i < n; i++) vals[i] = args[i]->fwd;
  Expr *y = push(f, "y", grad_forward_call(&f->tc, &f->forward, e, vals));
  if (vals != small) mem_free(vals);
  FoVal *res = val_new(f, y, e->type);
  if (grad_call_needs_rule(e)) act(f, ACT_OP, e, res, args, n, 0);
  return res;
}

static FoVal *fo_tuple(FO *f, Expr *e, FoVal **fs) {
  uint32_t n = e->tuple.n;
  Expr *small[8], **fw = n <= 8 ? small : mem_calloc(n, sizeof *fw);
  for (uint32_t i = 0; i < n; i++) fw[i] = fs[i]->fwd;
  FoVal *r = val_new(f, push(f, "t", build_tuple(f->m, fw, n, e->span)), e->type);
  if (fw != small) mem_free(fw);
  act(f, ACT_TUPLE, NULL, r, fs, n, 0);
  return r;
}

static FoVal *fo_proj(FO *f, Expr *e, FoVal *t) {
  FoVal *r = val_new(f, push(f, "x", build_proj(f->m, t->fwd, e->proj.index, e->span)), e->type);
  act(f, ACT_PROJ, NULL, r, &t, 1, e->proj.index);
  return r;
}

/* A call of a literal whose arguments are walked: its parameters bound to
 * them, its body pushed to be walked in a memo scope of its own. False (after
 * an error) for any other callee than an operator or a literal. */
static bool fo_enter_literal(FO *f, Walk *w, Frame *fr) {
  Expr *e = fr->e;
  uint32_t n = e->call.nargs;
  if (e->call.fn->kind != EXPR_FN) {
    fail(f, e->span,
         "first-order gradient only supports calls of operators and of function literals applied on the spot (use --pass='Gradient(mode=higher_order)')");
    return false;
  }
  Function *lit = e->call.fn->fn;
  if (lit->nparams != n) {
    fail(f, e->span, "wrong number of arguments for the function literal");
    return false;
  }
  for (uint32_t i = 0; i < n; i++)
    ptrmap_put(&f->env, lit->params[i], (int64_t)(intptr_t)w->vals.data[w->vals.len - n + i]);
  w->vals.len -= n;
  fr->scope = (uint32_t)f->memo.len;
  Frame body = {lit->body, 0, NO_SCOPE};
  vec_push(w->frames, body);
  return true;
}

/* The value of a node whose children's values are the top of the value stack (taken off). */
static FoVal *fo_finish(FO *f, Walk *w, Frame *fr) {
  Expr *e = fr->e;
  if (fr->scope != NO_SCOPE) { /* a literal's call: its value is its body's */
    FoVal *r = w->vals.data[--w->vals.len];
    memo_pop(f, fr->scope);
    return r;
  }
  uint32_t n = e->kind == EXPR_CALL ? e->call.nargs : e->kind == EXPR_TUPLE ? e->tuple.n : 1;
  FoVal **kids = n ? w->vals.data + w->vals.len - n : NULL;
  FoVal *r = e->kind == EXPR_CALL ? fo_op_call(f, e, kids) : e->kind == EXPR_TUPLE ? fo_tuple(f, e, kids) : fo_proj(f, e, kids[0]);
  w->vals.len -= n;
  return r;
}

/* The forward value of root (NULL after an error): children before parents,
 * each node once per memo scope, in the order a recursive walk would take. */
static FoVal *fo(FO *f, Expr *root) {
  Walk w = {0};
  Frame top = {root, 0, NO_SCOPE};
  vec_push(w.frames, top);
  while (w.frames.len && !f->failed) {
    Frame *fr = &w.frames.data[w.frames.len - 1];
    Expr *e = fr->e;
    FoVal *r = NULL;
    if (fr->next == 0 && fr->scope == NO_SCOPE && (r = memo_get(f, e))) {
      /* walked already in a live scope */
    } else if (fwd_leaf(e)) {
      if (!(r = fo_leaf(f, e))) break;
      memo_put(f, e, r);
    } else {
      Expr *c = fr->scope == NO_SCOPE ? fwd_child(e, fr->next) : NULL;
      if (c) {
        fr->next++;
        Frame cf = {c, 0, NO_SCOPE};
        vec_push(w.frames, cf);
        continue;
      }
      if (e->kind == EXPR_CALL && e->call.fn->kind != EXPR_OP && fr->scope == NO_SCOPE) {
        if (!fo_enter_literal(f, &w, fr)) break;
        continue;
      }
      if (!(r = fo_finish(f, &w, fr))) break;
      memo_put(f, e, r);
    }
    w.frames.len--;
    vec_push(w.vals, r);
  }
  FoVal *r = f->failed || w.vals.len != 1 ? NULL : w.vals.data[0];
  vec_free(w.frames);
  vec_free(w.vals);
  return r;
}

static Expr *rule_bind(GradCtx *c, Expr *e) {
  typeof_tree(&((FO *)c->pass)->tc, e);
  return push((FO *)c->pass, "t", e);
}

/* The rules' operator calls, typed as built with shared callees (typeof_op_call). */
static Expr *rule_call(GradCtx *c, int32_t op, Attrs *attrs, Expr **args, uint32_t nargs) {
  return typeof_op_call(&((FO *)c->pass)->tc, op, attrs, args, nargs, c->sp);
}

/* One backward action. */
static void backward(FO *f, const Action *a) {
  switch (a->kind) {
  case ACT_TUPLE:
    for (uint32_t i = 0; i < a->n; i++)
      if (!a->args[i]->constant) acc_add_acc(f, &a->args[i]->acc, &a->res->acc.kids[i], a->res->fwd->span);
    return;
  case ACT_PROJ: acc_add_acc(f, &a->args[0]->acc.kids[a->index], &a->res->acc, a->res->fwd->span); return;
  case ACT_OP: break;
  }
  if (acc_zero(&a->res->acc)) return; /* nothing flows back through this call */
  Expr *call = a->call;
  Span sp = call->span;
  const OpDef *op = op_get(call->call.fn->op.id);
  Expr *g = acc_value(f, &a->res->acc, a->res->fwd, a->res->t, sp);
  if (g->kind != EXPR_VAR) g = push(f, "g", g);
  uint32_t n = a->n;
  enum { SMALL = 8 };
  Expr *xs_s[SMALL] = {0}, *dx_s[SMALL] = {0};
  const Type *ts_s[SMALL] = {0};
  bool small = n <= SMALL;
  Expr **xs = small ? xs_s : mem_calloc(n, sizeof *xs), **dx = small ? dx_s : mem_calloc(n, sizeof *dx);
  const Type **ts = small ? ts_s : mem_calloc(n, sizeof *ts);
  for (uint32_t i = 0; i < n; i++) {
    xs[i] = a->args[i]->fwd;
    ts[i] = a->args[i]->t;
  }
  GradCtx gc = {.m = f->m, .d = f->d, .sp = sp, .op = call->call.fn->op.id, .attrs = call->call.attrs, .n = n,
                .x = xs, .xt = ts, .out = a->res->fwd, .out_t = a->res->t, .g = g, .dx = dx,
                .bind = rule_bind, .pass = f, .ops = f->ops, .call = rule_call};
  int before = f->d->nerrors;
  if (!op->grad(&gc) || f->d->nerrors > before) f->failed = true;
  for (uint32_t i = 0; i < n && !f->failed; i++)
    if (dx[i] && !a->args[i]->constant) {
      typeof_tree(&f->tc, dx[i]);
      acc_add_expr(f, &a->args[i]->acc, dx[i], ts[i], sp);
    }
  if (!small) {
    mem_free(xs);
    mem_free(dx);
    mem_free(ts);
  }
}

Expr *gradient_first_order(Module *m, Function *fn, Diag *d) {
  FeatScan fs = {{0}, {{0, 0}}, 0}; /* the features, then the rules: one walk over the input */
  if (!grad_check_rules_after(fn, feat_node, &fs, feat_report, d)) return NULL;
  FO f = {.m = m, .d = d, .scratch = arena_new_huge(), .lets_end = &f.lets, .zeros_like = {"zeros_like", -1, NULL}, .ones_like = {"ones_like", -1, NULL},
          .add = {"add", -1, NULL}, .ops = grad_op_cache_new()};
  typeof_init(&f.tc, m);
  f.lets_type = expected_result_type(&f, fn);
  memo_reserve(&f, fs.nodes);
  Span sp = fn->span;
  FoVal **ps = mem_calloc(fn->nparams + 1, sizeof *ps);
  for (uint32_t i = 0; i < fn->nparams; i++) {
    Var *p = fn->params[i];
    ps[i] = val_new(&f, typeof_set(&f.tc, build_var(m, p, p->span)), p->type);
    ptrmap_put(&f.env, p, (int64_t)(intptr_t)ps[i]);
  }
  FoVal *res = fo(&f, fn->body);
  Expr *out = NULL;
  if (res && !f.failed) {
    acc_seed(&f, &res->acc, res->fwd, res->t, sp);
    for (const Action *a = f.last_act; a && !f.failed; a = a->prev) backward(&f, a);
  }
  if (res && !f.failed) {
    Expr **gs = mem_calloc(fn->nparams + 1, sizeof *gs);
    for (uint32_t i = 0; i < fn->nparams; i++) gs[i] = acc_value(&f, &ps[i]->acc, ps[i]->fwd, ps[i]->t, sp);
    Expr *grads = typeof_set(&f.tc, build_tuple(m, gs, fn->nparams, sp));
    Expr *body = typeof_set(&f.tc, build_tuple(m, (Expr *[]){res->fwd, grads}, 2, sp));
    mem_free(gs);
    body = lets_close(&f, body);
    Function *nf = build_function(m, fn->params, fn->nparams, grad_result_annotation(m, fn), body, fn->attrs, sp);
    out = build_fn(m, nf, sp);
  }
  mem_free(ps);
  memo_pop(&f, 0);
  arena_free(f.scratch);
  ptrmap_free(&f.env);
  grad_op_cache_free(f.ops);
  typeof_fini(&f.tc);
  return out;
}
