/* tests/unit/check_retype.c — the incremental re-typing after a pass
 * (sema/infer.c infer_module_incremental, driven by transform/pass.c).
 *
 * Each case parses and types a module, then changes it the way a pass
 * would (new nodes, a node replaced in place, an annotation changed in
 * place, a global's signature changed), re-types incrementally and checks
 * the new types, then checks them against a full re-inference
 * (infer_verify_module, the RELAYC_VERIFY_RETYPE check). A stale type a
 * case leaves on purpose must be reported by that check.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/build.h"
#include "ir/mem.h"
#include "ir/print.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/registry.h"
#include "parser/parser.h"
#include "sema/call_memo.h"
#include "sema/infer.h"
#include "sema/typeof.h"
#include "tests/unit/unit_run.h"
#include "tests/unit/ut_prog.h"
#include "transform/pass.h"

/* Loads `body` after the version header. */
static void load(UtProg *p, const char *body) {
  static const char head[] = "#[version = \"0.0.5\"]\n";
  size_t n = strlen(head) + strlen(body);
  char *text = mem_malloc(n + 1);
  snprintf(text, n + 1, "%s%s", head, body);
  ut_load(p, text);
  mem_free(text);
}

static char *tystr(const Type *t) {
  static char buf[4][512];
  static int k;
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  if (t) print_type(f, t);
  else fputs("(none)", f);
  fclose(f);
  char *out = buf[k++ % 4];
  snprintf(out, sizeof buf[0], "%s", s);
  free(s);
  return out;
}

static GlobalDef *global(Module *m, const char *name) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, name) == 0) return m->defs[i];
  ck_abort_msg("no global @%s", name);
  return NULL;
}

/* What the runner passes: which globals changed, their signatures before. */
static InferIncResult retype(UtProg *p, const bool *changed, Type **old_sigs, InferIncStats *st) {
  return infer_module_incremental(p->m, changed, old_sigs, &p->d, st);
}

static Type *parse_ty(UtProg *p, const char *text) {
  /* a type by way of a throw-away annotation: `fn (%t: TEXT) { %t }` */
  char buf[256];
  snprintf(buf, sizeof buf, "def @t(%%t: %s) { %%t }", text);
  UtProg q;
  load(&q, buf);
  Type *t = q.m->defs[0]->fn->params[0]->annot;
  /* copy into p's arena: the tensor types used here have no pointers but dims */
  Type *c = type_new(p->m, t->kind, t->span);
  *c = *t;
  if (t->kind == TYPE_TENSOR) {
    c->tensor.dims = arena_alloc(p->m->arena, (t->tensor.ndim ? t->tensor.ndim : 1) * sizeof(Dim));
    if (t->tensor.ndim) memcpy(c->tensor.dims, t->tensor.dims, t->tensor.ndim * sizeof(Dim));
  }
  ut_unload(&q);
  return c;
}

/* ------------------------------------------------------------------ cases */

/* Nothing changed: the globals are not visited at all and keep their types. */
START_TEST(unchanged_globals_skipped) {
  UtProg p;
  load(&p, "def @f(%x: Tensor[(3), float32]) -> Tensor[(3), float32] { negative(%x) }\n"
           "def @main(%a: Tensor[(3), float32]) { @f(add(%a, 1f)) }\n");
  Type *body_t = global(p.m, "main")->fn->body->type;
  bool changed[2] = {false, false};
  InferIncStats st;
  ck_assert_int_eq(retype(&p, changed, NULL, &st), INFER_INC_OK);
  ck_assert_uint_eq(st.globals_skipped, 2);
  ck_assert_uint_eq(st.globals_checked, 0);
  ck_assert_ptr_eq(global(p.m, "main")->fn->body->type, body_t);
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* A new node over kept ones: only the new spine is inferred. */
START_TEST(new_nodes_over_kept_ones) {
  UtProg p;
  load(&p, "def @main(%a: Tensor[(2, 3), float32]) {\n"
           "  %0 = add(%a, 1f);\n  %1 = multiply(%0, %0);\n  exp(%1)\n}\n");
  Function *fn = global(p.m, "main")->fn;
  Expr *kept = fn->body->call.args[0]; /* multiply(...) */
  Type *kept_t = kept->type;
  /* the "pass": exp(%1) -> sum(%1, axis=[1]) */
  fn->body = op_call(p.m, "sum", (Expr *[]){kept}, 1, "axis=[1]", fn->body->span);
  bool changed[1] = {true};
  Type *old_sig[1] = {fn->type};
  InferIncStats st;
  ck_assert_int_eq(retype(&p, changed, old_sig, &st), INFER_INC_OK);
  ck_assert_str_eq(tystr(fn->body->type), "Tensor[(2), float32]");
  ck_assert_ptr_eq(kept->type, kept_t); /* a typed leaf */
  ck_assert_uint_eq(st.nodes_retyped, 1);
  ck_assert_uint_ge(st.nodes_kept, 1);
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* A pass changes a parameter's annotation in place: every use of it and
 * everything computed from it gets the new type. */
START_TEST(annotation_changed_in_place) {
  UtProg p;
  load(&p, "def @main(%x: Tensor[(3), float32]) {\n"
           "  let %y = negative(%x);\n  let %z = (%y, %x);\n  %z.0\n}\n");
  Function *fn = global(p.m, "main")->fn;
  Type *old = fn->type;
  fn->params[0]->annot = parse_ty(&p, "Tensor[(3), float16]");
  bool changed[1] = {true};
  Type *old_sig[1] = {old};
  ck_assert_int_eq(retype(&p, changed, old_sig, NULL), INFER_INC_OK);
  ck_assert_str_eq(tystr(fn->type), "fn (Tensor[(3), float16]) -> Tensor[(3), float16]");
  Expr *let_y = fn->body;
  ck_assert_str_eq(tystr(let_y->let.var->type), "Tensor[(3), float16]");
  ck_assert_str_eq(tystr(let_y->let.value->type), "Tensor[(3), float16]");
  ck_assert_str_eq(tystr(let_y->let.body->let.var->type), "(Tensor[(3), float16], Tensor[(3), float16])");
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* A let variable annotated by the pass (in place) to another type than its
 * value has: the re-typing must reject it, not keep the old type. */
START_TEST(let_annotation_changed_rejected) {
  UtProg p;
  load(&p, "def @main(%x: Tensor[(3), float32]) {\n  let %y = negative(%x);\n  %y\n}\n");
  Function *fn = global(p.m, "main")->fn;
  fn->body->let.var->annot = parse_ty(&p, "Tensor[(3), int32]");
  bool changed[1] = {true};
  ck_assert_int_eq(retype(&p, changed, NULL, NULL), INFER_INC_ERROR);
  ck_assert_ptr_nonnull(strstr(ut_errors(&p), "annotated Tensor[(3), int32]"));
  ut_unload(&p);
}
END_TEST

/* A child replaced in place by a new (untyped) node: its parents are new too. */
START_TEST(child_replaced_in_place) {
  UtProg p;
  load(&p, "def @main(%a: Tensor[(4), float32]) {\n  %0 = add(%a, 1f);\n  (%0, negative(%0))\n}\n");
  Function *fn = global(p.m, "main")->fn;
  Expr *neg = fn->body->tuple.fields[1];
  neg->call.args[0] = op_call(p.m, "cast", (Expr *[]){fn->body->tuple.fields[0]}, 1, "dtype=\"float16\"", neg->span);
  bool changed[1] = {true};
  ck_assert_int_eq(retype(&p, changed, NULL, NULL), INFER_INC_OK);
  ck_assert_str_eq(tystr(neg->type), "Tensor[(4), float16]");
  ck_assert_str_eq(tystr(fn->body->type), "(Tensor[(4), float32], Tensor[(4), float16])");
  ck_assert_str_eq(tystr(fn->type->func.ret), "(Tensor[(4), float32], Tensor[(4), float16])");
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* A polymorphic value whose type its context chose (Nil) is inferred again
 * when the context changes. */
START_TEST(polymorphic_context_changes) {
  UtProg p;
  load(&p, "type List[A] { Cons(A, List[A]), Nil }\n"
           "def @main() {\n  let %n = Nil;\n  Cons(1f, %n)\n}\n");
  Function *fn = global(p.m, "main")->fn;
  Expr *cons = fn->body->let.body;
  cons->call.args[0] = expr_scalar_int(p.m, DTYPE(DT_INT, 32), 7, cons->span);
  bool changed[1] = {true};
  ck_assert_int_eq(retype(&p, changed, NULL, NULL), INFER_INC_OK);
  ck_assert_str_eq(tystr(fn->body->let.var->type), "List[int32]");
  ck_assert_str_eq(tystr(fn->body->let.value->type), "List[int32]");
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* Inside a polymorphic global nothing with a type parameter is kept. */
START_TEST(polymorphic_function_body) {
  UtProg p;
  load(&p, "def @pair[A](%x: A) -> (A, A) { (%x, %x) }\n"
           "def @main() { @pair(1f) }\n");
  Function *fn = global(p.m, "pair")->fn;
  fn->body = build_tuple(p.m, (Expr *[]){fn->body->tuple.fields[1], fn->body->tuple.fields[0]}, 2, fn->body->span);
  bool changed[2] = {true, false};
  Type *old_sig[2] = {fn->type, global(p.m, "main")->fn->type};
  ck_assert_int_eq(retype(&p, changed, old_sig, NULL), INFER_INC_OK);
  ck_assert_str_eq(tystr(fn->body->type), "(A, A)");
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* A global whose signature changed while kept code calls it: the runner
 * must re-type from scratch. */
START_TEST(signature_change_needs_full) {
  UtProg p;
  load(&p, "def @f(%x: Tensor[(3), float32]) { negative(%x) }\n"
           "def @main(%a: Tensor[(3), float32]) { @f(%a) }\n");
  GlobalDef *f = global(p.m, "f");
  Type *old_f = f->fn->type;
  f->fn->body = op_call(p.m, "cast", (Expr *[]){f->fn->body}, 1, "dtype=\"float16\"", f->fn->body->span);
  bool changed[2] = {true, false};
  Type *old_sig[2] = {old_f, global(p.m, "main")->fn->type};
  ck_assert_int_eq(retype(&p, changed, old_sig, NULL), INFER_INC_NEED_FULL);
  infer_clear(p.m);
  ck_assert(infer_module(p.m, &p.d));
  ck_assert_str_eq(tystr(global(p.m, "main")->fn->type->func.ret), "Tensor[(3), float16]");
  ut_unload(&p);
}
END_TEST

/* A global whose parameters carry no annotation is typed by its callers: it
 * is visited even when unchanged. */
/* The same when the caller is re-checked too: its call of @f is kept (its
 * type is @f's old result), so the module still needs a full re-typing; a
 * caller whose nodes are all inferred again does not. */
START_TEST(signature_change_kept_call_in_checked_global) {
  for (int redo_call = 0; redo_call < 2; redo_call++) {
    UtProg p;
    load(&p, "def @f(%x: Tensor[(3), float32]) { negative(%x) }\n"
             "def @main(%a: Tensor[(3), float32]) { exp(@f(%a)) }\n");
    GlobalDef *f = global(p.m, "f"), *mn = global(p.m, "main");
    Type *old_f = f->fn->type;
    f->fn->body = op_call(p.m, "cast", (Expr *[]){f->fn->body}, 1, "dtype=\"float16\"", f->fn->body->span);
    if (redo_call) { /* a new call node: inferred against the new signature */
      Expr *call = mn->fn->body->call.args[0];
      mn->fn->body = op_call(p.m, "exp", (Expr *[]){build_copy(p.m, call)}, 1, NULL, mn->fn->body->span);
    }
    bool changed[2] = {true, true};
    Type *old_sig[2] = {old_f, mn->fn->type};
    ck_assert_int_eq(retype(&p, changed, old_sig, NULL), redo_call ? INFER_INC_OK : INFER_INC_NEED_FULL);
    if (redo_call) ck_assert(infer_verify_module(p.m, &p.d, "test"));
    ut_unload(&p);
  }
}
END_TEST

START_TEST(caller_typed_global_visited) {
  UtProg p;
  load(&p, "def @id(%x) { %x }\n"
           "def @main(%a: Tensor[(3), float32]) { @id(%a) }\n");
  GlobalDef *main = global(p.m, "main");
  main->fn->body = build_call(p.m, build_global(p.m, global(p.m, "id"), main->fn->body->span),
                              (Expr *[]){expr_scalar_int(p.m, DTYPE(DT_INT, 32), 1, main->fn->body->span)}, 1,
                              main->fn->body->span);
  main->fn->ret_annot = NULL;
  bool changed[2] = {false, true};
  InferIncStats st;
  ck_assert_int_eq(retype(&p, changed, NULL, &st), INFER_INC_OK);
  ck_assert_uint_eq(st.globals_skipped, 0);
  ck_assert_str_eq(tystr(global(p.m, "id")->fn->type), "fn (int32) -> int32");
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* A stale type (a pass mutated a typed node in place without clearing it):
 * the verification reports it, naming who. */
START_TEST(verify_catches_stale_type) {
  UtProg p;
  load(&p, "def @main(%a: Tensor[(3), float32]) {\n  %0 = negative(%a);\n  exp(%0)\n}\n");
  Function *fn = global(p.m, "main")->fn;
  Expr *neg = fn->body->call.args[0];
  /* negative(%a) becomes sum(%a) in place, its type left as it was */
  Expr *sum = op_call(p.m, "sum", (Expr *[]){neg->call.args[0]}, 1, NULL, neg->span);
  neg->call.fn = sum->call.fn;
  neg->call.attrs = sum->call.attrs;
  fn->body = build_tuple(p.m, (Expr *[]){neg}, 1, fn->body->span);
  bool changed[1] = {true};
  ck_assert_int_eq(retype(&p, changed, NULL, NULL), INFER_INC_OK); /* trusted: a kept node */
  ck_assert_str_eq(tystr(neg->type), "Tensor[(3), float32]");
  ck_assert(!infer_verify_module(p.m, &p.d, "pass Test"));
  ck_assert_ptr_nonnull(strstr(ut_errors(&p), "pass Test: stale type"));
  ck_assert_str_eq(tystr(neg->type), "float32"); /* the full types are left */
  ut_unload(&p);
}
END_TEST

/* The same through the pass runner, with PassRunOptions.verify_retype:
 * every pass of -O3 on a small network keeps types equal to a full
 * re-inference. */
START_TEST(runner_verify_o3) {
  UtProg p;
  load(&p, "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],\n"
           "          %g: Tensor[(4), float32], %b: Tensor[(4), float32]) {\n"
           "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);\n"
           "  %1 = nn.batch_norm(%0, %g, %b, %g, %b);\n"
           "  %2 = nn.relu(%1.0);\n"
           "  %3 = add(%2, %2);\n"
           "  nn.global_avg_pool2d(%3)\n}\n");
  PassPipeline pl;
  pass_pipeline_init(&pl);
  pass_pipeline_add_opt_level(&pl, 3);
  ck_assert(pass_pipeline_parse(&pl, "ToANormalForm,ToGraphNormalForm,DeadCodeElimination,ToMixedPrecision", stderr));
  PassRunOptions ro = {.verify_retype = true};
  int st = pass_pipeline_run(&pl, p.m, &p.d, &ro);
  pass_pipeline_fini(&pl);
  ck_assert_msg(st == 0, "%s", ut_errors(&p));
  ck_assert_str_eq(tystr(global(p.m, "main")->fn->type->func.ret), "Tensor[(1, 4, 1, 1), float32]");
  ut_unload(&p);
}
END_TEST

/* FoldConstant folding arange of constant bounds inside a let-bound literal
 * (its body's type was Tensor[(?)], now (1024)): the literal, its variable
 * and the call of it had kept the old (?) type through the pass's check of
 * the folded body ("stale type after incremental re-typing" under
 * verify_retype; pass fuzzer, session 9 seed 9 input 7169). */
START_TEST(fold_constant_refreshes_dynamic_types) {
  static const char *const progs[] = {
      "def @main() {\n"
      "  %0 = arange(0.1f, 1024.1f, 1f);\n"
      "  let %f = fn () { multiply(%0, 0.3f) };\n"
      "  %f()\n}\n",
      "def @main() {\n"
      "  %0 = arange(0.1f, 1024.1f, 1f);\n"
      "  %1 = fn () {\n"
      "    %2 = (let %g = fn () { fn () { %0 }() }; (%g, %g).1);\n"
      "    %2()\n  };\n"
      "  sum(%1())\n}\n",
      /* arange's empty range makes the folded reshape ill-typed: the
       * function keeps its unfolded body, which must be typed as before
       * (the first fix had left nodes both bodies share untyped) */
      "def @main() {\n"
      "  %0 = arange(0f, -1e+30f, 1f);\n"
      "  %1 = reshape(%0, newshape=[3, 2]);\n"
      "  %2 = reshape(arange(0.5f, 7f, 1f), newshape=[3, 2]);\n"
      "  (multiply(%1, %1), %2)\n}\n",
  };
  static const char *const rets[] = {"Tensor[(1024), float32]", "float32",
                                     "(Tensor[(3, 2), float32], Tensor[(3, 2), float32])"};
  for (size_t i = 0; i < sizeof progs / sizeof *progs; i++) {
    UtProg p;
    load(&p, progs[i]);
    PassPipeline pl;
    pass_pipeline_init(&pl);
    ck_assert(pass_pipeline_parse(&pl, "FoldConstant", stderr));
    PassRunOptions ro = {.verify_retype = true};
    int st = pass_pipeline_run(&pl, p.m, &p.d, &ro);
    pass_pipeline_fini(&pl);
    ck_assert_msg(st == 0, "%s", ut_errors(&p));
    ck_assert_int_eq(p.d.nerrors, 0);
    ck_assert_str_eq(tystr(global(p.m, "main")->fn->type->func.ret), rets[i]);
    ut_unload(&p);
  }
}
END_TEST

/* ResolveStaticRefs forwarding a Tensor[(?)] argument (arange with None
 * bounds) into a literal whose parameter is annotated (2): after
 * ToANormalForm the let-bound uses had type (2), the forwarded value (?), and
 * the residual calls kept (2) ("stale type after incremental re-typing";
 * pass fuzzer, session 12 seed 70 input 2897, a mutant of
 * golden/grad/ops/relayc_add_scaled_values.relay). The pass now leaves such
 * a function as it was. */
START_TEST(static_refs_less_precise_argument) {
  UtProg p;
  load(&p, "def @main() {\n"
           "  %0 = arange(1f, 3f, 1f, start=None, stop=None, step=None, dtype=\"float32\");\n"
           "  %3 = fn (%a: Tensor[(2), float32]) {\n"
           "    let %c = ref(zeros_like(%a));\n"
           "    %1 = ref_read(%c);\n"
           "    %2 = add(%1, multiply(%a, %a));\n"
           "    let %w = ref_write(%c, %2);\n"
           "    (multiply(%a, 2f), ref_read(%c))\n"
           "  };\n"
           "  %3(%0)\n}\n");
  PassPipeline pl;
  pass_pipeline_init(&pl);
  ck_assert(pass_pipeline_parse(&pl, "ToANormalForm,ResolveStaticRefs", stderr));
  PassRunOptions ro = {.verify_retype = true};
  int st = pass_pipeline_run(&pl, p.m, &p.d, &ro);
  pass_pipeline_fini(&pl);
  ck_assert_msg(st == 0, "%s", ut_errors(&p));
  ck_assert_int_eq(p.d.nerrors, 0);
  ut_unload(&p);
}
END_TEST

/* Passes that give the nodes they build their types (ir/build.h
 * build_typed, the Rewriter's keep_types): after them the incremental
 * re-typing infers nothing again (the --time-passes count), and the types
 * equal a full re-inference (verify_retype). */
static unsigned long long retyped_by(const char *prog, const char *passes) {
  UtProg p;
  load(&p, prog);
  char *rep = NULL;
  size_t replen = 0;
  FILE *tp = open_memstream(&rep, &replen);
  PassPipeline pl;
  pass_pipeline_init(&pl);
  ck_assert(pass_pipeline_parse(&pl, passes, stderr));
  PassRunOptions ro = {.verify_retype = true, .time_passes = tp};
  int st = pass_pipeline_run(&pl, p.m, &p.d, &ro);
  pass_pipeline_fini(&pl);
  fclose(tp);
  ck_assert_msg(st == 0, "%s: %s", passes, ut_errors(&p));
  const char *at = strstr(rep, "incremental (");
  ck_assert_msg(at, "%s", rep);
  unsigned long long n = strtoull(at + strlen("incremental ("), NULL, 10);
  free(rep);
  ut_unload(&p);
  return n;
}

static const char typed_graph[] =
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
    "  %0 = add(%x, %y);\n"
    "  %1 = nn.relu(%0);\n"
    "  %2 = (%1, %0);\n"
    "  %3 = multiply(%2.0, %x);\n"
    "  %4 = sum(%3, axis=[1]);\n"
    "  %5 = split(%1, indices_or_sections=3, axis=1);\n"
    "  %6 = add(%5.1, 1f);\n"
    "  (%4, %6, concatenate(%2, axis=0))\n}\n";
static const char typed_lets[] =
    "def @main(%x: Tensor[(2, 3), float32]) {\n"
    "  let %a = add(%x, %x);\n"
    "  let %b = nn.relu(%a);\n"
    "  let %c = (%a, %b);\n"
    "  let %d = if (less(sum(%b), 0f)) { %c.0 } else { exp(%c.1) };\n"
    "  %d\n}\n";

START_TEST(typed_fuse_ops) {
  ck_assert_uint_eq(retyped_by(typed_graph, "FuseOps"), 0);
  ck_assert_uint_eq(retyped_by(typed_lets, "FuseOps"), 0);
  ck_assert_uint_eq(retyped_by(typed_graph, "FuseOps(fuse_opt_level=0)"), 0);
}
END_TEST

/* arange's length comes from a constant stop: as a fused function's
 * parameter it is unknown, so that group is left to inference (and the
 * verification agrees). */
START_TEST(typed_fuse_ops_arange) {
  ck_assert_uint_gt(retyped_by("def @main() { %0 = arange(0f, 3f, 1f); exp(%0) }\n", "FuseOps"), 0);
}
END_TEST

/* Runs `passes` through the runner with verify_retype and returns the number
 * the --time-passes summary gives for "nodes inferred again". */
static long run_counting_retyped(UtProg *p, const char *passes) {
  PassPipeline pl;
  pass_pipeline_init(&pl);
  ck_assert(pass_pipeline_parse(&pl, passes, stderr));
  char *buf = NULL;
  size_t len = 0;
  FILE *tp = open_memstream(&buf, &len);
  PassRunOptions ro = {.time_passes = tp, .verify_retype = true};
  int st = pass_pipeline_run(&pl, p->m, &p->d, &ro);
  pass_pipeline_fini(&pl);
  fclose(tp);
  ck_assert_msg(st == 0, "%s", ut_errors(p));
  const char *at = strstr(buf, "incremental (");
  ck_assert_msg(at != NULL, "%s", buf);
  long n = strtol(at + strlen("incremental ("), NULL, 10);
  free(buf);
  return n;
}

/* The gradients give every node they build its type (sema/typeof.h): on
 * monomorphic code the re-typing infers nothing again (it inferred the whole
 * output before), and the types equal a full re-inference. */
START_TEST(gradient_output_typed) {
  static const char *const graph =
      "def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(3), float32]) -> (Tensor[(2, 3), float32], float32) {\n"
      "  %0 = add(%x, %w);\n  %1 = nn.softmax(%0);\n  %2 = multiply(%1, %x);\n"
      "  %3 = fn (%a: Tensor[(2, 3), float32]) { exp(%a) };\n"
      "  %4 = %3(%2);\n  (%4, sum(%4))\n}\n";
  static const char *const lets =
      "def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(3), float32]) -> (Tensor[(2, 3), float32], float32) {\n"
      "  let %f = fn (%a: Tensor[(2, 3), float32]) { exp(%a) };\n"
      "  let %y = %f(multiply(nn.softmax(add(%x, %w)), %x));\n"
      "  let %c = ref(%y);\n  let %u = ref_write(%c, add(ref_read(%c), %y));\n"
      "  let %z = if (True) { ref_read(%c) } else { %y };\n  (%z, sum(%z))\n}\n";
  static const char *const cases[][2] = {{graph, "Gradient"}, {graph, "FirstOrderGradient"}, {lets, "Gradient"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    UtProg p;
    load(&p, cases[i][0]);
    ck_assert_int_eq(run_counting_retyped(&p, cases[i][1]), 0);
    ck_assert_str_eq(tystr(global(p.m, "main")->fn->type->func.ret),
                     "((Tensor[(2, 3), float32], float32), (Tensor[(2, 3), float32], Tensor[(3), float32]))");
    ut_unload(&p);
  }
}
END_TEST

/* ToANormalForm, ToGraphNormalForm, ToBasicBlockNormalForm and FastMath too
 * (typed_lets has exp, so FastMath rewrites something there). */
START_TEST(typed_normal_forms) {
  const char *passes[] = {"ToANormalForm", "ToGraphNormalForm", "ToBasicBlockNormalForm",
                          "ToANormalForm,ToGraphNormalForm", "ToANormalForm,FuseOps", "FastMath"};
  for (size_t i = 0; i < sizeof passes / sizeof *passes; i++) {
    ck_assert_uint_eq(retyped_by(typed_graph, passes[i]), 0);
    ck_assert_uint_eq(retyped_by(typed_lets, passes[i]), 0);
  }
}
END_TEST

/* Where a type is not fixed by the children (a polymorphic literal, an ADT
 * constructor), the node stays untyped and the re-typing infers it. */
START_TEST(gradient_polymorphic_left_to_inference) {
  UtProg p;
  load(&p, "type Box[A] { B(A) }\n"
           "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n"
           "  let %id = fn [T](%t: T) -> T { %t };\n"
           "  match (B(%id(%x))) { B(%y) => multiply(%y, %y) }\n}\n");
  ck_assert_int_gt(run_counting_retyped(&p, "Gradient"), 0);
  ck_assert_str_eq(tystr(global(p.m, "main")->fn->type->func.ret),
                   "(Tensor[(3), float32], (Tensor[(3), float32],))");
  ut_unload(&p);
}
END_TEST

/* Where a normal form changes a type, the node is left to inference: ANF
 * binds arange's constants to variables (its length becomes unknown), GNF
 * puts a constant back in place of its variable, or a value in place of a
 * variable annotated with a less precise type. */
START_TEST(typed_normal_forms_type_changes) {
  ck_assert_uint_gt(retyped_by("def @main() { exp(arange(0f, 3f, 1f)) }\n", "ToANormalForm"), 0);
  ck_assert_uint_gt(retyped_by("def @main() { let %s = 3f; exp(arange(0f, %s, 1f)) }\n", "ToGraphNormalForm"), 0);
  ck_assert_uint_gt(retyped_by("def @main(%x: Tensor[(3), float32]) {\n"
                               "  let %v: Tensor[(?), float32] = negative(%x);\n"
                               "  (exp(%v), %v)\n}\n",
                               "ToGraphNormalForm"),
                    0);
}
END_TEST

/* ToCPS types the operator calls it let-binds, their binders and uses and
 * the renamed parameters: only what has the type `answer` is inferred again
 * (the three lets, the use of %k and its call; 14 nodes before). */
START_TEST(typed_to_cps) {
  ck_assert_uint_eq(retyped_by("def @main(%x: Tensor[(2, 3), float32]) {\n"
                               "  %0 = add(%x, %x);\n  %1 = nn.relu(%0);\n  multiply(%1, %x)\n}\n",
                               "ToCPS"),
                    5);
}
END_TEST

/* sema/call_memo.h: a call with a constant argument is remembered by the
 * constant's type (the gradients' multiply(0.5f, ..) and less(%x, 0f) were
 * typed through their relations each time), except for an operator whose
 * relation reads constants' values (arange: its length). */
START_TEST(call_memo_keys_constants) {
  UtProg p;
  load(&p, "def @main(%x: Tensor[(2, 3), float32]) { (multiply(0.5f, %x), arange(0f, 3f, 1f)) }\n");
  Expr *body = global(p.m, "main")->fn->body;
  Expr *mul = body->tuple.fields[0], *ar = body->tuple.fields[1];
  CallMemo cm = {0};
  uint64_t h = 0, h2 = 0;
  ck_assert(call_memo_key(mul, &h));
  call_memo_add(&cm, p.m, mul, h);
  Expr *half = build_copy(p.m, mul->call.args[0]); /* another 0.5f node, its own type object */
  half->type = parse_ty(&p, "float32");
  Expr *again = expr_call(p.m, build_copy(p.m, mul->call.fn), (Expr *[]){half, mul->call.args[1]}, 2,
                          mul->call.attrs, mul->span);
  ck_assert(call_memo_key(again, &h2));
  ck_assert_uint_eq(h, h2);
  ck_assert(call_memo_apply(&cm, again, h2));
  ck_assert_ptr_eq(again->type, mul->type);
  ck_assert_str_eq(tystr(again->call.fn->type), "fn (float32, Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]");
  ck_assert(!call_memo_key(ar, &h));
  call_memo_free(&cm);
  ut_unload(&p);
}
END_TEST

/* sema/typeof.h shared types: equal tuples, refs and function types built
 * from equal (not identical) parts are one object, equal to the type a full
 * inference gives; `?` extents share, unlike extents do not. */
START_TEST(typeof_shares_types) {
  UtProg p;
  load(&p, "def @main(%x: Tensor[(2, 3), float32]) { %x }\n");
  TypeofCx tc;
  typeof_init(&tc, p.m);
  Type *a = parse_ty(&p, "Tensor[(2, 3), float32]"), *b = parse_ty(&p, "Tensor[(2, 3), float32]");
  Type *c = parse_ty(&p, "Tensor[(2, ?), float32]"), *d = parse_ty(&p, "Tensor[(2, ?), float32]");
  Type *e = parse_ty(&p, "Tensor[(2, 3), float16]");
  Type *pa = typeof_tuple_type(&tc, (Type *[]){a, typeof_ref_type(&tc, a)}, 2);
  Type *pb = typeof_tuple_type(&tc, (Type *[]){b, typeof_ref_type(&tc, b)}, 2);
  ck_assert_ptr_eq(pa, pb);
  ck_assert_str_eq(tystr(pa), "(Tensor[(2, 3), float32], ref(Tensor[(2, 3), float32]))");
  ck_assert_ptr_eq(typeof_tuple_type(&tc, &c, 1), typeof_tuple_type(&tc, &d, 1));
  ck_assert_ptr_ne(typeof_tuple_type(&tc, &a, 1), typeof_tuple_type(&tc, &e, 1));
  ck_assert_ptr_ne(typeof_tuple_type(&tc, &a, 1), typeof_tuple_type(&tc, &c, 1));
  Type *f1 = typeof_fn_type(&tc, (Type *[]){a, pa}, 2, b), *f2 = typeof_fn_type(&tc, (Type *[]){b, pb}, 2, a);
  ck_assert_ptr_eq(f1, f2);
  ck_assert_ptr_ne(f1, typeof_fn_type(&tc, (Type *[]){a}, 1, b));
  ck_assert_str_eq(tystr(f1), "fn (Tensor[(2, 3), float32], (Tensor[(2, 3), float32], ref(Tensor[(2, 3), float32]))) -> Tensor[(2, 3), float32]");
  ck_assert_ptr_eq(typeof_tuple_type(&tc, NULL, 0), tc.unit);
  ck_assert_ptr_eq(typeof_fn_type(&tc, NULL, 0, typeof_tuple_type(&tc, NULL, 0)), typeof_fn_type(&tc, NULL, 0, tc.unit));
  typeof_fini(&tc);
  ut_unload(&p);
}
END_TEST

/* sema/typeof.h typeof_op_call: an operator call typed as it is built, its
 * callee the one node of that operator at that function type (equal types
 * from other objects included); a relation that reads constants' values
 * (arange) gets what inference gives; a call with an untyped argument stays
 * untyped with its own callee. */
START_TEST(typeof_op_call_shares_callees) {
  UtProg p;
  load(&p, "def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(3), float32]) { (%x, %w) }\n");
  Function *f = global(p.m, "main")->fn;
  TypeofCx tc;
  typeof_init(&tc, p.m);
  Span sp = f->span;
  Expr *x1 = typeof_set(&tc, build_var(p.m, f->params[0], sp)), *x2 = typeof_set(&tc, build_var(p.m, f->params[0], sp));
  Expr *w = typeof_set(&tc, build_var(p.m, f->params[1], sp));
  int32_t add = op_lookup("add"), arange = op_lookup("arange");
  Expr *c1 = typeof_op_call(&tc, add, NULL, (Expr *[]){x1, x2}, 2, sp);
  Expr *c2 = typeof_op_call(&tc, add, NULL, (Expr *[]){x2, x1}, 2, sp);
  Expr *c3 = typeof_op_call(&tc, add, NULL, (Expr *[]){x1, w}, 2, sp);
  ck_assert_str_eq(tystr(c1->type), "Tensor[(2, 3), float32]");
  ck_assert_ptr_eq(c1->call.fn, c2->call.fn);
  ck_assert_ptr_ne(c1->call.fn, c3->call.fn);
  ck_assert_str_eq(tystr(c3->type), "Tensor[(2, 3), float32]");
  ck_assert_str_eq(tystr(c3->call.fn->type), "fn (Tensor[(2, 3), float32], Tensor[(3), float32]) -> Tensor[(2, 3), float32]");
  DType f32 = DTYPE(DT_FLOAT, 32);
  Expr *a3 = typeof_op_call(&tc, arange, NULL, (Expr *[]){expr_scalar_float(p.m, f32, 0, sp), expr_scalar_float(p.m, f32, 3, sp), expr_scalar_float(p.m, f32, 1, sp)}, 3, sp);
  Expr *a5 = typeof_op_call(&tc, arange, NULL, (Expr *[]){expr_scalar_float(p.m, f32, 0, sp), expr_scalar_float(p.m, f32, 5, sp), expr_scalar_float(p.m, f32, 1, sp)}, 3, sp);
  ck_assert_str_eq(tystr(a3->type), "Tensor[(?), float32]"); /* as inference has it */
  ck_assert_str_eq(tystr(a5->type), "Tensor[(?), float32]");
  Expr *untyped = build_proj(p.m, build_tuple(p.m, (Expr *[]){x1}, 1, sp), 0, sp);
  Expr *c4 = typeof_op_call(&tc, add, NULL, (Expr *[]){untyped, x1}, 2, sp);
  ck_assert_ptr_null(c4->type);
  ck_assert_ptr_null(c4->call.fn->type);
  ck_assert_ptr_ne(c4->call.fn, c1->call.fn);
  typeof_fini(&tc);
  ut_unload(&p);
}
END_TEST

/* sema/typeof.h's direct builders (typeof_var, _proj, _ref_read,
 * _ref_write, _let) give a node the type typeof_set would, and none where its
 * children disagree: an ill-typed output built with them stays untyped there,
 * and the re-typing reports it instead of keeping it. */
START_TEST(typeof_builders_leave_mismatch_untyped) {
  UtProg p;
  load(&p, "def @main(%x: Tensor[(3), float32], %y: Tensor[(3), int32]) { %x }\n");
  Function *f = global(p.m, "main")->fn;
  Span sp = f->span;
  TypeofCx tc;
  typeof_init(&tc, p.m);
  Expr *x = typeof_var(&tc, f->params[0], sp), *y = typeof_var(&tc, f->params[1], sp);
  ck_assert_str_eq(tystr(x->type), "Tensor[(3), float32]");
  Expr *cell = typeof_set(&tc, build_ref_new(p.m, x, sp));
  Var *r = var_new(p.m, "r", sp, NULL);
  r->type = cell->type;
  Expr *rd = typeof_ref_read(&tc, typeof_var(&tc, r, sp), sp);
  ck_assert_str_eq(tystr(rd->type), "Tensor[(3), float32]");
  ck_assert_ptr_eq(typeof_ref_write(&tc, typeof_var(&tc, r, sp), typeof_var(&tc, f->params[0], sp), sp)->type, tc.unit);
  ck_assert_ptr_null(typeof_ref_read(&tc, x, sp)->type);       /* not a ref */
  ck_assert_ptr_null(typeof_proj(&tc, x, 0, sp)->type);         /* not a tuple */
  Expr *pair = typeof_set(&tc, build_tuple(p.m, (Expr *[]){x, y}, 2, sp));
  ck_assert_str_eq(tystr(typeof_proj(&tc, pair, 1, sp)->type), "Tensor[(3), int32]");
  ck_assert_ptr_null(typeof_proj(&tc, pair, 2, sp)->type);      /* no such field */
  Expr *bad = typeof_ref_write(&tc, typeof_var(&tc, r, sp), y, sp); /* an int32 into a float32 cell */
  ck_assert_ptr_null(bad->type);
  Var *u = var_new(p.m, "u", sp, NULL);
  u->type = tc.unit; /* a binder whose type is not its value's */
  ck_assert_ptr_null(typeof_let(&tc, u, typeof_var(&tc, f->params[0], sp), typeof_var(&tc, f->params[0], sp), sp)->type);
  /* fn body: let %r = ref(%x); let %u = ref_write(%r, %y); %x */
  Var *u2 = var_new(p.m, "u", sp, NULL);
  Expr *body = typeof_let(&tc, u2, bad, typeof_var(&tc, f->params[0], sp), sp);
  f->body = typeof_let(&tc, r, cell, body, sp);
  typeof_fini(&tc);
  bool changed[1] = {true};
  ck_assert_int_eq(retype(&p, changed, NULL, NULL), INFER_INC_ERROR);
  ck_assert_ptr_nonnull(strstr(ut_errors(&p), "int32"));
  ut_unload(&p);
}
END_TEST

/* After Gradient the operator calls at one type share their callee node (a
 * few callee nodes for many calls), and the re-typing keeps the whole
 * output: nothing inferred again, and a full re-inference agrees
 * (verify_retype), the shared callees included. */
static void count_op_calls(Expr *e, void *ud) {
  size_t *n = ud;
  if (e->kind == EXPR_CALL && e->call.fn->kind == EXPR_OP) n[0]++;
  if (e->kind == EXPR_OP) n[1]++;
}

START_TEST(gradient_shares_callees) {
  static const char *const chain =
      "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
      "  %0 = add(%x, %y);\n  %1 = multiply(%0, %x);\n  %2 = nn.relu(%1);\n  %3 = maximum(%2, %y);\n"
      "  %4 = add(%3, %0);\n  %5 = multiply(%4, %y);\n  %6 = nn.relu(%5);\n  %7 = maximum(%6, %x);\n"
      "  nn.softmax(%7)\n}\n";
  static const char *const passes[] = {"Gradient", "FirstOrderGradient", "Gradient(mode=first_order)"};
  for (size_t i = 0; i < sizeof passes / sizeof *passes; i++) {
    UtProg p;
    load(&p, chain);
    ck_assert_int_eq(run_counting_retyped(&p, passes[i]), 0);
    size_t n[2] = {0, 0};
    walk_post_order(global(p.m, "main")->fn->body, true, count_op_calls, n);
    ck_assert_msg(n[0] > 40 && n[1] * 3 < n[0], "%s: %zu operator calls, %zu distinct callee nodes", passes[i], n[0], n[1]);
    ut_unload(&p);
  }
}
END_TEST

/* Gradient's output (all of it typed) has one use node per variable: every
 * use of %x's pair, of the tape, of a memoised result is the same atom (the
 * printer writes atoms in place; TVM's uses are its one Var object). A node
 * per use made the 100k graph chain's output 378k nodes (15 MB) larger. */
typedef struct VarUses {
  PtrMap vars;
  size_t nodes, distinct;
} VarUses;

static void count_var_uses(Expr *e, void *ud) {
  VarUses *u = ud;
  if (e->kind != EXPR_VAR) return;
  u->nodes++;
  int64_t *seen = ptrmap_slot(&u->vars, e->var.var);
  if (!*seen) u->distinct++;
  *seen = 1;
}

START_TEST(gradient_shares_var_uses) {
  static const char *const chain =
      "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
      "  %0 = add(%x, %y);\n  %1 = multiply(%0, %x);\n  %2 = nn.relu(%1);\n  %3 = maximum(%2, %y);\n"
      "  %4 = add(%3, %0);\n  %5 = multiply(%4, %y);\n  nn.softmax(%5)\n}\n";
  UtProg p;
  load(&p, chain);
  ck_assert_int_eq(run_counting_retyped(&p, "Gradient"), 0);
  VarUses u = {0};
  walk_post_order(global(p.m, "main")->fn->body, true, count_var_uses, &u);
  ck_assert_msg(u.distinct > 40 && u.nodes == u.distinct, "%zu variable use nodes for %zu variables", u.nodes,
                u.distinct);
  ptrmap_free(&u.vars);
  ut_unload(&p);
}
END_TEST

/* PartialEvaluate builds its residual code typed where the program's type
 * carries over (each argument has the type the program's had): nothing is
 * inferred again, and a full re-inference agrees (verify_retype). Where a
 * value computed now makes an argument more static (arange of a folded
 * stop: (3) where the program had (?)), the call is left to inference and
 * gets the new type; claiming the program's would fail the verification. */
START_TEST(typed_partial_eval) {
  ck_assert_uint_eq(retyped_by(typed_graph, "PartialEvaluate"), 0);
  ck_assert_uint_eq(retyped_by(typed_lets, "PartialEvaluate"), 0);
  UtProg p;
  load(&p, "def @main(%y: Tensor[(?), float32]) {\n"
           "  let %s = add(2f, 1f);\n  let %a = arange(0f, %s, 1f);\n  multiply(%a, %y)\n}\n");
  ck_assert_str_eq(tystr(global(p.m, "main")->fn->type->func.ret), "Tensor[(?), float32]");
  run_counting_retyped(&p, "PartialEvaluate");
  ck_assert_str_eq(tystr(global(p.m, "main")->fn->type->func.ret), "Tensor[(3), float32]");
  ut_unload(&p);
}
END_TEST

/* UnCPS gives its instantiated copy of @main the types with answer := B:
 * nothing is inferred again after it (ToCPS's 5 nodes above; 22 in all
 * when UnCPS left its copy untyped). */
START_TEST(typed_un_cps) {
  ck_assert_uint_eq(retyped_by("def @main(%x: Tensor[(2, 3), float32]) {\n"
                               "  %0 = add(%x, %x);\n  %1 = nn.relu(%0);\n  multiply(%1, %x)\n}\n",
                               "ToCPS,UnCPS"),
                    5);
}
END_TEST

/* FoldConstant on a function without dynamic types types the constants it
 * folds, and its rewriter keeps the types of the nodes rebuilt above them:
 * nothing is inferred again (6 nodes when they were left untyped). */
START_TEST(typed_fold_constant) {
  ck_assert_uint_eq(retyped_by("def @main(%x: Tensor[(2, 3), float32]) {\n"
                               "  %0 = add(%x, multiply(2f, 3f));\n  %1 = nn.relu(%0);\n"
                               "  (%1, subtract(%1, exp(1f)))\n}\n",
                               "FoldConstant"),
                    0);
}
END_TEST

/* FoldConstant folds the dynamic arange(...) (its length is read from its
 * attributes only: `?`) under @id into a (2) constant and rebuilds the call,
 * which keeps its typed @id callee: inference used to keep that callee's old
 * instantiation fn (Tensor[(?)]) -> Tensor[(?)] where a full inference gives
 * (2) (fuzz-passes-ci seed 1 input 61, from samples/polymorphism.relay). */
START_TEST(fold_constant_polymorphic_callee) {
  retyped_by("def @id[T](%x: T) -> T { %x }\n"
             "def @main() { @id(arange(1f, 3f, 1f)) }\n",
             "FoldConstant");
}
END_TEST

/* A pass output whose global uses a variable nothing binds (printed
 * `free_var %u`; DeadCodeElimination once deleted a let still used on a
 * graph-shared chain) is the pass's internal error: the re-typing took the
 * variable's old type as given and accepted it. The let binding %u is
 * dropped here by hand, as that pass did; FoldConstant then changes @main. */
START_TEST(free_var_left_by_pass) {
  UtProg p;
  load(&p, "def @main() { let %u = 1f; let %v = multiply(2f, 3f); add(%u, %v) }\n");
  Function *f = global(p.m, "main")->fn;
  ck_assert_int_eq(f->body->kind, EXPR_LET);
  f->body = f->body->let.body;
  PassPipeline pl;
  pass_pipeline_init(&pl);
  ck_assert(pass_pipeline_parse(&pl, "FoldConstant", stderr));
  int st = pass_pipeline_run(&pl, p.m, &p.d, &(PassRunOptions){0});
  pass_pipeline_fini(&pl);
  ck_assert_int_ne(st, 0);
  ck_assert_msg(strstr(ut_errors(&p), "internal error: pass FoldConstant left variable %u unbound in @main"), "%s",
                ut_errors(&p));
  ut_unload(&p);
}
END_TEST

/* The judgement flags a global where a use comes before any binder of its
 * variable (the runner then looks exactly, instead of walking every changed
 * global after every pass): a recursive let's own value does not count, a
 * let dropped by hand does. */
START_TEST(unbound_suspect_from_judgement) {
  UtProg p;
  load(&p, "def @main(%x: Tensor[(3), float32]) {\n"
           "  let %f = fn (%n: Tensor[(3), float32]) -> Tensor[(3), float32] { %f(%n) };\n"
           "  let %u = negative(%x);\n  add(%u, %x)\n}\n");
  Function *fn = global(p.m, "main")->fn;
  bool changed[1] = {true};
  Type *old_sig[1] = {fn->type};
  InferIncStats st;
  ck_assert_int_eq(retype(&p, changed, old_sig, &st), INFER_INC_OK);
  ck_assert_uint_eq(st.unbound_suspect, 0);
  ck_assert_int_eq(fn->body->let.body->kind, EXPR_LET);
  fn->body->let.body = fn->body->let.body->let.body; /* drop the let of %u */
  retype(&p, changed, old_sig, &st);
  ck_assert_uint_eq(st.unbound_suspect, 1);
  ut_unload(&p);
}
END_TEST

/* LazyGradientInit types what it builds (cells, @FromGradCell/@AddGradCell
 * calls, fallback literals, thunks, the @main wrapper, rebound binders):
 * only the 35 nodes of the GradCell library's bodies, built polymorphic,
 * are inferred again (109 and 78 when the output was left untyped). */
START_TEST(typed_lazy_gradient_init) {
  ck_assert_uint_eq(retyped_by(typed_graph, "LazyGradientInit"), 35);
  ck_assert_uint_eq(retyped_by(typed_lets, "LazyGradientInit"), 35);
  ck_assert_uint_eq(retyped_by("def @main(%x: Tensor[(2, 3), float32]) {\n"
                               "  let %z: Tensor[(2, 3), float32] = zeros(shape=[2, 3], dtype=\"float32\");\n"
                               "  let %o = ones_like(%x);\n"
                               "  multiply(add(%z, %x), subtract(%o, 2f))\n}\n",
                               "LazyGradientInit"),
                    35);
}
END_TEST

/* The lets of a chain wait for their body's verdict without a frame each
 * (sema/infer.c JFrame): a let whose own value changed is inferred again
 * with every let around it, and the lets inside it keep their types when
 * they do not use its variable. */
START_TEST(let_chain_verdicts) {
  UtProg p;
  load(&p, "def @main(%x: Tensor[(3), float32]) {\n"
           "  let %a = negative(%x);\n  let %b = exp(%a);\n  let %c = add(%a, %a);\n  %c\n}\n");
  Function *fn = global(p.m, "main")->fn;
  Expr *let_a = fn->body, *let_b = let_a->let.body, *let_c = let_b->let.body;
  Type *c_type = let_c->type;
  let_b->let.value = op_call(p.m, "negative", (Expr *[]){let_b->let.value->call.args[0]}, 1, NULL, let_b->span);
  bool changed[1] = {true};
  Type *old_sig[1] = {fn->type};
  InferIncStats st;
  ck_assert_int_eq(retype(&p, changed, old_sig, &st), INFER_INC_OK);
  ck_assert_uint_eq(st.nodes_retyped, 3); /* the new call, the lets of %b and %a */
  ck_assert_ptr_eq(let_c->type, c_type);
  ck_assert_str_eq(tystr(let_a->type), "Tensor[(3), float32]");
  ck_assert_str_eq(tystr(let_b->let.var->type), "Tensor[(3), float32]");
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  /* the chain's tail replaced: every let of the chain again, their values kept */
  let_c->let.body = op_call(p.m, "exp", (Expr *[]){let_c->let.body}, 1, NULL, let_c->span);
  ck_assert_int_eq(retype(&p, changed, old_sig, &st), INFER_INC_OK);
  ck_assert_uint_eq(st.nodes_retyped, 4);
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* The judgement recurses over shallow nesting and hands deeper subtrees to
 * its frame machine (sema/infer.c JUDGE_REC_DEPTH): a binder whose type
 * changed 600 calls down makes every node above it re-inferred, through both. */
START_TEST(deep_nesting_verdicts) {
  enum { DEPTH = 600 };
  char *text = mem_malloc(64 * DEPTH + 256);
  char *q = text + sprintf(text, "def @main(%%x: Tensor[(3), float32]) {\n  ");
  for (int i = 0; i < DEPTH; i++) q += sprintf(q, "negative(");
  q += sprintf(q, "let %%a = negative(%%x); add(%%a, %%a)");
  for (int i = 0; i < DEPTH; i++) *q++ = ')';
  sprintf(q, "\n}\n");
  UtProg p;
  load(&p, text);
  mem_free(text);
  Function *fn = global(p.m, "main")->fn;
  Expr *let = fn->body;
  for (int i = 0; i < DEPTH; i++) let = let->call.args[0];
  ck_assert_int_eq(let->kind, EXPR_LET);
  /* the "pass": %a = negative(%x) -> %a = sum(%x), a scalar */
  let->let.value = op_call(p.m, "sum", (Expr *[]){let->let.value->call.args[0]}, 1, NULL, let->span);
  bool changed[1] = {true};
  Type *old_sig[1] = {fn->type};
  InferIncStats st;
  ck_assert_int_eq(retype(&p, changed, old_sig, &st), INFER_INC_OK);
  /* the new call, the let, add, its two uses of %a, the 600 calls above */
  ck_assert_uint_eq(st.nodes_retyped, 5 + DEPTH);
  ck_assert_str_eq(tystr(fn->body->type), "float32");
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* The judgement leaves its marks on the nodes, tagged for its run: the next
 * run judges every node again (the last run's tags are stale to it, as are
 * the printer's numbers), and a DAG prints the same after re-typings. */
static char *printed(UtProg *p) {
  char *s = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&s, &n);
  print_module(f, p->m, (PrintOptions){0});
  fclose(f);
  return s;
}

START_TEST(judge_marks_per_run) {
  UtProg p;
  load(&p, "def @main(%a: Tensor[(4), float32]) {\n"
           "  %0 = add(%a, 1f);\n  %1 = multiply(%0, %0);\n  %2 = (%1, %0);\n  %3 = %2.0;\n  add(%3, %1)\n}\n");
  char *before = printed(&p);
  bool changed[1] = {true};
  InferIncStats st;
  uint64_t kept = 0;
  for (int round = 0; round < 3; round++) {
    ck_assert_int_eq(retype(&p, changed, NULL, &st), INFER_INC_OK);
    ck_assert_uint_eq(st.nodes_retyped, 0);
    if (round == 0) kept = st.nodes_kept;
    ck_assert_uint_eq(st.nodes_kept, kept);
    char *after = printed(&p);
    ck_assert_str_eq(after, before);
    free(after);
  }
  ck_assert_uint_ge(kept, 7);
  free(before);
  ut_unload(&p);
}
END_TEST

/* module_node_count (ir/walk.c, the --time-passes columns) counts each
 * global's distinct nodes: a node shared inside a global once, a node shared
 * by two globals in both, a shared operator callee once per global; the
 * same numbers as a post-order walk of each body. Its run tags leave the
 * next re-typing's judgement intact. */
static void count_visit(Expr *e, void *ud) {
  (void)e;
  (*(uint64_t *)ud)++;
}

static uint64_t walked_node_count(Module *m) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn) walk_post_order(m->defs[i]->fn->body, true, count_visit, &n);
  return n;
}

START_TEST(node_count_per_global) {
  UtProg p;
  load(&p, "def @f(%a: Tensor[(4), float32]) {\n  %0 = add(%a, %a);\n  multiply(%0, %0)\n}\n"
           "def @main(%a: Tensor[(4), float32]) {\n"
           "  %10 = add(%a, 1f);\n  %11 = multiply(%10, %10);\n  %12 = (%11, %10);\n"
           "  let %g = fn (%b: Tensor[(4), float32]) { add(%b, %12.0) };\n  %g(add(%11, exp(2f)))\n}\n");
  Function *f = global(p.m, "f")->fn, *mainf = global(p.m, "main")->fn;
  /* @f's result shares @main's exp(2f) (a node of two globals) */
  Expr *shared = mainf->body->let.body->call.args[0]->call.args[1];
  ck_assert_int_eq(shared->kind, EXPR_CALL);
  f->body = op_call(p.m, "add", (Expr *[]){f->body, shared}, 2, NULL, f->body->span);
  uint64_t want = walked_node_count(p.m);
  ck_assert_uint_eq(module_node_count(p.m), want);
  ck_assert_uint_eq(module_node_count(p.m), want); /* the last count's tags are stale */
  bool changed[2] = {true, true};
  InferIncStats st;
  ck_assert_int_eq(retype(&p, changed, NULL, &st), INFER_INC_OK); /* types the new add */
  ck_assert_int_eq(retype(&p, changed, NULL, &st), INFER_INC_OK);
  ck_assert_uint_eq(st.nodes_retyped, 0);
  uint64_t kept = st.nodes_kept;
  ck_assert_uint_eq(module_node_count(p.m), want);
  ck_assert_int_eq(retype(&p, changed, NULL, &st), INFER_INC_OK);
  ck_assert_uint_eq(st.nodes_retyped, 0);
  ck_assert_uint_eq(st.nodes_kept, kept);
  ck_assert(infer_verify_module(p.m, &p.d, "test"));
  ut_unload(&p);
}
END_TEST

/* --time-passes: a pass's "nodes before" is the last one's "nodes after";
 * both equal a post-order walk's count, whether the runner walked or took
 * the count from the re-typing's judgement (one global judged: its count,
 * the skipped globals walked). */
static void check_node_columns(UtProg *p, const char *passes, int nrows) {
  PassPipeline pl;
  pass_pipeline_init(&pl);
  ck_assert(pass_pipeline_parse(&pl, passes, stderr));
  uint64_t input = walked_node_count(p->m);
  char *buf = NULL;
  size_t len = 0;
  FILE *tp = open_memstream(&buf, &len);
  PassRunOptions ro = {.time_passes = tp};
  ck_assert_int_eq(pass_pipeline_run(&pl, p->m, &p->d, &ro), 0);
  pass_pipeline_fini(&pl);
  fclose(tp);
  unsigned long long prev_after = input, before, after;
  int rows = 0;
  for (const char *line = strchr(buf, '\n') + 1; *line && strncmp(line, "total", 5) != 0; line = strchr(line, '\n') + 1) {
    char name[64];
    double a, b, c, d;
    ck_assert_int_eq(sscanf(line, "%63s %lf %lf %lf %lf %llu %llu", name, &a, &b, &c, &d, &before, &after), 7);
    ck_assert_uint_eq(before, prev_after);
    prev_after = after;
    rows++;
  }
  ck_assert_int_eq(rows, nrows);
  ck_assert_msg(prev_after == walked_node_count(p->m), "%s: %llu nodes after, a walk counts %llu", passes, prev_after,
                (unsigned long long)walked_node_count(p->m));
  free(buf);
}

START_TEST(time_passes_node_columns) {
  static const char two_globals[] =
      "def @g(%a: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] { %0 = exp(%a); add(%0, %0) }\n"
      "def @f(%a: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] { @g(%a) }\n"
      "def @main(%x: Tensor[(2, 3), float32]) {\n"
      "  %1 = @f(%x);\n  %2 = nn.relu(%1);\n  %3 = (%2, %1);\n  add(%3.0, @f(%2))\n}\n";
  static const char *const cases[][2] = {
      {typed_lets, "ToGraphNormalForm"}, {typed_lets, "ToANormalForm"}, {typed_lets, "FuseOps"},
      {typed_graph, "FuseOps"},          {typed_graph, "ToANormalForm"}, {typed_graph, "Gradient"},
      {two_globals, "ToANormalForm"},    {two_globals, "FuseOps"},       {two_globals, "Inline"},
      {two_globals, "SimplifyExpr"}, /* one global judged and counted, two walked */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    UtProg p;
    load(&p, cases[i][0]);
    check_node_columns(&p, cases[i][1], 1);
    ut_unload(&p);
  }
  UtProg p;
  load(&p, typed_lets);
  check_node_columns(&p, "ToGraphNormalForm,ToANormalForm,FuseOps", 3);
  ut_unload(&p);
}
END_TEST

/* The re-typing's count (InferIncStats.nodes_counted) of a global whose
 * callee node (not judged: typed per call) is a value too, met in either
 * order: the node counts once; the global not visited is not counted. */
START_TEST(judge_counts_shared_callee) {
  for (int callee_first = 0; callee_first < 2; callee_first++) {
    UtProg p;
    load(&p, "def @f(%a: Tensor[(3), float32]) -> Tensor[(3), float32] { negative(%a) }\n"
             "def @main(%x: Tensor[(3), float32]) {\n  %0 = @f(%x);\n  (%0, %0)\n}\n");
    Function *fn = global(p.m, "main")->fn;
    Expr *call = fn->body->tuple.fields[0];
    ck_assert_int_eq(call->kind, EXPR_CALL);
    fn->body->tuple.fields[callee_first ? 1 : 0] = call->call.fn; /* @f as a value too */
    fn->body->type = NULL; /* (replaced in place: the tuple is new) */
    bool changed[2] = {false, true};
    InferIncStats st;
    ck_assert_int_eq(retype(&p, changed, NULL, &st), INFER_INC_OK);
    ck_assert_uint_eq(st.counted_global, 2);
    uint64_t walked = 0;
    walk_post_order(fn->body, true, count_visit, &walked);
    ck_assert_uint_eq(walked, 4); /* the tuple, the call, @f, %x */
    ck_assert_uint_eq(st.nodes_counted, walked);
    ck_assert(infer_verify_module(p.m, &p.d, "test"));
    ut_unload(&p);
  }
}
END_TEST

static Suite *retype_suite(void) {
  Suite *s = suite_create("retype");
  TCase *tc = tcase_create("incremental");
  tcase_add_test(tc, unchanged_globals_skipped);
  tcase_add_test(tc, deep_nesting_verdicts);
  tcase_add_test(tc, new_nodes_over_kept_ones);
  tcase_add_test(tc, annotation_changed_in_place);
  tcase_add_test(tc, let_annotation_changed_rejected);
  tcase_add_test(tc, child_replaced_in_place);
  tcase_add_test(tc, polymorphic_context_changes);
  tcase_add_test(tc, polymorphic_function_body);
  tcase_add_test(tc, signature_change_needs_full);
  tcase_add_test(tc, signature_change_kept_call_in_checked_global);
  tcase_add_test(tc, caller_typed_global_visited);
  tcase_add_test(tc, verify_catches_stale_type);
  tcase_add_test(tc, runner_verify_o3);
  tcase_add_test(tc, fold_constant_refreshes_dynamic_types);
  tcase_add_test(tc, typed_fuse_ops);
  tcase_add_test(tc, typed_fuse_ops_arange);
  tcase_add_test(tc, gradient_output_typed);
  tcase_add_test(tc, gradient_polymorphic_left_to_inference);
  tcase_add_test(tc, typed_normal_forms);
  tcase_add_test(tc, typed_normal_forms_type_changes);
  tcase_add_test(tc, typed_to_cps);
  tcase_add_test(tc, call_memo_keys_constants);
  tcase_add_test(tc, typeof_shares_types);
  tcase_add_test(tc, typed_partial_eval);
  tcase_add_test(tc, typed_un_cps);
  tcase_add_test(tc, typed_fold_constant);
  tcase_add_test(tc, fold_constant_polymorphic_callee);
  tcase_add_test(tc, free_var_left_by_pass);
  tcase_add_test(tc, unbound_suspect_from_judgement);
  tcase_add_test(tc, typed_lazy_gradient_init);
  tcase_add_test(tc, typeof_op_call_shares_callees);
  tcase_add_test(tc, typeof_builders_leave_mismatch_untyped);
  tcase_add_test(tc, gradient_shares_callees);
  tcase_add_test(tc, gradient_shares_var_uses);
  tcase_add_test(tc, let_chain_verdicts);
  tcase_add_test(tc, judge_marks_per_run);
  tcase_add_test(tc, static_refs_less_precise_argument);
  tcase_add_test(tc, node_count_per_global);
  tcase_add_test(tc, time_passes_node_columns);
  tcase_add_test(tc, judge_counts_shared_callee);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return unit_run(retype_suite());
}
