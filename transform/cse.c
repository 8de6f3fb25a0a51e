/* transform/cse.c — EliminateCommonSubexpr (spec/passes.md §3.3).
 *
 * A bottom-up rebuild (the sharing-preserving Rewriter) that remembers, per
 * function, the operator calls and projections already produced. A rebuilt
 * call is replaced by an earlier one when its callee is an operator that is
 * not stateful (ops/op_traits.h), it has at least one argument, the
 * attributes are equal (ir/equal.h call_attrs_equal: defaults filled in,
 * doubles within 1e-9) and each argument pair is the same node (the same
 * variable, global, operator or constructor counts as the same node, as in
 * TVM where those are shared objects) or two rank-0 constants with equal
 * dtype and bytes; when both arguments are explicit tuples of equal length
 * that test applies to their fields. A projection `e.i` is replaced by an
 * earlier `e.i` of the same node. Merges cascade (children are rewritten
 * first). There is no scoping — the table spans if arms, let values and
 * nested literals, exactly like TVM (BBNF repairs the cross-branch sharing).
 *
 * TVM scans every earlier call of the same operator; here candidates are
 * found through a hash of (operator, argument identities) and checked in the
 * order they were produced, so the first match is TVM's first match and the
 * pass stays linear on modules with 100,000 calls of one operator.
 */
#include <string.h>

#include "ir/equal.h"
#include "ir/mem.h"
#include "ops/op_call.h"
#include "ops/op_traits.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef struct Cand {
  Expr *e;
  uint64_t hash;
  uint32_t next; /* next candidate of the same bucket, in production order (0: none) */
} Cand;

typedef struct Cse {
  VEC(Cand) cands; /* index 0 unused */
  uint32_t *head, *tail;
  size_t nbuckets;
} Cse;

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 32);
}

static bool scalar_const(const Expr *e) { return e->kind == EXPR_CONST && e->constant->ndim == 0; }

/* The identity TVM's same_as sees: a variable is its binder, a global its
 * definition, an operator its id, a constructor itself. */
static const void *ident(const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR: return e->var.var ? (const void *)e->var.var : (const void *)e;
  case EXPR_GLOBAL: return e->global.def ? (const void *)e->global.def : (const void *)e;
  case EXPR_OP: return (const void *)(intptr_t)(e->op.id + 1); /* small integers: no pointer collides */
  case EXPR_CTOR: return e->ctor.ctor;
  default: return e;
  }
}

static bool same(const Expr *a, const Expr *b) { return a == b || (a->kind == b->kind && ident(a) == ident(b)); }

static bool equal_scalar(const Expr *a, const Expr *b) {
  if (!scalar_const(a) || !scalar_const(b)) return false;
  const ConstTensor *x = a->constant, *y = b->constant;
  return dtype_eq(x->dtype, y->dtype) && x->nbytes == y->nbytes && memcmp(x->data, y->data, x->nbytes) == 0;
}

static uint64_t atom_hash(const Expr *e) {
  if (scalar_const(e)) {
    const ConstTensor *c = e->constant;
    uint64_t h = mix(0x5ca1a7, (uint64_t)c->dtype.code << 24 | (uint64_t)c->dtype.bits << 16 | c->dtype.lanes);
    uint64_t bits = 0;
    memcpy(&bits, c->data, c->nbytes < 8 ? c->nbytes : 8);
    return mix(h, bits);
  }
  return mix(0xa70, (uint64_t)(uintptr_t)ident(e));
}

static uint64_t arg_hash(const Expr *e) {
  if (e->kind != EXPR_TUPLE) return atom_hash(e);
  uint64_t h = mix(0x7091e, e->tuple.n);
  for (uint32_t i = 0; i < e->tuple.n; i++) h = mix(h, atom_hash(e->tuple.fields[i]));
  return h;
}

/* TVM's IsEquivalent. */
static bool equivalent(const Expr *a, const Expr *b) {
  if (a->kind == EXPR_TUPLE && b->kind == EXPR_TUPLE) {
    if (a->tuple.n != b->tuple.n) return false;
    for (uint32_t i = 0; i < a->tuple.n; i++)
      if (!same(a->tuple.fields[i], b->tuple.fields[i]) && !equal_scalar(a->tuple.fields[i], b->tuple.fields[i]))
        return false;
    return true;
  }
  return same(a, b) || equal_scalar(a, b);
}

static bool candidate_ok(const Expr *c, const Expr *e) {
  if (c->kind != e->kind) return false;
  if (e->kind == EXPR_PROJ) return c->proj.index == e->proj.index && same(c->proj.tuple, e->proj.tuple);
  if (c->call.fn->op.id != e->call.fn->op.id || c->call.nargs != e->call.nargs) return false;
  if (!call_attrs_equal(c->call.attrs, e->call.attrs)) return false;
  for (uint32_t i = 0; i < e->call.nargs; i++)
    if (!equivalent(e->call.args[i], c->call.args[i])) return false;
  return true;
}

static void bucket_append(Cse *s, uint32_t k) {
  size_t b = s->cands.data[k].hash & (s->nbuckets - 1);
  s->cands.data[k].next = 0;
  if (s->tail[b]) s->cands.data[s->tail[b]].next = k;
  else s->head[b] = k;
  s->tail[b] = k;
}

static void cse_add(Cse *s, Expr *e, uint64_t h) {
  vec_push(s->cands, ((Cand){e, h, 0}));
  if (s->cands.len > s->nbuckets) { /* grow, keeping each bucket in production order */
    mem_free(s->head);
    mem_free(s->tail);
    s->nbuckets = s->nbuckets ? s->nbuckets * 4 : 256;
    s->head = mem_calloc(s->nbuckets, sizeof *s->head);
    s->tail = mem_calloc(s->nbuckets, sizeof *s->tail);
    for (uint32_t k = 1; k < s->cands.len; k++) bucket_append(s, k);
    return;
  }
  bucket_append(s, (uint32_t)s->cands.len - 1);
}

static Expr *cse_find(Cse *s, Expr *e, uint64_t h) {
  if (!s->nbuckets) return NULL;
  for (uint32_t k = s->head[h & (s->nbuckets - 1)]; k; k = s->cands.data[k].next)
    if (s->cands.data[k].hash == h && candidate_ok(s->cands.data[k].e, e)) return s->cands.data[k].e;
  return NULL;
}

static Expr *cse_post(Rewriter *rw, Expr *old, Expr *e) {
  (void)old;
  Cse *s = rw->ud;
  uint64_t h;
  if (e->kind == EXPR_CALL) {
    if (e->call.nargs == 0 || e->call.fn->kind != EXPR_OP || op_is_stateful(e->call.fn->op.id)) return e;
    h = mix(0xca11, (uint64_t)(e->call.fn->op.id + 1));
    for (uint32_t i = 0; i < e->call.nargs; i++) h = mix(h, arg_hash(e->call.args[i]));
  } else if (e->kind == EXPR_PROJ) {
    h = mix(mix(0x9e7, (uint64_t)(uintptr_t)ident(e->proj.tuple)), e->proj.index);
  } else {
    return e;
  }
  Expr *c = cse_find(s, e, h);
  if (c) return c;
  cse_add(s, e, h);
  return e;
}

static bool cse_function(PassCtx *c, GlobalDef *g) {
  Cse s = {0};
  vec_push(s.cands, ((Cand){NULL, 0, 0})); /* index 0 means "none" */
  Rewriter rw;
  rw_init(&rw, c->m, c->d);
  rw.post = cse_post;
  rw.ud = &s;
  rw.mark_memo = true; /* nothing else touches Expr.mark during the rewrite */
  bool ok = rw_function(&rw, g->fn);
  rw_fini(&rw);
  vec_free(s.cands);
  mem_free(s.head);
  mem_free(s.tail);
  return ok;
}

bool pass_CSE(PassCtx *c) { return pass_for_each_function(c, cse_function); }
