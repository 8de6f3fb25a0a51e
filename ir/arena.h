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

typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);

/* Zeroed memory aligned to 16 bytes. */
void *arena_alloc(Arena *a, size_t size);
/* Zeroed memory aligned to `align` (a power of two, at most 4096). */
void *arena_alloc_aligned(Arena *a, size_t size, size_t align);
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
