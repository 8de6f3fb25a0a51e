/* lexer/lexer.re — the re2c lexer for the Relay 0.0.5 text format (see lexer.h).
 *
 * The DFA reads through a bounds-checked peek (re2c's generic API with the
 * EOF rule): past `len` it sees a NUL sentinel and re2c asks YYLESSTHAN
 * whether that NUL is the real end, so NUL bytes inside the text are ordinary
 * bytes and nothing beyond the buffer is ever read. Block comments, strings
 * and `#[...]` are scanned by small C loops (nesting and escapes are not
 * regular); literal values are decoded by the helpers below, following the
 * exact rules of spec §2.6 (sign from a run of `-`, body `[0-9.eE+-]+`,
 * `i`/`f` suffix with width, int32 → int64 promotion without width digits)
 * plus relayc's extra `nanf`/`inff64`-style literals and string escapes.
 * `<= >= == != =>` are single tokens: the grammar needs them adjacent anyway.
 */
#include "lexer/lexer.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"

/*!re2c
  re2c:api = custom;
  re2c:api:style = free-form;
  re2c:define:YYCTYPE = "unsigned char";
  re2c:define:YYPEEK = "(cur < lim ? (unsigned char)*cur : 0u)";
  re2c:define:YYSKIP = "++cur;";
  re2c:define:YYBACKUP = "mar = cur;";
  re2c:define:YYRESTORE = "cur = mar;";
  re2c:define:YYLESSTHAN = "(lim - cur < @@{len})";
  re2c:eof = 0;
  re2c:yyfill:enable = 0;
  re2c:indent:string = "  ";

  ident   = [A-Za-z_][A-Za-z0-9_/]*;
  numch   = [0-9.eE+-];
  number  = "-"* [0-9] numch* ([if] numch*)?;
  special = "-"* ("inff" | "nanf") [0-9]*;
*/

static const char *const kind_names[TK_COUNT] = {
    [TK_EOF] = "EOF",         [TK_ERROR] = "ERROR",       [TK_IDENT] = "IDENT",
    [TK_LOCAL] = "LOCAL",     [TK_GRAPH] = "GRAPH",       [TK_GLOBAL] = "GLOBAL",
    [TK_INT] = "INT",         [TK_FLOAT] = "FLOAT",       [TK_BOOL] = "BOOL",
    [TK_STRING] = "STRING",   [TK_META] = "META",         [TK_VERSION] = "VERSION",
    [TK_METADATA] = "METADATA", [TK_DEF] = "DEF",         [TK_FN] = "FN",
    [TK_LET] = "LET",         [TK_IF] = "IF",             [TK_ELSE] = "ELSE",
    [TK_TYPE] = "TYPE",       [TK_EXTERN] = "EXTERN",     [TK_MATCH] = "MATCH",
    [TK_MATCHP] = "MATCHP",   [TK_FREE_VAR] = "FREE_VAR", [TK_REF] = "REF",
    [TK_REF_READ] = "REF_READ", [TK_REF_WRITE] = "REF_WRITE", [TK_UNDERSCORE] = "UNDERSCORE",
    [TK_LPAREN] = "LPAREN",   [TK_RPAREN] = "RPAREN",     [TK_LBRACKET] = "LBRACKET",
    [TK_RBRACKET] = "RBRACKET", [TK_LBRACE] = "LBRACE",   [TK_RBRACE] = "RBRACE",
    [TK_COMMA] = "COMMA",     [TK_DOT] = "DOT",           [TK_SEMI] = "SEMI",
    [TK_COLON] = "COLON",     [TK_EQ] = "EQ",             [TK_PLUS] = "PLUS",
    [TK_MINUS] = "MINUS",     [TK_STAR] = "STAR",         [TK_SLASH] = "SLASH",
    [TK_LT] = "LT",           [TK_GT] = "GT",             [TK_LE] = "LE",
    [TK_GE] = "GE",           [TK_EQEQ] = "EQEQ",         [TK_NE] = "NE",
    [TK_DARROW] = "DARROW",   [TK_BANG] = "BANG",         [TK_QUESTION] = "QUESTION",
};

const char *tok_kind_name(TokKind k) {
  return (unsigned)k < TK_COUNT && kind_names[k] ? kind_names[k] : "?";
}

void lexer_init(Lexer *lx, const char *text, size_t len, Diag *d, Arena *arena) {
  memset(lx, 0, sizeof *lx);
  lx->text = text;
  lx->len = (uint32_t)len;
  lx->d = d;
  lx->arena = arena;
}

__attribute__((format(printf, 4, 5)))
static void lex_error(Lexer *lx, uint32_t lo, uint32_t hi, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lx->nerrors++;
  if (lx->d) diag_vreport(lx->d, DIAG_ERROR, span_make(lo, hi), fmt, ap);
  va_end(ap);
}

static uint32_t off(const Lexer *lx, const char *p) { return (uint32_t)(p - lx->text); }

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* ------------------------------------------------------------- numbers */

/* Parses an unsigned decimal run [s, e) into *out; false on a non-digit or
 * when the value exceeds `max` (the result then saturates at max + 1). */
static bool parse_decimal(const char *s, const char *e, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  bool ok = s < e;
  for (; s < e; s++) {
    if (!is_digit(*s)) return false;
    unsigned dig = (unsigned)(*s - '0');
    if (v > (max - dig) / 10) { ok = false; v = max + 1; continue; }
    v = v * 10 + dig;
  }
  *out = v;
  return ok;
}

/* The width after an `i`/`f` suffix: 0 when absent, -1 when not a plain number. */
static int parse_width(const char *s, const char *e) {
  if (s == e) return 0;
  uint64_t w;
  if (!parse_decimal(s, e, 1000, &w)) return -1;
  return (int)w;
}

static bool digits_only(const char *s, const char *e) {
  if (s == e) return false;
  for (; s < e; s++)
    if (!is_digit(*s)) return false;
  return true;
}

static bool has_char(const char *s, const char *e, const char *set) {
  for (; s < e; s++)
    if (strchr(set, *s)) return true;
  return false;
}

static TokKind lex_int(Lexer *lx, Token *t, const char *body, const char *bend, bool neg,
                       bool has_suffix, const char *ws, const char *we) {
  uint32_t lo = t->span.lo, hi = t->span.hi;
  int width = has_suffix ? parse_width(ws, we) : 0;
  t->i.v = 0;
  t->i.dt = DT_I32;
  if (!digits_only(body, bend)) {
    if (has_char(body + 1, bend, "+-"))
      lex_error(lx, lo, hi, "invalid integer literal \"%.*s\" (put spaces around infix + and -)",
                (int)(hi - lo), lx->text + lo);
    else if (has_char(body, bend, ".eE"))
      lex_error(lx, lo, hi, "invalid integer literal \"%.*s\" (float literals need an f suffix, e.g. 1.5f)",
                (int)(hi - lo), lx->text + lo);
    else
      lex_error(lx, lo, hi, "invalid integer literal \"%.*s\"", (int)(hi - lo), lx->text + lo);
    return TK_INT;
  }
  if (width < 0 || (width != 0 && width != 16 && width != 32 && width != 64)) {
    lex_error(lx, lo, hi, "unsupported integer width \"i%.*s\" (relayc reads i16, i32 and i64)",
              (int)(we - ws), ws);
    return TK_INT;
  }
  uint64_t mag;
  if (!parse_decimal(body, bend, (uint64_t)INT64_MAX, &mag)) {
    lex_error(lx, lo, hi, "integer literal \"%.*s\" is out of range for int64", (int)(hi - lo),
              lx->text + lo);
    return TK_INT;
  }
  int64_t v = neg ? -(int64_t)mag : (int64_t)mag;
  if (width == 0) {
    t->i.dt = (v >= INT32_MIN && v <= INT32_MAX) ? DT_I32 : DT_I64;
  } else if (width == 16 && (v < INT16_MIN || v > INT16_MAX)) {
    lex_error(lx, lo, hi, "integer literal \"%.*s\" is out of range for int16", (int)(hi - lo),
              lx->text + lo);
    return TK_INT;
  } else if (width == 32 && (v < INT32_MIN || v > INT32_MAX)) {
    lex_error(lx, lo, hi, "integer literal \"%.*s\" is out of range for int32", (int)(hi - lo),
              lx->text + lo);
    return TK_INT;
  } else {
    t->i.dt = DTYPE(DT_INT, width);
  }
  t->i.v = v;
  return TK_INT;
}

/* Float dtype of a width (0 = default float32), or false for an unsupported width. */
static bool float_width(int width, DType *dt) {
  if (width == 0 || width == 32) *dt = DT_F32;
  else if (width == 16) *dt = DT_F16;
  else if (width == 64) *dt = DT_F64;
  else return false;
  return true;
}

static TokKind lex_float(Lexer *lx, Token *t, const char *body, const char *bend, bool neg,
                         const char *ws, const char *we) {
  uint32_t lo = t->span.lo, hi = t->span.hi;
  t->f.v = 0;
  t->f.dt = DT_F32;
  if (!float_width(parse_width(ws, we), &t->f.dt)) {
    lex_error(lx, lo, hi, "unsupported float width \"f%.*s\" (relayc reads f16, f32 and f64)",
              (int)(we - ws), ws);
    return TK_FLOAT;
  }
  size_t n = (size_t)(bend - body);
  char small[96], *buf = n < sizeof small ? small : mem_malloc(n + 1);
  memcpy(buf, body, n);
  buf[n] = 0;
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  bool complete = end == buf + n, overflow = errno == ERANGE && isinf(v);
  if (buf != small) mem_free(buf);
  if (!complete) {
    lex_error(lx, lo, hi, "invalid float literal \"%.*s\"", (int)(hi - lo), lx->text + lo);
    return TK_FLOAT;
  }
  /* Out of range = rounds to infinity in the literal's dtype: the largest
   * finite value plus half an ulp and up (FLT_MAX itself prints as
   * 3.4028235e+38, which is a little above FLT_MAX as a double). */
  double limit = t->f.dt.bits == 16 ? 65520.0 : t->f.dt.bits == 32 ? 0x1.ffffffp+127 : INFINITY;
  if (overflow || fabs(v) >= limit) {
    char name[32];
    lex_error(lx, lo, hi, "float literal \"%.*s\" is out of range for %s", (int)(hi - lo),
              lx->text + lo, dtype_name(t->f.dt, name));
    return TK_FLOAT;
  }
  t->f.v = neg ? -v : v;
  return TK_FLOAT;
}

/* A number token [s, e): `-`* digit body [suffix width]. */
static TokKind lex_number(Lexer *lx, Token *t, const char *s, const char *e) {
  size_t minus = 0;
  while (s[minus] == '-') minus++;
  const char *body = s + minus, *p = body;
  while (p < e && *p != 'i' && *p != 'f') p++;
  bool has_suffix = p < e;
  char suffix = has_suffix ? *p : 0;
  const char *ws = has_suffix ? p + 1 : e;
  if (suffix == 'f') return lex_float(lx, t, body, p, minus & 1, ws, e);
  return lex_int(lx, t, body, p, minus & 1, has_suffix, ws, e);
}

/* `-`* (inff | nanf) [width]: relayc's infinity and NaN literals. */
static TokKind lex_special(Lexer *lx, Token *t, const char *s, const char *e) {
  size_t minus = 0;
  while (s[minus] == '-') minus++;
  bool inf = s[minus] == 'i';
  t->f.dt = DT_F32;
  if (!float_width(parse_width(s + minus + 4, e), &t->f.dt)) {
    lex_error(lx, t->span.lo, t->span.hi, "unsupported float width \"f%.*s\" (relayc reads f16, f32 and f64)",
              (int)(e - (s + minus + 4)), s + minus + 4);
    t->f.v = 0;
    return TK_FLOAT;
  }
  double v = inf ? INFINITY : NAN;
  t->f.v = (minus & 1) ? -v : v;
  return TK_FLOAT;
}

/* ----------------------------------------------------- strings, comments */

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes the escapes of spec §2.7 in [s, e) into the arena; an unknown
 * escape keeps its backslash (TVM reads backslashes literally). */
static void decode_string(Lexer *lx, Token *t, const char *s, const char *e) {
  char *out = arena_alloc_aligned(lx->arena, (size_t)(e - s) + 1, 1);
  uint32_t n = 0;
  while (s < e) {
    char c = *s++;
    if (c != '\\' || s == e) { out[n++] = c; continue; }
    char x = *s;
    switch (x) {
    case '"': case '\\': out[n++] = x; s++; break;
    case 'n': out[n++] = '\n'; s++; break;
    case 't': out[n++] = '\t'; s++; break;
    case 'r': out[n++] = '\r'; s++; break;
    case 'x':
      if (e - s >= 3 && hex_value(s[1]) >= 0 && hex_value(s[2]) >= 0) {
        out[n++] = (char)(hex_value(s[1]) * 16 + hex_value(s[2]));
        s += 3;
        break;
      }
      /* fall through */
    default: out[n++] = '\\'; break;
    }
  }
  out[n] = 0;
  t->str.chars = out;
  t->str.len = n;
}

/* Scans a string whose opening quote is at `start`; returns the end of the token. */
static const char *lex_string(Lexer *lx, Token *t, const char *start, const char *lim) {
  const char *p = start + 1;
  bool escapes = false;
  while (p < lim && *p != '"') {
    if (*p == '\\' && p + 1 < lim) { escapes = true; p++; }
    p++;
  }
  const char *content_end = p < lim ? p : lim;
  if (p >= lim)
    lex_error(lx, off(lx, start), off(lx, start) + 1, "unterminated string literal");
  else
    p++;
  if (escapes && lx->arena) {
    decode_string(lx, t, start + 1, content_end);
  } else {
    t->str.chars = start + 1;
    t->str.len = (uint32_t)(content_end - (start + 1));
  }
  return p;
}

/* Skips a nested block comment opened at `start`; returns where lexing resumes. */
static const char *skip_block_comment(Lexer *lx, const char *start, const char *lim) {
  const char *p = start + 2;
  size_t depth = 1;
  while (p < lim) {
    if (p[0] == '/' && p + 1 < lim && p[1] == '*') {
      depth++;
      p += 2;
    } else if (p[0] == '*' && p + 1 < lim && p[1] == '/') {
      p += 2;
      if (--depth == 0) return p;
    } else {
      p++;
    }
  }
  lex_error(lx, off(lx, start), off(lx, start) + 2, "unterminated block comment");
  return lim;
}

static void trim(const char **s, const char **e) {
  while (*s < *e && is_space(**s)) (*s)++;
  while (*e > *s && is_space((*e)[-1])) (*e)--;
}

/* `#[...]` starting at `start`: the version header or the metadata marker. */
static TokKind lex_hash_attr(Lexer *lx, Token *t, const char *start, const char *lim,
                             const char **resume) {
  const char *close = memchr(start, ']', (size_t)(lim - start));
  uint32_t lo = off(lx, start);
  if (!close) {
    lex_error(lx, lo, lo + 2, "unterminated #[...] attribute");
    *resume = lim;
    return TK_ERROR;
  }
  *resume = close + 1;
  t->span.hi = off(lx, close + 1);
  const char *s = start + 2, *e = close;
  trim(&s, &e);
  if (e - s == 8 && memcmp(s, "metadata", 8) == 0) {
    lx->stopped = lx->has_metadata = true;
    lx->meta_offset = t->span.hi;
    return TK_METADATA;
  }
  if (e - s >= 7 && memcmp(s, "version", 7) == 0) {
    const char *eq = memchr(s, '=', (size_t)(e - s));
    const char *v = eq ? eq + 1 : e, *ve = e;
    trim(&v, &ve);
    if (!eq || ve - v != 7 || memcmp(v, "\"0.0.5\"", 7) != 0)
      lex_error(lx, lo, t->span.hi, "unsupported version header (relayc reads #[version = \"0.0.5\"])");
    return TK_VERSION;
  }
  lex_error(lx, lo, t->span.hi, "unsupported attribute \"#[%.*s]\" (expected version or metadata)",
            (int)(e - s), s);
  return TK_ERROR;
}

static TokKind lex_meta(Lexer *lx, Token *t, const char *s, const char *e) {
  const char *key = s + 5, *kend = memchr(key, ']', (size_t)(e - key));
  uint64_t index;
  t->meta.key = key;
  t->meta.keylen = (uint32_t)(kend - key);
  t->meta.index = 0;
  if (kend == key) lex_error(lx, t->span.lo, t->span.hi, "empty key in meta reference");
  if (!parse_decimal(kend + 2, e - 1, UINT32_MAX, &index))
    lex_error(lx, t->span.lo, t->span.hi, "meta reference index is too large");
  else
    t->meta.index = (uint32_t)index;
  return TK_META;
}

static TokKind lex_graph(Lexer *lx, Token *t, const char *s, const char *e) {
  uint64_t n;
  t->graph = 0;
  if (!parse_decimal(s + 1, e, UINT32_MAX, &n))
    lex_error(lx, t->span.lo, t->span.hi, "graph variable number is too large");
  else
    t->graph = (uint32_t)n;
  return TK_GRAPH;
}

static void set_text(Token *t, const char *s, const char *e) {
  t->text.p = s;
  t->text.n = (uint32_t)(e - s);
}

/* §2.4: the name after `%` or `@` cannot be a keyword (`%type`, `@fn`). */
static TokKind check_sigil_name(Lexer *lx, Token *t, TokKind k) {
  static const struct { const char *s; uint32_t n; } keywords[] = {
      {"def", 3},    {"fn", 2},       {"let", 3},      {"if", 2},
      {"else", 4},   {"type", 4},     {"extern", 6},   {"match", 5},
      {"free_var", 8}, {"ref", 3},    {"ref_read", 8}, {"ref_write", 9}};
  uint32_t n = t->text.n;
  if (n < 2 || n > 9) return k;
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
    if (keywords[i].n == n && memcmp(keywords[i].s, t->text.p, n) == 0) {
      lex_error(lx, off(lx, t->text.p) - 1, off(lx, t->text.p) + n,
                "keyword \"%s\" cannot be used as a %s name", keywords[i].s,
                k == TK_LOCAL ? "variable" : "global");
      break;
    }
  }
  return k;
}

/* Anything that starts no token: TVM swallows it up to the next whitespace. */
static const char *lex_unknown(Lexer *lx, const char *tok, const char *lim) {
  const char *p = tok + 1;
  while (p < lim && !is_space(*p)) p++;
  unsigned char c = (unsigned char)*tok;
  if (c >= 33 && c < 127)
    lex_error(lx, off(lx, tok), off(lx, tok) + 1, "unexpected character '%c'", c);
  else
    lex_error(lx, off(lx, tok), off(lx, tok) + 1, "unexpected byte 0x%02x", c);
  return p;
}

/* ------------------------------------------------------------- the DFA */

TokKind lexer_next(Lexer *lx, Token *t) {
  const char *cur = lx->text + lx->pos, *lim = lx->text + lx->len, *mar = cur;
  TokKind k;
  if (lx->stopped) {
    t->kind = TK_EOF;
    t->span = span_make(lx->len, lx->len);
    return TK_EOF;
  }
  for (;;) {
    const char *tok = cur;
    t->span.lo = off(lx, tok);
#define DONE(kind) do { k = (kind); goto done; } while (0)
    /*!re2c
      ([ \t\n] | "\r\n")+ { continue; }
      "\r"      { lex_error(lx, off(lx, tok), off(lx, cur), "carriage return not followed by a line feed"); continue; }
      "//" [^\n]* { continue; }
      "/*"      { cur = skip_block_comment(lx, tok, lim); continue; }
      "\""      { cur = lex_string(lx, t, tok, lim); DONE(TK_STRING); }
      "#["      { t->span.hi = off(lx, cur); k = lex_hash_attr(lx, t, tok, lim, &cur); DONE(k); }
      "meta[" [^\]]* "][" [0-9]+ "]" { t->span.hi = off(lx, cur); DONE(lex_meta(lx, t, tok, cur)); }
      "meta["   { lex_error(lx, off(lx, tok), off(lx, cur), "malformed meta reference (expected meta[KEY][INDEX])"); DONE(TK_ERROR); }
      "%" [0-9]+ { t->span.hi = off(lx, cur); DONE(lex_graph(lx, t, tok, cur)); }
      "%" ident { set_text(t, tok + 1, cur); DONE(check_sigil_name(lx, t, TK_LOCAL)); }
      "@" ident { set_text(t, tok + 1, cur); DONE(check_sigil_name(lx, t, TK_GLOBAL)); }
      "%"       { lex_error(lx, off(lx, tok), off(lx, cur), "'%%' must be directly followed by a name or a number"); DONE(TK_ERROR); }
      "@"       { lex_error(lx, off(lx, tok), off(lx, cur), "'@' must be directly followed by a name"); DONE(TK_ERROR); }

      "def"       { DONE(TK_DEF); }
      "fn"        { DONE(TK_FN); }
      "let"       { DONE(TK_LET); }
      "if"        { DONE(TK_IF); }
      "else"      { DONE(TK_ELSE); }
      "type"      { DONE(TK_TYPE); }
      "extern"    { DONE(TK_EXTERN); }
      "match"     { DONE(TK_MATCH); }
      "match?"    { DONE(TK_MATCHP); }
      "free_var"  { DONE(TK_FREE_VAR); }
      "ref"       { DONE(TK_REF); }
      "ref_read"  { DONE(TK_REF_READ); }
      "ref_write" { DONE(TK_REF_WRITE); }
      "True"      { t->b = true; DONE(TK_BOOL); }
      "False"     { t->b = false; DONE(TK_BOOL); }
      "_"         { DONE(TK_UNDERSCORE); }

      special { t->span.hi = off(lx, cur); DONE(lex_special(lx, t, tok, cur)); }
      number  { t->span.hi = off(lx, cur); DONE(lex_number(lx, t, tok, cur)); }
      ident {
        if (cur - tok > 4 && memcmp(tok, "inff", 4) == 0) { /* TVM splits `inffoo` as `inff` `oo` */
          cur = tok + 4;
          while (cur < lim && is_digit(*cur)) cur++;
          t->span.hi = off(lx, cur);
          DONE(lex_special(lx, t, tok, cur));
        }
        set_text(t, tok, cur);
        DONE(TK_IDENT);
      }

      "(" { DONE(TK_LPAREN); }
      ")" { DONE(TK_RPAREN); }
      "[" { DONE(TK_LBRACKET); }
      "]" { DONE(TK_RBRACKET); }
      "{" { DONE(TK_LBRACE); }
      "}" { DONE(TK_RBRACE); }
      "," { DONE(TK_COMMA); }
      "." { DONE(TK_DOT); }
      ";" { DONE(TK_SEMI); }
      ":" { DONE(TK_COLON); }
      "=" { DONE(TK_EQ); }
      "+" { DONE(TK_PLUS); }
      "-" { DONE(TK_MINUS); }
      "*" { DONE(TK_STAR); }
      "/" { DONE(TK_SLASH); }
      "<" { DONE(TK_LT); }
      ">" { DONE(TK_GT); }
      "<=" { DONE(TK_LE); }
      ">=" { DONE(TK_GE); }
      "==" { DONE(TK_EQEQ); }
      "!=" { DONE(TK_NE); }
      "=>" { DONE(TK_DARROW); }
      "!" { DONE(TK_BANG); }
      "?" { DONE(TK_QUESTION); }

      $ { lx->stopped = true; DONE(TK_EOF); }
      * { cur = lex_unknown(lx, tok, lim); DONE(TK_ERROR); }
    */
#undef DONE
  }
done:
  lx->pos = off(lx, cur);
  t->span.hi = lx->pos;
  t->kind = k;
  return k;
}
