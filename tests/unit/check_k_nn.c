/* tests/unit/check_k_nn.c — nn kernels (ops/kernels/k_nn.c) against plain references.
 *
 * Each reference is the spec formula (spec/ops.md §4.2, §7.4, §10–12)
 * evaluated per element in double: activations with the select rules
 * (relu(NaN) = 0, clip(NaN) = a_max), softmax/log_softmax along any axis,
 * the normalisations with biased variance, padding by explicit index
 * reflection, and resize cases whose values are known in closed form;
 * nn.cross_entropy(_with_logits) (spec/gradient.md 5.6) as the flat sum.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "tests/unit/kr_util.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"

static void expect_vals(const Tensor *t, const double *want, int64_t n, double tol) {
  ck_assert_msg(t, "kernel failed: %s", kr_err);
  ck_assert_int_eq(t->numel, n);
  for (int64_t i = 0; i < n; i++) {
    double g = tensor_get_f64(t, i);
    ck_assert_msg(g == want[i] || fabs(g - want[i]) <= tol || (isnan(g) && isnan(want[i])), "element %lld: got %.9g, want %.9g",
                  (long long)i, g, want[i]);
  }
}

/* ------------------------------------------------------------ activations */

START_TEST(relu_leaky_clip_select_rules) {
  double in[] = {-2, -0.5, 0, 0.5, 3, NAN, INFINITY, -INFINITY};
  DType dts[] = {DT_F32, DT_F64, DT_F16};
  for (int d = 0; d < 3; d++) {
    Tensor *x = kr_make(dts[d], 1, (int64_t[]){8}, in);
    Tensor *o = kr_run(OP_NN_RELU, "", &x, 1);
    expect_vals(o, (double[]){0, 0, 0, 0.5, 3, 0, INFINITY, 0}, 8, 0);
    ck_assert(dtype_eq(o->dtype, dts[d]));
    tensor_release(o);
    o = kr_run(OP_NN_LEAKY_RELU, "alpha=0.5f", &x, 1);
    expect_vals(o, (double[]){-1, -0.25, 0, 0.5, 3, NAN, INFINITY, -INFINITY}, 8, 0);
    tensor_release(o);
    o = kr_run(OP_NN_LEAKY_RELU, "", &x, 1); /* attribute default 0.25, not Python's 0.01 */
    ck_assert_double_eq(tensor_get_f64(o, 0), -0.5);
    tensor_release(o);
    o = kr_run(OP_CLIP, "a_min=-1f; a_max=1f", &x, 1);
    expect_vals(o, (double[]){-1, -0.5, 0, 0.5, 1, 1, 1, -1}, 8, 0);
    tensor_release(o);
    o = kr_run(OP_CLIP, "a_min=-inff; a_max=inff", &x, 1); /* NaN → a_max even then */
    expect_vals(o, (double[]){-2, -0.5, 0, 0.5, 3, INFINITY, INFINITY, -INFINITY}, 8, 0);
    kr_free(o, x, NULL, NULL);
  }
  /* integers: bounds truncate toward zero; ±inf saturate */
  Tensor *i = kr_make(DT_I32, 1, (int64_t[]){5}, (double[]){-7, -2, 0, 2, 7});
  Tensor *o = kr_run(OP_CLIP, "a_min=-2.7f; a_max=3.9f", &i, 1);
  expect_vals(o, (double[]){-2, -2, 0, 2, 3}, 5, 0);
  tensor_release(o);
  o = kr_run(OP_CLIP, "a_min=-inff; a_max=inff", &i, 1);
  expect_vals(o, (double[]){-7, -2, 0, 2, 7}, 5, 0);
  tensor_release(o);
  o = kr_run(OP_NN_RELU, "", &i, 1);
  expect_vals(o, (double[]){0, 0, 0, 2, 7}, 5, 0);
  kr_free(o, i, NULL, NULL);
  Tensor *u = kr_make(DT_U8, 1, (int64_t[]){3}, (double[]){0, 200, 255});
  o = kr_run(OP_CLIP, "a_min=-5f; a_max=210f", &u, 1);
  expect_vals(o, (double[]){0, 200, 210}, 3, 0);
  kr_free(o, u, NULL, NULL);
}
END_TEST

START_TEST(activations_in_place_when_dying) {
  Tensor *x = kr_make(DT_F32, 1, (int64_t[]){4}, (double[]){-1, 2, -3, 4}), *o;
  ck_assert(kr_runs_in_place(OP_NN_RELU, "", x, NULL, 0, &o));
  expect_vals(o, (double[]){0, 2, 0, 4}, 4, 0);
  tensor_release(o);
  x = kr_make(DT_F32, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
  Tensor *b = kr_make(DT_F32, 1, (int64_t[]){3}, (double[]){10, 20, 30});
  ck_assert(kr_runs_in_place(OP_NN_BIAS_ADD, "axis=-1", x, &b, 1, &o));
  expect_vals(o, (double[]){11, 22, 33, 14, 25, 36}, 6, 0);
  tensor_release(o);
  x = kr_make(DT_F32, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
  ck_assert(kr_runs_in_place(OP_NN_SOFTMAX, "axis=0", x, NULL, 0, &o));
  ck_assert_double_eq_tol(tensor_get_f64(o, 0) + tensor_get_f64(o, 3), 1, 1e-6);
  kr_free(o, b, NULL, NULL);
  /* a shared input is never overwritten */
  x = kr_make(DT_F32, 1, (int64_t[]){2}, (double[]){-1, 1});
  o = kr_run(OP_NN_RELU, "", &x, 1);
  ck_assert(o->data != x->data && tensor_get_f64(x, 0) == -1);
  kr_free(o, x, NULL, NULL);
}
END_TEST

/* ------------------------------------------------------------ bias_add, prelu, dropout */

START_TEST(bias_add_and_prelu) {
  Tensor *x = kr_iota(DT_F32, 4, (int64_t[]){2, 3, 2, 2});
  kt_fill(x, 3, -2, 2);
  Tensor *b = kr_make(DT_F32, 1, (int64_t[]){3}, (double[]){0.5, -1, 2});
  Tensor *ins[2] = {x, b};
  for (int op = 0; op < 2; op++) {
    Tensor *o = kr_run(op ? OP_NN_PRELU : OP_NN_BIAS_ADD, "axis=1", ins, 2);
    ck_assert_msg(o, "%s", kr_err);
    for (int64_t e = 0; e < x->numel; e++) {
      int64_t ch = (e / 4) % 3;
      double v = tensor_get_f64(x, e), bb = tensor_get_f64(b, ch);
      double want = op ? (v > 0 ? v : v * bb) : v + bb;
      ck_assert_double_eq_tol(tensor_get_f64(o, e), want, 1e-6);
    }
    tensor_release(o);
  }
  ck_assert(!kr_run(OP_NN_BIAS_ADD, "axis=-1", ins, 2)); /* bias length 3 ≠ 2 */
  { /* channels innermost (dense's bias): runs of rows, chunks split mid-row */
    Tensor *xr = kr_iota(DT_F32, 2, (int64_t[]){901, 37}), *br = kr_iota(DT_F32, 1, (int64_t[]){37});
    kt_fill(xr, 5, -2, 2);
    kt_fill(br, 6, -1, 1);
    Tensor *rins[2] = {xr, br};
    for (int op = 0; op < 2; op++) {
      Tensor *o = kr_run(op ? OP_NN_PRELU : OP_NN_BIAS_ADD, "axis=-1", rins, 2);
      ck_assert_msg(o, "%s", kr_err);
      for (int64_t e = 0; e < xr->numel; e++) {
        double v = tensor_get_f64(xr, e), bb = tensor_get_f64(br, e % 37);
        double want = op ? (v > 0 ? v : (double)((float)v * (float)bb)) : (double)((float)v + (float)bb);
        ck_assert_double_eq_tol(tensor_get_f64(o, e), want, 1e-6);
      }
      tensor_release(o);
    }
    kr_free(xr, br, NULL, NULL);
  }
  ck_assert(!kr_run(OP_NN_BIAS_ADD, "axis=4", ins, 2));
  Tensor *bi = kr_make(DT_I32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
  ins[1] = bi;
  ck_assert(!kr_run(OP_NN_BIAS_ADD, "axis=1", ins, 2)); /* dtype mismatch */
  kr_free(x, b, bi, NULL);
  /* int8 wraps; float16 bias */
  Tensor *xi = kr_make(DT_I8, 2, (int64_t[]){1, 2}, (double[]){120, -120});
  Tensor *bi8 = kr_make(DT_I8, 1, (int64_t[]){2}, (double[]){10, -10});
  Tensor *ii[2] = {xi, bi8};
  Tensor *o = kr_run(OP_NN_BIAS_ADD, "axis=-1", ii, 2);
  expect_vals(o, (double[]){-126, 126}, 2, 0);
  tensor_release(o);
  Tensor *xh = kr_make(DT_F16, 2, (int64_t[]){2, 2}, (double[]){1, -2, 3, -4});
  Tensor *bh = kr_make(DT_F16, 1, (int64_t[]){2}, (double[]){0.25, 0.5});
  Tensor *hh[2] = {xh, bh};
  o = kr_run(OP_NN_PRELU, "axis=0", hh, 2);
  ck_assert(o && dtype_eq(o->dtype, DT_F16));
  expect_vals(o, (double[]){1, -0.5, 3, -2}, 4, 0);
  kr_free(o, xi, bi8, xh);
  tensor_release(bh);
}
END_TEST

START_TEST(dropout_is_identity_in_inference) {
  Tensor *x = kr_make(DT_F32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
  uint32_t n = 0;
  Tensor **t = kr_run_tuple(OP_NN_DROPOUT, "rate=0.3f", &x, 1, &n);
  ck_assert(t && n == 2 && tensor_equal(t[0], x));
  expect_vals(t[1], (double[]){1, 1, 1}, 3, 0);
  kr_free(t[0], t[1], x, NULL);
  mem_free(t);
}
END_TEST

/* ------------------------------------------------------------ softmax */

static void ref_softmax(const Tensor *x, int axis, bool log_, Tensor *o) {
  int64_t outer = 1, n = x->shape[axis], inner = 1;
  for (int i = 0; i < axis; i++) outer *= x->shape[i];
  for (int i = axis + 1; i < x->ndim; i++) inner *= x->shape[i];
  for (int64_t a = 0; a < outer; a++)
    for (int64_t i = 0; i < inner; i++) {
      double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < n; k++) m = fmax(m, tensor_get_f64(x, (a * n + k) * inner + i));
      for (int64_t k = 0; k < n; k++) s += exp(tensor_get_f64(x, (a * n + k) * inner + i) - m);
      for (int64_t k = 0; k < n; k++) {
        double v = tensor_get_f64(x, (a * n + k) * inner + i) - m;
        tensor_set_f64(o, (a * n + k) * inner + i, log_ ? v - log(s) : exp(v) / s);
      }
    }
}

START_TEST(softmax_any_axis) {
  int32_t ops[] = {OP_NN_SOFTMAX, OP_NN_LOG_SOFTMAX, OP_NN_FAST_SOFTMAX};
  DType dts[] = {DT_F32, DT_F64, DT_F16};
  double tols[] = {1e-6, 1e-13, 2e-3};
  for (int d = 0; d < 3; d++) {
    Tensor *x = kr_iota(dts[d], 3, (int64_t[]){3, 70, 5});
    kt_fill(x, 11, -8, 8);
    for (int k = 0; k < 3; k++)
      for (int axis = -3; axis < 3; axis++) {
        char attrs[32];
        snprintf(attrs, sizeof attrs, "axis=%d", axis);
        Tensor *o = kr_run(ops[k], attrs, &x, 1), *r = tensor_new(DT_F64, 3, x->shape);
        ref_softmax(x, axis < 0 ? axis + 3 : axis, ops[k] == OP_NN_LOG_SOFTMAX, r);
        double err = kt_rel_err(o, r);
        ck_assert_msg(err < tols[d], "%s %s bits %d: err %g", op_get(ops[k])->name, attrs, dts[d].bits, err);
        kr_free(o, r, NULL, NULL);
      }
    ck_assert(!kr_run(OP_NN_SOFTMAX, "axis=3", &x, 1));
    tensor_release(x);
  }
  /* big enough to be split across threads: rows and column tiles */
  Tensor *big = kr_iota(DT_F32, 3, (int64_t[]){40, 300, 70});
  kt_fill(big, 17, -5, 5);
  for (int axis = 1; axis <= 2; axis++) {
    Tensor *o = kr_run(OP_NN_SOFTMAX, axis == 1 ? "axis=1" : "axis=2", &big, 1), *r = tensor_new(DT_F64, 3, big->shape);
    ref_softmax(big, axis, false, r);
    ck_assert_msg(kt_rel_err(o, r) < 1e-6, "large softmax axis %d", axis);
    kr_free(o, r, NULL, NULL);
  }
  Tensor *rl = kr_run(OP_NN_RELU, "", &big, 1);
  for (int64_t e = 0; e < big->numel; e += 97) ck_assert_double_eq(tensor_get_f64(rl, e), fmax(tensor_get_f64(big, e), 0));
  kr_free(rl, big, NULL, NULL);
  /* large inputs stay finite (max subtracted); an int tensor is rejected */
  Tensor *x = kr_make(DT_F32, 1, (int64_t[]){3}, (double[]){1000, 1000, -1000});
  Tensor *o = kr_run(OP_NN_SOFTMAX, "", &x, 1);
  expect_vals(o, (double[]){0.5, 0.5, 0}, 3, 1e-7);
  tensor_release(o);
  Tensor *i = kr_iota(DT_I32, 1, (int64_t[]){3});
  ck_assert(!kr_run(OP_NN_SOFTMAX, "", &i, 1));
  kr_free(x, i, NULL, NULL);
}
END_TEST

/* nn.fast_softmax exponentiates with TVM's fast_exp: e^(-88.2) is 0 there
 * (2^-127 is built as zero exponent bits), 4.9e-39 with the exact exp. */
START_TEST(fast_softmax_uses_fast_exp) {
  Tensor *x = kr_make(DT_F32, 1, (int64_t[]){2}, (double[]){0, -88.2});
  Tensor *f = kr_run(OP_NN_FAST_SOFTMAX, "", &x, 1), *e = kr_run(OP_NN_SOFTMAX, "", &x, 1);
  ck_assert(f && e);
  ck_assert(tensor_get_f64(f, 1) == 0 && tensor_get_f64(e, 1) > 0);
  ck_assert(tensor_get_f64(f, 0) == 1);
  kr_free(x, f, e, NULL);
  Tensor *c = kr_make(DT_F32, 2, (int64_t[]){2, 1}, (double[]){0, -88.2}); /* the column path */
  f = kr_run(OP_NN_FAST_SOFTMAX, "axis=0", &c, 1);
  ck_assert(f && tensor_get_f64(f, 1) == 0);
  kr_free(c, f, NULL, NULL);
}
END_TEST

/* ------------------------------------------------------------ losses */

static double ref_xent(const Tensor *x, const Tensor *y, bool take_log) {
  double s = 0;
  for (int64_t i = 0; i < x->numel; i++) {
    double a = tensor_get_f64(x, i);
    s += (take_log ? log(a) : a) * tensor_get_f64(y, i);
  }
  return -s / (double)x->shape[0];
}

START_TEST(cross_entropy_reference) {
  DType dts[] = {DT_F32, DT_F64, DT_F16};
  double tols[] = {1e-6, 1e-13, 2e-3};
  for (int d = 0; d < 3; d++) {
    Tensor *x = kr_iota(dts[d], 2, (int64_t[]){7, 301}), *y = kr_iota(dts[d], 2, (int64_t[]){7, 301});
    kt_fill(x, 5, 0.01, 1);
    kt_fill(y, 6, 0, 1);
    Tensor *ins[2] = {x, y};
    for (int k = 0; k < 2; k++) {
      int32_t op = k ? OP_NN_CROSS_ENTROPY_WITH_LOGITS : OP_NN_CROSS_ENTROPY;
      Tensor *o = kr_run(op, "", ins, 2);
      ck_assert_msg(o && o->ndim == 0 && dtype_eq(o->dtype, dts[d]), "%s: %s", op_get(op)->name, kr_err);
      double want = ref_xent(x, y, !k), got = tensor_get_f64(o, 0);
      ck_assert_msg(fabs(got - want) <= tols[d] * fabs(want), "%s bits %d: %.9g vs %.9g", op_get(op)->name,
                    dts[d].bits, got, want);
      tensor_release(o);
    }
    kr_free(x, y, NULL, NULL);
  }
  Tensor *a = kr_iota(DT_F32, 2, (int64_t[]){2, 3}), *b = kr_iota(DT_F32, 2, (int64_t[]){3, 2});
  Tensor *i = kr_iota(DT_I32, 2, (int64_t[]){2, 3});
  Tensor *ins[2] = {a, b};
  ck_assert(!kr_run(OP_NN_CROSS_ENTROPY, "", ins, 2));
  ins[1] = i;
  ck_assert(!kr_run(OP_NN_CROSS_ENTROPY_WITH_LOGITS, "", ins, 2));
  kr_free(a, b, i, NULL);
}
END_TEST

/* ------------------------------------------------------------ normalisations */

START_TEST(layer_norm_reference) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 3, 8});
  kt_fill(x, 5, -3, 3);
  for (int axis = 1; axis <= 2; axis++) {
    int64_t n = x->shape[axis];
    Tensor *g = kr_iota(DT_F32, 1, &n), *b = kr_iota(DT_F32, 1, &n);
    kt_fill(g, 1, 0.5, 1.5);
    kt_fill(b, 2, -1, 1);
    Tensor *ins[3] = {x, g, b};
    for (int flags = 0; flags < 4; flags++) {
      char attrs[96];
      snprintf(attrs, sizeof attrs, "axis=%d; epsilon=0.001f; center=%s; scale=%s", axis == 2 ? -1 : 1,
               flags & 1 ? "True" : "False", flags & 2 ? "True" : "False");
      Tensor *o = kr_run(OP_NN_LAYER_NORM, attrs, ins, 3);
      ck_assert_msg(o, "%s", kr_err);
      int64_t outer = axis == 1 ? 2 : 6, inner = axis == 1 ? 8 : 1;
      for (int64_t a = 0; a < outer; a++)
        for (int64_t i = 0; i < inner; i++) {
          double s = 0, v = 0;
          for (int64_t k = 0; k < n; k++) s += tensor_get_f64(x, (a * n + k) * inner + i);
          double mu = s / n;
          for (int64_t k = 0; k < n; k++) v += pow(tensor_get_f64(x, (a * n + k) * inner + i) - mu, 2);
          for (int64_t k = 0; k < n; k++) {
            double y = (tensor_get_f64(x, (a * n + k) * inner + i) - mu) / sqrt(v / n + 0.001);
            if (flags & 2) y *= tensor_get_f64(g, k);
            if (flags & 1) y += tensor_get_f64(b, k);
            ck_assert_double_eq_tol(tensor_get_f64(o, (a * n + k) * inner + i), y, 1e-5);
          }
        }
      tensor_release(o);
    }
    ck_assert(!kr_run(OP_NN_LAYER_NORM, axis == 1 ? "axis=2" : "axis=1", ins, 3)); /* gamma length */
    kr_free(g, b, NULL, NULL);
  }
  tensor_release(x);
}
END_TEST

/* group statistics by brute force: which group an element's channel falls in */
static void ref_group_norm(const Tensor *x, int64_t G, const Tensor *g, const Tensor *b, double eps, Tensor *o) {
  int64_t N = x->shape[0], C = x->shape[1], S = x->numel / (N * C), cg = C / G;
  for (int64_t n = 0; n < N; n++)
    for (int64_t grp = 0; grp < G; grp++) {
      double s = 0, v = 0, cnt = 0;
      for (int64_t e = 0; e < x->numel; e++) {
        int64_t en = e / (C * S), ec = (e / S) % C;
        if (en == n && ec / cg == grp) {
          s += tensor_get_f64(x, e);
          cnt++;
        }
      }
      double mu = s / cnt;
      for (int64_t e = 0; e < x->numel; e++) {
        int64_t en = e / (C * S), ec = (e / S) % C;
        if (en == n && ec / cg == grp) v += pow(tensor_get_f64(x, e) - mu, 2);
      }
      for (int64_t e = 0; e < x->numel; e++) {
        int64_t en = e / (C * S), ec = (e / S) % C;
        if (en == n && ec / cg == grp)
          tensor_set_f64(o, e, (tensor_get_f64(x, e) - mu) / sqrt(v / cnt + eps) * tensor_get_f64(g, ec) + tensor_get_f64(b, ec));
      }
    }
}

START_TEST(group_and_instance_norm) {
  Tensor *x = kr_iota(DT_F64, 4, (int64_t[]){2, 6, 3, 2});
  kt_fill(x, 4, -2, 2);
  Tensor *g = kr_iota(DT_F64, 1, (int64_t[]){6}), *b = kr_iota(DT_F64, 1, (int64_t[]){6});
  kt_fill(g, 6, 0.5, 2);
  kt_fill(b, 7, -1, 1);
  Tensor *ins[3] = {x, g, b};
  int64_t groups[] = {1, 2, 3, 6};
  for (int k = 0; k < 4; k++) {
    char attrs[64];
    snprintf(attrs, sizeof attrs, "num_groups=%lld", (long long)groups[k]);
    Tensor *o = kr_run(OP_NN_GROUP_NORM, attrs, ins, 3), *r = tensor_new(DT_F64, 4, x->shape);
    ref_group_norm(x, groups[k], g, b, 1e-5, r);
    ck_assert_msg(o && kt_rel_err(o, r) < 1e-6, "group_norm %s: %s", attrs, kr_err);
    kr_free(o, r, NULL, NULL);
  }
  Tensor *o = kr_run(OP_NN_INSTANCE_NORM, "", ins, 3), *r = tensor_new(DT_F64, 4, x->shape);
  ref_group_norm(x, 6, g, b, 1e-5, r);
  ck_assert_msg(o && kt_rel_err(o, r) < 1e-6, "instance_norm: %s", kr_err);
  kr_free(o, r, NULL, NULL);
  ck_assert(!kr_run(OP_NN_GROUP_NORM, "num_groups=4", ins, 3));
  ck_assert(!kr_run(OP_NN_GROUP_NORM, "num_groups=0", ins, 3));
  kr_free(x, g, b, NULL);
}
END_TEST

START_TEST(l2_normalize_and_lrn) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 3, 4});
  kt_fill(x, 8, -1, 1);
  Tensor *o = kr_run(OP_NN_L2_NORMALIZE, "eps=0.001f; axis=[1, 2]", &x, 1);
  ck_assert_msg(o, "%s", kr_err);
  for (int a = 0; a < 2; a++) {
    double s = 0;
    for (int e = 0; e < 12; e++) s += pow(tensor_get_f64(x, a * 12 + e), 2);
    for (int e = 0; e < 12; e++)
      ck_assert_double_eq_tol(tensor_get_f64(o, a * 12 + e), tensor_get_f64(x, a * 12 + e) / sqrt(fmax(s, 0.001)), 1e-6);
  }
  tensor_release(o);
  Tensor *z = kr_make(DT_F32, 1, (int64_t[]){2}, (double[]){0, 0.01});
  o = kr_run(OP_NN_L2_NORMALIZE, "eps=1f; axis=[0]", &z, 1); /* eps dominates */
  expect_vals(o, (double[]){0, 0.01}, 2, 1e-9);
  kr_free(o, z, NULL, NULL);
  /* lrn over axis 1 of (1, 5, 1, 2), size 3 */
  Tensor *l = kr_iota(DT_F32, 4, (int64_t[]){1, 5, 1, 2});
  kt_fill(l, 12, -2, 2);
  o = kr_run(OP_NN_LRN, "size=3; axis=1; bias=1f; alpha=0.5f; beta=0.75f", &l, 1);
  ck_assert_msg(o, "%s", kr_err);
  for (int ch = 0; ch < 5; ch++)
    for (int i = 0; i < 2; i++) {
      double s = 0;
      for (int k = ch - 1; k <= ch + 1; k++)
        if (k >= 0 && k < 5) s += pow(tensor_get_f64(l, k * 2 + i), 2);
      ck_assert_double_eq_tol(tensor_get_f64(o, ch * 2 + i), tensor_get_f64(l, ch * 2 + i) / pow(1 + 0.5 * s / 3, 0.75), 1e-6);
    }
  kr_free(o, l, x, NULL);
}
END_TEST

/* ------------------------------------------------------------ padding */

/* numpy-style source index, by walking back and forth one step at a time */
static int64_t ref_src(int64_t i, int64_t n, int mode) { /* 0 const, 1 edge, 2 reflect, 3 symmetric */
  if (i >= 0 && i < n) return i;
  if (mode == 0) return -1;
  if (mode == 1) return i < 0 ? 0 : n - 1;
  int64_t pos = 0, dir = 1, steps = i < 0 ? -i : i;
  if (i < 0) dir = -1;
  else pos = 0;
  /* start at 0 moving `dir`, bounce at the borders */
  for (int64_t s = 0; s < steps; s++) {
    int64_t next = pos + dir;
    if (mode == 2) {
      if (next < 0 || next >= n) {
        dir = -dir;
        next = n == 1 ? 0 : pos + dir;
      }
    } else if (next < 0 || next >= n) {
      dir = -dir;
      next = pos; /* symmetric repeats the border */
    }
    pos = next;
  }
  return pos;
}

static void check_pad(DType dt, int mode, const char *attrs, int32_t op, const int64_t (*pw)[2]) {
  Tensor *x = kr_iota(dt, 3, (int64_t[]){2, 3, 4});
  kt_fill(x, 13, -50, 50);
  Tensor *pv = kr_scalar(DT_F32, 7.9);
  Tensor *ins[2] = {x, pv};
  Tensor *o = kr_run(op, attrs, ins, op == OP_NN_PAD ? 2 : 1);
  ck_assert_msg(o, "%s: %s", attrs, kr_err);
  int64_t os[3];
  for (int d = 0; d < 3; d++) os[d] = x->shape[d] + pw[d][0] + pw[d][1];
  ck_assert(kr_shape_is(o, 3, os));
  double fill = dtype_is_float(dt) ? (double)(float)7.9 : 7;
  if (dtype_eq(dt, DT_F16)) fill = tensor_get_f64(kr_run(OP_CAST, "dtype=\"float16\"", &pv, 1), 0);
  for (int64_t e = 0; e < o->numel; e++) {
    int64_t c[3] = {e / (os[1] * os[2]), (e / os[2]) % os[1], e % os[2]}, src = 0;
    bool inside = true;
    for (int d = 0; d < 3; d++) {
      int64_t s = ref_src(c[d] - pw[d][0], x->shape[d], mode);
      if (s < 0) inside = false;
      src = src * x->shape[d] + (s < 0 ? 0 : s);
    }
    double want = inside ? tensor_get_f64(x, src) : fill;
    ck_assert_msg(tensor_get_f64(o, e) == want, "%s at %lld: got %g want %g", attrs, (long long)e, tensor_get_f64(o, e), want);
  }
  kr_free(x, pv, o, NULL);
}

START_TEST(pad_modes_all_sides) {
  static const int64_t pw1[3][2] = {{1, 0}, {0, 2}, {3, 1}}, pw2[3][2] = {{1, 1}, {2, 2}, {3, 3}};
  DType dts[] = {DT_F32, DT_I32, DT_I8, DT_F64};
  for (int d = 0; d < 4; d++) {
    check_pad(dts[d], 0, "pad_width=[[1, 0], [0, 2], [3, 1]]", OP_NN_PAD, pw1);
    check_pad(dts[d], 1, "pad_width=[[1, 0], [0, 2], [3, 1]]; pad_mode=\"edge\"", OP_NN_PAD, pw1);
    check_pad(dts[d], 2, "pad_width=[[1, 0], [0, 2], [3, 1]]; pad_mode=\"reflect\"", OP_NN_PAD, pw1);
    check_pad(dts[d], 2, "pad_width=[[1, 1], [2, 2], [3, 3]]; pad_mode=\"reflect\"", OP_NN_PAD, pw2);
    check_pad(dts[d], 3, "mode=\"SYMMETRIC\"; pad_width=[[1, 1], [2, 2], [3, 3]]", OP_NN_MIRROR_PAD, pw2);
    check_pad(dts[d], 2, "mode=\"REFLECT\"; pad_width=[[1, 0], [0, 2], [3, 1]]", OP_NN_MIRROR_PAD, pw1);
  }
  Tensor *x = kr_iota(DT_F32, 2, (int64_t[]){2, 2}), *pv = kr_scalar(DT_F32, 0);
  Tensor *ins[2] = {x, pv};
  ck_assert(!kr_run(OP_NN_PAD, "pad_width=[[1, 1]]", ins, 2));
  Tensor *crop = kr_run(OP_NN_PAD, "pad_width=[[1, 1], [-1, 0]]", ins, 2); /* negative = crop */
  ck_assert_ptr_nonnull(crop);
  ck_assert_int_eq(crop->shape[0], 4);
  ck_assert_int_eq(crop->shape[1], 1);
  const float want[4] = {0, 1, 3, 0}; /* iota [[0,1],[2,3]] without column 0, one zero row each side */
  for (int i = 0; i < 4; i++) ck_assert_float_eq(((float *)crop->data)[i], want[i]);
  tensor_release(crop);
  ck_assert(!kr_run(OP_NN_PAD, "pad_width=[[1, 1], [-3, 0]]", ins, 2));
  ck_assert(!kr_run(OP_NN_MIRROR_PAD, "mode=\"SYMMETRIC\"; pad_width=[[0, 0], [-1, 0]]", ins, 1));
  ck_assert(!kr_run(OP_NN_PAD, "pad_width=[[1, 1], [1, 0]]; pad_mode=\"wrap\"", ins, 2));
  ck_assert(!kr_run(OP_NN_MIRROR_PAD, "mode=\"EDGE\"; pad_width=[[1, 1], [1, 0]]", ins, 1));
  kr_free(x, pv, NULL, NULL);
}
END_TEST

/* ------------------------------------------------------------ resize */

START_TEST(resize_closed_forms) {
  Tensor *x = kr_make(DT_F32, 4, (int64_t[]){1, 1, 2, 2}, (double[]){0, 1, 2, 3});
  /* half_pixel bilinear 2 → 4: taps at -0.25, 0.25, 0.75, 1.25 (clamped) */
  Tensor *o = kr_run(OP_IMAGE_RESIZE2D, "size=[1, 4]", &x, 1);
  ck_assert_msg(kr_shape_is(o, 4, (int64_t[]){1, 1, 1, 4}), "%s", kr_err);
  expect_vals(o, (double[]){1, 1.25, 1.75, 2}, 4, 1e-6); /* row source y = 0.5 → average of the rows */
  tensor_release(o);
  o = kr_run(OP_IMAGE_RESIZE2D, "size=[3, 3]; coordinate_transformation_mode=\"align_corners\"", &x, 1);
  expect_vals(o, (double[]){0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}, 9, 1e-6);
  tensor_release(o);
  o = kr_run(OP_IMAGE_RESIZE2D, "size=[4, 4]; method=\"nearest_neighbor\"; coordinate_transformation_mode=\"asymmetric\"; rounding_method=\"floor\"", &x, 1);
  expect_vals(o, (double[]){0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3}, 16, 0);
  tensor_release(o);
  /* nearest "round" is half away from zero: asymmetric 2 → 3 sources 0, 0.667, 1.333 */
  o = kr_run(OP_IMAGE_RESIZE2D, "size=[1, 3]; method=\"nearest_neighbor\"; coordinate_transformation_mode=\"asymmetric\"", &x, 1);
  expect_vals(o, (double[]){0, 1, 1}, 3, 0);
  tensor_release(o);
  /* cubic keeps a constant image constant (weights sum to 1), with and without exclusion */
  Tensor *k = kr_make(DT_F32, 4, (int64_t[]){1, 1, 3, 3}, (double[]){5, 5, 5, 5, 5, 5, 5, 5, 5});
  o = kr_run(OP_IMAGE_RESIZE2D, "size=[5, 4]; method=\"cubic\"", &k, 1);
  for (int64_t i = 0; i < o->numel; i++) ck_assert_double_eq_tol(tensor_get_f64(o, i), 5, 1e-5);
  tensor_release(o);
  o = kr_run(OP_IMAGE_RESIZE2D, "size=[5, 4]; method=\"cubic\"; cubic_exclude=1; cubic_alpha=-0.75f", &k, 1);
  for (int64_t i = 0; i < o->numel; i++) ck_assert_double_eq_tol(tensor_get_f64(o, i), 5, 1e-5);
  tensor_release(o);
  /* cubic on a linear ramp at an interior point reproduces the ramp */
  Tensor *ramp = kr_iota(DT_F64, 4, (int64_t[]){1, 1, 1, 8});
  o = kr_run(OP_IMAGE_RESIZE2D, "size=[1, 16]; method=\"cubic\"", &ramp, 1);
  ck_assert_double_eq_tol(tensor_get_f64(o, 7), 7 * 0.5 + 0.25 - 0.5, 1e-9); /* (7 + 0.5)·0.5 − 0.5 */
  tensor_release(o);
  /* NHWC layout and an integer output dtype (truncation) */
  Tensor *h = kr_make(DT_F32, 4, (int64_t[]){1, 2, 1, 1}, (double[]){0, 3});
  o = kr_run(OP_IMAGE_RESIZE2D, "size=[3, 1]; layout=\"NHWC\"; coordinate_transformation_mode=\"align_corners\"; out_dtype=\"int32\"", &h, 1);
  ck_assert(o && o->dtype.code == DT_INT);
  expect_vals(o, (double[]){0, 1, 3}, 3, 0); /* 1.5 truncates to 1 */
  tensor_release(o);
  /* tf_crop_and_resize: outside the roi box → extrapolation_value */
  o = kr_run(OP_IMAGE_RESIZE2D, "size=[1, 2]; roi=[0f, -1f, 1f, 1f]; coordinate_transformation_mode=\"tf_crop_and_resize\"; extrapolation_value=-9f", &x, 1);
  expect_vals(o, (double[]){-9, 2}, 2, 1e-6); /* x = -1 is outside; x = 1 averages rows 0 and 1 */
  tensor_release(o);
  ck_assert(!kr_run(OP_IMAGE_RESIZE2D, "size=[2, 2]; method=\"area\"", &x, 1));
  ck_assert(!kr_run(OP_IMAGE_RESIZE2D, "size=[2, 2]; layout=\"NCH\"", &x, 1));
  kr_free(x, k, ramp, h);
}
END_TEST

START_TEST(upsampling_sizes_and_values) {
  Tensor *x = kr_make(DT_F32, 4, (int64_t[]){1, 1, 2, 2}, (double[]){0, 1, 2, 3});
  Tensor *o = kr_run(OP_NN_UPSAMPLING, "scale_h=2f; scale_w=2f", &x, 1);
  ck_assert_msg(kr_shape_is(o, 4, (int64_t[]){1, 1, 4, 4}), "%s", kr_err);
  expect_vals(o, (double[]){0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3}, 16, 0);
  tensor_release(o);
  o = kr_run(OP_NN_UPSAMPLING, "scale_h=1.25f; scale_w=0.75f", &x, 1); /* 2.5 → 2 (half to even), 1.5 → 2 */
  ck_assert(kr_shape_is(o, 4, (int64_t[]){1, 1, 2, 2}));
  tensor_release(o);
  o = kr_run(OP_NN_UPSAMPLING, "scale_h=1.5f; scale_w=1.5f; method=\"bilinear\"; align_corners=True", &x, 1);
  ck_assert(kr_shape_is(o, 4, (int64_t[]){1, 1, 3, 3}));
  expect_vals(o, (double[]){0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}, 9, 1e-6);
  tensor_release(o);
  Tensor *i8 = kr_make(DT_I8, 4, (int64_t[]){1, 2, 1, 1}, (double[]){-3, 4});
  o = kr_run(OP_NN_UPSAMPLING, "scale_h=3f; scale_w=1f", &i8, 1);
  ck_assert(kr_shape_is(o, 4, (int64_t[]){1, 2, 3, 1}) && o->dtype.bits == 8);
  expect_vals(o, (double[]){-3, -3, -3, 4, 4, 4}, 6, 0);
  ck_assert(!kr_run(OP_NN_UPSAMPLING, "scale_h=2f; scale_w=2f; method=\"trilinear\"", &x, 1));
  kr_free(x, o, i8, NULL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("k_nn");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, relu_leaky_clip_select_rules);
  tcase_add_test(t, activations_in_place_when_dying);
  tcase_add_test(t, bias_add_and_prelu);
  tcase_add_test(t, dropout_is_identity_in_inference);
  tcase_add_test(t, softmax_any_axis);
  tcase_add_test(t, fast_softmax_uses_fast_exp);
  tcase_add_test(t, cross_entropy_reference);
  tcase_add_test(t, layer_norm_reference);
  tcase_add_test(t, group_and_instance_norm);
  tcase_add_test(t, l2_normalize_and_lrn);
  tcase_add_test(t, pad_modes_all_sides);
  tcase_add_test(t, resize_closed_forms);
  tcase_add_test(t, upsampling_sizes_and_values);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  return unit_run(suite());
}
