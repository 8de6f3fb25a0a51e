/* tests/unit/check_resolve.c — Check suite for sema/resolve (name resolution).
 *
 * Two kinds of cases: trees built by hand (independent of the parser: the
 * seed shadowing example, graph sharing, constructors, metadata, a
 * 100,000-binding chain) and texts run through parse_module/parse_expression
 * then resolve, with the exact diagnostic text and position pinned.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ast.h"
#include "ir/mem.h"
#include "ops/registry.h"
#include "parser/parser.h"
#include "sema/resolve.h"
#include "tests/unit/unit_run.h"

/* ------------------------------------------------------------ fixture */

static Source *src;
static Module *m;
static Diag d;
static FILE *diag_out;
static char *diag_buf;
static size_t diag_len;

static void setup(void) {
  stack_guard_init(8u << 20);
  src = NULL;
  m = NULL;
  diag_buf = NULL;
  diag_out = open_memstream(&diag_buf, &diag_len);
}

static void teardown(void) {
  if (diag_out) fclose(diag_out);
  free(diag_buf);
  module_free(m);
  source_free(src);
}

/* Everything reported so far, as text. */
static const char *diags(void) {
  fflush(diag_out);
  return diag_buf ? diag_buf : "";
}

#define ck_diag_has(s) ck_assert_msg(strstr(diags(), (s)) != NULL, "missing <%s> in:\n%s", (s), diags())

/* A module over `text` for hand-built trees (spans index into the text). */
static void hand_module(const char *text) {
  src = source_new("t.relay", mem_strdup(text), strlen(text));
  m = module_new(src);
  diag_init(&d, diag_out, src);
  d.max_errors = 0;
}

/* Parses a module (or a bare expression) and resolves it. */
static bool resolve_text(const char *text, bool expression) {
  src = source_new("t.relay", mem_strdup(text), strlen(text));
  diag_init(&d, diag_out, src);
  d.max_errors = 0;
  m = expression ? parse_expression(src, &d) : parse_module(src, &d);
  ck_assert_msg(d.nerrors == 0, "parse failed:\n%s", diags());
  return expression ? resolve_expression(m, &d) : resolve_module(m, &d);
}

/* ------------------------------------------------------ tree builders */

static Span S(uint32_t lo, uint32_t hi) { return span_make(lo, hi); }

static Expr *use(const char *name, Span sp) {
  Expr *e = expr_new(m, EXPR_VAR, sp);
  e->var.name = name;
  return e;
}

static Expr *name(const char *n, Span sp) {
  Expr *e = expr_new(m, EXPR_NAME, sp);
  e->name.name = n;
  return e;
}

static Expr *call(Expr *fn, uint32_t n, ...) {
  Expr *args[8];
  va_list ap;
  va_start(ap, n);
  for (uint32_t i = 0; i < n; i++) args[i] = va_arg(ap, Expr *);
  va_end(ap);
  return expr_call(m, fn, args, n, NULL, fn->span);
}

static Expr *op2(const char *op, Expr *a, Expr *b) { return call(name(op, a->span), 2, a, b); }

static Expr *let(Var *v, Expr *value, Expr *body) {
  Expr *e = expr_new(m, EXPR_LET, v->span);
  e->let.var = v;
  e->let.value = value;
  e->let.body = body;
  return e;
}

static Expr *gbind(uint32_t num, Expr *value, Expr *body, Span sp) {
  Expr *e = expr_new(m, EXPR_GRAPH_BIND, sp);
  e->graph_bind.num = num;
  e->graph_bind.value = value;
  e->graph_bind.body = body;
  return e;
}

static Expr *gref(uint32_t num, Span sp) {
  Expr *e = expr_new(m, EXPR_GRAPH_REF, sp);
  e->graph_ref.num = num;
  return e;
}

static Expr *i32(int64_t v) { return expr_scalar_int(m, DT_I32, v, S(0, 0)); }

/* ------------------------------------------------------- hand-built trees */

/* let %a = 1; let %b = 2 * %a; let %a = %a + %a; %a + %b */
START_TEST(hand_seed_shadowing) {
  hand_module("let %a = 1; let %b = 2 * %a; let %a = %a + %a; %a + %b");
  Var *a1 = var_new(m, "a", S(4, 6), NULL), *b = var_new(m, "b", S(16, 18), NULL);
  Var *a2 = var_new(m, "a", S(33, 35), NULL);
  Expr *last = op2("add", use("a", S(47, 49)), use("b", S(52, 54)));
  Expr *va2 = op2("add", use("a", S(38, 40)), use("a", S(43, 45)));
  Expr *vb = op2("multiply", i32(2), use("a", S(25, 27)));
  m->expr = let(a1, i32(1), let(b, vb, let(a2, va2, last)));
  ck_assert(resolve_expression(m, &d));
  ck_assert_ptr_eq(vb->call.args[1]->var.var, a1);
  ck_assert_ptr_eq(va2->call.args[0]->var.var, a1);
  ck_assert_ptr_eq(va2->call.args[1]->var.var, a1);
  ck_assert_ptr_eq(last->call.args[0]->var.var, a2);
  ck_assert_ptr_eq(last->call.args[1]->var.var, b);
  ck_assert_int_eq(last->call.fn->kind, EXPR_OP);
  ck_assert_int_eq(last->call.fn->op.id, op_lookup("add"));
  ck_assert_int_eq(d.nwarnings, 0); /* silent: relayc's lexical rule, no warning */
}
END_TEST

/* %0 = add(%x, %x); multiply(%0, %0) with %x a free variable */
START_TEST(hand_graph_sharing) {
  hand_module("%0 = add(%x, %x); multiply(%0, %0)");
  Var *x = var_new(m, "x", S(0, 0), NULL);
  Expr *add = op2("add", use("x", S(9, 11)), use("x", S(13, 15)));
  Expr *mul = op2("multiply", gref(0, S(27, 29)), gref(0, S(31, 33)));
  Expr *fv = expr_new(m, EXPR_FREE_VAR, S(0, 0));
  fv->free_var.var = x;
  fv->free_var.body = gbind(0, add, mul, S(0, 17));
  m->expr = fv;
  ck_assert(resolve_expression(m, &d));
  ck_assert_ptr_eq(m->expr, mul);
  ck_assert_ptr_eq(mul->call.args[0], add);
  ck_assert_ptr_eq(mul->call.args[1], add);
  ck_assert_ptr_eq(add->call.args[0]->var.var, x);
  ck_assert(x->is_free);
}
END_TEST

START_TEST(hand_graph_errors) {
  hand_module("%0 = 1; %0 = 2; %3");
  m->expr = gbind(0, i32(1), gbind(0, i32(2), gref(3, S(16, 18)), S(8, 15)), S(0, 7));
  ck_assert(!resolve_expression(m, &d));
  ck_diag_has("t.relay:1:9: error: graph variable %0 is already bound\n");
  ck_diag_has("t.relay:1:1: note: %0 is first bound here\n");
  ck_diag_has("t.relay:1:17: error: graph variable %3 is not bound\n");
  ck_assert_int_eq(d.nerrors, 2);
}
END_TEST

/* A chain of 100,000 lets (and graph bindings) must not recurse per binding. */
START_TEST(hand_long_chain) {
  hand_module("x");
  enum { N = 100000 };
  Var *first = var_new(m, "v", S(0, 1), NULL);
  Expr *root = let(first, i32(0), NULL), *tail = root;
  for (uint32_t i = 1; i < N; i++) {
    Expr *next;
    if (i % 2) {
      next = gbind(i, op2("add", use("v", S(0, 1)), i32(1)), NULL, S(0, 1));
      tail->kind == EXPR_LET ? (tail->let.body = next) : (tail->graph_bind.body = next);
    } else {
      Var *v = var_new(m, "v", S(0, 1), NULL);
      next = let(v, op2("add", gref(i - 1, S(0, 1)), use("v", S(0, 1))), NULL);
      tail->kind == EXPR_LET ? (tail->let.body = next) : (tail->graph_bind.body = next);
    }
    tail = next;
  }
  Expr *end = use("v", S(0, 1));
  tail->let.body = end;
  m->expr = root;
  ck_assert(resolve_expression(m, &d));
  ck_assert_int_eq(d.nwarnings, 0);
  /* the let chain survives, graph bindings are gone */
  uint32_t lets = 0;
  Expr *e = m->expr;
  while (e->kind == EXPR_LET) lets++, e = e->let.body;
  ck_assert_uint_eq(lets, N / 2);
  ck_assert_ptr_eq(e, end);
  ck_assert_ptr_nonnull(end->var.var);
}
END_TEST

static TypeDef *list_type(void) {
  TypeDef *td = arena_alloc(m->arena, sizeof *td);
  td->name = "List";
  td->span = S(0, 4);
  td->tparams = arena_alloc(m->arena, sizeof(TypeParam *));
  td->tparams[0] = type_param_new(m, "A", S(0, 1));
  td->ntparams = 1;
  td->nctors = 2;
  td->ctors = arena_alloc(m->arena, 2 * sizeof(Ctor *));
  Ctor *cons = arena_alloc(m->arena, sizeof *cons), *nil = arena_alloc(m->arena, sizeof *nil);
  cons->name = "Cons";
  cons->nfields = 2;
  cons->fields = arena_alloc(m->arena, 2 * sizeof(Type *));
  cons->fields[0] = type_new(m, TYPE_NAME, S(0, 1));
  cons->fields[0]->name.name = "A";
  cons->fields[1] = type_new(m, TYPE_NAME, S(0, 1));
  cons->fields[1]->name.name = "List";
  cons->fields[1]->name.nargs = 1;
  cons->fields[1]->name.args = arena_alloc(m->arena, sizeof(Type *));
  cons->fields[1]->name.args[0] = type_new(m, TYPE_NAME, S(0, 1));
  cons->fields[1]->name.args[0]->name.name = "A";
  nil->name = "Nil";
  td->ctors[0] = cons, td->ctors[1] = nil;
  cons->owner = nil->owner = td;
  nil->tag = 1;
  m->types = arena_alloc(m->arena, sizeof(TypeDef *));
  m->types[0] = td;
  m->ntypes = 1;
  return td;
}

/* (Nil, Nil(), Cons) */
START_TEST(hand_ctor_forms) {
  hand_module("(Nil, Nil(), Cons)");
  TypeDef *td = list_type();
  Expr *t = expr_new(m, EXPR_TUPLE, S(0, 18));
  t->tuple.n = 3;
  t->tuple.fields = arena_alloc(m->arena, 3 * sizeof(Expr *));
  Expr *nil_called = call(name("Nil", S(6, 9)), 0);
  t->tuple.fields[0] = name("Nil", S(1, 4));
  t->tuple.fields[1] = nil_called;
  t->tuple.fields[2] = name("Cons", S(13, 17));
  m->expr = t;
  ck_assert_msg(resolve_expression(m, &d), "%s", diags());
  Expr *f0 = t->tuple.fields[0];
  ck_assert_int_eq(f0->kind, EXPR_CALL);
  ck_assert_uint_eq(f0->call.nargs, 0);
  ck_assert_int_eq(f0->call.fn->kind, EXPR_CTOR);
  ck_assert_ptr_eq(f0->call.fn->ctor.ctor, td->ctors[1]);
  ck_assert_ptr_eq(t->tuple.fields[1], nil_called);
  ck_assert_int_eq(nil_called->call.fn->kind, EXPR_CTOR);
  ck_assert_int_eq(t->tuple.fields[2]->kind, EXPR_CTOR);
  ck_assert_ptr_eq(t->tuple.fields[2]->ctor.ctor, td->ctors[0]);
  /* field types: A is the type parameter, List[A] the ADT */
  Type *f1 = td->ctors[0]->fields[0], *f2 = td->ctors[0]->fields[1];
  ck_assert_int_eq(f1->kind, TYPE_VAR);
  ck_assert_ptr_eq(f1->var.param, td->tparams[0]);
  ck_assert_int_eq(f2->kind, TYPE_ADT);
  ck_assert_ptr_eq(f2->adt.def, td);
  ck_assert_int_eq(f2->adt.args[0]->kind, TYPE_VAR);
}
END_TEST

static Expr *meta(const char *key, uint32_t idx, Span sp) {
  Expr *e = expr_new(m, EXPR_META, sp);
  e->meta.key = key;
  e->meta.index = idx;
  return e;
}

static Expr *tuple(uint32_t n, ...) {
  Expr *t = expr_new(m, EXPR_TUPLE, S(0, 0));
  t->tuple.n = n;
  t->tuple.fields = arena_alloc(m->arena, (n ? n : 1) * sizeof(Expr *));
  va_list ap;
  va_start(ap, n);
  for (uint32_t i = 0; i < n; i++) t->tuple.fields[i] = va_arg(ap, Expr *);
  va_end(ap);
  return t;
}

/* A metadata section with two constants and one attribute object. */
static void fake_metadata(void) {
  m->has_metadata = true;
  m->nmeta_keys = 3;
  m->meta_keys = arena_alloc(m->arena, 3 * sizeof(MetaKey));
  m->meta_keys[0] = (MetaKey){"relay.Constant", 2};
  m->meta_keys[1] = (MetaKey){"relay.attrs.Conv2DAttrs", 1};
  m->meta_keys[2] = (MetaKey){"tir.SizeVar", 1};
  m->nmeta_consts = 2;
  m->meta_consts = arena_alloc(m->arena, 2 * sizeof(ConstTensor *));
  for (int i = 0; i < 2; i++) {
    m->meta_consts[i] = expr_scalar_int(m, DT_I32, i, S(0, 0))->constant;
    m->meta_consts[i]->meta_index = i;
  }
}

START_TEST(hand_meta_shared) {
  hand_module("(meta[relay.Constant][1], meta[relay.Constant][1], meta[relay.Constant][0])");
  fake_metadata();
  Expr *t = tuple(3, meta("relay.Constant", 1, S(1, 24)), meta("relay.Constant", 1, S(26, 49)),
                  meta("relay.Constant", 0, S(51, 74)));
  m->expr = t;
  ck_assert_msg(resolve_expression(m, &d), "%s", diags());
  ck_assert_int_eq(t->tuple.fields[0]->kind, EXPR_CONST);
  ck_assert_ptr_eq(t->tuple.fields[0], t->tuple.fields[1]);
  ck_assert_ptr_eq(t->tuple.fields[0]->constant, m->meta_consts[1]);
  ck_assert_ptr_eq(t->tuple.fields[2]->constant, m->meta_consts[0]);
}
END_TEST

START_TEST(hand_meta_errors) {
  hand_module("(meta[relay.Constant][2], meta[relay.Constnt][0], meta[relay.attrs.Conv2DAttrs][0])");
  fake_metadata();
  m->expr = tuple(3, meta("relay.Constant", 2, S(1, 24)), meta("relay.Constnt", 0, S(26, 48)),
                  meta("relay.attrs.Conv2DAttrs", 0, S(50, 82)));
  ck_assert(!resolve_expression(m, &d));
  ck_diag_has("t.relay:1:2: error: meta[relay.Constant][2] is out of range: the metadata section "
              "has 2 relay.Constant entries\n");
  ck_diag_has("t.relay:1:27: error: the metadata section has no key \"relay.Constnt\"\n");
  ck_diag_has("t.relay:1:27: note: did you mean \"relay.Constant\"?\n");
  ck_diag_has("t.relay:1:51: error: meta[relay.attrs.Conv2DAttrs][0] cannot be used as an "
              "expression: only meta[relay.Constant][i] entries are supported\n");
  ck_assert_int_eq(d.nerrors, 3);
}
END_TEST

START_TEST(hand_meta_no_section) {
  hand_module("meta[relay.Constant][0]");
  m->expr = meta("relay.Constant", 0, S(0, 23));
  ck_assert(!resolve_expression(m, &d));
  ck_diag_has("t.relay:1:1: error: meta[relay.Constant][0] used, but the text has no #[metadata] "
              "section\n");
}
END_TEST

/* meta references in dimensions and attribute values are range-checked too */
START_TEST(hand_meta_dims_attrs) {
  hand_module("fn (%x: Tensor[(meta[tir.SizeVar][1]), float32], a=meta[VirtualDevice][0]) { %x }");
  fake_metadata();
  Function *f = arena_alloc(m->arena, sizeof *f);
  Type *t = type_tensor(m, DT_F32, 1, (int64_t[]){0});
  t->span = S(8, 48);
  t->tensor.dims[0] = (Dim){DIM_SYM, DT_I32, 1};
  Var *x = var_new(m, "x", S(4, 6), t);
  f->params = arena_alloc(m->arena, sizeof(Var *));
  f->params[0] = x;
  f->nparams = 1;
  f->attrs = arena_alloc(m->arena, sizeof(Attrs));
  f->attrs->n = 1;
  f->attrs->items = arena_alloc(m->arena, sizeof(Attr));
  AttrValue *v = attr_value_new(m, AV_META, S(52, 76));
  v->meta.key = "VirtualDevice";
  f->attrs->items[0] = (Attr){"a", v, S(50, 76), false};
  f->body = use("x", S(80, 82));
  m->expr = expr_new(m, EXPR_FN, S(0, 84));
  m->expr->fn = f;
  ck_assert(!resolve_expression(m, &d));
  ck_diag_has("t.relay:1:9: error: meta[tir.SizeVar][1] is out of range: the metadata section has "
              "1 tir.SizeVar entry\n");
  ck_diag_has("t.relay:1:53: error: the metadata section has no key \"VirtualDevice\"\n");
  ck_assert_int_eq(d.nerrors, 2);
  ck_assert_ptr_eq(f->body->var.var, x);
}
END_TEST

/* A trailing meta[...] "attrs" argument that is not an attribute object is an argument. */
START_TEST(hand_meta_trailing_arg) {
  hand_module("add(%x, meta[relay.Constant][0])");
  fake_metadata();
  Var *x = var_new(m, "x", S(4, 6), NULL);
  Expr *c = call(name("add", S(0, 3)), 1, use("x", S(4, 6)));
  c->span = S(0, 32);
  c->call.attrs = arena_alloc(m->arena, sizeof(Attrs));
  c->call.attrs->meta_key = "relay.Constant";
  Expr *fv = expr_new(m, EXPR_FREE_VAR, S(0, 0));
  fv->free_var.var = x;
  fv->free_var.body = c;
  m->expr = fv;
  ck_assert_msg(resolve_expression(m, &d), "%s", diags());
  ck_assert_uint_eq(c->call.nargs, 2);
  ck_assert_int_eq(c->call.args[1]->kind, EXPR_CONST);
  ck_assert_ptr_eq(c->call.args[1]->constant, m->meta_consts[0]);
  ck_assert_uint_eq(c->call.args[1]->span.lo, 8);
  ck_assert_uint_eq(c->call.args[1]->span.hi, 31);
}
END_TEST

/* 1,000,000 nested one-tuples: reported, not a stack overflow. */
START_TEST(hand_too_deep) {
  hand_module("((((((((((");
  Expr *e = i32(1);
  for (int i = 0; i < 1000000; i++) e = tuple(1, e);
  m->expr = e;
  ck_assert(!resolve_expression(m, &d));
  ck_diag_has("error: expression nested too deeply\n");
  ck_assert_int_eq(d.nerrors, 1);
}
END_TEST

/* ------------------------------------------------------------ from text */

#define V "#[version = \"0.0.5\"]\n"
#define LIST "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n"

/* The body of the first def. */
static Expr *body0(void) { return m->defs[0]->fn->body; }

START_TEST(text_seed_shadowing) {
  ck_assert_msg(resolve_text("let %a = 1; let %b = 2 * %a; let %a = %a + %a; %a + %b", true), "%s",
                diags());
  Expr *l1 = m->expr, *l2 = l1->let.body, *l3 = l2->let.body, *last = l3->let.body;
  ck_assert_int_eq(l3->kind, EXPR_LET);
  ck_assert_ptr_eq(l2->let.value->call.args[1]->var.var, l1->let.var);
  ck_assert_ptr_eq(l3->let.value->call.args[0]->var.var, l1->let.var); /* the outer %a */
  ck_assert_ptr_eq(l3->let.value->call.args[1]->var.var, l1->let.var);
  ck_assert_ptr_eq(last->call.args[0]->var.var, l3->let.var);
  ck_assert_ptr_eq(last->call.args[1]->var.var, l2->let.var);
  ck_assert_int_eq(d.nwarnings, 0);
}
END_TEST

START_TEST(text_shadow_in_branch) {
  ck_assert_msg(resolve_text(V "def @f(%x: int32) {\n"
                               "  let %y = if (True) { let %x = 1; %x } else { %x };\n"
                               "  (%x, %y)\n"
                               "}\n",
                             false),
                "%s", diags());
  Var *param = m->defs[0]->fn->params[0];
  Expr *let_y = body0(), *ife = let_y->let.value;
  ck_assert_int_eq(ife->kind, EXPR_IF);
  Expr *inner = ife->if_.then_;
  ck_assert_int_eq(inner->kind, EXPR_LET);
  ck_assert_ptr_eq(inner->let.body->var.var, inner->let.var);
  ck_assert_ptr_ne(inner->let.var, param);
  ck_assert_ptr_eq(ife->if_.else_->var.var, param);
  Expr *tup = let_y->let.body;
  ck_assert_ptr_eq(tup->tuple.fields[0]->var.var, param); /* the branch's %x is gone */
  ck_assert_ptr_eq(tup->tuple.fields[1]->var.var, let_y->let.var);
}
END_TEST

/* relayc: a let hides a parameter of the same name even at the top of the body. */
START_TEST(text_shadow_same_scope) {
  ck_assert_msg(resolve_text(V "def @f(%x) { let %x = 1; %x }\n", false), "%s", diags());
  Expr *l = body0();
  ck_assert_ptr_eq(l->let.body->var.var, l->let.var);
  ck_assert_ptr_ne(l->let.var, m->defs[0]->fn->params[0]);
}
END_TEST

START_TEST(text_recursive_let) {
  ck_assert_msg(resolve_text(V "def @main() {\n"
                               "  let %fact = fn (%n: int32) -> int32 {\n"
                               "    if (%n == 0) { 1 } else { %n * %fact(%n - 1) }\n"
                               "  };\n"
                               "  %fact(5)\n"
                               "}\n",
                             false),
                "%s", diags());
  Expr *l = body0();
  Var *fact = l->let.var;
  Expr *ife = l->let.value->fn->body;
  Expr *rec = ife->if_.else_->call.args[1];
  ck_assert_int_eq(rec->kind, EXPR_CALL);
  ck_assert_ptr_eq(rec->call.fn->var.var, fact);
  ck_assert_ptr_eq(l->let.body->call.fn->var.var, fact);
  ck_assert_int_eq(d.nwarnings, 0);
}
END_TEST

START_TEST(text_let_value_not_recursive) {
  ck_assert(!resolve_text(V "def @main() {\n  let %a = add(%a, 1);\n  %a\n}\n", false));
  ck_diag_has("t.relay:3:16: error: unbound local variable %a\n");
  ck_diag_has("t.relay:3:7: note: a let variable is visible in its own value only when the value "
              "is a function\n");
}
END_TEST

START_TEST(text_graph_sharing) {
  ck_assert_msg(resolve_text(V "def @main(%x: float32) {\n"
                               "  %0 = add(%x, %x);\n"
                               "  multiply(%0, %0)\n"
                               "}\n",
                             false),
                "%s", diags());
  Expr *mul = body0();
  ck_assert_int_eq(mul->kind, EXPR_CALL);
  ck_assert_str_eq(mul->call.fn->op.name, "multiply");
  Expr *a = mul->call.args[0];
  ck_assert_ptr_eq(a, mul->call.args[1]);
  ck_assert_int_eq(a->kind, EXPR_CALL);
  ck_assert_int_eq(a->call.fn->op.id, op_lookup("add"));
  ck_assert_ptr_eq(a->call.args[0]->var.var, m->defs[0]->fn->params[0]);
}
END_TEST

/* A graph variable bound inside a branch stays usable after it (one table). */
START_TEST(text_graph_unscoped) {
  ck_assert_msg(resolve_text(V "def @main(%c: bool, %x: float32) {\n"
                               "  %1 = if (%c) { %0 = negative(%x); %0 } else { %x };\n"
                               "  add(%1, %0)\n"
                               "}\n",
                             false),
                "%s", diags());
  Expr *add = body0();
  Expr *ife = add->call.args[0];
  ck_assert_int_eq(ife->kind, EXPR_IF);
  ck_assert_ptr_eq(add->call.args[1], ife->if_.then_);
}
END_TEST

START_TEST(text_unbound_local) {
  ck_assert(!resolve_text(V "def @main(%x: float32) {\n  add(%x, %y)\n}\n", false));
  ck_diag_has("t.relay:3:11: error: unbound local variable %y\n");
  ck_diag_has("3 |   add(%x, %y)\n");
  ck_diag_has(" |           ^~\n");
  ck_diag_has("t.relay:2:11: note: did you mean %x?\n");
  ck_assert_int_eq(d.nerrors, 1);
}
END_TEST

/* A let inside a call argument does not leak into the next argument. */
START_TEST(text_let_in_argument) {
  ck_assert(!resolve_text(V "def @main() {\n  add((let %y = 1; %y), %y)\n}\n", false));
  ck_diag_has("t.relay:3:25: error: unbound local variable %y\n");
  ck_assert_int_eq(d.nerrors, 1);
}
END_TEST

START_TEST(text_graph_errors) {
  ck_assert(!resolve_text(V "def @main(%x: float32) {\n"
                            "  %0 = add(%x, %x);\n"
                            "  %0 = multiply(%x, %x);\n"
                            "  add(%0, %3)\n"
                            "}\n",
                          false));
  ck_diag_has("t.relay:4:3: error: graph variable %0 is already bound\n");
  ck_diag_has("t.relay:3:3: note: %0 is first bound here\n");
  ck_diag_has("t.relay:5:11: error: graph variable %3 is not bound\n");
  ck_assert_int_eq(d.nerrors, 2);
}
END_TEST

/* Sparse numbers (not near the count of bindings) work like dense ones. */
START_TEST(text_graph_sparse) {
  ck_assert(!resolve_text(V "def @main(%x: float32) {\n"
                            "  %4000000000 = add(%x, %x);\n"
                            "  %7 = negative(%4000000000);\n"
                            "  %4000000000 = %7;\n"
                            "  add(%7, %4000000000)\n"
                            "}\n",
                          false));
  ck_diag_has("t.relay:5:3: error: graph variable %4000000000 is already bound\n");
  ck_diag_has("t.relay:3:3: note: %4000000000 is first bound here\n");
  ck_assert_int_eq(d.nerrors, 1);
  Expr *add = body0();
  ck_assert_ptr_eq(add->call.args[0]->call.args[0], add->call.args[1]);
}
END_TEST

START_TEST(text_graph_self_reference) {
  ck_assert(!resolve_text(V "def @main(%x: float32) {\n  %0 = add(%0, %x);\n  %0\n}\n", false));
  ck_diag_has("t.relay:3:12: error: graph variable %0 is not bound\n");
}
END_TEST

START_TEST(text_duplicates) {
  ck_assert(!resolve_text(V "type T { A, B }\n"
                            "type U { C, A }\n"
                            "type T\n"
                            "def @f() { 1 }\n"
                            "def @f() { 2 }\n"
                            "def @g(%x, %y, %x) { %x }\n",
                          false));
  ck_diag_has("t.relay:3:13: error: duplicate constructor A\n");
  ck_diag_has("t.relay:2:10: note: A is first defined here, in type T\n");
  ck_diag_has("error: duplicate definition of type T\n");
  ck_diag_has("t.relay:6:5: error: duplicate definition of @f\n");
  ck_diag_has("t.relay:5:5: note: @f is first defined here\n");
  ck_diag_has("t.relay:7:16: error: parameter %x is bound twice\n");
  ck_diag_has("t.relay:7:8: note: %x is first bound here\n");
  ck_assert_int_eq(d.nerrors, 4);
}
END_TEST

START_TEST(text_globals) {
  ck_assert_msg(resolve_text(V "def @main() { @even(4) }\n"
                               "def @even(%n: int32) -> bool {\n"
                               "  if (%n == 0) { True } else { @odd(%n - 1) }\n"
                               "}\n"
                               "def @odd(%n: int32) -> bool {\n"
                               "  if (%n == 0) { False } else { @even(%n - 1) }\n"
                               "}\n",
                             false),
                "%s", diags());
  ck_assert_ptr_eq(body0()->call.fn->global.def, m->defs[1]);
  ck_assert_ptr_eq(module_find_def(m, "odd"), m->defs[2]);
  ck_assert_ptr_null(module_find_def(m, "nope"));
  Expr *rec = m->defs[1]->fn->body->if_.else_;
  ck_assert_ptr_eq(rec->call.fn->global.def, m->defs[2]);
}
END_TEST

START_TEST(text_undefined_global) {
  ck_assert(!resolve_text(V "def @helper() { 1 }\ndef @main() { @helpr() }\n", false));
  ck_diag_has("t.relay:3:15: error: undefined global @helpr\n");
  ck_diag_has("t.relay:2:5: note: did you mean @helper?\n");
}
END_TEST

START_TEST(text_ctor_forms) {
  ck_assert_msg(resolve_text(V LIST "def @main() { (Nil, Nil(), Cons, Cons(1, Nil)) }\n", false),
                "%s", diags());
  TypeDef *list = m->types[0];
  Expr *t = body0();
  ck_assert_int_eq(t->kind, EXPR_TUPLE);
  Expr *nil1 = t->tuple.fields[0], *nil2 = t->tuple.fields[1], *cons = t->tuple.fields[2];
  ck_assert_int_eq(nil1->kind, EXPR_CALL);
  ck_assert_uint_eq(nil1->call.nargs, 0);
  ck_assert_int_eq(nil1->call.fn->kind, EXPR_CTOR);
  ck_assert_ptr_eq(nil1->call.fn->ctor.ctor, list->ctors[1]);
  ck_assert_int_eq(nil2->kind, EXPR_CALL);
  ck_assert_int_eq(nil2->call.fn->kind, EXPR_CTOR);
  ck_assert_int_eq(cons->kind, EXPR_CTOR);
  ck_assert_ptr_eq(cons->ctor.ctor, list->ctors[0]);
  Expr *c2 = t->tuple.fields[3];
  ck_assert_int_eq(c2->call.args[1]->kind, EXPR_CALL);
  ck_assert_int_eq(c2->call.args[1]->call.fn->kind, EXPR_CTOR);
}
END_TEST

START_TEST(text_ctor_before_type) {
  ck_assert(!resolve_text(V "def @main() { Nil }\n"
                            "def @len(%l) { match (%l) { Cons(_, _) => 1, _ => 0 } }\n" LIST,
                          false));
  ck_diag_has("t.relay:2:15: error: constructor Nil is used before its type List is defined\n");
  ck_diag_has("t.relay:3:29: error: undefined constructor Cons\n");
  ck_diag_has("note: Cons belongs to type List, defined later; a constructor is usable only after "
              "its type definition\n");
  ck_assert_int_eq(d.nerrors, 2);
}
END_TEST

START_TEST(text_patterns) {
  ck_assert_msg(resolve_text(V LIST "def @head(%l: List[int32]) -> int32 {\n"
                                    "  match (%l) {\n"
                                    "    Cons(%h, _) => %h,\n"
                                    "    Nil => 0,\n"
                                    "  }\n"
                                    "}\n",
                             false),
                "%s", diags());
  Expr *mt = m->defs[0]->fn->body;
  ck_assert_int_eq(mt->kind, EXPR_MATCH);
  Clause *c0 = &mt->match.clauses[0];
  ck_assert_ptr_eq(c0->pattern->ctor.ctor, m->types[0]->ctors[0]);
  ck_assert_ptr_eq(c0->body->var.var, c0->pattern->ctor.args[0]->var);
  ck_assert_ptr_eq(mt->match.clauses[1].pattern->ctor.ctor, m->types[0]->ctors[1]);
  Type *annot = m->defs[0]->fn->params[0]->annot;
  ck_assert_int_eq(annot->kind, TYPE_ADT);
  ck_assert_ptr_eq(annot->adt.def, m->types[0]);
}
END_TEST

START_TEST(text_pattern_errors) {
  ck_assert(!resolve_text(V LIST "def @f(%l: List[int32]) {\n"
                                 "  match (%l) {\n"
                                 "    Cons(%h) => 1,\n"
                                 "    Cons(%x, %x) => 2,\n"
                                 "    Nill => 0,\n"
                                 "  }\n"
                                 "}\n",
                          false));
  ck_diag_has("t.relay:8:5: error: constructor Cons has 2 fields, but the pattern gives 1\n");
  ck_diag_has("t.relay:9:14: error: pattern variable %x is bound twice\n");
  ck_diag_has("t.relay:10:5: error: undefined constructor Nill\n");
  ck_diag_has("t.relay:4:3: note: did you mean Nil?\n");
  ck_assert_int_eq(d.nerrors, 3);
}
END_TEST

START_TEST(text_type_vars) {
  ck_assert_msg(resolve_text(V "type Box[B] { MkBox(B) }\n"
                               "def @id[A](%x: A, %b: Box[A]) -> A {\n"
                               "  let %g = fn [A](%y: A) -> A { %y };\n"
                               "  %x\n"
                               "}\n"
                               "def @later(%t: Tree) { %t }\n"
                               "type Tree { Leaf }\n",
                             false),
                "%s", diags());
  Function *f = m->defs[0]->fn;
  Type *ta = f->params[0]->annot, *tb = f->params[1]->annot;
  ck_assert_int_eq(ta->kind, TYPE_VAR);
  ck_assert_ptr_eq(ta->var.param, f->tparams[0]);
  ck_assert_int_eq(tb->kind, TYPE_ADT);
  ck_assert_ptr_eq(tb->adt.def, m->types[0]);
  ck_assert_ptr_eq(tb->adt.args[0]->var.param, f->tparams[0]);
  ck_assert_ptr_eq(f->ret_annot->var.param, f->tparams[0]);
  Function *g = f->body->let.value->fn; /* inner [A] hides the outer one */
  ck_assert_ptr_eq(g->params[0]->annot->var.param, g->tparams[0]);
  ck_assert_ptr_ne(g->tparams[0], f->tparams[0]);
  Type *field = m->types[0]->ctors[0]->fields[0];
  ck_assert_ptr_eq(field->var.param, m->types[0]->tparams[0]);
  Type *tree = m->defs[1]->fn->params[0]->annot; /* forward reference to a type */
  ck_assert_int_eq(tree->kind, TYPE_ADT);
  ck_assert_str_eq(tree->adt.def->name, "Tree");
}
END_TEST

START_TEST(text_unknown_type) {
  ck_assert(!resolve_text(V "type Box[B] { MkBox(B) }\ndef @f(%x: Bx[int32]) { %x }\n", false));
  ck_diag_has("t.relay:3:12: error: unknown type Bx\n");
  ck_diag_has("note: did you mean Box?\n");
}
END_TEST

START_TEST(text_unknown_op) {
  ck_assert(!resolve_text(V "def @f(%x, %w) { nn.conv2(%x, %w) }\n", false));
  ck_diag_has("t.relay:2:18: error: unknown operator \"nn.conv2\"\n");
  ck_diag_has("t.relay:2:18: note: did you mean \"nn.conv2d\"?\n");
}
END_TEST

START_TEST(text_op_attrs_normalized) {
  ck_assert_msg(resolve_text(V "def @f(%x, %w) { nn.conv2d(%x, %w, channels=8) }\n", false), "%s",
                diags());
  Expr *c = body0();
  const OpDef *op = op_get(c->call.fn->op.id);
  ck_assert_ptr_nonnull(c->call.attrs);
  ck_assert_uint_eq(c->call.attrs->n, op->nattrs);
}
END_TEST

START_TEST(text_free_var) {
  ck_assert_msg(resolve_text("free_var %x: float32;\n{ let %y = add(%x, %x); %y }\n", true), "%s",
                diags());
  Expr *l = m->expr;
  ck_assert_int_eq(l->kind, EXPR_LET);
  Var *x = l->let.value->call.args[0]->var.var;
  ck_assert(x->is_free);
  ck_assert_ptr_eq(l->let.value->call.args[1]->var.var, x);
}
END_TEST

#define META_ONE                                                                            \
  "#[metadata]\n{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", "      \
  "\"keys\": [\"relay.Constant\"], \"data\": [2]}, {\"type_key\": \"Array\", \"data\": [3]}, " \
  "{\"type_key\": \"relay.Constant\", \"attrs\": {\"_checked_type_\": \"0\", \"data\": \"0\", " \
  "\"span\": \"0\", \"virtual_device_\": \"0\"}}], \"b64ndarrays\": "                          \
  "[\"P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAACAPwAAAEA=\"], "      \
  "\"attrs\": {\"tvm_version\": \"0.20.dev0\"}}\n"

/* Two references to one metadata constant are one node; a trailing
 * meta[relay.Constant][i] is an argument, not call attributes. */
START_TEST(text_meta) {
  ck_assert_msg(resolve_text(V "def @main(%x: Tensor[(2), float32]) {\n"
                               "  %0 = add(%x, meta[relay.Constant][0]);\n"
                               "  multiply(%0, meta[relay.Constant][0])\n"
                               "}\n" META_ONE,
                             false),
                "%s", diags());
  Expr *mul = body0();
  ck_assert_uint_eq(mul->call.nargs, 2);
  Expr *c = mul->call.args[1];
  ck_assert_int_eq(c->kind, EXPR_CONST);
  ck_assert_ptr_eq(c->constant, m->meta_consts[0]);
  ck_assert_ptr_eq(mul->call.args[0]->call.args[1], c);
}
END_TEST

START_TEST(text_meta_errors) {
  ck_assert(!resolve_text(V "def @main(%x: Tensor[(2), float32]) {\n"
                            "  add(%x, meta[relay.Constant][1])\n"
                            "}\n" META_ONE,
                          false));
  ck_diag_has("t.relay:3:11: error: meta[relay.Constant][1] is out of range: the metadata section "
              "has 1 relay.Constant entry\n");
  ck_assert_int_eq(d.nerrors, 1);
}
END_TEST

/* An unquoted string attribute is read as an operator name (spec §3.6). */
START_TEST(text_attr_unquoted) {
  ck_assert(!resolve_text(V "def @f(%x, %w) { nn.conv2d(%x, %w, data_layout=NHWC) }\n", false));
  ck_diag_has("t.relay:2:48: error: unknown operator \"NHWC\"\n");
  ck_diag_has("note: a string attribute value must be quoted: \"NHWC\"\n");
}
END_TEST

/* %0 = add(%x, 1f); %1 = add(%0, 1f); ... 100,000 graph bindings, then lets. */
START_TEST(text_long_chain) {
  enum { N = 100000 };
  size_t cap = (size_t)N * 64 + 256, len = 0;
  char *text = mem_malloc(cap);
  len += (size_t)snprintf(text + len, cap - len, V "def @main(%%x: float32) {\n  %%0 = add(%%x, 1f);\n");
  for (int i = 1; i < N; i++)
    len += (size_t)snprintf(text + len, cap - len, "  %%%d = add(%%%d, 1f);\n", i, i - 1);
  for (int i = 0; i < N; i++) len += (size_t)snprintf(text + len, cap - len, "  let %%v = %%%d;\n", i);
  len += (size_t)snprintf(text + len, cap - len, "  %%v\n}\n");
  ck_assert_msg(resolve_text(text, false), "%s", diags());
  mem_free(text);
  Expr *e = body0();
  uint32_t lets = 0;
  while (e->kind == EXPR_LET) lets++, e = e->let.body;
  ck_assert_uint_eq(lets, N);
  ck_assert_int_eq(e->kind, EXPR_VAR);
}
END_TEST

/* The resolver notes the operator `gradient` (the driver walks the module for
 * gradient(F) calls only then): set by a call of it, or by it as a value. */
START_TEST(text_mentions_gradient) {
  ck_assert_msg(resolve_text(V "def @main(%x: float32) { add(%x, 1f) }", false), "%s", diags());
  ck_assert(!m->mentions_gradient);
  module_free(m), source_free(src);
  ck_assert_msg(resolve_text(V "def @f(%x: float32) { %x }\n"
                               "def @main(%x: float32) { gradient(@f)(%x) }", false), "%s", diags());
  ck_assert(m->mentions_gradient);
  module_free(m), source_free(src);
  ck_assert_msg(resolve_text(V "def @main() { gradient }", false), "%s", diags());
  ck_assert(m->mentions_gradient);
}
END_TEST

/* ----------------------------------------------------------------- suite */

static Suite *resolve_suite(void) {
  Suite *s = suite_create("resolve");
  TCase *hand = tcase_create("hand");
  tcase_add_checked_fixture(hand, setup, teardown);
  tcase_set_timeout(hand, 30);
  tcase_add_test(hand, hand_seed_shadowing);
  tcase_add_test(hand, hand_graph_sharing);
  tcase_add_test(hand, hand_graph_errors);
  tcase_add_test(hand, hand_long_chain);
  tcase_add_test(hand, hand_ctor_forms);
  tcase_add_test(hand, hand_meta_shared);
  tcase_add_test(hand, hand_meta_errors);
  tcase_add_test(hand, hand_meta_no_section);
  tcase_add_test(hand, hand_meta_dims_attrs);
  tcase_add_test(hand, hand_meta_trailing_arg);
  tcase_add_test(hand, hand_too_deep);
  suite_add_tcase(s, hand);
  TCase *text = tcase_create("text");
  tcase_add_checked_fixture(text, setup, teardown);
  tcase_set_timeout(text, 60);
  tcase_add_test(text, text_seed_shadowing);
  tcase_add_test(text, text_shadow_in_branch);
  tcase_add_test(text, text_shadow_same_scope);
  tcase_add_test(text, text_recursive_let);
  tcase_add_test(text, text_let_value_not_recursive);
  tcase_add_test(text, text_graph_sharing);
  tcase_add_test(text, text_graph_unscoped);
  tcase_add_test(text, text_unbound_local);
  tcase_add_test(text, text_let_in_argument);
  tcase_add_test(text, text_graph_errors);
  tcase_add_test(text, text_graph_sparse);
  tcase_add_test(text, text_graph_self_reference);
  tcase_add_test(text, text_duplicates);
  tcase_add_test(text, text_globals);
  tcase_add_test(text, text_undefined_global);
  tcase_add_test(text, text_ctor_forms);
  tcase_add_test(text, text_ctor_before_type);
  tcase_add_test(text, text_patterns);
  tcase_add_test(text, text_pattern_errors);
  tcase_add_test(text, text_type_vars);
  tcase_add_test(text, text_unknown_type);
  tcase_add_test(text, text_unknown_op);
  tcase_add_test(text, text_op_attrs_normalized);
  tcase_add_test(text, text_free_var);
  tcase_add_test(text, text_meta);
  tcase_add_test(text, text_meta_errors);
  tcase_add_test(text, text_attr_unquoted);
  tcase_add_test(text, text_long_chain);
  tcase_add_test(text, text_mentions_gradient);
  suite_add_tcase(s, text);
  return s;
}

int main(void) {
  return unit_run(resolve_suite());
}
