/* eval/main.c — eval_main: the glue between the CLI and the interpreter.
 *
 * Finds @main, binds --input files to its parameters (checking dtype and
 * shape against the parameter types before running anything), lowers the
 * module, runs it, prints the value and writes --output. Exit statuses and
 * the --output convention are documented in eval/eval.h.
 */
#include "eval/eval.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval/lower.h"
#include "eval/profile.h"
#include "eval/vm.h"
#include "ir/dims_text.h"
#include "ir/mem.h"
#include "ir/print.h"
#include "runtime/bundle.h"
#include "runtime/npy.h"
#include "runtime/value.h"

static const Type *param_type(const Var *v) {
  return type_solved(v->type ? v->type : v->annot);
}

static char *type_text(Module *m, const Type *t) {
  return t ? type_to_string(m->arena, t) : "_";
}

/* "Tensor[(2, 3), float32]" of a tensor, into buf. */
static void tensor_type_text(const Tensor *t, char *buf, size_t cap) {
  char dt[32];
  size_t n = (size_t)snprintf(buf, cap, "Tensor[");
  if (n < cap) n += strlen(dims_text(buf + n, cap - n, t->shape, t->ndim, DIMS_TUPLE));
  if (n < cap) snprintf(buf + n, cap - n, ", %s]", dtype_name(t->dtype, dt));
}

static bool tensor_fits(const Tensor *t, const Type *ty) {
  if (!ty || ty->kind == TYPE_INCOMPLETE || ty->kind == TYPE_VAR) return true;
  if (ty->kind != TYPE_TENSOR) return false;
  if (!dtype_eq(t->dtype, ty->tensor.dtype) || (uint32_t)t->ndim != ty->tensor.ndim) return false;
  for (uint32_t i = 0; i < ty->tensor.ndim; i++)
    if (ty->tensor.dims[i].kind == DIM_INT && ty->tensor.dims[i].value != t->shape[i]) return false;
  return true;
}

static void list_params(Module *m, const Function *fn, Diag *d) {
  fprintf(d->out, "note: @main takes");
  if (fn->nparams == 0) fprintf(d->out, " no parameters");
  for (uint32_t i = 0; i < fn->nparams; i++)
    fprintf(d->out, "%s %%%s: %s", i ? "," : "", var_name(fn->params[i]),
            type_text(m, param_type(fn->params[i])));
  fputc('\n', d->out);
}

/* ------------------------------------------------------------- binding
 *
 * Values for @main's parameters come from --input NAME=FILE.npy (one each)
 * and from bundles, --params FILE and --inputs FILE (runtime/bundle.h: TVM
 * .params or .npz, told apart by their bytes). Binding runs in phases so
 * every problem is reported in one go and suggestions are good: (1) read
 * every file (I/O and format errors); (2) match names exactly, checking
 * each value against its parameter's type and that no parameter is bound
 * twice; (3) report names matching no parameter, suggesting the closest
 * parameter (unbound ones first: that is usually the misspelling); (4) when
 * running, report every parameter left unbound. */

typedef struct BindEntry {
  const char *name; /* parameter name (no '%') */
  Tensor *t;        /* owned until bound */
  const char *flag; /* "--input", "--params", "--inputs" */
  const char *arg;  /* the flag's argument, for messages */
} BindEntry;

typedef VEC(BindEntry) BindEntries;

/* Index of @main's parameter `name`, or -1. */
static long param_index(const Function *fn, const char *name) {
  for (uint32_t k = 0; k < fn->nparams; k++)
    if (strcmp(var_name(fn->params[k]), name) == 0) return (long)k;
  return -1;
}

/* The parameter closest to `name` (edit distance at most a third of its
 * length, at least 1), preferring unbound ones; NULL when none is close. */
static const char *closest_param(const Function *fn, const char *name, Tensor *const *vals) {
  size_t cap = strlen(name) / 3 > 1 ? strlen(name) / 3 : 1;
  const char *best = NULL;
  size_t best_d = cap + 1;
  for (int pass = 0; pass < 2 && !best; pass++)
    for (uint32_t k = 0; k < fn->nparams; k++) {
      if (pass == 0 && vals[k]) continue;
      size_t dist = edit_distance(name, var_name(fn->params[k]), cap);
      if (dist < best_d) { best_d = dist; best = var_name(fn->params[k]); }
    }
  return best;
}

/* Phase 1: every --input file and bundle, in command-line order per flag. */
static int read_sources(Module *m, const EvalOptions *o, BindEntries *es, Diag *d) {
  int status = 0;
  for (size_t i = 0; i < o->ninputs; i++) {
    const char *spec = o->inputs[i];
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1]) {
      diag_plain(d, DIAG_ERROR, "--input expects NAME=PATH.npy, got '%s'", spec);
      status = 2;
      continue;
    }
    char err[NPY_ERR_SIZE];
    Tensor *t = npy_read_file(eq + 1, err);
    if (!t) {
      diag_plain(d, DIAG_ERROR, "%s: %s", eq + 1, err);
      status = 2;
      continue;
    }
    const char *name = arena_strndup(m->arena, spec[0] == '%' ? spec + 1 : spec,
                                     (size_t)(eq - spec) - (spec[0] == '%'));
    vec_push(*es, ((BindEntry){name, t, "--input", spec}));
  }
  for (int kind = 0; kind < 2; kind++) {
    const char *flag = kind == 0 ? "--params" : "--inputs";
    for (size_t i = 0; i < (kind == 0 ? o->nparam_files : o->ninput_files); i++) {
      const char *path = kind == 0 ? o->param_files[i] : o->input_files[i];
      TensorBundle b = {0};
      char err[BUNDLE_ERR_SIZE];
      if (!bundle_read_file(path, &b, err)) {
        diag_plain(d, DIAG_ERROR, "%s %s: %s", flag, path, err);
        status = 2;
        continue;
      }
      for (size_t j = 0; j < b.n; j++)
        vec_push(*es, ((BindEntry){arena_strdup(m->arena, b.names[j]), tensor_retain(b.tensors[j]),
                                   flag, path}));
      bundle_free(&b);
    }
  }
  return status;
}

/* --save-params: the bound values, in parameter order. */
static int save_params(const Function *fn, Tensor *const *vals, const char *path, Diag *d) {
  TensorBundle b = {0};
  for (uint32_t k = 0; k < fn->nparams; k++)
    if (vals[k]) {
      const char *name = var_name(fn->params[k]);
      bundle_add(&b, name, strlen(name), tensor_retain(vals[k]));
    }
  char err[BUNDLE_ERR_SIZE];
  bool ok = bundle_write_file(path, &b, err);
  if (!ok) diag_plain(d, DIAG_ERROR, "--save-params %s: %s", path, err);
  bundle_free(&b);
  return ok ? 0 : 2;
}

/* Binds @main's parameters from --input, --params and --inputs into vals
 * (one new reference each, NULL when unbound); every parameter must be bound
 * when `all`. Writes --save-params. Returns 0 or 2 (vals released on 2). */
static int bind_params(Module *m, const Function *fn, const EvalOptions *o, bool all,
                       Tensor **vals, Diag *d) {
  BindEntries es = {0};
  int io = read_sources(m, o, &es, d), status = io;
  const BindEntry **by = mem_calloc(fn->nparams + 1, sizeof *by);
  bool *named = mem_calloc(fn->nparams + 1, sizeof *named);
  bool *matched = mem_calloc(es.len + 1, sizeof *matched);
  /* phase 2: exact names */
  for (size_t i = 0; i < es.len; i++) {
    BindEntry *e = &es.data[i];
    long k = param_index(fn, e->name);
    if (k < 0) continue;
    matched[i] = named[k] = true;
    const Var *p = fn->params[k];
    const Type *ty = param_type(p);
    if (by[k]) {
      diag_plain(d, DIAG_ERROR, "parameter %%%s of @main is bound twice: by %s %s and by %s %s",
                 var_name(p), by[k]->flag, by[k]->arg, e->flag, e->arg);
      status = 2;
    } else if (!tensor_fits(e->t, ty)) {
      char have[512];
      tensor_type_text(e->t, have, sizeof have);
      if (strcmp(e->flag, "--input") == 0)
        diag_plain(d, DIAG_ERROR, "input %%%s: %s holds %s but the parameter has type %s", var_name(p),
                   strchr(e->arg, '=') + 1, have, type_text(m, ty));
      else
        diag_plain(d, DIAG_ERROR, "%s %s: '%s' holds %s but the parameter %%%s has type %s", e->flag,
                   e->arg, e->name, have, var_name(p), type_text(m, ty));
      status = 2;
    } else {
      by[k] = e;
      vals[k] = e->t;
      e->t = NULL;
    }
  }
  /* phase 3: names that match no parameter */
  bool listed = false;
  for (size_t i = 0; i < es.len; i++) {
    if (matched[i]) continue;
    const BindEntry *e = &es.data[i];
    const char *near = closest_param(fn, e->name, vals);
    char hint[160] = "";
    if (near) snprintf(hint, sizeof hint, " (did you mean %%%.100s?)", near);
    if (strcmp(e->flag, "--input") == 0)
      diag_plain(d, DIAG_ERROR, "--input %s: @main has no parameter %%%s%s", e->arg, e->name, hint);
    else
      diag_plain(d, DIAG_ERROR, "%s %s: '%s' is not a parameter of @main%s", e->flag, e->arg,
                 e->name, hint);
    status = 2;
    if (!listed && !d->suppressed) list_params(m, fn, d);
    listed = true;
  }
  /* phase 4: parameters no name matched (not after an unreadable file: noise) */
  bool bundles = o->nparam_files || o->ninput_files;
  for (uint32_t k = 0; k < fn->nparams && all && io == 0; k++) {
    if (named[k]) continue;
    const char *name = var_name(fn->params[k]);
    if (bundles)
      diag_plain(d, DIAG_ERROR,
                 "missing --input for parameter %%%s of @main (no --params or --inputs file holds '%s')",
                 name, name);
    else
      diag_plain(d, DIAG_ERROR, "missing --input for parameter %%%s of @main", name);
    status = 2;
    if (!listed && !d->suppressed) list_params(m, fn, d);
    listed = true;
  }
  if (status == 0 && o->save_params) status = save_params(fn, vals, o->save_params, d);
  for (size_t i = 0; i < es.len; i++) tensor_release(es.data[i].t);
  vec_free(es);
  mem_free(by);
  mem_free(named);
  mem_free(matched);
  if (status != 0)
    for (uint32_t k = 0; k < fn->nparams; k++) {
      tensor_release(vals[k]);
      vals[k] = NULL;
    }
  return status;
}

static const Function *find_main(Module *m) {
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (strcmp(m->defs[i]->name, "main") == 0) return m->defs[i]->fn;
  return NULL;
}

int eval_bind_only(Module *m, const EvalOptions *o, Diag *d) {
  const Function *fn = find_main(m);
  if (!fn) {
    diag_plain(d, DIAG_ERROR, "the module has no @main function to bind parameters of");
    return 2;
  }
  Tensor **vals = mem_calloc(fn->nparams + 1, sizeof *vals);
  int status = bind_params(m, fn, o, false, vals, d);
  for (uint32_t k = 0; k < fn->nparams; k++) tensor_release(vals[k]);
  mem_free(vals);
  return status;
}

typedef VEC(Tensor *) TensorList;

/* The tensor leaves of a (nested) tuple, depth-first: (R, (g1, g2)) gives
 * R, g1, g2 (arr_0, arr_1, arr_2 in the .npz). False if a leaf is not a
 * tensor. Iterative (an explicit stack of pending values). */
static bool flatten_tensors(const Value *v, TensorList *out) {
  VEC(const Value *) stack = {0};
  vec_push(stack, v);
  bool ok = true;
  while (stack.len && ok) {
    const Value *x = stack.data[--stack.len];
    ValueKind k = value_kind(*x);
    if (k == VK_TUPLE) {
      TupleObj *tu = value_tuple(*x);
      for (uint32_t i = tu->n; i-- > 0;) vec_push(stack, &tu->f[i]);
    } else if (k == VK_SCALAR || k == VK_TENSOR) {
      Tensor *t = value_to_tensor(x);
      if (!t) ok = false;
      else vec_push(*out, t);
    } else {
      ok = false;
    }
  }
  vec_free(stack);
  return ok;
}

static int write_output(const char *path, const Value *v, Diag *d) {
  char err[NPY_ERR_SIZE];
  ValueKind k = value_kind(*v);
  if (k == VK_SCALAR || k == VK_TENSOR) {
    Tensor *t = value_to_tensor(v);
    bool ok = t && npy_write_file(path, t, err);
    tensor_release(t);
    if (!ok) {
      diag_plain(d, DIAG_ERROR, "cannot write %s: %s", path, t ? err : "out of memory");
      return 2;
    }
    return 0;
  }
  if (k == VK_TUPLE) {
    TensorList ts = {0};
    bool ok = flatten_tensors(v, &ts);
    if (!ok) {
      diag_plain(d, DIAG_ERROR, "--output: the result tuple holds a value that is not a tensor (or a tuple of tensors)");
    } else if (!npz_write_file(path, ts.data, NULL, (uint32_t)ts.len, err)) {
      diag_plain(d, DIAG_ERROR, "cannot write %s: %s", path, err);
      ok = false;
    }
    for (size_t i = 0; i < ts.len; i++) tensor_release(ts.data[i]);
    vec_free(ts);
    return ok ? 0 : 2;
  }
  char buf[96];
  diag_plain(d, DIAG_ERROR, "--output: cannot write a %s as .npy", value_describe(v, buf, sizeof buf));
  return 2;
}

static VmLimits limits_from_env(void) {
  VmLimits l = {0, 0, 0};
  const char *s = getenv("RELAYC_MAX_DEPTH");
  if (s && *s) {
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (*end == 0 && n > 0) l.max_frames = n;
  }
  return l;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t median_u64(uint64_t *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* CPU time of the whole process (every thread), in ns. */
static uint64_t process_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* "Runs: N, first X ms, then median Y ms, min Z ms, cpu median C ms": the first
 * (cold) run, then the median and minimum wall time of the later (warm) ones and
 * the median CPU time (user + system, all threads) of those. Sorts the arrays. */
static void report_runs(uint64_t *ns, uint64_t *cpu, int n) {
  uint64_t first = ns[0], median = median_u64(ns + 1, n - 1), cmed = median_u64(cpu + 1, n - 1);
  fprintf(stderr, "Runs: %d, first %.3f ms, then median %.3f ms, min %.3f ms, cpu median %.3f ms\n", n,
          (double)first / 1e6, (double)median / 1e6, (double)ns[1] / 1e6, (double)cmed / 1e6);
  fflush(stderr);
}

/* Evaluates entry --repeat times (args consumed by the last run; earlier runs
 * get retained copies). The --profile table covers the last run only, so it
 * shows a warm pass when N > 1. Stops at the first failing run. */
static int run_repeated(const Program *p, const Code *entry, Value *args, uint32_t nargs,
                        Value *result, Diag *d, const VmLimits *lim, const EvalOptions *o) {
  int runs = o->repeat > 1 ? o->repeat : 1, status = 0;
  uint64_t *times = mem_calloc((size_t)runs, sizeof *times), *cpu = mem_calloc((size_t)runs, sizeof *cpu);
  Value *copy = mem_calloc(nargs + 1, sizeof *copy);
  for (int r = 0; r < runs && status == 0; r++) {
    bool last = r == runs - 1;
    Value *use = args;
    if (!last) {
      for (uint32_t i = 0; i < nargs; i++) copy[i] = value_retain(args[i]);
      use = copy;
    }
    if (o->profile) profile_enable(); /* clears the previous run's table */
    value_release(*result);
    *result = value_none();
    uint64_t t0 = profile_now_ns(), c0 = process_cpu_ns();
    if (o->profile) profile_run_begin();
    status = vm_run(p, entry, use, nargs, result, d, lim);
    if (o->profile) profile_run_end();
    times[r] = profile_now_ns() - t0;
    cpu[r] = process_cpu_ns() - c0;
    if (status != 0 && !last)
      for (uint32_t i = 0; i < nargs; i++) value_release(args[i]);
  }
  if (runs > 1 && status == 0) report_runs(times, cpu, runs);
  mem_free(copy);
  mem_free(times);
  mem_free(cpu);
  return status;
}

int eval_main(Module *m, const EvalOptions *o, Diag *d) {
  const Function *fn = NULL;
  if (!o->expr) {
    fn = find_main(m);
    if (!fn) {
      diag_plain(d, DIAG_ERROR, "the module has no @main function to run");
      return 2;
    }
  }
  uint32_t nparams = fn ? fn->nparams : 0;
  Value *args = mem_calloc(nparams + 1, sizeof *args);
  Tensor **vals = mem_calloc(nparams + 1, sizeof *vals);
  int status = fn ? bind_params(m, fn, o, true, vals, d) : 0;
  for (uint32_t k = 0; k < nparams && status == 0; k++) args[k] = value_from_tensor(vals[k]);
  mem_free(vals);
  Program *p = NULL;
  if (status == 0) {
    tensor_heap_keep_freed();
    p = o->expr ? lower_expression(m, d) : lower_module(m, d);
    if (!p) status = 3;
  }
  if (status == 0) {
    const char *dump = getenv("RELAYC_DUMP_CODE");
    if (dump && *dump == '1') program_dump(stderr, p);
    const Code *entry = o->expr ? p->entry : p->codes[program_global(p, "main")];
    VmLimits lim = limits_from_env();
    Value result = value_none();
    status = run_repeated(p, entry, args, nparams, &result, d, &lim, o);
    nparams = 0; /* consumed */
    if (status == 0) {
      if (o->json) value_print_json(stdout, &result);
      else value_print(stdout, &result);
      fputc('\n', stdout);
      fflush(stdout);
      if (o->output) status = write_output(o->output, &result, d);
    }
    value_release(result);
    if (o->profile) {
      profile_report(stderr);
      profile_disable();
    }
  }
  for (uint32_t i = 0; i < nparams; i++) value_release(args[i]);
  mem_free(args);
  value_clear_refs();
  program_free(p);
  value_heap_shutdown();
  return status;
}
