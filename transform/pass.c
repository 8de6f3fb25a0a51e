/* transform/pass.c — the pass table, option parsing and the pipeline runner
 * (see pass.h).
 *
 * passes.def is expanded three times: option arrays, weak entry points, and
 * the table. Option values are parsed once, when the command line is read,
 * into the pipeline's own arena, and type-checked against the option's type
 * there (so a mistyped option is a usage error, exit 2, before any file is
 * read). The runner re-types the module after every pass: that is both the
 * contract (passes may leave new nodes untyped) and the verifier (LLVM's
 * -verify-each): a pass whose output does not type-check is reported as an
 * internal error naming the pass, and so is a changed global that uses a
 * variable nothing in it binds (check_no_free_vars).
 */
#include "transform/pass.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/attrs.h"
#include "ir/prefault.h"
#include "ir/print.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"
#include "sema/infer.h"
#include "sema/typeof.h"
#include "transform/rewrite.h"

/* ------------------------------------------------------------------ table */

#define O(name, type, dflt, help) {#name, type, dflt, help},
#define PASS_OPTS(tag, ...) static const PassOption popts_##tag[] = {__VA_ARGS__{NULL, PO_BOOL, NULL, NULL}};
#define PASS(id, name, kind, level, opts, alias, desc)
#include "transform/passes.def"
#undef PASS
#undef PASS_OPTS
#undef O

#define POPTS_LEN(tag) ((uint32_t)(sizeof popts_##tag / sizeof popts_##tag[0] - 1))

#define PASS_OPTS(tag, ...)
#define PASS(id, name, kind, level, opts, alias, desc) bool pass_##id(PassCtx *c) __attribute__((weak));
#include "transform/passes.def"
#undef PASS

static const PassDef pass_table[PASS_COUNT] = {
#define PASS(id, name, kind, level, opts, alias, desc) \
  {PASS_##id, name, alias, kind, level, popts_##opts, POPTS_LEN(opts), desc, pass_##id},
#include "transform/passes.def"
#undef PASS
};
#undef PASS_OPTS

const PassDef *pass_get(int id) { return id >= 0 && id < PASS_COUNT ? &pass_table[id] : NULL; }

/* Lower-case without '-', '_' and blanks: "to-a-normal-form" == "ToANormalForm". */
static void normalize_name(const char *s, size_t n, char *out, size_t cap) {
  size_t j = 0;
  for (size_t i = 0; i < n && s[i] && j + 1 < cap; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '-' || ch == '_' || isspace(ch)) continue;
    out[j++] = (char)tolower(ch);
  }
  out[j] = 0;
}

static const PassDef *lookup_n(const char *name, size_t n) {
  char want[128], have[128];
  normalize_name(name, n, want, sizeof want);
  for (int i = 0; i < PASS_COUNT; i++) {
    normalize_name(pass_table[i].name, SIZE_MAX, have, sizeof have);
    if (strcmp(want, have) == 0) return &pass_table[i];
    if (pass_table[i].alias) {
      normalize_name(pass_table[i].alias, SIZE_MAX, have, sizeof have);
      if (strcmp(want, have) == 0) return &pass_table[i];
    }
  }
  return NULL;
}

const PassDef *pass_lookup(const char *name) { return lookup_n(name, strlen(name)); }

static const char *suggest_n(const char *name, size_t n) {
  char want[128], have[128];
  normalize_name(name, n, want, sizeof want);
  const char *best = NULL;
  size_t best_d = strlen(want) / 3 + 2;
  for (int i = 0; i < PASS_COUNT; i++) {
    normalize_name(pass_table[i].name, SIZE_MAX, have, sizeof have);
    size_t dist = edit_distance(want, have, best_d);
    /* a prefix or substring match ("fold" -> FoldConstant) counts as close */
    if (dist >= best_d && strlen(want) >= 4 && strstr(have, want)) dist = best_d - 1;
    if (dist < best_d) { best_d = dist; best = pass_table[i].name; }
  }
  return best;
}

const char *pass_suggest(const char *name) { return suggest_n(name, strlen(name)); }

static const char *opt_type_name(PassOptType t) {
  switch (t) {
  case PO_BOOL: return "bool";
  case PO_INT: return "int";
  case PO_STRING: return "string";
  case PO_STRING_LIST: return "string list";
  }
  return "?";
}

void pass_list(FILE *out) {
  for (int i = 0; i < PASS_COUNT; i++) {
    const PassDef *p = &pass_table[i];
    fprintf(out, "%s", p->name);
    if (p->alias) fprintf(out, " (alias %s)", p->alias);
    fprintf(out, "  [level %d]%s\n", p->level, p->run ? "" : "  (not implemented yet)");
    fprintf(out, "    %s\n", p->description);
    for (uint32_t j = 0; j < p->nopts; j++)
      fprintf(out, "    %s: %s = %s  -- %s\n", p->opts[j].name, opt_type_name(p->opts[j].type),
              p->opts[j].default_text, p->opts[j].help);
  }
}

/* ---------------------------------------------------------------- options */

static bool value_has_type(const AttrValue *v, PassOptType t) {
  switch (t) {
  case PO_BOOL: return v->kind == AV_BOOL || (v->kind == AV_INT && (v->i.value == 0 || v->i.value == 1));
  case PO_INT: return v->kind == AV_INT;
  case PO_STRING: return v->kind == AV_STRING;
  case PO_STRING_LIST:
    if (v->kind == AV_STRING) return true;
    if (v->kind != AV_ARRAY) return false;
    for (uint32_t i = 0; i < v->arr.n; i++)
      if (v->arr.items[i]->kind != AV_STRING) return false;
    return true;
  }
  return false;
}

static int opt_index(const PassDef *p, const char *name) {
  for (uint32_t i = 0; i < p->nopts; i++)
    if (strcmp(p->opts[i].name, name) == 0) return (int)i;
  return -1;
}

static const AttrValue *opt_value(const PassCtx *c, const char *name) {
  int i = opt_index(c->def, name);
  if (i < 0) {
    fprintf(stderr, "relayc: internal error: pass %s has no option '%s'\n", c->def->name, name);
    abort();
  }
  return c->opts[i];
}

const AttrValue *pass_opt(const PassCtx *c, const char *name) { return opt_value(c, name); }

bool pass_opt_bool(const PassCtx *c, const char *name) {
  const AttrValue *v = opt_value(c, name);
  return v->kind == AV_BOOL ? v->b : v->i.value != 0;
}

int64_t pass_opt_int(const PassCtx *c, const char *name) { return opt_value(c, name)->i.value; }

const char *pass_opt_string(const PassCtx *c, const char *name) {
  const AttrValue *v = opt_value(c, name);
  return v->kind == AV_STRING ? v->s.chars : "";
}

/* --------------------------------------------------------------- parsing */

void pass_pipeline_init(PassPipeline *pl) {
  memset(pl, 0, sizeof *pl);
  pl->arena = module_new(NULL);
  pl->opt_level = 2;
}

void pass_pipeline_fini(PassPipeline *pl) {
  vec_free(pl->items);
  module_free(pl->arena);
  pl->arena = NULL;
}

static AttrValue **default_opts(PassPipeline *pl, const PassDef *p) {
  AttrValue **vals = arena_alloc(pl->arena->arena, (p->nopts ? p->nopts : 1) * sizeof *vals);
  for (uint32_t i = 0; i < p->nopts; i++) {
    vals[i] = attr_value_parse(pl->arena, p->opts[i].default_text);
    if (!vals[i]) {
      fprintf(stderr, "relayc: internal error: default of %s.%s does not parse\n", p->name, p->opts[i].name);
      abort();
    }
  }
  return vals;
}

static void append(PassPipeline *pl, const PassDef *p, AttrValue **opts) {
  PassInvocation inv = {p, opts};
  vec_push(pl->items, inv);
}

/* One `Name` or `Name(k=v, ...)` of length n. */
static bool parse_spec(PassPipeline *pl, const char *s, size_t n, FILE *err) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  size_t name_len = 0;
  while (name_len < n && s[name_len] != '(') name_len++;
  size_t nl = name_len;
  while (nl && isspace((unsigned char)s[nl - 1])) nl--;
  if (nl == 0) {
    fprintf(err, "relayc: empty pass name in --pass\n");
    return false;
  }
  const PassDef *p = lookup_n(s, nl);
  if (!p) {
    const char *best = suggest_n(s, nl);
    fprintf(err, "relayc: unknown pass '%.*s'", (int)nl, s);
    if (best) fprintf(err, " (did you mean '%s'?)", best);
    fprintf(err, "\nTry 'relayc --list-passes' for the list.\n");
    return false;
  }
  AttrValue **vals = default_opts(pl, p);
  if (name_len < n) {
    if (s[n - 1] != ')') {
      fprintf(err, "relayc: missing ')' after the options of pass %s\n", p->name);
      return false;
    }
    char *inner = arena_strndup(pl->arena->arena, s + name_len + 1, n - name_len - 2);
    const char *msg = NULL;
    Attrs *as = attrs_parse_list(pl->arena, inner, true, &msg);
    if (!as) {
      fprintf(err, "relayc: cannot read the options of pass %s: %s in '%s'\n", p->name, msg, inner);
      return false;
    }
    for (uint32_t i = 0; i < as->n; i++) {
      int k = opt_index(p, as->items[i].key);
      if (k < 0) {
        const char *best = NULL;
        size_t bd = 3;
        for (uint32_t j = 0; j < p->nopts; j++) {
          size_t dist = edit_distance(as->items[i].key, p->opts[j].name, bd);
          if (dist < bd) { bd = dist; best = p->opts[j].name; }
        }
        fprintf(err, "relayc: pass %s has no option '%s'", p->name, as->items[i].key);
        if (best) fprintf(err, " (did you mean '%s'?)", best);
        else if (p->nopts == 0) fprintf(err, " (it takes no options)");
        fputc('\n', err);
        return false;
      }
      AttrValue *v = as->items[i].value;
      if (!value_has_type(v, p->opts[k].type)) {
        fprintf(err, "relayc: option %s of pass %s expects a %s, got '", p->opts[k].name, p->name,
                opt_type_name(p->opts[k].type));
        attr_value_print(err, v);
        fprintf(err, "'\n");
        return false;
      }
      vals[k] = v;
    }
  }
  append(pl, p, vals);
  return true;
}

bool pass_pipeline_parse(PassPipeline *pl, const char *text, FILE *err) {
  const char *p = text, *start = text;
  int depth = 0;
  bool quoted = false;
  for (;; p++) {
    char ch = *p;
    if (quoted) {
      if (ch == '\\' && p[1]) p++;
      else if (ch == '"') quoted = false;
      else if (!ch) break;
      continue;
    }
    if (ch == '"') quoted = true;
    else if (ch == '(' || ch == '[') depth++;
    else if (ch == ')' || ch == ']') depth--;
    if ((ch == ',' && depth == 0) || ch == 0) {
      if (!parse_spec(pl, start, (size_t)(p - start), err)) return false;
      start = p + 1;
    }
    if (!ch) break;
  }
  if (quoted || depth != 0) {
    fprintf(err, "relayc: unbalanced brackets or quotes in --pass '%s'\n", text);
    return false;
  }
  return true;
}

/* -O levels: TVM's relay.build sequence for a CPU target, stopping after
 * FuseOps (spec/passes.md §10). A member runs iff its level <= the opt level;
 * FoldScaleAxis is expanded into its members so each is filtered alone. */
void pass_pipeline_add_opt_level(PassPipeline *pl, int level) {
  static const int seq[] = {
      PASS_REMOVE_UNUSED, PASS_TO_BBNF, PASS_SIMPLIFY_INFERENCE, PASS_CSE, PASS_FOLD_CONSTANT,
      PASS_BACKWARD_FOLD_SCALE_AXIS, PASS_FORWARD_FOLD_SCALE_AXIS, PASS_FOLD_CONSTANT, PASS_SIMPLIFY_EXPR,
      PASS_CANONICALIZE_CAST, PASS_CANONICALIZE_OPS, PASS_SIMPLIFY_EXPR_POST_ALTER_OP, PASS_FOLD_CONSTANT,
      PASS_FUSE_OPS,
  };
  pl->opt_level = level;
  for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
    const PassDef *p = &pass_table[seq[i]];
    if (p->level > level) continue;
    AttrValue **vals = default_opts(pl, p);
    if (seq[i] == PASS_FUSE_OPS) vals[0] = attr_int(pl->arena, level);
    append(pl, p, vals);
  }
}

void pass_pipeline_add_run_defaults(PassPipeline *pl) {
  static const int seq[] = {PASS_DEFUSE_OPS, PASS_RESOLVE_STATIC_REFS, PASS_FOLD_BATCH_NORM_INTO_CONV, PASS_FUSE_CONV_EPILOGUE,
                             PASS_FUSE_DENSE_TRANSPOSE, PASS_FUSE_SCALED_ADD};
  for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
    const PassDef *p = &pass_table[seq[i]];
    append(pl, p, default_opts(pl, p));
  }
}

/* ---------------------------------------------------------------- running */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of this thread plus the prefault thread's (ir/prefault.h: the
 * pages it faults in ahead are the passes' memory): the pass's own cost even
 * on a loaded machine, and not that of other threads running beside it (the
 * metadata decoder's at start-up). */
static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 + prefault_stats().cpu_ms;
}

static void note_not_typed(Diag *d, int before, const PassDef *p) {
  if (d->nerrors > before)
    diag_plain(d, DIAG_NOTE, "internal error: the output of pass %s does not type-check (a relayc bug: please report it with this input)",
               p->name);
}

static bool retype(Module *m, Diag *d, const PassDef *p) {
  int before = d->nerrors;
  infer_clear(m);
  if (infer_module(m, d)) return true;
  note_not_typed(d, before, p);
  return false;
}

bool pass_retype(PassCtx *c) { return retype(c->m, c->d, c->def); }

/* Passes whose output is re-typed from scratch (passes.def PASS_RETYPE_FULL). */
static const bool retype_full[PASS_COUNT] = {
    [0] = false,
#define PASS_OPTS(tag, ...)
#define PASS(id, name, kind, level, opts, alias, desc)
#define PASS_RETYPE_FULL(id) [PASS_##id] = true,
#include "transform/passes.def"
#undef PASS
#undef PASS_OPTS
#undef PASS_RETYPE_FULL
};

/* What the runner remembers of each global before a pass, to tell which ones
 * the pass changed: a hash of the pointers that make up its definition (the
 * GlobalDef, Function, body, parameters and their annotations, return
 * annotation, type parameters, signature). A pass rewrites through new nodes
 * (the Rewriter), so an unchanged hash means an unchanged global — unless the
 * pass mutates nodes in place, which its PASS_RETYPE_FULL row declares. */
typedef struct DefSnap {
  const GlobalDef *g;
  uint64_t key;
  Type *sig;         /* its Function's type */
  const Expr *body;  /* its Function's body */
} DefSnap;

typedef struct Snapshot {
  DefSnap *defs;
  uint32_t n;
} Snapshot;

static uint64_t mix(uint64_t h, const void *p) {
  h ^= (uint64_t)(uintptr_t)p;
  h *= 0x100000001b3ULL;
  return h ^ (h >> 29);
}

static uint64_t def_key(const GlobalDef *g) {
  uint64_t h = 0xcbf29ce484222325ULL;
  const Function *f = g->fn;
  h = mix(h, g);
  h = mix(h, f);
  if (!f) return h;
  h = mix(h, f->body);
  h = mix(h, f->params);
  h = mix(h, (void *)(uintptr_t)f->nparams);
  for (uint32_t i = 0; i < f->nparams; i++) {
    h = mix(h, f->params[i]);
    h = mix(h, f->params[i]->annot);
    h = mix(h, f->params[i]->type);
  }
  h = mix(h, f->ret_annot);
  h = mix(h, f->tparams);
  h = mix(h, (void *)(uintptr_t)f->ntparams);
  return mix(h, f->type);
}

static void snapshot_take(Snapshot *s, const Module *m) {
  s->n = m->ndefs;
  s->defs = mem_calloc(s->n + 1, sizeof *s->defs);
  for (uint32_t i = 0; i < s->n; i++) {
    const GlobalDef *g = m->defs[i];
    s->defs[i] = (DefSnap){g, def_key(g), g->fn ? g->fn->type : NULL, g->fn ? g->fn->body : NULL};
  }
}

static void snapshot_free(Snapshot *s) {
  mem_free(s->defs);
  s->defs = NULL;
}

/* RELAYC_VERIFY_RETYPE=1 (or PassRunOptions.verify_retype): after each
 * incremental re-typing, re-infer from scratch and compare. */
static bool verify_retype(const PassRunOptions *ro) {
  if (ro && ro->verify_retype) return true;
  const char *v = getenv("RELAYC_VERIFY_RETYPE");
  return v && *v && strcmp(v, "0") != 0;
}

/* RELAYC_FULL_RETYPE=1: always re-type from scratch (the old behaviour; for
 * measuring and for ruling the incremental re-typing out when debugging). */
static bool force_full_retype(void) {
  const char *v = getenv("RELAYC_FULL_RETYPE");
  return v && *v && strcmp(v, "0") != 0;
}

/* What the last re-typing did, for --time-passes. */
typedef struct RetypeTally {
  uint32_t incremental, full, skipped;
  uint64_t nodes_retyped, nodes_kept;
  uint32_t globals_skipped;
} RetypeTally;
static RetypeTally tally;

/* The node count of the module after the last pass, when its re-typing or
 * the pass itself gave it without a walk (--time-passes). */
typedef struct KnownCount {
  bool known;
  uint32_t counted_global; /* InferIncStats: 1 + the global the judgement counted, 0 none */
  uint64_t n;              /* its count (or the module's when counted_global is 0) */
} KnownCount;
static KnownCount last_count;

/* Re-types m after pass p, reusing what the pass kept (sema/infer.h
 * infer_module_incremental) unless p asks for a full re-typing. */
/* Whether some global has a parameter without an annotation: its type came
 * from the calls of it, which the incremental re-typing may keep as typed
 * leaves (types/recursion.relay: @twice(%x) typed by @twice(3f) in @main;
 * after FoldConstant, Inline, DeadCodeElimination or LambdaLift changed @main,
 * @twice's %x had no constraint left: "cannot infer type", an internal error). */
static bool has_inferred_params(const Module *m) {
  for (uint32_t i = 0; i < m->ndefs; i++) {
    const Function *f = m->defs[i]->fn;
    for (uint32_t k = 0; f && k < f->nparams; k++)
      if (!f->params[k]->annot) return true;
  }
  return false;
}

/* Which globals (by index in m->defs) pass p may have changed, from the
 * snapshot taken before it; with old_sigs, their signatures before it. Every
 * global when p mutates nodes in place (PASS_RETYPE_FULL). */
static bool *changed_globals(const Module *m, const PassDef *p, const Snapshot *s, Type **old_sigs) {
  uint32_t n = m->ndefs;
  bool *changed = mem_calloc(n + 1, sizeof *changed);
  PtrMap where = {0}; /* GlobalDef -> 1 + index in the snapshot, built only if the order changed */
  bool mapped = false;
  for (uint32_t i = 0; i < n; i++) {
    const GlobalDef *g = m->defs[i];
    const DefSnap *ds = i < s->n && s->defs[i].g == g ? &s->defs[i] : NULL;
    if (!ds) {
      if (!mapped) {
        for (uint32_t k = 0; k < s->n; k++) ptrmap_put(&where, s->defs[k].g, (int64_t)k + 1);
        mapped = true;
      }
      int64_t k;
      if (ptrmap_get(&where, g, &k)) ds = &s->defs[k - 1];
    }
    changed[i] = retype_full[p->id] || !ds || ds->key != def_key(g);
    if (old_sigs) old_sigs[i] = ds ? ds->sig : NULL;
  }
  if (mapped) ptrmap_free(&where);
  return changed;
}

/* A global function the pass changed uses a variable that nothing in it
 * binds (printed `free_var %u`): the type checker would take the variable's
 * old type as given, so it is reported here as the pass's internal error (a
 * pass that deleted a binding still used: DeadCodeElimination on a
 * graph-shared let chain, de984d8). One walk per changed global, flags by
 * Var.id (ir/walk.h fn_free_vars' pointer maps cost 2x the re-typing of a
 * 100k-binding chain); like fn_free_vars it asks "bound anywhere in the
 * function", not "in scope at the use". Run before a full re-typing, and
 * after an incremental one only when its judgement saw a suspect use
 * (InferIncStats.unbound_suspect): on Gradient's 4.3M-node output of a
 * 100k chain the walk alone cost ~350 ms, twice the re-typing. */
typedef struct Binding {
  uint8_t *flag; /* by Var.id: BOUND | USED */
  uint32_t cap;
  VEC(Var *) seen; /* each variable flagged, once */
} Binding;

enum { BOUND = 1, USED = 2 };

static void binding_mark(Binding *b, Var *v, uint8_t what) {
  if (v->id >= b->cap) {
    uint32_t cap = b->cap ? b->cap : 64;
    while (cap <= v->id) cap *= 2;
    b->flag = mem_realloc(b->flag, cap);
    memset(b->flag + b->cap, 0, cap - b->cap);
    b->cap = cap;
  }
  if (!b->flag[v->id]) vec_push(b->seen, v);
  b->flag[v->id] |= what;
}

static void binding_pattern(Binding *b, Pattern *p) {
  /* patterns nest as deep as written; the resolver bounded that */
  if (p->kind == PAT_VAR) binding_mark(b, p->var, BOUND);
  else if (p->kind == PAT_CTOR)
    for (uint32_t i = 0; i < p->ctor.nargs; i++) binding_pattern(b, p->ctor.args[i]);
  else if (p->kind == PAT_TUPLE)
    for (uint32_t i = 0; i < p->tuple.n; i++) binding_pattern(b, p->tuple.fields[i]);
}

static void binding_visit(Expr *e, void *ud) {
  Binding *b = ud;
  switch (e->kind) {
  case EXPR_VAR:
    if (e->var.var) binding_mark(b, e->var.var, USED);
    break;
  case EXPR_LET: binding_mark(b, e->let.var, BOUND); break;
  case EXPR_FN:
    for (uint32_t i = 0; i < e->fn->nparams; i++) binding_mark(b, e->fn->params[i], BOUND);
    break;
  case EXPR_MATCH:
    for (uint32_t i = 0; i < e->match.nclauses; i++) binding_pattern(b, e->match.clauses[i].pattern);
    break;
  default: break;
  }
}

/* The first variable f uses and does not bind, or NULL. */
static Var *unbound_var(Binding *b, Function *f) {
  b->seen.len = 0;
  for (uint32_t i = 0; i < f->nparams; i++) binding_mark(b, f->params[i], BOUND);
  walk_post_order(f->body, true, binding_visit, b);
  Var *r = NULL;
  for (size_t i = 0; i < b->seen.len; i++) {
    Var *v = b->seen.data[i];
    if (b->flag[v->id] == USED && !r) r = v;
    b->flag[v->id] = 0; /* for the next global */
  }
  return r;
}

static bool check_no_free_vars(Module *m, Diag *d, const PassDef *p, const Snapshot *s) {
  bool *changed = changed_globals(m, p, s, NULL);
  Binding b = {0};
  bool ok = true;
  for (uint32_t i = 0; i < m->ndefs && ok; i++) {
    GlobalDef *g = m->defs[i];
    Var *v = changed[i] && g->fn ? unbound_var(&b, g->fn) : NULL;
    if (!v) continue;
    diag_error(d, v->span, "internal error: pass %s left variable %%%s unbound in @%s", p->name, var_name(v), g->name);
    diag_plain(d, DIAG_NOTE, "internal error: the output of pass %s is not a valid program (a relayc bug: please report it with this input)",
               p->name);
    ok = false;
  }
  mem_free(b.flag);
  vec_free(b.seen);
  mem_free(changed);
  return ok;
}

static bool retype_after(Module *m, Diag *d, const PassDef *p, const Snapshot *s, const PassRunOptions *ro) {
  if (retype_full[p->id] || m->expr || force_full_retype() || has_inferred_params(m)) {
    tally.full++;
    return check_no_free_vars(m, d, p, s) && retype(m, d, p);
  }
  Type **old_sigs = mem_calloc(m->ndefs + 1, sizeof *old_sigs);
  bool *changed = changed_globals(m, p, s, old_sigs);
  int before = d->nerrors;
  InferIncStats st;
  InferIncResult r = infer_module_incremental(m, changed, old_sigs, d, &st);
  mem_free(changed);
  mem_free(old_sigs);
  /* (re-typing changes no node: the count holds after a full one too) */
  if (st.counted_global) last_count = (KnownCount){true, st.counted_global, st.nodes_counted};
  /* the judgement met a use before any binder of its variable: look exactly
   * (a walk of each changed global: as costly as the re-typing itself, so
   * only then) */
  if (st.unbound_suspect && !check_no_free_vars(m, d, p, s)) return false;
  if (r == INFER_INC_ERROR) {
    note_not_typed(d, before, p);
    return false;
  }
  if (r == INFER_INC_NEED_FULL) {
    tally.full++;
    return retype(m, d, p);
  }
  tally.incremental++;
  tally.nodes_retyped += st.nodes_retyped;
  tally.nodes_kept += st.nodes_kept;
  tally.globals_skipped += st.globals_skipped;
  if (verify_retype(ro)) {
    char who[160];
    snprintf(who, sizeof who, "pass %s", p->name);
    if (!infer_verify_module(m, d, who)) {
      note_not_typed(d, before, p);
      return false;
    }
  }
  return true;
}

/* A parameter without an annotation gets the type inference gave it: that
 * type came from uses a pass may take away (a call site unfolded or inlined,
 * batch_norm's relation on %bn_var expanded by SimplifyInference into
 * broadcasting arithmetic that cannot give it back), and the output would
 * then not type-check (types/backward_inference.relay, types/recursion.relay,
 * passes/annotate_spans_defuse/). Globals' parameters before each pass (a
 * pass may make globals, LambdaLift); literals' once per pipeline, when the
 * source has such a literal (a walk of the module: 28 M instructions on the
 * 100,000-node chain; the literals passes make are theirs to type). */
static void annotate_fn_params(Function *f) {
  for (uint32_t k = 0; f && k < f->nparams; k++) {
    Var *v = f->params[k];
    if (!v->annot && typeof_known(v->type)) v->annot = v->type;
  }
}

static void annotate_inferred_params(Module *m) {
  for (uint32_t i = 0; i < m->ndefs; i++) annotate_fn_params(m->defs[i]->fn);
}

static void annotate_literal(Expr *e, void *ud) {
  (void)ud;
  if (e->kind == EXPR_FN) annotate_fn_params(e->fn);
}

static void annotate_inferred_literal_params(Module *m) {
  if (!m->literal_params_unannotated) return;
  m->literal_params_unannotated = false;
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (m->defs[i]->fn && m->defs[i]->fn->body) walk_post_order(m->defs[i]->fn->body, true, annotate_literal, NULL);
  if (m->expr) walk_post_order(m->expr, true, annotate_literal, NULL);
}

/* The module's node count after a pass (module_node_count's number): the
 * one global the re-typing judged was counted by its judgement, the others
 * are walked; a pass that changed nothing left `before`. */
static uint64_t node_count_after(Module *m, uint64_t before) {
  if (!last_count.known) return module_node_count(m);
  if (last_count.counted_global == 0) return before; /* nothing changed */
  uint64_t n = last_count.n;
  for (uint32_t i = 0; i < m->ndefs; i++)
    if (i + 1 != last_count.counted_global && m->defs[i]->fn) n += expr_node_count(m->defs[i]->fn->body);
  return n;
}

/* Wall and CPU time of the last re-typing run_one did (for --time-passes). */
static double last_retype_ms, last_retype_cpu;

static bool run_one(Module *m, Diag *d, const PassDef *p, AttrValue *const *opts, int opt_level,
                    const PassRunOptions *ro) {
  if (!p->run) {
    diag_plain(d, DIAG_ERROR, "pass %s is not implemented yet", p->name);
    return false;
  }
  PassCtx c = {m, d, p, opts, opt_level, ro};
  int before = d->nerrors;
  annotate_inferred_params(m);
  /* the globals as they are, to see what the pass changed */
  Snapshot snap;
  snapshot_take(&snap, m);
  bool ok = p->run(&c) && d->nerrors == before;
  bool unchanged = ro && ro->retype_if_changed && m->ndefs == snap.n;
  for (uint32_t i = 0; unchanged && i < snap.n; i++)
    unchanged = m->defs[i] == snap.defs[i].g && (m->defs[i]->fn ? m->defs[i]->fn->body : NULL) == snap.defs[i].body;
  if (getenv("RELAYC_DUMP_PASSES")) { /* debugging: the raw output, before it is re-typed */
    fprintf(stderr, "// after %s\n", p->name);
    print_module(stderr, m, (PrintOptions){0});
  }
  if (!ok) {
    snapshot_free(&snap);
    if (d->nerrors == before) diag_plain(d, DIAG_ERROR, "pass %s failed", p->name);
    return false;
  }
  double t0 = now_ms(), c0 = cpu_ms();
  last_count.known = false;
  if (unchanged) {
    tally.skipped++;
    last_count = (KnownCount){true, 0, 0};
  }
  bool typed = unchanged || retype_after(m, d, p, &snap, ro);
  snapshot_free(&snap);
  last_retype_ms = now_ms() - t0;
  last_retype_cpu = cpu_ms() - c0;
  return typed;
}

bool pass_run_nested(PassCtx *c, int pass_id) {
  const PassDef *p = pass_get(pass_id);
  PassPipeline tmp;
  pass_pipeline_init(&tmp);
  AttrValue **vals = default_opts(&tmp, p);
  bool ok = run_one(c->m, c->d, p, vals, c->opt_level, c->ro);
  pass_pipeline_fini(&tmp);
  return ok;
}

bool pass_for_each_function(PassCtx *c, bool (*f)(PassCtx *c, GlobalDef *g)) {
  bool ok = true;
  for (uint32_t i = 0; i < c->m->ndefs && ok; i++) {
    GlobalDef *g = c->m->defs[i];
    if (!g->fn || fn_skipped_by_function_passes(g->fn)) continue;
    Type *sig = g->fn->type;
    ok = f(c, g);
    if (!g->fn->type) g->fn->type = sig;
  }
  return ok;
}

int pass_pipeline_run(const PassPipeline *pl, Module *m, Diag *d, const PassRunOptions *ro) {
  FILE *tp = ro ? ro->time_passes : NULL;
  double total = 0, retype_total = 0, retype_total_cpu = 0;
  memset(&tally, 0, sizeof tally);
  if (tp && pl->items.len)
    fprintf(tp, "%-28s %10s %10s %10s %10s %12s %12s\n", "pass", "ms", "cpu ms", "retype ms", "retype cpu",
            "nodes before", "nodes after");
  if (pl->items.len) annotate_inferred_literal_params(m);
  /* the node count after a pass is the next one's before: nothing between
   * two passes adds or drops nodes (one counting walk per pass) */
  uint64_t after = tp && pl->items.len ? module_node_count(m) : 0;
  for (size_t i = 0; i < pl->items.len; i++) {
    const PassInvocation *inv = &pl->items.data[i];
    uint64_t before = after;
    double t0 = now_ms(), c0 = cpu_ms();
    last_retype_ms = last_retype_cpu = 0;
    bool ok = run_one(m, d, inv->def, inv->opts, pl->opt_level, ro);
    double dt = now_ms() - t0, dc = cpu_ms() - c0;
    total += dt;
    retype_total += last_retype_ms;
    retype_total_cpu += last_retype_cpu;
    if (tp) {
      after = node_count_after(m, before);
      fprintf(tp, "%-28s %10.2f %10.2f %10.2f %10.2f %12llu %12llu\n", inv->def->name, dt - last_retype_ms,
              dc - last_retype_cpu, last_retype_ms, last_retype_cpu, (unsigned long long)before,
              (unsigned long long)after);
    }
    if (!ok) return 1;
  }
  if (tp && pl->items.len) {
    fprintf(tp, "%-28s %10.2f\n", "total (incl. re-typing)", total);
    fprintf(tp, "re-typing: %.2f ms (%.2f ms CPU): %u incremental (%llu nodes inferred again, %llu kept, %u globals untouched), %u full, %u skipped (nothing changed)\n",
            retype_total, retype_total_cpu, tally.incremental, (unsigned long long)tally.nodes_retyped,
            (unsigned long long)tally.nodes_kept, tally.globals_skipped, tally.full, tally.skipped);
  }
  return 0;
}

/* ------------------------------------------------------- built-in passes */

/* InferType: the runner re-types after every pass, so there is nothing to do. */
bool pass_INFER_TYPE(PassCtx *c) {
  (void)c;
  return true;
}
