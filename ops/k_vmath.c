/* ops/k_vmath.c — array forms of the vectorised float32 math of ops/k_vmath.h.
 *
 * Each kvm_*_f32 maps n floats 16 lanes at a time; the last partial group
 * goes through a zero-padded 16-float buffer, so every element (tail
 * included) is computed by the same vector code and the results do not
 * depend on n or on where a thread's chunk starts. The functions are KHOT
 * (cloned per ISA level, ops/k_simd.h) and call nothing outside this file.
 */
#include "ops/k_vmath.h"

#define KVM_MAP(NAME, CORE)                                              \
  void NAME(const float *x, float *y, int64_t n);                        \
  KHOT void NAME(const float *x, float *y, int64_t n) {                  \
    int64_t i = 0;                                                       \
    for (; i + 16 <= n; i += 16) {                                       \
      kv16 v = kv_load(x + i);                                           \
      CORE(&v);                                                          \
      kv_store(y + i, v);                                                \
    }                                                                    \
    if (i < n) {                                                         \
      float buf[16];                                                     \
      int64_t k = n - i;                                                 \
      for (int64_t j = 0; j < 16; j++) buf[j] = j < k ? x[i + j] : 0.0f; \
      kv16 v = kv_load(buf);                                             \
      CORE(&v);                                                          \
      kv_store(buf, v);                                                  \
      for (int64_t j = 0; j < k; j++) y[i + j] = buf[j];                 \
    }                                                                    \
  }

KVM_MAP(kvm_exp_f32, kvm_exp16)
KVM_MAP(kvm_sigmoid_f32, kvm_sigmoid16)
KVM_MAP(kvm_tanh_f32, kvm_tanh16)
KVM_MAP(kvm_erf_f32, kvm_erf16)
KVM_MAP(kvm_log_f32, kvm_log16)
KVM_MAP(kvm_log2_f32, kvm_log2_16)
KVM_MAP(kvm_log10_f32, kvm_log10_16)
