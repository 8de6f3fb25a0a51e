/* tests/unit/check_parser.c — the Bison grammar (parser/relay.y) and the AST it builds.
 *
 * Trees are checked through a compact S-expression rendering of the
 * pre-resolve AST (sx_* below), so each grammar form is pinned by one line.
 * Inputs are copied into exact-size buffers (no NUL) so ASan catches
 * over-reads. Also: error recovery, exact diagnostics, garbage, a program cut
 * at every byte, and deep nesting / long chains.
 */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "parser/parser.h"
#include "tests/unit/unit_run.h"

/* --------------------------------------------------------------- helpers */

typedef struct Parsed {
  Module *m;
  Source *src;
  char *diag;
  int nerrors;
} Parsed;

static Parsed *parse_n(const char *text, size_t len, bool expr, int max_errors) {
  Parsed *P = calloc(1, sizeof *P);
  char *buf = mem_malloc(len ? len : 1);
  memcpy(buf, text, len);
  P->src = source_new("t.relay", buf, len);
  size_t dlen;
  FILE *f = open_memstream(&P->diag, &dlen);
  Diag d;
  diag_init(&d, f, P->src);
  d.max_errors = max_errors;
  P->m = expr ? parse_expression(P->src, &d) : parse_module(P->src, &d);
  P->nerrors = d.nerrors;
  fclose(f);
  return P;
}

static Parsed *pmod(const char *text) { return parse_n(text, strlen(text), false, 0); }
static Parsed *pexpr(const char *text) { return parse_n(text, strlen(text), true, 0); }

static void done(Parsed *P) {
  module_free(P->m);
  source_free(P->src);
  free(P->diag);
  free(P);
}

#define HDR "#[version = \"0.0.5\"]\n"

/* ---- S-expression rendering of the pre-resolve AST */

typedef struct Buf { char s[8192]; size_t n; } Buf;

__attribute__((format(printf, 2, 3))) static void bp(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (b->n < sizeof b->s) {
    int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    if (k > 0) b->n += (size_t)k;
    if (b->n >= sizeof b->s) b->n = sizeof b->s - 1;
  }
  va_end(ap);
}

static void sx_expr(Buf *b, const Expr *e);
static void sx_type(Buf *b, const Type *t);

static void sx_dtype_suffix(Buf *b, DType dt, bool is_float) {
  char name[32];
  if (is_float) {
    if (dt.bits != 32) bp(b, "%u", dt.bits);
  } else if (!dtype_eq(dt, DT_I32)) {
    bp(b, "%s", dtype_name(dt, name));
  }
}

/* Reads the scalar itself (by dtype) rather than through ir/ helpers. */
static int64_t scalar_int(const ConstTensor *c) {
  switch (c->dtype.bits) {
  case 1: case 8: return *(const int8_t *)c->data;
  case 16: return *(const int16_t *)c->data;
  case 32: return *(const int32_t *)c->data;
  default: return *(const int64_t *)c->data;
  }
}

static double scalar_float(const ConstTensor *c) {
  if (c->dtype.bits == 16) return half_to_float(*(const uint16_t *)c->data);
  if (c->dtype.bits == 32) return *(const float *)c->data;
  return *(const double *)c->data;
}

static void sx_const(Buf *b, const ConstTensor *c) {
  if (dtype_is_bool(c->dtype)) {
    bp(b, "%s", scalar_int(c) ? "True" : "False");
  } else if (dtype_is_float(c->dtype)) {
    bp(b, "%gf", scalar_float(c));
    sx_dtype_suffix(b, c->dtype, true);
  } else {
    bp(b, "%lld", (long long)scalar_int(c));
    if (!dtype_eq(c->dtype, DT_I32)) bp(b, ":");
    sx_dtype_suffix(b, c->dtype, false);
  }
}

static void sx_av(Buf *b, const AttrValue *v) {
  switch (v->kind) {
  case AV_INT:
    bp(b, "%lld", (long long)v->i.value);
    if (!dtype_eq(v->i.dtype, DT_I32)) bp(b, ":");
    sx_dtype_suffix(b, v->i.dtype, false);
    break;
  case AV_FLOAT: bp(b, "%gf", v->f.value); sx_dtype_suffix(b, v->f.dtype, true); break;
  case AV_BOOL: bp(b, "%s", v->b ? "True" : "False"); break;
  case AV_STRING: bp(b, "\"%.*s\"", (int)v->s.len, v->s.chars); break;
  case AV_NONE: bp(b, "None"); break;
  case AV_ANY: bp(b, "?"); break;
  case AV_META: bp(b, "meta[%s][%u]", v->meta.key, v->meta.index); break;
  case AV_EXPR: bp(b, "expr:"); sx_expr(b, v->expr); break;
  case AV_ARRAY:
    bp(b, "[");
    for (uint32_t i = 0; i < v->arr.n; i++) {
      if (i) bp(b, " ");
      sx_av(b, v->arr.items[i]);
    }
    bp(b, "]");
    break;
  }
}

static void sx_attrs(Buf *b, const Attrs *a) {
  if (!a) return;
  bp(b, " |");
  if (a->meta_key) bp(b, " meta[%s][%u]", a->meta_key, a->meta_index);
  for (uint32_t i = 0; i < a->n; i++) {
    bp(b, " %s=", a->items[i].key);
    sx_av(b, a->items[i].value);
  }
}

static void sx_var(Buf *b, const Var *v) {
  bp(b, "%%%s", var_name(v));
  if (var_attrs(v)) {
    bp(b, "{");
    sx_attrs(b, var_attrs(v));
    bp(b, "}");
  }
  if (v->annot) {
    bp(b, ": ");
    sx_type(b, v->annot);
  }
}

static void sx_types(Buf *b, Type *const *ts, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (i) bp(b, ", ");
    sx_type(b, ts[i]);
  }
}

static void sx_tparams(Buf *b, TypeParam *const *tp, uint32_t n) {
  if (!n) return;
  bp(b, "[");
  for (uint32_t i = 0; i < n; i++) bp(b, "%s%s", i ? ", " : "", tp[i]->name);
  bp(b, "]");
}

static void sx_type(Buf *b, const Type *t) {
  char name[32];
  switch (t->kind) {
  case TYPE_TENSOR:
    if (t->tensor.ndim == 0) {
      bp(b, "%s", dtype_name(t->tensor.dtype, name));
      break;
    }
    bp(b, "Tensor[(");
    for (uint32_t i = 0; i < t->tensor.ndim; i++) {
      const Dim *d = &t->tensor.dims[i];
      if (i) bp(b, ", ");
      if (d->kind == DIM_ANY) bp(b, "?");
      else if (d->kind == DIM_SYM) bp(b, "sym%lld", (long long)d->value);
      else bp(b, "%lld%s", (long long)d->value, dtype_eq(d->dtype, DT_I64) ? "i64" : "");
    }
    bp(b, "), %s]", dtype_name(t->tensor.dtype, name));
    break;
  case TYPE_TUPLE:
    bp(b, "(");
    sx_types(b, t->tuple.fields, t->tuple.n);
    bp(b, t->tuple.n == 1 ? ",)" : ")");
    break;
  case TYPE_FUNC:
    bp(b, "fn ");
    sx_tparams(b, t->func.tparams, t->func.ntparams);
    bp(b, "(");
    sx_types(b, t->func.args, t->func.nargs);
    bp(b, ") -> ");
    sx_type(b, t->func.ret);
    break;
  case TYPE_NAME:
    bp(b, "%s", t->name.name);
    if (t->name.has_brackets) {
      bp(b, "[");
      sx_types(b, t->name.args, t->name.nargs);
      bp(b, "]");
    }
    break;
  case TYPE_REF: bp(b, "ref("); sx_type(b, t->ref.inner); bp(b, ")"); break;
  case TYPE_INCOMPLETE: bp(b, "_"); break;
  default: bp(b, "<type %d>", t->kind); break;
  }
}

static void sx_pat(Buf *b, const Pattern *p) {
  switch (p->kind) {
  case PAT_WILDCARD: bp(b, "_"); break;
  case PAT_VAR: sx_var(b, p->var); break;
  case PAT_CTOR:
    bp(b, "%s", p->ctor.name);
    if (p->ctor.nargs) {
      bp(b, "(");
      for (uint32_t i = 0; i < p->ctor.nargs; i++) {
        if (i) bp(b, ", ");
        sx_pat(b, p->ctor.args[i]);
      }
      bp(b, ")");
    }
    break;
  case PAT_TUPLE:
    bp(b, "(");
    for (uint32_t i = 0; i < p->tuple.n; i++) {
      if (i) bp(b, ", ");
      sx_pat(b, p->tuple.fields[i]);
    }
    bp(b, p->tuple.n == 1 ? ",)" : ")");
    break;
  }
}

static void sx_fn(Buf *b, const Function *f) {
  bp(b, "(fn");
  if (f->ntparams) bp(b, " ");
  sx_tparams(b, f->tparams, f->ntparams);
  bp(b, " (");
  for (uint32_t i = 0; i < f->nparams; i++) {
    if (i) bp(b, " ");
    sx_var(b, f->params[i]);
  }
  sx_attrs(b, f->attrs);
  bp(b, ")");
  if (f->ret_annot) {
    bp(b, " -> ");
    sx_type(b, f->ret_annot);
  }
  bp(b, " ");
  sx_expr(b, f->body);
  bp(b, ")");
}

static void sx_expr(Buf *b, const Expr *e) {
  switch (e->kind) {
  case EXPR_CONST: sx_const(b, e->constant); break;
  case EXPR_VAR: bp(b, "%%%s", e->var.name); break;
  case EXPR_GLOBAL: bp(b, "@%s", e->global.name); break;
  case EXPR_NAME: bp(b, "%s", e->name.name); break;
  case EXPR_GRAPH_REF: bp(b, "%%%u", e->graph_ref.num); break;
  case EXPR_META: bp(b, "meta[%s][%u]", e->meta.key, e->meta.index); break;
  case EXPR_CALL:
    bp(b, "(call ");
    sx_expr(b, e->call.fn);
    for (uint32_t i = 0; i < e->call.nargs; i++) {
      bp(b, " ");
      sx_expr(b, e->call.args[i]);
    }
    sx_attrs(b, e->call.attrs);
    bp(b, ")");
    break;
  case EXPR_TUPLE:
    bp(b, "(tuple");
    for (uint32_t i = 0; i < e->tuple.n; i++) {
      bp(b, " ");
      sx_expr(b, e->tuple.fields[i]);
    }
    bp(b, ")");
    break;
  case EXPR_PROJ: bp(b, "(proj "); sx_expr(b, e->proj.tuple); bp(b, " %u)", e->proj.index); break;
  case EXPR_FN: sx_fn(b, e->fn); break;
  case EXPR_LET:
    bp(b, "(let ");
    sx_var(b, e->let.var);
    bp(b, " = ");
    sx_expr(b, e->let.value);
    bp(b, " ");
    sx_expr(b, e->let.body);
    bp(b, ")");
    break;
  case EXPR_GRAPH_BIND:
    bp(b, "(%%%u = ", e->graph_bind.num);
    sx_expr(b, e->graph_bind.value);
    bp(b, " ");
    sx_expr(b, e->graph_bind.body);
    bp(b, ")");
    break;
  case EXPR_FREE_VAR:
    bp(b, "(free_var ");
    sx_var(b, e->free_var.var);
    bp(b, " ");
    sx_expr(b, e->free_var.body);
    bp(b, ")");
    break;
  case EXPR_IF:
    bp(b, "(if ");
    sx_expr(b, e->if_.cond);
    bp(b, " ");
    sx_expr(b, e->if_.then_);
    bp(b, " ");
    sx_expr(b, e->if_.else_);
    bp(b, ")");
    break;
  case EXPR_MATCH:
    bp(b, "(%s ", e->match.partial ? "match?" : "match");
    sx_expr(b, e->match.scrut);
    for (uint32_t i = 0; i < e->match.nclauses; i++) {
      bp(b, " [");
      sx_pat(b, e->match.clauses[i].pattern);
      bp(b, " => ");
      sx_expr(b, e->match.clauses[i].body);
      bp(b, "]");
    }
    bp(b, ")");
    break;
  case EXPR_REF_NEW: bp(b, "(ref "); sx_expr(b, e->ref.arg); bp(b, ")"); break;
  case EXPR_REF_READ: bp(b, "(ref_read "); sx_expr(b, e->ref.arg); bp(b, ")"); break;
  case EXPR_REF_WRITE:
    bp(b, "(ref_write ");
    sx_expr(b, e->ref_write.ref);
    bp(b, " ");
    sx_expr(b, e->ref_write.value);
    bp(b, ")");
    break;
  default: bp(b, "<%s>", expr_kind_name(e->kind)); break;
  }
}

/* Parses a bare expression and compares its rendering. */
static void check_expr(const char *text, const char *want) {
  Parsed *P = pexpr(text);
  ck_assert_msg(P->nerrors == 0, "%s: errors:\n%s", text, P->diag);
  ck_assert_msg(P->m->expr != NULL, "%s: no expression", text);
  Buf b = {.n = 0};
  sx_expr(&b, P->m->expr);
  ck_assert_msg(strcmp(b.s, want) == 0, "%s:\n  got  %s\n  want %s", text, b.s, want);
  done(P);
}

/* Renders the first parameter's annotation of `def @f(%x: TYPE) { 0 }`. */
static void check_type(const char *type, const char *want) {
  char text[512];
  snprintf(text, sizeof text, HDR "def @f(%%x: %s) { 0 }", type);
  Parsed *P = pmod(text);
  ck_assert_msg(P->nerrors == 0, "%s: errors:\n%s", type, P->diag);
  ck_assert_int_eq(P->m->ndefs, 1);
  Buf b = {.n = 0};
  sx_type(&b, P->m->defs[0]->fn->params[0]->annot);
  ck_assert_msg(strcmp(b.s, want) == 0, "%s:\n  got  %s\n  want %s", type, b.s, want);
  done(P);
}

/* Checks a one-error diagnostic: the message line exactly, then the excerpt:
 * the source line `src_line` is shown and the caret run (`^` + `~`s, `width`
 * long) starts under column `col` — whatever width the line-number gutter has. */
static void check_diag(const char *diag, const char *first, const char *src_line, int col,
                       int width) {
  size_t n = strlen(first);
  ck_assert_msg(strncmp(diag, first, n) == 0 && diag[n] == '\n', "diagnostic was:\n%s", diag);
  const char *l2 = diag + n + 1, *bar = strstr(l2, "| ");
  ck_assert_ptr_nonnull(bar);
  ck_assert_msg(strncmp(bar + 2, src_line, strlen(src_line)) == 0, "excerpt was:\n%s", l2);
  const char *l3 = strchr(bar, '\n') + 1;
  int gutter = (int)(bar - l2);
  ck_assert_msg(strncmp(l3 + gutter, "| ", 2) == 0, "caret line was:\n%s", l3);
  const char *caret = l3 + gutter + 2 + (col - 1);
  ck_assert_msg(caret[0] == '^', "caret line was:\n%s", l3);
  for (int i = 1; i < width; i++) ck_assert_msg(caret[i] == '~', "caret line was:\n%s", l3);
  ck_assert_msg(caret[width] == '\n', "caret line was:\n%s", l3);
}

/* Expects at least one error whose text contains `msg` (module or expression). */
static void check_fails(const char *text, bool expr, const char *msg) {
  Parsed *P = expr ? pexpr(text) : pmod(text);
  ck_assert_msg(P->nerrors >= 1, "%s: no error", text);
  ck_assert_msg(strstr(P->diag, msg), "%s: wanted \"%s\", got:\n%s", text, msg, P->diag);
  done(P);
}

/* ----------------------------------------------------------------- tests */

START_TEST(test_empty_and_header) {
  Parsed *P = pmod("");
  ck_assert_int_eq(P->nerrors, 1);
  ck_assert_int_eq(P->nerrors, 1);
  check_diag(P->diag, "t.relay:1:1: error: expected the version header #[version = \"0.0.5\"]", "", 1, 1);
  ck_assert_int_eq(P->m->ndefs, 0);
  done(P);
  P = pmod(HDR);
  ck_assert_int_eq(P->nerrors, 0);
  ck_assert_int_eq(P->m->ndefs, 0);
  ck_assert_ptr_null(P->m->expr);
  done(P);
  P = pmod("// leading comment\n/* and */ " HDR "def @f() { 0 }");
  ck_assert_int_eq(P->nerrors, 0);
  ck_assert_int_eq(P->m->ndefs, 1);
  done(P);
  check_fails("def @f() { 0 }", false, "1:1: error: expected the version header");
  check_fails(HDR HDR, false, "found version header \"#[version = \\\"0.0.5\\\"]\"");
  check_fails("", true, "expected expression, found end of file");
  P = pexpr("(1 +");
  ck_assert_ptr_nonnull(P->m->expr); /* a placeholder after errors, never NULL */
  done(P);
  Source empty = {.name = "e", .text = NULL, .len = 0};
  Diag d;
  diag_init(&d, NULL, &empty);
  d.max_errors = 0;
  FILE *sink = fopen("/dev/null", "w");
  d.out = sink;
  module_free(parse_expression(&empty, &d));
  ck_assert_int_eq(d.nerrors, 1);
  fclose(sink);
  free(empty.line_starts);
  check_expr(HDR "1", "1");
  check_fails("def @f() { 0 }", true, "expected expression, found \"def\"");
}
END_TEST

START_TEST(test_literals) {
  check_expr("7", "7");
  check_expr("-5", "-5");
  check_expr("42i64", "42:int64");
  check_expr("42i16", "42:int16");
  check_expr("2147483648", "2147483648:int64");
  check_expr("1f", "1f");
  check_expr("2.5f16", "2.5f16");
  check_expr("0.1f64", "0.1f64");
  check_expr("-inff", "-inff");
  check_expr("True", "True");
  check_expr("False", "False");
  check_expr("meta[relay.Constant][3]", "meta[relay.Constant][3]");
  check_expr("nn.conv2d", "nn.conv2d");
  check_expr("nn . /* x */ conv2d", "nn.conv2d");
  check_expr("%x", "%x");
  check_expr("@main", "@main");
  check_expr("%0", "%0");
  check_expr("Tensor", "Tensor");
  /* a bad literal is one lexical error, not a cascade of syntax errors */
  Parsed *P = pexpr("1.5 + 2");
  ck_assert_int_eq(P->nerrors, 1);
  ck_assert(strstr(P->diag, "invalid integer literal"));
  done(P);
}
END_TEST

START_TEST(test_precedence) {
  check_expr("1 * 1 + 1 < 1 == 1",
             "(call equal (call less (call add (call multiply 1 1) 1) 1) 1)");
  check_expr("%a - %b - %c", "(call subtract (call subtract %a %b) %c)");
  check_expr("%a / %b * %c", "(call multiply (call divide %a %b) %c)");
  check_expr("%a + %b * %c", "(call add %a (call multiply %b %c))");
  check_expr("%a == %b != %c", "(call not_equal (call equal %a %b) %c)");
  check_expr("%a >= %b <= %c > %d", "(call greater (call less_equal (call greater_equal %a %b) %c) %d)");
  check_expr("(%a + %b) * %c", "(call multiply (call add %a %b) %c)");
  check_expr("f(1) + %t.0", "(call add (call f 1) (proj %t 0))");
  check_expr("%0 == %1", "(call equal %0 %1)"); /* `==` is one token in relayc */
  /* the span of an infix call covers the whole expression; the callee is the operator */
  Parsed *P = pexpr("  %a +   %b * 2");
  const Expr *e = P->m->expr;
  ck_assert_uint_eq(e->span.lo, 2);
  ck_assert_uint_eq(e->span.hi, 15);
  ck_assert_uint_eq(e->call.fn->span.lo, 5);
  ck_assert_uint_eq(e->call.fn->span.hi, 6);
  ck_assert_uint_eq(e->call.args[1]->span.lo, 9);
  done(P);
  check_fails("-%x", true, "found \"-\"");
  check_fails("1 + -%x", true, "expected expression, found \"-\"");
  check_fails("%a < = %b", true, "expected expression, found \"=\"");
  check_fails("%a && %b", true, "unexpected character '&'");
}
END_TEST

START_TEST(test_calls) {
  check_expr("f()", "(call f)");
  check_expr("f(1)(2)", "(call (call f 1) 2)");
  check_expr("@g(1, 2,)", "(call @g 1 2)");
  check_expr("%0(1)", "(call %0 1)");
  check_expr("(fn (%x) { %x })(1)", "(call (fn (%x) %x) 1)");
  check_expr("nn.conv2d(%x, %w, padding=[1, 1], channels=8 kernel_size=[3, 3])",
             "(call nn.conv2d %x %w | padding=[1 1] channels=8 kernel_size=[3 3])");
  check_expr("f(%x, a=1, relay.b=2,)", "(call f %x | a=1 relay.b=2)");
  check_expr("f(relay.reshape_only=1)", "(call f | relay.reshape_only=1)");
  check_expr("f(a=1)", "(call f | a=1)");
  check_expr("nn.conv2d(%x, %w, meta[relay.attrs.Conv2DAttrs][0])",
             "(call nn.conv2d %x %w | meta[relay.attrs.Conv2DAttrs][0])");
  check_expr("f(meta[relay.Constant][0])", "(call f meta[relay.Constant][0])");
  check_expr("f(meta[relay.attrs.X][1], a=1)", "(call f meta[relay.attrs.X][1] | a=1)");
  check_expr("Cons(1, Nil)", "(call Cons 1 Nil)");
  check_fails("f(a=1, %x)", true, "expected identifier or \")\", found local variable \"%x\"");
  check_fails("f(,)", true, "found \",\"");
  Parsed *P = pexpr("f(%x)(1)");
  ck_assert_uint_eq(P->m->expr->span.lo, 0);
  ck_assert_uint_eq(P->m->expr->span.hi, 8);
  ck_assert_uint_eq(P->m->expr->call.fn->span.hi, 5);
  done(P);
}
END_TEST

START_TEST(test_tuples_and_projection) {
  check_expr("()", "(tuple)");
  check_expr("(1,)", "(tuple 1)");
  check_expr("(1)", "1");
  check_expr("((1))", "1");
  check_expr("(1, 2)", "(tuple 1 2)");
  check_expr("(1, 2,)", "(tuple 1 2)");
  check_expr("%t.0", "(proj %t 0)");
  check_expr("(%a, %b).1", "(proj (tuple %a %b) 1)");
  check_expr("%0.1", "(proj %0 1)");
  check_expr("@g.2", "(proj @g 2)");
  check_expr("(%t.0).1", "(proj (proj %t 0) 1)");
  check_expr("%t.0(%x)", "(call (proj %t 0) %x)");
  check_expr("%t . 3", "(proj %t 3)");
  check_fails("f(%x).0", true, "found \".\"");
  check_fails("%t.0.1", true, "invalid integer literal \"0.1\"");
  check_fails("%t.-1", true, "tuple index must be a non-negative integer");
}
END_TEST

START_TEST(test_bindings) {
  check_expr("let %x = 1; %x", "(let %x = 1 %x)");
  check_expr("let %x: int32 = 1; %x", "(let %x: int32 = 1 %x)");
  check_expr("let %x : int32 = 1; %x", "(let %x: int32 = 1 %x)");
  check_expr("1; 2", "(let %: _ = 1 2)");
  check_expr("%0 = 1; %0", "(%0 = 1 %0)");
  check_expr("free_var %x: float32; %x", "(free_var %x: float32 %x)");
  check_expr("free_var %x; %x", "(free_var %x %x)");
  check_expr("{ 1 }", "1");
  check_expr("{ let %x = 1; %x }", "(let %x = 1 %x)");
  check_expr("let %a = 1; %0 = 2; 3; %a", "(let %a = 1 (%0 = 2 (let %: _ = 3 %a)))");
  check_expr("%0 = add(%x, %x); multiply(%0, %0)",
             "(%0 = (call add %x %x) (call multiply %0 %0))");
  /* relayc §7.10: match, let and blocks as unparenthesised binding values */
  check_expr("let %x = match (1) { _ => 2 }; %x", "(let %x = (match 1 [_ => 2]) %x)");
  check_expr("%0 = match? %y { _ => 1 }; %0", "(%0 = (match? %y [_ => 1]) %0)");
  check_expr("let %x = let %y = 1; %y; %x", "(let %x = (let %y = 1 %y) %x)");
  check_expr("let %x = let %y = 1; let %z = %y; %z; %x",
             "(let %x = (let %y = 1 (let %z = %y %z)) %x)");
  check_expr("let %x = { 1 }; %x", "(let %x = 1 %x)");
  check_expr("%0 = (let %y = 1; %y); %0", "(%0 = (let %y = 1 %y) %0)");
  check_expr("f((let %y = 1; %y), 2)", "(call f (let %y = 1 %y) 2)");
  /* the hidden variable of `e1; e2` has an empty name and an incomplete annotation */
  Parsed *P = pexpr("1; 2");
  const Var *v = P->m->expr->let.var;
  ck_assert_str_eq(var_name(v), "");
  ck_assert_ptr_nonnull(v->annot);
  ck_assert_int_eq(v->annot->kind, TYPE_INCOMPLETE);
  done(P);
  P = pexpr("free_var %x: float32; %x");
  ck_assert(P->m->expr->free_var.var->is_free);
  done(P);
  check_fails("let %0 = 1; 2", true, "a let variable cannot be a number");
  check_fails("let %x = 1;", true, "expected expression, found end of file");
  check_fails("{ %0 = 1; }", true, "expected expression, found \"}\"");
  check_fails("{ 1; }", true, "expected expression, found \"}\"");
  check_fails("let %x = 1", true, "expected \";\", found end of file");
  check_fails("%x = 1; 2", true, "found \"=\"");
}
END_TEST

START_TEST(test_functions) {
  Parsed *P = pmod(HDR "def @f[A, B](%x: A, %y {virtual_device=meta[VirtualDevice][0]}: B, "
                   "Primitive=1, Compiler=\"x\") -> A { %x }\n"
                   "def @g() { 0 }\n");
  ck_assert_msg(P->nerrors == 0, "%s", P->diag);
  ck_assert_int_eq(P->m->ndefs, 2);
  GlobalDef *f = P->m->defs[0];
  ck_assert_str_eq(f->name, "f");
  ck_assert_uint_eq(f->span.lo, 25);
  ck_assert_uint_eq(f->span.hi, 27);
  Buf b = {.n = 0};
  sx_fn(&b, f->fn);
  ck_assert_str_eq(b.s, "(fn [A, B] (%x: A %y{ | virtual_device=meta[VirtualDevice][0]}: B"
                        " | Primitive=1 Compiler=\"x\") -> A %x)");
  ck_assert_uint_eq(f->fn->span.lo, 21);
  ck_assert_str_eq(P->m->defs[1]->name, "g");
  ck_assert_uint_eq(P->m->defs[1]->fn->nparams, 0);
  ck_assert_ptr_null(P->m->defs[1]->fn->attrs);
  done(P);
  check_expr("fn () { 0 }", "(fn () 0)");
  check_expr("fn(%x){%x}", "(fn (%x) %x)");
  check_expr("fn [](%x,) { %x }", "(fn (%x) %x)");
  check_expr("fn (Primitive=1) { 0 }", "(fn ( | Primitive=1) 0)");
  check_expr("fn (%x, Primitive=1, relay.reshape_only=1,) { %x }",
             "(fn (%x | Primitive=1 relay.reshape_only=1) %x)");
  check_expr("fn (%x, relay.reshape_only=1, Primitive=1) { %x }", /* relayc: dotted first key */
             "(fn (%x | relay.reshape_only=1 Primitive=1) %x)");
  check_expr("fn [T](%x: T) - > T { %x }", "(fn [T] (%x: T) -> T %x)");
  check_fails(HDR "def @f(%0) { 1 }", false, "a parameter name cannot be a number");
  check_fails(HDR "def @f(%x) { 1 } def", false, "expected global variable, found end of file");
  check_fails(HDR "def @f(%x) -> { 1 }", false, "found \"{\"");
  check_fails(HDR "def f() { 1 }", false, "expected global variable, found identifier \"f\"");
}
END_TEST

START_TEST(test_if_match_refs) {
  check_expr("if (%c) { 1 } else { 2 }", "(if %c 1 2)");
  check_expr("if (%c) { 1 } else { if (%d) { 2 } else { 3 } }", "(if %c 1 (if %d 2 3))");
  check_expr("match (%l) { Cons(_, %rest) => 1, Nil => 0, }",
             "(match %l [Cons(_, %rest) => 1] [Nil => 0])");
  check_expr("match? %x { (%a, %b: int32) => %a, (%c) => %c, C() => 0 }",
             "(match? %x [(%a, %b: int32) => %a] [(%c,) => %c] [C => 0])");
  check_expr("match (f(%x)) { _ => { let %y = 1; %y } }",
             "(match (call f %x) [_ => (let %y = 1 %y)])");
  check_expr("match %x { }", "(match %x)");
  check_expr("match (%a, %b) { ((), Z(S(_))) => 1 }",
             "(match (tuple %a %b) [((), Z(S(_))) => 1])");
  check_expr("ref(1)", "(ref 1)");
  check_expr("ref_read(%r)", "(ref_read %r)");
  check_expr("ref_write(%r, 2)", "(ref_write %r 2)");
  check_expr("%0 = ref(%x); ref_write(%0, 1f); ref_read(%0)",
             "(%0 = (ref %x) (let %: _ = (ref_write %0 1f) (ref_read %0)))");
  check_fails("if (%c) { 1 }", true, "expected \"else\", found end of file");
  check_fails("if (%c) { 1 } else if (%d) { 2 } else { 3 }", true, "expected \"{\", found \"if\"");
  check_fails("match (%x) { %y => 1 = > 2 }", true, "found \"=\"");
  check_fails("match (%x) { %0 => 1 }", true, "a pattern variable cannot be a number");
  check_fails("match (%x) { %y 1 }", true, "expected \":\" or \"=>\", found integer \"1\"");
}
END_TEST

START_TEST(test_types) {
  check_type("Tensor[(1, 3, 224, 224), float32]", "Tensor[(1, 3, 224, 224), float32]");
  check_type("Tensor[(10), float32]", "Tensor[(10), float32]");
  check_type("Tensor[(10,), float32]", "Tensor[(10), float32]");
  check_type("Tensor[(), float32]", "float32");
  check_type("Tensor[(2i64, ?, meta[tir.SizeVar][1]), int8]", "Tensor[(2i64, ?, sym1), int8]");
  check_type("float32", "float32");
  check_type("int8x4", "int8x4");
  check_type("bool", "bool");
  check_type("int", "int32");
  check_type("bfloat16", "bfloat16");
  check_type("handle", "handle");
  check_type("e4m3_float8", "e4m3_float8");
  check_type("(float32, int32)", "(float32, int32)");
  check_type("(float32)", "(float32,)");
  check_type("(float32,)", "(float32,)");
  check_type("()", "()");
  check_type("fn (float32) -> int32", "fn (float32) -> int32");
  check_type("fn () -> fn (A) -> (B)", "fn () -> fn (A) -> (B,)");
  check_type("fn [A](A) -> A", "fn [A](A) -> A");
  check_type("List[A]", "List[A]");
  check_type("List", "List");
  check_type("List[]", "List[]");
  check_type("List[Tensor[(), int32],]", "List[int32]");
  check_type("ref(float32)", "ref(float32)");
  check_type("_", "_");
  check_type("(A, B C)", "(A, B, C)"); /* comma leniency */
  /* the dimension keeps its literal dtype */
  Parsed *P = pmod(HDR "def @f(%x: Tensor[(5i16, 7), float32]) { 0 }");
  const Type *t = P->m->defs[0]->fn->params[0]->annot;
  ck_assert(dtype_eq(t->tensor.dims[0].dtype, DT_I16));
  ck_assert(dtype_eq(t->tensor.dims[1].dtype, DT_I32));
  ck_assert_int_eq(t->tensor.dims[1].kind, DIM_INT);
  done(P);
  check_fails(HDR "def @f(%x: int_t) { 0 }", false, "invalid dtype \"int_t\"");
  check_fails(HDR "def @f(%x: floaty) { 0 }", false, "invalid dtype \"floaty\"");
  check_fails(HDR "def @f(%x: Tensor[(1), floaty]) { 0 }", false, "unknown dtype \"floaty\"");
  check_fails(HDR "def @f(%x: Tensor[(1), List]) { 0 }", false, "unknown dtype \"List\"");
  check_fails(HDR "def @f(%x: float32[A]) { 0 }", false, "dtype \"float32\" takes no type arguments");
  check_fails(HDR "def @f(%x: Tensor[(meta[relay.Constant][0]), int8]) { 0 }", false,
              "a dimension can only refer to meta[tir.SizeVar][i]");
  check_fails(HDR "def @f(%x: ?) { 0 }", false, "expected type, found \"?\"");
  check_fails(HDR "def @f(%x: Tensor[(1.5), float32]) { 0 }", false, "invalid integer literal");
  check_fails(HDR "def @f(%x: meta[IncompleteType][0]) { 0 }", false, "expected type, found meta reference");
}
END_TEST

START_TEST(test_type_defs) {
  Parsed *P = pmod(HDR "type List[A] { Cons(A, List[A]), Nil }\n"
                   "extern type Storage\n"
                   "def @f() { 0 }\n"
                   "type Empty { }\n"
                   "type Opaque\n"
                   "type T { A, B, }\n");
  ck_assert_msg(P->nerrors == 0, "%s", P->diag);
  ck_assert_int_eq(P->m->ntypes, 5);
  ck_assert_int_eq(P->m->ndefs, 1);
  TypeDef *l = P->m->types[0];
  ck_assert_str_eq(l->name, "List");
  ck_assert_int_eq(l->ntparams, 1);
  ck_assert_str_eq(l->tparams[0]->name, "A");
  ck_assert_int_eq(l->nctors, 2);
  ck_assert(l->has_body);
  ck_assert(!l->is_extern);
  ck_assert_str_eq(l->ctors[0]->name, "Cons");
  ck_assert_uint_eq(l->ctors[0]->tag, 0);
  ck_assert_ptr_eq(l->ctors[0]->owner, l);
  ck_assert_uint_eq(l->ctors[0]->nfields, 2);
  Buf b = {.n = 0};
  sx_types(&b, l->ctors[0]->fields, 2);
  ck_assert_str_eq(b.s, "A, List[A]");
  ck_assert_str_eq(l->ctors[1]->name, "Nil");
  ck_assert_uint_eq(l->ctors[1]->tag, 1);
  ck_assert_uint_eq(l->ctors[1]->nfields, 0);
  ck_assert_str_eq(P->m->types[1]->name, "Storage");
  ck_assert(P->m->types[1]->is_extern);
  ck_assert(!P->m->types[1]->has_body);
  ck_assert(P->m->types[2]->has_body);
  ck_assert_int_eq(P->m->types[2]->nctors, 0);
  ck_assert(!P->m->types[3]->has_body);
  ck_assert_int_eq(P->m->types[4]->nctors, 2);
  done(P);
  check_fails(HDR "extern type S { C }", false, "an extern type cannot have constructors");
  check_fails(HDR "type T { C(int32 }", false, "found \"}\"");
}
END_TEST

START_TEST(test_attr_values) {
  check_expr("f(a=1, b=2i64, c=0.5f, d=True, e=\"NHWC\", g=None, h=nullptr, i=[1, [2, 3], []], "
             "j=meta[K][1], k=(4), l=?, m=%x, n=nn.relu, o=-1, p=[?, 2], q=1f64, r=@g, s=%0)",
             "(call f | a=1 b=2:int64 c=0.5f d=True e=\"NHWC\" g=None h=None i=[1 [2 3] []] "
             "j=meta[K][1] k=4 l=? m=expr:%x n=expr:nn.relu o=-1 p=[? 2] q=1f64 r=expr:@g s=expr:%0)");
  check_expr("f(s=\"a\\\"b\")", "(call f | s=\"a\"b\")");
  check_expr("f(x=fn () { 0 })", "(call f | x=expr:(fn () 0))");
  check_expr("f(a=[1, 2 3])", "(call f | a=[1 2 3])");
  check_fails("f(a=(1, 2))", true, "expected \")\", found \",\"");
  check_fails("f(a=)", true, "expected attribute value, found \")\"");
}
END_TEST

START_TEST(test_comma_leniency) {
  check_expr("f(%a, %b %c)", "(call f %a %b %c)");
  check_expr("(1, 2 3)", "(tuple 1 2 3)");
  check_expr("f(%a, %b (%c))", "(call f %a (call %b %c))"); /* `(` continues a call */
  check_expr("fn [A, B C](%x, %y %z) { 0 }", "(fn [A, B, C] (%x %y %z) 0)");
  check_expr("match (%x) { A => 1, B => 2 C => 3 }", "(match %x [A => 1] [B => 2] [C => 3])");
  check_expr("match (%x) { C(%a, %b %c) => 1 }", "(match %x [C(%a, %b, %c) => 1])");
  check_type("Tensor[(1, 2 3), float32]", "Tensor[(1, 2, 3), float32]");
  Parsed *P = pmod(HDR "type T { A, B C }");
  ck_assert_int_eq(P->nerrors, 0);
  ck_assert_int_eq(P->m->types[0]->nctors, 3);
  done(P);
  /* no leniency before the first separator */
  check_fails("f(%a %b)", true, "expected \")\" or \",\", found local variable \"%b\"");
}
END_TEST

START_TEST(test_error_recovery) {
  Parsed *P = pmod(HDR "def @a() { 1 + }\n"
                   "def @b() { 2 }\n"
                   "def @c() { f(, ) }\n"
                   "def @d() { let %x = (1 2); %x }\n"
                   "def @e() { 3 }\n");
  ck_assert_msg(P->nerrors == 3, "%d errors:\n%s", P->nerrors, P->diag);
  ck_assert_int_eq(P->m->ndefs, 5);
  ck_assert_str_eq(P->m->defs[1]->name, "b");
  ck_assert_str_eq(P->m->defs[4]->name, "e");
  ck_assert_int_eq(P->m->defs[4]->fn->body->kind, EXPR_CONST);
  done(P);
  /* several errors inside one body, resynchronised at `;` */
  P = pmod(HDR "def @f() { let %x = 1 +; let %y = ); %0 = f(%x +); 4 }\ndef @g() { 0 }");
  ck_assert_msg(P->nerrors == 3, "%d errors:\n%s", P->nerrors, P->diag);
  ck_assert_int_eq(P->m->ndefs, 2);
  done(P);
  /* top-level junk: recovery at the next `}` */
  P = pmod(HDR "junk junk } def @f() { 0 } 1 2 } def @g() { 0 }");
  ck_assert_int_eq(P->nerrors, 2);
  ck_assert_int_eq(P->m->ndefs, 2);
  done(P);
  /* the error cap of Diag limits the report; parsing still finishes */
  char text[4096] = HDR;
  for (int i = 0; i < 60; i++) strcat(text, "def @f() { 1 + } ");
  P = parse_n(text, strlen(text), false, 5);
  ck_assert_int_ge(P->nerrors, 6);
  ck_assert(strstr(P->diag, "too many errors"));
  done(P);
}
END_TEST

START_TEST(test_diagnostic_text) {
  Parsed *P = pmod(HDR "def @f(%x) {\n  add(%x let)\n}\n");
  ck_assert_int_eq(P->nerrors, 1);
  check_diag(P->diag, "t.relay:3:10: error: expected \")\" or \",\", found \"let\"", "  add(%x let)", 10, 3);
  done(P);
  P = pmod(HDR "def @f() {\n  let %x = 1 2; %x\n}\n");
  ck_assert_int_eq(P->nerrors, 1);
  check_diag(P->diag, "t.relay:3:14: error: expected \";\", found integer \"2\"", "  let %x = 1 2; %x", 14, 1);
  done(P);
  P = pmod(HDR "def @f() { (1, 2 }");
  ck_assert_int_eq(P->nerrors, 1);
  check_diag(P->diag, "t.relay:2:18: error: expected expression, \")\" or \",\", found \"}\"",
             "def @f() { (1, 2 }", 18, 1);
  done(P);
  P = pmod(HDR "def @f(%x: Tensor[(1), float32) { %x }");
  ck_assert_int_eq(P->nerrors, 1);
  check_diag(P->diag, "t.relay:2:31: error: expected \"]\", found \")\"",
             "def @f(%x: Tensor[(1), float32) { %x }", 31, 1);
  done(P);
  P = pmod(HDR "def @f() { nn.conv2d(%x, 1e3) }");
  ck_assert_int_eq(P->nerrors, 1);
  check_diag(P->diag, "t.relay:2:26: error: invalid integer literal \"1e3\" (float literals need an f suffix, e.g. 1.5f)",
             "def @f() { nn.conv2d(%x, 1e3) }", 26, 3);
  done(P);
}
END_TEST

START_TEST(test_metadata_section) {
  static const char json[] =
      "{\n  \"root\": 1, \n  \"nodes\": [\n    {\n      \"type_key\": \"\"\n    }, \n    {\n"
      "      \"type_key\": \"Map\", \n      \"keys\": [\n        \"relay.Constant\"\n      ], \n"
      "      \"data\": [2]\n    }, \n    {\n      \"type_key\": \"Array\", \n      \"data\": [3]\n"
      "    }, \n    {\n      \"type_key\": \"relay.Constant\", \n      \"attrs\": {\n"
      "        \"_checked_type_\": \"0\", \n        \"data\": \"0\", \n        \"span\": \"0\", \n"
      "        \"virtual_device_\": \"0\"\n      }\n    }\n  ], \n  \"b64ndarrays\": [\n"
      "    \"P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAACAPwAAAEA=\"\n"
      "  ], \n  \"attrs\": {\"tvm_version\": \"0.20.dev0\"}\n}";
  char text[4096];
  snprintf(text, sizeof text,
           HDR "def @main(%%x: Tensor[(2), float32]) {\n  add(%%x, meta[relay.Constant][0])\n}\n\n"
               "#[metadata]\n%s", json);
  Parsed *P = pmod(text);
  ck_assert_msg(P->nerrors == 0, "%s", P->diag);
  ck_assert(P->m->has_metadata);
  ck_assert_uint_eq(P->m->meta_offset, (uint32_t)(strstr(text, "#[metadata]") - text + 11));
  ck_assert_int_eq(P->m->ndefs, 1);
  ck_assert_uint_eq(P->m->nmeta_consts, 1);
  done(P);
  P = pmod(HDR "def @f() { 0 }");
  ck_assert(!P->m->has_metadata);
  done(P);
  /* a metadata marker in the middle of a definition ends the token stream */
  check_fails(HDR "def @f() { #[metadata] {} }", false, "found \"#[metadata]\"");
  check_fails(HDR "def @f() { 0 }\n#[metadata]\n{ not json", false, "t.relay:4:3: error: invalid JSON");
}
END_TEST

START_TEST(test_garbage) {
  srand(42);
  for (int round = 0; round < 300; round++) {
    char buf[400];
    size_t n = (size_t)(rand() % 400);
    for (size_t i = 0; i < n; i++) buf[i] = (char)(rand() % 256);
    done(parse_n(buf, n, round & 1, 20));
  }
  /* token soup: valid tokens in random order */
  static const char *const toks[] = {
      "def", "@f", "(", ")", "{", "}", "[", "]", "%x", "%0", "=", ";", ",", "let", "fn", "if",
      "else", "match", "=>", "_", "1", "2f", "Tensor", "float32", "List", ".", "0", ":", "-", ">",
      "type", "extern", "free_var", "ref", "meta[K][0]", "\"s\"", "?", "+", "*", "==", "match?",
      "#[version = \"0.0.5\"]", "#[metadata]", "nn", "a=", "None", "True"};
  const int ntoks = (int)(sizeof toks / sizeof toks[0]);
  for (int round = 0; round < 2000; round++) {
    char buf[1024] = "";
    if (round & 2) strcat(buf, HDR);
    int n = rand() % 60;
    for (int i = 0; i < n; i++) {
      strcat(buf, toks[rand() % ntoks]);
      strcat(buf, " ");
    }
    done(parse_n(buf, strlen(buf), round & 1, 20));
  }
}
END_TEST

static const char sample[] =
    HDR "type List[A] { Cons(A, List[A]), Nil }\n"
        "extern type Storage\n"
        "def @len[A](%l: List[A]) -> int32 {\n"
        "  match (%l) { Cons(_, %rest) => 1 + @len(%rest), Nil => 0 }\n"
        "}\n"
        "def @main(%x: Tensor[(1, 4), float32], %c: bool, %y {virtual_device=meta[V][0]}: (int32,)) {\n"
        "  %0 = fn (%p: Tensor[(1, ?), float32], Primitive=1) -> Tensor[(1, 4), float32] {\n"
        "    nn.softmax(%p, axis=1, s=\"q\\\"\", a=[1, [2]], n=None)\n"
        "  };\n"
        "  let %t: (Tensor[(1, 4), float32], int32) = (%x, 1i64);\n"
        "  free_var %z: fn [B](B) -> ref(B);\n"
        "  %1 = %0(%x) /* c */ ; // line\n"
        "  ref_write(ref(1), 2.5f16);\n"
        "  if (%c) { %t.0 } else { match? (%y) { (%q) => %1 * 2f + -inff, } }\n"
        "}\n"
        "#[metadata]\n{\"root\": 1}";

START_TEST(test_sample_and_every_cut) {
  Parsed *P = pmod(sample);
  /* the metadata JSON is not a valid document (no nodes): one metadata error at most */
  ck_assert_msg(P->nerrors <= 1, "%s", P->diag);
  ck_assert_int_eq(P->m->ndefs, 2);
  ck_assert_int_eq(P->m->ntypes, 2);
  done(P);
  size_t n = strlen(sample);
  for (size_t i = 0; i < n; i++) done(parse_n(sample, i, false, 20));
  for (size_t i = 0; i < n; i += 3) done(parse_n(sample + i, n - i, true, 20));
}
END_TEST

/* Builds "prefix" + rep(a, n) + mid + rep(b, n) + suffix in a fresh buffer. */
static char *nest(const char *prefix, const char *a, const char *mid, const char *b,
                  const char *suffix, int n, size_t *len) {
  size_t la = strlen(a), lb = strlen(b);
  size_t cap = strlen(prefix) + (la + lb) * (size_t)n + strlen(mid) + strlen(suffix) + 1;
  char *s = malloc(cap), *w = s;
  w = stpcpy(w, prefix);
  for (int i = 0; i < n; i++) w = stpcpy(w, a);
  w = stpcpy(w, mid);
  for (int i = 0; i < n; i++) w = stpcpy(w, b);
  w = stpcpy(w, suffix);
  *len = (size_t)(w - s);
  return s;
}

START_TEST(test_deep_nesting) {
  size_t len;
  /* 10,000 nested parentheses */
  char *s = nest(HDR "def @f() { ", "(", "1", ")", " }", 10000, &len);
  Parsed *P = parse_n(s, len, false, 20);
  ck_assert_int_eq(P->nerrors, 0);
  ck_assert_int_eq(P->m->defs[0]->fn->body->kind, EXPR_CONST);
  done(P);
  free(s);
  /* 10,000 nested tuples */
  s = nest("", "(1, ", "2", ")", "", 10000, &len);
  P = parse_n(s, len, true, 20);
  ck_assert_int_eq(P->nerrors, 0);
  const Expr *e = P->m->expr;
  int depth = 0;
  while (e->kind == EXPR_TUPLE) { e = e->tuple.fields[1]; depth++; }
  ck_assert_int_eq(depth, 10000);
  done(P);
  free(s);
  /* 10,000 lets nested in values: let %x = (let %x = (... 1 ...); %x); %x */
  s = nest("", "let %x = (", "1", "); %x", "", 10000, &len);
  P = parse_n(s, len, true, 20);
  ck_assert_int_eq(P->nerrors, 0);
  done(P);
  free(s);
  /* 10,000 nested calls and blocks */
  s = nest("", "f({", "1", "})", "", 10000, &len);
  P = parse_n(s, len, true, 20);
  ck_assert_int_eq(P->nerrors, 0);
  done(P);
  free(s);
}
END_TEST

START_TEST(test_long_chains) {
  /* 100,000 graph bindings and 10,000 sequential lets parse with a shallow stack */
  enum { N = 100000 };
  size_t cap = 64 + (size_t)N * 40;
  char *s = malloc(cap), *w = s;
  w = stpcpy(w, HDR "def @main(%x: float32) {\n  %0 = add(%x, %x);\n");
  for (int i = 1; i < N; i++) w += sprintf(w, "  %%%d = add(%%%d, %%x);\n", i, i - 1);
  w += sprintf(w, "  %%%d\n}\n", N - 1);
  Parsed *P = parse_n(s, (size_t)(w - s), false, 20);
  ck_assert_int_eq(P->nerrors, 0);
  const Expr *e = P->m->defs[0]->fn->body;
  uint32_t count = 0;
  while (e->kind == EXPR_GRAPH_BIND) {
    ck_assert_uint_eq(e->graph_bind.num, count);
    e = e->graph_bind.body;
    count++;
  }
  ck_assert_uint_eq(count, N);
  ck_assert_int_eq(e->kind, EXPR_GRAPH_REF);
  done(P);
  w = s;
  for (int i = 0; i < 10000; i++) w += sprintf(w, "let %%x%d = %d; ", i, i);
  w = stpcpy(w, "%x0");
  P = parse_n(s, (size_t)(w - s), true, 20);
  ck_assert_int_eq(P->nerrors, 0);
  e = P->m->expr;
  count = 0;
  while (e->kind == EXPR_LET) { e = e->let.body; count++; }
  ck_assert_uint_eq(count, 10000);
  done(P);
  /* long infix chains and long dotted names */
  w = s;
  for (int i = 0; i < 100000; i++) w = stpcpy(w, "1 + ");
  w = stpcpy(w, "1");
  P = parse_n(s, (size_t)(w - s), true, 20);
  ck_assert_int_eq(P->nerrors, 0);
  done(P);
  w = s;
  for (int i = 0; i < 100000; i++) w = stpcpy(w, "a . ");
  w = stpcpy(w, "b");
  P = parse_n(s, (size_t)(w - s), true, 20);
  ck_assert_int_eq(P->nerrors, 0);
  ck_assert_uint_eq(strlen(P->m->expr->name.name), 200001);
  done(P);
  free(s);
}
END_TEST

static Suite *parser_suite(void) {
  Suite *s = suite_create("parser");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_empty_and_header);
  tcase_add_test(tc, test_literals);
  tcase_add_test(tc, test_precedence);
  tcase_add_test(tc, test_calls);
  tcase_add_test(tc, test_tuples_and_projection);
  tcase_add_test(tc, test_bindings);
  tcase_add_test(tc, test_functions);
  tcase_add_test(tc, test_if_match_refs);
  tcase_add_test(tc, test_types);
  tcase_add_test(tc, test_type_defs);
  tcase_add_test(tc, test_attr_values);
  tcase_add_test(tc, test_comma_leniency);
  tcase_add_test(tc, test_error_recovery);
  tcase_add_test(tc, test_diagnostic_text);
  tcase_add_test(tc, test_metadata_section);
  tcase_add_test(tc, test_garbage);
  tcase_add_test(tc, test_sample_and_every_cut);
  tcase_add_test(tc, test_deep_nesting);
  tcase_add_test(tc, test_long_chains);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(parser_suite());
}
