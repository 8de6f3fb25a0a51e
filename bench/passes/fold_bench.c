/* bench/passes/fold_bench.c — time of the folding/simplification passes
 * (FoldConstant, SimplifyInference, SimplifyExpr, ...) next to the time of
 * parsing the same text, for issue 10's linear-speed budget (each pass
 * < 0.5 s and <= 2x parse on the 20 MB module and on a 100,000-binding chain).
 *
 *     fold_bench FILE.relay [reps] [Pass ...]
 *
 * For each repetition the file is parsed, resolved and type-checked afresh,
 * then each pass runs on its own copy (the file parsed again). Reported per
 * pass: the pass alone (its entry point, without the runner's re-typing), the
 * re-typing after it, and parse (text -> AST) for comparison; medians of
 * `reps` (default 5) runs, CPU time of the process (robust on a loaded
 * machine) and wall time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/mem.h"
#include "parser/parser.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "transform/pass.h"

typedef struct Clock {
  double cpu, wall;
} Clock;

static Clock now(void) {
  struct timespec c, w;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
  clock_gettime(CLOCK_MONOTONIC, &w);
  return (Clock){c.tv_sec + c.tv_nsec / 1e9, w.tv_sec + w.tv_nsec / 1e9};
}

static Clock since(Clock a) {
  Clock b = now();
  return (Clock){b.cpu - a.cpu, b.wall - a.wall};
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct Loaded {
  Source *src;
  Module *m;
  Diag d;
  Clock parse;
} Loaded;

static bool load(const char *path, Loaded *l) {
  memset(l, 0, sizeof *l);
  l->src = source_read_file(path);
  if (!l->src) return false;
  diag_init(&l->d, stderr, l->src);
  Clock t = now();
  l->m = parse_module(l->src, &l->d);
  l->parse = since(t);
  if (l->d.nerrors || !resolve_module(l->m, &l->d) || !infer_module(l->m, &l->d)) return false;
  return true;
}

static void unload(Loaded *l) {
  module_free(l->m);
  source_free(l->src);
}

typedef struct Args {
  int argc;
  char **argv;
  int status;
} Args;

static int bench(int argc, char **argv);

static void *bench_thread(void *p) {
  Args *a = p;
  stack_guard_init(1u << 30);
  a->status = bench(a->argc, a->argv);
  return NULL;
}

/* Like the driver: a 1 GiB stack, so 100,000-deep graph chains fit. */
int main(int argc, char **argv) {
  Args a = {argc, argv, 0};
  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1u << 30);
  if (pthread_create(&th, &attr, bench_thread, &a) != 0) return 2;
  pthread_join(th, NULL);
  return a.status;
}

static int bench(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fold_bench FILE.relay [reps] [Pass ...]\n");
    return 2;
  }
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  if (reps < 1) reps = 5;
  static const char *const dflt[] = {"FoldConstant", "SimplifyInference", "SimplifyExpr", "SimplifyExprPostAlterOp",
                                     "CanonicalizeOps", "CanonicalizeCast", "DivToMul", "FastMath",
                                     "FoldExplicitPadding", "DynamicToStatic"};
  const char *const *passes = argc > 3 ? (const char *const *)argv + 3 : dflt;
  int npasses = argc > 3 ? argc - 3 : (int)(sizeof dflt / sizeof dflt[0]);
  double *pc = calloc((size_t)reps, sizeof *pc), *pw = calloc((size_t)reps, sizeof *pw);
  double *tc = calloc((size_t)reps, sizeof *tc), *tw = calloc((size_t)reps, sizeof *tw);
  double *parse_c = calloc((size_t)reps, sizeof *parse_c),
         *parse_w = calloc((size_t)reps, sizeof *parse_w);
  printf("%s (%d runs, medians; CPU time, wall in brackets)\n", argv[1], reps);
  for (int k = 0; k < npasses; k++) {
    const PassDef *def = pass_lookup(passes[k]);
    if (!def || !def->run) {
      printf("  %-26s not available\n", passes[k]);
      continue;
    }
    int n = 0;
    for (int r = 0; r < reps; r++) {
      Loaded l;
      if (!load(argv[1], &l)) {
        fprintf(stderr, "%s does not load\n", argv[1]);
        return 1;
      }
      PassPipeline pl;
      pass_pipeline_init(&pl);
      pass_pipeline_parse(&pl, passes[k], stderr);
      PassCtx c = {l.m, &l.d, def, pl.items.data[0].opts, 2, NULL};
      Clock t = now();
      bool ok = def->run(&c);
      Clock dt = since(t);
      t = now();
      infer_clear(l.m);
      ok = ok && infer_module(l.m, &l.d);
      Clock rt = since(t);
      pass_pipeline_fini(&pl);
      if (!ok) {
        fprintf(stderr, "%s failed\n", passes[k]);
        return 1;
      }
      pc[n] = dt.cpu, pw[n] = dt.wall, tc[n] = rt.cpu, tw[n] = rt.wall;
      parse_c[n] = l.parse.cpu, parse_w[n] = l.parse.wall;
      n++;
      unload(&l);
    }
    double p = median(pc, n), pwm = median(pw, n), t = median(tc, n), twm = median(tw, n),
           pa = median(parse_c, n), paw = median(parse_w, n);
    printf("  %-26s pass %8.1f ms [%8.1f]  re-type %8.1f ms [%8.1f]  parse %8.1f ms [%8.1f]  pass/parse %.2f\n",
           def->name, p * 1e3, pwm * 1e3, t * 1e3, twm * 1e3, pa * 1e3, paw * 1e3, p / pa);
    fflush(stdout);
  }
  return 0;
}
