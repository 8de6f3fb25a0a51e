/* ir/build.h — building expressions in passes: one constructor per node kind.
 *
 * Passes (transform/) and gradient rules (ops/gradients/) make new nodes with
 * these instead of filling structs by hand. Every builder takes the span the
 * new node stands for (usually the span of the node it replaces), so later
 * diagnostics still point into the user's file. New nodes carry no type
 * (Expr.type == NULL; build_typed/build_fn_typed below give one); the pass
 * pipeline re-types the module after each pass.
 * Operator calls are built by ops/op_call.h (they need the registry).
 *
 *     Var *v = build_fresh_var(m, "x", NULL, sp);             // %x_7
 *     Expr *e = build_let(m, v, value, build_var(m, v, sp), sp);
 */
#ifndef RELAYC_IR_BUILD_H
#define RELAYC_IR_BUILD_H

#include "ir/ast.h"

/* A use of `v` (a new EXPR_VAR leaf). */
static inline Expr *build_var(Module *m, Var *v, Span sp) {
  Expr *e = expr_new(m, EXPR_VAR, sp);
  e->var.name = v->name_; /* a fresh variable's prefix: a use's name is read only when it has no var */
  e->var.var = v;
  return e;
}
/* A new binder named `<prefix>_<N>`, N from a per-module counter (spec/passes.md
 * §1.2: pass-made let variables are x_N). `annot` may be NULL. The name is
 * spelled when first asked for (var_name; ir/fresh_name.h): `prefix` must live
 * as long as the module (a literal, or a string in its arena). */
Var *build_fresh_var(Module *m, const char *prefix, Type *annot, Span sp);
/* build_fresh_var with the number n (for a pass that draws the number from
 * m->next_fresh itself). */
Var *build_numbered_var(Module *m, const char *prefix, uint32_t n, Type *annot, Span sp);
/* The name `<prefix>_<n>` spelled in the module's arena. */
const char *build_numbered_name(Module *m, const char *prefix, uint32_t n);
/* A new binder with the same name hint and annotation as `v` (for copies of
 * binders, e.g. when a function body is duplicated). */
Var *build_var_like(Module *m, const Var *v);

static inline Expr *build_let(Module *m, Var *v, Expr *value, Expr *body, Span sp) {
  Expr *e = expr_new(m, EXPR_LET, sp);
  e->let.var = v;
  e->let.value = value;
  e->let.body = body;
  return e;
}
Expr *build_tuple(Module *m, Expr **fields, uint32_t n, Span sp);
static inline Expr *build_proj(Module *m, Expr *tuple, uint32_t index, Span sp) {
  Expr *e = expr_new(m, EXPR_PROJ, sp);
  e->proj.tuple = tuple;
  e->proj.index = index;
  return e;
}
Expr *build_if(Module *m, Expr *cond, Expr *then_, Expr *else_, Span sp);
Expr *build_call(Module *m, Expr *callee, Expr **args, uint32_t nargs, Span sp);
Expr *build_global(Module *m, GlobalDef *g, Span sp);
Expr *build_ctor(Module *m, Ctor *c, Span sp);
static inline Expr *build_ref_new(Module *m, Expr *init, Span sp) {
  Expr *e = expr_new(m, EXPR_REF_NEW, sp);
  e->ref.arg = init;
  return e;
}
static inline Expr *build_ref_read(Module *m, Expr *ref, Span sp) {
  Expr *e = expr_new(m, EXPR_REF_READ, sp);
  e->ref.arg = ref;
  return e;
}
static inline Expr *build_ref_write(Module *m, Expr *ref, Expr *value, Span sp) {
  Expr *e = expr_new(m, EXPR_REF_WRITE, sp);
  e->ref_write.ref = ref;
  e->ref_write.value = value;
  return e;
}
Expr *build_match(Module *m, Expr *scrut, Clause *clauses, uint32_t n, bool partial, Span sp);
/* A function literal. params are copied; `ret` and `attrs` may be NULL. */
Function *build_function(Module *m, Var **params, uint32_t nparams, Type *ret, Expr *body,
                         Attrs *attrs, Span sp);
Expr *build_fn(Module *m, Function *f, Span sp);

/* Typed building, for passes that give the nodes they build the types
 * inference would give them (the runner's incremental re-typing then takes
 * those nodes as typed leaves instead of inferring them again, sema/infer.c):
 * build_typed sets e's type and returns e. build_fn_type is the type of a
 * function literal whose parameters (Var.type) and body are typed:
 * fn[tparams](T1, ...) -> R, R its return annotation or else the body's
 * type; NULL when a part is untyped. build_fn_typed is build_fn with that
 * type (when there is one) on the literal and on f->type. A type given this
 * way must be exactly the one inference would give: when unsure, leave the
 * node untyped (RELAYC_VERIFY_RETYPE=1 checks it). */
Expr *build_typed(Expr *e, Type *t);
Type *build_fn_type(Module *m, const Function *f);
Expr *build_fn_typed(Module *m, Function *f, Span sp);

/* A constant tensor with `data` copied (nbytes = dtype size × elements). */
Expr *build_const(Module *m, DType dt, uint32_t ndim, const int64_t *shape, const void *data, Span sp);

/* A shallow copy of `e` (same kind, same children, type cleared), into which a
 * pass may write new children. Works for leaves and inner nodes alike. */
Expr *build_copy(Module *m, const Expr *e);

/* Types. A copy of `t` with type parameter ps[i] replaced by with[i]
 * (unchanged parts shared); a fresh type parameter named `name`; a TYPE_VAR
 * naming it. */
Type *build_type_subst(Module *m, Type *t, TypeParam *const *ps, Type *const *with, uint32_t n);
TypeParam *build_type_param(Module *m, const char *name);
Type *build_type_var(Module *m, TypeParam *p);
/* Instantiation by matching: for each type parameter ps[i] that `gen` mentions,
 * with[i] := the part of `conc` at its place (left alone when already set or
 * when the shapes differ). */
void build_type_match(const Type *gen, Type *conc, TypeParam *const *ps, Type **with, uint32_t n);
/* The ADT type `def[args...]`. */
Type *build_type_adt(Module *m, TypeDef *def, Type *const *args, uint32_t n);

/* A new global function `@name` appended to the module (name copied). */
GlobalDef *build_global_def(Module *m, const char *name, Function *fn, Span sp);
/* The global named `name`, or NULL. Linear in the number of globals. */
GlobalDef *module_find_global(const Module *m, const char *name);
/* A name `base`, `base1`, `base2`, ... not yet used by any global. */
const char *module_fresh_global_name(Module *m, const char *base);

#endif
