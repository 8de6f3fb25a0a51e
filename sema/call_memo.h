/* sema/call_memo.h — operator call types remembered by (operator, attributes, argument types).
 *
 * A pass that builds many operator calls over typed arguments builds the same
 * few calls over and over (Gradient: an add of two Tensor[(1, 16), float32];
 * ToMixedPrecision: a cast of one to float16), and so does a program (a
 * 100,000-call chain has a dozen distinct calls). Typing each through its
 * relation costs far more than a look-up here (sema/infer.c looks every
 * operator call up with call_memo_lookup once its arguments are inferred):
 *
 *     CallMemo cm = {0};
 *     uint64_t h;
 *     bool keyed = call_memo_key(call, &h);       // arguments typed first
 *     if (!(keyed && call_memo_apply(&cm, call, h))) {
 *       if (infer_untyped(m, call, d) && keyed) call_memo_add(&cm, m, call, h);
 *     }
 *     call_memo_free(&cm);
 *
 * A call is keyed only when its type depends on nothing but the key: every
 * argument typed with a tensor type of integer or `?` extents (or a tuple of
 * them), and a constant argument only for an operator whose relation never
 * reads constants' values (ops/op_traits.h op_type_reads_consts). Attributes
 * compare exactly (attrs_equal_exact: a relation may round a float
 * attribute), argument types structurally. A hit gives the call the recorded
 * result type and its callee the recorded function type, shared between the
 * calls (types are immutable once solved).
 */
#ifndef RELAYC_SEMA_CALL_MEMO_H
#define RELAYC_SEMA_CALL_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ast.h"

typedef struct CallMemoEntry CallMemoEntry;

typedef struct CallMemoRecent CallMemoRecent;

/* Zero-initialised is empty. */
typedef struct CallMemo {
  CallMemoEntry *items;
  size_t n, cap;
  int32_t *heads; /* hash buckets into items (-1 = empty), a power of two */
  size_t nheads;
  CallMemoRecent *recent; /* calls met last, by their argument types' addresses (call_memo_lookup) */
} CallMemo;

/* The key of e (an operator call whose arguments are typed); false when e is
 * not a call the memo takes. */
bool call_memo_key(const Expr *e, uint64_t *h);
/* Gives e (keyed by h) the result and callee types of an equal call recorded
 * before; false when there is none. */
bool call_memo_apply(const CallMemo *cm, Expr *e, uint64_t h);
/* Records e's type and its callee's (both set; nothing when the result is
 * not a type the memo takes). */
void call_memo_add(CallMemo *cm, Module *m, const Expr *e, uint64_t h);
/* call_memo_add with e's result and callee types given (the inference of e
 * has them before it records them in e). */
void call_memo_add_types(CallMemo *cm, Module *m, const Expr *e, Type *fn_type, Type *ret, uint64_t h);

/* The result and callee types of a call equal to e recorded before (e left
 * as it is; false when there is none): call_memo_key and the table, tried first by the addresses of e's
 * argument types (a call over the very type objects of a recorded one, the
 * common case in a module typed with shared types: no extents hashed).
 * *keyed: whether e is a call the memo takes (*h its key then, for
 * call_memo_add_types after a miss). */
bool call_memo_lookup(CallMemo *cm, const Expr *e, bool *keyed, uint64_t *h, Type **fn_type, Type **ret);
void call_memo_free(CallMemo *cm);

#endif
