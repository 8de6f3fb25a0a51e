/* ir/mem.c — the allocation hook (see mem.h). Failure injection is a simple
 * countdown, enough for "fail the Nth allocation" loops in tests. */
#include "ir/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long fail_countdown = -1;

void mem_fail_after(long n) { fail_countdown = n; }

static int should_fail(void) {
  if (fail_countdown < 0) return 0;
  if (fail_countdown == 0) return 1;
  fail_countdown--;
  return 0;
}

int mem_injected_failure(void) { return should_fail(); }

int mem_plain_requested(void) {
#if defined(__SANITIZE_ADDRESS__)
  return 1;
#else
  static int plain = -1; /* racing first calls compute the same answer */
  int v = __atomic_load_n(&plain, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *e = getenv("RELAYC_MALLOC_DEFAULT");
    v = e && *e && strcmp(e, "0") != 0;
    __atomic_store_n(&plain, v, __ATOMIC_RELAXED);
  }
  return v;
#endif
}

_Noreturn void mem_oom(size_t requested) {
  fprintf(stderr, "relayc: error: out of memory (allocating %zu bytes)\n", requested);
  exit(3);
}

void *mem_malloc_try(size_t n) {
  if (should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *mem_aligned_try(size_t align, size_t n) {
  if (should_fail()) return NULL;
  void *p = NULL;
  if (posix_memalign(&p, align, n ? n : 1) != 0) return NULL;
  return p;
}

void *mem_malloc(size_t n) {
  void *p = mem_malloc_try(n);
  if (!p) mem_oom(n);
  return p;
}

void *mem_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) mem_oom(SIZE_MAX);
  /* calloc, not malloc + memset: fresh pages from the kernel are zero already
   * (the big side tables of a pass over a 100,000-node chain) */
  void *p = should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
  if (!p) mem_oom(n * size);
  return p;
}

void *mem_realloc(void *p, size_t n) {
  if (should_fail()) mem_oom(n);
  void *q = realloc(p, n ? n : 1);
  if (!q) mem_oom(n);
  return q;
}

void mem_free(void *p) { free(p); }

char *mem_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = mem_malloc(n);
  memcpy(p, s, n);
  return p;
}
