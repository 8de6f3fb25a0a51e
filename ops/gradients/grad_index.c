/* ops/gradients/grad_index.c — rules of the gathering operators (spec/gradient.md §4.4,
 * §4.7 "take", "gather").
 *
 * A gather reads data[idx]; its adjoint adds g[m] back into position idx[m]
 * (duplicates accumulate): one scatter_elements(zeros, idx, g, reduction="add")
 * over a view of the data in which the gathered axis is one axis — O(size of g),
 * whatever the extent gathered from. take (any axis, axis=None, batch_dims) uses
 * the (batch, pre, n, post) view with the indices broadcast along pre/post;
 * gather_nd linearises its K indexed axes into one; gather is the scatter
 * itself. Indices are normalised first as the forward reads them: take's clip
 * clamps into [0, n − 1], wrap takes them modulo n; scatter_elements counts
 * negative indices from the end as gather does. Index inputs get no gradient.
 * take's indices may have `?` extents (TVM's test_take_grad passes a
 * Tensor[(?), int32]): the gathered count is then reshaped as -1 and the
 * indices broadcast by adding zeros, so only data's shape must be static.
 */
#include <string.h>

#include "ops/gradients/grad.h"

#define G (c->g)

/* indices as take's mode reads them (the kernel reads "fast" as "clip") */
static Expr *norm_index(GradCtx *c, Expr *idx, int64_t n) {
  const char *mode = gr_attr_str(c, "mode", "clip");
  DType it = gr_dtype(c, 1);
  if (strcmp(mode, "wrap") == 0) return GR_OP(c, "floor_mod", NULL, idx, gr_const(c, (double)n, it));
  return GR_OP(c, "clip", gr_fmt(c, "a_min=0f, a_max=%lldf", (long long)(n - 1)), idx);
}

static int64_t prod(const int64_t *d, uint32_t lo, uint32_t hi) {
  int64_t p = 1;
  for (uint32_t i = lo; i < hi; i++) p *= d[i];
  return p;
}

/* zeros of x's type viewed as `shape` (n axes) */
static Expr *zeros_view(GradCtx *c, const int64_t *shape, uint32_t n) {
  return GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, shape, n)), gr_zeros_like(c, X0));
}

/* the extents of input i, -1 for each one not known statically (false: not a tensor) */
static bool shape_or_any(GradCtx *c, int i, int64_t *dims) {
  const Type *t = gr_tensor(c, i);
  if (!t) return gr_fail(c, "an input is not a tensor");
  if (t->tensor.ndim > GRAD_MAX_RANK) return gr_fail(c, "rank %u is above %d", t->tensor.ndim, GRAD_MAX_RANK);
  for (uint32_t k = 0; k < t->tensor.ndim; k++) dims[k] = t->tensor.dims[k].kind == DIM_INT ? t->tensor.dims[k].value : -1;
  return true;
}

/* the product of d[lo..hi), or -1 when one of them is unknown (-1) */
static int64_t prod_or_any(const int64_t *d, uint32_t lo, uint32_t hi) {
  int64_t p = 1;
  for (uint32_t i = lo; i < hi; i++) {
    if (d[i] < 0) return -1;
    p *= d[i];
  }
  return p;
}

/* dx = scatter_elements(zeros (B, pre, n, post), idx (B, 1, M, 1) broadcast, g (B, pre, M, post),
 * axis=2, "add"), read back as x's shape; M = -1: the count is not known statically */
static Expr *scatter_back(GradCtx *c, Expr *idx, int64_t B, int64_t pre, int64_t M, int64_t post, int64_t n) {
  int64_t gs[4] = {B, pre, M, post}, is[4] = {B, 1, M, 1}, zs[4] = {B, pre, n, post};
  Expr *g4 = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, gs, 4)), G);
  Expr *i4 = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, is, 4)), idx);
  if ((pre != 1 || post != 1) && M < 0) { /* broadcast along pre/post by adding zeros of (B, pre, 1, post) */
    int64_t zs1[4] = {B, pre, 1, post};
    i4 = gr_add(c, i4, GR_OP(c, "broadcast_to", gr_fmt(c, "shape=%s", gr_ints_text(c, zs1, 4)), gr_const(c, 0, gr_dtype(c, 1))));
  } else if (pre != 1 || post != 1) i4 = GR_OP(c, "broadcast_to", gr_fmt(c, "shape=%s", gr_ints_text(c, gs, 4)), i4);
  Expr *d = GR_OP(c, "scatter_elements", "axis=2, reduction=\"add\"", zeros_view(c, zs, 4), i4, g4);
  return gr_reshape_like(c, d, X0);
}

/* take(data, idx, axis, batch_dims, mode): out[b.., pre.., i.., post..] =
 * data[b.., pre.., idx[b.., i..], post..] with b the first batch_dims axes of both;
 * the adjoint adds g back at the (normalised) indices, duplicates accumulating */
GRAD_RULE(TAKE) {
  int64_t dims[GRAD_MAX_RANK], idims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims) || !shape_or_any(c, 1, idims)) return false;
  uint32_t rank = gr_rank(c, 0), irank = gr_rank(c, 1);
  const AttrValue *av = gr_attr(c, "axis");
  if (!av || av->kind != AV_INT) { /* flattened data: axis 0 of the (1, 1, size, 1) view */
    int64_t n = prod(dims, 0, rank), M = prod_or_any(idims, 0, irank);
    c->dx[0] = scatter_back(c, norm_index(c, X1, n), 1, 1, M, 1, n);
    return true;
  }
  int64_t axis = av->i.value < 0 ? av->i.value + rank : av->i.value;
  if (axis < 0 || axis >= (int64_t)rank) return gr_fail(c, "axis is out of range");
  int64_t bd = gr_attr_int(c, "batch_dims", 0);
  if (bd < 0) bd += irank;
  if (bd < 0 || bd > axis || bd > (int64_t)irank) return gr_fail(c, "batch_dims is out of range");
  int64_t n = dims[axis];
  c->dx[0] = scatter_back(c, norm_index(c, X1, n), prod(dims, 0, (uint32_t)bd), prod(dims, (uint32_t)bd, (uint32_t)axis),
                          prod_or_any(idims, (uint32_t)bd, irank), prod(dims, (uint32_t)axis + 1, rank), n);
  return true;
}

/* gather(data, axis, idx): out[.., i, ..] = data[.., idx[.., i, ..], ..] — the adjoint is
 * the matching scatter-add (indices of a smaller extent off the axis are fine) */
GRAD_RULE(GATHER) {
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = gr_attr_int(c, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= (int64_t)rank) return gr_fail(c, "axis is out of range");
  c->dx[0] = GR_OP(c, "scatter_elements", gr_fmt(c, "axis=%lld, reduction=\"add\"", (long long)axis), gr_zeros_like(c, X0),
                   X1, G);
  return true;
}

/* gather_nd(data, idx (K, b.., Y..), batch_dims): out[b.., y.., r..] =
 * data[b.., idx[0, b.., y..], .., idx[K-1, b.., y..], r..]. The K indexed axes are
 * linearised into one index, then the take adjoint along that axis per batch. */
GRAD_RULE(GATHER_ND) {
  int64_t dims[GRAD_MAX_RANK], idims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims) || !gr_shape(c, 1, idims)) return false;
  uint32_t rank = gr_rank(c, 0), irank = gr_rank(c, 1);
  if (irank < 1) return gr_fail(c, "indices must have rank >= 1");
  int64_t bd = gr_attr_int(c, "batch_dims", 0), K = idims[0];
  if (bd < 0 || bd > (int64_t)irank - 1) return gr_fail(c, "batch_dims is out of range");
  if (K + bd > (int64_t)rank) return gr_fail(c, "indices address more axes than data has");
  DType it = gr_dtype(c, 1);
  Expr *lin = NULL;
  for (int64_t k = 0; k < K; k++) {
    Expr *ik = GR_OP(c, "squeeze", "axis=[0]",
                     GR_OP(c, "strided_slice", gr_fmt(c, "begin=[%lld], end=[%lld], axes=[0]", (long long)k, (long long)(k + 1)), X1));
    int64_t stride = prod(dims, (uint32_t)(bd + k + 1), (uint32_t)(bd + K));
    Expr *term = stride == 1 ? ik : gr_mul(c, ik, gr_const(c, (double)stride, it));
    lin = lin ? gr_add(c, lin, term) : term;
  }
  int64_t B = prod(dims, 0, (uint32_t)bd), P = prod(dims, (uint32_t)bd, (uint32_t)(bd + K));
  int64_t R = prod(dims, (uint32_t)(bd + K), rank), Y = prod(idims, (uint32_t)(1 + bd), irank);
  if (!lin) { /* K = 0: every y reads the whole batch row */
    int64_t ls[2] = {B, Y};
    lin = GR_OP(c, "broadcast_to", gr_fmt(c, "shape=%s", gr_ints_text(c, ls, 2)), gr_const(c, 0, it));
  }
  c->dx[0] = scatter_back(c, lin, B, 1, Y, R, P);
  return true;
}
