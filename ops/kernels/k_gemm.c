/* ops/kernels/k_gemm.c — OpenBLAS set-up and pool-threaded GEMM panels (ops/kernels/k_gemm.h).
 *
 * OpenBLAS is loaded with dlopen on the first GEMM that needs it, not
 * linked: loading it and starting its threads costs about 6 ms, which every
 * relayc run would pay. On an AVX-512 CPU float32 GEMMs use relayc's own
 * sgemm (ops/kernels/k_sgemm.c, faster than OpenBLAS 0.3.21 on every network shape
 * measured) and OpenBLAS is only loaded for float64 (or RELAYC_SGEMM=openblas).
 * If it cannot be loaded, GEMMs fall back to ops/kernels/k_sgemm.c or plain loops.
 *
 * Invariants: OpenBLAS runs single-threaded after kgemm_init (our pool does
 * the splitting); a panel is a contiguous range of C's columns (or rows when
 * C is tall and narrow), aligned to the micro-kernel tile, computed by one
 * serial GEMM call; panels
 * never overlap, so chunk bodies write disjoint memory. A product whose K
 * dwarfs both sides of C is cut along K instead (pieces into C and a
 * partial-sum buffer, summed after the join). The K cut and the engine
 * depend on the shape alone, never on the thread count (column panels do
 * not change any element's sum), so a result is the same at any
 * RELAYC_NUM_THREADS; overwriting panels of products big enough to thread
 * with K <= 64 run on relayc's sgemm (kgemm_f32_serial_over).
 */
#include "ops/kernels/k_gemm.h"

#include <cblas.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_sgemm.h"
#include "ops/kernels/k_simd.h"
#include "runtime/bufpool.h"
#include "runtime/threadpool.h"

/* The BLAS entry points, resolved by kg_load_blas (NULL when absent). */
static struct {
  __typeof__(cblas_sgemm) *sgemm;
  __typeof__(cblas_dgemm) *dgemm;
  __typeof__(cblas_sgemv) *sgemv;
  __typeof__(cblas_dgemv) *dgemv;
  char *(*get_corename)(void);          /* OpenBLAS extras */
  void (*set_num_threads)(int);
  void (*dynamic_init)(void);
  void (*dynamic_quit)(void);
  int (*thread_shutdown)(void);
} blas;

static void kg_load_blas(void) {
  void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  blas.sgemm = (__typeof__(blas.sgemm))dlsym(h, "cblas_sgemm");
  blas.dgemm = (__typeof__(blas.dgemm))dlsym(h, "cblas_dgemm");
  blas.sgemv = (__typeof__(blas.sgemv))dlsym(h, "cblas_sgemv");
  blas.dgemv = (__typeof__(blas.dgemv))dlsym(h, "cblas_dgemv");
  blas.get_corename = (__typeof__(blas.get_corename))dlsym(h, "openblas_get_corename");
  blas.set_num_threads = (__typeof__(blas.set_num_threads))dlsym(h, "openblas_set_num_threads");
  blas.dynamic_init = (__typeof__(blas.dynamic_init))dlsym(h, "gotoblas_dynamic_init");
  blas.dynamic_quit = (__typeof__(blas.dynamic_quit))dlsym(h, "gotoblas_dynamic_quit");
  blas.thread_shutdown = (__typeof__(blas.thread_shutdown))dlsym(h, "blas_thread_shutdown_");
}

static bool kg_ready;
/* Use ops/kernels/k_sgemm.c for float32 GEMMs (decided once in kgemm_init). */
static bool kg_own_sgemm;
/* relayc's sgemm takes the short overwriting GEMMs (kgemm_f32_serial_over). */
static bool kg_own_short;

/* Micro-kernels used by default (RELAYC_SGEMM=openblas forces OpenBLAS,
 * RELAYC_SGEMM=own any of ours): the AVX-512 one beats OpenBLAS everywhere
 * (1.5-2x single-threaded, more on narrow panels); the AVX2 one is ~10%
 * slower than OpenBLAS's Haswell kernels, so AVX2-only CPUs keep OpenBLAS. */
static bool kg_own_default_isa(const char *isa) { return isa && strcmp(isa, "avx512") == 0; }

static bool kg_cpu_has_avx512(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

/* Cores OpenBLAS 0.3.21 may fall back to on an unknown AVX-512 CPU. */
static bool kg_core_is_weaker(const char *name) {
  static const char *const weak_cores[] = {"Haswell", "Zen", "SandyBridge", "Nehalem", "Prescott",
                                           "Core2", "Penryn", "Barcelona", "Excavator", NULL};
  for (int i = 0; weak_cores[i]; i++)
    if (strcmp(name, weak_cores[i]) == 0) return true;
  return false;
}

/* Re-runs OpenBLAS's own core selection with OPENBLAS_CORETYPE=core: it
 * verifies the CPU/OS support for that core itself and falls back to a safe
 * one otherwise. The caller's environment is restored afterwards. */
static void kg_reselect(const char *core) {
  const char *old = getenv("OPENBLAS_CORETYPE");
  char *saved = old ? strdup(old) : NULL;
  setenv("OPENBLAS_CORETYPE", core, 1);
  blas.dynamic_quit();
  blas.dynamic_init();
  if (saved) setenv("OPENBLAS_CORETYPE", saved, 1);
  else unsetenv("OPENBLAS_CORETYPE");
  free(saved);
}

static void kg_pick_core(void) {
  if (!blas.get_corename || !blas.dynamic_init || !blas.dynamic_quit) return;
  const char *want = getenv("RELAYC_BLAS_CORE");
  bool autosel = want && strcmp(want, "auto") == 0;
  if (want && *want && !autosel) {
    if (strcmp(want, "keep") != 0) kg_reselect(want); /* explicit choice */
    return;
  }
  if (!autosel && getenv("OPENBLAS_CORETYPE")) return; /* the user chose; OpenBLAS honoured it */
  const char *name = blas.get_corename();
  if (name && kg_core_is_weaker(name) && kg_cpu_has_avx512()) kg_reselect("SkylakeX");
}

static pthread_once_t kg_blas_once = PTHREAD_ONCE_INIT;

static void kg_blas_setup(void) {
  kg_load_blas();
  kg_pick_core();
  if (blas.set_num_threads) blas.set_num_threads(1);
  /* OpenBLAS starts its worker threads at load and they spin (sched_yield)
   * for a while: on a 2-way SMT core that halves the first kernels' speed.
   * relayc runs OpenBLAS single-threaded, so stop them; a later threaded
   * call (benchmarks) would start them again. */
  if (blas.thread_shutdown) blas.thread_shutdown();
}

/* Loads and sets up OpenBLAS once (any thread; others wait); false when absent. */
static bool kg_blas(void) {
  pthread_once(&kg_blas_once, kg_blas_setup);
  return blas.sgemm != NULL;
}

void kgemm_init(void) {
  if (kg_ready) return;
  kg_ready = true;
  const char *sg = getenv("RELAYC_SGEMM");
  bool force_ob = sg && strcmp(sg, "openblas") == 0, force_own = sg && strcmp(sg, "own") == 0;
  kg_own_sgemm = ksgemm_available() && !force_ob &&
                 (force_own || kg_own_default_isa(ksgemm_isa()) || !kg_blas());
  if (!kg_own_sgemm) kg_blas();
  kg_own_short = ksgemm_available() && !force_ob;
  (void)threadpool_size();
}

const char *kgemm_core_name(void) {
  kgemm_init();
  kg_blas();
  return blas.get_corename ? blas.get_corename() : "unknown";
}

const char *kgemm_sgemm_engine(void) {
  kgemm_init();
  return kg_own_sgemm ? ksgemm_isa() : "openblas";
}

/* ------------------------------------------------------------ serial calls */

static bool kg_fits(int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc) {
  return M <= INT_MAX && N <= INT_MAX && K <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX &&
         ldc <= INT_MAX;
}

#define KG_NAIVE(T)                                                                                \
  for (int64_t i = 0; i < M; i++)                                                                  \
    for (int64_t j = 0; j < N; j++) {                                                              \
      T s = 0;                                                                                     \
      for (int64_t k = 0; k < K; k++)                                                              \
        s += (ta ? A[k * lda + i] : A[i * lda + k]) * (tb ? B[j * ldb + k] : B[k * ldb + j]);      \
      C[i * ldc + j] = (beta == 0 ? 0 : beta * C[i * ldc + j]) + s;                                \
    }

void kgemm_f32_serial(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
                      int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  kgemm_init(); /* a no-op after the first call, which kernels make on the main thread */
  if (K <= 0) {
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
    return;
  }
  if (kg_own_sgemm && ksgemm_f32(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc)) return;
  if (!kg_fits(M, N, K, lda, ldb, ldc) || !kg_blas() || !blas.sgemv) {
    KG_NAIVE(float)
    return;
  }
  if (M == 1) { /* a row vector times B: GEMV reads B once, no packing */
    blas.sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? (int)N : (int)K,
                tb ? (int)K : (int)N, 1.0f, B, (int)ldb, A, ta ? (int)lda : 1, beta, C, 1);
    return;
  }
  if (N == 1) { /* A times a column vector */
    blas.sgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, ta ? (int)K : (int)M,
                ta ? (int)M : (int)K, 1.0f, A, (int)lda, B, tb ? 1 : (int)ldb, beta, C, (int)ldc);
    return;
  }
  blas.sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M,
              (int)N, (int)K, 1.0f, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

/* Overwriting GEMMs with a reduction at most this short go to relayc's sgemm
 * even where OpenBLAS is the float32 engine (AVX2 CPUs): OpenBLAS first
 * zeroes C in a separate pass (its beta kernel), which costs about as much
 * as the product itself when K is small, while relayc's micro-kernel stores
 * its tiles over C directly. Measured on ResNet-50's weight gradients at 7×7
 * (K = 49: 1.5-2× faster) and a 1×1 data gradient with K = 64
 * (bench/grad/README.md). Since the row-by-row B pack (session 9) products
 * with K up to 256 gain too when C has at least 64 columns (session 10,
 * alone: 144×784 K=128 Aᵀ 0.36 -> 0.33 ms, 512×784 K=128 1.28 -> 1.15,
 * 256×2304 K=196 Bᵀ 2.96 -> 2.82; 288×196 K=256 level; narrower C loses:
 * 576×49 K=512 0.38 -> 0.47): ResNet-50's weight gradients at 14×14
 * (K = 196) and data gradients of 128 and 256 channels. */
#define KG_OWN_SHORT_K 64
#define KG_OWN_MID_K 256
#define KG_OWN_MID_MIN_N 64

bool kgemm_f32_own_over(int64_t N, int64_t K) {
  kgemm_init();
  return kg_own_short && K > 0 && (K <= KG_OWN_SHORT_K || (K <= KG_OWN_MID_K && N >= KG_OWN_MID_MIN_N));
}

void kgemm_f32_serial_over(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
                           int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (kgemm_f32_own_over(N, K) &&
      ksgemm_f32(ta, tb, M, N, K, A, lda, B, ldb, 0.0f, C, ldc))
    return;
  kgemm_f32_serial(ta, tb, M, N, K, A, lda, B, ldb, 0.0f, C, ldc);
}

void kgemm_f32_serial_epi(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                          int64_t ldc, const KsgemmEpi *epi) {
  if (M <= 0 || N <= 0) return;
  kgemm_init();
  bool own = kg_own_sgemm || (beta == 0.0f && kgemm_f32_own_over(N, K));
  if (own && ksgemm_f32_epi(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, epi)) return;
  kgemm_f32_serial(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
  if (!epi || !(epi->bias || epi->res || epi->relu)) return;
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * ldc, b = epi->bias ? epi->bias[i] : 0.0f;
    const float *r = epi->res ? epi->res + i * epi->ldr : NULL;
    for (int64_t j = 0; j < N; j++) {
      float v = c[j] + b + (r ? r[j] : 0.0f);
      c[j] = epi->relu && !(v > 0.0f) ? 0.0f : v;
    }
  }
}

void kgemm_f64_serial(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double *A,
                      int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                      int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  kgemm_init();
  if (K <= 0) {
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
    return;
  }
  if (!kg_fits(M, N, K, lda, ldb, ldc) || !kg_blas() || !blas.dgemm || !blas.dgemv) {
    KG_NAIVE(double)
    return;
  }
  if (M == 1) {
    blas.dgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? (int)N : (int)K,
                tb ? (int)K : (int)N, 1.0, B, (int)ldb, A, ta ? (int)lda : 1, beta, C, 1);
    return;
  }
  if (N == 1) {
    blas.dgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, ta ? (int)K : (int)M,
                ta ? (int)M : (int)K, 1.0, A, (int)lda, B, tb ? 1 : (int)ldb, beta, C, (int)ldc);
    return;
  }
  blas.dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M,
              (int)N, (int)K, 1.0, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

/* ------------------------------------------------------------ panels */

typedef struct {
  bool ta, tb, f64, by_rows;
  bool over; /* beta = 0 and big enough to thread: panels take kgemm_f32_serial_over */
  int64_t M, N, K, lda, ldb, ldc, step, npanels;
  const void *A, *B;
  void *C;
  double beta;
  const float *res; /* float32 only: after its product each panel becomes res + alpha·panel */
  int64_t ldr;
  float alpha;
} KgJob;

/* A product cut along K: unit u = (piece, panel) runs piece u / npanels of
 * the reduction over column panel u % npanels of `part`; piece 0 writes C,
 * piece p > 0 the dense M × N block p − 1 of `partial`, added to C after the
 * join. */
typedef struct {
  KgJob part;
  int64_t pieces, klen;
  void *partial;
} KgSplitJob;

/* c = r + s·c over n elements, rounded as relayc.add_scaled rounds (t = s·c,
 * then r + t; no contraction): bit for bit the product followed by that
 * operator (ops/kernels/k_elemwise_scaled.c). */
static KHOT_EXACT void kg_add_scaled_row(const float *r, float s, float *c, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float t = s * c[i];
    c[i] = r[i] + t;
  }
}

/* The scaled add of j's res over rows [r0, r0 + m) × columns [c0, c0 + n) of C. */
static void kg_add_scaled_block(const KgJob *j, int64_t r0, int64_t m, int64_t c0, int64_t n) {
  for (int64_t i = r0; i < r0 + m; i++)
    kg_add_scaled_row(j->res + i * j->ldr + c0, j->alpha, (float *)j->C + i * j->ldc + c0, n);
}

static void kg_panel(void *raw, int64_t lo, int64_t hi) {
  const KgJob *j = raw;
  for (int64_t p = lo; p < hi; p++) {
    int64_t a = p * j->step, len = j->step;
    int64_t ext = j->by_rows ? j->M : j->N;
    if (a >= ext) continue;
    if (a + len > ext) len = ext - a;
    int64_t M = j->by_rows ? len : j->M, N = j->by_rows ? j->N : len;
    /* offsets of the panel in A (rows), B (columns) and C */
    int64_t offA = j->by_rows ? (j->ta ? a : a * j->lda) : 0;
    int64_t offB = j->by_rows ? 0 : (j->tb ? a * j->ldb : a);
    int64_t offC = j->by_rows ? a * j->ldc : a;
    if (j->f64)
      kgemm_f64_serial(j->ta, j->tb, M, N, j->K, (const double *)j->A + offA, j->lda,
                       (const double *)j->B + offB, j->ldb, j->beta, (double *)j->C + offC, j->ldc);
    else if (j->over) /* short K goes to relayc's sgemm */
      kgemm_f32_serial_over(j->ta, j->tb, M, N, j->K, (const float *)j->A + offA, j->lda,
                            (const float *)j->B + offB, j->ldb, (float *)j->C + offC, j->ldc);
    else
      kgemm_f32_serial(j->ta, j->tb, M, N, j->K, (const float *)j->A + offA, j->lda,
                       (const float *)j->B + offB, j->ldb, (float)j->beta, (float *)j->C + offC,
                       j->ldc);
    if (j->res && !j->f64) /* while the panel is in this core's cache */
      kg_add_scaled_block(j, j->by_rows ? a : 0, M, j->by_rows ? 0 : a, N);
  }
}

/* Minimum work (multiply-adds) worth a second thread. */
#define KG_PAR_MIN_MACS (1 << 18)

/* Cuts the panels of j for `nt` threads (sets by_rows, step, npanels):
 * aligned to the micro-kernel tile of the engine its panels use (own sgemm:
 * 12 rows × 32 columns, a multiple of the AVX2 6 × 16; OpenBLAS: 16); rows
 * when C is too narrow for whole column tiles.
 * Short-K overwriting products on relayc's sgemm (at most 64 multiply-adds
 * per element of C: bound by writing C) take row panels when each thread
 * gets at least KG_SHORT_ROW_TILES row tiles of the micro-kernel (AVX2: 6
 * rows; the rows split on that tile): each thread then writes one
 * contiguous block of C instead of a slice of every row, at the price of
 * packing all of B. Measured alone at 2 threads (bench/grad/README.md,
 * session 9): 128×784 K=64 (the MLP's dW1) 0.11 -> 0.09 ms, 192×784 K=32
 * 0.106 -> 0.066, 1000×2048 K=1 0.33 -> 0.14, 144×3136 K=24 0.19 -> 0.16;
 * with fewer rows per thread columns stay better (64×3136 K=64 0.19 vs 0.21,
 * 32×12544 K=16 0.12 vs 0.13). */
#define KG_SHORT_ROW_TILES 8

static void kg_cut_panels(KgJob *j, int nt) {
  bool short_own = !j->f64 && j->over && kg_own_short && j->K <= KG_OWN_SHORT_K;
  bool own = !j->f64 && (kg_own_sgemm || short_own);
  int64_t colw = own ? 32 : 16, rowh = own ? 12 : 16;
  const char *isa = short_own ? ksgemm_isa() : NULL;
  int64_t mr = isa && strcmp(isa, "avx512") == 0 ? 12 : 6;
  bool short_rows = short_own && j->M >= KG_SHORT_ROW_TILES * mr * nt;
  j->by_rows = j->N < 2 * colw * nt || (j->M > j->N && j->M >= rowh * nt) || short_rows;
  if (short_rows) rowh = mr; /* 128 rows split 66 / 62 on AVX2, not 72 / 56 */
  int64_t ext = j->by_rows ? j->M : j->N, align = j->by_rows ? rowh : colw;
  int64_t step = (ext + nt - 1) / nt;
  step = (step + align - 1) / align * align;
  j->step = step;
  j->npanels = (ext + step - 1) / step;
}

/* Products with a reduction this long and at least twice as long as either
 * side of C are cut along K into KG_KSPLIT_PIECES pieces (by the shape only,
 * so the rounding does not depend on the thread count). Cutting such a C
 * into panels makes every panel repack the whole operand on the uncut side
 * (the MNIST MLP's forward nn.dense, 64×128 with K = 784: +10-25% CPU, paid
 * in full when the second thread joins late); K pieces pack disjoint halves
 * of both operands and cost one M×N sum. Vector products (M or N = 1) pack
 * nothing and keep their panels. */
#define KG_KSPLIT_MIN_K 512
#define KG_KSPLIT_PIECES 2

static bool kg_wants_ksplit(const KgJob *j) {
  return j->K >= KG_KSPLIT_MIN_K && j->K >= 2 * j->M && j->K >= 2 * j->N && j->M > 1 && j->N > 1;
}

static void kg_split_unit(void *raw, int64_t lo, int64_t hi) {
  const KgSplitJob *s = raw;
  size_t es = s->part.f64 ? sizeof(double) : sizeof(float);
  for (int64_t u = lo; u < hi; u++) {
    int64_t piece = u / s->part.npanels, panel = u % s->part.npanels;
    int64_t k0 = piece * s->klen, klen = piece == s->pieces - 1 ? s->part.K - k0 : s->klen;
    KgJob j = s->part;
    j.K = klen;
    /* op(A) columns k0.. are A's rows when transposed; op(B) rows k0.. likewise */
    j.A = (const char *)j.A + (size_t)(j.ta ? k0 * j.lda : k0) * es;
    j.B = (const char *)j.B + (size_t)(j.tb ? k0 : k0 * j.ldb) * es;
    if (piece > 0) {
      j.C = (char *)s->partial + (size_t)((piece - 1) * j.M * j.N) * es;
      j.ldc = j.N;
      j.beta = 0;
    }
    kg_panel(&j, panel, panel + 1);
  }
}

/* C += the partial sums of pieces 1.. (row by row, in piece order). */
static void kg_split_sum(const KgSplitJob *s) {
  const KgJob *j = &s->part;
  for (int64_t p = 1; p < s->pieces; p++)
    for (int64_t i = 0; i < j->M; i++) {
      int64_t off = ((p - 1) * j->M + i) * j->N;
      if (j->f64) {
        double *c = (double *)j->C + i * j->ldc;
        const double *t = (const double *)s->partial + off;
        for (int64_t n = 0; n < j->N; n++) c[n] += t[n];
      } else {
        float *c = (float *)j->C + i * j->ldc;
        const float *t = (const float *)s->partial + off;
        for (int64_t n = 0; n < j->N; n++) c[n] += t[n];
      }
    }
}

/* Runs j cut along K; false (nothing written) when the partial sums cannot
 * be allocated. Threads take (piece, panel) units; with two threads each
 * takes one whole piece. */
static bool kg_run_ksplit(KgJob *j, int nt) {
  KgSplitJob s = {.part = *j, .pieces = KG_KSPLIT_PIECES, .klen = j->K / KG_KSPLIT_PIECES};
  size_t bytes = (size_t)((KG_KSPLIT_PIECES - 1) * j->M * j->N) * (j->f64 ? 8 : 4);
  s.partial = bufpool_alloc(bytes);
  if (!s.partial) return false;
  int per_piece = (nt + KG_KSPLIT_PIECES - 1) / KG_KSPLIT_PIECES;
  kg_cut_panels(&s.part, per_piece);
  threadpool_for(s.pieces * s.part.npanels, 1, kg_split_unit, &s);
  kg_split_sum(&s);
  bufpool_free(s.partial, bytes);
  return true;
}

static void kg_run(KgJob *j) {
  kgemm_init();
  int nt = threadpool_size();
  double macs = (double)j->M * (double)j->N * (double)j->K;
  /* by the shape, not the thread count, so results do not depend on it; smaller
   * products keep kgemm_f32_serial's engine bit for bit (exact-print goldens) */
  j->over = j->beta == 0 && macs >= KG_PAR_MIN_MACS;
  if (macs >= KG_PAR_MIN_MACS && kg_wants_ksplit(j)) {
    KgJob plain = *j; /* the scaled add needs the pieces' sum */
    plain.res = NULL;
    if (kg_run_ksplit(&plain, nt)) {
      if (j->res) kg_add_scaled_block(j, 0, j->M, 0, j->N);
      return;
    }
  }
  if (nt <= 1 || macs < KG_PAR_MIN_MACS || (j->M < 32 && j->N < 32)) {
    j->by_rows = false;
    j->step = j->N;
    kg_panel(j, 0, 1);
    return;
  }
  kg_cut_panels(j, nt);
  threadpool_for(j->npanels, 1, kg_panel, j);
}

void kgemm_f32(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
               const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  KgJob j = {.ta = ta, .tb = tb, .f64 = false, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb,
             .ldc = ldc, .A = A, .B = B, .C = C, .beta = beta};
  kg_run(&j);
}

void kgemm_f32_add_scaled(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float s, const float *R,
                          int64_t ldr, float *C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  KgJob j = {.ta = ta, .tb = tb, .f64 = false, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb,
             .ldc = ldc, .A = A, .B = B, .C = C, .beta = 0, .res = R, .ldr = ldr, .alpha = s};
  kg_run(&j);
}

void kgemm_f64(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
               const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  KgJob j = {.ta = ta, .tb = tb, .f64 = true, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb,
             .ldc = ldc, .A = A, .B = B, .C = C, .beta = beta};
  kg_run(&j);
}

/* ------------------------------------------------------------ scratch */

static struct {
  void **bufs;   /* per thread */
  size_t *sizes; /* per thread */
  int n;
} kg_scratch[KSCRATCH_SLOTS];

/* Scratch buffers come from runtime/bufpool.h: pre-faulted in one
 * MADV_POPULATE_WRITE call (first-touch faults cost ~4× more on VMs), and a
 * buffer outgrown by a later call goes back to the pool for reuse. */
void **kscratch(int slot, size_t bytes) {
  if (slot < 0 || slot >= KSCRATCH_SLOTS) return NULL;
  int nt = threadpool_size();
  if (kg_scratch[slot].n != nt) {
    for (int i = 0; i < kg_scratch[slot].n; i++)
      bufpool_free(kg_scratch[slot].bufs[i], kg_scratch[slot].sizes[i]);
    mem_free(kg_scratch[slot].bufs);
    mem_free(kg_scratch[slot].sizes);
    kg_scratch[slot].bufs = mem_calloc((size_t)nt, sizeof(void *));
    kg_scratch[slot].sizes = mem_calloc((size_t)nt, sizeof(size_t));
    kg_scratch[slot].n = nt;
  }
  bytes = (bytes + 4095) / 4096 * 4096;
  for (int i = 0; i < nt; i++) {
    if (kg_scratch[slot].sizes[i] >= bytes) continue;
    bufpool_free(kg_scratch[slot].bufs[i], kg_scratch[slot].sizes[i]);
    kg_scratch[slot].bufs[i] = bufpool_alloc(bytes);
    kg_scratch[slot].sizes[i] = kg_scratch[slot].bufs[i] ? bytes : 0;
    if (!kg_scratch[slot].bufs[i]) return NULL;
  }
  return kg_scratch[slot].bufs;
}

void kscratch_free(void) {
  for (int s = 0; s < KSCRATCH_SLOTS; s++) {
    for (int i = 0; i < kg_scratch[s].n; i++) bufpool_free(kg_scratch[s].bufs[i], kg_scratch[s].sizes[i]);
    mem_free(kg_scratch[s].bufs);
    mem_free(kg_scratch[s].sizes);
    memset(&kg_scratch[s], 0, sizeof kg_scratch[s]);
  }
}
