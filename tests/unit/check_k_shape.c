/* tests/unit/check_k_shape.c — shape and layout kernels (ops/kernels/k_shape.c)
 * against plain coordinate loops.
 *
 * ref_permute, ref_bcast_at, ref_scan and the coordinate loops inside the
 * concatenate/stack/split and tile tests compute each output element from
 * its coordinates with the spec formula (spec/ops.md §6); the
 * kernels must match them exactly for every element size (bool, int8,
 * float16, int32, float32, int64/float64). Reshape-likes are checked for the
 * special values of §6.1, for sharing the input's storage (zero copy) and
 * for their error paths.
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

#define MAXR 8

static void coords(int64_t e, int32_t nd, const int64_t *shape, int64_t *c) {
  for (int32_t i = nd; i-- > 0;) {
    c[i] = e % shape[i];
    e /= shape[i];
  }
}

static int64_t flat(int32_t nd, const int64_t *shape, const int64_t *c) {
  int64_t f = 0;
  for (int32_t i = 0; i < nd; i++) f = f * shape[i] + c[i];
  return f;
}

/* ------------------------------------------------------------ reshape family */

static void check_reshape(const int64_t *in, int32_t nin, const char *ns, const int64_t *want, int32_t nw) {
  Tensor *x = kr_iota(DT_F32, nin, in);
  char attrs[128];
  snprintf(attrs, sizeof attrs, "newshape=%s", ns);
  Tensor *o = kr_run(OP_RESHAPE, attrs, &x, 1);
  ck_assert_msg(o, "reshape %s: %s", ns, kr_err);
  ck_assert_msg(kr_shape_is(o, nw, want), "reshape %s: wrong shape", ns);
  ck_assert(o->data == x->data); /* a view: no copy */
  kr_free(x, o, NULL, NULL);
}

START_TEST(reshape_special_values) {
  check_reshape((int64_t[]){1, 2048, 1, 1}, 4, "[0, -1]", (int64_t[]){1, 2048}, 2);
  check_reshape((int64_t[]){1, 50, 32}, 3, "[-1, 32]", (int64_t[]){50, 32}, 2);
  check_reshape((int64_t[]){2, 3, 4}, 3, "[-4, 1, 2, -2]", (int64_t[]){1, 2, 3, 4}, 4);
  check_reshape((int64_t[]){2, 3, 4}, 3, "[-3, 4]", (int64_t[]){6, 4}, 2);
  check_reshape((int64_t[]){2, 3, 4}, 3, "[-4, -1, 2, 3, 4]", (int64_t[]){1, 2, 3, 4}, 4);
  check_reshape((int64_t[]){2, 3, 4}, 3, "[0, -1]", (int64_t[]){2, 12}, 2);
  check_reshape((int64_t[]){2, 3, 4}, 3, "[-2]", (int64_t[]){2, 3, 4}, 3);
  check_reshape((int64_t[]){2, 3, 4}, 3, "[4, 0, -1]", (int64_t[]){4, 3, 2}, 3);
  check_reshape((int64_t[]){6}, 1, "[1, 2, 1, 3]", (int64_t[]){1, 2, 1, 3}, 4);
}
END_TEST

/* contrib_reverse_reshape: reshape's special values resolved from the right
 * (spec/gradient.md 5.7), still a view. */
static void check_rreshape(const int64_t *in, int32_t nin, const char *ns, const int64_t *want, int32_t nw) {
  Tensor *x = kr_iota(DT_F32, nin, in);
  char attrs[128];
  snprintf(attrs, sizeof attrs, "newshape=%s", ns);
  Tensor *o = kr_run(OP_CONTRIB_REVERSE_RESHAPE, attrs, &x, 1);
  ck_assert_msg(o, "contrib_reverse_reshape %s: %s", ns, kr_err);
  ck_assert_msg(kr_shape_is(o, nw, want), "contrib_reverse_reshape %s: wrong shape", ns);
  ck_assert(o->data == x->data);
  kr_free(x, o, NULL, NULL);
}

START_TEST(reverse_reshape_special_values) {
  check_rreshape((int64_t[]){10, 5, 4}, 3, "[-1, 0]", (int64_t[]){50, 4}, 2);
  check_rreshape((int64_t[]){2, 3, 4}, 3, "[4, 0, 2]", (int64_t[]){4, 3, 2}, 3);
  check_rreshape((int64_t[]){2, 3, 4}, 3, "[-3, 4]", (int64_t[]){6, 4}, 2);
  check_rreshape((int64_t[]){2, 3, 4}, 3, "[0, -1]", (int64_t[]){3, 8}, 2); /* reshape: (2, 12) */
  check_rreshape((int64_t[]){2, 3, 4}, 3, "[0, -3]", (int64_t[]){2, 12}, 2);
  check_rreshape((int64_t[]){2, 3, 4}, 3, "[2, 0, 0]", (int64_t[]){2, 3, 4}, 3);
}
END_TEST

START_TEST(reverse_reshape_errors_and_annotations) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 3, 4});
  ck_assert(!kr_run(OP_CONTRIB_REVERSE_RESHAPE, "newshape=[-4, 1, 2, -2]", &x, 1) && strstr(kr_err, "-4"));
  ck_assert(!kr_run(OP_CONTRIB_REVERSE_RESHAPE, "newshape=[5, -1]", &x, 1));
  /* the annotations hand their input back: same tensor, no copy */
  int32_t ann[] = {OP_ON_DEVICE, OP_DEVICE_COPY, OP_ANNOTATION_STOP_FUSION, OP_ANNOTATION_CHECKPOINT};
  for (size_t i = 0; i < sizeof ann / sizeof *ann; i++) {
    Tensor *o = kr_run(ann[i], "", &x, 1);
    ck_assert_msg(o == x, "%s copied its input", op_get(ann[i])->name);
    tensor_release(o);
  }
  tensor_release(x);
}
END_TEST

START_TEST(reshape_errors) {
  Tensor *x = kr_iota(DT_F32, 2, (int64_t[]){2, 3});
  ck_assert(!kr_run(OP_RESHAPE, "newshape=[4, 2]", &x, 1));
  ck_assert(strstr(kr_err, "reshape"));
  ck_assert(!kr_run(OP_RESHAPE, "newshape=[-1, -1]", &x, 1));
  ck_assert(!kr_run(OP_RESHAPE, "newshape=[-5, 6]", &x, 1));
  ck_assert(!kr_run(OP_RESHAPE, "newshape=[0, 0, 0]", &x, 1));
  ck_assert(!kr_run(OP_RESHAPE, "newshape=[-4, -1, -1]", &x, 1));
  ck_assert(!kr_run(OP_RESHAPE, "newshape=[-3, -3]", &x, 1));
  tensor_release(x);
}
END_TEST

START_TEST(reshape_view_ownership) {
  /* a unique input is reused; a shared one gets a view that is not unique */
  Tensor *x = kr_iota(DT_I32, 2, (int64_t[]){2, 3}), *o;
  bool same = kr_runs_in_place(OP_RESHAPE, "newshape=[1, 2, 3]", x, NULL, 0, &o);
  ck_assert(same);
  ck_assert(kr_shape_is(o, 3, (int64_t[]){1, 2, 3}));
  ck_assert(tensor_is_unique(o));
  ck_assert_int_eq(tensor_get_i64(o, 5), 5);
  tensor_release(o);
  x = kr_iota(DT_I32, 2, (int64_t[]){2, 3});
  o = kr_run(OP_RESHAPE, "newshape=[6, 1, 1]", &x, 1); /* x stays referenced */
  ck_assert(o && o->data == x->data && !tensor_is_unique(o));
  tensor_release(x);
  ck_assert(tensor_is_unique(o)); /* the view now holds the only reference */
  Tensor *o2 = kr_run(OP_RESHAPE, "newshape=[-1]", &o, 1);
  ck_assert(o2 && o2->data == o->data && o2->base && !o2->base->base);
  kr_free(o, o2, NULL, NULL);
  /* a module constant: the view borrows its data and stays read-only */
  float data[6] = {0, 1, 2, 3, 4, 5};
  int64_t cshape[2] = {2, 3};
  ConstTensor ct = {.dtype = DT_F32, .ndim = 2, .shape = cshape, .data = data, .nbytes = sizeof data, .meta_index = -1};
  Tensor *k = tensor_from_const(&ct);
  o = kr_run(OP_RESHAPE, "newshape=[3, 1, 2]", &k, 1);
  ck_assert(o && o->data == (void *)data && !tensor_is_writable(o) && !o->base);
  tensor_release(k);
  ck_assert(!tensor_is_unique(o)); /* never written in place */
  Tensor *r = kr_run(OP_NN_RELU, "", &o, 1);
  ck_assert(r && r->data != (void *)data && tensor_get_f64(r, 5) == 5);
  kr_free(o, r, NULL, NULL);
}
END_TEST

START_TEST(reshape_likes) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 3, 4}), *l = kr_iota(DT_I8, 2, (int64_t[]){6, 2});
  Tensor *ins[2] = {x, l};
  Tensor *o = kr_run(OP_RESHAPE_LIKE, "", ins, 2);
  ck_assert(!o); /* 24 vs 12 elements */
  ck_assert(!kr_run(OP_RESHAPE_LIKE, "lhs_begin=1; rhs_begin=0; rhs_end=1", ins, 2)); /* 2·6 ≠ 24 */
  o = kr_run(OP_RESHAPE_LIKE, "lhs_begin=1; rhs_begin=0; rhs_end=2", ins, 2);
  ck_assert_msg(kr_shape_is(o, 3, (int64_t[]){2, 6, 2}), "%s", kr_err);
  tensor_release(o);
  o = kr_run(OP_EXPAND_DIMS, "axis=-1; num_newaxis=2", &x, 1);
  ck_assert(kr_shape_is(o, 5, (int64_t[]){2, 3, 4, 1, 1}));
  tensor_release(o);
  o = kr_run(OP_EXPAND_DIMS, "axis=0", &x, 1);
  ck_assert(kr_shape_is(o, 4, (int64_t[]){1, 2, 3, 4}));
  ck_assert(!kr_run(OP_EXPAND_DIMS, "axis=5", &x, 1));
  Tensor *sq = kr_run(OP_SQUEEZE, "", &o, 1);
  ck_assert(kr_shape_is(sq, 3, (int64_t[]){2, 3, 4}));
  ck_assert(!kr_run(OP_SQUEEZE, "axis=[1]", &o, 1)); /* extent 2 */
  Tensor *sq2 = kr_run(OP_SQUEEZE, "axis=[-4]", &o, 1);
  ck_assert(kr_shape_is(sq2, 3, (int64_t[]){2, 3, 4}));
  Tensor *bf = kr_run(OP_NN_BATCH_FLATTEN, "", &x, 1);
  ck_assert(kr_shape_is(bf, 2, (int64_t[]){2, 12}));
  ck_assert_double_eq(tensor_get_f64(bf, 23), 23);
  kr_free(o, sq, sq2, bf);
  kr_free(x, l, NULL, NULL);
}
END_TEST

/* ------------------------------------------------------------ transpose */

static Tensor *ref_permute(const Tensor *x, const int64_t *perm) {
  int64_t shape[MAXR], oc[MAXR], ic[MAXR];
  for (int32_t i = 0; i < x->ndim; i++) shape[i] = x->shape[perm[i]];
  Tensor *o = tensor_new(x->dtype, x->ndim, shape);
  size_t es = dtype_size(x->dtype);
  for (int64_t e = 0; e < o->numel; e++) {
    coords(e, x->ndim, shape, oc);
    for (int32_t i = 0; i < x->ndim; i++) ic[perm[i]] = oc[i];
    memcpy((char *)o->data + e * es, (char *)x->data + flat(x->ndim, x->shape, ic) * es, es);
  }
  return o;
}

static void check_transpose(DType dt, int32_t nd, const int64_t *shape, const int64_t *perm) {
  Tensor *x = kr_iota(dt, nd, shape);
  kt_fill(x, 7, -100, 100);
  char attrs[128] = "axes=[", *p = attrs + strlen(attrs);
  for (int32_t i = 0; i < nd; i++) p += sprintf(p, "%s%lld", i ? ", " : "", (long long)perm[i] - (i % 2 ? nd : 0));
  strcpy(p, "]");
  Tensor *o = kr_run(OP_TRANSPOSE, attrs, &x, 1), *r = ref_permute(x, perm);
  ck_assert_msg(o, "%s", kr_err);
  ck_assert_msg(tensor_equal(o, r), "transpose %s differs (dtype bits %d)", attrs, dt.bits);
  kr_free(x, o, r, NULL);
}

START_TEST(transpose_matches_reference) {
  DType dts[] = {DT_BOOL_T, DT_I8, DT_F16, DT_I32, DT_F32, DT_I64, DT_F64};
  for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
    check_transpose(dts[k], 2, (int64_t[]){37, 70}, (int64_t[]){1, 0});
    check_transpose(dts[k], 3, (int64_t[]){3, 37, 70}, (int64_t[]){0, 2, 1});
    check_transpose(dts[k], 3, (int64_t[]){5, 6, 7}, (int64_t[]){2, 0, 1});
    check_transpose(dts[k], 4, (int64_t[]){2, 3, 4, 5}, (int64_t[]){0, 2, 1, 3}); /* row copies */
    check_transpose(dts[k], 4, (int64_t[]){1, 12, 50, 64}, (int64_t[]){0, 2, 1, 3});
    check_transpose(dts[k], 4, (int64_t[]){2, 1, 33, 1}, (int64_t[]){3, 2, 1, 0});
    check_transpose(dts[k], 1, (int64_t[]){9}, (int64_t[]){0});
  }
  /* large enough to be split across threads (rows and tiles) */
  check_transpose(DT_F32, 3, (int64_t[]){4, 300, 257}, (int64_t[]){0, 2, 1});
  check_transpose(DT_F32, 4, (int64_t[]){2, 130, 12, 64}, (int64_t[]){0, 2, 1, 3});
  /* default axes reverse; rank 0; empty */
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 3, 4}), *o = kr_run(OP_TRANSPOSE, "axes=None", &x, 1);
  Tensor *r = ref_permute(x, (int64_t[]){2, 1, 0});
  ck_assert(tensor_equal(o, r));
  kr_free(x, o, r, NULL);
  x = kr_scalar(DT_F32, 3);
  o = kr_run(OP_TRANSPOSE, "axes=None", &x, 1);
  ck_assert(o && o->ndim == 0 && tensor_get_f64(o, 0) == 3);
  kr_free(x, o, NULL, NULL);
  x = kr_iota(DT_F32, 2, (int64_t[]){0, 3});
  o = kr_run(OP_TRANSPOSE, "axes=[1, 0]", &x, 1);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){3, 0}));
  kr_free(x, o, NULL, NULL);
}
END_TEST

START_TEST(transpose_errors) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 3, 4});
  ck_assert(!kr_run(OP_TRANSPOSE, "axes=[0, 1]", &x, 1));
  ck_assert(!kr_run(OP_TRANSPOSE, "axes=[0, 1, 1]", &x, 1));
  ck_assert(!kr_run(OP_TRANSPOSE, "axes=[0, 1, 3]", &x, 1));
  tensor_release(x);
}
END_TEST

/* ------------------------------------------------------------ layout_transform */

START_TEST(layout_transform_permute_and_split) {
  Tensor *x = kr_iota(DT_F32, 4, (int64_t[]){2, 6, 3, 5});
  Tensor *o = kr_run(OP_LAYOUT_TRANSFORM, "src_layout=\"NCHW\"; dst_layout=\"NHWC\"", &x, 1);
  Tensor *r = ref_permute(x, (int64_t[]){0, 2, 3, 1});
  ck_assert_msg(o && tensor_equal(o, r), "%s", kr_err);
  kr_free(o, r, NULL, NULL);
  /* NCHW → NCHW4c: C = 6 → 2 blocks of 4, the last half zero-padded */
  o = kr_run(OP_LAYOUT_TRANSFORM, "src_layout=\"NCHW\"; dst_layout=\"NCHW4c\"", &x, 1);
  ck_assert_msg(kr_shape_is(o, 5, (int64_t[]){2, 2, 3, 5, 4}), "%s", kr_err);
  for (int64_t e = 0; e < o->numel; e++) {
    int64_t c5[5];
    coords(e, 5, o->shape, c5);
    int64_t ch = c5[1] * 4 + c5[4];
    double want = ch < 6 ? tensor_get_f64(x, flat(4, x->shape, (int64_t[]){c5[0], ch, c5[2], c5[3]})) : 0;
    ck_assert_double_eq(tensor_get_f64(o, e), want);
  }
  Tensor *back = kr_run(OP_LAYOUT_TRANSFORM, "src_layout=\"NCHW4c\"; dst_layout=\"NCHW\"", &o, 1);
  ck_assert(kr_shape_is(back, 4, (int64_t[]){2, 8, 3, 5}));
  for (int64_t e = 0; e < x->numel; e++) {
    int64_t c4[4];
    coords(e, 4, x->shape, c4);
    ck_assert_double_eq(tensor_get_f64(back, flat(4, back->shape, c4)), tensor_get_f64(x, e));
  }
  ck_assert(!kr_run(OP_LAYOUT_TRANSFORM, "src_layout=\"NCHW\"; dst_layout=\"NCDW\"", &x, 1));
  ck_assert(!kr_run(OP_LAYOUT_TRANSFORM, "src_layout=\"NCH\"; dst_layout=\"NHC\"", &x, 1));
  kr_free(x, o, back, NULL);
}
END_TEST

/* ------------------------------------------------------------ concatenate, stack, split */

START_TEST(concatenate_and_stack) {
  DType dts[] = {DT_BOOL_T, DT_F16, DT_F32, DT_I64};
  for (size_t k = 0; k < 4; k++) {
    Tensor *a = kr_iota(dts[k], 3, (int64_t[]){2, 3, 4}), *b = kr_iota(dts[k], 3, (int64_t[]){2, 1, 4});
    kt_fill(a, 1, 0, 50);
    kt_fill(b, 2, 51, 99);
    Tensor *ins[3] = {a, b, a};
    for (int ax = -2; ax <= -2; ax++) {
      Tensor *o = kr_run(OP_CONCATENATE, "axis=-2", ins, 3);
      ck_assert_msg(kr_shape_is(o, 3, (int64_t[]){2, 7, 4}), "%s", kr_err);
      for (int64_t e = 0; e < o->numel; e++) {
        int64_t cc[3];
        coords(e, 3, o->shape, cc);
        const Tensor *src = cc[1] < 3 ? a : cc[1] < 4 ? b : a;
        cc[1] = cc[1] < 3 ? cc[1] : cc[1] < 4 ? 0 : cc[1] - 4;
        ck_assert_double_eq(tensor_get_f64(o, e), tensor_get_f64(src, flat(3, src->shape, cc)));
      }
      tensor_release(o);
    }
    Tensor *s_ins[2] = {a, a};
    Tensor *st = kr_run(OP_STACK, "axis=-1", s_ins, 2);
    ck_assert(kr_shape_is(st, 4, (int64_t[]){2, 3, 4, 2}));
    for (int64_t e = 0; e < st->numel; e++) ck_assert_double_eq(tensor_get_f64(st, e), tensor_get_f64(a, e / 2));
    tensor_release(st);
    st = kr_run(OP_STACK, "axis=0", s_ins, 2);
    ck_assert(kr_shape_is(st, 4, (int64_t[]){2, 2, 3, 4}));
    ck_assert_double_eq(tensor_get_f64(st, 24 + 5), tensor_get_f64(a, 5));
    ck_assert(!kr_run(OP_STACK, "axis=0", ins, 2)); /* shapes differ */
    ck_assert(!kr_run(OP_CONCATENATE, "axis=3", ins, 2));
    ck_assert(!kr_run(OP_CONCATENATE, "axis=2", ins, 2)); /* dim 1 differs */
    kr_free(a, b, st, NULL);
  }
  /* one input, and mismatched dtypes */
  Tensor *a = kr_iota(DT_F32, 1, (int64_t[]){3}), *b = kr_iota(DT_I32, 1, (int64_t[]){3});
  Tensor *o = kr_run(OP_CONCATENATE, "axis=0", &a, 1);
  ck_assert(o && tensor_equal(o, a));
  Tensor *ins[2] = {a, b};
  ck_assert(!kr_run(OP_CONCATENATE, "axis=0", ins, 2));
  kr_free(a, b, o, NULL);
}
END_TEST

START_TEST(split_sections_and_indices) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 6, 3});
  uint32_t n = 0;
  Tensor **p = kr_run_tuple(OP_SPLIT, "indices_or_sections=3; axis=1", &x, 1, &n);
  ck_assert_msg(p && n == 3, "%s", kr_err);
  for (uint32_t k = 0; k < n; k++) {
    ck_assert(kr_shape_is(p[k], 3, (int64_t[]){2, 2, 3}));
    for (int64_t e = 0; e < p[k]->numel; e++) {
      int64_t cc[3];
      coords(e, 3, p[k]->shape, cc);
      cc[1] += 2 * k;
      ck_assert_double_eq(tensor_get_f64(p[k], e), (double)flat(3, x->shape, cc));
    }
    tensor_release(p[k]);
  }
  mem_free(p);
  p = kr_run_tuple(OP_SPLIT, "indices_or_sections=[1, 4]; axis=-2", &x, 1, &n);
  ck_assert(p && n == 3);
  ck_assert(kr_shape_is(p[0], 3, (int64_t[]){2, 1, 3}) && kr_shape_is(p[1], 3, (int64_t[]){2, 3, 3}) &&
            kr_shape_is(p[2], 3, (int64_t[]){2, 2, 3}));
  ck_assert_double_eq(tensor_get_f64(p[1], 0), 3);
  ck_assert_double_eq(tensor_get_f64(p[2], 6), 18 + 12);
  for (uint32_t k = 0; k < n; k++) tensor_release(p[k]);
  mem_free(p);
  p = kr_run_tuple(OP_SPLIT, "indices_or_sections=1; axis=0", &x, 1, &n);
  ck_assert(p && n == 1 && tensor_equal(p[0], x)); /* still a tuple */
  tensor_release(p[0]);
  mem_free(p);
  ck_assert(!kr_run_tuple(OP_SPLIT, "indices_or_sections=4; axis=1", &x, 1, &n));
  ck_assert(!kr_run_tuple(OP_SPLIT, "indices_or_sections=[2, 2]; axis=1", &x, 1, &n));
  ck_assert(!kr_run_tuple(OP_SPLIT, "indices_or_sections=[6]; axis=1", &x, 1, &n));
  ck_assert(!kr_run_tuple(OP_SPLIT, "indices_or_sections=[1]; axis=3", &x, 1, &n));
  tensor_release(x);
}
END_TEST

/* ------------------------------------------------------------ broadcast, tile, repeat, reverse */

static double ref_bcast_at(const Tensor *x, int32_t nd, const int64_t *oc) {
  int64_t ic[MAXR];
  for (int32_t i = 0; i < x->ndim; i++) {
    int64_t c = oc[nd - x->ndim + i];
    ic[i] = x->shape[i] == 1 ? 0 : c;
  }
  return tensor_get_f64(x, flat(x->ndim, x->shape, ic));
}

START_TEST(broadcast_to_and_like) {
  Tensor *x = kr_iota(DT_I16, 3, (int64_t[]){3, 1, 2});
  Tensor *o = kr_run(OP_BROADCAST_TO, "shape=[2, 3, 4, 2]", &x, 1);
  ck_assert_msg(kr_shape_is(o, 4, (int64_t[]){2, 3, 4, 2}), "%s", kr_err);
  for (int64_t e = 0; e < o->numel; e++) {
    int64_t cc[4];
    coords(e, 4, o->shape, cc);
    ck_assert_double_eq(tensor_get_f64(o, e), ref_bcast_at(x, 4, cc));
  }
  tensor_release(o);
  Tensor *s = kr_scalar(DT_F32, 2.5);
  o = kr_run(OP_BROADCAST_TO, "shape=[2, 2]", &s, 1);
  ck_assert(o && tensor_get_f64(o, 3) == 2.5);
  tensor_release(o);
  Tensor *col = kr_iota(DT_F32, 2, (int64_t[]){3, 1}), *like = kr_iota(DT_F32, 1, (int64_t[]){5});
  Tensor *ins[2] = {col, like};
  o = kr_run(OP_BROADCAST_TO_LIKE, "", ins, 2);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){3, 5}));
  ck_assert_double_eq(tensor_get_f64(o, 14), 2);
  ck_assert(!kr_run(OP_BROADCAST_TO, "shape=[2, 2, 2]", &x, 1));
  ck_assert(!kr_run(OP_BROADCAST_TO, "shape=[2]", &x, 1));
  kr_free(x, s, o, NULL);
  kr_free(col, like, NULL, NULL);
}
END_TEST

START_TEST(tile_repeat_reverse) {
  Tensor *x = kr_iota(DT_F32, 2, (int64_t[]){2, 3});
  Tensor *o = kr_run(OP_TILE, "reps=[2, 1, 2]", &x, 1);
  ck_assert_msg(kr_shape_is(o, 3, (int64_t[]){2, 2, 6}), "%s", kr_err);
  for (int64_t e = 0; e < o->numel; e++) {
    int64_t cc[3];
    coords(e, 3, o->shape, cc);
    ck_assert_double_eq(tensor_get_f64(o, e), (double)((cc[1] % 2) * 3 + cc[2] % 3));
  }
  tensor_release(o);
  o = kr_run(OP_TILE, "reps=[3]", &x, 1);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){2, 9}));
  ck_assert_double_eq(tensor_get_f64(o, 9 + 7), 4);
  tensor_release(o);
  o = kr_run(OP_TILE, "reps=[0, 2]", &x, 1);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){0, 6}));
  tensor_release(o);
  o = kr_run(OP_REPEAT, "repeats=2; axis=-1", &x, 1);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){2, 6}));
  double want[] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
  for (int i = 0; i < 12; i++) ck_assert_double_eq(tensor_get_f64(o, i), want[i]);
  tensor_release(o);
  o = kr_run(OP_REPEAT, "repeats=3; axis=0", &x, 1);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){6, 3}));
  ck_assert_double_eq(tensor_get_f64(o, 3 * 3), 3);
  tensor_release(o);
  ck_assert(!kr_run(OP_REPEAT, "repeats=2", &x, 1)); /* axis None */
  o = kr_run(OP_REVERSE, "axis=-1", &x, 1);
  double rev[] = {2, 1, 0, 5, 4, 3};
  for (int i = 0; i < 6; i++) ck_assert_double_eq(tensor_get_f64(o, i), rev[i]);
  tensor_release(o);
  o = kr_run(OP_REVERSE, "axis=0", &x, 1);
  ck_assert_double_eq(tensor_get_f64(o, 0), 3);
  ck_assert(!kr_run(OP_REVERSE, "axis=2", &x, 1));
  kr_free(x, o, NULL, NULL);
}
END_TEST

/* ------------------------------------------------------------ cumsum, cumprod */

static Tensor *ref_scan(const Tensor *x, int axis, bool prod, bool exclusive) {
  Tensor *o = tensor_new(x->dtype, x->ndim, x->shape);
  int64_t outer = 1, n = x->shape[axis], inner = 1;
  for (int i = 0; i < axis; i++) outer *= x->shape[i];
  for (int i = axis + 1; i < x->ndim; i++) inner *= x->shape[i];
  for (int64_t a = 0; a < outer; a++)
    for (int64_t i = 0; i < inner; i++) {
      double acc = prod ? 1 : 0;
      for (int64_t j = 0; j < n; j++) {
        int64_t at = (a * n + j) * inner + i;
        double v = tensor_get_f64(x, at);
        if (exclusive) tensor_set_f64(o, at, acc);
        acc = prod ? acc * v : acc + v;
        if (!exclusive) tensor_set_f64(o, at, acc);
      }
    }
  return o;
}

START_TEST(cumsum_cumprod) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 3, 4});
  kt_fill(x, 3, -2, 2);
  for (int ax = 0; ax < 3; ax++)
    for (int ex = 0; ex < 2; ex++)
      for (int pr = 0; pr < 2; pr++) {
        char attrs[64];
        snprintf(attrs, sizeof attrs, "axis=%d; exclusive=%s", ax - (ax == 2 ? 3 : 0), ex ? "True" : "False");
        Tensor *o = kr_run(pr ? OP_CUMPROD : OP_CUMSUM, attrs, &x, 1), *r = ref_scan(x, ax, pr, ex);
        ck_assert_msg(o && kt_rel_err(o, r) < 1e-6, "%s %s: %s", pr ? "cumprod" : "cumsum", attrs, kr_err);
        kr_free(o, r, NULL, NULL);
      }
  /* axis None flattens */
  Tensor *o = kr_run(OP_CUMSUM, "", &x, 1);
  ck_assert(kr_shape_is(o, 1, (int64_t[]){24}));
  tensor_release(o);
  /* int8 wraps; dtype attr casts first */
  Tensor *b = kr_make(DT_I8, 1, (int64_t[]){3}, (double[]){100, 100, -56});
  o = kr_run(OP_CUMSUM, "axis=0", &b, 1);
  ck_assert_int_eq(tensor_get_i64(o, 1), -56);
  ck_assert_int_eq(tensor_get_i64(o, 2), -112);
  tensor_release(o);
  o = kr_run(OP_CUMSUM, "axis=0; dtype=\"int32\"", &b, 1);
  ck_assert(o && o->dtype.bits == 32 && tensor_get_i64(o, 1) == 200 && tensor_get_i64(o, 2) == 144);
  tensor_release(o);
  Tensor *bl = kr_make(DT_BOOL_T, 1, (int64_t[]){3}, (double[]){0, 1, 1});
  o = kr_run(OP_CUMSUM, "axis=0", &bl, 1);
  ck_assert(o && tensor_get_i64(o, 0) == 0 && tensor_get_i64(o, 2) == 1);
  tensor_release(o);
  Tensor *h = kr_make(DT_F16, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
  o = kr_run(OP_CUMPROD, "axis=0; exclusive=True", &h, 1);
  ck_assert(o && dtype_eq(o->dtype, DT_F16) && tensor_get_f64(o, 0) == 1 && tensor_get_f64(o, 3) == 6);
  ck_assert(!kr_run(OP_CUMSUM, "axis=3", &x, 1));
  kr_free(o, h, bl, NULL);
  kr_free(x, b, NULL, NULL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("k_shape");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, reshape_special_values);
  tcase_add_test(t, reshape_errors);
  tcase_add_test(t, reverse_reshape_special_values);
  tcase_add_test(t, reverse_reshape_errors_and_annotations);
  tcase_add_test(t, reshape_view_ownership);
  tcase_add_test(t, reshape_likes);
  tcase_add_test(t, transpose_matches_reference);
  tcase_add_test(t, transpose_errors);
  tcase_add_test(t, layout_transform_permute_and_split);
  tcase_add_test(t, concatenate_and_stack);
  tcase_add_test(t, split_sections_and_indices);
  tcase_add_test(t, broadcast_to_and_like);
  tcase_add_test(t, tile_repeat_reverse);
  tcase_add_test(t, cumsum_cumprod);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  return unit_run(suite());
}
