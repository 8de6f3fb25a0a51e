/* ops/kernels/k_elemwise_scaled.c — relayc.add_scaled(a, b, s) = a + s·b, the
 * operator transform/scaled_add.c (FuseScaledAdd) makes of add/subtract(a,
 * multiply(s, b)): an SGD update `w - lr * dw` in one pass over memory instead
 * of two (and one result buffer instead of two).
 *
 * a and b have one shape and one dtype (float32 or float64, the relation's
 * rule), s is a scalar of that dtype. Each element is computed as the two
 * operators did, t = s·b rounded, then a + t rounded (KHOT_EXACT: no FP
 * contraction), so the fused call is bit for bit the pair it replaces;
 * subtract(a, s·b) arrives as a + (−s)·b, the same numbers since negation
 * and a − t = a + (−t) are exact.
 *
 * The result goes into a dying a or b (kernel_take_input) when there is one:
 * element i of both operands is read before element i of the output is
 * written, so aliasing either is safe. Work is split over the pool in blocks
 * of ADS_BLOCK elements with the memory-bound grain of k_elemwise_fast.c.
 */
#include <stdint.h>

#include "ops/kernels/k_simd.h"
#include "ops/kernels/kernel.h"

int kernel_RELAYC_ADD_SCALED(KernelCtx *c);

/* Elements per block (4 KiB of float32) and blocks per chunk (a wake-up of
 * another thread is worth it from ~32K elements on). */
enum { ADS_BLOCK = 1024, ADS_GRAIN = 32 };

static KHOT_EXACT void ads_f32(const float *a, const float *b, float s, float *o, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float t = s * b[i];
    o[i] = a[i] + t;
  }
}

static KHOT_EXACT void ads_f64(const double *a, const double *b, double s, double *o, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double t = s * b[i];
    o[i] = a[i] + t;
  }
}

typedef struct AdsJob {
  const void *a, *b;
  void *o;
  double s;
  bool f64;
  int64_t numel;
} AdsJob;

static void ads_range(void *arg, int64_t lo, int64_t hi) {
  const AdsJob *j = arg;
  int64_t i = lo * ADS_BLOCK, end = hi * ADS_BLOCK < j->numel ? hi * ADS_BLOCK : j->numel;
  if (i >= end) return;
  if (j->f64)
    ads_f64((const double *)j->a + i, (const double *)j->b + i, j->s, (double *)j->o + i, end - i);
  else
    ads_f32((const float *)j->a + i, (const float *)j->b + i, (float)j->s, (float *)j->o + i, end - i);
}

int kernel_RELAYC_ADD_SCALED(KernelCtx *c) {
  const Tensor *a = c->inputs[0], *b = c->inputs[1], *s = c->inputs[2];
  DType dt = a->dtype;
  bool f32 = dt.code == DT_FLOAT && dt.bits == 32 && dt.lanes == 1;
  bool f64 = dt.code == DT_FLOAT && dt.bits == 64 && dt.lanes == 1;
  if (!(f32 || f64) || !tensor_same_type(a, b) || s->numel != 1 || !dtype_eq(s->dtype, dt))
    return kernel_fail(c, "relayc.add_scaled: a, b of one float32/float64 type and a scalar s of it are required");
  double sv = f64 ? *(const double *)s->data : (double)*(const float *)s->data;
  Tensor *o = kernel_take_input(c, 0); /* a and b stay readable: the taken one becomes o */
  if (!o) o = kernel_take_input(c, 1);
  if (o) kernel_set_output(c, o);
  else if (!(o = kernel_output_like(c, a))) return KERNEL_ERROR;
  if (o->numel > 0) {
    AdsJob j = {.a = a->data, .b = b->data, .o = o->data, .s = sv, .f64 = f64, .numel = o->numel};
    kernel_parallel_for(c, (o->numel + ADS_BLOCK - 1) / ADS_BLOCK, ADS_GRAIN, ads_range, &j);
  }
  return KERNEL_OK;
}
