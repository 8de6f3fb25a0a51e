/* lexer/lexer.h — Relay 0.0.5 text to tokens (spec/text-format.md §2).
 *
 * A Lexer walks a byte buffer that need not be NUL-terminated and never reads
 * past `len`. Each call to lexer_next yields one token with its byte span and
 * decoded value; whitespace and comments are skipped. Names point into the
 * source text (no allocation); only strings with escapes are decoded into the
 * arena. Lexical errors are reported through the Diag: a malformed literal
 * still yields its token kind (value 0) so parsing can go on, any other bad
 * input yields TK_ERROR. After `#[metadata]` the lexer stops: the rest of the
 * input is JSON (its offset is in `meta_offset`), and every later call yields
 * TK_EOF.
 *
 *     Lexer lx; Token t;
 *     lexer_init(&lx, src->text, src->len, &d, arena);
 *     while (lexer_next(&lx, &t) != TK_EOF) ...
 */
#ifndef RELAYC_LEXER_LEXER_H
#define RELAYC_LEXER_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/diag.h"
#include "ir/dtype.h"

typedef enum TokKind {
  TK_EOF,        /* end of input (or of the token stream after #[metadata]) */
  TK_ERROR,      /* bad input, already reported */
  TK_IDENT,      /* identifier: text */
  TK_LOCAL,      /* %name: text without the sigil */
  TK_GRAPH,      /* %N: graph */
  TK_GLOBAL,     /* @name: text without the sigil */
  TK_INT,        /* integer literal: i */
  TK_FLOAT,      /* float literal (f suffix, inff, nanf): f */
  TK_BOOL,       /* True / False: b */
  TK_STRING,     /* "..." with escapes decoded: str */
  TK_META,       /* meta[KEY][N]: meta */
  TK_VERSION,    /* #[version = "0.0.5"] */
  TK_METADATA,   /* #[metadata]; the JSON starts at Lexer.meta_offset */
  TK_DEF,        /* def */
  TK_FN,         /* fn */
  TK_LET,        /* let */
  TK_IF,         /* if */
  TK_ELSE,       /* else */
  TK_TYPE,       /* type */
  TK_EXTERN,     /* extern */
  TK_MATCH,      /* match */
  TK_MATCHP,     /* match? (adjacent) */
  TK_FREE_VAR,   /* free_var */
  TK_REF,        /* ref */
  TK_REF_READ,   /* ref_read */
  TK_REF_WRITE,  /* ref_write */
  TK_UNDERSCORE, /* _ */
  TK_LPAREN,     /* ( */
  TK_RPAREN,     /* ) */
  TK_LBRACKET,   /* [ */
  TK_RBRACKET,   /* ] */
  TK_LBRACE,     /* { */
  TK_RBRACE,     /* } */
  TK_COMMA,      /* , */
  TK_DOT,        /* . */
  TK_SEMI,       /* ; */
  TK_COLON,      /* : */
  TK_EQ,         /* = */
  TK_PLUS,       /* + */
  TK_MINUS,      /* - */
  TK_STAR,       /* * */
  TK_SLASH,      /* / */
  TK_LT,         /* < */
  TK_GT,         /* > */
  TK_LE,         /* <= (adjacent) */
  TK_GE,         /* >= (adjacent) */
  TK_EQEQ,       /* == (adjacent) */
  TK_NE,         /* != (adjacent) */
  TK_DARROW,     /* => (adjacent) */
  TK_BANG,       /* ! on its own (accepted nowhere) */
  TK_QUESTION,   /* ? */
  TK_COUNT
} TokKind;

typedef struct Token {
  TokKind kind;
  Span span;
  union {
    struct { const char *p; uint32_t n; } text;      /* IDENT, LOCAL, GLOBAL (into the source) */
    uint32_t graph;                                  /* GRAPH */
    struct { int64_t v; DType dt; } i;               /* INT: int16/int32/int64 */
    struct { double v; DType dt; } f;                /* FLOAT: float16/32/64 */
    bool b;                                          /* BOOL */
    struct { const char *chars; uint32_t len; } str; /* STRING (not NUL-terminated) */
    struct { const char *key; uint32_t keylen; uint32_t index; } meta; /* META (key into the source) */
  };
} Token;

typedef struct Lexer {
  const char *text;
  uint32_t len;
  uint32_t pos;         /* next byte to read */
  Diag *d;
  Arena *arena;         /* for decoded strings */
  bool stopped;         /* #[metadata] or end of input reached */
  bool has_metadata;
  uint32_t meta_offset; /* first byte after `#[metadata]` */
  int nerrors;          /* lexical errors reported by this lexer */
} Lexer;

/* The text must be shorter than 4 GiB (spans are 32-bit); callers check. */
void lexer_init(Lexer *lx, const char *text, size_t len, Diag *d, Arena *arena);
TokKind lexer_next(Lexer *lx, Token *t);
/* Short upper-case kind name for token dumps: "IDENT", "LPAREN", ... */
const char *tok_kind_name(TokKind k);

#endif
