/* sema/resolve.h — name resolution: scopes, graph bindings, globals, constructors, ops.
 *
 * Rewrites a parsed module in place into its resolved form (see the life of
 * a tree in ir/ast.h), following spec/text-format.md §5 with relayc's rules:
 * proper lexical shadowing; a let variable is visible in its own value only
 * when that value is a function; graph variables are one table for the whole
 * text, must be bound before use, and rebinding one is an error; duplicate
 * `def`, type or constructor names are errors; operators are checked against
 * the registry (with "did you mean"), and operator call attributes are
 * normalised (ops/registry.h). Reports every error it finds; returns false
 * if any was reported.
 */
#ifndef RELAYC_SEMA_RESOLVE_H
#define RELAYC_SEMA_RESOLVE_H

#include "ir/ast.h"

bool resolve_module(Module *m, Diag *d);

/* Resolves a bare expression module (m->expr): free variables allowed. */
bool resolve_expression(Module *m, Diag *d);

/* Global lookup after resolution (NULL if absent). */
GlobalDef *module_find_def(Module *m, const char *name);

#endif
