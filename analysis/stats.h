/* analysis/stats.h — `relayc --stats`: what @main computes, in numbers.
 *
 * For the typed @main of a module (after any passes): operator calls by
 * name, calls of functions, parameters and constants (count, elements,
 * bytes), multiply-accumulates by the registry's MAC rules (ops/macs/, TVM's
 * rules for conv2d, conv2d_transpose, dense, batch_matmul and the same
 * formulas for conv1d, conv3d and matmul) and the largest tensor a call
 * produces. Every node of @main's body is counted once however many parents
 * share it, nested functions (fused Primitive functions) included; calls of
 * other global functions are counted as calls, not followed.
 *
 * Text (default) or one JSON object per module (`json`); figures that depend
 * on a dimension that is not a static integer are left out and counted as
 * unknown.
 */
#ifndef RELAYC_ANALYSIS_STATS_H
#define RELAYC_ANALYSIS_STATS_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/ast.h"

/* Writes the statistics of m's @main to out. Returns 0, or 2 after reporting
 * through d that the module has no @main. */
int stats_report(FILE *out, Module *m, bool json, Diag *d);

#endif
