/* transform/simplify_inference.c — SimplifyInference (spec/passes.md §4.3):
 * inference-time normalisations become plain arithmetic.
 *
 *  - nn.batch_norm(x, γ, β, μ, σ²).0 — only `.0` taken directly of the call;
 *    `.1`/`.2`, or `.0` through a let variable, keep the call:
 *      s = 1 / sqrt(σ² + ε) [* γ],  t = -μ * s [+ β],
 *      x * expand(s) + expand(t)     (one shared s)
 *  - nn.dropout(x).0 → x (dropout used otherwise stays)
 *  - nn.layer_norm / nn.instance_norm / nn.group_norm: mean and (biased)
 *    variance over the normalised axes, (x - m) / sqrt(v + ε), then γ/β
 *  - nn.l2_normalize(x): x / sqrt(maximum(sum(x*x, axis, keepdims), ε))
 * ε is the attribute rounded to float32 and stored in the data dtype (TVM's
 * MakeConstantScalar); l2_normalize's ε is always float32, like TVM's, whose
 * expansion of an l2_normalize of other data (float16, int8) does not
 * type-check (`maximum` of two dtypes): relayc leaves such a call alone.
 * `expand(v)` = expand_dims(v, axis=1, num_newaxis=ndim-axis-1), left out
 * when that is 0. Types come from the data input as the pass received it.
 * A call whose data type is not a tensor of known rank (or, for group_norm,
 * of static shape with a divisible channel count) is left alone.
 */
#include <string.h>

#include "ir/build.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "transform/call_pass.h"
#include "transform/callattr.h"
#include "transform/fold_constant.h"

static Expr *call1(Module *m, const char *op, Expr *a, const char *attrs, Span sp) {
  return op_call(m, op, &a, 1, attrs, sp);
}

static Expr *call2(Module *m, const char *op, Expr *a, Expr *b, Span sp) {
  Expr *args[2] = {a, b};
  return op_call(m, op, args, 2, NULL, sp);
}

/* v reshaped to broadcast along `axis` of an ndim-rank tensor. */
static Expr *expand_to_axis(Module *m, Expr *v, int64_t ndim, int64_t axis, Span sp) {
  int64_t n = ndim - axis - 1;
  if (n <= 0) return v;
  char a[64];
  snprintf(a, sizeof a, "axis=1, num_newaxis=%lld", (long long)n);
  return call1(m, "expand_dims", v, a, sp);
}

static Expr *epsilon(Module *m, DType dt, const Expr *call, const char *key, Span sp) {
  return fold_const_scalar(m, dt, (double)(float)cattr_double(call, key, 1e-5), sp);
}

static int64_t norm_axis(int64_t axis, int64_t ndim) { return axis < 0 ? axis + ndim : axis; }

/* nn.batch_norm(...).0 for the call `bn` (rewritten arguments), data type t. */
static Expr *batch_norm(Module *m, const Expr *bn, const Type *t, Span sp) {
  Expr **a = bn->call.args;
  DType dt = t->tensor.dtype;
  int64_t ndim = t->tensor.ndim, axis = norm_axis(cattr_int(bn, "axis", 1), ndim);
  Expr *s = call2(m, "divide", fold_const_scalar(m, dt, 1.0, sp),
                  call1(m, "sqrt", call2(m, "add", a[4], epsilon(m, dt, bn, "epsilon", sp), sp), NULL, sp), sp);
  if (cattr_bool(bn, "scale", true)) s = call2(m, "multiply", s, a[1], sp);
  Expr *shift = call2(m, "multiply", call1(m, "negative", a[3], NULL, sp), s, sp);
  if (cattr_bool(bn, "center", true)) shift = call2(m, "add", shift, a[2], sp);
  Expr *out = call2(m, "multiply", a[0], expand_to_axis(m, s, ndim, axis, sp), sp);
  return call2(m, "add", out, expand_to_axis(m, shift, ndim, axis, sp), sp);
}

/* (x - mean) / sqrt(var + eps) over `axes` (text of an int array). */
static Expr *normalize(Module *m, Expr *x, const char *axes, Expr *eps, Span sp) {
  char a[300];
  snprintf(a, sizeof a, "axis=%s, keepdims=True", axes);
  Expr *mean = call1(m, "mean", x, a, sp);
  Expr *args[2] = {x, mean};
  Expr *var = op_call(m, "variance", args, 2, a, sp);
  Expr *denom = call1(m, "sqrt", call2(m, "add", var, eps, sp), NULL, sp);
  return call2(m, "divide", call2(m, "subtract", x, mean, sp), denom, sp);
}

/* γ and β of a normalisation applied along `axis`. */
static Expr *scale_center(Module *m, Expr *out, const Expr *call, int64_t ndim, int64_t axis, Span sp) {
  if (cattr_bool(call, "scale", true))
    out = call2(m, "multiply", out, expand_to_axis(m, call->call.args[1], ndim, axis, sp), sp);
  if (cattr_bool(call, "center", true))
    out = call2(m, "add", out, expand_to_axis(m, call->call.args[2], ndim, axis, sp), sp);
  return out;
}

static Expr *layer_norm(Module *m, const Expr *call, const Type *t, Span sp) {
  int64_t ndim = t->tensor.ndim, raw = cattr_int(call, "axis", -1);
  char axes[64];
  cattr_format_ints(&raw, 1, axes, sizeof axes); /* the axis as written */
  Expr *out = normalize(m, call->call.args[0], axes, epsilon(m, t->tensor.dtype, call, "epsilon", sp), sp);
  return scale_center(m, out, call, ndim, norm_axis(raw, ndim), sp);
}

static Expr *instance_norm(Module *m, const Expr *call, const Type *t, Span sp) {
  int64_t ndim = t->tensor.ndim, axis = norm_axis(cattr_int(call, "axis", 1), ndim);
  int64_t red[64];
  int n = 0;
  for (int64_t i = 1; i < ndim && n < 64; i++)
    if (i != axis) red[n++] = i;
  char axes[300];
  cattr_format_ints(red, n, axes, sizeof axes);
  Expr *out = normalize(m, call->call.args[0], axes, epsilon(m, t->tensor.dtype, call, "epsilon", sp), sp);
  return scale_center(m, out, call, ndim, axis, sp);
}

static Expr *group_norm(Module *m, const Expr *call, const Type *t, Span sp) {
  int64_t ndim = t->tensor.ndim, axis = norm_axis(cattr_int(call, "axis", 1), ndim);
  int64_t groups = cattr_int(call, "num_groups", 0);
  if (ndim > 60 || axis < 0 || axis >= ndim || groups <= 0) return NULL;
  int64_t old_shape[64], new_shape[64], red[64];
  for (int64_t i = 0; i < ndim; i++) {
    if (t->tensor.dims[i].kind != DIM_INT) return NULL;
    old_shape[i] = t->tensor.dims[i].value;
  }
  int64_t channels = old_shape[axis];
  if (channels % groups != 0) return NULL;
  int nn = 0, nr = 0;
  for (int64_t i = 0; i < ndim; i++) {
    if (i == axis) {
      new_shape[nn++] = groups;
      new_shape[nn++] = channels / groups;
      red[nr++] = i + 1;
      continue;
    }
    if (i >= axis) red[nr++] = i + 1;
    new_shape[nn++] = old_shape[i];
  }
  char buf[600], attrs[640];
  snprintf(attrs, sizeof attrs, "newshape=%s", cattr_format_ints(new_shape, nn, buf, sizeof buf));
  Expr *x = call1(m, "reshape", call->call.args[0], attrs, sp);
  Expr *out = normalize(m, x, cattr_format_ints(red, nr, buf, sizeof buf),
                        epsilon(m, t->tensor.dtype, call, "epsilon", sp), sp);
  snprintf(attrs, sizeof attrs, "newshape=%s", cattr_format_ints(old_shape, (int)ndim, buf, sizeof buf));
  out = call1(m, "reshape", out, attrs, sp);
  return scale_center(m, out, call, ndim, axis, sp);
}

static Expr *l2_normalize(Module *m, const Expr *call, Span sp) {
  Expr *x = call->call.args[0];
  char axis[256], attrs[300];
  snprintf(attrs, sizeof attrs, "axis=%s, keepdims=True", cattr_text(call, "axis", axis, sizeof axis));
  Expr *sum = call1(m, "sum", call2(m, "multiply", x, x, sp), attrs, sp);
  Expr *eps = fold_const_scalar(m, DT_F32, (double)(float)cattr_double(call, "eps", 0), sp);
  return call2(m, "divide", x, call1(m, "sqrt", call2(m, "maximum", sum, eps, sp), NULL, sp), sp);
}

static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  Module *m = rw->m;
  if (e->kind == EXPR_PROJ) {
    Expr *t = e->proj.tuple;
    if (e->proj.index != 0 || t->kind != EXPR_CALL) return e;
    int32_t id = op_call_id(t);
    if (id == OP_NN_DROPOUT) return t->call.args[0];
    if (id != OP_NN_BATCH_NORM || t->call.nargs != 5 || old->proj.tuple->kind != EXPR_CALL) return e;
    const Type *ty = type_solved_tensor(old->proj.tuple->call.args[0]->type);
    return ty ? batch_norm(m, t, ty, e->span) : e;
  }
  if (e->kind != EXPR_CALL) return e;
  int32_t id = op_call_id(e);
  if (id != OP_NN_LAYER_NORM && id != OP_NN_GROUP_NORM && id != OP_NN_INSTANCE_NORM && id != OP_NN_L2_NORMALIZE)
    return e;
  const Type *ty = type_solved_tensor(old->call.args[0]->type);
  if (!ty) return e;
  Expr *r = NULL;
  switch (id) {
  case OP_NN_LAYER_NORM: r = layer_norm(m, e, ty, e->span); break;
  case OP_NN_INSTANCE_NORM: r = instance_norm(m, e, ty, e->span); break;
  case OP_NN_GROUP_NORM: r = group_norm(m, e, ty, e->span); break;
  default: r = dtype_eq(ty->tensor.dtype, DT_F32) ? l2_normalize(m, e, e->span) : NULL; break;
  }
  return r ? r : e;
}

bool pass_SIMPLIFY_INFERENCE(PassCtx *c); /* the entry point passes.def names */
bool pass_SIMPLIFY_INFERENCE(PassCtx *c) {
  static const int32_t ops[] = {OP_NN_BATCH_NORM,     OP_NN_DROPOUT,        OP_NN_LAYER_NORM,
                                OP_NN_GROUP_NORM,     OP_NN_INSTANCE_NORM, OP_NN_L2_NORMALIZE};
  return call_pass_run(c, &(CallPass){.ops = ops, .nops = 6, .post = post});
}
