/* ops/kernels/k_conv_bwd.c — nn.conv2d_backward_weight: the gradient of a 2-D
 * convolution with respect to its weight (spec/gradient.md 5.3).
 *
 *   dW[o, i, r, s] = Σ_{n, y, x} grad[n, o, y, x] · data[n, g(o)·Cg + i, y·sh − pt + r·dh, x·sw − pl + s·dw]
 *
 * (out-of-range data reads 0; g(o) = o / Og). Per group this is one GEMM
 * over the reduction index (n, pixel):
 *   dW_g[Og × Kg] = Σ_n grad_{n,g}[Og × P] · cols_{n,g}[Kg × P]ᵀ
 * with cols the im2col of the group's data (ops/kernels/k_im2col.h), Kg =
 * Cg·kh·kw, P = output pixels. The work is cut into units (group, block of
 * whole input channels = a block of dW's columns); a unit walks the
 * reduction in chunks of pixels, gathers its rows of cols for the chunk into
 * a per-thread scratch and accumulates one single-threaded sgemm (op(B) =
 * Bᵀ) into its block of dW, so units never write the same memory. When
 * there are fewer units than 4 per thread, the reduction is also split into
 * slices that accumulate into private partial results, summed at the end;
 * slices (of at least BW_MIN_SLICE pixels) are preferred to blocks narrower
 * than the whole weight row, whose GEMMs are only a few columns wide.
 * A 1×1, stride-1, unpadded convolution uses the data itself as cols.
 * Depthwise-style groups (one input channel per group) skip the GEMM: per
 * output channel, kh·kw dot products of the gradient plane with the tap
 * rows. float32 reads the taps from a zero-padded copy of the data plane
 * (ops/kernels/k_plane.h) against the gradient laid out as the same sweep
 * (8-float accumulators, ops/kernels/k_vec8.h); float64 (and planes too big
 * for k_plane) gathers the taps with im2col first. Small groups in float32
 * (2-16 channels in and out, ResNeXt's 3×3) use the same sweeps a group at a
 * time: each of its data planes padded once per image, each gradient plane
 * dotted with every one of them, instead of GEMMs only Og rows tall.
 *
 * Layouts (the attributes re-purposed as in TVM): data_layout is grad's
 * (NCHW), kernel_layout data's (its default OIHW reads as NCHW), out_layout
 * the result's ("" = OIHW); other layouts, split ones included, are
 * converted to the canonical ones (ops/layout.h) and back. float32 and
 * float64 compute natively (both inputs in the wider of their dtypes);
 * float16/bfloat16 go through float32 and the result is rounded to the
 * output dtype. Integer inputs are a run-time error.
 */
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_gemm.h"
#include "ops/kernels/k_im2col.h"
#include "ops/kernels/k_plane.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_vec8.h"
#include "ops/kernels/k_util.h"
#include "ops/layout.h"
#include "runtime/bufpool.h"
#include "runtime/threadpool.h"

typedef struct BwGeom {
  int64_t N, C, O, G, Cg, Og, H, W, OH, OW;
  int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int64_t ksz, Kg, P, isz;
} BwGeom;

typedef struct BwJob {
  const BwGeom *g;
  const void *grad, *data;
  void *out;       /* O × Kg result */
  void **partial;  /* slice s > 0 accumulates into partial[s - 1] (O × Kg each) */
  bool f64, direct;
  int64_t cb, ncb;         /* input channels per unit, units per group */
  int64_t pc, npc;         /* pixels per reduction chunk, chunks per image */
  int64_t nslice;          /* reduction slices */
  void **scratch;          /* per thread: cols block (cb·ksz × pc) */
} BwJob;

static KIm2col bw_im2col(const BwGeom *g, int64_t nch) {
  return (KIm2col){.C = nch,
                   .in = {1, g->H, g->W},
                   .out = {1, g->OH, g->OW},
                   .k = {1, g->kh, g->kw},
                   .st = {1, g->sh, g->sw},
                   .dil = {1, g->dh, g->dw},
                   .plo = {0, g->pt, g->pl}};
}

/* One unit × slice: dW[g, :, c0·ksz .. c1·ksz) += Σ over the slice's chunks. */
static void bw_gemm_task(void *raw, int64_t lo, int64_t hi) {
  const BwJob *j = raw;
  const BwGeom *g = j->g;
  size_t es = j->f64 ? 8 : 4;
  int64_t R = g->N * j->npc; /* reduction chunks */
  for (int64_t t = lo; t < hi; t++) {
    int64_t s = t % j->nslice, unit = t / j->nslice;
    int64_t gi = unit / j->ncb, c0 = (unit % j->ncb) * j->cb;
    int64_t nch = g->Cg - c0 < j->cb ? g->Cg - c0 : j->cb, kb = nch * g->ksz;
    int64_t r0 = s * R / j->nslice, r1 = (s + 1) * R / j->nslice;
    char *dst = s == 0 ? j->out : j->partial[s - 1];
    char *C = dst + (size_t)(gi * g->Og * g->Kg + c0 * g->ksz) * es;
    KIm2col ig = bw_im2col(g, nch);
    void *cols = j->scratch ? j->scratch[threadpool_thread_index()] : NULL;
    for (int64_t r = r0; r < r1; r++) {
      int64_t n = r / j->npc, p0 = (r % j->npc) * j->pc;
      int64_t plen = g->P - p0 < j->pc ? g->P - p0 : j->pc;
      const char *x = (const char *)j->data + (size_t)((n * g->C + gi * g->Cg + c0) * g->isz) * es;
      const char *A = (const char *)j->grad + (size_t)((n * g->O + gi * g->Og) * g->P + p0) * es;
      const char *B;
      int64_t ldb;
      if (j->direct) {
        B = x + (size_t)p0 * es;
        ldb = g->isz;
      } else {
        if (j->f64) kim2col_f64(&ig, (const double *)x, p0, plen, cols);
        else kim2col_f32(&ig, (const float *)x, p0, plen, cols);
        B = cols;
        ldb = plen;
      }
      if (j->f64)
        kgemm_f64_serial(false, true, g->Og, kb, plen, (const double *)A, g->P, (const double *)B, ldb,
                         r == r0 ? 0.0 : 1.0, (double *)C, g->Kg);
      else if (r == r0)
        kgemm_f32_serial_over(false, true, g->Og, kb, plen, (const float *)A, g->P, (const float *)B, ldb,
                              (float *)C, g->Kg);
      else
        kgemm_f32_serial(false, true, g->Og, kb, plen, (const float *)A, g->P, (const float *)B, ldb, 1.0f,
                         (float *)C, g->Kg);
    }
    if (r0 == r1) { /* an empty slice (no pixels): its block holds 0 */
      for (int64_t o = 0; o < g->Og; o++) memset(C + (size_t)(o * g->Kg) * es, 0, (size_t)kb * es);
    }
  }
}

/* ---- one input channel per group: dot products, no GEMM ---------------------------- */

/* acc[t] += Σ_p gp[p] · cols[t·P + p] for t < ntaps (16-lane partial sums). */
static KHOT void bw_dots_f32(double *restrict acc, const float *restrict gp, const float *restrict cols,
                            int64_t ntaps, int64_t P) {
  for (int64_t t = 0; t < ntaps; t++) {
    const float *c = cols + t * P;
    kv16 v = kv_splat(0);
    int64_t p = 0;
    for (; p + 16 <= P; p += 16) v += kv_load(gp + p) * kv_load(c + p);
    float s = 0;
    for (; p < P; p++) s += gp[p] * c[p];
    for (int k = 0; k < 16; k++) s += v[k];
    acc[t] += (double)s;
  }
}

static void bw_dots_f64(double *restrict acc, const double *restrict gp, const double *restrict cols,
                        int64_t ntaps, int64_t P) {
  for (int64_t t = 0; t < ntaps; t++) {
    const double *c = cols + t * P;
    double s = 0;
    for (int64_t p = 0; p < P; p++) s += gp[p] * c[p];
    acc[t] += s;
  }
}

/* Unit = output channel o: its input channel's taps gathered once per image,
 * dotted with grad's plane; sums in double per image. */
static void bw_chan_task(void *raw, int64_t lo, int64_t hi) {
  const BwJob *j = raw;
  const BwGeom *g = j->g;
  size_t es = j->f64 ? 8 : 4;
  KIm2col ig = bw_im2col(g, 1);
  void *cols = j->scratch[threadpool_thread_index()];
  for (int64_t o = lo; o < hi; o++) {
    double acc[64];
    double *a = g->ksz <= 64 ? acc : mem_calloc((size_t)g->ksz, sizeof *a);
    if (g->ksz <= 64) memset(acc, 0, sizeof acc);
    int64_t ci = o / g->Og; /* Cg == 1: group o / Og reads channel o / Og */
    for (int64_t n = 0; n < g->N; n++) {
      const char *x = (const char *)j->data + (size_t)((n * g->C + ci) * g->isz) * es;
      const char *gp = (const char *)j->grad + (size_t)((n * g->O + o) * g->P) * es;
      if (j->f64) {
        kim2col_f64(&ig, (const double *)x, 0, g->P, cols);
        bw_dots_f64(a, (const double *)gp, cols, g->ksz, g->P);
      } else {
        kim2col_f32(&ig, (const float *)x, 0, g->P, cols);
        bw_dots_f32(a, (const float *)gp, cols, g->ksz, g->P);
      }
    }
    for (int64_t t = 0; t < g->ksz; t++) {
      if (j->f64) ((double *)j->out)[o * g->ksz + t] = a[t];
      else ((float *)j->out)[o * g->ksz + t] = (float)a[t];
    }
    if (a != acc) mem_free(a);
  }
}

/* ---- one input channel per group, float32: sweeps over a padded plane ------------------ */

/* The data plane is copied into zero-padded phase planes (ops/kernels/k_plane.h),
 * where tap t of output v reads pad[toff[t] + v]; the gradient plane is
 * copied into the same sweep layout gs (rows of Wq, zeros in the columns and
 * the tail no output owns). Then dW[o, t] = Σ_v gs[v] · pad[toff[t] + v]:
 * ntaps dot products over one contiguous sweep, no im2col. */
typedef struct BwDwJob {
  const BwGeom *g;
  const float *grad, *data;
  float *out;
  KPlane pl;
  float **pad, **gs; /* per thread; borders and junk columns stay 0 */
} BwDwJob;

/* acc[k] += Σ_{v < len} gs[v] · pad[toff[k] + v] for k < n (len a multiple of 8):
 * n accumulators of 8 lanes, each gradient vector loaded once for n taps. */
static inline __attribute__((always_inline)) void bw_dw_dots_n(double *restrict acc, const float *restrict gs,
                                                               const float *restrict pad,
                                                               const int64_t *restrict toff, int64_t len,
                                                               const int n) {
  kv8 a[9];
  const float *src[9];
  for (int k = 0; k < n; k++) {
    a[k] = kv8_splat(0);
    src[k] = pad + toff[k];
  }
  for (int64_t v = 0; v < len; v += 8) {
    kv8 gv = kv8_load(gs + v);
    for (int k = 0; k < n; k++) a[k] += gv * kv8_load(src[k] + v);
  }
  for (int k = 0; k < n; k++) acc[k] += (double)kv8_sum(a[k]);
}

static KHOT void bw_dw_dots(double *restrict acc, const float *restrict gs, const float *restrict pad,
                            const int64_t *restrict toff, int64_t ntaps, int64_t len) {
  int64_t t = 0;
  for (; t + 9 <= ntaps; t += 9) bw_dw_dots_n(acc + t, gs, pad, toff + t, len, 9);
  for (; t + 4 <= ntaps; t += 4) bw_dw_dots_n(acc + t, gs, pad, toff + t, len, 4);
  for (; t < ntaps; t++) bw_dw_dots_n(acc + t, gs, pad, toff + t, len, 1);
}

/* Unit = output channel o (reads input channel o / Og); sums in double across images. */
static void bw_dw_task(void *raw, int64_t lo, int64_t hi) {
  const BwDwJob *j = raw;
  const BwGeom *g = j->g;
  const KPlane *pl = &j->pl;
  int ti = threadpool_thread_index();
  float *pad = j->pad[ti], *gs = j->gs[ti];
  for (int64_t o = lo; o < hi; o++) {
    double acc[64];
    double *a = g->ksz <= 64 ? acc : mem_calloc((size_t)g->ksz, sizeof *a);
    if (g->ksz <= 64) memset(acc, 0, sizeof acc);
    int64_t ci = o / g->Og;
    for (int64_t n = 0; n < g->N; n++) {
      kplane_fill(pl, j->data + (n * g->C + ci) * g->isz, pad);
      const float *gp = j->grad + (n * g->O + o) * g->P;
      for (int64_t oh = 0; oh < g->OH; oh++)
        memcpy(gs + kplane_row(pl, 0, oh), gp + oh * g->OW, (size_t)g->OW * sizeof(float));
      bw_dw_dots(a, gs, pad, pl->toff, pl->ntaps, pl->vlen16);
    }
    for (int64_t t = 0; t < g->ksz; t++) j->out[o * g->ksz + t] = (float)a[t];
    if (a != acc) mem_free(a);
  }
}

/* pl set up for one 2-d image plane of g (a depth of 1); false when it does not fit. */
static bool bw_plane_init(const BwGeom *g, KPlane *pl) {
  int64_t in[3] = {1, g->H, g->W}, os[3] = {1, g->OH, g->OW}, k[3] = {1, g->kh, g->kw};
  int64_t st[3] = {1, g->sh, g->sw}, dil[3] = {1, g->dh, g->dw}, plo[3] = {0, g->pt, g->pl};
  int64_t phi[3] = {0, g->pb, g->pr};
  if (!kplane_fits(in, os, k, st, dil, plo, phi)) return false;
  kplane_init(pl, in, os, k, st, dil, plo, phi);
  return true;
}

/* False (nothing written) when the plane does not fit or buffers are missing. */
static bool bw_depthwise_f32(const BwGeom *g, const float *grad, const float *data, float *out) {
  BwDwJob j = {.g = g, .grad = grad, .data = data, .out = out};
  if (!bw_plane_init(g, &j.pl)) return false;
  size_t pbytes = kplane_buffer_floats(&j.pl) * sizeof(float);
  size_t gbytes = (size_t)j.pl.vlen16 * sizeof(float) + 64;
  bool ok = kplane_scratch(pbytes, gbytes, &j.pad, &j.gs);
  if (ok) {
    for (int i = 0; i < threadpool_size(); i++) memset(j.gs[i], 0, gbytes);
    threadpool_for(g->O, 1, bw_dw_task, &j);
  }
  kplane_free(&j.pl);
  return ok;
}

/* Per-thread plane buffers of the grouped path stay under this (bytes). */
#define BW_GROUP_SCRATCH ((size_t)8 << 20)

/* The grouped sweeps beat per-group GEMMs while a group's GEMM is small: at most
 * BW_GROUP_MAX channels in and out per group, and enough groups to share out. */
#define BW_GROUP_MAX 16
static bool bw_use_grouped(const BwGeom *g, bool f64) {
  return !f64 && g->G >= 2 * threadpool_size() && g->Cg > 1 && g->Cg <= BW_GROUP_MAX && g->Og <= BW_GROUP_MAX;
}

/* ---- a few input channels per group, float32: the same sweeps, a group at a time ------- */

/* Unit = group: per image its Cg data planes are copied into padded planes and
 * its Og gradient planes into the sweep layout, then dW[o, i, t] is the dot of
 * gradient sweep o with padded plane i at tap t; sums in double across images.
 * Grouped convolutions with small groups (ResNeXt's 3×3, 4-32 channels a group)
 * would otherwise run as per-group GEMMs only Og rows by Cg·kh·kw columns. */
typedef struct BwGrpJob {
  const BwGeom *g;
  const float *grad, *data;
  float *out;
  KPlane pl;
  int64_t pstride, gstride; /* floats between a thread's padded planes, gradient sweeps */
  float **pad, **gs;        /* per thread: Cg planes, Og sweeps; borders and junk columns stay 0 */
} BwGrpJob;

static void bw_grp_task(void *raw, int64_t lo, int64_t hi) {
  const BwGrpJob *j = raw;
  const BwGeom *g = j->g;
  const KPlane *pl = &j->pl;
  int ti = threadpool_thread_index();
  float *pad = j->pad[ti], *gs = j->gs[ti];
  double *acc = mem_malloc((size_t)(g->Og * g->Kg) * sizeof *acc);
  for (int64_t gi = lo; gi < hi; gi++) {
    memset(acc, 0, (size_t)(g->Og * g->Kg) * sizeof *acc);
    for (int64_t n = 0; n < g->N; n++) {
      for (int64_t i = 0; i < g->Cg; i++)
        kplane_fill(pl, j->data + (n * g->C + gi * g->Cg + i) * g->isz, pad + i * j->pstride);
      for (int64_t o = 0; o < g->Og; o++) {
        const float *gp = j->grad + (n * g->O + gi * g->Og + o) * g->P;
        for (int64_t oh = 0; oh < g->OH; oh++)
          memcpy(gs + o * j->gstride + kplane_row(pl, 0, oh), gp + oh * g->OW, (size_t)g->OW * sizeof(float));
      }
      for (int64_t o = 0; o < g->Og; o++)
        for (int64_t i = 0; i < g->Cg; i++)
          bw_dw_dots(acc + o * g->Kg + i * g->ksz, gs + o * j->gstride, pad + i * j->pstride, pl->toff, pl->ntaps,
                     pl->vlen16);
    }
    float *dst = j->out + gi * g->Og * g->Kg;
    for (int64_t k = 0; k < g->Og * g->Kg; k++) dst[k] = (float)acc[k];
  }
  mem_free(acc);
}

/* False (nothing written) when the planes do not fit or buffers are missing. */
static bool bw_grouped_f32(const BwGeom *g, const float *grad, const float *data, float *out) {
  BwGrpJob j = {.g = g, .grad = grad, .data = data, .out = out};
  if (!bw_plane_init(g, &j.pl)) return false;
  j.pstride = ((int64_t)kplane_buffer_floats(&j.pl) + 15) / 16 * 16;
  j.gstride = j.pl.vlen16 + 16;
  size_t pbytes = (size_t)(j.pstride * g->Cg) * sizeof(float), gbytes = (size_t)(j.gstride * g->Og) * sizeof(float);
  bool ok = pbytes <= BW_GROUP_SCRATCH && gbytes <= BW_GROUP_SCRATCH && kplane_scratch(pbytes, gbytes, &j.pad, &j.gs);
  if (ok) {
    for (int i = 0; i < threadpool_size(); i++) memset(j.gs[i], 0, gbytes);
    threadpool_for(g->G, 1, bw_grp_task, &j);
  }
  kplane_free(&j.pl);
  return ok;
}

/* ---- driver ------------------------------------------------------------------------- */

/* The narrowest column block cut while the reduction could be sliced instead,
 * and the fewest pixels a reduction slice (or chunk) gets. */
#define BW_MIN_COLS 128
#define BW_MIN_SLICE 256

/* Computes out (O × Kg, canonical OIHW) from canonical grad / data. */
static bool bw_run(KernelCtx *c, const BwGeom *g, const void *grad, const void *data, void *out, bool f64) {
  kgemm_init();
  int nt = threadpool_size();
  size_t es = f64 ? 8 : 4;
  BwJob j = {.g = g, .grad = grad, .data = data, .out = out, .f64 = f64};
  if (g->N == 0 || g->P == 0) {
    memset(out, 0, (size_t)(g->O * g->Kg) * es);
    return true;
  }
  if (g->Cg == 1 && !f64 && bw_depthwise_f32(g, grad, data, out)) return true;
  if (bw_use_grouped(g, f64) && bw_grouped_f32(g, grad, data, out)) return true;
  if (g->Cg == 1) {
    j.scratch = kscratch(0, (size_t)(g->ksz * g->P) * es + 64);
    if (!j.scratch) return kernel_fail(c, "%s: out of memory for the tap buffer", c->op->name), false;
    threadpool_for(g->O, 1, bw_chan_task, &j);
    return true;
  }
  j.direct = g->ksz == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 && g->OH == g->H &&
             g->OW == g->W;
  /* column blocks of whole channels, at most ~1024 columns; narrower ones until
   * there are about 4 units per thread, but not under BW_MIN_COLS columns when
   * the reduction can be sliced instead: a GEMM only a few columns wide runs at
   * a fraction of the speed, while a slice costs a partial result and a
   * summing pass (worth it when a slice still has BW_MIN_SLICE pixels). */
  int64_t want = 4 * (int64_t)nt, cb = g->Cg;
  int64_t max_slices = g->N * g->P / BW_MIN_SLICE;
  while (cb > 1) {
    int64_t units = g->G * ((g->Cg + cb - 1) / cb);
    bool narrow = (cb + 1) / 2 * g->ksz < BW_MIN_COLS;
    if (cb * g->ksz <= 1024 && (units >= want || (narrow && units * max_slices >= want))) break;
    cb = (cb + 1) / 2;
  }
  j.cb = cb;
  j.ncb = (g->Cg + cb - 1) / cb;
  int64_t kb = cb * g->ksz;
  int64_t units = g->G * j.ncb, slices = units >= want ? 1 : (want + units - 1) / units;
  /* pixel chunks: a cols block of about 1 MiB, and at least one chunk per slice */
  int64_t pc = (int64_t)(1 << 20) / ((int64_t)es * kb);
  if (pc < BW_MIN_SLICE) pc = BW_MIN_SLICE;
  int64_t per_image = (slices + g->N - 1) / g->N;
  if (per_image > 1 && pc > g->P / per_image) pc = (g->P + per_image - 1) / per_image;
  if (pc < BW_MIN_SLICE) pc = BW_MIN_SLICE;
  if (pc > g->P) pc = g->P;
  j.pc = pc;
  j.npc = (g->P + pc - 1) / pc;
  int64_t R = g->N * j.npc;
  j.nslice = slices > R ? R : slices;
  if (j.nslice < 1) j.nslice = 1;
  if (!j.direct) {
    j.scratch = kscratch(0, (size_t)(kb * pc) * es + 64);
    if (!j.scratch) return kernel_fail(c, "%s: out of memory for the im2col buffer", c->op->name), false;
  }
  int64_t osz = g->O * g->Kg;
  if (j.nslice > 1) {
    j.partial = mem_calloc((size_t)(j.nslice - 1), sizeof *j.partial);
    for (int64_t s = 0; s + 1 < j.nslice; s++) {
      j.partial[s] = bufpool_alloc((size_t)osz * es);
      if (!j.partial[s]) {
        for (int64_t q = 0; q < s; q++) bufpool_free(j.partial[q], (size_t)osz * es);
        mem_free(j.partial);
        return kernel_fail(c, "%s: out of memory for partial sums", c->op->name), false;
      }
    }
  }
  threadpool_for(units * j.nslice, 1, bw_gemm_task, &j);
  if (j.nslice > 1) {
    kconv_add_partials(out, j.partial, j.nslice - 1, osz, f64);
    for (int64_t s = 0; s + 1 < j.nslice; s++) bufpool_free(j.partial[s], (size_t)osz * es);
    mem_free(j.partial);
  }
  return true;
}

/* A tensor in `layout` as the canonical `canon` (a new tensor, or x itself
 * with *tmp NULL when the layout already is canonical). */
static const Tensor *to_canon(KernelCtx *c, const Tensor *x, const char *layout, const char *canon, Tensor **tmp,
                              const char *what) {
  *tmp = NULL;
  if (strcmp(layout, canon) == 0) return x;
  Layout ls, lc;
  int64_t shape[TENSOR_MAX_NDIM];
  if (!layout_parse(layout, &ls) || !layout_parse(canon, &lc) || ls.n != x->ndim ||
      !layout_convert_shape(&ls, &lc, x->shape, shape)) {
    kernel_fail(c, "%s: %s layout \"%s\" does not fit %s", c->op->name, what, layout, canon);
    return NULL;
  }
  *tmp = layout_convert_new(x, &ls, &lc);
  if (!*tmp) kernel_fail(c, "%s: out of memory", c->op->name);
  return *tmp;
}

/* x in compute dtype ct (x itself, or a converted copy in *tmp). */
static const Tensor *as_dtype(const Tensor *x, DType ct, Tensor **tmp) {
  *tmp = NULL;
  if (dtype_eq(x->dtype, ct)) return x;
  *tmp = tensor_new(ct, x->ndim, x->shape);
  if (*tmp) ku_cast_n(x->dtype, x->data, ct, (*tmp)->data, x->numel);
  return *tmp;
}

static bool bw_ints(KernelCtx *c, const char *name, int32_t n, int64_t dflt, int64_t *out) {
  int64_t v[4];
  int32_t k = kernel_attr_ints(c, name, v, 4);
  out[0] = out[1] = dflt;
  if (k <= 0) return true;
  if (k == 1) out[0] = out[1] = v[0];
  else if (k == n) out[0] = v[0], out[1] = v[1];
  else return false;
  return true;
}

int kernel_NN_CONV2D_BACKWARD_WEIGHT(KernelCtx *c);
int kernel_NN_CONV2D_BACKWARD_WEIGHT(KernelCtx *c) {
  const char *name = c->op->name;
  const Tensor *g0 = kernel_input(c, 0), *d0 = kernel_input(c, 1);
  if (!dtype_is_float(g0->dtype) || !dtype_is_float(d0->dtype))
    return kernel_fail(c, "%s: needs float tensors", name);
  const char *gl = kernel_attr_str(c, "data_layout", "NCHW"), *dl = kernel_attr_str(c, "kernel_layout", "OIHW");
  const char *wl = kernel_attr_str(c, "out_layout", "");
  if (strcmp(dl, "OIHW") == 0) dl = "NCHW";
  if (!*wl) wl = "OIHW";
  int64_t ks[2], st[2], dil[2], pad[4];
  if (!bw_ints(c, "kernel_size", 2, -1, ks) || ks[0] < 1 || ks[1] < 1)
    return kernel_fail(c, "%s: kernel_size must hold two positive values", name);
  if (!bw_ints(c, "strides", 2, 1, st) || !bw_ints(c, "dilation", 2, 1, dil) || st[0] < 1 || st[1] < 1 ||
      dil[0] < 1 || dil[1] < 1)
    return kernel_fail(c, "%s: strides and dilation must hold one or two positive values", name);
  int32_t np = kernel_attr_ints(c, "padding", pad, 4);
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  if (np == 1) pt = pl = pb = pr = pad[0];
  else if (np == 2) pt = pb = pad[0], pl = pr = pad[1];
  else if (np == 4) pt = pad[0], pl = pad[1], pb = pad[2], pr = pad[3];
  else if (np > 0) return kernel_fail(c, "%s: padding needs 1, 2 or 4 values", name);
  if (pt < 0 || pl < 0 || pb < 0 || pr < 0) return kernel_fail(c, "%s: negative padding", name);
  Tensor *gt = NULL, *dt = NULL, *gc = NULL, *dc = NULL, *res = NULL;
  int rc = KERNEL_ERROR;
  const Tensor *g1 = to_canon(c, g0, gl, "NCHW", &gt, "grad");
  const Tensor *d1 = g1 ? to_canon(c, d0, dl, "NCHW", &dt, "data") : NULL;
  if (!g1 || !d1) goto out;
  if (g1->ndim != 4 || d1->ndim != 4) {
    kernel_fail(c, "%s: grad and data must be 4-D", name);
    goto out;
  }
  BwGeom g = {.N = d1->shape[0], .C = d1->shape[1], .H = d1->shape[2], .W = d1->shape[3], .O = g1->shape[1],
              .OH = g1->shape[2], .OW = g1->shape[3], .G = kernel_attr_int(c, "groups", 1), .kh = ks[0],
              .kw = ks[1], .sh = st[0], .sw = st[1], .dh = dil[0], .dw = dil[1], .pt = pt, .pl = pl, .pb = pb, .pr = pr};
  if (g1->shape[0] != g.N) {
    kernel_fail(c, "%s: grad has batch %lld, data %lld", name, (long long)g1->shape[0], (long long)g.N);
    goto out;
  }
  if (g.G < 1 || g.C % g.G != 0 || g.O % g.G != 0) {
    kernel_fail(c, "%s: groups=%lld must divide the %lld data and %lld grad channels", name, (long long)g.G,
                (long long)g.C, (long long)g.O);
    goto out;
  }
  g.Cg = g.C / g.G;
  g.Og = g.O / g.G;
  for (int i = 0; i < 2; i++) {
    int64_t in = i ? g.W : g.H, lo = i ? pl : pt, hi = i ? pr : pb, k = ks[i];
    int64_t dk = (k - 1) * dil[i] + 1, want = in + lo + hi < dk ? 0 : (in + lo + hi - dk) / st[i] + 1;
    if ((i ? g.OW : g.OH) != want) {
      kernel_fail(c, "%s: grad has extent %lld on spatial axis %d, the convolution gives %lld", name,
                  (long long)(i ? g.OW : g.OH), i, (long long)want);
      goto out;
    }
  }
  g.ksz = g.kh * g.kw;
  g.Kg = g.Cg * g.ksz;
  g.P = g.OH * g.OW;
  g.isz = g.H * g.W;
  /* the declared weight's I dim must be Cg (TVM's depthwise reading uses channels / groups) */
  if (c->out_type && c->out_type->kind == TYPE_TENSOR && c->out_type->tensor.ndim == 4 && strcmp(wl, "OIHW") == 0 &&
      c->out_type->tensor.dims[1].kind == DIM_INT && c->out_type->tensor.dims[1].value != g.Cg) {
    kernel_fail(c, "%s: the weight has %lld input channels per group, the data %lld", name,
                (long long)c->out_type->tensor.dims[1].value, (long long)g.Cg);
    goto out;
  }
  bool f64 = ku_type(g1->dtype) == KU_F64 || ku_type(d1->dtype) == KU_F64;
  DType ct = f64 ? DT_F64 : DT_F32;
  const Tensor *g2 = as_dtype(g1, ct, &gc), *d2 = g2 ? as_dtype(d1, ct, &dc) : NULL;
  int64_t wshape[4] = {g.O, g.Cg, g.kh, g.kw};
  res = g2 && d2 ? tensor_new(ct, 4, wshape) : NULL;
  if (!res) {
    kernel_fail(c, "%s: out of memory", name);
    goto out;
  }
  if (!bw_run(c, &g, g2->data, d2->data, res->data, f64)) goto out;
  DType odt = g0->dtype;
  kernel_attr_dtype(c, "out_dtype", &odt);
  if (strcmp(wl, "OIHW") != 0) {
    Tensor *conv = NULL;
    Layout lo, lw;
    int64_t oshape[TENSOR_MAX_NDIM];
    if (!layout_parse("OIHW", &lo) || !layout_parse(wl, &lw) || !layout_convert_shape(&lo, &lw, res->shape, oshape)) {
      kernel_fail(c, "%s: unsupported weight layout \"%s\"", name, wl);
      goto out;
    }
    conv = layout_convert_new(res, &lo, &lw);
    if (!conv) {
      kernel_fail(c, "%s: out of memory", name);
      goto out;
    }
    tensor_release(res);
    res = conv;
  }
  rc = ku_float_out(c, res, odt);
  res = NULL;
out:
  tensor_release(gt);
  tensor_release(dt);
  tensor_release(gc);
  tensor_release(dc);
  tensor_release(res);
  return rc;
}
