/* tests/unit/check_registry.c — ops/registry.c: the operator table against
 * spec/ops.md, lookup, suggestions, plugins, attribute normalisation. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ast.h"
#include "ir/attrs.h"
#include "ir/mem.h"
#include "ops/op_ids.h"
#include "ops/registry.h"
#include "tests/unit/unit_run.h"

/* ------------------------------------------------------------------ helpers */

/* One call `op(%x, <attrs>)` in its own source, module and diagnostics sink. */
typedef struct Call {
  Source *src;
  Module *m;
  Diag d;
  FILE *out;
  char *msgs;
  size_t msgs_len;
  Attrs *attrs;
  Span span;
  const OpDef *op;
} Call;

static Call call;

/* Splits "k=v, k2=[1, 2]" at top-level commas into Attrs with spans into the source. */
static Attrs *attrs_from(Module *m, const char *text, uint32_t base) {
  Attrs *a = arena_alloc(m->arena, sizeof *a);
  a->items = arena_alloc(m->arena, 32 * sizeof *a->items);
  size_t i = 0, n = strlen(text);
  while (i < n) {
    while (text[i] == ' ' || text[i] == ',') i++;
    if (i >= n) break;
    size_t k0 = i;
    while (text[i] != '=') i++;
    size_t v0 = ++i;
    int depth = 0;
    bool str = false;
    for (; i < n; i++) {
      char c = text[i];
      if (c == '"' && (i == v0 || text[i - 1] != '\\')) str = !str;
      if (str) continue;
      if (c == '[') depth++;
      if (c == ']') depth--;
      if (c == ',' && depth == 0) break;
    }
    char *key = arena_strndup(m->arena, text + k0, v0 - 1 - k0);
    char *val = arena_strndup(m->arena, text + v0, i - v0);
    AttrValue *v = attr_value_parse(m, val);
    ck_assert_msg(v != NULL, "test bug: cannot parse %s", val);
    v->span = span_make(base + (uint32_t)v0, base + (uint32_t)i);
    a->items[a->n++] = (Attr){key, v, span_make(base + (uint32_t)k0, base + (uint32_t)i), false};
  }
  return a;
}

/* Sets up `call` for operator `name` written with attributes `text` (NULL: none). */
static void make_call(const char *name, const char *text) {
  call.op = op_get(op_lookup(name));
  ck_assert_msg(call.op != NULL, "no operator %s", name);
  size_t cap = strlen(name) + (text ? strlen(text) : 0) + 16;
  char *src = mem_malloc(cap);
  snprintf(src, cap, "%s(%%x%s%s)", name, text ? ", " : "", text ? text : "");
  uint32_t base = (uint32_t)(strlen(name) + 5);
  call.src = source_new("t.relay", src, strlen(src));
  call.m = module_new(call.src);
  call.out = open_memstream(&call.msgs, &call.msgs_len);
  diag_init(&call.d, call.out, call.src);
  call.attrs = text ? attrs_from(call.m, text, base) : NULL;
  call.span = span_make(0, (uint32_t)strlen(src));
}

static bool normalize(void) {
  bool ok = op_attrs_normalize(call.m, call.op, &call.attrs, call.span, &call.d);
  fflush(call.out);
  return ok;
}

static void teardown(void) {
  if (call.out) fclose(call.out);
  free(call.msgs);
  module_free(call.m);
  source_free(call.src);
  memset(&call, 0, sizeof call);
}

static void assert_msg_has(const char *want) {
  ck_assert_msg(call.msgs && strstr(call.msgs, want), "expected \"%s\" in:\n%s", want,
                call.msgs ? call.msgs : "");
}

static char *value_text(const AttrValue *v) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  attr_value_print(f, v);
  fclose(f);
  return buf;
}

static void assert_attr(uint32_t i, const char *key, const char *text, bool is_default) {
  ck_assert_ptr_nonnull(call.attrs);
  ck_assert_uint_lt(i, call.attrs->n);
  const Attr *a = &call.attrs->items[i];
  ck_assert_str_eq(a->key, key);
  char *got = value_text(a->value);
  ck_assert_msg(strcmp(got, text) == 0, "%s: got %s, want %s", key, got, text);
  free(got);
  ck_assert_msg(a->is_default == is_default, "%s: is_default %d", key, a->is_default);
}

static const AttrField *field(const char *op, const char *name) {
  const OpDef *d = op_get(op_lookup(op));
  ck_assert_ptr_nonnull(d);
  for (uint32_t i = 0; i < d->nattrs; i++)
    if (strcmp(d->attrs[i].name, name) == 0) return &d->attrs[i];
  ck_abort_msg("%s has no attribute %s", op, name);
  return NULL;
}

/* -------------------------------------------------------------- the table */

/* Every operator of spec/ops.md §14 (the ones real programs use). */
static const char *used_ops[] = {
    "add", "nn.conv2d", "nn.relu", "reshape", "nn.batch_norm", "nn.dense", "nn.max_pool2d",
    "nn.global_avg_pool2d", "nn.pad", "multiply", "transpose", "mean", "subtract", "divide",
    "power", "sqrt", "nn.batch_matmul", "expand_dims", "nn.softmax", "tanh", "split",
    "concatenate", "take", "where", "less", "equal", "not_equal", "less_equal", "greater",
    "greater_equal", "abs", "negative", "clip", "nn.batch_flatten", "nn.bias_add",
};

/* A sample of the rest of spec/ops.md (typical-export coverage). */
static const char *other_ops[] = {
    "floor_divide", "trunc_mod", "left_shift", "bitwise_xor", "logical_xor", "rsqrt", "log10",
    "atanh", "erf", "sigmoid", "round", "logical_not", "bitwise_not", "copy", "zeros_like",
    "ones_like", "fast_exp", "fast_tanh", "fast_erf", "isnan", "isinf", "isfinite",
    "nn.leaky_relu", "nn.prelu", "nn.dropout", "fixed_point_multiply", "cast", "cast_like",
    "reinterpret", "sum", "max", "min", "prod", "all", "any", "argmax", "argmin", "variance",
    "squeeze", "reshape_like", "layout_transform", "stack", "strided_slice", "gather",
    "gather_nd", "one_hot", "slice_like", "broadcast_to", "broadcast_to_like", "tile", "repeat",
    "reverse", "cumsum", "cumprod", "zeros", "ones", "full", "full_like", "arange", "shape_of",
    "ndarray_size", "nn.matmul", "nn.conv1d", "nn.conv3d", "nn.conv2d_transpose",
    "nn.avg_pool2d", "nn.global_max_pool2d", "nn.adaptive_avg_pool2d", "nn.adaptive_max_pool2d",
    "nn.max_pool1d", "nn.avg_pool1d", "nn.max_pool3d", "nn.avg_pool3d", "nn.global_avg_pool1d",
    "nn.global_max_pool3d", "nn.adaptive_avg_pool1d", "nn.adaptive_max_pool3d",
    "nn.layer_norm", "nn.instance_norm", "nn.group_norm", "nn.l2_normalize", "nn.lrn",
    "nn.log_softmax", "nn.fast_softmax", "nn.mirror_pad", "image.resize2d", "nn.upsampling",
    "argsort", "sort", "topk",
};

START_TEST(every_spec_op_is_registered) {
  for (size_t i = 0; i < sizeof used_ops / sizeof used_ops[0]; i++) {
    int32_t id = op_lookup(used_ops[i]);
    ck_assert_msg(id >= 0, "missing %s", used_ops[i]);
    ck_assert_str_eq(op_get(id)->name, used_ops[i]);
  }
  for (size_t i = 0; i < sizeof other_ops / sizeof other_ops[0]; i++)
    ck_assert_msg(op_lookup(other_ops[i]) >= 0, "missing %s", other_ops[i]);
  ck_assert_int_eq(op_lookup("add"), OP_ADD);
  ck_assert_int_eq(op_lookup("nn.conv2d"), OP_NN_CONV2D);
  ck_assert_int_eq(op_lookup("topk"), OP_TOPK);
  ck_assert_uint_eq(op_builtin_count(), OP_BUILTIN_COUNT);
  ck_assert_uint_ge(op_builtin_count(), 150);
}
END_TEST

START_TEST(table_is_consistent) {
  Module *m = module_new(NULL);
  for (uint32_t id = 0; id < op_count(); id++) {
    const OpDef *d = op_get((int32_t)id);
    ck_assert_int_eq(op_lookup(d->name), (int32_t)id); /* names are unique */
    ck_assert_int_ge(d->num_inputs, 0);
    ck_assert_ptr_nonnull(d->relation); /* every operator is typed (issue 3) */
    for (uint32_t i = 0; i < d->nattrs; i++) {
      const AttrField *f = &d->attrs[i];
      for (uint32_t j = 0; j < i; j++) ck_assert_str_ne(d->attrs[j].name, f->name);
      const char *text = f->default_text ? f->default_text : f->py_default;
      if (!text) continue;
      /* every default is canonical text: it parses and prints back unchanged */
      AttrValue *v = attr_value_parse(m, text);
      ck_assert_msg(v != NULL, "%s.%s: bad default %s", d->name, f->name, text);
      char *back = value_text(v);
      ck_assert_msg(strcmp(back, text) == 0, "%s.%s: %s prints as %s", d->name, f->name, text, back);
      free(back);
    }
  }
  module_free(m);
}
END_TEST

START_TEST(arities) {
  static const struct { const char *op; int32_t n; } rows[] = {
      {"add", 2}, {"nn.relu", 1}, {"concatenate", 1}, {"stack", 1}, {"zeros", 0}, {"ones", 0},
      {"nn.pad", 2}, {"where", 3}, {"arange", 3}, {"variance", 2}, {"nn.batch_norm", 5},
      {"nn.layer_norm", 3}, {"nn.prelu", 2}, {"full", 1}, {"full_like", 2}, {"one_hot", 3},
      {"take", 2}, {"nn.dense", 2}, {"nn.conv2d", 2}, {"split", 1}, {"cast_like", 2},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    ck_assert_msg(op_get(op_lookup(rows[i].op))->num_inputs == rows[i].n, "%s", rows[i].op);
}
END_TEST

START_TEST(conv2d_schema) {
  static const char *names[] = {"strides", "padding", "dilation", "groups", "channels",
                                "kernel_size", "data_layout", "kernel_layout", "out_layout",
                                "out_dtype"};
  static const char *defaults[] = {"[1, 1]", "[0, 0]", "[1, 1]", "1", "None", "None",
                                   "\"NCHW\"", "\"OIHW\"", "\"\"", "\"\""};
  const OpDef *d = op_get(op_lookup("nn.conv2d"));
  ck_assert_uint_eq(d->nattrs, 10);
  for (uint32_t i = 0; i < 10; i++) {
    ck_assert_str_eq(d->attrs[i].name, names[i]);
    ck_assert_str_eq(d->attrs[i].default_text, defaults[i]);
  }
  ck_assert_int_eq(d->attrs[0].type, AT_INT_ARRAY);
  ck_assert_int_eq(d->attrs[3].type, AT_INT);
  ck_assert_int_eq(d->attrs[9].type, AT_DTYPE);
}
END_TEST

START_TEST(schema_details) {
  ck_assert_str_eq(field("nn.batch_matmul", "transpose_b")->default_text, "False");
  ck_assert_str_eq(field("nn.leaky_relu", "alpha")->default_text, "0.25f");
  ck_assert_str_eq(field("image.resize2d", "rounding_method")->default_text, "\"round\"");
  ck_assert_str_eq(field("image.resize2d", "roi")->default_text, "[0f, 0f, 0f, 0f]");
  ck_assert_str_eq(field("nn.batch_norm", "epsilon")->default_text, "1e-05f");
  ck_assert_str_eq(field("nn.batch_norm", "center")->default_text, "True");
  ck_assert_str_eq(field("nn.lrn", "alpha")->default_text, "0.0001f");
  ck_assert_str_eq(field("shape_of", "dtype")->default_text, "\"\"");
  ck_assert_str_eq(field("nn.softmax", "axis")->default_text, "-1");
  ck_assert_str_eq(field("mean", "axis")->default_text, "None");
  /* required fields: no default, Python value or NULL */
  const AttrField *units = field("nn.dense", "units");
  ck_assert_ptr_null(units->default_text);
  ck_assert_str_eq(units->py_default, "None");
  ck_assert_str_eq(field("transpose", "axes")->py_default, "None");
  ck_assert_ptr_null(field("clip", "a_min")->default_text);
  ck_assert_ptr_null(field("clip", "a_min")->py_default);
  ck_assert_ptr_null(field("reshape", "newshape")->py_default);
  ck_assert_str_eq(field("nn.max_pool2d", "pool_size")->py_default, "[1, 1]");
  ck_assert_int_eq(field("split", "indices_or_sections")->type, AT_INT_OR_ARRAY);
  ck_assert_int_eq(field("nn.pad", "pad_width")->type, AT_NESTED_ARRAY);
  ck_assert_int_eq(field("image.resize2d", "roi")->type, AT_DOUBLE_ARRAY);
  /* print order of argmax: axis, keepdims, select_last_index, exclude */
  const OpDef *am = op_get(op_lookup("argmax"));
  ck_assert_str_eq(am->attrs[2].name, "select_last_index");
  ck_assert_str_eq(am->attrs[3].name, "exclude");
  ck_assert_uint_eq(op_get(op_lookup("add"))->nattrs, 0);
}
END_TEST

START_TEST(lookup_misses) {
  ck_assert_int_eq(op_lookup("nn.conv"), -1);
  ck_assert_int_eq(op_lookup(""), -1);
  ck_assert_int_eq(op_lookup("ADD"), -1);
  ck_assert_int_eq(op_lookup(NULL), -1);
  ck_assert_ptr_null(op_get(-1));
  ck_assert_ptr_null(op_get((int32_t)op_count()));
}
END_TEST

START_TEST(suggestions) {
  ck_assert_str_eq(op_suggest("nn.conv"), "nn.conv2d");
  ck_assert_str_eq(op_suggest("ad"), "add");
  ck_assert_str_eq(op_suggest("relu"), "nn.relu");
  ck_assert_str_eq(op_suggest("softmax"), "nn.softmax");
  ck_assert_str_eq(op_suggest("nn.sofmax"), "nn.softmax");
  ck_assert_str_eq(op_suggest("nn.max_pool"), "nn.max_pool2d");
  ck_assert_str_eq(op_suggest("substract"), "subtract");
  ck_assert_ptr_null(op_suggest("completely_unrelated_name"));
  ck_assert_ptr_null(op_suggest("q"));
  ck_assert_ptr_null(op_suggest(""));
}
END_TEST

static const AttrField plugin_schema[] = {
    {"scale", AT_DOUBLE, "1f", NULL},
    {"mode", AT_STRING, NULL, "\"fast\""},
};

START_TEST(plugins) {
  uint32_t before = op_count();
  OpDef def = {"my.scale", 1, plugin_schema, 2, NULL, NULL, NULL, NULL};
  int32_t id = op_register(&def);
  ck_assert_int_eq(id, (int32_t)before);
  ck_assert_uint_eq(op_count(), before + 1);
  ck_assert_int_eq(op_lookup("my.scale"), id);
  ck_assert_str_eq(op_get(id)->name, "my.scale");
  ck_assert_int_eq(op_register(&def), -1); /* duplicate */
  OpDef clash = {"add", 2, NULL, 0, NULL, NULL, NULL, NULL};
  ck_assert_int_eq(op_register(&clash), -1);
  static const AttrField bad_schema[] = {{"x", AT_INT, "[1,", NULL}};
  OpDef bad = {"my.bad", 1, bad_schema, 1, NULL, NULL, NULL, NULL};
  ck_assert_int_eq(op_register(&bad), -1);
  ck_assert_int_eq(op_register(NULL), -1);
  /* many registrations force the hash table to grow; all stay reachable */
  static char names[300][16];
  for (int i = 0; i < 300; i++) {
    snprintf(names[i], sizeof names[i], "p.op%d", i);
    OpDef d = {names[i], 1, NULL, 0, NULL, NULL, NULL, NULL};
    ck_assert_int_ge(op_register(&d), 0);
  }
  for (int i = 0; i < 300; i++) ck_assert_int_ge(op_lookup(names[i]), 0);
  ck_assert_int_eq(op_lookup("nn.conv2d"), OP_NN_CONV2D);
  ck_assert_str_eq(op_suggest("my.scal"), "my.scale");

  make_call("my.scale", "scale=2");
  ck_assert(normalize());
  assert_attr(0, "scale", "2f", false);
  assert_attr(1, "mode", "\"fast\"", false);
}
END_TEST

/* ----------------------------------------------------------- normalisation */

START_TEST(defaults_filled_in_order) {
  make_call("nn.conv2d", NULL);
  ck_assert(normalize());
  ck_assert_uint_eq(call.attrs->n, 10);
  assert_attr(0, "strides", "[1, 1]", true);
  assert_attr(3, "groups", "1", true);
  assert_attr(4, "channels", "None", true);
  assert_attr(6, "data_layout", "\"NCHW\"", true);
  assert_attr(9, "out_dtype", "\"\"", true);
  ck_assert_int_eq(call.d.nerrors, 0);
}
END_TEST

START_TEST(written_values_sorted_and_marked) {
  make_call("nn.conv2d", "kernel_size=[3, 3], channels=8, strides=[1, 1], padding=[1, 1, 1, 1]");
  ck_assert(normalize());
  ck_assert_uint_eq(call.attrs->n, 10);
  assert_attr(0, "strides", "[1, 1]", true); /* written but equal to the default */
  assert_attr(1, "padding", "[1, 1, 1, 1]", false);
  assert_attr(4, "channels", "8", false);
  assert_attr(5, "kernel_size", "[3, 3]", false);
  assert_attr(7, "kernel_layout", "\"OIHW\"", true);
  ck_assert_int_eq(call.d.nerrors, 0);
}
END_TEST

START_TEST(unknown_key) {
  make_call("nn.conv2d", "stride=[2, 2]");
  Attrs *before = call.attrs;
  ck_assert(!normalize());
  ck_assert_ptr_eq(call.attrs, before); /* untouched on error */
  assert_msg_has("t.relay:1:15: error: unknown attribute \"stride\" for operator nn.conv2d");
  assert_msg_has("note: did you mean \"strides\"?");
  assert_msg_has("^~~~~~~~~~~~~");
  ck_assert_int_eq(call.d.nerrors, 1);
}
END_TEST

START_TEST(unknown_key_no_attrs_op) {
  make_call("add", "axis=1");
  ck_assert(!normalize());
  assert_msg_has("unknown attribute \"axis\" for operator add");
  assert_msg_has("note: add takes no attributes");
}
END_TEST

START_TEST(no_attrs_op_without_attrs) {
  make_call("add", NULL);
  ck_assert(normalize());
  ck_assert_ptr_null(call.attrs);
  ck_assert_int_eq(call.d.nerrors, 0);
}
END_TEST

START_TEST(wrong_kind) {
  make_call("nn.conv2d", "groups=\"x\", strides=2, data_layout=1");
  ck_assert(!normalize());
  assert_msg_has("error: attribute \"groups\" of nn.conv2d must be an integer, not a string");
  assert_msg_has("error: attribute \"strides\" of nn.conv2d must be an integer array, not an integer");
  assert_msg_has("error: attribute \"data_layout\" of nn.conv2d must be a string, not an integer");
  ck_assert_int_eq(call.d.nerrors, 3);
}
END_TEST

START_TEST(wrong_element) {
  make_call("nn.conv2d", "padding=[1, 1.5f]");
  ck_assert(!normalize());
  assert_msg_has("attribute \"padding\" of nn.conv2d must be an integer array; this element is a float");
}
END_TEST

START_TEST(none_only_where_allowed) {
  make_call("nn.conv2d", "groups=None");
  ck_assert(!normalize());
  assert_msg_has("attribute \"groups\" of nn.conv2d must be an integer, not None");
  teardown();
  make_call("nn.dense", "units=None");
  ck_assert(normalize());
  assert_attr(0, "units", "None", false); /* required: always printed */
}
END_TEST

START_TEST(required_with_py_default) {
  make_call("nn.dense", NULL);
  ck_assert(normalize());
  ck_assert_int_eq(call.d.nerrors, 0);
  ck_assert_int_eq(call.d.nwarnings, 0);
  assert_attr(0, "units", "None", false);
  assert_attr(1, "out_dtype", "\"\"", true);
  teardown();
  make_call("transpose", NULL);
  ck_assert(normalize());
  assert_attr(0, "axes", "None", false);
  teardown();
  make_call("arange", NULL); /* relayc accepts arange without start/stop/step */
  ck_assert(normalize());
  assert_attr(3, "dtype", "\"float32\"", false);
}
END_TEST

START_TEST(required_missing) {
  make_call("clip", "a_min=0f");
  ck_assert(!normalize());
  assert_msg_has("error: clip: missing required attribute \"a_max\"");
  ck_assert_int_eq(call.d.nerrors, 1);
  teardown();
  make_call("reshape", NULL);
  ck_assert(!normalize());
  assert_msg_has("reshape: missing required attribute \"newshape\"");
}
END_TEST

START_TEST(int_to_double) {
  make_call("clip", "a_min=0, a_max=6");
  ck_assert(normalize());
  ck_assert_int_eq(call.attrs->items[0].value->kind, AV_FLOAT);
  ck_assert(call.attrs->items[1].value->f.value == 6.0);
  assert_attr(0, "a_min", "0f", false);
  assert_attr(1, "a_max", "6f", false);
  teardown();
  make_call("clip", "a_min=-inff, a_max=inff");
  ck_assert(normalize());
  assert_attr(0, "a_min", "-inff", false);
  assert_attr(1, "a_max", "inff", false);
  teardown();
  make_call("nn.leaky_relu", "alpha=0.25f");
  ck_assert(normalize());
  assert_attr(0, "alpha", "0.25f", true);
  teardown();
  make_call("image.resize2d", "size=[4, 4], roi=[0, 0, 0, 0], cubic_alpha=-0.75f");
  ck_assert(normalize());
  assert_attr(1, "roi", "[0f, 0f, 0f, 0f]", true);
  assert_attr(6, "cubic_alpha", "-0.75f", false);
}
END_TEST

START_TEST(bool_and_int_coercion) {
  make_call("nn.batch_matmul", "transpose_b=1, transpose_a=0");
  ck_assert(normalize());
  assert_attr(1, "transpose_a", "False", true);
  assert_attr(2, "transpose_b", "True", false);
  teardown();
  make_call("nn.batch_matmul", "transpose_b=2");
  ck_assert(!normalize());
  assert_msg_has("must be True or False, not an integer");
  teardown();
  make_call("reshape", "newshape=[1i64, -1], allowzero=True");
  ck_assert(normalize());
  assert_attr(0, "newshape", "[1i64, -1]", false); /* array elements keep an i64 suffix (IntImm) */
  assert_attr(1, "allowzero", "1", false);
  teardown();
  make_call("expand_dims", "axis=4294967296");
  ck_assert(normalize());
  assert_attr(0, "axis", "4294967296i64", false); /* out of int32: stays int64 */
  teardown();
  make_call("nn.softmax", "axis=-1i64");
  ck_assert(normalize());
  assert_attr(0, "axis", "-1", true);
}
END_TEST

START_TEST(duplicate_key) {
  make_call("nn.softmax", "axis=1, axis=2");
  ck_assert(!normalize());
  assert_msg_has("error: duplicate attribute \"axis\" for operator nn.softmax");
  assert_msg_has("note: first given here");
}
END_TEST

START_TEST(dtypes) {
  make_call("nn.dense", "units=4, out_dtype=\"flaot32\"");
  ck_assert(!normalize());
  assert_msg_has("error: invalid dtype \"flaot32\" for attribute \"out_dtype\" of nn.dense");
  teardown();
  make_call("cast", "dtype=\"float\"");
  ck_assert(normalize());
  assert_attr(0, "dtype", "\"float32\"", false);
  teardown();
  make_call("nn.dense", "units=4, out_dtype=\"\"");
  ck_assert(normalize());
  assert_attr(1, "out_dtype", "\"\"", true);
}
END_TEST

START_TEST(arrays) {
  make_call("nn.pad", "pad_width=[[0, 0], [0, 0], [2, 2], [2, 2]]");
  ck_assert(normalize());
  assert_attr(0, "pad_width", "[[0, 0], [0, 0], [2, 2], [2, 2]]", false);
  assert_attr(1, "pad_mode", "\"constant\"", true);
  teardown();
  make_call("nn.pad", "pad_width=[1, 2]");
  ck_assert(!normalize());
  assert_msg_has("this element is an integer, not an integer array");
  teardown();
  make_call("split", "indices_or_sections=[768, 1536], axis=2");
  ck_assert(normalize());
  assert_attr(0, "indices_or_sections", "[768, 1536]", false);
  teardown();
  make_call("split", "indices_or_sections=3");
  ck_assert(normalize());
  assert_attr(0, "indices_or_sections", "3", false);
  teardown();
  make_call("strided_slice", "begin=[0, None], end=[?, 4], strides=[1]");
  ck_assert(normalize());
  assert_attr(0, "begin", "[0, None]", false);
  assert_attr(1, "end", "[?, 4]", false);
  assert_attr(4, "axes", "None", false);
  teardown();
  make_call("mean", "axis=[-1], keepdims=True");
  ck_assert(normalize());
  assert_attr(0, "axis", "[-1]", false);
  assert_attr(1, "keepdims", "True", false);
  assert_attr(2, "exclude", "False", true);
}
END_TEST

START_TEST(meta_attrs_untouched) {
  make_call("nn.conv2d", NULL);
  Attrs *a = arena_alloc(call.m->arena, sizeof *a);
  a->meta_key = "relay.attrs.Conv2DAttrs";
  a->meta_index = 0;
  call.attrs = a;
  ck_assert(normalize());
  ck_assert_ptr_eq(call.attrs, a);
  ck_assert_uint_eq(a->n, 0);
}
END_TEST

START_TEST(meta_values_accepted) {
  make_call("nn.conv2d", "channels=meta[tir.Var][0], padding=[meta[tir.Var][1], 0]");
  ck_assert(normalize());
  assert_attr(4, "channels", "meta[tir.Var][0]", false);
  assert_attr(1, "padding", "[meta[tir.Var][1], 0]", false);
}
END_TEST

START_TEST(idempotent) {
  make_call("nn.conv2d", "padding=[1, 1], channels=8, groups=1");
  ck_assert(normalize());
  Attrs *once = call.attrs;
  ck_assert(normalize());
  ck_assert_uint_eq(call.attrs->n, once->n);
  for (uint32_t i = 0; i < once->n; i++) {
    ck_assert_str_eq(call.attrs->items[i].key, once->items[i].key);
    ck_assert(attr_value_equal(call.attrs->items[i].value, once->items[i].value));
    ck_assert(call.attrs->items[i].is_default == once->items[i].is_default);
  }
  assert_attr(3, "groups", "1", true);
  assert_attr(4, "channels", "8", false);
}
END_TEST

static Suite *registry_suite(void) {
  Suite *s = suite_create("registry");
  TCase *t = tcase_create("table");
  tcase_add_checked_fixture(t, NULL, teardown);
  tcase_add_test(t, every_spec_op_is_registered);
  tcase_add_test(t, table_is_consistent);
  tcase_add_test(t, arities);
  tcase_add_test(t, conv2d_schema);
  tcase_add_test(t, schema_details);
  tcase_add_test(t, lookup_misses);
  tcase_add_test(t, suggestions);
  tcase_add_test(t, plugins);
  suite_add_tcase(s, t);

  TCase *n = tcase_create("normalize");
  tcase_add_checked_fixture(n, NULL, teardown);
  tcase_add_test(n, defaults_filled_in_order);
  tcase_add_test(n, written_values_sorted_and_marked);
  tcase_add_test(n, unknown_key);
  tcase_add_test(n, unknown_key_no_attrs_op);
  tcase_add_test(n, no_attrs_op_without_attrs);
  tcase_add_test(n, wrong_kind);
  tcase_add_test(n, wrong_element);
  tcase_add_test(n, none_only_where_allowed);
  tcase_add_test(n, required_with_py_default);
  tcase_add_test(n, required_missing);
  tcase_add_test(n, int_to_double);
  tcase_add_test(n, bool_and_int_coercion);
  tcase_add_test(n, duplicate_key);
  tcase_add_test(n, dtypes);
  tcase_add_test(n, arrays);
  tcase_add_test(n, meta_attrs_untouched);
  tcase_add_test(n, meta_values_accepted);
  tcase_add_test(n, idempotent);
  suite_add_tcase(s, n);

  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(registry_suite());
}
