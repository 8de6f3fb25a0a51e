/* transform/fold_scale_axis.c — ForwardFoldScaleAxis, BackwardFoldScaleAxis
 * and the FoldScaleAxis sequence (spec/passes.md §4.10).
 *
 * A per-channel `multiply(a, s)` next to a convolution or dense is pushed into
 * the weights. Both directions work on the dataflow graph of each function
 * (nested literals included) and never look through let, if, tuples, match
 * or function boundaries: a node used by anything but an argument position
 * that understands scales gets no "message".
 *
 * Messages: a set of channel axes (ascending) plus "the scale must be >= 0"
 * (set when a relu / leaky_relu is crossed) and, forward only, "the scale
 * divides": set by add/subtract, whose other operand becomes b / s — exact
 * only for a float constant scale with no zero, infinite or NaN element. Operators and their role, as in
 * TVM's per-operator attributes (kept here, not in the registry: the roles
 * are this pass's own vocabulary): relu-like (nn.relu, nn.leaky_relu),
 * add-like (add, subtract), the producer `multiply`, consumers nn.conv2d /
 * nn.conv3d / nn.dense, and nn.bias_add (backward only).
 *
 * Forward: demands flow from consumers back to producers (reverse post order
 * of the DAG; a node's demand is the intersection over all its uses, and any
 * use that is not an understood argument kills it). The rewrite then runs
 * bottom-up: a demanded multiply by a broadcastable scale becomes "value
 * scaled by s" (a side table keyed by the original node), relu keeps the
 * scale outside, add/subtract divide their other operand by the expanded
 * scale, the consumer multiplies its weight.
 * Backward: offers flow forwards (post order) from a conv/dense used exactly
 * once; a multiply consuming an offer is replaced by the offering chain
 * rebuilt with the scale pushed into its weights (and biases / the other add
 * operands).
 *
 * Like TVM's forward rewriter, ForwardFoldScaleAxis also folds a projection
 * of a tuple literal `(a, b).0` to the field in every function where some
 * demand exists (a conv or dense is enough) — unless a dropped field has an
 * effect, which TVM would lose.
 *
 * Where TVM would stop with an internal check ("outstanding scale": a scaled
 * value reaching a use that cannot take it, a reshape of a non-static shape)
 * relayc leaves the whole function unchanged. Deliberate differences from
 * TVM, each where TVM computes a wrong or ill-typed program:
 *  - nn.dense takes part only with rank-2 data (TVM uses axis 1 of any rank);
 *  - a rank-0 scale over a blocked layout is repeated to each axis's own
 *    extent (TVM repeats every axis by the first axis's extent);
 *  - backward add of two offers requires a non-negative scale if either side
 *    does (TVM looks at the left side only);
 *  - a conv's blocked channel sub-axis must follow its primal axis;
 *  - a constant scale with an infinite or NaN element is never moved;
 *  - forward add/subtract needs a float constant scale with every element
 *    finite and non-zero (TVM divides by any scale: a 0 gives inf * 0 = NaN,
 *    an integer scale truncates the quotient);
 *  - a conv/dense takes part only when its output dtype is its operands'
 *    (with out_dtype the kernel converts the operands first, so a scale moved
 *    across the conversion is rounded differently, or overflows in int8).
 */
#include <math.h>
#include <string.h>

#include "ir/build.h"
#include "ir/ptrmap.h"
#include "ops/layout.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "transform/callattr.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

/* ------------------------------------------------------------ messages */

enum { MSG_MAX_AXES = 4 };

typedef struct Msg {
  bool def;      /* false: no scaling possible (TVM's null message) */
  bool positive; /* the scale must be a constant >= 0 */
  bool divides;  /* the scale must be a float constant, finite, no zero */
  uint8_t n;
  int32_t ax[MSG_MAX_AXES]; /* ascending */
} Msg;

static const Msg NO_MSG = {0};

static Msg msg_make(const int32_t *ax, int n, bool positive) {
  Msg m = {.def = true, .positive = positive, .n = (uint8_t)n};
  memcpy(m.ax, ax, (size_t)n * sizeof *ax);
  return m;
}

static bool axes_eq(const Msg *a, const Msg *b) {
  return a->n == b->n && memcmp(a->ax, b->ax, a->n * sizeof a->ax[0]) == 0;
}

/* TVM's Intersect: an undefined side wins; axes intersected; positivity or'ed. */
static Msg msg_meet(Msg a, Msg b) {
  if (!a.def) return a;
  if (!b.def) return b;
  Msg r = {.def = true, .positive = a.positive || b.positive, .divides = a.divides || b.divides};
  for (int i = 0, j = 0; i < a.n && j < b.n;) {
    if (a.ax[i] < b.ax[j]) i++;
    else if (a.ax[i] > b.ax[j]) j++;
    else r.ax[r.n++] = a.ax[i], i++, j++;
  }
  return r;
}

/* Messages per node: PtrMap node -> index + 1 into msgs. */
typedef struct MsgTable {
  PtrMap at;
  VEC(Msg) msgs;
} MsgTable;

static Msg msg_get(const MsgTable *t, const Expr *e) {
  const int64_t *i = ptrmap_find(&t->at, e);
  return i ? t->msgs.data[*i - 1] : NO_MSG;
}

static void msg_set(MsgTable *t, const Expr *e, Msg m) {
  int64_t *i = ptrmap_slot(&t->at, e);
  if (*i) {
    t->msgs.data[*i - 1] = m;
    return;
  }
  vec_push(t->msgs, m);
  *ptrmap_slot(&t->at, e) = (int64_t)t->msgs.len;
}

/* Forward: a node's demand is the meet over its uses. */
static void msg_update(MsgTable *t, const Expr *e, Msg m) {
  const int64_t *i = ptrmap_find(&t->at, e);
  msg_set(t, e, i ? msg_meet(t->msgs.data[*i - 1], m) : m);
}

static void msg_table_free(MsgTable *t) {
  ptrmap_free(&t->at);
  vec_free(t->msgs);
}

/* ------------------------------------------------------------ operator roles */

typedef enum { R_NONE, R_RELU, R_ADDSUB, R_MUL, R_CONV, R_DENSE, R_BIAS } Role;

static Role role_of(const Expr *e) {
  if (e->kind != EXPR_CALL) return R_NONE;
  switch (op_call_id(e)) {
  case OP_NN_RELU:
  case OP_NN_LEAKY_RELU: return e->call.nargs == 1 ? R_RELU : R_NONE;
  case OP_ADD:
  case OP_SUBTRACT: return e->call.nargs == 2 ? R_ADDSUB : R_NONE;
  case OP_MULTIPLY: return e->call.nargs == 2 ? R_MUL : R_NONE;
  case OP_NN_CONV2D:
  case OP_NN_CONV3D: return e->call.nargs == 2 ? R_CONV : R_NONE;
  case OP_NN_DENSE: return e->call.nargs == 2 ? R_DENSE : R_NONE;
  case OP_NN_BIAS_ADD: return e->call.nargs == 2 ? R_BIAS : R_NONE;
  default: return R_NONE;
  }
}

/* ------------------------------------------------------------ types and shapes */

static bool dim_eq(const Dim *a, const Dim *b) {
  return a->kind == b->kind && a->kind != DIM_ANY && a->value == b->value;
}

static bool dim_is(const Dim *d, int64_t v) { return d->kind == DIM_INT && d->value == v; }

static Expr *call1(Module *m, const char *op, Expr *a, const char *attrs, Span sp) {
  return op_call(m, op, &a, 1, attrs, sp);
}

static Expr *call2(Module *m, const char *op, Expr *a, Expr *b, Span sp) {
  Expr *args[2] = {a, b};
  return op_call(m, op, args, 2, NULL, sp);
}

/* TVM's MatchBroadcastToLeftAxes: does `tr` (the scale's type) broadcast onto
 * `tl` so that it equals tl on the message's axes and is 1 elsewhere? When
 * `value` is given and the answer is yes, *value becomes the scale reduced to
 * the message's axes: squeeze of the unit dimensions, or for a rank-0 scale
 * expand_dims + repeat to the axes' extents. */
static bool match_axes(Module *m, const Type *tl, const Type *tr, const Msg *msg, Expr **value) {
  if (!tl || !tr || tl->tensor.ndim < tr->tensor.ndim) return false;
  uint32_t base = tl->tensor.ndim - tr->tensor.ndim;
  if (tr->tensor.ndim == 0 && value && msg->n > 0) {
    Expr *v = *value;
    Span sp = v->span;
    char a[96];
    for (int i = 0; i < msg->n; i++)
      if ((uint32_t)msg->ax[i] >= tl->tensor.ndim || tl->tensor.dims[msg->ax[i]].kind != DIM_INT) return false;
    snprintf(a, sizeof a, "axis=0, num_newaxis=%d", msg->n);
    v = call1(m, "expand_dims", v, a, sp);
    for (int i = 0; i < msg->n; i++) {
      snprintf(a, sizeof a, "repeats=%lld, axis=%d", (long long)tl->tensor.dims[msg->ax[i]].value, i);
      v = call1(m, "repeat", v, a, sp);
    }
    *value = v;
    return true;
  }
  int64_t sq[TENSOR_MAX_NDIM];
  int nsq = 0, j = 0;
  for (uint32_t i = 0; i < tl->tensor.ndim; i++) {
    if (j < msg->n && (int32_t)i == msg->ax[j]) {
      if (i < base || !dim_eq(&tl->tensor.dims[i], &tr->tensor.dims[i - base])) return false;
      j++;
    } else if (i >= base) {
      if (!dim_is(&tr->tensor.dims[i - base], 1)) return false;
      sq[nsq++] = (int64_t)(i - base);
    }
  }
  if (j < msg->n) return false; /* an axis past tl's rank (TVM does not check) */
  if (value && nsq > 0) {
    char a[1024], b[1000];
    snprintf(a, sizeof a, "axis=%s", cattr_format_ints(sq, nsq, b, sizeof b));
    *value = call1(m, "squeeze", *value, a, (*value)->span);
  }
  return true;
}

/* The constant under expand_dims, reshape, transpose, squeeze, repeat (the
 * operators that only move a scale's elements), or NULL. */
static const ConstTensor *peeled_const(const Expr *e) {
  for (;;) {
    int32_t id = op_call_id(e);
    if (id == OP_EXPAND_DIMS || id == OP_RESHAPE || id == OP_TRANSPOSE || id == OP_SQUEEZE || id == OP_REPEAT) {
      if (e->call.nargs < 1) return NULL;
      e = e->call.args[0];
      continue;
    }
    return e->kind == EXPR_CONST ? e->constant : NULL;
  }
}

/* Is `bad` true of some element of a float32/64 constant? (false for other
 * dtypes) */
static bool float_const_any(const ConstTensor *c, bool (*bad)(double)) {
  if (c->dtype.code != DT_FLOAT || c->dtype.lanes != 1 || (c->dtype.bits != 32 && c->dtype.bits != 64)) return false;
  uint64_t n = c->nbytes / (c->dtype.bits / 8);
  for (uint64_t i = 0; i < n; i++)
    if (bad(c->dtype.bits == 32 ? ((const float *)c->data)[i] : ((const double *)c->data)[i])) return true;
  return false;
}

static bool not_finite(double v) { return !isfinite(v); }
static bool zero_or_not_finite(double v) { return v == 0 || !isfinite(v); }

/* A scale another operand may be divided by: a float32/64 constant (seen as
 * peeled_const does) with every element finite and non-zero. */
static bool invertible_const(const Expr *e) {
  const ConstTensor *c = peeled_const(e);
  return c && c->dtype.code == DT_FLOAT && (c->dtype.bits == 32 || c->dtype.bits == 64) &&
         !float_const_any(c, zero_or_not_finite);
}

static bool all_nonnegative_const(const Expr *e);

/* May `sc` be moved as a scale under message `m`? An infinite or NaN element
 * of a constant never (inf * 0 and inf - inf make NaN on one side only);
 * across a relu a constant >= 0; across an add/subtract (forward) an
 * invertible constant. */
static bool scale_allowed(const Expr *sc, const Msg *m) {
  const ConstTensor *c = peeled_const(sc);
  if (c && float_const_any(c, not_finite)) return false;
  return (!m->positive || all_nonnegative_const(sc)) && (!m->divides || invertible_const(sc));
}

/* A conv/dense whose result has its operands' dtype (no out_dtype conversion). */
static bool same_dtypes(const Expr *call) {
  const Type *o = type_solved_tensor(call->type), *x = type_solved_tensor(call->call.args[0]->type), *w = type_solved_tensor(call->call.args[1]->type);
  return o && x && w && dtype_eq(o->tensor.dtype, x->tensor.dtype) && dtype_eq(o->tensor.dtype, w->tensor.dtype);
}

/* TVM's IsAllPositiveConstant: a constant (seen through expand_dims, reshape,
 * transpose, squeeze, repeat) of float32/64, int8/32, uint8/32 with every
 * element >= 0 (NaN passes, as in TVM). */
static bool all_nonnegative_const(const Expr *e) {
  const ConstTensor *c = peeled_const(e);
  if (!c) return false;
  DType dt = c->dtype;
  if (dt.lanes != 1) return false;
  uint64_t n = dt.bits ? c->nbytes / (dt.bits / 8) : 0;
#define ALL_GE0(T)                                                                                            \
  do {                                                                                                        \
    const T *p = c->data;                                                                                     \
    for (uint64_t i = 0; i < n; i++)                                                                          \
      if (p[i] < 0) return false;                                                                             \
    return true;                                                                                              \
  } while (0)
  if (dt.code == DT_FLOAT && dt.bits == 32) ALL_GE0(float);
  if (dt.code == DT_FLOAT && dt.bits == 64) ALL_GE0(double);
  if (dt.code == DT_INT && dt.bits == 8) ALL_GE0(int8_t);
  if (dt.code == DT_INT && dt.bits == 32) ALL_GE0(int32_t);
  if (dt.code == DT_UINT && (dt.bits == 8 || dt.bits == 32)) return true;
#undef ALL_GE0
  return false;
}

/* TVM's ExpandBiasToMatchAxis for one axis: expand_dims(s, axis=1,
 * num_newaxis=ndim-axis-1), or s itself when that is 0. */
static Expr *expand_to_axis(Module *m, Expr *s, int ndim, int axis) {
  int k = ndim - axis - 1;
  if (k <= 0) return s;
  char a[64];
  snprintf(a, sizeof a, "axis=1, num_newaxis=%d", k);
  return call1(m, "expand_dims", s, a, s->span);
}

/* TVM's ReshapeToMatchAxis: reshape(s, [t's extent on the axes, 1 elsewhere]);
 * NULL when an extent there is not static. */
static Expr *reshape_to_axes(Module *m, Expr *s, const Type *t, const int32_t *ax, int n) {
  if (!t) return NULL;
  int64_t shape[TENSOR_MAX_NDIM];
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    shape[i] = 1;
    for (int k = 0; k < n; k++)
      if (ax[k] == (int32_t)i) {
        if (t->tensor.dims[i].kind != DIM_INT) return NULL;
        shape[i] = t->tensor.dims[i].value;
      }
  }
  char a[2048], b[2000];
  snprintf(a, sizeof a, "newshape=%s", cattr_format_ints(shape, (int)t->tensor.ndim, b, sizeof b));
  return call1(m, "reshape", s, a, s->span);
}

/* One axis: expand_dims; several (blocked layouts): reshape. */
static Expr *reshape_or_expand(Module *m, Expr *s, const Type *t, const Msg *msg) {
  if (!t) return NULL;
  if (msg->n > 1) return reshape_to_axes(m, s, t, msg->ax, msg->n);
  return expand_to_axis(m, s, (int)t->tensor.ndim, msg->ax[0]);
}

/* A new call of old's operator with old's attributes and these arguments
 * (its own callee node: a callee is typed once). */
static Expr *remake(Module *m, const Expr *old, Expr **args) {
  Expr *e = build_copy(m, old);
  e->call.fn = build_copy(m, old->call.fn);
  e->call.args = arena_memdup(m->arena, args, old->call.nargs * sizeof *args);
  return e;
}

/* ------------------------------------------------------------ convolutions */

typedef struct ConvInfo {
  int32_t c_big, c_small;  /* channel axes of the data (forward) / output (backward) layout */
  int32_t ko, ko_small, ki, ki_small; /* kernel layout axes (-1: absent) */
  int kndim;
  bool depthwise, blocked;
} ConvInfo;

/* TVM's ConvForwardPrep / ConvBackwardPrep conditions: groups 1 or depthwise,
 * kernel and data layouts both simple or both blocked in o, i and c. */
static bool conv_info(const Expr *call, bool backward, ConvInfo *ci) {
  bool c3 = op_call_id(call) == OP_NN_CONV3D;
  const char *dl = cattr_str(call, "data_layout", c3 ? "NCDHW" : "NCHW");
  const char *kl = cattr_str(call, "kernel_layout", c3 ? "OIDHW" : "OIHW");
  const char *ol = cattr_str(call, "out_layout", "");
  Layout d, k;
  if (!layout_parse(backward && *ol ? ol : dl, &d) || !layout_parse(kl, &k)) return false;
  ci->c_big = layout_find(&d, 'C');
  ci->c_small = layout_find(&d, 'c');
  ci->ko = layout_find(&k, 'O');
  ci->ki = layout_find(&k, 'I');
  ci->ko_small = layout_find(&k, 'o');
  ci->ki_small = layout_find(&k, 'i');
  ci->kndim = k.n;
  if (ci->c_big < 0 || ci->ko < 0 || ci->ki < 0) return false;
  if (ci->c_small >= 0 && ci->c_small < ci->c_big) return false;
  bool simple = ci->ko_small < 0 && ci->ki_small < 0 && ci->c_small < 0;
  ci->blocked = ci->ko_small >= 0 && ci->ki_small >= 0 && ci->c_small >= 0;
  if (!simple && !ci->blocked) return false;
  /* depthwise: the weight as OIHW has O = groups and I = 1 */
  int64_t groups = cattr_int(call, "groups", 1);
  const Type *w = type_solved_tensor(call->call.args[1]->type);
  ci->depthwise = false;
  if (w && (int)w->tensor.ndim == k.n) {
    int64_t ext[2] = {1, 1};
    bool known = true;
    const int32_t axes[4] = {ci->ko, ci->ko_small, ci->ki, ci->ki_small};
    for (int a = 0; a < 4; a++) {
      if (axes[a] < 0) continue;
      const Dim *dd = &w->tensor.dims[axes[a]];
      if (dd->kind != DIM_INT) known = false;
      else ext[a / 2] *= dd->value;
    }
    ci->depthwise = known && ext[0] == groups && ext[1] == 1;
  }
  return groups == 1 || ci->depthwise;
}

static Msg conv_msg(const ConvInfo *ci) {
  int32_t ax[2] = {ci->c_big, ci->c_small};
  return msg_make(ax, ci->c_small >= 0 ? 2 : 1, false);
}

/* The weight times the scale laid onto the kernel's O (out) or I (in) axes. */
static Expr *scale_weight(Module *m, const ConvInfo *ci, Expr *weight, const Type *wt, Expr *scale, bool out_axes) {
  int32_t big = out_axes ? ci->ko : ci->ki, small = out_axes ? ci->ko_small : ci->ki_small;
  Expr *s;
  if (!ci->blocked) {
    s = expand_to_axis(m, scale, ci->kndim, big);
  } else {
    int32_t ax[2] = {big, small};
    s = reshape_to_axes(m, scale, wt, ax, 2);
    if (!s) return NULL;
  }
  return call2(m, "multiply", weight, s, weight->span);
}

static bool dense_rank2(const Expr *call, bool output) {
  const Type *t = type_solved_tensor(output ? call->type : call->call.args[0]->type);
  return t && t->tensor.ndim == 2;
}

/* ------------------------------------------------------------ forward */

typedef struct Scaled {
  Expr *value; /* the rewritten expression before scaling */
  Expr *scale;
  Msg axes;
} Scaled;

typedef struct Fwd {
  MsgTable demand;
  PtrMap scaled;  /* original node -> index + 1 into sc */
  VEC(Scaled) sc;
  bool abort;     /* a scale reached a use that cannot take it: keep the function */
} Fwd;

static const Scaled *scaled_of(const Fwd *f, const Expr *e) {
  const int64_t *i = ptrmap_find(&f->scaled, e);
  return i ? &f->sc.data[*i - 1] : NULL;
}

static void set_scaled(Fwd *f, const Expr *old, Scaled s) {
  vec_push(f->sc, s);
  *ptrmap_slot(&f->scaled, old) = (int64_t)f->sc.len;
}

/* The demands a call with this role sends to its arguments. */
static void forward_prep(const Expr *call, Msg out, Msg *in) {
  in[0] = in[1] = NO_MSG;
  switch (role_of(call)) {
  case R_RELU:
    if (out.def) in[0] = out, in[0].positive = true;
    break;
  case R_ADDSUB:
    if (out.def) {
      const Type *tl = type_solved_tensor(call->call.args[0]->type), *tr = type_solved_tensor(call->call.args[1]->type);
      out.divides = true;
      if (match_axes(NULL, tl, tr, &out, NULL)) in[0] = out;
      else if (match_axes(NULL, tr, tl, &out, NULL)) in[1] = out;
    }
    break;
  case R_CONV: {
    ConvInfo ci;
    if (same_dtypes(call) && conv_info(call, false, &ci)) in[0] = conv_msg(&ci);
    break;
  }
  case R_DENSE:
    if (same_dtypes(call) && dense_rank2(call, false)) in[0] = msg_make((int32_t[]){1}, 1, false);
    break;
  default: break;
  }
}

/* Demands, consumers first (reverse post order: every use of a node is seen
 * before the node). Returns whether any node got a demand (TVM rewrites the
 * function then, which also folds projections of tuple literals). */
static bool forward_demands(Fwd *f, Expr *body) {
  DagScan s;
  dag_scan(&s, body);
  msg_update(&f->demand, body, NO_MSG);
  bool any = false;
  for (uint32_t i = s.n; i-- > 0;) {
    Expr *e = dag_node(&s, i);
    Role r = role_of(e);
    Msg in[2] = {NO_MSG, NO_MSG};
    bool understood = r == R_RELU || r == R_ADDSUB || r == R_CONV || r == R_DENSE;
    if (understood) forward_prep(e, msg_get(&f->demand, e), in);
    Expr *c;
    for (uint32_t k = 0; (c = dag_child(e, k)); k++)
      msg_update(&f->demand, c, understood && k >= 1 && k <= 2 ? in[k - 1] : NO_MSG);
  }
  dag_free(&s);
  for (size_t i = 0; i < f->demand.msgs.len && !any; i++) any = f->demand.msgs.data[i].def;
  return any;
}

/* Could dropping e change what the program does (a reference operation, a
 * call of a function or of a stateful operator)? */
static bool has_effect(const Expr *e, void *ud) {
  (void)ud;
  if (e->kind == EXPR_REF_NEW || e->kind == EXPR_REF_READ || e->kind == EXPR_REF_WRITE) return true;
  if (e->kind != EXPR_CALL) return false;
  if (e->call.fn->kind == EXPR_CTOR) return false;
  return e->call.fn->kind != EXPR_OP || op_is_stateful(e->call.fn->op.id);
}

static Expr *forward_post(Rewriter *rw, Expr *old, Expr *e) {
  Fwd *f = rw->ud;
  Module *m = rw->m;
  if (f->abort) return e;
  /* TVM's forward rewriter folds (a, b, ...).i to the field (kept when a
   * dropped field has an effect, which TVM would lose) */
  if (e->kind == EXPR_PROJ && e->proj.tuple->kind == EXPR_TUPLE && e->proj.index < e->proj.tuple->tuple.n) {
    const Expr *t = e->proj.tuple;
    bool pure = true;
    for (uint32_t i = 0; i < t->tuple.n && pure; i++)
      pure = i == e->proj.index || !dag_any(t->tuple.fields[i], has_effect, NULL);
    if (pure) return t->tuple.fields[e->proj.index];
  }
  Role r = role_of(old);
  const Scaled *s0 = r != R_NONE ? scaled_of(f, old->call.args[0]) : NULL;
  const Scaled *s1 = r != R_NONE && old->call.nargs > 1 ? scaled_of(f, old->call.args[1]) : NULL;
  switch (r) {
  case R_RELU:
    if (!s0) break;
    set_scaled(f, old, (Scaled){e, s0->scale, s0->axes});
    return e;
  case R_ADDSUB: {
    if (!s0 && !s1) break;
    if (s0 && s1) goto abort;
    const Type *tl = type_solved_tensor(old->call.args[0]->type), *tr = type_solved_tensor(old->call.args[1]->type);
    const Scaled *s = s0 ? s0 : s1;
    if (!match_axes(NULL, s0 ? tl : tr, s0 ? tr : tl, &s->axes, NULL)) goto abort;
    Expr *sc = reshape_or_expand(m, s->scale, s0 ? tl : tr, &s->axes);
    if (!sc) goto abort;
    Expr *args[2];
    args[s0 ? 0 : 1] = s->value;
    args[s0 ? 1 : 0] = call2(m, "divide", e->call.args[s0 ? 1 : 0], sc, old->span);
    Expr *v = remake(m, old, args);
    set_scaled(f, old, (Scaled){v, s->scale, s->axes});
    return v;
  }
  case R_MUL: {
    if (s0 || s1) goto abort;
    Msg want = msg_get(&f->demand, old);
    if (!want.def || want.n == 0) break;
    const Type *tl = type_solved_tensor(old->call.args[0]->type), *tr = type_solved_tensor(old->call.args[1]->type);
    for (int side = 0; side < 2; side++) {
      Expr *sc = e->call.args[1 - side];
      if (match_axes(m, side ? tr : tl, side ? tl : tr, &want, &sc) && scale_allowed(sc, &want)) {
        set_scaled(f, old, (Scaled){e->call.args[side], sc, want});
        return e->call.args[side];
      }
    }
    break;
  }
  case R_CONV: {
    if (!s0) break;
    ConvInfo ci;
    if (s1 || !conv_info(old, false, &ci)) goto abort;
    Expr *w = scale_weight(m, &ci, e->call.args[1], type_solved_tensor(old->call.args[1]->type), s0->scale, ci.depthwise);
    if (!w) goto abort;
    return remake(m, old, (Expr *[]){s0->value, w});
  }
  case R_DENSE: {
    if (!s0) break;
    if (s1) goto abort;
    Expr *w = call2(m, "multiply", e->call.args[1], s0->scale, old->span);
    return remake(m, old, (Expr *[]){s0->value, w});
  }
  default: break;
  }
  /* not consumed: a scaled child here would lose its scale */
  Expr *c;
  for (uint32_t k = 0; (c = dag_child(old, k)); k++)
    if (scaled_of(f, c)) goto abort;
  return e;
abort:
  f->abort = true;
  return e;
}

static bool forward_global(PassCtx *c, GlobalDef *g) {
  Fwd f = {0};
  bool ok = true;
  if (forward_demands(&f, g->fn->body)) {
    Rewriter rw;
    rw_init(&rw, c->m, c->d);
    rw.post = forward_post;
    rw.ud = &f;
    Expr *body = rw_expr(&rw, g->fn->body);
    ok = !rw.failed;
    if (ok && !f.abort && !scaled_of(&f, g->fn->body) && body != g->fn->body) {
      g->fn->body = body;
      g->fn->type = NULL;
    }
    rw_fini(&rw);
  }
  msg_table_free(&f.demand);
  ptrmap_free(&f.scaled);
  vec_free(f.sc);
  return ok;
}

bool pass_FORWARD_FOLD_SCALE_AXIS(PassCtx *c); /* the entry point passes.def names */
bool pass_FORWARD_FOLD_SCALE_AXIS(PassCtx *c) { return pass_for_each_function(c, forward_global); }

/* ------------------------------------------------------------ backward */

typedef struct Bwd {
  MsgTable offer;
  PtrMap uses;  /* node -> number of references */
  Rewriter *rw;
  Diag *d;
  bool abort;
  bool deep;    /* nesting too deep (reported) */
} Bwd;

static Msg backward_prep(const Bwd *b, const Expr *call) {
  Msg in0 = msg_get(&b->offer, call->call.args[0]);
  Msg in1 = call->call.nargs > 1 ? msg_get(&b->offer, call->call.args[1]) : NO_MSG;
  switch (role_of(call)) {
  case R_RELU: return in0.def ? msg_make(in0.ax, in0.n, true) : NO_MSG;
  case R_ADDSUB: {
    const Type *tl = type_solved_tensor(call->call.args[0]->type), *tr = type_solved_tensor(call->call.args[1]->type);
    if (!tl || !tr) return NO_MSG;
    if (in0.def && match_axes(NULL, tl, tr, &in0, NULL)) return in0;
    if (in1.def && match_axes(NULL, tr, tl, &in1, NULL)) return in1;
    if (in0.def && in1.def && axes_eq(&in0, &in1) && tl->tensor.ndim == tr->tensor.ndim) {
      for (uint32_t i = 0; i < tl->tensor.ndim; i++)
        if (!dim_eq(&tl->tensor.dims[i], &tr->tensor.dims[i])) return NO_MSG;
      in0.positive = in0.positive || in1.positive;
      return in0;
    }
    return NO_MSG;
  }
  case R_CONV: {
    ConvInfo ci;
    return same_dtypes(call) && conv_info(call, true, &ci) ? conv_msg(&ci) : NO_MSG;
  }
  case R_DENSE: return same_dtypes(call) && dense_rank2(call, true) ? msg_make((int32_t[]){1}, 1, false) : NO_MSG;
  case R_BIAS:
    return in0.def && in0.n == 1 && cattr_int(call, "axis", 1) == in0.ax[0] ? in0 : NO_MSG;
  default: return NO_MSG;
  }
}

/* Offers, producers first. Returns whether some multiply consumes one. */
static bool backward_offers(Bwd *b, Expr *body) {
  DagScan s;
  dag_scan(&s, body);
  *ptrmap_slot(&b->uses, body) += 1;
  for (uint32_t i = 0; i < s.n; i++) {
    Expr *c, *e = dag_node(&s, i);
    for (uint32_t k = 0; (c = dag_child(e, k)); k++) *ptrmap_slot(&b->uses, c) += 1;
  }
  bool any = false;
  for (uint32_t i = 0; i < s.n; i++) {
    Expr *e = dag_node(&s, i);
    Role r = role_of(e);
    if (r == R_MUL) {
      any = any || msg_get(&b->offer, e->call.args[0]).def || msg_get(&b->offer, e->call.args[1]).def;
      continue;
    }
    if (r == R_NONE) continue;
    int64_t n = 0;
    ptrmap_get(&b->uses, e, &n);
    if (n != 1) continue; /* the scale may be pushed back only through a node used once */
    Msg out = backward_prep(b, e);
    if (out.def) msg_set(&b->offer, e, out);
  }
  dag_free(&s);
  return any;
}

/* x (an original node carrying an offer) rebuilt with `scale` on the offered
 * axes pushed into it; NULL (and b->abort) when that cannot be done. */
static Expr *push_scale(Bwd *b, Expr *x, const Msg *msg, Expr *scale) {
  Module *m = b->rw->m;
  if (stack_exhausted()) {
    if (!b->deep) diag_error(b->d, x->span, "expression nested too deeply");
    b->deep = true;
    return NULL;
  }
  Msg own = msg_get(&b->offer, x);
  if (!own.def) return NULL;
  Expr **a = x->kind == EXPR_CALL ? x->call.args : NULL;
  switch (role_of(x)) {
  case R_RELU: {
    Expr *in = push_scale(b, a[0], msg, scale);
    return in ? remake(m, x, &in) : NULL;
  }
  case R_ADDSUB: {
    Msg lm = msg_get(&b->offer, a[0]), rm = msg_get(&b->offer, a[1]);
    Expr *args[2];
    if (lm.def && rm.def) {
      if (!axes_eq(&lm, &rm) || !axes_eq(msg, &lm)) return NULL;
      if (!(args[0] = push_scale(b, a[0], msg, scale)) || !(args[1] = push_scale(b, a[1], msg, scale))) return NULL;
      return remake(m, x, args);
    }
    if (!lm.def && !rm.def) return NULL;
    int side = lm.def ? 0 : 1;
    if (!axes_eq(msg, side ? &rm : &lm)) return NULL;
    Expr *sc = reshape_or_expand(m, scale, type_solved_tensor(a[side]->type), msg);
    if (!sc || !(args[side] = push_scale(b, a[side], msg, scale))) return NULL;
    args[1 - side] = call2(m, "multiply", rw_expr(b->rw, a[1 - side]), sc, x->span);
    return remake(m, x, args);
  }
  case R_BIAS: {
    Msg lm = msg_get(&b->offer, a[0]);
    if (!lm.def || !axes_eq(msg, &lm)) return NULL;
    Expr *args[2] = {push_scale(b, a[0], msg, scale), NULL};
    if (!args[0]) return NULL;
    args[1] = call2(m, "multiply", rw_expr(b->rw, a[1]), scale, x->span);
    return remake(m, x, args);
  }
  case R_CONV: {
    ConvInfo ci;
    if (!conv_info(x, true, &ci)) return NULL;
    Expr *w = scale_weight(m, &ci, rw_expr(b->rw, a[1]), type_solved_tensor(a[1]->type), scale, true);
    return w ? remake(m, x, (Expr *[]){rw_expr(b->rw, a[0]), w}) : NULL;
  }
  case R_DENSE: {
    Expr *w = call2(m, "multiply", rw_expr(b->rw, a[1]), expand_to_axis(m, scale, 2, 0), x->span);
    return remake(m, x, (Expr *[]){rw_expr(b->rw, a[0]), w});
  }
  default: return NULL;
  }
}

static Expr *backward_post(Rewriter *rw, Expr *old, Expr *e) {
  Bwd *b = rw->ud;
  if (b->abort || b->deep || role_of(old) != R_MUL) return e;
  Expr **a = old->call.args;
  const Type *tl = type_solved_tensor(a[0]->type), *tr = type_solved_tensor(a[1]->type);
  Msg lm = msg_get(&b->offer, a[0]), rm = msg_get(&b->offer, a[1]);
  /* the scale is the original operand: nothing inside it can be folded */
  if (lm.def) {
    Expr *sc = a[1];
    if (lm.n > 0 && match_axes(rw->m, tl, tr, &lm, &sc) && scale_allowed(sc, &lm)) {
      Expr *r = push_scale(b, a[0], &lm, sc);
      if (!r) b->abort = true;
      return r ? r : e;
    }
  } else if (rm.def) {
    Expr *sc = a[0];
    if (rm.n > 0 && match_axes(rw->m, tr, tl, &rm, &sc) && scale_allowed(sc, &rm)) {
      Expr *r = push_scale(b, a[1], &rm, sc);
      if (!r) b->abort = true;
      return r ? r : e;
    }
  }
  return e;
}

static bool backward_global(PassCtx *c, GlobalDef *g) {
  Bwd b = {.d = c->d};
  bool ok = true;
  if (backward_offers(&b, g->fn->body)) {
    Rewriter rw;
    rw_init(&rw, c->m, c->d);
    rw.post = backward_post;
    rw.ud = &b;
    b.rw = &rw;
    Expr *body = rw_expr(&rw, g->fn->body);
    ok = !rw.failed && !b.deep;
    if (ok && !b.abort && body != g->fn->body) {
      g->fn->body = body;
      g->fn->type = NULL;
    }
    rw_fini(&rw);
  }
  msg_table_free(&b.offer);
  ptrmap_free(&b.uses);
  return ok;
}

bool pass_BACKWARD_FOLD_SCALE_AXIS(PassCtx *c); /* the entry point passes.def names */
bool pass_BACKWARD_FOLD_SCALE_AXIS(PassCtx *c) { return pass_for_each_function(c, backward_global); }

/* ------------------------------------------------------------ the sequence */

/* Backward, Forward, FoldConstant; like any TVM sequence, a member runs only
 * when its level (3, 3, 2) is at most the pipeline's opt level (2 when the
 * pass is run directly, as TVM's default PassContext). */
bool pass_FOLD_SCALE_AXIS(PassCtx *c); /* the entry point passes.def names */
bool pass_FOLD_SCALE_AXIS(PassCtx *c) {
  static const int seq[] = {PASS_BACKWARD_FOLD_SCALE_AXIS, PASS_FORWARD_FOLD_SCALE_AXIS, PASS_FOLD_CONSTANT};
  for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
    if (pass_get(seq[i])->level > c->opt_level) continue;
    if (!pass_run_nested(c, seq[i])) return false;
  }
  return true;
}
