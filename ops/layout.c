/* ops/layout.c — data layout strings (see layout.h): parsing, and
 * converting a tensor between two layouts with the same primal axes.
 *
 * Conversion walks the destination row by row (a row = its last dim). Each
 * primal axis P gets a table from its logical coordinate to the source
 * element offset it contributes (outer and sub-axis strides folded in), -1
 * past the source extent (padding reads 0); an element's source offset is
 * the sum over the primal axes.
 */
#include "ops/layout.h"

#include <string.h>

#include "ir/mem.h"
#include "runtime/threadpool.h"

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

bool layout_has_split(const Layout *l) {
  for (int32_t i = 0; i < l->n; i++)
    if (l->ax[i] >= 'a') return true;
  return false;
}

/* ------------------------------------------------------------ conversion */

/* Where primal axis P lives in a layout: its outer dim, its sub-axis dim (-1
 * when unsplit) and the factor (1 when unsplit). */
typedef struct LtAxis {
  int32_t outer, sub;
  int64_t f;
  bool present;
} LtAxis;

static void lt_axes(const Layout *l, LtAxis ax[26]) {
  for (int i = 0; i < 26; i++) ax[i] = (LtAxis){-1, -1, 1, false};
  for (int32_t i = 0; i < l->n; i++) {
    char ch = l->ax[i];
    if (ch <= 'Z') {
      ax[ch - 'A'].outer = i;
      ax[ch - 'A'].present = true;
    } else {
      ax[ch - 'a'].sub = i;
      ax[ch - 'a'].f = l->factor[i];
    }
  }
}

/* Logical extent of every primal axis of a tensor of shape `shape` in layout
 * src (full[P]), after checking that dst names the same primal axes. */
static bool lt_extents(const Layout *src, const Layout *dst, const int64_t *shape, LtAxis sa[26],
                       LtAxis da[26], int64_t full[26]) {
  lt_axes(src, sa);
  lt_axes(dst, da);
  for (int p = 0; p < 26; p++) {
    full[p] = 0;
    if (sa[p].present != da[p].present) return false;
    if (!sa[p].present) continue;
    if (sa[p].sub >= 0 && shape[sa[p].sub] != sa[p].f) return false;
    if (__builtin_mul_overflow(shape[sa[p].outer], sa[p].f, &full[p])) return false;
  }
  return true;
}

bool layout_convert_shape(const Layout *src, const Layout *dst, const int64_t *shape,
                          int64_t *out) {
  LtAxis sa[26], da[26];
  int64_t full[26];
  if (!lt_extents(src, dst, shape, sa, da, full)) return false;
  for (int32_t i = 0; i < dst->n; i++) {
    char ch = dst->ax[i];
    if (ch >= 'a') {
      out[i] = dst->factor[i];
    } else {
      int64_t f = da[ch - 'A'].f, v = full[ch - 'A'];
      out[i] = v / f + (v % f != 0);
    }
  }
  return true;
}

typedef struct LtJob {
  const char *src;
  char *dst;
  size_t es;
  int32_t nd;
  const int64_t *dshape;
  LtAxis da[26];
  int64_t *tab[26];  /* tab[P][p]: source element offset of primal coordinate p, -1 outside */
  int last;          /* primal axis of the destination's last dim */
  int64_t step;      /* change of its primal coordinate per step of the last dim */
} LtJob;

#define LT_COPY(T)                                                                                 \
  do {                                                                                             \
    T *q = (T *)row;                                                                               \
    const T *s = (const T *)j->src;                                                                \
    for (int64_t k = 0; k < inner; k++) {                                                          \
      int64_t t = tl[k * j->step];                                                                 \
      q[k] = t < 0 ? (T)0 : s[base + t];                                                           \
    }                                                                                              \
  } while (0)

/* Destination rows [lo, hi) (a row = the last dim). */
static void lt_rows(void *arg, int64_t lo, int64_t hi) {
  const LtJob *j = arg;
  int32_t nd = j->nd;
  int64_t inner = j->dshape[nd - 1];
  size_t es = j->es;
  for (int64_t r = lo; r < hi; r++) {
    int64_t coord[TENSOR_MAX_NDIM], rem = r;
    coord[nd - 1] = 0;
    for (int32_t i = nd - 1; i-- > 0;) {
      coord[i] = rem % j->dshape[i];
      rem /= j->dshape[i];
    }
    int64_t base = 0, pbase = 0;
    bool zero = false;
    for (int p = 0; p < 26; p++) {
      const LtAxis *a = &j->da[p];
      if (!a->present) continue;
      int64_t v = coord[a->outer] * a->f + (a->sub >= 0 ? coord[a->sub] : 0);
      if (p == j->last) {
        pbase = v;
      } else if (j->tab[p][v] < 0) {
        zero = true;
      } else {
        base += j->tab[p][v];
      }
    }
    char *row = j->dst + (size_t)(r * inner) * es;
    if (zero) {
      memset(row, 0, (size_t)inner * es);
      continue;
    }
    const int64_t *tl = j->tab[j->last] + pbase;
    switch (es) {
    case 1: LT_COPY(uint8_t); break;
    case 2: LT_COPY(uint16_t); break;
    case 4: LT_COPY(uint32_t); break;
    case 8: LT_COPY(uint64_t); break;
    default:
      for (int64_t k = 0; k < inner; k++) {
        int64_t t = tl[k * j->step];
        if (t < 0) memset(row + (size_t)k * es, 0, es);
        else memcpy(row + (size_t)k * es, j->src + (size_t)(base + t) * es, es);
      }
    }
  }
}

bool layout_convert_into(const Tensor *x, const Layout *src, const Layout *dst, Tensor *o) {
  if (o->numel == 0) return true;
  size_t es = dtype_size(x->dtype);
  if (dst->n == 0) {
    memcpy(o->data, x->data, es);
    return true;
  }
  LtJob j = {.src = x->data, .dst = o->data, .es = es, .nd = dst->n, .dshape = o->shape};
  LtAxis sa[26];
  int64_t full[26], sstride[TENSOR_MAX_NDIM], s = 1;
  if (!lt_extents(src, dst, x->shape, sa, j.da, full)) return false;
  for (int32_t i = src->n; i-- > 0;) {
    sstride[i] = s;
    s *= x->shape[i];
  }
  bool ok = true;
  for (int p = 0; p < 26 && ok; p++) {
    if (!j.da[p].present) continue;
    int64_t n = o->shape[j.da[p].outer] * j.da[p].f;
    int64_t *t = j.tab[p] = mem_malloc_try((size_t)n * sizeof *t + 1);
    if (!t) {
      ok = false;
      break;
    }
    const LtAxis *a = &sa[p];
    for (int64_t v = 0; v < n; v++)
      t[v] = v >= full[p] ? -1
                          : (v / a->f) * sstride[a->outer] + (a->sub >= 0 ? (v % a->f) * sstride[a->sub] : 0);
  }
  if (ok) {
    char ch = dst->ax[dst->n - 1];
    j.last = ch >= 'a' ? ch - 'a' : ch - 'A';
    j.step = ch >= 'a' ? 1 : j.da[j.last].f;
    int64_t inner = o->shape[dst->n - 1], rows = o->numel / inner;
    threadpool_for(rows, inner >= 16384 ? 1 : 16384 / inner, lt_rows, &j);
  }
  for (int p = 0; p < 26; p++) mem_free(j.tab[p]);
  return ok;
}

Tensor *layout_convert_new(const Tensor *x, const Layout *src, const Layout *dst) {
  int64_t shape[TENSOR_MAX_NDIM];
  if (src->n != x->ndim || !layout_convert_shape(src, dst, x->shape, shape)) return NULL;
  Tensor *o = tensor_new(x->dtype, dst->n, shape);
  if (o && !layout_convert_into(x, src, dst, o)) {
    tensor_release(o);
    o = NULL;
  }
  return o;
}
