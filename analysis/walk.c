/* analysis/walk.c — the shared DAG walk (see walk.h). */
#include "analysis/walk.h"

#include <string.h>

#include "ir/ptrmap.h"

uint32_t walk_nchildren(const Expr *e) {
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

Expr *walk_child(const Expr *e, uint32_t i) {
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

typedef struct Frame {
  Expr *e;
  uint32_t next; /* next child to visit */
} Frame;

void walk_postorder(Expr *root, WalkList *out) {
  if (!root) return;
  PtrMap seen = {0};
  VEC(Frame) st = {0};
  ptrmap_put(&seen, root, 1);
  vec_push(st, ((Frame){root, 0}));
  while (st.len) {
    Frame *f = &st.data[st.len - 1];
    if (f->next < walk_nchildren(f->e)) {
      Expr *c = walk_child(f->e, f->next++);
      if (c && !ptrmap_get(&seen, c, NULL)) {
        ptrmap_put(&seen, c, 1);
        vec_push(st, ((Frame){c, 0}));
      }
      continue;
    }
    vec_push(*out, f->e);
    st.len--;
  }
  vec_free(st);
  ptrmap_free(&seen);
}

const Type *walk_type(const Type *t) {
  for (uint32_t guard = 0; t && t->kind == TYPE_UVAR && t->uvar.link && guard < (1u << 24); guard++)
    t = t->uvar.link;
  return t;
}

const Function *walk_find_def(const Module *m, const char *name) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, name) == 0) return m->defs[i]->fn;
  return NULL;
}
