/* tests/unit/check_profile.c — eval/profile.c: the --profile table (counting, totals,
 * ordering, the report's layout). The interpreter hook is covered end to end by
 * tests/golden/nets/profile.relay. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/profile.h"
#include "ir/mem.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "tests/unit/unit_run.h"

/* The report printed into a string (caller frees with free()). */
static char *report_text(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  profile_report(f);
  fclose(f);
  return buf;
}

/* Position of the line that starts with `name` followed by a space, or NULL. */
static const char *row(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (strncmp(p, name, n) == 0 && p[n] == ' ') return p;
  return NULL;
}

START_TEST(off_by_default) {
  ck_assert(!profile_on);
  profile_add(OP_ADD, 5); /* ignored: no table */
  ck_assert_uint_eq(profile_total_calls(), 0);
  char *t = report_text();
  ck_assert_str_eq(t, "");
  free(t);
}
END_TEST

START_TEST(counts_and_totals) {
  profile_enable();
  ck_assert(profile_on);
  profile_add(OP_ADD, 1000000);
  profile_add(OP_ADD, 3000000);
  profile_add(OP_MULTIPLY, 500000);
  ck_assert_uint_eq(profile_total_calls(), 3);
  ck_assert_uint_eq(profile_total_op_ns(), 4500000);
  profile_enable(); /* re-enabling starts afresh */
  ck_assert_uint_eq(profile_total_calls(), 0);
  profile_disable();
  ck_assert(!profile_on);
}
END_TEST

START_TEST(report_sorted_by_total) {
  profile_enable();
  profile_add(OP_MULTIPLY, 500000);
  profile_add(OP_ADD, 1000000);
  profile_add(OP_ADD, 3000000);
  profile_add(OP_SUBTRACT, 500000); /* tie with multiply: by name */
  char *t = report_text();
  ck_assert_ptr_nonnull(strstr(t, "Operator profile: 4 calls in 5.000 ms"));
  ck_assert_ptr_nonnull(strstr(t, "Name"));
  ck_assert_ptr_nonnull(strstr(t, "Calls   Total (ms)    Mean (us)  Share (%)"));
  const char *a = row(t, "add"), *m = row(t, "multiply"), *s = row(t, "subtract"), *tot = row(t, "Total");
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(m);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(tot);
  ck_assert(a < m && m < s && s < tot);
  /* add: 2 calls, 4 ms, mean 2000 us, 80 % */
  char name[32];
  unsigned calls;
  double ms, mean, share;
  ck_assert_int_eq(sscanf(a, "%31s %u %lf %lf %lf", name, &calls, &ms, &mean, &share), 5);
  ck_assert_uint_eq(calls, 2);
  ck_assert_double_eq_tol(ms, 4.0, 1e-9);
  ck_assert_double_eq_tol(mean, 2000.0, 1e-9);
  ck_assert_double_eq_tol(share, 80.0, 1e-9);
  ck_assert_int_eq(sscanf(tot, "%31s %u %lf", name, &calls, &ms), 3);
  ck_assert_uint_eq(calls, 4);
  ck_assert_double_eq_tol(ms, 5.0, 1e-9);
  free(t);
  profile_disable();
}
END_TEST

START_TEST(unknown_ids_go_to_other) {
  profile_enable();
  profile_add(-1, 100);
  profile_add((int32_t)op_count() + 7, 100);
  char *t = report_text();
  const char *o = row(t, "(other)");
  ck_assert_ptr_nonnull(o);
  unsigned calls;
  ck_assert_int_eq(sscanf(o, "(other) %u", &calls), 1);
  ck_assert_uint_eq(calls, 2);
  free(t);
  profile_disable();
}
END_TEST

START_TEST(run_total_brackets) {
  profile_enable();
  ck_assert_uint_eq(profile_run_ns(), 0);
  profile_run_end(); /* without a begin: no effect */
  ck_assert_uint_eq(profile_run_ns(), 0);
  profile_run_begin();
  uint64_t t0 = profile_now_ns();
  while (profile_now_ns() - t0 < 200000) {
  }
  profile_run_end();
  ck_assert_uint_ge(profile_run_ns(), 200000);
  char *t = report_text();
  ck_assert_ptr_nonnull(strstr(t, "(run "));
  ck_assert_ptr_nonnull(strstr(t, "outside operators)"));
  free(t);
  profile_disable();
}
END_TEST

START_TEST(clock_is_monotonic) {
  uint64_t a = profile_now_ns(), b = profile_now_ns();
  ck_assert_uint_ge(b, a);
  ck_assert_uint_gt(a, 0);
}
END_TEST

static Suite *profile_suite(void) {
  Suite *s = suite_create("profile");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, off_by_default);
  tcase_add_test(tc, counts_and_totals);
  tcase_add_test(tc, report_sorted_by_total);
  tcase_add_test(tc, unknown_ids_go_to_other);
  tcase_add_test(tc, run_total_brackets);
  tcase_add_test(tc, clock_is_monotonic);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return unit_run(profile_suite());
}
