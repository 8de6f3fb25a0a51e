/* ops/kernels/k_nn.c — neural-network kernels outside conv/dense/pool/batch_norm:
 * activations (nn.relu, nn.leaky_relu, nn.prelu, clip), nn.bias_add,
 * nn.dropout, the softmax family, nn.layer_norm, nn.instance_norm,
 * nn.group_norm, nn.l2_normalize, nn.lrn, nn.pad, nn.mirror_pad,
 * image.resize1d/2d/3d, image.crop_and_resize, image.affine_grid, nn.upsampling and nn.upsampling3d (spec/ops.md §4.2, §7.4, §10–12).
 *
 * Activations and bias_add are typed loops over every dtype (KU_SWITCH),
 * integer arithmetic wrapping through the unsigned type, and write in place
 * into a dying input. Everything float-only computes natively in float32 or
 * float64; float16/bfloat16 go through a float32 copy. Selects follow §2:
 * relu(NaN) = 0, clip(NaN) = a_max. Softmax is max-subtracted and works on
 * any axis: rows when the axis is innermost, else column tiles with the
 * running max and sum kept on the stack; nn.fast_softmax takes TVM's
 * fast_exp polynomial (ops/kernels/k_fastmath.h) on float32. Normalisations accumulate their
 * statistics in double (two passes: mean, then biased variance). Resize
 * computes source coordinates in float32 exactly as TVM's topi does, with
 * every tap clamped to the image (edge replication).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "ir/mem.h"
#include "ops/kernels/k_fastmath.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_util.h"
#include "ops/op_ids.h"
#include "ops/resize.h"

#define MAXR TENSOR_MAX_NDIM

/* ------------------------------------------------------------ shared plumbing */

/* Output for an elementwise op on input 0 with the same dtype and shape:
 * the input itself when it is dying, else a new tensor. */
static Tensor *same_output(KernelCtx *c) {
  Tensor *o = kernel_take_input(c, 0);
  if (o) {
    kernel_set_output(c, o);
    return o;
  }
  return kernel_output_like(c, c->inputs[0]);
}

/* For float16/bfloat16 data: runs `fn` on float32 copies and rounds back. */
typedef int (*NativeFn)(KernelCtx *c, const Tensor *x, Tensor *o);

static int via_f32(KernelCtx *c, const Tensor *x, NativeFn fn) {
  Tensor *tmp;
  const Tensor *w = ku_float_in(x, &tmp);
  Tensor *o = w ? tensor_new(DT_F32, x->ndim, x->shape) : NULL;
  if (!o) {
    tensor_release(tmp);
    return kernel_fail(c, "%s: out of memory", c->op->name);
  }
  int rc = fn(c, w, o);
  tensor_release(tmp);
  if (rc != KERNEL_OK) {
    tensor_release(o);
    return rc;
  }
  return ku_float_out(c, o, x->dtype);
}

/* Runs a native elementwise-shaped kernel: in place when possible, through
 * float32 for half types. */
static int run_native(KernelCtx *c, NativeFn fn) {
  const Tensor *x = c->inputs[0];
  KuType k = ku_type(x->dtype);
  if (k == KU_OTHER) return kernel_fail(c, "%s: unsupported dtype", c->op->name);
  if (k == KU_F16 || k == KU_BF16) return via_f32(c, x, fn);
  const Tensor *in = c->inputs[0]; /* stays valid when taken: it is then the output */
  Tensor *o = same_output(c);
  return o ? fn(c, in, o) : KERNEL_ERROR;
}

/* ------------------------------------------------------------ activations */

typedef struct ActJob {
  const void *x;
  void *y;
  int32_t op;
  KuType kt;
  double a, b;      /* leaky alpha / clip bounds */
  int64_t lo_i, hi_i; /* clip bounds for integers (saturated) */
} ActJob;

#define ACT_LOOP(T, U)                                                                         \
  do {                                                                                         \
    const T *restrict x = (const T *)j->x;                                                     \
    T *y = (T *)j->y;                                                                          \
    switch (j->op) {                                                                           \
    case OP_NN_RELU:                                                                           \
      for (int64_t i = lo; i < hi; i++) y[i] = x[i] > (T)0 ? x[i] : (T)0;                      \
      break;                                                                                   \
    case OP_NN_LEAKY_RELU: {                                                                   \
      T al = fl ? (T)j->a : (T)(int64_t)j->a;                                                  \
      for (int64_t i = lo; i < hi; i++) y[i] = x[i] > (T)0 ? x[i] : (T)((U)x[i] * (U)al);      \
    } break;                                                                                   \
    case OP_CLIP: {                                                                            \
      T l = fl ? (T)j->a : (T)j->lo_i, h = fl ? (T)j->b : (T)j->hi_i;                          \
      for (int64_t i = lo; i < hi; i++) {                                                      \
        T v = x[i] < h ? x[i] : h;                                                             \
        y[i] = v > l ? v : l;                                                                  \
      }                                                                                        \
    } break;                                                                                   \
    }                                                                                          \
  } while (0)

/* float32 ReLU, vectorised (the generic loop above stays scalar at -O2); same
 * select as ACT_LOOP: NaN and -0 give +0 */
static KHOT void relu_f32(float *y, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

static void act_range(void *arg, int64_t lo, int64_t hi) {
  const ActJob *j = arg;
  if (j->kt == KU_F32 && j->op == OP_NN_RELU) {
    relu_f32((float *)j->y + lo, (const float *)j->x + lo, hi - lo);
    return;
  }
  bool fl = j->kt == KU_F32 || j->kt == KU_F64;
  switch (j->kt) {
  case KU_F32: ACT_LOOP(float, float); break;
  case KU_F64: ACT_LOOP(double, double); break;
  case KU_I8: ACT_LOOP(int8_t, uint8_t); break;
  case KU_I16: ACT_LOOP(int16_t, uint16_t); break;
  case KU_I32: ACT_LOOP(int32_t, uint32_t); break;
  case KU_I64: ACT_LOOP(int64_t, uint64_t); break;
  case KU_BOOL: case KU_U8: ACT_LOOP(uint8_t, uint8_t); break;
  case KU_U16: ACT_LOOP(uint16_t, uint16_t); break;
  case KU_U32: ACT_LOOP(uint32_t, uint32_t); break;
  case KU_U64: ACT_LOOP(uint64_t, uint64_t); break;
  default: break;
  }
}

/* A double bound saturated into the integer dtype (clip's bounds are cast
 * to the data dtype first; ±inf saturate: tensor_f64_to_int). Not used for
 * float data (0: converting ±inf to an integer would be undefined). */
static int64_t sat_bound(double v, DType dt) {
  if (dtype_is_float(dt)) return 0;
  if (dtype_is_bool(dt)) return v >= 1; /* NaN and below 1: False */
  return tensor_f64_to_int(dt, v);
}

static int act_native(KernelCtx *c, const Tensor *x, Tensor *o) {
  ActJob j = {.x = x->data, .y = o->data, .op = c->op_id, .kt = ku_type(x->dtype)};
  if (c->op_id == OP_NN_LEAKY_RELU) j.a = kernel_attr_double(c, "alpha", 0.25);
  if (c->op_id == OP_CLIP) {
    j.a = kernel_attr_double(c, "a_min", -INFINITY);
    j.b = kernel_attr_double(c, "a_max", INFINITY);
    j.lo_i = sat_bound(j.a, x->dtype);
    j.hi_i = sat_bound(j.b, x->dtype);
    if (j.kt == KU_F32) { /* bounds first cast to float32 (saturating to ±inf) */
      j.a = (float)j.a;
      j.b = (float)j.b;
    }
  }
  kernel_parallel_for(c, x->numel, 32768, act_range, &j);
  return KERNEL_OK;
}

int kernel_NN_RELU(KernelCtx *c);
int kernel_NN_RELU(KernelCtx *c) { return run_native(c, act_native); }
int kernel_NN_LEAKY_RELU(KernelCtx *c);
int kernel_NN_LEAKY_RELU(KernelCtx *c) { return run_native(c, act_native); }
int kernel_CLIP(KernelCtx *c);
int kernel_CLIP(KernelCtx *c) { return run_native(c, act_native); }

/* ------------------------------------------------------------ per-channel ops */

/* (outer, n, inner) of `axis` (normalised in place); false if out of range. */
static bool split_axis(const Tensor *x, int64_t *axis, int64_t *outer, int64_t *n, int64_t *inner) {
  if (!ku_axis(axis, x->ndim)) return false;
  *outer = ku_prod(x->shape, 0, *axis);
  *n = x->shape[*axis];
  *inner = ku_prod(x->shape, *axis + 1, x->ndim);
  return true;
}

typedef struct ChanJob {
  const void *x, *v; /* data, per-channel vector */
  void *y;
  int32_t op;
  KuType kt;
  int64_t n, inner;
} ChanJob;

#define CHAN_LOOP(T, U)                                                                        \
  do {                                                                                         \
    const T *restrict x = (const T *)j->x, *restrict v = (const T *)j->v;                      \
    T *y = (T *)j->y;                                                                          \
    if (j->inner == 1) { /* channels innermost (dense's bias): runs of whole rows, vectorised */ \
      for (int64_t r = lo, len; r < hi; r += len) {                                            \
        int64_t c0 = r % j->n;                                                                 \
        len = j->n - c0 < hi - r ? j->n - c0 : hi - r;           \
        const T *xs = x + r, *vs = v + c0;                                                     \
        T *ys = y + r;                                                                         \
        if (j->op == OP_NN_BIAS_ADD)                                                           \
          for (int64_t i = 0; i < len; i++) ys[i] = (T)((U)xs[i] + (U)vs[i]);                  \
        else                                                                                   \
          for (int64_t i = 0; i < len; i++) ys[i] = xs[i] > (T)0 ? xs[i] : (T)((U)xs[i] * (U)vs[i]); \
      }                                                                                        \
      break;                                                                                   \
    }                                                                                          \
    for (int64_t r = lo; r < hi; r++) { /* r = outer * n + channel */                          \
      T b = v[r % j->n];                                                                       \
      const T *xs = x + r * j->inner;                                                          \
      T *ys = y + r * j->inner;                                                                \
      if (j->op == OP_NN_BIAS_ADD)                                                             \
        for (int64_t i = 0; i < j->inner; i++) ys[i] = (T)((U)xs[i] + (U)b);                   \
      else                                                                                     \
        for (int64_t i = 0; i < j->inner; i++) ys[i] = xs[i] > (T)0 ? xs[i] : (T)((U)xs[i] * (U)b); \
    }                                                                                          \
  } while (0)

static void chan_range(void *arg, int64_t lo, int64_t hi) {
  const ChanJob *j = arg;
  switch (j->kt) {
  case KU_F32: CHAN_LOOP(float, float); break;
  case KU_F64: CHAN_LOOP(double, double); break;
  case KU_I8: CHAN_LOOP(int8_t, uint8_t); break;
  case KU_I16: CHAN_LOOP(int16_t, uint16_t); break;
  case KU_I32: CHAN_LOOP(int32_t, uint32_t); break;
  case KU_I64: CHAN_LOOP(int64_t, uint64_t); break;
  case KU_BOOL: case KU_U8: CHAN_LOOP(uint8_t, uint8_t); break;
  case KU_U16: CHAN_LOOP(uint16_t, uint16_t); break;
  case KU_U32: CHAN_LOOP(uint32_t, uint32_t); break;
  case KU_U64: CHAN_LOOP(uint64_t, uint64_t); break;
  default: break;
  }
}

/* A one-value bias behind a channel axis the types left open (?): TVM lowers
 * bias_add to a broadcasting add (relayc's CanonicalizeOps too), so the value
 * is added to every channel. prelu's alpha must have one value per channel. */
static bool bias_broadcasts(const KernelCtx *c, const Tensor *v, int64_t n) {
  return c->op_id == OP_NN_BIAS_ADD && v->numel == 1 && n != 1;
}

/* The per-channel vector as n values of dtype dt: v itself when it already
 * is, else a new tensor in *made (half data computes in float32; a one-value
 * bias repeats). */
static const Tensor *chan_vector(const Tensor *v, DType dt, int64_t n, Tensor **made) {
  *made = NULL;
  if (v->numel == n && dtype_eq(v->dtype, dt)) return v;
  Tensor *t = tensor_new(dt, 1, &n);
  if (!t) return NULL;
  size_t es = dtype_size(dt);
  if (v->numel == n) ku_cast_n(v->dtype, v->data, dt, t->data, n);
  else
    for (int64_t i = 0; i < n; i++) ku_cast(v->dtype, v->data, dt, (char *)t->data + (size_t)i * es);
  return *made = t;
}

static int chan_native(KernelCtx *c, const Tensor *x, Tensor *o) {
  int64_t axis = kernel_attr_int(c, "axis", 1), outer, n, inner;
  if (!split_axis(x, &axis, &outer, &n, &inner))
    return kernel_fail(c, "%s: axis %lld is out of range", c->op->name, (long long)kernel_attr_int(c, "axis", 1));
  const Tensor *given = c->inputs[1];
  if (given->numel != n && !bias_broadcasts(c, given, n))
    return kernel_fail(c, "%s: expected %lld values along axis %lld, got %lld", c->op->name, (long long)n,
                       (long long)axis, (long long)given->numel);
  Tensor *vt;
  const Tensor *v = chan_vector(given, x->dtype, n, &vt);
  if (!v) return kernel_fail(c, "%s: out of memory", c->op->name);
  ChanJob j = {.x = x->data, .v = v->data, .y = o->data, .op = c->op_id, .kt = ku_type(x->dtype), .n = n, .inner = inner};
  kernel_parallel_for(c, outer * n, 1 + 32768 / (inner + 1), chan_range, &j);
  tensor_release(vt);
  return KERNEL_OK;
}

static int chan_kernel(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *v = c->inputs[1];
  bool half = ku_is_half(x->dtype);
  if (!half && !dtype_eq(x->dtype, v->dtype)) return kernel_fail(c, "%s: operands have different dtypes", c->op->name);
  return run_native(c, chan_native);
}

int kernel_NN_BIAS_ADD(KernelCtx *c);
int kernel_NN_BIAS_ADD(KernelCtx *c) { return chan_kernel(c); }
int kernel_NN_PRELU(KernelCtx *c);
int kernel_NN_PRELU(KernelCtx *c) { return chan_kernel(c); }

int kernel_NN_DROPOUT(KernelCtx *c);
int kernel_NN_DROPOUT(KernelCtx *c) {
  Tensor *x = c->inputs[0];
  Tensor *mask = tensor_new(x->dtype, x->ndim, x->shape);
  if (!mask) return kernel_fail(c, "nn.dropout: out of memory");
  size_t es = dtype_size(x->dtype);
  char one[16] = {0};
  int64_t v = 1;
  if (es <= sizeof one) ku_cast(DT_I64, &v, x->dtype, one);
  for (int64_t i = 0; i < mask->numel; i++) ku_copy1((char *)mask->data + (size_t)i * es, one, es);
  Tensor *both[2] = {tensor_retain(x), mask}; /* inference: data passes through */
  kernel_set_tuple(c, both, 2);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ softmax family */

enum { SM_TILE = 64 };

typedef struct SmJob {
  const void *x;
  void *y;
  int64_t n, inner, ntiles;
  bool log;
} SmJob;

#define SM_ROWS(T, EXP, LOG)                                                                   \
  do {                                                                                         \
    for (int64_t r = lo; r < hi; r++) {                                                        \
      const T *x = (const T *)j->x + r * n;                                                    \
      T *y = (T *)j->y + r * n;                                                                \
      T m = x[0];                                                                              \
      for (int64_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m;                                 \
      T s = 0;                                                                                 \
      if (j->log) {                                                                            \
        for (int64_t i = 0; i < n; i++) s += EXP(x[i] - m);                                    \
        T ls = LOG(s);                                                                         \
        for (int64_t i = 0; i < n; i++) y[i] = x[i] - m - ls;                                  \
      } else {                                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                      \
          T e = EXP(x[i] - m);                                                                 \
          y[i] = e;                                                                            \
          s += e;                                                                              \
        }                                                                                      \
        T inv = (T)1 / s;                                                                      \
        for (int64_t i = 0; i < n; i++) y[i] *= inv;                                           \
      }                                                                                        \
    }                                                                                          \
  } while (0)

/* work item = (outer, column tile); column stats on the stack */
#define SM_COLS(T, EXP, LOG)                                                                   \
  do {                                                                                         \
    for (int64_t w = lo; w < hi; w++) {                                                        \
      int64_t a = w / j->ntiles, c0 = (w % j->ntiles) * SM_TILE;                               \
      int64_t c1 = c0 + SM_TILE < inner ? c0 + SM_TILE : inner, wd = c1 - c0;                  \
      const T *x = (const T *)j->x + a * n * inner + c0;                                       \
      T *y = (T *)j->y + a * n * inner + c0;                                                   \
      T m[SM_TILE], s[SM_TILE];                                                                \
      for (int64_t i = 0; i < wd; i++) { m[i] = x[i]; s[i] = 0; }                              \
      for (int64_t k = 1; k < n; k++)                                                          \
        for (int64_t i = 0; i < wd; i++) m[i] = x[k * inner + i] > m[i] ? x[k * inner + i] : m[i]; \
      for (int64_t k = 0; k < n; k++)                                                          \
        for (int64_t i = 0; i < wd; i++) {                                                     \
          T e = EXP(x[k * inner + i] - m[i]);                                                  \
          if (!j->log) y[k * inner + i] = e;                                                   \
          s[i] += e;                                                                           \
        }                                                                                      \
      for (int64_t i = 0; i < wd; i++) s[i] = j->log ? LOG(s[i]) : (T)1 / s[i];                \
      for (int64_t k = 0; k < n; k++)                                                          \
        for (int64_t i = 0; i < wd; i++)                                                       \
          y[k * inner + i] = j->log ? x[k * inner + i] - m[i] - s[i] : y[k * inner + i] * s[i]; \
    }                                                                                          \
  } while (0)

static void sm_rows_f32(void *arg, int64_t lo, int64_t hi) {
  const SmJob *j = arg;
  int64_t n = j->n;
  SM_ROWS(float, expf, logf);
}
static void sm_rows_f64(void *arg, int64_t lo, int64_t hi) {
  const SmJob *j = arg;
  int64_t n = j->n;
  SM_ROWS(double, exp, log);
}
static void sm_cols_f32(void *arg, int64_t lo, int64_t hi) {
  const SmJob *j = arg;
  int64_t n = j->n, inner = j->inner;
  SM_COLS(float, expf, logf);
}
static void sm_cols_f64(void *arg, int64_t lo, int64_t hi) {
  const SmJob *j = arg;
  int64_t n = j->n, inner = j->inner;
  SM_COLS(double, exp, log);
}

/* nn.fast_softmax on float32: TVM's fast_exp (ops/kernels/k_fastmath.h) */
static void sm_rows_fast_f32(void *arg, int64_t lo, int64_t hi) {
  const SmJob *j = arg;
  int64_t n = j->n;
  SM_ROWS(float, kfm_fast_exp, logf);
}
static void sm_cols_fast_f32(void *arg, int64_t lo, int64_t hi) {
  const SmJob *j = arg;
  int64_t n = j->n, inner = j->inner;
  SM_COLS(float, kfm_fast_exp, logf);
}

static int softmax_native(KernelCtx *c, const Tensor *x, Tensor *o) {
  int64_t axis = kernel_attr_int(c, "axis", -1), outer, n, inner;
  if (!split_axis(x, &axis, &outer, &n, &inner))
    return kernel_fail(c, "%s: axis %lld is out of range", c->op->name, (long long)kernel_attr_int(c, "axis", -1));
  if (x->numel == 0) return KERNEL_OK;
  SmJob j = {.x = x->data, .y = o->data, .n = n, .inner = inner, .log = c->op_id == OP_NN_LOG_SOFTMAX};
  bool f64 = ku_type(x->dtype) == KU_F64;
  /* fast_exp is TVM's polynomial on float32 data only (float16 data computes
   * in float32 here, but its fast_exp is the exact exp) */
  bool fast = c->op_id == OP_NN_FAST_SOFTMAX && ku_type(x->dtype) == KU_F32 &&
              !(c->out_type && c->out_type->kind == TYPE_TENSOR && ku_is_half(c->out_type->tensor.dtype));
  if (inner == 1) {
    kernel_parallel_for(c, outer, 1 + 16384 / n, f64 ? sm_rows_f64 : fast ? sm_rows_fast_f32 : sm_rows_f32, &j);
  } else {
    j.ntiles = (inner + SM_TILE - 1) / SM_TILE;
    kernel_parallel_for(c, outer * j.ntiles, 1 + 16384 / (SM_TILE * n),
                        f64 ? sm_cols_f64 : fast ? sm_cols_fast_f32 : sm_cols_f32, &j);
  }
  return KERNEL_OK;
}

static int float_only(KernelCtx *c, NativeFn fn) {
  if (!dtype_is_float(c->inputs[0]->dtype)) return kernel_fail(c, "%s: needs a float tensor", c->op->name);
  return run_native(c, fn);
}

int kernel_NN_SOFTMAX(KernelCtx *c);
int kernel_NN_SOFTMAX(KernelCtx *c) { return float_only(c, softmax_native); }
int kernel_NN_LOG_SOFTMAX(KernelCtx *c);
int kernel_NN_LOG_SOFTMAX(KernelCtx *c) { return float_only(c, softmax_native); }
int kernel_NN_FAST_SOFTMAX(KernelCtx *c);
int kernel_NN_FAST_SOFTMAX(KernelCtx *c) { return float_only(c, softmax_native); }

/* ------------------------------------------------------------ normalisations */

/* Loads a float32/float64 element as double. */
static inline double ldf(const void *p, bool f64, int64_t i) {
  return f64 ? ((const double *)p)[i] : ((const float *)p)[i];
}
static inline void stf(void *p, bool f64, int64_t i, double v) {
  if (f64) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}

/* gamma/beta (optional) as double vectors of length n (NULL when off). */
static double *affine_vec(KernelCtx *c, uint32_t input, bool use, int64_t n, const char *what, int *rc) {
  if (!use) return NULL;
  const Tensor *t = c->inputs[input];
  if (t->numel != n) {
    *rc = kernel_fail(c, "%s: %s has %lld elements, expected %lld", c->op->name, what, (long long)t->numel, (long long)n);
    return NULL;
  }
  double *v = mem_malloc((size_t)(n ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = tensor_get_f64(t, i);
  return v;
}

typedef struct LnJob {
  const void *x;
  void *y;
  bool f64;
  int64_t n, inner;
  double eps;
  const double *gamma, *beta;
} LnJob;

/* work item = one line (outer, inner position) along the axis */
static void ln_range(void *arg, int64_t lo, int64_t hi) {
  const LnJob *j = arg;
  int64_t n = j->n, in = j->inner;
  for (int64_t l = lo; l < hi; l++) {
    int64_t base = (l / in) * n * in + l % in;
    double s = 0, v = 0;
    for (int64_t k = 0; k < n; k++) s += ldf(j->x, j->f64, base + k * in);
    double mean = s / (double)n;
    for (int64_t k = 0; k < n; k++) {
      double d = ldf(j->x, j->f64, base + k * in) - mean;
      v += d * d;
    }
    double rstd = 1.0 / sqrt(v / (double)n + j->eps);
    for (int64_t k = 0; k < n; k++) {
      double y = (ldf(j->x, j->f64, base + k * in) - mean) * rstd;
      if (j->gamma) y *= j->gamma[k];
      if (j->beta) y += j->beta[k];
      stf(j->y, j->f64, base + k * in, y);
    }
  }
}

static int layer_norm_native(KernelCtx *c, const Tensor *x, Tensor *o) {
  int64_t axis = kernel_attr_int(c, "axis", -1), outer, n, inner;
  if (!split_axis(x, &axis, &outer, &n, &inner)) return kernel_fail(c, "nn.layer_norm: axis is out of range");
  int rc = KERNEL_OK;
  double *g = affine_vec(c, 1, kernel_attr_bool(c, "scale", true), n, "gamma", &rc);
  double *b = rc ? NULL : affine_vec(c, 2, kernel_attr_bool(c, "center", true), n, "beta", &rc);
  if (rc == KERNEL_OK && n > 0) {
    LnJob j = {.x = x->data, .y = o->data, .f64 = ku_type(x->dtype) == KU_F64, .n = n, .inner = inner,
               .eps = kernel_attr_double(c, "epsilon", 1e-5), .gamma = g, .beta = b};
    kernel_parallel_for(c, outer * inner, 1 + 16384 / n, ln_range, &j);
  }
  mem_free(g);
  mem_free(b);
  return rc;
}

int kernel_NN_LAYER_NORM(KernelCtx *c);
int kernel_NN_LAYER_NORM(KernelCtx *c) { return float_only(c, layer_norm_native); }

/* Group statistics: data viewed as (N, A, C, B) with C the channel axis;
 * group g of G covers channels [g·C/G, (g+1)·C/G); statistics per (n, g)
 * over a, its channels and b. instance_norm is G = C. */
static int group_norm_native(KernelCtx *c, const Tensor *x, Tensor *o) {
  const char *name = c->op->name;
  int64_t axis = kernel_attr_int(c, "axis", 1);
  if (x->ndim < 2 || !ku_axis(&axis, x->ndim)) return kernel_fail(c, "%s: axis is out of range", name);
  int64_t N = axis == 0 ? 1 : x->shape[0], A = axis == 0 ? 1 : ku_prod(x->shape, 1, axis), C = x->shape[axis];
  int64_t B = ku_prod(x->shape, axis + 1, x->ndim);
  int64_t G = c->op_id == OP_NN_GROUP_NORM ? kernel_attr_int(c, "num_groups", 0) : C;
  if (G <= 0 || (C > 0 && C % G != 0)) return kernel_fail(c, "%s: %lld channels cannot form %lld groups", name, (long long)C, (long long)G);
  int rc = KERNEL_OK;
  double *gm = affine_vec(c, 1, kernel_attr_bool(c, "scale", true), C, "gamma", &rc);
  double *bt = rc ? NULL : affine_vec(c, 2, kernel_attr_bool(c, "center", true), C, "beta", &rc);
  bool f64 = ku_type(x->dtype) == KU_F64;
  double eps = kernel_attr_double(c, "epsilon", 1e-5);
  int64_t cg = C / G, cnt = A * cg * B;
  for (int64_t n = 0; n < N && rc == KERNEL_OK && cnt > 0; n++) {
    for (int64_t g = 0; g < G; g++) {
      double s = 0, v = 0;
      for (int64_t a = 0; a < A; a++)
        for (int64_t ch = g * cg; ch < (g + 1) * cg; ch++) {
          int64_t base = ((n * A + a) * C + ch) * B;
          for (int64_t b = 0; b < B; b++) s += ldf(x->data, f64, base + b);
        }
      double mean = s / (double)cnt;
      for (int64_t a = 0; a < A; a++)
        for (int64_t ch = g * cg; ch < (g + 1) * cg; ch++) {
          int64_t base = ((n * A + a) * C + ch) * B;
          for (int64_t b = 0; b < B; b++) {
            double d = ldf(x->data, f64, base + b) - mean;
            v += d * d;
          }
        }
      double rstd = 1.0 / sqrt(v / (double)cnt + eps);
      for (int64_t a = 0; a < A; a++)
        for (int64_t ch = g * cg; ch < (g + 1) * cg; ch++) {
          int64_t base = ((n * A + a) * C + ch) * B;
          double sc = gm ? gm[ch] * rstd : rstd, sh = bt ? bt[ch] : 0;
          for (int64_t b = 0; b < B; b++) stf(o->data, f64, base + b, (ldf(x->data, f64, base + b) - mean) * sc + sh);
        }
    }
  }
  mem_free(gm);
  mem_free(bt);
  return rc;
}

int kernel_NN_GROUP_NORM(KernelCtx *c);
int kernel_NN_GROUP_NORM(KernelCtx *c) { return float_only(c, group_norm_native); }
int kernel_NN_INSTANCE_NORM(KernelCtx *c);
int kernel_NN_INSTANCE_NORM(KernelCtx *c) { return float_only(c, group_norm_native); }

/* x / sqrt(max(Σ_axes x², eps)) */
static int l2_native(KernelCtx *c, const Tensor *x, Tensor *o) {
  int32_t nd = x->ndim;
  int64_t axes[MAXR];
  int32_t na = kernel_attr_ints(c, "axis", axes, MAXR);
  bool red[MAXR];
  for (int32_t i = 0; i < nd; i++) red[i] = na <= 0;
  for (int32_t i = 0; i < na && i < MAXR; i++) {
    int64_t a = axes[i];
    if (!ku_axis(&a, nd)) return kernel_fail(c, "nn.l2_normalize: axis %lld is out of range", (long long)axes[i]);
    red[a] = true;
  }
  /* keepdims-shaped sums: stride 0 on reduced axes */
  int64_t kst[MAXR], s = 1, nk = 1;
  for (int32_t i = nd; i-- > 0;) {
    kst[i] = red[i] ? 0 : s;
    if (!red[i]) s *= x->shape[i];
  }
  nk = s;
  double *sum = mem_calloc((size_t)(nk ? nk : 1), sizeof *sum);
  bool f64 = ku_type(x->dtype) == KU_F64;
  double eps = kernel_attr_double(c, "eps", 0);
  for (int pass = 0; pass < 2; pass++) {
    int64_t idx[MAXR] = {0}, k = 0;
    for (int64_t e = 0; e < x->numel; e++) {
      double v = ldf(x->data, f64, e);
      if (pass == 0) sum[k] += v * v;
      else stf(o->data, f64, e, v / sqrt(sum[k] > eps ? sum[k] : eps));
      for (int32_t d = nd; d-- > 0;) {
        k += kst[d];
        if (++idx[d] < x->shape[d]) break;
        k -= kst[d] * x->shape[d];
        idx[d] = 0;
      }
    }
  }
  mem_free(sum);
  return KERNEL_OK;
}

int kernel_NN_L2_NORMALIZE(KernelCtx *c);
int kernel_NN_L2_NORMALIZE(KernelCtx *c) { return float_only(c, l2_native); }

static int lrn_native(KernelCtx *c, const Tensor *x, Tensor *o) {
  int64_t axis = kernel_attr_int(c, "axis", 1), outer, n, inner, size = kernel_attr_int(c, "size", 5);
  if (!split_axis(x, &axis, &outer, &n, &inner)) return kernel_fail(c, "nn.lrn: axis is out of range");
  if (size <= 0) return kernel_fail(c, "nn.lrn: size must be positive");
  double bias = kernel_attr_double(c, "bias", 2), alpha = kernel_attr_double(c, "alpha", 1e-4);
  double beta = kernel_attr_double(c, "beta", 0.75);
  bool f64 = ku_type(x->dtype) == KU_F64;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t ch = 0; ch < n; ch++) {
      int64_t lo = ch - size / 2, hi = lo + size;
      if (lo < 0) lo = 0;
      if (hi > n) hi = n;
      for (int64_t i = 0; i < inner; i++) {
        double s = 0;
        for (int64_t k = lo; k < hi; k++) {
          double v = ldf(x->data, f64, (a * n + k) * inner + i);
          s += v * v;
        }
        int64_t at = (a * n + ch) * inner + i;
        stf(o->data, f64, at, ldf(x->data, f64, at) / pow(bias + alpha * s / (double)size, beta));
      }
    }
  return KERNEL_OK;
}

/* lrn reads neighbours: never in place */
int kernel_NN_LRN(KernelCtx *c);
int kernel_NN_LRN(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  if (!dtype_is_float(x->dtype)) return kernel_fail(c, "nn.lrn: needs a float tensor");
  if (ku_is_half(x->dtype)) return via_f32(c, x, lrn_native);
  Tensor *o = kernel_output_like(c, x);
  return o ? lrn_native(c, x, o) : KERNEL_ERROR;
}

/* ------------------------------------------------------------ padding */

typedef enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_SYMMETRIC } PadMode;

/* Source index of padded position i (may be out of [0, n)) for the mode;
 * -1 means "the constant". */
static inline int64_t pad_src(int64_t i, int64_t n, PadMode m) {
  if (i >= 0 && i < n) return i;
  switch (m) {
  case PAD_CONSTANT: return -1;
  case PAD_EDGE: return i < 0 ? 0 : n - 1;
  case PAD_REFLECT: {
    if (n == 1) return 0;
    int64_t p = 2 * (n - 1), r = ((i % p) + p) % p;
    return r < n ? r : p - r;
  }
  case PAD_SYMMETRIC: {
    int64_t p = 2 * n, r = ((i % p) + p) % p;
    return r < n ? r : p - 1 - r;
  }
  }
  return -1;
}

typedef struct PadJob {
  const Tensor *x;
  Tensor *o;
  const int64_t *before;
  PadMode mode;
  const char *fill;
  size_t es;
  int64_t ist[MAXR];
} PadJob;

static void pad_range(void *arg, int64_t lo, int64_t hi) {
  const PadJob *j = arg;
  const Tensor *x = j->x;
  int32_t nd = x->ndim;
  int64_t last = j->o->shape[nd - 1], n = x->shape[nd - 1], b = j->before[nd - 1];
  size_t es = j->es;
  for (int64_t r = lo; r < hi; r++) {
    int64_t rem = r, off = 0;
    bool fill_row = false;
    for (int32_t d = nd - 1; d-- > 0;) {
      int64_t q = rem % j->o->shape[d];
      rem /= j->o->shape[d];
      int64_t s = pad_src(q - j->before[d], x->shape[d], j->mode);
      if (s < 0) fill_row = true;
      else off += s * j->ist[d];
    }
    char *q = (char *)j->o->data + (size_t)(r * last) * es;
    const char *p = (const char *)x->data + (size_t)off * es;
    if (fill_row) {
      for (int64_t i = 0; i < last; i++) ku_copy1(q + (size_t)i * es, j->fill, es);
      continue;
    }
    int64_t mid_lo = b < 0 ? 0 : b, mid_hi = b + n < last ? b + n : last;
    for (int64_t i = 0; i < mid_lo && i < last; i++) {
      int64_t s = pad_src(i - b, n, j->mode);
      ku_copy1(q + (size_t)i * es, s < 0 ? j->fill : p + (size_t)s * es, es);
    }
    if (mid_hi > mid_lo) memcpy(q + (size_t)mid_lo * es, p + (size_t)(mid_lo - b) * es, (size_t)(mid_hi - mid_lo) * es);
    for (int64_t i = mid_hi > mid_lo ? mid_hi : mid_lo; i < last; i++) {
      int64_t s = pad_src(i - b, n, j->mode);
      ku_copy1(q + (size_t)i * es, s < 0 ? j->fill : p + (size_t)s * es, es);
    }
  }
}

static int pad_common(KernelCtx *c, PadMode mode, const Tensor *value) {
  const char *name = c->op->name;
  const Tensor *x = c->inputs[0];
  int32_t nd = x->ndim;
  const AttrValue *pw = kernel_attr(c, "pad_width");
  if (!pw || pw->kind != AV_ARRAY || (int32_t)pw->arr.n != nd)
    return kernel_fail(c, "%s: pad_width must have one [before, after] pair per dimension (%d)", name, nd);
  int64_t before[MAXR], shape[MAXR];
  for (int32_t i = 0; i < nd; i++) {
    const AttrValue *p = pw->arr.items[i];
    if (p->kind != AV_ARRAY || p->arr.n != 2 || p->arr.items[0]->kind != AV_INT || p->arr.items[1]->kind != AV_INT)
      return kernel_fail(c, "%s: pad_width entry %d is not a pair of integers", name, i);
    int64_t b = p->arr.items[0]->i.value, a = p->arr.items[1]->i.value;
    /* nn.pad crops with negative widths (spec §11); nn.mirror_pad does not */
    if ((b < 0 || a < 0) && strcmp(name, "nn.pad") != 0)
      return kernel_fail(c, "%s: pad widths must be non-negative", name);
    int64_t ext;
    if (__builtin_add_overflow(x->shape[i], b, &ext) || __builtin_add_overflow(ext, a, &ext) || ext < 0)
      return kernel_fail(c, "%s: pad widths (%lld, %lld) do not fit dimension %d", name,
                         (long long)b, (long long)a, i);
    if (mode != PAD_CONSTANT && (b > 0 || a > 0) && x->shape[i] == 0)
      return kernel_fail(c, "%s: cannot pad an empty dimension in this mode", name);
    before[i] = b;
    shape[i] = ext;
  }
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(x->dtype);
  char fill[16] = {0};
  if (value) {
    if (value->numel != 1) return kernel_fail(c, "%s: pad_value must be a scalar", name);
    if (es <= sizeof fill) ku_cast(value->dtype, value->data, x->dtype, fill);
  }
  if (o->numel == 0) return KERNEL_OK;
  if (nd == 0) {
    memcpy(o->data, x->data, es);
    return KERNEL_OK;
  }
  PadJob j = {.x = x, .o = o, .before = before, .mode = mode, .fill = fill, .es = es};
  int64_t s = 1;
  for (int32_t i = nd; i-- > 0;) {
    j.ist[i] = s;
    s *= x->shape[i];
  }
  int64_t rows = o->numel / shape[nd - 1];
  kernel_parallel_for(c, rows, 1 + 32768 / (shape[nd - 1] + 1), pad_range, &j);
  return KERNEL_OK;
}

int kernel_NN_PAD(KernelCtx *c);
int kernel_NN_PAD(KernelCtx *c) {
  const char *m = kernel_attr_str(c, "pad_mode", "constant");
  PadMode mode = !strcmp(m, "constant") ? PAD_CONSTANT : !strcmp(m, "edge") ? PAD_EDGE : !strcmp(m, "reflect") ? PAD_REFLECT : (PadMode)-1;
  if ((int)mode < 0) return kernel_fail(c, "nn.pad: unknown pad_mode \"%s\"", m);
  return pad_common(c, mode, c->ninputs > 1 ? c->inputs[1] : NULL);
}

int kernel_NN_MIRROR_PAD(KernelCtx *c);
int kernel_NN_MIRROR_PAD(KernelCtx *c) {
  const char *m = kernel_attr_str(c, "mode", "SYMMETRIC");
  PadMode mode = !strcmp(m, "SYMMETRIC") ? PAD_SYMMETRIC : !strcmp(m, "REFLECT") ? PAD_REFLECT : (PadMode)-1;
  if ((int)mode < 0) return kernel_fail(c, "nn.mirror_pad: unknown mode \"%s\"", m);
  return pad_common(c, mode, NULL);
}

/* ------------------------------------------------------------ resize */

/* Resizes the spatial axes `letters` ("W", "HW" or "DHW", found in the layout) of
 * input 0 to the extents osz (one per letter); cfg->start/end hold the roi's
 * bounds per letter (tf_crop_and_resize). */
static int resize_core(KernelCtx *c, const char *layout, const char *letters, const int64_t *osz,
                       const ResizeCfg *cfg, DType odt) {
  const char *name = c->op->name;
  const Tensor *x = c->inputs[0];
  int32_t nd = x->ndim, nsp = (int32_t)strlen(letters);
  if ((int32_t)strlen(layout) != nd) return kernel_fail(c, "%s: unsupported layout \"%s\"", name, layout);
  for (const char *p = layout; *p; p++)
    if (*p < 'A' || *p > 'Z') return kernel_fail(c, "%s: unsupported layout \"%s\"", name, layout);
  int32_t pos[3];
  int64_t in[3], shape[MAXR];
  memcpy(shape, x->shape, (size_t)nd * sizeof *shape);
  for (int32_t k = 0; k < nsp; k++) {
    const char *p = strchr(layout, letters[k]);
    if (!p) return kernel_fail(c, "%s: unsupported layout \"%s\"", name, layout);
    pos[k] = (int32_t)(p - layout);
    if (osz[k] < 0) return kernel_fail(c, "%s: invalid output size", name);
    in[k] = x->shape[pos[k]];
    shape[pos[k]] = osz[k];
  }
  Tensor *o = kernel_output(c, odt, nd, shape);
  if (!o) return KERNEL_ERROR;
  if (o->numel == 0) return KERNEL_OK;
  for (int32_t k = 0; k < nsp; k++)
    if (in[k] == 0) return kernel_fail(c, "%s: cannot resize an empty image", name);
  ResizeTaps *tp[3] = {NULL, NULL, NULL};
  for (int32_t k = 0; k < nsp; k++) {
    tp[k] = mem_malloc((size_t)(osz[k] ? osz[k] : 1) * sizeof *tp[k]);
    for (int64_t i = 0; i < osz[k]; i++) resize_axis_taps(cfg, i, in[k], osz[k], cfg->start[k], cfg->end[k], &tp[k][i]);
  }
  int64_t ist[MAXR], s = 1;
  for (int32_t i = nd; i-- > 0;) {
    ist[i] = s;
    s *= x->shape[i];
  }
  Tensor *tmp = NULL;
  const Tensor *xf = ku_type(x->dtype) == KU_F32 || ku_type(x->dtype) == KU_F64 ? x : ku_float_in(x, &tmp);
  if (!xf) {
    for (int32_t k = 0; k < nsp; k++) mem_free(tp[k]);
    return kernel_fail(c, "%s: out of memory", name);
  }
  bool f64 = ku_type(xf->dtype) == KU_F64;
  size_t oes = dtype_size(odt);
  static const ResizeTaps unit = {.idx = {0}, .w = {1}, .n = 1};
  for (int64_t e = 0; e < o->numel; e++) {
    int64_t rem = e, base = 0, q[3] = {0, 0, 0};
    for (int32_t d = nd; d-- > 0;) {
      int64_t v = rem % shape[d];
      rem /= shape[d];
      int32_t k = 0;
      while (k < nsp && pos[k] != d) k++;
      if (k < nsp) q[k] = v;
      else base += v * ist[d];
    }
    /* as three axes: a 1-D or 2-D resize has unit leading axes */
    const ResizeTaps *t0 = nsp == 3 ? &tp[0][q[0]] : &unit, *t1 = nsp >= 2 ? &tp[nsp - 2][q[nsp - 2]] : &unit,
                     *t2 = &tp[nsp - 1][q[nsp - 1]];
    int64_t s0 = nsp == 3 ? ist[pos[0]] : 0, s1 = nsp >= 2 ? ist[pos[nsp - 2]] : 0, s2 = ist[pos[nsp - 1]];
    double v = 0;
    if (t0->outside || t1->outside || t2->outside) {
      v = cfg->extrap;
    } else {
      for (int a = 0; a < t0->n; a++)
        for (int p = 0; p < t1->n; p++)
          for (int r = 0; r < t2->n; r++)
            v += (double)t0->w[a] * t1->w[p] * t2->w[r] *
                 ldf(xf->data, f64, base + t0->idx[a] * s0 + t1->idx[p] * s1 + t2->idx[r] * s2);
      if (!f64) v = (float)v;
    }
    ku_cast(DT_F64, &v, odt, (char *)o->data + (size_t)e * oes);
  }
  tensor_release(tmp);
  for (int32_t k = 0; k < nsp; k++) mem_free(tp[k]);
  return KERNEL_OK;
}


/* image.resize1d / resize2d / resize3d: the spatial letters `letters` ("W", "HW", "DHW") of
 * the layout (default `layout`) resized to the size attribute. */
static int resize_image(KernelCtx *c, const char *letters, const char *layout) {
  const char *name = c->op->name;
  int nsp = (int)strlen(letters);
  ResizeCfg cfg = {.alpha = (float)kernel_attr_double(c, "cubic_alpha", -0.5),
                   .exclude = kernel_attr_int(c, "cubic_exclude", 0) != 0,
                   .extrap = kernel_attr_double(c, "extrapolation_value", 0)};
  int64_t size[3];
  if (kernel_attr_ints(c, "size", size, 3) != nsp) return kernel_fail(c, "%s: size must have %d values", name, nsp);
  const char *m = kernel_attr_str(c, "method", "linear");
  const char *cm = kernel_attr_str(c, "coordinate_transformation_mode", "half_pixel");
  const char *rm = kernel_attr_str(c, "rounding_method", "round");
  switch (resize_parse(&cfg, nsp, m, cm, rm, kernel_attr(c, "roi"))) {
  case RESIZE_OK: break;
  case RESIZE_BAD_METHOD: return kernel_fail(c, "%s: unknown method \"%s\"", name, m);
  case RESIZE_BAD_COORD: return kernel_fail(c, "%s: unknown coordinate_transformation_mode \"%s\"", name, cm);
  case RESIZE_BAD_ROUNDING: return kernel_fail(c, "%s: unknown rounding_method \"%s\"", name, rm);
  }
  DType odt = c->inputs[0]->dtype;
  kernel_attr_dtype(c, "out_dtype", &odt);
  if (ku_type(odt) == KU_OTHER || ku_type(c->inputs[0]->dtype) == KU_OTHER)
    return kernel_fail(c, "%s: unsupported dtype", name);
  return resize_core(c, kernel_attr_str(c, "layout", layout), letters, size, &cfg, odt);
}

int kernel_IMAGE_RESIZE1D(KernelCtx *c);
int kernel_IMAGE_RESIZE2D(KernelCtx *c);
int kernel_IMAGE_RESIZE3D(KernelCtx *c);
int kernel_IMAGE_RESIZE1D(KernelCtx *c) { return resize_image(c, "W", "NCW"); }
int kernel_IMAGE_RESIZE2D(KernelCtx *c) { return resize_image(c, "HW", "NCHW"); }
int kernel_IMAGE_RESIZE3D(KernelCtx *c) { return resize_image(c, "DHW", "NCDHW"); }

/* image.crop_and_resize(data, boxes, box_indices) (TVM's): box b = (y1, x1, y2, x2), in
 * coordinates normalised to [0, 1], is resized from image box_indices[b] to crop_size as
 * tf_crop_and_resize resizes its roi (a crop extent of 1 samples the box's centre, as
 * TensorFlow does; TVM divides by zero there); bilinear or nearest_neighbor (rounding half
 * away from zero, topi's boxes case), extrapolation_value outside the image. A box index
 * outside the batch is a run-time error. */
typedef struct CropGeom {
  int32_t pos[4]; /* N, C, H, W in the layout */
  int64_t ist[4], ost[4], in[4], crop[2];
} CropGeom;

static bool crop_geom(KernelCtx *c, CropGeom *g) {
  const Tensor *x = c->inputs[0];
  const char *layout = kernel_attr_str(c, "layout", "NCHW");
  if (strlen(layout) != 4 || x->ndim != 4) return kernel_fail(c, "image.crop_and_resize: unsupported layout \"%s\"", layout), false;
  for (int k = 0; k < 4; k++) {
    const char *p = strchr(layout, "NCHW"[k]);
    if (!p) return kernel_fail(c, "image.crop_and_resize: unsupported layout \"%s\"", layout), false;
    g->pos[k] = (int32_t)(p - layout);
    g->in[k] = x->shape[g->pos[k]];
  }
  if (kernel_attr_ints(c, "crop_size", g->crop, 2) != 2 || g->crop[0] < 1 || g->crop[1] < 1)
    return kernel_fail(c, "image.crop_and_resize: crop_size must be two positive extents"), false;
  int64_t oshape[4], s = 1, t = 1;
  for (int i = 0; i < 4; i++) oshape[i] = x->shape[i];
  oshape[g->pos[0]] = c->inputs[1]->shape[0];
  oshape[g->pos[2]] = g->crop[0];
  oshape[g->pos[3]] = g->crop[1];
  int64_t ist[4], ost[4];
  for (int i = 4; i-- > 0;) {
    ist[i] = s;
    ost[i] = t;
    s *= x->shape[i];
    t *= oshape[i];
  }
  for (int k = 0; k < 4; k++) {
    g->ist[k] = ist[g->pos[k]];
    g->ost[k] = ost[g->pos[k]];
  }
  return true;
}

/* Writes box b's crop (every channel) from image n. */
static void crop_box(const CropGeom *g, const ResizeCfg *cfg, const ResizeTaps *ty, const ResizeTaps *tx,
                     const Tensor *xf, int64_t n, int64_t b, Tensor *o) {
  bool f64 = ku_type(xf->dtype) == KU_F64;
  size_t oes = dtype_size(o->dtype);
  for (int64_t ch = 0; ch < g->in[1]; ch++)
    for (int64_t i = 0; i < g->crop[0]; i++)
      for (int64_t j = 0; j < g->crop[1]; j++) {
        double v = 0;
        if (ty[i].outside || tx[j].outside) {
          v = cfg->extrap;
        } else {
          int64_t base = n * g->ist[0] + ch * g->ist[1];
          for (int p = 0; p < ty[i].n; p++)
            for (int r = 0; r < tx[j].n; r++)
              v += (double)ty[i].w[p] * tx[j].w[r] * ldf(xf->data, f64, base + ty[i].idx[p] * g->ist[2] + tx[j].idx[r] * g->ist[3]);
          if (!f64) v = (float)v;
        }
        int64_t e = b * g->ost[0] + ch * g->ost[1] + i * g->ost[2] + j * g->ost[3];
        ku_cast(DT_F64, &v, o->dtype, (char *)o->data + (size_t)e * oes);
      }
}

int kernel_IMAGE_CROP_AND_RESIZE(KernelCtx *c);
int kernel_IMAGE_CROP_AND_RESIZE(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *bx = c->inputs[1], *bi = c->inputs[2];
  const char *m = kernel_attr_str(c, "method", "bilinear");
  ResizeCfg cfg = {.mode = CT_TF_CROP, .rounding = RD_ROUND, .alpha = -0.5f,
                   .extrap = kernel_attr_double(c, "extrapolation_value", 0)};
  if (!resize_parse_method(m, &cfg.method)) return kernel_fail(c, "image.crop_and_resize: unknown method \"%s\"", m);
  if (bx->ndim != 2 || bx->shape[1] != 4 || bi->ndim != 1 || bi->shape[0] != bx->shape[0] || !dtype_is_int(bi->dtype))
    return kernel_fail(c, "image.crop_and_resize: needs boxes (B, 4) and int box_indices (B)");
  CropGeom g;
  if (!crop_geom(c, &g)) return KERNEL_ERROR;
  DType odt = x->dtype;
  kernel_attr_dtype(c, "out_dtype", &odt);
  if (ku_type(odt) == KU_OTHER || ku_type(x->dtype) == KU_OTHER) return kernel_fail(c, "image.crop_and_resize: unsupported dtype");
  int64_t oshape[4];
  for (int i = 0; i < 4; i++) oshape[i] = x->shape[i];
  oshape[g.pos[0]] = bx->shape[0];
  oshape[g.pos[2]] = g.crop[0];
  oshape[g.pos[3]] = g.crop[1];
  Tensor *o = kernel_output(c, odt, 4, oshape);
  if (!o) return KERNEL_ERROR;
  if (o->numel == 0) return KERNEL_OK;
  if (g.in[2] == 0 || g.in[3] == 0) return kernel_fail(c, "image.crop_and_resize: cannot crop an empty image");
  Tensor *tmp = NULL;
  const Tensor *xf = ku_type(x->dtype) == KU_F32 || ku_type(x->dtype) == KU_F64 ? x : ku_float_in(x, &tmp);
  ResizeTaps *ty = mem_malloc((size_t)g.crop[0] * sizeof *ty), *tx = mem_malloc((size_t)g.crop[1] * sizeof *tx);
  int rc = KERNEL_OK;
  if (!xf || !ty || !tx) rc = kernel_fail(c, "image.crop_and_resize: out of memory");
  for (int64_t b = 0; rc == KERNEL_OK && b < bx->shape[0]; b++) {
    int64_t n = ku_index(bi, b);
    if (n < 0 || n >= g.in[0]) {
      rc = kernel_fail(c, "image.crop_and_resize: box %lld names image %lld of a batch of %lld", (long long)b,
                       (long long)n, (long long)g.in[0]);
      break;
    }
    float y1 = (float)tensor_get_f64(bx, b * 4), x1 = (float)tensor_get_f64(bx, b * 4 + 1);
    float y2 = (float)tensor_get_f64(bx, b * 4 + 2), x2 = (float)tensor_get_f64(bx, b * 4 + 3);
    for (int64_t i = 0; i < g.crop[0]; i++) resize_axis_taps(&cfg, i, g.in[2], g.crop[0], y1, y2, &ty[i]);
    for (int64_t j = 0; j < g.crop[1]; j++) resize_axis_taps(&cfg, j, g.in[3], g.crop[1], x1, x2, &tx[j]);
    crop_box(&g, &cfg, ty, tx, xf, n, b, o);
  }
  tensor_release(tmp);
  mem_free(ty);
  mem_free(tx);
  return rc;
}

/* image.affine_grid(θ (N, 2, 3)) (TVM's): out[n, d, i, j] = θ[n, d, 0]·x_j + θ[n, d, 1]·y_i +
 * θ[n, d, 2], y_i = −1 + i·(2 − 1e-7)/(H − 1) and x_j likewise over W (topi's steps), in the
 * data's dtype (float16 through float32). */
int kernel_IMAGE_AFFINE_GRID(KernelCtx *c);
int kernel_IMAGE_AFFINE_GRID(KernelCtx *c) {
  const Tensor *t = c->inputs[0];
  int64_t ts[2];
  if (kernel_attr_ints(c, "target_shape", ts, 2) != 2 || ts[0] < 2 || ts[1] < 2)
    return kernel_fail(c, "image.affine_grid: target_shape must be two extents of at least 2");
  if (t->ndim != 3 || t->shape[1] != 2 || t->shape[2] != 3 || ku_type(t->dtype) == KU_OTHER || !dtype_is_float(t->dtype))
    return kernel_fail(c, "image.affine_grid: needs float data of shape (N, 2, 3)");
  int64_t N = t->shape[0], H = ts[0], W = ts[1], oshape[4] = {N, 2, H, W};
  Tensor *o = kernel_output(c, t->dtype, 4, oshape);
  if (!o) return KERNEL_ERROR;
  bool f64 = ku_type(t->dtype) == KU_F64;
  double ys = (2.0 - 1e-7) / (double)(H - 1), xs = (2.0 - 1e-7) / (double)(W - 1);
  size_t es = dtype_size(t->dtype);
  for (int64_t n = 0; n < N; n++)
    for (int64_t d = 0; d < 2; d++) {
      double a = tensor_get_f64(t, (n * 2 + d) * 3), b = tensor_get_f64(t, (n * 2 + d) * 3 + 1),
             e = tensor_get_f64(t, (n * 2 + d) * 3 + 2);
      char *q = (char *)o->data + (size_t)((n * 2 + d) * H * W) * es;
      for (int64_t i = 0; i < H; i++)
        for (int64_t j = 0; j < W; j++, q += es) {
          double v;
          if (f64) {
            v = a * (-1.0 + (double)j * xs) + b * (-1.0 + (double)i * ys) + e;
          } else {
            float y = -1.f + (float)i * (float)ys, x = -1.f + (float)j * (float)xs;
            v = (float)a * x + (float)b * y + (float)e;
          }
          ku_cast(DT_F64, &v, o->dtype, q);
        }
    }
  return KERNEL_OK;
}

int kernel_NN_UPSAMPLING(KernelCtx *c);
int kernel_NN_UPSAMPLING(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  const char *layout = kernel_attr_str(c, "layout", "NCHW");
  const char *ph = strchr(layout, 'H'), *pw = strchr(layout, 'W');
  if ((int32_t)strlen(layout) != x->ndim || !ph || !pw) return kernel_fail(c, "nn.upsampling: unsupported layout \"%s\"", layout);
  double sh = kernel_attr_double(c, "scale_h", 1), sw = kernel_attr_double(c, "scale_w", 1);
  double fh = nearbyint((double)x->shape[ph - layout] * sh), fw = nearbyint((double)x->shape[pw - layout] * sw);
  if (!(fh >= 0 && fw >= 0 && fh < 1e15 && fw < 1e15)) return kernel_fail(c, "nn.upsampling: invalid scale");
  bool ac = kernel_attr_bool(c, "align_corners", false);
  ResizeCfg cfg = {.alpha = -0.5f, .mode = ac ? CT_ALIGN_CORNERS : CT_ASYMMETRIC, .rounding = ac ? RD_ROUND : RD_FLOOR};
  const char *m = kernel_attr_str(c, "method", "nearest_neighbor");
  if (!resize_parse_method(m, &cfg.method)) return kernel_fail(c, "nn.upsampling: unknown method \"%s\"", m);
  if (ku_type(x->dtype) == KU_OTHER) return kernel_fail(c, "nn.upsampling: unsupported dtype");
  int64_t osz[2] = {(int64_t)fh, (int64_t)fw};
  return resize_core(c, layout, "HW", osz, &cfg, x->dtype);
}

/* nn.upsampling3d (TVM: topi.image.resize3d): D, H, W scaled by nearbyint(extent * scale);
 * nearest_neighbor or trilinear (= linear), coordinate_transformation_mode as resize2d's, rounding
 * for nearest: round with align_corners, else floor. */
int kernel_NN_UPSAMPLING3D(KernelCtx *c);
int kernel_NN_UPSAMPLING3D(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  const char *layout = kernel_attr_str(c, "layout", "NCDHW");
  static const char *const keys[3] = {"scale_d", "scale_h", "scale_w"};
  int64_t osz[3];
  for (int k = 0; k < 3; k++) {
    const char *p = strchr(layout, "DHW"[k]);
    if ((int32_t)strlen(layout) != x->ndim || !p) return kernel_fail(c, "nn.upsampling3d: unsupported layout \"%s\"", layout);
    double f = nearbyint((double)x->shape[p - layout] * kernel_attr_double(c, keys[k], 1));
    if (!(f >= 0 && f < 1e15)) return kernel_fail(c, "nn.upsampling3d: invalid scale");
    osz[k] = (int64_t)f;
  }
  ResizeCfg cfg = {.alpha = -0.5f};
  const char *m = kernel_attr_str(c, "method", "nearest_neighbor");
  const char *cm = kernel_attr_str(c, "coordinate_transformation_mode", "half_pixel");
  switch (resize_parse_3d(&cfg, m, cm)) {
  case RESIZE_OK: break;
  case RESIZE_BAD_METHOD: return kernel_fail(c, "nn.upsampling3d: unknown method \"%s\"", m);
  default: return kernel_fail(c, "nn.upsampling3d: unknown coordinate_transformation_mode \"%s\"", cm);
  }
  if (ku_type(x->dtype) == KU_OTHER) return kernel_fail(c, "nn.upsampling3d: unsupported dtype");
  return resize_core(c, layout, "DHW", osz, &cfg, x->dtype);
}
