/* transform/remove_unused.c — RemoveUnusedFunctions (spec/passes.md §3.2).
 *
 * From the entry functions (option entry_functions, default ["main"]; each
 * must exist), every global named anywhere in a reached function — called or
 * used as a value (`if (%p) { @g1 } else { @g2 }`), inside nested literals
 * too — is reached in turn; every other global function is deleted. Type
 * definitions always stay. A worklist over globals and one DAG walk per
 * reached function: linear in the module.
 */
#include <string.h>

#include "ir/build.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"
#include "transform/pass.h"

typedef struct Reach {
  PtrMap seen; /* GlobalDef* -> 1 */
  VEC(GlobalDef *) work;
} Reach;

static void reach(Reach *r, GlobalDef *g) {
  if (!g) return;
  int64_t *s = ptrmap_slot(&r->seen, g);
  if (*s) return;
  *s = 1;
  vec_push(r->work, g);
}

static void visit_global(Expr *e, void *ud) {
  if (e->kind == EXPR_GLOBAL) reach(ud, e->global.def);
}

bool pass_REMOVE_UNUSED(PassCtx *c) {
  Module *m = c->m;
  const AttrValue *v = pass_opt(c, "entry_functions");
  uint32_t n = v->kind == AV_ARRAY ? v->arr.n : 1;
  Reach r = {0};
  bool ok = true;
  for (uint32_t i = 0; i < n; i++) {
    const AttrValue *s = v->kind == AV_ARRAY ? v->arr.items[i] : v;
    char *name = arena_strndup(m->arena, s->s.chars, s->s.len);
    GlobalDef *g = module_find_global(m, name);
    if (!g) {
      diag_plain(c->d, DIAG_ERROR, "RemoveUnusedFunctions: entry function @%s does not exist", name);
      ok = false;
      continue;
    }
    reach(&r, g);
  }
  while (ok && r.work.len) {
    GlobalDef *g = r.work.data[--r.work.len];
    if (g->fn) walk_post_order(g->fn->body, true, visit_global, &r);
  }
  if (ok) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->ndefs; i++)
      if (ptrmap_find(&r.seen, m->defs[i])) m->defs[k++] = m->defs[i];
    m->ndefs = k;
  }
  ptrmap_free(&r.seen);
  vec_free(r.work);
  return ok;
}
