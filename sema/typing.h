/* sema/typing.h — the inference context shared by sema/unify.c, sema/solver.c,
 * sema/infer.c, sema/exhaust.c and sema/kinds.c (internal to sema/).
 *
 * Types under inference are ordinary AST Types plus TYPE_UVAR nodes: a uvar
 * with `link == NULL` is unbound; binding sets `link` (union-find; ty_find
 * compresses paths). `uvar.id` indexes TyCx.waits, the list of constraints
 * blocked on that uvar, so binding a uvar wakes exactly those constraints
 * (no global rescans). TyCx.err is the error type: it unifies silently with
 * everything, so one mistake is reported once.
 */
#ifndef RELAYC_SEMA_TYPING_H
#define RELAYC_SEMA_TYPING_H

#include "ir/ast.h"
#include "ir/mem.h"
#include "ops/registry.h"

typedef struct Constraint Constraint;

typedef struct Wait {
  Constraint *con;
  uint32_t epoch; /* the constraint's epoch when filed; stale once it differs */
  struct Wait *next;
} Wait;

typedef struct TyCx {
  Module *m;
  Diag *d;
  Arena *a;
  Type *err;                 /* the error type (a TYPE_INCOMPLETE sentinel) */
  Type *unknown;             /* printed for unbound uvars in messages */
  VEC(Wait *) waits;         /* by uvar id: constraints blocked on it */
  Wait *free_waits;          /* recycled list nodes */
  VEC(Constraint *) cons;    /* every constraint, in creation order */
  VEC(Constraint *) queue;   /* woken constraints to (re)run */
  size_t qhead;
  bool draining;
  uint32_t depth_errors;     /* "nested too deeply" already reported */
  Type *occurs_var, *occurs_in; /* the last unification the occurs check refused (the
                                 * variable would have to be a type containing it) */
} TyCx;

/* ---- sema/unify.c: uvars, unification, substitution, zonking ------------- */
void ty_init(TyCx *cx, Module *m, Diag *d);
void ty_fini(TyCx *cx);
Type *ty_fresh(TyCx *cx);
Type *ty_find(Type *t);               /* representative (path-compressing) */
bool ty_is_err(TyCx *cx, Type *t);
/* Unifies a and b; false on mismatch (no message: the caller reports). */
bool ty_unify(TyCx *cx, Type *a, Type *b);
/* ty_unify, forgetting an earlier refusal of the occurs check first, so that
 * ty_note_occurs after a failure speaks of this unification only. */
bool ty_unify_here(TyCx *cx, Type *a, Type *b);
/* After the error for a failed ty_unify_here: when the occurs check refused
 * it, a note at sp saying so ("expected _, found (_, _)" alone reads as if
 * the two should have unified). */
void ty_note_occurs(TyCx *cx, Span sp);
/* Copy of t with type parameter ps[i] replaced by with[i]. */
Type *ty_subst(TyCx *cx, Type *t, TypeParam **ps, Type **with, uint32_t n);
/* A polymorphic function type instantiated with fresh uvars (else t). */
Type *ty_instantiate(TyCx *cx, Type *t);
/* Annotation → inference type: `_` becomes a fresh uvar; kinds are checked
 * (errors reported, result err). */
Type *ty_from_annot(TyCx *cx, Type *annot);
/* Fully resolved copy without uvars. final=true: unbound uvars become
 * TYPE_INCOMPLETE and links are compressed to the result (end of inference);
 * false: for messages, nothing is mutated. */
Type *ty_zonk(TyCx *cx, Type *t, bool final);
const char *ty_str(TyCx *cx, Type *t);
Type *ty_tensor_scalar(TyCx *cx, DType dt);
Type *ty_func(TyCx *cx, Type **args, uint32_t n, Type *ret);
Type *ty_tuple(TyCx *cx, Type **fields, uint32_t n);

/* ---- sema/solver.c: relation constraints and the work-list ---------------- */
/* The constraint Rel(args[0..n-1], args[n]) of operator `op` at `sp`. Runs it
 * at once if possible; otherwise it waits. attrs may be NULL (defaults). */
/* exprs: the call's n argument expressions (relations may read constant
 * inputs, e.g. arange's bounds), or NULL when the operator is used as a value. */
void solver_add_rel(TyCx *cx, const OpDef *op, const Attrs *attrs, Expr *const *exprs, Type **args,
                    uint32_t n, Span sp);
/* out = tuple.index, deferred while the tuple type is unknown. */
void solver_add_proj(TyCx *cx, Type *tuple, uint32_t index, Type *out, Span sp);
/* Called by ty_unify when uvar `id` gets bound. */
void solver_wake(TyCx *cx, uint32_t id);
/* Runs woken constraints until none is left (re-entrant calls return). */
void solver_drain(TyCx *cx);
/* "cannot infer type" for what is still pending (root causes only). */
void solver_report_unsolved(TyCx *cx);

/* ---- sema/exhaust.c ------------------------------------------------------ */
/* Checks a `match`: non-exhaustive (unless partial) → error with a missing
 * pattern; unreachable clause → warning. */
void exhaust_check(TyCx *cx, Expr *match);

/* ---- sema/kinds.c -------------------------------------------------------- */
/* Kind check of a written type: ADT arity, nothing unresolved. Reports and
 * returns false. */
bool kind_check_type(TyCx *cx, const Type *t);
/* Constructor field types of every type definition. */
bool kind_check_typedefs(TyCx *cx);

#endif
