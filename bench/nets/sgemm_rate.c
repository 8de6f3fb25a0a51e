/* bench/nets/sgemm_rate.c — OpenBLAS square sgemm rate, the yardstick for ResNet-50's GFLOP/s.
 *
 *     gcc -O2 -I/usr/include/x86_64-linux-gnu/openblas-pthread sgemm_rate.c -lopenblas -o sgemm_rate
 *     OPENBLAS_NUM_THREADS=2 ./sgemm_rate [N=1024] [REPS=7]
 *
 * Prints the median GFLOP/s of REPS timed C = A·B (N×N float32, row-major) after one warm-up,
 * counting 2·N³ flops per product. Thread count is OpenBLAS's (OPENBLAS_NUM_THREADS).
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024;
  int reps = argc > 2 ? atoi(argv[2]) : 7;
  if (n <= 0 || reps <= 0 || reps > 1000) return 2;
  size_t nn = (size_t)n * (size_t)n;
  float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
  double *rate = malloc((size_t)reps * sizeof *rate);
  if (!a || !b || !c || !rate) return 3;
  for (size_t i = 0; i < nn; i++) {
    a[i] = (float)(i % 17) / 17.0f - 0.5f;
    b[i] = (float)(i % 13) / 13.0f - 0.5f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    rate[r] = 2.0 * (double)n * (double)n * (double)n / (now_s() - t0) / 1e9;
  }
  qsort(rate, (size_t)reps, sizeof *rate, cmp_double);
  printf("%.2f\n", rate[reps / 2]);
  free(a);
  free(b);
  free(c);
  free(rate);
  return 0;
}
