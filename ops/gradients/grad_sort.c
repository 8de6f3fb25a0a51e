/* ops/gradients/grad_sort.c — rules of the sorting operators (spec/gradient.md §4.7).
 *
 * sort permutes its input along an axis: the adjoint is g permuted back, i.e.
 * gathered at the inverse permutation, which is the argsort of the forward's argsort.
 * topk's values are a selection: each selected position receives its adjoint, built
 * as Σ_k g_k·[idx_k == j] with a one_hot mask along a new axis (no scatter needed;
 * O(k·n) memory along the axis); dyn.topk, whose k is known only at run time, adds
 * the values' adjoint back with a scatter-add. Indices get nothing.
 */
#include "ops/gradients/grad.h"

#include <string.h>

#define G (c->g)

GRAD_NONE(ARGSORT)

GRAD_RULE(SORT) {
  if (gr_rank(c, 0) == 0) { /* a scalar sorts to itself: gather has no axis to use */
    c->dx[0] = G;
    return true;
  }
  int64_t axis = gr_attr_int(c, "axis", -1);
  if (axis < 0) axis += gr_rank(c, 0);
  bool asc = gr_attr_bool(c, "is_ascend", true);
  Expr *perm = GR_OP(c, "argsort", gr_fmt(c, "axis=%lld, is_ascend=%s, dtype=\"int64\"", (long long)axis, asc ? "True" : "False"), X0);
  Expr *inv = GR_OP(c, "argsort", gr_fmt(c, "axis=%lld, dtype=\"int64\"", (long long)axis), perm);
  c->dx[0] = GR_OP(c, "gather", gr_fmt(c, "axis=%lld", (long long)axis), G, inv);
  return true;
}

/* The indices as one_hot and scatter_elements take them: the call's `dtype` may be a float
 * (TVM allows it; golden tvm/run/test_dynamic_op_level6_topk.relay), whose indices are whole
 * numbers cast to int64 here (session 16: Gradient's output did not type-check). */
static Expr *topk_int_indices(GradCtx *c, Expr *idx) {
  const char *dt = gr_attr_str(c, "dtype", "int32");
  return strncmp(dt, "int", 3) == 0 || strncmp(dt, "uint", 4) == 0 ? idx : GR_OP(c, "cast", "dtype=\"int64\"", idx);
}

/* The values' adjoint and the indices of a topk-like call: the tuple's two
 * fields, or for ret_type="values" the adjoint itself and the indices
 * recomputed; false for ret_type="indices" (nothing flows back). */
static bool topk_parts(GradCtx *c, const char *op, Expr **args, uint32_t nargs, Expr **gv, Expr **idx) {
  if (c->out_t && c->out_t->kind == TYPE_TUPLE) {
    *gv = gr_proj(c, G, 0);
    *idx = topk_int_indices(c, gr_proj(c, c->out, 1));
    return true;
  }
  if (gr_attr_str(c, "ret_type", "both")[0] != 'v') return false;
  *gv = G;
  *idx = topk_int_indices(c, gr_op_like(c, op, "ret_type=\"indices\"", args, nargs));
  return true;
}

GRAD_RULE(TOPK) {
  int64_t dims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = gr_attr_int(c, "axis", -1);
  if (axis < 0) axis += rank;
  Expr *gv, *idx;
  if (!topk_parts(c, "topk", (Expr *[]){X0}, 1, &gv, &idx)) return true;
  DType dt = gr_dtype(c, 0);
  Expr *mask = GR_OP(c, "one_hot", gr_fmt(c, "depth=%lld, axis=%lld, dtype=\"%s\"", (long long)dims[axis], (long long)(axis + 1),
                                          dtype_is_float(dt) && dt.bits == 64 ? "float64" : dt.bits == 16 ? "float16" : "float32"),
                     idx, gr_const(c, 1, dt), gr_const(c, 0, dt));
  Expr *spread = gr_mul(c, mask, GR_OP(c, "expand_dims", gr_fmt(c, "axis=%lld", (long long)(axis + 1)), gv));
  c->dx[0] = GR_OP(c, "sum", gr_fmt(c, "axis=[%lld]", (long long)axis), spread);
  return true;
}

/* dyn.topk(x, k): the values' adjoint added back at the indices (a scatter-add, which
 * needs no static extent of the run-time k) */
GRAD_RULE(DYN_TOPK) {
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = gr_attr_int(c, "axis", -1);
  if (axis < 0) axis += rank;
  Expr *gv, *idx;
  if (!topk_parts(c, "dyn.topk", (Expr *[]){X0, X1}, 2, &gv, &idx)) return true;
  c->dx[0] = GR_OP(c, "scatter_elements", gr_fmt(c, "axis=%lld, reduction=\"add\"", (long long)axis), gr_zeros_like(c, X0),
                   idx, gv);
  return true;
}
