/* ops/gradients/grad_movement.c — rules of TVM's data-movement operators that spec/ops.md does
 * not list (ops/kernels/k_movement.c). TVM registers no gradient for them; each is a
 * permutation or a selection, so its adjoint is the inverse rearrangement written with
 * existing operators (the printed gradient is plain Relay): depth_to_space and
 * space_to_depth undo each other (CRD through a channel transpose), space_to_batch_nd and
 * batch_to_space_nd undo each other with the paddings and crops exchanged. Elements the
 * forward dropped (extents TVM rounds down) get zeros by padding.
 */
#include <string.h>

#include "ops/gradients/grad.h"

#define G (c->g)

/* "[[a, b], [c, d]]" of the m pairs of attribute `key` (arena string); NULL after gr_fail */
static const char *pairs_text(GradCtx *c, const char *key, uint32_t m) {
  const AttrValue *v = gr_attr(c, key);
  if (!v || v->kind != AV_ARRAY || v->arr.n != m) return gr_fail(c, "%s must hold one pair per block", key), NULL;
  const char *s = "[";
  for (uint32_t i = 0; i < m; i++) {
    const AttrValue *p = v->arr.items[i];
    if (p->kind != AV_ARRAY || p->arr.n != 2 || p->arr.items[0]->kind != AV_INT || p->arr.items[1]->kind != AV_INT)
      return gr_fail(c, "%s entry %u must be a pair of integers", key, i), NULL;
    s = gr_fmt(c, "%s%s[%lld, %lld]", s, i ? ", " : "", (long long)p->arr.items[0]->i.value,
               (long long)p->arr.items[1]->i.value);
  }
  return gr_fmt(c, "%s]", s);
}

/* e padded with zeros after the end of each axis up to input 0's extents (the elements
 * the forward's rounded-down extents dropped); e itself when nothing was dropped */
static Expr *pad_to_input(GradCtx *c, Expr *e, const int64_t *have, const int64_t *want, uint32_t rank) {
  int64_t w[GRAD_MAX_RANK][2];
  bool any = false;
  for (uint32_t i = 0; i < rank; i++) {
    w[i][0] = 0;
    w[i][1] = want[i] - have[i];
    any |= w[i][1] != 0;
  }
  return any ? GR_OP(c, "nn.pad", gr_pad_width(c, rank, w), e, gr_scalar(c, 0, 0)) : e;
}

/* ---- depth_to_space, space_to_depth ---------------------------------------------------- */

/* depth_to_space (DCR) is undone by space_to_depth; CRD numbers the block offsets inside
 * each output channel instead, so the channels of space_to_depth's result, viewed as
 * (b², C'), are transposed to (C', b²) */
GRAD_RULE(NN_DEPTH_TO_SPACE) {
  int64_t dims[GRAD_MAX_RANK], have[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  const char *layout = gr_attr_str(c, "layout", "NCHW");
  bool nchw = strcmp(layout, "NHWC") != 0, crd = strcmp(gr_attr_str(c, "mode", "DCR"), "DCR") != 0;
  int64_t b = gr_attr_int(c, "block_size", 1), bb = b * b;
  int ch = nchw ? 1 : 3;
  Expr *s = GR_OP(c, "nn.space_to_depth", gr_fmt(c, "block_size=%lld, layout=\"%s\"", (long long)b, layout), G);
  memcpy(have, dims, sizeof(int64_t) * 4);
  have[ch] = dims[ch] / bb * bb;
  if (crd) {
    int64_t cf = dims[ch] / bb;
    int64_t view[5], axes[5];
    if (nchw) {
      int64_t v[5] = {dims[0], bb, cf, dims[2], dims[3]}, a[5] = {0, 2, 1, 3, 4};
      memcpy(view, v, sizeof v), memcpy(axes, a, sizeof a);
    } else {
      int64_t v[5] = {dims[0], dims[1], dims[2], bb, cf}, a[5] = {0, 1, 2, 4, 3};
      memcpy(view, v, sizeof v), memcpy(axes, a, sizeof a);
    }
    s = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, view, 5)), s);
    s = GR_OP(c, "transpose", gr_fmt(c, "axes=%s", gr_ints_text(c, axes, 5)), s);
    s = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, have, 4)), s);
  }
  c->dx[0] = pad_to_input(c, s, have, dims, 4);
  return true;
}

/* space_to_depth is undone by depth_to_space in DCR mode */
GRAD_RULE(NN_SPACE_TO_DEPTH) {
  int64_t dims[GRAD_MAX_RANK], have[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  const char *layout = gr_attr_str(c, "layout", "NCHW");
  bool nchw = strcmp(layout, "NHWC") != 0;
  int64_t b = gr_attr_int(c, "block_size", 1);
  Expr *s = GR_OP(c, "nn.depth_to_space", gr_fmt(c, "block_size=%lld, layout=\"%s\"", (long long)b, layout), G);
  memcpy(have, dims, sizeof(int64_t) * 4);
  for (int ax = nchw ? 2 : 1, k = 0; k < 2; k++, ax++) have[ax] = dims[ax] / b * b;
  c->dx[0] = pad_to_input(c, s, have, dims, 4);
  return true;
}

/* ---- space_to_batch_nd, batch_to_space_nd ------------------------------------------------ */

/* the rearrangement undone, the padding cropped */
GRAD_RULE(NN_SPACE_TO_BATCH_ND) {
  int64_t block[GRAD_MAX_RANK];
  int32_t m = gr_attr_ints(c, "block_shape", block, GRAD_MAX_RANK);
  if (m < 1 || m > GRAD_MAX_RANK) return gr_fail(c, "invalid block_shape");
  const char *pads = pairs_text(c, "paddings", (uint32_t)m);
  if (!pads) return false;
  c->dx[0] = GR_OP(c, "nn.batch_to_space_nd",
                   gr_fmt(c, "block_shape=%s, crops=%s", gr_ints_text(c, block, (uint32_t)m), pads), G);
  return true;
}

/* the crop padded back with zeros, the rearrangement undone */
GRAD_RULE(NN_BATCH_TO_SPACE_ND) {
  int64_t block[GRAD_MAX_RANK];
  int32_t m = gr_attr_ints(c, "block_shape", block, GRAD_MAX_RANK);
  if (m < 1 || m > GRAD_MAX_RANK) return gr_fail(c, "invalid block_shape");
  const char *crops = pairs_text(c, "crops", (uint32_t)m);
  if (!crops) return false;
  c->dx[0] = GR_OP(c, "nn.space_to_batch_nd",
                   gr_fmt(c, "block_shape=%s, paddings=%s", gr_ints_text(c, block, (uint32_t)m), crops), G);
  return true;
}

/* ---- masks and sequence reversal: the same selection applied to the adjoint ----------------- */

/* trilu(x, k): the adjoint masked the same way; k (an integer) gets none */
GRAD_RULE(TRILU) {
  c->dx[0] = gr_op_like(c, "trilu", NULL, (Expr *[]){G, X1}, 2);
  return true;
}

/* sequence_mask(x, len): the masked positions get zero; len gets none */
GRAD_RULE(SEQUENCE_MASK) {
  c->dx[0] = gr_op_like(c, "sequence_mask", "mask_value=0f", (Expr *[]){G, X1}, 2);
  return true;
}

/* reverse_sequence is its own inverse (each prefix reversed, the rest kept) */
GRAD_RULE(REVERSE_SEQUENCE) {
  c->dx[0] = gr_op_like(c, "reverse_sequence", NULL, (Expr *[]){G, X1}, 2);
  return true;
}

/* ---- matrix_set_diag ------------------------------------------------------------------------- */

/* The input gets the adjoint with the band set to zero; the diagonal reads the band back: the
 * adjoint's matrices flattened, one zero appended, and taken at a constant table of positions
 * (the zero for a slot no element of the band fills, the padding of short diagonals) */
GRAD_RULE(MATRIX_SET_DIAG) {
  int64_t dims[GRAD_MAX_RANK], ddims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims) || !gr_shape(c, 1, ddims)) return false;
  uint32_t n = gr_rank(c, 0), dn = gr_rank(c, 1);
  int64_t k1 = gr_attr_int(c, "k1", 0), k2 = gr_attr_int(c, "k2", 0), M = dims[n - 2], N = dims[n - 1];
  bool band = k1 != k2, super_right = gr_attr_bool(c, "super_diag_right_align", true),
       sub_right = gr_attr_bool(c, "sub_diag_right_align", false);
  int64_t rows = band ? k2 - k1 + 1 : 1, len = ddims[dn - 1], zero = M * N;
  int64_t *table = gr_table(c, rows, len, sizeof(int64_t));
  if (!table) return false;
  for (int64_t i = 0; i < rows * len; i++) table[i] = zero;
  for (int64_t r = 0; r < M; r++)
    for (int64_t col = 0; col < N; col++) {
      int64_t k = col - r, pos = k >= 0 ? r : col, row = 0;
      if (k < k1 || k > k2) continue;
      if (band) {
        int64_t dlen = k >= 0 ? (N - k < M ? N - k : M) : (N < M + k ? N : M + k);
        if (k >= 0 ? super_right : sub_right) pos += len - dlen;
        row = k2 - k;
      }
      if (pos < len) table[row * len + pos] = r * N + col;
    }
  c->dx[0] = gr_op_like(c, "matrix_set_diag", NULL, (Expr *[]){G, gr_zeros_like(c, X1)}, 2);
  int64_t flat[GRAD_MAX_RANK], w[GRAD_MAX_RANK][2] = {{0}};
  for (uint32_t i = 0; i + 2 < n; i++) flat[i] = dims[i];
  flat[n - 2] = M * N;
  w[n - 2][1] = 1;
  Expr *v = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, flat, n - 1)), G);
  v = GR_OP(c, "nn.pad", gr_pad_width(c, n - 1, w), v, gr_scalar(c, 0, 0));
  int64_t tshape[2] = {rows, len};
  Expr *ix = band ? gr_tensor_const(c, DTYPE(DT_INT, 64), 2, tshape, table)
                  : gr_tensor_const(c, DTYPE(DT_INT, 64), 1, tshape + 1, table);
  c->dx[1] = GR_OP(c, "take", gr_fmt(c, "axis=%u", n - 2), v, ix);
  return true;
}

/* ---- meshgrid ---------------------------------------------------------------------------------- */

/* field i of the result varies along one grid axis (i; 0 and 1 swapped for indexing="xy"):
 * input i gets the sum of adjoint i over every other axis */
GRAD_RULE(MESHGRID) {
  const Type *t = c->xt[0];
  if (!t || t->kind != TYPE_TUPLE || t->tuple.n == 0) return gr_fail(c, "the input is not a non-empty tuple");
  uint32_t n = t->tuple.n;
  bool xy = strcmp(gr_attr_str(c, "indexing", "ij"), "xy") == 0 && n >= 2;
  Expr **fs = arena_alloc(c->m->arena, n * sizeof *fs);
  Expr *g = gr_let(c, G);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t ax = xy && i < 2 ? 1 - i : i, k = 0;
    int64_t others[GRAD_MAX_RANK];
    for (uint32_t a = 0; a < n; a++)
      if (a != ax) others[k++] = a;
    Expr *s = k ? gr_sum(c, gr_proj(c, g, i), others, k, false) : gr_proj(c, g, i);
    const Type *f = t->tuple.fields[i];
    fs[i] = f && f->kind == TYPE_TENSOR && f->tensor.ndim == 0 ? GR_OP(c, "reshape", "newshape=[]", s) : s;
  }
  c->dx[0] = gr_tuple(c, fs, n);
  return true;
}

/* ---- integer operators: no derivative ----------------------------------------------------------- */

GRAD_NONE(UNRAVEL_INDEX)
GRAD_NONE(INVERT_PERMUTATION)

/* ---- nn.dilate ------------------------------------------------------------------------------------ */

/* the adjoint read back at the input's positions: a strided slice */
GRAD_RULE(NN_DILATE) {
  int64_t s[GRAD_MAX_RANK], b[GRAD_MAX_RANK] = {0}, e[GRAD_MAX_RANK];
  uint32_t r = gr_rank(c, -1);
  if (!gr_shape(c, -1, e)) return false;
  if (gr_attr_ints(c, "strides", s, GRAD_MAX_RANK) != (int32_t)r) return gr_fail(c, "strides must have one entry per axis");
  c->dx[0] = GR_OP(c, "strided_slice",
                   gr_fmt(c, "begin=%s, end=%s, strides=%s", gr_ints_text(c, b, r), gr_ints_text(c, e, r), gr_ints_text(c, s, r)), G);
  return true;
}

/* ---- sliding_window ---------------------------------------------------------------------------- */

/* Every input element gets the sum of the adjoint over the windows holding it: the adjoint's
 * window part (windows × offsets, Q elements) scattered with reduction="add" into the input's
 * windowed part (P elements) at a constant table of positions */
GRAD_RULE(SLIDING_WINDOW) {
  int64_t dims[GRAD_MAX_RANK], od[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims) || !gr_shape(c, -1, od)) return false;
  uint32_t nd = gr_rank(c, 0), axis = (uint32_t)gr_attr_int(c, "axis", 0), k = nd - axis;
  int64_t s[GRAD_MAX_RANK], P = 1, Q = 1;
  if (gr_attr_ints(c, "strides", s, GRAD_MAX_RANK) != (int32_t)k) return gr_fail(c, "strides must have %u entries", k);
  for (uint32_t i = axis; i < nd; i++) P *= dims[i];
  for (uint32_t i = axis; i < nd + k; i++) Q *= od[i];
  int64_t *table = gr_table(c, 1, Q, sizeof(int64_t));
  if (!table) return false;
  for (int64_t q = 0; q < Q; q++) { /* q's coordinates (windows..., offsets...) to the input position */
    int64_t rest = q, pos = 0, mul = 1, co[2 * GRAD_MAX_RANK];
    for (uint32_t i = nd + k; i-- > axis;) {
      co[i - axis] = rest % od[i];
      rest /= od[i];
    }
    for (uint32_t i = k; i-- > 0;) {
      pos += (co[i] * s[i] + co[k + i]) * mul;
      mul *= dims[axis + i];
    }
    table[q] = pos;
  }
  int64_t gshape[GRAD_MAX_RANK + 1], xshape[GRAD_MAX_RANK + 1];
  memcpy(gshape, dims, axis * sizeof *dims);
  memcpy(xshape, dims, axis * sizeof *dims);
  gshape[axis] = Q;
  xshape[axis] = P;
  const char *gs = gr_ints_text(c, gshape, axis + 1), *xs = gr_ints_text(c, xshape, axis + 1);
  Expr *g = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gs), G);
  Expr *ix = GR_OP(c, "broadcast_to", gr_fmt(c, "shape=%s", gs), gr_tensor_const(c, DTYPE(DT_INT, 64), 1, &Q, table));
  Expr *z = gr_zeros_like(c, GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", xs), X0));
  Expr *d = GR_OP(c, "scatter_elements", gr_fmt(c, "axis=%u, reduction=\"add\"", axis), z, ix, g);
  c->dx[0] = gr_reshape_like(c, d, X0);
  return true;
}
