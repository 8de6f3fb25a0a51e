/* tests/unit/ut_prog.h — a test's Relay program through the front end, its
 * diagnostics kept in memory.
 *
 * ut_check copies `text`, parses, resolves and type-checks it as t.relay,
 * writing the diagnostics to a memory buffer; false when the program is
 * rejected (what was built is still there to free). ut_load does the same
 * and fails the running Check test with the diagnostics and the text when
 * the program is rejected. ut_passes runs
 * a --pass pipeline over the loaded module and fails the test with the
 * diagnostics when a pass does. ut_errors gives the diagnostics so far
 * (never NULL). ut_unload frees the module, its source and the buffer.
 *
 *   UtProg p;
 *   ut_load(&p, "#[version = \"0.0.5\"]\ndef @main(%x: float32) { %x }");
 *   ut_passes(&p, "ToANormalForm");
 *   ...
 *   ut_unload(&p);
 */
#ifndef RELAYC_TESTS_UT_PROG_H
#define RELAYC_TESTS_UT_PROG_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/ast.h"
#include "ir/diag.h"

typedef struct UtProg {
  Source *src;
  Module *m;
  Diag d;     /* reports to errf */
  FILE *errf; /* a memory stream over err */
  char *err;
  size_t errlen;
} UtProg;

bool ut_check(UtProg *p, const char *text);
void ut_load(UtProg *p, const char *text);
void ut_passes(UtProg *p, const char *spec);
const char *ut_errors(UtProg *p);
void ut_unload(UtProg *p);

#endif
