/* ir/metadata_write.h — writing the `#[metadata]` JSON section (spec/text-format.md §6.5).
 *
 * metadata_write emits the minimal form TVM loads: root map node 1 with the
 * single key "relay.Constant", an Array of constant nodes, one relay.Constant
 * node per tensor with null `_checked_type_`, `span` and `virtual_device_`
 * and `data` = its index into `b64ndarrays` (constant i uses blob i), the
 * base64 blobs (ir/tensor_blob.h), and `"attrs": {"tvm_version": "0.20.dev0"}`.
 * The text is laid out byte for byte as TVM's JSON writer does (§6.3) and has
 * no trailing newline. consts[i] is what the program text calls
 * meta[relay.Constant][i]; the caller prints "#[metadata]\n" before it.
 *
 *     fputs("#[metadata]\n", out);
 *     metadata_write(out, consts, n);
 */
#ifndef RELAYC_IR_METADATA_WRITE_H
#define RELAYC_IR_METADATA_WRITE_H

#include <stdint.h>
#include <stdio.h>

#include "ir/ast.h"

/* TVM version recorded in the section's global attrs. */
#define METADATA_TVM_VERSION "0.20.dev0"

void metadata_write(FILE *out, ConstTensor *const *consts, uint32_t n);

/* The same with symbolic dimensions: the root map gets a second key,
 * "tir.SizeVar", listing one tir.SizeVar node per entry (null span and
 * type_annotation, `name` → a runtime.String node), in the order given. The
 * relay.Constant key is left out when there are no constants but variables. */
void metadata_write_all(FILE *out, ConstTensor *const *consts, uint32_t n,
                        const MetaSizeVar *vars, uint32_t nvars);

/* Every table the printer writes back: constants (meta[relay.Constant][i] is
 * consts[i]), symbolic dimensions, and virtual devices: one VirtualDevice
 * node per entry (device_type_int, virtual_device_id, a runtime.String
 * memory_scope, null target), listed under the key "VirtualDevice" in the
 * order given, so meta[VirtualDevice][i] keeps its index. */
typedef struct MetaTables {
  ConstTensor *const *consts;
  uint32_t nconsts;
  const MetaSizeVar *vars;
  uint32_t nvars;
  const MetaVirtualDevice *vdevs;
  uint32_t nvdevs;
} MetaTables;

void metadata_write_tables(FILE *out, const MetaTables *t);

#endif
