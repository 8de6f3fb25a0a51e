/* tests/unit/check_params.c — runtime/params.c, runtime/npz.c and runtime/bundle.c:
 * TVM .params files byte for byte (a hand-assembled image from the format's facts),
 * round trips of every dtype and rank, files cut at every byte and with every byte
 * corrupted (no crash, no leak under ASan, the bundle left as it was), each header field
 * broken on purpose, allocation failures (in a child process: a clean error or exit 3,
 * never a crash), .npz archives built here (stored, deflated with zlib, ZIP64 extra
 * fields, comments, bad CRCs, zip bombs), format detection, files, pipes and write errors. */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "ir/diag.h"
#include "ir/mem.h"
#include "ir/tensor_blob.h"
#include "runtime/bundle.h"
#include "runtime/npy.h"
#include "runtime/npz.h"
#include "runtime/params.h"
#include "tests/unit/unit_run.h"

static char tmpdir[64];

/* ------------------------------------------------------------- helpers */

/* A growable byte buffer for assembling images by hand. */
typedef struct Buf {
  uint8_t *p;
  size_t n, cap;
} Buf;

static void put(Buf *b, const void *p, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
  }
  if (n) memcpy(b->p + b->n, p, n);
  b->n += n;
}
static void put64(Buf *b, uint64_t v) { put(b, &v, 8); }
static void put32(Buf *b, uint32_t v) { put(b, &v, 4); }
static void put16(Buf *b, uint16_t v) { put(b, &v, 2); }
static void put8(Buf *b, uint8_t v) { put(b, &v, 1); }

/* One NDArray record. */
static void put_record(Buf *b, DType dt, int32_t ndim, const int64_t *shape, const void *data,
                       int64_t nbytes) {
  put64(b, TENSOR_BLOB_MAGIC);
  put64(b, 0);
  put32(b, 1); /* CPU */
  put32(b, 0);
  put32(b, (uint32_t)ndim);
  put8(b, dt.code);
  put8(b, dt.bits);
  put16(b, dt.lanes);
  for (int32_t i = 0; i < ndim; i++) put64(b, (uint64_t)shape[i]);
  put64(b, (uint64_t)nbytes);
  if (data) put(b, data, nbytes > 0 ? (size_t)nbytes : 0);
}

/* The small file used for the every-byte loops: w (2, 3) float32, s () int8, b (2,) bool. */
static Buf small_image(void) {
  Buf b = {0};
  put64(&b, PARAMS_MAGIC);
  put64(&b, 0);
  put64(&b, 3);
  const char *names[3] = {"w", "s", "b"};
  for (int i = 0; i < 3; i++) {
    put64(&b, 1);
    put(&b, names[i], 1);
  }
  put64(&b, 3);
  float w[6] = {0, 1, 2, 3, 4.5f, -6};
  int64_t s23[2] = {2, 3}, s2[1] = {2};
  put_record(&b, DT_F32, 2, s23, w, sizeof w);
  put_record(&b, DT_I8, 0, NULL, "\x07", 1);
  put_record(&b, DT_BOOL_T, 1, s2, "\x01\x00", 2);
  return b;
}

static bool read_params(const Buf *b, TensorBundle *out, char *err) {
  return params_read_mem(b->p, b->n, out, err);
}

static void assert_rejects(const Buf *b, const char *want) {
  TensorBundle out = {0};
  char err[BUNDLE_ERR_SIZE] = "";
  bool ok = bundle_read_mem(b->p, b->n, &out, err);
  ck_assert_msg(!ok, "accepted an invalid image (expected: %s)", want);
  ck_assert_msg(out.n == 0, "a failed read left %zu tensors", out.n);
  ck_assert_msg(strstr(err, want) != NULL, "message \"%s\" lacks \"%s\"", err, want);
  bundle_free(&out);
}

static Tensor *pattern_tensor(DType dt, int32_t ndim, const int64_t *shape, unsigned seed) {
  Tensor *t = tensor_new(dt, ndim, shape);
  ck_assert_ptr_nonnull(t);
  uint8_t *p = t->data;
  for (uint64_t i = 0; i < t->nbytes; i++) p[i] = (uint8_t)(i * 131 + seed * 17 + 3);
  if (dtype_is_bool(dt))
    for (uint64_t i = 0; i < t->nbytes; i++) p[i] &= 1;
  return t;
}

static char *write_params_mem(const TensorBundle *b, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  char err[BUNDLE_ERR_SIZE];
  ck_assert_msg(params_write_stream(f, b, err), "%s", err);
  fclose(f);
  return buf;
}

/* ----------------------------------------------------------- .params */

/* A file assembled by hand from the format's facts reads as it should. */
START_TEST(test_reads_hand_made_file) {
  Buf b = small_image();
  TensorBundle out = {0};
  char err[BUNDLE_ERR_SIZE] = "";
  ck_assert_msg(read_params(&b, &out, err), "%s", err);
  ck_assert_uint_eq(out.n, 3);
  ck_assert_str_eq(out.names[0], "w");
  ck_assert_str_eq(out.names[1], "s");
  ck_assert_str_eq(out.names[2], "b");
  ck_assert(dtype_eq(out.tensors[0]->dtype, DT_F32));
  ck_assert_int_eq(out.tensors[0]->ndim, 2);
  ck_assert_int_eq(out.tensors[0]->shape[1], 3);
  ck_assert(((float *)out.tensors[0]->data)[4] == 4.5f);
  ck_assert_int_eq(out.tensors[1]->ndim, 0);
  ck_assert_int_eq(((int8_t *)out.tensors[1]->data)[0], 7);
  ck_assert(dtype_is_bool(out.tensors[2]->dtype));
  ck_assert_int_eq(((uint8_t *)out.tensors[2]->data)[0], 1);
  /* and writing it back gives the same bytes */
  size_t len;
  char *again = write_params_mem(&out, &len);
  ck_assert_uint_eq(len, b.n);
  ck_assert(memcmp(again, b.p, len) == 0);
  free(again);
  bundle_free(&out);
  free(b.p);
}
END_TEST

/* Every dtype relayc holds, ranks 0-4 and empty tensors survive write + read bit for bit. */
START_TEST(test_round_trip_all_dtypes) {
  static const DType dts[] = {
      DTYPE(DT_UINT, 1), DTYPE(DT_INT, 8),   DTYPE(DT_INT, 16),   DTYPE(DT_INT, 32),
      DTYPE(DT_INT, 64), DTYPE(DT_UINT, 8),  DTYPE(DT_UINT, 16),  DTYPE(DT_UINT, 32),
      DTYPE(DT_UINT, 64), DTYPE(DT_FLOAT, 16), DTYPE(DT_FLOAT, 32), DTYPE(DT_FLOAT, 64),
      DTYPE(DT_BFLOAT, 16), DTYPE(DT_E4M3, 8), DTYPE(DT_E5M2, 8),
  };
  static const int64_t shapes[5][4] = {{0}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 3, 2}};
  TensorBundle b = {0};
  unsigned seed = 0;
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
    for (int r = 0; r < 5; r++) {
      char name[32];
      snprintf(name, sizeof name, "t%zu_%d", i, r);
      bundle_add(&b, name, strlen(name), pattern_tensor(dts[i], r, shapes[r], seed++));
    }
  size_t len;
  char *img = write_params_mem(&b, &len);
  TensorBundle out = {0};
  char err[BUNDLE_ERR_SIZE];
  ck_assert_msg(params_read_mem(img, len, &out, err), "%s", err);
  ck_assert_uint_eq(out.n, b.n);
  for (size_t i = 0; i < b.n; i++) {
    const Tensor *x = b.tensors[i], *y = out.tensors[i];
    ck_assert_str_eq(out.names[i], b.names[i]);
    ck_assert(dtype_eq(x->dtype, y->dtype));
    ck_assert_int_eq(x->ndim, y->ndim);
    for (int32_t k = 0; k < x->ndim; k++) ck_assert_int_eq(x->shape[k], y->shape[k]);
    ck_assert_uint_eq(x->nbytes, y->nbytes);
    ck_assert(x->nbytes == 0 || memcmp(x->data, y->data, (size_t)x->nbytes) == 0);
  }
  /* the bytes of the first record are the format's: header then data */
  size_t at = 24 + b.n * 8;
  for (size_t i = 0; i < b.n; i++) at += strlen(b.names[i]);
  uint64_t count, magic;
  memcpy(&count, img + at, 8);
  memcpy(&magic, img + at + 8, 8);
  ck_assert_uint_eq(count, b.n);
  ck_assert(magic == TENSOR_BLOB_MAGIC);
  free(img);
  bundle_free(&out);
  bundle_free(&b);
}
END_TEST

/* Bool bytes other than 0/1 read as 1. */
START_TEST(test_bool_normalised) {
  Buf b = {0};
  put64(&b, PARAMS_MAGIC);
  put64(&b, 0);
  put64(&b, 1);
  put64(&b, 1);
  put(&b, "m", 1);
  put64(&b, 1);
  int64_t s[1] = {3};
  put_record(&b, DT_BOOL_T, 1, s, "\x00\x05\xff", 3);
  TensorBundle out = {0};
  char err[BUNDLE_ERR_SIZE];
  ck_assert_msg(read_params(&b, &out, err), "%s", err);
  const uint8_t *d = out.tensors[0]->data;
  ck_assert(d[0] == 0 && d[1] == 1 && d[2] == 1);
  bundle_free(&out);
  free(b.p);
}
END_TEST

/* Every prefix of a valid file is rejected with a message, and the bundle keeps what it had. */
START_TEST(test_truncated_every_byte) {
  Buf b = small_image();
  for (size_t k = 0; k < b.n; k++) {
    TensorBundle out = {0};
    Tensor *keep = tensor_new_scalar_i32(1);
    bundle_add(&out, "kept", 4, keep);
    char err[BUNDLE_ERR_SIZE] = "";
    bool ok = bundle_read_mem(b.p, k, &out, err);
    ck_assert_msg(!ok, "a file cut at byte %zu was accepted", k);
    ck_assert_msg(err[0] != 0, "no message for a cut at byte %zu", k);
    ck_assert_msg(out.n == 1 && strcmp(out.names[0], "kept") == 0, "cut at %zu: bundle changed", k);
    if (k >= 16) ck_assert_msg(strstr(err, "truncat") != NULL, "cut at %zu: \"%s\"", k, err);
    bundle_free(&out);
  }
  free(b.p);
}
END_TEST

/* Every byte replaced by several values: no crash, no leak; a message when rejected. */
START_TEST(test_mutated_every_byte) {
  Buf b = small_image();
  static const uint8_t values[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
  int rejected = 0, accepted = 0;
  for (size_t k = 0; k < b.n; k++)
    for (size_t v = 0; v < sizeof values; v++) {
      uint8_t saved = b.p[k];
      if (saved == values[v]) continue;
      b.p[k] = values[v];
      TensorBundle out = {0};
      char err[BUNDLE_ERR_SIZE] = "";
      if (bundle_read_mem(b.p, b.n, &out, err)) {
        accepted++;
      } else {
        rejected++;
        ck_assert_msg(err[0] != 0 && out.n == 0, "byte %zu = %02x: no message", k, values[v]);
      }
      bundle_free(&out);
      b.p[k] = saved;
    }
  ck_assert_int_gt(rejected, 100);
  ck_assert_int_gt(accepted, 10); /* element data has no checksum in this format */
  free(b.p);
}
END_TEST

/* A header that claims a huge shape, or an absurd name count, is rejected
 * from the bytes present, before any allocation. */
START_TEST(test_corrupt_fields) {
  Buf b = {0};
  put64(&b, PARAMS_MAGIC);
  put64(&b, 0);
  put64(&b, UINT64_C(1) << 62);
  assert_rejects(&b, "names need at least");
  b.n = 16;
  put64(&b, 1);
  put64(&b, UINT64_C(1) << 50);
  put(&b, "x", 1);
  assert_rejects(&b, "name #1 is 1125899906842624 bytes long");
  b.n = 24;
  put64(&b, 1);
  put(&b, "x", 1);
  put64(&b, 1);
  size_t rec = b.n;
  int64_t huge[2] = {INT64_C(1) << 30, INT64_C(1) << 30};
  put_record(&b, DT_F32, 2, huge, NULL, INT64_C(1) << 62);
  assert_rejects(&b, "needs 4611686018427387904 bytes, 0 left");
  b.n = rec;
  int64_t neg[1] = {-2};
  put_record(&b, DT_F32, 1, neg, NULL, 0);
  assert_rejects(&b, "negative extent -2");
  b.n = rec;
  int64_t three[1] = {3};
  put_record(&b, DTYPE(DT_FLOAT, 32), 1, three, "123456789012", 11);
  assert_rejects(&b, "says it holds 11 data bytes, its shape needs 12");
  b.n = rec;
  put_record(&b, (DType){DT_FLOAT, 32, 2}, 1, three, "123456789012", 12);
  assert_rejects(&b, "2 lanes");
  b.n = rec;
  put_record(&b, DTYPE(DT_HANDLE, 64), 1, three, "123456789012345678901234", 24);
  assert_rejects(&b, "unsupported dtype (code 3, 64 bits");
  b.n = rec;
  put_record(&b, DT_F32, 1, three, "123456789012", 12);
  b.p[rec + 16] = 2; /* device type: CUDA */
  assert_rejects(&b, "device type 2");
  b.p[rec + 16] = 1;
  b.p[rec] ^= 1;
  assert_rejects(&b, "NDArray magic");
  b.p[rec] ^= 1;
  put(&b, "!", 1);
  assert_rejects(&b, "1 unexpected bytes after the last tensor");
  b.n--;
  b.p[16] = 2; /* two names, one tensor: the name list swallows the count */
  assert_rejects(&b, "");
  free(b.p);
}
END_TEST

START_TEST(test_duplicate_names) {
  Buf b = {0};
  put64(&b, PARAMS_MAGIC);
  put64(&b, 0);
  put64(&b, 3);
  const char *names[3] = {"a", "b", "a"};
  for (int i = 0; i < 3; i++) {
    put64(&b, 1);
    put(&b, names[i], 1);
  }
  put64(&b, 3);
  for (int i = 0; i < 3; i++) put_record(&b, DT_I8, 0, NULL, "\x01", 1);
  assert_rejects(&b, "the name 'a' occurs twice");
  free(b.p);
}
END_TEST

/* With allocations failing one after another, reading gives a clean error or
 * stops with relayc's out-of-memory exit (3); it never crashes. */
START_TEST(test_alloc_failures) {
  Buf b = small_image();
  int clean = 0, oom_exits = 0, successes = 0;
  for (long k = 0; k < 24; k++) {
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      freopen("/dev/null", "w", stderr);
      TensorBundle out = {0};
      char err[BUNDLE_ERR_SIZE] = "";
      mem_fail_after(k);
      bool ok = bundle_read_mem(b.p, b.n, &out, err);
      mem_fail_after(-1);
      if (!ok && out.n == 0 && strstr(err, "memory")) _exit(10);
      if (ok && out.n == 3) _exit(11);
      _exit(12);
    }
    int st;
    waitpid(pid, &st, 0);
    ck_assert_msg(WIFEXITED(st), "k=%ld: killed by signal %d", k, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    int code = WEXITSTATUS(st);
    ck_assert_msg(code == 10 || code == 11 || code == 3, "k=%ld: exit %d", k, code);
    clean += code == 10;
    oom_exits += code == 3;
    successes += code == 11;
  }
  ck_assert_int_gt(clean, 0);   /* tensor allocations fail as values */
  ck_assert_int_gt(successes, 0);
  (void)oom_exits;
  free(b.p);
}
END_TEST

START_TEST(test_write_errors) {
  TensorBundle b = {0};
  int64_t s[1] = {4};
  bundle_add(&b, "v", 1, pattern_tensor((DType){DT_FLOAT, 32, 4}, 1, s, 1));
  char err[BUNDLE_ERR_SIZE] = "";
  FILE *f = fopen("/dev/null", "wb");
  ck_assert(!params_write_stream(f, &b, err));
  ck_assert_ptr_nonnull(strstr(err, "'v': dtype float32x4 cannot be written"));
  fclose(f);
  bundle_free(&b);
  bundle_add(&b, "w", 1, pattern_tensor(DT_F32, 1, s, 1));
  char path[128];
  snprintf(path, sizeof path, "%s/no/such/dir/x.params", tmpdir);
  ck_assert(!bundle_write_file(path, &b, err));
  ck_assert_ptr_nonnull(strstr(err, "cannot write"));
  ck_assert(!bundle_write_file("x.bin", &b, err));
  ck_assert_ptr_nonnull(strstr(err, "use .params or .npz"));
  FILE *full = fopen("/dev/full", "wb");
  if (full) { /* a full disk: the write error is reported */
    setvbuf(full, NULL, _IONBF, 0);
    ck_assert(!params_write_stream(full, &b, err));
    ck_assert_ptr_nonnull(strstr(err, "write error"));
    fclose(full);
  }
  bundle_free(&b);
}
END_TEST

/* ---------------------------------------------------------------- .npz */

static void zip_le16(Buf *b, uint32_t v) { put16(b, (uint16_t)v); }

typedef struct ZipMember {
  const char *name;
  const uint8_t *data; /* the .npy image */
  size_t len;
  bool deflate;
  bool zip64_extra; /* numpy-style ZIP64 extra in the local header, and in the directory */
} ZipMember;

/* A ZIP archive built here (not with runtime/npy.c's writer). */
static Buf make_zip(const ZipMember *ms, size_t n, const char *comment) {
  Buf z = {0}, cd = {0};
  for (size_t i = 0; i < n; i++) {
    const ZipMember *m = &ms[i];
    uint32_t crc = (uint32_t)crc32(0, m->data, (uInt)m->len);
    uint8_t *comp = NULL;
    size_t clen = m->len;
    if (m->deflate) {
      z_stream zs = {0};
      ck_assert_int_eq(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
      clen = deflateBound(&zs, (uLong)m->len);
      comp = malloc(clen);
      zs.next_in = (Bytef *)m->data;
      zs.avail_in = (uInt)m->len;
      zs.next_out = comp;
      zs.avail_out = (uInt)clen;
      ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
      clen = zs.total_out;
      deflateEnd(&zs);
    }
    uint32_t offset = (uint32_t)z.n;
    size_t nlen = strlen(m->name);
    put32(&z, 0x04034b50);
    zip_le16(&z, 45);
    zip_le16(&z, 0);
    zip_le16(&z, m->deflate ? 8 : 0);
    zip_le16(&z, 0);
    zip_le16(&z, 0x21);
    put32(&z, crc);
    put32(&z, m->zip64_extra ? 0xFFFFFFFFu : (uint32_t)clen);
    put32(&z, m->zip64_extra ? 0xFFFFFFFFu : (uint32_t)m->len);
    zip_le16(&z, (uint32_t)nlen);
    zip_le16(&z, m->zip64_extra ? 20 : 0);
    put(&z, m->name, nlen);
    if (m->zip64_extra) {
      zip_le16(&z, 1);
      zip_le16(&z, 16);
      put64(&z, m->len);
      put64(&z, clen);
    }
    put(&z, m->deflate ? comp : m->data, clen);
    /* directory record; with zip64_extra its sizes and offset come from the extra field */
    put32(&cd, 0x02014b50);
    zip_le16(&cd, 45);
    zip_le16(&cd, 45);
    zip_le16(&cd, 0);
    zip_le16(&cd, m->deflate ? 8 : 0);
    zip_le16(&cd, 0);
    zip_le16(&cd, 0x21);
    put32(&cd, crc);
    put32(&cd, m->zip64_extra ? 0xFFFFFFFFu : (uint32_t)clen);
    put32(&cd, m->zip64_extra ? 0xFFFFFFFFu : (uint32_t)m->len);
    zip_le16(&cd, (uint32_t)nlen);
    zip_le16(&cd, m->zip64_extra ? 28 : 0);
    zip_le16(&cd, 0);
    zip_le16(&cd, 0);
    zip_le16(&cd, 0);
    put32(&cd, 0);
    put32(&cd, m->zip64_extra ? 0xFFFFFFFFu : offset);
    put(&cd, m->name, nlen);
    if (m->zip64_extra) {
      zip_le16(&cd, 1);
      zip_le16(&cd, 24);
      put64(&cd, m->len);
      put64(&cd, clen);
      put64(&cd, offset);
    }
    free(comp);
  }
  uint32_t cd_at = (uint32_t)z.n;
  put(&z, cd.p, cd.n);
  size_t clen = comment ? strlen(comment) : 0;
  put32(&z, 0x06054b50);
  zip_le16(&z, 0);
  zip_le16(&z, 0);
  zip_le16(&z, (uint32_t)n);
  zip_le16(&z, (uint32_t)n);
  put32(&z, (uint32_t)cd.n);
  put32(&z, cd_at);
  zip_le16(&z, (uint32_t)clen);
  put(&z, comment, clen);
  free(cd.p);
  return z;
}

static uint8_t *npy_image(const Tensor *t, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  char err[NPY_ERR_SIZE];
  ck_assert_msg(npy_write_stream(f, t, err), "%s", err);
  fclose(f);
  return (uint8_t *)buf;
}

START_TEST(test_npz_members) {
  int64_t s[2] = {20, 30};
  Tensor *a = pattern_tensor(DT_F32, 2, s, 1), *c = pattern_tensor(DT_I64, 1, s, 2);
  size_t la, lc;
  uint8_t *ia = npy_image(a, &la), *ic = npy_image(c, &lc);
  for (int variant = 0; variant < 4; variant++) {
    ZipMember ms[2] = {{"alpha.npy", ia, la, variant & 1, variant & 2},
                       {"dir/gamma.npy", ic, lc, !(variant & 1), false}};
    Buf z = make_zip(ms, 2, variant == 3 ? "an archive comment" : NULL);
    TensorBundle out = {0};
    char err[BUNDLE_ERR_SIZE] = "";
    ck_assert_msg(bundle_read_mem(z.p, z.n, &out, err), "variant %d: %s", variant, err);
    ck_assert_uint_eq(out.n, 2);
    ck_assert_str_eq(out.names[0], "alpha");
    ck_assert_str_eq(out.names[1], "dir/gamma");
    ck_assert(memcmp(out.tensors[0]->data, a->data, (size_t)a->nbytes) == 0);
    ck_assert(memcmp(out.tensors[1]->data, c->data, (size_t)c->nbytes) == 0);
    bundle_free(&out);
    /* every prefix fails cleanly; every flipped byte too, or reads */
    for (size_t k = 0; k < z.n; k += 1 + (z.n > 4000) * 7) {
      ck_assert_msg(!bundle_read_mem(z.p, k, &out, err) && out.n == 0, "variant %d: cut at %zu", variant, k);
      ck_assert(err[0] != 0);
      z.p[k] ^= 0xFF;
      if (bundle_read_mem(z.p, z.n, &out, err)) bundle_free(&out);
      else ck_assert(out.n == 0 && err[0] != 0);
      z.p[k] ^= 0xFF;
    }
    free(z.p);
  }
  free(ia);
  free(ic);
  tensor_release(a);
  tensor_release(c);
}
END_TEST

START_TEST(test_npz_errors) {
  int64_t s[1] = {100};
  Tensor *a = pattern_tensor(DT_F32, 1, s, 3);
  size_t la;
  uint8_t *ia = npy_image(a, &la);
  /* a bad CRC */
  ZipMember m = {"a.npy", ia, la, false, false};
  Buf z = make_zip(&m, 1, NULL);
  z.p[14] ^= 1; /* local header's CRC is ignored; the directory's counts */
  TensorBundle out = {0};
  char err[BUNDLE_ERR_SIZE] = "";
  ck_assert(bundle_read_mem(z.p, z.n, &out, err));
  bundle_free(&out);
  size_t cd = z.n - 22 - 46 - 5;
  z.p[cd + 16] ^= 1;
  assert_rejects(&z, "member 'a.npy': CRC-32 mismatch");
  z.p[cd + 16] ^= 1;
  /* data corrupted */
  z.p[30 + 5 + 100] ^= 0x40;
  assert_rejects(&z, "CRC-32 mismatch");
  z.p[30 + 5 + 100] ^= 0x40;
  /* a method other than stored/deflate, encryption, a bomb */
  z.p[cd + 10] = 12;
  assert_rejects(&z, "compression method 12");
  z.p[cd + 10] = 0;
  z.p[cd + 8] = 1;
  assert_rejects(&z, "is encrypted");
  z.p[cd + 8] = 0;
  free(z.p);
  m.deflate = true;
  z = make_zip(&m, 1, NULL);
  cd = z.n - 22 - 46 - 5;
  uint32_t huge = 0x7FFFFFFF;
  memcpy(z.p + cd + 24, &huge, 4);
  assert_rejects(&z, "more than deflate can give");
  free(z.p);
  /* a member that is not .npy, a name with a NUL */
  ZipMember t = {"notes.txt", (const uint8_t *)"hello", 5, false, false};
  z = make_zip(&t, 1, NULL);
  assert_rejects(&z, "member 'notes.txt' is not a .npy array");
  free(z.p);
  /* the member's data is not an .npy image */
  ZipMember bad = {"x.npy", (const uint8_t *)"hello", 5, false, false};
  z = make_zip(&bad, 1, NULL);
  assert_rejects(&z, "member 'x.npy': ");
  free(z.p);
  /* two members with one name */
  ZipMember two[2] = {{"a.npy", ia, la, false, false}, {"a.npy", ia, la, true, false}};
  z = make_zip(two, 2, NULL);
  assert_rejects(&z, "the name 'a' occurs twice");
  free(z.p);
  /* no members at all: an empty bundle */
  z = make_zip(NULL, 0, NULL);
  ck_assert(bundle_read_mem(z.p, z.n, &out, err));
  ck_assert_uint_eq(out.n, 0);
  free(z.p);
  free(ia);
  tensor_release(a);
}
END_TEST

/* The .npz runtime/npy.c writes (tuple results, --save-params x.npz) reads back. */
START_TEST(test_npz_writer_reads_back) {
  int64_t s[3] = {2, 3, 4};
  Tensor *ts[2] = {pattern_tensor(DT_F16, 3, s, 4), pattern_tensor(DT_U8, 2, s, 5)};
  const char *names[2] = {"first", "second"};
  char *buf = NULL;
  size_t len;
  FILE *f = open_memstream(&buf, &len);
  char err[BUNDLE_ERR_SIZE];
  ck_assert(npz_write_stream(f, ts, names, 2, err));
  fclose(f);
  TensorBundle out = {0};
  ck_assert_msg(npz_read_mem(buf, len, &out, err), "%s", err);
  ck_assert_uint_eq(out.n, 2);
  ck_assert_str_eq(out.names[1], "second");
  ck_assert(memcmp(out.tensors[0]->data, ts[0]->data, (size_t)ts[0]->nbytes) == 0);
  ck_assert_int_eq(bundle_find(&out, "second"), 1);
  ck_assert_int_eq(bundle_find(&out, "third"), -1);
  bundle_free(&out);
  free(buf);
  tensor_release(ts[0]);
  tensor_release(ts[1]);
}
END_TEST

/* ------------------------------------------------------- formats, files */

START_TEST(test_formats) {
  ck_assert_int_eq(bundle_format_for_path("w.params"), BUNDLE_PARAMS);
  ck_assert_int_eq(bundle_format_for_path("dir.x/w.npz"), BUNDLE_NPZ);
  ck_assert_int_eq(bundle_format_for_path("w.npy"), BUNDLE_UNKNOWN);
  ck_assert_int_eq(bundle_format_for_path("params"), BUNDLE_UNKNOWN);
  uint64_t m = PARAMS_MAGIC;
  ck_assert_int_eq(bundle_format_of_bytes(&m, 8), BUNDLE_PARAMS);
  ck_assert_int_eq(bundle_format_of_bytes("PK\3\4", 4), BUNDLE_NPZ);
  ck_assert_int_eq(bundle_format_of_bytes("PK\5\6", 4), BUNDLE_NPZ);
  ck_assert_int_eq(bundle_format_of_bytes("\x93NUMPY", 6), BUNDLE_UNKNOWN);
  Buf npy = {0};
  put(&npy, "\x93NUMPY\x01\x00", 8);
  assert_rejects(&npy, "a single .npy array");
  npy.n = 0;
  assert_rejects(&npy, "empty file");
  free(npy.p);
}
END_TEST

START_TEST(test_files_and_pipes) {
  Buf b = small_image();
  char path[128], fifo[128];
  snprintf(path, sizeof path, "%s/w.params", tmpdir);
  FILE *f = fopen(path, "wb");
  fwrite(b.p, 1, b.n, f);
  fclose(f);
  TensorBundle out = {0};
  char err[BUNDLE_ERR_SIZE] = "";
  ck_assert_msg(bundle_read_file(path, &out, err), "%s", err);
  ck_assert_uint_eq(out.n, 3);
  /* written back through the file writer: the same bytes */
  snprintf(fifo, sizeof fifo, "%s/again.params", tmpdir);
  ck_assert_msg(bundle_write_file(fifo, &out, err), "%s", err);
  bundle_free(&out);
  ck_assert_msg(bundle_read_file(fifo, &out, err), "%s", err);
  bundle_free(&out);
  /* through a FIFO (read whole, not mapped) */
  snprintf(fifo, sizeof fifo, "%s/pipe", tmpdir);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    FILE *w = fopen(fifo, "wb");
    fwrite(b.p, 1, b.n, w);
    fclose(w);
    _exit(0);
  }
  ck_assert_msg(bundle_read_file(fifo, &out, err), "%s", err);
  ck_assert_uint_eq(out.n, 3);
  waitpid(pid, NULL, 0);
  bundle_free(&out);
  ck_assert(!bundle_read_file("/nonexistent/w.params", &out, err));
  ck_assert_ptr_nonnull(strstr(err, "cannot open /nonexistent/w.params"));
  ck_assert(!bundle_read_file(tmpdir, &out, err));
  ck_assert_ptr_nonnull(strstr(err, "is a directory"));
  snprintf(path, sizeof path, "%s/empty", tmpdir);
  fclose(fopen(path, "wb"));
  ck_assert(!bundle_read_file(path, &out, err));
  ck_assert_ptr_nonnull(strstr(err, "empty file"));
  free(b.p);
}
END_TEST

static Suite *params_suite(void) {
  Suite *s = suite_create("params");
  TCase *p = tcase_create("params");
  tcase_set_timeout(p, 120);
  tcase_add_test(p, test_reads_hand_made_file);
  tcase_add_test(p, test_round_trip_all_dtypes);
  tcase_add_test(p, test_bool_normalised);
  tcase_add_test(p, test_truncated_every_byte);
  tcase_add_test(p, test_mutated_every_byte);
  tcase_add_test(p, test_corrupt_fields);
  tcase_add_test(p, test_duplicate_names);
  tcase_add_test(p, test_alloc_failures);
  tcase_add_test(p, test_write_errors);
  suite_add_tcase(s, p);
  TCase *z = tcase_create("npz");
  tcase_set_timeout(z, 120);
  tcase_add_test(z, test_npz_members);
  tcase_add_test(z, test_npz_errors);
  tcase_add_test(z, test_npz_writer_reads_back);
  suite_add_tcase(s, z);
  TCase *b = tcase_create("bundle");
  tcase_add_test(b, test_formats);
  tcase_add_test(b, test_files_and_pipes);
  suite_add_tcase(s, b);
  return s;
}

static void remove_tmpdir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "check_params: could not remove %s\n", tmpdir);
}

int main(void) {
  stack_guard_init(8u << 20);
  strcpy(tmpdir, "/tmp/relayc_paramsXXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return EXIT_FAILURE;
  }
  signal(SIGPIPE, SIG_IGN);
  int status = unit_run(params_suite());
  remove_tmpdir();
  return status;
}
