/* tests/unit/check_k_dense.c — nn.dense, nn.matmul, nn.batch_matmul against a plain loop.
 *
 * ref_mm is the spec/ops.md §7 formula written literally: operands cast to
 * the result dtype, products summed in double (floats) or wrapping uint64
 * (integers), batch broadcasting of extent 1. Inputs are random; shapes
 * cover single GEMMs split across the pool, batches of small GEMMs, leading
 * dimensions, empty reductions and every transpose combination.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "runtime/value.h"
#include "tests/unit/kt_util.h"
#include "tests/unit/unit_run.h"

static Module *Mod;
static void setup(void) { Mod = module_new(NULL); }
static void teardown(void) {
  module_free(Mod);
  Mod = NULL;
}

static const DType F32 = {DT_FLOAT, 32, 1}, F64 = {DT_FLOAT, 64, 1}, F16 = {DT_FLOAT, 16, 1},
                   I32 = {DT_INT, 32, 1}, I8 = {DT_INT, 8, 1}, U8 = {DT_UINT, 8, 1};

/* C[b] = op(A[b or 0]) · op(B[b or 0]); A is (B1, M, K) or (B1, K, M), B (B2, K, N) or (B2, N, K). */
static Tensor *ref_mm(const Tensor *a, const Tensor *b, int64_t B1, int64_t B2, int64_t M,
                      int64_t N, int64_t K, bool ta, bool tb, DType odt, int32_t ndim,
                      const int64_t *shape) {
  int64_t Bn = B1 > B2 ? B1 : B2;
  Tensor *c = kt_new(odt, ndim, shape);
  bool isint = !dtype_is_float(odt);
  for (int64_t bi = 0; bi < Bn; bi++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double acc = 0;
        uint64_t iacc = 0;
        for (int64_t k = 0; k < K; k++) {
          int64_t ai = (B1 == 1 ? 0 : bi) * M * K + (ta ? k * M + i : i * K + k);
          int64_t bj = (B2 == 1 ? 0 : bi) * K * N + (tb ? j * K + k : k * N + j);
          if (isint)
            iacc += (uint64_t)value_wrap_int(odt, tensor_get_i64(a, ai)) *
                    (uint64_t)value_wrap_int(odt, tensor_get_i64(b, bj));
          else
            acc += tensor_get_f64(a, ai) * tensor_get_f64(b, bj);
        }
        int64_t q = (bi * M + i) * N + j;
        if (isint) tensor_set_i64(c, q, value_wrap_int(odt, (int64_t)iacc));
        else tensor_set_f64(c, q, acc);
      }
  return c;
}

static Tensor *rnd(DType dt, int nd, const int64_t *shape, uint32_t seed) {
  Tensor *t = kt_new(dt, nd, shape);
  if (dtype_is_float(dt)) kt_fill(t, seed, -1, 1);
  else kt_fill(t, seed, -100, 100);
  return t;
}

static void check_op(int32_t op, const char *attrs, Tensor *a, Tensor *b, const Tensor *want,
                     double tol) {
  char err[KERNEL_ERR_SIZE] = "";
  Tensor *ins[2] = {a, b};
  Tensor *got = kt_call(op, kt_attrs(Mod, attrs), ins, 2, err);
  ck_assert_msg(got != NULL, "kernel failed: %s (%s)", err, attrs);
  ck_assert_int_eq(got->ndim, want->ndim);
  for (int i = 0; i < want->ndim; i++) ck_assert_int_eq(got->shape[i], want->shape[i]);
  ck_assert(dtype_eq(got->dtype, want->dtype));
  if (tol == 0) ck_assert_msg(kt_equal(got, want), "integer result differs (%s)", attrs);
  else ck_assert_msg(kt_rel_err(got, want) <= tol, "rel err %g (%s)", kt_rel_err(got, want), attrs);
  tensor_release(got);
}

/* dense: data (rows..., K), weight (N, K). */
static void dense_case(int32_t nd, const int64_t *dshape, int64_t N, DType dt, DType odt,
                       const char *attrs, uint32_t seed) {
  int64_t K = dshape[nd - 1], rows = 1, ws[2] = {N, K}, oshape[8];
  for (int i = 0; i < nd - 1; i++) rows *= dshape[i];
  memcpy(oshape, dshape, (size_t)nd * sizeof *oshape);
  oshape[nd - 1] = N;
  Tensor *x = rnd(dt, nd, dshape, seed), *w = rnd(dt, 2, ws, seed + 1);
  Tensor *want = ref_mm(x, w, 1, 1, rows, N, K, false, true, odt, nd, oshape);
  double tol = !dtype_is_float(odt) ? 0 : odt.bits == 16 ? 2e-3 : 1e-5;
  check_op(OP_NN_DENSE, attrs, x, w, want, tol);
  tensor_release(x);
  tensor_release(w);
  tensor_release(want);
}

START_TEST(dense_float) {
  int64_t s1[2] = {1, 2048}, s2[3] = {3, 5, 7}, s3[1] = {33}, s4[2] = {64, 300};
  dense_case(2, s1, 1000, F32, F32, "units=1000", 1); /* the ResNet classifier: split over N */
  dense_case(3, s2, 4, F32, F32, "", 2);              /* leading dims fold into rows */
  dense_case(1, s3, 17, F32, F32, "", 3);             /* rank-1 data */
  dense_case(2, s4, 200, F32, F32, "", 4);            /* a GEMM split across the pool */
  dense_case(2, s2 + 1, 9, F64, F64, "", 5);
  dense_case(2, s2 + 1, 9, F16, F16, "", 6);
  dense_case(2, s2 + 1, 9, F16, F32, "out_dtype=\"float32\"", 7);
}
END_TEST

START_TEST(dense_int) {
  int64_t s[2] = {4, 6};
  dense_case(2, s, 5, I32, I32, "", 10);
  dense_case(2, s, 5, I8, I8, "", 11);                           /* wraps in int8 */
  dense_case(2, s, 5, I8, I32, "out_dtype=\"int32\"", 12);       /* widened first */
  dense_case(2, s, 5, U8, U8, "", 13);
  /* int32 overflow wraps */
  int64_t xs[2] = {1, 2}, ws[2] = {1, 2};
  Tensor *x = kt_new(I32, 2, xs), *w = kt_new(I32, 2, ws);
  for (int i = 0; i < 2; i++) {
    tensor_set_i64(x, i, 65536);
    tensor_set_i64(w, i, 65536);
  }
  char err[KERNEL_ERR_SIZE];
  Tensor *ins[2] = {x, w};
  Tensor *got = kt_call(OP_NN_DENSE, kt_attrs(Mod, ""), ins, 2, err);
  ck_assert_ptr_nonnull(got);
  ck_assert_int_eq(tensor_get_i64(got, 0), 0); /* 2 · 2^32 wraps to 0 */
  tensor_release(got);
  tensor_release(x);
  tensor_release(w);
}
END_TEST

START_TEST(dense_empty_and_nan) {
  int64_t xs[2] = {3, 0}, ws[2] = {4, 0};
  Tensor *x = kt_new(F32, 2, xs), *w = kt_new(F32, 2, ws);
  char err[KERNEL_ERR_SIZE];
  Tensor *ins[2] = {x, w};
  Tensor *got = kt_call(OP_NN_DENSE, kt_attrs(Mod, ""), ins, 2, err);
  ck_assert_ptr_nonnull(got);
  ck_assert_int_eq(got->numel, 12);
  for (int64_t i = 0; i < 12; i++) ck_assert_double_eq(tensor_get_f64(got, i), 0.0); /* empty sum */
  tensor_release(got);
  tensor_release(x);
  tensor_release(w);
  int64_t xs2[2] = {2, 3}, ws2[2] = {2, 3};
  x = rnd(F32, 2, xs2, 20);
  w = rnd(F32, 2, ws2, 21);
  tensor_set_f64(x, 1, NAN);
  ins[0] = x;
  ins[1] = w;
  got = kt_call(OP_NN_DENSE, kt_attrs(Mod, ""), ins, 2, err);
  ck_assert(isnan(tensor_get_f64(got, 0)) && isnan(tensor_get_f64(got, 1)));
  ck_assert(!isnan(tensor_get_f64(got, 2)));
  tensor_release(got);
  /* K mismatch is a run-time error, not a crash */
  int64_t ws3[2] = {2, 4};
  Tensor *w3 = rnd(F32, 2, ws3, 22);
  ins[1] = w3;
  ck_assert_ptr_null(kt_call(OP_NN_DENSE, kt_attrs(Mod, ""), ins, 2, err));
  tensor_release(w3);
  tensor_release(x);
  tensor_release(w);
}
END_TEST

START_TEST(matmul_transposes) {
  /* general shapes, and row-vector / column-vector products (GEMV paths) */
  const int64_t mn[3][2] = {{5, 6}, {1, 6}, {5, 1}};
  for (int shape = 0; shape < 3; shape++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        int64_t Mv = mn[shape][0], K = 7, N = mn[shape][1];
        int64_t as[3] = {3, ta ? K : Mv, ta ? Mv : K}, bs[2] = {tb ? N : K, tb ? K : N};
        Tensor *a = rnd(F32, 3, as, 30 + (uint32_t)(2 * ta + tb)), *b = rnd(F32, 2, bs, 40);
        int64_t os[3] = {3, Mv, N};
        /* b is shared by the 3 leading slices: a batch with B2 = 1 */
        Tensor *want = ref_mm(a, b, 3, 1, Mv, N, K, ta, tb, F32, 3, os);
        char attrs[96];
        snprintf(attrs, sizeof attrs, "transpose_a=%s; transpose_b=%s", ta ? "True" : "False",
                 tb ? "True" : "False");
        check_op(OP_NN_MATMUL, attrs, a, b, want, 1e-5);
        tensor_release(a);
        tensor_release(b);
        tensor_release(want);
      }
}
END_TEST

/* Products cut along K (ops/kernels/k_gemm.c: K >= 512 and >= twice M and N), every
 * transpose, float32 and float64, and short-K overwriting products threaded on
 * relayc's sgemm (the MLP's weight gradient: K = the batch) in row panels (128 and
 * 97 rows: at least 8 row tiles per thread, 97 split on the micro-kernel's rows)
 * and column panels (40 rows). */
START_TEST(matmul_ksplit_and_short_k) {
  const int64_t shapes[5][3] = {{40, 50, 600}, {64, 128, 784}, {128, 300, 64}, {97, 200, 16}, {40, 2000, 8}}; /* M, N, K */
  for (int s = 0; s < 5; s++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++)
        for (int f = 0; f < 2; f++) {
          int64_t Mv = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
          if (f && s == 1) continue;
          DType dt = f ? F64 : F32;
          int64_t as[2] = {ta ? K : Mv, ta ? Mv : K}, bs[2] = {tb ? N : K, tb ? K : N};
          Tensor *a = rnd(dt, 2, as, 70 + (uint32_t)(4 * s + 2 * ta + tb));
          Tensor *b = rnd(dt, 2, bs, 80 + (uint32_t)s);
          int64_t os[2] = {Mv, N};
          Tensor *want = ref_mm(a, b, 1, 1, Mv, N, K, ta, tb, dt, 2, os);
          char attrs[96];
          snprintf(attrs, sizeof attrs, "transpose_a=%s; transpose_b=%s", ta ? "True" : "False",
                   tb ? "True" : "False");
          check_op(OP_NN_MATMUL, attrs, a, b, want, f ? 1e-12 : 1e-5);
          tensor_release(a);
          tensor_release(b);
          tensor_release(want);
        }
}
END_TEST

static void bmm_case(int64_t B1, int64_t B2, int64_t Mv, int64_t N, int64_t K, bool ta, bool tb,
                     DType dt, DType odt, uint32_t seed) {
  int64_t as[3] = {B1, ta ? K : Mv, ta ? Mv : K}, bs[3] = {B2, tb ? N : K, tb ? K : N};
  Tensor *a = rnd(dt, 3, as, seed), *b = rnd(dt, 3, bs, seed + 1);
  int64_t os[3] = {B1 > B2 ? B1 : B2, Mv, N};
  Tensor *want = ref_mm(a, b, B1, B2, Mv, N, K, ta, tb, odt, 3, os);
  char attrs[128];
  char dn[32];
  snprintf(attrs, sizeof attrs, "transpose_a=%s; transpose_b=%s; out_dtype=\"%s\"",
           ta ? "True" : "False", tb ? "True" : "False", dtype_name(odt, dn));
  check_op(OP_NN_BATCH_MATMUL, attrs, a, b, want, dtype_is_float(odt) ? 1e-5 : 0);
  tensor_release(a);
  tensor_release(b);
  tensor_release(want);
}

START_TEST(batch_matmul_cases) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) bmm_case(4, 4, 5, 6, 7, ta, tb, F32, F32, 50 + (uint32_t)(2 * ta + tb));
  bmm_case(1, 5, 3, 4, 6, false, true, F32, F32, 60); /* a broadcast */
  bmm_case(5, 1, 3, 4, 6, true, false, F32, F32, 61); /* b broadcast */
  bmm_case(12, 12, 50, 50, 64, false, true, F32, F32, 62); /* GPT-2 attention shape: batch over the pool */
  bmm_case(2, 2, 200, 180, 150, false, false, F32, F32, 63); /* large GEMMs: threaded one by one */
  bmm_case(3, 3, 4, 5, 6, false, true, F64, F64, 64);
  bmm_case(3, 3, 4, 5, 6, false, false, I32, I32, 65);
  bmm_case(3, 1, 4, 5, 6, true, true, I8, I32, 66);
  bmm_case(2, 2, 3, 3, 3, false, false, F16, F16, 67);
  bmm_case(2, 2, 3, 4, 0, false, false, F32, F32, 68); /* K = 0: zeros */
  bmm_case(3, 3, 1, 4, 5, true, true, F32, F32, 69);   /* M = 1 */
  bmm_case(3, 1, 4, 1, 5, true, false, F64, F64, 90);  /* N = 1 */
}
END_TEST

START_TEST(batch_matmul_errors) {
  int64_t as[3] = {2, 3, 4}, bs[3] = {3, 4, 5}, cs[3] = {2, 5, 5};
  Tensor *a = rnd(F32, 3, as, 70), *b = rnd(F32, 3, bs, 71), *c = rnd(F32, 3, cs, 72);
  char err[KERNEL_ERR_SIZE];
  Tensor *ins[2] = {a, b};
  ck_assert_ptr_null(kt_call(OP_NN_BATCH_MATMUL, kt_attrs(Mod, ""), ins, 2, err));
  ck_assert_ptr_nonnull(strstr(err, "batch"));
  ins[1] = c;
  ck_assert_ptr_null(kt_call(OP_NN_BATCH_MATMUL, kt_attrs(Mod, ""), ins, 2, err));
  ck_assert_ptr_nonnull(strstr(err, "reduction"));
  tensor_release(a);
  tensor_release(b);
  tensor_release(c);
}
END_TEST

static Suite *dense_suite(void) {
  Suite *s = suite_create("k_dense");
  TCase *tc = tcase_create("dense");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, dense_float);
  tcase_add_test(tc, dense_int);
  tcase_add_test(tc, dense_empty_and_nan);
  tcase_add_test(tc, matmul_transposes);
  tcase_add_test(tc, matmul_ksplit_and_short_k);
  tcase_add_test(tc, batch_matmul_cases);
  tcase_add_test(tc, batch_matmul_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(dense_suite());
}
