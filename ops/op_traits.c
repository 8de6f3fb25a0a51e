/* ops/op_traits.c — expands ops/op_traits.def into a table indexed by
 * operator id. Rows are designated initialisers, so the .def need not follow
 * op_table.def's order; ids without a row get the zero entry, which the
 * lookup reads as "opaque, no flags" (the table stores class + 1).
 */
#include "ops/op_traits.h"

#include "ops/op_ids.h"

#define E OPAT_ELEMWISE
#define B OPAT_BROADCAST
#define I OPAT_INJECTIVE
#define R OPAT_REDUCE
#define O OPAT_OUT_FUSABLE
#define X OPAT_OPAQUE

typedef struct OpTraits {
  uint8_t cls1;   /* OpPattern + 1; 0 = no row */
  uint8_t flags;
} OpTraits;

static const OpTraits traits[OP_BUILTIN_COUNT] = {
#define TRAIT(id, cls, flags) [OP_##id] = {(uint8_t)((cls) + 1), (uint8_t)(flags)},
#include "ops/op_traits.def"
#undef TRAIT
};

OpPattern op_pattern(int32_t id) {
  if (id < 0 || id >= OP_BUILTIN_COUNT || !traits[id].cls1) return OPAT_OPAQUE;
  return (OpPattern)(traits[id].cls1 - 1);
}

uint32_t op_traits_flags(int32_t id) {
  if (id < 0 || id >= OP_BUILTIN_COUNT) return 0;
  return traits[id].flags;
}
