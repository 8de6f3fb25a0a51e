/* ops/k_sgemm.h — relayc's own packed single-precision GEMM (BLIS style).
 *
 * ksgemm_f32 computes C[M×N] = op(A)[M×K] · op(B)[K×N] + beta·C for
 * row-major operands (op = optional transpose; lda/ldb/ldc are the row
 * strides as stored), single-threaded: callers split the work themselves
 * (ops/k_gemm.c). Panels of A and B are packed into aligned buffers and
 * multiplied by a register-blocked micro-kernel chosen once from the CPU:
 * AVX-512F (12×32 tile) or AVX2+FMA (6×16 tile).
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

/* Same with a forced micro-kernel ("avx512", "avx2"), for tests and
 * benchmarks; false when the CPU lacks it. */
bool ksgemm_f32_isa(const char *isa, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                    int64_t ldc);

#endif
