/* ops/kernels/kernel.c — the KernelCtx API (ops/kernels/kernel.h): inputs, attributes, outputs, errors.
 *
 * The context owns its input references until a kernel takes one for
 * in-place reuse, and owns the results until the interpreter picks them up;
 * kernel_ctx_clear drops whatever is left, so every exit path is leak-free.
 * Attribute getters read the normalised call attributes and fall back to the
 * schema default text (parsed on demand) when the call carried none.
 */
#include "ops/kernels/kernel.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/dims_text.h"
#include "ir/mem.h"
#include "ops/kernels/k_util.h"
#include "runtime/threadpool.h"

void kernel_ctx_init(KernelCtx *c, int32_t op_id, Tensor **inputs, uint32_t n, const Attrs *attrs,
                     const Type *out_type) {
  memset(c, 0, sizeof *c);
  c->op_id = op_id;
  c->op = op_get(op_id);
  c->inputs = inputs;
  c->ninputs = n;
  c->attrs = attrs;
  c->out_type = out_type;
  c->nthreads = 1;
}

void kernel_ctx_clear(KernelCtx *c) {
  for (uint32_t i = 0; i < c->ninputs; i++) {
    tensor_release(c->inputs[i]);
    c->inputs[i] = NULL;
  }
  tensor_release(c->out);
  c->out = NULL;
  if (c->outs) {
    for (uint32_t i = 0; i < c->nouts; i++) tensor_release(c->outs[i]);
    mem_free(c->outs);
    c->outs = NULL;
  }
}

Tensor *kernel_take_input(KernelCtx *c, uint32_t i) {
  Tensor *t = c->inputs[i];
  if (!t || !tensor_is_unique(t)) return NULL;
  c->inputs[i] = NULL;
  return t;
}

int kernel_fail(KernelCtx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, sizeof c->err, fmt, ap);
  va_end(ap);
  return KERNEL_ERROR;
}

/* ------------------------------------------------------------ attributes */

const AttrValue *kernel_attr(const KernelCtx *c, const char *name) {
  const AttrValue *v = c->attrs ? attrs_get(c->attrs, name) : NULL;
  if (v) return v;
  /* schema default, parsed once per (op, field) into a process-wide module */
  static Module *store;
  if (!c->op) return NULL;
  for (uint32_t i = 0; i < c->op->nattrs; i++) {
    const AttrField *f = &c->op->attrs[i];
    if (strcmp(f->name, name) != 0) continue;
    const char *text = f->default_text ? f->default_text : f->py_default;
    if (!text) return NULL;
    if (!store) store = module_new(NULL);
    return attr_value_parse(store, text);
  }
  return NULL;
}

int64_t kernel_attr_int(const KernelCtx *c, const char *name, int64_t dflt) {
  const AttrValue *v = kernel_attr(c, name);
  if (v && v->kind == AV_FLOAT) return (int64_t)v->f.value; /* kernels also take a float, truncated */
  return attr_as_int(v, dflt);
}

double kernel_attr_double(const KernelCtx *c, const char *name, double dflt) {
  return attr_as_double(kernel_attr(c, name), dflt);
}

bool kernel_attr_bool(const KernelCtx *c, const char *name, bool dflt) {
  return attr_as_bool(kernel_attr(c, name), dflt);
}

const char *kernel_attr_str(const KernelCtx *c, const char *name, const char *dflt) {
  return attr_as_str(kernel_attr(c, name), dflt);
}

int32_t kernel_attr_ints(const KernelCtx *c, const char *name, int64_t *out, int32_t cap) {
  const AttrValue *v = kernel_attr(c, name);
  if (!v || v->kind != AV_ARRAY) return -1;
  for (uint32_t i = 0; i < v->arr.n && (int32_t)i < cap; i++) {
    const AttrValue *e = v->arr.items[i];
    out[i] = e->kind == AV_INT ? e->i.value : e->kind == AV_BOOL ? e->b : -1;
  }
  return (int32_t)v->arr.n;
}

bool kernel_attr_dtype(const KernelCtx *c, const char *name, DType *out) {
  const char *s = kernel_attr_str(c, name, NULL);
  if (!s || !*s) return false;
  return dtype_parse(s, strlen(s), out);
}

/* ------------------------------------------------------------ outputs */

Tensor *kernel_output(KernelCtx *c, DType dt, int32_t ndim, const int64_t *shape) {
  if (dt.lanes == 1 && ku_type(dt) == KU_OTHER) { /* a well-formed name (float86) no kernel stores */
    char name[32];
    kernel_fail(c, "%s: unsupported dtype %s", c->op ? c->op->name : "operator", dtype_name(dt, name));
    return NULL;
  }
  TensorError e = TENSOR_OK;
  Tensor *t = tensor_new_checked(dt, ndim, shape, &e);
  if (!t) {
    kernel_fail(c, "%s: cannot allocate the result: %s", c->op ? c->op->name : "operator",
                tensor_error_message(e));
    return NULL;
  }
  kernel_set_output(c, t);
  return t;
}

Tensor *kernel_output_like(KernelCtx *c, const Tensor *like) {
  return kernel_output(c, like->dtype, like->ndim, like->shape);
}

void kernel_set_output(KernelCtx *c, Tensor *t) {
  tensor_release(c->out);
  c->out = t;
}

void kernel_set_tuple(KernelCtx *c, Tensor **ts, uint32_t n) {
  if (c->outs) {
    for (uint32_t i = 0; i < c->nouts; i++) tensor_release(c->outs[i]);
    mem_free(c->outs);
  }
  c->outs = mem_malloc((n ? n : 1) * sizeof *c->outs);
  memcpy(c->outs, ts, n * sizeof *ts);
  c->nouts = n;
  c->is_tuple = true;
}

/* ------------------------------------------------------------ work splitting */

void kernel_parallel_for(KernelCtx *c, int64_t n, int64_t grain, KernelRangeFn body, void *arg) {
  (void)c;
  threadpool_for(n, grain, body, arg); /* runtime/threadpool.h */
}

/* ------------------------------------------------------------ broadcasting */

int kernel_fail_broadcast(KernelCtx *c, const char *op, const Tensor *a, const Tensor *b) {
  char sa[96], sb[96];
  return kernel_fail(c, "%s: shapes %s and %s cannot be broadcast together", op, dims_text(sa, sizeof sa, a->shape, a->ndim, DIMS_PLAIN),
                     dims_text(sb, sizeof sb, b->shape, b->ndim, DIMS_PLAIN));
}

bool kernel_broadcast_shape(const Tensor *a, const Tensor *b, int32_t *ndim, int64_t *shape) {
  int32_t n = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int32_t i = 0; i < n; i++) {
    int32_t ia = a->ndim - n + i, ib = b->ndim - n + i;
    int64_t x = ia >= 0 ? a->shape[ia] : 1, y = ib >= 0 ? b->shape[ib] : 1;
    if (x == y || y == 1) shape[i] = x;
    else if (x == 1) shape[i] = y;
    else return false;
  }
  *ndim = n;
  return true;
}
