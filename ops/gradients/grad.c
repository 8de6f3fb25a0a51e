/* ops/gradients/grad.c — the helpers gradient rules are written with (see grad.h).
 *
 * Thin wrappers over ops/op_call.h and ir/build.h that stamp the forward
 * call's span on every node, plus type and attribute queries on the forward
 * call. An operator a rule emits that is not registered (yet) is reported as
 * an error of the gradient, never an abort: rules may name operators that a
 * plugin or a later registry row provides.
 */
#include "ops/gradients/grad.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/build.h"
#include "ir/mem.h"
#include "ir/tensor_blob.h"
#include "ops/op_call.h"
#include "ops/op_ids.h"
#include "runtime/tensor.h"

static const char *op_name(GradCtx *c) {
  const OpDef *op = op_get(c->op);
  return op ? op->name : "operator";
}

bool gr_fail(GradCtx *c, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(c->d, c->sp, "gradient of %s: %s", op_name(c), msg);
  return false;
}

/* ------------------------------------------------------------------ building */

Expr *gr_let(GradCtx *c, Expr *e) {
  if (e->kind == EXPR_VAR || e->kind == EXPR_CONST) return e; /* already an atom */
  return c->bind ? c->bind(c, e) : e;
}

/* A placeholder for an operator that is not registered: reported once per rule
 * run; the pass sees the error count and gives up. */
static Expr *missing_op(GradCtx *c, const char *name) {
  gr_fail(c, "the rule needs the operator %s, which is not registered", name);
  return build_tuple(c->m, NULL, 0, c->sp);
}

/* ---- the per-pass cache of (name, attribute text) -> operator and normalised attributes */

typedef struct GradOpEntry {
  uint64_t hash;
  char *key;    /* name, NUL, attribute text ("" for none); NULL = empty slot */
  int32_t id;   /* registry id, -1 when the operator is not registered */
  Attrs *attrs; /* normalised, shared by every call built from this entry */
} GradOpEntry;

/* The entry last found for a (name, text) pair of pointers: rules pass
 * string literals, so the same two addresses come back call after call. The
 * entry's key is still compared (a rule may format text into a buffer it
 * reuses), but nothing is hashed. */
typedef struct GradOpRecent {
  const char *name, *text;
  size_t slot; /* index in slots */
} GradOpRecent;
#define GRAD_OP_RECENT 64
#define GRAD_OP_TEXTS 8

struct GradOpCache {
  GradOpEntry *slots;
  size_t cap, n; /* cap a power of two */
  GradOpRecent recent[GRAD_OP_RECENT]; /* name NULL: empty; cleared when slots move */
  /* the attribute-less calls of built-in operators (gr_call: gr_add, gr_unb, ...)
   * by operator id: their normalised attributes once the first is made */
  Attrs *plain[OP_BUILTIN_COUNT];
  bool plain_made[OP_BUILTIN_COUNT];
  const char *texts[GRAD_OP_TEXTS]; /* gr_fmt's latest texts (arena copies), a ring */
  size_t next_text;
};

GradOpCache *grad_op_cache_new(void) { return mem_calloc(1, sizeof(GradOpCache)); }

void grad_op_cache_free(GradOpCache *cache) {
  if (!cache) return;
  for (size_t i = 0; i < cache->cap; i++) mem_free(cache->slots[i].key);
  mem_free(cache->slots);
  mem_free(cache);
}

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return (h ^ 0xff) * 0x100000001b3ULL; /* the terminator: "a" + "bc" differs from "ab" + "c" */
}

static bool key_is(const GradOpEntry *k, const char *name, const char *text) {
  size_t n = strlen(name);
  return memcmp(k->key, name, n) == 0 && k->key[n] == 0 && strcmp(k->key + n + 1, text) == 0;
}

static GradOpEntry *cache_slot(GradOpCache *cache, uint64_t h, const char *name, const char *text) {
  for (size_t i = h & (cache->cap - 1);; i = (i + 1) & (cache->cap - 1)) {
    GradOpEntry *k = &cache->slots[i];
    if (!k->key || (k->hash == h && key_is(k, name, text))) return k;
  }
}

static void cache_grow(GradOpCache *cache) {
  memset(cache->recent, 0, sizeof cache->recent);
  GradOpEntry *old = cache->slots;
  size_t oldcap = cache->cap;
  cache->cap = oldcap ? 2 * oldcap : 64;
  cache->slots = mem_calloc(cache->cap, sizeof *cache->slots);
  for (size_t i = 0; i < oldcap; i++) {
    if (!old[i].key) continue;
    size_t j = old[i].hash & (cache->cap - 1);
    while (cache->slots[j].key) j = (j + 1) & (cache->cap - 1);
    cache->slots[j] = old[i];
  }
  mem_free(old);
}

static Expr *cache_hit_call(GradCtx *c, int32_t id, Attrs *attrs, Expr **args, uint32_t nargs);

/* A call of `name` with attributes from `text` through the cache: the first
 * call of a (name, text) is built by op_call, the rest share its attributes. */
static Expr *cached_call(GradCtx *c, const char *name, const char *text, Expr **args, uint32_t nargs) {
  GradOpCache *cache = c->ops;
  if (!text) text = "";
  if (2 * (cache->n + 1) > cache->cap) cache_grow(cache);
  GradOpRecent *r = &cache->recent[(((uintptr_t)name >> 3) ^ ((uintptr_t)text >> 1)) % GRAD_OP_RECENT];
  GradOpEntry *k = r->name == name && r->text == text ? &cache->slots[r->slot] : NULL;
  uint64_t h = 0;
  if (!k || !k->key || !key_is(k, name, text)) {
    h = fnv(fnv(0xcbf29ce484222325ULL, name), text);
    k = cache_slot(cache, h, name, text);
    *r = (GradOpRecent){name, text, (size_t)(k - cache->slots)};
  }
  if (!k->key) {
    size_t nl = strlen(name), tl = strlen(text);
    k->key = mem_malloc(nl + tl + 2);
    memcpy(k->key, name, nl + 1);
    memcpy(k->key + nl + 1, text, tl + 1);
    k->hash = h;
    cache->n++;
    k->id = op_lookup(name);
    if (k->id < 0) return missing_op(c, name);
    Expr *e = op_call(c->m, name, args, nargs, text, c->sp);
    k->attrs = e->call.attrs;
    if (!c->call) return e;
  }
  if (k->id < 0) return missing_op(c, name);
  return cache_hit_call(c, k->id, k->attrs, args, nargs);
}

/* The call as the pass wants it built (GradCtx.call), or untyped with its own callee node. */
static Expr *cache_hit_call(GradCtx *c, int32_t id, Attrs *attrs, Expr **args, uint32_t nargs) {
  if (c->call) return c->call(c, id, attrs, args, nargs);
  Expr *callee = expr_new(c->m, EXPR_OP, c->sp);
  callee->op.name = op_get(id)->name;
  callee->op.id = id;
  return expr_call(c->m, callee, args, nargs, attrs, c->sp);
}

/* The calls of the helpers below and of rules' GR_CALL: no attribute text, a
 * built-in operator known by id, so nothing is hashed or compared (the
 * (name, text) cache's look-up and key check were ~180 instructions a call,
 * a few million on a 10k-binding chain). What the first call's op_call
 * normalised is shared as cached_call shares it. */
Expr *gr_call(GradCtx *c, int32_t id, Expr **args, uint32_t nargs) {
  GradOpCache *cache = c->ops;
  if (!cache || id < 0 || id >= OP_BUILTIN_COUNT) return gr_op(c, op_get(id)->name, NULL, args, nargs);
  if (!cache->plain_made[id]) {
    Expr *e = op_call(c->m, op_get(id)->name, args, nargs, "", c->sp);
    cache->plain[id] = e->call.attrs;
    cache->plain_made[id] = true;
    if (!c->call) return e;
  }
  return cache_hit_call(c, id, cache->plain[id], args, nargs);
}

Expr *gr_op(GradCtx *c, const char *name, const char *attrs, Expr **args, uint32_t nargs) {
  if (c->ops) return cached_call(c, name, attrs, args, nargs);
  if (op_lookup(name) < 0) return missing_op(c, name);
  return op_call(c->m, name, args, nargs, attrs, c->sp);
}

Expr *gr_op_like(GradCtx *c, const char *name, const char *changes, Expr **args, uint32_t nargs) {
  if (op_lookup(name) < 0) return missing_op(c, name);
  Attrs *a = NULL;
  if (c->attrs) { /* a copy, items included: the forward call keeps its own default marks */
    a = arena_alloc(c->m->arena, sizeof *a);
    *a = *c->attrs;
    if (a->n) a->items = arena_memdup(c->m->arena, c->attrs->items, a->n * sizeof *a->items);
  }
  if (changes && *changes) {
    const char *err = NULL;
    Attrs *ch = attrs_parse_list(c->m, changes, false, &err);
    if (!ch) {
      fprintf(stderr, "relayc: internal error: malformed attribute text '%s' in a gradient rule\n", changes);
      abort();
    }
    for (uint32_t i = 0; i < ch->n; i++) a = attrs_with(c->m, a, ch->items[i].key, ch->items[i].value);
  }
  /* re-normalisation re-marks defaults against the new operator's schema */
  if (a)
    for (uint32_t i = 0; i < a->n; i++) a->items[i].is_default = false;
  return op_call_attrs(c->m, name, args, nargs, a, c->sp);
}

Expr *gr_add(GradCtx *c, Expr *a, Expr *b) { return GR_CALL(c, OP_ADD, a, b); }
Expr *gr_sub(GradCtx *c, Expr *a, Expr *b) { return GR_CALL(c, OP_SUBTRACT, a, b); }
Expr *gr_mul(GradCtx *c, Expr *a, Expr *b) { return GR_CALL(c, OP_MULTIPLY, a, b); }
Expr *gr_div(GradCtx *c, Expr *a, Expr *b) { return GR_CALL(c, OP_DIVIDE, a, b); }
Expr *gr_neg(GradCtx *c, Expr *a) { return GR_CALL(c, OP_NEGATIVE, a); }
Expr *gr_un(GradCtx *c, const char *name, Expr *a) { return gr_op(c, name, NULL, &a, 1); }
Expr *gr_where(GradCtx *c, Expr *cond, Expr *a, Expr *b) { return GR_CALL(c, OP_WHERE, cond, a, b); }
Expr *gr_zeros_like(GradCtx *c, Expr *a) { return GR_CALL(c, OP_ZEROS_LIKE, a); }
Expr *gr_ones_like(GradCtx *c, Expr *a) { return GR_CALL(c, OP_ONES_LIKE, a); }
Expr *gr_cast_like(GradCtx *c, Expr *a, Expr *like) { return GR_CALL(c, OP_CAST_LIKE, a, like); }
Expr *gr_reshape_like(GradCtx *c, Expr *a, Expr *like) { return GR_CALL(c, OP_RESHAPE_LIKE, a, like); }
Expr *gr_broadcast_to_like(GradCtx *c, Expr *a, Expr *like) { return GR_CALL(c, OP_BROADCAST_TO_LIKE, a, like); }
Expr *gr_proj(GradCtx *c, Expr *tuple, uint32_t i) { return build_proj(c->m, tuple, i, c->sp); }
Expr *gr_tuple(GradCtx *c, Expr **fields, uint32_t n) { return build_tuple(c->m, fields, n, c->sp); }

/* Floats through the runtime's encoder, which knows every float format a
 * constant may have (expr_scalar_float writes IEEE half bits for bfloat16:
 * sqrt's 0.5 was 3e-5). A dtype no constant can have (float42) is reported:
 * the gradient would print a module that does not re-parse. */
Expr *gr_const(GradCtx *c, double v, DType dt) {
  if (!tensor_blob_dtype_supported(dt)) {
    char name[32];
    gr_fail(c, "no constant of dtype %s can be built (no kernel stores it)", dtype_name(dt, name));
  }
  if (dtype_is_bool(dt)) return expr_scalar_bool(c->m, v != 0, c->sp);
  if (!dtype_is_float(dt)) return expr_scalar_int(c->m, dt, (int64_t)v, c->sp);
  uint64_t bits = 0;
  if (tensor_blob_dtype_supported(dt)) tensor_store_f64(dt, &bits, v);
  return build_const(c->m, dt, 0, NULL, &bits, c->sp);
}

Expr *gr_tensor_const(GradCtx *c, DType dt, uint32_t ndim, const int64_t *shape, const void *data) {
  return build_const(c->m, dt, ndim, shape, data, c->sp);
}

void *gr_table(GradCtx *c, int64_t rows, int64_t cols, size_t esize) {
  uint64_t n = 0, bytes = 0;
  if (rows < 0 || cols < 0 || __builtin_mul_overflow((uint64_t)rows, (uint64_t)cols, &n) ||
      __builtin_mul_overflow(n, (uint64_t)esize, &bytes) || bytes > GRAD_MAX_TABLE_BYTES) {
    gr_fail(c, "the rule's %lld x %lld constant table (%zu-byte entries) exceeds the %llu MiB a rule may build",
            (long long)rows, (long long)cols, esize, (unsigned long long)(GRAD_MAX_TABLE_BYTES >> 20));
    return NULL;
  }
  void *p = arena_alloc(c->m->arena, bytes ? (size_t)bytes : 1);
  memset(p, 0, (size_t)bytes);
  return p;
}

bool gr_pieces(GradCtx *c, int64_t n, const char *what) {
  if (n >= 0 && n <= GRAD_MAX_PIECES) return true;
  if (n < 0) return gr_fail(c, "the rule would build more %s than an int64 counts, one by one; a rule may build %d",
                            what, GRAD_MAX_PIECES);
  return gr_fail(c, "the rule would build %lld %s one by one, more than the %d a rule may build", (long long)n, what,
                 GRAD_MAX_PIECES);
}

Expr *gr_scalar(GradCtx *c, double v, int i) { return gr_const(c, v, gr_dtype(c, i)); }

/* Always collapse_sum_like, even where x already has the result's shape: TVM's
 * rules do, and its tests compare the printed gradient (test_pass_partial_eval's
 * test_ad). `--run` drops the identity ones (FuseDenseTranspose). */
Expr *gr_unb(GradCtx *c, Expr *e, uint32_t i) { return GR_CALL(c, OP_COLLAPSE_SUM_LIKE, e, c->x[i]); }

Expr *gr_sum(GradCtx *c, Expr *e, const int64_t *axes, uint32_t naxes, bool keepdims) {
  const char *ax = naxes ? gr_ints_text(c, axes, naxes) : "None";
  return GR_OP(c, "sum", gr_fmt(c, "axis=%s, keepdims=%s", ax, keepdims ? "True" : "False"), e);
}

Expr *gr_expand_axes(GradCtx *c, Expr *e, const int64_t *axes, uint32_t naxes) {
  for (uint32_t k = 0; k < naxes; k++)
    e = GR_OP(c, "expand_dims", gr_fmt(c, "axis=%lld", (long long)axes[k]), e);
  return e;
}

/* -------------------------------------------------------------------- types */

const Type *gr_tensor(GradCtx *c, int i) {
  const Type *t = type_solved(i < 0 ? c->out_t : c->xt[i]);
  return t && t->kind == TYPE_TENSOR ? t : NULL;
}

uint32_t gr_rank(GradCtx *c, int i) {
  const Type *t = gr_tensor(c, i);
  return t ? t->tensor.ndim : 0;
}

DType gr_dtype(GradCtx *c, int i) {
  const Type *t = gr_tensor(c, i);
  return t ? t->tensor.dtype : DT_F32;
}

bool gr_shape(GradCtx *c, int i, int64_t *dims) {
  const Type *t = gr_tensor(c, i);
  if (!t) return gr_fail(c, "%s is not a tensor", i < 0 ? "the result" : "an input");
  if (t->tensor.ndim > GRAD_MAX_RANK) return gr_fail(c, "rank %u is above %d", t->tensor.ndim, GRAD_MAX_RANK);
  for (uint32_t k = 0; k < t->tensor.ndim; k++) {
    if (t->tensor.dims[k].kind != DIM_INT) {
      if (i < 0) return gr_fail(c, "the rule needs the static shape of the result; extent %u is not known", k);
      return gr_fail(c, "the rule needs the static shape of input %d; extent %u is not known", i, k);
    }
    dims[k] = t->tensor.dims[k].value;
  }
  return true;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

uint32_t gr_reduce_axes(GradCtx *c, uint32_t rank, int64_t *axes) {
  int64_t given[GRAD_MAX_RANK];
  int32_t n = gr_attr_ints(c, "axis", given, GRAD_MAX_RANK);
  bool exclude = gr_attr_bool(c, "exclude", false);
  bool sel[GRAD_MAX_RANK] = {0};
  if (n < 0) {
    for (uint32_t k = 0; k < rank; k++) sel[k] = true;
    exclude = false;
  } else {
    for (int32_t k = 0; k < n && k < GRAD_MAX_RANK; k++) {
      int64_t a = given[k] < 0 ? given[k] + (int64_t)rank : given[k];
      if (a >= 0 && a < (int64_t)rank) sel[a] = true;
    }
  }
  uint32_t m = 0;
  for (uint32_t k = 0; k < rank; k++)
    if (sel[k] != exclude) axes[m++] = k;
  qsort(axes, m, sizeof *axes, cmp_i64);
  return m;
}

/* --------------------------------------------------------------- attributes */

const AttrValue *gr_attr(GradCtx *c, const char *key) {
  const AttrValue *v = c->attrs ? attrs_get(c->attrs, key) : NULL;
  if (v) return v;
  const OpDef *op = op_get(c->op);
  for (uint32_t i = 0; op && i < op->nattrs; i++) {
    const AttrField *f = &op->attrs[i];
    if (strcmp(f->name, key) != 0) continue;
    const char *text = f->default_text ? f->default_text : f->py_default;
    return text ? attr_value_parse(c->m, text) : NULL;
  }
  return NULL;
}

int64_t gr_attr_int(GradCtx *c, const char *key, int64_t dflt) {
  const AttrValue *v = gr_attr(c, key);
  if (v && v->kind == AV_FLOAT) return (int64_t)v->f.value; /* as kernel_attr_int: a float, truncated */
  return attr_as_int(v, dflt);
}

double gr_attr_double(GradCtx *c, const char *key, double dflt) { return attr_as_double(gr_attr(c, key), dflt); }

bool gr_attr_bool(GradCtx *c, const char *key, bool dflt) { return attr_as_bool(gr_attr(c, key), dflt); }

const char *gr_attr_str(GradCtx *c, const char *key, const char *dflt) { return attr_as_str(gr_attr(c, key), dflt); }

int32_t gr_attr_ints(GradCtx *c, const char *key, int64_t *out, int32_t cap) {
  const AttrValue *v = gr_attr(c, key);
  if (!v) return -1;
  if (v->kind == AV_INT) {
    if (cap > 0) out[0] = v->i.value;
    return 1;
  }
  if (v->kind != AV_ARRAY) return -1;
  for (uint32_t i = 0; i < v->arr.n && (int32_t)i < cap; i++) {
    const AttrValue *e = v->arr.items[i];
    out[i] = e->kind == AV_INT ? e->i.value : e->kind == AV_BOOL ? e->b : -1;
  }
  return (int32_t)v->arr.n;
}

const char *gr_ints_text(GradCtx *c, const int64_t *v, uint32_t n) {
  size_t cap = 4 + (size_t)n * 24, len = 0;
  char *buf = arena_alloc(c->m->arena, cap);
  len += (size_t)snprintf(buf + len, cap - len, "[");
  for (uint32_t i = 0; i < n; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)v[i]);
  snprintf(buf + len, cap - len, "]");
  return buf;
}

const char *gr_pad_width(GradCtx *c, uint32_t rank, const int64_t (*w)[2]) {
  size_t cap = 16 + (size_t)rank * 48, len = 0;
  char *buf = arena_alloc(c->m->arena, cap);
  len += (size_t)snprintf(buf + len, cap - len, "pad_width=[");
  for (uint32_t i = 0; i < rank; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s[%lld, %lld]", i ? ", " : "", (long long)w[i][0], (long long)w[i][1]);
  snprintf(buf + len, cap - len, "]");
  return buf;
}

Expr *gr_interleave_zeros(GradCtx *c, Expr *e, uint32_t axis, uint32_t rank, int64_t *shape, int64_t s, Expr *zero) {
  if (s == 1 || shape[axis] == 0) return e;
  e = GR_OP(c, "expand_dims", gr_fmt(c, "axis=%u", axis + 1), e);
  int64_t w[GRAD_MAX_RANK + 1][2] = {{0}};
  w[axis + 1][1] = s - 1;
  e = GR_OP(c, "nn.pad", gr_pad_width(c, rank + 1, w), e, zero ? zero : gr_scalar(c, 0, 0));
  shape[axis] *= s;
  return GR_OP(c, "reshape", gr_fmt(c, "newshape=%s", gr_ints_text(c, shape, rank)), e);
}

Expr *gr_dilate(GradCtx *c, Expr *e, uint32_t axis, uint32_t rank, int64_t *shape, int64_t s) {
  if (s == 1 || shape[axis] == 0) return e;
  e = gr_interleave_zeros(c, e, axis, rank, shape, s, NULL);
  shape[axis] -= s - 1;
  return GR_OP(c, "strided_slice", gr_fmt(c, "begin=[0], end=[%lld], axes=[%u]", (long long)shape[axis], axis), e);
}

/* The arena copy of text s (n bytes): with a pass's cache, the copy made for
 * an equal text among the last GRAD_OP_TEXTS ones, so a rule formatting the
 * same attributes call after call (softmax's "axis=[1], keepdims=True") hands
 * cached_call the same pointer (found without hashing) and takes no arena. */
static const char *gr_text(GradCtx *c, const char *s, size_t n) {
  GradOpCache *cache = c->ops;
  for (size_t i = 0; cache && i < GRAD_OP_TEXTS; i++)
    if (cache->texts[i] && strcmp(cache->texts[i], s) == 0) return cache->texts[i];
  char *t = arena_strndup(c->m->arena, s, n);
  if (cache) cache->texts[cache->next_text++ % GRAD_OP_TEXTS] = t;
  return t;
}

const char *gr_fmt(GradCtx *c, const char *fmt, ...) {
  char small[256]; /* most texts: formatted once, here */
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof small) return gr_text(c, small, (size_t)n);
  char *buf = arena_alloc(c->m->arena, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(buf, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return buf;
}
