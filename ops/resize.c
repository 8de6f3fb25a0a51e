/* ops/resize.c — resize attributes and interpolation taps (see resize.h). */
#include "ops/resize.h"

#include <math.h>
#include <string.h>

bool resize_parse_method(const char *m, ResizeMethod *out) {
  if (!strcmp(m, "nearest_neighbor")) *out = RM_NEAREST;
  else if (!strcmp(m, "linear") || !strcmp(m, "bilinear")) *out = RM_LINEAR;
  else if (!strcmp(m, "cubic") || !strcmp(m, "bicubic")) *out = RM_CUBIC;
  else return false;
  return true;
}

static bool parse_coord(const char *cm, ResizeCoord *out) {
  static const char *const modes[] = {"half_pixel",           "align_corners",        "asymmetric",
                                      "pytorch_half_pixel",   "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  for (int i = 0; i < 6; i++)
    if (!strcmp(cm, modes[i])) {
      *out = (ResizeCoord)i;
      return true;
    }
  return false;
}

static bool parse_rounding(const char *rm, ResizeCoord mode, ResizeRounding *out) {
  if (!*rm) *out = mode == CT_ALIGN_CORNERS ? RD_ROUND : RD_FLOOR;
  else if (!strcmp(rm, "round")) *out = RD_ROUND;
  else if (!strcmp(rm, "round_prefer_floor")) *out = RD_PREFER_FLOOR;
  else if (!strcmp(rm, "round_prefer_ceil")) *out = RD_PREFER_CEIL;
  else if (!strcmp(rm, "floor")) *out = RD_FLOOR;
  else if (!strcmp(rm, "ceil")) *out = RD_CEIL;
  else return false;
  return true;
}

static float roi_item(const AttrValue *roi, int i) {
  const AttrValue *e = roi->arr.items[i];
  return (float)(e->kind == AV_FLOAT ? e->f.value : e->kind == AV_INT ? (double)e->i.value : 0);
}

ResizeParse resize_parse(ResizeCfg *cfg, int nsp, const char *method, const char *coord, const char *rounding,
                         const AttrValue *roi) {
  if (!resize_parse_method(method, &cfg->method)) return RESIZE_BAD_METHOD;
  if (!parse_coord(coord, &cfg->mode)) return RESIZE_BAD_COORD;
  if (!parse_rounding(rounding, cfg->mode, &cfg->rounding)) return RESIZE_BAD_ROUNDING;
  if (roi && roi->kind == AV_ARRAY && roi->arr.n == (uint32_t)(2 * nsp))
    for (int k = 0; k < nsp; k++) {
      int at = nsp == 3 ? 2 - k : k; /* topi's resize3d: W's bounds first */
      cfg->start[k] = roi_item(roi, at);
      cfg->end[k] = roi_item(roi, nsp + at);
    }
  return RESIZE_OK;
}

ResizeParse resize_parse_3d(ResizeCfg *cfg, const char *method, const char *coord) {
  if (!strcmp(method, "nearest_neighbor")) cfg->method = RM_NEAREST;
  else if (!strcmp(method, "trilinear")) cfg->method = RM_LINEAR;
  else return RESIZE_BAD_METHOD;
  if (!parse_coord(coord, &cfg->mode) || cfg->mode > CT_ASYMMETRIC) return RESIZE_BAD_COORD;
  cfg->rounding = cfg->mode == CT_ALIGN_CORNERS ? RD_ROUND : RD_FLOOR;
  return RESIZE_OK;
}

/* The source coordinate of output position i, in input positions. */
static float source_coord(const ResizeCfg *cfg, int64_t i, int64_t in, int64_t out, float start, float end) {
  float scale = (float)in / (float)out, fi = (float)i;
  switch (cfg->mode) {
  case CT_HALF_PIXEL: return (fi + 0.5f) * scale - 0.5f;
  case CT_ALIGN_CORNERS: return out > 1 ? fi * ((float)(in - 1) / (float)(out - 1)) : 0.f;
  case CT_ASYMMETRIC: return fi * scale;
  case CT_PYTORCH_HALF_PIXEL: return out > 1 ? (fi + 0.5f) * scale - 0.5f : 0.f;
  case CT_TF_HALF_PIXEL_NN: return (fi + 0.5f) * scale;
  case CT_TF_CROP:
    return out > 1 ? start * (float)(in - 1) + fi * (end - start) * (float)(in - 1) / (float)(out - 1)
                   : 0.5f * (start + end) * (float)(in - 1);
  }
  return 0;
}

static float round_nearest(ResizeRounding rd, float x) {
  switch (rd) {
  case RD_ROUND: return roundf(x);
  case RD_PREFER_FLOOR: return ceilf(x - 0.5f);
  case RD_PREFER_CEIL: return floorf(x + 0.5f);
  case RD_FLOOR: return floorf(x + 1e-5f);
  default: return ceilf(x - 1e-5f);
  }
}

/* Keys' cubic convolution weights at fraction u, optionally renormalised
 * over the taps inside the input (cubic_exclude). */
static void cubic_taps(const ResizeCfg *cfg, float x, int64_t in, ResizeTaps *t) {
  float f = floorf(x), u = x - f, a = cfg->alpha, u2 = u * u, u3 = u2 * u;
  t->n = 4;
  for (int k = 0; k < 4; k++) t->idx[k] = (int64_t)f - 1 + k;
  t->w[0] = a * (u3 - 2 * u2 + u);
  t->w[1] = (a + 2) * u3 - (3 + a) * u2 + 1;
  t->w[2] = -(a + 2) * u3 + (3 + 2 * a) * u2 - a * u;
  t->w[3] = -a * u3 + a * u2;
  if (!cfg->exclude) return;
  float s = 0;
  for (int k = 0; k < 4; k++) {
    if (t->idx[k] < 0 || t->idx[k] >= in) t->w[k] = 0;
    s += t->w[k];
  }
  if (s != 0)
    for (int k = 0; k < 4; k++) t->w[k] /= s;
}

void resize_axis_taps(const ResizeCfg *cfg, int64_t i, int64_t in, int64_t out, float start, float end,
                      ResizeTaps *t) {
  float x = source_coord(cfg, i, in, out, start, end);
  t->outside = cfg->mode == CT_TF_CROP && (x < 0 || x > (float)(in - 1));
  if (cfg->method == RM_NEAREST) {
    t->n = 1;
    t->idx[0] = (int64_t)round_nearest(cfg->rounding, x); /* tf_crop_and_resize too (topi: boxes only force round) */
    t->w[0] = 1;
  } else if (cfg->method == RM_LINEAR) {
    float f = floorf(x);
    t->n = 2;
    t->idx[0] = (int64_t)f;
    t->idx[1] = (int64_t)f + 1;
    t->w[1] = x - f;
    t->w[0] = 1.f - t->w[1];
  } else {
    cubic_taps(cfg, x, in, t);
  }
  for (int k = 0; k < t->n; k++) t->idx[k] = t->idx[k] < 0 ? 0 : t->idx[k] >= in ? in - 1 : t->idx[k];
}
