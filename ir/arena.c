/* ir/arena.c — bump allocator over a list of chunks (see arena.h).
 * Chunks grow geometrically from 4 KiB up to HUGE_CHUNK, so a module of any
 * size costs O(log n) + size/HUGE_CHUNK mallocs plus one per big payload.
 * Large chunks are 2 MiB-aligned and advised as transparent huge pages: on a
 * 20 MB module first-touch page faults otherwise dominate parsing time.
 * From an arena's second huge chunk on, chunks come from ir/prefault.h,
 * faulted in ahead by a background thread while the arena fills.
 *
 * Big payloads (tensor data decoded from the metadata section) of at least
 * PAYLOAD_MIN bytes are bumped out of their own huge-page regions rather than
 * malloc'ed one by one: on the dev VM a fresh 4 KiB page costs ~10 µs to
 * fault in, MADV_POPULATE_WRITE ~2.5 µs, a 2 MiB huge page ~0.3 µs per 4 KiB
 * (100 MB: 280 ms touched, 65 ms populated, 6-8 ms as huge pages). A region
 * is never touched beyond what was handed out, so resident memory grows by at
 * most one partial huge page per region. Sanitizer builds and
 * RELAYC_MALLOC_DEFAULT=1 (as for runtime/bufpool) keep one malloc per payload
 * so ASan/valgrind see every buffer.
 *
 * Every chunk is zero when made (a fresh mapping, or calloc) and every byte
 * is handed out once, so allocation is a bump with no memset; the bump
 * window of the current chunk (ArenaWindow, the first member of Arena) is
 * inlined into callers (arena.h). arena_reset clears the bytes handed out
 * of the newest chunk and keeps it: pages the process already has cost a
 * memset (~0.03 ms/MB here), fresh ones a kernel clear and fault (0.2-1.5
 * ms/MB on the dev VM). */
#include "ir/arena.h"
#include "ir/mem.h"
#include "ir/prefault.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2u << 20, HUGE_CHUNK = 8u << 20 };
enum { PAYLOAD_MIN = 256u << 10, PAYLOAD_REGION = 32u << 20, PAYLOAD_ALIGN = 64 };

typedef struct Chunk {
  struct Chunk *next;
  size_t size, used; /* `used` of the current chunk lives in the window until it is retired */
  size_t mapped;     /* bytes mmap'ed for a huge chunk (fresh, zero pages), else 0 */
  _Alignas(16) unsigned char data[];
} Chunk;

typedef struct Big {
  struct Big *next;
  void *ptr;
} Big;

struct Arena {
  ArenaWindow win;   /* free part of chunks (the newest); first member: arena.h reads it */
  Chunk *chunks;
  Chunk *payloads; /* huge-page regions for big payloads, newest first */
  Big *bigs;
  size_t next_size;
  size_t total;      /* bytes of retired chunks and big blocks (arena_used adds the window's) */
};

/* A huge chunk of `size` bytes; `ahead`: from the chunks made ready ahead (ir/prefault.h). */
static Chunk *map_huge(size_t size, bool ahead) {
  Chunk *c = ahead ? huge_map_ahead(size) : huge_map(size);
  c->mapped = size;
  return c;
}

Arena *arena_new(void) {
  Arena *a = mem_calloc(1, sizeof *a);
  a->next_size = 4096;
  return a;
}

Arena *arena_new_huge(void) {
  Arena *a = arena_new();
  a->next_size = HUGE_CHUNK;
  return a;
}

static void free_chunks(Chunk *c) {
  for (Chunk *n; c; c = n) {
    n = c->next;
    if (c->mapped) munmap(c, c->mapped);
    else mem_free(c);
  }
}

/* The payload regions and big blocks go (arena_free, arena_reset). */
static void free_big_blocks(Arena *a) {
  free_chunks(a->payloads);
  for (Big *b = a->bigs, *n; b; b = n) { n = b->next; mem_free(b->ptr); mem_free(b); }
  a->payloads = NULL;
  a->bigs = NULL;
}

void arena_free(Arena *a) {
  if (!a) return;
  free_chunks(a->chunks);
  free_big_blocks(a);
  mem_free(a);
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
  c = map_huge(want, false);
  c->size = want - sizeof(Chunk);
  size_t off = (size_t)(-(uintptr_t)c->data & (PAYLOAD_ALIGN - 1));
  c->used = off + size;
  c->next = a->payloads;
  a->payloads = c;
  return c->data + off;
}

void *arena_alloc_big(Arena *a, size_t size) {
  if (size >= PAYLOAD_MIN && !mem_plain_requested()) {
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

/* Closes the window: the current chunk's used bytes are counted. */
static void retire_window(Arena *a) {
  Chunk *c = a->chunks;
  if (!c || !a->win.next) return;
  c->used = (size_t)(a->win.next - c->data);
  a->total += c->used;
  a->win.next = a->win.end = NULL;
}

static void open_window(Arena *a, Chunk *c) {
  a->win.next = c->data + c->used;
  a->win.end = c->data + c->size;
}

void *arena_alloc_slow(Arena *a, size_t size, size_t align) {
  if (size >= 64 * 1024) {
    void *p = arena_alloc_big(a, size);
    memset(p, 0, size);
    return p;
  }
  retire_window(a);
  size_t want = a->next_size;
  while (want < size + align) want *= 2;
  if (a->next_size < HUGE_CHUNK) a->next_size *= 2;
  Chunk *c;
  if (want >= HUGE_CHUNK) {
    /* growing past one huge chunk: the next ones are faulted in ahead */
    c = map_huge(want, a->chunks && a->chunks->mapped == want);
    want -= sizeof(Chunk);
  } else {
    c = mem_calloc(1, sizeof(Chunk) + want); /* zero, as a fresh mapping is */
    c->mapped = 0;
  }
  c->size = want;
  uintptr_t base = (uintptr_t)c->data;
  size_t off = (size_t)(((base + align - 1) & ~(uintptr_t)(align - 1)) - base);
  c->used = off + size;
  c->next = a->chunks;
  a->chunks = c;
  open_window(a, c);
  return c->data + off;
}

void arena_reset(Arena *a) {
  retire_window(a);
  Chunk *keep = a->chunks;
  if (keep) {
    free_chunks(keep->next);
    memset(keep->data, 0, keep->used); /* back to all zero: pages kept, not refaulted */
    keep->used = 0;
    keep->next = NULL;
  }
  free_big_blocks(a);
  a->chunks = keep;
  a->total = 0;
  if (keep) open_window(a, keep);
}

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

size_t arena_used(const Arena *a) {
  return a->total + (a->chunks && a->win.next ? (size_t)(a->win.next - a->chunks->data) : 0);
}
