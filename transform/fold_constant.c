/* transform/fold_constant.c — FoldConstant (spec/passes.md §4.1) and the
 * Folder other passes use (transform/fold_constant.h).
 *
 * One Rewriter pass, bottom-up, nested function literals included:
 *  - an operator call with >= 1 argument, every argument a constant or an
 *    explicit tuple of constants (either possibly inside on_device), whose
 *    operator is neither stateful nor non-computational (ops/op_traits.h) nor
 *    one of shape_of / ndarray_size / device_copy, is evaluated by the
 *    interpreter itself (eval/closed.h) — so the constant is bit-identical
 *    to what running the unfolded program computes — and replaced by a
 *    constant (a tensor) or a tuple of constants;
 *  - shape_of(e) / ndarray_size(e) with a fully static input type become the
 *    constant the kernel would compute (relayc's kernels: a scalar's shape_of
 *    is the scalar 0 like TVM, but its ndarray_size is 1 where TVM says 0);
 *  - `if` on a constant condition (first byte decides) → the branch;
 *    `(a, b).1` on an explicit tuple → `b` (an on_device wrapper is kept);
 *  - `let %v = <constant>; body` → body with the constant for %v;
 *  - inside a Primitive=1 function every call is kept exactly as written.
 * Calls of functions, globals and constructors are never evaluated; refs
 * are never touched. A call whose evaluation fails (no kernel, a run-time
 * error) is left as it is: the unfolded program fails the same way.
 *
 * Trade-off: a call is evaluated with a freshly lowered one-call program
 * (eval_closed_expr), a few microseconds each; folding never happens on
 * code without constants, so the pass is a plain linear walk there.
 */
#include "transform/fold_constant.h"

#include <stdlib.h>
#include <string.h>

#include "eval/closed.h"
#include "ir/attrs.h"
#include "ir/build.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "runtime/tensor.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

struct Folder {
  Rewriter rw;
  bool in_primitive; /* inside a Primitive=1 function literal */
};

/* ------------------------------------------------------------ on_device */

/* e without an on_device wrapper. */
static const Expr *strip_on_device(const Expr *e) {
  while (e->kind == EXPR_CALL && op_call_id(e) == OP_ON_DEVICE && e->call.nargs == 1) e = e->call.args[0];
  return e;
}

bool fold_is_simple_constant(const Expr *e) { return strip_on_device(e)->kind == EXPR_CONST; }

bool fold_is_complex_constant(const Expr *e) {
  e = strip_on_device(e);
  if (e->kind == EXPR_CONST) return true;
  if (e->kind != EXPR_TUPLE) return false;
  for (uint32_t i = 0; i < e->tuple.n; i++) {
    if (stack_exhausted()) return false;
    if (!fold_is_complex_constant(e->tuple.fields[i])) return false;
  }
  return true;
}

/* ------------------------------------------------------------ evaluation */

/* A constant expression for a value: tensor → constant, tuple → tuple of
 * them; NULL for anything else. */
static Expr *value_expr(Module *m, const Value *v, Span sp) {
  switch (value_kind(*v)) {
  case VK_SCALAR:
  case VK_TENSOR: {
    Tensor *t = value_to_tensor(v);
    if (!t) return NULL;
    Expr *c = build_const(m, t->dtype, (uint32_t)t->ndim, t->shape, t->data, sp);
    tensor_release(t);
    return c;
  }
  case VK_TUPLE: {
    TupleObj *t = value_tuple(*v);
    Expr **fs = arena_alloc(m->arena, (t->n ? t->n : 1) * sizeof *fs);
    for (uint32_t i = 0; i < t->n; i++)
      if (!(fs[i] = value_expr(m, &t->f[i], sp))) return NULL;
    return build_tuple(m, fs, t->n, sp);
  }
  default: return NULL;
  }
}

Expr *fold_eval_call(Module *m, Expr *call) {
  Value v;
  if (eval_closed_expr(m, call, &v, NULL) != EVAL_CLOSED_OK) return NULL;
  Expr *r = value_expr(m, &v, call->span);
  value_release(v);
  return r;
}

Expr *fold_const_scalar(Module *m, DType dt, double v, Span sp) {
  if (dt.code == DT_BFLOAT && dt.bits == 16) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint16_t b = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); /* round to nearest even */
    if (f != f) b = 0x7fc0;
    return build_const(m, dt, 0, NULL, &b, sp);
  }
  if (dtype_is_float(dt)) return expr_scalar_float(m, dt, v, sp);
  if (dtype_is_bool(dt)) return expr_scalar_bool(m, v != 0, sp);
  return expr_scalar_int(m, dt, (int64_t)v, sp);
}

bool fold_const_element0(const ConstTensor *c, long double *out) {
  if (c->nbytes == 0 || c->dtype.lanes != 1) return false;
  const void *p = c->data;
  DType dt = c->dtype;
  switch (dt.code) {
  case DT_INT:
    if (dt.bits == 8) *out = *(const int8_t *)p;
    else if (dt.bits == 16) *out = *(const int16_t *)p;
    else if (dt.bits == 32) *out = *(const int32_t *)p;
    else if (dt.bits == 64) *out = (long double)*(const int64_t *)p;
    else return false;
    return true;
  case DT_UINT:
    if (dt.bits == 1 || dt.bits == 8) *out = *(const uint8_t *)p;
    else if (dt.bits == 16) *out = *(const uint16_t *)p;
    else if (dt.bits == 32) *out = *(const uint32_t *)p;
    else if (dt.bits == 64) *out = (long double)*(const uint64_t *)p;
    else return false;
    return true;
  case DT_FLOAT:
    if (dt.bits == 16) *out = half_to_float(*(const uint16_t *)p);
    else if (dt.bits == 32) *out = *(const float *)p;
    else if (dt.bits == 64) *out = *(const double *)p;
    else return false;
    return true;
  case DT_BFLOAT: {
    if (dt.bits != 16) return false;
    uint32_t u = (uint32_t)*(const uint16_t *)p << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    *out = f;
    return true;
  }
  default: return false;
  }
}

/* ------------------------------------------------------------ shape_of */

/* The extents of a tensor type when every one is known. */
static bool static_shape(const Type *t, int64_t **dims, uint32_t *ndim, Module *m) {
  while (t && t->kind == TYPE_UVAR && t->uvar.link) t = t->uvar.link;
  if (!t || t->kind != TYPE_TENSOR) return false;
  *ndim = t->tensor.ndim;
  *dims = arena_alloc(m->arena, (t->tensor.ndim ? t->tensor.ndim : 1) * sizeof **dims);
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    if (t->tensor.dims[i].kind != DIM_INT) return false;
    (*dims)[i] = t->tensor.dims[i].value;
  }
  return true;
}

/* `value` (int64 constant of the given shape) converted to the call's dtype
 * attribute by the run-time cast. */
static Expr *cast_to_attr_dtype(Module *m, const Expr *call, Expr *value) {
  const AttrValue *dt = attrs_get(call->call.attrs, "dtype");
  const char *name = dt && dt->kind == AV_STRING && dt->s.len ? dt->s.chars : "int32";
  char text[64];
  snprintf(text, sizeof text, "dtype=\"%s\"", name);
  Expr *cast = op_call(m, "cast", &value, 1, text, call->span);
  return fold_eval_call(m, cast);
}

/* shape_of(e) / ndarray_size(e) when e's type is static, else NULL. */
static Expr *fold_shape(Module *m, const Expr *old) {
  int32_t id = op_call_id(old);
  if ((id != OP_SHAPE_OF && id != OP_NDARRAY_SIZE) || old->call.nargs != 1) return NULL;
  const Expr *in = strip_on_device(old->call.args[0]);
  int64_t *dims = NULL;
  uint32_t nd = 0;
  if (in->kind == EXPR_CONST) {
    dims = in->constant->shape;
    nd = (uint32_t)in->constant->ndim;
  } else if (!static_shape(old->call.args[0]->type, &dims, &nd, m)) {
    return NULL;
  }
  Expr *v;
  if (id == OP_SHAPE_OF) {
    int64_t zero = 0, n = nd;
    v = nd == 0 ? build_const(m, DT_I64, 0, NULL, &zero, old->span) : build_const(m, DT_I64, 1, &n, dims, old->span);
  } else {
    int64_t count = 1;
    for (uint32_t i = 0; i < nd; i++) count *= dims[i];
    v = build_const(m, DT_I64, 0, NULL, &count, old->span);
  }
  return cast_to_attr_dtype(m, old, v);
}

/* ------------------------------------------------------------ the rewrite */

static bool call_all_complex_constant(const Expr *e) {
  for (uint32_t i = 0; i < e->call.nargs; i++)
    if (!fold_is_complex_constant(e->call.args[i])) return false;
  return true;
}

static Expr *fold_call(Folder *f, Expr *old, Expr *e) {
  Module *m = f->rw.m;
  if (f->in_primitive) return old; /* kept exactly, arguments included */
  /* zeros(...), ones(...): not worth a constant. `e`, not `old`: a nullary
   * call of a function literal keeps its rewritten callee (returning `old`
   * dropped the substitution of a folded let inside `fn () { %v }()` while
   * the let itself went: a free variable) */
  if (e->call.nargs == 0) return e;
  int32_t id = op_call_id(e);
  if (id < 0) return e; /* only primitives are evaluated */
  if (op_is_stateful(id)) return e;
  Expr *s = fold_shape(m, old);
  if (s) return s;
  if (op_is_noncomputational(id)) return e;
  if (id == OP_SHAPE_OF || id == OP_NDARRAY_SIZE || id == OP_DEVICE_COPY) return e;
  if (!call_all_complex_constant(e)) return e;
  if (!e->type) e->type = old->type; /* the type the unfolded program runs with */
  Expr *r = fold_eval_call(m, e);
  return r ? r : e;
}

/* If / projection / let after their children were rewritten. */
static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  Folder *f = rw->ud;
  switch (e->kind) {
  case EXPR_CALL: return fold_call(f, old, e);
  case EXPR_IF: {
    const Expr *c = strip_on_device(e->if_.cond);
    if (c->kind != EXPR_CONST || c->constant->nbytes == 0) return e;
    return ((const uint8_t *)c->constant->data)[0] ? e->if_.then_ : e->if_.else_;
  }
  case EXPR_PROJ: {
    Expr *t = e->proj.tuple;
    const Expr *bare = strip_on_device(t);
    if (bare->kind != EXPR_TUPLE || e->proj.index >= bare->tuple.n) return e;
    Expr *field = bare->tuple.fields[e->proj.index];
    if (bare == t) return field;
    /* on_device((x, y), ...).1 → on_device(y, ...) */
    Expr *w = build_copy(rw->m, t);
    w->call.args = arena_alloc(rw->m->arena, sizeof(Expr *));
    w->call.args[0] = field;
    return w;
  }
  case EXPR_LET:
    /* the value was substituted for the variable (pre): drop the binding */
    return fold_is_simple_constant(e->let.value) ? e->let.body : e;
  default: return e;
  }
}

static Expr *pre(Rewriter *rw, Expr *e) {
  Folder *f = rw->ud;
  if (e->kind == EXPR_LET) {
    Expr *v = rw_expr(rw, e->let.value);
    if (fold_is_simple_constant(v)) rw_subst(rw, e->let.var, v);
    return NULL; /* the chain continues normally; post drops the binding */
  }
  if (e->kind == EXPR_FN && !f->in_primitive && fn_has_attr(e->fn, "Primitive")) {
    f->in_primitive = true;
    Expr *r = rw_children(rw, e);
    f->in_primitive = false;
    return r;
  }
  return NULL;
}

Folder *folder_new(Module *m, Diag *d) {
  Folder *f = calloc(1, sizeof *f);
  if (!f) abort();
  rw_init(&f->rw, m, d);
  f->rw.pre = pre;
  f->rw.post = post;
  f->rw.ud = f;
  return f;
}

void folder_free(Folder *f) {
  if (!f) return;
  rw_fini(&f->rw);
  free(f);
}

void folder_reset(Folder *f) { rw_reset_memo(&f->rw); }

Expr *folder_fold(Folder *f, Expr *e) { return rw_expr(&f->rw, e); }

/* ------------------------------------------------------------ the pass */

/* Whether some node meets a folding rule's condition as it stands. If none
 * does, none can after rewriting either (every rule needs a rewritten child,
 * and the lowest rewrite needs an original one), so the function is left
 * untouched without a rewriting walk. */
static bool has_candidates(Expr *body) {
  DagScan s;
  dag_scan(&s, body);
  bool any = false;
  for (uint32_t i = 0; i < s.n && !any; i++) {
    const Expr *e = dag_node(&s, i);
    switch (e->kind) {
    case EXPR_CALL: {
      int32_t id = op_call_id(e);
      if (id < 0 || e->call.nargs == 0) break;
      if (id == OP_SHAPE_OF || id == OP_NDARRAY_SIZE) any = true; /* maybe a static shape */
      else any = call_all_complex_constant(e);
      break;
    }
    case EXPR_IF: any = strip_on_device(e->if_.cond)->kind == EXPR_CONST; break;
    case EXPR_PROJ: any = strip_on_device(e->proj.tuple)->kind == EXPR_TUPLE; break;
    case EXPR_LET: any = fold_is_simple_constant(e->let.value); break;
    default: break;
    }
  }
  dag_free(&s);
  return any;
}

bool fold_constant_function(Module *m, Diag *d, Function *fn) {
  if (!has_candidates(fn->body)) return true;
  Folder *f = folder_new(m, d);
  bool ok = rw_function(&f->rw, fn);
  folder_free(f);
  return ok;
}

static bool fold_global(PassCtx *c, GlobalDef *g) { return fold_constant_function(c->m, c->d, g->fn); }

bool pass_FOLD_CONSTANT(PassCtx *c); /* the entry point passes.def names */
bool pass_FOLD_CONSTANT(PassCtx *c) { return pass_for_each_function(c, fold_global); }
