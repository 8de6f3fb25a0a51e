/* transform/conv_epilogue.c — relayc's own inference rewrites for its
 * kernels (not TVM passes; what eval/fold.c did before lowering, now two
 * passes of the pipeline that `relayc --run` runs by default):
 *
 *  FoldBatchNormIntoConv: nn.batch_norm(C, γ, β, μ, σ²).0 with the four
 *    vectors constant, where C is a float32 NCHW/OIHW nn.conv2d with a
 *    constant weight, optionally behind single-use per-channel constant
 *    adds (add / nn.bias_add), becomes
 *        nn.bias_add(nn.conv2d(x, W·s), b')   s = γ/√(σ²+ε), b' = (bias − μ)·s + β
 *    (scale/center honoured). W is rescaled in place when no other
 *    expression of the module holds that constant, else copied.
 *  FuseConvEpilogue: the conv's elementwise tail moves into the kernel:
 *    add(conv, C) / add(C, conv) / nn.bias_add(conv, C) with C a per-channel
 *    constant → relayc.conv2d_bias (constants merged into one bias vector);
 *    add(conv, r) with r of the result's type → relayc.conv2d_add (a dying r
 *    becomes the output buffer); nn.relu(conv) → the same op with relu=True
 *    (relayc.conv2d_relu without bias or residual);
 *    nn.relu(nn.batch_norm(...).0) → relayc.batch_norm_relu(...).0.
 *
 * Both apply to float32 NCHW/OIHW convolutions with static shapes only, and
 * only where the swallowed intermediate values have no other use (parents
 * counted on the original DAG of the function, nested literals included; a
 * function's result counts one use). Rewrites run bottom-up in one Rewriter
 * walk, so chains compose (conv → bias → residual → relu becomes one call).
 * All arithmetic on constants is done in double and rounded to float32 once
 * per merged constant, as before. The passes preserve types exactly, so new
 * nodes carry the type of the node they replace (the runner re-types
 * anyway).
 */
#include <math.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ops/op_call.h"
#include "ir/walk.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "runtime/threadpool.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

bool pass_FOLD_BATCH_NORM_INTO_CONV(PassCtx *c);
bool pass_FUSE_CONV_EPILOGUE(PassCtx *c);

static const DType F32 = {DT_FLOAT, 32, 1};

typedef struct Epi {
  PtrMap uses;  /* old Expr* → parent edges within the function (+1 for its result) */
  PtrMap crefs; /* ConstTensor* → edges reaching a node holding it, module-wide */
} Epi;

/* ------------------------------------------------------------ counting */

/* Counts the parent edges of every node under root (root itself gets one:
 * it is returned), and, when crefs is non-NULL, the edges reaching each
 * constant. */
static void count_edges(Expr *root, PtrMap *uses, PtrMap *crefs) {
  ExprVec st = {0};
  int64_t *r = ptrmap_slot(uses, root);
  if ((*r)++ > 0) return;
  if (crefs && root->kind == EXPR_CONST) (*ptrmap_slot(crefs, root->constant))++;
  vec_push(st, root);
  while (st.len) {
    Expr *e = st.data[--st.len];
    size_t before = st.len, keep = before;
    walk_push_children(e, true, &st);
    for (size_t i = before; i < st.len; i++) {
      Expr *c = st.data[i];
      int64_t *n = ptrmap_slot(uses, c);
      if (crefs && c->kind == EXPR_CONST) (*ptrmap_slot(crefs, c->constant))++;
      if ((*n)++ == 0) st.data[keep++] = c;
    }
    st.len = keep;
  }
  vec_free(st);
}

static int64_t uses_of(const Epi *ep, const Expr *e) {
  const int64_t *v = ptrmap_find(&ep->uses, e);
  return v ? *v : 0;
}

/* ------------------------------------------------------------ patterns */

static bool is_call_of(const Expr *e, int32_t op) { return op_call_id(e) == op && op >= 0; }

static const Type *tensor_type(const Expr *e) { return e ? type_solved_tensor(e->type) : NULL; }

/* A float32 tensor of rank nd with every dimension known. */
static bool f32_static(const Expr *e, uint32_t nd) {
  const Type *t = tensor_type(e);
  if (!t || !dtype_eq(t->tensor.dtype, F32) || t->tensor.ndim != nd) return false;
  for (uint32_t i = 0; i < nd; i++)
    if (t->tensor.dims[i].kind != DIM_INT) return false;
  return true;
}

static int64_t dim(const Expr *e, uint32_t i) { return tensor_type(e)->tensor.dims[i].value; }

static const char *attr_str(const Attrs *a, const char *key, const char *dflt) {
  const AttrValue *v = attrs_get(a, key);
  return v && v->kind == AV_STRING ? v->s.chars : dflt;
}

static bool is_f32_const(const Expr *e) {
  return e && e->kind == EXPR_CONST && dtype_eq(e->constant->dtype, F32) && e->constant->data;
}

/* A convolution of the nn.conv2d family split into its parts. */
typedef struct Conv {
  const Expr *call;
  Expr *x, *w, *bias, *res;
  bool relu;
} Conv;

/* e is a float32 NCHW/OIHW convolution (plain or already fused) of static
 * type: its parts in *cv. */
static bool as_conv(const Expr *e, Conv *cv) {
  int32_t id = op_call_id(e);
  uint32_t need;
  switch (id) {
  case OP_NN_CONV2D: case OP_RELAYC_CONV2D_RELU: need = 2; break;
  case OP_RELAYC_CONV2D_BIAS: case OP_RELAYC_CONV2D_ADD: need = 3; break;
  case OP_RELAYC_CONV2D_BIAS_ADD: need = 4; break;
  default: return false;
  }
  if (e->call.nargs != need) return false;
  const Attrs *a = e->call.attrs;
  const char *ol = attr_str(a, "out_layout", ""), *od = attr_str(a, "out_dtype", "");
  if (strcmp(attr_str(a, "data_layout", "NCHW"), "NCHW") != 0 || strcmp(attr_str(a, "kernel_layout", "OIHW"), "OIHW") != 0 ||
      (ol[0] && strcmp(ol, "NCHW") != 0) || (od[0] && strcmp(od, "float32") != 0) || !f32_static(e, 4) ||
      !f32_static(e->call.args[0], 4) || !f32_static(e->call.args[1], 4))
    return false;
  *cv = (Conv){e, e->call.args[0], e->call.args[1], NULL, NULL, id == OP_RELAYC_CONV2D_RELU};
  if (id == OP_RELAYC_CONV2D_BIAS || id == OP_RELAYC_CONV2D_BIAS_ADD) cv->bias = e->call.args[2];
  if (id == OP_RELAYC_CONV2D_ADD) cv->res = e->call.args[2];
  if (id == OP_RELAYC_CONV2D_BIAS_ADD) cv->res = e->call.args[3];
  if (id != OP_NN_CONV2D && id != OP_RELAYC_CONV2D_RELU) {
    const AttrValue *r = attrs_get(a, "relu");
    cv->relu = r && r->kind == AV_BOOL && r->b;
  }
  return true;
}

/* The convolution's attributes without relu (the nn.conv2d schema's fields). */
static Attrs *conv_attrs(Module *m, const Attrs *a) {
  Attrs *o = arena_alloc(m->arena, sizeof *o);
  *o = (Attrs){0};
  o->items = arena_alloc(m->arena, (a && a->n ? a->n : 1) * sizeof *o->items);
  for (uint32_t i = 0; a && i < a->n; i++)
    if (strcmp(a->items[i].key, "relu") != 0) o->items[o->n++] = a->items[i];
  return o;
}

/* The call computing cv (the op chosen by which parts it has), typed like `like`. */
static Expr *build_conv(Module *m, const Conv *cv, const Expr *like) {
  Expr *args[4] = {cv->x, cv->w};
  uint32_t n = 2;
  if (cv->bias) args[n++] = cv->bias;
  if (cv->res) args[n++] = cv->res;
  const char *op = cv->bias && cv->res ? "relayc.conv2d_bias_add"
                   : cv->bias          ? "relayc.conv2d_bias"
                   : cv->res           ? "relayc.conv2d_add"
                   : cv->relu          ? "relayc.conv2d_relu"
                                       : "nn.conv2d";
  Attrs *a = conv_attrs(m, cv->call->call.attrs);
  if ((cv->bias || cv->res) && cv->relu) a = attrs_with(m, a, "relu", attr_bool(m, true));
  Expr *e = op_call_attrs(m, op, args, n, a, like->span);
  e->type = like->type;
  return e;
}

/* A new float32 vector constant of n elements; its data in *data. */
static Expr *new_vector(Module *m, int64_t n, float **data, Span sp) {
  int64_t shape[1] = {n};
  float *zeros = mem_calloc((size_t)(n > 0 ? n : 1), sizeof *zeros);
  Expr *e = build_const(m, F32, 1, shape, zeros, sp);
  mem_free(zeros);
  e->type = type_tensor(m, F32, 1, shape);
  *data = e->constant->data;
  return e;
}

/* The per-channel values of constant c broadcast against an (N, O, H, W)
 * result, when it varies along axis 1 only (or not at all): out[o]. */
static bool channel_values(const Expr *c, int64_t O, double *out) {
  if (!is_f32_const(c) || c->constant->ndim > 4) return false;
  const ConstTensor *t = c->constant;
  int32_t nd = t->ndim, chan_axis = -1;
  for (int32_t i = 0; i < nd; i++) {
    int32_t axis = 4 - nd + i; /* right-aligned */
    if (t->shape[i] == 1) continue;
    if (axis != 1 || t->shape[i] != O) return false;
    chan_axis = i;
  }
  const float *d = t->data;
  for (int64_t o = 0; o < O; o++) out[o] = chan_axis >= 0 ? d[o] : d[0];
  return true;
}

/* Convolutions of more output channels are left alone: a scalar constant
 * added to a conv typed with 3e11 channels (a mutated shape) made channel_add
 * allocate a vector of 3e11 doubles, and relayc --run died out of memory
 * before the run could report the weight as too large to allocate
 * (golden/fuzz/conv_epilogue_huge_channels.relay). */
enum { MAX_CHANNELS = 1 << 24 };

/* `add(conv, C)`, `add(C, conv)` or `nn.bias_add(conv, C)` (axis 1) whose
 * result has the conv's shape: the conv side (new and old) and the constant's
 * per-channel values (O of them, in vals). */
static bool channel_add(const Expr *e, const Expr *old, Expr **conv, const Expr **conv_old, double **vals) {
  const Expr *cst = NULL;
  *conv = NULL;
  if (is_call_of(e, OP_ADD) && e->call.nargs == 2) {
    for (int i = 0; i < 2 && !*conv; i++)
      if (e->call.args[1 - i]->kind == EXPR_CONST && op_call_id(e->call.args[i]) >= 0) {
        *conv = e->call.args[i];
        *conv_old = old->call.args[i];
        cst = e->call.args[1 - i];
      }
  } else if (is_call_of(e, OP_NN_BIAS_ADD) && e->call.nargs == 2) {
    const AttrValue *ax = attrs_get(e->call.attrs, "axis");
    int64_t axis = ax && ax->kind == AV_INT ? ax->i.value : 1;
    if (axis != 1 && axis != -3) return false;
    if (!is_f32_const(e->call.args[1]) || e->call.args[1]->constant->ndim != 1) return false;
    *conv = e->call.args[0];
    *conv_old = old->call.args[0];
    cst = e->call.args[1];
  }
  if (!*conv || !f32_static(*conv, 4) || !f32_static(e, 4)) return false;
  if (dim(e, 0) != dim(*conv, 0) || dim(e, 2) != dim(*conv, 2) || dim(e, 3) != dim(*conv, 3)) return false;
  int64_t O = dim(*conv, 1);
  if (O > MAX_CHANNELS) return false;
  *vals = mem_malloc((size_t)(O > 0 ? O : 1) * sizeof **vals);
  if (is_call_of(e, OP_NN_BIAS_ADD)) { /* a vector along axis 1 */
    const ConstTensor *t = cst->constant;
    if (t->shape[0] == O || t->shape[0] == 1) {
      const float *d = t->data;
      for (int64_t o = 0; o < O; o++) (*vals)[o] = d[t->shape[0] == 1 ? 0 : o];
      return true;
    }
  } else if (channel_values(cst, O, *vals)) {
    return true;
  }
  mem_free(*vals);
  *vals = NULL;
  return false;
}

/* ------------------------------------------------------------ FoldBatchNormIntoConv */

/* w[o·per + k] *= s[o] for the rows of a chunk (runs on the kernel pool). */
typedef struct ScaleJob {
  float *w;
  const double *s;
  int64_t per;
} ScaleJob;

static void scale_rows(void *raw, int64_t lo, int64_t hi) {
  const ScaleJob *j = raw;
  for (int64_t o = lo; o < hi; o++) {
    float *row = j->w + o * j->per;
    for (int64_t k = 0; k < j->per; k++) row[k] = (float)(row[k] * j->s[o]);
  }
}

static Expr *fold_bn_post(Rewriter *rw, Expr *old, Expr *e) {
  Epi *ep = rw->ud;
  Module *m = rw->m;
  if (!e->type) e->type = old->type;
  if (e->kind != EXPR_PROJ || e->proj.index != 0) return e;
  Expr *bn = e->proj.tuple;
  const Expr *bn_old = old->proj.tuple;
  if (!is_call_of(bn, OP_NN_BATCH_NORM) || bn->call.nargs != 5 || uses_of(ep, bn_old) != 1) return e;
  const Attrs *a = bn->call.attrs;
  const AttrValue *ax = attrs_get(a, "axis"), *eps_v = attrs_get(a, "epsilon");
  const AttrValue *ce = attrs_get(a, "center"), *sc = attrs_get(a, "scale");
  int64_t axis = ax && ax->kind == AV_INT ? ax->i.value : 1;
  if (axis != 1 && axis != -3) return e;
  /* under the batch_norm: single-use per-channel constant adds, then the conv */
  Expr *cur = bn->call.args[0];
  const Expr *cur_old = bn_old->call.args[0];
  VEC(double *) adds = {0};
  Conv cv;
  bool ok = true;
  while (ok && !as_conv(cur, &cv)) {
    Expr *inner;
    const Expr *inner_old;
    double *vals;
    if (uses_of(ep, cur_old) != 1 || !channel_add(cur, cur_old, &inner, &inner_old, &vals)) ok = false;
    else {
      vec_push(adds, vals);
      cur = inner;
      cur_old = inner_old;
    }
  }
  if (ok) ok = uses_of(ep, cur_old) == 1 && cv.call == cur && !cv.bias && !cv.res && !cv.relu && is_f32_const(cv.w) &&
               op_call_id(cur) == OP_NN_CONV2D;
  int64_t O = ok ? dim(cur, 1) : 0;
  for (int i = 1; ok && i < 5; i++) {
    Expr *v = bn->call.args[i];
    ok = is_f32_const(v) && v->constant->nbytes == (uint64_t)O * 4;
  }
  ConstTensor *W = ok ? cv.w->constant : NULL;
  if (ok) ok = O > 0 && W->nbytes % ((uint64_t)O * 4) == 0;
  if (!ok) {
    for (size_t i = 0; i < adds.len; i++) mem_free(adds.data[i]);
    vec_free(adds);
    return e;
  }
  double eps = eps_v && eps_v->kind == AV_FLOAT ? eps_v->f.value
               : eps_v && eps_v->kind == AV_INT ? (double)eps_v->i.value
                                                 : 1e-5;
  bool center = !(ce && ce->kind == AV_BOOL && !ce->b), scale = !(sc && sc->kind == AV_BOOL && !sc->b);
  /* the bias the adds make, innermost first, rounded once per add */
  float *old_bias = NULL;
  if (adds.len) {
    old_bias = mem_calloc((size_t)O, sizeof *old_bias);
    for (size_t i = adds.len; i-- > 0;)
      for (int64_t o = 0; o < O; o++) old_bias[o] = (float)((double)old_bias[o] + adds.data[i][o]);
  }
  const float *gm = bn->call.args[1]->constant->data, *bt = bn->call.args[2]->constant->data;
  const float *mu = bn->call.args[3]->constant->data, *var = bn->call.args[4]->constant->data;
  /* weights of output channel o: the o-th contiguous block (also for the
   * depthwise multiplier layout (C, M, kh, kw), o = c·M + m) */
  uint64_t per = W->nbytes / 4 / (uint64_t)O;
  Expr *w = cv.w;
  float *wd = W->data;
  int64_t refs = 0;
  ptrmap_get(&ep->crefs, W, &refs);
  if (refs != 1) { /* shared: rescale a copy */
    w = build_const(m, W->dtype, (uint32_t)W->ndim, W->shape, W->data, cv.w->span);
    w->type = cv.w->type;
    wd = w->constant->data;
  }
  float *b;
  Expr *bias = new_vector(m, O, &b, bn->span);
  double *sv = mem_malloc((size_t)O * sizeof *sv);
  for (int64_t o = 0; o < O; o++) {
    double s = 1.0 / sqrt((double)var[o] + eps);
    if (scale) s *= gm[o];
    sv[o] = s;
    b[o] = (float)(((old_bias ? old_bias[o] : 0.0) - mu[o]) * s + (center ? bt[o] : 0.0));
  }
  /* rescaling every weight is the pass's only heavy work (ResNet-50: 25M) */
  ScaleJob sj = {wd, sv, (int64_t)per};
  threadpool_for(O, 1 + 65536 / ((int64_t)per + 1), scale_rows, &sj);
  mem_free(sv);
  mem_free(old_bias);
  for (size_t i = 0; i < adds.len; i++) mem_free(adds.data[i]);
  vec_free(adds);
  Conv nc = {cur, cv.x, w, NULL, NULL, false};
  Expr *conv = build_conv(m, &nc, cur);
  Expr *r = op_call(m, "nn.bias_add", (Expr *[]){conv, bias}, 2, "axis=1", e->span);
  r->type = old->type;
  return r;
}

/* ------------------------------------------------------------ FuseConvEpilogue */

/* Joins a per-channel constant into the conv's bias. */
static Expr *try_bias(Rewriter *rw, Expr *old, Expr *e) {
  Epi *ep = rw->ud;
  Expr *conv;
  const Expr *conv_old;
  double *vals = NULL;
  Conv cv;
  if (!channel_add(e, old, &conv, &conv_old, &vals)) return NULL;
  Expr *r = NULL;
  if (as_conv(conv, &cv) && uses_of(ep, conv_old) == 1 && !cv.res && !cv.relu &&
      (!cv.bias || (is_f32_const(cv.bias) && cv.bias->constant->nbytes == (uint64_t)dim(conv, 1) * 4))) {
    int64_t O = dim(conv, 1);
    float *b;
    Expr *bias = new_vector(rw->m, O, &b, e->span);
    const float *oldb = cv.bias ? cv.bias->constant->data : NULL;
    for (int64_t o = 0; o < O; o++) b[o] = (float)((oldb ? oldb[o] : 0.0) + vals[o]);
    cv.bias = bias;
    r = build_conv(rw->m, &cv, old);
  }
  mem_free(vals);
  return r;
}

/* add(conv, r) with r of the result's type: r becomes the residual. */
static Expr *try_residual(Rewriter *rw, Expr *old, Expr *e) {
  Epi *ep = rw->ud;
  if (!is_call_of(e, OP_ADD) || e->call.nargs != 2 || !f32_static(e, 4)) return NULL;
  for (int i = 0; i < 2; i++) {
    Expr *conv = e->call.args[i], *r = e->call.args[1 - i];
    Conv cv;
    if (!as_conv(conv, &cv) || uses_of(ep, old->call.args[i]) != 1 || cv.res || cv.relu) continue;
    if (r == conv || !f32_static(r, 4)) continue;
    bool same = true;
    for (uint32_t d = 0; d < 4; d++) same &= dim(r, d) == dim(conv, d) && dim(e, d) == dim(conv, d);
    if (!same) continue;
    cv.res = r;
    return build_conv(rw->m, &cv, old);
  }
  return NULL;
}

/* nn.relu(conv) → the conv with relu; nn.relu(batch_norm(...).0) →
 * relayc.batch_norm_relu(...).0. */
static Expr *try_relu(Rewriter *rw, Expr *old, Expr *e) {
  Epi *ep = rw->ud;
  if (!is_call_of(e, OP_NN_RELU) || e->call.nargs != 1) return NULL;
  Expr *in = e->call.args[0];
  const Expr *in_old = old->call.args[0];
  if (uses_of(ep, in_old) != 1) return NULL;
  Conv cv;
  if (as_conv(in, &cv)) {
    if (cv.relu) return NULL;
    cv.relu = true;
    return build_conv(rw->m, &cv, old);
  }
  if (in->kind != EXPR_PROJ || in->proj.index != 0 || !is_call_of(in->proj.tuple, OP_NN_BATCH_NORM)) return NULL;
  const Type *t = tensor_type(in);
  if (uses_of(ep, in_old->proj.tuple) != 1 || !t || !f32_static(in, t->tensor.ndim) || !f32_static(e, t->tensor.ndim))
    return NULL;
  Expr *bn = in->proj.tuple;
  Expr *nb = op_call_attrs(rw->m, "relayc.batch_norm_relu", bn->call.args, bn->call.nargs, bn->call.attrs, bn->span);
  nb->type = bn->type;
  Expr *p = build_proj(rw->m, nb, 0, e->span);
  p->type = old->type;
  return p;
}

static Expr *epilogue_post(Rewriter *rw, Expr *old, Expr *e) {
  if (!e->type) e->type = old->type;
  Expr *r;
  if ((r = try_bias(rw, old, e))) return r;
  if ((r = try_residual(rw, old, e))) return r;
  if ((r = try_relu(rw, old, e))) return r;
  return e;
}

/* ------------------------------------------------------------ passes */

/* Runs `post` bottom-up over every function a function pass may touch that
 * calls one of the operators `ops` (a quick scan skips the others). */
static bool run_pass(PassCtx *c, RwPost post, const int32_t *ops, uint32_t nops) {
  bool *want = mem_calloc(op_count() + 1, sizeof *want);
  for (uint32_t i = 0; i < nops; i++) want[ops[i]] = true;
  bool *todo = mem_calloc(c->m->ndefs + 1, sizeof *todo), any = false;
  for (uint32_t i = 0; i < c->m->ndefs; i++) {
    Function *fn = c->m->defs[i]->fn;
    todo[i] = fn && !fn_skipped_by_function_passes(fn) && dag_calls_any(fn->body, want, op_count());
    any |= todo[i];
  }
  Epi ep = {0};
  bool ok = true;
  if (any) {
    /* constants are counted over the whole module: a weight is rescaled in
     * place only when nothing else holds it */
    PtrMap seen = {0};
    for (uint32_t i = 0; i < c->m->ndefs; i++)
      if (c->m->defs[i]->fn) count_edges(c->m->defs[i]->fn->body, &seen, &ep.crefs);
    ptrmap_free(&seen);
  }
  for (uint32_t i = 0; i < c->m->ndefs && ok; i++) {
    if (!todo[i]) continue;
    Function *fn = c->m->defs[i]->fn;
    ptrmap_free(&ep.uses);
    memset(&ep.uses, 0, sizeof ep.uses);
    count_edges(fn->body, &ep.uses, NULL);
    Rewriter rw;
    rw_init(&rw, c->m, c->d);
    rw.post = post;
    rw.ud = &ep;
    ok = rw_function(&rw, fn);
    rw_fini(&rw);
  }
  mem_free(todo);
  ptrmap_free(&ep.uses);
  ptrmap_free(&ep.crefs);
  mem_free(want);
  return ok;
}

bool pass_FOLD_BATCH_NORM_INTO_CONV(PassCtx *c) {
  static const int32_t ops[] = {OP_NN_BATCH_NORM};
  return run_pass(c, fold_bn_post, ops, 1);
}

bool pass_FUSE_CONV_EPILOGUE(PassCtx *c) {
  static const int32_t ops[] = {OP_NN_CONV2D, OP_RELAYC_CONV2D_BIAS, OP_RELAYC_CONV2D_ADD, OP_RELAYC_CONV2D_BIAS_ADD,
                                OP_RELAYC_CONV2D_RELU, OP_NN_BATCH_NORM};
  return run_pass(c, epilogue_post, ops, sizeof ops / sizeof ops[0]);
}
