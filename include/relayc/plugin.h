/* relayc/plugin.h — the public, versioned ABI for relayc operator plugins.
 *
 * A plugin is a shared library loaded with `relayc --plugin PATH`. It adds
 * whole operators (name, attributes, a type relation, a kernel) to the same
 * registry the built-in operators live in; programs then call them like any
 * other operator (`sample.softplus(%x, beta=2f)`), --print prints them, and
 * the type checker and interpreter treat them as built-ins.
 *
 * This header is self-contained: a plugin is compiled against it alone
 * (C99 or later, or C++), never against relayc's internal headers, and links
 * against nothing from relayc — every service comes through the
 * RelaycPluginApi table handed to the entry point.
 *
 * A plugin exports exactly two symbols:
 *
 *     #include "relayc/plugin.h"
 *     RELAYC_PLUGIN_ABI_DEFINE;                   // the ABI version it was built for
 *     int relayc_plugin_init(const RelaycPluginApi *api) {
 *       static const RelaycOpDesc op = {"my.op", 1, NULL, 0, my_rel, my_kernel, NULL};
 *       return api->register_op(api, &op);        // 0 on success
 *     }
 *
 * relayc reads `relayc_plugin_abi_version` before calling anything and
 * refuses (exit status 2) a plugin built for another version. The version is
 * bumped whenever a struct or function below changes incompatibly; within a
 * version, new members are only ever appended to RelaycPluginApi (its
 * `struct_size` tells how many exist).
 *
 * Tensors use DLPack's vocabulary: dtype code (0 int, 1 uint, 2 float;
 * bool is uint with 1 bit), bits and lanes; data is compact row-major
 * (C order, no strides); element i lives at (char *)data + i * elem_size,
 * where elem_size = (bits + 7) / 8 * lanes (bool is one byte 0/1).
 *
 * Threads: relayc calls the callbacks from one thread at a time. Memory:
 * strings and arrays passed to callbacks are borrowed for the duration of the
 * call; descriptors passed to register_op are copied.
 */
#ifndef RELAYC_PLUGIN_H
#define RELAYC_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes. */
#define RELAYC_PLUGIN_ABI_VERSION 1u

/* Largest rank relayc handles; output shape buffers hold this many dims. */
#define RELAYC_PLUGIN_MAX_NDIM 64

#if defined(__GNUC__)
#define RELAYC_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define RELAYC_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
#define RELAYC_PLUGIN_LINKAGE extern "C"
#else
#define RELAYC_PLUGIN_LINKAGE
#endif

/* Defines the exported version symbol; write it once in a plugin. */
#define RELAYC_PLUGIN_ABI_DEFINE \
  RELAYC_PLUGIN_LINKAGE RELAYC_PLUGIN_EXPORT const uint32_t relayc_plugin_abi_version = RELAYC_PLUGIN_ABI_VERSION

/* ---- element types (DLPack) --------------------------------------------- */

typedef enum {
  RELAYC_DT_INT = 0,   /* signed integer */
  RELAYC_DT_UINT = 1,  /* unsigned integer; bits == 1 is bool */
  RELAYC_DT_FLOAT = 2, /* IEEE float (16, 32, 64 bits) */
} RelaycDTypeCode;

typedef struct RelaycDType {
  uint8_t code;   /* a RelaycDTypeCode */
  uint8_t bits;   /* bits per lane */
  uint16_t lanes; /* 1 for scalars */
} RelaycDType;

static inline int relayc_dtype_is(RelaycDType t, uint8_t code, uint8_t bits) {
  return t.code == code && t.bits == bits && t.lanes == 1;
}

/* ---- tensors and tensor types ------------------------------------------- */

/* A tensor handed to a kernel. Inputs are read-only; the output is writable
 * and already allocated with the shape the type relation computed. */
typedef struct RelaycTensor {
  void *data;           /* first element; never NULL (even with 0 elements) */
  RelaycDType dtype;
  int32_t ndim;         /* 0 for a scalar */
  const int64_t *shape; /* ndim extents */
  int64_t numel;        /* product of shape (1 for a scalar) */
} RelaycTensor;

/* A tensor type seen by a type relation. An extent of -1 is unknown at
 * compile time (Relay's `?`); relations should propagate it. */
typedef struct RelaycTensorType {
  RelaycDType dtype;
  int32_t ndim;
  int64_t *shape; /* inputs: ndim extents; output: a buffer of RELAYC_PLUGIN_MAX_NDIM */
} RelaycTensorType;

/* ---- attributes ---------------------------------------------------------- */

typedef enum {
  RELAYC_ATTR_INT = 0,    /* integer, written `3` */
  RELAYC_ATTR_DOUBLE = 1, /* float, written `0.5f` */
  RELAYC_ATTR_BOOL = 2,   /* True / False */
  RELAYC_ATTR_STRING = 3, /* "text" */
} RelaycAttrType;

typedef struct RelaycAttrDesc {
  const char *name;         /* as written in calls: beta=2f */
  uint32_t type;            /* a RelaycAttrType */
  const char *default_text; /* Relay text of the default ("1f", "0", "True", "\"NCHW\""); NULL = required */
} RelaycAttrDesc;

/* The normalised attributes of one call (opaque; read with the api getters). */
typedef struct RelaycAttrs RelaycAttrs;

/* ---- callbacks ------------------------------------------------------------ */

/* Arguments of a type relation: the input types (all known tensors) and the
 * attributes. Fill *out (dtype, ndim, shape[0..ndim-1]) and return 0, or
 * write a message into err (errlen bytes) and return nonzero: relayc reports
 * it at the call as a type error ("my.op: <message>"). relayc also calls the
 * relation at run time, with concrete shapes, to size the output. */
typedef struct RelaycTypeRelArgs {
  uint32_t ninputs;
  const RelaycTensorType *inputs;
  const RelaycAttrs *attrs;
  void *user; /* RelaycOpDesc.user */
} RelaycTypeRelArgs;
typedef int (*RelaycTypeRelFn)(const RelaycTypeRelArgs *args, RelaycTensorType *out, char *err,
                               size_t errlen);

/* Arguments of a kernel: the inputs and the allocated output. Return 0, or
 * write a message and return nonzero: a run-time error (exit status 3). */
typedef struct RelaycKernelArgs {
  uint32_t ninputs;
  const RelaycTensor *inputs;
  RelaycTensor *output;
  const RelaycAttrs *attrs;
  void *user;
} RelaycKernelArgs;
typedef int (*RelaycKernelFn)(const RelaycKernelArgs *args, char *err, size_t errlen);

/* ---- operators ------------------------------------------------------------ */

typedef struct RelaycOpDesc {
  const char *name;             /* "sample.softplus"; must not clash with another operator */
  int32_t num_inputs;           /* positional tensor inputs (1..64) */
  const RelaycAttrDesc *attrs;  /* schema in print order; may be NULL when nattrs == 0 */
  uint32_t nattrs;
  RelaycTypeRelFn type_rel;     /* required */
  RelaycKernelFn kernel;        /* required */
  void *user;                   /* passed back to both callbacks */
} RelaycOpDesc;

/* ---- the service table ---------------------------------------------------- */

typedef struct RelaycPluginApi {
  uint32_t abi_version; /* RELAYC_PLUGIN_ABI_VERSION of the running relayc */
  uint32_t struct_size; /* sizeof(RelaycPluginApi) in the running relayc */
  /* Registers an operator; 0 on success, nonzero (with a message relayc
   * prints) when the descriptor is invalid or the name is taken. */
  int (*register_op)(const struct RelaycPluginApi *api, const RelaycOpDesc *desc);
  /* Attribute getters: the call's value, else the schema default, else dflt. */
  int64_t (*attr_int)(const RelaycAttrs *attrs, const char *name, int64_t dflt);
  double (*attr_double)(const RelaycAttrs *attrs, const char *name, double dflt);
  int (*attr_bool)(const RelaycAttrs *attrs, const char *name, int dflt);
  const char *(*attr_str)(const RelaycAttrs *attrs, const char *name, const char *dflt);
} RelaycPluginApi;

/* The two symbols every plugin exports: the ABI version it was built for
 * (defined by RELAYC_PLUGIN_ABI_DEFINE) and the entry point, which registers
 * operators and returns 0 (nonzero: relayc reports the failure, exit 2). */
extern RELAYC_PLUGIN_EXPORT const uint32_t relayc_plugin_abi_version;
RELAYC_PLUGIN_EXPORT int relayc_plugin_init(const RelaycPluginApi *api);

#ifdef __cplusplus
}
#endif

#endif
