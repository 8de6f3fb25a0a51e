/* analysis/stats.c — `relayc --stats` (see stats.h).
 *
 * One pass in post-order (analysis/common.h) over @main's body and the body
 * of every global it reaches (each once: the figures are static, per call
 * site) gathers everything; sizes come from the inferred types only, so the module needs
 * no weights (parameters may stand for them, constants are counted by
 * their stored size). Byte counts use the in-memory element size (bool = 1
 * byte). The largest intermediate is the first, in the source text, of the
 * largest call results (a tuple result counts field by field). Operator rows
 * are sorted by count, then name, so the output is stable.
 */
#include "analysis/stats.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/common.h"
#include "ir/json.h"
#include "ir/print.h"
#include "ir/ptrmap.h"
#include "ops/macs/mac.h"
#include "ops/registry.h"

#define UNKNOWN INT64_C(-1)

typedef struct OpRow {
  int32_t id;
  int64_t calls;
  int64_t macs;     /* summed over calls with a known count */
  int64_t unknown;  /* calls whose MAC count is not known */
} OpRow;

typedef struct Sizes {
  int64_t count, elements, bytes;
  int64_t unknown; /* items whose size is not static */
} Sizes;

typedef struct Stats {
  OpRow *ops;       /* by operator id */
  uint32_t nops;
  int64_t op_calls, fn_calls;
  int64_t globals;  /* other globals reached from @main, counted once each */
  Sizes params, consts;
  int64_t macs, mac_unknown;
  /* the largest call result */
  const Type *big;
  int64_t big_bytes, big_elements;
  const Expr *big_call;
} Stats;

static int64_t add_sat(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Elements and bytes of a static tensor type; false otherwise. */
static bool tensor_size(const Type *t, int64_t *elements, int64_t *bytes) {
  t = type_solved(t);
  int64_t n = mac_elements(t);
  if (n < 0) return false;
  *elements = n;
  *bytes = mac_mul(n, (int64_t)dtype_size(t->tensor.dtype));
  return *bytes >= 0;
}

/* A parameter: tensors, and tuples of them, have a size. */
static bool value_size(const Type *t, int64_t *elements, int64_t *bytes, int depth) {
  t = type_solved(t);
  if (!t || depth > 64) return false;
  if (t->kind == TYPE_TENSOR) return tensor_size(t, elements, bytes);
  if (t->kind != TYPE_TUPLE) return false;
  *elements = *bytes = 0;
  for (uint32_t i = 0; i < t->tuple.n; i++) {
    int64_t e, b;
    if (!value_size(t->tuple.fields[i], &e, &b, depth + 1)) return false;
    *elements = add_sat(*elements, e);
    *bytes = add_sat(*bytes, b);
  }
  return true;
}

static void consider_result(Stats *s, const Expr *call, const Type *t) {
  int64_t e, b;
  if (!tensor_size(t, &e, &b) || b < s->big_bytes) return;
  if (s->big && b == s->big_bytes && call->span.lo >= s->big_call->span.lo) return; /* ties: the first in the text */
  s->big = type_solved(t);
  s->big_bytes = b;
  s->big_elements = e;
  s->big_call = call;
}

static void count_call(Stats *s, Expr *e) {
  const Expr *callee = e->call.fn;
  if (callee && callee->kind == EXPR_OP && callee->op.id >= 0 && (uint32_t)callee->op.id < s->nops) {
    OpRow *r = &s->ops[callee->op.id];
    r->calls++;
    s->op_calls++;
    if (mac_has_rule(e)) {
      int64_t n = mac_count(e);
      if (n < 0) {
        r->unknown++;
        s->mac_unknown++;
      } else {
        r->macs = add_sat(r->macs, n);
        s->macs = add_sat(s->macs, n);
      }
    }
  } else if (callee && callee->kind != EXPR_CTOR) {
    s->fn_calls++;
  }
  const Type *t = type_solved(e->type);
  if (t && t->kind == TYPE_TUPLE)
    for (uint32_t i = 0; i < t->tuple.n; i++) consider_result(s, e, t->tuple.fields[i]);
  else
    consider_result(s, e, t);
}

static void count_const(Stats *s, PtrMap *seen, const ConstTensor *c) {
  if (ptrmap_get(seen, c, NULL)) return;
  ptrmap_put(seen, c, 1);
  int64_t n = 1;
  for (int32_t k = 0; k < c->ndim; k++) n = mac_mul(n, c->shape[k]);
  s->consts.count++;
  s->consts.elements = add_sat(s->consts.elements, n < 0 ? 0 : n);
  s->consts.bytes = add_sat(s->consts.bytes, (int64_t)c->nbytes);
}

static void count_params(Stats *s, Var *const *params, uint32_t nparams) {
  for (uint32_t i = 0; i < nparams; i++) {
    int64_t e, b;
    s->params.count++;
    if (value_size(params[i]->type ? params[i]->type : params[i]->annot, &e, &b, 0)) {
      s->params.elements = add_sat(s->params.elements, e);
      s->params.bytes = add_sat(s->params.bytes, b);
    } else {
      s->params.unknown++;
    }
  }
}

/* Counts the body of @main (or the expression) and of every global it
 * reaches, each global once: the figures are static, per call site, not
 * per evaluation (a recursive loop's body counts once). */
static void gather(Stats *s, Var *const *params, uint32_t nparams, Expr *body) {
  s->nops = op_count();
  s->ops = mem_calloc(s->nops ? s->nops : 1, sizeof *s->ops);
  for (uint32_t i = 0; i < s->nops; i++) s->ops[i].id = (int32_t)i;
  count_params(s, params, nparams);
  PtrMap consts = {0}, globals = {0};
  VEC(Expr *) todo = {0};
  vec_push(todo, body);
  for (size_t t = 0; t < todo.len; t++) {
    AnList order = {0};
    an_postorder(todo.data[t], &order);
    for (size_t i = 0; i < order.len; i++) {
      Expr *e = order.data[i];
      if (e->kind == EXPR_CALL) {
        count_call(s, e);
      } else if (e->kind == EXPR_CONST) {
        count_const(s, &consts, e->constant);
      } else if (e->kind == EXPR_GLOBAL && e->global.def && e->global.def->fn &&
                 !ptrmap_get(&globals, e->global.def, NULL)) {
        ptrmap_put(&globals, e->global.def, 1);
        if (e->global.def->fn->body != body) {
          s->globals++;
          vec_push(todo, e->global.def->fn->body);
        }
      }
    }
    vec_free(order);
  }
  vec_free(todo);
  ptrmap_free(&consts);
  ptrmap_free(&globals);
}

static int row_cmp(const void *a, const void *b) {
  const OpRow *x = a, *y = b;
  if (x->calls != y->calls) return x->calls > y->calls ? -1 : 1;
  return strcmp(op_get(x->id)->name, op_get(y->id)->name);
}

static int mac_row_cmp(const void *a, const void *b) {
  const OpRow *x = a, *y = b;
  if (x->macs != y->macs) return x->macs > y->macs ? -1 : 1;
  return strcmp(op_get(x->id)->name, op_get(y->id)->name);
}

/* 4089184256 -> "4,089,184,256" */
static const char *grouped(int64_t v, char *buf) {
  char digits[32];
  int n = snprintf(digits, sizeof digits, "%" PRId64, v), o = 0;
  for (int i = 0; i < n; i++) {
    if (i && digits[i - 1] != '-' && (n - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = 0;
  return buf;
}

/* "4.09 G" style, decimal prefixes (TVM's GMAC figures are 10^9). */
static const char *scaled(int64_t v, char *buf) {
  static const char *const unit[] = {"", " k", " M", " G", " T", " P", " E"};
  double x = (double)v;
  int u = 0;
  while (x >= 1000 && u < 6) x /= 1000, u++;
  if (u == 0) snprintf(buf, 32, "%" PRId64, v);
  else snprintf(buf, 32, "%.2f%s", x, unit[u]);
  return buf;
}

/* The name of what a call calls, for the largest-intermediate line. */
static const char *callee_name(const Expr *call, char *buf, size_t cap) {
  const Expr *f = call->call.fn;
  if (f->kind == EXPR_OP) return op_get(f->op.id) ? op_get(f->op.id)->name : f->op.name;
  if (f->kind == EXPR_GLOBAL) snprintf(buf, cap, "@%s", f->global.name);
  else if (f->kind == EXPR_CTOR) snprintf(buf, cap, "%s", f->ctor.ctor->name);
  else if (f->kind == EXPR_VAR) snprintf(buf, cap, "%%%s", f->var.var ? var_name(f->var.var) : f->var.name);
  else snprintf(buf, cap, "a function");
  return buf;
}

static bool call_position(Module *m, const Expr *call, uint32_t *line, uint32_t *col) {
  if (!m->src || call->span.lo >= DIAG_EXTRA_BASE || call->span.lo > m->src->len) return false;
  source_line_col(m->src, call->span.lo, line, col);
  return true;
}

static void print_sizes(FILE *out, const char *what, const Sizes *z) {
  char a[40], b[40];
  fprintf(out, "%s: %" PRId64, what, z->count);
  if (z->count)
    fprintf(out, " (%s element%s, %s byte%s)", grouped(z->elements, a), z->elements == 1 ? "" : "s",
            grouped(z->bytes, b), z->bytes == 1 ? "" : "s");
  if (z->unknown) fprintf(out, ", %" PRId64 " of unknown size", z->unknown);
  fputc('\n', out);
}

static void print_text(FILE *out, Module *m, Stats *s) {
  char a[40], b[40], name[256];
  fprintf(out, "%s of %s", m->expr ? "the expression" : "@main", m->src ? m->src->name : "<module>");
  if (s->globals)
    fprintf(out, ", with the %" PRId64 " global%s it calls (each counted once)", s->globals, s->globals == 1 ? "" : "s");
  fputc('\n', out);
  qsort(s->ops, s->nops, sizeof *s->ops, row_cmp);
  uint32_t distinct = 0;
  while (distinct < s->nops && s->ops[distinct].calls) distinct++;
  fprintf(out, "operator calls: %s (%u operator%s)\n", grouped(s->op_calls, a), distinct, distinct == 1 ? "" : "s");
  for (uint32_t i = 0; i < distinct; i++)
    fprintf(out, "  %-28s %12s\n", op_get(s->ops[i].id)->name, grouped(s->ops[i].calls, a));
  if (s->fn_calls) fprintf(out, "function calls: %s\n", grouped(s->fn_calls, a));
  print_sizes(out, "parameters", &s->params);
  print_sizes(out, "constants", &s->consts);
  fprintf(out, "multiply-accumulates: %s", grouped(s->macs, a));
  if (s->macs >= 1000) fprintf(out, " (%sMAC)", scaled(s->macs, b));
  if (s->mac_unknown)
    fprintf(out, ", plus %" PRId64 " call%s of unknown size", s->mac_unknown, s->mac_unknown == 1 ? "" : "s");
  fputc('\n', out);
  qsort(s->ops, s->nops, sizeof *s->ops, mac_row_cmp);
  for (uint32_t i = 0; i < s->nops && (s->ops[i].macs || s->ops[i].unknown); i++)
    fprintf(out, "  %-28s %18s\n", op_get(s->ops[i].id)->name, grouped(s->ops[i].macs, a));
  if (!s->big) {
    fputs("largest intermediate: none of static size\n", out);
    return;
  }
  uint32_t line, col;
  fprintf(out, "largest intermediate: %s, %s bytes, from %s", type_to_string(m->arena, s->big),
          grouped(s->big_bytes, a), callee_name(s->big_call, name, sizeof name));
  if (call_position(m, s->big_call, &line, &col)) fprintf(out, " at %s:%u:%u", m->src->name, line, col);
  fputc('\n', out);
}

static void json_sizes(FILE *out, const char *key, const Sizes *z) {
  fprintf(out, ", \"%s\": {\"count\": %" PRId64 ", \"elements\": %" PRId64 ", \"bytes\": %" PRId64
               ", \"unknown\": %" PRId64 "}",
          key, z->count, z->elements, z->bytes, z->unknown);
}

static void print_json(FILE *out, Module *m, Stats *s) {
  char name[256], dt[32];
  fputs("{\"file\": ", out);
  json_cstring(out, m->src ? m->src->name : NULL);
  fputs(m->expr ? ", \"function\": null" : ", \"function\": \"main\"", out);
  fprintf(out, ", \"globals_reached\": %" PRId64, s->globals);
  qsort(s->ops, s->nops, sizeof *s->ops, row_cmp);
  fprintf(out, ", \"operator_calls\": %" PRId64 ", \"operators\": {", s->op_calls);
  for (uint32_t i = 0; i < s->nops && s->ops[i].calls; i++) {
    if (i) fputs(", ", out);
    json_cstring(out, op_get(s->ops[i].id)->name);
    fprintf(out, ": %" PRId64, s->ops[i].calls);
  }
  fprintf(out, "}, \"function_calls\": %" PRId64, s->fn_calls);
  json_sizes(out, "parameters", &s->params);
  json_sizes(out, "constants", &s->consts);
  fprintf(out, ", \"macs\": {\"total\": %" PRId64 ", \"unknown_calls\": %" PRId64 ", \"by_operator\": {", s->macs,
          s->mac_unknown);
  qsort(s->ops, s->nops, sizeof *s->ops, mac_row_cmp);
  for (uint32_t i = 0; i < s->nops && (s->ops[i].macs || s->ops[i].unknown); i++) {
    if (i) fputs(", ", out);
    json_cstring(out, op_get(s->ops[i].id)->name);
    fprintf(out, ": %" PRId64, s->ops[i].macs);
  }
  fputs("}}, \"largest_intermediate\": ", out);
  if (!s->big) {
    fputs("null}\n", out);
    return;
  }
  fputs("{\"type\": ", out);
  json_cstring(out, type_to_string(m->arena, s->big));
  fputs(", \"shape\": [", out);
  for (uint32_t i = 0; i < s->big->tensor.ndim; i++)
    fprintf(out, "%s%" PRId64, i ? ", " : "", s->big->tensor.dims[i].value);
  fprintf(out, "], \"dtype\": \"%s\", \"elements\": %" PRId64 ", \"bytes\": %" PRId64 ", \"operator\": ",
          dtype_name(s->big->tensor.dtype, dt), s->big_elements, s->big_bytes);
  json_cstring(out, callee_name(s->big_call, name, sizeof name));
  uint32_t line, col;
  if (call_position(m, s->big_call, &line, &col)) fprintf(out, ", \"line\": %u, \"column\": %u", line, col);
  else fputs(", \"line\": null, \"column\": null", out);
  fputs("}}\n", out);
}

int stats_report(FILE *out, Module *m, bool json, Diag *d) {
  const Function *fn = m->expr ? NULL : an_find_def(m, "main");
  if (!fn && !m->expr) {
    diag_plain(d, DIAG_ERROR, "--stats: the module has no @main function");
    return 2;
  }
  Stats s = {0};
  if (fn) gather(&s, fn->params, fn->nparams, fn->body);
  else gather(&s, NULL, 0, m->expr);
  if (json) print_json(out, m, &s);
  else print_text(out, m, &s);
  mem_free(s.ops);
  return 0;
}
