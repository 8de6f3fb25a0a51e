/* tests/unit/check_k_elemfast.c — the fast elementwise kernels
 * (ops/kernels/k_elemwise_fast.c) and the vector math (ops/kernels/k_vmath.h).
 *
 * The reference is the generic path of ops/kernels/k_elemwise.c (the plain
 * per-element loop through int64/double), reached by switching the fast
 * path off with kfast_set_enabled(false). Every binary and unary operator
 * runs on every dtype (including those the fast path declines) over random
 * shapes of rank 0..5 with every broadcasting pattern (rank-0 and size-1
 * axes on either side, inner and outer broadcast, empty tensors), on data
 * salted with NaN, ±inf, ±0, denormals, .5 ties and integer extremes. The
 * results must agree bit for bit (NaN with NaN, the sign of zero included),
 * or — for the float32 transcendental functions and float32 power — within
 * 1e-6 relative. The vector math is also swept over a million float bit
 * patterns and a list of edge values against glibc. TVM's fast_exp,
 * fast_tanh and fast_erf must equal their scalar definitions
 * (ops/kernels/k_fastmath.h) bit for bit over the same sweep, and a table of
 * results computed independently (numpy, float32 arithmetic: tests/diff's
 * reference) on every path: vector kernel, generic kernel, scalar fast path;
 * float16 fast_erf in half arithmetic. In-place reuse of a
 * dying input and the threaded chunking (4 threads, chunks starting
 * mid-row) are checked on large shapes.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/mem.h"
#include "ops/kernels/k_elemwise_fast.h"
#include "ops/kernels/k_fastmath.h"
#include "ops/kernels/k_vmath.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "tests/unit/unit_run.h"

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static double rng_unit(void) { return (double)(rng() >> 11) / 9007199254740992.0; }

/* Runs op's kernel; inputs are consumed when `give` (so they may be reused
 * in place), else borrowed. The result or NULL with the message in err. */
static Tensor *run_op(int32_t op, Tensor **ins, uint32_t n, bool fast, bool give, char *err) {
  Tensor **in = mem_calloc(n, sizeof *in);
  for (uint32_t i = 0; i < n; i++) in[i] = give ? ins[i] : tensor_retain(ins[i]);
  KernelCtx c;
  kernel_ctx_init(&c, op, in, n, NULL, NULL);
  kfast_set_enabled(fast);
  int rc = op_get(op)->kernel(&c);
  kfast_set_enabled(true);
  Tensor *out = NULL;
  if (rc == KERNEL_OK) {
    out = c.out;
    c.out = NULL;
  } else {
    snprintf(err, KERNEL_ERR_SIZE, "%s", c.err);
  }
  kernel_ctx_clear(&c);
  mem_free(in);
  return out;
}

static const float special_f[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -1e-40f, 0.5f, -0.5f,
                                  2.5f, -2.5f, 1.0f, -1.0f, 3.0f, 1e30f, -1e30f, FLT_MAX, FLT_MIN};

/* Random contents: floats mostly in [-4, 4] (a fraction integers) with a
 * sprinkle of specials; integers small, with extremes; bool 0/1. */
static void fill_random(Tensor *t) {
  DType dt = t->dtype;
  for (int64_t i = 0; i < t->numel; i++) {
    uint64_t r = rng();
    if (dtype_is_float(dt)) {
      double v = (r % 16 == 0) ? special_f[(r >> 8) % (sizeof special_f / sizeof *special_f)]
                 : (r % 5 == 0) ? (double)((int)((r >> 8) % 9) - 4)
                                : -4 + 8 * rng_unit();
      tensor_set_f64(t, i, v);
    } else if (dtype_is_bool(dt)) {
      tensor_set_i64(t, i, (int64_t)(r & 1));
    } else {
      int64_t v = (int64_t)((r >> 8) % 2001) - 1000;
      if (r % 23 == 0) v = dt.code == DT_INT ? INT64_MIN >> (64 - dt.bits) : -1; /* min / max */
      if (r % 29 == 0) v = 0;
      if (v == 0 && r % 2) v = (r & 4) ? -1 : 1;
      tensor_set_i64(t, i, v);
    }
  }
}

/* (fast_exp, fast_tanh, fast_erf are not: both paths compute TVM's polynomials exactly) */
static bool transcendental(int32_t op) {
  return op == OP_EXP || op == OP_LOG || op == OP_LOG2 || op == OP_LOG10 || op == OP_TANH ||
         op == OP_ERF || op == OP_SIGMOID || op == OP_POWER;
}

/* |got − want| within 1e-6 relative, or a few denormal steps below FLT_MIN. */
static bool close_f32(double got, double want) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (got == want) return true;
  if (isinf(got) || isinf(want)) return false;
  double d = fabs(got - want);
  return d <= 1e-6 * fabs(want) || (fabs(want) < FLT_MIN && d <= 0x1p-147);
}

/* Element i of two results agrees (exactly, or within tolerance when tol). */
static bool same_elem(const Tensor *g, const Tensor *w, int64_t i, bool tol) {
  if (dtype_is_float(w->dtype)) {
    double a = tensor_get_f64(g, i), b = tensor_get_f64(w, i);
    if (tol) return close_f32(a, b);
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
  }
  return tensor_get_i64(g, i) == tensor_get_i64(w, i);
}

/* Fast and generic results of op on ins agree; returns a message or NULL. */
static const char *compare_paths(int32_t op, Tensor **ins, uint32_t n, bool give_fast) {
  static char msg[1024];
  char e1[KERNEL_ERR_SIZE] = "", e2[KERNEL_ERR_SIZE] = "";
  Tensor *want = run_op(op, ins, n, false, false, e1);
  Tensor *given[2] = {NULL, NULL};
  if (give_fast)
    for (uint32_t i = 0; i < n; i++) given[i] = tensor_copy(ins[i]);
  Tensor *got = run_op(op, give_fast ? given : ins, n, true, give_fast, e2);
  const char *r = NULL;
  if (!want || !got) {
    if (!!want != !!got || strcmp(e1, e2) != 0) {
      snprintf(msg, sizeof msg, "%s: generic %s / fast %s", op_get(op)->name, want ? "ok" : e1, got ? "ok" : e2);
      r = msg;
    }
  } else if (!tensor_same_type(got, want)) {
    snprintf(msg, sizeof msg, "%s: result types differ", op_get(op)->name);
    r = msg;
  } else {
    bool tol = transcendental(op) && got->dtype.bits == 32 && dtype_is_float(got->dtype);
    for (int64_t i = 0; i < want->numel && !r; i++) {
      if (!same_elem(got, want, i, tol)) {
        snprintf(msg, sizeof msg, "%s %s: element %lld: fast %.9g generic %.9g", op_get(op)->name,
                 dtype_is_float(want->dtype) ? "float" : "int", (long long)i, tensor_get_f64(got, i),
                 tensor_get_f64(want, i));
        r = msg;
      }
    }
  }
  tensor_release(want);
  tensor_release(got);
  return r;
}

static const DType test_dtypes[] = {DT_F32, DT_F64, DT_I32, DT_I64, DT_BOOL_T, DT_F16, DT_I8, DT_U8,
                                    DTYPE(DT_UINT, 64)};
#define NDT (sizeof test_dtypes / sizeof *test_dtypes)

static const int32_t binary_ops[] = {
    OP_ADD, OP_SUBTRACT, OP_MULTIPLY, OP_DIVIDE, OP_FLOOR_DIVIDE, OP_TRUNC_DIVIDE, OP_MOD,
    OP_FLOOR_MOD, OP_TRUNC_MOD, OP_POWER, OP_MAXIMUM, OP_MINIMUM, OP_LEFT_SHIFT, OP_RIGHT_SHIFT,
    OP_BITWISE_AND, OP_BITWISE_OR, OP_BITWISE_XOR, OP_LOGICAL_AND, OP_LOGICAL_OR, OP_LOGICAL_XOR,
    OP_EQUAL, OP_NOT_EQUAL, OP_LESS, OP_LESS_EQUAL, OP_GREATER, OP_GREATER_EQUAL};
#define NBIN (sizeof binary_ops / sizeof *binary_ops)

static const int32_t unary_ops[] = {
    OP_NEGATIVE, OP_ABS, OP_SIGN, OP_SQRT, OP_RSQRT, OP_EXP, OP_LOG, OP_LOG2, OP_LOG10, OP_SIN,
    OP_COS, OP_TAN, OP_ASIN, OP_ACOS, OP_ATAN, OP_SINH, OP_COSH, OP_TANH, OP_ASINH, OP_ACOSH,
    OP_ATANH, OP_ERF, OP_SIGMOID, OP_FLOOR, OP_CEIL, OP_TRUNC, OP_ROUND, OP_LOGICAL_NOT,
    OP_BITWISE_NOT, OP_COPY, OP_ZEROS_LIKE, OP_ONES_LIKE, OP_FAST_EXP, OP_FAST_TANH, OP_FAST_ERF,
    OP_ISNAN, OP_ISINF, OP_ISFINITE};
#define NUN (sizeof unary_ops / sizeof *unary_ops)

/* A random broadcast pair: output rank 0..5, each operand right-aligned
 * with a random rank ≤ the output's and size-1 axes at random; small. */
static void random_pair(DType dt, Tensor **a, Tensor **b) {
  static const int64_t extents[] = {1, 2, 3, 4, 7, 16, 33};
  int32_t r = (int32_t)(rng() % 6);
  int64_t out[5], sa[5], sb[5];
  int64_t numel;
  do { /* at most 20000 elements: the generic reference is slow */
    numel = 1;
    for (int32_t d = 0; d < r; d++) numel *= out[d] = extents[rng() % 7];
  } while (numel > 20000);
  if (rng() % 25 == 0 && r > 0) out[rng() % (uint64_t)r] = 0; /* empty */
  int32_t ra = rng() % 3 == 0 ? (int32_t)(rng() % (uint64_t)(r + 1)) : r;
  int32_t rb = rng() % 3 == 0 ? (int32_t)(rng() % (uint64_t)(r + 1)) : r;
  for (int32_t d = 0; d < ra; d++) sa[d] = rng() % 4 == 0 ? 1 : out[r - ra + d];
  for (int32_t d = 0; d < rb; d++) sb[d] = rng() % 4 == 0 ? 1 : out[r - rb + d];
  *a = tensor_new(dt, ra, sa);
  *b = tensor_new(dt, rb, sb);
  fill_random(*a);
  fill_random(*b);
}

/* ------------------------------------------------------------ binary vs generic */

START_TEST(binary_random_shapes) {
  int checked = 0;
  for (int trial = 0; trial < 60; trial++) {
    for (size_t k = 0; k < NDT; k++) {
      Tensor *a, *b;
      random_pair(test_dtypes[k], &a, &b);
      for (size_t o = 0; o < NBIN; o++) {
        Tensor *ins[2] = {a, b};
        const char *m = compare_paths(binary_ops[o], ins, 2, trial % 2 == 1);
        ck_assert_msg(!m, "trial %d, a rank %d, b rank %d: %s", trial, a->ndim, b->ndim, m);
        checked++;
      }
      tensor_release(a);
      tensor_release(b);
    }
  }
  ck_assert_int_gt(checked, 10000);
}
END_TEST

/* The named patterns, with shapes large enough for several threads and
 * chunk boundaries in the middle of rows. */
START_TEST(binary_patterns_threaded) {
  static const struct {
    int32_t ra, rb;
    int64_t a[4], b[4];
  } pats[] = {
      {3, 3, {1, 50, 3072}, {1, 50, 3072}}, /* same shape */
      {3, 1, {1, 50, 3072}, {3072}},        /* bias row (outer broadcast) */
      {3, 3, {1, 50, 3072}, {1, 50, 1}},    /* per-row scalar (inner broadcast) */
      {3, 0, {1, 50, 3072}, {0}},           /* rank-0 scalar */
      {0, 3, {0}, {2, 50, 1001}},           /* scalar on the left */
      {2, 2, {500, 1}, {1, 333}},           /* outer product */
      {3, 2, {7, 1, 999}, {130, 1}},        /* both broadcast, inner SV rows */
      {4, 3, {2, 3, 40, 1}, {3, 1, 777}},
  };
  for (size_t p = 0; p < sizeof pats / sizeof *pats; p++) {
    for (size_t k = 0; k < 4; k++) {
      Tensor *a = tensor_new(test_dtypes[k], pats[p].ra, pats[p].a);
      Tensor *b = tensor_new(test_dtypes[k], pats[p].rb, pats[p].b);
      fill_random(a);
      fill_random(b);
      static const int32_t ops[] = {OP_ADD, OP_SUBTRACT, OP_MULTIPLY, OP_MAXIMUM, OP_LESS, OP_NOT_EQUAL, OP_POWER};
      for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        Tensor *ins[2] = {a, b};
        const char *m = compare_paths(ops[o], ins, 2, o % 2 == 0);
        ck_assert_msg(!m, "pattern %zu dtype %zu: %s", p, k, m);
      }
      tensor_release(a);
      tensor_release(b);
    }
  }
}
END_TEST

START_TEST(binary_semantics) {
  /* the spec's select, ordered-comparison and wrap rules on the fast path */
  char err[KERNEL_ERR_SIZE];
  int64_t s2[1] = {4};
  Tensor *a = tensor_new(DT_F32, 1, s2), *b = tensor_new(DT_F32, 1, s2);
  float av[] = {NAN, 1, NAN, 2}, bv[] = {1, NAN, NAN, 2};
  memcpy(a->data, av, sizeof av);
  memcpy(b->data, bv, sizeof bv);
  Tensor *ins[2] = {a, b};
  Tensor *mx = run_op(OP_MAXIMUM, ins, 2, true, false, err);
  ck_assert(((float *)mx->data)[0] == 1 && isnan(((float *)mx->data)[1]));
  Tensor *ne = run_op(OP_NOT_EQUAL, ins, 2, true, false, err);
  const uint8_t *nv = ne->data;
  ck_assert(nv[0] == 0 && nv[1] == 0 && nv[2] == 0 && nv[3] == 0);
  Tensor *x = tensor_new(DT_I32, 1, s2), *y = tensor_new(DT_I32, 1, s2);
  int32_t xv[] = {INT32_MAX, INT32_MIN, -7, 5}, yv[] = {1, -1, 2, -3};
  memcpy(x->data, xv, sizeof xv);
  memcpy(y->data, yv, sizeof yv);
  Tensor *iins[2] = {x, y};
  Tensor *sum = run_op(OP_ADD, iins, 2, true, false, err);
  ck_assert_int_eq(((int32_t *)sum->data)[0], INT32_MIN);
  Tensor *prod = run_op(OP_MULTIPLY, iins, 2, true, false, err);
  ck_assert_int_eq(((int32_t *)prod->data)[1], INT32_MIN);
  /* integer division stays on the generic path and its error */
  memset(y->data, 0, sizeof yv);
  ck_assert_ptr_null(run_op(OP_DIVIDE, iins, 2, true, false, err));
  ck_assert_str_eq(err, "divide: integer division by zero");
  /* mismatched dtypes: the generic message */
  Tensor *mixed[2] = {a, x};
  ck_assert_ptr_null(run_op(OP_ADD, mixed, 2, true, false, err));
  ck_assert_str_eq(err, "add: operands have different dtypes");
  tensor_release(mx);
  tensor_release(ne);
  tensor_release(sum);
  tensor_release(prod);
  tensor_release(a);
  tensor_release(b);
  tensor_release(x);
  tensor_release(y);
}
END_TEST

START_TEST(binary_in_place) {
  char err[KERNEL_ERR_SIZE];
  int64_t sh[3] = {1, 50, 3072}, row[1] = {3072};
  Tensor *a = tensor_new(DT_F32, 3, sh), *b = tensor_new(DT_F32, 1, row);
  fill_random(a);
  fill_random(b);
  Tensor *want = run_op(OP_ADD, (Tensor *[]){a, b}, 2, false, false, err);
  /* a dying left operand is overwritten */
  Tensor *a2 = tensor_copy(a), *b2 = tensor_copy(b);
  void *data = a2->data;
  Tensor *got = run_op(OP_ADD, (Tensor *[]){a2, b2}, 2, true, true, err);
  ck_assert_ptr_eq(got->data, data);
  ck_assert(tensor_equal(got, want) || compare_paths(OP_ADD, (Tensor *[]){a, b}, 2, false) == NULL);
  tensor_release(got);
  /* a dying right operand of the result's shape is overwritten too */
  Tensor *a3 = tensor_copy(b), *b3 = tensor_copy(a);
  data = b3->data;
  got = run_op(OP_SUBTRACT, (Tensor *[]){a3, b3}, 2, true, true, err);
  ck_assert_ptr_eq(got->data, data);
  tensor_release(got);
  /* a shared operand is not */
  Tensor *a4 = tensor_copy(a), *b4 = tensor_copy(b);
  Tensor *keep = tensor_retain(a4);
  got = run_op(OP_MULTIPLY, (Tensor *[]){a4, b4}, 2, true, true, err);
  ck_assert_ptr_ne(got->data, keep->data);
  tensor_release(keep);
  tensor_release(got);
  /* comparisons never reuse a float input */
  Tensor *a5 = tensor_copy(a), *b5 = tensor_copy(a);
  got = run_op(OP_LESS, (Tensor *[]){a5, b5}, 2, true, true, err);
  ck_assert(dtype_is_bool(got->dtype));
  tensor_release(got);
  tensor_release(want);
  tensor_release(a);
  tensor_release(b);
}
END_TEST

/* ------------------------------------------------------------ unary vs generic */

START_TEST(unary_random_shapes) {
  for (int trial = 0; trial < 40; trial++) {
    for (size_t k = 0; k < NDT; k++) {
      Tensor *a, *b;
      random_pair(test_dtypes[k], &a, &b);
      for (size_t o = 0; o < NUN; o++) {
        Tensor *ins[1] = {a};
        const char *m = compare_paths(unary_ops[o], ins, 1, trial % 2 == 1);
        ck_assert_msg(!m, "trial %d rank %d: %s", trial, a->ndim, m);
      }
      tensor_release(a);
      tensor_release(b);
    }
  }
}
END_TEST

START_TEST(unary_threaded_in_place) {
  char err[KERNEL_ERR_SIZE];
  int64_t sh[3] = {1, 50, 3072};
  for (size_t o = 0; o < NUN; o++) {
    Tensor *x = tensor_new(DT_F32, 3, sh);
    fill_random(x);
    const char *m = compare_paths(unary_ops[o], (Tensor *[]){x}, 1, true);
    ck_assert_msg(!m, "%s", m);
    tensor_release(x);
  }
  Tensor *x = tensor_new(DT_F32, 3, sh);
  fill_random(x);
  void *data = x->data;
  Tensor *y = run_op(OP_TANH, (Tensor *[]){x}, 1, true, true, err);
  ck_assert_ptr_eq(y->data, data);
  tensor_release(y);
}
END_TEST

/* ------------------------------------------------------------ vector math vs libm */

static float sigmoidf_ref(float x) { return 1.0f / (1.0f + expf(-x)); }

typedef struct {
  const char *name;
  void (*fast)(const float *, float *, int64_t);
  float (*ref)(float);
} MathFn;

static const MathFn math_fns[] = {
    {"exp", kvm_exp_f32, expf},     {"sigmoid", kvm_sigmoid_f32, sigmoidf_ref},
    {"tanh", kvm_tanh_f32, tanhf},  {"erf", kvm_erf_f32, erff},
    {"log", kvm_log_f32, logf},     {"log2", kvm_log2_f32, log2f},
    {"log10", kvm_log10_f32, log10f},
};

static void check_math(const MathFn *f, const float *x, int64_t n) {
  float *y = mem_malloc((size_t)n * sizeof *y);
  f->fast(x, y, n);
  for (int64_t i = 0; i < n; i++) {
    float want = f->ref(x[i]);
    if (!close_f32(y[i], want)) /* (no ck_assert per element: each one is a syscall) */
      ck_abort_msg("%s(%a) = %a, libm %a", f->name, (double)x[i], (double)y[i], (double)want);
  }
  /* in place gives the same */
  float *z = mem_malloc((size_t)n * sizeof *z);
  memcpy(z, x, (size_t)n * sizeof *z);
  f->fast(z, z, n);
  ck_assert(memcmp(y, z, (size_t)n * sizeof *z) == 0);
  mem_free(z);
  mem_free(y);
}

START_TEST(vmath_bit_sweep) {
  /* one float in every 4093 bit patterns: all exponents, both signs, NaN,
   * denormals; n not a multiple of 16 (the tail path) */
  int64_t n = (int64_t)(((uint64_t)1 << 32) / 4093) + 1;
  float *x = mem_malloc((size_t)n * sizeof *x);
  for (int64_t i = 0; i < n; i++) {
    uint32_t bits = (uint32_t)((uint64_t)i * 4093u);
    memcpy(&x[i], &bits, 4);
  }
  ck_assert_int_ne(n % 16, 0);
  for (size_t k = 0; k < sizeof math_fns / sizeof *math_fns; k++) check_math(&math_fns[k], x, n);
  mem_free(x);
}
END_TEST

START_TEST(vmath_edges) {
  float e[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 1e-40f, FLT_MIN,
               -FLT_MIN, FLT_MAX, -FLT_MAX, 1.0f, -1.0f, 2.0f, 0.5f, 8.0f, 1024.0f, 0x1p-126f,
               88.0f, 88.72283f, 88.722839f, 88.7229f, 89.0f, 100.0f, -87.33654f, -87.4f, -100.0f,
               -103.9f, -103.97f, -104.0f, -150.0f, 9.0f, 9.01f, 10.0f, -10.0f, 20.0f, 0.99999994f,
               1.00000012f, 3.9f, 3.92f, 4.0f, -4.0f, 5.0f, 1.4142135f, 1.4142137f, 0.70710677f,
               0.7071068f, 1e-3f, -1e-3f, 1e-8f, -1e-8f, 0.3466f, -0.3466f, 0.6931472f, 1e10f,
               10.0f, 100.0f, 1000.0f};
  for (size_t k = 0; k < sizeof math_fns / sizeof *math_fns; k++)
    for (int64_t n = 1; n <= (int64_t)(sizeof e / sizeof *e); n += 7) check_math(&math_fns[k], e, n);
  /* uniform inputs where the functions are used */
  enum { N = 100003 };
  float *x = mem_malloc(N * sizeof *x);
  for (int i = 0; i < N; i++) x[i] = (float)(-12 + 24 * rng_unit());
  for (size_t k = 0; k < 4; k++) check_math(&math_fns[k], x, N);
  for (int i = 0; i < N; i++) x[i] = (float)(rng_unit() * 4);
  for (size_t k = 4; k < sizeof math_fns / sizeof *math_fns; k++) check_math(&math_fns[k], x, N);
  mem_free(x);
}
END_TEST

/* ------------------------------------------------------------ TVM's fast_* */

typedef struct {
  const char *name;
  int32_t op;
  void (*vec)(const float *, float *, int64_t);
  float (*def)(float);
} FastFn;

static const FastFn fast_fns[] = {
    {"fast_exp", OP_FAST_EXP, kvm_fast_exp_f32, kfm_fast_exp},
    {"fast_tanh", OP_FAST_TANH, kvm_fast_tanh_f32, kfm_fast_tanh},
    {"fast_erf", OP_FAST_ERF, kvm_fast_erf_f32, kfm_fast_erf},
};

static bool same_bits(float a, float b) {
  uint32_t x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  return x == y || (a != a && b != b);
}

START_TEST(fast_poly_sweep) {
  int64_t n = (int64_t)(((uint64_t)1 << 32) / 4093) + 1;
  float *x = mem_malloc((size_t)n * sizeof *x), *y = mem_malloc((size_t)n * sizeof *y);
  for (int64_t i = 0; i < n; i++) {
    uint32_t bits = (uint32_t)((uint64_t)i * 4093u);
    memcpy(&x[i], &bits, 4);
  }
  for (size_t k = 0; k < sizeof fast_fns / sizeof *fast_fns; k++) {
    fast_fns[k].vec(x, y, n);
    for (int64_t i = 0; i < n; i++)
      if (!same_bits(y[i], fast_fns[k].def(x[i])))
        ck_abort_msg("%s(%a): vector %a, definition %a", fast_fns[k].name, (double)x[i], (double)y[i],
                     (double)fast_fns[k].def(x[i]));
  }
  mem_free(x);
  mem_free(y);
}
END_TEST

/* Expected bits from an independent numpy float32 evaluation of spec/passes.md 11.3
 * (tests/diff/fam_fast.py's reference); where the fast function differs from the exact one:
 * fast_exp(88.4) = inf, fast_exp(-88.3) = 0, fast_erf(NaN) = 1, tanh/erf clamp to ±1. */
static const struct {
  int32_t op;
  float x;
  uint32_t bits;
} fast_table[] = {
    {OP_FAST_EXP, 0.5f, 0x3fd3094cu},        {OP_FAST_EXP, -1.25f, 0x3e92b0c2u},
    {OP_FAST_EXP, 3.0f, 0x41a0af2eu},        {OP_FAST_EXP, 20.0f, 0x4de7583cu},
    {OP_FAST_EXP, 88.3f, 0x7f27ba33u},       {OP_FAST_EXP, 88.4f, 0x7f800000u},
    {OP_FAST_EXP, -88.3f, 0x00000000u},      {OP_FAST_EXP, -87.5f, 0x006cb2d2u},
    {OP_FAST_EXP, -20.0f, 0x310da438u},      {OP_FAST_EXP, 1e-3f, 0x3f8020c9u},
    {OP_FAST_EXP, NAN, 0x7fc00000u},         {OP_FAST_TANH, 0.5f, 0x3eec9a9fu},
    {OP_FAST_TANH, -1.25f, 0xbf59291fu},     {OP_FAST_TANH, 3.0f, 0x3f7ebbe8u},
    {OP_FAST_TANH, 20.0f, 0x3f800000u},      {OP_FAST_TANH, -87.5f, 0xbf800000u},
    {OP_FAST_TANH, 0.75f, 0x3f229920u},      {OP_FAST_TANH, 1e-3f, 0x3a83126bu},
    {OP_FAST_TANH, NAN, 0x7fc00000u},        {OP_FAST_ERF, 0.5f, 0x3f053f7bu},
    {OP_FAST_ERF, -1.25f, 0xbf6c4330u},      {OP_FAST_ERF, 3.0f, 0x3f7ffe8fu},
    {OP_FAST_ERF, 2.5f, 0x3f7fe555u},        {OP_FAST_ERF, -20.0f, 0xbf800000u},
    {OP_FAST_ERF, 1e-3f, 0x3a93e61cu},       {OP_FAST_ERF, NAN, 0x3f800000u},
};

static float run_f32(int32_t op, float v, bool fast) {
  int64_t one = 1;
  Tensor *x = tensor_new(DT_F32, 1, &one);
  ((float *)x->data)[0] = v;
  char err[KERNEL_ERR_SIZE];
  Tensor *y = run_op(op, &x, 1, fast, false, err);
  ck_assert_ptr_nonnull(y);
  float r = ((float *)y->data)[0];
  tensor_release(x);
  tensor_release(y);
  return r;
}

START_TEST(fast_poly_values) {
  for (size_t i = 0; i < sizeof fast_table / sizeof *fast_table; i++) {
    float want;
    memcpy(&want, &fast_table[i].bits, 4);
    int32_t op = fast_table[i].op;
    float x = fast_table[i].x;
    const char *name = op_get(op)->name;
    ck_assert_msg(same_bits(run_f32(op, x, true), want), "%s(%g): vector kernel %a, want %a", name, (double)x,
                  (double)run_f32(op, x, true), (double)want);
    ck_assert_msg(same_bits(run_f32(op, x, false), want), "%s(%g): generic kernel %a, want %a", name, (double)x,
                  (double)run_f32(op, x, false), (double)want);
    Value out;
    char err[KERNEL_ERR_SIZE];
    ck_assert_int_eq(kscalar_unary(op, value_float(DT_F32, x), &out, err), KERNEL_OK);
    ck_assert_msg(same_bits((float)out.f, want), "%s(%g): scalar path %a, want %a", name, (double)x, out.f,
                  (double)want);
  }
  /* float16 fast_erf in half arithmetic (numpy float16): erf16(3) = 1.01 */
  static const struct { float x; uint16_t bits; } h[] = {
      {0.5f, 0x3829}, {-1.25f, 0xbb61}, {2.0f, 0x3bf6}, {3.0f, 0x3c0a}};
  for (size_t i = 0; i < sizeof h / sizeof *h; i++)
    ck_assert_msg(float_to_half(kfm_fast_erf_f16(h[i].x)) == h[i].bits, "fast_erf f16(%g) = %a", (double)h[i].x,
                  (double)kfm_fast_erf_f16(h[i].x));
  /* float64: the exact functions */
  Value out;
  char err[KERNEL_ERR_SIZE];
  ck_assert_int_eq(kscalar_unary(OP_FAST_EXP, value_float(DT_F64, -88.3), &out, err), KERNEL_OK);
  ck_assert(out.f == exp(-88.3));
}
END_TEST

START_TEST(power_scalar_exponents) {
  char err[KERNEL_ERR_SIZE];
  static const float exps[] = {2.0f, 3.0f, 0.5f, 1.0f, 0.0f, -1.0f, 1.5f};
  int64_t sh[1] = {4099};
  Tensor *x = tensor_new(DT_F32, 1, sh);
  fill_random(x);
  float *xv = x->data;
  xv[0] = -0.0f;
  xv[1] = -INFINITY;
  xv[2] = NAN;
  xv[3] = -2.0f;
  xv[4] = 1e-20f;
  xv[5] = 1e20f;
  for (size_t k = 0; k < sizeof exps / sizeof *exps; k++) {
    Tensor *e = tensor_new_scalar_f32(exps[k]);
    Tensor *y = run_op(OP_POWER, (Tensor *[]){x, e}, 2, true, false, err);
    for (int64_t i = 0; i < x->numel; i++) {
      float got = ((float *)y->data)[i], want = powf(xv[i], exps[k]);
      if (!close_f32(got, want) || (got == 0 && signbit(got) != signbit(want)))
        ck_abort_msg("pow(%a, %g) = %a, libm %a", (double)xv[i], (double)exps[k], (double)got, (double)want);
    }
    tensor_release(y);
    tensor_release(e);
  }
  tensor_release(x);
}
END_TEST

START_TEST(sqrt_every_isa) {
  /* every vsqrt level gives sqrtf / sqrt exactly, tails included */
  enum { N = 1031 };
  float x[N], y[N];
  double xd[N], yd[N];
  for (int i = 0; i < N; i++) {
    x[i] = i < 18 ? special_f[i] : (float)(rng_unit() * 1e6 - 10);
    xd[i] = i < 18 ? special_f[i] : rng_unit() * 1e12 - 10;
  }
  for (int level = 0; level <= 3; level++) {
    kvm_sqrt_force_isa(level);
    for (int n = 1; n <= N; n += 97) {
      kvm_sqrt_f32(x, y, n);
      kvm_sqrt_f64(xd, yd, n);
      for (int i = 0; i < n; i++) {
        float w = sqrtf(x[i]);
        double wd = sqrt(xd[i]);
        if (memcmp(&w, &y[i], 4) != 0 && !(isnan(w) && isnan(y[i])))
          ck_abort_msg("level %d: sqrtf(%a) = %a, want %a", level, (double)x[i], (double)y[i], (double)w);
        if (memcmp(&wd, &yd[i], 8) != 0 && !(isnan(wd) && isnan(yd[i])))
          ck_abort_msg("level %d: sqrt(%a) = %a, want %a", level, xd[i], yd[i], wd);
      }
    }
  }
  kvm_sqrt_force_isa(0);
}
END_TEST

START_TEST(switch_and_env) {
  ck_assert(kfast_enabled());
  kfast_set_enabled(false);
  ck_assert(!kfast_enabled());
  int64_t sh[1] = {3};
  Tensor *x = tensor_new(DT_F32, 1, sh);
  fill_random(x);
  KernelCtx c;
  Tensor *in[1] = {tensor_retain(x)};
  kernel_ctx_init(&c, OP_EXP, in, 1, NULL, NULL);
  ck_assert_int_eq(kfast_unary(&c), KFAST_DECLINED);
  kfast_set_enabled(true);
  ck_assert_int_eq(kfast_unary(&c), KERNEL_OK);
  ck_assert_ptr_nonnull(c.out);
  kernel_ctx_clear(&c);
  tensor_release(x);
}
END_TEST

static Suite *elemfast_suite(void) {
  Suite *s = suite_create("k_elemfast");
  const struct {
    const char *name;
    const TTest *test;
  } cases[] = {
      {"binary_random", binary_random_shapes}, {"binary_patterns", binary_patterns_threaded},
      {"binary_semantics", binary_semantics},  {"binary_in_place", binary_in_place},
      {"unary_random", unary_random_shapes},   {"unary_threaded", unary_threaded_in_place},
      {"vmath_sweep", vmath_bit_sweep},        {"vmath_edges", vmath_edges},
      {"power", power_scalar_exponents},       {"switch", switch_and_env},
      {"sqrt_isa", sqrt_every_isa},           {"fast_sweep", fast_poly_sweep},
      {"fast_values", fast_poly_values},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    TCase *t = tcase_create(cases[i].name);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, cases[i].test);
    suite_add_tcase(s, t);
  }
  return s;
}

int main(void) {
  setenv("RELAYC_NUM_THREADS", "4", 0); /* several chunks even on a small machine */
  unsetenv("RELAYC_ELEMWISE_FAST");
  stack_guard_init(8u << 20);
  return unit_run(elemfast_suite());
}
