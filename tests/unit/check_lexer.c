/* tests/unit/check_lexer.c — the re2c lexer (lexer/lexer.h) and dump_tokens.
 *
 * Every input is copied into a heap buffer of exactly its length (no NUL
 * terminator), so ASan catches any read past the end. Covers each literal
 * form and error of spec §2.6, comments, strings and escapes, meta and
 * #[...] tokens, adjacency rules, sigils, unknown bytes and garbage.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "lexer/lexer.h"
#include "parser/parser.h"
#include "tests/unit/unit_run.h"

enum { MAXTOK = 64 };

typedef struct Lexed {
  Token tok[MAXTOK];
  int n;         /* tokens before EOF */
  int nerrors;   /* lexical errors */
  char *diag;    /* diagnostics text */
  Source *src;
  Arena *arena;
  Lexer lx;
} Lexed;

static Lexed *lexn(const char *s, size_t len) {
  Lexed *L = calloc(1, sizeof *L);
  char *buf = mem_malloc(len ? len : 1);
  memcpy(buf, s, len);
  L->src = source_new("t.relay", buf, len);
  L->arena = arena_new();
  size_t dlen;
  FILE *f = open_memstream(&L->diag, &dlen);
  Diag d;
  diag_init(&d, f, L->src);
  d.max_errors = 0;
  lexer_init(&L->lx, L->src->text, len, &d, L->arena);
  for (;;) {
    Token t;
    if (lexer_next(&L->lx, &t) == TK_EOF) break;
    if (L->n < MAXTOK) L->tok[L->n++] = t;
  }
  L->nerrors = L->lx.nerrors;
  fclose(f);
  return L;
}

static Lexed *lex(const char *s) { return lexn(s, strlen(s)); }

static void done(Lexed *L) {
  arena_free(L->arena);
  source_free(L->src);
  free(L->diag);
  free(L);
}

/* Lexes one integer literal and checks its value and dtype. */
static void check_int(const char *s, int64_t v, DType dt) {
  Lexed *L = lex(s);
  ck_assert_msg(L->n == 1 && L->tok[0].kind == TK_INT, "%s: not one INT", s);
  ck_assert_msg(L->nerrors == 0, "%s: unexpected error %s", s, L->diag);
  ck_assert_msg(L->tok[0].i.v == v, "%s: value %lld", s, (long long)L->tok[0].i.v);
  ck_assert_msg(dtype_eq(L->tok[0].i.dt, dt), "%s: wrong dtype", s);
  done(L);
}

static void check_float(const char *s, double v, DType dt) {
  Lexed *L = lex(s);
  ck_assert_msg(L->n == 1 && L->tok[0].kind == TK_FLOAT, "%s: not one FLOAT", s);
  ck_assert_msg(L->nerrors == 0, "%s: unexpected error %s", s, L->diag);
  if (isnan(v))
    ck_assert_msg(isnan(L->tok[0].f.v), "%s: not NaN", s);
  else
    ck_assert_msg(L->tok[0].f.v == v, "%s: value %g", s, L->tok[0].f.v);
  ck_assert_msg(dtype_eq(L->tok[0].f.dt, dt), "%s: wrong dtype", s);
  done(L);
}

/* Lexes `s` expecting exactly one error whose message contains `msg`. */
static void check_error(const char *s, const char *msg) {
  Lexed *L = lex(s);
  ck_assert_msg(L->nerrors == 1, "%s: %d errors (%s)", s, L->nerrors, L->diag);
  ck_assert_msg(strstr(L->diag, msg), "%s: message was %s", s, L->diag);
  done(L);
}

static void check_kinds(const char *s, const TokKind *kinds, int n) {
  Lexed *L = lex(s);
  ck_assert_msg(L->n == n, "%s: %d tokens, want %d", s, L->n, n);
  for (int i = 0; i < n; i++)
    ck_assert_msg(L->tok[i].kind == kinds[i], "%s: token %d is %s, want %s", s, i,
                  tok_kind_name(L->tok[i].kind), tok_kind_name(kinds[i]));
  done(L);
}
#define KINDS(s, ...)                                                          \
  do {                                                                         \
    const TokKind k_[] = {__VA_ARGS__};                                        \
    check_kinds(s, k_, (int)(sizeof k_ / sizeof k_[0]));                       \
  } while (0)

static bool text_is(const Token *t, const char *s) {
  return t->text.n == strlen(s) && memcmp(t->text.p, s, t->text.n) == 0;
}

/* ------------------------------------------------------------- numbers */

START_TEST(test_integers) {
  check_int("7", 7, DT_I32);
  check_int("-05", -5, DT_I32);
  check_int("0", 0, DT_I32);
  check_int("42i16", 42, DT_I16);
  check_int("42i64", 42, DT_I64);
  check_int("42i32", 42, DT_I32);
  check_int("42i", 42, DT_I32);
  check_int("--5", 5, DT_I32);
  check_int("---5", -5, DT_I32);
  check_int("2147483647", 2147483647, DT_I32);
  check_int("-2147483648", INT32_MIN, DT_I32);
  check_int("2147483648", 2147483648LL, DT_I64);   /* silent promotion */
  check_int("2147483648i", 2147483648LL, DT_I64);  /* no width digits: same */
  check_int("-2147483649", -2147483649LL, DT_I64);
  check_int("9223372036854775807", INT64_MAX, DT_I64);
  check_int("-32768i16", -32768, DT_I16);
  check_int("007", 7, DT_I32);
}
END_TEST

START_TEST(test_integer_errors) {
  check_error("1.5", "invalid integer literal \"1.5\"");
  check_error("1e3", "float literals need an f suffix");
  check_error("1-2", "put spaces around infix");
  check_error("1+2", "put spaces around infix");
  check_error("2147483648i32", "out of range for int32");
  check_error("32768i16", "out of range for int16");
  check_error("-32769i16", "out of range for int16");
  check_error("9223372036854775808", "out of range for int64");
  check_error("-9223372036854775808", "out of range for int64"); /* magnitude first */
  check_error("99999999999999999999999", "out of range for int64");
  check_error("1i8", "unsupported integer width \"i8\"");
  check_error("1i1", "unsupported integer width");
  check_error("1i3.2", "unsupported integer width");
  /* unsigned literals do not exist: 7u8 is 7 then the identifier u8 */
  KINDS("7u8", TK_INT, TK_IDENT);
}
END_TEST

START_TEST(test_floats) {
  check_float("1f", 1, DT_F32);
  check_float("1.0f", 1, DT_F32);
  check_float("1f32", 1, DT_F32);
  check_float("2.5f16", 2.5, DT_F16);
  check_float("1e-05f", 1e-05, DT_F32);
  check_float("3f64", 3, DT_F64);
  check_float("0.1f64", 0.1, DT_F64);
  check_float("-0.5f", -0.5, DT_F32);
  check_float("1e+10f", 1e10, DT_F32);
  check_float("65504f16", 65504, DT_F16);
  check_float("inff", INFINITY, DT_F32);
  check_float("-inff", -INFINITY, DT_F32);
  check_float("--inff", INFINITY, DT_F32);
  check_float("nanf", NAN, DT_F32);
  check_float("inff64", INFINITY, DT_F64);
  check_float("inff16", INFINITY, DT_F16);
  check_float("-inff64", -INFINITY, DT_F64);
  check_float("nanf64", NAN, DT_F64);
  check_float("1e-50f", 1e-50, DT_F32); /* underflow is not an error */
}
END_TEST

START_TEST(test_float_errors) {
  check_error("1e40f", "out of range for float32");
  check_error("65520f16", "out of range for float16");
  check_error("1e400f64", "out of range for float64");
  check_error("1f8", "unsupported float width \"f8\"");
  check_error("1.2.3f", "invalid float literal");
  check_error("1e-f", "invalid float literal");
  check_error("inff8", "unsupported float width");
  /* `.5f` is `.` then `5f` */
  KINDS(".5f", TK_DOT, TK_FLOAT);
  /* TVM matches `inff` before identifiers: `inffoo` is `inff` `oo` */
  KINDS("inffoo", TK_FLOAT, TK_IDENT);
  KINDS("inff64x", TK_FLOAT, TK_IDENT);
  /* other identifiers merely starting like a literal stay identifiers */
  KINDS("nanfoo inf nan", TK_IDENT, TK_IDENT, TK_IDENT);
}
END_TEST

START_TEST(test_minus_runs) {
  /* a run of '-' not followed by a digit is subtraction, one token each */
  KINDS("--x", TK_MINUS, TK_MINUS, TK_IDENT);
  KINDS("%a - 1", TK_LOCAL, TK_MINUS, TK_INT);
  KINDS("%a -1", TK_LOCAL, TK_INT);
  KINDS("%a-1", TK_LOCAL, TK_INT);
  KINDS("- >", TK_MINUS, TK_GT);
  KINDS("->", TK_MINUS, TK_GT);
  Lexed *L = lex("%a -1");
  ck_assert_int_eq(L->tok[1].i.v, -1);
  ck_assert_uint_eq(L->tok[1].span.lo, 3);
  ck_assert_uint_eq(L->tok[1].span.hi, 5);
  done(L);
  /* `%t.0.1`: 0.1 is one (bad) integer */
  L = lex("%t.0.1");
  ck_assert_int_eq(L->n, 3);
  ck_assert_int_eq(L->tok[2].kind, TK_INT);
  ck_assert_int_eq(L->nerrors, 1);
  done(L);
}
END_TEST

/* -------------------------------------------------- names and keywords */

START_TEST(test_identifiers_and_sigils) {
  Lexed *L = lex("nn.conv2d a/b _x %x %base/x %True %_ @main %0 %007 %12");
  ck_assert_int_eq(L->nerrors, 0);
  ck_assert_int_eq(L->n, 13);
  ck_assert_int_eq(L->tok[0].kind, TK_IDENT);
  ck_assert(text_is(&L->tok[0], "nn"));
  ck_assert_int_eq(L->tok[1].kind, TK_DOT);
  ck_assert(text_is(&L->tok[2], "conv2d"));
  ck_assert(text_is(&L->tok[3], "a/b"));
  ck_assert(text_is(&L->tok[4], "_x"));
  ck_assert_int_eq(L->tok[5].kind, TK_LOCAL);
  ck_assert(text_is(&L->tok[5], "x"));
  ck_assert(text_is(&L->tok[6], "base/x"));
  ck_assert(text_is(&L->tok[7], "True"));
  ck_assert_int_eq(L->tok[8].kind, TK_LOCAL);
  ck_assert(text_is(&L->tok[8], "_"));
  ck_assert_int_eq(L->tok[9].kind, TK_GLOBAL);
  ck_assert(text_is(&L->tok[9], "main"));
  ck_assert_int_eq(L->tok[10].kind, TK_GRAPH);
  ck_assert_uint_eq(L->tok[10].graph, 0);
  ck_assert_uint_eq(L->tok[11].graph, 7);
  ck_assert_uint_eq(L->tok[12].graph, 12);
  done(L);
  KINDS("%1a", TK_GRAPH, TK_IDENT);
  /* `%x/%y` is the local `x/` followed by `%y` */
  L = lex("%x/%y");
  ck_assert_int_eq(L->n, 2);
  ck_assert(text_is(&L->tok[0], "x/"));
  ck_assert(text_is(&L->tok[1], "y"));
  done(L);
  KINDS("%x / %y", TK_LOCAL, TK_SLASH, TK_LOCAL);
  L = lex("%x/2");
  ck_assert_int_eq(L->n, 1);
  ck_assert(text_is(&L->tok[0], "x/2"));
  done(L);
}
END_TEST

START_TEST(test_sigil_errors) {
  check_error("% x", "'%' must be directly followed by a name or a number");
  check_error("@ f", "'@' must be directly followed by a name");
  check_error("%type", "keyword \"type\" cannot be used as a variable name");
  check_error("@fn", "keyword \"fn\" cannot be used as a global name");
  check_error("%99999999999", "graph variable number is too large");
  KINDS("@1", TK_ERROR, TK_INT);
}
END_TEST

START_TEST(test_keywords) {
  KINDS("def fn let if else type extern match match? free_var ref ref_read ref_write True False _",
        TK_DEF, TK_FN, TK_LET, TK_IF, TK_ELSE, TK_TYPE, TK_EXTERN, TK_MATCH, TK_MATCHP,
        TK_FREE_VAR, TK_REF, TK_REF_READ, TK_REF_WRITE, TK_BOOL, TK_BOOL, TK_UNDERSCORE);
  KINDS("match ?", TK_MATCH, TK_QUESTION);
  KINDS("define lets type_ refx Truex __ meta Tensor None", TK_IDENT, TK_IDENT, TK_IDENT,
        TK_IDENT, TK_IDENT, TK_IDENT, TK_IDENT, TK_IDENT, TK_IDENT);
  Lexed *L = lex("True False");
  ck_assert(L->tok[0].b);
  ck_assert(!L->tok[1].b);
  done(L);
}
END_TEST

START_TEST(test_punctuation_adjacency) {
  KINDS("( ) [ ] { } , . ; : = + - * / < > ! ?", TK_LPAREN, TK_RPAREN, TK_LBRACKET,
        TK_RBRACKET, TK_LBRACE, TK_RBRACE, TK_COMMA, TK_DOT, TK_SEMI, TK_COLON, TK_EQ, TK_PLUS,
        TK_MINUS, TK_STAR, TK_SLASH, TK_LT, TK_GT, TK_BANG, TK_QUESTION);
  KINDS("<= >= == != =>", TK_LE, TK_GE, TK_EQEQ, TK_NE, TK_DARROW);
  KINDS("< =", TK_LT, TK_EQ);
  KINDS("> =", TK_GT, TK_EQ);
  KINDS("= =", TK_EQ, TK_EQ);
  KINDS("! =", TK_BANG, TK_EQ);
  KINDS("= >", TK_EQ, TK_GT);
  KINDS("%0==%1", TK_GRAPH, TK_EQEQ, TK_GRAPH);
}
END_TEST

/* ------------------------------------------------- comments, whitespace */

START_TEST(test_comments) {
  KINDS("// line\n1 // x", TK_INT);
  KINDS("/* a /* b */ c */ 1", TK_INT);
  KINDS("/* x **/ 1", TK_INT); /* relayc: ordinary nesting, a star-slash always closes */
  KINDS("1/**/2", TK_INT, TK_INT);
  KINDS("/*/ */ 1", TK_INT);
  check_error("/* abc", "unterminated block comment");
  check_error("1 /* a /* b */", "unterminated block comment");
  Lexed *L = lex("1 /* open");
  ck_assert_int_eq(L->n, 1);
  ck_assert(strstr(L->diag, "t.relay:1:3: error"));
  done(L);
}
END_TEST

START_TEST(test_whitespace) {
  KINDS("1\r\n2\t3\n", TK_INT, TK_INT, TK_INT);
  check_error("1\r2", "carriage return not followed by a line feed");
  Lexed *L = lex("  \n\t ");
  ck_assert_int_eq(L->n, 0);
  ck_assert_int_eq(L->nerrors, 0);
  done(L);
}
END_TEST

/* ------------------------------------------------------------- strings */

START_TEST(test_strings) {
  Lexed *L = lex("\"NHWC\" \"\" \"a\\\"b\\\\c\\n\\t\\r\\x41\\x4a\" \"\\q\\x4\" \"line\nbreak\"");
  ck_assert_int_eq(L->nerrors, 0);
  ck_assert_int_eq(L->n, 5);
  ck_assert_int_eq(L->tok[0].kind, TK_STRING);
  ck_assert_uint_eq(L->tok[0].str.len, 4);
  ck_assert(memcmp(L->tok[0].str.chars, "NHWC", 4) == 0);
  ck_assert_uint_eq(L->tok[1].str.len, 0);
  ck_assert_uint_eq(L->tok[2].str.len, 10);
  ck_assert(memcmp(L->tok[2].str.chars, "a\"b\\c\n\t\rAJ", 10) == 0);
  /* unknown escapes keep their backslash (TVM reads backslashes literally) */
  ck_assert_uint_eq(L->tok[3].str.len, 5);
  ck_assert(memcmp(L->tok[3].str.chars, "\\q\\x4", 5) == 0);
  ck_assert(memcmp(L->tok[4].str.chars, "line\nbreak", 10) == 0);
  done(L);
  L = lex("\"x\\x00y\"");
  ck_assert_uint_eq(L->tok[0].str.len, 3);
  ck_assert_int_eq(L->tok[0].str.chars[1], 0);
  done(L);
  check_error("\"abc", "unterminated string literal");
  check_error("\"abc\\\"", "unterminated string literal");
  check_error("\"abc\\", "unterminated string literal");
}
END_TEST

/* ------------------------------------------------------- meta and #[ ] */

START_TEST(test_meta) {
  Lexed *L = lex("meta[relay.Constant][0] meta[tir.SizeVar][12] meta [x]");
  ck_assert_int_eq(L->nerrors, 0);
  ck_assert_int_eq(L->tok[0].kind, TK_META);
  ck_assert_uint_eq(L->tok[0].meta.keylen, 14);
  ck_assert(memcmp(L->tok[0].meta.key, "relay.Constant", 14) == 0);
  ck_assert_uint_eq(L->tok[0].meta.index, 0);
  ck_assert_uint_eq(L->tok[1].meta.index, 12);
  ck_assert_uint_eq(L->tok[1].span.lo, 24);
  ck_assert_uint_eq(L->tok[1].span.hi, 45);
  ck_assert_int_eq(L->tok[2].kind, TK_IDENT); /* `meta` only with `[` adjacent */
  ck_assert_int_eq(L->tok[3].kind, TK_LBRACKET);
  done(L);
  L = lex("meta[a b][3]"); /* whitespace becomes part of the key */
  ck_assert_int_eq(L->tok[0].kind, TK_META);
  ck_assert_uint_eq(L->tok[0].meta.keylen, 3);
  done(L);
  check_error("meta[x]", "malformed meta reference");
  check_error("meta[x][", "malformed meta reference");
  check_error("meta[x][1", "malformed meta reference");
  check_error("meta[][1]", "empty key in meta reference");
  check_error("meta[x][99999999999]", "meta reference index is too large");
}
END_TEST

START_TEST(test_hash_attrs) {
  KINDS("#[version = \"0.0.5\"]", TK_VERSION);
  KINDS("#[version=\"0.0.5\"]", TK_VERSION);
  KINDS("#[ version =  \"0.0.5\" ]", TK_VERSION);
  check_error("#[version = \"0.0.4\"]", "unsupported version header");
  check_error("#[version = 0.0.5]", "unsupported version header");
  check_error("#[version]", "unsupported version header");
  check_error("#[foo]", "unsupported attribute \"#[foo]\"");
  check_error("#[version", "unterminated #[...] attribute");
  check_error("# comment", "unexpected character '#'");
  /* #[metadata] stops the lexer; the rest is JSON */
  const char *s = "1 #[metadata]\n{\"root\": 1} ) ]";
  Lexed *L = lex(s);
  ck_assert_int_eq(L->n, 2);
  ck_assert_int_eq(L->tok[1].kind, TK_METADATA);
  ck_assert(L->lx.has_metadata);
  ck_assert_uint_eq(L->lx.meta_offset, 13);
  ck_assert_int_eq(L->nerrors, 0);
  done(L);
  KINDS("#[ metadata ]", TK_METADATA);
}
END_TEST

/* --------------------------------------------------- unknown and garbage */

START_TEST(test_unknown_bytes) {
  check_error("&", "unexpected character '&'");
  check_error("$x", "unexpected character '$'");
  check_error("\xff", "unexpected byte 0xff");
  Lexed *L = lexn("1 \0 2", 5);
  ck_assert_int_eq(L->n, 3);
  ck_assert_int_eq(L->tok[1].kind, TK_ERROR);
  ck_assert(strstr(L->diag, "unexpected byte 0x00"));
  done(L);
  /* an unknown character swallows everything up to the next whitespace */
  KINDS("&abc) 1", TK_ERROR, TK_INT);
  /* NUL bytes inside comments and strings are ordinary */
  L = lexn("/* \0 */ \"a\0b\" // \0\n7", 20);
  ck_assert_int_eq(L->nerrors, 0);
  ck_assert_int_eq(L->n, 2);
  ck_assert_uint_eq(L->tok[0].str.len, 3);
  done(L);
}
END_TEST

START_TEST(test_every_byte_and_garbage) {
  for (int c = 0; c < 256; c++) {
    char b[3] = {(char)c, (char)c, 'x'};
    for (size_t n = 1; n <= 3; n++) done(lexn(b, n));
  }
  srand(1234);
  for (int round = 0; round < 200; round++) {
    char buf[300];
    size_t n = (size_t)(rand() % 300);
    for (size_t i = 0; i < n; i++) buf[i] = (char)(rand() % 256);
    done(lexn(buf, n));
  }
  /* printable garbage that exercises the number and sigil rules */
  const char alphabet[] = "-%@0123456789.eEif+\"/*[]#meta \n";
  for (int round = 0; round < 300; round++) {
    char buf[64];
    size_t n = (size_t)(rand() % 64);
    for (size_t i = 0; i < n; i++) buf[i] = alphabet[rand() % (int)(sizeof alphabet - 1)];
    done(lexn(buf, n));
  }
}
END_TEST

START_TEST(test_truncated_buffers) {
  /* every prefix of a token-rich text, lexed from an exact-size buffer */
  const char *s = "#[version = \"0.0.5\"]\n/* c /* n */ */ def @f(%x: Tensor[(1, ?), float32]) "
                  "{ %0 = nn.conv2d(%x, meta[relay.Constant][10], s=\"a\\x41\") ; -inff64 + 2.5f16 "
                  "<= 42i64 } // end\n#[metadata]\n{}";
  size_t n = strlen(s);
  for (size_t i = 0; i <= n; i++) done(lexn(s, i));
}
END_TEST

START_TEST(test_spans) {
  Lexed *L = lex("def @main(%x)\n  { 12i64 }");
  ck_assert_int_eq(L->n, 8);
  ck_assert_uint_eq(L->tok[0].span.lo, 0);
  ck_assert_uint_eq(L->tok[0].span.hi, 3);
  ck_assert_uint_eq(L->tok[1].span.lo, 4);
  ck_assert_uint_eq(L->tok[1].span.hi, 9);
  ck_assert_uint_eq(L->tok[3].span.lo, 10);
  ck_assert_uint_eq(L->tok[3].span.hi, 12);
  ck_assert_uint_eq(L->tok[6].span.lo, 18);
  ck_assert_uint_eq(L->tok[6].span.hi, 23);
  done(L);
}
END_TEST

/* ------------------------------------------------------------ dump */

static char *dump(const char *s, bool *ok) {
  char *buf = mem_malloc(strlen(s) + 1);
  memcpy(buf, s, strlen(s));
  Source *src = source_new("d.relay", buf, strlen(s));
  char *out, *diag;
  size_t olen, dlen;
  FILE *o = open_memstream(&out, &olen), *e = open_memstream(&diag, &dlen);
  Diag d;
  diag_init(&d, e, src);
  *ok = dump_tokens(src, o, &d);
  fclose(o);
  fclose(e);
  free(diag);
  source_free(src);
  return out;
}

START_TEST(test_dump_tokens) {
  bool ok;
  char *out = dump("#[version = \"0.0.5\"]\ndef @f(%x) {\n  add(%x, 1f) // c\n}\n", &ok);
  ck_assert(ok);
  ck_assert_str_eq(out, "1:1 VERSION #[version = \"0.0.5\"]\n"
                        "2:1 DEF def\n"
                        "2:5 GLOBAL @f\n"
                        "2:7 LPAREN (\n"
                        "2:8 LOCAL %x\n"
                        "2:10 RPAREN )\n"
                        "2:12 LBRACE {\n"
                        "3:3 IDENT add\n"
                        "3:6 LPAREN (\n"
                        "3:7 LOCAL %x\n"
                        "3:9 COMMA ,\n"
                        "3:11 FLOAT 1f\n"
                        "3:13 RPAREN )\n"
                        "4:1 RBRACE }\n"
                        "5:1 EOF\n");
  free(out);
  out = dump("\"a\nb\" &", &ok);
  ck_assert(!ok);
  ck_assert_str_eq(out, "1:1 STRING \"a\\nb\"\n2:4 ERROR &\n2:5 EOF\n");
  free(out);
}
END_TEST

static Suite *lexer_suite(void) {
  Suite *s = suite_create("lexer");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_integers);
  tcase_add_test(tc, test_integer_errors);
  tcase_add_test(tc, test_floats);
  tcase_add_test(tc, test_float_errors);
  tcase_add_test(tc, test_minus_runs);
  tcase_add_test(tc, test_identifiers_and_sigils);
  tcase_add_test(tc, test_sigil_errors);
  tcase_add_test(tc, test_keywords);
  tcase_add_test(tc, test_punctuation_adjacency);
  tcase_add_test(tc, test_comments);
  tcase_add_test(tc, test_whitespace);
  tcase_add_test(tc, test_strings);
  tcase_add_test(tc, test_meta);
  tcase_add_test(tc, test_hash_attrs);
  tcase_add_test(tc, test_unknown_bytes);
  tcase_add_test(tc, test_every_byte_and_garbage);
  tcase_add_test(tc, test_truncated_buffers);
  tcase_add_test(tc, test_spans);
  tcase_add_test(tc, test_dump_tokens);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(lexer_suite());
}
