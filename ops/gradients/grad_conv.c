/* ops/gradients/grad_conv.c — rules of the convolutions (spec/gradient.md §4.5.1, §4.7
 * "convolution", §4.9).
 *
 * nn.conv2d, in canonical NCHW/OIHW terms (other layouts are converted with
 * layout_transform and the results converted back):
 *   data:   dx = conv2d_transpose(g, w) with the forward's strides, padding,
 *           dilation, groups, channels = C and the output padding that gives
 *           back exactly H × W (dilation included: TVM's rule forgets it, §4.6);
 *   weight: dw = nn.conv2d_backward_weight(g, x, ...) (§5.3).
 * nn.conv1d is the conv2d rule on the H = 1 view. nn.conv2d_transpose swaps the
 * roles: its data gradient is a plain conv2d of g, its weight gradient the
 * backward-weight operator with x playing the output gradient; nn.conv1d_transpose is
 * that rule on the H = 1 view, nn.conv3d_transpose the same exchange with the 3-D
 * convolutions of the conv3d rule (a conv3d of g for x, its weight correlation for w). The backward
 * operators are linear in each input, so their own rules (for second
 * derivatives) are convolutions again. out_dtype other than the inputs' dtype is
 * cast back. Every rule needs static shapes (output paddings, kernel sizes).
 *
 * Split layouts (issue 12): a split out_layout holds the result's channels in whole
 * blocks (3 channels in NCHW2c as 4), so the adjoint converted back is cropped to the
 * real channels before the canonical rule; TVM's depthwise weight (C, M, k...) with
 * groups = C is worked as the (C·M, 1, k...) weight in the same memory. A grouped
 * transposed convolution without `channels` has TVM's type (O/G channels, not what it
 * computes) and gets a located error. tests/grad/sweep_conv_layouts.py checks every
 * layout / groups combination.
 */
#include <string.h>

#include "ops/gradients/grad.h"
#include "ops/op_ids.h"

#define G (c->g)

/* The extents of input i (or the result, i < 0) in the order of the letters of
 * `canon`, read through `layout`: a permutation of the same letters, possibly with
 * split axes (NCHW4c: C = C·c, the lower-case axis holding the factor). The rules
 * work on the canonical layout and layout_transform in and out. */
static bool dims_as(GradCtx *c, int i, const char *layout, const char *canon, int64_t *out) {
  int64_t dims[GRAD_MAX_RANK];
  if (!gr_shape(c, i, dims)) return false;
  size_t n = strlen(canon), nl = strlen(layout);
  size_t upper = 0, axes = 0;
  char letters[GRAD_MAX_RANK + 1];
  for (size_t k = 0; k < nl; k++) { /* the axis letters, factors' digits dropped */
    char ch = layout[k];
    if (ch >= '0' && ch <= '9') continue;
    if (axes == GRAD_MAX_RANK) return gr_fail(c, "unsupported layout \"%s\"", layout);
    letters[axes++] = ch;
    if (ch >= 'A' && ch <= 'Z') upper++;
    else if (!(ch >= 'a' && ch <= 'z') || !strchr(layout, ch - 'a' + 'A')) return gr_fail(c, "unsupported layout \"%s\"", layout);
  }
  letters[axes] = 0;
  if (upper != n || axes != gr_rank(c, i)) return gr_fail(c, "unsupported layout \"%s\"", layout);
  for (size_t k = 0; k < n; k++) {
    const char *p = strchr(letters, canon[k]);
    if (!p) return gr_fail(c, "unsupported layout \"%s\"", layout);
    out[k] = dims[p - letters];
    const char *q = strchr(letters, canon[k] - 'A' + 'a');
    if (q) out[k] *= dims[q - letters];
  }
  return true;
}

static Expr *to_layout(GradCtx *c, Expr *e, const char *from, const char *to) {
  if (strcmp(from, to) == 0) return e;
  return GR_OP(c, "layout_transform", gr_fmt(c, "src_layout=\"%s\", dst_layout=\"%s\"", from, to), e);
}

/* padding attribute as [top, left, bottom, right] (n spatial axes: before..., after...) */
static bool padding4(GradCtx *c, int n, int64_t *before, int64_t *after) {
  int64_t v[8];
  int32_t k = gr_attr_ints(c, "padding", v, 8);
  for (int i = 0; i < n; i++) {
    if (k <= 0) before[i] = after[i] = 0;
    else if (k == 1) before[i] = after[i] = v[0];
    else if (k == n) before[i] = after[i] = v[i];
    else if (k == 2 * n) before[i] = v[i], after[i] = v[n + i];
    else return gr_fail(c, "padding must have 1, %d or %d values", n, 2 * n);
  }
  return true;
}

static bool pair_attr(GradCtx *c, const char *key, int n, int64_t dflt, int64_t *out) {
  int64_t v[4];
  int32_t k = gr_attr_ints(c, key, v, 4);
  for (int i = 0; i < n; i++) out[i] = k <= 0 ? dflt : k == 1 ? v[0] : v[i];
  return k <= 1 || k == n || gr_fail(c, "%s must have %d values", key, n);
}

typedef struct Conv2 {
  int64_t N, C, H, W, O, I, kh, kw, gh, gw;
  int64_t st[2], dil[2], pb[2], pa[2], groups;
} Conv2;

static const char *conv_attrs(GradCtx *c, const Conv2 *v) {
  return gr_fmt(c, "strides=[%lld, %lld], padding=[%lld, %lld, %lld, %lld], dilation=[%lld, %lld], groups=%lld",
                (long long)v->st[0], (long long)v->st[1], (long long)v->pb[0], (long long)v->pb[1], (long long)v->pa[0],
                (long long)v->pa[1], (long long)v->dil[0], (long long)v->dil[1], (long long)v->groups);
}

/* dx of a 2-D convolution in NCHW/OIHW terms: conv2d_transpose restoring H × W */
static Expr *conv_data_grad(GradCtx *c, Expr *g, Expr *w, const Conv2 *v) {
  int64_t oph = v->H - ((v->gh - 1) * v->st[0] - v->pb[0] - v->pa[0] + (v->kh - 1) * v->dil[0] + 1);
  int64_t opw = v->W - ((v->gw - 1) * v->st[1] - v->pb[1] - v->pa[1] + (v->kw - 1) * v->dil[1] + 1);
  return GR_OP(c, "nn.conv2d_transpose",
               gr_fmt(c, "channels=%lld, kernel_size=[%lld, %lld], %s, output_padding=[%lld, %lld]", (long long)v->C,
                      (long long)v->kh, (long long)v->kw, conv_attrs(c, v), (long long)oph, (long long)opw),
               g, w);
}

/* dw of a 2-D convolution: nn.conv2d_backward_weight(g, x) */
static Expr *conv_weight_grad(GradCtx *c, Expr *g, Expr *x, const Conv2 *v) {
  return GR_OP(c, "nn.conv2d_backward_weight",
               gr_fmt(c, "%s, channels=%lld, kernel_size=[%lld, %lld], data_layout=\"NCHW\", kernel_layout=\"NCHW\", out_layout=\"OIHW\"",
                      conv_attrs(c, v), (long long)v->O, (long long)v->kh, (long long)v->kw),
               g, x);
}

static Expr *g_in(GradCtx *c, uint32_t i) {
  return dtype_eq(gr_dtype(c, -1), gr_dtype(c, (int)i)) ? G : gr_cast_like(c, G, c->x[i]);
}

static Expr *back_dtype(GradCtx *c, Expr *e, uint32_t i) {
  return dtype_eq(gr_dtype(c, -1), gr_dtype(c, (int)i)) ? e : gr_cast_like(c, e, c->x[i]);
}

/* g's first `channels` channels: a split out_layout pads the result's channels up to a
 * multiple of its factor (NCHW2c holds 3 channels as 4); no weight made the padding, so its
 * adjoint is dropped */
static Expr *crop_channels(GradCtx *c, Expr *g, int64_t channels) {
  return GR_OP(c, "strided_slice", gr_fmt(c, "begin=[0], end=[%lld], axes=[1]", (long long)channels), g);
}

/* e (a 4-D weight or its gradient) reshaped to `shape` */
static Expr *reshaped(GradCtx *c, Expr *e, const int64_t *shape) {
  return GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, shape, 4)), e);
}

/* The conv2d rule on canonical operands: g (N, O', gh, gw) with O' ≥ O channels
 * (a split out_layout's padding), x, w (4-D, NCHW/OIHW); sets dx[0] and dx[1] in
 * canonical terms. TVM's depthwise weight (C, M, k...) (C = groups = O, M > 1: C·M
 * outputs) is worked as the (C·M, 1, k...) weight in the same memory. */
static void conv2d_canonical(GradCtx *c, Expr *g, int64_t gch, Expr *x, Expr *w, Conv2 v, Expr **dx, Expr **dw) {
  bool mult = v.groups > 1 && v.C == v.groups && v.O == v.groups && v.I != 1;
  int64_t wcanon[4] = {v.O, v.I, v.kh, v.kw}, wflat[4] = {v.O * v.I, 1, v.kh, v.kw};
  if (mult) {
    w = reshaped(c, w, wflat);
    v.O = wflat[0];
    v.I = 1;
  }
  if (gch != v.O) g = crop_channels(c, g, v.O);
  g = gr_let(c, g);
  *dx = conv_data_grad(c, g, w, &v);
  *dw = conv_weight_grad(c, g, x, &v);
  if (mult) *dw = reshaped(c, *dw, wcanon);
}

GRAD_RULE(NN_CONV2D) {
  const char *dl = gr_attr_str(c, "data_layout", "NCHW"), *kl = gr_attr_str(c, "kernel_layout", "OIHW");
  const char *ol = gr_attr_str(c, "out_layout", "");
  if (!*ol) ol = dl;
  int64_t xd[4], wd[4], od[4];
  if (!dims_as(c, 0, dl, "NCHW", xd) || !dims_as(c, 1, kl, "OIHW", wd) || !dims_as(c, -1, ol, "NCHW", od)) return false;
  Conv2 v = {xd[0], xd[1], xd[2], xd[3], wd[0], wd[1], wd[2], wd[3], od[2], od[3], {0}, {0}, {0}, {0}, 1};
  if (!pair_attr(c, "strides", 2, 1, v.st) || !pair_attr(c, "dilation", 2, 1, v.dil) || !padding4(c, 2, v.pb, v.pa))
    return false;
  v.groups = gr_attr_int(c, "groups", 1);
  Expr *dx, *dw;
  conv2d_canonical(c, to_layout(c, g_in(c, 0), ol, "NCHW"), od[1], to_layout(c, X0, dl, "NCHW"),
                   to_layout(c, X1, kl, "OIHW"), v, &dx, &dw);
  c->dx[0] = back_dtype(c, to_layout(c, dx, "NCHW", dl), 0);
  c->dx[1] = back_dtype(c, to_layout(c, dw, "OIHW", kl), 1);
  return true;
}

/* conv1d: the conv2d rule on the H = 1 view */
GRAD_RULE(NN_CONV1D) {
  const char *dl = gr_attr_str(c, "data_layout", "NCW"), *kl = gr_attr_str(c, "kernel_layout", "OIW");
  const char *ol = gr_attr_str(c, "out_layout", "");
  if (!*ol) ol = dl;
  int64_t xd[3], wd[3], od[3], st, dil, pb, pa;
  if (!dims_as(c, 0, dl, "NCW", xd) || !dims_as(c, 1, kl, "OIW", wd) || !dims_as(c, -1, ol, "NCW", od)) return false;
  if (!pair_attr(c, "strides", 1, 1, &st) || !pair_attr(c, "dilation", 1, 1, &dil) || !padding4(c, 1, &pb, &pa))
    return false;
  Conv2 v = {xd[0], xd[1], 1, xd[2], wd[0], wd[1], 1, wd[2], 1, od[2], {1, st}, {1, dil}, {0, pb}, {0, pa},
             gr_attr_int(c, "groups", 1)};
  const char *up = "axis=2";
  Expr *g = GR_OP(c, "expand_dims", up, to_layout(c, g_in(c, 0), ol, "NCW"));
  Expr *x = GR_OP(c, "expand_dims", up, to_layout(c, X0, dl, "NCW"));
  Expr *w = GR_OP(c, "expand_dims", up, to_layout(c, X1, kl, "OIW"));
  Expr *dx, *dw;
  conv2d_canonical(c, g, od[1], x, w, v, &dx, &dw);
  c->dx[0] = back_dtype(c, to_layout(c, GR_OP(c, "squeeze", "axis=[2]", dx), "NCW", dl), 0);
  c->dx[1] = back_dtype(c, to_layout(c, GR_OP(c, "squeeze", "axis=[2]", dw), "OIW", kl), 1);
  return true;
}

/* g (N, C, out...) of a transposed convolution whose output_padding reaches a stride or more
 * (TVM's relation allows it): its last rows get nothing from the input, so g is cut back to the
 * extent whose convolution gives exactly the input's (out − s·⌊opad/s⌋ on each such axis),
 * which the data and weight gradients both need and neither loses anything by. */
static Expr *crop_unreached(GradCtx *c, Expr *g, int nsp, const int64_t *out, const int64_t *in, const int64_t *k,
                            const int64_t *st, const int64_t *dil, const int64_t *pb, const int64_t *pa) {
  int64_t end[3];
  bool crop = false;
  for (int i = 0; i < nsp; i++) {
    int64_t opad = out[i] - ((in[i] - 1) * st[i] + (k[i] - 1) * dil[i] + 1 - pb[i] - pa[i]);
    end[i] = opad >= st[i] ? out[i] - (opad / st[i]) * st[i] : out[i];
    crop |= end[i] != out[i];
  }
  if (!crop) return g;
  const char *axes = nsp == 2 ? "[2, 3]" : "[2, 3, 4]";
  return GR_OP(c, "strided_slice", gr_fmt(c, "begin=%s, end=%s, axes=%s", nsp == 2 ? "[0, 0]" : "[0, 0, 0]",
                                          gr_ints_text(c, end, (uint32_t)nsp), axes), g);
}

/* conv2d_transpose(x (N, Ci, H, W), w (Ci, Co/G, kh, kw)) -> (N, Co, OH, OW) on canonical
 * operands (g NCHW with gch channels, x NCHW, w IOHW; v read as the forward convolution whose
 * data gradient this operator is: data g (Co), output x (Ci)): x gets conv2d(g, w) (w read as
 * OIHW with O = Ci), w gets conv2d_backward_weight(x, g), already IOHW for this operator.
 * False (a located error) for a grouped call without `channels`. */
static bool tconv2d_canonical(GradCtx *c, Expr *g, int64_t gch, Expr *x, Expr *w, const Conv2 *v, Expr **dx, Expr **dw) {
  /* the result has G·(O/G) channels when `channels` is set (the relation checks it); without
   * it TVM's type gives O/G, not what a grouped transposed convolution makes: no gradient */
  if (v->groups > 1 && gr_attr_int(c, "channels", -1) < 0)
    return gr_fail(c, "groups=%lld without channels: the result type (TVM's, %lld channels) is not the %lld "
                      "channels the grouped transposed convolution computes; set channels",
                   (long long)v->groups, (long long)v->I, (long long)(v->I * v->groups));
  if (gch != v->I * v->groups) g = crop_channels(c, g, v->I * v->groups);
  g = crop_unreached(c, g, 2, (int64_t[]){v->H, v->W}, (int64_t[]){v->gh, v->gw}, (int64_t[]){v->kh, v->kw}, v->st,
                     v->dil, v->pb, v->pa);
  g = gr_let(c, g);
  *dx = GR_OP(c, "nn.conv2d", gr_fmt(c, "%s, channels=%lld, kernel_size=[%lld, %lld]", conv_attrs(c, v),
                                     (long long)v->O, (long long)v->kh, (long long)v->kw), g, w);
  *dw = conv_weight_grad(c, x, g, v);
  return true;
}

GRAD_RULE(NN_CONV2D_TRANSPOSE) {
  const char *dl = gr_attr_str(c, "data_layout", "NCHW"), *kl = gr_attr_str(c, "kernel_layout", "IOHW");
  const char *ol = gr_attr_str(c, "out_layout", "");
  if (!*ol) ol = dl;
  int64_t xd[4], wd[4], od[4];
  if (!dims_as(c, 0, dl, "NCHW", xd) || !dims_as(c, 1, kl, "IOHW", wd) || !dims_as(c, -1, ol, "NCHW", od)) return false;
  Conv2 v = {od[0], od[1], od[2], od[3], wd[0], wd[1], wd[2], wd[3], xd[2], xd[3], {0}, {0}, {0}, {0}, 1};
  if (!pair_attr(c, "strides", 2, 1, v.st) || !pair_attr(c, "dilation", 2, 1, v.dil) || !padding4(c, 2, v.pb, v.pa))
    return false;
  v.groups = gr_attr_int(c, "groups", 1);
  Expr *dx, *dw;
  if (!tconv2d_canonical(c, to_layout(c, g_in(c, 0), ol, "NCHW"), od[1], to_layout(c, X0, dl, "NCHW"),
                         to_layout(c, X1, kl, "IOHW"), &v, &dx, &dw))
    return false;
  c->dx[0] = back_dtype(c, to_layout(c, dx, "NCHW", dl), 0);
  c->dx[1] = back_dtype(c, to_layout(c, dw, "IOHW", kl), 1);
  return true;
}

/* conv1d_transpose: the conv2d_transpose rule on the H = 1 view */
GRAD_RULE(NN_CONV1D_TRANSPOSE) {
  const char *dl = gr_attr_str(c, "data_layout", "NCW"), *kl = gr_attr_str(c, "kernel_layout", "IOW");
  const char *ol = gr_attr_str(c, "out_layout", "");
  if (!*ol) ol = dl;
  int64_t xd[3], wd[3], od[3], st, dil, pb, pa;
  if (!dims_as(c, 0, dl, "NCW", xd) || !dims_as(c, 1, kl, "IOW", wd) || !dims_as(c, -1, ol, "NCW", od)) return false;
  if (!pair_attr(c, "strides", 1, 1, &st) || !pair_attr(c, "dilation", 1, 1, &dil) || !padding4(c, 1, &pb, &pa))
    return false;
  Conv2 v = {od[0], od[1], 1, od[2], wd[0], wd[1], 1, wd[2], 1, xd[2], {1, st}, {1, dil}, {0, pb}, {0, pa},
             gr_attr_int(c, "groups", 1)};
  const char *up = "axis=2";
  Expr *g = GR_OP(c, "expand_dims", up, to_layout(c, g_in(c, 0), ol, "NCW"));
  Expr *x = GR_OP(c, "expand_dims", up, to_layout(c, X0, dl, "NCW"));
  Expr *w = GR_OP(c, "expand_dims", up, to_layout(c, X1, kl, "IOW"));
  Expr *dx, *dw;
  if (!tconv2d_canonical(c, g, od[1], x, w, &v, &dx, &dw)) return false;
  c->dx[0] = back_dtype(c, to_layout(c, GR_OP(c, "squeeze", "axis=[2]", dx), "NCW", dl), 0);
  c->dx[1] = back_dtype(c, to_layout(c, GR_OP(c, "squeeze", "axis=[2]", dw), "IOW", kl), 1);
  return true;
}

/* conv2d_backward_weight(dy, x) = w̄ is bilinear in (dy, x): with ḡ the adjoint of w̄ (read
 * as a weight), dy gets conv2d(x, ḡ) and x gets conv2d_transpose(dy, ḡ). */
GRAD_RULE(NN_CONV2D_BACKWARD_WEIGHT) {
  const char *gl = gr_attr_str(c, "data_layout", "NCHW"), *dl = gr_attr_str(c, "kernel_layout", "NCHW");
  const char *wl = gr_attr_str(c, "out_layout", "");
  if (!strcmp(dl, "OIHW")) dl = "NCHW";
  if (!*wl) wl = "OIHW";
  int64_t gd[4], xd[4], wd[4];
  if (!dims_as(c, 0, gl, "NCHW", gd) || !dims_as(c, 1, dl, "NCHW", xd) || !dims_as(c, -1, wl, "OIHW", wd)) return false;
  Conv2 v = {xd[0], xd[1], xd[2], xd[3], wd[0], wd[1], wd[2], wd[3], gd[2], gd[3], {0}, {0}, {0}, {0}, 1};
  if (!pair_attr(c, "strides", 2, 1, v.st) || !pair_attr(c, "dilation", 2, 1, v.dil) || !padding4(c, 2, v.pb, v.pa))
    return false;
  v.groups = gr_attr_int(c, "groups", 1);
  Expr *wbar = gr_let(c, to_layout(c, G, wl, "OIHW"));
  Expr *dy = to_layout(c, X0, gl, "NCHW"), *x = to_layout(c, X1, dl, "NCHW");
  Expr *ddy = GR_OP(c, "nn.conv2d", gr_fmt(c, "%s, channels=%lld, kernel_size=[%lld, %lld]", conv_attrs(c, &v),
                                           (long long)v.O, (long long)v.kh, (long long)v.kw), x, wbar);
  c->dx[0] = to_layout(c, ddy, "NCHW", gl);
  c->dx[1] = to_layout(c, conv_data_grad(c, dy, wbar, &v), "NCHW", dl);
  return true;
}

/* ---- nn.conv3d and nn.conv3d_transpose, with 3-D convolutions ----------------------------- */

/* The weight gradient of conv3d(x, w) (NCDHW/OIDHW) given the result's adjoint g (extents
 * od): per group, conv3d(xᵀ, gᵀ) with strides and dilation exchanged, cropped to the kernel
 * (wd: O, I/NG, k...), transposed back and the groups concatenated: (O, I/NG, k...). */
static Expr *conv3d_weight_corr(GradCtx *c, Expr *x, Expr *g, const int64_t *od, const int64_t *wd, const int64_t *st,
                                const int64_t *dil, const int64_t *pb, const int64_t *pa, int64_t NG) {
  const char *corr = gr_fmt(c,
                            "strides=[%lld, %lld, %lld], padding=[%lld, %lld, %lld, %lld, %lld, %lld], "
                            "dilation=[%lld, %lld, %lld], channels=%lld, kernel_size=[%lld, %lld, %lld]",
                            (long long)dil[0], (long long)dil[1], (long long)dil[2], (long long)pb[0], (long long)pb[1],
                            (long long)pb[2], (long long)pa[0], (long long)pa[1], (long long)pa[2], (long long)st[0],
                            (long long)st[1], (long long)st[2], (long long)(wd[0] / NG), (long long)od[2], (long long)od[3],
                            (long long)od[4]);
  const char *crop = gr_fmt(c, "begin=[0, 0, 0], end=[%lld, %lld, %lld], axes=[2, 3, 4]", (long long)wd[2],
                            (long long)wd[3], (long long)wd[4]);
  Expr *xs = NG > 1 ? gr_let(c, GR_OP(c, "split", gr_fmt(c, "indices_or_sections=%lld, axis=1", (long long)NG), x)) : x;
  Expr *gsp = NG > 1 ? gr_let(c, GR_OP(c, "split", gr_fmt(c, "indices_or_sections=%lld, axis=1", (long long)NG), g)) : g;
  Expr **parts = arena_alloc(c->m->arena, (size_t)NG * sizeof *parts);
  for (int64_t k = 0; k < NG; k++) {
    Expr *xk = NG > 1 ? gr_proj(c, xs, (uint32_t)k) : x, *gk = NG > 1 ? gr_proj(c, gsp, (uint32_t)k) : g;
    Expr *xt = GR_OP(c, "transpose", "axes=[1, 0, 2, 3, 4]", xk);  /* (C/NG, N, D, H, W) */
    Expr *gt = GR_OP(c, "transpose", "axes=[1, 0, 2, 3, 4]", gk);  /* (O/NG, N, gd, gh, gw) */
    Expr *r = GR_OP(c, "strided_slice", crop, GR_OP(c, "nn.conv3d", corr, xt, gt)); /* (C/NG, O/NG, k...) */
    parts[k] = GR_OP(c, "transpose", "axes=[1, 0, 2, 3, 4]", r);
  }
  return NG > 1 ? GR_OP(c, "concatenate", "axis=0", gr_tuple(c, parts, (uint32_t)NG)) : parts[0];
}

/* the strides, dilation (one value or three) and padding of a 3-D convolution */
static bool conv3_attrs(GradCtx *c, int64_t *st, int64_t *dil, int64_t *pb, int64_t *pa) {
  int64_t v[6];
  int32_t ks = gr_attr_ints(c, "strides", v, 6);
  for (int i = 0; i < 3; i++) st[i] = ks <= 0 ? 1 : ks == 1 ? v[0] : v[i];
  ks = gr_attr_ints(c, "dilation", v, 6);
  for (int i = 0; i < 3; i++) dil[i] = ks <= 0 ? 1 : ks == 1 ? v[0] : v[i];
  return padding4(c, 3, pb, pa);
}

/* conv3d (NCDHW/OIDHW terms): dx is a stride-1 convolution of g dilated by the strides and
 * padded by (extent − 1 − pad), with the weight flipped and its I/O swapped per group; dw is
 * the correlation of x with g (batch and channels swapped, strides and dilation exchanged),
 * cropped to the kernel, one convolution per group. */
GRAD_RULE(NN_CONV3D) {
  const char *dl = gr_attr_str(c, "data_layout", "NCDHW"), *kl = gr_attr_str(c, "kernel_layout", "OIDHW");
  const char *ol = gr_attr_str(c, "out_layout", "");
  if (!*ol) ol = dl;
  int64_t xd[5], wd[5], od[5], st[3], dil[3], pb[3], pa[3];
  if (!dims_as(c, 0, dl, "NCDHW", xd) || !dims_as(c, 1, kl, "OIDHW", wd) || !dims_as(c, -1, ol, "NCDHW", od)) return false;
  if (!conv3_attrs(c, st, dil, pb, pa)) return false;
  int64_t NG = gr_attr_int(c, "groups", 1), C = xd[1], O = wd[0], Ig = wd[1];
  if (NG < 1 || C % NG || O % NG) return gr_fail(c, "groups must divide the channels");
  if (!gr_pieces(c, NG, "weight convolutions (one per group)")) return false;
  Expr *g = gr_let(c, to_layout(c, g_in(c, 0), ol, "NCDHW"));
  Expr *x = gr_let(c, to_layout(c, X0, dl, "NCDHW")), *w = to_layout(c, X1, kl, "OIDHW");
  /* data: conv3d(pad(dilate(g)), flip(swap(w))) */
  int64_t gs[5] = {od[0], od[1], od[2], od[3], od[4]};
  Expr *gd = g;
  for (uint32_t a = 2; a < 5; a++) gd = gr_dilate(c, gd, a, 5, gs, st[a - 2]);
  int64_t pads[5][2] = {{0}};
  for (int i = 0; i < 3; i++) {
    int64_t dk = (wd[2 + i] - 1) * dil[i] + 1;
    pads[2 + i][0] = dk - 1 - pb[i];
    pads[2 + i][1] = xd[2 + i] - gs[2 + i] + pb[i];
  }
  gd = GR_OP(c, "nn.pad", gr_pad_width(c, 5, pads), gd, gr_scalar(c, 0, 0));
  int64_t grouped[6] = {NG, O / NG, Ig, wd[2], wd[3], wd[4]}, swapped[5] = {C, O / NG, wd[2], wd[3], wd[4]};
  Expr *wt = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, grouped, 6)), w);
  wt = GR_OP(c, "transpose", "axes=[0, 2, 1, 3, 4, 5]", wt);
  wt = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, swapped, 5)), wt);
  for (int a = 2; a < 5; a++) wt = GR_OP(c, "reverse", gr_fmt(c, "axis=%d", a), wt);
  Expr *dx = GR_OP(c, "nn.conv3d",
                   gr_fmt(c, "dilation=[%lld, %lld, %lld], groups=%lld, channels=%lld, kernel_size=[%lld, %lld, %lld]",
                          (long long)dil[0], (long long)dil[1], (long long)dil[2], (long long)NG, (long long)C,
                          (long long)wd[2], (long long)wd[3], (long long)wd[4]),
                   gd, wt);
  c->dx[0] = back_dtype(c, to_layout(c, dx, "NCDHW", dl), 0);
  Expr *dw = conv3d_weight_corr(c, x, g, od, wd, st, dil, pb, pa, NG);
  c->dx[1] = back_dtype(c, to_layout(c, dw, "OIDHW", kl), 1);
  return true;
}

/* conv3d_transpose(x (N, Ci, D, H, W), w (Ci, Co/G, k...)) -> (N, Co, OD, OH, OW) is the data
 * gradient of conv3d(·, w) (w read as OIDHW with O = Ci): x gets conv3d(g, w) with the
 * forward's strides, padding, dilation and groups; w gets that convolution's weight gradient
 * with g as its data and x as its result's adjoint, (Ci, Co/G, k...), already IODHW. */
GRAD_RULE(NN_CONV3D_TRANSPOSE) {
  const char *dl = gr_attr_str(c, "data_layout", "NCDHW"), *kl = gr_attr_str(c, "kernel_layout", "IODHW");
  const char *ol = gr_attr_str(c, "out_layout", "");
  if (!*ol) ol = dl;
  int64_t xd[5], wd[5], od[5], st[3], dil[3], pb[3], pa[3];
  if (!dims_as(c, 0, dl, "NCDHW", xd) || !dims_as(c, 1, kl, "IODHW", wd) || !dims_as(c, -1, ol, "NCDHW", od)) return false;
  if (!conv3_attrs(c, st, dil, pb, pa)) return false;
  int64_t NG = gr_attr_int(c, "groups", 1), Co = wd[1] * NG;
  if (NG < 1 || wd[0] % NG) return gr_fail(c, "groups must divide the channels");
  if (NG > 1 && gr_attr_int(c, "channels", -1) < 0)
    return gr_fail(c, "groups=%lld without channels: the result type (TVM's, %lld channels) is not the %lld "
                      "channels the grouped transposed convolution computes; set channels",
                   (long long)NG, (long long)wd[1], (long long)Co);
  Expr *g = to_layout(c, g_in(c, 0), ol, "NCDHW");
  if (od[1] != Co) g = crop_channels(c, g, Co);
  g = gr_let(c, crop_unreached(c, g, 3, od + 2, xd + 2, wd + 2, st, dil, pb, pa));
  Expr *x = to_layout(c, X0, dl, "NCDHW"), *w = to_layout(c, X1, kl, "IODHW");
  Expr *dx = GR_OP(c, "nn.conv3d",
                   gr_fmt(c,
                          "strides=[%lld, %lld, %lld], padding=[%lld, %lld, %lld, %lld, %lld, %lld], "
                          "dilation=[%lld, %lld, %lld], groups=%lld, channels=%lld, kernel_size=[%lld, %lld, %lld]",
                          (long long)st[0], (long long)st[1], (long long)st[2], (long long)pb[0], (long long)pb[1],
                          (long long)pb[2], (long long)pa[0], (long long)pa[1], (long long)pa[2], (long long)dil[0],
                          (long long)dil[1], (long long)dil[2], (long long)NG, (long long)wd[0], (long long)wd[2],
                          (long long)wd[3], (long long)wd[4]),
                   g, w);
  c->dx[0] = back_dtype(c, to_layout(c, dx, "NCDHW", dl), 0);
  Expr *dw = conv3d_weight_corr(c, g, x, xd, wd, st, dil, pb, pa, NG);
  c->dx[1] = back_dtype(c, to_layout(c, dw, "IODHW", kl), 1);
  return true;
}

/* ---- relayc's fused convolutions (transform/conv_epilogue.c) --------------------------
 * relayc.conv2d_bias(x, w, b) = conv2d(x, w) + b per output channel, conv2d_add(x, w, r) =
 * conv2d(x, w) + r, conv2d_bias_add(x, w, b, r) both, each optionally through a ReLU
 * (relu=True; relayc.conv2d_relu always). The ReLU's mask needs the pre-activation z,
 * recomputed by the same fused call without the ReLU (z = 0 passes g, as nn.relu's rule
 * does; the result alone cannot tell z = 0 from z < 0). Then the conv2d rule on the
 * masked adjoint gives x and w, the bias gets it summed per channel, the residual gets it
 * as it is. */
static bool fused_conv(GradCtx *c, int bias, int res, bool relu) {
  Expr *g = G;
  if (relu) {
    Expr *z = c->op == OP_RELAYC_CONV2D_RELU ? gr_op_like(c, "nn.conv2d", NULL, (Expr *[]){X0, X1}, 2)
                                             : gr_op_like(c, op_get(c->op)->name, "relu=False", (Expr **)c->x, c->n);
    g = gr_where(c, GR_OP(c, "less", NULL, gr_let(c, z), gr_scalar(c, 0, -1)), gr_scalar(c, 0, -1), G);
  }
  g = gr_let(c, g);
  Expr *dx[2] = {NULL, NULL};
  GradCtx sub = *c;
  sub.op = OP_NN_CONV2D;
  sub.n = 2;
  sub.g = g;
  sub.dx = dx;
  if (!grad_NN_CONV2D(&sub)) return false;
  c->dx[0] = dx[0];
  c->dx[1] = dx[1];
  if (bias >= 0) c->dx[bias] = GR_OP(c, "sum", "axis=[1], exclude=True", g);
  if (res >= 0) c->dx[res] = g;
  return true;
}
GRAD_RULE(RELAYC_CONV2D_BIAS) { return fused_conv(c, 2, -1, gr_attr_bool(c, "relu", false)); }
GRAD_RULE(RELAYC_CONV2D_ADD) { return fused_conv(c, -1, 2, gr_attr_bool(c, "relu", false)); }
GRAD_RULE(RELAYC_CONV2D_BIAS_ADD) { return fused_conv(c, 2, 3, gr_attr_bool(c, "relu", false)); }
GRAD_RULE(RELAYC_CONV2D_RELU) { return fused_conv(c, -1, -1, true); }
