/* transform/fold_explicit_padding.c — FoldExplicitPadding (spec/passes.md
 * §4.9): an explicit nn.pad in front of a convolution or a pool becomes the
 * operator's own padding, through the pattern rewriter (transform/pattern.h;
 * one rewrite, TVM's rounds and limit).
 *
 * conv(nn.pad(x, v, pad_width=P, pad_mode=M), w) for nn.conv1d/2d/3d and
 * pool(nn.pad(x, v, ...)) for nn.max_pool1d/2d/3d, nn.avg_pool1d/2d/3d:
 *  - M = "constant", v a constant; P non-zero only on the spatial axes (D, H,
 *    W of the operator's data_layout / layout, which must name every axis);
 *  - the new padding = [befores of the spatial axes in layout order...,
 *    afters...] added to the operator's padding, normalised first to that
 *    length (a 1-element / per-axis padding is spread like TVM's Python API
 *    does; TVM itself asserts there);
 *  - conv: v = 0; avg_pool: v = 0, and with count_include_pad=False only when
 *    the pool's own padding is all zero (count_include_pad then becomes
 *    True); max_pool: v = the dtype's lowest finite value (-3.4028235e38 for
 *    float32, 0 for uint8; -inf does not count).
 * Other attributes are kept. (TVM also folds into qnn.conv2d when v equals the
 * input zero point; relayc has no QNN operators.)
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/attrs.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "transform/callattr.h"
#include "transform/dagscan.h"
#include "transform/fold_constant.h"
#include "transform/pass.h"
#include "transform/pattern.h"

enum { S_X, S_PAD, S_W };

/* The lowest finite value of dt (TVM's min_value); false for dtypes without one. */
static bool lowest(DType dt, long double *v) {
  if (dt.lanes != 1) return false;
  if (dt.code == DT_INT && dt.bits >= 8 && dt.bits <= 64) *v = -ldexpl(1, dt.bits - 1);
  else if (dt.code == DT_UINT && dt.bits >= 1 && dt.bits <= 64) *v = 0;
  else if (dt.code == DT_FLOAT && dt.bits == 16) *v = -65504.0L;
  else if (dt.code == DT_FLOAT && dt.bits == 32) *v = -(long double)FLT_MAX;
  else if (dt.code == DT_FLOAT && dt.bits == 64) *v = -(long double)DBL_MAX;
  else return false;
  return true;
}

/* The operator's padding spread to 2 * nsp entries (before..., after...). */
static bool normalized_padding(const Expr *op, int nsp, int64_t *out) {
  int64_t p[16];
  int n = cattr_ints(op, "padding", p, 16);
  if (n < 0 || n > 16) return false;
  if (n == 2 * nsp) {
    memcpy(out, p, (size_t)n * sizeof *p);
  } else if (n == 1) {
    for (int i = 0; i < 2 * nsp; i++) out[i] = p[0];
  } else if (n == nsp) {
    for (int i = 0; i < nsp; i++) out[i] = out[i + nsp] = p[i];
  } else {
    return false;
  }
  return true;
}

/* The pad's widths on the spatial axes of `layout` (before..., after...);
 * false when the layout does not name each padded axis or a non-spatial axis
 * is padded. */
static int spatial_padding(const Expr *pad, const char *layout, int64_t *out) {
  const AttrValue *pw = attrs_get(pad->call.attrs, "pad_width");
  if (!pw || pw->kind != AV_ARRAY || strlen(layout) != pw->arr.n || pw->arr.n > 8) return -1;
  int64_t w[8][2];
  for (uint32_t i = 0; i < pw->arr.n; i++) {
    const AttrValue *row = pw->arr.items[i];
    if (row->kind != AV_ARRAY || row->arr.n != 2) return -1;
    for (int j = 0; j < 2; j++) {
      if (row->arr.items[j]->kind != AV_INT) return -1;
      w[i][j] = row->arr.items[j]->i.value;
    }
  }
  int nsp = 0;
  for (uint32_t i = 0; i < pw->arr.n; i++) {
    bool spatial = layout[i] == 'D' || layout[i] == 'H' || layout[i] == 'W';
    if (spatial) nsp++;
    else if (w[i][0] != 0 || w[i][1] != 0) return -1;
  }
  int k = 0;
  for (int j = 0; j < 2; j++)
    for (uint32_t i = 0; i < pw->arr.n; i++)
      if (layout[i] == 'D' || layout[i] == 'H' || layout[i] == 'W') out[k++] = w[i][j];
  return nsp;
}

/* The operator's attributes with the pad folded into its padding, or NULL. */
static Attrs *folded_attrs(Module *m, const Expr *op, const Expr *pad, const char *layout) {
  int64_t add[16], old[16];
  int nsp = spatial_padding(pad, layout, add);
  if (nsp <= 0 || !normalized_padding(op, nsp, old)) return NULL;
  for (int i = 0; i < 2 * nsp; i++) old[i] += add[i];
  return attrs_with(m, op->call.attrs, "padding", attr_int_array(m, old, (uint32_t)(2 * nsp)));
}

static Expr *fold_pad(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt) {
  (void)pre;
  Module *m = cx->m;
  const Expr *pad = mt->post[S_PAD];
  const Expr *pv = pad->call.args[1];
  if (strcmp(cattr_str(pad, "pad_mode", "constant"), "constant") != 0 || pv->kind != EXPR_CONST) return post;
  long double v;
  if (!fold_const_element0(pv->constant, &v)) return post;
  int32_t id = op_call_id(post);
  const char *name = op_get(id)->name;
  Attrs *a = NULL;
  switch (id) {
  case OP_NN_CONV1D:
  case OP_NN_CONV2D:
  case OP_NN_CONV3D: {
    if (v != 0) return post;
    a = folded_attrs(m, post, pad, cattr_str(post, "data_layout", ""));
    if (!a) return post;
    Expr *args[2] = {mt->post[S_X], mt->post[S_W]};
    return op_call_attrs(m, name, args, 2, a, post->span);
  }
  case OP_NN_AVG_POOL1D:
  case OP_NN_AVG_POOL2D:
  case OP_NN_AVG_POOL3D: {
    if (v != 0) return post;
    bool include = cattr_bool(post, "count_include_pad", false);
    if (!include) { /* the divisor ignores padding: only fold into an unpadded pool */
      int64_t p[16];
      int n = cattr_ints(post, "padding", p, 16);
      for (int i = 0; i < n && i < 16; i++)
        if (p[i] != 0) return post;
    }
    a = folded_attrs(m, post, pad, cattr_str(post, "layout", ""));
    if (a && !include) a = attrs_with(m, a, "count_include_pad", attr_bool(m, true));
    break;
  }
  case OP_NN_MAX_POOL1D:
  case OP_NN_MAX_POOL2D:
  case OP_NN_MAX_POOL3D: {
    long double lo;
    if (!lowest(pv->constant->dtype, &lo) || v != lo) return post;
    a = folded_attrs(m, post, pad, cattr_str(post, "layout", ""));
    break;
  }
  default: return post; /* matched but never folded (none in relayc) */
  }
  if (!a) return post;
  Expr *x = mt->post[S_X];
  return op_call_attrs(m, name, &x, 1, a, post->span);
}

typedef struct Padding {
  DfPool *pool;
  DfRewrite rw;
} Padding;

static Padding *current;

static bool pad_global(PassCtx *c, GlobalDef *g) {
  static bool ids[OP_BUILTIN_COUNT];
  ids[OP_NN_PAD] = true;
  if (!dag_calls_any(g->fn->body, ids, OP_BUILTIN_COUNT)) return true; /* no pad to fold */
  return dfp_rewrite_function(c->m, c->d, g->fn, &current->rw, 1, NULL, "FoldExplicitPadding");
}

bool pass_FOLD_EXPLICIT_PADDING(PassCtx *c); /* the entry point passes.def names */
bool pass_FOLD_EXPLICIT_PADDING(PassCtx *c) {
  Padding P;
  DfPool *p = P.pool = dfp_pool_new();
  DfPat *pad = dfp_call(p, S_PAD, "nn.pad", 2, dfp_wild(p, S_X), dfp_wild(p, -1));
  DfPat *w = dfp_wild(p, S_W);
  DfPat *conv = dfp_call(p, -1, "nn.conv1d|nn.conv2d|nn.conv3d|nn.contrib_conv2d_NCHWc", 2, pad, w);
  DfPat *qconv = dfp_call(p, -1, "qnn.conv2d", 6, pad, w, dfp_wild(p, -1), dfp_wild(p, -1), dfp_wild(p, -1),
                          dfp_wild(p, -1));
  DfPat *pool = dfp_call(p, -1, "nn.max_pool1d|nn.max_pool2d|nn.max_pool3d|nn.avg_pool1d|nn.avg_pool2d|nn.avg_pool3d",
                         1, pad);
  P.rw = (DfRewrite){"SimplifyExplicitPad", dfp_any(p, -1, 3, conv, qconv, pool), fold_pad};
  Padding *saved = current;
  current = &P;
  bool ok = pass_for_each_function(c, pad_global);
  current = saved;
  dfp_pool_free(p);
  return ok;
}
