/* cli/main.c — the relayc command line: options, wiring of the phases, exit codes.
 *
 * This is the only place that decides an exit status (DESIGN.md):
 *   0 success; 1 the program is rejected (syntax, scope or type error);
 *   2 usage or I/O error; 3 run-time error; 4 --check-grad out of tolerance.
 * The phases themselves report through ir/diag.h and return a status.
 * Compilation runs on a thread with a large stack so that deep (but legal)
 * nesting never overflows the C stack; recursive passes check
 * stack_exhausted() and report instead of crashing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/driver.h"
#include "ir/diag.h"
#include "ir/mem.h"
#include "ops/foreign/ffi.h"
#include "ops/foreign/plugin.h"
#include "ops/registry.h"
#include "runtime/bundle.h"
#include "runtime/tensor.h"

#define RELAYC_VERSION "0.1.0"

static const char usage_text[] =
    "usage: relayc [options] FILE...\n"
    "\n"
    "Type-checks Relay IR text modules (TVM text format 0.0.5); FILE may be '-' for stdin.\n"
    "\n"
    "  (no mode)             parse, resolve and type-check each FILE; silent on success\n"
    "  -p, --print           print the module in canonical text\n"
    "  -t, --types           with --print: add inferred types as /* ty=... */ annotations\n"
    "  -r, --run             type-check and evaluate @main, print its value\n"
    "  -i, --input NAME=PATH bind @main's parameter %NAME to a .npy file (repeatable)\n"
    "      --params FILE     bind @main's parameters by name from TVM's .params (save_param_dict)\n"
    "                        or an .npz; without --run: check the values against the types\n"
    "      --inputs FILE     the same for inputs, usually an .npz (repeatable, like --params)\n"
    "      --save-params FILE write the values bound by --input/--inputs/--params to FILE\n"
    "                        (.params or .npz, by extension): converts .npz <-> .params\n"
    "  -o, --output PATH     also write the result to PATH (.npy; .npz for tuples)\n"
    "      --json            with --run: print the value as JSON; with --stats: the figures\n"
    "      --prelude         load the standard library (List, Option, map, foldl, ...)\n"
    "      --profile         with --run: print time per operator after the run\n"
    "      --repeat=N        with --run: evaluate @main N times, report run times\n"
    "      --emit=KIND       dump a stage: tokens, ast (after resolve), types, or dot\n"
    "                        (Graphviz DOT of the typed module: render with dot -Tsvg)\n"
    "      --stats           operator counts, parameter and constant sizes, multiply-\n"
    "                        accumulates and the largest intermediate tensor of @main\n"
    "                        and the globals it calls (each counted once)\n"
    "      --expr            read FILE as a bare expression instead of a module\n"
    "      --check-roundtrip print, re-parse and re-print; fail if anything differs\n"
    "      --pass=SPEC[,SPEC...]  run passes after type checking, in order (repeatable);\n"
    "                        SPEC = Name or Name(key=value, ...), e.g. 'FoldConstant',\n"
    "                        'DeadCodeElimination(inline_once=True)'\n"
    "  -O0, -O1, -O2, -O3    TVM's target-independent optimisation pipeline for that level;\n"
    "                        -O0 also turns off relayc's own rewrites before --run; -O is -O2\n"
    "      --grad            @main becomes its gradient (= --pass=Gradient)\n"
    "      --check-grad[=MODE]  compare @main's gradient (MODE higher_order, the default,\n"
    "                        or first_order) with central differences in float64;\n"
    "                        exit 4 when out of tolerance; inputs not given are drawn\n"
    "      --eps=X --atol=X --rtol=X  with --check-grad: step (1e-6) and tolerances\n"
    "                        (1e-5, 1e-3): pass when |a - n| <= atol + rtol*|n|\n"
    "      --scale=X --mean=X --seed=N  with --check-grad: drawn inputs N(mean, scale^2)\n"
    "                        (1e-5, 0) from a fixed-seed generator (seed 0)\n"
    "      --list-passes     list every pass with its options and defaults, then exit\n"
    "      --time-passes     report each pass's time, its re-typing time and node counts on stderr\n"
    "      --equal A B       exit 0 when modules A and B are structurally equal, else\n"
    "                        print the first difference and exit 1\n"
    "      --max-errors=N    stop after N errors (default 20, 0 = no limit)\n"
    "      --diagnostics-format=FORMAT  text (default), json (one array, like gcc's)\n"
    "                        or sarif (SARIF 2.1.0 for CI); written to stderr at exit\n"
    "      --stop-after=PHASE stop after parse or resolve (for benchmarks)\n"
    "      --ffi FILE        declare foreign operators from FILE (see relayc(1))\n"
    "      --ffi-decl DECL   declare foreign operators given as text, e.g.\n"
    "                        'op my.erfc elementwise from libm.so.6: float erfcf(float)'\n"
    "      --plugin PATH     load an operator plugin (.so built against relayc/plugin.h)\n"
    "      --list-ops        print every registered operator name, one per line, and exit\n"
    "                        (with the --ffi/--plugin operators given before it)\n"
    "  -h, --help            show this help and exit\n"
    "  -V, --version         show the version and exit\n"
    "  --                    end of options\n"
    "\n"
    "Exit status: 0 ok, 1 program rejected, 2 usage or I/O error, 3 run-time error,\n"
    "4 --check-grad found a gradient out of tolerance.\n";

/* With a machine diagnostics format, a usage error is one more diagnostic. */
static bool usage_collected(const char *msg) {
  if (!diag_collecting()) return false;
  Diag d;
  diag_init(&d, stderr, NULL);
  diag_plain(&d, DIAG_ERROR, "%s", msg);
  return true;
}

static int usage_error(const char *fmt, const char *arg) {
  char msg[1024];
  snprintf(msg, sizeof msg, fmt, arg);
  if (usage_collected(msg)) return 2;
  fprintf(stderr, "relayc: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'relayc --help' for more information.\n");
  return 2;
}

/* Known long options, for "did you mean" on a misspelled one. */
static const char *const long_options[] = {
    "--print", "--types", "--run", "--input", "--params", "--inputs", "--save-params", "--output", "--json", "--stats", "--prelude", "--profile", "--repeat",
    "--emit", "--expr", "--check-roundtrip", "--pass", "--grad", "--list-passes", "--time-passes", "--equal", "--check-grad", "--eps", "--atol", "--rtol", "--scale", "--mean", "--seed", "--max-errors", "--diagnostics-format", "--stop-after", "--ffi", "--ffi-decl", "--plugin", "--list-ops", "--help", "--version", NULL,
};

static int unknown_option(const char *arg) {
  const char *best = NULL;
  size_t best_d = 3;
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
  for (const char *const *o = long_options; *o; o++) {
    size_t dist = edit_distance(name, *o, 2);
    if (dist < best_d) { best_d = dist; best = *o; }
  }
  char msg[1024];
  snprintf(msg, sizeof msg, best ? "unknown option '%s' (did you mean '%s'?)" : "unknown option '%s'", arg, best);
  if (usage_collected(msg)) return 2;
  fprintf(stderr, "relayc: unknown option '%s'", arg);
  if (best) fprintf(stderr, " (did you mean '%s'?)", best);
  fprintf(stderr, "\nTry 'relayc --help' for more information.\n");
  return 2;
}

/* Value of an option given as `--opt=V` or `--opt V` / `-o V`. */
static const char *option_value(int argc, char **argv, int *i, const char *arg, size_t namelen) {
  if (arg[namelen] == '=') return arg + namelen + 1;
  if (arg[namelen] != 0) return NULL;
  if (*i + 1 >= argc) return NULL;
  return argv[++*i];
}

static bool is_opt(const char *arg, const char *lng, const char *shrt, size_t *namelen) {
  size_t n = strlen(lng);
  if (strncmp(arg, lng, n) == 0 && (arg[n] == 0 || arg[n] == '=')) { *namelen = n; return true; }
  if (shrt && strcmp(arg, shrt) == 0) { *namelen = strlen(shrt); return true; }
  return false;
}

/* --ffi, --ffi-decl, --plugin: declared or loaded at once, before any file is
 * parsed (resolution checks operator names against the registry). */
static bool load_extension(const char *opt, const char *arg, bool color) {
  Diag d;
  diag_init(&d, stderr, NULL);
  d.color = color;
  if (strncmp(opt, "--plugin", 8) == 0) return plugin_load(arg, &d);
  if (strncmp(opt, "--ffi-decl", 10) == 0) return foreign_declare_text(arg, &d);
  return foreign_declare_file(arg, &d);
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* --list-ops: every registered operator (built-in, --ffi, --plugin), sorted. */
static void list_ops(void) {
  uint32_t n = op_count();
  const char **names = mem_calloc(n + 1, sizeof *names);
  for (uint32_t i = 0; i < n; i++) names[i] = op_get((int32_t)i)->name;
  qsort(names, n, sizeof *names, cmp_names);
  for (uint32_t i = 0; i < n; i++) puts(names[i]);
  mem_free(names);
}

static int parse_args(int argc, char **argv, DriverOptions *o) {
  bool options_done = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    size_t nl = 0;
    if (options_done || a[0] != '-' || strcmp(a, "-") == 0) {
      vec_push(o->files, a);
      continue;
    }
    if (strcmp(a, "--") == 0) { options_done = true; continue; }
    if (is_opt(a, "--help", "-h", &nl)) { fputs(usage_text, stdout); return -1; }
    if (is_opt(a, "--version", "-V", &nl)) { printf("relayc %s (Relay text format 0.0.5)\n", RELAYC_VERSION); return -1; }
    if (is_opt(a, "--list-ops", NULL, &nl)) { list_ops(); return -1; }
    if (is_opt(a, "--print", "-p", &nl)) { o->mode = MODE_PRINT; continue; }
    if (is_opt(a, "--types", "-t", &nl)) { o->types = true; continue; }
    if (is_opt(a, "--run", "-r", &nl)) { o->mode = MODE_RUN; continue; }
    if (is_opt(a, "--json", NULL, &nl)) { o->json = true; continue; }
    if (is_opt(a, "--stats", NULL, &nl)) { o->mode = MODE_STATS; continue; }
    if (is_opt(a, "--prelude", NULL, &nl)) { o->prelude = true; continue; }
    if (is_opt(a, "--profile", NULL, &nl)) { o->profile = true; continue; }
    if (is_opt(a, "--expr", NULL, &nl)) { o->expr = true; continue; }
    if (is_opt(a, "--check-roundtrip", NULL, &nl)) { o->mode = MODE_ROUNDTRIP; continue; }
    if (is_opt(a, "--list-passes", NULL, &nl)) { pass_list(stdout); return -1; }
    if (is_opt(a, "--time-passes", NULL, &nl)) { o->time_passes = true; continue; }
    if (is_opt(a, "--equal", NULL, &nl)) { o->mode = MODE_EQUAL; continue; }
    if (is_opt(a, "--check-grad", NULL, &nl)) {
      o->mode = MODE_CHECK_GRAD;
      if (a[nl] == '=') {
        if (strcmp(a + nl + 1, "first_order") == 0) o->gc_first_order = true;
        else if (strcmp(a + nl + 1, "higher_order") == 0) o->gc_first_order = false;
        else return usage_error("--check-grad=MODE expects higher_order or first_order, got '%s'", a + nl + 1);
      }
      continue;
    }
    if (is_opt(a, "--eps", NULL, &nl) || is_opt(a, "--atol", NULL, &nl) || is_opt(a, "--rtol", NULL, &nl) ||
        is_opt(a, "--scale", NULL, &nl) || is_opt(a, "--mean", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      char *end = NULL;
      double x = v ? strtod(v, &end) : 0;
      bool nonneg = strncmp(a, "--mean", 6) != 0;
      if (!v || !*v || *end || x != x || (nonneg && x < 0) || (strncmp(a, "--eps", 5) == 0 && x <= 0))
        return usage_error("option '%s' expects a number (non-negative; --eps positive)", a);
      if (strncmp(a, "--eps", 5) == 0) o->gc_eps = x;
      else if (strncmp(a, "--atol", 6) == 0) o->gc_atol = x;
      else if (strncmp(a, "--rtol", 6) == 0) o->gc_rtol = x;
      else if (strncmp(a, "--scale", 7) == 0) o->gc_scale = x;
      else o->gc_mean = x;
      o->gc_set = true;
      continue;
    }
    if (is_opt(a, "--seed", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      char *end = NULL;
      unsigned long long n = v ? strtoull(v, &end, 10) : 0;
      if (!v || !*v || *end) return usage_error("--seed expects a non-negative integer, got '%s'", v ? v : "");
      o->gc_seed = n;
      o->gc_set = true;
      continue;
    }
    if (is_opt(a, "--pass", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      if (!v) return usage_error("option '%s' needs a pass list, e.g. --pass=FoldConstant", a);
      if (!pass_pipeline_parse(&o->passes, v, stderr)) return 2;
      o->has_passes = true;
      continue;
    }
    if (is_opt(a, "--grad", NULL, &nl)) {
      pass_pipeline_parse(&o->passes, "Gradient", stderr);
      o->has_passes = true;
      continue;
    }
    if (a[0] == '-' && a[1] == 'O' && (a[2] == 0 || (a[2] >= '0' && a[2] <= '3' && a[3] == 0))) {
      pass_pipeline_add_opt_level(&o->passes, a[2] ? a[2] - '0' : 2);
      o->run_rewrites_off = a[2] == '0'; /* the last -O wins */
      o->has_passes = true;
      continue;
    }
    if (is_opt(a, "--input", "-i", &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      if (!v) return usage_error("option '%s' needs NAME=PATH.npy", a);
      if (!strchr(v, '=')) return usage_error("--input expects NAME=PATH.npy, got '%s'", v);
      vec_push(o->inputs, v);
      continue;
    }
    if (is_opt(a, "--params", NULL, &nl) || is_opt(a, "--inputs", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      if (!v || !*v) return usage_error("option '%s' needs a file (.params or .npz)", a);
      if (strncmp(a, "--params", 8) == 0) vec_push(o->params, v);
      else vec_push(o->input_bundles, v);
      continue;
    }
    if (is_opt(a, "--save-params", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      if (!v || bundle_format_for_path(v) == BUNDLE_UNKNOWN)
        return usage_error("--save-params needs a file named .params or .npz (the name picks the format), got '%s'",
                           v ? v : "");
      o->save_params = v;
      continue;
    }
    if (is_opt(a, "--output", "-o", &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      if (!v) return usage_error("option '%s' needs a path", a);
      o->output = v;
      continue;
    }
    if (is_opt(a, "--emit", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      if (!v) return usage_error("option '%s' needs a stage: tokens, ast, types or dot", a);
      if (strcmp(v, "tokens") == 0) o->mode = MODE_EMIT_TOKENS;
      else if (strcmp(v, "ast") == 0) o->mode = MODE_EMIT_AST;
      else if (strcmp(v, "types") == 0) o->mode = MODE_EMIT_TYPES;
      else if (strcmp(v, "dot") == 0) o->mode = MODE_EMIT_DOT;
      else return usage_error("unknown stage '%s' for --emit (tokens, ast, types, dot)", v);
      continue;
    }
    if (is_opt(a, "--stop-after", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      if (v && strcmp(v, "parse") == 0) o->stop_after = 1;
      else if (v && strcmp(v, "resolve") == 0) o->stop_after = 2;
      else return usage_error("--stop-after expects parse or resolve, got '%s'", v ? v : "");
      continue;
    }
    if (is_opt(a, "--ffi", NULL, &nl) || is_opt(a, "--ffi-decl", NULL, &nl) || is_opt(a, "--plugin", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      if (!v) return usage_error("option '%s' needs an argument", a);
      if (!load_extension(a, v, o->color)) return 2;
      continue;
    }
    if (is_opt(a, "--repeat", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      char *end = NULL;
      long n = v ? strtol(v, &end, 10) : -1;
      if (!v || *end || n < 1 || n > 1000000) return usage_error("--repeat expects a count >= 1, got '%s'", v ? v : "");
      o->repeat = (int)n;
      continue;
    }
    if (is_opt(a, "--diagnostics-format", NULL, &nl)) { /* taken by diagnostics_format() */
      option_value(argc, argv, &i, a, nl);
      continue;
    }
    if (is_opt(a, "--max-errors", NULL, &nl)) {
      const char *v = option_value(argc, argv, &i, a, nl);
      char *end = NULL;
      long n = v ? strtol(v, &end, 10) : -1;
      if (!v || *end || n < 0 || n > 1000000) return usage_error("--max-errors expects a count, got '%s'", v ? v : "");
      o->max_errors = (int)n;
      continue;
    }
    return unknown_option(a);
  }
  if (o->files.len == 0) return usage_error("%s", "no input file (use '-' for standard input)");
  if (o->types && o->mode != MODE_PRINT) return usage_error("%s", "--types only applies to --print");
  bool binds = o->inputs.len || o->params.len || o->input_bundles.len || o->save_params;
  bool bundles = o->params.len || o->input_bundles.len || o->save_params;
  if (o->inputs.len && o->mode != MODE_RUN && o->mode != MODE_CHECK_GRAD && o->mode != MODE_CHECK)
    return usage_error("%s", "--input needs --run or --check-grad (or no mode: check the values)");
  if (bundles && o->mode != MODE_RUN && o->mode != MODE_CHECK)
    return usage_error("%s", "--params, --inputs and --save-params go with --run, or alone to check the values");
  if (binds && o->mode != MODE_CHECK_GRAD && (o->expr || o->files.len > 1))
    return usage_error("%s", "--input, --params, --inputs and --save-params need one module file with @main");
  if (o->json && o->mode != MODE_RUN && o->mode != MODE_STATS)
    return usage_error("%s", "--json needs --run or --stats");
  if ((o->output || o->profile || o->repeat) && o->mode != MODE_RUN)
    return usage_error("%s", "--output, --profile and --repeat need --run");
  if (o->gc_set && o->mode != MODE_CHECK_GRAD)
    return usage_error("%s", "--eps, --atol, --rtol, --scale, --mean and --seed need --check-grad");
  if (o->mode == MODE_CHECK_GRAD && o->files.len > 1) return usage_error("%s", "--check-grad takes exactly one file");
  if (o->mode == MODE_RUN && o->files.len > 1) return usage_error("%s", "--run takes exactly one file");
  if (o->mode == MODE_EQUAL && o->files.len != 2) return usage_error("%s", "--equal takes exactly two files");
  if (o->time_passes && !o->has_passes && o->mode != MODE_RUN)
    return usage_error("%s", "--time-passes needs --pass, -O or --run");
  return 0;
}

/* --diagnostics-format is read before the other options so that errors met
 * while parsing them (a bad --ffi file, an unknown flag) are collected too.
 * Returns 0, or 2 after a usage error (always text). */
static int diagnostics_format(int argc, char **argv, DiagFormat *fmt) {
  *fmt = DIAG_FORMAT_TEXT;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    size_t nl = 0;
    if (strcmp(a, "--") == 0) break;
    if (!is_opt(a, "--diagnostics-format", NULL, &nl)) continue;
    const char *v = option_value(argc, argv, &i, a, nl);
    if (!v || !diag_format_parse(v, fmt))
      return usage_error("--diagnostics-format expects text, json or sarif, got '%s'", v ? v : "");
  }
  return 0;
}

typedef struct Job {
  DriverOptions *opts;
  int status;
} Job;

static void *run_job(void *arg) {
  Job *job = arg;
  stack_guard_init(DRIVER_STACK_SIZE);
  job->status = driver_run(job->opts);
  return NULL;
}

int main(int argc, char **argv) {
  DriverOptions opts = {0};
  opts.max_errors = 20;
  opts.gc_eps = 1e-6;
  opts.gc_atol = 1e-5;
  opts.gc_rtol = 1e-3;
  opts.gc_scale = 1e-5;
  pass_pipeline_init(&opts.passes);
  const char *nc = getenv("NO_COLOR");
  opts.color = isatty(STDERR_FILENO) && !(nc && *nc);
  DiagFormat fmt;
  int rc = diagnostics_format(argc, argv, &fmt);
  if (rc != 0) return rc;
  diag_collect_begin(fmt);
  rc = parse_args(argc, argv, &opts);
  if (rc != 0) {
    vec_free(opts.files);
    vec_free(opts.inputs);
    pass_pipeline_fini(&opts.passes);
    if (rc > 0) diag_collect_end(stderr, RELAYC_VERSION, rc);
    vec_free(opts.params);
    vec_free(opts.input_bundles);
    return rc < 0 ? 0 : rc;
  }
  /* Freed blocks stay in the heap (not only for --run's tensors): a pass's
   * side tables over a 100,000-node module are megabytes each, allocated and
   * freed per walk; fresh mmaps made every walk pay page faults again. */
  tensor_heap_keep_freed();
  /* Run the compiler on a big-stack thread (reserved address space, touched lazily). */
  Job job = {&opts, 0};
  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, DRIVER_STACK_SIZE);
  if (pthread_create(&th, &attr, run_job, &job) != 0) {
    stack_guard_init(8u << 20); /* fall back to this thread's default stack */
    job.status = driver_run(&opts);
  } else {
    pthread_join(th, NULL);
  }
  pthread_attr_destroy(&attr);
  diag_collect_end(stderr, RELAYC_VERSION, job.status);
  vec_free(opts.files);
  vec_free(opts.inputs);
  pass_pipeline_fini(&opts.passes);
  vec_free(opts.params);
  vec_free(opts.input_bundles);
  fflush(stdout);
  if (ferror(stdout)) {
    fprintf(stderr, "relayc: error writing standard output: %s\n", strerror(errno));
    return job.status ? job.status : 2;
  }
  return job.status;
}
