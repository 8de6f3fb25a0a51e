/* parser/parse_build.c — AST construction for the grammar actions of
 * parser/relay.y (see parse_build.h for the list and chain disciplines).
 *
 * Everything is carved from the module arena; the only heap memory is the
 * shared scratch stack, reused across lists. Checks that belong to the syntax
 * (dtype names, the dtype-prefix rule of §4.2, projection indices, extern
 * types without constructors) are reported here with the node's span; the
 * helpers always return a well-formed node so a partial tree stays walkable.
 */
#include "parser/parse_build.h"

#include <string.h>

/* ------------------------------------------------------------------ lists */

static void scratch_truncate(Parser *p, uint32_t len) {
  if (p->scratch.len > len) p->scratch.len = len;
}

PList pb_list1(Parser *p, void *item) {
  PList l = {(uint32_t)p->scratch.len, 1};
  vec_push(p->scratch, item);
  return l;
}

PList pb_list_add(Parser *p, PList l, void *item) {
  scratch_truncate(p, l.start + l.n);
  vec_push(p->scratch, item);
  l.n++;
  return l;
}

FList pb_freeze(Parser *p, PList l) {
  FList f = {NULL, l.n};
  if (l.n) {
    size_t bytes = l.n * sizeof(void *);
    f.v = arena_alloc_aligned(p->m->arena, bytes, sizeof(void *));
    memcpy(f.v, p->scratch.data + l.start, bytes);
  }
  scratch_truncate(p, l.start);
  return f;
}

FList pb_empty(void) { return (FList){NULL, 0}; }

/* ------------------------------------------------------------------ names */

void pb_release(Parser *p) {
  vec_free(p->scratch);
  vec_free(p->defs);
  vec_free(p->types);
  mem_free(p->names);
  p->names = NULL;
  p->names_cap = p->names_len = 0;
}

static uint32_t name_hash(const char *s, uint32_t n) {
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static void names_grow(Parser *p) {
  uint32_t cap = p->names_cap ? p->names_cap * 2 : 1024;
  const char **t = mem_calloc(cap, sizeof *t);
  for (uint32_t i = 0; i < p->names_cap; i++) {
    const char *s = p->names[i];
    if (!s) continue;
    uint32_t j = name_hash(s, (uint32_t)strlen(s)) & (cap - 1);
    while (t[j]) j = (j + 1) & (cap - 1);
    t[j] = s;
  }
  mem_free(p->names);
  p->names = t;
  p->names_cap = cap;
}

/* The one arena copy of the spelling [s, s + n). */
static const char *intern(Parser *p, const char *s, uint32_t n) {
  if (2 * (p->names_len + 1) > p->names_cap) names_grow(p);
  uint32_t j = name_hash(s, n) & (p->names_cap - 1);
  for (const char *e; (e = p->names[j]); j = (j + 1) & (p->names_cap - 1))
    if (strncmp(e, s, n) == 0 && e[n] == 0) return e;
  const char *copy = arena_strndup(p->m->arena, s, n);
  p->names[j] = copy;
  p->names_len++;
  return copy;
}

const char *pb_name(Parser *p, Text t) { return intern(p, t.p, t.n); }

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '/';
}

/* The lexer has already checked the extent: identifiers and dots, with only
 * whitespace and comments between. An identifier cannot start with `/`, so
 * a `/` outside an identifier opens a comment. */
const char *pb_dotted_name(Parser *p, Text x) {
  if (x.n < 256) { /* the usual case: squeeze into a buffer, then intern */
    char buf[256];
    uint32_t n = 0;
    for (uint32_t i = 0; i < x.n; i++) {
      char c = x.p[i];
      if (!ident_char(c) && c != '.') { n = UINT32_MAX; break; }
      buf[n++] = c;
    }
    if (n != UINT32_MAX) return intern(p, buf, n);
  }
  char *out = arena_alloc_aligned(p->m->arena, x.n + 1, 1);
  uint32_t w = 0, i = 0;
  while (i < x.n) {
    char c = x.p[i];
    if (ident_char(c) && c != '/') {
      while (i < x.n && ident_char(x.p[i])) out[w++] = x.p[i++];
    } else if (c == '.') {
      out[w++] = c;
      i++;
    } else if (c == '/' && i + 1 < x.n && x.p[i + 1] == '/') {
      while (i < x.n && x.p[i] != '\n') i++;
    } else if (c == '/' && i + 1 < x.n && x.p[i + 1] == '*') {
      uint32_t depth = 1;
      for (i += 2; i < x.n && depth; i++) {
        if (x.p[i] == '/' && i + 1 < x.n && x.p[i + 1] == '*') depth++, i++;
        else if (x.p[i] == '*' && i + 1 < x.n && x.p[i + 1] == '/') depth--, i++;
      }
    } else {
      i++; /* whitespace */
    }
  }
  out[w] = 0;
  return out;
}

/* ------------------------------------------------------------ expressions */

Expr *pb_int(Parser *p, int64_t v, DType dt, Span sp) { return expr_scalar_int(p->m, dt, v, sp); }

Expr *pb_float(Parser *p, double v, DType dt, Span sp) {
  return expr_scalar_float(p->m, dt, v, sp);
}

Expr *pb_local(Parser *p, Text name, Span sp) {
  Expr *e = expr_new(p->m, EXPR_VAR, sp);
  e->var.name = pb_name(p, name);
  return e;
}

Expr *pb_global(Parser *p, Text name, Span sp) {
  Expr *e = expr_new(p->m, EXPR_GLOBAL, sp);
  e->global.name = pb_name(p, name);
  return e;
}

Expr *pb_graph_ref(Parser *p, uint32_t num, Span sp) {
  Expr *e = expr_new(p->m, EXPR_GRAPH_REF, sp);
  e->graph_ref.num = num;
  return e;
}

Expr *pb_meta(Parser *p, const char *key, uint32_t keylen, uint32_t index, Span sp) {
  Expr *e = expr_new(p->m, EXPR_META, sp);
  e->meta.key = arena_strndup(p->m->arena, key, keylen);
  e->meta.index = index;
  return e;
}

Expr *pb_name_expr(Parser *p, const char *name, Span sp) {
  Expr *e = expr_new(p->m, EXPR_NAME, sp);
  e->name.name = name;
  return e;
}

Expr *pb_unit(Parser *p, Span sp) { return expr_new(p->m, EXPR_TUPLE, sp); }

Expr *pb_tuple(Parser *p, FList fields, Span sp) {
  Expr *e = expr_new(p->m, EXPR_TUPLE, sp);
  e->tuple.fields = (Expr **)fields.v;
  e->tuple.n = fields.n;
  return e;
}

Expr *pb_proj(Parser *p, Expr *tuple, int64_t index, Span index_span, Span sp) {
  Expr *e = expr_new(p->m, EXPR_PROJ, sp);
  e->proj.tuple = tuple;
  if (index < 0 || index > (int64_t)UINT32_MAX) {
    diag_error(p->d, index_span, "tuple index must be a non-negative integer");
    index = 0;
  }
  e->proj.index = (uint32_t)index;
  return e;
}

/* A meta reference written as the last argument names an attribute object
 * when its key is an attribute class (relay.attrs.*, *Attrs). */
static bool is_attrs_key(const char *k) {
  size_t n = strlen(k);
  return strncmp(k, "relay.attrs.", 12) == 0 || strncmp(k, "attrs.", 6) == 0 ||
         (n >= 5 && strcmp(k + n - 5, "Attrs") == 0);
}

void pb_args(Parser *p, FList args, Attrs *attrs) {
  p->args = args;
  p->args_attrs = attrs;
}

Expr *pb_call(Parser *p, Expr *fn, FList args, Attrs *attrs, Span sp) {
  Expr *e = expr_new(p->m, EXPR_CALL, sp);
  if (!attrs && args.n) {
    Expr *last = ((Expr **)args.v)[args.n - 1];
    if (last->kind == EXPR_META && is_attrs_key(last->meta.key)) {
      attrs = arena_alloc(p->m->arena, sizeof *attrs);
      attrs->meta_key = last->meta.key;
      attrs->meta_index = last->meta.index;
      args.n--;
    }
  }
  e->call.fn = fn;
  e->call.args = args.n ? (Expr **)args.v : NULL;
  e->call.nargs = args.n;
  e->call.attrs = attrs;
  return e;
}

Expr *pb_binop(Parser *p, const char *op, Span op_span, Expr *a, Expr *b) {
  Expr *args[2] = {a, b};
  return expr_call(p->m, pb_name_expr(p, op, op_span), args, 2, NULL, span_join(a->span, b->span));
}

Expr *pb_fn(Parser *p, Function *f) {
  Expr *e = expr_new(p->m, EXPR_FN, f->span);
  e->fn = f;
  for (uint32_t i = 0; i < f->nparams; i++)
    if (!f->params[i]->annot) p->m->literal_params_unannotated = true;
  return e;
}

Expr *pb_if(Parser *p, Expr *c, Expr *t, Expr *f, Span sp) {
  Expr *e = expr_new(p->m, EXPR_IF, sp);
  e->if_.cond = c;
  e->if_.then_ = t;
  e->if_.else_ = f;
  return e;
}

Expr *pb_ref(Parser *p, ExprKind kind, Expr *a, Expr *b, Span sp) {
  Expr *e = expr_new(p->m, kind, sp);
  if (kind == EXPR_REF_WRITE) {
    e->ref_write.ref = a;
    e->ref_write.value = b;
  } else {
    e->ref.arg = a;
  }
  return e;
}

Clause *pb_clause(Parser *p, Pattern *pat, Expr *body, Span sp) {
  Clause *c = arena_alloc(p->m->arena, sizeof *c);
  c->pattern = pat;
  c->body = body;
  c->span = sp;
  return c;
}

Expr *pb_match(Parser *p, bool partial, Expr *scrut, FList clauses, Span sp) {
  Expr *e = expr_new(p->m, EXPR_MATCH, sp);
  e->match.scrut = scrut;
  e->match.partial = partial;
  e->match.nclauses = clauses.n;
  if (clauses.n) {
    e->match.clauses = arena_alloc(p->m->arena, clauses.n * sizeof(Clause));
    for (uint32_t i = 0; i < clauses.n; i++) e->match.clauses[i] = *(Clause *)clauses.v[i];
  }
  return e;
}

/* --------------------------------------------------------- binding chains */

Expr *pb_let(Parser *p, Text name, Span name_span, Type *annot, Expr *value, Span sp) {
  Expr *e = expr_new(p->m, EXPR_LET, sp);
  e->let.var = var_new(p->m, pb_name(p, name), name_span, annot);
  e->let.value = value;
  return e;
}

Expr *pb_seq(Parser *p, Expr *value, Span sp) {
  Expr *e = expr_new(p->m, EXPR_LET, sp);
  e->let.var = var_new(p->m, "", value->span, type_new(p->m, TYPE_INCOMPLETE, value->span));
  e->let.value = value;
  return e;
}

Expr *pb_graph_bind(Parser *p, uint32_t num, Expr *value, Span sp) {
  Expr *e = expr_new(p->m, EXPR_GRAPH_BIND, sp);
  e->graph_bind.num = num;
  e->graph_bind.value = value;
  return e;
}

Expr *pb_free_var(Parser *p, Text name, Span name_span, Type *annot, Span sp) {
  Expr *e = expr_new(p->m, EXPR_FREE_VAR, sp);
  e->free_var.var = var_new(p->m, pb_name(p, name), name_span, annot);
  e->free_var.var->is_free = true;
  return e;
}

Expr *pb_set_body(Expr *item, Expr *body) {
  switch (item->kind) {
  case EXPR_LET: item->let.body = body; break;
  case EXPR_GRAPH_BIND: item->graph_bind.body = body; break;
  case EXPR_FREE_VAR: item->free_var.body = body; break;
  default: UNREACHABLE();
  }
  return item;
}

Chain pb_chain1(Expr *item) { return (Chain){item, item}; }

Chain pb_chain_add(Chain c, Expr *item) {
  pb_set_body(c.last, item);
  c.last = item;
  return c;
}

Expr *pb_chain_close(Chain c, Expr *tail) {
  pb_set_body(c.last, tail);
  return c.head;
}

/* ------------------------------------------------- functions, parameters */

FParams *pb_fparams(Parser *p, FList params, Attrs *attrs) {
  FParams *f = arena_alloc(p->m->arena, sizeof *f);
  f->params = params;
  f->attrs = attrs;
  return f;
}

Var *pb_param(Parser *p, Text name, Span sp, Attrs *attrs, Type *annot) {
  return var_new_with_attrs(p->m, pb_name(p, name), sp, annot, attrs);
}

Function *pb_function(Parser *p, FList tparams, FList params, Attrs *attrs, Type *ret,
                      Expr *body, Span sp) {
  Function *f = arena_alloc(p->m->arena, sizeof *f);
  f->span = sp;
  f->tparams = (TypeParam **)tparams.v;
  f->ntparams = tparams.n;
  f->params = (Var **)params.v;
  f->nparams = params.n;
  f->attrs = attrs;
  f->ret_annot = ret;
  f->body = body;
  return f;
}

TypeParam *pb_tparam(Parser *p, Text name, Span sp) {
  return type_param_new(p->m, pb_name(p, name), sp);
}

void pb_def(Parser *p, Text name, Span name_span, Function *f) {
  GlobalDef *g = arena_alloc(p->m->arena, sizeof *g);
  g->name = pb_name(p, name);
  g->span = name_span;
  g->fn = f;
  vec_push(p->defs, g);
}

/* ------------------------------------------------------------- attributes */

Attr *pb_attr(Parser *p, const char *key, AttrValue *v, Span sp) {
  Attr *a = arena_alloc(p->m->arena, sizeof *a);
  a->key = key;
  a->value = v;
  a->span = sp;
  return a;
}

Attrs *pb_attrs(Parser *p, FList items) {
  Attrs *a = arena_alloc(p->m->arena, sizeof *a);
  a->n = items.n;
  if (items.n) {
    a->items = arena_alloc(p->m->arena, items.n * sizeof(Attr));
    for (uint32_t i = 0; i < items.n; i++) a->items[i] = *(Attr *)items.v[i];
  }
  return a;
}

AttrValue *pb_av(Parser *p, AttrValueKind kind, Span sp) { return attr_value_new(p->m, kind, sp); }

AttrValue *pb_av_name(Parser *p, const char *name, Span sp) {
  if (strcmp(name, "None") == 0 || strcmp(name, "nullptr") == 0) return pb_av(p, AV_NONE, sp);
  return pb_av_expr(p, pb_name_expr(p, name, sp));
}

AttrValue *pb_av_expr(Parser *p, Expr *e) {
  AttrValue *v = pb_av(p, AV_EXPR, e->span);
  v->expr = e;
  return v;
}

AttrValue *pb_av_array(Parser *p, FList items, Span sp) {
  AttrValue *v = pb_av(p, AV_ARRAY, sp);
  v->arr.items = (AttrValue **)items.v;
  v->arr.n = items.n;
  return v;
}

/* ------------------------------------------------------------------ types */

static bool has_dtype_prefix(Text t) {
  static const char *const prefixes[] = {"int", "uint", "float", "bool"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t n = strlen(prefixes[i]);
    if (t.n >= n && memcmp(t.p, prefixes[i], n) == 0) return true;
  }
  return false;
}

static Type *tensor_type(Parser *p, DType dt, uint32_t ndim, Dim *dims, Span sp) {
  Type *t = type_new(p->m, TYPE_TENSOR, sp);
  t->tensor.dtype = dt;
  t->tensor.ndim = ndim;
  t->tensor.dims = dims;
  return t;
}

Type *pb_type_incomplete(Parser *p, Span sp) { return type_new(p->m, TYPE_INCOMPLETE, sp); }

/* §4.2: identifiers starting with int/uint/float/bool are dtypes (and must be
 * valid ones); relayc also reads bfloat16, handle and the float8 names. */
Type *pb_type_ident(Parser *p, Text name, Span sp) {
  DType dt;
  bool is_dtype = dtype_parse(name.p, name.n, &dt);
  if (is_dtype) return tensor_type(p, dt, 0, NULL, sp);
  if (has_dtype_prefix(name)) {
    diag_error(p->d, sp, "invalid dtype \"%.*s\"", (int)name.n, name.p);
    return pb_type_incomplete(p, sp);
  }
  Type *t = type_new(p->m, TYPE_NAME, sp);
  t->name.name = pb_name(p, name);
  return t;
}

Type *pb_type_app(Parser *p, Text name, FList args, Span sp) {
  DType dt;
  if (has_dtype_prefix(name) || dtype_parse(name.p, name.n, &dt)) {
    diag_error(p->d, sp, "dtype \"%.*s\" takes no type arguments", (int)name.n, name.p);
    return pb_type_incomplete(p, sp);
  }
  Type *t = type_new(p->m, TYPE_NAME, sp);
  t->name.name = pb_name(p, name);
  t->name.args = (Type **)args.v;
  t->name.nargs = args.n;
  t->name.has_brackets = true;
  return t;
}

Type *pb_type_tensor(Parser *p, FList dims, Text dtype, Span dtype_span, Span sp) {
  DType dt = DT_F32;
  if (!dtype_parse(dtype.p, dtype.n, &dt))
    diag_error(p->d, dtype_span, "unknown dtype \"%.*s\"", (int)dtype.n, dtype.p);
  Dim *d = arena_alloc(p->m->arena, (dims.n ? dims.n : 1) * sizeof(Dim));
  for (uint32_t i = 0; i < dims.n; i++) d[i] = *(Dim *)dims.v[i];
  return tensor_type(p, dt, dims.n, d, sp);
}

Type *pb_type_tuple(Parser *p, FList fields, Span sp) {
  Type *t = type_new(p->m, TYPE_TUPLE, sp);
  t->tuple.fields = (Type **)fields.v;
  t->tuple.n = fields.n;
  return t;
}

Type *pb_type_func(Parser *p, FList tparams, FList args, Type *ret, Span sp) {
  Type *t = type_new(p->m, TYPE_FUNC, sp);
  t->func.tparams = (TypeParam **)tparams.v;
  t->func.ntparams = tparams.n;
  t->func.args = (Type **)args.v;
  t->func.nargs = args.n;
  t->func.ret = ret;
  return t;
}

Type *pb_type_ref(Parser *p, Type *inner, Span sp) {
  Type *t = type_new(p->m, TYPE_REF, sp);
  t->ref.inner = inner;
  return t;
}

Dim *pb_dim_int(Parser *p, int64_t v, DType dt) {
  Dim *d = arena_alloc(p->m->arena, sizeof *d);
  *d = (Dim){DIM_INT, dt, v};
  return d;
}

Dim *pb_dim_any(Parser *p) {
  Dim *d = arena_alloc(p->m->arena, sizeof *d);
  *d = (Dim){DIM_ANY, DT_I32, -1};
  return d;
}

Dim *pb_dim_meta(Parser *p, const char *key, uint32_t keylen, uint32_t index, Span sp) {
  Dim *d = arena_alloc(p->m->arena, sizeof *d);
  *d = (Dim){DIM_SYM, DT_I32, index};
  if (!(keylen == 11 && memcmp(key, "tir.SizeVar", 11) == 0) &&
      !(keylen == 7 && memcmp(key, "tir.Var", 7) == 0))
    diag_error(p->d, sp, "a dimension can only refer to meta[tir.SizeVar][i], not meta[%.*s]",
               (int)keylen, key);
  return d;
}

/* --------------------------------------------------------------- patterns */

Pattern *pb_pat_wild(Parser *p, Span sp) { return pattern_new(p->m, PAT_WILDCARD, sp); }

Pattern *pb_pat_var(Parser *p, Text name, Span name_span, Type *annot, Span sp) {
  Pattern *pat = pattern_new(p->m, PAT_VAR, sp);
  pat->var = var_new(p->m, pb_name(p, name), name_span, annot);
  return pat;
}

Pattern *pb_pat_ctor(Parser *p, Text name, FList args, Span sp) {
  Pattern *pat = pattern_new(p->m, PAT_CTOR, sp);
  pat->ctor.name = pb_name(p, name);
  pat->ctor.args = (Pattern **)args.v;
  pat->ctor.nargs = args.n;
  return pat;
}

Pattern *pb_pat_tuple(Parser *p, FList fields, Span sp) {
  Pattern *pat = pattern_new(p->m, PAT_TUPLE, sp);
  pat->tuple.fields = (Pattern **)fields.v;
  pat->tuple.n = fields.n;
  return pat;
}

/* -------------------------------------------------------- type definitions */

Ctor *pb_ctor(Parser *p, Text name, FList fields, Span sp) {
  Ctor *c = arena_alloc(p->m->arena, sizeof *c);
  c->name = pb_name(p, name);
  c->span = sp;
  c->fields = (Type **)fields.v;
  c->nfields = fields.n;
  return c;
}

TypeDef *pb_typedef(Parser *p, Text name, Span name_span, FList tparams, FList ctors,
                    bool has_body, bool is_extern, Span sp) {
  TypeDef *td = arena_alloc(p->m->arena, sizeof *td);
  td->name = pb_name(p, name);
  td->span = name_span;
  td->tparams = (TypeParam **)tparams.v;
  td->ntparams = tparams.n;
  td->ctors = (Ctor **)ctors.v;
  td->nctors = ctors.n;
  td->has_body = has_body;
  td->is_extern = is_extern;
  for (uint32_t i = 0; i < ctors.n; i++) {
    td->ctors[i]->owner = td;
    td->ctors[i]->tag = i;
  }
  if (is_extern && ctors.n) diag_error(p->d, sp, "an extern type cannot have constructors");
  vec_push(p->types, td);
  return td;
}
