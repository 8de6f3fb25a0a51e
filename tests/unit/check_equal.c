/* tests/unit/check_equal.c — Check suite for structural equality (ir/equal.c).
 *
 * Hand-built pairs check alpha-equivalence (renamed binders are equal, a use
 * of the wrong binder is not), DAG sharing (shared vs duplicated nodes differ
 * in both directions), constants by bytes, attributes by value, types
 * (structurally, through unification links, with type parameters paired),
 * module-level pairing of definitions by name, the `why` reason, and a
 * 100,000-node chain compared without using the C stack. Text cases go
 * through the parser and name resolution.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ast.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "parser/parser.h"
#include "sema/resolve.h"
#include "tests/unit/unit_run.h"

static Module *A, *B;
static const Span S0 = {0, 0};

static void setup(void) {
  stack_guard_init(8u << 20);
  A = module_new(NULL);
  B = module_new(NULL);
}

static void teardown(void) {
  module_free(A);
  module_free(B);
}

/* ------------------------------------------------------------- builders */

static Var *var(Module *m, const char *name, Type *annot) { return var_new(m, name, S0, annot); }

static Expr *use(Module *m, Var *v) {
  Expr *e = expr_new(m, EXPR_VAR, S0);
  e->var.name = v->name_;
  e->var.var = v;
  return e;
}

static Expr *opcall(Module *m, const char *name, Attrs *attrs, int n, ...) {
  Expr *args[8];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, Expr *);
  va_end(ap);
  return expr_call(m, expr_op(m, name, S0), args, (uint32_t)n, attrs, S0);
}

static Function *func(Module *m, int n, Var **params, Expr *body) {
  Function *f = arena_alloc(m->arena, sizeof *f);
  f->params = n ? arena_memdup(m->arena, params, (size_t)n * sizeof *params) : NULL;
  f->nparams = (uint32_t)n;
  f->body = body;
  return f;
}

static void add_def(Module *m, const char *name, Function *f) {
  GlobalDef *g = arena_alloc(m->arena, sizeof *g);
  g->name = name;
  g->fn = f;
  GlobalDef **defs = arena_alloc(m->arena, (m->ndefs + 1) * sizeof *defs);
  if (m->ndefs) memcpy(defs, m->defs, m->ndefs * sizeof *defs);
  defs[m->ndefs++] = g;
  m->defs = defs;
}

static Attrs *attrs1(Module *m, const char *key, int64_t v) {
  Attrs *a = arena_alloc(m->arena, sizeof *a);
  a->items = arena_alloc(m->arena, sizeof(Attr));
  AttrValue *av = attr_value_new(m, AV_INT, S0);
  av->i.value = v;
  av->i.dtype = DT_I32;
  a->items[0] = (Attr){.key = key, .value = av};
  a->n = 1;
  return a;
}

/* module_equal with its reason captured. */
static bool equal_why(Module *a, Module *b, char **why) {
  size_t len = 0;
  *why = NULL;
  FILE *f = open_memstream(why, &len);
  bool eq = module_equal(a, b, f);
  fclose(f);
  return eq;
}

#define ck_equal(a, b)                                                                           \
  do {                                                                                           \
    char *why_;                                                                                  \
    bool eq_ = equal_why((a), (b), &why_);                                                       \
    ck_assert_msg(eq_, "expected equal, got: %s", why_);                                         \
    free(why_);                                                                                  \
  } while (0)

#define ck_differ(a, b, reason)                                                                  \
  do {                                                                                           \
    char *why_;                                                                                  \
    bool eq_ = equal_why((a), (b), &why_);                                                       \
    ck_assert_msg(!eq_, "expected a difference");                                                \
    ck_assert_msg(strstr(why_, (reason)) != NULL, "reason <%s> lacks <%s>", why_, (reason));     \
    free(why_);                                                                                  \
  } while (0)

/* def @f(%name: float32) { add(%name, 1f) } */
static void def_add1(Module *m, const char *pname, const char *op) {
  Var *x = var(m, pname, type_scalar(m, DT_F32));
  Var *ps[] = {x};
  add_def(m, "f", func(m, 1, ps, opcall(m, op, NULL, 2, use(m, x), expr_scalar_float(m, DT_F32, 1, S0))));
}

/* ----------------------------------------------------------------- tests */

START_TEST(alpha_equivalent_params) {
  def_add1(A, "x", "add");
  def_add1(B, "y", "add");
  ck_equal(A, B);
}
END_TEST

START_TEST(operator_differs) {
  def_add1(A, "x", "add");
  def_add1(B, "x", "subtract");
  ck_differ(A, B, "@f: operator add vs subtract");
}
END_TEST

START_TEST(wrong_binder) {
  Var *a1 = var(A, "x", NULL), *a2 = var(A, "y", NULL);
  Var *b1 = var(B, "x", NULL), *b2 = var(B, "y", NULL);
  Var *pa[] = {a1, a2}, *pb[] = {b1, b2};
  add_def(A, "f", func(A, 2, pa, use(A, a1)));
  add_def(B, "f", func(B, 2, pb, use(B, b2)));
  ck_differ(A, B, "refers to a different binder");
}
END_TEST

START_TEST(let_binders_paired) {
  Var *xa = var(A, "x", NULL), *xb = var(B, "t", NULL);
  Expr *la = expr_new(A, EXPR_LET, S0), *lb = expr_new(B, EXPR_LET, S0);
  la->let.var = xa;
  la->let.value = expr_scalar_int(A, DT_I32, 1, S0);
  la->let.body = use(A, xa);
  lb->let.var = xb;
  lb->let.value = expr_scalar_int(B, DT_I32, 1, S0);
  lb->let.body = use(B, xb);
  add_def(A, "f", func(A, 0, NULL, la));
  add_def(B, "f", func(B, 0, NULL, lb));
  ck_equal(A, B);
  /* a different annotation on the let variable */
  xb->annot = type_scalar(B, DT_I32);
  ck_differ(A, B, "annotation of %x differs");
}
END_TEST

static Expr *shared_graph(Module *m, Var *x, bool share) {
  Expr *m1 = opcall(m, "multiply", NULL, 2, use(m, x), use(m, x));
  Expr *m2 = share ? m1 : opcall(m, "multiply", NULL, 2, use(m, x), use(m, x));
  return opcall(m, "add", NULL, 2, m1, m2);
}

START_TEST(sharing_must_agree) {
  Var *xa = var(A, "x", NULL), *xb = var(B, "x", NULL);
  Var *pa[] = {xa}, *pb[] = {xb};
  add_def(A, "f", func(A, 1, pa, shared_graph(A, xa, true)));
  add_def(B, "f", func(B, 1, pb, shared_graph(B, xb, false)));
  ck_differ(A, B, "sharing differs");
  ck_differ(B, A, "sharing differs");
}
END_TEST

START_TEST(sharing_same_is_equal) {
  Var *xa = var(A, "x", NULL), *xb = var(B, "x", NULL);
  Var *pa[] = {xa}, *pb[] = {xb};
  add_def(A, "f", func(A, 1, pa, shared_graph(A, xa, true)));
  add_def(B, "f", func(B, 1, pb, shared_graph(B, xb, true)));
  ck_equal(A, B);
}
END_TEST

START_TEST(constants_by_bytes) {
  Expr *ca = expr_scalar_float(A, DT_F32, 0.5, S0), *cb = expr_scalar_float(B, DT_F32, 0.5, S0);
  A->expr = ca;
  B->expr = cb;
  ck_equal(A, B);
  *(float *)cb->constant->data = 0.25f;
  ck_differ(A, B, "constants differ");
  B->expr = expr_scalar_float(B, DT_F64, 0.5, S0);
  ck_differ(A, B, "constants differ");
}
END_TEST

START_TEST(attributes_by_value) {
  Var *xa = var(A, "x", NULL), *xb = var(B, "x", NULL);
  xa->is_free = xb->is_free = true;
  A->expr = opcall(A, "nn.softmax", attrs1(A, "axis", 1), 1, use(A, xa));
  B->expr = opcall(B, "nn.softmax", attrs1(B, "axis", 1), 1, use(B, xb));
  ck_equal(A, B);
  B->expr->call.attrs->items[0].value->i.value = 2;
  ck_differ(A, B, "value of attribute axis differs");
  B->expr->call.attrs = NULL;
  ck_differ(A, B, "attributes present on one side only");
  A->expr->call.attrs = arena_alloc(A->arena, sizeof(Attrs)); /* empty == none */
  ck_equal(A, B);
}
END_TEST

START_TEST(types_structural) {
  int64_t s[] = {2, 3};
  Type *t1 = type_tensor(A, DT_F32, 2, s), *t2 = type_tensor(B, DT_F32, 2, s);
  ck_assert(type_equal(t1, t2));
  t2->tensor.dims[1] = (Dim){DIM_ANY, DT_I32, 0};
  ck_assert(!type_equal(t1, t2));
  t2->tensor.dims[1] = (Dim){DIM_INT, DT_I64, 3};
  ck_assert(!type_equal(t1, t2));
  Type *u = type_new(B, TYPE_UVAR, S0);
  u->uvar.link = type_tensor(B, DT_F32, 2, s);
  ck_assert(type_equal(t1, u));
  ck_assert(!type_equal(t1, type_scalar(B, DT_F32)));
  ck_assert(type_equal(type_new(A, TYPE_INCOMPLETE, S0), type_new(B, TYPE_INCOMPLETE, S0)));
  ck_assert(!type_equal(type_new(A, TYPE_UVAR, S0), type_new(B, TYPE_UVAR, S0)));
}
END_TEST

/* fn [P](P) -> P in each module, with its own type parameter. */
static Type *poly_id(Module *m, const char *name) {
  TypeParam *p = type_param_new(m, name, S0);
  Type *v = type_new(m, TYPE_VAR, S0);
  v->var.param = p;
  Type *f = type_new(m, TYPE_FUNC, S0);
  f->func.tparams = arena_memdup(m->arena, &p, sizeof p);
  f->func.ntparams = 1;
  f->func.args = arena_memdup(m->arena, &v, sizeof v);
  f->func.nargs = 1;
  f->func.ret = v;
  return f;
}

START_TEST(type_params_paired) {
  ck_assert(type_equal(poly_id(A, "A"), poly_id(B, "B")));
  Type *f = poly_id(B, "B");
  f->func.ret = type_scalar(B, DT_F32);
  ck_assert(!type_equal(poly_id(A, "A"), f));
}
END_TEST

START_TEST(defs_paired_by_name) {
  def_add1(A, "x", "add");
  add_def(A, "g", func(A, 0, NULL, expr_scalar_int(A, DT_I32, 0, S0)));
  add_def(B, "g", func(B, 0, NULL, expr_scalar_int(B, DT_I32, 0, S0)));
  def_add1(B, "z", "add");
  ck_equal(A, B);
  add_def(B, "h", func(B, 0, NULL, expr_scalar_int(B, DT_I32, 0, S0)));
  ck_differ(A, B, "function count differs (2 vs 3)");
}
END_TEST

START_TEST(why_may_be_null) {
  def_add1(A, "x", "add");
  def_add1(B, "x", "multiply");
  ck_assert(!module_equal(A, B, NULL));
}
END_TEST

START_TEST(long_chain_iterative) {
  Var *xa = var(A, "x", NULL), *xb = var(B, "x", NULL);
  Expr *ea = use(A, xa), *eb = use(B, xb);
  for (int i = 0; i < 100000; i++) {
    ea = opcall(A, "negative", NULL, 1, ea);
    eb = opcall(B, "negative", NULL, 1, eb);
  }
  Var *pa[] = {xa}, *pb[] = {xb};
  add_def(A, "f", func(A, 1, pa, ea));
  add_def(B, "f", func(B, 1, pb, eb));
  ck_equal(A, B);
  eb->call.fn->op.name = "abs";
  ck_differ(A, B, "operator negative vs abs");
}
END_TEST

/* ------------------------------------------------------------ from text */

static Module *parse_text(const char *text, Source **srcp) {
  Source *s = source_new("eq.relay", mem_strdup(text), strlen(text));
  Diag d;
  diag_init(&d, stderr, s);
  Module *m = parse_module(s, &d);
  if (d.nerrors == 0) resolve_module(m, &d);
  ck_assert_int_eq(d.nerrors, 0);
  *srcp = s;
  return m;
}

static bool text_equal(const char *a, const char *b, char **why) {
  Source *sa, *sb;
  Module *ma = parse_text(a, &sa), *mb = parse_text(b, &sb);
  bool eq = equal_why(ma, mb, why);
  module_free(ma);
  module_free(mb);
  source_free(sa);
  source_free(sb);
  return eq;
}

/* The two programs are equal (the report, if not, in the failure). */
static void expect_same(const char *a, const char *b) {
  char *why = NULL;
  ck_assert_msg(text_equal(a, b, &why), "%s", why);
  free(why);
}

/* The two programs differ, and the report says `msg`. */
static void expect_differ(const char *a, const char *b, const char *msg) {
  char *why = NULL;
  ck_assert(!text_equal(a, b, &why));
  ck_assert_msg(strstr(why, msg) != NULL, "%s", why);
  free(why);
}

START_TEST(text_renaming_and_layout) {
  expect_same("#[version = \"0.0.5\"]\n"
              "type List[A] { Cons(A, List[A]), Nil }\n"
              "def @len[A](%l: List[A]) -> int32 {\n"
              "  match (%l) { Cons(_, %rest) => 1 + @len(%rest), Nil => 0 }\n}\n",
              "#[version = \"0.0.5\"]\n"
              "type List[T] {\n  Cons(T, List[T]),\n  Nil,\n}\n"
              "def @len[B](%xs: List[B]) -> int32 {\n  match (%xs) {\n"
              "    Cons(_, %t) => { %0 = @len(%t); add(1, %0) },\n"
              "    Nil => { 0 },\n  }\n}\n");
}
END_TEST

START_TEST(text_sharing_differs) {
  char *why;
  ck_assert(!text_equal("#[version = \"0.0.5\"]\n"
                        "def @f(%x: float32) { %0 = add(%x, %x); multiply(%0, %0) }\n",
                        "#[version = \"0.0.5\"]\n"
                        "def @f(%x: float32) { multiply(add(%x, %x), add(%x, %x)) }\n",
                        &why));
  ck_assert_msg(strstr(why, "@f: sharing differs") != NULL, "%s", why);
  ck_assert_msg(strstr(why, "\n  eq.relay:2:") != NULL, "%s", why);
  free(why);
}
END_TEST

START_TEST(text_match_clause_differs) {
  expect_differ("#[version = \"0.0.5\"]\n"
                "type Nat { Z, S(Nat) }\n"
                "def @f(%n: Nat) { match (%n) { Z => 0, S(_) => 1 } }\n",
                "#[version = \"0.0.5\"]\n"
                "type Nat { Z, S(Nat) }\n"
                "def @f(%n: Nat) { match (%n) { S(_) => 1, Z => 0 } }\n",
                "constructor pattern differs (Z vs S)");
}
END_TEST


START_TEST(text_value_nodes_not_paired) {
  /* one shared projection / constant equals repeated ones (not graph nodes) */
  expect_same("#[version = \"0.0.5\"]\n"
              "def @f(%t: (float32, float32)) { %0 = %t.0; %1 = (); %2 = 1f; %3 = add(%0, %2); (%3, %3, %1, %1) }\n",
              "#[version = \"0.0.5\"]\n"
              "def @f(%t: (float32, float32)) { %0 = add(%t.0, 1f); (%0, %0, (), ()) }\n");
  /* but a shared non-empty tuple is a graph node */
  expect_differ("#[version = \"0.0.5\"]\n"
                "def @f(%x: float32) { %0 = (%x,); (%0, %0) }\n",
                "#[version = \"0.0.5\"]\n"
                "def @f(%x: float32) { ((%x,), (%x,)) }\n",
                "sharing differs (tuple)");
}
END_TEST

START_TEST(text_function_attributes) {
  /* attribute maps compare regardless of order */
  expect_same("#[version = \"0.0.5\"]\n"
              "def @f(%x: float32) { let %g = fn (%y: float32, Primitive=1, Name=\"k\") { %y }; %g(%x) }\n",
              "#[version = \"0.0.5\"]\n"
              "def @f(%x: float32) { let %g = fn (%y: float32, Name=\"k\", Primitive=1) { %y }; %g(%x) }\n");
  /* integers carry their dtype: 1 is not 1i64 */
  expect_differ("#[version = \"0.0.5\"]\n"
                "def @f(%x: float32) { let %g = fn (%y: float32, Primitive=1) { %y }; %g(%x) }\n",
                "#[version = \"0.0.5\"]\n"
                "def @f(%x: float32) { let %g = fn (%y: float32, Primitive=1i64) { %y }; %g(%x) }\n",
                "value of function attribute Primitive differs");
}
END_TEST

START_TEST(text_report_names_both_sides) {
  expect_differ("#[version = \"0.0.5\"]\n"
                "def @f(%x: float32) {\n  add(%x, 1f)\n}\n",
                "#[version = \"0.0.5\"]\n"
                "def @f(%x: float32) {\n\n  multiply(%x, 1f)\n}\n",
                "@f: operator add vs multiply\n  eq.relay:3:3: add(%x, 1f)\n  eq.relay:4:3: multiply(%x, 1f)\n");
}
END_TEST

static Suite *equal_suite(void) {
  Suite *s = suite_create("equal");
  TCase *tc = tcase_create("hand_built");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, alpha_equivalent_params);
  tcase_add_test(tc, operator_differs);
  tcase_add_test(tc, wrong_binder);
  tcase_add_test(tc, let_binders_paired);
  tcase_add_test(tc, sharing_must_agree);
  tcase_add_test(tc, sharing_same_is_equal);
  tcase_add_test(tc, constants_by_bytes);
  tcase_add_test(tc, attributes_by_value);
  tcase_add_test(tc, types_structural);
  tcase_add_test(tc, type_params_paired);
  tcase_add_test(tc, defs_paired_by_name);
  tcase_add_test(tc, why_may_be_null);
  tcase_add_test(tc, long_chain_iterative);
  suite_add_tcase(s, tc);
  tc = tcase_create("text");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, text_renaming_and_layout);
  tcase_add_test(tc, text_sharing_differs);
  tcase_add_test(tc, text_match_clause_differs);
  tcase_add_test(tc, text_value_nodes_not_paired);
  tcase_add_test(tc, text_function_attributes);
  tcase_add_test(tc, text_report_names_both_sides);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(equal_suite());
}
