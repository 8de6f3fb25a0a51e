/* ir/equal.h — structural equality of resolved modules and expressions:
 * TVM's structural_equal (spec/passes.md §9), used by `relayc --equal`,
 * `--check-roundtrip` and the pass tests.
 *
 * Two modules are equal when they have the same type definitions and the same
 * global functions (paired by name) whose bodies are equal up to renaming of
 * bound variables, with binders compared by their written or else inferred
 * type, graph nodes (calls, lets, ifs, functions, non-empty tuples, refs,
 * matches) shared alike, constants by bytes, attributes by value (doubles
 * within 1e-9). On a difference, `why` receives "<where>: <what>" and one
 * line per module with the position and a rendering of the differing node:
 *
 *     @main: operator add vs subtract
 *       a.relay:3:3: add(%x, %y)
 *       b.relay:3:3: subtract(%x, %y)
 */
#ifndef RELAYC_IR_EQUAL_H
#define RELAYC_IR_EQUAL_H

#include <stdio.h>

#include "ir/ast.h"

/* If `why` is non-NULL and the modules differ, the first difference is written there. */
bool module_equal(Module *a, Module *b, FILE *why);
bool type_equal(const Type *a, const Type *b);
/* Two calls' attributes as the module comparison sees them (defaults filled
 * in, a missing list equal to all defaults, doubles within 1e-9): TVM's
 * StructuralEqual on attribute objects, for passes such as
 * EliminateCommonSubexpr. */
bool call_attrs_equal(const Attrs *a, const Attrs *b);

#endif
