/* ops/gradients/grad_shape.c — rules of the shape, joining, slicing and creation operators
 * (spec/gradient.md §4.4, §4.7 "shape, indexing, creation", §4.9).
 *
 * Reshape-like operators send the adjoint back with reshape_like; joins
 * split it and splits join it; slices scatter it into zeros. strided_slice
 * is inverted with nn.pad alone: along an axis with stride s the adjoint is
 * first "dilated" (a size-1 axis padded to s, merged back), then placed at
 * the slice's first position by padding (negative widths crop), so the rule
 * needs no scatter operator and works for any stride sign. Rules that need
 * concrete extents (split points, paddings, tile factors) read the static
 * shape and report a `?` extent as an error.
 */
#include <string.h>

#include "ops/gradients/grad.h"
#include "ops/layout.h"

#define G (c->g)

static const Type *field_type(GradCtx *c, uint32_t input, uint32_t i) {
  const Type *t = c->xt[input];
  return t && t->kind == TYPE_TUPLE && i < t->tuple.n ? t->tuple.fields[i] : NULL;
}

/* ---- reshape-like: the adjoint takes the input's shape back ------------------------- */

static bool back_to_shape(GradCtx *c) {
  c->dx[0] = gr_reshape_like(c, G, X0);
  return true;
}
GRAD_RULE(RESHAPE) { return back_to_shape(c); }
GRAD_RULE(NN_BATCH_FLATTEN) { return back_to_shape(c); }
GRAD_RULE(SQUEEZE) { return back_to_shape(c); }
GRAD_RULE(EXPAND_DIMS) { return back_to_shape(c); }
GRAD_RULE(CONTRIB_REVERSE_RESHAPE) { return back_to_shape(c); }
GRAD_RULE(RESHAPE_LIKE) { return back_to_shape(c); }
/* the dynamic forms: the shape / axis inputs get none */
GRAD_RULE(DYN_RESHAPE) { return back_to_shape(c); }
GRAD_RULE(DYN_SQUEEZE) { return back_to_shape(c); }
GRAD_RULE(DYN_EXPAND_DIMS) { return back_to_shape(c); }

/* transpose by the inverse permutation (axes=None reverses, its own inverse) */
GRAD_RULE(TRANSPOSE) {
  int64_t axes[GRAD_MAX_RANK], inv[GRAD_MAX_RANK];
  int32_t n = gr_attr_ints(c, "axes", axes, GRAD_MAX_RANK);
  if (n <= 0) {
    c->dx[0] = GR_OP(c, "transpose", NULL, G);
    return true;
  }
  if (n > GRAD_MAX_RANK) return gr_fail(c, "too many axes");
  for (int32_t i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + n : axes[i];
    if (a < 0 || a >= n) return gr_fail(c, "axis %lld is out of range", (long long)axes[i]);
    inv[a] = i;
  }
  c->dx[0] = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, inv, (uint32_t)n)), G);
  return true;
}

/* True when the forward padded an axis: a sub-axis of dst whose factor does
 * not divide x's extent along its primal axis in src (NCHW 6 -> NCHW4c 8). */
static bool layout_pads(const char *src, const char *dst, const int64_t *xdims) {
  Layout ls, ld;
  if (!layout_parse(src, &ls) || !layout_parse(dst, &ld)) return false;
  for (int32_t i = 0; i < ld.n; i++) {
    if (!ld.factor[i]) continue;
    for (int32_t j = 0; j < ls.n; j++)
      if (!ls.factor[j] && ls.ax[j] == ld.ax[i] - 'a' + 'A' && xdims[j] % ld.factor[i]) return true;
  }
  return false;
}

/* layout_transform back; where the forward padded, the padding is cropped
 * (TVM's rule stops at the transform back, whose shape is then not x's). */
GRAD_RULE(LAYOUT_TRANSFORM) {
  const char *src = gr_attr_str(c, "src_layout", ""), *dst = gr_attr_str(c, "dst_layout", "");
  Expr *back = GR_OP(c, "layout_transform", gr_fmt(c, "src_layout=\"%s\", dst_layout=\"%s\"", dst, src), G);
  int64_t xd[GRAD_MAX_RANK];
  uint32_t rank = gr_rank(c, 0);
  if (gr_shape(c, 0, xd) && layout_pads(src, dst, xd)) {
    int64_t zeros[GRAD_MAX_RANK] = {0};
    back = GR_OP(c, "strided_slice",
                 gr_fmt(c, "begin=%s, end=%s, strides=[1]", gr_ints_text(c, zeros, rank), gr_ints_text(c, xd, rank)),
                 back);
  }
  c->dx[0] = back;
  return true;
}

/* ---- joining and splitting ------------------------------------------------------- */

static int64_t norm_axis(int64_t axis, uint32_t rank) { return axis < 0 ? axis + (int64_t)rank : axis; }

/* concatenate's adjoint when a field is empty along the axis: split (as TVM's
 * rule uses it) refuses a zero-width piece, so each field gets its own
 * strided_slice of g (size mode: -1 = the whole extent on the other axes). */
static bool concat_adjoint_by_slices(GradCtx *c, const int64_t *cuts, uint32_t k, int64_t axis, uint32_t rank) {
  Expr **fs = arena_alloc(c->m->arena, k * sizeof *fs);
  int64_t *begin = arena_alloc(c->m->arena, (rank ? rank : 1) * sizeof *begin);
  int64_t *size = arena_alloc(c->m->arena, (rank ? rank : 1) * sizeof *size);
  for (uint32_t i = 0; i < k; i++) {
    int64_t start = i ? cuts[i - 1] : 0;
    for (uint32_t a = 0; a < rank; a++) {
      begin[a] = (int64_t)a == axis ? start : 0;
      size[a] = (int64_t)a == axis ? (i + 1 < k ? cuts[i] - start : -1) : -1;
    }
    fs[i] = GR_OP(c, "strided_slice",
                  gr_fmt(c, "begin=%s, end=%s, strides=[1], slice_mode=\"size\"", gr_ints_text(c, begin, rank),
                         gr_ints_text(c, size, rank)),
                  G);
  }
  c->dx[0] = gr_tuple(c, fs, k);
  return true;
}

/* concatenate((x0..xk), axis): the tuple split(g, [e0, e0+e1, ...], axis) */
GRAD_RULE(CONCATENATE) {
  const Type *t = c->xt[0];
  if (!t || t->kind != TYPE_TUPLE || t->tuple.n == 0) return gr_fail(c, "the input is not a non-empty tuple");
  uint32_t k = t->tuple.n, rank = gr_rank(c, -1);
  int64_t axis = norm_axis(gr_attr_int(c, "axis", 0), rank);
  int64_t *cuts = arena_alloc(c->m->arena, (k ? k : 1) * sizeof *cuts), at = 0;
  bool empty_field = false;
  for (uint32_t i = 0; i < k; i++) {
    const Type *f = field_type(c, 0, i);
    bool known = f && f->kind == TYPE_TENSOR && (uint32_t)axis < f->tensor.ndim && f->tensor.dims[axis].kind == DIM_INT;
    if (i + 1 == k) {
      empty_field |= known && f->tensor.dims[axis].value == 0;
      break;
    }
    if (!known) return gr_fail(c, "the extent of field %u along axis %lld must be known", i, (long long)axis);
    empty_field |= f->tensor.dims[axis].value == 0;
    at += f->tensor.dims[axis].value;
    cuts[i] = at;
  }
  if (empty_field) return concat_adjoint_by_slices(c, cuts, k, axis, rank);
  c->dx[0] = GR_OP(c, "split", gr_fmt(c, "indices_or_sections=%s, axis=%lld", gr_ints_text(c, cuts, k - 1), (long long)axis), G);
  return true;
}

/* stack((x0..xk), axis): field i gets squeeze(split(g, k+1, axis).i, axis=[axis]) */
GRAD_RULE(STACK) {
  const Type *t = c->xt[0];
  if (!t || t->kind != TYPE_TUPLE || t->tuple.n == 0) return gr_fail(c, "the input is not a non-empty tuple");
  uint32_t k = t->tuple.n;
  int64_t axis = norm_axis(gr_attr_int(c, "axis", 0), gr_rank(c, -1));
  Expr *parts = gr_let(c, GR_OP(c, "split", gr_fmt(c, "indices_or_sections=%u, axis=%lld", k, (long long)axis), G));
  Expr **fs = arena_alloc(c->m->arena, k * sizeof *fs);
  for (uint32_t i = 0; i < k; i++)
    fs[i] = GR_OP(c, "squeeze", gr_fmt(c, "axis=[%lld]", (long long)axis), gr_proj(c, parts, i));
  c->dx[0] = gr_tuple(c, fs, k);
  return true;
}

/* split(x) -> (y0..yk): x gets concatenate((g.0, ..., g.k), axis) */
GRAD_RULE(SPLIT) {
  const Type *t = c->out_t;
  if (!t || t->kind != TYPE_TUPLE) return gr_fail(c, "the result is not a tuple");
  uint32_t k = t->tuple.n;
  Expr **fs = arena_alloc(c->m->arena, (k ? k : 1) * sizeof *fs);
  for (uint32_t i = 0; i < k; i++) fs[i] = gr_proj(c, G, i);
  int64_t axis = norm_axis(gr_attr_int(c, "axis", 0), gr_rank(c, 0));
  c->dx[0] = GR_OP(c, "concatenate", gr_fmt(c, "axis=%lld", (long long)axis), gr_tuple(c, fs, k));
  return true;
}

/* ---- slicing ------------------------------------------------------------------- */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* One axis of strided_slice in canonical form, as the relation computes it
 * (ops/relations/rel_shape.c): first index b, step s, count k. */
static void slice_axis(int64_t n, int64_t b, int64_t e, int64_t s, bool bnone, bool enone, bool size_mode,
                       int64_t *first, int64_t *step, int64_t *count) {
  if (size_mode) s = 1;
  if (bnone) b = s > 0 ? 0 : n - 1;
  if (b < 0) b += n;
  b = s > 0 ? clamp64(b, 0, n) : clamp64(b, -1, n - 1);
  if (size_mode) {
    if (enone || e < 0) e = n;
    else e = b + clamp64(e, 0, n);
  } else if (enone) {
    e = s > 0 ? n : 0;
  } else if (e < 0) {
    e += n;
  }
  e = s > 0 ? clamp64(e, 0, n) : clamp64(e, -1, n - 1);
  int64_t span = b > e ? b - e : e - b, as = s > 0 ? s : -s;
  *count = s > 0 ? (b < e ? (span + as - 1) / as : 0) : (b > e ? (span + as - 1) / as : 0);
  *first = b;
  *step = s;
}

/* Scatters g (extent count[i] along axis i) into zeros of extent dims[i], element j
 * of axis i going to first[i] + j·step[i]. */
static Expr *unslice(GradCtx *c, Expr *g, uint32_t rank, const int64_t *dims, const int64_t *first,
                     const int64_t *step, const int64_t *count) {
  int64_t cur[GRAD_MAX_RANK];
  memcpy(cur, count, rank * sizeof *cur);
  Expr *zero = gr_scalar(c, 0, -1);
  int64_t pads[GRAD_MAX_RANK][2];
  for (uint32_t i = 0; i < rank; i++) {
    int64_t s = step[i], lo = first[i];
    if (cur[i] > 0 && s < 0) { /* walk the selected positions upwards */
      g = GR_OP(c, "reverse", gr_fmt(c, "axis=%u", i), g);
      lo = first[i] + (cur[i] - 1) * s;
      s = -s;
    }
    g = gr_interleave_zeros(c, g, i, rank, cur, s, zero); /* dilate: k -> k·s */
    pads[i][0] = lo;
    pads[i][1] = dims[i] - lo - cur[i];
  }
  return GR_OP(c, "nn.pad", gr_pad_width(c, rank, pads), g, zero);
}

GRAD_RULE(STRIDED_SLICE) {
  int64_t dims[GRAD_MAX_RANK], bg[GRAD_MAX_RANK], en[GRAD_MAX_RANK], st[GRAD_MAX_RANK], ax[GRAD_MAX_RANK];
  int64_t first[GRAD_MAX_RANK], step[GRAD_MAX_RANK], count[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  uint32_t rank = gr_rank(c, 0);
  int32_t nb = gr_attr_ints(c, "begin", bg, GRAD_MAX_RANK), ne = gr_attr_ints(c, "end", en, GRAD_MAX_RANK);
  int32_t ns = gr_attr_ints(c, "strides", st, GRAD_MAX_RANK), na = gr_attr_ints(c, "axes", ax, GRAD_MAX_RANK);
  bool size_mode = strcmp(gr_attr_str(c, "slice_mode", "end"), "size") == 0;
  const AttrValue *bv = gr_attr(c, "begin"), *ev = gr_attr(c, "end");
  if (ns < 0) ns = 0;
  for (uint32_t i = 0; i < rank; i++) {
    first[i] = 0;
    step[i] = 1;
    count[i] = dims[i];
  }
  for (int32_t j = 0; j < (na >= 0 ? na : (int32_t)rank); j++) {
    int64_t axis = na >= 0 ? norm_axis(ax[j], rank) : j;
    if (axis < 0 || axis >= (int64_t)rank) return gr_fail(c, "axis %lld is out of range", (long long)ax[j]);
    if (na < 0 && j >= nb && j >= ne) continue;
    bool bnone = j >= nb || (bv && bv->kind == AV_ARRAY && bv->arr.items[j]->kind != AV_INT);
    bool enone = j >= ne || (ev && ev->kind == AV_ARRAY && ev->arr.items[j]->kind != AV_INT);
    int64_t s = na >= 0 ? (ns == 0 ? 1 : ns == 1 ? st[0] : st[j]) : (j < ns ? st[j] : 1);
    slice_axis(dims[axis], j < nb ? bg[j] : 0, j < ne ? en[j] : 0, s, bnone, enone, size_mode, &first[axis],
               &step[axis], &count[axis]);
  }
  c->dx[0] = unslice(c, G, rank, dims, first, step, count);
  return true;
}

/* slice_like takes the leading part of each sliced axis: pad it back */
GRAD_RULE(SLICE_LIKE) {
  int64_t dims[GRAD_MAX_RANK], outd[GRAD_MAX_RANK], first[GRAD_MAX_RANK] = {0}, step[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims) || !gr_shape(c, -1, outd)) return false;
  uint32_t rank = gr_rank(c, 0);
  for (uint32_t i = 0; i < rank; i++) step[i] = 1;
  c->dx[0] = unslice(c, G, rank, dims, first, step, outd);
  return true;
}

/* ---- broadcasting, tiling, reversing, scans ----------------------------------------- */

GRAD_RULE(BROADCAST_TO) { c->dx[0] = gr_unb(c, G, 0); return true; }
GRAD_RULE(BROADCAST_TO_LIKE) { c->dx[0] = gr_unb(c, G, 0); return true; }
/* collapse_sum_like / collapse_sum_to: broadcast back (§4.9) */
GRAD_RULE(COLLAPSE_SUM_LIKE) { c->dx[0] = gr_broadcast_to_like(c, G, X0); return true; }
GRAD_RULE(COLLAPSE_SUM_TO) { c->dx[0] = gr_broadcast_to_like(c, G, X0); return true; }

/* tile: g viewed as (r0, d0, r1, d1, ...), summed over the repetition axes */
GRAD_RULE(TILE) {
  int64_t reps[GRAD_MAX_RANK], dims[GRAD_MAX_RANK], view[2 * GRAD_MAX_RANK], even[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  int32_t q = gr_attr_ints(c, "reps", reps, GRAD_MAX_RANK);
  uint32_t r = gr_rank(c, 0), R = r > (uint32_t)(q > 0 ? q : 0) ? r : (uint32_t)q;
  if (R > GRAD_MAX_RANK) return gr_fail(c, "rank above %d", GRAD_MAX_RANK);
  for (uint32_t i = 0; i < R; i++) {
    int64_t d = i + r >= R ? dims[i + r - R] : 1;
    int64_t rep = q > 0 && i + (uint32_t)q >= R ? reps[i + q - R] : 1;
    view[2 * i] = rep;
    view[2 * i + 1] = d;
    even[i] = 2 * i;
  }
  Expr *v = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, view, 2 * R)), G);
  c->dx[0] = gr_reshape_like(c, gr_sum(c, v, even, R, false), X0);
  return true;
}

/* repeat(x, r, axis): g's axis viewed as (d, r), the r axis summed */
GRAD_RULE(REPEAT) {
  int64_t dims[GRAD_MAX_RANK], view[GRAD_MAX_RANK + 1];
  if (!gr_shape(c, 0, dims)) return false;
  uint32_t rank = gr_rank(c, 0);
  int64_t r = gr_attr_int(c, "repeats", 1);
  const AttrValue *av = gr_attr(c, "axis");
  if (!av || av->kind != AV_INT) { /* flattened */
    int64_t total = 1;
    for (uint32_t i = 0; i < rank; i++) total *= dims[i];
    Expr *v = GR_OP(c, "reshape", gr_fmt(c, "newshape=[%lld, %lld]", (long long)total, (long long)r), G);
    c->dx[0] = gr_reshape_like(c, GR_OP(c, "sum", "axis=[1]", v), X0);
    return true;
  }
  int64_t axis = norm_axis(av->i.value, rank);
  uint32_t k = 0;
  for (uint32_t i = 0; i < rank; i++) {
    view[k++] = dims[i];
    if ((int64_t)i == axis) view[k++] = r;
  }
  Expr *v = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, view, rank + 1)), G);
  c->dx[0] = GR_OP(c, "sum", gr_fmt(c, "axis=[%lld]", (long long)(axis + 1)), v);
  return true;
}

GRAD_RULE(REVERSE) { c->dx[0] = gr_op_like(c, "reverse", NULL, &c->g, 1); return true; }

/* cumsum: the adjoint is the reversed cumulative sum of the reversed adjoint */
GRAD_RULE(CUMSUM) {
  const AttrValue *av = gr_attr(c, "axis");
  bool excl = gr_attr_bool(c, "exclusive", false);
  Expr *g = G;
  int64_t axis = 0;
  if (av && av->kind == AV_INT) axis = norm_axis(av->i.value, gr_rank(c, 0));
  const char *ax = gr_fmt(c, "axis=%lld", (long long)axis);
  Expr *r = GR_OP(c, "reverse", ax, g);
  r = GR_OP(c, "cumsum", gr_fmt(c, "axis=%lld, exclusive=%s", (long long)axis, excl ? "True" : "False"), r);
  r = GR_OP(c, "reverse", ax, r);
  if (!av || av->kind != AV_INT) r = gr_reshape_like(c, r, X0);
  c->dx[0] = gr_cast_like(c, r, X0);
  return true;
}

/* ---- creation ---------------------------------------------------------------------- */

GRAD_NONE(ZEROS)
GRAD_NONE(ONES)
GRAD_NONE(SHAPE_OF)
GRAD_NONE(NDARRAY_SIZE)
/* full(fill): every element is the fill value */
GRAD_RULE(FULL) { c->dx[0] = gr_cast_like(c, gr_sum(c, G, NULL, 0, false), X0); return true; }
GRAD_RULE(FULL_LIKE) { c->dx[1] = gr_cast_like(c, gr_sum(c, G, NULL, 0, false), X1); return true; }
/* arange: out_i = start + i·step, the length piecewise constant */
GRAD_RULE(ARANGE) {
  c->dx[0] = gr_cast_like(c, gr_sum(c, G, NULL, 0, false), X0);
  Expr *idx = gr_div(c, gr_sub(c, c->out, gr_cast_like(c, X0, c->out)), gr_cast_like(c, X2, c->out));
  c->dx[2] = gr_cast_like(c, gr_sum(c, gr_mul(c, G, idx), NULL, 0, false), X2);
  return true;
}
/* one_hot(idx, on, off): on gets Σ g where the position is hot, off the rest
 * (masked by position, not by value: §4.4) */
GRAD_RULE(ONE_HOT) {
  DType dt = gr_dtype(c, -1);
  Expr *mask = gr_op_like(c, "one_hot", NULL, (Expr *[]){X0, gr_const(c, 1, dt), gr_const(c, 0, dt)}, 3);
  Expr *hot = gr_let(c, gr_sum(c, gr_mul(c, G, mask), NULL, 0, false));
  c->dx[1] = gr_cast_like(c, hot, X1);
  c->dx[2] = gr_cast_like(c, gr_sub(c, gr_sum(c, G, NULL, 0, false), hot), X2);
  return true;
}

/* cumprod: y_k = Π_{j ≤ k} x_j (exclusive: j < k), so
 *   dx_i = Σ_{k ≥ i} g_k Π_{j ≤ k, j ≠ i} x_j = E_i · Σ_{k ≥ i} g_k Q_{i,k},
 * E_i = Π_{j < i} x_j and Q_{i,k} = Π_{i < j ≤ k} x_j, the row-wise cumulative product of
 * the n × n matrix X[i, j] = (j > i ? x_j : 1). Exact with zeros (no division); the
 * extra axis costs n times the input's memory. */
GRAD_RULE(CUMPROD) {
  int64_t dims[GRAD_MAX_RANK], perm[GRAD_MAX_RANK], inv[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  uint32_t rank = gr_rank(c, 0);
  bool excl = gr_attr_bool(c, "exclusive", false);
  const AttrValue *av = gr_attr(c, "axis");
  Expr *x = X0, *g = G;
  int64_t n, axis = 0;
  bool flat = !av || av->kind != AV_INT, moved = false;
  if (flat) {
    n = 1;
    for (uint32_t i = 0; i < rank; i++)
      if (__builtin_mul_overflow(n, dims[i], &n)) return gr_fail(c, "the input has too many elements");
    x = GR_OP(c, "reshape", gr_fmt(c, "newshape=[%lld]", (long long)n), X0);
    rank = 1;
  } else {
    axis = norm_axis(av->i.value, rank);
    n = dims[axis];
    if ((uint32_t)axis + 1 != rank) { /* the scanned axis last */
      uint32_t k = 0;
      for (uint32_t i = 0; i < rank; i++)
        if ((int64_t)i != axis) perm[k++] = i;
      perm[k] = axis;
      for (uint32_t i = 0; i < rank; i++) inv[perm[i]] = i;
      const char *p = gr_fmt(c, "axes=%s", gr_ints_text(c, perm, rank));
      x = GR_OP(c, "transpose", p, x);
      g = GR_OP(c, "transpose", p, g);
      moved = true;
    }
  }
  g = gr_cast_like(c, g, X0);
  x = gr_let(c, x);
  /* masks over (i, j): j > i selects x_j; k ≥ i (k > i when exclusive) selects g_k */
  uint8_t *above = gr_table(c, n, n, 1), *keep = above ? gr_table(c, n, n, 1) : NULL;
  if (!keep) return false;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      above[i * n + j] = j > i;
      keep[i * n + j] = excl ? j > i : j >= i;
    }
  int64_t sq[2] = {n, n};
  Expr *row = GR_OP(c, "expand_dims", "axis=-2", x); /* (.., 1, n) */
  Expr *X = gr_where(c, gr_tensor_const(c, DT_BOOL_T, 2, sq, above), row, gr_ones_like(c, row));
  Expr *Q = GR_OP(c, "cumprod", gr_fmt(c, "axis=-1, exclusive=%s", excl ? "True" : "False"), X);
  Expr *gk = GR_OP(c, "expand_dims", "axis=-2", g);
  Expr *terms = gr_where(c, gr_tensor_const(c, DT_BOOL_T, 2, sq, keep), gr_mul(c, Q, gk), gr_zeros_like(c, Q));
  Expr *E = GR_OP(c, "cumprod", "axis=-1, exclusive=True", x);
  Expr *d = gr_mul(c, E, GR_OP(c, "sum", "axis=[-1]", terms));
  if (moved) d = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, inv, rank)), d);
  if (flat) d = gr_reshape_like(c, d, X0);
  c->dx[0] = d;
  return true;
}

/* ---- the dyn.* creation and broadcasting forms: the same mathematics with the shape-like
 * inputs read at run time (they get no gradient); the adjoints never need the result's
 * extents, which are `?` here ---------------------------------------------------------- */
GRAD_NONE(DYN_ZEROS)
GRAD_NONE(DYN_ONES)
/* dyn.full(fill, shape) */
GRAD_RULE(DYN_FULL) { c->dx[0] = gr_cast_like(c, gr_sum(c, G, NULL, 0, false), X0); return true; }
/* dyn.broadcast_to(x, shape): g summed back to x's (static) shape */
GRAD_RULE(DYN_BROADCAST_TO) {
  c->dx[0] = GR_OP(c, "collapse_sum_like", NULL, G, X0);
  return true;
}
/* dyn.one_hot(idx, on, off, depth): the one_hot rule with the run-time depth */
GRAD_RULE(DYN_ONE_HOT) {
  DType dt = gr_dtype(c, -1);
  Expr *mask = gr_op_like(c, "dyn.one_hot", NULL, (Expr *[]){X0, gr_const(c, 1, dt), gr_const(c, 0, dt), c->x[3]}, 4);
  Expr *hot = gr_let(c, gr_sum(c, gr_mul(c, G, mask), NULL, 0, false));
  c->dx[1] = gr_cast_like(c, hot, X1);
  c->dx[2] = gr_cast_like(c, gr_sub(c, gr_sum(c, G, NULL, 0, false), hot), X2);
  return true;
}
/* dyn.tile(x, reps): tile's rule with the view (r0, d0, r1, d1, ...) built at run time:
 * reps (left-padded with 1s to the result's rank R) interleaved with x's static extents */
GRAD_RULE(DYN_TILE) {
  int64_t dims[GRAD_MAX_RANK], rl[1], even[GRAD_MAX_RANK], full[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims) || !gr_shape(c, 1, rl)) return false;
  uint32_t r = gr_rank(c, 0), q = (uint32_t)rl[0], R = r > q ? r : q;
  if (R > GRAD_MAX_RANK) return gr_fail(c, "rank above %d", GRAD_MAX_RANK);
  Expr *reps = GR_OP(c, "cast", "dtype=\"int64\"", X1);
  if (q < R) {
    int64_t ones[GRAD_MAX_RANK], nq = R - q;
    for (uint32_t i = 0; i < R - q; i++) ones[i] = 1;
    reps = GR_OP(c, "concatenate", "axis=0", gr_tuple(c, (Expr *[]){gr_tensor_const(c, DT_I64, 1, &nq, ones), reps}, 2));
  }
  for (uint32_t i = 0; i < R; i++) {
    full[i] = i + r >= R ? dims[i + r - R] : 1;
    even[i] = 2 * i;
  }
  int64_t nR = R;
  Expr *ext = gr_tensor_const(c, DT_I64, 1, &nR, full);
  Expr *view = GR_OP(c, "reshape", "newshape=[-1]", GR_OP(c, "stack", "axis=1", gr_tuple(c, (Expr *[]){reps, ext}, 2)));
  Expr *v = GR_OP(c, "dyn.reshape", NULL, G, view);
  c->dx[0] = gr_reshape_like(c, gr_sum(c, v, even, R, false), X0);
  return true;
}
