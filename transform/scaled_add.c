/* transform/scaled_add.c — FuseScaledAdd, relayc's run-pipeline rewrite of a
 * scaled update into one kernel call (not a TVM pass; `relayc --run` runs it
 * with the other inference rewrites unless -O0).
 *
 * An SGD step writes `subtract(w, multiply(lr, dw))`: run as written, the
 * multiply makes a full-size temporary and the subtract reads it back (two
 * passes over memory, two result buffers). This pass rewrites
 *     add(a, multiply(s, b)), add(a, multiply(b, s)), and the same with the
 *     add's operands swapped  → relayc.add_scaled(a, b, s)
 *     subtract(a, multiply(s, b)) or subtract(a, multiply(b, s))
 *                              → relayc.add_scaled(a, b, −s)
 * (ops/kernels/k_elemwise_scaled.c: a + s·b in one pass, bit for bit the
 * pair it replaces) where
 *   - s is a scalar (rank 0) and a, b, the multiply and the result all have
 *     one static float32 or float64 tensor type of rank >= 1 (no
 *     broadcasting; scalars stay on the interpreter's inline paths);
 *   - the multiply has no other use (counted on the function's DAG, nested
 *     literals included): a shared s·b is computed once, as before.
 * −s is a new constant when s is a constant (negation is exact), else
 * negative(s). When b is a float32 rank-2 nn.matmul(p, q) with no other use
 * (the weight gradient of a dense layer after FuseDenseTranspose, visible once
 * ResolveStaticRefs has turned Gradient's reference cells into dataflow) the
 * call is relayc.matmul_add_scaled(a, p, q, ±s) with the matmul's attributes
 * instead: the update is applied to each panel of the product as it is
 * stored (ops/kernels/k_gemm.h kgemm_f32_add_scaled), bit for bit the pair of
 * calls, without the product's buffer and its second pass over memory.
 * Types are preserved exactly (new nodes take the replaced node's type; the
 * runner re-types anyway). One scan per function (uses counted), then one
 * bottom-up Rewriter walk where an add or subtract has a multiply operand.
 */
#include <string.h>

#include "ir/build.h"
#include "ir/equal.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

bool pass_FUSE_SCALED_ADD(PassCtx *c);

/* e's tensor type (a variable use: its binder's), or NULL. */
static const Type *tensor_of(const Expr *e) {
  const Type *t = e ? e->type : NULL;
  if (!t && e && e->kind == EXPR_VAR && e->var.var) t = e->var.var->type;
  return type_solved_tensor(t);
}

static bool float_32_64(DType dt) { return dt.code == DT_FLOAT && (dt.bits == 32 || dt.bits == 64) && dt.lanes == 1; }

/* A float32/float64 tensor type of rank >= 1 with every extent known. */
static bool static_float_tensor(const Type *t) {
  if (!t || !float_32_64(t->tensor.dtype) || t->tensor.ndim == 0) return false;
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    if (t->tensor.dims[i].kind != DIM_INT) return false;
  return true;
}

static bool is_scalar_of(const Expr *e, DType dt) {
  const Type *t = tensor_of(e);
  return t && t->tensor.ndim == 0 && dtype_eq(t->tensor.dtype, dt);
}

/* Edges into the original node e (its parents), from the function's scan. */
static uint32_t uses_of(const DagScan *s, const Expr *e) {
  uint32_t k;
  return dag_scanned(s, e, &k) ? s->uses[k] : 0;
}

/* The parts of multiply(s, b) / multiply(b, s): old is the original
 * multiply (types, uses), now its rewritten form (operands). */
typedef struct Scaled {
  Expr *s, *b;
  const Expr *ob;  /* b before the rewrite (its uses) */
  const Type *st; /* s's type */
} Scaled;

static bool scaled_parts(const DagScan *scan, const Expr *old, Expr *now, const Type *want, Scaled *out) {
  if (op_call_id(old) != OP_MULTIPLY || old->call.nargs != 2 || op_call_id(now) != OP_MULTIPLY ||
      now->call.nargs != 2 || uses_of(scan, old) != 1)
    return false;
  const Type *t = tensor_of(old);
  if (!t || !type_equal(t, want)) return false;
  for (uint32_t i = 0; i < 2; i++) {
    const Expr *os = old->call.args[i], *ob = old->call.args[1 - i];
    const Type *tb = tensor_of(ob);
    if (is_scalar_of(os, want->tensor.dtype) && tb && type_equal(tb, want)) {
      out->s = now->call.args[i];
      out->b = now->call.args[1 - i];
      out->ob = ob;
      out->st = tensor_of(os);
      return true;
    }
  }
  return false;
}

/* −s: a negated copy of a constant scalar, else negative(s). */
static Expr *negated(Module *m, Expr *s, const Type *st) {
  if (s->kind == EXPR_CONST && s->constant->data) {
    DType dt = s->constant->dtype;
    if (dt.bits == 32) {
      float v = -*(const float *)s->constant->data;
      return build_const(m, dt, 0, NULL, &v, s->span);
    }
    double v = -*(const double *)s->constant->data;
    return build_const(m, dt, 0, NULL, &v, s->span);
  }
  Expr *n = op_call(m, "negative", (Expr *[]){s}, 1, NULL, s->span);
  if (n) n->type = (Type *)st;
  return n;
}

static bool f32_rank2(const Expr *e) {
  const Type *t = tensor_of(e);
  DType dt = t ? t->tensor.dtype : (DType){0};
  return t && t->tensor.ndim == 2 && static_float_tensor(t) && dt.bits == 32;
}

/* relayc.matmul_add_scaled(a, p, q, s) for a + s·b when b is a float32
 * nn.matmul(p, q) of rank 2 with no other use (its out_dtype, if any, is
 * float32 by the types); else NULL. */
static Expr *fused_product(Rewriter *rw, const DagScan *scan, Expr *a, const Scaled *sc, Expr *s, Span sp) {
  const Expr *ob = sc->ob;
  Expr *b = sc->b;
  if (op_call_id(ob) != OP_NN_MATMUL || op_call_id(b) != OP_NN_MATMUL || b->call.nargs != 2 ||
      uses_of(scan, ob) != 1 || !f32_rank2(ob) || !f32_rank2(ob->call.args[0]) || !f32_rank2(ob->call.args[1]))
    return NULL;
  Expr *r = op_call(rw->m, "relayc.matmul_add_scaled", (Expr *[]){a, b->call.args[0], b->call.args[1], s}, 4, NULL, sp);
  if (r) r->call.attrs = b->call.attrs; /* the same schema (matmul) */
  return r;
}

static Expr *scaled_add_post(Rewriter *rw, Expr *old, Expr *e) {
  if (!e->type) e->type = old->type;
  int32_t id = op_call_id(e);
  if ((id != OP_ADD && id != OP_SUBTRACT) || e->call.nargs != 2 || old->call.nargs != 2) return e;
  const Type *t = tensor_of(old);
  if (!static_float_tensor(t)) return e;
  const DagScan *scan = rw->ud;
  uint32_t tries = id == OP_ADD ? 2 : 1; /* the multiply on the right; for add, then on the left */
  for (uint32_t k = 0; k < tries; k++) {
    uint32_t mi = 1 - k, ai = k;
    const Type *ta = tensor_of(old->call.args[ai]);
    Scaled sc;
    if (!ta || !type_equal(ta, t) || !scaled_parts(scan, old->call.args[mi], e->call.args[mi], t, &sc)) continue;
    Expr *s = id == OP_SUBTRACT ? negated(rw->m, sc.s, sc.st) : sc.s;
    if (!s) return e;
    Expr *r = fused_product(rw, scan, e->call.args[ai], &sc, s, e->span);
    if (!r) r = op_call(rw->m, "relayc.add_scaled", (Expr *[]){e->call.args[ai], sc.b, s}, 3, NULL, e->span);
    if (!r) return e;
    r->type = old->type;
    return r;
  }
  return e;
}

/* Whether some add/subtract of the scan has a multiply operand (else the
 * function is left alone without a rewrite). */
static bool has_candidate(const DagScan *scan) {
  for (uint32_t i = 0; i < scan->n; i++) {
    const Expr *e = scan->pre[i];
    int32_t id = op_call_id(e);
    if ((id == OP_ADD || id == OP_SUBTRACT) && e->call.nargs == 2 &&
        (op_call_id(e->call.args[0]) == OP_MULTIPLY || op_call_id(e->call.args[1]) == OP_MULTIPLY))
      return true;
  }
  return false;
}

static bool scaled_add_function(PassCtx *c, GlobalDef *g) {
  DagScan scan;
  dag_scan_roots(&scan, &g->fn->body, 1, true);
  bool ok = true;
  if (has_candidate(&scan)) {
    Rewriter rw;
    rw_init(&rw, c->m, c->d);
    rw.post = scaled_add_post;
    rw.ud = &scan;
    ok = rw_function(&rw, g->fn);
    rw_fini(&rw);
  }
  dag_free(&scan);
  return ok;
}

bool pass_FUSE_SCALED_ADD(PassCtx *c) { return pass_for_each_function(c, scaled_add_function); }
