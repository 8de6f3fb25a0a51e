/* runtime/threadpool.c — the kernels' persistent thread pool (runtime/threadpool.h).
 *
 * Protocol. The submitter writes the job (fn, arg, range, chunking), resets
 * the chunk counters, reopens the job (`closed` = 0) and bumps `gen`. The
 * chunks are dealt out in contiguous shares, one per thread (`share_next` /
 * `share_end`, thread i gets the i-th); a thread takes chunks from its own
 * share with an atomic fetch-add, then from the other shares in turn (so a
 * late or descheduled thread's chunks are still run), and counts each
 * finished chunk in `done_chunks`. Owning a share keeps the data local: two
 * consecutive jobs over the same range (a chain of elementwise operators, a
 * convolution then its batch norm) give each thread the same part, which is
 * still in that core's cache, where a free-for-all fetch-add mixed the parts
 * between the cores, and reading what the other core just wrote runs ~3×
 * slower here (2 MB: 10 vs 30 GB/s). The submitter takes chunks too,
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
 * Sleeping. Between jobs a worker spins for a short, time-bounded while
 * (SPIN_NS), then registers in `sleepers` and waits on the condition
 * variable `cv`, re-checking `gen` under the mutex. The submitter bumps
 * `gen` and then reads `sleepers`: either it sees the sleeper and broadcasts
 * under the mutex, or the sleeper sees the new generation before waiting.
 * The submitter waiting for chunks that a worker still runs spins for
 * WAIT_NS too, then sets `waiting` and sleeps on `done_cv` until
 * `done_chunks` reaches the chunk count; the thread that finishes the last
 * chunk reads `waiting` after its (sequentially consistent) increment and
 * signals under the mutex. The bounds are short on purpose: on a loaded
 * machine a worker that spun away its share of the CPU is the one the
 * scheduler preempts in the middle of its next chunk, and the submitter
 * then waits a whole time slice for it; a sleeper keeps its share and is
 * run promptly when woken.
 *
 * Small jobs. A job whose range gives fewer than two chunks of `grain`
 * items runs on the submitting thread alone (the grain is the caller's
 * estimate of the work one wake-up is worth); so does every job of a
 * one-thread pool and any nested call.
 *
 * Results never depend on the split: chunk bodies write disjoint outputs,
 * and a kernel that needs per-thread scratch sizes it by threadpool_size().
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
#include <time.h>
#include <unistd.h>

#include "ir/mem.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TP_PAUSE() _mm_pause()
#else
#define TP_PAUSE() ((void)0)
#endif

/* Spin budgets (nanoseconds): a worker for the next job, the submitter for
 * the workers' last chunks, before sleeping; long while the pool's threads
 * run undisturbed, short for LOADED_NS after one of them was descheduled. */
static int64_t SPIN_NS = 200000, WAIT_NS = 1000000;
static int64_t SPIN_LOADED_NS = 5000, WAIT_LOADED_NS = 20000;
#define LOADED_NS 100000000
/* A clock gap this long within one spin batch means the thread was descheduled. */
#define PREEMPT_GAP_NS 200000
/* Pause instructions between two reads of the clock while spinning. */
#define SPIN_BATCH 16
/* Jobs whose single-thread time is below this run on the submitter alone. */
#define SMALL_JOB_NS 30000
/* Slots of the job-cost memo (a power of two). */
#define COST_SLOTS 1024
/* Chunks per thread when the grain allows it (dynamic load balance). */
#define CHUNKS_PER_THREAD 4

typedef struct Pool {
  int size; /* threads including the submitter */
  pthread_t *workers;
  pthread_mutex_t mu;
  pthread_cond_t cv;      /* workers sleep here between jobs */
  pthread_cond_t done_cv; /* the submitter sleeps here for the last chunks */
  _Atomic int waiting;    /* the submitter is (about to be) on done_cv */
  _Atomic uint32_t gen;
  _Atomic int sleepers;
  _Atomic int active;       /* workers inside the current job */
  _Atomic int closed;       /* the current job takes no more workers */
  _Atomic int64_t done_chunks;
  _Atomic bool stop;
  _Atomic int64_t loaded_until; /* spin short before this time (tp_now_ns) */
  /* the current job (written by the submitter before the generation bump) */
  ThreadpoolFn fn;
  void *arg;
  int64_t n, nchunks;
  _Atomic int64_t *share_next; /* per thread: the next chunk of its share */
  int64_t *share_end;          /* per thread: the end of its share */
} Pool;

static Pool *tp_pool;
static _Thread_local int tp_index;
static _Thread_local bool tp_inside;
static _Thread_local bool tp_serial; /* threadpool_serial: this thread's jobs run inline */

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

static int64_t tp_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wakes the submitter if it sleeps for the chunk just finished, the last. */
static void tp_last_done(Pool *p) {
  if (atomic_load(&p->waiting)) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_signal(&p->done_cv);
    pthread_mutex_unlock(&p->mu);
  }
}

/* Chunk k of the current job: [lo, hi). Chunks are near-equal and contiguous.
 * This thread's share first, then the others' in turn. Returns how many
 * chunks this thread ran. */
static int64_t tp_run_chunks(Pool *p) {
  ThreadpoolFn fn = p->fn;
  void *arg = p->arg;
  int64_t n = p->n, nc = p->nchunks, ran = 0;
  tp_inside = true;
  for (int v = 0; v < p->size; v++) {
    int q = (tp_index + v) % p->size;
    for (;; ran++) {
      int64_t k = atomic_fetch_add_explicit(&p->share_next[q], 1, memory_order_relaxed);
      if (k >= p->share_end[q]) break;
      int64_t lo = n / nc * k + (k < n % nc ? k : n % nc);
      int64_t hi = lo + n / nc + (k < n % nc ? 1 : 0);
      fn(arg, lo, hi);
      if (atomic_fetch_add(&p->done_chunks, 1) == nc - 1) tp_last_done(p);
    }
  }
  tp_inside = false;
  return ran;
}

/* The spin budget now: `calm` normally, `loaded` while the machine is busy. */
static int64_t tp_budget(Pool *p, int64_t now, int64_t calm, int64_t loaded) {
  return now < atomic_load_explicit(&p->loaded_until, memory_order_relaxed) ? loaded : calm;
}

/* After a spin batch: false when the budget is spent; a long gap since the
 * last batch (the thread was descheduled) marks the machine loaded and ends
 * the spin. */
static bool tp_spin_on(Pool *p, int64_t *last, int64_t end) {
  int64_t now = tp_now_ns();
  if (now - *last > PREEMPT_GAP_NS) {
    atomic_store_explicit(&p->loaded_until, now + LOADED_NS, memory_order_relaxed);
    return false;
  }
  *last = now;
  return now < end;
}

/* Waits for a generation other than `seen`; returns it. */
static uint32_t tp_wait_job(Pool *p, uint32_t seen) {
  int64_t last = tp_now_ns(), end = last + tp_budget(p, last, SPIN_NS, SPIN_LOADED_NS);
  do {
    for (int i = 0; i < SPIN_BATCH; i++) {
      uint32_t g = atomic_load_explicit(&p->gen, memory_order_acquire);
      if (g != seen) return g;
      TP_PAUSE();
    }
  } while (tp_spin_on(p, &last, end));
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
  pthread_cond_init(&p->done_cv, NULL);
  atomic_init(&p->waiting, 0);
  atomic_init(&p->loaded_until, 0);
  atomic_init(&p->gen, 0);
  atomic_init(&p->sleepers, 0);
  atomic_init(&p->active, 0);
  atomic_init(&p->closed, 1);
  atomic_init(&p->done_chunks, 0);
  p->workers = mem_calloc((size_t)p->size, sizeof *p->workers);
  p->share_next = mem_calloc((size_t)p->size, sizeof *p->share_next);
  p->share_end = mem_calloc((size_t)p->size, sizeof *p->share_end);
  for (int i = 0; i < p->size; i++) atomic_init(&p->share_next[i], 0);
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

bool threadpool_serial(bool on) {
  bool was = tp_serial;
  tp_serial = on;
  return was;
}

static void tp_publish(Pool *p) {
  atomic_fetch_add(&p->gen, 1); /* seq_cst: pairs with the sleeper's check */
  if (atomic_load(&p->sleepers) > 0) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
}

/* The submitter's wait for the chunks the workers still run. */
static void tp_wait_done(Pool *p, int64_t nc, int64_t now) {
  if (atomic_load_explicit(&p->done_chunks, memory_order_acquire) >= nc) return;
  int64_t last = now, end = now + tp_budget(p, now, WAIT_NS, WAIT_LOADED_NS);
  do {
    for (int i = 0; i < SPIN_BATCH; i++) {
      if (atomic_load_explicit(&p->done_chunks, memory_order_acquire) >= nc) return;
      TP_PAUSE();
    }
  } while (tp_spin_on(p, &last, end));
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->waiting, 1);
  while (atomic_load(&p->done_chunks) < nc) pthread_cond_wait(&p->done_cv, &p->mu);
  atomic_store(&p->waiting, 0);
  pthread_mutex_unlock(&p->mu);
}

/* Job-cost memo: the single-thread time of a job, by (fn, n, grain), from
 * its last runs (only the submitting thread reads or writes it). A job runs
 * inline when its known time is below SMALL_JOB_NS: a wake-up and a join
 * cost more, and on a loaded machine each join risks waiting a time slice
 * for a preempted worker. Estimates move down at once and up by halves, so a
 * run stretched by a preemption does not flip a small job to the pool;
 * one far above the threshold does. */
typedef struct {
  ThreadpoolFn fn;
  int64_t n, grain, ns;
} CostSlot;
static CostSlot tp_cost[COST_SLOTS];

static CostSlot *tp_cost_slot(ThreadpoolFn fn, int64_t n, int64_t grain) {
  uint64_t h = (uint64_t)(uintptr_t)fn * 0x9E3779B97F4A7C15u ^ (uint64_t)n * 0xC2B2AE3D27D4EB4Fu ^
               (uint64_t)grain * 0x165667B19E3779F9u;
  return &tp_cost[(h ^ h >> 29) & (COST_SLOTS - 1)];
}

static void tp_cost_note(CostSlot *c, ThreadpoolFn fn, int64_t n, int64_t grain, int64_t ns) {
  if (c->fn != fn || c->n != n || c->grain != grain || ns < c->ns || ns > 4 * SMALL_JOB_NS)
    *c = (CostSlot){fn, n, grain, ns};
  else c->ns += (ns - c->ns) / 2;
}

void threadpool_for(int64_t n, int64_t grain, ThreadpoolFn fn, void *arg) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (tp_inside || tp_serial || n <= grain) {
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
  CostSlot *cost = tp_cost_slot(fn, n, grain);
  bool known = cost->fn == fn && cost->n == n && cost->grain == grain;
  int64_t t0 = tp_now_ns();
  if (known && cost->ns < SMALL_JOB_NS) {
    tp_inside = true;
    fn(arg, 0, n);
    tp_inside = false;
    tp_cost_note(cost, fn, n, grain, tp_now_ns() - t0);
    return;
  }
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->nchunks = nc;
  for (int q = 0; q < p->size; q++) { /* share q: chunks [nc·q/size, nc·(q+1)/size) */
    atomic_store_explicit(&p->share_next[q], nc * q / p->size, memory_order_relaxed);
    p->share_end[q] = nc * (q + 1) / p->size;
  }
  atomic_store_explicit(&p->done_chunks, 0, memory_order_relaxed);
  atomic_store(&p->closed, 0);
  tp_publish(p);
  int64_t ran = tp_run_chunks(p), t1 = tp_now_ns();
  /* chunks are near-equal: the submitter's share scales to the whole job */
  if (ran > 0) tp_cost_note(cost, fn, n, grain, (t1 - t0) * nc / ran);
  tp_wait_done(p, nc, t1);
  atomic_store(&p->closed, 1);
  /* Workers leave right after their last chunk: a short window. */
  for (int spins = 0; atomic_load(&p->active) > 0; spins++) {
    if (spins < 64) TP_PAUSE();
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
  pthread_cond_destroy(&p->done_cv);
  mem_free(p->workers);
  mem_free((void *)p->share_next);
  mem_free(p->share_end);
  mem_free(p);
  tp_pool = NULL;
}
