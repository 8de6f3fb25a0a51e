/* ops/kernels/k_tconv_dw.c — strided depthwise transposed convolution by stride phase
 * (ops/kernels/k_tconv_dw.h).
 *
 * Per axis (stride s, dilation d, e = gcd(s, d)), output phase p (oh = p + s·m) reads
 * the taps r with r·d ≡ p + plo (mod s): none unless e divides p + plo, else
 * r = r0 + j·(s/e) (j < nj, r0 the least), at x[b + m − j·(d/e)] with
 * b = (p + plo − r0·d) / s (exact). With d = 1: r0 = (p + plo) mod s, b = (p + plo) div s,
 * reads x[b + m − j]. Each input plane is
 * copied once into a zero-bordered plane padded enough for every phase; then a
 * phase (py, px) is one unit-stride sweep over v = m_y·Wp + m_x of its taps, each a
 * constant offset into that plane (kplane_sweep, the depthwise engine's 8-float
 * register-blocked loop), and its rows are stored into y with stride s (stride 2:
 * the two column phases are interleaved with vector shuffles).
 *
 * The taps of a phase run from the last kernel row and column to the first: the
 * order in which the zero-spread form (the depthwise forward of the spread input
 * with the flipped window) meets the same non-zero products, so results equal
 * that form's bit for bit (tests/unit/check_k_conv.c checks it).
 */
#include "ops/kernels/k_tconv_dw.h"

#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_plane.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/k_vec8.h"
#include "runtime/threadpool.h"

#define KTDW_MAX_FLOATS ((int64_t)1 << 28)

/* One axis of one phase: nj taps r0, r0 + rstep, ... of the kernel; output m < M reads
 * tap j at x[b + m − j·xstep]. */
typedef struct AxisPhase {
  int64_t r0, rstep, nj, b, xstep, M;
} AxisPhase;

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Phase p of an axis with kernel extent k, stride s, dilation d, padding plo before and
 * out outputs. */
static AxisPhase axis_phase(int64_t p, int64_t k, int64_t s, int64_t d, int64_t plo, int64_t out) {
  AxisPhase a = {.nj = 0, .b = 0};
  int64_t q = p + plo, e = gcd64(s, d);
  a.rstep = s / e;
  a.xstep = d / e;
  a.M = p < out ? (out - p + s - 1) / s : 0;
  a.r0 = 0;
  while (a.r0 < a.rstep && (q - a.r0 * d) % s != 0) a.r0++;
  if (a.r0 == a.rstep) return a; /* e does not divide q: no tap lands on this phase */
  a.b = (q - a.r0 * d) / s;
  a.nj = a.r0 < k ? (k - a.r0 + a.rstep - 1) / a.rstep : 0;
  return a;
}

static AxisPhase geom_phase(const KtdwGeom *g, int ax, int64_t p) {
  return axis_phase(p, g->k[ax], g->st[ax], g->dil[ax], g->plo[ax], g->out[ax]);
}

/* Zero rows/columns the plane needs before and after x on one axis so that every
 * phase's reads x[b + m − j] land inside it; false on absurd sizes. */
static bool axis_padding(const KtdwGeom *g, int ax, int64_t *before, int64_t *after) {
  *before = *after = 0;
  for (int64_t p = 0; p < g->st[ax]; p++) {
    AxisPhase a = geom_phase(g, ax, p);
    if (a.nj == 0 || a.M == 0) continue;
    int64_t lo = a.b - (a.nj - 1) * a.xstep, hi = a.b + a.M - 1;
    if (-lo > *before) *before = -lo;
    if (hi - (g->in[ax] - 1) > *after) *after = hi - (g->in[ax] - 1);
  }
  return *before < KTDW_MAX_FLOATS && *after < KTDW_MAX_FLOATS;
}

bool ktdw_fits(const KtdwGeom *g) {
  int64_t lim = (int64_t)1 << 24;
  for (int ax = 0; ax < 2; ax++) {
    if (g->in[ax] < 1 || g->in[ax] > lim || g->out[ax] < 1 || g->out[ax] > lim || g->k[ax] < 1 ||
        g->k[ax] > lim || g->st[ax] < 1 || g->st[ax] > 64 || g->dil[ax] < 1 || g->dil[ax] > lim ||
        g->plo[ax] < 0 || g->plo[ax] > (g->k[ax] - 1) * g->dil[ax])
      return false;
  }
  int64_t ext[2];
  for (int ax = 0; ax < 2; ax++) {
    int64_t b, a;
    if (!axis_padding(g, ax, &b, &a)) return false;
    ext[ax] = g->in[ax] + b + a;
  }
  return ext[0] <= KTDW_MAX_FLOATS / ext[1] && g->planes >= 1 && g->C >= 1;
}

/* A phase (py, px): its taps as offsets into the padded plane and indices into the
 * channel's kernel, the sweep length and the output rows/columns it fills. */
typedef struct Phase {
  int64_t py, px, My, Mx, ntaps, vlen16;
  int64_t *toff, *widx; /* ntaps each (into Job.taps) */
} Phase;

typedef struct Job {
  const KtdwGeom *g;
  const float *x, *w;
  float *y;
  int64_t Hp, Wp, Pt, Pl; /* padded plane and its top/left border */
  int64_t nph;            /* st[0]·st[1] phases, row phase major */
  Phase *ph;
  int64_t *taps;          /* 2·k[0]·k[1]: every tap belongs to exactly one phase */
  int64_t vstride;        /* floats per column-phase sweep buffer */
  float **pad;            /* per thread: the padded plane (borders stay 0) */
  float **vout;           /* per thread: st[1] sweep buffers of vstride floats, then k[0]·k[1] weights */
} Job;

static void phases_init(Job *j) {
  const KtdwGeom *g = j->g;
  int64_t *tp = j->taps, kw = g->k[1];
  j->vstride = 32;
  for (int64_t py = 0; py < g->st[0]; py++)
    for (int64_t px = 0; px < g->st[1]; px++) {
      AxisPhase ay = geom_phase(g, 0, py), ax = geom_phase(g, 1, px);
      Phase *f = &j->ph[py * g->st[1] + px];
      f->py = py;
      f->px = px;
      f->My = ay.M;
      f->Mx = ax.M;
      f->ntaps = ay.nj * ax.nj;
      f->toff = tp;
      f->widx = tp + f->ntaps;
      tp += 2 * f->ntaps;
      int64_t t = 0;
      for (int64_t jy = ay.nj - 1; jy >= 0; jy--) /* last kernel row and column first */
        for (int64_t jx = ax.nj - 1; jx >= 0; jx--, t++) {
          f->toff[t] = (j->Pt + ay.b - jy * ay.xstep) * j->Wp + j->Pl + ax.b - jx * ax.xstep;
          f->widx[t] = (ay.r0 + jy * ay.rstep) * kw + ax.r0 + jx * ax.rstep;
        }
      int64_t vlen = f->My && f->Mx ? (f->My - 1) * j->Wp + f->Mx : 0;
      f->vlen16 = (vlen + 15) / 16 * 16;
      if (f->My * j->Wp + 32 > j->vstride) j->vstride = f->My * j->Wp + 32;
    }
}

/* y row (stride 2 in x): y[2i] = a[i] (i < na), y[2i + 1] = b[i] (i < nb), na = nb or nb + 1 */
static KHOT void interleave2(float *restrict y, const float *restrict a, const float *restrict b, int64_t na,
                             int64_t nb) {
  const kvi8 lo = {0, 8, 1, 9, 2, 10, 3, 11}, hi = {4, 12, 5, 13, 6, 14, 7, 15};
  int64_t i = 0;
  for (; i + 8 <= nb; i += 8) {
    kv8 va = kv8_load(a + i), vb = kv8_load(b + i);
    kv8_store(y + 2 * i, __builtin_shuffle(va, vb, lo));
    kv8_store(y + 2 * i + 8, __builtin_shuffle(va, vb, hi));
  }
  for (; i < nb; i++) {
    y[2 * i] = a[i];
    y[2 * i + 1] = b[i];
  }
  if (na > nb) y[2 * nb] = a[nb];
}

/* Stores the rows of the row phase py from the column phases' sweeps (each row of
 * a sweep is Wp floats apart). */
static void store_rows(const Job *j, int64_t py, float *const *vout, float *yp) {
  const KtdwGeom *g = j->g;
  int64_t OW = g->out[1], sw = g->st[1];
  const Phase *row = &j->ph[py * sw];
  for (int64_t my = 0; my < row->My; my++) {
    float *yr = yp + (py + my * g->st[0]) * OW;
    int64_t off = my * j->Wp;
    if (sw == 2 && row[1].Mx > 0) {
      interleave2(yr, vout[0] + off, vout[1] + off, row[0].Mx, row[1].Mx);
      continue;
    }
    for (int64_t px = 0; px < sw; px++) {
      const float *v = vout[px] + off;
      for (int64_t mx = 0; mx < row[px].Mx; mx++) yr[px + mx * sw] = v[mx];
    }
  }
}

static void plane(const Job *j, int64_t i, float *pad, float *vbuf) {
  const KtdwGeom *g = j->g;
  int64_t H = g->in[0], W = g->in[1], ksz = g->k[0] * g->k[1];
  const float *xp = j->x + i * H * W, *wc = j->w + (i % g->C) * ksz;
  for (int64_t h = 0; h < H; h++) memcpy(pad + (j->Pt + h) * j->Wp + j->Pl, xp + h * W, (size_t)W * sizeof *xp);
  float *vout[64], *wl = vbuf + g->st[1] * j->vstride; /* the phase's weights, in tap order */
  float *yp = j->y + i * g->out[0] * g->out[1];
  for (int64_t py = 0; py < g->st[0]; py++) {
    for (int64_t px = 0; px < g->st[1]; px++) {
      const Phase *f = &j->ph[py * g->st[1] + px];
      vout[px] = vbuf + px * j->vstride;
      if (!f->vlen16) continue;
      for (int64_t t = 0; t < f->ntaps; t++) wl[t] = wc[f->widx[t]];
      kplane_sweep(vout[px], pad, f->toff, wl, f->ntaps, f->vlen16);
    }
    store_rows(j, py, vout, yp);
  }
}

static void task(void *raw, int64_t lo, int64_t hi) {
  const Job *j = raw;
  int ti = threadpool_thread_index();
  for (int64_t i = lo; i < hi; i++) plane(j, i, j->pad[ti], j->vout[ti]);
}

bool ktdw_run(const KtdwGeom *g, const float *x, const float *w, float *y) {
  Job j = {.g = g, .x = x, .w = w, .y = y};
  int64_t pb, pa, qb, qa;
  axis_padding(g, 0, &pb, &pa);
  axis_padding(g, 1, &qb, &qa);
  j.Pt = pb;
  j.Pl = qb;
  j.Hp = g->in[0] + pb + pa;
  j.Wp = g->in[1] + qb + qa;
  j.nph = g->st[0] * g->st[1];
  j.ph = mem_malloc_try((size_t)j.nph * sizeof *j.ph);
  j.taps = mem_malloc_try((size_t)(2 * g->k[0] * g->k[1]) * sizeof *j.taps);
  bool ok = j.ph && j.taps;
  if (ok) {
    phases_init(&j);
    size_t vfloats = (size_t)(g->st[1] * j.vstride + g->k[0] * g->k[1]);
    size_t pfloats = (size_t)(j.Hp * j.Wp + 16); /* the sweep reads up to 15 past the plane */
    ok = kplane_scratch(pfloats * sizeof(float), vfloats * sizeof(float), &j.pad, &j.vout);
    if (ok) threadpool_for(g->planes, 1, task, &j);
  }
  mem_free(j.ph);
  mem_free(j.taps);
  return ok;
}
