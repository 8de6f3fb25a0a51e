/* ir/fresh_name.c — spelling pass-made names "prefix_N" (see fresh_name.h),
 * and var_name (ast.h), which spells a fresh variable's name the first time
 * it is asked for and keeps it.
 *
 * Spelled names live in a process-wide store of chunks that is never freed:
 * a Var does not know its module, and the names asked for are few (messages,
 * graph dumps, @main's parameters), not the millions a pass makes.
 */
#include "ir/fresh_name.h"
#include "ir/ast.h"
#include "ir/mem.h"

#include <pthread.h>
#include <string.h>

static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                  "8081828384858687888990919293949596979899";

/* The decimal digits of n into buf (at least 10 bytes); their count. */
static size_t put_number(char *buf, uint32_t n) {
  char tmp[10];
  char *end = tmp + sizeof tmp, *p = end;
  for (; n >= 100; n /= 100) {
    p -= 2;
    p[0] = digit_pairs[2 * (n % 100)];
    p[1] = digit_pairs[2 * (n % 100) + 1];
  }
  if (n >= 10) {
    p -= 2;
    p[0] = digit_pairs[2 * n];
    p[1] = digit_pairs[2 * n + 1];
  } else {
    *--p = (char)('0' + n);
  }
  size_t len = (size_t)(end - p);
  memcpy(buf, p, len);
  return len;
}

size_t fresh_name_format(char *buf, const char *prefix, uint32_t n) {
  size_t len = 0;
  while (len < FRESH_NAME_MAX && prefix[len]) {
    buf[len] = prefix[len];
    len++;
  }
  char tail[1 + 10];
  tail[0] = '_';
  size_t nt = 1 + put_number(tail + 1, n);
  for (size_t i = 0; i < nt && len < FRESH_NAME_MAX; i++) buf[len++] = tail[i];
  buf[len] = 0;
  return len;
}

/* ---- the store of spelled names */

typedef struct NameChunk {
  struct NameChunk *next;
  size_t used, cap;
  char text[];
} NameChunk;

static NameChunk *chunks; /* newest first; reachable until exit */
static pthread_mutex_t chunks_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *store(const char *s, size_t len) {
  pthread_mutex_lock(&chunks_lock);
  if (!chunks || chunks->cap - chunks->used < len + 1) {
    size_t cap = 16384;
    NameChunk *c = mem_malloc(sizeof *c + cap);
    c->next = chunks;
    c->used = 0;
    c->cap = cap;
    chunks = c;
  }
  char *d = chunks->text + chunks->used;
  memcpy(d, s, len + 1);
  chunks->used += len + 1;
  pthread_mutex_unlock(&chunks_lock);
  return d;
}

_Static_assert(VAR_NAME_BUF == FRESH_NAME_MAX + 1, "var_name_in's buffer holds a cut name");

const char *var_name_in(const Var *v, char buf[VAR_NAME_BUF]) {
  if (!v->fresh) return v->name_;
  fresh_name_format(buf, v->name_, v->fresh - 1);
  return buf;
}

const char *var_name(const Var *v) {
  if (!v->fresh) return v->name_;
  char buf[VAR_NAME_BUF];
  const char *spelled = var_name_in(v, buf);
  Var *w = (Var *)v; /* spelled once: later questions read it */
  w->name_ = store(spelled, strlen(spelled));
  w->fresh = 0;
  return w->name_;
}
