/* ops/kernels/k_tconv_dw.h — strided depthwise transposed convolution by stride phase.
 *
 * The data gradient of a strided depthwise convolution is a depthwise
 * conv2d_transpose with strides s > 1: y[oh] = Σ x[ih]·w[r] over ih·s + r·d − plo = oh
 * (per spatial axis, dilation d). Splitting the output by phase p = oh mod s, every
 * output of one phase reads the same taps, those with r·d ≡ p + plo (mod s), so the phase
 * plane y[p::s] is a small dense stride-1 correlation of x with the sub-kernel of
 * those taps: no zeros are multiplied (a zero-spread input costs s² times the
 * multiply-adds). Float32, one input and one output channel per group, 2-D
 * (1-D as H = 1).
 *
 *   KtdwGeom g = {.planes = N * C, .C = C, .in = {H, W}, .out = {OH, OW},
 *                 .k = {kh, kw}, .st = {2, 2}, .dil = {1, 1}, .plo = {1, 1}};
 *   if (ktdw_fits(&g)) ok = ktdw_run(&g, x, w, y);   // w: C kernels of kh·kw floats
 */
#ifndef RELAYC_OPS_K_TCONV_DW_H
#define RELAYC_OPS_K_TCONV_DW_H

#include <stdbool.h>
#include <stdint.h>

typedef struct KtdwGeom {
  int64_t planes; /* N·C input planes, plane i of channel i mod C */
  int64_t C;      /* channels (weights: C kernels of k[0]·k[1] floats) */
  int64_t in[2];  /* (H, W) of x */
  int64_t out[2]; /* (OH, OW) of y */
  int64_t k[2];   /* kernel extents */
  int64_t st[2];  /* strides (≥ 1) */
  int64_t dil[2]; /* dilations (≥ 1) */
  int64_t plo[2]; /* padding before (top, left), 0 ≤ plo ≤ (k − 1)·dil */
} KtdwGeom;

/* True when the geometry is one this engine takes (non-empty planes, padding
 * within the window, a padded plane of a sane size). */
bool ktdw_fits(const KtdwGeom *g);
/* y = the transposed convolution of x with w (every y element written);
 * false when scratch memory cannot be had (nothing reported: the caller does). */
bool ktdw_run(const KtdwGeom *g, const float *x, const float *w, float *y);

#endif
