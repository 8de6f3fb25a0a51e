/* ops/kernels/k_winograd.h — Winograd F(4×4, 3×3) for float32 3×3 stride-1 conv2d.
 *
 * kwino_conv2d computes an NCHW × OIHW convolution (kernel 3×3, stride 1,
 * dilation 1, groups 1, any padding) with the fused epilogue of
 * ops/kernels/k_conv.c (bias, residual, accumulate, ReLU) as three pool-threaded
 * passes: input tiles V = Bᵀ d B, 36 GEMMs M[ξ] = U[ξ] · V[ξ] through
 * kgemm_f32_serial (ops/kernels/k_gemm.h), output tiles Y = Aᵀ m A. The weight
 * transform U = G g Gᵀ of a module constant (w_const) is cached from its
 * second call on (keyed on the data pointer, shape and a sample checksum;
 * kwino_cache_free releases it); other weights are transformed every call.
 *
 * Call from the submitting thread only (not from pool chunk bodies).
 */
#ifndef RELAYC_OPS_K_WINOGRAD_H
#define RELAYC_OPS_K_WINOGRAD_H

#include <stdbool.h>
#include <stdint.h>

typedef struct KWinoArgs {
  int64_t N, C, O, H, W; /* data N×C×H×W, weight O×C×3×3 */
  int64_t pt, pl;        /* padding before (top, left); the afters are implied by OH, OW */
  int64_t OH, OW;        /* output extents: H + pt + pbottom − 2, W + pl + pright − 2 */
  const float *x, *w;
  float *y;              /* N×O×OH×OW */
  const float *bias;     /* per output channel, or NULL */
  const float *res;      /* residual shaped like y, added, or NULL */
  bool relu;             /* ReLU last */
  bool accumulate;       /* y already holds a residual: the result is added to it */
  bool w_const;          /* w is immutable for the rest of the run (module constant) */
} KWinoArgs;

/* True when Winograd is enabled (RELAYC_NO_WINOGRAD unset or 0) and
 * expected to beat the GEMM path for this shape. */
bool kwino_wanted(int64_t C, int64_t O, int64_t OH, int64_t OW);

/* Computes the convolution into a->y. False (y untouched) when a buffer
 * cannot be allocated, or on the first call with a constant weight (w_const:
 * it is only recorded; its transform is made and cached on the second call,
 * so a network run once pays nothing for it): the caller then uses another
 * engine. A weight that is not constant is transformed on every call. */
bool kwino_conv2d(const KWinoArgs *a);

/* Frees the weight-transform cache and the work buffers (tests, exit). */
void kwino_cache_free(void);

#endif
