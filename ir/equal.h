/* ir/equal.h — structural equality of resolved modules and expressions.
 *
 * Two modules are equal when they have the same type definitions and the same
 * global functions (by name) whose bodies are equal up to renaming of bound
 * variables (alpha-equivalence) and whose DAG sharing agrees. Constants are
 * equal when dtype, shape and bytes are equal. Used by the round-trip tests.
 */
#ifndef RELAYC_IR_EQUAL_H
#define RELAYC_IR_EQUAL_H

#include <stdio.h>

#include "ir/ast.h"

/* If `why` is non-NULL and the modules differ, a one-line reason is written there. */
bool module_equal(Module *a, Module *b, FILE *why);
bool type_equal(const Type *a, const Type *b);

#endif
