/* ops/kernels/k_elemwise_fast.c — typed, vectorised, threaded elementwise kernels
 * (ops/kernels/k_elemwise_fast.h), tried first by ops/kernels/k_elemwise.c.
 *
 * BINARY ops with numpy broadcasting: the output shape is collapsed — size-1
 * output dims dropped, adjacent dims merged when both operands vary (or are
 * broadcast) along both — into outer dims and one contiguous inner "row".
 * Each operand is then either full along the row (V) or a single element
 * repeated (S): a row is one call of a typed loop in mode VV, VS or SV, with
 * no per-element index arithmetic; the outer dims are an odometer of row
 * offsets (stride 0 where an operand is broadcast). The same-shape case is
 * one row; a (1,50,3072) + (3072,) bias is 50 VV rows; x − mean(x, -1) is VS.
 *
 * UNARY ops are one array loop per (dtype, op): selects and rounding
 * functions GCC vectorises (floor, trunc...), square roots through
 * kvm_sqrt_* (vsqrt by hand), the float32 transcendental functions from
 * ops/kernels/k_vmath.h, and plain libm loops for the rare ones (sin, acosh...).
 *
 * THREADS: the flat output is split into blocks of KF_BLOCK elements (so
 * chunk boundaries are cache-line aligned) and the blocks are shared out by
 * kernel_parallel_for, with a grain by the op's cost (memory-bound loops
 * take 32K elements per chunk, so GPT-2's (1,50,768) activations stay on
 * one thread: a wake-up costs more than the loop). Chunk bodies only read
 * the inputs and write their own slice of the output.
 *
 * IN PLACE: the result is written into a dying input (kernel_take_input)
 * of the result's shape and dtype; the loops read element i of an operand
 * before writing element i of the output and never read it again, so
 * po == pa (or pb) is safe; no other overlap can occur.
 *
 * SEMANTICS are those of the generic path (spec/ops.md §2–4) bit for bit:
 * maximum/minimum are the selects x > y ? x : y / x < y ? x : y, not_equal
 * is ordered, integers wrap through unsigned arithmetic, float32
 * floor_mod/trunc_mod are computed in double like the generic path. The
 * exceptions, all within 1e-6 relative: float32 exp/log/log2/log10/tanh/
 * erf/sigmoid (ops/kernels/k_vmath.h) and float32 power by a scalar exponent 2 or 3
 * (x·x, x·x·x) or 0.5 (sqrt, with pow's −0 and −inf cases). float32
 * fast_exp/fast_tanh/fast_erf are TVM's polynomials, bit-identical to the
 * generic path's (ops/kernels/k_fastmath.h).
 */
#include "ops/kernels/k_elemwise_fast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_vmath.h"
#include "ops/op_ids.h"

/* Loops cloned per ISA like KHOT, without trapping math so floorf, truncf
 * ... become vector instructions (the values are unchanged; only the
 * inexact flag is not raised). No FP contraction: results stay exact.
 * (sqrt is different: GCC vectorises it only under a global
 * -fno-math-errno, so kvm_sqrt_* in ops/kernels/k_vmath.c use vsqrt by hand.) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(RELAYC_NO_CLONES)
#define KF_HOT                                                                                     \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"),                    \
                 optimize("O3", "no-trapping-math")))
#elif defined(__GNUC__) && !defined(__clang__)
#define KF_HOT __attribute__((optimize("O3", "no-trapping-math")))
#else
#define KF_HOT
#endif

/* Elements per work block (4 KiB of float32). */
#define KF_BLOCK 1024
/* Grains, in blocks: memory-bound loops, vector math, scalar libm calls. */
enum { KF_GRAIN_CHEAP = 32, KF_GRAIN_MATH = 8, KF_GRAIN_LIBM = 1 };

/* ------------------------------------------------------------ switch */

static int kf_state = -1; /* -1: not read from the environment yet */

bool kfast_enabled(void) {
  if (kf_state < 0) {
    const char *s = getenv("RELAYC_ELEMWISE_FAST");
    kf_state = !(s && strcmp(s, "0") == 0);
  }
  return kf_state != 0;
}

void kfast_set_enabled(bool on) { kf_state = on; }

/* ------------------------------------------------------------ element kinds */

typedef enum {
  KF_NONE, /* declined: float16, bfloat16, int8/16, unsigned, vector lanes */
  KF_F32,
  KF_F64,
  KF_I32,
  KF_I64,
  KF_BOOL, /* uint1, one byte 0/1 */
} KfKind;

static KfKind kf_kind(DType t) {
  if (t.lanes != 1) return KF_NONE;
  if (t.code == DT_FLOAT) return t.bits == 32 ? KF_F32 : t.bits == 64 ? KF_F64 : KF_NONE;
  if (t.code == DT_INT) return t.bits == 32 ? KF_I32 : t.bits == 64 ? KF_I64 : KF_NONE;
  if (t.code == DT_UINT && t.bits == 1) return KF_BOOL;
  return KF_NONE;
}

/* ------------------------------------------------------------ binary rows */

enum {
  KF_VV, /* both operands run along the row */
  KF_VS, /* the right operand is one element repeated */
  KF_SV, /* the left operand is one element repeated */
};
typedef void (*KfRow)(const void *a, const void *b, void *o, int64_t n, int mode);

#define KF_ROW(NAME, T, TO, EXPR)                                                                  \
  static KF_HOT void NAME(const void *va, const void *vb, void *vo, int64_t n, int mode) {         \
    const T *pa = va, *pb = vb;                                                                    \
    TO *po = vo;                                                                                   \
    if (mode == KF_VV) {                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T x = pa[i], y = pb[i];                                                                    \
        po[i] = (EXPR);                                                                            \
      }                                                                                            \
    } else if (mode == KF_VS) {                                                                    \
      const T y = pb[0];                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T x = pa[i];                                                                               \
        po[i] = (EXPR);                                                                            \
      }                                                                                            \
    } else {                                                                                       \
      const T x = pa[0];                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                            \
        T y = pb[i];                                                                               \
        po[i] = (EXPR);                                                                            \
      }                                                                                            \
    }                                                                                              \
  }

/* arithmetic and selects, per float type */
#define KF_FLOAT_ROWS(P, T, FLOOR, TRUNC)                                                          \
  KF_ROW(P##_add, T, T, x + y)                                                                     \
  KF_ROW(P##_sub, T, T, x - y)                                                                     \
  KF_ROW(P##_mul, T, T, x * y)                                                                     \
  KF_ROW(P##_div, T, T, x / y)                                                                     \
  KF_ROW(P##_max, T, T, x > y ? x : y)                                                             \
  KF_ROW(P##_min, T, T, x < y ? x : y)                                                             \
  KF_ROW(P##_floordiv, T, T, FLOOR(x / y))                                                         \
  KF_ROW(P##_truncdiv, T, T, TRUNC(x / y))

/* comparisons (ordered: NaN gives false everywhere, not_equal included) */
#define KF_CMP_ROWS(P, T)                                                                          \
  KF_ROW(P##_eq, T, uint8_t, x == y)                                                               \
  KF_ROW(P##_ne, T, uint8_t, x < y || x > y)                                                       \
  KF_ROW(P##_lt, T, uint8_t, x < y)                                                                \
  KF_ROW(P##_le, T, uint8_t, x <= y)                                                               \
  KF_ROW(P##_gt, T, uint8_t, x > y)                                                                \
  KF_ROW(P##_ge, T, uint8_t, x >= y)

/* wrapping integer arithmetic through the unsigned type U */
#define KF_INT_ROWS(P, T, U)                                                                       \
  KF_ROW(P##_add, T, T, (T)((U)x + (U)y))                                                          \
  KF_ROW(P##_sub, T, T, (T)((U)x - (U)y))                                                          \
  KF_ROW(P##_mul, T, T, (T)((U)x * (U)y))                                                          \
  KF_ROW(P##_max, T, T, x > y ? x : y)                                                             \
  KF_ROW(P##_min, T, T, x < y ? x : y)                                                             \
  KF_ROW(P##_and, T, T, x & y)                                                                     \
  KF_ROW(P##_or, T, T, x | y)                                                                      \
  KF_ROW(P##_xor, T, T, x ^ y)

KF_FLOAT_ROWS(f32, float, floorf, truncf)
KF_FLOAT_ROWS(f64, double, floor, trunc)
KF_CMP_ROWS(f32, float)
KF_CMP_ROWS(f64, double)
KF_INT_ROWS(i32, int32_t, uint32_t)
KF_INT_ROWS(i64, int64_t, uint64_t)
KF_CMP_ROWS(i32, int32_t)
KF_CMP_ROWS(i64, int64_t)
/* float32 floor/trunc remainders: a − q·b in double, as the generic path */
KF_ROW(f32_floormod, float, float, (float)((double)x - (double)floorf(x / y) * (double)y))
KF_ROW(f32_truncmod, float, float, (float)((double)x - (double)truncf(x / y) * (double)y))
KF_ROW(f64_pow, double, double, pow(x, y))
/* bool (bytes 0/1) */
KF_ROW(b_and, uint8_t, uint8_t, x & y)
KF_ROW(b_or, uint8_t, uint8_t, x | y)
KF_ROW(b_xor, uint8_t, uint8_t, x ^ y)
KF_ROW(b_eq, uint8_t, uint8_t, x == y)
KF_ROW(b_ne, uint8_t, uint8_t, x != y)

/* pow(x, 0.5): sqrt, but +0 for −0 and +inf for −inf; by blocks through a
 * buffer so that po may be pa. */
static KF_HOT void f32_pow_half(const float *pa, float *po, int64_t n) {
  float buf[256];
  for (int64_t i0 = 0; i0 < n; i0 += 256) {
    int64_t m = n - i0 < 256 ? n - i0 : 256;
    kvm_sqrt_f32(pa + i0, buf, m);
    for (int64_t i = 0; i < m; i++)
      po[i0 + i] = pa[i0 + i] == -__builtin_inff() ? __builtin_inff() : buf[i] + 0.0f;
  }
}

/* float32 power: a scalar exponent 2, 3, 0.5, 1 or 0 is done without powf
 * (pow's own special cases kept: pow(−0, .5) = +0, pow(−inf, .5) = +inf,
 * pow(NaN, 0) = 1). */
static KF_HOT void f32_pow(const void *va, const void *vb, void *vo, int64_t n, int mode) {
  const float *pa = va, *pb = vb;
  float *po = vo;
  if (mode == KF_VV) {
    for (int64_t i = 0; i < n; i++) po[i] = powf(pa[i], pb[i]);
    return;
  }
  if (mode == KF_SV) {
    const float x = pa[0];
    for (int64_t i = 0; i < n; i++) po[i] = powf(x, pb[i]);
    return;
  }
  const float y = pb[0];
  if (y == 2.0f) {
    for (int64_t i = 0; i < n; i++) po[i] = pa[i] * pa[i];
  } else if (y == 3.0f) {
    for (int64_t i = 0; i < n; i++) po[i] = pa[i] * pa[i] * pa[i];
  } else if (y == 0.5f) {
    f32_pow_half(pa, po, n);
  } else if (y == 1.0f) {
    for (int64_t i = 0; i < n; i++) po[i] = pa[i];
  } else if (y == 0.0f) {
    for (int64_t i = 0; i < n; i++) po[i] = 1.0f;
  } else {
    for (int64_t i = 0; i < n; i++) po[i] = powf(pa[i], y);
  }
}

typedef struct KfBinOp {
  KfRow fn;
  bool bool_out;
  int grain;
} KfBinOp;

static KfRow kf_cmp_row(KfKind k, int32_t op) {
#define KF_CMP_CASES(P)                                                                            \
  switch (op) {                                                                                    \
  case OP_EQUAL: return P##_eq;                                                                    \
  case OP_NOT_EQUAL: return P##_ne;                                                                \
  case OP_LESS: return P##_lt;                                                                     \
  case OP_LESS_EQUAL: return P##_le;                                                               \
  case OP_GREATER: return P##_gt;                                                                  \
  case OP_GREATER_EQUAL: return P##_ge;                                                            \
  default: return NULL;                                                                            \
  }
  switch (k) {
  case KF_F32: KF_CMP_CASES(f32)
  case KF_F64: KF_CMP_CASES(f64)
  case KF_I32: KF_CMP_CASES(i32)
  case KF_I64: KF_CMP_CASES(i64)
  case KF_BOOL: return op == OP_EQUAL ? b_eq : op == OP_NOT_EQUAL ? b_ne : NULL;
  default: return NULL;
  }
#undef KF_CMP_CASES
}

static KfRow kf_arith_row(KfKind k, int32_t op) {
#define KF_FLOAT_CASES(P)                                                                          \
  case OP_ADD: return P##_add;                                                                     \
  case OP_SUBTRACT: return P##_sub;                                                                \
  case OP_MULTIPLY: return P##_mul;                                                                \
  case OP_DIVIDE: return P##_div;                                                                  \
  case OP_MAXIMUM: return P##_max;                                                                 \
  case OP_MINIMUM: return P##_min;                                                                 \
  case OP_FLOOR_DIVIDE: return P##_floordiv;                                                       \
  case OP_TRUNC_DIVIDE: return P##_truncdiv;                                                       \
  case OP_POWER: return P##_pow;
#define KF_INT_CASES(P)                                                                            \
  case OP_ADD: return P##_add;                                                                     \
  case OP_SUBTRACT: return P##_sub;                                                                \
  case OP_MULTIPLY: return P##_mul;                                                                \
  case OP_MAXIMUM: return P##_max;                                                                 \
  case OP_MINIMUM: return P##_min;                                                                 \
  case OP_BITWISE_AND: return P##_and;                                                             \
  case OP_BITWISE_OR: return P##_or;                                                               \
  case OP_BITWISE_XOR: return P##_xor;
  switch (k) {
  case KF_F32:
    switch (op) {
      KF_FLOAT_CASES(f32)
    case OP_FLOOR_MOD: return f32_floormod;
    case OP_TRUNC_MOD: return f32_truncmod;
    default: return NULL;
    }
  case KF_F64:
    switch (op) {
      KF_FLOAT_CASES(f64)
    default: return NULL;
    }
  case KF_I32:
    switch (op) {
      KF_INT_CASES(i32)
    default: return NULL;
    }
  case KF_I64:
    switch (op) {
      KF_INT_CASES(i64)
    default: return NULL;
    }
  case KF_BOOL:
    switch (op) {
    case OP_BITWISE_AND: case OP_LOGICAL_AND: return b_and;
    case OP_BITWISE_OR: case OP_LOGICAL_OR: return b_or;
    case OP_BITWISE_XOR: case OP_LOGICAL_XOR: return b_xor;
    default: return NULL;
    }
  default: return NULL;
  }
#undef KF_FLOAT_CASES
#undef KF_INT_CASES
}

static KfBinOp kf_binary_for(KfKind k, int32_t op) {
  KfBinOp b = {kf_cmp_row(k, op), true, KF_GRAIN_CHEAP};
  if (b.fn) return b;
  b.fn = kf_arith_row(k, op);
  b.bool_out = false;
  if (op == OP_POWER) b.grain = KF_GRAIN_LIBM;
  return b;
}

/* ------------------------------------------------------------ broadcasting plan */

/* The collapsed iteration space of a broadcast binary op: `nd` outer dims
 * (extents ext, element strides sa/sb, 0 where broadcast) around one inner
 * row of `inner` elements in `mode`. */
typedef struct KfPlan {
  int32_t nd;
  int64_t inner;
  int mode;
  int64_t ext[TENSOR_MAX_NDIM], sa[TENSOR_MAX_NDIM], sb[TENSOR_MAX_NDIM];
} KfPlan;

/* Whether t (right-aligned against an ndim output) varies along output dim d. */
static bool kf_varies(const Tensor *t, int32_t ndim, int32_t d) {
  int32_t k = t->ndim - ndim + d;
  return k >= 0 && t->shape[k] != 1;
}

static void kf_plan(const Tensor *a, const Tensor *b, int32_t ndim, const int64_t *shape, KfPlan *p) {
  int64_t ext[TENSOR_MAX_NDIM];
  bool va[TENSOR_MAX_NDIM], vb[TENSOR_MAX_NDIM];
  int32_t k = 0;
  for (int32_t d = 0; d < ndim; d++) {
    if (shape[d] == 1) continue;
    bool xa = kf_varies(a, ndim, d), xb = kf_varies(b, ndim, d);
    if (k > 0 && va[k - 1] == xa && vb[k - 1] == xb) {
      ext[k - 1] *= shape[d];
    } else {
      ext[k] = shape[d];
      va[k] = xa;
      vb[k] = xb;
      k++;
    }
  }
  if (k == 0) { /* a single element */
    p->nd = 0;
    p->inner = 1;
    p->mode = KF_VV;
    return;
  }
  p->nd = k - 1;
  p->inner = ext[k - 1];
  p->mode = va[k - 1] ? (vb[k - 1] ? KF_VV : KF_VS) : KF_SV;
  int64_t stride_a = va[k - 1] ? ext[k - 1] : 1, stride_b = vb[k - 1] ? ext[k - 1] : 1;
  for (int32_t j = k - 2; j >= 0; j--) {
    p->ext[j] = ext[j];
    p->sa[j] = va[j] ? stride_a : 0;
    p->sb[j] = vb[j] ? stride_b : 0;
    if (va[j]) stride_a *= ext[j];
    if (vb[j]) stride_b *= ext[j];
  }
}

typedef struct KfBinJob {
  const KfPlan *plan;
  KfRow fn;
  const char *a, *b;
  char *o;
  size_t es, eo; /* input and output element sizes */
  int64_t numel;
} KfBinJob;

/* Output elements [lo·KF_BLOCK, hi·KF_BLOCK) as row segments. */
static void kf_bin_range(void *arg, int64_t lo, int64_t hi) {
  const KfBinJob *j = arg;
  const KfPlan *p = j->plan;
  int64_t i = lo * KF_BLOCK, end = hi * KF_BLOCK < j->numel ? hi * KF_BLOCK : j->numel;
  int64_t row = i / p->inner, col = i % p->inner;
  int64_t idx[TENSOR_MAX_NDIM], offa = 0, offb = 0;
  for (int32_t d = p->nd; d-- > 0;) {
    idx[d] = row % p->ext[d];
    row /= p->ext[d];
    offa += idx[d] * p->sa[d];
    offb += idx[d] * p->sb[d];
  }
  int64_t ca = p->mode == KF_SV ? 0 : 1, cb = p->mode == KF_VS ? 0 : 1;
  while (i < end) {
    int64_t seg = p->inner - col < end - i ? p->inner - col : end - i;
    j->fn(j->a + (size_t)(offa + col * ca) * j->es, j->b + (size_t)(offb + col * cb) * j->es,
          j->o + (size_t)i * j->eo, seg, p->mode);
    i += seg;
    col = 0;
    for (int32_t d = p->nd; d-- > 0;) { /* next row */
      offa += p->sa[d];
      offb += p->sb[d];
      if (++idx[d] < p->ext[d]) break;
      offa -= p->sa[d] * p->ext[d];
      offb -= p->sb[d] * p->ext[d];
      idx[d] = 0;
    }
  }
}

static bool kf_same_shape(const Tensor *t, int32_t ndim, const int64_t *shape) {
  return t->ndim == ndim && memcmp(t->shape, shape, (size_t)ndim * sizeof *shape) == 0;
}

/* The result tensor: a dying input of the right shape and dtype, else new. */
static Tensor *kf_binary_output(KernelCtx *c, DType odt, int32_t ndim, const int64_t *shape) {
  for (uint32_t i = 0; i < 2; i++) {
    const Tensor *t = c->inputs[i];
    if (dtype_eq(t->dtype, odt) && kf_same_shape(t, ndim, shape)) {
      Tensor *o = kernel_take_input(c, i);
      if (o) return o;
    }
  }
  TensorError e = TENSOR_OK;
  Tensor *o = tensor_new_checked(odt, ndim, shape, &e);
  if (!o) kernel_fail(c, "%s: cannot allocate the result: %s", c->op->name, tensor_error_message(e));
  return o;
}

int kfast_binary(KernelCtx *c) {
  if (!kfast_enabled() || c->ninputs != 2 || !c->inputs[0] || !c->inputs[1]) return KFAST_DECLINED;
  const Tensor *a = c->inputs[0], *b = c->inputs[1];
  if (!dtype_eq(a->dtype, b->dtype) || a->ndim > TENSOR_MAX_NDIM || b->ndim > TENSOR_MAX_NDIM)
    return KFAST_DECLINED;
  KfBinOp op = kf_binary_for(kf_kind(a->dtype), c->op_id);
  int32_t ndim;
  int64_t shape[TENSOR_MAX_NDIM];
  if (!op.fn || !kernel_broadcast_shape(a, b, &ndim, shape)) return KFAST_DECLINED;
  if (c->op_id == OP_POWER && b->numel == 1 && kf_kind(b->dtype) == KF_F32) {
    float y = *(const float *)b->data; /* f32_pow's cheap exponents */
    if (y == 2.0f || y == 3.0f || y == 0.5f || y == 1.0f || y == 0.0f) op.grain = KF_GRAIN_CHEAP;
  }
  DType odt = op.bool_out ? DT_BOOL_T : a->dtype;
  /* a and b stay valid after a take: the taken tensor becomes the output */
  Tensor *o = kf_binary_output(c, odt, ndim, shape);
  if (!o) return KERNEL_ERROR;
  if (o->numel > 0) {
    KfPlan plan;
    kf_plan(a, b, ndim, shape, &plan);
    KfBinJob j = {.plan = &plan, .fn = op.fn, .a = a->data, .b = b->data, .o = o->data,
                  .es = dtype_size(a->dtype), .eo = dtype_size(odt), .numel = o->numel};
    kernel_parallel_for(c, (o->numel + KF_BLOCK - 1) / KF_BLOCK, op.grain, kf_bin_range, &j);
  }
  kernel_set_output(c, o);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ unary maps */

typedef void (*KfMap)(const void *x, void *y, int64_t n);

#define KF_MAP(NAME, T, TO, EXPR)                                                                  \
  static KF_HOT void NAME(const void *vx, void *vy, int64_t n) {                                   \
    const T *px = vx;                                                                              \
    TO *py = vy;                                                                                   \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T x = px[i];                                                                                 \
      py[i] = (EXPR);                                                                              \
    }                                                                                              \
  }
/* the same without cloning, for loops of scalar libm calls */
#define KF_MAP_LIBM(NAME, T, FN)                                                                   \
  static void NAME(const void *vx, void *vy, int64_t n) {                                          \
    const T *px = vx;                                                                              \
    T *py = vy;                                                                                    \
    for (int64_t i = 0; i < n; i++) py[i] = FN(px[i]);                                             \
  }
#define KF_MAP_VM(NAME, FN)                                                                        \
  static void NAME(const void *vx, void *vy, int64_t n) { FN(vx, vy, n); }

/* round half away from zero, exactly roundf/round: x − trunc(x) is exact,
 * and adding ±0 of x's sign keeps trunc's signed zero */
static inline float kf_roundf(float x) {
  float t = truncf(x);
  return t + copysignf(fabsf(x - t) >= 0.5f ? 1.0f : 0.0f, x);
}
static inline double kf_round(double x) {
  double t = trunc(x);
  return t + copysign(fabs(x - t) >= 0.5 ? 1.0 : 0.0, x);
}

#define KF_FLOAT_MAPS(P, T, FLOOR, CEIL, TRUNC, ROUND, FABS)                                       \
  KF_MAP(P##_neg, T, T, -x)                                                                        \
  KF_MAP(P##_abs, T, T, FABS(x))                                                                   \
  KF_MAP(P##_sign, T, T, x > 0 ? (T)1 : x < 0 ? (T)-1 : (T)0)                                      \
  KF_MAP(P##_floor, T, T, FLOOR(x))                                                                \
  KF_MAP(P##_ceil, T, T, CEIL(x))                                                                  \
  KF_MAP(P##_trunc, T, T, TRUNC(x))                                                                \
  KF_MAP(P##_round, T, T, ROUND(x))                                                                \
  KF_MAP(P##_copy, T, T, x)                                                                        \
  KF_MAP(P##_zeros, T, T, ((void)x, (T)0))                                                         \
  KF_MAP(P##_ones, T, T, ((void)x, (T)1))                                                          \
  KF_MAP(P##_isnan, T, uint8_t, x != x)                                                            \
  KF_MAP(P##_isinf, T, uint8_t, FABS(x) == (T)__builtin_inf())                                     \
  KF_MAP(P##_isfinite, T, uint8_t, FABS(x) < (T)__builtin_inf())

KF_FLOAT_MAPS(f32, float, floorf, ceilf, truncf, kf_roundf, fabsf)
KF_FLOAT_MAPS(f64, double, floor, ceil, trunc, kf_round, fabs)

/* sqrt and 1/sqrt through kvm_sqrt_* (vsqrt); y may be x */
#define KF_SQRT_MAPS(P, T)                                                                         \
  KF_MAP(P##_recip, T, T, (T)1 / x)                                                                \
  static void P##_sqrt(const void *x, void *y, int64_t n) { kvm_sqrt_##P(x, y, n); }               \
  static void P##_rsqrt(const void *x, void *y, int64_t n) { /* by L1-sized blocks */              \
    for (int64_t i = 0; i < n; i += 1024) {                                                        \
      int64_t m = n - i < 1024 ? n - i : 1024;                                                     \
      kvm_sqrt_##P((const T *)x + i, (T *)y + i, m);                                               \
      P##_recip((T *)y + i, (T *)y + i, m);                                                        \
    }                                                                                              \
  }
KF_SQRT_MAPS(f32, float)
KF_SQRT_MAPS(f64, double)

KF_MAP_VM(f32_exp, kvm_exp_f32)
KF_MAP_VM(f32_log, kvm_log_f32)
KF_MAP_VM(f32_log2, kvm_log2_f32)
KF_MAP_VM(f32_log10, kvm_log10_f32)
KF_MAP_VM(f32_tanh, kvm_tanh_f32)
KF_MAP_VM(f32_erf, kvm_erf_f32)
KF_MAP_VM(f32_sigmoid, kvm_sigmoid_f32)
KF_MAP_VM(f32_fast_exp, kvm_fast_exp_f32)
KF_MAP_VM(f32_fast_tanh, kvm_fast_tanh_f32)
KF_MAP_VM(f32_fast_erf, kvm_fast_erf_f32)

static inline double kf_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

#define KF_LIBM_MAPS(P, T, S)                                                                      \
  KF_MAP_LIBM(P##_sin, T, sin##S)                                                                  \
  KF_MAP_LIBM(P##_cos, T, cos##S)                                                                  \
  KF_MAP_LIBM(P##_tan, T, tan##S)                                                                  \
  KF_MAP_LIBM(P##_asin, T, asin##S)                                                                \
  KF_MAP_LIBM(P##_acos, T, acos##S)                                                                \
  KF_MAP_LIBM(P##_atan, T, atan##S)                                                                \
  KF_MAP_LIBM(P##_sinh, T, sinh##S)                                                                \
  KF_MAP_LIBM(P##_cosh, T, cosh##S)                                                                \
  KF_MAP_LIBM(P##_asinh, T, asinh##S)                                                              \
  KF_MAP_LIBM(P##_acosh, T, acosh##S)                                                              \
  KF_MAP_LIBM(P##_atanh, T, atanh##S)

KF_LIBM_MAPS(f32, float, f)
KF_LIBM_MAPS(f64, double, )
KF_MAP_LIBM(f64_exp, double, exp)
KF_MAP_LIBM(f64_log, double, log)
KF_MAP_LIBM(f64_log2, double, log2)
KF_MAP_LIBM(f64_log10, double, log10)
KF_MAP_LIBM(f64_tanh, double, tanh)
KF_MAP_LIBM(f64_erf, double, erf)
KF_MAP_LIBM(f64_sigmoid, double, kf_sigmoid)

#define KF_INT_MAPS(P, T, U)                                                                       \
  KF_MAP(P##_neg, T, T, (T)((U)0 - (U)x))                                                          \
  KF_MAP(P##_abs, T, T, x < 0 ? (T)((U)0 - (U)x) : x)                                              \
  KF_MAP(P##_copy, T, T, x)                                                                        \
  KF_MAP(P##_zeros, T, T, ((void)x, (T)0))                                                         \
  KF_MAP(P##_ones, T, T, ((void)x, (T)1))

KF_INT_MAPS(i32, int32_t, uint32_t)
KF_INT_MAPS(i64, int64_t, uint64_t)

typedef struct KfUnOp {
  KfMap fn;
  bool bool_out;
  int grain;
} KfUnOp;

/* Ops whose float map is the same table for float32 and float64. */
#define KF_FLOAT_UNARY(P)                                                                          \
  case OP_NEGATIVE: return (KfUnOp){P##_neg, false, KF_GRAIN_CHEAP};                               \
  case OP_ABS: return (KfUnOp){P##_abs, false, KF_GRAIN_CHEAP};                                    \
  case OP_SIGN: return (KfUnOp){P##_sign, false, KF_GRAIN_CHEAP};                                  \
  case OP_SQRT: return (KfUnOp){P##_sqrt, false, KF_GRAIN_CHEAP};                                  \
  case OP_RSQRT: return (KfUnOp){P##_rsqrt, false, KF_GRAIN_CHEAP};                                \
  case OP_FLOOR: return (KfUnOp){P##_floor, false, KF_GRAIN_CHEAP};                                \
  case OP_CEIL: return (KfUnOp){P##_ceil, false, KF_GRAIN_CHEAP};                                  \
  case OP_TRUNC: return (KfUnOp){P##_trunc, false, KF_GRAIN_CHEAP};                                \
  case OP_ROUND: return (KfUnOp){P##_round, false, KF_GRAIN_CHEAP};                                \
  case OP_COPY: return (KfUnOp){P##_copy, false, KF_GRAIN_CHEAP};                                  \
  case OP_ZEROS_LIKE: return (KfUnOp){P##_zeros, false, KF_GRAIN_CHEAP};                           \
  case OP_ONES_LIKE: return (KfUnOp){P##_ones, false, KF_GRAIN_CHEAP};                             \
  case OP_ISNAN: return (KfUnOp){P##_isnan, true, KF_GRAIN_CHEAP};                                 \
  case OP_ISINF: return (KfUnOp){P##_isinf, true, KF_GRAIN_CHEAP};                                 \
  case OP_ISFINITE: return (KfUnOp){P##_isfinite, true, KF_GRAIN_CHEAP};                           \
  case OP_SIN: return (KfUnOp){P##_sin, false, KF_GRAIN_LIBM};                                     \
  case OP_COS: return (KfUnOp){P##_cos, false, KF_GRAIN_LIBM};                                     \
  case OP_TAN: return (KfUnOp){P##_tan, false, KF_GRAIN_LIBM};                                     \
  case OP_ASIN: return (KfUnOp){P##_asin, false, KF_GRAIN_LIBM};                                   \
  case OP_ACOS: return (KfUnOp){P##_acos, false, KF_GRAIN_LIBM};                                   \
  case OP_ATAN: return (KfUnOp){P##_atan, false, KF_GRAIN_LIBM};                                   \
  case OP_SINH: return (KfUnOp){P##_sinh, false, KF_GRAIN_LIBM};                                   \
  case OP_COSH: return (KfUnOp){P##_cosh, false, KF_GRAIN_LIBM};                                   \
  case OP_ASINH: return (KfUnOp){P##_asinh, false, KF_GRAIN_LIBM};                                 \
  case OP_ACOSH: return (KfUnOp){P##_acosh, false, KF_GRAIN_LIBM};                                 \
  case OP_ATANH: return (KfUnOp){P##_atanh, false, KF_GRAIN_LIBM};
#define KF_TRANSC_UNARY(P, G)                                                                      \
  case OP_EXP: return (KfUnOp){P##_exp, false, G};                                                 \
  case OP_LOG: return (KfUnOp){P##_log, false, G};                                                 \
  case OP_LOG2: return (KfUnOp){P##_log2, false, G};                                               \
  case OP_LOG10: return (KfUnOp){P##_log10, false, G};                                             \
  case OP_TANH: return (KfUnOp){P##_tanh, false, G};                                               \
  case OP_ERF: return (KfUnOp){P##_erf, false, G};                                                 \
  case OP_SIGMOID: return (KfUnOp){P##_sigmoid, false, G};
#define KF_INT_UNARY(P)                                                                            \
  case OP_NEGATIVE: return (KfUnOp){P##_neg, false, KF_GRAIN_CHEAP};                               \
  case OP_ABS: return (KfUnOp){P##_abs, false, KF_GRAIN_CHEAP};                                    \
  case OP_COPY: return (KfUnOp){P##_copy, false, KF_GRAIN_CHEAP};                                  \
  case OP_ZEROS_LIKE: return (KfUnOp){P##_zeros, false, KF_GRAIN_CHEAP};                           \
  case OP_ONES_LIKE: return (KfUnOp){P##_ones, false, KF_GRAIN_CHEAP};

static KfUnOp kf_unary_for(KfKind k, int32_t op) {
  KfUnOp none = {NULL, false, 0};
  switch (k) {
  case KF_F32:
    switch (op) {
      KF_FLOAT_UNARY(f32)
      KF_TRANSC_UNARY(f32, KF_GRAIN_MATH)
    /* TVM's polynomials on float32 (spec/passes.md 11.3) */
    case OP_FAST_EXP: return (KfUnOp){f32_fast_exp, false, KF_GRAIN_MATH};
    case OP_FAST_TANH: return (KfUnOp){f32_fast_tanh, false, KF_GRAIN_MATH};
    case OP_FAST_ERF: return (KfUnOp){f32_fast_erf, false, KF_GRAIN_MATH};
    default: return none;
    }
  case KF_F64:
    switch (op) {
      KF_FLOAT_UNARY(f64)
      KF_TRANSC_UNARY(f64, KF_GRAIN_LIBM)
    /* on float64 TVM's fast functions are the exact ones */
    case OP_FAST_EXP: return (KfUnOp){f64_exp, false, KF_GRAIN_LIBM};
    case OP_FAST_TANH: return (KfUnOp){f64_tanh, false, KF_GRAIN_LIBM};
    case OP_FAST_ERF: return (KfUnOp){f64_erf, false, KF_GRAIN_LIBM};
    default: return none;
    }
  case KF_I32:
    switch (op) {
      KF_INT_UNARY(i32)
    default: return none;
    }
  case KF_I64:
    switch (op) {
      KF_INT_UNARY(i64)
    default: return none;
    }
  default: return none;
  }
}

typedef struct KfUnJob {
  KfMap fn;
  const char *x;
  char *y;
  size_t es, eo;
  int64_t numel;
} KfUnJob;

static void kf_un_range(void *arg, int64_t lo, int64_t hi) {
  const KfUnJob *j = arg;
  int64_t i = lo * KF_BLOCK, end = hi * KF_BLOCK < j->numel ? hi * KF_BLOCK : j->numel;
  j->fn(j->x + (size_t)i * j->es, j->y + (size_t)i * j->eo, end - i);
}

int kfast_unary(KernelCtx *c) {
  if (!kfast_enabled() || c->ninputs != 1 || !c->inputs[0]) return KFAST_DECLINED;
  const Tensor *x = c->inputs[0];
  KfUnOp op = kf_unary_for(kf_kind(x->dtype), c->op_id);
  if (!op.fn) return KFAST_DECLINED;
  DType odt = op.bool_out ? DT_BOOL_T : x->dtype;
  Tensor *o = NULL;
  if (!op.bool_out && c->op_id != OP_COPY) o = kernel_take_input(c, 0); /* x stays valid */
  if (!o) {
    TensorError e = TENSOR_OK;
    o = tensor_new_checked(odt, x->ndim, x->shape, &e);
    if (!o) return kernel_fail(c, "%s: cannot allocate the result: %s", c->op->name, tensor_error_message(e));
  }
  KfUnJob j = {.fn = op.fn, .x = x->data, .y = o->data, .es = dtype_size(x->dtype), .eo = dtype_size(odt),
               .numel = o->numel};
  kernel_parallel_for(c, (o->numel + KF_BLOCK - 1) / KF_BLOCK, op.grain, kf_un_range, &j);
  kernel_set_output(c, o);
  return KERNEL_OK;
}
