/* ops/foreign/ffi_decl.h — the foreign-operator declaration language (syntax only).
 *
 * Internal to ops/foreign/ffi.c, which binds what is parsed here (dlopen, libffi,
 * registration). A declaration names an operator, how it maps onto tensors,
 * a shared library and the C prototype of a symbol in it:
 *
 *     # comments run to the end of the line (also //)
 *     op my.erfc elementwise from libm.so.6: float erfcf(float);
 *     op my.erfc elementwise from libm.so.6: double erfc(double);
 *     op t.scale buffer from "./libt.so": void scale(const float *in, float *out, int64_t n);
 *     op t.pick  buffer(1) from "./libt.so": void pick(const float *a, const float *b, float *o, int64_t n);
 *
 * Declarations are separated by `;` (optional after the last one). This
 * module checks the syntax and the C types (float, double, int, int32_t,
 * int64_t, size_t, optionally const, at most one `*`); the meaning (arity,
 * which parameters are inputs, counts and the output) is checked by ffi.c.
 * Every error is reported with the span of the offending token.
 */
#ifndef RELAYC_OPS_FFI_DECL_H
#define RELAYC_OPS_FFI_DECL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/diag.h"

#define FDECL_MAX_PARAMS 16

typedef enum {
  FC_VOID,   /* void (returns only) */
  FC_FLOAT,  /* float: float32 */
  FC_DOUBLE, /* double: float64 */
  FC_I32,    /* int, int32_t: int32 */
  FC_I64,    /* int64_t: int64 */
  FC_SIZE,   /* size_t: element counts only */
} FdeclBase;

typedef struct FdeclType {
  FdeclBase base;
  bool pointer;  /* one level of `*` */
  bool is_const; /* the pointee is const (`const float *`) */
  Span span;     /* the whole type as written */
} FdeclType;

typedef enum {
  FMAP_ELEMWISE, /* scalar function applied to every element, with broadcasting */
  FMAP_BUFFER,   /* function called once per tensor with data pointers and counts */
} FdeclMapping;

typedef struct FdeclDecl {
  const char *op;        /* operator name, "my.erfc" */
  Span op_span;
  FdeclMapping mapping;
  int32_t shape_from;    /* buffer: output shape = input k's (default 0) */
  Span mapping_span;
  const char *library;   /* as written: a path or a soname */
  Span lib_span;
  const char *symbol;
  Span sym_span;
  FdeclType ret;
  FdeclType params[FDECL_MAX_PARAMS];
  uint32_t nparams;
  Span decl_span;        /* from `op` to the closing `)` */
} FdeclDecl;

/* Parses every declaration of `src`. Strings and the result array live in
 * `a`. Returns false after reporting errors through `d` (whose source is
 * `src`); *out / *n then hold the declarations read before the error. */
bool fdecl_parse(Source *src, Arena *a, Diag *d, FdeclDecl **out, uint32_t *n);

/* The C spelling of a type, for messages ("const float *"). */
const char *fdecl_type_str(const FdeclType *t, char *buf, size_t len);

#endif
