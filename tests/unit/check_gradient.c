/* tests/unit/check_gradient.c — the differentiation API (transform/gradient.h) and the
 * registry's gradient column (ops/gradients/grad.h), used directly rather than through
 * the CLI: gradient_of_function on a global and on a function literal that captures a
 * variable (the captured value is a constant), both modes; the input function is left
 * untouched and its parameter Vars are reused; the result type is (R, (T1, ..., Tn)) and
 * the values are right when the result is run; one diagnostic for missing rules; the
 * column has rules where spec/gradient.md gives one and none for reinterpret.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/lower.h"
#include "eval/vm.h"
#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/walk.h"
#include "ops/gradients/grad.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "runtime/tensor.h"
#include "runtime/value.h"
#include "sema/infer.h"
#include "tests/unit/unit_run.h"
#include "tests/unit/ut_prog.h"
#include "transform/gradient.h"

static Function *global_fn(Module *m, const char *name) {
  GlobalDef *g = module_find_global(m, name);
  ck_assert_ptr_nonnull(g);
  return g->fn;
}

/* Runs @name on float32 vectors of length n (one per parameter); returns the result. */
static Value run(Module *m, const char *name, const float *const *xs, uint32_t nargs, int64_t n) {
  Diag d;
  diag_init(&d, stderr, NULL);
  Program *p = lower_module(m, &d);
  ck_assert_ptr_nonnull(p);
  Value *args = mem_calloc(nargs + 1, sizeof *args);
  for (uint32_t i = 0; i < nargs; i++) {
    Tensor *t = tensor_new(DT_F32, 1, &n);
    for (int64_t k = 0; k < n; k++) ((float *)t->data)[k] = xs[i][k];
    args[i] = value_from_tensor(t);
  }
  VmLimits lim = {0, 0, 0};
  Value r = value_none();
  ck_assert_int_eq(vm_run(p, p->codes[program_global(p, name)], args, nargs, &r, &d, &lim), 0);
  mem_free(args);
  program_free(p);
  return r;
}

static float elem(const Value *v, int64_t k) {
  Tensor *t = value_to_tensor(v);
  float x = (float)tensor_get_f64(t, k);
  tensor_release(t);
  return x;
}

static const char *SQUARE =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
    "  multiply(%x, %x)\n"
    "}\n";

START_TEST(grad_global_keeps_input) {
  UtProg p;
  ut_load(&p, SQUARE);
  Function *f = global_fn(p.m, "main");
  Expr *body = f->body;
  for (int mode = 0; mode < 2; mode++) {
    Expr *g = gradient_of_function(p.m, f, mode ? GRAD_FIRST_ORDER : GRAD_HIGHER_ORDER, &p.d);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(g->kind, EXPR_FN);
    ck_assert_ptr_eq(f->body, body);                 /* the input is not modified */
    ck_assert_ptr_eq(g->fn->params[0], f->params[0]); /* the parameters are the same Vars */
    ck_assert_ptr_nonnull(g->fn->ret_annot);          /* (R, (T,)) since everything was annotated */
    ck_assert_int_eq(g->fn->ret_annot->kind, TYPE_TUPLE);
    build_global_def(p.m, mode ? "fo" : "ho", g->fn, f->span);
  }
  infer_clear(p.m);
  ck_assert(infer_module(p.m, &p.d));
  const float x[3] = {1, -2, 3};
  const float *xs[1] = {x};
  for (int mode = 0; mode < 2; mode++) {
    Value r = run(p.m, mode ? "fo" : "ho", xs, 1, 3);
    TupleObj *t = value_tuple(r);
    ck_assert_uint_eq(t->n, 2);
    TupleObj *grads = value_tuple(t->f[1]);
    for (int k = 0; k < 3; k++) {
      ck_assert_float_eq(elem(&t->f[0], k), x[k] * x[k]);
      ck_assert_float_eq(elem(&grads->f[0], k), 2 * x[k]);
    }
    value_release(r);
  }
  value_heap_shutdown();
  ut_unload(&p);
}
END_TEST

/* The higher-order mode keeps its memo in the input nodes' Expr.mark while it
 * runs (transform/gradient.c MemoVal): afterwards every input node has the mark
 * it had before, whatever other walks left there, and a node met twice (in two
 * branches, so translated twice) gets its own back too. */
static void set_marks(Expr *e, uint32_t base, uint32_t *n) {
  if (!e || e->mark == base + 1000) return; /* a shared node: once */
  ExprVec kids = {0};
  walk_push_children(e, true, &kids);
  e->mark = base + 1000;
  for (size_t i = 0; i < kids.len; i++) set_marks(kids.data[i], base, n);
  vec_free(kids);
  e->mark = base + (*n)++;
}

static void check_marks(Expr *e, uint32_t base, uint32_t *n) {
  ExprVec kids = {0};
  walk_push_children(e, true, &kids);
  for (size_t i = 0; i < kids.len; i++) check_marks(kids.data[i], base, n);
  vec_free(kids);
  ck_assert_uint_ge(e->mark, base);
  ck_assert_uint_lt(e->mark, base + 1000);
  (*n)++;
}

START_TEST(grad_restores_input_marks) {
  UtProg p;
  ut_load(&p, "#[version = \"0.0.5\"]\n"
              "def @main(%x: Tensor[(3), float32], %c: bool) {\n"
              "  %0 = multiply(%x, %x);\n  %1 = add(%0, %x);\n"
              "  if (%c) { multiply(%1, %0) } else { add(%1, %1) }\n}\n");
  Function *f = global_fn(p.m, "main");
  uint32_t n = 0, seen = 0;
  set_marks(f->body, 77, &n);
  ck_assert_ptr_nonnull(gradient_of_function(p.m, f, GRAD_HIGHER_ORDER, &p.d));
  check_marks(f->body, 77, &seen);
  ck_assert_uint_gt(seen, 8);
  ut_unload(&p);
}
END_TEST

/* The literal fn (%a) { %a * %c } inside @main captures %c: differentiated on its own,
 * the captured variable is a constant of the gradient. */
START_TEST(grad_literal_with_capture) {
  UtProg p;
  ut_load(&p,
       "#[version = \"0.0.5\"]\n"
       "def @main(%c: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
       "  let %f = fn (%a: Tensor[(2), float32]) -> Tensor[(2), float32] { multiply(%a, %c) };\n"
       "  %f(%c)\n"
       "}\n");
  Function *mainf = global_fn(p.m, "main");
  Expr *lit = mainf->body->let.value;
  ck_assert_int_eq(lit->kind, EXPR_FN);
  Expr *g = gradient_of_function(p.m, lit->fn, GRAD_HIGHER_ORDER, &p.d);
  ck_assert_ptr_nonnull(g);
  /* @main becomes: let %f = fn...; (the gradient literal)(%c) */
  Expr *call = build_call(p.m, g, (Expr *[]){build_var(p.m, mainf->params[0], mainf->span)}, 1, mainf->span);
  mainf->body = build_let(p.m, mainf->body->let.var, lit, call, mainf->span);
  mainf->ret_annot = NULL;
  infer_clear(p.m);
  ck_assert(infer_module(p.m, &p.d));
  const float c[2] = {3, -4};
  const float *xs[1] = {c};
  Value r = run(p.m, "main", xs, 1, 2);
  TupleObj *t = value_tuple(r);
  TupleObj *grads = value_tuple(t->f[1]);
  for (int k = 0; k < 2; k++) {
    ck_assert_float_eq(elem(&t->f[0], k), c[k] * c[k]);
    ck_assert_float_eq(elem(&grads->f[0], k), c[k]); /* d(a·c)/da with c held constant */
  }
  value_release(r);
  value_heap_shutdown();
  ut_unload(&p);
}
END_TEST

START_TEST(grad_missing_rules_one_diagnostic) {
  UtProg p;
  ut_load(&p,
       "#[version = \"0.0.5\"]\n"
       "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
       "  add(reinterpret(%x, dtype=\"float32\"), reinterpret(exp(%x), dtype=\"float32\"))\n"
       "}\n");
  Function *f = global_fn(p.m, "main");
  int before = p.d.nerrors;
  ck_assert_ptr_null(gradient_of_function(p.m, f, GRAD_HIGHER_ORDER, &p.d));
  ck_assert_int_eq(p.d.nerrors - before, 1); /* one error; the second use is a note */
  ck_assert_ptr_nonnull(strstr(ut_errors(&p), "1 operator has no gradient rule: reinterpret (2 uses"));
  ck_assert_ptr_nonnull(strstr(ut_errors(&p), "note: reinterpret has no gradient rule"));
  ut_unload(&p);
}
END_TEST

/* int parameters are neither differentiated nor given rules: zeros of their own dtype */
START_TEST(grad_int_parameter_zero) {
  UtProg p;
  ut_load(&p,
       "#[version = \"0.0.5\"]\n"
       "def @main(%x: Tensor[(3), float32], %n: int32) -> Tensor[(3), float32] {\n"
       "  multiply(%x, cast(%n, dtype=\"float32\"))\n"
       "}\n");
  Function *f = global_fn(p.m, "main");
  Expr *g = gradient_of_function(p.m, f, GRAD_FIRST_ORDER, &p.d);
  ck_assert_ptr_nonnull(g);
  module_find_global(p.m, "main")->fn = g->fn;
  infer_clear(p.m);
  ck_assert(infer_module(p.m, &p.d));
  const Type *rt = g->fn->type->func.ret->tuple.fields[1]->tuple.fields[1];
  ck_assert_int_eq(rt->kind, TYPE_TENSOR);
  ck_assert(dtype_eq(rt->tensor.dtype, DT_I32));
  ut_unload(&p);
}
END_TEST

START_TEST(column_rules_present) {
  static const int32_t with[] = {OP_ADD, OP_MULTIPLY, OP_EXP, OP_NN_CONV2D, OP_NN_DENSE, OP_SUM, OP_MAX,
                                 OP_NN_SOFTMAX, OP_CONCATENATE, OP_STRIDED_SLICE, OP_TAKE, OP_NN_BATCH_NORM,
                                 OP_NN_LAYER_NORM, OP_NN_PAD, OP_IMAGE_RESIZE2D, OP_CUMSUM, OP_CUMPROD, OP_SORT};
  for (size_t i = 0; i < sizeof with / sizeof with[0]; i++)
    ck_assert_msg(op_get(with[i])->grad != NULL, "%s has no rule", op_get(with[i])->name);
  ck_assert_ptr_null(op_get(OP_REINTERPRET)->grad);
  ck_assert_ptr_null(op_get(OP_FIXED_POINT_MULTIPLY)->grad);
  /* a rule called on a hand-made context: d(x·y)/dx = g·y */
  Module *m = module_new(NULL);
  Span sp = {0, 0};
  Var *x = build_fresh_var(m, "x", NULL, sp), *y = build_fresh_var(m, "y", NULL, sp), *g = build_fresh_var(m, "g", NULL, sp);
  Expr *xs[2] = {build_var(m, x, sp), build_var(m, y, sp)};
  Type *t = type_tensor(m, DT_F32, 1, (int64_t[]){4});
  const Type *ts[2] = {t, t};
  Expr *dx[2] = {NULL, NULL};
  Diag d;
  diag_init(&d, stderr, NULL);
  GradCtx c = {.m = m, .d = &d, .sp = sp, .op = OP_MULTIPLY, .n = 2, .x = xs, .xt = ts, .out = xs[0], .out_t = t,
               .g = build_var(m, g, sp), .dx = dx};
  ck_assert(op_get(OP_MULTIPLY)->grad(&c));
  /* collapse_sum_like(g·y, x) even though the shapes are equal: TVM's rule, whose
   * printed form test_pass_partial_eval's test_ad compares */
  for (int i = 0; i < 2; i++) {
    ck_assert(op_call_id(dx[i]) == OP_COLLAPSE_SUM_LIKE && dx[i]->call.args[1] == xs[i]);
    Expr *prod = dx[i]->call.args[0];
    ck_assert(op_call_id(prod) == OP_MULTIPLY && prod->call.args[1] == xs[1 - i]);
  }
  module_free(m);
}
END_TEST

/* A pass's GradOpCache: the calls of one (operator, attribute text) share the
 * attributes normalised at the first (equal to what op_call builds), each
 * with its own callee node; an unregistered operator is reported each time. */
START_TEST(column_op_cache) {
  Module *m = module_new(NULL);
  Span sp = {0, 0};
  Expr *x = build_var(m, build_fresh_var(m, "x", NULL, sp), sp);
  char *err = NULL;
  size_t len = 0;
  FILE *ef = open_memstream(&err, &len);
  Diag d;
  diag_init(&d, ef, NULL);
  GradCtx c = {.m = m, .d = &d, .sp = sp, .op = OP_SUM, .ops = grad_op_cache_new()};
  Expr *a = GR_OP(&c, "sum", "axis=[1], keepdims=True", x);
  char text[] = "axis=[1], keepdims=True"; /* same text, another pointer */
  Expr *b = GR_OP(&c, "sum", text, x);
  Expr *plain = op_call(m, "sum", &x, 1, "axis=[1], keepdims=True", sp);
  ck_assert(op_call_id(a) == OP_SUM && op_call_id(b) == OP_SUM);
  ck_assert_ptr_eq(a->call.attrs, b->call.attrs);
  ck_assert_ptr_ne(a->call.fn, b->call.fn);
  ck_assert(attrs_equal_exact(b->call.attrs, plain->call.attrs));
  Expr *k = GR_OP(&c, "sum", "axis=[0], keepdims=True", x);
  ck_assert(!attrs_equal_exact(k->call.attrs, a->call.attrs));
  ck_assert_int_eq(d.nerrors, 0);
  GR_OP(&c, "no.such_op", NULL, x);
  GR_OP(&c, "no.such_op", NULL, x);
  ck_assert_int_eq(d.nerrors, 2);
  grad_op_cache_free(c.ops);
  fclose(ef);
  free(err);
  module_free(m);
}
END_TEST

/* GR_CALL / the helpers (gr_add, gr_unb, ...): an attribute-less call of a
 * built-in operator by id, the same call gr_op(name, NULL) builds (operator,
 * arguments, attributes equal to op_call's), the calls of one operator sharing
 * one Attrs through a pass's cache; without a cache, a call each as gr_op. */
START_TEST(column_gr_call_by_id) {
  Module *m = module_new(NULL);
  Span sp = {0, 0};
  Expr *x = build_var(m, build_fresh_var(m, "x", NULL, sp), sp);
  Expr *y = build_var(m, build_fresh_var(m, "y", NULL, sp), sp);
  Diag d;
  diag_init_silent(&d, NULL);
  GradCtx c = {.m = m, .d = &d, .sp = sp, .op = OP_ADD, .ops = grad_op_cache_new()};
  Expr *a = GR_CALL(&c, OP_LESS, x, y);
  Expr *b = GR_CALL(&c, OP_LESS, y, x);
  Expr *named = GR_OP(&c, "less", NULL, x, y);
  Expr *plain = op_call(m, "less", (Expr *[]){x, y}, 2, "", sp);
  ck_assert(op_call_id(a) == OP_LESS && op_call_id(b) == OP_LESS && op_call_id(named) == OP_LESS);
  ck_assert(a->call.nargs == 2 && a->call.args[0] == x && a->call.args[1] == y);
  ck_assert(b->call.args[0] == y && b->call.args[1] == x);
  ck_assert_ptr_eq(a->call.attrs, b->call.attrs);
  ck_assert(attrs_equal_exact(a->call.attrs, plain->call.attrs));
  ck_assert(attrs_equal_exact(a->call.attrs, named->call.attrs));
  Expr *s = gr_add(&c, x, y), *u = gr_unb(&(GradCtx){.m = m, .d = &d, .sp = sp, .x = (Expr *[]){y}, .ops = c.ops}, x, 0);
  ck_assert(op_call_id(s) == OP_ADD && op_call_id(u) == OP_COLLAPSE_SUM_LIKE && u->call.args[1] == y);
  GradCtx bare = {.m = m, .d = &d, .sp = sp, .op = OP_ADD};
  Expr *n = GR_CALL(&bare, OP_MULTIPLY, x, y);
  ck_assert(op_call_id(n) == OP_MULTIPLY && n->call.args[1] == y);
  ck_assert(attrs_equal_exact(n->call.attrs, op_call(m, "multiply", (Expr *[]){x, y}, 2, "", sp)->call.attrs));
  ck_assert_int_eq(d.nerrors, 0);
  grad_op_cache_free(c.ops);
  module_free(m);
}
END_TEST

/* gr_fmt with a pass's cache: an equal text formatted again is the same
 * string (the (name, text) cache then finds it by address); another text is
 * its own; without a cache every text is a fresh copy. */
START_TEST(column_fmt_shares_text) {
  Module *m = module_new(NULL);
  GradCtx c = {.m = m, .ops = grad_op_cache_new()};
  const char *a = gr_fmt(&c, "axis=[%d], keepdims=True", 1);
  const char *b = gr_fmt(&c, "axis=[%d], keepdims=%s", 1, "True");
  const char *k = gr_fmt(&c, "axis=[%d], keepdims=True", 0);
  ck_assert_str_eq(a, "axis=[1], keepdims=True");
  ck_assert_ptr_eq(a, b);
  ck_assert_str_eq(k, "axis=[0], keepdims=True");
  ck_assert_ptr_eq(gr_fmt(&c, "axis=[%d], keepdims=True", 1), a);
  GradCtx bare = {.m = m};
  const char *x = gr_fmt(&bare, "axis=%d", 2), *y = gr_fmt(&bare, "axis=%d", 2);
  ck_assert_str_eq(x, y);
  ck_assert_ptr_ne(x, y);
  grad_op_cache_free(c.ops);
  module_free(m);
}
END_TEST

/* A 100,000-binding graph chain (%i = op(%i-1, %x)), loaded on a thread with the
 * driver's 1 GiB stack: parsing and type-checking it recurse deeper than 8 MiB. */
static void *load_chain(void *ud) {
  enum { N = 100000 };
  static const char *const ops[] = {"add", "multiply", "maximum", "subtract"};
  size_t cap = (size_t)N * 48 + 256, len = 0;
  char *text = mem_malloc(cap);
  len += (size_t)snprintf(text + len, cap - len,
                          "#[version = \"0.0.5\"]\n"
                          "def @main(%%x: Tensor[(4), float32], %%y: Tensor[(4), float32]) {\n"
                          "  %%0 = add(%%x, %%y);\n");
  for (int i = 1; i < N; i++) len += (size_t)snprintf(text + len, cap - len, "  %%%d = %s(%%%d, %%x);\n", i, ops[i % 4], i - 1);
  snprintf(text + len, cap - len, "  %%%d\n}\n", N - 1);
  ut_load(ud, text);
  mem_free(text);
  return NULL;
}

static void collect_node(Expr *e, void *ud) { vec_push(*(ExprVec *)ud, e); }

/* FirstOrderGradient walks its input with a stack of its own: the chain is
 * differentiated on this suite's guarded 8 MiB stack, where a recursive walk
 * ran out ("expression nested too deeply"). Its memo lives in the nodes'
 * marks and puts every mark back (here a value no memo entry has). The let
 * chain it builds is typed as built: every let has the result's type. */
START_TEST(grad_first_order_deep_chain) {
  UtProg p;
  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)1 << 30);
  ck_assert_int_eq(pthread_create(&th, &attr, load_chain, &p), 0);
  pthread_join(th, NULL);
  pthread_attr_destroy(&attr);
  Function *f = global_fn(p.m, "main");
  ExprVec nodes = {0};
  walk_post_order(f->body, true, collect_node, &nodes); /* (the walk's own marks are put back) */
  ck_assert_uint_gt(nodes.len, 200000);
  for (size_t i = 0; i < nodes.len; i++) nodes.data[i]->mark = 7;
  Expr *g = gradient_of_function(p.m, f, GRAD_FIRST_ORDER, &p.d);
  ck_assert_msg(g != NULL && p.d.nerrors == 0, "%s", ut_errors(&p));
  for (size_t i = 0; i < nodes.len; i++) ck_assert_uint_eq(nodes.data[i]->mark, 7);
  vec_free(nodes);
  Expr *e = g->fn->body;
  size_t lets = 0;
  for (; e->kind == EXPR_LET; e = e->let.body) lets++;
  ck_assert_uint_gt(lets, 100000);
  ck_assert_int_eq(e->kind, EXPR_TUPLE);
  ck_assert_ptr_nonnull(e->type);
  for (Expr *l = g->fn->body; l != e; l = l->let.body) ck_assert_ptr_eq(l->type, e->type);
  ut_unload(&p);
}
END_TEST

/* The higher-order mode builds its let lists forward (transform/gradient.c LetList):
 * each let is typed as it is pushed with the body's type foreseen, a long list's lets
 * come from blocks, and a binding left untyped (a constructor's value) leaves it and
 * every let before it untyped. Whatever the path, a typed let is what inference gives:
 * its body typed alike, its variable of its value's type; and inference from scratch
 * agrees with every type the pass set on a let. */
typedef struct LetTypes {
  VEC(Expr *) lets;
  VEC(Type *) types;
  size_t untyped;
} LetTypes;

static void collect_let(Expr *e, void *ud) {
  LetTypes *lt = ud;
  if (e->kind != EXPR_LET) return;
  vec_push(lt->lets, e);
  vec_push(lt->types, e->type);
  if (!e->type) lt->untyped++;
}

static void check_let_types(const char *text, bool want_untyped) {
  UtProg p;
  ut_load(&p, text);
  Function *f = global_fn(p.m, "main");
  Expr *g = gradient_of_function(p.m, f, GRAD_HIGHER_ORDER, &p.d);
  ck_assert_ptr_nonnull(g);
  LetTypes lt = {0};
  walk_each_once(g->fn->body, true, collect_let, &lt);
  ck_assert_uint_gt(lt.lets.len, 40);
  ck_assert(want_untyped ? lt.untyped > 0 : lt.untyped == 0);
  for (size_t i = 0; i < lt.lets.len; i++) {
    Expr *l = lt.lets.data[i];
    if (!l->type) continue;
    ck_assert_ptr_nonnull(l->let.body->type);
    ck_assert(type_equal(l->type, l->let.body->type));
    ck_assert(l->let.var->type && l->let.value->type && type_equal(l->let.var->type, l->let.value->type));
  }
  build_global_def(p.m, "ho", g->fn, f->span);
  infer_clear(p.m);
  ck_assert(infer_module(p.m, &p.d));
  for (size_t i = 0; i < lt.lets.len; i++)
    if (lt.types.data[i]) ck_assert(type_equal(lt.types.data[i], lt.lets.data[i]->type));
  vec_free(lt.lets);
  vec_free(lt.types);
  ut_unload(&p);
}

START_TEST(grad_let_lists_typed_as_inferred) {
  char text[4096];
  size_t n = (size_t)snprintf(text, sizeof text, "#[version = \"0.0.5\"]\n"
                                                 "def @main(%%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                                                 "  %%0 = multiply(%%x, %%x);\n");
  for (int i = 1; i < 40; i++) /* more lets than LET_BLOCK_AFTER: the block path */
    n += (size_t)snprintf(text + n, sizeof text - n, "  %%%d = %s(%%%d, %%x);\n", i, i % 2 ? "add" : "multiply", i - 1);
  snprintf(text + n, sizeof text - n, "  %%39\n}\n");
  check_let_types(text, false);
  /* a constructor's value is not typed by the pass: the untyped_to path */
  n = (size_t)snprintf(text, sizeof text, "#[version = \"0.0.5\"]\n"
                                          "type Box { B(Tensor[(3), float32]) }\n"
                                          "def @main(%%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
                                          "  %%0 = multiply(%%x, %%x);\n");
  for (int i = 1; i < 20; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "  %%%d = add(%%%d, %%x);\n", i, i - 1);
  n += (size_t)snprintf(text + n, sizeof text - n, "  %%20 = B(%%19);\n"
                                                   "  %%21 = match (%%20) { B(%%y) => multiply(%%y, %%x) };\n");
  for (int i = 22; i < 40; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "  %%%d = add(%%%d, %%x);\n", i, i - 1);
  snprintf(text + n, sizeof text - n, "  %%39\n}\n");
  check_let_types(text, true);
}
END_TEST

static Suite *gradient_suite(void) {
  Suite *s = suite_create("gradient");
  TCase *tc = tcase_create("api");
  tcase_add_test(tc, grad_global_keeps_input);
  tcase_add_test(tc, grad_literal_with_capture);
  tcase_add_test(tc, grad_missing_rules_one_diagnostic);
  tcase_add_test(tc, grad_int_parameter_zero);
  tcase_add_test(tc, grad_let_lists_typed_as_inferred);
  suite_add_tcase(s, tc);
  tc = tcase_create("deep");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, grad_first_order_deep_chain);
  suite_add_tcase(s, tc);
  tc = tcase_create("column");
  tcase_add_test(tc, column_rules_present);
  tcase_add_test(tc, column_op_cache);
  tcase_add_test(tc, column_gr_call_by_id);
  tcase_add_test(tc, column_fmt_shares_text);
  tcase_add_test(tc, grad_restores_input_marks);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(gradient_suite());
}
