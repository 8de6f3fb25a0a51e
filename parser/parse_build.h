/* parser/parse_build.h — the parser's state and the AST-building helpers its
 * grammar actions call (parser/parse_build.c). Internal to parser/.
 *
 * Lists are built on one scratch stack of pointers shared by every list under
 * construction: a list in progress is a (start, n) window on it, and because
 * the grammar is nested, the list being extended or frozen is always the
 * topmost one. Error recovery can abandon a list midway; the next push or
 * freeze of an outer list first drops whatever lies above its own window, so
 * abandoned items never leak into it. Freezing copies the window into the
 * module arena and pops it. Binding chains (`let`, `%N =`, `e;`, free_var)
 * are linked through their `body` fields as they are parsed, so a chain of
 * any length costs no extra memory and no recursion. Names are interned
 * (one arena copy per distinct spelling), which matters for memory on large
 * modules where the same operators and locals recur on every line.
 */
#ifndef RELAYC_PARSER_PARSE_BUILD_H
#define RELAYC_PARSER_PARSE_BUILD_H

#include "ir/ast.h"
#include "ir/mem.h"
#include "lexer/lexer.h"

typedef struct PList { uint32_t start, n; } PList;     /* a list under construction */
typedef struct FList { void **v; uint32_t n; } FList;  /* a frozen list (arena) */
typedef struct Chain { Expr *head, *last; } Chain;     /* binding items linked by body */
typedef struct Text { const char *p; uint32_t n; } Text; /* a name inside the source */
typedef struct FParams { FList params; Attrs *attrs; } FParams; /* a function's ( ... ) */

typedef struct Parser {
  Lexer lx;
  Module *m;
  Diag *d;
  bool expr_mode;     /* parse_expression: `[version] expr [metadata]` */
  bool started;       /* the start token has been handed out */
  bool saw_token;     /* first_span is set */
  Span first_span;    /* span of the first real token (for "missing version header") */
  Token last;         /* the last token handed to the parser */
  FList args;         /* the last `args` reduced (consumed by its call) */
  Attrs *args_attrs;
  VEC(void *) scratch;
  const char **names;  /* interned names: open addressing, power-of-two size */
  uint32_t names_cap, names_len;
  VEC(GlobalDef *) defs;
  VEC(TypeDef *) types;
} Parser;

/* ---- lists */
PList pb_list1(Parser *p, void *item);
PList pb_list_add(Parser *p, PList l, void *item);
FList pb_freeze(Parser *p, PList l);
FList pb_empty(void);
/* Frees the parser's heap memory (scratch, intern table, def lists). */
void pb_release(Parser *p);

/* ---- names */
const char *pb_name(Parser *p, Text t);
/* A dotted chain from its source extent (first identifier to last). */
const char *pb_dotted_name(Parser *p, Text extent);

/* ---- expressions */
Expr *pb_int(Parser *p, int64_t v, DType dt, Span sp);
Expr *pb_float(Parser *p, double v, DType dt, Span sp);
Expr *pb_local(Parser *p, Text name, Span sp);
Expr *pb_global(Parser *p, Text name, Span sp);
Expr *pb_graph_ref(Parser *p, uint32_t num, Span sp);
Expr *pb_meta(Parser *p, const char *key, uint32_t keylen, uint32_t index, Span sp);
Expr *pb_name_expr(Parser *p, const char *name, Span sp);
Expr *pb_unit(Parser *p, Span sp);
Expr *pb_tuple(Parser *p, FList fields, Span sp);
Expr *pb_proj(Parser *p, Expr *tuple, int64_t index, Span index_span, Span sp);
void pb_args(Parser *p, FList args, Attrs *attrs);
Expr *pb_call(Parser *p, Expr *fn, FList args, Attrs *attrs, Span sp);
Expr *pb_binop(Parser *p, const char *op, Span op_span, Expr *a, Expr *b);
Expr *pb_fn(Parser *p, Function *f);
Expr *pb_if(Parser *p, Expr *c, Expr *t, Expr *e, Span sp);
Expr *pb_ref(Parser *p, ExprKind kind, Expr *a, Expr *b, Span sp);
Expr *pb_match(Parser *p, bool partial, Expr *scrut, FList clauses, Span sp);
Clause *pb_clause(Parser *p, Pattern *pat, Expr *body, Span sp);

/* ---- binding chains: items are created with a NULL body */
Expr *pb_let(Parser *p, Text name, Span name_span, Type *annot, Expr *value, Span sp);
Expr *pb_seq(Parser *p, Expr *value, Span sp);
Expr *pb_graph_bind(Parser *p, uint32_t num, Expr *value, Span sp);
Expr *pb_free_var(Parser *p, Text name, Span name_span, Type *annot, Span sp);
Chain pb_chain1(Expr *item);
Chain pb_chain_add(Chain c, Expr *item);
Expr *pb_chain_close(Chain c, Expr *tail);
Expr *pb_set_body(Expr *item, Expr *body);

/* ---- functions and parameters */
FParams *pb_fparams(Parser *p, FList params, Attrs *attrs);
Var *pb_param(Parser *p, Text name, Span sp, Attrs *attrs, Type *annot);
Function *pb_function(Parser *p, FList tparams, FList params, Attrs *attrs, Type *ret,
                      Expr *body, Span sp);
TypeParam *pb_tparam(Parser *p, Text name, Span sp);
void pb_def(Parser *p, Text name, Span name_span, Function *f);

/* ---- attributes */
Attr *pb_attr(Parser *p, const char *key, AttrValue *v, Span sp);
Attrs *pb_attrs(Parser *p, FList items);
AttrValue *pb_av(Parser *p, AttrValueKind kind, Span sp);
AttrValue *pb_av_name(Parser *p, const char *name, Span sp);
AttrValue *pb_av_expr(Parser *p, Expr *e);
AttrValue *pb_av_array(Parser *p, FList items, Span sp);

/* ---- types */
Type *pb_type_ident(Parser *p, Text name, Span sp);
Type *pb_type_app(Parser *p, Text name, FList args, Span sp);
Type *pb_type_tensor(Parser *p, FList dims, Text dtype, Span dtype_span, Span sp);
Type *pb_type_tuple(Parser *p, FList fields, Span sp);
Type *pb_type_func(Parser *p, FList tparams, FList args, Type *ret, Span sp);
Type *pb_type_ref(Parser *p, Type *inner, Span sp);
Type *pb_type_incomplete(Parser *p, Span sp);
Dim *pb_dim_int(Parser *p, int64_t v, DType dt);
Dim *pb_dim_any(Parser *p);
Dim *pb_dim_meta(Parser *p, const char *key, uint32_t keylen, uint32_t index, Span sp);

/* ---- patterns */
Pattern *pb_pat_wild(Parser *p, Span sp);
Pattern *pb_pat_var(Parser *p, Text name, Span name_span, Type *annot, Span sp);
Pattern *pb_pat_ctor(Parser *p, Text name, FList args, Span sp);
Pattern *pb_pat_tuple(Parser *p, FList fields, Span sp);

/* ---- type definitions */
Ctor *pb_ctor(Parser *p, Text name, FList fields, Span sp);
TypeDef *pb_typedef(Parser *p, Text name, Span name_span, FList tparams, FList ctors,
                    bool has_body, bool is_extern, Span sp);

#endif
