/* ops/kernels/k_vmath.c — array forms of the vectorised float32 math of ops/kernels/k_vmath.h.
 *
 * Each kvm_*_f32 maps n floats 16 lanes at a time; the last partial group
 * goes through a zero-padded 16-float buffer, so every element (tail
 * included) is computed by the same vector code and the results do not
 * depend on n or on where a thread's chunk starts. The functions are KHOT
 * (cloned per ISA level, ops/kernels/k_simd.h) and call nothing outside this file;
 * TVM's fast_* functions are KHOT_EXACT instead (the same clones, no FMA
 * contraction), so they equal their scalar definitions bit for bit.
 *
 * The square roots are written with intrinsics per ISA level instead (the
 * vectoriser will not touch sqrtf while errno is on) and dispatched once
 * on the CPU's features; every level computes the same IEEE sqrt.
 */
#include "ops/kernels/k_vmath.h"

#include <math.h>
#include <stdatomic.h>
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#define KVM_MAP_ATTR(NAME, CORE, ATTR)                                                             \
  void NAME(const float *x, float *y, int64_t n);                                                  \
  ATTR void NAME(const float *x, float *y, int64_t n) {                                            \
    int64_t i = 0;                                                                                 \
    for (; i + 16 <= n; i += 16) {                                                                 \
      kv16 v = kv_load(x + i);                                                                     \
      CORE(&v);                                                                                    \
      kv_store(y + i, v);                                                                          \
    }                                                                                              \
    if (i < n) {                                                                                   \
      float buf[16];                                                                               \
      int64_t k = n - i;                                                                           \
      for (int64_t j = 0; j < 16; j++) buf[j] = j < k ? x[i + j] : 0.0f;                           \
      kv16 v = kv_load(buf);                                                                       \
      CORE(&v);                                                                                    \
      kv_store(buf, v);                                                                            \
      for (int64_t j = 0; j < k; j++) y[i + j] = buf[j];                                           \
    }                                                                                              \
  }
#define KVM_MAP(NAME, CORE) KVM_MAP_ATTR(NAME, CORE, KHOT)

KVM_MAP(kvm_exp_f32, kvm_exp16)
KVM_MAP(kvm_sigmoid_f32, kvm_sigmoid16)
KVM_MAP(kvm_tanh_f32, kvm_tanh16)
KVM_MAP(kvm_erf_f32, kvm_erf16)
KVM_MAP(kvm_log_f32, kvm_log16)
KVM_MAP(kvm_log2_f32, kvm_log2_16)
KVM_MAP(kvm_log10_f32, kvm_log10_16)
KVM_MAP_ATTR(kvm_fast_exp_f32, kvm_fast_exp16, KHOT_EXACT)
KVM_MAP_ATTR(kvm_fast_tanh_f32, kvm_fast_tanh16, KHOT_EXACT)
KVM_MAP_ATTR(kvm_fast_erf_f32, kvm_fast_erf16, KHOT_EXACT)

/* ------------------------------------------------------------ square roots */

#if defined(__GNUC__) && defined(__x86_64__)

#define KVM_SQRT_ISA(SUF, T, ATTR, LOAD, STORE, SQRT, W, SQRT1)                                    \
  ATTR static void kvm_sqrt_##SUF(const T *x, T *y, int64_t n) {                                   \
    int64_t i = 0;                                                                                 \
    for (; i + W <= n; i += W) STORE(y + i, SQRT(LOAD(x + i)));                                    \
    for (; i < n; i++) y[i] = SQRT1(x[i]);                                                         \
  }

/* one lane through the instruction (no errno, no libm call) */
static inline float kvm_sqrt1f(float v) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(v))); }
static inline double kvm_sqrt1d(double v) {
  __m128d x = _mm_set_sd(v);
  return _mm_cvtsd_f64(_mm_sqrt_sd(x, x));
}

KVM_SQRT_ISA(f32_sse2, float, , _mm_loadu_ps, _mm_storeu_ps, _mm_sqrt_ps, 4, kvm_sqrt1f)
KVM_SQRT_ISA(f64_sse2, double, , _mm_loadu_pd, _mm_storeu_pd, _mm_sqrt_pd, 2, kvm_sqrt1d)
KVM_SQRT_ISA(f32_avx, float, __attribute__((target("avx"))), _mm256_loadu_ps, _mm256_storeu_ps,
             _mm256_sqrt_ps, 8, kvm_sqrt1f)
KVM_SQRT_ISA(f64_avx, double, __attribute__((target("avx"))), _mm256_loadu_pd, _mm256_storeu_pd,
             _mm256_sqrt_pd, 4, kvm_sqrt1d)
KVM_SQRT_ISA(f32_avx512, float, __attribute__((target("avx512f"))), _mm512_loadu_ps,
             _mm512_storeu_ps, _mm512_sqrt_ps, 16, kvm_sqrt1f)
KVM_SQRT_ISA(f64_avx512, double, __attribute__((target("avx512f"))), _mm512_loadu_pd,
             _mm512_storeu_pd, _mm512_sqrt_pd, 8, kvm_sqrt1d)

/* 0: not chosen yet, 1: SSE2, 2: AVX, 3: AVX-512 (threads may race to
 * choose: they store the same value) */
static _Atomic int kvm_level;

void kvm_sqrt_force_isa(int level) {
  __builtin_cpu_init();
  int best = __builtin_cpu_supports("avx512f") ? 3 : __builtin_cpu_supports("avx") ? 2 : 1;
  atomic_store_explicit(&kvm_level, level >= 1 && level <= best ? level : 0, memory_order_relaxed);
}

static int kvm_sqrt_level(void) {
  _Atomic int *level = &kvm_level;
  int l = atomic_load_explicit(level, memory_order_relaxed);
  if (!l) {
    __builtin_cpu_init();
    l = __builtin_cpu_supports("avx512f") ? 3 : __builtin_cpu_supports("avx") ? 2 : 1;
    atomic_store_explicit(level, l, memory_order_relaxed);
  }
  return l;
}

void kvm_sqrt_f32(const float *x, float *y, int64_t n) {
  int l = kvm_sqrt_level();
  if (l == 3) kvm_sqrt_f32_avx512(x, y, n);
  else if (l == 2) kvm_sqrt_f32_avx(x, y, n);
  else kvm_sqrt_f32_sse2(x, y, n);
}

void kvm_sqrt_f64(const double *x, double *y, int64_t n) {
  int l = kvm_sqrt_level();
  if (l == 3) kvm_sqrt_f64_avx512(x, y, n);
  else if (l == 2) kvm_sqrt_f64_avx(x, y, n);
  else kvm_sqrt_f64_sse2(x, y, n);
}

#else

void kvm_sqrt_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = sqrtf(x[i]);
}

void kvm_sqrt_f64(const double *x, double *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = sqrt(x[i]);
}

void kvm_sqrt_force_isa(int level) { (void)level; }

#endif
