/* transform/cps.c — ToCPS and UnCPS (spec/passes.md §2.4).
 *
 * ToCPS turns every function `(A...) -> B` into `[answer](A'..., %k: fn (B')
 * -> answer) -> answer`, where ' converts every function type inside the
 * same way (with the one `answer` of the enclosing global). The conversion
 * is the classic one with meta-continuations: a continuation is either a
 * Relay expression to call (`%k`, a reified `fn (%arg) {...}`) or a C
 * callback that builds the rest of the program from an atom, so no
 * administrative redexes are made. Operator and constructor calls are
 * let-bound and passed on; other calls receive their continuation as the
 * extra argument; `if`/`match` reify the continuation once and call it from
 * every branch. A global reference @g becomes @g_cps, the CPS form of the
 * original @g, added once per global (one map for the whole module, unlike
 * TVM whose per-function map aborts on a second reference); @f itself is
 * also converted in place. Shared non-atomic nodes cannot be given one
 * continuation: the pass reports them (run ToANormalForm first) where TVM
 * aborts.
 *
 * The operator calls it let-binds, their binders and their uses are typed
 * (so are the renamed parameters): the runner's re-typing then infers only
 * what has the type `answer`.
 *
 * UnCPS wraps a CPS @main back: `fn (%params...) -> B { <cps fn>(%params...,
 * fn (%x: B) -> B { %x }) }` with `answer` instantiated to B. The copy and
 * the wrapper are typed as they are built (each node its original's type
 * with answer := B), so the re-typing keeps them. A B that mentions answer
 * (a function value in the result) is refused: no type can stand for answer.
 */
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/walk.h"
#include "ops/op_call.h"
#include "ops/registry.h"
#include "sema/infer.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

typedef struct Cps {
  Module *m;
  Diag *d;
  Type *answer;        /* TYPE_VAR of the current global's answer parameter */
  PtrMap globals;      /* original GlobalDef* -> its @g_cps GlobalDef* */
  PtrMap orig;         /* GlobalDef* -> a copy of its Function before the pass */
  PtrMap rename;       /* parameter Var* -> its CPS-typed copy */
  PtrMap seen;         /* non-atomic nodes converted so far (a second visit = sharing) */
  bool failed;
} Cps;

/* A continuation: call `k` on the atom, or let `fn` build the rest. */
typedef struct Kont Kont;
typedef Expr *(*KontFn)(Cps *c, Expr *atom, const Kont *k);
struct Kont {
  Expr *k;      /* a Relay function value, or NULL */
  KontFn fn;
  const Kont *next; /* the continuation the callback continues with */
  void *data;
  Span sp;
};

static Expr *cps(Cps *c, Expr *e, const Kont *k);

static Expr *apply_k(Cps *c, const Kont *k, Expr *atom) {
  if (k->k) return build_call(c->m, k->k, &atom, 1, k->sp);
  return k->fn(c, atom, k);
}

/* `fn (%arg) { k(%arg) }` (unannotated, as TVM makes it). */
/* fn (%arg: T) { k(%arg) }, T the CPS type of the value k receives (`t`, the
 * original expression's type; unannotated when unknown). Unlike TVM, %arg is
 * annotated: left to inference, a relation that refines its inputs could
 * give it another type first (conv2d takes an unknown weight's dtype from
 * the data: a float weight computed by a closure call became bool). */
static Type *cps_type(Cps *c, Type *t);

static Expr *reify(Cps *c, const Kont *k, Type *t) {
  Var *arg = var_new(c->m, "arg", k->sp, t ? cps_type(c, t) : NULL);
  Expr *body = apply_k(c, k, build_var(c->m, arg, k->sp));
  return build_fn(c->m, build_function(c->m, &arg, 1, NULL, body, NULL, k->sp), k->sp);
}

/* ------------------------------------------------------------------ types */

static Type *cps_type(Cps *c, Type *t);

static Type **cps_types(Cps *c, Type **ts, uint32_t n) {
  Type **out = arena_alloc(c->m->arena, (n ? n : 1) * sizeof *out);
  for (uint32_t i = 0; i < n; i++) out[i] = cps_type(c, ts[i]);
  return out;
}

static Type *fn_type(Module *m, Type **args, uint32_t n, Type *ret) {
  Type *t = type_new(m, TYPE_FUNC, (Span){0, 0});
  t->func.args = args;
  t->func.nargs = n;
  t->func.ret = ret;
  return t;
}

static Type *cps_type(Cps *c, Type *t) {
  if (!t) return type_new(c->m, TYPE_INCOMPLETE, (Span){0, 0}); /* unknown: `_`, left to inference */
  if (stack_exhausted()) return t;
  Type *r;
  switch (t->kind) {
  case TYPE_FUNC: {
    Type **args = arena_alloc(c->m->arena, (t->func.nargs + 1) * sizeof *args);
    Type **conv = cps_types(c, t->func.args, t->func.nargs);
    memcpy(args, conv, t->func.nargs * sizeof *args);
    Type *kret = cps_type(c, t->func.ret);
    args[t->func.nargs] = fn_type(c->m, arena_memdup(c->m->arena, &kret, sizeof kret), 1, c->answer);
    r = fn_type(c->m, args, t->func.nargs + 1, c->answer);
    r->func.tparams = t->func.tparams;
    r->func.ntparams = t->func.ntparams;
    return r;
  }
  case TYPE_TUPLE:
    r = type_new(c->m, TYPE_TUPLE, t->span);
    r->tuple.fields = cps_types(c, t->tuple.fields, t->tuple.n);
    r->tuple.n = t->tuple.n;
    return r;
  case TYPE_ADT:
    r = type_new(c->m, TYPE_ADT, t->span);
    r->adt = t->adt;
    r->adt.args = cps_types(c, t->adt.args, t->adt.nargs);
    return r;
  case TYPE_REF:
    r = type_new(c->m, TYPE_REF, t->span);
    r->ref.inner = cps_type(c, t->ref.inner);
    return r;
  default:
    return t;
  }
}

static Var *cps_param(Cps *c, Var *v) {
  Type *t = v->annot ? v->annot : v->type;
  Var *n = var_new_as(c->m, v, cps_type(c, t));
  n->type = n->annot; /* a parameter has its annotation's type */
  return n;
}

/* ----------------------------------------------------------------- atoms */

static GlobalDef *cps_global(Cps *c, GlobalDef *g);

static bool is_atom(const Expr *e) {
  return e->kind == EXPR_VAR || e->kind == EXPR_GLOBAL || e->kind == EXPR_CONST || e->kind == EXPR_OP ||
         e->kind == EXPR_CTOR;
}

/* ------------------------------------------------------------ functions */

/* fn (params) -> B { body }  ->  fn (params', %k: fn (B') -> answer) -> answer { body/k } */
static Function *cps_function(Cps *c, Function *f, Span sp) {
  Module *m = c->m;
  uint32_t n = f->nparams;
  Var **ps = arena_alloc(m->arena, (n + 1) * sizeof *ps);
  for (uint32_t i = 0; i < n; i++) {
    ps[i] = cps_param(c, f->params[i]);
    ptrmap_put(&c->rename, f->params[i], (int64_t)(intptr_t)ps[i]);
  }
  Type *ret = f->ret_annot ? f->ret_annot : (f->type && f->type->kind == TYPE_FUNC ? f->type->func.ret : NULL);
  Type *kret = cps_type(c, ret);
  Type *kt = fn_type(m, arena_memdup(m->arena, &kret, sizeof kret), 1, c->answer);
  ps[n] = var_new(m, "k", sp, kt);
  Kont k = {build_var(m, ps[n], sp), NULL, NULL, NULL, sp};
  Function *nf = build_function(m, ps, n + 1, c->answer, cps(c, f->body, &k), f->attrs, sp);
  nf->tparams = f->tparams;
  nf->ntparams = f->ntparams;
  return nf;
}

/* ------------------------------------------------------------ expressions */

/* Converting a list of sub-expressions left to right into atoms, then `done`. */
typedef struct Seq {
  Expr **items;
  uint32_t n, i;
  Expr **atoms;
  Expr *(*done)(Cps *c, struct Seq *s, const Kont *k);
  Expr *orig; /* the node being rebuilt */
  const Kont *k;
} Seq;

static Expr *seq_step(Cps *c, Seq *s);

static Expr *seq_got(Cps *c, Expr *atom, const Kont *k) {
  Seq *s = k->data;
  s->atoms[s->i++] = atom;
  return seq_step(c, s);
}

static Expr *seq_step(Cps *c, Seq *s) {
  if (s->i == s->n) return s->done(c, s, s->k);
  Kont k = {NULL, seq_got, s->k, s, s->orig->span};
  return cps(c, s->items[s->i], &k);
}

static Expr *atom_of(Cps *c, Expr *e) {
  if (e->kind == EXPR_GLOBAL && e->global.def && e->global.def->fn) {
    GlobalDef *g = cps_global(c, e->global.def);
    return g ? build_global(c->m, g, e->span) : e;
  }
  return e;
}

static Expr *done_primitive_call(Cps *c, Seq *s, const Kont *k) {
  Expr *call = build_copy(c->m, s->orig);
  call->call.args = s->atoms;
  /* the call, its binder and the binder's uses typed: the runner's
   * re-typing keeps them (and infers only the lets, of type answer) */
  call->type = rw_rebuilt_type(s->orig, call);
  Var *x = build_fresh_var(c->m, "x", NULL, s->orig->span);
  x->type = call->type;
  Expr *l = build_let(c->m, x, call, apply_k(c, k, build_typed(build_var(c->m, x, s->orig->span), x->type)),
                      s->orig->span);
  return build_typed(l, c->answer); /* the rest of the program: answer */
}

static Expr *done_call(Cps *c, Seq *s, const Kont *k) {
  /* atoms[0] is the callee, the rest the arguments; then the continuation */
  uint32_t n = s->n - 1;
  Expr **args = arena_alloc(c->m->arena, (n + 1) * sizeof *args);
  memcpy(args, s->atoms + 1, n * sizeof *args);
  args[n] = k->k ? k->k : reify(c, k, s->orig->type);
  return build_call(c->m, s->atoms[0], args, n + 1, s->orig->span);
}

static Expr *done_tuple(Cps *c, Seq *s, const Kont *k) {
  return apply_k(c, k, build_tuple(c->m, s->atoms, s->n, s->orig->span));
}

static Expr *done_proj(Cps *c, Seq *s, const Kont *k) {
  return apply_k(c, k, build_proj(c->m, s->atoms[0], s->orig->proj.index, s->orig->span));
}

static Expr *done_ref(Cps *c, Seq *s, const Kont *k) {
  Expr *e = s->orig, *r;
  Span sp = e->span;
  if (e->kind == EXPR_REF_NEW) return apply_k(c, k, build_ref_new(c->m, s->atoms[0], sp));
  r = e->kind == EXPR_REF_READ ? build_ref_read(c->m, s->atoms[0], sp) : build_ref_write(c->m, s->atoms[0], s->atoms[1], sp);
  Var *x = build_fresh_var(c->m, "x", NULL, sp);
  return build_let(c->m, x, r, apply_k(c, k, build_var(c->m, x, sp)), sp);
}

static Expr *run_seq(Cps *c, Expr *orig, Expr **items, uint32_t n, Expr *(*done)(Cps *, Seq *, const Kont *),
                     const Kont *k) {
  Seq s = {items, n, 0, arena_alloc(c->m->arena, (n ? n : 1) * sizeof(Expr *)), done, orig, k};
  return seq_step(c, &s);
}

/* if / match: reify the continuation once as a let-bound %x_N, then branch. */
typedef struct Branch {
  Expr *orig;
  Expr *kvar;
} Branch;

static Expr *done_if(Cps *c, Expr *cond, const Kont *k) {
  Branch *b = k->data;
  Kont kb = {b->kvar, NULL, NULL, NULL, b->orig->span};
  Expr *e = b->orig;
  return build_if(c->m, cond, cps(c, e->if_.then_, &kb), cps(c, e->if_.else_, &kb), e->span);
}

static Expr *done_match(Cps *c, Expr *scrut, const Kont *k) {
  Branch *b = k->data;
  Kont kb = {b->kvar, NULL, NULL, NULL, b->orig->span};
  Expr *e = b->orig;
  Clause *cl = arena_memdup(c->m->arena, e->match.clauses, e->match.nclauses * sizeof *cl);
  for (uint32_t i = 0; i < e->match.nclauses; i++) cl[i].body = cps(c, cl[i].body, &kb);
  return build_match(c->m, scrut, cl, e->match.nclauses, e->match.partial, e->span);
}

static Expr *branch(Cps *c, Expr *e, Expr *on, KontFn then, const Kont *k) {
  Var *kv = build_fresh_var(c->m, "x", NULL, e->span);
  Branch b = {e, build_var(c->m, kv, e->span)};
  Kont kb = {NULL, then, k, &b, e->span};
  Expr *rest = cps(c, on, &kb);
  return build_let(c->m, kv, reify(c, k, e->type), rest, e->span);
}

/* let %v = e; b: convert e with a continuation that binds %v. The body is
 * not converted here but by the loop in cps() over the let chain, which
 * fills in the `let %v = atom;` made here (`made`, body NULL until then):
 * the frames between the let and this continuation only wrap its result
 * (and make no fresh names after it), so the output is the same as
 * converting the body in place, and a 100,000-let chain does not nest
 * 100,000 times a dozen C frames (the stack pages alone cost a quarter of
 * the pass). */
typedef struct LetK {
  Expr *orig;
  Expr *made;
} LetK;

static Expr *done_let(Cps *c, Expr *atom, const Kont *k) {
  LetK *l = k->data;
  Expr *e = l->orig;
  l->made = build_typed(build_let(c->m, e->let.var, atom, NULL, e->span), c->answer);
  return l->made;
}

/* An operator or constructor used as a value becomes a CPS function:
 * fn (%a1: T1', ..., %k: fn (R') -> answer) -> answer { %k(op(%a1, ...)) }. */
static Expr *primitive_value(Cps *c, Expr *e) {
  Module *m = c->m;
  Type *t = e->type;
  if (!t || t->kind != TYPE_FUNC) return e;
  uint32_t n = t->func.nargs;
  Var **ps = arena_alloc(m->arena, (n + 1) * sizeof *ps);
  Expr **args = arena_alloc(m->arena, (n ? n : 1) * sizeof *args);
  for (uint32_t i = 0; i < n; i++) {
    ps[i] = var_new(m, "a", e->span, cps_type(c, t->func.args[i]));
    args[i] = build_var(m, ps[i], e->span);
  }
  Type *kret = cps_type(c, t->func.ret);
  ps[n] = var_new(m, "k", e->span, fn_type(m, arena_memdup(m->arena, &kret, sizeof kret), 1, c->answer));
  Expr *callee = build_copy(m, e);
  Expr *call = build_call(m, callee, args, n, e->span);
  if (e->kind == EXPR_OP) call = op_call_attrs(m, op_get(e->op.id)->name, args, n, NULL, e->span);
  Expr *kv = build_var(m, ps[n], e->span);
  Expr *body = build_call(m, kv, &call, 1, e->span);
  return build_fn(m, build_function(m, ps, n + 1, c->answer, body, NULL, e->span), e->span);
}

/* Checks made on entering e: false (and c->failed) when it cannot be converted. */
static bool enter(Cps *c, Expr *e) {
  if (c->failed) return false;
  if (stack_exhausted()) {
    diag_error(c->d, e->span, "expression nested too deeply");
    c->failed = true;
    return false;
  }
  if (!is_atom(e) && (*ptrmap_slot(&c->seen, e))++) {
    diag_error(c->d, e->span,
               "ToCPS needs every non-atomic expression to be used once; this one is shared (run ToANormalForm first)");
    c->failed = true;
    return false;
  }
  return true;
}

/* A let chain, one let at a time (see done_let); every body continues with k. */
static Expr *cps_let_chain(Cps *c, Expr *e, const Kont *k) {
  Expr *out = NULL, **hole = &out;
  for (;;) {
    LetK l = {e, NULL};
    Kont kl = {NULL, done_let, k, &l, e->span};
    *hole = cps(c, e->let.value, &kl);
    if (!l.made || c->failed) return out;
    hole = &l.made->let.body;
    e = e->let.body;
    if (e->kind != EXPR_LET) {
      *hole = cps(c, e, k);
      return out;
    }
    if (!enter(c, e)) {
      *hole = e;
      return out;
    }
  }
}

static Expr *cps(Cps *c, Expr *e, const Kont *k) {
  if (!enter(c, e)) return e;
  switch (e->kind) {
  case EXPR_VAR: {
    int64_t v;
    if (ptrmap_get(&c->rename, e->var.var, &v)) {
      Var *r = (Var *)(intptr_t)v;
      return apply_k(c, k, build_typed(build_var(c->m, r, e->span), r->type));
    }
    return apply_k(c, k, e);
  }
  case EXPR_OP:
  case EXPR_CTOR:
    return apply_k(c, k, primitive_value(c, e));
  case EXPR_CONST:
    return apply_k(c, k, e);
  case EXPR_GLOBAL:
    return apply_k(c, k, atom_of(c, e));
  case EXPR_FN: {
    if (fn_has_attr(e->fn, "Primitive")) {
      diag_error(c->d, e->span, "ToCPS cannot convert a Primitive function");
      c->failed = true;
      return e;
    }
    return apply_k(c, k, build_fn(c->m, cps_function(c, e->fn, e->span), e->span));
  }
  case EXPR_CALL: {
    Expr *f = e->call.fn;
    if (f->kind == EXPR_OP || f->kind == EXPR_CTOR)
      return run_seq(c, e, e->call.args, e->call.nargs, done_primitive_call, k);
    Expr **items = arena_alloc(c->m->arena, (e->call.nargs + 1) * sizeof *items);
    items[0] = f;
    if (e->call.nargs) memcpy(items + 1, e->call.args, e->call.nargs * sizeof *items); /* f(): args may be NULL */
    return run_seq(c, e, items, e->call.nargs + 1, done_call, k);
  }
  case EXPR_TUPLE: return run_seq(c, e, e->tuple.fields, e->tuple.n, done_tuple, k);
  case EXPR_PROJ: return run_seq(c, e, &e->proj.tuple, 1, done_proj, k);
  case EXPR_REF_NEW:
  case EXPR_REF_READ: return run_seq(c, e, &e->ref.arg, 1, done_ref, k);
  case EXPR_REF_WRITE: {
    Expr *items[2] = {e->ref_write.ref, e->ref_write.value};
    return run_seq(c, e, arena_memdup(c->m->arena, items, sizeof items), 2, done_ref, k);
  }
  case EXPR_IF: return branch(c, e, e->if_.cond, done_if, k);
  case EXPR_MATCH: return branch(c, e, e->match.scrut, done_match, k);
  case EXPR_LET: return cps_let_chain(c, e, k);
  default:
    return apply_k(c, k, e);
  }
}

/* ----------------------------------------------------------------- globals */

/* A global function converted: its own type parameters plus `answer`. */
static Function *cps_global_fn(Cps *c, Function *f, Span sp) {
  TypeParam *ans = build_type_param(c->m, "answer");
  Type *saved = c->answer;
  c->answer = build_type_var(c->m, ans);
  PtrMap seen = c->seen; /* sharing is per function (a copy may share closed subtrees with its original) */
  memset(&c->seen, 0, sizeof c->seen);
  Function *nf = cps_function(c, f, sp);
  ptrmap_free(&c->seen);
  c->seen = seen;
  TypeParam **tps = arena_alloc(c->m->arena, (f->ntparams + 1) * sizeof *tps);
  if (f->ntparams) memcpy(tps, f->tparams, f->ntparams * sizeof *tps);
  tps[f->ntparams] = ans;
  nf->tparams = tps;
  nf->ntparams = f->ntparams + 1;
  c->answer = saved;
  return nf;
}

static GlobalDef *cps_global(Cps *c, GlobalDef *g) {
  int64_t v;
  if (ptrmap_get(&c->globals, g, &v)) return (GlobalDef *)(intptr_t)v;
  if (!ptrmap_get(&c->orig, g, &v)) return NULL; /* made by this pass */
  char name[256];
  snprintf(name, sizeof name, "%.240s_cps", g->name);
  GlobalDef *ng = build_global_def(c->m, module_fresh_global_name(c->m, name), NULL, g->span);
  ptrmap_put(&c->globals, g, (int64_t)(intptr_t)ng);
  Function *of = (Function *)(intptr_t)v;
  /* convert a fresh copy of the original (the in-place conversion shares nodes) */
  Expr *lit = rw_copy_fresh(c->m, c->d, build_fn(c->m, of, g->span), NULL, NULL, 0);
  /* the copy keeps the checked types its signature is converted from; its
   * nodes (nested literals too, whose continuation types come from them) are
   * typed again, or an unannotated literal's %k would get the type `_` */
  lit->fn->type = of->type;
  for (uint32_t i = 0; i < of->nparams && i < lit->fn->nparams; i++) lit->fn->params[i]->type = of->params[i]->type;
  if (!infer_untyped(c->m, lit, c->d)) {
    c->failed = true;
    return ng;
  }
  ng->fn = cps_global_fn(c, lit->fn, g->span);
  return ng;
}

bool pass_TO_CPS(PassCtx *pc) {
  Module *m = pc->m;
  Cps c = {m, pc->d, NULL, {0}, {0}, {0}, {0}, false};
  uint32_t n = m->ndefs;
  for (uint32_t i = 0; i < n; i++) {
    GlobalDef *g = m->defs[i];
    if (!g->fn || fn_skipped_by_function_passes(g->fn)) continue;
    Function *copy = arena_alloc(m->arena, sizeof *copy);
    *copy = *g->fn;
    ptrmap_put(&c.orig, g, (int64_t)(intptr_t)copy);
  }
  /* the converted functions replace the originals only at the end: the copy
   * behind a @g_cps is typed again (infer_untyped) and its calls of other
   * globals need their (original, typed) functions */
  Function **out = arena_alloc(m->arena, (n ? n : 1) * sizeof *out);
  for (uint32_t i = 0; i < n && !c.failed; i++) {
    GlobalDef *g = m->defs[i];
    out[i] = ptrmap_find(&c.orig, g) ? cps_global_fn(&c, g->fn, g->span) : NULL;
  }
  for (uint32_t i = 0; i < n && !c.failed; i++)
    if (out[i]) m->defs[i]->fn = out[i];
  ptrmap_free(&c.globals);
  ptrmap_free(&c.orig);
  ptrmap_free(&c.rename);
  ptrmap_free(&c.seen);
  return !c.failed;
}

/* ------------------------------------------------------------------- UnCPS */

typedef struct Inst {
  TypeParam *ans;
  Type *with;
} Inst;

static Type *inst_type(Rewriter *rw, Type *t) {
  Inst *in = rw->ud;
  return t ? build_type_subst(rw->m, t, &in->ans, &in->with, 1) : NULL;
}

/* A fresh binder, annotation and type instantiated (its uses take the type:
 * Rewriter.keep_types). */
static Var *inst_var(Rewriter *rw, Var *v) {
  Var *n = build_var_like(rw->m, v);
  n->annot = inst_type(rw, v->annot);
  n->type = inst_type(rw, v->type);
  return n;
}

/* Every node of the copy has its original's type with answer := B, which is
 * what inference gives it (the copy is the CPS function instantiated), so
 * the re-typing keeps it. A node the rewriter kept (an atom: a global's or
 * constructor's per-call instance typed with answer) is copied when its type
 * changes. A function literal's return annotation is instantiated too. */
static Expr *inst_node(Rewriter *rw, Expr *old, Expr *e) {
  Type *t = inst_type(rw, old->type);
  if (e == old && t == old->type) return e;
  if (e == old) e = build_copy(rw->m, old);
  if (e->kind == EXPR_FN) {
    if (e->fn == old->fn) { /* not rebuilt by the rewriter: a Function of our own */
      Function *nf = arena_alloc(rw->m->arena, sizeof *nf);
      *nf = *e->fn;
      e->fn = nf;
    }
    e->fn->ret_annot = inst_type(rw, e->fn->ret_annot);
    e->fn->type = t;
  }
  e->type = t;
  return e;
}

/* Whether t mentions the type parameter p. */
static bool type_mentions(const Type *t, const TypeParam *p) {
  if (!t || stack_exhausted()) return false;
  switch (t->kind) {
  case TYPE_VAR: return t->var.param == p;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (type_mentions(t->tuple.fields[i], p)) return true;
    return false;
  case TYPE_FUNC:
    for (uint32_t i = 0; i < t->func.nargs; i++)
      if (type_mentions(t->func.args[i], p)) return true;
    return type_mentions(t->func.ret, p);
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++)
      if (type_mentions(t->adt.args[i], p)) return true;
    return false;
  case TYPE_REF: return type_mentions(t->ref.inner, p);
  default: return false;
  }
}

bool pass_UN_CPS(PassCtx *pc) {
  Module *m = pc->m;
  GlobalDef *g = module_find_global(m, "main");
  if (!g || !g->fn) return true;
  Function *f = g->fn;
  /* the shape ToCPS makes: [..., answer](..., %k: fn (B) -> answer) -> answer */
  if (f->ntparams == 0 || f->nparams == 0) goto not_cps;
  TypeParam *ans = f->tparams[f->ntparams - 1];
  Var *k = f->params[f->nparams - 1];
  Type *kt = k->annot ? k->annot : k->type;
  if (!kt || kt->kind != TYPE_FUNC || kt->func.nargs != 1 || !kt->func.ret || kt->func.ret->kind != TYPE_VAR ||
      kt->func.ret->var.param != ans)
    goto not_cps;
  Type *b = kt->func.args[0];
  /* a function value in @main's result has the CPS type `fn (..., fn (R) ->
   * answer) -> answer`: answer := B would make B contain itself (TVM leaves
   * answer free in the result type, an ill-typed output) */
  if (type_mentions(b, ans)) {
    diag_error(pc->d, g->span, "UnCPS expects @main's result to hold no function value: a function's CPS type "
                               "mentions answer, and answer := the result type would contain itself");
    return false;
  }
  /* the CPS function as a literal with answer := B and fresh binders */
  Inst in = {ans, b};
  Rewriter rw;
  rw_init(&rw, m, pc->d);
  rw.rebind = inst_var;
  rw.post = inst_node;
  rw.ud = &in;
  rw.mark_memo = true; /* the hooks build types and binders only */
  rw.keep_types = true;
  Function *lit = arena_alloc(m->arena, sizeof *lit);
  *lit = *f;
  lit->tparams = NULL;
  lit->ntparams = 0;
  lit->ret_annot = b;
  Expr *le = rw_expr(&rw, build_fn(m, lit, f->span));
  rw_fini(&rw);
  le->type = le->fn->type = build_fn_type(m, le->fn);
  /* the wrapper, typed: the parameters as @main's, %x and the call B */
  uint32_t n = f->nparams - 1;
  Var **ps = arena_alloc(m->arena, (n ? n : 1) * sizeof *ps);
  Expr **args = arena_alloc(m->arena, (n + 1) * sizeof *args);
  for (uint32_t i = 0; i < n; i++) {
    ps[i] = build_var_like(m, f->params[i]);
    ps[i]->type = f->params[i]->type;
    args[i] = build_typed(build_var(m, ps[i], f->span), ps[i]->type);
  }
  Var *x = var_new(m, "x", f->span, b);
  x->type = b;
  Function *id = build_function(m, &x, 1, b, build_typed(build_var(m, x, f->span), b), NULL, f->span);
  args[n] = build_fn_typed(m, id, f->span);
  Function *nf = build_function(m, ps, n, b, build_typed(build_call(m, le, args, n + 1, f->span), b), f->attrs,
                                f->span);
  nf->tparams = f->tparams;
  nf->ntparams = f->ntparams - 1;
  g->fn = nf;
  return true;
not_cps:
  diag_error(pc->d, g->span, "UnCPS expects @main in the form ToCPS makes ([..., answer](..., %%k: fn (B) -> answer) -> answer)");
  return false;
}
