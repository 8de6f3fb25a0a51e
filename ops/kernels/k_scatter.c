/* ops/kernels/k_scatter.c — the scatter kernels: strided_set, scatter_nd,
 * scatter_elements (spec/gradient.md 5.8-5.10), the adjoints of
 * strided_slice, gather_nd and gather/take.
 *
 * Each copies `data` (or takes it over when it is dying) and writes or
 * combines the updates in place. The combining functions are those of
 * spec/ops.md §2 per dtype: update replaces, add / mul wrap on integers,
 * min / max are the selects a < b ? a : b / a > b ? a : b, mean is
 * (a + b) / 2 (scatter_elements only; integers truncate). Integers compute
 * through their unsigned twin (no signed-overflow UB); float16 and bfloat16
 * combine in double and round on store (one rounding, as float32 would).
 *
 * strided_set: numpy's slicing (Python's slice.indices: negative begin/end
 * count from the end, both are clamped to the extent, missing entries mean
 * the whole axis with stride 1) — TVM's test reference; v is broadcast
 * numpy-style to the slice's shape. scatter_nd: index tuples are checked
 * (no negative wrapping; out of range is a run-time error) and applied in
 * order, so "update" with duplicates keeps the last. scatter_elements:
 * negative indices count from the end; work is split over the lines along
 * `axis` (two lines never write the same element), each line in order.
 */
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_util.h"

#define MAXR TENSOR_MAX_NDIM

typedef enum { SC_UPDATE, SC_ADD, SC_MUL, SC_MEAN, SC_MIN, SC_MAX } ScOp;

static bool sc_op(const char *s, bool mean_ok, ScOp *op) {
  static const char *const names[] = {"update", "add", "mul", "mean", "min", "max"};
  for (int i = 0; i < 6; i++)
    if (strcmp(s, names[i]) == 0 && (i != SC_MEAN || mean_ok)) {
      *op = (ScOp)i;
      return true;
    }
  return false;
}

/* out := data (taken over when dying, else copied); NULL after an error. */
static Tensor *sc_output(KernelCtx *c) {
  Tensor *o = kernel_take_input(c, 0);
  if (o) {
    kernel_set_output(c, o);
    return o;
  }
  const Tensor *x = c->inputs[0];
  o = kernel_output_like(c, x);
  if (o && x->nbytes) memcpy(o->data, x->data, x->nbytes);
  return o;
}

/* n elements: dst[i] = f(dst[i], src[i]) (src stride sstep: 0 broadcasts one value). */
#define SC_LOOP(T, U, F)                                                                           \
  for (int64_t i = 0; i < n; i++) {                                                                \
    T a = d[i], b = s[i * sstep];                                                                  \
    d[i] = F;                                                                                      \
  }
#define SC_TYPED(T, U)                                                                             \
  do {                                                                                             \
    T *d = (T *)dst;                                                                               \
    const T *s = (const T *)src;                                                                   \
    bool fl = (T)0.5 != 0;                                                                         \
    switch (op) {                                                                                  \
    case SC_UPDATE: SC_LOOP(T, U, ((void)a, b)) break;                                             \
    case SC_ADD: SC_LOOP(T, U, fl ? (T)(a + b) : (T)(U)((U)a + (U)b)) break;                       \
    case SC_MUL: SC_LOOP(T, U, fl ? (T)(a * b) : (T)(U)((U)a * (U)b)) break;                       \
    case SC_MEAN: SC_LOOP(T, U, fl ? (T)((a + b) / 2) : (T)(((int64_t)a + (int64_t)b) / 2)) break; \
    case SC_MIN: SC_LOOP(T, U, a < b ? a : b) break;                                               \
    case SC_MAX: SC_LOOP(T, U, a > b ? a : b) break;                                               \
    }                                                                                              \
  } while (0)

/* Combines n elements of dtype dt at src (stride sstep elements) into dst. */
static void sc_combine(DType dt, ScOp op, void *dst, const void *src, int64_t n, int64_t sstep) {
  if (op == SC_UPDATE && sstep == 1) {
    memcpy(dst, src, (size_t)n * dtype_size(dt));
    return;
  }
#define SC_OTHER                                                                                   \
  do {                                                                                             \
    size_t es = dtype_size(dt);                                                                    \
    for (int64_t i = 0; i < n; i++) {                                                              \
      char *p = (char *)dst + (size_t)i * es;                                                      \
      const char *q = (const char *)src + (size_t)(i * sstep) * es;                                \
      double a = tensor_load_f64(dt, p), b = tensor_load_f64(dt, q), r;                            \
      switch (op) {                                                                                \
      case SC_UPDATE: r = b; break;                                                                \
      case SC_ADD: r = a + b; break;                                                               \
      case SC_MUL: r = a * b; break;                                                               \
      case SC_MEAN: r = (a + b) / 2; break;                                                        \
      case SC_MIN: r = a < b ? a : b; break;                                                       \
      default: r = a > b ? a : b; break;                                                           \
      }                                                                                            \
      tensor_store_f64(dt, p, r);                                                                  \
    }                                                                                              \
  } while (0)
  if (dtype_is_bool(dt)) SC_OTHER; /* bools combine as numbers, stored as x != 0 */
  else KU_SWITCH(dt, SC_TYPED, SC_OTHER)
#undef SC_OTHER
}

/* ------------------------------------------------------------ strided_set */

/* Python's slice(b, e, s).indices(n): start, step and element count. */
static void py_slice(int64_t n, bool has_b, int64_t b, bool has_e, int64_t e, int64_t s, int64_t *start,
                     int64_t *count) {
  int64_t lower = s > 0 ? 0 : -1, upper = s > 0 ? n : n - 1;
  if (!has_b) b = s > 0 ? lower : upper;
  else if (b < 0) b = b + n < lower ? lower : b + n;
  else if (b > upper) b = upper;
  if (!has_e) e = s > 0 ? upper : lower;
  else if (e < 0) e = e + n < lower ? lower : e + n;
  else if (e > upper) e = upper;
  int64_t cnt = s > 0 ? (e - b + s - 1) / s : (b - e + (-s) - 1) / (-s);
  *start = b;
  *count = cnt > 0 ? cnt : 0;
}

int kernel_STRIDED_SET(KernelCtx *c);
int kernel_STRIDED_SET(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *v = c->inputs[1];
  const Tensor *tb = c->inputs[2], *te = c->inputs[3], *ts = c->inputs[4];
  if (!dtype_eq(x->dtype, v->dtype)) return kernel_fail(c, "strided_set: v must have data's dtype");
  const Tensor *bes[3] = {tb, te, ts};
  for (int k = 0; k < 3; k++)
    if (!dtype_is_int(bes[k]->dtype) || bes[k]->ndim > 1)
      return kernel_fail(c, "strided_set: begin, end and strides must be integer vectors");
  int32_t nd = x->ndim;
  int64_t start[MAXR], step[MAXR], cnt[MAXR];
  for (int32_t i = 0; i < nd; i++) {
    step[i] = i < ts->numel ? ku_index(ts, i) : 1;
    if (step[i] == 0) return kernel_fail(c, "strided_set: stride 0 on axis %d", i);
    py_slice(x->shape[i], i < tb->numel, i < tb->numel ? ku_index(tb, i) : 0, i < te->numel,
             i < te->numel ? ku_index(te, i) : 0, step[i], &start[i], &cnt[i]);
  }
  /* v broadcasts (right-aligned, numpy) to the slice's shape */
  if (v->ndim > nd) return kernel_fail(c, "strided_set: v has a higher rank than data");
  int64_t vst[MAXR], s = 1;
  for (int32_t i = nd; i-- > 0;) {
    int32_t k = i - (nd - v->ndim);
    int64_t ext = k >= 0 ? v->shape[k] : 1;
    if (ext != cnt[i] && ext != 1)
      return kernel_fail(c, "strided_set: v's extent %lld does not fit the slice's %lld on axis %d", (long long)ext,
                         (long long)cnt[i], i);
    vst[i] = ext == 1 ? 0 : s;
    s *= ext;
  }
  Tensor *o = sc_output(c);
  if (!o) return KERNEL_ERROR;
  int64_t total = 1, xst[MAXR];
  for (int32_t i = 0; i < nd; i++) total *= cnt[i];
  s = 1;
  for (int32_t i = nd; i-- > 0;) {
    xst[i] = s;
    s *= x->shape[i];
  }
  if (total == 0) return KERNEL_OK;
  size_t es = dtype_size(x->dtype);
  /* odometer over the slice; the innermost axis as one strided run */
  int64_t idx[MAXR] = {0}, inner = nd ? cnt[nd - 1] : 1, runs = total / inner;
  for (int64_t r = 0; r < runs; r++) {
    int64_t xo = 0, vo = 0;
    for (int32_t i = 0; i + 1 < nd; i++) {
      xo += (start[i] + idx[i] * step[i]) * xst[i];
      vo += idx[i] * vst[i];
    }
    char *dst = (char *)o->data;
    const char *src = (const char *)v->data;
    if (nd == 0) {
      memcpy(dst, src, es);
    } else {
      int64_t x0 = xo + start[nd - 1] * xst[nd - 1], xs = step[nd - 1] * xst[nd - 1], vs = vst[nd - 1];
      for (int64_t k = 0; k < inner; k++)
        ku_copy1(dst + (size_t)(x0 + k * xs) * es, src + (size_t)(vo + k * vs) * es, es);
    }
    for (int32_t i = nd - 1; i-- > 0;) {
      if (++idx[i] < cnt[i]) break;
      idx[i] = 0;
    }
  }
  return KERNEL_OK;
}

/* ------------------------------------------------------------ scatter_nd */

int kernel_SCATTER_ND(KernelCtx *c);
int kernel_SCATTER_ND(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *ix = c->inputs[1], *u = c->inputs[2];
  ScOp op;
  if (!sc_op(kernel_attr_str(c, "mode", "update"), false, &op))
    return kernel_fail(c, "scatter_nd: unknown mode \"%s\"", kernel_attr_str(c, "mode", "update"));
  if (!dtype_is_int(ix->dtype) || ix->ndim < 1) return kernel_fail(c, "scatter_nd: indices must be an integer tensor of rank >= 1");
  if (!dtype_eq(x->dtype, u->dtype)) return kernel_fail(c, "scatter_nd: updates must have data's dtype");
  int64_t m = ix->shape[0], ny = ku_prod(ix->shape, 1, ix->ndim);
  if (m > x->ndim) return kernel_fail(c, "scatter_nd: indices address %lld of data's %d axes", (long long)m, x->ndim);
  int64_t inner = ku_prod(x->shape, m, x->ndim);
  bool fits = u->ndim == ix->ndim - 1 + x->ndim - m;
  for (int32_t i = 0; fits && i < u->ndim; i++)
    fits = u->shape[i] == (i < ix->ndim - 1 ? ix->shape[i + 1] : x->shape[m + i - (ix->ndim - 1)]);
  if (!fits) return kernel_fail(c, "scatter_nd: updates do not have the shape indices and data give");
  Tensor *o = sc_output(c);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(x->dtype);
  int64_t st[MAXR], s = 1;
  for (int32_t i = x->ndim; i-- > 0;) {
    st[i] = s;
    s *= x->shape[i];
  }
  for (int64_t y = 0; y < ny; y++) {
    int64_t off = 0;
    for (int64_t k = 0; k < m; k++) {
      int64_t q = ku_index(ix, k * ny + y), n = x->shape[k];
      if (q < 0 || q >= n)
        return kernel_fail(c, "scatter_nd: index %lld is out of range for axis %lld of extent %lld", (long long)q,
                           (long long)k, (long long)n);
      off += q * st[k];
    }
    sc_combine(x->dtype, op, (char *)o->data + (size_t)off * es, (const char *)u->data + (size_t)(y * inner) * es,
               inner, 1);
  }
  return KERNEL_OK;
}

/* ------------------------------------------------------------ scatter_elements */

typedef struct SeJob {
  const Tensor *ix, *u;
  Tensor *o;
  ScOp op;
  int32_t nd, axis;
  int64_t ishape[MAXR], ist[MAXR], xst[MAXR], n; /* n: data's extent along axis */
  size_t es;
  int bad;            /* an index out of range (set atomically by any thread) */
  int64_t bad_index;
} SeJob;

static void se_lines(void *arg, int64_t lo, int64_t hi) {
  SeJob *j = arg;
  int32_t nd = j->nd, ax = j->axis;
  int64_t len = j->ishape[ax];
  for (int64_t l = lo; l < hi; l++) {
    int64_t rem = l, io = 0, xo = 0;
    for (int32_t i = nd; i-- > 0;) {
      if (i == ax) continue;
      int64_t p = rem % j->ishape[i];
      rem /= j->ishape[i];
      io += p * j->ist[i];
      xo += p * j->xst[i];
    }
    for (int64_t k = 0; k < len; k++) {
      int64_t ip = io + k * j->ist[ax], t = ku_index(j->ix, ip);
      if (t < 0) t += j->n;
      if (t < 0 || t >= j->n) {
        if (!__atomic_exchange_n(&j->bad, 1, __ATOMIC_RELAXED)) j->bad_index = ku_index(j->ix, ip);
        return;
      }
      sc_combine(j->o->dtype, j->op, (char *)j->o->data + (size_t)(xo + t * j->xst[ax]) * j->es,
                 (const char *)j->u->data + (size_t)ip * j->es, 1, 1);
    }
  }
}

int kernel_SCATTER_ELEMENTS(KernelCtx *c);
int kernel_SCATTER_ELEMENTS(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *ix = c->inputs[1], *u = c->inputs[2];
  ScOp op;
  if (!sc_op(kernel_attr_str(c, "reduction", "update"), true, &op))
    return kernel_fail(c, "scatter_elements: unknown reduction \"%s\"", kernel_attr_str(c, "reduction", "update"));
  if (!dtype_is_int(ix->dtype)) return kernel_fail(c, "scatter_elements: indices must have an integer dtype");
  if (!dtype_eq(x->dtype, u->dtype)) return kernel_fail(c, "scatter_elements: updates must have data's dtype");
  int64_t axis = kernel_attr_int(c, "axis", 0);
  if (x->ndim == 0 || !ku_axis(&axis, x->ndim))
    return kernel_fail(c, "scatter_elements: axis %lld is out of range", (long long)kernel_attr_int(c, "axis", 0));
  bool fits = ix->ndim == x->ndim && u->ndim == x->ndim;
  for (int32_t i = 0; fits && i < x->ndim; i++)
    fits = u->shape[i] == ix->shape[i] && (i == axis || ix->shape[i] <= x->shape[i]);
  if (!fits) return kernel_fail(c, "scatter_elements: indices and updates must have one shape within data's");
  Tensor *o = sc_output(c);
  if (!o) return KERNEL_ERROR;
  SeJob j = {.ix = ix, .u = u, .o = o, .op = op, .nd = x->ndim, .axis = (int32_t)axis, .n = x->shape[axis],
             .es = dtype_size(x->dtype)};
  int64_t s = 1, t = 1;
  for (int32_t i = x->ndim; i-- > 0;) {
    j.ishape[i] = ix->shape[i];
    j.ist[i] = t;
    j.xst[i] = s;
    t *= ix->shape[i];
    s *= x->shape[i];
  }
  if (ix->numel == 0) return KERNEL_OK;
  int64_t lines = ix->numel / ix->shape[axis];
  kernel_parallel_for(c, lines, 1 + 4096 / ix->shape[axis], se_lines, &j);
  if (__atomic_load_n(&j.bad, __ATOMIC_RELAXED))
    return kernel_fail(c, "scatter_elements: index %lld is out of range for an axis of extent %lld",
                       (long long)j.bad_index, (long long)j.n);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ sparse_to_dense */

/* sparse_to_dense(indices, values, default_value, output_shape=[...]) (TVM's topi):
 * default everywhere, then value j at the positions whose leading k coordinates
 * equal row j of the (n, k) indices (a rank-0/1 index addresses axis 0), later
 * rows winning; rows outside the output match nothing, as in TVM. Scalar
 * values apply to every index. */
int kernel_SPARSE_TO_DENSE(KernelCtx *c);
int kernel_SPARSE_TO_DENSE(KernelCtx *c) {
  const Tensor *ix = c->inputs[0], *v = c->inputs[1], *dv = c->inputs[2];
  int64_t shape[MAXR];
  int32_t nd = kernel_attr_ints(c, "output_shape", shape, MAXR);
  if (nd < 0 || nd > MAXR) return kernel_fail(c, "sparse_to_dense: output_shape must be set");
  if (!dtype_is_int(ix->dtype) || ix->ndim > 2) return kernel_fail(c, "sparse_to_dense: indices must be an integer tensor of rank <= 2");
  if (v->ndim > 1 || dv->numel != 1)
    return kernel_fail(c, "sparse_to_dense: values must be a vector or scalar and default_value a scalar");
  int64_t n = ix->ndim == 0 ? 1 : ix->shape[0], k = ix->ndim == 2 ? ix->shape[1] : 1;
  if (k > nd || (nd == 0 && ix->numel > 0)) return kernel_fail(c, "sparse_to_dense: indices address more axes than the output has");
  if (v->ndim == 1 && v->shape[0] != n) return kernel_fail(c, "sparse_to_dense: %lld values for %lld indices", (long long)v->shape[0], (long long)n);
  Tensor *o = kernel_output(c, v->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(v->dtype);
  char fill[16]; /* the default value in the values' dtype (TVM casts it, as its Python passes const(0)) */
  ku_cast(dv->dtype, dv->data, v->dtype, fill);
  for (int64_t i = 0; i < o->numel; i++) ku_copy1((char *)o->data + (size_t)i * es, fill, es);
  int64_t st[MAXR], s = 1;
  for (int32_t i = nd; i-- > 0;) {
    st[i] = s;
    s *= shape[i];
  }
  int64_t block = nd ? st[k - 1] : 1; /* elements under one k-prefix */
  for (int64_t j = 0; j < n; j++) {
    int64_t off = 0;
    bool inside = true;
    for (int64_t a = 0; a < k && nd; a++) {
      int64_t q = ku_index(ix, j * k + a);
      if (q < 0 || q >= shape[a]) inside = false;
      off += q * st[a];
    }
    if (!inside) continue;
    const char *src = (const char *)v->data + (size_t)(v->ndim ? j : 0) * es;
    for (int64_t b = 0; b < block; b++) ku_copy1((char *)o->data + (size_t)(off + b) * es, src, es);
  }
  return KERNEL_OK;
}
