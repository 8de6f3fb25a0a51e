/* ops/gradients/grad.h — the gradient column: what a rule sees, and the helpers it is written with.
 *
 * One rule per operator, `bool grad_<ID>(GradCtx *c)`, defined in one of the
 * ops/gradients/grad_*.c files (grouped by family like the kernels) and found
 * through a weak reference in ops/registry.c (OpDef.grad; NULL = the operator
 * has no gradient). A rule is the mathematics of spec/gradient.md §4 and
 * nothing else: given the forward call (its inputs x[i], their types, its
 * attributes), its result `out` and the adjoint `g` of that result, it sets
 * dx[i] to an expression for the adjoint of input i, or leaves it NULL when
 * the input gets no gradient ("none": an index, a shape, a `like` operand —
 * a zero contribution that is never built). A tuple-typed input (the fields
 * of `concatenate`) gets a tuple expression. It returns false only after
 * reporting an error (gr_fail), e.g. for a `?` extent the rule needs.
 *
 *     GRAD_RULE(MULTIPLY) {                        // d(x·y) = g·y dx + g·x dy
 *       c->dx[0] = gr_unb(c, gr_mul(c, c->g, X1), 0);
 *       c->dx[1] = gr_unb(c, gr_mul(c, c->g, X0), 1);
 *       return true;
 *     }
 *
 * The pass that applies rules (transform/gradient.c) knows nothing about any
 * operator: it hands every rule atoms (variables or constants, usable any
 * number of times) and adds each dx[i] into input i's gradient. Rules never
 * see integer or bool inputs' gradients: the pass drops dx[i] for an input
 * whose type holds no float tensor, and never asks for the rule of a call
 * whose result or inputs hold no float tensor (so comparisons, argmax,
 * shape_of need rules only for completeness of the registry).
 *
 * Building: every helper makes nodes at the call's span (c->sp), untyped
 * (the pass re-types), except the operator calls a pass builds itself
 * through GradCtx.call (typed, sharing callee nodes). gr_let binds an expression to a fresh variable in the
 * backward code (use it for a value a rule needs twice). Operator calls take
 * attributes as canonical attribute text (ops/op_call.h), e.g.
 * GR_OP(c, "sum", "axis=[1], keepdims=True", g).
 */
#ifndef RELAYC_OPS_GRAD_H
#define RELAYC_OPS_GRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ast.h"
#include "ops/registry.h"

#define GRAD_MAX_RANK 16

/* Operator calls a rule builds by name and attribute text, looked up and
 * normalised once per pass (op_call parses and normalises at every call, and
 * a pass applies the same few rules to millions of calls). The calls of one
 * (name, text) share one normalised Attrs. Owned by the pass applying the
 * rules; see GradCtx.ops. */
typedef struct GradOpCache GradOpCache;
GradOpCache *grad_op_cache_new(void);
void grad_op_cache_free(GradOpCache *cache);

struct GradCtx {
  Module *m;
  Diag *d;
  Span sp;                 /* the forward call's span */
  int32_t op;              /* registry id of the operator */
  const Attrs *attrs;      /* the call's normalised attributes (may be NULL: defaults) */
  uint32_t n;              /* number of inputs */
  Expr *const *x;          /* the forward inputs, atoms (x[i] may be used many times) */
  const Type *const *xt;   /* their types: tensors, or tuples of tensors */
  Expr *out;               /* the forward result, an atom */
  const Type *out_t;       /* its type */
  Expr *g;                 /* the adjoint of the result (same type; a tuple atom for tuples) */
  Expr **dx;               /* OUT: n slots, all NULL on entry */
  /* set by the pass: binds e to a fresh variable in the backward code */
  Expr *(*bind)(GradCtx *c, Expr *e);
  void *pass;              /* the pass's state, for bind */
  GradOpCache *ops;        /* set by the pass, or NULL: gr_op parses the attribute text each call */
  /* set by the pass, or NULL: builds the operator call op(args, attrs) for
   * the calls made through ops (a pass that types what it builds shares
   * callee nodes there); its result may be typed */
  Expr *(*call)(GradCtx *c, int32_t op, Attrs *attrs, Expr **args, uint32_t nargs);
};

/* Defines the rule of operator ID (a row of ops/op_table.def):
 *     GRAD_RULE(NEGATIVE) { c->dx[0] = gr_neg(c, c->g); return true; }   */
#define GRAD_RULE(ID) \
  bool grad_##ID(GradCtx *c); \
  bool grad_##ID(GradCtx *c)
/* A rule whose inputs all get no gradient (piecewise-constant or non-float results). */
#define GRAD_NONE(ID) \
  GRAD_RULE(ID) { \
    (void)c; \
    return true; \
  }

/* Shorthands for rules. */
#define X0 (c->x[0])
#define X1 (c->x[1])
#define X2 (c->x[2])

/* ---- errors ------------------------------------------------------------- */
/* Reports "gradient of <op>: <message>" at the call; returns false. */
bool gr_fail(GradCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- building ----------------------------------------------------------- */
/* Binds e in the backward code; returns a use of the new variable. */
Expr *gr_let(GradCtx *c, Expr *e);
/* name(args..., attrs) */
Expr *gr_op(GradCtx *c, const char *name, const char *attrs, Expr **args, uint32_t nargs);
#define GR_OP(c, name, attrs, ...) \
  gr_op((c), (name), (attrs), (Expr *[]){__VA_ARGS__}, \
        (uint32_t)(sizeof((Expr *[]){__VA_ARGS__}) / sizeof(Expr *)))
/* A built-in operator without attributes, by id (ops/op_ids.h): the same call
 * as gr_op(c, name, NULL, ...) without the name's look-up, e.g.
 * GR_CALL(c, OP_LESS, X0, zero). */
Expr *gr_call(GradCtx *c, int32_t id, Expr **args, uint32_t nargs);
#define GR_CALL(c, id, ...) \
  gr_call((c), (id), (Expr *[]){__VA_ARGS__}, (uint32_t)(sizeof((Expr *[]){__VA_ARGS__}) / sizeof(Expr *)))
/* The forward call's operator replaced by `name`, same attributes with `key=value`
 * text changes applied (a "k=v, k=v" list, or NULL): for a backward operator
 * sharing the forward's attribute class (max_pool2d -> max_pool2d_grad). */
Expr *gr_op_like(GradCtx *c, const char *name, const char *changes, Expr **args, uint32_t nargs);
Expr *gr_add(GradCtx *c, Expr *a, Expr *b);
Expr *gr_sub(GradCtx *c, Expr *a, Expr *b);
Expr *gr_mul(GradCtx *c, Expr *a, Expr *b);
Expr *gr_div(GradCtx *c, Expr *a, Expr *b);
Expr *gr_neg(GradCtx *c, Expr *a);
/* A one-input operator without attributes: gr_un(c, "exp", x). */
Expr *gr_un(GradCtx *c, const char *name, Expr *a);
Expr *gr_where(GradCtx *c, Expr *cond, Expr *a, Expr *b);
Expr *gr_zeros_like(GradCtx *c, Expr *a);
Expr *gr_ones_like(GradCtx *c, Expr *a);
Expr *gr_cast_like(GradCtx *c, Expr *a, Expr *like);
Expr *gr_reshape_like(GradCtx *c, Expr *a, Expr *like);
Expr *gr_broadcast_to_like(GradCtx *c, Expr *a, Expr *like);
Expr *gr_proj(GradCtx *c, Expr *tuple, uint32_t i);
Expr *gr_tuple(GradCtx *c, Expr **fields, uint32_t n);
/* A rank-0 constant of dtype dt. */
Expr *gr_const(GradCtx *c, double v, DType dt);
/* A tensor constant (data copied; nbytes = dtype size × elements), e.g. a matrix a
 * rule computes at compile time from the static shapes. */
Expr *gr_tensor_const(GradCtx *c, DType dt, uint32_t ndim, const int64_t *shape, const void *data);
/* Zeroed room for such a table, rows × cols entries of esize bytes, or NULL
 * after reporting an error when it would exceed GRAD_MAX_TABLE_BYTES: the
 * extents come from the program (an adaptive pool over 4,000,000 positions
 * asked for a 10^14-byte matrix), so the size is checked, never allocated blindly. */
#define GRAD_MAX_TABLE_BYTES ((uint64_t)1 << 30)
void *gr_table(GradCtx *c, int64_t rows, int64_t cols, size_t esize);
/* True when a rule may build n pieces one by one (a weight convolution per group, a
 * slice per window tap or offset), else false after reporting an error: the count
 * comes from the program's attributes and extents (a conv3d with groups=4,000,000
 * built nodes until memory ran out, a 2000^3 pooling window looped for ever), so it
 * is checked against GRAD_MAX_PIECES first. n < 0 stands for an overflowed count. */
#define GRAD_MAX_PIECES 65536
bool gr_pieces(GradCtx *c, int64_t n, const char *what);
/* A rank-0 constant in the dtype of input i (of the result when i < 0). */
Expr *gr_scalar(GradCtx *c, double v, int i);
/* unb(e, x_i): e summed down to input i's shape (collapse_sum_like), built even
 * where the shapes are statically equal, as TVM's rules do. */
Expr *gr_unb(GradCtx *c, Expr *e, uint32_t i);
/* sum(e, axis=axes, keepdims) with an explicit axis list (NULL/0: all axes). */
Expr *gr_sum(GradCtx *c, Expr *e, const int64_t *axes, uint32_t naxes, bool keepdims);
/* expand_dims of e at each (ascending, normalised) axis of `axes` so a reduced
 * result lines up with the input again; `rank` is the input's rank. */
Expr *gr_expand_axes(GradCtx *c, Expr *e, const int64_t *axes, uint32_t naxes);

/* ---- types -------------------------------------------------------------- */
/* Input i's tensor type (i < 0: the result's), NULL if it is not a tensor. */
const Type *gr_tensor(GradCtx *c, int i);
uint32_t gr_rank(GradCtx *c, int i);
DType gr_dtype(GradCtx *c, int i);
/* Input i's static shape into dims (GRAD_MAX_RANK slots); false after
 * reporting an error when an extent is `?` or symbolic. */
bool gr_shape(GradCtx *c, int i, int64_t *dims);
/* The reduction axes a reduce-class call selects on input i (sorted, normalised,
 * `exclude` and axis=None applied); returns their number. */
uint32_t gr_reduce_axes(GradCtx *c, uint32_t rank, int64_t *axes);

/* ---- attributes (schema default when absent) ------------------------------ */
const AttrValue *gr_attr(GradCtx *c, const char *key);
int64_t gr_attr_int(GradCtx *c, const char *key, int64_t dflt);
double gr_attr_double(GradCtx *c, const char *key, double dflt);
bool gr_attr_bool(GradCtx *c, const char *key, bool dflt);
const char *gr_attr_str(GradCtx *c, const char *key, const char *dflt); /* dflt for None */
/* Integer array: element count (-1 when None/absent); at most cap stored. */
int32_t gr_attr_ints(GradCtx *c, const char *key, int64_t *out, int32_t cap);
/* Canonical text of an integer list, "[1, 2]", into buf (arena string). */
const char *gr_ints_text(GradCtx *c, const int64_t *v, uint32_t n);
/* "pad_width=[[w[0][0], w[0][1]], ...]" of rank axes, nn.pad's attribute text (arena string). */
const char *gr_pad_width(GradCtx *c, uint32_t rank, const int64_t (*w)[2]);
/* e (rank `rank`, static extents shape) with s − 1 zeros after each element along `axis`:
 * (.., n, ..) -> (.., n, s, ..) padded with `zero` -> (.., n·s, ..); shape[axis] becomes n·s.
 * e itself when s is 1 or the axis is empty. */
Expr *gr_interleave_zeros(GradCtx *c, Expr *e, uint32_t axis, uint32_t rank, int64_t *shape, int64_t s, Expr *zero);
/* The same with the trailing zeros cut: n -> (n − 1)·s + 1, the zero of input 0's dtype. */
Expr *gr_dilate(GradCtx *c, Expr *e, uint32_t axis, uint32_t rank, int64_t *shape, int64_t s);
/* printf into an arena string (attribute texts for GR_OP). */
const char *gr_fmt(GradCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
