/* ops/kernels/k_sgemm.c — packed sgemm: blocking, packing, micro-kernels (ops/kernels/k_sgemm.h).
 *
 * Loop nest (BLIS): for each NC-wide column block of C, for each KC-deep
 * slice of K, pack the B slice (KC×NC) into micro-panels laid out [k][w]
 * (w = NR, or NR/2 for a last panel at most NR/2 wide on AVX-512; zero
 * padded); for each MC-tall row block pack the A slice into MR-tall
 * micro-panels laid out [k][MR] (zero padded); then every MR×NR tile of C
 * gets one micro-kernel call: the A micro-panel stays in L1, the packed B
 * slice streams from L2. With A not transposed, full MR-row
 * panels of A are not packed at all: the kernel broadcasts straight from
 * the MR rows of A (a transposing pack would cost as much as the FMAs on
 * narrow C such as ResNet's 7×7 maps). The first K slice applies beta (0:
 * C is written without being read; otherwise C is scaled by beta once up
 * front and accumulated into); later slices accumulate; the last slice
 * applies the epilogue (bias, residual, ReLU) as the tile is stored.
 *
 * Micro-kernels keep the whole tile in registers (AVX-512: 12 rows × two
 * 16-float vectors = 24 accumulators; AVX2: 6 × two 8-float vectors = 12)
 * and write only the mr×nr valid part of an edge tile. Padding of the
 * packed panels is zero so edge tiles need no special inner loop.
 */
#include "ops/kernels/k_sgemm.h"

#include <pthread.h>
#include <string.h>

#include "ir/mem.h"
#include "runtime/bufpool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KSG_X86 1
#else
#define KSG_X86 0
#endif

/* Blocking: KC floats of depth; NC columns of packed B (KC·NC·4 bytes =
 * 512 KiB, in L2); MC rows of packed A per block. */
enum { KSG_KC = 256, KSG_NC = 512, KSG_MC = 144 };

/* The epilogue of one tile, pointers already at the tile's first row/column. */
typedef struct {
  const float *bias; /* mr values or NULL */
  const float *res;  /* or NULL */
  int64_t ldr;
  bool relu;
} KsgTileEpi;

/* One micro-kernel call: C tile (+)= A panel · B panel over kc. `a` is a
 * packed [k][MR] panel, or (row kernels) the first of MR rows of A with row
 * stride lda. e (last K slice only) is the epilogue, or NULL. */
typedef void (*KsgKernel)(int64_t kc, const float *a, int64_t lda, const float *b, float *c,
                          int64_t ldc, int mr, int nr, bool load, const KsgTileEpi *e);

typedef struct {
  const char *name;
  int mr, nr;
  KsgKernel kern;      /* packed A, NR-wide panel */
  KsgKernel kern_half; /* packed A, NR/2-wide panel, or NULL */
  KsgKernel row;       /* A rows in place, NR-wide, or NULL */
  KsgKernel row_half;  /* A rows in place, NR/2-wide, or NULL */
  bool avx512;         /* the AVX-512 GEMV and masked B copies apply */
} KsgIsa;

/* Scalar epilogue on an mr×nr tile of C (kernels without a fused one). */
static void ksg_epi_tile(const KsgTileEpi *e, float *c, int64_t ldc, int mr, int nr) {
  for (int r = 0; r < mr; r++) {
    float *cr = c + r * ldc;
    const float *rr = e->res ? e->res + r * e->ldr : NULL;
    float b = e->bias ? e->bias[r] : 0.0f;
    for (int j = 0; j < nr; j++) {
      float v = cr[j] + b + (rr ? rr[j] : 0.0f);
      cr[j] = e->relu && !(v > 0.0f) ? 0.0f : v;
    }
  }
}

/* ------------------------------------------------------------ micro-kernels */

#if KSG_X86

#define KSG_MR512 12
#define KSG_NR512 32

#define KSG_T512 __attribute__((target("avx512f,fma")))

/* The AVX-512 kernel body: nv (1 or 2) vectors per row, A packed or in
 * place (rowa: row r at a + r·lda). Specialised by the wrappers below. */
static inline __attribute__((always_inline)) KSG_T512 void
ksg_body512(const int nv, const bool rowa, int64_t kc, const float *a, int64_t lda,
            const float *b, float *c, int64_t ldc, int mr, int nr, bool load,
            const KsgTileEpi *e) {
  __m512 acc[KSG_MR512][2];
#pragma GCC unroll 12
  for (int r = 0; r < KSG_MR512; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  if (rowa) {
    /* rows 4q .. 4q+3 at base q + {0, 1, 2, 3}·L bytes */
    const char *p0 = (const char *)a;
    int64_t L = lda * (int64_t)sizeof(float);
    const char *p1 = p0 + 4 * L, *p2 = p0 + 8 * L;
    int64_t L3 = 3 * L;
    for (int64_t k = 0; k < kc; k++) {
      __m512 b0 = _mm512_load_ps(b), b1 = nv == 2 ? _mm512_load_ps(b + 16) : b0;
      const char *q[3] = {p0, p1, p2};
#pragma GCC unroll 12
      for (int r = 0; r < KSG_MR512; r++) {
        int64_t off = (r & 3) == 0 ? 0 : (r & 3) == 1 ? L : (r & 3) == 2 ? 2 * L : L3;
        __m512 av = _mm512_set1_ps(*(const float *)(q[r >> 2] + off));
        acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
        if (nv == 2) acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
      }
      p0 += sizeof(float);
      p1 += sizeof(float);
      p2 += sizeof(float);
      b += 16 * nv;
    }
  } else {
    for (int64_t k = 0; k < kc; k++) {
      __m512 b0 = _mm512_load_ps(b), b1 = nv == 2 ? _mm512_load_ps(b + 16) : b0;
#pragma GCC unroll 12
      for (int r = 0; r < KSG_MR512; r++) {
        __m512 av = _mm512_set1_ps(a[r]);
        acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
        if (nv == 2) acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
      }
      a += KSG_MR512;
      b += 16 * nv;
    }
  }
  __mmask16 m0 = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1u);
  __mmask16 m1 = nr >= 32 ? (__mmask16)0xFFFF
                          : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1u) : (__mmask16)0;
  __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 12
  for (int r = 0; r < KSG_MR512; r++) {
    if (r >= mr) break;
    float *cr = c + r * ldc;
    __m512 v0 = acc[r][0], v1 = acc[r][1];
    if (load) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, cr));
      if (nv == 2) v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, cr + 16));
    }
    if (e) {
      if (e->bias) {
        __m512 bv = _mm512_set1_ps(e->bias[r]);
        v0 = _mm512_add_ps(v0, bv);
        v1 = _mm512_add_ps(v1, bv);
      }
      if (e->res) {
        const float *rr = e->res + r * e->ldr;
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, rr));
        if (nv == 2) v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, rr + 16));
      }
      if (e->relu) {
        v0 = _mm512_max_ps(v0, zero);
        v1 = _mm512_max_ps(v1, zero);
      }
    }
    _mm512_mask_storeu_ps(cr, m0, v0);
    if (nv == 2) _mm512_mask_storeu_ps(cr + 16, m1, v1);
  }
}

#define KSG_DEF512(NAME, NV, ROWA)                                                                 \
  KSG_T512 static void NAME(int64_t kc, const float *a, int64_t lda, const float *b, float *c,     \
                            int64_t ldc, int mr, int nr, bool load, const KsgTileEpi *e) {         \
    ksg_body512(NV, ROWA, kc, a, lda, b, c, ldc, mr, nr, load, e);                                \
  }
KSG_DEF512(ksg_kern512, 2, false)
KSG_DEF512(ksg_kern512h, 1, false)
KSG_DEF512(ksg_row512, 2, true)
KSG_DEF512(ksg_row512h, 1, true)

/* ---- GEMV (M = 1 or N = 1): no packing, one pass over the matrix */

/* y[i·incy] = A_i · x + beta·y[i·incy] for rows A_i = A + i·lda, i < m. */
KSG_T512 static void ksg_dots512(int64_t m, int64_t k, const float *A, int64_t lda,
                                 const float *x, float beta, float *y, int64_t incy) {
  int64_t kv = k & ~(int64_t)15;
  __mmask16 mt = (__mmask16)((1u << (k & 15)) - 1u);
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    const float *a0 = A + i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t p = 0; p < kv; p += 16) {
      __m512 xv = _mm512_loadu_ps(x + p);
      s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a0 + p), xv, s0);
      s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a1 + p), xv, s1);
      s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a2 + p), xv, s2);
      s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a3 + p), xv, s3);
    }
    if (mt) {
      __m512 xv = _mm512_maskz_loadu_ps(mt, x + kv);
      s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mt, a0 + kv), xv, s0);
      s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mt, a1 + kv), xv, s1);
      s2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mt, a2 + kv), xv, s2);
      s3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mt, a3 + kv), xv, s3);
    }
    float r[4] = {_mm512_reduce_add_ps(s0), _mm512_reduce_add_ps(s1), _mm512_reduce_add_ps(s2),
                  _mm512_reduce_add_ps(s3)};
    for (int q = 0; q < 4; q++) {
      float *yy = y + (i + q) * incy;
      *yy = beta == 0.0f ? r[q] : r[q] + beta * *yy;
    }
  }
  for (; i < m; i++) {
    const float *a0 = A + i * lda;
    __m512 s0 = _mm512_setzero_ps();
    for (int64_t p = 0; p < kv; p += 16)
      s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a0 + p), _mm512_loadu_ps(x + p), s0);
    if (mt)
      s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mt, a0 + kv), _mm512_maskz_loadu_ps(mt, x + kv),
                           s0);
    float *yy = y + i * incy;
    float r = _mm512_reduce_add_ps(s0);
    *yy = beta == 0.0f ? r : r + beta * *yy;
  }
}

/* y[0..n) = Σ_p x[p·incx] · R_p + beta·y, rows R_p = R + p·ldr (y contiguous). */
KSG_T512 static void ksg_axpys512(int64_t n, int64_t k, const float *R, int64_t ldr,
                                  const float *x, int64_t incx, float beta, float *y) {
  for (int64_t j = 0; j < n; j += 64) { /* 4 vectors of y stay in registers over all of k */
    int64_t w = n - j < 64 ? n - j : 64;
    __mmask16 m[4];
    for (int q = 0; q < 4; q++) {
      int64_t c = w - 16 * q;
      m[q] = c >= 16 ? (__mmask16)0xFFFF : c > 0 ? (__mmask16)((1u << c) - 1u) : (__mmask16)0;
    }
    __m512 s[4];
    for (int q = 0; q < 4; q++) s[q] = _mm512_setzero_ps();
    for (int64_t p = 0; p < k; p++) {
      __m512 xv = _mm512_set1_ps(x[p * incx]);
      const float *r = R + p * ldr + j;
#pragma GCC unroll 4
      for (int q = 0; q < 4; q++)
        s[q] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[q], r + 16 * q), xv, s[q]);
    }
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) {
      __m512 v = s[q];
      if (beta != 0.0f)
        v = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(m[q], y + j + 16 * q), v);
      _mm512_mask_storeu_ps(y + j + 16 * q, m[q], v);
    }
  }
}

#define KSG_MR256 6
#define KSG_NR256 16

#define KSG_T256 __attribute__((target("avx2,fma")))

/* The AVX2 kernel body, A packed or in place (rowa: row r at a + r·lda,
 * rows 0-2 and 3-5 addressed from two bases, as the AVX-512 body does).
 * The same FMAs in the same order either way. */
static inline __attribute__((always_inline)) KSG_T256 void
ksg_body256(const bool rowa, int64_t kc, const float *a, int64_t lda, const float *b, float *c,
            int64_t ldc, int mr, int nr, bool load, const KsgTileEpi *e) {
  __m256 acc[KSG_MR256][2];
#pragma GCC unroll 6
  for (int r = 0; r < KSG_MR256; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  if (rowa) {
    const char *p0 = (const char *)a;
    int64_t L = lda * (int64_t)sizeof(float);
    const char *p1 = p0 + 3 * L;
    for (int64_t k = 0; k < kc; k++) {
      __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
      const char *q[2] = {p0, p1};
#pragma GCC unroll 6
      for (int r = 0; r < KSG_MR256; r++) {
        int64_t off = r % 3 == 0 ? 0 : r % 3 == 1 ? L : 2 * L;
        __m256 av = _mm256_broadcast_ss((const float *)(q[r / 3] + off));
        acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
      }
      p0 += sizeof(float);
      p1 += sizeof(float);
      b += KSG_NR256;
    }
  } else {
    for (int64_t k = 0; k < kc; k++) {
      __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
      for (int r = 0; r < KSG_MR256; r++) {
        __m256 av = _mm256_broadcast_ss(a + r);
        acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
      }
      a += KSG_MR256;
      b += KSG_NR256;
    }
  }
  if (nr == KSG_NR256) {
#pragma GCC unroll 6
    for (int r = 0; r < KSG_MR256; r++) {
      if (r >= mr) break;
      float *cr = c + r * ldc;
      __m256 v0 = acc[r][0], v1 = acc[r][1];
      if (load) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(cr));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(cr + 8));
      }
      _mm256_storeu_ps(cr, v0);
      _mm256_storeu_ps(cr + 8, v1);
    }
  } else {
    /* unrolled like the full case: a dynamic acc[r] would keep the
     * accumulators in memory through the whole k loop */
    float tmp[KSG_NR256] __attribute__((aligned(32)));
#pragma GCC unroll 6
    for (int r = 0; r < KSG_MR256; r++) {
      if (r >= mr) break;
      _mm256_store_ps(tmp, acc[r][0]);
      _mm256_store_ps(tmp + 8, acc[r][1]);
      float *cr = c + r * ldc;
      for (int j = 0; j < nr; j++) cr[j] = load ? cr[j] + tmp[j] : tmp[j];
    }
  }
  if (e) ksg_epi_tile(e, c, ldc, mr, nr);
}

KSG_T256 static void ksg_kern256(int64_t kc, const float *a, int64_t lda, const float *b, float *c,
                                 int64_t ldc, int mr, int nr, bool load, const KsgTileEpi *e) {
  ksg_body256(false, kc, a, lda, b, c, ldc, mr, nr, load, e);
}

KSG_T256 static void ksg_row256(int64_t kc, const float *a, int64_t lda, const float *b, float *c,
                                int64_t ldc, int mr, int nr, bool load, const KsgTileEpi *e) {
  ksg_body256(true, kc, a, lda, b, c, ldc, mr, nr, load, e);
}

#endif

/* ------------------------------------------------------------ CPU choice */

static const KsgIsa *ksg_pick(const char *want) {
#if KSG_X86
  static const KsgIsa isa512 = {"avx512",    KSG_MR512,  KSG_NR512, ksg_kern512,
                                ksg_kern512h, ksg_row512, ksg_row512h, true};
  static const KsgIsa isa256 = {"avx2", KSG_MR256, KSG_NR256, ksg_kern256, NULL, ksg_row256, NULL, false};
  __builtin_cpu_init();
  bool has512 = __builtin_cpu_supports("avx512f");
  bool has256 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (want) {
    if (strcmp(want, "avx512") == 0) return has512 ? &isa512 : NULL;
    if (strcmp(want, "avx2") == 0) return has256 ? &isa256 : NULL;
    return NULL;
  }
  if (has512) return &isa512;
  if (has256) return &isa256;
#else
  (void)want;
#endif
  return NULL;
}

static const KsgIsa *ksg_isa;
static bool ksg_probed;

static const KsgIsa *ksg_default(void) {
  if (!ksg_probed) {
    ksg_isa = ksg_pick(NULL);
    ksg_probed = true;
  }
  return ksg_isa;
}

const char *ksgemm_isa(void) {
  const KsgIsa *isa = ksg_default();
  return isa ? isa->name : NULL;
}

bool ksgemm_available(void) { return ksg_default() != NULL; }

/* ------------------------------------------------------------ packing */

/* A slice rows [i0, i0+mc) × depth [p0, p0+kc) into MR-row micro-panels. */
static void ksg_pack_a(const KsgIsa *isa, bool ta, const float *A, int64_t lda, int64_t i0,
                       int64_t mc, int64_t p0, int64_t kc, float *restrict dst) {
  int MR = isa->mr;
  for (int64_t ip = 0; ip < mc; ip += MR, dst += kc * MR) {
    int64_t mr = mc - ip < MR ? mc - ip : MR;
    if (ta) { /* element (i, k) at A[k*lda + i]: rows of the panel are contiguous */
      for (int64_t k = 0; k < kc; k++) {
        const float *src = A + (p0 + k) * lda + i0 + ip;
        float *d = dst + k * MR;
        if (mr == 6 && MR == 6) { /* fixed sizes: inline moves, not a memcpy call per k */
          memcpy(d, src, 6 * sizeof *d);
          continue;
        }
        if (mr == 12 && MR == 12) {
          memcpy(d, src, 12 * sizeof *d);
          continue;
        }
        for (int64_t r = 0; r < mr; r++) d[r] = src[r];
        for (int64_t r = mr; r < MR; r++) d[r] = 0.0f;
      }
    } else {
      for (int64_t r = 0; r < mr; r++) {
        const float *src = A + (i0 + ip + r) * lda + p0;
        for (int64_t k = 0; k < kc; k++) dst[k * MR + r] = src[k];
      }
      for (int64_t r = mr; r < MR; r++)
        for (int64_t k = 0; k < kc; k++) dst[k * MR + r] = 0.0f;
    }
  }
}

#if KSG_X86
/* dst[k·w + j] = src[k·ldb + j] for j < nr, 0 for nr <= j < w (w = 16 or 32). */
KSG_T512 static void ksg_copy_rows512(int64_t kc, const float *src, int64_t ldb, int nr, int w,
                                      float *restrict dst) {
  __mmask16 m0 = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1u);
  __mmask16 m1 = nr >= 32 ? (__mmask16)0xFFFF
                          : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1u) : (__mmask16)0;
  if (w == 32) {
    for (int64_t k = 0; k < kc; k++, src += ldb, dst += 32) {
      _mm512_store_ps(dst, _mm512_maskz_loadu_ps(m0, src));
      _mm512_store_ps(dst + 16, _mm512_maskz_loadu_ps(m1, src + 16));
    }
  } else {
    for (int64_t k = 0; k < kc; k++, src += ldb, dst += 16)
      _mm512_store_ps(dst, _mm512_maskz_loadu_ps(m0, src));
  }
}
#endif

#if KSG_X86
/* The whole B slice into AVX2 panels (16 wide, panel q at dst + q·16·kc, the
 * last one zero padded), row by row: each source row is read once, in order.
 * Panel by panel (a memcpy call per 64 bytes, each from another row 16·ldb
 * bytes on) was memory-bound, a quarter of a K = 64 product's time.
 * Masked-off lanes are not read. */
__attribute__((target("avx2"))) static void ksg_pack_b256(int64_t kc, const float *src, int64_t ldb, int64_t nc,
                                                         float *restrict dst) {
  int64_t full = nc / 16 * 16;
  int tail = (int)(nc - full);
  __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail), lane);
  __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail - 8), lane);
  for (int64_t k = 0; k < kc; k++, src += ldb) {
    float *d = dst + k * 16;
    for (int64_t j = 0; j < full; j += 16, d += 16 * kc) {
      _mm256_store_ps(d, _mm256_loadu_ps(src + j));
      _mm256_store_ps(d + 8, _mm256_loadu_ps(src + j + 8));
    }
    if (tail) {
      _mm256_store_ps(d, _mm256_maskload_ps(src + full, m0));
      _mm256_store_ps(d + 8, _mm256_maskload_ps(src + full + 8, m1));
    }
  }
}
#endif

/* Width of the packed panel holding columns [jp, jp+nr) of an nc-wide block:
 * NR, or NR/2 for a last panel that fits in half (when the ISA has a kernel for it). */
static int ksg_panel_width(const KsgIsa *isa, int64_t nr) {
  return isa->kern_half && nr <= isa->nr / 2 ? isa->nr / 2 : isa->nr;
}

/* B slice depth [p0, p0+kc) × columns [j0, j0+nc) into micro-panels of
 * ksg_panel_width columns, panel jp (a multiple of NR) at dst + jp·kc. */
static void ksg_pack_b(const KsgIsa *isa, bool tb, const float *B, int64_t ldb, int64_t p0,
                       int64_t kc, int64_t j0, int64_t nc, float *restrict dst) {
  int NR = isa->nr;
#if KSG_X86
  if (!tb && isa->kern == ksg_kern256) {
    ksg_pack_b256(kc, B + p0 * ldb + j0, ldb, nc, dst);
    return;
  }
#endif
  for (int64_t jp = 0; jp < nc; jp += NR, dst += kc * NR) {
    int64_t nr = nc - jp < NR ? nc - jp : NR;
    int w = ksg_panel_width(isa, nr);
    if (!tb) { /* element (k, j) at B[k*ldb + j] */
      const float *src = B + p0 * ldb + j0 + jp;
#if KSG_X86
      if (isa->avx512) { /* two masked vector copies per k, no memcpy calls */
        ksg_copy_rows512(kc, src, ldb, (int)nr, w, dst);
        continue;
      }
#endif
      if (nr == w) {
        for (int64_t k = 0; k < kc; k++) memcpy(dst + k * w, src + k * ldb, (size_t)w * sizeof *dst);
      } else {
        for (int64_t k = 0; k < kc; k++) {
          float *d = dst + k * w;
          memcpy(d, src + k * ldb, (size_t)nr * sizeof *d);
          memset(d + nr, 0, (size_t)(w - nr) * sizeof *d);
        }
      }
    } else { /* element (k, j) at B[j*ldb + k] */
      for (int64_t j = 0; j < nr; j++) {
        const float *src = B + (j0 + jp + j) * ldb + p0;
        for (int64_t k = 0; k < kc; k++) dst[k * w + j] = src[k];
      }
      for (int64_t j = nr; j < w; j++)
        for (int64_t k = 0; k < kc; k++) dst[k * w + j] = 0.0f;
    }
  }
}

/* ------------------------------------------------------------ driver */

static void ksg_scale(int64_t M, int64_t N, float beta, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * ldc;
    if (beta == 0.0f) memset(c, 0, (size_t)N * sizeof *c);
    else
      for (int64_t j = 0; j < N; j++) c[j] *= beta;
  }
}

static bool ksg_epi_active(const KsgemmEpi *e) { return e && (e->bias || e->res || e->relu); }

/* The epilogue of tile rows [i, …) × columns [j, …). */
static KsgTileEpi ksg_tile_epi(const KsgemmEpi *e, int64_t i, int64_t j) {
  KsgTileEpi t = {e->bias ? e->bias + i : NULL, e->res ? e->res + i * e->ldr + j : NULL, e->ldr,
                  e->relu};
  return t;
}

/* The epilogue over all of C (K = 0). */
static void ksg_epi_all(const KsgemmEpi *e, int64_t M, int64_t N, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j += 4096) {
      KsgTileEpi t = ksg_tile_epi(e, i, j);
      ksg_epi_tile(&t, C + i * ldc + j, ldc, 1, (int)(N - j < 4096 ? N - j : 4096));
    }
}

/* Packing buffers, one per thread, kept between calls (a fresh 600 KiB
 * block per call would be mmapped and unmapped each time: page faults and,
 * with several threads, TLB shoot-downs). The first one is already big
 * enough for every blocked GEMM (KSG_BUF_MIN floats) and comes pre-faulted
 * from runtime/bufpool.h, so growing step by step never faults pages in
 * during a network's first pass. Freed when the thread exits. */
enum { KSG_BUF_MIN = KSG_KC * (KSG_MC + KSG_NC) + 64 };
typedef struct {
  float *buf;
  size_t cap; /* floats */
} KsgBuf;

static pthread_key_t ksg_key;
static pthread_once_t ksg_once = PTHREAD_ONCE_INIT;
static bool ksg_key_ok;

static void ksg_buf_free(void *raw) {
  KsgBuf *b = raw;
  if (!b) return;
  bufpool_free(b->buf, b->cap * sizeof(float));
  mem_free(b);
}

static void ksg_key_init(void) { ksg_key_ok = pthread_key_create(&ksg_key, ksg_buf_free) == 0; }

/* The calling thread's buffer of at least n floats, or NULL. */
static float *ksg_buffer(size_t n) {
  pthread_once(&ksg_once, ksg_key_init);
  if (!ksg_key_ok) return NULL;
  KsgBuf *b = pthread_getspecific(ksg_key);
  if (!b) {
    b = mem_malloc_try(sizeof *b);
    if (!b) return NULL;
    b->buf = NULL;
    b->cap = 0;
    if (pthread_setspecific(ksg_key, b) != 0) {
      mem_free(b);
      return NULL;
    }
  }
  if (b->cap < n) {
    bufpool_free(b->buf, b->cap * sizeof(float));
    b->cap = 0;
    size_t want = n > KSG_BUF_MIN ? n : KSG_BUF_MIN;
    b->buf = bufpool_alloc(want * sizeof(float));
    if (!b->buf) return NULL;
    b->cap = want;
  }
  return b->buf;
}

static int64_t ksg_round(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* All MR×NR tiles of rows [i0, i0+mc) against one packed B slice. ap/al:
 * the A micro-panel source for rows i0.. (see KsgKernel). */
static void ksg_row_tiles(const KsgIsa *isa, bool rowa, int64_t kc, const float *ap, int64_t al,
                          const float *pb, int64_t nc, float *crow, int64_t ldc, int mr, bool load,
                          const KsgemmEpi *epi, int64_t i0, int64_t j0) {
  for (int64_t jr = 0; jr < nc; jr += isa->nr) {
    int nr = (int)(nc - jr < isa->nr ? nc - jr : isa->nr);
    bool half = ksg_panel_width(isa, nr) != isa->nr;
    KsgKernel k = rowa ? (half ? isa->row_half : isa->row) : (half ? isa->kern_half : isa->kern);
    KsgTileEpi te;
    if (epi) te = ksg_tile_epi(epi, i0, j0 + jr);
    k(kc, ap, al, pb + jr * kc, crow + jr, ldc, mr, nr, load, epi ? &te : NULL);
  }
}

/* C = op(A)·op(B) + beta·C when M == 1 or N == 1 (AVX-512 only): a row of
 * dot products or a sum of scaled rows, whichever reads the matrix
 * contiguously; a strided vector operand is gathered first. */
static bool ksg_gemv(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
                     int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
#if KSG_X86
  if (M == 1) { /* c[j] = Σ_k a_k · B(k, j); a_k at A[k] (or A[k·lda] when ta) */
    if (!tb) {
      ksg_axpys512(N, K, B, ldb, A, ta ? lda : 1, beta, C);
      return true;
    }
    const float *x = A;
    if (ta && K > 1) {
      float *t = ksg_buffer((size_t)K);
      if (!t) return false;
      for (int64_t k = 0; k < K; k++) t[k] = A[k * lda];
      x = t;
    }
    ksg_dots512(N, K, B, ldb, x, beta, C, 1);
    return true;
  }
  /* N == 1: c_i = Σ_k A(i, k) · b_k; b_k at B[k·ldb] (or B[k] when tb) */
  if (!ta) {
    const float *x = B;
    if (!tb && K > 1) {
      float *t = ksg_buffer((size_t)K);
      if (!t) return false;
      for (int64_t k = 0; k < K; k++) t[k] = B[k * ldb];
      x = t;
    }
    ksg_dots512(M, K, A, lda, x, beta, C, ldc);
    return true;
  }
  float *y = C;
  if (ldc != 1) {
    y = ksg_buffer((size_t)M);
    if (!y) return false;
    for (int64_t i = 0; i < M && beta != 0.0f; i++) y[i] = C[i * ldc];
  }
  ksg_axpys512(M, K, A, lda, B, tb ? 1 : ldb, beta, y);
  if (y != C)
    for (int64_t i = 0; i < M; i++) C[i * ldc] = y[i];
  return true;
#else
  (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb;
  (void)beta, (void)C, (void)ldc;
  return false;
#endif
}

static bool ksg_run(const KsgIsa *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                    int64_t ldc, const KsgemmEpi *epi) {
  if (!isa) return false;
  if (M <= 0 || N <= 0) return true;
  if (!ksg_epi_active(epi)) epi = NULL;
  if (K <= 0) {
    if (beta != 1.0f) ksg_scale(M, N, beta, C, ldc);
    if (epi) ksg_epi_all(epi, M, N, C, ldc);
    return true;
  }
  if ((M == 1 || N == 1) && isa->avx512) {
    if (!ksg_gemv(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc)) return false;
    if (epi) ksg_epi_all(epi, M, N, C, ldc);
    return true;
  }
  int64_t kcmax = K < KSG_KC ? K : KSG_KC;
  int64_t ncmax = ksg_round(N < KSG_NC ? N : KSG_NC, isa->nr);
  int64_t mcmax = ksg_round(M < KSG_MC ? M : KSG_MC, isa->mr);
  int64_t asz = ksg_round(kcmax * mcmax, 16); /* keeps the B panels 64-byte aligned */
  float *pa = ksg_buffer((size_t)(asz + kcmax * ncmax));
  if (!pa) return false;
  float *pb = pa + asz;
  bool overwrite = beta == 0.0f;
  if (!overwrite && beta != 1.0f) ksg_scale(M, N, beta, C, ldc);
  bool rowa = !ta && isa->row; /* full panels of A read in place */
  for (int64_t jc = 0; jc < N; jc += KSG_NC) {
    int64_t nc = N - jc < KSG_NC ? N - jc : KSG_NC;
    for (int64_t pc = 0; pc < K; pc += KSG_KC) {
      int64_t kc = K - pc < KSG_KC ? K - pc : KSG_KC;
      bool load = !(overwrite && pc == 0);
      const KsgemmEpi *e = pc + kc >= K ? epi : NULL;
      ksg_pack_b(isa, tb, B, ldb, pc, kc, jc, nc, pb);
      for (int64_t ic = 0; ic < M; ic += KSG_MC) {
        int64_t mc = M - ic < KSG_MC ? M - ic : KSG_MC;
        if (!rowa) ksg_pack_a(isa, ta, A, lda, ic, mc, pc, kc, pa);
        for (int64_t ir = 0; ir < mc; ir += isa->mr) {
          int mr = (int)(mc - ir < isa->mr ? mc - ir : isa->mr);
          float *crow = C + (ic + ir) * ldc + jc;
          if (rowa && mr == isa->mr) {
            ksg_row_tiles(isa, true, kc, A + (ic + ir) * lda + pc, lda, pb, nc, crow, ldc, mr, load,
                          e, ic + ir, jc);
          } else {
            const float *ap = pa + ir * kc;
            if (rowa) { /* the last, partial panel: packed */
              ksg_pack_a(isa, ta, A, lda, ic + ir, mr, pc, kc, pa);
              ap = pa;
            }
            ksg_row_tiles(isa, false, kc, ap, isa->mr, pb, nc, crow, ldc, mr, load, e, ic + ir, jc);
          }
        }
      }
    }
  }
  return true;
}

bool ksgemm_f32(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  return ksg_run(ksg_default(), ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, NULL);
}

bool ksgemm_f32_epi(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                    const float *B, int64_t ldb, float beta, float *C, int64_t ldc,
                    const KsgemmEpi *epi) {
  return ksg_run(ksg_default(), ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, epi);
}

bool ksgemm_f32_isa(const char *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                    int64_t ldc) {
  return ksg_run(ksg_pick(isa), ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, NULL);
}

bool ksgemm_f32_isa_epi(const char *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                        const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                        float *C, int64_t ldc, const KsgemmEpi *epi) {
  return ksg_run(ksg_pick(isa), ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, epi);
}
