/* ir/type_any.h — "does any part of this type answer yes?", one walk for
 * every such question.
 *
 * Several analyses ask a yes/no question of a type and its parts: is a
 * dimension unknown, is a type parameter mentioned, is there a function type
 * inside, is a unification variable the type itself... Each used to be its
 * own recursive switch over the type kinds; they differ only in what a single
 * part answers, whether solved unification variables are followed, and what
 * a missing type means. type_any walks the parts (bounded by
 * stack_exhausted(), ir/diag.h) and asks `hit` of each:
 *
 *     static bool is_func(const Type *t, void *ctx) { return t->kind == TYPE_FUNC; }
 *     bool holds_fn = type_any(t, is_func, NULL, 0);
 *
 * A question of the form "is every part ground?" is !type_any(t, not_ground, ...).
 */
#ifndef RELAYC_IR_TYPE_ANY_H
#define RELAYC_IR_TYPE_ANY_H

#include <stdbool.h>

#include "ir/ast.h"

/* Does this part itself answer yes? Called with a non-NULL part, before its
 * own parts are visited; it need not look at them. */
typedef bool (*TypePartFn)(const Type *t, void *ctx);

/* How type_any reads a type (bit flags). */
enum {
  TYPE_ANY_SOLVED = 1u << 0,  /* each part is first replaced by type_solved(part) */
  TYPE_ANY_MISSING = 1u << 1, /* a NULL part, or one too deep for the stack, answers yes
                                 (without it, no) */
};

/* True when hit(p, ctx) is true for t or one of its parts p: a tuple's
 * fields, a function type's argument types then its result type, an ADT's
 * type arguments, a reference's contents, recursively; tensor shapes and
 * unresolved names' arguments are not parts. Stops at the first yes. */
bool type_any(const Type *t, TypePartFn hit, void *ctx, unsigned how);

/* The question asked most: is t ground, with no unification variable
 * (solved or not: links are not followed), `_` or unresolved name in it,
 * and no type parameter or polymorphic function type unless tvars_ok?
 * NULL, or a type too deep for the stack, is not. */
bool type_ground(const Type *t, bool tvars_ok);

#endif
