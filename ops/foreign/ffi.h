/* ops/foreign/ffi.h — foreign operators: C functions from shared libraries, called
 * through libffi, registered as ordinary operators.
 *
 * The command line hands declarations (syntax: ops/foreign/ffi_decl.h, man/relayc.1
 * FOREIGN OPERATORS) to foreign_declare_file (--ffi FILE) or
 * foreign_declare_text (--ffi-decl 'DECL') BEFORE any module is parsed,
 * since name resolution checks operator names against the registry:
 *
 *     op my.erfc elementwise from libm.so.6: float erfcf(float);
 *     op my.erfc elementwise from libm.so.6: double erfc(double);
 *
 * Each declaration is checked, its library opened (dlopen; never closed),
 * its symbol resolved (dlsym) and its libffi call interface prepared once.
 * The first declaration of a name registers the operator (op_register) with
 * a generated type relation and kernel; later declarations of the same name
 * add overloads chosen by the input dtypes (erfcf for float32, erfc for
 * float64). Mappings:
 *
 *   elementwise  `R f(T1, ..., Tn)` with scalar parameters: one input
 *                tensor per parameter, of the parameter's dtype, broadcast
 *                together (numpy rules); the result has dtype R and the
 *                broadcast shape; the kernel calls f once per element.
 *   buffer(k)    `void|int f(...)` with pointers and counts: each `const T *`
 *                is an input tensor (in order), the one non-const `T *` is
 *                the output, shaped like input k (default 0); every integer
 *                parameter receives the element count of the closest pointer
 *                parameter before it (the output's count when none precedes
 *                it); f is called once per tensor. A pointer without its own
 *                count must have as many elements as the output. An `int`
 *                return value other than 0 is a run-time error.
 *
 * C types: float (float32), double (float64), int / int32_t (int32),
 * int64_t (int64), size_t (counts only), const and one `*` for buffers.
 *
 * Errors (unknown C type, missing library or symbol, an arity or signature
 * that does not fit the mapping, a name already taken) are reported through
 * `d` — d->out and d->color are used, d->nerrors is incremented — and make
 * the call return false; the CLI then exits with status 2.
 */
#ifndef RELAYC_OPS_FFI_H
#define RELAYC_OPS_FFI_H

#include <stdbool.h>

#include "ir/diag.h"

/* Declarations from a file. A relative library path containing '/' is taken
 * relative to the file's directory; a bare name (libm.so.6) is searched for
 * by the dynamic loader. */
bool foreign_declare_file(const char *path, Diag *d);

/* Declarations given as text (the --ffi-decl option); relative library paths
 * are relative to the working directory. Diagnostics name the source
 * "<ffi-decl>". */
bool foreign_declare_text(const char *text, Diag *d);

#endif
