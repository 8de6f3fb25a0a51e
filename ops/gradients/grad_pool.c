/* ops/gradients/grad_pool.c — rules of pooling and resizing (spec/gradient.md §4.5, §4.7
 * "pooling", "padding, resizing", §4.9).
 *
 * Average pooling (any window, stride, dilation, padding, ceil_mode,
 * count_include_pad), adaptive average pooling and image resizing are separable
 * linear maps: along each spatial axis, output o is Σ_i M[o][i]·x[i] for a small
 * matrix M that depends only on the attributes and static extents (the forward
 * kernels' divisor is a product of per-axis tap counts, spec/ops.md §9.1). Their
 * adjoint applies Mᵀ along each axis: one nn.dense against a constant matrix per
 * axis (the axis moved last and back with transposes). nn.avg_pool2d uses the
 * dedicated nn.avg_pool2d_grad and max pooling nn.max_pool2d_grad (the first
 * maximum of each window receives the adjoint, §5.4); 1-D pools run as 2-D pools
 * on an H = 1 view. Global max pooling routes g to the first maximum of each plane
 * with argmax + one_hot; 3-D max pooling does the same over blocks when the windows
 * tile the input, and otherwise works tap by tap (one strided view of the padded
 * input per window position: the winners found as the kernels find them, each
 * tap's g spread back to the positions it read) — also the way the adjoint of
 * nn.max_pool2d_grad reads ḡ back at the winners (second derivatives). Resize weights are the forward kernel's own
 * taps (ops/resize.h: float32 coordinates, clamped taps, renormalised cubic weights with
 * cubic_exclude), so the adjoint is exact.
 */
#include <math.h>
#include <string.h>

#include "ir/ast.h"
#include "ops/gradients/grad.h"
#include "ops/resize.h"

#define G (c->g)

/* ---- separable linear maps --------------------------------------------------------- */

/* e with `M` (rows × cols, row-major doubles) applied transposed along `axis`:
 * result[.., j, ..] = Σ_o e[.., o, ..]·M[o][j] (e has `rows` along axis).
 * NULL after reporting an error when M is NULL or its copy too large (gr_table). */
static Expr *apply_adjoint(GradCtx *c, Expr *e, uint32_t axis, uint32_t rank, const double *M, int64_t rows,
                           int64_t cols, DType dt) {
  /* nn.dense(e_t, W) = e_t·Wᵀ with W[j][o] = M[o][j], shape (cols, rows) */
  int64_t shape[2] = {cols, rows};
  bool f64 = dt.code == DT_FLOAT && dt.bits == 64;
  void *buf = gr_table(c, cols, rows, f64 ? 8 : 4);
  if (!buf) return NULL;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t o = 0; o < rows; o++) {
      if (f64) ((double *)buf)[j * rows + o] = M[o * cols + j];
      else ((float *)buf)[j * rows + o] = (float)M[o * cols + j];
    }
  Expr *W = gr_tensor_const(c, f64 ? DT_F64 : DT_F32, 2, shape, buf);
  if (!f64 && !(dt.code == DT_FLOAT && dt.bits == 32)) W = gr_cast_like(c, W, e);
  int64_t perm[GRAD_MAX_RANK];
  bool last = axis + 1 == rank;
  if (!last) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < rank; i++)
      if (i != axis) perm[k++] = i;
    perm[k] = axis;
    e = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, perm, rank)), e);
  }
  e = GR_OP(c, "nn.dense", gr_fmt(c, "units=%lld", (long long)cols), e, W);
  if (!last) {
    int64_t inv[GRAD_MAX_RANK];
    for (uint32_t i = 0; i < rank; i++) inv[perm[i]] = i;
    e = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, inv, rank)), e);
  }
  return e;
}

/* Positions of the spatial letters D, H, W of `layout` (in that order); their number. */
static int spatial_axes(const char *layout, int *pos) {
  int n = 0;
  for (const char *s = "DHW"; *s; s++) {
    const char *p = strchr(layout, *s);
    if (p) pos[n++] = (int)(p - layout);
  }
  return n;
}

/* The per-axis matrix of an average pool (window, stride, dilation, padding, divisor);
 * NULL after reporting an error when it is too large (gr_table). */
static double *avg_matrix(GradCtx *c, int64_t in, int64_t out, int64_t k, int64_t st, int64_t dil, int64_t lo,
                          int64_t hi, bool include_pad) {
  double *M = gr_table(c, out, in, sizeof *M);
  if (!M) return NULL;
  for (int64_t o = 0; o < out; o++) {
    int64_t start = o * st - lo, inside = 0, padded = 0;
    for (int64_t t = 0; t < k; t++) {
      int64_t p = start + t * dil;
      inside += p >= 0 && p < in;
      padded += p >= -lo && p < in + hi;
    }
    int64_t div = include_pad ? padded : inside;
    if (div < 1) div = 1;
    for (int64_t t = 0; t < k; t++) {
      int64_t p = start + t * dil;
      if (p >= 0 && p < in) M[o * in + p] += 1.0 / (double)div;
    }
  }
  return M;
}

static double *adaptive_matrix(GradCtx *c, int64_t in, int64_t out) {
  double *M = gr_table(c, out, in, sizeof *M);
  if (!M) return NULL;
  for (int64_t o = 0; o < out; o++) {
    int64_t s = o * in / out, e = ((o + 1) * in + out - 1) / out;
    for (int64_t p = s; p < e; p++) M[o * in + p] = 1.0 / (double)(e - s);
  }
  return M;
}

static int64_t norm_list(const int64_t *v, int32_t k, int nsp, int s, int64_t dflt) {
  return k <= 0 ? dflt : k == 1 ? v[0] : k == nsp ? v[s] : dflt;
}

/* Average pooling of any rank through per-axis matrices. */
static bool avg_pool_separable(GradCtx *c, int nsp_dflt) {
  static const char *const dflt_layout[4] = {"", "NCW", "NCHW", "NCDHW"};
  const char *layout = gr_attr_str(c, "layout", dflt_layout[nsp_dflt]);
  int pos[3];
  int nsp = spatial_axes(layout, pos);
  int64_t in[GRAD_MAX_RANK], out[GRAD_MAX_RANK], ps[3], st[3], dl[3], pad[6];
  if (!gr_shape(c, 0, in) || !gr_shape(c, -1, out)) return false;
  int32_t kps = gr_attr_ints(c, "pool_size", ps, 3), kst = gr_attr_ints(c, "strides", st, 3);
  int32_t kdl = gr_attr_ints(c, "dilation", dl, 3), kpad = gr_attr_ints(c, "padding", pad, 6);
  bool include_pad = gr_attr_bool(c, "count_include_pad", false);
  Expr *g = G;
  uint32_t rank = gr_rank(c, 0);
  for (int s = 0; s < nsp; s++) {
    int64_t lo, hi;
    if (kpad <= 0) lo = hi = 0;
    else if (kpad == 1) lo = hi = pad[0];
    else if (kpad == nsp) lo = hi = pad[s];
    else if (kpad == 2 * nsp) lo = pad[s], hi = pad[nsp + s];
    else return gr_fail(c, "padding must have 1, %d or %d values", nsp, 2 * nsp);
    int a = pos[s];
    double *M = avg_matrix(c, in[a], out[a], norm_list(ps, kps, nsp, s, 1), norm_list(st, kst, nsp, s, 1),
                           norm_list(dl, kdl, nsp, s, 1), lo, hi, include_pad);
    g = M ? apply_adjoint(c, g, (uint32_t)a, rank, M, out[a], in[a], gr_dtype(c, 0)) : NULL;
    if (!g) return false;
  }
  c->dx[0] = g;
  return true;
}

GRAD_RULE(NN_AVG_POOL1D) { return avg_pool_separable(c, 1); }
GRAD_RULE(NN_AVG_POOL3D) { return avg_pool_separable(c, 3); }
/* TVM's form: nn.avg_pool2d_grad with the forward's attributes (dilation kept, §4.6) */
GRAD_RULE(NN_AVG_POOL2D) {
  c->dx[0] = gr_op_like(c, "nn.avg_pool2d_grad", NULL, (Expr *[]){G, X0}, 2);
  return true;
}
GRAD_RULE(NN_MAX_POOL2D) {
  c->dx[0] = gr_op_like(c, "nn.max_pool2d_grad", NULL, (Expr *[]){G, X0}, 2);
  return true;
}

/* max_pool1d: the 2-D gradient on the H = 1 view (an H inserted before W) */
GRAD_RULE(NN_MAX_POOL1D) {
  const char *layout = gr_attr_str(c, "layout", "NCW");
  const char *w = strchr(layout, 'W');
  if (!w || strchr(layout, 'H')) return gr_fail(c, "unsupported layout \"%s\"", layout);
  int wpos = (int)(w - layout);
  int64_t ps[2], st[2], dl[2], pad[2], lo, hi;
  int32_t kps = gr_attr_ints(c, "pool_size", ps, 2), kst = gr_attr_ints(c, "strides", st, 2);
  int32_t kdl = gr_attr_ints(c, "dilation", dl, 2), kpad = gr_attr_ints(c, "padding", pad, 2);
  lo = kpad <= 0 ? 0 : pad[0];
  hi = kpad <= 0 ? 0 : kpad == 1 ? pad[0] : pad[1];
  char l2[32];
  snprintf(l2, sizeof l2, "%.*sH%s", wpos, layout, w);
  const char *up = gr_fmt(c, "axis=%d", wpos);
  Expr *g = GR_OP(c, "expand_dims", up, G), *x = GR_OP(c, "expand_dims", up, X0);
  const char *attrs = gr_fmt(c,
                             "pool_size=[1, %lld], strides=[1, %lld], dilation=[1, %lld], padding=[0, %lld, 0, %lld], "
                             "layout=\"%s\", ceil_mode=%s",
                             (long long)norm_list(ps, kps, 1, 0, 1), (long long)norm_list(st, kst, 1, 0, 1),
                             (long long)norm_list(dl, kdl, 1, 0, 1), (long long)lo, (long long)hi, l2,
                             gr_attr_bool(c, "ceil_mode", false) ? "True" : "False");
  c->dx[0] = GR_OP(c, "squeeze", gr_fmt(c, "axis=[%d]", wpos), GR_OP(c, "nn.max_pool2d_grad", attrs, g, x));
  return true;
}

/* global average: g / (spatial size), broadcast back */
static bool global_avg(GradCtx *c, const char *dflt_layout) {
  int64_t in[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, in)) return false;
  int pos[3];
  int nsp = spatial_axes(gr_attr_str(c, "layout", dflt_layout), pos);
  double size = 1;
  for (int s = 0; s < nsp; s++) size *= (double)in[pos[s]];
  c->dx[0] = gr_broadcast_to_like(c, gr_div(c, G, gr_scalar(c, size, 0)), X0);
  return true;
}
GRAD_RULE(NN_GLOBAL_AVG_POOL1D) { return global_avg(c, "NCW"); }
GRAD_RULE(NN_GLOBAL_AVG_POOL2D) { return global_avg(c, "NCHW"); }
GRAD_RULE(NN_GLOBAL_AVG_POOL3D) { return global_avg(c, "NCDHW"); }

/* global max: g to the first maximum of each plane (spatial axes moved last and flattened) */
static bool global_max(GradCtx *c, const char *dflt_layout) {
  int64_t in[GRAD_MAX_RANK], perm[GRAD_MAX_RANK], flat[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, in)) return false;
  uint32_t rank = gr_rank(c, 0);
  int pos[3];
  int nsp = spatial_axes(gr_attr_str(c, "layout", dflt_layout), pos);
  bool sp[GRAD_MAX_RANK] = {0};
  int64_t plane = 1;
  for (int s = 0; s < nsp; s++) {
    sp[pos[s]] = true;
    plane *= in[pos[s]];
  }
  uint32_t k = 0, nf = 0;
  for (uint32_t i = 0; i < rank; i++)
    if (!sp[i]) {
      perm[k++] = i;
      flat[nf++] = in[i];
    }
  for (int s = 0; s < nsp; s++) perm[k++] = pos[s];
  flat[nf++] = plane;
  Expr *xt = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, perm, rank)), X0);
  Expr *xf = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, flat, nf)), xt);
  Expr *idx = GR_OP(c, "argmax", gr_fmt(c, "axis=[%u]", nf - 1), xf);
  DType dt = gr_dtype(c, 0);
  char dn[32];
  Expr *mask = GR_OP(c, "one_hot", gr_fmt(c, "depth=%lld, axis=-1, dtype=\"%s\"", (long long)plane, dtype_name(dt, dn)), idx,
                     gr_const(c, 1, dt), gr_const(c, 0, dt));
  /* g has the input's shape with spatial extents 1: the same permutation flattens it */
  int64_t gflat[GRAD_MAX_RANK];
  for (uint32_t i = 0; i + 1 < nf; i++) gflat[i] = flat[i];
  gflat[nf - 1] = 1;
  Expr *gt = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, gflat, nf)),
                   GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, perm, rank)), G));
  Expr *d = gr_mul(c, mask, gt);
  int64_t tshape[GRAD_MAX_RANK], inv[GRAD_MAX_RANK];
  for (uint32_t i = 0; i < rank; i++) {
    tshape[i] = in[perm[i]];
    inv[perm[i]] = i;
  }
  d = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, tshape, rank)), d);
  c->dx[0] = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, inv, rank)), d);
  return true;
}
GRAD_RULE(NN_GLOBAL_MAX_POOL1D) { return global_max(c, "NCW"); }
GRAD_RULE(NN_GLOBAL_MAX_POOL2D) { return global_max(c, "NCHW"); }
GRAD_RULE(NN_GLOBAL_MAX_POOL3D) { return global_max(c, "NCDHW"); }

/* adaptive average: cell i of n over L covers [floor(i·L/n), ceil((i+1)·L/n)) */
static bool adaptive_avg(GradCtx *c, const char *dflt_layout) {
  int64_t in[GRAD_MAX_RANK], out[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, in) || !gr_shape(c, -1, out)) return false;
  int pos[3];
  int nsp = spatial_axes(gr_attr_str(c, "layout", dflt_layout), pos);
  Expr *g = G;
  for (int s = 0; s < nsp; s++) {
    int a = pos[s];
    double *M = adaptive_matrix(c, in[a], out[a]);
    g = M ? apply_adjoint(c, g, (uint32_t)a, gr_rank(c, 0), M, out[a], in[a], gr_dtype(c, 0)) : NULL;
    if (!g) return false;
  }
  c->dx[0] = g;
  return true;
}
GRAD_RULE(NN_ADAPTIVE_AVG_POOL1D) { return adaptive_avg(c, "NCW"); }
GRAD_RULE(NN_ADAPTIVE_AVG_POOL2D) { return adaptive_avg(c, "NCHW"); }
GRAD_RULE(NN_ADAPTIVE_AVG_POOL3D) { return adaptive_avg(c, "NCDHW"); }

/* Adaptive max pooling with cells of unequal size (L not a multiple of n: cell o covers
 * [floor(o·L/n), ceil((o+1)·L/n)), neighbours may overlap). Along each spatial axis a
 * constant (n, k) table lists every cell's positions, padded to the largest cell k by
 * repeating its last position; take() with the tables gives every cell's taps, whose
 * row-major argmax is the forward's first maximum (a repeated position comes after its
 * original, so it never wins). The adjoint puts g on the winning tap (one_hot) and sends
 * each tap back to its position with the transposed (n·k, L) selection matrix per axis. */
static bool adaptive_max_cells(GradCtx *c, int nsp, const int *pos_in) {
  int64_t in[GRAD_MAX_RANK], out[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, in) || !gr_shape(c, -1, out)) return false;
  uint32_t rank = gr_rank(c, 0);
  DType dt = gr_dtype(c, 0);
  int pos[3];
  memcpy(pos, pos_in, (size_t)nsp * sizeof *pos);
  for (int i = 1; i < nsp; i++) /* ascending axis positions */
    for (int j = i; j > 0 && pos[j - 1] > pos[j]; j--) {
      int t = pos[j];
      pos[j] = pos[j - 1];
      pos[j - 1] = t;
    }
  int64_t k[3], ktot = 1;
  int32_t *tab[3];
  for (int s = 0; s < nsp; s++) {
    int64_t L = in[pos[s]], n = out[pos[s]];
    if (n < 1 || L < 1) return gr_fail(c, "empty pooling cells");
    k[s] = 0;
    for (int64_t o = 0; o < n; o++) {
      int64_t size = ((o + 1) * L + n - 1) / n - o * L / n;
      if (size > k[s]) k[s] = size;
    }
    ktot *= k[s];
    tab[s] = gr_table(c, n, k[s], sizeof *tab[s]);
    if (!tab[s]) return false;
    for (int64_t o = 0; o < n; o++) {
      int64_t st = o * L / n, size = ((o + 1) * L + n - 1) / n - st;
      for (int64_t t = 0; t < k[s]; t++) tab[s][o * k[s] + t] = (int32_t)(st + (t < size ? t : size - 1));
    }
  }
  /* the taps: each spatial axis a becomes (n_a, k_a); later axes first so positions hold */
  Expr *xt = X0;
  for (int s = nsp; s-- > 0;) {
    int64_t shape[2] = {out[pos[s]], k[s]};
    xt = GR_OP(c, "take", gr_fmt(c, "axis=%d", pos[s]), xt, gr_tensor_const(c, DT_I32, 2, shape, tab[s]));
  }
  /* axes of the tap tensor: original axis i sits at i + (spatial axes before it); its k right after */
  int64_t perm[GRAD_MAX_RANK + 3], inv[GRAD_MAX_RANK + 3], flat[GRAD_MAX_RANK + 1], tshape[GRAD_MAX_RANK + 3];
  uint32_t nt = rank + (uint32_t)nsp, np = 0, at = 0;
  int kpos[3];
  for (uint32_t i = 0; i < rank; i++) {
    int s = -1;
    for (int q = 0; q < nsp; q++)
      if ((uint32_t)pos[q] == i) s = q;
    perm[np++] = at;
    flat[i] = out[i];
    tshape[at] = out[i];
    if (s >= 0) {
      kpos[s] = (int)at + 1;
      tshape[at + 1] = k[s];
      at += 2;
    } else {
      at += 1;
    }
  }
  for (int s = 0; s < nsp; s++) perm[np++] = kpos[s];
  for (uint32_t i = 0; i < nt; i++) inv[perm[i]] = i;
  flat[rank] = ktot;
  xt = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, perm, nt)), xt);
  xt = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, flat, rank + 1)), xt);
  char dn[32];
  Expr *mask = GR_OP(c, "one_hot", gr_fmt(c, "depth=%lld, axis=-1, dtype=\"%s\"", (long long)ktot, dtype_name(dt, dn)),
                     GR_OP(c, "argmax", "axis=[-1]", xt), gr_const(c, 1, dt), gr_const(c, 0, dt));
  Expr *d = gr_mul(c, mask, GR_OP(c, "expand_dims", "axis=-1", G));
  int64_t pshape[GRAD_MAX_RANK + 3], merged[GRAD_MAX_RANK];
  for (uint32_t i = 0; i < nt; i++) pshape[i] = tshape[perm[i]];
  d = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, pshape, nt)), d);
  d = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, inv, nt)), d);
  for (uint32_t i = 0; i < rank; i++) merged[i] = out[i];
  for (int s = 0; s < nsp; s++) merged[pos[s]] *= k[s];
  d = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, merged, rank)), d);
  for (int s = 0; s < nsp; s++) {
    int64_t L = in[pos[s]], rows = merged[pos[s]];
    double *M = gr_table(c, rows, L, sizeof *M);
    if (!M) return false;
    for (int64_t r = 0; r < rows; r++) M[r * L + tab[s][r]] = 1;
    d = apply_adjoint(c, d, (uint32_t)pos[s], rank, M, rows, L, dt);
    if (!d) return false;
  }
  c->dx[0] = d;
  return true;
}

/* true when every spatial extent is a multiple of its output extent (equal cells) */
static bool equal_cells(GradCtx *c, int nsp, const int *pos, bool *eq) {
  int64_t in[GRAD_MAX_RANK], out[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, in) || !gr_shape(c, -1, out)) return false;
  *eq = true;
  for (int s = 0; s < nsp; s++) *eq = *eq && out[pos[s]] > 0 && in[pos[s]] % out[pos[s]] == 0;
  return true;
}

/* adaptive max 2-D with equal cells is max pooling with window = stride = L/n (else by cells) */
GRAD_RULE(NN_ADAPTIVE_MAX_POOL2D) {
  int64_t in[GRAD_MAX_RANK], out[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, in) || !gr_shape(c, -1, out)) return false;
  const char *layout = gr_attr_str(c, "layout", "NCHW");
  int pos[3];
  if (spatial_axes(layout, pos) != 2) return gr_fail(c, "unsupported layout \"%s\"", layout);
  bool eq;
  if (!equal_cells(c, 2, pos, &eq)) return false;
  if (!eq) return adaptive_max_cells(c, 2, pos);
  int64_t k[2];
  for (int s = 0; s < 2; s++) k[s] = in[pos[s]] / out[pos[s]];
  c->dx[0] = GR_OP(c, "nn.max_pool2d_grad",
                   gr_fmt(c, "pool_size=[%lld, %lld], strides=[%lld, %lld], layout=\"%s\"", (long long)k[0], (long long)k[1],
                          (long long)k[0], (long long)k[1], layout),
                   G, X0);
  return true;
}

/* adaptive max 1-D with equal cells: the 2-D rule on the H = 1 view (else by cells) */
GRAD_RULE(NN_ADAPTIVE_MAX_POOL1D) {
  int64_t in[GRAD_MAX_RANK], out[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, in) || !gr_shape(c, -1, out)) return false;
  const char *layout = gr_attr_str(c, "layout", "NCW");
  const char *w = strchr(layout, 'W');
  if (!w || strchr(layout, 'H')) return gr_fail(c, "unsupported layout \"%s\"", layout);
  int wpos = (int)(w - layout);
  int64_t L = in[wpos], n = out[wpos];
  if (n <= 0 || L % n) return adaptive_max_cells(c, 1, &wpos);
  char l2[32];
  snprintf(l2, sizeof l2, "%.*sH%s", wpos, layout, w);
  const char *up = gr_fmt(c, "axis=%d", wpos);
  Expr *d = GR_OP(c, "nn.max_pool2d_grad",
                  gr_fmt(c, "pool_size=[1, %lld], strides=[1, %lld], layout=\"%s\"", (long long)(L / n), (long long)(L / n), l2),
                  GR_OP(c, "expand_dims", up, G), GR_OP(c, "expand_dims", up, X0));
  c->dx[0] = GR_OP(c, "squeeze", gr_fmt(c, "axis=[%d]", wpos), d);
  return true;
}

/* ---- max pooling by taps ----------------------------------------------------------- */

/* The geometry of a max pool over the spatial axes pos[0..nsp) of x: windows k,
 * strides s, dilation d, leading padding lo; `hi` pads the trailing side far enough
 * for every window of the `out` extents (ceil mode included). Each tap (a position
 * inside the window, row-major) sees one strided view of the padded input whose
 * shape is the output's. More than GRAD_MAX_PIECES taps is an error (gr_pieces). */
typedef struct Taps {
  uint32_t rank;
  int nsp, pos[3];
  int64_t k[3], s[3], d[3], lo[3], hi[3], in[3], out[3];
} Taps;

static int64_t taps_count(const Taps *t);

static bool taps_init(GradCtx *c, Taps *t, int nsp, const int *pos, const int64_t *xd, const int64_t *od, uint32_t rank) {
  int64_t ps[6], st[6], dl[6], pad[6];
  int32_t kps = gr_attr_ints(c, "pool_size", ps, 6), kst = gr_attr_ints(c, "strides", st, 6);
  int32_t kdl = gr_attr_ints(c, "dilation", dl, 6), kpad = gr_attr_ints(c, "padding", pad, 6);
  t->rank = rank;
  t->nsp = nsp;
  for (int i = 0; i < nsp; i++) {
    t->pos[i] = pos[i];
    t->k[i] = norm_list(ps, kps, nsp, i, 1);
    t->s[i] = norm_list(st, kst, nsp, i, 1);
    t->d[i] = norm_list(dl, kdl, nsp, i, 1);
    /* padding: one value, one per axis (both sides), or leading sides then trailing */
    t->lo[i] = kpad <= 0 ? 0 : kpad == 1 ? pad[0] : pad[i];
    t->in[i] = xd[pos[i]];
    t->out[i] = od[pos[i]];
    if (t->k[i] < 1 || t->s[i] < 1 || t->d[i] < 1 || t->lo[i] < 0) return gr_fail(c, "invalid pooling window");
    int64_t need = (t->out[i] - 1) * t->s[i] + (t->k[i] - 1) * t->d[i] + 1;
    t->hi[i] = need - t->lo[i] - t->in[i] > 0 ? need - t->lo[i] - t->in[i] : 0;
  }
  return gr_pieces(c, taps_count(t), "window taps (a few slices each)");
}

/* The taps of a window (-1 when the product overflows). */
static int64_t taps_count(const Taps *t) {
  int64_t n = 1;
  for (int i = 0; i < t->nsp; i++)
    if (__builtin_mul_overflow(n, t->k[i], &n)) return -1;
  return n;
}

/* the window offsets of tap `tap` (row-major over the window) */
static void tap_offsets(const Taps *t, int64_t tap, int64_t *off) {
  for (int i = t->nsp; i-- > 0;) {
    off[i] = (tap % t->k[i]) * t->d[i];
    tap /= t->k[i];
  }
}

/* nn.pad of e on the spatial axes: lo/hi per axis (the other axes untouched) */
static Expr *pad_spatial(GradCtx *c, const Taps *t, Expr *e, const int64_t *lo, const int64_t *hi, Expr *value) {
  int64_t w[GRAD_MAX_RANK][2] = {{0}};
  for (int i = 0; i < t->nsp; i++) {
    w[t->pos[i]][0] = lo[i];
    w[t->pos[i]][1] = hi[i];
  }
  return GR_OP(c, "nn.pad", gr_pad_width(c, t->rank, w), e, value);
}

/* strided_slice attributes of the view a tap at `off` sees in the padded input */
static const char *tap_view(GradCtx *c, const Taps *t, const int64_t *off) {
  int64_t end[3], ax[3];
  for (int i = 0; i < t->nsp; i++) {
    end[i] = off[i] + (t->out[i] - 1) * t->s[i] + 1;
    ax[i] = t->pos[i];
  }
  return gr_fmt(c, "begin=%s, end=%s, strides=%s, axes=%s", gr_ints_text(c, off, (uint32_t)t->nsp),
                gr_ints_text(c, end, (uint32_t)t->nsp), gr_ints_text(c, t->s, (uint32_t)t->nsp),
                gr_ints_text(c, ax, (uint32_t)t->nsp));
}

static double lowest_finite(DType dt) {
  if (dt.code == DT_BFLOAT) return -3.3895313892515355e38;
  return dt.bits == 16 ? -65504.0 : dt.bits == 32 ? -3.4028234663852886e38 : -1.7976931348623157e308;
}

/* The winning tap of every window (int32, -1 when none wins), found as the kernels find
 * it: taps in row-major window order, a tap wins only when strictly greater than the
 * best so far, starting from the lowest finite value — ties keep the earlier tap and
 * padding never wins. xi is input `xi`'s index among the call's inputs. */
static Expr *tap_winners(GradCtx *c, const Taps *t, Expr *x, int xi) {
  double low = lowest_finite(gr_dtype(c, xi));
  Expr *xp = gr_let(c, pad_spatial(c, t, x, t->lo, t->hi, gr_scalar(c, low, xi)));
  DType i32 = {DT_INT, 32, 1};
  Expr *best = gr_scalar(c, low, xi), *win = gr_const(c, -1, i32);
  for (int64_t tap = 0; tap < taps_count(t); tap++) {
    int64_t off[3];
    tap_offsets(t, tap, off);
    Expr *v = gr_let(c, GR_OP(c, "strided_slice", tap_view(c, t, off), xp));
    Expr *wins = gr_let(c, GR_OP(c, "greater", NULL, v, best));
    best = gr_let(c, gr_where(c, wins, v, best));
    win = gr_let(c, gr_where(c, wins, gr_const(c, (double)tap, i32), win));
  }
  return win;
}

/* max_pool2d_grad(dy, x) adds each dy cell at its window's winner in x, so it is
 * linear in dy and its adjoint reads ḡ back at the winners; x gets no gradient
 * (the winners are piecewise constant). */
GRAD_RULE(NN_MAX_POOL2D_GRAD) {
  int64_t dyd[GRAD_MAX_RANK], xd[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dyd) || !gr_shape(c, 1, xd)) return false;
  const char *layout = gr_attr_str(c, "layout", "NCHW");
  int pos[3];
  if (spatial_axes(layout, pos) != 2 || pos[1] >= (int)gr_rank(c, 1)) return gr_fail(c, "unsupported layout \"%s\"", layout);
  Taps t;
  if (!taps_init(c, &t, 2, pos, xd, dyd, gr_rank(c, 1))) return false;
  Expr *win = tap_winners(c, &t, X1, 1);
  Expr *gp = gr_let(c, pad_spatial(c, &t, G, t.lo, t.hi, gr_scalar(c, 0, 1)));
  DType i32 = {DT_INT, 32, 1};
  Expr *res = gr_scalar(c, 0, 1);
  for (int64_t tap = 0; tap < taps_count(&t); tap++) {
    int64_t off[3];
    tap_offsets(&t, tap, off);
    Expr *mine = GR_OP(c, "equal", NULL, win, gr_const(c, (double)tap, i32));
    res = gr_let(c, gr_where(c, mine, GR_OP(c, "strided_slice", tap_view(c, &t, off), gp), res));
  }
  c->dx[0] = res;
  return true;
}

/* Max pooling of any window (overlap, padding, dilation, ceil mode): every window's
 * g goes to its winner. Per tap, the windows it won hand their g to the view it read:
 * spread back with zeros between strided neighbours and padded to the tap's offset in
 * the padded input; the sum over taps is cropped to the input. */
static bool tap_max_grad(GradCtx *c, const int *pos, int nsp) {
  int64_t xd[GRAD_MAX_RANK], od[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, xd) || !gr_shape(c, -1, od)) return false;
  uint32_t rank = gr_rank(c, 0);
  Taps t;
  if (!taps_init(c, &t, nsp, pos, xd, od, rank)) return false;
  Expr *win = tap_winners(c, &t, X0, 0);
  DType i32 = {DT_INT, 32, 1};
  Expr *sum = NULL;
  for (int64_t tap = 0; tap < taps_count(&t); tap++) {
    int64_t off[3], lo[3], hi[3], shape[GRAD_MAX_RANK];
    tap_offsets(&t, tap, off);
    Expr *e = gr_where(c, GR_OP(c, "equal", NULL, win, gr_const(c, (double)tap, i32)), G, gr_scalar(c, 0, 0));
    memcpy(shape, od, rank * sizeof *shape);
    for (int i = 0; i < nsp; i++) {
      uint32_t a = (uint32_t)t.pos[i];
      e = gr_dilate(c, e, a, rank, shape, t.s[i]); /* n -> (n − 1)·s + 1 */
      lo[i] = off[i];
      hi[i] = t.lo[i] + t.in[i] + t.hi[i] - off[i] - shape[a];
    }
    e = pad_spatial(c, &t, e, lo, hi, gr_scalar(c, 0, 0));
    sum = sum ? gr_let(c, gr_add(c, sum, e)) : gr_let(c, e);
  }
  int64_t b[3], en[3], ax[3];
  for (int i = 0; i < nsp; i++) {
    b[i] = t.lo[i];
    en[i] = t.lo[i] + t.in[i];
    ax[i] = t.pos[i];
  }
  c->dx[0] = GR_OP(c, "strided_slice",
                   gr_fmt(c, "begin=%s, end=%s, axes=%s", gr_ints_text(c, b, (uint32_t)nsp), gr_ints_text(c, en, (uint32_t)nsp),
                          gr_ints_text(c, ax, (uint32_t)nsp)),
                   sum);
  return true;
}

/* g routed to the first maximum of non-overlapping k-blocks along the spatial axes `pos`
 * (window = stride = k, no padding): the blocks become a trailing axis, argmax + one_hot.
 * Trailing input positions no block covers get zeros. */
static bool block_max_grad(GradCtx *c, const int *pos, int nsp, const int64_t *k) {
  int64_t in[GRAD_MAX_RANK], out[GRAD_MAX_RANK], crop[GRAD_MAX_RANK], split[2 * GRAD_MAX_RANK];
  int64_t perm[2 * GRAD_MAX_RANK], inv[2 * GRAD_MAX_RANK], flat[GRAD_MAX_RANK + 1], tshape[2 * GRAD_MAX_RANK];
  if (!gr_shape(c, 0, in) || !gr_shape(c, -1, out)) return false;
  uint32_t rank = gr_rank(c, 0);
  int ks[GRAD_MAX_RANK];
  for (uint32_t i = 0; i < rank; i++) ks[i] = -1;
  for (int s = 0; s < nsp; s++) ks[pos[s]] = s;
  uint32_t ns = 0, np = 0, nf = 0;
  int64_t K = 1;
  bool cropped = false;
  for (uint32_t i = 0; i < rank; i++) {
    crop[i] = in[i];
    if (ks[i] < 0) {
      split[ns++] = in[i];
      continue;
    }
    int64_t kk = k[ks[i]];
    crop[i] = out[i] * kk;
    cropped |= crop[i] != in[i];
    split[ns++] = out[i];
    split[ns++] = kk;
    K *= kk;
  }
  /* non-block axes first (in order), then the block axes */
  uint32_t at = 0;
  for (uint32_t i = 0; i < rank; i++) {
    perm[np++] = at;
    at += ks[i] < 0 ? 1 : 2;
  }
  at = 0;
  for (uint32_t i = 0; i < rank; i++) {
    if (ks[i] >= 0) perm[np++] = at + 1;
    at += ks[i] < 0 ? 1 : 2;
  }
  for (uint32_t i = 0; i < ns; i++) {
    inv[perm[i]] = i;
    tshape[i] = split[perm[i]];
  }
  for (uint32_t i = 0; i < rank; i++) flat[nf++] = out[i];
  flat[nf++] = K;
  Expr *x = X0;
  if (cropped) {
    int64_t zero[GRAD_MAX_RANK] = {0};
    x = GR_OP(c, "strided_slice", gr_fmt(c, "begin=%s, end=%s", gr_ints_text(c, zero, rank), gr_ints_text(c, crop, rank)), x);
  }
  x = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, split, ns)), x);
  x = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, perm, ns)), x);
  x = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, flat, nf)), x);
  DType dt = gr_dtype(c, 0);
  char dn[32];
  Expr *mask = GR_OP(c, "one_hot", gr_fmt(c, "depth=%lld, axis=-1, dtype=\"%s\"", (long long)K, dtype_name(dt, dn)),
                     GR_OP(c, "argmax", "axis=[-1]", x), gr_const(c, 1, dt), gr_const(c, 0, dt));
  Expr *d = gr_mul(c, mask, GR_OP(c, "expand_dims", "axis=-1", G));
  d = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, tshape, ns)), d);
  d = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, inv, ns)), d);
  d = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, crop, rank)), d);
  if (cropped) {
    int64_t pads[GRAD_MAX_RANK][2] = {{0}};
    for (uint32_t i = 0; i < rank; i++) pads[i][1] = in[i] - crop[i];
    d = GR_OP(c, "nn.pad", gr_pad_width(c, rank, pads), d, gr_scalar(c, 0, 0));
  }
  c->dx[0] = d;
  return true;
}

/* max_pool3d: non-overlapping unpadded windows by blocks (one argmax), any other
 * window by taps */
GRAD_RULE(NN_MAX_POOL3D) {
  const char *layout = gr_attr_str(c, "layout", "NCDHW");
  int pos[3];
  if (spatial_axes(layout, pos) != 3) return gr_fail(c, "unsupported layout \"%s\"", layout);
  int64_t ps[6], st[6], dl[6], pad[6], k[3];
  int32_t kps = gr_attr_ints(c, "pool_size", ps, 6), kst = gr_attr_ints(c, "strides", st, 6);
  int32_t kdl = gr_attr_ints(c, "dilation", dl, 6), kpad = gr_attr_ints(c, "padding", pad, 6);
  bool blocks = true;
  for (int s = 0; s < 3; s++) {
    k[s] = norm_list(ps, kps, 3, s, 1);
    blocks = blocks && norm_list(st, kst, 3, s, 1) == k[s] && norm_list(dl, kdl, 3, s, 1) == 1;
  }
  for (int32_t i = 0; i < kpad; i++) blocks = blocks && pad[i] == 0;
  return blocks ? block_max_grad(c, pos, 3, k) : tap_max_grad(c, pos, 3);
}

/* adaptive max 3-D: equal cells by blocks, else by cells */
GRAD_RULE(NN_ADAPTIVE_MAX_POOL3D) {
  int64_t in[GRAD_MAX_RANK], out[GRAD_MAX_RANK], k[3];
  if (!gr_shape(c, 0, in) || !gr_shape(c, -1, out)) return false;
  const char *layout = gr_attr_str(c, "layout", "NCDHW");
  int pos[3];
  if (spatial_axes(layout, pos) != 3) return gr_fail(c, "unsupported layout \"%s\"", layout);
  bool eq;
  if (!equal_cells(c, 3, pos, &eq)) return false;
  if (!eq) return adaptive_max_cells(c, 3, pos);
  for (int s = 0; s < 3; s++) k[s] = in[pos[s]] / out[pos[s]];
  return block_max_grad(c, pos, 3, k);
}

/* avg_pool2d_grad(dy, x): linear in dy, whose adjoint is the forward average pool */
GRAD_RULE(NN_AVG_POOL2D_GRAD) {
  /* an empty dilation (what TVM's pool-gradient builders leave) reads as 1s for the
   * _grad operator only: the forward pool needs it spelled out */
  const AttrValue *dil = gr_attr(c, "dilation");
  bool empty = dil && dil->kind == AV_ARRAY && dil->arr.n == 0;
  c->dx[0] = gr_op_like(c, "nn.avg_pool2d", empty ? "dilation=[1, 1]" : NULL, (Expr *[]){G}, 1);
  return true;
}

/* ---- resizing ---------------------------------------------------------------------- */

/* Row o of the per-axis interpolation matrix: the forward kernel's taps
 * (ops/resize.h), summed per source index. */
static void resize_row(const ResizeCfg *r, int64_t o, int64_t in, int64_t out, float start, float end, double *row) {
  ResizeTaps t;
  resize_axis_taps(r, o, in, out, start, end, &t);
  if (t.outside) return; /* extrapolated: a constant */
  for (int k = 0; k < t.n; k++) row[t.idx[k]] += t.w[k];
}

/* the adjoint of a resize along the spatial letters `sp` ("W", "HW", "DHW") of `layout`;
 * r->start/end: the roi's bounds per letter (tf_crop_and_resize) */
static bool resize_adjoint(GradCtx *c, const ResizeCfg *r, const char *layout, const char *sp) {
  int64_t in[GRAD_MAX_RANK], out[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, in) || !gr_shape(c, -1, out)) return false;
  int nsp = (int)strlen(sp), axes[3];
  if (strlen(layout) != gr_rank(c, 0)) return gr_fail(c, "unsupported layout \"%s\"", layout);
  for (int s = 0; s < nsp; s++) {
    const char *p = strchr(layout, sp[s]);
    if (!p) return gr_fail(c, "unsupported layout \"%s\"", layout);
    axes[s] = (int)(p - layout);
  }
  Expr *g = dtype_eq(gr_dtype(c, -1), gr_dtype(c, 0)) ? G : gr_cast_like(c, G, X0);
  for (int s = 0; s < nsp; s++) {
    int a = axes[s];
    int64_t ni = in[a], no = out[a];
    double *M = gr_table(c, no, ni, sizeof *M);
    if (!M) return false;
    for (int64_t o = 0; o < no && ni > 0; o++) resize_row(r, o, ni, no, r->start[s], r->end[s], M + o * ni);
    g = apply_adjoint(c, g, (uint32_t)a, gr_rank(c, 0), M, no, ni, gr_dtype(c, 0));
    if (!g) return false;
  }
  c->dx[0] = g;
  return true;
}

/* image.resize1d / resize2d / resize3d over the letters `sp` (default layout `layout`) */
static bool resize_image_rule(GradCtx *c, const char *sp, const char *layout) {
  ResizeCfg r = {.alpha = (float)gr_attr_double(c, "cubic_alpha", -0.5),
                 .exclude = gr_attr_int(c, "cubic_exclude", 0) != 0};
  const char *cm = gr_attr_str(c, "coordinate_transformation_mode", "half_pixel");
  const char *rm = gr_attr_str(c, "rounding_method", "round");
  switch (resize_parse(&r, (int)strlen(sp), gr_attr_str(c, "method", "linear"), cm, rm, gr_attr(c, "roi"))) {
  case RESIZE_OK: break;
  case RESIZE_BAD_METHOD: return gr_fail(c, "unknown method");
  case RESIZE_BAD_COORD: return gr_fail(c, "unknown coordinate_transformation_mode \"%s\"", cm);
  case RESIZE_BAD_ROUNDING: return gr_fail(c, "unknown rounding_method \"%s\"", rm);
  }
  return resize_adjoint(c, &r, gr_attr_str(c, "layout", layout), sp);
}

GRAD_RULE(IMAGE_RESIZE1D) { return resize_image_rule(c, "W", "NCW"); }
GRAD_RULE(IMAGE_RESIZE2D) { return resize_image_rule(c, "HW", "NCHW"); }
GRAD_RULE(IMAGE_RESIZE3D) { return resize_image_rule(c, "DHW", "NCDHW"); }

/* image.affine_grid(θ) is, per batch, θ (2, 3) times the constant base grid B (3, H·W) whose
 * columns are (x_j, y_i, 1) (the kernel's coordinates): dθ = g·Bᵀ, one nn.dense over the 2N rows
 * of g flattened to (2N, H·W). */
GRAD_RULE(IMAGE_AFFINE_GRID) {
  int64_t od[4];
  if (!gr_shape(c, -1, od)) return false;
  int64_t N = od[0], H = od[2], W = od[3], bshape[2] = {3, H * W}, rows[2] = {2 * N, H * W}, tshape[3] = {N, 2, 3};
  DType dt = gr_dtype(c, 0);
  bool f64 = dt.code == DT_FLOAT && dt.bits == 64;
  void *buf = gr_table(c, 3, H * W, f64 ? 8 : 4);
  if (!buf) return false;
  double ys = (2.0 - 1e-7) / (double)(H - 1), xs = (2.0 - 1e-7) / (double)(W - 1);
  for (int64_t i = 0; i < H; i++)
    for (int64_t j = 0; j < W; j++) {
      double v[3] = {-1.0 + (double)j * xs, -1.0 + (double)i * ys, 1.0};
      for (int r = 0; r < 3; r++) {
        if (f64) ((double *)buf)[r * H * W + i * W + j] = v[r];
        else ((float *)buf)[r * H * W + i * W + j] = (float)v[r];
      }
    }
  Expr *B = gr_tensor_const(c, f64 ? DT_F64 : DT_F32, 2, bshape, buf);
  if (!f64 && !(dt.code == DT_FLOAT && dt.bits == 32)) B = gr_cast_like(c, B, X0);
  Expr *g = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, rows, 2)), G);
  c->dx[0] = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, tshape, 3)),
                   GR_OP(c, "nn.dense", "units=3", g, B));
  return true;
}

GRAD_RULE(NN_UPSAMPLING) {
  bool ac = gr_attr_bool(c, "align_corners", false);
  ResizeCfg r = {.alpha = -0.5f, .mode = ac ? CT_ALIGN_CORNERS : CT_ASYMMETRIC, .rounding = ac ? RD_ROUND : RD_FLOOR};
  if (!resize_parse_method(gr_attr_str(c, "method", "nearest_neighbor"), &r.method)) return gr_fail(c, "unknown method");
  return resize_adjoint(c, &r, gr_attr_str(c, "layout", "NCHW"), "HW");
}

/* nn.upsampling3d (the kernel's resize3d): nearest (round with align_corners, else floor) or
 * trilinear, with half_pixel / align_corners / asymmetric coordinates */
GRAD_RULE(NN_UPSAMPLING3D) {
  const char *m = gr_attr_str(c, "method", "nearest_neighbor");
  const char *cm = gr_attr_str(c, "coordinate_transformation_mode", "half_pixel");
  ResizeCfg r = {.alpha = -0.5f};
  switch (resize_parse_3d(&r, m, cm)) {
  case RESIZE_OK: break;
  case RESIZE_BAD_METHOD: return gr_fail(c, "unknown method \"%s\"", m);
  default: return gr_fail(c, "unknown coordinate_transformation_mode \"%s\"", cm);
  }
  return resize_adjoint(c, &r, gr_attr_str(c, "layout", "NCDHW"), "DHW");
}
