/* sema/scope.h — symbol tables for name resolution.
 *
 * Two structures, both keyed by NUL-terminated names and hashed (FNV-1a,
 * open addressing), so every lookup is O(1) on average:
 *
 *  - ScopeMap: a flat name → pointer map without deletion, remembering
 *    insertion order (for globals, type names, constructors, free variables).
 *  - Scope: a lexical scope stack. Each name has a chain of bindings, the
 *    newest first; scope_push hides older bindings of the name (also within
 *    the same block), scope_pop(mark) undoes every binding made since
 *    scope_mark() in LIFO order. A binding may start as a placeholder (value
 *    NULL): lookups skip it, and say so, until scope_fill gives it a value.
 *    Each binding carries a `group` tag chosen by the caller, used to detect a
 *    name repeated in one parameter list or one pattern.
 *
 *     Scope *s = scope_new();
 *     uint32_t mark = scope_mark(s);
 *     scope_push(s, "x", var, 0);
 *     ScopeHit h; Var *v = scope_lookup(s, "x", &h);   // var
 *     scope_pop(s, mark);                              // "x" unbound again
 *     scope_free(s);
 *
 * Memory comes from ir/mem.h; names are borrowed (they must outlive the table).
 */
#ifndef RELAYC_SEMA_SCOPE_H
#define RELAYC_SEMA_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ScopeMap ScopeMap;

ScopeMap *scope_map_new(void);
void scope_map_free(ScopeMap *m);
/* The value stored under `name`, or NULL. */
void *scope_map_get(const ScopeMap *m, const char *name);
/* Stores name → value unless the name is present. Returns the value already
 * present (the map is unchanged), or NULL when the pair was inserted. */
void *scope_map_put(ScopeMap *m, const char *name, void *value);
/* Replaces (or inserts) the value under `name`. */
void scope_map_set(ScopeMap *m, const char *name, void *value);
/* The key closest to `name` by edit distance, at most `cap`, earliest
 * inserted on ties; NULL if none. `*value` receives its value when non-NULL. */
const char *scope_map_suggest(const ScopeMap *m, const char *name, size_t cap, void **value);

typedef struct Scope Scope;

typedef struct ScopeHit {
  uint32_t group;          /* group tag of the binding found */
  bool skipped_placeholder; /* a placeholder binding of the name was passed over */
  uint32_t index;          /* the binding's index (its depth in the stack) */
} ScopeHit;

Scope *scope_new(void);
void scope_free(Scope *s);
/* Current depth of the binding stack, for scope_pop. */
uint32_t scope_mark(const Scope *s);
/* Removes every binding pushed since `mark` was taken. */
void scope_pop(Scope *s, uint32_t mark);
/* Binds `name` to `value` (NULL: a placeholder); returns the binding's index. */
uint32_t scope_push(Scope *s, const char *name, void *value, uint32_t group);
/* Gives placeholder `index` its value (it becomes visible). */
void scope_fill(Scope *s, uint32_t index, void *value);
/* The value of binding `index` (NULL: a placeholder, or popped). */
void *scope_at(const Scope *s, uint32_t index);
/* The newest visible binding of `name` (NULL if none); `hit` may be NULL. */
void *scope_lookup(const Scope *s, const char *name, ScopeHit *hit);
/* The visible name closest to `name` (edit distance at most `cap`), newest
 * binding first on ties; NULL if none. `*value` receives its value. */
const char *scope_suggest(const Scope *s, const char *name, size_t cap, void **value);

#endif
