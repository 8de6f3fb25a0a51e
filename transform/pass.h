/* transform/pass.h — the pass table, pass options and the pipeline runner.
 *
 * Every pass is one row of transform/passes.def: name, kind, opt level,
 * typed options with defaults, description, and an entry point
 *
 *     bool pass_<ID>(PassCtx *c);    // rewrite c->m in place; false = error reported
 *
 * defined in the pass's own file (found through a weak reference: a row
 * whose function nobody defined yet is listed as "not implemented").
 * A pass receives a TYPED module (every Expr.type / Var.type set) and may
 * leave new nodes untyped: the runner re-types the module after every
 * pass, and a module that no longer type-checks is reported as an internal
 * error naming the pass — never printed or run. The re-typing is
 * incremental (sema/infer.h infer_module_incremental): globals the pass did
 * not change are not visited, and in the others the nodes it kept are typed
 * leaves; so a pass must not mutate a typed node in place (rewrite through
 * new nodes: build_copy clears the type) — or, if it does, declare
 * PASS_RETYPE_FULL(ID) in passes.def to be re-typed from scratch.
 * RELAYC_VERIFY_RETYPE=1 checks every incremental re-typing against a full
 * one (the sweeps and the pass fuzzer turn it on); RELAYC_FULL_RETYPE=1
 * re-types from scratch after every pass. A pass never prints to
 * stdout and never exits.
 *
 *     PassPipeline pl;
 *     pass_pipeline_init(&pl);
 *     if (!pass_pipeline_parse(&pl, "ToANormalForm,FoldConstant", stderr)) ... exit 2
 *     pass_pipeline_add_opt_level(&pl, 3);
 *     int st = pass_pipeline_run(&pl, m, &diag, &(PassRunOptions){.time_passes = stderr});
 *     pass_pipeline_fini(&pl);
 */
#ifndef RELAYC_TRANSFORM_PASS_H
#define RELAYC_TRANSFORM_PASS_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/ast.h"
#include "ir/mem.h"

typedef enum {
  PK_FUNCTION, /* rewrites each global function on its own (skips Compiler/Extern/SkipOptimization) */
  PK_MODULE,   /* sees the whole module, may add or remove globals */
  PK_SEQUENCE, /* runs other passes */
  PK_MAIN,     /* applies to @main */
} PassKind;

typedef enum {
  PO_BOOL,        /* True/False/1/0 */
  PO_INT,         /* an integer */
  PO_STRING,      /* "text" or a bare identifier */
  PO_STRING_LIST, /* ["a", "b"] (a single string is a one-element list) */
} PassOptType;

typedef struct PassOption {
  const char *name;
  PassOptType type;
  const char *default_text; /* canonical attribute text */
  const char *help;
} PassOption;

typedef struct PassCtx PassCtx;
typedef bool (*PassFn)(PassCtx *c);

typedef struct PassDef {
  int id;                  /* PASS_<ID> */
  const char *name;        /* TVM's API name: "ToANormalForm" */
  const char *alias;       /* TVM's registered name when different, or NULL */
  PassKind kind;
  int level;               /* registered opt level (filters only inside -O pipelines) */
  const PassOption *opts;
  uint32_t nopts;
  const char *description;
  PassFn run;              /* NULL: not implemented yet */
} PassDef;

enum {
#define PASS(id, name, kind, level, opts, alias, desc) PASS_##id,
#define PASS_OPTS(tag, ...)
#include "transform/passes.def"
#undef PASS
#undef PASS_OPTS
  PASS_COUNT
};

/* What a pass sees. */
struct PassCtx {
  Module *m;
  Diag *d;
  const PassDef *def;
  AttrValue *const *opts; /* one per option of def, the given value or the default */
  int opt_level;          /* the -O level of the pipeline (2 when run directly, like TVM) */
  const struct PassRunOptions *ro;
};

/* The entry points, one per row (defined in the pass's own file; a row
 * nobody defined yet is NULL through a weak reference in pass.c). */
#define PASS(id, name, kind, level, opts, alias, desc) bool pass_##id(PassCtx *c);
#define PASS_OPTS(tag, ...)
#include "transform/passes.def"
#undef PASS
#undef PASS_OPTS

/* Option values by name (the name must be one of the pass's options). */
bool pass_opt_bool(const PassCtx *c, const char *name);
int64_t pass_opt_int(const PassCtx *c, const char *name);
const char *pass_opt_string(const PassCtx *c, const char *name); /* "" when unset */
const AttrValue *pass_opt(const PassCtx *c, const char *name);

/* Runs `f` on every global function a function pass may touch (skipping those
 * marked Compiler/Extern/SkipOptimization, spec/passes.md §1.1). False if any
 * call returned false. A global whose Function.type `f` cleared (its body was
 * rewritten) gets its old signature back until the runner re-types the
 * module, so the later globals' infer_untyped can still type calls of it. */
bool pass_for_each_function(PassCtx *c, bool (*f)(PassCtx *c, GlobalDef *g));
/* Runs another pass (default options) from inside a pass, then re-types the
 * module; for sequences like FoldScaleAxis. False on error. */
bool pass_run_nested(PassCtx *c, int pass_id);
/* Re-runs type inference on c->m (after infer_clear); false (with the errors
 * reported as an internal error of this pass) if it fails. For passes that
 * need the types of the nodes they just built. */
bool pass_retype(PassCtx *c);

/* ---- the table ----------------------------------------------------------- */
const PassDef *pass_get(int id);
/* The pass named `name` (API or registered name; case, '-', '_' ignored), or NULL. */
const PassDef *pass_lookup(const char *name);
/* Closest pass name for "did you mean", or NULL. */
const char *pass_suggest(const char *name);
/* --list-passes: name, options with defaults, description. */
void pass_list(FILE *out);

/* ---- pipelines ----------------------------------------------------------- */
typedef struct PassInvocation {
  const PassDef *def;
  AttrValue **opts; /* def->nopts values */
} PassInvocation;

typedef struct PassPipeline {
  VEC(PassInvocation) items;
  Module *arena;    /* holds parsed option values */
  int opt_level;    /* the last -O level added, or 2 */
} PassPipeline;

typedef struct PassRunOptions {
  FILE *time_passes; /* --time-passes: per-pass report here, or NULL */
  /* Skip the re-typing after a pass that left every global and function body
   * pointer as it was (for pipelines of passes that only rewrite through the
   * Rewriter, e.g. --run's defaults: they never change a module in place). */
  bool retype_if_changed;
  /* After each incremental re-typing, re-infer the module from scratch and
   * report any node whose type differs as an internal error of the pass (also
   * turned on by the environment variable RELAYC_VERIFY_RETYPE=1). */
  bool verify_retype;
} PassRunOptions;

void pass_pipeline_init(PassPipeline *pl);
void pass_pipeline_fini(PassPipeline *pl);
/* Appends `Spec[,Spec...]` (Spec = Name or Name(key=value, ...)). On error
 * writes a message (with "did you mean") to err and returns false. */
bool pass_pipeline_parse(PassPipeline *pl, const char *text, FILE *err);
/* Appends TVM's target-independent build pipeline for opt level 0..3
 * (spec/passes.md §10). */
void pass_pipeline_add_opt_level(PassPipeline *pl, int level);
/* Appends relayc's own inference rewrites that `relayc --run` applies after
 * the user's passes (unless -O0): DefuseOps (relayc's kernels choose their
 * own grouping), FoldBatchNormIntoConv, FuseConvEpilogue
 * (transform/conv_epilogue.c). */
void pass_pipeline_add_run_defaults(PassPipeline *pl);
/* Runs the pipeline on a typed module. Returns 0, or 1 after reporting an
 * error (a pass failed, or its output does not type-check). */
int pass_pipeline_run(const PassPipeline *pl, Module *m, Diag *d, const PassRunOptions *ro);

#endif
