/* ops/kernels/k_sgemm.h — relayc's own packed single-precision GEMM (BLIS style).
 *
 * ksgemm_f32 computes C[M×N] = op(A)[M×K] · op(B)[K×N] + beta·C for
 * row-major operands (op = optional transpose; lda/ldb/ldc are the row
 * strides as stored), single-threaded: callers split the work themselves
 * (ops/kernels/k_gemm.c). Panels of A and B are packed into aligned buffers and
 * multiplied by a register-blocked micro-kernel chosen once from the CPU:
 * AVX-512F (12×32 tile, 12×16 for a narrow last column panel; when A is
 * not transposed its rows are read in place instead of packed) or AVX2+FMA
 * (6×16 tile). ksgemm_f32_epi also applies a per-row bias, an added
 * residual and ReLU while the tile is stored (no extra pass over C).
 *
 * Thread-safe (no shared mutable state besides the one-time CPU probe,
 * which ksgemm_available performs; call it once from the submitting thread
 * before using ksgemm_f32 in pool chunk bodies).
 */
#ifndef RELAYC_OPS_K_SGEMM_H
#define RELAYC_OPS_K_SGEMM_H

#include <stdbool.h>
#include <stdint.h>

/* Which micro-kernel the CPU gets: "avx512", "avx2" or NULL (none: the
 * caller must use another GEMM). */
const char *ksgemm_isa(void);
bool ksgemm_available(void);

/* Returns false (C untouched) when no micro-kernel is available or the
 * packing buffers cannot be allocated; true once C holds the result.
 * M, N, K >= 0; K == 0 gives C = beta·C (beta 0 writes zeros). */
bool ksgemm_f32(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

/* The epilogue of ksgemm_f32_epi: C = relu?(op(A)·op(B) + beta·C + bias[i]
 * + res[i·ldr + j]); NULL fields (relu false) are skipped. */
typedef struct KsgemmEpi {
  const float *bias; /* M values (one per row of C), or NULL */
  const float *res;  /* M×N, row stride ldr, or NULL (may not alias C) */
  int64_t ldr;
  bool relu;
} KsgemmEpi;

bool ksgemm_f32_epi(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                    const float *B, int64_t ldb, float beta, float *C, int64_t ldc,
                    const KsgemmEpi *epi);

/* Same with a forced micro-kernel ("avx512", "avx2"), for tests and
 * benchmarks; false when the CPU lacks it. */
bool ksgemm_f32_isa(const char *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                    int64_t ldc);
bool ksgemm_f32_isa_epi(const char *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                        const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                        float *C, int64_t ldc, const KsgemmEpi *epi);

#endif
