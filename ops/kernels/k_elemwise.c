/* ops/kernels/k_elemwise.c — elementwise kernels: broadcasting binary ops, comparisons,
 * logical and bitwise ops, unary math, *_like and the creation ops zeros/ones/full.
 *
 * One per-element semantic core (elem_int / elem_float / unary_int /
 * unary_float, spec/ops.md §2–4) serves both the interpreter's scalar fast
 * path (kscalar_binary / kscalar_unary: immediates, no allocation) and the
 * tensor kernels, so a scalar and a rank-0 tensor always agree. Integers are
 * computed in 64 bits and wrapped to their width (unsigned arithmetic, no
 * signed-overflow UB); float32 results are rounded to float (the C f-suffixed
 * libm functions are used for float32 math); float16 is computed in float32.
 *
 * The tensor path is a general broadcasting loop over elements converted
 * through int64/double, plus typed fast loops for the common float32/int32
 * same-shape and scalar-broadcast cases; an input that is dying (refcount 1,
 * same shape and dtype as the result) is overwritten in place. Faster
 * vectorised and threaded kernels are the operators issue's business.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_elemwise_fast.h"
#include "ops/kernels/k_fastmath.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_util.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"

/* ------------------------------------------------------------ semantic core */

enum { EL_OK = 0, EL_ERR = 1, EL_NOSUCH = -1 };

static bool is_comparison(int32_t op) {
  return op == OP_EQUAL || op == OP_NOT_EQUAL || op == OP_LESS || op == OP_LESS_EQUAL ||
         op == OP_GREATER || op == OP_GREATER_EQUAL;
}

static bool is_u64(DType dt) { return dt.code == DT_UINT && dt.bits == 64; }

/* Binary op on integers (values already in range for dt). Comparisons give 0/1. */
static int elem_int(int32_t op, DType dt, int64_t x, int64_t y, int64_t *out, const char **msg) {
  bool u = is_u64(dt);
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  int64_t r;
  switch (op) {
  case OP_ADD: r = (int64_t)(ux + uy); break;
  case OP_SUBTRACT: r = (int64_t)(ux - uy); break;
  case OP_MULTIPLY: r = (int64_t)(ux * uy); break;
  case OP_DIVIDE:
  case OP_TRUNC_DIVIDE:
  case OP_FLOOR_DIVIDE:
  case OP_MOD:
  case OP_TRUNC_MOD:
  case OP_FLOOR_MOD: {
    if (y == 0) {
      *msg = op == OP_MOD || op == OP_TRUNC_MOD || op == OP_FLOOR_MOD ? "integer modulo by zero"
                                                                      : "integer division by zero";
      return EL_ERR;
    }
    bool is_div = op == OP_DIVIDE || op == OP_TRUNC_DIVIDE || op == OP_FLOOR_DIVIDE;
    if (u) {
      r = (int64_t)(is_div ? ux / uy : ux % uy);
      break;
    }
    if (x == INT64_MIN && y == -1) {
      r = is_div ? INT64_MIN : 0;
      break;
    }
    int64_t q = x / y, m = x % y;
    if (op == OP_FLOOR_DIVIDE && m != 0 && ((m < 0) != (y < 0))) q--;
    if (op == OP_FLOOR_MOD && m != 0 && ((m < 0) != (y < 0))) m += y;
    r = is_div ? q : m;
    break;
  }
  case OP_MAXIMUM: r = (u ? ux > uy : x > y) ? x : y; break;
  case OP_MINIMUM: r = (u ? ux < uy : x < y) ? x : y; break;
  case OP_LEFT_SHIFT: r = (y < 0 || y >= dt.bits) ? 0 : (int64_t)(ux << y); break;
  case OP_RIGHT_SHIFT:
    if (y < 0 || y >= dt.bits) r = (dt.code == DT_INT && x < 0) ? -1 : 0;
    else r = dt.code == DT_INT ? x >> y : (int64_t)(ux >> y);
    break;
  case OP_BITWISE_AND: r = x & y; break;
  case OP_BITWISE_OR: r = x | y; break;
  case OP_BITWISE_XOR: r = x ^ y; break;
  case OP_LOGICAL_AND: r = (x != 0) && (y != 0); break;
  case OP_LOGICAL_OR: r = (x != 0) || (y != 0); break;
  case OP_LOGICAL_XOR: r = (x != 0) != (y != 0); break;
  case OP_EQUAL: *out = x == y; return EL_OK;
  case OP_NOT_EQUAL: *out = x != y; return EL_OK;
  case OP_LESS: *out = u ? ux < uy : x < y; return EL_OK;
  case OP_LESS_EQUAL: *out = u ? ux <= uy : x <= y; return EL_OK;
  case OP_GREATER: *out = u ? ux > uy : x > y; return EL_OK;
  case OP_GREATER_EQUAL: *out = u ? ux >= uy : x >= y; return EL_OK;
  case OP_POWER: *msg = "power is not supported on integer tensors"; return EL_ERR;
  default: return EL_NOSUCH;
  }
  *out = value_wrap_int(dt, r);
  return EL_OK;
}

/* Binary op on floats; comparisons give 0/1 in *out (IEEE ordered). */
static int elem_float(int32_t op, DType dt, double x, double y, double *out, const char **msg) {
  bool f32 = dt.bits <= 32;
  double r;
  switch (op) {
  case OP_ADD: r = x + y; break;
  case OP_SUBTRACT: r = x - y; break;
  case OP_MULTIPLY: r = x * y; break;
  case OP_DIVIDE: r = x / y; break;
  case OP_FLOOR_DIVIDE: r = f32 ? (double)floorf((float)(x / y)) : floor(x / y); break;
  case OP_TRUNC_DIVIDE: r = f32 ? (double)truncf((float)(x / y)) : trunc(x / y); break;
  case OP_MOD: r = f32 ? (double)fmodf((float)x, (float)y) : fmod(x, y); break;
  case OP_FLOOR_MOD: {
    double q = f32 ? (double)floorf((float)(x / y)) : floor(x / y);
    r = x - q * y;
    break;
  }
  case OP_TRUNC_MOD: {
    double q = f32 ? (double)truncf((float)(x / y)) : trunc(x / y);
    r = x - q * y;
    break;
  }
  case OP_POWER: r = f32 ? (double)powf((float)x, (float)y) : pow(x, y); break;
  case OP_MAXIMUM: r = x > y ? x : y; break;
  case OP_MINIMUM: r = x < y ? x : y; break;
  case OP_EQUAL: *out = x == y; return EL_OK;
  case OP_NOT_EQUAL: *out = x < y || x > y; return EL_OK;
  case OP_LESS: *out = x < y; return EL_OK;
  case OP_LESS_EQUAL: *out = x <= y; return EL_OK;
  case OP_GREATER: *out = x > y; return EL_OK;
  case OP_GREATER_EQUAL: *out = x >= y; return EL_OK;
  case OP_LEFT_SHIFT: case OP_RIGHT_SHIFT: case OP_BITWISE_AND: case OP_BITWISE_OR:
  case OP_BITWISE_XOR: case OP_LOGICAL_AND: case OP_LOGICAL_OR: case OP_LOGICAL_XOR:
    *msg = "bitwise and logical operators need integer or bool operands";
    return EL_ERR;
  default: return EL_NOSUCH;
  }
  *out = f32 ? (double)(float)r : r;
  return EL_OK;
}

static bool unary_bool_out(int32_t op) { return op == OP_ISNAN || op == OP_ISINF || op == OP_ISFINITE; }

#define M1(fn, x) (f32 ? (double)fn##f((float)(x)) : fn(x))

static int unary_float(int32_t op, DType dt, double x, double *out) {
  bool f32 = dt.bits <= 32;
  double r;
  switch (op) {
  case OP_NEGATIVE: r = -x; break;
  case OP_ABS: r = fabs(x); break;
  case OP_SIGN: r = x > 0 ? 1 : x < 0 ? -1 : 0; break;
  case OP_SQRT: r = M1(sqrt, x); break;
  case OP_RSQRT: r = f32 ? 1.0f / sqrtf((float)x) : 1.0 / sqrt(x); break;
  case OP_EXP: r = M1(exp, x); break;
  /* TVM's polynomials (ops/kernels/k_fastmath.h) on float32 (fast_erf: and
   * float16, in half arithmetic); the exact functions on other dtypes */
  case OP_FAST_EXP: r = dt.bits == 32 && dt.code == DT_FLOAT ? kfm_fast_exp((float)x) : M1(exp, x); break;
  case OP_FAST_TANH: r = dt.bits == 32 && dt.code == DT_FLOAT ? kfm_fast_tanh((float)x) : M1(tanh, x); break;
  case OP_FAST_ERF:
    r = dt.code != DT_FLOAT ? M1(erf, x) : dt.bits == 32 ? kfm_fast_erf((float)x)
      : dt.bits == 16 ? kfm_fast_erf_f16((float)x) : erf(x);
    break;
  case OP_LOG: r = M1(log, x); break;
  case OP_LOG2: r = M1(log2, x); break;
  case OP_LOG10: r = M1(log10, x); break;
  case OP_SIN: r = M1(sin, x); break;
  case OP_COS: r = M1(cos, x); break;
  case OP_TAN: r = M1(tan, x); break;
  case OP_ASIN: r = M1(asin, x); break;
  case OP_ACOS: r = M1(acos, x); break;
  case OP_ATAN: r = M1(atan, x); break;
  case OP_SINH: r = M1(sinh, x); break;
  case OP_COSH: r = M1(cosh, x); break;
  case OP_TANH: r = M1(tanh, x); break;
  case OP_ASINH: r = M1(asinh, x); break;
  case OP_ACOSH: r = M1(acosh, x); break;
  case OP_ATANH: r = M1(atanh, x); break;
  case OP_ERF: r = M1(erf, x); break;
  case OP_SIGMOID: r = f32 ? 1.0f / (1.0f + expf(-(float)x)) : 1.0 / (1.0 + exp(-x)); break;
  case OP_FLOOR: r = M1(floor, x); break;
  case OP_CEIL: r = M1(ceil, x); break;
  case OP_TRUNC: r = M1(trunc, x); break;
  case OP_ROUND: r = M1(round, x); break;
  case OP_COPY: r = x; break;
  case OP_ZEROS_LIKE: r = 0; break;
  case OP_ONES_LIKE: r = 1; break;
  case OP_ISNAN: *out = isnan(x); return EL_OK;
  case OP_ISINF: *out = isinf(x); return EL_OK;
  case OP_ISFINITE: *out = isfinite(x); return EL_OK;
  default: return EL_NOSUCH;
  }
  *out = f32 ? (double)(float)r : r;
  return EL_OK;
}

static int unary_int(int32_t op, DType dt, int64_t x, int64_t *out, const char **msg) {
  bool b = dtype_is_bool(dt);
  int64_t r;
  switch (op) {
  case OP_NEGATIVE: r = (int64_t)(0 - (uint64_t)x); break;
  case OP_ABS: r = (dt.code == DT_INT && x < 0) ? (int64_t)(0 - (uint64_t)x) : x; break;
  case OP_SIGN: r = dt.code == DT_INT ? (x > 0) - (x < 0) : x != 0; break;
  case OP_FLOOR: case OP_CEIL: case OP_TRUNC: case OP_ROUND: case OP_COPY: r = x; break;
  case OP_ZEROS_LIKE: r = 0; break;
  case OP_ONES_LIKE: r = 1; break;
  case OP_LOGICAL_NOT: r = x == 0; break;
  case OP_BITWISE_NOT: r = b ? x ^ 1 : ~x; break;
  case OP_ISNAN: case OP_ISINF: *out = 0; return EL_OK;
  case OP_ISFINITE: *out = 1; return EL_OK;
  case OP_SQRT: case OP_RSQRT: case OP_EXP: case OP_LOG: case OP_LOG2: case OP_LOG10: case OP_SIN:
  case OP_COS: case OP_TAN: case OP_ASIN: case OP_ACOS: case OP_ATAN: case OP_SINH: case OP_COSH:
  case OP_TANH: case OP_ASINH: case OP_ACOSH: case OP_ATANH: case OP_ERF: case OP_SIGMOID:
  case OP_FAST_EXP: case OP_FAST_TANH: case OP_FAST_ERF:
    *msg = "this operator needs a floating-point operand";
    return EL_ERR;
  default: return EL_NOSUCH;
  }
  *out = value_wrap_int(dt, r);
  return EL_OK;
}

/* ------------------------------------------------------------ scalar fast path */

int kscalar_binary(int32_t op_id, Value a, Value b, Value *out, char *err) {
  DType dt = value_scalar_dtype(a);
  const char *msg = NULL;
  int rc;
  if (dtype_is_float(dt)) {
    double r;
    rc = elem_float(op_id, dt, a.f, b.f, &r, &msg);
    if (rc == EL_OK) *out = is_comparison(op_id) ? value_bool(r != 0) : value_float(dt, r);
  } else {
    int64_t r;
    rc = elem_int(op_id, dt, a.i, b.i, &r, &msg);
    if (rc == EL_OK) *out = is_comparison(op_id) ? value_bool(r != 0) : value_int(dt, r);
  }
  if (rc == EL_ERR) snprintf(err, KERNEL_ERR_SIZE, "%s: %s", op_get(op_id)->name, msg);
  return rc == EL_NOSUCH ? -1 : rc;
}

int kscalar_unary(int32_t op_id, Value a, Value *out, char *err) {
  DType dt = value_scalar_dtype(a);
  const char *msg = NULL;
  int rc;
  if (dtype_is_float(dt)) {
    double r;
    rc = unary_float(op_id, dt, a.f, &r);
    if (rc == EL_OK) *out = unary_bool_out(op_id) ? value_bool(r != 0) : value_float(dt, r);
    if (op_id == OP_LOGICAL_NOT || op_id == OP_BITWISE_NOT) {
      msg = "this operator needs an integer or bool operand";
      rc = EL_ERR;
    }
  } else {
    int64_t r;
    rc = unary_int(op_id, dt, a.i, &r, &msg);
    if (rc == EL_OK) *out = unary_bool_out(op_id) ? value_bool(r != 0) : value_int(dt, r);
  }
  if (rc == EL_ERR) snprintf(err, KERNEL_ERR_SIZE, "%s: %s", op_get(op_id)->name, msg);
  return rc == EL_NOSUCH ? -1 : rc;
}

/* ------------------------------------------------------------ tensor helpers */

/* A float32 copy of a float16 tensor (borrows), for computing in float32. */
static Tensor *widen_f16(const Tensor *t) {
  Tensor *w = tensor_new(DT_F32, t->ndim, t->shape);
  if (!w) return NULL;
  const uint16_t *p = t->data;
  float *q = w->data;
  for (int64_t i = 0; i < t->numel; i++) q[i] = half_to_float(p[i]);
  return w;
}

/* The float16 tensor (dtype f16) of a float32 result computed for a float16
 * operator; consumes src, also when out of memory (then NULL). */
static Tensor *narrow_f16(Tensor *src, DType f16) {
  Tensor *dst = tensor_new(f16, src->ndim, src->shape);
  if (dst) {
    const float *p = src->data;
    uint16_t *q = dst->data;
    for (int64_t i = 0; i < src->numel; i++) q[i] = float_to_half(p[i]);
  }
  tensor_release(src);
  return dst;
}

/* Input-to-output index mapping for broadcasting: for output dim i, the
 * element stride of the input (0 where the input is broadcast). */
static void bcast_strides(const Tensor *t, int32_t ndim, const int64_t *shape, int64_t *st) {
  int64_t s = 1;
  for (int32_t i = ndim; i-- > 0;) {
    int32_t k = t->ndim - ndim + i;
    if (k < 0 || t->shape[k] == 1) st[i] = 0;
    else st[i] = s;
    if (k >= 0) s *= t->shape[k];
    (void)shape;
  }
}

typedef struct BinJob {
  int32_t op;
  DType in_dt, out_dt;
  const Tensor *a, *b;
  Tensor *o;
  int32_t ndim;
  const int64_t *shape;
  int64_t sa[TENSOR_MAX_NDIM], sb[TENSOR_MAX_NDIM];
  const char *msg;
  bool failed;
} BinJob;

/* Typed fast loops: same shape or one side a single element. */
#define FAST_LOOP(T, EXPR)                                                                        \
  do {                                                                                            \
    const T *pa = j->a->data, *pb = j->b->data;                                                   \
    T *po = j->o->data;                                                                           \
    int64_t n = j->o->numel, ia = j->a->numel == 1 ? 0 : 1, ib = j->b->numel == 1 ? 0 : 1;        \
    for (int64_t i = 0; i < n; i++) {                                                             \
      T x = pa[i * ia], y = pb[i * ib];                                                           \
      po[i] = (EXPR);                                                                             \
    }                                                                                             \
  } while (0)

static bool bin_fast(BinJob *j) {
  bool simple = (j->a->numel == j->o->numel || j->a->numel == 1) &&
                (j->b->numel == j->o->numel || j->b->numel == 1) &&
                (j->a->numel == 1 || j->a->ndim == j->o->ndim) &&
                (j->b->numel == 1 || j->b->ndim == j->o->ndim);
  if (!simple) return false;
  if (dtype_eq(j->in_dt, DT_F32) && dtype_eq(j->out_dt, DT_F32)) {
    switch (j->op) {
    case OP_ADD: FAST_LOOP(float, x + y); return true;
    case OP_SUBTRACT: FAST_LOOP(float, x - y); return true;
    case OP_MULTIPLY: FAST_LOOP(float, x * y); return true;
    case OP_DIVIDE: FAST_LOOP(float, x / y); return true;
    case OP_MAXIMUM: FAST_LOOP(float, x > y ? x : y); return true;
    case OP_MINIMUM: FAST_LOOP(float, x < y ? x : y); return true;
    default: return false;
    }
  }
  if (dtype_eq(j->in_dt, DT_I32) && dtype_eq(j->out_dt, DT_I32)) {
    switch (j->op) {
    case OP_ADD: FAST_LOOP(int32_t, (int32_t)((uint32_t)x + (uint32_t)y)); return true;
    case OP_SUBTRACT: FAST_LOOP(int32_t, (int32_t)((uint32_t)x - (uint32_t)y)); return true;
    case OP_MULTIPLY: FAST_LOOP(int32_t, (int32_t)((uint32_t)x * (uint32_t)y)); return true;
    default: return false;
    }
  }
  return false;
}

static void bin_range(void *arg, int64_t lo, int64_t hi) {
  BinJob *j = arg;
  size_t ea = dtype_size(j->in_dt), eo = dtype_size(j->out_dt);
  bool fl = dtype_is_float(j->in_dt);
  int64_t idx[TENSOR_MAX_NDIM];
  /* coordinates of `lo` */
  int64_t rem = lo, offa = 0, offb = 0;
  for (int32_t d = j->ndim; d-- > 0;) {
    idx[d] = j->shape[d] ? rem % j->shape[d] : 0;
    rem = j->shape[d] ? rem / j->shape[d] : 0;
    offa += idx[d] * j->sa[d];
    offb += idx[d] * j->sb[d];
  }
  const char *pa = j->a->data, *pb = j->b->data;
  char *po = j->o->data;
  for (int64_t i = lo; i < hi && !j->failed; i++) {
    const void *x = pa + offa * (int64_t)ea, *y = pb + offb * (int64_t)ea;
    void *o = po + i * (int64_t)eo;
    int rc;
    if (fl) {
      double r;
      rc = elem_float(j->op, j->in_dt, tensor_load_f64(j->in_dt, x), tensor_load_f64(j->in_dt, y), &r, &j->msg);
      if (rc == EL_OK) tensor_store_f64(j->out_dt, o, r);
    } else {
      int64_t r;
      rc = elem_int(j->op, j->in_dt, tensor_load_i64(j->in_dt, x), tensor_load_i64(j->in_dt, y), &r, &j->msg);
      if (rc == EL_OK) tensor_store_i64(j->out_dt, o, r);
    }
    if (rc != EL_OK) {
      if (rc == EL_NOSUCH) j->msg = "operator not supported by the elementwise kernel";
      j->failed = true;
      return;
    }
    /* advance the odometer */
    for (int32_t d = j->ndim; d-- > 0;) {
      offa += j->sa[d];
      offb += j->sb[d];
      if (++idx[d] < j->shape[d]) break;
      offa -= j->sa[d] * j->shape[d];
      offb -= j->sb[d] * j->shape[d];
      idx[d] = 0;
    }
  }
}

/* Whether float tensor t holds a negative zero: an element whose only set bit
 * is the sign bit (the top bit of its last, most significant byte). */
static KHOT_EXACT bool u32_contains(const uint32_t *w, size_t n, uint32_t v) {
  uint32_t found = 0;
  for (size_t i = 0; i < n; i++) found |= w[i] == v;
  return found != 0;
}

/* float32: the scan shared out among the pool's threads (GPT-2's token-table
 * gradient, add(zeros_like(table), scatter), scans 154 MB); a chunk that finds
 * one sets the flag, which only ever goes from false to true. */
typedef struct NegZeroScan {
  const uint32_t *w;
  bool found;
} NegZeroScan;

static void negzero_range(void *arg, int64_t lo, int64_t hi) {
  NegZeroScan *j = arg;
  if (u32_contains(j->w + lo, (size_t)(hi - lo), 0x80000000u)) __atomic_store_n(&j->found, true, __ATOMIC_RELAXED);
}

static bool has_negative_zero(KernelCtx *c, const Tensor *t) {
  size_t es = (size_t)(t->dtype.bits + 7) / 8, n = (size_t)t->numel * t->dtype.lanes;
  if (es == 4) {
    NegZeroScan j = {.w = t->data};
    kernel_parallel_for(c, (int64_t)n, 1 << 16, negzero_range, &j);
    return __atomic_load_n(&j.found, __ATOMIC_RELAXED);
  }
  const uint8_t *b = t->data;
  for (size_t i = 0; i < n; i++, b += es) {
    if (b[es - 1] != 0x80) continue;
    size_t k = 0;
    while (k + 1 < es && b[k] == 0) k++;
    if (k + 1 == es) return true;
  }
  return false;
}

/* add(0, x), add(x, 0) and subtract(x, 0) with a zero operand (runtime/tensor.h
 * TENSOR_ZERO) that x's shape already covers: x itself, no pass over memory.
 * The gradient program starts every cell at zeros_like and adds the first
 * contribution to it. Exact except for a float addition to -0, which gives +0
 * (IEEE 754: 0 + -0 = +0; x - 0 keeps -0): such an x takes the arithmetic path. */
static bool zero_operand_shortcut(KernelCtx *c) {
  if (c->op_id != OP_ADD && c->op_id != OP_SUBTRACT) return false;
  Tensor *a = c->inputs[0], *b = c->inputs[1];
  if (!a || !b || !dtype_eq(a->dtype, b->dtype)) return false;
  Tensor *keep = NULL, *zero = NULL;
  if (tensor_is_zero(b)) keep = a, zero = b;
  else if (c->op_id == OP_ADD && tensor_is_zero(a)) keep = b, zero = a;
  if (!keep) return false;
  int32_t ndim;
  int64_t shape[TENSOR_MAX_NDIM];
  if (keep->ndim > TENSOR_MAX_NDIM || zero->ndim > TENSOR_MAX_NDIM || !kernel_broadcast_shape(a, b, &ndim, shape) ||
      ndim != keep->ndim || memcmp(shape, keep->shape, (size_t)ndim * sizeof *shape) != 0)
    return false;
  if (c->op_id == OP_ADD && dtype_is_float(keep->dtype) && has_negative_zero(c, keep)) return false;
  kernel_set_output(c, tensor_retain(keep));
  return true;
}

static int binary_kernel(KernelCtx *c) {
  if (zero_operand_shortcut(c)) return KERNEL_OK;
  int fast = kfast_binary(c); /* typed, vectorised, threaded (ops/kernels/k_elemwise_fast.c) */
  if (fast != KFAST_DECLINED) return fast;
  Tensor *a = c->inputs[0], *b = c->inputs[1];
  const char *name = c->op->name;
  if (!dtype_eq(a->dtype, b->dtype)) return kernel_fail(c, "%s: operands have different dtypes", name);
  int32_t ndim;
  int64_t shape[TENSOR_MAX_NDIM];
  if (a->ndim > TENSOR_MAX_NDIM || b->ndim > TENSOR_MAX_NDIM || !kernel_broadcast_shape(a, b, &ndim, shape))
    return kernel_fail_broadcast(c, name, a, b);
  bool cmp = is_comparison(c->op_id);
  DType dt = a->dtype;
  bool half = dt.code == DT_FLOAT && dt.bits == 16;
  Tensor *wa = NULL, *wb = NULL;
  if (half) {
    wa = widen_f16(a);
    wb = widen_f16(b);
    if (!wa || !wb) {
      tensor_release(wa);
      tensor_release(wb);
      return kernel_fail(c, "%s: out of memory", name);
    }
    a = wa;
    b = wb;
    dt = DT_F32;
  }
  DType odt = cmp ? DT_BOOL_T : dt;
  /* in place into a dying input of the result's shape and dtype */
  Tensor *o = NULL;
  if (!half) {
    for (uint32_t i = 0; i < 2 && !o; i++) {
      const Tensor *t = c->inputs[i];
      if (dtype_eq(t->dtype, odt) && t->ndim == ndim && tensor_numel(t) > 1 &&
          memcmp(t->shape, shape, (size_t)ndim * sizeof *shape) == 0 && tensor_is_unique(t)) {
        o = tensor_retain(c->inputs[i]);
      }
    }
  }
  if (!o) {
    o = tensor_new(odt, ndim, shape);
    if (!o) {
      tensor_release(wa);
      tensor_release(wb);
      return kernel_fail(c, "%s: cannot allocate the result", name);
    }
  }
  BinJob j = {.op = c->op_id, .in_dt = dt, .out_dt = odt, .a = a, .b = b, .o = o, .ndim = ndim, .shape = shape};
  if (!bin_fast(&j)) {
    bcast_strides(a, ndim, shape, j.sa);
    bcast_strides(b, ndim, shape, j.sb);
    bin_range(&j, 0, o->numel);
  }
  tensor_release(wa);
  tensor_release(wb);
  if (j.failed) {
    tensor_release(o);
    return kernel_fail(c, "%s: %s", name, j.msg);
  }
  if (half && !cmp) {
    o = narrow_f16(o, c->inputs[0]->dtype);
    if (!o) return kernel_fail(c, "%s: out of memory", name);
  }
  kernel_set_output(c, o);
  return KERNEL_OK;
}

static int unary_kernel(KernelCtx *c) {
  if (c->op_id == OP_ZEROS_LIKE) { /* the shared zero mapping: no memory, no pass */
    const Tensor *x = c->inputs[0];
    Tensor *z = tensor_new_zero(x->dtype, x->ndim, x->shape);
    if (!z) { /* an ordinary result, or kernel_output's message (too large, budget) */
      Tensor *o = kernel_output(c, x->dtype, x->ndim, x->shape);
      if (!o) return KERNEL_ERROR;
      memset(o->data, 0, (size_t)o->nbytes);
      return KERNEL_OK;
    }
    kernel_set_output(c, z);
    return KERNEL_OK;
  }
  int fast = kfast_unary(c); /* typed, vectorised, threaded (ops/kernels/k_elemwise_fast.c) */
  if (fast != KFAST_DECLINED) return fast;
  Tensor *x = c->inputs[0];
  const char *name = c->op->name;
  DType dt = x->dtype;
  bool half = dt.code == DT_FLOAT && dt.bits == 16;
  bool bout = unary_bool_out(c->op_id);
  Tensor *w = NULL;
  if (half) {
    w = widen_f16(x);
    if (!w) return kernel_fail(c, "%s: out of memory", name);
    x = w;
    dt = DT_F32;
  }
  DType odt = bout ? DT_BOOL_T : dt;
  Tensor *o = NULL;
  if (!half && !bout && c->op_id != OP_COPY) o = kernel_take_input(c, 0);
  if (!o) o = tensor_new(odt, x->ndim, x->shape);
  if (!o) {
    tensor_release(w);
    return kernel_fail(c, "%s: cannot allocate the result", name);
  }
  const char *msg = NULL;
  int rc = EL_OK;
  size_t es = dtype_size(dt), eo = dtype_size(odt);
  for (int64_t i = 0; i < x->numel && rc == EL_OK; i++) {
    const char *p = (const char *)x->data + i * (int64_t)es;
    char *q = (char *)o->data + i * (int64_t)eo;
    if (dtype_is_float(dt)) {
      double r;
      if (c->op_id == OP_LOGICAL_NOT || c->op_id == OP_BITWISE_NOT) {
        rc = EL_ERR;
        msg = "this operator needs an integer or bool operand";
        break;
      }
      rc = unary_float(c->op_id, half ? DT_F16 : dt, tensor_load_f64(dt, p), &r); /* f16: its own fast_* */
      if (rc == EL_OK) tensor_store_f64(odt, q, r);
    } else {
      int64_t r;
      rc = unary_int(c->op_id, dt, tensor_load_i64(dt, p), &r, &msg);
      if (rc == EL_OK) tensor_store_i64(odt, q, r);
    }
  }
  tensor_release(w);
  if (rc != EL_OK) {
    tensor_release(o);
    return kernel_fail(c, "%s: %s", name, msg ? msg : "not supported for this dtype");
  }
  if (half && !bout) {
    o = narrow_f16(o, c->inputs[0]->dtype);
    if (!o) return kernel_fail(c, "%s: out of memory", name);
  }
  kernel_set_output(c, o);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ creation */

/* The result dtype of zeros/ones/full: the dtype attribute, else the
 * inferred output type, else `dflt`. */
static DType creation_dtype(KernelCtx *c, DType dflt) {
  DType dt;
  if (kernel_attr_dtype(c, "dtype", &dt)) return dt;
  if (c->out_type && c->out_type->kind == TYPE_TENSOR) return c->out_type->tensor.dtype;
  return dflt;
}

static int fill_kernel(KernelCtx *c, double fv, int64_t iv, bool is_float, DType dflt) {
  int64_t shape[TENSOR_MAX_NDIM];
  int32_t nd = kernel_attr_ints(c, "shape", shape, TENSOR_MAX_NDIM);
  if (nd < 0 || nd > TENSOR_MAX_NDIM) return kernel_fail(c, "%s: needs a shape attribute", c->op->name);
  DType dt = creation_dtype(c, dflt);
  Tensor *o = kernel_output(c, dt, nd, shape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(dt);
  for (int64_t i = 0; i < o->numel; i++) {
    void *p = (char *)o->data + i * (int64_t)es;
    if (is_float) tensor_store_f64(dt, p, fv);
    else tensor_store_i64(dt, p, iv);
  }
  return KERNEL_OK;
}

/* ------------------------------------------------------------ kernels */

#define BINARY(ID) \
  int kernel_##ID(KernelCtx *c); \
  int kernel_##ID(KernelCtx *c) { return binary_kernel(c); }
#define UNARY(ID) \
  int kernel_##ID(KernelCtx *c); \
  int kernel_##ID(KernelCtx *c) { return unary_kernel(c); }

BINARY(ADD) BINARY(SUBTRACT) BINARY(MULTIPLY) BINARY(DIVIDE) BINARY(FLOOR_DIVIDE)
BINARY(TRUNC_DIVIDE) BINARY(MOD) BINARY(FLOOR_MOD) BINARY(TRUNC_MOD) BINARY(POWER)
BINARY(MAXIMUM) BINARY(MINIMUM) BINARY(LEFT_SHIFT) BINARY(RIGHT_SHIFT) BINARY(BITWISE_AND)
BINARY(BITWISE_OR) BINARY(BITWISE_XOR) BINARY(LOGICAL_AND) BINARY(LOGICAL_OR) BINARY(LOGICAL_XOR)
BINARY(EQUAL) BINARY(NOT_EQUAL) BINARY(LESS) BINARY(LESS_EQUAL) BINARY(GREATER) BINARY(GREATER_EQUAL)

UNARY(NEGATIVE) UNARY(ABS) UNARY(SIGN) UNARY(SQRT) UNARY(RSQRT) UNARY(EXP) UNARY(LOG) UNARY(LOG2)
UNARY(LOG10) UNARY(SIN) UNARY(COS) UNARY(TAN) UNARY(ASIN) UNARY(ACOS) UNARY(ATAN) UNARY(SINH)
UNARY(COSH) UNARY(TANH) UNARY(ASINH) UNARY(ACOSH) UNARY(ATANH) UNARY(ERF) UNARY(SIGMOID)
UNARY(FLOOR) UNARY(CEIL) UNARY(TRUNC) UNARY(ROUND) UNARY(LOGICAL_NOT) UNARY(BITWISE_NOT)
UNARY(COPY) UNARY(ZEROS_LIKE) UNARY(ONES_LIKE) UNARY(FAST_EXP) UNARY(FAST_TANH) UNARY(FAST_ERF)
UNARY(ISNAN) UNARY(ISINF) UNARY(ISFINITE)

int kernel_ZEROS(KernelCtx *c);
int kernel_ZEROS(KernelCtx *c) {
  int64_t shape[TENSOR_MAX_NDIM];
  int32_t nd = kernel_attr_ints(c, "shape", shape, TENSOR_MAX_NDIM);
  if (nd < 0 || nd > TENSOR_MAX_NDIM) return kernel_fail(c, "%s: needs a shape attribute", c->op->name);
  DType dt = creation_dtype(c, DT_F32);
  Tensor *z = tensor_new_zero(dt, nd, shape);
  if (!z) { /* an ordinary result, or kernel_output's message (too large, budget) */
    Tensor *o = kernel_output(c, dt, nd, shape);
    if (!o) return KERNEL_ERROR;
    memset(o->data, 0, (size_t)o->nbytes);
    return KERNEL_OK;
  }
  kernel_set_output(c, z);
  return KERNEL_OK;
}
int kernel_ONES(KernelCtx *c);
int kernel_ONES(KernelCtx *c) { return fill_kernel(c, 1, 1, false, DT_F32); }

int kernel_FULL(KernelCtx *c);
int kernel_FULL(KernelCtx *c) {
  const Tensor *v = c->inputs[0];
  if (v->numel != 1) return kernel_fail(c, "full: fill_value must be a scalar");
  DType dt = creation_dtype(c, v->dtype);
  if (dtype_is_float(v->dtype)) return fill_kernel(c, tensor_get_f64(v, 0), 0, true, dt);
  if (dtype_is_float(dt)) return fill_kernel(c, (double)tensor_get_i64(v, 0), 0, true, dt);
  return fill_kernel(c, 0, tensor_get_i64(v, 0), false, dt);
}

/* cast: per-element conversion (spec/ops.md §2 "Casts", ku_cast): float →
 * int truncates toward zero and saturates; anything → bool is x != 0 (NaN →
 * False); int → int wraps by the source's signedness. */
int kernel_CAST(KernelCtx *c);
int kernel_CAST(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  DType to;
  if (!kernel_attr_dtype(c, "dtype", &to)) return kernel_fail(c, "cast: needs a dtype attribute");
  Tensor *o = kernel_output(c, to, x->ndim, x->shape);
  if (!o) return KERNEL_ERROR;
  size_t ef = dtype_size(x->dtype), et = dtype_size(to);
  for (int64_t i = 0; i < x->numel; i++)
    ku_cast(x->dtype, (const char *)x->data + i * (int64_t)ef, to, (char *)o->data + i * (int64_t)et);
  return KERNEL_OK;
}
