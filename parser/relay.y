/* parser/relay.y — the Bison grammar of the Relay 0.0.5 text format
 * (spec/text-format.md §3–4), building the pre-resolve AST of ir/ast.h.
 *
 * One LALR(1) grammar serves both entry points: relay_lex hands out a
 * synthetic first token (START_MODULE or START_EXPR). Every list and every
 * binding chain is left-recursive, so the parser stack stays shallow however
 * long a module is; nesting depth is bounded only by YYMAXDEPTH (10 million
 * entries, heap-allocated through ir/mem.h), past which the parser reports an
 * error instead of crashing. No action recurses. Syntax errors are reported
 * with human token names (parse.error custom + LAC, so the expected set is
 * exact) and recovered from at `;`, `}` and `)`; the module built so far is
 * always returned. Comma leniency (§3.9): after the first separator of a
 * list, later ones may be omitted; an item that would start with `(` right
 * after an expression continues it as a call instead (TVM's reading).
 */
%require "3.8"
%define api.pure full
%define api.prefix {relay_}
%define api.token.prefix {RT_}
%define api.location.type {Span}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {Parser *p}

%code requires {
#include "parser/parse_build.h"
}

%code {
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/metadata.h"
#include "parser/parser.h"

#define YYMAXDEPTH 10000000
#define YYMALLOC mem_malloc_try
#define YYFREE mem_free
#define YYSTACK_USE_ALLOCA 0
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                             \
  do {                                                                          \
    if (N) (Cur) = span_make(YYRHSLOC(Rhs, 1).lo, YYRHSLOC(Rhs, N).hi);         \
    else (Cur) = span_make(YYRHSLOC(Rhs, 0).hi, YYRHSLOC(Rhs, 0).hi);           \
  } while (0)

static int relay_lex(RELAY_STYPE *v, Span *loc, Parser *p);
static void relay_error(Span *loc, Parser *p, const char *msg);
#define J(a, b) span_join((a), (b))
#define FREEZE(l) pb_freeze(p, (l))
}

%union {
  Expr *e;
  Type *t;
  Pattern *pat;
  Var *var;
  Function *fn;
  Attrs *attrs;
  AttrValue *av;
  Attr *attr;
  TypeParam *tp;
  Ctor *ctor;
  Clause *clause;
  Dim *dim;
  Text text;
  uint32_t u;
  bool b;
  struct { int64_t v; DType dt; } i;
  struct { double v; DType dt; } f;
  struct { const char *chars; uint32_t len; } str;
  struct { const char *key; uint32_t keylen; uint32_t index; } meta;
  PList list;
  FList flist;
  Chain chain;
  FParams *params;
}

%token START_MODULE "start of module" START_EXPR "start of expression"
%token <text> IDENT "identifier" LOCAL "local variable" GLOBAL "global variable"
%token <text> TENSOR "Tensor"
%token <u> GRAPH "graph variable"
%token <i> INT "integer"
%token <f> FLOAT "float"
%token <b> BOOL "boolean"
%token <str> STRING "string"
%token <meta> META "meta reference"
%token VERSION "version header" METADATA "#[metadata]"
%token DEF "def" FN "fn" LET "let" IF "if" ELSE "else" TYPE "type" EXTERN "extern"
%token MATCH "match" MATCHP "match?" FREE_VAR "free_var"
%token REF "ref" REF_READ "ref_read" REF_WRITE "ref_write" UNDERSCORE "_"
%token LPAREN "(" RPAREN ")" LBRACKET "[" RBRACKET "]" LBRACE "{" RBRACE "}"
%token COMMA "," DOT "." SEMI ";" COLON ":" EQ "=" BANG "!" QUESTION "?" DARROW "=>"
%token PLUS "+" MINUS "-" STAR "*" SLASH "/" LT "<" GT ">" LE "<=" GE ">=" EQEQ "==" NE "!="

/* `f(%a, %b (%c))`: a `(` after a list item continues it as a call (shift),
 * as TVM's greedy parser does, rather than starting the next item. */
%precedence CALL_END
%precedence "("
%left "==" "!="
%left "<" ">" "<=" ">="
%left "+" "-"
%left "*" "/"

%type <e> expr bvalue infix call primary braced match seq_item
%type <chain> seq
%type <text> dotted
%type <list> exprs1 exprsn tparams1 tparamsn params1 paramsn attrs1
%type <list> types1 typesn dims1 dimsn pats1 patsn clauses1 clausesn ctors1 ctorsn avs1 avsn
%type <flist> tparams tparams_opt types_opt types_tuple shape pats_opt clauses_opt ctors_opt avs_opt
%type <params> fparams
%type <attrs> attr_list param_attrs_opt
%type <attr> attr
%type <av> attr_value
%type <t> type annot_opt ret_opt
%type <dim> dim
%type <pat> pattern pattern_np
%type <clause> clause clause_np
%type <var> param
%type <fn> function
%type <tp> tparam
%type <ctor> ctor
%type <b> match_kw

%%

start
  : START_MODULE module
  | START_EXPR version expr metadata_opt  { p->m->expr = $3; }
  ;

module
  : version defs metadata_opt
  ;

version
  : %empty  { if (!p->expr_mode) diag_error(p->d, p->first_span, "expected the version header #[version = \"0.0.5\"]"); }
  | VERSION
  ;

metadata_opt
  : %empty
  | METADATA
  ;

defs
  : %empty
  | defs def
  ;

def
  : DEF GLOBAL function         { pb_def(p, $2, @2, $3); $3->span = J(@1, $3->span); }
  | type_def
  | EXTERN TYPE IDENT tparams_opt
      { pb_typedef(p, $3, @3, $4, pb_empty(), false, true, @$); }
  | EXTERN TYPE IDENT tparams_opt "{" ctors_opt "}"
      { pb_typedef(p, $3, @3, $4, $6, true, true, @$); }
  | error "}"
  ;

type_def
  : TYPE IDENT tparams_opt                   { pb_typedef(p, $2, @2, $3, pb_empty(), false, false, @$); }
  | TYPE IDENT tparams_opt "{" ctors_opt "}" { pb_typedef(p, $2, @2, $3, $5, true, false, @$); }
  ;

ctors_opt
  : %empty       { $$ = pb_empty(); }
  | ctors1       { $$ = FREEZE($1); }
  | ctors1 ","   { $$ = FREEZE($1); }
  | ctorsn       { $$ = FREEZE($1); }
  | ctorsn ","   { $$ = FREEZE($1); }
  ;
ctors1: ctor                 { $$ = pb_list1(p, $1); } ;
ctorsn
  : ctors1 "," ctor          { $$ = pb_list_add(p, $1, $3); }
  | ctorsn "," ctor          { $$ = pb_list_add(p, $1, $3); }
  | ctorsn ctor              { $$ = pb_list_add(p, $1, $2); }
  ;
ctor
  : IDENT                    { $$ = pb_ctor(p, $1, pb_empty(), @$); }
  | IDENT "(" types_opt ")"  { $$ = pb_ctor(p, $1, $3, @$); }
  ;

/* ------------------------------------------------------------ functions */

function
  : tparams_opt "(" fparams ")" ret_opt braced
      { $$ = pb_function(p, $1, $3->params, $3->attrs, $5, $6, @$); }
  | tparams_opt "(" error ")" ret_opt braced
      { $$ = pb_function(p, $1, pb_empty(), NULL, $5, $6, @$); }
  ;

tparams_opt
  : %empty    { $$ = pb_empty(); }
  | tparams
  ;
tparams
  : "[" "]"              { $$ = pb_empty(); }
  | "[" tparams1 "]"     { $$ = FREEZE($2); }
  | "[" tparams1 "," "]" { $$ = FREEZE($2); }
  | "[" tparamsn "]"     { $$ = FREEZE($2); }
  | "[" tparamsn "," "]" { $$ = FREEZE($2); }
  ;
tparams1: tparam               { $$ = pb_list1(p, $1); } ;
tparamsn
  : tparams1 "," tparam        { $$ = pb_list_add(p, $1, $3); }
  | tparamsn "," tparam        { $$ = pb_list_add(p, $1, $3); }
  | tparamsn tparam            { $$ = pb_list_add(p, $1, $2); }
  ;
tparam: IDENT                  { $$ = pb_tparam(p, $1, @1); } ;

fparams
  : %empty                        { $$ = pb_fparams(p, pb_empty(), NULL); }
  | params1                       { $$ = pb_fparams(p, FREEZE($1), NULL); }
  | params1 ","                   { $$ = pb_fparams(p, FREEZE($1), NULL); }
  | paramsn                       { $$ = pb_fparams(p, FREEZE($1), NULL); }
  | paramsn ","                   { $$ = pb_fparams(p, FREEZE($1), NULL); }
  | attr_list                     { $$ = pb_fparams(p, pb_empty(), $1); }
  | params1 "," attr_list         { $$ = pb_fparams(p, FREEZE($1), $3); }
  | paramsn "," attr_list         { $$ = pb_fparams(p, FREEZE($1), $3); }
  ;
params1: param                    { $$ = pb_list1(p, $1); } ;
paramsn
  : params1 "," param             { $$ = pb_list_add(p, $1, $3); }
  | paramsn "," param             { $$ = pb_list_add(p, $1, $3); }
  | paramsn param                 { $$ = pb_list_add(p, $1, $2); }
  ;
param
  : LOCAL param_attrs_opt annot_opt  { $$ = pb_param(p, $1, @1, $2, $3); }
  | GRAPH param_attrs_opt annot_opt
      { diag_error(p->d, @1, "a parameter name cannot be a number");
        $$ = pb_param(p, (Text){"v", 1}, @1, $2, $3); }
  ;
param_attrs_opt
  : %empty                  { $$ = NULL; }
  | "{" attr_list "}"       { $$ = $2; }
  ;

ret_opt
  : %empty          { $$ = NULL; }
  | "-" ">" type    { $$ = $3; }
  ;

braced
  : "{" expr "}"    { $$ = $2; }
  | "{" error "}"   { $$ = pb_unit(p, @$); }
  ;

/* ----------------------------------------------------------- attributes */

attr_list
  : attrs1          { $$ = pb_attrs(p, FREEZE($1)); }
  | attrs1 ","      { $$ = pb_attrs(p, FREEZE($1)); }
  ;
attrs1
  : attr            { $$ = pb_list1(p, $1); }
  | attrs1 "," attr { $$ = pb_list_add(p, $1, $3); }
  | attrs1 attr     { $$ = pb_list_add(p, $1, $2); }
  ;
attr
  : dotted "=" attr_value  { $$ = pb_attr(p, pb_dotted_name(p, $1), $3, @$); }
  ;

attr_value
  : INT          { $$ = pb_av(p, AV_INT, @$); $$->i.value = $1.v; $$->i.dtype = $1.dt; }
  | FLOAT        { $$ = pb_av(p, AV_FLOAT, @$); $$->f.value = $1.v; $$->f.dtype = $1.dt; }
  | BOOL         { $$ = pb_av(p, AV_BOOL, @$); $$->b = $1; }
  | STRING       { $$ = pb_av(p, AV_STRING, @$);
                   $$->s.chars = arena_strndup(p->m->arena, $1.chars, $1.len); $$->s.len = $1.len; }
  | META         { $$ = pb_av(p, AV_META, @$);
                   $$->meta.key = arena_strndup(p->m->arena, $1.key, $1.keylen); $$->meta.index = $1.index; }
  | "?"          { $$ = pb_av(p, AV_ANY, @$); }
  | "[" avs_opt "]"        { $$ = pb_av_array(p, $2, @$); }
  | "(" attr_value ")"     { $$ = $2; $$->span = @$; }
  | dotted       { $$ = pb_av_name(p, pb_dotted_name(p, $1), @$); }
  | LOCAL        { $$ = pb_av_expr(p, pb_local(p, $1, @1)); }
  | GLOBAL       { $$ = pb_av_expr(p, pb_global(p, $1, @1)); }
  | GRAPH        { $$ = pb_av_expr(p, pb_graph_ref(p, $1, @1)); }
  | FN function  { $$ = pb_av_expr(p, pb_fn(p, $2)); $$->expr->span = $$->span = @$; }
  ;
avs_opt
  : %empty       { $$ = pb_empty(); }
  | avs1         { $$ = FREEZE($1); }
  | avs1 ","     { $$ = FREEZE($1); }
  | avsn         { $$ = FREEZE($1); }
  | avsn ","     { $$ = FREEZE($1); }
  ;
avs1: attr_value              { $$ = pb_list1(p, $1); } ;
avsn
  : avs1 "," attr_value       { $$ = pb_list_add(p, $1, $3); }
  | avsn "," attr_value       { $$ = pb_list_add(p, $1, $3); }
  | avsn attr_value           { $$ = pb_list_add(p, $1, $2); }
  ;

/* ---------------------------------------------------------- expressions */

/* `stmt` of the spec is inlined (infix | braced | match) to keep the chain
 * of unit reductions per operand short: parsing speed is mostly that. */
expr
  : infix
  | braced
  | match
  | seq infix            { $$ = pb_chain_close($1, $2); }
  | seq braced           { $$ = pb_chain_close($1, $2); }
  | seq match            { $$ = pb_chain_close($1, $2); }
  ;
seq
  : seq_item             { $$ = pb_chain1($1); }
  | seq seq_item         { $$ = pb_chain_add($1, $2); }
  ;
seq_item
  : infix ";"                          { $$ = pb_seq(p, $1, @$); }
  | braced ";"                         { $$ = pb_seq(p, $1, @$); }
  | match ";"                          { $$ = pb_seq(p, $1, @$); }
  | LET LOCAL annot_opt "=" bvalue ";" { $$ = pb_let(p, $2, @2, $3, $5, @$); }
  | LET GRAPH annot_opt "=" bvalue ";"
      { diag_error(p->d, @2, "a let variable cannot be a number (graph bindings are written %%N = value;)");
        $$ = pb_let(p, (Text){"v", 1}, @2, $3, $5, @$); }
  | GRAPH "=" bvalue ";"               { $$ = pb_graph_bind(p, $1, $3, @$); }
  | FREE_VAR LOCAL annot_opt ";"       { $$ = pb_free_var(p, $2, @2, $3, @$); }
  | error ";"                          { $$ = pb_seq(p, pb_unit(p, @1), @$); }
  ;

/* A binding's value: an infix expression, and (relayc, §7.10) also an
 * unparenthesised match, block or let. */
bvalue
  : infix
  | braced
  | match
  | LET LOCAL annot_opt "=" bvalue ";" bvalue
      { $$ = pb_set_body(pb_let(p, $2, @2, $3, $5, J(@1, @6)), $7); }
  ;

match
  : match_kw call "{" clauses_opt "}"   { $$ = pb_match(p, $1, $2, $4, @$); }
  | match_kw call "{" error "}"         { $$ = pb_match(p, $1, $2, pb_empty(), @$); }
  ;
match_kw
  : MATCH     { $$ = false; }
  | MATCHP    { $$ = true; }
  ;
clauses_opt
  : %empty        { $$ = pb_empty(); }
  | clauses1      { $$ = FREEZE($1); }
  | clauses1 ","  { $$ = FREEZE($1); }
  | clausesn      { $$ = FREEZE($1); }
  | clausesn ","  { $$ = FREEZE($1); }
  ;
clauses1: clause                 { $$ = pb_list1(p, $1); } ;
clausesn
  : clauses1 "," clause          { $$ = pb_list_add(p, $1, $3); }
  | clausesn "," clause          { $$ = pb_list_add(p, $1, $3); }
  | clausesn clause_np           { $$ = pb_list_add(p, $1, $2); }
  ;
clause: pattern "=>" expr        { $$ = pb_clause(p, $1, $3, @$); } ;
clause_np: pattern_np "=>" expr  { $$ = pb_clause(p, $1, $3, @$); } ;

infix
  : call %prec CALL_END
  | infix "*" infix     { $$ = pb_binop(p, "multiply", @2, $1, $3); }
  | infix "/" infix     { $$ = pb_binop(p, "divide", @2, $1, $3); }
  | infix "+" infix     { $$ = pb_binop(p, "add", @2, $1, $3); }
  | infix "-" infix     { $$ = pb_binop(p, "subtract", @2, $1, $3); }
  | infix "<" infix     { $$ = pb_binop(p, "less", @2, $1, $3); }
  | infix ">" infix     { $$ = pb_binop(p, "greater", @2, $1, $3); }
  | infix "<=" infix    { $$ = pb_binop(p, "less_equal", @2, $1, $3); }
  | infix ">=" infix    { $$ = pb_binop(p, "greater_equal", @2, $1, $3); }
  | infix "==" infix    { $$ = pb_binop(p, "equal", @2, $1, $3); }
  | infix "!=" infix    { $$ = pb_binop(p, "not_equal", @2, $1, $3); }
  ;

/* Operands. At most one projection per operand (`%t.0.1` is rejected);
 * locals and graph variables are listed here directly, again to save a
 * unit reduction on the most frequent operands. */
call
  : primary
  | primary "." INT         { $$ = pb_proj(p, $1, $3.v, @3, @$); }
  | LOCAL                   { $$ = pb_local(p, $1, @$); }
  | LOCAL "." INT           { $$ = pb_proj(p, pb_local(p, $1, @1), $3.v, @3, @$); }
  | GRAPH                   { $$ = pb_graph_ref(p, $1, @$); }
  | GRAPH "." INT           { $$ = pb_proj(p, pb_graph_ref(p, $1, @1), $3.v, @3, @$); }
  | dotted                  { $$ = pb_name_expr(p, pb_dotted_name(p, $1), @$); }
  | dotted "." INT          { $$ = pb_proj(p, pb_name_expr(p, pb_dotted_name(p, $1), @1), $3.v, @3, @$); }
  | call "(" args ")"       { $$ = pb_call(p, $1, p->args, p->args_attrs, @$); }
  | call "(" error ")"      { $$ = pb_call(p, $1, pb_empty(), NULL, @$); }
  ;

/* The value of `args` goes through the parser state: the enclosing call is
 * always reduced right after its `)`, before any other `args` can be. */
args
  : %empty                  { pb_args(p, pb_empty(), NULL); }
  | exprs1                  { pb_args(p, FREEZE($1), NULL); }
  | exprs1 ","              { pb_args(p, FREEZE($1), NULL); }
  | exprsn                  { pb_args(p, FREEZE($1), NULL); }
  | exprsn ","              { pb_args(p, FREEZE($1), NULL); }
  | attr_list               { pb_args(p, pb_empty(), $1); }
  | exprs1 "," attr_list    { pb_args(p, FREEZE($1), $3); }
  | exprsn "," attr_list    { pb_args(p, FREEZE($1), $3); }
  ;
exprs1: expr                { $$ = pb_list1(p, $1); } ;
exprsn
  : exprs1 "," expr         { $$ = pb_list_add(p, $1, $3); }
  | exprsn "," expr         { $$ = pb_list_add(p, $1, $3); }
  | exprsn expr             { $$ = pb_list_add(p, $1, $2); }
  ;

/* A dotted name is kept as its source extent (whitespace and comments may
 * sit around the dots; pb_dotted_name squeezes them out). */
dotted
  : IDENT                   { $$ = $1; }
  | TENSOR                  { $$ = $1; }
  | dotted "." IDENT        { $$.p = $1.p; $$.n = (uint32_t)($3.p + $3.n - $1.p); }
  ;

primary
  : INT                     { $$ = pb_int(p, $1.v, $1.dt, @$); }
  | FLOAT                   { $$ = pb_float(p, $1.v, $1.dt, @$); }
  | BOOL                    { $$ = expr_scalar_bool(p->m, $1, @$); }
  | GLOBAL                  { $$ = pb_global(p, $1, @$); }
  | META                    { $$ = pb_meta(p, $1.key, $1.keylen, $1.index, @$); }
  | FN function             { $$ = pb_fn(p, $2); $$->span = $2->span = @$; }
  | IF "(" expr ")" braced ELSE braced   { $$ = pb_if(p, $3, $5, $7, @$); }
  | REF "(" expr ")"        { $$ = pb_ref(p, EXPR_REF_NEW, $3, NULL, @$); }
  | REF_READ "(" expr ")"   { $$ = pb_ref(p, EXPR_REF_READ, $3, NULL, @$); }
  | REF_WRITE "(" expr "," expr ")"      { $$ = pb_ref(p, EXPR_REF_WRITE, $3, $5, @$); }
  | "(" ")"                 { $$ = pb_unit(p, @$); }
  | "(" exprs1 ")"          { FList f = FREEZE($2); $$ = f.v[0]; }
  | "(" exprs1 "," ")"      { $$ = pb_tuple(p, FREEZE($2), @$); }
  | "(" exprsn ")"          { $$ = pb_tuple(p, FREEZE($2), @$); }
  | "(" exprsn "," ")"      { $$ = pb_tuple(p, FREEZE($2), @$); }
  | "(" error ")"           { $$ = pb_unit(p, @$); }
  ;

/* -------------------------------------------------------------- patterns */

pattern
  : pattern_np
  | "(" pats_opt ")"              { $$ = pb_pat_tuple(p, $2, @$); }
  ;
pattern_np
  : "_"                           { $$ = pb_pat_wild(p, @$); }
  | LOCAL annot_opt               { $$ = pb_pat_var(p, $1, @1, $2, @$); }
  | GRAPH annot_opt
      { diag_error(p->d, @1, "a pattern variable cannot be a number");
        $$ = pb_pat_var(p, (Text){"v", 1}, @1, $2, @$); }
  | IDENT                         { $$ = pb_pat_ctor(p, $1, pb_empty(), @$); }
  | IDENT "(" pats_opt ")"        { $$ = pb_pat_ctor(p, $1, $3, @$); }
  ;
pats_opt
  : %empty      { $$ = pb_empty(); }
  | pats1       { $$ = FREEZE($1); }
  | pats1 ","   { $$ = FREEZE($1); }
  | patsn       { $$ = FREEZE($1); }
  | patsn ","   { $$ = FREEZE($1); }
  ;
pats1: pattern                   { $$ = pb_list1(p, $1); } ;
patsn
  : pats1 "," pattern            { $$ = pb_list_add(p, $1, $3); }
  | patsn "," pattern            { $$ = pb_list_add(p, $1, $3); }
  | patsn pattern_np             { $$ = pb_list_add(p, $1, $2); }
  ;

/* ----------------------------------------------------------------- types */

annot_opt
  : %empty       { $$ = NULL; }
  | ":" type     { $$ = $2; }
  ;

type
  : "(" ")"                       { $$ = pb_type_tuple(p, pb_empty(), @$); }
  | "(" types_tuple ")"           { $$ = pb_type_tuple(p, $2, @$); }
  | FN tparams_opt "(" types_opt ")" "-" ">" type   { $$ = pb_type_func(p, $2, $4, $8, @$); }
  | TENSOR "[" shape "," IDENT "]"                  { $$ = pb_type_tensor(p, $3, $5, @5, @$); }
  | IDENT                         { $$ = pb_type_ident(p, $1, @$); }
  | IDENT "[" types_opt "]"       { $$ = pb_type_app(p, $1, $3, @$); }
  | "_"                           { $$ = pb_type_incomplete(p, @$); }
  | REF "(" type ")"              { $$ = pb_type_ref(p, $3, @$); }
  ;
types_opt
  : %empty         { $$ = pb_empty(); }
  | types_tuple
  ;
types_tuple
  : types1         { $$ = FREEZE($1); }
  | types1 ","     { $$ = FREEZE($1); }
  | typesn         { $$ = FREEZE($1); }
  | typesn ","     { $$ = FREEZE($1); }
  ;
types1: type                    { $$ = pb_list1(p, $1); } ;
typesn
  : types1 "," type             { $$ = pb_list_add(p, $1, $3); }
  | typesn "," type             { $$ = pb_list_add(p, $1, $3); }
  | typesn type                 { $$ = pb_list_add(p, $1, $2); }
  ;

shape
  : "(" ")"          { $$ = pb_empty(); }
  | "(" dims1 ")"    { $$ = FREEZE($2); }
  | "(" dims1 "," ")" { $$ = FREEZE($2); }
  | "(" dimsn ")"    { $$ = FREEZE($2); }
  | "(" dimsn "," ")" { $$ = FREEZE($2); }
  ;
dims1: dim                      { $$ = pb_list1(p, $1); } ;
dimsn
  : dims1 "," dim               { $$ = pb_list_add(p, $1, $3); }
  | dimsn "," dim               { $$ = pb_list_add(p, $1, $3); }
  | dimsn dim                   { $$ = pb_list_add(p, $1, $2); }
  ;
dim
  : INT       { $$ = pb_dim_int(p, $1.v, $1.dt); }
  | "?"       { $$ = pb_dim_any(p); }
  | META      { $$ = pb_dim_meta(p, $1.key, $1.keylen, $1.index, @$); }
  ;

%%

/* ------------------------------------------------------------ lexer glue */

static const int tok_map[TK_COUNT] = {
    [TK_EOF] = RT_YYEOF,          [TK_ERROR] = RT_RELAY_error,  [TK_IDENT] = RT_IDENT,
    [TK_LOCAL] = RT_LOCAL,        [TK_GRAPH] = RT_GRAPH,        [TK_GLOBAL] = RT_GLOBAL,
    [TK_INT] = RT_INT,            [TK_FLOAT] = RT_FLOAT,        [TK_BOOL] = RT_BOOL,
    [TK_STRING] = RT_STRING,      [TK_META] = RT_META,          [TK_VERSION] = RT_VERSION,
    [TK_METADATA] = RT_METADATA,  [TK_DEF] = RT_DEF,            [TK_FN] = RT_FN,
    [TK_LET] = RT_LET,            [TK_IF] = RT_IF,              [TK_ELSE] = RT_ELSE,
    [TK_TYPE] = RT_TYPE,          [TK_EXTERN] = RT_EXTERN,      [TK_MATCH] = RT_MATCH,
    [TK_MATCHP] = RT_MATCHP,      [TK_FREE_VAR] = RT_FREE_VAR,  [TK_REF] = RT_REF,
    [TK_REF_READ] = RT_REF_READ,  [TK_REF_WRITE] = RT_REF_WRITE, [TK_UNDERSCORE] = RT_UNDERSCORE,
    [TK_LPAREN] = RT_LPAREN,      [TK_RPAREN] = RT_RPAREN,      [TK_LBRACKET] = RT_LBRACKET,
    [TK_RBRACKET] = RT_RBRACKET,  [TK_LBRACE] = RT_LBRACE,      [TK_RBRACE] = RT_RBRACE,
    [TK_COMMA] = RT_COMMA,        [TK_DOT] = RT_DOT,            [TK_SEMI] = RT_SEMI,
    [TK_COLON] = RT_COLON,        [TK_EQ] = RT_EQ,              [TK_PLUS] = RT_PLUS,
    [TK_MINUS] = RT_MINUS,        [TK_STAR] = RT_STAR,          [TK_SLASH] = RT_SLASH,
    [TK_LT] = RT_LT,              [TK_GT] = RT_GT,              [TK_LE] = RT_LE,
    [TK_GE] = RT_GE,              [TK_EQEQ] = RT_EQEQ,          [TK_NE] = RT_NE,
    [TK_DARROW] = RT_DARROW,      [TK_BANG] = RT_BANG,          [TK_QUESTION] = RT_QUESTION,
};

static int relay_lex(RELAY_STYPE *v, Span *loc, Parser *p) {
  if (!p->started) {
    p->started = true;
    *loc = span_make(0, 0);
    return p->expr_mode ? RT_START_EXPR : RT_START_MODULE;
  }
  Token *t = &p->last;
  TokKind k = lexer_next(&p->lx, t);
  *loc = t->span;
  if (!p->saw_token) {
    p->saw_token = true;
    p->first_span = t->span;
  }
  switch (k) {
  case TK_IDENT:
    v->text = (Text){t->text.p, t->text.n};
    if (t->text.n == 6 && memcmp(t->text.p, "Tensor", 6) == 0) return RT_TENSOR;
    break;
  case TK_LOCAL: case TK_GLOBAL: v->text = (Text){t->text.p, t->text.n}; break;
  case TK_GRAPH: v->u = t->graph; break;
  case TK_INT: v->i.v = t->i.v; v->i.dt = t->i.dt; break;
  case TK_FLOAT: v->f.v = t->f.v; v->f.dt = t->f.dt; break;
  case TK_BOOL: v->b = t->b; break;
  case TK_STRING: v->str.chars = t->str.chars; v->str.len = t->str.len; break;
  case TK_META:
    v->meta.key = t->meta.key;
    v->meta.keylen = t->meta.keylen;
    v->meta.index = t->meta.index;
    break;
  default: break;
  }
  return tok_map[k];
}

/* -------------------------------------------------------- syntax errors */

/* Token classes print bare ("identifier"); fixed spellings print quoted ("let"). */
static bool sym_is_class(yysymbol_kind_t s) {
  switch (s) {
  case YYSYMBOL_YYEOF: case YYSYMBOL_IDENT: case YYSYMBOL_LOCAL: case YYSYMBOL_GLOBAL:
  case YYSYMBOL_GRAPH: case YYSYMBOL_INT: case YYSYMBOL_FLOAT: case YYSYMBOL_BOOL:
  case YYSYMBOL_STRING: case YYSYMBOL_META: case YYSYMBOL_VERSION:
    return true;
  default:
    return false;
  }
}

/* The alias of a symbol without Bison's surrounding quotes. */
static void sym_text(yysymbol_kind_t s, char *buf, size_t cap) {
  const char *n = yysymbol_name(s);
  size_t len = strlen(n);
  if (len >= 2 && n[0] == '"' && n[len - 1] == '"') { n++; len -= 2; }
  if (len >= cap) len = cap - 1;
  memcpy(buf, n, len);
  buf[len] = 0;
}

static void put_sym(FILE *f, yysymbol_kind_t s) {
  char buf[64];
  sym_text(s, buf, sizeof buf);
  fprintf(f, sym_is_class(s) ? "%s" : "\"%s\"", buf);
}

/* Replaces a complete group of starter tokens by one human word. */
static int group_expected(yysymbol_kind_t *exp, int n, const yysymbol_kind_t *group, int ng,
                          const yysymbol_kind_t *also, int nalso, int *has_group) {
  for (int g = 0; g < ng; g++) {
    bool found = false;
    for (int i = 0; i < n && !found; i++) found = exp[i] == group[g];
    if (!found) return n;
  }
  int w = 0;
  for (int i = 0; i < n; i++) {
    bool drop = false;
    for (int g = 0; g < ng && !drop; g++) drop = exp[i] == group[g];
    for (int g = 0; g < nalso && !drop; g++) drop = exp[i] == also[g];
    if (!drop) exp[w++] = exp[i];
  }
  *has_group = 1;
  return w;
}

static bool has_sym(const yysymbol_kind_t *exp, int n, yysymbol_kind_t s) {
  for (int i = 0; i < n; i++)
    if (exp[i] == s) return true;
  return false;
}

/* `Tensor` is lexically an identifier: never list it next to "identifier". */
static int drop_tensor(yysymbol_kind_t *exp, int n) {
  if (!has_sym(exp, n, YYSYMBOL_IDENT)) return n;
  int w = 0;
  for (int i = 0; i < n; i++)
    if (exp[i] != YYSYMBOL_TENSOR) exp[w++] = exp[i];
  return w;
}

/* After a complete expression any infix operator, a call `(` or a projection
 * `.` could follow; listing them hides what was really missing, so they are
 * dropped (and `;` too when a closing `)` is expected). */
static int drop_continuations(yysymbol_kind_t *exp, int n, int *dropped) {
  static const yysymbol_kind_t ops[] = {
      YYSYMBOL_STAR, YYSYMBOL_SLASH, YYSYMBOL_PLUS, YYSYMBOL_MINUS, YYSYMBOL_LT,
      YYSYMBOL_GT, YYSYMBOL_LE, YYSYMBOL_GE, YYSYMBOL_EQEQ, YYSYMBOL_NE};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!has_sym(exp, n, ops[i])) return n;
  bool drop_semi = has_sym(exp, n, YYSYMBOL_RPAREN);
  int w = 0;
  for (int i = 0; i < n; i++) {
    bool drop = exp[i] == YYSYMBOL_LPAREN || exp[i] == YYSYMBOL_DOT ||
                (drop_semi && exp[i] == YYSYMBOL_SEMI);
    for (size_t j = 0; j < sizeof ops / sizeof ops[0] && !drop; j++) drop = exp[i] == ops[j];
    if (!drop) exp[w++] = exp[i];
  }
  *dropped = 1;
  return w;
}

static void found_text(FILE *f, Parser *p, yysymbol_kind_t la, Span sp) {
  put_sym(f, la);
  if (la == YYSYMBOL_YYEOF || !sym_is_class(la)) return;
  uint32_t n = sp.hi - sp.lo;
  const char *text = p->lx.text + sp.lo;
  fputs(" \"", f);
  for (uint32_t i = 0; i < n && i < 40; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c >= 32 && c < 127) fputc(c, f);
    else fprintf(f, "\\x%02x", c);
  }
  fputs(n > 40 ? "...\"" : "\"", f);
}

static int yyreport_syntax_error(const yypcontext_t *ctx, Parser *p) {
  enum { MAXEXP = YYNTOKENS };
  static const yysymbol_kind_t expr_group[] = {
      YYSYMBOL_INT, YYSYMBOL_FLOAT, YYSYMBOL_BOOL, YYSYMBOL_LOCAL, YYSYMBOL_GLOBAL,
      YYSYMBOL_GRAPH, YYSYMBOL_META, YYSYMBOL_IDENT, YYSYMBOL_FN, YYSYMBOL_IF, YYSYMBOL_REF,
      YYSYMBOL_REF_READ, YYSYMBOL_REF_WRITE, YYSYMBOL_LPAREN};
  static const yysymbol_kind_t expr_also[] = {
      YYSYMBOL_TENSOR, YYSYMBOL_LET, YYSYMBOL_MATCH, YYSYMBOL_MATCHP, YYSYMBOL_FREE_VAR,
      YYSYMBOL_LBRACE, YYSYMBOL_VERSION};
  static const yysymbol_kind_t av_group[] = {
      YYSYMBOL_INT, YYSYMBOL_FLOAT, YYSYMBOL_BOOL, YYSYMBOL_STRING, YYSYMBOL_META,
      YYSYMBOL_QUESTION, YYSYMBOL_LBRACKET, YYSYMBOL_LPAREN, YYSYMBOL_IDENT, YYSYMBOL_LOCAL,
      YYSYMBOL_GLOBAL, YYSYMBOL_GRAPH, YYSYMBOL_FN};
  static const yysymbol_kind_t type_group[] = {
      YYSYMBOL_LPAREN, YYSYMBOL_FN, YYSYMBOL_IDENT, YYSYMBOL_UNDERSCORE, YYSYMBOL_REF};
  static const yysymbol_kind_t pat_group[] = {
      YYSYMBOL_LPAREN, YYSYMBOL_UNDERSCORE, YYSYMBOL_LOCAL, YYSYMBOL_IDENT};
  yysymbol_kind_t exp[MAXEXP];
  int n = yypcontext_expected_tokens(ctx, exp, MAXEXP);
  if (n < 0) n = 0;
  int is_expr = 0, is_type = 0, is_pat = 0, is_op = 0, is_av = 0;
  n = drop_tensor(exp, n);
  n = group_expected(exp, n, expr_group, (int)(sizeof expr_group / sizeof expr_group[0]),
                     expr_also, (int)(sizeof expr_also / sizeof expr_also[0]), &is_expr);
  n = drop_continuations(exp, n, &is_op);
  if (!is_expr)
    n = group_expected(exp, n, av_group, (int)(sizeof av_group / sizeof av_group[0]), NULL, 0,
                       &is_av);
  if (!is_expr && !is_av) {
    static const yysymbol_kind_t pat_also[] = {YYSYMBOL_GRAPH};
    n = group_expected(exp, n, type_group, (int)(sizeof type_group / sizeof type_group[0]),
                       NULL, 0, &is_type);
    if (!is_type)
      n = group_expected(exp, n, pat_group, (int)(sizeof pat_group / sizeof pat_group[0]),
                         pat_also, 1, &is_pat);
  }
  yysymbol_kind_t la = yypcontext_token(ctx);
  Span sp = *yypcontext_location(ctx);
  char *msg = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&msg, &len);
  if (!f) {
    diag_error(p->d, sp, "syntax error");
    return 0;
  }
  int group = is_expr + is_type + is_pat + is_av;
  int total = n + group;
  if (total == 0 || total > 6) {
    fputs("unexpected ", f);
  } else {
    fputs("expected ", f);
    int k = 0;
    for (int i = 0; i < total; i++, k++) {
      if (k) fputs(k == total - 1 ? " or " : ", ", f);
      if (i == 0 && is_expr) fputs("expression", f);
      else if (i == 0 && is_type) fputs("type", f);
      else if (i == 0 && is_pat) fputs("pattern", f);
      else if (i == 0 && is_av) fputs("attribute value", f);
      else put_sym(f, exp[i - group]);
    }
    fputs(", found ", f);
  }
  found_text(f, p, la, sp);
  fclose(f);
  diag_error(p->d, sp, "%s", msg);
  free(msg);
  return 0;
}

static void relay_error(Span *loc, Parser *p, const char *msg) {
  if (strcmp(msg, "memory exhausted") == 0)
    diag_error(p->d, *loc, "expression nested too deeply (parser stack exhausted)");
  else
    diag_error(p->d, *loc, "%s", msg);
}

/* ----------------------------------------------------------- entry points */

static Module *run_parser(Source *src, Diag *d, bool expr_mode) {
  Module *m = module_new(src);
  if (src->len >= UINT32_MAX) {
    diag_error(d, span_make(0, 0), "input is too large (4 GiB or more)");
    return m;
  }
  Parser p;
  memset(&p, 0, sizeof p);
  p.m = m;
  p.d = d;
  p.expr_mode = expr_mode;
  lexer_init(&p.lx, src->text ? src->text : "", src->len, d, m->arena);
  relay_parse(&p);
  if (expr_mode && !m->expr) m->expr = pb_unit(&p, span_make(0, 0)); /* after errors only */
  if (p.defs.len) m->defs = arena_memdup(m->arena, p.defs.data, p.defs.len * sizeof *p.defs.data);
  m->ndefs = (uint32_t)p.defs.len;
  if (p.types.len)
    m->types = arena_memdup(m->arena, p.types.data, p.types.len * sizeof *p.types.data);
  m->ntypes = (uint32_t)p.types.len;
  pb_release(&p);
  if (p.lx.has_metadata) {
    uint32_t off = p.lx.meta_offset;
    m->has_metadata = true;
    m->meta_offset = off;
    metadata_load(m, src->text + off, src->len - off, off, d);
  }
  return m;
}

Module *parse_module(Source *src, Diag *d) { return run_parser(src, d, false); }

Module *parse_expression(Source *src, Diag *d) { return run_parser(src, d, true); }

/* ------------------------------------------------------------ token dump */

static void dump_text(FILE *out, const char *s, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n') fputs("\\n", out);
    else if (c == '\t') fputs("\\t", out);
    else if (c == '\r') fputs("\\r", out);
    else if (c < 32 || c >= 127) fprintf(out, "\\x%02x", c);
    else fputc(c, out);
  }
}

bool dump_tokens(Source *src, FILE *out, Diag *d) {
  if (src->len >= UINT32_MAX) {
    diag_error(d, span_make(0, 0), "input is too large (4 GiB or more)");
    return false;
  }
  Arena *a = arena_new();
  Lexer lx;
  Token t;
  lexer_init(&lx, src->text ? src->text : "", src->len, d, a);
  TokKind k;
  do {
    k = lexer_next(&lx, &t);
    uint32_t line, col;
    source_line_col(src, t.span.lo, &line, &col);
    fprintf(out, "%u:%u %s", line, col, tok_kind_name(k));
    if (t.span.hi > t.span.lo) {
      fputc(' ', out);
      dump_text(out, lx.text + t.span.lo, t.span.hi - t.span.lo);
    }
    fputc('\n', out);
  } while (k != TK_EOF);
  arena_free(a);
  return lx.nerrors == 0;
}

