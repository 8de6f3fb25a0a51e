/* ops/gradients/grad_pad.c — rules of nn.pad and nn.mirror_pad (spec/gradient.md §4.7
 * "padding, resizing, sorting").
 *
 * Constant padding: the input's adjoint is the interior of g, i.e. g padded by the
 * negated widths (a negative width crops), which also covers cropping pads; the pad
 * value gets the sum of everything else. Edge, reflect and symmetric padding copy
 * elements of the input: each padded position adds its adjoint to the element it
 * copies. Padding every axis is the composition of one-axis paddings, so the adjoint
 * is built one axis at a time: the interior slice, plus the two margins summed (edge)
 * or reversed and shifted into place (reflect excludes the border, symmetric includes
 * it). Widths beyond one reflection (reflect: n − 1, symmetric: n) or negative
 * (cropping) take the general route on that axis: the transposed selection matrix of
 * the forward's periodic source map, one nn.dense.
 */
#include <string.h>

#include "ops/gradients/grad.h"

#define G (c->g)

/* The pad_width attribute as pairs; false (reported) if malformed. */
static bool read_widths(GradCtx *c, uint32_t rank, int64_t (*w)[2]) {
  const AttrValue *v = gr_attr(c, "pad_width");
  if (!v || v->kind != AV_ARRAY || v->arr.n != rank) return gr_fail(c, "pad_width must have one pair per axis");
  for (uint32_t i = 0; i < rank; i++) {
    const AttrValue *p = v->arr.items[i];
    if (p->kind != AV_ARRAY || p->arr.n != 2 || p->arr.items[0]->kind != AV_INT || p->arr.items[1]->kind != AV_INT)
      return gr_fail(c, "pad_width must have one pair per axis");
    w[i][0] = p->arr.items[0]->i.value;
    w[i][1] = p->arr.items[1]->i.value;
  }
  return true;
}

/* [lo, hi) of `v` along `axis` */
static Expr *slice(GradCtx *c, Expr *v, uint32_t axis, int64_t lo, int64_t hi) {
  return GR_OP(c, "strided_slice",
               gr_fmt(c, "begin=[%lld], end=[%lld], strides=[1], axes=[%u]", (long long)lo, (long long)hi, axis), v);
}

/* v padded with zeros by [before, after] along `axis` only */
static Expr *pad1(GradCtx *c, Expr *v, uint32_t axis, uint32_t rank, int64_t before, int64_t after) {
  int64_t w[GRAD_MAX_RANK][2];
  memset(w, 0, sizeof w);
  w[axis][0] = before;
  w[axis][1] = after;
  return GR_OP(c, "nn.pad", gr_pad_width(c, rank, w), v, gr_scalar(c, 0, -1));
}

typedef enum { M_EDGE, M_REFLECT, M_SYMMETRIC } CopyMode;

/* The padded position i's source in [0, n) (spec/ops.md §11: edge clamps, reflect and
 * symmetric reflect periodically, reflect without repeating the border). */
static int64_t copy_src(int64_t i, int64_t n, CopyMode m) {
  if (i >= 0 && i < n) return i;
  if (m == M_EDGE) return i < 0 ? 0 : n - 1;
  if (m == M_REFLECT) {
    if (n == 1) return 0;
    int64_t p = 2 * (n - 1), r = ((i % p) + p) % p;
    return r < n ? r : p - r;
  }
  int64_t p = 2 * n, r = ((i % p) + p) % p;
  return r < n ? r : p - 1 - r;
}

/* One axis of any widths (negative ones crop, wide ones reflect again and again): padded
 * position j copies x[src(j − a)], so the adjoint is g times the transposed (n + a + b, n)
 * selection matrix along the axis: one nn.dense against a constant. */
/* NULL after reporting an error when the matrix is too large (gr_table). */
static Expr *select_adjoint(GradCtx *c, Expr *g, uint32_t ax, uint32_t rank, int64_t n, int64_t a, int64_t b, CopyMode m) {
  int64_t out = n + a + b, shape[2] = {n, out};
  DType dt = gr_dtype(c, 0);
  bool f64 = dt.code == DT_FLOAT && dt.bits == 64;
  void *w = gr_table(c, n, out, f64 ? 8 : 4);
  if (!w) return NULL;
  for (int64_t j = 0; j < out; j++) {
    int64_t p = copy_src(j - a, n, m);
    if (f64) ((double *)w)[p * out + j] += 1;
    else ((float *)w)[p * out + j] += 1;
  }
  Expr *W = gr_tensor_const(c, f64 ? DT_F64 : DT_F32, 2, shape, w);
  if (!f64 && !(dt.code == DT_FLOAT && dt.bits == 32)) W = gr_cast_like(c, W, X0);
  int64_t perm[GRAD_MAX_RANK], inv[GRAD_MAX_RANK];
  uint32_t k = 0;
  for (uint32_t i = 0; i < rank; i++)
    if (i != ax) perm[k++] = i;
  perm[k] = ax;
  for (uint32_t i = 0; i < rank; i++) inv[perm[i]] = i;
  bool last = ax + 1 == rank;
  if (!last) g = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, perm, rank)), g);
  g = GR_OP(c, "nn.dense", gr_fmt(c, "units=%lld", (long long)n), g, W);
  if (!last) g = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, inv, rank)), g);
  return g;
}

/* The adjoint of copying-mode padding, one axis at a time. */
static bool copy_pad_grad(GradCtx *c, CopyMode mode) {
  int64_t dims[GRAD_MAX_RANK], w[GRAD_MAX_RANK][2];
  if (!gr_shape(c, 0, dims)) return false;
  uint32_t rank = gr_rank(c, 0);
  if (!read_widths(c, rank, w)) return false;
  Expr *g = G;
  for (uint32_t ax = 0; ax < rank; ax++) {
    int64_t a = w[ax][0], b = w[ax][1], n = dims[ax];
    if (a == 0 && b == 0) continue;
    int64_t limit = mode == M_REFLECT ? n - 1 : mode == M_SYMMETRIC ? n : INT64_MAX;
    if (a < 0 || b < 0 || a > limit || b > limit) { /* cropping, or more than one reflection */
      Expr *s = select_adjoint(c, g, ax, rank, n, a, b, mode);
      if (!s) return false;
      g = gr_let(c, s);
      continue;
    }
    g = gr_let(c, g);
    Expr *d = slice(c, g, ax, a, a + n);
    if (a > 0) {
      Expr *left = slice(c, g, ax, 0, a);
      if (mode == M_EDGE)
        d = gr_add(c, d, pad1(c, GR_OP(c, "sum", gr_fmt(c, "axis=[%u], keepdims=True", ax), left), ax, rank, 0, n - 1));
      else {
        Expr *r = GR_OP(c, "reverse", gr_fmt(c, "axis=%u", ax), left);
        d = gr_add(c, d, mode == M_REFLECT ? pad1(c, r, ax, rank, 1, n - 1 - a) : pad1(c, r, ax, rank, 0, n - a));
      }
    }
    if (b > 0) {
      Expr *right = slice(c, g, ax, a + n, a + n + b);
      if (mode == M_EDGE)
        d = gr_add(c, d, pad1(c, GR_OP(c, "sum", gr_fmt(c, "axis=[%u], keepdims=True", ax), right), ax, rank, n - 1, 0));
      else {
        Expr *r = GR_OP(c, "reverse", gr_fmt(c, "axis=%u", ax), right);
        d = gr_add(c, d, mode == M_REFLECT ? pad1(c, r, ax, rank, n - 1 - b, 1) : pad1(c, r, ax, rank, n - b, 0));
      }
    }
    g = d;
  }
  c->dx[0] = g;
  return true;
}

GRAD_RULE(NN_PAD) {
  const char *mode = gr_attr_str(c, "pad_mode", "constant");
  if (strcmp(mode, "edge") == 0) return copy_pad_grad(c, M_EDGE);
  if (strcmp(mode, "reflect") == 0) return copy_pad_grad(c, M_REFLECT);
  int64_t w[GRAD_MAX_RANK][2];
  uint32_t rank = gr_rank(c, 0);
  if (!read_widths(c, rank, w)) return false;
  for (uint32_t i = 0; i < rank; i++) w[i][0] = -w[i][0], w[i][1] = -w[i][1]; /* the padding cut off again */
  Expr *inner = gr_let(c, GR_OP(c, "nn.pad", gr_pad_width(c, rank, w), G, gr_scalar(c, 0, -1)));
  c->dx[0] = inner;
  Expr *all = gr_sum(c, G, NULL, 0, false), *kept = gr_sum(c, inner, NULL, 0, false);
  c->dx[1] = gr_cast_like(c, gr_sub(c, all, kept), X1);
  return true;
}

GRAD_RULE(NN_MIRROR_PAD) {
  const char *mode = gr_attr_str(c, "mode", "SYMMETRIC");
  return copy_pad_grad(c, strcmp(mode, "REFLECT") == 0 ? M_REFLECT : M_SYMMETRIC);
}

/* dyn.nn.pad(x, pad_width (rank, 2), v): constant padding with run-time widths — x gets g
 * padded by the negated widths (crops where the forward padded, zeros where it cropped),
 * v the sum of the rest. The copying modes place margins by the widths' values, which a
 * rule builds only from static widths (DynamicToStatic makes constant ones static). */
GRAD_RULE(DYN_NN_PAD) {
  const char *mode = gr_attr_str(c, "pad_mode", "constant");
  if (strcmp(mode, "constant") != 0)
    return gr_fail(c, "pad_mode=\"%s\" needs static widths (nn.pad); run DynamicToStatic on constant widths", mode);
  Expr *inner = gr_let(c, gr_reshape_like(c, GR_OP(c, "dyn.nn.pad", NULL, G, gr_un(c, "negative", X1), gr_scalar(c, 0, -1)), X0));
  c->dx[0] = inner;
  c->dx[2] = gr_cast_like(c, gr_sub(c, gr_sum(c, G, NULL, 0, false), gr_sum(c, inner, NULL, 0, false)), X2);
  return true;
}
