/* sema/kinds.c — kind checking of written types.
 *
 * Relay 0.0.5 has one kind of type parameter, so a kind error is a type
 * constructor used at the wrong arity (`List` or `List[A, B]` when List takes
 * one parameter, a type parameter applied to arguments) or a name left
 * unresolved. Checked on every annotation when inference reads it and on the
 * constructor fields of every type definition.
 */
#include "sema/typing.h"

static bool check(TyCx *cx, const Type *t) {
  if (stack_exhausted()) {
    diag_error(cx->d, t->span, "type nested too deeply");
    return false;
  }
  bool ok = true;
  switch (t->kind) {
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++) ok &= check(cx, t->tuple.fields[i]);
    return ok;
  case TYPE_FUNC:
    for (uint32_t i = 0; i < t->func.nargs; i++) ok &= check(cx, t->func.args[i]);
    return check(cx, t->func.ret) && ok;
  case TYPE_REF:
    return check(cx, t->ref.inner);
  case TYPE_ADT: {
    const TypeDef *def = t->adt.def;
    if (def && t->adt.nargs != def->ntparams) {
      diag_error(cx->d, t->span, "type %s expects %u type argument%s but %u %s given", def->name,
                 def->ntparams, def->ntparams == 1 ? "" : "s", t->adt.nargs,
                 t->adt.nargs == 1 ? "was" : "were");
      ok = false;
    }
    for (uint32_t i = 0; i < t->adt.nargs; i++) ok &= check(cx, t->adt.args[i]);
    return ok;
  }
  case TYPE_NAME:
    diag_error(cx->d, t->span, "unresolved type name %s", t->name.name);
    return false;
  case TYPE_TENSOR:
    if (t->tensor.dtype.bits == 0) {
      diag_error(cx->d, t->span, "tensor type without a valid dtype");
      return false;
    }
    for (uint32_t i = 0; i < t->tensor.ndim; i++)
      if (t->tensor.dims[i].kind == DIM_INT && t->tensor.dims[i].value < 0) {
        diag_error(cx->d, t->span, "negative dimension %lld in a tensor type",
                   (long long)t->tensor.dims[i].value);
        return false;
      }
    return true;
  default:
    return true;
  }
}

bool kind_check_type(TyCx *cx, const Type *t) { return t ? check(cx, t) : true; }

bool kind_check_typedefs(TyCx *cx) {
  bool ok = true;
  for (uint32_t i = 0; i < cx->m->ntypes; i++) {
    const TypeDef *td = cx->m->types[i];
    for (uint32_t j = 0; j < td->nctors; j++)
      for (uint32_t k = 0; k < td->ctors[j]->nfields; k++)
        ok &= check(cx, td->ctors[j]->fields[k]);
  }
  return ok;
}
