/* ir/ast.h — the Relay AST: expressions, types, patterns, attributes, module.
 *
 * Plain C structs carved from the module's Arena (ir/arena.h) and freed with
 * it in one call. Lists are (pointer, count) pairs frozen into the arena.
 *
 * Life of a tree:
 *  1. The parser builds it from text. Names are NOT resolved yet: a local use
 *     is EXPR_VAR with `name` set and `var == NULL`; a bare/dotted identifier
 *     is EXPR_NAME; `%N = e; body` is kept as EXPR_GRAPH_BIND / EXPR_GRAPH_REF;
 *     `meta[K][i]` is EXPR_META; type identifiers are TYPE_NAME. The parse
 *     tree is a tree (no sharing).
 *  2. sema/resolve rewrites it in textual order: EXPR_VAR gets its binder,
 *     EXPR_NAME becomes EXPR_OP or EXPR_CTOR, graph bindings disappear and
 *     every `%N` use becomes a pointer to the one shared node (so the tree is
 *     now a DAG), EXPR_META becomes EXPR_CONST, TYPE_NAME becomes TYPE_VAR or
 *     TYPE_ADT, call attributes of operators are normalised against the
 *     operator's schema. After resolve no pre-resolve kind remains.
 *  3. sema/infer fills `Expr.type`, `Var.type`, `Function.type`.
 *
 * Leaf nodes (constants, variables, globals, operators, constructors, names,
 * graph references, meta references) are allocated with a 16-byte payload
 * (ir/ast.c): never copy a whole Expr by value from a leaf, and rewrite a leaf
 * in place only into another leaf kind or a unit tuple. Inner nodes are full
 * size and may be rewritten into any inner kind.
 *
 * Passes over a resolved tree must treat it as a DAG: a node reachable along
 * several paths is one node (use a visited mark or a map keyed by pointer).
 * Passes must not recurse without bound: call stack_exhausted() (ir/diag.h)
 * in recursive walkers and report "expression nested too deeply".
 */
#ifndef RELAYC_IR_AST_H
#define RELAYC_IR_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/diag.h"
#include "ir/dtype.h"

typedef struct Expr Expr;
typedef struct Type Type;
typedef struct Var Var;
typedef struct Pattern Pattern;
typedef struct Function Function;
typedef struct TypeParam TypeParam;
typedef struct TypeDef TypeDef;
typedef struct Ctor Ctor;
typedef struct AttrValue AttrValue;
typedef struct Attrs Attrs;
typedef struct Module Module;

/* ------------------------------------------------------------------ constants */

/* A tensor constant: a literal (rank 0) or an entry of the metadata section.
 * `data` is row-major, little-endian, 64-byte aligned, owned by the module's
 * arena; bool elements are one byte 0/1. Strides are implicit (compact). */
typedef struct ConstTensor {
  DType dtype;
  int32_t ndim;
  int64_t *shape;   /* ndim extents */
  void *data;       /* nbytes bytes */
  uint64_t nbytes;  /* dtype_size(dtype) * product(shape) */
  int32_t meta_index; /* index in meta[relay.Constant] when read from there, else -1 */
} ConstTensor;

/* ---------------------------------------------------------------- attributes */

typedef enum {
  AV_INT,    /* integer, with its literal dtype (int32 unless suffixed) */
  AV_FLOAT,  /* double, with its literal dtype (float32 for `0.5f`) */
  AV_BOOL,   /* True / False */
  AV_STRING, /* "text" (escapes already decoded) */
  AV_NONE,   /* None / nullptr */
  AV_ARRAY,  /* [v, ...], possibly nested */
  AV_META,   /* meta[KEY][index] */
  AV_ANY,    /* `?` (an Any dimension inside an array) */
  AV_EXPR,   /* fallback: any other expression atom */
} AttrValueKind;

struct AttrValue {
  AttrValueKind kind;
  Span span;
  union {
    struct { int64_t value; DType dtype; } i;       /* AV_INT */
    struct { double value; DType dtype; } f;        /* AV_FLOAT */
    bool b;                                         /* AV_BOOL */
    struct { const char *chars; uint32_t len; } s;  /* AV_STRING */
    struct { AttrValue **items; uint32_t n; } arr;  /* AV_ARRAY */
    struct { const char *key; uint32_t index; } meta; /* AV_META */
    Expr *expr;                                     /* AV_EXPR */
  };
};

typedef struct Attr {
  const char *key;   /* may be dotted: "relay.reshape_only" */
  AttrValue *value;
  Span span;         /* the whole `key=value` */
  bool is_default;   /* set by normalisation: equal to the schema default (not printed) */
} Attr;

/* Attributes of a call or a function, in order. After resolve, an operator
 * call's attrs hold every schema field in declaration order (omitted fields
 * filled with their defaults and marked is_default). */
struct Attrs {
  Attr *items;
  uint32_t n;
  const char *meta_key;   /* non-NULL when written as one meta[KEY][i] argument */
  uint32_t meta_index;
};

/* ------------------------------------------------------------------- types */

typedef enum {
  DIM_INT,  /* a known extent; `value` holds it, `dtype` its literal type (int32/int64/int16) */
  DIM_ANY,  /* `?`: unknown at compile time */
  DIM_SYM,  /* meta[tir.SizeVar][value]: a symbolic size */
} DimKind;

typedef struct Dim {
  DimKind kind;
  DType dtype;
  int64_t value;
} Dim;

typedef enum {
  TYPE_TENSOR,     /* Tensor[(d0, ...), dtype]; rank 0 is a scalar */
  TYPE_TUPLE,      /* (T1, ..., Tn); () is unit */
  TYPE_FUNC,       /* fn [A..](T1, ...) -> R */
  TYPE_VAR,        /* a type parameter in scope */
  TYPE_ADT,        /* a global type applied to arguments: List[A], Nat (= Nat[]) */
  TYPE_REF,        /* ref(T) */
  TYPE_INCOMPLETE, /* `_`: to be inferred */
  TYPE_NAME,       /* pre-resolve: an identifier with optional [args] */
  TYPE_UVAR,       /* inference: a unification variable (union-find) */
} TypeKind;

struct Type {
  TypeKind kind;
  Span span;
  union {
    struct { DType dtype; uint32_t ndim; Dim *dims; } tensor;
    struct { Type **fields; uint32_t n; } tuple;
    struct { TypeParam **tparams; uint32_t ntparams; Type **args; uint32_t nargs; Type *ret; } func;
    struct { TypeParam *param; } var;
    struct { TypeDef *def; Type **args; uint32_t nargs; } adt;
    struct { Type *inner; } ref;
    struct { const char *name; Type **args; uint32_t nargs; bool has_brackets; } name;
    struct { Type *link; uint32_t id; } uvar; /* link == NULL: unbound */
  };
};

/* t with solved unification variables followed to what they stand for: an
 * unbound variable is returned as itself, NULL as NULL. The links never form
 * a cycle (sema/unify.c binds only an unbound representative, to another
 * type after an occurs check, or to a fresh `_`), so the loop needs no guard. */
static inline Type *type_solved(const Type *t) {
  while (t && t->kind == TYPE_UVAR && t->uvar.link) t = t->uvar.link;
  return (Type *)t;
}

/* The solved tensor type of t, or NULL when t is not (yet) a tensor type. */
static inline Type *type_solved_tensor(const Type *t) {
  Type *s = type_solved(t);
  return s && s->kind == TYPE_TENSOR ? s : NULL;
}

struct TypeParam {
  const char *name;
  Span span;
  uint32_t id; /* unique within the module */
};

struct Ctor {
  const char *name;
  Span span;
  Type **fields;
  uint32_t nfields;
  TypeDef *owner;
  uint32_t tag; /* index within owner->ctors */
};

struct TypeDef {
  const char *name;
  Span span;
  TypeParam **tparams;
  uint32_t ntparams;
  Ctor **ctors;
  uint32_t nctors;
  bool is_extern;  /* `extern type` */
  bool has_body;   /* written with `{ ... }` (affects printing only) */
};

/* -------------------------------------------------------------- expressions */

struct Var {
  const char *name_;  /* without '%'; "" for the hidden variable of `e1; e2`; the prefix of a
                        fresh variable's name (fresh != 0): read names with var_name() */
  Span span;         /* the binding occurrence */
  Type *annot;       /* written annotation, or NULL */
  Type *type;        /* inferred (sema/infer) */
  uint32_t id;       /* unique within the module, in creation order */
  uint32_t fresh : 30;    /* a pass-made variable named "name_<fresh - 1>", not spelled yet
                             (ir/fresh_name.h); 0: name is the whole name */
  uint32_t is_free : 1;   /* declared by `free_var` */
  uint32_t has_attrs : 1; /* made by var_new_with_attrs: var_attrs() follows the struct */
};

typedef enum {
  PAT_WILDCARD, /* _ */
  PAT_VAR,      /* %x or %x: T */
  PAT_CTOR,     /* C, C(p1, ...) */
  PAT_TUPLE,    /* (p1, ...) */
} PatternKind;

struct Pattern {
  PatternKind kind;
  Span span;
  union {
    Var *var;                                                     /* PAT_VAR */
    struct { const char *name; Ctor *ctor; Pattern **args; uint32_t nargs; } ctor; /* PAT_CTOR */
    struct { Pattern **fields; uint32_t n; } tuple;               /* PAT_TUPLE */
  };
};

typedef struct Clause {
  Pattern *pattern;
  Expr *body;
  Span span;
} Clause;

struct Function {   /* the counts side by side: 64 bytes, not 72 (one per backpropagator Gradient makes) */
  Span span;
  uint32_t ntparams;
  uint32_t nparams;
  TypeParam **tparams;
  Var **params;
  Type *ret_annot;   /* written return type, or NULL */
  Attrs *attrs;      /* function attributes (Primitive=1, ...), or NULL */
  Expr *body;
  Type *type;        /* inferred function type */
};

typedef enum {
  /* resolved forms */
  EXPR_CONST,     /* constant tensor */
  EXPR_VAR,       /* use of a local variable */
  EXPR_GLOBAL,    /* @name */
  EXPR_OP,        /* an operator, as callee or first-class value */
  EXPR_CTOR,      /* a constructor, as callee or value (a field-less ctor is always called) */
  EXPR_CALL,      /* callee(args, attrs) */
  EXPR_TUPLE,     /* (a, b, ...) */
  EXPR_PROJ,      /* t.N */
  EXPR_FN,        /* fn (...) { ... } */
  EXPR_LET,       /* let %x = value; body   (also `value; body` with an anonymous var) */
  EXPR_IF,        /* if (c) { t } else { f } */
  EXPR_MATCH,     /* match / match? */
  EXPR_REF_NEW,   /* ref(e) */
  EXPR_REF_READ,  /* ref_read(e) */
  EXPR_REF_WRITE, /* ref_write(r, v) */
  /* pre-resolve forms: produced by the parser, removed by sema/resolve */
  EXPR_NAME,       /* identifier chain: constructor or operator */
  EXPR_GRAPH_BIND, /* %N = value; body */
  EXPR_GRAPH_REF,  /* %N */
  EXPR_META,       /* meta[KEY][i] in expression position */
  EXPR_FREE_VAR,   /* free_var %x: T; body */
  EXPR_KIND_COUNT
} ExprKind;

struct Expr {
  ExprKind kind;
  uint32_t mark;    /* scratch for passes (visited flags, print numbers) */
  Span span;
  Type *type;       /* inferred type (sema/infer); NULL before */
  union {
    ConstTensor *constant;                                   /* EXPR_CONST */
    struct { const char *name; Var *var; } var;              /* EXPR_VAR */
    struct { const char *name; struct GlobalDef *def; } global; /* EXPR_GLOBAL */
    struct { const char *name; int32_t id; } op;             /* EXPR_OP: registry index */
    struct { Ctor *ctor; } ctor;                             /* EXPR_CTOR */
    struct { Expr *fn; Expr **args; uint32_t nargs; Attrs *attrs; } call; /* EXPR_CALL */
    struct { Expr **fields; uint32_t n; } tuple;             /* EXPR_TUPLE */
    struct { Expr *tuple; uint32_t index; } proj;            /* EXPR_PROJ */
    Function *fn;                                            /* EXPR_FN */
    struct { Var *var; Expr *value; Expr *body; } let;       /* EXPR_LET */
    struct { Expr *cond, *then_, *else_; } if_;              /* EXPR_IF */
    struct { Expr *scrut; Clause *clauses; uint32_t nclauses; bool partial; } match; /* EXPR_MATCH */
    struct { Expr *arg; } ref;                               /* EXPR_REF_NEW, EXPR_REF_READ */
    struct { Expr *ref, *value; } ref_write;                 /* EXPR_REF_WRITE */
    struct { const char *name; } name;                       /* EXPR_NAME (dots included) */
    struct { uint32_t num; Expr *value; Expr *body; } graph_bind; /* EXPR_GRAPH_BIND */
    struct { uint32_t num; } graph_ref;                      /* EXPR_GRAPH_REF */
    struct { const char *key; uint32_t index; } meta;        /* EXPR_META */
    struct { Var *var; Expr *body; } free_var;               /* EXPR_FREE_VAR */
  };
};

/* ------------------------------------------------------------------- module */

typedef struct GlobalDef {
  const char *name;  /* without '@' */
  Span span;         /* the `@name` in `def @name` */
  Function *fn;
} GlobalDef;

/* Every key of the metadata section is kept with its list length, so
 * `meta[K][i]` can be range-checked; constants, size variables and virtual
 * devices are kept by value too (below), other entries only as counts. */
typedef struct MetaKey {
  const char *key;
  uint32_t count;
} MetaKey;

/* A meta[tir.SizeVar][i] entry (a symbolic dimension), kept so the printer
 * can write it back: its name hint and dtype name ("int32" when absent). */
typedef struct MetaSizeVar {
  const char *name;
  const char *dtype;
} MetaSizeVar;

/* A meta[VirtualDevice][i] entry (on_device / device_copy attributes, a
 * parameter's or function's `virtual_device=`), kept so the printer can
 * write it back: device type (-1 = unconstrained), device id (-1 = unset)
 * and memory scope ("" = none). The target is not kept (relayc does not use
 * it): an entry is written back with a null target. */
typedef struct MetaVirtualDevice {
  int64_t device_type;
  int64_t device_id;
  const char *memory_scope;
} MetaVirtualDevice;

struct Module {
  Arena *arena;
  Source *src;          /* not owned */
  GlobalDef **defs;     /* in textual order */
  uint32_t ndefs;
  uint32_t defs_cap;    /* capacity of defs when grown by ir/build.c (0: exactly ndefs) */
  TypeDef **types;      /* in textual order (including ones only mentioned) */
  uint32_t ntypes;
  Expr *expr;           /* expression mode (a bare expression), else NULL */
  bool has_metadata;    /* a #[metadata] section was present */
  uint32_t meta_offset; /* byte offset of the JSON after `#[metadata]` */
  ConstTensor **meta_consts; /* meta[relay.Constant][i], i < nmeta_consts */
  uint32_t nmeta_consts;
  MetaKey *meta_keys;   /* every key of the metadata map with its length */
  uint32_t nmeta_keys;
  MetaSizeVar *size_vars; /* meta[tir.SizeVar][i], i < nsize_vars */
  uint32_t nsize_vars;
  MetaVirtualDevice *virtual_devices; /* meta[VirtualDevice][i], i < nvirtual_devices */
  uint32_t nvirtual_devices;
  uint32_t next_id;     /* counter for Var/TypeParam ids */
  uint32_t next_fresh;  /* counter for pass-made names x_N (ir/build.h) */
  bool literal_params_unannotated; /* the parser made a fn literal with a parameter
                                    * without annotation (transform/pass.c annotates it) */
  bool mentions_gradient; /* sema/resolve met the operator `gradient`: only then can
                           * the module hold gradient(F) calls to expand */
};

/* ------------------------------------------------------------- constructors */

Module *module_new(Source *src);   /* creates the arena */
void module_free(Module *m);       /* frees the arena and everything in it */

/* Bytes of a node of that kind after its 24-byte header: 16 for the leaves
 * and the kinds whose fields fit 16 bytes (tuple, projection, function
 * literal, the ref forms, free_var), 24 for let, if, match and graph
 * bindings, the whole union (32) for calls. A node's
 * kind never changes to one with a larger payload (sema/resolve turns names
 * into operators or constructors and failed nodes into unit tuples), and a
 * copy takes only this many bytes (build_copy). */
static inline size_t expr_payload_size(ExprKind kind) {
  switch (kind) { /* the sizes are checked by static asserts in ast.c */
  case EXPR_CONST: case EXPR_VAR: case EXPR_GLOBAL: case EXPR_OP: case EXPR_CTOR:
  case EXPR_NAME: case EXPR_GRAPH_REF: case EXPR_META:
  case EXPR_TUPLE: case EXPR_PROJ: case EXPR_FN: case EXPR_REF_NEW: case EXPR_REF_READ: case EXPR_REF_WRITE:
  case EXPR_FREE_VAR:
    return 16;
  case EXPR_LET: case EXPR_IF: case EXPR_MATCH: case EXPR_GRAPH_BIND:
    return 24;
  default: /* EXPR_CALL */
    return sizeof(Expr) - offsetof(Expr, constant);
  }
}
/* A zeroed node of that kind (inline: passes make millions, mostly of a kind
 * known where they call it). */
static inline Expr *expr_new(Module *m, ExprKind kind, Span sp) {
  Expr *e = arena_alloc_aligned(m->arena, offsetof(Expr, constant) + expr_payload_size(kind), 8);
  e->kind = kind;
  e->span = sp;
  return e;
}
Type *type_new(Module *m, TypeKind kind, Span sp);
/* A Var with `extra` bytes after it (var_attrs reads an Attrs pointer there). */
static inline Var *var_alloc(Module *m, const char *name, Span sp, Type *annot, size_t extra) {
  _Static_assert(sizeof(Var) == 40, "a Var is 40 bytes: passes make millions");
  _Static_assert(sizeof(Function) == 64, "a Function is 64 bytes");
  Var *v = arena_alloc_aligned(m->arena, sizeof *v + extra, _Alignof(Var)); /* 8-aligned: no padding to 16 */
  v->name_ = name;
  v->span = sp;
  v->annot = annot;
  v->id = m->next_id++;
  return v;
}

static inline Var *var_new(Module *m, const char *name, Span sp, Type *annot) { return var_alloc(m, name, sp, annot, 0); }
/* A parameter written `%x {virtual_device=...}`: its Attrs are kept right
 * after the Var (var_attrs), so the millions of Vars passes make have no
 * slot for them (40 bytes, not 48). NULL attrs: var_new. */
Var *var_new_with_attrs(Module *m, const char *name, Span sp, Type *annot, Attrs *attrs);
/* The name of v without '%' ("" for a hidden variable): a pass-made variable's
 * "prefix_N" is spelled the first time it is asked for (ir/fresh_name.c). */
const char *var_name(const Var *v);
/* v's name without keeping a spelling: a fresh variable's is written into buf. */
#define VAR_NAME_BUF 96
const char *var_name_in(const Var *v, char buf[VAR_NAME_BUF]);
/* Gives dst the name of src (a copy of a binder keeps its name hint). */
static inline void var_copy_name(Var *dst, const Var *src) {
  dst->name_ = src->name_;
  dst->fresh = src->fresh;
}
/* The attributes of a parameter made by var_new_with_attrs, else NULL. */
static inline Attrs *var_attrs(const Var *v) { return v->has_attrs ? *(Attrs *const *)(v + 1) : NULL; }
/* A new binder standing for v: its name (a fresh variable's prefix and number
 * too) and span, annotated annot; var_new_as_with_attrs keeps its attributes. */
static inline Var *var_new_as(Module *m, const Var *v, Type *annot) {
  Var *n = var_new(m, v->name_, v->span, annot);
  var_copy_name(n, v);
  return n;
}
static inline Var *var_new_as_with_attrs(Module *m, const Var *v, Type *annot) {
  Var *n = var_new_with_attrs(m, v->name_, v->span, annot, var_attrs(v));
  var_copy_name(n, v);
  return n;
}
TypeParam *type_param_new(Module *m, const char *name, Span sp);
Pattern *pattern_new(Module *m, PatternKind kind, Span sp);
AttrValue *attr_value_new(Module *m, AttrValueKind kind, Span sp);

/* Convenience builders used by the parser, tests and passes. */
Type *type_tensor(Module *m, DType dt, uint32_t ndim, const int64_t *shape); /* int32 dims */
Type *type_scalar(Module *m, DType dt);
Expr *expr_scalar_int(Module *m, DType dt, int64_t v, Span sp);
Expr *expr_scalar_float(Module *m, DType dt, double v, Span sp);
Expr *expr_scalar_bool(Module *m, bool v, Span sp);
static inline Expr *expr_call(Module *m, Expr *fn, Expr **args, uint32_t nargs, Attrs *attrs, Span sp) {
  /* the node and its argument array in one allocation, the array right after
   * the node (pointers: 8-byte aligned, a unary call's array takes 8 bytes) */
  size_t node = offsetof(Expr, constant) + expr_payload_size(EXPR_CALL);
  Expr *e = arena_alloc_aligned(m->arena, node + nargs * sizeof *args, _Alignof(Expr *));
  e->kind = EXPR_CALL;
  e->span = sp;
  e->call.fn = fn;
  if (nargs) {
    e->call.args = (Expr **)((char *)e + node);
    for (uint32_t i = 0; i < nargs; i++) e->call.args[i] = args[i]; /* a few: no library call */
  }
  e->call.nargs = nargs;
  e->call.attrs = attrs;
  return e;
}
Expr *expr_op(Module *m, const char *name, Span sp); /* EXPR_NAME-free: op id = -1 until resolved */

/* Scalar value of a rank-0 constant, converted. */
double const_scalar_as_double(const ConstTensor *c);
int64_t const_scalar_as_int(const ConstTensor *c);

/* Human-readable names for diagnostics and dumps. */
const char *expr_kind_name(ExprKind k);

#endif
