/* tests/unit/check_winograd.c — Winograd F(4×4, 3×3) (ops/kernels/k_winograd.c) against a
 * plain double-precision convolution loop.
 *
 * Shapes cover odd extents that are not multiples of the 4×4 tile, rows
 * wider than one 16-tile vector block, symmetric and asymmetric padding
 * 0..2, channel counts that are not multiples of 16, batch 2, empty
 * inputs, and every fused epilogue (bias, residual, accumulate, ReLU).
 * The conv2d kernel's dispatch to Winograd and the weight-transform cache
 * (module-constant weights, a reused address with new contents) are
 * checked too.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_winograd.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"

#define F32 DTYPE(DT_FLOAT, 32)

static Module *M;

static void setup(void) { M = module_new(NULL); }
static void teardown(void) {
  module_free(M);
  M = NULL;
  kwino_cache_free();
}

typedef struct Shape {
  int64_t N, C, O, H, W, pt, pl, pb, pr;
} Shape;

static Tensor *rnd(int32_t nd, const int64_t *shape, uint32_t seed) {
  Tensor *t = kt_new(F32, nd, shape);
  kt_fill(t, seed, -1, 1);
  return t;
}

/* Reference: y = conv(x, w) (+ bias) (+ res) (+ y0 when acc), then ReLU, in double. */
static void ref(const Shape *s, const float *x, const float *w, const float *bias,
                const float *res, const float *y0, bool relu, float *y) {
  int64_t OH = s->H + s->pt + s->pb - 2, OW = s->W + s->pl + s->pr - 2;
  for (int64_t n = 0; n < s->N; n++)
    for (int64_t o = 0; o < s->O; o++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          double acc = 0;
          for (int64_t c = 0; c < s->C; c++)
            for (int r = 0; r < 3; r++)
              for (int q = 0; q < 3; q++) {
                int64_t ih = oh - s->pt + r, iw = ow - s->pl + q;
                if (ih < 0 || ih >= s->H || iw < 0 || iw >= s->W) continue;
                acc += (double)x[((n * s->C + c) * s->H + ih) * s->W + iw] *
                       w[((o * s->C + c) * 3 + r) * 3 + q];
              }
          int64_t i = ((n * s->O + o) * OH + oh) * OW + ow;
          if (bias) acc += bias[o];
          if (res) acc += res[i];
          if (y0) acc += y0[i];
          y[i] = (float)(relu && !(acc > 0) ? 0 : acc);
        }
}

static double rel_err(const float *got, const float *want, int64_t n) {
  double mx = 1e-30, err = 0;
  for (int64_t i = 0; i < n; i++)
    if (fabs(want[i]) > mx) mx = fabs(want[i]);
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - want[i]);
    if (!(d <= err)) err = d; /* NaN propagates */
  }
  return err / mx;
}

/* Runs kwino_conv2d on s with the epilogue `flags` ('b' bias, 'a' residual,
 * 'c' accumulate into the prefilled output, 'r' ReLU) and checks it. */
static void check_shape(const Shape *s, const char *flags, uint32_t seed) {
  int64_t OH = s->H + s->pt + s->pb - 2, OW = s->W + s->pl + s->pr - 2;
  int64_t xs[4] = {s->N, s->C, s->H, s->W}, ws[4] = {s->O, s->C, 3, 3}, bs[1] = {s->O};
  int64_t ys[4] = {s->N, s->O, OH, OW};
  Tensor *x = rnd(4, xs, seed), *w = rnd(4, ws, seed + 1), *b = rnd(1, bs, seed + 2);
  Tensor *r = rnd(4, ys, seed + 3), *y = rnd(4, ys, seed + 4), *want = kt_new(F32, 4, ys);
  Tensor *y0 = tensor_copy(y);
  bool hb = strchr(flags, 'b'), ha = strchr(flags, 'a'), hc = strchr(flags, 'c'),
       hr = strchr(flags, 'r');
  ref(s, x->data, w->data, hb ? b->data : NULL, ha ? r->data : NULL, hc ? y0->data : NULL, hr,
      want->data);
  KWinoArgs a = {.N = s->N, .C = s->C, .O = s->O, .H = s->H, .W = s->W, .pt = s->pt,
                 .pl = s->pl, .OH = OH, .OW = OW, .x = x->data, .w = w->data, .y = y->data,
                 .bias = hb ? b->data : NULL, .res = ha ? r->data : NULL, .relu = hr,
                 .accumulate = hc};
  ck_assert(kwino_conv2d(&a));
  double e = rel_err(y->data, want->data, want->numel);
  if (!(e <= 1e-5))
    ck_abort_msg("N%lld C%lld O%lld %lldx%lld pad %lld,%lld,%lld,%lld '%s': rel err %g",
                 (long long)s->N, (long long)s->C, (long long)s->O, (long long)s->H,
                 (long long)s->W, (long long)s->pt, (long long)s->pl, (long long)s->pb,
                 (long long)s->pr, flags, e);
  Tensor *all[] = {x, w, b, r, y, y0, want};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tensor_release(all[i]);
}

static const Shape SHAPES[] = {
    {1, 3, 5, 7, 9, 1, 1, 1, 1},     {2, 17, 20, 13, 5, 1, 1, 1, 1},
    {1, 33, 35, 11, 11, 0, 0, 0, 0}, {2, 16, 16, 9, 70, 1, 1, 1, 1},
    {1, 5, 3, 6, 10, 2, 2, 2, 2},    {1, 19, 21, 14, 15, 0, 1, 2, 0},
    {1, 4, 4, 3, 3, 0, 0, 0, 0},     {1, 2, 3, 1, 1, 1, 1, 1, 1},
    {2, 1, 1, 4, 67, 2, 0, 0, 2},    {1, 40, 48, 8, 8, 1, 1, 1, 1},
};

START_TEST(winograd_shapes) {
  uint32_t seed = 10;
  for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++, seed += 10)
    check_shape(&SHAPES[i], "", seed);
}
END_TEST

START_TEST(winograd_epilogues) {
  static const char *const flags[] = {"b", "br", "a", "ar", "bar", "c", "bcr", "r"};
  uint32_t seed = 500;
  for (size_t f = 0; f < sizeof flags / sizeof *flags; f++)
    for (size_t i = 0; i < 4; i++, seed += 10) check_shape(&SHAPES[i * 2 + f % 2], flags[f], seed);
}
END_TEST

/* No input channels: the result is the epilogue of zero. Empty output: nothing. */
START_TEST(winograd_empty) {
  Shape s = {2, 0, 5, 6, 7, 1, 1, 1, 1};
  check_shape(&s, "bar", 900);
  check_shape(&s, "c", 910);
  float y = 7;
  KWinoArgs a = {.N = 1, .C = 2, .O = 2, .H = 1, .W = 1, .OH = 0, .OW = 0, .y = &y};
  ck_assert(kwino_conv2d(&a));
  ck_assert_float_eq(y, 7);
}
END_TEST

/* Module-constant weights: the first call only records the weight (false, y
 * untouched), the second transforms and caches it, later ones reuse it; a
 * reused address with new contents, or kwino_cache_free, starts over. */
START_TEST(winograd_weight_cache) {
  Shape s = {1, 20, 24, 10, 11, 1, 1, 1, 1};
  int64_t xs[4] = {1, 20, 10, 11}, ws[4] = {24, 20, 3, 3}, ys[4] = {1, 24, 10, 11};
  Tensor *x = rnd(4, xs, 1), *w = rnd(4, ws, 2), *y = kt_new(F32, 4, ys), *want = kt_new(F32, 4, ys);
  KWinoArgs a = {.N = 1, .C = 20, .O = 24, .H = 10, .W = 11, .pt = 1, .pl = 1, .OH = 10,
                 .OW = 11, .x = x->data, .w = w->data, .y = y->data, .w_const = true};
  static const bool done[8] = {false, true, true, false, true, true, false, true};
  for (int call = 0; call < 8; call++) {
    if (call == 3) kt_fill(w, 3, -1, 1); /* same pointer, other contents */
    if (call == 6) kwino_cache_free();
    ref(&s, x->data, w->data, NULL, NULL, NULL, false, want->data);
    memset(y->data, 0x7f, y->nbytes);
    ck_assert_int_eq(kwino_conv2d(&a), done[call]);
    if (done[call]) {
      ck_assert_double_le(rel_err(y->data, want->data, want->numel), 1e-5);
    } else {
      ck_assert_int_eq(((uint8_t *)y->data)[0], 0x7f); /* untouched */
      ck_assert_int_eq(((uint8_t *)y->data)[y->nbytes - 1], 0x7f);
    }
  }
  Tensor *all[] = {x, w, y, want};
  for (size_t i = 0; i < 4; i++) tensor_release(all[i]);
}
END_TEST

/* relayc.conv2d_bias_add (relu=True) through the kernel (dispatched to
 * Winograd for this shape): a fused bias + residual + ReLU, batch 2 and
 * asymmetric padding. */
START_TEST(winograd_conv2d_kernel) {
  Shape s = {2, 32, 40, 13, 17, 1, 2, 0, 1};
  int64_t OH = 12, OW = 18;
  int64_t xs[4] = {2, 32, 13, 17}, ws[4] = {40, 32, 3, 3}, bs[1] = {40}, ys[4] = {2, 40, OH, OW};
  Tensor *x = rnd(4, xs, 71), *w = rnd(4, ws, 72), *b = rnd(1, bs, 73), *r = rnd(4, ys, 74);
  Tensor *want = kt_new(F32, 4, ys);
  w->flags |= TENSOR_READONLY; /* as a module constant: cached */
  ref(&s, x->data, w->data, b->data, r->data, NULL, true, want->data);
  Tensor *ins[4] = {x, w, b, r};
  char err[KERNEL_ERR_SIZE];
  const char *attrs = "padding=[1, 2, 0, 1]; relu=True";
  for (int k = 0; k < 3; k++) { /* GEMM path first, then Winograd (cached weight) */
    Tensor *got = kt_call(OP_RELAYC_CONV2D_BIAS_ADD, kt_attrs(M, attrs), ins, 4, err);
    ck_assert_ptr_nonnull(got);
    ck_assert_double_le(rel_err(got->data, want->data, want->numel), 1e-5);
    tensor_release(got);
  }
  /* the dying residual becomes the output (accumulate) */
  KernelCtx c;
  Tensor **in = mem_calloc(4, sizeof *in);
  for (uint32_t i = 0; i < 4; i++) in[i] = tensor_retain(ins[i]);
  tensor_release(r);
  kernel_ctx_init(&c, OP_RELAYC_CONV2D_BIAS_ADD, in, 4, kt_attrs(M, attrs), NULL);
  ck_assert_int_eq(op_get(OP_RELAYC_CONV2D_BIAS_ADD)->kernel(&c), KERNEL_OK);
  ck_assert_ptr_null(c.inputs[3]);
  ck_assert_double_le(rel_err(c.out->data, want->data, want->numel), 1e-5);
  kernel_ctx_clear(&c);
  mem_free(in);
  w->flags &= ~(uint32_t)TENSOR_READONLY;
  Tensor *all[] = {x, w, b, want};
  for (size_t i = 0; i < 4; i++) tensor_release(all[i]);
}
END_TEST

/* A ResNet-like layer at larger magnitude: the relative error stays small. */
START_TEST(winograd_accuracy) {
  Shape s = {1, 64, 64, 28, 28, 1, 1, 1, 1};
  check_shape(&s, "br", 1234);
}
END_TEST

START_TEST(winograd_policy) {
  ck_assert(kwino_wanted(64, 64, 56, 56));
  ck_assert(!kwino_wanted(3, 64, 224, 224));
  ck_assert(!kwino_wanted(64, 64, 2, 2));
}
END_TEST

static Suite *wino_suite(void) {
  Suite *s = suite_create("winograd");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, winograd_shapes);
  tcase_add_test(tc, winograd_epilogues);
  tcase_add_test(tc, winograd_empty);
  tcase_add_test(tc, winograd_weight_cache);
  tcase_add_test(tc, winograd_conv2d_kernel);
  tcase_add_test(tc, winograd_accuracy);
  tcase_add_test(tc, winograd_policy);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  unsetenv("RELAYC_NO_WINOGRAD");
  int status = unit_run(wino_suite());
  kwino_cache_free();
  return status;
}
