/* sema/typeof.c — types of pass-built nodes from their children (see typeof.h).
 *
 * Each rule mirrors what sema/infer.c does for that kind of node when every
 * child already has a ground type, so a full inference gives the same type
 * (RELAYC_VERIFY_RETYPE checks it): a tuple's type is the tuple of its
 * fields', a projection's the field's, a let's its body's, a function
 * literal's fn(param types) -> body type, a call of a monomorphic function
 * its result type when the arguments match, an operator call's the result of
 * its relation. Anything less certain is left untyped: the runner's
 * re-typing infers it. Trade-off: ref_write, if and calls compare types
 * structurally (type_equal) so a node whose children disagree is never
 * given a type that would hide the error from the re-typing.
 */
#include "sema/typeof.h"

#include <string.h>

#include "ir/build.h"
#include "ir/diag.h"
#include "ir/equal.h"
#include "ir/mem.h"
#include "ir/type_any.h"
#include "ops/op_traits.h"
#include "ops/registry.h"
#include "ops/relations/type_rel.h"
#include "sema/call_memo.h"
#include "sema/infer.h"

bool typeof_ground(const Type *t) { return type_ground(t, false); }

bool typeof_known(const Type *t) { return type_ground(t, true); }

/* ------------------------------------------------------------ shared types
 *
 * One object per distinct type the TypeofCx builds: a pass gives millions of
 * nodes a handful of types (the Gradient's pair `(Tensor[(1, 16), float32],
 * ref(Tensor[(1, 16), float32]))`, its backpropagators' `fn () -> ()`), and a
 * fresh object each was a fifth of its allocations. Tensors (integer or `?`
 * extents) are shared by value; tuples, refs, monomorphic function types and
 * ADT types (LazyGradientInit's `GradCell[T]`) by the identity of their
 * (shared) parts and data type. Open addressing over one array
 * of Type pointers; a type's hash is computed from its parts. */

static uint64_t tmix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ULL + (h >> 29); }

static bool shareable_tensor(const Type *t) {
  for (uint32_t i = 0; i < t->tensor.ndim; i++)
    if (t->tensor.dims[i].kind == DIM_SYM) return false;
  return true;
}

static uint64_t tensor_hash(const Type *t) {
  uint64_t h = tmix(0xcbf29ce484222325ULL, TYPE_TENSOR);
  h = tmix(h, (uint64_t)t->tensor.dtype.code | (uint64_t)t->tensor.dtype.bits << 8 | (uint64_t)t->tensor.dtype.lanes << 16);
  h = tmix(h, t->tensor.ndim);
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    const Dim *d = &t->tensor.dims[i];
    h = tmix(h, d->kind == DIM_ANY ? UINT64_MAX : (uint64_t)d->value ^ (uint64_t)d->dtype.bits << 56);
  }
  return h;
}

/* type_equal on two shareable tensors (ir/equal.c dim_eq: `?` matches `?`
 * only here, since both are shared by value). */
static bool tensor_same(const Type *a, const Type *b) {
  if (!dtype_eq(a->tensor.dtype, b->tensor.dtype) || a->tensor.ndim != b->tensor.ndim) return false;
  for (uint32_t i = 0; i < a->tensor.ndim; i++) {
    const Dim *x = &a->tensor.dims[i], *y = &b->tensor.dims[i];
    if (x->kind != y->kind || (x->kind == DIM_INT && (x->value != y->value || !dtype_eq(x->dtype, y->dtype))))
      return false;
  }
  return true;
}

/* A composite type's key: its kind and parts (a function type's arguments, then its result). */
typedef struct Parts {
  TypeKind kind;
  TypeDef *def; /* TYPE_ADT: the data type (its arguments are the parts) */
  Type *const *p;
  uint32_t n;
} Parts;

static uint64_t parts_hash(const Parts *k) {
  uint64_t h = tmix(tmix(0xcbf29ce484222325ULL, k->kind), k->n);
  if (k->def) h = tmix(h, (uint64_t)(uintptr_t)k->def);
  for (uint32_t i = 0; i < k->n; i++) h = tmix(h, (uint64_t)(uintptr_t)k->p[i]);
  return h;
}

static bool parts_of(const Type *t, const Parts *k) {
  if (t->kind != k->kind) return false;
  switch (t->kind) {
  case TYPE_TUPLE:
    if (t->tuple.n != k->n) return false;
    for (uint32_t i = 0; i < k->n; i++)
      if (t->tuple.fields[i] != k->p[i]) return false;
    return true;
  case TYPE_REF: return k->n == 1 && t->ref.inner == k->p[0];
  case TYPE_ADT:
    if (t->adt.def != k->def || t->adt.nargs != k->n) return false;
    for (uint32_t i = 0; i < k->n; i++)
      if (t->adt.args[i] != k->p[i]) return false;
    return true;
  case TYPE_FUNC:
    if (t->func.ntparams || t->func.nargs + 1 != k->n || t->func.ret != k->p[k->n - 1]) return false;
    for (uint32_t i = 0; i + 1 < k->n; i++)
      if (t->func.args[i] != k->p[i]) return false;
    return true;
  default: return false;
  }
}

static uint64_t shared_hash(const Type *t) {
  if (t->kind == TYPE_TENSOR) return tensor_hash(t);
  Parts k = {t->kind, NULL, NULL, 0};
  Type *one[1];
  switch (t->kind) {
  case TYPE_TUPLE: k.p = t->tuple.fields, k.n = t->tuple.n; break;
  case TYPE_REF: one[0] = t->ref.inner, k.p = one, k.n = 1; break;
  case TYPE_ADT: k.def = t->adt.def, k.p = t->adt.args, k.n = t->adt.nargs; break;
  default: { /* TYPE_FUNC: hash as parts_hash over args + ret, without copying */
    uint64_t h = tmix(tmix(0xcbf29ce484222325ULL, TYPE_FUNC), t->func.nargs + 1);
    for (uint32_t i = 0; i < t->func.nargs; i++) h = tmix(h, (uint64_t)(uintptr_t)t->func.args[i]);
    return tmix(h, (uint64_t)(uintptr_t)t->func.ret);
  }
  }
  return parts_hash(&k);
}

static void shared_grow(TypeofCx *tc) {
  Type **old = tc->shared;
  size_t oldcap = tc->capshared;
  tc->capshared = oldcap ? 2 * oldcap : 256;
  tc->shared = mem_calloc(tc->capshared, sizeof *tc->shared);
  for (size_t i = 0; i < oldcap; i++) {
    if (!old[i]) continue;
    size_t j = shared_hash(old[i]) & (tc->capshared - 1);
    while (tc->shared[j]) j = (j + 1) & (tc->capshared - 1);
    tc->shared[j] = old[i];
  }
  mem_free(old);
}

/* The slot of the shared type equal to the tensor t or with parts k (one of
 * them NULL), or the empty slot where it goes. */
static Type **shared_slot(TypeofCx *tc, const Type *tensor, const Parts *k, uint64_t h) {
  if (2 * (tc->nshared + 1) > tc->capshared) shared_grow(tc);
  for (size_t i = h & (tc->capshared - 1);; i = (i + 1) & (tc->capshared - 1)) {
    Type *t = tc->shared[i];
    if (!t) return &tc->shared[i];
    if (tensor ? t->kind == TYPE_TENSOR && tensor_same(t, tensor) : parts_of(t, k)) return &tc->shared[i];
  }
}

/* canon() remembered by address: the types a pass uses are a handful of
 * shared objects and a few others that keep coming back (the call memo's
 * callee types), so "which is t's shared twin?" is answered by address
 * nearly always. */
static size_t canon_seen_index(const Type *t) { return ((uintptr_t)t >> 4) % TYPEOF_CANON_CACHE; }

static void canon_seen_put(TypeofCx *tc, const Type *t, Type *shared) {
  size_t i = canon_seen_index(t);
  tc->canon_seen[i].t = t;
  tc->canon_seen[i].shared = shared;
}

static Type *share(TypeofCx *tc, Type **slot, Type *t) {
  if (!*slot) {
    *slot = t;
    tc->nshared++;
  }
  canon_seen_put(tc, *slot, *slot);
  return *slot;
}

static Type *canon(TypeofCx *tc, Type *t, int depth);

/* The shared type with parts k (canonical already), built from k when new. */
static Type *shared_parts(TypeofCx *tc, const Parts *k) {
  Type **slot = shared_slot(tc, NULL, k, parts_hash(k));
  if (*slot) return share(tc, slot, *slot);
  Module *m = tc->m;
  Type *t = type_new(m, k->kind, (Span){0, 0});
  Type **copy = arena_alloc(m->arena, (k->n ? k->n : 1) * sizeof *copy);
  for (uint32_t i = 0; i < k->n; i++) copy[i] = k->p[i];
  switch (k->kind) {
  case TYPE_TUPLE: t->tuple.fields = copy, t->tuple.n = k->n; break;
  case TYPE_REF: t->ref.inner = copy[0]; break;
  case TYPE_ADT: t->adt.def = k->def, t->adt.args = copy, t->adt.nargs = k->n; break;
  default: t->func.args = copy, t->func.nargs = k->n - 1, t->func.ret = copy[k->n - 1]; break;
  }
  return share(tc, slot, t);
}

/* The shared type with parts ps[0..n) canonicalised (a tuple's fields, a
 * ref's inner type, a function type's arguments then result); NULL when a
 * part is missing. */
static Type *shared_of(TypeofCx *tc, TypeKind kind, TypeDef *def, Type *const *ps, uint32_t n) {
  Type *small[8];
  Type **cs = n <= 8 ? small : mem_malloc(n * sizeof *cs);
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; i++) ok = (cs[i] = canon(tc, ps[i], 0)) != NULL;
  TypeofPartsSeen *seen = NULL;
  if (ok && n >= 1 && n <= 3) { /* pairs, refs, `fn () -> T`, binary operators: by address first */
    Type *p1 = n >= 2 ? cs[1] : NULL, *p2 = n == 3 ? cs[2] : NULL;
    uint64_t h = tmix(tmix(tmix(tmix((uint64_t)kind, (uint64_t)(uintptr_t)def), (uint64_t)(uintptr_t)cs[0]), (uint64_t)(uintptr_t)p1),
                      (uint64_t)(uintptr_t)p2);
    seen = &tc->parts_seen[(h * 0x9E3779B97F4A7C15ULL) >> 58]; /* 64 slots: the top 6 bits */
    if (seen->t && seen->kind == kind && seen->n == n && seen->def == def && seen->p[0] == cs[0] && seen->p[1] == p1 &&
        seen->p[2] == p2)
      return seen->t;
  }
  Parts k = {kind, def, cs, n};
  Type *t = ok ? shared_parts(tc, &k) : NULL;
  if (seen && t) *seen = (TypeofPartsSeen){kind, n, def, {cs[0], n >= 2 ? cs[1] : NULL, n == 3 ? cs[2] : NULL}, t};
  if (cs != small) mem_free(cs);
  return t;
}

/* The shared type equal to t (t itself when it is the first of its kind);
 * t as it is when it is not one the table takes. */
static Type *canon_of(TypeofCx *tc, Type *t, int depth);

/* (types are immutable once built, and shared ones never leave the table) */
static Type *canon(TypeofCx *tc, Type *t, int depth) {
  if (!t) return NULL;
  size_t i = canon_seen_index(t);
  if (tc->canon_seen[i].t == t) return tc->canon_seen[i].shared;
  if (t == tc->last_tensor_of) return tc->last_tensor;
  Type *r = canon_of(tc, t, depth);
  if (r != t && r) canon_seen_put(tc, t, r);
  return r;
}

static Type *canon_of(TypeofCx *tc, Type *t, int depth) {
  if (t->kind == TYPE_UVAR && t->uvar.link) /* solved: its solution */
    return canon(tc, type_solved(t), depth);
  if (depth > 16) return t;
  switch (t->kind) {
  case TYPE_TENSOR: /* a source node's own object, mostly equal to the tensor seen last */
    if (!(tc->last_tensor && tensor_same(t, tc->last_tensor) && shareable_tensor(t))) {
      if (!shareable_tensor(t)) return t;
      tc->last_tensor = share(tc, shared_slot(tc, t, NULL, tensor_hash(t)), t);
    }
    tc->last_tensor_of = t;
    return tc->last_tensor;
  case TYPE_TUPLE: case TYPE_REF: case TYPE_FUNC: case TYPE_ADT: {
    if (t->kind == TYPE_FUNC && t->func.ntparams) return t;
    uint32_t n = t->kind == TYPE_TUPLE ? t->tuple.n : t->kind == TYPE_REF ? 1
                 : t->kind == TYPE_ADT ? t->adt.nargs : t->func.nargs + 1;
    Type *small[8];
    Type **cs = n <= 8 ? small : mem_malloc(n * sizeof *cs);
    bool own = true; /* t's parts are the canonical ones: t itself can be shared */
    for (uint32_t i = 0; i < n; i++) {
      Type *p = t->kind == TYPE_TUPLE ? t->tuple.fields[i] : t->kind == TYPE_REF ? t->ref.inner
                : t->kind == TYPE_ADT ? t->adt.args[i] : i < t->func.nargs ? t->func.args[i] : t->func.ret;
      cs[i] = canon(tc, p, depth + 1);
      own = own && cs[i] == p;
    }
    Parts k = {t->kind, t->kind == TYPE_ADT ? t->adt.def : NULL, cs, n};
    Type *r = own ? share(tc, shared_slot(tc, NULL, &k, parts_hash(&k)), t) : shared_parts(tc, &k);
    if (cs != small) mem_free(cs);
    return r;
  }
  default: return t;
  }
}

Type *typeof_tuple_type(TypeofCx *tc, Type *const *fields, uint32_t n) {
  return n ? shared_of(tc, TYPE_TUPLE, NULL, fields, n) : tc->unit;
}

Type *typeof_ref_type(TypeofCx *tc, Type *inner) { return shared_of(tc, TYPE_REF, NULL, &inner, 1); }

Type *typeof_adt_type(TypeofCx *tc, TypeDef *def, Type *const *args, uint32_t n) {
  return shared_of(tc, TYPE_ADT, def, args, n);
}

Type *typeof_shared(TypeofCx *t, Type *type) { return canon(t, type, 0); }

Type *typeof_fn_type(TypeofCx *tc, Type *const *args, uint32_t n, Type *ret) {
  Type *small[8];
  Type **ps = n + 1 <= 8 ? small : mem_malloc((n + 1) * sizeof *ps);
  for (uint32_t i = 0; i < n; i++) ps[i] = args[i];
  ps[n] = ret;
  Type *t = shared_of(tc, TYPE_FUNC, NULL, ps, n + 1);
  if (ps != small) mem_free(ps);
  return t;
}

/* Is t (a type const_type gave) the type of c? */
static bool const_type_is(const Type *t, const ConstTensor *c) {
  uint32_t nd = (uint32_t)(c->ndim > 0 ? c->ndim : 0);
  if (!t || t->tensor.ndim != nd || !dtype_eq(t->tensor.dtype, c->dtype)) return false;
  for (uint32_t i = 0; i < nd; i++)
    if (t->tensor.dims[i].value != c->shape[i]) return false;
  return true;
}

/* What infer.c's const_type gives (int32 extents), shared. */
static __attribute__((noinline)) Type *const_type(TypeofCx *tc, const ConstTensor *c) {
  if (const_type_is(tc->last_const, c)) return tc->last_const;
  uint32_t nd = (uint32_t)(c->ndim > 0 ? c->ndim : 0);
  Dim small[8];
  Dim *dims = nd <= 8 ? small : mem_malloc(nd * sizeof *dims);
  for (uint32_t i = 0; i < nd; i++) dims[i] = (Dim){DIM_INT, DTYPE(DT_INT, 32), c->shape[i]};
  Type probe = {.kind = TYPE_TENSOR, .tensor = {c->dtype, nd, dims}};
  Type **slot = shared_slot(tc, &probe, NULL, tensor_hash(&probe));
  if (!*slot) {
    Type *t = type_new(tc->m, TYPE_TENSOR, (Span){0, 0});
    t->tensor = probe.tensor;
    t->tensor.dims = arena_alloc(tc->m->arena, (nd ? nd : 1) * sizeof(Dim));
    memcpy(t->tensor.dims, dims, nd * sizeof(Dim));
    share(tc, slot, t);
  }
  if (dims != small) mem_free(dims);
  return tc->last_const = *slot;
}

/* The result of the two relations most calls a pass builds use, when it is
 * the first argument's type as it is: Identity on a tensor (zeros_like,
 * ones_like, negative, ...), Broadcast of two equal tensor types (add,
 * multiply, ... of one shape: every extent is the first argument's). NULL
 * for anything else (the relation decides). */
static Type *same_as_input(const OpDef *op, const Expr *e) {
  if (!op || e->call.nargs == 0 || (op->num_inputs >= 0 && (uint32_t)op->num_inputs != e->call.nargs)) return NULL;
  Type *a = e->call.args[0]->type;
  if (!a || a->kind != TYPE_TENSOR) return NULL;
  if (op->relation == rel_identity || op->relation == rel_identity_float) return e->call.nargs == 1 ? a : NULL;
  if (op->relation == rel_broadcast && e->call.nargs == 2) return typeof_same(a, e->call.args[1]->type) ? a : NULL;
  return NULL;
}

void typeof_init(TypeofCx *t, Module *m) {
  memset(t, 0, sizeof *t);
  t->m = m;
  t->unit = type_new(m, TYPE_TUPLE, (Span){0, 0});
  share(t, shared_slot(t, NULL, &(Parts){TYPE_TUPLE, NULL, NULL, 0}, parts_hash(&(Parts){TYPE_TUPLE, NULL, NULL, 0})), t->unit);
}

void typeof_fini(TypeofCx *t) {
  call_memo_free(&t->calls);
  mem_free(t->shared);
  mem_free(t->op_nodes);
  memset(t, 0, sizeof *t);
}

/* ---- calls typed before, by address (TypeofCx.call_seen)
 *
 * A call whose operator, attributes object and argument type objects are
 * those of a call the memo (sema/call_memo.h) took gets that call's types
 * without hashing its arguments' extents. Only calls the memo keys are
 * entered, and a constant argument (keyed by its type only when the
 * operator's relation does not read constants) is never looked up here, so
 * a hit gives exactly what the memo would. */

/* The hash of a call (op, attrs, argument types) for the table: multiplies by
 * a large odd constant per part; call_seen_index takes the top bits, the
 * best mixed. */
#define CALL_SEEN_K 0x9e3779b97f4a7c15ULL

static inline uint64_t call_seen_hash_start(int32_t op, const Attrs *attrs) {
  return ((uint64_t)(uint32_t)op + 1) * CALL_SEEN_K ^ (uint64_t)(uintptr_t)attrs;
}

static inline uint64_t call_seen_hash_step(uint64_t h, const Type *arg) {
  return (h ^ (uint64_t)(uintptr_t)arg) * CALL_SEEN_K;
}

static inline size_t call_seen_index(uint64_t h) { return (size_t)((h * CALL_SEEN_K) >> (64 - TYPEOF_CALL_CACHE_BITS)); }

/* The slot of a call (op, attrs, args) in the table, or NULL when the table
 * does not take it (more than TYPEOF_CALL_CACHE_ARGS arguments, or a
 * constant argument of an operator whose relation reads constants). */
static TypeofCallSeen *call_seen_slot(TypeofCx *t, int32_t op, const Attrs *attrs, Expr *const *args, uint32_t n) {
  if (n > TYPEOF_CALL_CACHE_ARGS) return NULL;
  uint64_t h = call_seen_hash_start(op, attrs);
  bool consts = false;
  for (uint32_t i = 0; i < n; i++) {
    h = call_seen_hash_step(h, args[i]->type);
    consts |= args[i]->kind == EXPR_CONST;
  }
  if (consts && op_type_reads_consts(op)) return NULL;
  return &t->call_seen[call_seen_index(h)];
}

static inline bool call_seen_is(const TypeofCallSeen *s, int32_t op, const Attrs *attrs, Expr *const *args, uint32_t n) {
  if (!s->ret || s->op != op || s->nargs != n || s->attrs != attrs) return false;
  for (uint32_t i = 0; i < n; i++)
    if (s->args[i] != args[i]->type) return false;
  return true;
}

/* The entry of a call like this one, probing from its home slot `s` to the
 * first empty slot, at most CALL_SEEN_PROBES slots; or NULL. The table was
 * two-way once (a slot and its partner): three keys on one pair evicted each
 * other at every call, which with ~50 keys in 128 pairs happened in about one
 * run of two depending on where the types were allocated (28k misses of
 * ~1,000 instructions each on the 100k chain's Gradient under callgrind). */
#define CALL_SEEN_PROBES 8
static inline TypeofCallSeen *call_seen_find(TypeofCx *t, TypeofCallSeen *s, int32_t op, const Attrs *attrs, Expr *const *args,
                                      uint32_t n) {
  if (call_seen_is(s, op, attrs, args, n)) return s;
  size_t i = (size_t)(s - t->call_seen);
  for (int k = 1; k < CALL_SEEN_PROBES; k++) {
    TypeofCallSeen *p = &t->call_seen[(i + (size_t)k) & (TYPEOF_CALL_CACHE - 1)];
    if (!p->ret) return NULL;
    if (call_seen_is(p, op, attrs, args, n)) return p;
  }
  return NULL;
}

/* The entry for a call like e, when e is one the table takes. */
static TypeofCallSeen *call_seen_of(TypeofCx *t, const Expr *e) {
  return call_seen_slot(t, e->call.fn->op.id, e->call.attrs, e->call.args, e->call.nargs);
}

/* Enters e's types; the callee type as the shared object, so that the calls
 * of one operator at one type find one callee node (typeof_op_node). */
static void call_seen_put(TypeofCx *t, TypeofCallSeen *s, const Expr *e, Type *ret, Type *fn) {
  if (!s || !ret || !fn || !(fn = typeof_shared(t, fn))) return;
  size_t home = (size_t)(s - t->call_seen);
  for (int k = 0; k < CALL_SEEN_PROBES; k++) { /* the first free slot of the probe; the home slot when none */
    TypeofCallSeen *p = &t->call_seen[(home + (size_t)k) & (TYPEOF_CALL_CACHE - 1)];
    if (!p->ret) {
      s = p;
      break;
    }
  }
  s->op = e->call.fn->op.id;
  s->nargs = e->call.nargs;
  s->attrs = e->call.attrs;
  for (uint32_t i = 0; i < e->call.nargs; i++) s->args[i] = e->call.args[i]->type;
  s->ret = ret;
  s->fn = fn;
  s->node = NULL;
}

/* An operator call with typed arguments: its relation, through the inference
 * of the call alone (quietly: a failure leaves the call untyped). */
static __attribute__((noinline)) Type *op_call_type(TypeofCx *t, Expr *e) {
  Module *m = t->m;
  Expr *callee = e->call.fn;
  if (callee->op.id < 0) return NULL;
  for (uint32_t i = 0; i < e->call.nargs; i++)
    if (!typeof_ground_known(t, e->call.args[i]->type)) return NULL;
  TypeofCallSeen *seen = call_seen_of(t, e);
  TypeofCallSeen *hit = seen ? call_seen_find(t, seen, callee->op.id, e->call.attrs, e->call.args, e->call.nargs) : NULL;
  if (hit) {
    callee->type = hit->fn;
    return hit->ret;
  }
  uint64_t h = 0;
  bool keyed = call_memo_key(e, &h);
  if (!keyed) seen = NULL;
  if (keyed && call_memo_apply(&t->calls, e, h)) {
    Type *r = e->type;
    e->type = NULL; /* typeof_set sets it */
    call_seen_put(t, seen, e, r, callee->type);
    return r;
  }
  Type *fast = same_as_input(op_get(callee->op.id), e);
  if (fast) { /* what infer_op_call records: the callee's type too */
    uint32_t n = e->call.nargs;
    Type *small[8];
    Type **as = n <= 8 ? small : mem_malloc(n * sizeof *as);
    for (uint32_t i = 0; i < n; i++) as[i] = e->call.args[i]->type;
    callee->type = typeof_fn_type(t, as, n, fast);
    if (as != small) mem_free(as);
    e->type = fast;
    if (keyed) call_memo_add(&t->calls, m, e, h);
    e->type = NULL; /* typeof_set sets it */
    call_seen_put(t, seen, e, fast, callee->type);
    return fast;
  }
  Diag quiet;
  diag_init_silent(&quiet, NULL);
  Type *saved = callee->type;
  callee->type = NULL;
  if (infer_untyped(m, e, &quiet) && typeof_ground(e->type)) {
    if (keyed && callee->type) {
      call_memo_add(&t->calls, m, e, h);
      Type *r = e->type, *fn = callee->type;
      if (call_memo_apply(&t->calls, e, h)) call_seen_put(t, seen, e, e->type, callee->type); /* the memo's entry, as a later call gets it */
      e->type = r;
      callee->type = fn;
    }
    return e->type;
  }
  e->type = NULL;
  callee->type = saved;
  return NULL;
}

static __attribute__((noinline)) Type *fn_type(TypeofCx *tc, Function *f) {
  if (f->ntparams || !f->body->type) return NULL;
  Type *ret = f->body->type;
  if (f->ret_annot && !typeof_same(f->ret_annot, ret)) return NULL;
  if (!typeof_ground_known(tc, ret)) return NULL;
  uint32_t n = f->nparams;
  Type *small[8];
  Type **as = n <= 8 ? small : mem_malloc(n * sizeof *as);
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; i++) {
    const Var *p = f->params[i];
    ok = p->type && (!p->annot || typeof_same(p->annot, p->type)) && typeof_ground_known(tc, p->type);
    as[i] = p->type;
  }
  Type *t = ok ? typeof_fn_type(tc, as, n, ret) : NULL;
  if (as != small) mem_free(as);
  return t;
}

/* The kinds whose rule needs a buffer or a loop, out of line: node_type,
 * which the typed builders call for every node, stays a small leaf. */
static __attribute__((noinline)) Type *tuple_node_type(TypeofCx *tc, Expr *e) {
  uint32_t n = e->tuple.n;
  Type *small[8];
  Type **fs = n <= 8 ? small : mem_malloc(n * sizeof *fs);
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; i++) ok = (fs[i] = e->tuple.fields[i]->type) != NULL;
  Type *t = ok ? typeof_tuple_type(tc, fs, n) : NULL;
  if (fs != small) mem_free(fs);
  return t;
}

/* A call of a function value (not an operator): its result when the arguments match. */
static __attribute__((noinline)) Type *call_node_type(TypeofCx *tc, Expr *e) {
  Expr *f = e->call.fn;
  if (f->kind == EXPR_GLOBAL) typeof_set(tc, f);
  const Type *ft = f->type;
  if (!ft || ft->kind != TYPE_FUNC || ft->func.ntparams || ft->func.nargs != e->call.nargs) return NULL;
  for (uint32_t i = 0; i < e->call.nargs; i++)
    if (!typeof_same(ft->func.args[i], e->call.args[i]->type)) return NULL;
  return ft->func.ret;
}

static inline Type *node_type(TypeofCx *tc, Expr *e) {
  switch (e->kind) {
  case EXPR_VAR: return typeof_var_rule(tc, e->var.var);
  case EXPR_CONST: return const_type(tc, e->constant);
  case EXPR_GLOBAL: {
    GlobalDef *g = e->global.def;
    Type *t = g && g->fn ? g->fn->type : NULL;
    return t && t->kind == TYPE_FUNC && typeof_ground(t) ? t : NULL;
  }
  case EXPR_TUPLE: return tuple_node_type(tc, e);
  case EXPR_PROJ: return typeof_proj_rule(e->proj.tuple, e->proj.index);
  case EXPR_REF_NEW: return e->ref.arg->type ? typeof_ref_type(tc, e->ref.arg->type) : NULL;
  case EXPR_REF_READ: return typeof_ref_read_rule(e->ref.arg);
  case EXPR_REF_WRITE: return typeof_ref_write_rule(tc, e->ref_write.ref, e->ref_write.value);
  case EXPR_LET: return typeof_let_rule(e->let.var, e->let.value, e->let.body);
  case EXPR_IF: {
    const Type *c = e->if_.cond->type;
    Type *t = e->if_.then_->type;
    if (!c || c->kind != TYPE_TENSOR || c->tensor.ndim != 0 || !t || !typeof_same(t, e->if_.else_->type)) return NULL;
    return t;
  }
  case EXPR_FN: return fn_type(tc, e->fn);
  case EXPR_CALL: return e->call.fn->kind == EXPR_OP ? op_call_type(tc, e) : call_node_type(tc, e);
  default: return NULL; /* constructors, match, operators as values: from the context */
  }
}

Expr *typeof_set(TypeofCx *tc, Expr *e) {
  if (e->type) return e;
  Type *t = node_type(tc, e);
  if (!t) return e;
  e->type = t;
  if (e->kind == EXPR_FN) e->fn->type = t;
  return e;
}


/* ------------------------------------------------------------ shared callees */

struct TypeofOpNode {
  int32_t op;
  Type *fn;   /* NULL: empty slot */
  Expr *node;
};

static size_t op_node_hash(int32_t op, const Type *fn) {
  uint64_t h = tmix(tmix(0xcbf29ce484222325ULL, (uint64_t)(uint32_t)op), (uint64_t)(uintptr_t)fn);
  return (size_t)(h ^ (h >> 31));
}

static void op_nodes_grow(TypeofCx *t) {
  struct TypeofOpNode *old = t->op_nodes;
  size_t oldcap = t->capop_nodes;
  t->capop_nodes = oldcap ? 2 * oldcap : 64;
  t->op_nodes = mem_calloc(t->capop_nodes, sizeof *t->op_nodes);
  for (size_t i = 0; i < oldcap; i++) {
    if (!old[i].fn) continue;
    size_t j = op_node_hash(old[i].op, old[i].fn) & (t->capop_nodes - 1);
    while (t->op_nodes[j].fn) j = (j + 1) & (t->capop_nodes - 1);
    t->op_nodes[j] = old[i];
  }
  mem_free(old);
}

Expr *typeof_op_node(TypeofCx *t, int32_t op, Type *fn, Span sp) {
  if (2 * (t->nop_nodes + 1) > t->capop_nodes) op_nodes_grow(t);
  size_t i = op_node_hash(op, fn) & (t->capop_nodes - 1);
  for (; t->op_nodes[i].fn; i = (i + 1) & (t->capop_nodes - 1))
    if (t->op_nodes[i].op == op && t->op_nodes[i].fn == fn) return t->op_nodes[i].node;
  Expr *n = expr_new(t->m, EXPR_OP, sp);
  n->op.name = op_get(op)->name;
  n->op.id = op;
  n->type = fn;
  t->op_nodes[i] = (struct TypeofOpNode){op, fn, n};
  t->nop_nodes++;
  return n;
}

/* The call built with the callee and types of the entry seen. */
static Expr *seen_call(TypeofCx *t, TypeofCallSeen *seen, Attrs *attrs, Expr **args, uint32_t nargs, Span sp) {
  if (!seen->node) seen->node = typeof_op_node(t, seen->op, seen->fn, sp);
  Expr *e = expr_call(t->m, seen->node, args, nargs, attrs, sp);
  e->type = seen->ret;
  return e;
}

/* A call not in the table: typed through op_call_type with a callee of its
 * own, which becomes the shared one once typed. */
static __attribute__((noinline)) Expr *unseen_call(TypeofCx *t, int32_t op, Attrs *attrs, Expr **args, uint32_t nargs,
                                                   Span sp) {
  for (uint32_t i = 0; i < nargs; i++) /* a rule's constant (what typeof_tree would do first) */
    if (!args[i]->type && args[i]->kind == EXPR_CONST) typeof_set(t, args[i]);
  Expr *callee = expr_new(t->m, EXPR_OP, sp);
  callee->op.name = op_get(op)->name;
  callee->op.id = op;
  Expr *e = typeof_set(t, expr_call(t->m, callee, args, nargs, attrs, sp));
  if (e->type && callee->type) e->call.fn = typeof_op_node(t, op, typeof_shared(t, callee->type), sp);
  return e;
}

/* The table's look-up (call_seen_slot and call_seen_find in one pass over the
 * arguments, a rule's untyped constant typed on the way so that the table
 * can key it): the path of nearly every call a pass builds. */
Expr *typeof_op_call(TypeofCx *t, int32_t op, Attrs *attrs, Expr **args, uint32_t nargs, Span sp) {
  if (nargs > TYPEOF_CALL_CACHE_ARGS) return unseen_call(t, op, attrs, args, nargs, sp);
  uint64_t h = call_seen_hash_start(op, attrs);
  bool consts = false;
  for (uint32_t i = 0; i < nargs; i++) {
    Expr *a = args[i];
    if (a->kind == EXPR_CONST) {
      consts = true;
      if (!a->type) typeof_set(t, a);
    }
    h = call_seen_hash_step(h, a->type);
  }
  if (consts && op_type_reads_consts(op)) return unseen_call(t, op, attrs, args, nargs, sp);
  TypeofCallSeen *seen = call_seen_find(t, &t->call_seen[call_seen_index(h)], op, attrs, args, nargs);
  return seen ? seen_call(t, seen, attrs, args, nargs, sp) : unseen_call(t, op, attrs, args, nargs, sp);
}

/* ------------------------------------------------------------ whole trees */

typedef struct Frame {
  Expr *e;
  uint32_t next; /* next child */
} Frame;

/* The i-th child to type before e (NULL when done); a let decides its binder
 * between its value and its body. */
static Expr *child(Expr *e, uint32_t i) {
  switch (e->kind) {
  case EXPR_TUPLE: return i < e->tuple.n ? e->tuple.fields[i] : NULL;
  case EXPR_PROJ: return i == 0 ? e->proj.tuple : NULL;
  case EXPR_REF_NEW:
  case EXPR_REF_READ: return i == 0 ? e->ref.arg : NULL;
  case EXPR_REF_WRITE: return i == 0 ? e->ref_write.ref : i == 1 ? e->ref_write.value : NULL;
  case EXPR_IF: return i == 0 ? e->if_.cond : i == 1 ? e->if_.then_ : i == 2 ? e->if_.else_ : NULL;
  case EXPR_LET:
    if (i == 1) {
      Var *v = e->let.var;
      if (!v->type && e->let.value->type && (!v->annot || typeof_same(v->annot, e->let.value->type)))
        v->type = v->annot ? v->annot : e->let.value->type;
    }
    return i == 0 ? e->let.value : i == 1 ? e->let.body : NULL;
  case EXPR_FN: return i == 0 ? e->fn->body : NULL;
  default: return NULL;
  }
}

/* The call's children in order: the callee (unless an operator), then the arguments. */
static Expr *call_child(Expr *e, uint32_t i) {
  bool op = e->call.fn->kind == EXPR_OP;
  if (!op) {
    if (i == 0) return e->call.fn;
    i--;
  }
  return i < e->call.nargs ? e->call.args[i] : NULL;
}

bool typeof_tree(TypeofCx *tc, Expr *root) {
  if (root->type) return true;
  VEC(Frame) st = {0};
  vec_push(st, ((Frame){root, 0}));
  while (st.len) {
    Frame *f = &st.data[st.len - 1];
    Expr *e = f->e;
    uint32_t i = f->next++;
    Expr *c = e->kind == EXPR_CALL ? call_child(e, i) : child(e, i);
    if (c) {
      if (!c->type) vec_push(st, ((Frame){c, 0}));
      continue;
    }
    typeof_set(tc, e);
    st.len--;
  }
  vec_free(st);
  return root->type != NULL;
}
