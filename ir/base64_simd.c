/* ir/base64_simd.c — bulk base64 decoding with AVX2 / AVX-512 VBMI (see base64_simd.h).
 *
 * Both kernels translate a block of characters to 6-bit values, check the
 * whole block at once, then pack: pairs of values are merged into 12 bits
 * (multiply-add by 64 and 1), pairs of those into 24 bits (by 4096 and 1),
 * and a byte shuffle gathers the three meaningful bytes of every 32-bit lane
 * in big-endian order. A block holding any character outside the alphabet is
 * not decoded: the kernel returns and the scalar caller takes over from that
 * block. Stores are masked or split so nothing past 3 * groups is written.
 * The kernels are compiled with function-level target attributes and chosen
 * once at run time from the CPU's features; the rest of the tree stays
 * baseline x86-64 (and other architectures get the scalar path).
 */
#include "ir/base64_simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define B64S_X86 1
#include <immintrin.h>
#else
#define B64S_X86 0
#endif

#if B64S_X86

/* AVX2: 32 characters (8 groups, 24 bytes) per step. Validation is by
 * character class (signed compares, so bytes >= 0x80 fall in no class); the
 * classes are disjoint and each adds its own offset to reach the 6-bit value. */
__attribute__((target("avx2"))) static size_t b64s_avx2(const unsigned char *s, size_t ngroups,
                                                        uint8_t *out) {
  const __m256i up_lo = _mm256_set1_epi8('A' - 1), up_hi = _mm256_set1_epi8('Z' + 1);
  const __m256i lc_lo = _mm256_set1_epi8('a' - 1), lc_hi = _mm256_set1_epi8('z' + 1);
  const __m256i dg_lo = _mm256_set1_epi8('0' - 1), dg_hi = _mm256_set1_epi8('9' + 1);
  const __m256i plus = _mm256_set1_epi8('+'), slash = _mm256_set1_epi8('/');
  const __m256i off_up = _mm256_set1_epi8(-'A'), off_lc = _mm256_set1_epi8(26 - 'a');
  const __m256i off_dg = _mm256_set1_epi8(52 - '0'), off_pl = _mm256_set1_epi8(62 - '+');
  const __m256i off_sl = _mm256_set1_epi8(63 - '/');
  const __m256i mul12 = _mm256_set1_epi32(0x01400140), mul24 = _mm256_set1_epi32(0x00011000);
  const __m256i gather = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
                                          2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
  size_t g = 0;
  for (; g + 8 <= ngroups; g += 8) {
    __m256i c = _mm256_loadu_si256((const __m256i *)(s + 4 * g));
    __m256i up = _mm256_and_si256(_mm256_cmpgt_epi8(c, up_lo), _mm256_cmpgt_epi8(up_hi, c));
    __m256i lc = _mm256_and_si256(_mm256_cmpgt_epi8(c, lc_lo), _mm256_cmpgt_epi8(lc_hi, c));
    __m256i dg = _mm256_and_si256(_mm256_cmpgt_epi8(c, dg_lo), _mm256_cmpgt_epi8(dg_hi, c));
    __m256i pl = _mm256_cmpeq_epi8(c, plus), sl = _mm256_cmpeq_epi8(c, slash);
    __m256i ok = _mm256_or_si256(_mm256_or_si256(up, lc), _mm256_or_si256(_mm256_or_si256(dg, pl), sl));
    if ((uint32_t)_mm256_movemask_epi8(ok) != 0xFFFFFFFFu) break;
    __m256i off = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(up, off_up), _mm256_and_si256(lc, off_lc)),
        _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(dg, off_dg), _mm256_and_si256(pl, off_pl)),
                        _mm256_and_si256(sl, off_sl)));
    __m256i v = _mm256_add_epi8(c, off);
    __m256i w = _mm256_madd_epi16(_mm256_maddubs_epi16(v, mul12), mul24);
    __m256i b = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(w, gather), lanes);
    _mm_storeu_si128((__m128i *)(out + 3 * g), _mm256_castsi256_si128(b));
    _mm_storel_epi64((__m128i *)(out + 3 * g + 16), _mm256_extracti128_si256(b, 1));
  }
  return g;
}

/* Character -> 6-bit value for the 7-bit range; 0x80 marks characters outside the alphabet. */
static const uint8_t b64s_table[128] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 62,   0x80, 0x80, 0x80, 63,
    52,   53,   54,   55,   56,   57,   58,   59,   60,   61,   0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,
    15,   16,   17,   18,   19,   20,   21,   22,   23,   24,   25,   0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 26,   27,   28,   29,   30,   31,   32,   33,   34,   35,   36,   37,   38,   39,   40,
    41,   42,   43,   44,   45,   46,   47,   48,   49,   50,   51,   0x80, 0x80, 0x80, 0x80, 0x80,
};

/* AVX-512 VBMI: 64 characters (16 groups, 48 bytes) per step. One two-table
 * byte permute looks every character up in b64s_table (by its low 7 bits);
 * a character is bad when it or its value has the top bit set. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static size_t
b64s_avx512(const unsigned char *s, size_t ngroups, uint8_t *out) {
  const __m512i lut0 = _mm512_loadu_si512(b64s_table), lut1 = _mm512_loadu_si512(b64s_table + 64);
  const __m512i mul12 = _mm512_set1_epi32(0x01400140), mul24 = _mm512_set1_epi32(0x00011000);
  uint8_t idx[64] = {0};
  for (int j = 0; j < 48; j++) idx[j] = (uint8_t)(4 * (j / 3) + 2 - j % 3);
  const __m512i gather = _mm512_loadu_si512(idx);
  const __mmask64 keep = (1ULL << 48) - 1;
  size_t g = 0;
  for (; g + 16 <= ngroups; g += 16) {
    __m512i c = _mm512_loadu_si512(s + 4 * g);
    __m512i v = _mm512_permutex2var_epi8(lut0, c, lut1);
    if (_mm512_movepi8_mask(_mm512_or_si512(c, v))) break;
    __m512i w = _mm512_madd_epi16(_mm512_maddubs_epi16(v, mul12), mul24);
    _mm512_mask_storeu_epi8(out + 3 * g, keep, _mm512_permutexvar_epi8(gather, w));
  }
  return g;
}

static Base64Isa b64s_detect(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vbmi"))
    return B64_ISA_AVX512;
  if (__builtin_cpu_supports("avx2")) return B64_ISA_AVX2;
  return B64_ISA_SCALAR;
}

#else

static Base64Isa b64s_detect(void) { return B64_ISA_SCALAR; }

#endif

Base64Isa base64_simd_best(void) {
  static int best = -1; /* racing first calls compute the same answer */
  int b = __atomic_load_n(&best, __ATOMIC_RELAXED);
  if (b < 0) {
    b = (int)b64s_detect();
    __atomic_store_n(&best, b, __ATOMIC_RELAXED);
  }
  return (Base64Isa)b;
}

size_t base64_simd_groups_isa(const unsigned char *s, size_t ngroups, uint8_t *out, Base64Isa isa) {
  Base64Isa best = base64_simd_best();
  if (isa == B64_ISA_BEST || isa > best) isa = isa == B64_ISA_BEST ? best : B64_ISA_SCALAR;
#if B64S_X86
  if (isa == B64_ISA_AVX512) return b64s_avx512(s, ngroups, out);
  if (isa == B64_ISA_AVX2) return b64s_avx2(s, ngroups, out);
#else
  (void)s;
  (void)ngroups;
  (void)out;
#endif
  return 0;
}

size_t base64_simd_groups(const unsigned char *s, size_t ngroups, uint8_t *out) {
  return base64_simd_groups_isa(s, ngroups, out, B64_ISA_BEST);
}
