/* tests/unit/check_k_math.c — conversion kernels (ops/kernels/k_math.c) and the
 * kernel coverage of the operator table.
 *
 * cast_like follows the cast rules of spec/ops.md §2 (truncation and
 * saturation, NaN → 0 for ints and False for bool); reinterpret keeps bits;
 * full_like casts its fill; fixed_point_multiply is checked against an
 * exact rational reference (round half up of x·m·2^shift / 2^31).
 * kernels_cover_every_operator walks ops/op_table.def and fails for any
 * built-in operator without a kernel.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "tests/unit/kr_util.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"

START_TEST(cast_like_rules) {
  Tensor *x = kr_make(DT_F32, 1, (int64_t[]){6}, (double[]){-1.7, 2.9, NAN, 1e10, -1e10, -0.0});
  Tensor *i8 = kr_iota(DT_I8, 0, NULL), *b = kr_iota(DT_BOOL_T, 0, NULL), *u8 = kr_iota(DT_U8, 0, NULL);
  Tensor *ins[2] = {x, i8};
  Tensor *o = kr_run(OP_CAST_LIKE, "", ins, 2);
  ck_assert_msg(o && o->dtype.bits == 8 && o->ndim == 1, "%s", kr_err);
  int64_t want8[] = {-1, 2, 0, 127, -128, 0};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(tensor_get_i64(o, i), want8[i]);
  tensor_release(o);
  ins[1] = u8;
  o = kr_run(OP_CAST_LIKE, "", ins, 2);
  int64_t wantu[] = {0, 2, 0, 255, 0, 0};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(tensor_get_i64(o, i), wantu[i]);
  tensor_release(o);
  ins[1] = b;
  o = kr_run(OP_CAST_LIKE, "", ins, 2);
  int64_t wantb[] = {1, 1, 0, 1, 1, 0};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(tensor_get_i64(o, i), wantb[i]);
  tensor_release(o);
  /* int → int wraps by the source's signedness; → float16 rounds */
  Tensor *s = kr_make(DT_I16, 1, (int64_t[]){2}, (double[]){-1, 300});
  Tensor *h = kr_iota(DT_F16, 0, NULL);
  Tensor *si[2] = {s, u8};
  o = kr_run(OP_CAST_LIKE, "", si, 2);
  ck_assert(tensor_get_i64(o, 0) == 255 && tensor_get_i64(o, 1) == 44);
  tensor_release(o);
  Tensor *f[2] = {x, h};
  o = kr_run(OP_CAST_LIKE, "", f, 2);
  ck_assert(o && dtype_eq(o->dtype, DT_F16));
  ck_assert_double_eq_tol(tensor_get_f64(o, 1), 2.9, 2e-3);
  ck_assert(isinf(tensor_get_f64(o, 3)));
  kr_free(o, x, i8, b);
  kr_free(u8, s, h, NULL);
}
END_TEST

START_TEST(reinterpret_and_full_like) {
  Tensor *x = kr_make(DT_F32, 1, (int64_t[]){2}, (double[]){1, -2});
  Tensor *o = kr_run(OP_REINTERPRET, "dtype=\"int32\"", &x, 1);
  ck_assert_msg(o, "%s", kr_err);
  ck_assert_int_eq(tensor_get_i64(o, 0), 0x3f800000);
  ck_assert_int_eq(tensor_get_i64(o, 1), (int32_t)0xc0000000u);
  Tensor *back = kr_run(OP_REINTERPRET, "dtype=\"float32\"", &o, 1);
  ck_assert(tensor_equal(back, x));
  ck_assert(!kr_run(OP_REINTERPRET, "dtype=\"int64\"", &x, 1));
  kr_free(o, back, NULL, NULL);
  Tensor *v = kr_scalar(DT_F64, -3.75);
  Tensor *ins[2] = {x, v};
  o = kr_run(OP_FULL_LIKE, "", ins, 2);
  ck_assert(o && dtype_eq(o->dtype, DT_F32) && tensor_get_f64(o, 0) == -3.75 && tensor_get_f64(o, 1) == -3.75);
  tensor_release(o);
  Tensor *i = kr_iota(DT_I16, 2, (int64_t[]){2, 2});
  ins[0] = i;
  o = kr_run(OP_FULL_LIKE, "", ins, 2);
  ck_assert(o && o->dtype.bits == 16 && tensor_get_i64(o, 3) == -3);
  tensor_release(o);
  Tensor *vv = kr_iota(DT_F32, 1, (int64_t[]){2});
  ins[1] = vv;
  ck_assert(!kr_run(OP_FULL_LIKE, "", ins, 2));
  kr_free(x, v, i, vv);
}
END_TEST

/* exact: floor((x·m·2^ls / 2^rs + 2^30) / 2^31) with ls/rs from shift */
static int64_t ref_fpm(int64_t x, int64_t m, int64_t shift) {
  long double v = (long double)x * (long double)m * powl(2, (long double)shift) / powl(2, 31);
  return (int64_t)floorl(v + 0.5L);
}

START_TEST(fixed_point_multiply_cases) {
  Tensor *x = kr_make(DT_I32, 1, (int64_t[]){7}, (double[]){100, -100, 3, -3, 1, -1, 2147483647});
  const char *cases[] = {"multiplier=1073741824; shift=0", "multiplier=1073741824; shift=1",
                         "multiplier=1431655765; shift=-2", "multiplier=2147483647; shift=3"};
  int64_t mult[] = {1073741824, 1073741824, 1431655765, 2147483647}, sh[] = {0, 1, -2, 3};
  for (int k = 0; k < 4; k++) {
    Tensor *o = kr_run(OP_FIXED_POINT_MULTIPLY, cases[k], &x, 1);
    ck_assert_msg(o, "%s", kr_err);
    for (int i = 0; i < 7; i++) {
      int64_t want = (int32_t)(uint32_t)ref_fpm(tensor_get_i64(x, i), mult[k], sh[k]);
      ck_assert_msg(tensor_get_i64(o, i) == want, "%s, x=%lld: got %lld want %lld", cases[k],
                    (long long)tensor_get_i64(x, i), (long long)tensor_get_i64(o, i), (long long)want);
    }
    tensor_release(o);
  }
  Tensor *f = kr_make(DT_F32, 1, (int64_t[]){1}, (double[]){1});
  ck_assert(!kr_run(OP_FIXED_POINT_MULTIPLY, "multiplier=1; shift=0", &f, 1));
  kr_free(x, f, NULL, NULL);
}
END_TEST

START_TEST(kernels_cover_every_operator) {
  char missing[2048] = "";
  for (uint32_t id = 0; id < op_builtin_count(); id++) {
    const OpDef *d = op_get((int32_t)id);
    if (d && !d->kernel) {
      strncat(missing, " ", sizeof missing - strlen(missing) - 1);
      strncat(missing, d->name, sizeof missing - strlen(missing) - 1);
    }
  }
  ck_assert_msg(!missing[0], "operators without a kernel:%s", missing);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("k_math");
  TCase *t = tcase_create("core");
  tcase_add_test(t, cast_like_rules);
  tcase_add_test(t, reinterpret_and_full_like);
  tcase_add_test(t, fixed_point_multiply_cases);
  tcase_add_test(t, kernels_cover_every_operator);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  return unit_run(suite());
}
