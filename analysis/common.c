/* analysis/common.c — children by position, the post-order list, type and
 * definition lookups (see common.h). */
#include "analysis/common.h"

#include <string.h>

#include "ir/walk.h"

uint32_t an_nchildren(const Expr *e) {
  switch (e->kind) {
  case EXPR_CALL: return 1 + e->call.nargs;
  case EXPR_TUPLE: return e->tuple.n;
  case EXPR_PROJ: return 1;
  case EXPR_FN: return 1;
  case EXPR_LET: return 2;
  case EXPR_IF: return 3;
  case EXPR_MATCH: return 1 + e->match.nclauses;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: return 1;
  case EXPR_REF_WRITE: return 2;
  default: return 0;
  }
}

Expr *an_child(const Expr *e, uint32_t i) {
  switch (e->kind) {
  case EXPR_CALL: return i == 0 ? e->call.fn : e->call.args[i - 1];
  case EXPR_TUPLE: return e->tuple.fields[i];
  case EXPR_PROJ: return e->proj.tuple;
  case EXPR_FN: return e->fn->body;
  case EXPR_LET: return i == 0 ? e->let.value : e->let.body;
  case EXPR_IF: return i == 0 ? e->if_.cond : i == 1 ? e->if_.then_ : e->if_.else_;
  case EXPR_MATCH: return i == 0 ? e->match.scrut : e->match.clauses[i - 1].body;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: return e->ref.arg;
  case EXPR_REF_WRITE: return i == 0 ? e->ref_write.ref : e->ref_write.value;
  default: return NULL;
  }
}

static void append(Expr *e, void *ud) {
  AnList *out = ud;
  vec_push(*out, e);
}

void an_postorder(Expr *root, AnList *out) {
  if (root) walk_post_order(root, true, append, out);
}

const Function *an_find_def(const Module *m, const char *name) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, name) == 0) return m->defs[i]->fn;
  return NULL;
}
