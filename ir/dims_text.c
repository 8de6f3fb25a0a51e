/* ir/dims_text.c — a shape as "(1, 16)" text (see dims_text.h). */
#include "ir/dims_text.h"

#include <inttypes.h>
#include <stdio.h>

/* Room kept for one more extent: ", " and at most 20 characters of an int64. */
enum { EXTENT_ROOM = 24 };

const char *dims_text(char *buf, size_t cap, const int64_t *dims, int32_t n, DimsStyle style) {
  size_t k = (size_t)snprintf(buf, cap, "(");
  for (int32_t i = 0; i < n; i++) {
    if (k + EXTENT_ROOM >= cap) {
      if (k < cap) k += (size_t)snprintf(buf + k, cap - k, "%s...", i ? ", " : "");
      break;
    }
    k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, i ? ", " : "", dims[i]);
  }
  if (n == 1 && style == DIMS_TUPLE && k < cap) k += (size_t)snprintf(buf + k, cap - k, ",");
  if (k < cap) snprintf(buf + k, cap - k, ")");
  return buf;
}
