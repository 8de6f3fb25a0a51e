/* transform/fold_constant.c — FoldConstant (spec/passes.md §4.1) and the
 * Folder other passes use (transform/fold_constant.h).
 *
 * One Rewriter pass, bottom-up, nested function literals included:
 *  - an operator call with >= 1 argument, every argument a constant or an
 *    explicit tuple of constants (either possibly inside on_device), whose
 *    operator is neither stateful nor non-computational (ops/op_traits.h) nor
 *    one of shape_of / ndarray_size / device_copy (nor qnn.dequantize in the
 *    FoldConstant pass unless fold_qnn=True: TVM's default skips the QNN
 *    operators; the Folder other passes use folds it), is evaluated by the
 *    interpreter itself (eval/closed.h) — so the constant is bit-identical
 *    to what running the unfolded program computes — and replaced by a
 *    constant (a tensor) or a tuple of constants;
 *  - shape_of(e) / ndarray_size(e) with a fully static input type become the
 *    constant the kernel would compute (relayc's kernels: a scalar's shape_of
 *    is the scalar 0 like TVM, but its ndarray_size is 1 where TVM says 0);
 *  - `if` on a constant condition (first byte decides) → the branch, unless
 *    a branch has an effect (a shared node with one runs before the `if`,
 *    eval/lower.c); `(a, b).1` on an explicit tuple → `b` unless `a` has an
 *    effect (an on_device wrapper is kept);
 *  - `let %v = <constant>; body` → body with the constant for %v;
 *  - inside a Primitive=1 function every call is kept exactly as written.
 * Calls of functions, globals and constructors are never evaluated; refs
 * are never touched. A call whose evaluation fails (no kernel, a run-time
 * error) is left as it is: the unfolded program fails the same way. A
 * function whose folded form does not type-check (constants more static
 * than the dynamic types they replace) keeps its unfolded body, with a
 * warning (fold_constant_function).
 *
 * Evaluation: a call whose arguments are all tensor constants (no tuple, no
 * on_device, no rank-0 immediate) calls the operator's kernel directly,
 * exactly as the interpreter's operator call does (eval/vm.c op_call_run:
 * the constants wrapped without a copy, the call's attributes and type);
 * any other call is evaluated with a freshly lowered one-call program
 * (eval_closed_expr), a few microseconds each. Either way the kernel is
 * relayc's own, so the constant is bit-identical to running the call. The
 * kernel runs on the pass's thread alone (threadpool_serial; a kernel's
 * result never depends on the split): a fold is a one-off sweep over weights
 * no core has in cache, and on ResNet-50's 94 MB the pool's wake-ups, its
 * workers' spinning between folds and the joins cost ~2.5 ms more CPU than
 * they save (bench/passes/README.md, session 14).
 *
 * Ownership (the FoldConstant pass only, not the Folder service): before
 * rewriting, the pass counts, over the whole module, the edges that reach
 * each constant's data buffer (all functions, nested literals, m->expr) and
 * pins the buffers attributes name (meta[relay.Constant][i], an expression
 * atom) and constants reachable from two functions (each function has its
 * own memo). A float elementwise/broadcast call may then overwrite, in
 * place, an argument whose buffer this one edge reaches: the kernel takes it
 * as its output (kernel_take_input) and the folded constant keeps the buffer
 * — no allocation, no copy. A folded result inherits the edge count of the
 * call it replaces, so `(W * a) * b` works in W's buffer twice. Rules that
 * give a node more parents (a let-bound constant substituted for its uses,
 * `if` / projection / let results) pin the constant they return. Such
 * kernels cannot fail after taking an input (float arithmetic), so a
 * consumed buffer is always the folded result. Consequence for callers:
 * after the pass, expressions of the module from before it (no longer
 * reachable from the module) may see a consumed constant's new contents;
 * nothing in relayc keeps them (a failed pass leaves the module unusable
 * anyway, the pipeline stops). On ResNet-50 this makes the second
 * FoldConstant of -O3 (the scales FoldScaleAxis moved onto 94 MB of conv
 * weights) a vectorised sweep over the weights instead of allocating,
 * zeroing and copying them (bench/passes/README.md).
 *
 * Trade-off: the ownership counts cost a hash per edge, done only when some
 * function has something to fold; folding never happens on code without
 * constants, so the pass is a plain linear walk there. One scan of a body
 * (transform/dagscan.h) answers whether it has candidates, whether it has
 * dynamic types and, for the first function with candidates, its ownership
 * edges: the three used to be a scan each.
 */
#include "transform/fold_constant.h"

#include <stdlib.h>
#include <string.h>

#include "eval/closed.h"
#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ir/tensor_blob.h"
#include "ops/kernels/kernel.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "runtime/tensor.h"
#include "runtime/threadpool.h"
#include "runtime/value.h"
#include "sema/infer.h"
#include "sema/typeof.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

/* Which constant buffers the pass may overwrite (see the top comment). */
typedef struct Owners {
  PtrMap data;  /* ConstTensor.data -> edges of the module reaching it (>= OWN_PINNED: never) */
  PtrMap calls; /* call node -> its parent edges in the module (a folded result inherits them) */
  PtrMap root;  /* constant node -> 1 + index of the function that reaches it */
} Owners;

#define OWN_PINNED ((int64_t)1 << 40)
/* Smaller buffers are copied as before: not worth the bookkeeping. */
#define OWN_MIN_BYTES 4096u

struct Folder {
  Rewriter rw;
  bool in_primitive; /* inside a Primitive=1 function literal */
  Owners *own;       /* the pass's ownership counts, or NULL (no buffer is ever reused) */
  bool risky;        /* a fold may change what type checking says (see fold_constant_function) */
  TypeofCx *tc;      /* FoldConstant on a function without dynamic types: folded constants typed,
                        the rewriter's rebuilt nodes keep their types (keep_types), or NULL */
  PtrMap effects;    /* dag_has_effects' memo */
  bool skip_qnn;     /* the FoldConstant pass without fold_qnn: QNN operators stay (TVM's default) */
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

/* A constant holding `data` (not copied: the module owns it from now on). */
static Expr *const_over(Module *m, const Tensor *t, void *data, Span sp) {
  Expr *e = expr_new(m, EXPR_CONST, sp);
  ConstTensor *c = arena_alloc(m->arena, sizeof *c);
  c->dtype = t->dtype;
  c->ndim = t->ndim;
  c->shape = arena_alloc(m->arena, (t->ndim ? (size_t)t->ndim : 1) * sizeof(int64_t));
  if (t->ndim) memcpy(c->shape, t->shape, (size_t)t->ndim * sizeof(int64_t));
  c->data = data;
  c->nbytes = t->nbytes;
  c->meta_index = -1;
  e->constant = c;
  return e;
}

/* A constant with a copy of t's elements. Big data goes to a fresh
 * uninitialised arena block: build_const's zeroing would touch every page
 * once more only to be overwritten. */
static Expr *const_copy(Module *m, const Tensor *t, Span sp) {
  if (t->nbytes < (64u << 10)) return build_const(m, t->dtype, (uint32_t)t->ndim, t->shape, t->data, sp);
  void *data = arena_alloc_big(m->arena, (size_t)t->nbytes);
  memcpy(data, t->data, (size_t)t->nbytes);
  return const_over(m, t, data, sp);
}

/* A constant expression for a value: tensor → constant, tuple → tuple of
 * them; NULL for anything else. */
static Expr *value_expr(Module *m, const Value *v, Span sp) {
  switch (value_kind(*v)) {
  case VK_SCALAR:
  case VK_TENSOR: {
    Tensor *t = value_to_tensor(v);
    if (!t) return NULL;
    Expr *c = const_copy(m, t, sp);
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
  bool ieee = dt.code == DT_FLOAT && (dt.bits == 16 || dt.bits == 32 || dt.bits == 64);
  if (dtype_is_float(dt) && !ieee) { /* float8 (and a width no kernel stores: 0): expr_scalar_float knows IEEE only */
    uint64_t bits = 0;
    if (tensor_blob_dtype_supported(dt)) tensor_store_f64(dt, &bits, v);
    return build_const(m, dt, 0, NULL, &bits, sp);
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

/* ------------------------------------------------------------ ownership */

static void own_pin(Owners *o, const void *data) { *ptrmap_slot(&o->data, data) = OWN_PINNED; }

/* Pins every constant under e (an attribute's expression). */
static void own_pin_under(Owners *o, Expr *e) {
  DagScan s;
  dag_scan(&s, e);
  for (uint32_t i = 0; i < s.n; i++)
    if (s.pre[i]->kind == EXPR_CONST) own_pin(o, s.pre[i]->constant->data);
  dag_free(&s);
}

static bool own_attr(Owners *o, const Module *m, const AttrValue *v) {
  if (!v) return true;
  switch (v->kind) {
  case AV_META:
    if (strcmp(v->meta.key, "relay.Constant") == 0 && v->meta.index < m->nmeta_consts && m->meta_consts[v->meta.index])
      own_pin(o, m->meta_consts[v->meta.index]->data);
    return true;
  case AV_EXPR:
    if (v->expr) own_pin_under(o, v->expr);
    return true;
  case AV_ARRAY:
    if (stack_exhausted()) return false;
    for (uint32_t i = 0; i < v->arr.n; i++)
      if (!own_attr(o, m, v->arr.items[i])) return false;
    return true;
  default: return true;
  }
}

/* Pins the constants attributes name; false when too deep to tell. */
static bool own_attrs(Owners *o, const Module *m, const Attrs *a) {
  if (!a) return true;
  if (a->meta_key && strcmp(a->meta_key, "relay.Constant") == 0 && a->meta_index < m->nmeta_consts &&
      m->meta_consts[a->meta_index])
    own_pin(o, m->meta_consts[a->meta_index]->data);
  for (uint32_t i = 0; i < a->n; i++)
    if (!own_attr(o, m, a->items[i].value)) return false;
  return true;
}

/* One more edge reaching c from function number `root`. */
static void own_edge(Owners *o, const Expr *c, int64_t root) {
  if (c->kind == EXPR_CALL) {
    (*ptrmap_slot(&o->calls, c))++;
  } else if (c->kind == EXPR_CONST) {
    int64_t *r = ptrmap_slot(&o->root, c);
    bool other = *r != 0 && *r != root;
    *r = root;
    int64_t *n = ptrmap_slot(&o->data, c->constant->data);
    *n = other ? OWN_PINNED : *n + 1;
  }
}

/* Counts the edges under the root expression `body` (scanned: *s) of
 * function `root`. */
static bool own_scanned(Owners *o, const Module *m, Expr *body, const DagScan *s, int64_t root) {
  own_edge(o, body, root);
  bool ok = true;
  for (uint32_t i = 0; i < s->n && ok; i++) {
    const Expr *e = s->pre[i];
    Expr *c;
    for (uint32_t j = 0; (c = dag_child(e, j)); j++) own_edge(o, c, root);
    if (e->kind == EXPR_CALL) ok = own_attrs(o, m, e->call.attrs);
    else if (e->kind == EXPR_FN) ok = own_attrs(o, m, e->fn->attrs);
  }
  return ok;
}

static bool own_root(Owners *o, const Module *m, Expr *body, int64_t root) {
  DagScan s;
  dag_scan(&s, body);
  bool ok = own_scanned(o, m, body, &s, root);
  dag_free(&s);
  return ok;
}

/* The counts for module m; NULL when something is too deep to count (then
 * nothing is reused). Global number `known` (its body scanned: *ks) is
 * counted from that scan instead of a new one. The maps are sized for
 * ks's nodes at the start (a module is mostly its @main): no rehashing. */
static Owners *owners_new(const Module *m, uint32_t known, const DagScan *ks) {
  Owners *o = mem_calloc(1, sizeof *o);
  ptrmap_reserve(&o->data, ks->n);
  ptrmap_reserve(&o->calls, ks->n);
  ptrmap_reserve(&o->root, ks->n);
  bool ok = true;
  for (uint32_t i = 0; i < m->ndefs && ok; i++) {
    GlobalDef *g = m->defs[i];
    if (!g->fn) continue;
    ok = own_attrs(o, m, g->fn->attrs) && (i == known ? own_scanned(o, m, g->fn->body, ks, (int64_t)i + 1)
                                                       : own_root(o, m, g->fn->body, (int64_t)i + 1));
  }
  if (ok && m->expr) ok = own_root(o, m, m->expr, (int64_t)m->ndefs + 1);
  if (ok) return o;
  ptrmap_free(&o->data);
  ptrmap_free(&o->calls);
  ptrmap_free(&o->root);
  mem_free(o);
  return NULL;
}

static void owners_free(Owners *o) {
  if (!o) return;
  ptrmap_free(&o->data);
  ptrmap_free(&o->calls);
  ptrmap_free(&o->root);
  mem_free(o);
}

/* A rule is about to give the constant under e (if any) more parents. */
static void own_share(Folder *f, const Expr *e) {
  if (!f->own) return;
  e = strip_on_device(e);
  if (e->kind == EXPR_CONST) own_pin(f->own, e->constant->data);
}

/* Whether this call's edge is the only one reaching constant k's buffer. */
static bool own_sole(const Folder *f, const ConstTensor *k) {
  int64_t n = 0;
  return f->own && k->ndim >= 1 && k->nbytes >= OWN_MIN_BYTES && ptrmap_get(&f->own->data, k->data, &n) && n == 1;
}

/* ------------------------------------------------------------ direct kernel calls */

static bool is_float_dtype(DType d) { return d.code == DT_FLOAT && (d.bits == 32 || d.bits == 64) && d.lanes == 1; }

/* Whether an argument is a rank-0 constant the interpreter holds as an
 * immediate (eval/lower.c const_value). */
static bool is_immediate_const(const ConstTensor *k) { return k->ndim == 0 && value_dtype_is_immediate(k->dtype); }

/* Whether the call can go straight to its kernel: every argument a bare
 * constant and at least one of them a tensor (with only immediates the
 * interpreter takes its scalar paths, kscalar_*: those calls go through
 * eval_closed_expr). */
static bool direct_args(const Expr *e) {
  bool tensor = false;
  for (uint32_t i = 0; i < e->call.nargs; i++) {
    const Expr *a = e->call.args[i];
    if (a->kind != EXPR_CONST) return false;
    tensor |= !is_immediate_const(a->constant);
  }
  return tensor;
}

/* The kernel input for constant k as the interpreter makes it: a tensor
 * over the constant's data, or an immediate's fresh rank-0 tensor. */
static Tensor *input_tensor(const ConstTensor *k) {
  if (!is_immediate_const(k)) return tensor_from_const(k);
  Value v = dtype_is_float(k->dtype) ? value_float(k->dtype, tensor_load_f64(k->dtype, k->data))
                                     : value_int(k->dtype, tensor_load_i64(k->dtype, k->data));
  Tensor *t = value_to_tensor(&v);
  value_release(v);
  return t;
}

/* The operator call e (arguments: direct_args) evaluated by its kernel the
 * way eval/vm.c op_call_run does it; NULL when it fails (e stays). */
static Expr *fold_direct(Folder *f, Expr *e) {
  Module *m = f->rw.m;
  int32_t id = op_call_id(e);
  const OpDef *def = op_get(id);
  if (!def || !def->kernel) return NULL;
  uint32_t n = e->call.nargs;
  /* only float arithmetic may write into an argument: it cannot fail once
   * the kernel has taken one, so a taken buffer always holds the result */
  bool may_take = f->own && op_pattern(id) <= OPAT_BROADCAST;
  for (uint32_t i = 0; i < n && may_take; i++) may_take = is_float_dtype(e->call.args[i]->constant->dtype);
  Tensor *small[8];
  Tensor **ins = n <= 8 ? small : mem_malloc(n * sizeof *ins);
  uint32_t made = 0;
  bool ok = true;
  for (; made < n; made++) {
    const ConstTensor *k = e->call.args[made]->constant;
    ins[made] = input_tensor(k);
    if (!ins[made]) {
      ok = false;
      break;
    }
    /* writable (still borrowed: never freed here) when this edge owns it */
    if (may_take && own_sole(f, k)) ins[made]->flags &= ~(uint32_t)TENSOR_READONLY;
  }
  void *buf[8];
  for (uint32_t i = 0; i < n && i < 8; i++) buf[i] = i < made ? ins[i]->data : NULL;
  Expr *r = NULL;
  if (ok) {
    KernelCtx c;
    kernel_ctx_init(&c, id, ins, n, e->call.attrs, e->type);
    if (def->kernel(&c) == KERNEL_OK) {
      if (c.is_tuple) {
        Value t = value_tuple_new(c.nouts);
        for (uint32_t i = 0; i < c.nouts; i++) {
          value_tuple(t)->f[i] = value_from_tensor(c.outs[i]);
          c.outs[i] = NULL;
        }
        r = value_expr(m, &t, e->span);
        value_release(t);
      } else if (c.out) {
        Tensor *o = c.out;
        int taken = -1; /* the argument whose buffer now holds the result */
        for (uint32_t i = 0; i < n && i < 8 && taken < 0; i++)
          if (o->data == buf[i] && !(ins[i] && (ins[i]->flags & TENSOR_READONLY)) && o->ndim >= 1 &&
              o->nbytes == e->call.args[i]->constant->nbytes && own_sole(f, e->call.args[i]->constant))
            taken = (int)i;
        if (taken >= 0) {
          r = const_over(m, o, o->data, e->span);
        } else {
          c.out = NULL;
          Value v = value_from_tensor(o);
          r = value_expr(m, &v, e->span);
          value_release(v);
        }
      }
    }
    kernel_ctx_clear(&c); /* releases the inputs (borrowed: data untouched) and what is left */
  } else {
    for (uint32_t i = 0; i < made; i++) tensor_release(ins[i]);
  }
  if (ins != small) mem_free(ins);
  return r;
}

/* ------------------------------------------------------------ shape_of */

/* The extents of a tensor type when every one is known. */
static bool static_shape(const Type *t, int64_t **dims, uint32_t *ndim, Module *m) {
  t = type_solved(t);
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

/* Whether t has an unknown extent (`?`) or is not known at all. */
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
  if (f->skip_qnn && id == OP_QNN_DEQUANTIZE) return e;
  if (id == OP_SHAPE_OF || id == OP_NDARRAY_SIZE || id == OP_DEVICE_COPY) return e;
  if (!call_all_complex_constant(e)) return e;
  bool typed = e->type != NULL;
  if (!typed) e->type = old->type; /* the type the unfolded program runs with */
  bool was_serial = threadpool_serial(true); /* see the top comment: Evaluation */
  Expr *r = direct_args(e) ? fold_direct(f, e) : fold_eval_call(m, e);
  threadpool_serial(was_serial);
  /* a call left with constant arguments (a relation may read their values:
   * arange), or a constant more static than the dynamic type it replaces */
  if (!r || type_has_unknown_extent(old->type)) f->risky = true;
  if (!r) {
    if (!typed) e->type = NULL; /* to be typed with its new arguments */
    return e;
  }
  if (f->tc && r->kind == EXPR_CONST) typeof_set(f->tc, r); /* the re-typing keeps it and its parents */
  /* r's buffer is fresh or taken from a consumed argument: the edges that
   * reach it are those of the call it replaces */
  if (f->own && r->kind == EXPR_CONST && r->constant->nbytes >= OWN_MIN_BYTES) {
    int64_t uses = 0;
    ptrmap_get(&f->own->calls, old, &uses);
    *ptrmap_slot(&f->own->data, r->constant->data) = uses >= 1 ? uses : OWN_PINNED;
  }
  return r;
}

/* If / projection / let after their children were rewritten. */
static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
  Folder *f = rw->ud;
  switch (e->kind) {
  case EXPR_CALL: return fold_call(f, old, e);
  case EXPR_IF: {
    const Expr *c = strip_on_device(e->if_.cond);
    if (c->kind != EXPR_CONST || c->constant->nbytes == 0) return e;
    /* a node with an effect in a branch may be shared with code after the
     * `if`: it runs where A-normal form binds it, before the branches
     * (eval/lower.c hoist_scan), which the folded code would not do */
    if (dag_has_effects(&f->effects, e->if_.then_) || dag_has_effects(&f->effects, e->if_.else_)) return e;
    if (type_has_unknown_extent(old->type)) f->risky = true; /* a branch may be more static */
    Expr *branch = ((const uint8_t *)c->constant->data)[0] ? e->if_.then_ : e->if_.else_;
    own_share(f, branch); /* it takes the `if`'s parents */
    return branch;
  }
  case EXPR_PROJ: {
    Expr *t = e->proj.tuple;
    const Expr *bare = strip_on_device(t);
    if (bare->kind != EXPR_TUPLE || e->proj.index >= bare->tuple.n) return e;
    for (uint32_t i = 0; i < bare->tuple.n; i++) /* the other fields' effects would be dropped */
      if (i != e->proj.index && dag_has_effects(&f->effects, bare->tuple.fields[i])) return e;
    Expr *field = bare->tuple.fields[e->proj.index];
    own_share(f, field); /* the tuple may keep it too */
    if (bare == t) return field;
    /* on_device((x, y), ...).1 → on_device(y, ...) */
    Expr *w = build_copy(rw->m, t);
    w->call.args = arena_alloc(rw->m->arena, sizeof(Expr *));
    w->call.args[0] = field;
    return w;
  }
  case EXPR_LET:
    /* the value was substituted for the variable (pre): drop the binding */
    if (!fold_is_simple_constant(e->let.value)) return e;
    own_share(f, e->let.body); /* it takes the let's parents */
    return e->let.body;
  default: return e;
  }
}

static Expr *pre(Rewriter *rw, Expr *e) {
  Folder *f = rw->ud;
  if (e->kind == EXPR_LET) {
    Expr *v = rw_expr(rw, e->let.value);
    if (fold_is_simple_constant(v)) {
      own_share(f, v); /* every use of the variable becomes a parent */
      rw_subst(rw, e->let.var, v);
    }
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
  ptrmap_free(&f->effects);
  free(f);
}

void folder_reset(Folder *f) { rw_reset_memo(&f->rw); }

Expr *folder_fold(Folder *f, Expr *e) { return rw_expr(&f->rw, e); }

/* ------------------------------------------------------------ the pass */

/* Whether some node of a scanned body meets a folding rule's condition as it stands. If none
 * does, none can after rewriting either (every rule needs a rewritten child,
 * and the lowest rewrite needs an original one), so the function is left
 * untouched without a rewriting walk. */
static bool scan_has_candidates(const DagScan *s) {
  bool any = false;
  for (uint32_t i = 0; i < s->n && !any; i++) {
    const Expr *e = s->pre[i];
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
  return any;
}

/* Whether some node of a scanned body has a type with an unknown extent (see
 * fold_function_owned). */
static bool scan_has_dynamic_types(const DagScan *s) {
  bool any = false;
  for (uint32_t i = 0; i < s->n && !any; i++) {
    const Expr *e = s->pre[i];
    any = e->type && type_has_unknown_extent(e->type);
  }
  return any;
}

/* FoldConstant on fn, which has candidates (scan_has_candidates); `dynamic`:
 * whether some node of its body has a type with an unknown extent.
 *
 * Folding never turns a well-typed function into an ill-typed one: a
 * constant can be more static than the dynamic type it replaces (arange of
 * folded bounds: (4) where the program had (?), then add with a (3) tensor),
 * and a relation can read a constant argument's value (arange's empty
 * range). The unfolded program fails there at run time, if at all; the
 * folded one would fail the re-type after the pass (an internal error).
 * When a fold was risky in that way, the new body is typed on the spot
 * (silently) and, if it does not type-check, the function keeps its
 * unfolded body (with a warning): the trade-off is that nothing in that
 * function folds. Only a function with dynamic types can fail so; it folds
 * without reusing buffers in place, so its unfolded body stays intact. */
static bool fold_function_owned(Module *m, Diag *d, Function *fn, Owners *own, bool dynamic, bool skip_qnn) {
  Expr *body = fn->body;
  Type *sig = fn->type;
  Folder *f = folder_new(m, d);
  f->own = dynamic ? NULL : own;
  f->skip_qnn = skip_qnn;
  TypeofCx tc;
  if (!dynamic) { /* no fold can make a type more static: types carry over */
    typeof_init(&tc, m);
    f->tc = &tc;
    f->rw.keep_types = true;
  }
  bool ok = rw_function(&f->rw, fn);
  if (!dynamic) typeof_fini(&tc);
  bool risky = f->risky;
  folder_free(f);
  if (ok && risky && dynamic && fn->body != body) {
    Diag quiet;
    diag_init_silent(&quiet, m->src);
    fn->type = sig; /* recursive calls in the body */
    /* the nodes it kept and the variables they use may have types that the
     * folds made stale (a literal returning the folded arange, the calls of
     * it), and the new nodes' check reads them: the function is typed anew */
    infer_clear_tree(fn->body);
    if (!infer_untyped(m, fn->body, &quiet)) {
      fn->body = body;
      infer_clear_tree(body); /* the nodes both bodies hold: typed as they were */
      infer_untyped(m, body, &quiet);
      diag_warning(d, fn->span, "constant folding left this function unfolded: the folded constants make it "
                                "ill-typed (its shapes are checked when it runs)");
    } else {
      fn->type = NULL;
    }
  }
  return ok;
}

bool fold_constant_function(Module *m, Diag *d, Function *fn) {
  DagScan s;
  dag_scan(&s, fn->body);
  bool candidates = scan_has_candidates(&s), dynamic = candidates && scan_has_dynamic_types(&s);
  dag_free(&s);
  return !candidates || fold_function_owned(m, d, fn, NULL, dynamic, false);
}

bool pass_FOLD_CONSTANT(PassCtx *c); /* the entry point passes.def names */
bool pass_FOLD_CONSTANT(PassCtx *c) {
  /* pass_for_each_function's loop, with the ownership counts made once,
   * when the first function with something to fold comes; one scan of a
   * body answers whether it has candidates, whether it has dynamic types and
   * (the first time) its ownership counts */
  Owners *own = NULL;
  bool counted = false, ok = true, skip_qnn = !pass_opt_bool(c, "fold_qnn");
  for (uint32_t i = 0; i < c->m->ndefs && ok; i++) {
    GlobalDef *g = c->m->defs[i];
    if (!g->fn || fn_skipped_by_function_passes(g->fn)) continue;
    DagScan s;
    dag_scan(&s, g->fn->body);
    bool candidates = scan_has_candidates(&s), dynamic = candidates && scan_has_dynamic_types(&s);
    if (candidates && !counted) own = owners_new(c->m, i, &s), counted = true;
    dag_free(&s);
    if (!candidates) continue;
    Type *sig = g->fn->type;
    ok = fold_function_owned(c->m, c->d, g->fn, own, dynamic, skip_qnn);
    if (!g->fn->type) g->fn->type = sig; /* as pass_for_each_function: for the next one's check */
  }
  owners_free(own);
  return ok;
}
