/* transform/gradient_syntax.h — expanding relayc's `gradient(F)` (spec/gradient.md §1.10).
 *
 * `gradient(F)`, F a global or a function literal of type fn (T1, ..., Tn) -> R,
 * is a call of the pseudo-operator `gradient` (ops/op_table.def, relation
 * rel_gradient) of type fn (T1, ..., Tn) -> (R, (T1, ..., Tn)). After type
 * inference the driver replaces every such call by the function literal the
 * Gradient transform makes (transform/gradient.h, higher-order mode), innermost
 * first and re-typing after each round, so a function that itself uses
 * `gradient` can be differentiated again: second derivatives.
 */
#ifndef RELAYC_TRANSFORM_GRADIENT_SYNTAX_H
#define RELAYC_TRANSFORM_GRADIENT_SYNTAX_H

#include <stdbool.h>

#include "ir/ast.h"

/* Does the module call `gradient` anywhere? */
bool gradient_syntax_used(Module *m);
/* Expands every gradient(F) of a typed module and re-types it; false after
 * reporting errors (F not a global or literal, a cycle of gradients, an
 * operator without a gradient rule, ...). */
bool gradient_syntax_expand(Module *m, Diag *d);

#endif
