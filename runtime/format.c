/* runtime/format.c — Relay-literal and JSON text of tensors (see format.h).
 *
 * Elements go through format_element, which picks the literal form by dtype.
 * Float digits: the fewest %g digits that read back at the element's own
 * width (16, 32 or 64 bits), then widened so that a whole number whose digits
 * fit that width prints without an exponent (`1000f`, not `1e+03f`). This is
 * ir/attrs.h format_shortest_double's search plus that widening and float16
 * support, which is why it is not simply called. The bracket layout is numpy's
 * _formatArray without column padding: a recursion over the axes (depth at
 * most TENSOR_MAX_NDIM + 1, so bounded) that walks element offsets.
 */
#include "runtime/format.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------- elements */

/* Does the text `s` read back as `v` at `width` bits? A reader may use
 * strtof or strtod-then-round, so narrow widths must survive both. */
static bool reads_back(int width, double v, const char *s) {
  if (width == 64) return strtod(s, NULL) == v;
  float f = (float)v, a = strtof(s, NULL), b = (float)strtod(s, NULL);
  if (width == 32) return a == f && b == f;
  uint16_t h = float_to_half(f);
  return float_to_half(a) == h && float_to_half(b) == h;
}

char *format_shortest(DType dt, double v, char *buf) {
  if (isnan(v)) return strcpy(buf, "nan");
  if (isinf(v)) return strcpy(buf, v < 0 ? "-inf" : "inf");
  /* bfloat16 and float8 values are exact in float32: print them at 32 bits */
  int width = dt.code == DT_FLOAT && (dt.bits == 16 || dt.bits == 64) ? dt.bits : 32;
  int maxp = width == 16 ? 5 : width == 32 ? 9 : 17;
  if (width == 16) v = half_to_float(float_to_half((float)v));
  if (width == 32) v = (float)v;
  int p = 1;
  for (; p < maxp; p++) {
    snprintf(buf, 32, "%.*g", p, v);
    if (reads_back(width, v, buf)) break;
  }
  /* %g switches to an exponent once the decimal exponent reaches the
   * precision (1000 at 1 digit is `1e+03`); while the integer part fits in
   * the width's maximum digits, widen so it is written out (`1000`). */
  char e[40];
  snprintf(e, sizeof e, "%.*e", p - 1, v);
  int x = atoi(strchr(e, 'e') + 1);
  snprintf(buf, 32, "%.*g", x >= p && x < maxp ? x + 1 : p, v);
  return buf;
}

/* The literal suffix of a float dtype. */
static const char *float_suffix(DType dt) {
  switch (dt.code) {
  case DT_BFLOAT: return "bf16";
  case DT_E4M3: return "f8e4m3";
  case DT_E5M2: return "f8e5m2";
  default: return dt.bits == 16 ? "f16" : dt.bits == 64 ? "f64" : "f";
  }
}

char *format_float(DType dt, double v, char *buf) {
  char digits[32];
  format_shortest(dt, v, digits);
  if (isnan(v)) strcpy(digits, "nan"); /* NaN's sign is not shown */
  snprintf(buf, FORMAT_ELEM_SIZE, "%s%s", digits, float_suffix(dt));
  return buf;
}

char *format_element(DType dt, const void *p, char *buf) {
  DType lane = dt;
  lane.lanes = 1;
  if (dtype_is_bool(lane)) return strcpy(buf, tensor_load_i64(lane, p) ? "True" : "False");
  if (dtype_is_float(lane)) return format_float(lane, tensor_load_f64(lane, p), buf);
  if (lane.code == DT_HANDLE) return strcpy(buf, "<handle>");
  int64_t v = tensor_load_i64(lane, p);
  if (lane.code == DT_UINT) {
    snprintf(buf, FORMAT_ELEM_SIZE, "%" PRIu64 "u%u", (uint64_t)v, lane.bits);
  } else if (lane.bits == 32) {
    snprintf(buf, FORMAT_ELEM_SIZE, "%" PRId64, v);
  } else {
    snprintf(buf, FORMAT_ELEM_SIZE, "%" PRId64 "i%u", v, lane.bits);
  }
  return buf;
}

/* ---------------------------------------------------------------- layout */

typedef struct Layout {
  FILE *out;
  const FormatOptions *o;
  DType lane;              /* the element type of one printed item */
  size_t lane_size;        /* its bytes */
  const uint8_t *data;
  int32_t rank;            /* shape rank, plus one when lanes > 1 */
  int64_t shape[TENSOR_MAX_NDIM + 1];
  int64_t stride[TENSOR_MAX_NDIM + 1]; /* in items */
  bool summarize;
} Layout;

static void put_item(Layout *l, int64_t off) {
  char buf[FORMAT_ELEM_SIZE];
  fputs(format_element(l->lane, l->data + (size_t)off * l->lane_size, buf), l->out);
}

/* Separator between the items of `axis`: ", " innermost, else ",", the
 * newlines, and the indent of the next bracket (one column per axis). */
static void put_sep(Layout *l, int32_t axis) {
  if (axis == l->rank - 1 || l->o->one_line) {
    fputs(", ", l->out);
    return;
  }
  fputc(',', l->out);
  for (int32_t i = 0; i < l->rank - axis - 1; i++) fputc('\n', l->out);
  fprintf(l->out, "%*s", l->o->indent + axis + 1, "");
}

static void put_axis(Layout *l, int32_t axis, int64_t off) {
  int64_t n = l->shape[axis], edge = l->o->edgeitems < 0 ? 0 : l->o->edgeitems;
  bool elide = l->summarize && n > 2 * edge;
  fputc('[', l->out);
  for (int64_t i = 0; i < n; i++) {
    if (elide && i == edge) {
      fputs("...", l->out);
      if (edge == 0) break;
      put_sep(l, axis);
      i = n - edge;
    }
    int64_t child = off + i * l->stride[axis];
    if (axis == l->rank - 1)
      put_item(l, child);
    else
      put_axis(l, axis + 1, child);
    if (i + 1 < n) put_sep(l, axis);
  }
  fputc(']', l->out);
}

void format_tensor_opts(FILE *out, const Tensor *t, const FormatOptions *o) {
  Layout l = {.out = out, .o = o, .lane = t->dtype, .data = t->data};
  l.lane.lanes = 1;
  l.lane_size = dtype_size(l.lane);
  l.rank = t->ndim;
  for (int32_t i = 0; i < t->ndim; i++) l.shape[i] = t->shape[i];
  if (t->dtype.lanes > 1) l.shape[l.rank++] = t->dtype.lanes;
  if (l.rank == 0) {
    put_item(&l, 0);
    return;
  }
  int64_t items = t->numel * t->dtype.lanes;
  if (items == 0) {
    fputs("[]", out);
    return;
  }
  int64_t s = 1;
  for (int32_t i = l.rank - 1; i >= 0; i--) {
    l.stride[i] = s;
    s *= l.shape[i];
  }
  l.summarize = o->threshold >= 0 && items > o->threshold;
  put_axis(&l, 0, 0);
}

void format_tensor(FILE *out, const Tensor *t) {
  FormatOptions o = FORMAT_DEFAULTS;
  format_tensor_opts(out, t, &o);
}

/* ---------------------------------------------------------------- JSON */

static void json_item(FILE *out, DType lane, const void *p) {
  char buf[32];
  if (dtype_is_bool(lane)) {
    fputs(tensor_load_i64(lane, p) ? "true" : "false", out);
  } else if (dtype_is_float(lane)) {
    double v = tensor_load_f64(lane, p);
    if (isnan(v) || isinf(v)) {
      fprintf(out, "\"%s\"", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
      return;
    }
    format_shortest(lane, v, buf);
    fputs(buf, out);
    if (!strpbrk(buf, ".e")) fputs(".0", out);
  } else if (lane.code == DT_UINT) {
    fprintf(out, "%" PRIu64, (uint64_t)tensor_load_i64(lane, p));
  } else {
    fprintf(out, "%" PRId64, tensor_load_i64(lane, p));
  }
}

void format_tensor_json(FILE *out, const Tensor *t) {
  char name[32];
  fprintf(out, "{\"dtype\": \"%s\", \"shape\": [", dtype_name(t->dtype, name));
  for (int32_t i = 0; i < t->ndim; i++) fprintf(out, "%s%" PRId64, i ? ", " : "", t->shape[i]);
  fputs("], \"data\": [", out);
  DType lane = t->dtype;
  lane.lanes = 1;
  size_t w = dtype_size(lane);
  int64_t items = t->numel * t->dtype.lanes;
  const uint8_t *d = t->data;
  for (int64_t i = 0; i < items; i++) {
    if (i) fputs(", ", out);
    json_item(out, lane, d + (size_t)i * w);
  }
  fputs("]}", out);
}
