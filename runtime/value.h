/* runtime/value.h — run-time values of the interpreter.
 *
 * A Value is a 16-byte tagged struct passed BY VALUE. Its `tag` says what it
 * holds:
 *
 *   VK_NONE     no value (an empty register; never seen by Relay code)
 *   VK_SCALAR   an IMMEDIATE rank-0 tensor of bool, int8..64, uint8..64,
 *               float32 or float64: no heap memory at all. The dtype code and
 *               bits live in the tag (so `a.tag == TAG_I32` tests "int32
 *               scalar" in one compare). Integers are kept in `i`, already
 *               wrapped to their width (sign-extended for signed types,
 *               zero-extended for unsigned, 0/1 for bool); floats in `f`,
 *               already rounded to their width (a float32 is a double holding
 *               exactly a float). A float32 immediate ALSO keeps the float
 *               itself in `aux` (its bits; value_f32_of reads it), so the
 *               interpreter's float32 fast paths never convert between float
 *               and double: build float32 immediates only through value_f32 /
 *               value_float / value_set_f32, which keep both in step.
 *   VK_TENSOR   a heap Tensor (runtime/tensor.h) of any rank/dtype; rank-0
 *               tensors of the dtypes above are normally immediates instead,
 *               but code must accept both forms (value_scalar_* helpers).
 *               value_from_tensor() always normalises, and every Value the
 *               interpreter builds comes from it or from an immediate, so a
 *               value whose Relay type is a rank-0 immediate dtype IS an
 *               immediate: eval/ relies on this to skip releasing such
 *               registers (eval/code.h, clear lists). A hand-built rank-0
 *               VK_TENSOR still computes correctly but may be leaked.
 *   VK_TUPLE    a tuple object (unit is the empty tuple)
 *   VK_ADT      an ADT instance: constructor + fields
 *   VK_CLOSURE  code + captured values
 *   VK_REF      a mutable cell
 *
 * OWNERSHIP — the one rule (the same as runtime/tensor.h, after jq's jv.h):
 *   Every function CONSUMES the Values passed to it, unless it is documented
 *   as BORROWING (those take `const Value *` or say "borrows"). Every function
 *   returning a Value returns a new reference owned by the caller.
 *   value_retain() copies a reference; value_release() gives one up.
 *   Immediates and VK_NONE need no bookkeeping; retaining/releasing them is a
 *   no-op, so generic code need not test the kind.
 *
 * Heap objects carry a plain (non-atomic) refcount: values are created and
 * dropped only on the interpreter's thread. Freeing is NOT recursive: a dying
 * object whose fields die too is handled with an explicit work list, so a
 * million-element list is freed in constant C stack. Reference cycles (only
 * possible through `ref` cells: a ref holding a closure that captures the
 * ref, as LazyGradientInit's programs build) are not collected while the
 * program runs; value_clear_refs() at the end of a run empties every cell
 * still alive, which frees all such garbage. A let-bound recursive closure
 * does not capture
 * itself (the interpreter hands it its own closure at call time), so ordinary
 * recursion never makes a cycle.
 *
 * Objects come from size-class free lists carved from mem_malloc'ed chunks
 * (value_heap_shutdown() returns them all); nullary ADT instances such as
 * `Nil` and the unit tuple are IMMORTAL shared objects (refcount never
 * reaches 0), so building `Nil` allocates nothing.
 *
 * Printing (value_print): scalars and tensors as Relay literals
 * (runtime/format.h), tuples `(a, b)` (a one-tuple `(a,)`), ADT values
 * `Cons(1, Nil)`, closures `<closure>`, references `ref(v)` (the current
 * contents). JSON (value_print_json): tensors as format.h's object, tuples
 * as arrays, ADT values {"constructor": "Cons", "fields": [...]}, closures
 * "<closure>", references {"ref": v}. Both are iterative.
 */
#ifndef RELAYC_RUNTIME_VALUE_H
#define RELAYC_RUNTIME_VALUE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ast.h"
#include "ir/dtype.h"
#include "runtime/tensor.h"

typedef enum {
  VK_NONE = 0,    /* empty register */
  VK_SCALAR = 1,  /* immediate rank-0 tensor; dtype in the tag */
  VK_TENSOR = 2,  /* Tensor * */
  VK_TUPLE = 3,   /* TupleObj * */
  VK_ADT = 4,     /* AdtObj * */
  VK_CLOSURE = 5, /* ClosureObj * */
  VK_REF = 6,     /* RefObj * */
} ValueKind;

/* Tag of an immediate of dtype code `c` and `b` bits. */
#define VTAG_SCALAR(c, b) ((uint32_t)VK_SCALAR | ((uint32_t)(c) << 8) | ((uint32_t)(b) << 16))
#define TAG_BOOL VTAG_SCALAR(DT_UINT, 1)
#define TAG_I8 VTAG_SCALAR(DT_INT, 8)
#define TAG_I16 VTAG_SCALAR(DT_INT, 16)
#define TAG_I32 VTAG_SCALAR(DT_INT, 32)
#define TAG_I64 VTAG_SCALAR(DT_INT, 64)
#define TAG_U8 VTAG_SCALAR(DT_UINT, 8)
#define TAG_U16 VTAG_SCALAR(DT_UINT, 16)
#define TAG_U32 VTAG_SCALAR(DT_UINT, 32)
#define TAG_U64 VTAG_SCALAR(DT_UINT, 64)
#define TAG_F32 VTAG_SCALAR(DT_FLOAT, 32)
#define TAG_F64 VTAG_SCALAR(DT_FLOAT, 64)

typedef struct Obj Obj;

typedef struct Value {
  uint32_t tag;  /* ValueKind in the low byte; for VK_SCALAR also dtype code (byte 1), bits (byte 2) */
  uint32_t aux;  /* float32 immediates: the float's bits (== f); otherwise zero */
  union {
    int64_t i;   /* VK_SCALAR integer / bool */
    double f;    /* VK_SCALAR float32 / float64 */
    Tensor *t;   /* VK_TENSOR */
    Obj *o;      /* VK_TUPLE, VK_ADT, VK_CLOSURE, VK_REF */
  };
} Value;

/* Common header of heap objects. */
struct Obj {
  uint32_t rc;    /* references alive; IMMORTAL objects start at VALUE_IMMORTAL_RC */
  uint8_t kind;   /* ValueKind of the object */
  uint8_t flags;  /* OBJ_IMMORTAL */
  uint16_t size_class; /* allocator bookkeeping */
};

enum { OBJ_IMMORTAL = 1 };
#define VALUE_IMMORTAL_RC (UINT32_C(1) << 30)

typedef struct TupleObj {
  Obj hdr;
  uint32_t n;
  uint32_t pad;
  Value f[];
} TupleObj;

typedef struct AdtObj {
  Obj hdr;
  const Ctor *ctor; /* tag = ctor->tag; field count = ctor->nfields */
  Value f[];
} AdtObj;

/* A closure's code is opaque here (eval/ owns it). */
typedef struct ClosureObj {
  Obj hdr;
  const void *code;
  uint32_t n;       /* captured values */
  uint32_t pad;
  Value cap[];
} ClosureObj;

typedef struct RefObj {
  Obj hdr;
  Value v;
  struct RefObj *prev, *next; /* every live cell, for value_clear_refs() */
} RefObj;

/* ------------------------------------------------------------ kinds, tags */

static inline ValueKind value_kind(Value v) { return (ValueKind)(v.tag & 0xff); }
static inline bool value_is_heap(Value v) { return (v.tag & 0xff) >= VK_TENSOR; }
static inline bool value_is_obj(Value v) { return (v.tag & 0xff) >= VK_TUPLE; }
/* The dtype of an immediate. */
static inline DType value_scalar_dtype(Value v) {
  return DTYPE((uint8_t)(v.tag >> 8), (uint8_t)(v.tag >> 16));
}
/* Whether dtype `dt` is kept as an immediate when rank 0. */
bool value_dtype_is_immediate(DType dt);

static inline Value value_none(void) { return (Value){0, 0, {.i = 0}}; }

/* ------------------------------------------------------------ immediates */

/* An integer immediate of integer/bool dtype `dt` (wrapped to its width). */
Value value_int(DType dt, int64_t v);
/* A float immediate of float32/float64 dtype `dt` (rounded to its width). */
Value value_float(DType dt, double v);
static inline Value value_i32(int32_t v) { return (Value){TAG_I32, 0, {.i = v}}; }
static inline Value value_i64(int64_t v) { return (Value){TAG_I64, 0, {.i = v}}; }
static inline Value value_bool(bool b) { return (Value){TAG_BOOL, 0, {.i = b ? 1 : 0}}; }
static inline uint32_t value_f32_bits(float v) {
  union { float f; uint32_t u; } c = {.f = v};
  return c.u;
}
static inline Value value_f32(float v) { return (Value){TAG_F32, value_f32_bits(v), {.f = (double)v}}; }
/* The float of a float32 immediate (from `aux`, no conversion). */
static inline float value_f32_of(const Value *v) {
  union { uint32_t u; float f; } c = {.u = v->aux};
  return c.f;
}
/* Stores float32 immediate x into *r, which must not hold a heap object:
 * the fields one by one (the next reader loads `aux` straight from this
 * store; the double is written alongside, off that path). */
static inline void value_set_f32(Value *r, float x) {
  r->tag = TAG_F32;
  r->aux = value_f32_bits(x);
  r->f = (double)x;
}
static inline Value value_f64(double v) { return (Value){TAG_F64, 0, {.f = v}}; }
/* Wraps an int64 into the range of integer dtype `dt` (bool: v != 0). */
int64_t value_wrap_int(DType dt, int64_t v);

/* ------------------------------------------------------------ tensors */

/* A tensor value (CONSUMES t). A rank-0 tensor of an immediate dtype becomes
 * an immediate (and t is released). */
Value value_from_tensor(Tensor *t);
/* The value as a tensor (borrows v): a tensor value is retained, an
 * immediate is materialised as a fresh rank-0 tensor. NULL for other kinds or
 * on allocation failure. */
Tensor *value_to_tensor(const Value *v);
/* A scalar (immediate or rank-0 tensor, borrowed) read as a bool, for `if`.
 * False when v is not a scalar. */
bool value_truthy(const Value *v, bool *out);

/* ------------------------------------------------------------ objects */

/* A tuple of n fields, all VK_NONE; the caller stores the fields. n == 0
 * returns the immortal unit. */
Value value_tuple_new(uint32_t n);
Value value_unit(void);
/* An ADT instance of `ctor` with its fields VK_NONE (the caller fills them);
 * a field-less ctor gives its shared immortal instance. */
Value value_adt_new(const Ctor *ctor);
/* A closure over `code` with n captures, all VK_NONE. */
Value value_closure_new(const void *code, uint32_t n);
/* A reference cell holding v (consumes v). */
Value value_ref_new(Value v);
/* An immortal closure (for globals as values); never freed before
 * value_heap_shutdown(). */
Value value_closure_immortal(const void *code);

static inline TupleObj *value_tuple(Value v) { return (TupleObj *)v.o; }
static inline AdtObj *value_adt(Value v) { return (AdtObj *)v.o; }
static inline ClosureObj *value_closure(Value v) { return (ClosureObj *)v.o; }
static inline RefObj *value_ref(Value v) { return (RefObj *)v.o; }

/* ------------------------------------------------------------ references */

void value_free_obj(Obj *o); /* slow path of value_release: frees o and what dies with it */

/* Another reference (borrows v; returns it). */
static inline Value value_retain(Value v) {
  uint32_t k = v.tag & 0xff;
  if (k >= VK_TUPLE) v.o->rc++;
  else if (k == VK_TENSOR) v.t->refcount++;
  return v;
}
/* Gives up one reference (consumes v). */
static inline void value_release(Value v) {
  uint32_t k = v.tag & 0xff;
  if (k >= VK_TUPLE) {
    if (--v.o->rc == 0) value_free_obj(v.o);
  } else if (k == VK_TENSOR) {
    tensor_release(v.t);
  }
}

/* Live heap objects (tuples, ADTs, closures, refs; not tensors, not immortals).
 * Tests use it to check for leaks. */
int64_t value_live_objects(void);
/* Bytes currently held by the object allocator (live + cached). */
size_t value_heap_bytes(void);
/* Empties every reference cell still alive (its contents are released), so
 * the objects and tensors kept alive only by cycles through refs are freed.
 * Call at the end of a run, after the result has been written out. */
void value_clear_refs(void);
/* Releases every cached chunk and immortal object. Call only when no value is
 * alive (at the end of a run, or between tests). */
void value_heap_shutdown(void);

/* ------------------------------------------------------------ equality, printing */

/* Structural equality (borrows both): scalars/tensors by dtype, shape and
 * bytes; tuples and ADTs fieldwise; closures and refs by identity. Iterative. */
bool value_equal(const Value *a, const Value *b);

/* Writes v (borrowed) as described at the top of this file. */
void value_print(FILE *out, const Value *v);
void value_print_json(FILE *out, const Value *v);
/* A short text for messages ("int32 scalar", "tensor of shape (2, 3)", ...)
 * into buf (at least 96 bytes); returns buf. */
char *value_describe(const Value *v, char *buf, size_t cap);

#endif
