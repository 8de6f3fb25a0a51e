/* runtime/npz.h — reading numpy .npz archives (writing: npz_write_* in runtime/npy.h).
 *
 * An .npz is a ZIP archive of NAME.npy members (numpy.savez: stored;
 * numpy.savez_compressed: deflated). The reader takes the member list from
 * the central directory (ZIP64 end records and ZIP64 extra fields included,
 * as numpy writes them), and for each member checks its local header, its
 * method (0 stored or 8 deflate; encrypted members are refused), its sizes
 * against the archive's bytes, its CRC-32, then reads the .npy image with
 * npy_read_mem (runtime/npy.h: every check of a lone .npy file). The bundle
 * name is the member name without ".npy"; a member not ending in ".npy" is
 * an error, and so is an archive with no end record.
 *
 * Deflate is zlib's (inflate with a raw window): zlib is on every Debian
 * system, is hardened against hostile input by decades of fuzzing, and
 * inflates several times faster than a small decoder of our own would.
 * A member may not claim to inflate to more than 1032 times its compressed
 * size plus 1 KiB (deflate's own ceiling), so a small corrupt archive cannot
 * ask for a huge buffer.
 */
#ifndef RELAYC_RUNTIME_NPZ_H
#define RELAYC_RUNTIME_NPZ_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/bundle.h"

/* Parses an .npz image (borrowed), appending its arrays to *out in central
 * directory order; on failure *out is unchanged and err (BUNDLE_ERR_SIZE
 * bytes) names the member and what is wrong. */
bool npz_read_mem(const void *p, size_t n, TensorBundle *out, char *err);

#endif
