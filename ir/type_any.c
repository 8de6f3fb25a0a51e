/* ir/type_any.c — the part-by-part walk behind type_any (see type_any.h).
 * Recursive, one frame per nesting level, bounded by stack_exhausted(). */
#include "ir/type_any.h"

#include "ir/diag.h"

static bool any_of(Type *const *ts, uint32_t n, TypePartFn hit, void *ctx, unsigned how) {
  for (uint32_t i = 0; i < n; i++)
    if (type_any(ts[i], hit, ctx, how)) return true;
  return false;
}

/* A part that keeps a type from being ground (type_ground). */
static bool not_ground_part(const Type *t, void *tvars_ok) {
  bool ok = *(const bool *)tvars_ok;
  switch (t->kind) {
  case TYPE_TENSOR: case TYPE_TUPLE: case TYPE_ADT: case TYPE_REF: return false;
  case TYPE_FUNC: return t->func.ntparams && !ok;
  case TYPE_VAR: return !ok;
  default: return true;
  }
}

bool type_ground(const Type *t, bool tvars_ok) { return !type_any(t, not_ground_part, &tvars_ok, TYPE_ANY_MISSING); }

bool type_any(const Type *t, TypePartFn hit, void *ctx, unsigned how) {
  if (how & TYPE_ANY_SOLVED) t = type_solved(t);
  if (!t || stack_exhausted()) return (how & TYPE_ANY_MISSING) != 0;
  if (hit(t, ctx)) return true;
  switch (t->kind) {
  case TYPE_TUPLE: return any_of(t->tuple.fields, t->tuple.n, hit, ctx, how);
  case TYPE_FUNC:
    return any_of(t->func.args, t->func.nargs, hit, ctx, how) || type_any(t->func.ret, hit, ctx, how);
  case TYPE_ADT: return any_of(t->adt.args, t->adt.nargs, hit, ctx, how);
  case TYPE_REF: return type_any(t->ref.inner, hit, ctx, how);
  default: return false;
  }
}
