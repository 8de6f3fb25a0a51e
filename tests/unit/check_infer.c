/* tests/unit/check_infer.c — type inference: unification, polymorphism,
 * recursion, control flow, refs, kinds, exhaustiveness, diagnostics, the
 * solver's incremental behaviour and the zonked result.
 *
 * Each case is Relay text run through parse → resolve → infer (the plain
 * ones are rows of the REJECTS and ACCEPTS tables); accepting
 * cases check the inferred types with print_type, rejecting cases check the
 * diagnostic text.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ir/print.h"
#include "parser/parser.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "sema/typing.h"
#include "tests/unit/unit_run.h"

typedef struct Run {
  Module *m;
  Source *src;
  char *out;   /* diagnostics text */
  int nerrors, nwarnings;
  bool ok;
} Run;

static Run run(const char *text) {
  Run r = {0};
  size_t n = strlen(text);
  char *copy = mem_malloc(n + 1);
  memcpy(copy, text, n + 1);
  r.src = source_new("t.relay", copy, n);
  size_t len = 0;
  FILE *f = open_memstream(&r.out, &len);
  Diag d;
  diag_init(&d, f, r.src);
  d.max_errors = 0;
  r.m = parse_module(r.src, &d);
  if (d.nerrors == 0) resolve_module(r.m, &d);
  if (d.nerrors == 0) r.ok = infer_module(r.m, &d);
  fclose(f);
  r.nerrors = d.nerrors;
  r.nwarnings = d.nwarnings;
  return r;
}

static void done(Run *r) {
  module_free(r->m);
  source_free(r->src);
  free(r->out);
}

static char *tystr(const Type *t) {
  static char buf[4096];
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  print_type(f, t);
  fclose(f);
  snprintf(buf, sizeof buf, "%s", s);
  free(s);
  return buf;
}

static GlobalDef *def(Module *m, const char *name) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, name) == 0) return m->defs[i];
  return NULL;
}

/* The return type of @name. */
static const char *ret_of(Run *r, const char *name) {
  GlobalDef *g = def(r->m, name);
  ck_assert_ptr_nonnull(g);
  ck_assert_ptr_nonnull(g->fn->type);
  return tystr(g->fn->type->func.ret);
}

static const char *param_of(Run *r, const char *name, uint32_t i) {
  GlobalDef *g = def(r->m, name);
  ck_assert_ptr_nonnull(g);
  ck_assert_uint_lt(i, g->fn->nparams);
  return tystr(g->fn->params[i]->type);
}

#define ACCEPT(r)                                                                       \
  do {                                                                                  \
    if (!(r).ok) ck_abort_msg("expected success, got:\n%s", (r).out ? (r).out : "");   \
  } while (0)
#define REJECT(r, text)                                                                    \
  do {                                                                                     \
    ck_assert_msg(!(r).ok, "expected an error");                                          \
    ck_assert_msg((r).out && strstr((r).out, text), "missing '%s' in:\n%s", text, (r).out); \
  } while (0)

#define HDR "#[version = \"0.0.5\"]\n"
#define LIST "type List[A] { Cons(A, List[A]), Nil }\n"

/* ------------------------------------------------------------ basics */

START_TEST(incomplete_annotation_filled) {
  Run r = run(HDR "def @f(%x: (float32, _)) -> _ { let %y: _ = %x.1; (%y, 1) }\n"
                  "def @main() { @f((1f, True)) }");
  ACCEPT(r);
  ck_assert_str_eq(param_of(&r, "f", 0), "(float32, bool)");
  ck_assert_str_eq(ret_of(&r, "f"), "(bool, int32)");
  done(&r);
}
END_TEST

START_TEST(unannotated_param_from_call_site) {
  Run r = run(HDR "def @id(%x) { %x }\ndef @main() -> int32 { @id(3) }");
  ACCEPT(r);
  ck_assert_str_eq(param_of(&r, "id", 0), "int32");
  done(&r);
}
END_TEST

/* ------------------------------------------------------------ polymorphism */

START_TEST(polymorphic_global_instantiated) {
  Run r = run(HDR "def @id[A](%x: A) -> A { %x }\ndef @main() { (@id(3), @id(True), @id((1f, 2))) }");
  ACCEPT(r);
  ck_assert_str_eq(ret_of(&r, "main"), "(int32, bool, (float32, int32))");
  ck_assert_str_eq(tystr(def(r.m, "id")->fn->type), "fn [A](A) -> A");
  done(&r);
}
END_TEST

/* ------------------------------------------------------------ exhaustiveness */

START_TEST(unreachable_clause_warns) {
  Run r = run(HDR LIST "def @f(%l: List[int32]) -> int32 { match (%l) { _ => 0, Nil => 1 } }");
  ACCEPT(r);
  ck_assert_int_eq(r.nwarnings, 1);
  ck_assert_ptr_nonnull(strstr(r.out, "unreachable match clause"));
  done(&r);
}
END_TEST

START_TEST(tuple_exhaustive) {
  Run r = run(HDR "type B { T, F }\n"
                  "def @f(%p: (B, B)) -> int32 { match (%p) { (T, T) => 1, (F, _) => 2, (_, F) => 3 } }\n"
                  "def @g(%p: (B, B)) -> int32 { match (%p) { (T, T) => 1, (F, F) => 2 } }");
  REJECT(r, "pattern (T, F) is not covered");
  ck_assert_int_eq(r.nerrors, 1);
  done(&r);
}
END_TEST

/* ------------------------------------------------------------ diagnostics */

START_TEST(several_errors_no_cascade) {
  Run r = run(HDR "def @f(%x: float32) -> float32 { let %y = if (%x) { 1f } else { 2f }; %y }\n"
                  "def @g(%c: bool) -> int32 { %c }\n"
                  "def @h() { @g(1, 2) }");
  ck_assert(!r.ok);
  ck_assert_int_eq(r.nerrors, 3);
  ck_assert_ptr_nonnull(strstr(r.out, "@g expects 1 argument but 2 were given"));
  done(&r);
}
END_TEST


/* ------------------------------------------------------------ unification (direct) */

static Type *tensor2(Module *m, DType dt, DimKind k0, int64_t v0, int64_t v1) {
  int64_t shape[2] = {v0, v1};
  Type *t = type_tensor(m, dt, 2, shape);
  t->tensor.dims[0].kind = k0;
  return t;
}

/* The unify tests' module and typing context, made anew for each test. */
static Module *unify_m;
static Diag unify_d;
static TyCx unify_cx;

static void unify_setup(void) {
  unify_m = module_new(NULL);
  diag_init(&unify_d, stderr, NULL);
  ty_init(&unify_cx, unify_m, &unify_d);
}

static void unify_teardown(void) {
  ty_fini(&unify_cx);
  module_free(unify_m);
}

START_TEST(unify_tensors_and_any) {
  Module *m = unify_m;
  ck_assert(ty_unify(&unify_cx, tensor2(m, DT_F32, DIM_INT, 3, 4), tensor2(m, DT_F32, DIM_INT, 3, 4)));
  ck_assert(ty_unify(&unify_cx, tensor2(m, DT_F32, DIM_ANY, 0, 4), tensor2(m, DT_F32, DIM_INT, 7, 4)));
  ck_assert(!ty_unify(&unify_cx, tensor2(m, DT_F32, DIM_INT, 3, 4), tensor2(m, DT_F32, DIM_INT, 3, 5)));
  ck_assert(!ty_unify(&unify_cx, tensor2(m, DT_F32, DIM_INT, 3, 4), tensor2(m, DT_F16, DIM_INT, 3, 4)));
  ck_assert(!ty_unify(&unify_cx, type_scalar(m, DT_F32), tensor2(m, DT_F32, DIM_INT, 3, 4)));
}
END_TEST

START_TEST(unify_uvars_union_find) {
  Module *m = unify_m;
  Type *u[100];
  for (int i = 0; i < 100; i++) u[i] = ty_fresh(&unify_cx);
  for (int i = 0; i < 99; i++) ck_assert(ty_unify(&unify_cx, u[i], u[i + 1]));
  ck_assert(ty_unify(&unify_cx, u[50], type_scalar(m, DT_I32)));
  Type *r = ty_find(u[0]);
  ck_assert_int_eq(r->kind, TYPE_TENSOR);
  ck_assert_ptr_eq(u[0]->uvar.link, r); /* path compressed */
  /* occurs check: u = (u,) is rejected */
  Type *v = ty_fresh(&unify_cx);
  Type *fields[1] = {v};
  ck_assert(!ty_unify(&unify_cx, v, ty_tuple(&unify_cx, fields, 1)));
  /* the error type absorbs everything and poisons a uvar silently */
  Type *w = ty_fresh(&unify_cx);
  ck_assert(ty_unify(&unify_cx, w, unify_cx.err));
  ck_assert(ty_unify(&unify_cx, w, type_scalar(m, DT_BOOL_T)));
  ck_assert(ty_is_err(&unify_cx, w));
}
END_TEST

START_TEST(unify_polymorphic_functions_alpha) {
  Module *m = unify_m;
  TypeParam *a = type_param_new(m, "A", (Span){0, 0}), *b = type_param_new(m, "B", (Span){0, 0});
  Type *va = type_new(m, TYPE_VAR, (Span){0, 0}), *vb = type_new(m, TYPE_VAR, (Span){0, 0});
  va->var.param = a;
  vb->var.param = b;
  Type *fa = ty_func(&unify_cx, &va, 1, va), *fb = ty_func(&unify_cx, &vb, 1, vb);
  fa->func.tparams = &a;
  fa->func.ntparams = 1;
  fb->func.tparams = &b;
  fb->func.ntparams = 1;
  ck_assert(ty_unify(&unify_cx, fa, fb));   /* fn[A](A) -> A  ~  fn[B](B) -> B */
  ck_assert(!ty_unify(&unify_cx, va, vb));  /* distinct rigid variables */
  Type *inst = ty_instantiate(&unify_cx, fa);
  ck_assert_int_eq(inst->func.ntparams, 0);
  ck_assert(ty_unify(&unify_cx, inst->func.args[0], type_scalar(m, DT_I64)));
  ck_assert_int_eq(ty_find(inst->func.ret)->kind, TYPE_TENSOR);
}
END_TEST

/* ------------------------------------------------------- operator calls */

/* A call equal to one typed before (operator, attributes, argument types)
 * takes its types from the call memo (sema/call_memo.h): one shared result
 * type and one callee type, no relation run again. */
START_TEST(equal_calls_share_types) {
  Run r = run(HDR "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
                  "  %0 = add(%x, %y);\n  %1 = add(%0, %x);\n  %2 = add(%1, %x);\n  %2\n}\n");
  ACCEPT(r);
  Expr *c2 = def(r.m, "main")->fn->body, *c1 = c2->call.args[0];
  ck_assert_str_eq(tystr(c2->type), "Tensor[(2, 3), float32]");
  ck_assert_ptr_eq(c1->type, c2->type);
  ck_assert_ptr_eq(c1->call.fn->type, c2->call.fn->type);
  done(&r);
}
END_TEST

/* Calls over the same argument types whose attributes differ are told apart,
 * also when a program alternates between them. */
START_TEST(equal_arguments_other_attributes) {
  Run r = run(HDR "def @main(%x: Tensor[(2, 3), float32]) {\n"
                  "  (sum(%x, axis=[0]), sum(%x, axis=[1]), sum(%x, axis=[0]), sum(%x, axis=[1]), sum(%x))\n}\n");
  ACCEPT(r);
  ck_assert_str_eq(ret_of(&r, "main"),
                   "(Tensor[(3), float32], Tensor[(2), float32], Tensor[(3), float32], Tensor[(2), float32], float32)");
  done(&r);
}
END_TEST

/* A call whose relation failed is not remembered: an equal call later is
 * checked (and reported) again. */
START_TEST(failed_call_reported_each_time) {
  Run r = run(HDR "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(4), float32]) {\n"
                  "  %0 = add(%a, %b);\n  %1 = add(%a, %b);\n  (%0, %1)\n}\n");
  REJECT(r, "add: ");
  ck_assert_int_eq(r.nerrors, 2);
  done(&r);
}
END_TEST

/* ------------------------------------------------------------ tables */

/* Programs inference rejects, with a substring of the diagnostics. */
static const struct {
  const char *name, *text, *error;
} REJECTS[] = {
    {"annotation_mismatch",
     HDR "def @f(%x: float32) -> int32 { %x }",
     "returns float32 but its declared return type is int32"},
    {"let_annotation_mismatch",
     HDR "def @f() { let %x: Tensor[(2), float32] = 1f; %x }",
     "%x is annotated Tensor[(2), float32] but its value has type float32"},
    {"monomorphic_global_not_generalized",
     HDR "def @id(%x) { %x }\ndef @main() { (@id(3), @id(True)) }",
     "argument 1 of @id: expected int32, found bool"},
    {"rigid_type_param",
     HDR "def @f[A](%x: A) -> A { 1 }",
     "returns int32 but its declared return type is A"},
    {"ctor_field_mismatch",
     HDR LIST "def @main() { Cons(1, Cons(True, Nil)) }",
     "argument 2 of constructor Cons: expected List[int32], found List[bool]"},
    {"occurs_check",
     HDR "def @main() { fn (%x) { %x(%x) } }",
     "argument 1 of %x"},
    {"if_condition_not_bool",
     HDR "def @f(%c: int32) { if (%c) { 1 } else { 2 } }",
     "the condition of if must be bool (Tensor[(), bool]), found int32"},
    {"if_branches_differ",
     HDR "def @f(%c: bool) { if (%c) { 1 } else { 2f } }",
     "then-branch int32, else-branch float32"},
    {"ref_write_wrong_type",
     HDR "def @main(%x: float32) { let %r = ref(%x); ref_write(%r, 1) }",
     "ref_write stores int32 into a reference of type ref(float32)"},
    {"tuple_projection",
     HDR "def @f(%t: (int32, bool)) { %t.2 }",
     "tuple index .2 out of range"},
    {"pattern_type_mismatch",
     HDR LIST "type Option[A] { Some(A), None }\n"
     "def @f(%l: List[int32]) { match (%l) { Some(%x) => %x, _ => 0 } }",
     "constructor pattern Some matches values of type Option["},
    {"clause_types_differ",
     HDR LIST "def @f(%l: List[int32]) { match (%l) { Cons(%x, _) => %x, Nil => True } }",
     "this match clause has type bool but the first clause has type int32"},
    {"non_exhaustive",
     HDR LIST "def @f(%l: List[int32]) -> int32 {\n"
     "  match (%l) { Cons(%x, Cons(_, _)) => %x, Nil => 0 }\n}",
     "pattern Cons(_, Nil) is not covered"},
    {"kind_wrong_arity",
     HDR LIST "def @f(%l: List[int32, bool]) { 0 }",
     "type List expects 1 type argument but 2 were given"},
    {"kind_missing_args",
     HDR LIST "def @f(%l: List) { 0 }",
     "type List expects 1 type argument but 0 were given"},
    {"call_non_function",
     HDR "def @f(%x: int32) { %x(1) }",
     "%x has type int32 and cannot be called"},
    {"error_has_location",
     HDR "def @f(%x: float32) -> float32 {\n  @f(1)\n}",
     "t.relay:3:6: error: argument 1 of @f: expected float32, found int32"},
};

START_TEST(rejected) {
  Run r = run(REJECTS[_i].text);
  ck_assert_msg(!r.ok, "%s: expected an error", REJECTS[_i].name);
  ck_assert_msg(r.out && strstr(r.out, REJECTS[_i].error), "%s: missing '%s' in:\n%s", REJECTS[_i].name,
                REJECTS[_i].error, r.out);
  done(&r);
}
END_TEST

/* Programs inference accepts, with the printed return type of one global
 * (none: acceptance is the test). */
static const struct {
  const char *name, *text, *global, *ret;
} ACCEPTS[] = {
    {"literals_and_annotations",
     HDR "def @f(%x: float32) -> (float32, int32, int64, bool, float16) { (%x, 1, 2i64, True, 1f16) }",
     "f", "(float32, int32, int64, bool, float16)"},
    {"list_library",
     HDR LIST
     "def @map[A, B](%f: fn (A) -> B, %l: List[A]) -> List[B] {\n"
     "  match (%l) { Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)), Nil => Nil }\n}\n"
     "def @foldl[A, B](%f: fn (A, B) -> A, %acc: A, %l: List[B]) -> A {\n"
     "  match (%l) { Cons(%h, %t) => @foldl(%f, %f(%acc, %h), %t), Nil => %acc }\n}\n"
     "def @main() -> List[bool] {\n"
     "  let %l = Cons(1, Cons(2, Nil));\n"
     "  let %s = @foldl(fn (%a: int32, %b: int32) { %a }, 0, %l);\n"
     "  @map(fn (%x: int32) { True }, %l)\n}",
     "main", "List[bool]"},
    {"ctor_as_value",
     HDR LIST
     "def @foldr[A, B](%f: fn (A, B) -> B, %acc: B, %l: List[A]) -> B {\n"
     "  match (%l) { Cons(%h, %t) => %f(%h, @foldr(%f, %acc, %t)), Nil => %acc }\n}\n"
     "def @main(%xs: List[int32]) { @foldr(Cons, Nil, %xs) }",
     "main", "List[int32]"},
    {"mutual_recursion",
     HDR "def @even(%n: int32) -> bool { if (%n == 0) { True } else { @odd(%n - 1) } }\n"
     "def @odd(%n: int32) -> bool { if (%n == 0) { False } else { @even(%n - 1) } }",
     NULL, NULL},
    {"recursive_let_closure",
     HDR "def @main(%k: int32) {\n"
     "  let %fact = fn (%n: int32) -> int32 { if (%n == 0) { 1 } else { %n * %fact(%n - 1) } };\n"
     "  let %add_k = fn (%x) { %x + %k };\n"
     "  %add_k(%fact(5))\n}",
     "main", "int32"},
    {"higher_order_compose",
     HDR "def @compose[A, B, C](%f: fn (B) -> C, %g: fn (A) -> B) -> fn (A) -> C {\n"
     "  fn (%x: A) -> C { %f(%g(%x)) }\n}\n"
     "def @main() { @compose(fn (%b: bool) { (%b,) }, fn (%i: int32) { %i == 1 })(3) }",
     "main", "(bool,)"},
    {"refs",
     HDR "def @main(%x: float32) { let %r = ref(%x); let %u = ref_write(%r, 1f); (ref_read(%r), %u) }",
     "main", "(float32, ())"},
    {"tuple_pattern",
     HDR LIST "def @f(%p: (int32, List[bool])) -> bool {\n"
     "  match (%p) { (_, Cons(%b, _)) => %b, (_, Nil) => False }\n}",
     NULL, NULL},
    {"partial_match_allowed",
     HDR LIST "def @f(%l: List[int32]) -> int32 { match? (%l) { Cons(%x, _) => %x } }",
     NULL, NULL},
};

START_TEST(accepted) {
  Run r = run(ACCEPTS[_i].text);
  if (!r.ok) ck_abort_msg("%s: expected success, got:\n%s", ACCEPTS[_i].name, r.out ? r.out : "");
  if (ACCEPTS[_i].global) ck_assert_str_eq(ret_of(&r, ACCEPTS[_i].global), ACCEPTS[_i].ret);
  done(&r);
}
END_TEST

static Suite *infer_suite(void) {
  Suite *s = suite_create("infer");
  TCase *u = tcase_create("unify");
  tcase_add_checked_fixture(u, unify_setup, unify_teardown);
  tcase_add_test(u, unify_tensors_and_any);
  tcase_add_test(u, unify_uvars_union_find);
  tcase_add_test(u, unify_polymorphic_functions_alpha);
  suite_add_tcase(s, u);
  TCase *b = tcase_create("basics");
  tcase_add_test(b, incomplete_annotation_filled);
  tcase_add_test(b, unannotated_param_from_call_site);
  suite_add_tcase(s, b);
  TCase *p = tcase_create("polymorphism");
  tcase_add_test(p, polymorphic_global_instantiated);
  suite_add_tcase(s, p);
  TCase *ex = tcase_create("exhaustiveness");
  tcase_add_test(ex, unreachable_clause_warns);
  tcase_add_test(ex, tuple_exhaustive);
  suite_add_tcase(s, ex);
  TCase *dg = tcase_create("diagnostics");
  tcase_add_test(dg, several_errors_no_cascade);
  suite_add_tcase(s, dg);
  TCase *tb = tcase_create("tables");
  tcase_add_loop_test(tb, rejected, 0, sizeof REJECTS / sizeof *REJECTS);
  tcase_add_loop_test(tb, accepted, 0, sizeof ACCEPTS / sizeof *ACCEPTS);
  suite_add_tcase(s, tb);
  TCase *oc = tcase_create("operator calls");
  tcase_add_test(oc, equal_calls_share_types);
  tcase_add_test(oc, equal_arguments_other_attributes);
  tcase_add_test(oc, failed_call_reported_each_time);
  suite_add_tcase(s, oc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(infer_suite());
}
