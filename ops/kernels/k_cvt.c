/* ops/kernels/k_cvt.c — whole-tensor dtype conversion (ops/kernels/k_cvt.h).
 *
 * Element conversions go through runtime/tensor.h's load/store helpers
 * (which implement the spec's cast rules), with typed fast loops for the
 * common float16 → float32 and float32 → float16 cases.
 */
#include "ops/kernels/k_cvt.h"

#include <math.h>
#include <string.h>

#include "ir/mem.h"
#include "runtime/value.h"

KCompute kcvt_kind(DType out) {
  if (dtype_is_float(out)) return out.code == DT_FLOAT && out.bits == 64 ? KC_F64 : KC_F32;
  return KC_I64;
}

size_t kcvt_size(KCompute k) { return k == KC_F32 ? sizeof(float) : 8; }

bool kcvt_is_native(DType dt, KCompute k) {
  if (dt.lanes != 1) return false;
  if (k == KC_F32) return dt.code == DT_FLOAT && dt.bits == 32;
  if (k == KC_F64) return dt.code == DT_FLOAT && dt.bits == 64;
  return dt.code == DT_INT && dt.bits == 64;
}

void *kcvt_alloc(KCompute k, int64_t n) {
  size_t bytes = (size_t)(n > 0 ? n : 1) * kcvt_size(k);
  return mem_aligned_try(64, (bytes + 63) / 64 * 64);
}

/* One element of dtype `src` cast to an integer or bool `as` (§2: a float
 * saturates, an integer wraps), as int64 (compute). */
static int64_t cvt_int(DType src, const void *p, DType as) {
  if (dtype_is_float(src)) return tensor_f64_to_int(as, tensor_load_f64(src, p));
  if (dtype_is_bool(as)) return tensor_load_i64(src, p) != 0;
  return value_wrap_int(as, tensor_load_i64(src, p));
}

/* One element of dtype `src` cast to `as`, as a double (float compute). */
static double cvt_float(DType src, const void *p, DType as) {
  double v = tensor_load_f64(src, p);
  if (dtype_is_float(as)) {
    if (as.bits == 16 && as.code == DT_FLOAT) return half_to_float(float_to_half((float)v));
    if (as.bits <= 32) return (double)(float)v;
    return v;
  }
  /* a float result of an integer `as`: cast through the integer type */
  int64_t i = cvt_int(src, p, as);
  return as.code == DT_UINT && as.bits >= 64 ? (double)(uint64_t)i : (double)i;
}

void *kcvt_load(const Tensor *t, DType as, KCompute k, bool *owned) {
  *owned = false;
  if (dtype_eq(t->dtype, as) && kcvt_is_native(t->dtype, k)) return t->data;
  void *buf = kcvt_alloc(k, t->numel);
  if (!buf) return NULL;
  *owned = true;
  size_t es = dtype_size(t->dtype);
  const char *src = t->data;
  int64_t n = t->numel;
  if (k == KC_F32) {
    float *d = buf;
    if (t->dtype.code == DT_FLOAT && t->dtype.bits == 16 && dtype_is_float(as) && as.bits >= 16) {
      const uint16_t *h = t->data;
      for (int64_t i = 0; i < n; i++) d[i] = half_to_float(h[i]);
    } else {
      for (int64_t i = 0; i < n; i++) d[i] = (float)cvt_float(t->dtype, src + (size_t)i * es, as);
    }
  } else if (k == KC_F64) {
    double *d = buf;
    for (int64_t i = 0; i < n; i++) d[i] = cvt_float(t->dtype, src + (size_t)i * es, as);
  } else {
    int64_t *d = buf;
    for (int64_t i = 0; i < n; i++) d[i] = cvt_int(t->dtype, src + (size_t)i * es, as);
  }
  return buf;
}

void kcvt_store(Tensor *out, const void *buf, KCompute k) {
  if (buf == out->data) return;
  DType dt = out->dtype;
  size_t es = dtype_size(dt);
  char *dst = out->data;
  int64_t n = out->numel;
  if (k == KC_F32) {
    const float *s = buf;
    if (dt.code == DT_FLOAT && dt.bits == 16) {
      uint16_t *h = out->data;
      for (int64_t i = 0; i < n; i++) h[i] = float_to_half(s[i]);
    } else if (dt.code == DT_FLOAT && dt.bits == 32) {
      memcpy(dst, s, (size_t)n * 4);
    } else {
      for (int64_t i = 0; i < n; i++) tensor_store_f64(dt, dst + (size_t)i * es, (double)s[i]);
    }
  } else if (k == KC_F64) {
    const double *s = buf;
    for (int64_t i = 0; i < n; i++) tensor_store_f64(dt, dst + (size_t)i * es, s[i]);
  } else {
    const int64_t *s = buf;
    for (int64_t i = 0; i < n; i++) tensor_store_i64(dt, dst + (size_t)i * es, s[i]);
  }
}
