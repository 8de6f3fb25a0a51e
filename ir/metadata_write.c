/* ir/metadata_write.c — the metadata JSON writer (see metadata_write.h).
 *
 * A tiny layout engine reproduces the rules of TVM's JSON writer (§6.3):
 * each open object/array is "multi-line" or "inline"; a member is preceded
 * by ", " when it is not the first, then, in a multi-line scope, by a newline
 * and 2 spaces per open scope. A closing bracket of a non-empty multi-line
 * scope goes on a fresh line when the scope around it is multi-line too.
 * The node graph is fixed (§6.5 minimal form), so the writer walks it
 * directly instead of building JSON values.
 */
#include "ir/metadata_write.h"

#include <inttypes.h>

#include "ir/tensor_blob.h"

#define MW_MAX_DEPTH 8

typedef struct MwWriter {
  FILE *out;
  int depth;                      /* open scopes */
  bool multi[MW_MAX_DEPTH];       /* per scope: members on their own lines */
  uint32_t count[MW_MAX_DEPTH];   /* per scope: members written so far */
} MwWriter;

/* The line break before a member (or a closing bracket) in a multi-line scope. */
static void mw_break(MwWriter *w) {
  if (w->depth == 0 || w->multi[w->depth - 1]) {
    fputc('\n', w->out);
    for (int i = 0; i < w->depth; i++) fputs("  ", w->out);
  }
}

static void mw_open(MwWriter *w, char bracket, bool multi) {
  RELAYC_ASSERT(w->depth < MW_MAX_DEPTH);
  fputc(bracket, w->out);
  w->multi[w->depth] = multi;
  w->count[w->depth] = 0;
  w->depth++;
}

static void mw_close(MwWriter *w, char bracket) {
  w->depth--;
  if (w->multi[w->depth] && w->count[w->depth]) mw_break(w);
  fputc(bracket, w->out);
}

/* Starts the next member of the current scope. */
static void mw_member(MwWriter *w) {
  if (w->count[w->depth - 1]++) fputs(", ", w->out);
  mw_break(w);
}

static void mw_key(MwWriter *w, const char *key) {
  mw_member(w);
  fprintf(w->out, "\"%s\": ", key);
}

static void mw_key_str(MwWriter *w, const char *key, const char *value) {
  mw_key(w, key);
  fprintf(w->out, "\"%s\"", value);
}

/* `"data": [...]` of node indices first, first+1, ..., first+n-1 (omitted when empty). */
static void mw_index_list(MwWriter *w, uint32_t first, uint32_t n) {
  if (n == 0) return;
  mw_key(w, "data");
  mw_open(w, '[', n > 10);
  for (uint32_t i = 0; i < n; i++) {
    mw_member(w);
    fprintf(w->out, "%" PRIu32, first + i);
  }
  mw_close(w, ']');
}

/* One relay.Constant node whose tensor is blob `blob`. */
static void mw_constant_node(MwWriter *w, uint32_t blob) {
  char idx[16];
  snprintf(idx, sizeof idx, "%" PRIu32, blob);
  mw_member(w);
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "relay.Constant");
  mw_key(w, "attrs");
  mw_open(w, '{', true); /* four entries: multi-line; keys in byte order */
  mw_key_str(w, "_checked_type_", "0");
  mw_key_str(w, "data", idx);
  mw_key_str(w, "span", "0");
  mw_key_str(w, "virtual_device_", "0");
  mw_close(w, '}');
  mw_close(w, '}');
}

/* A JSON string with the escapes TVM's reader knows (\" \\ \n \r \t); other control
 * bytes become spaces (a name hint never holds them in practice). */
static void mw_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c == '\n') fputs("\\n", out);
    else if (c == '\r') fputs("\\r", out);
    else if (c == '\t') fputs("\\t", out);
    else fputc(c < 0x20 ? ' ' : c, out);
  }
  fputc('"', out);
}

/* One tir.SizeVar node (index `self`) followed by its name's runtime.String node. */
static void mw_size_var(MwWriter *w, const MetaSizeVar *v, uint32_t self) {
  char idx[16];
  snprintf(idx, sizeof idx, "%" PRIu32, self + 1);
  mw_member(w);
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "tir.SizeVar");
  mw_key(w, "attrs");
  mw_open(w, '{', true); /* keys in byte order */
  mw_key_str(w, "dtype", v->dtype);
  mw_key_str(w, "name", idx);
  mw_key_str(w, "span", "0");
  mw_key_str(w, "type_annotation", "0");
  mw_close(w, '}');
  mw_close(w, '}');
  mw_member(w);
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "runtime.String");
  if (v->name[0]) {
    mw_key(w, "repr_str");
    mw_string(w->out, v->name);
  }
  mw_close(w, '}');
}

/* Node numbering is depth-first pre-order from the root map (node 1): the
 * constants' Array and its nodes, then the size variables' Array and theirs. */
static void mw_nodes(MwWriter *w, uint32_t n, const MetaSizeVar *vars, uint32_t nvars) {
  bool consts = n || !nvars; /* with nothing at all: the empty relay.Constant list */
  uint32_t const_list = 2, var_list = consts ? 3 + n : 2;
  mw_key(w, "nodes");
  mw_open(w, '[', true);
  mw_member(w); /* node 0: the null object */
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "");
  mw_close(w, '}');
  mw_member(w); /* node 1: the root map */
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "Map");
  mw_key(w, "keys");
  mw_open(w, '[', true);
  if (consts) {
    mw_member(w);
    fputs("\"relay.Constant\"", w->out);
  }
  if (nvars) {
    mw_member(w);
    fputs("\"tir.SizeVar\"", w->out);
  }
  mw_close(w, ']');
  mw_key(w, "data");
  mw_open(w, '[', false);
  if (consts) {
    mw_member(w);
    fprintf(w->out, "%" PRIu32, const_list);
  }
  if (nvars) {
    mw_member(w);
    fprintf(w->out, "%" PRIu32, var_list);
  }
  mw_close(w, ']');
  mw_close(w, '}');
  if (consts) {
    mw_member(w); /* the list of constants */
    mw_open(w, '{', true);
    mw_key_str(w, "type_key", "Array");
    mw_index_list(w, const_list + 1, n);
    mw_close(w, '}');
    for (uint32_t i = 0; i < n; i++) mw_constant_node(w, i);
  }
  if (nvars) {
    mw_member(w); /* the list of size variables: each one node plus its name */
    mw_open(w, '{', true);
    mw_key_str(w, "type_key", "Array");
    mw_key(w, "data");
    mw_open(w, '[', nvars > 10);
    for (uint32_t i = 0; i < nvars; i++) {
      mw_member(w);
      fprintf(w->out, "%" PRIu32, var_list + 1 + 2 * i);
    }
    mw_close(w, ']');
    mw_close(w, '}');
    for (uint32_t i = 0; i < nvars; i++) mw_size_var(w, &vars[i], var_list + 1 + 2 * i);
  }
  mw_close(w, ']');
}

void metadata_write(FILE *out, ConstTensor *const *consts, uint32_t n) {
  metadata_write_all(out, consts, n, NULL, 0);
}

void metadata_write_all(FILE *out, ConstTensor *const *consts, uint32_t n,
                        const MetaSizeVar *vars, uint32_t nvars) {
  MwWriter w = {.out = out};
  mw_open(&w, '{', true);
  mw_key(&w, "root");
  fputs("1", out);
  mw_nodes(&w, n, vars, nvars);
  mw_key(&w, "b64ndarrays");
  mw_open(&w, '[', true);
  for (uint32_t i = 0; i < n; i++) {
    mw_member(&w);
    fputc('"', out);
    tensor_blob_write_base64(out, consts[i]);
    fputc('"', out);
  }
  mw_close(&w, ']');
  mw_key(&w, "attrs");
  mw_open(&w, '{', false);
  mw_key_str(&w, "tvm_version", METADATA_TVM_VERSION);
  mw_close(&w, '}');
  mw_close(&w, '}');
}
