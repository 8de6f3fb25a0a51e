/* tests/unit/check_k_scatter.c — strided_set, scatter_nd and scatter_elements
 * (ops/kernels/k_scatter.c) against plain reference loops.
 *
 * ref_strided_set walks every data position and asks, axis by axis, whether
 * it is selected by Python's slice(b, e, s) (the clamped start, step and
 * count of slice.indices) and which v element it takes (v broadcast
 * numpy-style); ref_scatter_nd and ref_scatter_el apply the updates
 * one by one in order with the combining function in double. The kernels
 * must agree exactly (integers, float64) or to float rounding, on every
 * reduction, with duplicates, negative indices (scatter_elements), several
 * dtypes and the error paths (out-of-range indices, bad shapes).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "tests/unit/kr_util.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"

static const DType F32 = {DT_FLOAT, 32, 1}, F64 = {DT_FLOAT, 64, 1}, I32 = {DT_INT, 32, 1},
                   I64 = {DT_INT, 64, 1}, I8 = {DT_INT, 8, 1}, F16 = {DT_FLOAT, 16, 1};

static double combine(const char *op, double a, double b) {
  if (!strcmp(op, "update")) return b;
  if (!strcmp(op, "add")) return a + b;
  if (!strcmp(op, "mul")) return a * b;
  if (!strcmp(op, "mean")) return (a + b) / 2;
  if (!strcmp(op, "min")) return a < b ? a : b;
  return a > b ? a : b;
}

/* ------------------------------------------------------------ strided_set */

static int64_t pyslice(int64_t n, bool hb, int64_t b, bool he, int64_t e, int64_t s, int64_t *cnt) {
  int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
  b = !hb ? (s > 0 ? lo : hi) : b < 0 ? (b + n < lo ? lo : b + n) : (b > hi ? hi : b);
  e = !he ? (s > 0 ? hi : lo) : e < 0 ? (e + n < lo ? lo : e + n) : (e > hi ? hi : e);
  int64_t c = s > 0 ? (e - b + s - 1) / s : (b - e - s - 1) / -s;
  *cnt = c > 0 ? c : 0;
  return b;
}

static Tensor *ref_strided_set(const Tensor *x, const Tensor *v, const int64_t *b, int nb, const int64_t *e, int ne,
                               const int64_t *s, int ns) {
  Tensor *o = tensor_copy(x);
  int32_t nd = x->ndim;
  int64_t start[8], step[8], cnt[8];
  for (int32_t i = 0; i < nd; i++) {
    step[i] = i < ns ? s[i] : 1;
    start[i] = pyslice(x->shape[i], i < nb, i < nb ? b[i] : 0, i < ne, i < ne ? e[i] : 0, step[i], &cnt[i]);
  }
  for (int64_t p = 0; p < x->numel; p++) {
    int64_t rem = p, vi = 0, vs = 1;
    bool sel = true;
    int64_t k[8];
    for (int32_t i = nd; i-- > 0;) {
      int64_t j = rem % x->shape[i];
      rem /= x->shape[i];
      int64_t d = j - start[i];
      if (d % step[i] != 0 || d / step[i] < 0 || d / step[i] >= cnt[i]) sel = false;
      k[i] = d / step[i];
    }
    if (!sel) continue;
    for (int32_t i = nd; i-- > 0;) {
      int32_t a = i - (nd - v->ndim);
      int64_t ext = a >= 0 ? v->shape[a] : 1;
      vi += (ext == 1 ? 0 : k[i]) * vs;
      vs *= ext;
    }
    tensor_set_f64(o, p, tensor_get_f64(v, vi));
  }
  return o;
}

static void check_ss(const int64_t *shape, int nd, const int64_t *b, int nb, const int64_t *e, int ne, const int64_t *s,
                     int ns, const int64_t *vshape, int vnd) {
  Tensor *x = kr_iota(F32, nd, shape), *v = kr_iota(F32, vnd, vshape);
  kt_fill(v, 7, -5, 5);
  Tensor *tb = kr_iota(I32, 1, (int64_t[]){nb}), *te = kr_iota(I32, 1, (int64_t[]){ne}), *ts = kr_iota(I32, 1, (int64_t[]){ns});
  for (int i = 0; i < nb; i++) tensor_set_i64(tb, i, b[i]);
  for (int i = 0; i < ne; i++) tensor_set_i64(te, i, e[i]);
  for (int i = 0; i < ns; i++) tensor_set_i64(ts, i, s[i]);
  Tensor *ins[5] = {x, v, tb, te, ts};
  Tensor *o = kr_run(OP_STRIDED_SET, "", ins, 5), *r = ref_strided_set(x, v, b, nb, e, ne, s, ns);
  ck_assert_msg(o, "strided_set: %s", kr_err);
  ck_assert(kt_equal(o, r));
  kr_free(o, r, x, v);
  kr_free(tb, te, ts, NULL);
}

START_TEST(strided_set_matches_reference) {
  /* TVM's test_strided_set cases (test_op_level4.py) */
  check_ss((int64_t[]){3, 4, 16}, 3, (int64_t[]){0, 0, 0}, 3, (int64_t[]){4, -5, 4}, 3, (int64_t[]){1, -1, 2}, 3,
           (int64_t[]){3, 1, 2}, 3);
  check_ss((int64_t[]){3, 4, 3}, 3, (int64_t[]){1, 1, 0}, 3, (int64_t[]){4, 4, 3}, 3, (int64_t[]){2, 1, 1}, 3,
           (int64_t[]){1, 3, 3}, 3);
  check_ss((int64_t[]){3, 4, 3}, 3, (int64_t[]){1, -1, 0}, 3, (int64_t[]){4, -5, 3}, 3, (int64_t[]){2, -1, 1}, 3,
           (int64_t[]){1, 4, 3}, 3);
  check_ss((int64_t[]){3, 4, 3}, 3, (int64_t[]){1, 0, 0}, 3, (int64_t[]){2, 2, 3}, 3, (int64_t[]){1, 1, 2}, 3,
           (int64_t[]){1, 2, 2}, 3);
  check_ss((int64_t[]){3, 4, 3}, 3, (int64_t[]){1, -1, 0}, 3, (int64_t[]){2, -3, 3}, 3, (int64_t[]){1, -1, 1}, 3,
           (int64_t[]){1, 2, 3}, 3);
  check_ss((int64_t[]){3, 4, 3}, 3, (int64_t[]){1, 1, 0}, 3, (int64_t[]){4, 1000, 3}, 3, (int64_t[]){1}, 1,
           (int64_t[]){2, 3, 3}, 3);
  check_ss((int64_t[]){3, 4, 3}, 3, (int64_t[]){1, 1, 0}, 3, (int64_t[]){4, 4}, 2, (int64_t[]){1}, 1,
           (int64_t[]){2, 3, 3}, 3);
  check_ss((int64_t[]){3, 4, 3}, 3, (int64_t[]){1, 1}, 2, (int64_t[]){4, 4, 3}, 3, (int64_t[]){1}, 1,
           (int64_t[]){2, 3, 3}, 3);
  /* v broadcasts; a long strided run; an empty slice */
  check_ss((int64_t[]){5, 100}, 2, (int64_t[]){1, 3}, 2, (int64_t[]){5, 99}, 2, (int64_t[]){2, 7}, 2,
           (int64_t[]){14}, 1);
  check_ss((int64_t[]){4, 4}, 2, (int64_t[]){2, 0}, 2, (int64_t[]){2, 4}, 2, (int64_t[]){1, 1}, 2, (int64_t[]){1}, 1);
}
END_TEST

START_TEST(strided_set_errors) {
  Tensor *x = kr_iota(F32, 2, (int64_t[]){3, 4}), *v = kr_iota(F32, 2, (int64_t[]){2, 2});
  Tensor *tb = kr_make(I32, 1, (int64_t[]){2}, (double[]){0, 0}), *te = kr_make(I32, 1, (int64_t[]){2}, (double[]){3, 4});
  Tensor *ts = kr_make(I32, 1, (int64_t[]){2}, (double[]){1, 0});
  Tensor *ins[5] = {x, v, tb, te, ts};
  ck_assert(!kr_run(OP_STRIDED_SET, "", ins, 5) && strstr(kr_err, "stride 0"));
  tensor_set_i64(ts, 1, 1);
  ck_assert(!kr_run(OP_STRIDED_SET, "", ins, 5) && strstr(kr_err, "does not fit")); /* v 2x2 vs slice 3x4 */
  kr_free(x, v, tb, te);
  tensor_release(ts);
}
END_TEST

/* ------------------------------------------------------------ scatter_nd */

static Tensor *ref_scatter_nd(const Tensor *x, const Tensor *ix, const Tensor *u, const char *mode) {
  Tensor *o = tensor_copy(x);
  int64_t m = ix->shape[0], ny = ix->numel / m, inner = 1;
  for (int32_t i = (int32_t)m; i < x->ndim; i++) inner *= x->shape[i];
  for (int64_t y = 0; y < ny; y++) {
    int64_t off = 0;
    for (int64_t k = 0; k < m; k++) off = off * x->shape[k] + tensor_get_i64(ix, k * ny + y);
    for (int64_t k = m; k < x->ndim; k++) off *= x->shape[k];
    for (int64_t q = 0; q < inner; q++)
      tensor_set_f64(o, off + q, combine(mode, tensor_get_f64(o, off + q), tensor_get_f64(u, y * inner + q)));
  }
  return o;
}

static void check_snd(DType dt, const int64_t *xs, int xn, const int64_t *is, int in, const char *mode, DType idt) {
  Tensor *x = kr_iota(dt, xn, xs);
  kt_fill(x, 3, -4, 4);
  Tensor *ix = kr_iota(idt, in, is);
  int64_t m = is[0], ny = ix->numel / m;
  for (int64_t k = 0; k < m; k++)
    for (int64_t y = 0; y < ny; y++) tensor_set_i64(ix, k * ny + y, (y * 7 + k * 3) % xs[k]); /* duplicates too */
  int64_t us[8];
  int un = 0;
  for (int i = 1; i < in; i++) us[un++] = is[i];
  for (int i = (int)m; i < xn; i++) us[un++] = xs[i];
  Tensor *u = kr_iota(dt, un, us);
  kt_fill(u, 4, -4, 4);
  char attrs[64];
  snprintf(attrs, sizeof attrs, "mode=\"%s\"", mode);
  Tensor *ins[3] = {x, ix, u};
  Tensor *o = kr_run(OP_SCATTER_ND, attrs, ins, 3), *r = ref_scatter_nd(x, ix, u, mode);
  ck_assert_msg(o, "scatter_nd %s: %s", mode, kr_err);
  ck_assert_msg(dtype_is_float(dt) && dt.bits < 64 ? kt_rel_err(o, r) < 1e-6 : kt_equal(o, r), "scatter_nd %s bits %d",
                mode, dt.bits);
  kr_free(o, r, x, ix);
  tensor_release(u);
}

START_TEST(scatter_nd_matches_reference) {
  static const char *const modes[] = {"update", "add", "mul", "min", "max"};
  for (int k = 0; k < 5; k++) {
    check_snd(F64, (int64_t[]){2, 7, 3}, 3, (int64_t[]){2, 5}, 2, modes[k], I64);
    check_snd(F32, (int64_t[]){6, 1560}, 2, (int64_t[]){1, 9}, 2, modes[k], DTYPE(DT_UINT, 16));
    check_snd(I64, (int64_t[]){2, 2, 2, 2}, 4, (int64_t[]){2, 2}, 2, modes[k], DTYPE(DT_UINT, 8));
    check_snd(I8, (int64_t[]){4, 5}, 2, (int64_t[]){2, 3, 2}, 3, modes[k], I32); /* M = N: scalar slices */
  }
  check_snd(F16, (int64_t[]){3, 8}, 2, (int64_t[]){1, 4}, 2, "add", I32);
  /* TVM: indices [[1, 1, 0], [0, 1, 0]] add [2, 3, 0] into zeros (2, 2) -> [[0, 0], [2, 3]] */
  Tensor *x = kr_make(I64, 2, (int64_t[]){2, 2}, (double[]){0, 0, 0, 0});
  Tensor *ix = kr_make(DTYPE(DT_UINT, 32), 2, (int64_t[]){2, 3}, (double[]){1, 1, 0, 0, 1, 0});
  Tensor *u = kr_make(I64, 1, (int64_t[]){3}, (double[]){2, 3, 0});
  Tensor *ins[3] = {x, ix, u};
  Tensor *o = kr_run(OP_SCATTER_ND, "mode=\"add\"", ins, 3);
  ck_assert(o && tensor_get_i64(o, 0) == 0 && tensor_get_i64(o, 1) == 0 && tensor_get_i64(o, 2) == 2 &&
            tensor_get_i64(o, 3) == 3);
  tensor_release(o);
  tensor_set_i64(ix, 0, 2); /* out of range */
  ck_assert(!kr_run(OP_SCATTER_ND, "mode=\"add\"", ins, 3) && strstr(kr_err, "out of range"));
  Tensor *ineg = kr_make(I32, 2, (int64_t[]){2, 1}, (double[]){-1, 0});
  ins[1] = ineg;
  ck_assert(!kr_run(OP_SCATTER_ND, "mode=\"add\"", ins, 3)); /* no negative wrapping */
  ck_assert(!kr_run(OP_SCATTER_ND, "mode=\"mean\"", ins, 3) && strstr(kr_err, "unknown mode"));
  kr_free(x, ix, u, ineg);
}
END_TEST

/* ------------------------------------------------------------ scatter_elements */

static Tensor *ref_scatter_el(const Tensor *x, const Tensor *ix, const Tensor *u, int32_t axis, const char *red) {
  Tensor *o = tensor_copy(x);
  int32_t nd = x->ndim;
  for (int64_t p = 0; p < ix->numel; p++) {
    int64_t rem = p, off = 0, mul = 1, c[8];
    for (int32_t i = nd; i-- > 0;) {
      c[i] = rem % ix->shape[i];
      rem /= ix->shape[i];
    }
    int64_t t = tensor_get_i64(ix, p);
    if (t < 0) t += x->shape[axis];
    c[axis] = t;
    for (int32_t i = nd; i-- > 0;) {
      off += c[i] * mul;
      mul *= x->shape[i];
    }
    tensor_set_f64(o, off, combine(red, tensor_get_f64(o, off), tensor_get_f64(u, p)));
  }
  return o;
}

static void check_se(DType dt, const int64_t *xs, const int64_t *is, int nd, int32_t axis, const char *red) {
  Tensor *x = kr_iota(dt, nd, xs), *ix = kr_iota(I64, nd, is), *u = kr_iota(dt, nd, is);
  int32_t ax = axis < 0 ? axis + nd : axis;
  kt_fill(x, 5, -4, 4);
  kt_fill(u, 6, -4, 4);
  for (int64_t p = 0; p < ix->numel; p++) {
    int64_t v = (p * 5 + 3) % xs[ax];
    tensor_set_i64(ix, p, p % 3 == 0 ? v - xs[ax] : v); /* negative indices count from the end */
  }
  char attrs[64];
  snprintf(attrs, sizeof attrs, "axis=%d; reduction=\"%s\"", axis, red);
  Tensor *ins[3] = {x, ix, u};
  Tensor *o = kr_run(OP_SCATTER_ELEMENTS, attrs, ins, 3), *r = ref_scatter_el(x, ix, u, ax, red);
  ck_assert_msg(o, "scatter_elements %s: %s", attrs, kr_err);
  ck_assert_msg(dtype_is_float(dt) && dt.bits < 64 ? kt_rel_err(o, r) < 1e-6 : kt_equal(o, r), "scatter_elements %s", attrs);
  kr_free(o, r, x, ix);
  tensor_release(u);
}

START_TEST(scatter_elements_matches_reference) {
  static const char *const reds[] = {"update", "add", "mul", "mean", "min", "max"};
  for (int k = 0; k < 6; k++) {
    check_se(F64, (int64_t[]){4, 5, 6}, (int64_t[]){3, 5, 2}, 3, 0, reds[k]);
    check_se(F64, (int64_t[]){4, 5, 6}, (int64_t[]){4, 9, 6}, 3, 1, reds[k]);
    check_se(F32, (int64_t[]){40, 300}, (int64_t[]){40, 700}, 2, -1, reds[k]); /* threaded lines */
    check_se(I32, (int64_t[]){6, 7}, (int64_t[]){6, 7}, 2, 1, reds[k]);
  }
  Tensor *x = kr_iota(F32, 2, (int64_t[]){2, 3}), *ix = kr_make(I32, 2, (int64_t[]){1, 2}, (double[]){0, 3});
  Tensor *u = kr_iota(F32, 2, (int64_t[]){1, 2});
  Tensor *ins[3] = {x, ix, u};
  ck_assert(!kr_run(OP_SCATTER_ELEMENTS, "axis=1", ins, 3) && strstr(kr_err, "out of range"));
  ck_assert(!kr_run(OP_SCATTER_ELEMENTS, "axis=2", ins, 3));
  ck_assert(!kr_run(OP_SCATTER_ELEMENTS, "reduction=\"sum\"", ins, 3) && strstr(kr_err, "unknown reduction"));
  kr_free(x, ix, u, NULL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("k_scatter");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, strided_set_matches_reference);
  tcase_add_test(t, strided_set_errors);
  tcase_add_test(t, scatter_nd_matches_reference);
  tcase_add_test(t, scatter_elements_matches_reference);
  suite_add_tcase(s, t);
  return unit_run(s);
}
