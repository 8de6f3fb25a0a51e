/* ops/kernels/k_movement.c — kernels of TVM's data-movement operators that spec/ops.md does
 * not list (nn.depth_to_space, nn.space_to_depth, nn.space_to_batch_nd, nn.batch_to_space_nd,
 * ...). Each is a gather: every output element is one input element, found from its
 * coordinates by the operator's index map, or a fill value (padding). The numerics are those
 * of TVM's topi compute. Every dtype is moved as raw elements; the fill value is converted once.
 */
#include <string.h>

#include "ops/kernels/k_util.h"

#define MAXR TENSOR_MAX_NDIM

/* ------------------------------------------------------------------ gather helper */

/* Where output element `oc` (its coordinates) comes from: a flat input index, or -1 for
 * the fill value. */
typedef int64_t (*SourceOf)(const void *plan, const int64_t *oc);

typedef struct Gather {
  const Tensor *x;
  Tensor *o;
  SourceOf src;
  const void *plan;
  const char *fill;
  size_t es;
} Gather;

static void gather_range(void *arg, int64_t lo, int64_t hi) {
  const Gather *g = arg;
  int32_t nd = g->o->ndim;
  int64_t oc[MAXR], rest = lo;
  for (int32_t i = nd; i-- > 0;) {
    oc[i] = rest % g->o->shape[i];
    rest /= g->o->shape[i];
  }
  char *q = (char *)g->o->data + (size_t)lo * g->es;
  for (int64_t k = lo; k < hi; k++, q += g->es) {
    int64_t s = g->src(g->plan, oc);
    ku_copy1(q, s < 0 ? g->fill : (const char *)g->x->data + (size_t)s * g->es, g->es);
    for (int32_t i = nd; i-- > 0;) { /* next coordinates, row-major */
      if (++oc[i] < g->o->shape[i]) break;
      oc[i] = 0;
    }
  }
}

/* Allocates the (nd, shape) result of x's dtype and fills it through src; fill_value is
 * converted to the dtype for the elements src maps to -1. */
static int gather(KernelCtx *c, int32_t nd, const int64_t *shape, SourceOf src, const void *plan, double fill_value) {
  const Tensor *x = c->inputs[0];
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  char fill[16] = {0};
  size_t es = dtype_size(x->dtype);
  if (es <= sizeof fill) ku_cast(DT_F64, &fill_value, x->dtype, fill);
  if (o->numel == 0) return KERNEL_OK;
  Gather g = {.x = x, .o = o, .src = src, .plan = plan, .fill = fill, .es = es};
  kernel_parallel_for(c, o->numel, 16384, gather_range, &g);
  return KERNEL_OK;
}

/* Row-major strides of x. */
static void strides_of(const Tensor *x, int64_t *st) {
  int64_t s = 1;
  for (int32_t i = x->ndim; i-- > 0;) {
    st[i] = s;
    s *= x->shape[i];
  }
}

/* ------------------------------------------------- depth_to_space, space_to_depth */

typedef struct SubPixel {
  int ch, h, w;   /* axis positions of C, H, W (the layout) */
  int64_t b;      /* block size */
  int64_t cin;    /* input channels (space_to_depth) or output channels (depth_to_space) */
  bool dcr;
  int64_t st[4];  /* input strides */
} SubPixel;

static bool subpixel_plan(KernelCtx *c, SubPixel *p) {
  const Tensor *x = c->inputs[0];
  const char *l = kernel_attr_str(c, "layout", "NCHW");
  bool nchw = strcmp(l, "NCHW") == 0;
  if ((!nchw && strcmp(l, "NHWC")) || x->ndim != 4)
    return kernel_fail(c, "%s: needs a rank-4 NCHW or NHWC input", c->op->name), false;
  p->ch = nchw ? 1 : 3;
  p->h = nchw ? 2 : 1;
  p->w = nchw ? 3 : 2;
  p->b = kernel_attr_int(c, "block_size", 1);
  if (p->b < 1 || p->b > INT32_MAX) return kernel_fail(c, "%s: block_size must be positive", c->op->name), false;
  p->dcr = strcmp(kernel_attr_str(c, "mode", "DCR"), "DCR") == 0; /* CRD, or CDR as TVM spells it */
  strides_of(x, p->st);
  return true;
}

/* output (n, c, y, x) <- input (n, channel of the block offset, y / b, x / b) */
static int64_t d2s_source(const void *plan, const int64_t *oc) {
  const SubPixel *p = plan;
  int64_t y = oc[p->h], x = oc[p->w], c = oc[p->ch], b = p->b;
  int64_t off = b * (y % b) + x % b;
  int64_t ch = p->dcr ? p->cin * off + c : c * b * b + off;
  return oc[0] * p->st[0] + ch * p->st[p->ch] + (y / b) * p->st[p->h] + (x / b) * p->st[p->w];
}

int kernel_NN_DEPTH_TO_SPACE(KernelCtx *c);
int kernel_NN_DEPTH_TO_SPACE(KernelCtx *c) {
  SubPixel p;
  if (!subpixel_plan(c, &p)) return KERNEL_ERROR;
  const Tensor *x = c->inputs[0];
  int64_t shape[4];
  memcpy(shape, x->shape, sizeof shape);
  p.cin = x->shape[p.ch] / (p.b * p.b);
  shape[p.ch] = p.cin;
  if (__builtin_mul_overflow(x->shape[p.h], p.b, &shape[p.h]) || __builtin_mul_overflow(x->shape[p.w], p.b, &shape[p.w]))
    return kernel_fail(c, "nn.depth_to_space: the result is too large");
  return gather(c, 4, shape, d2s_source, &p, 0);
}

/* output (n, c, y, x) <- input (n, c mod C, y·b + off / b, x·b + off mod b), off = c / C */
static int64_t s2d_source(const void *plan, const int64_t *oc) {
  const SubPixel *p = plan;
  int64_t c = oc[p->ch], b = p->b, off = c / p->cin;
  return oc[0] * p->st[0] + (c % p->cin) * p->st[p->ch] + (oc[p->h] * b + off / b) * p->st[p->h] +
         (oc[p->w] * b + off % b) * p->st[p->w];
}

int kernel_NN_SPACE_TO_DEPTH(KernelCtx *c);
int kernel_NN_SPACE_TO_DEPTH(KernelCtx *c) {
  SubPixel p;
  if (!subpixel_plan(c, &p)) return KERNEL_ERROR;
  const Tensor *x = c->inputs[0];
  int64_t shape[4];
  memcpy(shape, x->shape, sizeof shape);
  p.cin = x->shape[p.ch];
  if (__builtin_mul_overflow(p.cin, p.b * p.b, &shape[p.ch])) return kernel_fail(c, "nn.space_to_depth: the result is too large");
  shape[p.h] = x->shape[p.h] / p.b;
  shape[p.w] = x->shape[p.w] / p.b;
  return gather(c, 4, shape, s2d_source, &p, 0);
}

/* ------------------------------------------------- space_to_batch_nd, batch_to_space_nd */

typedef struct Blocks {
  int32_t m;             /* spatial axes 1..m */
  int32_t nd;            /* rank: axes m+1.. are copied as they are */
  int64_t block[MAXR];
  int64_t before[MAXR];  /* padding before (space_to_batch) or crop before (batch_to_space) */
  int64_t batch;         /* the smaller batch: input's (space_to_batch) or output's */
  int64_t ext[MAXR];     /* the input's spatial extents (space_to_batch_nd) */
  int64_t st[MAXR];      /* input strides */
} Blocks;

/* block_shape and the before/after pairs of `key`, checked against x; false after kernel_fail. */
static bool blocks_plan(KernelCtx *c, const char *key, Blocks *p, int64_t (*pairs)[2]) {
  const Tensor *x = c->inputs[0];
  const char *name = c->op->name;
  int32_t m = kernel_attr_ints(c, "block_shape", p->block, MAXR);
  const AttrValue *v = kernel_attr(c, key);
  if (m < 1 || m >= x->ndim || !v || v->kind != AV_ARRAY || v->arr.n != (uint32_t)m)
    return kernel_fail(c, "%s: block_shape and %s do not fit the input", name, key), false;
  for (int32_t i = 0; i < m; i++) {
    const AttrValue *q = v->arr.items[i];
    if (p->block[i] < 1 || p->block[i] > INT32_MAX || q->kind != AV_ARRAY || q->arr.n != 2 ||
        q->arr.items[0]->kind != AV_INT || q->arr.items[1]->kind != AV_INT)
      return kernel_fail(c, "%s: invalid block_shape or %s entry %d", name, key, i), false;
    pairs[i][0] = q->arr.items[0]->i.value;
    pairs[i][1] = q->arr.items[1]->i.value;
    if (pairs[i][0] < 0 || pairs[i][1] < 0 || pairs[i][0] > INT32_MAX || pairs[i][1] > INT32_MAX)
      return kernel_fail(c, "%s: %s entry %d must be non-negative", name, key, i), false;
    p->before[i] = pairs[i][0];
    p->ext[i] = x->shape[i + 1];
  }
  p->m = m;
  p->nd = x->ndim;
  strides_of(x, p->st);
  return true;
}

/* the trailing axes' part of a flat input index */
static int64_t rest_offset(const Blocks *p, const int64_t *oc) {
  int64_t s = 0;
  for (int32_t i = p->m + 1; i < p->nd; i++) s += oc[i] * p->st[i];
  return s;
}

/* output (j·B + n, y1.., r..) with block offsets (o1..om) = j in row-major order
 * <- input (n, y1·b1 + o1 − before1, ..., r..), or the pad value outside */
static int64_t s2b_source(const void *plan, const int64_t *oc) {
  const Blocks *p = plan;
  int64_t n = oc[0] % p->batch, j = oc[0] / p->batch, src = n * p->st[0] + rest_offset(p, oc);
  for (int32_t i = p->m; i-- > 0;) {
    int64_t off = j % p->block[i];
    j /= p->block[i];
    int64_t pos = oc[i + 1] * p->block[i] + off - p->before[i];
    if (pos < 0 || pos >= p->ext[i]) return -1;
    src += pos * p->st[i + 1];
  }
  return src;
}

int kernel_NN_SPACE_TO_BATCH_ND(KernelCtx *c);
int kernel_NN_SPACE_TO_BATCH_ND(KernelCtx *c) {
  Blocks p;
  int64_t pad[MAXR][2], shape[MAXR], prod = 1;
  if (!blocks_plan(c, "paddings", &p, pad)) return KERNEL_ERROR;
  const Tensor *x = c->inputs[0];
  memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
  for (int32_t i = 0; i < p.m; i++) {
    int64_t padded = x->shape[i + 1] + pad[i][0] + pad[i][1];
    if (padded % p.block[i] != 0)
      return kernel_fail(c, "nn.space_to_batch_nd: axis %d padded to %lld is not divisible by its block size %lld", i + 1,
                         (long long)padded, (long long)p.block[i]);
    shape[i + 1] = padded / p.block[i];
    if (__builtin_mul_overflow(prod, p.block[i], &prod)) return kernel_fail(c, "nn.space_to_batch_nd: the result is too large");
  }
  p.batch = x->shape[0];
  if (__builtin_mul_overflow(x->shape[0], prod, &shape[0])) return kernel_fail(c, "nn.space_to_batch_nd: the result is too large");
  return gather(c, x->ndim, shape, s2b_source, &p, kernel_attr_double(c, "pad_value", 0));
}

/* output (n, z1.., r..) <- input (j·B + n, (z1 + c1) / b1, ..., r..) with block offsets
 * ((z + c) mod b) numbered j in row-major order: the inverse of space_to_batch_nd */
static int64_t b2s_source(const void *plan, const int64_t *oc) {
  const Blocks *p = plan;
  int64_t j = 0, src = rest_offset(p, oc);
  for (int32_t i = 0; i < p->m; i++) {
    int64_t pos = oc[i + 1] + p->before[i];
    j = j * p->block[i] + pos % p->block[i];
    src += (pos / p->block[i]) * p->st[i + 1];
  }
  return src + (j * p->batch + oc[0]) * p->st[0];
}

int kernel_NN_BATCH_TO_SPACE_ND(KernelCtx *c);
int kernel_NN_BATCH_TO_SPACE_ND(KernelCtx *c) {
  Blocks p;
  int64_t crop[MAXR][2], shape[MAXR], prod = 1;
  if (!blocks_plan(c, "crops", &p, crop)) return KERNEL_ERROR;
  const Tensor *x = c->inputs[0];
  memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
  for (int32_t i = 0; i < p.m; i++) {
    int64_t full;
    if (__builtin_mul_overflow(x->shape[i + 1], p.block[i], &full) || __builtin_mul_overflow(prod, p.block[i], &prod))
      return kernel_fail(c, "nn.batch_to_space_nd: the block sizes are too large");
    shape[i + 1] = full - crop[i][0] - crop[i][1];
    if (shape[i + 1] < 0)
      return kernel_fail(c, "nn.batch_to_space_nd: crops [%lld, %lld] exceed axis %d (%lld)", (long long)crop[i][0],
                         (long long)crop[i][1], i + 1, (long long)full);
  }
  if (x->shape[0] % prod != 0)
    return kernel_fail(c, "nn.batch_to_space_nd: the batch %lld is not divisible by the product of block_shape (%lld)",
                       (long long)x->shape[0], (long long)prod);
  p.batch = shape[0] = x->shape[0] / prod;
  return gather(c, x->ndim, shape, b2s_source, &p, 0);
}
