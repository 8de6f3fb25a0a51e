/* ops/gradients/grad_index.c — rules of the gathering operators (spec/gradient.md §4.4,
 * §4.7 "take", "gather").
 *
 * A gather reads data[idx]; its adjoint adds g[m] into position idx[m] (duplicates
 * accumulate). Without a scatter operator in the registry the additions are a
 * product with a one-hot matrix: for take along an axis of extent n with M indices,
 * dx = g·onehot(idx) as one nn.matmul over the (pre·post, M) view of g, so the cost
 * is O(M·n) per row and index inputs get no gradient. Indices are normalised first
 * as the forward does: clip clamps into [0, n − 1], wrap takes them modulo n.
 */
#include <string.h>

#include "ops/gradients/grad.h"

#define G (c->g)

static const char *dtype_str(GradCtx *c, DType dt) {
  char buf[32];
  return gr_fmt(c, "%s", dtype_name(dt, buf));
}

/* one_hot(idx, 1, 0, depth=n, axis) in data's dtype */
static Expr *onehot(GradCtx *c, Expr *idx, int64_t n, int64_t axis) {
  DType dt = gr_dtype(c, 0);
  return GR_OP(c, "one_hot", gr_fmt(c, "depth=%lld, axis=%lld, dtype=\"%s\"", (long long)n, (long long)axis, dtype_str(c, dt)),
               idx, gr_const(c, 1, dt), gr_const(c, 0, dt));
}

/* indices as take's mode reads them */
static Expr *norm_index(GradCtx *c, Expr *idx, int64_t n) {
  const char *mode = gr_attr_str(c, "mode", "clip");
  DType it = gr_dtype(c, 1);
  if (strcmp(mode, "wrap") == 0) return GR_OP(c, "floor_mod", NULL, idx, gr_const(c, (double)n, it));
  if (strcmp(mode, "clip") == 0) return GR_OP(c, "clip", gr_fmt(c, "a_min=0f, a_max=%lldf", (long long)(n - 1)), idx);
  return idx;
}

static int64_t prod(const int64_t *d, uint32_t lo, uint32_t hi) {
  int64_t p = 1;
  for (uint32_t i = lo; i < hi; i++) p *= d[i];
  return p;
}

/* dx (pre, n, post) = Σ_m g(pre, m, post)·oh(m, n): g viewed as (pre·post, M), times oh */
static Expr *spread(GradCtx *c, Expr *g, Expr *oh, int64_t pre, int64_t M, int64_t post, int64_t n) {
  Expr *g3 = GR_OP(c, "reshape", gr_fmt(c, "newshape=[%lld, %lld, %lld]", (long long)pre, (long long)M, (long long)post), g);
  Expr *g2 = GR_OP(c, "reshape", gr_fmt(c, "newshape=[%lld, %lld]", (long long)(pre * post), (long long)M),
                   GR_OP(c, "transpose", "axes=[0, 2, 1]", g3));
  Expr *r = GR_OP(c, "nn.matmul", NULL, g2, oh);
  Expr *r3 = GR_OP(c, "reshape", gr_fmt(c, "newshape=[%lld, %lld, %lld]", (long long)pre, (long long)post, (long long)n), r);
  return GR_OP(c, "transpose", "axes=[0, 2, 1]", r3);
}

GRAD_RULE(TAKE) {
  int64_t dims[GRAD_MAX_RANK], idims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims) || !gr_shape(c, 1, idims)) return false;
  uint32_t rank = gr_rank(c, 0), irank = gr_rank(c, 1);
  if (gr_attr_int(c, "batch_dims", 0) != 0) return gr_fail(c, "batch_dims other than 0 is not supported");
  int64_t M = prod(idims, 0, irank);
  const AttrValue *av = gr_attr(c, "axis");
  Expr *flat_idx = GR_OP(c, "reshape", gr_fmt(c, "newshape=[%lld]", (long long)M), X1);
  if (!av || av->kind != AV_INT) { /* flattened data */
    int64_t n = prod(dims, 0, rank);
    Expr *oh = onehot(c, norm_index(c, flat_idx, n), n, -1);
    c->dx[0] = gr_reshape_like(c, spread(c, G, oh, 1, M, 1, n), X0);
    return true;
  }
  int64_t axis = av->i.value < 0 ? av->i.value + rank : av->i.value;
  if (axis < 0 || axis >= (int64_t)rank) return gr_fail(c, "axis is out of range");
  int64_t n = dims[axis];
  Expr *oh = onehot(c, norm_index(c, flat_idx, n), n, -1);
  c->dx[0] = gr_reshape_like(c, spread(c, G, oh, prod(dims, 0, (uint32_t)axis), M, prod(dims, (uint32_t)axis + 1, rank), n), X0);
  return true;
}

/* gather(data, axis, idx): out[.., i, ..] = data[.., idx[.., i, ..], ..]; g is spread with a
 * one-hot along a new axis after `axis`, summed over `axis`, padded to data's extents */
GRAD_RULE(GATHER) {
  int64_t dims[GRAD_MAX_RANK], idims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims) || !gr_shape(c, 1, idims)) return false;
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = gr_attr_int(c, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= (int64_t)rank) return gr_fail(c, "axis is out of range");
  Expr *idx = X1;
  if (gr_dtype(c, 1).code == DT_INT) /* negative indices count from the end */
    idx = GR_OP(c, "floor_mod", NULL, X1, gr_const(c, (double)dims[axis], gr_dtype(c, 1)));
  Expr *oh = onehot(c, idx, dims[axis], axis + 1);
  Expr *sum = GR_OP(c, "sum", gr_fmt(c, "axis=[%lld]", (long long)axis),
                    gr_mul(c, oh, GR_OP(c, "expand_dims", gr_fmt(c, "axis=%lld", (long long)(axis + 1)), G)));
  bool same = true;
  char pads[GRAD_MAX_RANK * 32];
  size_t len = (size_t)snprintf(pads, sizeof pads, "pad_width=[");
  for (uint32_t i = 0; i < rank; i++) {
    int64_t have = (int64_t)i == axis ? dims[i] : idims[i];
    same &= have == dims[i];
    len += (size_t)snprintf(pads + len, sizeof pads - len, "%s[0, %lld]", i ? ", " : "", (long long)(dims[i] - have));
  }
  snprintf(pads + len, sizeof pads - len, "]");
  c->dx[0] = same ? sum : GR_OP(c, "nn.pad", pads, sum, gr_scalar(c, 0, 0));
  return true;
}

/* gather_nd(data, idx (K, Y...)): the first K axes of data linearised into one index,
 * then the take rule along that axis */
GRAD_RULE(GATHER_ND) {
  int64_t dims[GRAD_MAX_RANK], idims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims) || !gr_shape(c, 1, idims)) return false;
  uint32_t rank = gr_rank(c, 0), irank = gr_rank(c, 1);
  if (gr_attr_int(c, "batch_dims", 0) != 0) return gr_fail(c, "batch_dims other than 0 is not supported");
  if (irank < 1) return gr_fail(c, "indices must have rank >= 1");
  int64_t K = idims[0], Y = prod(idims, 1, irank);
  if (K > (int64_t)rank) return gr_fail(c, "indices address more axes than data has");
  DType it = gr_dtype(c, 1);
  Expr *lin = NULL;
  for (int64_t k = 0; k < K; k++) {
    Expr *ik = GR_OP(c, "squeeze", "axis=[0]",
                     GR_OP(c, "strided_slice", gr_fmt(c, "begin=[%lld], end=[%lld], axes=[0]", (long long)k, (long long)(k + 1)), X1));
    int64_t stride = prod(dims, (uint32_t)k + 1, (uint32_t)K);
    Expr *term = stride == 1 ? ik : gr_mul(c, ik, gr_const(c, (double)stride, it));
    lin = lin ? gr_add(c, lin, term) : term;
  }
  int64_t P = prod(dims, 0, (uint32_t)K), R = prod(dims, (uint32_t)K, rank);
  Expr *flat = GR_OP(c, "reshape", gr_fmt(c, "newshape=[%lld]", (long long)Y), lin);
  Expr *oh = onehot(c, flat, P, -1); /* (Y, P) */
  Expr *g2 = GR_OP(c, "reshape", gr_fmt(c, "newshape=[%lld, %lld]", (long long)Y, (long long)R), G);
  Expr *d = GR_OP(c, "nn.matmul", "transpose_a=True", oh, g2); /* (P, R) */
  c->dx[0] = gr_reshape_like(c, d, X0);
  return true;
}
