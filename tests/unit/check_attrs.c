/* tests/unit/check_attrs.c — ir/attrs.c: shortest doubles, canonical printing,
 * parsing (round trips and malformed text), equality, attrs_get. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ast.h"
#include "ir/attrs.h"
#include "ir/mem.h"
#include "tests/unit/unit_run.h"

static Module *mod;

static void setup(void) { mod = module_new(NULL); }
static void teardown(void) { module_free(mod); }

/* The canonical text of v (caller frees). */
static char *to_text(const AttrValue *v) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  attr_value_print(f, v);
  fclose(f);
  return buf;
}

static void assert_prints(const AttrValue *v, const char *want) {
  char *got = to_text(v);
  ck_assert_str_eq(got, want);
  free(got);
}

/* Parsing `text` succeeds and printing gives it back unchanged. */
static void assert_round_trip(const char *text) {
  AttrValue *v = attr_value_parse(mod, text);
  ck_assert_msg(v != NULL, "failed to parse %s", text);
  assert_prints(v, text);
}

static const char *fsd(double v, bool as_float) {
  static char buf[32];
  return format_shortest_double(v, as_float, buf);
}

START_TEST(shortest_double) {
  ck_assert_str_eq(fsd(1e-05, false), "1e-05");
  ck_assert_str_eq(fsd(0.5, false), "0.5");
  ck_assert_str_eq(fsd(2, false), "2");
  ck_assert_str_eq(fsd(1e10, false), "1e+10");
  ck_assert_str_eq(fsd(0.1, false), "0.1");
  ck_assert_str_eq(fsd(0.1, true), "0.1");
  ck_assert_str_eq(fsd((double)0.1f, true), "0.1");
  ck_assert_str_eq(fsd(1000.0, false), "1000");
  ck_assert_str_eq(fsd(1e10, true), "1e+10");
  ck_assert_str_eq(fsd((double)0.1f, false), "0.10000000149011612");
  ck_assert_str_eq(fsd(3.1415927, true), "3.1415927");
  ck_assert_str_eq(fsd(3.14159265358979, false), "3.14159265358979");
  ck_assert_str_eq(fsd(1.0 / 3.0, false), "0.3333333333333333");
  ck_assert_str_eq(fsd(0.797885, false), "0.797885");
  ck_assert_str_eq(fsd(-0.5, false), "-0.5");
  ck_assert_str_eq(fsd(-0.0, false), "-0");
  ck_assert_str_eq(fsd(1e-4, false), "0.0001");
  ck_assert_str_eq(fsd(INFINITY, false), "inf");
  ck_assert_str_eq(fsd(-INFINITY, true), "-inf");
  ck_assert_str_eq(fsd(NAN, false), "nan");
  ck_assert_str_eq(fsd(1.7976931348623157e308, false), "1.7976931348623157e+308");
  ck_assert_str_eq(fsd(4.9406564584124654e-324, false), "4.94066e-324");
}
END_TEST

START_TEST(print_scalars) {
  AttrValue *v = attr_value_new(mod, AV_INT, span_make(0, 0));
  v->i.value = 16;
  v->i.dtype = DT_I32;
  assert_prints(v, "16");
  v->i.dtype = DT_I64;
  assert_prints(v, "16i64");
  v->i.value = -3;
  v->i.dtype = DT_I16;
  assert_prints(v, "-3i16");

  AttrValue *f = attr_value_new(mod, AV_FLOAT, span_make(0, 0));
  f->f.dtype = DT_F32;
  f->f.value = 1e-05;
  assert_prints(f, "1e-05f");
  f->f.value = 2;
  assert_prints(f, "2f");
  f->f.value = -INFINITY;
  assert_prints(f, "-inff");
  f->f.value = 0.1;
  f->f.dtype = DT_F64;
  assert_prints(f, "0.1f64");
  f->f.dtype = DT_F16;
  f->f.value = 3;
  assert_prints(f, "3f16");

  AttrValue *b = attr_value_new(mod, AV_BOOL, span_make(0, 0));
  b->b = true;
  assert_prints(b, "True");
  b->b = false;
  assert_prints(b, "False");
  assert_prints(attr_value_new(mod, AV_NONE, span_make(0, 0)), "None");
  assert_prints(attr_value_new(mod, AV_ANY, span_make(0, 0)), "?");
  assert_prints(NULL, "None");

  AttrValue *m = attr_value_new(mod, AV_META, span_make(0, 0));
  m->meta.key = "relay.attrs.Conv2DAttrs";
  m->meta.index = 3;
  assert_prints(m, "meta[relay.attrs.Conv2DAttrs][3]");
}
END_TEST

START_TEST(print_strings_escaped) {
  AttrValue *s = attr_value_new(mod, AV_STRING, span_make(0, 0));
  s->s.chars = "NCHW";
  s->s.len = 4;
  assert_prints(s, "\"NCHW\"");
  s->s.chars = "a\"b\\c\td\re\nf\x01g\x7f";
  s->s.len = (uint32_t)strlen(s->s.chars);
  assert_prints(s, "\"a\\\"b\\\\c\\td\\re\\nf\\x01g\\x7f\"");
  s->s.chars = "x\0y";
  s->s.len = 3;
  assert_prints(s, "\"x\\x00y\"");
  s->s.chars = "";
  s->s.len = 0;
  assert_prints(s, "\"\"");
}
END_TEST

START_TEST(print_arrays_and_exprs) {
  AttrValue *v = attr_value_parse(mod, "[[0, 0], [1, 2]]");
  ck_assert_ptr_nonnull(v);
  assert_prints(v, "[[0, 0], [1, 2]]");
  assert_prints(attr_value_parse(mod, "[]"), "[]");

  AttrValue *e = attr_value_new(mod, AV_EXPR, span_make(0, 0));
  e->expr = expr_scalar_float(mod, DT_F32, 1.5, span_make(0, 0));
  assert_prints(e, "1.5f");
  e->expr = expr_scalar_float(mod, DT_F32, 0.1, span_make(0, 0));
  assert_prints(e, "0.1f");
  e->expr = expr_scalar_int(mod, DT_I64, 7, span_make(0, 0));
  assert_prints(e, "7i64");
  e->expr = expr_scalar_bool(mod, true, span_make(0, 0));
  assert_prints(e, "True");
  e->expr = expr_scalar_int(mod, DT_I8, 7, span_make(0, 0));
  assert_prints(e, "<expr>");
  e->expr = expr_op(mod, "add", span_make(0, 0));
  assert_prints(e, "<expr>");
}
END_TEST

START_TEST(parse_round_trips) {
  static const char *texts[] = {
      "0", "-1", "16i64", "-5i16", "2147483647", "-2147483648", "2147483648i64",
      "-9223372036854775808i64", "1e-05f", "0.5f", "2f", "-0.5f", "1e+10f", "0.1f64",
      "2.5f16", "inff", "-inff", "nanf", "True", "False", "None", "?", "\"NCHW\"", "\"\"",
      "\"a\\\"b\\\\c\\x01\\n\"", "[1, 1]", "[]", "[[0, 0], [2, 2]]", "[0f, 0f, 0f, 0f]",
      "[1, None, ?]", "meta[relay.Constant][12]", "[meta[tir.SizeVar][0], 3]",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) assert_round_trip(texts[i]);
}
END_TEST

START_TEST(parse_values) {
  AttrValue *v = attr_value_parse(mod, "2147483648");
  ck_assert_int_eq(v->kind, AV_INT);
  ck_assert(dtype_eq(v->i.dtype, DT_I64)); /* unsuffixed out of int32: int64 */
  v = attr_value_parse(mod, "42");
  ck_assert(dtype_eq(v->i.dtype, DT_I32));
  ck_assert_int_eq(v->i.value, 42);
  v = attr_value_parse(mod, "42i32");
  ck_assert(dtype_eq(v->i.dtype, DT_I32));
  v = attr_value_parse(mod, "3f32");
  ck_assert_int_eq(v->kind, AV_FLOAT);
  ck_assert(dtype_eq(v->f.dtype, DT_F32));
  ck_assert(v->f.value == 3.0);
  v = attr_value_parse(mod, "-inff");
  ck_assert(isinf(v->f.value) && v->f.value < 0);
  v = attr_value_parse(mod, "nullptr");
  ck_assert_int_eq(v->kind, AV_NONE);
  v = attr_value_parse(mod, "  [ 1 ,2,  3 ]  ");
  ck_assert_int_eq(v->kind, AV_ARRAY);
  ck_assert_uint_eq(v->arr.n, 3);
  ck_assert_int_eq(v->arr.items[2]->i.value, 3);
  v = attr_value_parse(mod, "\"a\\tb\\x41\\q\"");
  ck_assert_int_eq(v->kind, AV_STRING);
  ck_assert_uint_eq(v->s.len, 6);
  ck_assert(memcmp(v->s.chars, "a\tbA\\q", 6) == 0); /* unknown escape keeps the backslash */
}
END_TEST

START_TEST(parse_malformed) {
  static const char *bad[] = {
      "", "   ", "[1, 2", "[1 2]", "[1,]", "1.5", "1e3", "1i8", "1f8", "32768i16",
      "2147483648i32", "9223372036854775808", "-9223372036854775809i64", "1.2.3f",
      "\"abc", "Truex", "1 2", "meta[x]", "meta[][0]", "meta[k][x]", "abc", "-", "1x",
      "1e999f", "]", "[[1], [2]", "--1",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(attr_value_parse(mod, bad[i]) == NULL, "accepted %s", bad[i]);
  ck_assert_ptr_null(attr_value_parse(mod, NULL));
}
END_TEST

START_TEST(parse_deep_nesting_rejected) {
  char text[2 * 200 + 2];
  memset(text, '[', 200);
  memset(text + 200, ']', 200);
  text[400] = 0;
  ck_assert_ptr_null(attr_value_parse(mod, text));
  /* 20 levels are fine */
  char ok[41];
  memset(ok, '[', 20);
  memset(ok + 20, ']', 20);
  ok[40] = 0;
  assert_round_trip(ok);
}
END_TEST

START_TEST(equality) {
  ck_assert(attr_value_equal(attr_value_parse(mod, "1"), attr_value_parse(mod, "1i64")));
  ck_assert(!attr_value_equal(attr_value_parse(mod, "1"), attr_value_parse(mod, "2")));
  ck_assert(!attr_value_equal(attr_value_parse(mod, "1"), attr_value_parse(mod, "1f")));
  ck_assert(attr_value_equal(attr_value_parse(mod, "0.5f"), attr_value_parse(mod, "0.5f64")));
  ck_assert(attr_value_equal(attr_value_parse(mod, "nanf"), attr_value_parse(mod, "nanf")));
  ck_assert(!attr_value_equal(attr_value_parse(mod, "0f"), attr_value_parse(mod, "-0f")));
  ck_assert(attr_value_equal(attr_value_parse(mod, "[1, [2, 3]]"), attr_value_parse(mod, "[1, [2, 3]]")));
  ck_assert(!attr_value_equal(attr_value_parse(mod, "[1, 1]"), attr_value_parse(mod, "[1, 1, 1]")));
  ck_assert(!attr_value_equal(attr_value_parse(mod, "[1, 1]"), attr_value_parse(mod, "[1, 2]")));
  ck_assert(attr_value_equal(attr_value_parse(mod, "\"\""), attr_value_parse(mod, "\"\"")));
  ck_assert(!attr_value_equal(attr_value_parse(mod, "\"NCHW\""), attr_value_parse(mod, "\"NHWC\"")));
  ck_assert(attr_value_equal(attr_value_parse(mod, "None"), attr_value_parse(mod, "None")));
  ck_assert(!attr_value_equal(attr_value_parse(mod, "None"), attr_value_parse(mod, "[]")));
  ck_assert(!attr_value_equal(attr_value_parse(mod, "True"), attr_value_parse(mod, "False")));
  ck_assert(attr_value_equal(attr_value_parse(mod, "meta[a][1]"), attr_value_parse(mod, "meta[a][1]")));
  ck_assert(!attr_value_equal(attr_value_parse(mod, "meta[a][1]"), attr_value_parse(mod, "meta[b][1]")));
  ck_assert(!attr_value_equal(NULL, attr_value_parse(mod, "1")));
  ck_assert(attr_value_equal(NULL, NULL));
}
END_TEST

START_TEST(get_by_key) {
  Attr items[2] = {{"axis", attr_value_parse(mod, "1"), span_make(0, 0), false},
                   {"keepdims", attr_value_parse(mod, "True"), span_make(0, 0), false}};
  Attrs a = {items, 2, NULL, 0};
  ck_assert_int_eq(attrs_get(&a, "axis")->i.value, 1);
  ck_assert(attrs_get(&a, "keepdims")->b);
  ck_assert_ptr_null(attrs_get(&a, "exclude"));
  ck_assert_ptr_null(attrs_get(NULL, "axis"));
}
END_TEST

static Suite *attrs_suite(void) {
  Suite *s = suite_create("attrs");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, shortest_double);
  tcase_add_test(tc, print_scalars);
  tcase_add_test(tc, print_strings_escaped);
  tcase_add_test(tc, print_arrays_and_exprs);
  tcase_add_test(tc, parse_round_trips);
  tcase_add_test(tc, parse_values);
  tcase_add_test(tc, parse_malformed);
  tcase_add_test(tc, parse_deep_nesting_rejected);
  tcase_add_test(tc, equality);
  tcase_add_test(tc, get_by_key);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(attrs_suite());
}
