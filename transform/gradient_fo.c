/* transform/gradient_fo.c — first-order reverse mode (spec/gradient.md §1.5), TVM's
 * FirstOrderGradient: a staged backward pass over pure dataflow code, so the output has
 * no references and no closures.
 *
 * The forward walk binds every operator call, tuple and projection to a
 * variable (memoised by node: a DAG-shared node is computed once and has one
 * accumulator, §1.6) and records a backward action; a function literal
 * applied on the spot is inlined. The result's accumulator is seeded (ones
 * for a tensor, ones for EVERY leaf of a tuple result: TVM's first-order
 * seed, §1.3), then the actions run in reverse creation order, each adding
 * its input adjoints into the inputs' accumulators, and the parameters'
 * accumulators are returned. One let chain holds forward and backward code.
 *
 * Accumulators are symbolic: a tensor accumulator is NULL until something is
 * added (zero), so an operation whose result receives no adjoint runs no
 * rule, and a parameter nothing reached gets zeros_like(p). Rules are linear
 * in the adjoint, so skipping zero contributions changes no value.
 *
 * Nodes are built typed (sema/typeof.h: each type follows from the
 * children's; rule outputs are typed once the rule returns), so the runner's
 * re-typing keeps the output instead of inferring it again.
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
  Expr *e;     /* tensor: the sum so far (an atom), NULL = zero */
  Acc **kids;  /* tuple: one per field */
  uint32_t n;
  bool tuple;
};

typedef struct FoVal {
  Expr *fwd;     /* the forward value, an atom */
  const Type *t; /* its type */
  Acc *acc;
  bool constant; /* a constant: its adjoint is never wanted, nothing accumulates */
} FoVal;

typedef enum {
  ACT_OP,    /* res = op(args) */
  ACT_TUPLE, /* res = (args...) */
  ACT_PROJ,  /* res = args[0].index */
} ActKind;

typedef struct Action {
  ActKind kind;
  Expr *call;    /* ACT_OP: the source call */
  FoVal *res;
  FoVal **args;
  uint32_t n;
  uint32_t index;
} Action;

typedef struct Bind {
  Var *v;
  Expr *e;
} Bind;

typedef struct FO {
  Module *m;
  Diag *d;
  VEC(Bind) ll;
  VEC(Action) acts;
  VEC(PtrMap) memo; /* a stack: one map per inlined function body */
  PtrMap env;       /* Var* -> FoVal* */
  bool failed;
  GradOp zeros_like, ones_like, add; /* the calls the transform itself builds */
  GradOpCache *ops; /* the calls the rules build (ops/gradients/grad.h) */
  TypeofCx tc;      /* types of the nodes built (sema/typeof.h) */
} FO;

static const Type *rt(const Type *t) {
  while (t && t->kind == TYPE_UVAR && t->uvar.link) t = t->uvar.link;
  return t;
}

static Expr *push(FO *f, const char *prefix, Expr *e) {
  Var *v = build_fresh_var(f->m, prefix, NULL, e->span);
  v->type = typeof_set(&f->tc, e)->type;
  Bind b = {v, e};
  vec_push(f->ll, b);
  return typeof_set(&f->tc, build_var(f->m, v, e->span));
}

static Acc *acc_new(FO *f, const Type *t) {
  t = rt(t);
  Acc *a = arena_alloc(f->m->arena, sizeof *a);
  memset(a, 0, sizeof *a);
  if (t && t->kind == TYPE_TUPLE) {
    a->tuple = true;
    a->n = t->tuple.n;
    a->kids = a->n ? arena_alloc(f->m->arena, a->n * sizeof *a->kids) : NULL;
    for (uint32_t i = 0; i < a->n; i++) a->kids[i] = acc_new(f, t->tuple.fields[i]);
  }
  return a;
}

static FoVal *val_new(FO *f, Expr *fwd, const Type *t) {
  FoVal *v = arena_alloc(f->m->arena, sizeof *v);
  v->fwd = fwd;
  v->t = rt(t);
  v->acc = acc_new(f, t);
  v->constant = false;
  return v;
}

/* ------------------------------------------------------------ accumulators */

static bool acc_zero(const Acc *a) {
  if (!a->tuple) return a->e == NULL;
  for (uint32_t i = 0; i < a->n; i++)
    if (!acc_zero(a->kids[i])) return false;
  return true;
}

static void acc_add_acc(FO *f, Acc *dst, const Acc *src, Span sp) {
  if (src->tuple) {
    for (uint32_t i = 0; i < src->n && i < dst->n; i++) acc_add_acc(f, dst->kids[i], src->kids[i], sp);
    return;
  }
  if (!src->e) return;
  dst->e = dst->e ? push(f, "d", grad_op_call(&f->tc, &f->add, (Expr *[]){dst->e, src->e}, 2, sp)) : src->e;
}

/* dst += d, an expression of type t */
static void acc_add_expr(FO *f, Acc *dst, Expr *d, const Type *t, Span sp) {
  t = rt(t);
  if (!grad_type_has_float(t)) return;
  Expr *dv = d->kind == EXPR_VAR || d->kind == EXPR_CONST ? d : push(f, "d", d);
  if (t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->tuple.n; i++)
      acc_add_expr(f, dst->kids[i], typeof_set(&f->tc, build_proj(f->m, dv, i, sp)), t->tuple.fields[i], sp);
    return;
  }
  dst->e = dst->e ? push(f, "d", grad_op_call(&f->tc, &f->add, (Expr *[]){dst->e, dv}, 2, sp)) : dv;
}

/* The accumulated adjoint as an expression (zeros where nothing arrived). */
static Expr *acc_value(FO *f, const Acc *a, Expr *fwd, const Type *t, Span sp) {
  t = rt(t);
  if (!a->tuple) return a->e ? a->e : grad_op_call(&f->tc, &f->zeros_like, &fwd, 1, sp);
  Expr **fs = mem_calloc(a->n + 1, sizeof *fs);
  for (uint32_t i = 0; i < a->n; i++) {
    Expr *fi = push(f, "x", build_proj(f->m, fwd, i, sp));
    fs[i] = acc_value(f, a->kids[i], fi, t->tuple.fields[i], sp);
  }
  Expr *r = typeof_set(&f->tc, build_tuple(f->m, fs, a->n, sp));
  mem_free(fs);
  return r;
}

/* Seed: ones at every leaf (overwriting). */
static void acc_seed(FO *f, Acc *a, Expr *fwd, const Type *t, Span sp) {
  t = rt(t);
  if (!a->tuple) {
    a->e = push(f, "seed", grad_op_call(&f->tc, &f->ones_like, &fwd, 1, sp));
    return;
  }
  for (uint32_t i = 0; i < a->n; i++)
    acc_seed(f, a->kids[i], push(f, "x", build_proj(f->m, fwd, i, sp)), t->tuple.fields[i], sp);
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
} FeatScan;

static void feat_node(Expr *e, void *ud) {
  FeatScan *s = ud;
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

static FoVal *memo_get(FO *f, Expr *e) {
  for (size_t i = f->memo.len; i-- > 0;) {
    int64_t v = 0;
    if (ptrmap_get(&f->memo.data[i], e, &v)) return (FoVal *)(intptr_t)v;
  }
  return NULL;
}

static FoVal *fo(FO *f, Expr *e);

static FoVal *fail(FO *f, Span sp, const char *msg) {
  if (!f->failed) diag_error(f->d, sp, "%s", msg);
  f->failed = true;
  return NULL;
}

static void act(FO *f, ActKind k, Expr *call, FoVal *res, FoVal **args, uint32_t n, uint32_t index) {
  Action a = {k, call, res, NULL, n, index};
  if (n) {
    a.args = arena_alloc(f->m->arena, n * sizeof *a.args);
    memcpy(a.args, args, n * sizeof *args);
  }
  vec_push(f->acts, a);
}

static FoVal *fo_call(FO *f, Expr *e) {
  uint32_t n = e->call.nargs;
  enum { SMALL = 8 }; /* most calls: arrays on the stack, not mallocs per call */
  FoVal *args_s[SMALL] = {0};
  Expr *vals_s[SMALL] = {0};
  bool small = n <= SMALL;
  FoVal **args = small ? args_s : mem_calloc(n, sizeof *args);
  FoVal *res = NULL;
  for (uint32_t i = 0; i < n && !f->failed; i++) args[i] = fo(f, e->call.args[i]);
  if (f->failed) goto done;
  Expr *fn = e->call.fn;
  if (fn->kind == EXPR_OP) {
    Expr **vals = small ? vals_s : mem_calloc(n, sizeof *vals);
    for (uint32_t i = 0; i < n; i++) vals[i] = args[i]->fwd;
    Expr *y = push(f, "y", grad_forward_call(&f->tc, e, vals));
    if (!small) mem_free(vals);
    res = val_new(f, y, e->type);
    if (grad_call_needs_rule(e)) act(f, ACT_OP, e, res, args, n, 0);
  } else if (fn->kind == EXPR_FN) {
    Function *lit = fn->fn;
    if (lit->nparams != n) {
      fail(f, e->span, "wrong number of arguments for the function literal");
      goto done;
    }
    for (uint32_t i = 0; i < n; i++) ptrmap_put(&f->env, lit->params[i], (int64_t)(intptr_t)args[i]);
    PtrMap scope = {0};
    vec_push(f->memo, scope);
    res = fo(f, lit->body);
    ptrmap_free(&f->memo.data[f->memo.len - 1]);
    f->memo.len--;
  } else {
    fail(f, e->span,
         "first-order gradient only supports calls of operators and of function literals applied on the spot (use --pass='Gradient(mode=higher_order)')");
  }
done:
  if (!small) mem_free(args);
  return res;
}

static FoVal *fo(FO *f, Expr *e) {
  if (f->failed) return NULL;
  if (stack_exhausted()) return fail(f, e->span, "expression nested too deeply");
  FoVal *got = memo_get(f, e);
  if (got) return got;
  Module *m = f->m;
  FoVal *r = NULL;
  switch (e->kind) {
  case EXPR_VAR: {
    int64_t v = 0;
    if (!ptrmap_get(&f->env, e->var.var, &v)) return fail(f, e->span, "first-order gradient: unbound variable");
    r = (FoVal *)(intptr_t)v;
    break;
  }
  case EXPR_CONST:
    r = val_new(f, e, e->type);
    r->constant = true;
    break;
  case EXPR_TUPLE: {
    uint32_t n = e->tuple.n;
    FoVal **fs = mem_calloc(n + 1, sizeof *fs);
    Expr **fw = mem_calloc(n + 1, sizeof *fw);
    for (uint32_t i = 0; i < n && !f->failed; i++) {
      fs[i] = fo(f, e->tuple.fields[i]);
      if (fs[i]) fw[i] = fs[i]->fwd;
    }
    if (!f->failed) {
      r = val_new(f, push(f, "t", build_tuple(m, fw, n, e->span)), e->type);
      act(f, ACT_TUPLE, NULL, r, fs, n, 0);
    }
    mem_free(fs);
    mem_free(fw);
    break;
  }
  case EXPR_PROJ: {
    FoVal *t = fo(f, e->proj.tuple);
    if (!t) return NULL;
    r = val_new(f, push(f, "x", build_proj(m, t->fwd, e->proj.index, e->span)), e->type);
    act(f, ACT_PROJ, NULL, r, &t, 1, e->proj.index);
    break;
  }
  case EXPR_CALL: r = fo_call(f, e); break;
  case EXPR_FN:
    return fail(f, e->span,
                "first-order gradient only supports function literals applied on the spot (use --pass='Gradient(mode=higher_order)')");
  default:
    return fail(f, e->span, "first-order gradient does not support this expression (use --pass='Gradient(mode=higher_order)')");
  }
  if (r && f->memo.len) ptrmap_put(&f->memo.data[f->memo.len - 1], e, (int64_t)(intptr_t)r);
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
static void backward(FO *f, Action *a) {
  switch (a->kind) {
  case ACT_TUPLE:
    for (uint32_t i = 0; i < a->n; i++)
      if (!a->args[i]->constant) acc_add_acc(f, a->args[i]->acc, a->res->acc->kids[i], a->res->fwd->span);
    return;
  case ACT_PROJ: acc_add_acc(f, a->args[0]->acc->kids[a->index], a->res->acc, a->res->fwd->span); return;
  case ACT_OP: break;
  }
  if (acc_zero(a->res->acc)) return; /* nothing flows back through this call */
  Expr *call = a->call;
  Span sp = call->span;
  const OpDef *op = op_get(call->call.fn->op.id);
  Expr *g = acc_value(f, a->res->acc, a->res->fwd, a->res->t, sp);
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
      acc_add_expr(f, a->args[i]->acc, dx[i], ts[i], sp);
    }
  if (!small) {
    mem_free(xs);
    mem_free(dx);
    mem_free(ts);
  }
}

Expr *gradient_first_order(Module *m, Function *fn, Diag *d) {
  FeatScan fs = {{0}, {{0, 0}}}; /* the features, then the rules: one walk over the input */
  if (!grad_check_rules_after(m, fn, feat_node, &fs, feat_report, d)) return NULL;
  FO f = {.m = m, .d = d, .zeros_like = {"zeros_like", -1, NULL}, .ones_like = {"ones_like", -1, NULL},
          .add = {"add", -1, NULL}, .ops = grad_op_cache_new()};
  typeof_init(&f.tc, m);
  PtrMap top = {0};
  vec_push(f.memo, top);
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
    acc_seed(&f, res->acc, res->fwd, res->t, sp);
    for (size_t i = f.acts.len; i-- > 0 && !f.failed;) backward(&f, &f.acts.data[i]);
  }
  if (res && !f.failed) {
    Expr **gs = mem_calloc(fn->nparams + 1, sizeof *gs);
    for (uint32_t i = 0; i < fn->nparams; i++) gs[i] = acc_value(&f, ps[i]->acc, ps[i]->fwd, ps[i]->t, sp);
    Expr *grads = typeof_set(&f.tc, build_tuple(m, gs, fn->nparams, sp));
    Expr *body = typeof_set(&f.tc, build_tuple(m, (Expr *[]){res->fwd, grads}, 2, sp));
    mem_free(gs);
    for (size_t i = f.ll.len; i-- > 0;)
      body = typeof_set(&f.tc, build_let(m, f.ll.data[i].v, f.ll.data[i].e, body, f.ll.data[i].e->span));
    Function *nf = build_function(m, fn->params, fn->nparams, grad_result_annotation(m, fn), body, fn->attrs, sp);
    out = build_fn(m, nf, sp);
  }
  mem_free(ps);
  for (size_t i = 0; i < f.memo.len; i++) ptrmap_free(&f.memo.data[i]);
  vec_free(f.memo);
  vec_free(f.ll);
  vec_free(f.acts);
  ptrmap_free(&f.env);
  grad_op_cache_free(f.ops);
  typeof_fini(&f.tc);
  return out;
}
