/* ops/k_sgemm.c — packed sgemm: blocking, packing, micro-kernels (ops/k_sgemm.h).
 *
 * Loop nest (BLIS): for each NC-wide column block of C, for each KC-deep
 * slice of K, pack the B slice (KC×NC) into NR-wide micro-panels laid out
 * [k][NR] (zero padded to NR); for each MC-tall row block pack the A slice
 * into MR-tall micro-panels laid out [k][MR] (zero padded); then every
 * MR×NR tile of C gets one micro-kernel call: the A micro-panel stays in L1,
 * the packed B slice streams from L2. The first K slice applies beta (0:
 * C is written without being read; otherwise C is scaled by beta once up
 * front and accumulated into); later slices accumulate.
 *
 * Micro-kernels keep the whole tile in registers (AVX-512: 12 rows × two
 * 16-float vectors = 24 accumulators; AVX2: 6 × two 8-float vectors = 12)
 * and write only the mr×nr valid part of an edge tile. Padding of the
 * packed panels is zero so edge tiles need no special inner loop.
 */
#include "ops/k_sgemm.h"

#include <pthread.h>
#include <string.h>

#include "ir/mem.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KSG_X86 1
#else
#define KSG_X86 0
#endif

/* Blocking: KC floats of depth; NC columns of packed B (KC·NC·4 bytes =
 * 512 KiB, in L2); MC rows of packed A per block. */
enum { KSG_KC = 256, KSG_NC = 512, KSG_MC = 144 };

typedef void (*KsgKernel)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, int mr,
                          int nr, bool load);

typedef struct {
  const char *name;
  int mr, nr;
  KsgKernel kern;
} KsgIsa;

/* ------------------------------------------------------------ micro-kernels */

#if KSG_X86

#define KSG_MR512 12
#define KSG_NR512 32

__attribute__((target("avx512f,fma"))) static void ksg_kern512(int64_t kc, const float *a,
                                                               const float *b, float *c,
                                                               int64_t ldc, int mr, int nr,
                                                               bool load) {
  __m512 acc[KSG_MR512][2];
#pragma GCC unroll 12
  for (int r = 0; r < KSG_MR512; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; k++) {
    __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 12
    for (int r = 0; r < KSG_MR512; r++) {
      __m512 av = _mm512_set1_ps(a[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
    a += KSG_MR512;
    b += KSG_NR512;
  }
  __mmask16 m0 = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1u);
  __mmask16 m1 = nr >= 32 ? (__mmask16)0xFFFF
                          : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1u) : (__mmask16)0;
#pragma GCC unroll 12
  for (int r = 0; r < KSG_MR512; r++) {
    if (r >= mr) break;
    float *cr = c + r * ldc;
    __m512 v0 = acc[r][0], v1 = acc[r][1];
    if (load) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, cr));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, cr + 16));
    }
    _mm512_mask_storeu_ps(cr, m0, v0);
    _mm512_mask_storeu_ps(cr + 16, m1, v1);
  }
}

#define KSG_MR256 6
#define KSG_NR256 16

__attribute__((target("avx2,fma"))) static void ksg_kern256(int64_t kc, const float *a,
                                                            const float *b, float *c, int64_t ldc,
                                                            int mr, int nr, bool load) {
  __m256 acc[KSG_MR256][2];
#pragma GCC unroll 6
  for (int r = 0; r < KSG_MR256; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
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
    return;
  }
  float tmp[KSG_NR256] __attribute__((aligned(32)));
  for (int r = 0; r < mr; r++) {
    _mm256_store_ps(tmp, acc[r][0]);
    _mm256_store_ps(tmp + 8, acc[r][1]);
    float *cr = c + r * ldc;
    for (int j = 0; j < nr; j++) cr[j] = load ? cr[j] + tmp[j] : tmp[j];
  }
}

#endif

/* ------------------------------------------------------------ CPU choice */

static const KsgIsa *ksg_pick(const char *want) {
#if KSG_X86
  static const KsgIsa isa512 = {"avx512", KSG_MR512, KSG_NR512, ksg_kern512};
  static const KsgIsa isa256 = {"avx2", KSG_MR256, KSG_NR256, ksg_kern256};
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

/* B slice depth [p0, p0+kc) × columns [j0, j0+nc) into NR-column micro-panels. */
static void ksg_pack_b(const KsgIsa *isa, bool tb, const float *B, int64_t ldb, int64_t p0,
                       int64_t kc, int64_t j0, int64_t nc, float *restrict dst) {
  int NR = isa->nr;
  for (int64_t jp = 0; jp < nc; jp += NR, dst += kc * NR) {
    int64_t nr = nc - jp < NR ? nc - jp : NR;
    if (!tb) { /* element (k, j) at B[k*ldb + j] */
      for (int64_t k = 0; k < kc; k++) {
        const float *src = B + (p0 + k) * ldb + j0 + jp;
        float *d = dst + k * NR;
        if (nr == NR) {
          memcpy(d, src, (size_t)NR * sizeof *d);
        } else {
          for (int64_t j = 0; j < nr; j++) d[j] = src[j];
          for (int64_t j = nr; j < NR; j++) d[j] = 0.0f;
        }
      }
    } else { /* element (k, j) at B[j*ldb + k] */
      for (int64_t j = 0; j < nr; j++) {
        const float *src = B + (j0 + jp + j) * ldb + p0;
        for (int64_t k = 0; k < kc; k++) dst[k * NR + j] = src[k];
      }
      for (int64_t j = nr; j < NR; j++)
        for (int64_t k = 0; k < kc; k++) dst[k * NR + j] = 0.0f;
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

/* Packing buffers, one per thread, kept between calls (a fresh 600 KiB
 * block per call would be mmapped and unmapped each time: page faults and,
 * with several threads, TLB shoot-downs). Freed when the thread exits. */
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
  mem_free(b->buf);
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
    mem_free(b->buf);
    b->cap = 0;
    b->buf = mem_aligned_try(64, n * sizeof(float));
    if (!b->buf) return NULL;
    b->cap = n;
  }
  return b->buf;
}

static int64_t ksg_round(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

static bool ksg_run(const KsgIsa *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                    int64_t ldc) {
  if (!isa) return false;
  if (M <= 0 || N <= 0) return true;
  if (K <= 0) {
    ksg_scale(M, N, beta, C, ldc);
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
  for (int64_t jc = 0; jc < N; jc += KSG_NC) {
    int64_t nc = N - jc < KSG_NC ? N - jc : KSG_NC;
    for (int64_t pc = 0; pc < K; pc += KSG_KC) {
      int64_t kc = K - pc < KSG_KC ? K - pc : KSG_KC;
      bool load = !(overwrite && pc == 0);
      ksg_pack_b(isa, tb, B, ldb, pc, kc, jc, nc, pb);
      for (int64_t ic = 0; ic < M; ic += KSG_MC) {
        int64_t mc = M - ic < KSG_MC ? M - ic : KSG_MC;
        ksg_pack_a(isa, ta, A, lda, ic, mc, pc, kc, pa);
        for (int64_t ir = 0; ir < mc; ir += isa->mr) {
          int mr = (int)(mc - ir < isa->mr ? mc - ir : isa->mr);
          const float *ap = pa + ir * kc;
          float *crow = C + (ic + ir) * ldc + jc;
          for (int64_t jr = 0; jr < nc; jr += isa->nr) {
            int nr = (int)(nc - jr < isa->nr ? nc - jr : isa->nr);
            isa->kern(kc, ap, pb + jr * kc, crow + jr, ldc, mr, nr, load);
          }
        }
      }
    }
  }
  return true;
}

bool ksgemm_f32(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  return ksg_run(ksg_default(), ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

bool ksgemm_f32_isa(const char *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                    int64_t ldc) {
  return ksg_run(ksg_pick(isa), ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}
