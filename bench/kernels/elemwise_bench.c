/* bench/kernels/elemwise_bench.c — elementwise kernels on GPT-2 shapes.
 *
 *   elemwise_bench [reps]
 *
 * Runs each float32 elementwise case of a GPT-2 block — (1,50,3072) and
 * (1,50,768) tensors, same-shape and broadcast binary ops, the unary math
 * of gelu and layer-norm, comparisons — through the operator's kernel as
 * the interpreter calls it, and prints the median time per element (ns) of:
 * the generic path (fast path switched off: the "before"), the fast path
 * on 1 thread, on the full pool, and on the full pool writing in place
 * into a dying input. The pool size for the last two is RELAYC_NUM_THREADS
 * or the CPU count. Use BENCH_CLOCK=cpu for process CPU time instead of
 * wall time, BENCH_STAT=min for the best run instead of the median (on a
 * busy machine), BENCH_ONLY=text to run the cases whose label contains it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/mem.h"
#include "ops/kernels/k_elemwise_fast.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "runtime/threadpool.h"

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

typedef struct Case {
  const char *label;
  int32_t op;
  int32_t ra, rb; /* rb < 0: unary */
  int64_t a[3], b[3];
  float scalar; /* rb == 0: the rank-0 right operand */
} Case;

static const Case cases[] = {
    {"add same (1,50,3072)", OP_ADD, 3, 3, {1, 50, 3072}, {1, 50, 3072}, 0},
    {"add bias (1,50,3072)+(3072)", OP_ADD, 3, 1, {1, 50, 3072}, {3072}, 0},
    {"multiply scalar (1,50,3072)*0.5", OP_MULTIPLY, 3, 0, {1, 50, 3072}, {0}, 0.5f},
    {"subtract row (1,50,768)-(1,50,1)", OP_SUBTRACT, 3, 3, {1, 50, 768}, {1, 50, 1}, 0},
    {"divide row (1,50,768)/(1,50,1)", OP_DIVIDE, 3, 3, {1, 50, 768}, {1, 50, 1}, 0},
    {"maximum same (1,50,3072)", OP_MAXIMUM, 3, 3, {1, 50, 3072}, {1, 50, 3072}, 0},
    {"less same (1,50,3072)", OP_LESS, 3, 3, {1, 50, 3072}, {1, 50, 3072}, 0},
    {"power x^2 (1,50,3072)", OP_POWER, 3, 0, {1, 50, 3072}, {0}, 2.0f},
    {"power x^3 (1,50,3072)", OP_POWER, 3, 0, {1, 50, 3072}, {0}, 3.0f},
    {"power x^0.5 (1,50,3072)", OP_POWER, 3, 0, {1, 50, 3072}, {0}, 0.5f},
    {"power x^1.7 (1,50,3072)", OP_POWER, 3, 0, {1, 50, 3072}, {0}, 1.7f},
    {"sqrt (1,50,3072)", OP_SQRT, 3, -1, {1, 50, 3072}, {0}, 0},
    {"rsqrt (1,50,3072)", OP_RSQRT, 3, -1, {1, 50, 3072}, {0}, 0},
    {"tanh (1,50,3072)", OP_TANH, 3, -1, {1, 50, 3072}, {0}, 0},
    {"erf (1,50,3072)", OP_ERF, 3, -1, {1, 50, 3072}, {0}, 0},
    {"exp (1,50,3072)", OP_EXP, 3, -1, {1, 50, 3072}, {0}, 0},
    {"sigmoid (1,50,3072)", OP_SIGMOID, 3, -1, {1, 50, 3072}, {0}, 0},
    {"log (1,50,3072)", OP_LOG, 3, -1, {1, 50, 3072}, {0}, 0},
    {"negative (1,50,3072)", OP_NEGATIVE, 3, -1, {1, 50, 3072}, {0}, 0},
    /* the bench/nets GPT-2 block's MLP activations (sequence 32, batch 50) */
    {"power x^3 (50,32,3072)", OP_POWER, 3, 0, {50, 32, 3072}, {0}, 3.0f},
    {"tanh (50,32,3072)", OP_TANH, 3, -1, {50, 32, 3072}, {0}, 0},
    {"add same (50,32,3072)", OP_ADD, 3, 3, {50, 32, 3072}, {50, 32, 3072}, 0},
};

static Tensor *make_input(int32_t rank, const int64_t *shape, float scalar, uint32_t seed) {
  Tensor *t = tensor_new(DT_F32, rank, shape);
  float *p = t->data;
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t->numel; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = rank == 0 ? scalar : 0.05f + 3.0f * (float)(s >> 8) / 16777216.0f;
  }
  return t;
}

/* One kernel call; inputs consumed when `give` (in-place allowed). Seconds. */
static double run_once(const Case *k, Tensor *a, Tensor *b, bool give) {
  Tensor *in[2] = {give ? a : tensor_retain(a), b ? (give ? b : tensor_retain(b)) : NULL};
  KernelCtx c;
  kernel_ctx_init(&c, k->op, in, b ? 2 : 1, NULL, NULL);
  double t = now();
  int rc = op_get(k->op)->kernel(&c);
  t = now() - t;
  if (rc != KERNEL_OK) {
    fprintf(stderr, "%s: %s\n", k->label, c.err);
    exit(1);
  }
  kernel_ctx_clear(&c);
  return t;
}

/* Median ns per output element. */
static double measure(const Case *k, Tensor *a, Tensor *b, bool give, int reps) {
  double *ts = mem_malloc((size_t)reps * sizeof *ts);
  for (int r = 0; r < reps + 2; r++) {
    Tensor *x = give ? tensor_copy(a) : a, *y = b && give ? tensor_copy(b) : b;
    double t = run_once(k, x, y, give);
    if (r >= 2) ts[r - 2] = t; /* two warm-up calls */
  }
  qsort(ts, (size_t)reps, sizeof *ts, cmp_d);
  const char *stat = getenv("BENCH_STAT");
  double med = stat && strcmp(stat, "min") == 0 ? ts[0] : ts[reps / 2];
  mem_free(ts);
  return med * 1e9 / (double)a->numel;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 31;
  if (reps < 1) reps = 1;
  const char *env = getenv("RELAYC_NUM_THREADS");
  char *full = env ? strdup(env) : NULL;
  size_t n = sizeof cases / sizeof *cases;
  const char *only = getenv("BENCH_ONLY"); /* a substring of the case labels */
  double (*res)[4] = mem_calloc(n, sizeof *res);
  /* columns 0, 1: one thread (generic, fast); 2, 3: the full pool */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0) setenv("RELAYC_NUM_THREADS", "1", 1);
    else if (full) setenv("RELAYC_NUM_THREADS", full, 1);
    else unsetenv("RELAYC_NUM_THREADS");
    threadpool_shutdown();
    for (size_t i = 0; i < n; i++) {
      const Case *k = &cases[i];
      if (only && !strstr(k->label, only)) continue;
      Tensor *a = make_input(k->ra, k->a, 0, (uint32_t)i);
      Tensor *b = k->rb < 0 ? NULL : make_input(k->rb, k->b, k->scalar, (uint32_t)i + 100);
      if (pass == 0) {
        kfast_set_enabled(false);
        res[i][0] = measure(k, a, b, false, reps);
        kfast_set_enabled(true);
        res[i][1] = measure(k, a, b, false, reps);
      } else {
        res[i][2] = measure(k, a, b, false, reps);
        res[i][3] = measure(k, a, b, true, reps);
      }
      tensor_release(a);
      tensor_release(b);
    }
    if (pass == 1)
      printf("float32 elementwise, ns per element (%s of %d), pool of %d threads\n",
             getenv("BENCH_STAT") && strcmp(getenv("BENCH_STAT"), "min") == 0 ? "min" : "median", reps,
             threadpool_size());
  }
  printf("%-36s %9s %9s %9s %9s %8s\n", "case", "generic", "fast 1T", "fast", "in-place", "speedup");
  for (size_t i = 0; i < n; i++)
    if (!only || strstr(cases[i].label, only))
      printf("%-36s %9.3f %9.3f %9.3f %9.3f %7.0fx\n", cases[i].label, res[i][0], res[i][1], res[i][2],
           res[i][3], res[i][0] / res[i][2]);
  mem_free(res);
  free(full);
  threadpool_shutdown();
  return 0;
}
