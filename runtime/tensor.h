/* runtime/tensor.h — run-time tensors: refcounted, 64-byte aligned, compact.
 *
 * Vocabulary is DLPack's (DLTensor): data, ndim, dtype (code/bits/lanes, see
 * ir/dtype.h), shape (int64 extents) and strides. relayc tensors are ALWAYS
 * compact row-major (C order): `strides` is always NULL, which in DLPack means
 * "compact". Should strides ever be kept they count ELEMENTS, not bytes.
 * Element i (flat, row-major) of a tensor lives at
 * (char *)data + i * dtype_size(dtype); bool elements are one byte 0/1.
 *
 * OWNERSHIP — the one rule (as in jq's jv.h):
 *   A function CONSUMES the references passed to it unless it is documented
 *   as BORROWING. Every function returning a Tensor * returns a new reference
 *   owned by the caller (or NULL on failure). tensor_retain() copies a
 *   reference; tensor_release() gives one up.
 *   In this header every borrowing function takes `const Tensor *` (or says
 *   "borrows" for the element setters), so the type tells you.
 *
 * THREADS: the refcount is a plain integer, not atomic. relayc's interpreter
 * is single-threaded; kernels may READ (and write the data of their own
 * output) from worker threads, but references are retained and released only
 * on the main thread.
 *
 * STORAGE: tensors made here own their data: one posix_memalign'ed block,
 * 64-byte aligned, padded up to a multiple of 64 bytes (never NULL, even for
 * zero elements). tensor_from_const() instead BORROWS a module constant's data
 * (no copy): such a tensor is read-only, its data lives as long as the module
 * (ir/ast.h ConstTensor) and it must not outlive it. In-place kernels check
 * tensor_is_unique() before overwriting an input.
 *
 *     int64_t shape[2] = {2, 3};
 *     Tensor *t = tensor_new(DT_F32, 2, shape);     // NULL if too big / OOM
 *     float *p = t->data;                           // 6 floats, uninitialised
 *     Tensor *u = tensor_retain(t);                 // refcount 2
 *     tensor_release(t); tensor_release(u);         // freed
 */
#ifndef RELAYC_RUNTIME_TENSOR_H
#define RELAYC_RUNTIME_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ast.h"
#include "ir/dtype.h"

/* Largest rank accepted (numpy's own limit is 64 since 2.0, 32 before). */
#define TENSOR_MAX_NDIM 64
/* Largest data block tensor_new() will ask the allocator for (1 TiB): bigger
 * requests fail with TENSOR_ETOOBIG before reaching malloc, so an absurd
 * shape from a corrupt file is an error, never an abort or an OOM kill. */
#define TENSOR_MAX_BYTES ((uint64_t)1 << 40)
/* Alignment of owned data, in bytes. */
#define TENSOR_ALIGN 64

typedef enum {
  TENSOR_OK = 0,      /* success */
  TENSOR_EBADSHAPE,   /* negative extent, or ndim outside 0..TENSOR_MAX_NDIM */
  TENSOR_EBADDTYPE,   /* bits == 0 or lanes == 0 */
  TENSOR_ETOOBIG,     /* element count or byte size overflows, or exceeds TENSOR_MAX_BYTES */
  TENSOR_ENOMEM,      /* the allocator failed */
} TensorError;

enum {
  TENSOR_BORROWED = 1u << 0, /* data is not owned (tensor_from_const): never freed here */
  TENSOR_READONLY = 1u << 1, /* data must not be written (module constants) */
  TENSOR_ZERO = 1u << 2,     /* every element is +0 (tensor_new_zero; with BORROWED | READONLY) */
};

typedef struct Tensor {
  void *data;        /* first element; 64-byte aligned when owned; never NULL */
  DType dtype;       /* element type; lanes > 1 is a vector element */
  int32_t ndim;      /* rank; 0 is a scalar */
  int64_t *shape;    /* ndim extents, each >= 0 (points into this struct) */
  int64_t *strides;  /* always NULL: compact row-major (would count elements) */
  int64_t numel;     /* product of shape (1 for a scalar) */
  uint64_t nbytes;   /* numel * dtype_size(dtype): bytes of data in use */
  uint64_t refcount; /* references alive; main thread only, not atomic */
  uint32_t flags;    /* TENSOR_BORROWED | TENSOR_READONLY */
  struct Tensor *base; /* a view (tensor_reshape): the tensor owning `data`, held by
                          this one (never itself a view); NULL otherwise */
  int64_t dims[];    /* storage behind `shape` */
} Tensor;

/* ----------------------------------------------------------- construction */

/* A new tensor with uninitialised data, refcount 1. Checked: a negative
 * extent, an element count or byte size that overflows or exceeds
 * TENSOR_MAX_BYTES, or an allocation failure give NULL and, when `err` is not
 * NULL, the reason. `shape` is copied (borrowed; may be NULL when ndim == 0). */
Tensor *tensor_new_checked(DType dtype, int32_t ndim, const int64_t *shape, TensorError *err);
/* Same, when the caller only needs to know that it failed. */
Tensor *tensor_new(DType dtype, int32_t ndim, const int64_t *shape);
/* Same, with data zeroed. */
Tensor *tensor_new_zeros(DType dtype, int32_t ndim, const int64_t *shape);
/* A read-only tensor of +0s whose data is a window of one process-wide
 * read-only anonymous mapping (every page is the kernel's zero page): no
 * memory, no memset, whatever the size. Flags BORROWED | READONLY | ZERO, so
 * kernels that see TENSOR_ZERO may skip work (add(0, x) = x). Falls back to
 * tensor_new_zeros (flag ZERO only) when the mapping cannot hold it. */
Tensor *tensor_new_zero(DType dtype, int32_t ndim, const int64_t *shape);
/* An uninitialised tensor with the dtype and shape of `like` (borrows). */
Tensor *tensor_new_like(const Tensor *like);

/* A process-wide memory budget for fuzzers and sandboxes (0 = none):
 * tensor_new fails with TENSOR_ETOOBIG for a data block over `max_bytes`, or
 * when the owned data of every live tensor would exceed `max_live_bytes`
 * (kernels report it as "tensor too large" / out of memory, a run-time
 * error). Set it before any tensor exists (tests/fuzz/fuzz_passes.c). */
void tensor_set_budget(uint64_t max_bytes, uint64_t max_live_bytes);

/* Rank-0 tensors holding one value. NULL only on allocation failure. The int
 * form converts to any integer dtype (wrapping like a C cast) or float dtype;
 * the float form to any float dtype (float16 rounds to nearest even) or, by
 * truncation, to an integer dtype. */
Tensor *tensor_new_scalar_int(DType dtype, int64_t v);
Tensor *tensor_new_scalar_float(DType dtype, double v);
Tensor *tensor_new_scalar_bool(bool v);
Tensor *tensor_new_scalar_i32(int32_t v);
Tensor *tensor_new_scalar_i64(int64_t v);
Tensor *tensor_new_scalar_f32(float v);
Tensor *tensor_new_scalar_f64(double v);

/* Wraps a module constant WITHOUT copying (borrows `c`): the result has
 * TENSOR_BORROWED | TENSOR_READONLY, its data is c->data and stays valid only
 * while the module lives. NULL on allocation failure or a malformed constant. */
Tensor *tensor_from_const(const ConstTensor *c);

/* A deep, writable, owned copy (borrows `t`). NULL on failure. */
Tensor *tensor_copy(const Tensor *t);

/* The same elements under another shape, WITHOUT copying (CONSUMES `t`):
 * numel must be unchanged (else NULL). When `t` is unique and the rank does
 * not grow its header is rewritten in place; otherwise the result is a view
 * holding a reference to the storage (its `base`). A view is unique (may be
 * written in place) only while nothing else refers to that storage; a view of
 * read-only data is read-only. NULL on allocation failure (`t` released). */
Tensor *tensor_reshape(Tensor *t, int32_t ndim, const int64_t *shape);

/* ------------------------------------------------------------- references */

/* Another reference to `t` (borrows `t`, returns it). NULL passes through. */
Tensor *tensor_retain(Tensor *t);
/* Gives up one reference (CONSUMES `t`); frees at zero. NULL is ignored. */
void tensor_release(Tensor *t);
/* CONSUMES `t`: returns `t` itself when it may be written in place
 * (tensor_is_unique), else a writable copy (releasing `t`). NULL on failure
 * (then `t` has still been released). */
Tensor *tensor_make_writable(Tensor *t);

/* ------------------------------------------------- queries (all borrowing) */

/* True when `t` is the only reference AND its data is writable: an in-place
 * kernel may then overwrite it and return it as its result. */
bool tensor_is_unique(const Tensor *t);
/* Every element is known to be +0 (tensor_new_zero, or a view of one). */
bool tensor_is_zero(const Tensor *t);
bool tensor_is_writable(const Tensor *t);
int64_t tensor_numel(const Tensor *t);
uint64_t tensor_nbytes(const Tensor *t);
/* Same dtype and shape. */
bool tensor_same_type(const Tensor *a, const Tensor *b);
/* Same dtype, shape and bytes (NaNs compare by bit pattern). */
bool tensor_equal(const Tensor *a, const Tensor *b);
/* Text for an error code ("tensor too large", ...). */
const char *tensor_error_message(TensorError e);

/* Checked element count of a shape: false when an extent is negative or the
 * product overflows int64. */
bool tensor_shape_numel(int32_t ndim, const int64_t *shape, int64_t *numel);

/* --------------------------------------------- element access (for tests, printing)
 * `i` is a flat row-major index of a scalar LANE: 0 <= i < numel * lanes.
 * Reads convert to the requested C type (float16/bfloat16/float8 decoded,
 * bool as 0/1); writes convert by spec/ops.md §2 (float16 rounds to nearest
 * even, a float into an integer lane saturates: tensor_f64_to_int, bool
 * stores v != 0, an integer into a narrower one wraps). The setters borrow `t` and write through even
 * if it is shared: they are for building test data, not for kernels. */
double tensor_get_f64(const Tensor *t, int64_t i);
int64_t tensor_get_i64(const Tensor *t, int64_t i);
void tensor_set_f64(Tensor *t, int64_t i, double v);
void tensor_set_i64(Tensor *t, int64_t i, int64_t v);

/* The same conversions on one raw lane at `p` (for code walking data itself). */
double tensor_load_f64(DType dtype, const void *p);
int64_t tensor_load_i64(DType dtype, const void *p);
void tensor_store_f64(DType dtype, void *p, double v);
void tensor_store_i64(DType dtype, void *p, int64_t v);

/* The float -> integer cast of spec/ops.md §2, the one every kernel, the
 * interpreter's immediates and constant folding use: truncate toward zero,
 * saturate at the range of `dt` (int/uint of any width), NaN -> 0; bool is
 * x != 0 with NaN False. C's own conversion is undefined out of range. The
 * result is the lane's bit pattern as int64 (a uint64 above INT64_MAX comes
 * back negative, as tensor_store_i64 takes it). tensor_store_f64 into an
 * integer lane goes through it. */
int64_t tensor_f64_to_int(DType dt, double v);

/* Tunes the C heap for a run: freed tensor memory stays mapped for reuse
 * (fewer page faults). Call once before evaluating. */
void tensor_heap_keep_freed(void);

#endif
