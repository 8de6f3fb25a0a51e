/* transform/normal_form.h — what transform/normal_form.c offers other passes
 * besides its three pass entry points. */
#ifndef RELAYC_TRANSFORM_NORMAL_FORM_H
#define RELAYC_TRANSFORM_NORMAL_FORM_H

#include <stdbool.h>

#include "transform/pass.h"

/* ToBasicBlockNormalForm on each global function that lifts a node with an
 * effect (a graph-shared call of a function, ref operation or stateful
 * operator used in more than one scope: inside and outside a function
 * literal or branch), so such a node is let-bound once, in the scope
 * enclosing its uses, with every effect of the function bound in evaluation
 * order; other functions are left untouched. PartialEvaluate's preparation
 * (TVM's rejects graph-shared nodes outright). false: nesting too deep.
 * effectful[i] false says def i has no node with an effect (dagscan.h
 * dag_effects(...).own), so it is skipped; NULL: each function is scanned. */
bool normal_form_bind_lifted_effects(PassCtx *c, const bool *effectful);

/* The same, run only when some global function has a literal that uses such
 * a node of its enclosing code (transform/dagscan.h
 * dag_literal_captures_effect): LambdaLift's and Defunctionalization's
 * preparation, so the literal captures the let-bound variable instead of
 * running the node per call; what it cannot bind they still refuse. The
 * module is re-typed after binding (those passes read signatures). false:
 * nesting too deep, or (an internal error) the result does not type-check.
 * *captured (when not NULL): whether some function had such a literal (and
 * was rewritten: what is left to refuse can only be there then). */
bool normal_form_bind_captured_effects(PassCtx *c, bool *captured);

#endif
