/* tests/fuzz/value_type.c — the pass fuzzer's type oracle: a run's value
 * against @main's checked result type (value_type.h).
 *
 * The walk is iterative (a million-element list is a million levels deep):
 * every part still to check is an Item in one append-only vector, so a
 * mismatch can name its path through the parents. An ADT type's arguments
 * are kept in an environment (Env) of resolved (type, environment) pairs, so
 * a constructor's field types are read under them without building types;
 * a list's tail reuses its head's environment. A walk past ITEM_BUDGET parts
 * (a cycle through ref cells, a huge structure) stops and accepts. */
#include "tests/fuzz/value_type.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/mem.h"
#include "ir/print.h"

#define ITEM_BUDGET (1u << 20)

/* A type under the environment its type variables are read in (0: none). */
typedef struct Scoped {
  const Type *t; /* NULL: anything (a free type variable) */
  uint32_t env;
} Scoped;

/* An ADT type's arguments: def's type parameters stand for args[first ..]. */
typedef struct Env {
  const TypeDef *def;
  uint32_t first;
} Env;

typedef struct Item {
  const Value *v;
  Scoped want;
  uint32_t parent; /* index of the enclosing part; the root is its own parent */
  int32_t field;   /* its index there (-1: a ref's contents) */
} Item;

typedef struct Walk {
  VEC(Item) items;
  VEC(Env) envs;   /* envs.data[0] is the empty environment */
  VEC(Scoped) args;
} Walk;

/* t with solved unification variables followed and type variables replaced by
 * what its environment says they stand for. */
static Scoped resolve(const Walk *w, Scoped s) {
  for (;;) {
    s.t = type_solved(s.t);
    if (!s.t || s.t->kind != TYPE_VAR) return s;
    const Env *e = &w->envs.data[s.env];
    uint32_t i = 0;
    while (e->def && i < e->def->ntparams && e->def->tparams[i] != s.t->var.param) i++;
    if (!e->def || i == e->def->ntparams) return (Scoped){NULL, 0};
    s = w->args.data[e->first + i];
  }
}

static bool same_scoped(Scoped a, Scoped b) { return a.t == b.t && a.env == b.env; }

/* The environment of ADT type s (its arguments resolved); s's own environment
 * when that one already says the same (a list's tail). */
static uint32_t adt_env(Walk *w, Scoped s) {
  const Type *t = s.t;
  uint32_t first = (uint32_t)w->args.len;
  for (uint32_t i = 0; i < t->adt.nargs; i++) vec_push(w->args, resolve(w, (Scoped){t->adt.args[i], s.env}));
  for (int k = 0; k < 2; k++) {
    uint32_t cand = k == 0 ? s.env : (uint32_t)w->envs.len - 1;
    const Env *e = &w->envs.data[cand];
    if (e->def != t->adt.def || e->def->ntparams != t->adt.nargs) continue;
    uint32_t i = 0;
    while (i < t->adt.nargs && same_scoped(w->args.data[e->first + i], w->args.data[first + i])) i++;
    if (i == t->adt.nargs) {
      w->args.len = first;
      return cand;
    }
  }
  vec_push(w->envs, ((Env){t->adt.def, first}));
  return (uint32_t)w->envs.len - 1;
}

static void push(Walk *w, const Value *v, Scoped want, uint32_t parent, int32_t field) {
  vec_push(w->items, ((Item){v, want, parent, field}));
}

static const char *kind_name(ValueKind k) {
  static const char *const names[] = {"no value", "a scalar", "a tensor", "a tuple", "an ADT value", "a closure", "a ref"};
  return k <= VK_REF ? names[k] : "?";
}

/* What value v is, for a message. */
static void describe_value(FILE *f, const Value *v) {
  char buf[32];
  switch (value_kind(*v)) {
  case VK_SCALAR: fprintf(f, "a scalar of %s", dtype_name(value_scalar_dtype(*v), buf)); break;
  case VK_TENSOR:
    fprintf(f, "a tensor of %s, shape (", dtype_name(v->t->dtype, buf));
    for (int32_t i = 0; i < v->t->ndim; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)v->t->shape[i]);
    fprintf(f, ")");
    break;
  case VK_TUPLE: fprintf(f, "a tuple of %u fields", value_tuple(*v)->n); break;
  case VK_ADT: fprintf(f, "%s (of type %s)", value_adt(*v)->ctor->name, value_adt(*v)->ctor->owner->name); break;
  default: fprintf(f, "%s", kind_name(value_kind(*v)));
  }
}

/* Whether tensor (or scalar) value v has tensor type t. */
static bool tensor_matches(const Value *v, const Type *t) {
  DType dt;
  int32_t ndim;
  const int64_t *shape = NULL;
  if (value_kind(*v) == VK_SCALAR) {
    dt = value_scalar_dtype(*v);
    ndim = 0;
  } else if (value_kind(*v) == VK_TENSOR) {
    dt = v->t->dtype;
    ndim = v->t->ndim;
    shape = v->t->shape;
  } else {
    return false;
  }
  if (!dtype_eq(dt, t->tensor.dtype) || (uint32_t)ndim != t->tensor.ndim) return false;
  for (int32_t i = 0; i < ndim; i++)
    if (t->tensor.dims[i].kind == DIM_INT && t->tensor.dims[i].value != shape[i]) return false;
  return true;
}

/* Checks item k; pushes its parts. False on a mismatch. */
static bool check_item(Walk *w, uint32_t k) {
  Item it = w->items.data[k];
  Scoped s = resolve(w, it.want);
  const Type *t = s.t;
  const Value *v = it.v;
  if (!t || t->kind == TYPE_INCOMPLETE || t->kind == TYPE_UVAR) return true;
  switch (t->kind) {
  case TYPE_TENSOR: return tensor_matches(v, t);
  case TYPE_TUPLE:
    if (value_kind(*v) != VK_TUPLE || value_tuple(*v)->n != t->tuple.n) return false;
    for (uint32_t i = 0; i < t->tuple.n; i++) push(w, &value_tuple(*v)->f[i], (Scoped){t->tuple.fields[i], s.env}, k, (int32_t)i);
    return true;
  case TYPE_ADT: {
    if (value_kind(*v) != VK_ADT || value_adt(*v)->ctor->owner != t->adt.def) return false;
    const Ctor *c = value_adt(*v)->ctor;
    uint32_t env = c->nfields ? adt_env(w, s) : 0;
    for (uint32_t i = 0; i < c->nfields; i++) push(w, &value_adt(*v)->f[i], (Scoped){c->fields[i], env}, k, (int32_t)i);
    return true;
  }
  case TYPE_FUNC: return value_kind(*v) == VK_CLOSURE;
  case TYPE_REF:
    if (value_kind(*v) != VK_REF) return false;
    push(w, &value_ref(*v)->v, (Scoped){t->ref.inner, s.env}, k, -1);
    return true;
  default: return true;
  }
}

/* Item k's path from the root: ".1" a tuple's field, ".Cons.0" a constructor's, ".ref" a cell's contents. */
static void print_path(FILE *f, const Walk *w, uint32_t k) {
  if (w->items.data[k].parent == k) return;
  const Item *it = &w->items.data[k];
  print_path(f, w, it->parent);
  const Value *pv = w->items.data[it->parent].v;
  if (it->field < 0) fprintf(f, ".ref");
  else if (value_kind(*pv) == VK_ADT) fprintf(f, ".%s.%d", value_adt(*pv)->ctor->name, it->field);
  else fprintf(f, ".%d", it->field);
}

static char *mismatch_text(const Walk *w, uint32_t k) {
  char *msg = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&msg, &n);
  fprintf(f, "@main's result");
  uint32_t depth = 0;
  for (uint32_t j = k; w->items.data[j].parent != j && depth < 64; j = w->items.data[j].parent) depth++;
  if (depth < 64) print_path(f, w, k);
  else fprintf(f, " (%s deep)", "over 64 levels");
  Scoped s = resolve(w, w->items.data[k].want);
  fprintf(f, " should have type ");
  print_type(f, s.t);
  fprintf(f, " but is ");
  describe_value(f, w->items.data[k].v);
  fclose(f);
  return msg;
}

const Type *main_result_type(const Function *main) {
  const Type *ft = type_solved(main->type);
  if (ft && ft->kind == TYPE_FUNC) return ft->func.ret;
  if (main->ret_annot) return main->ret_annot;
  return main->body ? main->body->type : NULL;
}

char *value_type_mismatch(const Value *v, const Type *t) {
  Walk w = {0};
  vec_push(w.envs, ((Env){NULL, 0}));
  push(&w, v, (Scoped){t, 0}, 0, 0);
  char *msg = NULL;
  /* depth first: the last part pushed is checked next, and its index is its place in the vector */
  VEC(uint32_t) todo = {0};
  vec_push(todo, 0u);
  while (todo.len && w.items.len < ITEM_BUDGET) {
    uint32_t k = todo.data[--todo.len];
    size_t before = w.items.len;
    if (!check_item(&w, k)) {
      msg = mismatch_text(&w, k);
      break;
    }
    for (size_t j = w.items.len; j > before; j--) vec_push(todo, (uint32_t)(j - 1));
  }
  vec_free(todo);
  vec_free(w.items);
  vec_free(w.envs);
  vec_free(w.args);
  return msg;
}
