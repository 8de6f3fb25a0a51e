/* analysis/dot.c — Graphviz DOT of a typed module (see dot.h).
 *
 * Per function, three passes over the post-order of its body:
 *  1. count each node's parents (occurrences, and those that are not the
 *     callee position), record what variables stand for (a let's value, a
 *     parameter's or pattern variable's node);
 *  2. parents before children (reverse post-order): give every node the
 *     lowest common scope of its uses — a scope being the function, a nested
 *     function, an `if` branch or a match clause — and decide which
 *     constants and projections are drawn inside their consumer;
 *  3. in evaluation order, create the drawn nodes and their edges.
 * Node statements are kept with their scope and written at the end as
 * nested `subgraph cluster_N` blocks (iteratively, for deep nesting); edges
 * follow at the top level. Node ids are numbered across the module.
 *
 * Variables and lets are not nodes: an edge from `%x` starts at the node of
 * the value `%x` is bound to. Labels are escaped for DOT and cut to a fixed
 * width; bytes that are not valid UTF-8 are shown as `?` (Graphviz rejects
 * them).
 */
#include "analysis/dot.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/common.h"
#include "ir/attrs.h"
#include "ir/json.h"
#include "ir/ptrmap.h"
#include "ops/macs/mac.h"
#include "ops/registry.h"

#define NONE UINT32_MAX
enum {
  ATTR_VALUE_MAX = 28, /* characters of an attribute value shown */
  LINE_MAX_CHARS = 34, /* attributes are joined on lines up to this width */
  TYPE_MAX = 48,       /* characters of an edge's type label */
};

typedef enum {
  SC_ROOT,   /* the module: @main's nodes are drawn here, outside any cluster */
  SC_GLOBAL, /* another global function */
  SC_FN,     /* a function literal */
  SC_THEN,
  SC_ELSE,
  SC_CLAUSE, /* one clause of a match */
} ScopeKind;

typedef struct Scope {
  uint32_t parent, depth;
  ScopeKind kind;
  char *label; /* DOT-escaped cluster label */
  bool primitive;
} Scope;

typedef struct Info {
  uint32_t uses;       /* occurrences as a child */
  uint32_t value_uses; /* occurrences other than as a callee */
  uint32_t scope;      /* NONE until a parent gives one */
  uint32_t sub;        /* FN: body scope; IF: then scope (else = sub + 1); MATCH: clause 0 */
  int64_t node;        /* drawn node id, -1 when none (yet) */
  int64_t proj;        /* an op call drawn with its only projection: the index, else -1 */
  bool folded;         /* drawn inside its only consumer */
} Info;

typedef struct Stmt {
  uint32_t scope;
  char *text;
} Stmt;

typedef struct Dot {
  FILE *out;
  Module *m;
  int64_t next_node;
  VEC(Scope) scopes;
  VEC(Stmt) nodes;
  VEC(char *) edges;
  /* per function */
  PtrMap index;        /* Expr* -> 1 + index into infos */
  VEC(Info) infos;
  PtrMap var_val;      /* Var* -> (intptr) let-bound value Expr* */
  PtrMap var_node;     /* Var* -> node id of a parameter or pattern variable */
  uint32_t fn_scope;   /* the scope of the function being drawn */
} Dot;

/* ------------------------------------------------------------ text helpers */

/* A growable string. */
typedef struct Str {
  char *p;
  size_t len, cap;
} Str;

static void str_putn(Str *s, const char *t, size_t n) {
  if (s->len + n + 1 > s->cap) {
    s->cap = (s->len + n + 1) * 2;
    s->p = mem_realloc(s->p, s->cap);
  }
  memcpy(s->p + s->len, t, n);
  s->len += n;
  s->p[s->len] = 0;
}
static void str_put(Str *s, const char *t) { str_putn(s, t, strlen(t)); }
static void str_printf(Str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void str_printf(Str *s, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) str_putn(s, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}
static char *str_take(Str *s) {
  if (!s->p) return mem_strdup("");
  char *p = s->p;
  *s = (Str){0};
  return p;
}

/* Appends t[0..n) to a DOT double-quoted string: quotes and backslashes
 * escaped, control bytes and invalid UTF-8 as '?', cut to `max` characters
 * with "..." when longer (max 0: no limit). */
static void str_escaped(Str *s, const char *t, size_t n, size_t max) {
  size_t chars = 0;
  for (size_t i = 0; i < n;) {
    if (max && chars == max) {
      str_put(s, "...");
      return;
    }
    unsigned char c = (unsigned char)t[i];
    size_t len = json_utf8_len((const unsigned char *)t + i, n - i);
    if (c == '"' || c == '\\') {
      str_putn(s, "\\", 1);
      str_putn(s, t + i, 1);
    } else if (c < 0x20 || c == 0x7F || len == 0) {
      str_put(s, "?");
      len = 1;
    } else {
      str_putn(s, t + i, len);
    }
    i += len ? len : 1;
    chars++;
  }
}
static void str_esc(Str *s, const char *t, size_t max) { str_escaped(s, t, strlen(t), max); }

/* The compact text of a type, unescaped: `(1,64,56,56) float32`, tuples of
 * those in parentheses, other types in Relay-like syntax nested at most 4
 * deep. Stops growing past `max` bytes (the caller cuts), so a type nested
 * 10,000 deep costs no more than a short one. */
static void type_raw(Str *s, const Type *t, size_t max, int depth) {
  t = type_solved(t);
  char dt[32];
  if (!t || s->len > max) return;
  if (depth > 4) {
    str_put(s, "...");
    return;
  }
  switch (t->kind) {
  case TYPE_TENSOR:
    if (t->tensor.ndim) {
      str_put(s, "(");
      for (uint32_t i = 0; i < t->tensor.ndim && s->len <= max; i++) {
        const Dim *dm = &t->tensor.dims[i];
        if (i) str_put(s, ",");
        if (dm->kind == DIM_INT) str_printf(s, "%" PRId64, dm->value);
        else str_put(s, "?");
      }
      str_put(s, t->tensor.ndim == 1 ? ",) " : ") ");
    }
    str_put(s, dtype_name(t->tensor.dtype, dt));
    return;
  case TYPE_TUPLE:
    str_put(s, "(");
    for (uint32_t i = 0; i < t->tuple.n && s->len <= max; i++) {
      if (i) str_put(s, ", ");
      type_raw(s, t->tuple.fields[i], max, depth + 1);
    }
    str_put(s, t->tuple.n == 1 ? ",)" : ")");
    return;
  case TYPE_FUNC:
    str_put(s, "fn(");
    for (uint32_t i = 0; i < t->func.nargs && s->len <= max; i++) {
      if (i) str_put(s, ", ");
      type_raw(s, t->func.args[i], max, depth + 1);
    }
    str_put(s, ") -> ");
    type_raw(s, t->func.ret, max, depth + 1);
    return;
  case TYPE_ADT:
    str_put(s, t->adt.def ? t->adt.def->name : "?");
    if (t->adt.nargs) {
      str_put(s, "[");
      for (uint32_t i = 0; i < t->adt.nargs && s->len <= max; i++) {
        if (i) str_put(s, ", ");
        type_raw(s, t->adt.args[i], max, depth + 1);
      }
      str_put(s, "]");
    }
    return;
  case TYPE_REF:
    str_put(s, "ref(");
    type_raw(s, t->ref.inner, max, depth + 1);
    str_put(s, ")");
    return;
  case TYPE_VAR: str_put(s, t->var.param && t->var.param->name ? t->var.param->name : "?"); return;
  default: str_put(s, "?"); return;
  }
}

/* The type as an escaped label, cut to TYPE_MAX characters. */
static void type_text(Str *s, const Type *t) {
  Str raw = {0};
  type_raw(&raw, t, 4 * TYPE_MAX, 0);
  if (raw.p) str_esc(s, raw.p, TYPE_MAX);
  mem_free(raw.p);
}

/* A constant, summarised: a literal scalar shows its value (it is program
 * text), anything else only its shape and dtype. */
static void shape_dtype_text(Str *s, const ConstTensor *c);

static void const_text(Str *s, const ConstTensor *c) {
  char num[40];
  DType t = c->dtype;
  if (c->ndim == 0 && c->meta_index < 0 && t.lanes == 1 && c->data) {
    if (dtype_is_bool(t)) {
      str_put(s, *(const uint8_t *)c->data ? "True" : "False");
      return;
    }
    if (t.code == DT_FLOAT && (t.bits == 16 || t.bits == 32 || t.bits == 64)) {
      double v = const_scalar_as_double(c);
      if (v != v) strcpy(num, "nan");
      else if (v > 1e308 || v < -1e308) strcpy(num, v < 0 ? "-inf" : "inf");
      else format_shortest_double(v, t.bits == 32, num);
      str_printf(s, "%s%s", num, t.bits == 32 ? "f" : t.bits == 64 ? "f64" : "f16");
      return;
    }
    if ((t.code == DT_INT || t.code == DT_UINT) && t.bits >= 8 && t.bits <= 64) {
      int64_t v = const_scalar_as_int(c);
      if (t.code == DT_INT && t.bits == 32) str_printf(s, "%" PRId64, v);
      else str_printf(s, "%" PRId64 "%c%u", v, t.code == DT_INT ? 'i' : 'u', t.bits);
      return;
    }
  }
  if (c->meta_index >= 0) str_printf(s, "meta[%d] ", c->meta_index);
  else str_put(s, "const ");
  shape_dtype_text(s, c);
}

/* `(64,3,7,7) float32` of a constant. */
static void shape_dtype_text(Str *s, const ConstTensor *c) {
  char dt[32];
  if (c->ndim) {
    str_put(s, "(");
    for (int32_t i = 0; i < c->ndim; i++) str_printf(s, "%s%" PRId64, i ? "," : "", c->shape[i]);
    str_put(s, c->ndim == 1 ? ",) " : ") ");
  }
  str_put(s, dtype_name(c->dtype, dt));
}

/* ------------------------------------------------------------------ scopes */

static uint32_t scope_new(Dot *d, uint32_t parent, ScopeKind kind, char *label) {
  Scope sc = {parent, parent == NONE ? 0 : d->scopes.data[parent].depth + 1, kind, label, false};
  vec_push(d->scopes, sc);
  return (uint32_t)d->scopes.len - 1;
}

static uint32_t scope_lca(const Dot *d, uint32_t a, uint32_t b) {
  if (a == NONE) return b;
  if (b == NONE) return a;
  while (d->scopes.data[a].depth > d->scopes.data[b].depth) a = d->scopes.data[a].parent;
  while (d->scopes.data[b].depth > d->scopes.data[a].depth) b = d->scopes.data[b].parent;
  while (a != b) {
    a = d->scopes.data[a].parent;
    b = d->scopes.data[b].parent;
  }
  return a;
}

/* Pattern text for a clause's label; iterative over an explicit stack. */
static void pattern_text(Str *s, const Pattern *root) {
  typedef struct { const Pattern *p; uint32_t next; } PF;
  VEC(PF) st = {0};
  vec_push(st, ((PF){root, 0}));
  while (st.len) {
    PF *f = &st.data[st.len - 1];
    const Pattern *p = f->p;
    if (s->len > 200) { /* long enough for a label */
      str_put(s, "...");
      break;
    }
    uint32_t n = p->kind == PAT_CTOR ? p->ctor.nargs : p->kind == PAT_TUPLE ? p->tuple.n : 0;
    if (f->next == 0) {
      if (p->kind == PAT_WILDCARD) str_put(s, "_");
      else if (p->kind == PAT_VAR) str_printf(s, "%%%s", var_name(p->var));
      else if (p->kind == PAT_CTOR) str_put(s, p->ctor.ctor ? p->ctor.ctor->name : p->ctor.name);
      if ((p->kind == PAT_CTOR && n) || p->kind == PAT_TUPLE) str_put(s, "(");
    }
    if (f->next < n) {
      if (f->next) str_put(s, ", ");
      const Pattern *c = p->kind == PAT_CTOR ? p->ctor.args[f->next] : p->tuple.fields[f->next];
      f->next++;
      vec_push(st, ((PF){c, 0}));
      continue;
    }
    if ((p->kind == PAT_CTOR && n) || p->kind == PAT_TUPLE) str_put(s, p->kind == PAT_TUPLE && n == 1 ? ",)" : ")");
    st.len--;
  }
  vec_free(st);
}

/* ------------------------------------------------------------- node table */

static Info *info(Dot *d, const Expr *e) {
  int64_t k;
  return e && ptrmap_get(&d->index, e, &k) ? &d->infos.data[k - 1] : NULL;
}

/* Adds a node statement `nID [label="...", extra]` in scope sc; returns the id. */
static int64_t add_node(Dot *d, uint32_t sc, Str *label, const char *extra) {
  int64_t id = d->next_node++;
  Str s = {0};
  str_printf(&s, "n%" PRId64 " [label=\"", id);
  str_putn(&s, label->p ? label->p : "", label->len);
  str_put(&s, "\"");
  if (extra && *extra) {
    str_put(&s, ", ");
    str_put(&s, extra);
  }
  str_put(&s, "];");
  mem_free(label->p);
  *label = (Str){0};
  vec_push(d->nodes, ((Stmt){sc, str_take(&s)}));
  return id;
}

static void add_edge(Dot *d, int64_t from, int64_t to, Str *label, const char *extra) {
  if (from < 0 || to < 0) return;
  Str s = {0};
  str_printf(&s, "n%" PRId64 " -> n%" PRId64, from, to);
  if ((label && label->len) || (extra && *extra)) {
    str_put(&s, " [");
    if (label && label->len) {
      str_put(&s, "label=\"");
      str_putn(&s, label->p, label->len);
      str_put(&s, "\"");
      if (extra && *extra) str_put(&s, ", ");
    }
    if (extra) str_put(&s, extra);
    str_put(&s, "]");
  }
  str_put(&s, ";");
  if (label) {
    mem_free(label->p);
    *label = (Str){0};
  }
  vec_push(d->edges, str_take(&s));
}

/* What an expression's value comes from: lets and variables are followed to
 * the bound value. Returns the expression that is (or will be) drawn, or
 * NULL for a variable bound to a node (*node set). */
static const Expr *value_source(Dot *d, const Expr *e, int64_t *node) {
  *node = -1;
  for (uint32_t guard = 0; e && guard < (1u << 24); guard++) {
    if (e->kind == EXPR_LET) {
      e = e->let.body;
    } else if (e->kind == EXPR_VAR && e->var.var) {
      int64_t v;
      if (ptrmap_get(&d->var_val, e->var.var, &v)) {
        e = (const Expr *)(intptr_t)v;
      } else if (ptrmap_get(&d->var_node, e->var.var, &v)) {
        *node = v;
        return NULL;
      } else {
        return e; /* a free variable: drawn on first use */
      }
    } else {
      return e;
    }
  }
  return e;
}

/* The function literal a callee stands for, or NULL. */
static const Expr *callee_fn(Dot *d, const Expr *callee) {
  int64_t node;
  const Expr *e = value_source(d, callee, &node);
  return e && e->kind == EXPR_FN ? e : NULL;
}

static int64_t node_of(Dot *d, const Expr *e);

/* The node id of a free variable (drawn once, in the function's scope). */
static int64_t free_var_node(Dot *d, const Expr *e) {
  int64_t v;
  if (ptrmap_get(&d->var_node, e->var.var, &v)) return v;
  Str l = {0};
  str_put(&l, "%");
  const char *name = e->var.var ? var_name(e->var.var) : e->var.name;
  str_esc(&l, name ? name : "?", 40);
  v = add_node(d, d->fn_scope, &l, "shape=ellipse, fillcolor=\"#d9ead3\"");
  ptrmap_put(&d->var_node, e->var.var, v);
  return v;
}

/* The drawn node standing for the value of e (see value_source). */
static int64_t node_of(Dot *d, const Expr *e) {
  int64_t node;
  const Expr *src = value_source(d, e, &node);
  if (!src) return node;
  if (src->kind == EXPR_VAR) return free_var_node(d, src);
  Info *in = info(d, src);
  return in ? in->node : -1;
}

/* Edge from the value of `from` into node `to`, labelled with from's type. */
static void value_edge(Dot *d, const Expr *from, int64_t to, const char *prefix, const char *extra) {
  Str l = {0};
  if (prefix) str_put(&l, prefix);
  type_text(&l, from->type);
  add_edge(d, node_of(d, from), to, &l, extra);
}

/* ------------------------------------------------------------ pass 1 and 2 */

static bool is_op_call(const Expr *e) {
  return e->kind == EXPR_CALL && e->call.fn && e->call.fn->kind == EXPR_OP;
}

/* Scope of child i of e, whose own scope is sc. */
static uint32_t child_scope(const Expr *e, const Info *in, uint32_t i, uint32_t sc) {
  switch (e->kind) {
  case EXPR_FN: return in->sub;
  case EXPR_IF: return i == 1 ? in->sub : i == 2 ? in->sub + 1 : sc;
  case EXPR_MATCH: return i >= 1 ? in->sub + i - 1 : sc;
  default: return sc;
  }
}

static void attrs_text(Str *s, const Attrs *a, size_t width) {
  if (!a) return;
  if (a->meta_key) {
    str_put(s, "\\nattrs=meta[");
    str_esc(s, a->meta_key, 40);
    str_printf(s, "][%u]", a->meta_index);
    return;
  }
  size_t line = 0;
  for (uint32_t i = 0; i < a->n; i++) {
    const Attr *at = &a->items[i];
    if (at->is_default || !at->key || !at->value) continue;
    Str one = {0};
    str_esc(&one, at->key, 32);
    str_put(&one, "=");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
      attr_value_print(f, at->value);
      fclose(f);
      str_escaped(&one, buf, len, ATTR_VALUE_MAX);
      free(buf);
    }
    if (line && line + 2 + one.len <= width) {
      str_put(s, ", ");
      line += 2;
    } else {
      str_put(s, "\\n");
      line = 0;
    }
    str_putn(s, one.p, one.len);
    line += one.len;
    mem_free(one.p);
  }
}

/* Nodes for the variables a pattern binds (in the clause's scope). */
static void pattern_vars(Dot *d, const Pattern *root, uint32_t sc) {
  VEC(const Pattern *) st = {0};
  vec_push(st, root);
  while (st.len) {
    const Pattern *p = st.data[--st.len];
    if (p->kind == PAT_VAR && p->var) {
      Str l = {0};
      str_put(&l, "%");
      str_esc(&l, var_name(p->var), 40);
      ptrmap_put(&d->var_node, p->var, add_node(d, sc, &l, "shape=ellipse, fillcolor=\"#d9ead3\""));
    } else if (p->kind == PAT_CTOR) {
      for (uint32_t i = p->ctor.nargs; i-- > 0;) vec_push(st, p->ctor.args[i]);
    } else if (p->kind == PAT_TUPLE) {
      for (uint32_t i = p->tuple.n; i-- > 0;) vec_push(st, p->tuple.fields[i]);
    }
  }
  vec_free(st);
}

static void param_nodes(Dot *d, Var *const *params, uint32_t n, uint32_t sc) {
  for (uint32_t i = 0; i < n; i++) {
    Str l = {0};
    str_put(&l, "%");
    str_esc(&l, var_name(params[i]), 40);
    ptrmap_put(&d->var_node, params[i], add_node(d, sc, &l, "shape=ellipse, fillcolor=\"#d9ead3\""));
  }
}

/* Pass 2 for one node whose scope is known: its sub-scopes, folding, and
 * the scopes it gives its children. */
static void place(Dot *d, Expr *e, Info *in) {
  uint32_t sc = in->scope;
  if (e->kind == EXPR_FN) {
    Str l = {0};
    str_put(&l, "fn");
    attrs_text(&l, e->fn->attrs, LINE_MAX_CHARS);
    in->sub = scope_new(d, sc, SC_FN, str_take(&l));
    const AttrValue *prim = e->fn->attrs ? attrs_get(e->fn->attrs, "Primitive") : NULL;
    d->scopes.data[in->sub].primitive = prim && ((prim->kind == AV_INT && prim->i.value) ||
                                                 (prim->kind == AV_BOOL && prim->b));
    param_nodes(d, e->fn->params, e->fn->nparams, in->sub);
  } else if (e->kind == EXPR_IF) {
    in->sub = scope_new(d, sc, SC_THEN, mem_strdup("then"));
    scope_new(d, sc, SC_ELSE, mem_strdup("else"));
  } else if (e->kind == EXPR_MATCH) {
    in->sub = (uint32_t)d->scopes.len;
    for (uint32_t k = 0; k < e->match.nclauses; k++) {
      Str l = {0}, raw = {0};
      pattern_text(&raw, e->match.clauses[k].pattern);
      str_esc(&l, raw.p ? raw.p : "", 60);
      mem_free(raw.p);
      scope_new(d, sc, SC_CLAUSE, str_take(&l));
    }
    for (uint32_t k = 0; k < e->match.nclauses; k++) pattern_vars(d, e->match.clauses[k].pattern, in->sub + k);
  } else if (is_op_call(e)) {
    for (uint32_t i = 0; i < e->call.nargs; i++) {
      Info *a = info(d, e->call.args[i]);
      if (e->call.args[i]->kind == EXPR_CONST && a && a->uses == 1) a->folded = true;
    }
  } else if (e->kind == EXPR_PROJ) {
    Info *t = info(d, e->proj.tuple);
    if (t && t->uses == 1 && is_op_call(e->proj.tuple)) {
      in->folded = true;
      t->proj = e->proj.index;
    }
  }
  uint32_t n = an_nchildren(e);
  for (uint32_t i = 0; i < n; i++) {
    Info *c = info(d, an_child(e, i));
    if (c) c->scope = scope_lca(d, c->scope, child_scope(e, in, i, sc));
  }
}

/* --------------------------------------------------------------- pass 3 */

#define STYLE_OP "fillcolor=\"#eeeeee\""
#define STYLE_HEAVY "fillcolor=\"#cfe2f3\""
#define STYLE_CONST "shape=note, fillcolor=\"#fff2cc\""
#define STYLE_CALL "fillcolor=\"#ead1dc\""
#define STYLE_CONTROL "shape=diamond, fillcolor=\"#fce5cd\""
#define STYLE_SMALL "shape=box, style=\"rounded,dashed\", fillcolor=\"#ffffff\""
#define STYLE_NAME "shape=plaintext, style=\"\""

/* True when folded constants a and b (consecutive arguments) can share a
 * label line: same dtype and shape, consecutive metadata entries. */
static bool const_groups(const ConstTensor *a, const ConstTensor *b, int32_t step) {
  if (a->meta_index < 0 || b->meta_index != a->meta_index + step || !dtype_eq(a->dtype, b->dtype) ||
      a->ndim != b->ndim)
    return false;
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

static void op_call_label(Dot *d, Str *l, const Expr *e, const Info *in) {
  const OpDef *op = op_get(e->call.fn->op.id);
  str_esc(l, op ? op->name : e->call.fn->op.name ? e->call.fn->op.name : "?", 60);
  if (in->proj >= 0) str_printf(l, " .%" PRId64, in->proj);
  attrs_text(l, e->call.attrs, LINE_MAX_CHARS);
  for (uint32_t i = 0; i < e->call.nargs; i++) {
    const Expr *a = e->call.args[i];
    Info *ai = info(d, a);
    if (a->kind != EXPR_CONST || !ai || !ai->folded) continue;
    /* a run of metadata constants of one type: `#1-4: meta[5-8] (64,) float32` */
    uint32_t last = i;
    while (last + 1 < e->call.nargs && e->call.args[last + 1]->kind == EXPR_CONST &&
           info(d, e->call.args[last + 1]) && info(d, e->call.args[last + 1])->folded &&
           const_groups(a->constant, e->call.args[last + 1]->constant, (int32_t)(last + 1 - i)))
      last++;
    Str c = {0};
    if (last > i) {
      str_printf(&c, "meta[%d-%d] ", a->constant->meta_index, e->call.args[last]->constant->meta_index);
      shape_dtype_text(&c, a->constant);
      str_printf(l, "\\n#%u-%u: ", i, last);
    } else {
      const_text(&c, a->constant);
      str_printf(l, "\\n#%u: ", i);
    }
    str_esc(l, c.p ? c.p : "", 60);
    mem_free(c.p);
    i = last;
  }
}

/* Creates the node of e, if e is drawn. */
static void make_node(Dot *d, Expr *e, Info *in) {
  Str l = {0};
  uint32_t sc = in->scope == NONE ? d->fn_scope : in->scope;
  switch (e->kind) {
  case EXPR_CONST: {
    if (in->folded) return;
    Str c = {0};
    const_text(&c, e->constant);
    str_esc(&l, c.p ? c.p : "", 60);
    mem_free(c.p);
    in->node = add_node(d, sc, &l, STYLE_CONST);
    return;
  }
  case EXPR_OP:
  case EXPR_GLOBAL:
  case EXPR_CTOR:
    if (!in->value_uses) return;
    if (e->kind == EXPR_GLOBAL) str_put(&l, "@");
    str_esc(&l, e->kind == EXPR_OP ? (op_get(e->op.id) ? op_get(e->op.id)->name : "?")
                : e->kind == EXPR_GLOBAL ? e->global.name : e->ctor.ctor->name, 60);
    in->node = add_node(d, sc, &l, STYLE_NAME);
    return;
  case EXPR_FN:
    if (!in->value_uses) return;
    str_put(&l, "fn");
    in->node = add_node(d, in->sub, &l, "shape=cds, fillcolor=\"#ead1dc\"");
    return;
  case EXPR_CALL: {
    const Expr *f = e->call.fn;
    const char *style = STYLE_CALL;
    if (f->kind == EXPR_OP) {
      op_call_label(d, &l, e, in);
      style = mac_has_rule(e) ? STYLE_HEAVY : STYLE_OP;
    } else if (f->kind == EXPR_GLOBAL) {
      str_put(&l, "@");
      str_esc(&l, f->global.name, 60);
    } else if (f->kind == EXPR_CTOR) {
      str_esc(&l, f->ctor.ctor->name, 60);
    } else {
      const Expr *fn = callee_fn(d, f);
      str_put(&l, fn && info(d, fn) && d->scopes.data[info(d, fn)->sub].primitive ? "call fused" : "call");
    }
    in->node = add_node(d, sc, &l, style);
    return;
  }
  case EXPR_TUPLE:
    str_put(&l, "tuple");
    in->node = add_node(d, sc, &l, STYLE_SMALL);
    return;
  case EXPR_PROJ:
    if (in->folded) {
      Info *t = info(d, e->proj.tuple);
      in->node = t ? t->node : -1;
      return;
    }
    str_printf(&l, ".%u", e->proj.index);
    in->node = add_node(d, sc, &l, "shape=ellipse, style=\"dashed\", fillcolor=\"#ffffff\"");
    return;
  case EXPR_IF:
    str_put(&l, "if");
    in->node = add_node(d, sc, &l, STYLE_CONTROL);
    return;
  case EXPR_MATCH:
    str_put(&l, e->match.partial ? "match?" : "match");
    in->node = add_node(d, sc, &l, STYLE_CONTROL);
    return;
  case EXPR_REF_NEW:
  case EXPR_REF_READ:
  case EXPR_REF_WRITE:
    str_put(&l, e->kind == EXPR_REF_NEW ? "ref" : e->kind == EXPR_REF_READ ? "ref_read" : "ref_write");
    in->node = add_node(d, sc, &l, STYLE_SMALL);
    return;
  default: return; /* variables, lets */
  }
}

/* The edges into e's node. */
static void make_edges(Dot *d, Expr *e, Info *in) {
  switch (e->kind) {
  case EXPR_CALL: {
    const Expr *f = e->call.fn;
    const Expr *fn = f->kind == EXPR_OP || f->kind == EXPR_GLOBAL || f->kind == EXPR_CTOR ? NULL : callee_fn(d, f);
    if (fn && fn->fn->nparams == e->call.nargs) {
      for (uint32_t i = 0; i < e->call.nargs; i++) {
        int64_t p;
        Str l = {0};
        type_text(&l, e->call.args[i]->type);
        if (ptrmap_get(&d->var_node, fn->fn->params[i], &p))
          add_edge(d, node_of(d, e->call.args[i]), p, &l, "style=dashed");
        mem_free(l.p);
      }
      value_edge(d, fn->fn->body, in->node, NULL, "style=dashed");
      return;
    }
    if (f->kind != EXPR_OP && f->kind != EXPR_GLOBAL && f->kind != EXPR_CTOR)
      value_edge(d, f, in->node, "fn: ", NULL);
    for (uint32_t i = 0; i < e->call.nargs; i++) {
      Info *a = info(d, e->call.args[i]);
      if (a && a->folded && e->call.args[i]->kind == EXPR_CONST) continue;
      value_edge(d, e->call.args[i], in->node, NULL, NULL);
    }
    return;
  }
  case EXPR_TUPLE:
    for (uint32_t i = 0; i < e->tuple.n; i++) value_edge(d, e->tuple.fields[i], in->node, NULL, NULL);
    return;
  case EXPR_PROJ:
    if (!in->folded) value_edge(d, e->proj.tuple, in->node, NULL, NULL);
    return;
  case EXPR_FN:
    if (in->node >= 0) value_edge(d, e->fn->body, in->node, NULL, "style=dashed");
    return;
  case EXPR_IF:
    value_edge(d, e->if_.cond, in->node, "cond ", NULL);
    value_edge(d, e->if_.then_, in->node, "then ", NULL);
    value_edge(d, e->if_.else_, in->node, "else ", NULL);
    return;
  case EXPR_MATCH: {
    int64_t scrut = node_of(d, e->match.scrut);
    value_edge(d, e->match.scrut, in->node, NULL, NULL);
    VEC(const Pattern *) st = {0};
    for (uint32_t k = 0; k < e->match.nclauses; k++) {
      vec_push(st, e->match.clauses[k].pattern);
      while (st.len) {
        const Pattern *p = st.data[--st.len];
        int64_t v;
        if (p->kind == PAT_VAR && p->var && ptrmap_get(&d->var_node, p->var, &v)) {
          Str l = {0};
          type_text(&l, p->var->type);
          add_edge(d, scrut, v, &l, "style=dotted");
        } else if (p->kind == PAT_CTOR) {
          for (uint32_t i = 0; i < p->ctor.nargs; i++) vec_push(st, p->ctor.args[i]);
        } else if (p->kind == PAT_TUPLE) {
          for (uint32_t i = 0; i < p->tuple.n; i++) vec_push(st, p->tuple.fields[i]);
        }
      }
      value_edge(d, e->match.clauses[k].body, in->node, NULL, NULL);
    }
    vec_free(st);
    return;
  }
  case EXPR_REF_NEW:
  case EXPR_REF_READ: value_edge(d, e->ref.arg, in->node, NULL, NULL); return;
  case EXPR_REF_WRITE:
    value_edge(d, e->ref_write.ref, in->node, NULL, NULL);
    value_edge(d, e->ref_write.value, in->node, NULL, NULL);
    return;
  default: return;
  }
}

/* Draws one function (or the bare expression) whose nodes go to scope sc;
 * `result` names the sink its value flows to. */
static void draw_function(Dot *d, Var *const *params, uint32_t nparams, Expr *body, uint32_t sc,
                          const char *result) {
  d->fn_scope = sc;
  param_nodes(d, params, nparams, sc);
  AnList order = {0};
  an_postorder(body, &order);
  for (size_t i = 0; i < order.len; i++) {
    vec_push(d->infos, ((Info){0, 0, NONE, NONE, -1, -1, false}));
    ptrmap_put(&d->index, order.data[i], (int64_t)d->infos.len);
  }
  /* pass 1: uses and what variables stand for */
  for (size_t i = 0; i < order.len; i++) {
    Expr *e = order.data[i];
    uint32_t n = an_nchildren(e);
    for (uint32_t k = 0; k < n; k++) {
      Info *c = info(d, an_child(e, k));
      if (!c) continue;
      c->uses++;
      if (!((e->kind == EXPR_CALL || e->kind == EXPR_LET) && k == 0)) c->value_uses++;
    }
    if (e->kind == EXPR_LET && e->let.var && e->let.value)
      ptrmap_put(&d->var_val, e->let.var, (int64_t)(intptr_t)e->let.value);
  }
  Info *root = info(d, body);
  if (root) {
    root->uses++;
    root->value_uses++;
    root->scope = sc;
  }
  /* pass 2: scopes, parents before children; a variable or let whose value
   * is used (not only called) makes its function literal a drawn value */
  for (size_t i = order.len; i-- > 0;) {
    Expr *e = order.data[i];
    Info *in = info(d, e);
    if (in->scope == NONE) in->scope = sc;
    place(d, e, in);
    if (in->value_uses && (e->kind == EXPR_LET || e->kind == EXPR_VAR)) {
      int64_t node;
      Info *src = info(d, value_source(d, e, &node));
      if (src && src != in) src->value_uses++;
    }
  }
  /* pass 3: nodes, then edges, in evaluation order */
  for (size_t i = 0; i < order.len; i++) make_node(d, order.data[i], info(d, order.data[i]));
  for (size_t i = 0; i < order.len; i++) make_edges(d, order.data[i], info(d, order.data[i]));
  if (body) {
    Str l = {0};
    str_put(&l, result);
    int64_t sink = add_node(d, sc, &l, "shape=box, style=\"rounded,bold\", fillcolor=\"#ffffff\"");
    value_edge(d, body, sink, NULL, NULL);
  }
  vec_free(order);
  vec_free(d->infos);
  ptrmap_free(&d->index);
  ptrmap_free(&d->var_val);
  ptrmap_free(&d->var_node);
  d->index = d->var_val = d->var_node = (PtrMap){0};
}

/* ----------------------------------------------------------------- output */

static void write_scopes(Dot *d) {
  size_t ns = d->scopes.len;
  /* children and nodes of each scope, by counting sort */
  uint32_t *kid_start = mem_calloc(ns + 1, sizeof *kid_start), *kids = mem_calloc(ns + 1, sizeof *kids);
  uint32_t *node_start = mem_calloc(ns + 1, sizeof *node_start);
  uint32_t *nodes = mem_calloc(d->nodes.len + 1, sizeof *nodes);
  for (size_t s = 1; s < ns; s++) kid_start[d->scopes.data[s].parent + 1]++;
  for (size_t s = 0; s < ns; s++) kid_start[s + 1] += kid_start[s];
  uint32_t *fill = mem_calloc(ns + 1, sizeof *fill);
  for (size_t s = 1; s < ns; s++) {
    uint32_t p = d->scopes.data[s].parent;
    kids[kid_start[p] + fill[p]++] = (uint32_t)s;
  }
  for (size_t i = 0; i < d->nodes.len; i++) node_start[d->nodes.data[i].scope + 1]++;
  for (size_t s = 0; s < ns; s++) node_start[s + 1] += node_start[s];
  memset(fill, 0, (ns + 1) * sizeof *fill);
  for (size_t i = 0; i < d->nodes.len; i++) {
    uint32_t s = d->nodes.data[i].scope;
    nodes[node_start[s] + fill[s]++] = (uint32_t)i;
  }
  /* depth-first over the scope tree with an explicit stack; low bit = closing */
  VEC(uint64_t) st = {0};
  vec_push(st, (uint64_t)0 << 1);
  while (st.len) {
    uint64_t top = st.data[--st.len];
    uint32_t s = (uint32_t)(top >> 1);
    const Scope *sc = &d->scopes.data[s];
    size_t indent = sc->depth + 1;
    if (top & 1) {
      fprintf(d->out, "%*s}\n", (int)(indent > 40 ? 40 : indent) * 2 - 2, "");
      continue;
    }
    int pad = (int)(indent > 40 ? 40 : indent) * 2;
    if (s != 0) {
      fprintf(d->out, "%*ssubgraph cluster_%u {\n", pad - 2, "", s);
      const char *style = sc->kind == SC_GLOBAL   ? "rounded"
                          : sc->kind == SC_FN     ? (sc->primitive ? "rounded,dashed,filled" : "rounded,dashed")
                          : "dotted";
      fprintf(d->out, "%*sgraph [label=\"%s\", style=\"%s\"%s];\n", pad, "", sc->label, style,
              sc->primitive ? ", fillcolor=\"#f3f8fd\"" : "");
      vec_push(st, (uint64_t)s << 1 | 1);
    }
    for (uint32_t k = node_start[s]; k < node_start[s + 1]; k++)
      fprintf(d->out, "%*s%s\n", pad, "", d->nodes.data[nodes[k]].text);
    for (uint32_t k = kid_start[s + 1]; k-- > kid_start[s];) vec_push(st, (uint64_t)kids[k] << 1);
  }
  vec_free(st);
  mem_free(kid_start);
  mem_free(kids);
  mem_free(node_start);
  mem_free(nodes);
  mem_free(fill);
}

void dot_write(FILE *out, Module *m) {
  Dot d = {0};
  d.out = out;
  d.m = m;
  scope_new(&d, NONE, SC_ROOT, mem_strdup(""));
  if (m->expr) {
    draw_function(&d, NULL, 0, m->expr, 0, "result");
  } else {
    const Function *main_fn = an_find_def(m, "main");
    if (main_fn) draw_function(&d, main_fn->params, main_fn->nparams, main_fn->body, 0, "@main result");
    for (uint32_t i = 0; i < m->ndefs; i++) {
      const GlobalDef *g = m->defs[i];
      if (g->fn == main_fn) continue;
      Str l = {0};
      str_put(&l, "@");
      str_esc(&l, g->name, 60);
      uint32_t sc = scope_new(&d, 0, SC_GLOBAL, str_take(&l));
      draw_function(&d, g->fn->params, g->fn->nparams, g->fn->body, sc, "result");
    }
  }
  Str name = {0};
  str_esc(&name, m->src ? m->src->name : "relay", 120);
  fprintf(out, "digraph \"%s\" {\n", name.p ? name.p : "");
  mem_free(name.p);
  fputs("  graph [newrank=true, rankdir=TB, nodesep=0.25, ranksep=0.35, "
        "fontname=\"Helvetica\", fontsize=11];\n"
        "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10, "
        "height=0.3, margin=\"0.08,0.04\"];\n"
        "  edge [fontname=\"Helvetica\", fontsize=8, fontcolor=\"#555555\", color=\"#777777\", "
        "arrowsize=0.6];\n",
        out);
  write_scopes(&d);
  for (size_t i = 0; i < d.edges.len; i++) {
    fprintf(out, "  %s\n", d.edges.data[i]);
    mem_free(d.edges.data[i]);
  }
  fputs("}\n", out);
  for (size_t i = 0; i < d.nodes.len; i++) mem_free(d.nodes.data[i].text);
  for (size_t i = 0; i < d.scopes.len; i++) mem_free(d.scopes.data[i].label);
  vec_free(d.nodes);
  vec_free(d.edges);
  vec_free(d.scopes);
}
