/* tests/unit/check_ffi.c — foreign operators (ops/foreign/ffi.c, ops/foreign/ffi_decl.c) and
 * native plugins (ops/foreign/plugin.c).
 *
 * main() builds the test libraries with tests/ffi/build.sh into a temporary
 * directory, then declares the foreign operators and loads the plugins every
 * case uses, so each (forked) case starts from the same registry. Cases check
 * three things: the values the generated kernels compute (called directly
 * through a KernelCtx), the types the generated relations infer (Relay text
 * through parse → resolve → infer), and the exact messages of every failure
 * (bad syntax, unknown C type, missing library or symbol, arity and
 * signature errors, plugin ABI mismatch and other broken plugins).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/mem.h"
#include "ir/print.h"
#include "ops/foreign/ffi.h"
#include "ops/kernels/kernel.h"
#include "ops/foreign/plugin.h"
#include "ops/registry.h"
#include "runtime/tensor.h"
#include "tests/unit/unit_run.h"
#include "tests/unit/ut_prog.h"

static char libdir[64]; /* where tests/ffi/build.sh put the libraries */

/* ------------------------------------------------------------ helpers */

typedef struct Out {
  char *text; /* diagnostics printed */
  bool ok;
} Out;

static Out capture_begin(FILE **f, Diag *d, char **buf, size_t *len) {
  *f = open_memstream(buf, len);
  diag_init(d, *f, NULL);
  d->max_errors = 0;
  return (Out){0};
}

static Out declare(const char *text) {
  FILE *f;
  Diag d;
  char *buf = NULL;
  size_t len = 0;
  Out o = capture_begin(&f, &d, &buf, &len);
  o.ok = foreign_declare_text(text, &d);
  fclose(f);
  o.text = buf;
  ck_assert_int_eq(o.ok, d.nerrors == 0);
  return o;
}

static Out load(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", libdir, name);
  FILE *f;
  Diag d;
  char *buf = NULL;
  size_t len = 0;
  Out o = capture_begin(&f, &d, &buf, &len);
  o.ok = plugin_load(path, &d);
  fclose(f);
  o.text = buf;
  return o;
}

/* A declaration expected to fail with `msg` in its diagnostics. */
static void declare_fails(const char *text, const char *msg) {
  Out o = declare(text);
  ck_assert_msg(!o.ok, "declaration accepted: %s", text);
  ck_assert_msg(strstr(o.text, msg), "expected '%s' in:\n%s", msg, o.text);
  free(o.text);
}

static void declare_ok(const char *text) {
  Out o = declare(text);
  ck_assert_msg(o.ok, "declaration rejected: %s\n%s", text, o.text);
  free(o.text);
}

/* Declarations with the test library path substituted for LIB. */
static char *with_lib(const char *text) {
  static char buf[2048];
  const char *p = strstr(text, "LIB"); /* no ck_assert: also used outside tests */
  snprintf(buf, sizeof buf, "%.*s\"%s/libffitest.so\"%s", (int)(p - text), text, libdir, p + 3);
  return buf;
}

/* Type-checks `def @main(PARAMS) { BODY }`: the printed result type, or the
 * diagnostics prefixed with "ERR:". Static buffer. */
static const char *typeof_main(const char *params, const char *body) {
  static char res[4096];
  char text[2048];
  snprintf(text, sizeof text, "#[version = \"0.0.5\"]\ndef @main(%s) { %s }\n", params, body);
  UtProg p;
  if (ut_check(&p, text)) snprintf(res, sizeof res, "%s", type_to_string(p.m->arena, p.m->defs[0]->fn->type->func.ret));
  else snprintf(res, sizeof res, "ERR:%s", ut_errors(&p));
  ut_unload(&p);
  return res;
}

/* Type-checking `def @main(PARAMS) { BODY }` fails with `msg` among the diagnostics. */
static void expect_type_error(const char *params, const char *body, const char *msg) {
  const char *e = typeof_main(params, body);
  ck_assert_msg(strncmp(e, "ERR:", 4) == 0 && strstr(e, msg), "%s", e);
}

/* A tensor of dtype dt and shape (rank given by n >= 0 dims) filled from vals. */
static Tensor *tensor(DType dt, int32_t ndim, const int64_t *shape, const double *vals) {
  Tensor *t = tensor_new(dt, ndim, shape);
  ck_assert_ptr_nonnull(t);
  for (int64_t i = 0; i < t->numel; i++) tensor_set_f64(t, i, vals[i]);
  return t;
}

#define T1(dt, n, ...) tensor(dt, 1, (int64_t[]){n}, (double[]){__VA_ARGS__})

typedef struct KRes {
  Tensor *out;
  int rc;
  char err[KERNEL_ERR_SIZE];
} KRes;

/* Runs op's kernel on the inputs (consumed); attrs NULL = defaults. */
static KRes run_op(const char *op, Tensor **ins, uint32_t n) {
  int32_t id = op_lookup(op);
  ck_assert_msg(id >= 0, "no operator %s", op);
  ck_assert_ptr_nonnull(op_get(id)->kernel);
  KernelCtx c;
  kernel_ctx_init(&c, id, ins, n, NULL, NULL);
  KRes r = {0};
  r.rc = op_get(id)->kernel(&c);
  memcpy(r.err, c.err, sizeof r.err);
  if (r.rc == KERNEL_OK) { /* on failure the context releases a half-made result */
    r.out = c.out;
    c.out = NULL;
  }
  kernel_ctx_clear(&c);
  return r;
}

static KRes run1(const char *op, Tensor *a) { return run_op(op, (Tensor *[]){a}, 1); }
static KRes run2(const char *op, Tensor *a, Tensor *b) { return run_op(op, (Tensor *[]){a, b}, 2); }

static void expect_values(KRes r, DType dt, const double *want, int64_t n, double tol) {
  ck_assert_msg(r.rc == KERNEL_OK, "kernel failed: %s", r.err);
  ck_assert(dtype_eq(r.out->dtype, dt));
  ck_assert_int_eq(r.out->numel, n);
  for (int64_t i = 0; i < n; i++) {
    if (tol == 0) ck_assert_double_eq(tensor_get_f64(r.out, i), want[i]);
    else ck_assert_double_eq_tol(tensor_get_f64(r.out, i), want[i], tol);
  }
  tensor_release(r.out);
}

/* ------------------------------------------------------------ libm erfc */

START_TEST(libm_erfc_values) {
  KRes r = run1("my.erfc", T1(DT_F32, 4, -1, 0, 0.5, 3));
  double want32[] = {erfcf(-1.0f), 1.0, erfcf(0.5f), erfcf(3.0f)};
  expect_values(r, DT_F32, want32, 4, 1e-6);
  r = run1("my.erfc", T1(DT_F64, 3, -2, 0.25, 10));
  double want64[] = {erfc(-2.0), erfc(0.25), erfc(10.0)};
  expect_values(r, DT_F64, want64, 3, 0);
}
END_TEST

START_TEST(libm_erfc_types) {
  ck_assert_str_eq(typeof_main("%x: Tensor[(2, 3), float32]", "my.erfc(%x)"), "Tensor[(2, 3), float32]");
  ck_assert_str_eq(typeof_main("%x: Tensor[(?, 3), float64]", "my.erfc(%x)"), "Tensor[(?, 3), float64]");
  ck_assert_str_eq(typeof_main("", "my.erfc(0.5f)"), "float32");
  expect_type_error("%x: Tensor[(3), float16]", "my.erfc(%x)",
                    "my.erfc: no foreign function takes (float16); declared: (float32) -> float32, "
                    "(float64) -> float64");
  expect_type_error("%x: float32", "my.erfc(%x, %x)", "my.erfc expects 1 argument but 2 were given");
}
END_TEST

/* ------------------------------------------------------------ elementwise */

START_TEST(unary_three_dtypes) {
  double sq[] = {4, 0, 2.25};
  expect_values(run1("t.sq", T1(DT_F32, 3, -2, 0, 1.5)), DT_F32, sq, 3, 0);
  expect_values(run1("t.sq", T1(DT_F64, 3, -2, 0, 1.5)), DT_F64, sq, 3, 0);
  double neg[] = {2, 0, -7};
  expect_values(run1("t.sq", T1(DT_I32, 3, -2, 0, 7)), DT_I32, neg, 3, 0);
  double twice[] = {-10000000000.0, 6};
  expect_values(run1("t.sq", T1(DT_I64, 2, -5000000000.0, 3)), DT_I64, twice, 2, 0);
  /* a rank-0 tensor */
  KRes r = run1("t.sq", tensor_new_scalar_f32(3));
  ck_assert_int_eq(r.out->ndim, 0);
  double nine[] = {9};
  expect_values(r, DT_F32, nine, 1, 0);
}
END_TEST

START_TEST(unary_other_result_dtype) {
  double want[] = {-1, 0, 1};
  expect_values(run1("t.sign", T1(DT_F32, 3, -0.5, 0, 3)), DT_I32, want, 3, 0);
  ck_assert_str_eq(typeof_main("%x: Tensor[(3), float32]", "t.sign(%x)"), "Tensor[(3), int32]");
}
END_TEST

START_TEST(binary_broadcast_values) {
  /* (2, 3) with (3): 2a + b */
  Tensor *a = tensor(DT_F32, 2, (int64_t[]){2, 3}, (double[]){0, 1, 2, 3, 4, 5});
  double w1[] = {100, 202, 304, 106, 208, 310};
  KRes r = run2("t.axpb", a, T1(DT_F32, 3, 100, 200, 300));
  ck_assert_int_eq(r.out->ndim, 2);
  expect_values(r, DT_F32, w1, 6, 0);
  /* (2, 1) with (1, 3): the strided path */
  Tensor *x = tensor(DT_F64, 2, (int64_t[]){2, 1}, (double[]){1, 2});
  Tensor *y = tensor(DT_F64, 2, (int64_t[]){1, 3}, (double[]){10, 20, 30});
  r = run2("t.axpb", x, y);
  ck_assert_int_eq(r.out->shape[0], 2);
  ck_assert_int_eq(r.out->shape[1], 3);
  double w2[] = {12, 22, 32, 14, 24, 34};
  expect_values(r, DT_F64, w2, 6, 0);
  /* int32 with a scalar on the left */
  double w3[] = {9, 8, 7};
  expect_values(run2("t.axpb", tensor_new_scalar_i32(10), T1(DT_I32, 3, 1, 2, 3)), DT_I32, w3, 3, 0);
  /* incompatible shapes at run time */
  r = run2("t.axpb", T1(DT_F32, 2, 1, 2), T1(DT_F32, 3, 1, 2, 3));
  ck_assert_int_eq(r.rc, KERNEL_ERROR);
  ck_assert_str_eq(r.err, "t.axpb: incompatible broadcast");
}
END_TEST

START_TEST(ternary_strided) {
  /* fma3(a, b, c) = a*b + c with a: (2, 1, 3), b: (4, 1), c: (3) → (2, 4, 3) */
  double av[6] = {1, 2, 3, 4, 5, 6}, bv[4] = {0, 1, 2, 3}, cv[3] = {100, 200, 300};
  Tensor *a = tensor(DT_F32, 3, (int64_t[]){2, 1, 3}, av);
  Tensor *b = tensor(DT_F32, 2, (int64_t[]){4, 1}, bv);
  Tensor *c = tensor(DT_F32, 1, (int64_t[]){3}, cv);
  KRes r = run_op("t.fma", (Tensor *[]){a, b, c}, 3);
  ck_assert_int_eq(r.rc, KERNEL_OK);
  ck_assert_int_eq(r.out->ndim, 3);
  double want[24];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 3; k++) want[(i * 4 + j) * 3 + k] = av[i * 3 + k] * bv[j] + cv[k];
  expect_values(r, DT_F32, want, 24, 0);
  ck_assert_str_eq(typeof_main("%a: Tensor[(2, 1, 3), float32], %b: Tensor[(4, 1), float32], %c: float32",
                               "t.fma(%a, %b, %c)"),
                   "Tensor[(2, 4, 3), float32]");
}
END_TEST

START_TEST(binary_types) {
  ck_assert_str_eq(typeof_main("%a: Tensor[(2, 3), float32], %b: Tensor[(3), float32]", "t.axpb(%a, %b)"),
                   "Tensor[(2, 3), float32]");
  ck_assert_str_eq(typeof_main("%a: Tensor[(?, 1), float64], %b: Tensor[(1, 5), float64]", "t.axpb(%a, %b)"),
                   "Tensor[(?, 5), float64]");
  ck_assert_str_eq(typeof_main("%a: int32", "t.axpb(%a, 1)"), "int32");
  expect_type_error("%a: Tensor[(2, 3), float32], %b: Tensor[(4), float32]", "t.axpb(%a, %b)",
                    "t.axpb: incompatible broadcast: dimension 3 vs 4");
  expect_type_error("%a: float32, %b: float64", "t.axpb(%a, %b)", "no foreign function takes (float32, float64)");
  expect_type_error("%a: float32", "t.axpb(%a)", "t.axpb expects 2 arguments but 1 was given");
}
END_TEST

/* ------------------------------------------------------------ buffer */

START_TEST(buffer_three_dtypes) {
  double want[] = {1, 3, 6, 10};
  expect_values(run1("t.cumsum", T1(DT_F32, 4, 1, 2, 3, 4)), DT_F32, want, 4, 0);
  expect_values(run1("t.cumsum", T1(DT_F64, 4, 1, 2, 3, 4)), DT_F64, want, 4, 0);
  KRes r = run1("t.cumsum", tensor(DT_I32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4}));
  ck_assert_int_eq(r.out->ndim, 2);
  expect_values(r, DT_I32, want, 4, 0);
  ck_assert_str_eq(typeof_main("%x: Tensor[(2, 5), int32]", "t.cumsum(%x)"), "Tensor[(2, 5), int32]");
  /* a count parameter first, as size_t */
  double w3[] = {3, -6};
  expect_values(run1("t.scale3", T1(DT_F32, 2, 1, -2)), DT_F32, w3, 2, 0);
  /* zero elements: called with n = 0 */
  r = run1("t.cumsum", tensor_new(DT_F32, 1, (int64_t[]){0}));
  ck_assert_int_eq(r.rc, KERNEL_OK);
  ck_assert_int_eq(r.out->numel, 0);
  tensor_release(r.out);
}
END_TEST

START_TEST(buffer_two_inputs) {
  double w[] = {11, 22};
  expect_values(run2("t.add", T1(DT_F32, 2, 1, 2), T1(DT_F32, 2, 10, 20)), DT_F32, w, 2, 0);
  expect_type_error("%a: Tensor[(2), float32], %b: Tensor[(3), float32]", "t.add(%a, %b)",
                    "t.add: input 1 has 3 elements but the output has 2, and add_f32 gets no count for it");
  KRes r = run2("t.add", T1(DT_F32, 2, 1, 2), T1(DT_F32, 3, 1, 2, 3));
  ck_assert_int_eq(r.rc, KERNEL_ERROR);
  ck_assert_str_eq(r.err, "t.add: input 1 has 3 elements, the output 2");
  /* b has its own count: any size */
  double w2[] = {6, 7, 8};
  expect_values(run2("t.plus_sum", T1(DT_F32, 3, 0, 1, 2), T1(DT_F32, 3, 1, 2, 3)), DT_F32, w2, 3, 0);
  ck_assert_str_eq(typeof_main("%a: Tensor[(3), float32], %b: Tensor[(7, 2), float32]", "t.plus_sum(%a, %b)"),
                   "Tensor[(3), float32]");
  /* buffer(1): the output is shaped like input 1 */
  Tensor *b = tensor(DT_F64, 2, (int64_t[]){1, 2}, (double[]){3, 4});
  KRes r2 = run2("t.scale_by_first", T1(DT_F64, 1, 10), b);
  ck_assert_int_eq(r2.out->ndim, 2);
  double w3[] = {30, 40};
  expect_values(r2, DT_F64, w3, 2, 0);
  ck_assert_str_eq(typeof_main("%a: Tensor[(5), float64], %b: Tensor[(1, 2), float64]", "t.scale_by_first(%a, %b)"),
                   "Tensor[(1, 2), float64]");
}
END_TEST

START_TEST(buffer_status) {
  double w[] = {0, 1, 1, 2, 3};
  expect_values(run1("t.isqrt", T1(DT_I32, 5, 0, 1, 3, 4, 9)), DT_I32, w, 5, 0);
  KRes r = run1("t.isqrt", T1(DT_I32, 2, 4, -1));
  ck_assert_int_eq(r.rc, KERNEL_ERROR);
  ck_assert_str_eq(r.err, "t.isqrt: checked_sqrt_i32 returned error status 7");
  expect_type_error("%x: Tensor[(2), float32]", "t.isqrt(%x)",
                    "no foreign function takes (float32); declared: (int32) -> int32");
}
END_TEST

/* ------------------------------------------------------------ declaration errors */

START_TEST(decl_missing_library) {
  declare_fails("op x.a elementwise from libdoes-not-exist.so.3: float f(float)",
                "<ffi-decl>:1:25: error: cannot open library 'libdoes-not-exist.so.3': cannot open shared object file");
  declare_fails("op x.a elementwise from \"./nowhere/lib.so\": float f(float)", "cannot open library './nowhere/lib.so'");
  ck_assert_int_lt(op_lookup("x.a"), 0);
}
END_TEST

START_TEST(decl_missing_symbol) {
  declare_fails("op x.b elementwise from libm.so.6: float no_such_function(float)",
                "<ffi-decl>:1:42: error: symbol 'no_such_function' not found in 'libm.so.6'");
  ck_assert_int_lt(op_lookup("x.b"), 0);
}
END_TEST

START_TEST(decl_unknown_type) {
  declare_fails("op x.c elementwise from libm.so.6: float erfcf(unsigned)",
                "1:48: error: unknown C type 'unsigned' (supported: float, double, int, int32_t, int64_t, size_t");
  declare_fails("op x.c elementwise from libm.so.6: long erfcf(float)", "unknown C type 'long'");
  declare_fails("op x.c buffer from libm.so.6: void f(const char *p, float *o)", "unknown C type 'char'");
  declare_fails("op x.c elementwise from libm.so.6: float f(float **)", "pointers to pointers are not supported");
  declare_fails("op x.c buffer from libm.so.6: void f(void *p)", "'void *' is not supported");
}
END_TEST

START_TEST(decl_signature_misfit) {
  declare_fails("op x.d elementwise from libm.so.6: void erfcf(float)",
                "an elementwise function must return float, double, int32_t or int64_t, not 'void'");
  declare_fails("op x.d elementwise from libm.so.6: float erfcf(void)", "needs at least one parameter");
  declare_fails("op x.d elementwise from libm.so.6: float erfcf(const float *)", "(use 'buffer' for pointers)");
  declare_fails("op x.d elementwise from libm.so.6: float erfcf(size_t)", "not 'size_t'");
  declare_fails("op x.d buffer from libm.so.6: float erfcf(float)", "a buffer function returns void or an int status");
  declare_fails("op x.d buffer from libm.so.6: void f(const float *a, int64_t n)", "needs an output");
  declare_fails("op x.d buffer from libm.so.6: void f(float *a, int64_t n)", "needs at least one input");
  declare_fails("op x.d buffer from libm.so.6: void f(const float *a, float *b, float *c)", "exactly one output");
  declare_fails("op x.d buffer from libm.so.6: void f(const float *a, float *b, double s)",
                "takes only pointers and element counts; parameter 3 is 'double'");
  declare_fails("op x.d buffer(1) from libm.so.6: void f(const float *a, float *b)",
                "the output takes the shape of input 1, but the function has 1 input");
  ck_assert_int_lt(op_lookup("x.d"), 0);
}
END_TEST

START_TEST(decl_arity_and_names) {
  /* an overload must agree with the first declaration */
  declare_fails("op my.erfc elementwise from libm.so.6: float powf(float, float)",
                "'my.erfc' was declared before as elementwise with 1 input; every declaration of it must agree");
  declare_fails("op my.erfc elementwise from libm.so.6: float erff(float)",
                "'my.erfc' already has a foreign function for (float32) -> float32");
  declare_fails("op nn.relu elementwise from libm.so.6: float erfcf(float)",
                "operator 'nn.relu' already exists (built-in or from a plugin)");
  declare_fails("op sample.softplus elementwise from libm.so.6: float erfcf(float)", "already exists");
}
END_TEST

START_TEST(decl_syntax) {
  declare_fails("op x.e elementwise libm.so.6: float erfcf(float)", "1:20: error: expected 'from LIBRARY', found 'libm.so.6'");
  declare_fails("op x.e pointwise from libm.so.6: float erfcf(float)", "expected 'elementwise' or 'buffer', found 'pointwise'");
  declare_fails("op 9x elementwise from libm.so.6: float erfcf(float)", "invalid operator name '9x'");
  declare_fails("op x.e elementwise from \"libm.so.6: float erfcf(float)", "unterminated string");
  declare_fails("op x.e elementwise from libm.so.6: float erfcf(float) op", "expected ';' after the declaration");
  declare_fails("op x.e elementwise from libm.so.6: float erfcf(float", "expected ')' or ',' in the parameter list");
  declare_fails("op x.e buffer(x) from libm.so.6: void f(const float *a, float *b)", "expected an input index");
  declare_fails("op x.e elementwise from libm.so.6: float erfcf(float) @", "unexpected character '@'");
  /* several broken declarations: every one is reported */
  Out o = declare("op x.e elementwise from libm.so.6: bogus f(float);\nop x.f elementwise from libm.so.6: float g(float, bogus2)");
  ck_assert(!o.ok);
  ck_assert_ptr_nonnull(strstr(o.text, "1:36: error: unknown C type 'bogus'"));
  ck_assert_ptr_nonnull(strstr(o.text, "2:51: error: unknown C type 'bogus2'"));
  free(o.text);
  /* comments and empty text are fine */
  declare_ok("# nothing here\n// nor here\n;;");
}
END_TEST

START_TEST(decl_file) {
  char dir[] = "/tmp/relayc-ffidecl-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256], cmd[512];
  snprintf(cmd, sizeof cmd, "cp %s/libffitest.so %s/", libdir, dir);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(path, sizeof path, "%s/decls.ffi", dir);
  FILE *f = fopen(path, "w");
  /* a library path relative to the declaration file */
  fputs("# test\nop file.neg elementwise from ./libffitest.so:\n  int32_t neg_i32(int32_t x);\n", f);
  fclose(f);
  Diag d;
  diag_init(&d, stderr, NULL);
  ck_assert(foreign_declare_file(path, &d));
  double w[] = {-4};
  expect_values(run1("file.neg", T1(DT_I32, 1, 4)), DT_I32, w, 1, 0);
  /* a missing file */
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  diag_init(&d, m, NULL);
  snprintf(path, sizeof path, "%s/missing.ffi", dir);
  ck_assert(!foreign_declare_file(path, &d));
  fclose(m);
  ck_assert_ptr_nonnull(strstr(buf, "relayc: error: cannot read declaration file"));
  free(buf);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(decl_mutations) {
  /* Random byte edits of valid declarations: any outcome but a crash. */
  static const char *const seeds[] = {
      "op z.a elementwise from libm.so.6: double erfc(double x);",
      "op z.b buffer(0) from \"libm.so.6\": int f(const float *a, int64_t n, float *o) # c",
  };
  static const char alphabet[] = "op.;:()*,\"#/ \nabfloatconstint64_t0123456789elementwisebuffer\x01\xff";
  unsigned seed = 12345;
  for (int it = 0; it < 3000; it++) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", seeds[it % 2]);
    size_t n = strlen(buf);
    int edits = 1 + it % 4;
    for (int e = 0; e < edits; e++) {
      seed = seed * 1103515245u + 12345u;
      size_t pos = (seed >> 8) % n;
      char c = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
      if ((seed >> 4) % 3 == 0) buf[pos] = c;          /* replace */
      else if ((seed >> 4) % 3 == 1 && n > 1) {          /* delete */
        memmove(buf + pos, buf + pos + 1, n - pos);
        n--;
      } else if (n + 1 < sizeof buf) {                  /* insert */
        memmove(buf + pos + 1, buf + pos, n - pos + 1);
        buf[pos] = c;
        n++;
      }
    }
    Out o = declare(buf);
    ck_assert_int_eq(o.ok, o.text == NULL || o.text[0] == 0);
    free(o.text);
  }
}
END_TEST

/* ------------------------------------------------------------ plugins */

START_TEST(plugin_sample_values) {
  double x[] = {-2, 0, 1, 30};
  KRes r = run1("sample.softplus", tensor(DT_F32, 1, (int64_t[]){4}, x));
  double want[4];
  for (int i = 0; i < 4; i++) want[i] = x[i] > 20 ? x[i] : log1p(exp(x[i]));
  expect_values(r, DT_F32, want, 4, 1e-6);
  r = run1("sample.swish", tensor(DT_F64, 1, (int64_t[]){4}, x));
  for (int i = 0; i < 4; i++) want[i] = x[i] / (1 + exp(-x[i]));
  expect_values(r, DT_F64, want, 4, 1e-12);
}
END_TEST

START_TEST(plugin_sample_types) {
  ck_assert_str_eq(typeof_main("%x: Tensor[(2, ?), float32]", "sample.softplus(%x, beta=2f)"),
                   "Tensor[(2, ?), float32]");
  ck_assert_str_eq(typeof_main("%x: float64", "sample.swish(%x)"), "float64");
  expect_type_error("%x: Tensor[(2), int32]", "sample.softplus(%x)",
                    "sample.softplus: expects a float32 or float64 tensor");
  expect_type_error("%x: float32", "sample.softplus(%x, beta=0f)", "sample.softplus: beta must not be 0");
  expect_type_error("%x: float32", "sample.softplus(%x, bta=1f)", "unknown attribute \"bta\"");
  const OpDef *op = op_get(op_lookup("sample.softplus"));
  ck_assert_uint_eq(op->nattrs, 2);
  ck_assert_str_eq(op->attrs[0].name, "beta");
  ck_assert_str_eq(op->attrs[1].default_text, "20f");
}
END_TEST

START_TEST(plugin_test_ops) {
  KRes r = run2("test.pair", T1(DT_F32, 2, 1, 2), T1(DT_F32, 3, 0, 1, 2));
  ck_assert_int_eq(r.out->ndim, 2);
  double w[] = {10, 11, 12, 20, 21, 22};
  expect_values(r, DT_F32, w, 6, 0);
  ck_assert_str_eq(typeof_main("%a: Tensor[(2, ?), float32], %b: Tensor[(3), float32]", "test.pair(%a, %b)"),
                   "Tensor[(2, ?, 3), float32]");
  r = run1("test.fail", T1(DT_F32, 3, 1, 2, 3));
  ck_assert_int_eq(r.rc, KERNEL_ERROR);
  ck_assert_str_eq(r.err, "test.fail: boom after 3 elements");
  /* loading the same library again is a no-op */
  Out o = load("libtestplugin.so");
  ck_assert_msg(o.ok, "%s", o.text);
  free(o.text);
}
END_TEST

static void plugin_fails(const char *lib, const char *msg) {
  Out o = load(lib);
  ck_assert_msg(!o.ok, "%s loaded", lib);
  ck_assert_msg(strstr(o.text, msg), "expected '%s' in:\n%s", msg, o.text);
  free(o.text);
}

START_TEST(plugin_failures) {
  plugin_fails("libtestplugin_bad_abi.so",
               "was built for plugin ABI version 999, but this relayc implements version 1");
  plugin_fails("libtestplugin_no_abi.so", "is not a relayc plugin: it exports no relayc_plugin_abi_version");
  plugin_fails("libtestplugin_no_init.so", "exports no relayc_plugin_init entry point");
  plugin_fails("libtestplugin_init_fail.so", "failed to initialise (relayc_plugin_init returned 3)");
  plugin_fails("libtestplugin_dup_name.so", "operator 'add' already exists");
  plugin_fails("libtestplugin_bad_default.so",
               "operator 'test.bad_default': the default of attribute 'k' is not valid attribute text of its type");
  plugin_fails("no-such-plugin.so", "cannot load plugin");
  ck_assert_int_lt(op_lookup("test.bad_default"), 0);
}
END_TEST

/* ------------------------------------------------------------ setup */

static const char *const setup_decls[] = {
    "# erfc from the system libm, two overloads\n"
    "op my.erfc elementwise from libm.so.6: float erfcf(float);\n"
    "op my.erfc elementwise from libm.so.6: double erfc(double x);",
    "op t.sq elementwise from LIB: float sq_f32(float)",
    "op t.sq elementwise from LIB: double sq_f64(double)",
    "op t.sq elementwise from LIB: int32_t neg_i32(int32_t)",
    "op t.sq elementwise from LIB: int64_t twice_i64(int64_t)",
    "op t.sign elementwise from LIB: int sign_f32(float)",
    "op t.axpb elementwise from LIB: float axpb_f32(float a, float b)",
    "op t.axpb elementwise from LIB: double axpb_f64(double, double)",
    "op t.axpb elementwise from LIB: int32_t sub_i32(int32_t, int32_t)",
    "op t.fma elementwise from LIB: float fma3_f32(float, float, float)",
    "op t.cumsum buffer from LIB: void cumsum_f32(const float *in, float *out, int64_t n)",
    "op t.cumsum buffer from LIB: void cumsum_f64(const double *in, double *out, int64_t n)",
    "op t.cumsum buffer from LIB: void cumsum_i32(const int32_t *in, int32_t *out, int64_t n)",
    "op t.scale3 buffer from LIB: void scale3_f32(size_t n, const float *in, float *out)",
    "op t.add buffer from LIB: void add_f32(const float *a, const float *b, float *out, int64_t n)",
    "op t.plus_sum buffer from LIB: void plus_sum_f32(const float *a, int64_t na, const float *b, int64_t nb, "
    "float *out, int64_t n)",
    "op t.scale_by_first buffer(1) from LIB: void scale_by_first_f64(const double *a, int64_t na, const double *b, "
    "double *out, int64_t n)",
    "op t.isqrt buffer from LIB: int checked_sqrt_i32(const int32_t *in, int32_t *out, int n)",
};

static bool setup_all(void) {
  snprintf(libdir, sizeof libdir, "/tmp/relayc-ffi-XXXXXX");
  if (!mkdtemp(libdir)) return false;
  char cmd[256];
  snprintf(cmd, sizeof cmd, "sh tests/ffi/build.sh %s", libdir);
  if (system(cmd) != 0) return false;
  snprintf(libdir + strlen(libdir), sizeof libdir - strlen(libdir), "/ffi");
  for (size_t i = 0; i < sizeof setup_decls / sizeof setup_decls[0]; i++) {
    const char *text = strstr(setup_decls[i], "LIB") ? with_lib(setup_decls[i]) : setup_decls[i];
    Diag d;
    diag_init(&d, stderr, NULL);
    if (!foreign_declare_text(text, &d)) return false;
  }
  char path[256];
  Diag d;
  diag_init(&d, stderr, NULL);
  snprintf(path, sizeof path, "%s/../samples/libsample_plugin.so", libdir);
  if (!plugin_load(path, &d)) return false;
  snprintf(path, sizeof path, "%s/libtestplugin.so", libdir);
  return plugin_load(path, &d);
}

int main(void) {
  stack_guard_init(8u << 20);
  if (!setup_all()) {
    fprintf(stderr, "check_ffi: cannot build or load the test libraries\n");
    return EXIT_FAILURE;
  }
  Suite *s = suite_create("ffi");
  TCase *tc = tcase_create("foreign");
  tcase_add_test(tc, libm_erfc_values);
  tcase_add_test(tc, libm_erfc_types);
  tcase_add_test(tc, unary_three_dtypes);
  tcase_add_test(tc, unary_other_result_dtype);
  tcase_add_test(tc, binary_broadcast_values);
  tcase_add_test(tc, ternary_strided);
  tcase_add_test(tc, binary_types);
  tcase_add_test(tc, buffer_three_dtypes);
  tcase_add_test(tc, buffer_two_inputs);
  tcase_add_test(tc, buffer_status);
  tcase_add_test(tc, decl_missing_library);
  tcase_add_test(tc, decl_missing_symbol);
  tcase_add_test(tc, decl_unknown_type);
  tcase_add_test(tc, decl_signature_misfit);
  tcase_add_test(tc, decl_arity_and_names);
  tcase_add_test(tc, decl_syntax);
  tcase_add_test(tc, decl_file);
  tcase_add_test(tc, decl_mutations);
  suite_add_tcase(s, tc);
  TCase *tp = tcase_create("plugin");
  tcase_add_test(tp, plugin_sample_values);
  tcase_add_test(tp, plugin_sample_types);
  tcase_add_test(tp, plugin_test_ops);
  tcase_add_test(tp, plugin_failures);
  suite_add_tcase(s, tp);
  int status = unit_run(s);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %.*s", (int)(strlen(libdir) - 4), libdir);
  if (system(cmd) != 0) status = EXIT_FAILURE;
  return status;
}
