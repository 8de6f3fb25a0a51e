/* ops/kernels/k_shape.c — shape and layout kernels: reshape and its relatives (views,
 * no copy), transpose, layout_transform, concatenate, stack, split,
 * broadcast_to(_like), tile, repeat, reverse, cumsum, cumprod
 * (spec/ops.md §6.1–6.3, §6.5, §6.7).
 *
 * Everything but the scans is data movement: it works on raw elements of
 * dtype_size bytes, so every dtype (bool, ints, floats, float16) takes the
 * same path. Shapes are recomputed from the attributes (never trusted from
 * the inferred type) and checked, so a bad call is a kernel error, not a
 * crash. reshape, contrib_reverse_reshape, reshape_like, expand_dims, squeeze and nn.batch_flatten
 * return a view of their input's storage (ku_view). transpose merges
 * dimensions that stay adjacent, then either copies contiguous rows or runs a
 * tiled 2-D transpose over the pair of axes that are contiguous on each side,
 * split across threads.
 */
#include <math.h>
#include <stdio.h>

#include "ir/mem.h"
#include "ops/kernels/k_util.h"
#include "ops/layout.h"
#include "ops/op_ids.h"

#define MAXR TENSOR_MAX_NDIM

/* ------------------------------------------------------------ reshape family */

/* The output shape of reshape (spec/ops.md §6.1); false with a message. */
static bool reshape_dims(const int64_t *in, int32_t nin, int64_t numel, const int64_t *ns, int32_t nn,
                         bool allowzero, int64_t *out, int32_t *nout, char *err, size_t errn) {
  int32_t src = 0, k = 0, infer = -1;
  bool used_out[MAXR] = {false}, used_in[MAXR] = {false};
  for (int32_t i = 0; i < nn; i++) {
    int64_t v = ns[i];
    if (k >= MAXR) {
      snprintf(err, errn, "newshape has too many dimensions");
      return false;
    }
    if (v > 0) {
      out[k++] = v;
      src++;
    } else if (v == 0) {
      if (allowzero) {
        out[k++] = 0;
      } else {
        if (src >= nin) goto past_end;
        used_in[src] = used_out[k] = true;
        out[k++] = in[src];
      }
      src++;
    } else if (v == -1) {
      if (infer >= 0) {
        snprintf(err, errn, "newshape has more than one -1");
        return false;
      }
      infer = k;
      out[k++] = 1;
      src++;
    } else if (v == -2) {
      for (; src < nin && k < MAXR; src++) {
        used_in[src] = used_out[k] = true;
        out[k++] = in[src];
      }
    } else if (v == -3) {
      if (src + 1 >= nin) goto past_end;
      used_in[src] = used_in[src + 1] = used_out[k] = true;
      out[k++] = in[src] * in[src + 1];
      src += 2;
    } else if (v == -4) {
      if (i + 2 >= nn || src >= nin || k + 1 >= MAXR) {
        snprintf(err, errn, "-4 in newshape must be followed by two values and split an input dimension");
        return false;
      }
      int64_t d = in[src], a = ns[i + 1], b = ns[i + 2];
      if ((a == -1 && b == -1) || a < -1 || b < -1 || (a == 0 && b == -1) || (b == 0 && a == -1)) {
        snprintf(err, errn, "-4 needs two factors, at most one of them -1");
        return false;
      }
      if (a == -1) a = d / b;
      if (b == -1) b = d / a;
      int64_t ab;
      if (__builtin_mul_overflow(a, b, &ab) || ab != d) {
        snprintf(err, errn, "cannot split dimension %lld into %lld x %lld", (long long)d, (long long)a, (long long)b);
        return false;
      }
      used_in[src] = used_out[k] = used_out[k + 1] = true;
      out[k++] = a;
      out[k++] = b;
      src++;
      i += 2;
    } else {
      snprintf(err, errn, "invalid value %lld in newshape", (long long)v);
      return false;
    }
  }
  if (infer >= 0) {
    int64_t p = 1;
    for (int32_t i = 0; i < nin; i++)
      if (!used_in[i]) p *= in[i];
    for (int32_t i = 0; i < k; i++) {
      if (used_out[i] || i == infer) continue;
      if (out[i] == 0) {
        snprintf(err, errn, "cannot infer the -1 dimension next to a 0-sized one");
        return false;
      }
      p /= out[i];
    }
    out[infer] = p;
  }
  int64_t n;
  if (!tensor_shape_numel(k, out, &n) || n != numel) {
    snprintf(err, errn, "cannot reshape %lld elements into the requested shape", (long long)numel);
    return false;
  }
  *nout = k;
  return true;
past_end:
  snprintf(err, errn, "newshape refers past the input's %d dimensions", nin);
  return false;
}

static bool reshape_shape(const Tensor *x, const int64_t *ns, int32_t nn, bool allowzero, int64_t *out,
                          int32_t *nout, char *err, size_t errn) {
  return reshape_dims(x->shape, x->ndim, x->numel, ns, nn, allowzero, out, nout, err, errn);
}

int kernel_RESHAPE(KernelCtx *c);
int kernel_RESHAPE(KernelCtx *c) {
  int64_t ns[MAXR], out[MAXR];
  int32_t nn = kernel_attr_ints(c, "newshape", ns, MAXR), nout = 0;
  if (nn < 0 || nn > MAXR) return kernel_fail(c, "reshape: newshape must be a list of at most %d integers", MAXR);
  char err[160];
  if (!reshape_shape(c->inputs[0], ns, nn, kernel_attr_int(c, "allowzero", 0) != 0, out, &nout, err, sizeof err))
    return kernel_fail(c, "reshape: %s", err);
  return ku_view(c, 0, nout, out);
}

/* contrib_reverse_reshape: reshape's special values read from the right
 * (the reversed shape reshaped by the reversed newshape, reversed back). */
int kernel_CONTRIB_REVERSE_RESHAPE(KernelCtx *c);
int kernel_CONTRIB_REVERSE_RESHAPE(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t ns[MAXR], rs[MAXR], in[MAXR], out[MAXR], back[MAXR];
  int32_t nn = kernel_attr_ints(c, "newshape", ns, MAXR), nout = 0;
  if (nn < 0 || nn > MAXR)
    return kernel_fail(c, "contrib_reverse_reshape: newshape must be a list of at most %d integers", MAXR);
  for (int32_t i = 0; i < nn; i++) {
    if (ns[i] == -4) return kernel_fail(c, "contrib_reverse_reshape: newshape entry -4 is not supported");
    rs[i] = ns[nn - 1 - i];
  }
  for (int32_t i = 0; i < x->ndim; i++) in[i] = x->shape[x->ndim - 1 - i];
  char err[160];
  if (!reshape_dims(in, x->ndim, x->numel, rs, nn, kernel_attr_int(c, "allowzero", 0) != 0, out, &nout, err,
                    sizeof err))
    return kernel_fail(c, "contrib_reverse_reshape: %s", err);
  for (int32_t i = 0; i < nout; i++) back[i] = out[nout - 1 - i];
  return ku_view(c, 0, nout, back);
}

/* An optional int attribute (None → dflt). */
static int64_t opt_int(const KernelCtx *c, const char *name, int64_t dflt) {
  const AttrValue *v = kernel_attr(c, name);
  return v && v->kind == AV_INT ? v->i.value : dflt;
}

static bool norm_range(int64_t *v, int64_t n) {
  if (*v < 0) *v += n;
  return *v >= 0 && *v <= n;
}

int kernel_RESHAPE_LIKE(KernelCtx *c);
int kernel_RESHAPE_LIKE(KernelCtx *c) {
  const Tensor *a = c->inputs[0], *l = c->inputs[1];
  int64_t na = a->ndim, nl = l->ndim;
  int64_t lb = opt_int(c, "lhs_begin", 0), le = opt_int(c, "lhs_end", na);
  int64_t rb = opt_int(c, "rhs_begin", 0), re = opt_int(c, "rhs_end", nl);
  if (!norm_range(&lb, na) || !norm_range(&le, na) || lb > le || !norm_range(&rb, nl) || !norm_range(&re, nl) ||
      rb > re)
    return kernel_fail(c, "reshape_like: invalid dimension ranges");
  int64_t shape[MAXR];
  int32_t k = 0;
  if (lb + (re - rb) + (na - le) > MAXR) return kernel_fail(c, "reshape_like: result rank too large");
  for (int64_t i = 0; i < lb; i++) shape[k++] = a->shape[i];
  for (int64_t i = rb; i < re; i++) shape[k++] = l->shape[i];
  for (int64_t i = le; i < na; i++) shape[k++] = a->shape[i];
  return ku_view(c, 0, k, shape);
}

int kernel_EXPAND_DIMS(KernelCtx *c);
int kernel_EXPAND_DIMS(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t nd = x->ndim, axis = kernel_attr_int(c, "axis", 0), k = kernel_attr_int(c, "num_newaxis", 1);
  if (k < 0 || nd + k > MAXR) return kernel_fail(c, "expand_dims: invalid num_newaxis %lld", (long long)k);
  if (axis < -nd - 1 || axis > nd) return kernel_fail(c, "expand_dims: axis %lld is out of range", (long long)axis);
  int64_t pivot = axis < 0 ? axis + nd + 1 : axis, shape[MAXR];
  int32_t j = 0;
  for (int64_t i = 0; i < pivot; i++) shape[j++] = x->shape[i];
  for (int64_t i = 0; i < k; i++) shape[j++] = 1;
  for (int64_t i = pivot; i < nd; i++) shape[j++] = x->shape[i];
  return ku_view(c, 0, j, shape);
}

int kernel_SQUEEZE(KernelCtx *c);
int kernel_SQUEEZE(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  bool drop[MAXR] = {false};
  int64_t axes[MAXR], shape[MAXR];
  int32_t n = kernel_attr_ints(c, "axis", axes, MAXR), k = 0;
  if (n < 0) {
    for (int32_t i = 0; i < x->ndim; i++) drop[i] = x->shape[i] == 1;
  } else {
    for (int32_t i = 0; i < n && i < MAXR; i++) {
      int64_t ax = axes[i];
      if (!ku_axis(&ax, x->ndim)) return kernel_fail(c, "squeeze: axis %lld is out of range", (long long)axes[i]);
      if (x->shape[ax] != 1)
        return kernel_fail(c, "squeeze: axis %lld has extent %lld, not 1", (long long)axes[i], (long long)x->shape[ax]);
      drop[ax] = true;
    }
  }
  for (int32_t i = 0; i < x->ndim; i++)
    if (!drop[i]) shape[k++] = x->shape[i];
  return ku_view(c, 0, k, shape);
}

int kernel_NN_BATCH_FLATTEN(KernelCtx *c);
int kernel_NN_BATCH_FLATTEN(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  if (x->ndim < 1) return kernel_fail(c, "nn.batch_flatten: the input must have rank at least 1");
  int64_t shape[2] = {x->shape[0], ku_prod(x->shape, 1, x->ndim)};
  return ku_view(c, 0, 2, shape);
}

/* ------------------------------------------------------------ transpose */

enum { TILE = 32 };

typedef struct TrJob {
  const char *src;
  char *dst;
  size_t es;
  int32_t r;          /* merged rank */
  int64_t d[MAXR];    /* merged output extents */
  int64_t s[MAXR];    /* input element stride of each output dim */
  int64_t os[MAXR];   /* output element stride of each output dim */
  int32_t j;          /* output dim with input stride 1 (tiled case) */
  int64_t ntile_a;    /* tiles along dim j */
} TrJob;

/* Input and output offsets of the outer combination `idx` (dims other than
 * `skip1`, `skip2`, in row-major order). */
static void tr_offsets(const TrJob *t, int64_t idx, int32_t skip1, int32_t skip2, int64_t *in_off, int64_t *out_off) {
  int64_t io = 0, oo = 0;
  for (int32_t k = t->r; k-- > 0;) {
    if (k == skip1 || k == skip2) continue;
    int64_t q = idx % t->d[k];
    idx /= t->d[k];
    io += q * t->s[k];
    oo += q * t->os[k];
  }
  *in_off = io;
  *out_off = oo;
}

/* Rows: the last output dim is contiguous in the input too. */
static void tr_rows(void *arg, int64_t lo, int64_t hi) {
  const TrJob *t = arg;
  size_t row = (size_t)t->d[t->r - 1] * t->es;
  for (int64_t i = lo; i < hi; i++) {
    int64_t io, oo;
    tr_offsets(t, i, t->r - 1, -1, &io, &oo);
    memcpy(t->dst + (size_t)oo * t->es, t->src + (size_t)io * t->es, row);
  }
}

#define TR_TILE(T)                                                                       \
  do {                                                                                   \
    const T *restrict in = (const T *)t->src + io;                                       \
    T *restrict out = (T *)t->dst + oo;                                                  \
    for (int64_t b0 = 0; b0 < B; b0 += TILE) {                                           \
      int64_t b1 = b0 + TILE < B ? b0 + TILE : B;                                        \
      for (int64_t a = a0; a < a1; a++)                                                  \
        for (int64_t b = b0; b < b1; b++) out[a * osa + b] = in[a + b * sb];             \
    }                                                                                    \
  } while (0)

/* Tiles: output dim j is contiguous in the input, the last output dim in the
 * output; each work item is (outer combination, tile row along j). */
static void tr_tiles(void *arg, int64_t lo, int64_t hi) {
  const TrJob *t = arg;
  int32_t j = t->j, last = t->r - 1;
  int64_t A = t->d[j], B = t->d[last], sb = t->s[last], osa = t->os[j];
  for (int64_t w = lo; w < hi; w++) {
    int64_t outer = w / t->ntile_a, a0 = (w % t->ntile_a) * TILE, a1 = a0 + TILE < A ? a0 + TILE : A;
    int64_t io, oo;
    tr_offsets(t, outer, j, last, &io, &oo);
    switch (t->es) {
    case 1: TR_TILE(uint8_t); break;
    case 2: TR_TILE(uint16_t); break;
    case 4: TR_TILE(uint32_t); break;
    case 8: TR_TILE(uint64_t); break;
    default:
      for (int64_t a = a0; a < a1; a++)
        for (int64_t b = 0; b < B; b++)
          memcpy(t->dst + (size_t)(oo + a * osa + b) * t->es, t->src + (size_t)(io + a + b * sb) * t->es, t->es);
    }
  }
}

/* o = x transposed by perm (validated). */
static void transpose_into(KernelCtx *c, const Tensor *x, const int64_t *perm, Tensor *o) {
  TrJob t = {.src = x->data, .dst = o->data, .es = dtype_size(x->dtype)};
  int64_t ist[MAXR];
  int64_t s = 1;
  for (int32_t i = x->ndim; i-- > 0;) {
    ist[i] = s;
    s *= x->shape[i];
  }
  /* drop extent-1 dims, merge dims adjacent on both sides */
  int32_t r = 0;
  for (int32_t i = 0; i < x->ndim; i++) {
    int64_t d = x->shape[perm[i]], st = ist[perm[i]];
    if (d == 1) continue;
    if (r > 0 && t.s[r - 1] == st * d) {
      t.d[r - 1] *= d;
      t.s[r - 1] = st;
    } else {
      t.d[r] = d;
      t.s[r++] = st;
    }
  }
  t.r = r;
  if (o->numel == 0) return;
  if (r <= 1) {
    memcpy(o->data, x->data, (size_t)x->nbytes);
    return;
  }
  s = 1;
  for (int32_t i = r; i-- > 0;) {
    t.os[i] = s;
    s *= t.d[i];
  }
  if (t.s[r - 1] == 1) {
    int64_t rows = o->numel / t.d[r - 1];
    kernel_parallel_for(c, rows, 1 + 32768 / t.d[r - 1], tr_rows, &t);
    return;
  }
  t.j = 0;
  for (int32_t i = 0; i < r; i++)
    if (t.s[i] == 1) t.j = i;
  t.ntile_a = (t.d[t.j] + TILE - 1) / TILE;
  int64_t outer = o->numel / (t.d[t.j] * t.d[r - 1]);
  kernel_parallel_for(c, outer * t.ntile_a, 1 + 32768 / (TILE * t.d[r - 1]), tr_tiles, &t);
}

int kernel_TRANSPOSE(KernelCtx *c);
int kernel_TRANSPOSE(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int32_t nd = x->ndim;
  int64_t axes[MAXR], perm[MAXR], shape[MAXR];
  int32_t n = kernel_attr_ints(c, "axes", axes, MAXR);
  if (n <= 0) {
    for (int32_t i = 0; i < nd; i++) perm[i] = nd - 1 - i;
  } else {
    if (n != nd) return kernel_fail(c, "transpose: axes has %d entries but the tensor has rank %d", n, nd);
    bool seen[MAXR] = {false};
    for (int32_t i = 0; i < n; i++) {
      int64_t ax = axes[i];
      if (!ku_axis(&ax, nd) || seen[ax]) return kernel_fail(c, "transpose: axes is not a permutation");
      seen[ax] = true;
      perm[i] = ax;
    }
  }
  for (int32_t i = 0; i < nd; i++) shape[i] = x->shape[perm[i]];
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  transpose_into(c, x, perm, o);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ layout_transform */

int kernel_LAYOUT_TRANSFORM(KernelCtx *c);
int kernel_LAYOUT_TRANSFORM(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  const char *src = kernel_attr_str(c, "src_layout", ""), *dst = kernel_attr_str(c, "dst_layout", "");
  Layout ls, ld;
  if (!layout_parse(src, &ls) || !layout_parse(dst, &ld) || ls.n != x->ndim)
    return kernel_fail(c, "layout_transform: invalid layouts \"%s\" -> \"%s\" for rank %d", src, dst, x->ndim);
  /* primal extents (the logical size of each primal axis) */
  int64_t full[26] = {0};
  bool in_src[26] = {false}, in_dst[26] = {false};
  for (int32_t i = 0; i < ls.n; i++)
    if (ls.ax[i] <= 'Z') in_src[ls.ax[i] - 'A'] = true;
  for (int32_t i = 0; i < ld.n; i++)
    if (ld.ax[i] <= 'Z') in_dst[ld.ax[i] - 'A'] = true;
  for (int32_t i = 0; i < 26; i++)
    if (in_src[i] != in_dst[i]) return kernel_fail(c, "layout_transform: layouts have different primal axes");
  for (int32_t i = 0; i < ls.n; i++) {
    char ch = ls.ax[i];
    if (ch >= 'a') {
      if (!in_src[ch - 'a']) return kernel_fail(c, "layout_transform: sub-axis without its primal axis");
      if (x->shape[i] != ls.factor[i]) /* the relation checks it; the offsets below rely on it */
        return kernel_fail(c, "layout_transform: axis %d has extent %lld, not its factor %lld", i,
                           (long long)x->shape[i], (long long)ls.factor[i]);
      continue;
    }
    int32_t sub = layout_find(&ls, (char)(ch - 'A' + 'a'));
    full[ch - 'A'] = x->shape[i] * (sub >= 0 ? ls.factor[sub] : 1);
  }
  int64_t shape[MAXR];
  for (int32_t i = 0; i < ld.n; i++) {
    char ch = ld.ax[i];
    if (ch >= 'a') {
      if (!in_dst[ch - 'a']) return kernel_fail(c, "layout_transform: sub-axis without its primal axis");
      shape[i] = ld.factor[i];
      continue;
    }
    int32_t sub = layout_find(&ld, (char)(ch - 'A' + 'a'));
    int64_t f = sub >= 0 ? ld.factor[sub] : 1;
    shape[i] = (full[ch - 'A'] + f - 1) / f;
  }
  Tensor *o = kernel_output(c, x->dtype, ld.n, shape);
  if (!o) return KERNEL_ERROR;
  bool primal_only = ls.n == ld.n;
  for (int32_t i = 0; i < ls.n; i++) primal_only &= ls.ax[i] <= 'Z';
  if (primal_only) {
    int64_t perm[MAXR];
    for (int32_t i = 0; i < ld.n; i++) perm[i] = layout_find(&ls, ld.ax[i]);
    transpose_into(c, x, perm, o);
    return KERNEL_OK;
  }
  /* general split/merge: per element through the primal coordinates */
  size_t es = dtype_size(x->dtype);
  int64_t ist[MAXR], s = 1;
  for (int32_t i = ls.n; i-- > 0;) {
    ist[i] = s;
    s *= x->shape[i];
  }
  for (int64_t e = 0; e < o->numel; e++) {
    int64_t coord[MAXR], rem = e, prim[26] = {0};
    for (int32_t i = ld.n; i-- > 0;) {
      coord[i] = rem % shape[i];
      rem /= shape[i];
    }
    for (int32_t i = 0; i < ld.n; i++) {
      char ch = ld.ax[i];
      if (ch >= 'a') continue;
      int32_t sub = layout_find(&ld, (char)(ch - 'A' + 'a'));
      prim[ch - 'A'] = sub >= 0 ? coord[i] * ld.factor[sub] + coord[sub] : coord[i];
    }
    int64_t off = 0;
    bool inside = true;
    for (int32_t i = 0; i < ls.n; i++) {
      char ch = ls.ax[i];
      int64_t v;
      if (ch >= 'a') {
        v = prim[ch - 'a'] % ls.factor[i];
      } else {
        int32_t sub = layout_find(&ls, (char)(ch - 'A' + 'a'));
        v = sub >= 0 ? prim[ch - 'A'] / ls.factor[sub] : prim[ch - 'A'];
        inside &= prim[ch - 'A'] < full[ch - 'A'];
      }
      off += v * ist[i];
    }
    char *q = (char *)o->data + (size_t)e * es;
    if (inside) ku_copy1(q, (const char *)x->data + (size_t)off * es, es);
    else memset(q, 0, es);
  }
  return KERNEL_OK;
}

/* ------------------------------------------------------------ concatenate, stack */

typedef struct CatJob {
  uint32_t n;
  Tensor **in;
  char *dst;
  size_t *chunk;    /* bytes per outer index of each input */
  size_t total;     /* bytes per outer index of the output */
} CatJob;

static void cat_range(void *arg, int64_t lo, int64_t hi) {
  const CatJob *j = arg;
  for (int64_t o = lo; o < hi; o++) {
    char *q = j->dst + (size_t)o * j->total;
    for (uint32_t k = 0; k < j->n; k++) {
      memcpy(q, (const char *)j->in[k]->data + (size_t)o * j->chunk[k], j->chunk[k]);
      q += j->chunk[k];
    }
  }
}

/* Joins the inputs along `axis` of the output shape; stack (new_axis) treats
 * each input as having extent 1 there. */
static int join(KernelCtx *c, bool new_axis) {
  const char *name = c->op->name;
  uint32_t n = c->ninputs;
  if (n == 0) return kernel_fail(c, "%s: needs at least one tensor", name);
  const Tensor *x0 = c->inputs[0];
  int64_t nd = x0->ndim, axis = kernel_attr_int(c, "axis", 0);
  if (new_axis ? (axis < -nd - 1 || axis > nd) : !ku_axis(&axis, nd))
    return kernel_fail(c, "%s: axis %lld is out of range", name, (long long)axis);
  if (new_axis && axis < 0) axis += nd + 1;
  int64_t shape[MAXR];
  if (nd + new_axis > MAXR) return kernel_fail(c, "%s: rank too large", name);
  for (int64_t i = 0, k = 0; i < nd + new_axis; i++) shape[i] = (new_axis && i == axis) ? (int64_t)n : x0->shape[k++];
  if (!new_axis) shape[axis] = 0;
  for (uint32_t k = 0; k < n; k++) {
    const Tensor *t = c->inputs[k];
    if (!dtype_eq(t->dtype, x0->dtype) || t->ndim != nd)
      return kernel_fail(c, "%s: tensor %u has another dtype or rank", name, k);
    for (int64_t i = 0; i < nd; i++)
      if ((new_axis || i != axis) && t->shape[i] != x0->shape[i])
        return kernel_fail(c, "%s: tensor %u has a mismatched shape", name, k);
    if (!new_axis) shape[axis] += t->shape[axis];
  }
  Tensor *o = kernel_output(c, x0->dtype, (int32_t)(nd + new_axis), shape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(x0->dtype);
  size_t chunks[64], *chunk = n <= 64 ? chunks : mem_malloc(n * sizeof *chunk);
  int64_t outer = ku_prod(shape, 0, axis);
  size_t total = 0;
  for (uint32_t k = 0; k < n; k++) {
    const Tensor *t = c->inputs[k];
    chunk[k] = (size_t)(outer ? t->numel / outer : 0) * es;
    total += chunk[k];
  }
  CatJob j = {.n = n, .in = c->inputs, .dst = o->data, .chunk = chunk, .total = total};
  if (o->numel > 0) kernel_parallel_for(c, outer, 1 + (int64_t)(65536 / (total + 1)), cat_range, &j);
  if (chunk != chunks) mem_free(chunk);
  return KERNEL_OK;
}

int kernel_CONCATENATE(KernelCtx *c);
int kernel_CONCATENATE(KernelCtx *c) { return join(c, false); }
int kernel_STACK(KernelCtx *c);
int kernel_STACK(KernelCtx *c) { return join(c, true); }

/* ------------------------------------------------------------ split */

int kernel_SPLIT(KernelCtx *c);
int kernel_SPLIT(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  if (x->ndim < 1) return kernel_fail(c, "split: cannot split a rank-0 tensor");
  int64_t axis = kernel_attr_int(c, "axis", 0);
  if (!ku_axis(&axis, x->ndim)) return kernel_fail(c, "split: axis %lld is out of range", (long long)axis);
  int64_t d = x->shape[axis];
  const AttrValue *ios = kernel_attr(c, "indices_or_sections");
  int64_t *cuts; /* k+1 boundaries: 0 = cuts[0] < ... < cuts[k] = d */
  int64_t k;
  if (ios && ios->kind == AV_INT) {
    k = ios->i.value;
    if (k <= 0 || k > (1 << 16) || d % k != 0)
      return kernel_fail(c, "split: cannot split extent %lld into %lld equal sections", (long long)d, (long long)k);
    cuts = mem_malloc((size_t)(k + 1) * sizeof *cuts);
    for (int64_t i = 0; i <= k; i++) cuts[i] = i * (d / k);
  } else if (ios && ios->kind == AV_ARRAY) {
    k = (int64_t)ios->arr.n + 1;
    cuts = mem_malloc((size_t)(k + 1) * sizeof *cuts);
    cuts[0] = 0;
    cuts[k] = d;
    for (int64_t i = 1; i < k; i++) {
      const AttrValue *e = ios->arr.items[i - 1];
      cuts[i] = e->kind == AV_INT ? e->i.value : -1;
      if (cuts[i] <= cuts[i - 1] || cuts[i] >= d) {
        mem_free(cuts);
        return kernel_fail(c, "split: indices must be increasing, positive and below the extent %lld", (long long)d);
      }
    }
  } else {
    return kernel_fail(c, "split: indices_or_sections must be an integer or a list of integers");
  }
  Tensor **parts = mem_calloc((size_t)k, sizeof *parts);
  size_t es = dtype_size(x->dtype);
  int64_t outer = ku_prod(x->shape, 0, axis), inner = ku_prod(x->shape, axis + 1, x->ndim);
  int64_t shape[MAXR];
  memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
  for (int64_t p = 0; p < k; p++) {
    shape[axis] = cuts[p + 1] - cuts[p];
    parts[p] = tensor_new(x->dtype, x->ndim, shape);
    if (!parts[p]) {
      for (int64_t q = 0; q < p; q++) tensor_release(parts[q]);
      mem_free(parts);
      mem_free(cuts);
      return kernel_fail(c, "split: out of memory");
    }
    size_t row = (size_t)(shape[axis] * inner) * es, from = (size_t)(cuts[p] * inner) * es, stride = (size_t)(d * inner) * es;
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)parts[p]->data + (size_t)o * row, (const char *)x->data + (size_t)o * stride + from, row);
  }
  kernel_set_tuple(c, parts, (uint32_t)k);
  mem_free(parts);
  mem_free(cuts);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ broadcast_to */

/* o = x broadcast to o's shape (numpy rules, checked by the caller). */
static void broadcast_into(const Tensor *x, Tensor *o) {
  size_t es = dtype_size(x->dtype);
  int32_t nd = o->ndim;
  int64_t st[MAXR], s = 1;
  for (int32_t i = nd; i-- > 0;) {
    int32_t k = x->ndim - nd + i;
    st[i] = (k < 0 || x->shape[k] == 1) ? 0 : s;
    if (k >= 0) s *= x->shape[k];
  }
  if (o->numel == 0) return;
  if (nd == 0) {
    memcpy(o->data, x->data, es);
    return;
  }
  int64_t last = o->shape[nd - 1], rows = o->numel / last;
  for (int64_t r = 0; r < rows; r++) {
    int64_t rem = r, off = 0;
    for (int32_t i = nd - 1; i-- > 0;) {
      off += (rem % o->shape[i]) * st[i];
      rem /= o->shape[i];
    }
    char *q = (char *)o->data + (size_t)(r * last) * es;
    const char *p = (const char *)x->data + (size_t)off * es;
    if (st[nd - 1]) {
      memcpy(q, p, (size_t)last * es);
    } else {
      for (int64_t i = 0; i < last; i++) ku_copy1(q + (size_t)i * es, p, es);
    }
  }
}

/* Broadcasts input 0 to `shape`, checking that numpy broadcasting of the two
 * reproduces exactly that shape. */
static int broadcast_to(KernelCtx *c, int32_t nd, const int64_t *shape) {
  const Tensor *x = c->inputs[0];
  if (nd < x->ndim) return kernel_fail(c, "%s: cannot broadcast to a lower rank", c->op->name);
  for (int32_t i = 0; i < x->ndim; i++) {
    int64_t a = x->shape[i], b = shape[nd - x->ndim + i];
    if (a != b && a != 1) return kernel_fail(c, "%s: cannot broadcast extent %lld to %lld", c->op->name, (long long)a, (long long)b);
  }
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  broadcast_into(x, o);
  return KERNEL_OK;
}

int kernel_BROADCAST_TO(KernelCtx *c);
int kernel_BROADCAST_TO(KernelCtx *c) {
  int64_t shape[MAXR];
  int32_t nd = kernel_attr_ints(c, "shape", shape, MAXR);
  if (nd < 0 || nd > MAXR) return kernel_fail(c, "broadcast_to: needs a shape");
  for (int32_t i = 0; i < nd; i++)
    if (shape[i] < 0) return kernel_fail(c, "broadcast_to: invalid extent %lld", (long long)shape[i]);
  return broadcast_to(c, nd, shape);
}

int kernel_BROADCAST_TO_LIKE(KernelCtx *c);
int kernel_BROADCAST_TO_LIKE(KernelCtx *c) {
  int64_t shape[MAXR];
  int32_t nd;
  if (!kernel_broadcast_shape(c->inputs[0], c->inputs[1], &nd, shape))
    return kernel_fail_broadcast(c, "broadcast_to_like", c->inputs[0], c->inputs[1]);
  return broadcast_to(c, nd, shape);
}

/* ------------------------------------------------------------ tile, repeat, reverse */

int kernel_TILE(KernelCtx *c);
int kernel_TILE(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t reps[MAXR], in[MAXR], r[MAXR], shape[MAXR];
  int32_t n = kernel_attr_ints(c, "reps", reps, MAXR);
  if (n < 0 || n > MAXR) return kernel_fail(c, "tile: needs reps");
  int32_t nd = n > x->ndim ? n : x->ndim;
  for (int32_t i = 0; i < nd; i++) {
    r[i] = i + n >= nd ? reps[i + n - nd] : 1;
    in[i] = i + x->ndim >= nd ? x->shape[i + x->ndim - nd] : 1;
    if (r[i] < 0) return kernel_fail(c, "tile: reps must be non-negative");
    if (__builtin_mul_overflow(in[i], r[i], &shape[i])) return kernel_fail(c, "tile: the result is too large");
  }
  Tensor *o = kernel_output(c, x->dtype, nd, shape);
  if (!o) return KERNEL_ERROR;
  if (o->numel == 0) return KERNEL_OK;
  size_t es = dtype_size(x->dtype);
  if (nd == 0) {
    memcpy(o->data, x->data, es);
    return KERNEL_OK;
  }
  int64_t ist[MAXR], s = 1;
  for (int32_t i = nd; i-- > 0;) {
    ist[i] = s;
    s *= in[i];
  }
  int64_t last = shape[nd - 1], rows = o->numel / last;
  size_t run = (size_t)in[nd - 1] * es;
  for (int64_t row = 0; row < rows; row++) {
    int64_t rem = row, off = 0;
    for (int32_t i = nd - 1; i-- > 0;) {
      off += (rem % shape[i]) % in[i] * ist[i];
      rem /= shape[i];
    }
    char *q = (char *)o->data + (size_t)(row * last) * es;
    for (int64_t k = 0; k < r[nd - 1]; k++) memcpy(q + k * run, (const char *)x->data + (size_t)off * es, run);
  }
  return KERNEL_OK;
}

int kernel_REPEAT(KernelCtx *c);
int kernel_REPEAT(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t rep = kernel_attr_int(c, "repeats", 1), axis = opt_int(c, "axis", INT64_MIN);
  if (rep < 0) return kernel_fail(c, "repeat: repeats must be non-negative");
  if (axis == INT64_MIN || !ku_axis(&axis, x->ndim)) return kernel_fail(c, "repeat: axis is missing or out of range");
  int64_t shape[MAXR];
  memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
  if (__builtin_mul_overflow(shape[axis], rep, &shape[axis])) return kernel_fail(c, "repeat: the result is too large");
  Tensor *o = kernel_output(c, x->dtype, x->ndim, shape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(x->dtype);
  int64_t outer = ku_prod(x->shape, 0, axis), n = x->shape[axis], inner = ku_prod(x->shape, axis + 1, x->ndim);
  size_t blk = (size_t)inner * es;
  char *q = o->data;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t j = 0; j < n; j++)
      for (int64_t k = 0; k < rep; k++, q += blk) memcpy(q, (const char *)x->data + (size_t)(a * n + j) * blk, blk);
  return KERNEL_OK;
}

int kernel_REVERSE(KernelCtx *c);
int kernel_REVERSE(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  int64_t axis = opt_int(c, "axis", INT64_MIN);
  if (axis == INT64_MIN || !ku_axis(&axis, x->ndim)) return kernel_fail(c, "reverse: axis is missing or out of range");
  Tensor *o = kernel_output_like(c, x);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(x->dtype);
  int64_t outer = ku_prod(x->shape, 0, axis), n = x->shape[axis], inner = ku_prod(x->shape, axis + 1, x->ndim);
  size_t blk = (size_t)inner * es;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t j = 0; j < n; j++)
      memcpy((char *)o->data + (size_t)(a * n + j) * blk, (const char *)x->data + (size_t)(a * n + n - 1 - j) * blk, blk);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ cumsum, cumprod */

#define SCAN(T, U)                                                                           \
  do {                                                                                       \
    T *p = o->data;                                                                          \
    for (int64_t a = 0; a < outer; a++) {                                                    \
      T *blk = p + a * n * inner;                                                            \
      for (int64_t j = 1; j < n; j++) {                                                      \
        T *restrict cur = blk + j * inner;                                                   \
        const T *restrict prev = blk + (j - 1) * inner;                                      \
        for (int64_t i = 0; i < inner; i++)                                                  \
          cur[i] = prod ? (T)((U)cur[i] * (U)prev[i]) : (T)((U)cur[i] + (U)prev[i]);          \
      }                                                                                      \
      if (exclusive && n > 0) {                                                              \
        for (int64_t j = n - 1; j > 0; j--) memcpy(blk + j * inner, blk + (j - 1) * inner, (size_t)inner * sizeof(T)); \
        for (int64_t i = 0; i < inner; i++) blk[i] = (T)(prod ? 1 : 0);                     \
      }                                                                                      \
    }                                                                                        \
  } while (0)

static int scan(KernelCtx *c, bool prod) {
  const Tensor *x = c->inputs[0];
  DType dt = x->dtype;
  kernel_attr_dtype(c, "dtype", &dt);
  bool exclusive = kernel_attr_bool(c, "exclusive", false);
  int64_t axis = opt_int(c, "axis", INT64_MIN), shape[MAXR];
  int32_t nd = x->ndim;
  if (axis == INT64_MIN) {
    nd = 1;
    shape[0] = x->numel;
    axis = 0;
  } else {
    if (!ku_axis(&axis, x->ndim)) return kernel_fail(c, "%s: axis %lld is out of range", c->op->name, (long long)axis);
    memcpy(shape, x->shape, (size_t)nd * sizeof *shape);
  }
  if (ku_type(dt) == KU_OTHER) return kernel_fail(c, "%s: unsupported dtype", c->op->name);
  /* float16 scans in float32; bool in int64 (a running count never wraps to 0) */
  DType work = ku_is_half(dt) ? DT_F32 : ku_type(dt) == KU_BOOL ? DT_I64 : dt;
  Tensor *o = tensor_new(work, nd, shape);
  if (!o) return kernel_fail(c, "%s: out of memory", c->op->name);
  ku_cast_n(x->dtype, x->data, work, o->data, x->numel);
  int64_t outer = ku_prod(shape, 0, axis), n = shape[axis], inner = ku_prod(shape, axis + 1, nd);
  KU_SWITCH(work, SCAN, (void)0);
  return ku_float_out(c, o, dt);
}

int kernel_CUMSUM(KernelCtx *c);
int kernel_CUMSUM(KernelCtx *c) { return scan(c, false); }
int kernel_CUMPROD(KernelCtx *c);
int kernel_CUMPROD(KernelCtx *c) { return scan(c, true); }
