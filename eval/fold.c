/* eval/fold.c — batch_norm folding and conv epilogue fusion (eval/fold.h).
 *
 * Two iterative walks over each function's DAG (no C recursion, so a
 * 100 000-deep graph is fine):
 *  1. count, for every node, the edges that reach it (its uses), and for
 *     every constant tensor the edges reaching any node that holds it;
 *  2. a post-order walk (children first) that tries the rewrites at each
 *     node. A rewrite turns the pattern's ROOT node in place into the fused
 *     call, so every parent sees it without being touched; the swallowed
 *     inner nodes had exactly one use (the pattern) and become unreachable.
 * A function body's root counts one extra use (it is returned). Inner
 * nodes therefore never escape. Types are left as inferred: the fused call
 * has the same tensor type as the root it replaces.
 */
#include "eval/fold.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ops/op_ids.h"
#include "runtime/threadpool.h"

/* ------------------------------------------------------------ pointer map */

/* The count stored for `k` (0 when absent). */
static int64_t fm_get(const PtrMap *m, const void *k) {
  const int64_t *v = ptrmap_find(m, k);
  return v ? *v : 0;
}

/* ------------------------------------------------------------ DAG walking */

/* The i-th child of e, or NULL past the last. */
static Expr *child_at(const Expr *e, uint32_t i) {
  switch (e->kind) {
  case EXPR_CALL: return i == 0 ? e->call.fn : i <= e->call.nargs ? e->call.args[i - 1] : NULL;
  case EXPR_TUPLE: return i < e->tuple.n ? e->tuple.fields[i] : NULL;
  case EXPR_PROJ: return i == 0 ? e->proj.tuple : NULL;
  case EXPR_FN: return i == 0 ? e->fn->body : NULL;
  case EXPR_LET: return i == 0 ? e->let.value : i == 1 ? e->let.body : NULL;
  case EXPR_IF: return i == 0 ? e->if_.cond : i == 1 ? e->if_.then_ : i == 2 ? e->if_.else_ : NULL;
  case EXPR_MATCH:
    return i == 0 ? e->match.scrut : i <= e->match.nclauses ? e->match.clauses[i - 1].body : NULL;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: return i == 0 ? e->ref.arg : NULL;
  case EXPR_REF_WRITE: return i == 0 ? e->ref_write.ref : i == 1 ? e->ref_write.value : NULL;
  default: return NULL;
  }
}

typedef struct Frame {
  Expr *e;
  uint32_t next;
} Frame;

typedef struct Fold {
  Module *m;
  PtrMap uses;   /* Expr * → edges reaching it */
  PtrMap crefs;  /* ConstTensor * → edges reaching a node holding it */
  PtrMap done;   /* visited in the current walk */
  int rewrites;
} Fold;

typedef void (*VisitFn)(Fold *f, Expr *e);

/* Depth-first over the DAG under root; `edge` runs for every edge to a
 * child, `post` once per node after its children. */
static void walk(Fold *f, Expr *root, void (*edge)(Fold *, Expr *), VisitFn post) {
  if (!root || fm_get(&f->done, root)) return;
  VEC(Frame) st = {0};
  ptrmap_put(&f->done, root, 1);
  vec_push(st, ((Frame){root, 0}));
  while (st.len) {
    Frame *fr = &st.data[st.len - 1];
    Expr *c = child_at(fr->e, fr->next);
    if (c) {
      fr->next++;
      if (edge) edge(f, c);
      if (!fm_get(&f->done, c)) {
        ptrmap_put(&f->done, c, 1);
        vec_push(st, ((Frame){c, 0}));
      }
      continue;
    }
    Expr *e = fr->e;
    st.len--;
    if (post) post(f, e);
  }
  vec_free(st);
}

static void count_edge(Fold *f, Expr *c) {
  int64_t *u = ptrmap_slot(&f->uses, c);
  (*u)++;
  if (c->kind == EXPR_CONST) (*ptrmap_slot(&f->crefs, c->constant))++;
}

/* ------------------------------------------------------------ pattern helpers */

static const DType F32 = {DT_FLOAT, 32, 1};

static bool is_call_of(const Expr *e, int32_t op) {
  return e && e->kind == EXPR_CALL && e->call.fn->kind == EXPR_OP && e->call.fn->op.id == op;
}

static const Type *tensor_type(const Expr *e) {
  const Type *t = e ? e->type : NULL;
  while (t && t->kind == TYPE_UVAR && t->uvar.link) t = t->uvar.link;
  return t && t->kind == TYPE_TENSOR ? t : NULL;
}

/* A float32 tensor type with all dims known; rank in *nd. */
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

static const char *epilogue_flags(const Expr *conv) {
  return attr_str(conv->call.attrs, "relayc.epilogue", "");
}

/* A float32 NCHW/OIHW nn.conv2d call (fused or not) of static type. */
static bool is_conv(const Expr *e) {
  if (!is_call_of(e, OP_NN_CONV2D) || e->call.nargs < 2) return false;
  const Attrs *a = e->call.attrs;
  const char *ol = attr_str(a, "out_layout", "");
  const char *od = attr_str(a, "out_dtype", "");
  return strcmp(attr_str(a, "data_layout", "NCHW"), "NCHW") == 0 &&
         strcmp(attr_str(a, "kernel_layout", "OIHW"), "OIHW") == 0 &&
         (!ol[0] || strcmp(ol, "NCHW") == 0) && (!od[0] || strcmp(od, "float32") == 0) &&
         f32_static(e, 4) && f32_static(e->call.args[0], 4) && f32_static(e->call.args[1], 4);
}

/* Flags of a conv are a subset of `allowed`. */
static bool flags_within(const Expr *conv, const char *allowed) {
  for (const char *p = epilogue_flags(conv); *p; p++)
    if (!strchr(allowed, *p)) return false;
  return true;
}

static bool is_f32_const(const Expr *e) {
  return e && e->kind == EXPR_CONST && dtype_eq(e->constant->dtype, F32) && e->constant->data;
}

/* Attributes of `base` with relayc.epilogue set to flags. */
static Attrs *with_flags(Module *m, const Attrs *base, const char *flags) {
  uint32_t n = base ? base->n : 0;
  Attrs *a = arena_alloc(m->arena, sizeof *a);
  a->items = arena_alloc(m->arena, (n + 1) * sizeof *a->items);
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(base->items[i].key, "relayc.epilogue") != 0) a->items[k++] = base->items[i];
  AttrValue *v = attr_value_new(m, AV_STRING, (Span){0, 0});
  v->s.chars = arena_strdup(m->arena, flags);
  v->s.len = (uint32_t)strlen(flags);
  a->items[k++] = (Attr){.key = "relayc.epilogue", .value = v};
  a->n = k;
  return a;
}

/* Turns `root` into conv(x, w, [bias], [res]) with flags (canonical order b, a, r). */
static void make_conv(Fold *f, Expr *root, const Expr *conv, Expr *x, Expr *w, Expr *bias,
                      Expr *res, bool relu) {
  char flags[4];
  int n = 0;
  if (bias) flags[n++] = 'b';
  if (res) flags[n++] = 'a';
  if (relu) flags[n++] = 'r';
  flags[n] = 0;
  Expr **args = arena_alloc(f->m->arena, 4 * sizeof *args);
  uint32_t k = 0;
  args[k++] = x;
  args[k++] = w;
  if (bias) args[k++] = bias;
  if (res) args[k++] = res;
  Expr *fn = conv->call.fn;
  const Attrs *attrs = with_flags(f->m, conv->call.attrs, flags);
  root->kind = EXPR_CALL;
  root->call.fn = fn;
  root->call.args = args;
  root->call.nargs = k;
  root->call.attrs = (Attrs *)attrs;
  f->rewrites++;
}

/* The parts of a conv call: data, weight, bias (or NULL), residual (or NULL), relu. */
typedef struct ConvParts {
  Expr *x, *w, *bias, *res;
  bool relu;
} ConvParts;

static ConvParts conv_parts(const Expr *conv) {
  ConvParts p = {conv->call.args[0], conv->call.args[1], NULL, NULL, false};
  const char *fl = epilogue_flags(conv);
  uint32_t k = 2;
  if (strchr(fl, 'b') && k < conv->call.nargs) p.bias = conv->call.args[k++];
  if (strchr(fl, 'a') && k < conv->call.nargs) p.res = conv->call.args[k++];
  p.relu = strchr(fl, 'r') != NULL;
  return p;
}

/* A new float32 constant node of shape (n,). */
static Expr *new_vector(Fold *f, int64_t n, float **data) {
  ConstTensor *c = arena_alloc(f->m->arena, sizeof *c);
  c->dtype = F32;
  c->ndim = 1;
  c->shape = arena_alloc(f->m->arena, sizeof *c->shape);
  c->shape[0] = n;
  c->nbytes = (uint64_t)n * 4;
  c->data = arena_alloc_big(f->m->arena, (size_t)(n > 0 ? n : 1) * 4);
  c->meta_index = -1;
  Expr *e = expr_new(f->m, EXPR_CONST, (Span){0, 0});
  e->constant = c;
  e->type = type_tensor(f->m, F32, 1, &n);
  *data = c->data;
  return e;
}

/* The per-channel values of a constant c broadcast against an (N, O, H, W)
 * result, when it varies along axis 1 only (or not at all): out[o]. */
static bool channel_values(const Expr *c, int64_t O, double *out) {
  if (!is_f32_const(c) || c->constant->ndim > 4) return false;
  const ConstTensor *t = c->constant;
  int32_t nd = t->ndim;
  int chan_axis = -1;
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

/* ------------------------------------------------------------ rewrites */

/* add(conv, C) / add(C, conv) / nn.bias_add(conv, C, axis=1): C joins the bias. */
static bool try_bias(Fold *f, Expr *e) {
  Expr *conv = NULL, *cst = NULL;
  if (is_call_of(e, OP_ADD) && e->call.nargs == 2) {
    for (int i = 0; i < 2 && !conv; i++)
      if (is_conv(e->call.args[i]) && e->call.args[1 - i]->kind == EXPR_CONST) {
        conv = e->call.args[i];
        cst = e->call.args[1 - i];
      }
  } else if (is_call_of(e, OP_NN_BIAS_ADD) && e->call.nargs == 2 && is_conv(e->call.args[0])) {
    const AttrValue *ax = attrs_get(e->call.attrs, "axis");
    int64_t axis = ax && ax->kind == AV_INT ? ax->i.value : 1;
    if (axis != 1 && axis != -3) return false;
    conv = e->call.args[0];
    cst = e->call.args[1];
    if (!is_f32_const(cst) || cst->constant->ndim != 1) return false;
  }
  if (!conv || fm_get(&f->uses, conv) != 1 || !flags_within(conv, "b")) return false;
  if (!f32_static(e, 4) || dim(e, 0) != dim(conv, 0) || dim(e, 2) != dim(conv, 2) ||
      dim(e, 3) != dim(conv, 3))
    return false;
  int64_t O = dim(conv, 1);
  double *cv = mem_malloc((size_t)(O > 0 ? O : 1) * sizeof *cv);
  bool ok = channel_values(cst, O, cv);
  if (ok) {
    ConvParts p = conv_parts(conv);
    float *b;
    Expr *bias = new_vector(f, O, &b);
    const float *old = p.bias && is_f32_const(p.bias) ? p.bias->constant->data : NULL;
    ok = !p.bias || (old && p.bias->constant->nbytes == (uint64_t)O * 4);
    for (int64_t o = 0; ok && o < O; o++) b[o] = (float)((old ? old[o] : 0.0) + cv[o]);
    if (ok) make_conv(f, e, conv, p.x, p.w, bias, NULL, false);
  }
  mem_free(cv);
  return ok;
}

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

/* nn.batch_norm(conv [with bias], γ, β, μ, σ²).0 → conv(x, W·s) + b'. */
static bool try_bn_fold(Fold *f, Expr *e) {
  if (e->kind != EXPR_PROJ || e->proj.index != 0) return false;
  Expr *bn = e->proj.tuple;
  if (!is_call_of(bn, OP_NN_BATCH_NORM) || bn->call.nargs != 5 || fm_get(&f->uses, bn) != 1)
    return false;
  Expr *conv = bn->call.args[0];
  if (!is_conv(conv) || fm_get(&f->uses, conv) != 1 || !flags_within(conv, "b")) return false;
  ConvParts p = conv_parts(conv);
  if (!is_f32_const(p.w) || (p.bias && !is_f32_const(p.bias))) return false;
  const Attrs *a = bn->call.attrs;
  const AttrValue *ax = attrs_get(a, "axis"), *ep = attrs_get(a, "epsilon");
  const AttrValue *ce = attrs_get(a, "center"), *sc = attrs_get(a, "scale");
  int64_t axis = ax && ax->kind == AV_INT ? ax->i.value : 1;
  if (axis != 1 && axis != -3) return false;
  double eps = ep && ep->kind == AV_FLOAT ? ep->f.value : ep && ep->kind == AV_INT ? (double)ep->i.value : 1e-5;
  bool center = !(ce && ce->kind == AV_BOOL && !ce->b), scale = !(sc && sc->kind == AV_BOOL && !sc->b);
  int64_t O = dim(conv, 1);
  for (int i = 1; i < 5; i++) {
    Expr *v = bn->call.args[i];
    if (!is_f32_const(v) || v->constant->nbytes != (uint64_t)O * 4) return false;
  }
  ConstTensor *W = p.w->constant;
  if (O <= 0 || W->nbytes % ((uint64_t)O * 4) != 0) return false;
  if (p.bias && p.bias->constant->nbytes != (uint64_t)O * 4) return false;
  const float *gm = bn->call.args[1]->constant->data, *bt = bn->call.args[2]->constant->data;
  const float *mu = bn->call.args[3]->constant->data, *var = bn->call.args[4]->constant->data;
  /* weights of output channel o: the o-th contiguous block (also for the
   * depthwise multiplier layout (C, M, kh, kw), o = c·M + m) */
  uint64_t per = W->nbytes / 4 / (uint64_t)O;
  Expr *w = p.w;
  float *wd = W->data;
  if (fm_get(&f->crefs, W) != 1) { /* shared: rescale a copy */
    ConstTensor *c = arena_alloc(f->m->arena, sizeof *c);
    *c = *W;
    c->data = arena_alloc_big(f->m->arena, (size_t)W->nbytes);
    memcpy(c->data, W->data, (size_t)W->nbytes);
    c->meta_index = -1;
    w = expr_new(f->m, EXPR_CONST, p.w->span);
    w->constant = c;
    w->type = p.w->type;
    wd = c->data;
  }
  float *b;
  Expr *bias = new_vector(f, O, &b);
  const float *old = p.bias ? p.bias->constant->data : NULL;
  double *sv = mem_malloc((size_t)O * sizeof *sv);
  for (int64_t o = 0; o < O; o++) {
    double s = 1.0 / sqrt((double)var[o] + eps);
    if (scale) s *= gm[o];
    sv[o] = s;
    b[o] = (float)(((old ? old[o] : 0.0) - mu[o]) * s + (center ? bt[o] : 0.0));
  }
  /* rescaling every weight is the pass's only heavy work (ResNet-50: 25M) */
  ScaleJob sj = {wd, sv, (int64_t)per};
  threadpool_for(O, 1 + 65536 / ((int64_t)per + 1), scale_rows, &sj);
  mem_free(sv);
  make_conv(f, e, conv, p.x, w, bias, NULL, false);
  return true;
}

/* add(conv, r) with r of the same type: a residual epilogue. */
static bool try_residual(Fold *f, Expr *e) {
  if (!is_call_of(e, OP_ADD) || e->call.nargs != 2 || !f32_static(e, 4)) return false;
  for (int i = 0; i < 2; i++) {
    Expr *conv = e->call.args[i], *r = e->call.args[1 - i];
    if (!is_conv(conv) || fm_get(&f->uses, conv) != 1 || !flags_within(conv, "b")) continue;
    if (r == conv || !f32_static(r, 4)) continue;
    bool same = true;
    for (uint32_t d = 0; d < 4; d++) same &= dim(r, d) == dim(conv, d) && dim(e, d) == dim(conv, d);
    if (!same) continue;
    ConvParts p = conv_parts(conv);
    make_conv(f, e, conv, p.x, p.w, p.bias, r, false);
    return true;
  }
  return false;
}

/* nn.relu(conv) → conv with ReLU; nn.relu(batch_norm(...).0) → batch_norm with ReLU. */
static bool try_relu(Fold *f, Expr *e) {
  if (!is_call_of(e, OP_NN_RELU) || e->call.nargs != 1) return false;
  Expr *in = e->call.args[0];
  if (fm_get(&f->uses, in) != 1) return false;
  if (is_conv(in) && !strchr(epilogue_flags(in), 'r')) {
    ConvParts p = conv_parts(in);
    make_conv(f, e, in, p.x, p.w, p.bias, p.res, true);
    return true;
  }
  if (in->kind == EXPR_PROJ && in->proj.index == 0 && is_call_of(in->proj.tuple, OP_NN_BATCH_NORM) &&
      fm_get(&f->uses, in->proj.tuple) == 1 && f32_static(in, tensor_type(in)->tensor.ndim) &&
      f32_static(e, tensor_type(in)->tensor.ndim)) {
    Expr *bn = in->proj.tuple;
    Expr *nb = expr_new(f->m, EXPR_CALL, bn->span);
    *nb = *bn;
    nb->call.attrs = with_flags(f->m, bn->call.attrs, "r");
    e->kind = EXPR_PROJ;
    e->proj.tuple = nb;
    e->proj.index = 0;
    f->rewrites++;
    return true;
  }
  return false;
}

static void rewrite_node(Fold *f, Expr *e) {
  if (try_bn_fold(f, e)) return;
  if (try_bias(f, e)) return;
  if (try_residual(f, e)) return;
  try_relu(f, e);
}

/* ------------------------------------------------------------ driver */

static void fold_roots(Fold *f, Expr **roots, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (!roots[i]) continue;
    (*ptrmap_slot(&f->uses, roots[i]))++; /* returned */
    walk(f, roots[i], count_edge, NULL);
  }
  ptrmap_free(&f->done);
  for (uint32_t i = 0; i < n; i++) walk(f, roots[i], NULL, rewrite_node);
}

int fold_module(Module *m) {
  const char *off = getenv("RELAYC_NO_FOLD");
  if (off && *off && strcmp(off, "0") != 0) return 0;
  Fold f = {.m = m};
  uint32_t n = m->ndefs + 1;
  Expr **roots = mem_calloc(n, sizeof *roots);
  for (uint32_t i = 0; i < m->ndefs; i++) roots[i] = m->defs[i]->fn ? m->defs[i]->fn->body : NULL;
  roots[m->ndefs] = m->expr;
  fold_roots(&f, roots, n);
  mem_free(roots);
  ptrmap_free(&f.uses);
  ptrmap_free(&f.crefs);
  ptrmap_free(&f.done);
  return f.rewrites;
}
