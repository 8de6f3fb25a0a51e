/* transform/fuse_ops.c — FuseOps: operator groups become calls of
 * `Primitive=1` function literals (spec/passes.md §6.1).
 *
 * fuse_partition.c decides the groups; this file rebuilds the function
 * bottom-up with the Rewriter (sharing kept). A node whose argument lies in
 * another group gets a parameter `%pN` (one per distinct argument node —
 * every use of a variable counts as the same node — annotated with the
 * argument's type, numbered in order of first use while rebuilding); the
 * root of a group (an operator call, or a projection whose tuple is in the
 * same group) becomes `fn (%p0, ..., Primitive=1) -> T { body }(args)`.
 * `relay.reshape_only=1` is added when every call in the body is
 * reshape-like and every parameter a tensor; a body without calls gets
 * Primitive=0 (TVM's quirk). annotation.stop_fusion(e) becomes e (its edge
 * cut the graph); non-computational operators stay as plain calls;
 * Primitive literals are left alone and Compiler literals not entered.
 * Options: fuse_opt_level (-1: the pipeline's level; 0: every operator
 * alone), max_depth (nodes per group, TVM's relay.FuseOps.max_depth) and
 * link_params (non-scalar constants stay inside instead of becoming
 * parameters).
 *
 * Every node built is typed as inference would type it (the runner's
 * incremental re-typing then keeps it): a parameter and its uses have the
 * argument's type, a rebuilt node the type of the node it replaces, a
 * literal fn(parameter types) -> the group root's type; except a group where
 * a constant argument whose value the call's type relation reads became a
 * parameter (OPF_TYPE_READS_CONSTS: arange's length), left to inference.
 */
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ops/op_call.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "transform/fuse_partition.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

bool pass_FUSE_OPS(PassCtx *c);

/* Parameters and arguments of one group's function (arrays in the arena:
 * most groups have one to three, and there is one group per operator). */
typedef struct GroupInfo {
  Var **params;
  Expr **args;
  uint32_t len, cap;
  bool untyped; /* a call in it changed type (a constant argument became a parameter) */
} GroupInfo;

typedef struct Fuse {
  FusePartition fp;
  int32_t *info_of;   /* group (root index) -> 1 + its index in infos, 0: none yet */
  VEC(GroupInfo) infos;
  VEC(const char *) pnames; /* "p0", "p1", ...: one arena string each, shared by every group */
  Attrs *fn_attrs[3];       /* Primitive=0, Primitive=1, Primitive=1 + relay.reshape_only=1: shared likewise */
  bool link_params;
  int32_t stop_fusion; /* registry id of annotation.stop_fusion, or -1 */
  VEC(Expr *) stack;   /* check_reshape's scratch, reused by every group */
  PtrMap seen;
} Fuse;

static GroupInfo *group_info(Fuse *fu, int32_t g) {
  if (!fu->info_of[g]) {
    vec_push(fu->infos, ((GroupInfo){0}));
    fu->info_of[g] = (int32_t)fu->infos.len;
  }
  return &fu->infos.data[fu->info_of[g] - 1];
}

static bool same_input(const Expr *a, const Expr *b) {
  if (a == b) return true;
  return a->kind == EXPR_VAR && b->kind == EXPR_VAR && a->var.var == b->var.var;
}

/* The name of a group's k-th parameter, "pk" (made once per function, not
 * per parameter: no printf, no copy per group). */
static const char *param_name(Module *m, Fuse *fu, size_t k) {
  while (fu->pnames.len <= k) {
    char name[24];
    snprintf(name, sizeof name, "p%zu", fu->pnames.len);
    vec_push(fu->pnames, arena_strdup(m->arena, name));
  }
  return fu->pnames.data[k];
}

/* The parameter standing for `arg` (the rewritten argument) in group g. */
static Expr *group_param(Rewriter *rw, Fuse *fu, int32_t g, Expr *arg, const Type *type) {
  GroupInfo *gi = group_info(fu, g);
  for (uint32_t i = 0; i < gi->len; i++)
    if (same_input(gi->args[i], arg)) {
      Var *p = gi->params[i];
      return build_typed(build_var(rw->m, p, arg->span), p->type);
    }
  Var *p = var_new(rw->m, param_name(rw->m, fu, gi->len), arg->span, (Type *)type_solved(type));
  p->type = p->annot; /* a parameter's type is its annotation */
  if (gi->len == gi->cap) {
    uint32_t cap = gi->cap ? 2 * gi->cap : 4;
    Var **params = arena_alloc(rw->m->arena, cap * sizeof *params);
    Expr **args = arena_alloc(rw->m->arena, cap * sizeof *args);
    if (gi->len) {
      memcpy(params, gi->params, gi->len * sizeof *params);
      memcpy(args, gi->args, gi->len * sizeof *args);
    }
    gi->params = params, gi->args = args, gi->cap = cap;
  }
  gi->params[gi->len] = p;
  gi->args[gi->len++] = arg;
  return build_typed(build_var(rw->m, p, arg->span), p->type);
}

/* TVM's GetNewArguments: `olds` are the original arguments (for groups and
 * types), `news` their rewritten forms; returns the list for the node in
 * group g (news itself when nothing crosses a group boundary). */
static Expr **new_arguments(Rewriter *rw, Fuse *fu, int32_t g, Expr **olds, Expr **news, uint32_t n) {
  Expr **out = NULL;
  for (uint32_t i = 0; i < n; i++) {
    Expr *a = news[i];
    if (fuse_group_of(&fu->fp, olds[i], rw_prior_mark(rw, olds[i])) != g && !(fu->link_params && a->kind == EXPR_CONST))
      a = group_param(rw, fu, g, a, olds[i]->type);
    if (a != news[i] && !out) {
      out = arena_alloc(rw->m->arena, (n ? n : 1) * sizeof *out);
      memcpy(out, news, n * sizeof *out);
    }
    if (out) out[i] = a;
  }
  return out ? out : news;
}

/* TVM's CheckReshapeOnly over a group's body. */
typedef struct ReshapeCheck {
  bool reshape_only, has_call;
} ReshapeCheck;

static void check_reshape(Fuse *fu, Expr *body, ReshapeCheck *rc) {
  fu->stack.len = 0;
  ptrmap_clear(&fu->seen);
  vec_push(fu->stack, body);
  while (fu->stack.len) {
    Expr *e = fu->stack.data[--fu->stack.len];
    if (ptrmap_get(&fu->seen, e, NULL)) continue;
    ptrmap_put(&fu->seen, e, 1);
    switch (e->kind) {
    case EXPR_CALL:
      rc->has_call = true;
      if (e->call.fn->kind != EXPR_OP || !op_is_reshape_only(e->call.fn->op.id)) rc->reshape_only = false;
      if (rc->reshape_only)
        for (uint32_t i = 0; i < e->call.nargs; i++) vec_push(fu->stack, e->call.args[i]);
      break;
    case EXPR_VAR: {
      const Type *t = e->var.var->annot;
      if (!t || t->kind != TYPE_TENSOR) rc->reshape_only = false;
      break;
    }
    case EXPR_TUPLE:
      for (uint32_t i = 0; i < e->tuple.n; i++) vec_push(fu->stack, e->tuple.fields[i]);
      break;
    case EXPR_PROJ: vec_push(fu->stack, e->proj.tuple); break;
    default: break;
    }
  }
}

/* `fn (params, Primitive=1) -> ret { body }(args)` for group g. */
static Expr *make_function(Rewriter *rw, Fuse *fu, int32_t g, const Type *ret, Expr *body, Span sp) {
  Module *m = rw->m;
  ReshapeCheck rc = {true, false};
  check_reshape(fu, body, &rc);
  GroupInfo *gi = group_info(fu, g);
  int kind = !rc.has_call ? 0 : rc.reshape_only ? 2 : 1;
  Attrs *attrs = fu->fn_attrs[kind]; /* attributes are never edited in place: one object serves all */
  if (!attrs) {
    attrs = attrs_with(m, NULL, "Primitive", attr_int(m, rc.has_call ? 1 : 0));
    if (kind == 2) attrs = attrs_with(m, attrs, "relay.reshape_only", attr_int(m, 1));
    fu->fn_attrs[kind] = attrs;
  }
  Function *f = build_function(m, gi->params, gi->len, (Type *)type_solved(ret), body, attrs, sp);
  if (gi->untyped) return build_call(m, build_fn(m, f, sp), gi->args, gi->len, sp);
  return build_typed(build_call(m, build_fn_typed(m, f, sp), gi->args, gi->len, sp),
                     (Type *)type_solved(ret));
}

static Expr *fuse_pre(Rewriter *rw, Expr *e) {
  /* Primitive literals stay as they are; Compiler literals are not entered */
  if (e->kind == EXPR_FN && (fn_has_attr(e->fn, "Primitive") || fn_has_attr(e->fn, "Compiler"))) return e;
  return NULL;
}

static Expr *fuse_post(Rewriter *rw, Expr *old, Expr *e) {
  Fuse *fu = rw->ud;
  switch (old->kind) {
  case EXPR_CALL: {
    if (old->call.fn->kind != EXPR_OP) return e;
    int32_t id = old->call.fn->op.id;
    if (op_is_noncomputational(id)) return e;
    if (id == fu->stop_fusion && e->call.nargs == 1) return e->call.args[0];
    int32_t g = fuse_group_of(&fu->fp, old, rw_prior_mark(rw, old));
    if (g < 0) return e;
    Expr **args = new_arguments(rw, fu, g, old->call.args, e->call.args, e->call.nargs);
    /* e is the rewriter's fresh copy when a child changed: ours to change */
    Expr *call = e == old ? build_copy(rw->m, e) : e;
    call->call.args = args;
    /* NULL when its type may change (arange's constant stop became a
     * parameter): inference types it and its group again */
    if (!(call->type = rw_rebuilt_type(old, call))) group_info(fu, g)->untyped = true;
    if (g == fuse_node_of(&fu->fp, old, rw_prior_mark(rw, old))) return make_function(rw, fu, g, old->type, call, old->span);
    return call;
  }
  case EXPR_TUPLE: {
    int32_t g = fuse_group_of(&fu->fp, old, rw_prior_mark(rw, old));
    if (g < 0 || g == fuse_node_of(&fu->fp, old, rw_prior_mark(rw, old))) return e;
    Expr **fields = new_arguments(rw, fu, g, old->tuple.fields, e->tuple.fields, e->tuple.n);
    if (fields == e->tuple.fields) return e;
    Expr *t = e == old ? build_copy(rw->m, e) : e;
    t->tuple.fields = fields;
    if (!(t->type = rw_rebuilt_type(old, t))) group_info(fu, g)->untyped = true;
    return t;
  }
  case EXPR_PROJ: {
    int32_t g = fuse_group_of(&fu->fp, old, rw_prior_mark(rw, old));
    if (g < 0) return e;
    bool root = g == fuse_node_of(&fu->fp, old, rw_prior_mark(rw, old));
    if (root && fuse_group_of(&fu->fp, old->proj.tuple, rw_prior_mark(rw, old->proj.tuple)) != g) return e; /* isolated */
    Expr **tup = new_arguments(rw, fu, g, &old->proj.tuple, &e->proj.tuple, 1);
    Expr *p = build_proj(rw->m, tup[0], old->proj.index, old->span);
    if (!(p->type = rw_rebuilt_type(old, p))) group_info(fu, g)->untyped = true;
    if (root) return make_function(rw, fu, g, old->type, p, old->span);
    return p;
  }
  default: return e;
  }
}

static bool fuse_function(PassCtx *c, GlobalDef *gd) {
  Function *fn = gd->fn;
  if (fn_has_attr(fn, "Primitive")) return true;
  int64_t level = pass_opt_int(c, "fuse_opt_level");
  if (level < 0) level = c->opt_level;
  int64_t depth = pass_opt_int(c, "max_depth");
  Fuse fu = {.link_params = pass_opt_bool(c, "link_params"), .stop_fusion = op_lookup("annotation.stop_fusion")};
  fuse_partition_build(&fu.fp, fn, (int)level, depth < 1 ? 1 : (uint32_t)depth);
  fu.info_of = mem_calloc(fu.fp.post.len + 1, sizeof *fu.info_of);
  Rewriter rw;
  rw_init(&rw, c->m, c->d);
  rw.pre = fuse_pre;
  rw.post = fuse_post;
  rw.ud = &fu;
  rw.keep_types = true; /* every node keeps its type; what fuse_post builds is typed too */
  /* the memo borrows the marks the partition gave the nodes: its lookups pass
   * rw_prior_mark for nodes already rewritten (`old` itself is not memoised
   * yet when fuse_post sees it) */
  rw.mark_memo = true;
  bool ok = rw_function(&rw, fn);
  rw_fini(&rw);
  mem_free(fu.info_of);
  vec_free(fu.infos);
  vec_free(fu.stack);
  ptrmap_free(&fu.seen);
  vec_free(fu.pnames);
  fuse_partition_free(&fu.fp);
  return ok;
}

bool pass_FUSE_OPS(PassCtx *c) { return pass_for_each_function(c, fuse_function); }
