/* cli/driver.c — wiring of the phases for each input file.
 *
 * read → parse (+ metadata) → resolve → infer → print / run. Each phase reports
 * through one Diag per file and returns a status; this file turns statuses into
 * the exit code. With several files every file is processed and the worst
 * status wins (2 > 3 > 1 is not meaningful; we keep the numerically largest).
 */
#include "cli/driver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dot.h"
#include "analysis/stats.h"
#include "ir/ast.h"
#include "ir/diag.h"
#include "ir/equal.h"
#include "ir/print.h"
#include "parser/parser.h"
#include "cli/gradcheck.h"
#include "eval/eval.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "transform/gradient_syntax.h"

static int worst(int a, int b) { return a > b ? a : b; }

/* Parse + resolve (+ infer when `typed`); returns the module or NULL with *status set.
 * With --prelude, *prelude receives the library module, to be freed after the result. */
static Module *front_end(Source *src, const DriverOptions *o, Diag *d, bool typed, int *status,
                         Module **prelude) {
  d->phase = DIAG_PHASE_SYNTAX;
  Module *m = o->expr ? parse_expression(src, d) : parse_module(src, d);
  *prelude = NULL;
  if (d->nerrors == 0 && o->prelude && !o->expr) eval_prelude_merge(m, prelude, d);
  if (o->stop_after == 1) typed = false;
  if (d->nerrors == 0 && o->stop_after != 1) {
    d->phase = DIAG_PHASE_SCOPE;
    if (o->expr) resolve_expression(m, d);
    else resolve_module(m, d);
  }
  /* gradient(F) is expanded at compile time: it needs the types */
  bool grad = d->nerrors == 0 && o->stop_after == 0 && !o->expr && gradient_syntax_used(m);
  if (grad) typed = true;
  if (d->nerrors == 0 && typed && o->stop_after == 0) {
    d->phase = DIAG_PHASE_TYPE;
    if (o->expr) infer_expression(m, d);
    else infer_module(m, d);
  }
  if (d->nerrors == 0 && grad) gradient_syntax_expand(m, d);
  if (d->nerrors) {
    module_free(m);
    eval_prelude_free(*prelude);
    *prelude = NULL;
    *status = 1;
    return NULL;
  }
  *status = 0;
  return m;
}

static void print_any(FILE *out, Module *m, const DriverOptions *o, bool types) {
  PrintOptions po = {.types = types};
  if (o->expr) print_expression(out, m, po);
  else print_module(out, m, po);
}

/* Prints into a malloc'd string. */
static char *print_to_string(Module *m, const DriverOptions *o, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  if (!f) return NULL;
  print_any(f, m, o, false);
  fclose(f);
  return buf;
}

/* --check-roundtrip: print → parse → print must give identical bytes and an equal module. */
/* Was the module type-checked (gradient(F) forces it)? */
static bool m_typed(const Module *m) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn) return m->defs[i]->fn->type != NULL;
  return false;
}

static int roundtrip(Module *m, const DriverOptions *o, Diag *d, bool typed) {
  size_t len1 = 0, len2 = 0;
  char *text1 = print_to_string(m, o, &len1);
  if (!text1) return 2;
  Source *src2 = source_new("<printed>", text1, len1);
  Diag d2;
  diag_init(&d2, stderr, src2);
  d2.color = d->color;
  int st = 0;
  DriverOptions o2 = *o;
  o2.prelude = false; /* the printed text already holds the library's definitions */
  Module *prelude2 = NULL;
  /* a typed original (passes, gradient(F)) is compared with a typed re-parse:
   * binders compare by their written or inferred types */
  Module *m2 = front_end(src2, &o2, &d2, typed, &st, &prelude2);
  int rc = 0;
  if (!m2) {
    diag_file(d, DIAG_ERROR, "printed text does not re-parse");
    rc = 1;
  } else {
    char *text2 = print_to_string(m2, o, &len2);
    if (!text2 || len1 != len2 || memcmp(text1, text2, len1) != 0) {
      diag_file(d, DIAG_ERROR, "printing is not idempotent");
      rc = 1;
    } else if (!o->expr && !module_equal(m, m2, stderr)) {
      diag_file(d, DIAG_ERROR, "re-parsed module differs from the original");
      rc = 1;
    }
    free(text2);
    module_free(m2);
  }
  source_free(src2);
  return rc;
}

/* --check-grad: the file parsed twice (analytic and float64 copies), after
 * the same --pass pipeline. */
static int check_grad_file(Source *src, const DriverOptions *o, Diag *d) {
  int st = 0, st2 = 0;
  Module *pa = NULL, *pb = NULL;
  Module *a = front_end(src, o, d, true, &st, &pa);
  Module *b = a ? front_end(src, o, d, true, &st2, &pb) : NULL;
  if (a && b && o->has_passes) {
    PassRunOptions ro = {.time_passes = o->time_passes ? stderr : NULL};
    st = pass_pipeline_run(&o->passes, a, d, &ro);
    if (st == 0) st = pass_pipeline_run(&o->passes, b, d, &ro);
  }
  if (a && b && st == 0) st = gradcheck_run(a, b, o, d);
  else if (a && !b) st = st2;
  module_free(a);
  module_free(b);
  eval_prelude_free(pa);
  eval_prelude_free(pb);
  return st;
}

/* What eval/ needs of the command line. */
static EvalOptions eval_options(const DriverOptions *o) {
  return (EvalOptions){o->inputs.data, o->inputs.len, o->output, o->json, o->profile, o->expr,
                       o->repeat, o->params.data, o->params.len, o->input_bundles.data,
                       o->input_bundles.len, o->save_params};
}

static int process_file(const char *path, const DriverOptions *o) {
  Source *src = source_read_file(path);
  Diag d;
  if (!src) {
    int err = errno;
    diag_init(&d, stderr, NULL);
    diag_plain(&d, DIAG_ERROR, "cannot read '%s': %s", path, strerror(err));
    return 2;
  }
  diag_init(&d, stderr, src);
  d.color = o->color;
  d.max_errors = o->max_errors;
  int status = 0;
  if (o->mode == MODE_EMIT_TOKENS) {
    d.phase = DIAG_PHASE_SYNTAX;
    status = dump_tokens(src, stdout, &d) ? 0 : 1;
    source_free(src);
    return status;
  }
  if (o->mode == MODE_CHECK_GRAD) {
    status = check_grad_file(src, o, &d);
    source_free(src);
    return status;
  }
  bool typed = o->mode == MODE_CHECK || o->mode == MODE_RUN || o->mode == MODE_EMIT_TYPES ||
               o->mode == MODE_EMIT_DOT || o->mode == MODE_STATS || (o->mode == MODE_PRINT && o->types) ||
               o->has_passes;
  Module *prelude = NULL;
  Module *m = front_end(src, o, &d, typed, &status, &prelude);
  if (m && o->stop_after) {
    module_free(m);
    m = NULL;
  }
  PassRunOptions ro = {.time_passes = o->time_passes ? stderr : NULL};
  if (m && o->has_passes && !o->expr) {
    d.phase = DIAG_PHASE_PASS;
    status = pass_pipeline_run(&o->passes, m, &d, &ro);
    if (status) {
      module_free(m);
      m = NULL;
    }
  }
  if (m && o->mode == MODE_RUN && !o->expr && !o->run_rewrites_off) {
    /* relayc's inference rewrites for its kernels, through the same pipeline
     * (spec: --run's default pipeline; -O0 turns it off) */
    PassPipeline rp;
    pass_pipeline_init(&rp);
    pass_pipeline_add_run_defaults(&rp);
    d.phase = DIAG_PHASE_PASS;
    PassRunOptions rro = ro;
    rro.retype_if_changed = true;
    status = pass_pipeline_run(&rp, m, &d, &rro);
    pass_pipeline_fini(&rp);
    if (status) {
      module_free(m);
      m = NULL;
    }
  }
  if (m) {
    switch (o->mode) {
    case MODE_PRINT: print_any(stdout, m, o, o->types); break;
    case MODE_EMIT_AST: print_any(stdout, m, o, false); break;
    case MODE_EMIT_TYPES: print_any(stdout, m, o, true); break;
    case MODE_EMIT_DOT: dot_write(stdout, m); break;
    case MODE_STATS: status = stats_report(stdout, m, o->json, &d); break;
    case MODE_ROUNDTRIP: status = roundtrip(m, o, &d, typed || o->has_passes || m_typed(m)); break;
    case MODE_RUN: {
      EvalOptions eo = eval_options(o);
      d.phase = DIAG_PHASE_RUN;
      status = eval_main(m, &eo, &d);
      break;
    }
    case MODE_CHECK: /* --params, --inputs, --input or --save-params without --run */
      if (o->inputs.len || o->params.len || o->input_bundles.len || o->save_params) {
        EvalOptions eo = eval_options(o);
        status = eval_bind_only(m, &eo, &d);
      }
      break;
    default: break;
    }
    module_free(m);
  }
  eval_prelude_free(prelude);
  source_free(src);
  return status;
}

/* --equal A B: both modules type-checked (so an unannotated binder compares
 * by its inferred type, like TVM's structural_equal after InferType), after
 * the same passes; exit 0 equal, 1 different, 2 I/O, 1 also if either
 * module is rejected. */
static Module *load_for_equal(const char *path, const DriverOptions *o, Source **src, Diag *d,
                              Module **prelude, int *status) {
  *src = source_read_file(path);
  if (!*src) {
    fprintf(stderr, "relayc: error: cannot read '%s': %s\n", path, strerror(errno));
    *status = 2;
    return NULL;
  }
  diag_init(d, stderr, *src);
  d->color = o->color;
  d->max_errors = o->max_errors;
  Module *m = front_end(*src, o, d, true, status, prelude);
  if (m && o->has_passes) {
    PassRunOptions ro = {.time_passes = o->time_passes ? stderr : NULL};
    *status = pass_pipeline_run(&o->passes, m, d, &ro);
    if (*status) {
      module_free(m);
      m = NULL;
    }
  }
  return m;
}

static int equal_files(const DriverOptions *o) {
  Source *sa = NULL, *sb = NULL;
  Diag da, db;
  Module *pa = NULL, *pb = NULL;
  int st = 0, stb = 0;
  Module *a = load_for_equal(o->files.data[0], o, &sa, &da, &pa, &st);
  Module *b = a ? load_for_equal(o->files.data[1], o, &sb, &db, &pb, &stb) : NULL;
  if (a && b) {
    st = module_equal(a, b, stderr) ? 0 : 1;
  } else if (a) {
    st = stb;
  }
  module_free(a);
  module_free(b);
  eval_prelude_free(pa);
  eval_prelude_free(pb);
  if (sa) source_free(sa);
  if (sb) source_free(sb);
  return st;
}

int driver_run(DriverOptions *o) {
  if (o->mode == MODE_EQUAL) return equal_files(o);
  int status = 0;
  for (size_t i = 0; i < o->files.len; i++) status = worst(status, process_file(o->files.data[i], o));
  return status;
}
