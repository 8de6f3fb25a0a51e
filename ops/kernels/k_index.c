/* ops/kernels/k_index.c — slicing, gathering, selection and creation kernels:
 * strided_slice, slice_like, take, gather, gather_nd, where, one_hot, arange,
 * shape_of, ndarray_size, sort, argsort, topk (spec/ops.md §6.4, §6.6, §13).
 *
 * Data moves as raw elements (any dtype). Indices of any integer dtype are
 * read as int64 (ku_index). Out-of-range behaviour is explicit: take clamps
 * (mode "clip", also used for "fast") or wraps ("wrap"); gather and gather_nd
 * report an out-of-range index as a run-time error instead of reading outside
 * the tensor. strided_slice canonicalises begin/end exactly as its type
 * relation does (ops/relations/rel_shape.c), so the kernel and the inferred type agree.
 * Sorting is a stable merge sort on long double keys (exact for every int64
 * and uint64), NaN ordered after every number.
 */
#include <math.h>
#include <stdio.h>

#include "ir/mem.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_util.h"
#include "ops/op_ids.h"

#define MAXR TENSOR_MAX_NDIM

/* ------------------------------------------------------------ slicing */

/* o[k] = x[begin + k * step] per dim. */
static void slice_copy(const Tensor *x, const int64_t *begin, const int64_t *step, Tensor *o) {
  size_t es = dtype_size(x->dtype);
  int32_t nd = x->ndim;
  if (o->numel == 0) return;
  if (nd == 0) {
    memcpy(o->data, x->data, es);
    return;
  }
  int64_t ist[MAXR], s = 1;
  for (int32_t i = nd; i-- > 0;) {
    ist[i] = s;
    s *= x->shape[i];
  }
  int64_t last = o->shape[nd - 1], rows = o->numel / last, ls = step[nd - 1];
  for (int64_t r = 0; r < rows; r++) {
    int64_t rem = r, off = begin[nd - 1];
    for (int32_t i = nd - 1; i-- > 0;) {
      off += (begin[i] + (rem % o->shape[i]) * step[i]) * ist[i];
      rem /= o->shape[i];
    }
    char *q = (char *)o->data + (size_t)(r * last) * es;
    const char *p = (const char *)x->data + off * (int64_t)es;
    if (ls == 1) {
      memcpy(q, p, (size_t)last * es);
    } else {
      for (int64_t k = 0; k < last; k++) ku_copy1(q + (size_t)k * es, p + k * ls * (int64_t)es, es);
    }
  }
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Canonical (begin, extent) of one dim; false with a message. */
static bool slice_dim(int64_t n, int64_t b, bool bnone, int64_t e, bool enone, int64_t s, bool size_mode,
                      int64_t *begin, int64_t *extent, char *err, size_t errn) {
  if (size_mode) s = 1;
  if (s == 0) {
    snprintf(err, errn, "stride 0");
    return false;
  }
  if (bnone) b = s > 0 ? 0 : n - 1;
  if (b < 0) b += n;
  b = s > 0 ? clamp64(b, 0, n) : clamp64(b, -1, n - 1);
  if (size_mode) e = (enone || e < 0) ? n : b + clamp64(e, 0, n);
  else if (enone) e = s > 0 ? n : 0;
  else if (e < 0) e += n;
  e = s > 0 ? clamp64(e, 0, n) : clamp64(e, -1, n - 1);
  if ((s > 0 && b > e) || (s < 0 && b < e)) {
    snprintf(err, errn, "begin %lld is past end %lld for stride %lld", (long long)b, (long long)e, (long long)s);
    return false;
  }
  int64_t span = b > e ? b - e : e - b, as = s > 0 ? s : -s;
  *begin = b;
  *extent = (span + as - 1) / as;
  return true;
}

int kernel_STRIDED_SLICE(KernelCtx *c);
int kernel_STRIDED_SLICE(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int32_t nd = x->ndim;
  int64_t bg[MAXR], en[MAXR], st[MAXR], ax[MAXR];
  bool bn[MAXR], enn[MAXR], sn[MAXR], an[MAXR];
  int32_t nb = ku_attr_opt_ints(c, "begin", bg, bn, MAXR), ne = ku_attr_opt_ints(c, "end", en, enn, MAXR);
  int32_t ns = ku_attr_opt_ints(c, "strides", st, sn, MAXR), na = ku_attr_opt_ints(c, "axes", ax, an, MAXR);
  if (nb < 0 || ne < 0 || nb > MAXR || ne > MAXR || ns > MAXR || na > MAXR)
    return kernel_fail(c, "strided_slice: begin and end must be set");
  const char *mode = kernel_attr_str(c, "slice_mode", "end");
  bool size_mode = strcmp(mode, "size") == 0;
  if (!size_mode && strcmp(mode, "end") != 0) return kernel_fail(c, "strided_slice: unknown slice_mode \"%s\"", mode);
  if (ns < 0) ns = 0;
  for (int32_t i = 0; i < ns; i++)
    if (sn[i]) st[i] = 1;
  int64_t begin[MAXR], step[MAXR], shape[MAXR];
  for (int32_t i = 0; i < nd; i++) {
    begin[i] = 0;
    step[i] = 1;
    shape[i] = x->shape[i];
  }
  char err[128];
  if (na >= 0) {
    if (nb != na || ne != na || (ns != na && ns > 1))
      return kernel_fail(c, "strided_slice: begin, end, strides and axes must have the same length");
    bool seen[MAXR] = {false};
    for (int32_t i = 0; i < na; i++) {
      int64_t a = ax[i];
      if (an[i] || !ku_axis(&a, nd) || seen[a]) return kernel_fail(c, "strided_slice: invalid axes");
      seen[a] = true;
      int64_t s = ns == 0 ? 1 : ns == 1 ? st[0] : st[i];
      if (!slice_dim(x->shape[a], bg[i], bn[i], en[i], enn[i], s, size_mode, &begin[a], &shape[a], err, sizeof err))
        return kernel_fail(c, "strided_slice: axis %lld: %s", (long long)a, err);
      step[a] = size_mode ? 1 : s;
    }
  } else {
    if (nb > nd || ne > nd || ns > nd)
      return kernel_fail(c, "strided_slice: begin/end/strides have more entries than the tensor has dimensions");
    for (int32_t i = 0; i < nd; i++) {
      if (i >= nb && i >= ne) continue;
      int64_t s = i < ns ? st[i] : 1;
      if (!slice_dim(x->shape[i], i < nb ? bg[i] : 0, i >= nb || bn[i], i < ne ? en[i] : 0, i >= ne || enn[i], s,
                     size_mode, &begin[i], &shape[i], err, sizeof err))
        return kernel_fail(c, "strided_slice: axis %d: %s", i, err);
      step[i] = size_mode ? 1 : s;
    }
  }
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  slice_copy(x, begin, step, o);
  return KERNEL_OK;
}

int kernel_SLICE_LIKE(KernelCtx *c);
int kernel_SLICE_LIKE(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *l = c->inputs[1];
  int64_t axes[MAXR], shape[MAXR], begin[MAXR], step[MAXR];
  int32_t n = kernel_attr_ints(c, "axes", axes, MAXR);
  for (int32_t i = 0; i < x->ndim; i++) {
    shape[i] = x->shape[i];
    begin[i] = 0;
    step[i] = 1;
  }
  if (n <= 0) {
    if (l->ndim > x->ndim) return kernel_fail(c, "slice_like: shape_like has a higher rank than data");
    for (int32_t i = 0; i < l->ndim; i++) shape[i] = l->shape[i];
  } else {
    for (int32_t i = 0; i < n && i < MAXR; i++) {
      int64_t a = axes[i];
      if (!ku_axis(&a, x->ndim) || a >= l->ndim) return kernel_fail(c, "slice_like: axis %lld is out of range", (long long)axes[i]);
      shape[a] = l->shape[a];
    }
  }
  for (int32_t i = 0; i < x->ndim; i++)
    if (shape[i] > x->shape[i])
      return kernel_fail(c, "slice_like: cannot slice extent %lld to %lld", (long long)x->shape[i], (long long)shape[i]);
  Tensor *o = kernel_output(c, x->dtype, x->ndim, shape);
  if (!o) return KERNEL_ERROR;
  slice_copy(x, begin, step, o);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ take */

typedef struct TakeJob {
  const Tensor *x, *ix;
  char *dst;
  size_t es, blk;          /* element size; bytes per taken slice */
  int64_t n;               /* extent of the taken axis */
  int64_t nidx;            /* indices per batch */
  int64_t outer_per_batch; /* data outer positions sharing one batch of indices */
  bool wrap;
} TakeJob;

static inline int64_t take_fix(int64_t k, int64_t n, bool wrap) {
  if (wrap) return ((k % n) + n) % n;
  return k < 0 ? 0 : k >= n ? n - 1 : k;
}

/* Work item w = (outer position, index position). */
static void take_range(void *arg, int64_t lo, int64_t hi) {
  const TakeJob *j = arg;
  const char *src = j->x->data;
  for (int64_t w = lo; w < hi; w++) {
    int64_t o = w / j->nidx, i = w % j->nidx, b = o / j->outer_per_batch;
    int64_t k = take_fix(ku_index(j->ix, b * j->nidx + i), j->n, j->wrap);
    const char *p = src + (size_t)(o * j->n + k) * j->blk;
    char *q = j->dst + (size_t)w * j->blk;
    if (j->blk == j->es) ku_copy1(q, p, j->es);
    else memcpy(q, p, j->blk);
  }
}

int kernel_TAKE(KernelCtx *c);
int kernel_TAKE(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *ix = c->inputs[1];
  if (!dtype_is_int(ix->dtype)) return kernel_fail(c, "take: indices must have an integer dtype");
  const char *mode = kernel_attr_str(c, "mode", "clip");
  if (strcmp(mode, "clip") && strcmp(mode, "wrap") && strcmp(mode, "fast"))
    return kernel_fail(c, "take: unknown mode \"%s\"", mode);
  const AttrValue *av = kernel_attr(c, "axis");
  size_t es = dtype_size(x->dtype);
  TakeJob j = {.x = x, .ix = ix, .es = es, .wrap = strcmp(mode, "wrap") == 0};
  int64_t shape[MAXR];
  int32_t nd = 0;
  int64_t outer, nidx = ix->numel, bd = 0;
  if (!av || av->kind != AV_INT) { /* flattened data */
    memcpy(shape, ix->shape, (size_t)ix->ndim * sizeof *shape);
    nd = ix->ndim;
    outer = 1;
    j.n = x->numel;
    j.blk = es;
  } else {
    int64_t axis = av->i.value;
    if (!ku_axis(&axis, x->ndim)) return kernel_fail(c, "take: axis %lld is out of range", (long long)axis);
    bd = kernel_attr_int(c, "batch_dims", 0);
    if (bd < 0) bd += ix->ndim;
    if (bd < 0 || bd > ix->ndim || bd > axis) return kernel_fail(c, "take: batch_dims is out of range");
    for (int64_t i = 0; i < bd; i++)
      if (ix->shape[i] != x->shape[i]) return kernel_fail(c, "take: batch dimensions of data and indices differ");
    if (x->ndim - 1 + ix->ndim - bd > MAXR) return kernel_fail(c, "take: result rank too large");
    for (int64_t i = 0; i < axis; i++) shape[nd++] = x->shape[i];
    for (int64_t i = bd; i < ix->ndim; i++) shape[nd++] = ix->shape[i];
    for (int64_t i = axis + 1; i < x->ndim; i++) shape[nd++] = x->shape[i];
    outer = ku_prod(x->shape, 0, axis);
    j.n = x->shape[axis];
    j.blk = (size_t)ku_prod(x->shape, axis + 1, x->ndim) * es;
    nidx = ku_prod(ix->shape, bd, ix->ndim);
  }
  int64_t batch = ku_prod(ix->shape, 0, bd);
  j.nidx = nidx;
  j.outer_per_batch = batch ? outer / batch : 1;
  if (j.outer_per_batch == 0) j.outer_per_batch = 1;
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  if (o->numel == 0) return KERNEL_OK;
  if (j.n == 0) return kernel_fail(c, "take: cannot take from an empty axis");
  j.dst = o->data;
  kernel_parallel_for(c, outer * nidx, 1 + (int64_t)(65536 / j.blk), take_range, &j);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ gather, gather_nd */

int kernel_GATHER(KernelCtx *c);
int kernel_GATHER(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *ix = c->inputs[1];
  if (!dtype_is_int(ix->dtype)) return kernel_fail(c, "gather: indices must have an integer dtype");
  const AttrValue *av = kernel_attr(c, "axis");
  if (!av || av->kind != AV_INT) return kernel_fail(c, "gather: axis must be set");
  int64_t axis = av->i.value;
  if (!ku_axis(&axis, x->ndim)) return kernel_fail(c, "gather: axis %lld is out of range", (long long)axis);
  if (ix->ndim != x->ndim) return kernel_fail(c, "gather: indices and data must have the same rank");
  for (int32_t i = 0; i < x->ndim; i++)
    if (i != axis && ix->shape[i] > x->shape[i]) return kernel_fail(c, "gather: indices extent exceeds data on axis %d", i);
  Tensor *o = kernel_output(c, x->dtype, ix->ndim, ix->shape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(x->dtype);
  int64_t ist[MAXR], s = 1;
  for (int32_t i = x->ndim; i-- > 0;) {
    ist[i] = s;
    s *= x->shape[i];
  }
  for (int64_t e = 0; e < o->numel; e++) {
    int64_t rem = e, off = 0;
    for (int32_t i = ix->ndim; i-- > 0;) {
      int64_t q = rem % ix->shape[i];
      rem /= ix->shape[i];
      if (i == axis) {
        q = ku_index(ix, e);
        if (q < 0 || q >= x->shape[axis])
          return kernel_fail(c, "gather: index %lld is out of range for extent %lld", (long long)q, (long long)x->shape[axis]);
      }
      off += q * ist[i];
    }
    ku_copy1((char *)o->data + (size_t)e * es, (const char *)x->data + (size_t)off * es, es);
  }
  return KERNEL_OK;
}

int kernel_GATHER_ND(KernelCtx *c);
int kernel_GATHER_ND(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *ix = c->inputs[1];
  if (!dtype_is_int(ix->dtype)) return kernel_fail(c, "gather_nd: indices must have an integer dtype");
  if (ix->ndim < 1) return kernel_fail(c, "gather_nd: indices must have rank at least 1");
  int64_t m = ix->shape[0], bd = kernel_attr_int(c, "batch_dims", 0);
  const AttrValue *ir = kernel_attr(c, "index_rank");
  if (ir && ir->kind == AV_INT && ir->i.value != m) return kernel_fail(c, "gather_nd: index_rank does not match indices");
  if (bd < 0 || m + bd > x->ndim || bd > ix->ndim - 1) return kernel_fail(c, "gather_nd: indices address too many dimensions");
  for (int64_t i = 0; i < bd; i++)
    if (ix->shape[1 + i] != x->shape[i]) return kernel_fail(c, "gather_nd: batch dimensions differ");
  int64_t shape[MAXR];
  int32_t nd = 0;
  if (ix->ndim - 1 + x->ndim - m - bd > MAXR) return kernel_fail(c, "gather_nd: result rank too large");
  for (int32_t i = 1; i < ix->ndim; i++) shape[nd++] = ix->shape[i];
  for (int64_t i = m + bd; i < x->ndim; i++) shape[nd++] = x->shape[i];
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(x->dtype);
  int64_t inner = ku_prod(x->shape, m + bd, x->ndim), ny = ku_prod(ix->shape, 1, ix->ndim);
  int64_t per_batch = ku_prod(ix->shape, 1 + bd, ix->ndim), dst[MAXR], s = 1;
  for (int32_t i = x->ndim; i-- > 0;) {
    dst[i] = s;
    s *= x->shape[i];
  }
  for (int64_t y = 0; y < ny; y++) {
    int64_t b = per_batch ? y / per_batch : 0, off = 0, rem = b;
    for (int64_t i = bd; i-- > 0;) {
      off += (rem % x->shape[i]) * dst[i];
      rem /= x->shape[i];
    }
    for (int64_t k = 0; k < m; k++) {
      int64_t q = ku_index(ix, k * ny + y), n = x->shape[bd + k];
      if (q < 0 || q >= n) return kernel_fail(c, "gather_nd: index %lld is out of range for extent %lld", (long long)q, (long long)n);
      off += q * dst[bd + k];
    }
    memcpy((char *)o->data + (size_t)(y * inner) * es, (const char *)x->data + (size_t)off * es, (size_t)inner * es);
  }
  return KERNEL_OK;
}

/* ------------------------------------------------------------ where */

/* Truth of element i of a condition of any dtype (floats: ordered != 0). */
static inline bool cond_at(const Tensor *t, int64_t i) {
  const void *p = t->data;
  switch (ku_type(t->dtype)) {
  case KU_BOOL: case KU_U8: case KU_I8: return ((const uint8_t *)p)[i] != 0;
  case KU_I32: case KU_U32: return ((const uint32_t *)p)[i] != 0;
  case KU_I64: case KU_U64: return ((const uint64_t *)p)[i] != 0;
  case KU_I16: case KU_U16: return ((const uint16_t *)p)[i] != 0;
  case KU_F32: return ((const float *)p)[i] < 0 || ((const float *)p)[i] > 0;
  case KU_F64: return ((const double *)p)[i] < 0 || ((const double *)p)[i] > 0;
  default: {
    double v = tensor_load_f64(t->dtype, (const char *)p + (size_t)i * dtype_size(t->dtype));
    return v < 0 || v > 0;
  }
  }
}

static void bstrides(const Tensor *t, int32_t nd, int64_t *st) {
  int64_t s = 1;
  for (int32_t i = nd; i-- > 0;) {
    int32_t k = t->ndim - nd + i;
    st[i] = (k < 0 || t->shape[k] == 1) ? 0 : s;
    if (k >= 0) s *= t->shape[k];
  }
}

typedef struct WhereJob {
  const Tensor *cond, *x, *y;
  char *dst;
  size_t es;
  int32_t nd;
  const int64_t *shape;
  int64_t sc[MAXR], sx[MAXR], sy[MAXR];
  bool same; /* every operand has the output's element count: flat indexing */
} WhereJob;

static void where_range(void *arg, int64_t lo, int64_t hi) {
  const WhereJob *j = arg;
  const char *px = j->x->data, *py = j->y->data;
  size_t es = j->es;
  for (int64_t e = lo; e < hi; e++) {
    int64_t oc = e, ox = e, oy = e;
    if (!j->same) {
      int64_t rem = e;
      oc = ox = oy = 0;
      for (int32_t i = j->nd; i-- > 0;) {
        int64_t q = rem % j->shape[i];
        rem /= j->shape[i];
        oc += q * j->sc[i];
        ox += q * j->sx[i];
        oy += q * j->sy[i];
      }
    }
    const char *src = cond_at(j->cond, oc) ? px + (size_t)ox * es : py + (size_t)oy * es;
    ku_copy1(j->dst + (size_t)e * es, src, es);
  }
}

/* The common case (the ReLU gradient's where(less(x, 0), zeros_like(g), g)):
 * operands of one shape, a one-byte condition, 4-byte elements; a branch-free
 * select per lane, with a TENSOR_ZERO operand never read. */
typedef struct WhereFast {
  const uint8_t *cond;
  const uint32_t *x, *y; /* NULL: the operand is all zero bytes */
  uint32_t *dst;
} WhereFast;

static KHOT void where_u32(uint32_t *restrict d, const uint8_t *restrict c, const uint32_t *restrict x,
                           const uint32_t *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t m = -(uint32_t)(c[i] != 0);
    d[i] = (x[i] & m) | (y[i] & ~m);
  }
}

static KHOT void where_u32_x0(uint32_t *restrict d, const uint8_t *restrict c, const uint32_t *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = y[i] & ~-(uint32_t)(c[i] != 0);
}

static KHOT void where_u32_y0(uint32_t *restrict d, const uint8_t *restrict c, const uint32_t *restrict x, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = x[i] & -(uint32_t)(c[i] != 0);
}

static void where_fast_range(void *arg, int64_t lo, int64_t hi) {
  const WhereFast *j = arg;
  if (!j->x && !j->y) memset(j->dst + lo, 0, (size_t)(hi - lo) * 4);
  else if (!j->x) where_u32_x0(j->dst + lo, j->cond + lo, j->y + lo, hi - lo);
  else if (!j->y) where_u32_y0(j->dst + lo, j->cond + lo, j->x + lo, hi - lo);
  else where_u32(j->dst + lo, j->cond + lo, j->x + lo, j->y + lo, hi - lo);
}

/* A one-element condition picks one operand for the whole result: when that
 * operand already has the result's shape it is the result, shared, with no
 * pass over memory. The power rule's where(equal(c, 0f), zeros_like(g), ..)
 * for a constant exponent c (GPT-2's layer norm and gelu) is this case. */
static bool where_scalar_cond_shortcut(KernelCtx *c, int32_t nd, const int64_t *shape) {
  const Tensor *cd = c->inputs[0];
  if (cd->numel != 1) return false;
  Tensor *pick = cond_at(cd, 0) ? c->inputs[1] : c->inputs[2];
  if (pick->ndim != nd || (nd > 0 && memcmp(pick->shape, shape, (size_t)nd * sizeof *shape) != 0)) return false;
  kernel_set_output(c, tensor_retain(pick));
  return true;
}

int kernel_WHERE(KernelCtx *c);
int kernel_WHERE(KernelCtx *c) {
  const Tensor *cd = c->inputs[0], *x = c->inputs[1], *y = c->inputs[2];
  if (!dtype_eq(x->dtype, y->dtype)) return kernel_fail(c, "where: x and y have different dtypes");
  int64_t s1[MAXR], shape[MAXR];
  int32_t n1, nd;
  if (!kernel_broadcast_shape(x, y, &n1, s1)) return kernel_fail_broadcast(c, "where: x and y", x, y);
  Tensor tmp = {.ndim = n1, .shape = s1};
  if (!kernel_broadcast_shape(cd, &tmp, &nd, shape)) return kernel_fail_broadcast(c, "where: the condition and x, y", cd, &tmp);
  if (where_scalar_cond_shortcut(c, nd, shape)) return KERNEL_OK;
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  WhereJob j = {.cond = cd, .x = x, .y = y, .dst = o->data, .es = dtype_size(x->dtype), .nd = nd, .shape = o->shape};
  j.same = cd->numel == o->numel && x->numel == o->numel && y->numel == o->numel;
  if (j.same && j.es == 4 && dtype_size(cd->dtype) == 1 && cd->dtype.lanes == 1) {
    WhereFast f = {.cond = cd->data, .x = tensor_is_zero(x) ? NULL : x->data, .y = tensor_is_zero(y) ? NULL : y->data,
                   .dst = o->data};
    kernel_parallel_for(c, o->numel, 32768, where_fast_range, &f);
    return KERNEL_OK;
  }
  bstrides(cd, nd, j.sc);
  bstrides(x, nd, j.sx);
  bstrides(y, nd, j.sy);
  kernel_parallel_for(c, o->numel, 32768, where_range, &j);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ one_hot */

int kernel_ONE_HOT(KernelCtx *c);
int kernel_ONE_HOT(KernelCtx *c) {
  const Tensor *ix = c->inputs[0], *on = c->inputs[1], *off = c->inputs[2];
  if (!dtype_is_int(ix->dtype)) return kernel_fail(c, "one_hot: indices must have an integer dtype");
  if (on->numel != 1 || off->numel != 1) return kernel_fail(c, "one_hot: on_value and off_value must be scalars");
  int64_t depth = kernel_attr_int(c, "depth", 1), nd = ix->ndim, axis = kernel_attr_int(c, "axis", -1);
  if (depth <= 0) return kernel_fail(c, "one_hot: depth must be positive");
  if (axis == -1) axis = nd;
  if (axis < 0 || axis > nd || nd + 1 > MAXR) return kernel_fail(c, "one_hot: axis %lld is out of range", (long long)axis);
  DType dt = on->dtype;
  kernel_attr_dtype(c, "dtype", &dt);
  int64_t shape[MAXR];
  for (int64_t i = 0, k = 0; i <= nd; i++) shape[i] = i == axis ? depth : ix->shape[k++];
  Tensor *o = kernel_output(c, dt, (int32_t)nd + 1, shape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(dt);
  char von[16], voff[16];
  if (es > sizeof von) return kernel_fail(c, "one_hot: unsupported dtype");
  ku_cast(on->dtype, on->data, dt, von);
  ku_cast(off->dtype, off->data, dt, voff);
  int64_t outer = ku_prod(ix->shape, 0, axis), inner = ku_prod(ix->shape, axis, nd);
  char *q = o->data;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t k = 0; k < depth; k++)
      for (int64_t i = 0; i < inner; i++, q += es) ku_copy1(q, ku_index(ix, a * inner + i) == k ? von : voff, es);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ arange, shape_of, ndarray_size */

int kernel_ARANGE(KernelCtx *c);
int kernel_ARANGE(KernelCtx *c) {
  const Tensor *a = c->inputs[0], *b = c->inputs[1], *s = c->inputs[2];
  if (a->numel != 1 || b->numel != 1 || s->numel != 1) return kernel_fail(c, "arange: start, stop and step must be scalars");
  DType dt = a->dtype;
  kernel_attr_dtype(c, "dtype", &dt);
  if (ku_type(dt) == KU_OTHER) return kernel_fail(c, "arange: unsupported dtype");
  bool fl = dtype_is_float(a->dtype);
  double start = tensor_get_f64(a, 0), stop = tensor_get_f64(b, 0), step = tensor_get_f64(s, 0);
  /* the relation's checks (ops/relations/rel_shape.c), here for bounds it
   * did not see: an infinite or NaN bound is an error, not a huge tensor */
  if (step == 0) return kernel_fail(c, "arange: step must not be 0");
  double nf = ceil((stop - start) / step);
  if (isnan(nf))
    return kernel_fail(c, "arange: the length of the range is not a number (start %g, stop %g, step %g)", start, stop,
                       step);
  /* stop == start at run time gives an empty tensor, as TVM's dynamic arange
   * (its shape function computes 0); a range running the wrong way is an error
   * (TVM computes a negative extent) */
  if (nf < 0) return kernel_fail(c, "arange: the range is empty (start %g, stop %g, step %g)", start, stop, step);
  if (nf > 9e15) return kernel_fail(c, "arange: the range is too long (start %g, stop %g, step %g)", start, stop, step);
  int64_t n = (int64_t)nf;
  /* the type's length comes from the start/stop/step attributes (copies of
   * the inputs): a call whose inputs say otherwise cannot give its type */
  const Type *t = c->out_type;
  if (t && t->kind == TYPE_TENSOR && t->tensor.ndim == 1 && t->tensor.dims[0].kind == DIM_INT &&
      t->tensor.dims[0].value != n)
    return kernel_fail(c, "arange: the inputs (start %g, stop %g, step %g) give %lld elements, the attributes %lld",
                       start, stop, step, (long long)n, (long long)t->tensor.dims[0].value);
  Tensor *o = kernel_output(c, dt, 1, &n);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(dt);
  bool f32 = ku_type(a->dtype) == KU_F32 || ku_type(a->dtype) == KU_F16;
  int64_t is = tensor_get_i64(a, 0), ist = tensor_get_i64(s, 0);
  for (int64_t i = 0; i < n; i++) {
    char *q = (char *)o->data + (size_t)i * es;
    if (fl) {
      double v = f32 ? (double)((float)start + (float)i * (float)step) : start + (double)i * step;
      ku_cast(DT_F64, &v, dt, q);
    } else {
      int64_t v = (int64_t)((uint64_t)is + (uint64_t)i * (uint64_t)ist);
      ku_cast(DT_I64, &v, dt, q);
    }
  }
  return KERNEL_OK;
}

int kernel_SHAPE_OF(KernelCtx *c);
int kernel_SHAPE_OF(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  DType dt = DT_I32;
  kernel_attr_dtype(c, "dtype", &dt);
  int64_t n = x->ndim;
  Tensor *o = kernel_output(c, dt, x->ndim == 0 ? 0 : 1, &n);
  if (!o) return KERNEL_ERROR;
  if (x->ndim == 0) { /* TVM quirk: a scalar's shape is a scalar */
    int64_t z = 0;
    ku_cast(DT_I64, &z, dt, o->data);
  }
  for (int32_t i = 0; i < x->ndim; i++) ku_cast(DT_I64, &x->shape[i], dt, (char *)o->data + (size_t)i * dtype_size(dt));
  return KERNEL_OK;
}

int kernel_NDARRAY_SIZE(KernelCtx *c);
int kernel_NDARRAY_SIZE(KernelCtx *c) {
  DType dt = DT_I32;
  kernel_attr_dtype(c, "dtype", &dt);
  Tensor *o = kernel_output(c, dt, 0, NULL);
  if (!o) return KERNEL_ERROR;
  int64_t n = c->inputs[0]->numel;
  ku_cast(DT_I64, &n, dt, o->data);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ sorting */

typedef struct SortKey {
  long double v; /* exact for every int64/uint64 and float */
  bool nan;
} SortKey;

/* a before b in the requested order (strict; NaN after numbers ascending,
 * before them descending, as the mirror image). */
static inline bool key_before(const SortKey *a, const SortKey *b, bool asc) {
  if (a->nan || b->nan) return asc ? (!a->nan && b->nan) : (a->nan && !b->nan);
  return asc ? a->v < b->v : a->v > b->v;
}

/* Stable merge sort of idx[0..n) by keys (tmp: n scratch entries). */
static void merge_sort(int64_t *idx, int64_t *tmp, int64_t n, const SortKey *k, bool asc) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, t = lo;
      while (i < mid && j < hi) tmp[t++] = key_before(&k[idx[j]], &k[idx[i]], asc) ? idx[j++] : idx[i++];
      while (i < mid) tmp[t++] = idx[i++];
      while (j < hi) tmp[t++] = idx[j++];
    }
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
  }
}

static SortKey load_key(DType dt, const void *p) {
  SortKey k = {0, false};
  if (dtype_is_float(dt)) {
    double v = tensor_load_f64(dt, p);
    k.nan = isnan(v);
    k.v = v;
  } else if (dt.code == DT_UINT && dt.bits == 64) {
    k.v = (long double)(uint64_t)tensor_load_i64(dt, p);
  } else {
    k.v = (long double)tensor_load_i64(dt, p);
  }
  return k;
}

/* Sorts every line along `axis`; writes the first `k` values and/or indices. */
static int sort_lines(KernelCtx *c, int64_t axis, bool asc, int64_t k, Tensor *vals, Tensor *inds) {
  const Tensor *x = c->inputs[0];
  size_t es = dtype_size(x->dtype), ie = inds ? dtype_size(inds->dtype) : 0;
  int64_t outer = ku_prod(x->shape, 0, axis), n = x->shape[axis], inner = ku_prod(x->shape, axis + 1, x->ndim);
  SortKey *keys = mem_malloc((size_t)(n ? n : 1) * sizeof *keys);
  int64_t *idx = mem_malloc((size_t)(n ? n : 1) * sizeof *idx), *tmp = mem_malloc((size_t)(n ? n : 1) * sizeof *tmp);
  for (int64_t a = 0; a < outer; a++) {
    for (int64_t i = 0; i < inner; i++) {
      const char *base = (const char *)x->data + (size_t)(a * n * inner + i) * es;
      for (int64_t j = 0; j < n; j++) {
        keys[j] = load_key(x->dtype, base + (size_t)(j * inner) * es);
        idx[j] = j;
      }
      merge_sort(idx, tmp, n, keys, asc);
      for (int64_t j = 0; j < k; j++) {
        size_t at = (size_t)(a * k * inner + j * inner + i);
        if (vals) ku_copy1((char *)vals->data + at * es, base + (size_t)(idx[j] * inner) * es, es);
        if (inds) ku_cast(DT_I64, &idx[j], inds->dtype, (char *)inds->data + at * ie);
      }
    }
  }
  mem_free(keys);
  mem_free(idx);
  mem_free(tmp);
  return KERNEL_OK;
}

static int sort_axis(KernelCtx *c, int64_t *axis) {
  const Tensor *x = c->inputs[0];
  if (x->ndim == 0) {
    *axis = 0;
    return KERNEL_OK;
  }
  if (!ku_axis(axis, x->ndim)) return kernel_fail(c, "%s: axis %lld is out of range", c->op->name, (long long)*axis);
  return KERNEL_OK;
}

int kernel_SORT(KernelCtx *c);
int kernel_SORT(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t axis = kernel_attr_int(c, "axis", -1);
  if (sort_axis(c, &axis)) return KERNEL_ERROR;
  Tensor *o = kernel_output_like(c, x);
  if (!o) return KERNEL_ERROR;
  if (x->ndim == 0) {
    memcpy(o->data, x->data, dtype_size(x->dtype));
    return KERNEL_OK;
  }
  return sort_lines(c, axis, kernel_attr_bool(c, "is_ascend", true), x->shape[axis], o, NULL);
}

int kernel_ARGSORT(KernelCtx *c);
int kernel_ARGSORT(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t axis = kernel_attr_int(c, "axis", -1);
  if (sort_axis(c, &axis)) return KERNEL_ERROR;
  DType dt = DT_I32;
  kernel_attr_dtype(c, "dtype", &dt);
  Tensor *o = kernel_output(c, dt, x->ndim, x->shape);
  if (!o) return KERNEL_ERROR;
  if (x->ndim == 0) {
    memset(o->data, 0, dtype_size(dt));
    return KERNEL_OK;
  }
  return sort_lines(c, axis, kernel_attr_bool(c, "is_ascend", true), x->shape[axis], NULL, o);
}

int kernel_TOPK(KernelCtx *c);
int kernel_TOPK(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t axis = kernel_attr_int(c, "axis", -1), k = kernel_attr_int(c, "k", 1);
  if (x->ndim == 0 || !ku_axis(&axis, x->ndim)) return kernel_fail(c, "topk: axis is out of range");
  if (k < 1 || k > x->shape[axis]) k = x->shape[axis];
  DType dt = DT_I32;
  kernel_attr_dtype(c, "dtype", &dt);
  const char *rt = kernel_attr_str(c, "ret_type", "both");
  bool want_v = strcmp(rt, "indices") != 0, want_i = strcmp(rt, "values") != 0;
  if (strcmp(rt, "both") && strcmp(rt, "values") && strcmp(rt, "indices"))
    return kernel_fail(c, "topk: unknown ret_type \"%s\"", rt);
  int64_t shape[MAXR];
  memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
  shape[axis] = k;
  Tensor *v = want_v ? tensor_new(x->dtype, x->ndim, shape) : NULL;
  Tensor *ix = want_i ? tensor_new(dt, x->ndim, shape) : NULL;
  if ((want_v && !v) || (want_i && !ix)) {
    tensor_release(v);
    tensor_release(ix);
    return kernel_fail(c, "topk: out of memory");
  }
  sort_lines(c, axis, kernel_attr_bool(c, "is_ascend", false), k, v, ix);
  if (want_v && want_i) {
    Tensor *both[2] = {v, ix};
    kernel_set_tuple(c, both, 2);
  } else {
    kernel_set_output(c, want_v ? v : ix);
  }
  return KERNEL_OK;
}
