/* ops/op_traits.h — what passes ask about an operator besides its types and
 * kernel: TVM's operator pattern class and a few flags (spec/passes.md
 * §11.1-11.2). The data is one row per operator in ops/op_traits.def.
 *
 *     if (op_pattern(op_call_id(e)) <= OPAT_BROADCAST) ...   // E or B
 *     if (op_traits_flags(id) & OPF_STATEFUL) ...             // never fold
 *
 * Unknown ids (and plugin operators) are opaque with no flags: the
 * conservative answer for every pass.
 */
#ifndef RELAYC_OPS_OP_TRAITS_H
#define RELAYC_OPS_OP_TRAITS_H

#include <stdbool.h>
#include <stdint.h>

/* TVM's OpPatternKind, same numbering; ordered: a pass may compare with <=. */
typedef enum {
  OPAT_ELEMWISE = 0,  /* E: one output element from the same input element */
  OPAT_BROADCAST = 1, /* B: elementwise with broadcasting of some axes */
  OPAT_INJECTIVE = 2, /* I: each output element from one input element (reshape, take) */
  OPAT_REDUCE = 3,    /* R: commutative reduction */
  OPAT_OUT_FUSABLE = 4, /* O: complex op whose output may take elementwise epilogues (conv2d) */
  OPAT_TUPLE = 7,     /* a tuple node (FuseOps) */
  OPAT_OPAQUE = 8,    /* X: nothing fuses with it */
} OpPattern;

enum {
  OPF_STATEFUL = 1u << 0,          /* has state (nn.dropout): never folded, CSE'd or dropped */
  OPF_NONCOMPUTATIONAL = 1u << 1,  /* does no computation (on_device): FoldConstant/FuseOps leave it */
  OPF_RESHAPE_ONLY = 1u << 2,      /* only reshapes its input (relay.reshape_only, FuseOps) */
  /* ToMixedPrecision's category (TVM's default lists, spec/passes.md §7); at most one is set,
   * none = "missing": treated as FOLLOW and reported (missing_op_mode) */
  OPF_MP_ALWAYS = 1u << 3,         /* computed in the mixed type (conv, dense, batch_matmul) */
  OPF_MP_FOLLOW = 1u << 4,         /* in the mixed type when its float inputs already are */
  OPF_MP_NEVER = 1u << 5,          /* always in float32 (exp, softmax, sums, ...) */
  /* its type may depend on the values of its arguments, so a pass that
   * changes an argument leaves the call for inference to type again. Set for
   * arange, whose relation read constant inputs until it read only its
   * start/stop/step attributes as TVM's does (ops/relations/rel_shape.c):
   * kept as the conservative choice, it costs only the re-inference */
  OPF_TYPE_READS_CONSTS = 1u << 6,
  /* the identity on relayc's one CPU device (on_device, device_copy,
   * annotation.stop_fusion/checkpoint): the interpreter moves a value its
   * kernel cannot take (a ref, closure, ADT, nested tuple) straight through */
  OPF_IDENTITY = 1u << 7,
};

OpPattern op_pattern(int32_t id);
uint32_t op_traits_flags(int32_t id);
static inline bool op_is_stateful(int32_t id) { return (op_traits_flags(id) & OPF_STATEFUL) != 0; }
static inline bool op_is_noncomputational(int32_t id) {
  return (op_traits_flags(id) & OPF_NONCOMPUTATIONAL) != 0;
}
static inline bool op_is_reshape_only(int32_t id) { return (op_traits_flags(id) & OPF_RESHAPE_ONLY) != 0; }
static inline bool op_type_reads_consts(int32_t id) { return (op_traits_flags(id) & OPF_TYPE_READS_CONSTS) != 0; }

#endif
