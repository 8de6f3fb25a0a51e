/* tests/unit/check_k_dyn.c — the dyn.* kernels (ops/kernels/k_dyn.c) and the two
 * static operators DynamicToStatic produces that came with them,
 * nn.upsampling3d and sparse_to_dense.
 *
 * A dyn kernel must give exactly what its static twin gives with the tensor
 * inputs written as attributes (both run here); bad shape-like inputs are
 * run-time errors. nn.upsampling3d is compared with a plain loop over output
 * voxels (nearest: floor / round of the transformed coordinate, trilinear:
 * eight clamped taps), sparse_to_dense with a loop that writes the rows in
 * order over a default-filled tensor.
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

static const DType F32 = {DT_FLOAT, 32, 1}, F64 = {DT_FLOAT, 64, 1}, I32 = {DT_INT, 32, 1}, I64 = {DT_INT, 64, 1};

static Tensor *ivec(DType dt, int n, const int64_t *v) {
  Tensor *t = kr_iota(dt, 1, (int64_t[]){n});
  for (int i = 0; i < n; i++) tensor_set_i64(t, i, v[i]);
  return t;
}

/* dyn result == static result (both must succeed) */
static void same(Tensor *dyn, Tensor *stat, const char *what) {
  ck_assert_msg(dyn && stat, "%s: %s", what, kr_err);
  ck_assert_msg(kt_equal(dyn, stat), "%s: dyn and static results differ", what);
  kr_free(dyn, stat, NULL, NULL);
}

START_TEST(dyn_equals_static_shape_ops) {
  Tensor *x = kr_iota(F32, 3, (int64_t[]){2, 3, 4});
  Tensor *ns = ivec(I64, 2, (int64_t[]){-1, 4}), *ins2[2] = {x, ns};
  same(kr_run(OP_DYN_RESHAPE, "", ins2, 2), kr_run(OP_RESHAPE, "newshape=[-1, 4]", &x, 1), "reshape");
  Tensor *x1 = kr_iota(F32, 3, (int64_t[]){1, 3, 1}), *ax = ivec(I32, 2, (int64_t[]){0, -1});
  Tensor *ins3[2] = {x1, ax};
  same(kr_run(OP_DYN_SQUEEZE, "", ins3, 2), kr_run(OP_SQUEEZE, "axis=[0, -1]", &x1, 1), "squeeze");
  Tensor *a = kr_make(I32, 0, NULL, (double[]){1}), *ins4[2] = {x, a};
  same(kr_run(OP_DYN_EXPAND_DIMS, "num_newaxis=2", ins4, 2), kr_run(OP_EXPAND_DIMS, "axis=1; num_newaxis=2", &x, 1),
       "expand_dims");
  Tensor *reps = ivec(I32, 4, (int64_t[]){2, 1, 3, 1}), *ins5[2] = {x, reps};
  same(kr_run(OP_DYN_TILE, "", ins5, 2), kr_run(OP_TILE, "reps=[2, 1, 3, 1]", &x, 1), "tile");
  Tensor *v = kr_iota(F32, 1, (int64_t[]){4}), *sh = ivec(I64, 3, (int64_t[]){3, 2, 4}), *ins6[2] = {v, sh};
  same(kr_run(OP_DYN_BROADCAST_TO, "", ins6, 2), kr_run(OP_BROADCAST_TO, "shape=[3, 2, 4]", &v, 1), "broadcast_to");
  same(kr_run(OP_DYN_ZEROS, "dtype=\"float16\"", &sh, 1), kr_run(OP_ZEROS, "shape=[3, 2, 4]; dtype=\"float16\"", NULL, 0),
       "zeros");
  same(kr_run(OP_DYN_ONES, "dtype=\"int8\"", &sh, 1), kr_run(OP_ONES, "shape=[3, 2, 4]; dtype=\"int8\"", NULL, 0), "ones");
  Tensor *f = kr_make(F32, 0, NULL, (double[]){2.5}), *ins7[2] = {f, sh};
  same(kr_run(OP_DYN_FULL, "", ins7, 2), kr_run(OP_FULL, "shape=[3, 2, 4]", &f, 1), "full");
  same(kr_run(OP_DYN_FULL, "dtype=\"float64\"", ins7, 2), kr_run(OP_FULL, "shape=[3, 2, 4]; dtype=\"float64\"", &f, 1),
       "full float64");
  kr_free(x, ns, x1, ax);
  kr_free(a, reps, v, sh);
  tensor_release(f);
}
END_TEST

START_TEST(dyn_equals_static_index_ops) {
  Tensor *ix = ivec(I32, 3, (int64_t[]){0, 2, 1}), *on = kr_make(F32, 0, NULL, (double[]){1}),
         *off = kr_make(F32, 0, NULL, (double[]){-1}), *d = kr_make(I64, 0, NULL, (double[]){4});
  Tensor *oh[4] = {ix, on, off, d};
  same(kr_run(OP_DYN_ONE_HOT, "axis=0", oh, 4), kr_run(OP_ONE_HOT, "depth=4; axis=0", oh, 3), "one_hot");
  Tensor *x = kr_iota(F32, 2, (int64_t[]){3, 7});
  kt_fill(x, 9, -5, 5);
  Tensor *k = kr_make(I32, 0, NULL, (double[]){3}), *tk[2] = {x, k};
  uint32_t n1 = 0, n2 = 0;
  Tensor **a = kr_run_tuple(OP_DYN_TOPK, "", tk, 2, &n1), **b = kr_run_tuple(OP_TOPK, "k=3", &x, 1, &n2);
  ck_assert(a && b && n1 == 2 && n2 == 2 && kt_equal(a[0], b[0]) && kt_equal(a[1], b[1]));
  for (uint32_t i = 0; i < 2; i++) kr_free(a[i], b[i], NULL, NULL);
  mem_free(a);
  mem_free(b);
  Tensor *bg = ivec(I32, 2, (int64_t[]){2, 6}), *en = ivec(I32, 2, (int64_t[]){0, 1}), *st = ivec(I32, 2, (int64_t[]){-1, -2});
  Tensor *ss[4] = {x, bg, en, st};
  same(kr_run(OP_DYN_STRIDED_SLICE, "", ss, 4), kr_run(OP_STRIDED_SLICE, "begin=[2, 6]; end=[0, 1]; strides=[-1, -2]", &x, 1),
       "strided_slice");
  Tensor *ssz[4] = {x, en, bg, ivec(I32, 2, (int64_t[]){1, 1})};
  same(kr_run(OP_DYN_STRIDED_SLICE, "slice_mode=\"size\"", ssz, 4),
       kr_run(OP_STRIDED_SLICE, "begin=[0, 1]; end=[2, 6]; strides=[1, 1]; slice_mode=\"size\"", &x, 1), "strided_slice size");
  tensor_release(ssz[3]);
  Tensor *si = kr_make(I64, 2, (int64_t[]){3, 2}, (double[]){0, 0, 1, 2, 0, 0}), *sv = kr_make(F32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
  Tensor *sd = kr_make(F32, 0, NULL, (double[]){-7}), *os = ivec(I32, 2, (int64_t[]){3, 4});
  Tensor *sp[4] = {si, sv, sd, os};
  same(kr_run(OP_DYN_SPARSE_TO_DENSE, "", sp, 4), kr_run(OP_SPARSE_TO_DENSE, "output_shape=[3, 4]", sp, 3), "sparse_to_dense");
  kr_free(ix, on, off, d);
  kr_free(x, k, bg, en);
  kr_free(st, si, sv, sd);
  tensor_release(os);
}
END_TEST

START_TEST(dyn_equals_static_nn_ops) {
  Tensor *x = kr_iota(F32, 4, (int64_t[]){1, 2, 3, 4});
  Tensor *pw = kr_make(I64, 2, (int64_t[]){4, 2}, (double[]){0, 0, 1, 0, 2, 1, 0, 3}), *pv = kr_make(F32, 0, NULL, (double[]){9});
  Tensor *pd[3] = {x, pw, pv}, *ps[2] = {x, pv};
  same(kr_run(OP_DYN_NN_PAD, "pad_mode=\"edge\"", pd, 3),
       kr_run(OP_NN_PAD, "pad_width=[[0, 0], [1, 0], [2, 1], [0, 3]]; pad_mode=\"edge\"", ps, 2), "pad");
  Tensor *sh = kr_make(F64, 0, NULL, (double[]){2}), *sw = kr_make(F32, 0, NULL, (double[]){1.5});
  Tensor *up[3] = {x, sh, sw};
  same(kr_run(OP_DYN_NN_UPSAMPLING, "method=\"bilinear\"; align_corners=True", up, 3),
       kr_run(OP_NN_UPSAMPLING, "scale_h=2f; scale_w=1.5f; method=\"bilinear\"; align_corners=True", &x, 1), "upsampling");
  Tensor *x5 = kr_iota(F32, 5, (int64_t[]){1, 2, 2, 3, 3});
  Tensor *up3[4] = {x5, sh, sw, sh};
  same(kr_run(OP_DYN_NN_UPSAMPLING3D, "method=\"trilinear\"", up3, 4),
       kr_run(OP_NN_UPSAMPLING3D, "scale_d=2f; scale_h=1.5f; scale_w=2f; method=\"trilinear\"", &x5, 1), "upsampling3d");
  Tensor *size = ivec(I32, 2, (int64_t[]){5, 7}), *roi = kr_make(F32, 1, (int64_t[]){4}, (double[]){0.1, 0.2, 0.9, 0.7});
  Tensor *rs[3] = {x, size, roi};
  same(kr_run(OP_DYN_IMAGE_RESIZE2D, "coordinate_transformation_mode=\"tf_crop_and_resize\"", rs, 3),
       kr_run(OP_IMAGE_RESIZE2D, "size=[5, 7]; roi=[0.1f, 0.2f, 0.9f, 0.7f]; coordinate_transformation_mode=\"tf_crop_and_resize\"", &x, 1),
       "resize2d");
  kr_free(x, pw, pv, sh);
  kr_free(sw, x5, size, roi);
}
END_TEST

START_TEST(dyn_bad_inputs) {
  /* float shape-like values are truncated (TVM's DynamicToStatic casts so): [3.9, 2.5] is [3, 2] */
  Tensor *x = kr_iota(F32, 2, (int64_t[]){2, 3}), *fs = kr_make(F32, 1, (int64_t[]){2}, (double[]){3.9, 2.5});
  Tensor *ins[2] = {x, fs};
  Tensor *r = kr_run(OP_DYN_RESHAPE, "", ins, 2);
  ck_assert(r && r->ndim == 2 && r->shape[0] == 3 && r->shape[1] == 2);
  tensor_release(r);
  Tensor *nan = kr_make(F32, 1, (int64_t[]){2}, (double[]){NAN, 2});
  ins[1] = nan;
  ck_assert(!kr_run(OP_DYN_RESHAPE, "", ins, 2) && strstr(kr_err, "dyn.reshape: newshape must be a vector of numbers"));
  tensor_release(nan);
  Tensor *bad = ivec(I32, 2, (int64_t[]){4, 4});
  ins[1] = bad;
  ck_assert(!kr_run(OP_DYN_RESHAPE, "", ins, 2) && strstr(kr_err, "reshape")); /* 16 elements from 6 */
  Tensor *big = kr_make(I32, 0, NULL, (double[]){7});
  ins[1] = big;
  ck_assert(!kr_run(OP_DYN_EXPAND_DIMS, "", ins, 2)); /* axis out of range */
  Tensor *m = kr_iota(I32, 2, (int64_t[]){1, 2});
  ins[1] = m;
  ck_assert(!kr_run(OP_DYN_TILE, "", ins, 2) && strstr(kr_err, "reps must be a vector of numbers"));
  tensor_release(m);
  kr_free(x, fs, bad, big);
}
END_TEST

/* ------------------------------------------------------------ nn.upsampling3d */

static double src_coord(int64_t i, int64_t in, int64_t out, const char *mode) {
  double scale = (double)(float)((float)in / (float)out);
  if (!strcmp(mode, "align_corners")) return out > 1 ? (double)(float)(i * ((float)(in - 1) / (float)(out - 1))) : 0;
  if (!strcmp(mode, "asymmetric")) return (double)(float)((float)i * (float)scale);
  return (double)(float)(((float)i + 0.5f) * (float)scale - 0.5f);
}

static Tensor *ref_up3(const Tensor *x, const int64_t *o, bool linear, const char *mode) {
  int64_t N = x->shape[0] * x->shape[1], in[3] = {x->shape[2], x->shape[3], x->shape[4]};
  Tensor *y = kt_new(F64, 5, (int64_t[]){x->shape[0], x->shape[1], o[0], o[1], o[2]});
  int64_t q = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t a = 0; a < o[0]; a++)
      for (int64_t b = 0; b < o[1]; b++)
        for (int64_t c = 0; c < o[2]; c++, q++) {
          int64_t oi[3] = {a, b, c}, lo[3], hi[3];
          double w[3];
          for (int k = 0; k < 3; k++) {
            double s = src_coord(oi[k], in[k], o[k], mode);
            if (linear) {
              double f = floorf((float)s);
              w[k] = (double)((float)s - (float)f);
              lo[k] = (int64_t)f;
              hi[k] = lo[k] + 1;
            } else {
              lo[k] = hi[k] = (int64_t)(!strcmp(mode, "align_corners") ? roundf((float)s) : floorf((float)s + 1e-5f));
              w[k] = 0;
            }
            lo[k] = lo[k] < 0 ? 0 : lo[k] >= in[k] ? in[k] - 1 : lo[k];
            hi[k] = hi[k] < 0 ? 0 : hi[k] >= in[k] ? in[k] - 1 : hi[k];
          }
          double v = 0;
          for (int t = 0; t < 8; t++) {
            double ww = 1;
            int64_t idx[3];
            for (int k = 0; k < 3; k++) {
              bool up = (t >> (2 - k)) & 1;
              ww *= up ? w[k] : 1 - w[k];
              idx[k] = up ? hi[k] : lo[k];
            }
            if (!linear && t) break;
            v += (linear ? ww : 1) * tensor_get_f64(x, ((n * in[0] + idx[0]) * in[1] + idx[1]) * in[2] + idx[2]);
          }
          tensor_set_f64(y, q, v);
        }
  return y;
}

START_TEST(upsampling3d_reference) {
  Tensor *x = kr_iota(F32, 5, (int64_t[]){2, 3, 3, 4, 5});
  kt_fill(x, 4, -2, 2);
  static const char *const modes[] = {"half_pixel", "align_corners", "asymmetric"};
  for (int m = 0; m < 3; m++)
    for (int lin = 0; lin < 2; lin++) {
      char attrs[200];
      snprintf(attrs, sizeof attrs, "scale_d=2f; scale_h=1.5f; scale_w=0.6f; method=\"%s\"; coordinate_transformation_mode=\"%s\"",
               lin ? "trilinear" : "nearest_neighbor", modes[m]);
      Tensor *o = kr_run(OP_NN_UPSAMPLING3D, attrs, &x, 1);
      ck_assert_msg(o, "%s: %s", attrs, kr_err);
      ck_assert(kr_shape_is(o, 5, (int64_t[]){2, 3, 6, 6, 3}));
      Tensor *r = ref_up3(x, (int64_t[]){6, 6, 3}, lin, modes[m]);
      ck_assert_msg(kt_rel_err(o, r) < 1e-5, "%s: rel err %g", attrs, kt_rel_err(o, r));
      kr_free(o, r, NULL, NULL);
    }
  Tensor *nd = kr_iota(F32, 5, (int64_t[]){1, 4, 4, 5, 2}); /* NDHWC */
  Tensor *o = kr_run(OP_NN_UPSAMPLING3D, "scale_d=2f; scale_h=2f; scale_w=2f; layout=\"NDHWC\"", &nd, 1);
  ck_assert(o && kr_shape_is(o, 5, (int64_t[]){1, 8, 8, 10, 2}));
  ck_assert(tensor_get_f64(o, 1) == tensor_get_f64(nd, 1)); /* nearest, floor: output (0,0,0,1) reads (0,0,0,1) */
  ck_assert(!kr_run(OP_NN_UPSAMPLING3D, "scale_d=2f; method=\"cubic\"", &x, 1));
  kr_free(x, nd, o, NULL);
}
END_TEST

/* ------------------------------------------------------------ sparse_to_dense */

START_TEST(sparse_to_dense_reference) {
  /* TVM's doc example: [[0, 0], [1, 2]] -> values [1, 2], shape (3, 4), default 0 */
  Tensor *i = kr_make(I32, 2, (int64_t[]){2, 2}, (double[]){0, 0, 1, 2}), *v = kr_make(F32, 1, (int64_t[]){2}, (double[]){1, 2});
  Tensor *d = kr_make(F32, 0, NULL, (double[]){0}), *ins[3] = {i, v, d};
  Tensor *o = kr_run(OP_SPARSE_TO_DENSE, "output_shape=[3, 4]", ins, 3);
  double want[12] = {1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0};
  ck_assert(o && kr_shape_is(o, 2, (int64_t[]){3, 4}));
  for (int k = 0; k < 12; k++) ck_assert(tensor_get_f64(o, k) == want[k]);
  tensor_release(o);
  /* 1-D indices, a scalar value for all, duplicates (the later wins), an index outside matches nothing */
  Tensor *i1 = kr_make(I64, 1, (int64_t[]){4}, (double[]){3, 1, 3, 9}), *vs = kr_make(F32, 0, NULL, (double[]){5});
  Tensor *ins1[3] = {i1, vs, d};
  o = kr_run(OP_SPARSE_TO_DENSE, "output_shape=[5]", ins1, 3);
  double want1[5] = {0, 5, 0, 5, 0};
  for (int k = 0; k < 5; k++) ck_assert(o && tensor_get_f64(o, k) == want1[k]);
  tensor_release(o);
  Tensor *v4 = kr_make(F32, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4}), *ins2[3] = {i1, v4, d};
  o = kr_run(OP_SPARSE_TO_DENSE, "output_shape=[5]", ins2, 3);
  double want2[5] = {0, 2, 0, 3, 0};
  for (int k = 0; k < 5; k++) ck_assert(o && tensor_get_f64(o, k) == want2[k]);
  tensor_release(o);
  /* rows with fewer coordinates than the rank cover a whole slice; a scalar index */
  Tensor *ir = kr_make(I32, 2, (int64_t[]){1, 1}, (double[]){1}), *ins3[3] = {ir, vs, d};
  o = kr_run(OP_SPARSE_TO_DENSE, "output_shape=[2, 3]", ins3, 3);
  double want3[6] = {0, 0, 0, 5, 5, 5};
  for (int k = 0; k < 6; k++) ck_assert(o && tensor_get_f64(o, k) == want3[k]);
  tensor_release(o);
  Tensor *i0 = kr_make(I32, 0, NULL, (double[]){2}), *ins4[3] = {i0, vs, d};
  o = kr_run(OP_SPARSE_TO_DENSE, "output_shape=[3]", ins4, 3);
  ck_assert(o && tensor_get_f64(o, 2) == 5 && tensor_get_f64(o, 0) == 0);
  tensor_release(o);
  Tensor *ins5[3] = {i1, v, d}; /* 2 values for 4 indices */
  ck_assert(!kr_run(OP_SPARSE_TO_DENSE, "output_shape=[5]", ins5, 3));
  kr_free(i, v, d, i1);
  kr_free(vs, v4, ir, i0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("k_dyn");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, dyn_equals_static_shape_ops);
  tcase_add_test(t, dyn_equals_static_index_ops);
  tcase_add_test(t, dyn_equals_static_nn_ops);
  tcase_add_test(t, dyn_bad_inputs);
  tcase_add_test(t, upsampling3d_reference);
  tcase_add_test(t, sparse_to_dense_reference);
  suite_add_tcase(s, t);
  return unit_run(s);
}
