/* tests/unit/check_printer.c — Check suite for the canonical printer (ir/print.c).
 *
 * Hand-built trees pin the exact text of spec/text-format.md §7: the worked
 * examples of §7.11 (plain, and typed with Expr.type set by hand), hoisting
 * order, name uniquing, shared tails, parenthesised hoisted let/match,
 * literals, attributes, types and the metadata section. Text-based cases run
 * parse -> resolve -> print and check print(parse(print(x))) == print(x) and
 * module_equal for a dozen varied programs. Robustness: 100,000-node chains
 * print without using the C stack, and nesting past the stack guard is a
 * diagnostic, not a crash.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ast.h"
#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/print.h"
#include "parser/parser.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "tests/unit/unit_run.h"

/* ------------------------------------------------------------- builders */

static Module *M;
static const Span S0 = {0, 0};

static void setup(void) {
  stack_guard_init(8u << 20);
  M = module_new(NULL);
}

static void teardown(void) { module_free(M); }

static Type *f32(void) { return type_scalar(M, DT_F32); }
static Type *i32(void) { return type_scalar(M, DT_I32); }

static Var *var(const char *name, Type *annot) { return var_new(M, name, S0, annot); }

static Expr *use(Var *v) { return build_var(M, v, S0); }

static Expr *op(const char *name) {
  Expr *e = expr_op(M, name, S0);
  e->op.id = 0;
  return e;
}

static Expr *callv(Expr *fn, Attrs *attrs, int n, va_list ap) {
  Expr *args[16];
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, Expr *);
  return expr_call(M, fn, args, (uint32_t)n, attrs, S0);
}

static Expr *call(Expr *fn, int n, ...) {
  va_list ap;
  va_start(ap, n);
  Expr *e = callv(fn, NULL, n, ap);
  va_end(ap);
  return e;
}

static Expr *call_attrs(Expr *fn, Attrs *attrs, int n, ...) {
  va_list ap;
  va_start(ap, n);
  Expr *e = callv(fn, attrs, n, ap);
  va_end(ap);
  return e;
}

static Expr *opcall(const char *name, int n, ...) {
  va_list ap;
  va_start(ap, n);
  Expr *e = callv(op(name), NULL, n, ap);
  va_end(ap);
  return e;
}

static Expr *tuple(int n, ...) {
  Expr *fields[32];
  ck_assert_int_le(n, 32);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) fields[i] = va_arg(ap, Expr *);
  va_end(ap);
  return build_tuple(M, fields, (uint32_t)n, S0);
}

static Expr *proj(Expr *t, uint32_t i) { return build_proj(M, t, i, S0); }
static Expr *let(Var *v, Expr *value, Expr *body) { return build_let(M, v, value, body, S0); }
static Expr *if_(Expr *c, Expr *t, Expr *f) { return build_if(M, c, t, f, S0); }
static Expr *ref1(ExprKind k, Expr *a) {
  return k == EXPR_REF_NEW ? build_ref_new(M, a, S0) : build_ref_read(M, a, S0);
}
static Expr *ref_write(Expr *r, Expr *v) { return build_ref_write(M, r, v, S0); }

static Expr *global(const char *name) {
  Expr *e = expr_new(M, EXPR_GLOBAL, S0);
  e->global.name = name;
  return e;
}

static Expr *ci(int v) { return expr_scalar_int(M, DT_I32, v, S0); }
static Expr *cf(double v) { return expr_scalar_float(M, DT_F32, v, S0); }

static Function *func(int n, Var **params, Type *ret, Expr *body) {
  return build_function(M, params, (uint32_t)n, ret, body, NULL, S0);
}

static Expr *fn_expr(Function *f) { return build_fn(M, f, S0); }

static void add_def(const char *name, Function *f) {
  GlobalDef *g = arena_alloc(M->arena, sizeof *g);
  g->name = name;
  g->fn = f;
  GlobalDef **defs = arena_alloc(M->arena, (M->ndefs + 1) * sizeof *defs);
  if (M->ndefs) memcpy(defs, M->defs, M->ndefs * sizeof *defs);
  defs[M->ndefs++] = g;
  M->defs = defs;
}

static void add_type(TypeDef *td) {
  TypeDef **ts = arena_alloc(M->arena, (M->ntypes + 1) * sizeof *ts);
  if (M->ntypes) memcpy(ts, M->types, M->ntypes * sizeof *ts);
  ts[M->ntypes++] = td;
  M->types = ts;
}

/* The n Type * arguments of a variadic builder, in the arena. */
static Type **type_args(int n, va_list ap) {
  Type **ts = arena_alloc(M->arena, (size_t)(n ? n : 1) * sizeof(Type *));
  for (int i = 0; i < n; i++) ts[i] = va_arg(ap, Type *);
  return ts;
}

static Type *tuple_type(int n, ...) {
  Type *t = type_new(M, TYPE_TUPLE, S0);
  va_list ap;
  va_start(ap, n);
  t->tuple.fields = type_args(n, ap);
  va_end(ap);
  t->tuple.n = (uint32_t)n;
  return t;
}

static Type *func_type(Type *ret, int n, ...) {
  Type *t = type_new(M, TYPE_FUNC, S0);
  va_list ap;
  va_start(ap, n);
  t->func.args = type_args(n, ap);
  va_end(ap);
  t->func.nargs = (uint32_t)n;
  t->func.ret = ret;
  return t;
}

static Type *adt_type(TypeDef *td, int n, ...) {
  Type *t = type_new(M, TYPE_ADT, S0);
  t->adt.def = td;
  va_list ap;
  va_start(ap, n);
  t->adt.args = type_args(n, ap);
  va_end(ap);
  t->adt.nargs = (uint32_t)n;
  return t;
}

static Type *tvar(TypeParam *p) {
  Type *t = type_new(M, TYPE_VAR, S0);
  t->var.param = p;
  return t;
}

static Attrs *attrs1(const char *key, AttrValue *v, bool is_default) {
  Attrs *a = arena_alloc(M->arena, sizeof *a);
  a->items = arena_alloc(M->arena, sizeof(Attr));
  a->items[0] = (Attr){.key = key, .value = v, .is_default = is_default};
  a->n = 1;
  return a;
}

static AttrValue *av_int(int64_t v) {
  AttrValue *a = attr_value_new(M, AV_INT, S0);
  a->i.value = v;
  a->i.dtype = DT_I32;
  return a;
}

/* Everything print_module (or print_expression) writes, as a malloc'd string. */
static char *print_str(Module *m, bool types, bool expr) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  PrintOptions o = {.types = types};
  if (expr) print_expression(f, m, o);
  else print_module(f, m, o);
  fclose(f);
  return buf;
}

/* What printing M (or its expression) wrote to its output and, through a
 * Diag over a one-line source, to its diagnostics. */
typedef struct Printed {
  char *out, *diags;
  int nerrors, nwarnings;
} Printed;

static Printed print_diagnosed(bool expr) {
  Printed p = {0};
  size_t dlen = 0, olen = 0;
  FILE *df = open_memstream(&p.diags, &dlen), *of = open_memstream(&p.out, &olen);
  Source *s = source_new("p.relay", mem_strdup("x"), 1);
  Diag d;
  diag_init(&d, df, s);
  PrintOptions o = {.diag = &d};
  if (expr) print_expression(of, M, o);
  else print_module(of, M, o);
  fclose(of);
  fclose(df);
  source_free(s);
  p.nerrors = d.nerrors;
  p.nwarnings = d.nwarnings;
  return p;
}

static void printed_free(Printed *p) {
  free(p->out);
  free(p->diags);
}

#define ck_print(m, types, expr, want)                                                          \
  do {                                                                                          \
    char *got_ = print_str((m), (types), (expr));                                               \
    ck_assert_msg(strcmp(got_, (want)) == 0, "got:\n%s\n--- want:\n%s", got_, (want));          \
    free(got_);                                                                                 \
  } while (0)

/* ----------------------------------------------------- §7.11 examples */

/* Typed output of the §7.11 examples (also produced through sema/infer below). */
static const char EX1_TYPED[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%a: float32 /* ty=float32 */, %b: float32 /* ty=float32 */) -> float32 {\n"
    "  %0 = multiply(%a, %b) /* ty=float32 */;\n"
    "  %1 = add(%0, %0) /* ty=float32 */;\n"
    "  divide(%1, 2f /* ty=float32 */) /* ty=float32 */\n"
    "}\n";

static const char EX3_TYPED[] =
    "#[version = \"0.0.5\"]\n"
    "def @pick(%x: int32 /* ty=int32 */, %c: bool /* ty=bool */) -> int32 {\n"
    "  let %t: (int32, int32) /* ty=(int32, int32) */ = (%x, 1 /* ty=int32 */) /* "
    "ty=(int32, int32) */;\n"
    "  if (%c) {\n"
    "    %t.0 /* ty=int32 */\n"
    "  } else {\n"
    "    %0 = %t.1 /* ty=int32 */;\n"
    "    add(%0, 2 /* ty=int32 */) /* ty=int32 */\n"
    "  }\n"
    "}\n";

static const char EX4_TYPED[] =
    "#[version = \"0.0.5\"]\n"
    "type List[A] {\n"
    "  Cons(A, List[A]),\n"
    "  Nil,\n"
    "}\n"
    "\n"
    "def @len[A](%l: List[A] /* ty=List[A] */) -> int32 {\n"
    "  match (%l) {\n"
    "    Cons(_, %rest: List[A] /* ty=List[A] */) => {\n"
    "      %0 = @len(%rest) /* ty=int32 */;\n"
    "      add(1 /* ty=int32 */, %0) /* ty=int32 */\n"
    "    },\n"
    "    Nil => {\n"
    "      0 /* ty=int32 */\n"
    "    },\n"
    "  }\n"
    "}\n"
    "\n"
    "def @one() -> List[int32] {\n"
    "  %1 = Nil /* ty=List[int32] */;\n"
    "  Cons(1 /* ty=int32 */, %1) /* ty=List[int32] */\n"
    "}\n";

static const char EX5_TYPED[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: float32 /* ty=float32 */) -> float32 {\n"
    "  %0 = ref(%x);\n"
    "  let %v: () /* ty=() */ = ref_write(%0, 1f /* ty=float32 */);\n"
    "  ref_read(%0)\n"
    "}\n";

static const char EX6_TYPED[] =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 4), float32] /* ty=Tensor[(1, 4), float32] */) -> "
    "Tensor[(1, 4), float32] {\n"
    "  %0 = fn (%p: Tensor[(1, 4), float32] /* ty=Tensor[(1, 4), float32] */, Primitive=1) "
    "-> Tensor[(1, 4), float32] {\n"
    "    nn.softmax(%p, axis=1) /* ty=Tensor[(1, 4), float32] */\n"
    "  } /* ty=fn (Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] */;\n"
    "  %0(%x) /* ty=Tensor[(1, 4), float32] */\n"
    "}\n";

/* Example 1: (%a * %b + same) / 2f, with the product shared. */
static void build_example1(bool typed) {
  Var *a = var("a", f32()), *b = var("b", f32());
  Expr *mul = opcall("multiply", 2, use(a), use(b));
  Expr *two = cf(2);
  Expr *sum = opcall("add", 2, mul, mul);
  Expr *div = opcall("divide", 2, sum, two);
  Var *ps[] = {a, b};
  Function *f = func(2, ps, NULL, div);
  add_def("main", f);
  if (typed) {
    a->type = b->type = mul->type = sum->type = div->type = two->type = f32();
    f->type = func_type(f32(), 2, f32(), f32());
  }
}

START_TEST(example1_plain) {
  build_example1(false);
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @main(%a: float32, %b: float32) {\n"
           "  %0 = multiply(%a, %b);\n"
           "  %1 = add(%0, %0);\n"
           "  divide(%1, 2f)\n"
           "}\n");
}
END_TEST

START_TEST(example2_hoisting_order) {
  Var *a = var("a", f32()), *b = var("b", f32()), *c = var("c", f32()), *d = var("d", f32());
  Expr *body = opcall("add", 2, opcall("multiply", 2, opcall("negative", 1, use(a)), use(b)),
                      opcall("subtract", 2, opcall("negative", 1, use(c)), use(d)));
  Var *ps[] = {a, b, c, d};
  add_def("g", func(4, ps, NULL, body));
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @g(%a: float32, %b: float32, %c: float32, %d: float32) {\n"
           "  %0 = negative(%a);\n"
           "  %1 = negative(%c);\n"
           "  %2 = multiply(%0, %b);\n"
           "  %3 = subtract(%1, %d);\n"
           "  add(%2, %3)\n"
           "}\n");
}
END_TEST

static void build_example3(bool typed) {
  Var *x = var("x", i32()), *c = var("c", type_scalar(M, DT_BOOL_T));
  Var *t = var("t", NULL);
  Expr *one = ci(1), *two = ci(2);
  Expr *tup = tuple(2, use(x), one);
  Expr *p0 = proj(use(t), 0), *p1 = proj(use(t), 1);
  Expr *sum = opcall("add", 2, p1, two);
  Expr *body = let(t, tup, if_(use(c), p0, sum));
  Var *ps[] = {x, c};
  Function *f = func(2, ps, NULL, body);
  add_def("pick", f);
  if (typed) {
    x->type = one->type = two->type = p0->type = p1->type = sum->type = i32();
    c->type = type_scalar(M, DT_BOOL_T);
    t->type = tup->type = tuple_type(2, i32(), i32());
    f->type = func_type(i32(), 2, i32(), c->type);
  }
}

START_TEST(example3_plain) {
  build_example3(false);
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @pick(%x: int32, %c: bool) {\n"
           "  let %t = (%x, 1);\n"
           "  if (%c) {\n"
           "    %t.0\n"
           "  } else {\n"
           "    %0 = %t.1;\n"
           "    add(%0, 2)\n"
           "  }\n"
           "}\n");
}
END_TEST

/* Example 4: type List, @len (match) and @one, printed sorted by name. */
static void build_example4(bool typed) {
  TypeDef *list = arena_alloc(M->arena, sizeof *list);
  list->name = "List";
  TypeParam *a = type_param_new(M, "A", S0);
  list->tparams = arena_memdup(M->arena, &a, sizeof a);
  list->ntparams = 1;
  Ctor *cons = arena_alloc(M->arena, sizeof *cons), *nil = arena_alloc(M->arena, sizeof *nil);
  cons->name = "Cons";
  cons->owner = list;
  cons->nfields = 2;
  cons->fields = arena_alloc(M->arena, 2 * sizeof(Type *));
  cons->fields[0] = tvar(a);
  cons->fields[1] = adt_type(list, 1, tvar(a));
  nil->name = "Nil";
  nil->owner = list;
  nil->tag = 1;
  Ctor *ctors[] = {cons, nil};
  list->ctors = arena_memdup(M->arena, ctors, sizeof ctors);
  list->nctors = 2;
  list->has_body = true;
  add_type(list);

  Expr *cons_e = expr_new(M, EXPR_CTOR, S0), *nil_e = expr_new(M, EXPR_CTOR, S0);
  cons_e->ctor.ctor = cons;
  nil_e->ctor.ctor = nil;
  Expr *one = ci(1), *nil_call = call(nil_e, 0);
  Expr *one_body = call(cons_e, 2, one, nil_call);
  Function *fone = func(0, NULL, adt_type(list, 1, i32()), one_body);
  add_def("one", fone);

  TypeParam *b = type_param_new(M, "A", S0);
  Var *l = var("l", adt_type(list, 1, tvar(b)));
  Var *rest = var("rest", NULL);
  Pattern *wild = pattern_new(M, PAT_WILDCARD, S0), *prest = pattern_new(M, PAT_VAR, S0);
  prest->var = rest;
  Pattern *pcons = pattern_new(M, PAT_CTOR, S0), *pnil = pattern_new(M, PAT_CTOR, S0);
  pcons->ctor.ctor = cons;
  pcons->ctor.name = "Cons";
  Pattern *pargs[] = {wild, prest};
  pcons->ctor.args = arena_memdup(M->arena, pargs, sizeof pargs);
  pcons->ctor.nargs = 2;
  pnil->ctor.ctor = nil;
  pnil->ctor.name = "Nil";
  Expr *rec = call(global("len"), 1, use(rest));
  Expr *one2 = ci(1), *zero = ci(0);
  Expr *sum = opcall("add", 2, one2, rec);
  Expr *mt = expr_new(M, EXPR_MATCH, S0);
  mt->match.scrut = use(l);
  mt->match.clauses = arena_alloc(M->arena, 2 * sizeof(Clause));
  mt->match.clauses[0] = (Clause){pcons, sum, S0};
  mt->match.clauses[1] = (Clause){pnil, zero, S0};
  mt->match.nclauses = 2;
  Var *ps[] = {l};
  Function *flen = func(1, ps, i32(), mt);
  flen->tparams = arena_memdup(M->arena, &b, sizeof b);
  flen->ntparams = 1;
  add_def("len", flen);
  if (typed) {
    l->type = rest->type = adt_type(list, 1, tvar(b));
    rec->type = sum->type = one2->type = zero->type = one->type = i32();
    nil_call->type = one_body->type = adt_type(list, 1, i32());
  }
}

START_TEST(example4_plain) {
  build_example4(false);
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "type List[A] {\n"
           "  Cons(A, List[A]),\n"
           "  Nil,\n"
           "}\n"
           "\n"
           "def @len[A](%l: List[A]) -> int32 {\n"
           "  match (%l) {\n"
           "    Cons(_, %rest) => {\n"
           "      %0 = @len(%rest);\n"
           "      add(1, %0)\n"
           "    },\n"
           "    Nil => {\n"
           "      0\n"
           "    },\n"
           "  }\n"
           "}\n"
           "\n"
           "def @one() -> List[int32] {\n"
           "  %1 = Nil;\n"
           "  Cons(1, %1)\n"
           "}\n");
}
END_TEST

/* Example 5: a shared ref and `;` sequencing (anonymous variable, `_` type). */
static void build_example5(bool typed) {
  Var *x = var("x", f32());
  Var *anon = var("", type_new(M, TYPE_INCOMPLETE, S0));
  Expr *r = ref1(EXPR_REF_NEW, use(x));
  Expr *one = cf(1);
  Expr *body = let(anon, ref_write(r, one), ref1(EXPR_REF_READ, r));
  Var *ps[] = {x};
  Function *f = func(1, ps, NULL, body);
  add_def("main", f);
  if (typed) {
    x->type = one->type = f32();
    anon->type = tuple_type(0);
    f->type = func_type(f32(), 1, f32());
  }
}

START_TEST(example5_plain) {
  build_example5(false);
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @main(%x: float32) {\n"
           "  %0 = ref(%x);\n"
           "  let %v: _ = ref_write(%0, 1f);\n"
           "  ref_read(%0)\n"
           "}\n");
}
END_TEST

/* Example 6: function literal with Primitive=1, op call with a non-default attr. */
static void build_example6(bool typed) {
  int64_t shape[] = {1, 4};
  Var *x = var("x", type_tensor(M, DT_F32, 2, shape));
  Var *pv = var("p", type_tensor(M, DT_F32, 2, shape));
  Expr *sm = call_attrs(op("nn.softmax"), attrs1("axis", av_int(1), false), 1, use(pv));
  Var *ips[] = {pv};
  Function *inner = func(1, ips, NULL, sm);
  inner->attrs = attrs1("Primitive", av_int(1), false);
  Expr *lit = fn_expr(inner);
  Expr *app = call(lit, 1, use(x));
  Var *ps[] = {x};
  Function *f = func(1, ps, NULL, app);
  add_def("main", f);
  if (typed) {
    Type *t = type_tensor(M, DT_F32, 2, shape);
    x->type = pv->type = sm->type = app->type = t;
    inner->type = lit->type = func_type(t, 1, t);
    f->type = func_type(t, 1, t);
  }
}

START_TEST(example6_plain) {
  build_example6(false);
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @main(%x: Tensor[(1, 4), float32]) {\n"
           "  %0 = fn (%p: Tensor[(1, 4), float32], Primitive=1) {\n"
           "    nn.softmax(%p, axis=1)\n"
           "  };\n"
           "  %0(%x)\n"
           "}\n");
}
END_TEST

/* Each example built with its types set by hand prints as EXn_TYPED. */
static const struct {
  void (*build)(bool typed);
  const char *want;
} TYPED_EXAMPLES[] = {{build_example1, EX1_TYPED}, {build_example3, EX3_TYPED}, {build_example4, EX4_TYPED},
                      {build_example5, EX5_TYPED}, {build_example6, EX6_TYPED}};

START_TEST(example_typed) {
  TYPED_EXAMPLES[_i].build(true);
  ck_print(M, true, false, TYPED_EXAMPLES[_i].want);
}
END_TEST

/* A call whose callee is a function literal: arguments first (§7.11). */
START_TEST(callee_literal_expression) {
  Var *x = var("x", NULL), *y = var("y", NULL);
  Var *px[] = {x}, *py[] = {y};
  Expr *fx = fn_expr(func(1, px, NULL, use(x)));
  Expr *fy = fn_expr(func(1, py, NULL, use(y)));
  M->expr = call(fx, 1, call(fy, 1, ci(1)));
  ck_print(M, false, true,
           "#[version = \"0.0.5\"]\n"
           "%0 = fn (%y) {\n"
           "  %y\n"
           "};\n"
           "%1 = %0(1);\n"
           "%2 = fn (%x) {\n"
           "  %x\n"
           "};\n"
           "%2(%1)");
}
END_TEST

/* ------------------------------------------------------------ names etc. */

START_TEST(names_unique_across_functions) {
  Var *x1 = var("x", NULL), *x2 = var("x", NULL);
  Var *p1[] = {x1}, *p2[] = {x2};
  add_def("b", func(1, p2, NULL, use(x2)));
  add_def("a", func(1, p1, NULL, use(x1)));
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @a(%x) {\n"
           "  %x\n"
           "}\n"
           "\n"
           "def @b(%x1) {\n"
           "  %x1\n"
           "}\n");
}
END_TEST

START_TEST(names_prefix_and_skip_taken) {
  Var *a = var("x", NULL), *b = var("x1", NULL), *c = var("x", NULL);
  Var *d = var("1", NULL), *e = var("_t", NULL), *f = var("", NULL);
  Var *ps[] = {a, b, c, d, e, f};
  add_def("f", func(6, ps, NULL, tuple(6, use(a), use(b), use(c), use(d), use(e), use(f))));
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @f(%x, %x1, %x2, %v1, %v_t, %v) {\n"
           "  (%x, %x1, %x2, %v1, %v_t, %v)\n"
           "}\n");
}
END_TEST

START_TEST(shared_tail_node) {
  Var *x = var("x", NULL);
  Expr *t = tuple(2, ci(0), ci(0));
  add_def("f", func(0, NULL, NULL, let(x, t, t)));
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @f() {\n"
           "  %0 = (0, 0);\n"
           "  let %x = %0;\n"
           "  %0\n"
           "}\n");
}
END_TEST

START_TEST(hoisted_let_in_parens) {
  Var *y = var("y", NULL), *z = var("z", NULL);
  Expr *inner = let(y, ci(1), use(y));
  Expr *m2 = expr_new(M, EXPR_MATCH, S0);
  Pattern *pz = pattern_new(M, PAT_VAR, S0);
  pz->var = z;
  m2->match.scrut = ci(3);
  m2->match.clauses = arena_alloc(M->arena, sizeof(Clause));
  m2->match.clauses[0] = (Clause){pz, use(z), S0};
  m2->match.nclauses = 1;
  m2->match.partial = true;
  add_def("f", func(0, NULL, NULL, opcall("add", 2, inner, m2)));
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @f() {\n"
           "  %0 = (\n"
           "    let %y = 1;\n"
           "    %y\n"
           "  );\n"
           "  %1 = (\n"
           "    match? (3) {\n"
           "      %z => {\n"
           "        %z\n"
           "      },\n"
           "    }\n"
           "  );\n"
           "  add(%0, %1)\n"
           "}\n");
}
END_TEST

START_TEST(let_value_let_in_parens) {
  Var *a = var("a", NULL), *b = var("b", NULL);
  Expr *inner = let(b, ci(1), use(b));
  add_def("f", func(0, NULL, NULL, let(a, inner, use(a))));
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @f() {\n"
           "  let %a = (\n"
           "    let %b = 1;\n"
           "    %b\n"
           "  );\n"
           "  %a\n"
           "}\n");
}
END_TEST

START_TEST(let_value_hoists_before_let) {
  Var *a = var("a", NULL), *b = var("b", NULL), *x = var("x", f32());
  Expr *body = let(a, opcall("add", 2, opcall("negative", 1, use(x)), use(x)),
                   let(b, opcall("add", 2, opcall("negative", 1, use(a)), use(a)), use(b)));
  Var *ps[] = {x};
  add_def("f", func(1, ps, NULL, body));
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "def @f(%x: float32) {\n"
           "  %0 = negative(%x);\n"
           "  let %a = add(%0, %x);\n"
           "  %1 = negative(%a);\n"
           "  let %b = add(%1, %a);\n"
           "  %b\n"
           "}\n");
}
END_TEST

START_TEST(free_var_expression) {
  Var *x = var("x", f32());
  x->is_free = true;
  M->expr = opcall("add", 2, use(x), use(x));
  ck_print(M, false, true,
           "#[version = \"0.0.5\"]\n"
           "free_var %x: float32;\n"
           "add(%x, %x)");
}
END_TEST

START_TEST(typed_shared_inline_constant) {
  Expr *one = ci(1);
  one->type = i32();
  Expr *sum = opcall("add", 2, one, one);
  sum->type = i32();
  M->expr = sum;
  ck_print(M, true, true,
           "#[version = \"0.0.5\"]\n"
           "add(1 /* ty=int32 */, 1 /* ty=int32 */) /* ty=int32 */");
}
END_TEST

/* -------------------------------------------------------------- literals */

static Expr *scalar(DType dt, const void *bytes) {
  Expr *e = expr_scalar_int(M, dt.bits == 64 ? DT_I64 : DT_I32, 0, S0);
  e->constant->dtype = dt;
  e->constant->nbytes = dtype_size(dt);
  memcpy(e->constant->data, bytes, dtype_size(dt));
  return e;
}

START_TEST(literal_forms) {
  float f1 = 1, f2 = 0.5f, f3 = 1e-5f, f4 = 3.1415927f, f5 = INFINITY, f6 = -INFINITY, f7 = NAN;
  float f8 = 1e10f, f9 = 0.1f;
  double d1 = 0.1, d2 = INFINITY, d3 = NAN;
  uint16_t h1 = float_to_half(2.5f), h2 = float_to_half(0.1f);
  int16_t s1 = 5;
  int64_t l1 = -1;
  int32_t i1 = -7;
  uint8_t bt = 1, bf = 0;
  M->expr = tuple(19, scalar(DT_F32, &f1), scalar(DT_F32, &f2), scalar(DT_F32, &f3),
                  scalar(DT_F32, &f4), scalar(DT_F32, &f5), scalar(DT_F32, &f6),
                  scalar(DT_F32, &f7), scalar(DT_F32, &f8), scalar(DT_F32, &f9),
                  scalar(DT_F64, &d1), scalar(DT_F64, &d2), scalar(DT_F64, &d3),
                  scalar(DT_F16, &h1), scalar(DT_F16, &h2), scalar(DT_I16, &s1),
                  scalar(DT_I64, &l1), scalar(DT_I32, &i1), scalar(DT_BOOL_T, &bt),
                  scalar(DT_BOOL_T, &bf));
  ck_print(M, false, true,
           "#[version = \"0.0.5\"]\n"
           "(1f, 0.5f, 1e-05f, 3.1415927f, inff, -inff, nanf, 1e+10f, 0.1f, 0.1f64, inff64, "
           "nanf64, 2.5f16, 0.1f16, 5i16, -1i64, -7, True, False)");
}
END_TEST

static const char *META_EXAMPLE =
    "#[metadata]\n"
    "{\n"
    "  \"root\": 1, \n"
    "  \"nodes\": [\n"
    "    {\n"
    "      \"type_key\": \"\"\n"
    "    }, \n"
    "    {\n"
    "      \"type_key\": \"Map\", \n"
    "      \"keys\": [\n"
    "        \"relay.Constant\"\n"
    "      ], \n"
    "      \"data\": [2]\n"
    "    }, \n"
    "    {\n"
    "      \"type_key\": \"Array\", \n"
    "      \"data\": [3]\n"
    "    }, \n"
    "    {\n"
    "      \"type_key\": \"relay.Constant\", \n"
    "      \"attrs\": {\n"
    "        \"_checked_type_\": \"0\", \n"
    "        \"data\": \"0\", \n"
    "        \"span\": \"0\", \n"
    "        \"virtual_device_\": \"0\"\n"
    "      }\n"
    "    }\n"
    "  ], \n"
    "  \"b64ndarrays\": [\n"
    "    \"P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAACAPwAAAEA=\"\n"
    "  ], \n"
    "  \"attrs\": {\"tvm_version\": \"0.20.dev0\"}\n"
    "}";

static Expr *tensor_const(void) {
  ConstTensor *c = arena_alloc(M->arena, sizeof *c);
  c->dtype = DT_F32;
  c->ndim = 1;
  c->shape = arena_alloc(M->arena, sizeof(int64_t));
  c->shape[0] = 2;
  c->nbytes = 8;
  c->data = arena_alloc_aligned(M->arena, 8, 64);
  ((float *)c->data)[0] = 1;
  ((float *)c->data)[1] = 2;
  c->meta_index = 5;
  Expr *e = expr_new(M, EXPR_CONST, S0);
  e->constant = c;
  return e;
}

START_TEST(metadata_section) {
  int64_t shape[] = {2};
  Var *x = var("x", type_tensor(M, DT_F32, 1, shape));
  Var *ps[] = {x};
  add_def("main", func(1, ps, NULL, opcall("add", 2, use(x), tensor_const())));
  char want[4096];
  snprintf(want, sizeof want,
           "#[version = \"0.0.5\"]\n"
           "def @main(%%x: Tensor[(2), float32]) {\n"
           "  add(%%x, meta[relay.Constant][0])\n"
           "}\n"
           "\n%s",
           META_EXAMPLE);
  ck_print(M, false, false, want);
}
END_TEST

START_TEST(metadata_numbered_by_first_use) {
  Expr *c1 = tensor_const(), *c2 = tensor_const();
  int8_t small = -3;
  Expr *c3 = scalar(DT_I8, &small);
  M->expr = tuple(4, c2, c1, c2, c3);
  char *got = print_str(M, false, true);
  ck_assert_msg(strncmp(got,
                        "#[version = \"0.0.5\"]\n(meta[relay.Constant][0], meta[relay.Constant][1], "
                        "meta[relay.Constant][0], meta[relay.Constant][2])\n#[metadata]\n{",
                        strlen("#[version = \"0.0.5\"]\n(meta[relay.Constant][0], "
                               "meta[relay.Constant][1], meta[relay.Constant][0], "
                               "meta[relay.Constant][2])\n#[metadata]\n{")) == 0,
                "got %s", got);
  ck_assert_ptr_nonnull(strstr(got, "\"data\": [3, 4, 5]"));
  free(got);
}
END_TEST

/* ----------------------------------------------------------- attributes */

START_TEST(attr_defaults_omitted) {
  Attrs *a = arena_alloc(M->arena, sizeof *a);
  a->items = arena_alloc(M->arena, 3 * sizeof(Attr));
  a->items[0] = (Attr){.key = "axis", .value = av_int(-1), .is_default = true};
  a->items[1] = (Attr){.key = "keepdims", .value = attr_value_new(M, AV_BOOL, S0), .is_default = false};
  a->items[1].value->b = true;
  a->items[2] = (Attr){.key = "exclude", .value = attr_value_new(M, AV_BOOL, S0), .is_default = true};
  a->n = 3;
  Var *x = var("x", NULL);
  x->is_free = true;
  Attrs *meta = arena_alloc(M->arena, sizeof *meta);
  meta->meta_key = "relay.attrs.SumAttrs";
  meta->meta_index = 2;
  M->expr = tuple(3, call_attrs(op("sum"), a, 1, use(x)), call_attrs(op("nn.relu"), NULL, 1, use(x)),
                  call_attrs(op("sum"), meta, 1, use(x)));
  ck_print(M, false, true,
           "#[version = \"0.0.5\"]\n"
           "free_var %x;\n"
           "%0 = sum(%x, keepdims=True);\n"
           "%1 = nn.relu(%x);\n"
           "%2 = sum(%x, meta[relay.attrs.SumAttrs][2]);\n"
           "(%0, %1, %2)");
}
END_TEST

START_TEST(long_attribute_value) {
  enum { N = 3000 };
  AttrValue *arr = attr_value_new(M, AV_ARRAY, S0);
  arr->arr.items = arena_alloc(M->arena, N * sizeof(AttrValue *));
  arr->arr.n = N;
  for (int i = 0; i < N; i++) arr->arr.items[i] = av_int(i);
  Var *x = var("x", NULL);
  x->is_free = true;
  M->expr = call_attrs(op("reshape"), attrs1("newshape", arr, false), 1, use(x));
  char *got = print_str(M, false, true);
  ck_assert_ptr_nonnull(strstr(got, "reshape(%x, newshape=[0, 1, 2, "));
  ck_assert_ptr_nonnull(strstr(got, ", 2998, 2999])"));
  free(got);
}
END_TEST

/* Names the lexer cannot read back are printed as is, with a warning. */
START_TEST(unreadable_names_warn) {
  Var *a = var("fn", NULL), *b = var("a.b", NULL), *c = var("ok", NULL);
  Var *ps[] = {a, b, c};
  add_def("main", func(3, ps, NULL, tuple(3, use(a), use(b), use(c))));
  Printed p = print_diagnosed(false);
  ck_assert_int_eq(p.nwarnings, 2);
  ck_assert_int_eq(p.nerrors, 0);
  ck_assert_ptr_nonnull(strstr(p.diags, "name %fn cannot be read back"));
  ck_assert_ptr_nonnull(strstr(p.diags, "name %a.b cannot be read back"));
  ck_assert_ptr_nonnull(strstr(p.out, "def @main(%fn, %a.b, %ok) {"));
  printed_free(&p);
}
END_TEST

/* ---------------------------------------------------------------- types */

static void ck_type(const Type *t, const char *want) {
  char *s = type_to_string(M->arena, t);
  ck_assert_str_eq(s, want);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  print_type(f, t);
  fclose(f);
  ck_assert_str_eq(buf, want);
  free(buf);
}

START_TEST(type_forms) {
  int64_t s1[] = {10}, s4[] = {1, 3, 224, 224};
  ck_type(type_tensor(M, DT_F32, 1, s1), "Tensor[(10), float32]");
  ck_type(type_tensor(M, DT_F32, 4, s4), "Tensor[(1, 3, 224, 224), float32]");
  Type *dims = type_tensor(M, DTYPE(DT_INT, 8), 3, s4);
  dims->tensor.dims[0] = (Dim){DIM_ANY, DT_I32, 0};
  dims->tensor.dims[1] = (Dim){DIM_INT, DT_I64, 5};
  dims->tensor.dims[2] = (Dim){DIM_SYM, DT_I64, 0};
  ck_type(dims, "Tensor[(?, 5i64, meta[tir.SizeVar][0]), int8]");
  ck_type(type_scalar(M, DT_BOOL_T), "bool");
  ck_type(type_scalar(M, DTYPE(DT_BFLOAT, 16)), "Tensor[(), bfloat16]");
  ck_type(type_scalar(M, (DType){DT_INT, 8, 4}), "int8x4");
  ck_type(tuple_type(1, f32()), "(float32,)");
  ck_type(tuple_type(0), "()");
  ck_type(tuple_type(2, f32(), i32()), "(float32, int32)");
  ck_type(func_type(f32(), 2, f32(), f32()), "fn (float32, float32) -> float32");
  TypeParam *a = type_param_new(M, "A", S0);
  Type *poly = func_type(tvar(a), 1, tvar(a));
  poly->func.tparams = arena_memdup(M->arena, &a, sizeof a);
  poly->func.ntparams = 1;
  ck_type(poly, "fn [A](A) -> A");
  TypeDef *list = arena_alloc(M->arena, sizeof *list), *nat = arena_alloc(M->arena, sizeof *nat);
  list->name = "List";
  nat->name = "Nat";
  ck_type(adt_type(list, 1, tvar(a)), "List[A]");
  ck_type(adt_type(nat, 0), "Nat[]");
  Type *r = type_new(M, TYPE_REF, S0);
  r->ref.inner = f32();
  ck_type(r, "ref(float32)");
  ck_type(type_new(M, TYPE_INCOMPLETE, S0), "_");
  Type *u = type_new(M, TYPE_UVAR, S0);
  ck_type(u, "_");
  Type *u2 = type_new(M, TYPE_UVAR, S0);
  u2->uvar.link = u;
  u->uvar.link = i32();
  ck_type(tuple_type(2, u2, u), "(int32, int32)");
}
END_TEST

START_TEST(typedef_forms) {
  TypeDef *e = arena_alloc(M->arena, sizeof *e);
  e->name = "Empty";
  add_type(e);
  ck_print(M, false, false,
           "#[version = \"0.0.5\"]\n"
           "type Empty {\n"
           "  \n"
           "}\n");
}
END_TEST

/* ------------------------------------------------------------ robustness */

START_TEST(long_dataflow_chain) {
  Var *x = var("x", f32());
  Expr *e = use(x);
  enum { N = 100000 };
  for (int i = 0; i < N; i++) e = opcall("add", 2, e, cf(1));
  Var *ps[] = {x};
  add_def("main", func(1, ps, NULL, e));
  clock_t t0 = clock();
  char *got = print_str(M, false, false);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  size_t len = strlen(got);
  ck_assert_ptr_nonnull(strstr(got, "  %0 = add(%x, 1f);\n  %1 = add(%0, 1f);\n"));
  ck_assert_ptr_nonnull(strstr(got, "  %99998 = add(%99997, 1f);\n  add(%99998, 1f)\n}\n"));
  fprintf(stderr, "printer: %zu bytes in %.3f s\n", len, secs);
  free(got);
}
END_TEST

START_TEST(long_let_chain) {
  enum { N = 100000 };
  Var **vs = mem_malloc(N * sizeof *vs);
  for (int i = 0; i < N; i++) vs[i] = var("a", NULL);
  Expr *body = use(vs[N - 1]);
  for (int i = N - 1; i >= 0; i--)
    body = let(vs[i], i ? opcall("negative", 1, use(vs[i - 1])) : ci(0), body);
  add_def("main", func(0, NULL, NULL, body));
  char *got = print_str(M, false, false);
  ck_assert_ptr_nonnull(strstr(got, "  let %a = 0;\n  let %a1 = negative(%a);\n"));
  ck_assert_ptr_nonnull(strstr(got, "  let %a99999 = negative(%a99998);\n  %a99999\n}\n"));
  free(got);
  mem_free(vs);
}
END_TEST

START_TEST(too_deep_is_a_diagnostic) {
  Expr *e = ci(0);
  for (int i = 0; i < 200000; i++) e = ref1(EXPR_REF_NEW, e);
  M->expr = e;
  Printed p = print_diagnosed(true);
  ck_assert_int_eq(p.nerrors, 1);
  ck_assert_ptr_nonnull(strstr(p.diags, "expression nested too deeply"));
  printed_free(&p);
}
END_TEST

/* ------------------------------------------------------- text round trips */

/* parse + resolve (+ infer); fails the test with the diagnostics on error. */
static Module *parse_text_typed(const char *text, bool expr, bool typed, Source **srcp) {
  char *dbuf = NULL;
  size_t dlen = 0;
  FILE *df = open_memstream(&dbuf, &dlen);
  Source *s = source_new("rt.relay", mem_strdup(text), strlen(text));
  Diag d;
  diag_init(&d, df, s);
  Module *m = expr ? parse_expression(s, &d) : parse_module(s, &d);
  if (d.nerrors == 0) {
    if (expr) resolve_expression(m, &d);
    else resolve_module(m, &d);
  }
  if (d.nerrors == 0 && typed) {
    if (expr) infer_expression(m, &d);
    else infer_module(m, &d);
  }
  fclose(df);
  ck_assert_msg(d.nerrors == 0, "errors for\n%s\n%s", text, dbuf ? dbuf : "");
  free(dbuf);
  *srcp = s;
  return m;
}

static Module *parse_text(const char *text, bool expr, Source **srcp) {
  return parse_text_typed(text, expr, false, srcp);
}

/* Indentation stops at 200 columns: 2,000 nested function literals print in
 * linear size (uncapped, 10,000 levels printed 300 MB) and still round-trip. */
START_TEST(deep_indentation_is_capped) {
  const int n = 2000;
  size_t cap = (size_t)n * 16 + 256, len = 0;
  char *text = mem_malloc(cap);
  len += (size_t)snprintf(text, cap, "#[version = \"0.0.5\"]\ndef @main() {\n");
  for (int i = 0; i < n; i++) len += (size_t)snprintf(text + len, cap - len, "fn () {\n");
  len += (size_t)snprintf(text + len, cap - len, "1");
  for (int i = 0; i < n; i++) len += (size_t)snprintf(text + len, cap - len, "}\n");
  snprintf(text + len, cap - len, "}\n");
  Source *s1, *s2;
  Module *m1 = parse_text(text, false, &s1);
  char *p1 = print_str(m1, false, false);
  size_t widest = 0;
  for (const char *l = p1; l; l = strchr(l, '\n')) {
    if (*l == '\n') l++;
    size_t w = strspn(l, " ");
    if (w > widest) widest = w;
  }
  ck_assert_uint_eq(widest, 200);
  ck_assert_uint_lt(strlen(p1), (size_t)n * 2 * 220);
  Module *m2 = parse_text(p1, false, &s2);
  char *p2 = print_str(m2, false, false);
  ck_assert_str_eq(p1, p2);
  ck_assert(module_equal(m1, m2, NULL));
  free(p1);
  free(p2);
  module_free(m1);
  module_free(m2);
  source_free(s1);
  source_free(s2);
  mem_free(text);
}
END_TEST

static void round_trip(const char *text, bool expr, const char *want) {
  Source *s1, *s2;
  Module *m1 = parse_text(text, expr, &s1);
  char *p1 = print_str(m1, false, expr);
  if (want) ck_assert_msg(strcmp(p1, want) == 0, "got:\n%s\n--- want:\n%s", p1, want);
  Module *m2 = parse_text(p1, expr, &s2);
  char *p2 = print_str(m2, false, expr);
  ck_assert_msg(strcmp(p1, p2) == 0, "not idempotent:\n%s\n--- second:\n%s", p1, p2);
  char *why = NULL;
  size_t wlen = 0;
  FILE *wf = open_memstream(&why, &wlen);
  bool eq = module_equal(m1, m2, wf);
  fclose(wf);
  ck_assert_msg(eq, "not equal after round trip: %s\n%s", why, p1);
  free(why);
  free(p1);
  free(p2);
  module_free(m1);
  module_free(m2);
  source_free(s1);
  source_free(s2);
}

static const char *const PROGRAMS[] = {
    /* §7.11 example inputs */
    "#[version = \"0.0.5\"]\n"
    "def @main(%a: float32, %b: float32) {\n  %0 = %a * %b;\n  (%0 + %0) / 2f\n}\n",
    "#[version = \"0.0.5\"]\n"
    "def @g(%a: float32, %b: float32, %c: float32, %d: float32) {\n"
    "  add(multiply(negative(%a), %b), subtract(negative(%c), %d))\n}\n",
    "#[version = \"0.0.5\"]\n"
    "def @pick(%x: int32, %c: bool) {\n  let %t = (%x, 1);\n"
    "  if (%c) { %t.0 } else { %t.1 + 2 }\n}\n",
    "#[version = \"0.0.5\"]\n"
    "type List[A] { Cons(A, List[A]), Nil }\n"
    "def @one() -> List[int32] { Cons(1, Nil) }\n"
    "def @len[A](%l: List[A]) -> int32 {\n"
    "  match (%l) { Cons(_, %rest) => 1 + @len(%rest), Nil => 0 }\n}\n",
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: float32) {\n  %0 = ref(%x);\n  ref_write(%0, 1f);\n  ref_read(%0)\n}\n",
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 4), float32]) {\n"
    "  %0 = fn (%p: Tensor[(1, 4), float32], Primitive=1) { nn.softmax(%p, axis=1) };\n"
    "  %0(%x)\n}\n",
    /* closures, higher-order globals, nested lets in values, partial match */
    "#[version = \"0.0.5\"]\n"
    "type Nat { Z, S(Nat) }\n"
    "def @add1(%n: Nat) -> Nat { S(%n) }\n"
    "def @twice[A](%f: fn (A) -> A, %x: A) -> A { %f(%f(%x)) }\n"
    "def @main() {\n"
    "  let %k = fn (%y: Nat) { let %z = (let %w = S(%y); %w); match? (%z) { S(%q) => %q } };\n"
    "  @twice(@add1, %k(S(Z)))\n}\n",
    /* a graph DAG with shared nodes inside branches and tuples */
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(2, 2), float32], %c: bool) {\n"
    "  %0 = nn.relu(%x);\n  %1 = (%0, %0);\n  %2 = %1.0;\n"
    "  if (%c) { add(%2, %1.1) } else { %3 = multiply(%0, %2); (%3, %3).1 }\n}\n",
    /* tuple patterns, wildcard, refs in a loop-ish closure, attrs with defaults */
    "#[version = \"0.0.5\"]\n"
    "def @main(%p: (int32, (float32, bool))) {\n"
    "  let %r = ref(0);\n"
    "  match (%p) { (%a, (_, %b)) => { ref_write(%r, %a); if (%b) { ref_read(%r) } else { %a } } }\n"
    "}\n",
    /* metadata constants shared and reused across functions */
    "#[version = \"0.0.5\"]\n"
    "def @f(%x: Tensor[(2), float32]) { add(%x, meta[relay.Constant][0]) }\n"
    "def @g(%x: Tensor[(2), float32]) { multiply(meta[relay.Constant][0], %x) }\n"
    "#[metadata]\n"
    "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", \"keys\": "
    "[\"relay.Constant\"], \"data\": [2]}, {\"type_key\": \"Array\", \"data\": [3]}, "
    "{\"type_key\": \"relay.Constant\", \"attrs\": {\"_checked_type_\": \"0\", \"data\": \"0\", "
    "\"span\": \"0\", \"virtual_device_\": \"0\"}}], \"b64ndarrays\": "
    "[\"P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAACAPwAAAEA=\"], "
    "\"attrs\": {\"tvm_version\": \"0.20.dev0\"}}",
    /* literals, op attributes, shadowed names that must be renamed */
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {\n"
    "  let %x1 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);\n"
    "  let %y = (1.5f, 3.1415927f, 7i64, -3i16, 0.25f64, 2f16, True, -inff);\n"
    "  fn (%x) { (%x, %x1, %y) }\n}\n",
    /* a node shared by both branches: numbered inside the first one */
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: float32, %c: bool) {\n"
    "  %0 = add(%x, %x);\n"
    "  if (%c) { multiply(%0, 2f) } else { fn (%y: float32) { subtract(%0, %y) } (1f) }\n}\n",
    /* a recursive local function */
    "#[version = \"0.0.5\"]\n"
    "def @main(%n: int32) -> int32 {\n"
    "  let %fact = fn (%k: int32) -> int32 { if (%k == 0) { 1 } else { %k * %fact(%k - 1) } };\n"
    "  %fact(%n)\n}\n",
};

START_TEST(round_trip_programs) { round_trip(PROGRAMS[_i], false, NULL); }
END_TEST

START_TEST(round_trip_expected_text) {
  round_trip(PROGRAMS[1], false,
             "#[version = \"0.0.5\"]\n"
             "def @g(%a: float32, %b: float32, %c: float32, %d: float32) {\n"
             "  %0 = negative(%a);\n"
             "  %1 = negative(%c);\n"
             "  %2 = multiply(%0, %b);\n"
             "  %3 = subtract(%1, %d);\n"
             "  add(%2, %3)\n"
             "}\n");
  round_trip(PROGRAMS[4], false,
             "#[version = \"0.0.5\"]\n"
             "def @main(%x: float32) {\n"
             "  %0 = ref(%x);\n"
             "  let %v: _ = ref_write(%0, 1f);\n"
             "  ref_read(%0)\n"
             "}\n");
}
END_TEST

/* The §7.11 inputs through resolve + infer print exactly the typed examples,
 * and typed printing is idempotent through parse + infer. */
START_TEST(typed_examples_via_infer) {
  static const struct {
    int program;
    const char *want;
  } cases[] = {{0, EX1_TYPED}, {2, EX3_TYPED}, {3, EX4_TYPED}, {4, EX5_TYPED}, {5, EX6_TYPED}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    Source *s1, *s2;
    Module *m1 = parse_text_typed(PROGRAMS[cases[i].program], false, true, &s1);
    char *p1 = print_str(m1, true, false);
    ck_assert_msg(strcmp(p1, cases[i].want) == 0, "got:\n%s\n--- want:\n%s", p1, cases[i].want);
    Module *m2 = parse_text_typed(p1, false, true, &s2);
    char *p2 = print_str(m2, true, false);
    ck_assert_msg(strcmp(p1, p2) == 0, "typed print not idempotent:\n%s\n---\n%s", p1, p2);
    free(p1);
    free(p2);
    module_free(m1);
    module_free(m2);
    source_free(s1);
    source_free(s2);
  }
}
END_TEST

START_TEST(round_trip_expression) {
  round_trip("(fn (%x) { %x })((fn (%y) { %y })(1))", true,
             "#[version = \"0.0.5\"]\n"
             "%0 = fn (%y) {\n"
             "  %y\n"
             "};\n"
             "%1 = %0(1);\n"
             "%2 = fn (%x) {\n"
             "  %x\n"
             "};\n"
             "%2(%1)");
  round_trip("free_var %x: float32; add(%x, %x)", true, NULL);
}
END_TEST

static Suite *printer_suite(void) {
  Suite *s = suite_create("printer");
  TCase *tc = tcase_create("examples");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, example1_plain);
  tcase_add_test(tc, example2_hoisting_order);
  tcase_add_test(tc, example3_plain);
  tcase_add_test(tc, example4_plain);
  tcase_add_test(tc, example5_plain);
  tcase_add_test(tc, example6_plain);
  tcase_add_loop_test(tc, example_typed, 0, sizeof TYPED_EXAMPLES / sizeof *TYPED_EXAMPLES);
  tcase_add_test(tc, callee_literal_expression);
  suite_add_tcase(s, tc);

  tc = tcase_create("forms");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, names_unique_across_functions);
  tcase_add_test(tc, names_prefix_and_skip_taken);
  tcase_add_test(tc, shared_tail_node);
  tcase_add_test(tc, hoisted_let_in_parens);
  tcase_add_test(tc, let_value_let_in_parens);
  tcase_add_test(tc, let_value_hoists_before_let);
  tcase_add_test(tc, free_var_expression);
  tcase_add_test(tc, typed_shared_inline_constant);
  tcase_add_test(tc, literal_forms);
  tcase_add_test(tc, metadata_section);
  tcase_add_test(tc, metadata_numbered_by_first_use);
  tcase_add_test(tc, attr_defaults_omitted);
  tcase_add_test(tc, long_attribute_value);
  tcase_add_test(tc, unreadable_names_warn);
  tcase_add_test(tc, type_forms);
  tcase_add_test(tc, typedef_forms);
  suite_add_tcase(s, tc);

  tc = tcase_create("robustness");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, long_dataflow_chain);
  tcase_add_test(tc, long_let_chain);
  tcase_add_test(tc, too_deep_is_a_diagnostic);
  tcase_add_test(tc, deep_indentation_is_capped);
  suite_add_tcase(s, tc);

  tc = tcase_create("round_trip");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, round_trip_programs, 0, (int)(sizeof PROGRAMS / sizeof PROGRAMS[0]));
  tcase_add_test(tc, round_trip_expected_text);
  tcase_add_test(tc, typed_examples_via_infer);
  tcase_add_test(tc, round_trip_expression);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(printer_suite());
}
