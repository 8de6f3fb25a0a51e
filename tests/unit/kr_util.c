/* tests/unit/kr_util.c — kernel test helpers (tests/unit/kr_util.h). */
#include "tests/unit/kr_util.h"

#include <stdio.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/kernel.h"
#include "tests/unit/kt_util.h"

char kr_err[256];

static Module *kr_module(void) {
  static Module *m;
  if (!m) m = module_new(NULL);
  return m;
}

Tensor *kr_make(DType dt, int32_t ndim, const int64_t *shape, const double *vals) {
  Tensor *t = tensor_new_zeros(dt, ndim, shape);
  for (int64_t i = 0; t && vals && i < t->numel; i++) tensor_set_f64(t, i, vals[i]);
  return t;
}

Tensor *kr_iota(DType dt, int32_t ndim, const int64_t *shape) {
  Tensor *t = tensor_new_zeros(dt, ndim, shape);
  for (int64_t i = 0; t && i < t->numel; i++) tensor_set_f64(t, i, (double)i);
  return t;
}

Tensor *kr_scalar(DType dt, double v) { return kr_make(dt, 0, NULL, &v); }

Tensor *kr_run(int32_t op, const char *attrs, Tensor **ins, uint32_t n) {
  kr_err[0] = 0;
  return kt_call(op, kt_attrs(kr_module(), attrs), ins, n, kr_err);
}

Tensor **kr_run_tuple(int32_t op, const char *attrs, Tensor **ins, uint32_t n, uint32_t *nout) {
  kr_err[0] = 0;
  return kt_call_tuple(op, kt_attrs(kr_module(), attrs), ins, n, nout, kr_err);
}

bool kr_shape_is(const Tensor *t, int32_t ndim, const int64_t *shape) {
  if (!t || t->ndim != ndim) return false;
  for (int32_t i = 0; i < ndim; i++)
    if (t->shape[i] != shape[i]) return false;
  return true;
}

void kr_free(Tensor *a, Tensor *b, Tensor *c, Tensor *d) {
  tensor_release(a);
  tensor_release(b);
  tensor_release(c);
  tensor_release(d);
}

bool kr_runs_in_place(int32_t op, const char *attrs, Tensor *in0, Tensor **rest, uint32_t nrest, Tensor **out) {
  Tensor *ins[8] = {in0};
  for (uint32_t i = 0; i < nrest && i < 7; i++) ins[i + 1] = tensor_retain(rest[i]);
  const void *data = in0->data;
  KernelCtx c;
  kernel_ctx_init(&c, op, ins, nrest + 1, kt_attrs(kr_module(), attrs), NULL);
  int rc = op_get(op)->kernel(&c);
  *out = NULL;
  if (rc == KERNEL_OK) {
    *out = c.out;
    c.out = NULL;
  }
  kernel_ctx_clear(&c);
  return *out && (*out)->data == data;
}
