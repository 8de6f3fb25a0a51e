/* ops/relations/rel_shape.c — relations of the shape, layout, indexing, creation and
 * sorting operators (spec/ops.md §6 and §13).
 *
 * Every relation waits for the tensors it needs, validates attributes against
 * the input ranks (out-of-range axes, bad permutations, element counts that
 * do not match) and builds the output type. Unknown extents propagate as `?`
 * and checks that involve them pass, as TVM does for Any.
 */
#include "ops/layout.h"
#include "ops/relations/rel_util.h"

#include <math.h>
#include <stdio.h>

#define MAXR 64

static int done(TypeRelCtx *c, Type *o) { return rel_assign(c, rel_ninputs(c), o) ? REL_DONE : REL_FAIL; }

/* The element count of t when every extent is known; false otherwise, and
 * (after reporting) when the count overflows int64. */
static bool elems(TypeRelCtx *c, const Type *t, int64_t *n) {
  int64_t p = 1;
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    if (!dim_known(t->tensor.dims[i])) return false;
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    if (__builtin_mul_overflow(p, t->tensor.dims[i].value, &p)) {
      if (!rel_failed(c)) rel_fail(c, "%s has too many elements", rel_type_str(c, t));
      return false;
    }
  *n = p;
  return true;
}

/* ------------------------------------------------------------------ reshape */

typedef struct Shape {
  Dim d[2 * MAXR];
  bool used[2 * MAXR];
  uint32_t n;
} Shape;

static void push(Shape *s, Dim d, bool used) {
  s->d[s->n] = d;
  s->used[s->n++] = used;
}

/* reshape's output dims (spec/ops.md §6.1) for input dims in[0..nd) and
 * newshape ns[0..k), into *outp; REL_DONE or REL_FAIL. */
static int reshape_dims(TypeRelCtx *c, const Dim *in, uint32_t nd, const int64_t *ns, int32_t k, bool allowzero,
                        Shape *outp) {
  uint32_t src = 0;
  bool in_used[MAXR * 2] = {false};
  Shape out = {.n = 0};
  int32_t infer = -1;
  for (int32_t i = 0; i < k; i++) {
    int64_t v = ns[i];
    if (out.n + 2 > 2 * MAXR) return rel_fail(c, "newshape is too long");
    if (v > 0) {
      push(&out, dim_int(v), false);
      src++;
    } else if (v == 0) {
      if (allowzero) push(&out, dim_int(0), false);
      else {
        if (src >= nd) return rel_fail(c, "newshape entry 0 at position %d has no input dimension to copy", i);
        in_used[src] = true;
        push(&out, in[src], true);
      }
      src++;
    } else if (v == -1) {
      if (infer >= 0) return rel_fail(c, "newshape may contain only one -1");
      infer = (int32_t)out.n;
      push(&out, dim_int(1), false);
      src++;
    } else if (v == -2) {
      for (; src < nd; src++) {
        in_used[src] = true;
        push(&out, in[src], true);
      }
    } else if (v == -3) {
      if (src + 1 >= nd) return rel_fail(c, "newshape entry -3 needs two remaining input dimensions");
      in_used[src] = in_used[src + 1] = true;
      push(&out, dim_mul(c, in[src], in[src + 1]), true);
      src += 2;
    } else if (v == -4) {
      if (i + 2 >= k) return rel_fail(c, "newshape entry -4 must be followed by two values");
      if (src >= nd) return rel_fail(c, "newshape entry -4 has no input dimension to split");
      int64_t x = ns[i + 1], y = ns[i + 2];
      i += 2;
      Dim d = in[src];
      if (x == -1 && y == -1) return rel_fail(c, "newshape entry -4 cannot split into -1 and -1");
      if ((x <= 0 && x != -1) || (y <= 0 && y != -1))
        return rel_fail(c, "newshape entry -4 needs positive factors (or one -1)");
      Dim dx = dim_int(x), dy = dim_int(y);
      if (x == -1) dx = dim_known(d) ? dim_int(d.value / y) : dim_any();
      if (y == -1) dy = dim_known(d) ? dim_int(d.value / x) : dim_any();
      int64_t xy;
      if (dim_known(d) && dim_known(dx) && dim_known(dy) &&
          (__builtin_mul_overflow(dx.value, dy.value, &xy) || xy != d.value))
        return rel_fail(c, "cannot split dimension %lld into %lld x %lld", (long long)d.value,
                        (long long)dx.value, (long long)dy.value);
      in_used[src] = true;
      push(&out, dx, true);
      push(&out, dy, true);
      src++;
    } else {
      return rel_fail(c, "invalid value %lld in newshape", (long long)v);
    }
  }
  if (infer >= 0) {
    Dim num = dim_int(1), den = dim_int(1);
    for (uint32_t i = 0; i < nd; i++)
      if (!in_used[i]) num = dim_mul(c, num, in[i]);
    for (uint32_t i = 0; i < out.n; i++)
      if (!out.used[i] && (int32_t)i != infer) den = dim_mul(c, den, out.d[i]);
    if (dim_known(num) && dim_known(den)) {
      if (den.value == 0) return rel_fail(c, "cannot infer -1 next to a zero-sized dimension");
      if (den.value == -1 && num.value == INT64_MIN) return rel_fail(c, "cannot infer -1: the extent overflows");
      out.d[infer] = dim_int(num.value / den.value);
    } else {
      out.d[infer] = dim_any();
    }
  }
  *outp = out;
  return REL_DONE;
}

/* The reshaped type of a from out's dims, after the element-count check. */
static int reshape_done(TypeRelCtx *c, const Type *a, const Shape *out, bool reversed) {
  Type *o = rel_new_tensor(c, a->tensor.dtype, out->n);
  for (uint32_t i = 0; i < out->n; i++) o->tensor.dims[i] = out->d[reversed ? out->n - 1 - i : i];
  int64_t ni, no;
  if (elems(c, a, &ni) && elems(c, o, &no) && ni != no)
    return rel_fail(c, "cannot reshape %s (%lld elements) to %s (%lld elements)", rel_type_str(c, a),
                    (long long)ni, rel_type_str(c, o), (long long)no);
  return done(c, o);
}

int rel_reshape(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t ns[MAXR];
  int32_t k = rel_attr_ints(c, "newshape", ns, MAXR);
  if (k < 0) return rel_fail(c, "newshape is not set");
  if (a->tensor.ndim > 2 * MAXR) return rel_fail(c, "rank %u is too large", a->tensor.ndim);
  Shape out;
  if (reshape_dims(c, a->tensor.dims, a->tensor.ndim, ns, k, rel_attr_int(c, "allowzero", 0) != 0, &out))
    return REL_FAIL;
  return reshape_done(c, a, &out, false);
}

/* contrib_reverse_reshape (spec/gradient.md 5.7): reshape of the reversed
 * input shape by the reversed newshape, reversed back; -4 (a split whose
 * factors follow it) has no reversed reading and is rejected. */
int rel_reverse_reshape(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t ns[MAXR], rs[MAXR];
  int32_t k = rel_attr_ints(c, "newshape", ns, MAXR);
  if (k < 0) return rel_fail(c, "newshape is not set");
  uint32_t nd = a->tensor.ndim;
  if (nd > 2 * MAXR) return rel_fail(c, "rank %u is too large", nd);
  Dim in[2 * MAXR];
  for (uint32_t i = 0; i < nd; i++) in[i] = a->tensor.dims[nd - 1 - i];
  for (int32_t i = 0; i < k; i++) {
    if (ns[i] == -4) return rel_fail(c, "newshape entry -4 is not supported in reverse");
    rs[i] = ns[k - 1 - i];
  }
  Shape out;
  if (reshape_dims(c, in, nd, rs, k, rel_attr_int(c, "allowzero", 0) != 0, &out)) return REL_FAIL;
  return reshape_done(c, a, &out, true);
}

static int64_t opt_int(TypeRelCtx *c, const char *key, int64_t none) {
  return rel_attr_is_none(c, key) ? none : rel_attr_int(c, key, none);
}

static bool norm_range(int64_t *v, int64_t n) {
  if (*v < 0) *v += n;
  return *v >= 0 && *v <= n;
}

int rel_reshape_like(TypeRelCtx *c) {
  const Type *a, *l;
  if (!rel_tensors(c, 2, &a, &l)) return rel_pending(c);
  int64_t na = a->tensor.ndim, nl = l->tensor.ndim;
  int64_t lb = rel_attr_int(c, "lhs_begin", 0), le = opt_int(c, "lhs_end", na);
  int64_t rb = rel_attr_int(c, "rhs_begin", 0), re = opt_int(c, "rhs_end", nl);
  if (!norm_range(&lb, na) || !norm_range(&le, na) || lb > le)
    return rel_fail(c, "lhs range [%lld, %lld) is invalid for rank %lld", (long long)lb, (long long)le, (long long)na);
  if (!norm_range(&rb, nl) || !norm_range(&re, nl) || rb > re)
    return rel_fail(c, "rhs range [%lld, %lld) is invalid for rank %lld", (long long)rb, (long long)re, (long long)nl);
  uint32_t n = (uint32_t)(lb + (re - rb) + (na - le));
  Type *o = rel_new_tensor(c, a->tensor.dtype, n);
  uint32_t j = 0;
  for (int64_t i = 0; i < lb; i++) o->tensor.dims[j++] = a->tensor.dims[i];
  for (int64_t i = rb; i < re; i++) o->tensor.dims[j++] = l->tensor.dims[i];
  for (int64_t i = le; i < na; i++) o->tensor.dims[j++] = a->tensor.dims[i];
  int64_t ni, no;
  if (elems(c, a, &ni) && elems(c, o, &no) && ni != no)
    return rel_fail(c, "cannot reshape %s to %s (element counts differ)", rel_type_str(c, a), rel_type_str(c, o));
  return done(c, o);
}

/* ---------------------------------------------------------- dims in and out */

int rel_expand_dims(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t nd = a->tensor.ndim, axis = rel_attr_int(c, "axis", 0), k = rel_attr_int(c, "num_newaxis", 1);
  if (k < 0) return rel_fail(c, "num_newaxis must be non-negative, got %lld", (long long)k);
  if (k > MAXR) return rel_fail(c, "num_newaxis %lld is too large", (long long)k);
  if (axis < -nd - 1 || axis > nd)
    return rel_fail(c, "axis %lld is out of range [%lld, %lld]", (long long)axis, (long long)(-nd - 1), (long long)nd);
  int64_t pivot = axis < 0 ? axis + nd + 1 : axis;
  Type *o = rel_new_tensor(c, a->tensor.dtype, (uint32_t)(nd + k));
  uint32_t j = 0;
  for (int64_t i = 0; i < pivot; i++) o->tensor.dims[j++] = a->tensor.dims[i];
  for (int64_t i = 0; i < k; i++) o->tensor.dims[j++] = dim_int(1);
  for (int64_t i = pivot; i < nd; i++) o->tensor.dims[j++] = a->tensor.dims[i];
  return done(c, o);
}

int rel_squeeze(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  uint32_t nd = a->tensor.ndim;
  if (nd > MAXR) return rel_fail(c, "rank %u is too large", nd);
  bool drop[MAXR] = {false};
  int64_t axes[MAXR];
  int32_t n = rel_attr_ints(c, "axis", axes, MAXR);
  if (n < 0) {
    for (uint32_t i = 0; i < nd; i++) drop[i] = dim_known(a->tensor.dims[i]) && a->tensor.dims[i].value == 1;
  } else {
    for (int32_t i = 0; i < n; i++) {
      int64_t ax = axes[i];
      if (ax == REL_INT_NONE || ax == REL_INT_ANY || !rel_norm_axis(&ax, nd))
        return rel_fail(c, "axis %lld is out of range for rank %u", (long long)axes[i], nd);
      Dim d = a->tensor.dims[ax];
      if (dim_known(d) && d.value != 1)
        return rel_fail(c, "cannot squeeze axis %lld of extent %lld (must be 1)", (long long)axes[i],
                        (long long)d.value);
      drop[ax] = true;
    }
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < nd; i++) k += !drop[i];
  Type *o = rel_new_tensor(c, a->tensor.dtype, k);
  k = 0;
  for (uint32_t i = 0; i < nd; i++)
    if (!drop[i]) o->tensor.dims[k++] = a->tensor.dims[i];
  return done(c, o);
}

int rel_transpose(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  uint32_t nd = a->tensor.ndim;
  if (nd > MAXR) return rel_fail(c, "rank %u is too large", nd);
  int64_t axes[MAXR];
  int32_t n = rel_attr_ints(c, "axes", axes, MAXR);
  Type *o = rel_new_tensor(c, a->tensor.dtype, nd);
  if (n <= 0) {
    for (uint32_t i = 0; i < nd; i++) o->tensor.dims[i] = a->tensor.dims[nd - 1 - i];
    return done(c, o);
  }
  if ((uint32_t)n != nd) return rel_fail(c, "axes has %d entries but the tensor has rank %u", n, nd);
  bool seen[MAXR] = {false};
  for (int32_t i = 0; i < n; i++) {
    int64_t ax = axes[i];
    if (ax == REL_INT_NONE || ax == REL_INT_ANY || !rel_norm_axis(&ax, nd))
      return rel_fail(c, "axis %lld is out of range for rank %u", (long long)axes[i], nd);
    if (seen[ax]) return rel_fail(c, "axes is not a permutation: axis %lld appears twice", (long long)ax);
    seen[ax] = true;
    o->tensor.dims[i] = a->tensor.dims[ax];
  }
  return done(c, o);
}

int rel_batch_flatten(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  if (a->tensor.ndim < 1) return rel_fail(c, "the input must have rank at least 1");
  Dim p = dim_int(1);
  for (uint32_t i = 1; i < a->tensor.ndim; i++) p = dim_mul(c, p, a->tensor.dims[i]);
  Type *o = rel_new_tensor(c, a->tensor.dtype, 2);
  o->tensor.dims[0] = a->tensor.dims[0];
  o->tensor.dims[1] = p;
  return done(c, o);
}

/* --------------------------------------------------------- joining, splitting */

/* Input 0 as a non-empty tuple of known tensors (concatenate, stack): the field count, or
 * -1 (waiting, or failed with "the input tuple is empty": rel_pending tells which). */
static int32_t nonempty_tensor_tuple(TypeRelCtx *c, const Type ***fs) {
  int32_t n = rel_tensor_tuple(c, 0, fs);
  if (n == 0) rel_fail(c, "the input tuple is empty");
  return n > 0 ? n : -1;
}

int rel_concatenate(TypeRelCtx *c) {
  const Type **fs;
  int32_t n = nonempty_tensor_tuple(c, &fs);
  if (n < 0) return rel_pending(c);
  uint32_t nd = fs[0]->tensor.ndim;
  if (nd == 0) return rel_fail(c, "cannot concatenate rank-0 tensors");
  int64_t axis = rel_attr_int(c, "axis", 0);
  if (!rel_norm_axis(&axis, nd)) return rel_fail(c, "axis %lld is out of range for rank %u", (long long)axis, nd);
  Type *o = rel_new_tensor(c, fs[0]->tensor.dtype, nd);
  for (uint32_t i = 0; i < nd; i++) o->tensor.dims[i] = fs[0]->tensor.dims[i];
  for (int32_t j = 1; j < n; j++) {
    const Type *f = fs[j];
    if (f->tensor.ndim != nd)
      return rel_fail(c, "field %d has rank %u but field 0 has rank %u", j, f->tensor.ndim, nd);
    if (!dtype_eq(f->tensor.dtype, fs[0]->tensor.dtype))
      return rel_fail(c, "field %d is %s but field 0 is %s", j, rel_type_str(c, f), rel_type_str(c, fs[0]));
    for (uint32_t i = 0; i < nd; i++) {
      if ((int64_t)i == axis) {
        o->tensor.dims[i] = dim_sum(c, o->tensor.dims[i], f->tensor.dims[i]);
      } else if (!dim_compat(o->tensor.dims[i], f->tensor.dims[i])) {
        return rel_fail(c, "field %d has extent %lld at axis %u but field 0 has %lld", j,
                        (long long)f->tensor.dims[i].value, i, (long long)o->tensor.dims[i].value);
      } else if (!dim_known(o->tensor.dims[i])) {
        o->tensor.dims[i] = f->tensor.dims[i];
      }
    }
  }
  return done(c, o);
}

int rel_stack(TypeRelCtx *c) {
  const Type **fs;
  int32_t n = nonempty_tensor_tuple(c, &fs);
  if (n < 0) return rel_pending(c);
  uint32_t nd = fs[0]->tensor.ndim;
  int64_t axis = rel_attr_int(c, "axis", 0);
  if (axis < -(int64_t)nd - 1 || axis > (int64_t)nd)
    return rel_fail(c, "axis %lld is out of range for stacking rank-%u tensors", (long long)axis, nd);
  if (axis < 0) axis += nd + 1;
  for (int32_t j = 1; j < n; j++) {
    const Type *f = fs[j];
    bool same = f->tensor.ndim == nd && dtype_eq(f->tensor.dtype, fs[0]->tensor.dtype);
    for (uint32_t i = 0; same && i < nd; i++) same = dim_compat(f->tensor.dims[i], fs[0]->tensor.dims[i]);
    if (!same)
      return rel_fail(c, "all fields must have the same type: field %d is %s but field 0 is %s", j,
                      rel_type_str(c, f), rel_type_str(c, fs[0]));
  }
  Type *o = rel_new_tensor(c, fs[0]->tensor.dtype, nd + 1);
  uint32_t k = 0;
  for (uint32_t i = 0; i <= nd; i++) {
    if ((int64_t)i == axis) o->tensor.dims[k++] = dim_int(n);
    if (i < nd) o->tensor.dims[k++] = fs[0]->tensor.dims[i];
  }
  return done(c, o);
}

static Type *with_dim(TypeRelCtx *c, const Type *a, uint32_t axis, Dim d) {
  Type *o = rel_retype(c, a, a->tensor.dtype);
  o->tensor.dims[axis] = d;
  return o;
}

int rel_split(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  uint32_t nd = a->tensor.ndim;
  if (nd < 1) return rel_fail(c, "cannot split a rank-0 tensor");
  int64_t axis = rel_attr_int(c, "axis", 0);
  if (!rel_norm_axis(&axis, nd)) return rel_fail(c, "axis %lld is out of range for rank %u", (long long)axis, nd);
  Dim d = a->tensor.dims[axis];
  const AttrValue *ios = rel_attr(c, "indices_or_sections");
  if (!ios || ios->kind == AV_NONE) return rel_fail(c, "indices_or_sections is not set");
  if (ios->kind == AV_INT) {
    int64_t s = ios->i.value;
    if (s <= 0) return rel_fail(c, "the number of sections must be positive, got %lld", (long long)s);
    if (s > 1 << 16) return rel_fail(c, "too many sections (%lld)", (long long)s);
    if (dim_known(d) && d.value % s != 0)
      return rel_fail(c, "axis %lld of extent %lld cannot be split into %lld equal sections", (long long)axis,
                      (long long)d.value, (long long)s);
    Type *t = rel_new_tuple(c, (uint32_t)s);
    Dim part = dim_known(d) ? dim_int(d.value / s) : dim_any();
    for (int64_t i = 0; i < s; i++) t->tuple.fields[i] = with_dim(c, a, (uint32_t)axis, part);
    return done(c, t);
  }
  int64_t idx[1024];
  int32_t n = rel_attr_ints(c, "indices_or_sections", idx, 1024);
  if (n < 0) return rel_fail(c, "indices_or_sections must be an integer or a list of integers");
  Type *t = rel_new_tuple(c, (uint32_t)n + 1);
  int64_t prev = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t v = idx[i];
    if (v == REL_INT_NONE || v == REL_INT_ANY) return rel_fail(c, "split indices must be integers");
    if (v <= prev && !(i == 0 && v > 0))
      return rel_fail(c, "split indices must be strictly increasing and positive (index %lld after %lld)",
                      (long long)v, (long long)prev);
    if (dim_known(d) && v >= d.value)
      return rel_fail(c, "split index %lld is not below the extent %lld of axis %lld", (long long)v,
                      (long long)d.value, (long long)axis);
    t->tuple.fields[i] = with_dim(c, a, (uint32_t)axis, dim_int(v - prev));
    prev = v;
  }
  t->tuple.fields[n] = with_dim(c, a, (uint32_t)axis, dim_known(d) ? dim_int(d.value - prev) : dim_any());
  return done(c, t);
}

/* ------------------------------------------------------------ strided_slice */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Extent of axis `axis` (extent d) sliced by begin b, end e, stride s (TVM's
 * clamping rules). b and e may be REL_INT_NONE / REL_INT_ANY (unset) and any
 * other int64; the arithmetic is done so that none of it can overflow. */
static int slice_dim(TypeRelCtx *c, Dim d, int64_t b, int64_t e, int64_t s, bool size_mode, Dim *out,
                     uint32_t axis) {
  if (size_mode) s = 1;
  if (s == 0) return rel_fail(c, "stride 0 on axis %u", axis);
  if (s == REL_INT_NONE || s == REL_INT_ANY) return rel_fail(c, "the stride on axis %u is not an integer", axis);
  if (!dim_known(d)) {
    *out = dim_any();
    return REL_DONE;
  }
  int64_t n = d.value;
  if (n < 0) return rel_fail(c, "axis %u has a negative extent (%lld)", axis, (long long)n);
  bool bnone = b == REL_INT_NONE || b == REL_INT_ANY, enone = e == REL_INT_NONE || e == REL_INT_ANY;
  if (bnone) b = s > 0 ? 0 : n - 1;
  if (b < 0) b += n;
  b = s > 0 ? clamp64(b, 0, n) : clamp64(b, -1, n - 1);
  if (size_mode) {
    if (enone || e < 0 || __builtin_add_overflow(b, clamp64(e, 0, n), &e)) e = n;
  } else if (enone) {
    e = s > 0 ? n : 0;
  } else if (e < 0) {
    e += n;
  }
  e = s > 0 ? clamp64(e, 0, n) : clamp64(e, -1, n - 1);
  if (s > 0 && b > e)
    return rel_fail(c, "begin %lld is after end %lld on axis %u (stride %lld)", (long long)b, (long long)e, axis,
                    (long long)s);
  if (s < 0 && b < e)
    return rel_fail(c, "begin %lld is before end %lld on axis %u (stride %lld)", (long long)b, (long long)e, axis,
                    (long long)s);
  /* b, e in [-1, n]: their distance fits in uint64 and the count in int64 */
  uint64_t span = b > e ? (uint64_t)b - (uint64_t)e : (uint64_t)e - (uint64_t)b;
  uint64_t as = s > 0 ? (uint64_t)s : -(uint64_t)s;
  *out = dim_int((int64_t)(span / as + (span % as != 0)));
  return REL_DONE;
}

int rel_strided_slice(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  uint32_t nd = a->tensor.ndim;
  int64_t bg[MAXR], en[MAXR], st[MAXR], ax[MAXR];
  int32_t nb = rel_attr_ints(c, "begin", bg, MAXR), ne = rel_attr_ints(c, "end", en, MAXR);
  int32_t ns = rel_attr_ints(c, "strides", st, MAXR), na = rel_attr_ints(c, "axes", ax, MAXR);
  if (nb < 0 || ne < 0) return rel_fail(c, "begin and end must be set");
  bool size_mode = false;
  const char *mode = rel_attr_str(c, "slice_mode", "end");
  if (strcmp(mode, "size") == 0) size_mode = true;
  else if (strcmp(mode, "end") != 0) return rel_fail(c, "unknown slice_mode \"%s\"", mode);
  if (ns < 0) ns = 0;
  Type *o = rel_retype(c, a, a->tensor.dtype);
  if (na >= 0) {
    if (nb != na || ne != na || (ns != na && ns > 1))
      return rel_fail(c, "begin, end, strides and axes must have the same length");
    bool seen[MAXR] = {false};
    for (int32_t i = 0; i < na; i++) {
      int64_t x = ax[i];
      if (x == REL_INT_NONE || x == REL_INT_ANY || !rel_norm_axis(&x, nd))
        return rel_fail(c, "axis %lld is out of range for rank %u", (long long)ax[i], nd);
      if (seen[x]) return rel_fail(c, "axis %lld is listed twice", (long long)ax[i]);
      seen[x] = true;
      int64_t s = ns == 0 ? 1 : ns == 1 ? st[0] : st[i];
      if (slice_dim(c, a->tensor.dims[x], bg[i], en[i], s, size_mode, &o->tensor.dims[x], (uint32_t)x))
        return REL_FAIL;
    }
    return done(c, o);
  }
  if ((uint32_t)nb > nd || (uint32_t)ne > nd || (uint32_t)ns > nd)
    return rel_fail(c, "begin/end/strides have more entries than the tensor has dimensions (%u)", nd);
  for (uint32_t i = 0; i < nd; i++) {
    int64_t b = (int32_t)i < nb ? bg[i] : REL_INT_NONE, e = (int32_t)i < ne ? en[i] : REL_INT_NONE;
    int64_t s = (int32_t)i < ns ? st[i] : 1;
    if ((int32_t)i >= nb && (int32_t)i >= ne) continue;
    if (slice_dim(c, a->tensor.dims[i], b, e, s, size_mode, &o->tensor.dims[i], i)) return REL_FAIL;
  }
  return done(c, o);
}

/* ----------------------------------------------------------------- gathering */

static bool is_index_dtype(DType t) { return (t.code == DT_INT || t.code == DT_UINT) && t.bits > 1; }

int rel_take(TypeRelCtx *c) {
  const Type *a, *ix;
  if (!rel_tensors(c, 2, &a, &ix)) return rel_pending(c);
  char b[32];
  if (!is_index_dtype(ix->tensor.dtype))
    return rel_fail(c, "indices must have an integer dtype, found %s", dtype_name(ix->tensor.dtype, b));
  const char *mode = rel_attr_str(c, "mode", "clip");
  if (strcmp(mode, "clip") && strcmp(mode, "wrap") && strcmp(mode, "fast"))
    return rel_fail(c, "unknown mode \"%s\" (expected clip, wrap or fast)", mode);
  if (rel_attr_is_none(c, "axis")) return done(c, rel_retype(c, ix, a->tensor.dtype));
  int64_t nd = a->tensor.ndim, ni = ix->tensor.ndim;
  int64_t axis = rel_attr_int(c, "axis", 0), bd = rel_attr_int(c, "batch_dims", 0);
  if (!rel_norm_axis(&axis, nd)) return rel_fail(c, "axis %lld is out of range for rank %lld", (long long)axis, (long long)nd);
  if (bd < 0) bd += ni;
  if (bd < 0 || bd > ni || bd > axis)
    return rel_fail(c, "batch_dims %lld is out of range", (long long)rel_attr_int(c, "batch_dims", 0));
  Type *o = rel_new_tensor(c, a->tensor.dtype, (uint32_t)(axis + (ni - bd) + (nd - axis - 1)));
  uint32_t k = 0;
  for (int64_t i = 0; i < axis; i++) o->tensor.dims[k++] = a->tensor.dims[i];
  for (int64_t i = bd; i < ni; i++) o->tensor.dims[k++] = ix->tensor.dims[i];
  for (int64_t i = axis + 1; i < nd; i++) o->tensor.dims[k++] = a->tensor.dims[i];
  return done(c, o);
}

int rel_gather(TypeRelCtx *c) {
  const Type *a, *ix;
  if (!rel_tensors(c, 2, &a, &ix)) return rel_pending(c);
  char b[32];
  if (!is_index_dtype(ix->tensor.dtype))
    return rel_fail(c, "indices must have an integer dtype, found %s", dtype_name(ix->tensor.dtype, b));
  if (rel_attr_is_none(c, "axis")) return rel_fail(c, "axis must be set");
  int64_t nd = a->tensor.ndim, axis = rel_attr_int(c, "axis", 0);
  if (!rel_norm_axis(&axis, nd)) return rel_fail(c, "axis %lld is out of range for rank %lld", (long long)axis, (long long)nd);
  if (ix->tensor.ndim != a->tensor.ndim)
    return rel_fail(c, "indices have rank %u but data has rank %u", ix->tensor.ndim, a->tensor.ndim);
  return done(c, rel_retype(c, ix, a->tensor.dtype));
}

int rel_gather_nd(TypeRelCtx *c) {
  const Type *a, *ix;
  if (!rel_tensors(c, 2, &a, &ix)) return rel_pending(c);
  char b[32];
  if (!is_index_dtype(ix->tensor.dtype))
    return rel_fail(c, "indices must have an integer dtype, found %s", dtype_name(ix->tensor.dtype, b));
  if (ix->tensor.ndim < 1) return rel_fail(c, "indices must have rank at least 1");
  int64_t m = rel_attr_is_none(c, "index_rank") ? -1 : rel_attr_int(c, "index_rank", -1);
  if (m < 0) {
    if (!dim_known(ix->tensor.dims[0])) return rel_fail(c, "index_rank must be set when indices.shape[0] is unknown");
    m = ix->tensor.dims[0].value;
  }
  if (m < 0) return rel_fail(c, "the index rank %lld (indices.shape[0]) is negative", (long long)m);
  int64_t bd = rel_attr_int(c, "batch_dims", 0), nd = a->tensor.ndim;
  if (bd < 0) return rel_fail(c, "batch_dims must be non-negative, got %lld", (long long)bd);
  if (m > nd || bd > nd - m) /* m + bd > nd without overflowing */
    return rel_fail(c, "indices address %lld + %lld dimensions (batch_dims + index rank) but data has rank %lld",
                    (long long)bd, (long long)m, (long long)nd);
  uint32_t n = (uint32_t)((ix->tensor.ndim - 1) + (nd - m - bd));
  Type *o = rel_new_tensor(c, a->tensor.dtype, n);
  uint32_t k = 0;
  for (uint32_t i = 1; i < ix->tensor.ndim; i++) o->tensor.dims[k++] = ix->tensor.dims[i];
  for (int64_t i = m + bd; i < nd; i++) o->tensor.dims[k++] = a->tensor.dims[i];
  return done(c, o);
}

int rel_one_hot(TypeRelCtx *c) {
  const Type *ix, *on, *off;
  if (!rel_tensors(c, 3, &ix, &on, &off)) return rel_pending(c);
  if (on->tensor.ndim != 0 || off->tensor.ndim != 0) return rel_fail(c, "on_value and off_value must be scalars");
  int64_t depth = rel_attr_int(c, "depth", 1);
  if (depth <= 0) return rel_fail(c, "depth must be positive, got %lld", (long long)depth);
  return rel_one_hot_output(c, ix, on, dim_int(depth));
}

int rel_slice_like(TypeRelCtx *c) {
  const Type *a, *l;
  if (!rel_tensors(c, 2, &a, &l)) return rel_pending(c);
  Type *o = rel_retype(c, a, a->tensor.dtype);
  int64_t axes[MAXR];
  int32_t n = rel_attr_ints(c, "axes", axes, MAXR);
  if (n <= 0) {
    if (l->tensor.ndim > a->tensor.ndim) return rel_fail(c, "shape_like has a higher rank than data");
    for (uint32_t i = 0; i < l->tensor.ndim; i++) o->tensor.dims[i] = l->tensor.dims[i];
    return done(c, o);
  }
  for (int32_t i = 0; i < n; i++) {
    int64_t x = axes[i];
    if (x == REL_INT_NONE || x == REL_INT_ANY || !rel_norm_axis(&x, a->tensor.ndim) || x >= l->tensor.ndim)
      return rel_fail(c, "axis %lld is out of range", (long long)axes[i]);
    o->tensor.dims[x] = l->tensor.dims[x];
  }
  return done(c, o);
}

/* ------------------------------------------------------------ scatter */

static bool is_int_vec(const Type *t) { return is_index_dtype(t->tensor.dtype) && t->tensor.ndim <= 1; }

/* strided_set(data, v, begin, end, strides) (spec/gradient.md 5.8): data's
 * type; v must have data's dtype and at most its rank (it broadcasts to the
 * slice), begin/end/strides are integer vectors. */
int rel_strided_set(TypeRelCtx *c) {
  const Type *t[5];
  if (!rel_tensors(c, 5, &t[0], &t[1], &t[2], &t[3], &t[4])) return rel_pending(c);
  if (!dtype_eq(t[0]->tensor.dtype, t[1]->tensor.dtype) || t[1]->tensor.ndim > t[0]->tensor.ndim)
    return rel_fail(c, "v is %s but data is %s (v needs data's dtype and at most its rank)", rel_type_str(c, t[1]),
                    rel_type_str(c, t[0]));
  static const char *const names[3] = {"begin", "end", "strides"};
  for (int i = 0; i < 3; i++)
    if (!is_int_vec(t[2 + i]))
      return rel_fail(c, "%s must be an integer vector, found %s", names[i], rel_type_str(c, t[2 + i]));
  return done(c, (Type *)t[0]);
}

/* scatter_nd(data, indices, updates, mode) (5.9, TVM's ScatterNDRel): indices
 * (M, Y...) with a static M <= rank(data), updates (Y..., data.shape[M:]). */
int rel_scatter_nd(TypeRelCtx *c) {
  const Type *d, *ix, *u;
  if (!rel_tensors(c, 3, &d, &ix, &u)) return rel_pending(c);
  const char *mode = rel_attr_str(c, "mode", "update");
  if (strcmp(mode, "update") && strcmp(mode, "add") && strcmp(mode, "mul") && strcmp(mode, "min") && strcmp(mode, "max"))
    return rel_fail(c, "unknown mode \"%s\" (expected update, add, mul, min or max)", mode);
  char b[32];
  if (!is_index_dtype(ix->tensor.dtype))
    return rel_fail(c, "indices must have an integer dtype, found %s", dtype_name(ix->tensor.dtype, b));
  if (ix->tensor.ndim < 1 || !dim_known(ix->tensor.dims[0]))
    return rel_fail(c, "indices must have a static first dimension, found %s", rel_type_str(c, ix));
  int64_t m = ix->tensor.dims[0].value, n = d->tensor.ndim, k = ix->tensor.ndim - 1;
  if (m > n) return rel_fail(c, "indices address %lld axes but data has rank %lld", (long long)m, (long long)n);
  if (!dtype_eq(u->tensor.dtype, d->tensor.dtype))
    return rel_fail(c, "updates are %s but data is %s", rel_type_str(c, u), rel_type_str(c, d));
  bool fits = (int64_t)u->tensor.ndim == k + n - m;
  for (int64_t i = 0; fits && i < k; i++) fits = dim_compat(ix->tensor.dims[i + 1], u->tensor.dims[i]);
  for (int64_t i = m; fits && i < n; i++) fits = dim_compat(u->tensor.dims[i - m + k], d->tensor.dims[i]);
  if (!fits)
    return rel_fail(c, "updates %s do not fit indices %s and data %s", rel_type_str(c, u), rel_type_str(c, ix),
                    rel_type_str(c, d));
  return done(c, (Type *)d);
}

/* scatter_elements(data, indices, updates, axis, reduction) (5.10): data's
 * type; relayc also requires indices and updates of one shape and data's
 * rank, within data's extents off the axis. */
int rel_scatter_elements(TypeRelCtx *c) {
  const Type *d, *ix, *u;
  if (!rel_tensors(c, 3, &d, &ix, &u)) return rel_pending(c);
  const char *red = rel_attr_str(c, "reduction", "update");
  if (strcmp(red, "update") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "mean") && strcmp(red, "min") &&
      strcmp(red, "max"))
    return rel_fail(c, "unknown reduction \"%s\" (expected update, add, mul, mean, min or max)", red);
  char b[32];
  if (!is_index_dtype(ix->tensor.dtype))
    return rel_fail(c, "indices must have an integer dtype, found %s", dtype_name(ix->tensor.dtype, b));
  int64_t nd = d->tensor.ndim, axis = rel_attr_int(c, "axis", 0);
  if (nd == 0 || !rel_norm_axis(&axis, nd))
    return rel_fail(c, "axis %lld is out of range for rank %lld", (long long)rel_attr_int(c, "axis", 0), (long long)nd);
  if (!dtype_eq(u->tensor.dtype, d->tensor.dtype))
    return rel_fail(c, "updates are %s but data is %s", rel_type_str(c, u), rel_type_str(c, d));
  bool fits = (int64_t)ix->tensor.ndim == nd && (int64_t)u->tensor.ndim == nd;
  for (int64_t i = 0; fits && i < nd; i++) {
    Dim a = ix->tensor.dims[i], e = d->tensor.dims[i];
    fits = dim_compat(a, u->tensor.dims[i]) && (i == axis || !dim_known(a) || !dim_known(e) || a.value <= e.value);
  }
  if (!fits)
    return rel_fail(c, "indices %s and updates %s must have one shape of data's rank, within %s off the axis",
                    rel_type_str(c, ix), rel_type_str(c, u), rel_type_str(c, d));
  return done(c, (Type *)d);
}

/* sparse_to_dense(indices, values, default_value, output_shape=[...]): the
 * output_shape with the values' dtype; indices an integer tensor of rank <= 2
 * ((n, k) rows of k <= rank leading coordinates), values a scalar or n of
 * them, default_value a scalar (of any dtype: TVM's relation does not check it
 * and its Python passes const(0), an int32, as the default; the kernel casts). */
int rel_sparse_to_dense(TypeRelCtx *c) {
  const Type *ix, *v, *dv;
  if (!rel_tensors(c, 3, &ix, &v, &dv)) return rel_pending(c);
  if (!is_index_dtype(ix->tensor.dtype) || ix->tensor.ndim > 2)
    return rel_fail(c, "sparse_indices must be an integer tensor of rank 0, 1 or 2, found %s", rel_type_str(c, ix));
  if (v->tensor.ndim > 1) return rel_fail(c, "sparse_values must have rank 0 or 1, found %s", rel_type_str(c, v));
  if (dv->tensor.ndim != 0) return rel_fail(c, "default_value must be a scalar, found %s", rel_type_str(c, dv));
  Type *o = rel_attr_shape(c, "output_shape", v->tensor.dtype);
  if (!o) return REL_FAIL;
  if (ix->tensor.ndim == 2 && dim_known(ix->tensor.dims[1]) && ix->tensor.dims[1].value > (int64_t)o->tensor.ndim)
    return rel_fail(c, "sparse_indices rows have %lld coordinates but the output has rank %u",
                    (long long)ix->tensor.dims[1].value, o->tensor.ndim);
  if (v->tensor.ndim == 1 && ix->tensor.ndim >= 1 && !dim_compat(v->tensor.dims[0], ix->tensor.dims[0]))
    return rel_fail(c, "%s values for %s indices", rel_type_str(c, v), rel_type_str(c, ix));
  return done(c, o);
}

/* -------------------------------------------------- tiling, repeats, scans */

int rel_tile(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t reps[MAXR];
  int32_t n = rel_attr_ints(c, "reps", reps, MAXR);
  if (n < 0) return rel_fail(c, "reps is not set");
  uint32_t nd = a->tensor.ndim, out = (uint32_t)n > nd ? (uint32_t)n : nd;
  Type *o = rel_new_tensor(c, a->tensor.dtype, out);
  for (uint32_t i = 0; i < out; i++) {
    int64_t r = i + (uint32_t)n >= out ? reps[i + (uint32_t)n - out] : 1;
    if (r < 0) return rel_fail(c, "reps must be non-negative");
    Dim d = i + nd >= out ? a->tensor.dims[i + nd - out] : dim_int(1);
    o->tensor.dims[i] = dim_mul(c, d, dim_int(r));
  }
  return done(c, o);
}

int rel_repeat(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t r = rel_attr_int(c, "repeats", 1), axis = rel_attr_int(c, "axis", 0);
  if (r < 0) return rel_fail(c, "repeats must be non-negative, got %lld", (long long)r);
  if (rel_attr_is_none(c, "axis")) return rel_fail(c, "axis must be set");
  if (!rel_norm_axis(&axis, a->tensor.ndim))
    return rel_fail(c, "axis %lld is out of range for rank %u", (long long)axis, a->tensor.ndim);
  return done(c, with_dim(c, a, (uint32_t)axis, dim_mul(c, a->tensor.dims[axis], dim_int(r))));
}

int rel_reverse(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  if (rel_attr_is_none(c, "axis")) return rel_fail(c, "axis must be set");
  int64_t axis = rel_attr_int(c, "axis", 0);
  if (!rel_norm_axis(&axis, a->tensor.ndim))
    return rel_fail(c, "axis %lld is out of range for rank %u", (long long)axis, a->tensor.ndim);
  return done(c, (Type *)a);
}

int rel_cumulative(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  DType dt = a->tensor.dtype;
  rel_attr_dtype(c, "dtype", &dt);
  if (rel_attr_is_none(c, "axis")) {
    Dim p = dim_int(1);
    for (uint32_t i = 0; i < a->tensor.ndim; i++) p = dim_mul(c, p, a->tensor.dims[i]);
    Type *o = rel_new_tensor(c, dt, 1);
    o->tensor.dims[0] = p;
    return done(c, o);
  }
  int64_t axis = rel_attr_int(c, "axis", 0);
  if (!rel_norm_axis(&axis, a->tensor.ndim))
    return rel_fail(c, "axis %lld is out of range for rank %u", (long long)axis, a->tensor.ndim);
  return done(c, rel_retype(c, a, dt));
}

/* ---------------------------------------------------------------- layouts */

int rel_layout_transform(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  const char *src = rel_attr_str(c, "src_layout", ""), *dst = rel_attr_str(c, "dst_layout", "");
  Layout ls, ld;
  if (!layout_parse(src, &ls)) return rel_fail(c, "invalid src_layout \"%s\"", src);
  if (!layout_parse(dst, &ld)) return rel_fail(c, "invalid dst_layout \"%s\"", dst);
  if ((uint32_t)ls.n != a->tensor.ndim)
    return rel_fail(c, "src_layout \"%s\" has %d axes but the input has rank %u", src, ls.n, a->tensor.ndim);
  for (int32_t i = 0; i < ls.n; i++) /* a split axis holds exactly its factor */
    if (ls.ax[i] >= 'a' && dim_known(a->tensor.dims[i]) && a->tensor.dims[i].value != ls.factor[i])
      return rel_fail(c, "src_layout \"%s\" splits %c by %lld but the input's axis %d has extent %lld", src,
                      ls.ax[i] - 'a' + 'A', (long long)ls.factor[i], i, (long long)a->tensor.dims[i].value);
  for (int32_t i = 0; i < ls.n; i++)
    if (ls.ax[i] <= 'Z' && !memchr(ld.ax, ls.ax[i], (size_t)ld.n))
      return rel_fail(c, "layouts \"%s\" and \"%s\" have different primal axes", src, dst);
  for (int32_t i = 0; i < ld.n; i++)
    if (ld.ax[i] <= 'Z' && !memchr(ls.ax, ld.ax[i], (size_t)ls.n))
      return rel_fail(c, "layouts \"%s\" and \"%s\" have different primal axes", src, dst);
  Type *o = rel_new_tensor(c, a->tensor.dtype, ld.n);
  for (int32_t i = 0; i < ld.n; i++) {
    char ch = ld.ax[i];
    if (ch >= 'a') {
      o->tensor.dims[i] = dim_int(ld.factor[i]);
      continue;
    }
    int p = (int)((const char *)memchr(ls.ax, ch, (size_t)ls.n) - ls.ax);
    Dim full = a->tensor.dims[p];
    int64_t fs = layout_sub_factor(&ls, ch), fd = layout_sub_factor(&ld, ch);
    if (fs) full = dim_mul(c, full, dim_int(fs));
    if (fd) full = dim_known(full) ? dim_int(full.value / fd + (full.value % fd > 0)) : dim_any(); /* ceil */
    o->tensor.dims[i] = full;
  }
  return done(c, o);
}

/* ---------------------------------------------------------------- creation */

static int shape_attr(TypeRelCtx *c, DType dt, Type **out) {
  *out = rel_attr_shape(c, "shape", dt);
  return *out ? REL_DONE : REL_FAIL;
}

int rel_creation(TypeRelCtx *c) {
  DType dt;
  if (!rel_attr_dtype(c, "dtype", &dt)) return rel_fail(c, "dtype is not set");
  Type *o;
  if (shape_attr(c, dt, &o)) return REL_FAIL;
  return done(c, o);
}

int rel_full(TypeRelCtx *c) {
  const Type *f = rel_tensor(c, 0);
  if (!f) return rel_pending(c);
  if (f->tensor.ndim != 0) return rel_fail(c, "fill_value must be a scalar, found %s", rel_type_str(c, f));
  DType dt = f->tensor.dtype;
  rel_attr_dtype(c, "dtype", &dt);
  Type *o;
  if (shape_attr(c, dt, &o)) return REL_FAIL;
  return done(c, o);
}

int rel_full_like(TypeRelCtx *c) {
  const Type *a, *f;
  if (!rel_tensors(c, 2, &a, &f)) return rel_pending(c);
  if (f->tensor.ndim != 0) return rel_fail(c, "fill_value must be a scalar, found %s", rel_type_str(c, f));
  return done(c, (Type *)a);
}

/* arange bound i (start, stop, step): the attribute only (TVM's copy of the
 * input, printed as meta[relay.Constant][k] or a literal), as TVM's relation
 * reads it. An omitted or None attribute gives `?` even when the input is a
 * constant, so the type never depends on a value a pass propagates into an
 * input: inlining `%f()` into the step used to turn a `?` that an annotation
 * had unified with (0) into (3), and a let-bound `inff` into a range error,
 * both ill-typed pass outputs (fuzz fail-204/232). Such a range is checked
 * when it runs (ops/kernels/k_index.c). */
static bool arange_bound(TypeRelCtx *c, uint32_t i, double *v) {
  static const char *const keys[3] = {"start", "stop", "step"};
  return rel_attr_number(c, keys[i], v);
}

int rel_arange(TypeRelCtx *c) {
  DType dt = DT_F32;
  rel_attr_dtype(c, "dtype", &dt);
  Type *s = rel_new_tensor(c, dt, 0);
  for (uint32_t i = 0; i < 3; i++)
    if (!rel_assign(c, i, s)) return REL_FAIL;
  Type *o = rel_new_tensor(c, dt, 1);
  double b, e, st;
  if (arange_bound(c, 0, &b) && arange_bound(c, 1, &e) && arange_bound(c, 2, &st)) {
    if (st == 0) return rel_fail(c, "step must not be 0");
    double n = ceil((e - b) / st);
    if (!(n > 0)) {
      if (isnan(n)) return rel_fail(c, "the length of the range is not a number (start %g, stop %g, step %g)", b, e, st);
      return rel_fail(c, "the range is empty (start %g, stop %g, step %g)", b, e, st);
    }
    if (n > 0x1p62) return rel_fail(c, "the range is too long (start %g, stop %g, step %g)", b, e, st);
    o->tensor.dims[0] = dim_int((int64_t)n);
  }
  return done(c, o);
}

int rel_shape_of(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  DType dt = DTYPE(DT_INT, 32);
  rel_attr_dtype(c, "dtype", &dt);
  if (a->tensor.ndim == 0) return done(c, rel_new_tensor(c, dt, 0));
  Type *o = rel_new_tensor(c, dt, 1);
  o->tensor.dims[0] = dim_int(a->tensor.ndim);
  return done(c, o);
}

int rel_ndarray_size(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  DType dt = DTYPE(DT_INT, 32);
  rel_attr_dtype(c, "dtype", &dt);
  return done(c, rel_new_tensor(c, dt, 0));
}

/* ----------------------------------------------------------------- sorting */

/* sort: out := data, forwards only (TVM's SortRel waits for its input,
 * unlike the Identity relation of the elementwise operators). */
int rel_sort(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  return done(c, (Type *)a);
}

int rel_argsort(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t axis = rel_attr_int(c, "axis", -1);
  if (a->tensor.ndim && !rel_norm_axis(&axis, a->tensor.ndim))
    return rel_fail(c, "axis %lld is out of range for rank %u", (long long)rel_attr_int(c, "axis", -1), a->tensor.ndim);
  DType dt = DTYPE(DT_INT, 32);
  rel_attr_dtype(c, "dtype", &dt);
  return done(c, rel_retype(c, a, dt));
}

int rel_topk(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t axis = rel_attr_int(c, "axis", -1), k = rel_attr_int(c, "k", 1);
  if (!rel_norm_axis(&axis, a->tensor.ndim))
    return rel_fail(c, "axis %lld is out of range for rank %u", (long long)rel_attr_int(c, "axis", -1), a->tensor.ndim);
  Dim d = k < 1 ? a->tensor.dims[axis] : dim_int(k);
  return rel_topk_output(c, with_dim(c, a, (uint32_t)axis, d));
}
