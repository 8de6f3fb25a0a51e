/* sema/call_memo.c — the call-type memo (see call_memo.h).
 *
 * Entries live in one growing array with chained hash buckets (indices, so
 * growing moves nothing that a bucket points at). The hash covers the
 * operator, the argument count, each argument type's dtype and extents and
 * the attributes' kinds and integer values; a candidate is confirmed by
 * comparing operator, attributes (exactly) and argument types (type_equal),
 * so a collision costs a comparison, never a wrong type. Unification
 * variables are followed (ToMixedPrecision keys calls whose argument types
 * were solved through links).
 */
#include "sema/call_memo.h"

#include "ir/attrs.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ops/op_traits.h"

struct CallMemoEntry {
  int32_t op;
  uint32_t nargs;
  uint64_t hash;
  const Attrs *attrs;
  Type **args;   /* the argument types of the first call */
  Type *fn_type; /* its callee's type */
  Type *ret;     /* its type */
  int32_t next;  /* next entry in the bucket, -1 at the end */
};

static uint64_t mix(uint64_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

/* A hash of a type the memo takes (tensors with integer or `?` extents,
 * tuples of them); false for any other. */
static bool type_key(const Type *t, uint64_t *h, int depth) {
  t = type_solved(t);
  if (!t || depth > 8) return false;
  if (t->kind == TYPE_TENSOR) {
    *h = mix(*h, 1 + ((uint64_t)t->tensor.dtype.code << 8) + ((uint64_t)t->tensor.dtype.bits << 16) +
                     ((uint64_t)t->tensor.dtype.lanes << 32));
    *h = mix(*h, t->tensor.ndim);
    for (uint32_t i = 0; i < t->tensor.ndim; i++) {
      const Dim *d = &t->tensor.dims[i];
      if (d->kind == DIM_SYM) return false;
      *h = mix(*h, d->kind == DIM_ANY ? UINT64_MAX : (uint64_t)d->value);
    }
    return true;
  }
  if (t->kind == TYPE_TUPLE) {
    *h = mix(*h, 2 + ((uint64_t)t->tuple.n << 8));
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (!type_key(t->tuple.fields[i], h, depth + 1)) return false;
    return true;
  }
  return false;
}

static uint64_t attrs_key(const Attrs *a) {
  uint64_t h = a ? a->n : 0xa77e;
  for (uint32_t i = 0; a && i < a->n; i++) {
    const AttrValue *v = a->items[i].value;
    h = mix(h, (uint64_t)(v ? v->kind : 99));
    if (v && v->kind == AV_INT) h = mix(h, (uint64_t)v->i.value);
  }
  return h;
}

bool call_memo_key(const Expr *e, uint64_t *h) {
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_OP || e->call.fn->op.id < 0) return false;
  int32_t op = e->call.fn->op.id;
  bool consts_ok = !op_type_reads_consts(op);
  *h = mix((uint64_t)(uint32_t)op, e->call.nargs);
  for (uint32_t i = 0; i < e->call.nargs; i++) {
    const Expr *a = e->call.args[i];
    if ((a->kind == EXPR_CONST && !consts_ok) || !type_key(a->type, h, 0)) return false;
  }
  *h = mix(*h, attrs_key(e->call.attrs));
  return true;
}

/* type_equal, without its set-up for the common case: two tensors with
 * integer or `?` extents (as ir/equal.c dim_eq: `?` equals `?` only). */
static bool same(const Type *a, const Type *b) {
  a = type_solved(a);
  b = type_solved(b);
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->kind == TYPE_TENSOR && b->kind == TYPE_TENSOR) {
    if (!dtype_eq(a->tensor.dtype, b->tensor.dtype) || a->tensor.ndim != b->tensor.ndim) return false;
    for (uint32_t i = 0; i < a->tensor.ndim; i++) {
      const Dim *x = &a->tensor.dims[i], *y = &b->tensor.dims[i];
      if (x->kind == DIM_SYM || y->kind == DIM_SYM) return type_equal(a, b);
      if (x->kind != y->kind) return false;
      if (x->kind == DIM_INT && (x->value != y->value || !dtype_eq(x->dtype, y->dtype))) return false;
    }
    return true;
  }
  return type_equal(a, b);
}

/* ---- the calls met last, by address
 *
 * A slot holds a call's operator and argument type objects (solved) with the
 * entry its key found: a call over the same objects with equal attributes is
 * that entry's without hashing extents. A constant argument of an operator
 * whose relation reads constants is never keyed, so never entered here. */
#define RECENT_SLOTS 256u
#define RECENT_ARGS 3u

struct CallMemoRecent {
  int32_t entry; /* 1 + index in items, 0 = empty */
  int32_t op;
  uint32_t nargs;
  const Type *args[RECENT_ARGS];
};

static bool recent_fits(const Expr *e) {
  if (e->call.nargs > RECENT_ARGS) return false;
  for (uint32_t i = 0; i < e->call.nargs; i++)
    if (e->call.args[i]->kind == EXPR_CONST && op_type_reads_consts(e->call.fn->op.id)) return false;
  return true;
}

static size_t recent_slot(const Expr *e) {
  uint64_t h = mix((uint64_t)(uint32_t)e->call.fn->op.id, e->call.nargs);
  for (uint32_t i = 0; i < e->call.nargs; i++) h = mix(h, (uint64_t)(uintptr_t)type_solved(e->call.args[i]->type));
  return (size_t)((h ^ (h >> 29)) % RECENT_SLOTS);
}

static bool recent_is(const CallMemo *cm, const CallMemoRecent *r, const Expr *e) {
  if (!r->entry || r->op != e->call.fn->op.id || r->nargs != e->call.nargs) return false;
  for (uint32_t i = 0; i < r->nargs; i++)
    if (r->args[i] != type_solved(e->call.args[i]->type)) return false;
  const Attrs *a = cm->items[r->entry - 1].attrs;
  return a == e->call.attrs || attrs_equal_exact(a, e->call.attrs);
}

/* Enters e as a call of entry i; the slot's call before moves to its partner
 * (two calls over the same arguments a program alternates between keep
 * their places). */
static void recent_put(CallMemo *cm, const Expr *e, size_t i) {
  if (!recent_fits(e)) return;
  if (!cm->recent) cm->recent = mem_calloc(RECENT_SLOTS, sizeof *cm->recent);
  CallMemoRecent *r = &cm->recent[recent_slot(e)];
  if (r->entry) cm->recent[(size_t)(r - cm->recent) ^ 1] = *r;
  r->entry = (int32_t)i + 1;
  r->op = e->call.fn->op.id;
  r->nargs = e->call.nargs;
  for (uint32_t k = 0; k < e->call.nargs; k++) r->args[k] = type_solved(e->call.args[k]->type);
}

/* The index of the entry of a call equal to e (keyed by h), or -1. */
static int32_t find_entry(const CallMemo *cm, const Expr *e, uint64_t h) {
  if (!cm->nheads) return -1;
  for (int32_t i = cm->heads[h & (cm->nheads - 1)]; i >= 0; i = cm->items[i].next) {
    const CallMemoEntry *k = &cm->items[i];
    if (k->hash != h || k->op != e->call.fn->op.id || k->nargs != e->call.nargs || !attrs_equal_exact(k->attrs, e->call.attrs))
      continue;
    bool eq = true;
    for (uint32_t j = 0; j < k->nargs && eq; j++) eq = same(k->args[j], e->call.args[j]->type);
    if (eq) return i;
  }
  return -1;
}

bool call_memo_apply(const CallMemo *cm, Expr *e, uint64_t h) {
  int32_t i = find_entry(cm, e, h);
  if (i < 0) return false;
  e->call.fn->type = cm->items[i].fn_type;
  e->type = cm->items[i].ret;
  return true;
}

static void rehash(CallMemo *cm, size_t n) {
  mem_free(cm->heads);
  cm->heads = mem_malloc(n * sizeof *cm->heads);
  cm->nheads = n;
  for (size_t i = 0; i < n; i++) cm->heads[i] = -1;
  for (size_t i = 0; i < cm->n; i++) {
    size_t b = cm->items[i].hash & (n - 1);
    cm->items[i].next = cm->heads[b];
    cm->heads[b] = (int32_t)i;
  }
}

void call_memo_add(CallMemo *cm, Module *m, const Expr *e, uint64_t h) {
  call_memo_add_types(cm, m, e, e->call.fn->type, e->type, h);
}

void call_memo_add_types(CallMemo *cm, Module *m, const Expr *e, Type *fn_type, Type *ret, uint64_t h) {
  const Type *fn = type_solved(fn_type);
  uint64_t rh = 0;
  if (!fn || fn->kind != TYPE_FUNC || !type_key(ret, &rh, 0) || !type_key(fn->func.ret, &rh, 0))
    return; /* a result that is not concrete: not remembered */
  if (2 * (cm->n + 1) > cm->nheads) rehash(cm, cm->nheads ? 2 * cm->nheads : 256);
  if (cm->n == cm->cap) {
    cm->cap = cm->cap ? 2 * cm->cap : 64;
    cm->items = mem_realloc(cm->items, cm->cap * sizeof *cm->items);
  }
  uint32_t n = e->call.nargs;
  Type **args = arena_alloc(m->arena, (n ? n : 1) * sizeof *args);
  for (uint32_t i = 0; i < n; i++) args[i] = type_solved(e->call.args[i]->type);
  size_t b = h & (cm->nheads - 1);
  cm->items[cm->n] = (CallMemoEntry){e->call.fn->op.id, n, h, e->call.attrs, args, (Type *)fn,
                                      type_solved(ret), cm->heads[b]};
  cm->heads[b] = (int32_t)cm->n++;
  recent_put(cm, e, cm->n - 1);
}

bool call_memo_lookup(CallMemo *cm, const Expr *e, bool *keyed, uint64_t *h, Type **fn_type, Type **ret) {
  *keyed = false;
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_OP || e->call.fn->op.id < 0) return false;
  int32_t i = -1;
  if (cm->recent && recent_fits(e)) {
    size_t s = recent_slot(e); /* the slot, then its partner (recent_put) */
    if (recent_is(cm, &cm->recent[s], e)) i = cm->recent[s].entry - 1;
    else if (recent_is(cm, &cm->recent[s ^ 1], e)) i = cm->recent[s ^ 1].entry - 1;
    if (i >= 0) {
      *keyed = true;
      *h = cm->items[i].hash;
    }
  }
  if (i < 0) {
    if (!(*keyed = call_memo_key(e, h))) return false;
    if ((i = find_entry(cm, e, *h)) < 0) return false;
    recent_put(cm, e, (size_t)i);
  }
  *fn_type = cm->items[i].fn_type;
  *ret = cm->items[i].ret;
  return true;
}

void call_memo_free(CallMemo *cm) {
  mem_free(cm->recent);
  mem_free(cm->items);
  mem_free(cm->heads);
  *cm = (CallMemo){0};
}
