/* tests/fuzz/fuzz_passes.c — fuzzing the passes and the interpreter (issue 10).
 *
 * The oracle (fp_check) takes one program text and, when it type-checks:
 *   1. runs it as `relayc --run` would (relayc's run-time rewrites, lowering,
 *      the VM) under a step and memory budget: the baseline value;
 *   2. for each pass spec (every implemented pass, a few option variants and
 *      pipelines, -O1..-O3) on a fresh copy: runs the pass, prints the
 *      result, re-parses and re-types the print, requires printing to be
 *      idempotent and the re-parsed module to be module_equal to the pass
 *      output, then runs the pass output and compares its value with the
 *      baseline: exactly (the printed value), within 1e-5 for the passes
 *      that round differently, within 1e-2 for FastMath and ToMixedPrecision
 *      (float16: not where an original value is beyond float16's range;
 *      FastMath: not where TVM's approximations leave their domain,
 *      fastmath_range), not at all for ToCPS, whose @main returns otherwise;
 *      Gradient's and FirstOrderGradient's value (their result's first
 *      field) within 1e-5; a pipeline after a gradient pass (Gradient,FoldConstant)
 *      against that pass's own run; -O1..-O3 against the -O0 run (no --run
 *      pipeline); @main's parameters get synthesized data (synth_arg);
 *      the text around the numbers (bools,
 *      constructors, brackets) always exactly. A value that differs under a
 *      spec with a limited range (ToMixedPrecision: float16's 65504, 16
 *      for an exponential's argument, 2048 for a float cast to an integer
 *      type, no float16 ties reaching an order- or index-valued operator
 *      (topk, argmax, a comparison...); FastMath: 2^126, where fast_exp gives
 *      inf; SimplifyInference and -O1..-O3: 2^48, where its float32
 *      decompositions' sums of squares can overflow) runs the original once
 *      more with a float-range probe (range_probe: every float operator
 *      result noted): an intermediate beyond the range, or an inf or NaN,
 *      means not compared (tests/fuzz/README.md); so does a run-time error
 *      of the pass output (a NaN a kernel refuses) under such a spec.
 * Every run (the original's, -O0's, each pass output's) must return a value
 * of @main's checked result type (value_type.h: dtypes, ranks and known
 * extents, tuples, ADT values by their constructor's type, closures, refs);
 * a program whose own value contradicts its type already at -O0 (a `?`
 * extent unified with an annotated one) is compared by value only.
 * Every pipeline runs with PassRunOptions.verify_retype: the runner's
 * incremental re-typing after each pass is checked against a full
 * re-inference, so a stale type a pass leaves is a failure.
 * A failure is: a crash or sanitizer report (the process dies), a pass error
 * that is not one of the documented refusals or a budget, an internal error
 * (an ill-typed pass output), a print that does not re-parse / round-trip /
 * compare equal, a value that differs, or a pass output that fails at run
 * time where the original ran (unless the original fails so too without
 * relayc --run's pipeline, whose dead-code elimination hid its error). A run
 * that exhausts its budget (steps, stack, tensor bytes) on either side is not
 * compared; a run-time error the original has may disappear
 * (DeadCodeElimination drops unused failing code).
 *
 * Inputs come from mutating seed programs (golden programs with a runnable
 * @main, --run and no inputs): structure-aware mutations on the resolved AST
 * (operators swapped with others of the same arity, constants, attribute
 * values and annotated shapes changed, subexpressions wrapped in let / if /
 * fn / tuple / ref, call arguments and let values shared to make DAGs, deep
 * wrapping up to 10,000 levels) printed back to text, and byte-level ones.
 *
 * Two builds of this one file:
 *   - the standalone driver (`make fuzz-passes`, `make check` runs a short
 *     fixed-seed run): deterministic for a seed and an iteration count;
 *       fuzz_passes [--seed N] [--iters N] [--seconds S] [--passes K]
 *                   [--deep] [--check-seeds] [--skip SPEC]... [--out DIR] [-v] DIR...
 *       fuzz_passes --repro FILE...
 *       fuzz_passes --self-test
 *     --repro runs the oracle on the given files with every pass (exit 1 on a
 *     failure). A failing input is written to DIR (--out, default
 *     build/fuzz-passes) as fail-<iteration>.relay with the report on stderr.
 *     Every input runs under alarm(): a hang writes hang-<iteration>.relay;
 *     a sanitizer report (ASan/UBSan build) writes crash-<iteration>.relay.
 *     --check-seeds first runs every seed, unmutated, through every pass;
 *     --skip leaves out a pass spec (exactly as listed, e.g. ToMixedPrecision).
 *     --self-test checks the oracle's comparisons and range probe on fixed cases.
 *   - with -DFUZZ_PASSES_LIBFUZZER and clang -fsanitize=fuzzer (value_type.c linked too): libFuzzer's
 *     LLVMFuzzerTestOneInput (the oracle, passes chosen from the input's
 *     hash) and LLVMFuzzerCustomMutator (the structural mutations, or
 *     libFuzzer's byte mutations) — tests/fuzz/run.sh passes.
 * Everything runs on a 1 GiB-stack thread with stack_guard_init, like the
 * driver, so deep nesting either works or reports "nested too deeply".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "eval/eval.h"
#include "eval/lower.h"
#include "eval/vm.h"
#include "ir/ast.h"
#include "ir/build.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/print.h"
#include "ir/ptrmap.h"
#include "ops/kernels/kernel.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "ops/relations/type_rel.h"
#include "parser/parser.h"
#include "runtime/tensor.h"
#include "runtime/value.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "transform/callattr.h"
#include "transform/gradient_syntax.h"
#include "transform/pass.h"
#include "transform/rewrite.h"
#include "tests/fuzz/value_type.h"

/* ------------------------------------------------------------ settings */

#define FP_STACK_SIZE ((size_t)1 << 30)

static struct {
  uint64_t max_steps;    /* VM calls + loop iterations per run */
  uint64_t tensor_bytes; /* largest tensor */
  uint64_t live_bytes;   /* all live tensors */
  int npasses;           /* pass specs per input (0 = all) */
  int verbose;
  const char *out_dir;
  unsigned timeout;      /* seconds per input (alarm) */
} cfg = {200000, 4u << 20, 256u << 20, 0, 0, "build/fuzz-passes", 120};

/* ------------------------------------------------------------ random numbers */

typedef struct Rng {
  uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static uint32_t rng_below(Rng *r, uint32_t n) { return n ? (uint32_t)(rng_next(r) % n) : 0; }
static bool rng_chance(Rng *r, uint32_t one_in) { return rng_below(r, one_in) == 0; }

static inline uint64_t hash_bytes(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
  return h;
}

/* ------------------------------------------------------------ the pass specs */

/* CHK_CLOSE: SimplifyInference decomposes layer/instance/group norms into
 * float32 steps where the kernels compute in double and round once, so the
 * last bits differ (relative 1e-5 allowed; the pipelines that contain it
 * too); DivToMul (x / c -> x * (1 / c)) and SimplifyExpr (x * c1 * c2 ->
 * x * (c1 * c2)) round differently by design, as in TVM, and so do the
 * FoldScaleAxis passes ((x * s) conv w -> x conv (w * s), b -> b / s: exact
 * only for power-of-two scales, which the goldens use). CHK_APPROX:
 * FastMath (1e-2). CHK_F16: ToMixedPrecision, 1e-2 where float16 can hold
 * the values (see values_close). CHK_GRAD: Gradient, FirstOrderGradient, whose
 * @main returns (value, gradients): the value within 1e-5. CHK_ZERO_SIGN:
 * LazyGradientInit, exact but for a zero's sign: its Zero cell plus x is x
 * (TVM's GradCell rule), so a first contribution of -0 stays -0 where the
 * eager cell's 0 + -0 is +0 (seed golden/run/zero_cell_plus_negative_zero.relay). */
enum { CHK_VALUE, CHK_CLOSE, CHK_APPROX, CHK_F16, CHK_PRINT, CHK_GRAD, CHK_ZERO_SIGN };

/* Which float range a spec's values are compared within (the range probe,
 * float_range_exceeded): outside it a difference is the format's or the
 * approximation's, not a defect. */
enum {
  LIMIT_NONE,     /* every value compared */
  LIMIT_FLOAT16,  /* ToMixedPrecision: float16 holds |x| <= 65504 */
  LIMIT_FASTMATH, /* FastMath: TVM's fast_exp gives inf beyond 2^126 */
  LIMIT_SQUARES,  /* SimplifyInference (and -O1..-O3): its float32 decompositions
                     square and sum the data (|x| <= 2^48: 2^32 squares stay finite) */
};

typedef struct Spec {
  char text[96];
  int check;
  int limit; /* LIMIT_* */
  int ref;   /* the spec whose run this one's value must equal (a gradient
                pass before others: Gradient,FoldConstant against Gradient), or -1 */
} Spec;

static Spec specs[128];
static int nspecs;
static VEC(const char *) skip_specs; /* --skip SPEC: left out (known failures) */

static int add_spec(const char *text, int check) {
  if (nspecs >= (int)(sizeof specs / sizeof *specs)) return -1;
  for (size_t i = 0; i < skip_specs.len; i++)
    if (!strcmp(skip_specs.data[i], text)) return -1;
  snprintf(specs[nspecs].text, sizeof specs[nspecs].text, "%s", text);
  specs[nspecs].check = check;
  specs[nspecs].ref = -1;
  specs[nspecs].limit = check == CHK_F16      ? LIMIT_FLOAT16
                        : check == CHK_APPROX ? LIMIT_FASTMATH
                        : !strcmp(text, "SimplifyInference") || strstr(text, "-O") ? LIMIT_SQUARES
                                                                                   : LIMIT_NONE;
  return nspecs++;
}

static int spec_index(const char *text) {
  for (int i = 0; i < nspecs; i++)
    if (!strcmp(specs[i].text, text)) return i;
  return -1;
}

/* A pipeline after a gradient pass (`first`), compared with first's own run
 * (a pass that changes what @main returns has no other reference). */
static void add_after(const char *first, const char *rest, int check) {
  int ref = spec_index(first);
  char text[96];
  snprintf(text, sizeof text, "%s,%s", first, rest);
  int i = add_spec(text, ref < 0 ? CHK_PRINT : check);
  if (i >= 0) specs[i].ref = ref;
}

static void init_specs(void) {
  for (int id = 0; id < PASS_COUNT; id++) {
    const PassDef *p = pass_get(id);
    if (!p || !p->run) continue;
    const char *n = p->name;
    int chk = CHK_VALUE;
    if (!strcmp(n, "ToCPS")) chk = CHK_PRINT;
    /* @main returns (value, gradients): the value is compared */
    if (!strcmp(n, "Gradient") || !strcmp(n, "FirstOrderGradient")) chk = CHK_GRAD;
    if (!strcmp(n, "LazyGradientInit")) chk = CHK_ZERO_SIGN;
    if (!strcmp(n, "FastMath")) chk = CHK_APPROX;
    if (!strcmp(n, "ToMixedPrecision")) chk = CHK_F16;
    if (!strcmp(n, "SimplifyInference") || !strcmp(n, "DivToMul") || !strcmp(n, "SimplifyExpr") ||
        strstr(n, "FoldScaleAxis"))
      chk = CHK_CLOSE;
    if (!strcmp(n, "EtaExpand")) add_spec("EtaExpand(expand_constructor=True, expand_global_var=True)", chk);
    else if (!strcmp(n, "UnCPS")) add_spec("ToCPS,UnCPS", chk);
    else add_spec(n, chk);
  }
  add_spec("DeadCodeElimination(inline_once=True)", CHK_VALUE);
  add_spec("ToANormalForm,ToGraphNormalForm,ToANormalForm", CHK_VALUE);
  add_spec("FuseOps(fuse_opt_level=2),DefuseOps", CHK_VALUE);
  add_spec("Inline,PartialEvaluate,DeadCodeElimination", CHK_VALUE);
  add_spec("LambdaLift,Defunctionalization", CHK_VALUE);
  add_spec("-O1", CHK_CLOSE);
  add_spec("-O2", CHK_CLOSE);
  add_spec("-O3", CHK_CLOSE);
  /* functional programs (closures, ADTs, refs, recursion, the prelude) */
  add_spec("ToANormalForm,ToCPS,UnCPS", CHK_VALUE); /* ToCPS refuses graph sharing */
  add_spec("ToCPS,UnCPS,PartialEvaluate", CHK_VALUE); /* continuations nested as deep as @main is long */
  add_spec("LambdaLift,PartialEvaluate,DeadCodeElimination", CHK_VALUE);
  add_spec("PartialEvaluate,LambdaLift,Defunctionalization", CHK_VALUE);
  add_spec("ToANormalForm,LambdaLift,Defunctionalization,DeadCodeElimination", CHK_VALUE);
  add_spec("ToANormalForm,Defunctionalization,ToCPS,UnCPS", CHK_VALUE);
  /* a gradient pass followed by others, each against the gradient's own run */
  static const char *const after_grad[] = {
      "ToANormalForm", "FoldConstant", "DeadCodeElimination", "PartialEvaluate", "PartialEvaluate,DeadCodeElimination",
      "FuseOps", "ToANormalForm,LambdaLift,Defunctionalization", "ToCPS,UnCPS", "ResolveStaticRefs,FoldConstant"};
  for (size_t i = 0; i < sizeof after_grad / sizeof *after_grad; i++) add_after("Gradient", after_grad[i], CHK_VALUE);
  add_after("Gradient", "LazyGradientInit", CHK_ZERO_SIGN);
  add_after("Gradient", "LazyGradientInit,PartialEvaluate", CHK_ZERO_SIGN);
  add_after("Gradient", "-O3", CHK_CLOSE);
  static const char *const after_fo[] = {"ToANormalForm", "FoldConstant", "DeadCodeElimination", "PartialEvaluate",
                                         "FuseOps", "EliminateCommonSubexpr,FoldConstant"};
  for (size_t i = 0; i < sizeof after_fo / sizeof *after_fo; i++) add_after("FirstOrderGradient", after_fo[i], CHK_VALUE);
  add_after("FirstOrderGradient", "-O3", CHK_CLOSE);
}

/* The pipeline of a spec: passes, then an optimisation level (-ON) if the
 * text ends with one. False when the text does not parse. */
static bool spec_pipeline(PassPipeline *pl, const char *text) {
  const char *o = text[0] == '-' ? text : strstr(text, ",-O");
  if (!o) return pass_pipeline_parse(pl, text, stderr);
  if (o > text) {
    char passes[96];
    snprintf(passes, sizeof passes, "%.*s", (int)(o - text), text);
    if (!pass_pipeline_parse(pl, passes, stderr)) return false;
    o++;
  }
  pass_pipeline_add_opt_level(pl, o[2] - '0');
  return true;
}

/* ------------------------------------------------------------ diagnostics capture */

/* One memstream per check; messages are searched for known texts. */
typedef struct Cap {
  char *buf;
  size_t len;
  FILE *f;
} Cap;

static void cap_open(Cap *c) {
  c->buf = NULL;
  c->len = 0;
  c->f = open_memstream(&c->buf, &c->len);
}
static const char *cap_text(Cap *c) {
  fflush(c->f);
  return c->buf ? c->buf : "";
}
static void cap_close(Cap *c) {
  fclose(c->f);
  free(c->buf);
}
static bool has(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* Messages that mean "a budget or a documented limit", not a bug. */
static bool is_budget(const char *msg) {
  return has(msg, "step budget exhausted") || has(msg, "stack overflow") || has(msg, "tensor too large") ||
         has(msg, "out of memory") || has(msg, "nested too deeply") || has(msg, "too large") ||
         has(msg, "fuel");
}

/* The documented refusals of passes (tests/run_sweep_all_passes.py's list). */
static bool is_refusal(const char *msg) {
  static const char *const r[] = {"needs every non-atomic expression to be used once", "Defunctionalization:", "LambdaLift:",
                                  "first-order", "cannot differentiate", "has no gradient", "must not",
                                  "not implemented", "expects @main", "Gradient", "gradient",
                                  /* TVM's pattern rewriter limit, kept on purpose (transform/pattern.c) */
                                  "TVM aborts here too",
                                  /* TVM's ToCPS checks the same ("primitive func not supported yet") */
                                  "ToCPS cannot convert a Primitive function",
                                  /* RemoveUnusedFunctions (-O1..) on a module without @main */
                                  "entry function @main does not exist"};
  if (has(msg, "internal error")) return false;
  for (size_t i = 0; i < sizeof r / sizeof *r; i++)
    if (has(msg, r[i])) return true;
  return is_budget(msg);
}

/* ------------------------------------------------------------ front end */

typedef struct Loaded {
  Source *src;
  Module *m;
  Module *prelude;
} Loaded;

static void unload(Loaded *L) {
  if (L->m) module_free(L->m);
  if (L->prelude) eval_prelude_free(L->prelude);
  if (L->src) source_free(L->src);
  memset(L, 0, sizeof *L);
}

/* parse (+ prelude) → resolve → infer (→ gradient(F) expansion); false with
 * the diagnostics in d when the text is rejected. */
static bool load(Loaded *L, const char *name, const char *text, size_t len, bool prelude, bool typed, Diag *d,
                 FILE *out) {
  memset(L, 0, sizeof *L);
  char *copy = mem_malloc(len + 1);
  memcpy(copy, text, len);
  copy[len] = 0;
  L->src = source_new(name, copy, len);
  diag_init(d, out, L->src);
  L->m = parse_module(L->src, d);
  if (d->nerrors == 0 && prelude) eval_prelude_merge(L->m, &L->prelude, d);
  if (d->nerrors == 0) resolve_module(L->m, d);
  if (d->nerrors == 0 && (typed || gradient_syntax_used(L->m))) {
    infer_module(L->m, d);
    if (d->nerrors == 0 && gradient_syntax_used(L->m)) gradient_syntax_expand(L->m, d);
  }
  return d->nerrors == 0;
}

static char *print_string(Module *m, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  print_module(f, m, (PrintOptions){0});
  fclose(f);
  return buf;
}

static const Function *main_fn(Module *m) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn && !strcmp(m->defs[i]->name, "main")) return m->defs[i]->fn;
  return NULL;
}

/* ------------------------------------------------------------ running */

/* RUN_ILL_TYPED: the run gave a value that does not have @main's checked
 * result type (value_type.h); the mismatch is on the capture. */
enum { RUN_OK, RUN_ERROR, RUN_BUDGET, RUN_REWRITE_FAILED, RUN_ILL_TYPED };

/* ------------------------------------------------------------ @main's arguments */

#define ARG_MAX_ELEMS 65536 /* per parameter; a bigger one makes @main unrunnable */

static const Type *param_type(const Var *v) { return type_solved(v->type ? v->type : v->annot); }

/* Elements of a parameter of static tensor type with a dtype the synthesized
 * data can fill, or -1. */
static int64_t arg_elems(const Var *v) {
  const Type *t = param_type(v);
  if (!t || t->kind != TYPE_TENSOR || t->tensor.dtype.lanes != 1) return -1;
  DType dt = t->tensor.dtype;
  if (dt.code != DT_FLOAT && dt.code != DT_BFLOAT && dt.code != DT_INT && dt.code != DT_UINT) return -1;
  int64_t n = 1;
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    if (t->tensor.dims[i].kind != DIM_INT || t->tensor.dims[i].value < 0) return -1;
    n *= t->tensor.dims[i].value;
    if (n > ARG_MAX_ELEMS) return -1;
  }
  return n;
}

/* Whether every parameter of @main can be given synthesized data (no
 * parameters: trivially). */
static bool main_args_ok(const Function *f) {
  for (uint32_t k = 0; f && k < f->nparams; k++)
    if (arg_elems(f->params[k]) < 0) return false;
  return f != NULL;
}

/* One argument: the same data for a parameter of a program and of every pass
 * output (it depends on the parameter's position and type only): floats
 * 0.25 .. 2.25 (positive, exact in float16; a gradient's log and sqrt stay
 * finite), integers 0 .. 3 (valid indices of small axes), bools alternating. */
static Value synth_arg(const Var *v, uint32_t k) {
  const Type *t = param_type(v);
  int64_t shape[16];
  uint32_t nd = t->tensor.ndim < 16 ? t->tensor.ndim : 16;
  for (uint32_t i = 0; i < nd; i++) shape[i] = t->tensor.dims[i].value;
  DType dt = t->tensor.dtype;
  Tensor *x = tensor_new(dt, (int32_t)nd, shape);
  if (!x) return value_none();
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t r = (i * 5 + k * 3 + 1) % 9;
    if (dt.code == DT_FLOAT || dt.code == DT_BFLOAT) tensor_set_f64(x, i, (double)(r + 1) * 0.25);
    else tensor_set_i64(x, i, dt.bits == 1 ? (i + k) % 2 : r % 4);
  }
  return value_from_tensor(x);
}

/* The input's own value contradicts @main's type, without any rewrite (a `?`
 * extent unified with an annotated one, which neither TVM nor relayc checks at
 * run time): its runs are not checked against the type; set by fp_check. */
static bool value_type_unchecked;

/* The mismatch (malloc'd) of a run's value with @main's result type as
 * checked before the run-time rewrites, then as they leave it; NULL when it
 * has both. */
static char *result_type_mismatch(Module *m, const Type *checked, const Value *result) {
  if (value_type_unchecked) return NULL;
  char *before = checked ? value_type_mismatch(result, checked) : NULL;
  if (before) return before;
  const Function *mf = main_fn(m);
  return mf ? value_type_mismatch(result, main_result_type(mf)) : NULL;
}

/* `relayc --run` on a typed module (consumed by the run-time rewrites): the
 * printed value in *value (malloc'd) on RUN_OK; @main's parameters get
 * synth_arg's data; with first_field only the first field of a tuple result
 * (a gradient's value). The whole value must have @main's result type as
 * checked before the run-time rewrites (and as they leave it): RUN_ILL_TYPED
 * otherwise, with the mismatch on the capture. */
static int run_module_with(Module *m, Diag *d, Cap *cap, char **value, bool run_defaults, bool first_field) {
  *value = NULL;
  size_t mark = (fflush(cap->f), cap->len);
  const Type *checked = main_fn(m) ? main_result_type(main_fn(m)) : NULL;
  PassPipeline rp;
  pass_pipeline_init(&rp);
  if (run_defaults) pass_pipeline_add_run_defaults(&rp);
  PassRunOptions ro = {.retype_if_changed = true, .verify_retype = true};
  int st = pass_pipeline_run(&rp, m, d, &ro);
  pass_pipeline_fini(&rp);
  if (st != 0) return is_budget(cap_text(cap) + mark) ? RUN_BUDGET : RUN_REWRITE_FAILED;
  Program *p = lower_module(m, d);
  if (!p) return is_budget(cap_text(cap) + mark) ? RUN_BUDGET : RUN_ERROR;
  int32_t g = program_global(p, "main");
  int rc = RUN_ERROR;
  const Function *mf = main_fn(m);
  if (g >= 0 && main_args_ok(mf)) {
    Value result = value_none();
    Value *args = mem_calloc(mf->nparams + 1, sizeof *args);
    for (uint32_t k = 0; k < mf->nparams; k++) args[k] = synth_arg(mf->params[k], k);
    int vs = vm_run(p, p->codes[g], args, mf->nparams, &result, d, NULL); /* consumes args */
    mem_free(args);
    char *mismatch = vs == VM_OK ? result_type_mismatch(m, checked, &result) : NULL;
    if (mismatch) {
      fprintf(cap->f, "value type: %s\n", mismatch);
      free(mismatch);
      rc = RUN_ILL_TYPED;
    } else if (vs == VM_OK) {
      size_t n = 0;
      FILE *f = open_memstream(value, &n);
      const Value *shown = &result;
      if (first_field && (result.tag & 0xff) == VK_TUPLE && value_tuple(result)->n > 0) shown = &value_tuple(result)->f[0];
      value_print(f, shown);
      fclose(f);
      rc = RUN_OK;
    } else {
      rc = is_budget(cap_text(cap) + mark) ? RUN_BUDGET : RUN_ERROR;
    }
    value_release(result);
    value_clear_refs(); /* as relayc --run ends: frees cycles through ref cells (Gradient's tape) */
  }
  program_free(p);
  return rc;
}

/* As `relayc --run` runs a module (its default pipeline first). */
static int run_module(Module *m, Diag *d, Cap *cap, char **value) {
  return run_module_with(m, d, cap, value, true, false);
}

/* ------------------------------------------------------------ the float-range probe */

/* The original once more, every operator call with a float tensor result
 * wrapped in `fuzz.range_probe` (an identity operator this driver registers,
 * with copy's type relation), whose kernel records the largest finite
 * magnitude and whether an inf or NaN went through; float constants are
 * scanned as they are. The arguments of exponentials (exp, softmax) are
 * wrapped in `fuzz.exp_arg_probe`, which notes their largest magnitude: an
 * exponential multiplies its argument's relative rounding error by it
 * (float16's 2^-11 at 300 is 15% after exp). It runs only when a spec with a
 * limited range (Spec.limit) gives a value that differs, once per input. It
 * sees the values the interpreter materialises, not those inside one kernel
 * (l2_normalize's squares, in double): the limits are on those values. The
 * float arguments of casts to an integer type are wrapped in
 * `fuzz.int_cast_probe`, which notes their largest magnitude: beyond 2048
 * float16 cannot hold every integer (its spacing is 2 up to 4096, 8 near
 * 10000), and the integer result shows the lost units exactly. */
typedef struct RangeSeen {
  bool ran;           /* the probe ran to the end */
  bool nonfinite;     /* an inf or NaN somewhere */
  double max_abs;     /* the largest finite magnitude */
  double min_abs;     /* the smallest nonzero magnitude (0: every value was 0, inf or NaN) */
  double max_exp_arg; /* the largest finite magnitude an exponential took */
  double max_int_cast; /* the largest finite magnitude cast to an integer type */
  bool f16_tie;        /* an order- or index-valued operator met two float32 values
                          within one float16 spacing of each other (tie_probe) */
} RangeSeen;

static RangeSeen range_seen; /* the probe kernels' record of the current probe run */

/* Notes n float values: their largest magnitude into *max_abs, the smallest
 * nonzero one into range_seen.min_abs when note_min. */
static void range_note(DType dt, const void *data, int64_t n, double *max_abs, bool note_min) {
  if (!dtype_is_float(dt) || dt.lanes != 1) return;
  size_t size = dtype_size(dt);
  for (int64_t i = 0; i < n; i++) {
    double v = fabs(tensor_load_f64(dt, (const char *)data + (size_t)i * size));
    if (!isfinite(v)) {
      range_seen.nonfinite = true;
      continue;
    }
    if (v > *max_abs) *max_abs = v;
    if (note_min && v != 0 && (range_seen.min_abs == 0 || v < range_seen.min_abs)) range_seen.min_abs = v;
  }
}

/* The identity, noting its input into *max_abs. */
static int probe_identity(KernelCtx *c, double *max_abs, bool note_min) {
  const Tensor *x = kernel_input(c, 0);
  range_note(x->dtype, x->data, x->numel, max_abs, note_min);
  Tensor *y = kernel_output(c, x->dtype, x->ndim, x->shape);
  if (!y) return KERNEL_ERROR;
  memcpy(y->data, x->data, x->nbytes);
  return KERNEL_OK;
}
static int range_probe_kernel(KernelCtx *c) { return probe_identity(c, &range_seen.max_abs, true); }
static int exp_arg_probe_kernel(KernelCtx *c) { return probe_identity(c, &range_seen.max_exp_arg, false); }
static int int_cast_probe_kernel(KernelCtx *c) { return probe_identity(c, &range_seen.max_int_cast, false); }

/* ---- ties: order- and index-valued operators (argmax, argmin, argsort, topk,
 * max_pool2d_grad's window maximum, the comparisons) on values float16 does not
 * tell apart. Two distinct float32 values within one float16 spacing (a
 * relative 2^-10) may become equal, or swap, once computed in float16, and the
 * operator then legitimately picks another index or answers the other way
 * (session 13 seed 82 input 59: topk of power(x, 6.1e-5), values 1 to
 * 1.00056, which float16 rounds to 1 or 1.00098). */

/* Distinct a and b (float32 values) that float16 may not tell apart. */
static bool f16_close_pair(double a, double b) {
  return a != b && isfinite(a) && isfinite(b) && fabs(a - b) <= 0x1p-10 * fmax(fabs(a), fabs(b));
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Whether two of x's values are a close pair: sorted, neighbours suffice
 * (the whole tensor, not per axis: a tie anywhere counts). */
static bool has_f16_close_pair(const Tensor *x) {
  if (!dtype_is_float(x->dtype) || x->dtype.lanes != 1 || x->numel < 2) return false;
  double *v = malloc((size_t)x->numel * sizeof *v);
  if (!v) return false;
  size_t size = dtype_size(x->dtype);
  for (int64_t i = 0; i < x->numel; i++) v[i] = tensor_load_f64(x->dtype, (const char *)x->data + (size_t)i * size);
  qsort(v, (size_t)x->numel, sizeof *v, cmp_double);
  bool tie = false;
  for (int64_t i = 1; i < x->numel && !tie; i++) tie = f16_close_pair(v[i - 1], v[i]);
  free(v);
  return tie;
}

/* Whether a and b, broadcast together (a comparison's operands), hold a
 * close pair at one position. */
static bool has_f16_close_pair_at(const Tensor *a, const Tensor *b) {
  int32_t nd;
  int64_t shape[TENSOR_MAX_NDIM], sa[TENSOR_MAX_NDIM], sb[TENSOR_MAX_NDIM];
  if (a->ndim > TENSOR_MAX_NDIM || b->ndim > TENSOR_MAX_NDIM || !dtype_is_float(a->dtype) ||
      a->dtype.lanes != 1 || !dtype_eq(a->dtype, b->dtype) || !kernel_broadcast_shape(a, b, &nd, shape))
    return false;
  /* element strides of a and b in the broadcast frame (0 where broadcast) */
  int64_t ka = 1, kb = 1, n = 1;
  for (int32_t d = nd - 1; d >= 0; d--) {
    int32_t da = d - (nd - a->ndim), db = d - (nd - b->ndim);
    sa[d] = da >= 0 && a->shape[da] != 1 ? ka : 0;
    sb[d] = db >= 0 && b->shape[db] != 1 ? kb : 0;
    if (da >= 0) ka *= a->shape[da];
    if (db >= 0) kb *= b->shape[db];
    n *= shape[d];
  }
  size_t size = dtype_size(a->dtype);
  for (int64_t i = 0; i < n; i++) {
    int64_t oa = 0, ob = 0, rest = i;
    for (int32_t d = nd - 1; d >= 0; d--) {
      int64_t at = rest % shape[d];
      rest /= shape[d];
      oa += at * sa[d];
      ob += at * sb[d];
    }
    double x = tensor_load_f64(a->dtype, (const char *)a->data + (size_t)oa * size);
    double y = tensor_load_f64(a->dtype, (const char *)b->data + (size_t)ob * size);
    if (f16_close_pair(x, y)) return true;
  }
  return false;
}

/* fuzz.tie_probe(x): the identity, noting a close pair among x's values. */
static int tie_probe_kernel(KernelCtx *c) {
  if (has_f16_close_pair(kernel_input(c, 0))) range_seen.f16_tie = true;
  double ignored = 0;
  return probe_identity(c, &ignored, false);
}

/* fuzz.tie_pair_probe(a, b): a as it is, noting a close pair of a and b. */
static int tie_pair_probe_kernel(KernelCtx *c) {
  if (has_f16_close_pair_at(kernel_input(c, 0), kernel_input(c, 1))) range_seen.f16_tie = true;
  double ignored = 0;
  return probe_identity(c, &ignored, false);
}

/* fuzz.tie_pair_probe's type: its first argument's. */
static int rel_first_argument(TypeRelCtx *c) {
  const Type *x = rel_type(c, 0);
  if (!x) return rel_pending(c);
  return rel_assign(c, rel_ninputs(c), (Type *)x) ? REL_DONE : REL_FAIL;
}

static void range_probe_register(void) {
  const OpDef *copy = op_get(op_lookup("copy"));
  OpDef def = {.name = "fuzz.range_probe", .num_inputs = 1, .relation = copy->relation, .kernel = range_probe_kernel};
  if (op_register(&def) < 0) abort();
  def.name = "fuzz.exp_arg_probe";
  def.kernel = exp_arg_probe_kernel;
  if (op_register(&def) < 0) abort();
  def.name = "fuzz.int_cast_probe";
  def.kernel = int_cast_probe_kernel;
  if (op_register(&def) < 0) abort();
  def.name = "fuzz.tie_probe";
  def.kernel = tie_probe_kernel;
  if (op_register(&def) < 0) abort();
  OpDef pair = {.name = "fuzz.tie_pair_probe", .num_inputs = 2, .relation = rel_first_argument,
                .kernel = tie_pair_probe_kernel};
  if (op_register(&pair) < 0) abort();
}

static bool float_tensor(const Type *t) { return t && t->kind == TYPE_TENSOR && dtype_is_float(t->tensor.dtype); }

/* cast(x) or cast_like(x, y) of a float x to an integer type: x wrapped in
 * fuzz.int_cast_probe. */
static Expr *int_cast_wrap(Rewriter *rw, Expr *old, Expr *e) {
  int32_t id = e->call.fn->op.id;
  const Type *t = old->type;
  if ((id != OP_CAST && id != OP_CAST_LIKE) || !t || t->kind != TYPE_TENSOR || !dtype_is_int(t->tensor.dtype) ||
      e->call.nargs < 1 || !float_tensor(old->call.args[0]->type))
    return e;
  Expr *arg = op_call(rw->m, "fuzz.int_cast_probe", &e->call.args[0], 1, NULL, e->span);
  Expr *c = build_copy(rw->m, e);
  c->call.args = arena_memdup(rw->m->arena, e->call.args, e->call.nargs * sizeof *e->call.args);
  c->call.args[0] = arg;
  return c;
}

/* A float32 (or float16) tensor: ToMixedPrecision's values (float64 stays). */
static bool f32_tensor(const Type *t) { return float_tensor(t) && t->tensor.dtype.bits <= 32; }

/* Which argument of an order- or index-valued call ties matter in (-1: none;
 * 0 with *pair for a comparison, whose two operands are compared). topk
 * returning only values is not index-valued. */
static int tie_argument(const Expr *old, bool *pair) {
  *pair = false;
  switch (old->call.fn->op.id) {
  case OP_ARGMAX: case OP_ARGMIN: case OP_ARGSORT: case OP_DYN_TOPK: return 0;
  case OP_TOPK: return strcmp(cattr_str(old, "ret_type", "both"), "values") ? 0 : -1;
  case OP_NN_MAX_POOL2D_GRAD: return 1; /* (out_grad, data): the window's maximum of data */
  case OP_EQUAL: case OP_NOT_EQUAL: case OP_LESS: case OP_LESS_EQUAL: case OP_GREATER: case OP_GREATER_EQUAL:
    *pair = true;
    return old->call.nargs == 2 && f32_tensor(old->call.args[1]->type) ? 0 : -1;
  default: return -1;
  }
}

/* An order- or index-valued call with its float32 argument wrapped in
 * fuzz.tie_probe (a comparison's first in fuzz.tie_pair_probe(a, b)). */
static Expr *tie_wrap(Rewriter *rw, Expr *old, Expr *e) {
  bool pair;
  int i = tie_argument(old, &pair);
  if (i < 0 || (uint32_t)i >= e->call.nargs || !f32_tensor(old->call.args[i]->type)) return e;
  Expr *arg = pair ? op_call(rw->m, "fuzz.tie_pair_probe", e->call.args, 2, NULL, e->span)
                   : op_call(rw->m, "fuzz.tie_probe", &e->call.args[i], 1, NULL, e->span);
  Expr *c = build_copy(rw->m, e);
  c->call.args = arena_memdup(rw->m->arena, e->call.args, e->call.nargs * sizeof *e->call.args);
  c->call.args[i] = arg;
  return c;
}

static Expr *range_wrap(Rewriter *rw, Expr *old, Expr *e) {
  if (e->kind == EXPR_CALL && e->call.fn->kind == EXPR_OP) e = tie_wrap(rw, old, e);
  if (e->kind == EXPR_CONST) {
    size_t size = dtype_size(e->constant->dtype);
    range_note(e->constant->dtype, e->constant->data, size ? (int64_t)(e->constant->nbytes / size) : 0,
               &range_seen.max_abs, true);
  }
  if (e->kind == EXPR_CALL && e->call.fn->kind == EXPR_OP && !float_tensor(old->type)) return int_cast_wrap(rw, old, e);
  if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_OP || !float_tensor(old->type)) return e;
  int32_t id = e->call.fn->op.id;
  if ((id == OP_EXP || id == OP_FAST_EXP || id == OP_NN_SOFTMAX || id == OP_NN_LOG_SOFTMAX) && e->call.nargs == 1 &&
      float_tensor(old->call.args[0]->type)) {
    Expr *arg = op_call(rw->m, "fuzz.exp_arg_probe", &e->call.args[0], 1, NULL, e->span);
    e = build_copy(rw->m, e);
    e->call.args = arena_memdup(rw->m->arena, &arg, sizeof arg);
  }
  return op_call(rw->m, "fuzz.range_probe", &e, 1, NULL, e->span);
}

/* The probe on a program text (see above); .ran false when it did not load,
 * type-check or run to the end. */
static RangeSeen range_probe(const char *text, size_t len, bool prelude) {
  RangeSeen r = {0};
  Cap cap;
  cap_open(&cap);
  Loaded L;
  Diag d;
  if (load(&L, "fuzz.relay", text, len, prelude, true, &d, cap.f)) {
    range_seen = (RangeSeen){0};
    Rewriter rw;
    rw_init(&rw, L.m, &d);
    rw.post = range_wrap;
    bool ok = true;
    for (uint32_t i = 0; i < L.m->ndefs && ok; i++)
      if (L.m->defs[i]->fn) ok = rw_function(&rw, L.m->defs[i]->fn);
    rw_fini(&rw);
    char *value = NULL;
    infer_clear(L.m);
    if (ok && infer_module(L.m, &d) && run_module(L.m, &d, &cap, &value) == RUN_OK) {
      r = range_seen;
      r.ran = true;
    }
    if (!r.ran && cfg.verbose) fprintf(stderr, "  range probe failed:\n%s", cap_text(&cap));
    free(value);
  }
  unload(&L);
  cap_close(&cap);
  return r;
}

/* The next number printed in *p, skipping other text: a literal with its
 * dtype suffix (1.5f, 0f16, -inff64, nanf, 3i8: the suffix is not a second
 * number), not digits inside a name. *at: where it starts (the end of the
 * text when there is none). False at the end of the text. */
static bool next_number(const char **p, double *v, const char **at) {
  const char *s = *p;
  for (; *s; s++) {
    if (s > *p && (isalnum((unsigned char)s[-1]) || s[-1] == '_' || s[-1] == '.')) continue;
    const char *t = s + (*s == '-');
    if (!strncmp(t, "inf", 3) || !strncmp(t, "nan", 3)) {
      *v = t[0] == 'n' ? NAN : *s == '-' ? -INFINITY : INFINITY;
      t += 3;
    } else if (isdigit((unsigned char)*t)) {
      char *e;
      *v = strtod(s, &e);
      t = e;
    } else {
      continue;
    }
    if (*t == 'f' || *t == 'i' || *t == 'u')
      for (t++; isdigit((unsigned char)*t);) t++;
    *at = s;
    *p = t;
    return true;
  }
  *at = *p = s;
  return false;
}

/* values_close's verdicts. */
enum { VAL_DIFFER, VAL_CLOSE, VAL_RANGE };

/* values_close's allowances for values outside a format's or an
 * approximation's range. */
enum { RANGE_NONE, RANGE_F16, RANGE_FASTMATH };

/* Is x, from ToMixedPrecision's output, float16's range where the original
 * y is beyond it: inf or NaN (an overflow, then 0 * inf or inf - inf), or
 * the largest float16 where a cast saturated (max's init -FLT_MAX, a
 * float64 1.8e308, spec/ops.md §2) with y beyond 65504. */
static bool f16_range(double x, double y) {
  if (!isfinite(x)) return isfinite(y);
  return fabs(x) == 65504.0 && fabs(y) > 65504.0 && (x > 0) == (y > 0);
}

/* Is x, from FastMath's output, TVM's fast_* expression outside its domain
 * where the original y is the exact function: fast_exp builds 2^128 = inf
 * below exp's overflow (from its clamp at x = 88.376, where exp is finite,
 * 2.4e38 .. 3.4e38: any finite value beyond 2^126 is taken as that), and
 * fast_erf clamps its input, so erf(NaN) = NaN becomes +-1 (the
 * expressions are TVM's, kept bit-identical: ops/kernels/k_fastmath.h). */
static bool fastmath_range(double x, double y) {
  if (isinf(x) && isfinite(y)) return fabs(y) > 0x1p126 && (x > 0) == (y > 0);
  return isnan(y) && isfinite(x);
}

/* The same text around the numbers (compared exactly: a bool or constructor
 * that differs is a difference) and the same numbers, each within a relative
 * `tol` of the original's (of 1 when smaller), NaN where it has NaN: 1e-2 for FastMath and ToMixedPrecision, as
 * tests/run_sweep_all_passes.py compares. With RANGE_F16, f16_range (an
 * intermediate beyond 65504 overflows or saturates as it should), with
 * RANGE_FASTMATH, fastmath_range: not a difference. Such a value gives
 * VAL_RANGE when the rest is close, and the run counts as not compared. */
static int values_close(const char *a, const char *b, double tol, int range) {
  const char *sa = a, *sb = b;
  int verdict = VAL_CLOSE;
  for (;;) {
    double x, y;
    const char *from_a = sa, *from_b = sb, *at_a, *at_b;
    bool ha = next_number(&sa, &x, &at_a), hb = next_number(&sb, &y, &at_b);
    /* the text between numbers (brackets, True/False, constructors) exactly */
    if (ha != hb || at_a - from_a != at_b - from_b || memcmp(from_a, from_b, (size_t)(at_a - from_a)))
      return VAL_DIFFER;
    if (!ha) return verdict;
    if ((range == RANGE_F16 && f16_range(x, y)) || (range == RANGE_FASTMATH && fastmath_range(x, y))) {
      verdict = VAL_RANGE;
      continue;
    }
    if (isnan(x) || isnan(y)) {
      if (isnan(x) != isnan(y)) return VAL_DIFFER;
      continue;
    }
    if (x != y && !(fabs(x - y) <= tol * fmax(1.0, fabs(y)))) return VAL_DIFFER;
  }
}

/* ------------------------------------------------------------ the oracle */

typedef struct Report {
  int failures;
  int checks;
  int skipped;    /* budget, refusal or rejected */
  int with_args;  /* baselines run with synthesized arguments for @main */
  int against_o0; /* -O1..-O3 values compared with the -O0 run */
  int against_ref;/* values compared with a reference spec's run (Gradient,X with Gradient) */
  int grad_value; /* Gradient / FirstOrderGradient values compared with the baseline */
  int type_lies;  /* originals whose own value (-O0) contradicts @main's type: not type-checked */
} Report;

static void fail(Report *rep, const char *spec, const char *what, const char *detail) {
  rep->failures++;
  fprintf(stderr, "FAIL [%s] %s\n", spec, what);
  if (detail && *detail) fprintf(stderr, "%.*s\n", 3000, detail);
}

/* `// SWEEP-SKIP: Name reason` in the text (a golden's opt-out, kept on its
 * mutants by the driver): spec name starts with a skipped pass name. */
static bool sweep_skipped(const char *text, size_t len, const char *name) {
  const char *p = text, *end = text + len;
  while ((p = memmem(p, (size_t)(end - p), "SWEEP-SKIP:", 11))) {
    p += 11;
    while (p < end && *p == ' ') p++;
    size_t n = 0;
    while (p + n < end && p[n] != ' ' && p[n] != '\n') n++;
    if (n && !strncmp(name, p, n) && !isalnum((unsigned char)name[n])) return true;
  }
  return false;
}

/* The first "error: ..." message of a failed baseline run (malloc'd), or NULL. */
static char *first_error(const char *msgs) {
  const char *e = strstr(msgs, "error: ");
  if (!e) return NULL;
  e += 7;
  size_t n = strcspn(e, "\n");
  char *r = malloc(n + 1);
  memcpy(r, e, n);
  r[n] = 0;
  return r;
}

/* A pass made the original's run-time error a compile-time one: a relation
 * that sees constants after folding rejects what the kernel rejected at run
 * time (arange's empty range, spec/ops.md). Not a pass bug. */
static bool same_error_as_baseline(const char *msgs, const char *base_error) {
  if (!base_error || !*base_error) return false;
  if (has(msgs, base_error)) return true;
  /* the same operator: "reshape: cannot reshape 1 elements ..." at run time,
   * "reshape: cannot reshape Tensor[(1), float32] ..." in the relation (once
   * arange folds to 1 element where its attributes promised 6) */
  const char *colon = strchr(base_error, ':');
  if (!colon || colon == base_error || colon - base_error > 40) return false;
  char op[48];
  snprintf(op, sizeof op, "error: %.*s:", (int)(colon - base_error), base_error);
  return has(msgs, op) && has(msgs, "does not type-check");
}

/* The original program and its unoptimised run, for every spec of one input. */
typedef struct Baseline {
  const char *text;
  size_t len;
  bool prelude;
  int rc;            /* run_module's status, -1 when not run */
  const char *value; /* the printed value when rc == RUN_OK */
  const char *error; /* the first run-time error when rc == RUN_ERROR */
  bool probed;       /* range: the range probe, run on first need */
  RangeSeen range;
  int rc0;           /* the -O0 run (no --run pipeline), run on first need: -2 before */
  char *value0;
  char *type_error0; /* its value's mismatch with @main's type (rc0 == RUN_ILL_TYPED) */
  int ref_rc[128];   /* a reference spec's run (Spec.ref), run on first need: -2 before */
  char *ref_value[128];
} Baseline;

static void baseline_init_runs(Baseline *b) {
  b->rc0 = -2;
  b->value0 = NULL;
  b->type_error0 = NULL;
  for (int i = 0; i < nspecs; i++) {
    b->ref_rc[i] = -2;
    b->ref_value[i] = NULL;
  }
}

static void baseline_free_runs(Baseline *b) {
  free(b->value0);
  free(b->type_error0);
  for (int i = 0; i < nspecs; i++) free(b->ref_value[i]);
}

/* The original run as `relayc -O0 --run` runs it (no default pipeline). */
static int baseline_o0(Baseline *b) {
  if (b->rc0 != -2) return b->rc0;
  Cap cap;
  cap_open(&cap);
  Loaded L;
  Diag d;
  b->rc0 = -1;
  if (load(&L, "fuzz.relay", b->text, b->len, b->prelude, true, &d, cap.f)) {
    d.phase = DIAG_PHASE_RUN;
    size_t mark = (fflush(cap.f), cap.len);
    b->rc0 = run_module_with(L.m, &d, &cap, &b->value0, false, false);
    if (b->rc0 == RUN_ILL_TYPED) b->type_error0 = strdup(cap_text(&cap) + mark);
  }
  unload(&L);
  cap_close(&cap);
  return b->rc0;
}

/* Spec r's pass output run as `relayc --pass=... --run` runs it: -1 when the
 * pass fails or its output does not run to a value. */
static int baseline_ref(Baseline *b, int r) {
  if (b->ref_rc[r] != -2) return b->ref_rc[r];
  Cap cap;
  cap_open(&cap);
  Loaded L;
  Diag d;
  b->ref_rc[r] = -1;
  if (load(&L, "fuzz.relay", b->text, b->len, b->prelude, true, &d, cap.f)) {
    PassPipeline pl;
    pass_pipeline_init(&pl);
    d.phase = DIAG_PHASE_PASS;
    bool ok = spec_pipeline(&pl, specs[r].text) && pass_pipeline_run(&pl, L.m, &d, &(PassRunOptions){0}) == 0;
    pass_pipeline_fini(&pl);
    d.phase = DIAG_PHASE_RUN;
    if (ok) b->ref_rc[r] = run_module(L.m, &d, &cap, &b->ref_value[r]);
  }
  unload(&L);
  cap_close(&cap);
  return b->ref_rc[r];
}

/* Whether the original has a value outside a spec's range (Spec.limit). */
static bool beyond_range(Baseline *b, int limit) {
  if (limit == LIMIT_NONE) return false;
  if (!b->probed) {
    b->range = range_probe(b->text, b->len, b->prelude);
    b->probed = true;
    if (cfg.verbose)
      fprintf(stderr,
              "  range probe: ran %d, inf/NaN %d, largest %g, smallest nonzero %g, largest exponential argument %g, "
              "largest cast to an integer %g, float16 ties %d\n",
              b->range.ran, b->range.nonfinite, b->range.max_abs, b->range.min_abs, b->range.max_exp_arg,
              b->range.max_int_cast, b->range.f16_tie);
  }
  const RangeSeen *r = &b->range;
  double bound = limit == LIMIT_FLOAT16 ? 65504.0 : limit == LIMIT_FASTMATH ? 0x1p126 : 0x1p48;
  if (!r->ran) return false;
  if (r->nonfinite || r->max_abs > bound) return true;
  /* float16: an exponential of a value beyond 16 is off by 16 * 2^-11 = 0.8% and more;
   * below 2^-14 (6.1e-5, the smallest normal) a value keeps fewer than 11 bits, and
   * below 2^-25 (half the smallest subnormal, 5.96e-8) it becomes 0; beyond 2048 not
   * every integer is a float16, and a cast to an integer type shows the lost units */
  /* FastMath: fast_exp clamps its argument to [-88.38, 88.38] (TVM's): fast_softmax gives 0
   * for exp(-100), and a log of it (a cross-entropy) -inf for -100 (session 15 seeds 122, 134: a
   * diverging SGD mutant of samples/train_mlp.relay, softmax arguments up to 11635). The
   * probe sees a softmax's arguments, not x - max(x): a spread beyond 88 of arguments
   * within 88 is still compared */
  if (limit == LIMIT_FASTMATH) return r->max_exp_arg > 88.3762626647949;
  return limit == LIMIT_FLOAT16 &&
         (r->f16_tie || r->max_exp_arg > 16 || (r->min_abs != 0 && r->min_abs < 0x1p-14) || r->max_int_cast > 2048);
}

/* Whether the original, run without relayc --run's default pipeline (as
 * with -O0), fails with the error the pass output gave (its first line):
 * the pipeline's dead-code elimination dropped the failing code (log2 of an
 * int32, a kernel-time error, whose result only an unused ref holds), which
 * the pass output keeps live or out of the pipeline's reach (PartialEvaluate,
 * LambdaLift): the program's own error, not the pass's. */
static bool original_fails_unoptimised(const Baseline *b, const char *msgs) {
  char *want = first_error(msgs);
  if (!want) return false;
  Cap cap;
  cap_open(&cap);
  Loaded L;
  Diag d;
  bool same = false;
  if (load(&L, "fuzz.relay", b->text, b->len, b->prelude, true, &d, cap.f)) {
    char *value = NULL;
    d.phase = DIAG_PHASE_RUN;
    size_t mark = (fflush(cap.f), cap.len);
    if (run_module_with(L.m, &d, &cap, &value, false, false) == RUN_ERROR) {
      char *got = first_error(cap_text(&cap) + mark);
      same = got && !strcmp(got, want);
      free(got);
    }
    free(value);
  }
  unload(&L);
  cap_close(&cap);
  free(want);
  return same;
}

/* One pass spec on a fresh copy of the program. */
static void check_spec(Baseline *b, const Spec *s, Report *rep) {
  const char *text = b->text, *base_value = b->value, *base_error = b->error;
  size_t len = b->len;
  int base_rc = b->rc;
  if (sweep_skipped(text, len, s->text)) return;
  int *against = NULL; /* the Report counter of a reference other than the baseline */
  if (s->ref >= 0 && base_rc != -1) { /* a pipeline after a gradient pass: against the gradient's run */
    base_rc = baseline_ref(b, s->ref) == RUN_OK ? RUN_OK : -1;
    base_value = b->ref_value[s->ref];
    against = &rep->against_ref;
  } else if (s->text[0] == '-' && base_rc == RUN_OK && baseline_o0(b) == RUN_ILL_TYPED) {
    if (b->type_error0) fail(rep, "-O0", "the original's value without the --run pipeline does not have @main's type", b->type_error0);
    free(b->type_error0);
    b->type_error0 = NULL; /* reported once */
    return;
} else if (s->text[0] == '-' && base_rc == RUN_OK && baseline_o0(b) == RUN_OK) { /* -ON against -O0 */
    base_value = b->value0;
    against = &rep->against_o0;
  } else if (s->check == CHK_GRAD && base_rc == RUN_OK) {
    against = &rep->grad_value;
  }
  Cap cap;
  cap_open(&cap);
  Loaded L;
  Diag d;
  if (!load(&L, "fuzz.relay", text, len, b->prelude, true, &d, cap.f)) {
    fail(rep, s->text, "the program no longer loads (nondeterministic front end?)", cap_text(&cap));
    goto out;
  }
  PassPipeline pl;
  pass_pipeline_init(&pl);
  if (!spec_pipeline(&pl, s->text)) abort();
  d.phase = DIAG_PHASE_PASS;
  int st = pass_pipeline_run(&pl, L.m, &d, &(PassRunOptions){.verify_retype = true});
  pass_pipeline_fini(&pl);
  rep->checks++;
  if (st != 0) {
    if (is_refusal(cap_text(&cap)) || same_error_as_baseline(cap_text(&cap), base_error)) rep->skipped++;
    else fail(rep, s->text, "the pass failed", cap_text(&cap));
    goto out;
  }
  /* print → re-parse → print: identical text, equal modules */
  size_t n1 = 0, n2 = 0;
  char *t1 = print_string(L.m, &n1);
  Loaded L2;
  Diag d2;
  if (!load(&L2, "<printed>", t1, n1, false, true, &d2, cap.f)) {
    if (is_budget(cap_text(&cap))) rep->skipped++;
    else {
      char *msg = NULL;
      size_t ml = 0;
      FILE *f = open_memstream(&msg, &ml);
      fprintf(f, "%s\n--- printed output:\n%.*s", cap_text(&cap), (int)(n1 < 4000 ? n1 : 4000), t1);
      fclose(f);
      fail(rep, s->text, "the printed output does not re-parse and type-check", msg);
      free(msg);
    }
    unload(&L2);
    free(t1);
    goto out;
  }
  char *t2 = print_string(L2.m, &n2);
  if (n1 != n2 || memcmp(t1, t2, n1) != 0) {
    fail(rep, s->text, "printing is not idempotent (print -> parse -> print differs)", t1);
  } else {
    char *why = NULL;
    size_t wl = 0;
    FILE *f = open_memstream(&why, &wl);
    bool eq = module_equal(L.m, L2.m, f);
    fclose(f);
    if (!eq) fail(rep, s->text, "the re-parsed output is not --equal to the pass output", why);
    free(why);
  }
  free(t1);
  free(t2);
  unload(&L2);
  if (s->check == CHK_PRINT || base_rc == RUN_BUDGET || base_rc == -1) goto out;
  /* run the pass output */
  char *value = NULL;
  d.phase = DIAG_PHASE_RUN;
  size_t mark = (fflush(cap.f), cap.len);
  int rc = run_module_with(L.m, &d, &cap, &value, true, s->check == CHK_GRAD);
  if (rc == RUN_BUDGET) {
    rep->skipped++;
  } else if (rc == RUN_ILL_TYPED) {
    fail(rep, s->text, "the pass output's value does not have its @main's type", cap_text(&cap) + mark);
  } else if (rc == RUN_REWRITE_FAILED && same_error_as_baseline(cap_text(&cap) + mark, base_error)) {
    rep->skipped++; /* the re-typing met the original's run-time error statically */
  } else if (rc == RUN_REWRITE_FAILED) {
    fail(rep, s->text, "relayc's run-time rewrites failed on the pass output", cap_text(&cap) + mark);
  } else if (base_rc == RUN_OK && rc != RUN_OK && original_fails_unoptimised(b, cap_text(&cap) + mark)) {
    rep->skipped++; /* the original's own error, which relayc --run's pipeline dropped with dead code */
  } else if (base_rc == RUN_OK && rc == RUN_ERROR && beyond_range(b, s->limit)) {
    rep->skipped++; /* the spec's range: float16's inf - inf is NaN, which a kernel refuses (arange's length) */
  } else if (base_rc == RUN_OK && rc != RUN_OK) {
    fail(rep, s->text, "the pass output fails at run time where the original ran", cap_text(&cap) + mark);
  } else if (base_rc == RUN_OK && rc == RUN_OK) {
    if (against) (*against)++;
    int v = s->check == CHK_F16      ? values_close(value, base_value, 1e-2, RANGE_F16)
            : s->check == CHK_APPROX ? values_close(value, base_value, 1e-2, RANGE_FASTMATH)
            : s->check == CHK_CLOSE || s->check == CHK_GRAD ? values_close(value, base_value, 1e-5, RANGE_NONE)
            : s->check == CHK_ZERO_SIGN ? values_close(value, base_value, 0, RANGE_NONE)
            : strcmp(value, base_value) == 0 ? VAL_CLOSE
                                             : VAL_DIFFER;
    if (v == VAL_DIFFER && beyond_range(b, s->limit)) v = VAL_RANGE;
    if (v == VAL_RANGE) rep->skipped++;
    if (v == VAL_DIFFER) {
      char *msg = NULL;
      size_t ml = 0;
      FILE *f = open_memstream(&msg, &ml);
      fprintf(f, "pass output: %.1500s\n%s: %.1500s", value,
              against == &rep->against_ref ? specs[s->ref].text : against == &rep->against_o0 ? "-O0 run" : "original",
              base_value);
      fclose(f);
      fail(rep, s->text,
           against == &rep->against_ref  ? "the value differs from the reference spec's run"
           : against == &rep->against_o0 ? "the value differs from the -O0 run"
                                         : "the value differs from the unoptimised run",
           msg);
      free(msg);
    }
  }
  free(value);
out:
  unload(&L);
  cap_close(&cap);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One spec, timed with -v (CPU seconds of the whole process: the specs run
 * one after another). */
static void check_spec_timed(Baseline *b, const Spec *s, Report *rep) {
  double t0 = cfg.verbose ? (double)clock() / CLOCKS_PER_SEC : 0;
  check_spec(b, s, rep);
  if (cfg.verbose) fprintf(stderr, "  %-60s %8.3f s CPU\n", s->text, (double)clock() / CLOCKS_PER_SEC - t0);
}

/* The program text loaded afresh and run (as `relayc --run`, or as -O0
 * without run_defaults); -1 when it does not load. */
static int run_text(const char *text, size_t len, bool prelude, Cap *cap, char **value, bool run_defaults) {
  Loaded L;
  Diag d;
  int rc = -1;
  *value = NULL;
  if (load(&L, "fuzz.relay", text, len, prelude, true, &d, cap->f)) {
    d.phase = DIAG_PHASE_RUN;
    rc = run_module_with(L.m, &d, cap, value, run_defaults, false);
  }
  unload(&L);
  return rc;
}

/* Whether the original's value contradicts @main's type already without
 * relayc --run's rewrites (as -O0 runs it): a `?` extent that unified with an
 * annotated one (arange with `start=None` typed `(?)` passed where `(4)` is
 * annotated) holds another length at run time, which neither TVM nor relayc
 * checks (golden/passes/defuse_ops/arange_inlined_step.relay,
 * oracle/value_contradicts_type.relay). The program's doing, not a pass's. */
static bool original_contradicts_type(const char *text, size_t len, bool prelude) {
  Cap cap;
  cap_open(&cap);
  char *value = NULL;
  bool lie = run_text(text, len, prelude, &cap, &value, false) == RUN_ILL_TYPED;
  free(value);
  cap_close(&cap);
  return lie;
}

/* The oracle on one text; `pick` chooses the specs (NULL: all). Returns the
 * number of failures. */
static int fp_check(const char *text, size_t len, Rng *pick, Report *rep) {
  bool prelude = len < (1u << 20) && memmem(text, len, "--prelude", 9) != NULL;
  Cap cap;
  cap_open(&cap);
  Loaded L;
  Diag d;
  int before = rep->failures;
  value_type_unchecked = false;
  if (!load(&L, "fuzz.relay", text, len, prelude, true, &d, cap.f)) {
    rep->skipped++;
    unload(&L);
    cap_close(&cap);
    return 0;
  }
  /* the baseline, when @main takes no parameters */
  const Function *mf = main_fn(L.m);
  int base_rc = -1;
  char *base_value = NULL, *base_error = NULL;
  if (main_args_ok(mf)) {
    if (mf->nparams) rep->with_args++;
    d.phase = DIAG_PHASE_RUN;
    base_rc = run_module(L.m, &d, &cap, &base_value);
    if (base_rc == RUN_ERROR) base_error = first_error(cap_text(&cap));
    if (base_rc == RUN_REWRITE_FAILED) {
      fail(rep, "--run", "relayc's run-time rewrites failed on the original", cap_text(&cap));
      base_rc = -1;
    }
    if (base_rc == RUN_ILL_TYPED && original_contradicts_type(text, len, prelude)) {
      /* the program's own value, not a rewrite's: values only for this input */
      rep->type_lies++;
      value_type_unchecked = true;
      free(base_value);
      base_rc = run_text(text, len, prelude, &cap, &base_value, true);
    }
    if (base_rc == RUN_ILL_TYPED) {
      fail(rep, "--run", "the original's value does not have @main's type", cap_text(&cap));
      base_rc = -1;
    }
  }
  unload(&L);
  cap_close(&cap);
  if (cfg.verbose)
    fprintf(stderr, "  baseline %d %.200s\n", base_rc, base_value ? base_value : "");
  Baseline b = {.text = text, .len = len, .prelude = prelude, .rc = base_rc, .value = base_value, .error = base_error};
  baseline_init_runs(&b);
  if (!pick || cfg.npasses <= 0 || cfg.npasses >= nspecs) {
    for (int i = 0; i < nspecs; i++) check_spec_timed(&b, &specs[i], rep);
  } else {
    for (int k = 0; k < cfg.npasses; k++)
      check_spec_timed(&b, &specs[rng_below(pick, (uint32_t)nspecs)], rep);
  }
  baseline_free_runs(&b);
  free(base_value);
  free(base_error);
  return rep->failures - before;
}

/* ------------------------------------------------------------ structural mutations */

typedef VEC(Expr **) SlotVec;
typedef VEC(Type *) TypeVec;

typedef struct Muts {
  Module *m;
  SlotVec slots;  /* every child slot of every distinct node (and each body) */
  ExprVec nodes;  /* every distinct node */
  ExprVec lets;   /* let nodes */
  TypeVec types;  /* tensor types in annotations */
  PtrMap seen;
} Muts;

static void collect_type(Muts *mu, Type *t, int depth) {
  if (!t || depth > 64) return;
  switch (t->kind) {
  case TYPE_TENSOR: vec_push(mu->types, t); break;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++) collect_type(mu, t->tuple.fields[i], depth + 1);
    break;
  case TYPE_FUNC:
    for (uint32_t i = 0; i < t->func.nargs; i++) collect_type(mu, t->func.args[i], depth + 1);
    collect_type(mu, t->func.ret, depth + 1);
    break;
  case TYPE_REF: collect_type(mu, t->ref.inner, depth + 1); break;
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++) collect_type(mu, t->adt.args[i], depth + 1);
    break;
  default: break;
  }
}

static void collect_fn(Muts *mu, Function *f, ExprVec *stack) {
  for (uint32_t i = 0; i < f->nparams; i++) collect_type(mu, f->params[i]->annot, 0);
  collect_type(mu, f->ret_annot, 0);
  vec_push(mu->slots, &f->body);
  vec_push(*stack, f->body);
}

/* Every distinct node reachable from the globals (no recursion: deep inputs). */
static void collect(Muts *mu) {
  ExprVec stack = {0};
  for (uint32_t i = 0; i < mu->m->ndefs; i++)
    if (mu->m->defs[i]->fn) collect_fn(mu, mu->m->defs[i]->fn, &stack);
  while (stack.len) {
    Expr *e = stack.data[--stack.len];
    if (!e || ptrmap_find(&mu->seen, e)) continue;
    ptrmap_put(&mu->seen, e, 1);
    vec_push(mu->nodes, e);
#define SLOT(p)                                                                                    \
  do {                                                                                             \
    vec_push(mu->slots, &(p));                                                                     \
    vec_push(stack, (p));                                                                          \
  } while (0)
    switch (e->kind) {
    case EXPR_CALL:
      if (e->call.fn->kind != EXPR_OP && e->call.fn->kind != EXPR_CTOR) SLOT(e->call.fn);
      for (uint32_t i = 0; i < e->call.nargs; i++) SLOT(e->call.args[i]);
      break;
    case EXPR_TUPLE:
      for (uint32_t i = 0; i < e->tuple.n; i++) SLOT(e->tuple.fields[i]);
      break;
    case EXPR_PROJ: SLOT(e->proj.tuple); break;
    case EXPR_FN: collect_fn(mu, e->fn, &stack); break;
    case EXPR_LET:
      vec_push(mu->lets, e);
      collect_type(mu, e->let.var->annot, 0);
      SLOT(e->let.value);
      SLOT(e->let.body);
      break;
    case EXPR_IF:
      SLOT(e->if_.cond);
      SLOT(e->if_.then_);
      SLOT(e->if_.else_);
      break;
    case EXPR_MATCH:
      SLOT(e->match.scrut);
      for (uint32_t i = 0; i < e->match.nclauses; i++) SLOT(e->match.clauses[i].body);
      break;
    case EXPR_REF_NEW:
    case EXPR_REF_READ: SLOT(e->ref.arg); break;
    case EXPR_REF_WRITE:
      SLOT(e->ref_write.ref);
      SLOT(e->ref_write.value);
      break;
    default: break;
    }
#undef SLOT
  }
  vec_free(stack);
}

static void muts_free(Muts *mu) {
  vec_free(mu->slots);
  vec_free(mu->nodes);
  vec_free(mu->lets);
  vec_free(mu->types);
  ptrmap_free(&mu->seen);
}

/* Operators grouped by shape, so a swap usually still type-checks. */
static const char *const unary_ops[] = {"negative", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "abs",
                                        "ceil", "floor", "round", "trunc", "sign", "nn.relu", "copy",
                                        "log2", "erf", "sin", "cos", "zeros_like", "ones_like", "logical_not",
                                        "nn.softmax", "nn.log_softmax", "transpose", "nn.batch_flatten",
                                        "squeeze", "sum", "max", "min", "mean", "prod", "argmax", "argmin",
                                        "cumsum", "cumprod", "isnan", "isfinite", "fast_exp", "fast_tanh"};
static const char *const binary_ops[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum",
                                         "power", "floor_divide", "floor_mod", "mod", "equal", "not_equal",
                                         "less", "less_equal", "greater", "greater_equal", "logical_and",
                                         "logical_or", "right_shift", "left_shift", "bitwise_and", "nn.dense",
                                         "nn.batch_matmul", "nn.bias_add", "collapse_sum_like", "reshape_like",
                                         "broadcast_to_like", "atan2", "trunc_divide", "trunc_mod"};

static const char *random_op_like(Rng *r, const OpDef *old) {
  if (old && old->num_inputs == 1 && !rng_chance(r, 3)) return unary_ops[rng_below(r, sizeof unary_ops / sizeof *unary_ops)];
  if (old && old->num_inputs == 2 && !rng_chance(r, 3)) return binary_ops[rng_below(r, sizeof binary_ops / sizeof *binary_ops)];
  /* any builtin operator with the same number of inputs */
  uint32_t n = op_builtin_count();
  for (int tries = 0; tries < 64; tries++) {
    const OpDef *o = op_get((int32_t)rng_below(r, n));
    if (o && (!old || o->num_inputs == old->num_inputs)) return o->name;
  }
  return NULL;
}

static const double float_vals[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -7.25, 1e30, -1e30, 1e-30, 65504.0, 100.0};
static const int64_t int_vals[] = {0, 1, -1, 2, 3, 7, 100, -100, 255, 256, 2147483647, -2147483648LL, 65536, 1000000};

static void mutate_const(Rng *r, ConstTensor *c) {
  uint64_t esize = dtype_size(c->dtype);
  if (!esize || !c->nbytes || !c->data) return;
  uint64_t n = c->nbytes / esize;
  uint64_t k = rng_below(r, (uint32_t)(n > 0xffffffffu ? 0xffffffffu : n));
  char *p = (char *)c->data + k * esize;
  DType t = c->dtype;
  if (t.lanes != 1) return;
  if (t.code == DT_FLOAT && t.bits == 32) {
    float v = (float)float_vals[rng_below(r, sizeof float_vals / sizeof *float_vals)];
    if (rng_chance(r, 25)) v = rng_chance(r, 2) ? NAN : INFINITY;
    memcpy(p, &v, 4);
  } else if (t.code == DT_FLOAT && t.bits == 64) {
    double v = float_vals[rng_below(r, sizeof float_vals / sizeof *float_vals)];
    memcpy(p, &v, 8);
  } else if (t.code == DT_UINT && t.bits == 1) {
    *(uint8_t *)p ^= 1;
  } else if (t.code == DT_INT || t.code == DT_UINT) {
    int64_t v = int_vals[rng_below(r, sizeof int_vals / sizeof *int_vals)];
    memcpy(p, &v, esize <= 8 ? esize : 8); /* little-endian: the low bytes */
  }
}

/* A deep copy of an attribute value (arrays included) in m's arena. */
static AttrValue *clone_attr_value(Module *m, const AttrValue *v, int depth) {
  if (!v) return NULL;
  AttrValue *c = arena_memdup(m->arena, v, sizeof *v);
  if (v->kind == AV_ARRAY && depth < 8) {
    c->arr.items = arena_alloc(m->arena, (v->arr.n ? v->arr.n : 1) * sizeof *c->arr.items);
    for (uint32_t i = 0; i < v->arr.n; i++) c->arr.items[i] = clone_attr_value(m, v->arr.items[i], depth + 1);
  }
  return c;
}

static void mutate_attr_value(Rng *r, AttrValue *v, int depth) {
  switch (v->kind) {
  case AV_INT: v->i.value = rng_chance(r, 2) ? v->i.value + (int64_t)rng_below(r, 5) - 2 : int_vals[rng_below(r, 10)]; break;
  case AV_FLOAT: v->f.value = float_vals[rng_below(r, sizeof float_vals / sizeof *float_vals)]; break;
  case AV_BOOL: v->b = !v->b; break;
  case AV_STRING: {
    static const char *const s[] = {"", "NCHW", "NHWC", "NCW", "NWC", "OIHW", "HWIO", "NCDHW", "float16", "int8", "x"};
    const char *c = s[rng_below(r, sizeof s / sizeof *s)];
    v->s.chars = c;
    v->s.len = (uint32_t)strlen(c);
    break;
  }
  case AV_ARRAY:
    if (v->arr.n && depth < 4) {
      if (rng_chance(r, 4)) v->arr.n--; /* drop the last item */
      else mutate_attr_value(r, v->arr.items[rng_below(r, v->arr.n)], depth + 1);
    }
    break;
  default: break;
  }
}

/* One structural mutation of the module; false if none applied. */
static bool mutate_once(Muts *mu, Rng *r, bool deep_ok) {
  Module *m = mu->m;
  if (!mu->nodes.len || !mu->slots.len) return false;
  Span sp = {0, 0};
  switch (rng_below(r, 12)) {
  case 0: /* swap an operator */
  case 1: {
    for (int tries = 0; tries < 16; tries++) {
      Expr *e = mu->nodes.data[rng_below(r, (uint32_t)mu->nodes.len)];
      if (e->kind != EXPR_CALL || e->call.fn->kind != EXPR_OP) continue;
      Expr *op = e->call.fn;
      const OpDef *old = op->op.id >= 0 ? op_get(op->op.id) : NULL;
      const char *nn = random_op_like(r, old);
      if (!nn) return false;
      Expr *fresh = expr_op(m, nn, op->span);
      fresh->op.id = op_lookup(nn);
      e->call.fn = fresh;
      if (!rng_chance(r, 3)) e->call.attrs = NULL;
      return true;
    }
    return false;
  }
  case 2: { /* change a constant */
    for (int tries = 0; tries < 16; tries++) {
      Expr *e = mu->nodes.data[rng_below(r, (uint32_t)mu->nodes.len)];
      if (e->kind != EXPR_CONST) continue;
      mutate_const(r, e->constant);
      return true;
    }
    return false;
  }
  case 3: { /* change an attribute */
    for (int tries = 0; tries < 16; tries++) {
      Expr *e = mu->nodes.data[rng_below(r, (uint32_t)mu->nodes.len)];
      if (e->kind != EXPR_CALL || !e->call.attrs || !e->call.attrs->n) continue;
      /* a copy: a default-filled attribute is the registry's own AttrValue,
       * shared by every module (mutating it in place changed arange's dtype
       * default for every later input) */
      Attrs *na = arena_alloc(m->arena, sizeof *na);
      *na = *e->call.attrs;
      na->items = arena_memdup(m->arena, e->call.attrs->items, na->n * sizeof *na->items);
      e->call.attrs = na;
      Attr *a = &na->items[rng_below(r, na->n)];
      a->value = clone_attr_value(m, a->value, 0);
      mutate_attr_value(r, a->value, 0);
      a->is_default = false;
      return true;
    }
    return false;
  }
  case 4: { /* change an annotated shape or dtype */
    if (!mu->types.len) return false;
    Type *t = mu->types.data[rng_below(r, (uint32_t)mu->types.len)];
    if (t->tensor.ndim && !rng_chance(r, 4)) {
      Dim *dm = &t->tensor.dims[rng_below(r, t->tensor.ndim)];
      if (dm->kind != DIM_INT) return false;
      static const int64_t v[] = {0, 1, 2, 3, 4, 7, 16};
      dm->value = rng_chance(r, 2) ? dm->value + 1 : v[rng_below(r, 7)];
    } else {
      static const DType dts[] = {DT_F32, DT_F64, DT_I32, DT_I64, DT_F16, DT_BOOL_T, DT_I8, DT_U8};
      t->tensor.dtype = dts[rng_below(r, 8)];
    }
    return true;
  }
  case 5: { /* share: a call argument becomes another argument of the same call */
    for (int tries = 0; tries < 16; tries++) {
      Expr *e = mu->nodes.data[rng_below(r, (uint32_t)mu->nodes.len)];
      if (e->kind == EXPR_CALL && e->call.nargs >= 2) {
        uint32_t i = rng_below(r, e->call.nargs), j = rng_below(r, e->call.nargs);
        if (i == j) continue;
        e->call.args[j] = e->call.args[i];
        return true;
      }
      if (e->kind == EXPR_TUPLE && e->tuple.n >= 2) {
        uint32_t i = rng_below(r, e->tuple.n), j = rng_below(r, e->tuple.n);
        if (i == j) continue;
        e->tuple.fields[j] = e->tuple.fields[i];
        return true;
      }
    }
    return false;
  }
  case 6: { /* share: a use of a let-bound variable becomes the bound node itself */
    if (!mu->lets.len) return false;
    Expr *let = mu->lets.data[rng_below(r, (uint32_t)mu->lets.len)];
    for (size_t i = 0; i < mu->slots.len; i++) {
      Expr **s = mu->slots.data[(i + rng_below(r, (uint32_t)mu->slots.len)) % mu->slots.len];
      if ((*s)->kind == EXPR_VAR && (*s)->var.var == let->let.var && let->let.value->kind != EXPR_FN) {
        *s = let->let.value;
        return true;
      }
    }
    return false;
  }
  default: { /* wrap a subexpression, once or many times */
    Expr **s = mu->slots.data[rng_below(r, (uint32_t)mu->slots.len)];
    uint32_t times = 1;
    if (deep_ok && rng_chance(r, 6)) {
      static const uint32_t t[] = {20, 200, 1000, 10000};
      times = t[rng_below(r, rng_chance(r, 4) ? 4 : 3)];
    }
    uint32_t how = rng_below(r, 8);
    for (uint32_t k = 0; k < times; k++) {
      Expr *e = *s;
      switch (how) {
      case 0: { /* let %w = e; %w */
        Var *v = build_fresh_var(m, "fz", NULL, sp);
        *s = build_let(m, v, e, build_var(m, v, sp), sp);
        break;
      }
      case 1: /* if (c) { e } else { e }: one node under both branches */
        *s = times > 1 ? build_proj(m, build_tuple(m, &e, 1, sp), 0, sp)
                       : build_if(m, expr_scalar_bool(m, rng_chance(r, 2), sp), e, e, sp);
        break;
      case 2: { /* (fn () { e })() */
        Function *f = build_function(m, NULL, 0, NULL, e, NULL, sp);
        *s = build_call(m, build_fn(m, f, sp), NULL, 0, sp);
        break;
      }
      case 3: /* (e,).0 */
        *s = build_proj(m, build_tuple(m, &e, 1, sp), 0, sp);
        break;
      case 4: /* ref_read(ref(e)) */
        *s = build_ref_read(m, build_ref_new(m, e, sp), sp);
        break;
      case 5: { /* op(e, e): a shared operand */
        static const char *const ops[] = {"add", "multiply", "maximum", "subtract"};
        Expr *args[2] = {e, e};
        const char *name = ops[rng_below(r, 4)];
        Expr *op = expr_op(m, name, sp);
        op->op.id = op_lookup(name);
        *s = build_call(m, op, args, 2, sp);
        break;
      }
      case 6: { /* let %w = e; (%w, %w).1 */
        Var *v = build_fresh_var(m, "fz", NULL, sp);
        Expr *f2[2] = {build_var(m, v, sp), build_var(m, v, sp)};
        *s = build_let(m, v, e, build_proj(m, build_tuple(m, f2, 2, sp), 1, sp), sp);
        break;
      }
      default: { /* let %w = e; e (the value shared with the body) */
        Var *v = build_fresh_var(m, "fz", NULL, sp);
        *s = build_let(m, v, e, times > 1 ? build_var(m, v, sp) : e, sp);
        break;
      }
      }
    }
    return true;
  }
  }
}

/* Parses text, applies 1..n structural mutations and prints the result into
 * a malloc'd string (NULL when the text does not parse and resolve). */
static char *mutate_structural(const char *text, size_t len, Rng *r, size_t *out_len, bool deep_ok) {
  Cap cap;
  cap_open(&cap);
  Loaded L = {0};
  Diag d;
  char *out = NULL;
  bool prelude = memmem(text, len, "--prelude", 9) != NULL;
  if (!prelude && load(&L, "fuzz.relay", text, len, false, false, &d, cap.f)) {
    Diag d2 = d;
    d2.nerrors = 0;
    infer_module(L.m, &d2); /* types only guide some choices; errors are fine */
    Muts mu = {.m = L.m};
    collect(&mu);
    uint32_t n = 1 + rng_below(r, 3);
    bool any = false;
    for (uint32_t i = 0; i < n; i++) any |= mutate_once(&mu, r, deep_ok);
    if (any) out = print_string(L.m, out_len);
    muts_free(&mu);
  }
  unload(&L);
  cap_close(&cap);
  return out;
}

/* ------------------------------------------------------------ byte mutations */

#ifndef FUZZ_PASSES_LIBFUZZER /* libFuzzer has its own */

static const char *const dict[] = {"let ", "%x", "fn () { ", "}", "(", ")", ", ", "; ", "if (True) {", " else {",
                                   "add(", "multiply(", "0f", "1", "-1", "(1, 2)", "Tensor[(2, 3), float32]",
                                   "ref(", "ref_read(", ".0", "%0 = ", "axis=1", "match (", "int64", "float16"};

static char *mutate_bytes(const char *text, size_t len, Rng *r, size_t *out_len) {
  size_t cap = len + 64;
  char *o = malloc(cap + 1);
  memcpy(o, text, len);
  size_t n = len;
  uint32_t k = 1 + rng_below(r, 4);
  for (uint32_t i = 0; i < k; i++) {
    size_t at = n ? rng_below(r, (uint32_t)n) : 0;
    switch (rng_below(r, 5)) {
    case 0: if (n) o[at] ^= (char)(1u << rng_below(r, 7)); break;
    case 1: if (n) o[at] = "0123456789(),;%{}"[rng_below(r, 17)]; break;
    case 2: { /* delete a short range */
      size_t l = 1 + rng_below(r, 8);
      if (at + l > n) l = n - at;
      memmove(o + at, o + at + l, n - at - l);
      n -= l;
      break;
    }
    default: { /* insert a dictionary token */
      const char *t = dict[rng_below(r, sizeof dict / sizeof *dict)];
      size_t l = strlen(t);
      if (n + l > cap) break;
      memmove(o + at + l, o + at, n - at);
      memcpy(o + at, t, l);
      n += l;
      break;
    }
    }
  }
  o[n] = 0;
  *out_len = n;
  return o;
}
#endif

/* ------------------------------------------------------------ setup */

static void setup(void) {
  static bool done;
  if (done) return;
  done = true;
  const char *e;
  if ((e = getenv("FUZZ_PASSES_MAX_STEPS"))) cfg.max_steps = strtoull(e, NULL, 10);
  VmLimits lim = {100000, 64u << 20, cfg.max_steps};
  vm_set_default_limits(&lim);
  tensor_set_budget(cfg.tensor_bytes, cfg.live_bytes);
  range_probe_register();
  init_specs();
}

/* ------------------------------------------------------------ libFuzzer build */

#ifdef FUZZ_PASSES_LIBFUZZER
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

typedef struct LfJob {
  const uint8_t *data;
  size_t size;
  int failures;
} LfJob;

static void *lf_job(void *arg) {
  LfJob *j = arg;
  stack_guard_init(FP_STACK_SIZE);
  Rng pick = {hash_bytes((const char *)j->data, j->size)};
  Report rep = {0};
  j->failures = fp_check((const char *)j->data, j->size, &pick, &rep);
  return NULL;
}

static void on_big_stack(void *(*fn)(void *), void *arg) {
  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, FP_STACK_SIZE);
  if (pthread_create(&th, &attr, fn, arg) != 0) abort();
  pthread_join(th, NULL);
  pthread_attr_destroy(&attr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!cfg.npasses) cfg.npasses = 6;
  setup();
  LfJob j = {data, size, 0};
  on_big_stack(lf_job, &j);
  if (j.failures) abort(); /* libFuzzer keeps the input as a crash */
  return 0;
}

typedef struct LfMut {
  uint8_t *data;
  size_t size, max_size;
  unsigned seed;
  size_t out;
} LfMut;

static void *lf_mut(void *arg) {
  LfMut *mm = arg;
  stack_guard_init(FP_STACK_SIZE);
  Rng r = {mm->seed};
  size_t n = 0;
  char *t = mutate_structural((const char *)mm->data, mm->size, &r, &n, true);
  if (t && n <= mm->max_size) {
    memcpy(mm->data, t, n);
    mm->out = n;
  }
  free(t);
  return NULL;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  setup();
  if (seed % 2) return LLVMFuzzerMutate(data, size, max_size);
  LfMut mm = {data, size, max_size, seed, 0};
  on_big_stack(lf_mut, &mm);
  return mm.out ? mm.out : LLVMFuzzerMutate(data, size, max_size);
}

#else /* ------------------------------------------------------------ standalone driver */

typedef struct Seed {
  char *path;
  char *text;
  size_t len;
} Seed;
static VEC(Seed) seeds;

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4096 > cap) {
      cap = cap ? cap * 2 : 8192;
      buf = realloc(buf, cap + 1);
    }
    size_t k = fread(buf + n, 1, cap - n, f);
    n += k;
    if (k == 0) break;
  }
  fclose(f);
  buf[n] = 0;
  *len = n;
  return buf;
}

/* A golden program with a runnable @main: a `// RUN: relayc ... --run`
 * line without its own pipeline or weights, no `// EXIT:` other than 0.
 * Its --input files are not read: @main's parameters get synth_arg's data
 * (the --grad goldens, whose gradients Gradient's specs then compute). */
static bool seed_ok(const char *t, size_t len) {
  if (len > 8000) return false;
  const char *run = strstr(t, "// RUN: relayc");
  if (!run) return false;
  const char *eol = strchr(run, '\n');
  size_t l = eol ? (size_t)(eol - run) : strlen(run);
  char line[512];
  if (l >= sizeof line) return false;
  memcpy(line, run, l);
  line[l] = 0;
  if (!strstr(line, "--run")) return false;
  static const char *const bad[] = {"--ffi", "--plugin", "--pass", "-O", "--params", "--inputs",
                                    "--repeat", "--profile", "--expr", "--check", "--json"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    if (strstr(line, bad[i])) return false;
  const char *ex = strstr(t, "// EXIT: ");
  if (ex && ex[9] != '0') return false;
  return true;
}

static int cmp_seed(const void *a, const void *b) {
  return strcmp(((const Seed *)a)->path, ((const Seed *)b)->path);
}

static void scan_dir(const char *dir) {
  DIR *dp = opendir(dir);
  if (!dp) return;
  struct dirent *de;
  while ((de = readdir(dp))) {
    if (de->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      scan_dir(path);
      continue;
    }
    size_t n = strlen(path);
    if (n < 6 || strcmp(path + n - 6, ".relay") != 0) continue;
    size_t len = 0;
    char *t = read_all(path, &len);
    if (!t) continue;
    if (!seed_ok(t, len)) {
      free(t);
      continue;
    }
    Seed s = {strdup(path), t, len};
    vec_push(seeds, s);
  }
  closedir(dp);
}

/* text (malloc'd) with the seed's `// SWEEP-SKIP:` lines in front (a
 * structural mutant is printed without comments). */
static char *keep_skips(const Seed *s, char *text, size_t *len) {
  if (!text || !memmem(s->text, s->len, "SWEEP-SKIP:", 11)) return text;
  char *out = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&out, &n);
  for (const char *l = s->text; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t ll = e ? (size_t)(e - l) : strlen(l);
    if (memmem(l, ll, "SWEEP-SKIP:", 11)) fprintf(f, "%.*s\n", (int)ll, l);
    l = e ? e + 1 : NULL;
  }
  fwrite(text, 1, *len, f);
  fclose(f);
  free(text);
  *len = n;
  return out;
}

/* The input being checked, for the alarm handler. */
static char *cur_text;
static size_t cur_len;
static uint64_t cur_iter;

static void write_input(const char *kind, uint64_t iter, const char *text, size_t len) {
  mkdir(cfg.out_dir, 0777);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-%" PRIu64 ".relay", cfg.out_dir, kind, iter);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd >= 0) {
    ssize_t w = write(fd, text, len);
    (void)w;
    close(fd);
  }
  fprintf(stderr, "  input written to %s\n", path);
}

/* A sanitizer report kills the process: keep the input first. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void on_sanitizer_death(void) {
  if (cur_text) write_input("crash", cur_iter, cur_text, cur_len);
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "FAIL: an input took longer than the per-input timeout (a hang?)\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  if (cur_text) write_input("hang", cur_iter, cur_text, cur_len);
  _exit(1);
}

typedef struct Args {
  uint64_t seed, iters;
  double seconds;
  bool deep, check_seeds, self_test;
  VEC(const char *) repro;
  VEC(const char *) dirs;
  int status;
} Args;


/* --self-test: the oracle's own comparisons on fixed cases (make
 * fuzz-passes-ci): the text around numbers counts, and the range probe sees
 * an intermediate the output does not show. Returns the number of cases
 * that went wrong. */
/* The comparisons added in session 15 reach what they are for: a @main with
 * a parameter runs on synthesized data, Gradient's value is compared with the
 * original's, Gradient,X with Gradient, -ON with -O0; a prelude program
 * (List, closures, recursion) runs through the functional pipelines. Every
 * spec runs on both programs; none may fail. */
static int self_test_reach(void) {
  static const char grad_prog[] =
      "#[version = \"0.0.5\"]\n"
      "def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {\n"
      "  let %f = fn (%a: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] { multiply(%a, %x) };\n"
      "  %f(%f(%x))\n"
      "}\n";
  static const char list_prog[] = /* the driver adds the prelude for the text --prelude */
      "// --prelude\n#[version = \"0.0.5\"]\n"
      "def @sum_to(%n: int32, %acc: List[int32]) -> List[int32] {\n"
      "  if (equal(%n, 0)) { %acc } else { @sum_to(subtract(%n, 1), Cons(%n, %acc)) }\n"
      "}\n"
      "def @main() {\n"
      "  let %k = 3;\n"
      "  %0 = @map(fn (%v: int32) { multiply(%v, %k) }, @sum_to(4, Nil));\n"
      "  (@foldl(fn (%a: int32, %b: int32) { add(%a, %b) }, 0, %0), @hd(%0))\n"
      "}\n";
  int bad = 0;
  Report rep = {0};
  int ran_before;
  if (fp_check(grad_prog, sizeof grad_prog - 1, NULL, &rep) || !rep.with_args || !rep.against_ref || !rep.grad_value ||
      !rep.against_o0) {
    fprintf(stderr, "self-test: a gradient program: %d failures, %d with arguments, %d against a gradient's run, "
                    "%d gradient values, %d against -O0\n",
            rep.failures, rep.with_args, rep.against_ref, rep.grad_value, rep.against_o0);
    bad++;
  }
  ran_before = rep.against_o0;
  int checks_before = rep.checks, skipped_before = rep.skipped;
  if (fp_check(list_prog, sizeof list_prog - 1, NULL, &rep) || rep.against_o0 == ran_before ||
      rep.checks - checks_before - (rep.skipped - skipped_before) < nspecs / 2) {
    fprintf(stderr, "self-test: a prelude program: %d failures, %d checks, %d skipped, %d against -O0\n",
            rep.failures, rep.checks - checks_before, rep.skipped - skipped_before, rep.against_o0 - ran_before);
    bad++;
  }
  return bad;
}

/* The type oracle's fixed cases: @main's value against the type of @want's parameter. */
static const struct {
  const char *value, *type;
  bool match;
} value_type_cases[] = {
    {"ones(shape=[2, 3], dtype=\"float32\")", "Tensor[(2, 3), float32]", true},
    {"ones(shape=[2, 3], dtype=\"float32\")", "Tensor[(2, ?), float32]", true},
    {"ones(shape=[2, 3], dtype=\"float32\")", "Tensor[(3, 2), float32]", false},
    {"ones(shape=[2, 3], dtype=\"float32\")", "Tensor[(2, 3), float16]", false},
    {"ones(shape=[2, 3], dtype=\"float32\")", "Tensor[(2, 3, 1), float32]", false},
    {"3", "int32", true},
    {"3", "Tensor[(1), int32]", false},
    {"3i64", "int32", false},
    {"(1f, 2)", "(float32, int32)", true},
    {"(1f, 2)", "(float32, int64)", false},
    {"(1f, 2)", "(float32,)", false},
    {"C(1, C(2, N))", "L[int32]", true},
    {"C(1, C(2, N))", "L[int64]", false},
    {"C(1, C(2, N))", "Tr[int32]", false},
    {"Node(C(Leaf(1f), C(Node(N), N)))", "Tr[float32]", true},
    {"Node(C(Leaf(1f), C(Node(N), N)))", "Tr[int32]", false},
    {"C((1f, 2), N)", "L[(float32, int32)]", true},
    {"C((1f, 2), N)", "L[(float32, float32)]", false},
    {"fn (%x: int32) { %x }", "fn (int32) -> int32", true},
    {"fn (%x: int32) { %x }", "int32", false},
    {"ref(1f)", "ref(float32)", true},
    {"ref(1f)", "ref(int32)", false},
    {"ref(C(1f, N))", "ref(L[float32])", true},
    {"ref(C(1f, N))", "ref(L[float64])", false},
};

/* The type oracle (value_type.h) on value_type_cases, then on a run whose
 * @main result type was swapped after checking. */
static int self_test_value_types(void) {
  int bad = 0;
  value_type_unchecked = false;
  for (size_t i = 0; i < sizeof value_type_cases / sizeof *value_type_cases; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "#[version = \"0.0.5\"]\ntype L[A] { C(A, L[A]), N }\ntype Tr[A] { Leaf(A), Node(L[Tr[A]]) }\n"
             "def @want(%%x: %s) { () }\ndef @main() { %s }\n",
             value_type_cases[i].type, value_type_cases[i].value);
    Cap cap;
    cap_open(&cap);
    Loaded L;
    Diag d;
    char *mismatch = NULL;
    bool ran = false;
    if (load(&L, "self-test.relay", text, strlen(text), false, true, &d, cap.f)) {
      Program *p = lower_module(L.m, &d);
      int32_t g = p ? program_global(p, "main") : -1;
      Value result = value_none();
      if (g >= 0 && vm_run(p, p->codes[g], NULL, 0, &result, &d, NULL) == VM_OK) {
        ran = true;
        const GlobalDef *want = NULL;
        for (uint32_t k = 0; k < L.m->ndefs; k++)
          if (!strcmp(L.m->defs[k]->name, "want")) want = L.m->defs[k];
        mismatch = value_type_mismatch(&result, param_type(want->fn->params[0]));
      }
      value_release(result);
      value_clear_refs();
      if (p) program_free(p);
    }
    if (!ran || (mismatch == NULL) != value_type_cases[i].match) {
      fprintf(stderr, "self-test: value %s against %s: %s (%s)\n%s", value_type_cases[i].value, value_type_cases[i].type,
              !ran ? "did not run" : value_type_cases[i].match ? "a mismatch" : "no mismatch", mismatch ? mismatch : "",
              cap_text(&cap));
      bad++;
    }
    free(mismatch);
    unload(&L);
    cap_close(&cap);
  }
  /* a program whose own value contradicts its type (session 17 seed 176 input 17): not a failure */
  static const char lie[] = "#[version = \"0.0.5\"]\ndef @f(%tup: (Tensor[(1), float32], Tensor[(4), float32])) { %tup.1 }\n"
                            "def @main() { %0 = arange(0f, 3f, 1f, start=None, stop=None, step=None, dtype=\"float32\"); "
                            "@f((full(7f, shape=[1], dtype=\"float32\"), %0)) }\n";
  Report rep = {0};
  if (fp_check(lie, sizeof lie - 1, NULL, &rep) || rep.type_lies != 1 || rep.checks - rep.skipped < nspecs / 2) {
    fprintf(stderr, "self-test: a program whose value contradicts its type: %d failures, %d noted, %d checks, %d skipped\n",
            rep.failures, rep.type_lies, rep.checks, rep.skipped);
    bad++;
  }
  value_type_unchecked = false;
  /* the oracle's run: @main's checked result type swapped for another after checking */
  static const char prog[] = "#[version = \"0.0.5\"]\ndef @want(%x: Tensor[(3, 2), float32]) { () }\n"
                             "def @main() { ones(shape=[2, 3], dtype=\"float32\") }\n";
  Cap cap;
  cap_open(&cap);
  Loaded L;
  Diag d;
  int rc = -1;
  char *value = NULL;
  if (load(&L, "self-test.relay", prog, sizeof prog - 1, false, true, &d, cap.f)) {
    Type *ft = type_solved(main_fn(L.m)->type);
    const GlobalDef *want = L.m->defs[0];
    ft->func.ret = (Type *)param_type(want->fn->params[0]);
    d.phase = DIAG_PHASE_RUN;
    rc = run_module_with(L.m, &d, &cap, &value, false, false);
  }
  if (rc != RUN_ILL_TYPED) {
    fprintf(stderr, "self-test: a run against a swapped result type gave %d, want RUN_ILL_TYPED\n%s", rc, cap_text(&cap));
    bad++;
  }
  free(value);
  unload(&L);
  cap_close(&cap);
  return bad;
}

static int self_test(void) {
  static const struct {
    const char *a, *b;
    int range, want;
  } cmp[] = {
      {"(1f, True)", "(1.001f, True)", RANGE_F16, VAL_CLOSE},
      {"(1f, True)", "(1f, False)", RANGE_F16, VAL_DIFFER},
      {"Cons(1f, Nil)", "Some(1f)", RANGE_NONE, VAL_DIFFER},
      {"[1f, 2f]", "[1f, 2f, 3f]", RANGE_NONE, VAL_DIFFER},
      {"(inff16, 1f)", "(70000f, 1f)", RANGE_F16, VAL_RANGE},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof cmp / sizeof *cmp; i++) {
    int v = values_close(cmp[i].a, cmp[i].b, 1e-2, cmp[i].range);
    if (v != cmp[i].want) {
      fprintf(stderr, "self-test: values_close(\"%s\", \"%s\") = %d, want %d\n", cmp[i].a, cmp[i].b, v, cmp[i].want);
      bad++;
    }
  }
  static const struct {
    const char *text;
    int limit;
    bool want;
  } probe[] = {
      /* 60000 + 60000 in float32, 1 at the end */
      {"def @main() { %0 = full(60000f, shape=[2], dtype=\"float32\"); divide(add(%0, %0), add(%0, %0)) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = full(60000f, shape=[2], dtype=\"float32\"); divide(add(%0, %0), add(%0, %0)) }", LIMIT_SQUARES, false},
      {"def @main() { %0 = full(600f, shape=[2], dtype=\"float32\"); divide(add(%0, %0), 7f) }", LIMIT_FLOAT16, false},
      /* a NaN laundered into a bool */
      {"def @main() { isnan(divide(ones(shape=[1], dtype=\"float32\"), zeros(shape=[1], dtype=\"float32\"))) }", LIMIT_FASTMATH, true},
      {"def @main() { %0 = ones(shape=[1], dtype=\"float32\"); less(exp(multiply(%0, 88.5f)), 0f) }", LIMIT_FASTMATH, true},
      {"def @main() { %0 = ones(shape=[1], dtype=\"float32\"); less(exp(multiply(%0, 80f)), 0f) }", LIMIT_FASTMATH, false},
      /* an exponential of 300: float16's rounding of its argument is 15% after it */
      {"def @main() { %0 = ones(shape=[2], dtype=\"float32\"); nn.softmax(multiply(%0, 300f)) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = ones(shape=[2], dtype=\"float32\"); nn.softmax(multiply(%0, 3f)) }", LIMIT_FLOAT16, false},
      /* FastMath's fast_exp clamp at -88.38: a softmax over a spread of 100 (exp(-100)) */
      {"def @main() { %0 = arange(0f, 2f, 1f, start=0f, stop=2f, step=1f, dtype=\"float32\"); log(nn.softmax(multiply(%0, 100f))) }", LIMIT_FASTMATH, true},
      {"def @main() { %0 = arange(0f, 2f, 1f, start=0f, stop=2f, step=1f, dtype=\"float32\"); log(nn.softmax(multiply(%0, 10f))) }", LIMIT_FASTMATH, false},
      /* float16's underflow: 1e-30 is 0 there (a constant, then an operator's result), 1e-6 a subnormal;
       * 1e-4 is normal */
      {"def @main() { %0 = ones(shape=[1], dtype=\"float32\"); greater(multiply(%0, 1e-30f), 0f) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = full(1e-3f, shape=[1], dtype=\"float32\"); greater(multiply(%0, %0), 0f) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = full(1e-2f, shape=[1], dtype=\"float32\"); greater(multiply(%0, %0), 0f) }", LIMIT_FLOAT16, false},
      {"def @main() { %0 = full(1e-3f, shape=[1], dtype=\"float32\"); greater(multiply(%0, %0), 0f) }", LIMIT_SQUARES, false},
      /* integers float16 cannot hold: 10007 is 10008 there, and an int64 result shows it (session 12
       * seed 72 inputs 136, 1998); 1007 is held, and 10007 not cast to an integer is compared */
      {"def @main() { %0 = full(10007f, shape=[2], dtype=\"float32\"); sum(cast(%0, dtype=\"int64\")) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = full(10007f, shape=[2], dtype=\"float32\"); %1 = ones(shape=[2], dtype=\"int32\"); "
       "cast_like(%0, %1) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = full(1007f, shape=[2], dtype=\"float32\"); sum(cast(%0, dtype=\"int64\")) }", LIMIT_FLOAT16, false},
      {"def @main() { %0 = full(10007f, shape=[2], dtype=\"float32\"); sum(multiply(%0, 2f)) }", LIMIT_FLOAT16, false},
      {"def @main() { %0 = full(10007f, shape=[2], dtype=\"float32\"); sum(cast(%0, dtype=\"int64\")) }", LIMIT_SQUARES, false},
      /* float16 ties reaching an index- or order-valued operator: 1 and 1.0004 are one float16
       * value (session 13 seed 82 input 59); 1, 5, 3, 2 are not, and an ordinary topk is compared;
       * a topk of values only, a float64 argmax and other operators do not count */
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = add(multiply(%0, 0.0004f), 1f); topk(%1, k=2) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = multiply(%0, 3f); topk(%1, k=2) }", LIMIT_FLOAT16, false},
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = add(multiply(%0, 0.0004f), 1f); topk(%1, k=2, ret_type=\"values\") }", LIMIT_FLOAT16, false},
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = add(multiply(%0, 0.0004f), 1f); argmax(%1) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = add(multiply(%0, 0.0004f), 1f); argmax(%1) }", LIMIT_SQUARES, false},
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = add(multiply(%0, 0.0004f), 1f); argsort(cast(%1, dtype=\"float64\")) }", LIMIT_FLOAT16, false},
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = add(multiply(%0, 0.0004f), 1f); sum(%1) }", LIMIT_FLOAT16, false},
      /* a comparison of two operands, elementwise with broadcasting */
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = multiply(%0, 3f); less(%1, 1.0004f) }", LIMIT_FLOAT16, false},
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = multiply(%0, 3f); less(%1, 3.001f) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = add(multiply(%0, 0.0004f), 1f); %2 = ones(shape=[2, 1], dtype=\"float32\"); equal(%2, %1) }", LIMIT_FLOAT16, true},
      {"def @main() { %0 = arange(0f, 4f, 1f, start=0f, stop=4f, step=1f, dtype=\"float32\"); %1 = multiply(%0, 3f); %2 = ones(shape=[2, 1], dtype=\"float32\"); equal(%2, %1) }", LIMIT_FLOAT16, false},
  };
  for (size_t i = 0; i < sizeof probe / sizeof *probe; i++) {
    char text[512];
    snprintf(text, sizeof text, "#[version = \"0.0.5\"]\n%s\n", probe[i].text);
    Baseline b = {.text = text, .len = strlen(text)};
    if (beyond_range(&b, probe[i].limit) != probe[i].want || !b.range.ran) {
      fprintf(stderr, "self-test: range probe (ran %d, largest %g, smallest nonzero %g, inf/NaN %d) on %s\n",
              b.range.ran, b.range.max_abs, b.range.min_abs, b.range.nonfinite, probe[i].text);
      bad++;
    }
  }
  bad += self_test_reach();
  bad += self_test_value_types();
  fprintf(stderr, "fuzz-passes self-test: %zu cases, %d wrong\n",
          sizeof cmp / sizeof *cmp + sizeof probe / sizeof *probe + 2 + sizeof value_type_cases / sizeof *value_type_cases + 2,
          bad);
  return bad;
}

/* What the newer comparisons reached (tests/fuzz/README.md, session 15). */
static void report_reach(const Report *rep) {
  fprintf(stderr,
          "fuzz-passes: %d baselines with synthesized arguments; values compared with the -O0 run %d, with a "
          "gradient pass's run %d, gradient values with the original %d; originals whose own value contradicts "
          "@main's type %d\n",
          rep->with_args, rep->against_o0, rep->against_ref, rep->grad_value, rep->type_lies);
}

static void *fuzz_main(void *arg) {
  Args *a = arg;
  stack_guard_init(FP_STACK_SIZE);
  setup();
  Report rep = {0};
  if (a->self_test) {
    a->status = self_test() ? 1 : 0;
    return NULL;
  }
  if (a->repro.len) {
    for (size_t i = 0; i < a->repro.len; i++) {
      size_t len = 0;
      char *t = read_all(a->repro.data[i], &len);
      if (!t) {
        fprintf(stderr, "fuzz_passes: cannot read %s\n", a->repro.data[i]);
        a->status = 2;
        continue;
      }
      fprintf(stderr, "%s\n", a->repro.data[i]);
      alarm(cfg.timeout * 4);
      if (fp_check(t, len, NULL, &rep)) a->status = 1;
      alarm(0);
      free(t);
    }
    fprintf(stderr, "fuzz-passes: %d checks, %d failures, %d skipped\n", rep.checks, rep.failures, rep.skipped);
    report_reach(&rep);
    return NULL;
  }
  for (size_t i = 0; i < a->dirs.len; i++) scan_dir(a->dirs.data[i]);
  if (!seeds.len) {
    fprintf(stderr, "fuzz_passes: no seed programs\n");
    a->status = 2;
    return NULL;
  }
  qsort(seeds.data, seeds.len, sizeof *seeds.data, cmp_seed);
  Rng r = {a->seed};
  double t0 = now_s();
  if (a->check_seeds) { /* every seed as it is, every pass */
    int sf = 0;
    for (size_t i = 0; i < seeds.len; i++) {
      cur_text = seeds.data[i].text;
      cur_len = seeds.data[i].len;
      cur_iter = i;
      if (cfg.verbose) fprintf(stderr, "%s\n", seeds.data[i].path);
      alarm(cfg.timeout * 4);
      int f = fp_check(seeds.data[i].text, seeds.data[i].len, NULL, &rep);
      alarm(0);
      if (f) {
        sf += f;
        fprintf(stderr, "  (seed %s)\n", seeds.data[i].path);
      }
    }
    cur_text = NULL;
    fprintf(stderr, "fuzz-passes: %zu seeds, %d pass checks, %d failures, %d skipped, %.1f s\n", seeds.len,
            rep.checks, sf, rep.skipped, now_s() - t0);
    if (sf) a->status = 1;
    rep = (Report){0};
  }
  uint64_t it = 0, inputs = 0;
  int fails = 0;
  for (; (!a->iters || it < a->iters) && (a->seconds <= 0 || now_s() - t0 < a->seconds); it++) {
    const Seed *s = &seeds.data[rng_below(&r, (uint32_t)seeds.len)];
    char *text = NULL;
    size_t len = 0;
    uint32_t kind = rng_below(&r, 8);
    if (kind < 6) text = mutate_structural(s->text, s->len, &r, &len, a->deep);
    if (text && kind < 2) { /* a second round on the mutant */
      size_t l2 = 0;
      char *t2 = mutate_structural(text, len, &r, &l2, a->deep);
      if (t2) {
        free(text);
        text = t2;
        len = l2;
      }
    }
    text = keep_skips(s, text, &len);
    if (!text) text = mutate_bytes(s->text, s->len, &r, &len);
    cur_text = text;
    cur_len = len;
    cur_iter = it;
    if (cfg.verbose) fprintf(stderr, "[%" PRIu64 "] %s (%zu bytes)\n", it, s->path, len);
    alarm(cfg.timeout);
    int before = rep.checks;
    int f = fp_check(text, len, &r, &rep);
    alarm(0);
    if (rep.checks > before) inputs++;
    if (f) {
      fails += f;
      fprintf(stderr, "  (iteration %" PRIu64 ", from %s)\n", it, s->path);
      write_input("fail", it, text, len);
    }
    cur_text = NULL;
    free(text);
  }
  fprintf(stderr,
          "fuzz-passes: %" PRIu64 " inputs (%" PRIu64 " type-checked), %d pass checks, %d failures, %d skipped, "
          "%.1f s, seed %" PRIu64 "\n",
          it, inputs, rep.checks, fails, rep.skipped, now_s() - t0, a->seed);
  report_reach(&rep);
  if (fails) a->status = 1;
  for (size_t i = 0; i < seeds.len; i++) {
    free(seeds.data[i].path);
    free(seeds.data[i].text);
  }
  vec_free(seeds);
  return NULL;
}

int main(int argc, char **argv) {
  Args a = {.seed = 1, .iters = 0, .seconds = 0};
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(s, "--seed") && v) a.seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(s, "--iters") && v) a.iters = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(s, "--seconds") && v) a.seconds = atof(argv[++i]);
    else if (!strcmp(s, "--passes") && v) cfg.npasses = atoi(argv[++i]);
    else if (!strcmp(s, "--timeout") && v) cfg.timeout = (unsigned)atoi(argv[++i]);
    else if (!strcmp(s, "--max-steps") && v) cfg.max_steps = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(s, "--out") && v) cfg.out_dir = argv[++i];
    else if (!strcmp(s, "--deep")) a.deep = true;
    else if (!strcmp(s, "--check-seeds")) a.check_seeds = true;
    else if (!strcmp(s, "--self-test")) a.self_test = true;
    else if (!strcmp(s, "--skip") && v) vec_push(skip_specs, argv[++i]);
    else if (!strcmp(s, "-v")) cfg.verbose++;
    else if (!strcmp(s, "--repro")) {
      while (i + 1 < argc && argv[i + 1][0] != '-') vec_push(a.repro, argv[++i]);
    } else if (s[0] == '-') {
      fprintf(stderr,
              "usage: fuzz_passes [--seed N] [--iters N] [--seconds S] [--passes K] [--timeout S] "
              "[--max-steps N] [--deep] [--check-seeds] [--skip SPEC] [--out DIR] [-v] DIR... | --repro FILE... | "
              "--self-test\n");
      return 2;
    } else {
      vec_push(a.dirs, s);
    }
  }
  if (!a.iters && a.seconds <= 0) a.iters = 100;
  signal(SIGALRM, on_alarm);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(on_sanitizer_death);
  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, FP_STACK_SIZE);
  if (pthread_create(&th, &attr, fuzz_main, &a) != 0) {
    fprintf(stderr, "fuzz_passes: cannot start the worker thread\n");
    return 2;
  }
  pthread_join(th, NULL);
  pthread_attr_destroy(&attr);
  vec_free(a.repro);
  vec_free(a.dirs);
  vec_free(skip_specs);
  value_heap_shutdown();
  return a.status;
}
#endif
