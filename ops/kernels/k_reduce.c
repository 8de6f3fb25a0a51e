/* ops/kernels/k_reduce.c — reductions: sum, mean, max, min, prod, all, any, argmax,
 * argmin, variance (spec/ops.md §5).
 *
 * A reduction plan merges the input dims into alternating kept/reduced runs
 * (extent-1 dims dropped, adjacent dims of the same kind fused), so each
 * output element is one walk over the reduced sub-space: an odometer over the
 * outer reduced runs and a tight strided loop over the innermost one. Output
 * elements are split across threads. Numerics: float sums, products, means
 * and variances accumulate in double; max/min are the select rule of §2
 * (acc > x ? acc : x) starting from the dtype's lowest/highest finite value
 * (−FLT_MAX, not −inf); integers wrap (uint64 arithmetic) and `mean` on
 * integers is the wrapped sum divided by n cast to the dtype, truncating;
 * argmax/argmin return flat indices (in the dtype the relation chose; int32 usually) into the reduced sub-space, first
 * occurrence on ties (last with select_last_index). float16 is reduced
 * through a float32 copy. Empty reductions: sum 0, prod 1, max/min the init
 * value, all True, any False, float mean/variance NaN; an integer mean or an
 * arg-reduction over nothing is a run-time error.
 * collapse_sum_like / collapse_sum_to are sums whose reduced axes come from
 * the target shape (spec/gradient.md 5.1-5.2); the common identity case
 * (nothing broadcast) returns the input itself.
 */
#include <float.h>
#include <math.h>

#include "ir/mem.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_util.h"
#include "ops/op_ids.h"

#define MAXR TENSOR_MAX_NDIM

typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_ALL, R_ANY, R_ARGMAX, R_ARGMIN, R_VAR } RedOp;

typedef struct RedJob {
  RedOp op;
  KuType kt;                 /* element kind of the (widened) input */
  const char *src;
  size_t es;
  int32_t nk, nr;            /* merged kept / reduced runs */
  int64_t kd[MAXR], ks[MAXR];/* kept extents and input strides */
  int64_t rd[MAXR], rs[MAXR];/* reduced extents and input strides */
  int64_t n;                 /* reduced element count */
  bool last;                 /* select_last_index */
  double flo, fhi;           /* float init of max / min */
  const double *mean;        /* variance: per-output mean (double) */
  double *fout;              /* float results (one per output) */
  int64_t *iout;             /* integer results / indices */
} RedJob;

/* ------------------------------------------------------------ accumulation */

/* Σ q[0..cnt) of a contiguous float run in double: eight partial sums, lane u
 * taking elements u, u + 8, ..., combined pairwise, then the tail in order.
 * Each lane is its own chain of additions, so the vector clones (KHOT) give
 * the scalar loop's result bit for bit (BN gradients sum whole planes). */
static KHOT double sum_run_f32(const float *restrict q, int64_t cnt) {
  double ps[8] = {0};
  int64_t t = 0;
  for (; t + 8 <= cnt; t += 8)
    for (int u = 0; u < 8; u++) ps[u] += (double)q[t + u];
  double s = ((ps[0] + ps[1]) + (ps[2] + ps[3])) + ((ps[4] + ps[5]) + (ps[6] + ps[7]));
  for (; t < cnt; t++) s += q[t];
  return s;
}

typedef struct Acc {
  double f;    /* float accumulator (sum, prod, best value) */
  uint64_t u;  /* integer sum / prod (wraps) */
  int64_t i;   /* integer best value */
  int64_t arg; /* index of the best value */
  int64_t pos; /* elements seen so far */
} Acc;

static inline double ld_f(KuType k, const char *p) {
  switch (k) {
  case KU_F32: return *(const float *)p;
  case KU_F64: return *(const double *)p;
  default: return 0;
  }
}

static inline int64_t ld_i(KuType k, const char *p) {
  switch (k) {
  case KU_I8: return *(const int8_t *)p;
  case KU_I16: return *(const int16_t *)p;
  case KU_I32: return *(const int32_t *)p;
  case KU_I64: return *(const int64_t *)p;
  case KU_BOOL: case KU_U8: return *(const uint8_t *)p;
  case KU_U16: return *(const uint16_t *)p;
  case KU_U32: return *(const uint32_t *)p;
  case KU_U64: return (int64_t)*(const uint64_t *)p;
  default: return 0;
  }
}

/* integer a > b in the dtype's order (uint64 compares unsigned) */
static inline bool igt(KuType k, int64_t a, int64_t b) { return k == KU_U64 ? (uint64_t)a > (uint64_t)b : a > b; }

#define FLOAT_RUN(T)                                                                          \
  do {                                                                                        \
    const T *q = (const T *)p;                                                                \
    switch (j->op) {                                                                          \
    case R_SUM: case R_MEAN: {                                                                \
      double s = 0;                                                                           \
      int64_t t = 0;                                                                          \
      if (st == 1) { /* independent partial sums: no serial dependency */                     \
        double ps[8] = {0};                                                                    \
        for (; t + 8 <= cnt; t += 8)                                                          \
          for (int u = 0; u < 8; u++) ps[u] += q[t + u];                                       \
        s = ((ps[0] + ps[1]) + (ps[2] + ps[3])) + ((ps[4] + ps[5]) + (ps[6] + ps[7]));                \
      }                                                                                       \
      for (; t < cnt; t++) s += q[t * st];                                                    \
      a->f += s;                                                                              \
    } break;                                                                                  \
    case R_PROD: for (int64_t t = 0; t < cnt; t++) a->f *= q[t * st]; break;                  \
    case R_MAX: for (int64_t t = 0; t < cnt; t++) { double x = q[t * st]; a->f = a->f > x ? a->f : x; } break; \
    case R_MIN: for (int64_t t = 0; t < cnt; t++) { double x = q[t * st]; a->f = a->f < x ? a->f : x; } break; \
    case R_ALL: for (int64_t t = 0; t < cnt; t++) a->u &= (q[t * st] < 0 || q[t * st] > 0); break; \
    case R_ANY: for (int64_t t = 0; t < cnt; t++) a->u |= (q[t * st] < 0 || q[t * st] > 0); break; \
    case R_ARGMAX:                                                                            \
      for (int64_t t = 0; t < cnt; t++) {                                                     \
        double x = q[t * st];                                                                 \
        if (x > a->f || (j->last && x == a->f)) { a->f = x; a->arg = a->pos + t; }            \
      }                                                                                       \
      break;                                                                                  \
    case R_ARGMIN:                                                                            \
      for (int64_t t = 0; t < cnt; t++) {                                                     \
        double x = q[t * st];                                                                 \
        if (x < a->f || (j->last && x == a->f)) { a->f = x; a->arg = a->pos + t; }            \
      }                                                                                       \
      break;                                                                                  \
    case R_VAR: {                                                                             \
      double s = 0;                                                                           \
      for (int64_t t = 0; t < cnt; t++) { double d = q[t * st] - m; s += d * d; }             \
      a->f += s;                                                                              \
    } break;                                                                                  \
    }                                                                                         \
  } while (0)

/* Accumulates `cnt` elements at p, p + st, ... (stride in elements). */
static void run(const RedJob *j, Acc *a, const char *p, int64_t cnt, int64_t st, double m) {
  if (j->kt == KU_F32 && st == 1 && (j->op == R_SUM || j->op == R_MEAN)) {
    a->f += sum_run_f32((const float *)p, cnt);
  } else if (j->kt == KU_F32) {
    FLOAT_RUN(float);
  } else if (j->kt == KU_F64) {
    FLOAT_RUN(double);
  } else {
    int64_t step = st * (int64_t)j->es;
    for (int64_t t = 0; t < cnt; t++, p += step) {
      int64_t x = ld_i(j->kt, p);
      switch (j->op) {
      case R_SUM: case R_MEAN: a->u += (uint64_t)x; break;
      case R_PROD: a->u *= (uint64_t)x; break;
      case R_MAX: if (!igt(j->kt, a->i, x)) a->i = x; break;
      case R_MIN: if (!igt(j->kt, x, a->i)) a->i = x; break;
      case R_ALL: a->u &= x != 0; break;
      case R_ANY: a->u |= x != 0; break;
      case R_ARGMAX: if (igt(j->kt, x, a->i) || (j->last && x == a->i)) { a->i = x; a->arg = a->pos + t; } break;
      case R_ARGMIN: if (igt(j->kt, a->i, x) || (j->last && x == a->i)) { a->i = x; a->arg = a->pos + t; } break;
      case R_VAR: { double d = (j->kt == KU_U64 ? (double)(uint64_t)x : (double)x) - m; a->f += d * d; } break;
      }
    }
  }
  a->pos += cnt;
}

static int64_t int_lowest(KuType k) {
  switch (k) {
  case KU_I8: return INT8_MIN;
  case KU_I16: return INT16_MIN;
  case KU_I32: return INT32_MIN;
  case KU_I64: return INT64_MIN;
  default: return 0;
  }
}

static int64_t int_highest(KuType k) {
  switch (k) {
  case KU_I8: return INT8_MAX;
  case KU_I16: return INT16_MAX;
  case KU_I32: return INT32_MAX;
  case KU_I64: return INT64_MAX;
  case KU_BOOL: return 1;
  case KU_U8: return UINT8_MAX;
  case KU_U16: return UINT16_MAX;
  case KU_U32: return UINT32_MAX;
  case KU_U64: return (int64_t)UINT64_MAX;
  default: return 0;
  }
}

static void acc_init(const RedJob *j, Acc *a) {
  a->pos = a->arg = 0;
  a->u = 0;
  a->f = 0;
  a->i = 0;
  switch (j->op) {
  case R_PROD: a->f = 1; a->u = 1; break;
  case R_ALL: a->u = 1; break;
  case R_MAX: case R_ARGMAX: a->f = j->flo; a->i = int_lowest(j->kt); break;
  case R_MIN: case R_ARGMIN: a->f = j->fhi; a->i = int_highest(j->kt); break;
  default: break;
  }
}

static void red_range(void *arg, int64_t lo, int64_t hi) {
  const RedJob *j = arg;
  int32_t nr = j->nr;
  for (int64_t o = lo; o < hi; o++) {
    int64_t rem = o, koff = 0;
    for (int32_t k = j->nk; k-- > 0;) {
      koff += (rem % j->kd[k]) * j->ks[k];
      rem /= j->kd[k];
    }
    Acc a;
    acc_init(j, &a);
    double m = j->mean ? j->mean[o] : 0;
    if (nr == 0) {
      run(j, &a, j->src + koff * (int64_t)j->es, 1, 1, m);
    } else if (j->n > 0) {
      int64_t idx[MAXR] = {0}, roff = 0, lines = j->n / j->rd[nr - 1];
      for (int64_t l = 0; l < lines; l++) {
        run(j, &a, j->src + (koff + roff) * (int64_t)j->es, j->rd[nr - 1], j->rs[nr - 1], m);
        for (int32_t k = nr - 1; k-- > 0;) { /* odometer over the outer reduced runs */
          roff += j->rs[k];
          if (++idx[k] < j->rd[k]) break;
          roff -= j->rs[k] * j->rd[k];
          idx[k] = 0;
        }
      }
    }
    bool fl = j->kt == KU_F32 || j->kt == KU_F64;
    switch (j->op) {
    case R_ARGMAX: case R_ARGMIN: j->iout[o] = a.arg; break;
    case R_ALL: case R_ANY: j->iout[o] = (int64_t)a.u; break;
    case R_VAR: j->fout[o] = a.f; break;
    case R_MAX: case R_MIN:
      if (fl) j->fout[o] = a.f;
      else j->iout[o] = a.i;
      break;
    default:
      if (fl) j->fout[o] = a.f;
      else j->iout[o] = (int64_t)a.u;
    }
  }
}

/* Column path: the innermost input dim is kept (stride 1) and the reduction
 * runs over outer dims, e.g. sum over axis 0 of (R, I). Each work item is
 * (outer kept position, tile of COLS inner columns); accumulators for the
 * tile live on the stack and the inner loop walks memory contiguously. Float
 * sum/mean/prod/max/min only. */
enum { COLS = 256 };

static bool red_cols_ok(const RedJob *j) {
  bool fl = j->kt == KU_F32 || j->kt == KU_F64;
  bool op = j->op == R_SUM || j->op == R_MEAN || j->op == R_PROD || j->op == R_MAX || j->op == R_MIN;
  return fl && op && j->nk >= 1 && j->nr >= 1 && j->ks[j->nk - 1] == 1 && j->n > 0;
}

#define COL_STEP(T)                                                                           \
  do {                                                                                        \
    const T *q = (const T *)j->src + base;                                                    \
    switch (j->op) {                                                                          \
    case R_SUM: case R_MEAN: for (int64_t i = 0; i < w; i++) acc[i] += q[i]; break;           \
    case R_PROD: for (int64_t i = 0; i < w; i++) acc[i] *= q[i]; break;                       \
    case R_MAX: for (int64_t i = 0; i < w; i++) { double x = q[i]; acc[i] = acc[i] > x ? acc[i] : x; } break; \
    default: for (int64_t i = 0; i < w; i++) { double x = q[i]; acc[i] = acc[i] < x ? acc[i] : x; } break; \
    }                                                                                         \
  } while (0)

static void red_cols_range(void *arg, int64_t lo, int64_t hi) {
  const RedJob *j = arg;
  int32_t nk = j->nk, nr = j->nr;
  int64_t I = j->kd[nk - 1], tiles = (I + COLS - 1) / COLS;
  double init = j->op == R_PROD ? 1 : j->op == R_MAX ? j->flo : j->op == R_MIN ? j->fhi : 0;
  for (int64_t wi = lo; wi < hi; wi++) {
    int64_t oo = wi / tiles, c0 = (wi % tiles) * COLS, w = I - c0 < COLS ? I - c0 : COLS;
    int64_t rem = oo, koff = c0;
    for (int32_t k = nk - 1; k-- > 0;) {
      koff += (rem % j->kd[k]) * j->ks[k];
      rem /= j->kd[k];
    }
    double acc[COLS];
    for (int64_t i = 0; i < w; i++) acc[i] = init;
    int64_t idx[MAXR] = {0}, roff = 0;
    for (int64_t r = 0; r < j->n; r++) {
      int64_t base = koff + roff;
      if (j->kt == KU_F32) COL_STEP(float);
      else COL_STEP(double);
      for (int32_t k = nr; k-- > 0;) {
        roff += j->rs[k];
        if (++idx[k] < j->rd[k]) break;
        roff -= j->rs[k] * j->rd[k];
        idx[k] = 0;
      }
    }
    memcpy(j->fout + oo * I + c0, acc, (size_t)w * sizeof *acc);
  }
}

/* ------------------------------------------------------------ planning */

/* Fills the reduced-axis mask from axis/exclude; false with a message. */
static bool red_axes(KernelCtx *c, int32_t nd, bool *red) {
  int64_t axes[MAXR];
  int32_t n = kernel_attr_ints(c, "axis", axes, MAXR);
  bool exclude = kernel_attr_bool(c, "exclude", false);
  if (n > MAXR) n = MAXR;
  for (int32_t i = 0; i < nd; i++) red[i] = n <= 0;
  if (n <= 0) return true;
  for (int32_t i = 0; i < n; i++) {
    int64_t a = axes[i];
    if (!ku_axis(&a, nd)) {
      kernel_fail(c, "%s: axis %lld is out of range for rank %d", c->op->name, (long long)axes[i], nd);
      return false;
    }
    red[a] = true;
  }
  if (exclude)
    for (int32_t i = 0; i < nd; i++) red[i] = !red[i];
  return true;
}

/* Output shape and merged runs. */
static void red_plan(const Tensor *x, const bool *red, bool keepdims, RedJob *j, int32_t *ond, int64_t *oshape) {
  int64_t st[MAXR], s = 1;
  for (int32_t i = x->ndim; i-- > 0;) {
    st[i] = s;
    s *= x->shape[i];
  }
  int32_t k = 0;
  j->nk = j->nr = 0;
  j->n = 1;
  int last = -1; /* kind of the previous kept run: 0 kept, 1 reduced */
  for (int32_t i = 0; i < x->ndim; i++) {
    if (red[i]) {
      j->n *= x->shape[i];
      if (keepdims) oshape[k++] = 1;
    } else {
      oshape[k++] = x->shape[i];
    }
    if (x->shape[i] == 1) continue;
    if (red[i]) {
      if (last == 1) {
        j->rd[j->nr - 1] *= x->shape[i];
        j->rs[j->nr - 1] = st[i];
      } else {
        j->rd[j->nr] = x->shape[i];
        j->rs[j->nr++] = st[i];
      }
      last = 1;
    } else {
      if (last == 0) {
        j->kd[j->nk - 1] *= x->shape[i];
        j->ks[j->nk - 1] = st[i];
      } else {
        j->kd[j->nk] = x->shape[i];
        j->ks[j->nk++] = st[i];
      }
      last = 0;
    }
  }
  *ond = k;
}

static double f_lowest(DType dt) {
  switch (ku_type(dt)) {
  case KU_F64: return -DBL_MAX;
  case KU_F16: return -65504.0;
  case KU_BF16: return -3.3895313892515355e38;
  default: return -FLT_MAX;
  }
}

/* mean on integers: wrapped sum / (n cast to the dtype), truncating. */
static bool int_mean(DType dt, int64_t sum, int64_t n, int64_t *out) {
  unsigned b = dt.bits;
  uint64_t mask = b >= 64 ? UINT64_MAX : (((uint64_t)1 << b) - 1);
  uint64_t us = (uint64_t)sum & mask, un = (uint64_t)n & mask;
  if (un == 0) return false;
  if (dt.code == DT_UINT) {
    *out = (int64_t)(us / un);
    return true;
  }
  int64_t ss = b >= 64 ? (int64_t)us : (int64_t)(us << (64 - b)) >> (64 - b);
  int64_t sn = b >= 64 ? (int64_t)un : (int64_t)(un << (64 - b)) >> (64 - b);
  *out = sn == -1 ? (int64_t)(0 - (uint64_t)ss) : ss / sn;
  return true;
}

/* Reduces input 0 with `op` over the axes flagged in red_in (NULL: the
 * axis/exclude attributes); oshape_in (NULL: the keepdims attribute's shape)
 * gives the result a shape of its own with the same element count. */
/* Small float32 sums and means (at most SMALL_SUM elements, which the general
 * path runs on one thread anyway) in the two plain layouts, straight into the
 * output: rows (one contiguous reduced run per output element, sum_run_f32 as
 * red_range calls it) and columns (the reduced run outside the one kept run,
 * one double accumulator per column added row by row as red_cols_range does),
 * so the values are the general path's bit for bit without its per-call
 * allocations, plan of work items and per-element stores. The gradient of a
 * small dense layer sums such tensors (bench/grad's MLP: the bias gradients,
 * the softmax's row sums). */
enum { SMALL_SUM = 16384 };

typedef enum { SS_NONE, SS_ROWS, SS_COLS } SmallSum;

static SmallSum small_sum_layout(const RedJob *j, RedOp op, int64_t on) {
  if ((op != R_SUM && op != R_MEAN) || j->kt != KU_F32 || j->nr != 1 || j->n <= 0 || on <= 0 || on * j->n > SMALL_SUM)
    return SS_NONE;
  if (j->rs[0] == 1 && (j->nk == 0 || (j->nk == 1 && j->ks[0] == j->rd[0]))) return SS_ROWS;
  if (j->nk == 1 && j->ks[0] == 1 && j->rs[0] == j->kd[0] && on == j->kd[0] && on <= COLS) return SS_COLS;
  return SS_NONE;
}

static void small_sum_f32(const RedJob *j, RedOp op, SmallSum layout, float *out, int64_t on) {
  const float *src = (const float *)j->src;
  int64_t len = j->rd[0];
  if (layout == SS_ROWS) {
    for (int64_t o = 0; o < on; o++) {
      double a = 0;
      a += sum_run_f32(src + o * len, len);
      out[o] = (float)(op == R_MEAN ? a / (double)j->n : a);
    }
    return;
  }
  double acc[COLS];
  for (int64_t i = 0; i < on; i++) acc[i] = 0;
  for (int64_t r = 0; r < len; r++)
    for (int64_t i = 0; i < on; i++) acc[i] += src[r * on + i];
  for (int64_t i = 0; i < on; i++) out[i] = (float)(op == R_MEAN ? acc[i] / (double)j->n : acc[i]);
}

static int reduce_as(KernelCtx *c, RedOp op, const bool *red_in, int32_t ond_in, const int64_t *oshape_in) {
  const char *name = c->op->name;
  Tensor *x0 = c->inputs[0];
  DType dt = x0->dtype;
  KuType kt0 = ku_type(dt);
  if (kt0 == KU_OTHER) return kernel_fail(c, "%s: unsupported dtype", name);
  bool arg = op == R_ARGMAX || op == R_ARGMIN;
  if (arg && x0->ndim == 0) return kernel_fail(c, "%s: the input must have rank at least 1", name);
  if (x0->ndim == 0 && op != R_VAR) {
    /* spec/ops.md §5: a rank-0 input is returned unchanged (no init select: max(-inf) = -inf) */
    kernel_set_output(c, tensor_retain(x0));
    return KERNEL_OK;
  }
  bool red[MAXR];
  if (red_in) memcpy(red, red_in, (size_t)x0->ndim * sizeof *red);
  else if (!red_axes(c, x0->ndim, red)) return KERNEL_ERROR;
  Tensor *tmp = NULL;
  const Tensor *x = x0;
  if (ku_is_half(dt)) {
    x = ku_float_in(x0, &tmp);
    if (!x) return kernel_fail(c, "%s: out of memory", name);
  }
  RedJob j = {.op = op, .kt = ku_type(x->dtype), .src = x->data, .es = dtype_size(x->dtype),
              .last = kernel_attr_bool(c, "select_last_index", false), .flo = f_lowest(dt), .fhi = -f_lowest(dt)};
  int32_t ond;
  int64_t oshape[MAXR];
  red_plan(x, red, kernel_attr_bool(c, "keepdims", false), &j, &ond, oshape);
  if (oshape_in) {
    ond = ond_in;
    memcpy(oshape, oshape_in, (size_t)ond * sizeof *oshape);
  }
  int64_t on = 1;
  for (int32_t i = 0; i < ond; i++) on *= oshape[i];
  SmallSum small = x == x0 ? small_sum_layout(&j, op, on) : SS_NONE;
  if (small != SS_NONE) {
    Tensor *o = kernel_output(c, dt, ond, oshape);
    if (!o) return KERNEL_ERROR;
    small_sum_f32(&j, op, small, o->data, on);
    return KERNEL_OK;
  }
  bool fl = j.kt == KU_F32 || j.kt == KU_F64;
  int rc = KERNEL_OK;
  double *mean = NULL;
  if (op == R_VAR) {
    const Tensor *mt = c->inputs[1];
    if (mt->numel != on) {
      rc = kernel_fail(c, "variance: the mean has %lld elements, expected %lld", (long long)mt->numel, (long long)on);
      goto out;
    }
    mean = mem_malloc((size_t)(on ? on : 1) * sizeof *mean);
    for (int64_t i = 0; i < on; i++) mean[i] = tensor_get_f64(mt, i);
    j.mean = mean;
  }
  if (j.n == 0 && (arg || (op == R_MEAN && !fl))) {
    if (on > 0) {
      rc = kernel_fail(c, "%s: reduction over an empty axis", name);
      goto out;
    }
  }
  double *fo = mem_malloc((size_t)(on ? on : 1) * sizeof *fo);
  int64_t *io = mem_malloc((size_t)(on ? on : 1) * sizeof *io);
  j.fout = fo;
  j.iout = io;
  int64_t work = j.n > 0 ? j.n : 1;
  if (red_cols_ok(&j) && on > 0) {
    int64_t I = j.kd[j.nk - 1], items = (on / I) * ((I + COLS - 1) / COLS);
    kernel_parallel_for(c, items, 1 + 65536 / (work * COLS), red_cols_range, &j);
  } else {
    kernel_parallel_for(c, on, 1 + 65536 / work, red_range, &j);
  }
  /* argmax/argmin: the dtype the relation chose (the input's first dimension's
   * dtype, as TVM's ArgReduce; int32 unless the shape was written with i64) */
  DType arg_dt = c->out_type && c->out_type->kind == TYPE_TENSOR ? c->out_type->tensor.dtype : DT_I32;
  DType odt = arg ? arg_dt : dt;
  Tensor *o = tensor_new(arg ? arg_dt : fl ? x->dtype : dt, ond, oshape);
  if (!o) {
    rc = kernel_fail(c, "%s: out of memory", name);
  } else {
    size_t oes = dtype_size(o->dtype);
    for (int64_t i = 0; i < on && rc == KERNEL_OK; i++) {
      void *q = (char *)o->data + (size_t)i * oes;
      if (arg || op == R_ALL || op == R_ANY) {
        tensor_store_i64(o->dtype, q, io[i]);
      } else if (op == R_VAR) {
        double d = (double)j.n - (kernel_attr_bool(c, "unbiased", false) ? 1 : 0);
        double v = fo[i] / d;
        ku_cast(DT_F64, &v, o->dtype, q);
      } else if (fl) {
        double v = op == R_MEAN ? fo[i] / (double)j.n : fo[i];
        tensor_store_f64(o->dtype, q, v);
      } else if (op == R_MEAN) {
        int64_t v;
        if (!int_mean(dt, io[i], j.n, &v)) rc = kernel_fail(c, "mean: integer division by zero (empty reduction)");
        else tensor_store_i64(o->dtype, q, v);
      } else {
        tensor_store_i64(o->dtype, q, io[i]);
      }
    }
    if (rc == KERNEL_OK) rc = ku_float_out(c, o, odt);
    else tensor_release(o);
  }
  mem_free(fo);
  mem_free(io);
out:
  mem_free(mean);
  tensor_release(tmp);
  return rc;
}

static int reduce(KernelCtx *c, RedOp op) { return reduce_as(c, op, NULL, 0, NULL); }

#define REDUCE(ID, OP)            \
  int kernel_##ID(KernelCtx *c);  \
  int kernel_##ID(KernelCtx *c) { return reduce(c, OP); }

REDUCE(SUM, R_SUM)
REDUCE(MEAN, R_MEAN)
REDUCE(MAX, R_MAX)
REDUCE(MIN, R_MIN)
REDUCE(PROD, R_PROD)
REDUCE(ALL, R_ALL)
REDUCE(ANY, R_ANY)
REDUCE(ARGMAX, R_ARGMAX)
REDUCE(ARGMIN, R_ARGMIN)
REDUCE(VARIANCE, R_VAR)

/* ------------------------------------------------------------ collapse_sum */

/* Sums input 0 down to the target shape (spec/gradient.md 5.1): aligned from
 * the right, equal extents are kept, target extent 1 sums that axis (kept as
 * 1), data axes without a target axis are summed away. The same shape is the
 * input itself; when only extent-1 axes go, a view. */
static int collapse_sum(KernelCtx *c, int32_t tnd, const int64_t *tshape) {
  const Tensor *x = c->inputs[0];
  int32_t nd = x->ndim;
  if (tnd > nd) return kernel_fail(c, "%s: the target has a higher rank than the data", c->op->name);
  bool red[MAXR];
  bool any = false, moves = false; /* any axis summed / any summed axis of extent > 1 */
  for (int32_t i = 0; i < nd; i++) {
    int32_t t = i - (nd - tnd);
    if (t < 0) red[i] = true;
    else if (tshape[t] == x->shape[i]) red[i] = false;
    else if (tshape[t] == 1) red[i] = true;
    else
      return kernel_fail(c, "%s: target extent %lld does not broadcast to %lld", c->op->name, (long long)tshape[t],
                         (long long)x->shape[i]);
    any |= red[i];
    moves |= red[i] && x->shape[i] != 1;
  }
  if (!any) {
    kernel_set_output(c, tensor_retain(c->inputs[0]));
    return KERNEL_OK;
  }
  if (!moves) return ku_view(c, 0, tnd, tshape);
  return reduce_as(c, R_SUM, red, tnd, tshape);
}

int kernel_COLLAPSE_SUM_LIKE(KernelCtx *c);
int kernel_COLLAPSE_SUM_LIKE(KernelCtx *c) {
  const Tensor *like = c->inputs[1];
  return collapse_sum(c, like->ndim, like->shape);
}

/* The target is the `shape` attribute, or the shape input's values when the
 * attribute is unset (a call built by hand). */
int kernel_COLLAPSE_SUM_TO(KernelCtx *c);
int kernel_COLLAPSE_SUM_TO(KernelCtx *c) {
  int64_t shape[MAXR];
  int32_t n = kernel_attr_ints(c, "shape", shape, MAXR);
  if (n < 0) {
    const Tensor *s = c->inputs[1];
    if (s->ndim != 1 || s->numel > MAXR) return kernel_fail(c, "collapse_sum_to: the shape input must be a short vector");
    n = (int32_t)s->numel;
    for (int32_t i = 0; i < n; i++) shape[i] = ku_index(s, i);
  }
  if (n > MAXR) return kernel_fail(c, "collapse_sum_to: the target rank is too large");
  for (int32_t i = 0; i < n; i++)
    if (shape[i] < 0) return kernel_fail(c, "collapse_sum_to: negative extent %lld", (long long)shape[i]);
  return collapse_sum(c, n, shape);
}
