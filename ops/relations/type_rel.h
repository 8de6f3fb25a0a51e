/* ops/relations/type_rel.h — what a type relation sees: the TypeRelCtx API.
 *
 * Every operator's type is the scheme `fn(in0, ..., inN-1) -> out where Rel`
 * (spec/ops.md §1.1). The solver (sema/solver.c) runs Rel when it is woken
 * and hands it a TypeRelCtx: the N input types plus the output, the call's
 * normalised attributes and the call's span. Slots are numbered 0..N-1 for
 * inputs and N (= rel_ninputs) for the output.
 *
 * A relation returns one of:
 *   REL_DONE  it assigned the output (and maybe refined inputs); never rerun;
 *   REL_WAIT  a slot it needs is not known yet; the solver reruns it when any
 *             of the types it blocked on is bound (every accessor that returns
 *             NULL on an unknown slot records it, up to REL_MAX_BLOCKERS);
 *   REL_FAIL  it reported an error (with rel_fail or a failed rel_assign).
 *
 * Accessors that can block return NULL; the idiom is
 *
 *     const Type *x = rel_tensor(c, 0);
 *     if (!x) return rel_pending(c);      // REL_WAIT, or REL_FAIL after an error
 *     ...
 *     Type *out = rel_new_tensor(c, x->tensor.dtype, x->tensor.ndim);
 *     for (uint32_t i = 0; i < x->tensor.ndim; i++) out->tensor.dims[i] = x->tensor.dims[i];
 *     return rel_assign(c, rel_ninputs(c), out) ? REL_DONE : REL_FAIL;
 *
 * Most relations run forwards only: they wait for their inputs and ignore a
 * known output (TVM's relations do the same; such a call with an unknown
 * input stays unsolved, "cannot infer type"). A relation that can also run
 * backwards — it states "I can run when the output is known" by asking for
 * the output when an input is unknown — is woken by whichever becomes known
 * first (TVM's Identity unifies its input with its output, so an annotated
 * result types an unannotated argument; spec/ops.md §1.4):
 *
 *     uint32_t to = rel_ninputs(c);                 // assign the output ...
 *     const Type *x = rel_tensor(c, 0);
 *     if (!x && !rel_failed(c) && (x = rel_tensor(c, to))) to = 0;  // ... or the input; waits on both
 *     if (!x) return rel_pending(c);
 *     return rel_assign(c, to, (Type *)x) ? REL_DONE : REL_FAIL;
 *
 * Dimensions of known tensor types are Dim values: DIM_INT (value), DIM_ANY
 * (`?`) or DIM_SYM (a symbolic size). Arithmetic on an unknown dim yields `?`
 * (TVM's Any propagation); checks involving an unknown dim pass.
 * Attribute getters fall back to the schema default when the call carries no
 * attribute of that name (an operator used as a first-class value).
 */
#ifndef RELAYC_OPS_TYPE_REL_H
#define RELAYC_OPS_TYPE_REL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ast.h"
#include "ops/registry.h"

enum { REL_DONE = 0, REL_WAIT = 1, REL_FAIL = 2 };
enum { REL_MAX_BLOCKERS = 4 }; /* unknown slots a waiting relation is woken by */

/* ---- context ------------------------------------------------------------ */
uint32_t rel_ninputs(TypeRelCtx *c);       /* N; the output is slot N */
const char *rel_op_name(TypeRelCtx *c);
Module *rel_module(TypeRelCtx *c);
/* REL_FAIL if an accessor already reported an error, else REL_WAIT. */
int rel_pending(TypeRelCtx *c);
/* True once this run of the relation has reported an error. */
bool rel_failed(TypeRelCtx *c);
/* Reports "<op>: <message>" at the call; returns REL_FAIL. Only the first
 * error of a run is reported (later calls just return REL_FAIL). */
int rel_fail(TypeRelCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A type as Relay text, for messages (arena string). */
const char *rel_type_str(TypeRelCtx *c, const Type *t);

/* ---- inputs ------------------------------------------------------------- */
/* Slot i resolved: NULL while it is an unbound type variable (blocks). */
const Type *rel_type(TypeRelCtx *c, uint32_t i);

/* The value of attribute `key` as a number: an int or float literal, or a
 * one-element meta[relay.Constant] / constant expression; false otherwise. */
bool rel_attr_number(TypeRelCtx *c, const char *key, double *v);

/* Slot i as a tensor type; NULL while unknown (blocks) or, after reporting
 * "<op>: argument i+1 must be a tensor" (the result: "the result must be a
 * tensor"), when it is another kind of type. */
const Type *rel_tensor(TypeRelCtx *c, uint32_t i);
/* Slot i as a tuple whose fields are all known tensors: returns the number of
 * fields and stores the resolved fields (arena array) in *fields; -1 while
 * something is unknown (blocks) or after an error. */
int32_t rel_tensor_tuple(TypeRelCtx *c, uint32_t i, const Type ***fields);

/* ---- outputs ------------------------------------------------------------ */
/* Unifies slot i with t. False after reporting a mismatch, and (without
 * assigning) when the relation has already reported an error. */
bool rel_assign(TypeRelCtx *c, uint32_t i, Type *t);
/* A fresh tensor type with `ndim` dims (all DIM_ANY) to fill in. */
Type *rel_new_tensor(TypeRelCtx *c, DType dt, uint32_t ndim);
Type *rel_new_tuple(TypeRelCtx *c, uint32_t n);  /* fields to fill in */
/* Copy of a tensor type with another dtype. */
Type *rel_retype(TypeRelCtx *c, const Type *t, DType dt);

/* ---- dims --------------------------------------------------------------- */
static inline bool dim_known(Dim d) { return d.kind == DIM_INT; }
static inline Dim dim_int(int64_t v) { return (Dim){DIM_INT, DTYPE(DT_INT, 32), v}; }
static inline Dim dim_any(void) { return (Dim){DIM_ANY, DTYPE(DT_INT, 32), 0}; }
/* Two dims that may be the same extent (an unknown dim matches anything). */
static inline bool dim_compat(Dim a, Dim b) {
  return !dim_known(a) || !dim_known(b) || a.value == b.value;
}

/* ---- attributes --------------------------------------------------------- */
const AttrValue *rel_attr(TypeRelCtx *c, const char *key);  /* NULL if absent */
bool rel_attr_is_none(TypeRelCtx *c, const char *key);      /* None or absent */
int64_t rel_attr_int(TypeRelCtx *c, const char *key, int64_t dflt);
double rel_attr_double(TypeRelCtx *c, const char *key, double dflt);
bool rel_attr_bool(TypeRelCtx *c, const char *key, bool dflt);
const char *rel_attr_str(TypeRelCtx *c, const char *key, const char *dflt);
/* A dtype attribute: false when unset ("" or None). */
bool rel_attr_dtype(TypeRelCtx *c, const char *key, DType *out);
/* An int array (a single int counts as [v]): number of elements, or -1 when
 * None/absent and (after reporting the error) when it has more than `max`
 * elements. A `None` element is stored as INT64_MIN, a `?` element as
 * INT64_MIN + 1; a written value equal to either marker is reported as out
 * of range (-1). */
int32_t rel_attr_ints(TypeRelCtx *c, const char *key, int64_t *out, int32_t max);
/* A tensor type of dtype `dt` shaped by the int array attribute `key` (`?`
 * entries stay Any; an `i64` element gives an int64 dimension, as TVM's
 * IntImm). NULL after reporting when the attribute is unset or negative. */
Type *rel_attr_shape(TypeRelCtx *c, const char *key, DType dt);
#define REL_INT_NONE INT64_MIN
#define REL_INT_ANY (INT64_MIN + 1)

/* ---- the relations (one per family of spec/ops.md) ------------------------ */
/* ops/relations/rel_broadcast.c */
int rel_broadcast(TypeRelCtx *c);        /* add, subtract, ... : out dtype = lhs */
int rel_broadcast_comp(TypeRelCtx *c);   /* equal, less, ...: out dtype = bool */
int rel_broadcast_int(TypeRelCtx *c);    /* shifts, bitwise: integer/bool only */
int rel_broadcast_bool(TypeRelCtx *c);   /* logical_and/or/xor: bool only */
int rel_broadcast_float(TypeRelCtx *c);  /* power: float only */
int rel_identity(TypeRelCtx *c);         /* out := in0, either way (TVM Identity) */
int rel_identity_float(TypeRelCtx *c);   /* out := in0, either way (float math; any dtype, as TVM) */
int rel_identity_int(TypeRelCtx *c);     /* out := in0, either way, int/bool only (bitwise_not) */
int rel_identity_bool(TypeRelCtx *c);    /* out := in0, either way, bool only (logical_not) */
int rel_identity_comp(TypeRelCtx *c);    /* out := in0 shape, bool (isnan ...), forwards */
int rel_pass_through(TypeRelCtx *c);     /* out := in0, either way, any type (on_device, annotation.*) */
int rel_gradient(TypeRelCtx *c);         /* gradient(F): fn (T...) -> R  to  fn (T...) -> (R, (T...)) */
int rel_where(TypeRelCtx *c);
int rel_add_scaled(TypeRelCtx *c);       /* relayc.add_scaled: a, b one float type, s its scalar; out := a */
int rel_matmul_add_scaled(TypeRelCtx *c); /* relayc.matmul_add_scaled: a + s·matmul(p, q), float32; out := a */
int rel_clip(TypeRelCtx *c);             /* Identity, either way */
int rel_cast(TypeRelCtx *c);
int rel_cast_like(TypeRelCtx *c);
int rel_reinterpret(TypeRelCtx *c);
int rel_dropout(TypeRelCtx *c);
int rel_broadcast_to(TypeRelCtx *c);
int rel_broadcast_to_like(TypeRelCtx *c); /* out := like, either way; Broadcast(data, like) = like */
/* ops/relations/rel_reduce.c */
int rel_reduce(TypeRelCtx *c);           /* sum, mean, max, min, prod, all, any */
int rel_arg_reduce(TypeRelCtx *c);       /* argmax, argmin: int32 */
int rel_variance(TypeRelCtx *c);
int rel_collapse_sum_like(TypeRelCtx *c);  /* out := type of in1; in1 must broadcast to in0 */
int rel_collapse_sum_to(TypeRelCtx *c);    /* out := Tensor[attr shape, in0 dtype], same check */
/* ops/relations/rel_shape.c */
int rel_reshape(TypeRelCtx *c);
int rel_reshape_like(TypeRelCtx *c);
int rel_reverse_reshape(TypeRelCtx *c);  /* contrib_reverse_reshape: special values from the right */
int rel_expand_dims(TypeRelCtx *c);
int rel_squeeze(TypeRelCtx *c);
int rel_transpose(TypeRelCtx *c);
int rel_batch_flatten(TypeRelCtx *c);
int rel_concatenate(TypeRelCtx *c);
int rel_stack(TypeRelCtx *c);
int rel_split(TypeRelCtx *c);
int rel_strided_slice(TypeRelCtx *c);
int rel_take(TypeRelCtx *c);
int rel_gather(TypeRelCtx *c);
int rel_gather_nd(TypeRelCtx *c);
int rel_strided_set(TypeRelCtx *c);      /* data's type; v, begin/end/strides checked */
int rel_scatter_nd(TypeRelCtx *c);       /* data's type; TVM's ScatterNDRel checks */
int rel_scatter_elements(TypeRelCtx *c); /* data's type; indices/updates of one shape */
int rel_sparse_to_dense(TypeRelCtx *c);  /* output_shape, values' dtype */
int rel_one_hot(TypeRelCtx *c);
int rel_slice_like(TypeRelCtx *c);
int rel_tile(TypeRelCtx *c);
int rel_repeat(TypeRelCtx *c);
int rel_reverse(TypeRelCtx *c);
int rel_cumulative(TypeRelCtx *c);       /* cumsum, cumprod */
int rel_layout_transform(TypeRelCtx *c);
int rel_creation(TypeRelCtx *c);         /* zeros, ones */
int rel_full(TypeRelCtx *c);
int rel_full_like(TypeRelCtx *c);
int rel_arange(TypeRelCtx *c);
int rel_shape_of(TypeRelCtx *c);
int rel_ndarray_size(TypeRelCtx *c);
int rel_sort(TypeRelCtx *c);             /* out := data, forwards only */
int rel_argsort(TypeRelCtx *c);
int rel_topk(TypeRelCtx *c);
/* ops/relations/rel_nn.c */
int rel_conv1d(TypeRelCtx *c);
int rel_conv2d(TypeRelCtx *c);
int rel_conv2d_bias(TypeRelCtx *c);     /* relayc.conv2d_*: float32 NCHW/OIHW conv2d + (O) bias */
int rel_conv2d_add(TypeRelCtx *c);      /* + a residual of the result's type */
int rel_conv2d_bias_add(TypeRelCtx *c); /* + both */
int rel_conv2d_relu(TypeRelCtx *c);     /* + nothing (the ReLU does not change the type) */
int rel_conv3d(TypeRelCtx *c);
int rel_conv2d_transpose(TypeRelCtx *c);
int rel_conv1d_transpose(TypeRelCtx *c);
int rel_conv3d_transpose(TypeRelCtx *c);
int rel_conv2d_backward_weight(TypeRelCtx *c);
int rel_pool1d(TypeRelCtx *c);           /* max/avg_pool1d */
int rel_pool2d(TypeRelCtx *c);           /* max/avg_pool2d */
int rel_pool3d(TypeRelCtx *c);
int rel_pool2d_grad(TypeRelCtx *c);      /* max/avg_pool2d_grad: data's type */
int rel_global_pool(TypeRelCtx *c);      /* global_*_pool1d/2d/3d (rank from layout) */
int rel_adaptive_pool(TypeRelCtx *c);    /* adaptive_*_pool1d/2d/3d */
int rel_dense(TypeRelCtx *c);
int rel_matmul(TypeRelCtx *c);
int rel_batch_matmul(TypeRelCtx *c);
int rel_bias_add(TypeRelCtx *c);
int rel_prelu(TypeRelCtx *c);
int rel_batch_norm(TypeRelCtx *c);
int rel_norm_affine(TypeRelCtx *c);      /* layer_norm, instance_norm, group_norm */
int rel_softmax(TypeRelCtx *c);          /* softmax, log_softmax, fast_softmax (forwards) */
int rel_l2_normalize(TypeRelCtx *c);     /* Identity + axis check, either way */
int rel_lrn(TypeRelCtx *c);              /* Identity + axis check, either way */
int rel_cross_entropy(TypeRelCtx *c);    /* nn.cross_entropy(_with_logits): rank-2 pair -> scalar */
int rel_pad(TypeRelCtx *c);
int rel_mirror_pad(TypeRelCtx *c);
int rel_nll_loss(TypeRelCtx *c);
int rel_crop_and_resize(TypeRelCtx *c);
int rel_affine_grid(TypeRelCtx *c);
int rel_grid_sample(TypeRelCtx *c);
int rel_resize1d(TypeRelCtx *c);
int rel_resize2d(TypeRelCtx *c);
int rel_resize3d(TypeRelCtx *c);
int rel_upsampling(TypeRelCtx *c);
int rel_upsampling3d(TypeRelCtx *c);
/* ops/relations/rel_dyn.c (spec/passes.md 11.6) */
int rel_dyn_reshape(TypeRelCtx *c);
int rel_dyn_squeeze(TypeRelCtx *c);
int rel_dyn_expand_dims(TypeRelCtx *c);
int rel_dyn_tile(TypeRelCtx *c);
int rel_dyn_broadcast_to(TypeRelCtx *c);
int rel_dyn_creation(TypeRelCtx *c);     /* dyn.zeros, dyn.ones */
int rel_dyn_full(TypeRelCtx *c);
int rel_dyn_one_hot(TypeRelCtx *c);
int rel_dyn_topk(TypeRelCtx *c);
int rel_dyn_strided_slice(TypeRelCtx *c);
int rel_dyn_pad(TypeRelCtx *c);
int rel_dyn_upsampling(TypeRelCtx *c);
int rel_dyn_upsampling3d(TypeRelCtx *c);
int rel_dyn_resize2d(TypeRelCtx *c);
int rel_dyn_sparse_to_dense(TypeRelCtx *c);

/* rel_qnn.c */
int rel_qnn_dequantize(TypeRelCtx *c);

/* rel_movement.c: TVM's data-movement operators beyond spec/ops.md */
int rel_depth_to_space(TypeRelCtx *c);
int rel_space_to_depth(TypeRelCtx *c);
int rel_space_to_batch_nd(TypeRelCtx *c);
int rel_batch_to_space_nd(TypeRelCtx *c);
int rel_trilu(TypeRelCtx *c);
int rel_reverse_sequence(TypeRelCtx *c);
int rel_sequence_mask(TypeRelCtx *c);      /* refines valid_length to the batch extent */
int rel_matrix_set_diag(TypeRelCtx *c);
int rel_meshgrid(TypeRelCtx *c);
int rel_unravel_index(TypeRelCtx *c);
int rel_invert_permutation(TypeRelCtx *c); /* Identity, either way */
int rel_dilate(TypeRelCtx *c);
int rel_sliding_window(TypeRelCtx *c);

#endif
