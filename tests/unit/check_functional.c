/* tests/unit/check_functional.c — the functional transformations of
 * transform/ (EtaExpand, Inline, LambdaLift, Defunctionalization) through the
 * pass pipeline API: the shape of their output, checked by walking the
 * rewritten module (the golden tests check exact texts and values). The
 * *_every_golden tests run LambdaLift and Defunctionalization over every
 * runnable golden program (with the prelude when its RUN line asks for it)
 * and walk each output: its only function values are globals (issue 11).
 */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "ir/arena.h"
#include "ir/mem.h"
#include "ir/walk.h"
#include "parser/parser.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "tests/unit/unit_run.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef struct Run {
  Module *m;
  Source *src;
  int status;
} Run;

/* parse + resolve + infer + passes `spec`; status 0 on success */
static Run run(const char *text, const char *spec) {
  Run r = {0};
  size_t n = strlen(text);
  char *copy = mem_malloc(n + 1);
  memcpy(copy, text, n + 1);
  r.src = source_new("t.relay", copy, n);
  Diag d;
  diag_init(&d, stderr, r.src);
  r.m = parse_module(r.src, &d);
  if (d.nerrors == 0) resolve_module(r.m, &d);
  if (d.nerrors == 0) infer_module(r.m, &d);
  ck_assert_int_eq(d.nerrors, 0);
  PassPipeline pl;
  pass_pipeline_init(&pl);
  ck_assert(pass_pipeline_parse(&pl, spec, stderr));
  r.status = pass_pipeline_run(&pl, r.m, &d, NULL);
  pass_pipeline_fini(&pl);
  return r;
}

static void done(Run *r) {
  module_free(r->m);
  source_free(r->src);
}

/* Counts function literals anywhere except as the whole body of a global. */
static void count_fn(Expr *e, void *ud) {
  if (e->kind == EXPR_FN && !fn_has_attr(e->fn, "Primitive")) (*(int *)ud)++;
}

static int nested_literals(Module *m) {
  int n = 0;
  for (uint32_t i = 0; i < m->ndefs; i++) {
    Function *f = m->defs[i]->fn;
    if (!f) continue;
    Expr *b = f->body;
    /* a Closure=1 global returns its one literal */
    if (fn_has_attr(f, "Closure") && b->kind == EXPR_FN) b = b->fn->body;
    walk_post_order(b, true, count_fn, &n);
  }
  return n;
}

START_TEST(lambda_lift_leaves_only_globals) {
  const char *prog =
      "#[version = \"0.0.5\"]\n"
      "def @main(%x: float32) -> float32 {\n"
      "  let %k = fn (%a: float32) -> fn (float32) -> float32 { fn (%b: float32) -> float32 { add(%a, add(%b, %x)) } };\n"
      "  let %rec = fn (%n: int32, %acc: float32) -> float32 {\n"
      "    if (equal(%n, 0)) { %acc } else { %rec(subtract(%n, 1), %k(%acc)(1f)) } };\n"
      "  %rec(3, %x)\n"
      "}\n";
  Run r = run(prog, "LambdaLift");
  ck_assert_int_eq(r.status, 0);
  ck_assert_int_eq(nested_literals(r.m), 0);
  ck_assert_uint_ge(r.m->ndefs, 4);
  done(&r);
}
END_TEST

START_TEST(lambda_lift_prelude_leaves_only_globals) {
  size_t len = 0;
  const char *text = eval_prelude_text(&len);
  char *prog = mem_malloc(len + 64);
  memcpy(prog, text, len);
  strcpy(prog + len, "\ndef @main() -> int32 { 0 }\n");
  Run before = run(prog, "InferType");
  int had = nested_literals(before.m);
  done(&before);
  ck_assert_int_gt(had, 0); /* the prelude has closures to lift */
  Run r = run(prog, "LambdaLift");
  ck_assert_int_eq(r.status, 0);
  ck_assert_int_eq(nested_literals(r.m), 0);
  done(&r);
  mem_free(prog);
}
END_TEST

START_TEST(inline_removes_marked_globals) {
  Run r = run("#[version = \"0.0.5\"]\n"
              "def @f(%a: int32, Inline=1) -> int32 { add(%a, %a) }\n"
              "def @g(%a: int32, Inline=1) -> int32 { @f(%a) }\n"
              "def @main() -> int32 { @g(2) }\n",
              "Inline");
  ck_assert_int_eq(r.status, 0);
  ck_assert_uint_eq(r.m->ndefs, 1);
  ck_assert_str_eq(r.m->defs[0]->name, "main");
  done(&r);
}
END_TEST

START_TEST(eta_expand_shares_one_literal) {
  Run r = run("#[version = \"0.0.5\"]\n"
              "def @f(%a: int32) -> int32 { %a }\n"
              "def @main() -> (int32, int32) { (@f(1), @f(2)) }\n",
              "EtaExpand(expand_global_var=True)");
  ck_assert_int_eq(r.status, 0);
  GlobalDef *main = r.m->defs[0]->fn->body->kind == EXPR_TUPLE ? r.m->defs[0] : r.m->defs[1];
  Expr *t = main->fn->body;
  ck_assert_int_eq(t->kind, EXPR_TUPLE);
  ck_assert_ptr_eq(t->tuple.fields[0]->call.fn, t->tuple.fields[1]->call.fn);
  ck_assert_int_eq(t->tuple.fields[0]->call.fn->kind, EXPR_FN);
  done(&r);
}
END_TEST

/* TVM's assert_no_higher_order_functions: no call (reachable from @main)
 * whose result or argument types mention a function type. */
static bool has_fn_type(const Type *t) {
  if (!t) return false;
  switch (t->kind) {
  case TYPE_FUNC: return true;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (has_fn_type(t->tuple.fields[i])) return true;
    return false;
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++)
      if (has_fn_type(t->adt.args[i])) return true;
    return false;
  case TYPE_REF: return has_fn_type(t->ref.inner);
  default: return false;
  }
}

typedef struct HoScan {
  int higher_order_calls;
  VEC(GlobalDef *) todo;
  PtrMap seen;
} HoScan;

static void scan_call(Expr *e, void *ud) {
  HoScan *s = ud;
  if (e->kind == EXPR_GLOBAL && e->global.def && !ptrmap_find(&s->seen, e->global.def)) {
    ptrmap_put(&s->seen, e->global.def, 1);
    vec_push(s->todo, e->global.def);
  }
  if (e->kind != EXPR_CALL) return;
  bool ho = has_fn_type(e->type);
  for (uint32_t i = 0; i < e->call.nargs; i++) ho |= has_fn_type(e->call.args[i]->type);
  s->higher_order_calls += ho;
}

static int higher_order_calls_from_main(Module *m) {
  HoScan s = {0};
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, "main") == 0) vec_push(s.todo, m->defs[i]);
  for (size_t i = 0; i < s.todo.len; i++)
    if (s.todo.data[i]->fn) walk_post_order(s.todo.data[i]->fn->body, true, scan_call, &s);
  vec_free(s.todo);
  ptrmap_free(&s.seen);
  return s.higher_order_calls;
}

START_TEST(defunctionalization_leaves_first_order_code) {
  const char *prog =
      "#[version = \"0.0.5\"]\n"
      "type List[A] { Cons(A, List[A]), Nil, }\n"
      "def @sum(%f: fn(int32) -> int32, %k: List[int32]) -> int32 {\n"
      "  match (%k) { Cons(%x, %rest) => @sum(fn (%n: int32) -> int32 { %x + %f(%n) }, %rest), Nil => %f(0), }\n"
      "}\n"
      "def @id[A](%x: A) -> A { %x }\n"
      "def @main() -> int32 { @sum(@id, Cons(1, Cons(2, Nil))) }\n";
  Run before = run(prog, "InferType");
  ck_assert_int_gt(higher_order_calls_from_main(before.m), 0);
  done(&before);
  Run r = run(prog, "Defunctionalization");
  ck_assert_int_eq(r.status, 0);
  ck_assert_int_eq(higher_order_calls_from_main(r.m), 0);
  done(&r);
}
END_TEST

/* n thunks nested in A-normal form, each a new case of one function type:
 * `let %t = fn () { ... }; %t()` around a literal `%f` (session 16's seed 160
 * input had 10,000 of them). Malloc'd text. */
static char *nested_thunks(int n) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  fprintf(f, "#[version = \"0.0.5\"]\ndef @main(%%x: float32) -> float32 {\n"
             "  let %%f = fn (%%a: float32) -> float32 { multiply(%%a, %%a) };\n  let %%g = ");
  for (int i = n; i-- > 0;) fprintf(f, "{ let %%t%d = fn () { ", i);
  fprintf(f, "%%f");
  for (int i = 0; i < n; i++) fprintf(f, " }; %%t%d() }", i);
  fprintf(f, ";\n  %%g(%%x)\n}\n");
  fclose(f);
  return text;
}

/* The arena bytes Defunctionalization adds to the type-checked program. */
static size_t defunctionalization_bytes(int n) {
  char *text = nested_thunks(n);
  Run typed = run(text, "InferType");
  size_t before = arena_used(typed.m->arena);
  done(&typed);
  Run r = run(text, "Defunctionalization");
  ck_assert_int_eq(r.status, 0);
  size_t after = arena_used(r.m->arena);
  done(&r);
  free(text);
  return after - before;
}

/* Every literal of one function type is a constructor of its ADT: the
 * constructor array grows by doubling, not by a copy per case, which made the
 * pass's memory quadratic (1.1 GB for 16,000 nested thunks): four times the
 * thunks, about four times the bytes (thirteen times with the copies). */
START_TEST(defunctionalization_many_cases_linear) {
  size_t b1 = defunctionalization_bytes(1000), b4 = defunctionalization_bytes(4000);
  ck_assert_uint_lt(b4, 6 * b1);
}
END_TEST

/* ------------------------------------------------ every golden program */

typedef VEC(char *) PathVec;
static PathVec golden_paths;

static int note_golden(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)ftw;
  size_t n = strlen(path);
  if (type == FTW_F && n > 6 && strcmp(path + n - 6, ".relay") == 0 && st->st_size < 256 * 1024 &&
      !strstr(path, ".expected.relay"))
    vec_push(golden_paths, strdup(path));
  return 0;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = mem_malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  buf[got] = 0;
  *len = got;
  return buf;
}

/* A golden program that runs: some RUN line has --run, no EXIT other than 0,
 * and no native extension. *prelude: a running RUN line has --prelude. */
static bool runnable_golden(const char *text, bool *prelude) {
  bool runs = false;
  *prelude = false;
  for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    char line[1024];
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, l, n);
    line[n] = 0;
    if (strncmp(line, "// EXIT:", 8) == 0 && atoi(line + 8) != 0) return false;
    if (strncmp(line, "// RUN:", 7) != 0 || !strstr(line, " --run")) continue;
    if (strstr(line, "--ffi") || strstr(line, "--plugin") || strstr(line, "--expr")) return false;
    runs = true;
    if (strstr(line, "--prelude")) *prelude = true;
  }
  return runs;
}

/* parse (+ prelude) + resolve + infer + passes `spec` on a golden file.
 * 1: pass ran, 0: pass refused the program, -1: the program is not for us. */
static int run_golden_file(const char *path, const char *spec, Module **out, Source **src_out, Module **pre_out) {
  size_t len;
  *out = NULL;
  *src_out = NULL;
  *pre_out = NULL;
  char *text = slurp(path, &len);
  if (!text) return -1;
  bool prelude;
  /* `// SWEEP-SKIP: Pass reason`: the program opts out of that pass, as for
   * tests/run_sweep_all_passes.py */
  char skip[128];
  snprintf(skip, sizeof skip, "SWEEP-SKIP: %s ", spec);
  if (!runnable_golden(text, &prelude) || strstr(text, skip)) {
    mem_free(text);
    return -1;
  }
  Source *src = source_new(path, text, len);
  char *msgs = NULL;
  size_t msgs_len = 0;
  FILE *null = open_memstream(&msgs, &msgs_len);
  Diag d;
  diag_init(&d, null, src);
  Module *m = parse_module(src, &d), *pre = NULL;
  if (d.nerrors == 0 && prelude) eval_prelude_merge(m, &pre, &d);
  if (d.nerrors == 0) resolve_module(m, &d);
  if (d.nerrors == 0) infer_module(m, &d);
  int status = -1;
  if (d.nerrors == 0) {
    PassPipeline pl;
    pass_pipeline_init(&pl);
    ck_assert(pass_pipeline_parse(&pl, spec, stderr));
    status = pass_pipeline_run(&pl, m, &d, NULL) == 0 ? 1 : 0;
    pass_pipeline_fini(&pl);
  }
  fclose(null);
  /* a documented refusal (tests/run_sweep_all_passes.py REFUSALS): skipped */
  if (status == 0 && msgs && (strstr(msgs, "LambdaLift:") || strstr(msgs, "Defunctionalization:"))) status = -1;
  free(msgs);
  *out = m;
  *src_out = src;
  *pre_out = pre;
  return status;
}

static void free_golden(Module *m, Source *src, Module *pre) {
  module_free(m);
  if (pre) eval_prelude_free(pre);
  source_free(src);
}

static void collect_goldens(void) {
  if (golden_paths.len) return;
  ck_assert_int_eq(nftw("tests/golden", note_golden, 16, FTW_PHYS), 0);
  ck_assert_uint_gt(golden_paths.len, 100);
}

START_TEST(lambda_lift_every_golden) {
  collect_goldens();
  int checked = 0;
  for (size_t i = 0; i < golden_paths.len; i++) {
    Module *m, *pre;
    Source *src;
    int st = run_golden_file(golden_paths.data[i], "LambdaLift", &m, &src, &pre);
    if (st < 0) {
      if (m) free_golden(m, src, pre);
      continue;
    }
    if (st == 0) ck_abort_msg("LambdaLift failed on %s", golden_paths.data[i]);
    int n = nested_literals(m);
    if (n) ck_abort_msg("%s: %d function literal(s) left after LambdaLift", golden_paths.data[i], n);
    free_golden(m, src, pre);
    checked++;
  }
  ck_assert_int_gt(checked, 300);
}
END_TEST

/* After Defunctionalization, the code @main reaches holds no function value
 * but globals in callee position: no literal, no variable, argument or
 * result of function type. */
typedef struct FoScan {
  int bad;
  VEC(GlobalDef *) todo;
  PtrMap seen;
} FoScan;

static void scan_fo(Expr *e, void *ud) {
  FoScan *s = ud;
  if (e->kind == EXPR_GLOBAL && e->global.def && !ptrmap_find(&s->seen, e->global.def)) {
    ptrmap_put(&s->seen, e->global.def, 1);
    vec_push(s->todo, e->global.def);
  }
  if (e->kind == EXPR_FN || (e->kind == EXPR_VAR && has_fn_type(e->type))) s->bad++;
  if (e->kind == EXPR_CALL) {
    s->bad += has_fn_type(e->type);
    for (uint32_t i = 0; i < e->call.nargs; i++) s->bad += has_fn_type(e->call.args[i]->type);
  }
}

static int function_values_from_main(Module *m) {
  FoScan s = {0};
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, "main") == 0) vec_push(s.todo, m->defs[i]);
  for (size_t i = 0; i < s.todo.len; i++)
    if (s.todo.data[i]->fn) walk_post_order(s.todo.data[i]->fn->body, true, scan_fo, &s);
  vec_free(s.todo);
  ptrmap_free(&s.seen);
  return s.bad;
}

START_TEST(defunctionalization_every_golden) {
  collect_goldens();
  int checked = 0, refused = 0;
  for (size_t i = 0; i < golden_paths.len; i++) {
    Module *m, *pre;
    Source *src;
    int st = run_golden_file(golden_paths.data[i], "Defunctionalization", &m, &src, &pre);
    if (st < 0) {
      if (m) free_golden(m, src, pre);
      continue;
    }
    if (st == 0) {
      refused++; /* a documented precondition (e.g. @main takes a function) */
    } else {
      int n = function_values_from_main(m);
      if (n) ck_abort_msg("%s: %d function value(s) left after Defunctionalization", golden_paths.data[i], n);
      checked++;
    }
    free_golden(m, src, pre);
  }
  ck_assert_int_gt(checked, 300);
  ck_assert_int_lt(refused, checked / 10);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("functional");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, lambda_lift_leaves_only_globals);
  tcase_add_test(tc, lambda_lift_prelude_leaves_only_globals);
  tcase_add_test(tc, inline_removes_marked_globals);
  tcase_add_test(tc, eta_expand_shares_one_literal);
  tcase_add_test(tc, defunctionalization_leaves_first_order_code);
  tcase_add_test(tc, defunctionalization_many_cases_linear);
  tcase_add_test(tc, lambda_lift_every_golden);
  tcase_add_test(tc, defunctionalization_every_golden);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return unit_run(suite());
}
