/* ops/foreign/plugin.h — loading native operator plugins (--plugin PATH).
 *
 * A plugin is a shared library built against the public, versioned header
 * include/relayc/plugin.h. plugin_load opens it, checks the ABI version it
 * exports (relayc_plugin_abi_version) against RELAYC_PLUGIN_ABI_VERSION, and
 * calls its relayc_plugin_init with the service table; each register_op call
 * adds an operator to the registry (op_register) with a generated type
 * relation and kernel that convert between relayc's types and tensors and the
 * plugin's plain-C views. Call it BEFORE parsing (resolution checks operator
 * names against the registry); a loaded plugin is never unloaded.
 *
 * Errors — a file that cannot be loaded, no version or entry point, an ABI
 * version mismatch, an init failure, an invalid operator descriptor — are
 * reported through `d` (plain "relayc: error: ..." lines) and make it return
 * false; the CLI then exits with status 2.
 */
#ifndef RELAYC_OPS_PLUGIN_H
#define RELAYC_OPS_PLUGIN_H

#include <stdbool.h>

#include "ir/diag.h"

/* Loads the plugin at `path` (a name without '/' is looked for in the working
 * directory first, then by the dynamic loader). */
bool plugin_load(const char *path, Diag *d);

#endif
