/* ops/kernels/k_plane.h — phase-split padded planes: sliding windows as 1-D sweeps.
 *
 * Depthwise convolution and pooling slide a window with strides s, dilation
 * d and padding over a (D, H, W) plane. KPlane copies the plane, padded,
 * into s0·s1·s2 "phase" planes of Dq × Hq × Wq: padded position (z, y, x)
 * goes to phase (z mod s0, y mod s1, x mod s2) at (z / s0, y / s1, x / s2).
 * Then, for output (a, b, c), window tap t reads the phase buffer at
 * toff[t] + v with v = (a·Hq + b)·Wq + c: a constant offset per tap. A
 * kernel therefore computes a whole plane as unit-stride 1-D sweeps over v
 * in [0, vlen) (vlen16: rounded up to 16; the buffer has slack for that),
 * and keeps the entries with b < OH, c < OW (kplane_row gives output row
 * (a, b)'s start in the sweep).
 *
 * Positions outside the input (padding, and ceil-mode overhang up to the
 * last window) hold whatever the kernel filled the buffer with first
 * (0 for convolution, the lowest value for max pooling); kplane_fill only
 * writes the interior, so one fill of the border value per call serves every
 * plane of that call.
 */
#ifndef RELAYC_OPS_K_PLANE_H
#define RELAYC_OPS_K_PLANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct KPlane {
  int64_t in[3], out[3], k[3], st[3], dil[3], plo[3];
  int64_t Dq, Hq, Wq, phase, nph;
  int64_t ntaps, vlen, vlen16;
  int64_t *toff; /* ntaps offsets, mem_malloc'ed */
} KPlane;

/* True when the phase buffer of this geometry is of a sane size (at most
 * 2^28 floats, no overflow); otherwise use a plain loop instead. */
bool kplane_fits(const int64_t in[3], const int64_t out[3], const int64_t k[3],
                 const int64_t st[3], const int64_t dil[3], const int64_t plo[3],
                 const int64_t phi[3]);
/* Geometry from the window description (all (D, H, W) triples; out is the
 * caller's output extent). */
void kplane_init(KPlane *p, const int64_t in[3], const int64_t out[3], const int64_t k[3],
                 const int64_t st[3], const int64_t dil[3], const int64_t plo[3],
                 const int64_t phi[3]);
void kplane_free(KPlane *p);
/* Floats a phase buffer needs (phases plus the sweep's slack). */
/* dst[i] = src[2·i] for i < n, 16 at a time with a two-register shuffle
 * (stride-2 plane phases, stride-2 im2col rows). Reads src[0 .. 2n−2] only. */
void kplane_gather2(float *restrict dst, const float *restrict src, int64_t n);

size_t kplane_buffer_floats(const KPlane *p);
/* The per-thread buffers of a plane engine (kscratch slots 0 and 1, ops/kernels/k_gemm.h):
 * *pad, planes of pad_bytes, zeroed (their borders then stay 0 for every plane a thread
 * copies in); *vout, sweep buffers of vout_bytes. False when out of memory. */
bool kplane_scratch(size_t pad_bytes, size_t vout_bytes, float ***pad, float ***vout);
/* out[v] = Σ_t base[toff[t] + v] · wt[t] for v < len (a multiple of 16; ntaps may be 0:
 * zeros), the taps summed in order t = 0, 1, ... per lane: the register-blocked sweep of
 * the depthwise convolutions (reads base[toff[t] .. toff[t] + len − 1]). */
void kplane_sweep(float *restrict out, const float *restrict base, const int64_t *restrict toff,
                  const float *restrict wt, int64_t ntaps, int64_t len);
/* Copies one input plane (in[0]·in[1]·in[2] floats) into the buffer's interior. */
void kplane_fill(const KPlane *p, const float *x, float *buf);
/* Index in the sweep of output (a, b) row start: (a·Hq + b)·Wq. */
static inline int64_t kplane_row(const KPlane *p, int64_t a, int64_t b) {
  return (a * p->Hq + b) * p->Wq;
}

#endif
