/* transform/rewrite.c — the memoising, sharing-preserving rewriter and DAG
 * walks (see rewrite.h).
 *
 * Invariant: rw_expr(e) is computed once per node pointer; a node whose
 * children all map to themselves maps to itself unless a hook says
 * otherwise. Let chains are unrolled into an explicit array and dataflow
 * nodes (calls, tuples, projections) are walked with an explicit stack, so
 * long let and graph chains never reach the C stack; everything else
 * recurses under stack_exhausted(), which the driver's 1 GiB stack makes
 * generous.
 */
#include "transform/rewrite.h"

#include <string.h>

#include "ir/build.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ops/op_call.h"
#include "ops/op_traits.h"

void rw_init(Rewriter *rw, Module *m, Diag *d) {
  memset(rw, 0, sizeof *rw);
  rw->m = m;
  rw->d = d;
  rw->enter_fns = true;
}

/* mark_memo: every mark this rewriter still holds goes back to its prior value. */
static void give_back_marks(Rewriter *rw) {
  for (size_t i = rw->marked.len; i-- > 0;) {
    Expr *e = (Expr *)rw->marked.data[i].key;
    if (e->mark == i + 1) e->mark = rw->marked.data[i].prior;
  }
  rw->marked.len = 0;
}

void rw_fini(Rewriter *rw) {
  give_back_marks(rw);
  ptrmap_free(&rw->memo);
  ptrmap_free(&rw->subst);
  vec_free(rw->marked);
  vec_free(rw->work);
}

void rw_reset_memo(Rewriter *rw) {
  ptrmap_free(&rw->memo);
  memset(&rw->memo, 0, sizeof rw->memo);
  give_back_marks(rw);
}

void rw_subst(Rewriter *rw, Var *v, Expr *e) { ptrmap_put(&rw->subst, v, (int64_t)(intptr_t)e); }

/* The mark_memo entry of e, or NULL. */
static struct RwMark *marked(Rewriter *rw, const Expr *e) {
  uint32_t i = e->mark - 1;
  return e->mark && i < rw->marked.len && rw->marked.data[i].key == e ? &rw->marked.data[i] : NULL;
}

uint32_t rw_prior_mark(const Rewriter *rw, const Expr *e) {
  uint32_t i = e->mark - 1;
  if (e->mark && i < rw->marked.len && rw->marked.data[i].key == e) return rw->marked.data[i].prior;
  return e->mark;
}

static Expr *memo_get(Rewriter *rw, const Expr *e) {
  if (rw->mark_memo) {
    struct RwMark *k = marked(rw, e);
    return k ? k->val : NULL;
  }
  const int64_t *v = ptrmap_find(&rw->memo, e);
  return v ? (Expr *)(intptr_t)*v : NULL;
}

static void memo_put(Rewriter *rw, const Expr *e, Expr *r) {
  if (!rw->mark_memo) {
    ptrmap_put(&rw->memo, e, (int64_t)(intptr_t)r);
    return;
  }
  struct RwMark *k = marked(rw, e);
  if (k) {
    k->val = r;
    return;
  }
  vec_push(rw->marked, ((struct RwMark){e, r, e->mark}));
  ((Expr *)e)->mark = (uint32_t)rw->marked.len;
}

static bool too_deep(Rewriter *rw, Expr *e) {
  if (!stack_exhausted()) return false;
  if (!rw->failed && rw->d) diag_error(rw->d, e->span, "expression nested too deeply");
  rw->failed = true;
  return true;
}

/* The binder to use for v in the rebuilt node (v itself without a rebind hook). */
static Var *rebind(Rewriter *rw, Var *v) {
  if (!rw->rebind) return v;
  Var *n = rw->rebind(rw, v);
  if (n && n != v) {
    if (rw->keep_types && !n->type) n->type = v->type;
    Expr *use = build_var(rw->m, n, v->span);
    if (rw->keep_types) use->type = n->type;
    rw_subst(rw, v, use);
    return n;
  }
  return v;
}

static Pattern *rebind_pattern(Rewriter *rw, Pattern *p) {
  if (!rw->rebind || stack_exhausted()) return p;
  Pattern *c;
  switch (p->kind) {
  case PAT_VAR: {
    Var *v = rebind(rw, p->var);
    if (v == p->var) return p;
    c = pattern_new(rw->m, PAT_VAR, p->span);
    c->var = v;
    return c;
  }
  case PAT_CTOR: {
    Pattern **args = NULL;
    for (uint32_t i = 0; i < p->ctor.nargs; i++) {
      Pattern *a = rebind_pattern(rw, p->ctor.args[i]);
      if (a != p->ctor.args[i] && !args) args = arena_memdup(rw->m->arena, p->ctor.args, p->ctor.nargs * sizeof *args);
      if (args) args[i] = a;
    }
    if (!args) return p;
    c = pattern_new(rw->m, PAT_CTOR, p->span);
    c->ctor = p->ctor;
    c->ctor.args = args;
    return c;
  }
  case PAT_TUPLE: {
    Pattern **fs = NULL;
    for (uint32_t i = 0; i < p->tuple.n; i++) {
      Pattern *a = rebind_pattern(rw, p->tuple.fields[i]);
      if (a != p->tuple.fields[i] && !fs) fs = arena_memdup(rw->m->arena, p->tuple.fields, p->tuple.n * sizeof *fs);
      if (fs) fs[i] = a;
    }
    if (!fs) return p;
    c = pattern_new(rw->m, PAT_TUPLE, p->span);
    c->tuple.fields = fs;
    c->tuple.n = p->tuple.n;
    return c;
  }
  default:
    return p;
  }
}

/* --------------------------------------------------------------- children */

static Expr **rewrite_list(Rewriter *rw, Expr **xs, uint32_t n, bool *changed) {
  Expr **out = NULL;
  for (uint32_t i = 0; i < n; i++) {
    Expr *r = rw_expr(rw, xs[i]);
    if (r != xs[i] && !out) {
      out = arena_alloc(rw->m->arena, n * sizeof *out);
      memcpy(out, xs, n * sizeof *out);
    }
    if (out) out[i] = r;
  }
  *changed = out != NULL;
  return out ? out : xs;
}

static Expr *rewrite_fn(Rewriter *rw, Expr *e) {
  if (!rw->enter_fns) return e;
  Function *f = e->fn;
  Var **ps = NULL;
  for (uint32_t i = 0; i < f->nparams; i++) {
    Var *v = rebind(rw, f->params[i]);
    if (v != f->params[i] && !ps) ps = arena_memdup(rw->m->arena, f->params, f->nparams * sizeof *ps);
    if (ps) ps[i] = v;
  }
  Expr *body = rw_expr(rw, f->body);
  if (body == f->body && !ps) return e;
  Function *nf = arena_alloc(rw->m->arena, sizeof *nf);
  *nf = *f;
  if (ps) nf->params = ps;
  nf->body = body;
  nf->type = NULL;
  Expr *c = build_copy(rw->m, e);
  c->fn = nf;
  return c;
}

static Expr *rewrite_match(Rewriter *rw, Expr *e) {
  Expr *scrut = rw_expr(rw, e->match.scrut);
  Clause *cl = NULL;
  for (uint32_t i = 0; i < e->match.nclauses; i++) {
    Pattern *p = rebind_pattern(rw, e->match.clauses[i].pattern);
    Expr *b = rw_expr(rw, e->match.clauses[i].body);
    if ((b != e->match.clauses[i].body || p != e->match.clauses[i].pattern) && !cl)
      cl = arena_memdup(rw->m->arena, e->match.clauses, e->match.nclauses * sizeof *cl);
    if (cl) {
      cl[i].body = b;
      cl[i].pattern = p;
    }
  }
  if (scrut == e->match.scrut && !cl) return e;
  Expr *c = build_copy(rw->m, e);
  c->match.scrut = scrut;
  if (cl) c->match.clauses = cl;
  return c;
}

static Expr *children(Rewriter *rw, Expr *e);

Expr *rw_children(Rewriter *rw, Expr *e) {
  Expr *c = children(rw, e);
  if (c != e && rw->keep_types) {
    c->type = rw_rebuilt_type(e, c);
    if (c->kind == EXPR_FN) c->fn->type = c->type;
  }
  return c;
}

static Expr *children(Rewriter *rw, Expr *e) {
  bool ch = false;
  Expr *c, *a, *b, *x;
  switch (e->kind) {
  case EXPR_CALL: {
    Expr *fn = rw_expr(rw, e->call.fn);
    Expr **args = rewrite_list(rw, e->call.args, e->call.nargs, &ch);
    if (fn == e->call.fn && !ch) return e;
    c = build_copy(rw->m, e);
    c->call.fn = fn;
    c->call.args = args;
    return c;
  }
  case EXPR_TUPLE: {
    Expr **fs = rewrite_list(rw, e->tuple.fields, e->tuple.n, &ch);
    if (!ch) return e;
    c = build_copy(rw->m, e);
    c->tuple.fields = fs;
    return c;
  }
  case EXPR_PROJ:
    a = rw_expr(rw, e->proj.tuple);
    if (a == e->proj.tuple) return e;
    c = build_copy(rw->m, e);
    c->proj.tuple = a;
    return c;
  case EXPR_FN: return rewrite_fn(rw, e);
  case EXPR_LET: {
    Var *v = rebind(rw, e->let.var);
    a = rw_expr(rw, e->let.value);
    b = rw_expr(rw, e->let.body);
    if (a == e->let.value && b == e->let.body && v == e->let.var) return e;
    c = build_copy(rw->m, e);
    c->let.var = v;
    c->let.value = a;
    c->let.body = b;
    return c;
  }
  case EXPR_IF:
    a = rw_expr(rw, e->if_.cond);
    b = rw_expr(rw, e->if_.then_);
    x = rw_expr(rw, e->if_.else_);
    if (a == e->if_.cond && b == e->if_.then_ && x == e->if_.else_) return e;
    c = build_copy(rw->m, e);
    c->if_.cond = a;
    c->if_.then_ = b;
    c->if_.else_ = x;
    return c;
  case EXPR_MATCH: return rewrite_match(rw, e);
  case EXPR_REF_NEW:
  case EXPR_REF_READ:
    a = rw_expr(rw, e->ref.arg);
    if (a == e->ref.arg) return e;
    c = build_copy(rw->m, e);
    c->ref.arg = a;
    return c;
  case EXPR_REF_WRITE:
    a = rw_expr(rw, e->ref_write.ref);
    b = rw_expr(rw, e->ref_write.value);
    if (a == e->ref_write.ref && b == e->ref_write.value) return e;
    c = build_copy(rw->m, e);
    c->ref_write.ref = a;
    c->ref_write.value = b;
    return c;
  default:
    return e; /* leaves */
  }
}

/* ------------------------------------------------------------- let chains */

/* A chain let_1 -> let_2 -> ... -> body: pre and value of each let in order,
 * then the body, then rebuild from the inside out calling post. */
static Expr *rewrite_let_chain(Rewriter *rw, Expr *e) {
  VEC(Expr *) chain = {0};
  VEC(Expr *) values = {0};
  VEC(Var *) binders = {0};
  Expr *cur = e, *tail = NULL;
  for (;;) {
    if (cur->kind != EXPR_LET || memo_get(rw, cur)) { tail = rw_expr(rw, cur); break; }
    if (rw->pre) {
      Expr *r = rw->pre(rw, cur);
      if (r) { memo_put(rw, cur, r); tail = r; break; }
    }
    vec_push(chain, cur);
    vec_push(binders, rebind(rw, cur->let.var));
    vec_push(values, rw_expr(rw, cur->let.value));
    cur = cur->let.body;
  }
  Expr *body = tail;
  for (size_t i = chain.len; i-- > 0;) {
    Expr *old = chain.data[i], *r = old;
    if (values.data[i] != old->let.value || body != old->let.body || binders.data[i] != old->let.var) {
      r = build_copy(rw->m, old);
      r->let.var = binders.data[i];
      r->let.value = values.data[i];
      r->let.body = body;
      if (rw->keep_types) r->type = rw_rebuilt_type(old, r);
    }
    if (rw->post) r = rw->post(rw, old, r);
    memo_put(rw, old, r);
    body = r;
  }
  vec_free(chain);
  vec_free(values);
  vec_free(binders);
  return body;
}

static bool is_dataflow(const Expr *e) {
  return e->kind == EXPR_CALL || e->kind == EXPR_TUPLE || e->kind == EXPR_PROJ;
}

/* A dataflow node (call, tuple, projection) and the dataflow nodes below it,
 * with an explicit stack instead of recursion, in exactly the recursive
 * order: pre(e), then each child fully (a call: the callee, then the
 * arguments), then post(e). So 100,000-long graph chains use no C stack;
 * other children go through rw_expr. */
static Expr *rewrite_dataflow(Rewriter *rw, Expr *root) {
  size_t base = rw->work.len; /* a walk nested in a hook or in rw_expr works above this */
  vec_push(rw->work, ((struct RwItem){root, false}));
  while (rw->work.len > base) {
    struct RwItem *top = &rw->work.data[rw->work.len - 1];
    Expr *e = top->e, *r;
    if (top->entered) {
      rw->work.len--;
      r = rw_children(rw, e); /* every child is memoised now: no recursion */
      if (rw->post) r = rw->post(rw, e, r);
      memo_put(rw, e, r);
      continue;
    }
    if (e != root && (memo_get(rw, e) || !is_dataflow(e))) {
      rw->work.len--;
      rw_expr(rw, e);
      continue;
    }
    if (rw->pre && (r = rw->pre(rw, e))) {
      rw->work.len--;
      memo_put(rw, e, r);
      continue;
    }
    /* (pre may have run a nested walk that moved the stack: index it again; the
     * nested walk left the stack at its base, so the top is this item) */
    rw->work.data[rw->work.len - 1].entered = true;
    switch (e->kind) { /* pushed in reverse: the first child ends on top */
    case EXPR_CALL:
      for (uint32_t i = e->call.nargs; i-- > 0;) vec_push(rw->work, ((struct RwItem){e->call.args[i], false}));
      vec_push(rw->work, ((struct RwItem){e->call.fn, false}));
      break;
    case EXPR_TUPLE:
      for (uint32_t i = e->tuple.n; i-- > 0;) vec_push(rw->work, ((struct RwItem){e->tuple.fields[i], false}));
      break;
    default: vec_push(rw->work, ((struct RwItem){e->proj.tuple, false})); break;
    }
  }
  return memo_get(rw, root);
}

Expr *rw_expr(Rewriter *rw, Expr *e) {
  Expr *r = memo_get(rw, e);
  if (r) return r;
  if (e->kind == EXPR_VAR && rw->subst.len) {
    const int64_t *s = ptrmap_find(&rw->subst, e->var.var);
    if (s) {
      r = (Expr *)(intptr_t)*s;
      memo_put(rw, e, r);
      return r;
    }
  }
  if (too_deep(rw, e)) return e;
  if (e->kind == EXPR_LET) return rewrite_let_chain(rw, e);
  if (is_dataflow(e)) return rewrite_dataflow(rw, e);
  if (rw->pre && (r = rw->pre(rw, e))) {
    memo_put(rw, e, r);
    return r;
  }
  r = rw_children(rw, e);
  if (rw->post) r = rw->post(rw, e, r);
  memo_put(rw, e, r);
  return r;
}

bool rw_function(Rewriter *rw, Function *f) {
  Expr *b = rw_expr(rw, f->body);
  if (b != f->body) {
    f->body = b;
    f->type = NULL;
  }
  return !rw->failed;
}

/* ------------------------------------------------------------ fresh copies */

static Var *fresh_binder(Rewriter *rw, Var *v) { return build_var_like(rw->m, v); }

/* A node with an effect of its own (a reference operation, a call of a
 * function, a stateful operator) is copied even when nothing in it changes:
 * shared by two copies of a body (DefuseOps/Inline at two calls), it would
 * run once for both (one `ref` cell for two calls; a `ref_read` in a
 * backpropagator evaluated where the copies' closures are made). */
static Expr *fresh_effects(Rewriter *rw, Expr *old, Expr *e) {
  if (e != old || (rw->ud && ptrmap_find(rw->ud, e))) return e;
  bool eff = e->kind == EXPR_REF_NEW || e->kind == EXPR_REF_READ || e->kind == EXPR_REF_WRITE;
  if (e->kind == EXPR_CALL) {
    int32_t id = op_call_id(e);
    eff = id >= 0 ? op_is_stateful(id) : e->call.fn->kind != EXPR_CTOR;
  }
  return eff ? build_copy(rw->m, e) : e;
}

/* A kept node is the enclosing code's, evaluated there: it stays as it is,
 * with everything below it (a kept `let` rebuilt around fresh binders, or its
 * effects copied, would be a second evaluation of the shared node). */
static Expr *keep_whole(Rewriter *rw, Expr *e) { return ptrmap_find(rw->ud, e) ? e : NULL; }

Expr *rw_copy_fresh(Module *m, Diag *d, Expr *e, Var *const *from, Expr *const *to, uint32_t n) {
  return rw_copy_fresh_keep(m, d, e, from, to, n, NULL);
}

Expr *rw_copy_fresh_keep(Module *m, Diag *d, Expr *e, Var *const *from, Expr *const *to, uint32_t n,
                         const PtrMap *keep) {
  Rewriter rw;
  rw_init(&rw, m, d);
  rw.rebind = fresh_binder;
  rw.post = fresh_effects;
  rw.ud = (void *)keep;
  if (keep && keep->len) rw.pre = keep_whole;
  rw.mark_memo = true; /* neither hook writes marks; an outer user gets its marks back at rw_fini */
  for (uint32_t i = 0; i < n; i++) rw_subst(&rw, from[i], to[i]);
  Expr *r = rw_expr(&rw, e);
  rw_fini(&rw);
  return r;
}

/* ------------------------------------------------------------ typed copies */

static bool same_ty(const Type *a, const Type *b) { return a && b && (a == b || type_equal(a, b)); }

/* Does the new child n stand where o stood with o's type? */
static bool child_kept(const Expr *o, const Expr *n) {
  if (o == n) return true;
  if (o->kind == EXPR_OP || n->kind == EXPR_OP) /* operator callees: typed per call */
    return o->kind == n->kind && o->op.id == n->op.id;
  return same_ty(o->type, n->type);
}

static bool children_kept(Expr *const *os, Expr *const *ns, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!child_kept(os[i], ns[i])) return false;
  return true;
}

Type *rw_rebuilt_type(const Expr *old, const Expr *now) {
  if (!old->type || old->kind != now->kind) return NULL;
  bool ok;
  switch (old->kind) {
  case EXPR_CALL:
    ok = old->call.nargs == now->call.nargs && child_kept(old->call.fn, now->call.fn) &&
         children_kept(old->call.args, now->call.args, old->call.nargs);
    if (ok && old->call.fn->kind == EXPR_OP && op_type_reads_consts(old->call.fn->op.id))
      for (uint32_t i = 0; i < old->call.nargs; i++) ok = ok && old->call.args[i] == now->call.args[i];
    break;
  case EXPR_TUPLE:
    ok = old->tuple.n == now->tuple.n && children_kept(old->tuple.fields, now->tuple.fields, old->tuple.n);
    break;
  case EXPR_PROJ: ok = child_kept(old->proj.tuple, now->proj.tuple); break;
  case EXPR_LET:
    ok = (old->let.var == now->let.var || same_ty(old->let.var->type, now->let.var->type)) &&
         child_kept(old->let.value, now->let.value) && child_kept(old->let.body, now->let.body);
    break;
  case EXPR_IF:
    ok = child_kept(old->if_.cond, now->if_.cond) && child_kept(old->if_.then_, now->if_.then_) &&
         child_kept(old->if_.else_, now->if_.else_);
    break;
  case EXPR_MATCH:
    ok = old->match.nclauses == now->match.nclauses && child_kept(old->match.scrut, now->match.scrut);
    for (uint32_t i = 0; ok && i < old->match.nclauses; i++)
      ok = old->match.clauses[i].pattern == now->match.clauses[i].pattern &&
           child_kept(old->match.clauses[i].body, now->match.clauses[i].body);
    break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: ok = child_kept(old->ref.arg, now->ref.arg); break;
  case EXPR_REF_WRITE:
    ok = child_kept(old->ref_write.ref, now->ref_write.ref) && child_kept(old->ref_write.value, now->ref_write.value);
    break;
  case EXPR_FN: {
    const Function *a = old->fn, *b = now->fn;
    ok = a->nparams == b->nparams && a->ntparams == b->ntparams && a->ret_annot == b->ret_annot &&
         child_kept(a->body, b->body);
    for (uint32_t i = 0; ok && i < a->nparams; i++)
      ok = a->params[i] == b->params[i] || (a->params[i]->annot == b->params[i]->annot &&
                                            same_ty(a->params[i]->type, b->params[i]->type));
    break;
  }
  case EXPR_VAR: ok = old->var.var == now->var.var; break;
  case EXPR_CONST: ok = old->constant == now->constant; break;
  case EXPR_GLOBAL: ok = old->global.def == now->global.def; break;
  case EXPR_CTOR: ok = old->ctor.ctor == now->ctor.ctor; break;
  default: ok = false; break;
  }
  return ok ? old->type : NULL;
}

/* ------------------------------------------------------------ attributes */

bool fn_has_attr(const Function *f, const char *key) {
  if (!f || !f->attrs) return false;
  for (uint32_t i = 0; i < f->attrs->n; i++) {
    const Attr *a = &f->attrs->items[i];
    if (strcmp(a->key, key) != 0) continue;
    const AttrValue *v = a->value;
    if (v->kind == AV_INT) return v->i.value != 0;
    if (v->kind == AV_BOOL) return v->b;
    if (v->kind == AV_STRING) return v->s.len > 0;
    return true;
  }
  return false;
}

bool fn_skipped_by_function_passes(const Function *f) {
  return fn_has_attr(f, "Compiler") || fn_has_attr(f, "Extern") || fn_has_attr(f, "SkipOptimization");
}
