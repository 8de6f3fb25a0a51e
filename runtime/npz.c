/* runtime/npz.c — .npz archives in (see npz.h).
 *
 * The archive is an image in memory (mapped by runtime/bundle.c). The reader
 * never trusts an offset or size before comparing it with the image: the end
 * record is searched for backwards over the last 64 KiB + 22 bytes (its
 * comment may be that long), the central directory must lie before it, each
 * member's data before the directory. Stored members are handed to
 * npy_read_mem in place (one copy, into the tensor); deflated ones are
 * inflated into a scratch buffer first.
 */
#include "runtime/npz.h"

#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <zlib.h>

#include "ir/mem.h"
#include "runtime/npy.h"

enum {
  SIG_LOCAL = 0x04034b50,
  SIG_CENTRAL = 0x02014b50,
  SIG_END = 0x06054b50,
  SIG_END64 = 0x06064b50,
  SIG_LOCATOR64 = 0x07064b50,
  END_SIZE = 22,
  CENTRAL_SIZE = 46,
  LOCAL_SIZE = 30,
};

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* Where the central directory is. */
typedef struct Directory {
  uint64_t entries, offset, size;
  size_t end_at; /* offset of the end record: nothing of the directory lies past it */
} Directory;

static bool find_directory(const uint8_t *p, size_t n, Directory *d, char *err) {
  if (n < END_SIZE)
    return bundle_fail(err, "ZIP archive of %zu bytes, too short for its end record (truncated?)", n);
  size_t lowest = n > END_SIZE + 65535 ? n - END_SIZE - 65535 : 0, at = n - END_SIZE;
  bool found = false;
  for (;; at--) {
    found = rd32(p + at) == SIG_END && at + END_SIZE + rd16(p + at + 20) <= n;
    if (found || at == lowest) break;
  }
  if (!found) return bundle_fail(err, "ZIP archive without an end-of-directory record (truncated?)");
  const uint8_t *e = p + at;
  if (rd16(e + 4) != 0 || rd16(e + 6) != 0)
    return bundle_fail(err, "byte %zu: multi-volume ZIP archives are not supported", at);
  d->entries = rd16(e + 10);
  d->size = rd32(e + 12);
  d->offset = rd32(e + 16);
  d->end_at = at;
  if (d->entries == 0xFFFF || d->size == 0xFFFFFFFFu || d->offset == 0xFFFFFFFFu) {
    /* ZIP64: a locator right before the end record points at the ZIP64 end record */
    if (at < 20 || rd32(p + at - 20) != SIG_LOCATOR64)
      return bundle_fail(err, "byte %zu: the end record asks for ZIP64 but no ZIP64 locator precedes it", at);
    uint64_t e64 = rd64(p + at - 20 + 8);
    if (e64 > at - 20 || at - 20 - e64 < 56 || rd32(p + e64) != SIG_END64)
      return bundle_fail(err, "byte %zu: the ZIP64 locator points at %" PRIu64 ", where no ZIP64 end record is",
                         at - 20, e64);
    d->entries = rd64(p + e64 + 32);
    d->size = rd64(p + e64 + 40);
    d->offset = rd64(p + e64 + 48);
    d->end_at = (size_t)e64;
  }
  if (d->offset > d->end_at || d->size > d->end_at - d->offset)
    return bundle_fail(err, "corrupt ZIP archive: the directory (%" PRIu64 " bytes at %" PRIu64
                         ") lies outside the %zu bytes before the end record",
                       d->size, d->offset, d->end_at);
  if (d->entries > d->size / CENTRAL_SIZE)
    return bundle_fail(err, "corrupt ZIP archive: %" PRIu64 " entries cannot fit in a %" PRIu64 "-byte directory",
                       d->entries, d->size);
  return true;
}

/* One member as the central directory describes it. */
typedef struct Member {
  const uint8_t *name;
  size_t nlen;
  uint16_t flags, method;
  uint32_t crc;
  uint64_t csize, usize, offset;
  char label[140]; /* "member 'x.npy'" for messages */
} Member;

static void member_label(Member *m) {
  char shown[104];
  size_t k = m->nlen > 100 ? 100 : m->nlen;
  for (size_t j = 0; j < k; j++) shown[j] = m->name[j] >= 32 && m->name[j] < 127 ? (char)m->name[j] : '?';
  snprintf(m->label, sizeof m->label, "member '%.*s%s'", (int)k, shown, m->nlen > k ? "..." : "");
}

/* Reads the central record at *pos (within [*pos, end)) into m, advancing *pos. */
static bool read_central(const uint8_t *p, size_t *pos, size_t end, uint64_t index, Member *m, char *err) {
  size_t at = *pos;
  if (end - at < CENTRAL_SIZE || rd32(p + at) != SIG_CENTRAL)
    return bundle_fail(err, "byte %zu: corrupt ZIP directory: entry #%" PRIu64 " is not a directory record",
                       at, index + 1);
  const uint8_t *c = p + at;
  size_t nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
  if (end - at - CENTRAL_SIZE < nlen + xlen + clen)
    return bundle_fail(err, "byte %zu: corrupt ZIP directory: entry #%" PRIu64 " runs past the directory",
                       at, index + 1);
  *m = (Member){.name = c + CENTRAL_SIZE, .nlen = nlen, .flags = rd16(c + 8), .method = rd16(c + 10),
                .crc = rd32(c + 16), .csize = rd32(c + 20), .usize = rd32(c + 24), .offset = rd32(c + 42)};
  member_label(m);
  /* ZIP64 extra field: the 64-bit values of the fields saturated above, in this order */
  const uint8_t *x = c + CENTRAL_SIZE + nlen, *xend = x + xlen;
  while (xend - x >= 4) {
    uint16_t id = rd16(x), len = rd16(x + 2);
    if ((size_t)(xend - x - 4) < len)
      return bundle_fail(err, "byte %zu: corrupt ZIP directory: %s has a truncated extra field", at, m->label);
    if (id == 0x0001) {
      const uint8_t *v = x + 4, *vend = v + len;
      uint64_t *fields[3] = {&m->usize, &m->csize, &m->offset};
      for (int i = 0; i < 3; i++) {
        if (*fields[i] != 0xFFFFFFFFu) continue;
        if (vend - v < 8)
          return bundle_fail(err, "byte %zu: corrupt ZIP directory: %s has a short ZIP64 field", at, m->label);
        *fields[i] = rd64(v);
        v += 8;
      }
    }
    x += 4 + len;
  }
  *pos = at + CENTRAL_SIZE + nlen + xlen + clen;
  return true;
}

/* Inflates a raw deflate stream of csize bytes into exactly usize bytes. */
static bool inflate_member(const uint8_t *src, uint64_t csize, uint8_t *dst, uint64_t usize,
                           const Member *m, char *err) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, -15) != Z_OK) return bundle_fail(err, "%s: cannot start zlib's inflate", m->label);
  uint64_t in_left = csize, out_left = usize;
  zs.next_in = (Bytef *)src;
  zs.next_out = dst;
  int rc;
  do { /* zlib's sizes are 32-bit: feed both buffers in pieces */
    if (zs.avail_in == 0 && in_left) {
      zs.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
      in_left -= zs.avail_in;
    }
    if (zs.avail_out == 0 && out_left) {
      zs.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
      out_left -= zs.avail_out;
    }
    rc = inflate(&zs, Z_NO_FLUSH); /* Z_BUF_ERROR: no progress possible */
  } while (rc == Z_OK);
  uint64_t produced = zs.total_out;
  bool input_left = zs.avail_in != 0 || in_left != 0, output_full = zs.avail_out == 0 && out_left == 0;
  char msg[96];
  snprintf(msg, sizeof msg, "%s", zs.msg ? zs.msg : "zlib");
  inflateEnd(&zs);
  if (rc == Z_STREAM_END && produced == usize && !input_left) return true;
  switch (rc) {
  case Z_STREAM_END:
    if (produced != usize)
      return bundle_fail(err, "%s: inflates to %" PRIu64 " bytes, the directory says %" PRIu64, m->label,
                         produced, usize);
    return bundle_fail(err, "%s: the deflate stream ends before its %" PRIu64 " compressed bytes do",
                       m->label, csize);
  case Z_MEM_ERROR: return bundle_fail(err, "%s: out of memory while inflating", m->label);
  case Z_BUF_ERROR:
    return bundle_fail(err, "%s: %s", m->label,
                       output_full ? "inflates to more bytes than the directory says"
                                : "the deflate data ends early (truncated?)");
  default: return bundle_fail(err, "%s: corrupt deflate data (%s)", m->label, msg);
  }
}

/* Reads the member's .npy image and appends it to out. */
static bool read_member(const uint8_t *p, const Directory *d, const Member *m, TensorBundle *out,
                        char *err) {
  if (m->nlen < 5 || memcmp(m->name + m->nlen - 4, ".npy", 4) != 0)
    return bundle_fail(err, "%s is not a .npy array (an .npz holds NAME.npy members only)", m->label);
  if (m->flags & 1) return bundle_fail(err, "%s is encrypted", m->label);
  if (m->method != 0 && m->method != 8)
    return bundle_fail(err, "%s uses compression method %u (only stored and deflate are supported)",
                       m->label, m->method);
  uint64_t limit = d->offset; /* member data lies before the directory */
  if (m->offset > limit || limit - m->offset < LOCAL_SIZE || rd32(p + m->offset) != SIG_LOCAL)
    return bundle_fail(err, "%s: no local header at byte %" PRIu64, m->label, m->offset);
  const uint8_t *l = p + m->offset;
  uint64_t data_at = m->offset + LOCAL_SIZE + rd16(l + 26) + rd16(l + 28);
  if (data_at > limit || m->csize > limit - data_at)
    return bundle_fail(err, "%s: its %" PRIu64 " bytes at byte %" PRIu64 " run past the archive's data (%" PRIu64
                         " bytes; truncated?)",
                       m->label, m->csize, data_at, limit);
  const uint8_t *data = p + data_at;
  uint8_t *scratch = NULL;
  if (m->method == 0) {
    if (m->csize != m->usize)
      return bundle_fail(err, "%s: stored, but its sizes differ (%" PRIu64 " and %" PRIu64 ")", m->label,
                         m->csize, m->usize);
  } else {
    if (m->usize > m->csize * 1032 + 1024)
      return bundle_fail(err, "%s: claims %" PRIu64 " bytes from %" PRIu64 " compressed, more than deflate can give",
                         m->label, m->usize, m->csize);
    scratch = mem_malloc_try(m->usize ? (size_t)m->usize : 1);
    if (!scratch) return bundle_fail(err, "%s: out of memory (%" PRIu64 " bytes)", m->label, m->usize);
    if (!inflate_member(data, m->csize, scratch, m->usize, m, err)) {
      mem_free(scratch);
      return false;
    }
    data = scratch;
  }
  uint32_t crc = (uint32_t)crc32_z(0, data, (size_t)m->usize);
  bool ok = true;
  if (crc != m->crc) {
    ok = bundle_fail(err, "%s: CRC-32 mismatch (computed %08" PRIx32 ", the directory says %08" PRIx32 "): the data is corrupt",
                     m->label, crc, m->crc);
  } else {
    char nerr[NPY_ERR_SIZE];
    Tensor *t = npy_read_mem(data, (size_t)m->usize, nerr);
    if (t) bundle_add(out, (const char *)m->name, m->nlen - 4, t);
    else ok = bundle_fail(err, "%s: %s", m->label, nerr);
  }
  mem_free(scratch);
  return ok;
}

bool npz_read_mem(const void *image, size_t n, TensorBundle *out, char *err) {
  const uint8_t *p = image;
  Directory d = {0};
  if (!find_directory(p, n, &d, err)) return false;
  size_t first = out->n, pos = (size_t)d.offset, end = (size_t)(d.offset + d.size);
  bool ok = true;
  for (uint64_t i = 0; i < d.entries && ok; i++) {
    Member m;
    ok = read_central(p, &pos, end, i, &m, err);
    if (ok && memchr(m.name, 0, m.nlen)) ok = bundle_fail(err, "%s: the name contains a NUL byte", m.label);
    if (ok) ok = read_member(p, &d, &m, out, err);
  }
  if (!ok) bundle_truncate(out, first); /* leave *out as it was */
  return ok;
}
