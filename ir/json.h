/* ir/json.h — writing JSON text by hand: strings and numbers.
 *
 * Machine-readable outputs (diagnostics as JSON or SARIF, --stats --json)
 * are small and written in one pass, so they need no document tree: only
 * correct strings. json_string writes a quoted string: `"` `\` and control
 * characters are escaped, valid UTF-8 passes through, and any byte that is
 * not part of a valid UTF-8 sequence becomes U+FFFD, so the output is always
 * valid JSON whatever the input bytes (names in a corrupt file).
 *
 *     fputs("{\"message\": ", out);
 *     json_string(out, msg, strlen(msg));
 *     fputs("}", out);
 */
#ifndef RELAYC_IR_JSON_H
#define RELAYC_IR_JSON_H

#include <stddef.h>
#include <stdio.h>

/* `s[0..n)` as a quoted JSON string. */
void json_string(FILE *out, const char *s, size_t n);
/* A NUL-terminated string, or `null` when s is NULL. */
void json_cstring(FILE *out, const char *s);
/* Length of the valid UTF-8 sequence starting at s[0..n), or 0 when s[0]
 * does not start one (overlong forms and surrogates are invalid). */
size_t json_utf8_len(const unsigned char *s, size_t n);

#endif
