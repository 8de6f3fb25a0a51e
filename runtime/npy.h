/* runtime/npy.h — numpy .npy files in and out, .npz archives out.
 *
 * READING accepts format versions 1.0, 2.0 and 3.0: the magic "\x93NUMPY",
 * the version, a little-endian header length (u16 for 1.0, u32 after), and a
 * Python dict literal with exactly the keys 'descr', 'fortran_order' and
 * 'shape' (any order, ' or " quotes, trailing commas). Supported descr:
 * `|b1` (bool), `|i1 <i2 <i4 <i8`, `|u1 <u2 <u4 <u8`, `<f2 <f4 <f8`; `>`
 * (big-endian, byteswapped on reading), `=` and `|` (native) are accepted as
 * the order character of any of them. fortran_order True is accepted: the
 * data is transposed into C order while reading (relayc tensors are always
 * row-major). Bool bytes other than 0/1 read as 1. Bytes after the data are
 * ignored (as numpy does).
 *
 * Anything else is rejected with a one-line message and NULL: bad magic, an
 * unsupported version, a header that is not such a dict, an unknown descr
 * (structured, complex, strings, objects...), a negative or overflowing
 * shape, more than TENSOR_MAX_NDIM dimensions, data shorter than the shape
 * needs. Shapes are checked against the bytes actually available BEFORE the
 * tensor is allocated, so a tiny corrupt file cannot ask for terabytes.
 *
 * WRITING produces exactly the bytes numpy.save writes for the same array
 * (format 1.0, or 2.0 when the header would exceed 65535 bytes): the dict
 * with sorted keys, numpy's spare spaces after it, padding with spaces so
 * the data starts at a multiple of 64 bytes, and a final '\n'. bfloat16,
 * float8, vector (lanes > 1) and other non-numpy dtypes are rejected.
 *
 * .npz archives (for tuple results) are ZIP files of stored (uncompressed)
 * members NAME.npy, with CRC-32s, readable by numpy.load. Members larger than
 * 4 GiB (which would need ZIP64) are rejected.
 *
 * Error messages go into a caller buffer of NPY_ERR_SIZE bytes; they do not
 * repeat the path (the CLI prefixes it) except for I/O errors from the OS.
 *
 *     char err[NPY_ERR_SIZE];
 *     Tensor *t = npy_read_file("x.npy", err);
 *     if (!t) { fprintf(stderr, "relayc: error: x.npy: %s\n", err); return 2; }
 */
#ifndef RELAYC_RUNTIME_NPY_H
#define RELAYC_RUNTIME_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "runtime/tensor.h"

#define NPY_ERR_SIZE 256
/* Headers longer than this are rejected as corrupt (numpy's own writer never
 * comes close; numpy.load refuses anything over 10000 by default). */
#define NPY_MAX_HEADER (1u << 20)

/* Reads a .npy file ("-" is standard input). Returns a new tensor, or NULL
 * with a message in err. */
Tensor *npy_read_file(const char *path, char *err);
/* Reads a .npy image held in memory (borrowed; copied into the tensor). */
Tensor *npy_read_mem(const void *buf, size_t len, char *err);
/* Reads a .npy image from a stream, up to its data's end. */
Tensor *npy_read_stream(FILE *in, char *err);

/* The header numpy would write for `t` (borrows): magic through the final
 * '\n'. Returns its length, and writes it into buf only when it fits in
 * `cap` bytes (so a call with cap 0 measures it); 0 with a message when the
 * dtype has no numpy equivalent. */
size_t npy_header(const Tensor *t, char *buf, size_t cap, char *err);

/* Writes `t` (borrows) as .npy; the path "-" is standard output. False with
 * a message on failure (including a failed close, so a full disk is seen). */
bool npy_write_stream(FILE *out, const Tensor *t, char *err);
bool npy_write_file(const char *path, const Tensor *t, char *err);

/* Writes an .npz archive of `n` tensors (all borrowed). names[i] is the
 * member name without ".npy"; names == NULL gives numpy.savez's positional
 * names arr_0, arr_1, ... */
bool npz_write_stream(FILE *out, Tensor *const *tensors, const char *const *names, size_t n,
                      char *err);
bool npz_write_file(const char *path, Tensor *const *tensors, const char *const *names, size_t n,
                    char *err);

/* CRC-32 (ZIP / IEEE 802.3 polynomial) of `n` bytes continuing from `crc`
 * (start with 0). */
uint32_t npy_crc32(uint32_t crc, const void *data, size_t n);

#endif
