/* sema/solver.c — the work-list fixpoint over operator relations, and the
 * TypeRelCtx API relations are written against (ops/relations/type_rel.h).
 *
 * A constraint is run as soon as it is added. If it has to wait, it is filed
 * under each unbound uvar it blocked on — the accessors record every slot
 * they could not read, at most REL_MAX_BLOCKERS: an input for a relation
 * that runs forwards, an input and the output for one that can also run
 * backwards (TVM's Identity types an argument from an annotated result) —
 * and binding any of those uvars (ty_unify → solver_wake) moves it onto the
 * queue. Each filing carries the constraint's epoch, which every run bumps,
 * so the filings left under the other uvars go stale instead of waking it
 * again. So each change costs work proportional to the constraints that
 * mention the changed uvar — no global rescans — and a chain of N operator
 * calls is solved in O(N), in either direction. A constraint is done after
 * it succeeds or fails; a failed one gives its output the error type so
 * nothing downstream reports again.
 */
#include "sema/typing.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "ops/relations/type_rel.h"

typedef enum { CON_REL, CON_PROJ } ConKind;

struct Constraint {
  ConKind kind;
  bool done;
  bool queued;
  const OpDef *op;     /* CON_REL */
  const Attrs *attrs;  /* CON_REL; NULL = schema defaults */
  Expr *const *exprs;  /* CON_REL: the call's argument expressions, or NULL (op used as a value) */
  Type **args;         /* CON_REL: inputs then output; CON_PROJ: tuple, out */
  uint32_t nargs;
  uint32_t index;      /* CON_PROJ */
  uint32_t epoch;      /* bumped by every run: older filings are stale */
  Span span;
  Type *blocker;       /* the first uvar it waits on (an input: what "cannot infer" blames) */
};

struct TypeRelCtx {
  TyCx *cx;
  Constraint *con;
  Type *blockers[REL_MAX_BLOCKERS]; /* distinct unbound uvars the accessors hit, in order */
  uint32_t nblockers;
  bool failed;
};

/* ---------------------------------------------------------------- waiting */

/* Files k under the unbound uvar u for its current epoch. */
static void wait_on(TyCx *cx, Constraint *k, Type *u) {
  Wait *w = cx->free_waits;
  if (w) cx->free_waits = w->next;
  else w = arena_alloc(cx->a, sizeof *w);
  w->con = k;
  w->epoch = k->epoch;
  w->next = cx->waits.data[u->uvar.id];
  cx->waits.data[u->uvar.id] = w;
  if (!k->blocker) k->blocker = u;
}

static void enqueue(TyCx *cx, Constraint *k) {
  if (k->done || k->queued) return;
  k->queued = true;
  vec_push(cx->queue, k);
}

void solver_wake(TyCx *cx, uint32_t id) {
  Wait *w = cx->waits.data[id];
  cx->waits.data[id] = NULL;
  while (w) {
    Wait *next = w->next;
    if (w->epoch == w->con->epoch) enqueue(cx, w->con);
    w->next = cx->free_waits;
    cx->free_waits = w;
    w = next;
  }
}

/* First unbound uvar found in t (for constraints that gave no blocker). */
static Type *some_uvar(Type *t) {
  t = ty_find(t);
  if (t->kind == TYPE_UVAR) return t;
  if (stack_exhausted()) return NULL;
  if (t->kind == TYPE_TUPLE)
    for (uint32_t i = 0; i < t->tuple.n; i++) {
      Type *u = some_uvar(t->tuple.fields[i]);
      if (u) return u;
    }
  return NULL;
}

/* ---------------------------------------------------------------- running */

static void finish_failed(TyCx *cx, Constraint *k) {
  k->done = true;
  ty_unify(cx, k->args[k->nargs - 1], cx->err);
}

static void run_proj(TyCx *cx, Constraint *k) {
  Type *t = ty_find(k->args[0]);
  k->epoch++;
  k->blocker = NULL;
  if (t->kind == TYPE_UVAR) {
    wait_on(cx, k, t);
    return;
  }
  k->done = true;
  if (t == cx->err) {
    ty_unify(cx, k->args[1], cx->err);
  } else if (t->kind != TYPE_TUPLE) {
    diag_error(cx->d, k->span, "cannot take field .%u of a value of type %s (not a tuple)", k->index,
               ty_str(cx, t));
    ty_unify(cx, k->args[1], cx->err);
  } else if (k->index >= t->tuple.n) {
    diag_error(cx->d, k->span, "tuple index .%u out of range: the tuple %s has %u field%s", k->index,
               ty_str(cx, t), t->tuple.n, t->tuple.n == 1 ? "" : "s");
    ty_unify(cx, k->args[1], cx->err);
  } else if (!ty_unify_here(cx, k->args[1], t->tuple.fields[k->index])) {
    diag_error(cx->d, k->span, "field .%u has type %s but %s is expected here", k->index,
               ty_str(cx, t->tuple.fields[k->index]), ty_str(cx, k->args[1]));
    ty_note_occurs(cx, k->span);
  }
}

static void run_rel(TyCx *cx, Constraint *k) {
  uint32_t n = k->nargs - 1;
  for (uint32_t i = 0; i < n; i++)
    if (ty_find(k->args[i]) == cx->err) {
      finish_failed(cx, k);
      return;
    }
  if (!k->op->relation) {
    diag_error(cx->d, k->span, "operator %s has no type relation yet", k->op->name);
    finish_failed(cx, k);
    return;
  }
  TypeRelCtx c = {.cx = cx, .con = k};
  int r = k->op->relation(&c);
  k->epoch++;
  k->blocker = NULL;
  if (r == REL_DONE && !c.failed) {
    k->done = true;
  } else if (r == REL_WAIT && !c.failed) {
    uint32_t filed = 0;
    for (uint32_t i = 0; i < c.nblockers; i++) {
      Type *u = ty_find(c.blockers[i]);
      if (u->kind != TYPE_UVAR) { /* bound by the relation's own assignments: run again */
        enqueue(cx, k);
        return;
      }
      wait_on(cx, k, u);
      filed++;
    }
    if (filed) return;
    Type *u = NULL;
    for (uint32_t i = 0; !u && i < n; i++) u = some_uvar(k->args[i]);
    if (u) wait_on(cx, k, u);
    else {
      diag_error(cx->d, k->span, "%s: cannot infer the result type", k->op->name);
      finish_failed(cx, k);
    }
  } else {
    finish_failed(cx, k);
  }
}

static void run(TyCx *cx, Constraint *k) {
  if (k->done) return;
  if (k->kind == CON_PROJ) run_proj(cx, k);
  else run_rel(cx, k);
}

void solver_drain(TyCx *cx) {
  if (cx->draining) return;
  cx->draining = true;
  while (cx->qhead < cx->queue.len) {
    Constraint *k = cx->queue.data[cx->qhead++];
    k->queued = false;
    run(cx, k);
  }
  cx->queue.len = 0;
  cx->qhead = 0;
  cx->draining = false;
}

static void add(TyCx *cx, Constraint *k) {
  vec_push(cx->cons, k);
  enqueue(cx, k);
  solver_drain(cx);
}

void solver_add_rel(TyCx *cx, const OpDef *op, const Attrs *attrs, Expr *const *exprs, Type **args,
                    uint32_t n, Span sp) {
  Constraint *k = arena_alloc(cx->a, sizeof *k);
  k->kind = CON_REL;
  k->op = op;
  k->attrs = attrs;
  k->exprs = exprs;
  k->args = arena_memdup(cx->a, args, (n + 1) * sizeof *args);
  k->nargs = n + 1;
  k->span = sp;
  add(cx, k);
}

void solver_add_proj(TyCx *cx, Type *tuple, uint32_t index, Type *out, Span sp) {
  Type *t = ty_find(tuple);
  if (t->kind == TYPE_TUPLE && index < t->tuple.n && ty_unify(cx, out, t->tuple.fields[index])) {
    solver_drain(cx);
    return; /* the common case needs no constraint record */
  }
  Constraint *k = arena_alloc(cx->a, sizeof *k);
  k->kind = CON_PROJ;
  k->args = arena_alloc(cx->a, 2 * sizeof *k->args);
  k->args[0] = tuple;
  k->args[1] = out;
  k->nargs = 2;
  k->index = index;
  k->span = sp;
  add(cx, k);
}

void solver_report_unsolved(TyCx *cx) {
  solver_drain(cx);
  size_t nu = cx->waits.len;
  uint8_t *is_out = mem_calloc(nu ? nu : 1, 1);
  for (size_t i = 0; i < cx->cons.len; i++) {
    Constraint *k = cx->cons.data[i];
    if (k->done) continue;
    Type *o = ty_find(k->args[k->nargs - 1]);
    if (o->kind == TYPE_UVAR) is_out[o->uvar.id] = 1;
  }
  for (size_t i = 0; i < cx->cons.len; i++) {
    Constraint *k = cx->cons.data[i];
    if (k->done) continue;
    Type *b = k->blocker ? ty_find(k->blocker) : NULL;
    bool root = !(b && b->kind == TYPE_UVAR && is_out[b->uvar.id]);
    if (root) {
      if (k->kind == CON_PROJ)
        diag_error(cx->d, k->span, "cannot infer type: field .%u is taken from a value whose type is unknown",
                   k->index);
      else
        diag_error(cx->d, k->span, "cannot infer type: the input types of %s are not known here",
                   k->op->name);
    }
    k->done = true;
  }
  mem_free(is_out);
}

/* ------------------------------------------------------------ TypeRelCtx API */

uint32_t rel_ninputs(TypeRelCtx *c) { return c->con->nargs - 1; }
const char *rel_op_name(TypeRelCtx *c) { return c->con->op->name; }
Module *rel_module(TypeRelCtx *c) { return c->cx->m; }
int rel_pending(TypeRelCtx *c) { return c->failed ? REL_FAIL : REL_WAIT; }
bool rel_failed(TypeRelCtx *c) { return c->failed; }

int rel_fail(TypeRelCtx *c, const char *fmt, ...) {
  if (c->failed) return REL_FAIL; /* one diagnostic per run: the first cause */
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  diag_error(c->cx->d, c->con->span, "%s: %s", c->con->op->name, buf);
  c->failed = true;
  return REL_FAIL;
}

const char *rel_type_str(TypeRelCtx *c, const Type *t) { return ty_str(c->cx, (Type *)t); }

/* Records the unbound uvar t among the ones the relation waits on. */
static void note_blocker(TypeRelCtx *c, Type *t) {
  for (uint32_t j = 0; j < c->nblockers; j++)
    if (c->blockers[j] == t) return;
  if (c->nblockers < REL_MAX_BLOCKERS) c->blockers[c->nblockers++] = t;
}

/* What t stands for, or NULL: the error type (the relation has failed) or
 * an unbound uvar (noted: the relation waits on it). */
static Type *known_or_note(TypeRelCtx *c, Type *t) {
  t = ty_find(t);
  if (t == c->cx->err) {
    c->failed = true;
    return NULL;
  }
  if (t->kind == TYPE_UVAR) {
    note_blocker(c, t);
    return NULL;
  }
  return t;
}

const Type *rel_type(TypeRelCtx *c, uint32_t i) {
  return i < c->con->nargs ? known_or_note(c, c->con->args[i]) : NULL;
}

/* what/i name the slot in messages; what == NULL: the result. */
static const Type *as_tensor(TypeRelCtx *c, Type *t, const char *what, uint32_t i) {
  t = known_or_note(c, t);
  if (!t) return NULL;
  if (t->kind != TYPE_TENSOR) {
    if (what) rel_fail(c, "%s %u must be a tensor, found %s", what, i, ty_str(c->cx, t));
    else rel_fail(c, "the result must be a tensor, found %s", ty_str(c->cx, t));
    return NULL;
  }
  return t;
}

const Type *rel_tensor(TypeRelCtx *c, uint32_t i) {
  if (i >= c->con->nargs) return NULL;
  return as_tensor(c, c->con->args[i], i + 1 < c->con->nargs ? "argument" : NULL, i + 1);
}

int32_t rel_tensor_tuple(TypeRelCtx *c, uint32_t i, const Type ***fields) {
  const Type *t = rel_type(c, i);
  if (!t) return -1;
  if (t->kind != TYPE_TUPLE) {
    rel_fail(c, "argument %u must be a tuple of tensors, found %s", i + 1, ty_str(c->cx, (Type *)t));
    return -1;
  }
  const Type **fs = arena_alloc(c->cx->a, (t->tuple.n ? t->tuple.n : 1) * sizeof *fs);
  for (uint32_t j = 0; j < t->tuple.n; j++) {
    fs[j] = as_tensor(c, t->tuple.fields[j], "tuple field", j);
    if (!fs[j]) return -1;
  }
  *fields = fs;
  return (int32_t)t->tuple.n;
}

bool rel_assign(TypeRelCtx *c, uint32_t i, Type *t) {
  TyCx *cx = c->cx;
  if (c->failed) return false;
  Type *old = c->con->args[i];
  if (ty_unify(cx, old, t)) return true;
  uint32_t n = c->con->nargs - 1;
  if (i == n)
    rel_fail(c, "the result has type %s but %s is expected", ty_str(cx, t), ty_str(cx, old));
  else
    rel_fail(c, "argument %u has type %s but %s is required", i + 1, ty_str(cx, old), ty_str(cx, t));
  return false;
}

Type *rel_new_tensor(TypeRelCtx *c, DType dt, uint32_t ndim) {
  Type *t = type_new(c->cx->m, TYPE_TENSOR, (Span){0, 0});
  t->tensor.dtype = dt;
  t->tensor.ndim = ndim;
  t->tensor.dims = arena_alloc(c->cx->a, (ndim ? ndim : 1) * sizeof(Dim));
  for (uint32_t i = 0; i < ndim; i++) t->tensor.dims[i] = dim_any();
  return t;
}

Type *rel_new_tuple(TypeRelCtx *c, uint32_t n) {
  Type *t = type_new(c->cx->m, TYPE_TUPLE, (Span){0, 0});
  t->tuple.n = n;
  t->tuple.fields = arena_alloc(c->cx->a, (n ? n : 1) * sizeof(Type *));
  return t;
}

Type *rel_retype(TypeRelCtx *c, const Type *t, DType dt) {
  Type *o = rel_new_tensor(c, dt, t->tensor.ndim);
  for (uint32_t i = 0; i < t->tensor.ndim; i++) o->tensor.dims[i] = t->tensor.dims[i];
  return o;
}

/* ------------------------------------------------------------- attributes */

const AttrValue *rel_attr(TypeRelCtx *c, const char *key) {
  const AttrValue *v = c->con->attrs ? attrs_get(c->con->attrs, key) : NULL;
  if (v) return v;
  const OpDef *op = c->con->op;
  for (uint32_t i = 0; i < op->nattrs; i++) {
    if (strcmp(op->attrs[i].name, key) != 0) continue;
    const char *text = op->attrs[i].default_text ? op->attrs[i].default_text : op->attrs[i].py_default;
    return text ? attr_value_parse(c->cx->m, text) : NULL;
  }
  return NULL;
}

/* A scalar constant's value, when `c` holds exactly one element. */
static bool rel_const_value(const ConstTensor *k, double *v) {
  if (!k) return false;
  int64_t n = 1;
  for (int32_t i = 0; i < k->ndim; i++) n *= k->shape[i];
  if (n != 1) return false;
  *v = const_scalar_as_double(k);
  return true;
}

bool rel_attr_number(TypeRelCtx *c, const char *key, double *v) {
  const AttrValue *x = rel_attr(c, key);
  if (!x) return false;
  switch (x->kind) {
  case AV_INT: *v = (double)x->i.value; return true;
  case AV_FLOAT: *v = x->f.value; return true;
  case AV_META: {
    Module *m = c->cx->m;
    if (!m || strcmp(x->meta.key, "relay.Constant") != 0 || x->meta.index >= m->nmeta_consts) return false;
    return rel_const_value(m->meta_consts[x->meta.index], v);
  }
  case AV_EXPR: return x->expr && x->expr->kind == EXPR_CONST && rel_const_value(x->expr->constant, v);
  default: return false;
  }
}

bool rel_attr_is_none(TypeRelCtx *c, const char *key) {
  const AttrValue *v = rel_attr(c, key);
  return !v || v->kind == AV_NONE;
}

int64_t rel_attr_int(TypeRelCtx *c, const char *key, int64_t dflt) {
  const AttrValue *v = rel_attr(c, key);
  if (!v) return dflt;
  switch (v->kind) {
  case AV_INT: return v->i.value;
  case AV_BOOL: return v->b;
  case AV_FLOAT: /* in range, else the default: converting it would be undefined */
    return v->f.value > -0x1p63 && v->f.value < 0x1p63 ? (int64_t)v->f.value : dflt;
  case AV_ARRAY:
    if (v->arr.n == 1 && v->arr.items[0]->kind == AV_INT) return v->arr.items[0]->i.value;
    return dflt;
  default: return dflt;
  }
}

double rel_attr_double(TypeRelCtx *c, const char *key, double dflt) { return attr_as_double(rel_attr(c, key), dflt); }

bool rel_attr_bool(TypeRelCtx *c, const char *key, bool dflt) { return attr_as_bool(rel_attr(c, key), dflt); }

const char *rel_attr_str(TypeRelCtx *c, const char *key, const char *dflt) {
  const AttrValue *v = rel_attr(c, key);
  if (!v || v->kind != AV_STRING) return dflt;
  return arena_strndup(c->cx->a, v->s.chars, v->s.len);
}

bool rel_attr_dtype(TypeRelCtx *c, const char *key, DType *out) {
  const AttrValue *v = rel_attr(c, key);
  if (!v || v->kind != AV_STRING || v->s.len == 0) return false;
  return dtype_parse(v->s.chars, v->s.len, out);
}

Type *rel_attr_shape(TypeRelCtx *c, const char *key, DType dt) {
  enum { SHAPE_MAX = 64 }; /* the runtime's rank limit */
  int64_t shape[SHAPE_MAX];
  int32_t n = rel_attr_ints(c, key, shape, SHAPE_MAX);
  if (n < 0) {
    rel_fail(c, "%s is not set", key);
    return NULL;
  }
  const AttrValue *v = rel_attr(c, key);
  Type *o = rel_new_tensor(c, dt, (uint32_t)n);
  for (int32_t i = 0; i < n; i++) {
    if (shape[i] == REL_INT_ANY) continue; /* `?` stays Any */
    if (shape[i] < 0) {
      rel_fail(c, "invalid extent %lld in %s", (long long)shape[i], key);
      return NULL;
    }
    o->tensor.dims[i] = dim_int(shape[i]);
    const AttrValue *e = v->kind == AV_ARRAY ? v->arr.items[i] : v;
    if (e->kind == AV_INT && (e->i.dtype.bits == 64 || e->i.dtype.bits == 16))
      o->tensor.dims[i].dtype = e->i.dtype; /* an IntImm keeps its dtype: `2i64` */
  }
  return o;
}

int32_t rel_attr_ints(TypeRelCtx *c, const char *key, int64_t *out, int32_t max) {
  const AttrValue *v = rel_attr(c, key);
  if (!v || v->kind == AV_NONE || (v->kind != AV_INT && v->kind != AV_ARRAY)) return -1;
  uint32_t len = v->kind == AV_INT ? 1 : v->arr.n;
  if (len > (uint32_t)(max > 0 ? max : 0)) { /* never a truncated count: the caller would read it as all */
    rel_fail(c, "%s has %u entries; at most %d are supported", key, len, max);
    return -1;
  }
  for (uint32_t i = 0; i < len; i++) {
    const AttrValue *e = v->kind == AV_INT ? v : v->arr.items[i];
    if (e->kind == AV_INT) out[i] = e->i.value;
    else if (e->kind == AV_BOOL) out[i] = e->b;
    else if (e->kind == AV_ANY) out[i] = REL_INT_ANY;
    else out[i] = REL_INT_NONE;
    if (e->kind == AV_INT && (e->i.value == REL_INT_NONE || e->i.value == REL_INT_ANY)) {
      /* the two markers cannot be told from written values: refuse the values */
      rel_fail(c, "%s: the value %lld is out of range", key, (long long)e->i.value);
      return -1;
    }
  }
  return (int32_t)len;
}
