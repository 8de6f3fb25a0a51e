/* ops/foreign/ffi.c — binding foreign-operator declarations: dlopen/dlsym, libffi
 * call interfaces, and the generated type relation and kernel.
 *
 * State is process-wide and append-only: every ForeignOp and ForeignFn lives
 * in one arena that is never freed (their addresses are baked into ffi_cif
 * structures and the registry), and libraries are never closed. Each
 * ForeignOp is registered once through op_register with foreign_rel and
 * foreign_kernel; both find their ForeignOp again by registry id and pick the
 * overload (ForeignFn) whose declared input dtypes equal the actual ones.
 *
 * Trade-offs: the elementwise kernel makes one ffi_call per element (the
 * price of calling an arbitrary prototype without generating code) on the
 * calling thread only — foreign code is not assumed to be thread-safe.
 * Arguments are passed by pointing libffi straight at the input elements
 * (their C type equals the tensor dtype), so no conversion happens per call.
 */
#include "ops/foreign/ffi.h"

#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <ffi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/mem.h"
#include "ops/foreign/ffi_decl.h"
#include "ops/kernels/kernel.h"
#include "ops/registry.h"
#include "ops/relations/type_rel.h"

static_assert(sizeof(int) == 4, "C int must be int32 for the int mapping");
static_assert(sizeof(size_t) == 8 || sizeof(size_t) == 4, "unexpected size_t");

/* What a buffer function's parameter carries. */
typedef enum {
  ROLE_INPUT,  /* const T *: an input tensor's data */
  ROLE_OUTPUT, /* T *: the output tensor's data */
  ROLE_COUNT,  /* integer: an element count */
} ParamRole;

/* One overload: a bound symbol with its call interface. Never moves. */
typedef struct ForeignFn {
  const char *symbol;
  void (*fn)(void);
  ffi_cif cif;
  ffi_type *atypes[FDECL_MAX_PARAMS];
  FdeclType ret;
  FdeclType params[FDECL_MAX_PARAMS];
  uint32_t nparams;
  DType in_dt[FDECL_MAX_PARAMS]; /* dtype of each tensor input */
  DType out_dt;
  /* buffer mapping only */
  uint8_t role[FDECL_MAX_PARAMS];
  int8_t tensor[FDECL_MAX_PARAMS];  /* INPUT: input index; COUNT: input index, or -1 = output */
  bool has_count[FDECL_MAX_PARAMS]; /* by input index: a count parameter follows it */
} ForeignFn;

/* One registered operator and its overloads. */
typedef struct ForeignOp {
  int32_t id;
  const char *name;
  FdeclMapping mapping;
  uint32_t ninputs;
  int32_t shape_from;
  ForeignFn **fns;
  uint32_t nfns;
} ForeignOp;

static struct {
  Arena *arena;    /* owns everything below; lives as long as the process */
  ForeignOp **ops; /* mem_realloc'ed */
  uint32_t nops, cap;
} fg;

/* Everything one declaration's binding needs to report an error. */
typedef struct BindCx {
  Diag *d;
  const char *base_dir; /* directory relative library paths start from, or NULL */
} BindCx;

/* ------------------------------------------------------------ lookups */

static ForeignOp *op_by_id(int32_t id) {
  for (uint32_t i = 0; i < fg.nops; i++)
    if (fg.ops[i]->id == id) return fg.ops[i];
  return NULL;
}

static bool dtypes_match(const ForeignFn *f, const DType *dts, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!dtype_eq(f->in_dt[i], dts[i])) return false;
  return true;
}

static ForeignFn *fn_for(const ForeignOp *op, const DType *dts) {
  for (uint32_t i = 0; i < op->nfns; i++)
    if (dtypes_match(op->fns[i], dts, op->ninputs)) return op->fns[i];
  return NULL;
}

/* "(float32, float32) -> float32" for the overload list in messages. */
static void sig_str(const ForeignFn *f, uint32_t n, char *buf, size_t len) {
  size_t k = 0;
  char b[32];
  k += (size_t)snprintf(buf + k, len - k, "(");
  for (uint32_t i = 0; i < n && k < len; i++)
    k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", dtype_name(f->in_dt[i], b));
  if (k < len) snprintf(buf + k, len - k, ") -> %s", dtype_name(f->out_dt, b));
}

/* ------------------------------------------------------ C types → dtypes */

static DType base_dtype(FdeclBase b) {
  switch (b) {
  case FC_FLOAT: return DT_F32;
  case FC_DOUBLE: return DT_F64;
  case FC_I32: return DT_I32;
  case FC_I64: return DT_I64;
  default: return DTYPE(DT_HANDLE, 0);
  }
}

static bool is_data_base(FdeclBase b) { return b == FC_FLOAT || b == FC_DOUBLE || b == FC_I32 || b == FC_I64; }
static bool is_count_base(FdeclBase b) { return b == FC_I32 || b == FC_I64 || b == FC_SIZE; }

static ffi_type *ffi_type_of(const FdeclType *t) {
  if (t->pointer) return &ffi_type_pointer;
  switch (t->base) {
  case FC_VOID: return &ffi_type_void;
  case FC_FLOAT: return &ffi_type_float;
  case FC_DOUBLE: return &ffi_type_double;
  case FC_I32: return &ffi_type_sint32;
  case FC_I64: return &ffi_type_sint64;
  case FC_SIZE: return sizeof(size_t) == 8 ? &ffi_type_uint64 : &ffi_type_uint32;
  }
  UNREACHABLE();
}

/* --------------------------------------------------------- signature checks */

static bool check_elementwise(const FdeclDecl *dc, ForeignFn *f, Diag *d) {
  char b[48];
  if (dc->ret.pointer || !is_data_base(dc->ret.base)) {
    diag_error(d, dc->ret.span, "an elementwise function must return float, double, int32_t or int64_t, not '%s'",
               fdecl_type_str(&dc->ret, b, sizeof b));
    return false;
  }
  if (dc->nparams == 0) {
    diag_error(d, dc->sym_span, "an elementwise function needs at least one parameter (one per input tensor)");
    return false;
  }
  for (uint32_t i = 0; i < dc->nparams; i++) {
    const FdeclType *t = &dc->params[i];
    if (t->pointer || !is_data_base(t->base)) {
      diag_error(d, t->span, "parameter %u of an elementwise function must be float, double, int32_t or int64_t, not '%s'%s",
                 i + 1, fdecl_type_str(t, b, sizeof b), t->pointer ? " (use 'buffer' for pointers)" : "");
      return false;
    }
    f->in_dt[i] = base_dtype(t->base);
  }
  f->out_dt = base_dtype(dc->ret.base);
  return true;
}

/* Classifies one buffer parameter; `last_ptr` is the input index of the
 * closest pointer before it (-1: the output or none). */
static bool buffer_param(const FdeclDecl *dc, ForeignFn *f, uint32_t i, uint32_t *nin, int *nout, int *last,
                         Diag *d) {
  const FdeclType *t = &dc->params[i];
  char b[48];
  if (t->pointer && !is_data_base(t->base)) {
    diag_error(d, t->span, "'%s' is not a tensor element type (float, double, int32_t, int64_t)",
               fdecl_type_str(t, b, sizeof b));
    return false;
  }
  if (t->pointer && t->is_const) {
    f->role[i] = ROLE_INPUT;
    f->tensor[i] = (int8_t)*nin;
    f->in_dt[*nin] = base_dtype(t->base);
    *last = (int)(*nin)++;
  } else if (t->pointer) {
    if (++*nout > 1) {
      diag_error(d, t->span, "a buffer function has exactly one output (one non-const pointer); inputs are 'const'");
      return false;
    }
    f->role[i] = ROLE_OUTPUT;
    f->out_dt = base_dtype(t->base);
    *last = -1;
  } else if (is_count_base(t->base)) {
    f->role[i] = ROLE_COUNT;
    f->tensor[i] = (int8_t)*last;
    if (*last >= 0) f->has_count[*last] = true;
  } else {
    diag_error(d, t->span, "a buffer function takes only pointers and element counts; parameter %u is '%s'", i + 1,
               fdecl_type_str(t, b, sizeof b));
    return false;
  }
  return true;
}

static bool check_buffer(const FdeclDecl *dc, ForeignFn *f, uint32_t *ninputs, Diag *d) {
  char b[48];
  if (dc->ret.pointer || (dc->ret.base != FC_VOID && dc->ret.base != FC_I32)) {
    diag_error(d, dc->ret.span, "a buffer function returns void or an int status (0 = success), not '%s'",
               fdecl_type_str(&dc->ret, b, sizeof b));
    return false;
  }
  uint32_t nin = 0;
  int nout = 0, last = -1;
  for (uint32_t i = 0; i < dc->nparams; i++)
    if (!buffer_param(dc, f, i, &nin, &nout, &last, d)) return false;
  if (nout == 0) {
    diag_error(d, dc->decl_span, "a buffer function needs an output: one non-const pointer parameter");
    return false;
  }
  if (nin == 0) {
    diag_error(d, dc->decl_span, "a buffer function needs at least one input: a 'const T *' parameter");
    return false;
  }
  if ((uint32_t)dc->shape_from >= nin) {
    diag_error(d, dc->mapping_span, "the output takes the shape of input %d, but the function has %u input%s",
               dc->shape_from, nin, nin == 1 ? "" : "s");
    return false;
  }
  *ninputs = nin;
  return true;
}

/* ------------------------------------------------------------ libraries */

/* dlerror() text without a leading "<path>: " (the message names the library). */
static const char *dl_reason(const char *path) {
  const char *e = dlerror();
  if (!e) return "unknown error";
  size_t n = strlen(path);
  if (strncmp(e, path, n) == 0 && e[n] == ':' && e[n + 1] == ' ') return e + n + 2;
  return e;
}

static void *open_library(const FdeclDecl *dc, const BindCx *bx) {
  const char *lib = dc->library;
  char *joined = NULL;
  if (bx->base_dir && lib[0] != '/' && strchr(lib, '/')) {
    joined = mem_malloc(strlen(bx->base_dir) + strlen(lib) + 2);
    sprintf(joined, "%s/%s", bx->base_dir, lib);
    lib = joined;
  }
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) diag_error(bx->d, dc->lib_span, "cannot open library '%s': %s", lib, dl_reason(lib));
  mem_free(joined);
  return h;
}

static bool bind_symbol(const FdeclDecl *dc, ForeignFn *f, const BindCx *bx) {
  void *h = open_library(dc, bx);
  if (!h) return false;
  dlerror();
  void *sym = dlsym(h, dc->symbol);
  if (!sym) {
    diag_error(bx->d, dc->sym_span, "symbol '%s' not found in '%s'", dc->symbol, dc->library);
    return false;
  }
  /* POSIX guarantees data and function pointers convert for dlsym results */
  memcpy(&f->fn, &sym, sizeof f->fn);
  for (uint32_t i = 0; i < dc->nparams; i++) f->atypes[i] = ffi_type_of(&dc->params[i]);
  if (ffi_prep_cif(&f->cif, FFI_DEFAULT_ABI, dc->nparams, ffi_type_of(&dc->ret), f->atypes) != FFI_OK) {
    diag_error(bx->d, dc->decl_span, "libffi cannot build a call interface for this prototype");
    return false;
  }
  return true;
}

/* ---------------------------------------------------- the generated relation */

static ForeignOp *rel_op(TypeRelCtx *c) { return op_by_id(op_lookup(rel_op_name(c))); }

/* Broadcasts `t` into the dims of `o` (right-aligned); false after an error. */
static bool rel_broadcast_into(TypeRelCtx *c, Type *o, const Type *t) {
  uint32_t n = o->tensor.ndim, m = t->tensor.ndim;
  for (uint32_t i = 1; i <= m; i++) {
    Dim *x = &o->tensor.dims[n - i];
    Dim y = t->tensor.dims[m - i];
    if (dim_known(y) && y.value == 1) continue;
    if ((dim_known(*x) && x->value == 1) || (!dim_known(*x) && dim_known(y))) *x = y;
    else if (dim_known(*x) && dim_known(y) && x->value != y.value) {
      rel_fail(c, "incompatible broadcast: dimension %lld vs %lld", (long long)x->value, (long long)y.value);
      return false;
    }
  }
  return true;
}

static int rel_elementwise(TypeRelCtx *c, const ForeignOp *op, const ForeignFn *f, const Type **in) {
  uint32_t nd = 0;
  for (uint32_t i = 0; i < op->ninputs; i++)
    if (in[i]->tensor.ndim > nd) nd = in[i]->tensor.ndim;
  Type *o = rel_new_tensor(c, f->out_dt, nd);
  for (uint32_t i = 0; i < nd; i++) o->tensor.dims[i] = dim_int(1);
  for (uint32_t i = 0; i < op->ninputs; i++)
    if (!rel_broadcast_into(c, o, in[i])) return REL_FAIL;
  return rel_assign(c, op->ninputs, o) ? REL_DONE : REL_FAIL;
}

/* Element count of a type when every dim is known, else -1. */
static int64_t known_numel(const Type *t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    if (!dim_known(t->tensor.dims[i])) return -1;
    if (__builtin_mul_overflow(n, t->tensor.dims[i].value, &n)) return -1;
  }
  return n;
}

static int rel_buffer(TypeRelCtx *c, const ForeignOp *op, const ForeignFn *f, const Type **in) {
  const Type *like = in[op->shape_from];
  int64_t out_n = known_numel(like);
  for (uint32_t i = 0; i < op->ninputs && out_n >= 0; i++) {
    int64_t k = known_numel(in[i]);
    if (!f->has_count[i] && k >= 0 && k != out_n)
      return rel_fail(c, "input %u has %lld elements but the output has %lld, and %s gets no count for it", i,
                      (long long)k, (long long)out_n, f->symbol);
  }
  return rel_assign(c, op->ninputs, rel_retype(c, like, f->out_dt)) ? REL_DONE : REL_FAIL;
}

static int foreign_rel(TypeRelCtx *c) {
  ForeignOp *op = rel_op(c);
  if (!op) return rel_fail(c, "not a foreign operator");
  const Type *in[FDECL_MAX_PARAMS];
  DType dts[FDECL_MAX_PARAMS];
  for (uint32_t i = 0; i < op->ninputs; i++) {
    if (!(in[i] = rel_tensor(c, i))) return rel_pending(c);
    dts[i] = in[i]->tensor.dtype;
  }
  const ForeignFn *f = fn_for(op, dts);
  if (!f) {
    char want[256] = "", got[160] = "", b[32];
    size_t k = 0;
    for (uint32_t i = 0; i < op->ninputs && k < sizeof got; i++)
      k += (size_t)snprintf(got + k, sizeof got - k, "%s%s", i ? ", " : "", dtype_name(dts[i], b));
    k = 0;
    for (uint32_t i = 0; i < op->nfns && k < sizeof want; i++) {
      char s[160];
      sig_str(op->fns[i], op->ninputs, s, sizeof s);
      k += (size_t)snprintf(want + k, sizeof want - k, "%s%s", i ? ", " : "", s);
    }
    return rel_fail(c, "no foreign function takes (%s); declared: %s", got, want);
  }
  return op->mapping == FMAP_ELEMWISE ? rel_elementwise(c, op, f, in) : rel_buffer(c, op, f, in);
}

/* ------------------------------------------------------ the generated kernel */

/* Calls f once and stores its result at `out` (dtype f->out_dt). */
static inline void call_store(const ForeignFn *f, void **args, void *out) {
  union { ffi_arg a; ffi_sarg s; float f32; double f64; int64_t i64; } r;
  ffi_call((ffi_cif *)&f->cif, f->fn, &r, args);
  switch (f->ret.base) {
  case FC_FLOAT: *(float *)out = r.f32; break;
  case FC_DOUBLE: *(double *)out = r.f64; break;
  case FC_I32: *(int32_t *)out = (int32_t)r.s; break;
  default: *(int64_t *)out = r.i64; break;
  }
}

/* Output shape of broadcasting every input; false if incompatible. */
static bool kernel_shape(KernelCtx *c, uint32_t n, int32_t *nd, int64_t *shape) {
  *nd = 0;
  for (uint32_t i = 0; i < n; i++)
    if (kernel_input(c, i)->ndim > *nd) *nd = kernel_input(c, i)->ndim;
  for (int32_t d = 0; d < *nd; d++) shape[d] = 1;
  for (uint32_t i = 0; i < n; i++) {
    const Tensor *t = kernel_input(c, i);
    for (int32_t d = 0; d < t->ndim; d++) {
      int64_t *x = &shape[*nd - t->ndim + d], y = t->shape[d];
      if (y == 1) continue;
      if (*x != 1 && *x != y) return false;
      *x = y;
    }
  }
  return true;
}

/* The general broadcasting loop: an odometer over the output index keeps a
 * byte offset into every input. */
static void elementwise_strided(const ForeignFn *f, KernelCtx *c, Tensor *out, uint32_t n) {
  int32_t nd = out->ndim;
  int64_t *stride = mem_calloc((size_t)n * (size_t)nd + (size_t)nd + 1, sizeof *stride);
  int64_t *idx = stride + (size_t)n * (size_t)nd;
  char *base[FDECL_MAX_PARAMS];
  int64_t off[FDECL_MAX_PARAMS] = {0};
  void *args[FDECL_MAX_PARAMS];
  for (uint32_t k = 0; k < n; k++) {
    const Tensor *t = kernel_input(c, k);
    int64_t s = (int64_t)dtype_size(t->dtype);
    base[k] = t->data;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
      stride[k * (uint32_t)nd + (uint32_t)(nd - t->ndim + d)] = t->shape[d] == 1 ? 0 : s;
      s *= t->shape[d];
    }
  }
  size_t osz = dtype_size(out->dtype);
  for (int64_t i = 0; i < out->numel; i++) {
    for (uint32_t k = 0; k < n; k++) args[k] = base[k] + off[k];
    call_store(f, args, (char *)out->data + (size_t)i * osz);
    for (int32_t d = nd - 1; d >= 0; d--) { /* advance the odometer */
      for (uint32_t k = 0; k < n; k++) off[k] += stride[k * (uint32_t)nd + (uint32_t)d];
      if (++idx[d] < out->shape[d]) break;
      for (uint32_t k = 0; k < n; k++) off[k] -= stride[k * (uint32_t)nd + (uint32_t)d] * out->shape[d];
      idx[d] = 0;
    }
  }
  mem_free(stride);
}

static int run_elementwise(KernelCtx *c, const ForeignOp *op, const ForeignFn *f) {
  int32_t nd;
  int64_t shape[TENSOR_MAX_NDIM];
  if (!kernel_shape(c, op->ninputs, &nd, shape)) return kernel_fail(c, "%s: incompatible broadcast", op->name);
  Tensor *out = kernel_output(c, f->out_dt, nd, shape);
  if (!out) return KERNEL_ERROR;
  bool flat = true;
  char *p[FDECL_MAX_PARAMS];
  size_t step[FDECL_MAX_PARAMS];
  for (uint32_t k = 0; k < op->ninputs; k++) {
    const Tensor *t = kernel_input(c, k);
    flat &= t->numel == out->numel || t->numel == 1;
    p[k] = t->data;
    step[k] = t->numel == 1 ? 0 : dtype_size(t->dtype);
  }
  if (!flat) {
    elementwise_strided(f, c, out, op->ninputs);
    return KERNEL_OK;
  }
  size_t osz = dtype_size(out->dtype);
  char *o = out->data;
  void *args[FDECL_MAX_PARAMS];
  for (int64_t i = 0; i < out->numel; i++) {
    for (uint32_t k = 0; k < op->ninputs; k++) args[k] = p[k] + (size_t)i * step[k];
    call_store(f, args, o + (size_t)i * osz);
  }
  return KERNEL_OK;
}

/* The value of count parameter `i` for element count n, into *slot. */
static bool count_arg(KernelCtx *c, const ForeignFn *f, uint32_t i, int64_t n, int64_t *slot) {
  if (f->params[i].base == FC_I32 && n > INT32_MAX) {
    kernel_fail(c, "%s: %lld elements do not fit the int count of %s", op_get(c->op_id)->name, (long long)n,
                f->symbol);
    return false;
  }
  if (f->params[i].base == FC_I32) {
    int32_t v = (int32_t)n;
    memcpy(slot, &v, sizeof v);
  } else {
    *slot = n; /* int64_t, or size_t (same bytes for n >= 0 on 64-bit; low word otherwise) */
    if (sizeof(size_t) == 4 && f->params[i].base == FC_SIZE) {
      uint32_t v = (uint32_t)n;
      memcpy(slot, &v, sizeof v);
    }
  }
  return true;
}

static int run_buffer(KernelCtx *c, const ForeignOp *op, const ForeignFn *f) {
  const Tensor *like = kernel_input(c, (uint32_t)op->shape_from);
  for (uint32_t k = 0; k < op->ninputs; k++)
    if (!f->has_count[k] && kernel_input(c, k)->numel != like->numel)
      return kernel_fail(c, "%s: input %u has %lld elements, the output %lld", op->name, k,
                         (long long)kernel_input(c, k)->numel, (long long)like->numel);
  Tensor *out = kernel_output(c, f->out_dt, like->ndim, like->shape);
  if (!out) return KERNEL_ERROR;
  void *ptrs[FDECL_MAX_PARAMS];
  int64_t counts[FDECL_MAX_PARAMS];
  void *args[FDECL_MAX_PARAMS];
  for (uint32_t i = 0; i < f->nparams; i++) {
    const Tensor *t = f->tensor[i] >= 0 ? kernel_input(c, (uint32_t)f->tensor[i]) : out;
    switch (f->role[i]) {
    case ROLE_INPUT: ptrs[i] = t->data; args[i] = &ptrs[i]; break;
    case ROLE_OUTPUT: ptrs[i] = out->data; args[i] = &ptrs[i]; break;
    default:
      if (!count_arg(c, f, i, t->numel, &counts[i])) return KERNEL_ERROR;
      args[i] = &counts[i];
    }
  }
  ffi_sarg status = 0;
  ffi_call((ffi_cif *)&f->cif, f->fn, &status, args);
  if (f->ret.base == FC_I32 && (int32_t)status != 0)
    return kernel_fail(c, "%s: %s returned error status %d", op->name, f->symbol, (int)(int32_t)status);
  return KERNEL_OK;
}

static int foreign_kernel(KernelCtx *c) {
  const ForeignOp *op = op_by_id(c->op_id);
  if (!op || kernel_ninputs(c) != op->ninputs) return kernel_fail(c, "foreign operator called with wrong inputs");
  DType dts[FDECL_MAX_PARAMS];
  for (uint32_t i = 0; i < op->ninputs; i++) dts[i] = kernel_input(c, i)->dtype;
  const ForeignFn *f = fn_for(op, dts);
  if (!f) return kernel_fail(c, "%s: no foreign function for these input dtypes", op->name);
  return op->mapping == FMAP_ELEMWISE ? run_elementwise(c, op, f) : run_buffer(c, op, f);
}

/* ------------------------------------------------------------ registration */

static ForeignOp *new_op(const FdeclDecl *dc, uint32_t ninputs, Diag *d) {
  ForeignOp *op = arena_alloc(fg.arena, sizeof *op);
  op->name = arena_strdup(fg.arena, dc->op);
  op->mapping = dc->mapping;
  op->ninputs = ninputs;
  op->shape_from = dc->shape_from;
  OpDef def = {op->name, (int32_t)ninputs, NULL, 0, foreign_rel, foreign_kernel, NULL, NULL};
  op->id = op_register(&def);
  if (op->id < 0) {
    diag_error(d, dc->op_span, "cannot register operator '%s'", dc->op);
    return NULL;
  }
  if (fg.nops == fg.cap) {
    fg.cap = fg.cap ? fg.cap * 2 : 16;
    fg.ops = mem_realloc(fg.ops, fg.cap * sizeof *fg.ops);
  }
  fg.ops[fg.nops++] = op;
  return op;
}

/* The existing operator `dc` adds an overload to, NULL when the name is new;
 * false (reported) when the name belongs to another operator or the
 * declaration disagrees with earlier ones. */
static bool existing_op(const FdeclDecl *dc, const ForeignFn *f, uint32_t nin, ForeignOp **out, Diag *d) {
  int32_t id = op_lookup(dc->op);
  *out = NULL;
  if (id < 0) return true;
  ForeignOp *op = op_by_id(id);
  if (!op) {
    diag_error(d, dc->op_span, "operator '%s' already exists (built-in or from a plugin)", dc->op);
    return false;
  }
  if (op->mapping != dc->mapping || op->ninputs != nin || op->shape_from != dc->shape_from) {
    diag_error(d, dc->decl_span, "'%s' was declared before as %s with %u input%s; every declaration of it must agree",
               dc->op, op->mapping == FMAP_ELEMWISE ? "elementwise" : "buffer", op->ninputs, op->ninputs == 1 ? "" : "s");
    return false;
  }
  if (fn_for(op, f->in_dt)) {
    char s[160];
    sig_str(fn_for(op, f->in_dt), nin, s, sizeof s);
    diag_error(d, dc->decl_span, "'%s' already has a foreign function for %s", dc->op, s);
    return false;
  }
  *out = op;
  return true;
}

static bool bind_decl(const FdeclDecl *dc, const BindCx *bx) {
  ForeignFn *f = arena_alloc(fg.arena, sizeof *f);
  uint32_t nin = dc->nparams;
  f->symbol = arena_strdup(fg.arena, dc->symbol);
  f->ret = dc->ret;
  f->nparams = dc->nparams;
  memcpy(f->params, dc->params, sizeof f->params);
  memset(f->tensor, -1, sizeof f->tensor);
  bool ok = dc->mapping == FMAP_ELEMWISE ? check_elementwise(dc, f, bx->d) : check_buffer(dc, f, &nin, bx->d);
  ForeignOp *op = NULL;
  if (!ok || !existing_op(dc, f, nin, &op, bx->d) || !bind_symbol(dc, f, bx)) return false;
  if (!op && !(op = new_op(dc, nin, bx->d))) return false;
  op->fns = mem_realloc(op->fns, (op->nfns + 1) * sizeof *op->fns);
  op->fns[op->nfns++] = f;
  return true;
}

/* Parses and binds every declaration of `src` (consumed). */
static bool declare_source(Source *src, const char *base_dir, Diag *outer) {
  Diag d;
  diag_init(&d, outer->out, src);
  d.color = outer->color;
  if (!fg.arena) fg.arena = arena_new();
  Arena *tmp = arena_new();
  FdeclDecl *decls = NULL;
  uint32_t n = 0;
  bool ok = fdecl_parse(src, tmp, &d, &decls, &n);
  BindCx bx = {&d, base_dir};
  for (uint32_t i = 0; ok && i < n; i++) ok = bind_decl(&decls[i], &bx);
  arena_free(tmp);
  source_free(src);
  outer->nerrors += d.nerrors;
  return ok;
}

bool foreign_declare_file(const char *path, Diag *d) {
  Source *src = source_read_file(path);
  if (!src) {
    diag_plain(d, DIAG_ERROR, "cannot read declaration file '%s': %s", path, strerror(errno));
    return false;
  }
  const char *slash = strrchr(path, '/');
  char *dir = slash ? mem_malloc((size_t)(slash - path) + 2) : NULL;
  if (dir) {
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    memcpy(dir, path, n);
    dir[n] = 0;
  }
  bool ok = declare_source(src, dir, d);
  mem_free(dir);
  return ok;
}

bool foreign_declare_text(const char *text, Diag *d) {
  size_t n = strlen(text);
  char *copy = mem_malloc(n + 1);
  memcpy(copy, text, n + 1);
  return declare_source(source_new("<ffi-decl>", copy, n), NULL, d);
}
