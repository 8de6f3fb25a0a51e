/* transform/float64.c — rewrite a module to compute in float64 (see float64.h).
 *
 * Works on what the user wrote (annotations, constants, dtype attributes) and
 * lets inference derive the rest, so it needs no per-operator knowledge:
 * relations propagate float64 from the converted leaves. Attribute values of
 * the registry's AT_DTYPE fields are replaced (the Attrs item gets a new
 * value; attribute lists are not shared between calls of a parsed module).
 * Types are mutated in place; they belong to this module's arena.
 */
#include "transform/float64.h"

#include <string.h>

#include "ir/attrs.h"
#include "ir/walk.h"
#include "ops/registry.h"
#include "sema/infer.h"

static bool narrow_float(DType t) {
  return (t.code == DT_FLOAT && t.bits < 64) || t.code == DT_BFLOAT;
}

static void type64(Type *t, int depth) {
  if (!t || depth > 10000) return;
  switch (t->kind) {
  case TYPE_TENSOR:
    if (narrow_float(t->tensor.dtype)) t->tensor.dtype = DT_F64;
    break;
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++) type64(t->tuple.fields[i], depth + 1);
    break;
  case TYPE_FUNC:
    for (uint32_t i = 0; i < t->func.nargs; i++) type64(t->func.args[i], depth + 1);
    type64(t->func.ret, depth + 1);
    break;
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++) type64(t->adt.args[i], depth + 1);
    break;
  case TYPE_REF: type64(t->ref.inner, depth + 1); break;
  case TYPE_NAME:
    for (uint32_t i = 0; i < t->name.nargs; i++) type64(t->name.args[i], depth + 1);
    break;
  default: break;
  }
}

static void var64(Var *v) {
  if (v) type64(v->annot, 0);
}

static void const64(Module *m, ConstTensor *c) {
  if (!narrow_float(c->dtype)) return;
  uint64_t n = 1;
  for (int32_t i = 0; i < c->ndim; i++) n *= (uint64_t)c->shape[i];
  double *out = arena_alloc_aligned(m->arena, n ? n * sizeof(double) : 8, 64);
  for (uint64_t i = 0; i < n; i++) {
    if (c->dtype.code == DT_FLOAT && c->dtype.bits == 32) out[i] = ((const float *)c->data)[i];
    else if (c->dtype.code == DT_FLOAT && c->dtype.bits == 16) out[i] = half_to_float(((const uint16_t *)c->data)[i]);
    else { /* bfloat16: the high half of a float32 */
      uint32_t bits = (uint32_t)((const uint16_t *)c->data)[i] << 16;
      float f;
      memcpy(&f, &bits, sizeof f);
      out[i] = f;
    }
  }
  c->data = out;
  c->dtype = DT_F64;
  c->nbytes = n * sizeof(double);
}

static void attrs64(Module *m, const OpDef *op, Attrs *as) {
  if (!op || !as) return;
  for (uint32_t i = 0; i < as->n; i++) {
    AttrValue *v = as->items[i].value;
    if (!v || v->kind != AV_STRING) continue;
    bool is_dtype = false;
    for (uint32_t f = 0; f < op->nattrs; f++)
      if (op->attrs[f].type == AT_DTYPE && strcmp(op->attrs[f].name, as->items[i].key) == 0) is_dtype = true;
    DType dt;
    if (is_dtype && dtype_parse(v->s.chars, v->s.len, &dt) && narrow_float(dt)) {
      as->items[i].value = attr_string(m, "float64");
      as->items[i].is_default = false;
    }
  }
}

static void pattern_var64(Var *v, void *ud) {
  (void)ud;
  var64(v);
}

static void function64(Function *f) {
  for (uint32_t i = 0; i < f->nparams; i++) var64(f->params[i]);
  type64(f->ret_annot, 0);
}

static void node64(Expr *e, void *ud) {
  Module *m = ud;
  switch (e->kind) {
  case EXPR_CONST: const64(m, e->constant); break;
  case EXPR_FN: function64(e->fn); break;
  case EXPR_LET: var64(e->let.var); break;
  case EXPR_MATCH:
    for (uint32_t i = 0; i < e->match.nclauses; i++) pattern_each_var(e->match.clauses[i].pattern, pattern_var64, NULL);
    break;
  case EXPR_CALL:
    if (e->call.fn->kind == EXPR_OP) attrs64(m, op_get(e->call.fn->op.id), e->call.attrs);
    break;
  default: break;
  }
}

bool f64_convert_module(Module *m, Diag *d) {
  for (uint32_t i = 0; i < m->ntypes; i++)
    for (uint32_t j = 0; j < m->types[i]->nctors; j++)
      for (uint32_t k = 0; k < m->types[i]->ctors[j]->nfields; k++) type64(m->types[i]->ctors[j]->fields[k], 0);
  for (uint32_t i = 0; i < m->ndefs; i++) {
    Function *f = m->defs[i]->fn;
    if (!f) continue;
    function64(f);
    walk_post_order(f->body, true, node64, m);
  }
  if (m->expr) walk_post_order(m->expr, true, node64, m);
  infer_clear(m);
  return infer_module(m, d);
}
