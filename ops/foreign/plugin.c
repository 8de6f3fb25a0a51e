/* ops/foreign/plugin.c — the native plugin loader and the bridge between relayc's
 * registry and the plain-C plugin ABI (include/relayc/plugin.h).
 *
 * Loading: dlopen, check the exported ABI version BEFORE running any plugin
 * code, then call relayc_plugin_init with the service table. register_op
 * validates a descriptor completely (name, arity, callbacks, attribute names,
 * types and defaults) before anything is registered, copies it into a
 * process-wide arena (plugins may pass stack descriptors), and registers an
 * OpDef whose relation and kernel are the two bridges below.
 *
 * Bridges: plugin_rel hands the plugin the input tensor types (-1 for an
 * unknown extent) and turns its answer into a Relay type or a type error at
 * the call; plugin_kernel runs the same relation on the concrete shapes to
 * size the output, allocates it, and calls the plugin's kernel. Attribute
 * getters reach the call's normalised attributes through an opaque
 * RelaycAttrs that wraps whichever context (relation or kernel) is active.
 * State is append-only; plugins are never unloaded once init has run.
 */
#include "ops/foreign/plugin.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "include/relayc/plugin.h"
#include "ir/arena.h"
#include "ir/attrs.h"
#include "ir/mem.h"
#include "ops/kernels/kernel.h"
#include "ops/registry.h"
#include "ops/relations/type_rel.h"

#define PLUGIN_ERR_SIZE 256

/* One registered plugin operator. */
typedef struct PluginOp {
  int32_t id;
  RelaycOpDesc desc; /* copied; desc.name and desc.attrs point into the arena */
} PluginOp;

/* What a RelaycAttrs handle stands for: exactly one context is set. */
struct RelaycAttrs {
  TypeRelCtx *rel;
  const KernelCtx *kernel;
};

static struct {
  Arena *arena;       /* owns descriptor copies; never freed */
  PluginOp **ops;     /* mem_realloc'ed */
  uint32_t nops, cap;
  void **handles;     /* plugins initialised so far (loading one again is a no-op) */
  uint32_t nhandles;
  Diag *d;            /* the loading call's diagnostics (during init only) */
  const char *path;   /* the plugin being initialised */
} pl;

static PluginOp *op_by_id(int32_t id) {
  for (uint32_t i = 0; i < pl.nops; i++)
    if (pl.ops[i]->id == id) return pl.ops[i];
  return NULL;
}

/* ------------------------------------------------------------ dtypes */

static bool dtype_valid(RelaycDType t) {
  if (t.lanes == 0) return false;
  switch (t.code) {
  case RELAYC_DT_INT: return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  case RELAYC_DT_UINT: return t.bits == 1 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  case RELAYC_DT_FLOAT: return t.bits == 16 || t.bits == 32 || t.bits == 64;
  default: return false;
  }
}

static RelaycDType to_plugin_dtype(DType t) { return (RelaycDType){t.code, t.bits, t.lanes}; }
static DType from_plugin_dtype(RelaycDType t) { return (DType){t.code, t.bits, t.lanes}; }

/* ------------------------------------------------------------ attribute getters */

static int64_t api_attr_int(const RelaycAttrs *a, const char *name, int64_t dflt) {
  if (!a || !name) return dflt;
  return a->rel ? rel_attr_int(a->rel, name, dflt) : kernel_attr_int(a->kernel, name, dflt);
}

static double api_attr_double(const RelaycAttrs *a, const char *name, double dflt) {
  if (!a || !name) return dflt;
  return a->rel ? rel_attr_double(a->rel, name, dflt) : kernel_attr_double(a->kernel, name, dflt);
}

static int api_attr_bool(const RelaycAttrs *a, const char *name, int dflt) {
  if (!a || !name) return dflt;
  return a->rel ? rel_attr_bool(a->rel, name, dflt != 0) : kernel_attr_bool(a->kernel, name, dflt != 0);
}

static const char *api_attr_str(const RelaycAttrs *a, const char *name, const char *dflt) {
  if (!a || !name) return dflt;
  return a->rel ? rel_attr_str(a->rel, name, dflt) : kernel_attr_str(a->kernel, name, dflt);
}

/* ------------------------------------------------------------ shared relation step */

/* Runs the plugin's relation on `in` and checks its answer: 0 with *out
 * filled (shape in oshape), else an error message in err. */
static int call_relation(const PluginOp *op, const RelaycTensorType *in, const RelaycAttrs *attrs,
                         RelaycTensorType *out, int64_t *oshape, char *err) {
  RelaycTypeRelArgs args = {(uint32_t)op->desc.num_inputs, in, attrs, op->desc.user};
  *out = (RelaycTensorType){in && op->desc.num_inputs ? in[0].dtype : (RelaycDType){2, 32, 1}, -1, oshape};
  for (int i = 0; i < RELAYC_PLUGIN_MAX_NDIM; i++) oshape[i] = -1; /* extents left unwritten are unknown */
  err[0] = 0;
  if (op->desc.type_rel(&args, out, err, PLUGIN_ERR_SIZE) != 0) {
    err[PLUGIN_ERR_SIZE - 1] = 0;
    if (!err[0]) snprintf(err, PLUGIN_ERR_SIZE, "the plugin's type relation failed");
    return 1;
  }
  if (out->shape != oshape) {
    snprintf(err, PLUGIN_ERR_SIZE, "the plugin's type relation must write the extents into out->shape");
    return 1;
  }
  if (out->ndim < 0 || out->ndim > RELAYC_PLUGIN_MAX_NDIM) {
    snprintf(err, PLUGIN_ERR_SIZE, "the plugin's type relation gave an invalid rank %d", (int)out->ndim);
    return 1;
  }
  if (!dtype_valid(out->dtype)) {
    snprintf(err, PLUGIN_ERR_SIZE, "the plugin's type relation gave an invalid dtype");
    return 1;
  }
  for (int32_t i = 0; i < out->ndim; i++)
    if (oshape[i] < -1) {
      snprintf(err, PLUGIN_ERR_SIZE, "the plugin's type relation gave a negative extent");
      return 1;
    }
  return 0;
}

/* ------------------------------------------------------------ the relation bridge */

static int plugin_rel(TypeRelCtx *c) {
  const PluginOp *op = op_by_id(op_lookup(rel_op_name(c)));
  if (!op) return rel_fail(c, "not a plugin operator");
  uint32_t n = (uint32_t)op->desc.num_inputs;
  RelaycTensorType in[RELAYC_PLUGIN_MAX_NDIM];
  for (uint32_t i = 0; i < n; i++) {
    const Type *t = rel_tensor(c, i);
    if (!t) return rel_pending(c);
    int64_t *shape = arena_alloc(rel_module(c)->arena, (t->tensor.ndim + 1) * sizeof *shape);
    for (uint32_t k = 0; k < t->tensor.ndim; k++)
      shape[k] = dim_known(t->tensor.dims[k]) ? t->tensor.dims[k].value : -1;
    in[i] = (RelaycTensorType){to_plugin_dtype(t->tensor.dtype), (int32_t)t->tensor.ndim, shape};
  }
  RelaycAttrs attrs = {c, NULL};
  RelaycTensorType out;
  int64_t oshape[RELAYC_PLUGIN_MAX_NDIM];
  char err[PLUGIN_ERR_SIZE];
  if (call_relation(op, in, &attrs, &out, oshape, err)) return rel_fail(c, "%s", err);
  Type *o = rel_new_tensor(c, from_plugin_dtype(out.dtype), (uint32_t)out.ndim);
  for (int32_t i = 0; i < out.ndim; i++) o->tensor.dims[i] = oshape[i] >= 0 ? dim_int(oshape[i]) : dim_any();
  return rel_assign(c, n, o) ? REL_DONE : REL_FAIL;
}

/* ------------------------------------------------------------ the kernel bridge */

static RelaycTensor tensor_view(const Tensor *t) {
  return (RelaycTensor){t->data, to_plugin_dtype(t->dtype), t->ndim, t->shape, t->numel};
}

static int plugin_kernel(KernelCtx *c) {
  const PluginOp *op = op_by_id(c->op_id);
  if (!op || kernel_ninputs(c) != (uint32_t)op->desc.num_inputs)
    return kernel_fail(c, "plugin operator called with wrong inputs");
  uint32_t n = kernel_ninputs(c);
  RelaycTensor in[RELAYC_PLUGIN_MAX_NDIM];
  RelaycTensorType types[RELAYC_PLUGIN_MAX_NDIM];
  for (uint32_t i = 0; i < n; i++) {
    in[i] = tensor_view(kernel_input(c, i));
    types[i] = (RelaycTensorType){in[i].dtype, in[i].ndim, kernel_input(c, i)->shape};
  }
  RelaycAttrs attrs = {NULL, c};
  RelaycTensorType ot;
  int64_t oshape[RELAYC_PLUGIN_MAX_NDIM];
  char err[PLUGIN_ERR_SIZE];
  if (call_relation(op, types, &attrs, &ot, oshape, err)) return kernel_fail(c, "%s: %s", op->desc.name, err);
  for (int32_t i = 0; i < ot.ndim; i++)
    if (oshape[i] < 0) return kernel_fail(c, "%s: the output shape is unknown at run time", op->desc.name);
  Tensor *out = kernel_output(c, from_plugin_dtype(ot.dtype), ot.ndim, oshape);
  if (!out) return KERNEL_ERROR;
  RelaycTensor ov = tensor_view(out);
  RelaycKernelArgs args = {n, in, &ov, &attrs, op->desc.user};
  err[0] = 0;
  if (op->desc.kernel(&args, err, PLUGIN_ERR_SIZE) != 0) {
    err[PLUGIN_ERR_SIZE - 1] = 0;
    return kernel_fail(c, "%s: %s", op->desc.name, err[0] ? err : "the plugin's kernel failed");
  }
  return KERNEL_OK;
}

/* ------------------------------------------------------------ registration */

static int reg_error(const char *fmt, const char *a, const char *b) {
  char msg[PLUGIN_ERR_SIZE];
  snprintf(msg, sizeof msg, fmt, a, b);
  if (pl.d) diag_plain(pl.d, DIAG_ERROR, "plugin '%s': %s", pl.path ? pl.path : "?", msg);
  return 1;
}

static bool is_ident(const char *s, bool dots) {
  if (!s || (!isalpha((unsigned char)*s) && *s != '_')) return false;
  for (; *s; s++) {
    if (*s == '.' && dots && s[1] && (isalpha((unsigned char)s[1]) || s[1] == '_')) continue;
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  }
  return true;
}

static bool default_fits(const AttrValue *v, uint32_t type) {
  switch (type) {
  case RELAYC_ATTR_INT: return v->kind == AV_INT;
  case RELAYC_ATTR_DOUBLE: return v->kind == AV_FLOAT || v->kind == AV_INT;
  case RELAYC_ATTR_BOOL: return v->kind == AV_BOOL;
  default: return v->kind == AV_STRING;
  }
}

/* Checks one attribute descriptor (and its default text). */
static int check_attr(const RelaycOpDesc *desc, uint32_t i, Module *scratch) {
  const RelaycAttrDesc *a = &desc->attrs[i];
  if (!is_ident(a->name, false)) return reg_error("operator '%s': attribute %s has an invalid name", desc->name, a->name ? a->name : "(null)");
  if (a->type > RELAYC_ATTR_STRING) return reg_error("operator '%s': attribute '%s' has an unknown type", desc->name, a->name);
  for (uint32_t k = 0; k < i; k++)
    if (strcmp(desc->attrs[k].name, a->name) == 0)
      return reg_error("operator '%s': attribute '%s' is declared twice", desc->name, a->name);
  if (!a->default_text) return 0;
  AttrValue *v = attr_value_parse(scratch, a->default_text);
  if (!v || !default_fits(v, a->type))
    return reg_error("operator '%s': the default of attribute '%s' is not valid attribute text of its type", desc->name,
                     a->name);
  return 0;
}

static int check_desc(const RelaycOpDesc *desc) {
  if (!desc || !is_ident(desc->name, true)) return reg_error("invalid operator name%s%s", desc && desc->name ? " " : "", desc && desc->name ? desc->name : "");
  if (op_lookup(desc->name) >= 0) return reg_error("operator '%s' already exists%s", desc->name, "");
  if (desc->num_inputs < 0 || desc->num_inputs > RELAYC_PLUGIN_MAX_NDIM)
    return reg_error("operator '%s': num_inputs must be between 0 and 64%s", desc->name, "");
  if (!desc->type_rel || !desc->kernel)
    return reg_error("operator '%s': both a type relation and a kernel are required%s", desc->name, "");
  if (desc->nattrs > 64 || (desc->nattrs && !desc->attrs))
    return reg_error("operator '%s': invalid attribute list%s", desc->name, "");
  Module *scratch = module_new(NULL);
  int rc = 0;
  for (uint32_t i = 0; i < desc->nattrs && rc == 0; i++) rc = check_attr(desc, i, scratch);
  module_free(scratch);
  return rc;
}

static AttrFieldType field_type(uint32_t t) {
  return t == RELAYC_ATTR_INT ? AT_INT : t == RELAYC_ATTR_DOUBLE ? AT_DOUBLE : t == RELAYC_ATTR_BOOL ? AT_BOOL : AT_STRING;
}

/* The arena copy of `desc` and its registry schema. */
static PluginOp *copy_desc(const RelaycOpDesc *desc, AttrField **fields) {
  PluginOp *op = arena_alloc(pl.arena, sizeof *op);
  op->desc = *desc;
  op->desc.name = arena_strdup(pl.arena, desc->name);
  RelaycAttrDesc *attrs = desc->nattrs ? arena_alloc(pl.arena, desc->nattrs * sizeof *attrs) : NULL;
  *fields = desc->nattrs ? arena_alloc(pl.arena, desc->nattrs * sizeof **fields) : NULL;
  for (uint32_t i = 0; i < desc->nattrs; i++) {
    const RelaycAttrDesc *a = &desc->attrs[i];
    attrs[i].name = arena_strdup(pl.arena, a->name);
    attrs[i].type = a->type;
    attrs[i].default_text = a->default_text ? arena_strdup(pl.arena, a->default_text) : NULL;
    (*fields)[i] = (AttrField){attrs[i].name, field_type(a->type), attrs[i].default_text, NULL};
  }
  op->desc.attrs = attrs;
  return op;
}

static int api_register_op(const RelaycPluginApi *api, const RelaycOpDesc *desc) {
  (void)api;
  if (check_desc(desc)) return 1;
  if (!pl.arena) pl.arena = arena_new();
  AttrField *fields;
  PluginOp *op = copy_desc(desc, &fields);
  OpDef def = {op->desc.name, desc->num_inputs, fields, desc->nattrs, plugin_rel, plugin_kernel, NULL, NULL};
  op->id = op_register(&def);
  if (op->id < 0) return reg_error("operator '%s' could not be registered%s", desc->name, "");
  if (pl.nops == pl.cap) {
    pl.cap = pl.cap ? pl.cap * 2 : 16;
    pl.ops = mem_realloc(pl.ops, pl.cap * sizeof *pl.ops);
  }
  pl.ops[pl.nops++] = op;
  return 0;
}

static const RelaycPluginApi plugin_api = {
    RELAYC_PLUGIN_ABI_VERSION, sizeof(RelaycPluginApi), api_register_op,
    api_attr_int,              api_attr_double,         api_attr_bool, api_attr_str,
};

/* ------------------------------------------------------------ loading */

/* dlopen with "./" prepended to a bare name that exists in the working directory. */
static void *open_plugin(const char *path) {
  if (strchr(path, '/') || access(path, F_OK) != 0) return dlopen(path, RTLD_NOW | RTLD_LOCAL);
  char *local = mem_malloc(strlen(path) + 3);
  sprintf(local, "./%s", path);
  void *h = dlopen(local, RTLD_NOW | RTLD_LOCAL);
  mem_free(local);
  return h;
}

/* Checks the exported ABI version; false (reported) when absent or different. */
static bool check_version(void *h, const char *path, Diag *d) {
  const uint32_t *v = dlsym(h, "relayc_plugin_abi_version");
  if (!v) {
    diag_plain(d, DIAG_ERROR,
               "'%s' is not a relayc plugin: it exports no relayc_plugin_abi_version (see RELAYC_PLUGIN_ABI_DEFINE "
               "in relayc/plugin.h)",
               path);
    return false;
  }
  if (*v != RELAYC_PLUGIN_ABI_VERSION) {
    diag_plain(d, DIAG_ERROR,
               "plugin '%s' was built for plugin ABI version %u, but this relayc implements version %u; rebuild it "
               "against this relayc's relayc/plugin.h",
               path, (unsigned)*v, (unsigned)RELAYC_PLUGIN_ABI_VERSION);
    return false;
  }
  return true;
}

bool plugin_load(const char *path, Diag *d) {
  void *h = open_plugin(path);
  if (!h) {
    diag_plain(d, DIAG_ERROR, "cannot load plugin '%s': %s", path, dlerror());
    return false;
  }
  for (uint32_t i = 0; i < pl.nhandles; i++)
    if (pl.handles[i] == h) {
      dlclose(h); /* the same library again: drop the extra reference */
      return true;
    }
  if (!check_version(h, path, d)) {
    dlclose(h);
    return false;
  }
  int (*init)(const RelaycPluginApi *);
  void *sym = dlsym(h, "relayc_plugin_init");
  if (!sym) {
    diag_plain(d, DIAG_ERROR, "plugin '%s' exports no relayc_plugin_init entry point", path);
    dlclose(h);
    return false;
  }
  memcpy(&init, &sym, sizeof init);
  int before = d->nerrors;
  pl.d = d;
  pl.path = path;
  pl.handles = mem_realloc(pl.handles, (pl.nhandles + 1) * sizeof *pl.handles);
  pl.handles[pl.nhandles++] = h;
  int rc = init(&plugin_api);
  pl.d = NULL;
  pl.path = NULL;
  if (rc != 0) {
    diag_plain(d, DIAG_ERROR, "plugin '%s' failed to initialise (relayc_plugin_init returned %d)", path, rc);
    return false;
  }
  return d->nerrors == before; /* a rejected register_op the plugin ignored still fails the load */
}
