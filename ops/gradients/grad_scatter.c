/* ops/gradients/grad_scatter.c — rules of the scattering operators (spec/gradient.md §4.9):
 * strided_set, scatter_nd, scatter_elements, and dyn.strided_slice (strided_set's read-back).
 *
 * Each writes `u` into some positions of `d`. With replacement ("update",
 * strided_set), the written positions of d are overwritten: d's adjoint is ḡ
 * with those positions zeroed — the same scatter of zeros into ḡ — and u's
 * adjoint is ḡ read back at those positions (the matching gather). With
 * "add", d passes ḡ through untouched and u still reads ḡ at its positions.
 * The gathers are the operators' own adjoints: gather_nd for scatter_nd,
 * gather for scatter_elements, strided_slice for strided_set. Indices,
 * begin/end/strides get no gradient. With replacement and duplicate indices
 * the forward's winner is unspecified (spec §5.9), so the rules are exact
 * only for distinct indices; "mul", "mean", "min" and "max" reductions have
 * no rule (a located error).
 *
 *     strided_set(d, u, b, e, s):           d̄ = strided_set(ḡ, 0_u, b, e, s)    ū = strided_slice(ḡ, b, e, s)
 *     scatter_nd(d, i, u, "update"):       d̄ = scatter_nd(ḡ, i, 0_u)           ū = gather_nd(ḡ, i)
 *     scatter_nd(d, i, u, "add"):          d̄ = ḡ                               ū = gather_nd(ḡ, i)
 *     scatter_elements(d, i, u, axis, r):  d̄ = scatter_elements(ḡ, i, 0_u) | ḡ  ū = gather(ḡ, axis, i mod n)
 *     dyn.strided_slice(d, b, e, s):       d̄ = strided_set(0_d, ḡ, b, e, s)
 */
#include <string.h>

#include "ops/gradients/grad.h"

#define G (c->g)

/* strided_set's begin/end/strides are tensors, so the read-back is the dynamic
 * slice; reshape_like gives it u's static type. */
GRAD_RULE(STRIDED_SET) {
  Expr *d0 = GR_OP(c, "strided_set", NULL, G, gr_zeros_like(c, X1), X2, c->x[3], c->x[4]);
  Expr *u = GR_OP(c, "dyn.strided_slice", NULL, G, X2, c->x[3], c->x[4]);
  c->dx[0] = d0;
  c->dx[1] = gr_reshape_like(c, u, X1);
  return true;
}

/* dyn.strided_slice reads what strided_set writes: its adjoint writes ḡ into zeros
 * (what strided_set's own rule emits, so its second derivative needs this) */
GRAD_RULE(DYN_STRIDED_SLICE) {
  c->dx[0] = GR_OP(c, "strided_set", NULL, gr_zeros_like(c, X0), G, X1, X2, c->x[3]);
  return true;
}

GRAD_RULE(SCATTER_ND) {
  const char *mode = gr_attr_str(c, "mode", "update");
  bool add = strcmp(mode, "add") == 0;
  if (!add && strcmp(mode, "update") != 0) return gr_fail(c, "mode=\"%s\" has no gradient rule", mode);
  c->dx[0] = add ? G : GR_OP(c, "scatter_nd", "mode=\"update\"", G, X1, gr_zeros_like(c, X2));
  c->dx[2] = GR_OP(c, "gather_nd", NULL, G, X1);
  return true;
}

/* scatter_elements counts negative indices from the end; gather does not, so
 * the read-back takes them modulo the extent first. */
GRAD_RULE(SCATTER_ELEMENTS) {
  int64_t dims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = gr_attr_int(c, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= (int64_t)rank) return gr_fail(c, "axis is out of range");
  const char *red = gr_attr_str(c, "reduction", "update");
  bool add = strcmp(red, "add") == 0;
  if (!add && strcmp(red, "update") != 0) return gr_fail(c, "reduction=\"%s\" has no gradient rule", red);
  const char *ax = gr_fmt(c, "axis=%lld", (long long)axis);
  DType it = gr_dtype(c, 1);
  Expr *idx = GR_OP(c, "where", NULL, GR_OP(c, "less", NULL, X1, gr_const(c, 0, it)),
                    GR_OP(c, "add", NULL, X1, gr_const(c, (double)dims[axis], it)), X1);
  c->dx[0] = add ? G : GR_OP(c, "scatter_elements", gr_fmt(c, "axis=%lld, reduction=\"update\"", (long long)axis), G, X1,
                             gr_zeros_like(c, X2));
  c->dx[2] = GR_OP(c, "gather", ax, G, idx);
  return true;
}
