/* tests/unit/check_rewrite.c — the pass framework's building blocks:
 * transform/rewrite.c (the Rewriter keeps DAG sharing, returns unchanged
 * subtrees as the same pointers, substitutes variables, calls its hooks in
 * the recursive order, memoises through Expr.mark when asked (mark_memo,
 * which gives the marks back and nests),
 * walks 100,000-long let chains and graph chains on an
 * ordinary 8 MiB stack, reports deeper nesting instead of crashing),
 * ir/walk.c (each distinct node visited once, children first, no recursion),
 * transform/dagscan.c (the same with marks; several roots in one numbering)
 * and ir/build.c (fresh names, copies, constants, globals; built nodes
 * type-check). Trees are built by hand or parsed from text.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/mem.h"
#include "ir/walk.h"
#include "ops/op_call.h"
#include "parser/parser.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "tests/unit/unit_run.h"
#include "transform/dagscan.h"
#include "transform/rewrite.h"

static const Span S0 = {0, 0};
static Module *M;

static void setup(void) { M = module_new(NULL); }
static void teardown(void) { module_free(M); }

static Expr *call1(const char *op, Expr *a) { return op_call(M, op, (Expr *[]){a}, 1, NULL, S0); }
static Expr *call2(const char *op, Expr *a, Expr *b) { return op_call(M, op, (Expr *[]){a, b}, 2, NULL, S0); }
static Expr *f32(double v) { return expr_scalar_float(M, DT_F32, v, S0); }

/* ------------------------------------------------------------- rewriter */

/* post: add -> subtract (same arguments) */
static Expr *add_to_sub(Rewriter *rw, Expr *old, Expr *e) {
  (void)old;
  if (!op_call_is(e, "add")) return e;
  return op_call(rw->m, "subtract", e->call.args, 2, NULL, e->span);
}

START_TEST(rw_no_change_same_pointers) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *e = call2("multiply", call2("add", build_var(M, x, S0), f32(1)), call1("exp", build_var(M, x, S0)));
  Rewriter rw;
  rw_init(&rw, M, NULL);
  ck_assert_ptr_eq(rw_expr(&rw, e), e);
  rw.post = add_to_sub;
  Expr *t = build_tuple(M, (Expr *[]){call1("exp", build_var(M, x, S0)), f32(2)}, 2, S0);
  ck_assert_ptr_eq(rw_expr(&rw, t), t);
  rw_fini(&rw);
}
END_TEST

START_TEST(rw_sharing_preserved) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *shared = call2("add", build_var(M, x, S0), build_var(M, x, S0));
  Expr *e = call2("multiply", shared, shared);
  shared->mark = 1; /* a stale mark from some earlier pass must not matter */
  Rewriter rw;
  rw_init(&rw, M, NULL);
  rw.post = add_to_sub;
  rw.mark_memo = _i == 1;
  Expr *r = rw_expr(&rw, e);
  ck_assert_ptr_ne(r, e);
  ck_assert(op_call_is(r, "multiply"));
  ck_assert(op_call_is(r->call.args[0], "subtract"));
  ck_assert_ptr_eq(r->call.args[0], r->call.args[1]); /* one node, as before */
  ck_assert(op_call_is(e->call.args[0], "add"));      /* the input is untouched */
  rw_fini(&rw);
}
END_TEST

/* post of the inner rewriter: nothing changes */
static Expr *keep_post(Rewriter *rw, Expr *old, Expr *e) {
  (void)rw;
  (void)old;
  return e;
}

/* post: add -> subtract, and in the middle of the walk an inner mark_memo
 * rewriter goes over the whole input (as rw_copy_fresh in a hook would) */
static Expr *g_whole;
static Expr *add_to_sub_nested(Rewriter *rw, Expr *old, Expr *e) {
  Rewriter in;
  rw_init(&in, rw->m, NULL);
  in.mark_memo = true;
  in.post = keep_post;
  ck_assert_ptr_eq(rw_expr(&in, g_whole), g_whole);
  rw_fini(&in); /* gives the outer rewriter its marks back */
  return add_to_sub(rw, old, e);
}

/* mark_memo borrows Expr.mark: rw_prior_mark tells the mark a node had
 * before, rw_fini gives every mark back, and an inner mark_memo rewriter
 * run from a hook does not make the outer one lose its memo (which would
 * duplicate the shared node). */
START_TEST(rw_mark_memo_gives_marks_back) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *shared = call2("add", build_var(M, x, S0), build_var(M, x, S0));
  Expr *e = call2("multiply", call1("exp", shared), call1("negative", shared));
  g_whole = e;
  shared->mark = 7;
  e->mark = 3;
  Rewriter rw;
  rw_init(&rw, M, NULL);
  rw.post = add_to_sub_nested;
  rw.mark_memo = true;
  Expr *r = rw_expr(&rw, e);
  ck_assert_uint_eq(rw_prior_mark(&rw, shared), 7);
  ck_assert_uint_eq(rw_prior_mark(&rw, e), 3);
  ck_assert_uint_ne(shared->mark, 7); /* borrowed */
  ck_assert(op_call_is(r->call.args[0]->call.args[0], "subtract"));
  ck_assert_ptr_eq(r->call.args[0]->call.args[0], r->call.args[1]->call.args[0]); /* still one node */
  rw_fini(&rw);
  ck_assert_uint_eq(shared->mark, 7);
  ck_assert_uint_eq(e->mark, 3);
  ck_assert_uint_eq(rw_prior_mark(&rw, shared), 7);
}
END_TEST

START_TEST(rw_unchanged_subtree_kept) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *keep = call2("multiply", build_var(M, x, S0), f32(3));
  Expr *t = build_tuple(M, (Expr *[]){keep, call2("add", build_var(M, x, S0), f32(1))}, 2, S0);
  Rewriter rw;
  rw_init(&rw, M, NULL);
  rw.post = add_to_sub;
  Expr *r = rw_expr(&rw, t);
  ck_assert_ptr_ne(r, t);
  ck_assert_ptr_eq(r->tuple.fields[0], keep);
  ck_assert(op_call_is(r->tuple.fields[1], "subtract"));
  rw_fini(&rw);
}
END_TEST

START_TEST(rw_substitution) {
  Var *x = build_fresh_var(M, "x", NULL, S0), *y = build_fresh_var(M, "y", NULL, S0);
  Expr *e = call2("add", call2("multiply", build_var(M, x, S0), build_var(M, x, S0)), build_var(M, y, S0));
  Expr *c = call1("exp", build_var(M, y, S0));
  Rewriter rw;
  rw_init(&rw, M, NULL);
  rw_subst(&rw, x, c);
  Expr *r = rw_expr(&rw, e);
  Expr *m = r->call.args[0];
  ck_assert_ptr_eq(m->call.args[0], c); /* every use becomes the one node */
  ck_assert_ptr_eq(m->call.args[1], c);
  ck_assert_ptr_eq(r->call.args[1], e->call.args[1]); /* %y untouched */
  rw_fini(&rw);
}
END_TEST

/* The hooks log node kinds: 'P'/'Q' = pre/post of a call, 'p'/'q' of a leaf. */
static char hook_log[256];
static Expr *log_pre(Rewriter *rw, Expr *e) {
  (void)rw;
  strncat(hook_log, e->kind == EXPR_CALL ? "P" : "p", sizeof hook_log - strlen(hook_log) - 1);
  return NULL;
}
static Expr *log_post(Rewriter *rw, Expr *old, Expr *e) {
  (void)rw;
  strncat(hook_log, old->kind == EXPR_CALL ? "Q" : "q", sizeof hook_log - strlen(hook_log) - 1);
  return e;
}

START_TEST(rw_hook_order_is_recursive_order) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  /* add(exp(%x), %x): pre add, [callee], [exp: pre, callee, arg, post], [arg], post add */
  Expr *e = call2("add", call1("exp", build_var(M, x, S0)), build_var(M, x, S0));
  Rewriter rw;
  rw_init(&rw, M, NULL);
  rw.pre = log_pre;
  rw.post = log_post;
  hook_log[0] = 0;
  rw_expr(&rw, e);
  ck_assert_str_eq(hook_log, "P" "pq" "P" "pq" "pq" "Q" "pq" "Q");
  rw_fini(&rw);
}
END_TEST

/* pre replaces exp(...) by 0f: its children are never visited */
static int post_calls;
static Expr *pre_cut(Rewriter *rw, Expr *e) {
  if (op_call_is(e, "exp")) return expr_scalar_float(rw->m, DT_F32, 0, e->span);
  return NULL;
}
static Expr *count_post(Rewriter *rw, Expr *old, Expr *e) {
  (void)rw;
  (void)old;
  post_calls++;
  return e;
}

START_TEST(rw_pre_replaces_without_descending) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *e = call2("add", call1("exp", call1("negative", build_var(M, x, S0))), f32(1));
  Rewriter rw;
  rw_init(&rw, M, NULL);
  rw.pre = pre_cut;
  rw.post = count_post;
  post_calls = 0;
  Expr *r = rw_expr(&rw, e);
  ck_assert_int_eq(r->call.args[0]->kind, EXPR_CONST);
  ck_assert_int_eq(post_calls, 3); /* add's callee, 1f, add */
  rw_fini(&rw);
}
END_TEST

/* pre that rewrites another, long dataflow chain (a nested walk that grows the
 * rewriter's shared stack) at each exp call it meets, and replaces nothing */
static int exp_pre_calls;
static Expr *side_chain;
static Expr *pre_nested_walk(Rewriter *rw, Expr *e) {
  if (!op_call_is(e, "exp")) return NULL;
  exp_pre_calls++;
  rw_expr(rw, side_chain);
  return NULL;
}

START_TEST(rw_pre_with_nested_walk_runs_once) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  side_chain = build_var(M, x, S0);
  for (int i = 0; i < 5000; i++) side_chain = call1("negative", call2("add", side_chain, f32(1)));
  Expr *e = call2("add", call1("exp", build_var(M, x, S0)), f32(1));
  Rewriter rw;
  rw_init(&rw, M, NULL);
  rw.pre = pre_nested_walk;
  exp_pre_calls = 0;
  ck_assert_ptr_eq(rw_expr(&rw, e), e);
  /* the walk's own item for exp stays entered although the nested walk moved the stack
   * (a write through a stale pointer lost it: pre ran twice, ASan: heap-use-after-free) */
  ck_assert_int_eq(exp_pre_calls, 1);
  rw_fini(&rw);
}
END_TEST

/* post: every int32 constant 1 becomes 2 */
static Expr *one_to_two(Rewriter *rw, Expr *old, Expr *e) {
  (void)old;
  if (e->kind == EXPR_CONST && e->constant->ndim == 0 && dtype_eq(e->constant->dtype, DT_I32) &&
      const_scalar_as_int(e->constant) == 1)
    return expr_scalar_int(rw->m, DT_I32, 2, e->span);
  return e;
}

START_TEST(rw_long_let_chain) {
  enum { N = 100000 };
  Var **vs = mem_malloc(N * sizeof *vs);
  for (int i = 0; i < N; i++) vs[i] = build_fresh_var(M, "v", NULL, S0);
  Expr *body = build_var(M, vs[N - 1], S0);
  for (int i = N; i-- > 0;) {
    Expr *val = i == 0 ? expr_scalar_int(M, DT_I32, 1, S0)
                       : call2("add", build_var(M, vs[i - 1], S0), expr_scalar_int(M, DT_I32, 1, S0));
    body = build_let(M, vs[i], val, body, S0);
  }
  Rewriter rw;
  rw_init(&rw, M, NULL);
  rw.post = one_to_two;
  Expr *r = rw_expr(&rw, body);
  ck_assert(!rw.failed);
  int n = 0;
  for (Expr *l = r; l->kind == EXPR_LET; l = l->let.body, n++) {
    ck_assert_ptr_eq(l->let.var, vs[n]);
    Expr *c = n == 0 ? l->let.value : l->let.value->call.args[1];
    ck_assert_int_eq(const_scalar_as_int(c->constant), 2);
  }
  ck_assert_int_eq(n, N);
  rw_fini(&rw);
  mem_free(vs);
}
END_TEST

/* _i: 0 with the pointer-map memo, 1 with mark_memo */
START_TEST(rw_long_graph_chain) {
  enum { N = 100000 };
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *e = build_var(M, x, S0);
  for (int i = 0; i < N; i++) e = call2(i % 2 ? "add" : "multiply", e, e); /* each node used twice */
  Rewriter rw;
  rw_init(&rw, M, NULL);
  rw.post = add_to_sub;
  rw.mark_memo = _i == 1;
  Expr *r = rw_expr(&rw, e);
  ck_assert(!rw.failed);
  int n = 0;
  for (Expr *c = r; c->kind == EXPR_CALL; c = c->call.args[0], n++) {
    ck_assert(op_call_is(c, n % 2 ? "multiply" : "subtract"));
    ck_assert_ptr_eq(c->call.args[0], c->call.args[1]);
  }
  ck_assert_int_eq(n, N);
  rw_fini(&rw);
}
END_TEST

START_TEST(rw_deep_nesting_reported) {
  enum { N = 200000 }; /* nested ifs recurse: far beyond an 8 MiB stack */
  Expr *e = f32(1);
  for (int i = 0; i < N; i++) e = build_if(M, expr_scalar_bool(M, true, S0), e, f32(0), S0);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  Source *src = source_new("t.relay", mem_strdup(""), 0);
  Diag d;
  diag_init(&d, out, src);
  Rewriter rw;
  rw_init(&rw, M, &d);
  rw.post = one_to_two;
  Expr *r = rw_expr(&rw, e);
  ck_assert(rw.failed);
  ck_assert_ptr_nonnull(r);
  rw_fini(&rw);
  fclose(out);
  ck_assert_int_eq(d.nerrors, 1);
  ck_assert_msg(strstr(buf, "expression nested too deeply") != NULL, "%s", buf);
  free(buf);
  source_free(src);
}
END_TEST

START_TEST(rw_function_and_attrs) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Function *f = build_function(M, &x, 1, NULL, call2("add", build_var(M, x, S0), f32(1)), NULL, S0);
  f->type = type_scalar(M, DT_F32);
  Rewriter rw;
  rw_init(&rw, M, NULL);
  ck_assert(rw_function(&rw, f));
  ck_assert_ptr_nonnull(f->type); /* unchanged: the type stays */
  rw_fini(&rw);
  rw_init(&rw, M, NULL);
  rw.post = add_to_sub;
  ck_assert(rw_function(&rw, f));
  ck_assert(op_call_is(f->body, "subtract"));
  ck_assert_ptr_null(f->type); /* changed: to be re-inferred */
  rw_fini(&rw);
  ck_assert(!fn_has_attr(f, "Primitive"));
  f->attrs = attrs_parse_list(M, "Primitive=1, Compiler=\"ccompiler\"", false, NULL);
  ck_assert(fn_has_attr(f, "Primitive"));
  ck_assert(fn_skipped_by_function_passes(f));
  f->attrs = attrs_parse_list(M, "Primitive=0", false, NULL);
  ck_assert(!fn_has_attr(f, "Primitive"));
  ck_assert(!fn_skipped_by_function_passes(f));
}
END_TEST

/* ----------------------------------------------------------------- walks */

typedef struct Seen {
  PtrMap count;
  VEC(Expr *) order;
} Seen;

static void note(Expr *e, void *ud) {
  Seen *s = ud;
  (*ptrmap_slot(&s->count, e))++;
  vec_push(s->order, e);
}

static size_t pos(const Seen *s, const Expr *e) {
  for (size_t i = 0; i < s->order.len; i++)
    if (s->order.data[i] == e) return i;
  return SIZE_MAX;
}

START_TEST(walk_visits_each_node_once) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *a = call2("add", build_var(M, x, S0), build_var(M, x, S0));
  Expr *b = call1("exp", a), *c = call1("negative", a); /* a diamond */
  Expr *root = call2("multiply", call2("add", b, c), b);
  Seen s = {0};
  walk_post_order(root, true, note, &s);
  for (size_t i = 0; i < s.count.cap; i++)
    if (s.count.slots[i].key) ck_assert_int_eq(s.count.slots[i].val, 1);
  /* 5 calls, each with its own operator leaf, and 2 uses of %x */
  ck_assert_int_eq(s.order.len, 12);
  ck_assert(pos(&s, a) < pos(&s, b) && pos(&s, a) < pos(&s, c));
  ck_assert(pos(&s, b) < pos(&s, root) && s.order.data[s.order.len - 1] == root);
  ptrmap_free(&s.count);
  vec_free(s.order);
}
END_TEST

START_TEST(walk_function_bodies_optional) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Function *f = build_function(M, &x, 1, NULL, call1("exp", build_var(M, x, S0)), NULL, S0);
  Expr *root = build_tuple(M, (Expr *[]){build_fn(M, f, S0), f32(1)}, 2, S0);
  Seen s = {0};
  walk_post_order(root, false, note, &s);
  ck_assert_int_eq(s.order.len, 3); /* tuple, fn, 1f */
  s.order.len = 0;
  ptrmap_free(&s.count);
  walk_post_order(root, true, note, &s);
  ck_assert_int_eq(s.order.len, 6); /* + exp call, its callee, %x */
  ptrmap_free(&s.count);
  vec_free(s.order);
}
END_TEST

/* A walk inside a visit callback (a nested walk of the same nodes), with
 * marks set beforehand as a pass's mark-keyed table would: every node once
 * per walk, and every mark as it was afterwards. */
typedef struct Nested {
  Seen outer, inner;
} Nested;

static void note_inner(Expr *e, void *ud) { note(e, &((Nested *)ud)->inner); }

static void note_and_walk(Expr *e, void *ud) {
  Nested *n = ud;
  note(e, &n->outer);
  walk_post_order(e, true, note_inner, n);
}

START_TEST(walk_keeps_marks_and_nests) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *a = call2("add", build_var(M, x, S0), build_var(M, x, S0));
  Expr *b = call1("exp", a), *c = call1("negative", a);
  Expr *root = call2("multiply", call2("add", b, c), b);
  Seen all = {0};
  walk_post_order(root, true, note, &all);
  for (size_t i = 0; i < all.order.len; i++) all.order.data[i]->mark = (uint32_t)(7 * i + 3);
  Nested n;
  memset(&n, 0, sizeof n);
  walk_post_order(root, true, note_and_walk, &n);
  ck_assert_int_eq(n.outer.order.len, 12);
  for (size_t i = 0; i < n.outer.count.cap; i++)
    if (n.outer.count.slots[i].key) ck_assert_int_eq(n.outer.count.slots[i].val, 1);
  for (size_t i = 0; i < all.order.len; i++) ck_assert_uint_eq(all.order.data[i]->mark, 7 * i + 3);
  ptrmap_free(&all.count);
  vec_free(all.order);
  ptrmap_free(&n.outer.count);
  vec_free(n.outer.order);
  ptrmap_free(&n.inner.count);
  vec_free(n.inner.order);
}
END_TEST

static void count_only(Expr *e, void *ud) {
  (void)e;
  (*(uint64_t *)ud)++;
}

START_TEST(walk_long_chains) {
  enum { N = 100000 };
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *e = build_var(M, x, S0);
  for (int i = 0; i < N; i++) e = call2("add", e, e);
  uint64_t n = 0;
  walk_post_order(e, true, count_only, &n);
  ck_assert_uint_eq(n, 2u * N + 1); /* calls + their callees + %x */
  Expr *l = f32(0);
  for (int i = 0; i < N; i++) l = build_let(M, build_fresh_var(M, "v", NULL, S0), f32(1), l, S0);
  n = 0;
  walk_post_order(l, true, count_only, &n);
  ck_assert_uint_eq(n, 2u * N + 1);
}
END_TEST

/* ------------------------------------------------------------------ build */

START_TEST(build_fresh_names_and_copies) {
  Var *a = build_fresh_var(M, "x", NULL, S0), *b = build_fresh_var(M, "x", NULL, S0);
  ck_assert_str_eq(var_name(a), "x_0");
  ck_assert_str_eq(var_name(b), "x_1");
  ck_assert_uint_ne(a->id, b->id);
  Var *c = build_var_like(M, a);
  ck_assert_str_eq(var_name(c), "x_0");
  ck_assert_ptr_ne(c, a);
  Expr *call = call2("add", build_var(M, a, S0), f32(2));
  call->type = type_scalar(M, DT_F32);
  call->mark = 7;
  Expr *cp = build_copy(M, call);
  ck_assert_int_eq(cp->kind, EXPR_CALL);
  ck_assert_ptr_eq(cp->call.fn, call->call.fn);
  ck_assert_ptr_eq(cp->call.args, call->call.args);
  ck_assert_ptr_null(cp->type);
  ck_assert_uint_eq(cp->mark, 0);
  Expr *leaf = build_copy(M, call->call.args[0]);
  ck_assert_int_eq(leaf->kind, EXPR_VAR);
  ck_assert_ptr_eq(leaf->var.var, a);
  float data[6] = {1, 2, 3, 4, 5, 6};
  Expr *k = build_const(M, DT_F32, 2, (int64_t[]){2, 3}, data, S0);
  data[0] = 9;
  ck_assert_uint_eq(k->constant->nbytes, sizeof data);
  ck_assert(((float *)k->constant->data)[0] == 1.0f);
  ck_assert_int_eq(k->constant->meta_index, -1);
}
END_TEST

START_TEST(build_globals) {
  for (int i = 0; i < 40; i++) {
    char name[16];
    snprintf(name, sizeof name, "g%d", i);
    build_global_def(M, name, build_function(M, NULL, 0, NULL, f32(i), NULL, S0), S0);
  }
  ck_assert_uint_eq(M->ndefs, 40);
  ck_assert_ptr_eq(module_find_global(M, "g17"), M->defs[17]);
  ck_assert_ptr_null(module_find_global(M, "h"));
  ck_assert_str_eq(module_fresh_global_name(M, "h"), "h");
  ck_assert_str_eq(module_fresh_global_name(M, "g5"), "g51");
  ck_assert_str_eq(module_fresh_global_name(M, "g1"), "g110"); /* g11 ... g19 are taken */
}
END_TEST

/* Built nodes type-check: a parsed module whose body is replaced by
 * `let %x_N = add(%a, 1f); multiply(%x_N, %x_N)` built with ir/build.h. */
START_TEST(build_output_type_checks) {
  const char *text = "#[version = \"0.0.5\"]\ndef @main(%a: float32) -> float32 {\n  %a\n}\n";
  Source *src = source_new("t.relay", mem_strdup(text), strlen(text));
  Diag d;
  diag_init(&d, stderr, src);
  Module *m = parse_module(src, &d);
  resolve_module(m, &d);
  ck_assert(infer_module(m, &d));
  Function *f = m->defs[0]->fn;
  Var *a = f->params[0];
  Var *v = build_fresh_var(m, "x", NULL, f->body->span);
  Expr *val = op_call(m, "add", (Expr *[]){build_var(m, a, S0), expr_scalar_float(m, DT_F32, 1, S0)}, 2, NULL, S0);
  Expr *use = op_call(m, "multiply", (Expr *[]){build_var(m, v, S0), build_var(m, v, S0)}, 2, NULL, S0);
  f->body = build_let(m, v, val, use, f->body->span);
  infer_clear(m);
  ck_assert(infer_module(m, &d));
  ck_assert_int_eq(d.nerrors, 0);
  ck_assert_int_eq(v->type->kind, TYPE_TENSOR);
  ck_assert(dtype_eq(v->type->tensor.dtype, DT_F32));
  module_free(m);
  source_free(src);
}
END_TEST

/* Two roots sharing a subtree: one numbering, the shared nodes listed once
 * (under the first root), children before parents; a node whose mark was
 * reused since is no longer vouched for. */
START_TEST(dag_scan_several_roots) {
  Var *x = build_fresh_var(M, "x", NULL, S0);
  Expr *shared = call1("exp", build_var(M, x, S0));
  Expr *r1 = call2("add", shared, f32(1));
  Expr *r2 = call2("multiply", shared, shared);
  DagScan s;
  dag_scan_roots(&s, (Expr *[]){r1, r2, r1}, 3, true);
  /* r1: add, its callee, exp, exp's callee, %x, 1f; r2: multiply and its callee */
  ck_assert_uint_eq(s.n, 8);
  uint32_t k;
  ck_assert(dag_scanned(&s, shared, &k));
  ck_assert_ptr_eq(s.pre[k], shared);
  ck_assert_uint_lt(dag_index(&s, shared), dag_index(&s, r1));
  ck_assert_uint_lt(dag_index(&s, r1), dag_index(&s, r2)); /* each root after its new nodes */
  ck_assert_ptr_eq(dag_node(&s, s.n - 1), r2);
  ck_assert_uint_eq(s.uses[k], 3); /* once from add, twice from multiply */
  ck_assert(dag_scanned(&s, r1, &k));
  ck_assert_uint_eq(s.uses[k], 0); /* a root: no parent */
  shared->mark = 0;
  ck_assert(!dag_scanned(&s, shared, &k));
  ck_assert_uint_eq(dag_index(&s, shared), UINT32_MAX);
  dag_free(&s);
}
END_TEST

static Suite *rewrite_suite(void) {
  Suite *s = suite_create("rewrite");
  TCase *tc = tcase_create("rewriter");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, rw_no_change_same_pointers);
  tcase_add_loop_test(tc, rw_sharing_preserved, 0, 2);
  tcase_add_test(tc, rw_mark_memo_gives_marks_back);
  tcase_add_test(tc, rw_unchanged_subtree_kept);
  tcase_add_test(tc, rw_substitution);
  tcase_add_test(tc, rw_hook_order_is_recursive_order);
  tcase_add_test(tc, rw_pre_replaces_without_descending);
  tcase_add_test(tc, rw_pre_with_nested_walk_runs_once);
  tcase_add_test(tc, rw_long_let_chain);
  tcase_add_loop_test(tc, rw_long_graph_chain, 0, 2);
  tcase_add_test(tc, rw_deep_nesting_reported);
  tcase_add_test(tc, rw_function_and_attrs);
  suite_add_tcase(s, tc);
  tc = tcase_create("walk");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, walk_visits_each_node_once);
  tcase_add_test(tc, walk_function_bodies_optional);
  tcase_add_test(tc, walk_keeps_marks_and_nests);
  tcase_add_test(tc, walk_long_chains);
  tcase_add_test(tc, dag_scan_several_roots);
  suite_add_tcase(s, tc);
  tc = tcase_create("build");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, build_fresh_names_and_copies);
  tcase_add_test(tc, build_globals);
  tcase_add_test(tc, build_output_type_checks);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(rewrite_suite());
}
