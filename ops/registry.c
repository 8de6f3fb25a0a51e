/* ops/registry.c — the operator registry: table, lookup, suggestions, and
 * normalisation of call attributes against an operator's schema.
 *
 * Built-in operators come from two X-macro tables (ops/op_table.def: one row
 * per operator; ops/op_schemas.def: one row per attribute class) expanded
 * here into static const data. On first use (pthread_once) the registry
 * builds an open-addressing hash table name → id and parses every schema
 * default once into a process-wide arena; op_register (plugins) appends to
 * both. After that the registry is read-only: register plugins before
 * compiling, not concurrently with lookups.
 *
 * Invariants: ids are dense (built-ins 0..OP_BUILTIN_COUNT-1, then plugins in
 * registration order); an OpDef pointer returned by op_get stays valid for
 * the life of the process; cached default values are shared by every module
 * and must be treated as immutable by passes (they live in the registry's
 * arena, not a module's).
 */
#include "ops/registry.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ops/op_ids.h"
#include "ops/relations/type_rel.h"

/* ------------------------------------------------------------ static tables */

#define F(name, type, dflt) {#name, type, dflt, NULL},
#define R(name, type, py) {#name, type, NULL, py},
#define SCHEMA(tag, ...) static const AttrField schema_##tag[] = {__VA_ARGS__{NULL, AT_ANY, NULL, NULL}};
static const AttrField schema_none[] = {{NULL, AT_ANY, NULL, NULL}};
#include "ops/op_schemas.def"
#undef SCHEMA
#undef R
#undef F

/* Each schema array ends with a {NULL} terminator that is not counted. */
#define SCHEMA_LEN(tag) ((uint32_t)(sizeof schema_##tag / sizeof schema_##tag[0] - 1))

/* Kernel column: `int kernel_ID(KernelCtx *)` defined in some ops/kernels/k_*.c file,
 * NULL (weak, undefined) until one is written. See ops/kernels/kernel.h, WIRING. */
#define OP(id, name, inputs, schema, rel) int kernel_##id(KernelCtx *c) __attribute__((weak));
#include "ops/op_table.def"
#undef OP

/* Gradient column: `bool grad_ID(GradCtx *)` defined in some ops/gradients/grad_*.c
 * file, NULL (weak, undefined) for an operator without a rule. See ops/gradients/grad.h. */
#define OP(id, name, inputs, schema, rel) bool grad_##id(GradCtx *c) __attribute__((weak));
#include "ops/op_table.def"
#undef OP

/* MAC column: `int64_t macs_ID(const MacCtx *)` in ops/macs/mac_rules.c, NULL
 * (weak, undefined) for operators whose work is not counted. See ops/macs/mac.h. */
#define OP(id, name, inputs, schema, rel) int64_t macs_##id(const MacCtx *c) __attribute__((weak));
#include "ops/op_table.def"
#undef OP

static const OpDef builtin_ops[] = {
#define OP(id, name, inputs, schema, rel) \
  {name, inputs, schema_##schema, SCHEMA_LEN(schema), rel, kernel_##id, grad_##id, macs_##id},
#include "ops/op_table.def"
#undef OP
};

static_assert(sizeof builtin_ops / sizeof builtin_ops[0] == OP_BUILTIN_COUNT,
              "op_table.def expansions disagree on the operator count");

/* ------------------------------------------------------------ registry state */

/* Parsed defaults of one operator: for field i, the value used when the call
 * omits it (the default, else the py value, else NULL) and whether that value
 * is the schema default (not printed). */
typedef struct OpDefaults {
  AttrValue **fill;
  AttrValue **dflt; /* parsed default_text, NULL for required fields */
} OpDefaults;

static struct {
  pthread_once_t once;
  Module *store;          /* owns parsed defaults and plugin copies */
  Arena *store_arena;     /* store->arena, held here too: the store lives inside its own arena's
                             chunk, so without a pointer to the arena itself a leak checker sees
                             the chunks only through an interior pointer ("possibly lost") */
  OpDef **plugins;        /* plugin definitions (stable pointers) */
  uint32_t nplugins, cap_plugins;
  OpDefaults *defaults;   /* by id */
  uint32_t cap_defaults;
  int32_t *slots;         /* hash table of ids, -1 = empty; size is a power of two */
  uint32_t nslots;
} reg = {.once = PTHREAD_ONCE_INIT};

static uint32_t hash_name(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static uint32_t total_count(void) { return OP_BUILTIN_COUNT + reg.nplugins; }

static const OpDef *def_at(uint32_t id) {
  return id < OP_BUILTIN_COUNT ? &builtin_ops[id] : reg.plugins[id - OP_BUILTIN_COUNT];
}

/* Slot of `name` in the hash table, or of the empty slot where it would go. */
static uint32_t find_slot(const char *name) {
  uint32_t mask = reg.nslots - 1;
  for (uint32_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
    int32_t id = reg.slots[i];
    if (id < 0 || strcmp(def_at((uint32_t)id)->name, name) == 0) return i;
  }
}

/* Rebuilds the hash table so that it holds `count` names at load <= 1/2. */
static void rehash(uint32_t count) {
  uint32_t n = 64;
  while (n < count * 2) n *= 2;
  mem_free(reg.slots);
  reg.slots = mem_malloc(n * sizeof *reg.slots);
  reg.nslots = n;
  for (uint32_t i = 0; i < n; i++) reg.slots[i] = -1;
  for (uint32_t id = 0; id < total_count(); id++) reg.slots[find_slot(def_at(id)->name)] = (int32_t)id;
}

/* Parses the defaults of `def` into `out`; false if a text is malformed. */
static bool parse_defaults(const OpDef *def, OpDefaults *out) {
  out->fill = def->nattrs ? arena_alloc(reg.store->arena, def->nattrs * sizeof *out->fill) : NULL;
  out->dflt = def->nattrs ? arena_alloc(reg.store->arena, def->nattrs * sizeof *out->dflt) : NULL;
  for (uint32_t i = 0; i < def->nattrs; i++) {
    const AttrField *f = &def->attrs[i];
    const char *text = f->default_text ? f->default_text : f->py_default;
    if (!f->name) return false;
    if (!text) continue;
    AttrValue *v = attr_value_parse(reg.store, text);
    if (!v) return false;
    out->fill[i] = v;
    if (f->default_text) out->dflt[i] = v;
  }
  return true;
}

static void grow_defaults(uint32_t need) {
  if (need <= reg.cap_defaults) return;
  uint32_t cap = reg.cap_defaults ? reg.cap_defaults : 256;
  while (cap < need) cap *= 2;
  reg.defaults = mem_realloc(reg.defaults, cap * sizeof *reg.defaults);
  reg.cap_defaults = cap;
}

static void registry_init(void) {
  reg.store = module_new(NULL);
  reg.store_arena = reg.store->arena;
  grow_defaults(OP_BUILTIN_COUNT);
  for (uint32_t id = 0; id < OP_BUILTIN_COUNT; id++)
    RELAYC_ASSERT(parse_defaults(&builtin_ops[id], &reg.defaults[id]));
  rehash(OP_BUILTIN_COUNT);
  for (uint32_t id = 0; id < OP_BUILTIN_COUNT; id++)
    RELAYC_ASSERT(reg.slots[find_slot(builtin_ops[id].name)] == (int32_t)id); /* no duplicates */
}

static void ensure_init(void) { pthread_once(&reg.once, registry_init); }

/* ------------------------------------------------------------------ lookup */

int32_t op_lookup(const char *name) {
  ensure_init();
  if (!name) return -1;
  return reg.slots[find_slot(name)];
}

const OpDef *op_get(int32_t id) {
  ensure_init();
  if (id < 0 || (uint32_t)id >= total_count()) return NULL;
  return def_at((uint32_t)id);
}

uint32_t op_count(void) {
  ensure_init();
  return total_count();
}

uint32_t op_builtin_count(void) { return OP_BUILTIN_COUNT; }

int32_t op_register(const OpDef *def) {
  ensure_init();
  if (!def || !def->name || !*def->name || def->num_inputs < 0) return -1;
  if (def->nattrs && !def->attrs) return -1;
  if (reg.slots[find_slot(def->name)] >= 0) return -1;
  uint32_t id = total_count();
  grow_defaults(id + 1);
  OpDef *copy = arena_alloc(reg.store->arena, sizeof *copy);
  *copy = *def;
  if (!parse_defaults(copy, &reg.defaults[id])) return -1;
  if (reg.nplugins == reg.cap_plugins) {
    reg.cap_plugins = reg.cap_plugins ? reg.cap_plugins * 2 : 16;
    reg.plugins = mem_realloc(reg.plugins, reg.cap_plugins * sizeof *reg.plugins);
  }
  reg.plugins[reg.nplugins++] = copy;
  if (total_count() * 2 > reg.nslots) rehash(total_count());
  else reg.slots[find_slot(copy->name)] = (int32_t)id;
  return (int32_t)id;
}

/* ------------------------------------------------------------- suggestions */

/* How many edits a suggestion may be away from what was written. */
static size_t suggest_cap(const char *name) {
  size_t n = strlen(name);
  return n <= 3 ? 1 : n <= 8 ? 2 : 3;
}

static const char *tail_of(const char *name) {
  const char *dot = strrchr(name, '.');
  return dot ? dot + 1 : name;
}

const char *op_suggest(const char *name) {
  ensure_init();
  if (!name || !*name) return NULL;
  /* Same name in another namespace ("relu" → nn.relu, "nn.add" → add). */
  for (uint32_t id = 0; id < total_count(); id++) {
    const char *cand = def_at(id)->name;
    if (strcmp(cand, name) != 0 && strcmp(tail_of(cand), tail_of(name)) == 0) return cand;
  }
  size_t cap = suggest_cap(name), best = cap + 1;
  const char *found = NULL;
  for (uint32_t id = 0; id < total_count(); id++) {
    const char *cand = def_at(id)->name;
    size_t dist = edit_distance(name, cand, cap);
    if (dist < best) {
      best = dist;
      found = cand;
    }
  }
  return found;
}

/* The schema field closest to `key`, or NULL. */
static const char *suggest_field(const OpDef *op, const char *key) {
  size_t cap = suggest_cap(key), best = cap + 1;
  const char *found = NULL;
  for (uint32_t i = 0; i < op->nattrs; i++) {
    size_t dist = edit_distance(key, op->attrs[i].name, cap);
    if (dist < best) {
      best = dist;
      found = op->attrs[i].name;
    }
  }
  return found;
}

/* ---------------------------------------------------------- normalisation */

/* Everything one normalisation needs to report an error. */
typedef struct NormCx {
  Module *m;
  Diag *d;
  const OpDef *op;
  const AttrField *field;
} NormCx;

static const char *kind_name(const AttrValue *v) {
  switch (v->kind) {
  case AV_INT: return "an integer";
  case AV_FLOAT: return "a float";
  case AV_BOOL: return "a boolean";
  case AV_STRING: return "a string";
  case AV_NONE: return "None";
  case AV_ARRAY: return "an array";
  case AV_META: return "a meta reference";
  case AV_ANY: return "`?`";
  case AV_EXPR: return "an expression";
  }
  return "a value";
}

static const char *expected_name(AttrFieldType t) {
  switch (t) {
  case AT_INT: return "an integer";
  case AT_DOUBLE: return "a float";
  case AT_BOOL: return "True or False";
  case AT_STRING: return "a string";
  case AT_DTYPE: return "a dtype string";
  case AT_INT_ARRAY: return "an integer array";
  case AT_INT_OR_ARRAY: return "an integer or an integer array";
  case AT_NESTED_ARRAY: return "an array of integer arrays";
  case AT_DOUBLE_ARRAY: return "a float array";
  case AT_VDEVICE: return "a meta[VirtualDevice][i] reference or None";
  case AT_ANY: return "any value";
  }
  return "a value";
}

static bool wrong_kind(NormCx *cx, const AttrValue *v) {
  diag_error(cx->d, v->span, "attribute \"%s\" of %s must be %s, not %s", cx->field->name,
             cx->op->name, expected_name(cx->field->type), kind_name(v));
  return false;
}

static bool wrong_element(NormCx *cx, const AttrValue *v, const char *what) {
  diag_error(cx->d, v->span, "attribute \"%s\" of %s must be %s; this element is %s, not %s",
             cx->field->name, cx->op->name, expected_name(cx->field->type), kind_name(v), what);
  return false;
}

/* None is accepted where the field's default or Python value is None. */
static bool none_allowed(const AttrField *f) {
  return f->type == AT_ANY || (f->default_text && strcmp(f->default_text, "None") == 0) ||
         (f->py_default && strcmp(f->py_default, "None") == 0);
}

/* Coerces an integer-like value to an int32 immediate (int64 when out of range). */
static AttrValue *as_int(NormCx *cx, AttrValue *v) {
  int64_t x;
  if (v->kind == AV_INT) x = v->i.value;
  else if (v->kind == AV_BOOL) x = v->b;
  else return NULL;
  AttrValue *r = attr_value_new(cx->m, AV_INT, v->span);
  r->i.value = x;
  r->i.dtype = x >= INT32_MIN && x <= INT32_MAX ? DT_I32 : DT_I64;
  return r;
}

static AttrValue *as_double(NormCx *cx, AttrValue *v) {
  double x;
  if (v->kind == AV_FLOAT) x = v->f.value;
  else if (v->kind == AV_INT) x = (double)v->i.value;
  else return NULL;
  AttrValue *r = attr_value_new(cx->m, AV_FLOAT, v->span);
  r->f.value = x;
  r->f.dtype = DT_F32;
  return r;
}

/* An int array element: an integer (or bool), None, `?` or a meta reference.
 * Array elements are IntImms in TVM and keep an explicit int64 suffix
 * (`shape=[1i64, 2i64]` gives int64 dimensions); scalar int fields do not. */
static AttrValue *int_element(NormCx *cx, AttrValue *v) {
  if (v->kind == AV_NONE || v->kind == AV_ANY || v->kind == AV_META) return v;
  if (v->kind == AV_INT && dtype_eq(v->i.dtype, DT_I64)) return v;
  AttrValue *r = as_int(cx, v);
  if (!r) wrong_element(cx, v, "an integer");
  return r;
}

static AttrValue *double_element(NormCx *cx, AttrValue *v) {
  if (v->kind == AV_META) return v;
  AttrValue *r = as_double(cx, v);
  if (!r) wrong_element(cx, v, "a float");
  return r;
}

/* A copy of array `v` with every element passed through `elem` (NULL on error). */
static AttrValue *map_array(NormCx *cx, AttrValue *v, AttrValue *(*elem)(NormCx *, AttrValue *)) {
  AttrValue *r = attr_value_new(cx->m, AV_ARRAY, v->span);
  r->arr.n = v->arr.n;
  r->arr.items = v->arr.n ? arena_alloc(cx->m->arena, v->arr.n * sizeof *r->arr.items) : NULL;
  bool ok = true;
  for (uint32_t i = 0; i < v->arr.n; i++) {
    r->arr.items[i] = elem(cx, v->arr.items[i]);
    ok &= r->arr.items[i] != NULL;
  }
  return ok ? r : NULL;
}

static AttrValue *int_array_elem(NormCx *cx, AttrValue *v) {
  if (v->kind == AV_META) return v;
  if (v->kind != AV_ARRAY) {
    wrong_element(cx, v, "an integer array");
    return NULL;
  }
  return map_array(cx, v, int_element);
}

static AttrValue *check_dtype(NormCx *cx, AttrValue *v) {
  DType dt;
  if (v->s.len == 0) return v;
  if (!dtype_parse(v->s.chars, v->s.len, &dt)) {
    diag_error(cx->d, v->span, "invalid dtype \"%.*s\" for attribute \"%s\" of %s", (int)v->s.len,
               v->s.chars, cx->field->name, cx->op->name);
    return NULL;
  }
  char buf[32];
  dtype_name(dt, buf);
  AttrValue *r = attr_value_new(cx->m, AV_STRING, v->span);
  r->s.len = (uint32_t)strlen(buf);
  r->s.chars = arena_strdup(cx->m->arena, buf);
  return r;
}

/* A device attribute: meta[VirtualDevice][i] or None (TVM's parser wants a
 * VirtualDevice object there and rejects anything else, as its Python rejects
 * an unknown device name). */
static AttrValue *virtual_device(NormCx *cx, AttrValue *v) {
  if (v->kind == AV_NONE || (v->kind == AV_META && strcmp(v->meta.key, "VirtualDevice") == 0)) return v;
  if (v->kind == AV_META)
    diag_error(cx->d, v->span, "attribute \"%s\" of %s must be %s, not meta[%s][%u]", cx->field->name, cx->op->name,
               expected_name(cx->field->type), v->meta.key, v->meta.index);
  else
    wrong_kind(cx, v);
  return NULL;
}

/* Checks `v` against the current field's type; returns the coerced value, or
 * NULL after reporting an error. */
static AttrValue *coerce(NormCx *cx, AttrValue *v) {
  const AttrField *f = cx->field;
  if (f->type == AT_VDEVICE) return virtual_device(cx, v);
  if (f->type == AT_ANY || v->kind == AV_META) return v;
  AttrValue *r = NULL;
  if (v->kind == AV_NONE) {
    if (none_allowed(f)) return v;
    wrong_kind(cx, v);
    return NULL;
  }
  switch (f->type) {
  case AT_INT: r = as_int(cx, v); break;
  case AT_DOUBLE: r = as_double(cx, v); break;
  case AT_BOOL:
    if (v->kind == AV_BOOL) r = v;
    else if (v->kind == AV_INT && (v->i.value == 0 || v->i.value == 1)) {
      r = attr_value_new(cx->m, AV_BOOL, v->span);
      r->b = v->i.value != 0;
    }
    break;
  case AT_STRING: r = v->kind == AV_STRING ? v : NULL; break;
  case AT_DTYPE:
    if (v->kind == AV_STRING) return check_dtype(cx, v);
    break;
  case AT_INT_OR_ARRAY:
    if (v->kind != AV_ARRAY) {
      r = as_int(cx, v);
      break;
    }
    return map_array(cx, v, int_element);
  case AT_INT_ARRAY:
    if (v->kind == AV_ARRAY) return map_array(cx, v, int_element);
    break;
  case AT_NESTED_ARRAY:
    if (v->kind == AV_ARRAY) return map_array(cx, v, int_array_elem);
    break;
  case AT_DOUBLE_ARRAY:
    if (v->kind == AV_ARRAY) return map_array(cx, v, double_element);
    break;
  case AT_VDEVICE:
  case AT_ANY: return v;
  }
  if (!r) wrong_kind(cx, v);
  return r;
}

static int32_t field_index(const OpDef *op, const char *key) {
  for (uint32_t i = 0; i < op->nattrs; i++)
    if (strcmp(op->attrs[i].name, key) == 0) return (int32_t)i;
  return -1;
}

/* The cached defaults of `op` if it is a registered definition (by identity or
 * by name with the same schema), else defaults parsed now into `m`. */
static OpDefaults defaults_for(Module *m, const OpDef *op) {
  int32_t id = op_lookup(op->name);
  if (id >= 0 && def_at((uint32_t)id)->attrs == op->attrs && def_at((uint32_t)id)->nattrs == op->nattrs)
    return reg.defaults[id];
  OpDefaults out = {NULL, NULL};
  out.fill = op->nattrs ? arena_alloc(m->arena, op->nattrs * sizeof *out.fill) : NULL;
  out.dflt = op->nattrs ? arena_alloc(m->arena, op->nattrs * sizeof *out.dflt) : NULL;
  for (uint32_t i = 0; i < op->nattrs; i++) {
    const AttrField *f = &op->attrs[i];
    const char *text = f->default_text ? f->default_text : f->py_default;
    out.fill[i] = text ? attr_value_parse(m, text) : NULL;
    if (f->default_text) out.dflt[i] = out.fill[i];
  }
  return out;
}

static void report_unknown(NormCx *cx, const Attr *a) {
  diag_error(cx->d, a->span, "unknown attribute \"%s\" for operator %s", a->key, cx->op->name);
  const char *s = suggest_field(cx->op, a->key);
  if (s) diag_note(cx->d, a->span, "did you mean \"%s\"?", s);
  else if (cx->op->nattrs == 0) diag_note(cx->d, a->span, "%s takes no attributes", cx->op->name);
}

/* Places the written attributes into `slots` (by schema index), checking and
 * coercing each; false if any was wrong. */
static bool place_written(NormCx *cx, const Attrs *in, Attr *slots, const Attr **given) {
  bool ok = true;
  for (uint32_t k = 0; in && k < in->n; k++) {
    const Attr *a = &in->items[k];
    int32_t i = field_index(cx->op, a->key);
    if (i < 0) {
      report_unknown(cx, a);
      ok = false;
      continue;
    }
    if (given[i]) {
      diag_error(cx->d, a->span, "duplicate attribute \"%s\" for operator %s", a->key, cx->op->name);
      diag_note(cx->d, given[i]->span, "first given here");
      ok = false;
      continue;
    }
    given[i] = a;
    cx->field = &cx->op->attrs[i];
    AttrValue *v = a->value ? coerce(cx, a->value) : NULL;
    if (!v) {
      ok = false;
      continue;
    }
    slots[i] = (Attr){cx->field->name, v, a->span, false};
  }
  return ok;
}

bool op_attrs_normalize(Module *m, const OpDef *op, Attrs **attrs, Span call_span, Diag *d) {
  RELAYC_ASSERT(m && op && attrs);
  Attrs *in = *attrs;
  if (in && in->meta_key) return true;
  if (op->nattrs == 0 && (!in || in->n == 0)) return true;
  NormCx cx = {m, d, op, NULL};
  OpDefaults defs = defaults_for(m, op);
  Attr *slots = arena_alloc(m->arena, (op->nattrs ? op->nattrs : 1) * sizeof *slots);
  const Attr *given_small[16] = {0};
  const Attr **given = op->nattrs <= 16 ? given_small : mem_calloc(op->nattrs, sizeof *given);
  bool ok = place_written(&cx, in, slots, given);
  Span at = span_make(call_span.hi, call_span.hi);
  for (uint32_t i = 0; i < op->nattrs; i++) {
    const AttrField *f = &op->attrs[i];
    if (given[i]) {
      if (slots[i].value && defs.dflt[i]) slots[i].is_default = attr_value_equal(slots[i].value, defs.dflt[i]);
      continue;
    }
    if (!defs.fill[i]) {
      diag_error(d, call_span, "%s: missing required attribute \"%s\"", op->name, f->name);
      ok = false;
      continue;
    }
    slots[i] = (Attr){f->name, defs.fill[i], at, defs.dflt[i] != NULL};
  }
  if (given != given_small) mem_free(given);
  if (!ok) return false;
  Attrs *out = arena_alloc(m->arena, sizeof *out);
  out->items = slots;
  out->n = op->nattrs;
  *attrs = out;
  return true;
}
