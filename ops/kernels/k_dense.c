/* ops/kernels/k_dense.c — nn.dense, nn.matmul, nn.batch_matmul.
 *
 * All three reduce to a batch of row-major GEMMs C_b = op(A_b) · op(B_b)
 * (mm_batched) with per-operand batch strides (0 = broadcast, batch_matmul's
 * extent-1 batches and matmul's shared b):
 *   dense:        C[rows × N] = X[rows × K] · Wᵀ  (W is N × K), one GEMM;
 *   matmul:       without transpose_a the leading dims fold into the rows
 *                 (one GEMM); with it, one GEMM per leading index;
 *   batch_matmul: one GEMM per batch.
 * float32/float64 go through ops/kernels/k_gemm.h (own sgemm or OpenBLAS): a single GEMM is split
 * into panels across the pool; a batch of small GEMMs runs one serial GEMM
 * per task. float16 computes in float32; integer results use plain loops in
 * int64 (wrapping once on store, ops/kernels/k_cvt.h). Operands are cast to
 * out_dtype first (spec/ops.md §7).
 */
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_cvt.h"
#include "ops/kernels/k_gemm.h"
#include "ops/kernels/kernel.h"
#include "runtime/threadpool.h"

typedef struct MmJob {
  KCompute k;
  bool ta, tb;
  int64_t M, N, K, sa, sb, sc;
  const void *A, *B;
  void *C;
} MmJob;

static void mm_one(const MmJob *j, int64_t b) {
  int64_t lda = j->ta ? j->M : j->K, ldb = j->tb ? j->K : j->N;
  if (j->k == KC_F32)
    kgemm_f32_serial(j->ta, j->tb, j->M, j->N, j->K, (const float *)j->A + b * j->sa, lda,
                     (const float *)j->B + b * j->sb, ldb, 0.0f, (float *)j->C + b * j->sc, j->N);
  else
    kgemm_f64_serial(j->ta, j->tb, j->M, j->N, j->K, (const double *)j->A + b * j->sa, lda,
                     (const double *)j->B + b * j->sb, ldb, 0.0, (double *)j->C + b * j->sc, j->N);
}

static void mm_batch_task(void *raw, int64_t lo, int64_t hi) {
  for (int64_t b = lo; b < hi; b++) mm_one(raw, b);
}

/* Integer GEMM rows: task index = b·M + i. */
static void mm_int_task(void *raw, int64_t lo, int64_t hi) {
  const MmJob *j = raw;
  const int64_t *A = j->A, *B = j->B;
  int64_t *C = j->C;
  for (int64_t t = lo; t < hi; t++) {
    int64_t b = t / j->M, i = t % j->M;
    const int64_t *a = A + b * j->sa, *bb = B + b * j->sb;
    int64_t *c = C + b * j->sc + i * j->N;
    for (int64_t n = 0; n < j->N; n++) {
      uint64_t acc = 0;
      for (int64_t k = 0; k < j->K; k++) {
        int64_t av = j->ta ? a[k * j->M + i] : a[i * j->K + k];
        int64_t bv = j->tb ? bb[n * j->K + k] : bb[k * j->N + n];
        acc += (uint64_t)av * (uint64_t)bv;
      }
      c[n] = (int64_t)acc;
    }
  }
}

static void mm_batched(MmJob *j, int64_t batch) {
  if (batch <= 0 || j->M <= 0 || j->N <= 0) return;
  if (j->k == KC_I64) {
    int64_t grain = 4096 / (j->N * (j->K > 0 ? j->K : 1) + 1) + 1;
    threadpool_for(batch * j->M, grain, mm_int_task, j);
    return;
  }
  kgemm_init();
  int64_t lda = j->ta ? j->M : j->K, ldb = j->tb ? j->K : j->N;
  double macs = (double)j->M * (double)j->N * (double)j->K;
  if (batch == 1 || (batch < 2 * threadpool_size() && macs > 4e6)) {
    for (int64_t b = 0; b < batch; b++) {
      if (j->k == KC_F32)
        kgemm_f32(j->ta, j->tb, j->M, j->N, j->K, (const float *)j->A + b * j->sa, lda,
                  (const float *)j->B + b * j->sb, ldb, 0.0f, (float *)j->C + b * j->sc, j->N);
      else
        kgemm_f64(j->ta, j->tb, j->M, j->N, j->K, (const double *)j->A + b * j->sa, lda,
                  (const double *)j->B + b * j->sb, ldb, 0.0, (double *)j->C + b * j->sc, j->N);
    }
    return;
  }
  int64_t grain = macs > 65536 ? 1 : (int64_t)(65536 / (macs + 1)) + 1;
  threadpool_for(batch, grain, mm_batch_task, j);
}

/* Loads inputs 0 and 1 as compute buffers cast to odt, runs the GEMMs into
 * out, stores. The geometry is in j (A, B, C filled here). */
static int mm_run(KernelCtx *c, MmJob *j, int64_t batch, Tensor *out, DType odt) {
  bool ao = false, bo = false;
  j->k = kcvt_kind(odt);
  void *A = kcvt_load(kernel_input(c, 0), odt, j->k, &ao);
  void *B = A ? kcvt_load(kernel_input(c, 1), odt, j->k, &bo) : NULL;
  bool native = kcvt_is_native(odt, j->k);
  void *C = native ? out->data : kcvt_alloc(j->k, out->numel);
  int rc = KERNEL_OK;
  if (!A || !B || !C) {
    rc = kernel_fail(c, "%s: out of memory", c->op->name);
  } else {
    j->A = A;
    j->B = B;
    j->C = C;
    mm_batched(j, batch);
    if (!native) kcvt_store(out, C, j->k);
  }
  if (ao) mem_free(A);
  if (bo) mem_free(B);
  if (!native) mem_free(C);
  return rc;
}

static DType mm_out_dtype(KernelCtx *c) {
  DType odt = kernel_input(c, 0)->dtype;
  kernel_attr_dtype(c, "out_dtype", &odt);
  return odt;
}

/* nn.dense and nn.matmul: a (…, M, K) or, transposed, (…, K, M); b (K, N) or (N, K). */
static int matmul_common(KernelCtx *c, bool ta, bool tb) {
  const Tensor *a = kernel_input(c, 0), *b = kernel_input(c, 1);
  const char *name = c->op->name;
  if (b->ndim != 2) return kernel_fail(c, "%s: weight must have rank 2", name);
  if (a->ndim < 1 || (ta && a->ndim < 2)) return kernel_fail(c, "%s: data rank too small", name);
  int64_t K = ta ? a->shape[a->ndim - 2] : a->shape[a->ndim - 1];
  int64_t N = tb ? b->shape[0] : b->shape[1], KB = tb ? b->shape[1] : b->shape[0];
  if (K != KB)
    return kernel_fail(c, "%s: data has %lld features but the weight expects %lld", name,
                       (long long)K, (long long)KB);
  int64_t shape[TENSOR_MAX_NDIM];
  memcpy(shape, a->shape, (size_t)a->ndim * sizeof *shape);
  MmJob j = {.ta = ta, .tb = tb, .N = N, .K = K, .sb = 0};
  int64_t batch;
  if (!ta) {
    j.M = K > 0 ? a->numel / K : 0;
    if (K == 0) {
      j.M = 1;
      for (int32_t i = 0; i < a->ndim - 1; i++) j.M *= a->shape[i];
    }
    batch = 1;
  } else {
    j.M = a->shape[a->ndim - 1];
    shape[a->ndim - 2] = j.M;
    batch = 1;
    for (int32_t i = 0; i < a->ndim - 2; i++) batch *= a->shape[i];
    j.sa = K * j.M;
  }
  shape[a->ndim - 1] = N;
  j.sc = j.M * N;
  DType odt = mm_out_dtype(c);
  Tensor *out = kernel_output(c, odt, a->ndim, shape);
  if (!out) return KERNEL_ERROR;
  return mm_run(c, &j, batch, out, odt);
}

int kernel_NN_DENSE(KernelCtx *c);
int kernel_NN_MATMUL(KernelCtx *c);
int kernel_NN_BATCH_MATMUL(KernelCtx *c);

int kernel_NN_DENSE(KernelCtx *c) { return matmul_common(c, false, true); }

int kernel_NN_MATMUL(KernelCtx *c) {
  return matmul_common(c, kernel_attr_bool(c, "transpose_a", false),
                       kernel_attr_bool(c, "transpose_b", false));
}

int kernel_NN_BATCH_MATMUL(KernelCtx *c) {
  const Tensor *a = kernel_input(c, 0), *b = kernel_input(c, 1);
  if (a->ndim != 3 || b->ndim != 3)
    return kernel_fail(c, "nn.batch_matmul: both inputs must have rank 3");
  bool ta = kernel_attr_bool(c, "transpose_a", false), tb = kernel_attr_bool(c, "transpose_b", false);
  int64_t B1 = a->shape[0], B2 = b->shape[0];
  int64_t M = ta ? a->shape[2] : a->shape[1], K = ta ? a->shape[1] : a->shape[2];
  int64_t KB = tb ? b->shape[2] : b->shape[1], N = tb ? b->shape[1] : b->shape[2];
  if (B1 != B2 && B1 != 1 && B2 != 1)
    return kernel_fail(c, "nn.batch_matmul: batch dimensions %lld and %lld differ", (long long)B1,
                       (long long)B2);
  if (K != KB)
    return kernel_fail(c, "nn.batch_matmul: reduction dimensions %lld and %lld differ",
                       (long long)K, (long long)KB);
  int64_t B = B1 == 1 ? B2 : B1;
  int64_t shape[3] = {B, M, N};
  DType odt = mm_out_dtype(c);
  Tensor *out = kernel_output(c, odt, 3, shape);
  if (!out) return KERNEL_ERROR;
  MmJob j = {.ta = ta, .tb = tb, .M = M, .N = N, .K = K};
  j.sa = B1 == 1 ? 0 : M * K;
  j.sb = B2 == 1 ? 0 : K * N;
  j.sc = M * N;
  return mm_run(c, &j, B, out, odt);
}

/* relayc.matmul_add_scaled(a, p, q, s) = a + s·matmul(p, q) (FuseScaledAdd's
 * fusion of an SGD update with its gradient's product), float32 and rank 2:
 * the product as nn.matmul computes it, each element then rounded as
 * relayc.add_scaled does (ops/kernels/k_gemm.h kgemm_f32_add_scaled). */
int kernel_RELAYC_MATMUL_ADD_SCALED(KernelCtx *c);
int kernel_RELAYC_MATMUL_ADD_SCALED(KernelCtx *c) {
  const Tensor *a = kernel_input(c, 0), *p = kernel_input(c, 1), *q = kernel_input(c, 2),
               *s = kernel_input(c, 3);
  DType f32 = {DT_FLOAT, 32, 1};
  if (!dtype_eq(a->dtype, f32) || !dtype_eq(p->dtype, f32) || !dtype_eq(q->dtype, f32) ||
      !dtype_eq(s->dtype, f32) || s->numel != 1 || a->ndim != 2 || p->ndim != 2 || q->ndim != 2)
    return kernel_fail(c, "relayc.matmul_add_scaled: float32 a, p, q of rank 2 and a scalar s are required");
  bool ta = kernel_attr_bool(c, "transpose_a", false), tb = kernel_attr_bool(c, "transpose_b", false);
  int64_t M = ta ? p->shape[1] : p->shape[0], K = ta ? p->shape[0] : p->shape[1];
  int64_t KB = tb ? q->shape[1] : q->shape[0], N = tb ? q->shape[0] : q->shape[1];
  if (K != KB || a->shape[0] != M || a->shape[1] != N)
    return kernel_fail(c, "relayc.matmul_add_scaled: shapes do not match");
  Tensor *out = kernel_output_like(c, a);
  if (!out) return KERNEL_ERROR;
  kgemm_f32_add_scaled(ta, tb, M, N, K, p->data, ta ? M : K, q->data, tb ? K : N,
                       *(const float *)s->data, a->data, N, out->data, N);
  return KERNEL_OK;
}
