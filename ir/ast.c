/* ir/ast.c — AST node constructors and small helpers (see ast.h). */
#include "ir/ast.h"
#include "ir/mem.h"

#include <stddef.h>
#include <string.h>

Module *module_new(Source *src) {
  Arena *a = arena_new();
  Module *m = arena_alloc(a, sizeof *m);
  m->arena = a;
  m->src = src;
  return m;
}

void module_free(Module *m) {
  if (m) arena_free(m->arena);
}

/* expr_new and expr_payload_size are inline (ast.h): every node of a pass's
 * output is made there. The layout facts they rely on: */
_Static_assert(offsetof(Expr, constant) == 24, "Expr header is 24 bytes");
_Static_assert(sizeof(((Expr *)0)->var) <= 16 && sizeof(((Expr *)0)->op) <= 16 &&
                   sizeof(((Expr *)0)->global) <= 16 && sizeof(((Expr *)0)->tuple) <= 16 &&
                   sizeof(((Expr *)0)->meta) <= 16 && sizeof(((Expr *)0)->graph_ref) <= 16 &&
                   sizeof(((Expr *)0)->proj) <= 16 && sizeof(((Expr *)0)->fn) <= 16 &&
                   sizeof(((Expr *)0)->ref) <= 16 && sizeof(((Expr *)0)->ref_write) <= 16 &&
                   sizeof(((Expr *)0)->free_var) <= 16 && sizeof(((Expr *)0)->name) <= 16 &&
                   sizeof(((Expr *)0)->ctor) <= 16 && sizeof(((Expr *)0)->constant) <= 16,
               "the kinds expr_payload_size gives 16 bytes (and the unit tuple a failed node becomes) fit them");
_Static_assert(sizeof(((Expr *)0)->let) <= 24 && sizeof(((Expr *)0)->if_) <= 24 && sizeof(((Expr *)0)->match) <= 24 &&
                   sizeof(((Expr *)0)->graph_bind) <= 24,
               "the kinds expr_payload_size gives 24 bytes fit them");

Type *type_new(Module *m, TypeKind kind, Span sp) {
  Type *t = arena_alloc(m->arena, sizeof *t);
  t->kind = kind;
  t->span = sp;
  return t;
}


Var *var_new_with_attrs(Module *m, const char *name, Span sp, Type *annot, Attrs *attrs) {
  if (!attrs) return var_new(m, name, sp, annot);
  Var *v = var_alloc(m, name, sp, annot, sizeof attrs);
  v->has_attrs = true;
  *(Attrs **)(v + 1) = attrs;
  return v;
}

TypeParam *type_param_new(Module *m, const char *name, Span sp) {
  TypeParam *p = arena_alloc(m->arena, sizeof *p);
  p->name = name;
  p->span = sp;
  p->id = m->next_id++;
  return p;
}

Pattern *pattern_new(Module *m, PatternKind kind, Span sp) {
  Pattern *p = arena_alloc(m->arena, sizeof *p);
  p->kind = kind;
  p->span = sp;
  return p;
}

AttrValue *attr_value_new(Module *m, AttrValueKind kind, Span sp) {
  AttrValue *v = arena_alloc(m->arena, sizeof *v);
  v->kind = kind;
  v->span = sp;
  return v;
}

Type *type_tensor(Module *m, DType dt, uint32_t ndim, const int64_t *shape) {
  Type *t = type_new(m, TYPE_TENSOR, (Span){0, 0});
  t->tensor.dtype = dt;
  t->tensor.ndim = ndim;
  t->tensor.dims = arena_alloc(m->arena, (ndim ? ndim : 1) * sizeof(Dim));
  for (uint32_t i = 0; i < ndim; i++)
    t->tensor.dims[i] = (Dim){DIM_INT, DT_I32, shape[i]};
  return t;
}

Type *type_scalar(Module *m, DType dt) { return type_tensor(m, dt, 0, NULL); }

static Expr *scalar_const(Module *m, DType dt, Span sp) {
  Expr *e = expr_new(m, EXPR_CONST, sp);
  ConstTensor *c = arena_alloc(m->arena, sizeof *c);
  c->dtype = dt;
  c->ndim = 0;
  c->nbytes = dtype_size(dt);
  c->data = arena_alloc_aligned(m->arena, c->nbytes < 8 ? 8 : c->nbytes, 64);
  c->meta_index = -1;
  e->constant = c;
  return e;
}

Expr *expr_scalar_int(Module *m, DType dt, int64_t v, Span sp) {
  Expr *e = scalar_const(m, dt, sp);
  void *d = e->constant->data;
  switch (dt.bits) {
  case 8: *(int8_t *)d = (int8_t)v; break;
  case 16: *(int16_t *)d = (int16_t)v; break;
  case 32: *(int32_t *)d = (int32_t)v; break;
  default: *(int64_t *)d = v; break;
  }
  return e;
}

Expr *expr_scalar_float(Module *m, DType dt, double v, Span sp) {
  Expr *e = scalar_const(m, dt, sp);
  void *d = e->constant->data;
  if (dt.bits == 16) *(uint16_t *)d = float_to_half((float)v);
  else if (dt.bits == 32) *(float *)d = (float)v;
  else *(double *)d = v;
  return e;
}

Expr *expr_scalar_bool(Module *m, bool v, Span sp) {
  Expr *e = scalar_const(m, DT_BOOL_T, sp);
  *(uint8_t *)e->constant->data = v;
  return e;
}

Expr *expr_op(Module *m, const char *name, Span sp) {
  Expr *e = expr_new(m, EXPR_OP, sp);
  e->op.name = name;
  e->op.id = -1;
  return e;
}

double const_scalar_as_double(const ConstTensor *c) {
  const void *d = c->data;
  DType t = c->dtype;
  if (t.code == DT_FLOAT) {
    if (t.bits == 16) return half_to_float(*(const uint16_t *)d);
    if (t.bits == 32) return *(const float *)d;
    return *(const double *)d;
  }
  return (double)const_scalar_as_int(c);
}

int64_t const_scalar_as_int(const ConstTensor *c) {
  const void *d = c->data;
  DType t = c->dtype;
  if (t.code == DT_FLOAT) return (int64_t)const_scalar_as_double(c);
  bool s = t.code == DT_INT;
  switch (t.bits) {
  /* each branch converts on its own: a ?: would promote both sides to unsigned */
  case 1: case 8:
    if (s) return *(const int8_t *)d;
    return *(const uint8_t *)d;
  case 16:
    if (s) return *(const int16_t *)d;
    return *(const uint16_t *)d;
  case 32:
    if (s) return *(const int32_t *)d;
    return *(const uint32_t *)d;
  default: return *(const int64_t *)d;
  }
}

const char *expr_kind_name(ExprKind k) {
  static const char *names[EXPR_KIND_COUNT] = {
      "constant", "variable", "global", "operator", "constructor", "call", "tuple",
      "projection", "function", "let", "if", "match", "ref", "ref_read", "ref_write",
      "name", "graph binding", "graph variable", "meta reference", "free_var",
  };
  return (unsigned)k < EXPR_KIND_COUNT ? names[k] : "?";
}
