/* ops/kernels/k_winograd.c — Winograd F(4×4, 3×3) convolution (ops/kernels/k_winograd.h).
 *
 * Each 4×4 output tile reads a 6×6 input tile d; with the F(4, 3)
 * matrices Bᵀ (6×6), G (6×3) and Aᵀ (4×6):
 *     Y = Aᵀ [ Σ_c (G g_oc Gᵀ) ⊙ (Bᵀ d_c B) ] A.
 * Indexing the 36 tile positions by ξ, the channel sum is 36 independent
 * GEMMs  M[ξ] (O × T) = U[ξ] (O × C) · V[ξ] (C × T)  over all T tiles of
 * the batch. Layouts (float32, row-major):
 *     U [36][O][C]   V [36][C][Tp]   M [36][O][T]   tile t = (n·TH + ty)·TW + tx,
 * where Tp = T + 16 (slack for whole-vector stores).
 * Passes (each one threadpool_for on the pool):
 *  1. input: per (image, channel), 16 horizontally adjacent tiles at a
 *     time: each of the 6 input rows is de-interleaved into its 4-column
 *     phases (vector shuffles), so both 1-D transforms are 16-lane vector
 *     arithmetic and each V[ξ] row segment is one contiguous store;
 *  2. the 36 GEMMs (split over O blocks when there are few);
 *  3. output: per (image, out channel), 16 tiles at a time, Aᵀ m A, the
 *     4 column phases re-interleaved into output rows, and the epilogue
 *     (bias, residual / accumulate, ReLU) applied while storing.
 * Tiles past the output edge read zeros (padding) and are dropped on store.
 * The weight transform is done in double. Transforms use ops/kernels/k_simd.h
 * vectors (AVX-512 / AVX2 / baseline clones picked at load time).
 *
 * State: grow-only work buffers (V, M, uncached U) and a small LRU cache of
 * transformed module-constant weights, both owned here, touched only from
 * the submitting thread and released by kwino_cache_free.
 */
#include "ops/kernels/k_winograd.h"

#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_gemm.h"
#include "ops/kernels/k_sgemm.h"
#include "ops/kernels/k_simd.h"
#include "runtime/bufpool.h"
#include "runtime/threadpool.h"

/* ------------------------------------------------------------ policy */

bool kwino_wanted(int64_t C, int64_t O, int64_t OH, int64_t OW) {
  static int off = -1;
  if (off < 0) {
    const char *s = getenv("RELAYC_NO_WINOGRAD");
    off = s && *s && strcmp(s, "0") != 0;
  }
  if (off) return false;
  return C >= 32 && O >= 32 && OH >= 8 && OW >= 8;
}

/* ------------------------------------------------------------ buffers */

typedef struct KwBuf {
  float *p;
  size_t cap; /* bytes */
} KwBuf;

static KwBuf kw_V, kw_M, kw_U;

/* At least `bytes` (64-byte aligned); NULL on failure (the old buffer stays). */
static float *kw_reserve(KwBuf *b, size_t bytes) {
  if (b->cap >= bytes) return b->p;
  size_t want = (bytes + 4095) / 4096 * 4096;
  float *p = bufpool_alloc(want); /* pre-faulted: fresh pages cost ~10 us each to touch */
  if (!p) return NULL;
  bufpool_free(b->p, b->cap);
  b->p = p;
  b->cap = want;
  return p;
}

/* ------------------------------------------------------------ weight transform */

static const double KW_G[6][3] = {
    {1.0 / 4, 0, 0},
    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6},
    {1.0 / 24, -1.0 / 12, 1.0 / 6},
    {0, 0, 1},
};

typedef struct KwWt {
  const float *w;
  float *U;
  int64_t O, C;
} KwWt;

static void kw_wt_task(void *raw, int64_t lo, int64_t hi) {
  const KwWt *j = raw;
  int64_t plane = j->O * j->C;
  float u[36][64]; /* 64 channels at a time, then 36 contiguous row pieces */
  for (int64_t o = lo; o < hi; o++)
    for (int64_t c0 = 0; c0 < j->C; c0 += 64) {
      int64_t nc = j->C - c0 < 64 ? j->C - c0 : 64;
      for (int64_t c = 0; c < nc; c++) {
        const float *g = j->w + (o * j->C + c0 + c) * 9;
        double t[6][3];
        for (int a = 0; a < 6; a++)
          for (int s = 0; s < 3; s++)
            t[a][s] = KW_G[a][0] * g[s] + KW_G[a][1] * g[3 + s] + KW_G[a][2] * g[6 + s];
        for (int a = 0; a < 6; a++)
          for (int b = 0; b < 6; b++)
            u[a * 6 + b][c] =
                (float)(t[a][0] * KW_G[b][0] + t[a][1] * KW_G[b][1] + t[a][2] * KW_G[b][2]);
      }
      for (int xi = 0; xi < 36; xi++)
        memcpy(j->U + xi * plane + o * j->C + c0, u[xi], (size_t)nc * sizeof(float));
    }
}

static void kw_transform_weights(const float *w, int64_t O, int64_t C, float *U) {
  KwWt j = {w, U, O, C};
  threadpool_for(O, 1, kw_wt_task, &j);
}

/* ------------------------------------------------------------ weight cache */

enum { KW_CACHE_MAX = 64 };
#define KW_CACHE_BYTES ((size_t)1 << 30)

typedef struct KwEntry {
  const float *w;
  int64_t O, C;
  uint64_t sum, used;
  float *U;
  size_t bytes;
} KwEntry;

static KwEntry kw_cache[KW_CACHE_MAX];
static int kw_ncache;
static size_t kw_cache_bytes;
static uint64_t kw_clock;

/* FNV-1a over the bits of 64 elements spread across the weight: tells a
 * reused address with other contents from the cached tensor. */
static uint64_t kw_checksum(const float *w, int64_t n) {
  uint64_t h = 0xcbf29ce484222325u;
  for (int64_t k = 0; k < 64; k++) {
    int64_t i = n > 1 ? k * (n - 1) / 63 : 0;
    uint32_t bits;
    memcpy(&bits, w + i, 4);
    h = (h ^ bits) * 0x100000001b3u;
  }
  return h;
}

static int kw_lru(void) {
  int lru = 0;
  for (int i = 1; i < kw_ncache; i++)
    if (kw_cache[i].used < kw_cache[lru].used) lru = i;
  return lru;
}

static void kw_cache_drop(int i) {
  bufpool_free(kw_cache[i].U, kw_cache[i].bytes);
  kw_cache_bytes -= kw_cache[i].bytes;
  kw_cache[i] = kw_cache[--kw_ncache];
}

/* The cached transform of a constant weight. The first call for a weight
 * only records it (*first = true, NULL): transforming costs several GEMM
 * calls' time (mostly page faults on the fresh U), repaid only when the
 * weight is used again. Made on the second call; NULL when it cannot be
 * cached (too big, out of memory). */
static const float *kw_cached_weights(const float *w, int64_t O, int64_t C, bool *first) {
  uint64_t sum = kw_checksum(w, O * C * 9);
  *first = false;
  int seen = -1;
  for (int i = 0; i < kw_ncache; i++) {
    KwEntry *e = &kw_cache[i];
    if (e->w != w || e->O != O || e->C != C) continue;
    if (e->sum == sum) {
      e->used = ++kw_clock;
      if (e->U) return e->U;
      seen = i;
    } else {
      kw_cache_drop(i); /* same address, other contents */
    }
    break;
  }
  if (seen < 0) {
    if (kw_ncache == KW_CACHE_MAX) kw_cache_drop(kw_lru());
    kw_cache[kw_ncache++] = (KwEntry){w, O, C, sum, ++kw_clock, NULL, 0};
    *first = true;
    return NULL;
  }
  kw_cache_drop(seen); /* re-entered below with its transform */
  size_t bytes = (size_t)(36 * O * C) * sizeof(float);
  if (bytes > KW_CACHE_BYTES) return NULL;
  while (kw_ncache > 0 && (kw_ncache == KW_CACHE_MAX || kw_cache_bytes + bytes > KW_CACHE_BYTES))
    kw_cache_drop(kw_lru());
  float *U = bufpool_alloc(bytes);
  if (!U) return NULL;
  kw_transform_weights(w, O, C, U);
  kw_cache[kw_ncache++] = (KwEntry){w, O, C, sum, ++kw_clock, U, bytes};
  kw_cache_bytes += bytes;
  return U;
}

void kwino_cache_free(void) {
  while (kw_ncache > 0) kw_cache_drop(kw_ncache - 1);
  KwBuf *bufs[3] = {&kw_V, &kw_M, &kw_U};
  for (int i = 0; i < 3; i++) {
    bufpool_free(bufs[i]->p, bufs[i]->cap);
    *bufs[i] = (KwBuf){0};
  }
}

/* ------------------------------------------------------------ 1-D transforms */

/* r = Bᵀ d (6 → 6). */
#define KW_BT(d, r)                                                                                \
  do {                                                                                             \
    kv16 k4 = kv_splat(4), k5 = kv_splat(5), k2 = kv_splat(2);                                     \
    (r)[0] = k4 * (d)[0] - k5 * (d)[2] + (d)[4];                                                   \
    (r)[1] = (d)[3] + (d)[4] - k4 * ((d)[1] + (d)[2]);                                             \
    (r)[2] = k4 * ((d)[1] - (d)[2]) + (d)[4] - (d)[3];                                             \
    (r)[3] = k2 * ((d)[3] - (d)[1]) + (d)[4] - (d)[2];                                             \
    (r)[4] = k2 * ((d)[1] - (d)[3]) + (d)[4] - (d)[2];                                             \
    (r)[5] = k4 * (d)[1] - k5 * (d)[3] + (d)[5];                                                   \
  } while (0)

/* y = Aᵀ m (6 → 4). */
#define KW_AT(m, y)                                                                                \
  do {                                                                                             \
    kv16 s12 = (m)[1] + (m)[2], d12 = (m)[1] - (m)[2];                                             \
    kv16 s34 = (m)[3] + (m)[4], d34 = (m)[3] - (m)[4];                                             \
    (y)[0] = (m)[0] + s12 + s34;                                                                   \
    (y)[1] = d12 + kv_splat(2) * d34;                                                              \
    (y)[2] = s12 + kv_splat(4) * s34;                                                              \
    (y)[3] = d12 + kv_splat(8) * d34 + (m)[5];                                                     \
  } while (0)

/* p[0..63] → ph[j][t] = p[4t + j], j < nph (2 or 4). */
#define KW_DEINT(p, ph, nph)                                                                       \
  do {                                                                                             \
    const kvi16 lo01 = {0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29};                 \
    const kvi16 lo23 = {2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31};               \
    const kvi16 hiA = {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};                    \
    const kvi16 hiB = {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31};              \
    kv16 v0 = kv_load(p), v1 = kv_load((p) + 16), v2 = kv_load((p) + 32), v3 = kv_load((p) + 48); \
    kv16 e01 = __builtin_shuffle(v0, v1, lo01), f01 = __builtin_shuffle(v2, v3, lo01);             \
    (ph)[0] = __builtin_shuffle(e01, f01, hiA);                                                    \
    (ph)[1] = __builtin_shuffle(e01, f01, hiB);                                                    \
    if ((nph) > 2) {                                                                               \
      kv16 e23 = __builtin_shuffle(v0, v1, lo23), f23 = __builtin_shuffle(v2, v3, lo23);           \
      (ph)[2] = __builtin_shuffle(e23, f23, hiA);                                                  \
      (ph)[3] = __builtin_shuffle(e23, f23, hiB);                                                  \
    }                                                                                              \
  } while (0)

/* q[4t + j] = ph[j][t] for t < 16 (64 floats). */
#define KW_INTER(ph, q)                                                                            \
  do {                                                                                             \
    const kvi16 zlo = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};                    \
    const kvi16 zhi = {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};              \
    const kvi16 plo = {0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23};                    \
    const kvi16 phi = {8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31};              \
    kv16 ab0 = __builtin_shuffle((ph)[0], (ph)[1], zlo), ab1 = __builtin_shuffle((ph)[0], (ph)[1], zhi); \
    kv16 cd0 = __builtin_shuffle((ph)[2], (ph)[3], zlo), cd1 = __builtin_shuffle((ph)[2], (ph)[3], zhi); \
    kv_store((q), __builtin_shuffle(ab0, cd0, plo));                                               \
    kv_store((q) + 16, __builtin_shuffle(ab0, cd0, phi));                                          \
    kv_store((q) + 32, __builtin_shuffle(ab1, cd1, plo));                                          \
    kv_store((q) + 48, __builtin_shuffle(ab1, cd1, phi));                                          \
  } while (0)

/* ------------------------------------------------------------ input pass */

/* seg[0, len) = input row ih at columns iw0 .., zero outside the plane. */
static inline __attribute__((always_inline)) void kw_row_seg(const float *restrict x, int64_t H,
                                                             int64_t W, int64_t ih, int64_t iw0,
                                                             int64_t len, float *restrict seg) {
  int64_t lo = iw0 < 0 ? -iw0 : 0, hi = W - iw0;
  if (lo > len) lo = len;
  if (hi > len) hi = len;
  if (ih < 0 || ih >= H || hi <= lo) {
    memset(seg, 0, (size_t)len * sizeof(float));
    return;
  }
  for (int64_t k = 0; k < lo; k++) seg[k] = 0;
  memcpy(seg + lo, x + ih * W + iw0 + lo, (size_t)(hi - lo) * sizeof(float));
  for (int64_t k = hi; k < len; k++) seg[k] = 0;
}

/* V rows of one input plane x (H × W): v points at V[0][c][first tile of
 * the image], vs = C·Tp is the stride between ξ planes. Every store is 16
 * lanes: the lanes past the row's last tile land on the next tile row (or
 * image) of the same channel, rewritten later by the same task, or in the
 * 16-float slack ending each V row (Tp = T + 16).
 * Wide rows (TW > 8): a vector is 16 adjacent tiles of one tile row.
 * Narrow rows: TWv (TW rounded up to a power of two) lanes per tile row,
 * 16 / TWv tile rows per vector, compacted on store. */
static KHOT void kw_input_plane(const float *restrict x, int64_t H, int64_t W, int64_t pt,
                                int64_t pl, int64_t TH, int64_t TW, float *restrict v, int64_t vs) {
  float seg[80] __attribute__((aligned(64))), seg2[64] __attribute__((aligned(64)));
  int64_t TWv = 16;
  while (TWv / 2 >= TW && TWv > 1) TWv /= 2;
  int64_t k = 16 / TWv, wv = 4 * TWv; /* tile rows per vector, input columns per tile row */
  kvi16 perm;
  for (int i = 0; i < 16; i++) perm[i] = (int)(i / TW < k ? i / TW * TWv + i % TW : 0);
  for (int64_t ty0 = 0; ty0 < TH; ty0 += k)
    for (int64_t tx0 = 0; tx0 < TW; tx0 += 16) {
      kv16 h[6][6];
      for (int r = 0; r < 6; r++) {
        const float *src = seg, *src2 = seg2;
        if (k == 1) {
          int64_t ih = 4 * ty0 - pt + r, iw0 = 4 * tx0 - pl;
          if (ih >= 0 && ih < H && iw0 >= 0 && iw0 + 68 <= W) {
            src = x + ih * W + iw0; /* interior: read the row in place */
          } else {
            kw_row_seg(x, H, W, ih, iw0, 68, seg);
          }
          src2 = src + 4;
        } else {
          for (int64_t g = 0; g < k; g++) {
            int64_t ih = 4 * (ty0 + g) - pt + r;
            kw_row_seg(x, H, W, ih, -pl, wv, seg + g * wv);
            kw_row_seg(x, H, W, ih, 4 - pl, wv, seg2 + g * wv);
          }
        }
        kv16 d[6], d45[2];
        KW_DEINT(src, d, 4);
        KW_DEINT(src2, d45, 2);
        d[4] = d45[0];
        d[5] = d45[1];
        KW_BT(d, h[r]);
      }
      float *dst = v + ty0 * TW + tx0;
      for (int b = 0; b < 6; b++) {
        kv16 col[6], out[6];
        for (int r = 0; r < 6; r++) col[r] = h[r][b];
        KW_BT(col, out);
        for (int a = 0; a < 6; a++)
          kv_store(dst + (a * 6 + b) * vs, k == 1 ? out[a] : __builtin_shuffle(out[a], perm));
      }
    }
}

/* ------------------------------------------------------------ output pass */

/* dst[0, n) = row + bias (+ res) (+ dst when acc), then ReLU. */
static inline __attribute__((always_inline)) void kw_store_row(float *restrict dst,
                                                               float *restrict row,
                                                               const float *restrict res,
                                                               int64_t n, float bias, bool relu,
                                                               bool acc) {
  if (res)
    for (int64_t k = 0; k < n; k++) row[k] += res[k];
  if (acc)
    for (int64_t k = 0; k < n; k++) row[k] += dst[k];
  if (relu) {
    for (int64_t k = 0; k < n; k++) {
      float t = row[k] + bias;
      dst[k] = t > 0 ? t : 0.0f;
    }
  } else {
    for (int64_t k = 0; k < n; k++) dst[k] = row[k] + bias;
  }
}

/* Output plane y (OH × OW) of one (image, out channel) from M: m points at
 * M[0][o][first tile of the image], ms = O·T (M has 16 floats of slack at
 * its end, so 16-tile loads may run past a row). Vectors group tiles as in
 * kw_input_plane (narrow rows: expanded from contiguous tiles on load). */
static KHOT void kw_output_plane(const float *restrict m, int64_t ms, int64_t TH, int64_t TW,
                                 int64_t OH, int64_t OW, float *restrict y,
                                 const float *restrict res, float bias, bool relu, bool acc) {
  float row[64] __attribute__((aligned(64)));
  int64_t TWv = 16;
  while (TWv / 2 >= TW && TWv > 1) TWv /= 2;
  int64_t k = 16 / TWv, wv = 4 * TWv;
  kvi16 inv;
  for (int i = 0; i < 16; i++) inv[i] = (int)(i / TWv * TW + (i % TWv < TW ? i % TWv : TW - 1));
  for (int64_t ty0 = 0; ty0 < TH; ty0 += k)
    for (int64_t tx0 = 0; tx0 < TW; tx0 += 16) {
      const float *src = m + ty0 * TW + tx0;
      kv16 s[4][6];
      for (int b = 0; b < 6; b++) {
        kv16 col[6], o4[4];
        for (int a = 0; a < 6; a++) {
          kv16 t = kv_load(src + (a * 6 + b) * ms);
          col[a] = k == 1 ? t : __builtin_shuffle(t, inv);
        }
        KW_AT(col, o4);
        for (int i = 0; i < 4; i++) s[i][b] = o4[i];
      }
      int64_t n = OW - 4 * tx0 < wv ? OW - 4 * tx0 : wv;
      for (int i = 0; i < 4; i++) {
        kv16 yy[4];
        KW_AT(s[i], yy);
        KW_INTER(yy, row);
        for (int64_t g = 0; g < k; g++) {
          int64_t oh = 4 * (ty0 + g) + i;
          if (oh >= OH) break;
          int64_t off = oh * OW + 4 * tx0;
          kw_store_row(y + off, row + g * wv, res ? res + off : NULL, n, bias, relu, acc);
        }
      }
    }
}

/* ------------------------------------------------------------ driver */

typedef struct KwJob {
  const KWinoArgs *a;
  int64_t TH, TW, TT, T; /* tiles: rows, columns, per image, total */
  int64_t Tp;            /* row stride of V: T + 16 */
  const float *U;
  float *V, *M;
  int64_t mb, nmb; /* GEMM row (out channel) blocks */
  bool own;        /* GEMMs through ops/kernels/k_sgemm.h (else ops/kernels/k_gemm.h) */
} KwJob;

/* One task per channel, images in order (kw_input_plane's overlapping stores). */
static void kw_in_task(void *raw, int64_t lo, int64_t hi) {
  const KwJob *j = raw;
  const KWinoArgs *a = j->a;
  for (int64_t c = lo; c < hi; c++)
    for (int64_t n = 0; n < a->N; n++)
      kw_input_plane(a->x + (n * a->C + c) * a->H * a->W, a->H, a->W, a->pt, a->pl, j->TH, j->TW,
                     j->V + c * j->Tp + n * j->TT, a->C * j->Tp);
}

static void kw_gemm_task(void *raw, int64_t lo, int64_t hi) {
  const KwJob *j = raw;
  const KWinoArgs *a = j->a;
  for (int64_t t = lo; t < hi; t++) {
    int64_t xi = t / j->nmb, o0 = (t % j->nmb) * j->mb;
    int64_t len = a->O - o0 < j->mb ? a->O - o0 : j->mb;
    const float *A = j->U + (xi * a->O + o0) * a->C, *B = j->V + xi * a->C * j->Tp;
    float *Cm = j->M + (xi * a->O + o0) * j->T;
    if (!(j->own && ksgemm_f32(false, false, len, j->T, a->C, A, a->C, B, j->Tp, 0.0f, Cm, j->T)))
      kgemm_f32_serial(false, false, len, j->T, a->C, A, a->C, B, j->Tp, 0.0f, Cm, j->T);
  }
}

static void kw_out_task(void *raw, int64_t lo, int64_t hi) {
  const KwJob *j = raw;
  const KWinoArgs *a = j->a;
  int64_t osz = a->OH * a->OW;
  for (int64_t t = lo; t < hi; t++) {
    int64_t n = t / a->O, o = t % a->O;
    kw_output_plane(j->M + o * j->T + n * j->TT, a->O * j->T, j->TH, j->TW, a->OH, a->OW,
                    a->y + t * osz, a->res ? a->res + t * osz : NULL, a->bias ? a->bias[o] : 0.0f,
                    a->relu, a->accumulate);
  }
}

/* Largest work buffer accepted (floats): keeps every index product small. */
#define KW_MAX_FLOATS ((int64_t)1 << 32)

bool kwino_conv2d(const KWinoArgs *a) {
  if (a->N <= 0 || a->O <= 0 || a->OH <= 0 || a->OW <= 0) return true;
  kgemm_init();
  KwJob j = {.a = a};
  j.own = ksgemm_available(); /* measured faster than OpenBLAS here, even on narrow T */
  j.TH = (a->OH + 3) / 4;
  j.TW = (a->OW + 3) / 4;
  j.TT = j.TH * j.TW;
  j.T = a->N * j.TT;
  j.Tp = j.T + 16;
  int64_t C = a->C > 0 ? a->C : 1;
  if (j.T > KW_MAX_FLOATS / 36 || C > KW_MAX_FLOATS / 36 / (j.T + 16) || a->O > KW_MAX_FLOATS / 36 / j.T ||
      a->O > KW_MAX_FLOATS / 36 / C)
    return false;
  j.V = kw_reserve(&kw_V, (size_t)(36 * C * j.Tp) * sizeof(float));
  size_t mfloats = (size_t)(36 * a->O * j.T) + 16;
  j.M = kw_reserve(&kw_M, mfloats * sizeof(float));
  if (!j.V || !j.M) return false;
  memset(j.M + mfloats - 16, 0, 16 * sizeof(float)); /* slack read by the output pass */
  if (a->C == 0) {
    memset(j.M, 0, (mfloats - 16) * sizeof(float));
  } else {
    bool first = false;
    j.U = a->w_const ? kw_cached_weights(a->w, a->O, a->C, &first) : NULL;
    if (first) return false;
    if (!j.U) {
      float *U = kw_reserve(&kw_U, (size_t)(36 * a->O * a->C) * sizeof(float));
      if (!U) return false;
      kw_transform_weights(a->w, a->O, a->C, U);
      j.U = U;
    }
    threadpool_for(a->C, 1, kw_in_task, &j);
    int nt = threadpool_size();
    j.mb = a->O;
    j.nmb = 1;
    if (36 < 4 * nt && a->O >= 32) { /* few GEMMs per thread: split the out channels too */
      int64_t mb = (a->O + 1) / 2;
      j.mb = (mb + 15) / 16 * 16;
      j.nmb = (a->O + j.mb - 1) / j.mb;
    }
    threadpool_for(36 * j.nmb, 1, kw_gemm_task, &j);
  }
  threadpool_for(a->N * a->O, 1, kw_out_task, &j);
  return true;
}
