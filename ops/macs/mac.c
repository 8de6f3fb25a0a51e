/* ops/macs/mac.c — running a call's MAC rule, and the helpers rules use.
 * The rules themselves live in mac_rules.c; this file knows no operator. */
#include "ops/macs/mac.h"

#include <string.h>

#include "ir/attrs.h"

static const OpDef *call_op(const Expr *call) {
  if (!call || call->kind != EXPR_CALL || !call->call.fn || call->call.fn->kind != EXPR_OP) return NULL;
  return op_get(call->call.fn->op.id);
}

bool mac_has_rule(const Expr *call) {
  const OpDef *op = call_op(call);
  return op && op->macs;
}

int64_t mac_count(const Expr *call) {
  const OpDef *op = call_op(call);
  if (!op || !op->macs) return 0;
  enum { MAX_IN = 16 };
  const Type *in[MAX_IN] = {0};
  uint32_t n = call->call.nargs < MAX_IN ? call->call.nargs : MAX_IN;
  for (uint32_t i = 0; i < n; i++) in[i] = call->call.args[i] ? type_solved(call->call.args[i]->type) : NULL;
  MacCtx c = {call, in, n, type_solved(call->type)};
  if (!c.out) return MAC_UNKNOWN;
  int64_t v = op->macs(&c);
  return v < 0 ? MAC_UNKNOWN : v;
}

int32_t mac_shape(const Type *t, int64_t *dims, int32_t max) {
  t = type_solved(t);
  if (!t || t->kind != TYPE_TENSOR) return -1;
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    if (t->tensor.dims[i].kind != DIM_INT || t->tensor.dims[i].value < 0) return -1;
    if ((int32_t)i < max) dims[i] = t->tensor.dims[i].value;
  }
  return (int32_t)t->tensor.ndim;
}

int64_t mac_mul(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return MAC_UNKNOWN;
  return r;
}

int64_t mac_elements(const Type *t) {
  t = type_solved(t);
  if (!t || t->kind != TYPE_TENSOR) return MAC_UNKNOWN;
  int64_t n = 1;
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    if (t->tensor.dims[i].kind != DIM_INT) return MAC_UNKNOWN;
    n = mac_mul(n, t->tensor.dims[i].value);
  }
  return n;
}

static const AttrValue *attr(const MacCtx *c, const char *key) {
  const AttrValue *v = attrs_get(c->call->call.attrs, key);
  return v && v->kind != AV_NONE ? v : NULL;
}

int64_t mac_attr_int(const MacCtx *c, const char *key, int64_t dflt) {
  const AttrValue *v = attr(c, key);
  return v && v->kind == AV_INT ? v->i.value : dflt;
}

bool mac_attr_bool(const MacCtx *c, const char *key, bool dflt) {
  const AttrValue *v = attr(c, key);
  return v && v->kind == AV_BOOL ? v->b : v && v->kind == AV_INT ? v->i.value != 0 : dflt;
}

const char *mac_attr_str(const MacCtx *c, const char *key, const char *dflt, char *buf, size_t cap) {
  const AttrValue *v = attr(c, key);
  if (!v || v->kind != AV_STRING || v->s.len == 0 || v->s.len >= cap) return dflt;
  memcpy(buf, v->s.chars, v->s.len);
  buf[v->s.len] = 0;
  return buf;
}

int32_t mac_attr_ints(const MacCtx *c, const char *key, int64_t *out, int32_t max) {
  const AttrValue *v = attr(c, key);
  if (!v) return -1;
  if (v->kind == AV_INT) {
    if (max > 0) out[0] = v->i.value;
    return 1;
  }
  if (v->kind != AV_ARRAY) return -1;
  int32_t n = 0;
  for (uint32_t i = 0; i < v->arr.n && n < max; i++) {
    const AttrValue *e = v->arr.items[i];
    out[n++] = e->kind == AV_INT ? e->i.value : -1;
  }
  return n;
}
