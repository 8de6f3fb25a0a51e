/* tests/ffi/test_plugin.c — broken and odd plugins for the loader's failure
 * paths, one source compiled into several libraries by tests/ffi/build.sh:
 *
 *   -DVARIANT_BAD_ABI   exports ABI version 999               → exit 2
 *   -DVARIANT_NO_ABI    exports no version symbol             → exit 2
 *   -DVARIANT_NO_INIT   exports the version but no entry point → exit 2
 *   -DVARIANT_INIT_FAIL relayc_plugin_init returns 3          → exit 2
 *   -DVARIANT_DUP_NAME  registers "add", a built-in name      → exit 2
 *   -DVARIANT_BAD_DEFAULT an int attribute defaulting to "x"  → exit 2
 *   (none)              test.fail: a kernel that reports an error (exit 3),
 *                       and test.pair: two inputs, output (a.shape ++ b.shape)
 */
#include <stdio.h>
#include <string.h>

#include "relayc/plugin.h"

#if defined(VARIANT_BAD_ABI)
RELAYC_PLUGIN_EXPORT const uint32_t relayc_plugin_abi_version = 999;
#elif !defined(VARIANT_NO_ABI)
RELAYC_PLUGIN_ABI_DEFINE;
#endif

static int same_rel(const RelaycTypeRelArgs *args, RelaycTensorType *out, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  out->dtype = args->inputs[0].dtype;
  out->ndim = args->inputs[0].ndim;
  memcpy(out->shape, args->inputs[0].shape, (size_t)out->ndim * sizeof *out->shape);
  return 0;
}

static int failing_kernel(const RelaycKernelArgs *args, char *err, size_t errlen) {
  snprintf(err, errlen, "boom after %lld elements", (long long)args->inputs[0].numel);
  return 1;
}

/* test.pair(a, b): float32 tensor of shape a.shape ++ b.shape, out[i, j] = a[i] * 10 + b[j] */
static int pair_rel(const RelaycTypeRelArgs *args, RelaycTensorType *out, char *err, size_t errlen) {
  const RelaycTensorType *a = &args->inputs[0], *b = &args->inputs[1];
  if (!relayc_dtype_is(a->dtype, RELAYC_DT_FLOAT, 32) || !relayc_dtype_is(b->dtype, RELAYC_DT_FLOAT, 32)) {
    snprintf(err, errlen, "both inputs must be float32");
    return 1;
  }
  out->dtype = a->dtype;
  out->ndim = a->ndim + b->ndim;
  for (int32_t i = 0; i < a->ndim; i++) out->shape[i] = a->shape[i];
  for (int32_t i = 0; i < b->ndim; i++) out->shape[a->ndim + i] = b->shape[i];
  return 0;
}

static int pair_kernel(const RelaycKernelArgs *args, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  const float *a = args->inputs[0].data, *b = args->inputs[1].data;
  float *o = args->output->data;
  int64_t nb = args->inputs[1].numel;
  for (int64_t i = 0; i < args->inputs[0].numel; i++)
    for (int64_t j = 0; j < nb; j++) o[i * nb + j] = a[i] * 10 + b[j];
  return 0;
}

#ifndef VARIANT_NO_INIT
int relayc_plugin_init(const RelaycPluginApi *api) {
#if defined(VARIANT_INIT_FAIL)
  (void)api;
  return 3;
#elif defined(VARIANT_DUP_NAME)
  RelaycOpDesc d = {"add", 2, NULL, 0, same_rel, failing_kernel, NULL};
  return api->register_op(api, &d);
#elif defined(VARIANT_BAD_DEFAULT)
  RelaycAttrDesc attr = {"k", RELAYC_ATTR_INT, "x"};
  RelaycOpDesc d = {"test.bad_default", 1, &attr, 1, same_rel, failing_kernel, NULL};
  return api->register_op(api, &d);
#else
  RelaycOpDesc fail = {"test.fail", 1, NULL, 0, same_rel, failing_kernel, NULL};
  RelaycOpDesc pair = {"test.pair", 2, NULL, 0, pair_rel, pair_kernel, NULL};
  return api->register_op(api, &fail) || api->register_op(api, &pair);
#endif
}
#endif
