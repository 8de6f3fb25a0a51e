/* runtime/value.c — Values: immediates, heap objects, non-recursive freeing, printing.
 *
 * Objects are carved from 64 KiB chunks in 16-byte size classes (up to
 * VALUE_SMALL_MAX bytes) and recycled through per-class free lists; bigger
 * objects go straight to mem_malloc. Freeing uses one process-wide work list
 * (the interpreter is single-threaded), so dropping the head of a long list
 * frees the whole list in a loop. Printing and equality walk values with an
 * explicit stack for the same reason.
 */
#include "runtime/value.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ir/dims_text.h"
#include "ir/mem.h"
#include "runtime/format.h"

/* ------------------------------------------------------------ allocator */

#define VALUE_SMALL_MAX 256
#define NCLASSES (VALUE_SMALL_MAX / 16 + 1)
#define CHUNK_BYTES (64u * 1024u)

typedef struct FreeCell {
  struct FreeCell *next;
} FreeCell;

static struct {
  FreeCell *free[NCLASSES];
  char *bump;              /* current chunk's next free byte */
  size_t bump_left;
  VEC(void *) chunks;      /* every chunk, for shutdown */
  VEC(Obj *) immortals;    /* unit, nullary ADTs, global closures */
  VEC(Obj *) dying;        /* work list of value_free_obj */
  int64_t live;
  size_t bytes;
  /* nullary constructor instances: open addressing on the Ctor pointer */
  const Ctor **ctor_keys;
  Obj **ctor_vals;
  uint32_t ctor_cap, ctor_n;
  TupleObj *unit;
  RefObj *refs;            /* live reference cells (doubly linked) */
} heap;

static void *obj_alloc(size_t size, uint16_t *cls_out) {
  size_t cls = (size + 15) / 16;
  heap.live++;
  if (cls >= NCLASSES) {
    *cls_out = 0;
    return mem_malloc(size);
  }
  *cls_out = (uint16_t)cls;
  FreeCell *c = heap.free[cls];
  if (c) {
    heap.free[cls] = c->next;
    return c;
  }
  size_t bytes = cls * 16;
  if (heap.bump_left < bytes) {
    char *chunk = mem_malloc(CHUNK_BYTES);
    vec_push(heap.chunks, chunk);
    heap.bump = chunk;
    heap.bump_left = CHUNK_BYTES;
    heap.bytes += CHUNK_BYTES;
  }
  void *p = heap.bump;
  heap.bump += bytes;
  heap.bump_left -= bytes;
  return p;
}

static void obj_dealloc(Obj *o) {
  heap.live--;
  if (o->size_class == 0) {
    mem_free(o);
    return;
  }
  FreeCell *c = (FreeCell *)o;
  c->next = heap.free[o->size_class];
  heap.free[o->size_class] = c;
}

static Obj *obj_new(ValueKind kind, size_t size) {
  uint16_t cls;
  Obj *o = obj_alloc(size, &cls);
  o->rc = 1;
  o->kind = (uint8_t)kind;
  o->flags = 0;
  o->size_class = cls;
  return o;
}

static Obj *obj_immortal(ValueKind kind, size_t size) {
  Obj *o = mem_calloc(1, size);
  o->rc = VALUE_IMMORTAL_RC;
  o->kind = (uint8_t)kind;
  o->flags = OBJ_IMMORTAL;
  vec_push(heap.immortals, o);
  return o;
}

int64_t value_live_objects(void) { return heap.live; }
size_t value_heap_bytes(void) { return heap.bytes; }

void value_clear_refs(void) {
  /* Hold every cell first so none is freed while the list is walked, then
   * empty them (which may free whole cycles), then let go. */
  VEC(RefObj *) cells = {0};
  for (RefObj *r = heap.refs; r; r = r->next) {
    r->hdr.rc++;
    vec_push(cells, r);
  }
  for (size_t i = 0; i < cells.len; i++) {
    Value v = cells.data[i]->v;
    cells.data[i]->v = value_none();
    value_release(v);
  }
  for (size_t i = 0; i < cells.len; i++) value_release((Value){VK_REF, 0, {.o = &cells.data[i]->hdr}});
  vec_free(cells);
}

void value_heap_shutdown(void) {
  for (size_t i = 0; i < heap.chunks.len; i++) mem_free(heap.chunks.data[i]);
  vec_free(heap.chunks);
  for (size_t i = 0; i < heap.immortals.len; i++) mem_free(heap.immortals.data[i]);
  vec_free(heap.immortals);
  vec_free(heap.dying);
  mem_free(heap.ctor_keys);
  mem_free(heap.ctor_vals);
  memset(&heap, 0, sizeof heap);
}

/* ------------------------------------------------------------ freeing */

static void drop_field(Value v) {
  uint32_t k = v.tag & 0xff;
  if (k >= VK_TUPLE) {
    if (--v.o->rc == 0) vec_push(heap.dying, v.o);
  } else if (k == VK_TENSOR) {
    tensor_release(v.t);
  }
}

static void free_one(Obj *o) {
  switch ((ValueKind)o->kind) {
  case VK_TUPLE: {
    TupleObj *t = (TupleObj *)o;
    for (uint32_t i = 0; i < t->n; i++) drop_field(t->f[i]);
    break;
  }
  case VK_ADT: {
    AdtObj *a = (AdtObj *)o;
    for (uint32_t i = 0; i < a->ctor->nfields; i++) drop_field(a->f[i]);
    break;
  }
  case VK_CLOSURE: {
    ClosureObj *c = (ClosureObj *)o;
    for (uint32_t i = 0; i < c->n; i++) drop_field(c->cap[i]);
    break;
  }
  case VK_REF: {
    RefObj *r = (RefObj *)o;
    if (r->prev) r->prev->next = r->next;
    else heap.refs = r->next;
    if (r->next) r->next->prev = r->prev;
    drop_field(r->v);
    break;
  }
  default: UNREACHABLE();
  }
  obj_dealloc(o);
}

void value_free_obj(Obj *o) {
  if (o->flags & OBJ_IMMORTAL) {
    o->rc = VALUE_IMMORTAL_RC;
    return;
  }
  size_t base = heap.dying.len; /* re-entrant use keeps outer entries */
  free_one(o);
  while (heap.dying.len > base) free_one(heap.dying.data[--heap.dying.len]);
}

/* ------------------------------------------------------------ immediates */

bool value_dtype_is_immediate(DType dt) {
  if (dt.lanes != 1) return false;
  switch (dt.code) {
  case DT_INT: return dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
  case DT_UINT: return dt.bits == 1 || dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
  case DT_FLOAT: return dt.bits == 32 || dt.bits == 64;
  default: return false;
  }
}

int64_t value_wrap_int(DType dt, int64_t v) {
  if (dt.code == DT_UINT && dt.bits == 1) return v != 0;
  switch (dt.bits) {
  case 8: return dt.code == DT_INT ? (int64_t)(int8_t)v : (int64_t)(uint8_t)v;
  case 16: return dt.code == DT_INT ? (int64_t)(int16_t)v : (int64_t)(uint16_t)v;
  case 32: return dt.code == DT_INT ? (int64_t)(int32_t)v : (int64_t)(uint32_t)v;
  default: return v;
  }
}

Value value_int(DType dt, int64_t v) {
  return (Value){VTAG_SCALAR(dt.code, dt.bits), 0, {.i = value_wrap_int(dt, v)}};
}

Value value_float(DType dt, double v) {
  if (dt.bits == 32 && dt.code == DT_FLOAT) return value_f32((float)v);
  return (Value){VTAG_SCALAR(dt.code, dt.bits), 0, {.f = v}};
}

/* ------------------------------------------------------------ tensors */

Value value_from_tensor(Tensor *t) {
  if (t->ndim == 0 && value_dtype_is_immediate(t->dtype)) {
    Value v = dtype_is_float(t->dtype) ? value_float(t->dtype, tensor_load_f64(t->dtype, t->data))
                                       : value_int(t->dtype, tensor_load_i64(t->dtype, t->data));
    tensor_release(t);
    return v;
  }
  return (Value){VK_TENSOR, 0, {.t = t}};
}

Tensor *value_to_tensor(const Value *v) {
  if (value_kind(*v) == VK_TENSOR) return tensor_retain(v->t);
  if (value_kind(*v) != VK_SCALAR) return NULL;
  DType dt = value_scalar_dtype(*v);
  return dtype_is_float(dt) ? tensor_new_scalar_float(dt, v->f) : tensor_new_scalar_int(dt, v->i);
}

bool value_truthy(const Value *v, bool *out) {
  if (value_kind(*v) == VK_SCALAR) {
    *out = dtype_is_float(value_scalar_dtype(*v)) ? v->f != 0 : v->i != 0;
    return true;
  }
  if (value_kind(*v) == VK_TENSOR && v->t->numel == 1) {
    *out = dtype_is_float(v->t->dtype) ? tensor_get_f64(v->t, 0) != 0 : tensor_get_i64(v->t, 0) != 0;
    return true;
  }
  return false;
}

/* ------------------------------------------------------------ objects */

static TupleObj *unit_obj(void) {
  if (!heap.unit) heap.unit = (TupleObj *)obj_immortal(VK_TUPLE, sizeof(TupleObj));
  return heap.unit;
}

Value value_unit(void) { return (Value){VK_TUPLE, 0, {.o = &unit_obj()->hdr}}; }

Value value_tuple_new(uint32_t n) {
  if (n == 0) return value_unit();
  TupleObj *t = (TupleObj *)obj_new(VK_TUPLE, sizeof(TupleObj) + n * sizeof(Value));
  t->n = n;
  t->pad = 0;
  memset(t->f, 0, n * sizeof(Value));
  return (Value){VK_TUPLE, 0, {.o = &t->hdr}};
}

static uint32_t ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (uint32_t)x;
}

static Obj *nullary_instance(const Ctor *ctor) {
  if (heap.ctor_n * 2 >= heap.ctor_cap) {
    uint32_t old = heap.ctor_cap;
    const Ctor **keys = heap.ctor_keys;
    Obj **vals = heap.ctor_vals;
    heap.ctor_cap = old ? old * 2 : 64;
    heap.ctor_keys = mem_calloc(heap.ctor_cap, sizeof *heap.ctor_keys);
    heap.ctor_vals = mem_calloc(heap.ctor_cap, sizeof *heap.ctor_vals);
    heap.ctor_n = 0;
    for (uint32_t i = 0; i < old; i++) {
      if (!keys[i]) continue;
      uint32_t j = ptr_hash(keys[i]) & (heap.ctor_cap - 1);
      while (heap.ctor_keys[j]) j = (j + 1) & (heap.ctor_cap - 1);
      heap.ctor_keys[j] = keys[i];
      heap.ctor_vals[j] = vals[i];
      heap.ctor_n++;
    }
    mem_free(keys);
    mem_free(vals);
  }
  uint32_t j = ptr_hash(ctor) & (heap.ctor_cap - 1);
  while (heap.ctor_keys[j] && heap.ctor_keys[j] != ctor) j = (j + 1) & (heap.ctor_cap - 1);
  if (!heap.ctor_keys[j]) {
    AdtObj *a = (AdtObj *)obj_immortal(VK_ADT, sizeof(AdtObj));
    a->ctor = ctor;
    heap.ctor_keys[j] = ctor;
    heap.ctor_vals[j] = &a->hdr;
    heap.ctor_n++;
  }
  return heap.ctor_vals[j];
}

Value value_adt_new(const Ctor *ctor) {
  if (ctor->nfields == 0) return (Value){VK_ADT, 0, {.o = nullary_instance(ctor)}};
  AdtObj *a = (AdtObj *)obj_new(VK_ADT, sizeof(AdtObj) + ctor->nfields * sizeof(Value));
  a->ctor = ctor;
  memset(a->f, 0, ctor->nfields * sizeof(Value));
  return (Value){VK_ADT, 0, {.o = &a->hdr}};
}

Value value_closure_new(const void *code, uint32_t n) {
  ClosureObj *c = (ClosureObj *)obj_new(VK_CLOSURE, sizeof(ClosureObj) + n * sizeof(Value));
  c->code = code;
  c->n = n;
  c->pad = 0;
  memset(c->cap, 0, n * sizeof(Value));
  return (Value){VK_CLOSURE, 0, {.o = &c->hdr}};
}

Value value_closure_immortal(const void *code) {
  ClosureObj *c = (ClosureObj *)obj_immortal(VK_CLOSURE, sizeof(ClosureObj));
  c->code = code;
  return (Value){VK_CLOSURE, 0, {.o = &c->hdr}};
}

Value value_ref_new(Value v) {
  RefObj *r = (RefObj *)obj_new(VK_REF, sizeof(RefObj));
  r->v = v;
  r->prev = NULL;
  r->next = heap.refs;
  if (heap.refs) heap.refs->prev = r;
  heap.refs = r;
  return (Value){VK_REF, 0, {.o = &r->hdr}};
}

/* ------------------------------------------------------------ equality */

static bool scalar_equal(const Value *a, const Value *b) {
  Tensor *x = value_to_tensor(a), *y = value_to_tensor(b);
  bool eq = x && y && tensor_equal(x, y);
  tensor_release(x);
  tensor_release(y);
  return eq;
}

bool value_equal(const Value *a, const Value *b) {
  VEC(const Value *) st = {0};
  vec_push(st, a);
  vec_push(st, b);
  bool eq = true;
  while (eq && st.len) {
    const Value *y = st.data[--st.len], *x = st.data[--st.len];
    ValueKind kx = value_kind(*x), ky = value_kind(*y);
    bool sx = kx == VK_SCALAR || kx == VK_TENSOR, sy = ky == VK_SCALAR || ky == VK_TENSOR;
    if (sx || sy) {
      eq = sx && sy && (x->tag == y->tag && kx == VK_SCALAR ? x->i == y->i : scalar_equal(x, y));
      continue;
    }
    if (kx != ky) { eq = false; continue; }
    switch (kx) {
    case VK_NONE: break;
    case VK_TUPLE: {
      TupleObj *p = value_tuple(*x), *q = value_tuple(*y);
      if (p->n != q->n) { eq = false; break; }
      for (uint32_t i = 0; i < p->n; i++) { vec_push(st, &p->f[i]); vec_push(st, &q->f[i]); }
      break;
    }
    case VK_ADT: {
      AdtObj *p = value_adt(*x), *q = value_adt(*y);
      if (p->ctor != q->ctor) { eq = false; break; }
      for (uint32_t i = 0; i < p->ctor->nfields; i++) { vec_push(st, &p->f[i]); vec_push(st, &q->f[i]); }
      break;
    }
    default: eq = x->o == y->o; break;
    }
  }
  vec_free(st);
  return eq;
}

/* ------------------------------------------------------------ printing */

static void print_scalar(FILE *out, const Value *v) {
  DType dt = value_scalar_dtype(*v);
  uint64_t lane = 0;
  char buf[FORMAT_ELEM_SIZE];
  if (dtype_is_float(dt)) tensor_store_f64(dt, &lane, v->f);
  else tensor_store_i64(dt, &lane, v->i);
  fputs(format_element(dt, &lane, buf), out);
}

/* One item of the printing work list: a value, or literal text. */
typedef struct PrintItem {
  const Value *v;
  const char *text;
} PrintItem;

typedef VEC(PrintItem) PrintStack;

static void push_text(PrintStack *st, const char *s) { vec_push(*st, ((PrintItem){NULL, s})); }
static void push_val(PrintStack *st, const Value *v) { vec_push(*st, ((PrintItem){v, NULL})); }

/* Pushes `open f0, f1, ... close` (in reverse, for the stack). */
static void push_fields(PrintStack *st, const char *open, const Value *f, uint32_t n,
                        const char *close, const char *sep) {
  push_text(st, close);
  for (uint32_t i = n; i-- > 0;) {
    push_val(st, &f[i]);
    if (i) push_text(st, sep);
  }
  push_text(st, open);
}

static void print_tensor_json(FILE *out, const Value *v) {
  Tensor *t = value_to_tensor(v);
  if (t) format_tensor_json(out, t);
  else fputs("null", out);
  tensor_release(t);
}

static void print_items(FILE *out, const Value *root, bool json) {
  PrintStack st = {0};
  push_val(&st, root);
  while (st.len) {
    PrintItem it = st.data[--st.len];
    if (it.text) {
      fputs(it.text, out);
      continue;
    }
    const Value *v = it.v;
    switch (value_kind(*v)) {
    case VK_NONE: fputs(json ? "null" : "<none>", out); break;
    case VK_SCALAR:
      if (json) print_tensor_json(out, v);
      else print_scalar(out, v);
      break;
    case VK_TENSOR:
      if (json) format_tensor_json(out, v->t);
      else format_tensor(out, v->t);
      break;
    case VK_TUPLE: {
      TupleObj *t = value_tuple(*v);
      if (json) push_fields(&st, "[", t->f, t->n, "]", ", ");
      else push_fields(&st, "(", t->f, t->n, t->n == 1 ? ",)" : ")", ", ");
      break;
    }
    case VK_ADT: {
      AdtObj *a = value_adt(*v);
      uint32_t n = a->ctor->nfields;
      if (json) {
        push_text(&st, "}");
        push_fields(&st, "[", a->f, n, "]", ", ");
        push_text(&st, "\", \"fields\": ");
        push_text(&st, a->ctor->name);
        push_text(&st, "{\"constructor\": \"");
      } else if (n == 0) {
        fputs(a->ctor->name, out);
      } else {
        push_fields(&st, "(", a->f, n, ")", ", ");
        push_text(&st, a->ctor->name);
      }
      break;
    }
    case VK_CLOSURE: fputs(json ? "\"<closure>\"" : "<closure>", out); break;
    case VK_REF:
      push_text(&st, json ? "}" : ")");
      push_val(&st, &value_ref(*v)->v);
      push_text(&st, json ? "{\"ref\": " : "ref(");
      break;
    }
  }
  vec_free(st);
}

void value_print(FILE *out, const Value *v) { print_items(out, v, false); }
void value_print_json(FILE *out, const Value *v) { print_items(out, v, true); }

char *value_describe(const Value *v, char *buf, size_t cap) {
  char dt[32];
  switch (value_kind(*v)) {
  case VK_NONE: snprintf(buf, cap, "no value"); break;
  case VK_SCALAR: snprintf(buf, cap, "%s scalar", dtype_name(value_scalar_dtype(*v), dt)); break;
  case VK_TENSOR: {
    size_t n = (size_t)snprintf(buf, cap, "Tensor[");
    if (n < cap) n += strlen(dims_text(buf + n, cap - n, v->t->shape, v->t->ndim, DIMS_PLAIN));
    if (n < cap) snprintf(buf + n, cap - n, ", %s]", dtype_name(v->t->dtype, dt));
    break;
  }
  case VK_TUPLE: snprintf(buf, cap, "tuple of %u fields", value_tuple(*v)->n); break;
  case VK_ADT: snprintf(buf, cap, "constructor %s", value_adt(*v)->ctor->name); break;
  case VK_CLOSURE: snprintf(buf, cap, "closure"); break;
  case VK_REF: snprintf(buf, cap, "reference"); break;
  }
  return buf;
}
