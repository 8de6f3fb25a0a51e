/* ir/prefault.c — huge-page mappings faulted in ahead of need (see prefault.h).
 *
 * State: one background thread, started by the first huge_map_ahead, keeps
 * up to READY_MAX mappings of that call's size faulted in. The caller
 * takes a ready one under a mutex (a few instructions per 8 MiB) or maps its
 * own; it never waits for the thread. Faulting in is MADV_POPULATE_WRITE
 * (Linux 5.14) or, where the kernel lacks it, a write to every 4 KiB page. */
#include "ir/prefault.h"
#include "ir/mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { HUGE_PAGE = 2u << 20, SMALL_PAGE = 4096, READY_MAX = 2 };

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;   /* the thread waits here while READY_MAX are ready */
  size_t size;           /* the size the thread prepares; 0 until it runs */
  void *ready[READY_MAX];
  unsigned nready;
  unsigned taken_ready, mapped_fresh;
  double cpu_ms;         /* the thread's CPU time, as of its last chunk */
  bool off;              /* never start (decided once), or a forked child */
  bool decided;
} pf = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* A fresh 2 MiB-aligned mapping of `size` bytes advised as huge pages, or NULL. */
static void *try_map(size_t size) {
  size_t len = size + HUGE_PAGE;
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  size_t head = start - (uintptr_t)p, tail = len - head - size;
  if (head) munmap(p, head);
  if (tail) munmap((unsigned char *)start + size, tail);
#ifdef MADV_HUGEPAGE
  madvise((void *)start, size, MADV_HUGEPAGE);
#endif
  return (void *)start;
}

void *huge_map(size_t size) {
  void *p = try_map(size);
  if (!p) mem_oom(size);
  return p;
}

/* Every page of p[0, size) faulted in (still zero); false when memory ran out. */
static bool populate(void *p, size_t size) {
  if (madvise(p, size, MADV_POPULATE_WRITE) == 0) return true;
  if (errno != EINVAL) return false; /* EINVAL: a kernel before 5.14 */
  volatile unsigned char *b = p;
  for (size_t i = 0; i < size; i += SMALL_PAGE) b[i] = 0;
  return true;
}

static void *prefault_thread(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&pf.lock);
    while (pf.nready == READY_MAX) pthread_cond_wait(&pf.wake, &pf.lock);
    size_t size = pf.size;
    pthread_mutex_unlock(&pf.lock);
    void *p = try_map(size);
    if (!p) break; /* out of memory: the callers map their own (and report it) */
    if (!populate(p, size)) {
      munmap(p, size);
      break;
    }
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    pthread_mutex_lock(&pf.lock);
    pf.cpu_ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    pf.ready[pf.nready++] = p; /* below READY_MAX: only this thread adds */
    pthread_mutex_unlock(&pf.lock);
  }
  return NULL;
}

/* fork: the child has no prefault thread; it maps its own from then on. */
static void before_fork(void) { pthread_mutex_lock(&pf.lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&pf.lock); }
static void after_fork_child(void) {
  pf.off = true;
  pf.nready = 0; /* the parent's ready mappings stay mapped here, unused */
  pthread_mutex_unlock(&pf.lock);
}

/* Whether a background thread may be used at all (sanitizers and valgrind
 * want every byte's first writer to be the program; RELAYC_PREFAULT=0 and
 * RELAYC_MALLOC_DEFAULT=1 ask for plain behaviour). Called under the lock. */
static bool wanted(void) {
#if defined(__SANITIZE_THREAD__)
  return false;
#else
  if (mem_plain_requested()) return false;
  const char *e = getenv("RELAYC_PREFAULT");
  if (e && strcmp(e, "0") == 0) return false;
  e = getenv("LD_PRELOAD");
  if (e && strstr(e, "vgpreload")) return false; /* valgrind: one core, no gain */
  return true;
#endif
}

/* Starts the thread for chunks of `size` (under the lock). */
static void start(size_t size) {
  pthread_attr_t attr;
  pthread_t th;
  pf.size = size;
  if (pthread_attr_init(&attr) != 0) { pf.off = true; return; }
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64u << 10);
  if (pthread_atfork(before_fork, after_fork_parent, after_fork_child) != 0 ||
      pthread_create(&th, &attr, prefault_thread, NULL) != 0) {
    pf.off = true;
    pf.size = 0;
  }
  pthread_attr_destroy(&attr);
}

/* A ready mapping of `size`, or NULL; starts the thread on the first request. */
static void *take_ready(size_t size) {
  void *p = NULL;
  pthread_mutex_lock(&pf.lock);
  if (!pf.decided) {
    pf.decided = true;
    pf.off = !wanted();
  }
  if (!pf.off) {
    if (!pf.size) start(size);
    else if (pf.size == size && pf.nready) {
      p = pf.ready[--pf.nready];
      pthread_cond_signal(&pf.wake);
    }
  }
  if (p) pf.taken_ready++;
  else pf.mapped_fresh++;
  pthread_mutex_unlock(&pf.lock);
  return p;
}

void *huge_map_ahead(size_t size) {
  void *p = take_ready(size);
  return p ? p : huge_map(size);
}

PrefaultStats prefault_stats(void) {
  pthread_mutex_lock(&pf.lock);
  PrefaultStats st = {pf.taken_ready, pf.mapped_fresh, pf.nready, pf.size && !pf.off, pf.cpu_ms};
  pthread_mutex_unlock(&pf.lock);
  return st;
}
