/* transform/mixed_precision.c — ToMixedPrecision: float work moves to a
 * lower precision M (float16 by default), with casts where values cross
 * (spec/passes.md §7; TVM's to_mixed_precision.cc semantics).
 *
 * Each operator call is rebuilt bottom-up according to its category, a
 * column of the registry (ops/op_traits.def: OPF_MP_ALWAYS / FOLLOW /
 * NEVER; operators in no list count as FOLLOW and are reported per
 * missing_op_mode):
 *   ALWAYS  float arguments cast to M; an unset or float `out_dtype` (the
 *           ALWAYS operators' accumulation type) and the `dtype` of the
 *           creation operators (zeros, ones, full, broadcast_to: TVM's
 *           InitOpAttrs) become M;
 *   FOLLOW  acts as ALWAYS when every float argument is already M (or is a
 *           variable or constant), else as NEVER;
 *   NEVER   float arguments cast to float32;
 * clip with bounds outside M's finite range stays NEVER; calls of function
 * literals are NEVER; calls of globals, constructors and variables are left
 * alone. Casts are shared per (node, dtype) — every use of a variable is the
 * same node — and casting a cast back yields the original node. A let
 * binder's annotation becomes its new value's type; return types are
 * dropped and re-inferred. keep_orig_output_dtype casts a root call (or the
 * fields of a root tuple) back to the function's original result dtypes.
 * New nodes are typed when their type is needed (sema infer_untyped: the
 * category of a call depends on its arguments' new types). relayc computes
 * float16 through float32 inside its kernels (ops/kernels/k_cvt.h).
 */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ir/type_any.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "sema/call_memo.h"
#include "sema/infer.h"
#include "transform/pass.h"
#include "transform/rewrite.h"

bool pass_TO_MIXED_PRECISION(PassCtx *c);

enum { MP_ALWAYS, MP_FOLLOW, MP_NEVER };

#define MAX_CACHES 8

typedef struct CastCache {
  DType dt;
  PtrMap map; /* node key → cast (or original) node of dtype dt */
} CastCache;

typedef struct Mixed {
  Module *m;
  Diag *d;
  DType M;             /* the mixed precision type */
  double bound;        /* largest finite magnitude of M (clip's test) */
  bool keep_orig;
  const Expr *root;    /* the global function's body */
  DType orig[64];      /* keep_orig: dtypes of the root call / tuple fields */
  uint32_t norig;
  CastCache caches[MAX_CACHES];
  uint32_t ncaches;
  uint32_t *missing;   /* by operator id: calls of operators in no list */
  CallMemo calls;      /* operator call types inferred so far (sema/call_memo.h): most
                        * calls the pass builds repeat one another (a cast of a
                        * Tensor[(1, 16), float32] to float16), and typing each through
                        * infer_untyped was most of the pass's time */
  bool failed;
} Mixed;

static const DType F32 = {DT_FLOAT, 32, 1};

static bool is_float(DType d) { return d.code == DT_FLOAT || d.code == DT_BFLOAT; }

/* Gives e (built by this pass, children typed) its type. */
static bool typed(Mixed *mx, Expr *e) {
  if (e->type) return true;
  uint64_t h;
  bool cacheable = call_memo_key(e, &h);
  if (cacheable && call_memo_apply(&mx->calls, e, h)) return true;
  if (infer_untyped(mx->m, e, mx->d)) {
    if (cacheable) call_memo_add(&mx->calls, mx->m, e, h);
    return true;
  }
  mx->failed = true;
  return false;
}

/* Every use of a variable is one node, like TVM's Var. */
static const void *key_of(const Expr *e) { return e->kind == EXPR_VAR ? (const void *)e->var.var : (const void *)e; }

static PtrMap *cache_for(Mixed *mx, DType dt) {
  for (uint32_t i = 0; i < mx->ncaches; i++)
    if (dtype_eq(mx->caches[i].dt, dt)) return &mx->caches[i].map;
  if (mx->ncaches == MAX_CACHES) return NULL;
  mx->caches[mx->ncaches].dt = dt;
  return &mx->caches[mx->ncaches++].map;
}

/* TVM's IsMixedPrecisionType: every tensor in t has dtype M (non-float
 * tensors pass when ignore_non_float). */
static bool is_mixed_type(const Mixed *mx, const Type *t, bool ignore_non_float) {
  t = type_solved(t);
  if (!t) return false;
  if (t->kind == TYPE_TENSOR)
    return (ignore_non_float && !is_float(t->tensor.dtype)) || dtype_eq(t->tensor.dtype, mx->M);
  if (t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (!is_mixed_type(mx, t->tuple.fields[i], ignore_non_float)) return false;
    return true;
  }
  return false;
}

/* e cast to `want`, shared per (node, dtype); casting a cast back gives the node. */
static Expr *cached_cast(Mixed *mx, Expr *e, DType have, DType want) {
  if (!is_float(have) || dtype_eq(have, want)) return e;
  PtrMap *to = cache_for(mx, want), *back = cache_for(mx, have);
  int64_t hit;
  if (to && ptrmap_get(to, key_of(e), &hit)) return (Expr *)(intptr_t)hit;
  char dname[32], attrs[48];
  snprintf(attrs, sizeof attrs, "dtype=\"%s\"", dtype_name(want, dname));
  Expr *r = op_call(mx->m, "cast", &e, 1, attrs, e->span);
  typed(mx, r);
  if (to) ptrmap_put(to, key_of(e), (int64_t)(intptr_t)r);
  if (back) ptrmap_put(back, r, (int64_t)(intptr_t)e);
  return r;
}

/* TVM's CastArg: float tensors cast, tuples field by field (a tuple rebuilt
 * only when a field changed). With `only_from`, only tensors of that dtype
 * are cast; with `keep_f64`, float64 tensors stay float64 (unless float64 is M). */
static Expr *cast_arg(Mixed *mx, Expr *e, const Type *t, DType want, const DType *only_from, bool keep_f64) {
  t = type_solved(t);
  if (!t) return e;
  if (t->kind == TYPE_TENSOR) {
    if (only_from && !dtype_eq(t->tensor.dtype, *only_from)) return e;
    if (keep_f64 && dtype_eq(t->tensor.dtype, DT_F64) && !dtype_eq(mx->M, DT_F64)) return e;
    return cached_cast(mx, e, t->tensor.dtype, want);
  }
  if (t->kind != TYPE_TUPLE) return e;
  uint32_t n = t->tuple.n;
  Expr **fs = arena_alloc(mx->m->arena, (n ? n : 1) * sizeof *fs);
  bool same = true;
  for (uint32_t i = 0; i < n; i++) {
    Expr *f = e->kind == EXPR_TUPLE ? e->tuple.fields[i] : build_proj(mx->m, e, i, e->span);
    typed(mx, f);
    fs[i] = cast_arg(mx, f, t->tuple.fields[i], want, only_from, keep_f64);
    same &= fs[i] == f;
  }
  if (same) return e;
  Expr *tu = build_tuple(mx->m, fs, n, e->span);
  typed(mx, tu);
  return tu;
}

/* Whether t is a float64 tensor type. */
static bool float64_tensor(const Type *t) {
  t = type_solved(t);
  return t && t->kind == TYPE_TENSOR && dtype_eq(t->tensor.dtype, DT_F64);
}

/* e (typed) cast back to the tensor dtypes of `want` (its type before the
 * pass), tuples field by field: for the places whose type the pass must not
 * change (see restore_fixed_types). Refs, ADTs and functions stay as they are. */
static Expr *cast_to_type(Mixed *mx, Expr *e, const Type *want) {
  const Type *have = type_solved(e->type);
  want = type_solved(want);
  if (!have || !want || have->kind != want->kind) return e;
  if (have->kind == TYPE_TENSOR) return cached_cast(mx, e, have->tensor.dtype, want->tensor.dtype);
  if (have->kind != TYPE_TUPLE || have->tuple.n != want->tuple.n) return e;
  uint32_t n = have->tuple.n;
  Expr **fs = arena_alloc(mx->m->arena, (n ? n : 1) * sizeof *fs);
  bool same = true;
  for (uint32_t i = 0; i < n; i++) {
    Expr *f = e->kind == EXPR_TUPLE ? e->tuple.fields[i] : build_proj(mx->m, e, i, e->span);
    if (!typed(mx, f)) return e;
    fs[i] = cast_to_type(mx, f, want->tuple.fields[i]);
    same &= fs[i] == f;
  }
  if (same) return e;
  Expr *tu = build_tuple(mx->m, fs, n, e->span);
  typed(mx, tu);
  return tu;
}

/* The child `*slot` of a rebuilt node back at the type `old` had. */
static void restore(Mixed *mx, Expr **slot, const Expr *old) {
  if (*slot != old && old->type && typed(mx, *slot)) *slot = cast_to_type(mx, *slot, old->type);
}

/* relayc does better than TVM here: TVM lets a float16 value change the type
 * of a reference, a constructor field, a branch of an if or match or the
 * argument of a global or closure, and the output no longer type-checks
 * (ref_write of a float32 into what became ref(float16)). Values in those
 * places are cast back to their types before the pass; only operator calls,
 * lets, tuples and projections carry the mixed precision type onward. */
static void restore_fixed_types(Mixed *mx, const Expr *old, Expr *e) {
  if (e == old) return;
  switch (e->kind) {
  case EXPR_REF_NEW: restore(mx, &e->ref.arg, old->ref.arg); break;
  case EXPR_REF_WRITE: restore(mx, &e->ref_write.value, old->ref_write.value); break;
  case EXPR_CALL:
    if (e->call.fn->kind == EXPR_OP || e->call.fn->kind == EXPR_FN) break;
    for (uint32_t i = 0; i < e->call.nargs && i < old->call.nargs; i++) restore(mx, &e->call.args[i], old->call.args[i]);
    break;
  case EXPR_IF:
    restore(mx, &e->if_.then_, old->if_.then_);
    restore(mx, &e->if_.else_, old->if_.else_);
    break;
  case EXPR_MATCH:
    for (uint32_t i = 0; i < e->match.nclauses && i < old->match.nclauses; i++)
      restore(mx, &e->match.clauses[i].body, old->match.clauses[i].body);
    break;
  default: break;
  }
}

/* The result dtype of a tensor-typed expression. */
static bool tensor_dtype(const Expr *e, DType *dt) {
  const Type *t = type_solved(e->type);
  if (!t || t->kind != TYPE_TENSOR) return false;
  *dt = t->tensor.dtype;
  return true;
}

/* clip whose bounds M cannot represent stays in float32. */
static bool attrs_allow_mixed(const Mixed *mx, const Expr *call) {
  if (op_call_id(call) != OP_CLIP) return true;
  const AttrValue *lo = attrs_get(call->call.attrs, "a_min"), *hi = attrs_get(call->call.attrs, "a_max");
  double a = lo && lo->kind == AV_FLOAT ? lo->f.value : lo && lo->kind == AV_INT ? (double)lo->i.value : 0;
  double b = hi && hi->kind == AV_FLOAT ? hi->f.value : hi && hi->kind == AV_INT ? (double)hi->i.value : 0;
  return !(a < -mx->bound || b > mx->bound);
}

/* A copy of attrs with `key` set to dtype M when its value is a float dtype
 * or unset. */
static Attrs *retype_attr(Mixed *mx, Attrs *a, const char *key) {
  const AttrValue *v = attrs_get(a, key);
  if (!v || v->kind != AV_STRING) return a;
  DType cur;
  if (v->s.len && (!dtype_parse(v->s.chars, v->s.len, &cur) || !is_float(cur))) return a;
  char name[32];
  return attrs_with(mx->m, a, key, attr_string(mx->m, dtype_name(mx->M, name)));
}

/* `e` with new arguments and attributes: e itself when it is the rewriter's
 * fresh (untyped) copy of old, else a copy. */
static Expr *rebuild_call(Mixed *mx, const Expr *old, Expr *e, Expr **args, Attrs *attrs) {
  Expr *r = e != old && !e->type ? e : build_copy(mx->m, e);
  r->call.args = args;
  r->call.attrs = attrs;
  typed(mx, r);
  return r;
}

static Expr *convert_call(Mixed *mx, const Expr *old, Expr *e) {
  Expr *callee = e->call.fn;
  int cat;
  if (callee->kind == EXPR_FN) {
    cat = MP_NEVER;
  } else if (callee->kind == EXPR_OP) {
    uint32_t f = op_traits_flags(callee->op.id);
    if (f & OPF_MP_ALWAYS) cat = MP_ALWAYS;
    else if (f & OPF_MP_NEVER) cat = MP_NEVER;
    else {
      cat = MP_FOLLOW;
      if (!(f & OPF_MP_FOLLOW) && callee->op.id >= 0 && (uint32_t)callee->op.id < op_count())
        mx->missing[callee->op.id]++;
    }
  } else {
    return e; /* globals, constructors, variables: left alone */
  }
  uint32_t n = e->call.nargs;
  for (uint32_t i = 0; i < n; i++)
    if (!typed(mx, e->call.args[i])) return e;
  if (cat == MP_FOLLOW) {
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; i++) {
      Expr *a = e->call.args[i];
      ok = is_mixed_type(mx, a->type, true) || a->kind == EXPR_VAR || a->kind == EXPR_CONST;
    }
    cat = ok ? MP_ALWAYS : MP_NEVER;
  }
  bool mixed = cat == MP_ALWAYS && attrs_allow_mixed(mx, old);
  DType want = mixed ? mx->M : F32;
  Expr **args = arena_alloc(mx->m->arena, (n ? n : 1) * sizeof *args);
  bool same_args = true;
  for (uint32_t i = 0; i < n; i++) {
    /* a call kept in float32 (NEVER, or FOLLOW with an argument not in M)
     * casts an operator's float arguments to float32 as TVM's CastAllArgs
     * does: what the pass made M, and a float of another kind (a bfloat16 cell's
     * contents under M = float16: add(bfloat16, float32) was ill-typed; pass
     * fuzzer, session 14 seed 121 inputs 713, 866); a float64 argument stays float64
     * (TVM casts every float argument to float32: a float64 arange's
     * arguments became float32 against its dtype="float64", an ill-typed
     * output; pass fuzzer, session 11), and one the pass made M goes back to
     * float64 if it was (arange(add(1f64, 1f64), ...): the add FOLLOWs its
     * constants into M; session 12 seed 71 input 6062) */
    const Type *was = !mixed && old->kind == EXPR_CALL && i < old->call.nargs ? old->call.args[i]->type : NULL;
    const Var *param = callee->kind == EXPR_FN && i < callee->fn->nparams ? callee->fn->params[i] : NULL;
    if (param && (param->annot || param->type)) /* a literal's parameters keep their types: the argument meets them */
      args[i] = cast_to_type(mx, e->call.args[i], param->annot ? param->annot : param->type);
    else
      args[i] = was && float64_tensor(was) ? cast_to_type(mx, e->call.args[i], was)
                                           : cast_arg(mx, e->call.args[i], e->call.args[i]->type, want, NULL, !mixed);
    same_args &= args[i] == e->call.args[i];
  }
  /* nothing changes (the input call itself, typed): no copy to type again */
  bool unchanged = same_args && e == old && e->type;
  if (!mixed) return unchanged ? e : rebuild_call(mx, old, e, args, e->call.attrs);
  Attrs *attrs = e->call.attrs;
  if (callee->kind == EXPR_OP) {
    uint32_t f = op_traits_flags(callee->op.id);
    /* an unset out_dtype of a call whose result is not a float (conv2d of a
     * bool input is bool) stays unset: M there changed @main's result type
     * and its values (pass fuzzer, session 9 seed 8 input 5318) */
    DType rdt;
    bool float_result = !tensor_dtype(old, &rdt) || is_float(rdt);
    if ((f & OPF_MP_ALWAYS) && float_result) attrs = retype_attr(mx, attrs, "out_dtype");
    /* so does an unset dtype of full with an integer fill value (its dtype;
     * session 15 seed 131 input 269: full(2147483647) became float16) */
    if (op_get(callee->op.id)->attrs == op_get(OP_ZEROS)->attrs && float_result)
      attrs = retype_attr(mx, attrs, "dtype");
  }
  Expr *out = unchanged && attrs == e->call.attrs ? e : rebuild_call(mx, old, e, args, attrs);
  DType odt;
  if (old == mx->root && mx->keep_orig && mx->norig == 1 && tensor_dtype(out, &odt) && !dtype_eq(odt, mx->orig[0]))
    out = cached_cast(mx, out, odt, mx->orig[0]);
  return out;
}

static bool binds_or_uses_tparam(const Type *t, void *ctx) {
  return t->kind == TYPE_VAR || (t->kind == TYPE_FUNC && t->func.ntparams);
}

/* Does t bind or use a type parameter (a polymorphic function literal's
 * type)? Such a type is no annotation: its parameters are the literal's own
 * objects, and printed and read back they become new ones (the re-parsed
 * module was not --equal to the pass output: fuzz, from
 * passes/lambda_lift/shared_polymorphic_literal.relay). */
static bool mentions_tparams(const Type *t) {
  return type_any(t, binds_or_uses_tparam, NULL, TYPE_ANY_SOLVED | TYPE_ANY_MISSING);
}

static Expr *mp_pre(Rewriter *rw, Expr *e) {
  Mixed *mx = rw->ud;
  if (e->kind == EXPR_LET) {
    /* the value first, then the binder takes its type, then the body */
    Expr *v = rw_expr(rw, e->let.value);
    typed(mx, v);
    if (!mentions_tparams(v->type)) e->let.var->annot = v->type;
    e->let.var->type = v->type;
  }
  return NULL;
}

static Expr *mp_post(Rewriter *rw, Expr *old, Expr *e) {
  Mixed *mx = rw->ud;
  if (mx->failed) return e;
  restore_fixed_types(mx, old, e);
  switch (e->kind) {
  case EXPR_VAR:
    /* a let binder whose value changed type: its uses follow */
    if (e->var.var->type && e->type && !type_equal(type_solved(e->type), type_solved(e->var.var->type))) {
      Expr *v = build_var(mx->m, e->var.var, e->span);
      v->type = e->var.var->type;
      return v;
    }
    return e;
  case EXPR_CALL: return convert_call(mx, old, e);
  case EXPR_TUPLE:
    if (old == mx->root && mx->keep_orig && mx->norig == e->tuple.n) {
      Expr **fs = arena_alloc(mx->m->arena, (e->tuple.n ? e->tuple.n : 1) * sizeof *fs);
      bool same = true;
      for (uint32_t i = 0; i < e->tuple.n; i++) {
        DType dt;
        Expr *f = e->tuple.fields[i];
        fs[i] = typed(mx, f) && tensor_dtype(f, &dt) ? cached_cast(mx, f, dt, mx->orig[i]) : f;
        same &= fs[i] == f;
      }
      if (!same) {
        Expr *t = build_tuple(mx->m, fs, e->tuple.n, e->span);
        typed(mx, t);
        return t;
      }
    }
    return e;
  case EXPR_FN:
    /* a function literal keeps its type (its body cast back), like the
     * globals other than @main: a closure's callers expect that type */
    if (e != old && old->fn->body->type && typed(mx, e->fn->body)) {
      Expr *body = cast_to_type(mx, e->fn->body, old->fn->body->type);
      Function *f = arena_alloc(mx->m->arena, sizeof *f);
      *f = *e->fn;
      f->body = body;
      f->type = NULL;
      Expr *c = build_copy(mx->m, e);
      c->fn = f;
      c->type = NULL;
      return c;
    }
    return e;
  default: return e; /* typed when a type is needed (typed()) */
  }
}

static bool parse_mixed_type(const char *s, DType *dt, double *bound) {
  if (!dtype_parse(s, strlen(s), dt) || dt->lanes != 1) return false;
  if (dt->code == DT_BFLOAT && dt->bits == 16) *bound = 3.38953139e38;
  else if (dt->code == DT_FLOAT && dt->bits == 16) *bound = 65504.0;
  else if (dt->code == DT_FLOAT && (dt->bits == 32 || dt->bits == 64)) *bound = FLT_MAX;
  else return false;
  return true;
}

static bool convert_function(PassCtx *c, GlobalDef *g, Mixed *mx) {
  Function *fn = g->fn;
  /* @main's result type follows the conversion as in TVM; every other global
   * keeps its signature (relayc does better than TVM here: a changed return
   * type broke callers that pass the global where fn(float32) -> float32 is
   * expected) */
  bool keep_signature = strcmp(g->name, "main") != 0;
  const Type *old_body_type = fn->body->type;
  Type *old_fn_type = fn->type;
  if (!keep_signature) fn->ret_annot = NULL;
  mx->root = fn->body;
  mx->norig = 0;
  if (mx->keep_orig) {
    const Type *t = type_solved(fn->body->type);
    if (fn->body->kind == EXPR_TUPLE && t && t->kind == TYPE_TUPLE) {
      for (uint32_t i = 0; i < t->tuple.n && i < 64; i++) {
        const Type *f = type_solved(t->tuple.fields[i]);
        mx->orig[mx->norig++] = f && f->kind == TYPE_TENSOR ? f->tensor.dtype : F32;
      }
    } else if (fn->body->kind == EXPR_CALL && t && t->kind == TYPE_TENSOR) {
      mx->orig[mx->norig++] = t->tensor.dtype;
    }
  }
  for (uint32_t i = 0; i < mx->ncaches; i++) ptrmap_free(&mx->caches[i].map);
  memset(mx->caches, 0, sizeof mx->caches);
  mx->ncaches = 0;
  Rewriter rw;
  rw_init(&rw, c->m, c->d);
  rw.pre = mp_pre;
  rw.post = mp_post;
  rw.ud = mx;
  rw.mark_memo = true; /* hooks build, cast and type nodes (sema uses no Expr.mark) */
  bool ok = rw_function(&rw, fn) && !mx->failed;
  rw_fini(&rw);
  if (ok && keep_signature && old_body_type && typed(mx, fn->body)) {
    fn->body = cast_to_type(mx, fn->body, old_body_type);
    ok = !mx->failed;
  }
  /* the signature is unchanged, and later globals' new calls of this one are
   * typed against it (the Rewriter cleared it with the body) */
  if (ok && keep_signature && !fn->type) fn->type = old_fn_type;
  return ok;
}

bool pass_TO_MIXED_PRECISION(PassCtx *c) {
  Mixed mx = {.m = c->m, .d = c->d, .keep_orig = pass_opt_bool(c, "keep_orig_output_dtype")};
  const char *type = pass_opt_string(c, "mixed_precision_type");
  if (!parse_mixed_type(type, &mx.M, &mx.bound)) {
    diag_plain(c->d, DIAG_ERROR,
               "ToMixedPrecision: mixed_precision_type must be float16, bfloat16, float32 or float64, got \"%s\"", type);
    return false;
  }
  int64_t mode = pass_opt_int(c, "missing_op_mode");
  if (mode < 0 || mode > 2) {
    diag_plain(c->d, DIAG_ERROR, "ToMixedPrecision: missing_op_mode must be 0, 1 or 2, got %lld", (long long)mode);
    return false;
  }
  mx.missing = mem_calloc(op_count() + 1, sizeof *mx.missing);
  bool ok = true;
  for (uint32_t i = 0; i < c->m->ndefs && ok; i++) {
    GlobalDef *g = c->m->defs[i];
    if (!g->fn || fn_skipped_by_function_passes(g->fn)) continue;
    ok = convert_function(c, g, &mx);
  }
  bool any_missing = false;
  for (uint32_t id = 0; ok && id < op_count(); id++) {
    if (!mx.missing[id]) continue;
    any_missing = true;
    if (mode != 2)
      diag_plain(c->d, mode == 0 ? DIAG_ERROR : DIAG_WARNING,
                 "ToMixedPrecision: operator %s is in no mixed-precision list (ALWAYS/FOLLOW/NEVER); its %u call%s "
                 "treated as FOLLOW",
                 op_get((int32_t)id)->name, mx.missing[id], mx.missing[id] == 1 ? " is" : "s are");
  }
  if (ok && any_missing && mode == 0) ok = false;
  for (uint32_t i = 0; i < mx.ncaches; i++) ptrmap_free(&mx.caches[i].map);
  call_memo_free(&mx.calls);
  mem_free(mx.missing);
  return ok;
}
