/* runtime/bundle.h — named tensors in one file: TVM's .params or numpy's .npz.
 *
 * A TensorBundle is an ordered list of (name, tensor) pairs, what
 * `relayc --params FILE` and `--inputs FILE` read and `--save-params FILE`
 * writes. Two file formats hold one:
 *
 *   - TVM's save_param_dict format (`.params`; runtime/params.h), the
 *     NDArray records of the metadata section behind a list of names;
 *   - numpy's `.npz` (a ZIP of NAME.npy members, stored or deflated;
 *     runtime/npz.h reads it, runtime/npy.h writes it).
 *
 * READING detects the format from the file's first bytes, never from its
 * name, so a misnamed file still reads. The file is mapped (or, for a pipe
 * or "-", read whole) and every size in it is checked against the bytes
 * present before anything is allocated: a truncated or corrupt file gives
 * false and a one-line message, never a crash or a huge allocation. Names
 * must be unique within a file.
 *
 * WRITING picks the format from the extension (".params" or ".npz");
 * anything else is an error (the caller may check first with
 * bundle_format_for_path).
 *
 * Ownership: the bundle owns one reference to each tensor and a copy of each
 * name; bundle_add consumes the tensor it is given.
 *
 *     TensorBundle b = {0};
 *     char err[BUNDLE_ERR_SIZE];
 *     if (!bundle_read_file("weights.params", &b, err)) report(err);
 *     for (size_t i = 0; i < b.n; i++) use(b.names[i], b.tensors[i]);
 *     bundle_free(&b);
 */
#ifndef RELAYC_RUNTIME_BUNDLE_H
#define RELAYC_RUNTIME_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/tensor.h"

/* Room for a message; messages do not repeat the path (the caller adds it)
 * except for errors from the operating system. */
#define BUNDLE_ERR_SIZE 320

/* Writes the printf-style message into err (BUNDLE_ERR_SIZE bytes) and
 * returns false: the readers' and writers' one way to fail. */
bool bundle_fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct TensorBundle {
  size_t n, cap;
  char **names;     /* n NUL-terminated names (mem_malloc'd) */
  Tensor **tensors; /* n references owned by the bundle */
} TensorBundle;

typedef enum {
  BUNDLE_UNKNOWN, /* not a format relayc writes */
  BUNDLE_PARAMS,  /* TVM's save_param_dict format */
  BUNDLE_NPZ,     /* numpy's .npz */
} BundleFormat;

/* Appends (name[0..len), t); CONSUMES t. */
void bundle_add(TensorBundle *b, const char *name, size_t len, Tensor *t);
/* Index of `name`, or -1. */
long bundle_find(const TensorBundle *b, const char *name);
/* Drops the entries from index n on (a reader undoing a failed read); at
 * n == 0 the arrays go too, so an untouched empty bundle owns nothing. */
void bundle_truncate(TensorBundle *b, size_t n);
/* Releases every tensor and name; the bundle is empty (and reusable) after. */
void bundle_free(TensorBundle *b);

/* The format a path's extension asks for when writing. */
BundleFormat bundle_format_for_path(const char *path);
/* The format of a file that starts with these bytes (at least 8 when the file has them). */
BundleFormat bundle_format_of_bytes(const void *p, size_t n);

/* Reads a .params or .npz file ("-" is standard input), appending its
 * tensors to *out in file order. On failure *out is left empty and err says
 * why, naming the tensor (and byte offset) where the file went wrong. */
bool bundle_read_file(const char *path, TensorBundle *out, char *err);
/* Reads an image held in memory (borrowed), likewise. */
bool bundle_read_mem(const void *p, size_t n, TensorBundle *out, char *err);

/* Writes b (borrowed) in the format the extension of `path` asks for. */
bool bundle_write_file(const char *path, const TensorBundle *b, char *err);

#endif
