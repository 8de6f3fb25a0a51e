/* ops/foreign/ffi_decl.c — lexer and recursive-descent parser of foreign-operator
 * declarations (the syntax is described in ops/foreign/ffi_decl.h and man/relayc.1).
 *
 * The lexer knows four token kinds: words (runs of letters, digits and
 * `_ . - + / ~`, so that `libm.so.6`, `./lib/x.so` and `my.erfc` are single
 * words), double-quoted strings, one-character punctuation and the end.
 * The parser is a straight line per declaration — no recursion at all — and
 * after an error skips to the next `;` so that one run reports every broken
 * declaration. Nothing here opens libraries or looks at the registry.
 */
#include "ops/foreign/ffi_decl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"

/* ------------------------------------------------------------------ lexer */

typedef enum {
  TK_EOF,    /* end of input */
  TK_WORD,   /* name, number, path */
  TK_STRING, /* "..." (text without the quotes) */
  TK_PUNCT,  /* one of ( ) , * ; : */
  TK_BAD,    /* a character that starts no token (already reported) */
} TokKind;

typedef struct Tok {
  TokKind kind;
  Span span;
  const char *text; /* word or string contents (arena), NULL otherwise */
  char punct;
} Tok;

typedef struct Parser {
  Source *src;
  Arena *a;
  Diag *d;
  uint32_t pos; /* next unread byte */
  Tok tok;      /* current token */
  bool failed;  /* an error in the current declaration */
} Parser;

static bool is_word_char(int c) {
  return isalnum(c) || c == '_' || c == '.' || c == '-' || c == '+' || c == '/' || c == '~';
}

static int peek_at(const Parser *p, uint32_t i) {
  return i < p->src->len ? (unsigned char)p->src->text[i] : -1;
}

/* Skips blanks and comments (`#` or `//` to the end of the line). */
static void skip_space(Parser *p) {
  for (;;) {
    int c = peek_at(p, p->pos);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      p->pos++;
    } else if (c == '#' || (c == '/' && peek_at(p, p->pos + 1) == '/')) {
      while (p->pos < p->src->len && p->src->text[p->pos] != '\n') p->pos++;
    } else {
      return;
    }
  }
}

static void error_at(Parser *p, Span sp, const char *fmt, const char *arg) {
  if (!p->failed) diag_error(p->d, sp, fmt, arg);
  p->failed = true;
}

static void lex_string(Parser *p, uint32_t start) {
  uint32_t i = start + 1;
  while (i < p->src->len && p->src->text[i] != '"' && p->src->text[i] != '\n') i++;
  if (i >= p->src->len || p->src->text[i] != '"') {
    p->tok = (Tok){TK_BAD, span_make(start, i), NULL, 0};
    error_at(p, p->tok.span, "%s", "unterminated string");
    p->pos = i;
    return;
  }
  p->tok = (Tok){TK_STRING, span_make(start, i + 1), arena_strndup(p->a, p->src->text + start + 1, i - start - 1), 0};
  p->pos = i + 1;
}

static void next(Parser *p) {
  skip_space(p);
  uint32_t start = p->pos;
  int c = peek_at(p, start);
  if (c < 0) {
    p->tok = (Tok){TK_EOF, span_make(start, start), NULL, 0};
  } else if (c == '"') {
    lex_string(p, start);
  } else if (strchr("(),*;:", c)) {
    p->tok = (Tok){TK_PUNCT, span_make(start, start + 1), NULL, (char)c};
    p->pos++;
  } else if (is_word_char(c)) {
    uint32_t i = start;
    while (i < p->src->len && is_word_char((unsigned char)p->src->text[i]) &&
           !(p->src->text[i] == '/' && peek_at(p, i + 1) == '/'))
      i++;
    p->tok = (Tok){TK_WORD, span_make(start, i), arena_strndup(p->a, p->src->text + start, i - start), 0};
    p->pos = i;
  } else {
    char what[16];
    snprintf(what, sizeof what, c >= 32 && c < 127 ? "'%c'" : "byte 0x%02x", c);
    p->tok = (Tok){TK_BAD, span_make(start, start + 1), NULL, 0};
    error_at(p, p->tok.span, "unexpected character %s", what);
    p->pos++;
  }
}

static bool at_punct(const Parser *p, char c) { return p->tok.kind == TK_PUNCT && p->tok.punct == c; }
static bool at_word(const Parser *p, const char *w) {
  return p->tok.kind == TK_WORD && strcmp(p->tok.text, w) == 0;
}

/* A human name of the current token, for "expected X, found Y". */
static const char *tok_desc(const Parser *p, char *buf, size_t len) {
  switch (p->tok.kind) {
  case TK_EOF: return "the end of the declarations";
  case TK_PUNCT: snprintf(buf, len, "'%c'", p->tok.punct); return buf;
  case TK_WORD: snprintf(buf, len, "'%.40s'", p->tok.text); return buf;
  case TK_STRING: return "a string";
  default: return "an invalid token";
  }
}

static void expected(Parser *p, const char *what) {
  if (p->failed) return;
  char buf[64];
  diag_error(p->d, p->tok.span, "expected %s, found %s", what, tok_desc(p, buf, sizeof buf));
  p->failed = true;
}

static bool expect_punct(Parser *p, char c, const char *what) {
  if (!at_punct(p, c)) {
    expected(p, what);
    return false;
  }
  next(p);
  return true;
}

/* ------------------------------------------------------------ name checks */

static bool is_c_ident(const char *s) {
  if (!isalpha((unsigned char)*s) && *s != '_') return false;
  for (s++; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

/* An operator name: C identifiers joined by single dots ("my.erfc"). */
static bool is_op_name(const char *s) {
  for (;;) {
    if (!isalpha((unsigned char)*s) && *s != '_') return false;
    while (isalnum((unsigned char)*s) || *s == '_') s++;
    if (*s == 0) return true;
    if (*s != '.') return false;
    s++;
  }
}

/* ------------------------------------------------------------------ types */

static const struct {
  const char *name;
  FdeclBase base;
} base_names[] = {
    {"void", FC_VOID},   {"float", FC_FLOAT},  {"double", FC_DOUBLE}, {"int", FC_I32},
    {"int32_t", FC_I32}, {"int64_t", FC_I64},  {"size_t", FC_SIZE},
};

static bool lookup_base(const char *w, FdeclBase *out) {
  for (size_t i = 0; i < sizeof base_names / sizeof base_names[0]; i++)
    if (strcmp(base_names[i].name, w) == 0) {
      *out = base_names[i].base;
      return true;
    }
  return false;
}

const char *fdecl_type_str(const FdeclType *t, char *buf, size_t len) {
  const char *base = "?";
  for (size_t i = 0; i < sizeof base_names / sizeof base_names[0]; i++)
    if (base_names[i].base == t->base) {
      base = base_names[i].name;
      break;
    }
  snprintf(buf, len, "%s%s%s", t->is_const ? "const " : "", base, t->pointer ? " *" : "");
  return buf;
}

/* ctype := {const} BASE {const} { '*' {const} } — at most one '*'. */
static bool parse_type(Parser *p, FdeclType *t) {
  *t = (FdeclType){.span = p->tok.span};
  while (at_word(p, "const")) { t->is_const = true; next(p); }
  if (p->tok.kind != TK_WORD) {
    expected(p, "a C type");
    return false;
  }
  if (!lookup_base(p->tok.text, &t->base)) {
    error_at(p, p->tok.span,
             "unknown C type '%s' (supported: float, double, int, int32_t, int64_t, size_t, and pointers to them)",
             p->tok.text);
    return false;
  }
  t->span.hi = p->tok.span.hi;
  next(p);
  while (at_word(p, "const")) { t->is_const = true; t->span.hi = p->tok.span.hi; next(p); }
  while (at_punct(p, '*')) {
    if (t->pointer) {
      error_at(p, span_make(t->span.lo, p->tok.span.hi), "%s", "pointers to pointers are not supported");
      return false;
    }
    t->pointer = true;
    t->span.hi = p->tok.span.hi;
    next(p);
    while (at_word(p, "const")) next(p); /* `float *const p`: the pointer itself is const */
  }
  if (t->base == FC_VOID && t->pointer) {
    error_at(p, t->span, "%s", "'void *' is not supported: use a typed pointer (float *, double *, ...)");
    return false;
  }
  return true;
}

/* params := 'void' | ε | param {',' param};  param := ctype [NAME] */
static bool parse_params(Parser *p, FdeclDecl *d) {
  if (at_punct(p, ')')) return true;
  for (;;) {
    FdeclType t;
    if (!parse_type(p, &t)) return false;
    if (p->tok.kind == TK_WORD) {
      if (!is_c_ident(p->tok.text)) {
        error_at(p, p->tok.span, "invalid parameter name '%s'", p->tok.text);
        return false;
      }
      next(p);
    }
    if (t.base == FC_VOID) {
      if (d->nparams == 0 && at_punct(p, ')')) return true; /* f(void) */
      error_at(p, t.span, "%s", "a parameter cannot have type void");
      return false;
    }
    if (d->nparams == FDECL_MAX_PARAMS) {
      error_at(p, t.span, "%s", "too many parameters (at most 16)");
      return false;
    }
    d->params[d->nparams++] = t;
    if (!at_punct(p, ',')) return true;
    next(p);
  }
}

/* proto := ctype NAME '(' params ')' */
static bool parse_proto(Parser *p, FdeclDecl *d) {
  if (!parse_type(p, &d->ret)) return false;
  if (p->tok.kind != TK_WORD || !is_c_ident(p->tok.text)) {
    if (p->tok.kind == TK_WORD) error_at(p, p->tok.span, "invalid C function name '%s'", p->tok.text);
    else expected(p, "the function's name");
    return false;
  }
  d->symbol = p->tok.text;
  d->sym_span = p->tok.span;
  next(p);
  if (!expect_punct(p, '(', "'(' after the function's name")) return false;
  if (!parse_params(p, d)) return false;
  d->decl_span.hi = p->tok.span.hi;
  return expect_punct(p, ')', "')' or ',' in the parameter list");
}

/* MAPPING := 'elementwise' | 'buffer' ['(' INT ')'] */
static bool parse_mapping(Parser *p, FdeclDecl *d) {
  d->mapping_span = p->tok.span;
  if (at_word(p, "elementwise")) {
    d->mapping = FMAP_ELEMWISE;
    next(p);
    return true;
  }
  if (!at_word(p, "buffer")) {
    expected(p, "'elementwise' or 'buffer'");
    return false;
  }
  d->mapping = FMAP_BUFFER;
  next(p);
  if (!at_punct(p, '(')) return true;
  next(p);
  const char *w = p->tok.kind == TK_WORD ? p->tok.text : "";
  size_t n = strlen(w);
  if (n == 0 || n > 2 || strspn(w, "0123456789") != n) {
    expected(p, "an input index (the input whose shape the output takes)");
    return false;
  }
  d->shape_from = (int32_t)strtol(w, NULL, 10);
  next(p);
  d->mapping_span.hi = p->tok.span.hi;
  return expect_punct(p, ')', "')'");
}

/* decl := 'op' NAME MAPPING 'from' LIB ':' proto */
static bool parse_decl(Parser *p, FdeclDecl *d) {
  *d = (FdeclDecl){.decl_span = p->tok.span};
  if (!at_word(p, "op")) {
    expected(p, "a declaration ('op NAME elementwise|buffer from LIBRARY: PROTOTYPE')");
    return false;
  }
  next(p);
  if (p->tok.kind != TK_WORD || !is_op_name(p->tok.text)) {
    if (p->tok.kind == TK_WORD) error_at(p, p->tok.span, "invalid operator name '%s'", p->tok.text);
    else expected(p, "an operator name");
    return false;
  }
  d->op = p->tok.text;
  d->op_span = p->tok.span;
  next(p);
  if (!parse_mapping(p, d)) return false;
  if (!at_word(p, "from")) {
    expected(p, "'from LIBRARY'");
    return false;
  }
  next(p);
  if ((p->tok.kind != TK_WORD && p->tok.kind != TK_STRING) || !*p->tok.text) {
    expected(p, "a library (a path or a soname such as libm.so.6)");
    return false;
  }
  d->library = p->tok.text;
  d->lib_span = p->tok.span;
  next(p);
  if (!expect_punct(p, ':', "':' before the C prototype")) return false;
  return parse_proto(p, d);
}

/* After an error: skip to just past the next ';'. */
static void recover(Parser *p) {
  while (p->tok.kind != TK_EOF && !at_punct(p, ';')) next(p);
  if (at_punct(p, ';')) next(p);
}

bool fdecl_parse(Source *src, Arena *a, Diag *d, FdeclDecl **out, uint32_t *n) {
  Parser p = {.src = src, .a = a, .d = d};
  VEC(FdeclDecl) v = {0};
  bool ok = true;
  next(&p);
  while (p.tok.kind != TK_EOF && !d->suppressed) {
    if (at_punct(&p, ';')) { next(&p); continue; }
    FdeclDecl decl;
    p.failed = false;
    if (parse_decl(&p, &decl) && (at_punct(&p, ';') || p.tok.kind == TK_EOF)) {
      vec_push(v, decl);
      continue;
    }
    expected(&p, "';' after the declaration");
    ok = false;
    recover(&p);
  }
  *n = (uint32_t)v.len;
  *out = v.len ? arena_memdup(a, v.data, v.len * sizeof *v.data) : NULL;
  vec_free(v);
  return ok;
}
