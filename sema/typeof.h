/* sema/typeof.h — the type of a node a pass builds, from its children's types.
 *
 * A pass that builds a large output over a typed input (Gradient builds every
 * node new) can give each node, as it builds it, the type inference would give
 * it, so the runner's incremental re-typing (infer_module_incremental) keeps
 * those nodes instead of inferring the whole output again. The type follows
 * from the children alone — no unification, no context:
 *
 *     TypeofCx tc;
 *     typeof_init(&tc, m);
 *     Expr *t = typeof_set(&tc, build_tuple(m, fs, 2, sp)); // (T1, T2) when fs are typed
 *     Var *v = build_fresh_var(m, "x", NULL, sp);
 *     v->type = t->type;                                    // a let binder: its value's type
 *     typeof_fini(&tc);
 *
 * Every type set is ground (no unification variable, `_` or type parameter):
 * where a child is untyped or not ground, or the node's type would come from
 * its context (a polymorphic callee, a constructor, a match), the node is left
 * untyped and the re-typing infers it. Operator calls are typed through their
 * type relation (sema infer_untyped on the call alone, errors not reported:
 * a call that does not type-check stays untyped, and the re-typing reports it),
 * remembered by (operator, attributes, argument types) in the TypeofCx
 * (sema/call_memo.h): a pass builds the same few calls over and over (the
 * result and callee types are then shared: types are immutable once
 * solved). In front of that memo, which hashes the argument types' extents,
 * a small direct-mapped table answers a call whose operator, attributes
 * object and argument type objects are the very ones of a call typed before
 * (the pass's shared types and attributes make that the common case).
 * Identity relations and Broadcast of equal types take the first argument's
 * type directly. The types it sets are shared (typeof_*_type below).
 */
#ifndef RELAYC_SEMA_TYPEOF_H
#define RELAYC_SEMA_TYPEOF_H

#include <stdbool.h>

#include "ir/ast.h"
#include "ir/build.h"
#include "ir/equal.h"
#include "sema/call_memo.h"

#define TYPEOF_GROUND_CACHE 64
#define TYPEOF_CANON_CACHE 64
#define TYPEOF_CALL_CACHE_BITS 8
#define TYPEOF_CALL_CACHE (1 << TYPEOF_CALL_CACHE_BITS)
#define TYPEOF_CALL_CACHE_ARGS 3

/* A call typed before, by the identity of its operator, attributes and
 * argument types (see op_call_type in typeof.c). */
typedef struct TypeofCallSeen {
  int32_t op;          /* 0 with ret NULL: empty */
  uint32_t nargs;
  const Attrs *attrs;
  const Type *args[TYPEOF_CALL_CACHE_ARGS];
  Type *ret, *fn;      /* the call's type and its callee's */
  struct Expr *node;   /* typeof_op_node(op, fn), once asked for */
} TypeofCallSeen;

/* A shared type of one to three (shared) parts, by the parts' addresses. */
typedef struct TypeofPartsSeen {
  TypeKind kind;
  uint32_t n;
  TypeDef *def;
  Type *p[3];
  Type *t;             /* NULL: empty */
} TypeofPartsSeen;
#define TYPEOF_PARTS_CACHE 64

/* One per pass run over one module. */
typedef struct TypeofCx {
  Module *m;
  Type *unit;          /* `()`, shared by every node of that type */
  CallMemo calls;      /* operator call types computed so far */
  Type **shared;       /* the shared types (open addressing, NULL = empty) */
  size_t nshared, capshared;
  const Type *ground_seen[TYPEOF_GROUND_CACHE]; /* types known ground, by address */
  struct { const Type *t; Type *shared; } canon_seen[TYPEOF_CANON_CACHE]; /* type -> its shared twin (itself when shared), by address */
  Type *last_tensor;   /* the shared tensor type canonicalised last */
  const Type *last_tensor_of; /* the object it was the twin of (a source node's tensor type, met again and again) */
  Type *last_const;    /* the shared type const_type gave last (a rule's scalar constants have one or two) */
  TypeofCallSeen call_seen[TYPEOF_CALL_CACHE];  /* recent operator call types, by address */
  TypeofPartsSeen parts_seen[TYPEOF_PARTS_CACHE]; /* recent small composite types, by their parts */
  struct TypeofOpNode *op_nodes; /* shared callee nodes by (operator, function type); open addressing */
  size_t nop_nodes, capop_nodes;
} TypeofCx;

void typeof_init(TypeofCx *t, Module *m);
void typeof_fini(TypeofCx *t);

/* Sets e->type (and a function literal's Function.type) when it follows from
 * the children's types; leaves it NULL otherwise. Returns e. A node typed
 * already is left as it is. */
Expr *typeof_set(TypeofCx *t, Expr *e);


/* typeof_set on every untyped node under e, children first, binders before
 * their uses (a let variable without a type gets its value's). No recursion.
 * True when e ends up typed. */
bool typeof_tree(TypeofCx *t, Expr *e);

/* The call op(args...) with `attrs` (normalised; shared by the caller's
 * calls as it likes), typed as typeof_set would type it. When it is typed,
 * its callee is the one EXPR_OP node of that operator at that function type
 * (typeof_op_node), shared with every other such call, as TVM has one Op
 * object for all its uses (inference instantiates a callee per call;
 * printing and structural equality take atoms by value): 40 bytes less per
 * call. A call typed before with the same attributes object and argument
 * type objects is built straight away, without a throwaway callee. */
Expr *typeof_op_call(TypeofCx *t, int32_t op, Attrs *attrs, Expr **args, uint32_t nargs, Span sp);
/* The callee node of operator op at function type fn, made on first use and
 * shared from then on (fn: a shared type, typeof_fn_type, or one the call
 * memo handed out: the key is its address). Its span is its first call's. */
Expr *typeof_op_node(TypeofCx *t, int32_t op, Type *fn, Span sp);

/* Shared types: one object per distinct tuple, ref, monomorphic function, ADT
 * or tensor type (integer or `?` extents) built through t, equal (type_equal)
 * to a fresh one. The parts may be any types; they are shared first. A pass
 * building millions of nodes of a few types allocates each type once. */
Type *typeof_tuple_type(TypeofCx *t, Type *const *fields, uint32_t n);
Type *typeof_ref_type(TypeofCx *t, Type *inner);
Type *typeof_fn_type(TypeofCx *t, Type *const *args, uint32_t n, Type *ret);
/* The ADT type def[args...], shared the same way. */
Type *typeof_adt_type(TypeofCx *t, TypeDef *def, Type *const *args, uint32_t n);
/* The shared type equal to `type`; `type` as it is when the table does not
 * take it (type variables, polymorphic function types, symbolic extents). */
Type *typeof_shared(TypeofCx *t, Type *type);

/* No unification variable, `_`, unresolved name or type parameter. */
bool typeof_ground(const Type *t);
/* A checked type with nothing left to infer: no unification variable, `_` or
 * unresolved name (type parameters in scope allowed, unlike typeof_ground). */
bool typeof_known(const Type *t);

/* ---- the kinds a pass builds most: their rules (typeof_set applies the
 * same ones) and typed builders, typeof_set(t, build_var(...)) and so on
 * without the dispatch; inline, as a pass makes millions of these nodes. */

/* typeof_ground(t), remembered by address for the last type seen at each slot
 * (the variables a pass uses have a few shared types; tensor types always are). */
static inline bool typeof_ground_known(TypeofCx *tc, const Type *t) {
  if (!t) return false;
  if (t->kind == TYPE_TENSOR) return true;
  const Type **c = &tc->ground_seen[((uintptr_t)t >> 4) % TYPEOF_GROUND_CACHE];
  if (*c == t) return true;
  if (!typeof_ground(t)) return false;
  *c = t;
  return true;
}

static inline bool typeof_same(const Type *a, const Type *b) { return a == b || (a && b && type_equal(a, b)); }

static inline Type *typeof_var_rule(TypeofCx *tc, const Var *v) {
  return v && typeof_ground_known(tc, v->type) ? v->type : NULL;
}

static inline Type *typeof_proj_rule(const Expr *tuple, uint32_t i) {
  const Type *t = tuple->type;
  return t && t->kind == TYPE_TUPLE && i < t->tuple.n ? t->tuple.fields[i] : NULL;
}

static inline Type *typeof_ref_read_rule(const Expr *ref) {
  const Type *t = ref->type;
  return t && t->kind == TYPE_REF ? t->ref.inner : NULL;
}

static inline Type *typeof_ref_write_rule(TypeofCx *tc, const Expr *ref, const Expr *value) {
  const Type *t = ref->type;
  return t && t->kind == TYPE_REF && typeof_same(t->ref.inner, value->type) ? tc->unit : NULL;
}

/* The let's own part of its rule: the variable has its value's type. */
static inline bool typeof_let_binds(const Var *v, const Expr *value) {
  return v->type && value->type && (v->type == value->type || typeof_same(v->type, value->type));
}

static inline Type *typeof_let_rule(const Var *v, const Expr *value, const Expr *body) {
  return body->type && typeof_let_binds(v, value) ? body->type : NULL;
}

static inline Expr *typeof_var(TypeofCx *tc, Var *v, Span sp) {
  Expr *e = build_var(tc->m, v, sp);
  e->type = typeof_var_rule(tc, v);
  return e;
}

static inline Expr *typeof_proj(TypeofCx *tc, Expr *tuple, uint32_t i, Span sp) {
  Expr *e = build_proj(tc->m, tuple, i, sp);
  e->type = typeof_proj_rule(tuple, i);
  return e;
}

static inline Expr *typeof_ref_read(TypeofCx *tc, Expr *ref, Span sp) {
  Expr *e = build_ref_read(tc->m, ref, sp);
  e->type = typeof_ref_read_rule(ref);
  return e;
}

static inline Expr *typeof_ref_write(TypeofCx *tc, Expr *ref, Expr *value, Span sp) {
  Expr *e = build_ref_write(tc->m, ref, value, sp);
  e->type = typeof_ref_write_rule(tc, ref, value);
  return e;
}

static inline Expr *typeof_let(TypeofCx *tc, Var *v, Expr *value, Expr *body, Span sp) {
  Expr *e = build_let(tc->m, v, value, body, sp);
  e->type = typeof_let_rule(v, value, body);
  return e;
}


#endif
