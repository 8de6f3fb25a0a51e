/* tests/unit/check_threadpool.c — the kernels' thread pool (runtime/threadpool.h).
 *
 * Every index of a job is run exactly once whatever the size, grain and
 * thread count; a job of fewer than two grains runs on the submitting thread
 * in one call; nested calls run inline; workers asleep after a pause are
 * woken by the next job (a job whose two chunks wait for each other can only
 * finish when a worker runs one); the submitter asleep on a slow worker
 * chunk is woken when it ends and sees its writes; a job timed below the
 * small-job threshold runs as one call afterwards, a long one keeps its
 * chunks; under threadpool_serial every job runs on the caller in one call
 * and the pool is used again once it is turned off; thousands of back-to-back
 * jobs keep the protocol straight; the pool is re-created after a shutdown.
 * Each test sets RELAYC_NUM_THREADS before its first use of the pool (Check
 * forks a process per test).
 */
#include <check.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "ir/diag.h"
#include "runtime/threadpool.h"
#include "tests/unit/unit_run.h"

static void use_threads(const char *n) {
  threadpool_shutdown();
  setenv("RELAYC_NUM_THREADS", n, 1);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* --- coverage ---------------------------------------------------------------- */

typedef struct {
  _Atomic int *hits;
  _Atomic int calls;
  _Atomic int off_caller; /* chunks run by a worker */
} Cover;

static void cover_fn(void *arg, int64_t lo, int64_t hi) {
  Cover *c = arg;
  atomic_fetch_add(&c->calls, 1);
  if (threadpool_thread_index() != 0) atomic_fetch_add(&c->off_caller, 1);
  for (int64_t i = lo; i < hi; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void check_cover(int64_t n, int64_t grain) {
  Cover c = {calloc((size_t)(n ? n : 1), sizeof(_Atomic int)), 0, 0};
  threadpool_for(n, grain, cover_fn, &c);
  for (int64_t i = 0; i < n; i++) ck_assert_int_eq(c.hits[i], 1);
  if (n > 0 && n < 2 * (grain < 1 ? 1 : grain)) {
    ck_assert_int_eq(c.calls, 1); /* small: one call on the caller */
    ck_assert_int_eq(c.off_caller, 0);
  }
  if (n == 0) ck_assert_int_eq(c.calls, 0);
  free((void *)c.hits);
}

START_TEST(every_index_once) {
  const char *threads[] = {"1", "2", "3", "8"};
  int64_t ns[] = {0, 1, 2, 3, 7, 64, 100, 1023, 10007};
  int64_t grains[] = {-5, 0, 1, 3, 50, 1000, 20000};
  for (int t = 0; t < 4; t++) {
    use_threads(threads[t]);
    ck_assert_int_ge(threadpool_size(), 1);
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
      for (size_t g = 0; g < sizeof grains / sizeof *grains; g++) check_cover(ns[i], grains[g]);
  }
  threadpool_shutdown();
}
END_TEST

/* --- nesting ----------------------------------------------------------------- */

typedef struct {
  _Atomic int64_t sum;
} Nest;

static void inner_fn(void *arg, int64_t lo, int64_t hi) {
  Nest *n = arg;
  for (int64_t i = lo; i < hi; i++) atomic_fetch_add(&n->sum, i);
}

static void outer_fn(void *arg, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; i++) threadpool_for(100, 1, inner_fn, arg);
}

START_TEST(nested_runs_inline) {
  use_threads("2");
  Nest n = {0};
  threadpool_for(40, 1, outer_fn, &n);
  ck_assert_int_eq(n.sum, 40 * 4950);
  threadpool_shutdown();
}
END_TEST

/* --- waking ------------------------------------------------------------------ */

/* Two chunks, each waiting (at most 20 s) until both have started: finishes
 * only if a worker takes the second chunk while the caller runs the first. */
typedef struct {
  _Atomic int started;
  _Atomic int timed_out;
} Pair;

static void pair_fn(void *arg, int64_t lo, int64_t hi) {
  (void)lo, (void)hi;
  Pair *p = arg;
  atomic_fetch_add(&p->started, 1);
  double t0 = now_s(), end = t0 + 20;
  while (atomic_load(&p->started) < 2)
    if (now_s() > end) {
      atomic_store(&p->timed_out, 1);
      return;
    }
  /* at least 1 ms a chunk: a job the pool measured below its small-job
   * threshold (30 us) would next run on the caller alone, one call for both
   * chunks, which then waits for a second start that never comes (the test
   * failed so, 3 times in 300 runs) */
  while (now_s() < t0 + 0.001) {
  }
}

START_TEST(sleeping_workers_wake) {
  use_threads("2");
  ck_assert_int_eq(threadpool_size(), 2);
  for (int round = 0; round < 5; round++) {
    sleep_ms(round * 5); /* long enough for the worker to fall asleep */
    Pair p = {0, 0};
    threadpool_for(2, 1, pair_fn, &p);
    ck_assert_int_eq(p.started, 2);
    ck_assert_int_eq(p.timed_out, 0);
  }
  threadpool_shutdown();
}
END_TEST

/* The worker's chunk outlasts the submitter's spin: the submitter sleeps and
 * must be woken, after the chunk's writes. */
typedef struct {
  int64_t out[2];
} Slow;

static void slow_fn(void *arg, int64_t lo, int64_t hi) {
  Slow *s = arg;
  if (threadpool_thread_index() != 0) sleep_ms(30);
  for (int64_t i = lo; i < hi; i++) s->out[i] = 100 + i;
}

START_TEST(submitter_sleeps_for_slow_chunk) {
  use_threads("2");
  for (int round = 0; round < 4; round++) {
    Slow s = {{0, 0}};
    threadpool_for(2, 1, slow_fn, &s);
    ck_assert_int_eq(s.out[0], 100);
    ck_assert_int_eq(s.out[1], 101);
  }
  threadpool_shutdown();
}
END_TEST

/* --- serial ------------------------------------------------------------------ */

START_TEST(serial_runs_on_caller) {
  use_threads("3");
  ck_assert(!threadpool_serial(true));
  for (int k = 0; k < 3; k++) {
    Cover c = {calloc(5000, sizeof(_Atomic int)), 0, 0};
    threadpool_for(5000, 1, cover_fn, &c);
    for (int i = 0; i < 5000; i++) ck_assert_int_eq(c.hits[i], 1);
    ck_assert_int_eq(c.calls, 1);
    ck_assert_int_eq(c.off_caller, 0);
    free((void *)c.hits);
  }
  ck_assert(threadpool_serial(true)); /* nested use: the previous setting comes back */
  ck_assert(threadpool_serial(false));
  /* off again: two chunks that wait for each other need a worker */
  Pair p = {0, 0};
  threadpool_for(2, 1, pair_fn, &p);
  ck_assert_int_eq(p.timed_out, 0);
  threadpool_shutdown();
}
END_TEST

/* --- the job-cost memo -------------------------------------------------------- */

static void busy_fn(void *arg, int64_t lo, int64_t hi) {
  Cover *c = arg;
  atomic_fetch_add(&c->calls, 1);
  for (int64_t i = lo; i < hi; i++) {
    atomic_fetch_add(&c->hits[i], 1);
    double end = now_s() + 300e-6; /* 0.3 ms an item: far above the threshold */
    while (now_s() < end) {
    }
  }
}

START_TEST(small_jobs_run_inline) {
  use_threads("2");
  _Atomic int hits[64] = {0};
  /* a tiny job, once timed, runs as one call on the submitter (retried: a
   * preemption can stretch a timing on a loaded machine) */
  bool inline_seen = false;
  for (int tries = 0; tries < 50 && !inline_seen; tries++) {
    Cover c = {hits, 0, 0};
    threadpool_for(64, 4, cover_fn, &c);
    inline_seen = c.calls == 1 && c.off_caller == 0;
  }
  ck_assert(inline_seen);
  /* a job far above the threshold keeps its chunks (the same size and
   * grain as above but another body: its own memo entry) */
  for (int round = 0; round < 3; round++) {
    Cover c = {hits, 0, 0};
    threadpool_for(64, 4, busy_fn, &c);
    ck_assert_int_gt(c.calls, 1);
  }
  threadpool_shutdown();
}
END_TEST

/* --- back to back ------------------------------------------------------------ */

typedef struct {
  int64_t *v;
} Fill;

static void fill_fn(void *arg, int64_t lo, int64_t hi) {
  Fill *f = arg;
  for (int64_t i = lo; i < hi; i++) f->v[i] += i;
}

START_TEST(back_to_back_jobs) {
  const char *threads[] = {"2", "4"};
  for (int t = 0; t < 2; t++) {
    use_threads(threads[t]);
    int64_t v[16] = {0};
    Fill f = {v};
    for (int j = 0; j < 20000; j++) threadpool_for(2 + j % 15, 1, fill_fn, &f);
    for (int64_t i = 0; i < 16; i++) {
      int64_t times = 0;
      for (int j = 0; j < 20000; j++) times += i < 2 + j % 15;
      ck_assert_int_eq(v[i], i * times);
    }
  }
  threadpool_shutdown();
}
END_TEST

START_TEST(recreated_after_shutdown) {
  use_threads("3");
  ck_assert_int_eq(threadpool_size(), 3);
  check_cover(1000, 1);
  threadpool_shutdown();
  setenv("RELAYC_NUM_THREADS", "2", 1);
  ck_assert_int_eq(threadpool_size(), 2);
  check_cover(1000, 1);
  threadpool_shutdown();
  threadpool_shutdown(); /* twice: harmless */
}
END_TEST

static Suite *pool_suite(void) {
  Suite *s = suite_create("threadpool");
  TCase *tc = tcase_create("pool");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, every_index_once);
  tcase_add_test(tc, nested_runs_inline);
  tcase_add_test(tc, serial_runs_on_caller);
  tcase_add_test(tc, sleeping_workers_wake);
  tcase_add_test(tc, submitter_sleeps_for_slow_chunk);
  tcase_add_test(tc, small_jobs_run_inline);
  tcase_add_test(tc, back_to_back_jobs);
  tcase_add_test(tc, recreated_after_shutdown);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(pool_suite());
}
