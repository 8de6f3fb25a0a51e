/* ops/kernels/k_loss.c — loss kernels: nn.cross_entropy and
 * nn.cross_entropy_with_logits (spec/gradient.md 5.6), nn.nll_loss (TVM's).
 *
 * Both reduce a (N, K) pair to a scalar of the input dtype:
 *   cross_entropy(x, y)             = −Σ log(x[i, j])·y[i, j] / N
 *   cross_entropy_with_logits(x, y) = −Σ x[i, j]·y[i, j] / N
 * (despite its name the second applies no softmax: x already holds
 * log-probabilities). The sum runs in double over blocks of the flat
 * arrays; float32 logarithms come from the vector log of ops/kernels/k_vmath.h
 * (within 1e-6 relative of logf), float64 from libm, float16 computes in
 * float32. Integer inputs are a run-time error, like the float math kernels.
 *
 * nn.nll_loss(p (N, C, d...), t (N, d...), w (C)): out[n, i] = −p[n, t, i]·w[t], 0 where t
 * is ignore_index; "none" returns out, "sum" Σ out, "mean" Σ out / Σ w[t] over the kept
 * positions (topi's reference), accumulated in double. A target outside [0, C) that is
 * not ignore_index is a run-time error.
 */
#include <math.h>
#include <string.h>

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

/* The loss at flat target position k (batch n, inner s of S), or false after kernel_fail. */
static bool nll_term(KernelCtx *c, int64_t k, int64_t S, int64_t ignore, double *loss, double *weight) {
  const Tensor *p = c->inputs[0], *t = c->inputs[1], *w = c->inputs[2];
  int64_t C = p->shape[1], cls = ku_index(t, k);
  *loss = *weight = 0;
  if (cls == ignore) return true;
  if (cls < 0 || cls >= C)
    return kernel_fail(c, "nn.nll_loss: target %lld at flat position %lld is outside [0, %lld)", (long long)cls,
                       (long long)k, (long long)C), false;
  int64_t n = k / S, s = k % S;
  size_t pes = dtype_size(p->dtype), wes = dtype_size(w->dtype);
  *weight = tensor_load_f64(w->dtype, (const char *)w->data + (size_t)cls * wes);
  *loss = -tensor_load_f64(p->dtype, (const char *)p->data + (size_t)((n * C + cls) * S + s) * pes) * *weight;
  return true;
}

int kernel_NN_NLL_LOSS(KernelCtx *c);
int kernel_NN_NLL_LOSS(KernelCtx *c) {
  const Tensor *p = c->inputs[0], *t = c->inputs[1], *w = c->inputs[2];
  if (!dtype_is_float(p->dtype) || !dtype_eq(p->dtype, w->dtype) || !dtype_is_int(t->dtype) || p->ndim < 2 ||
      t->ndim + 1 != p->ndim || w->ndim != 1 || w->shape[0] != p->shape[1])
    return kernel_fail(c, "nn.nll_loss: needs predictions (N, C, d...), int targets (N, d...) and weights (C)");
  for (int32_t i = 0; i < t->ndim; i++)
    if (t->shape[i] != p->shape[i ? i + 1 : 0]) return kernel_fail(c, "nn.nll_loss: targets do not fit the predictions");
  const char *red = kernel_attr_str(c, "reduction", "mean");
  int64_t ignore = kernel_attr_int(c, "ignore_index", -100), S = ku_prod(p->shape, 2, p->ndim);
  bool none = !strcmp(red, "none");
  if (!none && strcmp(red, "mean") && strcmp(red, "sum")) return kernel_fail(c, "nn.nll_loss: unknown reduction \"%s\"", red);
  Tensor *o = none ? kernel_output(c, p->dtype, t->ndim, t->shape) : kernel_output(c, p->dtype, 0, NULL);
  if (!o) return KERNEL_ERROR;
  size_t oes = dtype_size(o->dtype);
  double sum = 0, wsum = 0;
  for (int64_t k = 0; k < t->numel; k++) {
    double l, wt;
    if (!nll_term(c, k, S, ignore, &l, &wt)) return KERNEL_ERROR;
    if (none) tensor_store_f64(o->dtype, (char *)o->data + (size_t)k * oes, l);
    sum += l;
    wsum += wt;
  }
  if (!none) tensor_store_f64(o->dtype, o->data, !strcmp(red, "sum") ? sum : sum / wsum);
  return KERNEL_OK;
}

int kernel_NN_CROSS_ENTROPY(KernelCtx *c);
int kernel_NN_CROSS_ENTROPY(KernelCtx *c) { return cross_entropy(c, true); }
int kernel_NN_CROSS_ENTROPY_WITH_LOGITS(KernelCtx *c);
int kernel_NN_CROSS_ENTROPY_WITH_LOGITS(KernelCtx *c) { return cross_entropy(c, false); }
