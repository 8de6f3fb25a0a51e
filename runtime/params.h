/* runtime/params.h — TVM's parameter files (`save_param_dict`, `.params`).
 *
 * The format TVM's tvm.runtime.save_param_dict / relay.save_param_dict
 * writes and GraphExecutor.load_params reads (src/runtime/file_utils.cc at
 * TVM's last Relay commit). Little-endian, no alignment, no checksum:
 *
 *     u64  magic         0xF7E58D4F05049CB7 (PARAMS_MAGIC)
 *     u64  reserved      0
 *     u64  name count    N
 *     N x { u64 length; length bytes of name }    (no terminator)
 *     u64  tensor count  N again
 *     N x NDArray record, the one the metadata section holds in base64
 *         (ir/tensor_blob.h): u64 magic 0xDD5E40F096B4A13F, u64 reserved,
 *         i32 device type (1 = CPU), i32 device id, i32 ndim,
 *         u8 dtype code, u8 bits, u16 lanes, ndim x i64 extents,
 *         i64 byte count = ceil(bits / 8) * product(extents), the elements.
 *
 * The i-th name belongs to the i-th record. TVM writes them in its map's
 * iteration order; relayc writes them in the order of the bundle.
 *
 * READING checks, in file order, and stops at the first problem with a
 * message naming the byte offset and the tensor: both magics, the counts
 * (each name needs at least 8 bytes, so a count larger than the file can
 * hold is corrupt), each name's length (against the bytes left; NUL bytes
 * in a name are corrupt), device type CPU, rank 0..TENSOR_MAX_NDIM, a dtype
 * relayc's tensors hold (bool, int/uint 8-64, float 16/32/64, bfloat16,
 * float8 e4m3/e5m2; lanes 1), non-negative extents whose product and byte
 * count do not overflow, a byte count that agrees with the shape and with
 * the bytes present (checked before allocating), no bytes after the last
 * record (TVM ignores them; here they mean the file is not what it claims).
 * Bool elements read as 0/1 (any nonzero byte is 1). Duplicate names are
 * refused one level up, by bundle_read_mem (both formats).
 *
 * WRITING produces exactly those bytes: reserved fields and the device id
 * are 0, device type 1.
 */
#ifndef RELAYC_RUNTIME_PARAMS_H
#define RELAYC_RUNTIME_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "runtime/bundle.h"

#define PARAMS_MAGIC 0xF7E58D4F05049CB7ULL

/* Parses a .params image (borrowed) and appends its tensors to *out; on
 * failure *out is unchanged and err (BUNDLE_ERR_SIZE bytes) says why. */
bool params_read_mem(const void *p, size_t n, TensorBundle *out, char *err);

/* Writes b (borrowed) in the .params format. False with a message when a
 * tensor's dtype cannot be written (lanes > 1) or the stream fails. */
bool params_write_stream(FILE *f, const TensorBundle *b, char *err);

#endif
