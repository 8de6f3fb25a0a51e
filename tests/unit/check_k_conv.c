/* tests/unit/check_k_conv.c — convolution kernels against a plain reference loop nest.
 *
 * ref_conv is the ops.md §8.1 formula written literally (canonical NCDHW /
 * OIDHW, double or wrapping int64 accumulation, depthwise multiplier weights
 * read through the (C·M, 1, k...) view); ref_tconv is the §8.2 scatter-add.
 * The fast kernels (im2col + sgemm, direct 1×1 GEMM, depthwise loop, NHWC
 * path, fused epilogues) must agree with them within float tolerance
 * (exactly for integers).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "runtime/threadpool.h"
#include "runtime/value.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"

static Module *M;

static void setup(void) { M = module_new(NULL); }
static void teardown(void) {
  module_free(M);
  M = NULL;
}

/* Geometry of a reference convolution (spatial dims padded to 3, leading ones). */
typedef struct {
  int nd;
  int64_t st[3], dil[3], plo[3], phi[3], opad[3];
  int64_t G;
} RefGeom;

static RefGeom geom(int nd, const int64_t *st, const int64_t *dil, const int64_t *plo,
                    const int64_t *phi, int64_t G) {
  RefGeom r = {.nd = nd, .G = G};
  for (int i = 0; i < 3; i++) {
    int s = i - (3 - nd);
    r.st[i] = s < 0 ? 1 : st[s];
    r.dil[i] = s < 0 ? 1 : dil[s];
    r.plo[i] = s < 0 ? 0 : plo[s];
    r.phi[i] = s < 0 ? 0 : phi[s];
  }
  return r;
}

static void sp3(const Tensor *t, int nd, int64_t *out) {
  for (int i = 0; i < 3; i++) {
    int s = i - (3 - nd);
    out[i] = s < 0 ? 1 : t->shape[2 + s];
  }
}

/* out[n,o,·] = Σ_{i<C/G, taps} x[n, g·C/G+i, pos] · w[o, i, tap] (zero outside). */
static Tensor *ref_conv(const Tensor *x, const Tensor *w, const RefGeom *r, DType odt) {
  int nd = r->nd;
  int64_t N = x->shape[0], C = x->shape[1], G = r->G, in[3], k[3], out[3];
  sp3(x, nd, in);
  sp3(w, nd, k);
  int64_t O = w->shape[0], I = w->shape[1];
  if (G > 1 && G == C && O == G && I != 1) { /* depthwise multiplier view */
    O = w->shape[0] * w->shape[1];
    I = 1;
  }
  int64_t Cg = C / G, Og = O / G, shape[5] = {N, O};
  for (int i = 0; i < 3; i++)
    out[i] = (in[i] + r->plo[i] + r->phi[i] - ((k[i] - 1) * r->dil[i] + 1)) / r->st[i] + 1;
  for (int s = 0; s < nd; s++) shape[2 + s] = out[3 - nd + s];
  Tensor *y = kt_new(odt, nd + 2, shape);
  bool isint = !dtype_is_float(odt);
  int64_t q = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < O; o++)
      for (int64_t a = 0; a < out[0]; a++)
        for (int64_t b = 0; b < out[1]; b++)
          for (int64_t cc = 0; cc < out[2]; cc++, q++) {
            double acc = 0;
            uint64_t iacc = 0;
            int64_t g = o / Og;
            for (int64_t i = 0; i < I; i++)
              for (int64_t u = 0; u < k[0]; u++)
                for (int64_t v = 0; v < k[1]; v++)
                  for (int64_t z = 0; z < k[2]; z++) {
                    int64_t id = a * r->st[0] - r->plo[0] + u * r->dil[0];
                    int64_t ih = b * r->st[1] - r->plo[1] + v * r->dil[1];
                    int64_t iw = cc * r->st[2] - r->plo[2] + z * r->dil[2];
                    if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2])
                      continue;
                    int64_t xi = (((n * C + g * Cg + i) * in[0] + id) * in[1] + ih) * in[2] + iw;
                    int64_t wi = (((o * I + i) * k[0] + u) * k[1] + v) * k[2] + z;
                    if (isint)
                      iacc += (uint64_t)value_wrap_int(odt, tensor_get_i64(x, xi)) *
                              (uint64_t)value_wrap_int(odt, tensor_get_i64(w, wi));
                    else
                      acc += tensor_get_f64(x, xi) * tensor_get_f64(w, wi);
                  }
            if (isint) tensor_set_i64(y, q, value_wrap_int(odt, (int64_t)iacc));
            else tensor_set_f64(y, q, acc);
          }
  return y;
}

/* conv2d_transpose: y[n, g·Og+o, ih·s − p + r·d] += x[n, g·Cg+i, ih] · w[g·Cg+i, o, r]. */
static Tensor *ref_tconv(const Tensor *x, const Tensor *w, const RefGeom *r, DType odt) {
  int64_t N = x->shape[0], C = x->shape[1], G = r->G, H = x->shape[2], W = x->shape[3];
  int64_t Og = w->shape[1], kh = w->shape[2], kw = w->shape[3], O = Og * G, Cg = C / G;
  int64_t OH = r->st[1] * (H - 1) + (kh - 1) * r->dil[1] + 1 - r->plo[1] - r->phi[1] + r->opad[1];
  int64_t OW = r->st[2] * (W - 1) + (kw - 1) * r->dil[2] + 1 - r->plo[2] - r->phi[2] + r->opad[2];
  int64_t shape[4] = {N, O, OH, OW};
  Tensor *y = kt_new(DTYPE(DT_FLOAT, 64), 4, shape);
  for (int64_t n = 0; n < N; n++)
    for (int64_t ci = 0; ci < C; ci++)
      for (int64_t o = 0; o < Og; o++)
        for (int64_t ih = 0; ih < H; ih++)
          for (int64_t iw = 0; iw < W; iw++)
            for (int64_t u = 0; u < kh; u++)
              for (int64_t v = 0; v < kw; v++) {
                int64_t yh = ih * r->st[1] - r->plo[1] + u * r->dil[1];
                int64_t yw = iw * r->st[2] - r->plo[2] + v * r->dil[2];
                if (yh < 0 || yh >= OH || yw < 0 || yw >= OW) continue;
                int64_t oc = (ci / Cg) * Og + o;
                int64_t yi = ((n * O + oc) * OH + yh) * OW + yw;
                double xv = tensor_get_f64(x, ((n * C + ci) * H + ih) * W + iw);
                double wv = tensor_get_f64(w, ((ci * Og + o) * kh + u) * kw + v);
                tensor_set_f64(y, yi, tensor_get_f64(y, yi) + xv * wv);
              }
  Tensor *out = kt_new(odt, 4, shape);
  for (int64_t i = 0; i < y->numel; i++) {
    if (dtype_is_float(odt)) tensor_set_f64(out, i, tensor_get_f64(y, i));
    else tensor_set_i64(out, i, (int64_t)tensor_get_f64(y, i));
  }
  tensor_release(y);
  return out;
}

static Tensor *rnd(DType dt, int nd, const int64_t *shape, uint32_t seed) {
  Tensor *t = kt_new(dt, nd, shape);
  if (dtype_is_float(dt)) kt_fill(t, seed, -1, 1);
  else kt_fill(t, seed, -5, 5);
  return t;
}

static const DType F32 = {DT_FLOAT, 32, 1}, F64 = {DT_FLOAT, 64, 1}, F16 = {DT_FLOAT, 16, 1},
                   I32 = {DT_INT, 32, 1}, I8 = {DT_INT, 8, 1}, U8 = {DT_UINT, 8, 1};

/* Runs op with attrs on (x, w) and compares to the reference. */
static void check_conv(int32_t op, const char *attrs, const Tensor *x, const Tensor *w,
                       const Tensor *want, double tol) {
  char err[KERNEL_ERR_SIZE] = "";
  Tensor *ins[2] = {(Tensor *)x, (Tensor *)w};
  Tensor *got = kt_call(op, kt_attrs(M, attrs), ins, 2, err);
  ck_assert_msg(got != NULL, "kernel failed: %s (%s)", err, attrs);
  ck_assert_int_eq(got->ndim, want->ndim);
  for (int i = 0; i < want->ndim; i++) ck_assert_int_eq(got->shape[i], want->shape[i]);
  ck_assert_msg(dtype_eq(got->dtype, want->dtype), "dtype differs (%s)", attrs);
  if (tol == 0) {
    ck_assert_msg(kt_equal(got, want), "integer result differs (%s)", attrs);
  } else {
    double e = kt_rel_err(got, want);
    ck_assert_msg(e <= tol, "relative error %g > %g (%s)", e, tol, attrs);
  }
  tensor_release(got);
}

/* conv2d of random NCHW data: builds the attribute text and the reference. */
static void case2d(int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t kh, int64_t kw,
                   int64_t G, int64_t sh, int64_t sw, int64_t dh, int64_t dw, const int64_t pad[4],
                   DType dt, uint32_t seed) {
  int64_t xs[4] = {N, C, H, W}, ws[4] = {O, C / G, kh, kw};
  Tensor *x = rnd(dt, 4, xs, seed), *w = rnd(dt, 4, ws, seed + 1);
  int64_t st[2] = {sh, sw}, dil[2] = {dh, dw}, plo[2] = {pad[0], pad[1]}, phi[2] = {pad[2], pad[3]};
  RefGeom r = geom(2, st, dil, plo, phi, G);
  Tensor *want = ref_conv(x, w, &r, dt);
  char attrs[256];
  snprintf(attrs, sizeof attrs,
           "strides=[%lld, %lld]; padding=[%lld, %lld, %lld, %lld]; dilation=[%lld, %lld]; groups=%lld",
           (long long)sh, (long long)sw, (long long)pad[0], (long long)pad[1], (long long)pad[2],
           (long long)pad[3], (long long)dh, (long long)dw, (long long)G);
  double tol = dtype_is_float(dt) ? (dt.bits == 16 ? 2e-3 : 1e-5) : 0;
  check_conv(OP_NN_CONV2D, attrs, x, w, want, tol);
  tensor_release(x);
  tensor_release(w);
  tensor_release(want);
}

static const int64_t P0[4] = {0, 0, 0, 0}, P1[4] = {1, 1, 1, 1};

START_TEST(conv2d_basic) {
  case2d(1, 3, 8, 9, 4, 3, 3, 1, 1, 1, 1, 1, P1, F32, 1);
  case2d(2, 5, 7, 6, 3, 3, 2, 1, 1, 1, 1, 1, P0, F32, 2);
}
END_TEST

START_TEST(conv2d_pointwise) {
  /* 1x1 stride 1: plain GEMM without im2col, threaded; and stride 2 */
  case2d(1, 64, 14, 14, 96, 1, 1, 1, 1, 1, 1, 1, P0, F32, 3);
  case2d(2, 16, 9, 9, 8, 1, 1, 1, 2, 2, 1, 1, P0, F32, 4);
  case2d(1, 256, 3, 3, 512, 1, 1, 1, 1, 1, 1, 1, P0, F32, 5); /* tiny P: splits output channels */
}
END_TEST

START_TEST(conv2d_padding_every_side) {
  const int64_t pads[][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}, {0, 1, 2, 3}, {3, 2, 1, 0}};
  for (int i = 0; i < 6; i++) case2d(1, 2, 6, 7, 3, 3, 3, 1, 1, 1, 1, 1, pads[i], F32, 10 + (uint32_t)i);
  case2d(1, 2, 6, 7, 3, 3, 3, 1, 2, 3, 1, 1, pads[4], F32, 20);
}
END_TEST

START_TEST(conv2d_stride_dilation) {
  const int64_t pad[4] = {2, 1, 0, 3};
  case2d(1, 3, 11, 13, 4, 3, 3, 1, 2, 2, 2, 2, pad, F32, 30);
  case2d(1, 3, 11, 13, 4, 3, 2, 1, 1, 3, 3, 1, P1, F32, 31);
  /* strides larger than the kernel */
  case2d(1, 2, 10, 10, 3, 1, 1, 1, 3, 3, 1, 1, P0, F32, 32);
  case2d(1, 2, 10, 11, 3, 2, 2, 1, 3, 4, 1, 1, P1, F32, 33);
}
END_TEST

START_TEST(conv2d_groups) {
  case2d(1, 4, 7, 7, 6, 3, 3, 2, 1, 1, 1, 1, P1, F32, 40);
  case2d(2, 8, 6, 5, 8, 3, 3, 4, 2, 2, 1, 1, P1, F32, 41);
  case2d(1, 64, 8, 8, 64, 3, 3, 32, 1, 1, 1, 1, P1, F32, 42); /* ResNeXt-style 32 groups */
  case2d(1, 6, 9, 9, 6, 3, 3, 3, 1, 1, 2, 2, P1, F32, 43);
}
END_TEST

/* The grouped engine (1 < Cg <= 64) and the GEMM beyond it: group sizes
 * 2..33 and 65, output channels per group != Cg (block tails of 8/4/2/1),
 * padding on every side, stride, dilation, batch 2. */
START_TEST(conv2d_grouped_engine) {
  static const int64_t cgs[] = {2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 65};
  static const int64_t ogs[] = {1, 3, 5, 8, 9, 12, 15, 17};
  const int64_t pad[4] = {0, 2, 1, 1};
  for (int i = 0; i < (int)(sizeof cgs / sizeof *cgs); i++) {
    int64_t Cg = cgs[i], Og = ogs[i % 8], G = 2 + i % 3;
    uint32_t seed = 400 + 10 * (uint32_t)i;
    case2d(1, Cg * G, 9, 10, Og * G, 3, 3, G, 1, 1, 1, 1, P1, F32, seed);
    case2d(2, Cg * G, 11, 8, Og * G, 3, 2, G, 2, 2, 1, 1, pad, F32, seed + 1);
    case2d(1, Cg * G, 12, 13, Og * G, 3, 3, G, 1, 2, 2, 1, P1, F32, seed + 2);
    case2d(1, Cg * G, 7, 7, Og * G, 1, 1, G, 1, 1, 1, 1, P0, F32, seed + 3); /* GEMM, in place */
    case2d(1, Cg * G, 7, 7, Og * G, 1, 1, G, 2, 2, 1, 1, P1, F32, seed + 4);
  }
  /* ResNeXt-50 shapes: Cg = Og = 4..32 at 56/28/14/7, stride 1 and 2 */
  case2d(1, 128, 56, 56, 128, 3, 3, 32, 1, 1, 1, 1, P1, F32, 480);
  case2d(1, 256, 28, 28, 256, 3, 3, 32, 2, 2, 1, 1, P1, F32, 481);
  case2d(1, 1024, 7, 7, 1024, 3, 3, 32, 1, 1, 1, 1, P1, F32, 482);
  /* float64 and int32 keep their own engines */
  case2d(1, 8, 6, 6, 12, 3, 3, 2, 1, 1, 1, 1, P1, F64, 483);
  case2d(1, 8, 6, 6, 12, 3, 3, 2, 1, 1, 1, 1, P1, I32, 484);
}
END_TEST

/* Stride-1 planes at least 24 wide: rows computed from the input in place
 * (vector interior with an overlapping last vector, scalar borders). */
static void dw_wide_multiplier(int64_t C, int64_t mult, int64_t H, int64_t W, int64_t k, int64_t d,
                               int64_t p, uint32_t seed) {
  int64_t xs[4] = {2, C, H, W}, ws[4] = {C, mult, k, k};
  Tensor *x = rnd(F32, 4, xs, seed), *w = rnd(F32, 4, ws, seed + 1);
  int64_t st[2] = {1, 1}, dil[2] = {d, d}, lo[2] = {p, p}, hi[2] = {p, p};
  RefGeom r = geom(2, st, dil, lo, hi, C);
  Tensor *want = ref_conv(x, w, &r, F32);
  char attrs[160];
  snprintf(attrs, sizeof attrs, "padding=[%lld, %lld]; dilation=[%lld, %lld]; groups=%lld; channels=%lld",
           (long long)p, (long long)p, (long long)d, (long long)d, (long long)C, (long long)(C * mult));
  check_conv(OP_NN_CONV2D, attrs, x, w, want, 1e-5);
  Tensor *all[] = {x, w, want};
  for (int i = 0; i < 3; i++) tensor_release(all[i]);
}

START_TEST(conv2d_depthwise_wide) {
  const int64_t pads[][4] = {{1, 1, 1, 1}, {0, 2, 1, 0}, {2, 0, 0, 3}, {0, 0, 0, 0}, {3, 3, 3, 3}};
  int64_t widths[] = {24, 25, 31, 32, 47, 64, 79, 112, 130};
  for (int i = 0; i < 9; i++) {
    uint32_t seed = 600 + 10 * (uint32_t)i;
    case2d(1, 3, 5 + i, widths[i], 3, 3, 3, 3, 1, 1, 1, 1, pads[i % 5], F32, seed);
    case2d(1, 2, 12, widths[i], 2, 5, 7, 2, 1, 1, 2, 3, pads[(i + 1) % 5], F32, seed + 1);
    case2d(1, 2, 4, widths[i], 2, 1, 1, 2, 1, 1, 1, 1, pads[(i + 2) % 5], F32, seed + 2);
  }
  dw_wide_multiplier(3, 2, 9, 40, 3, 1, 1, 700); /* channel multiplier */
  dw_wide_multiplier(2, 3, 7, 24, 7, 2, 6, 702); /* interior 12 < 16: scalar columns */
  dw_wide_multiplier(2, 2, 7, 30, 5, 2, 2, 703);
  dw_wide_multiplier(4, 1, 3, 100, 3, 1, 0, 704);
}
END_TEST

START_TEST(conv2d_depthwise) {
  case2d(1, 8, 9, 10, 8, 3, 3, 8, 1, 1, 1, 1, P1, F32, 50);
  case2d(2, 5, 12, 11, 5, 3, 3, 5, 2, 2, 1, 1, P1, F32, 51);
  const int64_t pad[4] = {0, 2, 1, 0};
  case2d(1, 4, 13, 14, 4, 5, 3, 4, 3, 2, 2, 3, pad, F32, 52);
  case2d(1, 4, 5, 6, 4, 1, 1, 4, 3, 3, 1, 1, P0, F32, 53);
  /* channel multiplier 2: weight (C, 2, kh, kw) */
  int64_t xs[4] = {1, 3, 7, 8}, ws[4] = {3, 2, 3, 3};
  Tensor *x = rnd(F32, 4, xs, 54), *w = rnd(F32, 4, ws, 55);
  int64_t st[2] = {2, 1}, dil[2] = {1, 1}, lo[2] = {1, 1}, hi[2] = {1, 1};
  RefGeom r = geom(2, st, dil, lo, hi, 3);
  Tensor *want = ref_conv(x, w, &r, F32);
  ck_assert_int_eq(want->shape[1], 6);
  check_conv(OP_NN_CONV2D, "strides=[2, 1]; padding=[1, 1]; groups=3; channels=6", x, w, want, 1e-5);
  tensor_release(want);
  /* the same weight as a grouped (6, 1, 3, 3) weight */
  int64_t ws2[4] = {6, 1, 3, 3};
  Tensor *w2 = kt_new(F32, 4, ws2);
  memcpy(w2->data, w->data, w->nbytes);
  RefGeom r2 = geom(2, st, dil, lo, hi, 3);
  want = ref_conv(x, w2, &r2, F32);
  check_conv(OP_NN_CONV2D, "strides=[2, 1]; padding=[1, 1]; groups=3", x, w2, want, 1e-5);
  tensor_release(want);
  tensor_release(x);
  tensor_release(w);
  tensor_release(w2);
}
END_TEST

START_TEST(conv2d_dtypes) {
  case2d(1, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, P1, F64, 60);
  case2d(1, 4, 6, 6, 4, 3, 3, 4, 2, 2, 1, 1, P1, F64, 61);
  case2d(1, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, P1, F16, 62);
  case2d(1, 3, 6, 6, 4, 3, 3, 1, 2, 1, 1, 2, P1, I32, 63);
  case2d(1, 4, 6, 6, 4, 3, 3, 2, 1, 1, 1, 1, P1, I8, 64);
  case2d(1, 4, 6, 6, 4, 3, 3, 4, 1, 1, 1, 1, P1, U8, 65);
}
END_TEST

START_TEST(conv2d_int_wrap_and_out_dtype) {
  /* int8 products overflow int8 (wrap) but not int32 with out_dtype */
  int64_t xs[4] = {1, 2, 3, 3}, ws[4] = {1, 2, 2, 2};
  Tensor *x = kt_new(I8, 4, xs), *w = kt_new(I8, 4, ws);
  for (int64_t i = 0; i < x->numel; i++) tensor_set_i64(x, i, 100 + i);
  for (int64_t i = 0; i < w->numel; i++) tensor_set_i64(w, i, 3 - (int64_t)i);
  int64_t one[2] = {1, 1}, zero[2] = {0, 0};
  RefGeom r = geom(2, one, one, zero, zero, 1);
  Tensor *want8 = ref_conv(x, w, &r, I8), *want32 = ref_conv(x, w, &r, I32);
  check_conv(OP_NN_CONV2D, "", x, w, want8, 0);
  check_conv(OP_NN_CONV2D, "out_dtype=\"int32\"", x, w, want32, 0);
  /* x = 100..117 all > 0: sum with weights 3,2,1,0,-1,-2,-3,-4 is far outside int8 */
  ck_assert_int_ne(tensor_get_i64(want32, 0), value_wrap_int(I8, tensor_get_i64(want32, 0)));
  tensor_release(want8);
  tensor_release(want32);
  /* float16 data, float32 result */
  int64_t fs[4] = {1, 2, 5, 5};
  Tensor *xh = rnd(F16, 4, fs, 70), *wh = rnd(F16, 4, ws, 71);
  Tensor *wantf = ref_conv(xh, wh, &r, F32);
  check_conv(OP_NN_CONV2D, "out_dtype=\"float32\"", xh, wh, wantf, 1e-6);
  tensor_release(wantf);
  tensor_release(xh);
  tensor_release(wh);
  tensor_release(x);
  tensor_release(w);
}
END_TEST

START_TEST(conv2d_nhwc) {
  int64_t xs[4] = {2, 5, 6, 7}, ws[4] = {4, 5, 3, 3};
  Tensor *x = rnd(F32, 4, xs, 80), *w = rnd(F32, 4, ws, 81);
  int64_t st[2] = {2, 1}, dil[2] = {1, 2}, lo[2] = {1, 2}, hi[2] = {0, 1};
  RefGeom r = geom(2, st, dil, lo, hi, 1);
  Tensor *want = ref_conv(x, w, &r, F32);
  const int nhwc[4] = {0, 2, 3, 1}, hwio[4] = {2, 3, 1, 0};
  Tensor *xn = kt_permuted(x, nhwc), *wn = kt_permuted(w, hwio), *wantn = kt_permuted(want, nhwc);
  check_conv(OP_NN_CONV2D,
             "strides=[2, 1]; padding=[1, 2, 0, 1]; dilation=[1, 2]; data_layout=\"NHWC\"; "
             "kernel_layout=\"HWIO\"",
             xn, wn, wantn, 1e-5);
  /* NHWC data with an NCHW result, and an OIHW weight */
  check_conv(OP_NN_CONV2D,
             "strides=[2, 1]; padding=[1, 2, 0, 1]; dilation=[1, 2]; data_layout=\"NHWC\"; "
             "out_layout=\"NCHW\"",
             xn, w, want, 1e-5);
  /* 1x1 NHWC: the input is the GEMM operand */
  int64_t ws1[4] = {3, 5, 1, 1};
  Tensor *w1 = rnd(F32, 4, ws1, 82);
  int64_t one[2] = {1, 1}, z[2] = {0, 0};
  RefGeom r1 = geom(2, one, one, z, z, 1);
  Tensor *want1 = ref_conv(x, w1, &r1, F32), *want1n = kt_permuted(want1, nhwc), *w1n = kt_permuted(w1, hwio);
  check_conv(OP_NN_CONV2D, "data_layout=\"NHWC\"; kernel_layout=\"HWIO\"", xn, w1n, want1n, 1e-5);
  /* depthwise NHWC with an HWOI weight */
  int64_t wds[4] = {5, 1, 3, 3};
  Tensor *wd = rnd(F32, 4, wds, 83);
  RefGeom rd = geom(2, one, one, one, one, 5);
  Tensor *wantd = ref_conv(x, wd, &rd, F32), *wantdn = kt_permuted(wantd, nhwc);
  const int hwoi[4] = {2, 3, 0, 1};
  Tensor *wdn = kt_permuted(wd, hwoi);
  check_conv(OP_NN_CONV2D,
             "padding=[1, 1]; groups=5; data_layout=\"NHWC\"; kernel_layout=\"HWOI\"", xn, wdn,
             wantdn, 1e-5);
  Tensor *all[] = {x, w, want, xn, wn, wantn, w1, want1, want1n, w1n, wd, wantd, wantdn, wdn};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tensor_release(all[i]);
}
END_TEST

START_TEST(conv1d_conv3d) {
  int64_t xs[3] = {2, 4, 17}, ws[3] = {6, 2, 3};
  Tensor *x = rnd(F32, 3, xs, 90), *w = rnd(F32, 3, ws, 91);
  int64_t st[1] = {2}, dil[1] = {2}, lo[1] = {1}, hi[1] = {3};
  RefGeom r = geom(1, st, dil, lo, hi, 2);
  Tensor *want = ref_conv(x, w, &r, F32);
  check_conv(OP_NN_CONV1D, "strides=[2]; padding=[1, 3]; dilation=[2]; groups=2", x, w, want, 1e-5);
  tensor_release(x);
  tensor_release(w);
  tensor_release(want);
  int64_t xs3[5] = {1, 3, 5, 6, 7}, ws3[5] = {4, 3, 2, 3, 3};
  x = rnd(F32, 5, xs3, 92);
  w = rnd(F32, 5, ws3, 93);
  int64_t st3[3] = {1, 2, 1}, dil3[3] = {2, 1, 1}, lo3[3] = {1, 0, 2}, hi3[3] = {0, 1, 1};
  RefGeom r3 = geom(3, st3, dil3, lo3, hi3, 1);
  want = ref_conv(x, w, &r3, F32);
  check_conv(OP_NN_CONV3D, "strides=[1, 2, 1]; padding=[1, 0, 2, 0, 1, 1]; dilation=[2, 1, 1]", x, w,
             want, 1e-5);
  tensor_release(want);
  /* depthwise 3-D and float64 3-D */
  int64_t wsd[5] = {3, 1, 3, 3, 3};
  Tensor *wd = rnd(F32, 5, wsd, 94);
  int64_t one[3] = {1, 1, 1};
  RefGeom rd = geom(3, one, one, one, one, 3);
  want = ref_conv(x, wd, &rd, F32);
  check_conv(OP_NN_CONV3D, "padding=[1]; groups=3", x, wd, want, 1e-5);
  tensor_release(want);
  tensor_release(wd);
  tensor_release(x);
  tensor_release(w);
}
END_TEST

START_TEST(conv2d_transpose) {
  struct { int64_t C, O, G, k, s, d, plo, phi, op; DType dt; } cases[] = {
      {3, 4, 1, 3, 2, 1, 1, 1, 1, F32}, {4, 2, 2, 3, 1, 1, 0, 0, 0, F32},
      {2, 3, 1, 2, 3, 2, 1, 0, 0, F64}, {2, 2, 1, 3, 2, 1, 1, 2, 1, I32},
      /* 1×1: stride 1 unpadded is one GEMM into the output (groups, both float types);
       * padded or strided ones take the col2im engine */
      {6, 4, 2, 1, 1, 1, 0, 0, 0, F32}, {5, 3, 1, 1, 1, 1, 0, 0, 0, F64}, {4, 4, 1, 1, 1, 1, 1, 1, 0, F32},
      {4, 4, 1, 1, 2, 1, 0, 0, 1, F32},
      /* grouped, stride 1: the grouped engine with the flipped window (ResNeXt's 3×3 data
       * gradient; Og ≠ Cg, dilation, asymmetric padding); strided: GEMM + col2im */
      {64, 64, 16, 3, 1, 1, 1, 1, 0, F32}, {32, 48, 8, 3, 1, 2, 2, 1, 0, F32}, {16, 8, 4, 3, 2, 1, 1, 1, 1, F32},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int64_t xs[4] = {2, cases[i].C, 5, 4}, ws[4] = {cases[i].C, cases[i].O / cases[i].G, cases[i].k, cases[i].k};
    Tensor *x = rnd(cases[i].dt, 4, xs, 100 + (uint32_t)i), *w = rnd(cases[i].dt, 4, ws, 110 + (uint32_t)i);
    RefGeom r = {.nd = 2, .G = cases[i].G};
    for (int a = 0; a < 3; a++) {
      r.st[a] = a ? cases[i].s : 1;
      r.dil[a] = a ? cases[i].d : 1;
      r.plo[a] = a ? cases[i].plo : 0;
      r.phi[a] = a ? cases[i].phi : 0;
      r.opad[a] = a ? cases[i].op : 0;
    }
    Tensor *want = ref_tconv(x, w, &r, cases[i].dt);
    char attrs[256];
    snprintf(attrs, sizeof attrs,
             "channels=%lld; strides=[%lld, %lld]; output_padding=[%lld, %lld]; padding=[%lld, %lld, "
             "%lld, %lld]; dilation=[%lld, %lld]; groups=%lld",
             (long long)cases[i].O, (long long)cases[i].s, (long long)cases[i].s, (long long)cases[i].op,
             (long long)cases[i].op, (long long)cases[i].plo, (long long)cases[i].plo,
             (long long)cases[i].phi, (long long)cases[i].phi, (long long)cases[i].d,
             (long long)cases[i].d, (long long)cases[i].G);
    check_conv(OP_NN_CONV2D_TRANSPOSE, attrs, x, w, want, dtype_is_float(cases[i].dt) ? 1e-5 : 0);
    tensor_release(x);
    tensor_release(w);
    tensor_release(want);
  }
}
END_TEST

/* A transposed convolution with fewer output planes than two per thread
 * (ResNet's stem: 3 of them, 7×7 stride 2) cuts each plane's input pixels
 * into slices summed after the join; every thread count must agree with
 * the reference (1 and 3 threads: no slices; 2 and 4: two slices per plane). */
START_TEST(conv2d_transpose_sliced) {
  static const int counts[] = {1, 2, 3, 4};
  int64_t xs[4] = {1, 16, 100, 90}, ws[4] = {16, 3, 7, 7};
  Tensor *x = rnd(F32, 4, xs, 321), *w = rnd(F32, 4, ws, 322);
  RefGeom r = {.nd = 2, .G = 1, .st = {1, 2, 2}, .dil = {1, 1, 1}, .plo = {0, 3, 3}, .phi = {0, 3, 3},
               .opad = {0, 1, 1}};
  Tensor *want = ref_tconv(x, w, &r, F32);
  const char *attrs = "channels=3; kernel_size=[7, 7]; strides=[2, 2]; padding=[3, 3, 3, 3]; output_padding=[1, 1]";
  for (size_t k = 0; k < 4; k++) {
    threadpool_shutdown();
    char v[8];
    snprintf(v, sizeof v, "%d", counts[k]);
    setenv("RELAYC_NUM_THREADS", v, 1);
    check_conv(OP_NN_CONV2D_TRANSPOSE, attrs, x, w, want, 1e-5);
  }
  threadpool_shutdown();
  unsetenv("RELAYC_NUM_THREADS");
  tensor_release(x);
  tensor_release(w);
  tensor_release(want);
}
END_TEST

/* Depthwise transposed convolutions (groups = channels, one output channel per
 * group: the data gradient of a depthwise convolution) take the depthwise
 * engine with the flipped window (stride > 1: on a spread input); padding
 * beyond the window falls back to GEMM + col2im. */
START_TEST(conv2d_transpose_depthwise) {
  struct { int64_t N, C, H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oph, opw; } cases[] = {
      {1, 4, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},  {2, 3, 6, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0},
      {3, 5, 5, 4, 3, 5, 1, 2, 2, 1, 2, 0, 1, 3, 0, 1},  {1, 2, 4, 5, 3, 3, 3, 2, 1, 1, 0, 1, 2, 0, 2, 1},
      {2, 6, 8, 3, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0},  {1, 3, 5, 5, 3, 3, 1, 1, 1, 1, 3, 3, 3, 3, 0, 0},
      {1, 16, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int64_t xs[4] = {cases[i].N, cases[i].C, cases[i].H, cases[i].W}, ws[4] = {cases[i].C, 1, cases[i].kh, cases[i].kw};
    Tensor *x = rnd(F32, 4, xs, 300 + (uint32_t)i), *w = rnd(F32, 4, ws, 310 + (uint32_t)i);
    RefGeom r = {.nd = 2, .G = cases[i].C};
    int64_t st[2] = {cases[i].sh, cases[i].sw}, dil[2] = {cases[i].dh, cases[i].dw};
    int64_t lo[2] = {cases[i].pt, cases[i].pl}, hi[2] = {cases[i].pb, cases[i].pr}, op[2] = {cases[i].oph, cases[i].opw};
    for (int a = 0; a < 3; a++) {
      r.st[a] = a ? st[a - 1] : 1;
      r.dil[a] = a ? dil[a - 1] : 1;
      r.plo[a] = a ? lo[a - 1] : 0;
      r.phi[a] = a ? hi[a - 1] : 0;
      r.opad[a] = a ? op[a - 1] : 0;
    }
    Tensor *want = ref_tconv(x, w, &r, F32);
    char attrs[320];
    snprintf(attrs, sizeof attrs,
             "channels=%lld; strides=[%lld, %lld]; output_padding=[%lld, %lld]; padding=[%lld, %lld, %lld, %lld]; "
             "dilation=[%lld, %lld]; groups=%lld; kernel_size=[%lld, %lld]",
             (long long)cases[i].C, (long long)st[0], (long long)st[1], (long long)op[0], (long long)op[1],
             (long long)lo[0], (long long)lo[1], (long long)hi[0], (long long)hi[1], (long long)dil[0],
             (long long)dil[1], (long long)cases[i].C, (long long)cases[i].kh, (long long)cases[i].kw);
    check_conv(OP_NN_CONV2D_TRANSPOSE, attrs, x, w, want, 1e-5);
    tensor_release(x);
    tensor_release(w);
    tensor_release(want);
  }
}
END_TEST

/* The strided depthwise transposed convolution by stride phase (ops/kernels/k_tconv_dw.c)
 * against the zero-spread form it replaced: the same call with stride 1 on the input
 * spread onto a zeroed grid (x_up[i·s] = x[i]) gives the same output extent and takes
 * the depthwise engine with the flipped window, the old kernel's arithmetic; the phase
 * form meets the same non-zero products in the same order, so the results are equal
 * bit for bit. Random shapes: odd and even extents, kernels 1-5 (wider or narrower
 * than the stride), padding up to the dilated window, output padding, strides 2 and 3;
 * dilation 1 (cases 0-59), then 2 and 3 (cases 60-119, with strides sharing a factor
 * with the dilation or not: phases without taps). */
static Tensor *spread(const Tensor *x, int64_t sh, int64_t sw) {
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  int64_t us[4] = {N, C, (H - 1) * sh + 1, (W - 1) * sw + 1};
  Tensor *u = kt_new(F32, 4, us);
  memset(u->data, 0, (size_t)u->numel * sizeof(float));
  const float *xp = x->data;
  float *up = u->data;
  for (int64_t p = 0; p < N * C; p++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t w = 0; w < W; w++) up[(p * us[2] + h * sh) * us[3] + w * sw] = xp[(p * H + h) * W + w];
  return u;
}

START_TEST(conv2d_transpose_depthwise_phase) {
  uint32_t seed = 12345;
#define PICK(n) ((seed = seed * 1103515245u + 12345u), (int64_t)((seed >> 16) % (uint32_t)(n)))
  static const int64_t strides[][2] = {{2, 2}, {2, 2}, {2, 1}, {1, 2}, {3, 2}, {3, 3}};
  static const int64_t dilations[][2] = {{2, 2}, {3, 3}, {2, 1}, {1, 3}, {2, 3}, {3, 2}, {2, 2}};
  for (int i = 0; i < 120; i++) {
    int64_t dh = i < 60 ? 1 : dilations[i / 6 % 7][0], dw = i < 60 ? 1 : dilations[i / 6 % 7][1];
    int64_t N = 1 + PICK(2), C = 1 + PICK(5), H = 1 + PICK(9), W = 1 + PICK(9);
    int64_t kh = 1 + PICK(5), kw = 1 + PICK(5), sh = strides[i % 6][0], sw = strides[i % 6][1];
    int64_t ekh = (kh - 1) * dh + 1, ekw = (kw - 1) * dw + 1; /* dilated window */
    int64_t pt = PICK(ekh), pl = PICK(ekw), pb = PICK(ekh), pr = PICK(ekw), oph = PICK(sh), opw = PICK(sw);
    if (i == 0 || i == 60) N = 2, C = 16, H = 56, W = 56, kh = kw = 3, oph = opw = 1, /* MobileNet's */
      pt = pb = dh, pl = pr = dw, ekh = 2 * dh + 1, ekw = 2 * dw + 1;
    int64_t OH = (H - 1) * sh + ekh - pt - pb + oph, OW = (W - 1) * sw + ekw - pl - pr + opw;
    if (OH < 1 || OW < 1) continue;
    int64_t xs[4] = {N, C, H, W}, ws[4] = {C, 1, kh, kw};
    Tensor *x = rnd(F32, 4, xs, 400 + (uint32_t)i), *w = rnd(F32, 4, ws, 500 + (uint32_t)i);
    char attrs[320], old_attrs[320];
    const char *fmt = "channels=%lld; strides=[%lld, %lld]; output_padding=[%lld, %lld]; padding=[%lld, %lld, %lld, %lld]; "
                      "dilation=[%lld, %lld]; groups=%lld; kernel_size=[%lld, %lld]";
    snprintf(attrs, sizeof attrs, fmt, (long long)C, (long long)sh, (long long)sw, (long long)oph, (long long)opw,
             (long long)pt, (long long)pl, (long long)pb, (long long)pr, (long long)dh, (long long)dw, (long long)C,
             (long long)kh, (long long)kw);
    snprintf(old_attrs, sizeof old_attrs, fmt, (long long)C, 1LL, 1LL, (long long)oph, (long long)opw, (long long)pt,
             (long long)pl, (long long)pb, (long long)pr, (long long)dh, (long long)dw, (long long)C, (long long)kh,
             (long long)kw);
    char err[KERNEL_ERR_SIZE] = "";
    Tensor *u = spread(x, sh, sw);
    Tensor *ins[2] = {x, w}, *uins[2] = {u, w};
    Tensor *got = kt_call(OP_NN_CONV2D_TRANSPOSE, kt_attrs(M, attrs), ins, 2, err);
    ck_assert_msg(got != NULL, "kernel failed: %s (%s)", err, attrs);
    Tensor *old = kt_call(OP_NN_CONV2D_TRANSPOSE, kt_attrs(M, old_attrs), uins, 2, err);
    ck_assert_msg(old != NULL, "kernel failed: %s (%s)", err, old_attrs);
    ck_assert_int_eq(got->shape[2], OH);
    ck_assert_int_eq(got->shape[3], OW);
    ck_assert_msg(kt_equal(got, old), "case %d (%lldx%lld, %s): phase form differs from the spread form (%g)", i,
                  (long long)H, (long long)W, attrs, kt_rel_err(got, old));
    RefGeom r = {.nd = 2, .G = C, .st = {1, sh, sw}, .dil = {1, dh, dw}, .plo = {0, pt, pl}, .phi = {0, pb, pr},
                 .opad = {0, oph, opw}};
    Tensor *want = ref_tconv(x, w, &r, F32);
    ck_assert_msg(kt_rel_err(got, want) <= 1e-5, "case %d: relative error %g vs the reference (%s)", i,
                  kt_rel_err(got, want), attrs);
    Tensor *all[] = {x, w, u, got, old, want};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) tensor_release(all[k]);
  }
#undef PICK
}
END_TEST

/* relayc's fused convolution for epilogue flags 'b' (bias), 'a' (residual),
 * 'r' (relu), as transform/conv_epilogue.c emits it. */
static int32_t fused_op(bool hb, bool ha) {
  return hb && ha ? OP_RELAYC_CONV2D_BIAS_ADD : hb ? OP_RELAYC_CONV2D_BIAS : ha ? OP_RELAYC_CONV2D_ADD : OP_RELAYC_CONV2D_RELU;
}

/* The fused epilogue (bias, residual, relu) on an N×C×H×H input, O output
 * channels, k×k kernel, stride st, padding pad. */
static void check_fused_geom_g(const char *flags, bool dying_residual, int64_t N, int64_t C,
                               int64_t H, int64_t O, int64_t k, int64_t st, int64_t pad, int64_t G) {
  int64_t OH = (H + 2 * pad - k) / st + 1;
  int64_t xs[4] = {N, C, H, H}, ws[4] = {O, C / G, k, k}, bs[1] = {O}, ys[4] = {N, O, OH, OH};
  Tensor *x = rnd(F32, 4, xs, 120), *w = rnd(F32, 4, ws, 121), *b = rnd(F32, 1, bs, 122);
  Tensor *res = rnd(F32, 4, ys, 123);
  int64_t sts[2] = {st, st}, one[2] = {1, 1}, pads[2] = {pad, pad};
  RefGeom r = geom(2, sts, one, pads, pads, G);
  Tensor *want = ref_conv(x, w, &r, F32);
  bool hb = strchr(flags, 'b'), ha = strchr(flags, 'a'), hr = strchr(flags, 'r');
  for (int64_t i = 0; i < want->numel; i++) {
    double v = tensor_get_f64(want, i) + (hb ? tensor_get_f64(b, (i / (OH * OH)) % O) : 0) +
               (ha ? tensor_get_f64(res, i) : 0);
    tensor_set_f64(want, i, hr && !(v > 0) ? 0 : v);
  }
  char attrs[200];
  int32_t op = fused_op(hb, ha);
  snprintf(attrs, sizeof attrs, "strides=[%lld, %lld]; padding=[%lld, %lld]; groups=%lld%s", (long long)st,
           (long long)st, (long long)pad, (long long)pad, (long long)G, hr && (hb || ha) ? "; relu=True" : "");
  Tensor *ins[4] = {x, w};
  uint32_t n = 2;
  if (hb) ins[n++] = b;
  if (ha) ins[n++] = res;
  char err[KERNEL_ERR_SIZE];
  Tensor *got;
  if (dying_residual) {
    /* hand the residual over: the kernel may write its result into it */
    KernelCtx c;
    Tensor **in = mem_calloc(4, sizeof *in);
    for (uint32_t i = 0; i < n; i++) in[i] = tensor_retain(ins[i]);
    tensor_release(res); /* only the context holds it now */
    kernel_ctx_init(&c, op, in, n, kt_attrs(M, attrs), NULL);
    ck_assert_int_eq(op_get(op)->kernel(&c), KERNEL_OK);
    got = c.out;
    c.out = NULL;
    ck_assert_ptr_null(c.inputs[n - 1]); /* taken */
    kernel_ctx_clear(&c);
    mem_free(in);
    res = NULL;
  } else {
    got = kt_call(op, kt_attrs(M, attrs), ins, n, err);
  }
  ck_assert_ptr_nonnull(got);
  ck_assert_double_le(kt_rel_err(got, want), 1e-5);
  tensor_release(got);
  tensor_release(want);
  tensor_release(x);
  tensor_release(w);
  tensor_release(b);
  tensor_release(res);
}

static void check_fused_geom(const char *flags, bool dying_residual, int64_t N, int64_t C,
                             int64_t H, int64_t O, int64_t k, int64_t st, int64_t pad) {
  check_fused_geom_g(flags, dying_residual, N, C, H, O, k, st, pad, 1);
}

static void check_fused(const char *flags, bool dying_residual) {
  check_fused_geom(flags, dying_residual, 1, 8, 9, 16, 3, 1, 1);
}

START_TEST(conv2d_fused_epilogue) {
  check_fused("b", false);
  check_fused("br", false);
  check_fused("bar", false);
  check_fused("ba", false);
  check_fused("ar", false);
  check_fused("bar", true);
  /* GEMM engine: small maps (im2col shared by the channel-split tasks), 1×1
   * stride 1 (no im2col) and stride 2, a larger map in column blocks, batch 2 */
  check_fused_geom("bar", false, 1, 24, 7, 100, 3, 1, 1);
  check_fused_geom("bar", true, 1, 40, 14, 64, 3, 2, 1);
  check_fused_geom("br", false, 1, 48, 14, 130, 1, 1, 0);
  check_fused_geom("ar", true, 1, 48, 14, 70, 1, 2, 0);
  check_fused_geom("bar", false, 1, 5, 40, 40, 5, 2, 2);
  check_fused_geom("bar", true, 2, 16, 9, 36, 2, 1, 0);
}
END_TEST

START_TEST(conv2d_fused_grouped) {
  /* the grouped engine: every epilogue, dying residual, stride 2, Og != Cg,
   * an output-channel block tail (Og = 13: 8 + 4 + 1) */
  const char *flags[] = {"b", "br", "ba", "bar", "ar", "a", "r"};
  for (int i = 0; i < 7; i++) {
    check_fused_geom_g(flags[i], false, 1, 16, 9, 16, 3, 1, 1, 4);
    check_fused_geom_g(flags[i], strchr(flags[i], 'a') != NULL, 2, 12, 11, 39, 3, 2, 1, 3);
  }
  check_fused_geom_g("bar", true, 1, 64, 14, 64, 3, 1, 1, 32);
  check_fused_geom_g("br", false, 1, 32, 7, 26, 1, 1, 0, 2); /* 1×1: the GEMM engine */
  /* depthwise (Cg = 1): phase planes (small, stride 2) and in-place rows (wide, stride 1) */
  for (int i = 0; i < 7; i++) {
    check_fused_geom_g(flags[i], strchr(flags[i], 'a') != NULL, 1, 6, 10, 6, 3, 2, 1, 6);
    check_fused_geom_g(flags[i], strchr(flags[i], 'a') != NULL, 2, 5, 40, 5, 3, 1, 1, 5);
  }
}
END_TEST

START_TEST(conv2d_fused_depthwise) {
  int64_t xs[4] = {1, 6, 8, 8}, ws[4] = {6, 1, 3, 3}, bs[1] = {6};
  Tensor *x = rnd(F32, 4, xs, 130), *w = rnd(F32, 4, ws, 131), *b = rnd(F32, 1, bs, 132);
  int64_t one[2] = {1, 1}, two[2] = {2, 2};
  RefGeom r = geom(2, two, one, one, one, 6);
  Tensor *want = ref_conv(x, w, &r, F32);
  int64_t plane = want->shape[2] * want->shape[3];
  for (int64_t i = 0; i < want->numel; i++) {
    double v = tensor_get_f64(want, i) + tensor_get_f64(b, (i / plane) % 6);
    tensor_set_f64(want, i, v > 0 ? v : 0);
  }
  Tensor *ins[3] = {x, w, b};
  char err[KERNEL_ERR_SIZE];
  Tensor *got = kt_call(OP_RELAYC_CONV2D_BIAS, kt_attrs(M, "strides=[2, 2]; padding=[1, 1]; groups=6; relu=True"), ins, 3, err);
  ck_assert_ptr_nonnull(got);
  ck_assert_double_le(kt_rel_err(got, want), 1e-5);
  Tensor *all[] = {x, w, b, want, got};
  for (size_t i = 0; i < 5; i++) tensor_release(all[i]);
}
END_TEST

START_TEST(conv2d_nan_and_errors) {
  int64_t xs[4] = {1, 1, 4, 4}, ws[4] = {1, 1, 3, 3};
  Tensor *x = rnd(F32, 4, xs, 140), *w = rnd(F32, 4, ws, 141);
  tensor_set_f64(x, 5, NAN); /* (1, 1): inside every 3x3 window of the 2x2 result */
  char err[KERNEL_ERR_SIZE];
  Tensor *ins[2] = {x, w};
  Tensor *got = kt_call(OP_NN_CONV2D, kt_attrs(M, ""), ins, 2, err);
  ck_assert_ptr_nonnull(got);
  for (int64_t i = 0; i < got->numel; i++) ck_assert(isnan(tensor_get_f64(got, i)));
  tensor_release(got);
  got = kt_call(OP_NN_CONV2D, kt_attrs(M, "data_layout=\"NCHW4c\""), ins, 2, err);
  ck_assert_ptr_null(got);
  ck_assert_ptr_nonnull(strstr(err, "layout"));
  got = kt_call(OP_NN_CONV2D, kt_attrs(M, "padding=[1, 1, 1]"), ins, 2, err);
  ck_assert_ptr_null(got);
  ck_assert_ptr_nonnull(strstr(err, "padding"));
  got = kt_call(OP_NN_CONV2D, kt_attrs(M, "groups=3"), ins, 2, err);
  ck_assert_ptr_null(got);
  /* absurd attributes are errors, not overflows */
  got = kt_call(OP_NN_CONV2D, kt_attrs(M, "strides=[9223372036854775807, 1]"), ins, 2, err);
  ck_assert_ptr_null(got);
  got = kt_call(OP_NN_CONV2D, kt_attrs(M, "padding=[4611686018427387904, 0, 0, 0]; groups=1"), ins, 2, err);
  ck_assert_ptr_null(got);
  /* a huge stride with a huge padding still fits: depthwise falls back to the GEMM engine */
  int64_t ds[4] = {1, 2, 3, 3}, dws[4] = {2, 1, 1, 1};
  Tensor *xd = rnd(F32, 4, ds, 142), *wd = rnd(F32, 4, dws, 143);
  Tensor *dins[2] = {xd, wd};
  got = kt_call(OP_NN_CONV2D, kt_attrs(M, "strides=[100000, 100000]; padding=[0, 0, 99999, 99999]; groups=2"), dins, 2, err);
  ck_assert_msg(got != NULL, "%s", err);
  ck_assert_int_eq(got->numel, 8); /* 2 x 2 per channel: only (0, 0) sees the input */
  ck_assert_double_eq_tol(tensor_get_f64(got, 0), tensor_get_f64(xd, 0) * tensor_get_f64(wd, 0), 1e-6);
  ck_assert_double_eq(tensor_get_f64(got, 1), 0.0);
  tensor_release(got);
  tensor_release(xd);
  tensor_release(wd);
  tensor_release(x);
  tensor_release(w);
}
END_TEST

START_TEST(conv2d_resnet_shapes) {
  /* shapes from ResNet-50 / MobileNet-V2 (reduced spatially), threaded paths */
  const int64_t p3[4] = {3, 3, 3, 3};
  case2d(1, 3, 32, 32, 16, 7, 7, 1, 2, 2, 1, 1, p3, F32, 150);
  case2d(1, 32, 20, 20, 32, 3, 3, 1, 1, 1, 1, 1, P1, F32, 151);
  case2d(1, 64, 14, 14, 128, 3, 3, 1, 2, 2, 1, 1, P1, F32, 152);
  case2d(1, 96, 28, 28, 96, 3, 3, 96, 2, 2, 1, 1, P1, F32, 153);
  case2d(1, 32, 40, 40, 32, 3, 3, 32, 1, 1, 1, 1, P1, F32, 154);
}
END_TEST

/* Random geometries (fixed seed) through every engine against the reference. */
START_TEST(conv2d_random_geometries) {
  uint64_t st = 12345;
  for (int it = 0; it < 80; it++) {
#define RND(n) ((int64_t)((st = st * 6364136223846793005ull + 1442695040888963407ull) >> 33) % (n))
    int64_t G = 1 + RND(3), Cg = 1 + RND(3), Og = 1 + RND(3);
    if (RND(3) == 0) Cg = 1; /* depthwise-like */
    int64_t kh = 1 + RND(4), kw = 1 + RND(4), sh = 1 + RND(3), sw = 1 + RND(3);
    int64_t dh = 1 + RND(2), dw = 1 + RND(3);
    int64_t pad[4] = {RND(3), RND(3), RND(3), RND(3)};
    int64_t H = (kh - 1) * dh + 1 + RND(8), W = (kw - 1) * dw + 1 + RND(9);
    case2d(1 + RND(2), G * Cg, H, W, G * Og, kh, kw, G, sh, sw, dh, dw, pad, F32, 200 + (uint32_t)it);
#undef RND
  }
}
END_TEST

START_TEST(conv_empty_shapes) {
  /* zero-sized batch, channels or result, and a kernel larger than the input:
   * empty results, never a crash */
  struct { int64_t xs[4], ws[4]; const char *attrs; int64_t numel; } cases[] = {
      {{0, 3, 5, 5}, {4, 3, 3, 3}, "", 0},
      {{1, 3, 5, 5}, {0, 3, 3, 3}, "", 0},
      {{1, 3, 2, 2}, {4, 3, 3, 3}, "", 0},
      {{1, 0, 5, 5}, {4, 0, 3, 3}, "padding=[1, 1]", 100},
      {{1, 4, 0, 5}, {4, 1, 1, 1}, "groups=4", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    Tensor *x = kt_new(F32, 4, cases[i].xs), *w = kt_new(F32, 4, cases[i].ws);
    char err[KERNEL_ERR_SIZE] = "";
    Tensor *ins[2] = {x, w};
    Tensor *got = kt_call(OP_NN_CONV2D, kt_attrs(M, cases[i].attrs), ins, 2, err);
    ck_assert_msg(got != NULL, "case %zu failed: %s", i, err);
    ck_assert_int_eq(got->numel, cases[i].numel);
    for (int64_t k = 0; k < got->numel; k++) ck_assert_double_eq(tensor_get_f64(got, k), 0.0);
    tensor_release(got);
    tensor_release(x);
    tensor_release(w);
  }
}
END_TEST

/* ------------------------------------------------------------ split layouts */

/* op on canonical (x, w) with `attrs`, against the same op on the operands
 * converted to dl / kl with out layout ol: the split run must equal
 * layout_transform(canonical result, canon -> ol). */
static void split_case(int32_t op, const char *attrs, const Tensor *x, const Tensor *w,
                       const char *dcanon, const char *kcanon, const char *dl, const char *kl,
                       const char *ol, double tol) {
  char err[KERNEL_ERR_SIZE] = "", full[384];
  Tensor *ins[2] = {(Tensor *)x, (Tensor *)w};
  Tensor *canon = kt_call(op, kt_attrs(M, attrs), ins, 2, err);
  ck_assert_msg(canon != NULL, "canonical run failed: %s (%s)", err, attrs);
  Tensor *want = kt_lt(M, canon, dcanon, ol);
  Tensor *xs = kt_lt(M, x, dcanon, dl), *ws = kt_lt(M, w, kcanon, kl);
  snprintf(full, sizeof full, "%s%sdata_layout=\"%s\"; kernel_layout=\"%s\"; out_layout=\"%s\"", attrs,
           attrs[0] ? "; " : "", dl, kl, ol);
  check_conv(op, full, xs, ws, want, tol);
  Tensor *all[] = {canon, want, xs, ws};
  for (int i = 0; i < 4; i++) tensor_release(all[i]);
}

START_TEST(conv_split_layouts) {
  int64_t xs[4] = {1, 8, 7, 6}, ws[4] = {8, 8, 3, 3};
  Tensor *x = rnd(F32, 4, xs, 800), *w = rnd(F32, 4, ws, 801);
  const char *p1 = "padding=[1, 1]";
  split_case(OP_NN_CONV2D, p1, x, w, "NCHW", "OIHW", "NCHW4c", "OIHW4i4o", "NCHW4c", 1e-5);
  split_case(OP_NN_CONV2D, p1, x, w, "NCHW", "OIHW", "NCHW4c", "OIHW2o4i", "NCHW8c", 1e-5);
  split_case(OP_NN_CONV2D, "strides=[2, 2]", x, w, "NCHW", "OIHW", "NCHW2c", "OIHW2i4o", "NHWC", 1e-5);
  split_case(OP_NN_CONV2D, p1, x, w, "NCHW", "OIHW", "NHWC", "OIHW4i4o", "NCHW4c", 1e-5);
  split_case(OP_NN_CONV2D, p1, x, w, "NCHW", "OIHW", "NCHW8c", "OIHW8i8o", "NCHW", 1e-5);
  /* against the reference loop nest too */
  {
    int64_t st[2] = {1, 1}, dil[2] = {1, 1}, lo[2] = {1, 1}, hi[2] = {1, 1};
    RefGeom r = geom(2, st, dil, lo, hi, 1);
    Tensor *ref = ref_conv(x, w, &r, F32), *xs4 = kt_lt(M, x, "NCHW", "NCHW4c"), *ws4 = kt_lt(M, w, "OIHW", "OIHW4i4o");
    check_conv(OP_NN_CONV2D, "padding=[1, 1]; data_layout=\"NCHW4c\"; kernel_layout=\"OIHW4i4o\"; out_layout=\"NCHW\"",
               xs4, ws4, ref, 1e-5);
    Tensor *all[] = {ref, xs4, ws4};
    for (int i = 0; i < 3; i++) tensor_release(all[i]);
  }
  tensor_release(x);
  tensor_release(w);
  /* channels not a multiple of the factor: padded channels read 0 */
  int64_t xs6[4] = {2, 6, 5, 5}, ws6[4] = {6, 6, 3, 3};
  x = rnd(F32, 4, xs6, 802);
  w = rnd(F32, 4, ws6, 803);
  split_case(OP_NN_CONV2D, "strides=[2, 2]; padding=[1, 0, 0, 1]", x, w, "NCHW", "OIHW", "NCHW4c", "OIHW4i4o",
             "NCHW4c", 1e-5);
  /* a split batch axis (TVM's test_op_level2 NCHW4n4c / OIHW4o4i) */
  split_case(OP_NN_CONV2D, p1, x, w, "NCHW", "OIHW", "NCHW4n4c", "OIHW4o4i", "NCHW4n4c", 1e-5);
  tensor_release(x);
  tensor_release(w);
  /* AlterOpLayout's NCHW16c / OIHW16i16o: 1x1 (GEMM, no im2col) and 3x3 */
  int64_t xs32[4] = {1, 32, 9, 9}, w1s[4] = {16, 32, 1, 1}, w3s[4] = {32, 32, 3, 3};
  x = rnd(F32, 4, xs32, 804);
  Tensor *w1 = rnd(F32, 4, w1s, 805), *w3 = rnd(F32, 4, w3s, 806);
  split_case(OP_NN_CONV2D, "", x, w1, "NCHW", "OIHW", "NCHW16c", "OIHW16i16o", "NCHW16c", 1e-5);
  split_case(OP_NN_CONV2D, p1, x, w3, "NCHW", "OIHW", "NCHW16c", "OIHW16i16o", "NCHW16c", 1e-5);
  tensor_release(w1);
  tensor_release(w3);
  /* depthwise in NCHW16c with an OIHW1i16o weight */
  int64_t wds[4] = {32, 1, 3, 3};
  Tensor *wd = rnd(F32, 4, wds, 807);
  split_case(OP_NN_CONV2D, "padding=[1, 1]; groups=32", x, wd, "NCHW", "OIHW", "NCHW16c", "OIHW1i16o",
             "NCHW16c", 1e-5);
  tensor_release(wd);
  tensor_release(x);
  /* int32 (exact), float64, conv1d and conv2d_transpose */
  int64_t xi[4] = {1, 4, 6, 5}, wi[4] = {4, 4, 3, 3};
  x = rnd(I32, 4, xi, 808);
  w = rnd(I32, 4, wi, 809);
  split_case(OP_NN_CONV2D, p1, x, w, "NCHW", "OIHW", "NCHW2c", "OIHW2i2o", "NCHW4c", 0);
  tensor_release(x);
  tensor_release(w);
  int64_t wg[4] = {4, 2, 3, 3};
  x = rnd(F64, 4, xi, 810);
  w = rnd(F64, 4, wg, 811);
  split_case(OP_NN_CONV2D, "groups=2", x, w, "NCHW", "OIHW", "NCHW2c", "OIHW2o", "NCHW2c", 1e-12);
  tensor_release(x);
  tensor_release(w);
  int64_t x1[3] = {1, 8, 11}, w1d[3] = {4, 8, 3};
  x = rnd(F32, 3, x1, 812);
  w = rnd(F32, 3, w1d, 813);
  split_case(OP_NN_CONV1D, "padding=[1, 2]; strides=[2]", x, w, "NCW", "OIW", "NCW4c", "OIW4i4o", "NCW2c", 1e-5);
  tensor_release(x);
  tensor_release(w);
  int64_t xt[4] = {1, 4, 4, 5}, wt[4] = {4, 3, 3, 3};
  x = rnd(F32, 4, xt, 814);
  w = rnd(F32, 4, wt, 815);
  split_case(OP_NN_CONV2D_TRANSPOSE, "channels=3; strides=[2, 2]; padding=[1, 1]", x, w, "NCHW", "IOHW", "NCHW4c",
             "IOHW4i", "NCHW", 1e-5);
  tensor_release(x);
  tensor_release(w);
}
END_TEST

START_TEST(conv_split_layout_errors) {
  int64_t xs[5] = {1, 2, 4, 4, 4}, ws[6] = {2, 2, 3, 3, 4, 4}, bad[6] = {2, 2, 3, 3, 4, 3};
  Tensor *x = rnd(F32, 5, xs, 820), *w = rnd(F32, 6, ws, 821), *wb = rnd(F32, 6, bad, 822);
  char err[KERNEL_ERR_SIZE] = "";
  Tensor *ins[2] = {x, wb};
  const char *ok = "data_layout=\"NCHW4c\"; kernel_layout=\"OIHW4i4o\"";
  /* a sub-axis whose extent is not its factor */
  Tensor *got = kt_call(OP_NN_CONV2D, kt_attrs(M, ok), ins, 2, err);
  ck_assert_ptr_null(got);
  ck_assert_msg(strstr(err, "layout") != NULL, "%s", err);
  ins[1] = w;
  got = kt_call(OP_NN_CONV2D, kt_attrs(M, ok), ins, 2, err);
  ck_assert_msg(got != NULL, "%s", err);
  ck_assert_int_eq(got->ndim, 5);
  ck_assert_int_eq(got->shape[1], 2);
  ck_assert_int_eq(got->shape[4], 4);
  tensor_release(got);
  /* different primal axes, a rank that does not match, a fused epilogue */
  got = kt_call(OP_NN_CONV2D, kt_attrs(M, "data_layout=\"NCHW4c\"; kernel_layout=\"OIHW4i4o\"; out_layout=\"NCDW4c\""),
                ins, 2, err);
  ck_assert_ptr_null(got);
  got = kt_call(OP_NN_CONV2D, kt_attrs(M, "data_layout=\"NCHW4c4n\"; kernel_layout=\"OIHW4i4o\""), ins, 2, err);
  ck_assert_ptr_null(got);
  got = kt_call(OP_RELAYC_CONV2D_RELU, kt_attrs(M, "data_layout=\"NCHW4c\"; kernel_layout=\"OIHW4i4o\""), ins, 2, err);
  ck_assert_ptr_null(got);
  ck_assert_msg(strstr(err, "epilogue") != NULL, "%s", err);
  tensor_release(x);
  tensor_release(w);
  tensor_release(wb);
}
END_TEST

static Suite *conv_suite(void) {
  Suite *s = suite_create("k_conv");
  TCase *tc = tcase_create("conv");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, conv2d_basic);
  tcase_add_test(tc, conv2d_pointwise);
  tcase_add_test(tc, conv2d_padding_every_side);
  tcase_add_test(tc, conv2d_stride_dilation);
  tcase_add_test(tc, conv2d_groups);
  tcase_add_test(tc, conv2d_grouped_engine);
  tcase_add_test(tc, conv2d_depthwise);
  tcase_add_test(tc, conv2d_depthwise_wide);
  tcase_add_test(tc, conv2d_dtypes);
  tcase_add_test(tc, conv2d_int_wrap_and_out_dtype);
  tcase_add_test(tc, conv2d_nhwc);
  tcase_add_test(tc, conv1d_conv3d);
  tcase_add_test(tc, conv2d_transpose);
  tcase_add_test(tc, conv2d_transpose_sliced);
  tcase_add_test(tc, conv2d_transpose_depthwise);
  tcase_add_test(tc, conv2d_transpose_depthwise_phase);
  tcase_add_test(tc, conv2d_fused_epilogue);
  tcase_add_test(tc, conv2d_fused_grouped);
  tcase_add_test(tc, conv2d_fused_depthwise);
  tcase_add_test(tc, conv2d_nan_and_errors);
  tcase_add_test(tc, conv2d_resnet_shapes);
  tcase_add_test(tc, conv_empty_shapes);
  tcase_add_test(tc, conv2d_random_geometries);
  tcase_add_test(tc, conv_split_layouts);
  tcase_add_test(tc, conv_split_layout_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(conv_suite());
}
