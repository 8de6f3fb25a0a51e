/* ops/kernels/k_conv.c — nn.conv1d, nn.conv2d, nn.conv3d, nn.conv1d_transpose,
 * nn.conv2d_transpose, nn.conv3d_transpose.
 *
 * Every convolution is brought to one canonical form: data N C D H W,
 * weight O I D H W (transpose: I O D H W), result N O D H W, with 1-D and
 * 2-D convolutions as 3-D ones whose leading spatial extents are 1 (ConvGeom).
 * Other primal layouts (NHWC/HWIO, ...) are permuted into it and back, except
 * NHWC + HWIO float32 without groups, which has its own GEMM path. Split
 * layouts (NCHW16c, OIHW16i16o) are converted to the canonical ones with
 * ops/layout.h first and the result converted back (conv_split).
 *
 * Float32 engines (the hot path):
 *  - GEMM: per (image, group), out[Og × P] = W[Og × Kg] · cols[Kg × P]
 *    where cols is im2col of the input (Kg = Cg·kd·kh·kw, P = output
 *    pixels). The P axis is cut into column blocks (CONV_BLOCK_BYTES of
 *    cols, at least two tasks per thread, whole sgemm tiles dealt out
 *    evenly); each pool task builds its block of cols in a per-thread
 *    scratch and makes one single-threaded sgemm. With relayc's sgemm the
 *    epilogue (bias, residual, ReLU) is applied by the micro-kernel as it
 *    stores C (one pass over the output); with OpenBLAS the block starts as
 *    the bias (or 0), the sgemm accumulates (beta = 1: skips OpenBLAS's
 *    zeroing pass) and the rest of the epilogue runs on the cached block.
 *    A 1×1, stride-1, unpadded convolution uses the input itself as cols
 *    (no im2col). Small maps (≤ CONV_SHARED_PIX pixels) build the whole
 *    im2col once with all threads first. When there are few column blocks,
 *    the Og axis is split too.
 *  - grouped (1 < Cg ≤ 64, not a plain 1×1): a direct kernel per (image,
 *    group) over the group's zero-padded phase planes, OB output channels ×
 *    NV 16-pixel vectors of accumulators in registers (ResNeXt's Cg = 4..32
 *    made one GEMM per group on matrices too small for the sgemm tile).
 *  - depthwise (Cg == 1, any channel multiplier): a direct loop per output
 *    plane over zero-padded phase planes (ops/kernels/k_plane.h), so the plane is a
 *    few unit-stride sweeps with 8-float register accumulators
 *    (ops/kernels/k_vec8.h: kv16 variables live in memory on AVX2).
 *  - transposed (float32 and float64; the data gradient of a convolution):
 *    per (image, group, block of output channels) and chunk of input pixels,
 *    cols = Wᵀ · x in one sgemm (the weight read in place, transposed), then
 *    col2im adds each row into the block's own output planes; a 1×1, stride-1,
 *    unpadded one is the GEMM y = Wᵀ · x straight into the output. A
 *    depthwise one (float32, one input and one output channel per group)
 *    is the depthwise engine's convolution with the flipped window, or, 2-D
 *    with strides > 1 (any dilation), one small correlation per stride phase
 *    (ops/kernels/k_tconv_dw.c; strided 3-D ones spread the input onto a
 *    zeroed grid first): no K = 1 GEMMs. Grouped float32 ones with stride 1
 *    that the grouped engine takes (ResNeXt's 3×3) are its convolution with
 *    the flipped window and the weight's I and O swapped; other grouped ones
 *    (strided: the spread input would be mostly zeros) take GEMM + col2im.
 * Float64 uses the same im2col + dgemm; integer results use plain loops in
 * int64 with a single wrap on store (ops/kernels/k_cvt.h); float16 goes through
 * float32.
 *
 * Fused epilogue (relayc's operators relayc.conv2d_bias / _add / _bias_add /
 * _relu, made by transform/conv_epilogue.c; float32, canonical layouts
 * only): the operator says which inputs follow the weight — a
 * per-output-channel bias and/or a residual of the result's shape, added —
 * and its relu attribute (implied by relayc.conv2d_relu) a ReLU last. A
 * dying residual becomes the output buffer and the GEMM accumulates into it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_cvt.h"
#include "ops/kernels/k_gemm.h"
#include "ops/kernels/k_im2col.h"
#include "ops/kernels/k_plane.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_tconv_dw.h"
#include "ops/kernels/k_vec8.h"
#include "ops/kernels/k_winograd.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "ops/layout.h"
#include "runtime/bufpool.h"
#include "runtime/threadpool.h"

/* ------------------------------------------------------------ geometry */

typedef struct ConvGeom {
  int nd;                    /* spatial dims: 1, 2 or 3 */
  int64_t N, C, O, G, Cg, Og;
  int64_t in[3], k[3], out[3], st[3], dil[3], plo[3], phi[3]; /* (D, H, W) */
  int64_t isz, ksz, osz;     /* products of in, k, out */
  int64_t Kg;                /* Cg · ksz */
} ConvGeom;

typedef struct Epi {
  const float *bias;   /* per output channel, or NULL */
  const float *res;    /* residual (canonical result layout), or NULL */
  bool relu;
  bool accumulate;     /* the output buffer already holds the residual */
} Epi;

/* Reads an int array attribute of nd values (1 value broadcasts). */
static bool conv_ints(KernelCtx *c, const char *name, int nd, int64_t dflt, int64_t *out) {
  int64_t v[8];
  int32_t n = kernel_attr_ints(c, name, v, 8);
  for (int i = 0; i < nd; i++) out[i] = dflt;
  if (n < 0) return true;
  if (n == 1) {
    for (int i = 0; i < nd; i++) out[i] = v[0];
    return true;
  }
  if (n != nd) return false;
  for (int i = 0; i < nd; i++) out[i] = v[i];
  return true;
}

/* padding: 1 value (all sides), nd (symmetric) or 2·nd (all befores, then afters). */
static bool conv_padding(KernelCtx *c, int nd, int64_t *lo, int64_t *hi) {
  int64_t v[8];
  int32_t n = kernel_attr_ints(c, "padding", v, 8);
  for (int i = 0; i < nd; i++) lo[i] = hi[i] = 0;
  if (n <= 0) return true;
  if (n == 1) {
    for (int i = 0; i < nd; i++) lo[i] = hi[i] = v[0];
  } else if (n == nd) {
    for (int i = 0; i < nd; i++) lo[i] = hi[i] = v[i];
  } else if (n == 2 * nd) {
    for (int i = 0; i < nd; i++) {
      lo[i] = v[i];
      hi[i] = v[nd + i];
    }
  } else {
    return false;
  }
  for (int i = 0; i < nd; i++)
    if (lo[i] < 0 || hi[i] < 0) return false;
  return true;
}

/* pos[j] = index in `layout` of the canonical letter canon[j]; false unless
 * layout is a permutation of canon. */
static bool layout_pos(const char *layout, const char *canon, int *pos) {
  size_t n = strlen(canon);
  if (!layout || strlen(layout) != n) return false;
  for (size_t j = 0; j < n; j++) {
    const char *at = strchr(layout, canon[j]);
    if (!at) return false;
    pos[j] = (int)(at - layout);
  }
  return true;
}

static bool pos_is_identity(const int *pos, int n) {
  for (int i = 0; i < n; i++)
    if (pos[i] != i) return false;
  return true;
}

/* dst (canonical order: dim j = src dim pos[j]) <- src. */
static void permute_to(const void *src, void *dst, int nd, const int64_t *sshape, const int *pos,
                       size_t es) {
  int64_t sstride[8] = {0}, dshape[8] = {0}, idx[8] = {0};
  if (nd < 1 || nd > 8) return;
  sstride[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) sstride[i] = sstride[i + 1] * sshape[i + 1];
  int64_t total = 1;
  for (int j = 0; j < nd; j++) {
    dshape[j] = sshape[pos[j]];
    total *= dshape[j];
  }
  if (total == 0) return;
  const char *s = src;
  char *d = dst;
  int64_t inner = dshape[nd - 1], istride = sstride[pos[nd - 1]];
  for (int64_t done = 0; done < total; done += inner) {
    int64_t off = 0;
    for (int j = 0; j < nd - 1; j++) off += idx[j] * sstride[pos[j]];
    for (int64_t k = 0; k < inner; k++)
      memcpy(d + (size_t)(done + k) * es, s + (size_t)(off + k * istride) * es, es);
    for (int j = nd - 2; j >= 0; j--) {
      if (++idx[j] < dshape[j]) break;
      idx[j] = 0;
    }
  }
}

/* src (canonical order) -> dst in a layout: dst dim pos[j] = canonical dim j. */
static void permute_from(const void *src, void *dst, int nd, const int64_t *cshape, const int *pos,
                         size_t es) {
  int inv[8];
  for (int j = 0; j < nd; j++) inv[pos[j]] = j;
  permute_to(src, dst, nd, cshape, inv, es);
}

/* ------------------------------------------------------------ im2col */

/* The im2col geometry (ops/kernels/k_im2col.h) of Cg channels of g. */
static KIm2col im2col_geom(const ConvGeom *g) {
  KIm2col k = {.C = g->Cg};
  for (int a = 0; a < 3; a++) {
    k.in[a] = g->in[a];
    k.out[a] = g->out[a];
    k.k[a] = g->k[a];
    k.st[a] = g->st[a];
    k.dil[a] = g->dil[a];
    k.plo[a] = g->plo[a];
  }
  return k;
}

static void im2col_f32(const ConvGeom *g, const float *x, int64_t p0, int64_t plen, float *cols) {
  KIm2col k = im2col_geom(g);
  kim2col_f32(&k, x, p0, plen, cols);
}

static void im2col_f64(const ConvGeom *g, const double *x, int64_t p0, int64_t plen, double *cols) {
  KIm2col k = im2col_geom(g);
  kim2col_f64(&k, x, p0, plen, cols);
}

/* ------------------------------------------------------------ epilogue */

static KHOT void epi_row(const Epi *e, float *restrict y, const float *restrict res, float b,
                        int64_t n) {
  if (res) {
    for (int64_t i = 0; i < n; i++) y[i] += res[i] + b;
  } else if (b != 0) {
    for (int64_t i = 0; i < n; i++) y[i] += b;
  }
  if (e->relu)
    for (int64_t i = 0; i < n; i++) y[i] = y[i] > 0 ? y[i] : 0;
}

static KHOT void fill_row(float *restrict y, float v, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = v;
}

static bool epi_active(const Epi *e) { return e && (e->bias || e->res || e->relu); }

/* Applies the epilogue to out channels [o0, o0+m) × pixels [p0, p0+plen) of image n. */
static void epi_block(const ConvGeom *g, const Epi *e, float *y, int64_t n, int64_t o0, int64_t m,
                      int64_t p0, int64_t plen) {
  if (!epi_active(e)) return;
  for (int64_t o = o0; o < o0 + m; o++) {
    int64_t off = (n * g->O + o) * g->osz + p0;
    epi_row(e, y + off, e->res ? e->res + off : NULL, e->bias ? e->bias[o] : 0.0f, plen);
  }
}

/* ------------------------------------------------------------ GEMM engine */

typedef struct GemmJob {
  const ConvGeom *g;
  const void *x, *w;
  void *y;
  const Epi *epi;
  bool f64, direct, own; /* own: relayc's sgemm, epilogue fused into its stores */
  int64_t pb, npb, mb, nmb; /* largest pixel / channel block, and block counts */
  int64_t pw, mw;           /* blocks are whole multiples of these (sgemm tiles) */
  void **scratch; /* one im2col block per pool thread */
  char *shared;   /* or: im2col of every (image, group) (Kg × osz each), built first */
  int64_t cchunk; /* input channels per task of that pre-pass */
} GemmJob;

/* Start of block i of n over [0, ext): the ext/w tiles of w are dealt out
 * evenly, so blocks differ by at most one tile. */
static int64_t gemm_split(int64_t i, int64_t n, int64_t ext, int64_t w) {
  int64_t tiles = (ext + w - 1) / w, at = i * tiles / n * w;
  return at < ext ? at : ext;
}

/* Pre-pass of the shared-cols mode: task = (image·group, channel chunk). */
static void gemm_cols_task(void *raw, int64_t lo, int64_t hi) {
  const GemmJob *j = raw;
  const ConvGeom *g = j->g;
  size_t es = j->f64 ? 8 : 4;
  int64_t nch = (g->Cg + j->cchunk - 1) / j->cchunk;
  for (int64_t t = lo; t < hi; t++) {
    int64_t ng = t / nch, c0 = (t % nch) * j->cchunk;
    ConvGeom sub = *g;
    sub.Cg = g->Cg - c0 < j->cchunk ? g->Cg - c0 : j->cchunk;
    int64_t n = ng / g->G, gi = ng % g->G;
    const char *xg = (const char *)j->x + (size_t)((n * g->C + gi * g->Cg + c0) * g->isz) * es;
    char *cols = j->shared + (size_t)((ng * g->Kg + c0 * g->ksz) * g->osz) * es;
    if (j->f64) im2col_f64(&sub, (const double *)xg, 0, g->osz, (double *)cols);
    else im2col_f32(&sub, (const float *)xg, 0, g->osz, (float *)cols);
  }
}

static void gemm_task(void *raw, int64_t lo, int64_t hi) {
  const GemmJob *j = raw;
  const ConvGeom *g = j->g;
  size_t es = j->f64 ? 8 : 4;
  for (int64_t t = lo; t < hi; t++) {
    int64_t u = t;
    int64_t pbi = u % j->npb;
    u /= j->npb;
    int64_t mbi = u % j->nmb;
    u /= j->nmb;
    int64_t gi = u % g->G, n = u / g->G;
    int64_t p0 = gemm_split(pbi, j->npb, g->osz, j->pw);
    int64_t plen = gemm_split(pbi + 1, j->npb, g->osz, j->pw) - p0;
    int64_t m0 = gemm_split(mbi, j->nmb, g->Og, j->mw);
    int64_t mlen = gemm_split(mbi + 1, j->nmb, g->Og, j->mw) - m0;
    if (plen <= 0 || mlen <= 0) continue;
    const char *xg = (const char *)j->x + (size_t)((n * g->C + gi * g->Cg) * g->isz) * es;
    const char *B;
    int64_t ldb;
    if (j->direct) {
      B = xg + (size_t)p0 * es;
      ldb = g->isz;
    } else if (j->shared) {
      B = j->shared + (size_t)(((n * g->G + gi) * g->Kg) * g->osz + p0) * es;
      ldb = g->osz;
    } else {
      void *cols = j->scratch[threadpool_thread_index()];
      if (j->f64) im2col_f64(g, (const double *)xg, p0, plen, cols);
      else im2col_f32(g, (const float *)xg, p0, plen, cols);
      B = cols;
      ldb = plen;
    }
    int64_t o0 = gi * g->Og + m0;
    const char *A = (const char *)j->w + (size_t)(o0 * g->Kg) * es;
    char *C = (char *)j->y + (size_t)((n * g->O + o0) * g->osz + p0) * es;
    bool acc = j->epi && j->epi->accumulate;
    if (j->f64) {
      kgemm_f64_serial(false, false, mlen, plen, g->Kg, (const double *)A, g->Kg,
                       (const double *)B, ldb, acc ? 1.0 : 0.0, (double *)C, g->osz);
      continue;
    }
    Epi e = j->epi ? *j->epi : (Epi){0};
    if (j->own) { /* one pass over C: bias, residual and ReLU applied as tiles are stored */
      int64_t off = (n * g->O + o0) * g->osz + p0;
      KsgemmEpi ke = {e.bias ? e.bias + o0 : NULL, e.res ? e.res + off : NULL, g->osz, e.relu};
      kgemm_f32_serial_epi(false, false, mlen, plen, g->Kg, (const float *)A, g->Kg,
                           (const float *)B, ldb, acc ? 1.0f : 0.0f, (float *)C, g->osz, &ke);
      continue;
    }
    /* OpenBLAS zeroes C in a separate pass when beta = 0; instead the block
     * starts as the bias (or 0) and the GEMM accumulates (beta = 1). */
    if (!acc) {
      for (int64_t o = 0; o < mlen; o++)
        fill_row((float *)C + o * g->osz, e.bias ? e.bias[o0 + o] : 0.0f, plen);
      e.bias = NULL;
    }
    kgemm_f32_serial(false, false, mlen, plen, g->Kg, (const float *)A, g->Kg, (const float *)B,
                     ldb, 1.0f, (float *)C, g->osz);
    epi_block(g, &e, j->y, n, o0, mlen, p0, plen);
  }
}

/* Column-block budget: an im2col block (Kg × pb) of at most this many bytes
 * (large blocks let OpenBLAS block for its caches itself; measured best
 * between 1 and 4 MiB on ResNet-50 layers). */
#define CONV_BLOCK_BYTES (2048 * 1024)

/* Small output maps (ResNet's 14×14 and 7×7 stages) use the shared-cols
 * mode when the whole im2col fits this budget: built once by all threads,
 * then the GEMM is split along the output channels (per-task im2col would
 * repeat the gather once per channel block). */
#define CONV_SHARED_PIX 256
#define CONV_SHARED_BYTES (8 << 20)

/* Where OpenBLAS is the float32 engine, forward products with Kg up to this
 * take relayc's sgemm (ResNet-50's 1×1 convolutions of 64 and 128 channels,
 * 2 threads, best of 7: 3.48 -> 2.87 and 3.49 -> 3.23 ms; with Kg = 147 or 256
 * it was 2-4% slower, bench/grad/README.md session 10). */
#define CONV_OWN_MAX_K 128
/* ... and at least this many multiply-adds per (image, group): smaller ones
 * keep OpenBLAS's results bit for bit (exact-print goldens, as in k_gemm.c) */
#define CONV_OWN_MIN_MACS (double)(1 << 18)

static bool conv_gemm(KernelCtx *c, const ConvGeom *g, const void *x, const void *w, void *y,
                      bool f64, const Epi *epi) {
  kgemm_init();
  int nt = threadpool_size();
  size_t es = f64 ? 8 : 4;
  GemmJob j = {.g = g, .x = x, .w = w, .y = y, .epi = epi, .f64 = f64};
  /* relayc's sgemm: the engine, or a short reduction it takes over OpenBLAS
   * (no bias fill before the product, epilogue fused into its stores) */
  bool acc = epi && epi->accumulate;
  double macs = (double)g->Og * (double)g->Kg * (double)g->osz;
  j.own = !f64 && (strcmp(kgemm_sgemm_engine(), "openblas") != 0 ||
                   (!acc && g->Kg <= CONV_OWN_MAX_K && macs >= CONV_OWN_MIN_MACS &&
                    kgemm_f32_own_over(g->osz, g->Kg)));
  int64_t colw = j.own ? 32 : 16, rowh = j.own ? 12 : 16; /* tile of the sgemm */
  j.direct = g->ksz == 1 && g->st[0] == 1 && g->st[1] == 1 && g->st[2] == 1 && g->plo[0] == 0 &&
             g->plo[1] == 0 && g->plo[2] == 0 && g->phi[0] == 0 && g->phi[1] == 0 &&
             g->phi[2] == 0 && g->isz == g->osz;
  bool shared = !j.direct && g->osz <= CONV_SHARED_PIX &&
                (double)(g->N * g->G) * (double)g->Kg * (double)g->osz * (double)es <=
                    CONV_SHARED_BYTES;
  /* column blocks: within the byte budget, and at least two tasks per thread
   * when the pixels allow it (dynamic balance across the pool) */
  int64_t width = g->Kg > g->Og ? g->Kg : g->Og;
  int64_t pb = CONV_BLOCK_BYTES / ((int64_t)es * (width > 0 ? width : 1));
  int64_t per_task = (g->N * g->G * g->osz + 2 * nt - 1) / (2 * nt);
  if (nt > 1 && pb > per_task) pb = per_task;
  pb = (pb + colw - 1) / colw * colw;
  if (pb < 64) pb = 64;
  if (pb > g->osz || shared || (j.direct && g->osz <= CONV_SHARED_PIX)) pb = g->osz;
  if (pb < 1) pb = 1;
  j.pw = colw;
  j.npb = (g->osz + pb - 1) / pb;
  if (j.npb > 1) { /* whole tiles, evenly dealt: the largest block has ceil(tiles/npb) */
    int64_t tiles = (g->osz + colw - 1) / colw;
    pb = (tiles + j.npb - 1) / j.npb * colw;
    if (pb > g->osz) pb = g->osz;
  }
  j.pb = pb;
  int64_t tasks = g->N * g->G * j.npb;
  j.mb = g->Og;
  j.nmb = 1;
  j.mw = rowh;
  if (tasks < 2 * nt && g->Og >= 2 * rowh) {
    int64_t want = (2 * nt + tasks - 1) / tasks, mtiles = (g->Og + rowh - 1) / rowh;
    j.nmb = want < mtiles ? want : mtiles;
    j.mb = (mtiles + j.nmb - 1) / j.nmb * rowh;
  }
  bool ok = true;
  void **scratch = NULL;
  if (shared) {
    scratch = kscratch(1, (size_t)(g->N * g->G * g->Kg * g->osz) * es + 64);
    ok = scratch != NULL;
  } else if (!j.direct) {
    scratch = kscratch(0, (size_t)(g->Kg * pb) * es + 64);
    ok = scratch != NULL;
  }
  if (!ok) {
    kernel_fail(c, "%s: out of memory for the im2col buffer", c->op->name);
    return false;
  }
  j.scratch = scratch;
  if (shared) {
    j.shared = scratch[0];
    /* about 4 pre-pass tasks per thread */
    int64_t chunks = (4 * nt + g->N * g->G - 1) / (g->N * g->G);
    j.cchunk = (g->Cg + chunks - 1) / chunks;
    if (j.cchunk < 1) j.cchunk = 1;
    threadpool_for(g->N * g->G * ((g->Cg + j.cchunk - 1) / j.cchunk), 1, gemm_cols_task, &j);
  }
  threadpool_for(g->N * g->G * j.nmb * j.npb, 1, gemm_task, &j);
  return true;
}

/* Winograd F(4×4, 3×3) (ops/kernels/k_winograd.h) for 2-D 3×3 stride-1 float32 convolutions
 * without groups or dilation, with a constant weight (its transform is cached from
 * the second call on), when kwino_wanted expects it to beat the GEMM path.
 * False: not taken (y untouched), the caller uses the GEMM engine. */
static bool conv_winograd(const ConvGeom *g, const float *x, const float *w, float *y,
                          const Epi *epi, bool w_const) {
  if (!w_const || g->nd != 2 || g->G != 1 || g->k[0] != 1 || g->k[1] != 3 || g->k[2] != 3 ||
      g->st[1] != 1 || g->st[2] != 1 || g->dil[1] != 1 || g->dil[2] != 1 ||
      g->out[1] <= 0 || g->out[2] <= 0 || !kwino_wanted(g->C, g->O, g->out[1], g->out[2]))
    return false;
  KWinoArgs a = {.N = g->N, .C = g->C, .O = g->O, .H = g->in[1], .W = g->in[2],
                 .pt = g->plo[1], .pl = g->plo[2], .OH = g->out[1], .OW = g->out[2],
                 .x = x, .w = w, .y = y, .w_const = w_const};
  if (epi) {
    a.bias = epi->bias;
    a.res = epi->res;
    a.relu = epi->relu;
    a.accumulate = epi->accumulate;
  }
  return kwino_conv2d(&a);
}

/* ------------------------------------------------------------ depthwise engine */

/* Each input plane is copied into zero-padded phase planes (ops/kernels/k_plane.h),
 * so every tap is a constant offset and the whole output plane is one
 * unit-stride sweep (small 7×7 / 14×14 planes stay vectorised too). */
typedef struct DwJob {
  const ConvGeom *g;
  const float *x, *w;
  float *y;
  const Epi *epi;
  KPlane pl;
  float **pad;  /* per thread: phase buffer (borders stay 0) */
  float **vout; /* per thread: sweep output, vlen16 floats */
} DwJob;

static KHOT void dw_store_row(float *restrict y, const float *restrict v, const float *restrict res,
                              float b, bool relu, bool acc_in, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float x = v[i] + b + (acc_in ? y[i] : 0.0f) + (res ? res[i] : 0.0f);
    y[i] = relu ? (x > 0 ? x : 0.0f) : x;
  }
}

static void dw_plane(const DwJob *j, int64_t n, int64_t o, float *pad, float *vout) {
  const ConvGeom *g = j->g;
  const KPlane *pl = &j->pl;
  int64_t ci = o / g->Og; /* channel multiplier: out channel o reads input channel o / M */
  kplane_fill(pl, j->x + (n * g->C + ci) * g->isz, pad);
  kplane_sweep(vout, pad, pl->toff, j->w + o * g->ksz, pl->ntaps, pl->vlen16);
  int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
  float *yp = j->y + (n * g->O + o) * g->osz;
  const Epi *e = j->epi;
  const float *rp = e && e->res ? e->res + (n * g->O + o) * g->osz : NULL;
  float b = e && e->bias ? e->bias[o] : 0.0f;
  bool relu = e && e->relu, acc = e && e->accumulate;
  for (int64_t od = 0; od < OD; od++)
    for (int64_t oh = 0; oh < OH; oh++) {
      int64_t row = (od * OH + oh) * OW;
      dw_store_row(yp + row, vout + kplane_row(pl, od, oh), rp ? rp + row : NULL, b, relu, acc, OW);
    }
}

static void dw_task(void *raw, int64_t lo, int64_t hi) {
  const DwJob *j = raw;
  int ti = threadpool_thread_index();
  for (int64_t t = lo; t < hi; t++) dw_plane(j, t / j->g->O, t % j->g->O, j->pad[ti], j->vout[ti]);
}

static bool conv_depthwise(KernelCtx *c, const ConvGeom *g, const float *x, const float *w,
                           float *y, const Epi *epi) {
  DwJob j = {.g = g, .x = x, .w = w, .y = y, .epi = epi};
  kplane_init(&j.pl, g->in, g->out, g->k, g->st, g->dil, g->plo, g->phi);
  size_t pbytes = kplane_buffer_floats(&j.pl) * sizeof(float);
  size_t vbytes = (size_t)j.pl.vlen16 * sizeof(float) + 64;
  bool ok = kplane_scratch(pbytes, vbytes, &j.pad, &j.vout);
  if (ok) {
    threadpool_for(g->N * g->O, 1, dw_task, &j);
  } else {
    kernel_fail(c, "%s: out of memory for the padded plane", c->op->name);
  }
  kplane_free(&j.pl);
  return ok;
}

/* ------------------------------------------------------------ grouped engine */

/* Grouped convolution with small groups (1 < G < C, Cg ≤ GRP_MAX_CG): a
 * direct kernel instead of one tiny GEMM per group. A task is one (image,
 * group): its Cg input planes are copied into zero-padded phase planes
 * (ops/kernels/k_plane.h, one plane of cstride floats per channel), so every
 * (channel, tap) is a constant offset into one buffer, and each block of
 * OB output channels is a sweep over v: OB × NV vectors of 16 accumulators
 * in registers, each input vector loaded once per (channel, tap) and used
 * for OB output channels, each weight broadcast once for NV vectors. The
 * sweep lands in a per-thread buffer (OB rows of vlen16) and its valid
 * entries are stored with the epilogue (dw_store_row). */
typedef struct GrpJob {
  const ConvGeom *g;
  const float *x, *w;
  float *y;
  const Epi *epi;
  KPlane pl;
  int64_t cstride; /* floats per channel in the plane buffer */
  int64_t nvec;    /* 16-float vectors per sweep: vlen16 / 16 */
  float **pad;     /* per thread: Cg phase buffers (borders stay 0) */
  float **vout;    /* per thread: GRP_OB sweeps of vlen16 floats */
} GrpJob;

enum { GRP_OB = 8, GRP_NV = 3 };

/* out[o·ostride + v] = Σ_ci Σ_t base[ci·cstride + toff[t] + v] · w[(o·Cg + ci)·ntaps + t]
 * for o < OB and NV vectors of v. */
#define DEFINE_GRP_TILE(OB, NV)                                                                    \
  static KHOT void grp_tile_##OB##_##NV(float *restrict out, int64_t ostride,                      \
                                        const float *restrict base, int64_t cstride,               \
                                        const int64_t *restrict toff, int64_t ntaps,               \
                                        const float *restrict w, int64_t Cg) {                     \
    kv16 acc[OB][NV];                                                                              \
    for (int o = 0; o < OB; o++)                                                                   \
      for (int k = 0; k < NV; k++) acc[o][k] = kv_splat(0);                                        \
    int64_t wstride = Cg * ntaps;                                                                  \
    for (int64_t ci = 0; ci < Cg; ci++) {                                                          \
      const float *bc = base + ci * cstride;                                                       \
      const float *wc = w + ci * ntaps;                                                            \
      for (int64_t t = 0; t < ntaps; t++) {                                                        \
        const float *src = bc + toff[t];                                                           \
        kv16 xv[NV];                                                                               \
        for (int k = 0; k < NV; k++) xv[k] = kv_load(src + 16 * k);                                \
        for (int o = 0; o < OB; o++) {                                                             \
          float wv = wc[o * wstride + t]; /* vector × scalar: a broadcast operand */               \
          for (int k = 0; k < NV; k++) acc[o][k] += xv[k] * wv;                                    \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    for (int o = 0; o < OB; o++)                                                                   \
      for (int k = 0; k < NV; k++) kv_store(out + o * ostride + 16 * k, acc[o][k]);                \
  }

DEFINE_GRP_TILE(8, 3)
DEFINE_GRP_TILE(8, 1)
DEFINE_GRP_TILE(4, 3)
DEFINE_GRP_TILE(4, 1)
DEFINE_GRP_TILE(2, 3)
DEFINE_GRP_TILE(2, 1)
DEFINE_GRP_TILE(1, 3)
DEFINE_GRP_TILE(1, 1)

typedef void (*GrpTileFn)(float *restrict, int64_t, const float *restrict, int64_t,
                          const int64_t *restrict, int64_t, const float *restrict, int64_t);

/* Sweeps output channels [o0, o0 + ob) (ob = 8, 4, 2 or 1) of the group
 * whose planes are in pad into vout (rows of vlen16). */
static void grp_block(const GrpJob *j, const float *pad, const float *w, int ob, float *vout) {
  static const GrpTileFn wide[4] = {grp_tile_1_3, grp_tile_2_3, grp_tile_4_3, grp_tile_8_3};
  static const GrpTileFn one[4] = {grp_tile_1_1, grp_tile_2_1, grp_tile_4_1, grp_tile_8_1};
  int i = ob == 8 ? 3 : ob == 4 ? 2 : ob == 2 ? 1 : 0;
  const KPlane *pl = &j->pl;
  int64_t vs = pl->vlen16, k = 0;
  for (; k + GRP_NV <= j->nvec; k += GRP_NV)
    wide[i](vout + 16 * k, vs, pad + 16 * k, j->cstride, pl->toff, pl->ntaps, w, j->g->Cg);
  for (; k < j->nvec; k++)
    one[i](vout + 16 * k, vs, pad + 16 * k, j->cstride, pl->toff, pl->ntaps, w, j->g->Cg);
}

static void grp_task(void *raw, int64_t lo, int64_t hi) {
  const GrpJob *j = raw;
  const ConvGeom *g = j->g;
  const KPlane *pl = &j->pl;
  int ti = threadpool_thread_index();
  float *pad = j->pad[ti], *vout = j->vout[ti];
  const Epi *e = j->epi;
  bool relu = e && e->relu, acc = e && e->accumulate;
  int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
  for (int64_t t = lo; t < hi; t++) {
    int64_t n = t / g->G, gi = t % g->G;
    const float *xg = j->x + (n * g->C + gi * g->Cg) * g->isz;
    for (int64_t ci = 0; ci < g->Cg; ci++) kplane_fill(pl, xg + ci * g->isz, pad + ci * j->cstride);
    for (int64_t m = 0; m < g->Og;) {
      int64_t left = g->Og - m;
      int ob = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
      int64_t o0 = gi * g->Og + m;
      grp_block(j, pad, j->w + o0 * g->Kg, ob, vout);
      for (int b = 0; b < ob; b++) {
        int64_t o = o0 + b;
        float *yp = j->y + (n * g->O + o) * g->osz;
        const float *rp = e && e->res ? e->res + (n * g->O + o) * g->osz : NULL;
        float bias = e && e->bias ? e->bias[o] : 0.0f;
        for (int64_t od = 0; od < OD; od++)
          for (int64_t oh = 0; oh < OH; oh++) {
            int64_t row = (od * OH + oh) * OW;
            dw_store_row(yp + row, vout + b * pl->vlen16 + kplane_row(pl, od, oh),
                         rp ? rp + row : NULL, bias, relu, acc, OW);
          }
      }
      m += ob;
    }
  }
}

/* Largest Cg, and plane buffer (floats per thread), of the grouped engine. */
#define GRP_MAX_CG 64
#define GRP_MAX_FLOATS ((int64_t)1 << 21)

/* Whether the grouped engine takes this float32 convolution. */
static bool grp_wanted(const ConvGeom *g) {
  if (g->G <= 1 || g->Cg <= 1 || g->Cg > GRP_MAX_CG || g->osz == 0) return false;
  /* a 1×1, stride-1, unpadded convolution: the GEMM reads the input in place
   * (no plane copies), which wins when Kg is that small */
  if (g->ksz == 1 && g->isz == g->osz && g->st[0] * g->st[1] * g->st[2] == 1 &&
      g->plo[0] + g->plo[1] + g->plo[2] == 0)
    return false;
  if (!kplane_fits(g->in, g->out, g->k, g->st, g->dil, g->plo, g->phi)) return false;
  KPlane pl;
  kplane_init(&pl, g->in, g->out, g->k, g->st, g->dil, g->plo, g->phi);
  int64_t per = pl.nph * pl.phase;
  kplane_free(&pl);
  return per <= GRP_MAX_FLOATS / g->Cg;
}

static bool conv_grouped(KernelCtx *c, const ConvGeom *g, const float *x, const float *w, float *y,
                         const Epi *epi) {
  GrpJob j = {.g = g, .x = x, .w = w, .y = y, .epi = epi};
  kplane_init(&j.pl, g->in, g->out, g->k, g->st, g->dil, g->plo, g->phi);
  j.cstride = j.pl.nph * j.pl.phase;
  j.nvec = j.pl.vlen16 / 16;
  size_t pbytes = ((size_t)(g->Cg * j.cstride) + 16) * sizeof(float);
  size_t vbytes = (size_t)(GRP_OB * j.pl.vlen16) * sizeof(float) + 64;
  bool ok = kplane_scratch(pbytes, vbytes, &j.pad, &j.vout);
  if (ok) {
    threadpool_for(g->N * g->G, 1, grp_task, &j);
  } else {
    kernel_fail(c, "%s: out of memory for the padded planes", c->op->name);
  }
  kplane_free(&j.pl);
  return ok;
}

/* ------------------------------------------------------------ plain loops */

/* The job of a plain loop (direct or transposed), one task per output plane
 * (n, o) of the N·O: the geometry and the data of x, w and y, in the loop's
 * element type. */
typedef struct {
  const ConvGeom *g;
  const void *x, *w;
  void *y;
} PlainJob;

/* Direct convolution in double or int64 (two's-complement wrap through
 * uint64), any groups: out[n,o,·] = Σ in[n, g·Cg + i, ·] · w[o, i, ·]. */
#define DEFINE_DIRECT(T, NAME, MAC)                                                                \
  static void NAME##_task(void *raw, int64_t lo, int64_t hi) {                                     \
    const PlainJob *j = raw;                                                                       \
    const ConvGeom *g = j->g;                                                                      \
    const T *jx = j->x, *jw = j->w;                                                                \
    for (int64_t t = lo; t < hi; t++) {                                                            \
      int64_t n = t / g->O, o = t % g->O, gi = o / g->Og;                                          \
      T *yp = (T *)j->y + t * g->osz;                                                              \
      for (int64_t od = 0; od < g->out[0]; od++)                                                   \
        for (int64_t oh = 0; oh < g->out[1]; oh++)                                                 \
          for (int64_t ow = 0; ow < g->out[2]; ow++) {                                             \
            T acc = 0;                                                                             \
            for (int64_t i = 0; i < g->Cg; i++) {                                                  \
              const T *xp = jx + (n * g->C + gi * g->Cg + i) * g->isz;                             \
              const T *wp = jw + (o * g->Cg + i) * g->ksz;                                         \
              for (int64_t a = 0; a < g->k[0]; a++) {                                              \
                int64_t id = od * g->st[0] + a * g->dil[0] - g->plo[0];                            \
                if (id < 0 || id >= g->in[0]) continue;                                            \
                for (int64_t r = 0; r < g->k[1]; r++) {                                            \
                  int64_t ih = oh * g->st[1] + r * g->dil[1] - g->plo[1];                          \
                  if (ih < 0 || ih >= g->in[1]) continue;                                          \
                  for (int64_t s = 0; s < g->k[2]; s++) {                                          \
                    int64_t iw = ow * g->st[2] + s * g->dil[2] - g->plo[2];                        \
                    if (iw < 0 || iw >= g->in[2]) continue;                                        \
                    T xv = xp[(id * g->in[1] + ih) * g->in[2] + iw];                               \
                    T wv = wp[(a * g->k[1] + r) * g->k[2] + s];                                    \
                    acc = MAC(acc, xv, wv);                                                        \
                  }                                                                                \
                }                                                                                  \
              }                                                                                    \
            }                                                                                      \
            yp[(od * g->out[1] + oh) * g->out[2] + ow] = acc;                                      \
          }                                                                                        \
    }                                                                                              \
  }

static inline double mac_f64(double acc, double x, double w) { return acc + x * w; }
static inline int64_t mac_i64(int64_t acc, int64_t x, int64_t w) {
  return (int64_t)((uint64_t)acc + (uint64_t)x * (uint64_t)w);
}
DEFINE_DIRECT(int64_t, direct_i64, mac_i64)
DEFINE_DIRECT(double, direct_f64, mac_f64)

/* ------------------------------------------------------------ transposed */

/* out[n, g·Og + o, y] += in[n, g·Cg + i, ih] · w[g·Cg + i, o, r] with
 * y = ih·stride − pad_lo + r·dilation (cropped to the result). One task per
 * output plane (n, o): it gathers every contribution to its own plane. */
#define DEFINE_TRANSPOSED(T, NAME, MAC)                                                            \
  static void NAME##_task(void *raw, int64_t lo, int64_t hi) {                                     \
    const PlainJob *j = raw;                                                                       \
    const ConvGeom *g = j->g;                                                                      \
    const T *jx = j->x, *jw = j->w;                                                                \
    for (int64_t t = lo; t < hi; t++) {                                                            \
      int64_t n = t / g->O, o = t % g->O, gi = o / g->Og, ol = o % g->Og;                          \
      T *yp = (T *)j->y + t * g->osz;                                                              \
      for (int64_t q = 0; q < g->osz; q++) yp[q] = 0;                                              \
      for (int64_t i = 0; i < g->Cg; i++) {                                                        \
        int64_t ci = gi * g->Cg + i;                                                               \
        const T *xp = jx + (n * g->C + ci) * g->isz;                                               \
        const T *wp = jw + (ci * g->Og + ol) * g->ksz;                                             \
        for (int64_t id = 0; id < g->in[0]; id++)                                                  \
          for (int64_t ih = 0; ih < g->in[1]; ih++)                                                \
            for (int64_t iw = 0; iw < g->in[2]; iw++) {                                            \
              T xv = xp[(id * g->in[1] + ih) * g->in[2] + iw];                                     \
              for (int64_t a = 0; a < g->k[0]; a++) {                                              \
                int64_t yd = id * g->st[0] - g->plo[0] + a * g->dil[0];                            \
                if (yd < 0 || yd >= g->out[0]) continue;                                           \
                for (int64_t r = 0; r < g->k[1]; r++) {                                            \
                  int64_t yh = ih * g->st[1] - g->plo[1] + r * g->dil[1];                          \
                  if (yh < 0 || yh >= g->out[1]) continue;                                         \
                  for (int64_t s = 0; s < g->k[2]; s++) {                                          \
                    int64_t yw = iw * g->st[2] - g->plo[2] + s * g->dil[2];                        \
                    if (yw < 0 || yw >= g->out[2]) continue;                                       \
                    T *dst = yp + (yd * g->out[1] + yh) * g->out[2] + yw;                          \
                    *dst = MAC(*dst, xv, wp[(a * g->k[1] + r) * g->k[2] + s]);                     \
                  }                                                                                \
                }                                                                                  \
              }                                                                                    \
            }                                                                                      \
      }                                                                                            \
    }                                                                                              \
  }

DEFINE_TRANSPOSED(int64_t, tconv_i64, mac_i64) /* integers; floats: tconv_gemm below */

/* ------------------------------------------------------------ transposed: GEMM + col2im */

/* Float engine of the transposed convolution (the data gradient of conv):
 * per unit (image n, group gi, block of Og output channels) and chunk of
 * input pixels, cols[(o, taps) × p] = W_gᵀ · x_g (one sgemm, op(A) = Aᵀ with
 * the weight read in place as (Cg × Og·ksz)), then col2im adds every row
 * into the unit's own output planes (no two units share a plane). With
 * fewer units than two per thread that do not divide evenly among the
 * threads (ResNet's stem: 3 output channels, ob = 1), the chunks of each
 * unit are also cut into slices: slice 0 writes y, slice s > 0 a zeroed
 * copy of y's size (partial[s − 1]) that is added to y after the join. */
typedef struct TgJob {
  const ConvGeom *g;
  const void *x, *w;
  void *y;
  bool f64;
  int64_t ob, nob;  /* output channels per unit, units per (image, group) */
  int64_t pc, npc;  /* input pixels per chunk, chunks */
  int64_t nslice;   /* chunk slices per unit */
  void **partial;   /* nslice − 1 buffers of y's size, or NULL */
  void **scratch;   /* per thread: cols (ob·ksz × pc) */
} TgJob;

#define DEFINE_COL2IM(T, NAME)                                                                     \
  static KHOT void NAME(const ConvGeom *g, const T *restrict cols, int64_t p0, int64_t plen,         \
                        int64_t olen, T *restrict y) {                                             \
    const int64_t H = g->in[1], W = g->in[2], OD = g->out[0], OH = g->out[1], OW = g->out[2];      \
    int64_t row = 0;                                                                               \
    for (int64_t o = 0; o < olen; o++)                                                             \
      for (int64_t a = 0; a < g->k[0]; a++)                                                        \
        for (int64_t r = 0; r < g->k[1]; r++)                                                      \
          for (int64_t s = 0; s < g->k[2]; s++, row++) {                                           \
            const T *src = cols + row * plen;                                                      \
            T *yp = y + o * g->osz;                                                                \
            int64_t sw = g->st[2], offw = s * g->dil[2] - g->plo[2];                               \
            /* input columns iw with 0 <= iw·sw + offw < OW */                                     \
            int64_t lo = offw >= 0 ? 0 : (-offw + sw - 1) / sw;                                    \
            int64_t hi = OW - offw <= 0 ? 0 : (OW - offw + sw - 1) / sw;                           \
            if (hi > W) hi = W;                                                                    \
            int64_t p = p0, end = p0 + plen;                                                       \
            int64_t iw0 = p0 % W, ih = (p0 / W) % H, id = p0 / W / H;                              \
            while (p < end) {                                                                      \
              int64_t n = W - iw0;                                                                 \
              if (n > end - p) n = end - p;                                                        \
              int64_t od = id * g->st[0] - g->plo[0] + a * g->dil[0];                              \
              int64_t oh = ih * g->st[1] - g->plo[1] + r * g->dil[1];                              \
              if (od >= 0 && od < OD && oh >= 0 && oh < OH) {                                      \
                T *dst = yp + (od * OH + oh) * OW;                                                 \
                const T *sv = src + (p - p0);                                                      \
                int64_t a0 = lo > iw0 ? lo : iw0, a1 = hi < iw0 + n ? hi : iw0 + n;                \
                if (sw == 1)                                                                       \
                  for (int64_t i = a0; i < a1; i++) dst[i + offw] += sv[i - iw0];                  \
                else                                                                               \
                  for (int64_t i = a0; i < a1; i++) dst[i * sw + offw] += sv[i - iw0];             \
              }                                                                                    \
              p += n;                                                                              \
              iw0 = 0;                                                                             \
              if (++ih == H) {                                                                     \
                ih = 0;                                                                            \
                id++;                                                                              \
              }                                                                                    \
            }                                                                                      \
          }                                                                                        \
  }

DEFINE_COL2IM(float, col2im_f32)
DEFINE_COL2IM(double, col2im_f64)

/* Chunk slices per unit: 1 unless the units are fewer than two per thread
 * and do not divide evenly among the threads; then enough for two tasks per
 * thread, each slice at least TG_MIN_SLICE input pixels. By the shape and
 * the thread count (a sliced sum rounds differently, so results at 1 thread
 * and at 2 may differ in the last bit). */
#define TG_MIN_SLICE 4096

static int64_t tgemm_slices(int64_t units, int nt, int64_t isz) {
  if (nt <= 1 || units >= 2 * nt || units % nt == 0) return 1;
  int64_t s = (2 * nt + units - 1) / units, most = isz / TG_MIN_SLICE;
  if (s > most) s = most;
  return s < 1 ? 1 : s;
}

static void tgemm_free_partial(TgJob *j, int64_t n, size_t bytes) {
  for (int64_t s = 0; s < n; s++) bufpool_free(j->partial[s], bytes);
  mem_free(j->partial);
  j->partial = NULL;
}

static void tgemm_task(void *raw, int64_t lo, int64_t hi) {
  const TgJob *j = raw;
  const ConvGeom *g = j->g;
  size_t es = j->f64 ? 8 : 4;
  int64_t rowlen = g->Og * g->ksz; /* a weight row (one input channel) */
  for (int64_t t = lo; t < hi; t++) {
    int64_t sl = t % j->nslice, unit = t / j->nslice;
    int64_t obi = unit % j->nob, ng = unit / j->nob, gi = ng % g->G, n = ng / g->G;
    int64_t o0 = obi * j->ob, olen = g->Og - o0 < j->ob ? g->Og - o0 : j->ob;
    char *dst = sl == 0 ? j->y : j->partial[sl - 1];
    char *y = dst + (size_t)((n * g->O + gi * g->Og + o0) * g->osz) * es;
    memset(y, 0, (size_t)(olen * g->osz) * es);
    const char *A = (const char *)j->w + (size_t)(gi * g->Cg * rowlen + o0 * g->ksz) * es;
    void *cols = j->scratch[threadpool_thread_index()];
    int64_t c0 = sl * j->npc / j->nslice, c1 = (sl + 1) * j->npc / j->nslice;
    for (int64_t c = c0; c < c1; c++) {
      int64_t p0 = c * j->pc, plen = g->isz - p0 < j->pc ? g->isz - p0 : j->pc;
      const char *B = (const char *)j->x + (size_t)((n * g->C + gi * g->Cg) * g->isz + p0) * es;
      if (j->f64) {
        kgemm_f64_serial(true, false, olen * g->ksz, plen, g->Cg, (const double *)A, rowlen, (const double *)B,
                         g->isz, 0.0, cols, plen);
        col2im_f64(g, cols, p0, plen, olen, (double *)y);
      } else {
        kgemm_f32_serial_over(true, false, olen * g->ksz, plen, g->Cg, (const float *)A, rowlen,
                              (const float *)B, g->isz, cols, plen);
        col2im_f32(g, cols, p0, plen, olen, (float *)y);
      }
    }
  }
}

/* Depthwise transposed convolution (one input and one output channel per
 * group: the data gradient of a depthwise convolution), float32, as the
 * depthwise engine's forward convolution: with stride 1 output y reads
 * x[y + plo − r·d]·w[r], i.e. a convolution of x with the flipped kernel and
 * padding d·(k−1) − plo before; 2-D with a stride s > 1 goes by stride phase
 * (ops/kernels/k_tconv_dw.h), 3-D first spreads x onto a zeroed grid
 * (x_up[i·s] = x[i]), after which it is the stride-1 case. Returns
 * 1 (done), 0 (geometry not handled: use the GEMM engine), -1 (failed). */
static int tconv_depthwise(KernelCtx *c, const ConvGeom *g, const float *x, const float *w, float *y) {
  if (g->Cg != 1 || g->Og != 1 || g->G != g->C) return 0;
  bool flat = g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->st[0] == 1 && g->plo[0] == 0;
  if (flat && (g->st[1] > 1 || g->st[2] > 1)) {
    /* strided 2-D, any dilation: by stride phase, no zeros touched (ops/kernels/k_tconv_dw.h) */
    KtdwGeom t = {.planes = g->N * g->C, .C = g->C, .in = {g->in[1], g->in[2]}, .out = {g->out[1], g->out[2]},
                  .k = {g->k[1], g->k[2]}, .st = {g->st[1], g->st[2]}, .dil = {g->dil[1], g->dil[2]},
                  .plo = {g->plo[1], g->plo[2]}};
    if (ktdw_fits(&t)) return ktdw_run(&t, x, w, y) ? 1 : (kernel_fail(c, "%s: out of memory", c->op->name), -1);
  }
  ConvGeom f = *g;
  bool spread = false;
  f.isz = 1;
  for (int a = 0; a < 3; a++) {
    int64_t dk = (g->k[a] - 1) * g->dil[a] + 1;
    f.in[a] = g->in[a] == 0 ? 0 : (g->in[a] - 1) * g->st[a] + 1;
    f.st[a] = 1;
    f.plo[a] = dk - 1 - g->plo[a];
    f.phi[a] = g->out[a] - 1 + dk - f.in[a] - f.plo[a];
    if (f.plo[a] < 0 || f.phi[a] < 0 || f.in[a] <= 0) return 0;
    spread = spread || g->st[a] > 1;
    f.isz *= f.in[a];
  }
  if (!kplane_fits(f.in, f.out, f.k, f.st, f.dil, f.plo, f.phi)) return 0;
  float *wf = mem_malloc_try((size_t)(g->C * g->ksz) * sizeof(float));
  size_t xsn = spread ? (size_t)(g->N * g->C * f.isz) : 0;
  float *xs = spread ? mem_malloc_try(xsn * sizeof(float)) : NULL;
  if (!wf || (spread && !xs)) {
    mem_free(wf);
    mem_free(xs);
    return kernel_fail(c, "%s: out of memory", c->op->name), -1;
  }
  for (int64_t ch = 0; ch < g->C; ch++) /* flip every axis of the window */
    for (int64_t t = 0; t < g->ksz; t++) wf[ch * g->ksz + t] = w[ch * g->ksz + g->ksz - 1 - t];
  if (spread) {
    memset(xs, 0, xsn * sizeof(float));
    for (int64_t p = 0; p < g->N * g->C; p++)
      for (int64_t id = 0; id < g->in[0]; id++)
        for (int64_t ih = 0; ih < g->in[1]; ih++) {
          const float *src = x + ((p * g->in[0] + id) * g->in[1] + ih) * g->in[2];
          float *dst = xs + p * f.isz + ((id * g->st[0]) * f.in[1] + ih * g->st[1]) * f.in[2];
          for (int64_t iw = 0; iw < g->in[2]; iw++) dst[iw * g->st[2]] = src[iw];
        }
  }
  bool ok = conv_depthwise(c, &f, spread ? xs : x, wf, y, NULL);
  mem_free(wf);
  mem_free(xs);
  return ok ? 1 : -1;
}

/* Grouped transposed convolution with stride 1 (the data gradient of
 * ResNeXt's 3×3 groups=32), float32: as for the depthwise one above, output y
 * reads x[y + plo − r·d]·w[r], a forward convolution with the flipped window
 * and padding d·(k−1) − plo before, whose weight for output channel
 * g·Og + o and input channel i is w[g·Cg + i, o] flipped. The grouped engine
 * then runs it instead of GEMMs Og·kh·kw rows by Cg deep plus col2im.
 * Returns 1 (done), 0 (not this case), -1 (failed). */
static int tconv_grouped(KernelCtx *c, const ConvGeom *g, const float *x, const float *w, float *y) {
  if (g->G <= 1 || (g->Cg == 1 && g->Og == 1)) return 0;
  ConvGeom f = *g;
  for (int a = 0; a < 3; a++) {
    int64_t dk = (g->k[a] - 1) * g->dil[a] + 1;
    if (g->st[a] != 1) return 0;
    f.plo[a] = dk - 1 - g->plo[a];
    f.phi[a] = g->out[a] - 1 + dk - g->in[a] - f.plo[a];
    if (f.plo[a] < 0 || f.phi[a] < 0 || g->in[a] <= 0) return 0;
  }
  f.Kg = f.Cg * f.ksz;
  if (!grp_wanted(&f)) return 0;
  float *wf = mem_malloc_try((size_t)(g->O * f.Kg) * sizeof(float));
  if (!wf) return kernel_fail(c, "%s: out of memory", c->op->name), -1;
  for (int64_t gi = 0; gi < g->G; gi++)
    for (int64_t o = 0; o < g->Og; o++)
      for (int64_t i = 0; i < g->Cg; i++) {
        const float *src = w + ((gi * g->Cg + i) * g->Og + o) * g->ksz;
        float *dst = wf + (gi * g->Og + o) * f.Kg + i * g->ksz;
        for (int64_t t = 0; t < g->ksz; t++) dst[t] = src[g->ksz - 1 - t];
      }
  bool ok = conv_grouped(c, &f, x, wf, y, NULL);
  mem_free(wf);
  return ok ? 1 : -1;
}

/* The transposed convolution as GEMM + col2im; false (with a message) when
 * the cols buffer cannot be allocated. */
static bool tconv_gemm(KernelCtx *c, const ConvGeom *g, const void *x, const void *w, void *y, bool f64) {
  kgemm_init();
  int nt = threadpool_size();
  size_t es = f64 ? 8 : 4;
  if (!f64) {
    int r = tconv_depthwise(c, g, x, w, y);
    if (!r) r = tconv_grouped(c, g, x, w, y);
    if (r) return r > 0;
  }
  bool pointwise = g->ksz == 1;
  for (int i = 0; i < 3; i++) pointwise = pointwise && g->st[i] == 1 && g->plo[i] == 0 && g->out[i] == g->in[i];
  if (pointwise) {
    /* 1×1, stride 1, unpadded (ResNet's 1×1 layers): output pixel = input pixel, so
     * y_g[Og × P] = W_gᵀ[Og × Cg] · x_g[Cg × P], one threaded GEMM per (image, group)
     * straight into y (no cols, no col2im, no zeroing) */
    for (int64_t n = 0; n < g->N; n++)
      for (int64_t gi = 0; gi < g->G; gi++) {
        size_t wo = (size_t)(gi * g->Cg * g->Og), xo = (size_t)((n * g->C + gi * g->Cg) * g->isz);
        size_t yo = (size_t)((n * g->O + gi * g->Og) * g->osz);
        if (f64)
          kgemm_f64(true, false, g->Og, g->isz, g->Cg, (const double *)w + wo, g->Og, (const double *)x + xo, g->isz,
                    0.0, (double *)y + yo, g->osz);
        else
          kgemm_f32(true, false, g->Og, g->isz, g->Cg, (const float *)w + wo, g->Og, (const float *)x + xo, g->isz,
                    0.0f, (float *)y + yo, g->osz);
      }
    return true;
  }
  TgJob j = {.g = g, .x = x, .w = w, .y = y, .f64 = f64};
  /* output-channel blocks: about 4 units per thread, cols rows at most ~1024 */
  int64_t want = 4 * (int64_t)nt, ob = g->Og, base = g->N * g->G;
  while (ob > 1 && (base * ((g->Og + ob - 1) / ob) < want || ob * g->ksz > 1024)) ob = (ob + 1) / 2;
  j.ob = ob;
  j.nob = (g->Og + ob - 1) / ob;
  int64_t pc = (int64_t)(1 << 20) / ((int64_t)es * ob * g->ksz);
  if (pc < 256) pc = 256;
  if (pc > g->isz) pc = g->isz;
  if (pc < 1) pc = 1;
  j.npc = (g->isz + pc - 1) / pc;
  j.nslice = tgemm_slices(base * j.nob, nt, g->isz);
  if (j.nslice > 1) { /* whole chunks dealt evenly: npc a multiple of the slices */
    j.npc = (j.npc + j.nslice - 1) / j.nslice * j.nslice;
    pc = (g->isz + j.npc - 1) / j.npc;
    j.npc = (g->isz + pc - 1) / pc;
    if (j.npc < j.nslice) j.nslice = j.npc;
  }
  j.pc = pc;
  j.scratch = kscratch(0, (size_t)(ob * g->ksz * pc) * es + 64);
  if (!j.scratch) return kernel_fail(c, "%s: out of memory for the column buffer", c->op->name), false;
  size_t ybytes = (size_t)(g->N * g->O * g->osz) * es;
  if (j.nslice > 1) {
    j.partial = mem_calloc((size_t)(j.nslice - 1), sizeof *j.partial);
    for (int64_t s = 0; s + 1 < j.nslice; s++) {
      j.partial[s] = bufpool_alloc(ybytes);
      if (!j.partial[s]) {
        tgemm_free_partial(&j, s, ybytes);
        return kernel_fail(c, "%s: out of memory for partial sums", c->op->name), false;
      }
    }
  }
  threadpool_for(base * j.nob * j.nslice, 1, tgemm_task, &j);
  if (j.nslice > 1) {
    kconv_add_partials(y, j.partial, j.nslice - 1, g->N * g->O * g->osz, f64);
    tgemm_free_partial(&j, j.nslice - 1, ybytes);
  }
  return true;
}

/* ------------------------------------------------------------ NHWC / HWIO */

/* NHWC data, HWIO weight, NHWC result, float32, no groups:
 * out[P × O] = cols[P × (kh·kw·C)] · W[(kh·kw·C) × O], rows of cols being
 * the C-vectors under each tap (a 1×1 stride-1 unpadded conv uses the input). */
typedef struct NhwcJob {
  const ConvGeom *g;
  const float *x, *w;
  float *y;
  int64_t pb, npb;
  float **scratch;
  bool direct;
} NhwcJob;

static void nhwc_task(void *raw, int64_t lo, int64_t hi) {
  const NhwcJob *j = raw;
  const ConvGeom *g = j->g;
  int64_t H = g->in[1], W = g->in[2], C = g->C, OW = g->out[2], K = g->Kg;
  for (int64_t t = lo; t < hi; t++) {
    int64_t n = t / j->npb, p0 = (t % j->npb) * j->pb;
    int64_t plen = g->osz - p0 < j->pb ? g->osz - p0 : j->pb;
    const float *xn = j->x + n * g->isz * C;
    const float *A;
    int64_t lda;
    if (j->direct) {
      A = xn + p0 * C;
      lda = C;
    } else {
      float *cols = j->scratch[threadpool_thread_index()];
      for (int64_t p = p0; p < p0 + plen; p++) {
        int64_t oh = p / OW, ow = p % OW;
        float *dst = cols + (p - p0) * K;
        for (int64_t r = 0; r < g->k[1]; r++) {
          int64_t ih = oh * g->st[1] + r * g->dil[1] - g->plo[1];
          for (int64_t s = 0; s < g->k[2]; s++, dst += C) {
            int64_t iw = ow * g->st[2] + s * g->dil[2] - g->plo[2];
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) memset(dst, 0, (size_t)C * sizeof *dst);
            else memcpy(dst, xn + (ih * W + iw) * C, (size_t)C * sizeof *dst);
          }
        }
      }
      A = cols;
      lda = K;
    }
    kgemm_f32_serial(false, false, plen, g->O, K, A, lda, j->w, g->O, 0.0f,
                     j->y + (n * g->osz + p0) * g->O, g->O);
  }
}

static bool conv_nhwc(KernelCtx *c, const ConvGeom *g, const float *x, const float *w, float *y) {
  kgemm_init();
  NhwcJob j = {.g = g, .x = x, .w = w, .y = y};
  j.direct = g->ksz == 1 && g->st[1] == 1 && g->st[2] == 1 && g->plo[1] == 0 && g->plo[2] == 0 &&
             g->isz == g->osz;
  int64_t width = g->Kg > g->O ? g->Kg : g->O;
  int64_t pb = CONV_BLOCK_BYTES / (4 * (width > 0 ? width : 1));
  if (pb < 16) pb = 16;
  if (pb > g->osz) pb = g->osz;
  if (pb < 1) pb = 1;
  j.pb = pb;
  j.npb = (g->osz + pb - 1) / pb;
  bool ok = true;
  void **scratch = NULL;
  if (!j.direct) {
    scratch = kscratch(0, (size_t)(pb * g->Kg) * 4 + 64);
    ok = scratch != NULL;
  }
  if (ok) {
    j.scratch = (float **)scratch;
    threadpool_for(g->N * j.npb, 1, nhwc_task, &j);
  } else {
    kernel_fail(c, "%s: out of memory for the im2col buffer", c->op->name);
  }
  return ok;
}

/* ------------------------------------------------------------ driver */

typedef struct ConvCall {
  ConvGeom g;
  bool transposed;
  bool split;                    /* operands converted from split layouts (conv_split) */
  const Tensor *x, *w;           /* data and weight, in layouts dl and kl */
  int xpos[5], wpos[5], ypos[5]; /* canonical dim j lives at layout dim pos[j] */
  bool xcanon, wcanon, ycanon;
  const char *dl, *kl, *ol;
} ConvCall;

static const char *const SPATIAL[4] = {"", "W", "HW", "DHW"};

/* Largest stride, dilation or padding accepted: keeps every index product
 * (extents are at most 2^40 elements) far from int64 overflow. */
#define CONV_ATTR_MAX ((int64_t)1 << 32)

/* The canonical data and weight layouts ("NCHW", "OIHW" / "IOHW"). */
static void conv_canon(int nd, bool transposed, char dcanon[8], char kcanon[8]) {
  snprintf(dcanon, 8, "NC%s", SPATIAL[nd]);
  snprintf(kcanon, 8, "%s%s", transposed ? "IO" : "OI", SPATIAL[nd]);
}

/* The data, kernel and out layout attributes (out_layout "" = data_layout). */
static void conv_layout_attrs(KernelCtx *c, int nd, bool transposed, const char **dl,
                              const char **kl, const char **ol) {
  static const char *const dflt_data[4] = {"", "NCW", "NCHW", "NCDHW"};
  static const char *const dflt_kern[4] = {"", "OIW", "OIHW", "OIDHW"};
  static const char *const dflt_tkern[4] = {"", "IOW", "IOHW", "IODHW"};
  *dl = kernel_attr_str(c, "data_layout", dflt_data[nd]);
  *kl = kernel_attr_str(c, "kernel_layout", transposed ? dflt_tkern[nd] : dflt_kern[nd]);
  *ol = kernel_attr_str(c, "out_layout", "");
  if (!(*ol)[0]) *ol = *dl;
}

/* Reads attributes and shapes into cc, whose x, w, dl, kl, ol (primal
 * layouts) and split are set; false after kernel_fail. */
static bool conv_setup(KernelCtx *c, int nd, bool transposed, ConvCall *cc) {
  ConvGeom *g = &cc->g;
  memset(g, 0, sizeof *g);
  cc->transposed = transposed;
  g->nd = nd;
  const char *name = c->op->name;
  char dcanon[8], kcanon[8];
  conv_canon(nd, transposed, dcanon, kcanon);
  if (!layout_pos(cc->dl, dcanon, cc->xpos) || !layout_pos(cc->ol, dcanon, cc->ypos))
    return kernel_fail(c, "%s: unsupported data layout '%s' / '%s'", name, cc->dl, cc->ol), false;
  if (!layout_pos(cc->kl, kcanon, cc->wpos))
    return kernel_fail(c, "%s: unsupported kernel layout '%s'", name, cc->kl), false;
  cc->xcanon = pos_is_identity(cc->xpos, nd + 2);
  cc->wcanon = pos_is_identity(cc->wpos, nd + 2);
  cc->ycanon = pos_is_identity(cc->ypos, nd + 2);
  const Tensor *x = cc->x, *w = cc->w;
  if (x->ndim != nd + 2 || w->ndim != nd + 2)
    return kernel_fail(c, "%s: expected rank-%d data and weight", name, nd + 2), false;
  int64_t st[3], dil[3], lo[3], hi[3];
  if (!conv_ints(c, "strides", nd, 1, st) || !conv_ints(c, "dilation", nd, 1, dil))
    return kernel_fail(c, "%s: strides/dilation need %d values", name, nd), false;
  if (!conv_padding(c, nd, lo, hi)) return kernel_fail(c, "%s: invalid padding", name), false;
  g->G = kernel_attr_int(c, "groups", 1);
  g->N = x->shape[cc->xpos[0]];
  g->C = x->shape[cc->xpos[1]];
  int64_t w0 = w->shape[cc->wpos[0]], w1 = w->shape[cc->wpos[1]];
  for (int i = 0; i < 3; i++) {
    int s = i - (3 - nd); /* index among the nd spatial dims, < 0 for padding dims */
    g->in[i] = s < 0 ? 1 : x->shape[cc->xpos[2 + s]];
    g->k[i] = s < 0 ? 1 : w->shape[cc->wpos[2 + s]];
    g->st[i] = s < 0 ? 1 : st[s];
    g->dil[i] = s < 0 ? 1 : dil[s];
    g->plo[i] = s < 0 ? 0 : lo[s];
    g->phi[i] = s < 0 ? 0 : hi[s];
    if (g->st[i] < 1 || g->dil[i] < 1)
      return kernel_fail(c, "%s: strides and dilation must be positive", name), false;
    if (g->st[i] > CONV_ATTR_MAX || g->dil[i] > CONV_ATTR_MAX || g->plo[i] > CONV_ATTR_MAX ||
        g->phi[i] > CONV_ATTR_MAX)
      return kernel_fail(c, "%s: strides, dilation or padding out of range", name), false;
  }
  if (g->G < 1 || g->C % g->G != 0)
    return kernel_fail(c, "%s: groups=%lld does not divide %lld input channels", name,
                       (long long)g->G, (long long)g->C), false;
  g->Cg = g->C / g->G;
  if (transposed) {
    if (w0 != g->C)
      return kernel_fail(c, "%s: weight has %lld input channels, data %lld", name, (long long)w0,
                         (long long)g->C), false;
    g->Og = w1;
    g->O = w1 * g->G;
  } else if (g->G > 1 && g->G == g->C && w0 == g->G && w1 != 1) {
    /* depthwise weight (C, multiplier, k...): the same memory as (C·M, 1, k...) */
    g->O = w0 * w1;
    g->Og = w1;
  } else {
    g->O = w0;
    if (g->O % g->G != 0 || w1 != g->Cg)
      return kernel_fail(c, "%s: weight shape does not match %lld groups of %lld channels", name,
                         (long long)g->G, (long long)g->Cg), false;
    g->Og = g->O / g->G;
  }
  if (transposed && g->G > 1 && !cc->split && c->out_type && c->out_type->kind == TYPE_TENSOR &&
      c->out_type->tensor.ndim == (uint32_t)(nd + 2)) {
    const Dim *od = &c->out_type->tensor.dims[cc->ypos[1]];
    if (od->kind == DIM_INT && od->value != g->O)
      return kernel_fail(c, "%s: groups=%lld needs channels=%lld (the weight gives %lld per group)",
                         name, (long long)g->G, (long long)g->O, (long long)g->Og), false;
  }
  int64_t opad[3] = {0, 0, 0};
  if (transposed) {
    int64_t v[4];
    int32_t n = kernel_attr_ints(c, "output_padding", v, 4);
    for (int s = 0; s < nd && n > 0; s++) opad[3 - nd + s] = n == 1 ? v[0] : s < n ? v[s] : 0;
  }
  g->isz = g->ksz = g->osz = 1;
  for (int i = 0; i < 3; i++) {
    int64_t dk = (g->k[i] - 1) * g->dil[i] + 1;
    int64_t o = transposed ? g->st[i] * (g->in[i] - 1) + dk - g->plo[i] - g->phi[i] + opad[i]
                           : (g->in[i] + g->plo[i] + g->phi[i] - dk) / g->st[i] + 1;
    if (!transposed && g->in[i] + g->plo[i] + g->phi[i] < dk) o = 0;
    if (o < 0) o = 0;
    g->out[i] = o;
    g->isz *= g->in[i];
    g->ksz *= g->k[i];
    g->osz *= o;
  }
  g->Kg = g->Cg * g->ksz;
  return true;
}

/* Is the call one of relayc's fused convolutions? */
static bool conv_fused_op(const KernelCtx *c) {
  return c->op_id == OP_RELAYC_CONV2D_BIAS || c->op_id == OP_RELAYC_CONV2D_ADD ||
         c->op_id == OP_RELAYC_CONV2D_BIAS_ADD || c->op_id == OP_RELAYC_CONV2D_RELU;
}

/* The epilogue inputs and ReLU of a fused call (transform/conv_epilogue.c). */
static bool conv_epilogue(KernelCtx *c, const ConvCall *cc, Epi *e, int *bias_in, int *res_in) {
  memset(e, 0, sizeof *e);
  *bias_in = *res_in = -1;
  if (!conv_fused_op(c)) return true;
  uint32_t next = 2;
  if (c->op_id == OP_RELAYC_CONV2D_BIAS || c->op_id == OP_RELAYC_CONV2D_BIAS_ADD) *bias_in = (int)next++;
  if (c->op_id == OP_RELAYC_CONV2D_ADD || c->op_id == OP_RELAYC_CONV2D_BIAS_ADD) *res_in = (int)next++;
  e->relu = c->op_id == OP_RELAYC_CONV2D_RELU || kernel_attr_bool(c, "relu", false);
  if (next > kernel_ninputs(c)) return kernel_fail(c, "%s: fused call lacks inputs", c->op->name), false;
  if (!cc->ycanon) return kernel_fail(c, "%s: fused epilogue needs the canonical layout", c->op->name), false;
  if (*bias_in >= 0) {
    const Tensor *b = kernel_input(c, (uint32_t)*bias_in);
    if (b->numel != cc->g.O || !dtype_eq(b->dtype, DTYPE(DT_FLOAT, 32)))
      return kernel_fail(c, "%s: fused bias must be float32 (%lld,)", c->op->name, (long long)cc->g.O), false;
    e->bias = b->data;
  }
  if (*res_in >= 0) {
    const Tensor *r = kernel_input(c, (uint32_t)*res_in);
    if (r->numel != cc->g.N * cc->g.O * cc->g.osz || !dtype_eq(r->dtype, DTYPE(DT_FLOAT, 32)))
      return kernel_fail(c, "%s: fused residual has the wrong shape", c->op->name), false;
    e->res = r->data;
  }
  return true;
}

/* Canonical compute-type copy of operand t (converted, permuted), or its data. */
static void *conv_operand(const Tensor *t, const int *pos, bool canon, DType as, KCompute k,
                          bool *owned) {
  bool conv_owned;
  void *buf = kcvt_load(t, as, k, &conv_owned);
  if (!buf) return NULL;
  if (canon) {
    *owned = conv_owned;
    return buf;
  }
  void *p = kcvt_alloc(k, t->numel);
  if (p) permute_to(buf, p, t->ndim, t->shape, pos, kcvt_size(k));
  if (conv_owned) mem_free(buf);
  *owned = true;
  return p;
}

/* Runs the convolution of cc->x and cc->w (primal layouts cc->dl, cc->kl)
 * into a result in layout cc->ol: the call's output, or with `result` set
 * (split layouts) a new tensor stored there. */
static int conv_exec(KernelCtx *c, int nd, bool transposed, ConvCall *cc_in, Tensor **result) {
  ConvCall cc = *cc_in;
  if (!conv_setup(c, nd, transposed, &cc)) return KERNEL_ERROR;
  const ConvGeom *g = &cc.g;
  const Tensor *x = cc.x, *w = cc.w;
  DType odt = x->dtype;
  kernel_attr_dtype(c, "out_dtype", &odt);
  KCompute k = kcvt_kind(odt);
  Epi epi;
  int bias_in, res_in;
  if (!conv_epilogue(c, &cc, &epi, &bias_in, &res_in)) return KERNEL_ERROR;
  bool fused = epi_active(&epi);
  if (fused && k != KC_F32) return kernel_fail(c, "%s: fused epilogue needs float32", c->op->name);

  /* result tensor in the output layout */
  int64_t cshape[5], oshape[5];
  cshape[0] = g->N;
  cshape[1] = g->O;
  for (int s = 0; s < nd; s++) cshape[2 + s] = g->out[3 - nd + s];
  for (int j = 0; j < nd + 2; j++) oshape[cc.ypos[j]] = cshape[j];
  Tensor *out = NULL;
  if (res_in >= 0 && dtype_eq(odt, DTYPE(DT_FLOAT, 32))) {
    out = kernel_take_input(c, (uint32_t)res_in);
    if (out) {
      kernel_set_output(c, out);
      epi.res = NULL;
      epi.accumulate = true;
    }
  }
  if (!out && result) {
    out = *result = tensor_new(odt, nd + 2, oshape);
    if (!out) return kernel_fail(c, "%s: out of memory", c->op->name);
  }
  if (!out) out = kernel_output(c, odt, nd + 2, oshape);
  if (!out) return KERNEL_ERROR;

  bool f32 = k == KC_F32;
  /* NHWC + HWIO float32 fast path (no groups, no epilogue) */
  if (!transposed && f32 && !fused && nd == 2 && g->G == 1 && strcmp(cc.dl, "NHWC") == 0 &&
      strcmp(cc.kl, "HWIO") == 0 && strcmp(cc.ol, "NHWC") == 0 && kcvt_is_native(x->dtype, k) &&
      kcvt_is_native(w->dtype, k) && kcvt_is_native(odt, k)) {
    return conv_nhwc(c, g, x->data, w->data, out->data) ? KERNEL_OK : KERNEL_ERROR;
  }

  bool xo = false, wo = false;
  void *xb = conv_operand(x, cc.xpos, cc.xcanon, odt, k, &xo);
  void *wb = xb ? conv_operand(w, cc.wpos, cc.wcanon, odt, k, &wo) : NULL;
  bool direct_out = cc.ycanon && kcvt_is_native(odt, k);
  void *yb = direct_out ? out->data : kcvt_alloc(k, out->numel);
  bool ok = xb && wb && yb;
  if (!ok) kernel_fail(c, "%s: out of memory", c->op->name);
  if (ok && out->numel > 0) {
    bool depthwise = g->Cg == 1 && g->G > 1;
    if (transposed) {
      if (k == KC_F32 || k == KC_F64) {
        ok = tconv_gemm(c, g, xb, wb, yb, k == KC_F64);
      } else {
        PlainJob j = {g, xb, wb, yb};
        threadpool_for(g->N * g->O, 1, tconv_i64_task, &j);
      }
    } else if (k == KC_F32 && depthwise && kplane_fits(g->in, g->out, g->k, g->st, g->dil, g->plo, g->phi)) {
      ok = conv_depthwise(c, g, xb, wb, yb, fused ? &epi : NULL);
      fused = false; /* applied inside */
    } else if (k == KC_F32 && grp_wanted(g)) {
      ok = conv_grouped(c, g, xb, wb, yb, fused ? &epi : NULL);
      fused = false; /* applied inside */
    } else if (k == KC_F32 && conv_winograd(g, xb, wb, yb, fused ? &epi : NULL,
                                            !wo && (w->flags & TENSOR_READONLY))) {
      fused = false; /* applied inside */
    } else if (k == KC_F32 || (k == KC_F64 && !depthwise)) {
      ok = conv_gemm(c, g, xb, wb, yb, k == KC_F64, fused ? &epi : NULL);
      fused = false;
    } else {
      PlainJob j = {g, xb, wb, yb};
      threadpool_for(g->N * g->O, 1, k == KC_F64 ? direct_f64_task : direct_i64_task, &j);
    }
    if (ok && fused) /* engines without their own epilogue */
      for (int64_t n = 0; n < g->N; n++) epi_block(g, &epi, yb, n, 0, g->O, 0, g->osz);
  }
  if (ok && !direct_out) {
    if (cc.ycanon) {
      kcvt_store(out, yb, k);
    } else {
      void *tmp = kcvt_alloc(k, out->numel);
      if (!tmp) {
        ok = false;
        kernel_fail(c, "%s: out of memory", c->op->name);
      } else {
        permute_from(yb, tmp, nd + 2, cshape, cc.ypos, kcvt_size(k));
        kcvt_store(out, tmp, k);
        mem_free(tmp);
      }
    }
  }
  if (xo) mem_free(xb);
  if (wo) mem_free(wb);
  if (!direct_out) mem_free(yb);
  return ok ? KERNEL_OK : KERNEL_ERROR;
}

/* Split layouts (NCHW16c, OIHW16i16o, ...; spec/ops.md 6.7): the operands
 * are converted to the canonical layouts (a split axis counts outer × factor,
 * so channel padding reads 0), the canonical convolution runs, and its result
 * is converted to the out layout. A fused epilogue is not supported here
 * (transform/conv_epilogue.c fuses canonical layouts only). */
static int conv_split(KernelCtx *c, int nd, bool transposed, const char *dl, const char *kl,
                      const char *ol) {
  const char *name = c->op->name;
  char dcanon[8], kcanon[8];
  conv_canon(nd, transposed, dcanon, kcanon);
  Layout ld, lk, lo, cd, ck;
  if (!layout_parse(dl, &ld) || !layout_parse(ol, &lo) || !layout_parse(kl, &lk))
    return kernel_fail(c, "%s: invalid layout '%s' / '%s' / '%s'", name, dl, kl, ol);
  layout_parse(dcanon, &cd);
  layout_parse(kcanon, &ck);
  if (conv_fused_op(c)) return kernel_fail(c, "%s: fused epilogue needs the canonical layout", name);
  const Tensor *x = kernel_input(c, 0), *w = kernel_input(c, 1);
  if (x->ndim != ld.n || w->ndim != lk.n)
    return kernel_fail(c, "%s: data/weight ranks do not match layouts '%s' / '%s'", name, dl, kl);
  int64_t cshape[TENSOR_MAX_NDIM];
  if (!layout_convert_shape(&ld, &cd, x->shape, cshape) || !layout_convert_shape(&lk, &ck, w->shape, cshape))
    return kernel_fail(c, "%s: data/weight shapes do not fit layouts '%s' / '%s'", name, dl, kl);
  Tensor *xc = layout_convert_new(x, &ld, &cd);
  Tensor *wc = xc ? layout_convert_new(w, &lk, &ck) : NULL;
  Tensor *yc = NULL;
  int rc = KERNEL_ERROR;
  if (!xc || !wc) {
    kernel_fail(c, "%s: out of memory", name);
  } else {
    ConvCall cc = {.split = true, .x = xc, .w = wc, .dl = dcanon, .kl = kcanon, .ol = dcanon};
    rc = conv_exec(c, nd, transposed, &cc, &yc);
  }
  if (rc == KERNEL_OK) {
    int64_t oshape[TENSOR_MAX_NDIM];
    Tensor *out = NULL;
    if (!layout_convert_shape(&cd, &lo, yc->shape, oshape)) {
      rc = kernel_fail(c, "%s: unsupported out layout '%s'", name, ol);
    } else if (!(out = kernel_output(c, yc->dtype, lo.n, oshape))) {
      rc = KERNEL_ERROR;
    } else if (!layout_convert_into(yc, &cd, &lo, out)) {
      rc = kernel_fail(c, "%s: out of memory", name);
    }
  }
  if (xc) tensor_release(xc);
  if (wc) tensor_release(wc);
  if (yc) tensor_release(yc);
  return rc;
}

static int conv_run(KernelCtx *c, int nd, bool transposed) {
  const char *dl, *kl, *ol;
  conv_layout_attrs(c, nd, transposed, &dl, &kl, &ol);
  if (strpbrk(dl, "0123456789") || strpbrk(kl, "0123456789") || strpbrk(ol, "0123456789"))
    return conv_split(c, nd, transposed, dl, kl, ol);
  ConvCall cc = {.x = kernel_input(c, 0), .w = kernel_input(c, 1), .dl = dl, .kl = kl, .ol = ol};
  return conv_exec(c, nd, transposed, &cc, NULL);
}

int kernel_NN_CONV1D(KernelCtx *c);
int kernel_NN_CONV2D(KernelCtx *c);
int kernel_NN_CONV3D(KernelCtx *c);
int kernel_NN_CONV2D_TRANSPOSE(KernelCtx *c);
int kernel_NN_CONV1D_TRANSPOSE(KernelCtx *c);
int kernel_NN_CONV3D_TRANSPOSE(KernelCtx *c);

int kernel_NN_CONV1D(KernelCtx *c) { return conv_run(c, 1, false); }
int kernel_NN_CONV2D(KernelCtx *c) { return conv_run(c, 2, false); }
int kernel_NN_CONV3D(KernelCtx *c) { return conv_run(c, 3, false); }
int kernel_NN_CONV2D_TRANSPOSE(KernelCtx *c) { return conv_run(c, 2, true); }
int kernel_NN_CONV1D_TRANSPOSE(KernelCtx *c) { return conv_run(c, 1, true); }
int kernel_NN_CONV3D_TRANSPOSE(KernelCtx *c) { return conv_run(c, 3, true); }

int kernel_RELAYC_CONV2D_BIAS(KernelCtx *c);
int kernel_RELAYC_CONV2D_ADD(KernelCtx *c);
int kernel_RELAYC_CONV2D_BIAS_ADD(KernelCtx *c);
int kernel_RELAYC_CONV2D_RELU(KernelCtx *c);

int kernel_RELAYC_CONV2D_BIAS(KernelCtx *c) { return conv_run(c, 2, false); }
int kernel_RELAYC_CONV2D_ADD(KernelCtx *c) { return conv_run(c, 2, false); }
int kernel_RELAYC_CONV2D_BIAS_ADD(KernelCtx *c) { return conv_run(c, 2, false); }
int kernel_RELAYC_CONV2D_RELU(KernelCtx *c) { return conv_run(c, 2, false); }
