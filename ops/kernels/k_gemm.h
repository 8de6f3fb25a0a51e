/* ops/kernels/k_gemm.h — the BLAS layer shared by the dense and convolution kernels.
 *
 * kgemm_f32 / kgemm_f64 compute C = op(A)·op(B) + beta·C (row-major, op =
 * optional transpose) through relayc's own sgemm (ops/kernels/k_sgemm.h: the
 * default for float32 on AVX-512 CPUs) or OpenBLAS, spread over the kernel thread pool
 * (runtime/threadpool.h): the problem is cut into column (or row) panels,
 * each panel is one single-threaded cblas call on some pool thread.
 * OpenBLAS's own threads are switched off once (kgemm_init: one BLAS
 * thread, its idle workers shut down), so the two pools never
 * oversubscribe the cores.
 *
 * kgemm_init also works around OpenBLAS builds (0.3.21, Debian 12) that do
 * not recognise recent AVX-512 CPUs (AMD Zen 4/5) and fall back to their
 * AVX2 "Haswell" kernels at half speed: when the CPU and the OS support
 * AVX-512 (F, DQ, BW, VL), OpenBLAS picked a non-AVX-512 core, and the user
 * did not choose one with OPENBLAS_CORETYPE, it re-runs OpenBLAS's own core
 * selection with OPENBLAS_CORETYPE=SkylakeX (which checks AVX-512 support
 * itself). RELAYC_BLAS_CORE=keep disables this; RELAYC_BLAS_CORE=auto does
 * it even when OPENBLAS_CORETYPE is set (this machine's environment sets
 * OPENBLAS_CORETYPE=Haswell); RELAYC_BLAS_CORE=<core> (e.g. SkylakeX) asks
 * OpenBLAS for that core. All of it happens once, on the submitting thread, before the first
 * BLAS call.
 *
 * The *_serial variants make exactly one single-threaded cblas call (or one
 * call of relayc's sgemm); they are safe inside threadpool chunk bodies
 * (kgemm_init must have run).
 */
#ifndef RELAYC_OPS_K_GEMM_H
#define RELAYC_OPS_K_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/kernels/k_sgemm.h"

void kgemm_init(void);
/* OpenBLAS's core name after kgemm_init ("SkylakeX", "Haswell", ...). */
const char *kgemm_core_name(void);
/* The float32 GEMM engine kgemm_init chose: "avx512"/"avx2" (ops/kernels/k_sgemm.c)
 * or "openblas". */
const char *kgemm_sgemm_engine(void);

/* C[M×N] = op(A)[M×K] · op(B)[K×N] + beta·C. lda/ldb/ldc are row strides
 * of A, B, C as stored. Threaded over the pool (call from the submitting
 * thread). Dimensions beyond INT32_MAX fall back to a plain loop. Products
 * of at least 2^18 multiply-adds are cut by shape (column/row panels, or two
 * K pieces when K >= 512 dwarfs M and N); with beta = 0 their float32
 * panels use relayc's sgemm where kgemm_f32_own_over says so. */
void kgemm_f32(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
               const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
void kgemm_f64(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
               const double *B, int64_t ldb, double beta, double *C, int64_t ldc);
/* C[M×N] = R + s·(op(A)·op(B)) (relayc.matmul_add_scaled, an SGD update fused
 * with the gradient's product): the product as kgemm_f32 with beta = 0
 * computes it, then each element as relayc.add_scaled rounds it (t = s·c,
 * then r + t), each panel right after its product on the thread that made
 * it — bit for bit nn.matmul followed by relayc.add_scaled, without the
 * product's buffer and its second pass. R (row stride ldr) must not alias C. */
void kgemm_f32_add_scaled(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float s, const float *R,
                          int64_t ldr, float *C, int64_t ldc);

void kgemm_f32_serial(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
                      int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
/* kgemm_f32_serial followed by the epilogue of ops/kernels/k_sgemm.h (per-row bias,
 * residual, ReLU): fused into the micro-kernel's store with our sgemm (also
 * where OpenBLAS is the engine when beta = 0 and kgemm_f32_own_over holds),
 * a second pass over C with OpenBLAS. epi may be NULL. */
void kgemm_f32_serial_epi(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                          int64_t ldc, const KsgemmEpi *epi);
/* Whether an overwriting float32 product with N columns and reduction K runs
 * on relayc's sgemm even where OpenBLAS is the engine: K <= 64, or K <= 256
 * with N >= 64 (OpenBLAS's separate zeroing of C costs as much as a short
 * product; measured in k_gemm.c). */
bool kgemm_f32_own_over(int64_t N, int64_t K);
/* kgemm_f32_serial with beta = 0 for the convolution gradients' products, whose
 * reduction is often short: relayc's sgemm where kgemm_f32_own_over holds.
 * Other callers keep kgemm_f32_serial's engine, bit for bit. */
void kgemm_f32_serial_over(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
                           int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc);
void kgemm_f64_serial(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double *A,
                      int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                      int64_t ldc);

/* Per-thread scratch kept between kernel calls (no malloc/free — and no
 * fresh page faults — per call): kscratch(slot, bytes) returns an array of
 * threadpool_size() buffers of at least `bytes` each, 64-byte aligned,
 * contents undefined; index it with threadpool_thread_index(). Buffers of
 * one slot are reused by the next call that asks for the same slot, so a
 * kernel uses distinct slots for buffers it needs at the same time
 * (KSCRATCH_SLOTS of them). Call only from the submitting thread, outside
 * chunk bodies. NULL when an allocation fails. */
enum { KSCRATCH_SLOTS = 4 };
void **kscratch(int slot, size_t bytes);
/* Frees every scratch buffer (tests, exit). */
void kscratch_free(void);

#endif
