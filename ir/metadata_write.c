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

/* One VirtualDevice node (index `self`) followed by its memory scope's
 * runtime.String node; the target is null. */
static void mw_virtual_device(MwWriter *w, const MetaVirtualDevice *v, uint32_t self) {
  char num[32];
  mw_member(w);
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "VirtualDevice");
  mw_key(w, "attrs");
  mw_open(w, '{', true); /* keys in byte order */
  snprintf(num, sizeof num, "%" PRId64, v->device_type);
  mw_key_str(w, "device_type_int", num);
  snprintf(num, sizeof num, "%" PRIu32, self + 1);
  mw_key_str(w, "memory_scope", num);
  mw_key_str(w, "target", "0");
  snprintf(num, sizeof num, "%" PRId64, v->device_id);
  mw_key_str(w, "virtual_device_id", num);
  mw_close(w, '}');
  mw_close(w, '}');
  mw_member(w);
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "runtime.String");
  if (v->memory_scope && v->memory_scope[0]) {
    mw_key(w, "repr_str");
    mw_string(w->out, v->memory_scope);
  }
  mw_close(w, '}');
}

/* One key of the root map: its name, its Array's node index, and the number
 * of entries and of nodes per entry that follow the Array. */
typedef struct MwList {
  const char *key;
  uint32_t n, per_entry, array;
} MwList;

/* The Array node of a list: its entries are at array+1, array+1+per_entry, ... */
static void mw_list_array(MwWriter *w, const MwList *l) {
  mw_member(w);
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "Array");
  if (l->n) {
    mw_key(w, "data");
    mw_open(w, '[', l->n > 10);
    for (uint32_t i = 0; i < l->n; i++) {
      mw_member(w);
      fprintf(w->out, "%" PRIu32, l->array + 1 + l->per_entry * i);
    }
    mw_close(w, ']');
  }
  mw_close(w, '}');
}

/* Node 1, the root map of the lists. */
static void mw_root_map(MwWriter *w, const MwList *lists, int nlists) {
  mw_member(w);
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "Map");
  mw_key(w, "keys");
  mw_open(w, '[', true);
  for (int k = 0; k < nlists; k++) {
    mw_member(w);
    fprintf(w->out, "\"%s\"", lists[k].key);
  }
  mw_close(w, ']');
  mw_key(w, "data");
  mw_open(w, '[', nlists > 10);
  for (int k = 0; k < nlists; k++) {
    mw_member(w);
    fprintf(w->out, "%" PRIu32, lists[k].array);
  }
  mw_close(w, ']');
  mw_close(w, '}');
}

/* Node numbering is depth-first pre-order from the root map (node 1): each
 * list's Array followed by its entries' nodes, the lists in the order
 * relay.Constant, tir.SizeVar, VirtualDevice (empty ones left out, except
 * that a section with nothing at all has the empty relay.Constant list). */
static void mw_nodes(MwWriter *w, const MetaTables *t) {
  MwList lists[3];
  int nlists = 0;
  bool consts = t->nconsts || (!t->nvars && !t->nvdevs);
  if (consts) lists[nlists++] = (MwList){"relay.Constant", t->nconsts, 1, 0};
  if (t->nvars) lists[nlists++] = (MwList){"tir.SizeVar", t->nvars, 2, 0};
  if (t->nvdevs) lists[nlists++] = (MwList){"VirtualDevice", t->nvdevs, 2, 0};
  uint32_t next = 2;
  for (int k = 0; k < nlists; k++) {
    lists[k].array = next;
    next += 1 + lists[k].n * lists[k].per_entry;
  }
  mw_key(w, "nodes");
  mw_open(w, '[', true);
  mw_member(w); /* node 0: the null object */
  mw_open(w, '{', true);
  mw_key_str(w, "type_key", "");
  mw_close(w, '}');
  mw_root_map(w, lists, nlists);
  for (int k = 0; k < nlists; k++) {
    const MwList *l = &lists[k];
    mw_list_array(w, l);
    for (uint32_t i = 0; i < l->n; i++) {
      uint32_t self = l->array + 1 + l->per_entry * i;
      if (l->key[0] == 'r') mw_constant_node(w, i);
      else if (l->key[0] == 't') mw_size_var(w, &t->vars[i], self);
      else mw_virtual_device(w, &t->vdevs[i], self);
    }
  }
  mw_close(w, ']');
}

void metadata_write(FILE *out, ConstTensor *const *consts, uint32_t n) {
  metadata_write_tables(out, &(MetaTables){.consts = consts, .nconsts = n});
}

void metadata_write_all(FILE *out, ConstTensor *const *consts, uint32_t n,
                        const MetaSizeVar *vars, uint32_t nvars) {
  metadata_write_tables(out, &(MetaTables){.consts = consts, .nconsts = n, .vars = vars, .nvars = nvars});
}

void metadata_write_tables(FILE *out, const MetaTables *t) {
  MwWriter w = {.out = out};
  mw_open(&w, '{', true);
  mw_key(&w, "root");
  fputs("1", out);
  mw_nodes(&w, t);
  mw_key(&w, "b64ndarrays");
  mw_open(&w, '[', true);
  for (uint32_t i = 0; i < t->nconsts; i++) {
    mw_member(&w);
    fputc('"', out);
    tensor_blob_write_base64(out, t->consts[i]);
    fputc('"', out);
  }
  mw_close(&w, ']');
  mw_key(&w, "attrs");
  mw_open(&w, '{', false);
  mw_key_str(&w, "tvm_version", METADATA_TVM_VERSION);
  mw_close(&w, '}');
  mw_close(&w, '}');
}
