/* samples/plugin/sample_plugin.c — a relayc operator plugin, as a template.
 *
 * Adds two activations with attributes, for float32 and float64 tensors:
 *
 *   sample.softplus(x, beta=1f, threshold=20f)
 *       log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold
 *   sample.swish(x, beta=1f)
 *       x * sigmoid(beta * x)
 *
 * It is compiled against include/relayc/plugin.h ALONE (no other relayc
 * header, nothing linked from relayc):
 *
 *     make plugin        # → build/samples/libsample_plugin.so
 *     # or by hand:
 *     cc -std=c17 -O2 -fPIC -shared -Iinclude -o libsample_plugin.so \
 *        samples/plugin/sample_plugin.c -lm
 *     relayc --plugin build/samples/libsample_plugin.so --run samples/plugin/softplus.relay
 */
#include <math.h>
#include <stdio.h>

#include "relayc/plugin.h"

RELAYC_PLUGIN_ABI_DEFINE;

/* The api table, kept for the attribute getters. */
static const RelaycPluginApi *api;

/* Both operators: one float32/float64 input, the output has its type. */
static int float_identity_rel(const RelaycTypeRelArgs *args, RelaycTensorType *out, char *err, size_t errlen) {
  const RelaycTensorType *x = &args->inputs[0];
  if (!relayc_dtype_is(x->dtype, RELAYC_DT_FLOAT, 32) && !relayc_dtype_is(x->dtype, RELAYC_DT_FLOAT, 64)) {
    snprintf(err, errlen, "expects a float32 or float64 tensor");
    return 1;
  }
  if (api->attr_double(args->attrs, "beta", 1.0) == 0) {
    snprintf(err, errlen, "beta must not be 0");
    return 1;
  }
  out->dtype = x->dtype;
  out->ndim = x->ndim;
  for (int32_t i = 0; i < x->ndim; i++) out->shape[i] = x->shape[i];
  return 0;
}

static double softplus(double x, double beta, double threshold) {
  double bx = beta * x;
  return bx > threshold ? x : log1p(exp(bx)) / beta;
}

static double swish(double x, double beta, double unused) {
  (void)unused;
  return x / (1 + exp(-beta * x));
}

/* The user pointer of each operator points at its scalar function. */
typedef struct Activation {
  double (*f)(double x, double beta, double threshold);
} Activation;
static Activation softplus_act = {softplus}, swish_act = {swish};

static int activation_kernel(const RelaycKernelArgs *args, char *err, size_t errlen) {
  double (*f)(double, double, double) = ((const Activation *)args->user)->f;
  double beta = api->attr_double(args->attrs, "beta", 1.0);
  double threshold = api->attr_double(args->attrs, "threshold", 20.0);
  const RelaycTensor *x = &args->inputs[0];
  RelaycTensor *y = args->output;
  if (relayc_dtype_is(x->dtype, RELAYC_DT_FLOAT, 32)) {
    const float *in = x->data;
    float *out = y->data;
    for (int64_t i = 0; i < x->numel; i++) out[i] = (float)f(in[i], beta, threshold);
  } else if (relayc_dtype_is(x->dtype, RELAYC_DT_FLOAT, 64)) {
    const double *in = x->data;
    double *out = y->data;
    for (int64_t i = 0; i < x->numel; i++) out[i] = f(in[i], beta, threshold);
  } else {
    snprintf(err, errlen, "unsupported dtype");
    return 1;
  }
  return 0;
}

static const RelaycAttrDesc softplus_attrs[] = {
    {"beta", RELAYC_ATTR_DOUBLE, "1f"},
    {"threshold", RELAYC_ATTR_DOUBLE, "20f"},
};
static const RelaycAttrDesc swish_attrs[] = {
    {"beta", RELAYC_ATTR_DOUBLE, "1f"},
};

int relayc_plugin_init(const RelaycPluginApi *a) {
  if (a->abi_version != RELAYC_PLUGIN_ABI_VERSION) return 1;
  api = a;
  const RelaycOpDesc ops[] = {
      {"sample.softplus", 1, softplus_attrs, 2, float_identity_rel, activation_kernel, &softplus_act},
      {"sample.swish", 1, swish_attrs, 1, float_identity_rel, activation_kernel, &swish_act},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (api->register_op(api, &ops[i]) != 0) return 1;
  return 0;
}
