/* tests/unit/check_mixed_precision.c — ToMixedPrecision's run values
 * (transform/mixed_precision.c), TVM's verify_mixed_precision_output_close.
 *
 * Each program of TVM's test_to_mixed_precision.py (and an LSTM cell with
 * lets and function literals) runs twice on the same seeded random inputs:
 * as written, and after ToMixedPrecision (float16, relayc computing float16
 * through float32). Every tensor of the results must satisfy numpy's
 * allclose with TVM's tolerances, |a - b| <= atol + rtol |b|; with
 * keep_orig_output_dtype the result dtypes must be the original ones.
 * The structure of the rewritten modules is pinned by the goldens in
 * tests/golden/passes/to_mixed_precision/.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/lower.h"
#include "eval/vm.h"
#include "ir/mem.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"
#include "tests/unit/ut_prog.h"

#define HDR "#[version = \"0.0.5\"]\n"

typedef struct Out {
  Tensor *t[8];
  uint32_t n;
} Out;

static void collect(const Value *v, Out *o) {
  if (value_kind(*v) == VK_TUPLE) {
    TupleObj *tu = value_tuple(*v);
    for (uint32_t i = 0; i < tu->n; i++) collect(&tu->f[i], o);
  } else if (o->n < 8) {
    Tensor *t = value_to_tensor(v);
    ck_assert_ptr_nonnull(t);
    o->t[o->n++] = tensor_copy(t);
    tensor_release(t);
  }
}

/* Parses, checks, optionally runs `passes`, and runs @main on inputs made
 * from `seed` (float parameters uniform in [-1, 1), integer ones 0). */
static void run(const char *text, const char *passes, uint32_t seed, Out *out) {
  UtProg prog;
  ut_load(&prog, text);
  if (passes) ut_passes(&prog, passes);
  Module *m = prog.m;
  Function *fn = m->defs[m->ndefs - 1]->fn;
  Value *args = mem_calloc(fn->nparams + 1, sizeof *args);
  for (uint32_t i = 0; i < fn->nparams; i++) {
    const Type *t = fn->params[i]->type;
    ck_assert(t && t->kind == TYPE_TENSOR);
    int64_t shape[8];
    for (uint32_t k = 0; k < t->tensor.ndim; k++) shape[k] = t->tensor.dims[k].value;
    Tensor *x = kt_new(t->tensor.dtype, (int32_t)t->tensor.ndim, shape);
    if (t->tensor.dtype.code == DT_FLOAT) kt_fill(x, seed + i, -1, 1);
    else memset(x->data, 0, x->nbytes);
    args[i] = value_from_tensor(x);
  }
  Program *p = lower_module(m, &prog.d);
  ck_assert_ptr_nonnull(p);
  Value res = value_none();
  int st = vm_run(p, p->codes[program_global(p, "main")], args, fn->nparams, &res, &prog.d, NULL);
  ck_assert_msg(st == VM_OK, "run failed:\n%s", ut_errors(&prog));
  out->n = 0;
  collect(&res, out);
  value_release(res);
  mem_free(args);
  program_free(p);
  ut_unload(&prog);
}

/* numpy.allclose(mixed, ref, rtol, atol) for every result tensor. */
static void check_close(const char *body, const char *passes, double rtol, double atol, bool keep_dtype) {
  char *text = NULL;
  if (asprintf(&text, HDR "%s", body) < 0) ck_abort();
  Out ref, mixed;
  run(text, NULL, 11, &ref);
  run(text, passes, 11, &mixed);
  ck_assert_int_eq(ref.n, mixed.n);
  for (uint32_t i = 0; i < ref.n; i++) {
    const Tensor *a = mixed.t[i], *b = ref.t[i];
    ck_assert_int_eq(a->numel, b->numel);
    if (keep_dtype) ck_assert(dtype_eq(a->dtype, b->dtype));
    for (int64_t k = 0; k < a->numel; k++) {
      double x = tensor_get_f64(a, k), y = tensor_get_f64(b, k);
      ck_assert_msg(fabs(x - y) <= atol + rtol * fabs(y), "result %u element %lld: %g vs %g (rtol %g, atol %g)", i,
                    (long long)k, x, y, rtol, atol);
    }
  }
  for (uint32_t i = 0; i < ref.n; i++) {
    tensor_release(ref.t[i]);
    tensor_release(mixed.t[i]);
  }
  free(text);
}

#define CONV_IN "%data: Tensor[(1, 3, 32, 32), float32], %weight: Tensor[(5, 3, 3, 3), float32]"
#define CONV "nn.conv2d(%data, %weight, padding=[1, 1, 1, 1], out_dtype=\"float32\")"

START_TEST(single_conv) {
  check_close("def @main(" CONV_IN ") { " CONV " }", "ToMixedPrecision(keep_orig_output_dtype=True)", 1e-3, 0.01, true);
}
END_TEST

START_TEST(conv_bn) {
  check_close("def @main(" CONV_IN ", %g: Tensor[(5), float32], %b: Tensor[(5), float32], %m: Tensor[(5), float32],"
              " %v: Tensor[(5), float32]) {\n"
              "  %0 = " CONV ";\n"
              "  %1 = nn.batch_norm(%0, %g, %b, %m, add(abs(%v), 1f));\n"
              "  %1.0\n"
              "}",
              "ToMixedPrecision", 0.01, 0.025, false);
}
END_TEST

START_TEST(propagation) {
  /* green-gray: add follows the float16 conv; green-red: one cast before softmax */
  check_close("def @main(" CONV_IN ") { %0 = " CONV "; add(%0, %0) }", "ToMixedPrecision", 0.01, 0.01, false);
  check_close("def @main(" CONV_IN ") { nn.softmax(" CONV ") }", "ToMixedPrecision", 1e-3, 0.01, false);
  /* red-gray: nothing changes, the values are exact */
  check_close("def @main(%a: Tensor[(1, 2, 3), float32]) { %0 = nn.softmax(%a); add(%0, %0) }", "ToMixedPrecision", 0,
              0, true);
}
END_TEST

START_TEST(let_statement) {
  check_close("def @main(%data: Tensor[(1, 20), float32], %weight: Tensor[(20, 20), float32]) {\n"
              "  let %var1 = nn.dense(%data, %weight, units=20);\n"
              "  let %var2 = nn.dense(add(%var1, %var1), %weight, units=20);\n"
              "  add(%var2, %var2)\n"
              "}",
              "ToMixedPrecision", 0.15, 0.05, false);
}
END_TEST

START_TEST(where_matmul_take_clip) {
  check_close("def @main(%data: Tensor[(1, 20), float32], %weight: Tensor[(20, 20), float32]) {\n"
              "  %0 = nn.dense(%data, %weight, units=20);\n"
              "  where(%data, %0, %0)\n"
              "}",
              "ToMixedPrecision", 0.01, 0.01, false);
  check_close("def @main(%data: Tensor[(1, 1, 20), float32], %weight: Tensor[(1, 20, 20), float32]) {\n"
              "  nn.batch_matmul(%data, %weight)\n"
              "}",
              "ToMixedPrecision", 0.01, 0.01, false);
  check_close("def @main(%data: Tensor[(1, 10), float32], %indices: Tensor[(1, 1), int32]) {\n"
              "  take(%data, add(%indices, 0), axis=0)\n"
              "}",
              "ToMixedPrecision", 0.01, 0.01, false);
  check_close("def @main(%data: Tensor[(1, 10), float32]) { clip(%data, a_min=-128000f, a_max=128000f) }",
              "ToMixedPrecision", 0.01, 0.01, true);
  check_close("def @main(%data: Tensor[(1, 10), float32]) {\n"
              "  clip(divide(%data, 5f), a_min=-128000f, a_max=128000f)\n"
              "}",
              "ToMixedPrecision", 0.01, 0.01, true);
}
END_TEST

START_TEST(lstm_cells) {
  /* two unrolled LSTM steps, each a function literal with let statements
   * (TVM's test_lstm stress test, hand-written): the literals' bodies go to
   * float16, the calls of the literals (NEVER) cast their arguments back */
  const char *cell = "fn (%x: Tensor[(1, 4), float32], %h: Tensor[(1, 4), float32], %c: Tensor[(1, 4), float32]) {\n"
                     "    let %gates = add(add(nn.dense(%x, %wi, units=16), nn.dense(%h, %wh, units=16)), %b);\n"
                     "    let %s = split(%gates, indices_or_sections=4, axis=1);\n"
                     "    let %i = sigmoid(%s.0);\n"
                     "    let %f = sigmoid(%s.1);\n"
                     "    let %g = tanh(%s.2);\n"
                     "    let %o = sigmoid(%s.3);\n"
                     "    let %c1 = add(multiply(%f, %c), multiply(%i, %g));\n"
                     "    (multiply(%o, tanh(%c1)), %c1)\n"
                     "  }";
  char *body = NULL;
  if (asprintf(&body,
               "def @main(%%data: Tensor[(1, 4), float32], %%data1: Tensor[(1, 4), float32], %%h0: Tensor[(1, 4), float32],"
               " %%c0: Tensor[(1, 4), float32], %%wi: Tensor[(16, 4), float32], %%wh: Tensor[(16, 4), float32],"
               " %%b: Tensor[(16), float32]) {\n"
               "  %%0 = %s;\n"
               "  %%1 = %%0(%%data, %%h0, %%c0);\n"
               "  %%2 = %s;\n"
               "  %%3 = %%2(%%data1, %%1.0, %%1.1);\n"
               "  %%3.0\n"
               "}",
               cell, cell) < 0)
    ck_abort();
  check_close(body, "ToMixedPrecision", 0.01, 0.01, false);
  free(body);
}
END_TEST

static Suite *mp_suite(void) {
  Suite *s = suite_create("mixed_precision");
  TCase *tc = tcase_create("mixed_precision");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, single_conv);
  tcase_add_test(tc, conv_bn);
  tcase_add_test(tc, propagation);
  tcase_add_test(tc, let_statement);
  tcase_add_test(tc, where_matmul_take_clip);
  tcase_add_test(tc, lstm_cells);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(mp_suite());
}
