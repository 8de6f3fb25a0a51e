/* ops/relations/rel_movement.c — type relations of TVM's data-movement operators that
 * spec/ops.md does not list (nn.depth_to_space, nn.space_to_depth, nn.space_to_batch_nd,
 * nn.batch_to_space_nd, ...). TVM's relations are the reference: its shapes, its extents
 * rounded down where it divides, plus the checks its compute makes when it builds the
 * operator (a layout other than NCHW/NHWC, a padded extent not divisible by its block).
 */
#include <string.h>

#include "ops/relations/rel_util.h"
#include "ops/relations/type_rel.h"

enum { MAXR = 16 };

static int done(TypeRelCtx *c, Type *o) { return rel_assign(c, rel_ninputs(c), o) ? REL_DONE : REL_FAIL; }

/* ------------------------------------------------- depth_to_space, space_to_depth */

/* The C, H, W positions of the subpixel operators' layout (NCHW or NHWC) and the block
 * size; REL_FAIL after reporting. */
static int subpixel_axes(TypeRelCtx *c, const Type *a, int *ch, int *h, int *w, int64_t *b) {
  const char *l = rel_attr_str(c, "layout", "NCHW");
  if (strcmp(l, "NCHW") && strcmp(l, "NHWC")) return rel_fail(c, "layout must be \"NCHW\" or \"NHWC\", found \"%s\"", l);
  if (a->tensor.ndim != 4) return rel_fail(c, "the input must have rank 4 (%s), found %s", l, rel_type_str(c, a));
  *ch = rel_layout_pos(l, 'C');
  *h = rel_layout_pos(l, 'H');
  *w = rel_layout_pos(l, 'W');
  *b = rel_attr_int(c, "block_size", 1);
  if (*b < 1 || *b > INT32_MAX) return rel_fail(c, "block_size must be a positive int32, found %lld", (long long)*b);
  return REL_DONE;
}

static Dim dim_div(Dim d, int64_t k) { return dim_known(d) ? dim_int(d.value / k) : dim_any(); }

/* (C, H, W) -> (C / b², H·b, W·b), C rounded down as TVM's indexdiv */
int rel_depth_to_space(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int ch, h, w;
  int64_t b;
  if (subpixel_axes(c, a, &ch, &h, &w, &b)) return REL_FAIL;
  const char *mode = rel_attr_str(c, "mode", "DCR");
  /* TVM's compute reads anything but DCR as CRD; its documentation and tests spell it CDR */
  if (strcmp(mode, "DCR") && strcmp(mode, "CRD") && strcmp(mode, "CDR"))
    return rel_fail(c, "mode must be \"DCR\" or \"CRD\" (\"CDR\"), found \"%s\"", mode);
  Type *o = rel_retype(c, a, a->tensor.dtype);
  o->tensor.dims[ch] = dim_div(a->tensor.dims[ch], b * b);
  o->tensor.dims[h] = dim_mul(c, a->tensor.dims[h], dim_int(b));
  o->tensor.dims[w] = dim_mul(c, a->tensor.dims[w], dim_int(b));
  return done(c, o);
}

/* (C, H, W) -> (C·b², H / b, W / b), H and W rounded down as TVM's indexdiv */
int rel_space_to_depth(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int ch, h, w;
  int64_t b;
  if (subpixel_axes(c, a, &ch, &h, &w, &b)) return REL_FAIL;
  Type *o = rel_retype(c, a, a->tensor.dtype);
  o->tensor.dims[ch] = dim_mul(c, a->tensor.dims[ch], dim_int(b * b));
  o->tensor.dims[h] = dim_div(a->tensor.dims[h], b);
  o->tensor.dims[w] = dim_div(a->tensor.dims[w], b);
  return done(c, o);
}

/* ------------------------------------------------- space_to_batch_nd, batch_to_space_nd */

/* block_shape (m entries, each >= 1, their product in *prod) and the m [before, after]
 * pairs of attribute `key` (non-negative); the data has rank > m. REL_FAIL after reporting. */
static int block_attrs(TypeRelCtx *c, const Type *a, const char *key, int64_t *block, int64_t (*pairs)[2], uint32_t *m,
                       int64_t *prod) {
  if (a->tensor.ndim < 2) return rel_fail(c, "the input must have rank 2 or more, found %s", rel_type_str(c, a));
  int32_t n = rel_attr_ints(c, "block_shape", block, MAXR);
  if (n < 1) return rel_fail(c, "block_shape must list one block size per spatial axis");
  if ((uint32_t)n >= a->tensor.ndim)
    return rel_fail(c, "block_shape has %d entries but the input %s has only %u axes after the batch", n,
                    rel_type_str(c, a), a->tensor.ndim - 1);
  *prod = 1;
  for (int32_t i = 0; i < n; i++) {
    if (block[i] < 1 || block[i] > INT32_MAX) return rel_fail(c, "block_shape entry %d must be a positive int32", i);
    if (__builtin_mul_overflow(*prod, block[i], prod)) return rel_fail(c, "the product of block_shape overflows");
  }
  const AttrValue *v = rel_attr(c, key);
  if (!v || v->kind != AV_ARRAY || v->arr.n != (uint32_t)n)
    return rel_fail(c, "%s must hold one [before, after] pair per block_shape entry (%d)", key, n);
  for (int32_t i = 0; i < n; i++) {
    const AttrValue *p = v->arr.items[i];
    if (p->kind != AV_ARRAY || p->arr.n != 2 || p->arr.items[0]->kind != AV_INT || p->arr.items[1]->kind != AV_INT)
      return rel_fail(c, "%s entry %d must be a pair of integers", key, i);
    pairs[i][0] = p->arr.items[0]->i.value;
    pairs[i][1] = p->arr.items[1]->i.value;
    if (pairs[i][0] < 0 || pairs[i][1] < 0 || pairs[i][0] > INT32_MAX || pairs[i][1] > INT32_MAX)
      return rel_fail(c, "%s entry %d must be non-negative int32 values", key, i);
  }
  *m = (uint32_t)n;
  return REL_DONE;
}

/* (N, S1..Sm, R...) -> (N·Πb, (S1 + p1)/b1, ..., R...); each padded extent divisible by its block */
int rel_space_to_batch_nd(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t block[MAXR], pad[MAXR][2], prod;
  uint32_t m;
  if (block_attrs(c, a, "paddings", block, pad, &m, &prod)) return REL_FAIL;
  Type *o = rel_retype(c, a, a->tensor.dtype);
  o->tensor.dims[0] = dim_mul(c, a->tensor.dims[0], dim_int(prod));
  for (uint32_t i = 0; i < m; i++) {
    Dim p = dim_add(c, dim_add(c, a->tensor.dims[i + 1], pad[i][0]), pad[i][1]);
    if (dim_known(p) && p.value % block[i] != 0)
      return rel_fail(c, "axis %u padded to %lld is not divisible by its block size %lld", i + 1, (long long)p.value,
                      (long long)block[i]);
    o->tensor.dims[i + 1] = dim_div(p, block[i]);
  }
  return done(c, o);
}

/* (N, S1..Sm, R...) -> (N/Πb, S1·b1 − c1, ..., R...); N divisible by Πb, no extent cropped below 0 */
int rel_batch_to_space_nd(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t block[MAXR], crop[MAXR][2], prod;
  uint32_t m;
  if (block_attrs(c, a, "crops", block, crop, &m, &prod)) return REL_FAIL;
  Dim n = a->tensor.dims[0];
  if (dim_known(n) && n.value % prod != 0)
    return rel_fail(c, "the batch %lld is not divisible by the product of block_shape (%lld)", (long long)n.value,
                    (long long)prod);
  Type *o = rel_retype(c, a, a->tensor.dtype);
  o->tensor.dims[0] = dim_div(n, prod);
  for (uint32_t i = 0; i < m; i++) {
    Dim s = dim_add(c, dim_mul(c, a->tensor.dims[i + 1], dim_int(block[i])), -(crop[i][0] + crop[i][1]));
    if (dim_known(s) && s.value < 0)
      return rel_fail(c, "crops [%lld, %lld] on axis %u leave a negative extent (%lld)", (long long)crop[i][0],
                      (long long)crop[i][1], i + 1, (long long)s.value);
    o->tensor.dims[i + 1] = s;
  }
  return done(c, o);
}
