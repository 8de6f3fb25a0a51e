/* ops/relations/rel_broadcast.c — elementwise relations: Broadcast and its variants,
 * Identity and its variants, where, clip, casts, dropout, broadcast_to, and the
 * annotations' pass-through relation (any type, TVM's IdentityRel).
 *
 * Broadcasting is numpy's right-aligned rule (spec/ops.md §1.6) with TVM's
 * Any handling: a 1 takes the other extent, an unknown extent takes the other
 * one, equal extents stay. Dtypes must be identical — there is no implicit
 * promotion anywhere.
 */
#include "ops/relations/rel_util.h"

#include <stdio.h>

typedef enum { DT_ANYKIND, DT_FLOATS, DT_INTS, DT_BOOLS } DtClass;

static bool dt_ok(DType t, DtClass k) {
  switch (k) {
  case DT_FLOATS: return dtype_is_float(t);
  case DT_INTS: return t.code == DT_INT || t.code == DT_UINT;
  case DT_BOOLS: return dtype_is_bool(t);
  default: return true;
  }
}

static const char *class_name(DtClass k) {
  switch (k) {
  case DT_FLOATS: return "a floating-point";
  case DT_INTS: return "an integer or bool";
  case DT_BOOLS: return "a bool";
  default: return "any";
  }
}

static int check_class(TypeRelCtx *c, const Type *t, DtClass k, uint32_t arg) {
  if (dt_ok(t->tensor.dtype, k)) return REL_DONE;
  char b[32];
  return rel_fail(c, "argument %u has dtype %s but %s dtype is required", arg, dtype_name(t->tensor.dtype, b),
                  class_name(k));
}

/* Broadcast shape of a and b into a new tensor of dtype dt; NULL after an error. */
static Type *broadcast_shape(TypeRelCtx *c, const Type *a, const Type *b, DType dt) {
  uint32_t na = a->tensor.ndim, nb = b->tensor.ndim, n = na > nb ? na : nb;
  Type *o = rel_new_tensor(c, dt, n);
  for (uint32_t i = 1; i <= n; i++) {
    Dim *out = &o->tensor.dims[n - i];
    if (i > na) { *out = b->tensor.dims[nb - i]; continue; }
    if (i > nb) { *out = a->tensor.dims[na - i]; continue; }
    Dim x = a->tensor.dims[na - i], y = b->tensor.dims[nb - i];
    if (dim_known(x) && x.value == 1) *out = y;
    else if (dim_known(y) && y.value == 1) *out = x;
    else if (!dim_known(x)) *out = y;
    else if (!dim_known(y)) *out = x;
    else if (x.value == y.value) *out = x;
    else {
      rel_fail(c, "incompatible broadcast: %s and %s (dimension %lld vs %lld)", rel_type_str(c, a),
               rel_type_str(c, b), (long long)x.value, (long long)y.value);
      return NULL;
    }
  }
  return o;
}

static int same_dtype(TypeRelCtx *c, const Type *a, const Type *b) {
  if (dtype_eq(a->tensor.dtype, b->tensor.dtype)) return REL_DONE;
  return rel_fail(c, "operands have different dtypes: %s and %s (no implicit promotion)", rel_type_str(c, a),
                  rel_type_str(c, b));
}

static int broadcast(TypeRelCtx *c, DtClass k, bool to_bool) {
  const Type *a, *b;
  if (!rel_tensors(c, 2, &a, &b)) return rel_pending(c);
  if (same_dtype(c, a, b) || check_class(c, a, k, 1)) return REL_FAIL;
  Type *o = broadcast_shape(c, a, b, to_bool ? DT_BOOL_T : a->tensor.dtype);
  if (!o) return REL_FAIL;
  return rel_assign(c, 2, o) ? REL_DONE : REL_FAIL;
}

int rel_broadcast(TypeRelCtx *c) { return broadcast(c, DT_ANYKIND, false); }
int rel_broadcast_comp(TypeRelCtx *c) { return broadcast(c, DT_ANYKIND, true); }
int rel_broadcast_int(TypeRelCtx *c) { return broadcast(c, DT_INTS, false); }
int rel_broadcast_bool(TypeRelCtx *c) { return broadcast(c, DT_BOOLS, false); }
int rel_broadcast_float(TypeRelCtx *c) { return broadcast(c, DT_FLOATS, false); }

/* TVM's Identity unifies its input with its output: it runs as soon as
 * either is known (an annotated result types an unannotated argument).
 * IdentityComp (to_bool, isnan ...) only runs forwards, as TVM's does. */
static int identity(TypeRelCtx *c, DtClass k, bool to_bool) {
  uint32_t n = rel_ninputs(c), to = n; /* the slot to assign: the output, or backwards the input */
  const Type *a = rel_tensor(c, 0);
  if (!a && !to_bool && !rel_failed(c) && (a = rel_tensor(c, n))) to = 0;
  if (!a) return rel_pending(c);
  if (check_class(c, a, k, 1)) return REL_FAIL;
  if (to_bool) return rel_assign(c, n, rel_retype(c, a, DT_BOOL_T)) ? REL_DONE : REL_FAIL;
  return rel_assign(c, to, (Type *)a) ? REL_DONE : REL_FAIL;
}

int rel_identity(TypeRelCtx *c) { return identity(c, DT_ANYKIND, false); }
/* Float math (sqrt, log, tanh, ...): TVM's relation is plain Identity, so any dtype
 * type-checks (TVM's own tests type-check log(%n) on int32); the kernels compute floats
 * only and report an integer input at run time (spec/ops.md §4.1). */
int rel_identity_float(TypeRelCtx *c) { return identity(c, DT_ANYKIND, false); }
int rel_identity_int(TypeRelCtx *c) { return identity(c, DT_INTS, false); }
int rel_identity_bool(TypeRelCtx *c) { return identity(c, DT_BOOLS, false); }
int rel_identity_comp(TypeRelCtx *c) { return identity(c, DT_ANYKIND, true); }

/* on_device, device_copy, annotation.*: out := in0 whatever its kind (a tuple
 * stays a tuple; TVM's FoldConstant wraps constant tuples in on_device). TVM's
 * relation is Identity: it runs in either direction. */
int rel_pass_through(TypeRelCtx *c) {
  uint32_t n = rel_ninputs(c), to = n;
  const Type *a = rel_type(c, 0);
  if (!a && !rel_failed(c) && (a = rel_type(c, n))) to = 0;
  if (!a) return rel_pending(c);
  return rel_assign(c, to, (Type *)a) ? REL_DONE : REL_FAIL;
}

/* gradient(F), relayc's extension (spec/gradient.md §1.10): F of type
 * fn (T1, ..., Tn) -> R gives fn (T1, ..., Tn) -> (R, (T1, ..., Tn)). */
int rel_gradient(TypeRelCtx *c) {
  const Type *f = rel_type(c, 0);
  if (!f) return rel_pending(c);
  if (f->kind != TYPE_FUNC)
    return rel_fail(c, "the argument must be a function, found %s", rel_type_str(c, f));
  if (f->func.ntparams)
    return rel_fail(c, "the function must not be polymorphic (%s)", rel_type_str(c, f));
  Module *m = rel_module(c);
  Type *grads = type_new(m, TYPE_TUPLE, (Span){0, 0});
  grads->tuple.n = f->func.nargs;
  grads->tuple.fields = f->func.args;
  Type *res = type_new(m, TYPE_TUPLE, (Span){0, 0});
  res->tuple.n = 2;
  res->tuple.fields = arena_alloc(m->arena, 2 * sizeof(Type *));
  res->tuple.fields[0] = f->func.ret;
  res->tuple.fields[1] = grads;
  Type *out = type_new(m, TYPE_FUNC, (Span){0, 0});
  out->func.args = f->func.args;
  out->func.nargs = f->func.nargs;
  out->func.ret = res;
  return rel_assign(c, rel_ninputs(c), out) ? REL_DONE : REL_FAIL;
}

int rel_where(TypeRelCtx *c) {
  const Type *cond, *x, *y;
  if (!rel_tensors(c, 3, &cond, &x, &y)) return rel_pending(c);
  if (same_dtype(c, x, y)) return REL_FAIL;
  Type *xy = broadcast_shape(c, x, y, x->tensor.dtype);
  if (!xy) return REL_FAIL;
  Type *o = broadcast_shape(c, cond, xy, x->tensor.dtype);
  if (!o) return REL_FAIL;
  return rel_assign(c, 3, o) ? REL_DONE : REL_FAIL;
}

/* clip's relation is TVM's Identity (either direction). */
int rel_clip(TypeRelCtx *c) { return identity(c, DT_ANYKIND, false); }

int rel_cast(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  DType dt;
  if (!rel_attr_dtype(c, "dtype", &dt)) return rel_fail(c, "the target dtype is not set");
  return rel_assign(c, 1, rel_retype(c, a, dt)) ? REL_DONE : REL_FAIL;
}

int rel_cast_like(TypeRelCtx *c) {
  const Type *a, *like;
  if (!rel_tensors(c, 2, &a, &like)) return rel_pending(c);
  return rel_assign(c, 2, rel_retype(c, a, like->tensor.dtype)) ? REL_DONE : REL_FAIL;
}

int rel_reinterpret(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  DType dt;
  if (!rel_attr_dtype(c, "dtype", &dt)) return rel_fail(c, "the target dtype is not set");
  if (dt.bits * dt.lanes != a->tensor.dtype.bits * a->tensor.dtype.lanes) {
    char x[32], y[32];
    return rel_fail(c, "cannot reinterpret %s as %s: the bit widths differ", dtype_name(a->tensor.dtype, x),
                    dtype_name(dt, y));
  }
  return rel_assign(c, 1, rel_retype(c, a, dt)) ? REL_DONE : REL_FAIL;
}

int rel_dropout(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  Type *t = rel_new_tuple(c, 2);
  t->tuple.fields[0] = (Type *)a;
  t->tuple.fields[1] = (Type *)a;
  return rel_assign(c, 1, t) ? REL_DONE : REL_FAIL;
}

/* Broadcast(a, want) reproduces want (rank included); false after reporting. */
static bool broadcasts_to(TypeRelCtx *c, const Type *a, const Type *want) {
  Type *got = broadcast_shape(c, a, want, want->tensor.dtype);
  if (!got) return false;
  bool ok = got->tensor.ndim == want->tensor.ndim;
  for (uint32_t i = 0; ok && i < want->tensor.ndim; i++) ok = dim_compat(got->tensor.dims[i], want->tensor.dims[i]);
  if (!ok) rel_fail(c, "cannot broadcast %s to %s", rel_type_str(c, a), rel_type_str(c, want));
  return ok;
}

int rel_broadcast_to(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  Type *want = rel_attr_shape(c, "shape", a->tensor.dtype);
  if (!want) return REL_FAIL;
  if (!broadcasts_to(c, a, want)) return REL_FAIL;
  return rel_assign(c, 1, want) ? REL_DONE : REL_FAIL;
}

/* TVM's BroadCastToLike: the result has broadcast_type's type — unified
 * whichever of the two is known first, so either types the other — and
 * broadcasting data (same dtype) to it must reproduce it. */
int rel_broadcast_to_like(TypeRelCtx *c) {
  const Type *like = rel_tensor(c, 1);
  if (!like && !rel_failed(c)) like = rel_tensor(c, 2);
  if (!like) return rel_pending(c);
  if (!rel_assign(c, 1, (Type *)like) || !rel_assign(c, 2, (Type *)like)) return REL_FAIL;
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  if (same_dtype(c, a, like) || !broadcasts_to(c, a, like)) return REL_FAIL;
  return REL_DONE;
}

/* relayc.add_scaled(a, b, s) = a + s·b (transform/scaled_add.c): a and b of
 * one shape and one float32/float64 dtype, s a scalar of that dtype; the
 * result has a's type. No broadcasting: the kernel is one flat pass. */
int rel_add_scaled(TypeRelCtx *c) {
  const Type *a, *b, *s;
  if (!rel_tensors(c, 3, &a, &b, &s)) return rel_pending(c);
  if (same_dtype(c, a, b) || same_dtype(c, a, s)) return REL_FAIL;
  DType dt = a->tensor.dtype;
  if (dt.code != DT_FLOAT || (dt.bits != 32 && dt.bits != 64) || dt.lanes != 1)
    return rel_fail(c, "float32 or float64 operands are required, found %s", rel_type_str(c, a));
  if (s->tensor.ndim != 0) return rel_fail(c, "argument 3 must be a scalar, found %s", rel_type_str(c, s));
  bool same = a->tensor.ndim == b->tensor.ndim;
  for (uint32_t i = 0; same && i < a->tensor.ndim; i++) same = dim_compat(a->tensor.dims[i], b->tensor.dims[i]);
  if (!same) return rel_fail(c, "arguments 1 and 2 must have one shape: %s and %s", rel_type_str(c, a), rel_type_str(c, b));
  return rel_assign(c, 3, (Type *)a) ? REL_DONE : REL_FAIL;
}
