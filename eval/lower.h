/* eval/lower.h — typed AST to register bytecode (eval/code.h).
 *
 * lower_module turns every global function (and nested function literal) of
 * a resolved, typed module into a Code; lower_expression does the same for an
 * expression module (m->expr becomes a zero-parameter entry function).
 * Variables are resolved to registers, globals to direct indices, shared DAG
 * nodes get memo registers, closures capture exactly their free variables.
 * Deep let chains are iterated; other nesting recurses with stack_exhausted()
 * guards ("expression nested too deeply").
 */
#ifndef RELAYC_EVAL_LOWER_H
#define RELAYC_EVAL_LOWER_H

#include "eval/code.h"
#include "ir/ast.h"

/* NULL after reporting an error. The program borrows the module. */
Program *lower_module(Module *m, Diag *d);
Program *lower_expression(Module *m, Diag *d);
/* Lowers only `e` (a closed expression of m: no free variables, no globals)
 * as the entry function p->entry; the globals of m are left out, so a
 * reference to one fails to lower (NULL after reporting). */
Program *lower_closed(Module *m, Expr *e, Diag *d);
void program_free(Program *p);
/* Index of the global `name` in p->codes, or -1. */
int32_t program_global(const Program *p, const char *name);
/* Disassembly for debugging (RELAYC_DUMP_CODE=1). */
void program_dump(FILE *out, const Program *p);

#endif
