/* tests/unit/check_k_pool.c — pooling and batch_norm kernels against plain loops.
 *
 * ref_pool is spec/ops.md §9 written literally for canonical N C [D] H W
 * data: window start y·s − pad_lo, taps start + t·dilation; max starts at the
 * dtype's lowest finite value, avg divides by the in-input tap count
 * (count_include_pad=False, at least 1) or the in-padded-extent count; int
 * sums wrap then divide truncating. Other layouts are tested by permuting
 * the data and the expected result; split layouts (NCHW16c) by comparing with
 * layout_transform → NCHW pooling → layout_transform. ref_adaptive / global use the cell
 * bounds [floor(i·L/n), ceil((i+1)·L/n)). batch_norm follows §10.1.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_plane.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "runtime/value.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"

static Module *Mod;
static void setup(void) { Mod = module_new(NULL); }
static void teardown(void) {
  module_free(Mod);
  Mod = NULL;
}

static const DType F32 = {DT_FLOAT, 32, 1}, F64 = {DT_FLOAT, 64, 1}, F16 = {DT_FLOAT, 16, 1},
                   I32 = {DT_INT, 32, 1}, I8 = {DT_INT, 8, 1}, U8 = {DT_UINT, 8, 1};

typedef struct {
  int nsp;
  bool max, ceil, include_pad;
  int64_t k[3], s[3], d[3], lo[3], hi[3];
} PoolSpec;

static double lowest(DType dt) {
  if (dtype_is_float(dt)) return dt.bits == 16 ? -65504.0 : dt.bits == 64 ? -DBL_MAX : -FLT_MAX;
  return dt.code == DT_UINT ? 0 : -ldexp(1, dt.bits - 1);
}

/* x is (N, C, spatial...) with nsp spatial dims. */
static Tensor *ref_pool(const Tensor *x, const PoolSpec *p) {
  int nsp = p->nsp;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, shape[5] = {x->shape[0], x->shape[1]};
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, lo[3] = {0}, hi[3] = {0};
  for (int i = 0; i < nsp; i++) {
    int a = 3 - nsp + i;
    in[a] = x->shape[2 + i];
    k[a] = p->k[i];
    s[a] = p->s[i];
    d[a] = p->d[i];
    lo[a] = p->lo[i];
    hi[a] = p->hi[i];
    int64_t dk = (k[a] - 1) * d[a] + 1;
    out[a] = (in[a] + lo[a] + hi[a] - dk + (p->ceil ? s[a] - 1 : 0)) / s[a] + 1;
    shape[2 + i] = out[a];
  }
  Tensor *y = kt_new(x->dtype, 2 + nsp, shape);
  bool isint = !dtype_is_float(x->dtype);
  int64_t q = 0;
  for (int64_t nc = 0; nc < x->shape[0] * x->shape[1]; nc++)
    for (int64_t a = 0; a < out[0]; a++)
      for (int64_t b = 0; b < out[1]; b++)
        for (int64_t c = 0; c < out[2]; c++, q++) {
          double m = lowest(x->dtype), sum = 0;
          int64_t isum = 0, inside = 0, padded = 0;
          for (int64_t u = 0; u < k[0]; u++)
            for (int64_t v = 0; v < k[1]; v++)
              for (int64_t w = 0; w < k[2]; w++) {
                int64_t pd = a * s[0] - lo[0] + u * d[0], ph = b * s[1] - lo[1] + v * d[1],
                        pw = c * s[2] - lo[2] + w * d[2];
                bool in_pad = pd >= -lo[0] && pd < in[0] + hi[0] && ph >= -lo[1] &&
                              ph < in[1] + hi[1] && pw >= -lo[2] && pw < in[2] + hi[2];
                padded += in_pad;
                if (pd < 0 || pd >= in[0] || ph < 0 || ph >= in[1] || pw < 0 || pw >= in[2]) continue;
                inside++;
                int64_t idx = ((nc * in[0] + pd) * in[1] + ph) * in[2] + pw;
                double v2 = tensor_get_f64(x, idx);
                if (v2 > m) m = v2;
                sum += v2;
                isum += tensor_get_i64(x, idx);
              }
          int64_t cnt = p->include_pad ? padded : inside;
          if (cnt < 1) cnt = 1;
          if (p->max) tensor_set_f64(y, q, m);
          else if (isint) tensor_set_i64(y, q, value_wrap_int(x->dtype, isum) / cnt);
          else tensor_set_f64(y, q, sum / (double)cnt);
        }
  return y;
}

static Tensor *rnd(DType dt, int nd, const int64_t *shape, uint32_t seed) {
  Tensor *t = kt_new(dt, nd, shape);
  if (dtype_is_float(dt)) kt_fill(t, seed, -1, 1);
  else kt_fill(t, seed, dt.code == DT_UINT ? 0 : -100, 100);
  return t;
}

static void check_op(int32_t op, const char *attrs, Tensor *x, const Tensor *want, double tol) {
  char err[KERNEL_ERR_SIZE] = "";
  Tensor *ins[1] = {x};
  Tensor *got = kt_call(op, kt_attrs(Mod, attrs), ins, 1, err);
  ck_assert_msg(got != NULL, "kernel failed: %s (%s)", err, attrs);
  ck_assert_int_eq(got->ndim, want->ndim);
  for (int i = 0; i < want->ndim; i++)
    ck_assert_msg(got->shape[i] == want->shape[i], "dim %d: %lld vs %lld (%s)", i,
                  (long long)got->shape[i], (long long)want->shape[i], attrs);
  if (tol == 0) ck_assert_msg(kt_equal(got, want), "result differs (%s)", attrs);
  else ck_assert_msg(kt_rel_err(got, want) <= tol, "rel err %g (%s)", kt_rel_err(got, want), attrs);
  tensor_release(got);
}

static int32_t pool_op(int nsp, bool max) {
  static const int32_t mx[4] = {0, OP_NN_MAX_POOL1D, OP_NN_MAX_POOL2D, OP_NN_MAX_POOL3D};
  static const int32_t av[4] = {0, OP_NN_AVG_POOL1D, OP_NN_AVG_POOL2D, OP_NN_AVG_POOL3D};
  return max ? mx[nsp] : av[nsp];
}

static void list(char *buf, size_t cap, const int64_t *v, int n) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < n; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)v[i]);
  snprintf(buf + k, cap - k, "]");
}

static void pool_case(const PoolSpec *p, const int64_t *xshape, DType dt, uint32_t seed) {
  Tensor *x = rnd(dt, 2 + p->nsp, xshape, seed);
  Tensor *want = ref_pool(x, p);
  char ks[64], ss[64], ds[64], ps[96], attrs[400];
  int64_t pads[6];
  for (int i = 0; i < p->nsp; i++) {
    pads[i] = p->lo[i];
    pads[p->nsp + i] = p->hi[i];
  }
  list(ks, sizeof ks, p->k, p->nsp);
  list(ss, sizeof ss, p->s, p->nsp);
  list(ds, sizeof ds, p->d, p->nsp);
  list(ps, sizeof ps, pads, 2 * p->nsp);
  snprintf(attrs, sizeof attrs, "pool_size=%s; strides=%s; dilation=%s; padding=%s; ceil_mode=%s%s", ks,
           ss, ds, ps, p->ceil ? "True" : "False",
           p->max ? "" : p->include_pad ? "; count_include_pad=True" : "; count_include_pad=False");
  double tol = !dtype_is_float(dt) ? 0 : dt.bits == 16 ? 1e-3 : 1e-6;
  check_op(pool_op(p->nsp, p->max), attrs, x, want, tol);
  tensor_release(x);
  tensor_release(want);
}

START_TEST(pool2d_window) {
  int64_t xs[4] = {2, 3, 9, 10};
  const int64_t pads[][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}, {1, 2, 2, 1}};
  for (int mx = 0; mx < 2; mx++)
    for (int pi = 0; pi < 6; pi++)
      for (int ceil = 0; ceil < 2; ceil++)
        for (int inc = 0; inc < 2; inc++) {
          PoolSpec p = {.nsp = 2, .max = mx, .ceil = ceil, .include_pad = inc,
                        .k = {3, 2}, .s = {2, 3}, .d = {1, 1},
                        .lo = {pads[pi][0], pads[pi][1]}, .hi = {pads[pi][2], pads[pi][3]}};
          pool_case(&p, xs, F32, (uint32_t)(100 + pi * 4 + ceil * 2 + inc));
        }
}
END_TEST

START_TEST(pool2d_resnet_and_dilation) {
  int64_t xs[4] = {1, 8, 112, 112};
  PoolSpec r = {.nsp = 2, .max = true, .k = {3, 3}, .s = {2, 2}, .d = {1, 1}, .lo = {1, 1}, .hi = {1, 1}};
  pool_case(&r, xs, F32, 1);
  int64_t ys[4] = {1, 2, 11, 12};
  PoolSpec dl = {.nsp = 2, .max = false, .k = {2, 3}, .s = {1, 2}, .d = {3, 2}, .lo = {2, 1}, .hi = {0, 3}};
  pool_case(&dl, ys, F32, 2);
  dl.max = true;
  pool_case(&dl, ys, F32, 3);
  /* strides larger than the window */
  PoolSpec big = {.nsp = 2, .max = false, .k = {2, 2}, .s = {4, 5}, .d = {1, 1}, .lo = {0, 0}, .hi = {0, 0}};
  pool_case(&big, ys, F32, 4);
  /* a window entirely in the padding: max gives the lowest finite value */
  int64_t zs[4] = {1, 1, 2, 2};
  PoolSpec pad = {.nsp = 2, .max = true, .k = {1, 1}, .s = {3, 3}, .d = {1, 1}, .lo = {2, 2}, .hi = {0, 0}};
  Tensor *x = rnd(F32, 4, zs, 5);
  Tensor *want = ref_pool(x, &pad);
  ck_assert_double_eq(tensor_get_f64(want, 0), -FLT_MAX);
  check_op(OP_NN_MAX_POOL2D, "pool_size=[1, 1]; strides=[3, 3]; padding=[2, 2, 0, 0]", x, want, 0);
  tensor_release(x);
  tensor_release(want);
}
END_TEST

START_TEST(pool_dtypes) {
  int64_t xs[4] = {1, 2, 7, 6};
  PoolSpec p = {.nsp = 2, .max = false, .k = {3, 3}, .s = {2, 2}, .d = {1, 1}, .lo = {1, 1}, .hi = {1, 1}};
  DType dts[] = {F64, F16, I32, I8, U8};
  for (int i = 0; i < 5; i++) {
    p.max = false;
    pool_case(&p, xs, dts[i], 10 + (uint32_t)i);
    p.include_pad = true;
    pool_case(&p, xs, dts[i], 20 + (uint32_t)i);
    p.include_pad = false;
    p.max = true;
    pool_case(&p, xs, dts[i], 30 + (uint32_t)i);
  }
  /* int8 avg: the window sum wraps in int8 before the (truncating) division */
  int64_t ts[4] = {1, 1, 1, 2};
  Tensor *x = kt_new(I8, 4, ts);
  tensor_set_i64(x, 0, 100);
  tensor_set_i64(x, 1, 100);
  int64_t os[4] = {1, 1, 1, 1};
  Tensor *want = kt_new(I8, 4, os);
  tensor_set_i64(want, 0, value_wrap_int(I8, 200) / 2); /* -56 / 2 = -28 */
  check_op(OP_NN_AVG_POOL2D, "pool_size=[1, 2]", x, want, 0);
  tensor_release(x);
  tensor_release(want);
}
END_TEST

START_TEST(pool_1d_3d) {
  int64_t xs1[3] = {2, 3, 13};
  PoolSpec p1 = {.nsp = 1, .max = false, .ceil = true, .k = {3}, .s = {2}, .d = {2}, .lo = {1}, .hi = {2}};
  pool_case(&p1, xs1, F32, 40);
  p1.max = true;
  pool_case(&p1, xs1, F32, 41);
  int64_t xs3[5] = {1, 2, 5, 6, 7};
  PoolSpec p3 = {.nsp = 3, .max = false, .include_pad = true, .k = {2, 3, 2}, .s = {2, 1, 3},
                 .d = {1, 2, 1}, .lo = {1, 0, 1}, .hi = {0, 2, 1}};
  pool_case(&p3, xs3, F32, 42);
  p3.max = true;
  p3.ceil = true;
  pool_case(&p3, xs3, F32, 43);
}
END_TEST

/* Random windows (fixed seed) on both engines (phase planes and the generic loop via int32). */
START_TEST(pool_random_windows) {
  uint64_t st = 777;
  for (int it = 0; it < 80; it++) {
#define RND(n) ((int64_t)((st = st * 6364136223846793005ull + 1442695040888963407ull) >> 33) % (n))
    PoolSpec p = {.nsp = 2, .max = RND(2), .ceil = RND(2), .include_pad = RND(2)};
    int64_t xs[4] = {1, 1 + RND(3), 0, 0};
    for (int a = 0; a < 2; a++) {
      p.k[a] = 1 + RND(4);
      p.s[a] = 1 + RND(3);
      p.d[a] = 1 + RND(2);
      p.lo[a] = RND(3);
      p.hi[a] = RND(3);
      xs[2 + a] = (p.k[a] - 1) * p.d[a] + 1 + RND(7);
    }
    pool_case(&p, xs, it % 4 == 3 ? I32 : F32, 300 + (uint32_t)it);
#undef RND
  }
}
END_TEST

START_TEST(pool_nhwc) {
  int64_t xs[4] = {2, 5, 8, 9};
  const int nhwc[4] = {0, 2, 3, 1};
  Tensor *x = rnd(F32, 4, xs, 50);
  PoolSpec p = {.nsp = 2, .max = true, .k = {3, 3}, .s = {2, 2}, .d = {1, 1}, .lo = {1, 0}, .hi = {1, 2}};
  Tensor *want = ref_pool(x, &p), *xn = kt_permuted(x, nhwc), *wn = kt_permuted(want, nhwc);
  check_op(OP_NN_MAX_POOL2D, "pool_size=[3, 3]; strides=[2, 2]; padding=[1, 0, 1, 2]; layout=\"NHWC\"", xn, wn, 0);
  tensor_release(want);
  tensor_release(wn);
  p.max = false;
  want = ref_pool(x, &p);
  wn = kt_permuted(want, nhwc);
  check_op(OP_NN_AVG_POOL2D, "pool_size=[3, 3]; strides=[2, 2]; padding=[1, 0, 1, 2]; layout=\"NHWC\"", xn, wn, 1e-6);
  Tensor *all[] = {x, want, xn, wn};
  for (int i = 0; i < 4; i++) tensor_release(all[i]);
}
END_TEST

/* Adaptive (and global = 1×1 adaptive) pooling reference over NCHW. */
static Tensor *ref_adaptive(const Tensor *x, int64_t oh, int64_t ow, bool max) {
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  int64_t shape[4] = {N, C, oh, ow};
  Tensor *y = kt_new(x->dtype, 4, shape);
  int64_t q = 0;
  for (int64_t nc = 0; nc < N * C; nc++)
    for (int64_t i = 0; i < oh; i++)
      for (int64_t j = 0; j < ow; j++, q++) {
        int64_t h0 = i * H / oh, h1 = ((i + 1) * H + oh - 1) / oh;
        int64_t w0 = j * W / ow, w1 = ((j + 1) * W + ow - 1) / ow;
        double m = -FLT_MAX, s = 0;
        for (int64_t h = h0; h < h1; h++)
          for (int64_t w = w0; w < w1; w++) {
            double v = tensor_get_f64(x, (nc * H + h) * W + w);
            if (v > m) m = v;
            s += v;
          }
        tensor_set_f64(y, q, max ? m : s / (double)((h1 - h0) * (w1 - w0)));
      }
  return y;
}

START_TEST(global_and_adaptive) {
  int64_t xs[4] = {2, 3, 7, 10};
  Tensor *x = rnd(F32, 4, xs, 60);
  Tensor *w = ref_adaptive(x, 1, 1, false);
  check_op(OP_NN_GLOBAL_AVG_POOL2D, "", x, w, 1e-6);
  tensor_release(w);
  w = ref_adaptive(x, 1, 1, true);
  check_op(OP_NN_GLOBAL_MAX_POOL2D, "", x, w, 0);
  tensor_release(w);
  w = ref_adaptive(x, 3, 4, false);
  check_op(OP_NN_ADAPTIVE_AVG_POOL2D, "output_size=[3, 4]", x, w, 1e-6);
  tensor_release(w);
  w = ref_adaptive(x, 5, 5, true);
  check_op(OP_NN_ADAPTIVE_MAX_POOL2D, "output_size=[5]", x, w, 0);
  tensor_release(w);
  w = ref_adaptive(x, 7, 10, false);
  check_op(OP_NN_ADAPTIVE_AVG_POOL2D, "", x, w, 1e-6); /* [] keeps the extents */
  tensor_release(w);
  w = ref_adaptive(x, 9, 13, false); /* more cells than input rows: overlapping cells */
  check_op(OP_NN_ADAPTIVE_AVG_POOL2D, "output_size=[9, 13]", x, w, 1e-6);
  tensor_release(w);
  /* NHWC global average (the channels-last inner loop) */
  const int nhwc[4] = {0, 2, 3, 1};
  Tensor *xn = kt_permuted(x, nhwc);
  w = ref_adaptive(x, 1, 1, false);
  Tensor *wn = kt_permuted(w, nhwc);
  check_op(OP_NN_GLOBAL_AVG_POOL2D, "layout=\"NHWC\"", xn, wn, 1e-6);
  tensor_release(w);
  tensor_release(wn);
  tensor_release(xn);
  /* 1-D and 3-D global pools reduce every spatial axis */
  int64_t s1[3] = {2, 3, 5}, o1[3] = {2, 3, 1};
  Tensor *x1 = rnd(F32, 3, s1, 61), *w1 = kt_new(F32, 3, o1);
  for (int64_t i = 0; i < 6; i++) {
    double s = 0;
    for (int k = 0; k < 5; k++) s += tensor_get_f64(x1, i * 5 + k);
    tensor_set_f64(w1, i, s / 5);
  }
  check_op(OP_NN_GLOBAL_AVG_POOL1D, "", x1, w1, 1e-6);
  tensor_release(x1);
  tensor_release(w1);
  /* NaN reaches an average */
  tensor_set_f64(x, 3, NAN);
  char err[KERNEL_ERR_SIZE];
  Tensor *ins[1] = {x};
  Tensor *g = kt_call(OP_NN_GLOBAL_AVG_POOL2D, kt_attrs(Mod, ""), ins, 1, err);
  ck_assert(isnan(tensor_get_f64(g, 0)) && !isnan(tensor_get_f64(g, 1)));
  tensor_release(g);
  ck_assert_ptr_null(kt_call(OP_NN_MAX_POOL2D, kt_attrs(Mod, "layout=\"NCH\""), ins, 1, err));
  tensor_release(x);
}
END_TEST

/* ---- the 8-float sweeps (k_vec8.h) keep the 16-lane results bit for bit */

/* The global float32 average's documented order: 16 lane sums over the
 * 16-float blocks, added in lane order, then the tail, divided by n. */
static float lane16_mean(const float *x, int64_t n) {
  float acc[16] = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; k++) acc[k] += x[i + k];
  float s = 0;
  for (int k = 0; k < 16; k++) s += acc[k];
  for (; i < n; i++) s += x[i];
  return n > 0 ? s / (float)n : 0.0f;
}

START_TEST(vec8_sweeps_exact) {
  /* kplane_gather2: every length around the 8-float blocks */
  float src[200], dst[100], want[100];
  for (int i = 0; i < 200; i++) src[i] = (float)i * 0.5f - 7.0f;
  for (int64_t n = 0; n <= 90; n++) {
    for (int i = 0; i < 100; i++) dst[i] = want[i] = -1.0f;
    for (int64_t i = 0; i < n; i++) want[i] = src[2 * i];
    kplane_gather2(dst, src, n);
    ck_assert_msg(memcmp(dst, want, sizeof dst) == 0, "gather2 n=%lld", (long long)n);
  }
  /* global average and max over planes of 1..70 floats: the lane order exactly */
  for (int64_t hw = 1; hw <= 70; hw += 3) {
    int64_t xs[4] = {1, 3, 1, hw}, os[4] = {1, 3, 1, 1};
    Tensor *x = rnd(F32, 4, xs, (uint32_t)(300 + hw)), *wa = kt_new(F32, 4, os), *wm = kt_new(F32, 4, os);
    const float *xv = x->data;
    for (int c = 0; c < 3; c++) {
      ((float *)wa->data)[c] = lane16_mean(xv + c * hw, hw);
      float m = -FLT_MAX;
      for (int64_t i = 0; i < hw; i++) m = xv[c * hw + i] > m ? xv[c * hw + i] : m;
      ((float *)wm->data)[c] = m;
    }
    check_op(OP_NN_GLOBAL_AVG_POOL2D, "", x, wa, 0);
    check_op(OP_NN_GLOBAL_MAX_POOL2D, "", x, wm, 0);
    Tensor *all[] = {x, wa, wm};
    for (int i = 0; i < 3; i++) tensor_release(all[i]);
  }
  /* flat max/avg sweeps whose swept length is 16, 32 + 16 and 64 + 16 floats */
  const int64_t planes[][2] = {{3, 3}, {5, 9}, {9, 9}, {10, 16}, {13, 6}};
  for (int pi = 0; pi < 5; pi++)
    for (int mx = 0; mx < 2; mx++) {
      int64_t xs[4] = {1, 2, planes[pi][0], planes[pi][1]};
      PoolSpec p = {.nsp = 2, .max = mx, .k = {3, 2}, .s = {1, 1}, .d = {1, 1}, .lo = {1, 0}, .hi = {1, 1}};
      pool_case(&p, xs, F32, (uint32_t)(400 + pi * 2 + mx));
    }
}
END_TEST

/* ---- split layouts (NCHW16c): pooled in place, spatial axes unsplit */

/* op(layout=split) on lt(x) must equal lt(op(x) in NCHW), lt = kt_lt. */
static void split_pool(int32_t op, const char *attrs, Tensor *x, const char *split, double tol) {
  char err[KERNEL_ERR_SIZE] = "", full[256];
  Tensor *ins[1] = {x};
  Tensor *canon = kt_call(op, kt_attrs(Mod, attrs), ins, 1, err);
  ck_assert_msg(canon != NULL, "canonical run failed: %s (%s)", err, attrs);
  Tensor *want = kt_lt(Mod, canon, "NCHW", split), *xs = kt_lt(Mod, x, "NCHW", split);
  snprintf(full, sizeof full, "%s%slayout=\"%s\"", attrs, attrs[0] ? "; " : "", split);
  check_op(op, full, xs, want, tol);
  tensor_release(canon);
  tensor_release(want);
  tensor_release(xs);
}

START_TEST(pool_split_layouts) {
  int64_t xs[4] = {2, 32, 9, 8}, x6[4] = {1, 6, 7, 7};
  Tensor *x = rnd(F32, 4, xs, 90), *y = rnd(F32, 4, x6, 91);
  const char *win = "pool_size=[3, 3]; strides=[2, 2]; padding=[1, 0, 1, 1]";
  split_pool(OP_NN_MAX_POOL2D, win, x, "NCHW16c", 0);
  split_pool(OP_NN_AVG_POOL2D, win, x, "NCHW16c", 1e-6);
  split_pool(OP_NN_AVG_POOL2D, "pool_size=[2, 2]; padding=[1, 1]; count_include_pad=True; ceil_mode=True", x,
             "NCHW8c", 1e-6);
  split_pool(OP_NN_GLOBAL_AVG_POOL2D, "", x, "NCHW16c", 1e-6);
  split_pool(OP_NN_GLOBAL_MAX_POOL2D, "", x, "NCHW4n4c", 0);
  split_pool(OP_NN_ADAPTIVE_AVG_POOL2D, "output_size=[3, 2]", x, "NCHW16c", 1e-6);
  split_pool(OP_NN_ADAPTIVE_MAX_POOL2D, "output_size=[4]", y, "NCHW4c", 0); /* padded channels */
  split_pool(OP_NN_MAX_POOL2D, win, y, "NCHW4c", 0);
  /* a split spatial axis, or a layout of the wrong rank, is an error */
  char err[KERNEL_ERR_SIZE] = "";
  Tensor *xw = kt_lt(Mod, y, "NCHW", "NCHW7w"), *ins[1] = {xw};
  ck_assert_ptr_null(kt_call(OP_NN_MAX_POOL2D, kt_attrs(Mod, "pool_size=[2, 2]; layout=\"NCHW7w\""), ins, 1, err));
  ck_assert_msg(strstr(err, "splits") != NULL, "%s", err);
  ck_assert_ptr_null(kt_call(OP_NN_GLOBAL_AVG_POOL2D, kt_attrs(Mod, "layout=\"NCHW7w\""), ins, 1, err));
  ins[0] = y;
  ck_assert_ptr_null(kt_call(OP_NN_MAX_POOL2D, kt_attrs(Mod, "pool_size=[2, 2]; layout=\"NCHW4c\""), ins, 1, err));
  tensor_release(xw);
  tensor_release(x);
  tensor_release(y);
}
END_TEST

/* ---- batch_norm */

static void bn_case(int nd, const int64_t *shape, int axis, bool center, bool scale, DType dt,
                    bool fuse_relu, uint32_t seed) {
  int64_t C = shape[axis < 0 ? axis + nd : axis], cs[1] = {C};
  Tensor *x = rnd(dt, nd, shape, seed);
  Tensor *g = rnd(dt, 1, cs, seed + 1), *b = rnd(dt, 1, cs, seed + 2), *mu = rnd(dt, 1, cs, seed + 3);
  Tensor *var = kt_new(dt, 1, cs);
  kt_fill(var, seed + 4, 0.1, 2);
  int ax = axis < 0 ? axis + nd : axis;
  int64_t inner = 1;
  for (int i = ax + 1; i < nd; i++) inner *= shape[i];
  Tensor *want = kt_new(dt, nd, shape);
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t c = (i / inner) % C;
    double v = (tensor_get_f64(x, i) - tensor_get_f64(mu, c)) / sqrt(tensor_get_f64(var, c) + 1e-3);
    if (scale) v *= tensor_get_f64(g, c);
    if (center) v += tensor_get_f64(b, c);
    if (fuse_relu && !(v > 0)) v = 0;
    tensor_set_f64(want, i, v);
  }
  char attrs[160];
  snprintf(attrs, sizeof attrs, "axis=%d; epsilon=0.001f; center=%s; scale=%s", axis,
           center ? "True" : "False", scale ? "True" : "False");
  Tensor *ins[5] = {x, g, b, mu, var};
  char err[KERNEL_ERR_SIZE];
  uint32_t n = 0;
  /* relayc.batch_norm_relu: the ReLU on .0 fused in (transform/conv_epilogue.c) */
  int32_t op = fuse_relu ? OP_RELAYC_BATCH_NORM_RELU : OP_NN_BATCH_NORM;
  Tensor **outs = kt_call_tuple(op, kt_attrs(Mod, attrs), ins, 5, &n, err);
  ck_assert_msg(outs != NULL, "batch_norm failed: %s", err);
  ck_assert_int_eq(n, 3);
  double tol = dt.bits == 16 ? 2e-3 : 1e-6;
  ck_assert_msg(kt_rel_err(outs[0], want) <= tol, "rel err %g (%s)", kt_rel_err(outs[0], want), attrs);
  ck_assert(kt_equal(outs[1], mu));
  ck_assert(kt_equal(outs[2], var));
  for (uint32_t i = 0; i < n; i++) tensor_release(outs[i]);
  mem_free(outs);
  Tensor *all[] = {x, g, b, mu, var, want};
  for (int i = 0; i < 6; i++) tensor_release(all[i]);
}

START_TEST(batch_norm_cases) {
  int64_t s4[4] = {2, 3, 4, 5}, s2[2] = {6, 7};
  bn_case(4, s4, 1, true, true, F32, false, 70);
  bn_case(4, s4, -1, true, true, F32, false, 71); /* channels last */
  bn_case(4, s4, 2, false, true, F32, false, 72);
  bn_case(4, s4, 1, true, false, F32, false, 73);
  bn_case(4, s4, 1, false, false, F64, false, 74);
  bn_case(4, s4, 1, true, true, F16, false, 75);
  bn_case(2, s2, 1, true, true, F32, false, 76);
  bn_case(4, s4, 1, true, true, F32, true, 77); /* relayc.batch_norm_relu */
}
END_TEST

START_TEST(batch_norm_in_place_and_errors) {
  int64_t s[4] = {1, 4, 8, 8}, cs[1] = {4};
  Tensor *x = rnd(F32, 4, s, 80), *g = rnd(F32, 1, cs, 81), *b = rnd(F32, 1, cs, 82);
  Tensor *mu = rnd(F32, 1, cs, 83), *var = kt_new(F32, 1, cs);
  kt_fill(var, 84, 0.5, 1);
  /* a dying data tensor is normalised in place */
  Tensor **in = calloc(5, sizeof *in);
  Tensor *src[5] = {x, g, b, mu, var};
  for (int i = 0; i < 5; i++) in[i] = tensor_retain(src[i]);
  void *data = x->data;
  tensor_release(x); /* only the context holds x now */
  KernelCtx c;
  kernel_ctx_init(&c, OP_NN_BATCH_NORM, in, 5, NULL, NULL);
  ck_assert_int_eq(op_get(OP_NN_BATCH_NORM)->kernel(&c), KERNEL_OK);
  ck_assert(c.is_tuple && c.nouts == 3);
  ck_assert_ptr_eq(c.outs[0]->data, data);
  kernel_ctx_clear(&c);
  free(in);
  /* wrong vector length */
  int64_t s5[1] = {5};
  Tensor *bad = rnd(F32, 1, s5, 85), *y = rnd(F32, 4, s, 86);
  Tensor *ins[5] = {y, bad, b, mu, var};
  char err[KERNEL_ERR_SIZE];
  uint32_t n;
  ck_assert_ptr_null(kt_call_tuple(OP_NN_BATCH_NORM, kt_attrs(Mod, ""), ins, 5, &n, err));
  ck_assert_ptr_null(kt_call_tuple(OP_NN_BATCH_NORM, kt_attrs(Mod, "axis=4"), ins, 5, &n, err));
  Tensor *all[] = {g, b, mu, var, bad, y};
  for (int i = 0; i < 6; i++) tensor_release(all[i]);
}
END_TEST

static Suite *pool_suite(void) {
  Suite *s = suite_create("k_pool");
  TCase *tc = tcase_create("pool");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, pool2d_window);
  tcase_add_test(tc, pool2d_resnet_and_dilation);
  tcase_add_test(tc, pool_dtypes);
  tcase_add_test(tc, pool_1d_3d);
  tcase_add_test(tc, pool_nhwc);
  tcase_add_test(tc, pool_random_windows);
  tcase_add_test(tc, global_and_adaptive);
  tcase_add_test(tc, vec8_sweeps_exact);
  tcase_add_test(tc, pool_split_layouts);
  tcase_add_test(tc, batch_norm_cases);
  tcase_add_test(tc, batch_norm_in_place_and_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(pool_suite());
}
