/* tests/unit/check_k_index.c — slicing, gathering, selection, creation and
 * sorting kernels (ops/kernels/k_index.c) against plain loops and exact values.
 *
 * Cases follow spec/ops.md §6.4, §6.6 and §13: strided_slice's
 * canonicalisation (negative indices, None entries, the s < 0 end quirk,
 * slice_mode="size", axes) and its errors; take's clip/wrap modes with
 * negative indices and batch_dims; where with rank-0 and size-1 broadcasting;
 * stable sorting with ties and NaN.
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

static void expect_vals(const Tensor *t, const double *want, int64_t n) {
  ck_assert_msg(t, "kernel failed: %s", kr_err);
  ck_assert_int_eq(t->numel, n);
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(tensor_get_f64(t, i) == want[i] || (isnan(want[i]) && isnan(tensor_get_f64(t, i))),
                  "element %lld: got %g, want %g", (long long)i, tensor_get_f64(t, i), want[i]);
}

static void slice1(const Tensor *x, const char *attrs, const double *want, int64_t n) {
  Tensor *o = kr_run(OP_STRIDED_SLICE, attrs, (Tensor **)&x, 1);
  ck_assert_msg(o, "%s: %s", attrs, kr_err);
  expect_vals(o, want, n);
  tensor_release(o);
}

START_TEST(strided_slice_1d) {
  Tensor *x = kr_iota(DT_I32, 1, (int64_t[]){10});
  slice1(x, "begin=[1]; end=[8]; strides=[3]", (double[]){1, 4, 7}, 3);
  slice1(x, "begin=[8]; end=[1]; strides=[-3]", (double[]){8, 5, 2}, 3);
  slice1(x, "begin=[-3]; end=[None]; strides=[1]", (double[]){7, 8, 9}, 3);
  slice1(x, "begin=[None]; end=[None]; strides=[-4]", (double[]){9, 5, 1}, 3);       /* end None → 0, excluded */
  slice1(x, "begin=[None]; end=[None]; strides=[-3]", (double[]){9, 6, 3}, 3);
  slice1(x, "begin=[2]; end=[-11]; strides=[-1]", (double[]){2, 1, 0}, 3);           /* reach index 0 */
  slice1(x, "begin=[-100]; end=[100]; strides=[4]", (double[]){0, 4, 8}, 3);         /* clamped */
  slice1(x, "begin=[5]; end=[5]; strides=[1]", NULL, 0);                             /* empty, allowed */
  slice1(x, "begin=[2]; end=[3]; strides=[7]; slice_mode=\"size\"", (double[]){2, 3, 4}, 3);
  slice1(x, "begin=[7]; end=[-1]; slice_mode=\"size\"", (double[]){7, 8, 9}, 3);
  ck_assert(!kr_run(OP_STRIDED_SLICE, "begin=[5]; end=[2]; strides=[1]", &x, 1)); /* not empty: an error */
  ck_assert(strstr(kr_err, "past end"));
  ck_assert(!kr_run(OP_STRIDED_SLICE, "begin=[2]; end=[5]; strides=[-1]", &x, 1));
  ck_assert(!kr_run(OP_STRIDED_SLICE, "begin=[2]; end=[5]; strides=[0]", &x, 1));
  ck_assert(!kr_run(OP_STRIDED_SLICE, "begin=[1, 1]; end=[2, 2]", &x, 1));
  ck_assert(!kr_run(OP_STRIDED_SLICE, "begin=[1]; end=[2]; slice_mode=\"middle\"", &x, 1));
  tensor_release(x);
}
END_TEST

START_TEST(strided_slice_nd_and_axes) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){3, 4, 5});
  Tensor *o = kr_run(OP_STRIDED_SLICE, "begin=[1, -1]; end=[3, 0]; strides=[1, -2]", &x, 1);
  ck_assert_msg(kr_shape_is(o, 3, (int64_t[]){2, 2, 5}), "%s", kr_err);
  for (int64_t a = 0; a < 2; a++)
    for (int64_t b = 0; b < 2; b++)
      for (int64_t c = 0; c < 5; c++)
        ck_assert_double_eq(tensor_get_f64(o, (a * 2 + b) * 5 + c), (double)(((1 + a) * 4 + (3 - 2 * b)) * 5 + c));
  tensor_release(o);
  o = kr_run(OP_STRIDED_SLICE, "begin=[1, 0]; end=[4, 2]; strides=[2]; axes=[2, 0]", &x, 1);
  ck_assert_msg(kr_shape_is(o, 3, (int64_t[]){1, 4, 2}), "%s", kr_err); /* one stride for both axes */
  ck_assert_double_eq(tensor_get_f64(o, 0), 1);
  ck_assert_double_eq(tensor_get_f64(o, 1), 3);
  ck_assert_double_eq(tensor_get_f64(o, 7), 18);
  tensor_release(o);
  ck_assert(!kr_run(OP_STRIDED_SLICE, "begin=[1]; end=[4, 2]; axes=[2, 0]", &x, 1));
  ck_assert(!kr_run(OP_STRIDED_SLICE, "begin=[1, 1]; end=[2, 2]; axes=[0, 0]", &x, 1));
  ck_assert(!kr_run(OP_STRIDED_SLICE, "begin=[1]; end=[2]; axes=[3]", &x, 1));
  tensor_release(x);
}
END_TEST

START_TEST(slice_like_cases) {
  Tensor *x = kr_iota(DT_I64, 2, (int64_t[]){3, 4}), *l = kr_iota(DT_F32, 2, (int64_t[]){2, 2});
  Tensor *ins[2] = {x, l};
  Tensor *o = kr_run(OP_SLICE_LIKE, "axes=None", ins, 2);
  expect_vals(o, (double[]){0, 1, 4, 5}, 4);
  tensor_release(o);
  o = kr_run(OP_SLICE_LIKE, "axes=[-1]", ins, 2);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){3, 2}));
  expect_vals(o, (double[]){0, 1, 4, 5, 8, 9}, 6);
  tensor_release(o);
  Tensor *big = kr_iota(DT_F32, 2, (int64_t[]){4, 4});
  ins[1] = big;
  ck_assert(!kr_run(OP_SLICE_LIKE, "axes=None", ins, 2));
  kr_free(x, l, big, NULL);
}
END_TEST

/* ------------------------------------------------------------ take */

START_TEST(take_modes) {
  Tensor *x = kr_iota(DT_F32, 2, (int64_t[]){3, 4});
  Tensor *ix = kr_make(DT_I64, 1, (int64_t[]){5}, (double[]){0, 2, -1, 7, -5});
  Tensor *ins[2] = {x, ix};
  Tensor *o = kr_run(OP_TAKE, "axis=0", ins, 2);
  ck_assert_msg(kr_shape_is(o, 2, (int64_t[]){5, 4}), "%s", kr_err);
  double rows_clip[] = {0, 2, 0, 2, 0}; /* negative → 0, past the end → n−1 */
  for (int i = 0; i < 5; i++)
    for (int k = 0; k < 4; k++) ck_assert_double_eq(tensor_get_f64(o, i * 4 + k), rows_clip[i] * 4 + k);
  tensor_release(o);
  o = kr_run(OP_TAKE, "axis=0; mode=\"wrap\"", ins, 2);
  double rows_wrap[] = {0, 2, 2, 1, 1};
  for (int i = 0; i < 5; i++) ck_assert_double_eq(tensor_get_f64(o, i * 4), rows_wrap[i] * 4);
  tensor_release(o);
  o = kr_run(OP_TAKE, "axis=-1; mode=\"fast\"", ins, 2);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){3, 5}));
  expect_vals(o, (double[]){0, 2, 0, 3, 0, 4, 6, 4, 7, 4, 8, 10, 8, 11, 8}, 15);
  tensor_release(o);
  o = kr_run(OP_TAKE, "", ins, 2); /* flattened */
  expect_vals(o, (double[]){0, 2, 0, 7, 0}, 5);
  tensor_release(o);
  ck_assert(!kr_run(OP_TAKE, "axis=0; mode=\"nope\"", ins, 2));
  ck_assert(!kr_run(OP_TAKE, "axis=2", ins, 2));
  Tensor *fi = kr_make(DT_F32, 1, (int64_t[]){1}, (double[]){0});
  ins[1] = fi;
  ck_assert(!kr_run(OP_TAKE, "axis=0", ins, 2));
  kr_free(x, ix, fi, NULL);
}
END_TEST

START_TEST(take_batch_dims_and_dtypes) {
  /* batch_dims=1: out[b, j, :] = x[b, idx[b, j], :] */
  Tensor *x = kr_iota(DT_I8, 3, (int64_t[]){2, 3, 2});
  Tensor *ix = kr_make(DT_U8, 2, (int64_t[]){2, 2}, (double[]){2, 0, 1, 1});
  Tensor *ins[2] = {x, ix};
  Tensor *o = kr_run(OP_TAKE, "axis=1; batch_dims=1", ins, 2);
  ck_assert_msg(kr_shape_is(o, 3, (int64_t[]){2, 2, 2}), "%s", kr_err);
  expect_vals(o, (double[]){4, 5, 0, 1, 8, 9, 8, 9}, 8);
  tensor_release(o);
  /* GPT-2's embedding lookup: (V, D) float32 table, (1, T) int64 ids, axis 0 */
  Tensor *emb = kr_iota(DT_F32, 2, (int64_t[]){7, 3});
  Tensor *ids = kr_make(DT_I64, 2, (int64_t[]){1, 4}, (double[]){6, 0, 3, 3});
  ins[0] = emb;
  ins[1] = ids;
  o = kr_run(OP_TAKE, "axis=0", ins, 2);
  ck_assert(kr_shape_is(o, 3, (int64_t[]){1, 4, 3}));
  expect_vals(o, (double[]){18, 19, 20, 0, 1, 2, 9, 10, 11, 9, 10, 11}, 12);
  tensor_release(o);
  /* empty axis with indices is an error; empty indices fine */
  Tensor *e = kr_iota(DT_F32, 2, (int64_t[]){0, 3});
  ins[0] = e;
  ck_assert(!kr_run(OP_TAKE, "axis=0", ins, 2));
  kr_free(x, ix, emb, ids);
  tensor_release(e);
}
END_TEST

/* ------------------------------------------------------------ gather, gather_nd */

START_TEST(gather_reference) {
  Tensor *x = kr_iota(DT_F64, 3, (int64_t[]){2, 3, 4});
  Tensor *ix = kr_make(DT_I32, 3, (int64_t[]){2, 2, 4}, NULL);
  kt_fill(ix, 5, 0, 2);
  Tensor *ins[2] = {x, ix};
  Tensor *o = kr_run(OP_GATHER, "axis=1", ins, 2);
  ck_assert_msg(kr_shape_is(o, 3, (int64_t[]){2, 2, 4}), "%s", kr_err);
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 4; c++) {
        int64_t k = tensor_get_i64(ix, (a * 2 + b) * 4 + c);
        ck_assert_double_eq(tensor_get_f64(o, (a * 2 + b) * 4 + c), (double)((a * 3 + k) * 4 + c));
      }
  tensor_release(o);
  tensor_set_i64(ix, 3, 3);
  ck_assert(!kr_run(OP_GATHER, "axis=1", ins, 2));
  ck_assert(strstr(kr_err, "out of range"));
  ck_assert(!kr_run(OP_GATHER, "axis=None", ins, 2));
  kr_free(x, ix, NULL, NULL);
}
END_TEST

START_TEST(gather_nd_cases) {
  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 3, 4});
  /* M = 2 index dims, Y = (3,) */
  Tensor *ix = kr_make(DT_I64, 2, (int64_t[]){2, 3}, (double[]){1, 0, 1, 2, 0, 1});
  Tensor *ins[2] = {x, ix};
  Tensor *o = kr_run(OP_GATHER_ND, "", ins, 2);
  ck_assert_msg(kr_shape_is(o, 2, (int64_t[]){3, 4}), "%s", kr_err);
  double rows[] = {1 * 3 + 2, 0 * 3 + 0, 1 * 3 + 1};
  for (int y = 0; y < 3; y++)
    for (int k = 0; k < 4; k++) ck_assert_double_eq(tensor_get_f64(o, y * 4 + k), rows[y] * 4 + k);
  tensor_release(o);
  /* batch_dims = 1: indices (1, 2, 2) → out (2, 2, 4): x[b, idx[0, b, y], :] */
  Tensor *ib = kr_make(DT_I32, 3, (int64_t[]){1, 2, 2}, (double[]){2, 0, 1, 1});
  ins[1] = ib;
  o = kr_run(OP_GATHER_ND, "batch_dims=1", ins, 2);
  ck_assert_msg(kr_shape_is(o, 3, (int64_t[]){2, 2, 4}), "%s", kr_err);
  ck_assert_double_eq(tensor_get_f64(o, 0), 8);
  ck_assert_double_eq(tensor_get_f64(o, 4), 0);
  ck_assert_double_eq(tensor_get_f64(o, 8), 16);
  ck_assert_double_eq(tensor_get_f64(o, 12), 16);
  tensor_release(o);
  tensor_set_i64(ib, 0, 3);
  ck_assert(!kr_run(OP_GATHER_ND, "batch_dims=1", ins, 2));
  kr_free(x, ix, ib, NULL);
}
END_TEST

/* ------------------------------------------------------------ where, one_hot */

START_TEST(where_broadcasting) {
  Tensor *c = kr_make(DT_BOOL_T, 2, (int64_t[]){2, 1}, (double[]){1, 0});
  Tensor *x = kr_iota(DT_I64, 1, (int64_t[]){3}), *y = kr_scalar(DT_I64, -1);
  Tensor *ins[3] = {c, x, y};
  Tensor *o = kr_run(OP_WHERE, "", ins, 3);
  ck_assert_msg(kr_shape_is(o, 2, (int64_t[]){2, 3}), "%s", kr_err);
  expect_vals(o, (double[]){0, 1, 2, -1, -1, -1}, 6);
  tensor_release(o);
  /* rank-0 condition; float condition with NaN and -0 (ordered: false) */
  Tensor *s = kr_scalar(DT_BOOL_T, 1);
  ins[0] = s;
  o = kr_run(OP_WHERE, "", ins, 3);
  expect_vals(o, (double[]){0, 1, 2}, 3);
  tensor_release(o);
  Tensor *fc = kr_make(DT_F32, 1, (int64_t[]){3}, (double[]){NAN, -0.0, 0.5});
  ins[0] = fc;
  o = kr_run(OP_WHERE, "", ins, 3);
  expect_vals(o, (double[]){-1, -1, 2}, 3);
  tensor_release(o);
  /* same shapes everywhere (GPT-2: where(less(x, 0), x + 50257, x)) */
  Tensor *ids = kr_make(DT_I64, 1, (int64_t[]){3}, (double[]){-1, 4, -2});
  Tensor *neg = kr_make(DT_BOOL_T, 1, (int64_t[]){3}, (double[]){1, 0, 1});
  Tensor *fix = kr_make(DT_I64, 1, (int64_t[]){3}, (double[]){50256, 50261, 50255});
  Tensor *g[3] = {neg, fix, ids};
  o = kr_run(OP_WHERE, "", g, 3);
  expect_vals(o, (double[]){50256, 4, 50255}, 3);
  tensor_release(o);
  Tensor *xf = kr_iota(DT_F32, 1, (int64_t[]){3});
  Tensor *bad[3] = {neg, xf, ids};
  ck_assert(!kr_run(OP_WHERE, "", bad, 3));
  Tensor *x4 = kr_iota(DT_I64, 1, (int64_t[]){4});
  Tensor *bad2[3] = {neg, x4, ids};
  ck_assert(!kr_run(OP_WHERE, "", bad2, 3));
  kr_free(c, x, y, s);
  kr_free(fc, ids, neg, fix);
  kr_free(xf, x4, NULL, NULL);
}
END_TEST

/* the same-shape fast path (one-byte condition, 4-byte elements), with a zero operand
 * (runtime/tensor.h TENSOR_ZERO) that is never read; long enough for several chunks */
START_TEST(where_fast_same_shape) {
  int64_t n = 100003, sh[1] = {n};
  Tensor *c = tensor_new(DT_BOOL_T, 1, sh), *x = kr_iota(DT_F32, 1, sh), *y = kr_iota(DT_I32, 1, sh);
  Tensor *yf = kr_iota(DT_F32, 1, sh), *z = tensor_new_zero(DT_F32, 1, sh);
  for (int64_t i = 0; i < n; i++) ((uint8_t *)c->data)[i] = (uint8_t)(i % 3 == 0);
  for (int64_t i = 0; i < n; i++) ((float *)yf->data)[i] = -(float)i - 0.5f;
  Tensor *ins[3] = {c, x, yf};
  Tensor *o = kr_run(OP_WHERE, "", ins, 3);
  ck_assert_msg(o, "%s", kr_err);
  for (int64_t i = 0; i < n; i++)
    ck_assert(((float *)o->data)[i] == (i % 3 == 0 ? (float)i : -(float)i - 0.5f));
  tensor_release(o);
  ins[1] = z; /* where(c, 0, y): the ReLU gradient's form */
  o = kr_run(OP_WHERE, "", ins, 3);
  for (int64_t i = 0; i < n; i++) ck_assert(((float *)o->data)[i] == (i % 3 == 0 ? 0.0f : -(float)i - 0.5f));
  ck_assert(!signbit(((float *)o->data)[0]));
  tensor_release(o);
  ins[1] = x, ins[2] = z; /* where(c, x, 0) */
  o = kr_run(OP_WHERE, "", ins, 3);
  for (int64_t i = 0; i < n; i++) ck_assert(((float *)o->data)[i] == (i % 3 == 0 ? (float)i : 0.0f));
  tensor_release(o);
  ins[1] = z; /* where(c, 0, 0) */
  o = kr_run(OP_WHERE, "", ins, 3);
  for (int64_t i = 0; i < n; i += 101) ck_assert(((float *)o->data)[i] == 0.0f);
  tensor_release(o);
  Tensor *xi = kr_iota(DT_I32, 1, sh); /* int32 takes the same path */
  ins[1] = xi, ins[2] = y;
  o = kr_run(OP_WHERE, "", ins, 3);
  for (int64_t i = 0; i < n; i++) ck_assert(((int32_t *)o->data)[i] == (int32_t)i);
  tensor_release(o);
  kr_free(c, x, y, yf);
  kr_free(z, xi, NULL, NULL);
}
END_TEST

/* a one-element condition (the power rule's where(equal(2f, 0f), zeros_like(g), ..)) gives the
 * picked operand itself when it has the result's shape; a picked operand that the other one
 * broadcasts past is copied out to the result's shape */
START_TEST(where_scalar_condition_picks) {
  int64_t sh[2] = {4, 5}, row[1] = {5};
  Tensor *x = kr_iota(DT_F32, 2, sh), *z = tensor_new_zero(DT_F32, 2, sh), *r = kr_iota(DT_F32, 1, row);
  Tensor *t = kr_scalar(DT_BOOL_T, 1), *f = kr_scalar(DT_BOOL_T, 0);
  Tensor *t1 = kr_make(DT_F32, 2, (int64_t[]){1, 1}, (double[]){0.5}); /* one element, rank 2, float */
  Tensor *ins[3] = {f, z, x};
  Tensor *o = kr_run(OP_WHERE, "", ins, 3);
  ck_assert_ptr_eq(o, x); /* the same tensor, retained */
  tensor_release(o);
  ins[0] = t1;
  o = kr_run(OP_WHERE, "", ins, 3);
  ck_assert_ptr_eq(o, z);
  ck_assert(tensor_is_zero(o));
  tensor_release(o);
  ins[0] = t, ins[1] = r, ins[2] = x; /* r picked, but the result is x's shape: copied rows */
  o = kr_run(OP_WHERE, "", ins, 3);
  ck_assert(o && o != r && kr_shape_is(o, 2, sh));
  expect_vals(o, (double[]){0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4}, 20);
  tensor_release(o);
  ck_assert_int_eq(x->refcount, 1);
  ck_assert_int_eq(z->refcount, 1);
  kr_free(x, z, r, t);
  kr_free(f, t1, NULL, NULL);
}
END_TEST

/* add(0, x), add(x, 0), subtract(x, 0) with a shared zero give x itself; anything else
 * (broadcasting past x's shape, subtract(0, x)) computes */
START_TEST(zero_operand_add) {
  int64_t sh[2] = {4, 5}, row[1] = {5};
  Tensor *x = kr_iota(DT_F32, 2, sh), *z = tensor_new_zero(DT_F32, 2, sh), *zr = tensor_new_zero(DT_F32, 1, row);
  Tensor *r = kr_iota(DT_F32, 1, row);
  Tensor *ins[2] = {z, x};
  Tensor *o = kr_run(OP_ADD, "", ins, 2);
  ck_assert_ptr_eq(o, x); /* the same tensor, retained */
  tensor_release(o);
  ins[0] = x, ins[1] = z;
  o = kr_run(OP_ADD, "", ins, 2);
  ck_assert_ptr_eq(o, x);
  tensor_release(o);
  o = kr_run(OP_SUBTRACT, "", ins, 2);
  ck_assert_ptr_eq(o, x);
  tensor_release(o);
  ins[0] = x, ins[1] = zr; /* a broadcast zero that x covers */
  o = kr_run(OP_ADD, "", ins, 2);
  ck_assert_ptr_eq(o, x);
  tensor_release(o);
  ins[0] = z, ins[1] = x;
  o = kr_run(OP_SUBTRACT, "", ins, 2); /* 0 - x computes */
  ck_assert(o && o != x && tensor_get_f64(o, 7) == -7.0);
  tensor_release(o);
  ins[0] = r, ins[1] = z; /* the result is bigger than r: computes */
  o = kr_run(OP_ADD, "", ins, 2);
  ck_assert(o && kr_shape_is(o, 2, sh) && tensor_get_f64(o, 13) == 3.0 && !tensor_is_zero(o));
  tensor_release(o);
  ck_assert_int_eq(x->refcount, 1);
  kr_free(x, z, zr, r);
}
END_TEST

/* the -0 scan behind add(0, x) = x covers every chunk of a tensor big enough to be shared
 * out among threads: a -0 anywhere makes the kernel compute (0 + -0 = +0) */
START_TEST(zero_operand_add_scans_every_chunk) {
  int64_t n = 1000003, sh[1] = {n};
  Tensor *x = kr_iota(DT_F32, 1, sh), *z = tensor_new_zero(DT_F32, 1, sh);
  Tensor *ins[2] = {z, x};
  Tensor *o = kr_run(OP_ADD, "", ins, 2);
  ck_assert_ptr_eq(o, x); /* no -0: x itself */
  tensor_release(o);
  int64_t at[3] = {1, n / 2 + 7, n - 1};
  for (int k = 0; k < 3; k++) {
    float keep = ((float *)x->data)[at[k]];
    ((float *)x->data)[at[k]] = -0.0f;
    o = kr_run(OP_ADD, "", ins, 2);
    ck_assert_msg(o && o != x, "-0 at %lld not seen", (long long)at[k]);
    ck_assert(!signbit(((float *)o->data)[at[k]]) && ((float *)o->data)[at[k]] == 0.0f);
    tensor_release(o);
    ((float *)x->data)[at[k]] = keep;
  }
  kr_free(x, z, NULL, NULL);
}
END_TEST

/* zeros_like and zeros give shared zeros */
START_TEST(zeros_are_shared) {
  int64_t sh[2] = {3, 7};
  Tensor *x = kr_iota(DT_F32, 2, sh);
  Tensor *o = kr_run(OP_ZEROS_LIKE, "", &x, 1);
  ck_assert(o && tensor_is_zero(o) && kr_shape_is(o, 2, sh) && tensor_get_f64(o, 20) == 0.0);
  tensor_release(o);
  o = kr_run(OP_ZEROS, "shape=[3, 7]; dtype=\"int64\"", NULL, 0);
  ck_assert_msg(o, "%s", kr_err);
  ck_assert(tensor_is_zero(o) && kr_shape_is(o, 2, sh) && tensor_get_i64(o, 20) == 0);
  tensor_release(o);
  tensor_release(x);
}
END_TEST

START_TEST(one_hot_cases) {
  Tensor *ix = kr_make(DT_I32, 1, (int64_t[]){4}, (double[]){0, 2, -1, 5});
  Tensor *on = kr_scalar(DT_F32, 5), *off = kr_scalar(DT_F32, -1);
  Tensor *ins[3] = {ix, on, off};
  Tensor *o = kr_run(OP_ONE_HOT, "depth=3", ins, 3);
  ck_assert_msg(kr_shape_is(o, 2, (int64_t[]){4, 3}), "%s", kr_err);
  expect_vals(o, (double[]){5, -1, -1, -1, -1, 5, -1, -1, -1, -1, -1, -1}, 12);
  tensor_release(o);
  o = kr_run(OP_ONE_HOT, "depth=3; axis=0; dtype=\"int8\"", ins, 3);
  ck_assert(kr_shape_is(o, 2, (int64_t[]){3, 4}) && o->dtype.bits == 8);
  expect_vals(o, (double[]){5, -1, -1, -1, -1, -1, -1, -1, -1, 5, -1, -1}, 12);
  tensor_release(o);
  ck_assert(!kr_run(OP_ONE_HOT, "depth=0", ins, 3));
  ck_assert(!kr_run(OP_ONE_HOT, "depth=2; axis=3", ins, 3));
  kr_free(ix, on, off, NULL);
}
END_TEST

/* ------------------------------------------------------------ creation */

START_TEST(arange_shape_of_size) {
  Tensor *a = kr_scalar(DT_F32, 1), *b = kr_scalar(DT_F32, 2.5), *s = kr_scalar(DT_F32, 0.5);
  Tensor *ins[3] = {a, b, s};
  Tensor *o = kr_run(OP_ARANGE, "dtype=\"float32\"", ins, 3);
  expect_vals(o, (double[]){1, 1.5, 2}, 3);
  tensor_release(o);
  tensor_set_f64(s, 0, -0.5);
  ck_assert(!kr_run(OP_ARANGE, "dtype=\"float32\"", ins, 3)); /* empty */
  tensor_set_f64(s, 0, 0);
  ck_assert(!kr_run(OP_ARANGE, "dtype=\"float32\"", ins, 3));
  ck_assert_msg(strstr(kr_err, "step must not be 0"), "%s", kr_err);
  /* bounds the relation did not see (only attributes are read there): an
   * infinite, NaN or huge range is a clean error, not a huge allocation */
  tensor_set_f64(s, 0, 1);
  tensor_set_f64(b, 0, INFINITY);
  ck_assert(!kr_run(OP_ARANGE, "dtype=\"float32\"", ins, 3));
  ck_assert_msg(strstr(kr_err, "the range is too long (start 1, stop inf, step 1)"), "%s", kr_err);
  tensor_set_f64(b, 0, NAN);
  ck_assert(!kr_run(OP_ARANGE, "dtype=\"float32\"", ins, 3));
  ck_assert_msg(strstr(kr_err, "the length of the range is not a number"), "%s", kr_err);
  tensor_set_f64(b, 0, 1e30);
  ck_assert(!kr_run(OP_ARANGE, "dtype=\"float32\"", ins, 3));
  ck_assert_msg(strstr(kr_err, "the range is too long"), "%s", kr_err);
  tensor_set_f64(a, 0, -INFINITY);
  tensor_set_f64(b, 0, INFINITY);
  ck_assert(!kr_run(OP_ARANGE, "dtype=\"float32\"", ins, 3));
  ck_assert_msg(strstr(kr_err, "not a number") || strstr(kr_err, "too long"), "%s", kr_err);
  kr_free(a, b, s, NULL);
  a = kr_scalar(DT_I64, 10);
  b = kr_scalar(DT_I64, 1);
  s = kr_scalar(DT_I64, -4);
  Tensor *ii[3] = {a, b, s};
  o = kr_run(OP_ARANGE, "dtype=\"int64\"", ii, 3);
  expect_vals(o, (double[]){10, 6, 2}, 3);
  tensor_release(o);
  kr_free(a, b, s, NULL);

  Tensor *x = kr_iota(DT_F32, 3, (int64_t[]){2, 0, 7});
  o = kr_run(OP_SHAPE_OF, "", &x, 1);
  ck_assert(o && o->dtype.bits == 32 && o->dtype.code == DT_INT);
  expect_vals(o, (double[]){2, 0, 7}, 3);
  tensor_release(o);
  o = kr_run(OP_SHAPE_OF, "dtype=\"int64\"", &x, 1);
  ck_assert(o && o->dtype.bits == 64);
  tensor_release(o);
  o = kr_run(OP_NDARRAY_SIZE, "dtype=\"int64\"", &x, 1);
  ck_assert(o && o->ndim == 0 && tensor_get_i64(o, 0) == 0);
  tensor_release(o);
  Tensor *sc = kr_scalar(DT_F32, 4);
  o = kr_run(OP_SHAPE_OF, "", &sc, 1);
  ck_assert(o && o->ndim == 0); /* TVM quirk: rank-0 result */
  tensor_release(o);
  o = kr_run(OP_NDARRAY_SIZE, "", &sc, 1);
  ck_assert(o && tensor_get_i64(o, 0) == 1);
  kr_free(o, x, sc, NULL);
}
END_TEST

/* ------------------------------------------------------------ sorting */

START_TEST(sort_argsort_topk) {
  Tensor *x = kr_make(DT_F32, 2, (int64_t[]){2, 5}, (double[]){3, 1, NAN, 1, 2, -1, 7, 7, 0, 7});
  Tensor *o = kr_run(OP_ARGSORT, "", &x, 1);
  ck_assert_msg(o && o->dtype.bits == 32, "%s", kr_err);
  expect_vals(o, (double[]){1, 3, 4, 0, 2, 0, 3, 1, 2, 4}, 10); /* stable; NaN last */
  tensor_release(o);
  o = kr_run(OP_ARGSORT, "is_ascend=False; dtype=\"int64\"", &x, 1);
  ck_assert(o && o->dtype.bits == 64);
  expect_vals(o, (double[]){2, 0, 4, 1, 3, 1, 2, 4, 3, 0}, 10); /* ties keep their order */
  tensor_release(o);
  o = kr_run(OP_SORT, "axis=0", &x, 1);
  expect_vals(o, (double[]){-1, 1, 7, 0, 2, 3, 7, NAN, 1, 7}, 10);
  tensor_release(o);
  uint32_t n = 0;
  Tensor **t = kr_run_tuple(OP_TOPK, "k=2", &x, 1, &n);
  ck_assert_msg(t && n == 2, "%s", kr_err);
  ck_assert(kr_shape_is(t[0], 2, (int64_t[]){2, 2}));
  expect_vals(t[0], (double[]){NAN, 3, 7, 7}, 4);
  expect_vals(t[1], (double[]){2, 0, 1, 2}, 4);
  kr_free(t[0], t[1], NULL, NULL);
  mem_free(t);
  o = kr_run(OP_TOPK, "k=0; ret_type=\"values\"; is_ascend=True", &x, 1); /* k < 1: whole axis */
  ck_assert(kr_shape_is(o, 2, (int64_t[]){2, 5}));
  expect_vals(o, (double[]){1, 1, 2, 3, NAN, -1, 0, 7, 7, 7}, 10);
  tensor_release(o);
  o = kr_run(OP_TOPK, "k=1; ret_type=\"indices\"; axis=0", &x, 1);
  expect_vals(o, (double[]){0, 1, 0, 0, 1}, 5);
  tensor_release(o);
  ck_assert(!kr_run(OP_TOPK, "ret_type=\"all\"", &x, 1));
  tensor_release(x);
  /* int64 beyond 2^53 sorts exactly */
  Tensor *big = kr_make(DT_I64, 1, (int64_t[]){3}, NULL);
  tensor_set_i64(big, 0, ((int64_t)1 << 60) + 1);
  tensor_set_i64(big, 1, (int64_t)1 << 60);
  tensor_set_i64(big, 2, -5);
  o = kr_run(OP_ARGSORT, "", &big, 1);
  expect_vals(o, (double[]){2, 1, 0}, 3);
  kr_free(o, big, NULL, NULL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("k_index");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, strided_slice_1d);
  tcase_add_test(t, strided_slice_nd_and_axes);
  tcase_add_test(t, slice_like_cases);
  tcase_add_test(t, take_modes);
  tcase_add_test(t, take_batch_dims_and_dtypes);
  tcase_add_test(t, gather_reference);
  tcase_add_test(t, gather_nd_cases);
  tcase_add_test(t, where_broadcasting);
  tcase_add_test(t, where_fast_same_shape);
  tcase_add_test(t, where_scalar_condition_picks);
  tcase_add_test(t, zero_operand_add_scans_every_chunk);
  tcase_add_test(t, zero_operand_add);
  tcase_add_test(t, zeros_are_shared);
  tcase_add_test(t, one_hot_cases);
  tcase_add_test(t, arange_shape_of_size);
  tcase_add_test(t, sort_argsort_topk);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  return unit_run(suite());
}
