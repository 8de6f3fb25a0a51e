/* ir/print.h — the canonical printer (spec/text-format.md §7).
 *
 * Prints a resolved module in TVM's canonical 0.0.5 form: header, type
 * definitions then functions sorted by name, one call per line with `%N`
 * hoisting and module-wide numbering, names made unique, attributes in schema
 * order with defaults omitted, non-scalar constants in a trailing #[metadata]
 * section. With `types`, after inference, adds `ty=...` comment annotations.
 * Output re-parses to a structurally equal module, and printing is idempotent.
 */
#ifndef RELAYC_IR_PRINT_H
#define RELAYC_IR_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/ast.h"

typedef struct PrintOptions {
  bool types; /* typed mode: annotations from inference and `ty=...` comments */
  Diag *diag; /* optional: "expression nested too deeply" (else on stderr),
                 warnings for names the lexer cannot read back */
} PrintOptions;

void print_module(FILE *out, Module *m, PrintOptions opts);
/* A bare expression module (m->expr): no trailing newline, like TVM. */
void print_expression(FILE *out, Module *m, PrintOptions opts);
/* A type in Relay syntax (diagnostics use it): `Tensor[(1, 3), float32]`. */
void print_type(FILE *out, const Type *t);
/* Same into an arena-allocated string. */
char *type_to_string(Arena *a, const Type *t);

#endif
