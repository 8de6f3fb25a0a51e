/* eval/profile.c — per-operator timing table behind `--profile` (see eval/profile.h).
 *
 * One row per registry id, allocated when profiling is enabled (the registry
 * may hold plugin operators beyond the built-ins, so the size is op_count()
 * at that moment; an id outside it lands in a catch-all row). Recording is
 * two additions; all formatting happens once, in profile_report.
 */
#include "eval/profile.h"

#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/registry.h"

bool profile_on;

typedef struct {
  uint64_t calls; /* number of calls */
  uint64_t ns;    /* total wall time */
} ProfRow;

static ProfRow *prof_rows;   /* prof_nrows + 1 entries; the last is the catch-all */
static uint32_t prof_nrows;
static uint64_t prof_run_start, prof_run_ns;

void profile_enable(void) {
  profile_disable();
  prof_nrows = op_count();
  prof_rows = mem_calloc((size_t)prof_nrows + 1, sizeof *prof_rows);
  prof_run_start = prof_run_ns = 0;
  profile_on = true;
}

void profile_disable(void) {
  mem_free(prof_rows);
  prof_rows = NULL;
  prof_nrows = 0;
  profile_on = false;
}

void profile_add(int32_t op_id, uint64_t ns) {
  if (!prof_rows) return;
  uint32_t i = op_id >= 0 && (uint32_t)op_id < prof_nrows ? (uint32_t)op_id : prof_nrows;
  prof_rows[i].calls++;
  prof_rows[i].ns += ns;
}

void profile_run_begin(void) { prof_run_start = profile_now_ns(); }

void profile_run_end(void) {
  if (prof_run_start) prof_run_ns += profile_now_ns() - prof_run_start;
  prof_run_start = 0;
}

uint64_t profile_total_calls(void) {
  uint64_t n = 0;
  for (uint32_t i = 0; prof_rows && i <= prof_nrows; i++) n += prof_rows[i].calls;
  return n;
}

uint64_t profile_total_op_ns(void) {
  uint64_t n = 0;
  for (uint32_t i = 0; prof_rows && i <= prof_nrows; i++) n += prof_rows[i].ns;
  return n;
}

uint64_t profile_run_ns(void) { return prof_run_ns; }

static const char *prof_name(uint32_t i) {
  const OpDef *d = i < prof_nrows ? op_get((int32_t)i) : NULL;
  return d && d->name ? d->name : "(other)";
}

/* Order for the report: larger total first, then by name. */
static int prof_cmp(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (prof_rows[a].ns != prof_rows[b].ns) return prof_rows[a].ns > prof_rows[b].ns ? -1 : 1;
  return strcmp(prof_name(a), prof_name(b));
}

void profile_report(FILE *out) {
  if (!prof_rows) return;
  uint32_t *order = mem_calloc((size_t)prof_nrows + 1, sizeof *order);
  uint32_t n = 0;
  for (uint32_t i = 0; i <= prof_nrows; i++)
    if (prof_rows[i].calls) order[n++] = i;
  qsort(order, n, sizeof *order, prof_cmp);
  uint64_t calls = profile_total_calls(), ns = profile_total_op_ns();
  double total_ms = (double)ns / 1e6, run_ms = (double)prof_run_ns / 1e6;
  fprintf(out, "Operator profile: %llu calls in %.3f ms (run %.3f ms, %.3f ms outside operators)\n",
          (unsigned long long)calls, total_ms, run_ms, run_ms > total_ms ? run_ms - total_ms : 0.0);
  fprintf(out, "%-30s %7s %12s %12s %10s\n", "Name", "Calls", "Total (ms)", "Mean (us)", "Share (%)");
  for (uint32_t k = 0; k < n; k++) {
    const ProfRow *r = &prof_rows[order[k]];
    double ms = (double)r->ns / 1e6;
    fprintf(out, "%-30s %7llu %12.3f %12.1f %10.2f\n", prof_name(order[k]),
            (unsigned long long)r->calls, ms, (double)r->ns / 1e3 / (double)r->calls,
            ns ? 100.0 * (double)r->ns / (double)ns : 0.0);
  }
  fprintf(out, "%-30s %7llu %12.3f %12s %10.2f\n", "Total", (unsigned long long)calls, total_ms, "",
          ns ? 100.0 : 0.0);
  fflush(out);
  mem_free(order);
}
