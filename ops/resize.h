/* ops/resize.h — the interpolation of image.resize1d/2d/3d, nn.upsampling and
 * nn.upsampling3d (spec/ops.md), shared by their kernels (ops/kernels/k_nn.c)
 * and their gradient rules (ops/gradients/grad_pool.c), so the adjoint is the
 * transpose of exactly the taps the forward reads.
 *
 * A resize is separable: along each spatial axis, output position i reads at
 * most four input positions (the taps) with float32 weights computed in
 * float32 coordinates, as TVM's topi does. Tap indices are clamped into the
 * input; tf_crop_and_resize marks a coordinate outside the image `outside`
 * (the forward writes extrapolation_value there, the adjoint nothing).
 */
#ifndef RELAYC_OPS_RESIZE_H
#define RELAYC_OPS_RESIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ast.h"

typedef enum { RM_NEAREST, RM_LINEAR, RM_CUBIC } ResizeMethod;
typedef enum {
  CT_HALF_PIXEL,
  CT_ALIGN_CORNERS,
  CT_ASYMMETRIC,
  CT_PYTORCH_HALF_PIXEL,
  CT_TF_HALF_PIXEL_NN,
  CT_TF_CROP
} ResizeCoord;
typedef enum { RD_ROUND, RD_PREFER_FLOOR, RD_PREFER_CEIL, RD_FLOOR, RD_CEIL } ResizeRounding;

typedef struct ResizeCfg {
  ResizeMethod method;
  ResizeCoord mode;
  ResizeRounding rounding;
  float alpha;   /* cubic_alpha */
  bool exclude;  /* cubic_exclude */
  double extrap; /* extrapolation_value */
  float start[3], end[3]; /* tf_crop_and_resize: the roi's bounds per spatial axis (D, H, W order) */
} ResizeCfg;

typedef struct ResizeTaps {
  int64_t idx[4];
  float w[4];
  int n;
  bool outside; /* tf_crop_and_resize: the coordinate left the image */
} ResizeTaps;

/* Which attribute resize_parse / resize_parse_3d rejected. */
typedef enum { RESIZE_OK, RESIZE_BAD_METHOD, RESIZE_BAD_COORD, RESIZE_BAD_ROUNDING } ResizeParse;

/* "nearest_neighbor", "linear"/"bilinear", "cubic"/"bicubic". */
bool resize_parse_method(const char *m, ResizeMethod *out);

/* image.resize1d/2d/3d's (nsp spatial axes) method, coordinate_transformation_mode,
 * rounding_method ("" = round with align_corners, else floor) and roi (2·nsp numbers, or
 * NULL) into cfg; alpha, exclude and extrap are left as given. The roi is TVM's: 1-D
 * (start_w, end_w), 2-D (start_h, start_w, end_h, end_w), 3-D as topi's resize3d reads it,
 * (start_w, start_h, start_d, end_w, end_h, end_d). */
ResizeParse resize_parse(ResizeCfg *cfg, int nsp, const char *method, const char *coord, const char *rounding,
                         const AttrValue *roi);

/* nn.upsampling3d's method (nearest_neighbor or trilinear) and
 * coordinate_transformation_mode (half_pixel, align_corners, asymmetric);
 * nearest rounds with align_corners, else floors. */
ResizeParse resize_parse_3d(ResizeCfg *cfg, const char *method, const char *coord);

/* The taps of output position i along an axis of `in` input and `out`
 * output positions; start/end: the roi's bounds on that axis. */
void resize_axis_taps(const ResizeCfg *cfg, int64_t i, int64_t in, int64_t out, float start, float end,
                      ResizeTaps *t);

#endif
