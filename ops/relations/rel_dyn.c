/* ops/relations/rel_dyn.c — relations of the dyn.* operators (spec/passes.md 11.6).
 *
 * A dyn operator is its static twin with some attributes passed as tensors.
 * Its result rank must be static — it comes from the static extent of a
 * shape-like input (an integer vector's length) or from the data's rank —
 * while the extents those inputs decide are `?` (TVM's Any), exactly as in
 * TVM's relations; extents the dynamic inputs do not touch are kept (the
 * dims past the sliced ones of dyn.strided_slice, the non-spatial dims of
 * the resizes). Shape-like inputs must be numeric tensors of the right rank
 * (vectors of static length; scalars for expand_dims' axis, one_hot's depth,
 * the upsampling scales; a scalar or a (1,) tensor for topk's k; a float roi
 * vector for resize); that is checked here. Their dtype is free, as in TVM
 * (which checks none, and whose own tests pass float32 reps, k and size): the
 * kernels truncate float values, as TVM's DynamicToStatic and shape functions
 * do.
 */
#include "ops/layout.h"
#include "ops/relations/rel_util.h"

#include <stdio.h>

static int done(TypeRelCtx *c, Type *o) { return rel_assign(c, rel_ninputs(c), o) ? REL_DONE : REL_FAIL; }

static bool int_dtype(DType t) { return (t.code == DT_INT || t.code == DT_UINT) && t.bits > 1; }

/* Input i as a numeric vector of static length: the length, or -1 after
 * reporting (-2 while the input is unknown). */
static int64_t vec_len(TypeRelCtx *c, uint32_t i, const char *what) {
  const Type *t = rel_tensor(c, i);
  if (!t) return rel_pending(c) == REL_FAIL ? -1 : -2;
  if (dtype_is_bool(t->tensor.dtype) || t->tensor.ndim != 1 || !dim_known(t->tensor.dims[0])) {
    rel_fail(c, "%s must be a numeric vector of static length, found %s", what, rel_type_str(c, t));
    return -1;
  }
  return t->tensor.dims[0].value;
}

/* Input i is a numeric scalar; REL_DONE, REL_WAIT or REL_FAIL. */
static int scalar_input(TypeRelCtx *c, uint32_t i, const char *what) {
  const Type *t = rel_tensor(c, i);
  if (!t) return rel_pending(c);
  if (t->tensor.ndim != 0 || dtype_is_bool(t->tensor.dtype))
    return rel_fail(c, "%s must be a numeric scalar, found %s", what, rel_type_str(c, t));
  return REL_DONE;
}

/* A tensor of `rank` unknown extents. */
static Type *any_tensor(TypeRelCtx *c, DType dt, int64_t rank) { return rel_new_tensor(c, dt, (uint32_t)rank); }

#define VEC(i, what)                                                                               \
  int64_t n##i = vec_len(c, i, what);                                                              \
  if (n##i == -2) return REL_WAIT;                                                                 \
  if (n##i < 0) return REL_FAIL;

int rel_dyn_reshape(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  VEC(1, "newshape")
  return done(c, any_tensor(c, a->tensor.dtype, n1));
}

int rel_dyn_squeeze(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  VEC(1, "axes")
  if (n1 > a->tensor.ndim)
    return rel_fail(c, "%lld axes to squeeze but the input has rank %u", (long long)n1, a->tensor.ndim);
  return done(c, any_tensor(c, a->tensor.dtype, a->tensor.ndim - n1));
}

int rel_dyn_expand_dims(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int rc = scalar_input(c, 1, "axis");
  if (rc) return rc;
  int64_t k = rel_attr_int(c, "num_newaxis", 1);
  if (k < 0 || k > 64) return rel_fail(c, "num_newaxis must be in [0, 64], got %lld", (long long)k);
  return done(c, any_tensor(c, a->tensor.dtype, a->tensor.ndim + k));
}

int rel_dyn_tile(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  VEC(1, "reps")
  return done(c, any_tensor(c, a->tensor.dtype, n1 > a->tensor.ndim ? n1 : a->tensor.ndim));
}

int rel_dyn_broadcast_to(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  VEC(1, "shape")
  if (n1 < a->tensor.ndim)
    return rel_fail(c, "cannot broadcast %s to rank %lld", rel_type_str(c, a), (long long)n1);
  return done(c, any_tensor(c, a->tensor.dtype, n1));
}

/* dyn.zeros, dyn.ones: the dtype attribute is required (TVM's InitOpRel reads it as is). */
int rel_dyn_creation(TypeRelCtx *c) {
  VEC(0, "shape")
  DType dt;
  if (!rel_attr_dtype(c, "dtype", &dt)) return rel_fail(c, "dtype is not set");
  return done(c, any_tensor(c, dt, n0));
}

int rel_dyn_full(TypeRelCtx *c) {
  const Type *f = rel_tensor(c, 0);
  if (!f) return rel_pending(c);
  if (f->tensor.ndim != 0) return rel_fail(c, "fill_value must be a scalar, found %s", rel_type_str(c, f));
  VEC(1, "shape")
  DType dt = f->tensor.dtype;
  rel_attr_dtype(c, "dtype", &dt);
  return done(c, any_tensor(c, dt, n1));
}

int rel_dyn_one_hot(TypeRelCtx *c) {
  const Type *ix, *on, *off;
  if (!rel_tensors(c, 3, &ix, &on, &off)) return rel_pending(c);
  if (on->tensor.ndim != 0 || off->tensor.ndim != 0) return rel_fail(c, "on_value and off_value must be scalars");
  int rc = scalar_input(c, 3, "depth");
  if (rc) return rc;
  return rel_one_hot_output(c, ix, on, dim_any());
}

int rel_dyn_topk(TypeRelCtx *c) {
  const Type *a, *k;
  if (!rel_tensors(c, 2, &a, &k)) return rel_pending(c);
  if (dtype_is_bool(k->tensor.dtype) || k->tensor.ndim > 1 ||
      (k->tensor.ndim == 1 && !dim_compat(k->tensor.dims[0], dim_int(1))))
    return rel_fail(c, "k must be a number: a scalar or a tensor of shape (1,), found %s", rel_type_str(c, k));
  int64_t axis = rel_attr_int(c, "axis", -1);
  if (!rel_norm_axis(&axis, a->tensor.ndim))
    return rel_fail(c, "axis %lld is out of range for rank %u", (long long)rel_attr_int(c, "axis", -1), a->tensor.ndim);
  Type *vals = rel_retype(c, a, a->tensor.dtype);
  vals->tensor.dims[axis] = dim_any();
  return rel_topk_output(c, vals);
}

int rel_dyn_strided_slice(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  VEC(1, "begin")
  VEC(2, "end")
  VEC(3, "strides")
  if (n1 != n2 || n1 != n3) return rel_fail(c, "begin, end and strides must have the same length");
  if (n1 > a->tensor.ndim)
    return rel_fail(c, "begin has %lld entries but the input has rank %u", (long long)n1, a->tensor.ndim);
  const char *mode = rel_attr_str(c, "slice_mode", "end");
  if (strcmp(mode, "end") && strcmp(mode, "size")) return rel_fail(c, "unknown slice_mode \"%s\"", mode);
  Type *o = rel_retype(c, a, a->tensor.dtype);
  for (int64_t i = 0; i < n1; i++) o->tensor.dims[i] = dim_any();
  return done(c, o);
}

/* dyn.nn.pad(data, pad_width, pad_value): pad_width a numeric (rank, 2) matrix. */
int rel_dyn_pad(TypeRelCtx *c) {
  const Type *a, *pw, *v;
  if (!rel_tensors(c, 3, &a, &pw, &v)) return rel_pending(c);
  if (dtype_is_bool(pw->tensor.dtype) || pw->tensor.ndim != 2 || !dim_compat(pw->tensor.dims[0], dim_int(a->tensor.ndim)) ||
      !dim_compat(pw->tensor.dims[1], dim_int(2)))
    return rel_fail(c, "pad_width must be a numeric matrix of shape (%u, 2), found %s", a->tensor.ndim,
                    rel_type_str(c, pw));
  if (rel_pad_value_mode(c, v)) return REL_FAIL;
  return done(c, any_tensor(c, a->tensor.dtype, a->tensor.ndim));
}

/* The resizes: the spatial letters of the layout become `?`. */
static int resize_like(TypeRelCtx *c, const char *dflt_layout, const char *letters, uint32_t nscalars,
                       bool use_out_dtype) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  for (uint32_t i = 0; i < nscalars; i++) {
    int rc = scalar_input(c, 1 + i, "a scale");
    if (rc) return rc;
  }
  const char *l = rel_attr_str(c, "layout", dflt_layout);
  Layout lay;
  if (!layout_parse(l, &lay) || (uint32_t)lay.n != a->tensor.ndim)
    return rel_fail(c, "layout \"%s\" does not fit %s", l, rel_type_str(c, a));
  DType dt = a->tensor.dtype;
  if (use_out_dtype) rel_attr_dtype(c, "out_dtype", &dt);
  Type *o = rel_retype(c, a, dt);
  for (const char *p = letters; *p; p++) {
    int32_t pos = layout_find(&lay, *p);
    if (pos < 0 || layout_sub_factor(&lay, *p)) return rel_fail(c, "layout \"%s\" needs an unsplit %c axis", l, *p);
    o->tensor.dims[pos] = dim_any();
  }
  return done(c, o);
}

int rel_dyn_upsampling(TypeRelCtx *c) { return resize_like(c, "NCHW", "HW", 2, false); }
int rel_dyn_upsampling3d(TypeRelCtx *c) { return resize_like(c, "NCDHW", "DHW", 3, false); }

int rel_dyn_resize2d(TypeRelCtx *c) {
  /* TVM takes the size in any numeric dtype (its tests pass float32) and truncates it */
  VEC(1, "size")
  if (n1 != 2) return rel_fail(c, "size must have 2 values, found %lld", (long long)n1);
  const Type *roi = rel_tensor(c, 2);
  if (!roi) return rel_pending(c);
  if (!dtype_is_float(roi->tensor.dtype) || roi->tensor.ndim != 1 || !dim_compat(roi->tensor.dims[0], dim_int(4)))
    return rel_fail(c, "roi must be a float vector of 4 values, found %s", rel_type_str(c, roi));
  return resize_like(c, "NCHW", "HW", 0, true);
}

/* dyn.sparse_to_dense(indices, values, default_value, output_shape) */
int rel_dyn_sparse_to_dense(TypeRelCtx *c) {
  const Type *ix, *v, *dv;
  if (!rel_tensors(c, 3, &ix, &v, &dv)) return rel_pending(c);
  VEC(3, "output_shape")
  if (!int_dtype(ix->tensor.dtype) || ix->tensor.ndim > 2)
    return rel_fail(c, "sparse_indices must be an integer tensor of rank 0, 1 or 2, found %s", rel_type_str(c, ix));
  if (v->tensor.ndim > 1) return rel_fail(c, "sparse_values must have rank 0 or 1, found %s", rel_type_str(c, v));
  /* default_value of any dtype, cast to the values' (as the static operator) */
  if (dv->tensor.ndim != 0) return rel_fail(c, "default_value must be a scalar, found %s", rel_type_str(c, dv));
  return done(c, any_tensor(c, v->tensor.dtype, n3));
}
