/* ops/kernels/k_im2col.c — im2col: the gather that turns a convolution into a GEMM
 * (ops/kernels/k_im2col.h), shared by the forward convolutions (k_conv.c) and
 * nn.conv2d_backward_weight (k_conv_bwd.c).
 *
 * Row (c, a, r, s) of the column matrix holds, for every output pixel p of
 * the requested range, the input element that tap (a, r, s) of channel c
 * reads for p, or 0 in the padding. The walk advances the output position
 * row by row (no division per element); unit-stride runs are copied with a
 * loop (short 7×7 / 14×14 rows) or memcpy (long ones), stride-2 runs with
 * the two-register gather of ops/kernels/k_plane.h. KHOT: cloned per ISA level.
 * kconv_add_partials sums the private partial results of an engine whose
 * reduction was cut into slices (the weight gradient's pixel slices, the
 * transposed convolution's chunk slices) into the first one.
 */
#include "ops/kernels/k_im2col.h"

#include <string.h>

#include "ops/kernels/k_plane.h"
#include "ops/kernels/k_simd.h"
#include "runtime/threadpool.h"

/* NAME fills cols[(C·ksz) × plen] (row stride plen) for output pixels
 * [p0, p0+plen) of the C input planes at x. */
#define DEFINE_IM2COL(T, NAME)                                                                     \
  KHOT void NAME(const KIm2col *g, const T *restrict x, int64_t p0, int64_t plen,                  \
                 T *restrict cols) {                                                               \
    const int64_t OH = g->out[1], OW = g->out[2], H = g->in[1], W = g->in[2];                     \
    int64_t row = 0;                                                                               \
    for (int64_t ci = 0; ci < g->C; ci++)                                                          \
      for (int64_t a = 0; a < g->k[0]; a++)                                                        \
        for (int64_t r = 0; r < g->k[1]; r++)                                                      \
          for (int64_t s = 0; s < g->k[2]; s++, row++) {                                           \
            T *dst = cols + row * plen;                                                            \
            int64_t sw = g->st[2], offw = s * g->dil[2] - g->plo[2];                               \
            /* valid ow: 0 <= ow*sw + offw < W */                                                  \
            int64_t lo = offw >= 0 ? 0 : (-offw + sw - 1) / sw;                                    \
            int64_t hi = W - offw <= 0 ? 0 : (W - offw + sw - 1) / sw;                             \
            if (hi > OW) hi = OW;                                                                  \
            int64_t p = p0, end = p0 + plen;                                                       \
            /* output position of p, advanced row by row (no divisions per run) */                 \
            int64_t ow0 = p0 % OW, oh = (p0 / OW) % OH, od = p0 / OW / OH;                         \
            while (p < end) {                                                                      \
              int64_t n = OW - ow0;                                                                \
              if (n > end - p) n = end - p;                                                        \
              int64_t id = od * g->st[0] + a * g->dil[0] - g->plo[0];                              \
              int64_t ih = oh * g->st[1] + r * g->dil[1] - g->plo[1];                              \
              T *o = dst + (p - p0);                                                               \
              if (id < 0 || id >= g->in[0] || ih < 0 || ih >= H || lo >= hi) {                    \
                for (int64_t i = 0; i < n; i++) o[i] = 0;                                          \
              } else {                                                                             \
                const T *src = x + ((ci * g->in[0] + id) * H + ih) * W + offw;                     \
                int64_t a0 = lo > ow0 ? lo : ow0, a1 = hi < ow0 + n ? hi : ow0 + n;                \
                int64_t i = ow0;                                                                   \
                for (; i < a0 && i < ow0 + n; i++) o[i - ow0] = 0;                                 \
                if (sw == 1) { /* short runs (7×7, 14×14 maps): a loop, not a memcpy call */       \
                  if (a1 - a0 >= 64) memcpy(o + (a0 - ow0), src + a0, (size_t)(a1 - a0) * sizeof(T)); \
                  else                                                                             \
                    for (int64_t q = a0; q < a1; q++) o[q - ow0] = src[q];                         \
                  i = a1 > a0 ? a1 : i;                                                            \
                } else if (sizeof(T) == 4 && sw == 2 && a1 > i) {                                  \
                  kplane_gather2((float *)(o + (i - ow0)), (const float *)(src + i * 2), a1 - i);     \
                  i = a1;                                                                          \
                } else {                                                                           \
                  for (; i < a1; i++) o[i - ow0] = src[i * sw];                                    \
                }                                                                                  \
                for (; i < ow0 + n; i++) o[i - ow0] = 0;                                           \
              }                                                                                    \
              p += n;                                                                              \
              ow0 = 0;                                                                             \
              if (++oh == OH) {                                                                    \
                oh = 0;                                                                            \
                od++;                                                                              \
              }                                                                                    \
            }                                                                                      \
          }                                                                                        \
  }

DEFINE_IM2COL(float, kim2col_f32)
DEFINE_IM2COL(double, kim2col_f64)

typedef struct KAddJob {
  void *dst;
  void *const *src;
  int64_t nsrc;
  bool f64;
} KAddJob;

static void kadd_task(void *raw, int64_t lo, int64_t hi) {
  const KAddJob *j = raw;
  for (int64_t s = 0; s < j->nsrc; s++) {
    if (j->f64) {
      double *o = j->dst;
      const double *q = j->src[s];
      for (int64_t i = lo; i < hi; i++) o[i] += q[i];
    } else {
      float *o = j->dst;
      const float *q = j->src[s];
      for (int64_t i = lo; i < hi; i++) o[i] += q[i];
    }
  }
}

void kconv_add_partials(void *dst, void *const *src, int64_t nsrc, int64_t n, bool f64) {
  KAddJob j = {.dst = dst, .src = src, .nsrc = nsrc, .f64 = f64};
  if (nsrc > 0) threadpool_for(n, 4096, kadd_task, &j);
}
