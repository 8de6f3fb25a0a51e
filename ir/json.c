/* ir/json.c — JSON string escaping (see json.h). */
#include "ir/json.h"

#include <stdint.h>

size_t json_utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? (c <= 0xEF ? 3 : 0) : c >= 0xC2 ? 2 : 0;
  if (len == 0 || len > n) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  uint32_t cp = len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
  for (size_t i = 1; i < len; i++) cp = cp << 6 | (s[i] & 0x3F);
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return len;
}

void json_string(FILE *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', out);
  for (size_t i = 0; i < n;) {
    unsigned c = p[i];
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc((int)c, out);
      i++;
    } else if (c == '\n') {
      fputs("\\n", out), i++;
    } else if (c == '\t') {
      fputs("\\t", out), i++;
    } else if (c == '\r') {
      fputs("\\r", out), i++;
    } else if (c < 0x20 || c == 0x7F) {
      fprintf(out, "\\u%04x", c), i++;
    } else {
      size_t len = json_utf8_len(p + i, n - i);
      if (len == 0) {
        fputs("\\ufffd", out);
        i++;
      } else {
        fwrite(p + i, 1, len, out);
        i += len;
      }
    }
  }
  fputc('"', out);
}

void json_cstring(FILE *out, const char *s) {
  if (!s) {
    fputs("null", out);
    return;
  }
  size_t n = 0;
  while (s[n]) n++;
  json_string(out, s, n);
}
