/* tests/unit/check_fold_constant.c — FoldConstant's values are bit-identical
 * to running the unfolded program (spec/passes.md §4.1), and the eval/ API it
 * uses (eval_closed_expr) refuses what it cannot evaluate.
 *
 * Each program's @main is run by the interpreter before and after the pass
 * and the two values are compared byte for byte (NaN payloads and signed
 * zeros included); the folded @main must have become a constant or a tuple
 * of constants, so the second run computes nothing. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eval/closed.h"
#include "eval/lower.h"
#include "eval/vm.h"
#include "ir/build.h"
#include "ir/mem.h"
#include "ops/op_call.h"
#include "runtime/tensor.h"
#include "tests/unit/unit_run.h"
#include "tests/unit/ut_prog.h"

static Value run_main(UtProg *p) {
  Program *code = lower_module(p->m, &p->d);
  ck_assert_ptr_nonnull(code);
  Value r = value_none();
  int st = vm_run(code, code->codes[program_global(code, "main")], NULL, 0, &r, &p->d, NULL);
  if (st != VM_OK) ck_abort_msg("run failed: %s", ut_errors(p));
  program_free(code);
  return r;
}

static bool same_bits(const Value *a, const Value *b) {
  ValueKind ka = value_kind(*a), kb = value_kind(*b);
  if ((ka == VK_SCALAR || ka == VK_TENSOR) && (kb == VK_SCALAR || kb == VK_TENSOR)) {
    Tensor *x = value_to_tensor(a), *y = value_to_tensor(b);
    bool eq = x && y && dtype_eq(x->dtype, y->dtype) && x->ndim == y->ndim && x->nbytes == y->nbytes;
    for (int32_t i = 0; eq && i < x->ndim; i++) eq = x->shape[i] == y->shape[i];
    eq = eq && memcmp(x->data, y->data, x->nbytes) == 0;
    tensor_release(x);
    tensor_release(y);
    return eq;
  }
  if (ka != VK_TUPLE || kb != VK_TUPLE) return false;
  TupleObj *s = value_tuple(*a), *t = value_tuple(*b);
  if (s->n != t->n) return false;
  for (uint32_t i = 0; i < s->n; i++)
    if (!same_bits(&s->f[i], &t->f[i])) return false;
  return true;
}

static bool is_constant_tree(const Expr *e) {
  if (e->kind == EXPR_CONST) return true;
  if (e->kind != EXPR_TUPLE) return false;
  for (uint32_t i = 0; i < e->tuple.n; i++)
    if (!is_constant_tree(e->tuple.fields[i])) return false;
  return true;
}

/* Runs @main, folds, checks it became constant, runs again, compares. */
static void expect_identical(const char *text) {
  UtProg p;
  ut_load(&p, text);
  Value before = run_main(&p);
  ut_passes(&p, "FoldConstant");
  const Expr *body = NULL;
  for (uint32_t i = 0; i < p.m->ndefs; i++)
    if (strcmp(p.m->defs[i]->name, "main") == 0) body = p.m->defs[i]->fn->body;
  ck_assert_ptr_nonnull(body);
  if (!is_constant_tree(body)) ck_abort_msg("not folded to a constant:\n%s", text);
  Value after = run_main(&p);
  if (!same_bits(&before, &after)) ck_abort_msg("folded value differs from the run:\n%s", text);
  value_release(before);
  value_release(after);
  ut_unload(&p);
  value_heap_shutdown();
}

#define META_HEAD "#[metadata]\n{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, " \
  "{\"type_key\": \"Map\", \"keys\": [\"relay.Constant\"], \"data\": [2]}, " \
  "{\"type_key\": \"Array\", \"data\": [3]}, {\"type_key\": \"relay.Constant\", \"attrs\": " \
  "{\"_checked_type_\": \"0\", \"data\": \"0\", \"span\": \"0\", \"virtual_device_\": \"0\"}}], " \
  "\"b64ndarrays\": [\""
#define META_TAIL "\"], \"attrs\": {\"tvm_version\": \"0.8.dev0\"}}\n"
/* float32 [[0.5, -1.25, 3], [7, -0, 1e-3]] (2x3) */
#define C23 "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAgAAAAIgAQACAAAAAAAAAAMAAAAAAAAAGAAAAAAAAAAAAAA/AACgvwAAQEAAAOBAAAAAgG8Sgzo="

START_TEST(scalar_math_bit_identical) {
  expect_identical("#[version = \"0.0.5\"]\ndef @main() {\n"
                   "  %0 = divide(1f, 3f);\n  %1 = exp(%0);\n  %2 = tanh(multiply(%1, 7f));\n"
                   "  %3 = (sqrt(2f), erf(0.3f), sigmoid(-2.5f), power(%0, 1.7f), log(%1));\n"
                   "  (%2, %3, divide(1f64, 3f64), cast(7.9f, dtype=\"int8\"), rsqrt(0.7f))\n}\n");
  expect_identical("#[version = \"0.0.5\"]\ndef @main() {\n"
                   "  (subtract(0f, 0f), divide(0f, 0f), negative(0f), maximum(-0f, 0f), floor_mod(-7, 3),"
                   " right_shift(-9, 1), divide(-7, 2), cast(300, dtype=\"uint8\"))\n}\n");
}
END_TEST

START_TEST(tensor_kernels_bit_identical) {
  expect_identical("#[version = \"0.0.5\"]\ndef @main() {\n"
                   "  %0 = meta[relay.Constant][0];\n"
                   "  %1 = nn.softmax(%0);\n  %2 = mean(%0, axis=[1], keepdims=True);\n"
                   "  %3 = variance(%0, %2, axis=[1], keepdims=True);\n"
                   "  %4 = divide(subtract(%0, %2), sqrt(add(%3, 1e-05f)));\n"
                   "  %5 = nn.dense(%0, %0);\n  %6 = exp(%0);\n  %7 = tanh(%0);\n"
                   "  %8 = cast(%0, dtype=\"float16\");\n  %9 = add(%8, %8);\n"
                   "  (%1, %4, %5, %6, %7, cast(%9, dtype=\"float32\"), nn.log_softmax(%0), argmax(%0, axis=[1]),"
                   " transpose(%0), sum(%6), erf(%0), sigmoid(%0), power(%6, %0))\n}\n"
                   META_HEAD C23 META_TAIL);
  expect_identical("#[version = \"0.0.5\"]\ndef @main() {\n"
                   "  %0 = reshape(meta[relay.Constant][0], newshape=[1, 2, 1, 3]);\n"
                   "  %1 = nn.conv2d(%0, reshape(meta[relay.Constant][0], newshape=[3, 2, 1, 1]),"
                   " padding=[1, 1, 1, 1]);\n"
                   "  %2 = nn.avg_pool2d(%1, pool_size=[2, 2], padding=[1, 1, 1, 1]);\n"
                   "  %3 = ones_like(sum(meta[relay.Constant][0], axis=[0]));\n"
                   "  %4 = nn.batch_norm(%1, add(%3, 1f), %3, %3, %3);\n"
                   "  (%1, %2, %4.0, nn.relu(%1), image.resize2d(%0, size=[3, 5]))\n}\n"
                   META_HEAD C23 META_TAIL);
}
END_TEST

START_TEST(eval_closed_refuses) {
  UtProg p;
  ut_load(&p, "#[version = \"0.0.5\"]\ndef @g() -> float32 { 1f }\n"
                "def @main(%x: float32) -> float32 { add(%x, @g()) }\n");
  Expr *body = p.m->defs[1]->fn->body;
  Value v;
  /* a free variable and a global: not closed */
  ck_assert_int_eq(eval_closed_expr(p.m, body, &v, NULL), EVAL_CLOSED_NOT_VALUE);
  ck_assert_int_eq(eval_closed_expr(p.m, body->call.args[1], &v, NULL), EVAL_CLOSED_NOT_VALUE);
  /* a closure value is not returned */
  Var *a = build_fresh_var(p.m, "a", NULL, body->span);
  Function *fn = build_function(p.m, &a, 1, NULL, build_var(p.m, a, body->span), NULL, body->span);
  ck_assert_int_eq(eval_closed_expr(p.m, build_fn(p.m, fn, body->span), &v, NULL), EVAL_CLOSED_NOT_VALUE);
  /* a run-time error is reported as one (silently without a Diag) */
  Expr *args[2] = {expr_scalar_int(p.m, DT_I32, 1, body->span), expr_scalar_int(p.m, DT_I32, 0, body->span)};
  Expr *div = op_call(p.m, "divide", args, 2, NULL, body->span);
  ck_assert_int_eq(eval_closed_expr(p.m, div, &v, NULL), EVAL_CLOSED_ERROR);
  ck_assert_int_eq(p.d.nerrors, 0);
  /* and a closed constant expression evaluates */
  args[1] = expr_scalar_int(p.m, DT_I32, 5, body->span);
  Expr *add = op_call(p.m, "add", args, 2, NULL, body->span);
  ck_assert_int_eq(eval_closed_expr(p.m, add, &v, NULL), EVAL_CLOSED_OK);
  ck_assert_int_eq(value_kind(v), VK_SCALAR);
  ck_assert_int_eq(v.i, 6);
  value_release(v);
  ut_unload(&p);
  value_heap_shutdown();
}
END_TEST

static Suite *fold_suite(void) {
  Suite *s = suite_create("fold_constant");
  TCase *tc = tcase_create("bit_identical");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, scalar_math_bit_identical);
  tcase_add_test(tc, tensor_kernels_bit_identical);
  tcase_add_test(tc, eval_closed_refuses);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(fold_suite());
}
