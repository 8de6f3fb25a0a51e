/* ops/kernels/k_dyn.c — the dyn.* operators (spec/passes.md 11.6): the static
 * operator's computation with some attributes given as tensors.
 *
 * Each kernel reads its shape-like inputs (vectors, scalars, a (rank, 2)
 * pad_width matrix of any numeric dtype, float values truncated toward zero as
 * TVM's DynamicToStatic does; a float roi vector), checks them,
 * and runs the static operator's own kernel (the one DynamicToStatic would
 * call) with those values as attributes on top of the dyn call's other
 * attributes, in a nested KernelCtx; so the two can never disagree. The data
 * inputs move into the nested call (a dying input may still be reused in
 * place, reshape-likes still return views). The attribute values live in a
 * scratch module for the duration of the call.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ops/kernels/k_util.h"
#include "ops/op_ids.h"

#define MAXR TENSOR_MAX_NDIM

typedef struct DynCall {
  KernelCtx *c;
  Module *m;     /* holds the attribute values */
  Attrs *attrs;  /* the dyn call's attributes plus the overrides */
} DynCall;

static void dyn_begin(DynCall *d, KernelCtx *c) {
  d->c = c;
  d->m = module_new(NULL);
  d->attrs = (Attrs *)c->attrs;
}

static void dyn_set(DynCall *d, const char *key, AttrValue *v) { d->attrs = attrs_with(d->m, d->attrs, key, v); }

/* Runs static operator `op` on the dyn call's inputs `which` (moved into the
 * nested call) and hands its result to the dyn call; frees the scratch. */
static int dyn_run(DynCall *d, int32_t op, const uint32_t *which, uint32_t n) {
  KernelCtx *c = d->c;
  Tensor *ins[8];
  for (uint32_t i = 0; i < n; i++) {
    ins[i] = c->inputs[which[i]];
    c->inputs[which[i]] = NULL;
  }
  KernelCtx k;
  kernel_ctx_init(&k, op, ins, n, d->attrs, NULL);
  k.nthreads = c->nthreads;
  int rc = op_get(op)->kernel(&k);
  if (rc == KERNEL_OK && k.is_tuple) {
    kernel_set_tuple(c, k.outs, k.nouts);
    k.nouts = 0;
  } else if (rc == KERNEL_OK) {
    kernel_set_output(c, k.out);
    k.out = NULL;
  } else {
    snprintf(c->err, sizeof c->err, "%s", k.err[0] ? k.err : "operator failed");
  }
  kernel_ctx_clear(&k);
  module_free(d->m);
  return rc;
}

static int dyn_fail(DynCall *d, const char *msg) {
  kernel_fail(d->c, "%s: %s", d->c->op->name, msg);
  module_free(d->m);
  return KERNEL_ERROR;
}

/* Element i of a numeric tensor as an integer (floats truncated); false for a
 * bool, a non-finite float or one beyond int64. */
static bool num_at(const Tensor *t, int64_t i, int64_t *v) {
  if (dtype_is_int(t->dtype)) {
    *v = ku_index(t, i);
    return true;
  }
  double x = tensor_get_f64(t, i);
  if (dtype_is_bool(t->dtype) || !(x > -9.2e18 && x < 9.2e18)) return false;
  *v = (int64_t)x;
  return true;
}

static bool num_scalar_int(const Tensor *t, int64_t *v) { return t->numel == 1 && num_at(t, 0, v); }

static bool num_scalar(const Tensor *t, double *v) {
  if (t->numel != 1 || dtype_is_bool(t->dtype)) return false;
  *v = tensor_get_f64(t, 0);
  return isfinite(*v);
}

/* Input t as a vector of at most MAXR numbers (a scalar counts as one). */
static bool num_vec(const Tensor *t, int64_t *v, int32_t *n) {
  if (t->ndim > 1 || t->numel > MAXR) return false;
  *n = (int32_t)t->numel;
  for (int32_t i = 0; i < *n; i++)
    if (!num_at(t, i, &v[i])) return false;
  return true;
}

/* A vector input as the array attribute `key`; false when it is not one. */
static bool set_vec(DynCall *d, uint32_t input, const char *key) {
  int64_t v[MAXR];
  int32_t n;
  if (!num_vec(d->c->inputs[input], v, &n)) return false;
  dyn_set(d, key, attr_int_array(d->m, v, (uint32_t)n));
  return true;
}

#define DYN_VEC_OP(ID, STATIC, KEY, MSG)                                                           \
  int kernel_##ID(KernelCtx *c);                                                                   \
  int kernel_##ID(KernelCtx *c) {                                                                  \
    DynCall d;                                                                                     \
    dyn_begin(&d, c);                                                                              \
    if (!set_vec(&d, 1, KEY)) return dyn_fail(&d, MSG);                                            \
    return dyn_run(&d, STATIC, (uint32_t[]){0}, 1);                                                \
  }

DYN_VEC_OP(DYN_RESHAPE, OP_RESHAPE, "newshape", "newshape must be a vector of numbers")
DYN_VEC_OP(DYN_SQUEEZE, OP_SQUEEZE, "axis", "axes must be a vector of numbers")
DYN_VEC_OP(DYN_TILE, OP_TILE, "reps", "reps must be a vector of numbers")
DYN_VEC_OP(DYN_BROADCAST_TO, OP_BROADCAST_TO, "shape", "shape must be a vector of numbers")

int kernel_DYN_EXPAND_DIMS(KernelCtx *c);
int kernel_DYN_EXPAND_DIMS(KernelCtx *c) {
  DynCall d;
  dyn_begin(&d, c);
  int64_t axis;
  if (!num_scalar_int(c->inputs[1], &axis)) return dyn_fail(&d, "axis must be one number");
  dyn_set(&d, "axis", attr_int(d.m, axis));
  return dyn_run(&d, OP_EXPAND_DIMS, (uint32_t[]){0}, 1);
}

static int dyn_creation(KernelCtx *c, int32_t op, uint32_t shape_input) {
  DynCall d;
  dyn_begin(&d, c);
  if (!set_vec(&d, shape_input, "shape")) return dyn_fail(&d, "shape must be a vector of numbers");
  return op == OP_FULL ? dyn_run(&d, op, (uint32_t[]){0}, 1) : dyn_run(&d, op, NULL, 0);
}

int kernel_DYN_ZEROS(KernelCtx *c);
int kernel_DYN_ZEROS(KernelCtx *c) { return dyn_creation(c, OP_ZEROS, 0); }
int kernel_DYN_ONES(KernelCtx *c);
int kernel_DYN_ONES(KernelCtx *c) { return dyn_creation(c, OP_ONES, 0); }
int kernel_DYN_FULL(KernelCtx *c);
int kernel_DYN_FULL(KernelCtx *c) { return dyn_creation(c, OP_FULL, 1); }

int kernel_DYN_ONE_HOT(KernelCtx *c);
int kernel_DYN_ONE_HOT(KernelCtx *c) {
  DynCall d;
  dyn_begin(&d, c);
  int64_t depth;
  if (!num_scalar_int(c->inputs[3], &depth)) return dyn_fail(&d, "depth must be one number");
  dyn_set(&d, "depth", attr_int(d.m, depth));
  return dyn_run(&d, OP_ONE_HOT, (uint32_t[]){0, 1, 2}, 3);
}

int kernel_DYN_TOPK(KernelCtx *c);
int kernel_DYN_TOPK(KernelCtx *c) {
  DynCall d;
  dyn_begin(&d, c);
  int64_t k;
  if (!num_scalar_int(c->inputs[1], &k)) return dyn_fail(&d, "k must be one number");
  dyn_set(&d, "k", attr_int(d.m, k));
  return dyn_run(&d, OP_TOPK, (uint32_t[]){0}, 1);
}

int kernel_DYN_STRIDED_SLICE(KernelCtx *c);
int kernel_DYN_STRIDED_SLICE(KernelCtx *c) {
  DynCall d;
  dyn_begin(&d, c);
  if (!set_vec(&d, 1, "begin") || !set_vec(&d, 2, "end") || !set_vec(&d, 3, "strides"))
    return dyn_fail(&d, "begin, end and strides must be vectors of numbers");
  dyn_set(&d, "axes", attr_value_parse(d.m, "None"));
  return dyn_run(&d, OP_STRIDED_SLICE, (uint32_t[]){0}, 1);
}

/* dyn.nn.pad(data, pad_width, pad_val): pad_width is (rank, 2). */
int kernel_DYN_NN_PAD(KernelCtx *c);
int kernel_DYN_NN_PAD(KernelCtx *c) {
  DynCall d;
  dyn_begin(&d, c);
  const Tensor *pw = c->inputs[1];
  int64_t w[2 * MAXR];
  bool ok = pw->ndim == 2 && pw->shape[1] == 2 && pw->shape[0] <= MAXR;
  for (int64_t i = 0; ok && i < pw->numel; i++) ok = num_at(pw, i, &w[i]);
  if (!ok) return dyn_fail(&d, "pad_width must be a numeric matrix of shape (rank, 2)");
  char text[64 * MAXR * 2 + 8];
  size_t len = 0;
  len += (size_t)snprintf(text + len, sizeof text - len, "[");
  for (int64_t i = 0; i < pw->shape[0]; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "%s[%lld, %lld]", i ? ", " : "", (long long)w[2 * i],
                            (long long)w[2 * i + 1]);
  snprintf(text + len, sizeof text - len, "]");
  AttrValue *v = attr_value_parse(d.m, text);
  if (!v) return dyn_fail(&d, "invalid pad_width");
  dyn_set(&d, "pad_width", v);
  return dyn_run(&d, OP_NN_PAD, (uint32_t[]){0, 2}, 2);
}

static int dyn_scales(KernelCtx *c, int32_t op, const char *const *keys, uint32_t n) {
  DynCall d;
  dyn_begin(&d, c);
  for (uint32_t i = 0; i < n; i++) {
    double s;
    if (!num_scalar(c->inputs[1 + i], &s)) return dyn_fail(&d, "the scales must be finite scalars");
    dyn_set(&d, keys[i], attr_float(d.m, s));
  }
  return dyn_run(&d, op, (uint32_t[]){0}, 1);
}

int kernel_DYN_NN_UPSAMPLING(KernelCtx *c);
int kernel_DYN_NN_UPSAMPLING(KernelCtx *c) {
  static const char *const keys[] = {"scale_h", "scale_w"};
  return dyn_scales(c, OP_NN_UPSAMPLING, keys, 2);
}
int kernel_DYN_NN_UPSAMPLING3D(KernelCtx *c);
int kernel_DYN_NN_UPSAMPLING3D(KernelCtx *c) {
  static const char *const keys[] = {"scale_d", "scale_h", "scale_w"};
  return dyn_scales(c, OP_NN_UPSAMPLING3D, keys, 3);
}

/* dyn.image.resize2d(data, size, roi): size (2,) numbers (truncated), roi (4,) floats. */
int kernel_DYN_IMAGE_RESIZE2D(KernelCtx *c);
int kernel_DYN_IMAGE_RESIZE2D(KernelCtx *c) {
  DynCall d;
  dyn_begin(&d, c);
  /* TVM accepts a size of any numeric dtype and truncates it to integers */
  const Tensor *size = c->inputs[1];
  if (size->numel != 2 || size->ndim != 1 || dtype_is_bool(size->dtype)) return dyn_fail(&d, "size must be two numbers");
  int64_t hw[2];
  for (int i = 0; i < 2; i++) {
    double x = tensor_get_f64(size, i);
    if (!(x >= 0 && x < 1e15)) return dyn_fail(&d, "size must be two non-negative numbers");
    hw[i] = (int64_t)x;
  }
  dyn_set(&d, "size", attr_int_array(d.m, hw, 2));
  const Tensor *roi = c->inputs[2];
  if (!dtype_is_float(roi->dtype) || roi->numel != 4 || roi->ndim != 1)
    return dyn_fail(&d, "roi must be a vector of four floats");
  char text[160];
  char b[4][32];
  for (int i = 0; i < 4; i++) format_shortest_double(tensor_get_f64(roi, i), false, b[i]);
  snprintf(text, sizeof text, "[%sf, %sf, %sf, %sf]", b[0], b[1], b[2], b[3]);
  AttrValue *v = attr_value_parse(d.m, text);
  if (!v) return dyn_fail(&d, "invalid roi");
  dyn_set(&d, "roi", v);
  return dyn_run(&d, OP_IMAGE_RESIZE2D, (uint32_t[]){0}, 1);
}

/* dyn.sparse_to_dense(indices, values, default_value, output_shape) */
int kernel_DYN_SPARSE_TO_DENSE(KernelCtx *c);
int kernel_DYN_SPARSE_TO_DENSE(KernelCtx *c) {
  DynCall d;
  dyn_begin(&d, c);
  if (!set_vec(&d, 3, "output_shape")) return dyn_fail(&d, "output_shape must be a vector of numbers");
  return dyn_run(&d, OP_SPARSE_TO_DENSE, (uint32_t[]){0, 1, 2}, 3);
}
