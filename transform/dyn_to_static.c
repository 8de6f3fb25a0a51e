/* transform/dyn_to_static.c — DynamicToStatic (spec/passes.md §4.2): dyn.*
 * operators whose shape-like inputs fold to constants become the static
 * operators, with those values as attributes.
 *
 * Bottom-up (transform/rewrite.h): at each dyn.* call the inputs the static
 * operator needs as attributes are constant-folded (a Folder shared by the
 * function, after typing the nodes this pass built: shape_of needs types;
 * twice, like TVM's FoldConstant + InferTypeLocal pair); when they are all
 * constants the call is rebuilt as the static operator (data inputs and the
 * other attributes kept). Afterwards the whole function is constant-folded
 * (twice, re-typed in between), so e.g. a constant `if` also goes. A call
 * whose static form does not type-check stays dynamic, and a function that
 * static shapes make ill-typed keeps its body (with a warning): the dynamic
 * program fails there at run time, not at type checking.
 *
 *   dyn.reshape(d, s)            reshape(d, newshape=s)
 *   dyn.squeeze(d, a)            squeeze(d, axis=a)
 *   dyn.tile(d, r)               tile(d, reps=r)
 *   dyn.topk(d, k)               topk(d, k=K, ...)
 *   dyn.broadcast_to(d, s)       broadcast_to(d, shape=s)
 *   dyn.zeros(s) / dyn.ones(s)   zeros/ones(shape=s, dtype=...)
 *   dyn.full(v, s)               full(v, shape=s, dtype=...)
 *   dyn.one_hot(i, on, off, n)   one_hot(i, on, off, depth=N, ...)
 *   dyn.image.resize2d(d, s, r)  image.resize2d(d, size=s, roi=r, ...)
 *   dyn.nn.upsampling(d, h, w)   nn.upsampling(d, scale_h=H, scale_w=W, ...)
 *   dyn.nn.pad(d, w, v)          nn.pad(d, v, pad_width=w, ...)
 *   dyn.strided_slice(d, b, e, s) strided_slice(d, begin=b, end=e, strides=s, ...)
 *   dyn.nn.upsampling3d(d, s, h, w) nn.upsampling3d(d, scale_d=S, scale_h=H, scale_w=W, ...)
 *   dyn.sparse_to_dense(i, v, dv, s) sparse_to_dense(i, v, dv, output_shape=s)
 */
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "sema/infer.h"
#include "transform/dagscan.h"
#include "transform/fold_constant.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef struct D2S {
  Folder *folder;
} D2S;

/* Whether e's untyped nodes type-check, reporting nothing: the pass tries a
 * static form and keeps the dynamic one when it would not type-check. */
static bool types_quietly(Module *m, Expr *e) {
  Diag quiet;
  diag_init_silent(&quiet, m->src);
  return infer_untyped(m, e, &quiet);
}

/* The folded form of a shape-like argument (typed first). */
static Expr *prepare(Rewriter *rw, Expr *arg) {
  D2S *st = rw->ud;
  if (arg->kind == EXPR_CONST) return arg;
  for (int round = 0; round < 2 && arg->kind != EXPR_CONST; round++) {
    if (!types_quietly(rw->m, arg)) return arg; /* not constant: the call stays dynamic */
    arg = folder_fold(st->folder, arg);
  }
  return arg;
}

/* The elements of a constant as integers (TVM's ToVector); -1 if it is not one. */
static int const_ints(const Expr *e, int64_t *out, int cap) {
  if (e->kind != EXPR_CONST) return -1;
  const ConstTensor *c = e->constant;
  size_t es = dtype_size(c->dtype);
  uint64_t n = es ? c->nbytes / es : 0;
  if (n > (uint64_t)cap || c->dtype.lanes != 1) return -1;
  for (uint64_t i = 0; i < n; i++) {
    const char *p = (const char *)c->data + i * es;
    switch (c->dtype.code) {
    case DT_INT:
      out[i] = c->dtype.bits == 8 ? *(const int8_t *)p : c->dtype.bits == 16 ? *(const int16_t *)p
               : c->dtype.bits == 32 ? *(const int32_t *)p : *(const int64_t *)p;
      break;
    case DT_UINT:
      out[i] = c->dtype.bits <= 8 ? *(const uint8_t *)p : c->dtype.bits == 16 ? *(const uint16_t *)p
               : c->dtype.bits == 32 ? (int64_t)*(const uint32_t *)p : (int64_t)*(const uint64_t *)p;
      break;
    case DT_FLOAT:
      out[i] = c->dtype.bits == 16 ? (int64_t)half_to_float(*(const uint16_t *)p)
               : c->dtype.bits == 32 ? (int64_t)*(const float *)p : (int64_t)*(const double *)p;
      break;
    default: return -1;
    }
  }
  return (int)n;
}

static bool const_double(const Expr *e, double *v) {
  long double x;
  if (e->kind != EXPR_CONST || !fold_const_element0(e->constant, &x)) return false;
  *v = (double)x;
  return true;
}

static AttrValue *ints_value(Module *m, const int64_t *v, int n) { return attr_int_array(m, v, (uint32_t)n); }

static AttrValue *doubles_value(Module *m, const double *v, int n) {
  AttrValue *a = attr_value_new(m, AV_ARRAY, (Span){0, 0});
  a->arr.n = (uint32_t)n;
  a->arr.items = arena_alloc(m->arena, (size_t)(n ? n : 1) * sizeof *a->arr.items);
  for (int i = 0; i < n; i++) a->arr.items[i] = attr_float(m, v[i]);
  return a;
}

/* Rows of 2 integers: [[a, b], ...]. */
static AttrValue *pairs_value(Module *m, const int64_t *v, int rows) {
  AttrValue *a = attr_value_new(m, AV_ARRAY, (Span){0, 0});
  a->arr.n = (uint32_t)rows;
  a->arr.items = arena_alloc(m->arena, (size_t)(rows ? rows : 1) * sizeof *a->arr.items);
  for (int i = 0; i < rows; i++) a->arr.items[i] = attr_int_array(m, v + 2 * i, 2);
  return a;
}

#define MAXV 64

/* The static call for the dyn call e (rewritten arguments), or NULL when a
 * needed input is not constant. */
static Expr *to_static(Rewriter *rw, Expr *e) {
  Module *m = rw->m;
  Expr **a = e->call.args;
  Span sp = e->span;
  const Attrs *at = e->call.attrs;
  int64_t v[MAXV], w[MAXV], x[MAXV];
  int n, nw, nx;
  Expr *k;
  switch (op_call_id(e)) {
  case OP_DYN_RESHAPE:
    if ((n = const_ints(prepare(rw, a[1]), v, MAXV)) < 0) return NULL;
    return op_call_attrs(m, "reshape", a, 1, attrs_with(m, at, "newshape", ints_value(m, v, n)), sp);
  case OP_DYN_SQUEEZE:
    if ((n = const_ints(prepare(rw, a[1]), v, MAXV)) < 0) return NULL;
    return op_call_attrs(m, "squeeze", a, 1, attrs_with(m, at, "axis", ints_value(m, v, n)), sp);
  case OP_DYN_TILE:
    if ((n = const_ints(prepare(rw, a[1]), v, MAXV)) < 0) return NULL;
    return op_call_attrs(m, "tile", a, 1, attrs_with(m, at, "reps", ints_value(m, v, n)), sp);
  case OP_DYN_BROADCAST_TO:
    if ((n = const_ints(prepare(rw, a[1]), v, MAXV)) < 0) return NULL;
    return op_call_attrs(m, "broadcast_to", a, 1, attrs_with(m, at, "shape", ints_value(m, v, n)), sp);
  case OP_DYN_TOPK:
    if (const_ints(prepare(rw, a[1]), v, 1) != 1) return NULL;
    return op_call_attrs(m, "topk", a, 1, attrs_with(m, at, "k", attr_int(m, v[0])), sp);
  case OP_DYN_ZEROS:
  case OP_DYN_ONES:
    if ((n = const_ints(prepare(rw, a[0]), v, MAXV)) < 0) return NULL;
    return op_call_attrs(m, op_call_id(e) == OP_DYN_ZEROS ? "zeros" : "ones", NULL, 0,
                         attrs_with(m, at, "shape", ints_value(m, v, n)), sp);
  case OP_DYN_FULL:
    if ((n = const_ints(prepare(rw, a[1]), v, MAXV)) < 0) return NULL;
    return op_call_attrs(m, "full", a, 1, attrs_with(m, at, "shape", ints_value(m, v, n)), sp);
  case OP_DYN_ONE_HOT:
    if (const_ints(prepare(rw, a[3]), v, 1) != 1) return NULL;
    return op_call_attrs(m, "one_hot", a, 3, attrs_with(m, at, "depth", attr_int(m, v[0])), sp);
  case OP_DYN_IMAGE_RESIZE2D: {
    Expr *roi = prepare(rw, a[2]);
    double r[4];
    if ((n = const_ints(prepare(rw, a[1]), v, MAXV)) < 0 || roi->kind != EXPR_CONST) return NULL;
    const ConstTensor *c = roi->constant;
    size_t es = dtype_size(c->dtype);
    if (!es || c->nbytes / es != 4 || !dtype_is_float(c->dtype)) return NULL;
    for (int i = 0; i < 4; i++) {
      ConstTensor one = *c;
      one.data = (char *)c->data + (size_t)i * es;
      one.nbytes = es;
      long double d;
      if (!fold_const_element0(&one, &d)) return NULL;
      r[i] = (double)d;
    }
    Attrs *s = attrs_with(m, at, "size", ints_value(m, v, n));
    return op_call_attrs(m, "image.resize2d", a, 1, attrs_with(m, s, "roi", doubles_value(m, r, 4)), sp);
  }
  case OP_DYN_NN_UPSAMPLING: {
    double h, wd;
    if (!const_double(prepare(rw, a[1]), &h) || !const_double(prepare(rw, a[2]), &wd)) return NULL;
    Attrs *s = attrs_with(m, at, "scale_h", attr_float(m, h));
    return op_call_attrs(m, "nn.upsampling", a, 1, attrs_with(m, s, "scale_w", attr_float(m, wd)), sp);
  }
  case OP_DYN_NN_UPSAMPLING3D: {
    double sd, h, wd;
    if (!const_double(prepare(rw, a[1]), &sd) || !const_double(prepare(rw, a[2]), &h) ||
        !const_double(prepare(rw, a[3]), &wd))
      return NULL;
    Attrs *s = attrs_with(m, at, "scale_d", attr_float(m, sd));
    s = attrs_with(m, s, "scale_h", attr_float(m, h));
    return op_call_attrs(m, "nn.upsampling3d", a, 1, attrs_with(m, s, "scale_w", attr_float(m, wd)), sp);
  }
  case OP_DYN_SPARSE_TO_DENSE:
    if ((n = const_ints(prepare(rw, a[3]), v, MAXV)) < 0) return NULL;
    return op_call_attrs(m, "sparse_to_dense", a, 3, attrs_with(m, at, "output_shape", ints_value(m, v, n)), sp);
  case OP_DYN_NN_PAD: {
    k = prepare(rw, a[2]);
    if ((nw = const_ints(prepare(rw, a[1]), w, MAXV)) < 0 || nw % 2 || k->kind != EXPR_CONST) return NULL;
    Expr *args[2] = {a[0], k};
    return op_call_attrs(m, "nn.pad", args, 2, attrs_with(m, at, "pad_width", pairs_value(m, w, nw / 2)), sp);
  }
  case OP_DYN_STRIDED_SLICE: {
    if ((n = const_ints(prepare(rw, a[1]), v, MAXV)) < 0 || (nw = const_ints(prepare(rw, a[2]), w, MAXV)) < 0 ||
        (nx = const_ints(prepare(rw, a[3]), x, MAXV)) < 0)
      return NULL;
    Attrs *s = attrs_with(m, at, "begin", ints_value(m, v, n));
    s = attrs_with(m, s, "end", ints_value(m, w, nw));
    return op_call_attrs(m, "strided_slice", a, 1, attrs_with(m, s, "strides", ints_value(m, x, nx)), sp);
  }
  default: return NULL;
  }
}

/* Whether every argument of call e is typed (or a constant, typed on sight). */
static bool args_typed(const Expr *e) {
  for (uint32_t i = 0; i < e->call.nargs; i++)
    if (!e->call.args[i]->type && e->call.args[i]->kind != EXPR_CONST) return false;
  return true;
}

static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  (void)old;
  if (e->kind != EXPR_CALL || op_call_id(e) < 0) return e;
  Expr *r = to_static(rw, e);
  /* the static operator's relation may reject the values (reshape of 6
   * elements into (4, 6)) where the dyn call fails only when it runs: keep
   * it. Checked only where the arguments are typed (an untyped one may hold
   * a constant `if` the final fold removes; the function-level check in
   * d2s_body covers the rest). */
  if (r && args_typed(r) && !types_quietly(rw->m, r)) r = NULL;
  return r ? r : e;
}

/* The dyn.* operators to_static knows. */
static const int32_t dyn_ops[] = {OP_DYN_RESHAPE, OP_DYN_SQUEEZE, OP_DYN_TILE, OP_DYN_TOPK, OP_DYN_BROADCAST_TO,
                                  OP_DYN_ZEROS, OP_DYN_ONES, OP_DYN_FULL, OP_DYN_ONE_HOT, OP_DYN_IMAGE_RESIZE2D,
                                  OP_DYN_NN_UPSAMPLING, OP_DYN_NN_UPSAMPLING3D, OP_DYN_NN_PAD, OP_DYN_STRIDED_SLICE,
                                  OP_DYN_SPARSE_TO_DENSE};

/* FoldConstant on f, twice (TVM folds, re-infers, folds again). The first
 * round runs before the new static calls are typed (the folder only needs
 * types for shape_of, and leaves untyped ones alone): a constant `if` must
 * go before its branches, now of different static shapes, are typed.
 * *ill is set when the result does not type-check. */
static bool fold_function(Module *m, Diag *d, Function *f, Type *sig, bool *ill) {
  for (int round = 0; round < 2; round++) {
    Expr *before = f->body;
    if (!fold_constant_function(m, d, f)) return false;
    if (!f->type) f->type = sig;
    if (!types_quietly(m, f->body)) {
      *ill = true;
      return true;
    }
    if (f->body == before && round > 0) break;
  }
  return true;
}

static bool d2s_rewrite(PassCtx *c, GlobalDef *g, Type *sig, bool *ill) {
  static bool ids[OP_BUILTIN_COUNT];
  for (size_t i = 0; i < sizeof dyn_ops / sizeof dyn_ops[0]; i++) ids[dyn_ops[i]] = true;
  if (dag_calls_any(g->fn->body, ids, OP_BUILTIN_COUNT)) {
    D2S st = {folder_new(c->m, c->d)};
    Rewriter rw;
    rw_init(&rw, c->m, c->d);
    rw.post = post;
    rw.ud = &st;
    bool ok = rw_function(&rw, g->fn);
    rw_fini(&rw);
    folder_free(st.folder);
    if (!g->fn->type) g->fn->type = sig;
    if (!ok) return false;
  }
  return fold_function(c->m, c->d, g->fn, sig, ill);
}

/* Static shapes can make a function ill-typed where the dynamic program
 * fails only at run time (dyn.zeros of a folded (4) added to a (3) tensor):
 * then the function keeps its dynamic body. */
static bool d2s_body(PassCtx *c, GlobalDef *g, Type *sig) {
  Expr *orig = g->fn->body;
  bool ill = false;
  bool ok = d2s_rewrite(c, g, sig, &ill);
  if (ok && ill) {
    g->fn->body = orig;
    g->fn->type = sig;
    diag_warning(c->d, g->fn->span, "DynamicToStatic left @%s as it was: with static shapes it does not "
                                    "type-check (its shapes are checked when it runs)", g->name);
  }
  return ok;
}

/* The rewriters clear g->fn->type when the body changes; the runner re-types
 * the module after the pass, but infer_untyped meets calls of g before that
 * (recursive calls in g's own body, calls from a later global: "undefined
 * global"). The old signature stays valid for callers (the body computes the
 * same values, its types only more static), so it is put back after each
 * rewrite until the re-type. */
static bool d2s_global(PassCtx *c, GlobalDef *g) {
  Type *sig = g->fn->type;
  bool ok = d2s_body(c, g, sig);
  if (!g->fn->type) g->fn->type = sig;
  return ok;
}

bool pass_DYN_TO_STATIC(PassCtx *c); /* the entry point passes.def names */
bool pass_DYN_TO_STATIC(PassCtx *c) { return pass_for_each_function(c, d2s_global); }
