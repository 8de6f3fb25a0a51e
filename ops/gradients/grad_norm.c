/* ops/gradients/grad_norm.c — rules of the normalisation family (spec/gradient.md §4.7
 * "normalisation").
 *
 * One formula serves layer/instance/group norm: over the set S of positions
 * sharing one statistic, with x̂ = (x − μ)·r, r = 1/√(σ² + ε) (biased σ²)
 * and ĝ = g·γ:  dx = r·(ĝ − mean_S(ĝ) − x̂·mean_S(ĝ·x̂)),  dγ = Σ g·x̂ and
 * dβ = Σ g over every axis but γ's. The statistics are recomputed from the
 * input in the backward code (the forward operators return only y).
 * batch_norm is relayc's inference form (moving statistics are inputs and
 * are returned unchanged as outputs 1 and 2), so its data gradient is the
 * affine g·γ·r. Rules agree with differentiating SimplifyInference's
 * decompositions, which is TVM's route.
 */
#include "ops/gradients/grad.h"
#include "ops/op_ids.h"

#define G (c->g)

/* v of shape (C,) reshaped to broadcast along `axis` of a rank-`rank` tensor */
static Expr *along(GradCtx *c, Expr *v, int64_t axis, uint32_t rank) {
  if ((uint32_t)axis + 1 >= rank) return v;
  return GR_OP(c, "expand_dims", gr_fmt(c, "axis=1, num_newaxis=%lld", (long long)(rank - 1 - axis)), v);
}

static int64_t axis_attr(GradCtx *c, const char *key, int64_t dflt, uint32_t rank) {
  int64_t a = gr_attr_int(c, key, dflt);
  return a < 0 ? a + (int64_t)rank : a;
}

static const char *sum_but(GradCtx *c, int64_t axis) { return gr_fmt(c, "axis=[%lld], exclude=True", (long long)axis); }

/* nn.batch_norm (inference): y = γ·(x − mean)·r + β, r = 1/√(var + ε); outputs (y, mean, var) */
GRAD_RULE(NN_BATCH_NORM) {
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = axis_attr(c, "axis", 1, rank);
  double eps = gr_attr_double(c, "epsilon", 1e-5);
  bool scale = gr_attr_bool(c, "scale", true), center = gr_attr_bool(c, "center", true);
  Expr *g0 = gr_let(c, gr_proj(c, G, 0));
  Expr *r = gr_let(c, gr_un(c, "rsqrt", gr_add(c, c->x[4], gr_scalar(c, eps, 4))));
  Expr *gr = gr_let(c, scale ? gr_mul(c, r, c->x[1]) : r); /* γ·r per channel */
  Expr *centered = gr_let(c, gr_sub(c, X0, along(c, c->x[3], axis, rank)));
  c->dx[0] = gr_mul(c, g0, along(c, gr, axis, rank));
  Expr *g0c = gr_let(c, gr_mul(c, g0, centered)); /* g0·(x − mean) */
  if (scale) c->dx[1] = gr_mul(c, GR_OP(c, "sum", sum_but(c, axis), g0c), r);
  if (center) c->dx[2] = GR_OP(c, "sum", sum_but(c, axis), g0);
  Expr *sg0 = center ? c->dx[2] : GR_OP(c, "sum", sum_but(c, axis), g0);
  c->dx[3] = gr_add(c, gr_neg(c, gr_mul(c, sg0, gr)), gr_proj(c, G, 1));
  Expr *r3 = gr_mul(c, gr_mul(c, r, r), gr);
  Expr *dv = gr_mul(c, gr_mul(c, GR_OP(c, "sum", sum_but(c, axis), g0c), r3), gr_scalar(c, -0.5, 0));
  c->dx[4] = gr_add(c, dv, gr_proj(c, G, 2));
  return true;
}

/* relayc.batch_norm_relu (transform/conv_epilogue.c): nn.batch_norm with a ReLU on output 0.
 * The mask needs the pre-activation, recomputed by nn.batch_norm (0 passes g, as nn.relu's
 * rule does); then the batch_norm rule on (masked g0, g1, g2). */
GRAD_RULE(RELAYC_BATCH_NORM_RELU) {
  Expr *z = gr_let(c, gr_proj(c, gr_let(c, gr_op_like(c, "nn.batch_norm", NULL, (Expr **)c->x, c->n)), 0));
  Expr *g0 = gr_where(c, GR_OP(c, "less", NULL, z, gr_scalar(c, 0, 0)), gr_scalar(c, 0, 0), gr_proj(c, G, 0));
  GradCtx sub = *c;
  sub.op = OP_NN_BATCH_NORM;
  sub.g = gr_let(c, gr_tuple(c, (Expr *[]){g0, gr_proj(c, G, 1), gr_proj(c, G, 2)}, 3));
  return grad_NN_BATCH_NORM(&sub);
}

/* The family formula on x (already viewed so that S = the axes `s_axes`), with ĝ given.
 * Returns dx; *xhat receives x̂ (for dγ). */
static Expr *norm_dx(GradCtx *c, Expr *x, Expr *ghat, const int64_t *s_axes, uint32_t ns, double eps, Expr **xhat) {
  const char *over = gr_fmt(c, "axis=%s, keepdims=True", gr_ints_text(c, s_axes, ns));
  Expr *mu = GR_OP(c, "mean", over, x);
  Expr *xc = gr_let(c, gr_sub(c, x, mu));
  Expr *var = GR_OP(c, "mean", over, gr_mul(c, xc, xc));
  Expr *r = gr_let(c, gr_un(c, "rsqrt", gr_add(c, var, gr_scalar(c, eps, 0))));
  Expr *xh = gr_let(c, gr_mul(c, xc, r));
  Expr *inner = gr_sub(c, gr_sub(c, ghat, GR_OP(c, "mean", over, ghat)),
                       gr_mul(c, xh, GR_OP(c, "mean", over, gr_mul(c, ghat, xh))));
  *xhat = xh;
  return gr_mul(c, r, inner);
}

/* layer_norm / instance_norm: S given as axes of the input itself; γ, β along `axis` */
static bool affine_norm(GradCtx *c, const int64_t *s_axes, uint32_t ns, int64_t axis) {
  uint32_t rank = gr_rank(c, 0);
  double eps = gr_attr_double(c, "epsilon", 1e-5);
  bool scale = gr_attr_bool(c, "scale", true), center = gr_attr_bool(c, "center", true);
  Expr *ghat = gr_let(c, scale ? gr_mul(c, G, along(c, X1, axis, rank)) : G);
  Expr *xhat = NULL;
  c->dx[0] = norm_dx(c, X0, ghat, s_axes, ns, eps, &xhat);
  if (scale) c->dx[1] = GR_OP(c, "sum", sum_but(c, axis), gr_mul(c, G, xhat));
  if (center) c->dx[2] = GR_OP(c, "sum", sum_but(c, axis), G);
  return true;
}

GRAD_RULE(NN_LAYER_NORM) {
  int64_t axis = axis_attr(c, "axis", -1, gr_rank(c, 0));
  return affine_norm(c, &axis, 1, axis);
}

/* instance_norm: S = every axis but 0 (the batch) and `axis` (the channels) */
GRAD_RULE(NN_INSTANCE_NORM) {
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = axis_attr(c, "axis", 1, rank), s[GRAD_MAX_RANK];
  uint32_t ns = 0;
  for (uint32_t k = 1; k < rank; k++)
    if ((int64_t)k != axis) s[ns++] = k;
  if (ns == 0) return gr_fail(c, "no axis to normalise over");
  return affine_norm(c, s, ns, axis);
}

/* group_norm: `axis` split into (groups, channels per group); S = all axes of that view
 * but 0 and the group axis; γ, β per channel */
GRAD_RULE(NN_GROUP_NORM) {
  int64_t dims[GRAD_MAX_RANK], view[GRAD_MAX_RANK + 1], s[GRAD_MAX_RANK + 1];
  if (!gr_shape(c, 0, dims)) return false;
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = axis_attr(c, "axis", 1, rank), groups = gr_attr_int(c, "num_groups", 0);
  if (groups <= 0 || dims[axis] % groups) return gr_fail(c, "num_groups must divide the channels");
  double eps = gr_attr_double(c, "epsilon", 1e-5);
  bool scale = gr_attr_bool(c, "scale", true), center = gr_attr_bool(c, "center", true);
  uint32_t k = 0, ns = 0;
  for (uint32_t i = 0; i < rank; i++) {
    if ((int64_t)i == axis) {
      view[k++] = groups;
      view[k++] = dims[i] / groups;
    } else {
      view[k++] = dims[i];
    }
  }
  for (uint32_t i = 1; i <= rank; i++)
    if ((int64_t)i != axis) s[ns++] = i;
  const char *as_view = gr_fmt(c, "newshape=%s", gr_ints_text(c, view, rank + 1));
  Expr *ghat = scale ? gr_mul(c, G, along(c, X1, axis, rank)) : G;
  Expr *xv = GR_OP(c, "reshape", as_view, X0);
  Expr *gv = gr_let(c, GR_OP(c, "reshape", as_view, ghat));
  Expr *xhat = NULL;
  c->dx[0] = gr_reshape_like(c, norm_dx(c, xv, gv, s, ns, eps, &xhat), X0);
  if (scale) c->dx[1] = GR_OP(c, "sum", sum_but(c, axis), gr_mul(c, G, gr_reshape_like(c, xhat, X0)));
  if (center) c->dx[2] = GR_OP(c, "sum", sum_but(c, axis), G);
  return true;
}

/* l2_normalize: y = x/ρ, ρ = √max(Σ x², eps): dx = (g − y·Σ(g·y))/ρ where Σ x² > eps,
 * else g/ρ (the clamp is active) */
GRAD_RULE(NN_L2_NORMALIZE) {
  int64_t axes[GRAD_MAX_RANK];
  uint32_t n = gr_reduce_axes(c, gr_rank(c, 0), axes);
  double eps = gr_attr_double(c, "eps", 0);
  Expr *s = gr_let(c, gr_sum(c, gr_mul(c, X0, X0), axes, n, true));
  Expr *e = gr_scalar(c, eps, 0);
  Expr *rho = gr_let(c, gr_un(c, "sqrt", GR_OP(c, "maximum", NULL, s, e)));
  Expr *proj = gr_sub(c, G, gr_mul(c, c->out, gr_sum(c, gr_mul(c, G, c->out), axes, n, true)));
  Expr *active = GR_OP(c, "greater", NULL, s, e);
  c->dx[0] = gr_div(c, gr_where(c, active, proj, G), rho);
  return true;
}

/* Σ_{d=lo..hi} v[.., c + d, ..] along `axis` (zero outside), by padding and slicing */
static Expr *window_sum(GradCtx *c, Expr *v, int64_t axis, uint32_t rank, int64_t n, int64_t lo, int64_t hi) {
  int64_t before = lo < 0 ? -lo : 0, after = hi > 0 ? hi : 0;
  int64_t pads[GRAD_MAX_RANK][2] = {{0}};
  pads[axis][0] = before;
  pads[axis][1] = after;
  Expr *p = gr_let(c, GR_OP(c, "nn.pad", gr_pad_width(c, rank, pads), v, gr_scalar(c, 0, -1)));
  Expr *sum = NULL;
  for (int64_t d = lo; d <= hi; d++) {
    int64_t b = before + d;
    Expr *sl = GR_OP(c, "strided_slice",
                     gr_fmt(c, "begin=[%lld], end=[%lld], strides=[1], axes=[%lld]", (long long)b, (long long)(b + n),
                            (long long)axis),
                     p);
    sum = sum ? gr_add(c, sum, sl) : sl;
  }
  return sum ? sum : gr_zeros_like(c, v);
}

/* lrn: y_c = x_c·D_c^(−β), D_c = bias + (α/size)·Σ_{c' ∈ W(c)} x_{c'}², W(c) = [c − size/2,
 * c − size/2 + size):  dx_c = g_c·D_c^(−β) − (2αβ/size)·x_c·Σ_{c': c ∈ W(c')} g_{c'}·x_{c'}·D_{c'}^(−β−1) */
GRAD_RULE(NN_LRN) {
  int64_t dims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = axis_attr(c, "axis", 1, rank), size = gr_attr_int(c, "size", 5), h = size / 2;
  double bias = gr_attr_double(c, "bias", 2), alpha = gr_attr_double(c, "alpha", 1e-4), beta = gr_attr_double(c, "beta", 0.75);
  if (size <= 0) return gr_fail(c, "size must be positive");
  if (!gr_pieces(c, size, "window offsets (one slice each, twice)")) return false;
  Expr *sq = gr_mul(c, X0, X0);
  Expr *win = window_sum(c, sq, axis, rank, dims[axis], -h, size - 1 - h);
  Expr *D = gr_let(c, gr_add(c, gr_scalar(c, bias, 0), gr_mul(c, gr_scalar(c, alpha / (double)size, 0), win)));
  Expr *Dmb = gr_let(c, GR_OP(c, "power", NULL, D, gr_scalar(c, -beta, 0)));
  Expr *t = gr_div(c, gr_mul(c, gr_mul(c, G, X0), Dmb), D); /* g·x·D^(−β−1) */
  Expr *back = window_sum(c, gr_let(c, t), axis, rank, dims[axis], -(size - 1 - h), h);
  Expr *corr = gr_mul(c, gr_scalar(c, 2 * alpha * beta / (double)size, 0), gr_mul(c, X0, back));
  c->dx[0] = gr_sub(c, gr_mul(c, G, Dmb), corr);
  return true;
}
