/* parser/metadata.c — loading the `#[metadata]` JSON section (see metadata.h, spec §6).
 *
 * Three parts:
 *  1. A skimmer that walks the JSON *text* without building values: it finds
 *     the extent of a member or element (memchr over strings), so it costs
 *     almost nothing even over 100 MB of base64.
 *  2. Parsing. jansson builds the document, but it is slow on huge strings
 *     (about 1 s per 100 MB), so the skimmer first cuts the `b64ndarrays`
 *     list out of the text: jansson parses the rest with `[]` in its place,
 *     and the base64 strings are decoded straight from the section text into
 *     each tensor's final buffer (ir/tensor_blob.h). Whenever the skimmer is
 *     unsure (malformed text, duplicate keys, a non-string entry) or jansson
 *     rejects the cut text, the whole text goes through jansson instead, so
 *     error messages and positions are always jansson's own.
 *  3. Following the object graph generically: root -> Map (keys + data) ->
 *     per key an Array of node indices. Every key is recorded with its list
 *     length; entries of `relay.Constant` are decoded into ConstTensors
 *     (a blob used by several constants is decoded once and shared).
 *
 * Diagnostics point into the section: jansson's position for syntax errors,
 * otherwise the offending node, field or base64 character, located by
 * re-skimming the text (only on error). Invariant on return: m->meta_consts
 * has one non-NULL entry per element of meta[relay.Constant]; an entry that
 * failed to load (an error was reported) is a float32 scalar 0 placeholder,
 * so later passes never see a hole. No recursion: the skimmer is iterative
 * and jansson bounds its own nesting depth.
 */
#include "parser/metadata.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ir/tensor_blob.h"
#include "runtime/threadpool.h"

/* ================================================================ skimmer */

#define SK_FAIL SIZE_MAX

static size_t sk_ws(const char *t, size_t n, size_t i) {
  while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) i++;
  return i;
}

/* t[i] == '"': the index just past the closing quote, or SK_FAIL. */
static size_t sk_string(const char *t, size_t n, size_t i) {
  size_t p = i + 1;
  for (;;) {
    const char *q = p < n ? memchr(t + p, '"', n - p) : NULL;
    if (!q) return SK_FAIL;
    size_t k = (size_t)(q - t), b = k;
    while (b > i + 1 && t[b - 1] == '\\') b--;
    if ((k - b) % 2 == 0) return k + 1; /* not escaped */
    p = k + 1;
  }
}

static bool sk_scalar_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
         c == '+' || c == '.';
}

/* The index just past the value starting at t[i], or SK_FAIL. Containers are
 * matched by bracket depth only; their contents are validated by jansson. */
static size_t sk_value(const char *t, size_t n, size_t i) {
  if (i >= n) return SK_FAIL;
  if (t[i] == '"') return sk_string(t, n, i);
  if (t[i] == '{' || t[i] == '[') {
    size_t depth = 0;
    while (i < n) {
      char c = t[i];
      if (c == '"') {
        i = sk_string(t, n, i);
        if (i == SK_FAIL) return SK_FAIL;
        continue;
      }
      if (c == '{' || c == '[') depth++;
      if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      i++;
    }
    return SK_FAIL;
  }
  size_t j = i;
  while (j < n && sk_scalar_char(t[j])) j++;
  return j > i ? j : SK_FAIL;
}

/* Members of the object at t[obj] named `key` (raw comparison): returns how
 * many there are (-1 if the object is malformed) and the extent of the first.
 * With `first_only`, stops at the first match (and returns 1). */
static int sk_member(const char *t, size_t n, size_t obj, const char *key, bool first_only,
                     size_t *vlo, size_t *vhi) {
  size_t klen = strlen(key), i = sk_ws(t, n, obj + 1);
  int found = 0;
  if (i < n && t[i] == '}') return 0;
  for (;;) {
    if (i >= n || t[i] != '"') return -1;
    size_t kend = sk_string(t, n, i);
    if (kend == SK_FAIL) return -1;
    bool match = kend - i - 2 == klen && memcmp(t + i + 1, key, klen) == 0;
    i = sk_ws(t, n, kend);
    if (i >= n || t[i] != ':') return -1;
    i = sk_ws(t, n, i + 1);
    size_t vend = sk_value(t, n, i);
    if (vend == SK_FAIL) return -1;
    if (match && found++ == 0) {
      *vlo = i;
      *vhi = vend;
      if (first_only) return 1;
    }
    i = sk_ws(t, n, vend);
    if (i < n && t[i] == '}') return found;
    if (i >= n || t[i] != ',') return -1;
    i = sk_ws(t, n, i + 1);
  }
}

/* Extent of element `idx` of the array at t[arr]; false if absent or malformed. */
static bool sk_element(const char *t, size_t n, size_t arr, size_t idx, size_t *lo, size_t *hi) {
  size_t i = sk_ws(t, n, arr + 1);
  if (i < n && t[i] == ']') return false;
  for (size_t k = 0;; k++) {
    size_t vend = sk_value(t, n, i);
    if (vend == SK_FAIL) return false;
    if (k == idx) {
      *lo = i;
      *hi = vend;
      return true;
    }
    i = sk_ws(t, n, vend);
    if (i >= n || t[i] != ',') return false;
    i = sk_ws(t, n, i + 1);
  }
}

/* ================================================================= loader */

/* One b64ndarrays entry: its base64 text. */
typedef struct MdBlob {
  const char *s;
  size_t n;
  size_t off; /* offset of s within the section when s is the raw text, else SIZE_MAX */
} MdBlob;

/* A blob decoded ahead of the constants walk (md_predecode): its tensor, or
 * the error to report when the first constant using it is loaded. */
typedef struct MdEarly {
  bool done, ok;
  ConstTensor tensor;
  BlobError err;
} MdEarly;

typedef struct Loader {
  Module *m;
  Diag *d;
  const char *text; /* the section: JSON document and trailing whitespace */
  size_t len;
  uint32_t base;    /* offset of text within the module source */
  json_t *doc;
  json_t *nodes;
  size_t nnodes;
  VEC(MdBlob) blobs;
  ConstTensor **blob_tensor; /* per blob: decoded tensor, once */
  uint8_t *blob_state;       /* per blob: 0 not yet, 1 decoded, 2 failed */
  MdEarly *early;            /* per blob, or NULL: results of md_predecode */
} Loader;

static Span md_span(const Loader *L, size_t lo, size_t hi) {
  if (lo > L->len) lo = L->len;
  if (hi > L->len) hi = L->len;
  if (hi < lo) hi = lo;
  uint64_t a = (uint64_t)L->base + lo, b = (uint64_t)L->base + hi;
  return span_make(a > UINT32_MAX ? UINT32_MAX : (uint32_t)a, b > UINT32_MAX ? UINT32_MAX : (uint32_t)b);
}

static void md_error(Loader *L, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void md_error(Loader *L, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vreport(L->d, DIAG_ERROR, sp, fmt, ap);
  va_end(ap);
}

/* ---------------------------------------------------------------- locating */

/* One step of a path into the document: a member key, or (key NULL) an index. */
typedef struct MdStep {
  const char *key;
  size_t index;
} MdStep;

#define KEY(k) {(k), 0}
#define IDX(i) {NULL, (size_t)(i)}
#define MD_AT(L, ...)                                                                          \
  md_locate((L), (const MdStep[]){__VA_ARGS__},                                                \
            sizeof((const MdStep[]){__VA_ARGS__}) / sizeof(MdStep))

/* The span of the value at `path`, or of the deepest prefix of it that exists. */
static Span md_locate(Loader *L, const MdStep *path, size_t npath) {
  const char *t = L->text;
  size_t n = L->len, lo = sk_ws(t, n, 0), hi = sk_value(t, n, lo);
  if (hi == SK_FAIL) return md_span(L, lo, lo + 1);
  for (size_t k = 0; k < npath; k++) {
    size_t vlo, vhi;
    if (path[k].key && t[lo] == '{' && sk_member(t, n, lo, path[k].key, true, &vlo, &vhi) > 0) {
      lo = vlo, hi = vhi;
    } else if (!path[k].key && t[lo] == '[' && sk_element(t, n, lo, path[k].index, &vlo, &vhi)) {
      lo = vlo, hi = vhi;
    } else {
      break;
    }
  }
  return md_span(L, lo, hi);
}

/* ----------------------------------------------------------------- parsing */

/* Span of a jansson syntax error: the token it names ("near 'x'") when the
 * text really holds that token just before the error position, else one byte. */
static Span md_json_error_span(Loader *L, const json_error_t *e) {
  size_t pos = e->position > 0 ? (size_t)e->position : 0;
  if (pos > L->len) pos = L->len;
  const char *near = strstr(e->text, "near '");
  if (near) {
    near += 6;
    size_t k = strlen(near);
    if (k > 0 && near[k - 1] == '\'') {
      k--;
      if (k <= pos && memcmp(L->text + pos - k, near, k) == 0) return md_span(L, pos - k, pos);
    }
  }
  return md_span(L, pos ? pos - 1 : 0, pos);
}

static json_t *md_jansson(Loader *L, const char *text, size_t len, bool report) {
  json_error_t e;
  json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
  if (!doc && json_error_code(&e) == json_error_out_of_memory) mem_oom(len);
  if (!doc && report) {
    md_error(L, md_json_error_span(L, &e), "invalid JSON in the metadata section: %s", e.text);
  }
  return doc;
}

/* The b64ndarrays list at t[i] == '[': records its strings as blobs and
 * returns the index just past it, or SK_FAIL (not a plain list of strings).
 * One memchr pass per string; escapes are looked for only if decoding fails. */
static size_t md_skim_list(Loader *L, size_t i) {
  const char *t = L->text;
  size_t n = L->len;
  if (i >= n || t[i] != '[') return SK_FAIL;
  i = sk_ws(t, n, i + 1);
  if (i < n && t[i] == ']') return i + 1;
  for (;;) {
    if (i >= n || t[i] != '"') return SK_FAIL;
    size_t end = sk_string(t, n, i);
    if (end == SK_FAIL) return SK_FAIL;
    MdBlob b = {t + i + 1, end - i - 2, i + 1};
    vec_push(L->blobs, b);
    i = sk_ws(t, n, end);
    if (i < n && t[i] == ']') return i + 1;
    if (i >= n || t[i] != ',') return SK_FAIL;
    i = sk_ws(t, n, i + 1);
  }
}

/* Fast path: records every b64ndarrays string from the text and returns the
 * extent [*lo, *hi) of that list; false when it cannot be done with certainty
 * (the member is absent or repeated, or the text is not as expected). One
 * pass over the root object's members. */
static bool md_skim_blobs(Loader *L, size_t *lo, size_t *hi) {
  const char *t = L->text;
  size_t n = L->len, i = sk_ws(t, n, 0);
  int found = 0;
  if (i >= n || t[i] != '{') return false;
  i = sk_ws(t, n, i + 1);
  while (i < n && t[i] == '"') {
    size_t kend = sk_string(t, n, i);
    if (kend == SK_FAIL) break;
    bool match = kend - i == 13 && memcmp(t + i, "\"b64ndarrays\"", 13) == 0;
    i = sk_ws(t, n, kend);
    if (i >= n || t[i] != ':') break;
    i = sk_ws(t, n, i + 1);
    size_t vend = match ? (found++ ? SK_FAIL : md_skim_list(L, i)) : sk_value(t, n, i);
    if (vend == SK_FAIL) break;
    if (match) *lo = i, *hi = vend;
    i = sk_ws(t, n, vend);
    if (i < n && t[i] == '}') {
      if (found == 1) return true;
      break;
    }
    if (i >= n || t[i] != ',') break;
    i = sk_ws(t, n, i + 1);
  }
  L->blobs.len = 0;
  return false;
}

/* Blobs from jansson's value (slow path). */
static bool md_blobs_from_doc(Loader *L) {
  json_t *list = json_object_get(L->doc, "b64ndarrays");
  if (!list) return true;
  if (!json_is_array(list)) {
    md_error(L, MD_AT(L, KEY("b64ndarrays")), "\"b64ndarrays\" must be a list of strings");
    return false;
  }
  bool ok = true;
  for (size_t j = 0; j < json_array_size(list); j++) {
    json_t *s = json_array_get(list, j);
    if (!json_is_string(s)) {
      md_error(L, MD_AT(L, KEY("b64ndarrays"), IDX(j)), "b64ndarrays[%zu] is not a string", j);
      ok = false;
    }
    MdBlob b = {json_string_value(s), json_string_length(s), SIZE_MAX};
    vec_push(L->blobs, b);
  }
  return ok;
}

/* Parses the document into L->doc and L->blobs; false after reporting. */
static bool md_parse(Loader *L) {
  size_t lo = 0, hi = 0;
  if (md_skim_blobs(L, &lo, &hi)) {
    size_t tail = L->len - hi, cut = lo + 2 + tail;
    char *buf = mem_malloc(cut);
    memcpy(buf, L->text, lo);
    memcpy(buf + lo, "[]", 2);
    memcpy(buf + lo + 2, L->text + hi, tail);
    L->doc = md_jansson(L, buf, cut, false);
    mem_free(buf);
    if (L->doc) return true;
    L->blobs.len = 0;
  }
  L->doc = md_jansson(L, L->text, L->len, true);
  if (!L->doc) return false;
  return md_blobs_from_doc(L);
}

/* ------------------------------------------------------------ object graph */

/* Where a node index was written: element k of the `data` list of node
 * `owner`, or the top-level "root" when owner is SIZE_MAX. Located only when
 * an error needs it (locating re-skims the text). */
typedef struct MdRef {
  size_t owner, k;
} MdRef;

static Span md_ref_span(Loader *L, MdRef r) {
  if (r.owner == SIZE_MAX) return MD_AT(L, KEY("root"));
  return MD_AT(L, KEY("nodes"), IDX(r.owner), KEY("data"), IDX(r.k));
}

/* Node `idx` as an object with a string type_key, or NULL after reporting. */
static json_t *md_node(Loader *L, json_int_t idx, MdRef ref, const char **type_key) {
  if (idx < 0 || (uint64_t)idx >= L->nnodes) {
    md_error(L, md_ref_span(L, ref), "metadata node index %" JSON_INTEGER_FORMAT " is out of range (%zu nodes)",
             idx, L->nnodes);
    return NULL;
  }
  json_t *node = json_array_get(L->nodes, (size_t)idx);
  if (!json_is_object(node)) {
    md_error(L, MD_AT(L, KEY("nodes"), IDX(idx)), "metadata node %" JSON_INTEGER_FORMAT
             " is not a JSON object", idx);
    return NULL;
  }
  json_t *tk = json_object_get(node, "type_key");
  if (!json_is_string(tk)) {
    md_error(L, MD_AT(L, KEY("nodes"), IDX(idx), KEY("type_key")),
             "metadata node %" JSON_INTEGER_FORMAT " has no string \"type_key\"", idx);
    return NULL;
  }
  *type_key = json_string_value(tk);
  return node;
}

/* The `data` list of node `idx`: node indices, each checked to be in range
 * (the first bad one is reported). Absent means empty. Returns false after
 * reporting; *list is then still the list when it is one. */
static bool md_index_list(Loader *L, size_t idx, json_t *node, json_t **list) {
  *list = json_object_get(node, "data");
  if (!*list) return true;
  if (!json_is_array(*list)) {
    md_error(L, MD_AT(L, KEY("nodes"), IDX(idx), KEY("data")),
             "\"data\" of metadata node %zu must be a list of node indices", idx);
    return false;
  }
  for (size_t k = 0; k < json_array_size(*list); k++) {
    json_t *v = json_array_get(*list, k);
    json_int_t x = json_is_integer(v) ? json_integer_value(v) : -1;
    if (x < 0 || (uint64_t)x >= L->nnodes) {
      Span sp = MD_AT(L, KEY("nodes"), IDX(idx), KEY("data"), IDX(k));
      if (json_is_integer(v)) {
        md_error(L, sp, "metadata node index %" JSON_INTEGER_FORMAT " is out of range (%zu nodes)",
                 x, L->nnodes);
      } else {
        md_error(L, sp, "\"data\" of metadata node %zu must hold node indices", idx);
      }
      return false;
    }
  }
  return true;
}

/* A decimal node/blob index written as a string attribute ("12"). */
static bool md_parse_index(const char *s, uint64_t *out) {
  uint64_t v = 0;
  if (!*s) return false;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return true;
}

/* ---------------------------------------------------------------- constants */

/* Blob j decoded into *c (from md_predecode's result when there is one);
 * false with *e set on failure. */
static bool md_decode_blob(Loader *L, size_t j, const MdBlob *b, ConstTensor *c, BlobError *e) {
  MdEarly *early = L->early ? &L->early[j] : NULL;
  if (early && early->done) {
    *c = early->tensor;
    *e = early->err;
    return early->ok;
  }
  return tensor_blob_decode_base64(b->s, b->n, L->m->arena, c, e);
}

/* Decodes blob j (once); NULL after reporting. `entry` names the constant.
 * Raw text is decoded as is; only when that fails and the text holds a
 * backslash is it unescaped as a JSON string and decoded again. */
static ConstTensor *md_blob_tensor(Loader *L, size_t j, uint32_t entry) {
  if (L->blob_state[j] == 1) return L->blob_tensor[j];
  if (L->blob_state[j] == 2) return NULL;
  MdBlob b = L->blobs.data[j];
  ConstTensor *c = arena_alloc(L->m->arena, sizeof *c);
  BlobError e;
  bool ok = md_decode_blob(L, j, &b, c, &e);
  json_t *unescaped = NULL;
  if (!ok && b.off != SIZE_MAX && memchr(b.s, '\\', b.n)) {
    json_error_t je;
    unescaped = json_loadb(b.s - 1, b.n + 2, JSON_DECODE_ANY, &je);
    if (!json_is_string(unescaped)) {
      md_error(L, md_span(L, b.off - 1, b.off + b.n + 1), "invalid string in b64ndarrays[%zu]: %s",
               j, unescaped ? "not a string" : je.text);
      json_decref(unescaped);
      L->blob_state[j] = 2;
      return NULL;
    }
    b = (MdBlob){json_string_value(unescaped), json_string_length(unescaped), SIZE_MAX};
    ok = tensor_blob_decode_base64(b.s, b.n, L->m->arena, c, &e);
  }
  json_decref(unescaped);
  if (!ok) {
    Span sp = b.off != SIZE_MAX ? md_span(L, b.off + e.lo, b.off + e.hi)
                                : MD_AT(L, KEY("b64ndarrays"), IDX(j));
    md_error(L, sp, "%s (b64ndarrays[%zu], used by meta[relay.Constant][%" PRIu32 "])", e.msg, j,
             entry);
    L->blob_state[j] = 2;
    return NULL;
  }
  L->blob_state[j] = 1;
  L->blob_tensor[j] = c;
  /* the base64 text is no longer needed: a mapped source drops its pages, so
   * the text and the decoded weights are never both resident */
  if (b.off != SIZE_MAX) source_release(L->m->src, L->base + b.off, L->base + b.off + b.n);
  return c;
}

/* meta[relay.Constant][entry], stored at node `idx`. */
static ConstTensor *md_constant(Loader *L, json_int_t idx, MdRef ref, uint32_t entry) {
  const char *tk;
  json_t *node = md_node(L, idx, ref, &tk);
  if (!node) return NULL;
  if (strcmp(tk, "relay.Constant") != 0) {
    md_error(L, MD_AT(L, KEY("nodes"), IDX(idx), KEY("type_key")),
             "meta[relay.Constant][%" PRIu32 "] is a \"%s\" node, not a relay.Constant", entry, tk);
    return NULL;
  }
  json_t *attrs = json_object_get(node, "attrs");
  json_t *data = json_object_get(attrs, "data");
  uint64_t j = 0;
  if (!json_is_object(attrs) || !data) {
    md_error(L, MD_AT(L, KEY("nodes"), IDX(idx), KEY("attrs")),
             "relay.Constant node %" JSON_INTEGER_FORMAT " has no \"data\" attribute", idx);
    return NULL;
  }
  if (!json_is_string(data) || !md_parse_index(json_string_value(data), &j)) {
    md_error(L, MD_AT(L, KEY("nodes"), IDX(idx), KEY("attrs"), KEY("data")),
             "\"data\" of relay.Constant node %" JSON_INTEGER_FORMAT
             " must be a tensor index written as a decimal string", idx);
    return NULL;
  }
  if (j >= L->blobs.len) {
    md_error(L, MD_AT(L, KEY("nodes"), IDX(idx), KEY("attrs"), KEY("data")),
             "tensor index %" PRIu64 " is out of range (%zu entries in b64ndarrays)", j,
             L->blobs.len);
    return NULL;
  }
  ConstTensor *shared = md_blob_tensor(L, (size_t)j, entry);
  if (!shared) return NULL;
  ConstTensor *c = arena_alloc(L->m->arena, sizeof *c);
  *c = *shared; /* shape and data are shared with other users of the blob */
  c->meta_index = (int32_t)entry;
  return c;
}

/* Stands in for a constant that failed to load (an error was reported). */
static ConstTensor *md_placeholder(Loader *L, uint32_t entry) {
  ConstTensor *c = arena_alloc(L->m->arena, sizeof *c);
  c->dtype = DT_F32;
  c->nbytes = 4;
  c->data = arena_alloc_aligned(L->m->arena, 4, 64);
  c->meta_index = (int32_t)entry;
  return c;
}

/* ------------------------------------------------------------- pre-decoding */

/* Big sections decode their blobs before the constants walk, in pieces of
 * MD_PIECE_GROUPS groups (1 MiB of text) spread over the thread pool. Headers
 * are checked and data allocated serially first (arenas are single-threaded),
 * then the pieces run (decode + drop their text pages, nothing else), then
 * per blob the first failing piece in file order is its error. The constants
 * walk reports those errors at the point it would have decoded the blob, so
 * the diagnostics are the same, in the same order, as a serial decode. */
enum { MD_PARALLEL_MIN = 8u << 20, MD_PIECE_GROUPS = 256u << 10, MD_PAGE = 4096 };

typedef struct MdPiece {
  size_t blob, lo, hi; /* groups [lo, hi) of the blob's rest */
  bool ok;
  BlobError err;
} MdPiece;

typedef struct MdJob {
  Loader *L;
  BlobRest *rests;
  MdPiece *pieces;
} MdJob;

/* Blob index of the constant at node idx, or SIZE_MAX (md_constant reports why). */
static size_t md_constant_blob(Loader *L, json_int_t idx) {
  json_t *node = json_array_get(L->nodes, (size_t)idx);
  json_t *tk = json_object_get(node, "type_key");
  if (!json_is_string(tk) || strcmp(json_string_value(tk), "relay.Constant") != 0) return SIZE_MAX;
  json_t *data = json_object_get(json_object_get(node, "attrs"), "data");
  uint64_t j;
  if (!json_is_string(data) || !md_parse_index(json_string_value(data), &j)) return SIZE_MAX;
  return j < L->blobs.len ? (size_t)j : SIZE_MAX;
}

static void md_piece_run(void *arg, int64_t lo, int64_t hi) {
  MdJob *job = arg;
  Loader *L = job->L;
  for (int64_t k = lo; k < hi; k++) {
    MdPiece *p = &job->pieces[k];
    const BlobRest *r = &job->rests[p->blob];
    const MdBlob *b = &L->blobs.data[p->blob];
    size_t lo_c = b->off + 4 * (r->group0 + p->lo), hi_c = b->off + 4 * (r->group0 + p->hi);
    source_prefetch(L->m->src, L->base + lo_c, L->base + hi_c);
    p->ok = tensor_blob_rest_decode(r, p->lo, p->hi, &p->err);
    /* the pages this piece read, including those it shares with its
     * neighbours (a neighbour still reading one just faults it in again) */
    lo_c = lo_c - b->off > MD_PAGE ? lo_c - MD_PAGE : b->off;
    hi_c = b->off + b->n - hi_c > MD_PAGE ? hi_c + MD_PAGE : b->off + b->n;
    source_release(L->m->src, L->base + lo_c, L->base + hi_c);
  }
}

/* Decodes every raw blob used by a constant of `list` into L->early. */
static void md_predecode(Loader *L, json_t *list) {
  size_t nb = L->blobs.len, total = 0;
  for (size_t j = 0; j < nb; j++) total += L->blobs.data[j].n;
  if (total < MD_PARALLEL_MIN || L->blobs.data[0].off == SIZE_MAX) return;
  L->early = mem_calloc(nb, sizeof *L->early);
  BlobRest *rests = mem_calloc(nb, sizeof *rests);
  bool *used = mem_calloc(nb, sizeof *used);
  for (size_t k = 0; k < json_array_size(list); k++) {
    json_t *v = json_array_get(list, k);
    json_int_t idx = json_integer_value(v);
    if (!json_is_integer(v) || idx < 0 || (uint64_t)idx >= L->nnodes) continue;
    size_t j = md_constant_blob(L, idx);
    if (j != SIZE_MAX) used[j] = true;
  }
  VEC(MdPiece) pieces = {0};
  for (size_t j = 0; j < nb; j++) { /* serial: headers and allocation */
    if (!used[j]) continue;
    MdEarly *e = &L->early[j];
    const MdBlob *b = &L->blobs.data[j];
    e->done = true;
    e->ok = tensor_blob_begin_base64(b->s, b->n, L->m->arena, &e->tensor, &rests[j], &e->err);
    /* reading the header faulted in pages around it: give them back until the pieces run */
    source_release(L->m->src, L->base + b->off, L->base + b->off + b->n);
    for (size_t g = 0; e->ok && g < rests[j].ngroups; g += MD_PIECE_GROUPS) {
      size_t hi = rests[j].ngroups - g > MD_PIECE_GROUPS ? g + MD_PIECE_GROUPS : rests[j].ngroups;
      MdPiece p = {j, g, hi, false, {{0}, 0, 0}};
      vec_push(pieces, p);
    }
  }
  MdJob job = {L, rests, pieces.data};
  threadpool_for((int64_t)pieces.len, 1, md_piece_run, &job);
  for (size_t k = 0; k < pieces.len; k++) { /* the first failure of each blob, in file order */
    MdEarly *e = &L->early[pieces.data[k].blob];
    if (e->ok && !pieces.data[k].ok) {
      e->ok = false;
      e->err = pieces.data[k].err;
    }
  }
  vec_free(pieces);
  mem_free(rests);
  mem_free(used);
}

static void md_load_constants(Loader *L, size_t list_idx, json_t *list) {
  size_t n = json_array_size(list);
  if (n > INT32_MAX) n = INT32_MAX;
  L->m->meta_consts = arena_alloc(L->m->arena, sizeof(ConstTensor *) * (n ? n : 1));
  L->m->nmeta_consts = (uint32_t)n;
  L->blob_tensor = mem_calloc(L->blobs.len ? L->blobs.len : 1, sizeof *L->blob_tensor);
  L->blob_state = mem_calloc(L->blobs.len ? L->blobs.len : 1, 1);
  if (L->blobs.len && !L->early) md_predecode(L, list);
  for (size_t k = 0; k < n; k++) {
    json_t *v = json_array_get(list, k);
    json_int_t idx = json_integer_value(v);
    bool valid = json_is_integer(v) && idx >= 0 && (uint64_t)idx < L->nnodes; /* else reported */
    ConstTensor *c = valid ? md_constant(L, idx, (MdRef){list_idx, k}, (uint32_t)k) : NULL;
    L->m->meta_consts[k] = c ? c : md_placeholder(L, (uint32_t)k);
  }
}

/* ---------------------------------------------------------------- root map */

typedef struct MdEntry {
  const char *key;
  size_t pos;       /* position in the map */
} MdEntry;

static int md_entry_cmp(const void *a, const void *b) {
  const MdEntry *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* Reports keys that occur twice (sorting, so no quadratic scan). */
static bool md_unique_keys(Loader *L, size_t map_idx, json_t *keys) {
  size_t n = json_array_size(keys);
  MdEntry *e = mem_calloc(n ? n : 1, sizeof *e);
  for (size_t i = 0; i < n; i++) e[i] = (MdEntry){json_string_value(json_array_get(keys, i)), i};
  qsort(e, n, sizeof *e, md_entry_cmp);
  bool ok = true;
  for (size_t i = 1; i < n; i++) {
    if (strcmp(e[i - 1].key, e[i].key) == 0) {
      md_error(L, MD_AT(L, KEY("nodes"), IDX(map_idx), KEY("keys"), IDX(e[i].pos)),
               "metadata key \"%s\" appears twice", e[i].key);
      ok = false;
    }
  }
  mem_free(e);
  return ok;
}

/* The root Map's keys (checked to be strings) and values; false after reporting. */
static bool md_root_map(Loader *L, size_t *map_idx, json_t **keys, json_t **values) {
  json_t *root = json_object_get(L->doc, "root");
  if (!json_is_integer(root)) {
    md_error(L, MD_AT(L, KEY("root")), "the metadata document needs an integer \"root\"");
    return false;
  }
  const char *tk;
  json_t *map = md_node(L, json_integer_value(root), (MdRef){SIZE_MAX, 0}, &tk);
  if (!map) return false;
  *map_idx = (size_t)json_integer_value(root);
  if (strcmp(tk, "Map") != 0 && strcmp(tk, "StrMap") != 0) {
    md_error(L, MD_AT(L, KEY("nodes"), IDX(*map_idx), KEY("type_key")),
             "the metadata root must be a Map node, not \"%s\"", tk);
    return false;
  }
  *keys = json_object_get(map, "keys");
  if (!md_index_list(L, *map_idx, map, values)) return false;
  size_t nkeys = json_array_size(*keys), nvalues = json_array_size(*values);
  if (*keys && !json_is_array(*keys)) nkeys = SIZE_MAX;
  for (size_t i = 0; nkeys != SIZE_MAX && i < nkeys; i++) {
    if (!json_is_string(json_array_get(*keys, i))) {
      md_error(L, MD_AT(L, KEY("nodes"), IDX(*map_idx), KEY("keys"), IDX(i)),
               "metadata keys must be strings");
      return false;
    }
  }
  if (nkeys != nvalues) {
    md_error(L, MD_AT(L, KEY("nodes"), IDX(*map_idx)),
             "the metadata root Map must have a list of string \"keys\" as long as its \"data\"");
    return false;
  }
  return md_unique_keys(L, *map_idx, *keys);
}

/* The text of a runtime.String node referenced by attribute `field` of node
 * `attrs` ("" when absent or not a string node: names are only kept for
 * printing, so a malformed one is not an error). */
static const char *md_string_attr(Loader *L, json_t *attrs, const char *field) {
  json_t *ref = json_object_get(attrs, field);
  uint64_t idx;
  if (!json_is_string(ref)) return "";
  if (!md_parse_index(json_string_value(ref), &idx)) return json_string_value(ref); /* inline text */
  if (idx == 0 || idx >= L->nnodes) return "";
  json_t *node = json_array_get(L->nodes, (size_t)idx);
  json_t *tk = json_object_get(node, "type_key"), *text = json_object_get(node, "repr_str");
  if (!json_is_string(tk) || strcmp(json_string_value(tk), "runtime.String") != 0) return "";
  return json_is_string(text) ? json_string_value(text) : "";
}

/* The "attrs" object of the node that entry i of a key's list names, or NULL
 * (a bad index or a node without attributes: the callers fall back to defaults). */
static json_t *md_entry_attrs(Loader *L, json_t *list, size_t i) {
  json_t *ref = json_array_get(list, i);
  json_t *node = json_is_integer(ref) ? json_array_get(L->nodes, (size_t)json_integer_value(ref)) : NULL;
  json_t *attrs = json_is_object(node) ? json_object_get(node, "attrs") : NULL;
  return json_is_object(attrs) ? attrs : NULL;
}

/* An arena array of one `elem`-byte record per entry of a key's list, its
 * length in *count; NULL (count 0) for an empty or absurdly long list. */
static void *md_entry_table(Loader *L, json_t *list, size_t elem, uint32_t *count) {
  size_t n = json_array_size(list);
  *count = n == 0 || n > UINT32_MAX ? 0 : (uint32_t)n;
  return *count ? arena_alloc(L->m->arena, elem * n) : NULL;
}

/* Keeps the name and dtype of each tir.SizeVar entry (m->size_vars) so the
 * printer can write them back. Entries are range-checked when used (meta[K][i]
 * in a type); anything unexpected inside an entry falls back to defaults. */
static void md_load_size_vars(Loader *L, json_t *list) {
  Module *m = L->m;
  m->size_vars = md_entry_table(L, list, sizeof(MetaSizeVar), &m->nsize_vars);
  for (size_t i = 0; i < m->nsize_vars; i++) {
    json_t *attrs = md_entry_attrs(L, list, i);
    json_t *dt = attrs ? json_object_get(attrs, "dtype") : NULL;
    const char *name = attrs ? md_string_attr(L, attrs, "name") : "";
    m->size_vars[i].name = arena_strdup(m->arena, name);
    m->size_vars[i].dtype = arena_strdup(m->arena, json_is_string(dt) ? json_string_value(dt) : "int32");
  }
}

/* A decimal integer attribute of a node (TVM writes every attribute as a
 * string); `dflt` when absent or not a number. */
static int64_t md_int_attr(json_t *attrs, const char *field, int64_t dflt) {
  json_t *v = attrs ? json_object_get(attrs, field) : NULL;
  if (json_is_integer(v)) return (int64_t)json_integer_value(v);
  if (!json_is_string(v)) return dflt;
  const char *s = json_string_value(v);
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  return end == s || *end || errno ? dflt : (int64_t)x;
}

/* Integer field `field` of VirtualDevice entry i (-1, unconstrained, when it is
 * absent); an error at the field when it is there but not an integer (TVM's
 * loader cannot read it either: a device named "bogus" is no device). */
static int64_t md_vdev_int(Loader *L, json_t *list, size_t i, json_t *attrs, const char *field) {
  json_t *v = attrs ? json_object_get(attrs, field) : NULL;
  if (!v) return -1;
  int64_t x = md_int_attr(attrs, field, INT64_MIN);
  if (x != INT64_MIN) return x;
  json_int_t node = json_integer_value(json_array_get(list, i));
  md_error(L, MD_AT(L, KEY("nodes"), IDX(node), KEY("attrs"), KEY(field)),
           "meta[VirtualDevice][%zu]: %s must be an integer (a device type or id)", i, field);
  return -1;
}

/* Keeps the device type, device id and memory scope of each VirtualDevice
 * entry (m->virtual_devices) so the printer can write them back; an absent
 * field means "unconstrained", a device type or id that is not an integer is
 * an error. */
static void md_load_virtual_devices(Loader *L, json_t *list) {
  Module *m = L->m;
  m->virtual_devices = md_entry_table(L, list, sizeof(MetaVirtualDevice), &m->nvirtual_devices);
  for (size_t i = 0; i < m->nvirtual_devices; i++) {
    json_t *attrs = md_entry_attrs(L, list, i);
    m->virtual_devices[i].device_type = md_vdev_int(L, list, i, attrs, "device_type_int");
    m->virtual_devices[i].device_id = md_vdev_int(L, list, i, attrs, "virtual_device_id");
    m->virtual_devices[i].memory_scope = arena_strdup(m->arena, attrs ? md_string_attr(L, attrs, "memory_scope") : "");
  }
}

/* Records every key with its list length and loads relay.Constant. */
static void md_walk(Loader *L) {
  size_t map_idx;
  json_t *keys, *values;
  if (!md_root_map(L, &map_idx, &keys, &values)) return;
  size_t n = json_array_size(keys);
  Module *m = L->m;
  m->meta_keys = arena_alloc(m->arena, sizeof(MetaKey) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) {
    const char *key = json_string_value(json_array_get(keys, i)), *tk;
    json_int_t idx = json_integer_value(json_array_get(values, i));
    json_t *arr = md_node(L, idx, (MdRef){map_idx, i}, &tk), *list = NULL;
    if (!arr) continue;
    if (strcmp(tk, "Array") != 0) {
      md_error(L, MD_AT(L, KEY("nodes"), IDX(idx), KEY("type_key")),
               "metadata entry \"%s\" must be an Array node, not \"%s\"", key, tk);
      continue;
    }
    /* A list with a bad index still counts, so meta[K][i] finds its key. */
    if (!md_index_list(L, (size_t)idx, arr, &list) && !json_is_array(list)) continue;
    size_t count = json_array_size(list);
    MetaKey *mk = &m->meta_keys[m->nmeta_keys++];
    mk->key = arena_strdup(m->arena, key);
    mk->count = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
    if (strcmp(key, "relay.Constant") == 0) md_load_constants(L, (size_t)idx, list);
    else if (strcmp(key, "tir.SizeVar") == 0 && json_is_array(list)) md_load_size_vars(L, list);
    else if (strcmp(key, "VirtualDevice") == 0 && json_is_array(list)) md_load_virtual_devices(L, list);
  }
}

/* ------------------------------------------------------------------ driver */

static bool md_document(Loader *L) {
  if (!json_is_object(L->doc)) {
    md_error(L, md_locate(L, NULL, 0), "the metadata section must be a JSON object");
    return false;
  }
  L->nodes = json_object_get(L->doc, "nodes");
  if (!json_is_array(L->nodes)) {
    md_error(L, MD_AT(L, KEY("nodes")), "the metadata document needs a \"nodes\" list");
    return false;
  }
  L->nnodes = json_array_size(L->nodes);
  json_t *attrs = json_object_get(L->doc, "attrs");
  if (attrs && !json_is_object(attrs)) {
    md_error(L, MD_AT(L, KEY("attrs")), "\"attrs\" of the metadata document must be an object");
    return false;
  }
  return true;
}

bool metadata_load(Module *m, const char *json, size_t len, uint32_t base, Diag *d) {
  int errors = d->nerrors;
  json_set_alloc_funcs(mem_malloc_try, mem_free);
  Loader L = {.m = m, .d = d, .text = json, .len = len, .base = base};
  m->has_metadata = true;
  m->meta_offset = base;
  m->meta_keys = NULL;
  m->nmeta_keys = 0;
  m->size_vars = NULL;
  m->nsize_vars = 0;
  m->virtual_devices = NULL;
  m->nvirtual_devices = 0;
  m->meta_consts = NULL;
  m->nmeta_consts = 0;
  if (md_parse(&L) && md_document(&L)) md_walk(&L);
  json_decref(L.doc);
  vec_free(L.blobs);
  mem_free(L.blob_tensor);
  mem_free(L.blob_state);
  mem_free(L.early);
  return d->nerrors == errors;
}
