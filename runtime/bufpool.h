/* runtime/bufpool.h — storage for big tensor buffers, recycled and pre-faulted.
 *
 * Why: running a network allocates and frees the same handful of activation
 * sizes over and over. glibc serves big blocks from fresh pages whenever its
 * heap must grow, and on virtual machines a first-touch page fault is
 * expensive (measured ~10 µs per 4 KiB page on the dev VM, so a 4.8 MB
 * activation costs ~12 ms to touch). The pool keeps freed big blocks by size
 * class for reuse and asks the kernel to populate a fresh block in one call
 * (MADV_POPULATE_WRITE, ~4× cheaper than touching page by page).
 *
 * Blocks below BUFPOOL_MIN bytes go to mem_aligned_try / mem_free. Every block
 * is 64-byte aligned. Callers pass the same byte count to bufpool_free as to
 * bufpool_alloc (tensor_release knows it). Thread-safe.
 * RELAYC_MALLOC_DEFAULT=1 (and sanitizer builds) route everything to the
 * plain allocator, so ASan/valgrind see every buffer.
 */
#ifndef RELAYC_RUNTIME_BUFPOOL_H
#define RELAYC_RUNTIME_BUFPOOL_H

#include <stdbool.h>
#include <stddef.h>

#define BUFPOOL_MIN ((size_t)64 << 10)

/* A 64-byte aligned block of at least `bytes` bytes, or NULL (out of memory
 * or an injected allocation failure, see ir/mem.h). */
void *bufpool_alloc(size_t bytes);

/* Gives back a block from bufpool_alloc(bytes) (NULL is ignored). */
void bufpool_free(void *p, size_t bytes);

/* Unmaps every cached free block (tests; blocks in use are untouched). */
void bufpool_trim(void);

/* False when every block comes from the plain allocator (sanitizer build or
 * RELAYC_MALLOC_DEFAULT=1). */
bool bufpool_pooling(void);

/* Bytes held in free blocks waiting for reuse. */
size_t bufpool_cached_bytes(void);

#endif
