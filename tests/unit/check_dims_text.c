/* tests/unit/check_dims_text.c — ir/dims_text: the one "(1, 16)" shape text of every message. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dims_text.h"
#include "tests/unit/unit_run.h"

START_TEST(shapes_as_messages_write_them) {
  char buf[96];
  const int64_t d[] = {1, 16, -1, 9223372036854775807LL};
  ck_assert_str_eq(dims_text(buf, sizeof buf, d, 0, DIMS_PLAIN), "()");
  ck_assert_str_eq(dims_text(buf, sizeof buf, d, 0, DIMS_TUPLE), "()");
  ck_assert_str_eq(dims_text(buf, sizeof buf, d + 1, 1, DIMS_PLAIN), "(16)");
  ck_assert_str_eq(dims_text(buf, sizeof buf, d + 1, 1, DIMS_TUPLE), "(16,)");
  ck_assert_str_eq(dims_text(buf, sizeof buf, d, 2, DIMS_TUPLE), "(1, 16)");
  ck_assert_str_eq(dims_text(buf, sizeof buf, d, 4, DIMS_PLAIN), "(1, 16, -1, 9223372036854775807)");
}
END_TEST

/* A shape longer than the buffer keeps the extents with room for one more and ends ", ...)";
 * the text always fits (no cut-off number, the parenthesis closed). */
START_TEST(long_shapes_are_shortened) {
  int64_t d[64];
  for (int i = 0; i < 64; i++) d[i] = 1000 + i;
  char buf[64];
  const char *t = dims_text(buf, sizeof buf, d, 64, DIMS_PLAIN);
  ck_assert_str_eq(t, "(1000, 1001, 1002, 1003, 1004, 1005, 1006, ...)");
  for (size_t cap = 1; cap <= sizeof buf; cap++) {
    memset(buf, 'x', sizeof buf);
    dims_text(buf, cap, d, 64, DIMS_TUPLE);
    ck_assert_uint_lt(strlen(buf), cap);
  }
  char tiny[26];
  ck_assert_str_eq(dims_text(tiny, sizeof tiny, d, 3, DIMS_PLAIN), "(1000, ...)");
}
END_TEST

int main(void) {
  Suite *s = suite_create("dims_text");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, shapes_as_messages_write_them);
  tcase_add_test(tc, long_shapes_are_shortened);
  suite_add_tcase(s, tc);
  return unit_run(s);
}
