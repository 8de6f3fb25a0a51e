/* ops/op_traits.c — expands ops/op_traits.def into a table indexed by
 * operator id. Rows are designated initialisers, so the .def need not follow
 * op_table.def's order; a duplicated row is an -Woverride-init warning and
 * a missing one fails the static_assert below, so every built-in operator
 * has exactly one row. Ids past the table (plugins) read as "opaque, no
 * flags" (the table stores class + 1, 0 meaning no row).
 */
#include "ops/op_traits.h"

#include <assert.h>

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

enum {
#define TRAIT(id, cls, flags) +1
  TRAIT_ROWS = 0
#include "ops/op_traits.def"
#undef TRAIT
};
static_assert((int)TRAIT_ROWS == (int)OP_BUILTIN_COUNT,
              "ops/op_traits.def needs exactly one TRAIT row per operator of ops/op_table.def");

OpPattern op_pattern(int32_t id) {
  if (id < 0 || id >= OP_BUILTIN_COUNT || !traits[id].cls1) return OPAT_OPAQUE;
  return (OpPattern)(traits[id].cls1 - 1);
}

uint32_t op_traits_flags(int32_t id) {
  if (id < 0 || id >= OP_BUILTIN_COUNT) return 0;
  return traits[id].flags;
}
