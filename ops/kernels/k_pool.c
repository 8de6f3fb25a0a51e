/* ops/kernels/k_pool.c — max/avg pooling (1-D, 2-D, 3-D), global and adaptive pooling.
 *
 * A layout is viewed as [outer][spatial...][inner]: outer = product of the
 * axes before the first spatial axis (N·C for NCHW), inner = product of the
 * axes after the last one (C for NHWC, the 16c of NCHW16c); the spatial
 * letters (D, H, W present in it) must be adjacent and unsplit, so split
 * channel layouts (NCHW16c) pool in place, with no conversion.
 * Each output position reduces a window of input positions; the innermost
 * loop runs over `inner` (unit stride: channels-last vectorises), and tasks
 * are ranges of outer indices.
 *
 * Numerics (spec/ops.md §9): max starts from — and padding taps read — the
 * lowest finite value of the dtype (−FLT_MAX, not −inf), max is the select
 * `x > acc ? x : acc`; ceil_mode adds stride − 1 before the division (no
 * PyTorch correction); avg divides the sum of in-range taps by the number of
 * taps inside the input (count_include_pad=False, at least 1) or inside the
 * explicitly padded extent (True; the ceil-mode overhang never counts).
 * Integer sums wrap to the dtype and divide truncating. Adaptive cell i of n
 * over extent L covers [floor(i·L/n), ceil((i+1)·L/n)).
 * float16 computes in float32, integers in int64 (ops/kernels/k_cvt.h).
 */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_cvt.h"
#include "ops/kernels/k_gemm.h"
#include "ops/kernels/k_plane.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_vec8.h"
#include "ops/kernels/kernel.h"
#include "ops/layout.h"
#include "runtime/threadpool.h"
#include "runtime/value.h"

typedef enum { PK_MAX, PK_AVG } PoolKind;

/* One spatial axis of a pooling window: output o covers input positions
 * lo[o] + t·dil for t < taps[o] that lie in [0, in). */
typedef struct PoolGeom {
  int nsp;
  int64_t outer, inner, in[3], out[3];
  int64_t k[3], st[3], dil[3], plo[3], phi[3];
  bool adaptive, include_pad;
  PoolKind kind;
  DType dt;       /* result dtype (for the lowest value and integer wrap) */
} PoolGeom;

/* Window of output index o on axis a: first tap position and tap count, and
 * the count for the average divisor. */
static void pool_window(const PoolGeom *g, int a, int64_t o, int64_t *start, int64_t *step,
                        int64_t *ntaps, int64_t *divisor) {
  if (g->adaptive) {
    int64_t L = g->in[a], n = g->out[a];
    int64_t s = o * L / n, e = ((o + 1) * L + n - 1) / n;
    *start = s;
    *step = 1;
    *ntaps = e - s;
    *divisor = e - s;
    return;
  }
  *start = o * g->st[a] - g->plo[a];
  *step = g->dil[a];
  *ntaps = g->k[a];
  int64_t inside = 0, padded = 0;
  for (int64_t t = 0; t < g->k[a]; t++) {
    int64_t p = *start + t * g->dil[a];
    inside += p >= 0 && p < g->in[a];
    padded += p >= -g->plo[a] && p < g->in[a] + g->phi[a];
  }
  *divisor = g->include_pad ? padded : inside;
}

#define DEFINE_POOL(T, NAME, FINISH_AVG)                                              \
  typedef struct {                                                                                 \
    const PoolGeom *g;                                                                             \
    const T *x;                                                                                    \
    T *y;                                                                                          \
    T lowest;                                                                                      \
    T *scratch; /* per thread: inner accumulators */                                               \
  } NAME##_job;                                                                                    \
  static void NAME##_task(void *raw, int64_t lo, int64_t hi) {                                     \
    const NAME##_job *j = raw;                                                                     \
    const PoolGeom *g = j->g;                                                                      \
    int64_t inner = g->inner, isz = g->in[0] * g->in[1] * g->in[2];                                \
    int64_t osz = g->out[0] * g->out[1] * g->out[2];                                               \
    T *acc = j->scratch + (size_t)threadpool_thread_index() * (size_t)inner;                       \
    for (int64_t o = lo; o < hi; o++) {                                                            \
      const T *xo = j->x + o * isz * inner;                                                        \
      T *yo = j->y + o * osz * inner;                                                              \
      for (int64_t q = 0; q < osz; q++) {                                                          \
        int64_t od = q / (g->out[1] * g->out[2]), oh = q / g->out[2] % g->out[1],                  \
                ow = q % g->out[2];                                                                \
        int64_t s0, d0, n0, c0, s1, d1, n1, c1, s2, d2, n2, c2;                                    \
        pool_window(g, 0, od, &s0, &d0, &n0, &c0);                                                 \
        pool_window(g, 1, oh, &s1, &d1, &n1, &c1);                                                 \
        pool_window(g, 2, ow, &s2, &d2, &n2, &c2);                                                 \
        for (int64_t i = 0; i < inner; i++) acc[i] = g->kind == PK_MAX ? j->lowest : 0;            \
        for (int64_t a = 0; a < n0; a++) {                                                         \
          int64_t pd = s0 + a * d0;                                                                \
          if (pd < 0 || pd >= g->in[0]) continue;                                                  \
          for (int64_t b = 0; b < n1; b++) {                                                       \
            int64_t ph = s1 + b * d1;                                                              \
            if (ph < 0 || ph >= g->in[1]) continue;                                                \
            for (int64_t cc = 0; cc < n2; cc++) {                                                  \
              int64_t pw = s2 + cc * d2;                                                           \
              if (pw < 0 || pw >= g->in[2]) continue;                                              \
              const T *src = xo + ((pd * g->in[1] + ph) * g->in[2] + pw) * inner;                  \
              if (g->kind == PK_MAX) {                                                             \
                for (int64_t i = 0; i < inner; i++) acc[i] = src[i] > acc[i] ? src[i] : acc[i];    \
              } else {                                                                             \
                for (int64_t i = 0; i < inner; i++) acc[i] += src[i];                              \
              }                                                                                    \
            }                                                                                      \
          }                                                                                        \
        }                                                                                          \
        T *dst = yo + q * inner;                                                                   \
        if (g->kind == PK_MAX) {                                                                   \
          memcpy(dst, acc, (size_t)inner * sizeof(T));                                             \
        } else {                                                                                   \
          int64_t cnt = c0 * c1 * c2;                                                              \
          if (cnt < 1) cnt = 1;                                                                    \
          for (int64_t i = 0; i < inner; i++) dst[i] = FINISH_AVG(g, acc[i], cnt);                 \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

static inline float avg_f32(const PoolGeom *g, float s, int64_t n) { return s / (float)n; }
static inline double avg_f64(const PoolGeom *g, double s, int64_t n) { return s / (double)n; }
static inline int64_t avg_i64(const PoolGeom *g, int64_t s, int64_t n) {
  return value_wrap_int(g->dt, s) / n;
}

DEFINE_POOL(float, pool_f32, avg_f32)
DEFINE_POOL(double, pool_f64, avg_f64)
DEFINE_POOL(int64_t, pool_i64, avg_i64)

/* ---- float32 channels-first windows: phase planes (ops/kernels/k_plane.h) turn a
 * plane into one unit-stride sweep per tap; padding (and the ceil-mode
 * overhang) holds the lowest value for max, 0 for avg. */

typedef struct FlatJob {
  const PoolGeom *g;
  const float *x;
  float *y;
  KPlane pl;
  float **buf, **vout;
  float *cnt[3]; /* per axis: the tap count of each output index (avg divisor) */
} FlatJob;

/* The sweeps use 8-float vectors (ops/kernels/k_vec8.h: kv16 stays in memory
 * on AVX2), two per 16-float block so the per-lane tap order — and the
 * result — is that of one 16-float vector. len is a multiple of 16. */
static KHOT void pool_max_flat(float *restrict out, const float *restrict base,
                               const int64_t *restrict toff, int64_t ntaps, int64_t len,
                               float lowest) {
  int64_t v = 0;
  for (; v + 32 <= len; v += 32) {
    kv8 a0 = kv8_splat(lowest), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t t = 0; t < ntaps; t++) {
      const float *b = base + toff[t] + v;
      a0 = kv8_select_gt(kv8_load(b), a0);
      a1 = kv8_select_gt(kv8_load(b + 8), a1);
      a2 = kv8_select_gt(kv8_load(b + 16), a2);
      a3 = kv8_select_gt(kv8_load(b + 24), a3);
    }
    kv8_store(out + v, a0);
    kv8_store(out + v + 8, a1);
    kv8_store(out + v + 16, a2);
    kv8_store(out + v + 24, a3);
  }
  for (; v < len; v += 16) {
    kv8 a0 = kv8_splat(lowest), a1 = a0;
    for (int64_t t = 0; t < ntaps; t++) {
      const float *b = base + toff[t] + v;
      a0 = kv8_select_gt(kv8_load(b), a0);
      a1 = kv8_select_gt(kv8_load(b + 8), a1);
    }
    kv8_store(out + v, a0);
    kv8_store(out + v + 8, a1);
  }
}

static KHOT void pool_sum_flat(float *restrict out, const float *restrict base,
                               const int64_t *restrict toff, int64_t ntaps, int64_t len) {
  int64_t v = 0;
  for (; v + 32 <= len; v += 32) {
    kv8 a0 = kv8_splat(0), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t t = 0; t < ntaps; t++) {
      const float *b = base + toff[t] + v;
      a0 += kv8_load(b);
      a1 += kv8_load(b + 8);
      a2 += kv8_load(b + 16);
      a3 += kv8_load(b + 24);
    }
    kv8_store(out + v, a0);
    kv8_store(out + v + 8, a1);
    kv8_store(out + v + 16, a2);
    kv8_store(out + v + 24, a3);
  }
  for (; v < len; v += 16) {
    kv8 a0 = kv8_splat(0), a1 = a0;
    for (int64_t t = 0; t < ntaps; t++) {
      const float *b = base + toff[t] + v;
      a0 += kv8_load(b);
      a1 += kv8_load(b + 8);
    }
    kv8_store(out + v, a0);
    kv8_store(out + v + 8, a1);
  }
}

static KHOT void pool_div_row(float *restrict y, const float *restrict v,
                              const float *restrict cnt, float r, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = v[i] / (cnt[i] * r);
}

static void flat_task(void *raw, int64_t lo, int64_t hi) {
  const FlatJob *j = raw;
  const PoolGeom *g = j->g;
  const KPlane *pl = &j->pl;
  int ti = threadpool_thread_index();
  float *buf = j->buf[ti], *vout = j->vout[ti];
  int64_t isz = g->in[0] * g->in[1] * g->in[2], osz = g->out[0] * g->out[1] * g->out[2];
  for (int64_t o = lo; o < hi; o++) {
    kplane_fill(pl, j->x + o * isz, buf);
    if (g->kind == PK_MAX) pool_max_flat(vout, buf, pl->toff, pl->ntaps, pl->vlen16, -FLT_MAX);
    else pool_sum_flat(vout, buf, pl->toff, pl->ntaps, pl->vlen16);
    float *yo = j->y + o * osz;
    for (int64_t a = 0; a < g->out[0]; a++)
      for (int64_t b = 0; b < g->out[1]; b++) {
        float *dst = yo + (a * g->out[1] + b) * g->out[2];
        const float *src = vout + kplane_row(pl, a, b);
        if (g->kind == PK_MAX) memcpy(dst, src, (size_t)g->out[2] * sizeof *dst);
        else pool_div_row(dst, src, j->cnt[2], j->cnt[0][a] * j->cnt[1][b], g->out[2]);
      }
  }
}

/* Global float32 pooling of whole contiguous planes. */
typedef struct PlaneJob {
  const float *x;
  float *y;
  int64_t n;
  bool max;
} PlaneJob;

/* Lanes 0-7 and 8-15 of one 16-float accumulator, summed (or maxed) in
 * lane order: the result of the 16-lane form. */
static KHOT float plane_sum(const float *restrict x, int64_t n) {
  kv8 lo = kv8_splat(0), hi = lo;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    lo += kv8_load(x + i);
    hi += kv8_load(x + i + 8);
  }
  float s = 0;
  for (int k = 0; k < 8; k++) s += lo[k];
  for (int k = 0; k < 8; k++) s += hi[k];
  for (; i < n; i++) s += x[i];
  return s;
}

static KHOT float plane_max(const float *restrict x, int64_t n) {
  kv8 lo = kv8_splat(-FLT_MAX), hi = lo;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    lo = kv8_select_gt(kv8_load(x + i), lo);
    hi = kv8_select_gt(kv8_load(x + i + 8), hi);
  }
  float m = -FLT_MAX;
  for (int k = 0; k < 8; k++) m = lo[k] > m ? lo[k] : m;
  for (int k = 0; k < 8; k++) m = hi[k] > m ? hi[k] : m;
  for (; i < n; i++) m = x[i] > m ? x[i] : m;
  return m;
}

static void plane_task(void *raw, int64_t lo, int64_t hi) {
  const PlaneJob *j = raw;
  for (int64_t o = lo; o < hi; o++)
    j->y[o] = j->max ? plane_max(j->x + o * j->n, j->n)
                     : (j->n > 0 ? plane_sum(j->x + o * j->n, j->n) / (float)j->n : 0.0f);
}

/* Float32 pooling with inner == 1 through phase planes; false when out of memory. */
static bool pool_flat_f32(const PoolGeom *g, const float *x, float *y) {
  FlatJob j = {.g = g, .x = x, .y = y};
  kplane_init(&j.pl, g->in, g->out, g->k, g->st, g->dil, g->plo, g->phi);
  size_t bytes = kplane_buffer_floats(&j.pl) * sizeof(float);
  void **bufs = kscratch(0, bytes), **vouts = bufs ? kscratch(1, (size_t)j.pl.vlen16 * 4 + 64) : NULL;
  int64_t nd = g->out[0] + g->out[1] + g->out[2];
  float *rd = mem_malloc((size_t)(nd + 1) * sizeof *rd);
  bool ok = bufs && vouts;
  if (ok) {
    float fillv = g->kind == PK_MAX ? -FLT_MAX : 0.0f;
    int nt = threadpool_size();
    size_t nf = bytes / sizeof(float);
    for (int i = 0; i < nt; i++)
      for (size_t q = 0; q < nf; q++) ((float *)bufs[i])[q] = fillv;
    float *at = rd;
    for (int a = 0; a < 3; a++) {
      j.cnt[a] = at;
      for (int64_t o = 0; o < g->out[a]; o++) {
        int64_t s0, st, n, cnt;
        pool_window(g, a, o, &s0, &st, &n, &cnt);
        at[o] = (float)(cnt > 0 ? cnt : 1);
      }
      at += g->out[a];
    }
    j.buf = (float **)bufs;
    j.vout = (float **)vouts;
    threadpool_for(g->outer, 1, flat_task, &j);
  }
  mem_free(rd);
  kplane_free(&j.pl);
  return ok;
}

/* Lowest finite value of dtype dt. */
static double lowest_float(DType dt) {
  if (dt.code == DT_FLOAT && dt.bits == 16) return -65504.0;
  if (dt.code == DT_FLOAT && dt.bits == 64) return -DBL_MAX;
  if (dt.code == DT_BFLOAT) return -3.3895313892515355e38;
  return -FLT_MAX;
}

static int64_t lowest_int(DType dt) {
  if (dt.code == DT_UINT || dtype_is_bool(dt)) return 0;
  return dt.bits >= 64 ? INT64_MIN : -((int64_t)1 << (dt.bits - 1));
}

/* Layout view: outer/inner products and spatial positions. */
static bool pool_layout(KernelCtx *c, const Tensor *x, int nsp, const char *sp, PoolGeom *g,
                        int *pos) {
  static const char *const dflt[4] = {"", "NCW", "NCHW", "NCDHW"};
  const char *l = kernel_attr_str(c, "layout", dflt[nsp]);
  Layout lay;
  if (!layout_parse(l, &lay) || lay.n != x->ndim) {
    kernel_fail(c, "%s: layout \"%s\" does not match rank %d", c->op->name, l, x->ndim);
    return false;
  }
  for (int i = 0; i < nsp; i++) {
    pos[i] = layout_find(&lay, sp[i]);
    if (pos[i] < 0) {
      kernel_fail(c, "%s: layout \"%s\" has no %c axis", c->op->name, l, sp[i]);
      return false;
    }
    if (layout_sub_factor(&lay, sp[i])) {
      kernel_fail(c, "%s: layout \"%s\" splits the spatial axis %c", c->op->name, l, sp[i]);
      return false;
    }
    if (i > 0 && pos[i] != pos[i - 1] + 1) {
      kernel_fail(c, "%s: layout \"%s\": spatial axes must be adjacent", c->op->name, l);
      return false;
    }
  }
  g->outer = g->inner = 1;
  for (int i = 0; i < pos[0]; i++) g->outer *= x->shape[i];
  for (int i = pos[nsp - 1] + 1; i < x->ndim; i++) g->inner *= x->shape[i];
  g->nsp = nsp;
  for (int a = 0; a < 3; a++) {
    int s = a - (3 - nsp);
    g->in[a] = s < 0 ? 1 : x->shape[pos[s]];
    g->out[a] = g->in[a];
    g->k[a] = g->st[a] = g->dil[a] = 1;
    g->plo[a] = g->phi[a] = 0;
  }
  return true;
}

/* Runs the pooling described by g on input 0 into a new result. */
static int pool_exec(KernelCtx *c, PoolGeom *g, const int *pos) {
  const Tensor *x = kernel_input(c, 0);
  int64_t shape[TENSOR_MAX_NDIM];
  memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
  for (int s = 0; s < g->nsp; s++) shape[pos[s]] = g->out[3 - g->nsp + s];
  g->dt = x->dtype;
  Tensor *out = kernel_output(c, x->dtype, x->ndim, shape);
  if (!out) return KERNEL_ERROR;
  if (out->numel == 0) return KERNEL_OK;
  KCompute k = kcvt_kind(x->dtype);
  bool xo = false;
  void *xb = kcvt_load(x, x->dtype, k, &xo);
  bool native = kcvt_is_native(x->dtype, k);
  void *yb = native ? out->data : kcvt_alloc(k, out->numel);
  int nt = threadpool_size();
  void *scratch = kcvt_alloc(k, g->inner * nt);
  int rc = KERNEL_OK;
  if (!xb || !yb || !scratch) {
    rc = kernel_fail(c, "%s: out of memory", c->op->name);
  } else {
    int64_t per = g->out[0] * g->out[1] * g->out[2] * g->inner;
    int64_t grain = per > 4096 ? 1 : 4096 / (per + 1) + 1;
    bool f32 = k == KC_F32 && g->inner == 1 && dtype_eq(x->dtype, DTYPE(DT_FLOAT, 32));
    int64_t isz = g->in[0] * g->in[1] * g->in[2];
    bool whole = g->out[0] * g->out[1] * g->out[2] == 1 && g->k[0] * g->k[1] * g->k[2] == isz &&
                 g->plo[0] + g->plo[1] + g->plo[2] + g->phi[0] + g->phi[1] + g->phi[2] == 0 &&
                 g->dil[0] * g->dil[1] * g->dil[2] == 1 && isz > 0;
    bool flat = f32 && !g->adaptive && !whole &&
                kplane_fits(g->in, g->out, g->k, g->st, g->dil, g->plo, g->phi);
    if (f32 && whole) {
      PlaneJob j = {xb, yb, isz, g->kind == PK_MAX};
      threadpool_for(g->outer, isz >= 1024 ? 1 : 1024 / isz + 1, plane_task, &j);
    } else if (flat && !pool_flat_f32(g, xb, yb)) {
      rc = kernel_fail(c, "%s: out of memory", c->op->name);
    } else if (flat) {
      /* done */
    } else if (k == KC_F32) {
      pool_f32_job j = {g, xb, yb, (float)lowest_float(x->dtype), scratch};
      threadpool_for(g->outer, grain, pool_f32_task, &j);
    } else if (k == KC_F64) {
      pool_f64_job j = {g, xb, yb, lowest_float(x->dtype), scratch};
      threadpool_for(g->outer, grain, pool_f64_task, &j);
    } else {
      pool_i64_job j = {g, xb, yb, lowest_int(x->dtype), scratch};
      threadpool_for(g->outer, grain, pool_i64_task, &j);
    }
    if (!native) kcvt_store(out, yb, k);
  }
  if (xo) mem_free(xb);
  if (!native) mem_free(yb);
  mem_free(scratch);
  return rc;
}

static const char *const SP[4] = {"", "W", "HW", "DHW"};

static bool pool_ints(KernelCtx *c, const char *name, int nsp, int64_t dflt, int64_t *out) {
  int64_t v[8];
  int32_t n = kernel_attr_ints(c, name, v, 8);
  for (int i = 0; i < nsp; i++) out[i] = dflt;
  if (n <= 0) return true;
  if (n != 1 && n != nsp) return false;
  for (int i = 0; i < nsp; i++) out[i] = v[n == 1 ? 0 : i];
  return true;
}

static int pool_window_op(KernelCtx *c, int nsp, PoolKind kind) {
  const Tensor *x = kernel_input(c, 0);
  PoolGeom g = {.kind = kind};
  int pos[3];
  if (!pool_layout(c, x, nsp, SP[nsp], &g, pos)) return KERNEL_ERROR;
  int64_t ps[3], st[3], dil[3], pad[8];
  if (!pool_ints(c, "pool_size", nsp, 1, ps) || !pool_ints(c, "strides", nsp, 1, st) ||
      !pool_ints(c, "dilation", nsp, 1, dil))
    return kernel_fail(c, "%s: pool_size, strides and dilation need %d values", c->op->name, nsp);
  int32_t np = kernel_attr_ints(c, "padding", pad, 8);
  bool ceil_mode = kernel_attr_bool(c, "ceil_mode", false);
  g.include_pad = kind == PK_AVG && kernel_attr_bool(c, "count_include_pad", false);
  for (int s = 0; s < nsp; s++) {
    int a = 3 - nsp + s;
    int64_t lo, hi;
    if (np <= 0) lo = hi = 0;
    else if (np == 1) lo = hi = pad[0];
    else if (np == nsp) lo = hi = pad[s];
    else if (np == 2 * nsp) lo = pad[s], hi = pad[nsp + s];
    else return kernel_fail(c, "%s: padding needs 1, %d or %d values", c->op->name, nsp, 2 * nsp);
    const int64_t lim = (int64_t)1 << 32; /* keeps index products far from overflow */
    if (lo < 0 || hi < 0 || ps[s] < 1 || st[s] < 1 || dil[s] < 1 || lo > lim || hi > lim ||
        ps[s] > lim || st[s] > lim || dil[s] > lim)
      return kernel_fail(c, "%s: invalid window attributes", c->op->name);
    g.k[a] = ps[s];
    g.st[a] = st[s];
    g.dil[a] = dil[s];
    g.plo[a] = lo;
    g.phi[a] = hi;
    int64_t dk = (ps[s] - 1) * dil[s] + 1, num = g.in[a] + lo + hi - dk + (ceil_mode ? st[s] - 1 : 0);
    g.out[a] = g.in[a] + lo + hi < dk ? 0 : num / st[s] + 1;
  }
  return pool_exec(c, &g, pos);
}

/* Spatial letters (D, H, W) present in the layout. */
static int layout_spatial(KernelCtx *c, int nsp_dflt, char *sp) {
  static const char *const dflt[4] = {"", "NCW", "NCHW", "NCDHW"};
  const char *l = kernel_attr_str(c, "layout", dflt[nsp_dflt]);
  int n = 0;
  for (const char *p = "DHW"; *p; p++)
    if (strchr(l, *p)) sp[n++] = *p;
  sp[n] = 0;
  return n;
}

static int pool_global(KernelCtx *c, int nsp_dflt, PoolKind kind) {
  const Tensor *x = kernel_input(c, 0);
  char sp[4];
  int nsp = layout_spatial(c, nsp_dflt, sp);
  if (nsp == 0) return kernel_fail(c, "%s: the layout has no spatial axis", c->op->name);
  PoolGeom g = {.kind = kind};
  int pos[3];
  if (!pool_layout(c, x, nsp, sp, &g, pos)) return KERNEL_ERROR;
  for (int a = 3 - nsp; a < 3; a++) {
    g.k[a] = g.in[a]; /* one window over the whole extent (empty: max → lowest, avg → 0) */
    g.out[a] = 1;
  }
  return pool_exec(c, &g, pos);
}

static int pool_adaptive(KernelCtx *c, int nsp_dflt, PoolKind kind) {
  const Tensor *x = kernel_input(c, 0);
  char sp[4];
  int nsp = layout_spatial(c, nsp_dflt, sp);
  if (nsp == 0) return kernel_fail(c, "%s: the layout has no spatial axis", c->op->name);
  PoolGeom g = {.kind = kind, .adaptive = true};
  int pos[3];
  if (!pool_layout(c, x, nsp, sp, &g, pos)) return KERNEL_ERROR;
  int64_t os[8];
  int32_t n = kernel_attr_ints(c, "output_size", os, 8);
  if (n > 0 && n != 1 && n != nsp)
    return kernel_fail(c, "%s: output_size must have 1 or %d values", c->op->name, nsp);
  for (int s = 0; s < nsp && n > 0; s++) {
    int64_t v = os[n == 1 ? 0 : s];
    if (v >= 1) g.out[3 - nsp + s] = v;           /* None (< 0 here) keeps the extent */
    else if (v == 0) return kernel_fail(c, "%s: output_size must be positive", c->op->name);
  }
  for (int a = 0; a < 3; a++)
    if (g.in[a] == 0 && g.out[a] > 0)
      return kernel_fail(c, "%s: cannot pool an empty axis to %lld cells", c->op->name,
                         (long long)g.out[a]);
  return pool_exec(c, &g, pos);
}

#define POOL_KERNELS(X)                                                                            \
  X(NN_MAX_POOL1D, pool_window_op(c, 1, PK_MAX))                                                   \
  X(NN_MAX_POOL2D, pool_window_op(c, 2, PK_MAX))                                                   \
  X(NN_MAX_POOL3D, pool_window_op(c, 3, PK_MAX))                                                   \
  X(NN_AVG_POOL1D, pool_window_op(c, 1, PK_AVG))                                                   \
  X(NN_AVG_POOL2D, pool_window_op(c, 2, PK_AVG))                                                   \
  X(NN_AVG_POOL3D, pool_window_op(c, 3, PK_AVG))                                                   \
  X(NN_GLOBAL_MAX_POOL1D, pool_global(c, 1, PK_MAX))                                               \
  X(NN_GLOBAL_MAX_POOL2D, pool_global(c, 2, PK_MAX))                                               \
  X(NN_GLOBAL_MAX_POOL3D, pool_global(c, 3, PK_MAX))                                               \
  X(NN_GLOBAL_AVG_POOL1D, pool_global(c, 1, PK_AVG))                                               \
  X(NN_GLOBAL_AVG_POOL2D, pool_global(c, 2, PK_AVG))                                               \
  X(NN_GLOBAL_AVG_POOL3D, pool_global(c, 3, PK_AVG))                                               \
  X(NN_ADAPTIVE_MAX_POOL1D, pool_adaptive(c, 1, PK_MAX))                                           \
  X(NN_ADAPTIVE_MAX_POOL2D, pool_adaptive(c, 2, PK_MAX))                                           \
  X(NN_ADAPTIVE_MAX_POOL3D, pool_adaptive(c, 3, PK_MAX))                                           \
  X(NN_ADAPTIVE_AVG_POOL1D, pool_adaptive(c, 1, PK_AVG))                                           \
  X(NN_ADAPTIVE_AVG_POOL2D, pool_adaptive(c, 2, PK_AVG))                                           \
  X(NN_ADAPTIVE_AVG_POOL3D, pool_adaptive(c, 3, PK_AVG))

#define DECLARE(ID, CALL) int kernel_##ID(KernelCtx *c);
#define DEFINE(ID, CALL)                                                                           \
  int kernel_##ID(KernelCtx *c) { return CALL; }
POOL_KERNELS(DECLARE)
POOL_KERNELS(DEFINE)
