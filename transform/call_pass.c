/* transform/call_pass.c — the shared driver of the passes that rewrite
 * operator calls one at a time (call_pass.h). pass_for_each_function's
 * callback takes only the PassCtx, so the run wraps it in a struct whose
 * first member is the PassCtx, with the pass's CallPass and the operator
 * table beside it.
 */
#include "transform/call_pass.h"

#include "ops/op_ids.h"
#include "transform/dagscan.h"

typedef struct CallRun {
  PassCtx c; /* first: the callback's PassCtx * is this struct's address */
  const CallPass *p;
  bool ids[OP_BUILTIN_COUNT]; /* ids[op]: a call of op is rewritten */
} CallRun;

static bool rewrite_global(PassCtx *c, GlobalDef *g) {
  CallRun *run = (CallRun *)c;
  if (!dag_calls_any(g->fn->body, run->ids, OP_BUILTIN_COUNT)) return true; /* nothing to rewrite */
  Rewriter rw;
  rw_init(&rw, c->m, c->d);
  rw.post = run->p->post;
  rw.keep_types = run->p->keep_types;
  rw.mark_memo = run->p->mark_memo;
  bool ok = rw_function(&rw, g->fn);
  rw_fini(&rw);
  return ok;
}

bool call_pass_run(PassCtx *c, const CallPass *p) {
  CallRun run = {.c = *c, .p = p};
  for (uint32_t i = 0; i < p->nops; i++)
    if (p->ops[i] >= 0 && p->ops[i] < OP_BUILTIN_COUNT) run.ids[p->ops[i]] = true;
  return pass_for_each_function(&run.c, rewrite_global);
}
