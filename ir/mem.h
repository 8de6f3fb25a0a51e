/* ir/mem.h — the one allocation hook of relayc.
 *
 * All heap memory (arenas, growable vectors, runtime tensors) comes from
 * mem_malloc/mem_realloc/mem_free. A test can make the Nth allocation fail
 * (mem_fail_after) to exercise out-of-memory paths. When an allocation that
 * cannot be recovered from fails, mem_oom() prints a diagnostic and exits 3.
 *
 * The *_try variants return NULL on failure instead; use them where a caller
 * can report the failure as a value (a giant tensor from a corrupt file).
 */
#ifndef RELAYC_IR_MEM_H
#define RELAYC_IR_MEM_H

#include <stddef.h>

void *mem_malloc(size_t n);              /* never NULL (exits 3 on OOM) */
void *mem_calloc(size_t n, size_t size); /* never NULL; overflow-checked */
void *mem_realloc(void *p, size_t n);    /* never NULL */
void mem_free(void *p);
char *mem_strdup(const char *s);

void *mem_malloc_try(size_t n);          /* NULL on failure */
void *mem_aligned_try(size_t align, size_t n); /* NULL on failure; free with mem_free */

/* Testing: fail every allocation after `n` more have succeeded (-1: never). */
void mem_fail_after(long n);

/* For allocators built on other primitives (runtime/bufpool.c): counts one
 * allocation against mem_fail_after; true when it must fail. */
int mem_injected_failure(void);

_Noreturn void mem_oom(size_t requested);

/* True when memory checkers want plain malloc'ed blocks (an AddressSanitizer
 * build, or RELAYC_MALLOC_DEFAULT set to anything but "" or "0"): the
 * allocators built on mmap (arena payload regions, runtime/bufpool, the
 * prefault thread of ir/prefault.h) step aside. Decided once. */
int mem_plain_requested(void);

/* Growable array of anything, for building lists before freezing them in an arena.
 *     VEC(Expr *) v = {0}; vec_push(v, e); ... mem_free(v.data);           */
#define VEC(T) struct { T *data; size_t len, cap; }
#define vec_push(v, x) do {                                                    \
    if ((v).len == (v).cap) {                                                  \
      (v).cap = (v).cap ? (v).cap * 2 : 8;                                     \
      (v).data = mem_realloc((v).data, (v).cap * sizeof *(v).data);            \
    }                                                                          \
    (v).data[(v).len++] = (x);                                                 \
  } while (0)
#define vec_free(v) (mem_free((v).data), (v).data = NULL, (v).len = (v).cap = 0)

#endif
