/* ops/kernels/k_movement.c — kernels of TVM's data-movement operators that spec/ops.md does
 * not list (nn.depth_to_space, nn.space_to_depth, nn.space_to_batch_nd, nn.batch_to_space_nd,
 * ...). Each is a gather: every output element is one input element, found from its
 * coordinates by the operator's index map, or a fill value (padding). The numerics are those
 * of TVM's topi compute. Every dtype is moved as raw elements; the fill value is converted once.
 */
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_util.h"

#define MAXR TENSOR_MAX_NDIM

/* ------------------------------------------------------------------ gather helper */

/* Where output element `oc` (its coordinates) comes from: a flat index into input 0, -1 for
 * the fill value, or -2 − j for element j of a second source (matrix_set_diag's diagonal). */
typedef int64_t (*SourceOf)(const void *plan, const int64_t *oc);

typedef struct Gather {
  const Tensor *x, *alt;
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
    const char *from = s >= 0 ? (const char *)g->x->data + (size_t)s * g->es
                     : s == -1 ? g->fill : (const char *)g->alt->data + (size_t)(-2 - s) * g->es;
    ku_copy1(q, from, g->es);
    for (int32_t i = nd; i-- > 0;) { /* next coordinates, row-major */
      if (++oc[i] < g->o->shape[i]) break;
      oc[i] = 0;
    }
  }
}

/* Allocates the (nd, shape) result of input 0's dtype and fills it through src; fill_value is
 * converted to the dtype for the elements src maps to -1, alt is the second source. */
static int gather_from(KernelCtx *c, int32_t nd, const int64_t *shape, SourceOf src, const void *plan, double fill_value,
                       const Tensor *alt) {
  const Tensor *x = c->inputs[0];
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  char fill[16] = {0};
  size_t es = dtype_size(x->dtype);
  if (es <= sizeof fill) ku_cast(DT_F64, &fill_value, x->dtype, fill);
  if (o->numel == 0) return KERNEL_OK;
  Gather g = {.x = x, .alt = alt, .o = o, .src = src, .plan = plan, .fill = fill, .es = es};
  kernel_parallel_for(c, o->numel, 16384, gather_range, &g);
  return KERNEL_OK;
}

static int gather(KernelCtx *c, int32_t nd, const int64_t *shape, SourceOf src, const void *plan, double fill_value) {
  return gather_from(c, nd, shape, src, plan, fill_value, NULL);
}

static int gather2(KernelCtx *c, int32_t nd, const int64_t *shape, SourceOf src, const void *plan, const Tensor *alt) {
  return gather_from(c, nd, shape, src, plan, 0, alt);
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

/* ------------------------------------------------------------ masks: trilu, sequence_mask */

/* Flat index of coordinates oc in a row-major tensor of strides st. */
static int64_t flat(const int64_t *st, int32_t nd, const int64_t *oc) {
  int64_t s = 0;
  for (int32_t i = 0; i < nd; i++) s += oc[i] * st[i];
  return s;
}

typedef struct Mask {
  int32_t nd;
  int64_t st[MAXR];
  int64_t k;           /* trilu: the diagonal */
  bool upper;
  const Tensor *len;   /* sequence_mask: valid lengths per batch */
  int32_t axis;        /* sequence_mask: the length axis (0 or 1) */
} Mask;

/* trilu keeps col − row >= k (upper) or <= k (lower), zero elsewhere */
static int64_t trilu_source(const void *plan, const int64_t *oc) {
  const Mask *p = plan;
  int64_t d = oc[p->nd - 1] - oc[p->nd - 2];
  return (p->upper ? d >= p->k : d <= p->k) ? flat(p->st, p->nd, oc) : -1;
}

/* A rank-0 numeric tensor as int64 (floats truncated toward zero, as TVM's cast to int32 of k) */
static bool scalar_i64(const Tensor *t, int64_t *v) {
  if (t->numel != 1) return false;
  double d;
  ku_cast(t->dtype, t->data, DT_F64, &d);
  if (!(d > -9.2e18 && d < 9.2e18)) return false;
  *v = (int64_t)d;
  return true;
}

int kernel_TRILU(KernelCtx *c);
int kernel_TRILU(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  Mask p = {.nd = x->ndim, .upper = kernel_attr_bool(c, "upper", true)};
  if (x->ndim < 2) return kernel_fail(c, "trilu: the data must have rank 2 or more");
  if (!scalar_i64(c->inputs[1], &p.k)) return kernel_fail(c, "trilu: k must be a finite scalar");
  strides_of(x, p.st);
  return gather(c, x->ndim, x->shape, trilu_source, &p, 0);
}

/* sequence_mask: position t of the length axis is masked when t >= valid_length[batch] */
static int64_t mask_source(const void *plan, const int64_t *oc) {
  const Mask *p = plan;
  int64_t b = oc[1 - p->axis];
  double t = (double)oc[p->axis], v;
  ku_cast(p->len->dtype, (const char *)p->len->data + (size_t)b * dtype_size(p->len->dtype), DT_F64, &v);
  return t >= v ? -1 : flat(p->st, p->nd, oc);
}

int kernel_SEQUENCE_MASK(KernelCtx *c);
int kernel_SEQUENCE_MASK(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  Mask p = {.nd = x->ndim, .len = c->inputs[1], .axis = (int32_t)kernel_attr_int(c, "axis", 0)};
  if ((p.axis != 0 && p.axis != 1) || x->ndim < 2 || p.len->ndim != 1 || p.len->shape[0] != x->shape[1 - p.axis])
    return kernel_fail(c, "sequence_mask: valid_length does not fit the data's batch axis");
  strides_of(x, p.st);
  return gather(c, x->ndim, x->shape, mask_source, &p, kernel_attr_double(c, "mask_value", 0));
}

/* ------------------------------------------------------------ reverse_sequence */

typedef struct SeqRev {
  int32_t nd, seq, batch;
  int64_t st[MAXR];
  const Tensor *len;
  int64_t ext;          /* extent of the seq axis */
} SeqRev;

/* position i of the seq axis reads len − 1 − i below len (the whole axis reversed when len
 * exceeds it), itself at or past len or when len <= 1 (TVM's topi) */
static int64_t revseq_source(const void *plan, const int64_t *oc) {
  const SeqRev *p = plan;
  int64_t len = ku_index(p->len, oc[p->batch]), i = oc[p->seq], j = i;
  if (len > 1 && i < len) j = (len > p->ext ? p->ext : len) - 1 - i;
  return flat(p->st, p->nd, oc) + (j - i) * p->st[p->seq];
}

int kernel_REVERSE_SEQUENCE(KernelCtx *c);
int kernel_REVERSE_SEQUENCE(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t seq = kernel_attr_int(c, "seq_axis", 1), batch = kernel_attr_int(c, "batch_axis", 0);
  if (!ku_axis(&seq, x->ndim) || !ku_axis(&batch, x->ndim))
    return kernel_fail(c, "reverse_sequence: seq_axis or batch_axis is out of range");
  SeqRev p = {.nd = x->ndim, .seq = (int32_t)seq, .batch = (int32_t)batch, .len = c->inputs[1], .ext = x->shape[seq]};
  if (p.len->ndim != 1 || p.len->shape[0] != x->shape[batch])
    return kernel_fail(c, "reverse_sequence: seq_lengths has %lld entries but the batch axis %lld has %lld",
                       (long long)(p.len->ndim ? p.len->shape[0] : 1), (long long)batch, (long long)x->shape[batch]);
  strides_of(x, p.st);
  return gather(c, x->ndim, x->shape, revseq_source, &p, 0);
}

/* ------------------------------------------------------------ matrix_set_diag */

typedef struct SetDiag {
  int32_t nd;
  int64_t st[MAXR];     /* input strides */
  int64_t dst[MAXR];    /* diagonal strides */
  int64_t k1, k2, len;  /* band, the diagonal's last extent */
  int64_t M, N;
  bool band, super_right, sub_right;
} SetDiag;

/* An element of the band reads the diagonal: row (k >= 0) or column (k < 0) along it, shifted
 * right by the padding of a right-aligned short diagonal; outside the band, the input.
 * Diagonal elements are numbered −2 − j (gather's second source). */
static int64_t setdiag_source(const void *plan, const int64_t *oc) {
  const SetDiag *p = plan;
  int64_t r = oc[p->nd - 2], col = oc[p->nd - 1], k = col - r;
  if (k < p->k1 || k > p->k2) return flat(p->st, p->nd, oc);
  int64_t j = 0, pos = k >= 0 ? r : col;
  for (int32_t i = 0; i < p->nd - 2; i++) j += oc[i] * p->dst[i];
  if (p->band) {
    int64_t dlen = k >= 0 ? (p->N - k < p->M ? p->N - k : p->M) : (p->N < p->M + k ? p->N : p->M + k);
    if (k >= 0 ? p->super_right : p->sub_right) pos += p->len - dlen;
    j += (p->k2 - k) * p->dst[p->nd - 2];
  }
  return -2 - (j + pos);
}

int kernel_MATRIX_SET_DIAG(KernelCtx *c);
int kernel_MATRIX_SET_DIAG(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *d = c->inputs[1];
  SetDiag p = {.nd = x->ndim, .k1 = kernel_attr_int(c, "k1", 0), .k2 = kernel_attr_int(c, "k2", 0),
               .super_right = kernel_attr_bool(c, "super_diag_right_align", true),
               .sub_right = kernel_attr_bool(c, "sub_diag_right_align", false)};
  if (x->ndim < 2 || dtype_size(d->dtype) != dtype_size(x->dtype)) return kernel_fail(c, "matrix_set_diag: invalid input");
  p.M = x->shape[x->ndim - 2];
  p.N = x->shape[x->ndim - 1];
  p.band = p.k1 != p.k2;
  int32_t dn = p.band ? x->ndim : x->ndim - 1;
  bool fits = p.k1 <= p.k2 && p.k1 > -p.M && p.k2 < p.N && d->ndim == dn; /* the band crosses the matrices */
  int64_t longest = fits ? p.M + (p.k2 < 0 ? p.k2 : 0) : 0;
  if (fits && p.N - (p.k1 > 0 ? p.k1 : 0) < longest) longest = p.N - (p.k1 > 0 ? p.k1 : 0);
  fits = fits && d->shape[dn - 1] >= longest && (!p.band || d->shape[dn - 2] == p.k2 - p.k1 + 1);
  for (int32_t i = 0; fits && i < x->ndim - 2; i++) fits = d->shape[i] == x->shape[i];
  if (!fits) return kernel_fail(c, "matrix_set_diag: the diagonal does not fit diagonals %lld..%lld of the input",
                                (long long)p.k1, (long long)p.k2);
  p.len = d->shape[dn - 1];
  strides_of(x, p.st);
  strides_of(d, p.dst);
  return gather2(c, x->ndim, x->shape, setdiag_source, &p, d);
}

/* ------------------------------------------------------------ meshgrid */

int kernel_MESHGRID(KernelCtx *c);
int kernel_MESHGRID(KernelCtx *c) {
  uint32_t n = c->ninputs;
  if (n == 0 || n > MAXR) return kernel_fail(c, "meshgrid: needs 1 to %d tensors", MAXR);
  bool xy = strcmp(kernel_attr_str(c, "indexing", "ij"), "xy") == 0 && n >= 2;
  int64_t shape[MAXR];
  for (uint32_t i = 0; i < n; i++) shape[i] = c->inputs[i]->numel;
  if (xy) shape[0] = c->inputs[1]->numel, shape[1] = c->inputs[0]->numel;
  Tensor **outs = mem_malloc(n * sizeof *outs);
  size_t es = dtype_size(c->inputs[0]->dtype);
  for (uint32_t i = 0; i < n; i++) {
    outs[i] = tensor_new(c->inputs[0]->dtype, (int32_t)n, shape);
    if (!outs[i]) {
      for (uint32_t j = 0; j < i; j++) tensor_release(outs[j]);
      mem_free(outs);
      return kernel_fail(c, "meshgrid: out of memory");
    }
    uint32_t ax = xy && i < 2 ? 1 - i : i; /* the grid axis input i varies along */
    int64_t inner = ku_prod(shape, ax + 1, n), ext = shape[ax];
    const char *src = c->inputs[i]->data;
    char *q = outs[i]->data;
    for (int64_t e = 0; e < outs[i]->numel; e++, q += es) ku_copy1(q, src + (size_t)((e / inner) % ext) * es, es);
  }
  kernel_set_tuple(c, outs, n);
  mem_free(outs);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ unravel_index, invert_permutation */

int kernel_UNRAVEL_INDEX(KernelCtx *c);
int kernel_UNRAVEL_INDEX(KernelCtx *c) {
  const Tensor *ix = c->inputs[0], *s = c->inputs[1];
  int64_t k = s->numel, n = ix->numel, total = 1, shape[2] = {k, n};
  for (int64_t i = 0; i < k; i++) {
    int64_t e = ku_index(s, i);
    if (e < 1 || __builtin_mul_overflow(total, e, &total))
      return kernel_fail(c, "unravel_index: shape entry %lld is %lld; the extents must be positive", (long long)i, (long long)e);
  }
  Tensor *o = kernel_output(c, ix->dtype, ix->ndim ? 2 : 1, shape);
  if (!o) return KERNEL_ERROR;
  for (int64_t j = 0; j < n; j++) {
    int64_t v = ku_index(ix, j);
    if (v < 0 || v >= total)
      return kernel_fail(c, "unravel_index: index %lld is out of range for %lld elements", (long long)v, (long long)total);
    for (int64_t i = k; i-- > 0;) {
      int64_t e = ku_index(s, i), coord = v % e;
      ku_cast(DTYPE(DT_INT, 64), &coord, ix->dtype, (char *)o->data + (size_t)(i * n + j) * dtype_size(ix->dtype));
      v /= e;
    }
  }
  return KERNEL_OK;
}

int kernel_INVERT_PERMUTATION(KernelCtx *c);
int kernel_INVERT_PERMUTATION(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t n = x->numel;
  Tensor *o = kernel_output_like(c, x);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(x->dtype);
  char *seen = mem_malloc((size_t)n + 1);
  memset(seen, 0, (size_t)n + 1);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ku_index(x, i);
    if (v < 0 || v >= n || seen[v]) {
      mem_free(seen);
      return kernel_fail(c, "invert_permutation: %lld at position %lld makes the input no permutation of 0..%lld",
                         (long long)v, (long long)i, (long long)(n - 1));
    }
    seen[v] = 1;
    ku_cast(DTYPE(DT_INT, 64), &i, x->dtype, (char *)o->data + (size_t)v * es);
  }
  mem_free(seen);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ nn.dilate */

typedef struct Dilate {
  int32_t nd;
  int64_t s[MAXR], st[MAXR];
} Dilate;

/* output position p reads input p / s where every p is a multiple of its stride; the dilation value elsewhere */
static int64_t dilate_source(const void *plan, const int64_t *oc) {
  const Dilate *p = plan;
  int64_t src = 0;
  for (int32_t i = 0; i < p->nd; i++) {
    if (oc[i] % p->s[i]) return -1;
    src += oc[i] / p->s[i] * p->st[i];
  }
  return src;
}

int kernel_NN_DILATE(KernelCtx *c);
int kernel_NN_DILATE(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  Dilate p = {.nd = x->ndim};
  int64_t shape[MAXR];
  if (kernel_attr_ints(c, "strides", p.s, MAXR) != x->ndim) return kernel_fail(c, "nn.dilate: strides must have one entry per axis");
  for (int32_t i = 0; i < x->ndim; i++) {
    if (p.s[i] < 1) return kernel_fail(c, "nn.dilate: strides must be positive");
    shape[i] = x->shape[i];
    if (shape[i] > 0 && (__builtin_mul_overflow(shape[i] - 1, p.s[i], &shape[i]) || __builtin_add_overflow(shape[i], 1, &shape[i])))
      return kernel_fail(c, "nn.dilate: the result is too large");
  }
  strides_of(x, p.st);
  return gather(c, x->ndim, shape, dilate_source, &p, kernel_attr_double(c, "dilation_value", 0));
}

/* ------------------------------------------------------------ sliding_window */

typedef struct Window {
  int32_t axis, k;    /* the windowed axes axis..axis+k-1 */
  int64_t s[MAXR], st[MAXR];
} Window;

/* output (pre..., window index j..., offset w...) <- input (pre..., j·s + w...) */
static int64_t window_source(const void *plan, const int64_t *oc) {
  const Window *p = plan;
  int64_t src = 0;
  for (int32_t i = 0; i < p->axis; i++) src += oc[i] * p->st[i];
  for (int32_t i = 0; i < p->k; i++) src += (oc[p->axis + i] * p->s[i] + oc[p->axis + p->k + i]) * p->st[p->axis + i];
  return src;
}

int kernel_SLIDING_WINDOW(KernelCtx *c);
int kernel_SLIDING_WINDOW(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t axis = kernel_attr_int(c, "axis", 0), w[MAXR], shape[MAXR];
  if (axis < 0 || axis >= x->ndim) return kernel_fail(c, "sliding_window: axis %lld is out of range", (long long)axis);
  Window p = {.axis = (int32_t)axis, .k = x->ndim - (int32_t)axis};
  if (kernel_attr_ints(c, "window_shape", w, MAXR) != p.k || kernel_attr_ints(c, "strides", p.s, MAXR) != p.k ||
      x->ndim + p.k > MAXR)
    return kernel_fail(c, "sliding_window: window_shape and strides must have one entry per axis from %lld on", (long long)axis);
  memcpy(shape, x->shape, (size_t)axis * sizeof *shape);
  for (int32_t i = 0; i < p.k; i++) {
    int64_t d = x->shape[axis + i];
    if (w[i] < 1 || p.s[i] < 1 || d < w[i])
      return kernel_fail(c, "sliding_window: a window of %lld (stride %lld) does not fit axis %lld of extent %lld",
                         (long long)w[i], (long long)p.s[i], (long long)(axis + i), (long long)d);
    shape[axis + i] = (d - w[i]) / p.s[i] + 1;
    shape[x->ndim + i] = w[i];
  }
  strides_of(x, p.st);
  return gather(c, x->ndim + p.k, shape, window_source, &p, 0);
}
