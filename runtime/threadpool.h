/* runtime/threadpool.h — one persistent pool of worker threads for kernels.
 *
 * The pool is created on first use and lives until threadpool_shutdown (or
 * process exit): (T − 1) workers plus the calling thread, where T is the
 * environment variable RELAYC_NUM_THREADS when it is a positive integer,
 * else the number of CPUs this process may run on. threadpool_for splits
 * [0, n) into contiguous chunks of at least `grain` items that the workers
 * and the caller take dynamically (an atomic counter), and returns when
 * every chunk is done. A job of fewer than two grains, or one whose
 * single-thread time measured at its last runs (same fn, n and grain) was
 * below ~30 µs, runs on the caller alone. Workers spin briefly between jobs
 * (back-to-back kernels are common), then sleep on a condition variable;
 * the spins shrink to a few µs while the machine is loaded (a pool thread
 * was descheduled in the last 0.1 s), so that a preempted worker costs
 * little. The split never changes results: bodies write disjoint outputs.
 *
 * INVARIANTS: only one thread submits jobs (the interpreter's thread); a
 * threadpool_for issued from inside a chunk body (nested) runs inline on
 * that thread. Bodies must not allocate through arenas or touch refcounts
 * (runtime/tensor.h THREADS). threadpool_thread_index() tells a body which
 * thread runs it (0 = the caller, 1..T−1 = workers), so a kernel can give
 * each thread its own scratch buffer, sized with threadpool_size().
 */
#ifndef RELAYC_RUNTIME_THREADPOOL_H
#define RELAYC_RUNTIME_THREADPOOL_H

#include <stdbool.h>
#include <stdint.h>

typedef void (*ThreadpoolFn)(void *arg, int64_t lo, int64_t hi);

/* Total threads of the pool, the caller included (>= 1). Creates the pool. */
int threadpool_size(void);
/* Runs fn over [0, n) in chunks of at least `grain` items (grain < 1 means
 * 1) spread across the pool; returns when all are done. */
void threadpool_for(int64_t n, int64_t grain, ThreadpoolFn fn, void *arg);
/* Index of the calling thread within the pool: 0 for the submitting thread
 * (and any thread outside the pool), 1..size−1 for workers. */
int threadpool_thread_index(void);
/* While `on`, every threadpool_for of the calling thread runs on that thread
 * alone (the workers are neither woken nor waited for); returns the previous
 * setting, to be restored. For one-off sweeps over memory no core has in its
 * cache, where a job's wake-up, the workers' spinning between jobs and the
 * join cost more CPU than the split saves: FoldConstant's folds of weights
 * (transform/fold_constant.c). */
bool threadpool_serial(bool on);
/* Joins the workers (the next use creates a new pool). For tests and exit. */
void threadpool_shutdown(void);

#endif
