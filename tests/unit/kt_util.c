/* tests/unit/kt_util.c — kernel test helpers (tests/unit/kt_util.h). */
#include "tests/unit/kt_util.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"

Tensor *kt_permuted(const Tensor *t, const int *perm) {
  int64_t shape[8], st[8];
  int nd = t->ndim;
  st[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) st[i] = st[i + 1] * t->shape[i + 1];
  for (int j = 0; j < nd; j++) shape[j] = t->shape[perm[j]];
  Tensor *o = kt_new(t->dtype, nd, shape);
  int64_t idx[8] = {0};
  for (int64_t q = 0; q < o->numel; q++) {
    int64_t off = 0;
    for (int j = 0; j < nd; j++) off += idx[j] * st[perm[j]];
    tensor_set_f64(o, q, tensor_get_f64(t, off));
    for (int j = nd - 1; j >= 0; j--) {
      if (++idx[j] < shape[j]) break;
      idx[j] = 0;
    }
  }
  return o;
}

Tensor *kt_lt(Module *m, const Tensor *t, const char *src, const char *dst) {
  char spec[128], err[KERNEL_ERR_SIZE] = "";
  snprintf(spec, sizeof spec, "src_layout=\"%s\"; dst_layout=\"%s\"", src, dst);
  Tensor *ins[1] = {(Tensor *)t};
  Tensor *o = kt_call(OP_LAYOUT_TRANSFORM, kt_attrs(m, spec), ins, 1, err);
  ck_assert_msg(o != NULL, "layout_transform %s -> %s failed: %s", src, dst, err);
  return o;
}

Attrs *kt_attrs(Module *m, const char *spec) {
  Attrs *a = arena_alloc(m->arena, sizeof *a);
  if (!spec || !*spec) return a;
  Attr items[32];
  uint32_t n = 0;
  char *copy = arena_strdup(m->arena, spec);
  for (char *tok = strtok(copy, ";"); tok && n < 32; tok = strtok(NULL, ";")) {
    while (*tok == ' ') tok++;
    char *eq = strchr(tok, '=');
    if (!eq) continue;
    *eq = 0;
    char *key = tok, *end = eq - 1;
    while (end > key && *end == ' ') *end-- = 0;
    AttrValue *v = attr_value_parse(m, eq + 1);
    if (!v) {
      fprintf(stderr, "kt_attrs: cannot parse '%s'\n", eq + 1);
      continue;
    }
    items[n++] = (Attr){.key = arena_strdup(m->arena, key), .value = v};
  }
  a->items = arena_memdup(m->arena, items, n * sizeof *items);
  a->n = n;
  return a;
}

static int kt_run(KernelCtx *c, int32_t op, const Attrs *a, Tensor **ins, uint32_t n, char *err) {
  Tensor **in = mem_calloc(n + 1, sizeof *in);
  for (uint32_t i = 0; i < n; i++) in[i] = tensor_retain(ins[i]);
  kernel_ctx_init(c, op, in, n, a, NULL);
  const OpDef *def = op_get(op);
  int rc = def && def->kernel ? def->kernel(c) : KERNEL_ERROR;
  if (rc != KERNEL_OK) snprintf(err, KERNEL_ERR_SIZE, "%s", c->err[0] ? c->err : "no kernel");
  c->inputs = in; /* kernel_ctx_clear releases what is left */
  return rc;
}

Tensor *kt_call(int32_t op, const Attrs *a, Tensor **ins, uint32_t n, char *err) {
  KernelCtx c;
  int rc = kt_run(&c, op, a, ins, n, err);
  Tensor *out = NULL;
  if (rc == KERNEL_OK) {
    out = c.out;
    c.out = NULL;
  }
  Tensor **in = c.inputs;
  kernel_ctx_clear(&c);
  mem_free(in);
  return out;
}

Tensor **kt_call_tuple(int32_t op, const Attrs *a, Tensor **ins, uint32_t n, uint32_t *nout,
                       char *err) {
  KernelCtx c;
  int rc = kt_run(&c, op, a, ins, n, err);
  Tensor **outs = NULL;
  if (rc == KERNEL_OK && c.is_tuple) {
    outs = c.outs;
    *nout = c.nouts;
    c.outs = NULL;
    c.nouts = 0;
  }
  Tensor **in = c.inputs;
  kernel_ctx_clear(&c);
  mem_free(in);
  return outs;
}

Tensor *kt_new(DType dt, int32_t ndim, const int64_t *shape) {
  return tensor_new_zeros(dt, ndim, shape);
}

void kt_fill(Tensor *t, uint32_t seed, double lo, double hi) {
  uint64_t s = seed * 2654435761u + 12345;
  for (int64_t i = 0; i < t->numel; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(s >> 11) / 9007199254740992.0;
    if (dtype_is_float(t->dtype)) tensor_set_f64(t, i, lo + (hi - lo) * u);
    else tensor_set_i64(t, i, (int64_t)floor(lo + (hi - lo + 1) * u));
  }
}

double kt_rel_err(const Tensor *got, const Tensor *want) {
  if (!got || !want || got->numel != want->numel) return INFINITY;
  double mx = 1e-30, err = 0;
  for (int64_t i = 0; i < want->numel; i++) {
    double b = tensor_get_f64(want, i);
    if (fabs(b) > mx) mx = fabs(b);
  }
  for (int64_t i = 0; i < want->numel; i++) {
    double a = tensor_get_f64(got, i), b = tensor_get_f64(want, i);
    if (isnan(a) || isnan(b)) {
      if (!(isnan(a) && isnan(b))) return INFINITY;
      continue;
    }
    if (isinf(a) || isinf(b)) {
      if (a != b) return INFINITY;
      continue;
    }
    double d = fabs(a - b);
    if (d > err) err = d;
  }
  return err / mx;
}

bool kt_equal(const Tensor *got, const Tensor *want) {
  if (!got || !want || !tensor_same_type(got, want)) return false;
  for (int64_t i = 0; i < want->numel; i++) {
    if (dtype_is_float(want->dtype)) {
      double a = tensor_get_f64(got, i), b = tensor_get_f64(want, i);
      if (!(a == b || (isnan(a) && isnan(b)))) return false;
    } else if (tensor_get_i64(got, i) != tensor_get_i64(want, i)) {
      return false;
    }
  }
  return true;
}
