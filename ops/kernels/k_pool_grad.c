/* ops/kernels/k_pool_grad.c — nn.max_pool2d_grad and nn.avg_pool2d_grad: the
 * gradients of 2-D pooling with respect to its input (spec/gradient.md 5.4-5.5).
 *
 * Layouts are viewed as k_pool.c views them: [outer][H][W][inner] (outer =
 * the axes before H, inner = those after W: NCHW, NHWC, NCHW16c); H and W
 * must be adjacent and unsplit. Work is split over the outer planes: a task
 * zeroes its planes of the result and scatters into them only, so threads
 * never share memory and no atomics are needed.
 *
 * max: for every output cell, the winner is found as TVM's argmax reducer
 * finds it — starting from (lowest finite value, no tap), taps in row-major
 * window order, a tap wins only when strictly greater, so ties keep the
 * earlier tap; padding and the ceil-mode overhang read the lowest finite
 * value. The cell's out_grad is added at the winner when it is a real input
 * position (a winner in the padding, or none, drops it). Dilation is
 * honoured (TVM's builder leaves `dilation=[]`, read as 1s). float32 planes
 * (inner = 1) find the winners 16 output cells at a time (8-float vectors,
 * ops/kernels/k_vec8.h) on phase-split
 * padded planes (ops/kernels/k_plane.h), then scatter.
 * avg: every cell adds out_grad / divisor to each in-range tap, with the
 * forward's divisor (spec/ops.md §9.1: taps inside the input, or inside the
 * explicitly padded extent with count_include_pad; at least 1).
 * float32/float64 compute natively, float16/bfloat16 through float32;
 * integer tensors are a run-time error.
 */
#include <float.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_gemm.h"
#include "ops/kernels/k_plane.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_vec8.h"
#include "ops/kernels/k_util.h"
#include "ops/layout.h"
#include "runtime/threadpool.h"

typedef struct PgGeom {
  int64_t outer, inner, H, W, OH, OW;
  int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  bool max, include_pad;
} PgGeom;

/* Forward divisor of output index o on one axis: taps inside [0, in), or
 * inside [−lo, in + hi) with include_pad. */
static int64_t axis_count(int64_t o, int64_t st, int64_t k, int64_t dil, int64_t lo, int64_t hi, int64_t in,
                          bool include_pad) {
  int64_t n = 0, start = o * st - lo;
  for (int64_t t = 0; t < k; t++) {
    int64_t p = start + t * dil;
    n += include_pad ? (p >= -lo && p < in + hi) : (p >= 0 && p < in);
  }
  return n;
}

/* ---- the general loop: any inner extent, float or double ---------------------------- */

#define DEFINE_PG(T, NAME, LOWEST)                                                                 \
  typedef struct {                                                                                 \
    const PgGeom *g;                                                                               \
    const T *x, *dy;                                                                               \
    T *dx;                                                                                         \
    const int64_t *cnt_h, *cnt_w;                                                                  \
    T **best;       /* per thread: inner values */                                                 \
    int32_t **bidx; /* per thread: inner winning taps */                                           \
  } NAME##_job;                                                                                    \
  static void NAME##_task(void *raw, int64_t lo, int64_t hi) {                                     \
    const NAME##_job *j = raw;                                                                     \
    const PgGeom *g = j->g;                                                                        \
    int64_t in = g->inner, H = g->H, W = g->W;                                                     \
    int ti = threadpool_thread_index();                                                            \
    T *best = j->best[ti];                                                                         \
    int32_t *bidx = j->bidx[ti];                                                                   \
    for (int64_t o = lo; o < hi; o++) {                                                            \
      const T *xo = j->x + o * H * W * in, *go = j->dy + o * g->OH * g->OW * in;                   \
      T *dxo = j->dx + o * H * W * in;                                                             \
      memset(dxo, 0, (size_t)(H * W * in) * sizeof(T));                                            \
      for (int64_t y = 0; y < g->OH; y++)                                                          \
        for (int64_t x = 0; x < g->OW; x++) {                                                      \
          const T *gc = go + (y * g->OW + x) * in;                                                 \
          int64_t h0 = y * g->sh - g->pt, w0 = x * g->sw - g->pl;                                  \
          if (g->max) {                                                                            \
            for (int64_t i = 0; i < in; i++) {                                                     \
              best[i] = LOWEST;                                                                    \
              bidx[i] = -1;                                                                        \
            }                                                                                      \
            for (int64_t r = 0; r < g->kh; r++)                                                    \
              for (int64_t s = 0; s < g->kw; s++) {                                                \
                int64_t ih = h0 + r * g->dh, iw = w0 + s * g->dw;                                  \
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue; /* lowest: never wins */     \
                const T *src = xo + (ih * W + iw) * in;                                            \
                int32_t t = (int32_t)(r * g->kw + s);                                              \
                for (int64_t i = 0; i < in; i++)                                                   \
                  if (src[i] > best[i]) {                                                          \
                    best[i] = src[i];                                                              \
                    bidx[i] = t;                                                                   \
                  }                                                                                \
              }                                                                                    \
            for (int64_t i = 0; i < in; i++) {                                                     \
              if (bidx[i] < 0) continue;                                                           \
              int64_t ih = h0 + bidx[i] / g->kw * g->dh, iw = w0 + bidx[i] % g->kw * g->dw;        \
              dxo[(ih * W + iw) * in + i] += gc[i];                                                \
            }                                                                                      \
          } else {                                                                                 \
            int64_t cnt = j->cnt_h[y] * j->cnt_w[x];                                               \
            T div = (T)(cnt > 0 ? cnt : 1);                                                        \
            for (int64_t r = 0; r < g->kh; r++)                                                    \
              for (int64_t s = 0; s < g->kw; s++) {                                                \
                int64_t ih = h0 + r * g->dh, iw = w0 + s * g->dw;                                  \
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;                              \
                T *dst = dxo + (ih * W + iw) * in;                                                 \
                for (int64_t i = 0; i < in; i++) dst[i] += gc[i] / div;                            \
              }                                                                                    \
          }                                                                                        \
        }                                                                                          \
    }                                                                                              \
  }

DEFINE_PG(float, pg_f32, -FLT_MAX)
DEFINE_PG(double, pg_f64, -DBL_MAX)

/* ---- float32 max, inner = 1: winners 16 cells at a time ------------------------------ */

typedef struct FlatJob {
  const PgGeom *g;
  const float *x, *dy;
  float *dx;
  KPlane pl;
  float **buf;    /* per thread: phase buffer (borders hold the lowest value) */
  int32_t **win;  /* per thread: winning tap per sweep position */
} FlatJob;

/* win[v] = first tap t with the strictly greatest value at base[toff[t] + v]
 * (−1 when none beats the lowest value), for v < len (a multiple of 16);
 * 8-float vectors (ops/kernels/k_vec8.h: registers on AVX2 too), two per step. */
static KHOT void pg_argmax_flat(int32_t *restrict win, const float *restrict base,
                                const int64_t *restrict toff, int64_t ntaps, int64_t len) {
  for (int64_t v = 0; v < len; v += 16) {
    kv8 b0 = kv8_splat(-FLT_MAX), b1 = b0;
    kvi8 i0 = (kvi8){0} - 1, i1 = i0;
    for (int64_t t = 0; t < ntaps; t++) {
      const float *src = base + toff[t] + v;
      kv8 x0 = kv8_load(src), x1 = kv8_load(src + 8);
      kvi8 m0 = x0 > b0, m1 = x1 > b1, tv = (kvi8){0} + (int32_t)t;
      b0 = (kv8)(((kvi8)x0 & m0) | ((kvi8)b0 & ~m0));
      b1 = (kv8)(((kvi8)x1 & m1) | ((kvi8)b1 & ~m1));
      i0 = (tv & m0) | (i0 & ~m0);
      i1 = (tv & m1) | (i1 & ~m1);
    }
    for (int k = 0; k < 8; k++) {
      win[v + k] = i0[k];
      win[v + 8 + k] = i1[k];
    }
  }
}

static void pg_flat_task(void *raw, int64_t lo, int64_t hi) {
  const FlatJob *j = raw;
  const PgGeom *g = j->g;
  const KPlane *pl = &j->pl;
  int ti = threadpool_thread_index();
  float *buf = j->buf[ti];
  int32_t *win = j->win[ti];
  int64_t H = g->H, W = g->W;
  for (int64_t o = lo; o < hi; o++) {
    kplane_fill(pl, j->x + o * H * W, buf);
    pg_argmax_flat(win, buf, pl->toff, pl->ntaps, pl->vlen16);
    float *dxo = j->dx + o * H * W;
    const float *go = j->dy + o * g->OH * g->OW;
    memset(dxo, 0, (size_t)(H * W) * sizeof *dxo);
    for (int64_t y = 0; y < g->OH; y++) {
      const int32_t *wr = win + kplane_row(pl, 0, y);
      int64_t h0 = y * g->sh - g->pt;
      for (int64_t x = 0; x < g->OW; x++) {
        int32_t t = wr[x];
        if (t < 0) continue;
        int64_t ih = h0 + t / g->kw * g->dh, iw = x * g->sw - g->pl + t % g->kw * g->dw;
        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue; /* a winner in the padding */
        dxo[ih * W + iw] += go[y * g->OW + x];
      }
    }
  }
}

/* True when done; false (nothing written) when the plane buffers do not fit. */
static bool pg_flat(const PgGeom *g, const float *x, const float *dy, float *dx, bool *oom) {
  int64_t in[3] = {1, g->H, g->W}, out[3] = {1, g->OH, g->OW}, k[3] = {1, g->kh, g->kw};
  int64_t st[3] = {1, g->sh, g->sw}, dil[3] = {1, g->dh, g->dw}, plo[3] = {0, g->pt, g->pl};
  int64_t phi[3] = {0, g->pb, g->pr};
  if (!kplane_fits(in, out, k, st, dil, plo, phi) || g->kh * g->kw > INT32_MAX) return false;
  FlatJob j = {.g = g, .x = x, .dy = dy, .dx = dx};
  kplane_init(&j.pl, in, out, k, st, dil, plo, phi);
  size_t bytes = kplane_buffer_floats(&j.pl) * sizeof(float);
  void **bufs = kscratch(0, bytes), **wins = bufs ? kscratch(1, (size_t)j.pl.vlen16 * 4 + 64) : NULL;
  if (!bufs || !wins) {
    kplane_free(&j.pl);
    *oom = true;
    return false;
  }
  int nt = threadpool_size();
  size_t nf = bytes / sizeof(float);
  for (int i = 0; i < nt; i++)
    for (size_t q = 0; q < nf; q++) ((float *)bufs[i])[q] = -FLT_MAX;
  j.buf = (float **)bufs;
  j.win = (int32_t **)wins;
  int64_t per = g->OH * g->OW * g->kh * g->kw;
  threadpool_for(g->outer, per >= 4096 ? 1 : 4096 / (per + 1) + 1, pg_flat_task, &j);
  kplane_free(&j.pl);
  return true;
}

/* ---- driver ------------------------------------------------------------------------- */

static bool pg_pair(KernelCtx *c, const char *name, int64_t dflt, int64_t *out) {
  int64_t v[4];
  int32_t n = kernel_attr_ints(c, name, v, 4);
  out[0] = out[1] = dflt;
  if (n <= 0) return true; /* absent, None or [] (TVM's dilation) */
  if (n != 1 && n != 2) return false;
  out[0] = v[0];
  out[1] = v[n == 1 ? 0 : 1];
  return true;
}

static int pool_grad(KernelCtx *c, bool max) {
  const char *name = c->op->name;
  const Tensor *dy0 = kernel_input(c, 0), *x0 = kernel_input(c, 1);
  if (!dtype_is_float(x0->dtype) || !dtype_eq(x0->dtype, dy0->dtype))
    return kernel_fail(c, "%s: needs out_grad and data of one float dtype", name);
  PgGeom g = {.max = max, .include_pad = !max && kernel_attr_bool(c, "count_include_pad", false)};
  /* layout view */
  const char *l = kernel_attr_str(c, "layout", "NCHW");
  Layout lay;
  if (!layout_parse(l, &lay) || lay.n != x0->ndim) return kernel_fail(c, "%s: layout \"%s\" does not match rank %d", name, l, x0->ndim);
  int ph = layout_find(&lay, 'H'), pw = layout_find(&lay, 'W');
  if (ph < 0 || pw != ph + 1 || layout_sub_factor(&lay, 'H') || layout_sub_factor(&lay, 'W'))
    return kernel_fail(c, "%s: layout \"%s\" needs adjacent, unsplit H and W", name, l);
  g.outer = ku_prod(x0->shape, 0, ph);
  g.inner = ku_prod(x0->shape, pw + 1, x0->ndim);
  g.H = x0->shape[ph];
  g.W = x0->shape[pw];
  int64_t ps[2], st[2], dil[2], pad[4];
  if (!pg_pair(c, "pool_size", 1, ps) || !pg_pair(c, "strides", 1, st) || !pg_pair(c, "dilation", 1, dil))
    return kernel_fail(c, "%s: pool_size, strides and dilation need 1 or 2 values", name);
  int32_t np = kernel_attr_ints(c, "padding", pad, 4);
  if (np <= 0) g.pt = g.pl = g.pb = g.pr = 0;
  else if (np == 1) g.pt = g.pl = g.pb = g.pr = pad[0];
  else if (np == 2) g.pt = g.pb = pad[0], g.pl = g.pr = pad[1];
  else if (np == 4) g.pt = pad[0], g.pl = pad[1], g.pb = pad[2], g.pr = pad[3];
  else return kernel_fail(c, "%s: padding needs 1, 2 or 4 values", name);
  const int64_t lim = (int64_t)1 << 32;
  if (g.pt < 0 || g.pl < 0 || g.pb < 0 || g.pr < 0 || g.pt > lim || g.pl > lim || g.pb > lim || g.pr > lim)
    return kernel_fail(c, "%s: invalid padding", name);
  for (int i = 0; i < 2; i++)
    if (ps[i] < 1 || st[i] < 1 || dil[i] < 1 || ps[i] > lim || st[i] > lim || dil[i] > lim)
      return kernel_fail(c, "%s: invalid window attributes", name);
  g.kh = ps[0], g.kw = ps[1], g.sh = st[0], g.sw = st[1], g.dh = dil[0], g.dw = dil[1];
  bool ceil_mode = kernel_attr_bool(c, "ceil_mode", false);
  int64_t ext[2] = {g.H, g.W}, lo[2] = {g.pt, g.pl}, hi[2] = {g.pb, g.pr}, o[2];
  for (int i = 0; i < 2; i++) {
    int64_t dk = (ps[i] - 1) * dil[i] + 1, padded = ext[i] + lo[i] + hi[i];
    o[i] = padded < dk ? 0 : (padded - dk + (ceil_mode ? st[i] - 1 : 0)) / st[i] + 1;
  }
  g.OH = o[0];
  g.OW = o[1];
  bool fits = dy0->ndim == x0->ndim;
  for (int32_t i = 0; fits && i < x0->ndim; i++)
    fits = dy0->shape[i] == (i == ph ? g.OH : i == pw ? g.OW : x0->shape[i]);
  if (!fits) return kernel_fail(c, "%s: out_grad does not have the pooled shape of data", name);
  Tensor *tx = NULL, *tg = NULL, *res = NULL;
  const Tensor *x = ku_float_in(x0, &tx), *dy = x ? ku_float_in(dy0, &tg) : NULL;
  res = dy ? tensor_new(x->dtype, x->ndim, x->shape) : NULL;
  int64_t *cnt = mem_malloc((size_t)(g.OH + g.OW + 1) * sizeof *cnt);
  void **best = NULL, **bidx = NULL;
  int rc = KERNEL_OK;
  bool f64 = x && ku_type(x->dtype) == KU_F64, oom = false;
  if (!res) {
    rc = kernel_fail(c, "%s: out of memory", name);
    goto out;
  }
  if (res->numel == 0) goto done;
  if (g.OH * g.OW == 0) {
    memset(res->data, 0, res->nbytes);
    goto done;
  }
  for (int64_t y = 0; y < g.OH; y++) cnt[y] = axis_count(y, g.sh, g.kh, g.dh, g.pt, g.pb, g.H, g.include_pad);
  for (int64_t x1 = 0; x1 < g.OW; x1++)
    cnt[g.OH + x1] = axis_count(x1, g.sw, g.kw, g.dw, g.pl, g.pr, g.W, g.include_pad);
  if (max && !f64 && g.inner == 1) {
    if (pg_flat(&g, x->data, dy->data, res->data, &oom)) goto done;
    if (oom) {
      rc = kernel_fail(c, "%s: out of memory", name);
      goto out;
    }
  }
  size_t es = f64 ? 8 : 4;
  best = kscratch(0, (size_t)g.inner * es + 64);
  bidx = best ? kscratch(1, (size_t)g.inner * 4 + 64) : NULL;
  if (!bidx) {
    rc = kernel_fail(c, "%s: out of memory", name);
    goto out;
  }
  int64_t per = g.OH * g.OW * g.kh * g.kw * g.inner, grain = per >= 4096 ? 1 : 4096 / (per + 1) + 1;
  if (f64) {
    pg_f64_job j = {&g, x->data, dy->data, res->data, cnt, cnt + g.OH, (double **)best, (int32_t **)bidx};
    threadpool_for(g.outer, grain, pg_f64_task, &j);
  } else {
    pg_f32_job j = {&g, x->data, dy->data, res->data, cnt, cnt + g.OH, (float **)best, (int32_t **)bidx};
    threadpool_for(g.outer, grain, pg_f32_task, &j);
  }
done:
  rc = ku_float_out(c, res, x0->dtype);
  res = NULL;
out:
  mem_free(cnt);
  tensor_release(tx);
  tensor_release(tg);
  tensor_release(res);
  return rc;
}

int kernel_NN_MAX_POOL2D_GRAD(KernelCtx *c);
int kernel_NN_MAX_POOL2D_GRAD(KernelCtx *c) { return pool_grad(c, true); }
int kernel_NN_AVG_POOL2D_GRAD(KernelCtx *c);
int kernel_NN_AVG_POOL2D_GRAD(KernelCtx *c) { return pool_grad(c, false); }
