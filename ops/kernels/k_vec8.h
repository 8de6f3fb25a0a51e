/* ops/kernels/k_vec8.h — 8-float vectors for KHOT kernels that must run well on AVX2.
 *
 * kv16 (ops/kernels/k_simd.h) is one zmm register on AVX-512 but has no
 * register mode on AVX2: GCC 12 then keeps every kv16 variable in memory and
 * moves it through the stack piece by piece (measured: the depthwise sweep ran
 * at ~1 multiply-add per cycle on an AVX2 EPYC). kv8 is one ymm register on
 * both AVX2 and AVX-512, so a KHOT function written with it compiles to clean
 * register code in the x86-64-v3 and v4 clones (the baseline clone splits it
 * into xmm halves). Use it for register-blocked loops (accumulators live
 * across an inner loop); streaming loops that only load, compute and store
 * are fine with either.
 */
#ifndef RELAYC_OPS_K_VEC8_H
#define RELAYC_OPS_K_VEC8_H

#include <stdint.h>

typedef float kv8 __attribute__((vector_size(32)));
typedef float kv8u __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t kvi8 __attribute__((vector_size(32)));

#define kv8_load(p) (*(const kv8u *)(p))
#define kv8_store(p, v) (*(kv8u *)(p) = (v))
#define kv8_splat(x) ((kv8){0} + (float)(x))
/* Per lane: a > b ? a : b (kv_select_gt's rule: a NaN `a` never wins). */
#define kv8_select_gt(a, b) ((kv8)((((kvi8)(a)) & ((a) > (b))) | (((kvi8)(b)) & ~((a) > (b)))))
/* Sum of the 8 lanes. */
#define kv8_sum(v) ((v)[0] + (v)[1] + (v)[2] + (v)[3] + (v)[4] + (v)[5] + (v)[6] + (v)[7])

#endif
