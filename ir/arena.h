/* ir/arena.h — region allocator: one arena per module.
 *
 * Every token, AST node, type and constraint of a compilation is carved out of
 * one Arena and released by a single arena_free(). Small requests are bumped
 * out of chunks; large ones (tensor payloads from the metadata section) get
 * their own block, still owned and freed by the arena. Allocation never
 * returns NULL: on exhaustion the process reports out-of-memory and exits 3
 * (see ir/mem.h), so callers need no failure paths for AST construction.
 *
 *     Arena *a = arena_new();
 *     Expr *e = arena_alloc(a, sizeof *e);
 *     ...
 *     arena_free(a);              // everything above is gone
 */
#ifndef RELAYC_IR_ARENA_H
#define RELAYC_IR_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct Arena Arena;

Arena *arena_new(void);
/* An arena whose chunks are huge-page mappings from the first: a pass's
 * scratch arena that will hold megabytes (the small first chunks of
 * arena_new are malloc'ed, faulted in 4 KiB at a time). */
Arena *arena_new_huge(void);
void arena_free(Arena *a);
/* Everything allocated so far is gone, but the newest (largest) chunk stays
 * for the next allocations: a scratch arena reset per unit of work (a
 * function) reuses the same, already faulted-in pages instead of asking the
 * kernel for fresh ones, which it must clear (the dominant cost of a pass
 * that builds millions of nodes on this kind of machine). */
void arena_reset(Arena *a);

/* The free window of the arena's current chunk: public only for the inline
 * fast path below. Every byte of a chunk is zero until handed out. */
typedef struct ArenaWindow {
  unsigned char *next, *end;
} ArenaWindow;

/* Zeroed memory aligned to `align` (a power of two, at most 4096). */
void *arena_alloc_slow(Arena *a, size_t size, size_t align);
static inline void *arena_alloc_aligned(Arena *a, size_t size, size_t align) {
  ArenaWindow *w = (ArenaWindow *)a; /* the first member of struct Arena */
  uintptr_t p = ((uintptr_t)w->next + (align - 1)) & ~(uintptr_t)(align - 1);
  if (w->next && p <= (uintptr_t)w->end && size <= (uintptr_t)w->end - p) {
    w->next = (unsigned char *)(p + size);
    return (void *)p;
  }
  return arena_alloc_slow(a, size, align);
}
/* Zeroed memory aligned to 16 bytes. */
static inline void *arena_alloc(Arena *a, size_t size) { return arena_alloc_aligned(a, size, 16); }
/* Uninitialised memory aligned to 64 bytes, for large payloads (tensor data). */
void *arena_alloc_big(Arena *a, size_t size);

/* Copies of strings; the result is NUL-terminated. */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
/* Copy of an array of `n` pointers (used to freeze growable lists). */
void *arena_memdup(Arena *a, const void *p, size_t size);

/* Bytes handed out so far (for memory benchmarks). */
size_t arena_used(const Arena *a);

#endif
