/* ir/dims_text.h — a shape (a list of extents) as text, "(1, 16)", for messages and headers.
 *
 * Every message that names a tensor's shape writes it here, so the shapes of the type checker,
 * the kernels, the blob reader and the command line read alike.
 */
#ifndef RELAYC_IR_DIMS_TEXT_H
#define RELAYC_IR_DIMS_TEXT_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  DIMS_PLAIN, /* (3) for one extent, as relayc's messages write it */
  DIMS_TUPLE, /* (3,) for one extent, as Python (numpy, TVM) writes a 1-tuple */
} DimsStyle;

/* "(d0, d1, ...)" of the n extents into buf (cap > 0 bytes); returns buf. A shape too long for
 * buf ends in ", ...)" (the extents that fit, then the ellipsis). */
const char *dims_text(char *buf, size_t cap, const int64_t *dims, int32_t n, DimsStyle style);

#endif
