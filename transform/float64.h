/* transform/float64.h — a float64 copy of a module, for numerical gradient checking
 * (spec/gradient.md §3.2).
 *
 * f64_convert_module rewrites a resolved module in place so that it computes
 * in float64: every float16/bfloat16/float32 tensor type in an annotation
 * (parameters, let binders, return types, constructor fields, nested in
 * tuples, functions, refs and ADT arguments), every such constant (values
 * converted exactly) and every dtype attribute naming such a type becomes
 * float64; integer and bool types are unchanged. Inferred types are cleared
 * and the module is re-typed; false (errors reported) if it no longer
 * type-checks, e.g. when it mixes dtypes through reinterpret.
 */
#ifndef RELAYC_TRANSFORM_FLOAT64_H
#define RELAYC_TRANSFORM_FLOAT64_H

#include <stdbool.h>

#include "ir/ast.h"

bool f64_convert_module(Module *m, Diag *d);

#endif
