/* ir/tensor_blob.h — base64 and TVM's binary tensor record (spec/text-format.md §6.4).
 *
 * Two small, independent tools:
 *
 *  - base64 (standard alphabet `A-Z a-z 0-9 + /`, `=` padding, no line breaks
 *    or other whitespace), usable by anything that needs it (.npy, metadata);
 *  - the tensor blob: the little-endian record TVM writes for one NDArray
 *    (magic, reserved, device, ndim, dtype, shape, byte count, elements),
 *    converted from and to a ConstTensor (ir/ast.h).
 *
 * Decoding validates everything before allocating: the record's byte count
 * must equal ceil(bits/8) * product(shape) and the bytes actually present,
 * so a corrupt header can never make the decoder allocate more than the input
 * holds. tensor_blob_decode_base64 decodes the base64 text straight into the
 * tensor's final 64-byte-aligned buffer (no intermediate copy of the data).
 *
 *     BlobError e;
 *     ConstTensor c;
 *     if (!tensor_blob_decode_base64(text, len, arena, &c, &e))
 *       report(e.msg, e.lo, e.hi);       // offsets into `text`
 *     tensor_blob_write_base64(stdout, &c); // prints `text` again
 *
 * Only lanes == 1 dtypes are accepted: TVM's byte count ignores lanes, so a
 * vector-dtype record could not agree with ConstTensor.nbytes.
 */
#ifndef RELAYC_IR_TENSOR_BLOB_H
#define RELAYC_IR_TENSOR_BLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/arena.h"
#include "ir/ast.h"

/* ------------------------------------------------------------------ base64 */

/* Length of the encoding of n bytes: 4 * ceil(n / 3). */
size_t base64_encoded_len(size_t n);
/* Encodes n bytes; the result (mem_malloc'd, NUL-terminated, free with
 * mem_free) has base64_encoded_len(n) characters, stored in *out_len if non-NULL. */
char *base64_encode(const void *data, size_t n, size_t *out_len);
/* Number of bytes a base64 text of n characters decodes to (trailing `=`
 * padding discounted), or SIZE_MAX when n is not a multiple of 4. Other
 * characters are checked by base64_decode, not here. */
size_t base64_decoded_len(const char *s, size_t n);
/* Decodes s[0..n) into out (room for base64_decoded_len(s, n) bytes). Returns
 * the byte count, or SIZE_MAX when the text is malformed; then *bad (if
 * non-NULL) is the offset of the first offending character. */
size_t base64_decode(const char *s, size_t n, void *out, size_t *bad);

/* ------------------------------------------------------------- tensor blob */

#define TENSOR_BLOB_MAGIC 0xDD5E40F096B4A13FULL
#define TENSOR_BLOB_CPU 1          /* the only device type accepted */
#define TENSOR_BLOB_MAX_NDIM 64    /* larger ranks are rejected as corrupt */

/* Why a decode failed: a one-line message and the offending range [lo, hi)
 * in the input (characters of the base64 text, or bytes for raw input). */
typedef struct BlobError {
  char msg[192];
  size_t lo, hi;
} BlobError;

/* Whether a constant may have element type t (what a blob holds and the
 * decoder accepts: 8..64-bit integers, bool, float16/32/64, bfloat16, float8;
 * one lane). A pass that builds a constant of another dtype (float42, a
 * well-formed name no kernel stores) would print a module that does not
 * re-parse. */
bool tensor_blob_dtype_supported(DType t);
/* Raw record bytes -> *out (shape and data carved from `a`; data is 64-byte
 * aligned; meta_index = -1). Bool elements are normalised to 0/1. */
bool tensor_blob_decode(const void *bytes, size_t n, Arena *a, ConstTensor *out, BlobError *err);
/* The same from the record's base64 text, decoding straight into the data buffer. */
bool tensor_blob_decode_base64(const char *s, size_t n, Arena *a, ConstTensor *out,
                               BlobError *err);

/* Two-phase decoding from base64, for decoding big blobs in pieces (possibly
 * on several threads). tensor_blob_begin_base64 does what
 * tensor_blob_decode_base64 does up to the element data: it validates the
 * header, allocates out->data and decodes the data bytes that share a group
 * with the header, and describes the remaining whole groups in *rest.
 * tensor_blob_rest_decode decodes groups [lo, hi) of the rest (the last one
 * may hold padding); it allocates nothing and writes only its own part of
 * out->data, so disjoint ranges may run at the same time. The failure of the
 * lowest failing range is the one tensor_blob_decode_base64 would report. */
typedef struct BlobRest {
  const char *s;    /* the base64 text */
  size_t nchars;
  size_t group0;    /* first group of the rest (its text starts at s + 4 * group0) */
  size_t ngroups;   /* groups in the rest */
  uint8_t *dst;     /* where group0 lands */
  size_t nbytes;    /* bytes the rest decodes to */
  bool boolean;     /* bool elements: normalise to 0/1 */
} BlobRest;
bool tensor_blob_begin_base64(const char *s, size_t n, Arena *a, ConstTensor *out, BlobRest *rest,
                              BlobError *err);
bool tensor_blob_rest_decode(const BlobRest *rest, size_t lo, size_t hi, BlobError *err);

/* Size in bytes of the record for c: 40 + 8 * ndim + nbytes. */
size_t tensor_blob_size(const ConstTensor *c);
/* c -> record bytes (mem_malloc'd; tensor_blob_size(c) of them, also in *len). */
unsigned char *tensor_blob_encode(const ConstTensor *c, size_t *len);
/* Writes the base64 text of c's record to out (no quotes, no newline),
 * streaming: memory use does not grow with the tensor. */
void tensor_blob_write_base64(FILE *out, const ConstTensor *c);

#endif
