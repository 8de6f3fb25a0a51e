/* bench/ffi/bench_ffi.c — cost of foreign operators per element.
 *
 * On one 10^7-element float32 tensor, times the kernels of: an elementwise
 * foreign function (one ffi_call per element), the same work as a buffer
 * foreign function (one ffi_call per tensor), the built-in `negative`, and
 * erfc from libm through libffi next to the built-in `erf`. Each kernel runs
 * RUNS times on a fresh context; the median is printed in ns/element.
 * Run it through bench/ffi/run.sh (builds the test library and this file).
 *
 *     build/bench/bench_ffi LIBDIR      # LIBDIR holds libffitest.so
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/foreign/ffi.h"
#include "ops/kernels/kernel.h"
#include "ops/registry.h"
#include "runtime/tensor.h"

#define N 10000000
#define RUNS 5

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median ns/element of op's kernel on x (borrowed). */
static double time_op(const char *name, Tensor *x) {
  int32_t id = op_lookup(name);
  if (id < 0 || !op_get(id)->kernel) {
    fprintf(stderr, "bench_ffi: no kernel for %s\n", name);
    exit(1);
  }
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    Tensor *in[1] = {tensor_retain(x)};
    KernelCtx c;
    kernel_ctx_init(&c, id, in, 1, NULL, NULL);
    double t0 = now();
    int rc = op_get(id)->kernel(&c);
    t[r] = (now() - t0) * 1e9 / N;
    if (rc != KERNEL_OK) {
      fprintf(stderr, "bench_ffi: %s failed: %s\n", name, c.err);
      exit(1);
    }
    kernel_ctx_clear(&c);
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  return t[RUNS / 2];
}

/* Median ns/element of writing a fresh output tensor once (allocation and
 * first touch of its pages): a cost every kernel above pays too. */
static double time_fresh_output(void) {
  double t[RUNS];
  int64_t shape[1] = {N};
  for (int r = 0; r < RUNS; r++) {
    double t0 = now();
    Tensor *y = tensor_new(DT_F32, 1, shape);
    memset(y->data, 0, (size_t)N * sizeof(float));
    t[r] = (now() - t0) * 1e9 / N;
    tensor_release(y);
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  return t[RUNS / 2];
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bench_ffi LIBDIR\n");
    return 2;
  }
  char decl[1024];
  snprintf(decl, sizeof decl,
           "op b.neg elementwise from \"%s/libffitest.so\": float neg_f32(float);"
           "op b.negbuf buffer from \"%s/libffitest.so\": void neg_buf_f32(const float *in, float *out, int64_t n);"
           "op b.erfc elementwise from libm.so.6: float erfcf(float);",
           argv[1], argv[1]);
  Diag d;
  diag_init(&d, stderr, NULL);
  if (!foreign_declare_text(decl, &d)) return 1;
  int64_t shape[1] = {N};
  Tensor *x = tensor_new(DT_F32, 1, shape);
  float *p = x->data;
  srand(1);
  for (int64_t i = 0; i < N; i++) p[i] = (float)rand() / (float)RAND_MAX * 4 - 2;
  printf("ffi: 10^7 float32 elements, median of %d runs (ns/element)\n", RUNS);
  printf("  %-44s %6.2f\n", "elementwise foreign neg_f32 (ffi_call/elem)", time_op("b.neg", x));
  printf("  %-44s %6.2f\n", "buffer foreign neg_buf_f32 (1 ffi_call)", time_op("b.negbuf", x));
  printf("  %-44s %6.2f\n", "built-in negative", time_op("negative", x));
  printf("  %-44s %6.2f\n", "elementwise foreign erfcf (libm)", time_op("b.erfc", x));
  printf("  %-44s %6.2f\n", "built-in erf", time_op("erf", x));
  printf("  %-44s %6.2f\n", "(allocating + zeroing a fresh output)", time_fresh_output());
  tensor_release(x);
  return 0;
}
