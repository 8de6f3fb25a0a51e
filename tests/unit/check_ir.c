/* tests/unit/check_ir.c — the ir/ core: arena, mem hook, diagnostics, dtypes, AST helpers. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ir/arena.h"
#include "ir/ast.h"
#include "ir/build.h"
#include "ir/fresh_name.h"
#include "ir/diag.h"
#include "ir/dtype.h"
#include "ir/mem.h"
#include "ir/prefault.h"
#include "ir/type_any.h"
#include "ir/walk.h"
#include "tests/unit/unit_run.h"

START_TEST(arena_alignment_and_big_blocks) {
  Arena *a = arena_new();
  for (int i = 0; i < 1000; i++) {
    char *p = arena_alloc(a, (size_t)(i % 37) + 1);
    ck_assert_uint_eq((uintptr_t)p % 16, 0);
    ck_assert_int_eq(p[0], 0);
  }
  void *q = arena_alloc_aligned(a, 100, 64);
  ck_assert_uint_eq((uintptr_t)q % 64, 0);
  void *big = arena_alloc_big(a, 1 << 20);
  ck_assert_uint_eq((uintptr_t)big % 64, 0);
  memset(big, 1, 1 << 20);
  ck_assert_str_eq(arena_strndup(a, "hello world", 5), "hello");
  ck_assert_uint_ge(arena_used(a), (1u << 20));
  arena_free(a);
}
END_TEST

/* arena_reset keeps the newest chunk (its pages are reused: the first
 * allocation after a reset is where the kept chunk starts again) and hands
 * it out zeroed again; the older chunks and big blocks go; used restarts. */
START_TEST(arena_reset_reuses_zeroed_chunk) {
  Arena *a = arena_new();
  unsigned char *last = NULL;
  for (int i = 0; i < 200000; i++) { /* past HUGE_CHUNK: several chunks, the newest mmap'ed */
    last = arena_alloc(a, 48);
    memset(last, 0xab, 48);
  }
  void *big = arena_alloc_big(a, 1 << 20);
  memset(big, 1, 1 << 20);
  size_t before = arena_used(a);
  ck_assert_uint_ge(before, 200000u * 48);
  arena_reset(a);
  ck_assert_uint_eq(arena_used(a), 0);
  for (int round = 0; round < 3; round++) {
    unsigned char *first = arena_alloc(a, 48), *p = first;
    for (int i = 0; i < 1000; i++, p = arena_alloc(a, 48)) {
      for (int k = 0; k < 48; k++) ck_assert_int_eq(p[k], 0);
      memset(p, 0xcd, 48);
    }
    ck_assert_uint_le(arena_used(a), 1001u * 48);
    arena_reset(a);
    ck_assert_ptr_eq(arena_alloc(a, 48), first); /* the same chunk again */
    arena_reset(a);
  }
  char *s = arena_strndup(a, "abc", 3); /* 1-byte alignment after a reset */
  ck_assert_str_eq(s, "abc");
  arena_free(a);
  Arena *empty = arena_new(); /* a reset before any allocation is a no-op */
  arena_reset(empty);
  ck_assert_int_eq(*(char *)arena_alloc(empty, 8), 0);
  arena_free(empty);
}
END_TEST

/* Every byte of p[0, n) is zero (one word per 512 bytes and the last one). */
static bool sampled_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i += 512)
    if (p[i]) return false;
  return p[n - 1] == 0;
}

/* Waits (at most ~2 s) until the prefault thread has a chunk ready. */
static bool wait_ready(void) {
  for (int i = 0; i < 400; i++) {
    if (prefault_stats().ready) return true;
    nanosleep(&(struct timespec){0, 5000000}, NULL);
  }
  return false;
}

/* huge_map_ahead: 2 MiB-aligned zero chunks; after the first call a thread
 * faults the next ones in and later calls take them (an arena growing past
 * two huge chunks uses it); a forked child maps its own and does not hang. */
START_TEST(prefault_serves_zero_chunks_ahead) {
  enum { CHUNK = 8u << 20 };
  unsetenv("RELAYC_PREFAULT");
  unsigned char *first = huge_map_ahead(CHUNK);
  ck_assert_uint_eq((uintptr_t)first % (2u << 20), 0);
  ck_assert(sampled_zero(first, CHUNK));
  PrefaultStats st = prefault_stats();
  if (!st.running) { /* valgrind or a sanitizer build: plain mappings only */
    munmap(first, CHUNK);
    return;
  }
  ck_assert(wait_ready());
  unsigned char *next = huge_map_ahead(CHUNK);
  ck_assert_uint_eq(prefault_stats().taken_ready, st.taken_ready + 1);
  ck_assert_uint_eq((uintptr_t)next % (2u << 20), 0);
  ck_assert(sampled_zero(next, CHUNK));
  memset(next, 0x5a, CHUNK);
  ck_assert(wait_ready());
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) { /* the child: no thread; plain zero mappings */
    alarm(5);
    unsigned taken = prefault_stats().taken_ready;
    if (prefault_stats().running) _exit(3);
    for (int i = 0; i < 3; i++) {
      unsigned char *c = huge_map_ahead(CHUNK);
      if (!sampled_zero(c, CHUNK)) _exit(1);
      memset(c, 1, CHUNK);
    }
    _exit(prefault_stats().taken_ready == taken ? 0 : 2);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  Arena *a = arena_new_huge(); /* three huge chunks: the last two from huge_map_ahead */
  unsigned before = prefault_stats().taken_ready + prefault_stats().mapped_fresh;
  for (size_t i = 0; i < 3 * (size_t)CHUNK / 4096; i++) ck_assert(sampled_zero(arena_alloc(a, 4000), 4000));
  ck_assert_uint_eq(prefault_stats().taken_ready + prefault_stats().mapped_fresh, before + 2);
  arena_free(a);
  munmap(first, CHUNK);
  munmap(next, CHUNK);
}
END_TEST

START_TEST(dtype_names) {
  DType t;
  const char *ok[] = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint64", "float16",
                      "float32", "float64", "bfloat16", "int8x4", "float16x4", "handle"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    char buf[32];
    ck_assert_msg(dtype_parse(ok[i], strlen(ok[i]), &t), "%s", ok[i]);
    ck_assert_str_eq(dtype_name(t, buf), ok[i]);
  }
  ck_assert(dtype_parse("int", 3, &t) && dtype_eq(t, DT_I32));
  ck_assert(dtype_parse("float", 5, &t) && dtype_eq(t, DT_F32));
  const char *bad[] = {"int_t", "floaty", "integer", "boolean", "int0", "x", "", "uint8x", "handle64"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(!dtype_parse(bad[i], strlen(bad[i]), &t), "%s", bad[i]);
}
END_TEST

START_TEST(half_conversions) {
  ck_assert_float_eq(half_to_float(float_to_half(1.5f)), 1.5f);
  ck_assert_float_eq(half_to_float(float_to_half(65504.f)), 65504.f);
  ck_assert_uint_eq(float_to_half(1e6f), 0x7c00); /* overflow to +inf */
  ck_assert_float_eq(half_to_float(0x0001), 5.9604645e-08f); /* smallest subnormal */
  for (uint32_t h = 0; h < 0x7c00; h++) ck_assert_uint_eq(float_to_half(half_to_float((uint16_t)h)), h);
}
END_TEST

/* Regression: the signed/unsigned ?: once made int32 -7 read back as 4294967289. */
START_TEST(scalar_constants_read_back_signed) {
  Module *m = module_new(NULL);
  ck_assert_int_eq(const_scalar_as_int(expr_scalar_int(m, DT_I32, -7, span_make(0, 0))->constant), -7);
  ck_assert_int_eq(const_scalar_as_int(expr_scalar_int(m, DT_I16, -3, span_make(0, 0))->constant), -3);
  ck_assert_int_eq(const_scalar_as_int(expr_scalar_int(m, DT_I64, -1, span_make(0, 0))->constant), -1);
  ck_assert_double_eq(const_scalar_as_double(expr_scalar_float(m, DT_F16, 2.5, span_make(0, 0))->constant), 2.5);
  ck_assert_int_eq(const_scalar_as_int(expr_scalar_bool(m, true, span_make(0, 0))->constant), 1);
  module_free(m);
}
END_TEST

static char *diag_text(const char *src_text, Span sp, const char *msg) {
  Source *src = source_new("t.relay", strdup(src_text), strlen(src_text));
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  Diag d;
  diag_init(&d, f, src);
  diag_error(&d, sp, "%s", msg);
  fclose(f);
  source_free(src);
  return buf;
}

START_TEST(diagnostic_layout) {
  char *t = diag_text("line one\n  add(%x, %y)\n", span_make(19, 21), "unbound local variable %y");
  ck_assert_str_eq(t, "t.relay:2:11: error: unbound local variable %y\n"
                      "    2 |   add(%x, %y)\n"
                      "      |           ^~\n");
  free(t);
  /* a point at the end of input, no trailing newline */
  t = diag_text("abc", span_make(3, 3), "unexpected end of input");
  ck_assert_str_eq(t, "t.relay:1:4: error: unexpected end of input\n    1 | abc\n      |    ^\n");
  free(t);
}
END_TEST

START_TEST(diagnostic_long_line_is_windowed) {
  size_t n = 100000;
  char *text = malloc(n + 1);
  memset(text, 'A', n);
  text[n] = 0;
  char *t = diag_text(text, span_make(50000, 50001), "bad base64");
  ck_assert_uint_lt(strlen(t), 700);
  ck_assert_ptr_nonnull(strstr(t, "..."));
  free(t);
  free(text);
}
END_TEST

START_TEST(error_cap) {
  Source *src = source_new("t.relay", strdup("x"), 1);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  Diag d;
  diag_init(&d, f, src);
  d.max_errors = 3;
  for (int i = 0; i < 10; i++) diag_error(&d, span_make(0, 1), "e%d", i);
  fclose(f);
  ck_assert_int_eq(d.nerrors, 10);
  ck_assert_ptr_null(strstr(buf, "e3"));
  ck_assert_ptr_nonnull(strstr(buf, "too many errors"));
  free(buf);
  source_free(src);
}
END_TEST

static size_t count_of(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static void warn_at(Diag *d, uint32_t lo) {
  diag_warning(d, span_make(lo, lo + 1), "unreachable clause %u", lo);
  diag_note(d, span_make(0, 1), "because of this");
}

/* A pass pipeline re-checks the module after each pass: the same warning
 * (text and span) is reported once, with its notes; others still are. */
START_TEST(warnings_reported_once) {
  Source *src = source_new("t.relay", strdup("abc"), 3);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  Diag d;
  diag_init(&d, f, src);
  for (int round = 0; round < 3; round++) {
    warn_at(&d, 1);
    warn_at(&d, 2);
    diag_error(&d, span_make(1, 2), "an error is never merged");
    diag_warning(&d, span_make(0, 0), "same place, text %s", "one"); /* the text tells them apart */
    diag_warning(&d, span_make(0, 0), "same place, text %s", "two");
  }
  fclose(f);
  ck_assert_uint_eq(count_of(buf, "text one"), 1);
  ck_assert_uint_eq(count_of(buf, "text two"), 1);
  ck_assert_uint_eq(count_of(buf, "warning: unreachable clause 1"), 1);
  ck_assert_uint_eq(count_of(buf, "warning: unreachable clause 2"), 1);
  ck_assert_uint_eq(count_of(buf, "note: because of this"), 2);
  ck_assert_uint_eq(count_of(buf, "error: an error is never merged"), 3);
  ck_assert_int_eq(d.nwarnings, 4);
  free(buf);
  source_free(src);
}
END_TEST

/* Naive LCA by parent walks, against the jump-pointer one: random trees,
 * a 100,000-deep chain, and two roots. */
static uint32_t naive_lca(const ScopeTree *t, uint32_t a, uint32_t b) {
  while (t->data[a].depth > t->data[b].depth) a = t->data[a].parent;
  while (t->data[b].depth > t->data[a].depth) b = t->data[b].parent;
  while (a != b) {
    a = t->data[a].parent;
    b = t->data[b].parent;
    if (a == SCOPE_TREE_NONE || b == SCOPE_TREE_NONE) return SCOPE_TREE_NONE;
  }
  return a;
}

START_TEST(scope_tree_lca_matches_parent_walks) {
  ScopeTree t = {0};
  uint32_t seed = 12345;
  uint32_t r1 = scope_tree_add(&t, SCOPE_TREE_NONE);
  for (int i = 0; i < 3000; i++) {
    seed = seed * 1103515245u + 12345u;
    uint32_t parent = (seed >> 8) % (uint32_t)t.len;
    if (i % 7 == 0) parent = (uint32_t)t.len - 1; /* long paths too */
    scope_tree_add(&t, parent);
  }
  for (int i = 0; i < 20000; i++) {
    seed = seed * 1103515245u + 12345u;
    uint32_t a = (seed >> 4) % (uint32_t)t.len;
    seed = seed * 1103515245u + 12345u;
    uint32_t b = (seed >> 4) % (uint32_t)t.len;
    ck_assert_uint_eq(scope_tree_lca(&t, a, b), naive_lca(&t, a, b));
  }
  uint32_t r2 = scope_tree_add(&t, SCOPE_TREE_NONE), c2 = scope_tree_add(&t, r2);
  ck_assert_uint_eq(scope_tree_lca(&t, c2, r1 + 5), SCOPE_TREE_NONE);
  ck_assert_uint_eq(scope_tree_lca(&t, c2, r2), r2);
  scope_tree_free(&t);
  uint32_t prev = scope_tree_add(&t, SCOPE_TREE_NONE), mid = 0;
  for (uint32_t i = 1; i < 100000; i++) {
    prev = scope_tree_add(&t, prev);
    if (i == 40000) mid = prev;
  }
  uint32_t side = scope_tree_add(&t, mid);
  ck_assert_uint_eq(scope_tree_lca(&t, prev, side), mid);
  ck_assert_uint_eq(scope_tree_lca(&t, side, 0), 0);
  scope_tree_free(&t);
}
END_TEST

/* walk_each_once: every distinct node once (a shared node once, a node
 * reached by two paths once), function bodies only when asked, every mark
 * put back. */
static void count_visit(Expr *e, void *ud) {
  (void)e;
  (*(int *)ud)++;
}

START_TEST(walk_each_once_visits_distinct_nodes) {
  Module *m = module_new(NULL);
  Span s0 = {0, 0};
  Var *x = var_new(m, "x", s0, NULL);
  Expr *use = build_var(m, x, s0);
  Expr *shared = build_proj(m, use, 0, s0);               /* reached three times below */
  Expr *pair = build_tuple(m, (Expr *[]){shared, shared}, 2, s0);
  Function *f = build_function(m, NULL, 0, NULL, shared, NULL, s0);
  Expr *lit = build_fn(m, f, s0);
  Expr *root = build_tuple(m, (Expr *[]){pair, lit}, 2, s0);
  int n = 0;
  walk_each_once(root, true, count_visit, &n);
  ck_assert_int_eq(n, 5); /* root, pair, lit, shared, use */
  n = 0;
  walk_each_once(root, true, count_visit, &n); /* the same count again: old tags are not this walk's */
  ck_assert_int_eq(n, 5);
  n = 0;
  walk_each_once(lit, false, count_visit, &n); /* the literal alone, its body not entered */
  ck_assert_int_eq(n, 1);
  n = 0;
  walk_post_order(root, true, count_visit, &n); /* what the ordered walk counts */
  ck_assert_int_eq(n, 5);
  shared->mark = 77; /* marks are put back */
  use->mark = 0;
  walk_each_once(root, true, count_visit, &n);
  ck_assert_uint_eq(shared->mark, 77);
  ck_assert_uint_eq(use->mark, 0);
  module_free(m);
}
END_TEST

/* ir/walk.h pattern_each_var: every variable a pattern binds, nested in
 * constructor and tuple patterns, left to right; wildcards bind none. */
static Pattern *pat_var(Module *m, Var *v) {
  Pattern *p = pattern_new(m, PAT_VAR, (Span){0, 0});
  p->var = v;
  return p;
}

static void collect_var(Var *v, void *ud) {
  Var ***at = ud;
  *(*at)++ = v;
}

START_TEST(pattern_each_var_left_to_right) {
  Module *m = module_new(NULL);
  Span s0 = {0, 0};
  Var *a = var_new(m, "a", s0, NULL), *b = var_new(m, "b", s0, NULL), *c = var_new(m, "c", s0, NULL);
  /* (%a, C(%b, _), (%c,)) */
  Pattern *ctor = pattern_new(m, PAT_CTOR, s0);
  ctor->ctor.name = "C";
  ctor->ctor.args = (Pattern *[]){pat_var(m, b), pattern_new(m, PAT_WILDCARD, s0)};
  ctor->ctor.nargs = 2;
  Pattern *inner = pattern_new(m, PAT_TUPLE, s0);
  inner->tuple.fields = (Pattern *[]){pat_var(m, c)};
  inner->tuple.n = 1;
  Pattern *outer = pattern_new(m, PAT_TUPLE, s0);
  outer->tuple.fields = (Pattern *[]){pat_var(m, a), ctor, inner};
  outer->tuple.n = 3;
  Var *got[4] = {NULL}, **at = got;
  pattern_each_var(outer, collect_var, &at);
  ck_assert_int_eq(at - got, 3);
  ck_assert_ptr_eq(got[0], a);
  ck_assert_ptr_eq(got[1], b);
  ck_assert_ptr_eq(got[2], c);
  module_free(m);
}
END_TEST

/* Fresh names are prefix_N from the module's counter, cut at 95 characters. */
START_TEST(fresh_var_names) {
  Module *m = module_new(NULL);
  m->next_fresh = 4294967295u;
  ck_assert_str_eq(var_name(build_fresh_var(m, "x", NULL, (Span){0, 0})), "x_4294967295");
  ck_assert_str_eq(var_name(build_fresh_var(m, "", NULL, (Span){0, 0})), "_0");
  char prefix[120], want[160];
  const uint32_t edges[] = {1, 9, 10, 11, 99, 100, 101, 999, 1000, 10009, 99999, 100000, 1234567, 4000000000u};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) { /* digits two at a time: odd and even lengths */
    snprintf(want, sizeof want, "x_%u", edges[i]);
    ck_assert_str_eq(build_numbered_name(m, "x", edges[i]), want);
  }
  m->next_fresh = 0; /* consecutive numbers across 9 -> 10, 99 -> 100, 999 -> 1000 */
  for (uint32_t n = 0; n < 1100; n++) {
    snprintf(want, sizeof want, "v_%u", n);
    ck_assert_str_eq(var_name(build_fresh_var(m, "v", NULL, (Span){0, 0})), want);
  }
  const uint32_t jumps[] = {99999, 100000, 7, 8, 4294967294u, 4294967295u, 0, 1};
  for (size_t i = 0; i < sizeof jumps / sizeof jumps[0]; i++) { /* out of order, and the wrap */
    snprintf(want, sizeof want, "y_%u", jumps[i]);
    ck_assert_str_eq(build_numbered_name(m, "y", jumps[i]), want);
  }
  memset(prefix, 'p', sizeof prefix - 1);
  prefix[sizeof prefix - 1] = 0;
  for (uint32_t n = 90; n < 100; n++) { /* the cut falls inside the prefix, at the '_', in the digits */
    prefix[n] = 0;
    m->next_fresh = 12345;
    snprintf(want, sizeof want, "%s_%u", prefix, 12345u);
    want[95] = 0; /* what snprintf into the old 96-byte buffer kept */
    ck_assert_str_eq(var_name(build_fresh_var(m, prefix, NULL, (Span){0, 0})), want);
    prefix[n] = 'p';
  }
  module_free(m);
}
END_TEST

/* A fresh variable's name is spelled only when asked for: var_name_in spells
 * it into the caller's buffer and keeps nothing, a copy of the binder keeps
 * the unspelled name, var_name spells it once and keeps it; a number past
 * what Var.fresh holds is spelled at once. */
START_TEST(fresh_var_names_spelled_lazily) {
  Module *m = module_new(NULL);
  m->next_fresh = 41;
  Var *v = build_fresh_var(m, "grad", NULL, (Span){0, 0});
  ck_assert_uint_eq(v->fresh, 42);
  ck_assert_str_eq(v->name_, "grad");
  char buf[VAR_NAME_BUF];
  ck_assert_str_eq(var_name_in(v, buf), "grad_41");
  ck_assert_uint_eq(v->fresh, 42); /* nothing kept */
  Var *c = build_var_like(m, v);
  ck_assert_uint_eq(c->fresh, 42);
  const char *once = var_name(v);
  ck_assert_str_eq(once, "grad_41");
  ck_assert_uint_eq(v->fresh, 0);
  ck_assert_ptr_eq(var_name(v), once); /* spelled once */
  ck_assert_str_eq(var_name(c), "grad_41");
  ck_assert_ptr_eq(var_name_in(v, buf), once);
  m->next_fresh = FRESH_NAME_LAZY_MAX + 1;
  Var *far = build_fresh_var(m, "y", NULL, (Span){0, 0});
  ck_assert_uint_eq(far->fresh, 0);
  snprintf(buf, sizeof buf, "y_%u", FRESH_NAME_LAZY_MAX + 1);
  ck_assert_str_eq(far->name_, buf);
  Var *last = build_numbered_var(m, "z", FRESH_NAME_LAZY_MAX, NULL, (Span){0, 0});
  ck_assert_uint_eq(last->fresh, FRESH_NAME_LAZY_MAX + 1);
  snprintf(buf, sizeof buf, "z_%u", FRESH_NAME_LAZY_MAX);
  ck_assert_str_eq(var_name(last), buf);
  module_free(m);
}
END_TEST

/* type_any (and type_ground): parts are tuple fields, function arguments and result, ADT
 * arguments and a reference's contents; TYPE_ANY_SOLVED follows a solved
 * unification variable, TYPE_ANY_MISSING makes a NULL part and a part past
 * the stack bound answer yes. */
static bool is_func_part(const Type *t, void *ctx) {
  (*(int *)ctx)++;
  return t->kind == TYPE_FUNC;
}

static Type *one_part(Module *m, TypeKind kind, Type *inner) {
  Type *t = type_new(m, kind, (Span){0, 0});
  if (kind == TYPE_REF) t->ref.inner = inner;
  if (kind == TYPE_TUPLE) {
    t->tuple.fields = arena_alloc(m->arena, sizeof(Type *));
    t->tuple.fields[0] = inner;
    t->tuple.n = 1;
  }
  return t;
}

START_TEST(type_any_parts_links_and_missing) {
  stack_guard_init(8u << 20);
  Module *m = module_new(NULL);
  Type *f32 = type_scalar(m, DT_F32), *fn = type_new(m, TYPE_FUNC, (Span){0, 0});
  fn->func.ret = f32;
  Type *u = type_new(m, TYPE_UVAR, (Span){0, 0});
  u->uvar.link = fn;
  Type *in_ref = one_part(m, TYPE_REF, u);
  int asked = 0;
  ck_assert(!type_any(in_ref, is_func_part, &asked, 0)); /* the link is not followed */
  ck_assert_int_eq(asked, 2);
  ck_assert(type_any(in_ref, is_func_part, &asked, TYPE_ANY_SOLVED));
  Type *pair = type_new(m, TYPE_TUPLE, (Span){0, 0});
  pair->tuple.fields = arena_alloc(m->arena, 2 * sizeof(Type *));
  pair->tuple.fields[0] = f32, pair->tuple.fields[1] = NULL;
  ck_assert(!type_any(pair, is_func_part, &asked, TYPE_ANY_SOLVED));
  pair->tuple.n = 2;
  ck_assert(!type_any(pair, is_func_part, &asked, 0));
  ck_assert(type_any(pair, is_func_part, &asked, TYPE_ANY_MISSING));
  asked = 0; /* the first yes ends the walk: the tensor result is not asked */
  ck_assert(type_any(fn, is_func_part, &asked, 0));
  ck_assert_int_eq(asked, 1);
  ck_assert(type_ground(fn, false) && type_ground(fn, true));
  Type *tv = type_new(m, TYPE_VAR, (Span){0, 0});
  fn->func.ret = tv; /* a type parameter: ground only when they are allowed */
  ck_assert(!type_ground(fn, false) && type_ground(fn, true));
  fn->func.ret = f32;
  ck_assert(!type_ground(in_ref, true)); /* a uvar, solved or not, is no ground part */
  ck_assert(!type_ground(NULL, true));
  Type *deep = f32; /* a million levels: bounded, not a crash */
  for (int i = 0; i < 1000000; i++) deep = one_part(m, i % 2 ? TYPE_REF : TYPE_TUPLE, deep);
  ck_assert(!type_any(deep, is_func_part, &asked, 0));
  ck_assert(type_any(deep, is_func_part, &asked, TYPE_ANY_MISSING));
  ck_assert(!type_ground(deep, true));
  module_free(m);
}
END_TEST

START_TEST(edit_distances) {
  ck_assert_uint_eq(edit_distance("add", "add", 3), 0);
  ck_assert_uint_eq(edit_distance("nn.conv", "nn.conv2d", 3), 2);
  ck_assert_uint_gt(edit_distance("softmax", "add", 2), 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ir");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, arena_alignment_and_big_blocks);
  tcase_add_test(tc, arena_reset_reuses_zeroed_chunk);
  tcase_add_test(tc, prefault_serves_zero_chunks_ahead);
  tcase_add_test(tc, dtype_names);
  tcase_add_test(tc, half_conversions);
  tcase_add_test(tc, scalar_constants_read_back_signed);
  tcase_add_test(tc, diagnostic_layout);
  tcase_add_test(tc, diagnostic_long_line_is_windowed);
  tcase_add_test(tc, error_cap);
  tcase_add_test(tc, warnings_reported_once);
  tcase_add_test(tc, edit_distances);
  tcase_add_test(tc, type_any_parts_links_and_missing);
  tcase_add_test(tc, walk_each_once_visits_distinct_nodes);
  tcase_add_test(tc, pattern_each_var_left_to_right);
  tcase_add_test(tc, fresh_var_names);
  tcase_add_test(tc, fresh_var_names_spelled_lazily);
  tcase_add_test(tc, scope_tree_lca_matches_parent_walks);
  suite_add_tcase(s, tc);
  return unit_run(s);
}
