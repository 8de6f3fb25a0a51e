/* ir/print.c — the canonical printer (spec/text-format.md §7).
 *
 * Output must match TVM's printer byte for byte, and TVM's `%N` numbers
 * depend on the exact order in which its printer produces text. So this file
 * follows that order deliberately:
 *
 *  - Text generation walks dataflow nodes (call, tuple, projection) children
 *    first with an explicit stack — for a call the callee, then each argument
 *    left to right — and produces each node's text after its children's
 *    (pr_expand). Every other node is a leaf of that walk; its text, with
 *    everything inside it, is produced when the walk reaches it (pr_leaf).
 *  - A parent's text references its children (pr_ref): a child that is not
 *    printed inline gets the next number of ONE module-wide counter and its
 *    `%N = ...;` line is appended to its placement scope (pr_place_all): the
 *    innermost scope — function body, if branch, match clause, parenthesised
 *    let — enclosing all its references. TVM appends it to the scope on top
 *    of the stack (where it is first referenced), which for a node shared
 *    between a branch or function literal and the code outside binds the
 *    number inside and, when that literal is a callee whose argument uses
 *    the node, after its first use: text that does not re-parse. The two
 *    agree wherever the first reference is already in the placement scope,
 *    so numbering and every other line are TVM's. Open scopes map to their
 *    innermost doc on the stack (Printer.open), so placing a line is O(1).
 *  - Inline = always for variables, globals, constants, operators and
 *    constructors; otherwise only in a tail position (scope result, let
 *    value) and when the node has at most one use in the current top-level
 *    function (use counts from an iterative walk, pr_count_uses).
 *
 * Text is built as docs: lists of text chunks and nested docs carrying extra
 * indentation, carved from the printer's own arena, so a node's text is
 * built once and placed later (a hoisted line, an inline tail) without
 * copying or re-indenting. Invariant: a doc is never appended to after it
 * has been embedded in another one. A dataflow node's text is a single line
 * (its arguments are atoms or `%N`), so it is built in a flat buffer and kept
 * as bare bytes; atoms are written straight into their parent's text. One
 * iterative render applies the indentation (after every LF inside a nested
 * doc; at most PRINT_MAX_INDENT columns, so the output stays linear in the
 * input however deep the nesting) into a growable buffer written out with fwrite in 1 MiB pieces.
 * Per-node state is found through Expr.mark (validated by a back pointer),
 * per-variable and per-constant state through pointer-keyed hash maps, so
 * nothing is quadratic. Long dataflow chains and let chains are walked
 * iteratively; the remaining recursion (nested functions, branches, refs,
 * types, patterns) is guarded by stack_exhausted() and reported through
 * PrintOptions.diag as "expression nested too deeply".
 */
#include "ir/print.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"
#include "ir/metadata_write.h"
#include "ir/walk.h"

/* ------------------------------------------------------------ byte buffer */

typedef struct Buf {
  char *p;
  size_t len, cap;
} Buf;

static void buf_reserve(Buf *b, size_t extra) {
  if (b->cap - b->len >= extra) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < extra) cap *= 2;
  b->p = mem_realloc(b->p, cap);
  b->cap = cap;
}

static void buf_put(Buf *b, const char *s, size_t n) {
  buf_reserve(b, n);
  memcpy(b->p + b->len, s, n);
  b->len += n;
}

static void buf_puts(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_spaces(Buf *b, size_t n) {
  buf_reserve(b, n);
  memset(b->p + b->len, ' ', n);
  b->len += n;
}


/* ------------------------------------------------ name table (string keys) */

typedef struct NameEntry {
  const char *name; /* NULL: empty slot */
  uint32_t counter; /* last suffix tried for this prefix */
} NameEntry;

typedef struct NameMap {
  NameEntry *slots;
  size_t cap, len;
} NameMap;

static size_t nm_hash(const char *s, size_t cap) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return (size_t)h & (cap - 1);
}

static NameEntry *nm_find(NameMap *m, const char *name) {
  if (!m->cap) return NULL;
  size_t i = nm_hash(name, m->cap);
  while (m->slots[i].name) {
    if (strcmp(m->slots[i].name, name) == 0) return &m->slots[i];
    i = (i + 1) & (m->cap - 1);
  }
  return NULL;
}

static void nm_insert(NameMap *m, const char *name) {
  if (2 * (m->len + 1) > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    NameEntry *slots = mem_calloc(ncap, sizeof *slots);
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->slots[i].name) continue;
      size_t j = nm_hash(m->slots[i].name, ncap);
      while (slots[j].name) j = (j + 1) & (ncap - 1);
      slots[j] = m->slots[i];
    }
    mem_free(m->slots);
    m->slots = slots;
    m->cap = ncap;
  }
  size_t i = nm_hash(name, m->cap);
  while (m->slots[i].name) i = (i + 1) & (m->cap - 1);
  m->slots[i] = (NameEntry){name, 0};
  m->len++;
}

/* ------------------------------------------------------------------ docs */

typedef struct Doc Doc;
typedef struct Chunk Chunk;

struct Chunk {
  Chunk *next;
  const Doc *sub;  /* non-NULL: a nested doc, rendered with `indent` more spaces */
  uint32_t indent;
  uint32_t len, cap; /* text chunk: bytes used / available in text[] */
  char text[];
};

struct Doc {
  Chunk *head, *tail;
  Buf *flat; /* non-NULL: a flat builder, text goes straight into this buffer */
};

/* Nested docs smaller than this are copied rather than linked. */
#define DOC_COPY_MAX 96u

static Doc *doc_new(Arena *a) { return arena_alloc(a, sizeof(Doc)); }

static void doc_link(Doc *d, Chunk *c) {
  if (d->tail) d->tail->next = c;
  else d->head = c;
  d->tail = c;
}

static void doc_render(const Doc *d, Buf *out, FILE *sink);

static void doc_put(Arena *a, Doc *d, const char *s, size_t n) {
  if (n == 0) return;
  if (d->flat) {
    buf_put(d->flat, s, n);
    return;
  }
  Chunk *t = d->tail;
  if (t && !t->sub && t->cap - t->len >= n) {
    memcpy(t->text + t->len, s, n);
    t->len += (uint32_t)n;
    return;
  }
  size_t cap = t && !t->sub ? 2 * (size_t)t->cap : 32;
  if (cap > 4096) cap = 4096;
  if (cap < 32) cap = 32;
  if (cap < n) cap = n;
  Chunk *c = arena_alloc(a, sizeof(Chunk) + cap);
  c->cap = (uint32_t)cap;
  c->len = (uint32_t)n;
  memcpy(c->text, s, n);
  doc_link(d, c);
}

static void doc_sub(Arena *a, Doc *d, const Doc *s, uint32_t indent) {
  if (!s || !s->head) return;
  if (d->flat && indent == 0) {
    doc_render(s, d->flat, NULL);
    return;
  }
  if (indent == 0 && s->head == s->tail && !s->head->sub && s->head->len <= DOC_COPY_MAX) {
    doc_put(a, d, s->head->text, s->head->len);
    return;
  }
  Chunk *c = arena_alloc(a, sizeof(Chunk));
  c->sub = s;
  c->indent = indent;
  doc_link(d, c);
}

/* Indentation stops growing at 200 columns (100 levels): without a cap a
 * 10,000-deep nest (a 300 KB input) printed 300 MB of spaces, quadratic in
 * the depth (found by tests/fuzz/fuzz_passes.c). */
#define PRINT_MAX_INDENT ((size_t)200)

typedef struct RenderFrame {
  const Chunk *c;
  size_t indent;
} RenderFrame;

/* Writes `d` into `out`; every LF inside a nested doc is followed by the
 * indentation accumulated along the nesting. Iterative. With a sink, the
 * buffer is written out and reused whenever it passes 1 MiB. */
static void doc_render(const Doc *d, Buf *out, FILE *sink) {
  VEC(RenderFrame) st = {0};
  vec_push(st, ((RenderFrame){d->head, 0}));
  while (st.len) {
    RenderFrame *f = &st.data[st.len - 1];
    const Chunk *c = f->c;
    if (!c) {
      st.len--;
      continue;
    }
    f->c = c->next;
    size_t ind = f->indent;
    if (c->sub) {
      if (!f->c) { /* last chunk: reuse the frame */
        f->c = c->sub->head;
        f->indent = ind + c->indent;
      } else {
        vec_push(st, ((RenderFrame){c->sub->head, ind + c->indent}));
      }
      continue;
    }
    const char *s = c->text, *end = c->text + c->len;
    while (s < end) {
      const char *nl = memchr(s, '\n', (size_t)(end - s));
      if (!nl) {
        buf_put(out, s, (size_t)(end - s));
        break;
      }
      buf_put(out, s, (size_t)(nl + 1 - s));
      if (ind) buf_spaces(out, ind < PRINT_MAX_INDENT ? ind : PRINT_MAX_INDENT);
      s = nl + 1;
    }
    if (sink && out->len >= ((size_t)1 << 20)) {
      fwrite(out->p, 1, out->len, sink);
      out->len = 0;
    }
  }
  vec_free(st);
}

/* ---------------------------------------------------------------- types */

/* Dtypes whose name the lexer reads as scalar shorthand (§4.2). */
static bool ty_shorthand_ok(const char *name) {
  return strncmp(name, "int", 3) == 0 || strncmp(name, "uint", 4) == 0 ||
         strncmp(name, "float", 5) == 0 || strcmp(name, "bool") == 0;
}

static void ty_write(Buf *b, const Type *t, bool *deep);

static void ty_list(Buf *b, Type *const *ts, uint32_t n, bool *deep) {
  for (uint32_t i = 0; i < n; i++) {
    if (i) buf_puts(b, ", ");
    ty_write(b, ts[i], deep);
  }
}

static void ty_dim(Buf *b, const Dim *dm) {
  char tmp[48];
  switch (dm->kind) {
  case DIM_ANY: buf_puts(b, "?"); return;
  case DIM_SYM: snprintf(tmp, sizeof tmp, "meta[tir.SizeVar][%lld]", (long long)dm->value); break;
  case DIM_INT:
    if (dm->dtype.code == DT_INT && dm->dtype.bits == 64)
      snprintf(tmp, sizeof tmp, "%lldi64", (long long)dm->value);
    else if (dm->dtype.code == DT_INT && dm->dtype.bits == 16)
      snprintf(tmp, sizeof tmp, "%lldi16", (long long)dm->value);
    else
      snprintf(tmp, sizeof tmp, "%lld", (long long)dm->value);
    break;
  }
  buf_puts(b, tmp);
}

static void ty_tensor(Buf *b, const Type *t) {
  char name[32];
  dtype_name(t->tensor.dtype, name);
  if (t->tensor.ndim == 0 && ty_shorthand_ok(name)) {
    buf_puts(b, name);
    return;
  }
  buf_puts(b, "Tensor[(");
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    if (i) buf_puts(b, ", ");
    ty_dim(b, &t->tensor.dims[i]);
  }
  buf_puts(b, "), ");
  buf_puts(b, name);
  buf_puts(b, "]");
}

static void ty_tparams(Buf *b, TypeParam *const *ps, uint32_t n) {
  if (!n) return;
  buf_puts(b, "[");
  for (uint32_t i = 0; i < n; i++) {
    if (i) buf_puts(b, ", ");
    buf_puts(b, ps[i]->name);
  }
  buf_puts(b, "]");
}

static void ty_write(Buf *b, const Type *t, bool *deep) {
  t = type_solved(t);
  if (!t || t->kind == TYPE_UVAR || t->kind == TYPE_INCOMPLETE) {
    buf_puts(b, "_");
    return;
  }
  if (stack_exhausted()) {
    *deep = true;
    buf_puts(b, "_");
    return;
  }
  switch (t->kind) {
  case TYPE_TENSOR: ty_tensor(b, t); break;
  case TYPE_TUPLE:
    buf_puts(b, "(");
    ty_list(b, t->tuple.fields, t->tuple.n, deep);
    buf_puts(b, t->tuple.n == 1 ? ",)" : ")");
    break;
  case TYPE_FUNC:
    buf_puts(b, "fn ");
    ty_tparams(b, t->func.tparams, t->func.ntparams);
    buf_puts(b, "(");
    ty_list(b, t->func.args, t->func.nargs, deep);
    buf_puts(b, ") -> ");
    ty_write(b, t->func.ret, deep);
    break;
  case TYPE_VAR: buf_puts(b, t->var.param ? t->var.param->name : "_"); break;
  case TYPE_ADT:
    buf_puts(b, t->adt.def ? t->adt.def->name : "_");
    buf_puts(b, "[");
    ty_list(b, t->adt.args, t->adt.nargs, deep);
    buf_puts(b, "]");
    break;
  case TYPE_REF:
    buf_puts(b, "ref(");
    ty_write(b, t->ref.inner, deep);
    buf_puts(b, ")");
    break;
  case TYPE_NAME:
    buf_puts(b, t->name.name);
    if (t->name.has_brackets || t->name.nargs) {
      buf_puts(b, "[");
      ty_list(b, t->name.args, t->name.nargs, deep);
      buf_puts(b, "]");
    }
    break;
  case TYPE_INCOMPLETE:
  case TYPE_UVAR: buf_puts(b, "_"); break;
  }
}

/* True when `t` still contains `_` or an unbound unification variable. */
static bool ty_incomplete(const Type *t, int depth) {
  t = type_solved(t);
  if (!t || t->kind == TYPE_INCOMPLETE || t->kind == TYPE_UVAR) return true;
  if (depth > 200 || stack_exhausted()) return false;
  switch (t->kind) {
  case TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (ty_incomplete(t->tuple.fields[i], depth + 1)) return true;
    return false;
  case TYPE_FUNC:
    for (uint32_t i = 0; i < t->func.nargs; i++)
      if (ty_incomplete(t->func.args[i], depth + 1)) return true;
    return ty_incomplete(t->func.ret, depth + 1);
  case TYPE_ADT:
    for (uint32_t i = 0; i < t->adt.nargs; i++)
      if (ty_incomplete(t->adt.args[i], depth + 1)) return true;
    return false;
  case TYPE_REF: return ty_incomplete(t->ref.inner, depth + 1);
  default: return false;
  }
}

void print_type(FILE *out, const Type *t) {
  Buf b = {0};
  bool deep = false;
  ty_write(&b, t, &deep);
  fwrite(b.p, 1, b.len, out);
  mem_free(b.p);
}

char *type_to_string(Arena *a, const Type *t) {
  Buf b = {0};
  bool deep = false;
  ty_write(&b, t, &deep);
  char *s = arena_strndup(a, b.p ? b.p : "", b.len);
  mem_free(b.p);
  return s;
}

/* -------------------------------------------------------------- printer */

/* What the printer knows about one expression node. Found through
 * Expr.mark (1-based index), validated by the back pointer `e`, since other
 * passes leave their own values in mark. */
typedef struct NodeInfo {
  const Expr *e;
  Doc *memo;       /* its text as a doc (compound nodes other than dataflow) */
  const char *text; /* its text as one line (dataflow nodes), `len` bytes */
  uint32_t len;
  uint32_t num;    /* its `%N` once numbered */
  bool done;       /* text generated */
  uint32_t uses;  /* parents in the current function's graph (valid when gen matches) */
  uint32_t gen;   /* use-count generation */
  bool numbered;  /* has been given a `%N` line */
  bool info_done; /* its `ty=...` comment has been produced */
  uint8_t edge;   /* kind of its (last counted) reference, an EdgeKind */
  uint32_t place_gen; /* generation of the four fields below (see pr_place_all) */
  uint32_t place;   /* scope its `%N` line goes to: the LCA of its users' scopes */
  uint32_t scopes;  /* first of the scopes it opens (body; then, else; clauses) */
  uint32_t chain;   /* a let: the scope of its let lines (its own when parenthesised) */
  uint32_t pending; /* references not yet placed */
} NodeInfo;

/* How a parent refers to a child, which decides whether a let child is
 * printed inline, in parentheses (its own scope) or as the next link of a
 * let chain. */
typedef enum EdgeKind {
  EDGE_PLAIN, /* an operand: never inline */
  EDGE_TAIL,  /* the tail of a scope: inline when used once */
  EDGE_VALUE, /* a let value: inline when used once, a let in parentheses */
  EDGE_CHAIN, /* a let's body that is a let: printed in the same chain */
} EdgeKind;

/* One entry of the scope stack: which logical scope its doc belongs to, and
 * what that scope's top doc was before (restored on pop). */
typedef struct ScopeTag {
  uint32_t sid;
  Doc *saved;
} ScopeTag;

/* What the printer knows about one variable. */
typedef struct VarInfo {
  const char *name;  /* `%x1`, allocated at the binding site (or first use when free) */
  Doc *free_binding; /* a free variable: `%x: T`, for its `free_var` line */
  bool free_done;    /* that line has been printed */
} VarInfo;

typedef struct WorkItem {
  Expr *e;
  bool expanded;
} WorkItem;

typedef struct Printer {
  Arena *arena;
  PrintOptions opts;
  VEC(NodeInfo *) blocks; /* NodeInfo storage, NI_BLOCK per block (stable addresses) */
  uint32_t nnodes;
  PtrMap vars;   /* Var* -> VarInfo* */
  PtrMap consts; /* ConstTensor* -> metadata index + 1 */
  NameMap names; /* display names taken so far */
  VEC(Doc *) scopes;     /* docs taking hoisted lines, innermost last */
  VEC(ScopeTag) tags;    /* parallel to scopes */
  VEC(Doc *) open;       /* scope id -> its innermost doc on the stack (NULL: closed) */
  ScopeTree tree;        /* the scopes of the functions printed so far */
  uint32_t root_sid;     /* the current top-level function's body */
  VEC(ConstTensor *) meta;
  const MetaSizeVar *size_vars; /* the module's meta[tir.SizeVar] entries, written back as is */
  uint32_t nsize_vars;
  const MetaVirtualDevice *vdevs; /* its meta[VirtualDevice] entries, written back as is */
  uint32_t nvdevs;
  ConstTensor *const *src_consts; /* the module's meta[relay.Constant] list (attribute references) */
  uint32_t nsrc_consts;
  VEC(WorkItem) work;
  uint32_t temps; /* next %N */
  uint32_t gen;
  Buf scratch;    /* types on their way into a doc */
  Buf flat;       /* text of the dataflow node being generated */
  bool flat_busy;
  FILE *ms;       /* attr_value_print target over msbuf */
  char *msbuf;
  size_t mscap;
  bool deep;      /* some recursion hit the stack guard */
  Span deep_span;
} Printer;

static void pr_init(Printer *p, PrintOptions opts) {
  memset(p, 0, sizeof *p);
  p->arena = arena_new();
  p->opts = opts;
  p->gen = 1;
  p->root_sid = SCOPE_TREE_NONE;
}

static void pr_free(Printer *p) {
  for (size_t i = 0; i < p->blocks.len; i++) mem_free(p->blocks.data[i]);
  vec_free(p->blocks);
  ptrmap_free(&p->vars);
  ptrmap_free(&p->consts);
  mem_free(p->names.slots);
  vec_free(p->scopes);
  vec_free(p->tags);
  vec_free(p->open);
  scope_tree_free(&p->tree);
  vec_free(p->meta);
  vec_free(p->work);
  mem_free(p->scratch.p);
  mem_free(p->flat.p);
  if (p->ms) fclose(p->ms);
  mem_free(p->msbuf);
  arena_free(p->arena);
}

static void pr_too_deep(Printer *p, Span sp) {
  if (!p->deep) p->deep_span = sp;
  p->deep = true;
}

#define NI_BLOCK 4096u

static NodeInfo *pr_node(Printer *p, Expr *e) {
  uint32_t k = e->mark;
  if (k && k <= p->nnodes) {
    NodeInfo *ni = &p->blocks.data[(k - 1) / NI_BLOCK][(k - 1) % NI_BLOCK];
    if (ni->e == e) return ni;
  }
  if (p->nnodes / NI_BLOCK == p->blocks.len) vec_push(p->blocks, mem_calloc(NI_BLOCK, sizeof(NodeInfo)));
  NodeInfo *ni = &p->blocks.data[p->nnodes / NI_BLOCK][p->nnodes % NI_BLOCK];
  memset(ni, 0, sizeof *ni); /* the slot may hold a node of an earlier global */
  ni->e = e;
  e->mark = ++p->nnodes;
  return ni;
}

static VarInfo *pr_var(Printer *p, const Var *v) {
  int64_t *slot = ptrmap_slot(&p->vars, v);
  if (!*slot) *slot = (int64_t)(intptr_t)arena_alloc(p->arena, sizeof(VarInfo));
  return (VarInfo *)(intptr_t)*slot;
}

/* Small doc helpers bound to the printer's arena. */
static Doc *pr_doc(Printer *p) { return doc_new(p->arena); }
static void pr_put(Printer *p, Doc *d, const char *s) { doc_put(p->arena, d, s, strlen(s)); }
static void pr_sub(Printer *p, Doc *d, const Doc *s) { doc_sub(p->arena, d, s, 0); }

/* Pushes a doc taking hoisted lines, as the innermost doc of scope `sid`
 * (SCOPE_TREE_NONE: of no scope the placement knows). */
static void pr_push(Printer *p, Doc *d, uint32_t sid) {
  ScopeTag tag = {sid, NULL};
  if (sid != SCOPE_TREE_NONE) {
    while (p->open.len <= sid) vec_push(p->open, NULL);
    tag.saved = p->open.data[sid];
    p->open.data[sid] = d;
  }
  vec_push(p->scopes, d);
  vec_push(p->tags, tag);
}

static Doc *pr_pop(Printer *p) {
  ScopeTag tag = p->tags.data[--p->tags.len];
  if (tag.sid != SCOPE_TREE_NONE) p->open.data[tag.sid] = tag.saved;
  return p->scopes.data[--p->scopes.len];
}
/* A doc holding `s`, allocated in one piece with room for `extra` more bytes. */
static Doc *pr_text_room(Printer *p, const char *s, size_t extra) {
  size_t n = strlen(s);
  Doc *d = arena_alloc(p->arena, sizeof(Doc) + sizeof(Chunk) + n + extra);
  Chunk *c = (Chunk *)(void *)((char *)d + sizeof(Doc));
  _Static_assert(sizeof(Doc) % _Alignof(Chunk) == 0, "chunk alignment");
  c->cap = (uint32_t)(n + extra);
  c->len = (uint32_t)n;
  memcpy(c->text, s, n);
  d->head = d->tail = c;
  return d;
}

static Doc *pr_text(Printer *p, const char *s) { return pr_text_room(p, s, 24); }

static void pr_type(Printer *p, Doc *d, const Type *t) {
  p->scratch.len = 0;
  bool deep = false;
  ty_write(&p->scratch, t, &deep);
  if (deep) pr_too_deep(p, t ? t->span : (Span){0, 0});
  doc_put(p->arena, d, p->scratch.p, p->scratch.len);
}

/* The ` ty=T ` comment in typed mode, else nothing. */
static void pr_type_comment(Printer *p, Doc *d, const Type *t) {
  if (!p->opts.types || !t) return;
  pr_put(p, d, " /* ty=");
  pr_type(p, d, t);
  pr_put(p, d, " */");
}

/* `{ body }` with the body indented by two. */
static Doc *pr_brace(Printer *p, const Doc *body) {
  Doc *d = pr_text(p, "{");
  Doc *in = pr_text(p, "\n");
  pr_sub(p, in, body);
  doc_sub(p->arena, d, in, 2);
  pr_put(p, d, "\n}");
  return d;
}

/* `(` LF body LF `)`: a let or match that must be read back as one value. */
static Doc *pr_parens(Printer *p, const Doc *body) {
  Doc *d = pr_text(p, "(");
  Doc *in = pr_text(p, "\n");
  pr_sub(p, in, body);
  doc_sub(p->arena, d, in, 2);
  pr_put(p, d, "\n)");
  return d;
}

/* ------------------------------------------------------ attribute values */

/* Canonical text of `v` from attr_value_print, through a stream over msbuf. */
static const char *pr_attr_text(Printer *p, const AttrValue *v, size_t *len) {
  for (;;) {
    if (!p->ms) {
      if (!p->msbuf) {
        p->mscap = 4096;
        p->msbuf = mem_malloc(p->mscap);
      }
      p->ms = fmemopen(p->msbuf, p->mscap, "w");
      if (!p->ms) break;
    }
    rewind(p->ms);
    attr_value_print(p->ms, v);
    fflush(p->ms);
    long n = ftell(p->ms);
    if (n >= 0 && (size_t)n + 1 < p->mscap && !ferror(p->ms)) {
      *len = (size_t)n;
      return p->msbuf;
    }
    fclose(p->ms);
    p->ms = NULL;
    if (p->mscap >= ((size_t)1 << 32)) break;
    p->mscap *= 2;
    p->msbuf = mem_realloc(p->msbuf, p->mscap);
  }
  *len = 0;
  return "";
}

static size_t pr_meta_index(Printer *p, ConstTensor *c);

/* Appends the printed attributes (`key=value`, defaults omitted, then a
 * trailing meta reference), each preceded by ", " unless *first. */
static void pr_attrs(Printer *p, Doc *d, const Attrs *a, bool *first) {
  if (!a) return;
  for (uint32_t i = 0; i < a->n; i++) {
    const Attr *at = &a->items[i];
    if (at->is_default) continue;
    if (!*first) pr_put(p, d, ", ");
    *first = false;
    pr_put(p, d, at->key);
    pr_put(p, d, "=");
    const AttrValue *v = at->value;
    if (v->kind == AV_META && strcmp(v->meta.key, "relay.Constant") == 0 && v->meta.index < p->nsrc_consts) {
      /* a constant referenced from an attribute (arange's start=...): renumbered
       * and written into the metadata section like one used as an expression */
      char tmp[64];
      snprintf(tmp, sizeof tmp, "meta[relay.Constant][%zu]", pr_meta_index(p, p->src_consts[v->meta.index]));
      pr_put(p, d, tmp);
      continue;
    }
    size_t len;
    const char *s = pr_attr_text(p, v, &len);
    doc_put(p->arena, d, s, len);
  }
  if (a->meta_key) {
    char tmp[32];
    if (!*first) pr_put(p, d, ", ");
    *first = false;
    pr_put(p, d, "meta[");
    pr_put(p, d, a->meta_key);
    snprintf(tmp, sizeof tmp, "][%u]", a->meta_index);
    pr_put(p, d, tmp);
  }
}

/* ----------------------------------------------------------- literals */

/* Shortest %g text that reads back (through float) as the same half. */
static void pr_half_text(double v, char *buf) {
  uint16_t target = float_to_half((float)v);
  for (int prec = 1; prec <= 9; prec++) {
    snprintf(buf, 32, "%.*g", prec, v);
    if (float_to_half((float)strtod(buf, NULL)) == target) return;
  }
  snprintf(buf, 32, "%.9g", v);
}

/* Writes the inline literal of a simple scalar into buf (>= 48 bytes);
 * false when the constant must go to the metadata section. */
static bool pr_scalar_text(const ConstTensor *c, char *buf) {
  DType t = c->dtype;
  if (c->ndim != 0 || t.lanes != 1 || !c->data) return false;
  if (dtype_is_bool(t)) {
    strcpy(buf, *(const uint8_t *)c->data ? "True" : "False");
    return true;
  }
  if (t.code == DT_INT && (t.bits == 16 || t.bits == 32 || t.bits == 64)) {
    long long v = t.bits == 16   ? *(const int16_t *)c->data
                  : t.bits == 32 ? *(const int32_t *)c->data
                                 : (long long)*(const int64_t *)c->data;
    if (t.bits == 32) snprintf(buf, 48, "%lld", v);
    else snprintf(buf, 48, "%lldi%u", v, t.bits);
    return true;
  }
  if (t.code != DT_FLOAT || (t.bits != 16 && t.bits != 32 && t.bits != 64)) return false;
  double v = const_scalar_as_double(c);
  const char *suffix = t.bits == 32 ? "f" : t.bits == 64 ? "f64" : "f16";
  char num[32];
  if (isnan(v)) strcpy(num, "nan");
  else if (isinf(v)) strcpy(num, v < 0 ? "-inf" : "inf");
  else if (t.bits == 16) pr_half_text(v, num);
  else format_shortest_double(v, t.bits == 32, num);
  snprintf(buf, 48, "%s%s", num, suffix);
  return true;
}

/* True for the dtypes and ranks that print as an inline literal. INT64_MIN
 * has none: the lexer, as TVM's, reads the magnitude first and 2^63 is out of
 * range, so -9223372036854775808i64 would not re-parse (a folded cast of
 * -inf to int64); it goes to the metadata section. */
static bool pr_simple_scalar(const ConstTensor *c) {
  DType t = c->dtype;
  if (c->ndim != 0 || t.lanes != 1 || !c->data) return false;
  if (dtype_is_bool(t)) return true;
  if (t.code == DT_INT && t.bits == 64 && *(const int64_t *)c->data == INT64_MIN) return false;
  return (t.code == DT_INT || t.code == DT_FLOAT) && (t.bits == 16 || t.bits == 32 || t.bits == 64);
}

/* The metadata index of c, allocated when first needed. */
static size_t pr_meta_index(Printer *p, ConstTensor *c) {
  int64_t *slot = ptrmap_slot(&p->consts, c);
  if (!*slot) {
    vec_push(p->meta, c);
    *slot = (int64_t)p->meta.len;
  }
  return (size_t)*slot - 1;
}

static void pr_const(Printer *p, Doc *out, ConstTensor *c) {
  char buf[64];
  if (!pr_simple_scalar(c) || !pr_scalar_text(c, buf))
    snprintf(buf, sizeof buf, "meta[relay.Constant][%zu]", pr_meta_index(p, c));
  pr_put(p, out, buf);
}

/* ---------------------------------------------------------------- names */

/* Takes the display name `base` (or base1, base2, ... when taken). */
static const char *pr_unique(Printer *p, const char *base) {
  NameEntry *e = nm_find(&p->names, base);
  const char *name = base;
  if (e) {
    size_t n = strlen(base);
    char *cand = arena_alloc(p->arena, n + 12);
    memcpy(cand, base, n);
    do {
      e->counter++;
      snprintf(cand + n, 12, "%u", e->counter);
    } while (nm_find(&p->names, cand));
    name = cand;
  } else {
    name = arena_strdup(p->arena, base);
  }
  nm_insert(&p->names, name);
  return name;
}

/* §7.10: a name the lexer cannot read back after `%` or `@` (a keyword, or
 * characters outside identifiers) is printed as is, with a warning. */
static void pr_check_name(Printer *p, const char *name, char sigil, Span sp) {
  static const char *const keywords[] = {"def",   "fn",       "let", "if",       "else",
                                         "type",  "extern",   "match", "free_var", "ref",
                                         "ref_read", "ref_write"};
  if (!p->opts.diag || !name) return;
  bool ok = (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
            name[0] == '_';
  for (const char *c = name; ok && *c; c++)
    ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
         *c == '_' || *c == '/';
  for (size_t i = 0; ok && i < sizeof keywords / sizeof keywords[0]; i++)
    ok = strcmp(name, keywords[i]) != 0;
  if (!ok)
    diag_warning(p->opts.diag, sp, "name %c%s cannot be read back in the 0.0.5 text format", sigil,
                 name);
}

static const Type *pr_var_annot(Printer *p, const Var *v) {
  if (p->opts.types && v->type && (!v->annot || ty_incomplete(v->annot, 0))) return v->type;
  return v->annot;
}

/* Allocates v's printed name; returns its binding text `%x {attrs}: T` + comment. */
static Doc *pr_alloc_var(Printer *p, const Var *v) {
  VarInfo *vi = pr_var(p, v);
  if (!vi->name) {
    char spelled[VAR_NAME_BUF];
    const char *nm = var_name_in(v, spelled);
    if (!nm) nm = "";
    bool alpha = (nm[0] >= 'a' && nm[0] <= 'z') || (nm[0] >= 'A' && nm[0] <= 'Z');
    size_t n = strlen(nm);
    char *disp = arena_alloc(p->arena, n + 3);
    disp[0] = '%';
    if (!alpha) disp[1] = 'v';
    memcpy(disp + (alpha ? 1 : 2), nm, n + 1);
    pr_check_name(p, disp + 1, '%', v->span);
    vi->name = pr_unique(p, disp);
  }
  Doc *d = pr_text(p, vi->name);
  const Attrs *va = var_attrs(v);
  if (va && (va->n || va->meta_key)) {
    bool first = true;
    pr_put(p, d, " {");
    pr_attrs(p, d, va, &first);
    pr_put(p, d, "}");
  }
  const Type *annot = pr_var_annot(p, v);
  if (annot) {
    pr_put(p, d, ": ");
    pr_type(p, d, annot);
  }
  pr_type_comment(p, d, v->type);
  return d;
}

/* A variable seen at a use: a variable without a name yet has no binder in
 * the printed text, so it is free: named now, its `free_var` line pending. */
static VarInfo *pr_var_used(Printer *p, const Var *v) {
  VarInfo *vi = pr_var(p, v);
  if (!vi->name) vi->free_binding = pr_alloc_var(p, v);
  return vi;
}

/* ---------------------------------------------------------------- atoms */

/* Variables, globals, constants, operators, constructors: always printed in
 * place, never numbered, never given a NodeInfo. */
static bool pr_atom(const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_GLOBAL:
  case EXPR_CONST:
  case EXPR_OP:
  case EXPR_CTOR:
  case EXPR_NAME:
  case EXPR_GRAPH_REF:
  case EXPR_META: return true;
  default: return false;
  }
}

/* What TVM's walk does on reaching an atom: a metadata index for a constant
 * that is not a simple scalar, a name for a free variable. */
static bool pr_atom_has_visit(const Expr *e) {
  return (e->kind == EXPR_CONST && !pr_simple_scalar(e->constant)) ||
         (e->kind == EXPR_VAR && e->var.var);
}

static void pr_atom_visit(Printer *p, Expr *e) {
  if (e->kind == EXPR_CONST) pr_meta_index(p, e->constant);
  else if (e->kind == EXPR_VAR && e->var.var) pr_var_used(p, e->var.var);
}

/* True if printing the atom would emit a `free_var` line (a side effect
 * whose order matters). */
static bool pr_atom_pending(Printer *p, const Expr *e) {
  if (e->kind != EXPR_VAR || !e->var.var) return false;
  VarInfo *vi = pr_var(p, e->var.var);
  return !vi->name || (vi->free_binding && !vi->free_done);
}

static void pr_atom_text(Printer *p, Doc *out, Expr *e) {
  char tmp[64];
  switch (e->kind) {
  case EXPR_CONST:
    pr_const(p, out, e->constant);
    pr_type_comment(p, out, e->type); /* at every occurrence */
    return;
  case EXPR_VAR: {
    const Var *v = e->var.var;
    if (!v) {
      pr_put(p, out, "%");
      pr_put(p, out, e->var.name ? e->var.name : "");
      return;
    }
    VarInfo *vi = pr_var_used(p, v);
    if (vi->free_binding && !vi->free_done) {
      vi->free_done = true;
      Doc *top = p->scopes.data[p->scopes.len - 1];
      pr_put(p, top, "free_var ");
      pr_sub(p, top, vi->free_binding);
      pr_put(p, top, ";\n");
    }
    pr_put(p, out, vi->name);
    return;
  }
  case EXPR_GLOBAL:
    pr_put(p, out, "@");
    pr_put(p, out, e->global.name);
    return;
  case EXPR_OP: pr_put(p, out, e->op.name); return;
  case EXPR_CTOR: pr_put(p, out, e->ctor.ctor ? e->ctor.ctor->name : "_"); return;
  case EXPR_NAME: pr_put(p, out, e->name.name); return;
  case EXPR_GRAPH_REF:
    snprintf(tmp, sizeof tmp, "%%%u", e->graph_ref.num);
    pr_put(p, out, tmp);
    return;
  case EXPR_META:
    pr_put(p, out, "meta[");
    pr_put(p, out, e->meta.key);
    snprintf(tmp, sizeof tmp, "][%u]", e->meta.index);
    pr_put(p, out, tmp);
    return;
  default: return;
  }
}

/* ------------------------------------------------------------- use counts */

static void pr_bump(Printer *p, Expr *c) {
  if (!c || pr_atom(c)) return;
  NodeInfo *ni = pr_node(p, c);
  if (ni->gen != p->gen) {
    ni->gen = p->gen;
    ni->uses = 0;
    vec_push(p->work, ((WorkItem){c, false}));
  }
  ni->uses++;
}

/* Counts, for every compound node reachable from `root`, its uses (one per
 * occurrence as a child) in a fresh generation. `root_uses` is the root's own. */
static void pr_count_uses(Printer *p, Expr *root, uint32_t root_uses) {
  p->gen++;
  if (pr_atom(root)) return;
  size_t base = p->work.len;
  NodeInfo *ri = pr_node(p, root);
  ri->gen = p->gen;
  ri->uses = root_uses;
  vec_push(p->work, ((WorkItem){root, false}));
  while (p->work.len > base) {
    Expr *e = p->work.data[--p->work.len].e;
    switch (e->kind) {
    case EXPR_CALL:
      pr_bump(p, e->call.fn);
      for (uint32_t i = 0; i < e->call.nargs; i++) pr_bump(p, e->call.args[i]);
      break;
    case EXPR_TUPLE:
      for (uint32_t i = 0; i < e->tuple.n; i++) pr_bump(p, e->tuple.fields[i]);
      break;
    case EXPR_PROJ: pr_bump(p, e->proj.tuple); break;
    case EXPR_FN: pr_bump(p, e->fn->body); break;
    case EXPR_LET:
      pr_bump(p, e->let.value);
      pr_bump(p, e->let.body);
      break;
    case EXPR_IF:
      pr_bump(p, e->if_.cond);
      pr_bump(p, e->if_.then_);
      pr_bump(p, e->if_.else_);
      break;
    case EXPR_MATCH:
      pr_bump(p, e->match.scrut);
      for (uint32_t i = 0; i < e->match.nclauses; i++) pr_bump(p, e->match.clauses[i].body);
      break;
    case EXPR_REF_NEW:
    case EXPR_REF_READ: pr_bump(p, e->ref.arg); break;
    case EXPR_REF_WRITE:
      pr_bump(p, e->ref_write.ref);
      pr_bump(p, e->ref_write.value);
      break;
    case EXPR_GRAPH_BIND:
      pr_bump(p, e->graph_bind.value);
      pr_bump(p, e->graph_bind.body);
      break;
    case EXPR_FREE_VAR: pr_bump(p, e->free_var.body); break;
    default: break;
    }
  }
}

/* -------------------------------------------------------------- placement */

static uint32_t pr_new_scopes(Printer *p, uint32_t parent, uint32_t n) {
  uint32_t first = (uint32_t)p->tree.len;
  for (uint32_t i = 0; i < n; i++) scope_tree_add(&p->tree, parent);
  return first;
}

/* Does a let's body `b` continue its chain (one line per let in the same
 * scope)? Only when it is a let referenced once: a let body that is shared
 * (the same node referenced elsewhere too) is a graph binding of its own,
 * printed by number; continuing the chain into it would repeat its lines
 * with its inner bindings out of scope. */
static bool pr_chains(Printer *p, Expr *b) {
  if (!b || b->kind != EXPR_LET) return false;
  NodeInfo *bi = pr_node(p, b);
  return bi->gen != p->gen || bi->uses <= 1;
}

/* A reference from a parent placed (or opening a scope) at `site`. The child
 * is queued once all its references are placed. */
static void pr_place_ref(Printer *p, Expr *c, uint32_t site, EdgeKind kind) {
  if (!c || pr_atom(c)) return;
  NodeInfo *ci = pr_node(p, c);
  if (ci->place_gen != p->gen) {
    ci->place_gen = p->gen;
    ci->place = site;
    ci->pending = ci->gen == p->gen ? ci->uses : 1;
  } else {
    ci->place = scope_tree_lca(&p->tree, ci->place, site);
  }
  ci->edge = (uint8_t)kind;
  if (ci->pending && --ci->pending == 0) vec_push(p->work, ((WorkItem){c, false}));
}

/* Decides, for every compound node reachable from `root` (after
 * pr_count_uses, same generation), the scope its `%N = ...;` line goes to:
 * the innermost scope enclosing all its references, where a reference sits
 * in the scope its parent is placed in, or in a scope the parent opens (a
 * function body, an if branch, a match clause, a parenthesised let). TVM
 * puts the line where the node is first referenced; when that is inside a
 * branch or a function literal and another reference is outside, TVM's text
 * uses a number bound in another scope, or even before its line. Where the
 * first reference is already in the innermost enclosing scope (the common
 * case), the output is unchanged. Parents are placed before their children
 * (Kahn's order on the reference counts of pr_count_uses), iteratively. */
static void pr_place_all(Printer *p, Expr *root) {
  p->root_sid = scope_tree_add(&p->tree, SCOPE_TREE_NONE);
  if (pr_atom(root)) return;
  NodeInfo *ri = pr_node(p, root);
  ri->place_gen = p->gen;
  ri->place = p->root_sid;
  ri->pending = 0;
  ri->edge = EDGE_TAIL;
  size_t base = p->work.len;
  vec_push(p->work, ((WorkItem){root, false}));
  while (p->work.len > base) {
    Expr *e = p->work.data[--p->work.len].e;
    NodeInfo *ni = pr_node(p, e);
    uint32_t at = ni->place;
    switch (e->kind) {
    case EXPR_CALL:
      pr_place_ref(p, e->call.fn, at, EDGE_PLAIN);
      for (uint32_t i = 0; i < e->call.nargs; i++) pr_place_ref(p, e->call.args[i], at, EDGE_PLAIN);
      break;
    case EXPR_TUPLE:
      for (uint32_t i = 0; i < e->tuple.n; i++) pr_place_ref(p, e->tuple.fields[i], at, EDGE_PLAIN);
      break;
    case EXPR_PROJ: pr_place_ref(p, e->proj.tuple, at, EDGE_PLAIN); break;
    case EXPR_FN:
      ni->scopes = pr_new_scopes(p, at, 1);
      pr_place_ref(p, e->fn->body, ni->scopes, EDGE_TAIL);
      break;
    case EXPR_LET: {
      /* printed in place (the rest of a chain, or a used-once tail): its
       * lines go to the enclosing scope; else in parentheses, a scope */
      bool unique = ni->gen != p->gen || ni->uses <= 1;
      bool flat = unique && (ni->edge == EDGE_CHAIN || ni->edge == EDGE_TAIL);
      ni->chain = flat ? at : pr_new_scopes(p, at, 1);
      pr_place_ref(p, e->let.value, ni->chain, EDGE_VALUE);
      pr_place_ref(p, e->let.body, ni->chain, pr_chains(p, e->let.body) ? EDGE_CHAIN : EDGE_TAIL);
      break;
    }
    case EXPR_IF:
      pr_place_ref(p, e->if_.cond, at, EDGE_PLAIN);
      ni->scopes = pr_new_scopes(p, at, 2);
      pr_place_ref(p, e->if_.then_, ni->scopes, EDGE_TAIL);
      pr_place_ref(p, e->if_.else_, ni->scopes + 1, EDGE_TAIL);
      break;
    case EXPR_MATCH:
      pr_place_ref(p, e->match.scrut, at, EDGE_PLAIN);
      ni->scopes = pr_new_scopes(p, at, e->match.nclauses);
      for (uint32_t i = 0; i < e->match.nclauses; i++)
        pr_place_ref(p, e->match.clauses[i].body, ni->scopes + i, EDGE_TAIL);
      break;
    case EXPR_REF_NEW:
    case EXPR_REF_READ: pr_place_ref(p, e->ref.arg, at, EDGE_PLAIN); break;
    case EXPR_REF_WRITE:
      pr_place_ref(p, e->ref_write.ref, at, EDGE_PLAIN);
      pr_place_ref(p, e->ref_write.value, at, EDGE_PLAIN);
      break;
    case EXPR_GRAPH_BIND:
      pr_place_ref(p, e->graph_bind.value, at, EDGE_VALUE);
      pr_place_ref(p, e->graph_bind.body, at, EDGE_TAIL);
      break;
    case EXPR_FREE_VAR: pr_place_ref(p, e->free_var.body, at, EDGE_TAIL); break;
    default: break;
    }
  }
}

/* The scope ids a node opens, when placed in this generation. */
static uint32_t pr_scopes_of(Printer *p, Expr *e) {
  NodeInfo *ni = pr_node(p, e);
  return ni->place_gen == p->gen ? ni->scopes : SCOPE_TREE_NONE;
}

static uint32_t pr_sid_at(uint32_t first, uint32_t i) {
  return first == SCOPE_TREE_NONE ? SCOPE_TREE_NONE : first + i;
}

/* --------------------------------------------------------- expressions */

static void pr_ref(Printer *p, Doc *out, Expr *e, bool try_inline, bool let_value);
static Doc *pr_scope(Printer *p, Expr *e, uint32_t sid);

static bool pr_dataflow(const Expr *e) {
  return e->kind == EXPR_CALL || e->kind == EXPR_TUPLE || e->kind == EXPR_PROJ;
}

static void pr_num(Printer *p, Doc *out, uint32_t n) {
  char tmp[16];
  snprintf(tmp, sizeof tmp, "%%%u", n);
  pr_put(p, out, tmp);
}

static Doc *pr_body(Printer *p, Expr *e, uint32_t sid) { return pr_brace(p, pr_scope(p, e, sid)); }

/* `[A, B]` after a function's or a type's name; nothing when there are none. */
static void pr_tparams(Printer *p, Doc *d, TypeParam *const *tps, uint32_t n) {
  if (!n) return;
  pr_put(p, d, "[");
  for (uint32_t i = 0; i < n; i++) {
    if (i) pr_put(p, d, ", ");
    pr_put(p, d, tps[i]->name);
  }
  pr_put(p, d, "]");
}

/* A function; `sid` is its body's scope. */
static Doc *pr_func(Printer *p, const char *prefix, const Function *fn, uint32_t sid) {
  Doc *d = pr_text(p, prefix);
  pr_tparams(p, d, fn->tparams, fn->ntparams);
  pr_put(p, d, "(");
  bool first = true;
  for (uint32_t i = 0; i < fn->nparams; i++) {
    if (!first) pr_put(p, d, ", ");
    first = false;
    pr_sub(p, d, pr_alloc_var(p, fn->params[i]));
  }
  pr_attrs(p, d, fn->attrs, &first);
  pr_put(p, d, ") ");
  const Type *ret = fn->ret_annot;
  const Type *ft = type_solved(fn->type);
  if (p->opts.types && ft && ft->kind == TYPE_FUNC && (!ret || ty_incomplete(ret, 0)))
    ret = ft->func.ret;
  if (ret) {
    pr_put(p, d, "-> ");
    pr_type(p, d, ret);
    pr_put(p, d, " ");
  }
  pr_sub(p, d, pr_body(p, fn->body, sid));
  return d;
}

/* Arguments then attributes, joined by ", ". */
static void pr_args(Printer *p, Doc *d, Expr *e) {
  bool first = true;
  for (uint32_t i = 0; i < e->call.nargs; i++) {
    if (!first) pr_put(p, d, ", ");
    first = false;
    pr_ref(p, d, e->call.args[i], false, false);
  }
  pr_attrs(p, d, e->call.attrs, &first);
}

/* A call. TVM references the arguments before the callee; when the callee
 * is an atom without side effects (the usual case) its text can be written
 * first, else the arguments are collected aside. */
static void pr_call(Printer *p, Doc *d, Expr *e) {
  Expr *fn = e->call.fn;
  if (fn->kind == EXPR_CTOR) {
    const Ctor *c = fn->ctor.ctor;
    pr_put(p, d, c ? c->name : "_");
    if (c && c->nfields == 0) {
      if (e->call.nargs) pr_args(p, pr_doc(p), e); /* references only, no text */
      return;
    }
    pr_put(p, d, "(");
    pr_args(p, d, e);
  } else if (pr_atom(fn) && !pr_atom_pending(p, fn)) {
    pr_atom_text(p, d, fn);
    pr_put(p, d, "(");
    pr_args(p, d, e);
  } else {
    Doc *args = pr_doc(p);
    pr_args(p, args, e);
    pr_ref(p, d, fn, false, false);
    pr_put(p, d, "(");
    pr_sub(p, d, args);
  }
  pr_put(p, d, ")");
}

static void pr_tuple(Printer *p, Doc *d, Expr *e) {
  pr_put(p, d, "(");
  for (uint32_t i = 0; i < e->tuple.n; i++) {
    if (i) pr_put(p, d, ", ");
    pr_ref(p, d, e->tuple.fields[i], false, false);
  }
  pr_put(p, d, e->tuple.n == 1 ? ",)" : ")");
}

static void pr_proj(Printer *p, Doc *d, Expr *e) {
  char tmp[16];
  pr_ref(p, d, e->proj.tuple, false, false);
  snprintf(tmp, sizeof tmp, ".%u", e->proj.index);
  pr_put(p, d, tmp);
}

/* A chain of lets, one line each. A value's hoisted lines go to the scope on
 * top of the stack: the enclosing scope for the first let, the previous
 * let's line after that (so they land just before their own let line). */
static Doc *pr_let(Printer *p, Expr *e) {
  size_t base = p->scopes.len;
  NodeInfo *ni = pr_node(p, e);
  uint32_t sid = ni->place_gen == p->gen ? ni->chain : SCOPE_TREE_NONE;
  /* a parenthesised let is a scope of its own: the first value's hoisted
   * lines placed there go inside the parentheses, before the first let line
   * (they went to the doc on top of the stack, which is not that scope when
   * the let's text is made from another one: `%3 = (let %a = f(%0); ...)`
   * first referenced in an if branch printed `%0 = ...` in the branch) */
  if (sid != SCOPE_TREE_NONE && sid != ni->place) pr_push(p, pr_doc(p), sid);
  Expr *cur = e;
  while (cur == e || pr_chains(p, cur)) {
    Doc *line = pr_text(p, "let ");
    pr_sub(p, line, pr_alloc_var(p, cur->let.var));
    pr_put(p, line, " = ");
    pr_ref(p, line, cur->let.value, true, true);
    pr_put(p, line, ";\n");
    pr_push(p, line, sid);
    cur = cur->let.body;
  }
  Doc *body = pr_scope(p, cur, sid);
  Doc *d = pr_doc(p);
  for (size_t i = base; i < p->scopes.len; i++) doc_sub(p->arena, d, p->scopes.data[i], 0);
  pr_sub(p, d, body);
  while (p->scopes.len > base) pr_pop(p);
  return d;
}

static Doc *pr_if(Printer *p, Expr *e) {
  Doc *d = pr_text(p, "if (");
  pr_ref(p, d, e->if_.cond, false, false);
  pr_put(p, d, ") ");
  uint32_t first = pr_scopes_of(p, e);
  pr_sub(p, d, pr_body(p, e->if_.then_, pr_sid_at(first, 0)));
  pr_put(p, d, " else ");
  pr_sub(p, d, pr_body(p, e->if_.else_, pr_sid_at(first, 1)));
  return d;
}

static Doc *pr_pattern(Printer *p, const Pattern *pt) {
  if (stack_exhausted()) {
    pr_too_deep(p, pt->span);
    return pr_text(p, "_");
  }
  Doc *d = pr_text(p, "");
  switch (pt->kind) {
  case PAT_WILDCARD: pr_put(p, d, "_"); break;
  case PAT_VAR: pr_sub(p, d, pr_alloc_var(p, pt->var)); break;
  case PAT_CTOR:
    pr_put(p, d, pt->ctor.ctor ? pt->ctor.ctor->name : pt->ctor.name);
    if (pt->ctor.nargs) {
      pr_put(p, d, "(");
      for (uint32_t i = 0; i < pt->ctor.nargs; i++) {
        if (i) pr_put(p, d, ", ");
        pr_sub(p, d, pr_pattern(p, pt->ctor.args[i]));
      }
      pr_put(p, d, ")");
    }
    break;
  case PAT_TUPLE:
    pr_put(p, d, "(");
    for (uint32_t i = 0; i < pt->tuple.n; i++) {
      if (i) pr_put(p, d, ", ");
      pr_sub(p, d, pr_pattern(p, pt->tuple.fields[i]));
    }
    pr_put(p, d, ")");
    break;
  }
  return d;
}

static Doc *pr_match(Printer *p, Expr *e) {
  Doc *d = pr_text(p, e->match.partial ? "match? (" : "match (");
  pr_ref(p, d, e->match.scrut, false, false);
  pr_put(p, d, ") {");
  uint32_t first = pr_scopes_of(p, e);
  Doc *in = pr_doc(p);
  for (uint32_t i = 0; i < e->match.nclauses; i++) {
    const Clause *c = &e->match.clauses[i];
    pr_put(p, in, "\n");
    pr_sub(p, in, pr_pattern(p, c->pattern));
    pr_put(p, in, " => ");
    pr_sub(p, in, pr_body(p, c->body, pr_sid_at(first, i)));
    pr_put(p, in, ",");
  }
  doc_sub(p->arena, d, in, 2);
  pr_put(p, d, "\n}");
  return d;
}

/* ref(a), ref_read(a), ref_write(a, b). */
static Doc *pr_refop(Printer *p, const char *open, Expr *a, Expr *b) {
  Doc *d = pr_text(p, open);
  pr_ref(p, d, a, false, false);
  if (b) {
    pr_put(p, d, ", ");
    pr_ref(p, d, b, false, false);
  }
  pr_put(p, d, ")");
  return d;
}

/* The text of a dataflow node: one line (its arguments are atoms or
 * numbers), built in the flat buffer and kept as bare bytes, since most of
 * these texts are copied once into a `%N = ...;` line and never used again. */
static void pr_generate_flat(Printer *p, Expr *e, NodeInfo *ni) {
  Doc builder = {.flat = &p->flat}, *d = &builder;
  bool outer = !p->flat_busy;
  if (outer) {
    p->flat_busy = true;
    p->flat.len = 0;
  } else {
    d = pr_doc(p); /* not expected: a reentrant generation */
  }
  switch (e->kind) {
  case EXPR_CALL: pr_call(p, d, e); break;
  case EXPR_TUPLE: pr_tuple(p, d, e); break;
  default: pr_proj(p, d, e); break;
  }
  if (!outer) {
    ni->memo = d;
  } else {
    p->flat_busy = false;
    char *text = arena_alloc_aligned(p->arena, p->flat.len ? p->flat.len : 1, 1);
    memcpy(text, p->flat.p, p->flat.len);
    ni->text = text;
    ni->len = (uint32_t)p->flat.len;
  }
  ni->done = true;
}

/* The text of a compound node (atoms are written where referenced). */
static Doc *pr_generate(Printer *p, Expr *e) {
  char tmp[32];
  switch (e->kind) {
  case EXPR_FN: return pr_func(p, "fn ", e->fn, pr_scopes_of(p, e));
  case EXPR_LET: return pr_let(p, e);
  case EXPR_IF: return pr_if(p, e);
  case EXPR_MATCH: return pr_match(p, e);
  case EXPR_REF_NEW: return pr_refop(p, "ref(", e->ref.arg, NULL);
  case EXPR_REF_READ: return pr_refop(p, "ref_read(", e->ref.arg, NULL);
  case EXPR_REF_WRITE: return pr_refop(p, "ref_write(", e->ref_write.ref, e->ref_write.value);
  case EXPR_GRAPH_BIND: { /* pre-resolve form, for debugging dumps only */
    snprintf(tmp, sizeof tmp, "%%%u = ", e->graph_bind.num);
    Doc *d = pr_text(p, tmp);
    pr_ref(p, d, e->graph_bind.value, true, true);
    pr_put(p, d, ";\n");
    pr_sub(p, d, pr_scope(p, e->graph_bind.body, p->tags.data[p->tags.len - 1].sid));
    return d;
  }
  case EXPR_FREE_VAR: {
    Doc *d = pr_text(p, "free_var ");
    pr_sub(p, d, pr_alloc_var(p, e->free_var.var));
    pr_put(p, d, ";\n");
    pr_sub(p, d, pr_scope(p, e->free_var.body, p->tags.data[p->tags.len - 1].sid));
    return d;
  }
  default: {
    Doc *d = pr_text(p, "");
    pr_atom_text(p, d, e);
    return d;
  }
  }
}

/* Produces e's text once (a leaf of the dataflow walk, or a dataflow node
 * whose children are done). */
static void pr_leaf(Printer *p, Expr *e, NodeInfo *ni) {
  if (pr_dataflow(e)) {
    pr_generate_flat(p, e, ni);
    return;
  }
  Doc *text;
  if (stack_exhausted()) {
    pr_too_deep(p, e->span);
    text = pr_text(p, "()");
  } else {
    text = pr_generate(p, e);
  }
  if (!ni->done) {
    ni->memo = text;
    ni->done = true;
  }
}

/* Pushes a child for the walk if it still has something to do. */
static void pr_push_child(Printer *p, Expr *c) {
  if (pr_atom(c) ? pr_atom_has_visit(c) : !pr_node(p, c)->done)
    vec_push(p->work, ((WorkItem){c, false}));
}

/* Generates the text of e and of every dataflow node below it, children
 * first (callee, then arguments left to right). Iterative. */
static void pr_expand(Printer *p, Expr *root) {
  size_t base = p->work.len;
  vec_push(p->work, ((WorkItem){root, false}));
  while (p->work.len > base) {
    WorkItem *w = &p->work.data[p->work.len - 1];
    Expr *e = w->e;
    if (pr_atom(e)) {
      p->work.len--;
      pr_atom_visit(p, e);
      continue;
    }
    NodeInfo *ni = pr_node(p, e);
    if (ni->done) {
      p->work.len--;
      continue;
    }
    if (w->expanded || !pr_dataflow(e)) {
      p->work.len--;
      pr_leaf(p, e, ni);
      continue;
    }
    w->expanded = true;
    if (e->kind == EXPR_CALL) {
      for (uint32_t i = e->call.nargs; i-- > 0;) pr_push_child(p, e->call.args[i]);
      pr_push_child(p, e->call.fn);
    } else if (e->kind == EXPR_TUPLE) {
      for (uint32_t i = e->tuple.n; i-- > 0;) pr_push_child(p, e->tuple.fields[i]);
    } else {
      pr_push_child(p, e->proj.tuple);
    }
  }
}

/* Makes sure e's text exists. */
static void pr_visit(Printer *p, Expr *e, NodeInfo *ni) {
  if (!ni->done) pr_expand(p, e);
}

/* Appends e's generated text. */
static void pr_memo(Printer *p, Doc *out, const NodeInfo *ni) {
  if (ni->text) doc_put(p->arena, out, ni->text, ni->len);
  else pr_sub(p, out, ni->memo);
}

/* The `ty=T` comment for the compound kinds that carry one (§7.9), else NULL. */
static Doc *pr_info(Printer *p, const Expr *e) {
  if (!p->opts.types) return NULL;
  const Type *t = e->type;
  switch (e->kind) {
  case EXPR_FN:
    if (!t) t = e->fn->type;
    break;
  case EXPR_CALL:
  case EXPR_TUPLE:
  case EXPR_PROJ: break;
  default: return NULL;
  }
  if (!t) return NULL;
  Doc *d = pr_doc(p);
  pr_type_comment(p, d, t);
  return d;
}

/* Appends to `out` the reference to e from its parent: e's text when it is
 * printed in place, else `%N` (allocating the number and appending the
 * `%N = ...;` line to the current scope on the first reference). try_inline
 * marks a tail position; let_value a let's value. */
static void pr_ref(Printer *p, Doc *out, Expr *e, bool try_inline, bool let_value) {
  if (pr_atom(e)) {
    pr_atom_text(p, out, e);
    return;
  }
  NodeInfo *ni = pr_node(p, e);
  if (ni->numbered) {
    pr_num(p, out, ni->num);
    return;
  }
  bool unique = ni->gen != p->gen || ni->uses <= 1;
  bool inl = try_inline && unique;
  bool paren = e->kind == EXPR_LET || e->kind == EXPR_MATCH;
  pr_visit(p, e, ni);
  Doc *info = NULL;
  if (!ni->info_done) {
    ni->info_done = true;
    info = pr_info(p, e);
  }
  if (inl) {
    if (paren && let_value) {
      pr_sub(p, out, pr_parens(p, ni->memo));
    } else {
      pr_memo(p, out, ni);
      pr_sub(p, out, info);
    }
    if (info) { /* a later reference (from another function) repeats both */
      Doc *both = pr_doc(p);
      pr_memo(p, both, ni);
      pr_sub(p, both, info);
      ni->memo = both;
      ni->text = NULL;
    }
    return;
  }
  ni->numbered = true;
  ni->num = p->temps++;
  Doc *top = p->scopes.data[p->scopes.len - 1];
  if (ni->place_gen == p->gen && ni->place < p->open.len && p->open.data[ni->place])
    top = p->open.data[ni->place]; /* the innermost scope enclosing every reference */
  pr_num(p, top, ni->num);
  pr_put(p, top, " = ");
  if (paren) pr_sub(p, top, pr_parens(p, ni->memo));
  else pr_memo(p, top, ni);
  pr_sub(p, top, info);
  pr_put(p, top, ";\n");
  pr_num(p, out, ni->num);
}

/* A new scope (or the rest of one after a let chain), `sid` in the scope
 * tree: hoisted lines first, then the tail expression. */
static Doc *pr_scope(Printer *p, Expr *e, uint32_t sid) {
  pr_push(p, pr_doc(p), sid);
  Doc *tail = pr_doc(p);
  pr_ref(p, tail, e, true, false);
  Doc *d = pr_pop(p);
  pr_sub(p, d, tail);
  return d;
}

/* ----------------------------------------------------------- top level */

static Doc *pr_typedef(Printer *p, const TypeDef *td) {
  Doc *d = pr_text(p, "type ");
  pr_put(p, d, td->name);
  pr_tparams(p, d, td->tparams, td->ntparams);
  pr_put(p, d, " ");
  Doc *body = pr_doc(p);
  for (uint32_t i = 0; i < td->nctors; i++) {
    const Ctor *c = td->ctors[i];
    if (i) pr_put(p, body, ",\n");
    pr_put(p, body, c->name);
    if (c->nfields) {
      pr_put(p, body, "(");
      for (uint32_t j = 0; j < c->nfields; j++) {
        if (j) pr_put(p, body, ", ");
        pr_type(p, body, c->fields[j]);
      }
      pr_put(p, body, ")");
    }
  }
  if (td->nctors) pr_put(p, body, ",");
  pr_sub(p, d, pr_brace(p, body));
  return d;
}

typedef struct SortItem {
  const char *name;
  size_t index;
} SortItem;

static int pr_cmp_items(const void *a, const void *b) {
  const SortItem *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c) return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Indices of `n` names in byte order of the name (stable). Caller frees. */
static SortItem *pr_sorted(const char *(*name_of)(const void *, size_t), const void *arr, size_t n) {
  SortItem *items = mem_malloc((n ? n : 1) * sizeof *items);
  for (size_t i = 0; i < n; i++) items[i] = (SortItem){name_of(arr, i), i};
  qsort(items, n, sizeof *items, pr_cmp_items);
  return items;
}

static const char *pr_type_name(const void *arr, size_t i) {
  return ((TypeDef *const *)arr)[i]->name;
}

static const char *pr_def_name(const void *arr, size_t i) {
  return ((GlobalDef *const *)arr)[i]->name;
}

static void pr_module_items(Printer *p, Doc *d, const Module *m) {
  unsigned counter = 0;
  SortItem *ts = pr_sorted(pr_type_name, m->types, m->ntypes);
  for (size_t i = 0; i < m->ntypes; i++) {
    if (counter++) pr_put(p, d, "\n");
    pr_sub(p, d, pr_typedef(p, m->types[ts[i].index]));
    pr_put(p, d, "\n");
  }
  mem_free(ts);
  SortItem *ds = pr_sorted(pr_def_name, m->defs, m->ndefs);
  for (size_t i = 0; i < m->ndefs; i++) {
    const GlobalDef *g = m->defs[ds[i].index];
    if (!g->fn || !g->fn->body) continue;
    if (counter++) pr_put(p, d, "\n");
    /* each global is printed on its own: a node a pass shares between two
     * globals (LambdaLift: a closed node used inside the lifted literal and
     * next to it) is printed again, not referred to by a %N of the other
     * global (which printed unbound references) */
    p->nnodes = 0;
    /* and binders too: a let node shared that way binds the same Var in both
     * globals; each gets its own name (names stay unique in the module) */
    ptrmap_free(&p->vars);
    memset(&p->vars, 0, sizeof p->vars);
    pr_count_uses(p, g->fn->body, 1);
    pr_place_all(p, g->fn->body);
    size_t n = strlen(g->name);
    char *prefix = arena_alloc(p->arena, n + 6);
    pr_check_name(p, g->name, '@', g->span);
    memcpy(prefix, "def @", 5);
    memcpy(prefix + 5, g->name, n + 1);
    pr_sub(p, d, pr_func(p, prefix, g->fn, p->root_sid));
    pr_put(p, d, "\n");
  }
  mem_free(ds);
}

/* Renders, writes, appends the metadata section, reports depth trouble. */
static void pr_finish(Printer *p, FILE *out, const Doc *d, Span root_span) {
  Buf b = {0};
  doc_render(d, &b, out);
  if (b.len) fwrite(b.p, 1, b.len, out);
  mem_free(b.p);
  if (p->meta.len || p->nsize_vars || p->nvdevs) {
    fputs("\n#[metadata]\n", out);
    metadata_write_tables(out, &(MetaTables){.consts = p->meta.data, .nconsts = (uint32_t)p->meta.len,
                                             .vars = p->size_vars, .nvars = p->nsize_vars,
                                             .vdevs = p->vdevs, .nvdevs = p->nvdevs});
  }
  if (p->deep) {
    Span sp = p->deep_span.hi ? p->deep_span : root_span;
    if (p->opts.diag) diag_error(p->opts.diag, sp, "expression nested too deeply");
    else fprintf(stderr, "relayc: error: expression nested too deeply\n");
  }
}

/* The module's metadata tables: constants renumbered as printed, the
 * other tables written back as they were read. */
static void pr_use_module_tables(Printer *p, const Module *m) {
  p->size_vars = m->size_vars;
  p->nsize_vars = m->nsize_vars;
  p->vdevs = m->virtual_devices;
  p->nvdevs = m->nvirtual_devices;
  p->src_consts = m->meta_consts;
  p->nsrc_consts = m->nmeta_consts;
}

void print_module(FILE *out, Module *m, PrintOptions opts) {
  Printer p;
  pr_init(&p, opts);
  pr_use_module_tables(&p, m);
  pr_push(&p, pr_doc(&p), SCOPE_TREE_NONE);
  Doc *d = pr_text(&p, "#[version = \"0.0.5\"]\n");
  pr_module_items(&p, d, m);
  pr_finish(&p, out, d, (Span){0, 0});
  pr_free(&p);
}

void print_expression(FILE *out, Module *m, PrintOptions opts) {
  Printer p;
  pr_init(&p, opts);
  pr_use_module_tables(&p, m);
  Doc *d = pr_text(&p, "#[version = \"0.0.5\"]\n");
  if (m->expr) {
    pr_count_uses(&p, m->expr, 0);
    pr_place_all(&p, m->expr);
    pr_sub(&p, d, pr_scope(&p, m->expr, p.root_sid));
  }
  pr_finish(&p, out, d, m->expr ? m->expr->span : (Span){0, 0});
  pr_free(&p);
}
