/* tests/unit/check_npy.c — runtime/npy.c: .npy round trips for every dtype
 * and ranks 0..4, files written by numpy (fixtures generated with
 * /usr/bin/python3 + numpy when available, skipped otherwise), byte-identical
 * output, header variants, corrupt and truncated input (cut at every byte,
 * mutated bytes), pipes, allocation failures, and .npz archives that
 * numpy.load must read. */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/diag.h"
#include "ir/mem.h"
#include "runtime/npy.h"
#include "runtime/tensor.h"
#include "tests/unit/unit_run.h"

static char tmpdir[64];
static int numpy_ok;

/* ------------------------------------------------------------- helpers */

typedef struct DtypeCase {
  const char *name; /* numpy dtype name */
  DType dt;
} DtypeCase;

static const DtypeCase dtypes[] = {
    {"bool", DTYPE(DT_UINT, 1)},    {"int8", DTYPE(DT_INT, 8)},      {"int16", DTYPE(DT_INT, 16)},
    {"int32", DTYPE(DT_INT, 32)},   {"int64", DTYPE(DT_INT, 64)},    {"uint8", DTYPE(DT_UINT, 8)},
    {"uint16", DTYPE(DT_UINT, 16)}, {"uint32", DTYPE(DT_UINT, 32)},  {"uint64", DTYPE(DT_UINT, 64)},
    {"float16", DTYPE(DT_FLOAT, 16)}, {"float32", DTYPE(DT_FLOAT, 32)},
    {"float64", DTYPE(DT_FLOAT, 64)},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

static const int64_t shapes[5][4] = {{0}, {3}, {2, 3}, {2, 1, 3}, {2, 3, 1, 2}};

/* The pattern both this file and the fixture script use: element i is
 * (7i mod 11) - 5, times 0.25 for floats, unsigned without the -5, bools
 * true when i is a multiple of 3. */
static double pattern(DType dt, int64_t i) {
  if (dtype_is_bool(dt)) return i % 3 == 0;
  double v = (double)((i * 7) % 11);
  if (dt.code == DT_UINT) return v;
  v -= 5;
  return dtype_is_float(dt) ? v * 0.25 : v;
}

static Tensor *make_pattern(DType dt, int32_t ndim, const int64_t *shape) {
  Tensor *t = tensor_new(dt, ndim, shape);
  ck_assert_ptr_nonnull(t);
  for (int64_t i = 0; i < t->numel; i++) tensor_set_f64(t, i, pattern(dt, i));
  return t;
}

static char *write_mem(const Tensor *t, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  char err[NPY_ERR_SIZE];
  ck_assert_msg(npy_write_stream(f, t, err), "%s", err);
  fclose(f);
  return buf;
}

static uint8_t *read_whole(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n + 1);
  ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* Runs a Python script with /usr/bin/python3 and the temp dir as argv[1]. */
static int run_python(const char *script) {
  char path[128], cmd[512];
  snprintf(path, sizeof path, "%s/script.py", tmpdir);
  FILE *f = fopen(path, "w");
  fputs(script, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", path, tmpdir);
  return system(cmd);
}

/* An .npy image with the given header dict text (padded like numpy) and data. */
static uint8_t *make_image(int major, const char *dict, const void *data, size_t ndata,
                           size_t *len) {
  size_t dl = strlen(dict), pre = major == 1 ? 10 : 12;
  size_t hl = dl + 1;
  size_t pad = (64 - (pre + hl) % 64) % 64;
  size_t total = pre + hl + pad + ndata;
  uint8_t *b = malloc(total);
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (uint8_t)major;
  b[7] = 0;
  uint32_t field = (uint32_t)(hl + pad);
  for (size_t i = 0; i < pre - 8; i++) b[8 + i] = (uint8_t)(field >> (8 * i));
  memcpy(b + pre, dict, dl);
  memset(b + pre + dl, ' ', pad);
  b[pre + dl + pad] = '\n';
  if (ndata) memcpy(b + pre + hl + pad, data, ndata);
  *len = total;
  return b;
}

static void assert_rejects(const void *img, size_t len, const char *want) {
  char err[NPY_ERR_SIZE] = "";
  Tensor *t = npy_read_mem(img, len, err);
  if (t) tensor_release(t);
  ck_assert_msg(t == NULL, "accepted an invalid image (expected: %s)", want);
  ck_assert_msg(strstr(err, want) != NULL, "message \"%s\" lacks \"%s\"", err, want);
}

static void assert_dict_rejected(const char *dict, size_t ndata, const char *want) {
  uint8_t data[64] = {0};
  size_t len;
  uint8_t *img = make_image(1, dict, data, ndata, &len);
  assert_rejects(img, len, want);
  free(img);
}

static Tensor *read_dict(const char *dict, const void *data, size_t ndata) {
  size_t len;
  char err[NPY_ERR_SIZE] = "";
  uint8_t *img = make_image(1, dict, data, ndata, &len);
  Tensor *t = npy_read_mem(img, len, err);
  ck_assert_msg(t != NULL, "rejected %s: %s", dict, err);
  free(img);
  return t;
}

/* ------------------------------------------------------- round trips */

START_TEST(test_round_trip_all_dtypes) {
  for (size_t d = 0; d < NDTYPES; d++) {
    for (int32_t rank = 0; rank <= 4; rank++) {
      Tensor *t = make_pattern(dtypes[d].dt, rank, shapes[rank]);
      size_t len;
      char *img = write_mem(t, &len);
      size_t hlen = len - (size_t)t->nbytes;
      ck_assert_uint_eq(hlen % 64, 0);
      ck_assert_int_eq(img[hlen - 1], '\n');
      char err[NPY_ERR_SIZE];
      Tensor *u = npy_read_mem(img, len, err);
      ck_assert_msg(u != NULL, "%s rank %d: %s", dtypes[d].name, rank, err);
      ck_assert_msg(tensor_equal(t, u), "%s rank %d differs", dtypes[d].name, rank);
      free(img);
      tensor_release(t);
      tensor_release(u);
    }
  }
}
END_TEST

START_TEST(test_round_trip_file_and_empty) {
  char path[128];
  snprintf(path, sizeof path, "%s/rt.npy", tmpdir);
  int64_t shape[2] = {0, 3};
  Tensor *e = tensor_new(DT_F32, 2, shape);
  char err[NPY_ERR_SIZE];
  ck_assert_msg(npy_write_file(path, e, err), "%s", err);
  Tensor *u = npy_read_file(path, err);
  ck_assert_msg(u != NULL, "%s", err);
  ck_assert(tensor_same_type(e, u));
  tensor_release(u);
  tensor_release(e);
  int64_t big[1] = {100000};
  Tensor *t = make_pattern(DT_F64, 1, big);
  ck_assert(npy_write_file(path, t, err));
  u = npy_read_file(path, err);
  ck_assert(tensor_equal(t, u));
  tensor_release(u);
  tensor_release(t);
}
END_TEST

/* The exact bytes numpy.save writes for a float32 (2, 3) array's header. */
START_TEST(test_header_bytes) {
  int64_t shape[2] = {2, 3};
  Tensor *t = tensor_new_zeros(DT_F32, 2, shape);
  char buf[256], err[NPY_ERR_SIZE];
  size_t n = npy_header(t, buf, sizeof buf, err);
  static const char want[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (2, 3), }";
  ck_assert_uint_eq(n, 128);
  ck_assert_mem_eq(buf, want, sizeof want - 1);
  for (size_t i = sizeof want - 1; i < 127; i++) ck_assert_int_eq(buf[i], ' ');
  ck_assert_int_eq(buf[127], '\n');
  ck_assert_uint_eq(npy_header(t, NULL, 0, err), 128); /* measuring */
  tensor_release(t);
  Tensor *s = tensor_new_scalar_bool(true);
  n = npy_header(s, buf, sizeof buf, err);
  ck_assert_uint_eq(n, 128);
  ck_assert(memmem(buf, n, "'descr': '|b1', 'fortran_order': False, 'shape': (), }", 53) != NULL);
  tensor_release(s);
  int64_t one[1] = {3};
  Tensor *v = tensor_new_zeros(DT_U8, 1, one);
  n = npy_header(v, buf, sizeof buf, err);
  ck_assert(memmem(buf, n, "'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", 56) != NULL);
  tensor_release(v);
}
END_TEST

START_TEST(test_write_unsupported) {
  char err[NPY_ERR_SIZE];
  Tensor *t = tensor_new_scalar_float(DTYPE(DT_BFLOAT, 16), 1.0);
  size_t len = 0;
  char *buf = NULL;
  FILE *f = open_memstream(&buf, &len);
  ck_assert(!npy_write_stream(f, t, err));
  fclose(f);
  free(buf);
  ck_assert_ptr_nonnull(strstr(err, "bfloat16 has no .npy equivalent"));
  tensor_release(t);
  int64_t shape[1] = {2};
  t = tensor_new_zeros((DType){DT_FLOAT, 32, 4}, 1, shape);
  ck_assert_uint_eq(npy_header(t, NULL, 0, err), 0);
  ck_assert_ptr_nonnull(strstr(err, "float32x4"));
  tensor_release(t);
  t = tensor_new_scalar_f32(1);
  ck_assert(!npy_write_file("/nonexistent-dir/x.npy", t, err));
  ck_assert_ptr_nonnull(strstr(err, "cannot write /nonexistent-dir/x.npy"));
  tensor_release(t);
}
END_TEST

/* ------------------------------------------------------- numpy files */

static const char fixture_script[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1]\n"
    "names = ['bool','int8','int16','int32','int64','uint8','uint16','uint32','uint64',\n"
    "         'float16','float32','float64']\n"
    "shapes = [(), (3,), (2, 3), (2, 1, 3), (2, 3, 1, 2)]\n"
    "def pattern(name, shape):\n"
    "    n = int(np.prod(shape)); i = np.arange(n, dtype=np.int64)\n"
    "    if name == 'bool': return (i % 3 == 0).reshape(shape)\n"
    "    v = (i * 7) % 11\n"
    "    if name.startswith('uint'): return v.astype(name).reshape(shape)\n"
    "    v = v - 5\n"
    "    if name.startswith('float'): return (v * 0.25).astype(name).reshape(shape)\n"
    "    return v.astype(name).reshape(shape)\n"
    "for name in names:\n"
    "    for r, s in enumerate(shapes):\n"
    "        a = pattern(name, s)\n"
    "        np.save('%s/np_%s_%d.npy' % (d, name, r), a)\n"
    "        np.save('%s/be_%s_%d.npy' % (d, name, r), a.astype(a.dtype.newbyteorder('>')))\n"
    "        np.save('%s/fo_%s_%d.npy' % (d, name, r), np.asfortranarray(a))\n"
    "        for v in (2, 3):\n"
    "            with open('%s/v%d_%s_%d.npy' % (d, v, name, r), 'wb') as f:\n"
    "                np.lib.format.write_array(f, a, version=(v, 0))\n"
    "np.save(d + '/empty.npy', np.zeros((0, 3), np.float32))\n"
    "np.save(d + '/big.npy', np.arange(1 << 16, dtype=np.int32).reshape(256, 256))\n";

START_TEST(test_reads_numpy_files) {
  if (!numpy_ok) {
    fprintf(stderr, "check_npy: numpy not available, skipping numpy fixtures\n");
    return;
  }
  ck_assert_int_eq(run_python(fixture_script), 0);
  static const char *prefixes[] = {"np", "be", "fo", "v2", "v3"};
  char path[256], err[NPY_ERR_SIZE];
  for (size_t d = 0; d < NDTYPES; d++) {
    for (int32_t rank = 0; rank <= 4; rank++) {
      Tensor *want = make_pattern(dtypes[d].dt, rank, shapes[rank]);
      for (size_t p = 0; p < 5; p++) {
        snprintf(path, sizeof path, "%s/%s_%s_%d.npy", tmpdir, prefixes[p], dtypes[d].name, rank);
        Tensor *got = npy_read_file(path, err);
        ck_assert_msg(got != NULL, "%s: %s", path, err);
        /* (numpy.asfortranarray makes a 0-d array 1-d: compare the elements) */
        ck_assert_msg(dtype_eq(want->dtype, got->dtype) && want->numel == got->numel &&
                          memcmp(want->data, got->data, (size_t)want->nbytes) == 0 &&
                          (p == 2 || tensor_same_type(want, got)),
                      "%s: wrong contents", path);
        tensor_release(got);
      }
      /* and what we write is byte-identical to numpy.save */
      snprintf(path, sizeof path, "%s/np_%s_%d.npy", tmpdir, dtypes[d].name, rank);
      size_t nlen, olen;
      uint8_t *theirs = read_whole(path, &nlen);
      char *ours = write_mem(want, &olen);
      ck_assert_msg(nlen == olen && memcmp(theirs, ours, nlen) == 0, "%s: bytes differ", path);
      free(theirs);
      free(ours);
      tensor_release(want);
    }
  }
  snprintf(path, sizeof path, "%s/empty.npy", tmpdir);
  Tensor *e = npy_read_file(path, err);
  ck_assert_msg(e != NULL, "%s", err);
  ck_assert_int_eq(e->ndim, 2);
  ck_assert_int_eq(e->shape[0], 0);
  ck_assert_int_eq(e->shape[1], 3);
  tensor_release(e);
  snprintf(path, sizeof path, "%s/big.npy", tmpdir);
  Tensor *b = npy_read_file(path, err);
  ck_assert_int_eq(tensor_get_i64(b, 65535), 65535);
  tensor_release(b);
}
END_TEST

START_TEST(test_npz_numpy_reads) {
  int64_t s2[2] = {2, 3}, s1[1] = {4};
  Tensor *ts[3] = {make_pattern(DT_F32, 2, s2), make_pattern(DT_I64, 1, s1),
                   tensor_new_scalar_bool(true)};
  char path[128], path2[128], err[NPY_ERR_SIZE];
  snprintf(path, sizeof path, "%s/out.npz", tmpdir);
  snprintf(path2, sizeof path2, "%s/named.npz", tmpdir);
  ck_assert_msg(npz_write_file(path, ts, NULL, 3, err), "%s", err);
  const char *names[2] = {"logits", "idx"};
  ck_assert_msg(npz_write_file(path2, ts, names, 2, err), "%s", err);
  /* structure: local header first, end-of-directory record last */
  size_t len;
  uint8_t *z = read_whole(path, &len);
  ck_assert_mem_eq(z, "PK\x03\x04", 4);
  ck_assert_mem_eq(z + 30, "arr_0.npy", 9);
  ck_assert_mem_eq(z + len - 22, "PK\x05\x06", 4);
  ck_assert_int_eq(z[len - 22 + 10], 3); /* entries */
  free(z);
  for (int i = 0; i < 3; i++) tensor_release(ts[i]);
  if (!numpy_ok) {
    fprintf(stderr, "check_npy: numpy not available, skipping numpy.load of .npz\n");
    return;
  }
  int rc = run_python("import sys, zipfile, numpy as np\n"
                      "d = sys.argv[1]\n"
                      "assert zipfile.ZipFile(d + '/out.npz').testzip() is None\n"
                      "z = np.load(d + '/out.npz')\n"
                      "assert sorted(z.files) == ['arr_0', 'arr_1', 'arr_2'], z.files\n"
                      "i = np.arange(6)\n"
                      "assert (z['arr_0'] == (((i * 7) % 11 - 5) * 0.25).reshape(2, 3)).all()\n"
                      "assert z['arr_0'].dtype == np.float32\n"
                      "assert (z['arr_1'] == (np.arange(4) * 7) % 11 - 5).all()\n"
                      "assert z['arr_1'].dtype == np.int64\n"
                      "assert z['arr_2'].dtype == np.bool_ and z['arr_2'].shape == ()\n"
                      "assert bool(z['arr_2'])\n"
                      "n = np.load(d + '/named.npz')\n"
                      "assert sorted(n.files) == ['idx', 'logits']\n"
                      "assert n['idx'].shape == (4,)\n");
  ck_assert_int_eq(rc, 0);
}
END_TEST

START_TEST(test_crc32) {
  ck_assert_uint_eq(npy_crc32(0, "123456789", 9), 0xcbf43926u);
  ck_assert_uint_eq(npy_crc32(npy_crc32(0, "12345", 5), "6789", 4), 0xcbf43926u);
  ck_assert_uint_eq(npy_crc32(0, "", 0), 0);
}
END_TEST

/* ---------------------------------------------------- header variants */

START_TEST(test_header_variants) {
  float f[6] = {1, 2, 3, 4, 5, 6};
  const char *ok[] = {
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}",
      "{'shape': (2, 3), 'descr': '<f4', 'fortran_order': False}",
      "{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",
      "{'descr': '=f4', 'fortran_order': False, 'shape': (2, 3), }",
      "{'descr': '|f4', 'fortran_order': False, 'shape': (2, 3), }",
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    Tensor *t = read_dict(ok[i], f, sizeof f);
    ck_assert_int_eq(t->ndim, 2);
    ck_assert(tensor_get_f64(t, 5) == 6.0);
    tensor_release(t);
  }
  /* trailing bytes after the data are ignored, as numpy does */
  float g[7] = {1, 2, 3, 4, 5, 6, 7};
  Tensor *t = read_dict(ok[0], g, sizeof g);
  ck_assert_int_eq(tensor_numel(t), 6);
  tensor_release(t);
  /* bool bytes other than 0/1 normalise to 1 */
  uint8_t b[3] = {0, 2, 255};
  t = read_dict("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b, 3);
  ck_assert_int_eq(((uint8_t *)t->data)[1], 1);
  ck_assert_int_eq(((uint8_t *)t->data)[2], 1);
  ck_assert_int_eq(((uint8_t *)t->data)[0], 0);
  tensor_release(t);
  /* big-endian, byteswapped */
  uint8_t be[8] = {0, 0, 1, 2, 0xff, 0xff, 0xff, 0xfe};
  t = read_dict("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be, 8);
  ck_assert_int_eq(tensor_get_i64(t, 0), 258);
  ck_assert_int_eq(tensor_get_i64(t, 1), -2);
  tensor_release(t);
  /* a one-byte type with a byte-order mark */
  int8_t i8[2] = {-1, 5};
  t = read_dict("{'descr': '<i1', 'fortran_order': False, 'shape': (2,), }", i8, 2);
  ck_assert_int_eq(tensor_get_i64(t, 0), -1);
  tensor_release(t);
  /* version 2.0 and 3.0 headers */
  size_t len;
  uint8_t *img = make_image(2, ok[0], f, sizeof f, &len);
  char err[NPY_ERR_SIZE];
  t = npy_read_mem(img, len, err);
  ck_assert_msg(t != NULL, "%s", err);
  tensor_release(t);
  img[6] = 3;
  t = npy_read_mem(img, len, err);
  ck_assert_msg(t != NULL, "%s", err);
  tensor_release(t);
  free(img);
}
END_TEST

START_TEST(test_fortran_order) {
  /* shape (2, 3, 4): Fortran element (i, j, k) is at i + 2j + 6k */
  int32_t data[24];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) data[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
  Tensor *t = read_dict("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", data,
                        sizeof data);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++)
        ck_assert_int_eq(tensor_get_i64(t, i * 12 + j * 4 + k), 100 * i + 10 * j + k);
  tensor_release(t);
  /* rank 1 and empty Fortran arrays are the same as C ones */
  t = read_dict("{'descr': '<i4', 'fortran_order': True, 'shape': (3,), }", data, 12);
  ck_assert_int_eq(tensor_get_i64(t, 2), data[2]);
  tensor_release(t);
  t = read_dict("{'descr': '<i4', 'fortran_order': True, 'shape': (3, 0), }", data, 0);
  ck_assert_int_eq(tensor_numel(t), 0);
  tensor_release(t);
}
END_TEST

/* ------------------------------------------------------- bad input */

START_TEST(test_corrupt_headers) {
  assert_rejects("", 0, "bad magic");
  assert_rejects("\x93NUMP", 5, "bad magic");
  assert_rejects("PK\x03\x04 not npy at all", 20, "bad magic");
  assert_rejects("\x93NUMPY\x04\x00\x10\x00", 10, "unsupported .npy format version 4.0");
  assert_rejects("\x93NUMPY\x01\x01\x10\x00", 10, "version 1.1");
  assert_rejects("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12, "header length");
  assert_rejects("\x93NUMPY\x01\x00\x40\x00{'descr'", 17, "truncated .npy header");
  assert_dict_rejected("['descr', '<f4']", 0, "not a dict");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False}", 0, "missing key 'shape'");
  assert_dict_rejected("{'fortran_order': False, 'shape': ()}", 0, "missing key 'descr'");
  assert_dict_rejected("{'descr': '<f4', 'shape': ()}", 0, "missing key 'fortran_order'");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", 4,
                       "unexpected key 'x'");
  assert_dict_rejected("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4,
                       "duplicate key 'descr'");
  assert_dict_rejected("{'descr': '<c8', 'fortran_order': False, 'shape': ()}", 8,
                       "unsupported .npy dtype '<c8'");
  assert_dict_rejected("{'descr': '|O', 'fortran_order': False, 'shape': ()}", 8,
                       "unsupported .npy dtype '|O'");
  assert_dict_rejected("{'descr': '<U5', 'fortran_order': False, 'shape': ()}", 20,
                       "unsupported .npy dtype");
  assert_dict_rejected("{'descr': '<f3', 'fortran_order': False, 'shape': ()}", 8,
                       "unsupported .npy dtype");
  assert_dict_rejected("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}", 8,
                       "structured arrays");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", 4,
                       "must be True or False");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", 8,
                       "expected a tuple for 'shape'");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 8,
                       "negative dimension");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", 8,
                       "expected ',' or ')'");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
                       8, "dimension too large");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", 8,
                       "text after the dict");
  assert_dict_rejected("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", 8,
                       "expected ',' or '}'");
  assert_dict_rejected("{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}", 8, "malformed");
  /* absurd shapes fail on size before anything is allocated */
  assert_dict_rejected("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4)}",
                       8, "too many elements");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 1000000)}",
                       8, "truncated .npy data (8 of 400000000000 bytes)");
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000)}",
                       8, "exceed the 1099511627776-byte tensor limit");
  char many[512] = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; i++) strcat(many, "1,");
  strcat(many, ")}");
  assert_dict_rejected(many, 4, "more than 64 dimensions");
  /* short data */
  assert_dict_rejected("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 20,
                       "truncated .npy data (20 of 24 bytes)");
}
END_TEST

/* Cutting a valid image at every byte is always a clean error. */
static void check_every_prefix(const uint8_t *img, size_t len) {
  char err[NPY_ERR_SIZE];
  for (size_t n = 0; n < len; n++) {
    err[0] = 0;
    Tensor *t = npy_read_mem(img, n, err);
    if (t) tensor_release(t);
    ck_assert_msg(t == NULL, "a %zu-byte prefix of a %zu-byte file was accepted", n, len);
    ck_assert_msg(err[0] != 0, "no message for a %zu-byte prefix", n);
  }
  Tensor *t = npy_read_mem(img, len, err);
  ck_assert_msg(t != NULL, "%s", err);
  tensor_release(t);
}

START_TEST(test_truncated_every_byte) {
  int64_t s2[2] = {2, 3};
  Tensor *ts[4] = {make_pattern(DT_F32, 2, s2), tensor_new_scalar_i64(7),
                   make_pattern(DT_BOOL_T, 2, s2), make_pattern(DT_F16, 2, s2)};
  for (int i = 0; i < 4; i++) {
    size_t len;
    char *img = write_mem(ts[i], &len);
    check_every_prefix((uint8_t *)img, len);
    free(img);
    tensor_release(ts[i]);
  }
  float f[6] = {0};
  size_t len;
  uint8_t *img = make_image(2, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}", f,
                            sizeof f, &len);
  check_every_prefix(img, len);
  free(img);
}
END_TEST

/* Overwriting any header byte with tricky values never crashes or leaks. */
START_TEST(test_mutated_bytes) {
  int64_t s2[2] = {2, 3};
  Tensor *t = make_pattern(DT_F32, 2, s2);
  size_t len;
  char *img = write_mem(t, &len);
  static const uint8_t vals[] = {0, 0xff, '(', ')', '{', '}', '\'', '"', ',', ':', '9', ' ', '-',
                                 'L', '>', 0x80};
  char err[NPY_ERR_SIZE];
  for (size_t pos = 0; pos < 128; pos++) {
    char saved = img[pos];
    for (size_t v = 0; v < sizeof vals; v++) {
      img[pos] = (char)vals[v];
      Tensor *u = npy_read_mem(img, len, err);
      tensor_release(u);
    }
    img[pos] = saved;
  }
  free(img);
  tensor_release(t);
}
END_TEST

START_TEST(test_alloc_failures) {
  int64_t s2[2] = {4, 5};
  Tensor *t = make_pattern(DT_F64, 2, s2);
  size_t len;
  char *img = write_mem(t, &len);
  char err[NPY_ERR_SIZE];
  for (long k = 0; k < 6; k++) {
    err[0] = 0;
    mem_fail_after(k);
    Tensor *u = npy_read_mem(img, len, err);
    mem_fail_after(-1);
    if (u) {
      ck_assert(tensor_equal(t, u));
      tensor_release(u);
    } else {
      ck_assert_msg(strstr(err, "memory") != NULL, "k=%ld: %s", k, err);
    }
  }
  free(img);
  tensor_release(t);
}
END_TEST

/* ----------------------------------------------------- files and pipes */

START_TEST(test_file_errors) {
  char err[NPY_ERR_SIZE];
  ck_assert_ptr_null(npy_read_file("/nonexistent/x.npy", err));
  ck_assert_ptr_nonnull(strstr(err, "cannot open /nonexistent/x.npy"));
  ck_assert_ptr_null(npy_read_file(tmpdir, err));
  ck_assert_ptr_nonnull(strstr(err, "is a directory"));
  /* a regular file whose shape claims more data than the file holds */
  char path[128];
  snprintf(path, sizeof path, "%s/short.npy", tmpdir);
  size_t len;
  uint8_t data[16] = {0};
  uint8_t *img = make_image(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000,)}",
                            data, sizeof data, &len);
  FILE *f = fopen(path, "wb");
  fwrite(img, 1, len, f);
  fclose(f);
  free(img);
  ck_assert_ptr_null(npy_read_file(path, err));
  ck_assert_ptr_nonnull(strstr(err, "truncated .npy data (16 of 800000000000 bytes)"));
}
END_TEST

/* Feeds `img` to npy_read_stream through a pipe from a child process. */
static Tensor *read_through_pipe(const uint8_t *img, size_t len, char *err) {
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    size_t off = 0;
    while (off < len) {
      ssize_t k = write(fds[1], img + off, len - off);
      if (k <= 0) _exit(1);
      off += (size_t)k;
    }
    _exit(0);
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "rb");
  Tensor *t = npy_read_stream(in, err);
  fclose(in);
  int status;
  waitpid(pid, &status, 0);
  return t;
}

START_TEST(test_pipe) {
  int64_t s[1] = {50000};
  Tensor *t = make_pattern(DT_I32, 1, s);
  size_t len;
  char *img = write_mem(t, &len);
  char err[NPY_ERR_SIZE];
  Tensor *u = read_through_pipe((uint8_t *)img, len, err);
  ck_assert_msg(u != NULL, "%s", err);
  ck_assert(tensor_equal(t, u));
  tensor_release(u);
  u = read_through_pipe((uint8_t *)img, len - 1, err);
  ck_assert_ptr_null(u);
  ck_assert_ptr_nonnull(strstr(err, "truncated .npy data"));
  free(img);
  tensor_release(t);
  /* a pipe whose header claims ~8 TB: fails after reading what was sent */
  uint8_t data[100] = {0};
  uint8_t *big = make_image(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000,)}",
                            data, sizeof data, &len);
  u = read_through_pipe(big, len, err);
  ck_assert_ptr_null(u);
  ck_assert_ptr_nonnull(strstr(err, "truncated .npy data (100 of 800000000000 bytes)"));
  free(big);
  /* Fortran data through a pipe */
  int32_t fd[6] = {0, 3, 1, 4, 2, 5};
  big = make_image(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3)}", fd, sizeof fd,
                   &len);
  u = read_through_pipe(big, len, err);
  ck_assert_msg(u != NULL, "%s", err);
  for (int i = 0; i < 6; i++) ck_assert_int_eq(tensor_get_i64(u, i), i);
  tensor_release(u);
  free(big);
}
END_TEST

static Suite *npy_suite(void) {
  Suite *s = suite_create("npy");
  TCase *rt = tcase_create("write");
  tcase_set_timeout(rt, 120);
  tcase_add_test(rt, test_round_trip_all_dtypes);
  tcase_add_test(rt, test_round_trip_file_and_empty);
  tcase_add_test(rt, test_header_bytes);
  tcase_add_test(rt, test_write_unsupported);
  tcase_add_test(rt, test_reads_numpy_files);
  tcase_add_test(rt, test_npz_numpy_reads);
  tcase_add_test(rt, test_crc32);
  suite_add_tcase(s, rt);
  TCase *rd = tcase_create("read");
  tcase_set_timeout(rd, 120);
  tcase_add_test(rd, test_header_variants);
  tcase_add_test(rd, test_fortran_order);
  tcase_add_test(rd, test_corrupt_headers);
  tcase_add_test(rd, test_truncated_every_byte);
  tcase_add_test(rd, test_mutated_bytes);
  tcase_add_test(rd, test_alloc_failures);
  tcase_add_test(rd, test_file_errors);
  tcase_add_test(rd, test_pipe);
  suite_add_tcase(s, rd);
  return s;
}

static void remove_tmpdir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "check_npy: could not remove %s\n", tmpdir);
}

int main(void) {
  stack_guard_init(8u << 20);
  strcpy(tmpdir, "/tmp/relayc_npyXXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return EXIT_FAILURE;
  }
  numpy_ok = system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  int status = unit_run(npy_suite());
  remove_tmpdir();
  return status;
}
