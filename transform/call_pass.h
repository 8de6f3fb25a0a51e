/* transform/call_pass.h — the driver of a pass that rewrites operator calls
 * one at a time (DivToMul, FastMath, SimplifyInference, CanonicalizeOps).
 *
 * Each global function a function pass may touch (pass_for_each_function)
 * that calls one of `ops` somewhere (a dagscan pre-scan) is rewritten by a
 * Rewriter with `post` as its only hook; the other functions are not
 * visited, so their nodes stay the same pointers and the re-typing skips
 * them.
 *
 *     static const int32_t ops[] = {OP_EXP, OP_TANH};
 *     return call_pass_run(c, &(CallPass){.ops = ops, .nops = 2, .post = post, .keep_types = true});
 */
#ifndef RELAYC_TRANSFORM_CALL_PASS_H
#define RELAYC_TRANSFORM_CALL_PASS_H

#include <stdbool.h>
#include <stdint.h>

#include "transform/pass.h"
#include "transform/rewrite.h"

typedef struct CallPass {
  const int32_t *ops; /* the built-in operator ids (ops/op_ids.h) whose calls post rewrites */
  uint32_t nops;
  RwPost post;        /* the Rewriter's post hook */
  bool keep_types;    /* Rewriter.keep_types (post types what it builds) */
  bool mark_memo;     /* Rewriter.mark_memo (post writes no Expr.mark) */
} CallPass;

/* Runs the rewrite over c->m; false if a function was nested too deeply. */
bool call_pass_run(PassCtx *c, const CallPass *p);

#endif
