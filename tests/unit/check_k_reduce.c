/* tests/unit/check_k_reduce.c — reductions (ops/kernels/k_reduce.c) against a plain
 * reference: one pass over the input in row-major order, each element
 * accumulated into its output cell (keepdims strides), so the arg-reductions'
 * flat index is the element's rank among its cell's elements.
 *
 * Covers every op over many axis sets (None, negative, non-adjacent,
 * exclude, keepdims), float32/float64/float16 and integer dtypes, integer
 * wrap-around and truncating mean, argmax ties (first / select_last_index),
 * empty reductions and the error paths (spec/ops.md §5); collapse_sum_like /
 * collapse_sum_to (spec/gradient.md 5.1-5.2) against the same reference with
 * the axes the target broadcasts along, their identity and view cases.
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

#define MAXR 8

/* Reference: op over axes (mask), result with keepdims shape flattened. */
static Tensor *ref_reduce(const Tensor *x, int32_t op, const bool *red, bool keepdims, bool last) {
  int32_t nd = x->ndim, ond = 0;
  int64_t oshape[MAXR], kst[MAXR], s = 1;
  for (int32_t i = nd; i-- > 0;) {
    kst[i] = red[i] ? 0 : s;
    if (!red[i]) s *= x->shape[i];
  }
  int64_t on = s;
  for (int32_t i = 0; i < nd; i++)
    if (!red[i] || keepdims) oshape[ond++] = red[i] ? 1 : x->shape[i];
  bool fl = dtype_is_float(x->dtype);
  double *acc = calloc((size_t)on + 1, sizeof *acc);
  uint64_t *iacc = calloc((size_t)on + 1, sizeof *iacc);
  int64_t *best_i = calloc((size_t)on + 1, sizeof *best_i), *arg = calloc((size_t)on + 1, sizeof *arg),
          *cnt = calloc((size_t)on + 1, sizeof *cnt);
  int64_t nred = 1;
  for (int32_t i = 0; i < nd; i++)
    if (red[i]) nred *= x->shape[i];
  for (int64_t o = 0; o < on; o++) {
    switch (op) {
    case OP_PROD: acc[o] = 1; iacc[o] = 1; break;
    case OP_MAX: case OP_ARGMAX: acc[o] = x->dtype.bits == 64 ? -DBL_MAX : x->dtype.bits == 16 ? -65504 : -FLT_MAX;
      best_i[o] = x->dtype.code == DT_UINT ? 0 : INT64_MIN >> (64 - x->dtype.bits); break;
    case OP_MIN: case OP_ARGMIN: acc[o] = x->dtype.bits == 64 ? DBL_MAX : x->dtype.bits == 16 ? 65504 : FLT_MAX;
      best_i[o] = x->dtype.code == DT_UINT ? (int64_t)((1ull << x->dtype.bits) - 1) : INT64_MAX >> (64 - x->dtype.bits); break;
    case OP_ALL: iacc[o] = 1; break;
    default: break;
    }
  }
  int64_t idx[MAXR] = {0}, k = 0;
  for (int64_t e = 0; e < x->numel; e++) {
    double v = tensor_get_f64(x, e);
    int64_t iv = tensor_get_i64(x, e);
    switch (op) {
    case OP_SUM: case OP_MEAN: acc[k] += v; iacc[k] += (uint64_t)iv; break;
    case OP_PROD: acc[k] *= v; iacc[k] *= (uint64_t)iv; break;
    case OP_MAX: acc[k] = acc[k] > v ? acc[k] : v; best_i[k] = best_i[k] > iv ? best_i[k] : iv; break;
    case OP_MIN: acc[k] = acc[k] < v ? acc[k] : v; best_i[k] = best_i[k] < iv ? best_i[k] : iv; break;
    case OP_ALL: iacc[k] &= v != 0; break;
    case OP_ANY: iacc[k] |= v != 0; break;
    case OP_ARGMAX:
      if (fl ? (v > acc[k] || (last && v == acc[k])) : (iv > best_i[k] || (last && iv == best_i[k]))) {
        acc[k] = v;
        best_i[k] = iv;
        arg[k] = cnt[k];
      }
      break;
    case OP_ARGMIN:
      if (fl ? (v < acc[k] || (last && v == acc[k])) : (iv < best_i[k] || (last && iv == best_i[k]))) {
        acc[k] = v;
        best_i[k] = iv;
        arg[k] = cnt[k];
      }
      break;
    }
    cnt[k]++;
    for (int32_t d = nd; d-- > 0;) {
      k += kst[d];
      if (++idx[d] < x->shape[d]) break;
      k -= kst[d] * x->shape[d];
      idx[d] = 0;
    }
  }
  bool arg_op = op == OP_ARGMAX || op == OP_ARGMIN;
  Tensor *o = tensor_new_zeros(arg_op ? DT_I32 : x->dtype, ond, oshape);
  for (int64_t i = 0; i < on; i++) {
    if (arg_op) tensor_set_i64(o, i, arg[i]);
    else if (op == OP_ALL || op == OP_ANY) tensor_set_i64(o, i, (int64_t)iacc[i]);
    else if (fl) tensor_set_f64(o, i, op == OP_MEAN ? acc[i] / (double)nred : acc[i]);
    else if (op == OP_MAX || op == OP_MIN) tensor_set_i64(o, i, best_i[i]);
    else tensor_set_i64(o, i, (int64_t)iacc[i]); /* mean on ints tested separately */
  }
  free(acc);
  free(iacc);
  free(best_i);
  free(arg);
  free(cnt);
  return o;
}

typedef struct AxisCase {
  const char *attr;
  bool red[4];
} AxisCase;

static const AxisCase CASES[] = {
    {"", {1, 1, 1, 1}},
    {"axis=[]", {1, 1, 1, 1}},
    {"axis=[1]", {0, 1, 0, 0}},
    {"axis=[-1]", {0, 0, 0, 1}},
    {"axis=[0, 2]", {1, 0, 1, 0}},
    {"axis=[1, 2, 3]", {0, 1, 1, 1}},
    {"axis=[3, 0]", {1, 0, 0, 1}},
    {"axis=[1]; exclude=True", {1, 0, 1, 1}},
    {"axis=[0, -1]; exclude=True", {0, 1, 1, 0}},
};

static void check_op(int32_t op, DType dt, double lo, double hi, double tol) {
  Tensor *x = kr_iota(dt, 4, (int64_t[]){2, 3, 4, 5});
  kt_fill(x, (uint32_t)op * 31 + dt.bits, lo, hi);
  for (size_t k = 0; k < sizeof CASES / sizeof *CASES; k++)
    for (int keep = 0; keep < 2; keep++) {
      char attrs[96];
      snprintf(attrs, sizeof attrs, "%s%skeepdims=%s", CASES[k].attr, *CASES[k].attr ? "; " : "", keep ? "True" : "False");
      Tensor *o = kr_run(op, attrs, &x, 1), *r = ref_reduce(x, op, CASES[k].red, keep, false);
      ck_assert_msg(o, "%s %s: %s", op_get(op)->name, attrs, kr_err);
      ck_assert_msg(tensor_same_type(o, r), "%s %s: wrong type/shape", op_get(op)->name, attrs);
      double err = kt_rel_err(o, r);
      ck_assert_msg(tol == 0 ? kt_equal(o, r) : err <= tol, "%s %s dtype bits %d: rel err %g", op_get(op)->name, attrs,
                    dt.bits, err);
      kr_free(o, r, NULL, NULL);
    }
  tensor_release(x);
}

START_TEST(float_reductions_match_reference) {
  int32_t ops[] = {OP_SUM, OP_MEAN, OP_MAX, OP_MIN, OP_ARGMAX, OP_ARGMIN};
  for (size_t i = 0; i < 6; i++) {
    check_op(ops[i], DT_F32, -3, 3, ops[i] == OP_ARGMAX || ops[i] == OP_ARGMIN ? 0 : 1e-6);
    check_op(ops[i], DT_F64, -3, 3, ops[i] == OP_ARGMAX || ops[i] == OP_ARGMIN ? 0 : 1e-12);
    check_op(ops[i], DT_F16, -3, 3, ops[i] == OP_ARGMAX || ops[i] == OP_ARGMIN ? 0 : 2e-3);
  }
  check_op(OP_PROD, DT_F32, 0.7, 1.3, 1e-5);
  check_op(OP_PROD, DT_F64, 0.7, 1.3, 1e-12);
}
END_TEST

START_TEST(int_reductions_match_reference) {
  int32_t ops[] = {OP_SUM, OP_MAX, OP_MIN, OP_PROD, OP_ARGMAX, OP_ARGMIN};
  DType dts[] = {DT_I32, DT_I8, DT_I64, DT_U8, DTYPE(DT_INT, 16)};
  for (size_t i = 0; i < 6; i++)
    for (size_t d = 0; d < 5; d++) check_op(ops[i], dts[d], dts[d].code == DT_UINT ? 0 : -120, 120, 0);
}
END_TEST

START_TEST(large_reductions_split_across_threads) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){64, 70, 90});
  kt_fill(x, 21, -1, 1);
  bool rows[3] = {0, 0, 1}, cols[3] = {1, 0, 0}, mid[3] = {0, 1, 0};
  const bool *masks[3] = {rows, cols, mid};
  const char *attrs[3] = {"axis=[2]", "axis=[0]", "axis=[1]"};
  int32_t ops[4] = {OP_SUM, OP_MEAN, OP_MAX, OP_ARGMIN};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 4; i++) {
      Tensor *o = kr_run(ops[i], attrs[k], &x, 1), *r = ref_reduce(x, ops[i], masks[k], false, false);
      ck_assert_msg(o && kt_rel_err(o, r) < 1e-5, "%s %s", op_get(ops[i])->name, attrs[k]);
      kr_free(o, r, NULL, NULL);
    }
  tensor_release(x);
}
END_TEST

/* A float32 sum over a contiguous run is eight double partial sums (lane u
 * takes elements u, u + 8, ...), combined pairwise, then the tail in order:
 * the vector clones must give exactly this (gradients are compared bit for bit
 * across builds), for every tail length and for runs of -0.0. */
static double lane_order_sum(const float *q, int64_t n) {
  int64_t body = n / 8 * 8;
  double lane[8];
  for (int u = 0; u < 8; u++) { /* one lane at a time: elements u, u + 8, ... */
    lane[u] = 0;
    for (int64_t t = u; t < body; t += 8) lane[u] += (double)q[t];
  }
  double s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  for (int64_t t = body; t < n; t++) s += q[t];
  return s;
}

START_TEST(float_sum_run_lane_order) {
  int64_t lens[] = {1, 7, 8, 9, 15, 16, 17, 31, 49, 196, 3136, 3137};
  for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
    Tensor *x = kr_iota(DT_F32, 2, (int64_t[]){3, lens[k]});
    kt_fill(x, 7 + (uint32_t)k, -1e4, 1e4);
    float *xv = x->data;
    for (int64_t i = 0; i < x->numel; i += 5) xv[i] *= 1e-7f; /* mixed magnitudes: order shows */
    Tensor *o = kr_run(OP_SUM, "axis=[1]", &x, 1);
    ck_assert_msg(o, "sum: %s", kr_err);
    for (int64_t r = 0; r < 3; r++) {
      float want = (float)lane_order_sum(xv + r * lens[k], lens[k]), got = ((float *)o->data)[r];
      ck_assert_msg(memcmp(&want, &got, sizeof want) == 0, "len %lld row %lld: %a vs %a", (long long)lens[k],
                    (long long)r, (double)got, (double)want);
    }
    kr_free(o, NULL, NULL, NULL);
    tensor_release(x);
  }
  Tensor *z = kr_iota(DT_F32, 1, (int64_t[]){20});
  for (int64_t i = 0; i < 20; i++) ((float *)z->data)[i] = -0.0f;
  Tensor *o = kr_run(OP_SUM, "", &z, 1);
  ck_assert(o && !signbit(((float *)o->data)[0]));
  kr_free(o, NULL, NULL, NULL);
  tensor_release(z);
}
END_TEST

/* Small float32 sums and means take a direct path (k_reduce.c small_sum_f32):
 * the same bits as the general one, which a batch of two copies of the input
 * takes (its plan has two kept runs): columns (the bias gradient of a dense
 * layer, 64 x 128 over axis 0) and rows (64 x 10 over axis 1, softmax). */
START_TEST(small_sums_equal_general_path) {
  static const struct { int64_t r, c; const char *attrs; int axis; } cases[] = {
      {64, 128, "axis=[0]", 0}, {64, 10, "axis=[0]", 0}, {64, 10, "axis=[1]", 1}, {3, 4000, "axis=[1]", 1}, {5, 250, "axis=[-1]", 1}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    for (int mean = 0; mean < 2; mean++) {
      int64_t R = cases[k].r, C = cases[k].c;
      Tensor *x = kr_iota(DT_F32, 2, (int64_t[]){R, C}), *x2 = kr_iota(DT_F32, 3, (int64_t[]){2, R, C});
      kt_fill(x, 40 + (uint32_t)k, -1e4, 1e4);
      float *xv = x->data, *x2v = x2->data;
      for (int64_t i = 0; i < R * C; i += 3) xv[i] *= 1e-7f; /* mixed magnitudes: the order shows */
      memcpy(x2v, xv, (size_t)(R * C) * sizeof *xv);
      memcpy(x2v + R * C, xv, (size_t)(R * C) * sizeof *xv);
      char attrs2[32];
      snprintf(attrs2, sizeof attrs2, "axis=[%d]", cases[k].axis + 1);
      int32_t op = mean ? OP_MEAN : OP_SUM;
      Tensor *o = kr_run(op, cases[k].attrs, &x, 1), *o2 = kr_run(op, attrs2, &x2, 1);
      ck_assert_msg(o && o2, "%s", kr_err);
      ck_assert_int_eq(o2->numel, 2 * o->numel);
      for (int h = 0; h < 2; h++)
        ck_assert_msg(memcmp(o->data, (float *)o2->data + h * o->numel, (size_t)o->numel * sizeof(float)) == 0,
                      "%lldx%lld %s mean=%d: the small path differs from the general one", (long long)R, (long long)C,
                      cases[k].attrs, mean);
      kr_free(o, o2, NULL, NULL);
      tensor_release(x);
      tensor_release(x2);
    }
}
END_TEST

START_TEST(int_wrap_and_truncating_mean) {
  Tensor *x = kr_make(DT_I8, 1, (int64_t[]){3}, (double[]){100, 100, 1});
  Tensor *o = kr_run(OP_SUM, "", &x, 1);
  ck_assert_int_eq(tensor_get_i64(o, 0), -55); /* 201 wraps */
  tensor_release(o);
  Tensor *big = kr_make(DT_I32, 1, (int64_t[]){2}, (double[]){2147483647, 1});
  o = kr_run(OP_SUM, "", &big, 1);
  ck_assert_int_eq(tensor_get_i64(o, 0), INT32_MIN);
  kr_free(o, x, big, NULL);
  Tensor *m = kr_make(DT_I32, 2, (int64_t[]){2, 2}, (double[]){-7, 0, 7, 0});
  o = kr_run(OP_MEAN, "axis=[1]", &m, 1);
  ck_assert_int_eq(tensor_get_i64(o, 0), -3); /* truncates toward zero */
  ck_assert_int_eq(tensor_get_i64(o, 1), 3);
  tensor_release(o);
  Tensor *u = kr_make(DT_U8, 1, (int64_t[]){3}, (double[]){200, 100, 2});
  o = kr_run(OP_MEAN, "", &u, 1);
  ck_assert_int_eq(tensor_get_i64(o, 0), 15); /* the sum wraps first: (302 mod 256) / 3 */
  kr_free(o, m, u, NULL);
}
END_TEST

START_TEST(bool_all_any) {
  Tensor *b = kr_make(DT_BOOL_T, 2, (int64_t[]){2, 3}, (double[]){1, 1, 1, 0, 1, 0});
  Tensor *o = kr_run(OP_ALL, "axis=[1]", &b, 1);
  ck_assert(o && dtype_is_bool(o->dtype) && tensor_get_i64(o, 0) == 1 && tensor_get_i64(o, 1) == 0);
  tensor_release(o);
  o = kr_run(OP_ANY, "axis=[0]", &b, 1);
  ck_assert(tensor_get_i64(o, 0) == 1 && tensor_get_i64(o, 1) == 1 && tensor_get_i64(o, 2) == 1);
  tensor_release(o);
  Tensor *z = kr_make(DT_BOOL_T, 2, (int64_t[]){2, 3}, (double[]){0, 0, 0, 0, 1, 0});
  o = kr_run(OP_ANY, "axis=[1]", &z, 1);
  ck_assert(tensor_get_i64(o, 0) == 0 && tensor_get_i64(o, 1) == 1);
  kr_free(o, z, NULL, NULL);
  o = kr_run(OP_ALL, "", &b, 1);
  ck_assert(o->ndim == 0 && tensor_get_i64(o, 0) == 0);
  kr_free(o, b, NULL, NULL);
}
END_TEST

START_TEST(argmax_ties_and_dtype) {
  Tensor *x = kr_make(DT_F32, 2, (int64_t[]){2, 4}, (double[]){1, 5, 5, 2, -1, -1, -3, -3});
  Tensor *o = kr_run(OP_ARGMAX, "axis=[1]", &x, 1);
  ck_assert(o && dtype_eq(o->dtype, DT_I32) && tensor_get_i64(o, 0) == 1 && tensor_get_i64(o, 1) == 0);
  tensor_release(o);
  o = kr_run(OP_ARGMAX, "axis=[1]; select_last_index=True", &x, 1);
  ck_assert(tensor_get_i64(o, 0) == 2 && tensor_get_i64(o, 1) == 1);
  tensor_release(o);
  o = kr_run(OP_ARGMIN, "axis=[-1]; keepdims=True; select_last_index=True", &x, 1);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){2, 1}) && tensor_get_i64(o, 0) == 0 && tensor_get_i64(o, 1) == 3);
  tensor_release(o);
  o = kr_run(OP_ARGMAX, "", &x, 1); /* flattened over every axis */
  ck_assert(o->ndim == 0 && tensor_get_i64(o, 0) == 1);
  tensor_release(o);
  /* all elements equal to the lowest finite float: index 0 */
  Tensor *low = kr_make(DT_F32, 1, (int64_t[]){3}, (double[]){-FLT_MAX, -FLT_MAX, -FLT_MAX});
  o = kr_run(OP_ARGMAX, "axis=[0]", &low, 1);
  ck_assert_int_eq(tensor_get_i64(o, 0), 0);
  tensor_release(o);
  Tensor *s = kr_scalar(DT_F32, 1);
  ck_assert(!kr_run(OP_ARGMAX, "", &s, 1));
  kr_free(x, low, s, NULL);
}
END_TEST

START_TEST(empty_and_rank0) {
  Tensor *e = kr_iota(DT_F32, 2, (int64_t[]){2, 0});
  Tensor *o = kr_run(OP_SUM, "axis=[1]", &e, 1);
  ck_assert(kr_shape_is(o, 1, (int64_t[]){2}) && tensor_get_f64(o, 1) == 0);
  tensor_release(o);
  o = kr_run(OP_PROD, "axis=[1]", &e, 1);
  ck_assert(tensor_get_f64(o, 0) == 1);
  tensor_release(o);
  o = kr_run(OP_MAX, "axis=[1]", &e, 1);
  ck_assert(tensor_get_f64(o, 0) == -FLT_MAX); /* the init value, not -inf */
  tensor_release(o);
  o = kr_run(OP_MEAN, "axis=[1]", &e, 1);
  ck_assert(isnan(tensor_get_f64(o, 0)));
  tensor_release(o);
  o = kr_run(OP_ALL, "axis=[1]", &e, 1);
  ck_assert(tensor_get_i64(o, 0) == 1);
  tensor_release(o);
  ck_assert(!kr_run(OP_ARGMAX, "axis=[1]", &e, 1));
  o = kr_run(OP_SUM, "axis=[0]", &e, 1); /* empty output */
  ck_assert(kr_shape_is(o, 1, (int64_t[]){0}));
  tensor_release(o);
  Tensor *ie = kr_iota(DT_I32, 1, (int64_t[]){0});
  ck_assert(!kr_run(OP_MEAN, "", &ie, 1));
  ck_assert(strstr(kr_err, "mean"));
  Tensor *s = kr_scalar(DT_F64, 2.5);
  o = kr_run(OP_MEAN, "", &s, 1);
  ck_assert(o && o->ndim == 0 && tensor_get_f64(o, 0) == 2.5);
  tensor_release(o);
  Tensor *x = kr_iota(DT_F32, 2, (int64_t[]){2, 3});
  ck_assert(!kr_run(OP_SUM, "axis=[2]", &x, 1));
  ck_assert(!kr_run(OP_SUM, "axis=[-3]", &x, 1));
  kr_free(e, ie, s, x);
}
END_TEST

START_TEST(variance_against_reference) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){3, 4, 5});
  kt_fill(x, 9, -2, 2);
  for (int unb = 0; unb < 2; unb++) {
    Tensor *m = kr_run(OP_MEAN, "axis=[0, 2]; keepdims=True", &x, 1);
    Tensor *ins[2] = {x, m};
    Tensor *v = kr_run(OP_VARIANCE, unb ? "axis=[0, 2]; unbiased=True" : "axis=[0, 2]", ins, 2);
    ck_assert_msg(kr_shape_is(v, 1, (int64_t[]){4}), "%s", kr_err);
    for (int j = 0; j < 4; j++) {
      double s = 0, ss = 0;
      for (int a = 0; a < 3; a++)
        for (int c = 0; c < 5; c++) s += tensor_get_f64(x, (a * 4 + j) * 5 + c);
      double mu = s / 15;
      for (int a = 0; a < 3; a++)
        for (int c = 0; c < 5; c++) {
          double d = tensor_get_f64(x, (a * 4 + j) * 5 + c) - mu;
          ss += d * d;
        }
      ck_assert_double_eq_tol(tensor_get_f64(v, j), ss / (15 - unb), 1e-5);
    }
    Tensor *bad = kr_iota(DT_F32, 1, (int64_t[]){3});
    ins[1] = bad;
    ck_assert(!kr_run(OP_VARIANCE, "axis=[0, 2]", ins, 2));
    kr_free(m, v, bad, NULL);
  }
  tensor_release(x);
}
END_TEST

/* collapse_sum_like / collapse_sum_to: the sum over the axes the target
 * broadcasts along (spec/gradient.md 5.1), against ref_reduce with keepdims. */
static void check_collapse(DType dt, int32_t nd, const int64_t *shape, int32_t tnd, const int64_t *tshape,
                           double tol) {
  Tensor *x = kr_iota(dt, nd, shape), *like = kr_iota(dt, tnd, tshape);
  kt_fill(x, (uint32_t)(nd * 7 + tnd), -2, 2);
  bool red[MAXR];
  for (int32_t i = 0; i < nd; i++) {
    int32_t t = i - (nd - tnd);
    red[i] = t < 0 || (tshape[t] == 1 && shape[i] != 1);
  }
  Tensor *r = ref_reduce(x, OP_SUM, red, true, false);
  Tensor *ins[2] = {x, like};
  Tensor *o = kr_run(OP_COLLAPSE_SUM_LIKE, "", ins, 2);
  ck_assert_msg(o, "collapse_sum_like: %s", kr_err);
  ck_assert(kr_shape_is(o, tnd, tshape) && dtype_eq(o->dtype, dt) && o->numel == r->numel);
  for (int64_t i = 0; i < r->numel; i++)
    ck_assert_msg(fabs(tensor_get_f64(o, i) - tensor_get_f64(r, i)) <= tol * (1 + fabs(tensor_get_f64(r, i))),
                  "collapse_sum_like element %lld: %g vs %g", (long long)i, tensor_get_f64(o, i), tensor_get_f64(r, i));
  char attrs[96] = "shape=[";
  for (int32_t i = 0; i < tnd; i++)
    snprintf(attrs + strlen(attrs), sizeof attrs - strlen(attrs), "%s%lld", i ? ", " : "", (long long)tshape[i]);
  strcat(attrs, "]");
  int64_t n1 = tnd;
  Tensor *sv = kr_iota(DT_I32, 1, &n1);
  for (int32_t i = 0; i < tnd; i++) tensor_set_i64(sv, i, tshape[i]);
  Tensor *ins2[2] = {x, sv};
  Tensor *o2 = kr_run(OP_COLLAPSE_SUM_TO, attrs, ins2, 2);
  ck_assert_msg(o2 && kt_equal(o2, o), "collapse_sum_to %s: %s", attrs, kr_err);
  Tensor *o3 = kr_run(OP_COLLAPSE_SUM_TO, "", ins2, 2); /* no attribute: the shape input's values */
  ck_assert_msg(o3 && kt_equal(o3, o), "collapse_sum_to from the input: %s", kr_err);
  kr_free(x, like, r, o);
  kr_free(o2, o3, sv, NULL);
}

START_TEST(collapse_sum_against_reference) {
  check_collapse(DT_F32, 3, (int64_t[]){2, 3, 4}, 2, (int64_t[]){3, 1}, 1e-6);
  check_collapse(DT_F32, 4, (int64_t[]){8, 16, 7, 7}, 3, (int64_t[]){16, 1, 1}, 1e-6); /* conv bias */
  check_collapse(DT_F32, 3, (int64_t[]){4, 50, 96}, 1, (int64_t[]){96}, 1e-6);        /* dense bias */
  check_collapse(DT_F32, 3, (int64_t[]){4, 5, 6}, 0, NULL, 1e-6);                     /* to a scalar */
  check_collapse(DT_F64, 4, (int64_t[]){2, 1, 3, 5}, 4, (int64_t[]){1, 1, 3, 1}, 1e-12);
  check_collapse(DT_F16, 2, (int64_t[]){30, 9}, 2, (int64_t[]){30, 1}, 2e-3);
  check_collapse(DT_I32, 3, (int64_t[]){3, 4, 5}, 3, (int64_t[]){1, 4, 1}, 0);
  check_collapse(DT_I8, 2, (int64_t[]){40, 3}, 1, (int64_t[]){3}, 0); /* wraps like sum */
  check_collapse(DT_F32, 3, (int64_t[]){1, 64, 1000}, 2, (int64_t[]){64, 1000}, 0); /* only extent-1 axes */
  check_collapse(DT_F32, 2, (int64_t[]){64, 1000}, 2, (int64_t[]){64, 1000}, 0);    /* nothing collapsed */
}
END_TEST

START_TEST(collapse_sum_identity_and_errors) {
  /* nothing broadcast: the input itself; only extent-1 axes: a view of it */
  Tensor *x = kr_iota(DT_F32, 2, (int64_t[]){3, 4}), *same = kr_iota(DT_F32, 2, (int64_t[]){3, 4});
  Tensor *ins[2] = {x, same};
  Tensor *o = kr_run(OP_COLLAPSE_SUM_LIKE, "", ins, 2);
  ck_assert(o == x);
  tensor_release(o);
  Tensor *x1 = kr_iota(DT_F32, 3, (int64_t[]){1, 3, 4});
  ins[0] = x1;
  o = kr_run(OP_COLLAPSE_SUM_LIKE, "", ins, 2);
  ck_assert(o && o->data == x1->data && kr_shape_is(o, 2, (int64_t[]){3, 4}));
  tensor_release(o);
  /* a target that does not broadcast, or of a higher rank, is a run-time error */
  Tensor *bad = kr_iota(DT_F32, 1, (int64_t[]){5}), *big = kr_iota(DT_F32, 3, (int64_t[]){2, 3, 4});
  ins[0] = x;
  ins[1] = bad;
  ck_assert(!kr_run(OP_COLLAPSE_SUM_LIKE, "", ins, 2) && strstr(kr_err, "does not broadcast"));
  ins[1] = big;
  ck_assert(!kr_run(OP_COLLAPSE_SUM_LIKE, "", ins, 2) && strstr(kr_err, "higher rank"));
  Tensor *sv = kr_iota(DT_I32, 1, (int64_t[]){2});
  ins[1] = sv;
  ck_assert(!kr_run(OP_COLLAPSE_SUM_TO, "shape=[-1, 4]", ins, 2) && strstr(kr_err, "negative"));
  kr_free(x, same, x1, bad);
  kr_free(big, sv, NULL, NULL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("k_reduce");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, float_reductions_match_reference);
  tcase_add_test(t, int_reductions_match_reference);
  tcase_add_test(t, large_reductions_split_across_threads);
  tcase_add_test(t, float_sum_run_lane_order);
  tcase_add_test(t, small_sums_equal_general_path);
  tcase_add_test(t, int_wrap_and_truncating_mean);
  tcase_add_test(t, bool_all_any);
  tcase_add_test(t, argmax_ties_and_dtype);
  tcase_add_test(t, empty_and_rank0);
  tcase_add_test(t, variance_against_reference);
  tcase_add_test(t, collapse_sum_against_reference);
  tcase_add_test(t, collapse_sum_identity_and_errors);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  return unit_run(suite());
}
