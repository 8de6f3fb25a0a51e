/* bench/bench_metadata.c — load time of a big `#[metadata]` section.
 *
 * Loads the section of FILE (everything after its `#[metadata]`) with
 * metadata_load three times, each into a fresh module, and prints each time
 * and the median; then times metadata_write of the loaded constants to
 * /dev/null. Pair it with bench/gen_metadata.py:
 *
 *     python3 bench/gen_metadata.py -o /tmp/big.relay
 *     make build/librelayc.a && mkdir -p build/bench && gcc -O2 -std=c17 -D_GNU_SOURCE -I. \
 *       -o build/bench/bench_metadata bench/bench_metadata.c build/librelayc.a \
 *       $(pkg-config --libs jansson libffi openblas) -lm -lpthread -ldl
 *     build/bench/bench_metadata /tmp/big.relay
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ast.h"
#include "ir/metadata_write.h"
#include "parser/metadata.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE.relay\n", argv[0]);
    return 2;
  }
  Source *src = source_read_file(argv[1]);
  if (!src) {
    perror(argv[1]);
    return 2;
  }
  const char *mark = "#[metadata]", *at = NULL;
  for (const char *p = src->text; (p = memmem(p, src->len - (size_t)(p - src->text), mark, 11));
       p++)
    at = p;
  if (!at) {
    fprintf(stderr, "%s: no #[metadata] section\n", argv[1]);
    return 2;
  }
  size_t off = (size_t)(at - src->text) + 11;
  double t[3];
  Module *m = NULL;
  for (int r = 0; r < 3; r++) {
    module_free(m);
    m = module_new(src);
    Diag d;
    diag_init(&d, stderr, src);
    double t0 = now();
    bool ok = metadata_load(m, src->text + off, src->len - off, (uint32_t)off, &d);
    t[r] = now() - t0;
    if (!ok) return 1;
    printf("run %d: %.3f s (%u constants, %.1f MB of section)\n", r + 1, t[r], m->nmeta_consts,
           (double)(src->len - off) / 1e6);
  }
  qsort(t, 3, sizeof t[0], cmp_double);
  printf("metadata_load median: %.3f s\n", t[1]);
  FILE *null = fopen("/dev/null", "w");
  double t0 = now();
  metadata_write(null, m->meta_consts, m->nmeta_consts);
  fclose(null);
  printf("metadata_write: %.3f s\n", now() - t0);
  module_free(m);
  source_free(src);
  return 0;
}
