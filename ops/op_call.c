/* ops/op_call.c — operator call builders (see op_call.h).
 *
 * Attributes go through op_attrs_normalize, the same path the resolver
 * takes, so a pass-made call prints, compares and runs like a written one.
 * Errors here are programming errors in a pass or rule: they abort with the
 * operator's name instead of producing an ill-formed tree.
 */
#include "ops/op_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ops/registry.h"

static void die(const char *what, const char *name, const char *detail) {
  fprintf(stderr, "relayc: internal error: %s '%s'%s%s\n", what, name, detail ? ": " : "", detail ? detail : "");
  abort();
}

Expr *op_ref(Module *m, const char *name, Span sp) {
  int32_t id = op_lookup(name);
  if (id < 0) die("building a call of the unknown operator", name, NULL);
  Expr *e = expr_new(m, EXPR_OP, sp);
  e->op.name = op_get(id)->name;
  e->op.id = id;
  return e;
}

Expr *op_call_attrs(Module *m, const char *name, Expr **args, uint32_t nargs, const Attrs *attrs, Span sp) {
  Expr *callee = op_ref(m, name, sp);
  const OpDef *op = op_get(callee->op.id);
  Attrs *a = NULL;
  if (attrs) {
    a = arena_alloc(m->arena, sizeof *a);
    *a = *attrs;
    a->items = attrs->n ? arena_memdup(m->arena, attrs->items, attrs->n * sizeof(Attr)) : NULL;
  }
  Diag d;
  diag_init(&d, stderr, NULL);
  if (!op_attrs_normalize(m, op, &a, sp, &d)) die("bad attributes for", name, NULL);
  return expr_call(m, callee, args, nargs, a, sp);
}

Expr *op_call(Module *m, const char *name, Expr **args, uint32_t nargs, const char *attrs_text, Span sp) {
  const char *err = NULL;
  Attrs *a = attrs_parse_list(m, attrs_text, false, &err);
  if (!a) die("malformed attribute text for", name, attrs_text);
  return op_call_attrs(m, name, args, nargs, a, sp);
}

int32_t op_call_id(const Expr *e) {
  if (!e || e->kind != EXPR_CALL || e->call.fn->kind != EXPR_OP) return -1;
  return e->call.fn->op.id;
}

bool op_call_is(const Expr *e, const char *name) {
  int32_t id = op_call_id(e);
  return id >= 0 && strcmp(op_get(id)->name, name) == 0;
}
