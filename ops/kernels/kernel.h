/* ops/kernels/kernel.h — what an operator kernel sees: the KernelCtx API.
 *
 * The interpreter (eval/) runs an operator call by filling a KernelCtx and
 * calling the operator's OpDef.kernel (ops/registry.h). A kernel reads its
 * inputs as tensors, its normalised attributes, optionally the inferred
 * output type, and produces its result with kernel_output() (one tensor),
 * kernel_set_output() (a tensor it built itself, e.g. a reused input) or
 * kernel_set_tuple() (ops returning a tuple: split, batch_norm...). It
 * returns KERNEL_OK, or kernel_fail(...) which records a message that the
 * interpreter reports at the call's span with exit status 3.
 *
 *     int kernel_NEGATIVE(KernelCtx *c) {
 *       const Tensor *x = kernel_input(c, 0);
 *       Tensor *y = kernel_output_like(c, x);      // or an in-place reuse
 *       if (!y) return KERNEL_ERROR;                // message already set
 *       ... fill y ...
 *       return KERNEL_OK;
 *     }
 *
 * WIRING: ops/registry.c declares, for every row OP(ID, ...) of
 * ops/op_table.def, a WEAK function `int kernel_ID(KernelCtx *)`, and the row's
 * kernel column is its address (NULL while nobody defines it). Adding a kernel
 * = defining `int kernel_ID(KernelCtx *c)` in some ops/kernels/k_*.c file. The binary
 * and the tests link every object file directly (not through an archive), so
 * a definition anywhere is found; nothing else needs registering.
 *
 * OWNERSHIP (runtime/tensor.h's rule): inputs are BORROWED by the kernel;
 * kernel_take_input() hands a dying input (refcount 1, writable) to the
 * kernel for in-place reuse, or NULL. Outputs set with kernel_set_output /
 * kernel_set_tuple are CONSUMED by the context.
 *
 * THREADS: kernels split work with kernel_parallel_for (ggml-style ith/nth
 * chunks); the body must only read inputs and write its own slice of the
 * outputs, and must not retain/release tensors. Chunks run on the
 * persistent pool of runtime/threadpool.h (cores − 1 workers plus the
 * caller; RELAYC_NUM_THREADS overrides the count); a nested call runs inline.
 *
 * SCALARS: the interpreter evaluates operators on immediate scalars itself
 * (kscalar_binary / kscalar_unary below), without building a KernelCtx; the
 * tensor kernels and the scalar path share the same per-element semantics
 * (spec/ops.md §2).
 */
#ifndef RELAYC_OPS_KERNEL_H
#define RELAYC_OPS_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ast.h"
#include "ops/registry.h"
#include "runtime/tensor.h"
#include "runtime/value.h"

enum { KERNEL_OK = 0, KERNEL_ERROR = 1 };

#define KERNEL_MAX_OUTPUTS 64
#define KERNEL_ERR_SIZE 256

struct KernelCtx {
  int32_t op_id;          /* registry id of the operator */
  const OpDef *op;
  uint32_t ninputs;
  Tensor **inputs;        /* borrowed; an entry becomes NULL once taken */
  const Attrs *attrs;     /* normalised call attributes (NULL: all defaults) */
  const Type *out_type;   /* inferred result type of the call, or NULL */
  /* results */
  Tensor *out;            /* single result */
  Tensor **outs;          /* tuple result (mem_malloc'ed), when is_tuple */
  uint32_t nouts;
  bool is_tuple;
  char err[KERNEL_ERR_SIZE]; /* message of kernel_fail */
  int nthreads;           /* worker count for kernel_parallel_for (>= 1) */
};

/* ---- inputs ------------------------------------------------------------ */
static inline uint32_t kernel_ninputs(const KernelCtx *c) { return c->ninputs; }
static inline const Tensor *kernel_input(const KernelCtx *c, uint32_t i) { return c->inputs[i]; }
/* The input itself for in-place reuse when it is dying (unique and writable):
 * the kernel now owns it (set it as the output or release it). NULL when it
 * is shared; then allocate. */
Tensor *kernel_take_input(KernelCtx *c, uint32_t i);

/* ---- attributes (fall back to the schema default when absent) ------------ */
const AttrValue *kernel_attr(const KernelCtx *c, const char *name);
int64_t kernel_attr_int(const KernelCtx *c, const char *name, int64_t dflt);
double kernel_attr_double(const KernelCtx *c, const char *name, double dflt);
bool kernel_attr_bool(const KernelCtx *c, const char *name, bool dflt);
/* String attribute (a dtype, a layout...): dflt when absent or None. */
const char *kernel_attr_str(const KernelCtx *c, const char *name, const char *dflt);
/* Integer array attribute: number of elements (-1 when absent/None/not an
 * array); at most `cap` are stored in out. */
int32_t kernel_attr_ints(const KernelCtx *c, const char *name, int64_t *out, int32_t cap);
/* A dtype attribute; false when absent or "" (unset). */
bool kernel_attr_dtype(const KernelCtx *c, const char *name, DType *out);

/* ---- outputs ------------------------------------------------------------ */
/* Allocates the single result (uninitialised) and returns it (the context
 * keeps the reference). NULL after setting an error on failure. */
Tensor *kernel_output(KernelCtx *c, DType dt, int32_t ndim, const int64_t *shape);
Tensor *kernel_output_like(KernelCtx *c, const Tensor *like);
/* Sets the single result (consumes t). */
void kernel_set_output(KernelCtx *c, Tensor *t);
/* Sets a tuple result of n tensors (consumes each). */
void kernel_set_tuple(KernelCtx *c, Tensor **ts, uint32_t n);
/* Records an error message; returns KERNEL_ERROR. */
int kernel_fail(KernelCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- work splitting ---------------------------------------------------- */
typedef void (*KernelRangeFn)(void *arg, int64_t lo, int64_t hi);
/* Runs body over [0, n) in contiguous chunks (at least `grain` items each). */
void kernel_parallel_for(KernelCtx *c, int64_t n, int64_t grain, KernelRangeFn body, void *arg);

/* ---- context lifecycle (used by the interpreter) ------------------------- */
void kernel_ctx_init(KernelCtx *c, int32_t op_id, Tensor **inputs, uint32_t n, const Attrs *attrs,
                     const Type *out_type);
/* Releases remaining inputs (not taken) and any results still held. */
void kernel_ctx_clear(KernelCtx *c);

/* ---- broadcasting helpers (numpy rules, spec/ops.md §1.6) ----------------- */
/* Output shape of broadcasting a and b; false if incompatible. */
bool kernel_broadcast_shape(const Tensor *a, const Tensor *b, int32_t *ndim, int64_t *shape);
/* Records "<op>: shapes A and B cannot be broadcast together"; returns KERNEL_ERROR. */
int kernel_fail_broadcast(KernelCtx *c, const char *op, const Tensor *a, const Tensor *b);

/* ---- scalar fast path used by the interpreter -------------------------- */
/* Evaluates elementwise binary op `op_id` on two immediates of the same
 * dtype. Returns KERNEL_OK with *out set, KERNEL_ERROR with a message in err
 * (KERNEL_ERR_SIZE) — e.g. integer division by zero — or -1 when the op has
 * no scalar path (the caller then goes through the tensor kernel). */
int kscalar_binary(int32_t op_id, Value a, Value b, Value *out, char *err);
int kscalar_unary(int32_t op_id, Value a, Value *out, char *err);

#endif
