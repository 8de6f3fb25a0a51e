/* ops/gradients/grad_nn.c — rules of dense algebra, softmax and the losses (spec/gradient.md §4.5).
 *
 * For C = op(A)·op(B) (op = identity or transpose): d op(A) = G·op(B)ᵀ and
 * d op(B) = op(A)ᵀ·G, then op undone; every nn.matmul case is one more matmul with
 * the right transpose flags, so no transpose is materialised. nn.dense's rule is
 * written in TVM's form (dense of transposes) instead, which `--run` rewrites into
 * the same transpose-free matmuls (transform/dense_transpose.c). nn.dense and nn.matmul
 * accept data of any rank (leading axes flattened into matrix rows, a transposed
 * nn.matmul operand swapped back once); an out_dtype other
 * than the inputs' is cast back (§4.6 item 4).
 */
#include <string.h>

#include "ops/gradients/grad.h"

#define G (c->g)

/* g in x's dtype when the call computed in another (out_dtype) */
static Expr *g_as_input(GradCtx *c, uint32_t i) {
  return dtype_eq(gr_dtype(c, -1), gr_dtype(c, (int)i)) ? G : gr_cast_like(c, G, c->x[i]);
}

/* nn.dense(x (.., K), w (N, K)) = x·wᵀ:  dx = g·w,  dw = gᵀ·x (leading axes flattened),
 * written in TVM's form so the printed gradient is TVM's:
 *     dx = collapse_sum_like(nn.dense(g, transpose(w), units=K), x)
 *     dw = collapse_sum_like(nn.dense(transpose(g), transpose(x), units=K), w)
 * `relayc --run` turns each dense of transposes into one transpose-free nn.matmul
 * and drops the identity collapses (transform/dense_transpose.c, FuseDenseTranspose). */
GRAD_RULE(NN_DENSE) {
  int64_t wd[GRAD_MAX_RANK];
  if (!gr_shape(c, 1, wd)) return false;
  Expr *g = g_as_input(c, 0), *x = X0;
  bool flat = gr_rank(c, 0) != 2;
  if (flat) {
    g = GR_OP(c, "reshape", gr_fmt(c, "newshape=[-1, %lld]", (long long)wd[0]), g);
    x = GR_OP(c, "reshape", gr_fmt(c, "newshape=[-1, %lld]", (long long)wd[1]), X0);
  }
  g = gr_let(c, g);
  const char *units = gr_fmt(c, "units=%lld", (long long)wd[1]);
  Expr *dx = GR_OP(c, "nn.dense", units, g, GR_OP(c, "transpose", NULL, X1));
  if (flat) dx = gr_reshape_like(c, dx, X0);
  c->dx[0] = GR_OP(c, "collapse_sum_like", NULL, dx, X0);
  Expr *dw = GR_OP(c, "nn.dense", units, GR_OP(c, "transpose", NULL, g), GR_OP(c, "transpose", NULL, x));
  c->dx[1] = GR_OP(c, "collapse_sum_like", NULL, dw, X1);
  return true;
}

static const char *flags(GradCtx *c, bool ta, bool tb) {
  return gr_fmt(c, "transpose_a=%s, transpose_b=%s", ta ? "True" : "False", tb ? "True" : "False");
}

/* The four transpose cases of C = op(A)·op(B) for `name` (nn.matmul / nn.batch_matmul). */
static void matmul_cases(GradCtx *c, const char *name, bool ta, bool tb, Expr *g, Expr *a, Expr *b, Expr **da,
                         Expr **db) {
  if (!ta && !tb) { /* C = A·B:      dA = G·Bᵀ,      dB = Aᵀ·G */
    *da = GR_OP(c, name, flags(c, false, true), g, b);
    *db = GR_OP(c, name, flags(c, true, false), a, g);
  } else if (ta && !tb) { /* C = Aᵀ·B: dA = B·Gᵀ,      dB = A·G */
    *da = GR_OP(c, name, flags(c, false, true), b, g);
    *db = GR_OP(c, name, flags(c, false, false), a, g);
  } else if (!ta && tb) { /* C = A·Bᵀ: dA = G·B,       dB = Gᵀ·A */
    *da = GR_OP(c, name, flags(c, false, false), g, b);
    *db = GR_OP(c, name, flags(c, true, false), g, a);
  } else { /* C = Aᵀ·Bᵀ:              dA = Bᵀ·Gᵀ,     dB = Gᵀ·Aᵀ */
    *da = GR_OP(c, name, flags(c, true, true), b, g);
    *db = GR_OP(c, name, flags(c, true, true), g, a);
  }
}

/* b in a's dtype, so that dA (a product with b) has a's: the relation takes
 * the result's dtype from a and lets b's differ (float32 by bool: dA = B·Gᵀ
 * was bool, an ill-typed Gradient; fuzz session 15 seed 131 input 223) */
static Expr *b_as_a(GradCtx *c) { return dtype_eq(gr_dtype(c, 0), gr_dtype(c, 1)) ? X1 : gr_cast_like(c, X1, X0); }

static bool matmul_rule(GradCtx *c, const char *name) {
  bool ta = gr_attr_bool(c, "transpose_a", false), tb = gr_attr_bool(c, "transpose_b", false);
  Expr *g = gr_let(c, g_as_input(c, 0)), *da, *db;
  matmul_cases(c, name, ta, tb, g, X0, b_as_a(c), &da, &db);
  c->dx[0] = gr_unb(c, da, 0);
  c->dx[1] = gr_unb(c, db, 1);
  return true;
}

/* nn.matmul(a (.., M, K) or, transposed, (.., K, M); b 2-D) -> (.., M, N). Data of rank
 * other than 2 is one (rows, K) matrix with the leading axes flattened into the rows
 * (rank 1: one row); with transpose_a its last two axes are swapped first, so the
 * matrix rule runs untransposed on a and the result is swapped back. */
GRAD_RULE(NN_MATMUL) {
  uint32_t r = gr_rank(c, 0);
  if (r == 2) return matmul_rule(c, "nn.matmul");
  bool ta = gr_attr_bool(c, "transpose_a", false), tb = gr_attr_bool(c, "transpose_b", false);
  int64_t ad[GRAD_MAX_RANK], od[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, ad) || !gr_shape(c, -1, od)) return false;
  uint32_t ro = gr_rank(c, -1);
  int64_t K = ad[r - (ta ? 2 : 1)], N = od[ro - 1];
  int64_t perm[GRAD_MAX_RANK];
  for (uint32_t i = 0; i < r; i++) perm[i] = i;
  if (ta) perm[r - 2] = r - 1, perm[r - 1] = r - 2; /* its own inverse */
  const char *swap = gr_fmt(c, "axes=%s", gr_ints_text(c, perm, r));
  Expr *a = ta ? GR_OP(c, "transpose", swap, X0) : X0;
  Expr *a2 = gr_let(c, GR_OP(c, "reshape", gr_fmt(c, "newshape=[-1, %lld]", (long long)K), a));
  Expr *g2 = gr_let(c, GR_OP(c, "reshape", gr_fmt(c, "newshape=[-1, %lld]", (long long)N), g_as_input(c, 0)));
  Expr *da, *db;
  matmul_cases(c, "nn.matmul", false, tb, g2, a2, b_as_a(c), &da, &db);
  if (ta) {
    int64_t sd[GRAD_MAX_RANK]; /* a's shape with the last two axes swapped */
    for (uint32_t i = 0; i < r; i++) sd[i] = ad[perm[i]];
    da = GR_OP(c, "transpose", swap, GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, sd, r)), da));
  } else {
    da = gr_reshape_like(c, da, X0);
  }
  c->dx[0] = da;
  c->dx[1] = db;
  return true;
}
GRAD_RULE(NN_BATCH_MATMUL) { return matmul_rule(c, "nn.batch_matmul"); }

/* Whether x's extent along axis is known to be b's length. Where it is `?`,
 * the kernel also takes a one-value b (added to every channel, as TVM's
 * lowering to a broadcasting add does), so the channel sum must be collapsed
 * to b's shape. */
static bool bias_matches_axis(GradCtx *c, int64_t axis) {
  const Type *x = gr_tensor(c, 0), *b = gr_tensor(c, 1);
  if (!x || !b || axis < 0 || (uint32_t)axis >= x->tensor.ndim || b->tensor.ndim != 1) return false;
  const Dim *dx = &x->tensor.dims[axis], *db = &b->tensor.dims[0];
  return dx->kind == DIM_INT && db->kind == DIM_INT && dx->value == db->value;
}

/* bias_add(x, b, axis): b gets g summed over every other axis (collapsed to
 * b's shape when the channel extent is not known to be b's length) */
GRAD_RULE(NN_BIAS_ADD) {
  int64_t axis = gr_attr_int(c, "axis", 1);
  if (axis < 0) axis += gr_rank(c, 0);
  c->dx[0] = G;
  c->dx[1] = GR_OP(c, "sum", gr_fmt(c, "axis=[%lld], exclude=True", (long long)axis), G);
  if (!bias_matches_axis(c, axis)) c->dx[1] = gr_unb(c, c->dx[1], 1);
  return true;
}

/* softmax: dx = (g − Σ_axis(g·y)) · y */
static bool softmax_rule(GradCtx *c) {
  const char *ax = gr_fmt(c, "axis=[%lld], keepdims=True", (long long)gr_attr_int(c, "axis", -1));
  Expr *dot = GR_OP(c, "sum", ax, gr_mul(c, G, c->out));
  c->dx[0] = gr_mul(c, gr_sub(c, G, dot), c->out);
  return true;
}
GRAD_RULE(NN_SOFTMAX) { return softmax_rule(c); }
GRAD_RULE(NN_FAST_SOFTMAX) { return softmax_rule(c); }

/* log_softmax: dx = g − Σ_axis(g) · exp(y) */
GRAD_RULE(NN_LOG_SOFTMAX) {
  const char *ax = gr_fmt(c, "axis=[%lld], keepdims=True", (long long)gr_attr_int(c, "axis", -1));
  c->dx[0] = gr_sub(c, G, gr_mul(c, GR_OP(c, "sum", ax, G), gr_un(c, "exp", c->out)));
  return true;
}

/* −Σ log(x)·y / B:  dx = −(g/B)·y/x,  dy = −(g/B)·log(x) */
GRAD_RULE(NN_CROSS_ENTROPY) {
  int64_t dims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  Expr *gb = gr_let(c, gr_div(c, G, gr_scalar(c, (double)dims[0], -1)));
  c->dx[0] = gr_neg(c, gr_div(c, gr_mul(c, gb, X1), X0));
  c->dx[1] = gr_neg(c, gr_mul(c, gb, gr_un(c, "log", X0)));
  return true;
}

/* nn.nll_loss(p (N, C, d...), t (N, d...), w (C)): with oh = one_hot(t) along axis 1 and
 * k = w[t]·[t ≠ ignore_index] per position, the loss at a position is −p[t]·k ("mean" divides
 * the sum by W = Σ k). With ĝ the adjoint per position (g for "none", g broadcast for "sum",
 * g / W for "mean") and m the mean (0 otherwise): dp = −oh·(ĝ·k), dw = Σ over the positions of
 * oh·(ĝ·[t ≠ ignore]·(−p[t] − m)). The targets are indices: none. */
GRAD_RULE(NN_NLL_LOSS) {
  int64_t pd[GRAD_MAX_RANK], wshape[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, pd)) return false;
  uint32_t rank = gr_rank(c, 0);
  const char *red = gr_attr_str(c, "reduction", "mean");
  bool mean = !strcmp(red, "mean");
  DType dt = gr_dtype(c, 0);
  char dn[32];
  Expr *oh = gr_let(c, GR_OP(c, "one_hot", gr_fmt(c, "depth=%lld, axis=1, dtype=\"%s\"", (long long)pd[1], dtype_name(dt, dn)),
                             X1, gr_const(c, 1, dt), gr_const(c, 0, dt)));
  wshape[0] = pd[1];
  for (uint32_t i = 1; i + 1 < rank; i++) wshape[i] = 1;
  Expr *wb = GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, wshape, rank - 1)), X2);
  Expr *valid = gr_let(c, GR_OP(c, "cast", gr_fmt(c, "dtype=\"%s\"", dn),
                                GR_OP(c, "not_equal", NULL, X1, gr_const(c, (double)gr_attr_int(c, "ignore_index", -100), gr_dtype(c, 1)))));
  Expr *k = gr_let(c, gr_mul(c, GR_OP(c, "sum", "axis=[1]", gr_mul(c, oh, wb)), valid));
  Expr *gh = mean ? gr_let(c, gr_div(c, G, GR_OP(c, "sum", NULL, k))) : G;
  c->dx[0] = gr_neg(c, gr_mul(c, oh, GR_OP(c, "expand_dims", "axis=1", gr_mul(c, gh, k))));
  Expr *e = gr_neg(c, GR_OP(c, "sum", "axis=[1]", gr_mul(c, X0, oh)));
  if (mean) e = gr_sub(c, e, c->out);
  e = gr_mul(c, gr_mul(c, e, gh), valid);
  c->dx[2] = GR_OP(c, "sum", "axis=[1], exclude=True", gr_mul(c, oh, GR_OP(c, "expand_dims", "axis=1", e)));
  return true;
}

/* −Σ x·y / B:  dx = −(g/B)·y,  dy = −(g/B)·x */
GRAD_RULE(NN_CROSS_ENTROPY_WITH_LOGITS) {
  int64_t dims[GRAD_MAX_RANK];
  if (!gr_shape(c, 0, dims)) return false;
  Expr *gb = gr_let(c, gr_div(c, G, gr_scalar(c, (double)dims[0], -1)));
  c->dx[0] = gr_neg(c, gr_mul(c, gb, X1));
  c->dx[1] = gr_neg(c, gr_mul(c, gb, X0));
  return true;
}
