/* ops/kernels/k_simd.h — how the heavy kernels get vector code without -march.
 *
 * The build uses -O2 for baseline x86-64 (SSE2, no FMA). KHOT marks a small
 * hot loop function: GCC compiles it at -O3 once per listed ISA level
 * (x86-64-v4 = AVX-512, x86-64-v3 = AVX2 + FMA, baseline) and an ifunc picks
 * the best clone for the running CPU at load time — "build for the CPU it
 * runs on" without changing the build flags. Elsewhere KHOT is just -O3.
 * Keep KHOT functions free of calls into other modules (they are cloned).
 * KHOT also allows contracting a·b + c into FMA (-std=c17 turns that off
 * by default): kernels accept the (more accurate) fused rounding.
 *
 * kv16 is a 16-float GCC vector: one zmm on AVX-512, two ymm on AVX2, four
 * xmm on the baseline — the same source for every clone. kv_load/kv_store
 * are unaligned accesses.
 */
#ifndef RELAYC_OPS_K_SIMD_H
#define RELAYC_OPS_K_SIMD_H

#include <stdint.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(RELAYC_NO_CLONES)
#define KHOT                                                                                       \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"),                    \
                 optimize("O3", "fp-contract=fast")))
#elif defined(__GNUC__) && !defined(__clang__)
#define KHOT __attribute__((optimize("O3", "fp-contract=fast")))
#else
#define KHOT
#endif

/* Like KHOT, but without FP contraction: for loops that must round each
 * product and sum on their own (TVM's fast_* formulas, a fused operator that
 * must equal, bit for bit, the pair of operators it replaces). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(RELAYC_NO_CLONES)
#define KHOT_EXACT                                                                                 \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"),                    \
                 optimize("O3", "fp-contract=off")))
#elif defined(__GNUC__) && !defined(__clang__)
#define KHOT_EXACT __attribute__((optimize("O3", "fp-contract=off")))
#else
#define KHOT_EXACT
#endif

typedef float kv16 __attribute__((vector_size(64)));
typedef float kv16u __attribute__((vector_size(64), aligned(4), may_alias));

typedef int32_t kvi16 __attribute__((vector_size(64)));
/* Per lane: a > b ? a : b (the select rule: a NaN `a` never wins). */
#define kv_select_gt(a, b)                                                                         \
  ((kv16)((((kvi16)(a)) & ((a) > (b))) | (((kvi16)(b)) & ~((a) > (b)))))

#define kv_load(p) (*(const kv16u *)(p))
#define kv_store(p, v) (*(kv16u *)(p) = (v))
#define kv_splat(x) ((kv16){0} + (float)(x))

#endif
