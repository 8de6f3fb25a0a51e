/* transform/canonicalize.c — CanonicalizeOps and CanonicalizeCast
 * (spec/passes.md §4.5, §4.6).
 *
 * CanonicalizeOps: nn.bias_add(x, b, axis=a) → add(x, expand_dims(b, axis=1,
 * num_newaxis=n-a-1)) with a made non-negative by x's rank n (no expand_dims
 * when that is 0). Nothing else.
 *
 * CanonicalizeCast: a widening cast (input bits < target bits; `cast` only)
 * shared by several elementwise/broadcast calls (op_traits class E or B)
 * gets one copy per such consumer, so FuseOps can put each copy in its
 * consumer's group and the fused groups read the narrow input. Consumers are
 * counted in post-order, TVM's visiting order: the first keeps the node,
 * every later one gets a fresh copy (same input, same attributes). Other
 * consumers do not count.
 */
#include <string.h>

#include "ir/build.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "transform/call_pass.h"
#include "transform/callattr.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

/* ------------------------------------------------------------ CanonicalizeOps */

static Expr *ops_post(Rewriter *rw, Expr *old, Expr *e) {
  if (op_call_id(e) != OP_NN_BIAS_ADD || e->call.nargs != 2) return e;
  const Type *t = type_solved_tensor(old->call.args[0]->type);
  if (!t) return e;
  int64_t n = t->tensor.ndim, axis = cattr_int(e, "axis", 1);
  if (axis < 0) axis += n;
  Expr *bias = e->call.args[1];
  if (n - axis - 1 > 0) {
    char a[64];
    snprintf(a, sizeof a, "axis=1, num_newaxis=%lld", (long long)(n - axis - 1));
    bias = op_call(rw->m, "expand_dims", &bias, 1, a, e->span);
  }
  Expr *args[2] = {e->call.args[0], bias};
  return op_call(rw->m, "add", args, 2, NULL, e->span);
}

bool pass_CANONICALIZE_OPS(PassCtx *c); /* the entry point passes.def names */
bool pass_CANONICALIZE_OPS(PassCtx *c) {
  static const int32_t ops[] = {OP_NN_BIAS_ADD};
  return call_pass_run(c, &(CallPass){.ops = ops, .nops = 1, .post = ops_post});
}

/* ------------------------------------------------------------ CanonicalizeCast */

typedef struct CastState {
  PtrMap seen; /* original widening cast → E/B consumers counted so far */
} CastState;

static bool widening_cast(const Expr *e) {
  if (op_call_id(e) != OP_CAST || e->call.nargs != 1) return false;
  const Type *from = type_solved_tensor(e->call.args[0]->type), *to = type_solved_tensor(e->type);
  return from && to && from->tensor.dtype.bits < to->tensor.dtype.bits;
}

static Expr *cast_post(Rewriter *rw, Expr *old, Expr *e) {
  CastState *st = rw->ud;
  int32_t id = op_call_id(e);
  if (id < 0 || op_pattern(id) > OPAT_BROADCAST) return e;
  Expr *out = e;
  for (uint32_t i = 0; i < old->call.nargs; i++) {
    Expr *a = old->call.args[i];
    if (!widening_cast(a)) continue;
    if (++*ptrmap_slot(&st->seen, a) <= 1) continue;
    if (out == old) {
      out = build_copy(rw->m, old);
      out->call.args = arena_memdup(rw->m->arena, e->call.args, e->call.nargs * sizeof(Expr *));
    } else if (out == e && e->call.args == old->call.args) {
      out->call.args = arena_memdup(rw->m->arena, e->call.args, e->call.nargs * sizeof(Expr *));
    }
    out->call.args[i] = build_copy(rw->m, e->call.args[i]);
  }
  return out;
}

static bool is_widening(const Expr *e, void *ud) {
  (void)ud;
  return widening_cast(e);
}

static bool cast_global(PassCtx *c, GlobalDef *g) {
  if (!dag_any(g->fn->body, is_widening, NULL)) return true; /* nothing to copy */
  CastState st = {0};
  Rewriter rw;
  rw_init(&rw, c->m, c->d);
  rw.post = cast_post;
  rw.ud = &st;
  bool ok = rw_function(&rw, g->fn);
  rw_fini(&rw);
  ptrmap_free(&st.seen);
  return ok;
}

bool pass_CANONICALIZE_CAST(PassCtx *c); /* the entry point passes.def names */
bool pass_CANONICALIZE_CAST(PassCtx *c) { return pass_for_each_function(c, cast_global); }
