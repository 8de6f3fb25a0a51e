/* tests/unit/check_bufpool.c — runtime/bufpool.c: reuse by size class, alignment, contents
 * survive, failure injection, and the plain-allocator threshold. Recycling checks are
 * skipped when pooling is off (ASan builds, RELAYC_MALLOC_DEFAULT=1). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "runtime/bufpool.h"
#include "runtime/tensor.h"
#include "tests/unit/unit_run.h"

static void teardown(void) {
  bufpool_trim();
  mem_fail_after(-1);
}

START_TEST(big_blocks_are_aligned_writable_and_reused) {
  if (!bufpool_pooling()) return; /* sanitizer build: nothing is recycled */
  size_t n = (size_t)3 << 20;
  char *a = bufpool_alloc(n);
  ck_assert_ptr_nonnull(a);
  ck_assert_uint_eq((uintptr_t)a % 64, 0);
  memset(a, 0x5a, n);
  ck_assert_int_eq(a[n - 1], 0x5a);
  bufpool_free(a, n);
  ck_assert_uint_ge(bufpool_cached_bytes(), n);
  char *b = bufpool_alloc(n - 1000); /* same class: the cached block comes back */
  ck_assert_ptr_eq(a, b);
  ck_assert_uint_eq(bufpool_cached_bytes(), 0);
  bufpool_free(b, n - 1000);
}
END_TEST

START_TEST(a_smaller_request_may_take_a_slightly_larger_block) {
  if (!bufpool_pooling()) return; /* sanitizer build: nothing is recycled */
  size_t n = (size_t)1 << 20;
  char *a = bufpool_alloc(n + n / 4);
  bufpool_free(a, n + n / 4);
  char *b = bufpool_alloc(n); /* 1.25x: within the reuse span */
  ck_assert_ptr_eq(a, b);
  memset(b, 1, n);
  bufpool_free(b, n);
  char *c = bufpool_alloc(n / 4); /* 5x smaller: a fresh block, the big one stays cached */
  ck_assert_ptr_ne(c, a);
  ck_assert_uint_ge(bufpool_cached_bytes(), n + n / 4);
  bufpool_free(c, n / 4);
}
END_TEST

START_TEST(a_larger_request_never_gets_a_smaller_block) {
  size_t n = (size_t)1 << 20;
  char *a = bufpool_alloc(n);
  bufpool_free(a, n);
  char *b = bufpool_alloc(2 * n);
  ck_assert_ptr_ne(a, b);
  memset(b, 7, 2 * n); /* the whole block is usable */
  bufpool_free(b, 2 * n);
}
END_TEST

START_TEST(small_blocks_use_the_plain_allocator) {
  char *a = bufpool_alloc(100);
  ck_assert_ptr_nonnull(a);
  ck_assert_uint_eq((uintptr_t)a % 64, 0);
  memset(a, 1, 100);
  bufpool_free(a, 100);
  ck_assert_uint_eq(bufpool_cached_bytes(), 0);
  bufpool_free(NULL, 1 << 20); /* no-op */
}
END_TEST

START_TEST(injected_failures_and_absurd_sizes_return_null) {
  mem_fail_after(0);
  ck_assert_ptr_null(bufpool_alloc((size_t)1 << 20));
  ck_assert_ptr_null(bufpool_alloc(100));
  mem_fail_after(-1);
  ck_assert_ptr_null(bufpool_alloc(SIZE_MAX - 10));
}
END_TEST

START_TEST(tensors_recycle_their_storage) {
  if (!bufpool_pooling()) return; /* sanitizer build: nothing is recycled */
  int64_t shape[2] = {512, 1024}; /* 2 MiB of float32 */
  Tensor *t = tensor_new(DTYPE(DT_FLOAT, 32), 2, shape);
  ck_assert_ptr_nonnull(t);
  void *data = t->data;
  ((float *)t->data)[512 * 1024 - 1] = 1.5f;
  tensor_release(t);
  Tensor *u = tensor_new(DTYPE(DT_FLOAT, 32), 2, shape);
  ck_assert_ptr_eq(u->data, data);
  tensor_release(u);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("bufpool");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, big_blocks_are_aligned_writable_and_reused);
  tcase_add_test(tc, a_smaller_request_may_take_a_slightly_larger_block);
  tcase_add_test(tc, a_larger_request_never_gets_a_smaller_block);
  tcase_add_test(tc, small_blocks_use_the_plain_allocator);
  tcase_add_test(tc, injected_failures_and_absurd_sizes_return_null);
  tcase_add_test(tc, tensors_recycle_their_storage);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return unit_run(suite());
}
