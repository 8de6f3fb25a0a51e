/* eval/prelude.c — the --prelude library: its text, and merging it into a parsed module.
 *
 * stdlib/prelude.relay is compiled into the binary with the assembler's
 * .incbin (the build runs from the repository root), so `relayc --prelude`
 * needs no installed data file. Merging works on PARSED, not yet resolved
 * modules: the prelude's type definitions and functions are prepended to the
 * user's (so its constructors are declared before any user code), and the
 * ids of its variables and type parameters are shifted past the user
 * module's so ids stay unique. The prelude's nodes stay in the prelude's own
 * arena; their spans are moved above DIAG_EXTRA_BASE and the caller's Diag
 * learns the prelude's Source, so a message about library code names
 * <prelude>:line:col instead of a place in the user's file.
 */
#include <stdint.h>
#include <string.h>

#include "eval/eval.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "parser/parser.h"

__asm__(".section .rodata\n"
        ".global relayc_prelude_start\n"
        ".global relayc_prelude_end\n"
        ".balign 16\n"
        "relayc_prelude_start:\n"
        ".incbin \"stdlib/prelude.relay\"\n"
        "relayc_prelude_end:\n"
        ".byte 0\n"
        ".previous\n");
extern const char relayc_prelude_start[];
extern const char relayc_prelude_end[];

const char *eval_prelude_text(size_t *len) {
  /* two symbols, so two objects to C: subtracting the pointers would be undefined (C17 6.5.6p9);
   * their addresses as integers are one .incbin apart */
  *len = (size_t)((uintptr_t)relayc_prelude_end - (uintptr_t)relayc_prelude_start);
  return relayc_prelude_start;
}

/* ------------------------------------------------------------ renumbering */

typedef struct Renum {
  uint32_t shift;
  VEC(Expr *) todo;
  PtrMap types_done; /* Type* already moved (annotations may share nodes) */
} Renum;

/* Moves a span of the prelude's text above DIAG_EXTRA_BASE, where the
 * diagnostics engine looks it up in the prelude's Source. */
static void move_span(Span *sp) {
  sp->lo += DIAG_EXTRA_BASE;
  sp->hi += DIAG_EXTRA_BASE;
}

static void move_type(Renum *r, Type *t) {
  VEC(Type *) st = {0};
  vec_push(st, t);
  while (st.len) {
    Type *u = st.data[--st.len];
    if (!u) continue;
    int64_t *seen = ptrmap_slot(&r->types_done, u);
    if (*seen) continue;
    *seen = 1;
    move_span(&u->span);
    switch (u->kind) {
    case TYPE_TUPLE:
      for (uint32_t i = 0; i < u->tuple.n; i++) vec_push(st, u->tuple.fields[i]);
      break;
    case TYPE_FUNC:
      for (uint32_t i = 0; i < u->func.nargs; i++) vec_push(st, u->func.args[i]);
      vec_push(st, u->func.ret);
      break;
    case TYPE_ADT:
      for (uint32_t i = 0; i < u->adt.nargs; i++) vec_push(st, u->adt.args[i]);
      break;
    case TYPE_REF: vec_push(st, u->ref.inner); break;
    case TYPE_NAME:
      for (uint32_t i = 0; i < u->name.nargs; i++) vec_push(st, u->name.args[i]);
      break;
    default: break;
    }
  }
  vec_free(st);
}

static void bump_var(Renum *r, Var *v) {
  if (!v) return;
  v->id += r->shift;
  move_span(&v->span);
  if (v->annot) move_type(r, v->annot);
}

static void bump_tparams(Renum *r, TypeParam **tps, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    tps[i]->id += r->shift;
    move_span(&tps[i]->span);
  }
}

static void bump_pattern(Renum *r, Pattern *p) {
  VEC(Pattern *) st = {0};
  vec_push(st, p);
  while (st.len) {
    Pattern *q = st.data[--st.len];
    if (!q) continue;
    move_span(&q->span);
    if (q->kind == PAT_VAR) bump_var(r, q->var);
    else if (q->kind == PAT_CTOR)
      for (uint32_t i = 0; i < q->ctor.nargs; i++) vec_push(st, q->ctor.args[i]);
    else if (q->kind == PAT_TUPLE)
      for (uint32_t i = 0; i < q->tuple.n; i++) vec_push(st, q->tuple.fields[i]);
  }
  vec_free(st);
}

static void bump_function(Renum *r, Function *fn) {
  move_span(&fn->span);
  if (fn->ret_annot) move_type(r, fn->ret_annot);
  bump_tparams(r, fn->tparams, fn->ntparams);
  for (uint32_t i = 0; i < fn->nparams; i++) bump_var(r, fn->params[i]);
  vec_push(r->todo, fn->body);
}

/* Walks the parse tree (a tree before resolve) iteratively. */
static void bump_exprs(Renum *r) {
  while (r->todo.len) {
    Expr *e = r->todo.data[--r->todo.len];
    if (!e) continue;
    move_span(&e->span);
    switch (e->kind) {
    case EXPR_CALL:
      vec_push(r->todo, e->call.fn);
      for (uint32_t i = 0; i < e->call.nargs; i++) vec_push(r->todo, e->call.args[i]);
      break;
    case EXPR_TUPLE:
      for (uint32_t i = 0; i < e->tuple.n; i++) vec_push(r->todo, e->tuple.fields[i]);
      break;
    case EXPR_PROJ: vec_push(r->todo, e->proj.tuple); break;
    case EXPR_FN: bump_function(r, e->fn); break;
    case EXPR_LET:
      bump_var(r, e->let.var);
      vec_push(r->todo, e->let.value);
      vec_push(r->todo, e->let.body);
      break;
    case EXPR_IF:
      vec_push(r->todo, e->if_.cond);
      vec_push(r->todo, e->if_.then_);
      vec_push(r->todo, e->if_.else_);
      break;
    case EXPR_MATCH:
      vec_push(r->todo, e->match.scrut);
      for (uint32_t i = 0; i < e->match.nclauses; i++) {
        move_span(&e->match.clauses[i].span);
        bump_pattern(r, e->match.clauses[i].pattern);
        vec_push(r->todo, e->match.clauses[i].body);
      }
      break;
    case EXPR_REF_NEW:
    case EXPR_REF_READ: vec_push(r->todo, e->ref.arg); break;
    case EXPR_REF_WRITE:
      vec_push(r->todo, e->ref_write.ref);
      vec_push(r->todo, e->ref_write.value);
      break;
    case EXPR_GRAPH_BIND:
      vec_push(r->todo, e->graph_bind.value);
      vec_push(r->todo, e->graph_bind.body);
      break;
    case EXPR_FREE_VAR:
      bump_var(r, e->free_var.var);
      vec_push(r->todo, e->free_var.body);
      break;
    default: break;
    }
  }
}

bool eval_prelude_merge(Module *m, Module **prelude, Diag *d) {
  size_t len;
  const char *text = eval_prelude_text(&len);
  char *copy = mem_malloc(len + 1);
  memcpy(copy, text, len);
  copy[len] = 0;
  Source *src = source_new("<prelude>", copy, len);
  Diag pd;
  diag_init(&pd, d->out, src);
  Module *p = parse_module(src, &pd);
  if (pd.nerrors) {
    diag_plain(d, DIAG_ERROR, "the built-in prelude does not parse");
    module_free(p);
    source_free(src);
    return false;
  }
  Renum r = {m->next_id, {0}, {0}};
  for (uint32_t i = 0; i < p->ntypes; i++) {
    TypeDef *td = p->types[i];
    move_span(&td->span);
    bump_tparams(&r, td->tparams, td->ntparams);
    for (uint32_t c = 0; c < td->nctors; c++) {
      move_span(&td->ctors[c]->span);
      for (uint32_t f = 0; f < td->ctors[c]->nfields; f++) move_type(&r, td->ctors[c]->fields[f]);
    }
  }
  for (uint32_t i = 0; i < p->ndefs; i++) {
    move_span(&p->defs[i]->span);
    bump_function(&r, p->defs[i]->fn);
    bump_exprs(&r);
  }
  vec_free(r.todo);
  ptrmap_free(&r.types_done);
  diag_set_extra_source(d, src); /* run-time errors inside the library point into it */
  m->next_id += p->next_id;
  TypeDef **types = arena_alloc(m->arena, (p->ntypes + m->ntypes + 1) * sizeof *types);
  if (p->ntypes) memcpy(types, p->types, p->ntypes * sizeof *types);
  if (m->ntypes) memcpy(types + p->ntypes, m->types, m->ntypes * sizeof *types);
  m->types = types;
  m->ntypes += p->ntypes;
  GlobalDef **defs = arena_alloc(m->arena, (p->ndefs + m->ndefs + 1) * sizeof *defs);
  if (p->ndefs) memcpy(defs, p->defs, p->ndefs * sizeof *defs);
  if (m->ndefs) memcpy(defs + p->ndefs, m->defs, m->ndefs * sizeof *defs);
  m->defs = defs;
  m->defs_cap = 0;
  m->ndefs += p->ndefs;
  *prelude = p; /* p->src is the prelude's Source: eval_prelude_free frees both */
  return true;
}

void eval_prelude_free(Module *prelude) {
  if (!prelude) return;
  Source *src = prelude->src;
  module_free(prelude);
  source_free(src);
}
