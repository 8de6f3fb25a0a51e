/* ir/arena.c — bump allocator over a list of chunks (see arena.h).
 * Chunks grow geometrically from 4 KiB up to HUGE_CHUNK, so a module of any
 * size costs O(log n) + size/HUGE_CHUNK mallocs plus one per big payload.
 * Large chunks are 2 MiB-aligned and advised as transparent huge pages: on a
 * 20 MB module first-touch page faults otherwise dominate parsing time.
 *
 * Big payloads (tensor data decoded from the metadata section) of at least
 * PAYLOAD_MIN bytes are bumped out of their own huge-page regions rather than
 * malloc'ed one by one: on the dev VM a fresh 4 KiB page costs ~10 µs to
 * fault in, MADV_POPULATE_WRITE ~2.5 µs, a 2 MiB huge page ~0.3 µs per 4 KiB
 * (100 MB: 280 ms touched, 65 ms populated, 6-8 ms as huge pages). A region
 * is never touched beyond what was handed out, so resident memory grows by at
 * most one partial huge page per region. Sanitizer builds and
 * RELAYC_MALLOC_DEFAULT=1 (as for runtime/bufpool) keep one malloc per payload
 * so ASan/valgrind see every buffer. */
#include "ir/arena.h"
#include "ir/mem.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2u << 20, HUGE_CHUNK = 8u << 20 };
enum { PAYLOAD_MIN = 256u << 10, PAYLOAD_REGION = 32u << 20, PAYLOAD_ALIGN = 64 };

typedef struct Chunk {
  struct Chunk *next;
  size_t size, used;
  size_t mapped;     /* bytes mmap'ed for a huge chunk (fresh, zero pages), else 0 */
  _Alignas(16) unsigned char data[];
} Chunk;

typedef struct Big {
  struct Big *next;
  void *ptr;
} Big;

struct Arena {
  Chunk *chunks;
  Chunk *payloads; /* huge-page regions for big payloads, newest first */
  Big *bigs;
  size_t next_size;
  size_t total;
};

/* A 2 MiB-aligned anonymous mapping of `size` bytes advised as huge pages. */
static Chunk *map_huge(size_t size) {
  size_t len = size + HUGE_PAGE;
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) mem_oom(size);
  uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  size_t head = start - (uintptr_t)p, tail = len - head - size;
  if (head) munmap(p, head);
  if (tail) munmap((unsigned char *)start + size, tail);
#ifdef MADV_HUGEPAGE
  madvise((void *)start, size, MADV_HUGEPAGE);
#endif
  Chunk *c = (Chunk *)start;
  c->mapped = size;
  return c;
}

Arena *arena_new(void) {
  Arena *a = mem_calloc(1, sizeof *a);
  a->next_size = 4096;
  return a;
}

void arena_free(Arena *a) {
  if (!a) return;
  for (Chunk *c = a->chunks, *n; c; c = n) {
    n = c->next;
    if (c->mapped) munmap(c, c->mapped);
    else mem_free(c);
  }
  for (Chunk *c = a->payloads, *n; c; c = n) {
    n = c->next;
    munmap(c, c->mapped);
  }
  for (Big *b = a->bigs, *n; b; b = n) { n = b->next; mem_free(b->ptr); mem_free(b); }
  mem_free(a);
}

/* Whether big payloads go to huge-page regions (decided once). */
static bool payload_regions_enabled(void) {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#else
  static int on = -1; /* racing first calls compute the same answer */
  int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *e = getenv("RELAYC_MALLOC_DEFAULT");
    v = !(e && *e && strcmp(e, "0") != 0);
    __atomic_store_n(&on, v, __ATOMIC_RELAXED);
  }
  return v;
#endif
}

/* `size` bytes (>= PAYLOAD_MIN) from the newest payload region, or a new one. */
static void *payload_alloc(Arena *a, size_t size) {
  Chunk *c = a->payloads;
  if (c) {
    size_t off = (c->used + PAYLOAD_ALIGN - 1) & ~(size_t)(PAYLOAD_ALIGN - 1);
    if (off <= c->size && size <= c->size - off) {
      c->used = off + size;
      return c->data + off;
    }
  }
  if (mem_injected_failure() || size > SIZE_MAX / 2) mem_oom(size);
  size_t want = size + sizeof(Chunk) + PAYLOAD_ALIGN;
  want = want < PAYLOAD_REGION ? PAYLOAD_REGION : (want + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
  c = map_huge(want);
  c->size = want - sizeof(Chunk);
  size_t off = (size_t)(-(uintptr_t)c->data & (PAYLOAD_ALIGN - 1));
  c->used = off + size;
  c->next = a->payloads;
  a->payloads = c;
  return c->data + off;
}

void *arena_alloc_big(Arena *a, size_t size) {
  if (size >= PAYLOAD_MIN && payload_regions_enabled()) {
    a->total += size;
    return payload_alloc(a, size);
  }
  void *p = mem_aligned_try(64, size);
  if (!p) mem_oom(size);
  Big *b = mem_malloc(sizeof *b);
  b->ptr = p;
  b->next = a->bigs;
  a->bigs = b;
  a->total += size;
  return p;
}

void *arena_alloc_aligned(Arena *a, size_t size, size_t align) {
  if (size >= 64 * 1024) {
    void *p = arena_alloc_big(a, size);
    memset(p, 0, size);
    return p;
  }
  Chunk *c = a->chunks;
  if (c) {
    uintptr_t base = (uintptr_t)c->data;
    size_t off = (size_t)(((base + c->used + align - 1) & ~(uintptr_t)(align - 1)) - base);
    if (off + size <= c->size) {
      c->used = off + size;
      a->total += size;
      /* a fresh mapping is already zero: touching it twice would double the page-fault cost */
      return c->mapped ? c->data + off : memset(c->data + off, 0, size);
    }
  }
  size_t want = a->next_size;
  while (want < size + align) want *= 2;
  if (a->next_size < HUGE_CHUNK) a->next_size *= 2;
  if (want >= HUGE_CHUNK) {
    c = map_huge(want);
    want -= sizeof(Chunk);
  } else {
    c = mem_malloc(sizeof(Chunk) + want);
    c->mapped = 0;
  }
  c->size = want;
  uintptr_t base = (uintptr_t)c->data;
  size_t off = (size_t)(((base + align - 1) & ~(uintptr_t)(align - 1)) - base);
  c->used = off + size;
  c->next = a->chunks;
  a->chunks = c;
  a->total += size;
  return c->mapped ? c->data + off : memset(c->data + off, 0, size);
}

void *arena_alloc(Arena *a, size_t size) { return arena_alloc_aligned(a, size, 16); }

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc_aligned(a, n + 1, 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

void *arena_memdup(Arena *a, const void *p, size_t size) {
  void *q = arena_alloc(a, size);
  if (size) memcpy(q, p, size);
  return q;
}

size_t arena_used(const Arena *a) { return a->total; }
