/* transform/gradient_syntax.c — expanding `gradient(F)` (see gradient_syntax.h).
 *
 * Each round expands the gradient calls whose function is "ready": its body,
 * and the bodies of the globals it reaches, contain no gradient call. Then the
 * module is re-typed, since the transform needs the types of what it
 * differentiates. A round that expands nothing while calls remain means the
 * gradients depend on each other in a cycle (e.g. a global differentiating
 * itself): an error, never a loop.
 */
#include "transform/gradient_syntax.h"

#include <string.h>

#include "ir/mem.h"

#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "sema/infer.h"
#include "transform/gradient.h"
#include "transform/rewrite.h"

typedef VEC(Expr *) ExprList;

static void note_grad_call(Expr *e, void *ud) {
  if (op_call_id(e) == OP_GRADIENT) vec_push(*(ExprList *)ud, e);
}

static void calls_in(Expr *root, ExprList *out) { walk_post_order(root, true, note_grad_call, out); }

bool gradient_syntax_used(Module *m) {
  if (!m->mentions_gradient) return false; /* no operator `gradient` was resolved */
  ExprList l = {0};
  for (uint32_t i = 0; i < m->ndefs && !l.len; i++)
    if (m->defs[i]->fn) calls_in(m->defs[i]->fn->body, &l);
  if (m->expr && !l.len) calls_in(m->expr, &l);
  bool used = l.len > 0;
  vec_free(l);
  return used;
}

/* Globals reachable from root (through global references). */
typedef struct Reach {
  PtrMap seen;
  VEC(GlobalDef *) todo;
} Reach;

static void note_global(Expr *e, void *ud) {
  Reach *r = ud;
  if (e->kind == EXPR_GLOBAL && e->global.def && e->global.def->fn && !ptrmap_find(&r->seen, e->global.def)) {
    ptrmap_put(&r->seen, e->global.def, 1);
    vec_push(r->todo, e->global.def);
  }
}

/* Does f (or a global it reaches) still call gradient? */
static bool uses_gradient(Function *f) {
  Reach r = {0};
  ExprList l = {0};
  calls_in(f->body, &l);
  walk_post_order(f->body, true, note_global, &r);
  for (size_t i = 0; i < r.todo.len && !l.len; i++) {
    calls_in(r.todo.data[i]->fn->body, &l);
    walk_post_order(r.todo.data[i]->fn->body, true, note_global, &r);
  }
  bool used = l.len > 0;
  vec_free(l);
  vec_free(r.todo);
  ptrmap_free(&r.seen);
  return used;
}

typedef struct Round {
  PtrMap replace; /* gradient call -> its expansion */
} Round;

static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  Round *rd = rw->ud;
  int64_t v;
  if (ptrmap_get(&rd->replace, old, &v)) return (Expr *)(intptr_t)v;
  return e;
}

/* One round; returns the number of calls expanded, -1 on error. */
static int expand_round(Module *m, Diag *d) {
  ExprList calls = {0};
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn) calls_in(m->defs[i]->fn->body, &calls);
  if (m->expr) calls_in(m->expr, &calls);
  Round rd = {0};
  int n = 0;
  for (size_t i = 0; i < calls.len && n >= 0; i++) {
    Expr *call = calls.data[i];
    Expr *f = call->call.args[0];
    Function *fn = f->kind == EXPR_GLOBAL && f->global.def ? f->global.def->fn : f->kind == EXPR_FN ? f->fn : NULL;
    if (!fn) {
      diag_error(d, f->span, "gradient(F) needs a global function or a function literal here");
      n = -1;
      break;
    }
    if (uses_gradient(fn)) continue; /* its inner gradients first */
    Expr *g = gradient_of_function(m, fn, GRAD_HIGHER_ORDER, d);
    if (!g) {
      n = -1;
      break;
    }
    /* the transform reuses F's parameters: give the literal binders of its own */
    g = rw_copy_fresh(m, d, g, NULL, NULL, 0);
    ptrmap_put(&rd.replace, call, (int64_t)(intptr_t)g);
    n++;
  }
  if (n > 0) {
    Rewriter rw;
    rw_init(&rw, m, d);
    rw.post = post;
    rw.ud = &rd;
    for (uint32_t i = 0; i < m->ndefs; i++)
      if (m->defs[i]->fn) rw_function(&rw, m->defs[i]->fn);
    if (m->expr) m->expr = rw_expr(&rw, m->expr);
    rw_fini(&rw);
  }
  if (n == 0 && calls.len) {
    diag_error(d, calls.data[0]->span,
               "these gradients depend on each other in a cycle (a function differentiating itself)");
    n = -1;
  }
  ptrmap_free(&rd.replace);
  vec_free(calls);
  return n;
}

bool gradient_syntax_expand(Module *m, Diag *d) {
  for (;;) {
    int before = d->nerrors;
    int n = expand_round(m, d);
    if (n < 0 || d->nerrors > before) return false;
    if (n == 0) return true;
    infer_clear(m);
    if (!infer_module(m, d)) return false;
    if (!gradient_syntax_used(m)) return true;
  }
}
