/* ops/op_ids.h — OP_<ID> constants for the built-in operators.
 *
 * Generated from ops/op_table.def, so OP_ADD == op_lookup("add") and the
 * built-in ids are 0..OP_BUILTIN_COUNT-1 in table order. Relations and
 * kernels use these to special-case an operator without a string compare:
 *
 *     if (id == OP_CONCATENATE) ...
 */
#ifndef RELAYC_OPS_OP_IDS_H
#define RELAYC_OPS_OP_IDS_H

typedef enum {
#define OP(id, name, inputs, schema, ...) OP_##id,
#include "ops/op_table.def"
#undef OP
  OP_BUILTIN_COUNT /* number of built-in operators (not an operator) */
} OpId;

#endif
