/* ir/equal.c — structural equality of resolved modules (ir/equal.h), TVM's
 * structural_equal as spec/passes.md §9 states it.
 *
 * Binders: parameters, let and pattern variables, type parameters are paired
 * when met; a use must refer to the paired binder; free variables pair at
 * first sight (TVM's map_free_vars). The type parameters of a function
 * literal or of a function type are scoped to it: paired for its extent and
 * then restored, so one TypeParam object bound by two literals (a literal
 * copied by DefuseOps/Inline) or by a literal and a binder's annotation
 * `fn [a](a) -> a` (Gradient's let-bound closures) equals the printed text,
 * where each binder has its own. A variable's "annotation" is its written
 * type, or else its inferred one (TVM's InferType writes inferred types into
 * unannotated binders), and the same for return types.
 *
 * DAG sharing: the graph nodes — calls, lets, ifs, function literals,
 * non-empty tuples, refs, matches — are paired one-to-one (maps in both
 * directions) once met, so sharing must agree: `%0 = f(x); g(%0, %0)` differs
 * from `g(f(x), f(x))`. Constants, projections, the empty tuple, operators,
 * constructors and globals are compared by value only and never paired, so a
 * shared constant equals two equal literals and one `%t.0` equals two.
 *
 * Attributes: call attributes field by field (relayc normalises every
 * operator call against its schema, so defaults are present on both sides;
 * a call without attributes equals one whose attributes are all defaults);
 * function attribute maps by key regardless of order, integers with their
 * dtype (`1` is not `1i64`); doubles within 1e-9 (NaN equals NaN).
 * Constants by dtype, shape and bytes (exactly). Inferred expression types,
 * spans and the printed form are never compared.
 *
 * The comparison runs in TVM's field order (callee, arguments, attributes;
 * let binder, value, body; ...) on an explicit work stack, so long chains use
 * no C stack; types and patterns recurse under stack_exhausted(). The first
 * difference is reported with its position in EACH module and a one-line
 * rendering of both sides' node.
 */
#include "ir/equal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ir/print.h"
#include "ir/ptrmap.h"

/* --------------------------------------------------------- pointer maps */

typedef PtrMap EqMap;

static const void *eqm_get(const EqMap *m, const void *k) {
  const int64_t *v = ptrmap_find(m, k);
  return v ? (const void *)(intptr_t)*v : NULL;
}

static void eqm_put(EqMap *m, const void *k, const void *v) { ptrmap_put(m, k, (int64_t)(intptr_t)v); }

/* A pairing: both directions, so a node of b cannot be paired twice. */
typedef struct Pairing {
  EqMap fwd, rev;
} Pairing;

/* true if (a, b) is a consistent pairing (recording it when new). */
static bool pairing_add(Pairing *p, const void *a, const void *b) {
  const void *fa = eqm_get(&p->fwd, a);
  if (fa) return fa == b;
  if (eqm_get(&p->rev, b)) return false;
  eqm_put(&p->fwd, a, b);
  eqm_put(&p->rev, b, a);
  return true;
}

static void pairing_free(Pairing *p) {
  ptrmap_free(&p->fwd);
  ptrmap_free(&p->rev);
}

/* -------------------------------------------------------------- context */

typedef enum {
  TK_EXPR,       /* compare two expressions */
  TK_CALL_ATTRS, /* compare the attributes of two calls (after their arguments) */
  TK_TPARAMS_END, /* a literal's body is done: restore the type-parameter pairs its head hid */
} TaskKind;

typedef struct Task {
  const Expr *a, *b;
  TaskKind kind;
  const Expr *pa, *pb; /* the calls whose callees a and b are (for the report), or NULL */
  uint32_t n;          /* TK_TPARAMS_END: how many saved pairs to restore */
} Task;

/* A type-parameter pair hidden by a scoped binder, put back at its end. */
typedef struct TpSaved {
  const void *a, *b, *old_a, *old_b; /* the binders and what they were paired with (NULL: none) */
} TpSaved;

typedef struct Eq {
  Pairing exprs, vars, tparams;
  VEC(TypeParam *) td_tparams; /* the type definitions' pairs (a0, b0, a1, b1, ...) */
  VEC(TpSaved) tp_saved;       /* scoped type-parameter pairs in force, innermost last */
  VEC(Task) work;
  FILE *why;
  Source *src_a, *src_b; /* for positions in the report (may be NULL) */
  const char *where;     /* "@main", "type List", "expression" */
  bool inferred;         /* comparing an inferred type (not a written one): `_` matches any */
  bool failed;
} Eq;

/* What a difference points at on one side: a node, a binder, a pattern or a
 * function head (at most one set), with its span. */
typedef struct Side {
  Span sp;
  const Expr *e;
  const Var *v;
  const Pattern *p;
  const Function *f;
  const char *text; /* a fixed description when none of the above */
} Side;

static Side side_e(const Expr *e) { return (Side){.sp = e ? e->span : (Span){0, 0}, .e = e}; }
static Side side_v(const Var *v) { return (Side){.sp = v ? v->span : (Span){0, 0}, .v = v}; }
static Side side_p(const Pattern *p) { return (Side){.sp = p->span, .p = p}; }
static Side side_f(const Function *f) { return (Side){.sp = f->span, .f = f}; }
static Side side_text(Span sp, const char *text) { return (Side){.sp = sp, .text = text}; }

static void eq_free(Eq *q) {
  pairing_free(&q->exprs);
  pairing_free(&q->vars);
  pairing_free(&q->tparams);
  vec_free(q->td_tparams);
  vec_free(q->tp_saved);
  vec_free(q->work);
}

static bool str_eq(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

/* ------------------------------------------------------------ rendering */

/* A bounded one-line rendering of a node for the report: at most RENDER_MAX
 * bytes, nested expressions shown to RENDER_DEPTH levels ("..." below). */
#define RENDER_MAX 160
#define RENDER_DEPTH 3

typedef struct RBuf {
  char s[RENDER_MAX + 8];
  size_t n;
  bool full;
} RBuf;

static void rb_puts(RBuf *b, const char *s) {
  for (; *s && !b->full; s++) {
    if (b->n >= RENDER_MAX) {
      memcpy(b->s + b->n, "...", 4);
      b->n += 3;
      b->full = true;
      return;
    }
    b->s[b->n++] = *s == '\n' ? ' ' : *s;
  }
  b->s[b->n] = 0;
}

static void rb_printf(RBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rb_printf(RBuf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  rb_puts(b, tmp);
}

static void rb_type(RBuf *b, const Type *t) {
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  if (!f) return;
  print_type(f, t);
  fclose(f);
  rb_puts(b, s ? s : "?");
  free(s);
}

static void rb_const(RBuf *b, const ConstTensor *c) {
  char dt[32];
  dtype_name(c->dtype, dt);
  if (c->ndim != 0) {
    if (c->meta_index >= 0) rb_printf(b, "meta[relay.Constant][%d]", c->meta_index);
    else rb_printf(b, "<constant of rank %d, %s>", c->ndim, dt);
    return;
  }
  if (dtype_is_bool(c->dtype)) rb_puts(b, *(const uint8_t *)c->data ? "True" : "False");
  else if (dtype_is_float(c->dtype)) rb_printf(b, "%.9g%s", const_scalar_as_double(c), c->dtype.bits == 32 ? "f" : dt + 5);
  else if (dtype_eq(c->dtype, DT_I32)) rb_printf(b, "%lld", (long long)const_scalar_as_int(c));
  else rb_printf(b, "%lld%c%d", (long long)const_scalar_as_int(c), c->dtype.code == DT_UINT ? 'u' : 'i', c->dtype.bits);
}

static void rb_expr(RBuf *b, const Expr *e, int depth);

static void rb_list(RBuf *b, Expr *const *xs, uint32_t n, int depth) {
  for (uint32_t i = 0; i < n && !b->full; i++) {
    if (i) rb_puts(b, ", ");
    rb_expr(b, xs[i], depth);
  }
}

static void rb_attrs(RBuf *b, const Attrs *a, bool *first) {
  if (!a) return;
  for (uint32_t i = 0; i < a->n && !b->full; i++) {
    if (a->items[i].is_default) continue;
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f) return;
    attr_value_print(f, a->items[i].value);
    fclose(f);
    rb_printf(b, "%s%s=%s", *first ? "" : ", ", a->items[i].key, s ? s : "?");
    *first = false;
    free(s);
  }
}

static void rb_var(RBuf *b, const Var *v, bool with_type) {
  const char *name = var_name(v);
  rb_printf(b, "%%%s", name && name[0] ? name : "_");
  const Type *t = v->annot ? v->annot : v->type;
  if (with_type && t) {
    rb_puts(b, ": ");
    rb_type(b, t);
  }
}

static const Type *fn_ret_annotation(const Function *f);

/* `fn [A, B](%x: T, ...) -> R`: the return type compared (written or else
 * inferred), so a "return type differs" report shows the two types. */
static void rb_fn_head(RBuf *b, const Function *f) {
  rb_puts(b, "fn ");
  for (uint32_t i = 0; i < f->ntparams && !b->full; i++)
    rb_printf(b, "%s%s", i ? ", " : "[", f->tparams[i]->name ? f->tparams[i]->name : "?");
  rb_puts(b, f->ntparams ? "](" : "(");
  for (uint32_t i = 0; i < f->nparams && !b->full; i++) {
    if (i) rb_puts(b, ", ");
    rb_var(b, f->params[i], true);
  }
  rb_puts(b, ")");
  const Type *ret = fn_ret_annotation(f);
  if (ret && ret->kind != TYPE_INCOMPLETE) {
    rb_puts(b, " -> ");
    rb_type(b, ret);
  }
}

static void rb_expr(RBuf *b, const Expr *e, int depth) {
  if (b->full) return;
  if (!e) {
    rb_puts(b, "<none>");
    return;
  }
  bool inner = e->kind == EXPR_CALL || e->kind == EXPR_TUPLE || e->kind == EXPR_FN ||
               e->kind == EXPR_LET || e->kind == EXPR_IF || e->kind == EXPR_MATCH ||
               e->kind == EXPR_REF_NEW || e->kind == EXPR_REF_READ || e->kind == EXPR_REF_WRITE;
  if (inner && depth >= RENDER_DEPTH) {
    rb_puts(b, "...");
    return;
  }
  depth++;
  switch (e->kind) {
  case EXPR_CONST: rb_const(b, e->constant); break;
  case EXPR_VAR:
    if (e->var.var) rb_var(b, e->var.var, false);
    else rb_printf(b, "%%%s", e->var.name ? e->var.name : "?");
    break;
  case EXPR_GLOBAL: rb_printf(b, "@%s", e->global.name); break;
  case EXPR_OP: rb_puts(b, e->op.name ? e->op.name : "?"); break;
  case EXPR_CTOR: rb_puts(b, e->ctor.ctor ? e->ctor.ctor->name : "?"); break;
  case EXPR_CALL: {
    rb_expr(b, e->call.fn, depth);
    rb_puts(b, "(");
    rb_list(b, e->call.args, e->call.nargs, depth);
    bool first = e->call.nargs == 0;
    rb_attrs(b, e->call.attrs, &first);
    rb_puts(b, ")");
    break;
  }
  case EXPR_TUPLE:
    rb_puts(b, "(");
    rb_list(b, e->tuple.fields, e->tuple.n, depth);
    rb_puts(b, e->tuple.n == 1 ? ",)" : ")");
    break;
  case EXPR_PROJ:
    rb_expr(b, e->proj.tuple, depth);
    rb_printf(b, ".%u", e->proj.index);
    break;
  case EXPR_FN:
    rb_fn_head(b, e->fn);
    rb_puts(b, " { ");
    rb_expr(b, e->fn->body, depth);
    rb_puts(b, " }");
    break;
  case EXPR_LET:
    rb_puts(b, "let ");
    rb_var(b, e->let.var, true);
    rb_puts(b, " = ");
    rb_expr(b, e->let.value, depth);
    rb_puts(b, "; ");
    rb_expr(b, e->let.body, depth);
    break;
  case EXPR_IF:
    rb_puts(b, "if (");
    rb_expr(b, e->if_.cond, depth);
    rb_puts(b, ") { ");
    rb_expr(b, e->if_.then_, depth);
    rb_puts(b, " } else { ");
    rb_expr(b, e->if_.else_, depth);
    rb_puts(b, " }");
    break;
  case EXPR_MATCH:
    rb_puts(b, e->match.partial ? "match? (" : "match (");
    rb_expr(b, e->match.scrut, depth);
    rb_printf(b, ") { %u clauses }", e->match.nclauses);
    break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ:
    rb_puts(b, e->kind == EXPR_REF_NEW ? "ref(" : "ref_read(");
    rb_expr(b, e->ref.arg, depth);
    rb_puts(b, ")");
    break;
  case EXPR_REF_WRITE:
    rb_puts(b, "ref_write(");
    rb_expr(b, e->ref_write.ref, depth);
    rb_puts(b, ", ");
    rb_expr(b, e->ref_write.value, depth);
    rb_puts(b, ")");
    break;
  default: rb_printf(b, "<%s>", expr_kind_name(e->kind)); break;
  }
}

static void rb_pattern(RBuf *b, const Pattern *p, int depth);

/* "(p1, p2, ...)": a constructor pattern's arguments or a tuple pattern. */
static void rb_pattern_list(RBuf *b, Pattern *const *ps, uint32_t n, int depth) {
  rb_puts(b, "(");
  for (uint32_t i = 0; i < n; i++) {
    if (i) rb_puts(b, ", ");
    rb_pattern(b, ps[i], depth);
  }
  rb_puts(b, ")");
}

static void rb_pattern(RBuf *b, const Pattern *p, int depth) {
  if (b->full) return;
  if (depth >= RENDER_DEPTH) {
    rb_puts(b, "...");
    return;
  }
  switch (p->kind) {
  case PAT_WILDCARD: rb_puts(b, "_"); break;
  case PAT_VAR: rb_var(b, p->var, true); break;
  case PAT_CTOR:
    rb_puts(b, p->ctor.ctor ? p->ctor.ctor->name : p->ctor.name);
    if (p->ctor.nargs) rb_pattern_list(b, p->ctor.args, p->ctor.nargs, depth + 1);
    break;
  case PAT_TUPLE: rb_pattern_list(b, p->tuple.fields, p->tuple.n, depth + 1); break;
  }
}

/* "  file:line:col: text" for one side. */
static void report_side(FILE *out, Source *src, Side s) {
  RBuf b = {.n = 0};
  b.s[0] = 0;
  if (s.e) rb_expr(&b, s.e, 0);
  else if (s.v) rb_var(&b, s.v, true);
  else if (s.p) rb_pattern(&b, s.p, 0);
  else if (s.f) rb_fn_head(&b, s.f);
  else if (s.text) rb_puts(&b, s.text);
  fputs("  ", out);
  if (s.sp.lo >= DIAG_EXTRA_BASE) {
    fputs("<prelude>: ", out);
  } else if (src && (s.sp.lo || s.sp.hi) && s.sp.lo < src->len) {
    uint32_t line, col;
    source_line_col(src, s.sp.lo, &line, &col);
    fprintf(out, "%s:%u:%u: ", src->name ? src->name : "?", line, col);
  } else {
    fprintf(out, "%s: ", src && src->name ? src->name : "?");
  }
  fprintf(out, "%s\n", b.s);
}

static bool eq_fail(Eq *q, Side a, Side b, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static bool eq_fail(Eq *q, Side a, Side b, const char *fmt, ...) {
  if (q->failed) return false;
  q->failed = true;
  if (!q->why) return false;
  fprintf(q->why, "%s: ", q->where ? q->where : "module");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(q->why, fmt, ap);
  va_end(ap);
  fputc('\n', q->why);
  report_side(q->why, q->src_a, a);
  report_side(q->why, q->src_b, b);
  return false;
}

/* ---------------------------------------------------------------- types */

static bool ty_eq(Eq *q, const Type *a, const Type *b);

static bool ty_list_eq(Eq *q, Type *const *a, Type *const *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!ty_eq(q, a[i], b[i])) return false;
  return true;
}

static bool tparams_pair(Eq *q, TypeParam *const *a, TypeParam *const *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!pairing_add(&q->tparams, a[i], b[i])) return false;
  return true;
}

/* Pairs a[i] with b[i] for a scope (a literal's body, a function type),
 * whatever they were paired with before; tparams_unscope puts that back. */
static void tparams_scope(Eq *q, TypeParam *const *a, TypeParam *const *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    TpSaved sv = {a[i], b[i], eqm_get(&q->tparams.fwd, a[i]), eqm_get(&q->tparams.rev, b[i])};
    vec_push(q->tp_saved, sv);
    eqm_put(&q->tparams.fwd, a[i], b[i]);
    eqm_put(&q->tparams.rev, b[i], a[i]);
  }
}

static void tparams_unscope(Eq *q, uint32_t n) {
  for (uint32_t i = 0; i < n && q->tp_saved.len; i++) {
    TpSaved sv = q->tp_saved.data[--q->tp_saved.len];
    eqm_put(&q->tparams.fwd, sv.a, sv.old_a); /* NULL reads as unpaired */
    eqm_put(&q->tparams.rev, sv.b, sv.old_b);
  }
}

static bool dim_eq(const Dim *a, const Dim *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == DIM_ANY) return true;
  if (a->value != b->value) return false;
  return a->kind != DIM_INT || dtype_eq(a->dtype, b->dtype);
}

static bool tensor_eq(const Type *a, const Type *b) {
  if (!dtype_eq(a->tensor.dtype, b->tensor.dtype) || a->tensor.ndim != b->tensor.ndim) return false;
  for (uint32_t i = 0; i < a->tensor.ndim; i++)
    if (!dim_eq(&a->tensor.dims[i], &b->tensor.dims[i])) return false;
  return true;
}

static bool ty_eq(Eq *q, const Type *a, const Type *b) {
  a = type_solved(a);
  b = type_solved(b);
  if (!a || !b) return a == b;
  if (a == b) return true;
  /* in an inferred type, a part inference left open (`_`: nothing
   * constrains it, `let %u = @id;` unused) is any type; the other module's
   * inference settled on one (a pass keeps the type the binder had before,
   * fn (A) -> A for LambdaLift's lifted literal: pass fuzzer, session 9) */
  if (q->inferred && (a->kind == TYPE_INCOMPLETE || b->kind == TYPE_INCOMPLETE)) return true;
  if (a->kind != b->kind) return false;
  if (stack_exhausted()) return false;
  switch (a->kind) {
  case TYPE_TENSOR: return tensor_eq(a, b);
  case TYPE_TUPLE:
    return a->tuple.n == b->tuple.n && ty_list_eq(q, a->tuple.fields, b->tuple.fields, a->tuple.n);
  case TYPE_FUNC: {
    if (a->func.ntparams != b->func.ntparams || a->func.nargs != b->func.nargs) return false;
    tparams_scope(q, a->func.tparams, b->func.tparams, a->func.ntparams);
    bool ok = ty_list_eq(q, a->func.args, b->func.args, a->func.nargs) && ty_eq(q, a->func.ret, b->func.ret);
    tparams_unscope(q, a->func.ntparams);
    return ok;
  }
  case TYPE_VAR: {
    const void *pa = eqm_get(&q->tparams.fwd, a->var.param);
    if (pa) return pa == b->var.param;
    if (eqm_get(&q->tparams.rev, b->var.param)) return false;
    return a->var.param == b->var.param;
  }
  case TYPE_ADT:
    return str_eq(a->adt.def ? a->adt.def->name : NULL, b->adt.def ? b->adt.def->name : NULL) &&
           a->adt.nargs == b->adt.nargs && ty_list_eq(q, a->adt.args, b->adt.args, a->adt.nargs);
  case TYPE_REF: return ty_eq(q, a->ref.inner, b->ref.inner);
  case TYPE_INCOMPLETE: return true;
  case TYPE_NAME:
    return str_eq(a->name.name, b->name.name) && a->name.nargs == b->name.nargs &&
           ty_list_eq(q, a->name.args, b->name.args, a->name.nargs);
  case TYPE_UVAR: return false; /* distinct unbound variables */
  }
  return false;
}

bool type_equal(const Type *a, const Type *b) {
  /* the common cases without the pairing tables: the same object, two
   * tensors, two kinds apart (passes compare millions of node types) */
  a = type_solved(a);
  b = type_solved(b);
  if (!a || !b || a == b) return a == b;
  if (a->kind != b->kind) return false;
  if (a->kind == TYPE_TENSOR) return tensor_eq(a, b);
  Eq q = {0};
  bool ok = ty_eq(&q, a, b);
  eq_free(&q);
  return ok;
}

/* The "annotation" TVM compares: the written type, else the inferred one. */
static const Type *var_annotation(const Var *v) {
  if (v->annot && v->annot->kind != TYPE_INCOMPLETE) return v->annot;
  return v->type ? v->type : v->annot;
}

/* Is var_annotation(v) the inferred type? */
static bool var_type_inferred(const Var *v) { return var_annotation(v) == v->type && v->type != v->annot; }

static const Type *fn_ret_annotation(const Function *f) {
  if (f->ret_annot && f->ret_annot->kind != TYPE_INCOMPLETE) return f->ret_annot;
  const Type *t = type_solved(f->type);
  if (t && t->kind == TYPE_FUNC) return t->func.ret;
  return f->ret_annot;
}

/* ---------------------------------------------------------- attributes */

#define DOUBLE_TOLERANCE 1e-9

/* TVM's attribute equality: doubles within 1e-9, NaN == NaN; integers by
 * value, and by dtype too when `typed` (function attribute maps hold
 * IntImm objects; call attributes are typed C fields). */
static bool av_eq(const AttrValue *a, const AttrValue *b, bool typed) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  if (stack_exhausted()) return false;
  switch (a->kind) {
  case AV_INT: return a->i.value == b->i.value && (!typed || dtype_eq(a->i.dtype, b->i.dtype));
  case AV_FLOAT:
    if (typed && !dtype_eq(a->f.dtype, b->f.dtype)) return false;
    if (isnan(a->f.value) || isnan(b->f.value)) return isnan(a->f.value) && isnan(b->f.value);
    if (a->f.value == b->f.value) return true; /* infinities */
    return fabs(a->f.value - b->f.value) <= DOUBLE_TOLERANCE;
  case AV_BOOL: return a->b == b->b;
  case AV_STRING: return a->s.len == b->s.len && memcmp(a->s.chars, b->s.chars, a->s.len) == 0;
  case AV_NONE:
  case AV_ANY: return true;
  case AV_META: return a->meta.index == b->meta.index && str_eq(a->meta.key, b->meta.key);
  case AV_EXPR: return a->expr == b->expr;
  case AV_ARRAY:
    if (a->arr.n != b->arr.n) return false;
    for (uint32_t i = 0; i < a->arr.n; i++)
      if (!av_eq(a->arr.items[i], b->arr.items[i], typed)) return false;
    return true;
  }
  return false;
}

/* No attributes, or only schema defaults (what a call written without
 * attributes normalises to). */
static bool attrs_all_default(const Attrs *a) {
  if (!a) return true;
  if (a->meta_key) return false;
  for (uint32_t i = 0; i < a->n; i++)
    if (!a->items[i].is_default) return false;
  return true;
}

static const Attr *attr_find(const Attrs *a, const char *key) {
  for (uint32_t i = 0; a && i < a->n; i++)
    if (str_eq(a->items[i].key, key)) return &a->items[i];
  return NULL;
}

bool call_attrs_equal(const Attrs *a, const Attrs *b) {
  if (!a || !b || a->n == 0 || b->n == 0) {
    if (attrs_all_default(a) && attrs_all_default(b)) return true;
    if (!a || !b) return false;
  }
  if (!str_eq(a->meta_key, b->meta_key) || (a->meta_key && a->meta_index != b->meta_index)) return false;
  if (a->n != b->n) return false;
  for (uint32_t i = 0; i < a->n; i++) {
    const Attr *x = &a->items[i];
    const Attr *y = str_eq(x->key, b->items[i].key) ? &b->items[i] : attr_find(b, x->key);
    if (!y || !av_eq(x->value, y->value, false)) return false;
  }
  return true;
}

/* Call attributes (ca/cb: the calls, for the report). */
static bool call_attrs_eq(Eq *q, const Expr *ca, const Expr *cb) {
  const Attrs *a = ca->call.attrs, *b = cb->call.attrs;
  if (call_attrs_equal(a, b)) return true;
  Side sa = side_e(ca), sb = side_e(cb);
  if (!a || !b || a->n == 0 || b->n == 0) {
    if (attrs_all_default(a) && attrs_all_default(b)) return true;
    if (!a || !b) return eq_fail(q, sa, sb, "attributes present on one side only");
  }
  if (!str_eq(a->meta_key, b->meta_key) || (a->meta_key && a->meta_index != b->meta_index))
    return eq_fail(q, sa, sb, "attribute meta reference differs");
  if (a->n != b->n) return eq_fail(q, sa, sb, "attribute count differs (%u vs %u)", a->n, b->n);
  for (uint32_t i = 0; i < a->n; i++) {
    const Attr *x = &a->items[i];
    const Attr *y = str_eq(x->key, b->items[i].key) ? &b->items[i] : attr_find(b, x->key);
    if (!y) return eq_fail(q, sa, sb, "attribute %s present on one side only", x->key);
    if (!av_eq(x->value, y->value, false)) return eq_fail(q, sa, sb, "value of attribute %s differs", x->key);
  }
  return true;
}

/* Function attribute maps: same key set, equal typed values, any order. */
static bool fn_attrs_eq(Eq *q, const Function *fa, const Function *fb) {
  const Attrs *a = fa->attrs, *b = fb->attrs;
  uint32_t na = a ? a->n : 0, nb = b ? b->n : 0;
  Side sa = side_f(fa), sb = side_f(fb);
  if (na != nb) {
    if (na == 0 || nb == 0) return eq_fail(q, sa, sb, "function attributes present on one side only");
    return eq_fail(q, sa, sb, "function attribute count differs (%u vs %u)", na, nb);
  }
  for (uint32_t i = 0; i < na; i++) {
    const Attr *x = &a->items[i];
    const Attr *y = attr_find(b, x->key);
    if (!y) return eq_fail(q, sa, sb, "function attribute %s present on one side only", x->key);
    if (!av_eq(x->value, y->value, true)) return eq_fail(q, sa, sb, "value of function attribute %s differs", x->key);
  }
  return true;
}

/* ------------------------------------------------------------ variables */

static bool var_bind(Eq *q, const Var *a, const Var *b) {
  if (!a || !b) return a == b || eq_fail(q, side_v(a), side_v(b), "missing variable");
  if (a->is_free != b->is_free)
    return eq_fail(q, side_v(a), side_v(b), "free variable vs bound variable %%%s", var_name(a));
  q->inferred = var_type_inferred(a) || var_type_inferred(b);
  bool ty_same = ty_eq(q, var_annotation(a), var_annotation(b));
  q->inferred = false;
  if (!ty_same) return eq_fail(q, side_v(a), side_v(b), "annotation of %%%s differs", var_name(a));
  if (var_attrs(a) || var_attrs(b)) {
    const Attrs *x = var_attrs(a), *y = var_attrs(b);
    uint32_t nx = x ? x->n : 0, ny = y ? y->n : 0;
    bool same = nx == ny;
    for (uint32_t i = 0; same && i < nx; i++) {
      const Attr *o = attr_find(y, x->items[i].key);
      same = o && av_eq(x->items[i].value, o->value, true);
    }
    if (!same) return eq_fail(q, side_v(a), side_v(b), "attributes of %%%s differ", var_name(a));
  }
  if (!pairing_add(&q->vars, a, b))
    return eq_fail(q, side_v(a), side_v(b), "variable %%%s bound inconsistently", var_name(a));
  return true;
}

static bool var_use(Eq *q, const Expr *a, const Expr *b) {
  const Var *va = a->var.var, *vb = b->var.var;
  if (!va || !vb) {
    if (va == vb && str_eq(a->var.name, b->var.name)) return true;
    return eq_fail(q, side_e(a), side_e(b), "unresolved variable %%%s", a->var.name ? a->var.name : "");
  }
  const void *pa = eqm_get(&q->vars.fwd, va);
  if (pa) return pa == vb || eq_fail(q, side_e(a), side_e(b), "%%%s refers to a different binder", var_name(va));
  if (eqm_get(&q->vars.rev, vb))
    return eq_fail(q, side_e(a), side_e(b), "%%%s refers to a different binder", var_name(va));
  return var_bind(q, va, vb); /* a free variable, paired at first sight */
}

/* ------------------------------------------------------------- patterns */

static const char *pat_ctor_name(const Pattern *p) {
  return p->ctor.ctor ? p->ctor.ctor->name : p->ctor.name;
}

static bool pat_eq(Eq *q, const Pattern *a, const Pattern *b) {
  if (a->kind != b->kind) return eq_fail(q, side_p(a), side_p(b), "pattern kind differs");
  if (stack_exhausted()) return eq_fail(q, side_p(a), side_p(b), "pattern nested too deeply");
  switch (a->kind) {
  case PAT_WILDCARD: return true;
  case PAT_VAR: return var_bind(q, a->var, b->var);
  case PAT_CTOR:
    if (!str_eq(pat_ctor_name(a), pat_ctor_name(b)) || a->ctor.nargs != b->ctor.nargs)
      return eq_fail(q, side_p(a), side_p(b), "constructor pattern differs (%s vs %s)", pat_ctor_name(a),
                     pat_ctor_name(b));
    for (uint32_t i = 0; i < a->ctor.nargs; i++)
      if (!pat_eq(q, a->ctor.args[i], b->ctor.args[i])) return false;
    return true;
  case PAT_TUPLE:
    if (a->tuple.n != b->tuple.n) return eq_fail(q, side_p(a), side_p(b), "tuple pattern size differs");
    for (uint32_t i = 0; i < a->tuple.n; i++)
      if (!pat_eq(q, a->tuple.fields[i], b->tuple.fields[i])) return false;
    return true;
  }
  return false;
}

/* ---------------------------------------------------------- expressions */

/* Is element i of a float constant a NaN (any sign, any payload)? */
static bool elem_is_nan(const ConstTensor *c, uint64_t i) {
  DType t = c->dtype;
  if (t.lanes != 1) return false;
  if (t.code == DT_FLOAT && t.bits == 32) return isnan(((const float *)c->data)[i]);
  if (t.code == DT_FLOAT && t.bits == 64) return isnan(((const double *)c->data)[i]);
  if (t.bits == 16 && (t.code == DT_FLOAT || t.code == DT_BFLOAT)) {
    uint16_t h;
    memcpy(&h, (const char *)c->data + 2 * i, 2);
    return t.code == DT_FLOAT ? (h & 0x7c00) == 0x7c00 && (h & 0x3ff) : (h & 0x7f80) == 0x7f80 && (h & 0x7f);
  }
  return false;
}

/* Bit-identical data, except that NaNs equal NaNs whatever their sign and
 * payload: the text has one `nan` (FoldConstant's 0f / 0f is -nan on x86,
 * which printed as nanf and re-parsed as +nan: "constants differ"). */
static bool const_eq(const ConstTensor *a, const ConstTensor *b) {
  if (!dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim || a->nbytes != b->nbytes) return false;
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  if (a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0) return true;
  size_t es = dtype_size(a->dtype);
  if (!es || !(dtype_is_float(a->dtype) && a->dtype.lanes == 1)) return false;
  for (uint64_t i = 0; i < a->nbytes / es; i++) {
    const char *x = (const char *)a->data + i * es, *y = (const char *)b->data + i * es;
    if (memcmp(x, y, es) != 0 && !(elem_is_nan(a, i) && elem_is_nan(b, i))) return false;
  }
  return true;
}

static void push(Eq *q, const Expr *a, const Expr *b) { vec_push(q->work, ((Task){a, b, TK_EXPR, NULL, NULL, 0})); }

/* Signature of a function: type parameters, parameters, return type, attrs.
 * A literal's (`scoped`) type parameters are paired until its TK_TPARAMS_END. */
static bool func_head_eq(Eq *q, const Function *a, const Function *b, bool scoped) {
  /* type parameters first: the parameters' annotations mention them */
  if (a->ntparams != b->ntparams) return eq_fail(q, side_f(a), side_f(b), "type parameters differ");
  if (scoped) tparams_scope(q, a->tparams, b->tparams, a->ntparams);
  else if (!tparams_pair(q, a->tparams, b->tparams, a->ntparams))
    return eq_fail(q, side_f(a), side_f(b), "type parameters differ");
  if (a->nparams != b->nparams)
    return eq_fail(q, side_f(a), side_f(b), "parameter count differs (%u vs %u)", a->nparams, b->nparams);
  for (uint32_t i = 0; i < a->nparams; i++)
    if (!var_bind(q, a->params[i], b->params[i])) return false;
  if (!ty_eq(q, fn_ret_annotation(a), fn_ret_annotation(b)))
    return eq_fail(q, side_f(a), side_f(b), "return type differs");
  return fn_attrs_eq(q, a, b);
}

/* Nodes compared by value and never paired (spec/passes.md §9: not graph nodes). */
static bool is_value_node(const Expr *e) {
  switch (e->kind) {
  case EXPR_CONST: case EXPR_VAR: case EXPR_GLOBAL: case EXPR_OP: case EXPR_CTOR: case EXPR_PROJ:
  case EXPR_NAME: case EXPR_GRAPH_REF: case EXPR_META:
    return true;
  case EXPR_TUPLE: return e->tuple.n == 0;
  default: return false;
  }
}

/* pa/pb: the calls when a and b are callees (a differing operator is shown
 * with its call), else NULL. */
static bool value_eq(Eq *q, const Expr *a, const Expr *b, const Expr *pa, const Expr *pb) {
  Side sa = side_e(pa && a->kind != EXPR_VAR ? pa : a), sb = side_e(pb && b->kind != EXPR_VAR ? pb : b);
  switch (a->kind) {
  case EXPR_CONST: return const_eq(a->constant, b->constant) || eq_fail(q, sa, sb, "constants differ");
  case EXPR_VAR: return var_use(q, a, b);
  case EXPR_GLOBAL:
    return str_eq(a->global.name, b->global.name) ||
           eq_fail(q, sa, sb, "global @%s vs @%s", a->global.name, b->global.name);
  case EXPR_OP:
    return str_eq(a->op.name, b->op.name) || eq_fail(q, sa, sb, "operator %s vs %s", a->op.name, b->op.name);
  case EXPR_CTOR: {
    const Ctor *ca = a->ctor.ctor, *cb = b->ctor.ctor;
    const char *na = ca ? ca->name : NULL, *nb = cb ? cb->name : NULL;
    if (!str_eq(na, nb)) return eq_fail(q, sa, sb, "constructor %s vs %s", na, nb);
    if (ca && cb && (ca->nfields != cb->nfields || !ty_list_eq(q, ca->fields, cb->fields, ca->nfields)))
      return eq_fail(q, sa, sb, "constructor %s: field types differ", na);
    return true;
  }
  case EXPR_PROJ:
    if (a->proj.index != b->proj.index) return eq_fail(q, sa, sb, "projection index differs");
    push(q, a->proj.tuple, b->proj.tuple);
    return true;
  case EXPR_TUPLE: return true; /* () */
  case EXPR_NAME: return str_eq(a->name.name, b->name.name) || eq_fail(q, sa, sb, "name differs");
  case EXPR_GRAPH_REF:
    return a->graph_ref.num == b->graph_ref.num || eq_fail(q, sa, sb, "graph reference differs");
  case EXPR_META:
    return (str_eq(a->meta.key, b->meta.key) && a->meta.index == b->meta.index) ||
           eq_fail(q, sa, sb, "meta reference differs");
  default: return false;
  }
}

/* Compares the fields of one graph-node pair and queues its children
 * (pushed in reverse, so they are compared in field order). */
static bool graph_node_eq(Eq *q, const Expr *a, const Expr *b) {
  Side sa = side_e(a), sb = side_e(b);
  switch (a->kind) {
  case EXPR_CALL:
    if (a->call.nargs != b->call.nargs)
      return eq_fail(q, sa, sb, "call argument count differs (%u vs %u)", a->call.nargs, b->call.nargs);
    vec_push(q->work, ((Task){a, b, TK_CALL_ATTRS, NULL, NULL, 0}));
    for (uint32_t i = a->call.nargs; i-- > 0;) push(q, a->call.args[i], b->call.args[i]);
    vec_push(q->work, ((Task){a->call.fn, b->call.fn, TK_EXPR, a, b, 0}));
    return true;
  case EXPR_TUPLE:
    if (a->tuple.n != b->tuple.n)
      return eq_fail(q, sa, sb, "tuple size differs (%u vs %u)", a->tuple.n, b->tuple.n);
    for (uint32_t i = a->tuple.n; i-- > 0;) push(q, a->tuple.fields[i], b->tuple.fields[i]);
    return true;
  case EXPR_FN:
    if (a->fn->ntparams == b->fn->ntparams && a->fn->ntparams)
      vec_push(q->work, ((Task){a, b, TK_TPARAMS_END, NULL, NULL, a->fn->ntparams}));
    if (!func_head_eq(q, a->fn, b->fn, true)) return false;
    push(q, a->fn->body, b->fn->body);
    return true;
  case EXPR_LET:
    if (!var_bind(q, a->let.var, b->let.var)) return false;
    push(q, a->let.body, b->let.body);
    push(q, a->let.value, b->let.value);
    return true;
  case EXPR_IF:
    push(q, a->if_.else_, b->if_.else_);
    push(q, a->if_.then_, b->if_.then_);
    push(q, a->if_.cond, b->if_.cond);
    return true;
  case EXPR_MATCH:
    if (a->match.partial != b->match.partial) return eq_fail(q, sa, sb, "match vs match?");
    if (a->match.nclauses != b->match.nclauses)
      return eq_fail(q, sa, sb, "clause count differs (%u vs %u)", a->match.nclauses, b->match.nclauses);
    for (uint32_t i = 0; i < a->match.nclauses; i++)
      if (!pat_eq(q, a->match.clauses[i].pattern, b->match.clauses[i].pattern)) return false;
    for (uint32_t i = a->match.nclauses; i-- > 0;) push(q, a->match.clauses[i].body, b->match.clauses[i].body);
    push(q, a->match.scrut, b->match.scrut);
    return true;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: push(q, a->ref.arg, b->ref.arg); return true;
  case EXPR_REF_WRITE:
    push(q, a->ref_write.value, b->ref_write.value);
    push(q, a->ref_write.ref, b->ref_write.ref);
    return true;
  case EXPR_GRAPH_BIND:
    if (a->graph_bind.num != b->graph_bind.num) return eq_fail(q, sa, sb, "graph binding differs");
    push(q, a->graph_bind.body, b->graph_bind.body);
    push(q, a->graph_bind.value, b->graph_bind.value);
    return true;
  case EXPR_FREE_VAR:
    if (!var_bind(q, a->free_var.var, b->free_var.var)) return false;
    push(q, a->free_var.body, b->free_var.body);
    return true;
  default: return eq_fail(q, sa, sb, "unexpected node %s", expr_kind_name(a->kind));
  }
}

static bool expr_eq(Eq *q, const Expr *ra, const Expr *rb) {
  size_t base = q->work.len;
  push(q, ra, rb);
  while (q->work.len > base) {
    Task t = q->work.data[--q->work.len];
    const Expr *a = t.a, *b = t.b;
    if (t.kind == TK_TPARAMS_END) {
      tparams_unscope(q, t.n);
      continue;
    }
    if (t.kind == TK_CALL_ATTRS) {
      if (!call_attrs_eq(q, a, b)) return false;
      continue;
    }
    if (!a || !b) {
      if (a == b) continue;
      return eq_fail(q, side_e(a), side_e(b), "missing expression");
    }
    if (a->kind != b->kind || is_value_node(a) != is_value_node(b))
      return eq_fail(q, side_e(a), side_e(b), "%s vs %s", expr_kind_name(a->kind), expr_kind_name(b->kind));
    if (is_value_node(a)) {
      if (!value_eq(q, a, b, t.pa, t.pb)) return false;
      continue;
    }
    const void *seen = eqm_get(&q->exprs.fwd, a);
    if (seen) {
      if (seen != b) return eq_fail(q, side_e(a), side_e(b), "sharing differs (%s)", expr_kind_name(a->kind));
      continue;
    }
    if (!pairing_add(&q->exprs, a, b))
      return eq_fail(q, side_e(a), side_e(b), "sharing differs (%s)", expr_kind_name(a->kind));
    if (!graph_node_eq(q, a, b)) return false;
  }
  return true;
}

/* -------------------------------------------------------------- modules */

static int cmp_typedef(const void *x, const void *y) {
  return strcmp((*(TypeDef *const *)x)->name, (*(TypeDef *const *)y)->name);
}

static int cmp_def(const void *x, const void *y) {
  return strcmp((*(GlobalDef *const *)x)->name, (*(GlobalDef *const *)y)->name);
}

/* A copy of a pointer array sorted with cmp (caller frees). */
static void *sorted_copy(void *const *items, uint32_t n, int (*cmp)(const void *, const void *)) {
  void **c = mem_malloc((n ? n : 1) * sizeof *c);
  if (n) memcpy(c, items, n * sizeof *c);
  qsort(c, n, sizeof *c, cmp);
  return c;
}

static bool typedef_eq(Eq *q, const TypeDef *a, const TypeDef *b) {
  Side sa = side_text(a->span, a->name), sb = side_text(b->span, b->name);
  if (!str_eq(a->name, b->name)) return eq_fail(q, sa, sb, "type %s vs %s", a->name, b->name);
  if (a->ntparams != b->ntparams || !tparams_pair(q, a->tparams, b->tparams, a->ntparams))
    return eq_fail(q, sa, sb, "type %s: type parameters differ", a->name);
  for (uint32_t i = 0; i < a->ntparams; i++) {
    vec_push(q->td_tparams, a->tparams[i]);
    vec_push(q->td_tparams, b->tparams[i]);
  }
  if (a->nctors != b->nctors)
    return eq_fail(q, sa, sb, "type %s: constructor count differs (%u vs %u)", a->name, a->nctors, b->nctors);
  for (uint32_t i = 0; i < a->nctors; i++) {
    const Ctor *ca = a->ctors[i], *cb = b->ctors[i];
    if (!str_eq(ca->name, cb->name) || ca->nfields != cb->nfields ||
        !ty_list_eq(q, ca->fields, cb->fields, ca->nfields))
      return eq_fail(q, side_text(ca->span, ca->name), side_text(cb->span, cb->name),
                     "type %s: constructor %s differs", a->name, ca->name);
  }
  return true;
}

static bool types_eq(Eq *q, const Module *a, const Module *b) {
  if (a->ntypes != b->ntypes)
    return eq_fail(q, side_text((Span){0, 0}, "(module)"), side_text((Span){0, 0}, "(module)"),
                   "type definition count differs (%u vs %u)", a->ntypes, b->ntypes);
  TypeDef **ta = sorted_copy((void *const *)a->types, a->ntypes, cmp_typedef);
  TypeDef **tb = sorted_copy((void *const *)b->types, b->ntypes, cmp_typedef);
  bool ok = true;
  for (uint32_t i = 0; ok && i < a->ntypes; i++) ok = typedef_eq(q, ta[i], tb[i]);
  mem_free(ta);
  mem_free(tb);
  return ok;
}

/* A global's type parameters are scoped to it: the pairing starts afresh for
 * each global (keeping the type definitions' pairs, which constructor types
 * mention), so a module in which two globals bind the same TypeParam object
 * (LambdaLift's lifted function and ToCPS's @f_cps take over the type
 * parameters of the function they come from, as TVM's passes do) equals its
 * printed and re-parsed form, where each global has its own. */
static void tparams_reset(Eq *q) {
  /* likewise the node pairing: text cannot share a node between two globals,
   * so a pass output that does (LambdaLift) prints it in each, and each
   * global is compared on its own */
  pairing_free(&q->exprs);
  memset(&q->exprs, 0, sizeof q->exprs);
  pairing_free(&q->vars);
  memset(&q->vars, 0, sizeof q->vars);
  pairing_free(&q->tparams);
  memset(&q->tparams, 0, sizeof q->tparams);
  q->tp_saved.len = 0;
  for (size_t i = 0; i + 1 < q->td_tparams.len; i += 2)
    pairing_add(&q->tparams, q->td_tparams.data[i], q->td_tparams.data[i + 1]);
}

static bool def_eq(Eq *q, const GlobalDef *a, const GlobalDef *b) {
  tparams_reset(q);
  if (!a->fn || !b->fn)
    return a->fn == b->fn || eq_fail(q, side_text(a->span, a->name), side_text(b->span, b->name), "missing function");
  if (!func_head_eq(q, a->fn, b->fn, false)) return false;
  return expr_eq(q, a->fn->body, b->fn->body);
}

/* Globals are paired by name: the first name in sorted order that one side
 * lacks is the difference. */
static bool defs_eq(Eq *q, const Module *a, const Module *b) {
  GlobalDef **da = sorted_copy((void *const *)a->defs, a->ndefs, cmp_def);
  GlobalDef **db = sorted_copy((void *const *)b->defs, b->ndefs, cmp_def);
  bool ok = true;
  uint32_t i = 0, j = 0;
  char where[256];
  Side none = side_text((Span){0, 0}, "(no such function)");
  if (a->ndefs != b->ndefs) {
    /* name the first global one side lacks */
    while (i < a->ndefs && j < b->ndefs && strcmp(da[i]->name, db[j]->name) == 0) i++, j++;
    Side sa = none, sb = none;
    if (i < a->ndefs && (j >= b->ndefs || strcmp(da[i]->name, db[j]->name) < 0))
      sa = side_text(da[i]->span, da[i]->name);
    else if (j < b->ndefs)
      sb = side_text(db[j]->span, db[j]->name);
    ok = eq_fail(q, sa, sb, "function count differs (%u vs %u)", a->ndefs, b->ndefs);
  }
  for (i = 0; ok && i < a->ndefs; i++) {
    snprintf(where, sizeof where, "@%s", da[i]->name);
    q->where = where;
    if (!str_eq(da[i]->name, db[i]->name)) {
      ok = eq_fail(q, side_text(da[i]->span, da[i]->name), side_text(db[i]->span, db[i]->name),
                   "function @%s vs @%s", da[i]->name, db[i]->name);
      break;
    }
    ok = def_eq(q, da[i], db[i]);
  }
  q->where = NULL;
  mem_free(da);
  mem_free(db);
  return ok;
}

/* meta[VirtualDevice][i] references compare by index, so the tables they
 * index must hold the same devices (device type, id, memory scope). */
static bool virtual_devices_eq(Eq *q, const Module *a, const Module *b) {
  Side none = side_e(NULL);
  if (a->nvirtual_devices != b->nvirtual_devices)
    return eq_fail(q, none, none, "meta[VirtualDevice] has %u vs %u entries", a->nvirtual_devices,
                   b->nvirtual_devices);
  for (uint32_t i = 0; i < a->nvirtual_devices; i++) {
    const MetaVirtualDevice *x = &a->virtual_devices[i], *y = &b->virtual_devices[i];
    if (x->device_type != y->device_type || x->device_id != y->device_id || !str_eq(x->memory_scope, y->memory_scope))
      return eq_fail(q, none, none, "meta[VirtualDevice][%u] differs", i);
  }
  return true;
}

bool module_equal(Module *a, Module *b, FILE *why) {
  Eq q = {0};
  q.why = why;
  q.src_a = a->src;
  q.src_b = b->src;
  bool ok = virtual_devices_eq(&q, a, b) && types_eq(&q, a, b) && defs_eq(&q, a, b);
  if (ok && (a->expr || b->expr)) {
    q.where = "expression";
    ok = (a->expr && b->expr) ? expr_eq(&q, a->expr, b->expr)
                              : eq_fail(&q, side_e(a->expr), side_e(b->expr), "expression present on one side only");
  }
  eq_free(&q);
  return ok;
}
