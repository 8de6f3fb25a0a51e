/* ops/kernels/k_annot.c — the annotations' kernels: on_device, device_copy,
 * annotation.stop_fusion, annotation.checkpoint (spec/passes.md 11.4,
 * spec/gradient.md 5.11).
 *
 * On relayc's single CPU device every annotation is the identity: the
 * result IS the input (one more reference to the same storage, no copy;
 * device_copy copies nothing either, source and destination being the same
 * memory). A tuple argument reaches the kernel flattened into its fields
 * (eval/vm.c), so when the inferred result type is a tuple the fields are
 * handed back as a tuple; tuples nested inside tuples, closures and ADT
 * values cannot pass through a kernel at all and are reported by the
 * interpreter ("input i is not a tensor").
 */
#include "ops/kernels/kernel.h"
#include "ir/mem.h"

static int pass_through(KernelCtx *c) {
  bool tuple = c->out_type && c->out_type->kind == TYPE_TUPLE;
  if (!tuple) {
    if (c->ninputs != 1) return kernel_fail(c, "%s: expected one tensor", c->op->name);
    kernel_set_output(c, tensor_retain(c->inputs[0]));
    return KERNEL_OK;
  }
  Tensor **ts = mem_malloc((c->ninputs ? c->ninputs : 1) * sizeof *ts);
  for (uint32_t i = 0; i < c->ninputs; i++) ts[i] = tensor_retain(c->inputs[i]);
  kernel_set_tuple(c, ts, c->ninputs);
  mem_free(ts);
  return KERNEL_OK;
}

#define ANNOTATION(ID)             \
  int kernel_##ID(KernelCtx *c);   \
  int kernel_##ID(KernelCtx *c) { return pass_through(c); }

ANNOTATION(ON_DEVICE)
ANNOTATION(DEVICE_COPY)
ANNOTATION(ANNOTATION_STOP_FUSION)
ANNOTATION(ANNOTATION_CHECKPOINT)

/* gradient(F) is replaced by its expansion after type inference
 * (transform/gradient_syntax.c), so no program that reaches the interpreter
 * calls it; this kernel only keeps "every operator has a kernel" true. */
int kernel_GRADIENT(KernelCtx *c);
int kernel_GRADIENT(KernelCtx *c) {
  return kernel_fail(c, "gradient(F) is expanded at compile time and cannot be called at run time");
}
