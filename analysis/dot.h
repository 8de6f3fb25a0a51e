/* analysis/dot.h — `relayc --emit=dot`: a typed module as a Graphviz graph.
 *
 * @main is drawn at the top level, every other global function as a
 * cluster. One node per expression node, however many parents share it (the
 * DAG is the picture): operator calls (name and non-default attributes, cut
 * short), parameters, constants (shape and dtype, never their data), tuples,
 * projections, calls of functions, refs; edges carry the inferred type of the
 * value flowing along them. `if` and `match` are a decision node with a
 * subgraph per branch or clause, and nested functions (fused `Primitive=1`
 * functions after FuseOps) are clusters whose parameters receive the call's
 * arguments along dashed edges.
 *
 * To keep large networks readable (ResNet-50 renders with `dot -Tsvg` in a
 * few seconds) two kinds of node are drawn inside their only consumer: a
 * constant used once as an operator's argument (a line `#i: (64,3,7,7)
 * float32` in the operator's box), and the projection `.k` of an operator
 * call used by nothing else (batch_norm(...).0 is one box).
 *
 * Every node belongs to the innermost branch or function that contains all
 * its uses, so a value computed before an `if` and used in both branches is
 * drawn outside it. The walk is iterative (analysis/common.h): deep nesting and
 * long chains cost no C stack.
 */
#ifndef RELAYC_ANALYSIS_DOT_H
#define RELAYC_ANALYSIS_DOT_H

#include <stdio.h>

#include "ir/ast.h"

/* Writes the DOT graph of the typed module m (or of its bare expression). */
void dot_write(FILE *out, Module *m);

#endif
