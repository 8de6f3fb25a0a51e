/* ops/relations/rel_qnn.c — type relations of the QNN operators relayc has:
 * qnn.dequantize only (TVM's DequantizeRel): an int8 / uint8 / int32 tensor,
 * a float32 scale and an int32 zero point, each a scalar or a vector along
 * `axis` (per-channel), give a tensor of the data's shape in out_dtype
 * (float32 by default; float16 allowed, as TVM). */
#include "ops/relations/rel_util.h"
#include "ops/relations/type_rel.h"

/* A scalar, or a vector of the extent along the axis (unknown extents pass). */
static bool per_axis(const Type *t, Dim extent) {
  if (t->tensor.ndim == 0) return true;
  if (t->tensor.ndim != 1) return false;
  Dim d = t->tensor.dims[0];
  return !dim_known(d) || !dim_known(extent) || d.value == 1 || d.value == extent.value;
}

int rel_qnn_dequantize(TypeRelCtx *c) {
  const Type *x, *scale, *zp;
  if (!rel_tensors(c, 3, &x, &scale, &zp)) return rel_pending(c);
  DType xt = x->tensor.dtype;
  if (!((xt.code == DT_INT && (xt.bits == 8 || xt.bits == 32)) || (xt.code == DT_UINT && xt.bits == 8)) || xt.lanes != 1)
    return rel_fail(c, "the data must be an int8, uint8 or int32 tensor, found %s", rel_type_str(c, x));
  int64_t axis = rel_attr_int(c, "axis", -1);
  int64_t nd = x->tensor.ndim;
  if (nd == 0 ? (axis != -1 && axis != 0) : !rel_norm_axis(&axis, nd))
    return rel_fail(c, "axis %lld is out of range for %s", (long long)rel_attr_int(c, "axis", -1), rel_type_str(c, x));
  Dim extent = nd ? x->tensor.dims[axis] : dim_int(1);
  if (!dtype_eq(scale->tensor.dtype, DTYPE(DT_FLOAT, 32)) || !per_axis(scale, extent))
    return rel_fail(c, "the scale must be a float32 scalar or a vector along axis %lld, found %s", (long long)axis,
                    rel_type_str(c, scale));
  if (!dtype_eq(zp->tensor.dtype, DTYPE(DT_INT, 32)) || !per_axis(zp, extent))
    return rel_fail(c, "the zero point must be an int32 scalar or a vector along axis %lld, found %s",
                    (long long)axis, rel_type_str(c, zp));
  DType out;
  if (!rel_attr_dtype(c, "out_dtype", &out)) out = DTYPE(DT_FLOAT, 32);
  if (!(out.code == DT_FLOAT && (out.bits == 32 || out.bits == 16) && out.lanes == 1)) {
    char b[32];
    return rel_fail(c, "out_dtype must be float32 or float16, found %s", rel_dtype_str(out, b));
  }
  return rel_assign(c, 3, rel_retype(c, x, out)) ? REL_DONE : REL_FAIL;
}
