/* tests/unit/check_conv_epilogue.c — transform/conv_epilogue.c:
 * FoldBatchNormIntoConv and FuseConvEpilogue (relayc's inference rewrites,
 * formerly eval/fold.c; these are its cases).
 *
 * Each case is a small Relay program with its weights in a #[metadata]
 * section (written with ir/metadata_write.h). It is run twice through the
 * whole pipeline (parse, resolve, infer, [the two passes], lower, run). The
 * results must agree within float rounding, and the rewritten module must
 * hold the expected operator calls — nothing fused where a value has
 * another use.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/lower.h"
#include "eval/vm.h"
#include "ir/mem.h"
#include "ir/metadata_write.h"
#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/registry.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"
#include "tests/unit/ut_prog.h"

/* ---- constants for the metadata section */

static ConstTensor *consts[64];
static uint32_t nconsts;

static void add_const(int32_t nd, const int64_t *shape, double lo, double hi) {
  Tensor *t = kt_new(DTYPE(DT_FLOAT, 32), nd, shape);
  kt_fill(t, 1000 + nconsts, lo, hi);
  ConstTensor *c = calloc(1, sizeof *c);
  c->dtype = t->dtype;
  c->ndim = nd;
  c->shape = calloc((size_t)nd + 1, sizeof *c->shape);
  memcpy(c->shape, shape, (size_t)nd * sizeof *shape);
  c->data = malloc(t->nbytes + 1);
  memcpy(c->data, t->data, t->nbytes);
  c->nbytes = t->nbytes;
  c->meta_index = (int32_t)nconsts;
  consts[nconsts++] = c;
  tensor_release(t);
}

/* bn vectors γ, β, μ, σ² of length n */
static void add_bn(int64_t n) {
  int64_t s[1] = {n};
  add_const(1, s, 0.5, 1.5);
  add_const(1, s, -0.5, 0.5);
  add_const(1, s, -0.2, 0.2);
  add_const(1, s, 0.5, 2.0);
}

static void reset_consts(void) {
  for (uint32_t i = 0; i < nconsts; i++) {
    free(consts[i]->shape);
    free(consts[i]->data);
    free(consts[i]);
  }
  nconsts = 0;
}

/* ---- running a program */

typedef struct Result {
  Tensor *out[8];
  uint32_t n;
  char ops[256]; /* the operator calls of @main after the passes: "name*count ..." in registry order */
} Result;

static void count_call(Expr *e, void *ud) {
  int32_t id = op_call_id(e);
  if (id >= 0) ((uint32_t *)ud)[id]++;
}

/* "relayc.conv2d_bias*2 nn.max_pool2d*1" for the calls under `body`. */
static void describe_ops(Expr *body, char *buf, size_t cap) {
  uint32_t *counts = calloc(op_count(), sizeof *counts);
  walk_post_order(body, true, count_call, counts);
  size_t n = 0;
  buf[0] = 0;
  for (uint32_t i = 0; i < op_count() && n < cap; i++)
    if (counts[i]) n += (size_t)snprintf(buf + n, cap - n, "%s%s*%u", n ? " " : "", op_get((int32_t)i)->name, counts[i]);
  free(counts);
}

static void run_program(const char *body, const Tensor *input, bool fold, Result *res) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  fprintf(f, "#[version = \"0.0.5\"]\n%s\n#[metadata]\n", body);
  metadata_write(f, consts, nconsts);
  fclose(f);
  UtProg prog;
  ut_load(&prog, text);
  free(text);
  if (fold) ut_passes(&prog, "FoldBatchNormIntoConv,FuseConvEpilogue");
  Module *m = prog.m;
  describe_ops(m->defs[m->ndefs - 1]->fn->body, res->ops, sizeof res->ops);
  Program *p = lower_module(m, &prog.d);
  ck_assert_ptr_nonnull(p);
  Value arg = value_from_tensor(tensor_copy(input)), out = value_none();
  int st = vm_run(p, p->codes[program_global(p, "main")], &arg, 1, &out, &prog.d, NULL);
  ck_assert_msg(st == VM_OK, "run failed:\n%s", ut_errors(&prog));
  res->n = 0;
  if (value_kind(out) == VK_TUPLE) {
    TupleObj *t = value_tuple(out);
    for (uint32_t i = 0; i < t->n && i < 8; i++) res->out[res->n++] = value_to_tensor(&t->f[i]);
  } else {
    res->out[res->n++] = value_to_tensor(&out);
  }
  /* results may borrow module constants (batch_norm's .1/.2): copy them */
  for (uint32_t i = 0; i < res->n; i++) {
    Tensor *c = tensor_copy(res->out[i]);
    tensor_release(res->out[i]);
    res->out[i] = c;
  }
  value_release(out);
  program_free(p);
  ut_unload(&prog);
}

/* Runs body with and without the passes; expects the calls `ops` after them
 * and equal results. */
static void check_fold(const char *body, const int64_t *xshape, const char *ops) {
  Tensor *x = kt_new(DTYPE(DT_FLOAT, 32), 4, xshape);
  kt_fill(x, 7, -1, 1);
  Result plain, folded;
  run_program(body, x, false, &plain);
  run_program(body, x, true, &folded);
  ck_assert_str_eq(folded.ops, ops);
  ck_assert_int_eq(plain.n, folded.n);
  for (uint32_t i = 0; i < plain.n; i++) {
    double e = kt_rel_err(folded.out[i], plain.out[i]);
    ck_assert_msg(e <= 1e-5, "output %u: relative error %g", i, e);
    tensor_release(plain.out[i]);
    tensor_release(folded.out[i]);
  }
  tensor_release(x);
  reset_consts();
}

START_TEST(conv_bn_relu) {
  int64_t w[4] = {6, 4, 3, 3}, b[3] = {6, 1, 1}, xs[4] = {1, 4, 9, 9};
  add_const(4, w, -0.5, 0.5); /* 0 */
  add_const(3, b, -0.5, 0.5); /* 1: (C,1,1) bias added before the bn */
  add_bn(6);                  /* 2..5 */
  check_fold("def @main(%x: Tensor[(1, 4, 9, 9), float32]) {\n"
             "  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1, 1, 1], channels=6, kernel_size=[3, 3]);\n"
             "  %1 = add(%0, meta[relay.Constant][1]);\n"
             "  %2 = nn.batch_norm(%1, meta[relay.Constant][2], meta[relay.Constant][3], meta[relay.Constant][4], meta[relay.Constant][5], epsilon=0.001f);\n"
             "  %3 = %2.0;\n"
             "  nn.relu(%3)\n"
             "}",
             xs, "relayc.conv2d_bias*1"); /* bias, bn, relu */
}
END_TEST

START_TEST(mobilenet_block) {
  /* 1x1 expand + bn + relu, depthwise + bn + relu, 1x1 project + bn, residual add */
  int64_t w1[4] = {12, 4, 1, 1}, wd[4] = {12, 1, 3, 3}, w2[4] = {4, 12, 1, 1}, xs[4] = {1, 4, 10, 10};
  add_const(4, w1, -0.5, 0.5); /* 0 */
  add_bn(12);                  /* 1..4 */
  add_const(4, wd, -0.5, 0.5); /* 5 */
  add_bn(12);                  /* 6..9 */
  add_const(4, w2, -0.5, 0.5); /* 10 */
  add_bn(4);                   /* 11..14 */
  check_fold("def @main(%x: Tensor[(1, 4, 10, 10), float32]) {\n"
             "  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[0, 0, 0, 0], channels=12, kernel_size=[1, 1]);\n"
             "  %1 = nn.batch_norm(%0, meta[relay.Constant][1], meta[relay.Constant][2], meta[relay.Constant][3], meta[relay.Constant][4]);\n"
             "  %2 = %1.0;\n"
             "  %3 = nn.relu(%2);\n"
             "  %4 = nn.conv2d(%3, meta[relay.Constant][5], padding=[1, 1, 1, 1], groups=12, channels=12, kernel_size=[3, 3]);\n"
             "  %5 = nn.batch_norm(%4, meta[relay.Constant][6], meta[relay.Constant][7], meta[relay.Constant][8], meta[relay.Constant][9]);\n"
             "  %6 = %5.0;\n"
             "  %7 = nn.relu(%6);\n"
             "  %8 = nn.conv2d(%7, meta[relay.Constant][10], padding=[0, 0, 0, 0], channels=4, kernel_size=[1, 1]);\n"
             "  %9 = nn.batch_norm(%8, meta[relay.Constant][11], meta[relay.Constant][12], meta[relay.Constant][13], meta[relay.Constant][14]);\n"
             "  %10 = %9.0;\n"
             "  add(%10, %x)\n"
             "}",
             xs, "relayc.conv2d_bias*2 relayc.conv2d_bias_add*1"); /* 3 bn folds, 2 relus, 1 residual */
}
END_TEST

START_TEST(resnet_v2_block) {
  /* pre-activation: bn + relu (fused into the bn), conv, residual add + relu */
  int64_t w1[4] = {4, 4, 3, 3}, xs[4] = {1, 4, 6, 6};
  add_bn(4);                   /* 0..3 */
  add_const(4, w1, -0.5, 0.5); /* 4 */
  check_fold("def @main(%x: Tensor[(1, 4, 6, 6), float32]) {\n"
             "  %0 = nn.batch_norm(%x, meta[relay.Constant][0], meta[relay.Constant][1], meta[relay.Constant][2], meta[relay.Constant][3]);\n"
             "  %1 = %0.0;\n"
             "  %2 = nn.relu(%1);\n"
             "  %3 = nn.conv2d(%2, meta[relay.Constant][4], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);\n"
             "  %4 = add(%3, %x);\n"
             "  nn.relu(%4)\n"
             "}",
             xs, "relayc.conv2d_add*1 relayc.batch_norm_relu*1"); /* bn+relu, residual, relu */
}
END_TEST

START_TEST(no_fold_when_shared) {
  int64_t w[4] = {4, 4, 1, 1}, xs[4] = {1, 4, 5, 5};
  add_const(4, w, -0.5, 0.5); /* 0 */
  add_bn(4);                  /* 1..4 */
  /* the conv result and the bn tuple both have a second use: nothing folds;
   * the relu of a shared value does not fuse either */
  check_fold("def @main(%x: Tensor[(1, 4, 5, 5), float32]) {\n"
             "  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[0, 0, 0, 0], channels=4, kernel_size=[1, 1]);\n"
             "  %1 = nn.batch_norm(%0, meta[relay.Constant][1], meta[relay.Constant][2], meta[relay.Constant][3], meta[relay.Constant][4]);\n"
             "  %2 = %1.0;\n"
             "  %3 = %1.1;\n"
             "  %4 = nn.relu(%0);\n"
             "  (%2, %3, %4)\n"
             "}",
             xs, "nn.relu*1 nn.conv2d*1 nn.batch_norm*1");
}
END_TEST

START_TEST(shared_weight_is_copied) {
  /* one weight constant used by two convs: each fold gets its own copy, so
   * the second conv still sees the original weights */
  int64_t w[4] = {4, 4, 1, 1}, xs[4] = {1, 4, 5, 5};
  add_const(4, w, -0.5, 0.5); /* 0 */
  add_bn(4);                  /* 1..4 */
  check_fold("def @main(%x: Tensor[(1, 4, 5, 5), float32]) {\n"
             "  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[0, 0, 0, 0], channels=4, kernel_size=[1, 1]);\n"
             "  %1 = nn.batch_norm(%0, meta[relay.Constant][1], meta[relay.Constant][2], meta[relay.Constant][3], meta[relay.Constant][4]);\n"
             "  %2 = %1.0;\n"
             "  %3 = nn.conv2d(%x, meta[relay.Constant][0], padding=[0, 0, 0, 0], channels=4, kernel_size=[1, 1]);\n"
             "  (%2, %3)\n"
             "}",
             xs, "nn.conv2d*1 relayc.conv2d_bias*1");
}
END_TEST

static Suite *fold_suite(void) {
  Suite *s = suite_create("conv_epilogue");
  TCase *tc = tcase_create("conv_epilogue");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, conv_bn_relu);
  tcase_add_test(tc, mobilenet_block);
  tcase_add_test(tc, resnet_v2_block);
  tcase_add_test(tc, no_fold_when_shared);
  tcase_add_test(tc, shared_weight_is_copied);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(fold_suite());
}
