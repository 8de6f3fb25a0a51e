/* ops/layout.h — data layout strings (spec/ops.md §6.7), shared by type
 * relations and kernels.
 *
 * A layout names each dimension by a letter: upper case is a primal axis
 * (`N C H W D O I`), a number followed by a lower-case letter is a split
 * sub-axis of the primal axis with the same letter (`NCHW16c`). A valid layout
 * repeats no letter and every sub-axis has its primal axis.
 */
#ifndef RELAYC_OPS_LAYOUT_H
#define RELAYC_OPS_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/tensor.h"

typedef struct Layout {
  char ax[TENSOR_MAX_NDIM];        /* 'A'..'Z' primal, 'a'..'z' sub-axis */
  int64_t factor[TENSOR_MAX_NDIM]; /* sub-axis factor (0 for a primal axis) */
  int32_t n;                       /* number of dimensions */
} Layout;

/* Parses and validates `s`; false for anything that is not a valid layout. */
bool layout_parse(const char *s, Layout *l);
/* Index of the dimension named `ch`, or -1. */
int32_t layout_find(const Layout *l, char ch);
/* The factor of the sub-axis split off primal axis `primal` ('C' → the `16c`), or 0. */
int64_t layout_sub_factor(const Layout *l, char primal);

#endif
