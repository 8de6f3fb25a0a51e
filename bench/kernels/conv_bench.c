/* bench/kernels/conv_bench.c — sgemm rate and conv2d GFLOP/s on real network layers.
 *
 *   conv_bench [sgemm|resnet|mobilenet|resnext|misc|all] [reps]
 *
 * sgemm: square single-precision GEMM through OpenBLAS directly (its own
 * threads) and through kgemm_f32 (our pool), n = 512..2048, best of reps.
 * resnet / mobilenet: every distinct nn.conv2d of ResNet-50 (v1.5) and
 * MobileNet-V2 at batch 1, 224×224, float32 (resnext: the grouped 3×3
 * convolutions of ResNeXt-50 32×4d, groups = 32), run through the kernel as the
 * interpreter calls it; prints per-layer time and GFLOP/s, then the total
 * network conv time (each layer weighted by how often it occurs) and the
 * overall rate as a fraction of the measured square-sgemm rate.
 */
#include <cblas.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ast.h"
#include "ir/diag.h"
#include "ops/kernels/k_gemm.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "runtime/threadpool.h"
#include "tests/unit/kt_util.h"

extern void openblas_set_num_threads(int);

/* Wall clock, or process CPU time with BENCH_CLOCK=cpu (robust on a busy
 * machine when run with RELAYC_NUM_THREADS=1). */
static double now(void) {
  static int cpu = -1;
  if (cpu < 0) {
    const char *s = getenv("BENCH_CLOCK");
    cpu = s && strcmp(s, "cpu") == 0;
  }
  struct timespec t;
  clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double sgemm_rate(int reps) {
  double best_ours = 0;
  kgemm_init();
  for (int n = 512; n <= 2048; n *= 2) {
    size_t sz = (size_t)n * (size_t)n;
    float *a = aligned_alloc(64, sz * 4), *b = aligned_alloc(64, sz * 4), *c = aligned_alloc(64, sz * 4);
    for (size_t i = 0; i < sz; i++) {
      a[i] = (float)(i % 7) * 0.1f;
      b[i] = (float)(i % 5) * 0.2f;
    }
    double flop = 2.0 * n * n * n, t_ob = 1e9, t_us = 1e9;
    for (int r = 0; r < reps; r++) {
      openblas_set_num_threads(threadpool_size());
      double t = now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
      t = now() - t;
      if (t < t_ob) t_ob = t;
      openblas_set_num_threads(1);
      t = now();
      kgemm_f32(false, false, n, n, n, a, n, b, n, 0, c, n);
      t = now() - t;
      if (t < t_us) t_us = t;
    }
    printf("sgemm n=%4d  openblas(%d thr) %6.1f GFLOP/s   kgemm(pool) %6.1f GFLOP/s\n", n,
           threadpool_size(), flop / t_ob / 1e9, flop / t_us / 1e9);
    if (flop / t_us / 1e9 > best_ours) best_ours = flop / t_us / 1e9;
    if (flop / t_ob / 1e9 > best_ours) best_ours = flop / t_ob / 1e9;
    free(a);
    free(b);
    free(c);
  }
  return best_ours;
}

typedef struct {
  int C, H, O, k, s, p, G, count;
} Layer;

static const Layer RESNET50[] = {
    {3, 224, 64, 7, 2, 3, 1, 1},
    {64, 56, 64, 1, 1, 0, 1, 1},    {64, 56, 64, 3, 1, 1, 1, 3},   {64, 56, 256, 1, 1, 0, 1, 4},
    {256, 56, 64, 1, 1, 0, 1, 2},   {256, 56, 128, 1, 1, 0, 1, 1}, {128, 56, 128, 3, 2, 1, 1, 1},
    {256, 56, 512, 1, 2, 0, 1, 1},  {128, 28, 512, 1, 1, 0, 1, 4}, {512, 28, 128, 1, 1, 0, 1, 3},
    {128, 28, 128, 3, 1, 1, 1, 3},  {512, 28, 256, 1, 1, 0, 1, 1}, {256, 28, 256, 3, 2, 1, 1, 1},
    {512, 28, 1024, 1, 2, 0, 1, 1}, {256, 14, 1024, 1, 1, 0, 1, 6}, {1024, 14, 256, 1, 1, 0, 1, 5},
    {256, 14, 256, 3, 1, 1, 1, 5},  {1024, 14, 512, 1, 1, 0, 1, 1}, {512, 14, 512, 3, 2, 1, 1, 1},
    {1024, 14, 2048, 1, 2, 0, 1, 1}, {512, 7, 2048, 1, 1, 0, 1, 3}, {2048, 7, 512, 1, 1, 0, 1, 2},
    {512, 7, 512, 3, 1, 1, 1, 2},
};

/* ResNeXt-50 32x4d after the stem and max-pool (as in resnext50_32x4d.relay):
 * the grouped 3×3 convolutions (groups = 32, stride 2 on a stage's first
 * block), then the 1×1 ones. */
static const Layer RESNEXT50[] = {
    {128, 56, 128, 3, 1, 1, 32, 3},   {256, 56, 256, 3, 2, 1, 32, 1},
    {256, 28, 256, 3, 1, 1, 32, 3},   {512, 28, 512, 3, 2, 1, 32, 1},
    {512, 14, 512, 3, 1, 1, 32, 5},   {1024, 14, 1024, 3, 2, 1, 32, 1},
    {1024, 7, 1024, 3, 1, 1, 32, 2},
    {64, 56, 128, 1, 1, 0, 1, 1},     {128, 56, 256, 1, 1, 0, 1, 3},
    {64, 56, 256, 1, 1, 0, 1, 1},     {256, 56, 128, 1, 1, 0, 1, 2},
    {256, 56, 256, 1, 1, 0, 1, 1},    {256, 28, 512, 1, 1, 0, 1, 4},
    {256, 56, 512, 1, 2, 0, 1, 1},    {512, 28, 256, 1, 1, 0, 1, 3},
    {512, 28, 512, 1, 1, 0, 1, 1},    {512, 14, 1024, 1, 1, 0, 1, 6},
    {512, 28, 1024, 1, 2, 0, 1, 1},   {1024, 14, 512, 1, 1, 0, 1, 5},
    {1024, 14, 1024, 1, 1, 0, 1, 1},  {1024, 7, 2048, 1, 1, 0, 1, 3},
    {1024, 14, 2048, 1, 2, 0, 1, 1},  {2048, 7, 1024, 1, 1, 0, 1, 2},
};

static Layer MOBILENET[64];
static int n_mobilenet;

static void add_mb(int C, int H, int O, int k, int s, int G) {
  int p = k / 2;
  for (int i = 0; i < n_mobilenet; i++) {
    Layer *l = &MOBILENET[i];
    if (l->C == C && l->H == H && l->O == O && l->k == k && l->s == s && l->G == G) {
      l->count++;
      return;
    }
  }
  MOBILENET[n_mobilenet++] = (Layer){C, H, O, k, s, p, G, 1};
}

static void build_mobilenet(void) {
  static const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int H = 112, C = 32;
  add_mb(3, 224, 32, 3, 2, 1);
  for (int b = 0; b < 7; b++)
    for (int i = 0; i < cfg[b][2]; i++) {
      int t = cfg[b][0], O = cfg[b][1], s = i == 0 ? cfg[b][3] : 1, hid = C * t;
      if (t != 1) add_mb(C, H, hid, 1, 1, 1);
      add_mb(hid, H, hid, 3, s, hid);
      H = (H + 2 - 3) / s + 1;
      add_mb(hid, H, O, 1, 1, 1);
      C = O;
    }
  add_mb(320, 7, 1280, 1, 1, 1);
  add_mb(1280, 1, 1000, 1, 1, 1);
}

static double run_layers(Module *m, const char *name, const Layer *ls, int n, int reps,
                         double sgemm) {
  double total_t = 0, total_f = 0, total_best = 0;
  printf("%s conv2d layers (batch 1, float32, %d threads):\n", name, threadpool_size());
  printf("  %5s %4s %5s %2s %2s %5s %5s  %9s %8s %9s %8s\n", "C", "H", "O", "k", "s", "G", "count",
         "med ms", "GFLOP/s", "best ms", "GFLOP/s");
  for (int i = 0; i < n; i++) {
    const Layer *l = &ls[i];
    int64_t xs[4] = {1, l->C, l->H, l->H}, ws[4] = {l->O, l->C / l->G, l->k, l->k};
    Tensor *x = kt_new(DTYPE(DT_FLOAT, 32), 4, xs), *w = kt_new(DTYPE(DT_FLOAT, 32), 4, ws);
    kt_fill(x, 1, -1, 1);
    kt_fill(w, 2, -1, 1);
    w->flags |= TENSOR_READONLY; /* a module constant, as in the network (weight caches) */
    char attrs[160];
    snprintf(attrs, sizeof attrs, "strides=[%d, %d]; padding=[%d, %d, %d, %d]; groups=%d", l->s,
             l->s, l->p, l->p, l->p, l->p, l->G);
    Attrs *a = kt_attrs(m, attrs);
    int64_t OH = (l->H + 2 * l->p - l->k) / l->s + 1;
    double flop = 2.0 * l->O * (l->C / l->G) * l->k * l->k * (double)OH * (double)OH;
    double ts[64];
    int r = reps > 64 ? 64 : reps;
    char err[256];
    Tensor *ins[2] = {x, w};
    tensor_release(kt_call(OP_NN_CONV2D, a, ins, 2, err)); /* warm-up */
    for (int k = 0; k < r; k++) {
      double t = now();
      Tensor *y = kt_call(OP_NN_CONV2D, a, ins, 2, err);
      ts[k] = now() - t;
      if (!y) {
        fprintf(stderr, "conv failed: %s\n", err);
        exit(1);
      }
      tensor_release(y);
    }
    qsort(ts, (size_t)r, sizeof *ts, cmp_d);
    double med = ts[r / 2], best = ts[0];
    printf("  %5d %4d %5d %2d %2d %5d %5d  %9.3f %8.1f %9.3f %8.1f\n", l->C, l->H, l->O, l->k, l->s,
           l->G, l->count, med * 1e3, flop / med / 1e9, best * 1e3, flop / best / 1e9);
    total_t += med * l->count;
    total_best += best * l->count;
    total_f += flop * l->count;
    tensor_release(x);
    w->flags &= ~(uint32_t)TENSOR_READONLY;
    tensor_release(w);
  }
  printf("  total: %.2f ms (best %.2f ms) for %.2f GFLOP = %.1f GFLOP/s (best %.1f)",
         total_t * 1e3, total_best * 1e3, total_f / 1e9, total_f / total_t / 1e9,
         total_f / total_best / 1e9);
  if (sgemm > 0) printf(" (%.0f%% of the sgemm rate %.1f)", 100 * total_f / total_t / 1e9 / sgemm, sgemm);
  printf("\n");
  return total_t;
}

/* ResNet-50's max_pool2d and global_avg_pool2d, and a batch_norm + ReLU pass. */
static void run_misc(Module *m, int reps) {
  struct { int32_t op; int64_t shape[4]; const char *attrs; const char *name; } cases[] = {
      {OP_NN_MAX_POOL2D, {1, 64, 112, 112}, "pool_size=[3, 3]; strides=[2, 2]; padding=[1, 1, 1, 1]", "max_pool2d 3x3 s2 (ResNet)"},
      {OP_NN_AVG_POOL2D, {1, 64, 112, 112}, "pool_size=[3, 3]; strides=[2, 2]; padding=[1, 1, 1, 1]", "avg_pool2d 3x3 s2"},
      {OP_NN_GLOBAL_AVG_POOL2D, {1, 2048, 7, 7}, "", "global_avg_pool2d (ResNet)"},
  };
  /* GPT-2 (1600 tokens × 768) dense layers */
  int64_t units[3] = {3072, 2304, 768};
  for (int u = 0; u < 3; u++) {
    int64_t xs[2] = {1600, u == 2 ? 3072 : 768}, ws[2] = {units[u], xs[1]};
    Tensor *x = kt_new(DTYPE(DT_FLOAT, 32), 2, xs), *w = kt_new(DTYPE(DT_FLOAT, 32), 2, ws);
    kt_fill(x, 4, -1, 1);
    kt_fill(w, 5, -1, 1);
    Tensor *ins[2] = {x, w};
    char err[256];
    double best = 1e9, flop = 2.0 * xs[0] * xs[1] * ws[0];
    for (int k = 0; k < reps; k++) {
      double t = now();
      Tensor *y = kt_call(OP_NN_DENSE, kt_attrs(m, ""), ins, 2, err);
      t = now() - t;
      tensor_release(y);
      if (t < best) best = t;
    }
    printf("  dense %4lldx%4lld -> %4lld          best %8.3f ms %6.1f GFLOP/s\n", (long long)xs[0],
           (long long)xs[1], (long long)ws[0], best * 1e3, flop / best / 1e9);
    tensor_release(x);
    tensor_release(w);
  }
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    Tensor *x = kt_new(DTYPE(DT_FLOAT, 32), 4, cases[i].shape);
    kt_fill(x, 3, -1, 1);
    Attrs *a = kt_attrs(m, cases[i].attrs);
    char err[256];
    Tensor *ins[1] = {x};
    double best = 1e9;
    for (int k = 0; k < reps; k++) {
      double t = now();
      Tensor *y = kt_call(cases[i].op, a, ins, 1, err);
      t = now() - t;
      if (!y) {
        fprintf(stderr, "%s failed: %s\n", cases[i].name, err);
        exit(1);
      }
      tensor_release(y);
      if (t < best) best = t;
    }
    printf("  %-30s best %8.3f ms\n", cases[i].name, best * 1e3);
    tensor_release(x);
  }
}

int main(int argc, char **argv) {
  stack_guard_init(8u << 20);
  /* as `relayc --run` does (tensor_heap_keep_freed): freed tensors stay in the heap */
  mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's maximum */
  mallopt(M_TRIM_THRESHOLD, -1);
  const char *what = argc > 1 ? argv[1] : "all";
  int reps = argc > 2 ? atoi(argv[2]) : 9;
  if (reps < 1) reps = 1;
  kgemm_init();
  printf("OpenBLAS core: %s, pool threads: %d\n", kgemm_core_name(), threadpool_size());
  double rate = 0;
  if (!strcmp(what, "sgemm") || !strcmp(what, "all")) rate = sgemm_rate(reps < 3 ? 3 : reps);
  Module *m = module_new(NULL);
  if (!strcmp(what, "resnet") || !strcmp(what, "all"))
    run_layers(m, "ResNet-50", RESNET50, (int)(sizeof RESNET50 / sizeof *RESNET50), reps, rate);
  if (!strcmp(what, "resnext") || !strcmp(what, "all"))
    run_layers(m, "ResNeXt-50", RESNEXT50, (int)(sizeof RESNEXT50 / sizeof *RESNEXT50),
               reps, rate);
  if (!strcmp(what, "mobilenet") || !strcmp(what, "all")) {
    build_mobilenet();
    run_layers(m, "MobileNet-V2", MOBILENET, n_mobilenet, reps, rate);
  }
  if (!strcmp(what, "misc") || !strcmp(what, "all")) run_misc(m, reps);
  module_free(m);
  threadpool_shutdown();
  return 0;
}
