/* tests/unit/check_sgemm.c — ops/kernels/k_sgemm.c against a plain triple loop.
 *
 * Every micro-kernel the CPU has (AVX-512, AVX2) is tested on its own:
 * all M, N, K in 1..70 along one axis at a time and on a sampled grid,
 * shapes crossing the KC/NC/MC block edges, all four transpose forms,
 * leading dimensions larger than the extents, beta 0 (C's NaN garbage must
 * not leak), 1 and other values, K = 0, the fused epilogue (bias,
 * residual, ReLU) and the GEMV shapes. The reference sums in double;
 * the tolerance is relative to the sum of |a·b|.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_gemm.h"
#include "ops/kernels/k_sgemm.h"
#include "tests/unit/unit_run.h"

static unsigned sg_seed = 12345u;

static float sg_rand(void) {
  sg_seed = sg_seed * 1103515245u + 12345u;
  return (float)((sg_seed >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

/* Epilogue flags of a case: EP_BIAS, EP_RES, EP_RELU (0: plain ksgemm_f32_isa). */
enum { EP_BIAS = 1, EP_RES = 2, EP_RELU = 4 };

/* Runs one case on `isa` (isa NULL: kgemm_f32_serial_epi, whatever engine);
 * returns false when the ISA is missing. */
static bool sg_case_epi(const char *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                        int pad, float beta, int ep) {
  int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad, ldr = N + 2;
  int64_t arows = ta ? K : M, brows = tb ? N : K;
  float *A = mem_malloc((size_t)(arows * lda + 1) * sizeof(float));
  float *B = mem_malloc((size_t)(brows * ldb + 1) * sizeof(float));
  float *C = mem_malloc((size_t)(M * ldc + 1) * sizeof(float));
  float *C0 = mem_malloc((size_t)(M * ldc + 1) * sizeof(float));
  float *bias = mem_malloc((size_t)(M + 1) * sizeof(float));
  float *res = mem_malloc((size_t)(M * ldr + 1) * sizeof(float));
  for (int64_t i = 0; i < arows * lda; i++) A[i] = sg_rand();
  for (int64_t i = 0; i < brows * ldb; i++) B[i] = sg_rand();
  for (int64_t i = 0; i < M * ldc; i++) C0[i] = beta == 0.0f ? NAN : sg_rand();
  for (int64_t i = 0; i < M; i++) bias[i] = sg_rand();
  for (int64_t i = 0; i < M * ldr; i++) res[i] = sg_rand();
  memcpy(C, C0, (size_t)(M * ldc) * sizeof(float));
  KsgemmEpi epi = {ep & EP_BIAS ? bias : NULL, ep & EP_RES ? res : NULL, ldr, (ep & EP_RELU) != 0};
  bool ok = true;
  if (!isa) kgemm_f32_serial_epi(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, ep ? &epi : NULL);
  else if (ep) ok = ksgemm_f32_isa_epi(isa, ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, &epi);
  else ok = ksgemm_f32_isa(isa, ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
  if (ok) {
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < ldc; j++) {
        float got = C[i * ldc + j];
        if (j >= N) { /* padding columns untouched */
          float want = C0[i * ldc + j];
          ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "padding written at %ld,%ld",
                        (long)i, (long)j);
          continue;
        }
        double s = 0, mag = 0;
        for (int64_t k = 0; k < K; k++) {
          double p = (double)(ta ? A[k * lda + i] : A[i * lda + k]) *
                     (double)(tb ? B[j * ldb + k] : B[k * ldb + j]);
          s += p;
          mag += fabs(p);
        }
        if (beta != 0.0f) {
          s += (double)beta * C0[i * ldc + j];
          mag += fabs((double)beta * C0[i * ldc + j]);
        }
        if (ep & EP_BIAS) {
          s += bias[i];
          mag += fabs(bias[i]);
        }
        if (ep & EP_RES) {
          s += res[i * ldr + j];
          mag += fabs(res[i * ldr + j]);
        }
        if ((ep & EP_RELU) && s < 0) s = fabs(s) <= 1e-5 * mag + 1e-6 ? got : 0; /* sign near 0 */
        ck_assert_msg(fabs((double)got - s) <= 1e-5 * mag + 1e-6,
                      "%s ta=%d tb=%d M=%ld N=%ld K=%ld beta=%g ep=%d at %ld,%ld: got %g want %g",
                      isa ? isa : "kgemm", ta, tb, (long)M, (long)N, (long)K, beta, ep, (long)i,
                      (long)j, got, s);
      }
  }
  mem_free(A);
  mem_free(B);
  mem_free(C);
  mem_free(C0);
  mem_free(bias);
  mem_free(res);
  return ok;
}

static bool sg_case(const char *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K, int pad,
                    float beta) {
  return sg_case_epi(isa, ta, tb, M, N, K, pad, beta, 0);
}

static const char *const isas[] = {"avx512", "avx2"};

START_TEST(test_edges_each_axis) {
  const char *isa = isas[_i];
  if (!sg_case(isa, false, false, 2, 2, 2, 0, 0.0f)) return; /* CPU lacks it */
  for (int t = 0; t < 4; t++) {
    bool ta = t & 1, tb = t & 2;
    for (int64_t x = 1; x <= 70; x++) {
      sg_case(isa, ta, tb, x, 37, 19, 0, 0.0f);
      sg_case(isa, ta, tb, 29, x, 23, 0, 1.0f);
      sg_case(isa, ta, tb, 13, 33, x, 3, 0.0f);
    }
  }
}
END_TEST

START_TEST(test_grid) {
  const char *isa = isas[_i];
  if (!sg_case(isa, false, false, 1, 1, 1, 0, 0.0f)) return;
  static const int64_t ext[] = {1, 2, 5, 6, 7, 11, 12, 13, 16, 17, 31, 32, 33, 47, 48, 49, 70};
  int n = (int)(sizeof ext / sizeof ext[0]);
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      int t = (a + b) & 3;
      float beta = (a * 7 + b) % 3 == 0 ? 0.0f : (a + b) % 2 ? 1.0f : 0.5f;
      sg_case(isa, t & 1, t & 2, ext[a], ext[b], ext[(a * 5 + b * 3) % n], (a + b) % 2, beta);
    }
}
END_TEST

START_TEST(test_big) {
  const char *isa = isas[_i];
  if (!sg_case(isa, false, false, 1, 1, 1, 0, 0.0f)) return;
  /* across KC (256), NC (512) and MC (144) block edges */
  sg_case(isa, false, false, 150, 530, 300, 1, 0.0f);
  sg_case(isa, false, true, 145, 513, 257, 0, 1.0f);
  sg_case(isa, true, false, 289, 100, 600, 2, 0.0f);
  sg_case(isa, true, true, 64, 1030, 513, 0, -2.0f);
  sg_case(isa, false, false, 300, 49, 1100, 0, 1.0f);
}
END_TEST

START_TEST(test_k_zero) {
  const char *isa = isas[_i];
  if (!sg_case(isa, false, false, 1, 1, 1, 0, 0.0f)) return;
  sg_case(isa, false, false, 5, 7, 0, 1, 0.0f);
  sg_case(isa, true, true, 5, 7, 0, 1, 1.0f);
  sg_case(isa, false, true, 5, 7, 0, 0, 3.0f);
  /* empty M or N: nothing touched, still success */
  float c = 42.0f;
  ck_assert(ksgemm_f32_isa(isa, false, false, 0, 1, 3, &c, 3, &c, 1, 0.0f, &c, 1));
  ck_assert(ksgemm_f32_isa(isa, false, false, 1, 0, 3, &c, 3, &c, 1, 0.0f, &c, 1));
  ck_assert(c == 42.0f);
}
END_TEST

/* Bias / residual / ReLU applied in the store: every flag mix with beta 0,
 * 1 and 0.5, edge tiles in both directions, several K slices, K = 0, and
 * the GEMV shapes (M = 1, N = 1) in all transpose forms. */
START_TEST(test_epilogue) {
  const char *isa = isas[_i];
  if (!sg_case(isa, false, false, 1, 1, 1, 0, 0.0f)) return;
  static const float betas[] = {0.0f, 1.0f, 0.5f};
  for (int ep = 1; ep < 8; ep++)
    for (int b = 0; b < 3; b++) {
      int t = (ep + b) & 3;
      sg_case_epi(isa, t & 1, t & 2, 29, 49, 40, 1, betas[b], ep);
      sg_case_epi(isa, false, false, 13, 17, 300, 0, betas[b], ep);
      sg_case_epi(isa, true, false, 24, 64, 7, 2, betas[b], ep);
      sg_case_epi(isa, false, true, 5, 7, 0, 1, betas[b], ep);
    }
  for (int t = 0; t < 4; t++) {
    sg_case_epi(isa, t & 1, t & 2, 1, 77, 300, t, 0.0f, 0);
    sg_case_epi(isa, t & 1, t & 2, 1, 33, 17, 1, 1.0f, EP_BIAS | EP_RELU);
    sg_case_epi(isa, t & 1, t & 2, 81, 1, 35, 2, 0.0f, EP_RES);
    sg_case_epi(isa, t & 1, t & 2, 70, 1, 16, 0, 0.5f, 0);
    sg_case_epi(isa, t & 1, t & 2, 1, 1, 1, 1, 0.0f, 0);
  }
}
END_TEST

/* kgemm_f32_serial_epi (the conv engine's call) on both engines' path. */
START_TEST(test_kgemm_epi) {
  kgemm_init();
  sg_case_epi(NULL, false, false, 40, 100, 70, 1, 0.0f, EP_BIAS | EP_RES | EP_RELU);
  sg_case_epi(NULL, false, false, 12, 49, 300, 0, 1.0f, EP_BIAS | EP_RELU);
  sg_case_epi(NULL, false, true, 1, 50, 20, 0, 0.0f, EP_RES);
  sg_case_epi(NULL, false, false, 3, 5, 0, 0, 0.0f, EP_BIAS);
}
END_TEST

/* kgemm_f32_serial_over (relayc's sgemm for short K even where OpenBLAS is the
 * engine): C's NaNs must not leak, padding columns stay untouched. */
START_TEST(test_kgemm_over_short_k) {
  kgemm_init();
  static const int64_t ks[] = {0, 1, 7, 49, 64, 65, 300};
  for (int t = 0; t < 4; t++)
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
      bool ta = t & 1, tb = t & 2;
      int64_t M = 37, N = 50, K = ks[i], pad = 3;
      int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
      float *A = mem_malloc((size_t)((ta ? K : M) * lda + 1) * sizeof(float));
      float *B = mem_malloc((size_t)((tb ? N : K) * ldb + 1) * sizeof(float));
      float *C = mem_malloc((size_t)(M * ldc) * sizeof(float));
      for (int64_t q = 0; q < (ta ? K : M) * lda; q++) A[q] = sg_rand();
      for (int64_t q = 0; q < (tb ? N : K) * ldb; q++) B[q] = sg_rand();
      for (int64_t q = 0; q < M * ldc; q++) C[q] = NAN;
      kgemm_f32_serial_over(ta, tb, M, N, K, A, lda, B, ldb, C, ldc);
      for (int64_t r = 0; r < M; r++)
        for (int64_t j = 0; j < ldc; j++) {
          float got = C[r * ldc + j];
          if (j >= N) {
            ck_assert_msg(isnan(got), "padding written at %ld,%ld", (long)r, (long)j);
            continue;
          }
          double want = 0, mag = 0;
          for (int64_t k = 0; k < K; k++) {
            double p = (double)(ta ? A[k * lda + r] : A[r * lda + k]) * (double)(tb ? B[j * ldb + k] : B[k * ldb + j]);
            want += p;
            mag += fabs(p);
          }
          ck_assert_msg(fabs((double)got - want) <= 1e-5 * mag + 1e-6, "ta=%d tb=%d K=%ld at %ld,%ld: got %g want %g",
                        ta, tb, (long)K, (long)r, (long)j, got, want);
        }
      mem_free(A);
      mem_free(B);
      mem_free(C);
    }
}
END_TEST

START_TEST(test_unknown_isa) {
  float a = 1, b = 2, c = 3;
  ck_assert(!ksgemm_f32_isa("sse9", false, false, 1, 1, 1, &a, 1, &b, 1, 0.0f, &c, 1));
  ck_assert(c == 3.0f);
  if (ksgemm_available()) {
    ck_assert(ksgemm_isa() != NULL);
    ck_assert(ksgemm_f32(false, false, 1, 1, 1, &a, 1, &b, 1, 1.0f, &c, 1));
    ck_assert(c == 5.0f);
  }
}
END_TEST

/* The hooked kgemm_f32 path (whatever engine it picks) on a threaded shape. */
START_TEST(test_kgemm_path) {
  kgemm_init();
  int64_t M = 100, N = 300, K = 77;
  float *A = mem_malloc((size_t)(M * K) * sizeof(float)), *B = mem_malloc((size_t)(K * N) * 4);
  float *C = mem_malloc((size_t)(M * N) * sizeof(float));
  for (int64_t i = 0; i < M * K; i++) A[i] = sg_rand();
  for (int64_t i = 0; i < K * N; i++) B[i] = sg_rand();
  kgemm_f32(false, true, M, N, K, A, K, B, K, 0.0f, C, N);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) s += (double)A[i * K + k] * B[j * K + k];
      ck_assert_double_eq_tol(C[i * N + j], s, 1e-4);
    }
  mem_free(A);
  mem_free(B);
  mem_free(C);
}
END_TEST

/* kgemm_f32_add_scaled (relayc.matmul_add_scaled) is bit for bit kgemm_f32
 * with beta = 0 followed by relayc.add_scaled's rounding (t = s·c, r + t), on
 * each of kg_run's paths: serial (small), short-K row panels (the MLP's dW1),
 * column panels, K pieces (K = 784). */
START_TEST(test_kgemm_add_scaled) {
  kgemm_init();
  static const int64_t shapes[][4] = {{5, 7, 3, 0}, {128, 784, 64, 1}, {100, 300, 77, 0}, {64, 128, 784, 0}};
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
    int64_t M = shapes[c][0], N = shapes[c][1], K = shapes[c][2];
    bool ta = shapes[c][3] != 0;
    float *A = mem_malloc((size_t)(M * K) * 4), *B = mem_malloc((size_t)(K * N) * 4);
    float *R = mem_malloc((size_t)(M * N) * 4), *C = mem_malloc((size_t)(M * N) * 4),
          *D = mem_malloc((size_t)(M * N) * 4);
    for (int64_t i = 0; i < M * K; i++) A[i] = sg_rand();
    for (int64_t i = 0; i < K * N; i++) B[i] = sg_rand();
    for (int64_t i = 0; i < M * N; i++) R[i] = sg_rand();
    float s = -0.1f;
    kgemm_f32(ta, false, M, N, K, A, ta ? M : K, B, N, 0.0f, D, N);
    for (int64_t i = 0; i < M * N; i++) {
      float t = s * D[i];
      D[i] = R[i] + t;
    }
    kgemm_f32_add_scaled(ta, false, M, N, K, A, ta ? M : K, B, N, s, R, N, C, N);
    ck_assert_msg(memcmp(C, D, (size_t)(M * N) * 4) == 0, "%lldx%lldx%lld differs", (long long)M,
                  (long long)N, (long long)K);
    mem_free(A);
    mem_free(B);
    mem_free(R);
    mem_free(C);
    mem_free(D);
  }
}
END_TEST

static Suite *sgemm_suite(void) {
  Suite *s = suite_create("sgemm");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_edges_each_axis, 0, 2);
  tcase_add_loop_test(tc, test_grid, 0, 2);
  tcase_add_loop_test(tc, test_big, 0, 2);
  tcase_add_loop_test(tc, test_k_zero, 0, 2);
  tcase_add_loop_test(tc, test_epilogue, 0, 2);
  tcase_add_test(tc, test_kgemm_epi);
  tcase_add_test(tc, test_kgemm_over_short_k);
  tcase_add_test(tc, test_unknown_isa);
  tcase_add_test(tc, test_kgemm_path);
  tcase_add_test(tc, test_kgemm_add_scaled);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return unit_run(sgemm_suite());
}
