/* transform/simplify_expr.c — SimplifyExpr and SimplifyExprPostAlterOp
 * (spec/passes.md §4.4): TVM's 24 rewrites, in TVM's order, through the
 * pattern rewriter of transform/pattern.h (rounds to a fixed point, TVM's
 * limit of 100 counted applications).
 *
 * Where TVM's rule would change a program's meaning, relayc declines (each
 * place says so): full(v) whose v has another dtype than the result; a
 * layout_transform pair that is not a permutation is composed into one
 * layout_transform rather than read as an identity transpose; transpose /
 * rank-changing layout_transform pairs TVM mis-folds are left alone; the
 * binomial rule only reads int32/float32/float64 coefficients (TVM takes
 * others as 1) and, for integers, only when the factors are whole numbers.
 * The three QNN rules (dequantize feeding argmax/argmin/argsort) fire only
 * when dequantizing keeps the order (a positive uniform scale: TVM ignores
 * the scale's sign and per-channel scales).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/build.h"
#include "ir/equal.h"
#include "ops/layout.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "runtime/tensor.h"
#include "transform/callattr.h"
#include "transform/fold_constant.h"
#include "transform/pass.h"
#include "transform/pattern.h"

/* ------------------------------------------------------------ helpers */

/* "[d0, d1, ...]" of a fully static tensor type, else NULL. */
static const char *static_shape(const Type *t, char *buf, size_t cap, int64_t *dims, int *nd) {
  t = type_solved_tensor(t);
  if (!t || t->tensor.ndim > 64) return NULL;
  int64_t d[64];
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    if (t->tensor.dims[i].kind != DIM_INT) return NULL;
    d[i] = t->tensor.dims[i].value;
  }
  if (dims) memcpy(dims, d, t->tensor.ndim * sizeof *d);
  if (nd) *nd = (int)t->tensor.ndim;
  return cattr_format_ints(d, (int)t->tensor.ndim, buf, cap);
}

static const char *dtype_text(DType dt, char *buf) { return dtype_name(dt, buf); }

static Expr *call1(Module *m, const char *op, Expr *a, const char *attrs, Span sp) {
  return op_call(m, op, &a, 1, attrs, sp);
}

static Expr *call2(Module *m, const char *op, Expr *a, Expr *b, const char *attrs, Span sp) {
  Expr *args[2] = {a, b};
  return op_call(m, op, args, 2, attrs, sp);
}

static const char *op_name(const Expr *call) { return op_get(op_call_id(call))->name; }

static DType dtype_of(const Expr *e) {
  const Type *t = type_solved_tensor(e->type);
  return t ? t->tensor.dtype : DTYPE(DT_HANDLE, 0);
}

static bool same_type(const Expr *a, const Expr *b) { return a->type && b->type && type_equal(a->type, b->type); }

/* Every extent 1 (rank 0 included). */
static bool all_ones_shape(const ConstTensor *c) {
  for (int32_t i = 0; i < c->ndim; i++)
    if (c->shape[i] != 1) return false;
  return true;
}

/* The range of values of dt (TVM's min_value / max_value); false for dtypes without one. */
static bool dtype_range(DType dt, double *lo, double *hi) {
  if (dt.code == DT_INT && dt.bits >= 1 && dt.bits <= 64) {
    *hi = ldexp(1, dt.bits - 1) - 1;
    *lo = -ldexp(1, dt.bits - 1);
    return true;
  }
  if (dt.code == DT_UINT && dt.bits >= 1 && dt.bits <= 64) {
    *hi = ldexp(1, dt.bits) - 1;
    *lo = 0;
    return true;
  }
  if (dt.code == DT_FLOAT) {
    double m = dt.bits == 16 ? 65504.0 : dt.bits == 32 ? (double)FLT_MAX : dt.bits == 64 ? DBL_MAX : 0;
    if (m == 0) return false;
    *hi = m;
    *lo = -m;
    return true;
  }
  if (dt.code == DT_BFLOAT && dt.bits == 16) {
    *hi = 3.3895313892515355e38;
    *lo = -*hi;
    return true;
  }
  return false;
}

/* ------------------------------------------------------------ 1-7 concretize *_like */

static Expr *concretize_like(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)mt;
  const Type *t = type_solved_tensor(pre->type);
  char shape[1024], dt[32], a[1100];
  int64_t dims[64];
  int nd = 0;
  if (!t || !static_shape(t, shape, sizeof shape, dims, &nd)) return post;
  Module *m = cx->m;
  Span sp = post->span;
  dtype_text(t->tensor.dtype, dt);
  switch (op_call_id(post)) {
  case OP_ZEROS_LIKE:
  case OP_ONES_LIKE:
    snprintf(a, sizeof a, "shape=%s, dtype=\"%s\"", shape, dt);
    return op_call(m, op_call_id(post) == OP_ZEROS_LIKE ? "zeros" : "ones", NULL, 0, a, sp);
  case OP_FULL_LIKE:
    snprintf(a, sizeof a, "shape=%s, dtype=\"%s\"", shape, dt);
    return call1(m, "full", post->call.args[1], a, sp);
  case OP_RESHAPE_LIKE:
    snprintf(a, sizeof a, "newshape=%s", shape);
    return call1(m, "reshape", post->call.args[0], a, sp);
  case OP_COLLAPSE_SUM_LIKE: {
    int32_t s32[64];
    for (int i = 0; i < nd; i++) s32[i] = (int32_t)dims[i];
    int64_t n = nd;
    Expr *c = build_const(m, DT_I32, 1, &n, s32, sp);
    snprintf(a, sizeof a, "shape=%s", shape);
    return call2(m, "collapse_sum_to", post->call.args[0], c, a, sp);
  }
  case OP_BROADCAST_TO_LIKE:
    snprintf(a, sizeof a, "shape=%s", shape);
    return call1(m, "broadcast_to", post->call.args[0], a, sp);
  default: return post;
  }
}

static Expr *concretize_cast_like(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)mt;
  const Type *t = type_solved_tensor(pre->type);
  if (!t) return post;
  char dt[32], a[64];
  snprintf(a, sizeof a, "dtype=\"%s\"", dtype_text(t->tensor.dtype, dt));
  return call1(cx->m, "cast", post->call.args[0], a, post->span);
}

/* ------------------------------------------------------------ 8 x + x, 9 rsqrt */

enum { S_X, S_Y, S_C, S_C1, S_C2, S_V, S_FULL, S_ONES, S_ZEROS, S_D, S_CAST1, S_CLIP, S_A, S_B, S_CC };

static Expr *simplify_add(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  Expr *x = mt->post[S_X], *y = mt->post[S_Y];
  bool same = x == y || (x->kind == EXPR_VAR && y->kind == EXPR_VAR && x->var.var == y->var.var);
  if (!same || !type_solved_tensor(pre->type)) return post;
  return call2(cx->m, "multiply", x, fold_const_scalar(cx->m, dtype_of(pre), 2, post->span), NULL, post->span);
}

static Expr *simplify_rsqrt(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)pre;
  Expr *r = call1(cx->m, "rsqrt", mt->post[S_X], NULL, post->span);
  return call2(cx->m, "multiply", mt->post[S_Y], r, NULL, post->span);
}

/* ------------------------------------------------------------ 10 identities */

static Expr *eliminate_identity(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)cx;
  if (!type_solved_tensor(pre->type)) return post;
  Expr *x = mt->post[S_X];
  bool is_left = post->call.args[1] == x;
  const Expr *x_pre = pre->call.args[is_left ? 1 : 0];
  if (mt->pre[S_C]) {
    const ConstTensor *c = mt->pre[S_C]->constant;
    long double v;
    if (!all_ones_shape(c) || !fold_const_element0(c, &v)) return post;
    int32_t id = op_call_id(pre);
    if ((id == OP_ADD || id == OP_SUBTRACT) && v != 0) return post;
    if ((id == OP_MULTIPLY || id == OP_DIVIDE) && v != 1) return post;
  }
  return same_type(x_pre, pre) ? x : post;
}

/* ------------------------------------------------------------ 11 reshape chains */

static Expr *simplify_reshape(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  char shape[1024], a[1100];
  if (!static_shape(pre->type, shape, sizeof shape, NULL, NULL)) return post;
  snprintf(a, sizeof a, "newshape=%s", shape);
  return call1(cx->m, "reshape", mt->post[S_X], a, post->span);
}

/* ------------------------------------------------------------ 11/12 transposes */

static bool is_lt(const Expr *e) { return op_call_id(e) == OP_LAYOUT_TRANSFORM; }

static bool lt_layouts(const Expr *e, Layout *src, Layout *dst) {
  return layout_parse(cattr_str(e, "src_layout", ""), src) && layout_parse(cattr_str(e, "dst_layout", ""), dst);
}

/* The permutation a transpose or a same-rank layout_transform applies to an
 * ndim-rank input: output axis i is input axis perm[i]. False when it is not
 * a permutation (a layout_transform re-splitting an axis: NCHW4c -> NCHW8c). */
static bool perm_of(const Expr *e, int ndim, int64_t *perm) {
  if (ndim > 64) return false;
  if (op_call_id(e) == OP_TRANSPOSE) {
    int n = cattr_ints(e, "axes", perm, 64);
    if (n < 0) {
      for (int i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
      return true;
    }
    if (n != ndim) return false;
    bool seen[64] = {false};
    for (int i = 0; i < ndim; i++) {
      if (perm[i] < 0) perm[i] += ndim;
      if (perm[i] < 0 || perm[i] >= ndim || seen[perm[i]]) return false;
      seen[perm[i]] = true;
    }
    return true;
  }
  Layout src, dst;
  if (!is_lt(e) || !lt_layouts(e, &src, &dst) || src.n != ndim || dst.n != ndim) return false;
  for (int i = 0; i < ndim; i++) {
    int j = 0;
    while (j < ndim && !(src.ax[j] == dst.ax[i] && src.factor[j] == dst.factor[i])) j++;
    if (j == ndim) return false;
    perm[i] = j;
  }
  return true;
}

/* The layout text of l with its dimensions reordered: dim i of the result is l's dim perm[i]. */
static void permute_layout(const Layout *l, const int64_t *perm, char *out, size_t cap) {
  size_t k = 0;
  out[0] = 0;
  for (int i = 0; i < l->n && k + 24 < cap; i++) {
    int j = (int)perm[i];
    if (l->factor[j]) k += (size_t)snprintf(out + k, cap - k, "%lld", (long long)l->factor[j]);
    out[k++] = l->ax[j];
    out[k] = 0;
  }
}

static Expr *layout_transform(Module *m, Expr *x, const char *src, const char *dst, Span sp) {
  if (strcmp(src, dst) == 0) return x;
  char a[256];
  snprintf(a, sizeof a, "src_layout=\"%s\", dst_layout=\"%s\"", src, dst);
  return call1(m, "layout_transform", x, a, sp);
}

static Expr *simplify_transpose(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  Module *m = cx->m;
  Expr *x = mt->post[S_X];
  const Expr *outer = pre, *inner = pre->call.args[0];
  const Type *t = type_solved_tensor(pre->type), *tx = type_solved_tensor(mt->pre[S_X]->type);
  if (!t || !tx) return post;
  Layout os, od, is, id;
  bool o_lt = is_lt(outer) && lt_layouts(outer, &os, &od), i_lt = is_lt(inner) && lt_layouts(inner, &is, &id);
  if ((is_lt(outer) && !o_lt) || (is_lt(inner) && !i_lt)) return post;
  bool o_rc = o_lt && os.n != od.n, i_rc = i_lt && is.n != id.n;
  int64_t perm[64], inv[64];
  char buf[256];
  if (o_rc && i_rc) { /* two rank-changing layout_transforms: one layout_transform */
    if (strcmp(cattr_str(inner, "dst_layout", ""), cattr_str(outer, "src_layout", "")) != 0) return post;
    return layout_transform(m, x, cattr_str(inner, "src_layout", ""), cattr_str(outer, "dst_layout", ""), post->span);
  }
  if (o_rc) { /* a permutation, then a rank-increasing layout_transform */
    if (os.n > od.n || !perm_of(inner, os.n, perm)) return post; /* TVM mis-folds the other order */
    for (int i = 0; i < os.n; i++) inv[perm[i]] = i;
    permute_layout(&os, inv, buf, sizeof buf);
    return layout_transform(m, x, buf, cattr_str(outer, "dst_layout", ""), post->span);
  }
  if (i_rc) { /* a rank-decreasing layout_transform, then a permutation */
    if (is.n < id.n || !perm_of(outer, id.n, perm)) return post;
    permute_layout(&id, perm, buf, sizeof buf);
    return layout_transform(m, x, cattr_str(inner, "src_layout", ""), buf, post->span);
  }
  int ndim = (int)t->tensor.ndim;
  int64_t po[64], pi[64];
  if (!perm_of(outer, ndim, po) || !perm_of(inner, ndim, pi)) {
    /* same-rank layout_transforms that re-split an axis: compose them (TVM reads
     * them as an identity transpose, which changes the result) */
    if (!o_lt || !i_lt || strcmp(cattr_str(inner, "dst_layout", ""), cattr_str(outer, "src_layout", "")) != 0)
      return post;
    return layout_transform(m, x, cattr_str(inner, "src_layout", ""), cattr_str(outer, "dst_layout", ""), post->span);
  }
  for (int i = 0; i < ndim; i++) perm[i] = pi[po[i]];
  char axes[512], a[540];
  snprintf(a, sizeof a, "axes=%s", cattr_format_ints(perm, ndim, axes, sizeof axes));
  return call1(m, "transpose", x, a, post->span);
}

static Expr *simplify_noop_transpose(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)cx;
  if (is_lt(pre) && strcmp(cattr_str(pre, "src_layout", ""), cattr_str(pre, "dst_layout", "")) != 0) return post;
  const Type *t = type_solved_tensor(pre->type);
  int64_t perm[64];
  if (!t || !perm_of(pre, (int)t->tensor.ndim, perm)) return post;
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    if (perm[i] != (int64_t)i) return post;
  return mt->post[S_X];
}

/* ------------------------------------------------------------ 13-14 casts */

static Expr *simplify_same_cast(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)cx;
  const Type *a = type_solved_tensor(pre->call.args[0]->type), *r = type_solved_tensor(pre->type);
  return a && r && dtype_eq(a->tensor.dtype, r->tensor.dtype) ? mt->post[S_X] : post;
}

/* TVM's IsWidenCast: no precision is lost going from `from` to `to`. */
static bool widen_cast(DType from, DType to) {
  if (from.code == to.code && from.bits <= to.bits) return true;
  if (from.code == DT_BFLOAT || to.code == DT_BFLOAT) return false;
  return from.code < to.code && from.bits <= to.bits;
}

static Expr *simplify_consecutive_cast(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  const Type *d = type_solved_tensor(mt->pre[S_X]->type), *c1 = type_solved_tensor(mt->pre[S_CAST1]->type),
             *c2 = type_solved_tensor(pre->type);
  if (!d || !c1 || !c2 || !widen_cast(d->tensor.dtype, c1->tensor.dtype)) return post;
  char dt[32], a[64];
  snprintf(a, sizeof a, "dtype=\"%s\"", dtype_text(c2->tensor.dtype, dt));
  return call1(cx->m, "cast", mt->post[S_X], a, post->span);
}

/* ------------------------------------------------------------ 15 full + broadcast op */

static Expr *full_elementwise(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  Module *m = cx->m;
  const Type *t = type_solved_tensor(pre->type);
  if (!t) return post;
  DType dt = t->tensor.dtype;
  /* relayc does better than TVM: TVM fires on every kBroadcast operator, and
   * nn.bias_add(x, full(...)) became nn.bias_add(x, 10f), which does not
   * type-check (the bias must be a vector); only operators typed by the
   * general broadcasting relation (add's) accept the scalar */
  if (op_get(op_call_id(post))->relation != op_get(OP_ADD)->relation) return post;
  Expr *x = mt->post[S_X];
  bool is_left = post->call.args[1] == x;
  if (!same_type(pre->call.args[is_left ? 1 : 0], pre)) return post;
  /* broadcast-class operators with attributes take a vector along an axis
   * (nn.bias_add, nn.prelu): a scalar there is ill-typed, so the pass failed
   * on `nn.bias_add(%x, full(10f, shape=[3]))` (TVM rewrites it all the same) */
  if (op_get(op_call_id(post))->nattrs) return post;
  Expr *value;
  if (mt->pre[S_FULL]) {
    value = mt->post[S_V];
    /* TVM does not look at v's dtype; a fill value of another dtype than the
     * result would make the call ill-typed */
    if (value->kind != EXPR_CONST || value->constant->ndim != 0 || !dtype_eq(value->constant->dtype, dt)) return post;
  } else if (mt->pre[S_ONES]) {
    value = fold_const_scalar(m, dt, 1, post->span);
  } else if (mt->pre[S_ZEROS]) {
    value = fold_const_scalar(m, dt, 0, post->span);
  } else {
    return post;
  }
  Expr *args[2] = {is_left ? value : x, is_left ? x : value};
  return op_call_attrs(m, op_name(post), args, 2, post->call.attrs, post->span);
}

/* ------------------------------------------------------------ 16-17 constants */

static Expr *switch_add_multiply(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)pre;
  Module *m = cx->m;
  Expr *x = mt->post[S_X];
  if (x->kind == EXPR_CONST) return post;
  Expr *c = fold_eval_call(m, call2(m, "multiply", mt->post[S_C1], mt->post[S_C2], NULL, post->span));
  if (!c || c->kind != EXPR_CONST) return post;
  return call2(m, "add", call2(m, "multiply", x, mt->post[S_C2], NULL, post->span), c, NULL, post->span);
}

static Expr *adjacent_multiply_or_add(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  Module *m = cx->m;
  Expr *x = mt->post[S_X];
  if (x->kind == EXPR_CONST) return post;
  const char *op = op_name(pre);
  Expr *c = fold_eval_call(m, call2(m, op, mt->post[S_C1], mt->post[S_C2], NULL, post->span));
  if (!c || c->kind != EXPR_CONST) return post;
  return call2(m, op, x, c, NULL, post->span);
}

/* ------------------------------------------------------------ 18 QNN */

/* The one value of a constant whose elements are all equal (false if they
 * differ or it is not a constant). */
static bool uniform_const(const Expr *e, double *v) {
  if (!e || e->kind != EXPR_CONST || e->constant->dtype.lanes != 1) return false;
  const ConstTensor *c = e->constant;
  size_t es = dtype_size(c->dtype);
  if (!es || c->nbytes < es) return false;
  *v = tensor_load_f64(c->dtype, c->data);
  for (size_t off = es; off + es <= c->nbytes; off += es)
    if (tensor_load_f64(c->dtype, (const char *)c->data + off) != *v) return false;
  return true;
}

/* argmax / argmin / argsort of qnn.dequantize(x, scale, zero_point) is the
 * same operator on x when dequantizing keeps the order of x's elements: a
 * constant positive scale, one for every channel, within the range where
 * the (x - zero_point) values of int8 / uint8 data stay distinct floats,
 * and one zero point. TVM rewrites whatever the scale (a negative or
 * per-channel scale reverses or mixes the order and changes the result);
 * relayc declines there. */
static Expr *dq_arg(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)pre;
  double s, z;
  DType xt = dtype_of(mt->pre[S_X]);
  if (!((xt.code == DT_INT || xt.code == DT_UINT) && xt.bits == 8 && xt.lanes == 1)) return post;
  if (!uniform_const(mt->post[S_A], &s) || !uniform_const(mt->post[S_B], &z)) return post;
  if (!(s >= FLT_MIN * 1024.0 && s <= FLT_MAX / 1024.0)) return post;
  int32_t id = op_call_id(post);
  const char *name = id == OP_ARGMAX ? "argmax" : id == OP_ARGMIN ? "argmin" : id == OP_ARGSORT ? "argsort" : NULL;
  if (!name) return post;
  Expr *x = mt->post[S_X];
  return op_call_attrs(cx->m, name, &x, 1, post->call.attrs, post->span);
}

/* ------------------------------------------------------------ 19-20 clip and casts */

/* [lo, hi] within dt's range (mode 1) / covering it (mode 0). */
static bool clip_range(DType dt, double lo, double hi, int mode) {
  double l, h;
  if (!dtype_range(dt, &l, &h)) return false;
  return mode == 0 ? (hi >= h && lo <= l) : (hi <= h && lo >= l);
}

static Expr *clip_and_casts(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  Module *m = cx->m;
  Expr *clip_pre = mt->pre[S_CLIP];
  double lo = cattr_double(clip_pre, "a_min", 0), hi = cattr_double(clip_pre, "a_max", 0);
  const Expr *kept[64];
  int nk = 0;
  for (const Expr *c = pre; c != clip_pre; c = c->call.args[0]) {
    if (op_call_id(c) != OP_CAST || nk >= 64) return post;
    if (!clip_range(dtype_of(c), lo, hi, 1)) kept[nk++] = c;
  }
  DType last = dtype_of(nk ? kept[0] : clip_pre), want = dtype_of(pre);
  Expr *res = mt->post[S_CLIP];
  char a[64], dt[32];
  for (int i = nk; i-- > 0;) {
    snprintf(a, sizeof a, "dtype=\"%s\"", dtype_text(dtype_of(kept[i]), dt));
    res = call1(m, "cast", res, a, post->span);
  }
  if (!dtype_eq(last, want)) {
    snprintf(a, sizeof a, "dtype=\"%s\"", dtype_text(want, dt));
    res = call1(m, "cast", res, a, post->span);
  }
  return res;
}

static Expr *simplify_clip(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)cx;
  double lo = cattr_double(pre, "a_min", 0), hi = cattr_double(pre, "a_max", 0);
  /* not for floats: clip(NaN) is a_max (spec/ops.md §2), so even
   * clip(%x, a_min=-inff, a_max=inff) changes a NaN (TVM drops it anyway) */
  if (dtype_is_float(dtype_of(pre))) return post;
  return clip_range(dtype_of(pre), lo, hi, 0) ? mt->post[S_X] : post;
}

/* ------------------------------------------------------------ 21 binomials */

static bool coefficient(const DfMatch *mt, int slot, DType dt, double *v) {
  if (!mt->post[slot]) return true; /* absent: 1 */
  const Expr *c = mt->post[slot];
  if (c->kind != EXPR_CONST || !dtype_eq(c->constant->dtype, dt) || c->constant->nbytes == 0) return false;
  if (dt.code == DT_INT && dt.bits == 32) *v = *(const int32_t *)c->constant->data;
  else if (dt.code == DT_FLOAT && dt.bits == 32) *v = *(const float *)c->constant->data;
  else if (dt.code == DT_FLOAT && dt.bits == 64) *v = *(const double *)c->constant->data;
  else return false; /* TVM would take it as 1 */
  return true;
}

static Expr *simplify_binomial(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  Module *m = cx->m;
  const Type *t = type_solved_tensor(pre->type);
  if (!t) return post;
  DType dt = t->tensor.dtype;
  Expr *x = mt->post[S_X], *y = mt->post[S_Y];
  double a = 1, b = 1, c = 1;
  if (!coefficient(mt, S_A, dt, &a) || !coefficient(mt, S_B, dt, &b) || !coefficient(mt, S_CC, dt, &c)) return post;
  if (c == 1 && a > 1) {
    Expr *tx = x;
    x = y;
    y = tx;
    float ta = (float)a; /* TVM keeps the swapped coefficient in a float */
    a = c;
    c = ta;
  }
  double sub = b * b - 4 * a * c;
  if (sub < 0) return pre;
  bool same = sub < 10e-5;
  double disc = sqrt(sub), p = (b + disc) / (2 * a), q = (b - disc) / (2 * a);
  bool integral = dt.code == DT_INT || dt.code == DT_UINT;
  if (integral && (p != floor(p) || (!same && q != floor(q)) || a != floor(a))) return post; /* TVM truncates */
  Span sp = post->span;
  Expr *first = call2(m, "add", x, call2(m, "multiply", y, fold_const_scalar(m, dt, p, sp), NULL, sp), NULL, sp);
  Expr *second = same ? first
                      : call2(m, "add", x, call2(m, "multiply", y, fold_const_scalar(m, dt, q, sp), NULL, sp), NULL, sp);
  return call2(m, "multiply", fold_const_scalar(m, dt, a, sp), call2(m, "multiply", first, second, NULL, sp), NULL,
               sp);
}

/* ------------------------------------------------------------ the rewrite lists */

typedef struct Patterns {
  DfPool *pool;
  DfRewrite concretize[6], cast_like, add, rsqrt, identity, reshape, transpose, noop_transpose, same_cast,
      consecutive_cast, full_elementwise, switch_add_mul, adjacent, dq[3], clip_casts, clip, binomial;
} Patterns;

static void build_patterns(Patterns *P) {
  DfPool *p = P->pool = dfp_pool_new();
  static const char *const like_ops[6] = {"zeros_like", "ones_like", "full_like", "reshape_like", "collapse_sum_like",
                                          "broadcast_to_like"};
  static const int like_args[6] = {1, 1, 2, 2, 2, 2};
  for (int i = 0; i < 6; i++) {
    DfPat *pat = like_args[i] == 1 ? dfp_call(p, -1, like_ops[i], 1, dfp_wild(p, -1))
                                   : dfp_call(p, -1, like_ops[i], 2, dfp_wild(p, -1), dfp_wild(p, -1));
    P->concretize[i] = (DfRewrite){like_ops[i], pat, concretize_like};
  }
  P->cast_like = (DfRewrite){"ConcretizeCastLike", dfp_call(p, -1, "cast_like", 2, dfp_wild(p, -1), dfp_wild(p, -1)),
                             concretize_cast_like};
  P->add = (DfRewrite){"SimplifyAdd", dfp_call(p, -1, "add", 2, dfp_wild(p, S_X), dfp_wild(p, S_Y)), simplify_add};
  P->rsqrt = (DfRewrite){"SimplifyRSqrt",
                         dfp_call(p, -1, "divide", 2, dfp_wild(p, S_Y), dfp_call(p, -1, "sqrt", 1, dfp_wild(p, S_X))),
                         simplify_rsqrt};
  {
    DfPat *x = dfp_wild(p, S_X), *c = dfp_const(p, S_C);
    DfPat *zeros = dfp_any(p, -1, 3, dfp_call(p, -1, "zeros", 0), dfp_call(p, -1, "zeros_like", 1, dfp_wild(p, -1)), c);
    DfPat *ones = dfp_any(p, -1, 3, dfp_call(p, -1, "ones", 0), dfp_call(p, -1, "ones_like", 1, dfp_wild(p, -1)), c);
    DfPat *pat = dfp_any(p, -1, 4, dfp_call(p, -1, "add", 2, x, zeros), dfp_call(p, -1, "multiply", 2, x, ones),
                         dfp_call(p, -1, "subtract", 2, x, zeros), dfp_call(p, -1, "divide", 2, x, ones));
    P->identity = (DfRewrite){"EliminateIdentity", pat, eliminate_identity};
  }
  {
    const char *rs = "reshape|contrib_reverse_reshape";
    DfPat *pat = dfp_call(p, -1, rs, 1, dfp_call(p, -1, rs, 1, dfp_wild(p, S_X)));
    P->reshape = (DfRewrite){"SimplifyReshape", pat, simplify_reshape};
  }
  {
    const char *tr = "transpose|layout_transform";
    DfPat *pat = dfp_call(p, -1, tr, 1, dfp_call(p, -1, tr, 1, dfp_wild(p, S_X)));
    P->transpose = (DfRewrite){"SimplifyTranspose", pat, simplify_transpose};
    P->noop_transpose = (DfRewrite){"SimplifyNoOpTranspose", dfp_call(p, -1, tr, 1, dfp_wild(p, S_X)),
                                    simplify_noop_transpose};
  }
  {
    DfPat *d = dfp_wild(p, S_X);
    DfPat *pat = dfp_any(p, -1, 2, dfp_call(p, -1, "cast_like", 2, d, dfp_wild(p, -1)), dfp_call(p, -1, "cast", 1, d));
    P->same_cast = (DfRewrite){"SimplifySameCast", pat, simplify_same_cast};
    DfPat *cast1 = dfp_any(p, S_CAST1, 2, dfp_call(p, -1, "cast_like", 2, d, dfp_wild(p, -1)),
                           dfp_call(p, -1, "cast", 1, d));
    DfPat *pat2 =
        dfp_any(p, -1, 2, dfp_call(p, -1, "cast_like", 2, cast1, dfp_wild(p, -1)), dfp_call(p, -1, "cast", 1, cast1));
    P->consecutive_cast = (DfRewrite){"SimplifyConsecutiveCast", pat2, simplify_consecutive_cast};
  }
  {
    DfPat *x = dfp_wild(p, S_X), *v = dfp_const(p, S_V);
    DfPat *full = dfp_any(p, S_FULL, 2, dfp_call(p, -1, "full", 1, v), dfp_call(p, -1, "full_like", 2, dfp_wild(p, -1), v));
    DfPat *ones = dfp_any(p, S_ONES, 2, dfp_call(p, -1, "ones", 0), dfp_call(p, -1, "ones_like", 1, dfp_wild(p, -1)));
    DfPat *zeros = dfp_any(p, S_ZEROS, 2, dfp_call(p, -1, "zeros", 0), dfp_call(p, -1, "zeros_like", 1, dfp_wild(p, -1)));
    DfPat *any = dfp_any(p, -1, 3, full, ones, zeros);
    DfPat *pat = dfp_any(p, -1, 2, dfp_call_class(p, -1, OPAT_BROADCAST, 2, any, x),
                         dfp_call_class(p, -1, OPAT_BROADCAST, 2, x, any));
    P->full_elementwise = (DfRewrite){"FullElementwise", pat, full_elementwise};
  }
  {
    DfPat *x = dfp_wild(p, S_X), *c1 = dfp_const(p, S_C1), *c2 = dfp_const(p, S_C2);
    DfPat *pat = dfp_call(p, -1, "multiply", 2, dfp_call(p, -1, "add", 2, x, c1), c2);
    P->switch_add_mul = (DfRewrite){"SwitchAddMultiply", pat, switch_add_multiply};
    DfPat *pat2 = dfp_any(p, -1, 2, dfp_call(p, -1, "multiply", 2, dfp_call(p, -1, "multiply", 2, x, c1), c2),
                          dfp_call(p, -1, "add", 2, dfp_call(p, -1, "add", 2, x, c1), c2));
    P->adjacent = (DfRewrite){"SimplifyAdjacentMultiplyOrAdd", pat2, adjacent_multiply_or_add};
  }
  static const char *const dq_ops[3] = {"argmax", "argmin", "argsort"};
  for (int i = 0; i < 3; i++) {
    DfPat *dq = dfp_call(p, -1, "qnn.dequantize", 3, dfp_wild(p, S_X), dfp_wild(p, S_A), dfp_wild(p, S_B));
    P->dq[i] = (DfRewrite){dq_ops[i], dfp_call(p, -1, dq_ops[i], 1, dq), dq_arg};
  }
  {
    DfPat *clip = dfp_call(p, S_CLIP, "clip", 1, dfp_wild(p, -1));
    DfPat *cast = dfp_call(p, -1, "cast", 1, (DfPat *)NULL);
    cast->args[0] = dfp_alt(p, -1, cast, clip); /* cast(cast(...cast(clip(x)))) */
    P->clip_casts = (DfRewrite){"SimplifyClipAndConsecutiveCast", cast, clip_and_casts};
    P->clip = (DfRewrite){"SimplifyClip", dfp_call(p, -1, "clip", 1, dfp_wild(p, S_X)), simplify_clip};
  }
  {
    DfPat *x = dfp_wild(p, S_X), *y = dfp_wild(p, S_Y), *a = dfp_const(p, S_A), *b = dfp_const(p, S_B),
          *c = dfp_const(p, S_CC);
#define MUL(l, r) dfp_call(p, -1, "multiply", 2, (l), (r))
#define ADD(l, r) dfp_call(p, -1, "add", 2, (l), (r))
    DfPat *x_sq = dfp_any(p, -1, 3, MUL(a, MUL(x, x)), MUL(x, MUL(a, x)), MUL(x, x));
    DfPat *xy = dfp_any(p, -1, 4, MUL(b, MUL(x, y)), MUL(x, MUL(b, y)), MUL(y, MUL(b, x)), MUL(x, y));
    DfPat *y_sq = dfp_any(p, -1, 3, MUL(c, MUL(y, y)), MUL(y, MUL(c, y)), MUL(y, y));
    DfPat *pat = dfp_any(p, -1, 3, ADD(ADD(xy, x_sq), y_sq), ADD(ADD(xy, y_sq), x_sq), ADD(ADD(x_sq, y_sq), xy));
#undef MUL
#undef ADD
    P->binomial = (DfRewrite){"SimplifyBinomial", pat, simplify_binomial};
  }
}

/* ------------------------------------------------------------ the passes */

typedef struct Run {
  DfRewrite list[24];
  int n;
  const char *name;
} Run;

static Run *current;

static bool run_global(PassCtx *c, GlobalDef *g) {
  return dfp_rewrite_function(c->m, c->d, g->fn, current->list, current->n, NULL, current->name);
}

static bool run(PassCtx *c, bool post_alter_op) {
  Patterns P;
  build_patterns(&P);
  Run r = {.n = 0, .name = post_alter_op ? "SimplifyExprPostAlterOp" : "SimplifyExpr"};
  if (post_alter_op) {
    const DfRewrite *l[] = {&P.identity, &P.reshape, &P.same_cast, &P.consecutive_cast, &P.clip_casts, &P.clip};
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) r.list[r.n++] = *l[i];
  } else {
    for (int i = 0; i < 6; i++) r.list[r.n++] = P.concretize[i];
    const DfRewrite *l[] = {&P.cast_like, &P.add, &P.rsqrt, &P.identity, &P.reshape, &P.transpose,
                            &P.noop_transpose, &P.same_cast, &P.consecutive_cast, &P.full_elementwise,
                            &P.switch_add_mul, &P.adjacent, &P.dq[0], &P.dq[1], &P.dq[2], &P.clip_casts,
                            &P.clip, &P.binomial};
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) r.list[r.n++] = *l[i];
  }
  Run *saved = current;
  current = &r;
  bool ok = pass_for_each_function(c, run_global);
  current = saved;
  dfp_pool_free(P.pool);
  return ok;
}

bool pass_SIMPLIFY_EXPR(PassCtx *c); /* the entry points passes.def names */
bool pass_SIMPLIFY_EXPR_POST_ALTER_OP(PassCtx *c);
bool pass_SIMPLIFY_EXPR(PassCtx *c) { return run(c, false); }
bool pass_SIMPLIFY_EXPR_POST_ALTER_OP(PassCtx *c) { return run(c, true); }
