/* ops/kernels/k_fastmath.h — TVM's fast_exp, fast_tanh and fast_erf, one element at a time
 * (spec/passes.md 11.3): the definition the vector forms (ops/kernels/k_vmath.h,
 * kvm_fast_*16) must reproduce bit for bit, the scalar path of the interpreter
 * and the reference of the tests.
 *
 * Each is TVM's expression evaluated literally in float32: every product and
 * sum rounded once (no fused multiply-add), TVM's min/max as the selects
 * a < b ? a : b and a > b ? a : b with TVM's operand order. Consequences kept
 * on purpose: fast_exp(NaN) and fast_tanh(NaN) are NaN, but fast_erf(NaN) is
 * the value at the clamp bound 4 (min(NaN, 4) selects 4); fast_exp underflows
 * to 0 below about −88.03 (2^n with n = −127 is built as zero exponent bits)
 * and is +inf from about 88.38 up. fast_erf on float16 evaluates the same
 * expression in float16 arithmetic (constants and every intermediate rounded
 * to half precision), as TVM's fast_erf_float16 does; the other dtypes use
 * the exact functions (not here).
 */
#ifndef RELAYC_OPS_K_FASTMATH_H
#define RELAYC_OPS_K_FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"

/* TVM's Min / Max on floats (LLVM codegen: select of an ordered compare). */
static inline float kfm_min(float a, float b) { return a < b ? a : b; }
static inline float kfm_max(float a, float b) { return a > b ? a : b; }

#define KFM_EXP_HI 88.3762626647950f
#define KFM_EXP_LO -88.3762626647949f
#define KFM_LOG2E 1.44269504088896341f
#define KFM_LN2 0.6931471805599453f
#define KFM_EXP_P0 1.9875691500E-4f
#define KFM_EXP_P1 1.3981999507E-3f
#define KFM_EXP_P2 8.3334519073E-3f
#define KFM_EXP_P3 4.1665795894E-2f
#define KFM_EXP_P4 1.6666665459E-1f
#define KFM_EXP_P5 5.0000001201E-1f

static inline float kfm_fast_exp(float x0) {
  float x = kfm_max(kfm_min(x0, KFM_EXP_HI), KFM_EXP_LO);
  float n = floorf(x * KFM_LOG2E + 0.5f);
  float f = x - n * KFM_LN2;
  float y = (((((KFM_EXP_P0 * f + KFM_EXP_P1) * f + KFM_EXP_P2) * f + KFM_EXP_P3) * f + KFM_EXP_P4) * f +
             KFM_EXP_P5) * f * f + f + 1.0f;
  uint32_t bits = (uint32_t)(int32_t)(n + 127.0f) << 23; /* n + 127 in [0, 255] */
  float ef;
  memcpy(&ef, &bits, sizeof ef);
  return kfm_max(ef * y, x0);
}

/* Eigen's rational tanh: numerator odd (α1..α13), denominator even (β0..β6). */
#define KFM_TANH_A1 4.89352455891786e-03f
/* fast_tanh and fast_erf are x·P(x²) / Q(x²): P odd from A1 to A13, Q even
 * from B0 (to B6 for tanh, B8 for erf), by Horner's rule from the highest
 * coefficient. One text serves float32, float16 and the kv16 vectors of
 * ops/kernels/k_vmath.h (a float constant there stands for every lane): R
 * rounds every product, sum and coefficient (KFM_EXACT for float32 and
 * vectors, kfm_h for float16), so the operations and their order are the
 * same in every form. */
#define KFM_EXACT(v) (v)
#define KFM_MA(R, t, acc, c) R(R((t) * (acc)) + R(c))
#define KFM_ODD_P13(R, x, t, K)                                                                    \
  R((x) * KFM_MA(R, t, KFM_MA(R, t, KFM_MA(R, t, KFM_MA(R, t, KFM_MA(R, t, KFM_MA(R, t, R(K##A13), K##A11), \
                                                                          K##A9),                  \
                                                         K##A7),                                   \
                                          K##A5),                                                  \
                           K##A3),                                                                 \
                 K##A1))
#define KFM_EVEN_Q6(R, t, K) KFM_MA(R, t, KFM_MA(R, t, KFM_MA(R, t, R(K##B6), K##B4), K##B2), K##B0)
#define KFM_EVEN_Q8(R, t, K)                                                                       \
  KFM_MA(R, t, KFM_MA(R, t, KFM_MA(R, t, KFM_MA(R, t, R(K##B8), K##B6), K##B4), K##B2), K##B0)

#define KFM_TANH_A3 6.37261928875436e-04f
#define KFM_TANH_A5 1.48572235717979e-05f
#define KFM_TANH_A7 5.12229709037114e-08f
#define KFM_TANH_A9 -8.60467152213735e-11f
#define KFM_TANH_A11 2.00018790482477e-13f
#define KFM_TANH_A13 -2.76076847742355e-16f
#define KFM_TANH_B0 4.89352518554385e-03f
#define KFM_TANH_B2 2.26843463243900e-03f
#define KFM_TANH_B4 1.18534705686654e-04f
#define KFM_TANH_B6 1.19825839466702e-06f

static inline float kfm_fast_tanh(float in) {
  float x = kfm_max(-9.0f, kfm_min(9.0f, in));
  float x2 = x * x;
  return KFM_ODD_P13(KFM_EXACT, x, x2, KFM_TANH_) / KFM_EVEN_Q6(KFM_EXACT, x2, KFM_TANH_);
}

#define KFM_ERF_A1 -1.60960333262415e-02f
#define KFM_ERF_A3 -2.95459980854025e-03f
#define KFM_ERF_A5 -7.34990630326855e-04f
#define KFM_ERF_A7 -5.69250639462346e-05f
#define KFM_ERF_A9 -2.10102402082508e-06f
#define KFM_ERF_A11 2.77068142495902e-08f
#define KFM_ERF_A13 -2.72614225801306e-10f
#define KFM_ERF_B0 -1.42647390514189e-02f
#define KFM_ERF_B2 -7.37332916720468e-03f
#define KFM_ERF_B4 -1.68282697438203e-03f
#define KFM_ERF_B6 -2.13374055278905e-04f
#define KFM_ERF_B8 -1.45660718464996e-05f

static inline float kfm_fast_erf(float arg) {
  float x = kfm_max(kfm_min(arg, 4.0f), -4.0f);
  float x2 = x * x;
  return KFM_ODD_P13(KFM_EXACT, x, x2, KFM_ERF_) / KFM_EVEN_Q8(KFM_EXACT, x2, KFM_ERF_);
}

/* Rounds a float32 to float16 and back: one float16 operation's result (a
 * float32 +, −, ×, ÷ of two halves rounds once more without changing it). */
static inline float kfm_h(float v) { return half_to_float(float_to_half(v)); }

/* fast_erf in float16 arithmetic; arg holds a float16 value. */
static inline float kfm_fast_erf_f16(float arg) {
  float x = kfm_max(kfm_min(arg, 4.0f), -4.0f);
  float x2 = kfm_h(x * x);
  return kfm_h(KFM_ODD_P13(kfm_h, x, x2, KFM_ERF_) / KFM_EVEN_Q8(kfm_h, x2, KFM_ERF_));
}

#endif
