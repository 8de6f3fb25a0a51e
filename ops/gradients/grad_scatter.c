/* ops/gradients/grad_scatter.c — rules of the scattering operators (spec/gradient.md §4.9):
 * strided_set, scatter_nd, scatter_elements (every combining mode), sparse_to_dense (and
 * its dyn form), and dyn.strided_slice (strided_set's read-back).
 *
 * Each writes `u` into some positions of `d`. With replacement (strided_set, the
 * "update" modes), the written positions of d are overwritten: d's adjoint is ḡ with
 * those positions zeroed and u's adjoint ḡ read back at its positions (the matching
 * gather: gather_nd for scatter_nd, gather for scatter_elements, strided_slice for
 * strided_set). The scatters apply duplicates in order, so the last update at a
 * position wins; the rules find it by scattering the updates' ordinals with "max"
 * (see the scatter section below for add, mul, min, max and mean). Indices and
 * begin/end/strides get no gradient.
 *
 *     strided_set(d, u, b, e, s):  d̄ = strided_set(ḡ, 0_u, b, e, s)    ū = strided_slice(ḡ, b, e, s)
 *     dyn.strided_slice(d, b, e, s):  d̄ = strided_set(0_d, ḡ, b, e, s)
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

/* Input i (begin, end or strides) as strided_set takes it: integers. dyn.strided_slice
 * takes any numeric dtype (TVM's relation checks none) and truncates floats, as this cast
 * does; strided_set's relation wants integers (session 16, seed 156 input 38: a float32
 * begin made Gradient's output ill-typed). */
static Expr *slice_bound(GradCtx *c, int i) {
  return dtype_is_int(gr_dtype(c, i)) ? c->x[i] : GR_OP(c, "cast", "dtype=\"int64\"", c->x[i]);
}

/* dyn.strided_slice reads what strided_set writes: its adjoint writes ḡ into zeros
 * (what strided_set's own rule emits, so its second derivative needs this) */
GRAD_RULE(DYN_STRIDED_SLICE) {
  c->dx[0] = GR_OP(c, "strided_set", NULL, gr_zeros_like(c, X0), G, slice_bound(c, 1), slice_bound(c, 2),
                   slice_bound(c, 3));
  return true;
}

/* ---- scatter_nd / scatter_elements with every combining mode ------------------------
 * Both apply their updates in order (scatter_nd: index tuples in row-major order;
 * scatter_elements: each line along `axis` in order). Per output position q with data d
 * and the updates u_1..u_m landing there, in order:
 *   update  out = u_m (d if m = 0):   d̄ = g where m = 0;      ū_i = g if i is the last
 *   add     out = d + Σ u_i:          d̄ = g;                  ū_i = g
 *   mul     out = d·Π u_i:            d̄ = g·Π u_i;            ū_i = g·d·Π_{j≠i} u_j
 *   min/max out = acc ≶ u ? acc : u along (d, u_1, .., u_m), so the last of the
 *           values equal to the result wins: g goes to that one
 *   mean    out = (..((d + u_1)/2 + u_2)/2 ..)/2 (scatter_elements only):
 *           d̄ = g/2^m;  ū_i = g/2^(1 + number of later updates at q)
 * "read at q_i" is the matching gather (gather_nd / gather), "per position" the scatter
 * itself with the right mode; which update is first or last comes from scattering the
 * updates' ordinals with min/max. Products without the zeros (counted apart) keep
 * Π_{j≠i} exact when some u_j = 0. */
typedef struct Sc {
  bool nd;
  int64_t axis;
  Expr *idx;  /* indices for writing (as given) */
  Expr *ridx; /* indices for reading (scatter_elements: negatives made positive) */
  int64_t dims[GRAD_MAX_RANK], udims[GRAD_MAX_RANK];
  uint32_t rank, urank;
} Sc;

static Expr *sc_read(GradCtx *c, const Sc *s, Expr *t) {
  return s->nd ? GR_OP(c, "gather_nd", NULL, t, s->idx) : GR_OP(c, "gather", gr_fmt(c, "axis=%lld", (long long)s->axis), t, s->ridx);
}

static Expr *sc_write(GradCtx *c, const Sc *s, Expr *init, Expr *vals, const char *mode) {
  return s->nd ? GR_OP(c, "scatter_nd", gr_fmt(c, "mode=\"%s\"", mode), init, s->idx, vals)
               : GR_OP(c, "scatter_elements", gr_fmt(c, "axis=%lld, reduction=\"%s\"", (long long)s->axis, mode), init, s->idx, vals);
}

/* an int32 tensor of data's shape filled with v */
static Expr *sc_fill(GradCtx *c, const Sc *s, int64_t v) {
  return GR_OP(c, "full", gr_fmt(c, "shape=%s, dtype=\"int32\"", gr_ints_text(c, s->dims, s->rank)), gr_const(c, (double)v, DT_I32));
}

/* each update's place in the order of application (int32, the updates' shape); *count: an
 * upper bound of the ordinals. NULL after reporting an error when too many (gr_table). */
static Expr *sc_ordinal(GradCtx *c, const Sc *s, int64_t *count) {
  int64_t n = 1, view[GRAD_MAX_RANK];
  for (uint32_t i = 0; i < s->urank; i++) view[i] = 1;
  if (s->nd) { /* the index tuples: the leading axes of the updates that are not data axes */
    uint32_t ny = s->urank - (s->rank - (uint32_t)s->axis); /* axis holds M for scatter_nd */
    for (uint32_t i = 0; i < ny; i++) {
      view[i] = s->udims[i];
      if (__builtin_mul_overflow(n, s->udims[i], &n)) n = -1; /* gr_table refuses it */
    }
  } else {
    n = s->udims[s->axis];
    view[s->axis] = n;
  }
  int32_t *ord = gr_table(c, 1, n, sizeof *ord);
  if (!ord) return NULL;
  for (int64_t i = 0; i < n; i++) ord[i] = (int32_t)i;
  *count = n;
  Expr *o = gr_tensor_const(c, DT_I32, 1, &n, ord);
  o = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, view, s->urank)), o);
  return GR_OP(c, "broadcast_to", gr_fmt(c, "shape=%s", gr_ints_text(c, s->udims, s->urank)), o);
}

static bool scatter_rule(GradCtx *c, Sc *s, const char *mode) {
  s->rank = gr_rank(c, 0);
  s->urank = gr_rank(c, 2);
  Expr *zero = gr_scalar(c, 0, 0), *gu = gr_let(c, sc_read(c, s, G));
  if (!strcmp(mode, "add")) { /* no shape needed: the adjoint of take with `?` indices (and of
                                 dyn.topk) is such a scatter, and its own gradient must exist */
    c->dx[0] = G;
    c->dx[2] = gu;
    return true;
  }
  if (!gr_shape(c, 0, s->dims) || !gr_shape(c, 2, s->udims)) return false;
  int64_t n;
  if (!strcmp(mode, "update")) { /* the last update at each position wins */
    Expr *ord = sc_ordinal(c, s, &n);
    if (!ord) return false;
    ord = gr_let(c, ord);
    Expr *last = gr_let(c, sc_write(c, s, sc_fill(c, s, -1), ord, "max"));
    c->dx[0] = gr_where(c, GR_OP(c, "equal", NULL, last, gr_const(c, -1, DT_I32)), G, zero);
    c->dx[2] = gr_where(c, GR_OP(c, "equal", NULL, ord, sc_read(c, s, last)), gu, zero);
    return true;
  }
  if (!strcmp(mode, "min") || !strcmp(mode, "max")) { /* acc = acc > u ? acc : u: the last tie wins */
    Expr *ou = sc_read(c, s, c->out);
    Expr *elig = gr_let(c, GR_OP(c, "equal", NULL, X2, ou));
    Expr *ord = sc_ordinal(c, s, &n);
    if (!ord) return false;
    ord = gr_let(c, ord);
    Expr *last = gr_let(c, sc_write(c, s, sc_fill(c, s, -1), gr_where(c, elig, ord, gr_const(c, -1, DT_I32)), "max"));
    Expr *d_wins = GR_OP(c, "logical_and", NULL, GR_OP(c, "equal", NULL, X0, c->out),
                         GR_OP(c, "equal", NULL, last, gr_const(c, -1, DT_I32)));
    Expr *win = GR_OP(c, "logical_and", NULL, elig, GR_OP(c, "equal", NULL, ord, sc_read(c, s, last)));
    c->dx[0] = gr_where(c, d_wins, G, zero);
    c->dx[2] = gr_where(c, win, gu, zero);
    return true;
  }
  if (!strcmp(mode, "mul")) {
    Expr *one = gr_scalar(c, 1, 0);
    Expr *zu = gr_let(c, GR_OP(c, "equal", NULL, X2, zero));
    Expr *nz = gr_let(c, sc_write(c, s, gr_zeros_like(c, X0), gr_where(c, zu, one, zero), "add")); /* zeros per q */
    Expr *pnz = gr_let(c, sc_write(c, s, gr_ones_like(c, X0), gr_where(c, zu, one, X2), "mul"));   /* Π nonzero u */
    c->dx[0] = gr_mul(c, G, gr_where(c, GR_OP(c, "greater", NULL, nz, zero), zero, pnz));
    Expr *nzr = gr_let(c, sc_read(c, s, nz)), *pr = gr_let(c, sc_read(c, s, pnz));
    Expr *excl = gr_where(c, zu, gr_where(c, GR_OP(c, "equal", NULL, nzr, one), pr, zero),
                          gr_where(c, GR_OP(c, "equal", NULL, nzr, zero), gr_div(c, pr, gr_where(c, zu, one, X2)), zero));
    c->dx[2] = gr_mul(c, gr_mul(c, gu, sc_read(c, s, X0)), excl);
    return true;
  }
  if (!strcmp(mode, "mean") && !s->nd) {
    Expr *half = gr_scalar(c, 0.5, 0);
    Expr *m = sc_write(c, s, gr_zeros_like(c, X0), gr_ones_like(c, X2), "add");
    c->dx[0] = gr_mul(c, G, GR_OP(c, "power", NULL, half, m));
    /* later_i = #{j > i on the line : idx_j = idx_i}, from the (n, n) pairs along the axis */
    n = s->udims[s->axis];
    int64_t a = s->axis, mshape[GRAD_MAX_RANK + 1];
    for (uint32_t i = 0; i <= s->urank; i++) mshape[i] = 1;
    mshape[a] = mshape[a + 1] = n;
    double *tri = gr_table(c, n, n, sizeof *tri);
    if (!tri) return false;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) tri[i * n + j] = j > i;
    int64_t nn[2] = {n, n};
    Expr *later_mask = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, mshape, s->urank + 1)),
                             gr_tensor_const(c, DT_F64, 2, nn, tri));
    Expr *same = GR_OP(c, "equal", NULL, GR_OP(c, "expand_dims", gr_fmt(c, "axis=%lld", (long long)(a + 1)), s->ridx),
                       GR_OP(c, "expand_dims", gr_fmt(c, "axis=%lld", (long long)a), s->ridx));
    Expr *later = GR_OP(c, "sum", gr_fmt(c, "axis=[%lld]", (long long)(a + 1)),
                        gr_mul(c, GR_OP(c, "cast", "dtype=\"float64\"", same), later_mask));
    Expr *w = GR_OP(c, "power", NULL, gr_const(c, 0.5, DT_F64), gr_add(c, later, gr_const(c, 1, DT_F64)));
    c->dx[2] = gr_mul(c, gu, gr_cast_like(c, w, X2));
    return true;
  }
  return gr_fail(c, "unknown combining mode \"%s\"", mode);
}

GRAD_RULE(SCATTER_ND) {
  Sc s = {.nd = true};
  int64_t idims[GRAD_MAX_RANK];
  if (!gr_shape(c, 1, idims)) return false;
  s.idx = s.ridx = X1;
  s.axis = idims[0]; /* M: the data axes the index tuples address */
  return scatter_rule(c, &s, gr_attr_str(c, "mode", "update"));
}

/* scatter_elements counts negative indices from the end; gather does not, so the
 * read-backs take them modulo the extent first. */
GRAD_RULE(SCATTER_ELEMENTS) {
  Sc s = {.nd = false};
  uint32_t rank = gr_rank(c, 0);
  int64_t dims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  s.axis = gr_attr_int(c, "axis", 0);
  if (s.axis < 0) s.axis += rank;
  if (s.axis < 0 || s.axis >= (int64_t)rank) return gr_fail(c, "axis is out of range");
  DType it = gr_dtype(c, 1);
  s.idx = X1;
  s.ridx = gr_let(c, GR_OP(c, "where", NULL, GR_OP(c, "less", NULL, X1, gr_const(c, 0, it)),
                           GR_OP(c, "add", NULL, X1, gr_const(c, (double)dims[s.axis], it)), X1));
  return scatter_rule(c, &s, gr_attr_str(c, "reduction", "update"));
}

/* sparse_to_dense(idx, values, default, output_shape) (and dyn.sparse_to_dense, whose 4th
 * input is the shape): every position holds the default or the value of the last index
 * row naming it. The same operator applied to the row numbers (default −1) gives each
 * position's writer W; a vector of values gets g summed per writer (a scatter-add into
 * n + 1 buckets, W + 1, dropping the default's bucket), a scalar value g summed where
 * any row wrote, the default g summed where none did. Indices get no gradient. */
static bool sparse_to_dense_rule(GradCtx *c, bool dyn) {
  int64_t idims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, idims)) return false;
  int64_t n = gr_rank(c, 0) == 0 ? 1 : idims[0];
  int32_t *ids = gr_table(c, 1, n, sizeof *ids);
  if (!ids) return false;
  for (int64_t j = 0; j < n; j++) ids[j] = (int32_t)j;
  Expr *rows = gr_tensor_const(c, DT_I32, 1, &n, ids), *none = gr_const(c, -1, DT_I32);
  Expr *w = dyn ? GR_OP(c, "dyn.sparse_to_dense", NULL, X0, rows, none, c->x[3])
                : gr_op_like(c, "sparse_to_dense", NULL, (Expr *[]){X0, rows, none}, 3);
  Expr *wf = gr_let(c, GR_OP(c, "reshape", "newshape=[-1]", w));
  Expr *gf = gr_let(c, GR_OP(c, "reshape", "newshape=[-1]", G));
  Expr *zero = gr_scalar(c, 0, -1);
  Expr *unwritten = GR_OP(c, "equal", NULL, wf, gr_const(c, -1, DT_I32));
  c->dx[2] = gr_cast_like(c, gr_sum(c, gr_where(c, unwritten, gf, zero), NULL, 0, false), X2);
  if (gr_rank(c, 1) == 0) {
    c->dx[1] = gr_cast_like(c, gr_sum(c, gr_where(c, unwritten, zero, gf), NULL, 0, false), X1);
    return true;
  }
  char dn[32];
  Expr *buckets = gr_op(c, "zeros", gr_fmt(c, "shape=[%lld], dtype=\"%s\"", (long long)(n + 1), dtype_name(gr_dtype(c, -1), dn)),
                        NULL, 0);
  Expr *sums = GR_OP(c, "scatter_elements", "axis=0, reduction=\"add\"", buckets, gr_add(c, wf, gr_const(c, 1, DT_I32)), gf);
  c->dx[1] = gr_cast_like(c, GR_OP(c, "strided_slice", gr_fmt(c, "begin=[1], end=[%lld]", (long long)(n + 1)), sums), X1);
  return true;
}
GRAD_RULE(SPARSE_TO_DENSE) { return sparse_to_dense_rule(c, false); }
GRAD_RULE(DYN_SPARSE_TO_DENSE) { return sparse_to_dense_rule(c, true); }
