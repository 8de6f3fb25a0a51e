/* tests/fuzz/value_type.h — the pass fuzzer's type oracle: whether the value a
 * run of @main returned has the result type @main was checked to have. */
#ifndef RELAYC_TESTS_FUZZ_VALUE_TYPE_H
#define RELAYC_TESTS_FUZZ_VALUE_TYPE_H

#include "ir/ast.h"
#include "runtime/value.h"

/* @main's checked result type: its inferred function type's result, else its
 * written return type, else its body's type (NULL when none is known). */
const Type *main_result_type(const Function *main);

/* NULL when v has type t; otherwise a malloc'd sentence naming the first part
 * that does not (its path from the root, what the type wants, what the value
 * is). Tensors: the same dtype and rank, every known extent equal (`?` and
 * symbolic extents match anything); tuples field by field; ADT values by
 * their constructor's type, the fields against the constructor's field types
 * under the type's arguments; closures for function types; references by
 * their contents. A type variable @main leaves free matches anything. */
char *value_type_mismatch(const Value *v, const Type *t);

#endif
