/* cli/driver.h — runs the phases over each input file according to the options.
 * Returns the process exit status (0, 1, 2 or 3; see cli/main.c). */
#ifndef RELAYC_CLI_DRIVER_H
#define RELAYC_CLI_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/mem.h"
#include "transform/pass.h"

#define DRIVER_STACK_SIZE ((size_t)1 << 30) /* 1 GiB reserved for deep but legal nesting */

typedef enum {
  MODE_CHECK,       /* parse, resolve, type-check */
  MODE_PRINT,       /* --print */
  MODE_RUN,         /* --run */
  MODE_ROUNDTRIP,   /* --check-roundtrip */
  MODE_EMIT_TOKENS, /* --emit=tokens */
  MODE_EMIT_AST,    /* --emit=ast */
  MODE_EMIT_TYPES,  /* --emit=types */
  MODE_EQUAL,       /* --equal A B: structural equality of two modules */
  MODE_CHECK_GRAD,  /* --check-grad: analytic gradient vs central differences (cli/gradcheck.h) */
  MODE_EMIT_DOT,    /* --emit=dot: Graphviz DOT of the typed module */
  MODE_STATS,       /* --stats (--json: as JSON) */
} DriverMode;

typedef struct DriverOptions {
  DriverMode mode;
  bool types, json, prelude, profile, expr, color;
  int max_errors;
  int stop_after;  /* --stop-after: 0 = run everything, 1 = parse, 2 = resolve */
  int repeat;      /* --repeat: evaluate @main this many times (0 or 1 = once) */
  const char *output;
  VEC(const char *) files;
  VEC(const char *) inputs; /* NAME=PATH */
  PassPipeline passes;      /* --pass=... and -O<n>, in command-line order */
  bool has_passes;          /* any --pass / -O given */
  bool run_rewrites_off;    /* -O0: --run skips relayc's inference rewrites (pass_pipeline_add_run_defaults) */
  bool time_passes;         /* --time-passes */
  /* --check-grad settings (spec/gradient.md §3.2) */
  double gc_eps, gc_atol, gc_rtol; /* --eps, --atol, --rtol: 1e-6, 1e-5, 1e-3 */
  double gc_scale, gc_mean;        /* --scale, --mean: drawn inputs N(mean, scale^2): 1e-5, 0 */
  uint64_t gc_seed;                /* --seed: the generator's seed (0) */
  bool gc_set;                     /* any of them given */
  bool gc_first_order;             /* --check-grad=first_order */
  VEC(const char *) params;        /* --params FILE (.params or .npz) */
  VEC(const char *) input_bundles; /* --inputs FILE (.npz or .params) */
  const char *save_params;         /* --save-params FILE: write the bound values */
} DriverOptions;

int driver_run(DriverOptions *o);

#endif
