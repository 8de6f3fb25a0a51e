/* parser/parser.h — text to AST: the front end's entry points.
 *
 * parse_module reads a whole module (version header, definitions, optional
 * #[metadata] section, which it loads through parser/metadata.h). It reports
 * every syntax error it can recover from and always returns a Module (possibly
 * partial); the caller checks d->nerrors. Names are not resolved here: see
 * the life of a tree in ir/ast.h and sema/resolve.h.
 *
 *     Diag d; diag_init(&d, stderr, src);
 *     Module *m = parse_module(src, &d);
 *     if (d.nerrors == 0) resolve_module(m, &d);
 *     module_free(m);
 */
#ifndef RELAYC_PARSER_PARSER_H
#define RELAYC_PARSER_PARSER_H

#include <stdio.h>

#include "ir/ast.h"

Module *parse_module(Source *src, Diag *d);
/* A bare expression (TVM's parse_expr): optional version header, one expr;
 * the result is in m->expr. */
Module *parse_expression(Source *src, Diag *d);
/* --emit=tokens: one token per line, `line:col KIND text`. Returns false on a lexical error. */
bool dump_tokens(Source *src, FILE *out, Diag *d);

#endif
