/* sema/typeof.c — types of pass-built nodes from their children (see typeof.h).
 *
 * Each rule mirrors what sema/infer.c does for that kind of node when every
 * child already has a ground type, so a full inference gives the same type
 * (RELAYC_VERIFY_RETYPE checks it): a tuple's type is the tuple of its
 * fields', a projection's the field's, a let's its body's, a function
 * literal's fn(param types) -> body type, a call of a monomorphic function
 * its result type when the arguments match, an operator call's the result of
 * its relation. Anything less certain is left untyped: the runner's
 * re-typing infers it. Trade-off: ref_write, if and calls compare types
 * structurally (type_equal) so a node whose children disagree is never
 * given a type that would hide the error from the re-typing.
 */
#include "sema/typeof.h"

#include <string.h>

#include "ir/diag.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ops/registry.h"
#include "ops/relations/type_rel.h"
#include "sema/call_memo.h"
#include "sema/infer.h"

bool typeof_ground(const Type *t) {
  if (!t || stack_exhausted()) return false;
  switch (t->kind) {
  case TYPE_TENSOR: return true;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (!typeof_ground(t->tuple.fields[i])) return false;
    return true;
  case TYPE_FUNC:
    if (t->func.ntparams) return false;
    for (uint32_t i = 0; i < t->func.nargs; i++)
      if (!typeof_ground(t->func.args[i])) return false;
    return typeof_ground(t->func.ret);
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++)
      if (!typeof_ground(t->adt.args[i])) return false;
    return true;
  case TYPE_REF: return typeof_ground(t->ref.inner);
  default: return false;
  }
}


static bool same(const Type *a, const Type *b) { return a == b || (a && b && type_equal(a, b)); }

/* What infer.c's const_type gives: int32 extents. */
static Type *const_type(Module *m, const ConstTensor *c) {
  Type *t = type_new(m, TYPE_TENSOR, (Span){0, 0});
  t->tensor.dtype = c->dtype;
  t->tensor.ndim = (uint32_t)(c->ndim > 0 ? c->ndim : 0);
  t->tensor.dims = arena_alloc(m->arena, (t->tensor.ndim ? t->tensor.ndim : 1) * sizeof(Dim));
  for (uint32_t i = 0; i < t->tensor.ndim; i++) t->tensor.dims[i] = (Dim){DIM_INT, DTYPE(DT_INT, 32), c->shape[i]};
  return t;
}

/* The result of the two relations most calls a pass builds use, when it is
 * the first argument's type as it is: Identity on a tensor (zeros_like,
 * ones_like, negative, ...), Broadcast of two equal tensor types (add,
 * multiply, ... of one shape: every extent is the first argument's). NULL
 * for anything else (the relation decides). */
static Type *same_as_input(const OpDef *op, const Expr *e) {
  if (!op || e->call.nargs == 0 || (op->num_inputs >= 0 && (uint32_t)op->num_inputs != e->call.nargs)) return NULL;
  Type *a = e->call.args[0]->type;
  if (!a || a->kind != TYPE_TENSOR) return NULL;
  if (op->relation == rel_identity || op->relation == rel_identity_float) return e->call.nargs == 1 ? a : NULL;
  if (op->relation == rel_broadcast && e->call.nargs == 2) return same(a, e->call.args[1]->type) ? a : NULL;
  return NULL;
}

void typeof_init(TypeofCx *t, Module *m) {
  memset(t, 0, sizeof *t);
  t->m = m;
  t->unit = type_new(m, TYPE_TUPLE, (Span){0, 0});
}

void typeof_fini(TypeofCx *t) {
  call_memo_free(&t->calls);
  memset(t, 0, sizeof *t);
}

/* An operator call with typed arguments: its relation, through the inference
 * of the call alone (quietly: a failure leaves the call untyped). */
static Type *op_call_type(TypeofCx *t, Expr *e) {
  Module *m = t->m;
  Expr *callee = e->call.fn;
  if (callee->op.id < 0) return NULL;
  for (uint32_t i = 0; i < e->call.nargs; i++)
    if (!typeof_ground(e->call.args[i]->type)) return NULL;
  uint64_t h = 0;
  bool keyed = call_memo_key(e, &h);
  if (keyed && call_memo_apply(&t->calls, e, h)) {
    Type *r = e->type;
    e->type = NULL; /* typeof_set sets it */
    return r;
  }
  Type *fast = same_as_input(op_get(callee->op.id), e);
  if (fast) { /* what infer_op_call records: the callee's type too */
    uint32_t n = e->call.nargs;
    Type *ft = type_new(m, TYPE_FUNC, (Span){0, 0});
    ft->func.args = arena_alloc(m->arena, n * sizeof(Type *));
    for (uint32_t i = 0; i < n; i++) ft->func.args[i] = e->call.args[i]->type;
    ft->func.nargs = n;
    ft->func.ret = fast;
    callee->type = ft;
    e->type = fast;
    if (keyed) call_memo_add(&t->calls, m, e, h);
    e->type = NULL; /* typeof_set sets it */
    return fast;
  }
  Diag quiet;
  diag_init_silent(&quiet, NULL);
  Type *saved = callee->type;
  callee->type = NULL;
  if (infer_untyped(m, e, &quiet) && typeof_ground(e->type)) {
    if (keyed && callee->type) call_memo_add(&t->calls, m, e, h);
    return e->type;
  }
  e->type = NULL;
  callee->type = saved;
  return NULL;
}

static Type *fn_type(Module *m, Function *f) {
  if (f->ntparams || !f->body->type) return NULL;
  Type *ret = f->body->type;
  if (f->ret_annot && !same(f->ret_annot, ret)) return NULL;
  Type *t = type_new(m, TYPE_FUNC, (Span){0, 0});
  t->func.nargs = f->nparams;
  t->func.args = arena_alloc(m->arena, (f->nparams ? f->nparams : 1) * sizeof(Type *));
  for (uint32_t i = 0; i < f->nparams; i++) {
    const Var *p = f->params[i];
    if (!p->type || (p->annot && !same(p->annot, p->type))) return NULL;
    t->func.args[i] = p->type;
  }
  t->func.ret = ret;
  return typeof_ground(t) ? t : NULL;
}

static Type *node_type(TypeofCx *tc, Expr *e) {
  Module *m = tc->m;
  switch (e->kind) {
  case EXPR_VAR: {
    Type *t = e->var.var ? e->var.var->type : NULL;
    return typeof_ground(t) ? t : NULL;
  }
  case EXPR_CONST: return const_type(m, e->constant);
  case EXPR_GLOBAL: {
    GlobalDef *g = e->global.def;
    Type *t = g && g->fn ? g->fn->type : NULL;
    return t && t->kind == TYPE_FUNC && typeof_ground(t) ? t : NULL;
  }
  case EXPR_TUPLE: {
    Type **fs = arena_alloc(m->arena, (e->tuple.n ? e->tuple.n : 1) * sizeof *fs);
    for (uint32_t i = 0; i < e->tuple.n; i++)
      if (!(fs[i] = e->tuple.fields[i]->type)) return NULL;
    Type *t = type_new(m, TYPE_TUPLE, (Span){0, 0});
    t->tuple.fields = fs;
    t->tuple.n = e->tuple.n;
    return t;
  }
  case EXPR_PROJ: {
    const Type *t = e->proj.tuple->type;
    return t && t->kind == TYPE_TUPLE && e->proj.index < t->tuple.n ? t->tuple.fields[e->proj.index] : NULL;
  }
  case EXPR_REF_NEW: {
    if (!e->ref.arg->type) return NULL;
    Type *t = type_new(m, TYPE_REF, (Span){0, 0});
    t->ref.inner = e->ref.arg->type;
    return t;
  }
  case EXPR_REF_READ: {
    const Type *t = e->ref.arg->type;
    return t && t->kind == TYPE_REF ? t->ref.inner : NULL;
  }
  case EXPR_REF_WRITE: {
    const Type *t = e->ref_write.ref->type;
    if (!t || t->kind != TYPE_REF || !same(t->ref.inner, e->ref_write.value->type)) return NULL;
    return tc->unit;
  }
  case EXPR_LET: {
    const Var *v = e->let.var;
    if (!v->type || !e->let.value->type || !e->let.body->type) return NULL;
    if (v->type != e->let.value->type && !same(v->type, e->let.value->type)) return NULL;
    return e->let.body->type;
  }
  case EXPR_IF: {
    const Type *c = e->if_.cond->type;
    Type *t = e->if_.then_->type;
    if (!c || c->kind != TYPE_TENSOR || c->tensor.ndim != 0 || !t || !same(t, e->if_.else_->type)) return NULL;
    return t;
  }
  case EXPR_FN: return fn_type(m, e->fn);
  case EXPR_CALL: {
    Expr *f = e->call.fn;
    if (f->kind == EXPR_OP) return op_call_type(tc, e);
    if (f->kind == EXPR_GLOBAL) typeof_set(tc, f);
    const Type *ft = f->type;
    if (!ft || ft->kind != TYPE_FUNC || ft->func.ntparams || ft->func.nargs != e->call.nargs) return NULL;
    for (uint32_t i = 0; i < e->call.nargs; i++)
      if (!same(ft->func.args[i], e->call.args[i]->type)) return NULL;
    return ft->func.ret;
  }
  default: return NULL; /* constructors, match, operators as values: from the context */
  }
}

Expr *typeof_set(TypeofCx *tc, Expr *e) {
  if (e->type) return e;
  Type *t = node_type(tc, e);
  if (!t) return e;
  e->type = t;
  if (e->kind == EXPR_FN) e->fn->type = t;
  return e;
}

/* ------------------------------------------------------------ whole trees */

typedef struct Frame {
  Expr *e;
  uint32_t next; /* next child */
} Frame;

/* The i-th child to type before e (NULL when done); a let decides its binder
 * between its value and its body. */
static Expr *child(Expr *e, uint32_t i) {
  switch (e->kind) {
  case EXPR_TUPLE: return i < e->tuple.n ? e->tuple.fields[i] : NULL;
  case EXPR_PROJ: return i == 0 ? e->proj.tuple : NULL;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: return i == 0 ? e->ref.arg : NULL;
  case EXPR_REF_WRITE: return i == 0 ? e->ref_write.ref : i == 1 ? e->ref_write.value : NULL;
  case EXPR_IF: return i == 0 ? e->if_.cond : i == 1 ? e->if_.then_ : i == 2 ? e->if_.else_ : NULL;
  case EXPR_LET:
    if (i == 1) {
      Var *v = e->let.var;
      if (!v->type && e->let.value->type && (!v->annot || same(v->annot, e->let.value->type)))
        v->type = v->annot ? v->annot : e->let.value->type;
    }
    return i == 0 ? e->let.value : i == 1 ? e->let.body : NULL;
  case EXPR_FN: return i == 0 ? e->fn->body : NULL;
  default: return NULL;
  }
}

/* The call's children in order: the callee (unless an operator), then the arguments. */
static Expr *call_child(Expr *e, uint32_t i) {
  bool op = e->call.fn->kind == EXPR_OP;
  if (!op) {
    if (i == 0) return e->call.fn;
    i--;
  }
  return i < e->call.nargs ? e->call.args[i] : NULL;
}

bool typeof_tree(TypeofCx *tc, Expr *root) {
  if (root->type) return true;
  VEC(Frame) st = {0};
  vec_push(st, ((Frame){root, 0}));
  while (st.len) {
    Frame *f = &st.data[st.len - 1];
    Expr *e = f->e;
    uint32_t i = f->next++;
    Expr *c = e->kind == EXPR_CALL ? call_child(e, i) : child(e, i);
    if (c) {
      if (!c->type) vec_push(st, ((Frame){c, 0}));
      continue;
    }
    typeof_set(tc, e);
    st.len--;
  }
  vec_free(st);
  return root->type != NULL;
}
