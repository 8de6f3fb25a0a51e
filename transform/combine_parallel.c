/* transform/combine_parallel.c — CombineParallelConv2D, CombineParallelDense,
 * CombineParallelBatchMatmul (spec/passes.md §5).
 *
 * One framework, three operators. A *branch* starts at a call of the target
 * operator and follows its consumer while the current node has exactly one
 * consumer that is an elementwise or broadcast operator (pattern class E or
 * B, ops/op_traits.h). Branches whose first calls take the very same data
 * node and are pairwise combinable form a group (in order of appearance);
 * a group of at least min_num_branches is replaced by ONE call on the joined
 * weights, then, depth by depth while every branch has the same operator,
 * attributes, argument count and chain position and compatible other
 * arguments, one call of that operator on the joined arguments; each
 * branch's last combined node becomes a slice of the result. What differs
 * between the three passes — what is combinable, how weights and following
 * arguments are joined, how results are sliced — is a small Combiner table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/walk.h"
#include "ops/layout.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "transform/dagscan.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef VEC(Expr *) ExprList;

typedef struct Branch {
  ExprList nodes; /* nodes[0] the target call, then the chained consumers */
} Branch;

typedef struct Cb Cb;

/* What differs between the three passes. */
typedef struct Combiner {
  int32_t op;
  const char *pass;
  bool (*candidate)(Cb *cb, const Expr *call);
  bool (*combinable)(Cb *cb, const Expr *a, const Expr *b);
  Expr *(*combine)(Cb *cb, Branch *bs, uint32_t n);
  /* may the other argument `arg` of branch i at depth d be joined? */
  bool (*arg_ok)(Cb *cb, Branch *bs, uint32_t n, uint32_t depth, uint32_t argpos);
  Expr *(*join_args)(Cb *cb, Branch *bs, uint32_t n, uint32_t depth, uint32_t argpos);
  Expr *(*slice)(Cb *cb, Expr *combined, Branch *bs, uint32_t n, uint32_t i);
} Combiner;

struct Cb {
  Module *m;
  const Combiner *k;
  bool to_batch;
  int64_t min_branches;
  PtrMap consumers; /* Expr* -> count of dataflow consumers */
  PtrMap single;    /* Expr* -> its consumer, when there is exactly one */
  PtrMap replace;   /* last combined node -> its slice */
  Expr *split_of;   /* to_batch: the combined result `split` was made for ... */
  Expr *split;      /* ... and that one split call, shared by every branch (as in TVM) */
  uint32_t last;    /* the depth of the last combined node of the group being sliced */
  Span sp;
};

/* ------------------------------------------------------------- utilities */

static char *fmt(Module *m, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *fmt(Module *m, const char *f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return arena_strdup(m->arena, buf);
}

static char *ints(Module *m, const int64_t *v, uint32_t n) {
  char buf[512];
  size_t k = 0;
  buf[k++] = '[';
  for (uint32_t i = 0; i < n && k < sizeof buf - 32; i++)
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%lld", i ? ", " : "", (long long)v[i]);
  buf[k++] = ']';
  buf[k] = 0;
  return arena_strdup(m->arena, buf);
}

static const Type *tensor_of(const Expr *e) {
  return e->type && e->type->kind == TYPE_TENSOR ? e->type : NULL;
}

static bool static_dims(const Type *t) {
  if (!t) return false;
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    if (t->tensor.dims[i].kind != DIM_INT) return false;
  return true;
}

static int64_t dim(const Expr *e, int32_t i) {
  const Type *t = tensor_of(e);
  if (i < 0) i += (int32_t)t->tensor.ndim;
  return t->tensor.dims[i].value;
}

static bool same_attr(const Expr *a, const Expr *b, const char *key) {
  return attr_value_equal(attrs_get(a->call.attrs, key), attrs_get(b->call.attrs, key));
}

static bool same_attrs(const Expr *a, const Expr *b) {
  uint32_t na = a->call.attrs ? a->call.attrs->n : 0, nb = b->call.attrs ? b->call.attrs->n : 0;
  if (na != nb) return false;
  for (uint32_t i = 0; i < na; i++)
    if (strcmp(a->call.attrs->items[i].key, b->call.attrs->items[i].key) != 0 ||
        !attr_value_equal(a->call.attrs->items[i].value, b->call.attrs->items[i].value))
      return false;
  return true;
}

static const char *attr_str(const Expr *call, const char *key, const char *dflt) {
  const AttrValue *v = attrs_get(call->call.attrs, key);
  return v && v->kind == AV_STRING ? v->s.chars : dflt;
}

static Expr *tuple_of(Cb *cb, Expr **xs, uint32_t n) { return build_tuple(cb->m, xs, n, cb->sp); }

/* The argument of node d of each branch at position p, as a tuple. */
static Expr *args_at(Cb *cb, Branch *bs, uint32_t n, uint32_t d, uint32_t p) {
  Expr **xs = arena_alloc(cb->m->arena, n * sizeof *xs);
  for (uint32_t i = 0; i < n; i++) xs[i] = bs[i].nodes.data[d]->call.args[p];
  return tuple_of(cb, xs, n);
}

/* --------------------------------------------------------------- conv2d */

static int32_t out_channel_axis(const Expr *conv) {
  const char *ol = attr_str(conv, "out_layout", "");
  Layout l;
  if (!layout_parse(ol[0] ? ol : attr_str(conv, "data_layout", "NCHW"), &l)) return -1;
  return layout_find(&l, 'C');
}

static bool conv_candidate(Cb *cb, const Expr *e) {
  const AttrValue *g = attrs_get(e->call.attrs, "groups");
  Layout kl;
  return (!g || (g->kind == AV_INT && g->i.value == 1)) && static_dims(tensor_of(e->call.args[1])) &&
         tensor_of(e) && out_channel_axis(e) >= 0 && layout_parse(attr_str(e, "kernel_layout", "OIHW"), &kl) &&
         !layout_has_split(&kl);
}

static bool conv_combinable(Cb *cb, const Expr *a, const Expr *b) {
  static const char *const keys[] = {"strides", "padding", "dilation", "groups", "data_layout",
                                     "kernel_layout", "out_layout", "out_dtype"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    if (!same_attr(a, b, keys[i])) return false;
  Layout kl;
  layout_parse(attr_str(a, "kernel_layout", "OIHW"), &kl);
  int32_t h = layout_find(&kl, 'H'), w = layout_find(&kl, 'W');
  return h >= 0 && w >= 0 && dim(a->call.args[1], h) == dim(b->call.args[1], h) &&
         dim(a->call.args[1], w) == dim(b->call.args[1], w);
}

static int64_t conv_channels(const Expr *conv) {
  Layout kl;
  layout_parse(attr_str(conv, "kernel_layout", "OIHW"), &kl);
  return dim(conv->call.args[1], layout_find(&kl, 'O'));
}

static Expr *conv_combine(Cb *cb, Branch *bs, uint32_t n) {
  Expr *first = bs[0].nodes.data[0];
  Layout kl;
  layout_parse(attr_str(first, "kernel_layout", "OIHW"), &kl);
  int64_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += conv_channels(bs[i].nodes.data[0]);
  Expr *w = op_call(cb->m, "concatenate", (Expr *[]){args_at(cb, bs, n, 0, 1)}, 1,
                    fmt(cb->m, "axis=%d", layout_find(&kl, 'O')), cb->sp);
  Attrs *a = attrs_with(cb->m, first->call.attrs, "channels", attr_int(cb->m, total));
  return op_call_attrs(cb->m, "nn.conv2d", (Expr *[]){first->call.args[0], w}, 2, a, cb->sp);
}

/* a following argument: channel dim (aligned right) = the branch's channels, other dims equal */
static bool conv_arg_ok(Cb *cb, Branch *bs, uint32_t n, uint32_t d, uint32_t p) {
  Expr *conv0 = bs[0].nodes.data[0];
  int32_t cax = out_channel_axis(conv0);
  uint32_t out_rank = tensor_of(conv0)->tensor.ndim;
  const Type *t0 = tensor_of(bs[0].nodes.data[d]->call.args[p]);
  if (!static_dims(t0)) return false;
  int32_t c = cax - (int32_t)(out_rank - t0->tensor.ndim);
  if (c < 0) return false;
  for (uint32_t i = 0; i < n; i++) {
    const Type *t = tensor_of(bs[i].nodes.data[d]->call.args[p]);
    if (!static_dims(t) || t->tensor.ndim != t0->tensor.ndim || !dtype_eq(t->tensor.dtype, t0->tensor.dtype))
      return false;
    for (uint32_t k = 0; k < t->tensor.ndim; k++) {
      int64_t want = (int32_t)k == c ? conv_channels(bs[i].nodes.data[0]) : t0->tensor.dims[k].value;
      if (t->tensor.dims[k].value != want) return false;
    }
  }
  return true;
}

static Expr *conv_join_args(Cb *cb, Branch *bs, uint32_t n, uint32_t d, uint32_t p) {
  Expr *conv0 = bs[0].nodes.data[0];
  uint32_t out_rank = tensor_of(conv0)->tensor.ndim;
  int32_t c = out_channel_axis(conv0) - (int32_t)(out_rank - tensor_of(bs[0].nodes.data[d]->call.args[p])->tensor.ndim);
  return op_call(cb->m, "concatenate", (Expr *[]){args_at(cb, bs, n, d, p)}, 1, fmt(cb->m, "axis=%d", c), cb->sp);
}

static Expr *conv_slice(Cb *cb, Expr *y, Branch *bs, uint32_t n, uint32_t i) {
  int32_t cax = out_channel_axis(bs[0].nodes.data[0]);
  int64_t off = 0;
  for (uint32_t k = 0; k < i; k++) off += conv_channels(bs[k].nodes.data[0]);
  int64_t begin[TENSOR_MAX_NDIM], end[TENSOR_MAX_NDIM], strides[TENSOR_MAX_NDIM];
  for (int32_t k = 0; k <= cax; k++) {
    begin[k] = k == cax ? off : 0;
    end[k] = k == cax ? conv_channels(bs[i].nodes.data[0]) : -1;
    strides[k] = 1;
  }
  Module *m = cb->m;
  return op_call(m, "strided_slice", &y, 1,
                 fmt(m, "begin=%s, end=%s, strides=%s, slice_mode=\"size\"", ints(m, begin, (uint32_t)cax + 1),
                     ints(m, end, (uint32_t)cax + 1), ints(m, strides, (uint32_t)cax + 1)),
                 cb->sp);
}

/* ---------------------------------------------------------------- dense */

static bool dense_candidate(Cb *cb, const Expr *e) {
  return static_dims(tensor_of(e->call.args[1])) && static_dims(tensor_of(e)) && tensor_of(e->call.args[1])->tensor.ndim == 2;
}

static bool dense_combinable(Cb *cb, const Expr *a, const Expr *b) {
  if (!same_attr(a, b, "out_dtype")) return false;
  if (cb->to_batch)
    return dim(a->call.args[1], 0) == dim(b->call.args[1], 0) && dim(a->call.args[1], 1) == dim(b->call.args[1], 1);
  return dim(a->call.args[1], 1) == dim(b->call.args[1], 1);
}

static int64_t dense_units(const Expr *d) { return dim(d->call.args[1], 0); }

static Expr *dense_combine(Cb *cb, Branch *bs, uint32_t n) {
  Module *m = cb->m;
  Expr *first = bs[0].nodes.data[0];
  const AttrValue *od = attrs_get(first->call.attrs, "out_dtype");
  const char *odt = od && od->kind == AV_STRING ? od->s.chars : "";
  if (cb->to_batch) {
    Expr **xs = arena_alloc(m->arena, n * sizeof *xs);
    for (uint32_t i = 0; i < n; i++) xs[i] = first->call.args[0];
    Expr *x = op_call(m, "stack", (Expr *[]){tuple_of(cb, xs, n)}, 1, "axis=0", cb->sp);
    Expr *w = op_call(m, "stack", (Expr *[]){args_at(cb, bs, n, 0, 1)}, 1, "axis=0", cb->sp);
    return op_call(m, "nn.batch_matmul", (Expr *[]){x, w}, 2, fmt(m, "out_dtype=\"%s\", transpose_b=True", odt), cb->sp);
  }
  int64_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += dense_units(bs[i].nodes.data[0]);
  Expr *w = op_call(m, "concatenate", (Expr *[]){args_at(cb, bs, n, 0, 1)}, 1, "axis=0", cb->sp);
  return op_call(m, "nn.dense", (Expr *[]){first->call.args[0], w}, 2,
                 fmt(m, "units=%lld, out_dtype=\"%s\"", (long long)total, odt), cb->sp);
}

/* TVM's IsArgCompatible: equal dtype and rank; to_batch: equal shapes; else
 * equal dims but the last, and no higher rank than the node's own result. */
static bool dense_arg_ok(Cb *cb, Branch *bs, uint32_t n, uint32_t d, uint32_t p) {
  const Type *t0 = tensor_of(bs[0].nodes.data[d]->call.args[p]);
  if (!static_dims(t0)) return false;
  for (uint32_t i = 0; i < n; i++) {
    const Type *t = tensor_of(bs[i].nodes.data[d]->call.args[p]), *out = tensor_of(bs[i].nodes.data[d]);
    if (!static_dims(t) || !out || t->tensor.ndim != t0->tensor.ndim || !dtype_eq(t->tensor.dtype, t0->tensor.dtype))
      return false;
    if (!cb->to_batch && out->tensor.ndim < t->tensor.ndim) return false;
    uint32_t check = cb->to_batch ? t->tensor.ndim : (t->tensor.ndim ? t->tensor.ndim - 1 : 0);
    for (uint32_t k = 0; k < check; k++)
      if (t->tensor.dims[k].value != t0->tensor.dims[k].value) return false;
  }
  return true;
}

static Expr *dense_join_args(Cb *cb, Branch *bs, uint32_t n, uint32_t d, uint32_t p) {
  Module *m = cb->m;
  Expr **xs = arena_alloc(m->arena, n * sizeof *xs);
  for (uint32_t i = 0; i < n; i++) {
    Expr *a = bs[i].nodes.data[d]->call.args[p];
    const Type *t = tensor_of(a);
    if (cb->to_batch) {
      xs[i] = t->tensor.ndim == 1 ? op_call(m, "expand_dims", &a, 1, "axis=0", cb->sp) : a;
    } else {
      /* as TVM: repeated to the previous node's last extent, on the argument's
       * own last axis (0 for a scalar, first expanded to rank 1) */
      int64_t out_dim = dim(bs[i].nodes.data[d - 1], -1);
      if (t->tensor.ndim == 0) {
        a = op_call(m, "expand_dims", &a, 1, "axis=-1", cb->sp);
        a = op_call(m, "repeat", &a, 1, fmt(m, "repeats=%lld, axis=0", (long long)out_dim), cb->sp);
      } else if (t->tensor.dims[t->tensor.ndim - 1].value == 1 && out_dim > 1) {
        a = op_call(m, "repeat", &a, 1, fmt(m, "repeats=%lld, axis=%u", (long long)out_dim, t->tensor.ndim - 1), cb->sp);
      }
      xs[i] = a;
    }
  }
  uint32_t rank = tensor_of(bs[0].nodes.data[d]->call.args[p])->tensor.ndim;
  return op_call(m, cb->to_batch ? "stack" : "concatenate", (Expr *[]){tuple_of(cb, xs, n)}, 1,
                 cb->to_batch ? "axis=0" : fmt(m, "axis=%u", rank ? rank - 1 : 0), cb->sp);
}

/* The axis of branch i's node at depth d with the dense's units as extent,
 * searched from the end (TVM; it aborts when there is none), or -1. */
static int32_t dense_slice_axis(Branch *bs, uint32_t i, uint32_t d) {
  const Type *out = tensor_of(bs[i].nodes.data[d]);
  if (!static_dims(out)) return -1;
  int64_t units = dense_units(bs[i].nodes.data[0]);
  for (uint32_t k = out->tensor.ndim; k-- > 0;)
    if (out->tensor.dims[k].value == units) return (int32_t)k;
  return -1;
}

static Expr *dense_slice(Cb *cb, Expr *y, Branch *bs, uint32_t n, uint32_t i) {
  Module *m = cb->m;
  if (cb->to_batch) {
    if (cb->split_of != y) {
      cb->split_of = y;
      cb->split = op_call(m, "split", &y, 1, fmt(m, "indices_or_sections=%u, axis=0", n), cb->sp);
    }
    Expr *one = build_proj(m, cb->split, i, cb->sp);
    return op_call(m, "squeeze", &one, 1, "axis=[0]", cb->sp);
  }
  /* the slice axis: the last axis of the branch's last combined node whose
   * extent is the dense's units (TVM's UpdateGroupOutput; dense_slice_axis) */
  const Type *out = tensor_of(bs[i].nodes.data[cb->last]);
  uint32_t rank = out->tensor.ndim;
  int32_t ax = dense_slice_axis(bs, i, cb->last);
  int64_t off = 0;
  for (uint32_t k = 0; k < i; k++) off += dense_units(bs[k].nodes.data[0]);
  int64_t begin[TENSOR_MAX_NDIM], end[TENSOR_MAX_NDIM], strides[TENSOR_MAX_NDIM];
  for (uint32_t k = 0; k < rank; k++) {
    begin[k] = (int32_t)k == ax ? off : 0;
    end[k] = (int32_t)k == ax ? dense_units(bs[i].nodes.data[0]) : -1;
    strides[k] = 1;
  }
  return op_call(m, "strided_slice", &y, 1,
                 fmt(m, "begin=%s, end=%s, strides=%s, slice_mode=\"size\"", ints(m, begin, rank), ints(m, end, rank),
                     ints(m, strides, rank)),
                 cb->sp);
}

/* --------------------------------------------------------- batch_matmul */

static bool bmm_candidate(Cb *cb, const Expr *e) {
  const AttrValue *ta = attrs_get(e->call.attrs, "transpose_a"), *tb = attrs_get(e->call.attrs, "transpose_b");
  bool a = ta && ta->kind == AV_BOOL && ta->b, b = tb && tb->kind == AV_BOOL && tb->b;
  return !a && b && static_dims(tensor_of(e->call.args[1])) && tensor_of(e->call.args[1])->tensor.ndim == 3 &&
         static_dims(tensor_of(e));
}

static bool bmm_combinable(Cb *cb, const Expr *a, const Expr *b) {
  const Type *ra = tensor_of(a->call.args[1]), *rb = tensor_of(b->call.args[1]);
  return same_attr(a, b, "out_dtype") && dtype_eq(ra->tensor.dtype, rb->tensor.dtype) &&
         dtype_eq(tensor_of(a)->tensor.dtype, tensor_of(b)->tensor.dtype) && dim(a->call.args[1], 0) == dim(b->call.args[1], 0);
}

static Expr *bmm_combine(Cb *cb, Branch *bs, uint32_t n) {
  Module *m = cb->m;
  Expr *first = bs[0].nodes.data[0];
  const AttrValue *od = attrs_get(first->call.attrs, "out_dtype");
  Expr *w = op_call(m, "concatenate", (Expr *[]){args_at(cb, bs, n, 0, 1)}, 1, "axis=1", cb->sp);
  return op_call(m, "nn.batch_matmul", (Expr *[]){first->call.args[0], w}, 2,
                 fmt(m, "out_dtype=\"%s\", transpose_b=True", od && od->kind == AV_STRING ? od->s.chars : ""), cb->sp);
}

static bool bmm_arg_ok(Cb *cb, Branch *bs, uint32_t n, uint32_t d, uint32_t p) {
  return tensor_of(bs[0].nodes.data[d]->call.args[p]) != NULL; /* joined on the last axis, no further check (TVM) */
}

static Expr *bmm_join_args(Cb *cb, Branch *bs, uint32_t n, uint32_t d, uint32_t p) {
  return op_call(cb->m, "concatenate", (Expr *[]){args_at(cb, bs, n, d, p)}, 1, "axis=-1", cb->sp);
}

static Expr *bmm_slice(Cb *cb, Expr *y, Branch *bs, uint32_t n, uint32_t i) {
  Module *m = cb->m;
  int64_t off = 0;
  for (uint32_t k = 0; k < i; k++) off += dim(bs[k].nodes.data[0]->call.args[1], 1);
  int64_t nn = dim(bs[i].nodes.data[0]->call.args[1], 1);
  return op_call(m, "strided_slice", &y, 1,
                 fmt(m, "begin=[0, 0, %lld], end=[-1, -1, %lld], strides=[1, 1, 1], slice_mode=\"size\"", (long long)off,
                     (long long)nn),
                 cb->sp);
}

static const Combiner conv2d_k = {OP_NN_CONV2D, "CombineParallelConv2D", conv_candidate, conv_combinable, conv_combine,
                                  conv_arg_ok, conv_join_args, conv_slice};
static const Combiner dense_k = {OP_NN_DENSE, "CombineParallelDense", dense_candidate, dense_combinable, dense_combine,
                                 dense_arg_ok, dense_join_args, dense_slice};
static const Combiner bmm_k = {OP_NN_BATCH_MATMUL, "CombineParallelBatchMatmul", bmm_candidate, bmm_combinable,
                               bmm_combine, bmm_arg_ok, bmm_join_args, bmm_slice};

/* -------------------------------------------------------------- grouping */

/* The same input: one node, or uses of one variable (each use is its own node). */
/* Two branches share their data when their first arguments are one node or
 * uses of one variable: the key of that identity. */
static const void *data_key(const Expr *a) { return a->kind == EXPR_VAR ? (const void *)a->var.var : (const void *)a; }

static void count_consumer(Cb *cb, Expr *child, Expr *parent) {
  int64_t *n = ptrmap_slot(&cb->consumers, child);
  (*n)++;
  ptrmap_put(&cb->single, child, (int64_t)(intptr_t)parent);
}

typedef struct Collect {
  Cb *cb;
  ExprList targets;
} Collect;

static void collect(Expr *e, void *ud) {
  Collect *c = ud;
  Cb *cb = c->cb;
  switch (e->kind) {
  case EXPR_CALL:
    for (uint32_t i = 0; i < e->call.nargs; i++) count_consumer(cb, e->call.args[i], e);
    count_consumer(cb, e->call.fn, e);
    if (op_call_id(e) == cb->k->op && e->call.nargs >= 2 && cb->k->candidate(cb, e)) vec_push(c->targets, e);
    break;
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) count_consumer(cb, e->tuple.fields[i], e);
    break;
  case EXPR_PROJ: count_consumer(cb, e->proj.tuple, e); break;
  case EXPR_LET: count_consumer(cb, e->let.value, e); count_consumer(cb, e->let.body, e); break;
  case EXPR_IF:
    count_consumer(cb, e->if_.cond, e);
    count_consumer(cb, e->if_.then_, e);
    count_consumer(cb, e->if_.else_, e);
    break;
  case EXPR_FN: count_consumer(cb, e->fn->body, e); break;
  case EXPR_MATCH:
    count_consumer(cb, e->match.scrut, e);
    for (uint32_t i = 0; i < e->match.nclauses; i++) count_consumer(cb, e->match.clauses[i].body, e);
    break;
  case EXPR_REF_NEW: case EXPR_REF_READ: count_consumer(cb, e->ref.arg, e); break;
  case EXPR_REF_WRITE: count_consumer(cb, e->ref_write.ref, e); count_consumer(cb, e->ref_write.value, e); break;
  default: break;
  }
}

/* The one consumer of e that continues a branch (class E or B), or NULL. */
static Expr *next_in_branch(Cb *cb, Expr *e) {
  int64_t n = 0;
  if (!ptrmap_get(&cb->consumers, e, &n) || n != 1) return NULL;
  int64_t p;
  ptrmap_get(&cb->single, e, &p);
  Expr *c = (Expr *)(intptr_t)p;
  int32_t id = op_call_id(c);
  if (id < 0 || op_pattern(id) > OPAT_BROADCAST || op_is_stateful(id)) return NULL;
  return c;
}

static void make_branch(Cb *cb, Expr *root, Branch *b) {
  memset(b, 0, sizeof *b);
  for (Expr *e = root; e; e = next_in_branch(cb, e)) vec_push(b->nodes, e);
}

/* The argument position of node d's chain input (the previous node), or -1. */
static int32_t chain_pos(Branch *b, uint32_t d) {
  Expr *e = b->nodes.data[d], *prev = b->nodes.data[d - 1];
  for (uint32_t i = 0; i < e->call.nargs; i++)
    if (e->call.args[i] == prev) return (int32_t)i;
  return -1;
}

static void combine_group(Cb *cb, Branch *bs, uint32_t n) {
  Module *m = cb->m;
  cb->sp = bs[0].nodes.data[0]->span;
  Expr *cur = cb->k->combine(cb, bs, n);
  size_t depth = bs[0].nodes.len;
  for (uint32_t i = 1; i < n; i++)
    if (bs[i].nodes.len < depth) depth = bs[i].nodes.len;
  uint32_t last = 0;
  Expr **curs = arena_alloc(m->arena, depth * sizeof *curs); /* the combined node at each depth */
  curs[0] = cur;
  for (uint32_t d = 1; d < depth; d++) {
    Expr *e0 = bs[0].nodes.data[d];
    int32_t pos = chain_pos(&bs[0], d);
    bool ok = pos >= 0;
    for (uint32_t i = 1; i < n && ok; i++) {
      Expr *e = bs[i].nodes.data[d];
      ok = op_call_id(e) == op_call_id(e0) && e->call.nargs == e0->call.nargs && chain_pos(&bs[i], d) == pos &&
           same_attrs(e, e0);
    }
    for (uint32_t p = 0; p < e0->call.nargs && ok; p++)
      if ((int32_t)p != pos) ok = cb->k->arg_ok(cb, bs, n, d, p);
    if (!ok) break;
    Expr **args = arena_alloc(m->arena, (e0->call.nargs ? e0->call.nargs : 1) * sizeof *args);
    for (uint32_t p = 0; p < e0->call.nargs; p++)
      args[p] = (int32_t)p == pos ? cur : cb->k->join_args(cb, bs, n, d, p);
    Expr *c = build_copy(m, e0);
    c->call.fn = build_copy(m, e0->call.fn);
    c->call.args = args;
    cur = curs[d] = c;
    last = d;
  }
  /* CombineParallelDense(to_batch=False) slices on an axis whose extent is the
   * dense's units; TVM aborts when a following op left none (a reshape):
   * relayc stops the combining at the last depth where every branch has one. */
  while (last > 0 && cb->k == &dense_k && !cb->to_batch) {
    bool sliceable = true;
    for (uint32_t i = 0; i < n && sliceable; i++) sliceable = dense_slice_axis(bs, i, last) >= 0;
    if (sliceable) break;
    cur = curs[--last];
  }
  cb->last = last;
  for (uint32_t i = 0; i < n; i++)
    ptrmap_put(&cb->replace, bs[i].nodes.data[last], (int64_t)(intptr_t)cb->k->slice(cb, cur, bs, n, i));
}

/* A branch's last node becomes its slice of the combined call. The slice is
 * built from the ORIGINAL nodes (data, weights, following arguments), so it
 * is rewritten in turn: when the data is itself the output of an earlier
 * combined group (TVM's test_combine_parallel_conv2d_multiple_blocks: every
 * block's convolutions read the concatenation of the previous block's), that
 * group's replacement must show through, as TVM's ExprSubst does. */
static Expr *pre(Rewriter *rw, Expr *e) {
  Cb *cb = rw->ud;
  int64_t v;
  return ptrmap_get(&cb->replace, e, &v) ? rw_expr(rw, (Expr *)(intptr_t)v) : NULL;
}

static bool run(PassCtx *c, const Combiner *k) {
  Module *m = c->m;
  bool ok = true;
  bool *kind_ids = mem_calloc((size_t)k->op + 1, sizeof *kind_ids);
  kind_ids[k->op] = true;
  for (uint32_t gi = 0; gi < m->ndefs && ok; gi++) {
    GlobalDef *g = m->defs[gi];
    if (!g->fn || fn_skipped_by_function_passes(g->fn)) continue;
    /* a quick scan first: most functions call no conv2d / dense / batch_matmul */
    if (!dag_calls_any(g->fn->body, kind_ids, (uint32_t)k->op + 1)) continue;
    Cb cb = {0};
    cb.m = m;
    cb.k = k;
    cb.min_branches = pass_opt_int(c, "min_num_branches");
    cb.to_batch = k == &dense_k ? pass_opt_bool(c, "to_batch") : false;
    Collect col = {&cb, {0}};
    walk_post_order(g->fn->body, true, collect, &col);
    /* group by data node, then greedily by combinability, in order of appearance.
     * The targets with the same data (data_key) are chained: next_same[i] is
     * the next target after i with i's data, SIZE_MAX for none — so grouping is
     * linear in the number of targets unless many share one input. */
    PtrMap used = {0}, last = {0};
    size_t nt = col.targets.len;
    size_t *next_same = mem_malloc((nt ? nt : 1) * sizeof *next_same);
    for (size_t i = nt; i-- > 0;) {
      int64_t *l = ptrmap_slot(&last, data_key(col.targets.data[i]->call.args[0]));
      next_same[i] = *l ? (size_t)(*l - 1) : SIZE_MAX;
      *l = (int64_t)i + 1;
    }
    ptrmap_free(&last);
    for (size_t i = 0; i < nt; i++) {
      Expr *t = col.targets.data[i];
      if (ptrmap_find(&used, t)) continue;
      ExprList grp = {0};
      vec_push(grp, t);
      for (size_t j = next_same[i]; j != SIZE_MAX; j = next_same[j]) {
        Expr *u = col.targets.data[j];
        if (ptrmap_find(&used, u)) continue;
        bool all = true;
        for (size_t q = 0; q < grp.len && all; q++) all = k->combinable(&cb, grp.data[q], u);
        if (all) vec_push(grp, u);
      }
      if ((int64_t)grp.len >= cb.min_branches && grp.len >= 2) {
        Branch *bs = arena_alloc(m->arena, grp.len * sizeof *bs);
        for (size_t q = 0; q < grp.len; q++) {
          make_branch(&cb, grp.data[q], &bs[q]);
          ptrmap_put(&used, grp.data[q], 1);
        }
        combine_group(&cb, bs, (uint32_t)grp.len);
        for (size_t q = 0; q < grp.len; q++) vec_free(bs[q].nodes);
      }
      vec_free(grp);
    }
    if (cb.replace.len) {
      Rewriter rw;
      rw_init(&rw, m, c->d);
      rw.pre = pre;
      rw.ud = &cb;
      ok = rw_function(&rw, g->fn);
      rw_fini(&rw);
    }
    ptrmap_free(&used);
    mem_free(next_same);
    vec_free(col.targets);
    ptrmap_free(&cb.consumers);
    ptrmap_free(&cb.single);
    ptrmap_free(&cb.replace);
  }
  mem_free(kind_ids);
  return ok;
}

bool pass_COMBINE_PARALLEL_CONV2D(PassCtx *c) { return run(c, &conv2d_k); }
bool pass_COMBINE_PARALLEL_DENSE(PassCtx *c) { return run(c, &dense_k); }
bool pass_COMBINE_PARALLEL_BATCH_MATMUL(PassCtx *c) { return run(c, &bmm_k); }
