/* ops/registry.h — the operator registry: the single place an operator is declared.
 *
 * One row per operator (see ops/op_table.def) gives its name, positional
 * inputs, attribute schema (names, types, defaults, print order), type
 * relation, kernel and gradient rule. Attribute parsing, printing (defaults omitted), type
 * checking and dispatch all read this table. Built-in operators occupy ids
 * 0..op_builtin_count()-1; plugins (issue 6) append more with op_register().
 *
 *     int32_t id = op_lookup("nn.conv2d");
 *     const OpDef *op = op_get(id);
 *     for (uint32_t i = 0; i < op->nattrs; i++) puts(op->attrs[i].name);
 */
#ifndef RELAYC_OPS_REGISTRY_H
#define RELAYC_OPS_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ast.h"

typedef enum {
  AT_INT,          /* integer (int64 immediates print with i64) */
  AT_DOUBLE,       /* C double: printed %g + f */
  AT_BOOL,         /* True/False */
  AT_STRING,       /* "text" (layouts, modes) */
  AT_DTYPE,        /* "float32"; "" means unset */
  AT_INT_ARRAY,    /* [1, 1] (elements may be None or ? where the op allows) */
  AT_INT_OR_ARRAY, /* an int or an int array (split's indices_or_sections) */
  AT_NESTED_ARRAY, /* [[0, 0], [1, 1]] (nn.pad's pad_width) */
  AT_DOUBLE_ARRAY, /* [0f, 0f, 0f, 0f] (resize roi) */
  AT_VDEVICE,      /* a meta[VirtualDevice][i] reference, or None (on_device, device_copy) */
  AT_ANY,          /* anything (meta references, expressions) */
} AttrFieldType;

typedef struct AttrField {
  const char *name;
  AttrFieldType type;
  const char *default_text; /* canonical text of the default; NULL = required */
  const char *py_default;   /* for a required field: the value used when omitted (NULL: error) */
} AttrField;

/* Filled by later issues: the type relation (sema/infer) and the kernel (eval/). */
typedef struct TypeRelCtx TypeRelCtx;
typedef struct KernelCtx KernelCtx;
typedef struct GradCtx GradCtx;
typedef struct MacCtx MacCtx;
typedef int (*TypeRelFn)(TypeRelCtx *ctx);
typedef int (*KernelFn)(KernelCtx *ctx);
typedef bool (*GradFn)(GradCtx *ctx); /* ops/gradients/grad.h */
typedef int64_t (*MacFn)(const MacCtx *ctx); /* ops/macs/mac.h */

typedef struct OpDef {
  const char *name;        /* "add", "nn.conv2d" */
  int32_t num_inputs;      /* positional inputs */
  const AttrField *attrs;  /* schema in declaration (= print) order */
  uint32_t nattrs;
  TypeRelFn relation;      /* NULL until implemented */
  KernelFn kernel;         /* NULL until implemented */
  GradFn grad;             /* gradient rule (ops/gradients/), NULL: not differentiable */
  MacFn macs;              /* multiply-accumulates of a call (ops/macs/), NULL = counts 0 */
} OpDef;

/* Id of the operator named `name`, or -1. O(1) average (hash table). */
int32_t op_lookup(const char *name);
const OpDef *op_get(int32_t id);
uint32_t op_count(void);
uint32_t op_builtin_count(void);
/* Closest registered name within a small edit distance, or NULL. */
const char *op_suggest(const char *name);
/* Adds an operator (plugins); returns its id, or -1 if the name is taken. */
int32_t op_register(const OpDef *def);

/* Normalises a call's attributes against op's schema, in place:
 * unknown keys are errors (with a "did you mean" note), values are checked
 * and coerced to the field type, omitted fields are filled with their
 * defaults (marked is_default), values equal to the default are marked
 * is_default, and the result is in schema order. `*attrs` may be NULL (no
 * attributes written). Returns false if an error was reported. */
bool op_attrs_normalize(Module *m, const OpDef *op, Attrs **attrs, Span call_span, Diag *d);

#endif
