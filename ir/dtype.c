/* ir/dtype.c — dtype names: parsing `BASE[BITS][xLANES]` and printing the canonical form. */
#include "ir/dtype.h"

#include <stdio.h>
#include <string.h>

static bool parse_uint(const char *s, size_t n, unsigned long *out) {
  if (n == 0 || n > 6) return false;
  unsigned long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (unsigned long)(s[i] - '0');
  }
  *out = v;
  return true;
}

bool dtype_parse(const char *s, size_t n, DType *out) {
  static const struct { const char *base; uint8_t code, defbits; } bases[] = {
      {"e4m3_float", DT_E4M3, 8}, {"e5m2_float", DT_E5M2, 8}, {"bfloat", DT_BFLOAT, 16},
      {"handle", DT_HANDLE, 64},  {"float", DT_FLOAT, 32},    {"uint", DT_UINT, 32},
      {"int", DT_INT, 32},
  };
  if (n == 4 && memcmp(s, "bool", 4) == 0) {
    *out = DT_BOOL_T;
    return true;
  }
  for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
    size_t bl = strlen(bases[b].base);
    if (n < bl || memcmp(s, bases[b].base, bl) != 0) continue;
    const char *p = s + bl, *end = s + n;
    const char *x = memchr(p, 'x', (size_t)(end - p));
    const char *bits_end = x ? x : end;
    unsigned long bits = bases[b].defbits, lanes = 1;
    if (bits_end > p && !parse_uint(p, (size_t)(bits_end - p), &bits)) return false;
    if (x && !parse_uint(x + 1, (size_t)(end - x - 1), &lanes)) return false;
    if (bits == 0 || bits > 255 || lanes == 0 || lanes > 65535) return false;
    if (bases[b].code == DT_HANDLE && bits_end > p) return false;
    *out = (DType){bases[b].code, (uint8_t)bits, (uint16_t)lanes};
    return true;
  }
  return false;
}

char *dtype_name(DType t, char *buf) {
  const char *base = "?";
  switch (t.code) {
  case DT_INT: base = "int"; break;
  case DT_UINT: base = "uint"; break;
  case DT_FLOAT: base = "float"; break;
  case DT_HANDLE: base = "handle"; break;
  case DT_BFLOAT: base = "bfloat"; break;
  case DT_E4M3: base = "e4m3_float"; break;
  case DT_E5M2: base = "e5m2_float"; break;
  }
  if (dtype_is_bool(t) && t.lanes == 1) {
    strcpy(buf, "bool");
  } else if (t.code == DT_HANDLE) {
    snprintf(buf, 32, "handle");
  } else {
    int n = snprintf(buf, 32, "%s%u", base, t.bits);
    if (t.lanes > 1) snprintf(buf + n, (size_t)(32 - n), "x%u", t.lanes);
  }
  return buf;
}

float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) { mant <<= 1; exp--; }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++; /* may carry into exp: correct */
  return (uint16_t)half;
}
