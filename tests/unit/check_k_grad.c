/* tests/unit/check_k_grad.c — the backward kernels (ops/kernels/k_conv_bwd.c,
 * ops/kernels/k_pool_grad.c) against plain reference loops.
 *
 * ref_conv_bw is spec/gradient.md 5.3 written literally: for every weight
 * element, the double sum over (n, y, x) of grad times the data tap it
 * multiplied (0 in the padding), per group. ref_pool_grad is 5.4-5.5: max
 * scans each window's taps in row-major order from (lowest finite value, no
 * tap), a tap winning only when strictly greater (TVM's argmax reducer), and
 * adds the cell's gradient at a winner inside the input; avg adds gradient /
 * the forward divisor to every in-range tap. The fast kernels (GEMM with
 * column blocks and reduction slices, the 1×1 direct path, the per-channel
 * dot products, the phase-plane argmax) must agree within float tolerance,
 * also with 1, 2 and 4 threads (different splits), and the error paths are
 * exercised.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "runtime/threadpool.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"

static Module *M;
static void setup(void) { M = module_new(NULL); }
static void teardown(void) {
  module_free(M);
  M = NULL;
}

static const DType F32 = {DT_FLOAT, 32, 1}, F64 = {DT_FLOAT, 64, 1}, F16 = {DT_FLOAT, 16, 1};

/* ------------------------------------------------------------ conv2d_backward_weight */

typedef struct {
  int64_t N, C, H, W, O, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, G;
} BwCase;

static int64_t out_ext(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi) {
  return (in + lo + hi - ((k - 1) * d + 1)) / s + 1;
}

static Tensor *ref_conv_bw(const Tensor *g, const Tensor *x, const BwCase *b) {
  int64_t OH = g->shape[2], OW = g->shape[3], Cg = b->C / b->G, Og = b->O / b->G;
  int64_t shape[4] = {b->O, Cg, b->kh, b->kw};
  Tensor *w = kt_new(F64, 4, shape);
  int64_t q = 0;
  for (int64_t o = 0; o < b->O; o++)
    for (int64_t i = 0; i < Cg; i++)
      for (int64_t r = 0; r < b->kh; r++)
        for (int64_t s = 0; s < b->kw; s++, q++) {
          double acc = 0;
          int64_t ci = o / Og * Cg + i;
          for (int64_t n = 0; n < b->N; n++)
            for (int64_t y = 0; y < OH; y++)
              for (int64_t xx = 0; xx < OW; xx++) {
                int64_t ih = y * b->sh - b->pt + r * b->dh, iw = xx * b->sw - b->pl + s * b->dw;
                if (ih < 0 || ih >= b->H || iw < 0 || iw >= b->W) continue;
                acc += tensor_get_f64(g, ((n * b->O + o) * OH + y) * OW + xx) *
                       tensor_get_f64(x, ((n * b->C + ci) * b->H + ih) * b->W + iw);
              }
          tensor_set_f64(w, q, acc);
        }
  return w;
}

static Tensor *run_bw(const BwCase *b, Tensor *g, Tensor *x, const char *extra, char *err) {
  char spec[512];
  snprintf(spec, sizeof spec,
           "strides=[%lld, %lld]; padding=[%lld, %lld, %lld, %lld]; dilation=[%lld, %lld]; groups=%lld; "
           "channels=%lld; kernel_size=[%lld, %lld]; kernel_layout=\"NCHW\"; out_layout=\"OIHW\"%s",
           (long long)b->sh, (long long)b->sw, (long long)b->pt, (long long)b->pl, (long long)b->pb,
           (long long)b->pr, (long long)b->dh, (long long)b->dw, (long long)b->G, (long long)b->O,
           (long long)b->kh, (long long)b->kw, extra ? extra : "");
  Tensor *ins[2] = {g, x};
  return kt_call(OP_NN_CONV2D_BACKWARD_WEIGHT, kt_attrs(M, spec), ins, 2, err);
}

static void check_bw(const BwCase *b, DType dt, double tol) {
  int64_t OH = out_ext(b->H, b->kh, b->sh, b->dh, b->pt, b->pb), OW = out_ext(b->W, b->kw, b->sw, b->dw, b->pl, b->pr);
  int64_t gs[4] = {b->N, b->O, OH, OW}, xs[4] = {b->N, b->C, b->H, b->W};
  Tensor *g = kt_new(dt, 4, gs), *x = kt_new(dt, 4, xs);
  kt_fill(g, (uint32_t)(b->C * 7 + b->O), -1, 1);
  kt_fill(x, (uint32_t)(b->H * 3 + b->kh), -1, 1);
  Tensor *want = ref_conv_bw(g, x, b);
  char err[KERNEL_ERR_SIZE] = "";
  Tensor *got = run_bw(b, g, x, NULL, err);
  ck_assert_msg(got, "conv2d_backward_weight C%lld O%lld k%lldx%lld g%lld: %s", (long long)b->C, (long long)b->O,
                (long long)b->kh, (long long)b->kw, (long long)b->G, err);
  ck_assert(dtype_eq(got->dtype, dt) && got->numel == want->numel);
  double e = kt_rel_err(got, want);
  ck_assert_msg(e <= tol, "conv2d_backward_weight N%lld C%lld H%lld O%lld k%lld s%lld d%lld g%lld bits %d: rel err %g",
                (long long)b->N, (long long)b->C, (long long)b->H, (long long)b->O, (long long)b->kh, (long long)b->sh,
                (long long)b->dh, (long long)b->G, dt.bits, e);
  tensor_release(g);
  tensor_release(x);
  tensor_release(want);
  tensor_release(got);
}

static const BwCase BW[] = {
    {1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {2, 4, 9, 7, 6, 3, 2, 2, 1, 1, 0, 2, 1, 1, 1, 1},     /* asymmetric padding, stride 2 on H */
    {2, 8, 10, 10, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 2},   /* dilation 2, two groups */
    {1, 6, 7, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6},     /* depthwise */
    {2, 4, 6, 6, 8, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 4},     /* depthwise, multiplier 2 */
    {3, 16, 5, 5, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},   /* 1x1 direct */
    {2, 16, 9, 9, 24, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},   /* 1x1 stride 2 */
    {1, 32, 6, 6, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8},   /* grouped */
    {4, 3, 20, 20, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},  /* stem: reduction slices */
    {1, 70, 14, 14, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* several column blocks */
    {2, 2, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     /* 1x1 image */
    {1, 8, 40, 40, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* pixel chunks (P = 1600) */
    /* depthwise float32: the padded-plane sweep (odd shapes, strides, dilation, padding) */
    {3, 5, 13, 11, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 5},   /* stride 2, odd sizes, batch 3 */
    {2, 4, 12, 17, 12, 5, 3, 1, 2, 2, 0, 1, 2, 2, 1, 4},  /* multiplier 3, 5x3, dilation, asymmetric */
    {1, 7, 9, 9, 7, 3, 3, 3, 3, 0, 0, 2, 2, 1, 1, 7},     /* stride 3, padding after only */
    {2, 3, 19, 6, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},    /* non-square, stride 1 */
    {1, 2, 4, 4, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2},     /* output 2x2 */
    /* reduction slices chosen over narrow column blocks (P long enough) */
    {1, 64, 32, 32, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, /* 1x1 direct: 2 column blocks x 4 slices */
    {2, 16, 23, 23, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  /* 3x3, 2 images: slices across images */
    /* small groups, float32: the per-group padded-plane sweeps (ResNeXt's 3x3 groups=32) */
    {2, 32, 11, 11, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8},   /* Cg 4, Og 8, stride 2, batch 2 */
    {1, 64, 9, 13, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},    /* Cg = Og = 16, non-square */
    {2, 24, 10, 10, 12, 3, 2, 1, 2, 2, 0, 1, 1, 2, 1, 6},   /* Og 2, dilation, asymmetric padding */
    {1, 68, 7, 7, 68, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},     /* Cg 17: per-group GEMMs */
};

START_TEST(conv_bw_matches_reference) {
  for (size_t i = 0; i < sizeof BW / sizeof *BW; i++) {
    check_bw(&BW[i], F32, 1e-5);
    check_bw(&BW[i], F64, 1e-12);
  }
  check_bw(&BW[0], F16, 5e-3);
  check_bw(&BW[3], F16, 5e-3);
}
END_TEST

START_TEST(conv_bw_thread_counts) {
  /* the unit / slice split depends on the pool size: every split must agree */
  static const int counts[] = {1, 2, 4};
  for (size_t k = 0; k < 3; k++) {
    threadpool_shutdown();
    char v[8];
    snprintf(v, sizeof v, "%d", counts[k]);
    setenv("RELAYC_NUM_THREADS", v, 1);
    check_bw(&BW[8], F32, 1e-5);
    check_bw(&BW[9], F32, 1e-5);
    check_bw(&BW[7], F32, 1e-5);
    check_bw(&BW[17], F32, 1e-5);
    check_bw(&BW[18], F32, 1e-5);
    check_bw(&BW[19], F32, 1e-5);
    check_bw(&BW[20], F32, 1e-5);
  }
  threadpool_shutdown();
  unsetenv("RELAYC_NUM_THREADS");
}
END_TEST

START_TEST(conv_bw_errors_and_layouts) {
  BwCase b = BW[0];
  int64_t gs[4] = {1, 4, 7, 7}, xs[4] = {1, 3, 8, 8}; /* grad 7x7 where the convolution gives 8x8 */
  Tensor *g = kt_new(F32, 4, gs), *x = kt_new(F32, 4, xs);
  char err[KERNEL_ERR_SIZE] = "";
  ck_assert(!run_bw(&b, g, x, NULL, err) && strstr(err, "extent"));
  tensor_release(g);
  Tensor *gi = kt_new((DType){DT_INT, 32, 1}, 4, (int64_t[]){1, 4, 8, 8});
  ck_assert(!run_bw(&b, gi, x, NULL, err) && strstr(err, "float"));
  tensor_release(gi);
  /* NHWC grad and data, HWIO result = the canonical result permuted */
  int64_t gn[4] = {1, 8, 8, 4}, xn[4] = {1, 8, 8, 3};
  Tensor *g2 = kt_new(F32, 4, gn), *x2 = kt_new(F32, 4, xn);
  kt_fill(g2, 3, -1, 1);
  kt_fill(x2, 4, -1, 1);
  Tensor *ins[2] = {g2, x2};
  Tensor *hwio = kt_call(OP_NN_CONV2D_BACKWARD_WEIGHT,
                         kt_attrs(M, "padding=[1, 1, 1, 1]; kernel_size=[3, 3]; data_layout=\"NHWC\"; "
                                     "kernel_layout=\"NHWC\"; out_layout=\"HWIO\""),
                         ins, 2, err);
  ck_assert_msg(hwio && hwio->shape[0] == 3 && hwio->shape[1] == 3 && hwio->shape[2] == 3 && hwio->shape[3] == 4, "%s",
                err);
  Tensor *gc = kt_new(F32, 4, (int64_t[]){1, 4, 8, 8}), *xc = kt_new(F32, 4, (int64_t[]){1, 3, 8, 8});
  for (int64_t h = 0; h < 8; h++)
    for (int64_t w = 0; w < 8; w++) {
      for (int64_t c = 0; c < 4; c++) tensor_set_f64(gc, (c * 8 + h) * 8 + w, tensor_get_f64(g2, (h * 8 + w) * 4 + c));
      for (int64_t c = 0; c < 3; c++) tensor_set_f64(xc, (c * 8 + h) * 8 + w, tensor_get_f64(x2, (h * 8 + w) * 3 + c));
    }
  Tensor *want = ref_conv_bw(gc, xc, &b);
  for (int64_t o = 0; o < 4; o++)
    for (int64_t i = 0; i < 3; i++)
      for (int64_t r = 0; r < 3; r++)
        for (int64_t s = 0; s < 3; s++)
          ck_assert(fabs(tensor_get_f64(hwio, ((r * 3 + s) * 3 + i) * 4 + o) -
                         tensor_get_f64(want, ((o * 3 + i) * 3 + r) * 3 + s)) < 1e-5);
  tensor_release(hwio);
  tensor_release(want);
  tensor_release(gc);
  tensor_release(xc);
  tensor_release(g2);
  tensor_release(x2);
  tensor_release(x);
}
END_TEST

/* ------------------------------------------------------------ pooling gradients */

typedef struct {
  int64_t N, C, H, W, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
  bool ceil, include_pad;
} PgCase;

static int64_t pool_ext(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi, bool ceil) {
  return (in + lo + hi - ((k - 1) * d + 1) + (ceil ? s - 1 : 0)) / s + 1;
}

/* NCHW reference of spec/gradient.md 5.4 / 5.5. */
static Tensor *ref_pool_grad(const Tensor *dy, const Tensor *x, const PgCase *p, bool max) {
  int64_t OH = dy->shape[2], OW = dy->shape[3];
  Tensor *dx = kt_new(F64, 4, x->shape);
  for (int64_t i = 0; i < dx->numel; i++) tensor_set_f64(dx, i, 0);
  double lowest = x->dtype.bits == 64 ? -DBL_MAX : x->dtype.bits == 16 ? -65504.0 : -FLT_MAX;
  for (int64_t nc = 0; nc < p->N * p->C; nc++)
    for (int64_t y = 0; y < OH; y++)
      for (int64_t xx = 0; xx < OW; xx++) {
        double gv = tensor_get_f64(dy, (nc * OH + y) * OW + xx);
        int64_t inside = 0, padded = 0;
        for (int64_t r = 0; r < p->kh; r++) {
          int64_t ih = y * p->sh - p->pt + r * p->dh;
          inside += ih >= 0 && ih < p->H;
          padded += ih >= -p->pt && ih < p->H + p->pb;
        }
        int64_t insw = 0, padw = 0;
        for (int64_t s = 0; s < p->kw; s++) {
          int64_t iw = xx * p->sw - p->pl + s * p->dw;
          insw += iw >= 0 && iw < p->W;
          padw += iw >= -p->pl && iw < p->W + p->pr;
        }
        int64_t div = p->include_pad ? padded * padw : inside * insw;
        if (div < 1) div = 1;
        double best = lowest;
        int64_t bh = -1, bw = -1;
        for (int64_t r = 0; r < p->kh; r++)
          for (int64_t s = 0; s < p->kw; s++) {
            int64_t ih = y * p->sh - p->pt + r * p->dh, iw = xx * p->sw - p->pl + s * p->dw;
            bool in = ih >= 0 && ih < p->H && iw >= 0 && iw < p->W;
            double v = in ? tensor_get_f64(x, (nc * p->H + ih) * p->W + iw) : lowest;
            if (max && v > best) {
              best = v;
              bh = in ? ih : -1;
              bw = iw;
            }
            if (!max && in) {
              int64_t e = (nc * p->H + ih) * p->W + iw;
              tensor_set_f64(dx, e, tensor_get_f64(dx, e) + gv / (double)div);
            }
          }
        if (max && bh >= 0) {
          int64_t e = (nc * p->H + bh) * p->W + bw;
          tensor_set_f64(dx, e, tensor_get_f64(dx, e) + gv);
        }
      }
  return dx;
}

static Tensor *run_pool_grad(bool max, const PgCase *p, Tensor *dy, Tensor *x, const char *layout, char *err) {
  char spec[512];
  snprintf(spec, sizeof spec,
           "pool_size=[%lld, %lld]; strides=[%lld, %lld]; padding=[%lld, %lld, %lld, %lld]; dilation=[%lld, %lld]; "
           "ceil_mode=%s; layout=\"%s\"%s",
           (long long)p->kh, (long long)p->kw, (long long)p->sh, (long long)p->sw, (long long)p->pt, (long long)p->pl,
           (long long)p->pb, (long long)p->pr, (long long)p->dh, (long long)p->dw, p->ceil ? "True" : "False", layout,
           !max && p->include_pad ? "; count_include_pad=True" : "");
  Tensor *ins[2] = {dy, x};
  return kt_call(max ? OP_NN_MAX_POOL2D_GRAD : OP_NN_AVG_POOL2D_GRAD, kt_attrs(M, spec), ins, 2, err);
}

static void check_pg(const PgCase *p, bool max, DType dt, double tol, bool ties) {
  int64_t OH = pool_ext(p->H, p->kh, p->sh, p->dh, p->pt, p->pb, p->ceil);
  int64_t OW = pool_ext(p->W, p->kw, p->sw, p->dw, p->pl, p->pr, p->ceil);
  Tensor *x = kt_new(dt, 4, (int64_t[]){p->N, p->C, p->H, p->W});
  Tensor *dy = kt_new(dt, 4, (int64_t[]){p->N, p->C, OH, OW});
  kt_fill(x, (uint32_t)(p->H * 5 + p->kh), -3, 3);
  kt_fill(dy, (uint32_t)(p->W * 7 + p->kw), -1, 1);
  if (ties) /* few distinct values: ties in every window */
    for (int64_t i = 0; i < x->numel; i++) tensor_set_f64(x, i, round(tensor_get_f64(x, i)));
  Tensor *want = ref_pool_grad(dy, x, p, max);
  char err[KERNEL_ERR_SIZE] = "";
  Tensor *got = run_pool_grad(max, p, dy, x, "NCHW", err);
  ck_assert_msg(got, "%s: %s", max ? "max" : "avg", err);
  double e = kt_rel_err(got, want);
  ck_assert_msg(e <= tol, "%s_pool2d_grad H%lld k%lldx%lld s%lld p%lld d%lld ceil %d bits %d ties %d: rel err %g",
                max ? "max" : "avg", (long long)p->H, (long long)p->kh, (long long)p->kw, (long long)p->sh,
                (long long)p->pt, (long long)p->dh, p->ceil, dt.bits, ties, e);
  tensor_release(got);
  tensor_release(want);
  tensor_release(x);
  tensor_release(dy);
}

static const PgCase PG[] = {
    {2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false, false},
    {1, 2, 9, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, true},
    {2, 2, 7, 9, 3, 2, 1, 2, 1, 0, 2, 1, 1, 1, true, false},
    {1, 3, 10, 10, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, false, true},
    {2, 4, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 1, 1, false, false},
    {1, 2, 6, 6, 2, 2, 3, 3, 0, 0, 0, 0, 1, 1, true, false},
    {3, 5, 33, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false},
    {2, 8, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false}, /* ResNet's max pool, threaded */
};

START_TEST(pool_grad_matches_reference) {
  for (size_t i = 0; i < sizeof PG / sizeof *PG; i++)
    for (int max = 0; max < 2; max++) {
      check_pg(&PG[i], max, F32, 1e-6, false);
      check_pg(&PG[i], max, F64, 1e-12, false);
      check_pg(&PG[i], max, F32, 1e-6, true);
    }
  check_pg(&PG[1], true, F16, 2e-3, false);
  check_pg(&PG[1], false, F16, 2e-3, false);
}
END_TEST

START_TEST(pool_grad_tie_rule_and_layouts) {
  /* a window of equal values: the first tap gets it all; a window of lowest values: nobody */
  PgCase p = {1, 1, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, false, false};
  Tensor *x = kt_new(F32, 4, (int64_t[]){1, 1, 2, 2}), *dy = kt_new(F32, 4, (int64_t[]){1, 1, 1, 1});
  for (int i = 0; i < 4; i++) tensor_set_f64(x, i, 5);
  tensor_set_f64(dy, 0, 2);
  char err[KERNEL_ERR_SIZE] = "";
  Tensor *got = run_pool_grad(true, &p, dy, x, "NCHW", err);
  ck_assert(got && tensor_get_f64(got, 0) == 2 && tensor_get_f64(got, 1) == 0 && tensor_get_f64(got, 3) == 0);
  tensor_release(got);
  for (int i = 0; i < 4; i++) tensor_set_f64(x, i, -FLT_MAX);
  got = run_pool_grad(true, &p, dy, x, "NCHW", err);
  for (int i = 0; i < 4; i++) ck_assert(got && tensor_get_f64(got, i) == 0);
  tensor_release(got);
  /* padding reads the lowest value: with negative data in a padded window the largest data value wins */
  PgCase q = {1, 1, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false};
  Tensor *dy2 = kt_new(F32, 4, (int64_t[]){1, 1, 2, 2});
  for (int i = 0; i < 4; i++) {
    tensor_set_f64(x, i, -10 - i);
    tensor_set_f64(dy2, i, 1);
  }
  got = run_pool_grad(true, &q, dy2, x, "NCHW", err);
  ck_assert(got && tensor_get_f64(got, 0) == 4 && tensor_get_f64(got, 3) == 0);
  tensor_release(got);
  /* NHWC equals NCHW transposed */
  PgCase r = {2, 5, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false};
  Tensor *xn = kt_new(F32, 4, (int64_t[]){2, 9, 9, 5}), *gn = kt_new(F32, 4, (int64_t[]){2, 5, 5, 5});
  kt_fill(xn, 9, -2, 2);
  kt_fill(gn, 10, -1, 1);
  Tensor *xc = kt_new(F32, 4, (int64_t[]){2, 5, 9, 9}), *gc = kt_new(F32, 4, (int64_t[]){2, 5, 5, 5});
  for (int64_t n = 0; n < 2; n++)
    for (int64_t c = 0; c < 5; c++) {
      for (int64_t hw = 0; hw < 81; hw++)
        tensor_set_f64(xc, (n * 5 + c) * 81 + hw, tensor_get_f64(xn, (n * 81 + hw) * 5 + c));
      for (int64_t hw = 0; hw < 25; hw++)
        tensor_set_f64(gc, (n * 5 + c) * 25 + hw, tensor_get_f64(gn, (n * 25 + hw) * 5 + c));
    }
  for (int max = 0; max < 2; max++) {
    Tensor *a = run_pool_grad(max, &r, gn, xn, "NHWC", err), *b = run_pool_grad(max, &r, gc, xc, "NCHW", err);
    ck_assert_msg(a && b, "%s", err);
    for (int64_t n = 0; n < 2; n++)
      for (int64_t c = 0; c < 5; c++)
        for (int64_t hw = 0; hw < 81; hw++)
          ck_assert(fabs(tensor_get_f64(a, (n * 81 + hw) * 5 + c) - tensor_get_f64(b, (n * 5 + c) * 81 + hw)) < 1e-6);
    tensor_release(a);
    tensor_release(b);
  }
  /* wrong out_grad shape, integer data */
  ck_assert(!run_pool_grad(true, &r, dy2, xn, "NHWC", err) && strstr(err, "pooled shape"));
  Tensor *xi = kt_new((DType){DT_INT, 32, 1}, 4, (int64_t[]){1, 1, 2, 2});
  Tensor *gi = kt_new((DType){DT_INT, 32, 1}, 4, (int64_t[]){1, 1, 1, 1});
  ck_assert(!run_pool_grad(false, &p, gi, xi, "NCHW", err) && strstr(err, "float"));
  tensor_release(xi);
  tensor_release(gi);
  tensor_release(xn);
  tensor_release(gn);
  tensor_release(xc);
  tensor_release(gc);
  tensor_release(dy2);
  tensor_release(x);
  tensor_release(dy);
}
END_TEST

int main(void) {
  Suite *s = suite_create("k_grad");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 300);
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, conv_bw_matches_reference);
  tcase_add_test(t, conv_bw_thread_counts);
  tcase_add_test(t, conv_bw_errors_and_layouts);
  tcase_add_test(t, pool_grad_matches_reference);
  tcase_add_test(t, pool_grad_tie_rule_and_layouts);
  suite_add_tcase(s, t);
  return unit_run(s);
}
