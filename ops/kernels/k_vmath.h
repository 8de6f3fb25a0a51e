/* ops/kernels/k_vmath.h — vectorised float32 math: exp, expm1-based tanh, erf, log,
 * sigmoid, on 16 lanes at a time (kv16 of ops/kernels/k_simd.h), for the elementwise
 * kernels (ops/kernels/k_elemwise_fast.c) and any other kernel that wants them
 * inside its own KHOT loop (softmax, fused activations).
 *
 * ACCURACY (measured by tests/unit/check_k_elemfast.c against glibc over
 * millions of inputs incl. edges, NaN, ±inf, denormals): every function is
 * within 1e-6 relative of the C f-suffixed libm function (a few ulp), and
 * gets the special values right: NaN → NaN, exp(±inf) = inf/0 with correct
 * overflow at 88.72 and gradual underflow into denormals, tanh/erf(±inf) =
 * ±1, log(0) = −inf, log(x<0) = NaN, log(denormal) exact in the exponent.
 *
 * HOW: classic range reduction and short polynomials. exp: x = n·ln2 + r,
 * |r| ≤ ln2/2 (Cody–Waite two-part ln2), e^r by its Taylor series to degree
 * 7 (truncation < 6e-9), 2^n applied as two exact power-of-two factors so
 * results in the denormal range are rounded once. tanh(x) = E/(E+2) with
 * E = expm1(2|x|) = 2^n·expm1(r) + (2^n − 1) (accurate near 0, no
 * cancellation). erf: |x| < 1 → x·P(x²) (degree 6); 1 ≤ |x| ≤ 4 → 1 −
 * e^(−x²)·Q((|x| − 2.5)/1.5) (degree 11); both fitted by
 * bench/kernels/fit_erf.py (Chebyshev, mpmath). log: x = 2^e·m with
 * m ∈ [√½, √2), log(m) = 2·atanh(f/(2+f)), f = m − 1 exact.
 *
 * USE: the kvm_*16 functions work in place on one kv16 through a pointer
 * (passing 64-byte vectors by value changes the ABI between the target
 * clones) and are always inlined, so call them from a KHOT function only.
 * The kvm_*_f32 array functions map n floats; y may equal x (in place) but
 * must not otherwise overlap it.
 */
#ifndef RELAYC_OPS_K_VMATH_H
#define RELAYC_OPS_K_VMATH_H

#include <stdint.h>

#include "ops/kernels/k_fastmath.h"
#include "ops/kernels/k_simd.h"

typedef int32_t kvi16 __attribute__((vector_size(64)));

#define KVM_INL static inline __attribute__((always_inline))
/* lane-wise m ? a : b for a mask m of comparisons (−1 / 0 lanes) */
#define KVM_SEL(m, a, b) ((kv16)(((m) & (kvi16)(a)) | (~(m) & (kvi16)(b))))
#define KVM_ISPLAT(x) ((kvi16){0} + (int32_t)(x))

/* 2^n for integer lanes n in [−126, 127]. */
#define KVM_POW2I(n) ((kv16)(((n) + 127) << 23))

/* round-to-nearest of lanes |v| < 2^22, as floats (the 1.5·2^23 trick) */
#define KVM_RINT(v) (((v) + kv_splat(12582912.0f)) - kv_splat(12582912.0f))

#define KVM_LOG2E 1.44269504088896341f
#define KVM_LN2_HI 0.693145751953125f     /* 15 significant bits: n·hi is exact */
#define KVM_LN2_LO 1.42860682030941723e-6f /* ln2 − hi */

/* x = n·ln2 + r, |r| <= ln2/2 with n integral: the range reduction of exp
 * and of tanh's expm1. */
KVM_INL void kvm_ln2_reduce(const kv16 *x, kv16 *n, kv16 *r) {
  *n = KVM_RINT(*x * kv_splat(KVM_LOG2E));
  *r = *x - *n * kv_splat(KVM_LN2_HI);
  *r = *r - *n * kv_splat(KVM_LN2_LO);
}

/* The Taylor series of e^r by Horner's rule, *p holding the r⁷ coefficient
 * (or the series above it): *p becomes ((*p·r + 1/720)·r + ...)·r + 1/2. */
KVM_INL void kvm_exp_taylor_to_half(kv16 *p, const kv16 *r) {
  *p = *p * *r + kv_splat(1.0f / 720);
  *p = *p * *r + kv_splat(1.0f / 120);
  *p = *p * *r + kv_splat(1.0f / 24);
  *p = *p * *r + kv_splat(1.0f / 6);
  *p = *p * *r + kv_splat(0.5f);
}

/* e^x on finite, NaN-free lanes already clamped to [−104, 89]. */
KVM_INL void kvm_exp16_core(kv16 *v) {
  kv16 n, r;
  kvm_ln2_reduce(v, &n, &r);
  kv16 p = kv_splat(1.0f / 5040);
  kvm_exp_taylor_to_half(&p, &r);
  p = p * r + kv_splat(1.0f);
  p = p * r + kv_splat(1.0f);
  kvi16 ni = __builtin_convertvector(n, kvi16);
  kvi16 n1 = ni >> 1, n2 = ni - n1; /* both in [−75, 64]: normal scales */
  *v = (p * KVM_POW2I(n1)) * KVM_POW2I(n2);
}

/* e^x, every lane. */
KVM_INL void kvm_exp16(kv16 *v) {
  kv16 x = *v;
  kvi16 nan = x != x;
  kv16 y = KVM_SEL(nan, kv_splat(0), x); /* clamp; NaN lanes restored below */
  y = KVM_SEL(y > kv_splat(89.0f), kv_splat(89.0f), y);
  y = KVM_SEL(y < kv_splat(-104.0f), kv_splat(-104.0f), y);
  kvm_exp16_core(&y);
  *v = KVM_SEL(nan, x, y);
}

/* 1 / (1 + e^−x), the spec's formula with our exp. */
KVM_INL void kvm_sigmoid16(kv16 *v) {
  kv16 e = -*v;
  kvm_exp16(&e);
  *v = kv_splat(1.0f) / (kv_splat(1.0f) + e);
}

/* The argument of an odd function f(x) = sign(x)·f(|x|): x's sign bit in
 * *sign, NaN lanes in *nan, and in *a |x| clamped to hi with NaN lanes 0
 * (the caller puts x back there). */
KVM_INL void kvm_odd_arg(const kv16 *x, float hi, kv16 *a, kvi16 *nan, kvi16 *sign) {
  *nan = *x != *x;
  *sign = (kvi16)*x & KVM_ISPLAT(INT32_MIN);
  kv16 m = (kv16)((kvi16)*x & KVM_ISPLAT(INT32_MAX));
  m = KVM_SEL(*nan, kv_splat(0), m);
  *a = KVM_SEL(m > kv_splat(hi), kv_splat(hi), m);
}

/* tanh x = sign(x) · E / (E + 2), E = expm1(2|x|); |x| ≥ 10 gives ±1. */
KVM_INL void kvm_tanh16(kv16 *v) {
  kv16 x = *v;
  kvi16 nan, sign;
  kv16 a;
  kvm_odd_arg(&x, 10.0f, &a, &nan, &sign);
  kv16 y = a + a, n, r;
  kvm_ln2_reduce(&y, &n, &r); /* n in 0..29 */
  kv16 p = kv_splat(1.0f / 40320) * r + kv_splat(1.0f / 5040);
  kvm_exp_taylor_to_half(&p, &r);
  p = (p * r) * r + r; /* expm1(r) */
  kv16 s = KVM_POW2I(__builtin_convertvector(n, kvi16));
  kv16 e = s * p + (s - kv_splat(1.0f)); /* expm1(y) */
  kv16 t = e / (e + kv_splat(2.0f));
  t = (kv16)((kvi16)t | sign);
  *v = KVM_SEL(nan, x, t);
}

/* erf x: x·P(x²) below 1, 1 − e^(−x²)·Q(s) above (clamped at 4: erf = 1). */
KVM_INL void kvm_erf16(kv16 *v) {
  kv16 x = *v;
  kvi16 nan, sign;
  kv16 a;
  kvm_odd_arg(&x, 4.0f, &a, &nan, &sign);
  kv16 t = a * a;
  kv16 p = kv_splat(7.87587506269e-5f);
  p = p * t + kv_splat(-0.000801686428717f);
  p = p * t + kv_splat(0.00518908742343f);
  p = p * t + kv_splat(-0.0268542120106f);
  p = p * t + kv_splat(0.112835947152f);
  p = p * t + kv_splat(-0.376126266667f);
  p = p * t + kv_splat(1.12837916585f);
  kv16 small = a * p;
  kv16 s = a * kv_splat(2.0f / 3) - kv_splat(5.0f / 3);
  kv16 q = kv_splat(-3.5664178769e-5f);
  q = q * s + kv_splat(9.62912019546e-5f);
  q = q * s + kv_splat(-0.000147416142935f);
  q = q * s + kv_splat(0.000368151097857f);
  q = q * s + kv_splat(-0.00101366259813f);
  q = q * s + kv_splat(0.00242563893796f);
  q = q * s + kv_splat(-0.00556883764557f);
  q = q * s + kv_splat(0.0124841231485f);
  q = q * s + kv_splat(-0.0270054582128f);
  q = q * s + kv_splat(0.056110947557f);
  q = q * s + kv_splat(-0.111521017937f);
  q = q * s + kv_splat(0.210806357743f);
  kv16 e = -t;
  kvm_exp16_core(&e);
  kv16 big = kv_splat(1.0f) - e * q;
  kv16 y = KVM_SEL(a < kv_splat(1.0f), small, big);
  y = (kv16)((kvi16)y | sign);
  *v = KVM_SEL(nan, x, y);
}

/* Splits positive finite-or-not lanes x = 2^e·(1 + f), 1 + f ∈ [√½, √2);
 * denormals are scaled first. Lanes ≤ 0, inf, NaN give garbage (callers
 * patch them). */
KVM_INL void kvm_log_split(const kv16 *px, kv16 *f, kv16 *e) {
  kv16 x = *px;
  kvi16 tiny = x < kv_splat(1.17549435e-38f);
  kv16 xs = KVM_SEL(tiny, x * kv_splat(8388608.0f), x);
  kvi16 b = (kvi16)xs;
  kvi16 ei = ((b >> 23) & KVM_ISPLAT(0xff)) - KVM_ISPLAT(127) + (tiny & KVM_ISPLAT(-23));
  kv16 m = (kv16)((b & KVM_ISPLAT(0x007fffff)) | KVM_ISPLAT(0x3f800000));
  kvi16 hi = m > kv_splat(1.41421356f);
  m = KVM_SEL(hi, m * kv_splat(0.5f), m);
  ei = ei - hi; /* hi lanes are −1 */
  *f = m - kv_splat(1.0f);
  *e = __builtin_convertvector(ei, kv16);
}

/* log(1 + f) for f ∈ [√½ − 1, √2 − 1]: 2s + 2s³/3 + ... with s = f/(2 + f). */
KVM_INL void kvm_log1p_red(kv16 *pf) {
  kv16 f = *pf;
  kv16 s = f / (kv_splat(2.0f) + f);
  kv16 z = s * s;
  kv16 w = kv_splat(2.0f / 9);
  w = w * z + kv_splat(2.0f / 7);
  w = w * z + kv_splat(2.0f / 5);
  w = w * z + kv_splat(2.0f / 3);
  w = w * z;
  *pf = (s + s) + s * w;
}

/* The special lanes of every log: x < 0 or NaN → NaN, 0 → −inf, +inf → +inf. */
KVM_INL void kvm_log_fix(const kv16 *px, kv16 *py) {
  kv16 x = *px, y = *py;
  y = KVM_SEL(x == kv_splat(__builtin_inff()), x, y);
  y = KVM_SEL(x == kv_splat(0.0f), kv_splat(-__builtin_inff()), y);
  y = KVM_SEL(x < kv_splat(0.0f), kv_splat(__builtin_nanf("")), y);
  *py = KVM_SEL(x != x, x, y);
}

KVM_INL void kvm_log16(kv16 *v) {
  kv16 x = *v, f, e;
  kvm_log_split(&x, &f, &e);
  kvm_log1p_red(&f);
  kv16 y = e * kv_splat(KVM_LN2_HI) + (f + e * kv_splat(KVM_LN2_LO));
  kvm_log_fix(&x, &y);
  *v = y;
}

/* log2: e + log(1+f)·log2(e) — exact on powers of two. */
KVM_INL void kvm_log2_16(kv16 *v) {
  kv16 x = *v, f, e;
  kvm_log_split(&x, &f, &e);
  kvm_log1p_red(&f);
  kv16 y = e + f * kv_splat(KVM_LOG2E);
  kvm_log_fix(&x, &y);
  *v = y;
}

KVM_INL void kvm_log10_16(kv16 *v) {
  kvm_log16(v);
  *v = *v * kv_splat(0.434294481903251828f);
}

/* ---- TVM's fast_exp / fast_tanh / fast_erf (spec/passes.md 11.3) ----------------
 * Bit-identical to the scalar definitions of ops/kernels/k_fastmath.h when the
 * caller is compiled without FP contraction (the kvm_fast_*_f32 array forms
 * are): the same operations in the same order, selects for TVM's min/max, and
 * floor as round-to-nearest corrected down (exact for |t| <= 128 here). */
KVM_INL void kvm_fast_exp16(kv16 *v) {
  kv16 x0 = *v, hi = kv_splat(KFM_EXP_HI), lo = kv_splat(KFM_EXP_LO);
  kv16 x = KVM_SEL(x0 < hi, x0, hi);
  x = KVM_SEL(x > lo, x, lo);
  kv16 t = x * kv_splat(KFM_LOG2E) + kv_splat(0.5f);
  kv16 n = KVM_RINT(t);
  n = KVM_SEL(n > t, n - kv_splat(1.0f), n);
  kv16 f = x - n * kv_splat(KFM_LN2);
  kv16 y = kv_splat(KFM_EXP_P0) * f + kv_splat(KFM_EXP_P1);
  y = y * f + kv_splat(KFM_EXP_P2);
  y = y * f + kv_splat(KFM_EXP_P3);
  y = y * f + kv_splat(KFM_EXP_P4);
  y = y * f + kv_splat(KFM_EXP_P5);
  y = y * f * f + f + kv_splat(1.0f);
  kv16 ef = (kv16)(__builtin_convertvector(n + kv_splat(127.0f), kvi16) << 23);
  kv16 r = ef * y;
  *v = KVM_SEL(r > x0, r, x0);
}

KVM_INL void kvm_fast_tanh16(kv16 *v) {
  kv16 in = *v, nine = kv_splat(9.0f), mnine = kv_splat(-9.0f);
  kv16 x = KVM_SEL(nine < in, nine, in);
  x = KVM_SEL(mnine > x, mnine, x);
  kv16 x2 = x * x;
  kv16 p = KFM_ODD_P13(KFM_EXACT, x, x2, KFM_TANH_), q = KFM_EVEN_Q6(KFM_EXACT, x2, KFM_TANH_);
  *v = p / q;
}

KVM_INL void kvm_fast_erf16(kv16 *v) {
  kv16 a = *v, four = kv_splat(4.0f), mfour = kv_splat(-4.0f);
  kv16 x = KVM_SEL(a < four, a, four);
  x = KVM_SEL(x > mfour, x, mfour);
  kv16 x2 = x * x;
  kv16 p = KFM_ODD_P13(KFM_EXACT, x, x2, KFM_ERF_), q = KFM_EVEN_Q8(KFM_EXACT, x2, KFM_ERF_);
  *v = p / q;
}

/* ---- array forms (ops/kernels/k_vmath.c): y[i] = f(x[i]), i < n ----------------- */
void kvm_exp_f32(const float *x, float *y, int64_t n);
void kvm_sigmoid_f32(const float *x, float *y, int64_t n);
void kvm_tanh_f32(const float *x, float *y, int64_t n);
void kvm_erf_f32(const float *x, float *y, int64_t n);
void kvm_log_f32(const float *x, float *y, int64_t n);
void kvm_log2_f32(const float *x, float *y, int64_t n);
void kvm_log10_f32(const float *x, float *y, int64_t n);
/* TVM's fast functions, bit-identical to ops/kernels/k_fastmath.h */
void kvm_fast_exp_f32(const float *x, float *y, int64_t n);
void kvm_fast_tanh_f32(const float *x, float *y, int64_t n);
void kvm_fast_erf_f32(const float *x, float *y, int64_t n);
/* Correctly rounded square roots, bit-identical to sqrtf / sqrt (the vsqrt
 * instruction of the widest vector ISA the CPU has: GCC vectorises sqrtf
 * only under a global -fno-math-errno). */
void kvm_sqrt_f32(const float *x, float *y, int64_t n);
void kvm_sqrt_f64(const double *x, double *y, int64_t n);
/* Test hook: 1 = SSE2, 2 = AVX, 3 = AVX-512 square roots (when the CPU has
 * them), 0 = the best the CPU has (the default). */
void kvm_sqrt_force_isa(int level);

#endif
