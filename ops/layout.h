/* ops/layout.h — data layout strings (spec/ops.md §6.7), shared by type
 * relations and kernels.
 *
 * A layout names each dimension by a letter: upper case is a primal axis
 * (`N C H W D O I`), a number followed by a lower-case letter is a split
 * sub-axis of the primal axis with the same letter (`NCHW16c`). A valid layout
 * repeats no letter and every sub-axis has its primal axis.
 *
 * Conversion (layout_transform, and kernels that run split layouts through
 * their canonical code): both layouts must name the same primal axes; each
 * primal axis has a logical extent (outer × factor when split); a split
 * destination axis gets outer extent ceil(extent / factor) and positions past
 * the source extent read 0 (spec/ops.md §6.7).
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
/* True when some dimension of `l` is a split sub-axis. */
bool layout_has_split(const Layout *l);

/* Shape of a tensor of shape `shape` (layout src) after conversion to dst.
 * False when the primal axes differ, a sub-axis extent is not its factor,
 * or an extent overflows. */
bool layout_convert_shape(const Layout *src, const Layout *dst, const int64_t *shape,
                          int64_t *out);
/* o <- x converted from src to dst. o has x's dtype and the shape given by
 * layout_convert_shape (the caller checked it). False only on out of memory
 * (for the per-axis offset tables). Multi-threaded. */
bool layout_convert_into(const Tensor *x, const Layout *src, const Layout *dst, Tensor *o);
/* A new tensor holding x converted from src to dst; NULL when the layouts
 * do not fit x (see layout_convert_shape) or memory runs out. */
Tensor *layout_convert_new(const Tensor *x, const Layout *src, const Layout *dst);

#endif
