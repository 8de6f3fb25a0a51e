/* ops/layout.c — parsing data layout strings (see layout.h). */
#include "ops/layout.h"

#include <string.h>

bool layout_parse(const char *s, Layout *l) {
  l->n = 0;
  memset(l->factor, 0, sizeof l->factor);
  while (*s) {
    int64_t f = 0;
    while (*s >= '0' && *s <= '9') {
      f = f * 10 + (*s++ - '0');
      if (f > (1 << 30)) return false;
    }
    if (!*s || l->n >= TENSOR_MAX_NDIM) return false;
    char ch = *s++;
    bool upper = ch >= 'A' && ch <= 'Z', lower = ch >= 'a' && ch <= 'z';
    if ((!upper && !lower) || (upper && f) || (lower && f <= 0) || memchr(l->ax, ch, (size_t)l->n))
      return false;
    l->ax[l->n] = ch;
    l->factor[l->n++] = f;
  }
  for (int32_t i = 0; i < l->n; i++)
    if (l->ax[i] >= 'a' && !memchr(l->ax, l->ax[i] - 'a' + 'A', (size_t)l->n)) return false;
  return true;
}

int32_t layout_find(const Layout *l, char ch) {
  for (int32_t i = 0; i < l->n; i++)
    if (l->ax[i] == ch) return i;
  return -1;
}

int64_t layout_sub_factor(const Layout *l, char primal) {
  int32_t i = layout_find(l, (char)(primal - 'A' + 'a'));
  return i >= 0 ? l->factor[i] : 0;
}
