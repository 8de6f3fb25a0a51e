/* tests/unit/check_functional.c — the functional transformations of
 * transform/ (EtaExpand, Inline, LambdaLift) through the pass pipeline API:
 * the shape of their output, checked by walking the rewritten module (the
 * golden tests check exact texts and values).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "ir/mem.h"
#include "ir/walk.h"
#include "parser/parser.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef struct Run {
  Module *m;
  Source *src;
  int status;
} Run;

/* parse + resolve + infer + passes `spec`; status 0 on success */
static Run run(const char *text, const char *spec) {
  Run r = {0};
  size_t n = strlen(text);
  char *copy = mem_malloc(n + 1);
  memcpy(copy, text, n + 1);
  r.src = source_new("t.relay", copy, n);
  Diag d;
  diag_init(&d, stderr, r.src);
  r.m = parse_module(r.src, &d);
  if (d.nerrors == 0) resolve_module(r.m, &d);
  if (d.nerrors == 0) infer_module(r.m, &d);
  ck_assert_int_eq(d.nerrors, 0);
  PassPipeline pl;
  pass_pipeline_init(&pl);
  ck_assert(pass_pipeline_parse(&pl, spec, stderr));
  r.status = pass_pipeline_run(&pl, r.m, &d, NULL);
  pass_pipeline_fini(&pl);
  return r;
}

static void done(Run *r) {
  module_free(r->m);
  source_free(r->src);
}

/* Counts function literals anywhere except as the whole body of a global. */
static void count_fn(Expr *e, void *ud) {
  if (e->kind == EXPR_FN && !fn_has_attr(e->fn, "Primitive")) (*(int *)ud)++;
}

static int nested_literals(Module *m) {
  int n = 0;
  for (uint32_t i = 0; i < m->ndefs; i++) {
    Function *f = m->defs[i]->fn;
    if (!f) continue;
    Expr *b = f->body;
    /* a Closure=1 global returns its one literal */
    if (fn_has_attr(f, "Closure") && b->kind == EXPR_FN) b = b->fn->body;
    walk_post_order(b, true, count_fn, &n);
  }
  return n;
}

START_TEST(lambda_lift_leaves_only_globals) {
  const char *prog =
      "#[version = \"0.0.5\"]\n"
      "def @main(%x: float32) -> float32 {\n"
      "  let %k = fn (%a: float32) -> fn (float32) -> float32 { fn (%b: float32) -> float32 { add(%a, add(%b, %x)) } };\n"
      "  let %rec = fn (%n: int32, %acc: float32) -> float32 {\n"
      "    if (equal(%n, 0)) { %acc } else { %rec(subtract(%n, 1), %k(%acc)(1f)) } };\n"
      "  %rec(3, %x)\n"
      "}\n";
  Run r = run(prog, "LambdaLift");
  ck_assert_int_eq(r.status, 0);
  ck_assert_int_eq(nested_literals(r.m), 0);
  ck_assert_uint_ge(r.m->ndefs, 4);
  done(&r);
}
END_TEST

START_TEST(lambda_lift_prelude_leaves_only_globals) {
  size_t len = 0;
  const char *text = eval_prelude_text(&len);
  char *prog = mem_malloc(len + 64);
  memcpy(prog, text, len);
  strcpy(prog + len, "\ndef @main() -> int32 { 0 }\n");
  Run before = run(prog, "InferType");
  int had = nested_literals(before.m);
  done(&before);
  ck_assert_int_gt(had, 0); /* the prelude has closures to lift */
  Run r = run(prog, "LambdaLift");
  ck_assert_int_eq(r.status, 0);
  ck_assert_int_eq(nested_literals(r.m), 0);
  done(&r);
  mem_free(prog);
}
END_TEST

START_TEST(inline_removes_marked_globals) {
  Run r = run("#[version = \"0.0.5\"]\n"
              "def @f(%a: int32, Inline=1) -> int32 { add(%a, %a) }\n"
              "def @g(%a: int32, Inline=1) -> int32 { @f(%a) }\n"
              "def @main() -> int32 { @g(2) }\n",
              "Inline");
  ck_assert_int_eq(r.status, 0);
  ck_assert_uint_eq(r.m->ndefs, 1);
  ck_assert_str_eq(r.m->defs[0]->name, "main");
  done(&r);
}
END_TEST

START_TEST(eta_expand_shares_one_literal) {
  Run r = run("#[version = \"0.0.5\"]\n"
              "def @f(%a: int32) -> int32 { %a }\n"
              "def @main() -> (int32, int32) { (@f(1), @f(2)) }\n",
              "EtaExpand(expand_global_var=True)");
  ck_assert_int_eq(r.status, 0);
  GlobalDef *main = r.m->defs[0]->fn->body->kind == EXPR_TUPLE ? r.m->defs[0] : r.m->defs[1];
  Expr *t = main->fn->body;
  ck_assert_int_eq(t->kind, EXPR_TUPLE);
  ck_assert_ptr_eq(t->tuple.fields[0]->call.fn, t->tuple.fields[1]->call.fn);
  ck_assert_int_eq(t->tuple.fields[0]->call.fn->kind, EXPR_FN);
  done(&r);
}
END_TEST

/* TVM's assert_no_higher_order_functions: no call (reachable from @main)
 * whose result or argument types mention a function type. */
static bool has_fn_type(const Type *t) {
  if (!t) return false;
  switch (t->kind) {
  case TYPE_FUNC: return true;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (has_fn_type(t->tuple.fields[i])) return true;
    return false;
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++)
      if (has_fn_type(t->adt.args[i])) return true;
    return false;
  case TYPE_REF: return has_fn_type(t->ref.inner);
  default: return false;
  }
}

typedef struct HoScan {
  int higher_order_calls;
  VEC(GlobalDef *) todo;
  PtrMap seen;
} HoScan;

static void scan_call(Expr *e, void *ud) {
  HoScan *s = ud;
  if (e->kind == EXPR_GLOBAL && e->global.def && !ptrmap_find(&s->seen, e->global.def)) {
    ptrmap_put(&s->seen, e->global.def, 1);
    vec_push(s->todo, e->global.def);
  }
  if (e->kind != EXPR_CALL) return;
  bool ho = has_fn_type(e->type);
  for (uint32_t i = 0; i < e->call.nargs; i++) ho |= has_fn_type(e->call.args[i]->type);
  s->higher_order_calls += ho;
}

static int higher_order_calls_from_main(Module *m) {
  HoScan s = {0};
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, "main") == 0) vec_push(s.todo, m->defs[i]);
  for (size_t i = 0; i < s.todo.len; i++)
    if (s.todo.data[i]->fn) walk_post_order(s.todo.data[i]->fn->body, true, scan_call, &s);
  vec_free(s.todo);
  ptrmap_free(&s.seen);
  return s.higher_order_calls;
}

START_TEST(defunctionalization_leaves_first_order_code) {
  const char *prog =
      "#[version = \"0.0.5\"]\n"
      "type List[A] { Cons(A, List[A]), Nil, }\n"
      "def @sum(%f: fn(int32) -> int32, %k: List[int32]) -> int32 {\n"
      "  match (%k) { Cons(%x, %rest) => @sum(fn (%n: int32) -> int32 { %x + %f(%n) }, %rest), Nil => %f(0), }\n"
      "}\n"
      "def @id[A](%x: A) -> A { %x }\n"
      "def @main() -> int32 { @sum(@id, Cons(1, Cons(2, Nil))) }\n";
  Run before = run(prog, "InferType");
  ck_assert_int_gt(higher_order_calls_from_main(before.m), 0);
  done(&before);
  Run r = run(prog, "Defunctionalization");
  ck_assert_int_eq(r.status, 0);
  ck_assert_int_eq(higher_order_calls_from_main(r.m), 0);
  done(&r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("functional");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, lambda_lift_leaves_only_globals);
  tcase_add_test(tc, lambda_lift_prelude_leaves_only_globals);
  tcase_add_test(tc, inline_removes_marked_globals);
  tcase_add_test(tc, eta_expand_shares_one_literal);
  tcase_add_test(tc, defunctionalization_leaves_first_order_code);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
