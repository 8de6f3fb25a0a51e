/* eval/eval.h — `relayc --run`: lower, bind inputs, run @main, print / write the result.
 *
 * eval_main is what cli/driver.c calls after parse + resolve + infer and
 * the pass pipeline (which is where every program rewrite happens:
 * `--run` runs relayc's inference rewrites there, transform/conv_epilogue.c;
 * eval/ lowers the module it is given as it is). It takes its own options
 * (EvalOptions) and returns the process exit status:
 *   0  the value was printed on stdout (JSON with --json);
 *   2  usage or I/O: no @main, a malformed/unknown/missing --input, a name
 *      in a --params/--inputs file that is no parameter of @main (with "did
 *      you mean" and a list of every parameter of @main with its type), a
 *      parameter bound twice or left unbound, an unreadable or corrupt .npy,
 *      .params or .npz file, a value whose dtype/shape differs from the
 *      parameter's type (both are named), a --save-params or --output file
 *      that cannot be written;
 *   3  a run-time error (reported with its span and a Relay backtrace).
 *
 * --output PATH: a tensor (or scalar) result is written as .npy; a tuple,
 * nested or not, whose leaves are all tensors is written as an .npz archive
 * of its leaves flattened depth-first (members arr_0, arr_1, ... like
 * numpy.savez: a gradient result (R, (g1, g2)) gives arr_0 = R, arr_1 = g1,
 * arr_2 = g2) to PATH as given; anything else is an error.
 *
 * Limits: the environment variable RELAYC_MAX_DEPTH (a positive integer)
 * sets the deepest Relay call nesting before "stack overflow" (default
 * 10^7); RELAYC_DUMP_CODE=1 prints the bytecode on stderr.
 *
 * The --prelude library (stdlib/prelude.relay, compiled into the binary):
 * the driver calls eval_prelude_merge(m, &prelude, d) after parsing the user
 * module and BEFORE resolve_module, and eval_prelude_free(prelude) after
 * module_free(m).
 */
#ifndef RELAYC_EVAL_EVAL_H
#define RELAYC_EVAL_EVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ast.h"
#include "ir/diag.h"

/* What `--run` was asked for (the driver fills it from the command line). */
typedef struct EvalOptions {
  const char *const *inputs; /* --input NAME=PATH, ninputs of them */
  size_t ninputs;
  const char *output;        /* --output PATH, or NULL */
  bool json;                 /* --json: print the value as JSON */
  bool profile;              /* --profile: per-operator times on stderr */
  bool expr;                 /* --expr: run m->expr instead of @main */
  int repeat;                /* --repeat: evaluate this many times (0 or 1 = once) */
  const char *const *param_files; /* --params FILE (.params or .npz), nparam_files of them */
  size_t nparam_files;
  const char *const *input_files; /* --inputs FILE, ninput_files of them */
  size_t ninput_files;
  const char *save_params;        /* --save-params FILE: write the bound values, or NULL */
} EvalOptions;

int eval_main(Module *m, const EvalOptions *o, Diag *d);

/* Without --run: binds @main's parameters from --input, --params and
 * --inputs exactly as eval_main would (same checks and messages) but does
 * not require every parameter to be bound and runs nothing; writes
 * --save-params. So `relayc net.relay --params w.npz` checks a weight file
 * against @main's types and `... --save-params w.params` converts it.
 * Returns 0 or 2. */
int eval_bind_only(Module *m, const EvalOptions *o, Diag *d);

/* The text of stdlib/prelude.relay as compiled in. */
const char *eval_prelude_text(size_t *len);
/* Parses the prelude and prepends its type definitions and functions to the
 * parsed, not yet resolved module m (ids renumbered to stay unique). On
 * success *prelude owns the prelude's nodes: free it after m. False (with a
 * diagnostic) if the prelude does not parse. */
bool eval_prelude_merge(Module *m, Module **prelude, Diag *d);
/* Frees the prelude module and its Source (after the merged module). */
void eval_prelude_free(Module *prelude);

#endif
