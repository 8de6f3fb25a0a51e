/* ops/gradients/grad_reduce.c — rules of the reductions (spec/gradient.md §4.3, §4.7 "reductions").
 *
 * Notation of the spec: A = the reduced axes (gr_reduce_axes: sorted,
 * normalised, `exclude` and axis=None applied), ex(e) = e with a size-1 axis
 * re-inserted at every axis of A (nothing when keepdims=True), N_A = the
 * number of elements reduced into one output. The adjoint is ex(g) broadcast
 * back to the input. max/min share the adjoint evenly among ties (as
 * PyTorch's amax/amin); prod uses exclusive prefix and suffix products along
 * the flattened reduced axes, so zeros in the input are handled exactly.
 */
#include "ops/gradients/grad.h"

/* ex(e) for the call's reduction */
static Expr *expand_reduced(GradCtx *c, Expr *e, const int64_t *axes, uint32_t n) {
  if (gr_attr_bool(c, "keepdims", false)) return e;
  return gr_expand_axes(c, e, axes, n);
}

static uint32_t axes_of(GradCtx *c, int64_t *axes) { return gr_reduce_axes(c, gr_rank(c, 0), axes); }

/* N_A: how many elements of input 0 each output element reduces (false without a static shape) */
static bool reduced_count(GradCtx *c, const int64_t *axes, uint32_t n, double *count) {
  int64_t dims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  *count = 1;
  for (uint32_t k = 0; k < n; k++) *count *= (double)dims[axes[k]];
  return true;
}

/* d Σ_A x = bc(ex(g), x) */
GRAD_RULE(SUM) {
  int64_t axes[GRAD_MAX_RANK];
  uint32_t n = axes_of(c, axes);
  c->dx[0] = gr_broadcast_to_like(c, expand_reduced(c, c->g, axes, n), X0);
  return true;
}

/* d mean_A x = bc(ex(g) / N_A, x) */
GRAD_RULE(MEAN) {
  int64_t axes[GRAD_MAX_RANK];
  uint32_t n = axes_of(c, axes);
  double count;
  if (!reduced_count(c, axes, n, &count)) return false;
  Expr *scaled = gr_mul(c, expand_reduced(c, c->g, axes, n), gr_scalar(c, count > 0 ? 1.0 / count : 0, 0));
  c->dx[0] = gr_broadcast_to_like(c, scaled, X0);
  return true;
}

/* max/min: m = [x == ex(out)]; dx = m · ex(g) / Σ_A m  (ties share evenly) */
static bool extremum(GradCtx *c) {
  int64_t axes[GRAD_MAX_RANK];
  uint32_t n = axes_of(c, axes);
  Expr *hit = GR_OP(c, "equal", NULL, X0, expand_reduced(c, c->out, axes, n));
  Expr *mask = gr_let(c, gr_cast_like(c, hit, X0));
  Expr *count = gr_sum(c, mask, axes, n, true);
  if (n == 0) count = gr_scalar(c, 1, 0);
  c->dx[0] = gr_div(c, gr_mul(c, mask, expand_reduced(c, c->g, axes, n)), count);
  return true;
}
GRAD_RULE(MAX) { return extremum(c); }
GRAD_RULE(MIN) { return extremum(c); }

/* d Π_A x = bc(ex(g), x) · P, P_i = Π of the other elements of i's group,
 * as exclusive prefix × exclusive suffix products along the flattened axes A
 * (moved last by a transpose). */
GRAD_RULE(PROD) {
  int64_t axes[GRAD_MAX_RANK], dims[GRAD_MAX_RANK], perm[GRAD_MAX_RANK], inv[GRAD_MAX_RANK], pshape[GRAD_MAX_RANK];
  uint32_t n = axes_of(c, axes), rank = gr_rank(c, 0);
  if (!gr_shape(c, 0, dims)) return false;
  bool in_a[GRAD_MAX_RANK] = {0};
  for (uint32_t k = 0; k < n; k++) in_a[axes[k]] = true;
  uint32_t p = 0;
  int64_t group = 1;
  for (uint32_t k = 0; k < rank; k++)
    if (!in_a[k]) perm[p++] = k;
  for (uint32_t k = 0; k < n; k++) {
    perm[p++] = axes[k];
    group *= dims[axes[k]];
  }
  for (uint32_t k = 0; k < rank; k++) {
    inv[perm[k]] = k;
    pshape[k] = dims[perm[k]];
  }
  Expr *xt = rank ? GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, perm, rank)), X0) : X0;
  Expr *flat = gr_let(c, GR_OP(c, "reshape", gr_fmt(c, "newshape=[-1, %lld]", (long long)group), xt));
  Expr *before = GR_OP(c, "cumprod", "axis=1, exclusive=True", flat);
  Expr *rev = GR_OP(c, "reverse", "axis=1", flat);
  Expr *after = GR_OP(c, "reverse", "axis=1", GR_OP(c, "cumprod", "axis=1, exclusive=True", rev));
  Expr *others = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, pshape, rank)), gr_mul(c, before, after));
  if (rank) others = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, inv, rank)), others);
  c->dx[0] = gr_mul(c, gr_broadcast_to_like(c, expand_reduced(c, c->g, axes, n), X0), others);
  return true;
}

/* variance(data, mean) = Σ_A (data − mean)² / (N_A − u): the true partials
 * (relayc, §4.3): d data = 2/(N_A − u) · ex(g) · (data − mean), d mean = −Σ of that */
GRAD_RULE(VARIANCE) {
  int64_t axes[GRAD_MAX_RANK];
  uint32_t n = axes_of(c, axes);
  double count;
  if (!reduced_count(c, axes, n, &count)) return false;
  double denom = count - (gr_attr_bool(c, "unbiased", false) ? 1 : 0);
  Expr *scale = gr_scalar(c, denom > 0 ? 2.0 / denom : 0, 0);
  Expr *dd = gr_let(c, gr_mul(c, gr_mul(c, expand_reduced(c, c->g, axes, n), scale), gr_sub(c, X0, X1)));
  c->dx[0] = dd;
  c->dx[1] = GR_OP(c, "collapse_sum_like", NULL, gr_neg(c, dd), X1);
  return true;
}

/* boolean / index results: nothing flows back (§4.8) */
GRAD_NONE(ALL)
GRAD_NONE(ANY)
GRAD_NONE(ARGMAX)
GRAD_NONE(ARGMIN)
