/* sema/scope.c — hashed name tables and the lexical scope stack (see scope.h).
 *
 * A ScopeMap keeps its entries in an array in insertion order and an open-
 * addressing slot table (linear probing, power-of-two size, load <= 1/2) of
 * entry indices + 1 (0 = empty slot). Entries are never deleted, so no
 * tombstones. A Scope interns each name once in its own ScopeMap; the entry's
 * `top` is the index of the newest binding of that name (-1: none), and each
 * binding links to the one it hides, so push, pop and lookup are O(1).
 */
#include "sema/scope.h"

#include <string.h>

#include "ir/diag.h"
#include "ir/mem.h"

typedef struct MapEntry {
  const char *key;
  uint32_t hash;
  int32_t top;  /* Scope only: newest binding of this name, -1 if none */
  void *value;  /* ScopeMap only */
} MapEntry;

struct ScopeMap {
  MapEntry *entries;
  uint32_t n, cap;
  uint32_t *slots; /* entry index + 1; 0 = empty */
  uint32_t nslots; /* power of two */
};

typedef struct Binding {
  uint32_t name;   /* entry index in the name table */
  int32_t prev;    /* binding of the same name this one hides, -1 if none */
  uint32_t group;
  void *value;     /* NULL: placeholder */
} Binding;

struct Scope {
  ScopeMap names;
  Binding *stack;
  uint32_t n, cap;
};

static uint32_t scope_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static void scope_rehash(ScopeMap *m, uint32_t nslots) {
  mem_free(m->slots);
  m->slots = mem_calloc(nslots, sizeof *m->slots);
  m->nslots = nslots;
  for (uint32_t i = 0; i < m->n; i++) {
    uint32_t j = m->entries[i].hash & (nslots - 1);
    while (m->slots[j]) j = (j + 1) & (nslots - 1);
    m->slots[j] = i + 1;
  }
}

/* Index of `key`'s entry, or -1. With `insert`, a missing key is added. */
static int64_t scope_find(ScopeMap *m, const char *key, bool insert) {
  if (!insert && !m->n) return -1; /* (a module without constructors asks its empty map at every name) */
  uint32_t h = scope_hash(key);
  if (m->nslots) {
    for (uint32_t j = h & (m->nslots - 1);; j = (j + 1) & (m->nslots - 1)) {
      uint32_t s = m->slots[j];
      if (!s) break;
      MapEntry *e = &m->entries[s - 1];
      /* the parser interns names: the same name is mostly the same pointer */
      if (e->hash == h && (e->key == key || strcmp(e->key, key) == 0)) return s - 1;
    }
  }
  if (!insert) return -1;
  if (m->n == m->cap) {
    m->cap = m->cap ? m->cap * 2 : 16;
    m->entries = mem_realloc(m->entries, m->cap * sizeof *m->entries);
  }
  m->entries[m->n] = (MapEntry){key, h, -1, NULL};
  m->n++;
  if (2 * m->n > m->nslots) {
    scope_rehash(m, m->nslots ? m->nslots * 2 : 32);
  } else {
    uint32_t j = h & (m->nslots - 1);
    while (m->slots[j]) j = (j + 1) & (m->nslots - 1);
    m->slots[j] = m->n;
  }
  return m->n - 1;
}

static void scope_map_release(ScopeMap *m) {
  mem_free(m->entries);
  mem_free(m->slots);
}

ScopeMap *scope_map_new(void) { return mem_calloc(1, sizeof(ScopeMap)); }

void scope_map_free(ScopeMap *m) {
  if (!m) return;
  scope_map_release(m);
  mem_free(m);
}

void *scope_map_get(const ScopeMap *m, const char *name) {
  int64_t i = scope_find((ScopeMap *)m, name, false);
  return i < 0 ? NULL : m->entries[i].value;
}

void *scope_map_put(ScopeMap *m, const char *name, void *value) {
  uint32_t before = m->n;
  int64_t i = scope_find(m, name, true);
  if (m->n == before) return m->entries[i].value;
  m->entries[i].value = value;
  return NULL;
}

void scope_map_set(ScopeMap *m, const char *name, void *value) {
  int64_t i = scope_find(m, name, true); /* may grow m->entries */
  m->entries[i].value = value;
}

const char *scope_map_suggest(const ScopeMap *m, const char *name, size_t cap, void **value) {
  const char *best = NULL;
  size_t best_d = cap + 1;
  for (uint32_t i = 0; i < m->n; i++) {
    if (!m->entries[i].value) continue;
    size_t dist = edit_distance(name, m->entries[i].key, cap);
    if (dist < best_d && dist > 0) {
      best_d = dist;
      best = m->entries[i].key;
      if (value) *value = m->entries[i].value;
    }
  }
  return best;
}

Scope *scope_new(void) { return mem_calloc(1, sizeof(Scope)); }

void scope_free(Scope *s) {
  if (!s) return;
  scope_map_release(&s->names);
  mem_free(s->stack);
  mem_free(s);
}

uint32_t scope_mark(const Scope *s) { return s->n; }

void scope_pop(Scope *s, uint32_t mark) {
  while (s->n > mark) {
    Binding *b = &s->stack[--s->n];
    s->names.entries[b->name].top = b->prev;
  }
}

uint32_t scope_push(Scope *s, const char *name, void *value, uint32_t group) {
  uint32_t idx = (uint32_t)scope_find(&s->names, name, true);
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 64;
    s->stack = mem_realloc(s->stack, s->cap * sizeof *s->stack);
  }
  MapEntry *e = &s->names.entries[idx];
  s->stack[s->n] = (Binding){idx, e->top, group, value};
  e->top = (int32_t)s->n;
  return s->n++;
}

void scope_fill(Scope *s, uint32_t index, void *value) {
  RELAYC_ASSERT(index < s->n);
  s->stack[index].value = value;
}

void *scope_at(const Scope *s, uint32_t index) { return index < s->n ? s->stack[index].value : NULL; }

void *scope_lookup(const Scope *s, const char *name, ScopeHit *hit) {
  if (hit) *hit = (ScopeHit){0, false, 0};
  int64_t i = scope_find((ScopeMap *)&s->names, name, false);
  if (i < 0) return NULL;
  for (int32_t b = s->names.entries[i].top; b >= 0; b = s->stack[b].prev) {
    if (s->stack[b].value) {
      if (hit) {
        hit->group = s->stack[b].group;
        hit->index = (uint32_t)b;
      }
      return s->stack[b].value;
    }
    if (hit) hit->skipped_placeholder = true;
  }
  return NULL;
}

const char *scope_suggest(const Scope *s, const char *name, size_t cap, void **value) {
  const char *best = NULL;
  size_t best_d = cap + 1;
  for (uint32_t b = s->n; b-- > 0;) {
    const Binding *bd = &s->stack[b];
    const char *key = s->names.entries[bd->name].key;
    if (!bd->value || !*key || scope_lookup(s, key, NULL) != bd->value) continue;
    size_t dist = edit_distance(name, key, cap);
    if (dist < best_d && dist > 0) {
      best_d = dist;
      best = key;
      if (value) *value = bd->value;
    }
  }
  return best;
}
