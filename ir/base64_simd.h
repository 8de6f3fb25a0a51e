/* ir/base64_simd.h — vectorised bulk base64 decoding (used by ir/tensor_blob.c).
 *
 * base64_simd_groups decodes as many whole 4-character groups (no padding)
 * as it can with the widest instruction set the CPU has (AVX-512 VBMI, AVX2,
 * or none), stopping before the first block that holds a character outside
 * the alphabet. It returns how many groups it decoded; the caller decodes the
 * rest with the scalar code, which also locates the offending character, so
 * validation and diagnostics are the scalar decoder's by construction.
 * Writes stay within out[0 .. 3 * returned groups): disjoint ranges may be
 * decoded by different threads at the same time.
 */
#ifndef RELAYC_IR_BASE64_SIMD_H
#define RELAYC_IR_BASE64_SIMD_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  B64_ISA_SCALAR = 0, /* decodes nothing: the caller's scalar loop does all */
  B64_ISA_AVX2 = 1,
  B64_ISA_AVX512 = 2, /* AVX-512 F + BW + VBMI */
  B64_ISA_BEST = 3,   /* what the CPU supports (the default) */
} Base64Isa;

size_t base64_simd_groups(const unsigned char *s, size_t ngroups, uint8_t *out);
/* The same with a chosen instruction set (for tests; an unsupported one decodes nothing). */
size_t base64_simd_groups_isa(const unsigned char *s, size_t ngroups, uint8_t *out, Base64Isa isa);
/* The instruction set base64_simd_groups uses on this CPU. */
Base64Isa base64_simd_best(void);

#endif
