/* ops/gradients/grad_elemwise.c — rules of the elementwise operators (spec/gradient.md §4.2,
 * §4.7 "binary elementwise", "unary and activations", §4.8, §4.9).
 *
 * Unary rules use the forward result where it is cheaper than recomputing
 * (exp, sigmoid, tanh, sqrt, rsqrt: `out` is the let-bound result, so the
 * backward code never recomputes the forward operation). Broadcasting binary
 * rules compute each partial at the result's shape and end in gr_unb.
 * Values at non-differentiable points are TVM's (§4.6 item 5): relu'(0) =
 * abs'(0) = 1, clip passes g at a bound, maximum/minimum split ties evenly,
 * leaky_relu/prelu take the alpha branch at 0.
 */
#include "ops/gradients/grad.h"
#include "ops/op_ids.h"

#define G (c->g)
#define OUT (c->out)

/* ---- §4.2: unary math with a TVM rule ---------------------------------------------- */

GRAD_RULE(NEGATIVE) { c->dx[0] = gr_neg(c, G); return true; }
GRAD_RULE(COPY) { c->dx[0] = G; return true; }
/* d exp(x) = exp(x) dx */
GRAD_RULE(EXP) { c->dx[0] = gr_mul(c, G, OUT); return true; }
GRAD_RULE(FAST_EXP) { c->dx[0] = gr_mul(c, G, OUT); return true; }
/* d log(x) = dx / x */
GRAD_RULE(LOG) { c->dx[0] = gr_div(c, G, X0); return true; }
/* d log2(x) = dx / (ln 2 · x) */
GRAD_RULE(LOG2) {
  c->dx[0] = gr_div(c, G, gr_mul(c, gr_scalar(c, 0.6931471805599453, 0), X0));
  return true;
}
/* d log10(x) = dx / (ln 10 · x) */
GRAD_RULE(LOG10) {
  c->dx[0] = gr_div(c, G, gr_mul(c, gr_scalar(c, 2.302585092994046, 0), X0));
  return true;
}
/* d √x = dx / (2 √x) */
GRAD_RULE(SQRT) {
  c->dx[0] = gr_div(c, gr_mul(c, G, gr_scalar(c, 0.5, 0)), OUT);
  return true;
}
/* d x^(-1/2) = -1/2 x^(-3/2) dx = -1/2 · out³ dx */
GRAD_RULE(RSQRT) {
  Expr *cube = gr_mul(c, gr_mul(c, OUT, OUT), OUT);
  c->dx[0] = gr_mul(c, gr_mul(c, G, gr_scalar(c, -0.5, 0)), cube);
  return true;
}
/* d σ(x) = σ(x)(1 − σ(x)) dx */
GRAD_RULE(SIGMOID) {
  c->dx[0] = gr_mul(c, G, gr_mul(c, OUT, gr_sub(c, gr_scalar(c, 1, 0), OUT)));
  return true;
}
/* d tanh(x) = (1 − tanh²(x)) dx */
GRAD_RULE(TANH) {
  c->dx[0] = gr_mul(c, G, gr_sub(c, gr_scalar(c, 1, 0), gr_mul(c, OUT, OUT)));
  return true;
}
GRAD_RULE(FAST_TANH) {
  c->dx[0] = gr_mul(c, G, gr_sub(c, gr_scalar(c, 1, 0), gr_mul(c, OUT, OUT)));
  return true;
}
GRAD_RULE(SIN) { c->dx[0] = gr_mul(c, G, gr_un(c, "cos", X0)); return true; }
GRAD_RULE(COS) { c->dx[0] = gr_neg(c, gr_mul(c, G, gr_un(c, "sin", X0))); return true; }
/* d tan(x) = dx / cos²(x) */
GRAD_RULE(TAN) {
  Expr *cs = gr_let(c, gr_un(c, "cos", X0));
  c->dx[0] = gr_div(c, G, gr_mul(c, cs, cs));
  return true;
}
GRAD_RULE(SINH) { c->dx[0] = gr_mul(c, G, gr_un(c, "cosh", X0)); return true; }
GRAD_RULE(COSH) { c->dx[0] = gr_mul(c, G, gr_un(c, "sinh", X0)); return true; }

static Expr *sq(GradCtx *c, Expr *x) { return gr_mul(c, x, x); }
static Expr *one(GradCtx *c) { return gr_scalar(c, 1, 0); }

/* d asin(x) = dx / √(1 − x²) */
GRAD_RULE(ASIN) {
  c->dx[0] = gr_div(c, G, gr_un(c, "sqrt", gr_sub(c, one(c), sq(c, X0))));
  return true;
}
/* d acos(x) = −dx / √(1 − x²) */
GRAD_RULE(ACOS) {
  c->dx[0] = gr_neg(c, gr_div(c, G, gr_un(c, "sqrt", gr_sub(c, one(c), sq(c, X0)))));
  return true;
}
/* d atan(x) = dx / (1 + x²) */
GRAD_RULE(ATAN) {
  c->dx[0] = gr_div(c, G, gr_add(c, one(c), sq(c, X0)));
  return true;
}
/* d asinh(x) = dx / √(x² + 1) */
GRAD_RULE(ASINH) {
  c->dx[0] = gr_div(c, G, gr_un(c, "sqrt", gr_add(c, sq(c, X0), one(c))));
  return true;
}
/* d acosh(x) = dx / √(x² − 1) */
GRAD_RULE(ACOSH) {
  c->dx[0] = gr_div(c, G, gr_un(c, "sqrt", gr_sub(c, sq(c, X0), one(c))));
  return true;
}
/* d atanh(x) = dx / (1 − x²) */
GRAD_RULE(ATANH) {
  c->dx[0] = gr_div(c, G, gr_sub(c, one(c), sq(c, X0)));
  return true;
}
/* d erf(x) = 2/√π · exp(−x²) dx */
static Expr *erf_grad(GradCtx *c) {
  Expr *e = gr_un(c, "exp", gr_neg(c, sq(c, X0)));
  return gr_mul(c, G, gr_mul(c, gr_scalar(c, 1.1283791670955126, 0), e));
}
GRAD_RULE(ERF) { c->dx[0] = erf_grad(c); return true; }
/* fast_erf: the exact derivative of the exact function (§4.7) */
GRAD_RULE(FAST_ERF) { c->dx[0] = erf_grad(c); return true; }

/* |x|' = −1 for x < 0, else 1 (TVM: +1 at 0) */
GRAD_RULE(ABS) {
  c->dx[0] = gr_where(c, GR_OP(c, "less", NULL, X0, gr_scalar(c, 0, 0)), gr_neg(c, G), G);
  return true;
}
/* relu'(x) = 0 for x < 0, else 1 (TVM: 1 at 0) */
GRAD_RULE(NN_RELU) {
  c->dx[0] = gr_where(c, GR_CALL(c, OP_LESS, X0, gr_scalar(c, 0, 0)), gr_zeros_like(c, G), G);
  return true;
}
/* g inside [a_min, a_max] (bounds included), 0 outside */
GRAD_RULE(CLIP) {
  Expr *lo = gr_scalar(c, gr_attr_double(c, "a_min", 0), 0);
  Expr *hi = gr_scalar(c, gr_attr_double(c, "a_max", 0), 0);
  Expr *zero = gr_zeros_like(c, G);
  Expr *inner = gr_where(c, GR_OP(c, "less", NULL, hi, X0), zero, G);
  c->dx[0] = gr_where(c, GR_OP(c, "less", NULL, X0, lo), zero, inner);
  return true;
}
/* leaky_relu'(x) = 1 for x > 0, alpha otherwise (alpha at 0, like torch) */
GRAD_RULE(NN_LEAKY_RELU) {
  Expr *alpha = gr_scalar(c, gr_attr_double(c, "alpha", 0.25), 0);
  c->dx[0] = gr_where(c, GR_OP(c, "greater", NULL, X0, gr_scalar(c, 0, 0)), G, gr_mul(c, alpha, G));
  return true;
}
/* prelu(x, α) = x for x > 0, α_c·x otherwise, α along `axis`:
 * dx = g or g·α_c; dα_c = Σ over all axes but `axis` of [x ≤ 0]·g·x */
GRAD_RULE(NN_PRELU) {
  uint32_t rank = gr_rank(c, 0);
  int64_t axis = gr_attr_int(c, "axis", 1);
  if (axis < 0) axis += rank;
  Expr *alpha = X1;
  if ((uint32_t)axis + 1 < rank)
    alpha = GR_OP(c, "expand_dims", gr_fmt(c, "axis=1, num_newaxis=%lld", (long long)(rank - 1 - axis)), X1);
  Expr *pos = gr_let(c, GR_OP(c, "greater", NULL, X0, gr_scalar(c, 0, 0)));
  c->dx[0] = gr_where(c, pos, G, gr_mul(c, G, alpha));
  Expr *da = gr_where(c, pos, gr_zeros_like(c, G), gr_mul(c, G, X0));
  c->dx[1] = GR_OP(c, "sum", gr_fmt(c, "axis=[%lld], exclude=True", (long long)axis), da);
  return true;
}
/* relayc's dropout is the inference form: y = x, the mask gets nothing */
GRAD_RULE(NN_DROPOUT) { c->dx[0] = gr_proj(c, G, 0); return true; }

/* ---- casts and *_like creation ------------------------------------------------------ */

/* cast back to the input's dtype (the pass never calls this for an integer result) */
GRAD_RULE(CAST) { c->dx[0] = gr_cast_like(c, G, X0); return true; }
GRAD_RULE(CAST_LIKE) { c->dx[0] = gr_cast_like(c, G, X0); return true; }
GRAD_NONE(ZEROS_LIKE)
GRAD_NONE(ONES_LIKE)

/* ---- §4.2: binary arithmetic ----------------------------------------------------- */

GRAD_RULE(ADD) {
  c->dx[0] = gr_unb(c, G, 0);
  c->dx[1] = gr_unb(c, G, 1);
  return true;
}
GRAD_RULE(SUBTRACT) {
  c->dx[0] = gr_unb(c, G, 0);
  c->dx[1] = gr_unb(c, gr_neg(c, G), 1);
  return true;
}
GRAD_RULE(MULTIPLY) {
  c->dx[0] = gr_unb(c, gr_mul(c, G, X1), 0);
  c->dx[1] = gr_unb(c, gr_mul(c, G, X0), 1);
  return true;
}
/* relayc.add_scaled(a, b, s) = a + s·b (s a scalar): da = g, db = s·g, ds = Σ g·b */
GRAD_RULE(RELAYC_ADD_SCALED) {
  c->dx[0] = G;
  c->dx[1] = gr_mul(c, G, X2);
  c->dx[2] = gr_unb(c, gr_mul(c, G, X1), 2);
  return true;
}
/* d(x/y) = dx/y − (x/y)/y dy */
GRAD_RULE(DIVIDE) {
  c->dx[0] = gr_unb(c, gr_div(c, G, X1), 0);
  c->dx[1] = gr_unb(c, gr_neg(c, gr_div(c, gr_mul(c, G, OUT), X1)), 1);
  return true;
}
/* d a^b = b·a^(b−1) da + a^b·ln(a) db, with torch's masks: 0 for da where b = 0,
 * 0 for db where a = 0 and b ≥ 0 */
GRAD_RULE(POWER) {
  Expr *zero_a = gr_scalar(c, 0, 0), *zero_b = gr_scalar(c, 0, 1);
  Expr *da = gr_mul(c, gr_mul(c, G, X1), GR_OP(c, "power", NULL, X0, gr_sub(c, X1, gr_scalar(c, 1, 1))));
  da = gr_where(c, GR_OP(c, "equal", NULL, X1, zero_b), gr_zeros_like(c, G), da);
  c->dx[0] = gr_unb(c, da, 0);
  Expr *db = gr_mul(c, gr_mul(c, G, OUT), gr_un(c, "log", X0));
  Expr *mask = GR_OP(c, "logical_and", NULL, GR_OP(c, "equal", NULL, X0, zero_a),
                     GR_OP(c, "greater_equal", NULL, X1, zero_b));
  db = gr_where(c, mask, gr_zeros_like(c, G), db);
  c->dx[1] = gr_unb(c, db, 1);
  return true;
}
/* maximum(a, b): g to the larger side, g/2 to each at a tie */
static bool minmax(GradCtx *c, int32_t a_wins, int32_t b_wins) {
  Expr *half_tie = gr_let(c, gr_mul(c, gr_scalar(c, 0.5, -1), gr_cast_like(c, GR_CALL(c, OP_EQUAL, X0, X1), G)));
  Expr *ma = gr_add(c, gr_cast_like(c, GR_CALL(c, a_wins, X0, X1), G), half_tie);
  Expr *mb = gr_add(c, gr_cast_like(c, GR_CALL(c, b_wins, X0, X1), G), half_tie);
  c->dx[0] = gr_unb(c, gr_mul(c, G, ma), 0);
  c->dx[1] = gr_unb(c, gr_mul(c, G, mb), 1);
  return true;
}
GRAD_RULE(MAXIMUM) { return minmax(c, OP_GREATER, OP_LESS); }
GRAD_RULE(MINIMUM) { return minmax(c, OP_LESS, OP_GREATER); }
/* a mod b = a − b·q with q = trunc(a/b) (fmod) or floor(a/b) (floor_mod), piecewise constant */
static bool mod_rule(GradCtx *c, const char *round) {
  c->dx[0] = gr_unb(c, G, 0);
  c->dx[1] = gr_unb(c, gr_neg(c, gr_mul(c, G, gr_un(c, round, gr_div(c, X0, X1)))), 1);
  return true;
}
GRAD_RULE(MOD) { return mod_rule(c, "trunc"); }
GRAD_RULE(TRUNC_MOD) { return mod_rule(c, "trunc"); }
GRAD_RULE(FLOOR_MOD) { return mod_rule(c, "floor"); }
GRAD_NONE(FLOOR_DIVIDE)
GRAD_NONE(TRUNC_DIVIDE)

/* where(c, x, y): the condition gets nothing; x the adjoint where c holds, y elsewhere */
GRAD_RULE(WHERE) {
  Expr *zero = gr_zeros_like(c, G);
  c->dx[1] = gr_unb(c, gr_where(c, X0, G, zero), 1);
  c->dx[2] = gr_unb(c, gr_where(c, X0, zero, G), 2);
  return true;
}

/* ---- §4.8: zero gradients (piecewise constant, or integer / bool results) -------- */

GRAD_NONE(EQUAL)
GRAD_NONE(NOT_EQUAL)
GRAD_NONE(LESS)
GRAD_NONE(LESS_EQUAL)
GRAD_NONE(GREATER)
GRAD_NONE(GREATER_EQUAL)
GRAD_NONE(SIGN)
GRAD_NONE(FLOOR)
GRAD_NONE(CEIL)
GRAD_NONE(TRUNC)
GRAD_NONE(ROUND)
GRAD_NONE(ISNAN)
GRAD_NONE(ISINF)
GRAD_NONE(ISFINITE)
GRAD_NONE(LEFT_SHIFT)
GRAD_NONE(RIGHT_SHIFT)
GRAD_NONE(BITWISE_AND)
GRAD_NONE(BITWISE_OR)
GRAD_NONE(BITWISE_XOR)
GRAD_NONE(BITWISE_NOT)
GRAD_NONE(LOGICAL_AND)
GRAD_NONE(LOGICAL_OR)
GRAD_NONE(LOGICAL_XOR)
GRAD_NONE(LOGICAL_NOT)

/* ---- annotations: the value passes through ------------------------------------------- */

/* checkpoint: TVM recomputes the forward in the backward pass (§1.8); the gradient is
 * the identity's, which is what relayc builds in both modes */
GRAD_RULE(ANNOTATION_CHECKPOINT) { c->dx[0] = G; return true; }
GRAD_RULE(ANNOTATION_STOP_FUSION) { c->dx[0] = G; return true; }
GRAD_RULE(ON_DEVICE) { c->dx[0] = G; return true; }
GRAD_RULE(DEVICE_COPY) { c->dx[0] = G; return true; }
