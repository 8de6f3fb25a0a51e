/* eval/closed.c — eval_closed_expr: lower one closed expression (without
 * the module's globals), run it once, hand the value back (eval/closed.h).
 *
 * Trade-off: every call builds and frees a tiny Program (a few small
 * allocations), which is cheap next to the kernels FoldConstant runs and
 * keeps the folded values exactly those of `--run`. A caller without a Diag
 * gets a process-wide sink for the messages it does not want.
 */
#include "eval/closed.h"

#include <stdio.h>

#include "eval/lower.h"
#include "eval/vm.h"

static FILE *sink(void) {
  static FILE *f;
  if (!f) f = fopen("/dev/null", "w");
  if (!f) f = tmpfile();
  return f;
}

/* Whether v (recursively) holds a closure. */
static bool holds_code(const Value *v) {
  switch (value_kind(*v)) {
  case VK_CLOSURE: return true;
  case VK_TUPLE: {
    TupleObj *t = value_tuple(*v);
    for (uint32_t i = 0; i < t->n; i++)
      if (holds_code(&t->f[i])) return true;
    return false;
  }
  case VK_ADT: {
    AdtObj *a = value_adt(*v);
    for (uint32_t i = 0; i < a->ctor->nfields; i++)
      if (holds_code(&a->f[i])) return true;
    return false;
  }
  case VK_REF: return holds_code(&value_ref(*v)->v);
  default: return false;
  }
}

int eval_closed_expr(Module *m, Expr *e, Value *out, Diag *d) {
  Diag quiet;
  if (!d) {
    diag_init(&quiet, sink(), m->src);
    d = &quiet;
  }
  *out = value_none();
  int before = d->nerrors;
  Program *p = lower_closed(m, e, d);
  if (!p) {
    d->nerrors = before; /* not closed: not an error of the program */
    return EVAL_CLOSED_NOT_VALUE;
  }
  Value r = value_none();
  int st = vm_run(p, p->entry, NULL, 0, &r, d, NULL);
  if (st != VM_OK) {
    value_release(r);
    program_free(p);
    return EVAL_CLOSED_ERROR;
  }
  if (holds_code(&r)) {
    value_release(r);
    program_free(p);
    return EVAL_CLOSED_NOT_VALUE;
  }
  program_free(p);
  *out = r;
  return EVAL_CLOSED_OK;
}
