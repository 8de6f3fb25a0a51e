/* ir/walk.c — visiting every distinct node of a DAG once, without recursion
 * (see walk.h). An explicit stack and a pointer-keyed state map: each node is
 * expanded once and visited after all its children, so a graph binding used
 * a thousand times costs one visit and a 100,000-long chain costs no C stack.
 */
#include "ir/walk.h"

#include "ir/mem.h"
#include "ir/ptrmap.h"

typedef VEC(Expr *) ExprVec;

/* Appends e's children (nested function bodies when enter_fns) to out. */
static void push_children(Expr *e, bool enter_fns, ExprVec *st) {
  switch (e->kind) {
  case EXPR_CALL:
    vec_push(*st, e->call.fn);
    for (uint32_t i = 0; i < e->call.nargs; i++) vec_push(*st, e->call.args[i]);
    break;
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) vec_push(*st, e->tuple.fields[i]);
    break;
  case EXPR_PROJ: vec_push(*st, e->proj.tuple); break;
  case EXPR_FN:
    if (enter_fns) vec_push(*st, e->fn->body);
    break;
  case EXPR_LET:
    vec_push(*st, e->let.value);
    vec_push(*st, e->let.body);
    break;
  case EXPR_IF:
    vec_push(*st, e->if_.cond);
    vec_push(*st, e->if_.then_);
    vec_push(*st, e->if_.else_);
    break;
  case EXPR_MATCH:
    vec_push(*st, e->match.scrut);
    for (uint32_t i = 0; i < e->match.nclauses; i++) vec_push(*st, e->match.clauses[i].body);
    break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: vec_push(*st, e->ref.arg); break;
  case EXPR_REF_WRITE:
    vec_push(*st, e->ref_write.ref);
    vec_push(*st, e->ref_write.value);
    break;
  default: break;
  }
}

void walk_post_order(Expr *root, bool enter_fns, ExprVisitFn visit, void *ud) {
  ExprVec st = {0}, kids = {0};
  PtrMap state = {0}; /* 1 = children pushed, 2 = visited */
  vec_push(st, root);
  while (st.len) {
    Expr *e = st.data[st.len - 1];
    int64_t *s = ptrmap_slot(&state, e);
    if (*s == 2) { st.len--; continue; }
    if (*s == 1) {
      *s = 2;
      st.len--;
      visit(e, ud);
      continue;
    }
    *s = 1;
    kids.len = 0;
    push_children(e, enter_fns, &kids);
    /* push in reverse so the first child is visited first */
    for (size_t i = kids.len; i-- > 0;) {
      const int64_t *ks = ptrmap_find(&state, kids.data[i]);
      if (!ks) vec_push(st, kids.data[i]);
    }
  }
  vec_free(st);
  vec_free(kids);
  ptrmap_free(&state);
}

static void count_one(Expr *e, void *ud) {
  (void)e;
  (*(uint64_t *)ud)++;
}

uint64_t module_node_count(Module *m) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn) walk_post_order(m->defs[i]->fn->body, true, count_one, &n);
  if (m->expr) walk_post_order(m->expr, true, count_one, &n);
  return n;
}


/* ---------------------------------------------------------- free variables */

typedef struct Fv {
  PtrMap bound, seen;
  ExprVarList *out;
} Fv;

static void bind_pattern(Fv *fv, const Pattern *p) {
  switch (p->kind) {
  case PAT_VAR: ptrmap_put(&fv->bound, p->var, 1); break;
  case PAT_CTOR:
    for (uint32_t i = 0; i < p->ctor.nargs; i++) bind_pattern(fv, p->ctor.args[i]);
    break;
  case PAT_TUPLE:
    for (uint32_t i = 0; i < p->tuple.n; i++) bind_pattern(fv, p->tuple.fields[i]);
    break;
  default: break;
  }
}

static void note_binders(Expr *e, void *ud) {
  Fv *fv = ud;
  if (e->kind == EXPR_LET) ptrmap_put(&fv->bound, e->let.var, 1);
  else if (e->kind == EXPR_FN)
    for (uint32_t i = 0; i < e->fn->nparams; i++) ptrmap_put(&fv->bound, e->fn->params[i], 1);
  else if (e->kind == EXPR_MATCH)
    for (uint32_t i = 0; i < e->match.nclauses; i++) bind_pattern(fv, e->match.clauses[i].pattern);
}

static void note_uses(Expr *e, void *ud) {
  Fv *fv = ud;
  if (e->kind != EXPR_VAR) return;
  Var *v = e->var.var;
  if (ptrmap_find(&fv->bound, v) || ptrmap_find(&fv->seen, v)) return;
  ptrmap_put(&fv->seen, v, 1);
  vec_push(*fv->out, v);
}

void fn_free_vars(const Function *f, const Var *exclude, ExprVarList *out) {
  Fv fv = {{0}, {0}, out};
  for (uint32_t i = 0; i < f->nparams; i++) ptrmap_put(&fv.bound, f->params[i], 1);
  if (exclude) ptrmap_put(&fv.bound, exclude, 1);
  walk_post_order(f->body, true, note_binders, &fv);
  walk_post_order(f->body, true, note_uses, &fv);
  ptrmap_free(&fv.bound);
  ptrmap_free(&fv.seen);
}
