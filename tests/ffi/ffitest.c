/* tests/ffi/ffitest.c — the shared library the foreign-operator tests call.
 *
 * Built by the test suite (tests/ffi/build.sh, the Makefile, check_ffi) as
 * libffitest.so. Scalar functions for the elementwise mapping and
 * pointer-and-count functions for the buffer mapping, in float32, float64,
 * int32 (and int64); each computes something easy to check by hand. Plain C,
 * no relayc headers.
 */
#include <stddef.h>
#include <stdint.h>

/* ---- elementwise, unary ---------------------------------------------------- */
float sq_f32(float x) { return x * x; }
double sq_f64(double x) { return x * x; }
int32_t neg_i32(int32_t x) { return -x; }
int64_t twice_i64(int64_t x) { return 2 * x; }
int32_t sign_f32(float x) { return (x > 0) - (x < 0); } /* float32 in, int32 out */

/* ---- elementwise, binary (broadcast) ------------------------------------- */
float axpb_f32(float a, float b) { return 2 * a + b; }
double axpb_f64(double a, double b) { return 2 * a + b; }
int32_t sub_i32(int32_t a, int32_t b) { return a - b; }

/* ---- elementwise, ternary ------------------------------------------------ */
float fma3_f32(float a, float b, float c) { return a * b + c; }

/* ---- buffer: one input, output shaped like it -------------------------- */
void cumsum_f32(const float *in, float *out, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < n; i++) out[i] = s += in[i];
}
void cumsum_f64(const double *in, double *out, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) out[i] = s += in[i];
}
void cumsum_i32(const int32_t *in, int32_t *out, int64_t n) {
  int32_t s = 0;
  for (int64_t i = 0; i < n; i++) out[i] = s += in[i];
}
/* count first, size_t */
void scale3_f32(size_t n, const float *in, float *out) {
  for (size_t i = 0; i < n; i++) out[i] = 3 * in[i];
}

/* ---- buffer: two inputs ---------------------------------------------------- */
void add_f32(const float *a, const float *b, float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}
/* every element of `a` plus the sum of `b` (b has its own count); shaped like a */
void plus_sum_f32(const float *a, int64_t na, const float *b, int64_t nb, float *out, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < nb; i++) s += b[i];
  for (int64_t i = 0; i < n && i < na; i++) out[i] = a[i] + s;
}
/* the output takes the shape of input 1: out[i] = b[i] * a[0] */
void scale_by_first_f64(const double *a, int64_t na, const double *b, double *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = na > 0 ? b[i] * a[0] : 0;
}

/* ---- buffer with a status: fails (returns 7) on a negative element ---- */
int checked_sqrt_i32(const int32_t *in, int32_t *out, int n) {
  for (int i = 0; i < n; i++) {
    if (in[i] < 0) return 7;
    int32_t r = 0;
    while ((r + 1) * (r + 1) <= in[i]) r++;
    out[i] = r;
  }
  return 0;
}

/* ---- for the speed benchmark ------------------------------------------- */
void neg_buf_f32(const float *in, float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = -in[i];
}
float neg_f32(float x) { return -x; }
