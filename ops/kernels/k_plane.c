/* ops/kernels/k_plane.c — phase-split padded planes (ops/kernels/k_plane.h).
 *
 * Extents: on each axis the phase plane must hold the padded input
 * (ceil(padded / s)) and every tap of every output (out + (k−1)·d / s);
 * the larger wins. The sweep over v reads at most toff[t] + vlen16 − 1 <
 * nph·phase + 16, hence 16 floats of slack.
 */
#include "ops/kernels/k_plane.h"

#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_gemm.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_vec8.h"
#include "runtime/threadpool.h"

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

#define KPLANE_MAX_FLOATS ((int64_t)1 << 28)

bool kplane_fits(const int64_t in[3], const int64_t out[3], const int64_t k[3],
                 const int64_t st[3], const int64_t dil[3], const int64_t plo[3],
                 const int64_t phi[3]) {
  int64_t total = 1;
  for (int a = 0; a < 3; a++) {
    int64_t lim = (int64_t)1 << 32;
    if (in[a] > lim || out[a] > lim || k[a] > lim || st[a] > lim || dil[a] > lim || plo[a] > lim ||
        phi[a] > lim || st[a] < 1 || dil[a] < 1)
      return false;
    int64_t q = ceil_div(in[a] + plo[a] + phi[a], st[a]);
    int64_t reach = out[a] + (k[a] - 1) * dil[a] / st[a];
    if (q < reach) q = reach;
    if (q < 1) q = 1;
    /* phases of this axis times its extent */
    if (st[a] > KPLANE_MAX_FLOATS || q > KPLANE_MAX_FLOATS) return false;
    total *= st[a] * q;
    if (total > KPLANE_MAX_FLOATS) return false;
  }
  return true;
}

void kplane_init(KPlane *p, const int64_t in[3], const int64_t out[3], const int64_t k[3],
                 const int64_t st[3], const int64_t dil[3], const int64_t plo[3],
                 const int64_t phi[3]) {
  memset(p, 0, sizeof *p);
  int64_t q[3];
  for (int a = 0; a < 3; a++) {
    p->in[a] = in[a];
    p->out[a] = out[a];
    p->k[a] = k[a];
    p->st[a] = st[a];
    p->dil[a] = dil[a];
    p->plo[a] = plo[a];
    int64_t reach = out[a] + (k[a] - 1) * dil[a] / st[a];
    q[a] = ceil_div(in[a] + plo[a] + phi[a], st[a]);
    if (q[a] < reach) q[a] = reach;
    if (q[a] < 1) q[a] = 1;
  }
  p->Dq = q[0];
  p->Hq = q[1];
  p->Wq = q[2];
  p->phase = p->Dq * p->Hq * p->Wq;
  p->nph = st[0] * st[1] * st[2];
  p->ntaps = k[0] * k[1] * k[2];
  p->vlen = out[0] * out[1] * out[2] == 0 ? 0 : kplane_row(p, out[0] - 1, out[1] - 1) + out[2];
  p->vlen16 = (p->vlen + 15) / 16 * 16;
  p->toff = mem_malloc((size_t)(p->ntaps > 0 ? p->ntaps : 1) * sizeof *p->toff);
  int64_t t = 0;
  for (int64_t a = 0; a < k[0]; a++)
    for (int64_t r = 0; r < k[1]; r++)
      for (int64_t s = 0; s < k[2]; s++, t++) {
        int64_t dz = a * dil[0], dy = r * dil[1], dx = s * dil[2];
        int64_t ph = ((dz % st[0]) * st[1] + dy % st[1]) * st[2] + dx % st[2];
        p->toff[t] = ph * p->phase + kplane_row(p, dz / st[0], dy / st[1]) + dx / st[2];
      }
}

void kplane_free(KPlane *p) {
  mem_free(p->toff);
  p->toff = NULL;
}

size_t kplane_buffer_floats(const KPlane *p) { return (size_t)(p->nph * p->phase + 16); }

bool kplane_scratch(size_t pad_bytes, size_t vout_bytes, float ***pad, float ***vout) {
  void **pads = kscratch(0, pad_bytes), **vouts = pads ? kscratch(1, vout_bytes) : NULL;
  if (!vouts) return false;
  for (int i = 0; i < threadpool_size(); i++) memset(pads[i], 0, pad_bytes);
  *pad = (float **)pads;
  *vout = (float **)vouts;
  return true;
}

/* 8-float vectors (ops/kernels/k_vec8.h): kv16's shuffle of two vectors
 * went through memory on AVX2. */
KHOT void kplane_gather2(float *restrict dst, const float *restrict src, int64_t n) {
  const kvi8 even = {0, 2, 4, 6, 8, 10, 12, 14};
  int64_t i = 0;
  for (; i + 8 < n; i += 8) { /* the last block would read src[2n − 1]: scalar */
    kv8 a = kv8_load(src + 2 * i), b = kv8_load(src + 2 * i + 8);
    kv8_store(dst + i, __builtin_shuffle(a, b, even));
  }
  for (; i < n; i++) dst[i] = src[2 * i];
}

/* out[v] = Σ_t base[toff[t] + v] · wt[t] for v < len (a multiple of 16):
 * 64 outputs per step in 8 independent 8-float accumulators (ops/kernels/k_vec8.h:
 * registers on AVX2 too), so FMA chains overlap. */
KHOT void kplane_sweep(float *restrict out, const float *restrict base, const int64_t *restrict toff,
                       const float *restrict wt, int64_t ntaps, int64_t len) {
  int64_t v = 0;
  for (; v + 64 <= len; v += 64) {
    kv8 a0 = kv8_splat(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (int64_t t = 0; t < ntaps; t++) {
      const float *src = base + toff[t] + v;
      kv8 w = kv8_splat(wt[t]);
      a0 += kv8_load(src) * w;
      a1 += kv8_load(src + 8) * w;
      a2 += kv8_load(src + 16) * w;
      a3 += kv8_load(src + 24) * w;
      a4 += kv8_load(src + 32) * w;
      a5 += kv8_load(src + 40) * w;
      a6 += kv8_load(src + 48) * w;
      a7 += kv8_load(src + 56) * w;
    }
    kv8_store(out + v, a0);
    kv8_store(out + v + 8, a1);
    kv8_store(out + v + 16, a2);
    kv8_store(out + v + 24, a3);
    kv8_store(out + v + 32, a4);
    kv8_store(out + v + 40, a5);
    kv8_store(out + v + 48, a6);
    kv8_store(out + v + 56, a7);
  }
  for (; v < len; v += 16) {
    kv8 a0 = kv8_splat(0), a1 = a0;
    for (int64_t t = 0; t < ntaps; t++) {
      kv8 w = kv8_splat(wt[t]);
      a0 += kv8_load(base + toff[t] + v) * w;
      a1 += kv8_load(base + toff[t] + v + 8) * w;
    }
    kv8_store(out + v, a0);
    kv8_store(out + v + 8, a1);
  }
}

/* dst[i] = src[i] for i < n: short rows (7×7, 14×14 planes) as a loop, not a call. */
static KHOT void kplane_copy(float *restrict dst, const float *restrict src, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = src[i];
}

/* Where column phase q of a row starts: first phase index i0 and input column
 * x0 (= i0·sw + q − plo), and how many columns it takes. */
static void kplane_col_phase(const KPlane *p, int64_t q, int64_t *i0, int64_t *x0, int64_t *cnt) {
  int64_t W = p->in[2], sw = p->st[2], off = q - p->plo[2];
  *i0 = off >= 0 ? 0 : (-off + sw - 1) / sw;
  *x0 = *i0 * sw + off;
  *cnt = *x0 < W ? (W - *x0 + sw - 1) / sw : 0;
}

/* Row by row, with the phase and index of the padded row advanced by
 * counting (no divisions per row). */
void kplane_fill(const KPlane *p, const float *x, float *buf) {
  int64_t H = p->in[1], W = p->in[2], sd = p->st[0], sh = p->st[1], sw = p->st[2];
  enum { QMAX = 8 };
  int64_t qi0[QMAX], qx0[QMAX], qcnt[QMAX];
  for (int64_t q = 0; q < sw && q < QMAX; q++) kplane_col_phase(p, q, &qi0[q], &qx0[q], &qcnt[q]);
  for (int64_t d = 0; d < p->in[0]; d++) {
    int64_t pd = d + p->plo[0], dph = pd % sd, dq = pd / sd;
    int64_t hph = p->plo[1] % sh, hq = p->plo[1] / sh; /* padded row h + plo: phase, index */
    for (int64_t h = 0; h < H; h++) {
      const float *src = x + (d * H + h) * W;
      int64_t rowbase = (dph * sh + hph) * sw;
      int64_t rowoff = kplane_row(p, dq, hq);
      if (++hph == sh) {
        hph = 0;
        hq++;
      }
      if (sw == 1) {
        float *dst = buf + rowbase * p->phase + rowoff + p->plo[2];
        if (W >= 64) memcpy(dst, src, (size_t)W * sizeof *src);
        else kplane_copy(dst, src, W);
        continue;
      }
      for (int64_t q = 0; q < sw; q++) {
        int64_t i0, x0, cnt;
        if (q < QMAX) {
          i0 = qi0[q];
          x0 = qx0[q];
          cnt = qcnt[q];
        } else {
          kplane_col_phase(p, q, &i0, &x0, &cnt);
        }
        float *dst = buf + (rowbase + q) * p->phase + rowoff + i0;
        if (sw == 2) {
          kplane_gather2(dst, src + x0, cnt);
          continue;
        }
        for (int64_t i = 0; i < cnt; i++) dst[i] = src[x0 + i * sw];
      }
    }
  }
}
