/* runtime/format.h — tensors printed as Relay literals (and as JSON).
 *
 * One element prints as the literal that reads back as the same value
 * (DESIGN.md "Values print on stdout"):
 *
 *   int32 `42`; int64 `42i64`; other integers with their suffix: `300i16`,
 *   `7i8`, `7u8`, `7u16`, `7u32`, `7u64`; bool `True` / `False`;
 *   float32 `1.5f`, `2f`, `0.1f`, `1e-05f`: the SHORTEST %g text that reads
 *   back as the same float (never `0.100000001f`), but a whole number whose
 *   digits fit the width's precision is written out (`1000f`, `16777216f`;
 *   `1e+10f` beyond); float64 `1.5f64`, float16 `1.5f16` (shortest for their
 *   own width, 17 and 5 digits at most); non-finite `inff`, `-inff`,
 *   `nanf` (`inff64`, `nanf16`, ... for other widths; NaN's sign is not shown).
 *   Types with no Relay literal print in the same style: bfloat16 `1.5bf16`,
 *   float8 `1.5f8e4m3` / `1.5f8e5m2`, handles `<handle>`.
 *
 * A tensor of rank 0 prints as its element. Rank >= 1 prints as nested
 * brackets like numpy's repr with separator ", " (but no column padding):
 *
 *   [1f, 2f, 3f]
 *   [[1f, 2f],
 *    [3f, 4f]]
 *
 * LINE BREAKS (numpy's layout): the innermost axis stays on one line; each
 * row of an outer axis starts a new line indented to sit under its opening
 * bracket, and axis k of an n-d tensor (from the outside) separates its items
 * with n-k-2 blank lines, so the 2-d blocks of a 3-d tensor are separated by
 * one blank line. Lines are never wrapped at a width (numpy wraps at 75
 * columns; relayc keeps a row on one line, which diffs and greps better).
 * `one_line` prints everything on one line: [[1f, 2f], [3f, 4f]].
 * A tensor with no elements prints `[]` whatever its shape (as numpy).
 *
 * ELISION: when the tensor has more than `threshold` elements (numpy: 1000),
 * every axis longer than 2*edgeitems shows only its first and last
 * `edgeitems` (numpy: 3) items around `...`:
 *
 *   [0f, 1f, 2f, ..., 997f, 998f, 999f]        (an elided row)
 *   [[0f, 1f, 2f, ..., 17f, 18f, 19f],
 *    ...,                                     (elided rows: a line of its own)
 *    [1980f, 1981f, 1982f, ..., 1997f, 1998f, 1999f]]
 *
 * Vector dtypes (lanes > 1) print as if the lanes were one more, innermost
 * axis. JSON (--json): one line, full data, flattened in row-major order:
 *
 *   {"dtype": "float32", "shape": [2, 2], "data": [1.0, 2.0, 3.0, 4.0]}
 *
 * with floats as the shortest round-trip decimal (always with a `.` or an
 * exponent), NaN and infinities as the strings "nan", "inf", "-inf", bools as
 * true/false. All functions borrow the tensor.
 */
#ifndef RELAYC_RUNTIME_FORMAT_H
#define RELAYC_RUNTIME_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "runtime/tensor.h"

/* Room for any one element's literal text, NUL included. */
#define FORMAT_ELEM_SIZE 48

typedef struct FormatOptions {
  bool one_line;      /* no line breaks at all */
  int64_t threshold;  /* elide when numel * lanes > threshold; negative: never elide */
  int64_t edgeitems;  /* items kept at each end of an elided axis */
  int indent;         /* column of the opening bracket, for continuation lines */
} FormatOptions;

/* numpy's defaults: threshold 1000, edgeitems 3, multi-line, column 0. */
#define FORMAT_DEFAULTS ((FormatOptions){false, 1000, 3, 0})

/* The literal of one lane of dtype `dt` stored at `p` into buf
 * (FORMAT_ELEM_SIZE bytes); returns buf. */
char *format_element(DType dt, const void *p, char *buf);
/* The literal for a float value of float dtype `dt` (rounded to that width
 * first): `1.5f`, `0.1f64`, `inff16`. */
char *format_float(DType dt, double v, char *buf);
/* The shortest %g text that reads back as `v` at the width of float dtype
 * `dt` (16, 32 or 64 bits; others as 64), without suffix: `0.1`, `2`,
 * `1e-05`, `-0`, `inf`, `nan`. */
char *format_shortest(DType dt, double v, char *buf);

/* Writes `t` as described above. */
void format_tensor(FILE *out, const Tensor *t);
void format_tensor_opts(FILE *out, const Tensor *t, const FormatOptions *opts);
/* Writes the JSON object of `t`. */
void format_tensor_json(FILE *out, const Tensor *t);

#endif
