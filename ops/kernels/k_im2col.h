/* ops/kernels/k_im2col.h — what the GEMM convolution engines share (ops/kernels/k_conv.c,
 * k_conv_bwd.c): im2col for 1, 2 or 3 spatial dims, and the sum of the partial
 * results of a reduction cut into slices.
 *
 * A convolution of C input channels with a k0·k1·k2 window becomes a GEMM
 * against the column matrix cols[(C·k0·k1·k2) × P], one row per (channel,
 * tap) in that order, one column per output pixel (row-major over the
 * output's D, H, W). 1-D and 2-D convolutions are 3-D ones whose leading
 * extents are 1. Taps outside the input read 0.
 *
 *     KIm2col g = {.C = Cg, .in = {1, H, W}, .out = {1, OH, OW}, .k = {1, kh, kw},
 *                  .st = {1, sh, sw}, .dil = {1, dh, dw}, .plo = {0, pt, pl}};
 *     kim2col_f32(&g, x, p0, plen, cols);   // cols: (C·kh·kw) × plen, row stride plen
 */
#ifndef RELAYC_OPS_K_IM2COL_H
#define RELAYC_OPS_K_IM2COL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct KIm2col {
  int64_t C;                                          /* channels gathered */
  int64_t in[3], out[3], k[3], st[3], dil[3], plo[3]; /* (D, H, W) each; plo: padding before */
} KIm2col;

/* Fills cols[(C·k0·k1·k2) × plen] (row stride plen) for the output pixels
 * [p0, p0 + plen) from x, C contiguous planes of in[0]·in[1]·in[2]. */
void kim2col_f32(const KIm2col *g, const float *x, int64_t p0, int64_t plen, float *cols);
void kim2col_f64(const KIm2col *g, const double *x, int64_t p0, int64_t plen, double *cols);

/* dst[i] += src[0][i] + ... + src[nsrc − 1][i] (added in that order) for
 * i < n, float32 or float64, split over the thread pool. */
void kconv_add_partials(void *dst, void *const *src, int64_t nsrc, int64_t n, bool f64);

#endif
