/* parser/metadata.h — reading the `#[metadata]` JSON section (spec/text-format.md §6).
 *
 * metadata_load parses the JSON document (jansson), decodes the base64 tensor
 * blobs of every relay.Constant into ConstTensor objects in m->arena, and
 * records every key of the root map with its list length (m->meta_keys), so
 * `meta[K][i]` references can be resolved or range-checked by sema/resolve.
 * Corrupt JSON, bad magic, a truncated blob, a byte count that disagrees with
 * the shape: each is a diagnostic at the offending position, never a crash.
 * `base` is the byte offset of `json` within m->src (for spans).
 */
#ifndef RELAYC_PARSER_METADATA_H
#define RELAYC_PARSER_METADATA_H

#include "ir/ast.h"

bool metadata_load(Module *m, const char *json, size_t len, uint32_t base, Diag *d);

#endif
