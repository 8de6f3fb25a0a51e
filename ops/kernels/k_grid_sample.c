/* ops/kernels/k_grid_sample.c — image.grid_sample (TVM's): data (N, C, [D,] H, W) sampled at
 * the grid's normalised coordinates, grid (N, 2 or 3, [D',] H', W') with grid[:, 0] the x (W)
 * coordinate, grid[:, 1] y (H) and grid[:, 2] z (D); the result is (N, C, [D',] H', W').
 *
 * A coordinate v maps to (v + 1)(n − 1)/2 (align_corners) or (v + 1)n/2 − 1/2. padding_mode
 * border clips it into [0, n − 1]; reflection reflects it about the image's edges ([0, n − 1]
 * with align_corners, [−1/2, n − 1/2] without) until it is inside, then clips. nearest rounds
 * half away from zero; bilinear (trilinear in 3-D) weights the 2^d neighbours; bicubic (2-D)
 * the 4 × 4 around the unpadded coordinate with Keys' weights at −0.75, each tap index clipped
 * (border) or reflected and clipped (reflection). Pixels outside the image read 0, and so does
 * a coordinate that is not a finite number of reasonable size. Coordinates are computed in
 * double, the result rounded to the data's dtype (topi's definition, its reference in numpy).
 */
#include <math.h>
#include <string.h>

#include "ops/kernels/k_util.h"

typedef enum { GS_NEAREST, GS_LINEAR, GS_CUBIC } GsMethod;
typedef enum { GS_ZEROS, GS_BORDER, GS_REFLECT } GsPad;

/* What every sample needs: the attributes, the input's spatial extents (the last nsp of
 * D, H, W) and the data of one (image, channel) plane. */
typedef struct GsCfg {
  GsMethod method;
  GsPad pad;
  bool align;
  int nsp;
  int64_t in[3], plane; /* extents in D, H, W order (3-D) or H, W (2-D); elements per plane */
  const Tensor *x;
} GsCfg;

/* Beyond this a coordinate is treated as outside (also NaN): keeps the integer casts defined. */
#define GS_FAR 1e15

static double gs_unnormalize(const GsCfg *g, double v, int64_t n) {
  return g->align ? (v + 1) * (double)(n - 1) / 2 : -0.5 + (v + 1) * (double)n / 2;
}

static double gs_clip(double x, int64_t n) { return x < 0 ? 0 : x > (double)(n - 1) ? (double)(n - 1) : x; }

static double gs_reflect(const GsCfg *g, double x, int64_t n) {
  double lo = g->align ? 0 : -0.5, span = g->align ? (double)(n - 1) : (double)n;
  if (x >= lo && x <= lo + span) return x;
  if (span <= 0) return lo;
  double d = fabs(x - lo), times = floor(d / span), extra = d - times * span;
  return fmod(times, 2) == 0 ? extra + lo : span - extra + lo;
}

/* The source coordinate on spatial axis k for nearest / linear sampling. */
static double gs_source(const GsCfg *g, double v, int k) {
  double x = gs_unnormalize(g, v, g->in[k]);
  if (g->pad == GS_REFLECT) x = gs_clip(gs_reflect(g, x, g->in[k]), g->in[k]);
  else if (g->pad == GS_BORDER) x = gs_clip(x, g->in[k]);
  return x;
}

/* The value at integer position idx (nsp entries) of plane base, 0 outside the image. */
static double gs_pixel(const GsCfg *g, int64_t base, const int64_t *idx) {
  int64_t off = 0;
  for (int k = 0; k < g->nsp; k++) {
    if (idx[k] < 0 || idx[k] >= g->in[k]) return 0;
    off = off * g->in[k] + idx[k];
  }
  return tensor_get_f64(g->x, base + off);
}

static double gs_nearest(const GsCfg *g, int64_t base, const double *src) {
  int64_t idx[3];
  for (int k = 0; k < g->nsp; k++) idx[k] = (int64_t)(src[k] > 0 ? src[k] + 0.5 : src[k] - 0.5);
  return gs_pixel(g, base, idx);
}

static double gs_linear(const GsCfg *g, int64_t base, const double *src) {
  double v = 0;
  for (int corner = 0; corner < (1 << g->nsp); corner++) {
    int64_t idx[3];
    double w = 1;
    for (int k = 0; k < g->nsp; k++) {
      double f = floor(src[k]), u = src[k] - f;
      int bit = (corner >> (g->nsp - 1 - k)) & 1;
      idx[k] = (int64_t)f + bit;
      w *= bit ? u : 1 - u;
    }
    v += w * gs_pixel(g, base, idx);
  }
  return v;
}

/* Keys' cubic weights at fraction t for the taps floor − 1 .. floor + 2, A = −0.75. */
static void gs_cubic_weights(double t, double *w) {
  const double A = -0.75;
  double s[4] = {t + 1, t, 1 - t, 2 - t};
  for (int i = 0; i < 4; i++) {
    double x = s[i];
    w[i] = (i == 1 || i == 2) ? ((A + 2) * x - (A + 3)) * x * x + 1 : ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  }
}

/* A bicubic tap index on axis k under the padding mode (zeros: as it is). */
static int64_t gs_cubic_tap(const GsCfg *g, int64_t i, int k) {
  if (g->pad == GS_BORDER) return (int64_t)gs_clip((double)i, g->in[k]);
  if (g->pad == GS_REFLECT) return (int64_t)gs_clip(gs_reflect(g, (double)i, g->in[k]), g->in[k]);
  return i;
}

static double gs_cubic(const GsCfg *g, int64_t base, const double *raw) {
  double wy[4], wx[4], fy = floor(raw[0]), fx = floor(raw[1]), v = 0;
  gs_cubic_weights(raw[0] - fy, wy);
  gs_cubic_weights(raw[1] - fx, wx);
  for (int i = 0; i < 4; i++) {
    double row = 0;
    for (int j = 0; j < 4; j++) {
      int64_t idx[2] = {gs_cubic_tap(g, (int64_t)fy - 1 + i, 0), gs_cubic_tap(g, (int64_t)fx - 1 + j, 1)};
      row += wx[j] * gs_pixel(g, base, idx);
    }
    v += wy[i] * row;
  }
  return v;
}

static bool gs_parse(KernelCtx *c, GsCfg *g) {
  const char *m = kernel_attr_str(c, "method", "bilinear"), *p = kernel_attr_str(c, "padding_mode", "zeros");
  if (!strcmp(m, "nearest")) g->method = GS_NEAREST;
  else if (!strcmp(m, "bilinear")) g->method = GS_LINEAR;
  else if (!strcmp(m, "bicubic") && g->nsp == 2) g->method = GS_CUBIC;
  else return kernel_fail(c, "image.grid_sample: unsupported method \"%s\"", m), false;
  if (!strcmp(p, "zeros")) g->pad = GS_ZEROS;
  else if (!strcmp(p, "border")) g->pad = GS_BORDER;
  else if (!strcmp(p, "reflection")) g->pad = GS_REFLECT;
  else return kernel_fail(c, "image.grid_sample: unknown padding_mode \"%s\"", p), false;
  g->align = kernel_attr_bool(c, "align_corners", true);
  return true;
}

int kernel_IMAGE_GRID_SAMPLE(KernelCtx *c);
int kernel_IMAGE_GRID_SAMPLE(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *grid = c->inputs[1];
  GsCfg g = {.x = x, .nsp = x->ndim - 2};
  if ((x->ndim != 4 && x->ndim != 5) || grid->ndim != x->ndim || grid->shape[0] != x->shape[0] ||
      grid->shape[1] != g.nsp || !dtype_is_float(x->dtype) || !dtype_is_float(grid->dtype))
    return kernel_fail(c, "image.grid_sample: needs float data (N, C, spatial...) and a grid (N, %d, ...)", g.nsp);
  if (!gs_parse(c, &g)) return KERNEL_ERROR;
  int64_t N = x->shape[0], C = x->shape[1], oshape[5] = {N, C}, npos = 1;
  g.plane = 1;
  for (int k = 0; k < g.nsp; k++) {
    g.in[k] = x->shape[2 + k];
    g.plane *= g.in[k];
    oshape[2 + k] = grid->shape[2 + k];
    npos *= oshape[2 + k];
  }
  Tensor *o = kernel_output(c, x->dtype, x->ndim, oshape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(o->dtype);
  for (int64_t n = 0; n < N; n++)
    for (int64_t q = 0; q < npos; q++) {
      double raw[3], src[3];
      bool far = false;
      for (int k = 0; k < g.nsp; k++) { /* grid channel nsp-1-k holds axis k (x is channel 0) */
        double v = tensor_get_f64(grid, (n * g.nsp + (g.nsp - 1 - k)) * npos + q);
        raw[k] = gs_unnormalize(&g, v, g.in[k]);
        src[k] = gs_source(&g, v, k);
        far |= !(fabs(raw[k]) < GS_FAR);
      }
      for (int64_t ch = 0; ch < C; ch++) {
        int64_t base = (n * C + ch) * g.plane;
        double v = far ? 0
                       : g.method == GS_NEAREST ? gs_nearest(&g, base, src)
                       : g.method == GS_LINEAR  ? gs_linear(&g, base, src)
                                                : gs_cubic(&g, base, raw);
        ku_cast(DT_F64, &v, o->dtype, (char *)o->data + (size_t)((n * C + ch) * npos + q) * es);
      }
    }
  return KERNEL_OK;
}
