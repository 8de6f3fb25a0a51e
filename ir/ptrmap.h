/* ir/ptrmap.h — a hash map from pointers to int64 values.
 *
 * Passes over the DAG (printing, equality, lowering, folding) key side tables
 * by node address. Open addressing with linear probing, load factor ≤ 1/2;
 * a zero-initialised PtrMap is empty. Keys are never removed. A key and its
 * value share one slot (one cache line per probe: the maps of a 100,000-node
 * pass are far bigger than the caches). Iterate with
 * `for (i < m.cap) if (m.slots[i].key) ... m.slots[i].val`.
 *
 *     PtrMap uses = {0};
 *     (*ptrmap_slot(&uses, e))++;          // count a parent of e
 *     int64_t n;
 *     if (ptrmap_get(&uses, e, &n)) ...
 *     ptrmap_free(&uses);
 */
#ifndef RELAYC_IR_PTRMAP_H
#define RELAYC_IR_PTRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct PtrMapSlot {
  const void *key; /* NULL: empty */
  int64_t val;
} PtrMapSlot;

typedef struct PtrMap {
  PtrMapSlot *slots;
  size_t cap, len;
} PtrMap;

/* The value of `key`, inserted as 0 when absent. Valid until the next insertion. */
int64_t *ptrmap_slot(PtrMap *m, const void *key);
/* The value of `key`, or NULL when absent. */
int64_t *ptrmap_find(const PtrMap *m, const void *key);
void ptrmap_put(PtrMap *m, const void *key, int64_t val);
/* True when present; the value is stored in *val when val is non-NULL. */
bool ptrmap_get(const PtrMap *m, const void *key, int64_t *val);
/* Room for n keys without growing (a pass that knows how many it will put). */
void ptrmap_reserve(PtrMap *m, size_t n);
/* Empties the map, keeping its slots for reuse (one map serving many small walks). */
void ptrmap_clear(PtrMap *m);
void ptrmap_free(PtrMap *m);

#endif
