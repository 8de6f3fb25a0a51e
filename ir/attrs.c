/* ir/attrs.c — attribute values: canonical text, parsing it back, equality.
 *
 * The canonical text (spec/text-format.md §7.8) is what the printer writes
 * after `key=`; attr_value_parse reads exactly that language (and is used
 * for the schema defaults of ops/op_schemas.def), so print ∘ parse is the
 * identity on canonical text and parse ∘ print preserves attr_value_equal.
 * Doubles print as the shortest %g text that reads back to the same double,
 * so no precision is lost on a round trip (TVM's 6-digit %g would).
 * Nested arrays are walked recursively with a depth guard.
 */
#include "ir/attrs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"

/* Deepest array nesting attr_value_parse accepts. */
#define ATTR_MAX_DEPTH 64

/* ---------------------------------------------------------------- doubles */

char *format_shortest_double(double v, bool as_float, char *buf) {
  if (isnan(v)) return strcpy(buf, "nan");
  if (isinf(v)) return strcpy(buf, v < 0 ? "-inf" : "inf");
  int maxp = as_float ? 9 : 17;
  float target = (float)v;
  /* Start at TVM's %g precision (6) so every value TVM prints exactly keeps
   * TVM's spelling (`1000`, not `1e+03`); add digits only when needed. */
  for (int p = 6; p <= maxp; p++) {
    snprintf(buf, 32, "%.*g", p, v);
    if (as_float ? strtof(buf, NULL) == target : strtod(buf, NULL) == v) return buf;
  }
  snprintf(buf, 32, "%.*g", maxp, v);
  return buf;
}

/* --------------------------------------------------------------- printing */

static void print_string(FILE *out, const char *s, uint32_t n) {
  fputc('"', out);
  for (uint32_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\t': fputs("\\t", out); break;
    case '\r': fputs("\\r", out); break;
    case '\n': fputs("\\n", out); break;
    default:
      if (c >= 0x20 && c < 0x7f) fputc(c, out);
      else fprintf(out, "\\x%02x", c);
    }
  }
  fputc('"', out);
}

static void print_int(FILE *out, int64_t v, DType dt) {
  fprintf(out, "%lld", (long long)v);
  if (dt.code == DT_INT && dt.bits == 64) fputs("i64", out);
  else if (dt.code == DT_INT && dt.bits == 16) fputs("i16", out);
}

static void print_float(FILE *out, double v, DType dt) {
  char buf[32];
  fputs(format_shortest_double(v, false, buf), out);
  if (dt.code == DT_FLOAT && dt.bits == 16) fputs("f16", out);
  else if (dt.code == DT_FLOAT && dt.bits == 64) fputs("f64", out);
  else fputc('f', out);
}

/* A rank-0 constant of a literal dtype prints as that literal; else <expr>. */
static void print_expr_value(FILE *out, const Expr *e) {
  const ConstTensor *c = e && e->kind == EXPR_CONST ? e->constant : NULL;
  if (!c || c->ndim != 0) {
    fputs("<expr>", out);
    return;
  }
  DType t = c->dtype;
  char buf[32];
  if (dtype_is_bool(t)) {
    fputs(const_scalar_as_int(c) ? "True" : "False", out);
  } else if (t.code == DT_INT && t.lanes == 1 && (t.bits == 16 || t.bits == 32 || t.bits == 64)) {
    print_int(out, const_scalar_as_int(c), t);
  } else if (t.code == DT_FLOAT && t.lanes == 1 && (t.bits == 16 || t.bits == 32 || t.bits == 64)) {
    fputs(format_shortest_double(const_scalar_as_double(c), t.bits != 64, buf), out);
    fputs(t.bits == 16 ? "f16" : t.bits == 64 ? "f64" : "f", out);
  } else {
    fputs("<expr>", out);
  }
}

void attr_value_print(FILE *out, const AttrValue *v) {
  if (!v) {
    fputs("None", out);
    return;
  }
  if (stack_exhausted()) {
    fputs("<nested too deeply>", out);
    return;
  }
  switch (v->kind) {
  case AV_INT: print_int(out, v->i.value, v->i.dtype); break;
  case AV_FLOAT: print_float(out, v->f.value, v->f.dtype); break;
  case AV_BOOL: fputs(v->b ? "True" : "False", out); break;
  case AV_STRING: print_string(out, v->s.chars, v->s.len); break;
  case AV_NONE: fputs("None", out); break;
  case AV_ANY: fputc('?', out); break;
  case AV_META: fprintf(out, "meta[%s][%u]", v->meta.key, v->meta.index); break;
  case AV_EXPR: print_expr_value(out, v->expr); break;
  case AV_ARRAY:
    fputc('[', out);
    for (uint32_t i = 0; i < v->arr.n; i++) {
      if (i) fputs(", ", out);
      attr_value_print(out, v->arr.items[i]);
    }
    fputc(']', out);
    break;
  }
}

/* ---------------------------------------------------------------- parsing */

typedef struct AttrParser {
  Module *m;
  const char *p;
} AttrParser;

static void skip_ws(AttrParser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static bool starts_word(const char *p, const char *w) {
  size_t n = strlen(w);
  return strncmp(p, w, n) == 0 && !(isalnum((unsigned char)p[n]) || p[n] == '_');
}

static bool is_num_char(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}

/* Reads a run of number characters into buf (NUL-terminated); false if too long. */
static bool read_run(AttrParser *ps, char *buf, size_t cap) {
  size_t n = 0;
  while (is_num_char(*ps->p)) {
    if (n + 1 >= cap) return false;
    buf[n++] = *ps->p++;
  }
  buf[n] = 0;
  return true;
}

static AttrValue *make_float(AttrParser *ps, double v, DType dt) {
  AttrValue *r = attr_value_new(ps->m, AV_FLOAT, span_make(0, 0));
  r->f.value = v;
  r->f.dtype = dt;
  return r;
}

static bool float_width(const char *w, DType *dt) {
  if (!*w || strcmp(w, "32") == 0) *dt = DT_F32;
  else if (strcmp(w, "16") == 0) *dt = DT_F16;
  else if (strcmp(w, "64") == 0) *dt = DT_F64;
  else return false;
  return true;
}

static AttrValue *parse_float_body(AttrParser *ps, const char *body, bool neg, const char *width) {
  DType dt;
  if (!float_width(width, &dt) || !*body) return NULL;
  char *end;
  errno = 0;
  double v = strtod(body, &end);
  if (*end || errno == ERANGE) return NULL;
  return make_float(ps, neg ? -v : v, dt);
}

static AttrValue *parse_int_body(AttrParser *ps, const char *body, bool neg, const char *width,
                                 bool has_suffix) {
  if (!*body) return NULL;
  for (const char *q = body; *q; q++)
    if (*q < '0' || *q > '9') return NULL;
  char *end;
  errno = 0;
  unsigned long long mag = strtoull(body, &end, 10);
  if (errno == ERANGE || mag > (unsigned long long)INT64_MAX + (neg ? 1u : 0u)) return NULL;
  int64_t v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  DType dt = DT_I32;
  if (strcmp(width, "64") == 0) dt = DT_I64;
  else if (strcmp(width, "16") == 0) dt = DT_I16;
  else if (*width && strcmp(width, "32") != 0) return NULL;
  int64_t lo = dt.bits == 16 ? INT16_MIN : INT32_MIN, hi = dt.bits == 16 ? INT16_MAX : INT32_MAX;
  if (dt.bits != 64 && (v < lo || v > hi)) {
    if (*width || has_suffix) return NULL;
    dt = DT_I64; /* an unsuffixed integer outside int32 is int64 */
  }
  AttrValue *r = attr_value_new(ps->m, AV_INT, span_make(0, 0));
  r->i.value = v;
  r->i.dtype = dt;
  return r;
}

/* number := '-'? (inff | nanf | body (('i'|'f') width)?) */
static AttrValue *parse_number(AttrParser *ps) {
  bool neg = false;
  if (*ps->p == '-') {
    neg = true;
    ps->p++;
  }
  if (starts_word(ps->p, "inff")) {
    ps->p += 4;
    return make_float(ps, neg ? -INFINITY : INFINITY, DT_F32);
  }
  if (starts_word(ps->p, "nanf")) {
    ps->p += 4;
    return make_float(ps, NAN, DT_F32);
  }
  if (!(*ps->p >= '0' && *ps->p <= '9')) return NULL;
  char body[64], width[8] = "";
  if (!read_run(ps, body, sizeof body)) return NULL;
  char suffix = *ps->p;
  if (suffix == 'f' || suffix == 'i') {
    ps->p++;
    if (!read_run(ps, width, sizeof width)) return NULL;
  }
  if (isalnum((unsigned char)*ps->p) || *ps->p == '_') return NULL;
  if (suffix == 'f') return parse_float_body(ps, body, neg, width);
  return parse_int_body(ps, body, neg, width, suffix == 'i');
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* string := '"' (char | escape)* '"' with escapes \" \\ \t \r \n \xHH. */
static AttrValue *parse_string(AttrParser *ps) {
  const char *start = ++ps->p;
  while (*ps->p && *ps->p != '"') ps->p += (*ps->p == '\\' && ps->p[1]) ? 2 : 1;
  if (*ps->p != '"') return NULL;
  char *out = arena_alloc(ps->m->arena, (size_t)(ps->p - start) + 1);
  size_t n = 0;
  for (const char *q = start; q < ps->p; q++) {
    if (*q != '\\' || q + 1 >= ps->p) {
      out[n++] = *q;
      continue;
    }
    char e = *++q;
    int h1, h2;
    if (e == 'n') out[n++] = '\n';
    else if (e == 't') out[n++] = '\t';
    else if (e == 'r') out[n++] = '\r';
    else if (e == '"' || e == '\\') out[n++] = e;
    else if (e == 'x' && q + 2 < ps->p && (h1 = hex_value(q[1])) >= 0 && (h2 = hex_value(q[2])) >= 0) {
      out[n++] = (char)(h1 * 16 + h2);
      q += 2;
    } else {
      out[n++] = '\\'; /* a lone backslash is an ordinary character */
      q--;
    }
  }
  out[n] = 0;
  ps->p++;
  AttrValue *r = attr_value_new(ps->m, AV_STRING, span_make(0, 0));
  r->s.chars = out;
  r->s.len = (uint32_t)n;
  return r;
}

/* meta := 'meta' '[' key ']' '[' index ']' */
static AttrValue *parse_meta(AttrParser *ps) {
  ps->p += 4;
  if (*ps->p++ != '[') return NULL;
  const char *k = ps->p;
  while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.') ps->p++;
  size_t klen = (size_t)(ps->p - k);
  if (!klen || *ps->p++ != ']' || *ps->p++ != '[') return NULL;
  if (!(*ps->p >= '0' && *ps->p <= '9')) return NULL;
  char *end;
  errno = 0;
  unsigned long idx = strtoul(ps->p, &end, 10);
  if (errno == ERANGE || idx > UINT32_MAX || *end != ']') return NULL;
  ps->p = end + 1;
  AttrValue *r = attr_value_new(ps->m, AV_META, span_make(0, 0));
  r->meta.key = arena_strndup(ps->m->arena, k, klen);
  r->meta.index = (uint32_t)idx;
  return r;
}

static AttrValue *parse_value(AttrParser *ps, int depth);

/* array := '[' (value (',' value)*)? ']' */
static AttrValue *parse_array(AttrParser *ps, int depth) {
  if (depth >= ATTR_MAX_DEPTH) return NULL;
  ps->p++;
  VEC(AttrValue *) items = {0};
  bool ok = true;
  skip_ws(ps);
  if (*ps->p != ']') {
    for (;;) {
      AttrValue *v = parse_value(ps, depth + 1);
      if (!v) {
        ok = false;
        break;
      }
      vec_push(items, v);
      skip_ws(ps);
      if (*ps->p != ',') break;
      ps->p++;
    }
  }
  AttrValue *r = NULL;
  if (ok && *ps->p == ']') {
    ps->p++;
    r = attr_value_new(ps->m, AV_ARRAY, span_make(0, 0));
    r->arr.n = (uint32_t)items.len;
    r->arr.items = items.len ? arena_memdup(ps->m->arena, items.data, items.len * sizeof *items.data) : NULL;
  }
  vec_free(items);
  return r;
}

static AttrValue *parse_value(AttrParser *ps, int depth) {
  skip_ws(ps);
  char c = *ps->p;
  if (c == '[') return parse_array(ps, depth);
  if (c == '"') return parse_string(ps);
  if (c == '-' || (c >= '0' && c <= '9') || starts_word(ps->p, "inff") || starts_word(ps->p, "nanf"))
    return parse_number(ps);
  if (c == '?') {
    ps->p++;
    return attr_value_new(ps->m, AV_ANY, span_make(0, 0));
  }
  AttrValue *r = NULL;
  if (starts_word(ps->p, "True") || starts_word(ps->p, "False")) {
    r = attr_value_new(ps->m, AV_BOOL, span_make(0, 0));
    r->b = c == 'T';
    ps->p += r->b ? 4 : 5;
  } else if (starts_word(ps->p, "None") || starts_word(ps->p, "nullptr")) {
    ps->p += c == 'N' ? 4 : 7;
    r = attr_value_new(ps->m, AV_NONE, span_make(0, 0));
  } else if (strncmp(ps->p, "meta[", 5) == 0) {
    r = parse_meta(ps);
  }
  return r;
}

AttrValue *attr_value_parse(Module *m, const char *text) {
  if (!m || !text) return NULL;
  AttrParser ps = {m, text};
  AttrValue *v = parse_value(&ps, 0);
  if (!v) return NULL;
  skip_ws(&ps);
  return *ps.p ? NULL : v;
}

/* --------------------------------------------------------------- equality */

static bool same_double(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

bool attr_value_equal(const AttrValue *a, const AttrValue *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  if (stack_exhausted()) return false;
  switch (a->kind) {
  case AV_INT: return a->i.value == b->i.value;
  case AV_FLOAT: return same_double(a->f.value, b->f.value);
  case AV_BOOL: return a->b == b->b;
  case AV_STRING: return a->s.len == b->s.len && memcmp(a->s.chars, b->s.chars, a->s.len) == 0;
  case AV_NONE:
  case AV_ANY: return true;
  case AV_META: return a->meta.index == b->meta.index && strcmp(a->meta.key, b->meta.key) == 0;
  case AV_EXPR: return a->expr == b->expr;
  case AV_ARRAY:
    if (a->arr.n != b->arr.n) return false;
    for (uint32_t i = 0; i < a->arr.n; i++)
      if (!attr_value_equal(a->arr.items[i], b->arr.items[i])) return false;
    return true;
  }
  return false;
}

/* Exact equality for memo keys: floats bit for bit and literal dtypes too
 * (a relation may round a float attribute or read an integer's dtype). */
static bool av_exact(const AttrValue *a, const AttrValue *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  if (stack_exhausted()) return false;
  switch (a->kind) {
  case AV_INT: return a->i.value == b->i.value && dtype_eq(a->i.dtype, b->i.dtype);
  case AV_FLOAT: return memcmp(&a->f.value, &b->f.value, sizeof a->f.value) == 0 && dtype_eq(a->f.dtype, b->f.dtype);
  case AV_BOOL: return a->b == b->b;
  case AV_STRING: return a->s.len == b->s.len && memcmp(a->s.chars, b->s.chars, a->s.len) == 0;
  case AV_NONE:
  case AV_ANY: return true;
  case AV_ARRAY:
    if (a->arr.n != b->arr.n) return false;
    for (uint32_t i = 0; i < a->arr.n; i++)
      if (!av_exact(a->arr.items[i], b->arr.items[i])) return false;
    return true;
  case AV_META: return a->meta.index == b->meta.index && strcmp(a->meta.key, b->meta.key) == 0;
  default: return false; /* expressions: only the same value (a == b above) */
  }
}

bool attrs_equal_exact(const Attrs *a, const Attrs *b) {
  if (a == b) return true;
  if (!a || !b || a->n != b->n || a->meta_index != b->meta_index) return false;
  if ((a->meta_key == NULL) != (b->meta_key == NULL) || (a->meta_key && strcmp(a->meta_key, b->meta_key) != 0))
    return false;
  for (uint32_t i = 0; i < a->n; i++) {
    const Attr *x = &a->items[i], *y = &b->items[i];
    if (x->is_default != y->is_default || strcmp(x->key, y->key) != 0 || !av_exact(x->value, y->value)) return false;
  }
  return true;
}

/* ----------------------------------------------------------------- lookup */

const AttrValue *attrs_get(const Attrs *a, const char *key) {
  if (!a || !key) return NULL;
  for (uint32_t i = 0; i < a->n; i++)
    if (a->items[i].key && strcmp(a->items[i].key, key) == 0) return a->items[i].value;
  return NULL;
}

/* ------------------------------------------------------ attribute lists */

/* End of the value starting at p: the first top-level ',' or NUL, skipping
 * brackets and quoted strings. */
static const char *value_end(const char *p) {
  int depth = 0;
  for (; *p; p++) {
    if (*p == '"') {
      for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1]) p++;
      if (!*p) return p;
    } else if (*p == '[' || *p == '(') depth++;
    else if (*p == ']' || *p == ')') depth--;
    else if (*p == ',' && depth == 0) return p;
  }
  return p;
}

static bool is_ident(const char *s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-')) return false;
  return true;
}

Attrs *attrs_parse_list(Module *m, const char *text, bool bare_strings, const char **err) {
  Attrs *out = arena_alloc(m->arena, sizeof *out);
  VEC(Attr) items = {0};
  const char *p = text ? text : "";
  const char *msg = NULL;
  while (!msg) {
    while (isspace((unsigned char)*p)) p++;
    if (!*p) break;
    const char *key = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '.')) p++;
    size_t klen = (size_t)(p - key);
    while (isspace((unsigned char)*p)) p++;
    if (klen == 0 || *p != '=') { msg = "expected key=value"; break; }
    p++;
    while (isspace((unsigned char)*p)) p++;
    const char *end = value_end(p);
    size_t vlen = (size_t)(end - p);
    while (vlen && isspace((unsigned char)p[vlen - 1])) vlen--;
    char *vtext = arena_strndup(m->arena, p, vlen);
    AttrValue *v = attr_value_parse(m, vtext);
    if (!v && bare_strings && is_ident(vtext, vlen)) v = attr_string(m, vtext);
    if (!v) { msg = "malformed value"; break; }
    Attr a = {arena_strndup(m->arena, key, klen), v, {0, 0}, false};
    vec_push(items, a);
    p = end;
    if (*p == ',') p++;
  }
  if (msg) {
    vec_free(items);
    if (err) *err = msg;
    return NULL;
  }
  out->n = (uint32_t)items.len;
  out->items = items.len ? arena_memdup(m->arena, items.data, items.len * sizeof(Attr)) : NULL;
  vec_free(items);
  return out;
}

AttrValue *attr_int(Module *m, int64_t v) {
  AttrValue *a = attr_value_new(m, AV_INT, (Span){0, 0});
  a->i.value = v;
  a->i.dtype = DT_I32;
  return a;
}

AttrValue *attr_float(Module *m, double v) {
  AttrValue *a = attr_value_new(m, AV_FLOAT, (Span){0, 0});
  a->f.value = v;
  a->f.dtype = DT_F32;
  return a;
}

AttrValue *attr_bool(Module *m, bool v) {
  AttrValue *a = attr_value_new(m, AV_BOOL, (Span){0, 0});
  a->b = v;
  return a;
}

AttrValue *attr_string(Module *m, const char *s) {
  AttrValue *a = attr_value_new(m, AV_STRING, (Span){0, 0});
  a->s.chars = arena_strdup(m->arena, s);
  a->s.len = (uint32_t)strlen(s);
  return a;
}

AttrValue *attr_int_array(Module *m, const int64_t *v, uint32_t n) {
  AttrValue *a = attr_value_new(m, AV_ARRAY, (Span){0, 0});
  a->arr.n = n;
  a->arr.items = arena_alloc(m->arena, (n ? n : 1) * sizeof *a->arr.items);
  for (uint32_t i = 0; i < n; i++) a->arr.items[i] = attr_int(m, v[i]);
  return a;
}

Attrs *attrs_with(Module *m, const Attrs *a, const char *key, AttrValue *v) {
  Attrs *out = arena_alloc(m->arena, sizeof *out);
  uint32_t n = a ? a->n : 0;
  out->items = arena_alloc(m->arena, (n + 1) * sizeof(Attr));
  if (n) memcpy(out->items, a->items, n * sizeof(Attr));
  out->n = n;
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(out->items[i].key, key) == 0) {
      out->items[i].value = v;
      out->items[i].is_default = false;
      return out;
    }
  out->items[out->n++] = (Attr){arena_strdup(m->arena, key), v, {0, 0}, false};
  return out;
}
