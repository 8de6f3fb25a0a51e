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

/* ------------------------------------------------------------ masks: trilu, sequence_mask */

static bool is_int(DType t) { return t.lanes == 1 && (t.code == DT_INT || t.code == DT_UINT); }
static bool is_numeric(DType t) { return t.lanes == 1 && (t.code == DT_INT || t.code == DT_UINT || t.code == DT_FLOAT || t.code == DT_BFLOAT); }

/* trilu(data, k): data of rank 2 or more, k a scalar (TVM: a 0-D tensor, cast to int32) */
int rel_trilu(TypeRelCtx *c) {
  const Type *a, *k;
  if (!rel_tensors(c, 2, &a, &k)) return rel_pending(c);
  if (a->tensor.ndim < 2) return rel_fail(c, "the data must have rank 2 or more, found %s", rel_type_str(c, a));
  if (k->tensor.ndim != 0 || !is_numeric(k->tensor.dtype))
    return rel_fail(c, "k must be a numeric scalar (a 0-D tensor), found %s", rel_type_str(c, k));
  return done(c, (Type *)a);
}

/* sequence_mask(data, valid_length): the length axis 0 or 1, valid_length a vector along the
 * other one (refined to that extent, as TVM's relation assigns it) */
int rel_sequence_mask(TypeRelCtx *c) {
  const Type *a, *v;
  if (!rel_tensors(c, 2, &a, &v)) return rel_pending(c);
  int64_t axis = rel_attr_int(c, "axis", 0);
  if (axis != 0 && axis != 1) return rel_fail(c, "axis must be 0 or 1, found %lld", (long long)axis);
  if (a->tensor.ndim < 2) return rel_fail(c, "the data must have rank 2 or more, found %s", rel_type_str(c, a));
  if (v->tensor.ndim != 1 || !is_numeric(v->tensor.dtype))
    return rel_fail(c, "valid_length must be a numeric vector, found %s", rel_type_str(c, v));
  Type *vl = rel_new_tensor(c, v->tensor.dtype, 1);
  vl->tensor.dims[0] = a->tensor.dims[1 - axis];
  if (!rel_assign(c, 1, vl)) return REL_FAIL;
  return done(c, (Type *)a);
}

/* reverse_sequence(data, seq_lengths): seq_lengths an integer vector as long as the batch axis */
int rel_reverse_sequence(TypeRelCtx *c) {
  const Type *a, *s;
  if (!rel_tensors(c, 2, &a, &s)) return rel_pending(c);
  int64_t nd = a->tensor.ndim, seq = rel_attr_int(c, "seq_axis", 1), batch = rel_attr_int(c, "batch_axis", 0);
  if (!rel_norm_axis(&batch, nd)) return rel_fail(c, "batch_axis %lld is out of range for rank %lld", (long long)batch, (long long)nd);
  if (!rel_norm_axis(&seq, nd)) return rel_fail(c, "seq_axis %lld is out of range for rank %lld", (long long)seq, (long long)nd);
  if (s->tensor.ndim != 1 || !is_int(s->tensor.dtype))
    return rel_fail(c, "seq_lengths must be an integer vector, found %s", rel_type_str(c, s));
  if (!dim_compat(s->tensor.dims[0], a->tensor.dims[batch]))
    return rel_fail(c, "seq_lengths %s does not match the batch axis %lld of %s", rel_type_str(c, s), (long long)batch,
                    rel_type_str(c, a));
  return done(c, (Type *)a);
}

/* ------------------------------------------------------------ matrix_set_diag */

/* matrix_set_diag(input, diagonal): diagonals k1..k2 of the last two axes (M, N), -M < k1 <= k2 < N;
 * the diagonal is (batch..., L) for one diagonal, (batch..., k2 - k1 + 1, L) for a band, L at least
 * the longest diagonal of the band (TVM states the shapes without enforcing them and reads out of
 * bounds when they are wrong; relayc rejects) */
int rel_matrix_set_diag(TypeRelCtx *c) {
  const Type *a, *d;
  if (!rel_tensors(c, 2, &a, &d)) return rel_pending(c);
  int64_t k1 = rel_attr_int(c, "k1", 0), k2 = rel_attr_int(c, "k2", 0);
  uint32_t n = a->tensor.ndim;
  if (n < 2) return rel_fail(c, "the input must have rank 2 or more, found %s", rel_type_str(c, a));
  if (d->tensor.dtype.code != a->tensor.dtype.code || d->tensor.dtype.bits != a->tensor.dtype.bits)
    return rel_fail(c, "the diagonal %s and the input %s have different dtypes", rel_type_str(c, d), rel_type_str(c, a));
  if (k1 < INT32_MIN || k2 > INT32_MAX) return rel_fail(c, "k1 and k2 must be int32 values");
  if (k1 > k2) return rel_fail(c, "k1 (%lld) must not exceed k2 (%lld)", (long long)k1, (long long)k2);
  Dim M = a->tensor.dims[n - 2], N = a->tensor.dims[n - 1];
  if ((dim_known(M) && k1 <= -M.value) || (dim_known(N) && k2 >= N.value))
    return rel_fail(c, "diagonals %lld..%lld do not all cross the %s matrices", (long long)k1, (long long)k2, rel_type_str(c, a));
  bool band = k1 != k2;
  uint32_t dn = band ? n : n - 1;
  bool fits = d->tensor.ndim == dn;
  for (uint32_t i = 0; fits && i < n - 2; i++) fits = dim_compat(d->tensor.dims[i], a->tensor.dims[i]);
  if (fits && band) fits = dim_compat(d->tensor.dims[dn - 2], dim_int(k2 - k1 + 1));
  if (fits && dim_known(M) && dim_known(N) && dim_known(d->tensor.dims[dn - 1])) {
    int64_t longest = M.value + (k2 < 0 ? k2 : 0);
    if (N.value - (k1 > 0 ? k1 : 0) < longest) longest = N.value - (k1 > 0 ? k1 : 0);
    fits = d->tensor.dims[dn - 1].value >= longest;
  }
  if (!fits) return rel_fail(c, "the diagonal %s does not fit diagonals %lld..%lld of %s", rel_type_str(c, d), (long long)k1,
                             (long long)k2, rel_type_str(c, a));
  return done(c, (Type *)a);
}

/* ------------------------------------------------------------ meshgrid */

/* meshgrid((x0, ..., xn-1)): scalars and vectors of one dtype; n grids of shape (|x0|, ..., |xn-1|),
 * the first two extents swapped for indexing="xy" */
int rel_meshgrid(TypeRelCtx *c) {
  const Type **f;
  int32_t n = rel_tensor_tuple(c, 0, &f);
  if (n < 0) return rel_pending(c);
  const char *ix = rel_attr_str(c, "indexing", "ij");
  if (strcmp(ix, "ij") && strcmp(ix, "xy")) return rel_fail(c, "indexing must be \"ij\" or \"xy\", found \"%s\"", ix);
  if (n == 0) return rel_fail(c, "needs at least one tensor");
  Type *grid = rel_new_tensor(c, f[0]->tensor.dtype, (uint32_t)n);
  for (int32_t i = 0; i < n; i++) {
    if (f[i]->tensor.dtype.code != f[0]->tensor.dtype.code || f[i]->tensor.dtype.bits != f[0]->tensor.dtype.bits ||
        f[i]->tensor.dtype.lanes != f[0]->tensor.dtype.lanes)
      return rel_fail(c, "all tensors must have one dtype: field %d is %s, field 0 %s", i, rel_type_str(c, f[i]),
                      rel_type_str(c, f[0]));
    if (f[i]->tensor.ndim > 1) return rel_fail(c, "field %d must be a scalar or a vector, found %s", i, rel_type_str(c, f[i]));
    grid->tensor.dims[i] = f[i]->tensor.ndim ? f[i]->tensor.dims[0] : dim_int(1);
  }
  if (!strcmp(ix, "xy") && n >= 2) {
    Dim t = grid->tensor.dims[0];
    grid->tensor.dims[0] = grid->tensor.dims[1];
    grid->tensor.dims[1] = t;
  }
  Type *o = rel_new_tuple(c, (uint32_t)n);
  for (int32_t i = 0; i < n; i++) o->tuple.fields[i] = grid;
  return done(c, o);
}

/* ------------------------------------------------------------ integer index operators */

/* unravel_index(indices, shape): integer scalar or vector indices, an integer shape vector;
 * (len(shape),) or (len(shape), len(indices)) of the indices' dtype */
int rel_unravel_index(TypeRelCtx *c) {
  const Type *ix, *s;
  if (!rel_tensors(c, 2, &ix, &s)) return rel_pending(c);
  if (!is_int(ix->tensor.dtype) || ix->tensor.ndim > 1)
    return rel_fail(c, "indices must be an integer scalar or vector, found %s", rel_type_str(c, ix));
  if (!is_int(s->tensor.dtype) || s->tensor.ndim != 1)
    return rel_fail(c, "shape must be an integer vector, found %s", rel_type_str(c, s));
  Type *o = rel_new_tensor(c, ix->tensor.dtype, 1 + ix->tensor.ndim);
  o->tensor.dims[0] = s->tensor.dims[0];
  if (ix->tensor.ndim) o->tensor.dims[1] = ix->tensor.dims[0];
  return done(c, o);
}

/* invert_permutation(data): TVM's Identity (either way) on an integer vector */
int rel_invert_permutation(TypeRelCtx *c) {
  uint32_t to = rel_ninputs(c);
  const Type *x = rel_tensor(c, 0);
  if (!x && !rel_failed(c) && (x = rel_tensor(c, to))) to = 0;
  if (!x) return rel_pending(c);
  if (x->tensor.ndim != 1 || !is_int(x->tensor.dtype))
    return rel_fail(c, "the permutation must be an integer vector, found %s", rel_type_str(c, x));
  return rel_assign(c, to, (Type *)x) ? REL_DONE : REL_FAIL;
}

/* ------------------------------------------------------------ dilate, sliding_window */

/* nn.dilate(data; strides): one stride >= 1 per axis; n -> (n - 1)·s + 1 (0 stays 0) */
int rel_dilate(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t s[MAXR];
  int32_t n = rel_attr_ints(c, "strides", s, MAXR);
  if (n != (int32_t)a->tensor.ndim)
    return rel_fail(c, "strides must have one entry per axis of %s, found %d", rel_type_str(c, a), n);
  Type *o = rel_retype(c, a, a->tensor.dtype);
  for (int32_t i = 0; i < n; i++) {
    if (s[i] < 1 || s[i] > INT32_MAX) return rel_fail(c, "strides entry %d must be a positive int32", i);
    Dim d = a->tensor.dims[i];
    if (dim_known(d) && d.value > 0) o->tensor.dims[i] = dim_add(c, dim_mul(c, dim_int(d.value - 1), dim_int(s[i])), 1);
  }
  return done(c, o);
}

/* sliding_window(data; axis, window_shape, strides): axis >= 0 (TVM checks it), one window
 * extent and stride per axis from `axis` on; (pre..., windows per axis..., window_shape...) */
int rel_sliding_window(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t axis = rel_attr_int(c, "axis", 0), w[MAXR], s[MAXR];
  uint32_t nd = a->tensor.ndim;
  if (axis < 0 || axis >= (int64_t)nd) return rel_fail(c, "axis %lld must be in [0, %u)", (long long)axis, nd);
  uint32_t k = nd - (uint32_t)axis;
  if (rel_attr_ints(c, "window_shape", w, MAXR) != (int32_t)k || rel_attr_ints(c, "strides", s, MAXR) != (int32_t)k)
    return rel_fail(c, "window_shape and strides must have %u entries each (the axes from %lld on)", k, (long long)axis);
  if (nd + k > MAXR) return rel_fail(c, "the result would have rank %u", nd + k);
  Type *o = rel_new_tensor(c, a->tensor.dtype, nd + k);
  for (uint32_t i = 0; i < (uint32_t)axis; i++) o->tensor.dims[i] = a->tensor.dims[i];
  for (uint32_t i = 0; i < k; i++) {
    Dim d = a->tensor.dims[axis + i];
    if (w[i] < 1 || s[i] < 1 || w[i] > INT32_MAX || s[i] > INT32_MAX)
      return rel_fail(c, "window_shape and strides entries must be positive int32 values");
    if (dim_known(d) && d.value < w[i])
      return rel_fail(c, "a window of %lld does not fit axis %lld of extent %lld", (long long)w[i], (long long)(axis + i),
                      (long long)d.value);
    o->tensor.dims[axis + i] = dim_known(d) ? dim_int((d.value - w[i]) / s[i] + 1) : dim_any();
    o->tensor.dims[nd + i] = dim_int(w[i]);
  }
  return done(c, o);
}
