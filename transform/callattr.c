/* transform/callattr.c — typed reads of call attributes (callattr.h). */
#include "transform/callattr.h"

#include <string.h>

#include "ir/attrs.h"

static const AttrValue *get(const Expr *call, const char *key) {
  return call && call->kind == EXPR_CALL ? attrs_get(call->call.attrs, key) : NULL;
}

int64_t cattr_int(const Expr *call, const char *key, int64_t dflt) { return attr_as_int(get(call, key), dflt); }

double cattr_double(const Expr *call, const char *key, double dflt) { return attr_as_double(get(call, key), dflt); }

bool cattr_bool(const Expr *call, const char *key, bool dflt) { return attr_as_bool(get(call, key), dflt); }

const char *cattr_str(const Expr *call, const char *key, const char *dflt) {
  return attr_as_str(get(call, key), dflt);
}

int cattr_ints(const Expr *call, const char *key, int64_t *out, int cap) {
  const AttrValue *v = get(call, key);
  if (!v) return -1;
  if (v->kind == AV_INT) {
    if (cap > 0) out[0] = v->i.value;
    return 1;
  }
  if (v->kind != AV_ARRAY) return -1;
  for (uint32_t i = 0; i < v->arr.n; i++) {
    const AttrValue *x = v->arr.items[i];
    if (x->kind != AV_INT) return -1;
    if ((int)i < cap) out[i] = x->i.value;
  }
  return (int)v->arr.n;
}

const char *cattr_text(const Expr *call, const char *key, char *buf, size_t cap) {
  const AttrValue *v = get(call, key);
  if (!v) {
    snprintf(buf, cap, "None");
    return buf;
  }
  FILE *f = fmemopen(buf, cap, "w");
  if (!f) {
    snprintf(buf, cap, "None");
    return buf;
  }
  attr_value_print(f, v);
  fclose(f);
  buf[cap - 1] = 0;
  return buf;
}

const char *cattr_format_ints(const int64_t *v, int n, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < n && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)v[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
  return buf;
}
