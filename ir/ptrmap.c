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
  PtrMapSlot *slots = mem_calloc(ncap, sizeof *slots);
  for (size_t i = 0; i < m->cap; i++) {
    const void *k = m->slots[i].key;
    if (!k) continue;
    size_t j = ptrmap_hash(k, ncap);
    while (slots[j].key) j = (j + 1) & (ncap - 1);
    slots[j] = m->slots[i];
  }
  mem_free(m->slots);
  m->slots = slots;
  m->cap = ncap;
}

int64_t *ptrmap_slot(PtrMap *m, const void *key) {
  if (2 * (m->len + 1) > m->cap) ptrmap_grow(m);
  size_t mask = m->cap - 1, i = ptrmap_hash(key, m->cap);
  PtrMapSlot *s = m->slots;
  while (s[i].key && s[i].key != key) i = (i + 1) & mask;
  if (!s[i].key) {
    s[i].key = key;
    s[i].val = 0;
    m->len++;
  }
  return &s[i].val;
}

int64_t *ptrmap_find(const PtrMap *m, const void *key) {
  if (!m->cap) return NULL;
  size_t mask = m->cap - 1;
  PtrMapSlot *s = m->slots;
  for (size_t i = ptrmap_hash(key, m->cap); s[i].key; i = (i + 1) & mask)
    if (s[i].key == key) return &s[i].val;
  return NULL;
}

void ptrmap_reserve(PtrMap *m, size_t n) {
  while (2 * (n + 1) > m->cap) ptrmap_grow(m);
}

void ptrmap_put(PtrMap *m, const void *key, int64_t val) { *ptrmap_slot(m, key) = val; }

bool ptrmap_get(const PtrMap *m, const void *key, int64_t *val) {
  int64_t *v = ptrmap_find(m, key);
  if (v && val) *val = *v;
  return v != NULL;
}

void ptrmap_clear(PtrMap *m) {
  if (m->len) memset(m->slots, 0, m->cap * sizeof *m->slots);
  m->len = 0;
}

void ptrmap_free(PtrMap *m) {
  mem_free(m->slots);
  memset(m, 0, sizeof *m);
}
