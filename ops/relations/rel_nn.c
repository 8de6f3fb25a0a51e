/* ops/relations/rel_nn.c — relations of the neural-network operators (spec/ops.md
 * §7-§12): convolutions, pooling, dense algebra, normalisations, softmax,
 * padding and resizing.
 *
 * Convolution and pooling work in the canonical layout (N, C, spatial...) /
 * (O, I, spatial...) by looking up each canonical letter in the layout
 * strings. Convolutions also accept split layouts (`NCHW4n4c`, `OIHW4o4i`:
 * a split axis counts outer * factor); pooling accepts layouts whose spatial
 * axes are unsplit (`NCHW16c`: the other axes are carried through).
 * Relations that fix parameter shapes (dense with `units`, conv with
 * `channels` + `kernel_size`, bias_add, batch_norm, ...) assign them by
 * unification, which is how un-annotated weights get their types (§1.4).
 * A computed convolution/pooling extent keeps the integer dtype of the input
 * extent it comes from (TVM promotes its int32 attributes to an int64 extent:
 * `16i64` in, `16i64` out); constants from attributes stay int32.
 */
#include "ir/dims_text.h"
#include "ops/layout.h"
#include "ops/relations/rel_util.h"

#include <math.h>
#include <stdio.h>

#define MAXSP 3

static int done(TypeRelCtx *c, Type *o) { return rel_assign(c, rel_ninputs(c), o) ? REL_DONE : REL_FAIL; }

static Type *vec_type(TypeRelCtx *c, Dim d, DType dt) {
  Type *t = rel_new_tensor(c, dt, 1);
  t->tensor.dims[0] = d;
  return t;
}

/* An int array attribute of exactly `n` entries (a single value repeats). */
static int spatial_attr(TypeRelCtx *c, const char *key, int n, int64_t dflt, int64_t *out) {
  int64_t v[8];
  int32_t k = rel_attr_ints(c, key, v, 8);
  if (k < 0) {
    for (int i = 0; i < n; i++) out[i] = dflt;
    return REL_DONE;
  }
  if (k == 1) {
    for (int i = 0; i < n; i++) out[i] = v[0];
  } else if (k == n) {
    for (int i = 0; i < n; i++) out[i] = v[i];
  } else {
    return rel_fail(c, "%s must have 1 or %d values, got %d", key, n, k);
  }
  for (int i = 0; i < n; i++)
    if (out[i] == REL_INT_NONE || out[i] == REL_INT_ANY) return rel_fail(c, "%s must hold integers", key);
  return REL_DONE;
}

/* padding: 1 value, n values (before = after) or 2n values (befores, afters). */
static int padding_attr(TypeRelCtx *c, int n, int64_t *before, int64_t *after) {
  int64_t v[16];
  int32_t k = rel_attr_ints(c, "padding", v, 16);
  if (k < 0) k = 0;
  for (int i = 0; i < n; i++) {
    if (k == 0) before[i] = after[i] = 0;
    else if (k == 1) before[i] = after[i] = v[0];
    else if (k == n) before[i] = after[i] = v[i];
    else if (k == 2 * n) before[i] = v[i], after[i] = v[n + i];
    else return rel_fail(c, "padding must have 1, %d or %d values, got %d", n, 2 * n, k);
    if (before[i] < 0 || after[i] < 0 || before[i] == REL_INT_NONE) return rel_fail(c, "padding must be non-negative");
  }
  return REL_DONE;
}

/* (k - 1) * dil + 1, the extent a window of k taps spaced by dil covers
 * (k, dil >= 1); false on overflow. */
/* An extent computed from `of` (window arithmetic on it with int32 attributes):
 * TVM's index arithmetic promotes to the wider integer type, so the result
 * keeps of's dtype (an int64 input extent gives an int64 output extent). */
static Dim dim_as(int64_t v, Dim of) {
  Dim d = dim_int(v);
  if (of.dtype.code == DT_INT && of.dtype.bits > d.dtype.bits) d.dtype = of.dtype;
  return d;
}

static bool window_extent(int64_t k, int64_t dil, int64_t *out) {
  return !__builtin_mul_overflow(k - 1, dil, out) && !__builtin_add_overflow(*out, 1, out);
}

/* extent + before + after; false on overflow. */
static bool padded_extent(int64_t extent, int64_t before, int64_t after, int64_t *out) {
  return !__builtin_add_overflow(extent, before, out) && !__builtin_add_overflow(*out, after, out);
}

static const char *spatial_letters(int nsp) { return nsp == 1 ? "W" : nsp == 2 ? "HW" : "DHW"; }

/* --------------------------------------------------------------- convolution */

/* How a convolution layout maps onto its canonical letters (NC.../OI...):
 * canonical dim j is the primal axis at pos[j], times its sub-axis at sub[j]
 * (factor fac[j]) when the layout splits it (`NCHW4n4c`: C = dims[1] * 4). */
typedef struct ConvLayout {
  int pos[2 + MAXSP], sub[2 + MAXSP];
  int64_t fac[2 + MAXSP];
  uint32_t ndim;
} ConvLayout;

/* False unless `s` is a valid layout whose primal letters are exactly `canon`. */
static bool conv_layout(const char *s, const char *canon, ConvLayout *m) {
  Layout l;
  if (!layout_parse(s, &l)) return false;
  size_t n = strlen(canon), primal = 0;
  for (int32_t i = 0; i < l.n; i++) primal += l.ax[i] >= 'A' && l.ax[i] <= 'Z';
  if (primal != n) return false;
  for (size_t j = 0; j < n; j++) {
    m->pos[j] = layout_find(&l, canon[j]);
    if (m->pos[j] < 0) return false;
    m->fac[j] = layout_sub_factor(&l, canon[j]);
    m->sub[j] = m->fac[j] ? layout_find(&l, (char)(canon[j] - 'A' + 'a')) : -1;
  }
  m->ndim = (uint32_t)l.n;
  return true;
}

/* Canonical dim j of a shape written in layout m. */
static Dim layout_get(TypeRelCtx *c, const ConvLayout *m, const Dim *d, int j) {
  Dim v = d[m->pos[j]];
  return m->fac[j] ? dim_mul(c, v, dim_int(m->fac[j])) : v;
}

/* Stores canonical dim j = v into a shape written in layout m (a split axis
 * gets outer extent ceil(v / factor), spec/ops.md 6.7). */
static void layout_put(const ConvLayout *m, Dim *d, int j, Dim v) {
  if (!m->fac[j]) {
    d[m->pos[j]] = v;
    return;
  }
  d[m->pos[j]] = dim_known(v) ? dim_int(v.value / m->fac[j] + (v.value % m->fac[j] > 0)) : dim_any(); /* ceil */
  d[m->sub[j]] = dim_int(m->fac[j]);
}

/* Error unless every sub-axis of shape `d` (layout m) has its layout factor. */
static int layout_check_subs(TypeRelCtx *c, const ConvLayout *m, const Type *t, const char *what, const char *ls) {
  for (int j = 0; j < MAXSP + 2; j++) {
    if (m->pos[j] < 0) break;
    Dim s = m->fac[j] ? t->tensor.dims[m->sub[j]] : dim_int(0);
    if (m->fac[j] && dim_known(s) && s.value != m->fac[j])
      return rel_fail(c, "%s dim %d has extent %lld but layout %s splits it by %lld", what, m->sub[j],
                      (long long)s.value, ls, (long long)m->fac[j]);
  }
  return REL_DONE;
}

typedef struct ConvIn {
  int nsp;
  bool transpose;
  const Type *data;
  ConvLayout dl, kl, ol;
  const char *klayout;
} ConvIn;

static int conv_layouts(TypeRelCtx *c, ConvIn *ci) {
  char dcanon[8] = "NC", kcanon[8] = "OI";
  strcat(dcanon, spatial_letters(ci->nsp));
  strcat(kcanon, spatial_letters(ci->nsp));
  const char *dl = rel_attr_str(c, "data_layout", dcanon);
  ci->klayout = rel_attr_str(c, "kernel_layout", kcanon);
  const char *ol = rel_attr_str(c, "out_layout", "");
  if (!*ol) ol = dl;
  for (int j = 0; j < MAXSP + 2; j++) ci->dl.pos[j] = ci->kl.pos[j] = ci->ol.pos[j] = -1;
  if (!conv_layout(dl, dcanon, &ci->dl))
    return rel_fail(c, "unsupported data_layout \"%s\" (expected the axes %s, possibly split)", dl, dcanon);
  if (!conv_layout(ci->klayout, kcanon, &ci->kl))
    return rel_fail(c, "unsupported kernel_layout \"%s\" (expected the axes %s%s, possibly split)", ci->klayout,
                    ci->transpose ? "IO" : "OI", spatial_letters(ci->nsp));
  if (!conv_layout(ol, dcanon, &ci->ol)) return rel_fail(c, "unsupported out_layout \"%s\"", ol);
  if (ci->data->tensor.ndim != ci->dl.ndim)
    return rel_fail(c, "data must have rank %u (layout %s), found %s", ci->dl.ndim, dl, rel_type_str(c, ci->data));
  return layout_check_subs(c, &ci->dl, ci->data, "data", dl);
}

/* output_padding of a transposed convolution: as spatial_attr, except that a 1-D one reads
 * only the first value of a longer list, as TVM's Conv1DTransposeRel does (its test_any passes
 * output_padding=(1, 1) to conv1d_transpose). */
static int output_padding_attr(TypeRelCtx *c, int nsp, int64_t *opad) {
  int64_t v[8];
  if (nsp == 1 && rel_attr_ints(c, "output_padding", v, 8) > 1) {
    if (v[0] == REL_INT_NONE || v[0] == REL_INT_ANY) return rel_fail(c, "output_padding must hold integers");
    opad[0] = v[0];
    return REL_DONE;
  }
  return spatial_attr(c, "output_padding", nsp, 0, opad);
}

static int conv(TypeRelCtx *c, int nsp, bool transpose) {
  ConvIn ci = {.nsp = nsp, .transpose = transpose};
  ci.data = rel_tensor(c, 0);
  if (!ci.data) return rel_pending(c);
  if (conv_layouts(c, &ci)) return REL_FAIL;
  const Dim *dd = ci.data->tensor.dims;
  Dim N = layout_get(c, &ci.dl, dd, 0), C = layout_get(c, &ci.dl, dd, 1), S[MAXSP];
  for (int i = 0; i < nsp; i++) S[i] = layout_get(c, &ci.dl, dd, 2 + i);
  int64_t G = rel_attr_int(c, "groups", 1), strides[MAXSP], dil[MAXSP], pb[MAXSP], pa[MAXSP], ks[MAXSP];
  int64_t opad[MAXSP] = {0};
  if (G < 1) return rel_fail(c, "groups must be positive, got %lld", (long long)G);
  if (spatial_attr(c, "strides", nsp, 1, strides) || spatial_attr(c, "dilation", nsp, 1, dil) ||
      padding_attr(c, nsp, pb, pa))
    return REL_FAIL;
  if (transpose && output_padding_attr(c, nsp, opad)) return REL_FAIL;
  for (int i = 0; i < nsp; i++)
    if (strides[i] < 1 || dil[i] < 1) return rel_fail(c, "strides and dilation must be positive");
  bool has_ks = !rel_attr_is_none(c, "kernel_size"), has_ch = !rel_attr_is_none(c, "channels");
  int64_t channels = has_ch ? rel_attr_int(c, "channels", 0) : 0;
  if (channels < 0) return rel_fail(c, "channels must be non-negative, got %lld", (long long)channels);
  if (has_ks && spatial_attr(c, "kernel_size", nsp, 1, ks)) return REL_FAIL;
  for (int i = 0; has_ks && i < nsp; i++)
    if (ks[i] < 1) return rel_fail(c, "kernel_size must be positive, got %lld", (long long)ks[i]);
  if (dim_known(C) && C.value % G != 0)
    return rel_fail(c, "data has %lld channels, which is not divisible by groups=%lld", (long long)C.value, (long long)G);
  Dim O;
  int64_t K[MAXSP];
  const Type *w = rel_type(c, 1);
  bool w_known = w != NULL;
  if (!w_known && rel_pending(c) == REL_FAIL) return REL_FAIL;
  if (w_known && w->kind != TYPE_TENSOR) return rel_fail(c, "weight must be a tensor, found %s", rel_type_str(c, w));
  if (has_ks && has_ch && !w_known) {
    /* assign the weight: canonical (O, I, k...) or, transposed, (I=C, O/G, k...) */
    Dim wc[2 + MAXSP];
    if (!transpose) {
      wc[0] = dim_int(channels);
      wc[1] = dim_known(C) ? dim_as(C.value / G, C) : dim_any(); /* TVM: indexdiv(C, groups), C's dtype */
    } else {
      wc[0] = dim_int(channels / G); /* O of the canonical IOHW weight */
      wc[1] = C;
    }
    for (int i = 0; i < nsp; i++) wc[2 + i] = dim_int(ks[i]);
    DType wdt = ci.data->tensor.dtype;
    Type *wt = rel_new_tensor(c, wdt, ci.kl.ndim);
    for (int i = 0; i < 2 + nsp; i++) layout_put(&ci.kl, wt->tensor.dims, i, wc[i]);
    if (!rel_assign(c, 1, wt)) return REL_FAIL;
    O = dim_int(channels);
    for (int i = 0; i < nsp; i++) K[i] = ks[i];
  } else {
    if (!w_known) return rel_pending(c);
    if (w->tensor.ndim != ci.kl.ndim)
      return rel_fail(c, "weight must have rank %u (layout %s), found %s", ci.kl.ndim, ci.klayout, rel_type_str(c, w));
    if (layout_check_subs(c, &ci.kl, w, "weight", ci.klayout)) return REL_FAIL;
    const Dim *wd = w->tensor.dims;
    Dim WO = layout_get(c, &ci.kl, wd, 0), WI = layout_get(c, &ci.kl, wd, 1);
    for (int i = 0; i < nsp; i++) {
      Dim k = layout_get(c, &ci.kl, wd, 2 + i);
      K[i] = dim_known(k) ? k.value : -1;
    }
    if (has_ks)
      for (int i = 0; i < nsp; i++)
        if (K[i] >= 0 && K[i] != ks[i]) {
          char a[96], b[96];
          return rel_fail(c, "kernel_size %s does not match the weight's kernel %s", dims_text(a, sizeof a, ks, nsp, DIMS_PLAIN),
                          dims_text(b, sizeof b, K, nsp, DIMS_PLAIN));
        }
    if (!transpose) {
      O = WO;
      bool depthwise = G > 1 && dim_known(C) && C.value == G && dim_known(WO) && WO.value == G &&
                       dim_known(WI) && WI.value != 1;
      if (depthwise) {
        /* (C, multiplier, k...) depthwise weight: C * multiplier outputs (TVM: channels / C
         * must be the multiplier; the check below says so) */
        O = dim_mul(c, WO, WI);
      } else if (dim_known(C) && dim_known(WI) && C.value / G != WI.value) {
        int64_t want;
        if (__builtin_mul_overflow(WI.value, G, &want))
          return rel_fail(c, "data has %lld channels but weight expects %lld per group (groups=%lld)",
                          (long long)C.value, (long long)WI.value, (long long)G);
        return rel_fail(c, "data has %lld channels but weight expects %lld (groups=%lld)", (long long)C.value,
                        (long long)want, (long long)G);
      }
      if (has_ch && dim_known(O) && O.value != channels)
        return rel_fail(c, "channels=%lld but the weight gives %lld output channels", (long long)channels,
                        (long long)O.value);
    } else {
      if (dim_known(C) && dim_known(WI) && C.value != WI.value)
        return rel_fail(c, "data has %lld channels but weight expects %lld", (long long)C.value, (long long)WI.value);
      /* weight (C, O/G, k...); without channels TVM's type keeps O/G (spec/gradient.md 4.5.1 (b)) */
      if (has_ch && dim_known(WO) && (channels % G != 0 || channels / G != WO.value))
        return rel_fail(c, "channels=%lld but the weight gives %lld output channels per group (groups=%lld)",
                        (long long)channels, (long long)WO.value, (long long)G);
      O = has_ch ? dim_int(channels) : WO;
    }
  }
  if (!transpose && dim_known(O) && O.value % G != 0) /* group g owns outputs [g·O/G, (g+1)·O/G) */
    return rel_fail(c, "%lld output channels are not divisible by groups=%lld", (long long)O.value, (long long)G);
  Dim out[2 + MAXSP];
  out[0] = N;
  out[1] = O;
  for (int i = 0; i < nsp; i++) {
    if (!dim_known(S[i]) || K[i] < 0) {
      out[2 + i] = dim_any();
      continue;
    }
    int64_t dk, v;
    if (!window_extent(K[i], dil[i], &dk)) return rel_fail(c, "the dilated kernel on spatial axis %d is too large", i);
    if (!transpose) {
      int64_t padded;
      if (!padded_extent(S[i].value, pb[i], pa[i], &padded))
        return rel_fail(c, "the padded input on spatial axis %d is too large", i);
      if (padded < dk)
        return rel_fail(c, "the kernel (extent %lld after dilation) is larger than the padded input (%lld) on spatial axis %d",
                        (long long)dk, (long long)padded, i);
      v = (padded - dk) / strides[i] + 1;
    } else {
      /* strides * (S - 1) + dk - pb - pa + opad */
      if (__builtin_sub_overflow(S[i].value, 1, &v) || __builtin_mul_overflow(strides[i], v, &v) ||
          __builtin_add_overflow(v, dk, &v) || __builtin_sub_overflow(v, pb[i], &v) ||
          __builtin_sub_overflow(v, pa[i], &v) || __builtin_add_overflow(v, opad[i], &v))
        return rel_fail(c, "the output extent on spatial axis %d is out of range", i);
      if (v <= 0) return rel_fail(c, "the output extent on spatial axis %d would be %lld", i, (long long)v);
    }
    out[2 + i] = dim_as(v, S[i]); /* int64 when the input extent is (TVM's index arithmetic promotes) */
  }
  DType odt = ci.data->tensor.dtype;
  rel_attr_dtype(c, "out_dtype", &odt);
  Type *o = rel_new_tensor(c, odt, ci.ol.ndim);
  for (int i = 0; i < 2 + nsp; i++) layout_put(&ci.ol, o->tensor.dims, i, out[i]);
  return done(c, o);
}

int rel_conv1d(TypeRelCtx *c) { return conv(c, 1, false); }
int rel_conv2d(TypeRelCtx *c) { return conv(c, 2, false); }
int rel_conv3d(TypeRelCtx *c) { return conv(c, 3, false); }
int rel_conv2d_transpose(TypeRelCtx *c) { return conv(c, 2, true); }
int rel_conv1d_transpose(TypeRelCtx *c) { return conv(c, 1, true); }
int rel_conv3d_transpose(TypeRelCtx *c) { return conv(c, 3, true); }

/* relayc's fused convolutions (transform/conv_epilogue.c): nn.conv2d's
 * relation restricted to what the fused kernel computes (float32, NCHW data,
 * OIHW weight, NCHW result), with a bias of the output channels at input
 * `bias_in` and/or a residual of the result's type at `res_in` (-1: none). */
static int conv2d_fused(TypeRelCtx *c, int bias_in, int res_in) {
  const char *dl = rel_attr_str(c, "data_layout", "NCHW"), *kl = rel_attr_str(c, "kernel_layout", "OIHW");
  const char *ol = rel_attr_str(c, "out_layout", "");
  if (strcmp(dl, "NCHW") != 0 || strcmp(kl, "OIHW") != 0 || (*ol && strcmp(ol, "NCHW") != 0))
    return rel_fail(c, "the fused convolution needs data_layout \"NCHW\", kernel_layout \"OIHW\" and an NCHW result");
  int st = conv(c, 2, false);
  if (st != REL_DONE) return st;
  const Type *out = rel_tensor(c, rel_ninputs(c));
  if (!out) return rel_pending(c);
  if (!dtype_eq(out->tensor.dtype, DTYPE(DT_FLOAT, 32)))
    return rel_fail(c, "the fused convolution computes float32 only, not %s", rel_type_str(c, out));
  if (bias_in >= 0 && !rel_assign(c, (uint32_t)bias_in, vec_type(c, out->tensor.dims[1], out->tensor.dtype))) return REL_FAIL;
  if (res_in >= 0 && !rel_assign(c, (uint32_t)res_in, (Type *)out)) return REL_FAIL;
  return REL_DONE;
}

int rel_conv2d_bias(TypeRelCtx *c) { return conv2d_fused(c, 2, -1); }
int rel_conv2d_add(TypeRelCtx *c) { return conv2d_fused(c, -1, 2); }
int rel_conv2d_bias_add(TypeRelCtx *c) { return conv2d_fused(c, 2, 3); }
int rel_conv2d_relu(TypeRelCtx *c) { return conv2d_fused(c, -1, -1); }

/* nn.conv2d_backward_weight(grad, data) (spec/gradient.md 5.3): conv2d's
 * attribute class with the layouts re-purposed — data_layout is grad's,
 * kernel_layout data's (its default "OIHW" reads as "NCHW"), out_layout the
 * weight gradient's ("" = "OIHW"). kernel_size is required. Output (Cout,
 * I, kh, kw) with Cout = grad's channels and I = data's channels / groups,
 * or channels / groups when Cin == Cout == groups (TVM's depthwise reading);
 * dtype out_dtype or grad's. relayc also checks that grad has the batch and
 * the spatial size of the convolution of data. */
int rel_conv2d_backward_weight(TypeRelCtx *c) {
  const Type *g, *d;
  if (!rel_tensors(c, 2, &g, &d)) return rel_pending(c);
  const char *gl = rel_attr_str(c, "data_layout", "NCHW"), *dl = rel_attr_str(c, "kernel_layout", "OIHW");
  const char *wl = rel_attr_str(c, "out_layout", "");
  if (strcmp(dl, "OIHW") == 0) dl = "NCHW";
  if (!*wl) wl = "OIHW";
  ConvLayout mg, md, mw;
  for (int j = 0; j < MAXSP + 2; j++) mg.pos[j] = md.pos[j] = mw.pos[j] = -1;
  if (!conv_layout(gl, "NCHW", &mg)) return rel_fail(c, "unsupported grad layout (data_layout) \"%s\"", gl);
  if (!conv_layout(dl, "NCHW", &md)) return rel_fail(c, "unsupported data layout (kernel_layout) \"%s\"", dl);
  if (!conv_layout(wl, "OIHW", &mw)) return rel_fail(c, "unsupported weight layout (out_layout) \"%s\"", wl);
  if (g->tensor.ndim != mg.ndim) return rel_fail(c, "grad must have rank %u (layout %s), found %s", mg.ndim, gl, rel_type_str(c, g));
  if (d->tensor.ndim != md.ndim) return rel_fail(c, "data must have rank %u (layout %s), found %s", md.ndim, dl, rel_type_str(c, d));
  if (layout_check_subs(c, &mg, g, "grad", gl) || layout_check_subs(c, &md, d, "data", dl)) return REL_FAIL;
  if (rel_attr_is_none(c, "kernel_size")) return rel_fail(c, "kernel_size must be set");
  int64_t ks[2], st[2], dil[2], pb[2], pa[2], G = rel_attr_int(c, "groups", 1);
  if (spatial_attr(c, "kernel_size", 2, 1, ks) || spatial_attr(c, "strides", 2, 1, st) ||
      spatial_attr(c, "dilation", 2, 1, dil) || padding_attr(c, 2, pb, pa))
    return REL_FAIL;
  if (G < 1) return rel_fail(c, "groups must be positive, got %lld", (long long)G);
  for (int i = 0; i < 2; i++)
    if (ks[i] < 1 || st[i] < 1 || dil[i] < 1) return rel_fail(c, "kernel_size, strides and dilation must be positive");
  const Dim *gd = g->tensor.dims, *dd = d->tensor.dims;
  Dim N = layout_get(c, &md, dd, 0), Cin = layout_get(c, &md, dd, 1), Ng = layout_get(c, &mg, gd, 0), Cout = layout_get(c, &mg, gd, 1);
  if (!dim_compat(N, Ng))
    return rel_fail(c, "grad has batch %lld but data has %lld", (long long)Ng.value, (long long)N.value);
  if (dim_known(Cout) && Cout.value % G != 0)
    return rel_fail(c, "grad has %lld channels, which is not divisible by groups=%lld", (long long)Cout.value, (long long)G);
  Dim I;
  if (dim_known(Cin) && dim_known(Cout) && Cin.value == Cout.value && Cin.value == G) {
    if (rel_attr_is_none(c, "channels")) return rel_fail(c, "channels must be set for a depthwise convolution");
    I = dim_int(rel_attr_int(c, "channels", 0) / G);
  } else {
    if (dim_known(Cin) && Cin.value % G != 0)
      return rel_fail(c, "data has %lld channels, which is not divisible by groups=%lld", (long long)Cin.value, (long long)G);
    I = dim_known(Cin) ? dim_int(Cin.value / G) : dim_any();
  }
  for (int i = 0; i < 2; i++) {
    Dim in = layout_get(c, &md, dd, 2 + i), out = layout_get(c, &mg, gd, 2 + i);
    if (!dim_known(in) || !dim_known(out)) continue;
    int64_t dk, padded;
    if (!window_extent(ks[i], dil[i], &dk) || !padded_extent(in.value, pb[i], pa[i], &padded))
      return rel_fail(c, "the window or the padded input on spatial axis %d is too large", i);
    int64_t want = padded < dk ? 0 : (padded - dk) / st[i] + 1;
    if (out.value != want)
      return rel_fail(c, "grad has extent %lld on spatial axis %d but the convolution of data gives %lld",
                      (long long)out.value, i, (long long)want);
  }
  DType odt = g->tensor.dtype;
  rel_attr_dtype(c, "out_dtype", &odt);
  Dim w[4] = {Cout, I, dim_int(ks[0]), dim_int(ks[1])};
  Type *o = rel_new_tensor(c, odt, mw.ndim);
  for (int i = 0; i < 4; i++) layout_put(&mw, o->tensor.dims, i, w[i]);
  return done(c, o);
}

/* ------------------------------------------------------------------- pooling */

/* Positions of the spatial letters of `sp` in the layout; every other letter
 * of the layout is kept as is. */
static int pool_layout(TypeRelCtx *c, const Type *a, const char *sp, int *pos) {
  const char *l = rel_attr_str(c, "layout", "");
  Layout lay;
  if (!layout_parse(l, &lay)) return rel_fail(c, "unsupported layout \"%s\"", l);
  if ((uint32_t)lay.n != a->tensor.ndim)
    return rel_fail(c, "layout \"%s\" has %d axes but the input has rank %u", l, lay.n, a->tensor.ndim);
  for (int i = 0; sp[i]; i++) {
    pos[i] = layout_find(&lay, sp[i]);
    if (pos[i] < 0) return rel_fail(c, "layout \"%s\" has no %c axis", l, sp[i]);
    if (layout_sub_factor(&lay, sp[i])) return rel_fail(c, "layout \"%s\" splits the spatial axis %c (unsupported)", l, sp[i]);
  }
  const char *ol = rel_attr_str(c, "out_layout", "");
  if (*ol && strcmp(ol, l) != 0) return rel_fail(c, "out_layout \"%s\" differs from layout \"%s\" (unsupported)", ol, l);
  return REL_DONE;
}

/* The pooled type of a into *out; REL_DONE or REL_FAIL. An empty `dilation`
 * ([], what TVM's pool-gradient builders leave) reads as 1s when
 * empty_dilation_ok. */
static int pool_shape(TypeRelCtx *c, const Type *a, int nsp, bool empty_dilation_ok, Type **out) {
  int pos[MAXSP];
  if (pool_layout(c, a, spatial_letters(nsp), pos)) return REL_FAIL;
  int64_t ps[MAXSP], st[MAXSP], dil[MAXSP], pb[MAXSP], pa[MAXSP], tmp[8];
  bool no_dil = empty_dilation_ok && rel_attr_ints(c, "dilation", tmp, 8) == 0;
  for (int i = 0; i < nsp; i++) dil[i] = 1;
  if (spatial_attr(c, "pool_size", nsp, 1, ps) || spatial_attr(c, "strides", nsp, 1, st) ||
      (!no_dil && spatial_attr(c, "dilation", nsp, 1, dil)) || padding_attr(c, nsp, pb, pa))
    return REL_FAIL;
  bool ceil_mode = rel_attr_bool(c, "ceil_mode", false);
  Type *o = rel_retype(c, a, a->tensor.dtype);
  for (int i = 0; i < nsp; i++) {
    if (ps[i] < 1 || st[i] < 1 || dil[i] < 1) return rel_fail(c, "pool_size, strides and dilation must be positive");
    Dim d = a->tensor.dims[pos[i]];
    if (!dim_known(d)) continue;
    int64_t dk, padded;
    if (!window_extent(ps[i], dil[i], &dk))
      return rel_fail(c, "the dilated pooling window on axis %c is too large", spatial_letters(nsp)[i]);
    if (!padded_extent(d.value, pb[i], pa[i], &padded))
      return rel_fail(c, "the padded input on axis %c is too large", spatial_letters(nsp)[i]);
    if (padded < dk)
      return rel_fail(c, "the pooling window (%lld) is larger than the padded input (%lld) on axis %c", (long long)dk,
                      (long long)padded, spatial_letters(nsp)[i]);
    /* (padded - dk [+ st - 1]) / st + 1, with padded - dk >= 0 */
    int64_t num = padded - dk;
    o->tensor.dims[pos[i]] = dim_as(num / st[i] + (ceil_mode && num % st[i] != 0) + 1, d); /* d's dtype, as TVM */
  }
  *out = o;
  return REL_DONE;
}

static int pool(TypeRelCtx *c, int nsp) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  Type *o;
  if (pool_shape(c, a, nsp, false, &o)) return REL_FAIL;
  return done(c, o);
}

/* nn.max_pool2d_grad / nn.avg_pool2d_grad(out_grad, data) (spec/gradient.md
 * 5.4-5.5): the result has data's type; relayc also checks that out_grad
 * has the pooled type of data (TVM does not look at it). */
int rel_pool2d_grad(TypeRelCtx *c) {
  const Type *g, *a;
  if (!rel_tensors(c, 2, &g, &a)) return rel_pending(c);
  Type *o;
  if (pool_shape(c, a, 2, true, &o)) return REL_FAIL;
  bool fits = g->tensor.ndim == o->tensor.ndim && dtype_eq(g->tensor.dtype, a->tensor.dtype);
  for (uint32_t i = 0; fits && i < o->tensor.ndim; i++) fits = dim_compat(g->tensor.dims[i], o->tensor.dims[i]);
  if (!fits)
    return rel_fail(c, "out_grad is %s but pooling %s gives %s", rel_type_str(c, g), rel_type_str(c, a),
                    rel_type_str(c, o));
  return done(c, (Type *)a);
}

int rel_pool1d(TypeRelCtx *c) { return pool(c, 1); }
int rel_pool2d(TypeRelCtx *c) { return pool(c, 2); }
int rel_pool3d(TypeRelCtx *c) { return pool(c, 3); }

/* Spatial letters of a pooling layout: D, H, W present in it, in that order.
 * Returns how many (1..3) with their positions in pos, or -1 after reporting
 * an error: a count, never a REL_ status (REL_FAIL would read as 2 axes). */
static int layout_spatial(TypeRelCtx *c, const Type *a, char *sp, int *pos) {
  const char *l = rel_attr_str(c, "layout", "");
  int n = 0;
  for (const char *p = "DHW"; *p; p++)
    if (strchr(l, *p)) sp[n++] = *p;
  sp[n] = 0;
  if (n == 0) {
    rel_fail(c, "layout \"%s\" has no spatial axis", l);
    return -1;
  }
  return pool_layout(c, a, sp, pos) ? -1 : n;
}

/* Global and adaptive pooling: the input with its spatial extents set from
 * the integer list attribute `sizes` (one value for every axis, or one each;
 * None keeps the input extent; missing: the input's type), or all 1 when
 * sizes is NULL (global pooling is adaptive pooling to 1). */
static int pool_to_sizes(TypeRelCtx *c, const char *sizes) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  char sp[4];
  int pos[MAXSP];
  int n = layout_spatial(c, a, sp, pos);
  if (n < 0) return REL_FAIL;
  int64_t os[8] = {1};
  int32_t k = sizes ? rel_attr_ints(c, sizes, os, 8) : 1;
  Type *o = rel_retype(c, a, a->tensor.dtype);
  if (k <= 0) return done(c, o);
  if (k != 1 && k != n) return rel_fail(c, "%s must have 1 or %d values, got %d", sizes, n, k);
  for (int i = 0; i < n; i++) {
    int64_t v = os[k == 1 ? 0 : i];
    if (v == REL_INT_NONE) continue; /* None keeps the input extent */
    if (v == REL_INT_ANY) o->tensor.dims[pos[i]] = dim_any();
    else if (v < 1) return rel_fail(c, "%s must be positive", sizes);
    else o->tensor.dims[pos[i]] = dim_int(v);
  }
  return done(c, o);
}

int rel_global_pool(TypeRelCtx *c) { return pool_to_sizes(c, NULL); }
int rel_adaptive_pool(TypeRelCtx *c) { return pool_to_sizes(c, "output_size"); }

/* ------------------------------------------------------------ dense algebra */

static DType out_dtype(TypeRelCtx *c, DType dflt) {
  DType dt = dflt;
  rel_attr_dtype(c, "out_dtype", &dt);
  return dt;
}

static int matmul(TypeRelCtx *c, bool ta, bool tb) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  uint32_t na = a->tensor.ndim;
  if (na < 1 || (ta && na < 2)) return rel_fail(c, "data must have rank at least %d, found %s", ta ? 2 : 1, rel_type_str(c, a));
  Dim K = ta ? a->tensor.dims[na - 2] : a->tensor.dims[na - 1];
  Dim M = ta ? a->tensor.dims[na - 1] : dim_any();
  Dim N;
  if (!rel_attr_is_none(c, "units")) {
    int64_t units = rel_attr_int(c, "units", 0);
    if (units < 1) return rel_fail(c, "units must be positive, got %lld", (long long)units);
    const Type *w = rel_type(c, 1);
    if (!w && rel_pending(c) == REL_FAIL) return REL_FAIL;
    DType wdt = w && w->kind == TYPE_TENSOR ? w->tensor.dtype : a->tensor.dtype;
    Type *wt = rel_new_tensor(c, wdt, 2);
    wt->tensor.dims[tb ? 0 : 1] = dim_int(units);
    wt->tensor.dims[tb ? 1 : 0] = K;
    if (!rel_assign(c, 1, wt)) return REL_FAIL;
    N = dim_int(units);
  } else {
    const Type *w = rel_tensor(c, 1);
    if (!w) return rel_pending(c);
    if (w->tensor.ndim != 2) return rel_fail(c, "weight must have rank 2, found %s", rel_type_str(c, w));
    Dim WK = w->tensor.dims[tb ? 1 : 0];
    N = w->tensor.dims[tb ? 0 : 1];
    if (!dim_compat(WK, K))
      return rel_fail(c, "data has %lld input features but weight expects %lld (data %s, weight %s)",
                      (long long)K.value, (long long)WK.value, rel_type_str(c, a), rel_type_str(c, w));
  }
  Type *o = rel_retype(c, a, out_dtype(c, a->tensor.dtype));
  if (ta) o->tensor.dims[na - 2] = M;
  o->tensor.dims[na - 1] = N;
  return done(c, o);
}

int rel_dense(TypeRelCtx *c) { return matmul(c, false, true); }

int rel_matmul(TypeRelCtx *c) {
  return matmul(c, rel_attr_bool(c, "transpose_a", false), rel_attr_bool(c, "transpose_b", false));
}

/* relayc.matmul_add_scaled(a, p, q, s) = a + s·matmul(p, q) (transform/scaled_add.c):
 * p, q of rank 2, everything float32, a of the product's shape, s a scalar;
 * the result has a's type. */
int rel_matmul_add_scaled(TypeRelCtx *c) {
  const Type *t[4];
  for (uint32_t i = 0; i < 4; i++)
    if (!(t[i] = rel_tensor(c, i))) return rel_pending(c);
  for (uint32_t i = 0; i < 4; i++) {
    DType dt = t[i]->tensor.dtype;
    if (dt.code != DT_FLOAT || dt.bits != 32 || dt.lanes != 1)
      return rel_fail(c, "float32 operands are required, found %s", rel_type_str(c, t[i]));
  }
  const Type *a = t[0], *p = t[1], *q = t[2];
  if (a->tensor.ndim != 2 || p->tensor.ndim != 2 || q->tensor.ndim != 2)
    return rel_fail(c, "arguments 1 to 3 must have rank 2, found %s, %s and %s", rel_type_str(c, a),
                    rel_type_str(c, p), rel_type_str(c, q));
  if (t[3]->tensor.ndim != 0) return rel_fail(c, "argument 4 must be a scalar, found %s", rel_type_str(c, t[3]));
  bool ta = rel_attr_bool(c, "transpose_a", false), tb = rel_attr_bool(c, "transpose_b", false);
  const Dim *x = p->tensor.dims, *y = q->tensor.dims;
  Dim M = ta ? x[1] : x[0], K1 = ta ? x[0] : x[1], K2 = tb ? y[1] : y[0], N = tb ? y[0] : y[1];
  if (!dim_compat(K1, K2))
    return rel_fail(c, "the reduction dimensions differ: %s and %s", rel_type_str(c, p), rel_type_str(c, q));
  if (!rel_attr_is_none(c, "units") && !dim_compat(N, dim_int(rel_attr_int(c, "units", 0))))
    return rel_fail(c, "units does not match %s", rel_type_str(c, q));
  if (!dim_compat(a->tensor.dims[0], M) || !dim_compat(a->tensor.dims[1], N))
    return rel_fail(c, "argument 1 %s does not have the product's shape", rel_type_str(c, a));
  return rel_assign(c, 4, (Type *)a) ? REL_DONE : REL_FAIL;
}

int rel_batch_matmul(TypeRelCtx *c) {
  const Type *a, *b;
  if (!rel_tensors(c, 2, &a, &b)) return rel_pending(c);
  if (a->tensor.ndim != 3 || b->tensor.ndim != 3)
    return rel_fail(c, "both inputs must have rank 3, found %s and %s", rel_type_str(c, a), rel_type_str(c, b));
  bool ta = rel_attr_bool(c, "transpose_a", false), tb = rel_attr_bool(c, "transpose_b", false);
  const Dim *x = a->tensor.dims, *y = b->tensor.dims;
  Dim B1 = x[0], B2 = y[0], M = ta ? x[2] : x[1], K1 = ta ? x[1] : x[2], K2 = tb ? y[2] : y[1], N = tb ? y[1] : y[2];
  Dim B;
  if (dim_known(B1) && B1.value == 1) B = B2;
  else if (dim_known(B2) && B2.value == 1) B = B1;
  else if (!dim_compat(B1, B2))
    return rel_fail(c, "batch dimensions %lld and %lld differ (and neither is 1)", (long long)B1.value, (long long)B2.value);
  else B = dim_known(B1) ? B1 : B2;
  if (!dim_compat(K1, K2))
    return rel_fail(c, "the reduction dimensions differ: %lld in %s vs %lld in %s", (long long)K1.value,
                    rel_type_str(c, a), (long long)K2.value, rel_type_str(c, b));
  Type *o = rel_new_tensor(c, out_dtype(c, a->tensor.dtype), 3);
  o->tensor.dims[0] = B;
  o->tensor.dims[1] = M;
  o->tensor.dims[2] = N;
  return done(c, o);
}

/* ------------------------------------------------- per-channel parameters */

/* Assigns (data.shape[axis],) of data's dtype to inputs first..last. */
static int channel_params(TypeRelCtx *c, const Type *a, int64_t axis, uint32_t first, uint32_t last) {
  if (!rel_norm_axis(&axis, a->tensor.ndim))
    return rel_fail(c, "axis %lld is out of range for data %s", (long long)axis, rel_type_str(c, a));
  Type *v = vec_type(c, a->tensor.dims[axis], a->tensor.dtype);
  for (uint32_t i = first; i <= last; i++)
    if (!rel_assign(c, i, v)) return REL_FAIL;
  return REL_DONE;
}

int rel_bias_add(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  if (channel_params(c, a, rel_attr_int(c, "axis", 1), 1, 1)) return REL_FAIL;
  return done(c, (Type *)a);
}

int rel_prelu(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  if (channel_params(c, a, rel_attr_int(c, "axis", 1), 1, 1)) return REL_FAIL;
  return done(c, (Type *)a);
}

int rel_batch_norm(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t axis = rel_attr_int(c, "axis", 1);
  if (channel_params(c, a, axis, 1, 4)) return REL_FAIL;
  rel_norm_axis(&axis, a->tensor.ndim);
  Type *v = vec_type(c, a->tensor.dims[axis], a->tensor.dtype);
  Type *t = rel_new_tuple(c, 3);
  t->tuple.fields[0] = (Type *)a;
  t->tuple.fields[1] = v;
  t->tuple.fields[2] = v;
  return done(c, t);
}

int rel_norm_affine(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int64_t axis = rel_attr_int(c, "axis", 1);
  if (channel_params(c, a, axis, 1, 2)) return REL_FAIL;
  int64_t groups = rel_attr_int(c, "num_groups", 0);
  rel_norm_axis(&axis, a->tensor.ndim);
  Dim C = a->tensor.dims[axis];
  if (groups > 0 && dim_known(C) && C.value % groups != 0)
    return rel_fail(c, "%lld channels cannot be split into num_groups=%lld groups", (long long)C.value, (long long)groups);
  return done(c, (Type *)a);
}

/* The data type of a relation whose output is its input: forwards only, or
 * (both_ways, TVM's Identity) from whichever of the two is known first;
 * NULL while neither is. */
static const Type *io_type(TypeRelCtx *c, bool both_ways) {
  const Type *a = rel_tensor(c, 0);
  if (!a && both_ways && !rel_failed(c)) a = rel_tensor(c, rel_ninputs(c));
  return a;
}

/* out := data after checking `axis`; both_ways as io_type. */
static int axis_identity(TypeRelCtx *c, int64_t dflt, bool both_ways) {
  const Type *a = io_type(c, both_ways);
  if (!a) return rel_pending(c);
  int64_t axis = rel_attr_int(c, "axis", dflt);
  if (!rel_norm_axis(&axis, a->tensor.ndim))
    return rel_fail(c, "axis %lld is out of range for %s", (long long)rel_attr_int(c, "axis", dflt), rel_type_str(c, a));
  return rel_assign(c, 0, (Type *)a) ? done(c, (Type *)a) : REL_FAIL;
}

/* softmax's relation (TVM's SoftmaxRel) waits for data; nn.lrn's is Identity. */
int rel_softmax(TypeRelCtx *c) { return axis_identity(c, -1, false); }
int rel_lrn(TypeRelCtx *c) { return axis_identity(c, 1, true); }

/* TVM's relation is Identity: either direction. */
int rel_l2_normalize(TypeRelCtx *c) {
  const Type *a = io_type(c, true);
  if (!a) return rel_pending(c);
  if (!rel_assign(c, 0, (Type *)a)) return REL_FAIL;
  int64_t axes[16];
  int32_t n = rel_attr_ints(c, "axis", axes, 16);
  for (int32_t i = 0; i < n; i++) {
    int64_t x = axes[i];
    if (x == REL_INT_NONE || x == REL_INT_ANY || !rel_norm_axis(&x, a->tensor.ndim))
      return rel_fail(c, "axis %lld is out of range for %s", (long long)axes[i], rel_type_str(c, a));
  }
  return done(c, (Type *)a);
}

/* ------------------------------------------------------------------- losses */

/* nn.cross_entropy(x, y), nn.cross_entropy_with_logits(x, y) (spec/gradient.md
 * 5.6): two rank-2 tensors of one shape and dtype (TVM does not compare the
 * dtypes; relayc does) -> a scalar of that dtype. */
int rel_cross_entropy(TypeRelCtx *c) {
  const Type *x, *y;
  if (!rel_tensors(c, 2, &x, &y)) return rel_pending(c);
  if (x->tensor.ndim != 2 || y->tensor.ndim != 2)
    return rel_fail(c, "both inputs must have rank 2, found %s and %s", rel_type_str(c, x), rel_type_str(c, y));
  for (int i = 0; i < 2; i++)
    if (!dim_compat(x->tensor.dims[i], y->tensor.dims[i]))
      return rel_fail(c, "the inputs must have the same shape, found %s and %s", rel_type_str(c, x),
                      rel_type_str(c, y));
  if (!dtype_eq(x->tensor.dtype, y->tensor.dtype))
    return rel_fail(c, "the inputs must have the same dtype, found %s and %s", rel_type_str(c, x),
                    rel_type_str(c, y));
  return done(c, rel_new_tensor(c, x->tensor.dtype, 0));
}

/* nn.nll_loss(predictions (N, C, d...), targets (N, d...), weights (C)) (TVM's NLLLossRel):
 * predictions and weights of one float dtype, integer targets one rank lower, weights a
 * vector of C. relayc also requires the targets' extents to be the predictions' without C
 * (the kernel reads predictions there) and a reduction it knows. Result: the targets' shape
 * for "none", else a scalar, of the predictions' dtype. */
int rel_nll_loss(TypeRelCtx *c) {
  const Type *p, *t, *w;
  if (!rel_tensors(c, 3, &p, &t, &w)) return rel_pending(c);
  if (p->tensor.ndim < 2 || p->tensor.ndim != t->tensor.ndim + 1)
    return rel_fail(c, "predictions (N, C, d...) must be one rank above the targets, found %s and %s",
                    rel_type_str(c, p), rel_type_str(c, t));
  if (w->tensor.ndim != 1 || !dim_compat(w->tensor.dims[0], p->tensor.dims[1]))
    return rel_fail(c, "weights must be a vector of one weight per class (axis 1 of the predictions %s), found %s",
                    rel_type_str(c, p), rel_type_str(c, w));
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    if (!dim_compat(t->tensor.dims[i], p->tensor.dims[i ? i + 1 : 0]))
      return rel_fail(c, "targets %s must have the predictions' extents without axis 1, %s",
                      rel_type_str(c, t), rel_type_str(c, p));
  if (!dtype_is_float(p->tensor.dtype) || !dtype_eq(p->tensor.dtype, w->tensor.dtype))
    return rel_fail(c, "predictions and weights must have one float dtype, found %s and %s",
                    rel_type_str(c, p), rel_type_str(c, w));
  if (t->tensor.dtype.code != DT_INT) return rel_fail(c, "targets must have an int dtype, found %s", rel_type_str(c, t));
  const char *red = rel_attr_str(c, "reduction", "mean");
  if (strcmp(red, "none") && strcmp(red, "mean") && strcmp(red, "sum"))
    return rel_fail(c, "reduction must be \"none\", \"mean\" or \"sum\", got \"%s\"", red);
  if (!strcmp(red, "none")) return done(c, rel_retype(c, t, p->tensor.dtype));
  return done(c, rel_new_tensor(c, p->tensor.dtype, 0));
}

/* ------------------------------------------------------------------ padding */

/* nn.pad accepts negative widths (they crop, as in TVM) as long as every
 * extent stays >= 0; nn.mirror_pad requires widths >= 0. */
static int pad_common(TypeRelCtx *c, const Type *a, bool allow_negative) {
  const AttrValue *pw = rel_attr(c, "pad_width");
  if (!pw || pw->kind != AV_ARRAY) return rel_fail(c, "pad_width must be a list of [before, after] pairs");
  if (pw->arr.n != a->tensor.ndim)
    return rel_fail(c, "pad_width has %u entries but the input has rank %u", pw->arr.n, a->tensor.ndim);
  Type *o = rel_retype(c, a, a->tensor.dtype);
  for (uint32_t i = 0; i < pw->arr.n; i++) {
    const AttrValue *p = pw->arr.items[i];
    if (p->kind != AV_ARRAY || p->arr.n != 2 || p->arr.items[0]->kind != AV_INT || p->arr.items[1]->kind != AV_INT)
      return rel_fail(c, "pad_width entry %u must be a pair of integers", i);
    int64_t b = p->arr.items[0]->i.value, e = p->arr.items[1]->i.value;
    if (!allow_negative && (b < 0 || e < 0)) return rel_fail(c, "negative padding on axis %u", i);
    int64_t be, ext;
    if (__builtin_add_overflow(b, e, &be)) return rel_fail(c, "pad_width entry %u is too large", i);
    Dim d = a->tensor.dims[i];
    if (dim_known(d)) {
      if (__builtin_add_overflow(d.value, be, &ext)) return rel_fail(c, "pad_width entry %u is too large", i);
      if (ext < 0)
        return rel_fail(c, "padding [%lld, %lld] on axis %u leaves a negative extent (%lld)", (long long)b,
                        (long long)e, i, (long long)ext);
    }
    o->tensor.dims[i] = dim_add(c, d, be);
  }
  return done(c, o);
}

int rel_pad(TypeRelCtx *c) {
  const Type *a, *v;
  if (!rel_tensors(c, 2, &a, &v)) return rel_pending(c);
  if (rel_pad_value_mode(c, v)) return REL_FAIL;
  return pad_common(c, a, true);
}

int rel_mirror_pad(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  const char *mode = rel_attr_str(c, "mode", "SYMMETRIC");
  if (strcmp(mode, "SYMMETRIC") && strcmp(mode, "REFLECT")) return rel_fail(c, "unknown mode \"%s\"", mode);
  return pad_common(c, a, false);
}

/* ----------------------------------------------------------------- resizing */

static int hw_positions(TypeRelCtx *c, const Type *a, int *h, int *w) {
  const char *l = rel_attr_str(c, "layout", "NCHW");
  if (!rel_layout_primal(l) || strlen(l) != a->tensor.ndim)
    return rel_fail(c, "layout \"%s\" does not fit the input %s", l, rel_type_str(c, a));
  *h = rel_layout_pos(l, 'H');
  *w = rel_layout_pos(l, 'W');
  if (*h < 0 || *w < 0) return rel_fail(c, "layout \"%s\" has no H and W axes", l);
  return REL_DONE;
}

/* image.resize1d/2d/3d (TVM's Resize1DRel / Resize2DRel / Resize3DRel): the spatial
 * letters (`letters`) of the layout (default `dflt`, unsplit axes) take the size
 * attribute's values, one per letter; the roi of resize1d/3d has 2 / 6 values (TVM
 * checks it; resize2d's is read only by tf_crop_and_resize, as before). */
static int resize_image(TypeRelCtx *c, const char *letters, const char *dflt) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  const char *l = rel_attr_str(c, "layout", dflt);
  if (!rel_layout_primal(l) || strlen(l) != a->tensor.ndim)
    return rel_fail(c, "layout \"%s\" does not fit the input %s", l, rel_type_str(c, a));
  int nsp = (int)strlen(letters);
  if (nsp == 2) {
    int h, w;
    if (hw_positions(c, a, &h, &w)) return REL_FAIL;
  }
  int64_t sz[4];
  if (rel_attr_ints(c, "size", sz, 4) != nsp) return rel_fail(c, "size must have %d value%s", nsp, nsp > 1 ? "s" : "");
  const AttrValue *roi = rel_attr(c, "roi");
  if (nsp != 2 && roi && roi->kind == AV_ARRAY && roi->arr.n != (uint32_t)(2 * nsp))
    return rel_fail(c, "roi must have %d values, got %u", 2 * nsp, roi->arr.n);
  Type *o = rel_retype(c, a, out_dtype(c, a->tensor.dtype));
  for (int k = 0; k < nsp; k++) {
    int p = rel_layout_pos(l, letters[k]);
    if (p < 0) return rel_fail(c, "layout \"%s\" has no %c axis", l, letters[k]);
    if (sz[k] < 1 && sz[k] != REL_INT_ANY) return rel_fail(c, "size must be positive");
    o->tensor.dims[p] = sz[k] == REL_INT_ANY ? dim_any() : dim_int(sz[k]);
  }
  return done(c, o);
}

int rel_resize1d(TypeRelCtx *c) { return resize_image(c, "W", "NCW"); }
int rel_resize2d(TypeRelCtx *c) { return resize_image(c, "HW", "NCHW"); }
int rel_resize3d(TypeRelCtx *c) { return resize_image(c, "DHW", "NCDHW"); }

/* image.crop_and_resize(data, boxes (B, 4), box_indices (B)) (TVM's CropAndResizeRel): the
 * data's N, H, W (layout: a permutation of NCHW) become B and crop_size; relayc also checks the
 * boxes (float, (B, 4)) and the box indices (int, (B)) the kernel reads. */
int rel_crop_and_resize(TypeRelCtx *c) {
  const Type *a, *b, *ix;
  if (!rel_tensors(c, 3, &a, &b, &ix)) return rel_pending(c);
  int h, w;
  if (hw_positions(c, a, &h, &w)) return REL_FAIL;
  const char *l = rel_attr_str(c, "layout", "NCHW");
  int n = rel_layout_pos(l, 'N');
  if (n < 0 || rel_layout_pos(l, 'C') < 0 || a->tensor.ndim != 4) return rel_fail(c, "layout \"%s\" is not a permutation of NCHW", l);
  if (b->tensor.ndim != 2 || !dim_compat(b->tensor.dims[1], dim_int(4)) || !dtype_is_float(b->tensor.dtype))
    return rel_fail(c, "boxes must be a float (B, 4) tensor, found %s", rel_type_str(c, b));
  if (ix->tensor.ndim != 1 || !dim_compat(ix->tensor.dims[0], b->tensor.dims[0]) || ix->tensor.dtype.code != DT_INT)
    return rel_fail(c, "box_indices must be an int vector of one index per box, found %s for %s", rel_type_str(c, ix),
                    rel_type_str(c, b));
  int64_t sz[4];
  if (rel_attr_ints(c, "crop_size", sz, 4) != 2) return rel_fail(c, "crop_size must have 2 values");
  if (sz[0] < 1 || sz[1] < 1) return rel_fail(c, "crop_size must be positive");
  Type *o = rel_retype(c, a, out_dtype(c, a->tensor.dtype));
  o->tensor.dims[n] = b->tensor.dims[0];
  o->tensor.dims[h] = dim_int(sz[0]);
  o->tensor.dims[w] = dim_int(sz[1]);
  return done(c, o);
}

/* image.affine_grid(data (N, 2, 3)) (TVM's AffineGridRel): (N, 2, H, W) for target_shape
 * (H, W), the data's float dtype; H and W at least 2 (topi's assertion, here a type error). */
int rel_affine_grid(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  if (a->tensor.ndim != 3 || !dim_compat(a->tensor.dims[1], dim_int(2)) || !dim_compat(a->tensor.dims[2], dim_int(3)) ||
      !dtype_is_float(a->tensor.dtype))
    return rel_fail(c, "data must be float affine matrices of shape (N, 2, 3), found %s", rel_type_str(c, a));
  int64_t ts[4];
  if (rel_attr_ints(c, "target_shape", ts, 4) != 2) return rel_fail(c, "target_shape must have 2 values");
  if (ts[0] < 2 || ts[1] < 2) return rel_fail(c, "target_shape extents must be at least 2");
  Type *o = rel_new_tensor(c, a->tensor.dtype, 4);
  o->tensor.dims[0] = a->tensor.dims[0];
  o->tensor.dims[1] = dim_int(2);
  o->tensor.dims[2] = dim_int(ts[0]);
  o->tensor.dims[3] = dim_int(ts[1]);
  return done(c, o);
}

/* image.grid_sample(data, grid) (TVM's GridSampleRel): NCHW data with a grid (N, 2, H', W') or
 * NCDHW data with a grid (N, 3, D', H', W') give (N, C, the grid's spatial extents) of the data's
 * dtype. relayc also checks what topi's compute reads and implements: float data and grid, the
 * grid's batch and coordinate axis, the layouts NCHW / NCDHW, method nearest / bilinear /
 * bicubic (2-D only), padding_mode zeros / border / reflection. */
int rel_grid_sample(TypeRelCtx *c) {
  const Type *a, *g;
  if (!rel_tensors(c, 2, &a, &g)) return rel_pending(c);
  uint32_t r = a->tensor.ndim;
  const char *l = rel_attr_str(c, "layout", "NCHW");
  if (!((r == 4 && !strcmp(l, "NCHW")) || (r == 5 && !strcmp(l, "NCDHW"))))
    return rel_fail(c, "layout \"%s\" with data %s: grid_sample takes NCHW or NCDHW data", l, rel_type_str(c, a));
  if (!dtype_is_float(a->tensor.dtype) || g->tensor.ndim != r || !dtype_is_float(g->tensor.dtype) ||
      !dim_compat(g->tensor.dims[0], a->tensor.dims[0]) || !dim_compat(g->tensor.dims[1], dim_int(r - 2)))
    return rel_fail(c, "data %s and grid %s: the grid must be float (N, %u, ...) of the data's rank and batch",
                    rel_type_str(c, a), rel_type_str(c, g), r - 2);
  const char *m = rel_attr_str(c, "method", "bilinear"), *p = rel_attr_str(c, "padding_mode", "zeros");
  if (strcmp(m, "nearest") && strcmp(m, "bilinear") && (strcmp(m, "bicubic") || r != 4))
    return rel_fail(c, "method \"%s\" is not nearest, bilinear or (2-D) bicubic", m);
  if (strcmp(p, "zeros") && strcmp(p, "border") && strcmp(p, "reflection"))
    return rel_fail(c, "padding_mode \"%s\" is not zeros, border or reflection", p);
  Type *o = rel_retype(c, a, a->tensor.dtype);
  for (uint32_t i = 2; i < r; i++) o->tensor.dims[i] = g->tensor.dims[i];
  return done(c, o);
}

/* round(extent * scale) as an extent; false unless it is in [0, 2^62]. */
static bool scaled_extent(int64_t extent, double scale, Dim *out) {
  double v = nearbyint((double)extent * scale);
  if (!(v >= 0 && v <= 0x1p62)) return false;
  *out = dim_int((int64_t)v);
  return true;
}

/* nn.upsampling3d (TVM's UpSampling3DRel): D, H, W become nearbyint(extent · scale). */
int rel_upsampling3d(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  const char *l = rel_attr_str(c, "layout", "NCDHW");
  if (!rel_layout_primal(l) || strlen(l) != a->tensor.ndim)
    return rel_fail(c, "layout \"%s\" does not fit the input %s", l, rel_type_str(c, a));
  static const char *const keys[3] = {"scale_d", "scale_h", "scale_w"};
  Type *o = rel_retype(c, a, a->tensor.dtype);
  for (int k = 0; k < 3; k++) {
    int p = rel_layout_pos(l, "DHW"[k]);
    if (p < 0) return rel_fail(c, "layout \"%s\" has no %c axis", l, "DHW"[k]);
    double s = rel_attr_double(c, keys[k], 1);
    if (!(s > 0)) return rel_fail(c, "scales must be positive");
    Dim d = a->tensor.dims[p];
    if (dim_known(d) && !scaled_extent(d.value, s, &o->tensor.dims[p])) return rel_fail(c, "the scaled extents are out of range");
    if (!dim_known(d)) o->tensor.dims[p] = dim_any();
  }
  const char *m = rel_attr_str(c, "method", "nearest_neighbor");
  if (strcmp(m, "nearest_neighbor") && strcmp(m, "trilinear")) return rel_fail(c, "unknown method \"%s\"", m);
  const char *cm = rel_attr_str(c, "coordinate_transformation_mode", "half_pixel");
  if (strcmp(cm, "half_pixel") && strcmp(cm, "align_corners") && strcmp(cm, "asymmetric"))
    return rel_fail(c, "unknown coordinate_transformation_mode \"%s\"", cm);
  return done(c, o);
}

int rel_upsampling(TypeRelCtx *c) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  int h, w;
  if (hw_positions(c, a, &h, &w)) return REL_FAIL;
  double sh = rel_attr_double(c, "scale_h", 1), sw = rel_attr_double(c, "scale_w", 1);
  if (!(sh > 0) || !(sw > 0)) return rel_fail(c, "scales must be positive");
  Type *o = rel_retype(c, a, a->tensor.dtype);
  Dim H = a->tensor.dims[h], W = a->tensor.dims[w];
  if ((dim_known(H) && !scaled_extent(H.value, sh, &o->tensor.dims[h])) ||
      (dim_known(W) && !scaled_extent(W.value, sw, &o->tensor.dims[w])))
    return rel_fail(c, "the scaled extents are out of range");
  if (!dim_known(H)) o->tensor.dims[h] = dim_any();
  if (!dim_known(W)) o->tensor.dims[w] = dim_any();
  return done(c, o);
}
