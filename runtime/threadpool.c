/* runtime/threadpool.c — the kernels' persistent thread pool (runtime/threadpool.h).
 *
 * Protocol. The submitter writes the job (fn, arg, range, chunking), resets
 * the chunk counters, reopens the job (`closed` = 0) and bumps `gen`. Any
 * thread takes chunks with an atomic fetch-add on `next_chunk` and counts
 * each finished chunk in `done_chunks`. The submitter takes chunks too,
 * waits until every chunk is DONE (not until every worker has shown up: on
 * a busy machine a descheduled idle worker must not stall the job), then
 * closes the job and waits for the workers currently inside it (`active`)
 * to leave, so none still reads the job when the next one is written.
 *
 * Joining. A worker that sees a new generation increments `active` and then
 * checks `closed` and `gen` (all sequentially consistent): a late worker
 * either sees the job closed (or a newer generation) and backs out, or is
 * counted in `active` before the submitter's final check — the Dekker
 * pattern, as for sleeping below.
 *
 * Sleeping. Between jobs a worker spins for a short while (SPIN_ROUNDS
 * pause instructions), then registers in `sleepers` and waits on the
 * condition variable, re-checking `gen` under the mutex. The submitter bumps
 * `gen` and then reads `sleepers`: either it sees the sleeper and broadcasts
 * under the mutex, or the sleeper sees the new generation before waiting.
 *
 * Nesting: a thread already inside a chunk body (thread-local `tp_inside`)
 * runs a nested threadpool_for inline.
 */
#include "runtime/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "ir/mem.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TP_PAUSE() _mm_pause()
#else
#define TP_PAUSE() ((void)0)
#endif

/* Pause instructions a worker spins for before sleeping (~tens of µs). */
#define SPIN_ROUNDS 4096
/* Chunks per thread when the grain allows it (dynamic load balance). */
#define CHUNKS_PER_THREAD 4

typedef struct Pool {
  int size; /* threads including the submitter */
  pthread_t *workers;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  _Atomic uint32_t gen;
  _Atomic int sleepers;
  _Atomic int active;       /* workers inside the current job */
  _Atomic int closed;       /* the current job takes no more workers */
  _Atomic int64_t next_chunk;
  _Atomic int64_t done_chunks;
  _Atomic bool stop;
  /* the current job (written by the submitter before the generation bump) */
  ThreadpoolFn fn;
  void *arg;
  int64_t n, nchunks;
} Pool;

static Pool *tp_pool;
static _Thread_local int tp_index;
static _Thread_local bool tp_inside;

static int tp_env_threads(void) {
  const char *s = getenv("RELAYC_NUM_THREADS");
  if (s && *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 0 && v > 0) return v > 1024 ? 1024 : (int)v;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int c = CPU_COUNT(&set);
    if (c > 0) return c;
  }
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? (int)c : 1;
}

/* Chunk k of the current job: [lo, hi). Chunks are near-equal and contiguous. */
static void tp_run_chunks(Pool *p) {
  ThreadpoolFn fn = p->fn;
  void *arg = p->arg;
  int64_t n = p->n, nc = p->nchunks;
  tp_inside = true;
  for (;;) {
    int64_t k = atomic_fetch_add_explicit(&p->next_chunk, 1, memory_order_relaxed);
    if (k >= nc) break;
    int64_t lo = n / nc * k + (k < n % nc ? k : n % nc);
    int64_t hi = lo + n / nc + (k < n % nc ? 1 : 0);
    fn(arg, lo, hi);
    atomic_fetch_add_explicit(&p->done_chunks, 1, memory_order_release);
  }
  tp_inside = false;
}

/* Waits for a generation other than `seen`; returns it. */
static uint32_t tp_wait_job(Pool *p, uint32_t seen) {
  for (int i = 0; i < SPIN_ROUNDS; i++) {
    uint32_t g = atomic_load_explicit(&p->gen, memory_order_acquire);
    if (g != seen) return g;
    TP_PAUSE();
  }
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add(&p->sleepers, 1);
  uint32_t g;
  while ((g = atomic_load(&p->gen)) == seen) pthread_cond_wait(&p->cv, &p->mu);
  atomic_fetch_sub(&p->sleepers, 1);
  pthread_mutex_unlock(&p->mu);
  return g;
}

typedef struct { Pool *p; int index; } WorkerStart;

static void *tp_worker(void *raw) {
  WorkerStart *ws = raw;
  Pool *p = ws->p;
  tp_index = ws->index;
  mem_free(ws);
  uint32_t seen = 0;
  for (;;) {
    seen = tp_wait_job(p, seen);
    if (atomic_load(&p->stop)) break;
    atomic_fetch_add(&p->active, 1);
    if (!atomic_load(&p->closed) && atomic_load(&p->gen) == seen) tp_run_chunks(p);
    atomic_fetch_sub_explicit(&p->active, 1, memory_order_release);
  }
  return NULL;
}

static Pool *tp_create(void) {
  Pool *p = mem_calloc(1, sizeof *p);
  p->size = tp_env_threads();
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  atomic_init(&p->gen, 0);
  atomic_init(&p->sleepers, 0);
  atomic_init(&p->active, 0);
  atomic_init(&p->closed, 1);
  atomic_init(&p->next_chunk, 0);
  atomic_init(&p->done_chunks, 0);
  p->workers = mem_calloc((size_t)p->size, sizeof *p->workers);
  int started = 1;
  for (int i = 1; i < p->size; i++) {
    WorkerStart *ws = mem_malloc(sizeof *ws);
    ws->p = p;
    ws->index = i;
    if (pthread_create(&p->workers[i], NULL, tp_worker, ws) != 0) {
      mem_free(ws);
      break; /* fewer threads than asked: still correct */
    }
    started++;
  }
  p->size = started;
  return p;
}

static Pool *tp_get(void) {
  if (!tp_pool) tp_pool = tp_create();
  return tp_pool;
}

int threadpool_size(void) { return tp_get()->size; }

int threadpool_thread_index(void) { return tp_index; }

static void tp_publish(Pool *p) {
  atomic_fetch_add(&p->gen, 1); /* seq_cst: pairs with the sleeper's check */
  if (atomic_load(&p->sleepers) > 0) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
}

void threadpool_for(int64_t n, int64_t grain, ThreadpoolFn fn, void *arg) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (tp_inside || n <= grain) {
    fn(arg, 0, n);
    return;
  }
  Pool *p = tp_get();
  int64_t nc = n / grain;
  int64_t cap = (int64_t)p->size * CHUNKS_PER_THREAD;
  if (nc > cap) nc = cap;
  if (p->size == 1 || nc <= 1) {
    fn(arg, 0, n);
    return;
  }
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->nchunks = nc;
  atomic_store_explicit(&p->next_chunk, 0, memory_order_relaxed);
  atomic_store_explicit(&p->done_chunks, 0, memory_order_relaxed);
  atomic_store(&p->closed, 0);
  tp_publish(p);
  tp_run_chunks(p);
  for (int spins = 0; atomic_load_explicit(&p->done_chunks, memory_order_acquire) < nc; spins++) {
    if (spins < SPIN_ROUNDS) TP_PAUSE();
    else sched_yield();
  }
  atomic_store(&p->closed, 1);
  for (int spins = 0; atomic_load(&p->active) > 0; spins++) {
    if (spins < SPIN_ROUNDS) TP_PAUSE();
    else sched_yield();
  }
}

void threadpool_shutdown(void) {
  Pool *p = tp_pool;
  if (!p) return;
  atomic_store(&p->stop, true);
  tp_publish(p);
  for (int i = 1; i < p->size; i++) pthread_join(p->workers[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  mem_free(p->workers);
  mem_free(p);
  tp_pool = NULL;
}
