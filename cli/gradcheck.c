/* cli/gradcheck.c — `relayc --check-grad`: analytic gradients against central differences
 * (spec/gradient.md §3.2).
 *
 * The driver parses the file twice. The first copy becomes its gradient
 * (transform/gradient.h, higher-order mode unless --check-grad=first_order)
 * and runs once on the inputs in
 * the program's own dtypes; the second is rewritten to compute in float64
 * (transform/float64.h) and runs twice per element of every float
 * parameter, at x ± eps·e_i, to give (S(x + eps·e_i) − S(x − eps·e_i)) /
 * (2·eps), where S sums the seeded part of the result (all of a tensor
 * result; the first leaf, recursively, of a tuple — every leaf in first-order
 * mode, which seeds them all); the difference is taken element by element,
 * so outputs the perturbation leaves alone cancel exactly. An element passes when
 * |analytic − numeric| <= atol + rtol·|numeric| (TVM's check_grad test).
 * Parameters without --input get N(mean, scale²) values from a fixed-seed
 * generator, in their own dtype; the float64 copy sees exactly those values.
 * Integer and bool parameters are neither perturbed nor compared.
 *
 * Output: one table row per parameter leaf (stdout); exit 0 when every
 * compared element passes, 4 when one does not, 1/2/3 as usual for a
 * rejected program, bad inputs, a run-time error.
 */
#include "cli/gradcheck.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/lower.h"
#include "eval/vm.h"
#include "ir/build.h"
#include "ir/dims_text.h"
#include "ir/mem.h"
#include "ir/print.h"
#include "runtime/npy.h"
#include "runtime/tensor.h"
#include "runtime/value.h"
#include "sema/infer.h"
#include "transform/float64.h"
#include "transform/gradient.h"

/* One tensor leaf of a parameter (a tensor parameter has one). */
typedef struct Leaf {
  char name[128];   /* %x, %t.1 */
  Tensor *value;    /* in the parameter's dtype */
  Tensor *value64;  /* the same values in float64 for float leaves, else the same dtype */
  bool is_float;
  uint32_t param;   /* which parameter */
} Leaf;

typedef VEC(Leaf) LeafVec;
typedef VEC(Tensor *) TensorVec;

/* ------------------------------------------------------------ random inputs */

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double rng_normal(uint64_t *s) { /* Box-Muller */
  double u1 = ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
  double u2 = ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static bool static_shape(const Type *t, int64_t *shape) {
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    if (t->tensor.dims[i].kind != DIM_INT) return false;
    shape[i] = t->tensor.dims[i].value;
  }
  return true;
}

static Tensor *to_f64(const Tensor *t) {
  Tensor *r = tensor_new(DT_F64, t->ndim, t->shape);
  if (!r) return NULL;
  for (int64_t i = 0; i < t->numel; i++) tensor_set_f64(r, i, tensor_get_f64(t, i));
  return r;
}

/* Fills the leaves of parameter p (type t) with drawn values. */
static bool draw_leaves(const Type *t, const char *name, uint32_t param, const DriverOptions *o, uint64_t *rng,
                        LeafVec *out, Diag *d) {
  t = type_solved(t);
  if (t->kind == TYPE_TUPLE) {
    for (uint32_t i = 0; i < t->tuple.n; i++) {
      char sub[128];
      snprintf(sub, sizeof sub, "%s.%u", name, i);
      if (!draw_leaves(t->tuple.fields[i], sub, param, o, rng, out, d)) return false;
    }
    return true;
  }
  int64_t shape[64];
  if (t->kind != TYPE_TENSOR || t->tensor.ndim > 64 || !static_shape(t, shape)) {
    diag_plain(d, DIAG_ERROR, "--check-grad: parameter %s needs a static tensor shape (or give it with --input)", name);
    return false;
  }
  Tensor *v = tensor_new(t->tensor.dtype, (int32_t)t->tensor.ndim, shape);
  if (!v) {
    diag_plain(d, DIAG_ERROR, "--check-grad: cannot allocate parameter %s", name);
    return false;
  }
  for (int64_t i = 0; i < v->numel; i++) {
    double x = o->gc_mean + o->gc_scale * rng_normal(rng);
    if (dtype_is_float(t->tensor.dtype)) tensor_set_f64(v, i, x);
    else tensor_set_i64(v, i, (int64_t)llround(x));
  }
  Leaf l = {.value = v, .is_float = dtype_is_float(t->tensor.dtype), .param = param};
  snprintf(l.name, sizeof l.name, "%s", name);
  vec_push(*out, l);
  return true;
}

/* The --input given for parameter `name`, or NULL. */
static const char *input_path(const DriverOptions *o, const char *name) {
  for (size_t i = 0; i < o->inputs.len; i++) {
    const char *spec = o->inputs.data[i], *eq = strchr(spec, '=');
    if (!eq) continue;
    const char *n = spec[0] == '%' ? spec + 1 : spec;
    size_t len = (size_t)(eq - n);
    if (strlen(name) == len && strncmp(name, n, len) == 0) return eq + 1;
  }
  return NULL;
}

static bool tensor_matches(const Tensor *t, const Type *ty) {
  ty = type_solved(ty);
  if (!ty || ty->kind != TYPE_TENSOR || !dtype_eq(t->dtype, ty->tensor.dtype) || (uint32_t)t->ndim != ty->tensor.ndim)
    return false;
  for (uint32_t i = 0; i < ty->tensor.ndim; i++)
    if (ty->tensor.dims[i].kind == DIM_INT && ty->tensor.dims[i].value != t->shape[i]) return false;
  return true;
}

static int build_inputs(Module *m, const Function *fn, const DriverOptions *o, LeafVec *leaves, Diag *d) {
  for (size_t i = 0; i < o->inputs.len; i++) {
    const char *spec = o->inputs.data[i], *eq = strchr(spec, '=');
    const char *n = spec[0] == '%' ? spec + 1 : spec;
    bool found = false;
    for (uint32_t k = 0; eq && k < fn->nparams; k++)
      found |= strlen(var_name(fn->params[k])) == (size_t)(eq - n) && strncmp(var_name(fn->params[k]), n, (size_t)(eq - n)) == 0;
    if (!found) {
      diag_plain(d, DIAG_ERROR, "--input %s: @main has no parameter of that name", spec);
      return 2;
    }
  }
  uint64_t rng = o->gc_seed;
  for (uint32_t k = 0; k < fn->nparams; k++) {
    const Var *p = fn->params[k];
    const char *path = input_path(o, var_name(p));
    char name[128];
    snprintf(name, sizeof name, "%%%s", var_name(p));
    if (!path) {
      if (!draw_leaves(p->type, name, k, o, &rng, leaves, d)) return 2;
      continue;
    }
    char err[NPY_ERR_SIZE];
    Tensor *t = npy_read_file(path, err);
    if (!t) {
      diag_plain(d, DIAG_ERROR, "%s: %s", path, err);
      return 2;
    }
    if (!tensor_matches(t, p->type)) {
      diag_plain(d, DIAG_ERROR, "input %s: %s does not match the parameter's type %s", name, path,
                 type_to_string(m->arena, type_solved(p->type)));
      tensor_release(t);
      return 2;
    }
    Leaf l = {.value = t, .is_float = dtype_is_float(t->dtype), .param = k};
    snprintf(l.name, sizeof l.name, "%s", name);
    vec_push(*leaves, l);
  }
  for (size_t i = 0; i < leaves->len; i++) {
    Leaf *l = &leaves->data[i];
    l->value64 = l->is_float ? to_f64(l->value) : tensor_retain(l->value);
    if (!l->value64) {
      diag_plain(d, DIAG_ERROR, "--check-grad: out of memory");
      return 2;
    }
  }
  return 0;
}

/* The arguments of @main: leaves regrouped into the parameters' tuple shapes.
 * `over` (may be NULL) replaces leaf `over_ix`. Returns new references. */
static Value build_arg(const Type *t, const LeafVec *ls, size_t *at, bool f64, size_t over_ix, Tensor *over) {
  t = type_solved(t);
  if (t->kind == TYPE_TUPLE) {
    Value v = value_tuple_new(t->tuple.n);
    for (uint32_t i = 0; i < t->tuple.n; i++) value_tuple(v)->f[i] = build_arg(t->tuple.fields[i], ls, at, f64, over_ix, over);
    return v;
  }
  size_t ix = (*at)++;
  Tensor *x = ix == over_ix && over ? over : (f64 ? ls->data[ix].value64 : ls->data[ix].value);
  return value_from_tensor(tensor_retain(x));
}

static void build_args(const Function *fn, const LeafVec *ls, bool f64, size_t over_ix, Tensor *over, Value *args) {
  size_t at = 0;
  for (uint32_t k = 0; k < fn->nparams; k++) args[k] = build_arg(fn->params[k]->type, ls, &at, f64, over_ix, over);
}

/* The seeded part of a result, element by element, appended to *out:
 * higher-order mode seeds the first leaf (the first field of tuples,
 * recursively), first-order mode every leaf. */
typedef VEC(double) DoubleVec;
static bool seeded_values(const Value *v, bool all_leaves, DoubleVec *out) {
  if (value_kind(*v) == VK_TUPLE) {
    TupleObj *tu = value_tuple(*v);
    for (uint32_t i = 0; i < tu->n && (all_leaves || i == 0); i++)
      if (!seeded_values(&tu->f[i], all_leaves, out)) return false;
    return true;
  }
  Tensor *t = value_to_tensor(v);
  if (!t) return false;
  for (int64_t i = 0; i < t->numel; i++) vec_push(*out, tensor_get_f64(t, i));
  tensor_release(t);
  return true;
}

/* S(x + eps) − S(x − eps), summed element by element: an output the input
 * does not move cancels exactly even when it is huge or infinite (max pooling
 * pads with the dtype's lowest value, whose sum would overflow). */
static double seeded_difference(const DoubleVec *plus, const DoubleVec *minus) {
  double s = 0;
  for (size_t j = 0; j < plus->len && j < minus->len; j++)
    if (plus->data[j] != minus->data[j]) s += plus->data[j] - minus->data[j];
  return s;
}

/* Appends the tensor leaves of v (depth-first) as float64 tensors. */
static bool value_leaves(const Value *v, TensorVec *out) {
  if (value_kind(*v) == VK_TUPLE) {
    TupleObj *tu = value_tuple(*v);
    for (uint32_t i = 0; i < tu->n; i++)
      if (!value_leaves(&tu->f[i], out)) return false;
    return true;
  }
  Tensor *t = value_to_tensor(v);
  if (!t) return false;
  Tensor *t64 = to_f64(t);
  tensor_release(t);
  if (!t64) return false;
  vec_push(*out, t64);
  return true;
}

static const Code *main_code(const Program *p) {
  int32_t ix = program_global(p, "main");
  return ix < 0 ? NULL : p->codes[ix];
}

static void index_text(const Tensor *t, int64_t flat, char *buf, size_t cap) {
  int64_t idx[TENSOR_MAX_NDIM];
  for (int32_t i = t->ndim; i-- > 0;) {
    idx[i] = t->shape[i] ? flat % t->shape[i] : 0;
    flat = t->shape[i] ? flat / t->shape[i] : 0;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < t->ndim && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%" PRId64, i ? ", " : "", idx[i]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

int gradcheck_run(Module *ma, Module *mb, const DriverOptions *o, Diag *d) {
  GlobalDef *ga = module_find_global(ma, "main"), *gb = module_find_global(mb, "main");
  if (!ga || !ga->fn || !gb || !gb->fn) {
    diag_plain(d, DIAG_ERROR, "--check-grad: the module has no @main function");
    return 2;
  }
  LeafVec leaves = {0};
  Program *pa = NULL, *pb = NULL;
  Value *args = NULL;
  TensorVec analytic = {0};
  int status = build_inputs(ma, ga->fn, o, &leaves, d);
  Function *orig = ga->fn;
  uint32_t nparams = orig->nparams;
  args = mem_calloc(nparams + 1, sizeof *args);
  /* analytic side: the gradient program, in the program's dtypes */
  if (status == 0) {
    Expr *g = gradient_of_function(ma, orig, o->gc_first_order ? GRAD_FIRST_ORDER : GRAD_HIGHER_ORDER, d);
    if (!g) status = 1;
    else {
      ga->fn = g->fn;
      infer_clear(ma);
      if (!infer_module(ma, d)) {
        diag_plain(d, DIAG_NOTE, "internal error: the gradient program does not type-check (a relayc bug: please report it)");
        status = 1;
      }
    }
  }
  if (status == 0 && !f64_convert_module(mb, d)) {
    diag_plain(d, DIAG_NOTE, "--check-grad: the float64 copy of the program does not type-check");
    status = 1;
  }
  if (status == 0 && (!(pa = lower_module(ma, d)) || !(pb = lower_module(mb, d)))) status = 3;
  VmLimits lim = {0, 0, 0};
  if (status == 0) {
    build_args(orig, &leaves, false, SIZE_MAX, NULL, args);
    Value res = value_none();
    status = vm_run(pa, main_code(pa), args, nparams, &res, d, &lim) ? 3 : 0;
    if (status == 0) {
      bool ok = value_kind(res) == VK_TUPLE && value_tuple(res)->n == 2 && value_leaves(&value_tuple(res)->f[1], &analytic);
      if (!ok || analytic.len != leaves.len) {
        diag_plain(d, DIAG_ERROR, "--check-grad: unexpected shape of the gradient result");
        status = 3;
      }
    }
    value_release(res);
  }
  /* numeric side: central differences on the float64 copy */
  bool all_pass = true;
  if (status == 0) {
    printf("%-12s %-16s %12s %12s  %-14s %14s %14s  %s\n", "parameter", "shape", "max |diff|", "max rel", "worst at",
           "analytic", "numeric", "result");
    for (size_t li = 0; li < leaves.len && status == 0; li++) {
      Leaf *l = &leaves.data[li];
      char shp[128];
      dims_text(shp, sizeof shp, l->value->shape, l->value->ndim, DIMS_TUPLE);
      if (!l->is_float) {
        printf("%-12s %-16s %12s %12s  %-14s %14s %14s  %s\n", l->name, shp, "-", "-", "-", "-", "-", "not compared");
        continue;
      }
      Tensor *an = analytic.data[li];
      double max_abs = 0, max_rel = 0, worst_ratio = -1, worst_a = 0, worst_n = 0;
      int64_t worst = -1;
      bool pass = true;
      for (int64_t i = 0; i < l->value64->numel && status == 0; i++) {
        DoubleVec sv[2] = {{0}, {0}};
        for (int side = 0; side < 2 && status == 0; side++) {
          Tensor *x = tensor_copy(l->value64);
          tensor_set_f64(x, i, tensor_get_f64(l->value64, i) + (side ? -o->gc_eps : o->gc_eps));
          build_args(gb->fn, &leaves, true, li, x, args);
          tensor_release(x);
          Value r = value_none();
          if (vm_run(pb, main_code(pb), args, nparams, &r, d, &lim)) status = 3;
          else if (!seeded_values(&r, o->gc_first_order, &sv[side])) {
            diag_plain(d, DIAG_ERROR, "--check-grad: the result is not a tensor or a tuple of tensors");
            status = 3;
          }
          value_release(r);
        }
        double num = status ? 0 : seeded_difference(&sv[0], &sv[1]) / (2 * o->gc_eps);
        vec_free(sv[0]);
        vec_free(sv[1]);
        if (status) break;
        double ana = tensor_get_f64(an, i);
        double diff = fabs(ana - num), tol = o->gc_atol + o->gc_rtol * fabs(num);
        double rel = diff / (fabs(num) > 0 ? fabs(num) : 1);
        if (!(diff <= tol)) pass = false;
        if (diff > max_abs || isnan(diff)) max_abs = diff;
        if (rel > max_rel || isnan(rel)) max_rel = rel;
        double ratio = isnan(diff) ? INFINITY : diff == 0 ? 0 : diff / tol; /* 0 / 0 with atol = rtol = 0 */
        if (ratio > worst_ratio) {
          worst_ratio = ratio;
          worst = i;
          worst_a = ana;
          worst_n = num;
        }
      }
      if (status) break;
      char at[128] = "-";
      if (worst >= 0) index_text(l->value64, worst, at, sizeof at);
      if (worst >= 0)
        printf("%-12s %-16s %12.3g %12.3g  %-14s %14.7g %14.7g  %s\n", l->name, shp, max_abs, max_rel, at, worst_a,
               worst_n, pass ? "PASS" : "FAIL");
      else
        printf("%-12s %-16s %12s %12s  %-14s %14s %14s  %s\n", l->name, shp, "-", "-", "-", "-", "-", "PASS (empty)");
      all_pass &= pass;
    }
    if (status == 0) {
      printf("%s (eps %g, atol %g, rtol %g)\n", all_pass ? "gradient check passed" : "gradient check FAILED", o->gc_eps,
             o->gc_atol, o->gc_rtol);
      if (!all_pass) status = 4;
    }
  }
  for (size_t i = 0; i < analytic.len; i++) tensor_release(analytic.data[i]);
  vec_free(analytic);
  for (size_t i = 0; i < leaves.len; i++) {
    tensor_release(leaves.data[i].value);
    tensor_release(leaves.data[i].value64);
  }
  vec_free(leaves);
  mem_free(args);
  value_clear_refs();
  if (pa) program_free(pa);
  if (pb) program_free(pb);
  value_heap_shutdown();
  return status;
}
