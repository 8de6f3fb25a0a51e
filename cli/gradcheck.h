/* cli/gradcheck.h — `relayc --check-grad`: analytic gradient vs central finite differences
 * (spec/gradient.md §3.2; the method is described in gradcheck.c).
 *
 * `analytic` and `numeric` are two typed copies of the same program (the
 * driver parses the file twice): the first becomes its gradient, the second
 * its float64 copy. Both are modified. Prints a per-parameter table on
 * stdout and returns the exit status: 0 every compared element within
 * tolerance, 4 not, 1 rejected program (e.g. an operator without a gradient),
 * 2 usage or I/O error (a bad --input), 3 run-time error.
 */
#ifndef RELAYC_CLI_GRADCHECK_H
#define RELAYC_CLI_GRADCHECK_H

#include "cli/driver.h"
#include "ir/ast.h"

int gradcheck_run(Module *analytic, Module *numeric, const DriverOptions *o, Diag *d);

#endif
