/* ops/kernels/k_loss.c — loss kernels: nn.cross_entropy and
 * nn.cross_entropy_with_logits (spec/gradient.md 5.6).
 *
 * Both reduce a (N, K) pair to a scalar of the input dtype:
 *   cross_entropy(x, y)             = −Σ log(x[i, j])·y[i, j] / N
 *   cross_entropy_with_logits(x, y) = −Σ x[i, j]·y[i, j] / N
 * (despite its name the second applies no softmax: x already holds
 * log-probabilities). The sum runs in double over blocks of the flat
 * arrays; float32 logarithms come from the vector log of ops/kernels/k_vmath.h
 * (within 1e-6 relative of logf), float64 from libm, float16 computes in
 * float32. Integer inputs are a run-time error, like the float math kernels.
 */
#include <math.h>

#include "ops/kernels/k_util.h"
#include "ops/kernels/k_vmath.h"
#include "ops/op_ids.h"

enum { LOSS_BLOCK = 256 };

static double dot_log_f32(const float *x, const float *y, int64_t n, bool take_log) {
  double s = 0;
  float buf[LOSS_BLOCK];
  for (int64_t i = 0; i < n; i += LOSS_BLOCK) {
    int64_t m = n - i < LOSS_BLOCK ? n - i : LOSS_BLOCK;
    const float *a = x + i;
    if (take_log) {
      kvm_log_f32(a, buf, m);
      a = buf;
    }
    double part = 0;
    for (int64_t k = 0; k < m; k++) part += (double)(a[k] * y[i + k]);
    s += part;
  }
  return s;
}

static double dot_log_f64(const double *x, const double *y, int64_t n, bool take_log) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += (take_log ? log(x[i]) : x[i]) * y[i];
  return s;
}

static int cross_entropy(KernelCtx *c, bool take_log) {
  const Tensor *x0 = c->inputs[0], *y0 = c->inputs[1];
  const char *name = c->op->name;
  if (!dtype_is_float(x0->dtype) || !dtype_eq(x0->dtype, y0->dtype))
    return kernel_fail(c, "%s: needs two float tensors of one dtype", name);
  if (x0->ndim != 2 || y0->ndim != 2 || x0->shape[0] != y0->shape[0] || x0->shape[1] != y0->shape[1])
    return kernel_fail(c, "%s: needs two rank-2 tensors of one shape", name);
  Tensor *tx = NULL, *ty = NULL;
  const Tensor *x = ku_float_in(x0, &tx), *y = x ? ku_float_in(y0, &ty) : NULL;
  if (!x || !y) {
    tensor_release(tx);
    tensor_release(ty);
    return kernel_fail(c, "%s: out of memory", name);
  }
  double s = ku_type(x->dtype) == KU_F64 ? dot_log_f64(x->data, y->data, x->numel, take_log)
                                         : dot_log_f32(x->data, y->data, x->numel, take_log);
  tensor_release(tx);
  tensor_release(ty);
  double v = -s / (double)x0->shape[0];
  Tensor *o = kernel_output(c, x0->dtype, 0, NULL);
  if (!o) return KERNEL_ERROR;
  tensor_store_f64(o->dtype, o->data, v);
  return KERNEL_OK;
}

int kernel_NN_CROSS_ENTROPY(KernelCtx *c);
int kernel_NN_CROSS_ENTROPY(KernelCtx *c) { return cross_entropy(c, true); }
int kernel_NN_CROSS_ENTROPY_WITH_LOGITS(KernelCtx *c);
int kernel_NN_CROSS_ENTROPY_WITH_LOGITS(KernelCtx *c) { return cross_entropy(c, false); }
