/* ir/prefault.h — huge-page mappings made ready ahead of need by a background thread.
 *
 * A fresh page costs its first writer a fault and a kernel clear: on the dev
 * VM 256 MB of fresh huge pages take 40-260 ms to touch, more than the work a
 * pass like Gradient does to fill them. Once a region is visibly growing (an
 * arena asks for its second huge chunk), a background thread maps and faults
 * in the next chunks of that size while the caller works, so the clearing
 * runs on another core instead of in the caller's path. The caller never
 * waits for it: when no ready chunk is there it maps its own, as before.
 *
 *     void *c1 = huge_map(8 << 20);        // 2 MiB-aligned, zero, advised as huge pages
 *     void *c2 = huge_map_ahead(8 << 20);  // the same, served from chunks made ahead
 *     munmap(c1, 8 << 20); ...
 *
 * The CPU the thread spends is counted (prefault_stats): --time-passes adds
 * it to the pass thread's own CPU time. Off in sanitizer builds, under RELAYC_MALLOC_DEFAULT=1
 * and with RELAYC_PREFAULT=0; a forked child starts without it. */
#ifndef RELAYC_IR_PREFAULT_H
#define RELAYC_IR_PREFAULT_H

#include <stddef.h>

/* A 2 MiB-aligned anonymous mapping of `size` bytes (a multiple of 2 MiB),
 * zero, advised as transparent huge pages; exits on out-of-memory (ir/mem.h). */
void *huge_map(size_t size);
/* The same, for a region that keeps growing by chunks of `size`: served from
 * chunks faulted in ahead (the first call starts the thread; later calls of
 * another size are plain huge_map). */
void *huge_map_ahead(size_t size);

/* What huge_map_ahead has done so far in this process (tests, benchmarks). */
typedef struct PrefaultStats {
  unsigned taken_ready;  /* calls served from a chunk faulted in ahead */
  unsigned mapped_fresh; /* calls that mapped their own (none ready, or the thread is off) */
  unsigned ready;        /* chunks waiting now */
  int running;           /* 1 when the thread was started */
  double cpu_ms;         /* CPU time the thread has spent so far */
} PrefaultStats;
PrefaultStats prefault_stats(void);

#endif
