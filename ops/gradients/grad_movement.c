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
