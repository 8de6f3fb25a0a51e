/* ir/dtype.h — element types in DLPack's vocabulary.
 *
 * A DType is (code, bits, lanes) exactly as DLPack and TVM's metadata blobs
 * encode it: int8 is {DT_INT, 8, 1}, bool is {DT_UINT, 1, 1}, float32x4 is
 * {DT_FLOAT, 32, 4}. Names follow spec/text-format.md §4.3.
 */
#ifndef RELAYC_IR_DTYPE_H
#define RELAYC_IR_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  DT_INT = 0,    /* signed two's-complement integer */
  DT_UINT = 1,   /* unsigned integer; bits == 1 is bool */
  DT_FLOAT = 2,  /* IEEE float (16, 32, 64) */
  DT_HANDLE = 3, /* opaque pointer */
  DT_BFLOAT = 4, /* bfloat16 */
  DT_E4M3 = 6,   /* e4m3_float8 */
  DT_E5M2 = 7,   /* e5m2_float8 */
} DTypeCode;

typedef struct DType {
  uint8_t code;   /* a DTypeCode */
  uint8_t bits;   /* bits per lane */
  uint16_t lanes; /* 1 for scalars */
} DType;

#define DTYPE(c, b) ((DType){(c), (b), 1})
#define DT_BOOL_T DTYPE(DT_UINT, 1)
#define DT_I8 DTYPE(DT_INT, 8)
#define DT_I16 DTYPE(DT_INT, 16)
#define DT_I32 DTYPE(DT_INT, 32)
#define DT_I64 DTYPE(DT_INT, 64)
#define DT_U8 DTYPE(DT_UINT, 8)
#define DT_F16 DTYPE(DT_FLOAT, 16)
#define DT_F32 DTYPE(DT_FLOAT, 32)
#define DT_F64 DTYPE(DT_FLOAT, 64)

static inline bool dtype_eq(DType a, DType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
static inline bool dtype_is_bool(DType t) { return t.code == DT_UINT && t.bits == 1; }
static inline bool dtype_is_float(DType t) {
  return t.code == DT_FLOAT || t.code == DT_BFLOAT || t.code == DT_E4M3 || t.code == DT_E5M2;
}
static inline bool dtype_is_int(DType t) {
  return (t.code == DT_INT || t.code == DT_UINT) && t.bits > 1;
}
/* Bytes of one element as stored in memory: ceil(bits/8) * lanes (bool = 1 byte). */
static inline size_t dtype_size(DType t) { return (size_t)((t.bits + 7) / 8) * t.lanes; }

/* IEEE binary16 <-> binary32 conversion (round to nearest even). */
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

/* Parses a dtype name (`float32`, `int`, `bool`, `uint8x4`, `bfloat16`, `handle`).
 * Returns false for anything that is not a valid name. */
bool dtype_parse(const char *s, size_t n, DType *out);
/* Canonical name into buf (at least 32 bytes); returns buf. */
char *dtype_name(DType t, char *buf);

#endif
