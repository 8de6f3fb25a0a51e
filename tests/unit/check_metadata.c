/* tests/unit/check_metadata.c — the metadata section: base64, tensor blobs
 * (ir/tensor_blob.c), the reader (parser/metadata.c) and the writer
 * (ir/metadata_write.c). Covers the worked examples of spec §6.5, byte-exact
 * writer output, write -> load round trips over dtypes and ranks, and one
 * test per kind of corruption (each must give a diagnostic, never a crash). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ast.h"
#include "ir/base64_simd.h"
#include "ir/mem.h"
#include "ir/metadata_write.h"
#include "ir/tensor_blob.h"
#include "parser/metadata.h"
#include "tests/unit/unit_run.h"

/* ------------------------------------------------------------------ fixtures */

#define F32_12_B64 "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAACAPwAAAEA="
#define I8_M3_B64 "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAAAAAAAIAQABAAAAAAAAAP0="

/* The minimal form of spec §6.5, with a printf slot for the blob. */
#define MINIMAL_FMT                                                                            \
  "{\n"                                                                                        \
  "  \"root\": 1, \n"                                                                          \
  "  \"nodes\": [\n"                                                                           \
  "    {\n"                                                                                    \
  "      \"type_key\": \"\"\n"                                                                 \
  "    }, \n"                                                                                  \
  "    {\n"                                                                                    \
  "      \"type_key\": \"Map\", \n"                                                            \
  "      \"keys\": [\n"                                                                        \
  "        \"relay.Constant\"\n"                                                               \
  "      ], \n"                                                                                \
  "      \"data\": [2]\n"                                                                      \
  "    }, \n"                                                                                  \
  "    {\n"                                                                                    \
  "      \"type_key\": \"Array\", \n"                                                          \
  "      \"data\": [3]\n"                                                                      \
  "    }, \n"                                                                                  \
  "    {\n"                                                                                    \
  "      \"type_key\": \"relay.Constant\", \n"                                                 \
  "      \"attrs\": {\n"                                                                       \
  "        \"_checked_type_\": \"0\", \n"                                                      \
  "        \"data\": \"0\", \n"                                                                \
  "        \"span\": \"0\", \n"                                                                \
  "        \"virtual_device_\": \"0\"\n"                                                       \
  "      }\n"                                                                                  \
  "    }\n"                                                                                    \
  "  ], \n"                                                                                    \
  "  \"b64ndarrays\": [\n"                                                                     \
  "    \"%s\"\n"                                                                               \
  "  ], \n"                                                                                    \
  "  \"attrs\": {\"tvm_version\": \"0.20.dev0\"}\n"                                            \
  "}"

static const char full_form[] =
    "{\n"
    "  \"root\": 1, \n"
    "  \"nodes\": [\n"
    "    {\n"
    "      \"type_key\": \"\"\n"
    "    }, \n"
    "    {\n"
    "      \"type_key\": \"Map\", \n"
    "      \"keys\": [\n"
    "        \"relay.Constant\"\n"
    "      ], \n"
    "      \"data\": [2]\n"
    "    }, \n"
    "    {\n"
    "      \"type_key\": \"Array\", \n"
    "      \"data\": [3]\n"
    "    }, \n"
    "    {\n"
    "      \"type_key\": \"relay.Constant\", \n"
    "      \"attrs\": {\n"
    "        \"_checked_type_\": \"0\", \n"
    "        \"data\": \"0\", \n"
    "        \"span\": \"0\", \n"
    "        \"virtual_device_\": \"4\"\n"
    "      }\n"
    "    }, \n"
    "    {\n"
    "      \"type_key\": \"VirtualDevice\", \n"
    "      \"attrs\": {\n"
    "        \"device_type_int\": \"-1\", \n"
    "        \"memory_scope\": \"5\", \n"
    "        \"target\": \"0\", \n"
    "        \"virtual_device_id\": \"-1\"\n"
    "      }\n"
    "    }, \n"
    "    {\n"
    "      \"type_key\": \"runtime.String\"\n"
    "    }\n"
    "  ], \n"
    "  \"b64ndarrays\": [\n"
    "    \"" F32_12_B64 "\"\n"
    "  ], \n"
    "  \"attrs\": {\"tvm_version\": \"0.20.dev0\"}\n"
    "}";

/* One load: the module, the diagnostics text and the result. */
typedef struct Loaded {
  Source *src;
  Module *m;
  char *diags;
  bool ok;
  int nerrors;
} Loaded;

/* Loads `text` as if it followed `prefix` (e.g. "#[metadata]\n") in a file. */
static Loaded load_after(const char *prefix, const char *text, size_t len) {
  size_t plen = strlen(prefix);
  char *buf = mem_malloc(plen + len + 1);
  memcpy(buf, prefix, plen);
  memcpy(buf + plen, text, len);
  buf[plen + len] = 0;
  Loaded r = {0};
  r.src = source_new("t.relay", buf, plen + len);
  r.m = module_new(r.src);
  size_t dlen = 0;
  FILE *f = open_memstream(&r.diags, &dlen);
  Diag d;
  diag_init(&d, f, r.src);
  r.ok = metadata_load(r.m, buf + plen, len, (uint32_t)plen, &d);
  r.nerrors = d.nerrors;
  fclose(f);
  return r;
}

static Loaded load(const char *text) { return load_after("", text, strlen(text)); }

static void unload(Loaded *r) {
  module_free(r->m);
  source_free(r->src);
  free(r->diags);
}

/* The minimal document around one blob (caller frees). */
static char *minimal_with(const char *b64) {
  size_t n = strlen(MINIMAL_FMT) + strlen(b64) + 1;
  char *s = malloc(n);
  snprintf(s, n, MINIMAL_FMT, b64);
  return s;
}

/* Loading must fail with a message containing `want`. */
static void assert_load_fails(const char *text, const char *want) {
  Loaded r = load(text);
  ck_assert_msg(!r.ok && r.nerrors > 0, "expected an error for:\n%s", text);
  ck_assert_msg(strstr(r.diags, want) != NULL, "want \"%s\" in:\n%s", want, r.diags);
  /* Every constant slot is filled even after errors. */
  for (uint32_t i = 0; i < r.m->nmeta_consts; i++) ck_assert_ptr_nonnull(r.m->meta_consts[i]);
  unload(&r);
}

static void assert_blob_fails(const char *b64, const char *want) {
  char *doc = minimal_with(b64);
  assert_load_fails(doc, want);
  free(doc);
}

/* The valid float32 [1, 2] blob with `n` bytes at `at` replaced, re-encoded. */
static char *patched_blob(size_t at, const void *bytes, size_t n, size_t truncate_to) {
  uint8_t raw[64];
  size_t len = base64_decode(F32_12_B64, strlen(F32_12_B64), raw, NULL);
  ck_assert_uint_eq(len, 56);
  memcpy(raw + at, bytes, n);
  if (truncate_to < len) len = truncate_to;
  return base64_encode(raw, len, NULL);
}

static void assert_patched_fails(size_t at, const void *bytes, size_t n, const char *want) {
  char *b64 = patched_blob(at, bytes, n, SIZE_MAX);
  assert_blob_fails(b64, want);
  mem_free(b64);
}

/* ------------------------------------------------------------------ base64 */

START_TEST(base64_vectors) {
  static const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  static const char *coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (int i = 0; i < 7; i++) {
    size_t n;
    char *e = base64_encode(plain[i], strlen(plain[i]), &n);
    ck_assert_str_eq(e, coded[i]);
    ck_assert_uint_eq(n, base64_encoded_len(strlen(plain[i])));
    mem_free(e);
    char out[8] = {0};
    ck_assert_uint_eq(base64_decoded_len(coded[i], strlen(coded[i])), strlen(plain[i]));
    ck_assert_uint_eq(base64_decode(coded[i], strlen(coded[i]), out, NULL), strlen(plain[i]));
    ck_assert_str_eq(out, plain[i]);
  }
}
END_TEST

START_TEST(base64_all_bytes) {
  uint8_t in[256], out[256];
  for (int i = 0; i < 256; i++) in[i] = (uint8_t)(255 - i);
  for (size_t n = 0; n <= 256; n += 37) {
    size_t m;
    char *e = base64_encode(in, n, &m);
    ck_assert_uint_eq(base64_decode(e, m, out, NULL), n);
    ck_assert(memcmp(in, out, n) == 0);
    mem_free(e);
  }
}
END_TEST

START_TEST(base64_malformed) {
  uint8_t out[16];
  size_t bad = 0;
  ck_assert_uint_eq(base64_decoded_len("abc", 3), SIZE_MAX);
  ck_assert_uint_eq(base64_decode("abc", 3, out, &bad), SIZE_MAX);
  ck_assert_uint_eq(base64_decode("Zm9v Zg==", 9, out, &bad), SIZE_MAX); /* length 9 */
  ck_assert_uint_eq(base64_decode("Zm9vZ*==", 8, out, &bad), SIZE_MAX);
  ck_assert_uint_eq(bad, 5);
  ck_assert_uint_eq(base64_decode("Zm=vZg==", 8, out, &bad), SIZE_MAX); /* '=' inside */
  ck_assert_uint_eq(bad, 2);
  ck_assert_uint_eq(base64_decode("Z===", 4, out, &bad), SIZE_MAX);
  ck_assert_uint_eq(bad, 1);
  ck_assert_uint_eq(base64_decode("Zm9\xc3", 4, out, &bad), SIZE_MAX);
  ck_assert_uint_eq(bad, 3);
}
END_TEST

/* The vector kernels (ir/base64_simd.h), each instruction set the CPU has,
 * against the scalar decoder: same bytes, never a write past what they
 * decoded, and they stop before (never after) a block with a bad character. */

static const Base64Isa simd_isas[] = {B64_ISA_SCALAR, B64_ISA_AVX2, B64_ISA_AVX512, B64_ISA_BEST};

static uint64_t test_rand_state = 88172645463325252ull;
static uint8_t test_rand_byte(void) {
  test_rand_state ^= test_rand_state << 13;
  test_rand_state ^= test_rand_state >> 7;
  test_rand_state ^= test_rand_state << 17;
  return (uint8_t)(test_rand_state >> 24);
}

START_TEST(base64_simd_matches_scalar) {
  enum { MAXG = 300 };
  uint8_t in[3 * MAXG], out[3 * MAXG + 64], fill[sizeof out];
  for (size_t i = 0; i < sizeof in; i++) in[i] = test_rand_byte();
  memset(fill, 0xA5, sizeof fill);
  for (size_t g = 0; g <= MAXG; g += g < 40 ? 1 : 13) {
    size_t m;
    char *e = base64_encode(in, 3 * g, &m);
    for (size_t k = 0; k < sizeof simd_isas / sizeof simd_isas[0]; k++) {
      memset(out, 0xA5, sizeof out);
      size_t done = base64_simd_groups_isa((const unsigned char *)e, g, out, simd_isas[k]);
      ck_assert_uint_le(done, g);
      if (simd_isas[k] != B64_ISA_SCALAR && base64_simd_best() >= simd_isas[k])
        ck_assert_uint_ge(done + 16, g + 1); /* all but a partial last block */
      ck_assert(memcmp(out, in, 3 * done) == 0);
      ck_assert(memcmp(out + 3 * done, fill, sizeof out - 3 * done) == 0); /* nothing past */
    }
    ck_assert_uint_eq(base64_decode(e, m, out, NULL), 3 * g);
    ck_assert(memcmp(out, in, 3 * g) == 0);
    mem_free(e);
  }
}
END_TEST

static bool b64_alphabet_char(unsigned c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

START_TEST(base64_simd_every_bad_char) {
  enum { G = 40 };
  uint8_t in[3 * G], out[3 * G + 64];
  for (size_t i = 0; i < sizeof in; i++) in[i] = test_rand_byte();
  size_t m;
  char *e = base64_encode(in, sizeof in, &m);
  static const size_t where[] = {0, 1, 31, 32, 33, 63, 64, 65, 100, 4 * G - 5};
  for (unsigned c = 0; c < 256; c++) {
    if (b64_alphabet_char(c)) continue;
    for (size_t w = 0; w < sizeof where / sizeof where[0]; w++) {
      char *t = mem_strdup(e);
      t[where[w]] = (char)c;
      size_t bad = 0;
      ck_assert_uint_eq(base64_decode(t, m, out, &bad), SIZE_MAX);
      ck_assert_uint_eq(bad, where[w]);
      for (size_t k = 0; k < sizeof simd_isas / sizeof simd_isas[0]; k++) {
        size_t done = base64_simd_groups_isa((const unsigned char *)t, G, out, simd_isas[k]);
        ck_assert_uint_le(4 * done, where[w]);
      }
      mem_free(t);
    }
  }
  mem_free(e);
}
END_TEST

/* ------------------------------------------------------------- tensor blobs */

START_TEST(blob_raw_round_trip) {
  Arena *a = arena_new();
  int64_t shape[2] = {2, 3};
  int16_t data[6] = {1, -2, 3, -4, 5, -32768};
  ConstTensor c = {DT_I16, 2, shape, data, sizeof data, -1}, back;
  size_t n;
  unsigned char *bytes = tensor_blob_encode(&c, &n);
  ck_assert_uint_eq(n, tensor_blob_size(&c));
  ck_assert_uint_eq(n, 40 + 16 + 12);
  BlobError e;
  ck_assert(tensor_blob_decode(bytes, n, a, &back, &e));
  ck_assert(dtype_eq(back.dtype, DT_I16));
  ck_assert_int_eq(back.ndim, 2);
  ck_assert_int_eq(back.shape[1], 3);
  ck_assert_uint_eq(back.nbytes, 12);
  ck_assert_int_eq(back.meta_index, -1);
  ck_assert(memcmp(back.data, data, 12) == 0);
  ck_assert_uint_eq((uintptr_t)back.data % 64, 0);
  /* Raw errors report byte offsets. */
  ck_assert(!tensor_blob_decode(bytes, n - 1, a, &back, &e));
  ck_assert_ptr_nonnull(strstr(e.msg, "truncated"));
  bytes[16] = 2;
  ck_assert(!tensor_blob_decode(bytes, n, a, &back, &e));
  ck_assert_uint_eq(e.lo, 16);
  ck_assert_uint_eq(e.hi, 20);
  mem_free(bytes);
  arena_free(a);
}
END_TEST

START_TEST(blob_spec_example_encodes) {
  int64_t shape[1] = {2};
  float data[2] = {1.0f, 2.0f};
  ConstTensor c = {DT_F32, 1, shape, data, sizeof data, 0};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  tensor_blob_write_base64(f, &c);
  fclose(f);
  ck_assert_str_eq(buf, F32_12_B64);
  free(buf);
}
END_TEST

START_TEST(blob_bool_normalised) {
  Arena *a = arena_new();
  int64_t shape[1] = {3};
  uint8_t data[3] = {0, 1, 7};
  ConstTensor c = {DT_BOOL_T, 1, shape, data, 3, -1}, back;
  size_t n;
  unsigned char *bytes = tensor_blob_encode(&c, &n);
  BlobError e;
  ck_assert(tensor_blob_decode(bytes, n, a, &back, &e));
  ck_assert_uint_eq(((uint8_t *)back.data)[2], 1);
  mem_free(bytes);
  arena_free(a);
}
END_TEST

/* ---------------------------------------------------------- loading: examples */

static void assert_f32_12(Loaded *r) {
  ck_assert_msg(r->ok, "%s", r->diags);
  ck_assert_int_eq(r->nerrors, 0);
  Module *m = r->m;
  ck_assert(m->has_metadata);
  ck_assert_uint_eq(m->nmeta_keys, 1);
  ck_assert_str_eq(m->meta_keys[0].key, "relay.Constant");
  ck_assert_uint_eq(m->meta_keys[0].count, 1);
  ck_assert_uint_eq(m->nmeta_consts, 1);
  ConstTensor *c = m->meta_consts[0];
  ck_assert(dtype_eq(c->dtype, DT_F32));
  ck_assert_int_eq(c->ndim, 1);
  ck_assert_int_eq(c->shape[0], 2);
  ck_assert_uint_eq(c->nbytes, 8);
  ck_assert_int_eq(c->meta_index, 0);
  ck_assert_uint_eq((uintptr_t)c->data % 64, 0);
  const float *v = c->data;
  ck_assert(v[0] == 1.0f && v[1] == 2.0f);
}

START_TEST(load_spec_full_form) {
  Loaded r = load(full_form);
  assert_f32_12(&r);
  unload(&r);
}
END_TEST

START_TEST(load_spec_minimal_form) {
  char *doc = minimal_with(F32_12_B64);
  Loaded r = load_after("#[metadata]\n", doc, strlen(doc));
  assert_f32_12(&r);
  ck_assert_uint_eq(r.m->meta_offset, 12);
  unload(&r);
  free(doc);
}
END_TEST

START_TEST(load_int8_scalar) {
  char *doc = minimal_with(I8_M3_B64);
  Loaded r = load(doc);
  ck_assert_msg(r.ok, "%s", r.diags);
  ConstTensor *c = r.m->meta_consts[0];
  ck_assert(dtype_eq(c->dtype, DT_I8));
  ck_assert_int_eq(c->ndim, 0);
  ck_assert_uint_eq(c->nbytes, 1);
  ck_assert_int_eq(*(int8_t *)c->data, -3);
  ck_assert_int_eq(const_scalar_as_int(c), -3);
  unload(&r);
  free(doc);
}
END_TEST

START_TEST(load_keys_in_other_order) {
  /* Top-level keys reversed, node keys reordered, compact and odd whitespace. */
  const char *doc =
      "\t{\"attrs\":{\"tvm_version\":\"0.20.dev0\"},\"b64ndarrays\":[\"" F32_12_B64 "\"],"
      "\r\n\"nodes\":[{\"type_key\":\"\"},{\"data\":[2],\"keys\":[\"relay.Constant\"],"
      "\"type_key\":\"Map\"},{\"data\":[3],\"type_key\":\"Array\"},{\"attrs\":{\"virtual_device_\":"
      "\"0\",\"span\":\"0\",\"data\":\"0\",\"_checked_type_\":\"0\"},\"type_key\":\"relay.Constant\"}],"
      "\"root\":1}  \n";
  Loaded r = load(doc);
  assert_f32_12(&r);
  unload(&r);
}
END_TEST

START_TEST(load_optional_fields_absent) {
  /* No b64ndarrays and no attrs: fine when no constant needs a blob. */
  const char *doc = "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", "
                    "\"keys\": [\"tir.SizeVar\"], \"data\": [2]}, {\"type_key\": \"Array\", "
                    "\"data\": [3, 3]}, {\"type_key\": \"tir.SizeVar\"}]}";
  Loaded r = load(doc);
  ck_assert_msg(r.ok, "%s", r.diags);
  ck_assert_uint_eq(r.m->nmeta_keys, 1);
  ck_assert_str_eq(r.m->meta_keys[0].key, "tir.SizeVar");
  ck_assert_uint_eq(r.m->meta_keys[0].count, 2);
  ck_assert_uint_eq(r.m->nmeta_consts, 0);
  unload(&r);
}
END_TEST

START_TEST(load_unknown_keys_and_nodes_ignored) {
  const char *doc =
      "{\"extra\": {\"a\": [1, 2, {\"b\": \"]\"}]}, \"root\": 1, \"nodes\": [\n"
      " {\"type_key\": \"\"},\n"
      " {\"type_key\": \"Map\", \"keys\": [\"relay.attrs.Conv2DAttrs\", \"relay.Constant\"],"
      "  \"data\": [2, 3]},\n"
      " {\"type_key\": \"Array\", \"data\": [6, 6, 6]},\n"
      " {\"type_key\": \"Array\", \"data\": [4, 5]},\n"
      " {\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"1\", \"span\": \"0\","
      "  \"_checked_type_\": \"7\", \"virtual_device_\": \"0\"}, \"future\": [1]},\n"
      " {\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"0\"}},\n"
      " {\"type_key\": \"relay.attrs.Conv2DAttrs\", \"attrs\": {\"padding\": \"8\"}},\n"
      " {\"type_key\": \"relay.TensorType\", \"attrs\": {\"dtype\": \"float32\"}},\n"
      " {\"type_key\": \"SomethingNew\", \"repr_str\": \"x\"}\n"
      "], \"b64ndarrays\": [\"" F32_12_B64 "\", \"" I8_M3_B64 "\"], \"more\": 3}";
  Loaded r = load(doc);
  ck_assert_msg(r.ok, "%s", r.diags);
  ck_assert_uint_eq(r.m->nmeta_keys, 2);
  ck_assert_str_eq(r.m->meta_keys[0].key, "relay.attrs.Conv2DAttrs");
  ck_assert_uint_eq(r.m->meta_keys[0].count, 3);
  ck_assert_uint_eq(r.m->meta_keys[1].count, 2);
  ck_assert_uint_eq(r.m->nmeta_consts, 2);
  ck_assert_int_eq(*(int8_t *)r.m->meta_consts[0]->data, -3);
  ck_assert_int_eq(r.m->meta_consts[1]->shape[0], 2);
  ck_assert_int_eq(r.m->meta_consts[1]->meta_index, 1);
  unload(&r);
}
END_TEST

START_TEST(load_shared_blob) {
  const char *doc =
      "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", \"keys\": "
      "[\"relay.Constant\"], \"data\": [2]}, {\"type_key\": \"Array\", \"data\": [3, 4, 3]}, "
      "{\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"0\"}}, "
      "{\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"0\"}}], "
      "\"b64ndarrays\": [\"" F32_12_B64 "\"]}";
  Loaded r = load(doc);
  ck_assert_msg(r.ok, "%s", r.diags);
  ck_assert_uint_eq(r.m->nmeta_consts, 3);
  ck_assert_ptr_eq(r.m->meta_consts[0]->data, r.m->meta_consts[1]->data);
  ck_assert_int_eq(r.m->meta_consts[2]->meta_index, 2);
  unload(&r);
}
END_TEST

START_TEST(load_escaped_base64) {
  /* "\/" is a legal JSON escape for '/': a blob holding '/' written with it
   * must be unescaped before decoding. */
  int64_t shape[1] = {3};
  uint8_t data[3] = {0xff, 0xff, 0xff}; /* "////" in base64 */
  ConstTensor c = {DT_U8, 1, shape, data, 3, -1};
  size_t n;
  unsigned char *bytes = tensor_blob_encode(&c, &n);
  char *plain = base64_encode(bytes, n, NULL);
  char escaped[256] = {0};
  for (char *p = plain, *q = escaped; *p; p++) {
    if (*p == '/') *q++ = '\\';
    *q++ = *p;
  }
  ck_assert_ptr_nonnull(strstr(escaped, "\\/"));
  char *doc = minimal_with(escaped);
  Loaded r = load(doc);
  ck_assert_msg(r.ok, "%s", r.diags);
  ck_assert(memcmp(r.m->meta_consts[0]->data, data, 3) == 0);
  unload(&r);
  free(doc);
  /* An invalid escape inside a blob string is an error, not a crash. */
  doc = minimal_with("P6G0\\qvBA");
  assert_load_fails(doc, "invalid");
  free(doc);
  mem_free(plain);
  mem_free(bytes);
}
END_TEST

/* ------------------------------------------------------------------ writer */

static char *write_consts(ConstTensor *const *cs, uint32_t n) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  metadata_write(f, cs, n);
  fclose(f);
  return buf;
}

START_TEST(writer_matches_spec_minimal_form) {
  int64_t shape[1] = {2};
  float data[2] = {1.0f, 2.0f};
  ConstTensor c = {DT_F32, 1, shape, data, sizeof data, 0};
  ConstTensor *cs[1] = {&c};
  char *got = write_consts(cs, 1);
  char *want = minimal_with(F32_12_B64);
  ck_assert_str_eq(got, want);
  free(got);
  free(want);
}
END_TEST

START_TEST(writer_long_data_list) {
  int8_t v[12];
  ConstTensor c[12], *cs[12];
  for (int i = 0; i < 12; i++) {
    v[i] = (int8_t)(i - 6);
    c[i] = (ConstTensor){DT_I8, 0, NULL, &v[i], 1, i};
    cs[i] = &c[i];
  }
  char *got = write_consts(cs, 12);
  /* More than 10 indices: one per line, ", " before each break, ']' on its own line. */
  ck_assert_ptr_nonnull(strstr(got, "      \"type_key\": \"Array\", \n"
                                    "      \"data\": [\n"
                                    "        3, \n"
                                    "        4, \n"));
  ck_assert_ptr_nonnull(strstr(got, "        13, \n"
                                    "        14\n"
                                    "      ]\n"
                                    "    }, \n"));
  ck_assert_ptr_nonnull(strstr(got, "        \"data\": \"11\", \n"));
  ck_assert(got[strlen(got) - 1] == '}');
  Loaded r = load(got);
  ck_assert_msg(r.ok, "%s", r.diags);
  ck_assert_uint_eq(r.m->nmeta_consts, 12);
  for (int i = 0; i < 12; i++) ck_assert_int_eq(*(int8_t *)r.m->meta_consts[i]->data, i - 6);
  unload(&r);
  free(got);
}
END_TEST

START_TEST(writer_no_constants) {
  char *got = write_consts(NULL, 0);
  ck_assert_ptr_nonnull(strstr(got, "    {\n      \"type_key\": \"Array\"\n    }\n  ], \n"));
  ck_assert_ptr_nonnull(strstr(got, "\"b64ndarrays\": [], \n"));
  Loaded r = load(got);
  ck_assert_msg(r.ok, "%s", r.diags);
  ck_assert_uint_eq(r.m->nmeta_consts, 0);
  ck_assert_uint_eq(r.m->meta_keys[0].count, 0);
  unload(&r);
  free(got);
}
END_TEST

/* write -> load for every dtype and ranks 0..4 */
static const DType round_trip_types[] = {
    DTYPE(DT_UINT, 1), DTYPE(DT_INT, 8),  DTYPE(DT_INT, 16),  DTYPE(DT_INT, 32),
    DTYPE(DT_INT, 64), DTYPE(DT_UINT, 8), DTYPE(DT_FLOAT, 16), DTYPE(DT_FLOAT, 32),
    DTYPE(DT_FLOAT, 64),
};

START_TEST(writer_round_trip) {
  DType t = round_trip_types[_i];
  enum { RANKS = 5 };
  static const int64_t shapes[RANKS][4] = {{0}, {5}, {2, 3}, {2, 1, 4}, {3, 2, 2, 2}};
  ConstTensor c[RANKS + 1], *cs[RANKS + 1];
  void *bufs[RANKS + 1];
  for (int r = 0; r <= RANKS; r++) {
    int rank = r < RANKS ? r : 2;
    int64_t *shape = malloc(sizeof(int64_t) * 4);
    int64_t count = 1;
    for (int k = 0; k < rank; k++) {
      shape[k] = r < RANKS ? shapes[r][k] : (k ? 0 : 3); /* last one: shape (3, 0) */
      count *= shape[k];
    }
    size_t nbytes = (size_t)count * dtype_size(t);
    uint8_t *d = malloc(nbytes + 1);
    for (size_t b = 0; b < nbytes; b++) d[b] = dtype_is_bool(t) ? (uint8_t)(b % 2) : (uint8_t)(b * 37 + r);
    bufs[r] = d;
    c[r] = (ConstTensor){t, rank, shape, d, nbytes, r};
    cs[r] = &c[r];
  }
  char *text = write_consts(cs, RANKS + 1);
  Loaded l = load(text);
  ck_assert_msg(l.ok, "%s", l.diags);
  ck_assert_uint_eq(l.m->nmeta_consts, RANKS + 1);
  for (int r = 0; r <= RANKS; r++) {
    ConstTensor *got = l.m->meta_consts[r];
    ck_assert(dtype_eq(got->dtype, t));
    ck_assert_int_eq(got->ndim, c[r].ndim);
    for (int k = 0; k < got->ndim; k++) ck_assert_int_eq(got->shape[k], c[r].shape[k]);
    ck_assert_uint_eq(got->nbytes, c[r].nbytes);
    ck_assert(got->nbytes == 0 || memcmp(got->data, c[r].data, got->nbytes) == 0);
    ck_assert_int_eq(got->meta_index, r);
  }
  /* Writing what was loaded gives the same text again. */
  char *again = write_consts(l.m->meta_consts, l.m->nmeta_consts);
  ck_assert_str_eq(again, text);
  free(again);
  unload(&l);
  free(text);
  for (int r = 0; r <= RANKS; r++) {
    free(bufs[r]);
    free(c[r].shape);
  }
}
END_TEST

START_TEST(round_trip_large_tensor) {
  enum { N = 1 << 20 };
  int64_t shape[2] = {1024, 1024};
  float *data = malloc(sizeof(float) * N);
  for (int i = 0; i < N; i++) data[i] = (float)i * 0.5f;
  ConstTensor c = {DT_F32, 2, shape, data, sizeof(float) * N, 0}, *cs[1] = {&c};
  char *text = write_consts(cs, 1);
  Loaded l = load(text);
  ck_assert_msg(l.ok, "%s", l.diags);
  ck_assert(memcmp(l.m->meta_consts[0]->data, data, sizeof(float) * N) == 0);
  unload(&l);
  free(text);
  free(data);
}
END_TEST

/* ------------------------------------------------------------- corruption */

START_TEST(corrupt_json_syntax) {
  /* The span points at jansson's position inside the section, after the prefix. */
  const char *doc = "{\n  \"root\": 1,\n  \"nodes\": [,]\n}";
  Loaded r = load_after("#[version = \"0.0.5\"]\n#[metadata]\n", doc, strlen(doc));
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.diags, "t.relay:5:13: error: invalid JSON in the metadata section") != NULL,
                "%s", r.diags);
  unload(&r);
  assert_load_fails("", "invalid JSON");
  assert_load_fails("{\"root\": 1, \"nodes\": []} trailing", "end of file expected");
  assert_load_fails("{\"root\": 1, \"nodes\": [}", "invalid JSON");
  assert_load_fails("{\"root\": 1, \"root\": 1, \"nodes\": []}", "duplicate");
  assert_load_fails("{\"root\": 1, \"nodes\": [], \"b64ndarrays\": [\"AAAA\",]}", "invalid JSON");
  assert_load_fails("{\"root\": 1, \"nodes\": [], \"b64ndarrays\": [\"AAAA\"], \"b64ndarrays\": []}",
                    "duplicate");
  assert_load_fails("{\"b64ndarrays\": [\"AAAA\"], \"root\": 1, \"nodes\": [tru]}", "invalid");
  assert_load_fails("[1, 2]", "must be a JSON object");
}
END_TEST

START_TEST(corrupt_json_deep_nesting) {
  enum { DEPTH = 200000 };
  char *doc = malloc(2 * DEPTH + 64);
  size_t k = (size_t)sprintf(doc, "{\"root\": 1, \"x\": ");
  for (int i = 0; i < DEPTH; i++) doc[k++] = '[';
  for (int i = 0; i < DEPTH; i++) doc[k++] = ']';
  strcpy(doc + k, "}");
  assert_load_fails(doc, "invalid JSON");
  free(doc);
}
END_TEST

START_TEST(corrupt_structure) {
  assert_load_fails("{\"nodes\": []}", "integer \"root\"");
  assert_load_fails("{\"root\": \"1\", \"nodes\": [{}, {}]}", "integer \"root\"");
  assert_load_fails("{\"root\": 1}", "\"nodes\" list");
  assert_load_fails("{\"root\": 1, \"nodes\": {}}", "\"nodes\" list");
  assert_load_fails("{\"root\": 5, \"nodes\": [{\"type_key\": \"\"}]}", "out of range");
  assert_load_fails("{\"root\": -1, \"nodes\": [{\"type_key\": \"\"}]}", "out of range");
  assert_load_fails("{\"root\": 0, \"nodes\": [3]}", "not a JSON object");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type\": \"Map\"}]}", "no string \"type_key\"");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Array\"}]}", "must be a Map");
  assert_load_fails("{\"root\": 0, \"nodes\": []}", "out of range");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\"}], \"attrs\": 3}",
                    "\"attrs\" of the metadata document");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [\"a\"]}]}",
                    "as long as");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"data\": [0, 0]}]}",
                    "as long as");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [1], "
                    "\"data\": [0]}]}", "keys must be strings");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [\"a\"], "
                    "\"data\": [7]}]}", "out of range");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [\"a\"], "
                    "\"data\": \"0\"}]}", "list of node indices");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [\"a\"], "
                    "\"data\": [\"0\"]}]}", "must hold node indices");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [\"a\", \"b\", \"a\"], "
                    "\"data\": [1, 1, 1]}, {\"type_key\": \"Array\"}]}", "\"a\" appears twice");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [\"a\"], "
                    "\"data\": [0]}]}", "must be an Array node");
  assert_load_fails("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [\"a\"], "
                    "\"data\": [1]}, {\"type_key\": \"Array\", \"data\": [9]}]}", "out of range");
}
END_TEST

/* A document whose single constant is node 3 with the given attrs and type key. */
static char *constant_doc(const char *type_key, const char *attrs, const char *blobs) {
  char *s = malloc(1024);
  snprintf(s, 1024,
           "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", \"keys\": "
           "[\"relay.Constant\"], \"data\": [2]}, {\"type_key\": \"Array\", \"data\": [3]}, "
           "{\"type_key\": \"%s\"%s}], \"b64ndarrays\": %s}",
           type_key, attrs, blobs);
  return s;
}

static void assert_constant_fails(const char *type_key, const char *attrs, const char *blobs,
                                  const char *want) {
  char *doc = constant_doc(type_key, attrs, blobs);
  assert_load_fails(doc, want);
  free(doc);
}

START_TEST(corrupt_constant_nodes) {
  const char *ok = "[\"" F32_12_B64 "\"]";
  assert_constant_fails("relay.Var", ", \"attrs\": {\"data\": \"0\"}", ok, "not a relay.Constant");
  assert_constant_fails("relay.Constant", "", ok, "no \"data\" attribute");
  assert_constant_fails("relay.Constant", ", \"attrs\": {\"span\": \"0\"}", ok, "no \"data\"");
  assert_constant_fails("relay.Constant", ", \"attrs\": [1]", ok, "no \"data\"");
  assert_constant_fails("relay.Constant", ", \"attrs\": {\"data\": 0}", ok, "decimal string");
  assert_constant_fails("relay.Constant", ", \"attrs\": {\"data\": \"-1\"}", ok, "decimal string");
  assert_constant_fails("relay.Constant", ", \"attrs\": {\"data\": \"\"}", ok, "decimal string");
  assert_constant_fails("relay.Constant", ", \"attrs\": {\"data\": \"99999999999999999999999\"}",
                        ok, "decimal string");
  assert_constant_fails("relay.Constant", ", \"attrs\": {\"data\": \"1\"}", ok, "out of range");
  assert_constant_fails("relay.Constant", ", \"attrs\": {\"data\": \"0\"}", "[]", "out of range");
  assert_constant_fails("relay.Constant", ", \"attrs\": {\"data\": \"0\"}", "{}",
                        "list of strings");
  assert_constant_fails("relay.Constant", ", \"attrs\": {\"data\": \"0\"}", "[5]",
                        "b64ndarrays[0] is not a string");
  /* No b64ndarrays at all. */
  assert_load_fails("{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", "
                    "\"keys\": [\"relay.Constant\"], \"data\": [2]}, {\"type_key\": \"Array\", "
                    "\"data\": [3]}, {\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": "
                    "\"0\"}}]}", "out of range");
}
END_TEST

START_TEST(corrupt_base64) {
  assert_blob_fails("P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAACAPwAAAEA",
                    "not a multiple of 4");
  assert_blob_fails("P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAAC*PwAAAEA=",
                    "invalid base64 character '*'");
  assert_blob_fails("P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAACAPw\xc3\xa9" "AEA=",
                    "invalid base64 character (byte 0xc3)");
  assert_blob_fails("P6G0 vBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAACAPwAAAEA=",
                    "invalid base64 character (byte 0x20)");
  assert_blob_fails("", "truncated tensor blob");
  assert_blob_fails("P6G0", "truncated tensor blob");
}
END_TEST

START_TEST(corrupt_base64_span) {
  /* The caret lands on the bad character: line 29 of the file, its column. */
  char *doc = minimal_with(
      "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQACAAAAAAAAAAgAAAAAAAAAAAC*PwAAAEA=");
  Loaded r = load_after("#[metadata]\n", doc, strlen(doc));
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.diags, "t.relay:30:73: error: invalid base64 character") != NULL, "%s",
                r.diags);
  unload(&r);
  free(doc);
}
END_TEST

START_TEST(corrupt_blob_header) {
  uint8_t magic[8] = {0x3f, 0xa1, 0xb4, 0x96, 0xf0, 0x40, 0x5e, 0xde};
  assert_patched_fails(0, magic, 8, "bad tensor blob magic");
  int32_t gpu = 2;
  assert_patched_fails(16, &gpu, 4, "device type 2; only CPU (1)");
  int32_t neg = -1, huge = 1 << 30;
  assert_patched_fails(24, &neg, 4, "negative rank -1");
  assert_patched_fails(24, &huge, 4, "absurd rank");
  int32_t two = 2;
  assert_patched_fails(24, &two, 4, "byte count"); /* shape (2, 8) disagrees with 8 bytes */
  uint8_t code9 = 9, code3 = 3, lanes4[2] = {4, 0}, bits7 = 7, fbits8 = 8;
  assert_patched_fails(28, &code9, 1, "unknown dtype code 9");
  assert_patched_fails(28, &code3, 1, "unsupported dtype");
  assert_patched_fails(30, lanes4, 2, "4 lanes per element");
  assert_patched_fails(29, &bits7, 1, "unsupported dtype");
  assert_patched_fails(29, &fbits8, 1, "unsupported dtype float8");
  int64_t extent = -2, big = INT64_MAX;
  assert_patched_fails(32, &extent, 8, "negative extent -2");
  assert_patched_fails(32, &big, 8, "too many elements"); /* extent * 4 bytes overflows */
  int64_t size = 12, nsize = -8;
  assert_patched_fails(40, &size, 8, "byte count 12 disagrees with its shape (2) float32");
  assert_patched_fails(40, &nsize, 8, "byte count -8");
}
END_TEST

START_TEST(corrupt_blob_sizes) {
  /* Truncated at every length: always a clean error. */
  for (size_t cut = 0; cut < 56; cut++) {
    char *b64 = patched_blob(0, "", 0, cut);
    assert_blob_fails(b64, "truncated");
    mem_free(b64);
  }
  /* Extra bytes after the data. */
  uint8_t raw[64];
  size_t len = base64_decode(F32_12_B64, strlen(F32_12_B64), raw, NULL);
  raw[len++] = 0;
  char *b64 = base64_encode(raw, len, NULL);
  assert_blob_fails(b64, "1 unexpected bytes after its data");
  mem_free(b64);
  /* A huge claimed shape whose byte count agrees but is not present: no allocation. */
  uint8_t hdr[48];
  memcpy(hdr, raw, 32);
  int64_t ext = (int64_t)1 << 40, sz = ext * 4;
  memcpy(hdr + 32, &ext, 8);
  memcpy(hdr + 40, &sz, 8);
  b64 = base64_encode(hdr, 48, NULL);
  assert_blob_fails(b64, "needs 4398046511104 data bytes, 0 present");
  mem_free(b64);
  /* Element-count overflow across dimensions. */
  uint8_t hdr2[56];
  memcpy(hdr2, raw, 32);
  int32_t two = 2;
  memcpy(hdr2 + 24, &two, 4);
  int64_t e1 = (int64_t)1 << 40, e2 = (int64_t)1 << 40, z = 0;
  memcpy(hdr2 + 32, &e1, 8);
  memcpy(hdr2 + 40, &e2, 8);
  memcpy(hdr2 + 48, &z, 8);
  b64 = base64_encode(hdr2, 56, NULL);
  assert_blob_fails(b64, "too many elements");
  mem_free(b64);
}
END_TEST

START_TEST(errors_keep_going) {
  /* Two bad constants and one good: both errors reported, slots all filled. */
  const char *doc =
      "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", \"keys\": "
      "[\"relay.Constant\"], \"data\": [2]}, {\"type_key\": \"Array\", \"data\": [3, 4, 5]}, "
      "{\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"0\"}}, "
      "{\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"1\"}}, "
      "{\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"2\"}}], "
      "\"b64ndarrays\": [\"AAAA\", \"" I8_M3_B64 "\", \"P6G0\"]}";
  Loaded r = load(doc);
  ck_assert(!r.ok);
  ck_assert_int_eq(r.nerrors, 2);
  ck_assert_uint_eq(r.m->nmeta_consts, 3);
  ck_assert_int_eq(*(int8_t *)r.m->meta_consts[1]->data, -3);
  ck_assert_int_eq(r.m->meta_consts[0]->ndim, 0);
  ck_assert_ptr_nonnull(r.m->meta_consts[2]);
  unload(&r);
}
END_TEST

/* Failing the Nth allocation inside the loader: either a clean exit 3 (the
 * out-of-memory policy of ir/mem.h) or, when N is past the last allocation,
 * a correct result (then the test exits 3 itself). Never a crash. */
START_TEST(bad_index_keeps_key) {
  /* An out-of-range entry is reported once; the key keeps its full length and
   * the bad slot gets a placeholder, so sema sees no missing key or hole. */
  const char *doc =
      "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", \"keys\": "
      "[\"relay.Constant\"], \"data\": [2]}, {\"type_key\": \"Array\", \"data\": [3, 9]}, "
      "{\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"0\"}}], "
      "\"b64ndarrays\": [\"" I8_M3_B64 "\"]}";
  Loaded r = load_after("#[metadata]\n", doc, strlen(doc));
  ck_assert_int_eq(r.nerrors, 1);
  ck_assert_msg(strstr(r.diags, "t.relay:2:137: error: metadata node index 9 is out of range") != NULL,
                "%s", r.diags);
  ck_assert_uint_eq(r.m->nmeta_keys, 1);
  ck_assert_uint_eq(r.m->meta_keys[0].count, 2);
  ck_assert_uint_eq(r.m->nmeta_consts, 2);
  ck_assert_int_eq(*(int8_t *)r.m->meta_consts[0]->data, -3);
  ck_assert_int_eq(r.m->meta_consts[1]->meta_index, 1);
  unload(&r);
}
END_TEST

START_TEST(out_of_memory_exits) {
  char *doc = minimal_with(F32_12_B64);
  size_t n = strlen(doc);
  Source *src = source_new("t.relay", mem_strdup(doc), n);
  Module *m = module_new(src);
  Diag d;
  diag_init(&d, stderr, src);
  ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr)); /* the expected OOM message */
  mem_fail_after(_i);
  bool ok = metadata_load(m, src->text, n, 0, &d);
  mem_fail_after(-1);
  ck_assert(ok);
  ck_assert_int_eq(*(float *)m->meta_consts[0]->data, 1.0f);
  module_free(m);
  source_free(src);
  free(doc);
  exit(3);
}
END_TEST

/* ------------------------------------------------- big sections (parallel) */

/* A one-line document: constant k uses blob cblob[k]; the blobs are given
 * as text (caller frees the result). */
static char *doc_with_blobs(const size_t *cblob, size_t nconst, char **blobs, size_t nblobs) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fprintf(f, "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", "
             "\"keys\": [\"relay.Constant\"], \"data\": [2]}, {\"type_key\": \"Array\", \"data\": [");
  for (size_t k = 0; k < nconst; k++) fprintf(f, "%s%zu", k ? ", " : "", 3 + k);
  fprintf(f, "]}");
  for (size_t k = 0; k < nconst; k++)
    fprintf(f, ", {\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"%zu\"}}", cblob[k]);
  fprintf(f, "], \"b64ndarrays\": [");
  for (size_t j = 0; j < nblobs; j++) fprintf(f, "%s\"%s\"", j ? ", " : "", blobs[j]);
  fprintf(f, "]}");
  fclose(f);
  return buf;
}

/* The base64 record of a float32 (3, cols) tensor holding i * 7 + 1. */
static char *big_blob(size_t cols, ConstTensor *c, float **data) {
  static int64_t shape[2];
  shape[0] = 3;
  shape[1] = (int64_t)cols;
  *data = mem_malloc(3 * cols * sizeof(float));
  for (size_t i = 0; i < 3 * cols; i++) (*data)[i] = (float)(i * 7 + 1);
  *c = (ConstTensor){.dtype = DT_F32, .ndim = 2, .shape = shape, .nbytes = 12 * cols, .data = *data};
  size_t n;
  unsigned char *raw = tensor_blob_encode(c, &n);
  char *b64 = base64_encode(raw, n, NULL);
  mem_free(raw);
  return b64;
}

START_TEST(big_section_decodes) {
  ConstTensor c;
  float *data;
  char *blobs[2] = {big_blob(1000000, &c, &data), mem_strdup(F32_12_B64)}; /* 16 MB of text */
  /* JSON may escape '/': the raw text then fails to decode and is unescaped */
  char *slash = strchr(blobs[0] + 5000000, '/');
  ck_assert_ptr_nonnull(slash);
  size_t at = (size_t)(slash - blobs[0]), n0 = strlen(blobs[0]);
  char *esc = mem_malloc(n0 + 2);
  memcpy(esc, blobs[0], at);
  esc[at] = '\\';
  memcpy(esc + at + 1, blobs[0] + at, n0 - at + 1);
  char *blobs3[3] = {blobs[0], blobs[1], esc};
  size_t cblob[4] = {0, 1, 0, 2};
  char *doc = doc_with_blobs(cblob, 4, blobs3, 3);
  Loaded r = load(doc);
  ck_assert_msg(r.ok, "%s", r.diags);
  ck_assert_uint_eq(r.m->nmeta_consts, 4);
  ck_assert_uint_eq(r.m->meta_consts[0]->nbytes, c.nbytes);
  ck_assert(memcmp(r.m->meta_consts[0]->data, data, c.nbytes) == 0);
  ck_assert_ptr_eq(r.m->meta_consts[2]->data, r.m->meta_consts[0]->data);
  ck_assert(memcmp(r.m->meta_consts[3]->data, data, c.nbytes) == 0);
  ck_assert_int_eq(r.m->meta_consts[3]->meta_index, 3);
  ck_assert_float_eq(((float *)r.m->meta_consts[1]->data)[1], 2.0f);
  unload(&r);
  free(doc);
  mem_free(esc);
  mem_free(blobs[0]);
  mem_free(blobs[1]);
  mem_free(data);
}
END_TEST

/* Errors in a big section: the same messages, spans and order as decoding
 * each blob serially (tensor_blob_decode_base64 is the reference). */
START_TEST(big_section_errors_in_file_order) {
  ConstTensor c;
  float *data;
  char *big = big_blob(1000000, &c, &data);
  char *bad_data = mem_strdup(big), *bad_head = mem_strdup(big);
  bad_data[9000001] = '*'; /* two bad characters in different pieces: the first counts */
  bad_data[3000003] = '\x80';
  bad_data[3000010] = '-';
  bad_head[1] = 'Z';       /* bad magic */
  char *blobs[4] = {big, bad_data, bad_head, mem_strdup(F32_12_B64)};
  size_t cblob[5] = {3, 2, 1, 0, 1};
  char *doc = doc_with_blobs(cblob, 5, blobs, 4);
  Loaded r = load(doc);
  ck_assert(!r.ok);
  ck_assert_int_eq(r.nerrors, 2);
  const char *prev = r.diags;
  for (size_t k = 1; k <= 2; k++) { /* constants 1 (blob 2) then 2 (blob 1) */
    size_t j = cblob[k];
    Arena *a = arena_new();
    ConstTensor out;
    BlobError e;
    ck_assert(!tensor_blob_decode_base64(blobs[j], strlen(blobs[j]), a, &out, &e));
    arena_free(a);
    size_t col = (size_t)(strstr(doc, blobs[j]) - doc) + e.lo + 1;
    char want[400];
    snprintf(want, sizeof want, "t.relay:1:%zu: error: %s (b64ndarrays[%zu], used by "
             "meta[relay.Constant][%zu])", col, e.msg, j, k);
    const char *hit = strstr(r.diags, want);
    ck_assert_msg(hit && hit >= prev, "want \"%s\" in order in:\n%s", want, r.diags);
    prev = hit;
  }
  ck_assert(memcmp(r.m->meta_consts[3]->data, data, c.nbytes) == 0);
  unload(&r);
  free(doc);
  for (int j = 0; j < 4; j++) mem_free(blobs[j]);
  mem_free(data);
}
END_TEST

static Suite *metadata_suite(void) {
  Suite *s = suite_create("metadata");
  TCase *tc = tcase_create("base64+blob");
  tcase_add_test(tc, base64_vectors);
  tcase_add_test(tc, base64_all_bytes);
  tcase_add_test(tc, base64_malformed);
  tcase_add_test(tc, base64_simd_matches_scalar);
  tcase_add_test(tc, base64_simd_every_bad_char);
  tcase_add_test(tc, blob_raw_round_trip);
  tcase_add_test(tc, blob_spec_example_encodes);
  tcase_add_test(tc, blob_bool_normalised);
  suite_add_tcase(s, tc);

  tc = tcase_create("load");
  tcase_add_test(tc, load_spec_full_form);
  tcase_add_test(tc, load_spec_minimal_form);
  tcase_add_test(tc, load_int8_scalar);
  tcase_add_test(tc, load_keys_in_other_order);
  tcase_add_test(tc, load_optional_fields_absent);
  tcase_add_test(tc, load_unknown_keys_and_nodes_ignored);
  tcase_add_test(tc, load_shared_blob);
  tcase_add_test(tc, load_escaped_base64);
  suite_add_tcase(s, tc);

  tc = tcase_create("big");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, big_section_decodes);
  tcase_add_test(tc, big_section_errors_in_file_order);
  suite_add_tcase(s, tc);

  tc = tcase_create("write");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, writer_matches_spec_minimal_form);
  tcase_add_test(tc, writer_long_data_list);
  tcase_add_test(tc, writer_no_constants);
  tcase_add_loop_test(tc, writer_round_trip, 0,
                      (int)(sizeof round_trip_types / sizeof round_trip_types[0]));
  tcase_add_test(tc, round_trip_large_tensor);
  suite_add_tcase(s, tc);

  tc = tcase_create("corrupt");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, corrupt_json_syntax);
  tcase_add_test(tc, corrupt_json_deep_nesting);
  tcase_add_test(tc, corrupt_structure);
  tcase_add_test(tc, corrupt_constant_nodes);
  tcase_add_test(tc, corrupt_base64);
  tcase_add_test(tc, corrupt_base64_span);
  tcase_add_test(tc, corrupt_blob_header);
  tcase_add_test(tc, corrupt_blob_sizes);
  tcase_add_test(tc, errors_keep_going);
  tcase_add_test(tc, bad_index_keeps_key);
  tcase_add_loop_exit_test(tc, out_of_memory_exits, 3, 0, 40);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(metadata_suite());
}
