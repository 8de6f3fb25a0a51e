/* ir/ptrmap.c — pointer-keyed hash map (see ptrmap.h). */
#include "ir/ptrmap.h"

#include <string.h>

#include "ir/mem.h"

static size_t ptrmap_hash(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static void ptrmap_grow(PtrMap *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  const void **keys = mem_calloc(ncap, sizeof *keys);
  int64_t *vals = mem_calloc(ncap, sizeof *vals);
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t j = ptrmap_hash(m->keys[i], ncap);
    while (keys[j]) j = (j + 1) & (ncap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  mem_free(m->keys);
  mem_free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = ncap;
}

int64_t *ptrmap_slot(PtrMap *m, const void *key) {
  if (2 * (m->len + 1) > m->cap) ptrmap_grow(m);
  size_t i = ptrmap_hash(key, m->cap);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->vals[i] = 0;
    m->len++;
  }
  return &m->vals[i];
}

int64_t *ptrmap_find(const PtrMap *m, const void *key) {
  if (!m->cap) return NULL;
  for (size_t i = ptrmap_hash(key, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
    if (m->keys[i] == key) return &m->vals[i];
  return NULL;
}

void ptrmap_put(PtrMap *m, const void *key, int64_t val) { *ptrmap_slot(m, key) = val; }

bool ptrmap_get(const PtrMap *m, const void *key, int64_t *val) {
  int64_t *v = ptrmap_find(m, key);
  if (v && val) *val = *v;
  return v != NULL;
}

void ptrmap_free(PtrMap *m) {
  mem_free(m->keys);
  mem_free(m->vals);
  memset(m, 0, sizeof *m);
}
