/* transform/dense_transpose.c — FuseDenseTranspose, relayc's run-pipeline
 * rewrite of the dense gradient's transposes (not a TVM pass; `relayc --run`
 * runs it with the other inference rewrites unless -O0).
 *
 * The nn.dense gradient rule writes TVM's form (spec/gradient.md §4.5):
 *     dx = collapse_sum_like(nn.dense(g, transpose(w)), x)
 *     dw = collapse_sum_like(nn.dense(transpose(g), transpose(x)), w)
 * so the printed gradient program is TVM's. Run as written, every transpose
 * materialises a matrix; nn.matmul's transpose flags read the operand in
 * place instead. This pass rewrites, for 2-D operands of an axis-less or
 * [1, 0] transpose (nn.dense(a, b) = a·bᵀ):
 *     nn.dense(a, transpose(B))            → nn.matmul(a, B)
 *     nn.dense(transpose(A), w)            → nn.matmul(A, w, transpose_a, transpose_b)
 *     nn.dense(transpose(A), transpose(B)) → nn.matmul(A, B, transpose_a)
 * (units and out_dtype kept), and drops collapse_sum_like(e, like) when e
 * already has the result's static type, every extent known (the rule keeps
 * TVM's unconditional collapse; (?, 4) and (?, 4) may be (2, 4) and (1, 4)). A transpose with other uses stays for them; the rewrite never
 * adds work. Types are preserved exactly; new nodes take the replaced node's
 * type (the runner re-types anyway). One bottom-up Rewriter walk per function
 * that calls nn.dense or collapse_sum_like (DAG sharing kept by the
 * Rewriter's memo).
 */
#include <stdlib.h>

#include "ir/attrs.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

bool pass_FUSE_DENSE_TRANSPOSE(PassCtx *c);

/* The rank of e's static tensor type, or -1. */
static int rank_of(const Expr *e) {
  const Type *t = type_solved(e ? e->type : NULL);
  return t && t->kind == TYPE_TENSOR ? (int)t->tensor.ndim : -1;
}

/* e = transpose(X) of a 2-D X swapping its two axes: X (`old` is e's
 * original node, which carries the types); NULL otherwise. */
static Expr *transposed_2d(Expr *e, const Expr *old) {
  if (op_call_id(e) != OP_TRANSPOSE || e->call.nargs != 1 || rank_of(old->call.args[0]) != 2) return NULL;
  const AttrValue *ax = attrs_get(e->call.attrs, "axes");
  if (ax && ax->kind == AV_ARRAY) {
    if (ax->arr.n != 2) return NULL;
    for (uint32_t i = 0; i < 2; i++) {
      const AttrValue *v = ax->arr.items[i];
      int64_t want = 1 - (int64_t)i;
      if (v->kind != AV_INT || (v->i.value != want && v->i.value != want - 2)) return NULL;
    }
  } else if (ax && ax->kind != AV_NONE) {
    return NULL;
  }
  return e->call.args[0];
}

/* Whether t is a tensor type with every extent known: two such types that are
 * equal are one shape at run time (two `?` extents need not be). */
static bool static_tensor(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR) return false;
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    if (t->tensor.dims[i].kind != DIM_INT) return false;
  return true;
}

static Expr *dense_post(Rewriter *rw, Expr *old, Expr *e) {
  if (!e->type) e->type = old->type;
  int32_t id = op_call_id(e);
  if (id == OP_COLLAPSE_SUM_LIKE && e->call.nargs == 2) {
    const Type *a = type_solved(old->call.args[0]->type), *r = type_solved(old->type);
    if (static_tensor(a) && r && type_equal(a, r)) return e->call.args[0];
    return e;
  }
  if (id != OP_NN_DENSE || e->call.nargs != 2) return e;
  Expr *A = transposed_2d(e->call.args[0], old->call.args[0]);
  Expr *B = transposed_2d(e->call.args[1], old->call.args[1]);
  if (!A && !B) return e;
  bool ta = A != NULL, tb = !B; /* dense(a, w) = a·wᵀ: a transposed w needs no flag */
  Expr *args[2] = {A ? A : e->call.args[0], B ? B : e->call.args[1]};
  Expr *r = op_call(rw->m, "nn.matmul", args, 2, ta && tb ? "transpose_a=True, transpose_b=True"
                                                  : ta    ? "transpose_a=True"
                                                  : tb    ? "transpose_b=True"
                                                          : NULL,
                    e->span);
  if (!r) return e;
  /* units and out_dtype carried over when set (unset ones stay default) */
  const AttrValue *u = attrs_get(e->call.attrs, "units"), *od = attrs_get(e->call.attrs, "out_dtype");
  if (u && u->kind == AV_INT) r->call.attrs = attrs_with(rw->m, r->call.attrs, "units", (AttrValue *)u);
  if (od && od->kind == AV_STRING && od->s.len > 0)
    r->call.attrs = attrs_with(rw->m, r->call.attrs, "out_dtype", (AttrValue *)od);
  r->type = old->type;
  return r;
}

bool pass_FUSE_DENSE_TRANSPOSE(PassCtx *c) {
  bool *want = mem_calloc(op_count() + 1, sizeof *want);
  want[OP_NN_DENSE] = want[OP_COLLAPSE_SUM_LIKE] = true;
  bool ok = true;
  for (uint32_t i = 0; i < c->m->ndefs && ok; i++) {
    Function *fn = c->m->defs[i]->fn;
    if (!fn || fn_skipped_by_function_passes(fn) || !dag_calls_any(fn->body, want, op_count())) continue;
    Rewriter rw;
    rw_init(&rw, c->m, c->d);
    rw.post = dense_post;
    ok = rw_function(&rw, fn);
    rw_fini(&rw);
  }
  mem_free(want);
  return ok;
}
