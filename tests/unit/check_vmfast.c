/* tests/unit/check_vmfast.c — the interpreter's fast paths (eval/code.h):
 * typed int32/float32 arithmetic and comparisons (register and immediate
 * operands, int32 wrap-around, float32 rounding, ordered NaN comparisons),
 * comparisons fused with their branch, their fallback to the operator call
 * when an operand is not an immediate, fused pairs of typed arithmetic,
 * float32 expression trees (FX, FXC, FXJ: forms, stack, limits, fallback,
 * error spans of their nodes), self
 * tail calls (TSELF, arguments computed in place, TSELFM, TSELF1) and the clear
 * lists that release a frame's registers (no leaks, memo registers reset),
 * and direct calls of function literals lowered in place (no closure). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eval/lower.h"
#include "eval/vm.h"
#include "ir/mem.h"
#include "ops/op_ids.h"
#include "parser/parser.h"
#include "runtime/tensor.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "tests/unit/unit_run.h"

#define HDR "#[version = \"0.0.5\"]\n"

/* Parses, checks, lowers and runs @main; returns the printed value (malloc'ed)
 * and, when `dump` is non-NULL, the bytecode listing. Aborts on failure. */
static char *run(const char *text, char **dump) {
  Source *src = source_new("t.relay", mem_strdup(text), strlen(text));
  char *errs = NULL;
  size_t errlen = 0;
  FILE *errf = open_memstream(&errs, &errlen);
  Diag d;
  diag_init(&d, errf, src);
  Module *m = parse_module(src, &d);
  if (d.nerrors == 0) resolve_module(m, &d);
  if (d.nerrors == 0) infer_module(m, &d);
  fflush(errf);
  if (d.nerrors) ck_abort_msg("front end failed:\n%s", errs);
  Program *p = lower_module(m, &d);
  ck_assert_ptr_nonnull(p);
  if (dump) {
    size_t len = 0;
    FILE *f = open_memstream(dump, &len);
    program_dump(f, p);
    fclose(f);
  }
  Value result = value_none();
  int rc = vm_run(p, p->codes[program_global(p, "main")], NULL, 0, &result, &d, NULL);
  fflush(errf);
  if (rc != VM_OK) ck_abort_msg("run failed:\n%s", errs);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  value_print(f, &result);
  fclose(f);
  value_release(result);
  program_free(p);
  module_free(m);
  source_free(src);
  fclose(errf);
  free(errs);
  ck_assert_int_eq(value_live_objects(), 0); /* clear lists released everything */
  value_heap_shutdown();
  return out;
}

static void expect(const char *text, const char *want) {
  char *got = run(text, NULL);
  ck_assert_str_eq(got, want);
  free(got);
}

/* Runs text and checks that its listing contains `needle`. */
static void expect_code(const char *text, const char *want, const char *needle) {
  char *dump = NULL;
  char *got = run(text, &dump);
  ck_assert_str_eq(got, want);
  if (!strstr(dump, needle)) ck_abort_msg("listing lacks '%s':\n%s", needle, dump);
  free(dump);
  free(got);
}

/* Direct calls of function literals with no other use (FuseOps' Primitive=1
 * groups) are lowered in place: no CLOSURE, no call frame. */
static void expect_no_closure(const char *text, const char *want, bool closure) {
  char *dump = NULL;
  char *got = run(text, &dump);
  ck_assert_str_eq(got, want);
  if ((strstr(dump, "CLOSURE") != NULL) != closure)
    ck_abort_msg("listing %s CLOSURE:\n%s", closure ? "lacks" : "has", dump);
  free(dump);
  free(got);
}

START_TEST(literal_calls_inline) {
  expect_no_closure(HDR "def @main() {\n"
                        "  %0 = fn (%p0: Tensor[(2), float32], %p1: float32, Primitive=1) { add(%p0, %p1) };\n"
                        "  %1 = fn (%p0: Tensor[(2), float32], Primitive=1) { exp(%p0) };\n"
                        "  %1(%0(zeros(shape=[2], dtype=\"float32\"), 0f))\n"
                        "}",
                    "[1f, 1f]", false);
  /* nested literals, a parameter used twice, a node shared with the outer body */
  expect_no_closure(HDR "def @main() -> (int32, int32) {\n"
                        "  %0 = add(3, 1);\n"
                        "  %1 = fn (%a: int32) { %2 = fn (%b: int32) { multiply(%b, %b) }; add(%2(%a), %0) };\n"
                        "  (%1(%0), %0)\n"
                        "}",
                    "(20, 4)", false);
  /* in tail position of a recursive function */
  expect_no_closure(HDR "def @loop(%n: int32, %acc: int32) -> int32 {\n"
                        "  if (%n == 0) { %acc } else { (fn (%a: int32, %b: int32) { @loop(%a - 1, %b + %a) })(%n, %acc) }\n"
                        "}\n"
                        "def @main() -> int32 { @loop(1000, 0) }",
                    "500500", false);
  /* a literal that is also a value, or called twice, stays a closure */
  expect_no_closure(HDR "def @main() -> (int32, int32) {\n"
                        "  %0 = fn (%x: int32) { add(%x, 1) };\n"
                        "  (%0(1), %0(2))\n"
                        "}",
                    "(2, 3)", true);
  expect_no_closure(HDR "def @main() {\n"
                        "  %0 = fn (%x: int32) { add(%x, 1) };\n"
                        "  (%0(1), %0)\n"
                        "}",
                    "(2, <closure>)", true);
}
END_TEST

START_TEST(int32_wraps) {
  /* register-register, register-immediate and immediate-on-the-left forms */
  expect_code(HDR "def @f(%x: int32, %y: int32) -> int32 { %x + %y }\n"
                  "def @main() -> int32 { @f(2147483647, 1) }",
              "-2147483648", "ADDII");
  expect_code(HDR "def @f(%x: int32) -> int32 { %x + 1 }\ndef @main() -> int32 { @f(2147483647) }",
              "-2147483648", "ADDIK     1 0 0 #1");
  expect_code(HDR "def @f(%x: int32) -> int32 { %x - 1 }\ndef @main() -> int32 { @f(-2147483648) }",
              "2147483647", "SUBIK");
  expect_code(HDR "def @f(%x: int32) -> int32 { 65536 * %x }\ndef @main() -> int32 { @f(65536) }", "0",
              "MULIK     1 0 0 #65536");
  expect_code(HDR "def @f(%x: int32, %y: int32) -> int32 { %x * %y }\n"
                  "def @main() -> int32 { @f(-2147483648, -1) }",
              "-2147483648", "MULII");
  /* an immediate on the left of a subtraction stays generic */
  expect_code(HDR "def @f(%x: int32) -> int32 { 10 - %x }\ndef @main() -> int32 { @f(-2147483647) }",
              "-2147483639", "SUB       1 0 K0 0!");
}
END_TEST

START_TEST(int32_compares) {
  expect_code(HDR "def @f(%x: int32, %y: int32) -> (bool, bool, bool, bool, bool, bool) {\n"
                  "  (%x < %y, %x <= %y, %x > %y, %x >= %y, %x == %y, %x != %y)\n"
                  "}\n"
                  "def @main() -> ((bool, bool, bool, bool, bool, bool), (bool, bool, bool, bool, bool, bool)) {\n"
                  "  (@f(-1, 1), @f(3, 3))\n"
                  "}",
              "((True, True, False, False, False, True), (False, True, False, True, True, False))", "LTII");
  /* a constant on the left flips the comparison: 5 < x is x > 5 */
  expect_code(HDR "def @f(%x: int32) -> (bool, bool) { (5 < %x, 5 >= %x) }\n"
                  "def @main() -> ((bool, bool), (bool, bool)) { (@f(6), @f(5)) }",
              "((True, False), (False, True))", "GTIK");
}
END_TEST

START_TEST(fused_branches) {
  const char *prog = HDR "def @f(%x: int32) -> int32 {\n"
                         "  if (%x < 0) { 1 } else { if (%x == 0) { 2 } else { if (0 >= %x) { 9 } else { 3 } } }\n"
                         "}\n"
                         "def @main() -> (int32, int32, int32) { (@f(-5), @f(0), @f(7)) }";
  expect_code(prog, "(1, 2, 3)", "JLTIK");
  expect_code(prog, "(1, 2, 3)", "JEQIK");
  expect_code(prog, "(1, 2, 3)", "JLEIK"); /* 0 >= x  is  x <= 0 */
  /* a comparison whose result is also used later is not fused */
  expect_code(HDR "def @f(%x: int32) -> (int32, bool) {\n"
                  "  let %c = %x < 2;\n"
                  "  (if (%c) { 1 } else { 0 }, %c)\n"
                  "}\n"
                  "def @main() -> (int32, bool) { @f(1) }",
              "(1, True)", "0 LTIK      1 0 0 #2");
}
END_TEST

START_TEST(float32_paths) {
  /* float32 rounding of the result: 2^24 + 1 is not representable */
  expect_code(HDR "def @f(%x: float32) -> float32 { %x + 1f }\ndef @main() -> float32 { @f(16777216f) }",
              "16777216f", "ADDFK");
  expect(HDR "def @f(%x: float32, %y: float32) -> float32 { %x * %y - %x }\n"
             "def @main() -> float32 { @f(1.1f, 3.3f) }",
         "2.5300002f"); /* float32: (1.1f * 3.3f rounded) - 1.1f, rounded */
  expect(HDR "def @f(%x: float32) -> float32 { 4f * %x }\ndef @main() -> float32 { @f(1e38f) }", "inff");
  /* the sum rounds to float32 once: 0.1f + 0.2f prints as float32 */
  expect(HDR "def @f(%x: float32, %y: float32) -> float32 { %x + %y }\ndef @main() -> float32 { @f(0.1f, 0.2f) }",
         "0.3f");
}
END_TEST

START_TEST(nan_compares_are_ordered) {
  /* NaN: every comparison is False, including not_equal (spec/ops.md) */
  const char *prog =
      HDR "def @f(%x: float32, %y: float32) -> (bool, bool, bool, bool, bool, bool) {\n"
          "  (%x < %y, %x <= %y, %x > %y, %x >= %y, %x == %y, %x != %y)\n"
          "}\n"
          "def @g(%x: float32) -> (bool, bool, bool, bool) { (%x < 1f, %x >= 1f, %x == 1f, %x != 1f) }\n"
          "def @b(%x: float32) -> (int32, int32, int32) {\n"
          "  (if (%x != %x) { 1 } else { 0 }, if (%x < 1f) { 1 } else { 0 }, if (%x == %x) { 1 } else { 0 })\n"
          "}\n"
          "def @main() -> ((bool, bool, bool, bool, bool, bool), (bool, bool, bool, bool), (int32, int32, int32), "
          "(int32, int32, int32)) {\n"
          "  let %nan = 0f / 0f;\n"
          "  (@f(%nan, %nan), @g(%nan), @b(%nan), @b(0.5f))\n"
          "}";
  expect_code(prog,
              "((False, False, False, False, False, False), (False, False, False, False), (0, 0, 0), (0, 1, 1))",
              "JNEFF");
  expect_code(prog,
              "((False, False, False, False, False, False), (False, False, False, False), (0, 0, 0), (0, 1, 1))",
              "NEFK");
}
END_TEST

START_TEST(other_dtypes_stay_generic) {
  expect(HDR "def @f(%x: int64, %y: uint8) -> (int64, uint8, bool) {\n"
             "  (%x + 1i64, %y * cast(2, dtype=\"uint8\"), %x < 0i64)\n"
             "}\n"
             "def @main() -> (int64, uint8, bool) { @f(9223372036854775807i64, cast(200, dtype=\"uint8\")) }",
         "(-9223372036854775808i64, 144u8, False)");
  expect(HDR "def @f(%x: float64) -> float64 { %x * 0.5f64 }\ndef @main() -> float64 { @f(3f64) }", "1.5f64");
}
END_TEST

START_TEST(cast_fast_path) {
  expect(HDR "def @f(%x: int32, %y: float32) -> (float32, int32, int8, bool, uint8) {\n"
             "  (cast(%x, dtype=\"float32\"), cast(%y, dtype=\"int32\"), cast(%y, dtype=\"int8\"),\n"
             "   cast(%y, dtype=\"bool\"), cast(%x, dtype=\"uint8\"))\n"
             "}\n"
             "def @main() -> (float32, int32, int8, bool, uint8) { @f(258, -1000.75f) }",
         "(258f, -1000, -128i8, True, 2u8)");
}
END_TEST

/* A program built by hand: R0 holds a rank-0 int32 TENSOR (not an immediate),
 * so the typed instructions must fall back to the operator call. */
START_TEST(typed_fallback_on_heap_scalar) {
  for (int fused = 0; fused < 2; fused++) {
    uint32_t V = (uint32_t)sizeof(Value);
    /* @f(%x) = if (%x < 10) { %x + 5 } else { 0 }, as  JLTIK/LTIK; JMPF; ADDIK; RET; LOADK; RET */
    uint32_t ins[] = {fused ? I_JLTIK : I_LTIK, 1 * V, 0, 0 * V, 10, I_JMPF, 1 | ARG_MOVE, 16,
                      I_ADDIK, 2 * V, 1, 0 * V, 5, I_RET, 2 | ARG_MOVE, 0,
                      I_LOADK, 2, 0, I_RET, 2 | ARG_MOVE, 0};
    uint32_t clears[] = {1, 0};
    Value consts[] = {value_i32(0)};
    OpCall ops[] = {{.op = OP_LESS, .cast_to = DT_I32}, {.op = OP_ADD, .cast_to = DT_I32}};
    Code c = {.name = "@f", .nparams = 1, .self_reg = -1, .nregs = 3, .ins = ins,
              .nins = (uint32_t)(sizeof ins / sizeof ins[0]), .consts = consts, .nconsts = 1,
              .ops = ops, .nops = 2, .clears = clears, .nclears = 2};
    Code *codes[] = {&c};
    Program p = {.codes = codes, .ncodes = 1, .nglobals = 1};
    Diag d;
    diag_init(&d, NULL, NULL);
    for (int32_t x = 8; x <= 12; x += 4) {
      Tensor *t = tensor_new_scalar_i32(x);
      Value arg = {VK_TENSOR, 0, {.t = t}};
      Value r = value_none();
      ck_assert_int_eq(vm_run(&p, &c, &arg, 1, &r, &d, NULL), VM_OK);
      ck_assert_uint_eq(r.tag, TAG_I32);
      ck_assert_int_eq(r.i, x < 10 ? x + 5 : 0);
    }
  }
}
END_TEST

START_TEST(self_tail_calls) {
  /* plain argument moves become TSELF; a swap of parameters does not */
  expect_code(HDR "def @loop(%i: int32, %acc: int32) -> int32 {\n"
                  "  if (%i == 0) { %acc } else { @loop(%i - 1, %acc + %i) }\n"
                  "}\n"
                  "def @main() -> int32 { @loop(100000, 0) }",
              "705082704", "TSELF1    {} 1 0 2"); /* acc + i computed in place; only i - 1 is copied */
  /* two copies: TSELFM */
  expect_code(HDR "def @p(%a: int32, %b: int32, %c: int32, %n: int32) -> (int32, int32, int32) {\n"
                  "  if (%n == 0) { (%a, %b, %c) } else { @p(%a + %b, %b - %a, %a * %b, %n - 1) }\n"
                  "}\n"
                  "def @main() -> (int32, int32, int32) { @p(1, 2, 0, 3) }",
              "(2, -6, -8)", "TSELFM    {} 2 0 4 1 5");
  expect_code(HDR "def @swap(%n: int32, %a: int32, %b: int32) -> (int32, int32) {\n"
                  "  if (%n == 0) { (%a, %b) } else { @swap(%n - 1, %b, %a) }\n"
                  "}\n"
                  "def @main() -> ((int32, int32), (int32, int32)) { (@swap(3, 1, 2), @swap(4, 1, 2)) }",
              "((2, 1), (1, 2))", "TCALLG");
  /* heap arguments and an argument left in place */
  expect_code(HDR "type List[A] { Cons(A, List[A]), Nil }\n"
             "def @len(%k: int32, %xs: List[int32], %acc: int32) -> int32 {\n"
             "  match (%xs) { Cons(_, %rest) => @len(%k, %rest, %acc + %k), Nil => %acc }\n"
             "}\n"
             "def @build(%n: int32, %acc: List[int32]) -> List[int32] {\n"
             "  if (%n == 0) { %acc } else { @build(%n - 1, Cons(%n, %acc)) }\n"
             "}\n"
             "def @main() -> int32 { @len(2, @build(1000, Nil), 0) }",
         "2000", "FIELD     1 1! 1"); /* %rest lands in its parameter: the call copies nothing */
  /* calls: copy-only CALLGI for immediate arguments, CALLG for heap ones */
  expect_code(HDR "def @fib(%n: int32) -> int32 { if (%n < 2) { %n } else { @fib(%n - 1) + @fib(%n - 2) } }\n"
                  "def @main() -> int32 { @fib(20) }",
              "6765", "CALLGI    2 0 1 3!");
  expect_code(HDR "def @fst(%t: (int32, int32)) -> int32 { %t.0 }\n"
                  "def @main() -> int32 { let %t = (4, 5); @fst(%t) + @fst(%t) }",
              "8", "CALLG     ");
}
END_TEST

START_TEST(self_call_arguments_in_place) {
  /* the new %zr is computed before %zi' reads the old one: it stays a copy,
   * while %zi', %k' are computed into their parameters */
  expect_code(HDR "def @it(%zr: float32, %zi: float32, %k: int32) -> (float32, float32) {\n"
                  "  if (%k == 0) { (%zr, %zi) } else { @it(%zr * 0.5f + %zi, %zi - %zr, %k - 1) }\n"
                  "}\n"
                  "def @main() -> (float32, float32) { @it(1f, 2f, 3) }",
              "(-0.375f, -3.75f)", "TSELF1    {} 1 0 3");
  /* an argument whose parameter another argument reads is not retargeted */
  expect(HDR "def @rot(%a: int32, %b: int32, %c: int32, %n: int32) -> (int32, int32, int32) {\n"
             "  if (%n == 0) { (%a, %b, %c) } else { @rot(%b + 0, %c * 1, %a - 0, %n - 1) }\n"
             "}\n"
             "def @main() -> (int32, int32, int32) { @rot(1, 2, 3, 4) }",
         "(2, 3, 1)");
  /* a heap value built for a parameter while a later argument still reads it */
  expect(HDR "type List[A] { Cons(A, List[A]), Nil }\n"
             "def @sum(%xs: List[int32]) -> int32 { match (%xs) { Cons(%x, %r) => %x + @sum(%r), Nil => 0 } }\n"
             "def @f(%xs: List[int32], %n: int32, %t: int32) -> int32 {\n"
             "  if (%n == 0) { %t } else { @f(Cons(%n, %xs), %n - 1, %t + @sum(%xs)) }\n"
             "}\n"
             "def @main() -> int32 { @f(Nil, 5, 0) }",
         "40"); /* 0 + 5 + 9 + 12 + 14 */
}
END_TEST

START_TEST(fused_pairs) {
  /* every second operator, the temporary on either side, immediates */
  expect_code(HDR "def @f(%a: int32, %b: int32, %c: int32) -> (int32, int32, int32, int32, int32, int32) {\n"
                  "  (%a * %b + %c, %a * %b - %c, %c - %a * %b, (%a - %b) * %c, %a + 7 - 100, 3 - (%a + 1))\n"
                  "}\n"
                  "def @main() -> (int32, int32, int32, int32, int32, int32) { @f(6, 7, 100) }",
              "(142, -58, 58, -100, -87, -4)", "FIMULRSUB");
  /* int32 wrap-around in both steps */
  expect_code(HDR "def @f(%a: int32, %b: int32) -> int32 { %a * %b + %a }\n"
                  "def @main() -> int32 { @f(65536, 65536) }",
              "65536", "FIMULADD");
  /* float32 (nested calls become FX trees; let-bound temporaries still
   * fuse): each step rounds (3f * (1f/3f) is 1f in float32, so the
   * difference is 0) */
  expect_code(HDR "def @f(%a: float32, %b: float32) -> float32 { let %t = %a * %b; %t - 1f }\n"
                  "def @main() -> float32 { @f(3f, 0.33333334f) }",
              "0f", "FFMULSUB");
  expect_code(HDR "def @f(%a: float32, %b: float32) -> float32 { let %t = %a + 1e-8f; %b - %t }\n"
                  "def @main() -> float32 { @f(1.5f, 1f) }",
              "-0.5f", "FFADDRSUB");
  /* a temporary read twice or kept alive is not fused away */
  expect(HDR "def @f(%a: int32) -> (int32, int32) { let %t = %a + 1; (%t * %t, %t) }\n"
             "def @main() -> (int32, int32) { @f(4) }",
         "(25, 5)");
}
END_TEST

/* Fused pairs on a rank-0 int32 TENSOR fall back to the two operator calls;
 * on a value that is not a tensor the second call's span is reported. */
START_TEST(fused_fallback) {
  uint32_t V = (uint32_t)sizeof(Value);
  /* @f(%x) = %x * 3 + %x  as  FIMULADD; RET */
  uint32_t ins[] = {I_FIMULADD, 1 * V, 0, 1, 0 * V, 0 * V + 1, 0 * V, 0, 0, 0, I_RET, 1 | ARG_MOVE, 0};
  uint32_t clears[] = {1, 0};
  Value consts[] = {value_i32(3)};
  OpCall ops[] = {{.op = OP_MULTIPLY, .cast_to = DT_I32}, {.op = OP_ADD, .cast_to = DT_I32}};
  SpanEntry spans[] = {{0, {10, 11}}, {5, {20, 21}}, {10, {30, 31}}};
  Code c = {.name = "@f", .nparams = 1, .self_reg = -1, .nregs = 2, .ins = ins,
            .nins = (uint32_t)(sizeof ins / sizeof ins[0]), .consts = consts, .nconsts = 1,
            .ops = ops, .nops = 2, .spans = spans, .nspans = 3, .clears = clears, .nclears = 2};
  Code *codes[] = {&c};
  Program p = {.codes = codes, .ncodes = 1, .nglobals = 1};
  const char *text = "0123456789\n0123456789\n0123456789\n0123456789\n";
  Source *src = source_new("t.relay", mem_strdup(text), strlen(text));
  char *errs = NULL;
  size_t errlen = 0;
  FILE *errf = open_memstream(&errs, &errlen);
  Diag d;
  diag_init(&d, errf, src);
  Value arg = {VK_TENSOR, 0, {.t = tensor_new_scalar_i32(5)}};
  Value r = value_none();
  ck_assert_int_eq(vm_run(&p, &c, &arg, 1, &r, &d, NULL), VM_OK);
  ck_assert_uint_eq(r.tag, TAG_I32);
  ck_assert_int_eq(r.i, 20);
  /* 3 * 3 + (): the addition fails, at the second instruction's span */
  ins[4] = ins[5] = 0 * V + 1;
  arg = value_tuple_new(0);
  ck_assert_int_eq(vm_run(&p, &c, &arg, 1, &r, &d, NULL), VM_ERROR);
  ck_assert_int_eq(d.nerrors, 1);
  fflush(errf);
  if (!strstr(errs, "t.relay:2:10")) ck_abort_msg("wrong error location:\n%s", errs);
  fclose(errf);
  free(errs);
  source_free(src);
  ck_assert_int_eq(value_live_objects(), 0);
  value_heap_shutdown();
}
END_TEST

START_TEST(float32_trees) {
  /* every form; results as the unfused instructions give them (float32
   * rounding after each operation) */
  const char *prog =
      HDR "def @f(%a: float32, %b: float32, %c: float32, %d: float32) -> (float32, float32, float32, float32, float32, bool, int32) {\n"
          "  (%a * %b - %c * %d, 2f * %a * %b + %c, 10f - %a * %b, %c - %a * (%b + %d),\n"
          "   (%a + %b) * (%c - %d) - (%a * %d + %b * %c) * 0.1f, %a * %b < %c, if (%a * %a + %b * %b > 4f) { 1 } else { 0 })\n"
          "}\n"
          "def @main() -> ((float32, float32, float32, float32, float32, bool, int32), (float32, float32, float32, float32, float32, bool, int32)) {\n"
          "  (@f(1.1f, 3.3f, 1.3f, 2.2f), @f(0.1f, 0.7f, 16777216f, 3.3333333f))\n"
          "}";
  const char *want = "((0.7700002f, 8.56f, 6.37f, -4.75f, -4.6310005f, False, 1), "
                     "(-55924052f, 16777216f, 9.93f, 16777216f, 12247366f, True, 0))";
  /* the adjacent trees become one trace (FXB) starting at the first */
  expect_code(prog, want, "{F R0 R1 R2 R3 I; mul R0 R1; push mul R2 R3; sub S A >R5; mul #2 R0;");
  expect_code(prog, want, "; mul #2 R0; mul A R1; add A R2 >R6;");
  expect_code(prog, want, "; mul R0 R1; sub #10 A >R7;");
  expect_code(prog, want, "; add R1 R3; mul R0 A; sub R2 A >R8;");
  expect_code(prog, want, "FXC       10 67 3 0 1 2 [mul R0 R1; lt A R2]");
  expect_code(prog, want, "FXJ       12 74 2 0 1 [mul R0 R0; push mul R1 R1; add S A; gt A #4]");
  /* deeper than FX_STACK: the subtrees become trees of their own */
  expect_code(HDR "def @g(%x: float32) -> float32 {\n"
                  "  %x * 1.1f + (%x * 1.2f + (%x * 1.3f + (%x * 1.4f + (%x * 1.5f + %x * 1.6f))))\n"
                  "}\n"
                  "def @main() -> float32 { @g(0.3f) }",
              "2.43f", "push mul R0 #1.6; add S A; add S A; add S A; add S A >R3");
  /* more than FX_MAX_NODES nodes; NaN comparisons stay ordered */
  char text[2048];
  int at = snprintf(text, sizeof text, HDR "def @h(%%s: float32) -> float32 { %%s * 0.1f");
  for (int i = 2; i <= 30; i++) at += snprintf(text + at, sizeof text - (size_t)at, " + %%s * 0.%df", i);
  snprintf(text + at, sizeof text - (size_t)at, " }\ndef @main() -> float32 { @h(0.1f) }");
  expect(text, "0.87f");
  expect_code(HDR "def @f(%x: float32) -> (bool, bool) { (%x * 0f != %x * 0f, %x * 0f == %x * 0f) }\n"
                  "def @main() -> ((bool, bool), (bool, bool)) { (@f(1f / 0f), @f(2f)) }",
              "((False, False), (False, True))", "[mul R0 #0; push mul R0 #0; ne S A]");
}
END_TEST

START_TEST(float32_traces) {
  /* mandelbrot's loop: the int32 test, the float32 test, both new values,
   * k + 1 and the self call run as one trace that loops without leaving */
  const char *prog =
      HDR "def @it(%cr: float32, %ci: float32, %zr: float32, %zi: float32, %k: int32) -> int32 {\n"
          "  if (%k == 50) { 1 } else {\n"
          "    if (%zr * %zr + %zi * %zi > 4f) { 0 - %k } else {\n"
          "      @it(%cr, %ci, %zr * %zr - %zi * %zi + %cr, 2f * %zr * %zi + %ci, %k + 1)\n"
          "    }\n"
          "  }\n"
          "}\n"
          "def @main() -> (int32, int32, int32) { (@it(0.3f, 0.5f, 0f, 0f, 0), @it(-0.75f, 0.1f, 0f, 0f, 0), @it(0.4f, 0.4f, 0f, 0f, 0)) }";
  expect_code(prog, "(1, -33, -9)",
              "{F R2 R3 R0 R1 I R4; ieq R4 #50 ?1>8; mul R2 R2; push mul R3 R3; add S A; gt A #4 ?1>23;");
  expect_code(prog, "(1, -33, -9)", "add A R1 >R3; iadd >R4 R4 #1; R5>R2; loop 0}");
}
END_TEST

/* A hand-built FX: on a leaf that is a rank-0 float32 TENSOR the tree runs
 * through the operator calls; a failing node reports its own span. */
START_TEST(fx_fallback) {
  uint32_t V = (uint32_t)sizeof(Value);
  /* @f(%x) = (%x * 3f) - (%x * %x)  as  FX; RET */
  uint32_t ins[] = {I_FX, 1 * V, 0, 1, 0 * V, I_RET, 1 | ARG_MOVE, 0};
  float three = 3.0f;
  uint32_t kb;
  memcpy(&kb, &three, sizeof kb);
  uint32_t xprog[] = {FX_LK | FXO_MUL << 4, 0, 0 * V, kb,
                      FX_LL | FXO_MUL << 4 | FX_PUSH, 1, 0 * V, 0 * V,
                      FX_SA | FXO_SUB << 4, 2, FX_END};
  uint32_t clears[] = {1, 0};
  OpCall ops[] = {{.op = OP_MULTIPLY, .cast_to = DT_I32, .span = {10, 11}},
                  {.op = OP_MULTIPLY, .cast_to = DT_I32, .span = {20, 21}},
                  {.op = OP_SUBTRACT, .cast_to = DT_I32, .span = {30, 31}}};
  SpanEntry spans[] = {{0, {0, 1}}, {5, {40, 41}}};
  Code c = {.name = "@f", .nparams = 1, .self_reg = -1, .nregs = 2, .ins = ins,
            .nins = (uint32_t)(sizeof ins / sizeof ins[0]), .ops = ops, .nops = 3, .spans = spans,
            .nspans = 2, .clears = clears, .nclears = 2, .xprog = xprog, .nxprog = 11};
  Code *codes[] = {&c};
  Program p = {.codes = codes, .ncodes = 1, .nglobals = 1};
  const char *text = "0123456789\n0123456789\n0123456789\n0123456789\n";
  Source *src = source_new("t.relay", mem_strdup(text), strlen(text));
  char *errs = NULL;
  size_t errlen = 0;
  FILE *errf = open_memstream(&errs, &errlen);
  Diag d;
  diag_init(&d, errf, src);
  Value arg = value_f32(1.5f), r = value_none();
  ck_assert_int_eq(vm_run(&p, &c, &arg, 1, &r, &d, NULL), VM_OK); /* fast path */
  ck_assert_uint_eq(r.tag, TAG_F32);
  ck_assert(value_f32_of(&r) == 2.25f && r.f == 2.25);
  arg = (Value){VK_TENSOR, 0, {.t = tensor_new_scalar_f32(1.5f)}};
  ck_assert_int_eq(vm_run(&p, &c, &arg, 1, &r, &d, NULL), VM_OK); /* generic path */
  ck_assert_uint_eq(r.tag, TAG_F32);
  ck_assert(value_f32_of(&r) == 2.25f && r.f == 2.25);
  /* () * 3f fails at the first node's span (line 2, column 1) */
  arg = value_tuple_new(0);
  ck_assert_int_eq(vm_run(&p, &c, &arg, 1, &r, &d, NULL), VM_ERROR);
  ck_assert_int_eq(d.nerrors, 1);
  fflush(errf);
  if (!strstr(errs, "t.relay:1:11")) ck_abort_msg("wrong error location:\n%s", errs);
  fclose(errf);
  free(errs);
  source_free(src);
  ck_assert_int_eq(value_live_objects(), 0);
  value_heap_shutdown();
}
END_TEST

START_TEST(memo_registers_reset_per_iteration) {
  /* a shared node (memo register) inside a self-tail-recursive loop is
   * recomputed on every iteration */
  expect(HDR "def @loop(%i: int32, %acc: int32) -> int32 {\n"
             "  %0 = add(%i, 1);\n"
             "  if (%i == 0) { %acc } else { @loop(%i - 1, add(%acc, multiply(%0, %0))) }\n"
             "}\n"
             "def @main() -> int32 { @loop(3, 0) }",
         "29"); /* 4*4 + 3*3 + 2*2 */
}
END_TEST

START_TEST(clear_lists_release_dead_values) {
  /* %dead's register (a tuple, never read) is reused by the fused comparison;
   * the return must still release it (run() asserts no live objects) */
  expect(HDR "def @f(%x: int32) -> int32 {\n"
             "  let %a = { let %dead = (1, (2, 3)); 5 };\n"
             "  if (%x < %a) { 1 } else { 2 }\n"
             "}\n"
             "def @g(%n: int32, %acc: int32) -> int32 { if (%n == 0) { %acc } else { @g(%n - 1, %acc + @f(%n)) } }\n"
             "def @main() -> int32 { @g(10, 0) }",
         "16");
  /* values alive on one branch only, closures and tuples through tail calls */
  expect(HDR "def @h(%n: int32, %t: (int32, int32), %f: fn (int32) -> int32) -> int32 {\n"
             "  if (%n == 0) { %f(%t.0) } else { @h(%n - 1, (%t.1, %t.0 + 1), fn (%y: int32) -> int32 { %f(%y) + %n }) }\n"
             "}\n"
             "def @main() -> int32 { @h(5, (0, 10), fn (%y: int32) -> int32 { %y }) }",
         "27");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("vmfast");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, int32_wraps);
  tcase_add_test(tc, int32_compares);
  tcase_add_test(tc, fused_branches);
  tcase_add_test(tc, float32_paths);
  tcase_add_test(tc, nan_compares_are_ordered);
  tcase_add_test(tc, other_dtypes_stay_generic);
  tcase_add_test(tc, cast_fast_path);
  tcase_add_test(tc, typed_fallback_on_heap_scalar);
  tcase_add_test(tc, self_tail_calls);
  tcase_add_test(tc, self_call_arguments_in_place);
  tcase_add_test(tc, fused_pairs);
  tcase_add_test(tc, fused_fallback);
  tcase_add_test(tc, float32_trees);
  tcase_add_test(tc, float32_traces);
  tcase_add_test(tc, fx_fallback);
  tcase_add_test(tc, memo_registers_reset_per_iteration);
  tcase_add_test(tc, clear_lists_release_dead_values);
  tcase_add_test(tc, literal_calls_inline);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(suite());
}
