/* ops/macs/mac.h — the registry's cost column: multiply-accumulates of one call.
 *
 * A MAC rule is `int64_t macs_<ID>(const MacCtx *)`, defined in mac_rules.c
 * for the operators whose work is dominated by multiply-adds (convolutions,
 * dense, matmul, batch_matmul), following TVM's FMacCount rules
 * (relay.analysis.get_total_mac_number). Like kernels, rules are found
 * through weak references in ops/registry.c (the `macs` field of OpDef, NULL
 * for operators without one, which count 0): adding a rule is defining the
 * function, nothing else.
 *
 * A rule sees the typed call: its input types and its output type, resolved
 * (no inference variables), and its attributes (normalised against the
 * schema, so every field is present). It returns the count, or MAC_UNKNOWN
 * when an extent it needs is not a static integer (`?`, a symbolic size) or
 * the product overflows.
 *
 *     int64_t n = mac_count(call);          // 0 for add, relu, ...
 *     if (n == MAC_UNKNOWN) ...             // a dynamic shape
 */
#ifndef RELAYC_OPS_MACS_MAC_H
#define RELAYC_OPS_MACS_MAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ast.h"
#include "ops/registry.h"

#define MAC_UNKNOWN INT64_C(-1)

struct MacCtx {
  const Expr *call;       /* the call (EXPR_CALL whose callee is an EXPR_OP) */
  const Type *const *in;  /* the inputs' types, resolved; NULL for an input not yet typed */
  uint32_t nin;
  const Type *out;        /* the call's type, resolved */
};

/* Multiply-accumulates of a typed operator call: 0 for a call that is not an
 * operator call or whose operator has no rule, MAC_UNKNOWN as above. */
int64_t mac_count(const Expr *call);
/* True when the call's operator has a MAC rule (its count means something). */
bool mac_has_rule(const Expr *call);

/* Every rule that may exist, declared once: `macs_<ID>` for each row of
 * ops/op_table.def (defined in mac_rules.c, or nowhere: weak NULL). */
#define OP(id, ...) int64_t macs_##id(const MacCtx *c);
#include "ops/op_table.def"
#undef OP

/* ---- helpers for rules -------------------------------------------------- */
/* The static extents of tensor type t: ndim, or -1 (not a tensor, or some
 * extent is not a known integer). At most `max` extents are stored. */
int32_t mac_shape(const Type *t, int64_t *dims, int32_t max);
/* Product of the static extents of t, MAC_UNKNOWN if any is unknown. */
int64_t mac_elements(const Type *t);
/* a * b, MAC_UNKNOWN when either is unknown or the product overflows. */
int64_t mac_mul(int64_t a, int64_t b);
/* Attribute values (the schema's defaults when absent). */
int64_t mac_attr_int(const MacCtx *c, const char *key, int64_t dflt);
bool mac_attr_bool(const MacCtx *c, const char *key, bool dflt);
/* A string attribute copied into buf (cap bytes, NUL-terminated), or dflt
 * when absent, None, empty or too long. */
const char *mac_attr_str(const MacCtx *c, const char *key, const char *dflt, char *buf, size_t cap);
/* An int array attribute: element count (capped at max), or -1 when None or absent. */
int32_t mac_attr_ints(const MacCtx *c, const char *key, int64_t *out, int32_t max);

#endif
