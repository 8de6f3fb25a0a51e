/* runtime/bundle.c — named tensor lists and their files (see bundle.h).
 *
 * Owns the list itself, getting a file's bytes into memory, and choosing
 * the format; the formats are runtime/params.c (TVM) and runtime/npz.c /
 * runtime/npy.c (numpy). A regular file is mapped read-only (its pages come
 * straight from the page cache, and each tensor's data is then copied once,
 * into its own buffer); a pipe or standard input is read whole into memory.
 * Duplicate names are found by sorting indices once (n log n), so a file
 * with many names costs no quadratic pass.
 */
#include "runtime/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/mem.h"
#include "runtime/npy.h"
#include "runtime/npz.h"
#include "runtime/params.h"

bool bundle_fail(char *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, BUNDLE_ERR_SIZE, fmt, ap);
  va_end(ap);
  return false;
}

/* ================================================================== lists */

void bundle_add(TensorBundle *b, const char *name, size_t len, Tensor *t) {
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 8;
    b->names = mem_realloc(b->names, b->cap * sizeof *b->names);
    b->tensors = mem_realloc(b->tensors, b->cap * sizeof *b->tensors);
  }
  char *copy = mem_malloc(len + 1);
  memcpy(copy, name, len);
  copy[len] = 0;
  b->names[b->n] = copy;
  b->tensors[b->n] = t;
  b->n++;
}

long bundle_find(const TensorBundle *b, const char *name) {
  for (size_t i = 0; i < b->n; i++)
    if (strcmp(b->names[i], name) == 0) return (long)i;
  return -1;
}

void bundle_truncate(TensorBundle *b, size_t n) {
  while (b->n > n) {
    b->n--;
    tensor_release(b->tensors[b->n]);
    mem_free(b->names[b->n]);
  }
  if (n == 0) {
    mem_free(b->names);
    mem_free(b->tensors);
    *b = (TensorBundle){0};
  }
}

void bundle_free(TensorBundle *b) { bundle_truncate(b, 0); }

static const TensorBundle *sort_bundle; /* qsort has no context argument */

static int cmp_index(const void *a, const void *b) {
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  int c = strcmp(sort_bundle->names[i], sort_bundle->names[j]);
  return c ? c : (i > j) - (i < j);
}

/* The first name (in file order) that occurs twice, or NULL. */
static const char *first_duplicate(const TensorBundle *b) {
  if (b->n < 2) return NULL;
  size_t *idx = mem_calloc(b->n, sizeof *idx);
  for (size_t i = 0; i < b->n; i++) idx[i] = i;
  sort_bundle = b;
  qsort(idx, b->n, sizeof *idx, cmp_index);
  size_t best = b->n;
  for (size_t i = 1; i < b->n; i++)
    if (strcmp(b->names[idx[i - 1]], b->names[idx[i]]) == 0 && idx[i] < best) best = idx[i];
  mem_free(idx);
  return best < b->n ? b->names[best] : NULL;
}

/* ================================================================ formats */

BundleFormat bundle_format_for_path(const char *path) {
  size_t n = strlen(path);
  if (n >= 7 && strcmp(path + n - 7, ".params") == 0) return BUNDLE_PARAMS;
  if (n >= 4 && strcmp(path + n - 4, ".npz") == 0) return BUNDLE_NPZ;
  return BUNDLE_UNKNOWN;
}

BundleFormat bundle_format_of_bytes(const void *p, size_t n) {
  const uint8_t *b = p;
  if (n >= 8) {
    uint64_t magic;
    memcpy(&magic, b, 8);
    if (magic == PARAMS_MAGIC) return BUNDLE_PARAMS;
  }
  /* a ZIP starts with a local header, or (no members) with the end record */
  if (n >= 4 && b[0] == 'P' && b[1] == 'K' && ((b[2] == 3 && b[3] == 4) || (b[2] == 5 && b[3] == 6)))
    return BUNDLE_NPZ;
  return BUNDLE_UNKNOWN;
}

bool bundle_read_mem(const void *p, size_t n, TensorBundle *out, char *err) {
  size_t first = out->n;
  bool ok;
  switch (bundle_format_of_bytes(p, n)) {
  case BUNDLE_PARAMS: ok = params_read_mem(p, n, out, err); break;
  case BUNDLE_NPZ: ok = npz_read_mem(p, n, out, err); break;
  default:
    if (n == 0) return bundle_fail(err, "empty file (expected a TVM .params file or an .npz archive)");
    if (n >= 6 && memcmp(p, "\x93NUMPY", 6) == 0)
      return bundle_fail(err, "a single .npy array, not a bundle (bind it with --input NAME=FILE)");
    return bundle_fail(err, "neither a TVM .params file nor an .npz archive (unknown first bytes)");
  }
  if (!ok) return false;
  TensorBundle mine = {out->n - first, 0, out->names + first, out->tensors + first};
  const char *dup = first_duplicate(&mine);
  if (dup) {
    bundle_fail(err, "the name '%.200s' occurs twice", dup);
    bundle_truncate(out, first);
    return false;
  }
  return true;
}

/* Reads a stream to its end into a mem_malloc'd buffer. */
static uint8_t *slurp(FILE *f, size_t *len, char *err) {
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = mem_malloc_try(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    uint8_t *bigger = cap < SIZE_MAX / 2 ? mem_malloc_try(cap * 2) : NULL;
    if (bigger) memcpy(bigger, buf, n);
    mem_free(buf);
    buf = bigger;
    cap *= 2;
  }
  if (!buf) {
    bundle_fail(err, "out of memory reading the input");
    return NULL;
  }
  if (ferror(f)) {
    bundle_fail(err, "read error: %s", strerror(errno));
    mem_free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

bool bundle_read_file(const char *path, TensorBundle *out, char *err) {
  bool is_stdin = strcmp(path, "-") == 0;
  int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return bundle_fail(err, "cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    if (!is_stdin) close(fd);
    return bundle_fail(err, "cannot read %s: %s", path, strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    if (!is_stdin) close(fd);
    return bundle_fail(err, "cannot read %s: is a directory", path);
  }
  bool ok;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    size_t n = (size_t)st.st_size;
    void *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int e = errno;
      if (!is_stdin) close(fd);
      return bundle_fail(err, "cannot map %s: %s", path, strerror(e));
    }
    madvise(map, n, MADV_SEQUENTIAL | MADV_WILLNEED);
    ok = bundle_read_mem(map, n, out, err);
    munmap(map, n);
  } else { /* a pipe, a terminal, an empty or special file */
    FILE *f = fdopen(is_stdin ? dup(fd) : fd, "rb");
    if (!f) {
      int e = errno;
      if (!is_stdin) close(fd);
      return bundle_fail(err, "cannot read %s: %s", path, strerror(e));
    }
    size_t n = 0;
    uint8_t *buf = slurp(f, &n, err);
    fclose(f);
    fd = -1;
    ok = buf && bundle_read_mem(buf, n, out, err);
    mem_free(buf);
  }
  if (fd >= 0 && !is_stdin) close(fd);
  return ok;
}

/* ================================================================ writing */

bool bundle_write_file(const char *path, const TensorBundle *b, char *err) {
  BundleFormat fmt = bundle_format_for_path(path);
  if (fmt == BUNDLE_NPZ) {
    char nerr[NPY_ERR_SIZE];
    if (npz_write_file(path, b->tensors, (const char *const *)b->names, b->n, nerr)) return true;
    return bundle_fail(err, "%s", nerr);
  }
  if (fmt != BUNDLE_PARAMS)
    return bundle_fail(err, "cannot tell the format from the name %s (use .params or .npz)", path);
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
  if (!f) return bundle_fail(err, "cannot write %s: %s", path, strerror(errno));
  bool ok = params_write_stream(f, b, err);
  int rc = f == stdout ? fflush(f) : fclose(f);
  if (rc != 0 && ok) return bundle_fail(err, "cannot write %s: %s", path, strerror(errno));
  return ok;
}
