/* tests/unit/check_tensor.c — runtime/tensor.c and runtime/format.c:
 * lifecycle and refcounts, checked sizes, borrowed constants, element
 * conversions, literal printing (every form, nesting, elision; cross-checked
 * against numpy's array2string when /usr/bin/python3 has numpy) and JSON. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/diag.h"
#include "ir/mem.h"
#include "runtime/format.h"
#include "runtime/tensor.h"
#include "tests/unit/unit_run.h"

/* ------------------------------------------------------------- helpers */

static char *fmt_opts(const Tensor *t, const FormatOptions *o) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  format_tensor_opts(f, t, o);
  fclose(f);
  return buf;
}

static void assert_formats(const Tensor *t, const char *want) {
  FormatOptions o = FORMAT_DEFAULTS;
  char *got = fmt_opts(t, &o);
  ck_assert_str_eq(got, want);
  free(got);
}

static void assert_json(const Tensor *t, const char *want) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  format_tensor_json(f, t);
  fclose(f);
  ck_assert_str_eq(buf, want);
  free(buf);
}

/* A tensor holding 0, 1, 2, ... (converted to its dtype). */
static Tensor *arange(DType dt, int32_t ndim, const int64_t *shape) {
  Tensor *t = tensor_new(dt, ndim, shape);
  ck_assert_ptr_nonnull(t);
  for (int64_t i = 0; i < t->numel * t->dtype.lanes; i++) tensor_set_f64(t, i, (double)i);
  return t;
}

static void assert_scalar_f(DType dt, double v, const char *want) {
  Tensor *t = tensor_new_scalar_float(dt, v);
  assert_formats(t, want);
  tensor_release(t);
}

static void assert_scalar_i(DType dt, int64_t v, const char *want) {
  Tensor *t = tensor_new_scalar_int(dt, v);
  assert_formats(t, want);
  tensor_release(t);
}

/* ------------------------------------------------------- lifecycle */

START_TEST(test_new_release) {
  int64_t shape[2] = {2, 3};
  Tensor *t = tensor_new(DT_F32, 2, shape);
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(t->ndim, 2);
  ck_assert_int_eq(t->shape[0], 2);
  ck_assert_int_eq(t->shape[1], 3);
  ck_assert_ptr_null(t->strides);
  ck_assert_int_eq(tensor_numel(t), 6);
  ck_assert_uint_eq(tensor_nbytes(t), 24);
  ck_assert_uint_eq((uintptr_t)t->data % TENSOR_ALIGN, 0);
  ck_assert_uint_eq(t->refcount, 1);
  ck_assert(tensor_is_unique(t));
  shape[0] = 99; /* the shape was copied */
  ck_assert_int_eq(t->shape[0], 2);
  Tensor *u = tensor_retain(t);
  ck_assert_ptr_eq(u, t);
  ck_assert_uint_eq(t->refcount, 2);
  ck_assert(!tensor_is_unique(t));
  tensor_release(u);
  ck_assert(tensor_is_unique(t));
  tensor_release(t);
  tensor_release(NULL);
  ck_assert_ptr_null(tensor_retain(NULL));
}
END_TEST

START_TEST(test_scalar_and_empty) {
  Tensor *s = tensor_new(DT_I64, 0, NULL);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tensor_numel(s), 1);
  ck_assert_uint_eq(tensor_nbytes(s), 8);
  tensor_release(s);
  int64_t shape[3] = {4, 0, 5};
  Tensor *e = tensor_new(DT_F32, 3, shape);
  ck_assert_ptr_nonnull(e);
  ck_assert_ptr_nonnull(e->data);
  ck_assert_int_eq(tensor_numel(e), 0);
  ck_assert_uint_eq(tensor_nbytes(e), 0);
  tensor_release(e);
  /* a zero extent makes an otherwise overflowing shape empty */
  int64_t big0[3] = {INT64_MAX, 0, INT64_MAX};
  e = tensor_new(DT_F32, 3, big0);
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(tensor_numel(e), 0);
  tensor_release(e);
}
END_TEST

START_TEST(test_zeros_like_copy_equal) {
  int64_t shape[2] = {3, 5};
  Tensor *z = tensor_new_zeros(DT_F64, 2, shape);
  for (int64_t i = 0; i < 15; i++) ck_assert(tensor_get_f64(z, i) == 0.0);
  Tensor *a = arange(DT_F64, 2, shape);
  Tensor *c = tensor_copy(a);
  ck_assert_ptr_ne(c->data, a->data);
  ck_assert(tensor_equal(a, c));
  ck_assert(!tensor_equal(a, z));
  ck_assert(tensor_same_type(a, z));
  Tensor *l = tensor_new_like(a);
  ck_assert(tensor_same_type(l, a));
  int64_t other[2] = {5, 3};
  Tensor *o = tensor_new(DT_F64, 2, other);
  ck_assert(!tensor_same_type(o, a));
  Tensor *i = tensor_new(DT_I64, 2, shape);
  ck_assert(!tensor_same_type(i, a));
  tensor_release(z);
  tensor_release(a);
  tensor_release(c);
  tensor_release(l);
  tensor_release(o);
  tensor_release(i);
}
END_TEST

/* tensor_new_zero: +0s from the shared read-only mapping, never written in place */
START_TEST(test_shared_zero) {
  int64_t shape[2] = {300, 1000}; /* 1.2 MB: no memory, no memset */
  Tensor *z = tensor_new_zero(DT_F32, 2, shape);
  ck_assert_ptr_nonnull(z);
  ck_assert(tensor_is_zero(z));
  ck_assert(!tensor_is_writable(z) && !tensor_is_unique(z));
  for (int64_t i = 0; i < z->numel; i += 997) ck_assert(tensor_get_f64(z, i) == 0.0 && !signbit(tensor_get_f64(z, i)));
  Tensor *z2 = tensor_new_zero(DT_I64, 2, shape); /* another window of the same mapping */
  ck_assert(tensor_is_zero(z2) && tensor_get_i64(z2, z2->numel - 1) == 0);
  int64_t flat[1] = {300000};
  Tensor *v = tensor_reshape(tensor_retain(z), 1, flat); /* a view stays zero and read-only */
  ck_assert(tensor_is_zero(v) && !tensor_is_writable(v));
  Tensor *w = tensor_make_writable(tensor_retain(z)); /* a writable copy is an ordinary tensor */
  ck_assert(tensor_is_writable(w) && !tensor_is_zero(w) && w->data != z->data);
  ck_assert(tensor_get_f64(w, 12345) == 0.0);
  Tensor *plain = tensor_new_zeros(DT_F32, 2, shape); /* writable zeros carry no flag */
  ck_assert(!tensor_is_zero(plain) && tensor_is_unique(plain));
  tensor_release(plain);
  ck_assert_ptr_null(tensor_new_zero(DT_F32, 2, (int64_t[]){-1, 2}));
  tensor_release(w);
  tensor_release(v);
  tensor_release(z2);
  tensor_release(z);
}
END_TEST

START_TEST(test_make_writable) {
  int64_t shape[1] = {4};
  Tensor *t = arange(DT_I32, 1, shape);
  void *data = t->data;
  /* unique: the same tensor comes back */
  t = tensor_make_writable(t);
  ck_assert_ptr_eq(t->data, data);
  /* shared: a copy comes back and the other reference survives */
  Tensor *keep = tensor_retain(t);
  Tensor *w = tensor_make_writable(t);
  ck_assert_ptr_ne(w, keep);
  ck_assert_uint_eq(keep->refcount, 1);
  ck_assert(tensor_is_unique(w));
  ck_assert(tensor_equal(w, keep));
  tensor_set_i64(w, 0, 42);
  ck_assert_int_eq(tensor_get_i64(keep, 0), 0);
  tensor_release(w);
  tensor_release(keep);
}
END_TEST

/* ------------------------------------------------------------ sizes */

static void assert_rejected(DType dt, int32_t ndim, const int64_t *shape, TensorError want) {
  TensorError e = TENSOR_OK;
  Tensor *t = tensor_new_checked(dt, ndim, shape, &e);
  ck_assert_ptr_null(t);
  ck_assert_int_eq(e, want);
  ck_assert_ptr_null(tensor_new(dt, ndim, shape));
  ck_assert_str_ne(tensor_error_message(e), "no error");
}

START_TEST(test_size_overflow) {
  int64_t a[2] = {INT64_MAX, 2};
  assert_rejected(DT_F32, 2, a, TENSOR_ETOOBIG);
  int64_t b[2] = {(int64_t)1 << 40, (int64_t)1 << 20}; /* 2^60 elements */
  assert_rejected(DT_F32, 2, b, TENSOR_ETOOBIG);
  int64_t c[1] = {((int64_t)1 << 62)}; /* element count fits, bytes overflow */
  assert_rejected(DT_F64, 1, c, TENSOR_ETOOBIG);
  int64_t d[1] = {(int64_t)(TENSOR_MAX_BYTES / 4) + 1}; /* just over the cap */
  assert_rejected(DT_F32, 1, d, TENSOR_ETOOBIG);
  int64_t e[4] = {1 << 20, 1 << 20, 1 << 20, 1 << 20};
  assert_rejected(DT_I8, 4, e, TENSOR_ETOOBIG);
  int64_t neg[2] = {3, -1};
  assert_rejected(DT_F32, 2, neg, TENSOR_EBADSHAPE);
  int64_t many[TENSOR_MAX_NDIM + 1];
  for (int i = 0; i <= TENSOR_MAX_NDIM; i++) many[i] = 1;
  assert_rejected(DT_F32, TENSOR_MAX_NDIM + 1, many, TENSOR_EBADSHAPE);
  assert_rejected(DT_F32, -1, many, TENSOR_EBADSHAPE);
  assert_rejected((DType){DT_FLOAT, 0, 1}, 1, many, TENSOR_EBADDTYPE);
  assert_rejected((DType){DT_FLOAT, 32, 0}, 1, many, TENSOR_EBADDTYPE);
  Tensor *t = tensor_new(DT_F32, TENSOR_MAX_NDIM, many); /* the limit itself is fine */
  ck_assert_ptr_nonnull(t);
  tensor_release(t);
  int64_t n;
  ck_assert(!tensor_shape_numel(2, a, &n));
  ck_assert(tensor_shape_numel(2, (int64_t[]){6, 7}, &n));
  ck_assert_int_eq(n, 42);
}
END_TEST

START_TEST(test_alloc_failure) {
  int64_t shape[1] = {100};
  for (long k = 0; k < 2; k++) {
    mem_fail_after(k);
    TensorError e = TENSOR_OK;
    Tensor *t = tensor_new_checked(DT_F32, 1, shape, &e);
    mem_fail_after(-1);
    ck_assert_ptr_null(t);
    ck_assert_int_eq(e, TENSOR_ENOMEM);
  }
  mem_fail_after(0);
  ck_assert_ptr_null(tensor_new_scalar_f32(1.0f));
  mem_fail_after(-1);
  Tensor *t = tensor_new(DT_F32, 1, shape);
  mem_fail_after(0);
  ck_assert_ptr_null(tensor_copy(t));
  Tensor *keep = tensor_retain(t);
  ck_assert_ptr_null(tensor_make_writable(t)); /* t's reference is consumed */
  mem_fail_after(-1);
  ck_assert_uint_eq(keep->refcount, 1);
  tensor_release(keep);
}
END_TEST

/* ---------------------------------------------------------- constants */

START_TEST(test_from_const) {
  int64_t shape[2] = {2, 2};
  float *data = aligned_alloc(64, 64);
  float vals[4] = {1, 2, 3, 4};
  memcpy(data, vals, sizeof vals);
  ConstTensor c = {DT_F32, 2, shape, data, 16, -1};
  Tensor *t = tensor_from_const(&c);
  ck_assert_ptr_nonnull(t);
  ck_assert_ptr_eq(t->data, data); /* no copy */
  ck_assert(!tensor_is_writable(t));
  ck_assert(!tensor_is_unique(t)); /* read-only: never reused in place */
  ck_assert(tensor_get_f64(t, 3) == 4.0);
  Tensor *w = tensor_make_writable(tensor_retain(t));
  ck_assert_ptr_ne(w->data, data);
  ck_assert(tensor_is_unique(w));
  ck_assert(tensor_equal(w, t));
  tensor_release(w);
  tensor_release(t); /* must not free the borrowed data */
  ck_assert(data[0] == 1.0f);
  /* a constant whose byte count disagrees with its shape is refused */
  ConstTensor bad = {DT_F32, 2, shape, data, 12, -1};
  ck_assert_ptr_null(tensor_from_const(&bad));
  /* a scalar constant */
  ConstTensor s = {DT_I64, 0, NULL, data, 8, 0};
  t = tensor_from_const(&s);
  ck_assert_int_eq(t->ndim, 0);
  ck_assert_int_eq(tensor_numel(t), 1);
  tensor_release(t);
  free(data);
}
END_TEST

/* -------------------------------------------------------- conversions */

START_TEST(test_element_conversions) {
  int64_t shape[1] = {4};
  Tensor *t = tensor_new_zeros(DT_I8, 1, shape);
  tensor_set_i64(t, 0, 300); /* wraps like a C cast */
  tensor_set_i64(t, 1, -128);
  tensor_set_f64(t, 2, -3.9);
  ck_assert_int_eq(tensor_get_i64(t, 0), 44);
  ck_assert_int_eq(tensor_get_i64(t, 1), -128);
  ck_assert_int_eq(tensor_get_i64(t, 2), -3);
  tensor_release(t);

  t = tensor_new_zeros(DT_U8, 1, shape);
  tensor_set_i64(t, 0, -1);
  ck_assert_int_eq(tensor_get_i64(t, 0), 255);
  ck_assert(tensor_get_f64(t, 0) == 255.0);
  tensor_release(t);

  t = tensor_new_zeros(DTYPE(DT_UINT, 64), 1, shape);
  tensor_set_i64(t, 0, -1);
  ck_assert(tensor_get_f64(t, 0) == 18446744073709551615.0);
  tensor_release(t);

  t = tensor_new_zeros(DT_BOOL_T, 1, shape);
  tensor_set_i64(t, 0, 7);
  tensor_set_f64(t, 1, 0.5);
  ck_assert_int_eq(((uint8_t *)t->data)[0], 1);
  ck_assert_int_eq(((uint8_t *)t->data)[1], 1);
  ck_assert_int_eq(tensor_get_i64(t, 2), 0);
  tensor_release(t);

  t = tensor_new_zeros(DT_F16, 1, shape);
  tensor_set_f64(t, 0, 1.5);
  tensor_set_f64(t, 1, 65504.0);
  tensor_set_f64(t, 2, 1e6); /* overflows to inf */
  tensor_set_f64(t, 3, 0.1);
  ck_assert(tensor_get_f64(t, 0) == 1.5);
  ck_assert(tensor_get_f64(t, 1) == 65504.0);
  ck_assert(isinf(tensor_get_f64(t, 2)));
  ck_assert(tensor_get_f64(t, 3) == 0.0999755859375);
  ck_assert_int_eq(((uint16_t *)t->data)[0], 0x3e00);
  tensor_release(t);

  t = tensor_new_zeros(DTYPE(DT_BFLOAT, 16), 1, shape);
  tensor_set_f64(t, 0, 1.0);
  tensor_set_f64(t, 1, 3.140625);
  ck_assert_int_eq(((uint16_t *)t->data)[0], 0x3f80);
  ck_assert(tensor_get_f64(t, 1) == 3.140625);
  tensor_release(t);

  t = tensor_new_zeros(DTYPE(DT_E4M3, 8), 1, shape);
  tensor_set_f64(t, 0, 448.0);
  tensor_set_f64(t, 1, -0.5);
  tensor_set_f64(t, 2, 1000.0);
  tensor_set_f64(t, 3, 0.0);
  ck_assert_int_eq(((uint8_t *)t->data)[0], 0x7e);
  ck_assert(tensor_get_f64(t, 1) == -0.5);
  ck_assert(isnan(tensor_get_f64(t, 2)));
  ck_assert_int_eq(((uint8_t *)t->data)[3], 0x00);
  tensor_release(t);

  t = tensor_new_zeros(DTYPE(DT_E5M2, 8), 1, shape);
  tensor_set_f64(t, 0, 57344.0);
  tensor_set_f64(t, 1, 1e9);
  tensor_set_f64(t, 2, -0.25);
  ck_assert(tensor_get_f64(t, 0) == 57344.0);
  ck_assert(isinf(tensor_get_f64(t, 1)));
  ck_assert(tensor_get_f64(t, 2) == -0.25);
  tensor_release(t);

  t = tensor_new_zeros(DT_F32, 1, shape);
  tensor_set_f64(t, 0, NAN);
  ck_assert_int_eq(tensor_get_i64(t, 0), 0); /* defined, not UB */
  tensor_set_f64(t, 1, 1e30);
  ck_assert_int_eq(tensor_get_i64(t, 1), INT64_MAX);
  tensor_release(t);
}
END_TEST

START_TEST(test_scalar_constructors) {
  Tensor *t = tensor_new_scalar_i32(-5);
  ck_assert(dtype_eq(t->dtype, DT_I32));
  ck_assert_int_eq(tensor_get_i64(t, 0), -5);
  tensor_release(t);
  t = tensor_new_scalar_i64(INT64_MIN);
  ck_assert_int_eq(tensor_get_i64(t, 0), INT64_MIN);
  tensor_release(t);
  t = tensor_new_scalar_f32(0.1f);
  ck_assert(tensor_get_f64(t, 0) == (double)0.1f);
  tensor_release(t);
  t = tensor_new_scalar_f64(0.1);
  ck_assert(tensor_get_f64(t, 0) == 0.1);
  tensor_release(t);
  t = tensor_new_scalar_bool(true);
  ck_assert(dtype_is_bool(t->dtype));
  ck_assert_int_eq(tensor_get_i64(t, 0), 1);
  tensor_release(t);
  t = tensor_new_scalar_int(DT_F16, 3);
  ck_assert(tensor_get_f64(t, 0) == 3.0);
  tensor_release(t);
  t = tensor_new_scalar_float(DT_I16, -2.7);
  ck_assert_int_eq(tensor_get_i64(t, 0), -2);
  tensor_release(t);
}
END_TEST

/* --------------------------------------------------------- printing */

START_TEST(test_format_ints_bools) {
  assert_scalar_i(DT_I32, 42, "42");
  assert_scalar_i(DT_I32, -7, "-7");
  assert_scalar_i(DT_I64, 42, "42i64");
  assert_scalar_i(DT_I64, INT64_MIN, "-9223372036854775808i64");
  assert_scalar_i(DT_I16, 300, "300i16");
  assert_scalar_i(DT_I8, 7, "7i8");
  assert_scalar_i(DT_I8, -7, "-7i8");
  assert_scalar_i(DT_U8, 7, "7u8");
  assert_scalar_i(DT_U8, 255, "255u8");
  assert_scalar_i(DTYPE(DT_UINT, 16), 7, "7u16");
  assert_scalar_i(DTYPE(DT_UINT, 32), 4294967295LL, "4294967295u32");
  assert_scalar_i(DTYPE(DT_UINT, 64), -1, "18446744073709551615u64");
  assert_scalar_i(DT_BOOL_T, 1, "True");
  assert_scalar_i(DT_BOOL_T, 0, "False");
}
END_TEST

START_TEST(test_format_floats) {
  assert_scalar_f(DT_F32, 1.5, "1.5f");
  assert_scalar_f(DT_F32, 2.0, "2f");
  assert_scalar_f(DT_F32, 0.1, "0.1f");
  assert_scalar_f(DT_F32, 1e-5, "1e-05f");
  assert_scalar_f(DT_F32, 1e10, "1e+10f");
  assert_scalar_f(DT_F32, 3.14159265358979, "3.1415927f");
  assert_scalar_f(DT_F32, 16777216.0, "16777216f");
  assert_scalar_f(DT_F32, 1000.0, "1000f");
  assert_scalar_f(DT_F32, 123456789.0, "123456792f");
  assert_scalar_f(DT_F32, 1e9, "1e+09f");
  assert_scalar_f(DT_F32, 0.0001, "0.0001f");
  assert_scalar_f(DT_F32, 0.5, "0.5f");
  assert_scalar_f(DT_F32, -0.0, "-0f");
  assert_scalar_f(DT_F32, 3.4028234663852886e38, "3.4028235e+38f");
  assert_scalar_f(DT_F32, 1.401298464324817e-45, "1e-45f");
  assert_scalar_f(DT_F32, INFINITY, "inff");
  assert_scalar_f(DT_F32, -INFINITY, "-inff");
  assert_scalar_f(DT_F32, NAN, "nanf");
  assert_scalar_f(DT_F32, -NAN, "nanf");
  assert_scalar_f(DT_F64, 1.5, "1.5f64");
  assert_scalar_f(DT_F64, 0.1, "0.1f64");
  assert_scalar_f(DT_F64, 0.1 + 0.2, "0.30000000000000004f64");
  assert_scalar_f(DT_F64, 1e300, "1e+300f64");
  assert_scalar_f(DT_F64, 1e16, "10000000000000000f64");
  assert_scalar_f(DT_F64, 1e17, "1e+17f64");
  assert_scalar_f(DT_F64, INFINITY, "inff64");
  assert_scalar_f(DT_F64, -INFINITY, "-inff64");
  assert_scalar_f(DT_F64, NAN, "nanf64");
  assert_scalar_f(DT_F16, 1.5, "1.5f16");
  assert_scalar_f(DT_F16, 0.1, "0.1f16");
  assert_scalar_f(DT_F16, 65504, "65504f16");
  assert_scalar_f(DT_F16, 1.0 / 3.0, "0.3333f16");
  assert_scalar_f(DT_F16, 5.960464477539063e-08, "6e-08f16");
  assert_scalar_f(DT_F16, INFINITY, "inff16");
  assert_scalar_f(DT_F16, NAN, "nanf16");
  assert_scalar_f(DTYPE(DT_BFLOAT, 16), 1.5, "1.5bf16");
  assert_scalar_f(DTYPE(DT_E4M3, 8), 0.5, "0.5f8e4m3");
  assert_scalar_f(DTYPE(DT_E5M2, 8), -2, "-2f8e5m2");
}
END_TEST

/* Every float32 bit pattern in a sample reads back from its printed text. */
START_TEST(test_format_shortest_round_trips) {
  char buf[FORMAT_ELEM_SIZE];
  uint32_t x = 12345;
  for (int i = 0; i < 200000; i++) {
    x = x * 1664525u + 1013904223u;
    float f;
    memcpy(&f, &x, 4);
    if (isnan(f) || isinf(f)) continue;
    format_shortest(DT_F32, f, buf);
    ck_assert_msg(strtof(buf, NULL) == f, "%s", buf);
    ck_assert_int_le(strlen(buf), 15);
  }
  for (uint32_t h = 0; h < 0x7c00; h++) { /* every finite positive half */
    format_shortest(DT_F16, half_to_float((uint16_t)h), buf);
    ck_assert_msg(float_to_half(strtof(buf, NULL)) == h, "%s", buf);
  }
}
END_TEST

START_TEST(test_format_nested) {
  int64_t s1[1] = {3};
  Tensor *t = arange(DT_F32, 1, s1);
  assert_formats(t, "[0f, 1f, 2f]");
  tensor_release(t);

  int64_t s1b[1] = {1};
  t = arange(DT_I64, 1, s1b);
  assert_formats(t, "[0i64]");
  tensor_release(t);

  int64_t s2[2] = {2, 2};
  t = arange(DT_F32, 2, s2);
  tensor_set_f64(t, 0, 1.5);
  assert_formats(t, "[[1.5f, 1f],\n [2f, 3f]]");
  FormatOptions one = FORMAT_DEFAULTS;
  one.one_line = true;
  char *s = fmt_opts(t, &one);
  ck_assert_str_eq(s, "[[1.5f, 1f], [2f, 3f]]");
  free(s);
  FormatOptions ind = FORMAT_DEFAULTS;
  ind.indent = 4;
  s = fmt_opts(t, &ind);
  ck_assert_str_eq(s, "[[1.5f, 1f],\n     [2f, 3f]]");
  free(s);
  tensor_release(t);

  int64_t s3[3] = {2, 2, 3};
  t = arange(DT_I32, 3, s3);
  assert_formats(t, "[[[0, 1, 2],\n  [3, 4, 5]],\n\n [[6, 7, 8],\n  [9, 10, 11]]]");
  tensor_release(t);

  int64_t s4[4] = {2, 1, 1, 2};
  t = arange(DT_U8, 4, s4);
  assert_formats(t, "[[[[0u8, 1u8]]],\n\n\n [[[2u8, 3u8]]]]");
  tensor_release(t);

  int64_t sb[2] = {1, 2};
  t = tensor_new_zeros(DT_BOOL_T, 2, sb);
  tensor_set_i64(t, 1, 1);
  assert_formats(t, "[[False, True]]");
  tensor_release(t);

  int64_t se[3] = {2, 0, 3};
  t = tensor_new(DT_F32, 3, se);
  assert_formats(t, "[]");
  tensor_release(t);

  /* vector lanes print as one more axis */
  int64_t sv[1] = {2};
  t = arange((DType){DT_INT, 8, 2}, 1, sv);
  assert_formats(t, "[[0i8, 1i8],\n [2i8, 3i8]]");
  tensor_release(t);
}
END_TEST

START_TEST(test_format_elision) {
  int64_t n1000[1] = {1000};
  Tensor *t = arange(DT_F32, 1, n1000);
  char *s = fmt_opts(t, &FORMAT_DEFAULTS);
  ck_assert_int_eq(strncmp(s, "[0f, 1f, 2f, 3f", 15), 0); /* 1000 elements: not elided */
  ck_assert_ptr_null(strstr(s, "..."));
  free(s);
  tensor_release(t);

  int64_t n1001[1] = {1001};
  t = arange(DT_F32, 1, n1001);
  assert_formats(t, "[0f, 1f, 2f, ..., 998f, 999f, 1000f]");
  tensor_release(t);

  int64_t s2[2] = {100, 20};
  t = arange(DT_I32, 2, s2);
  assert_formats(t, "[[0, 1, 2, ..., 17, 18, 19],\n"
                    " [20, 21, 22, ..., 37, 38, 39],\n"
                    " [40, 41, 42, ..., 57, 58, 59],\n"
                    " ...,\n"
                    " [1940, 1941, 1942, ..., 1957, 1958, 1959],\n"
                    " [1960, 1961, 1962, ..., 1977, 1978, 1979],\n"
                    " [1980, 1981, 1982, ..., 1997, 1998, 1999]]");
  tensor_release(t);

  /* short axes of a large tensor are not elided */
  int64_t s3[2] = {2000, 1};
  t = arange(DT_I32, 2, s3);
  s = fmt_opts(t, &FORMAT_DEFAULTS);
  ck_assert_str_eq(s, "[[0],\n [1],\n [2],\n ...,\n [1997],\n [1998],\n [1999]]");
  free(s);
  FormatOptions never = FORMAT_DEFAULTS;
  never.threshold = -1;
  s = fmt_opts(t, &never);
  ck_assert_ptr_null(strstr(s, "..."));
  free(s);
  tensor_release(t);
}
END_TEST

/* Our layout equals numpy's array2string with ", " separators, a formatter
 * that writes our literals (no padding), and no line wrapping. */
static int have_numpy(void) {
  return system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

START_TEST(test_format_matches_numpy) {
  if (!have_numpy()) {
    fprintf(stderr, "check_tensor: numpy not available, skipping the numpy cross-check\n");
    return;
  }
  static const int64_t shapes[][5] = {
      /* ndim, extents */
      {1, 7}, {1, 1001}, {2, 3, 4}, {2, 40, 30}, {3, 10, 10, 20}, {3, 2, 3, 200},
      {4, 2, 3, 4, 5}, {4, 7, 7, 7, 7}, {2, 1, 1500}, {3, 1, 1, 1},
  };
  char path[] = "/tmp/relayc_fmtXXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *py = fdopen(fd, "w");
  fputs("import numpy as np, sys\n"
        "kw = dict(separator=', ', threshold=1000, edgeitems=3, max_line_width=10**9,\n"
        "          formatter={'all': lambda x: '%d' % x})\n"
        "for line in sys.stdin.read().split('\\0')[:-1]:\n"
        "    shape, want = line.split('|', 1)\n"
        "    shape = tuple(int(x) for x in shape.split(',') if x)\n"
        "    got = np.array2string(np.arange(int(np.prod(shape))).reshape(shape), **kw)\n"
        "    if got != want:\n"
        "        print('MISMATCH', shape); print(got); print(want); sys.exit(1)\n",
        py);
  fclose(py);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", path);
  FILE *p = popen(cmd, "w");
  ck_assert_ptr_nonnull(p);
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    int32_t nd = (int32_t)shapes[k][0];
    Tensor *t = arange(DT_I32, nd, &shapes[k][1]);
    char *s = fmt_opts(t, &FORMAT_DEFAULTS);
    for (int32_t i = 0; i < nd; i++) fprintf(p, "%s%lld", i ? "," : "", (long long)shapes[k][1 + i]);
    fprintf(p, "|%s%c", s, 0);
    free(s);
    tensor_release(t);
  }
  int rc = pclose(p);
  unlink(path);
  ck_assert_msg(rc == 0, "layout differs from numpy (see stdout)");
}
END_TEST

START_TEST(test_format_json) {
  int64_t s2[2] = {2, 2};
  Tensor *t = arange(DT_F32, 2, s2);
  tensor_set_f64(t, 3, 0.1);
  assert_json(t, "{\"dtype\": \"float32\", \"shape\": [2, 2], \"data\": [0.0, 1.0, 2.0, 0.1]}");
  tensor_set_f64(t, 0, NAN);
  tensor_set_f64(t, 1, INFINITY);
  tensor_set_f64(t, 2, -INFINITY);
  tensor_set_f64(t, 3, 1e-5);
  assert_json(t, "{\"dtype\": \"float32\", \"shape\": [2, 2], "
                 "\"data\": [\"nan\", \"inf\", \"-inf\", 1e-05]}");
  tensor_release(t);
  t = tensor_new_scalar_i64(-3);
  assert_json(t, "{\"dtype\": \"int64\", \"shape\": [], \"data\": [-3]}");
  tensor_release(t);
  int64_t s1[1] = {2};
  t = tensor_new_zeros(DT_BOOL_T, 1, s1);
  tensor_set_i64(t, 1, 1);
  assert_json(t, "{\"dtype\": \"bool\", \"shape\": [2], \"data\": [false, true]}");
  tensor_release(t);
  t = tensor_new_scalar_int(DTYPE(DT_UINT, 64), -1);
  assert_json(t, "{\"dtype\": \"uint64\", \"shape\": [], \"data\": [18446744073709551615]}");
  tensor_release(t);
  t = tensor_new_scalar_float(DT_F16, 0.1);
  assert_json(t, "{\"dtype\": \"float16\", \"shape\": [], \"data\": [0.1]}");
  tensor_release(t);
  int64_t s0[2] = {0, 3};
  t = tensor_new(DT_F64, 2, s0);
  assert_json(t, "{\"dtype\": \"float64\", \"shape\": [0, 3], \"data\": []}");
  tensor_release(t);
}
END_TEST

static Suite *tensor_suite(void) {
  Suite *s = suite_create("tensor");
  TCase *life = tcase_create("lifecycle");
  tcase_add_test(life, test_new_release);
  tcase_add_test(life, test_scalar_and_empty);
  tcase_add_test(life, test_zeros_like_copy_equal);
  tcase_add_test(life, test_make_writable);
  tcase_add_test(life, test_shared_zero);
  tcase_add_test(life, test_size_overflow);
  tcase_add_test(life, test_alloc_failure);
  tcase_add_test(life, test_from_const);
  tcase_add_test(life, test_element_conversions);
  tcase_add_test(life, test_scalar_constructors);
  suite_add_tcase(s, life);
  TCase *fmt = tcase_create("format");
  tcase_set_timeout(fmt, 60);
  tcase_add_test(fmt, test_format_ints_bools);
  tcase_add_test(fmt, test_format_floats);
  tcase_add_test(fmt, test_format_shortest_round_trips);
  tcase_add_test(fmt, test_format_nested);
  tcase_add_test(fmt, test_format_elision);
  tcase_add_test(fmt, test_format_matches_numpy);
  tcase_add_test(fmt, test_format_json);
  suite_add_tcase(s, fmt);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(tensor_suite());
}
