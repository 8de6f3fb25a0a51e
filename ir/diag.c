/* ir/diag.c — diagnostics printing (see diag.h). Line tables are built on the
 * first diagnostic for a source, so error-free runs never scan for newlines.
 *
 * Machine formats: a process-wide collector (the driver thread is the only
 * reporter) keeps every report as a record with its location already
 * resolved to line and column, because sources are freed file by file
 * before the log is written at exit. Diags initialised while collecting
 * write stray text (backtraces, parameter lists) to a memory stream; before
 * each new report and at the end that text is cut into lines and attached
 * as notes to the last error or warning, so nothing a user would see in the
 * text form is lost and stderr stays one JSON document.
 */
#include "ir/diag.h"
#include "ir/json.h"
#include "ir/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

Source *source_new(const char *name, char *text, size_t len) {
  Source *s = mem_calloc(1, sizeof *s);
  s->name = mem_strdup(name);
  s->text = text;
  s->len = len;
  return s;
}

/* A regular, non-empty file mapped read-only; NULL when mapping does not apply. */
static Source *source_map_file(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  void *p = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < UINT32_MAX)
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return NULL;
  Source *s = source_new(path, p, (size_t)st.st_size);
  s->mapped = (size_t)st.st_size;
  return s;
}

void source_release(Source *s, size_t lo, size_t hi) {
  if (!s || !s->mapped || hi > s->mapped) return;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t base = (uintptr_t)s->text;
  uintptr_t a = (base + lo + page - 1) & ~(uintptr_t)(page - 1), b = (base + hi) & ~(uintptr_t)(page - 1);
  if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

/* Populating the pages a decoder is about to read costs ~16% less CPU than
 * faulting them in (136 MB of page-cached text: 50 vs 59 ms task-clock). */
void source_prefetch(Source *s, size_t lo, size_t hi) {
  static int unsupported; /* the kernel rejected MADV_POPULATE_READ once */
  if (!s || !s->mapped || hi > s->mapped || lo >= hi || __atomic_load_n(&unsupported, __ATOMIC_RELAXED))
    return;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t base = (uintptr_t)s->text;
  uintptr_t a = (base + lo) & ~(uintptr_t)(page - 1), b = base + hi;
  if (madvise((void *)a, b - a, MADV_POPULATE_READ) != 0 && (errno == EINVAL || errno == ENOSYS))
    __atomic_store_n(&unsupported, 1, __ATOMIC_RELAXED);
}

Source *source_read_file(const char *path) {
  int is_stdin = strcmp(path, "-") == 0;
  if (!is_stdin) {
    Source *s = source_map_file(path);
    if (s) return s;
  }
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *buf = mem_malloc(cap + 1);
  for (;;) {
    if (len == cap) {
      cap *= 2;
      buf = mem_realloc(buf, cap + 1);
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  int err = ferror(f);
  if (!is_stdin) fclose(f);
  if (err) {
    mem_free(buf);
    errno = EIO;
    return NULL;
  }
  buf[len] = 0;
  return source_new(is_stdin ? "<stdin>" : path, buf, len);
}

void source_free(Source *s) {
  if (!s) return;
  mem_free((void *)s->name);
  if (s->mapped) munmap((void *)s->text, s->mapped);
  else mem_free((void *)s->text);
  mem_free(s->line_starts);
  mem_free(s);
}

static void build_lines(Source *s) {
  if (s->line_starts) return;
  size_t n = 1;
  for (size_t i = 0; i < s->len; i++) n += s->text[i] == '\n';
  s->line_starts = mem_malloc(n * sizeof *s->line_starts);
  s->nlines = 0;
  s->line_starts[s->nlines++] = 0;
  for (size_t i = 0; i < s->len; i++)
    if (s->text[i] == '\n') s->line_starts[s->nlines++] = (uint32_t)(i + 1);
}

void source_line_col(Source *s, uint32_t off, uint32_t *line, uint32_t *col) {
  build_lines(s);
  if (off > s->len) off = (uint32_t)s->len;
  uint32_t lo = 0, hi = s->nlines; /* find last start <= off */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->line_starts[mid] <= off) lo = mid; else hi = mid;
  }
  *line = lo + 1;
  *col = off - s->line_starts[lo] + 1;
}

static FILE *collect_stream(void);

void diag_init(Diag *d, FILE *out, Source *src) {
  memset(d, 0, sizeof *d);
  d->out = out;
  d->src = src;
  d->max_errors = 20;
  FILE *spill = collect_stream();
  if (spill) d->out = spill;
}

void diag_init_silent(Diag *d, Source *src) {
  memset(d, 0, sizeof *d);
  d->src = src;
  d->silent = true;
}

void diag_set_extra_source(Diag *d, Source *extra) { d->extra = extra; }

Source *diag_span_source(const Diag *d, Span *sp) {
  if (d->extra && sp->lo >= DIAG_EXTRA_BASE) {
    sp->lo -= DIAG_EXTRA_BASE;
    sp->hi = sp->hi >= DIAG_EXTRA_BASE ? sp->hi - DIAG_EXTRA_BASE : sp->lo;
    return d->extra;
  }
  return d->src;
}

static const char *level_name(DiagLevel l) {
  return l == DIAG_ERROR ? "error" : l == DIAG_WARNING ? "warning" : "note";
}
static const char *level_color(DiagLevel l) {
  return l == DIAG_ERROR ? "\033[1;31m" : l == DIAG_WARNING ? "\033[1;35m" : "\033[1;36m";
}

/* Prints the source line of `sp` with a caret under the span (clipped to the
 * line). Very long lines (a metadata blob) are shown as a window around the caret. */
static void print_excerpt(Diag *d, Source *s, Span sp) {
  enum { WINDOW = 120 };
  uint32_t line, col;
  source_line_col(s, sp.lo, &line, &col);
  uint32_t start = s->line_starts[line - 1];
  uint32_t end = start;
  while (end < s->len && s->text[end] != '\n') end++;
  if (end > start && s->text[end - 1] == '\r') end--;
  uint32_t lo = sp.lo < start ? start : sp.lo > end ? end : sp.lo;
  bool cut_left = false, cut_right = false;
  if (end - start > 2 * WINDOW) {
    if (lo > start + WINDOW) { start = lo - WINDOW / 2; cut_left = true; }
    if (end > start + 2 * WINDOW) { end = start + 2 * WINDOW; cut_right = true; }
  }
  char num[16];
  int w = snprintf(num, sizeof num, "%u", line);
  if (w < 4) w = 4; /* gcc's layout: the number right-aligned in at least 4 columns */
  fprintf(d->out, " %*s | %s", w, num, cut_left ? "..." : "");
  for (uint32_t i = start; i < end; i++) {
    unsigned char c = (unsigned char)s->text[i];
    fputc(c == '\t' || (c >= 32 && c < 127) ? c : '?', d->out);
  }
  fprintf(d->out, "%s\n", cut_right ? "..." : "");
  fprintf(d->out, " %*s | %s", w, "", cut_left ? "   " : "");
  for (uint32_t i = start; i < lo && i < end; i++) fputc(s->text[i] == '\t' ? '\t' : ' ', d->out);
  if (d->color) fputs("\033[1;32m", d->out);
  fputc('^', d->out);
  uint32_t hi = sp.hi < end ? sp.hi : end;
  for (uint32_t i = lo + 1; i < hi; i++) fputc('~', d->out);
  if (d->color) fputs("\033[0m", d->out);
  fputc('\n', d->out);
}

/* True when this warning (its text and span) was reported before by d;
 * else remembers it (the 32 most recent distinct warnings, as hashes). */
static bool repeated_warning(Diag *d, Span sp, const char *fmt, va_list ap) {
  char text[512];
  va_list ap2;
  va_copy(ap2, ap);
  vsnprintf(text, sizeof text, fmt, ap2);
  va_end(ap2);
  uint64_t h = 14695981039346656037u; /* FNV-1a over the text, then the span */
  for (const char *c = text; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211u;
  h = (h ^ sp.lo) * 1099511628211u;
  h = ((h ^ sp.hi) * 1099511628211u) | 1; /* 0 marks an empty slot */
  size_t n = sizeof d->warned / sizeof d->warned[0];
  for (size_t i = 0; i < n; i++)
    if (d->warned[i] == h) return true;
  memmove(d->warned + 1, d->warned, (n - 1) * sizeof d->warned[0]);
  d->warned[0] = h;
  return false;
}

static bool count_and_check(Diag *d, DiagLevel lvl) {
  if (d->silent) {
    d->nerrors += lvl == DIAG_ERROR;
    d->nwarnings += lvl == DIAG_WARNING;
    return false;
  }
  if (lvl != DIAG_NOTE) d->repeat = false;
  else if (d->repeat) return false;
  if (lvl == DIAG_ERROR) {
    d->nerrors++;
    if (d->max_errors && d->nerrors > d->max_errors) {
      if (!d->suppressed)
        fprintf(d->out, "relayc: too many errors (%d), stopping here\n", d->max_errors);
      d->suppressed = true;
      return false;
    }
  } else if (lvl == DIAG_WARNING) {
    d->nwarnings++;
  }
  return !(d->suppressed && lvl == DIAG_NOTE);
}

static void collect_report(Diag *d, DiagLevel lvl, const Span *sp, bool whole_file, const char *fmt,
                           va_list ap);

void diag_vreport(Diag *d, DiagLevel lvl, Span sp, const char *fmt, va_list ap) {
  if (lvl == DIAG_WARNING && repeated_warning(d, sp, fmt, ap)) {
    d->repeat = true;
    return;
  }
  if (collect_stream()) {
    if (count_and_check(d, lvl)) collect_report(d, lvl, d->src ? &sp : NULL, false, fmt, ap);
    return;
  }
  if (!count_and_check(d, lvl)) return;
  if (!d->src) {
    fprintf(d->out, "relayc: %s: ", level_name(lvl));
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
    return;
  }
  uint32_t line, col;
  Source *s = diag_span_source(d, &sp);
  source_line_col(s, sp.lo, &line, &col);
  if (d->color) fputs("\033[1m", d->out);
  fprintf(d->out, "%s:%u:%u: ", s->name, line, col);
  if (d->color) fprintf(d->out, "%s", level_color(lvl));
  fprintf(d->out, "%s:", level_name(lvl));
  if (d->color) fputs("\033[0m\033[1m", d->out);
  fputc(' ', d->out);
  vfprintf(d->out, fmt, ap);
  if (d->color) fputs("\033[0m", d->out);
  fputc('\n', d->out);
  print_excerpt(d, s, sp);
}

void diag_report(Diag *d, DiagLevel lvl, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vreport(d, lvl, sp, fmt, ap);
  va_end(ap);
}

void diag_plain(Diag *d, DiagLevel lvl, const char *fmt, ...) {
  if (!count_and_check(d, lvl)) return;
  va_list ap;
  va_start(ap, fmt);
  if (collect_stream()) {
    collect_report(d, lvl, NULL, false, fmt, ap);
  } else {
    fprintf(d->out, "relayc: %s: ", level_name(lvl));
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
  }
  va_end(ap);
}

void diag_file(Diag *d, DiagLevel lvl, const char *fmt, ...) {
  if (!count_and_check(d, lvl)) return;
  va_list ap;
  va_start(ap, fmt);
  if (collect_stream()) {
    collect_report(d, lvl, NULL, d->src != NULL, fmt, ap);
  } else {
    fprintf(d->out, "%s: %s: ", d->src ? d->src->name : "relayc", level_name(lvl));
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
  }
  va_end(ap);
}

size_t edit_distance(const char *a, const char *b, size_t cap) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 64 || m > 64) return cap + 1;
  size_t row[65];
  for (size_t j = 0; j <= m; j++) row[j] = j;
  for (size_t i = 1; i <= n; i++) {
    size_t prev = row[0], best = row[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t cur = row[j];
      size_t sub = prev + (a[i - 1] != b[j - 1]);
      size_t v = cur + 1 < row[j - 1] + 1 ? cur + 1 : row[j - 1] + 1;
      row[j] = v < sub ? v : sub;
      if (row[j] < best) best = row[j];
      prev = cur;
    }
    if (best > cap) return cap + 1;
  }
  return row[m];
}

/* ------------------------------------------------------- machine formats */

/* One recorded report. Positions are 1-based; 0 means "no position". */
typedef struct Rec {
  DiagLevel level;
  uint32_t rule;                  /* index into rules[] */
  char *file;                     /* NULL: no location at all */
  uint32_t line, col;             /* start (byte column, as in the text form) */
  uint32_t end_line, end_col;     /* last character of the span (inclusive) */
  uint32_t ucol, uend_col;        /* code-point columns for SARIF; uend_col exclusive */
  char *message;
  bool top;                       /* an error, warning or stray note; else a note of the last top */
} Rec;

static const struct {
  const char *id, *name, *text;
} rules[] = {
    {"input", "Input", "files, options, declarations and --input/--output bindings that cannot be used"},
    {"syntax", "Syntax", "lexical, syntax and metadata-section errors"},
    {"scope", "Scope", "names that are unbound, defined twice or misspelled"},
    {"type", "Type", "type, kind and pattern-match errors and warnings"},
    {"pass", "Pass", "errors reported by program transformations"},
    {"runtime", "Runtime", "errors while evaluating @main"},
};

static struct {
  DiagFormat format;
  FILE *spill;             /* where collecting Diags' `out` points; NULL when not collecting */
  char *spill_buf;
  size_t spill_len, spill_done;
  VEC(Rec) recs;
  bool any_top;            /* some record is top-level (notes attach to the last one) */
} coll;

static FILE *collect_stream(void) { return coll.spill; }
bool diag_collecting(void) { return coll.spill != NULL; }

bool diag_format_parse(const char *s, DiagFormat *out) {
  if (strcmp(s, "text") == 0) *out = DIAG_FORMAT_TEXT;
  else if (strcmp(s, "json") == 0) *out = DIAG_FORMAT_JSON;
  else if (strcmp(s, "sarif") == 0) *out = DIAG_FORMAT_SARIF;
  else return false;
  return true;
}

void diag_collect_begin(DiagFormat fmt) {
  if (fmt == DIAG_FORMAT_TEXT || coll.spill) return;
  coll.format = fmt;
  coll.spill = open_memstream(&coll.spill_buf, &coll.spill_len);
  if (!coll.spill) mem_oom(0);
}

static void add_rec(Rec r) {
  r.top = r.level != DIAG_NOTE || !coll.any_top;
  coll.any_top |= r.top;
  vec_push(coll.recs, r);
}

/* Text written straight to a collecting Diag's stream since the last call:
 * each non-empty line becomes a location-less note ("note: " and "relayc: "
 * prefixes dropped, indentation trimmed). */
static void harvest_spill(void) {
  fflush(coll.spill);
  const char *p = coll.spill_buf + coll.spill_done, *end = coll.spill_buf + coll.spill_len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    const char *b = p;
    while (b < e && (*b == ' ' || *b == '\t')) b++;
    const char *t = e;
    while (t > b && (t[-1] == '\r' || t[-1] == ' ')) t--;
    if (t - b > 8 && strncmp(b, "relayc: ", 8) == 0) b += 8;
    if (t - b > 6 && strncmp(b, "note: ", 6) == 0) b += 6;
    if (t > b) {
      char *msg = mem_malloc((size_t)(t - b) + 1);
      memcpy(msg, b, (size_t)(t - b));
      msg[t - b] = 0;
      add_rec((Rec){.level = DIAG_NOTE, .message = msg});
    }
    p = nl ? nl + 1 : end;
  }
  coll.spill_done = coll.spill_len;
}

/* Line, byte column and code-point column of `off`. */
static void locate(Source *s, uint32_t off, uint32_t *line, uint32_t *col, uint32_t *ucol) {
  source_line_col(s, off, line, col);
  uint32_t start = s->line_starts[*line - 1], n = 1;
  for (uint32_t i = start; i < off && i < s->len; i++) n += ((unsigned char)s->text[i] & 0xC0) != 0x80;
  *ucol = n;
}

static void collect_report(Diag *d, DiagLevel lvl, const Span *sp, bool whole_file, const char *fmt,
                           va_list ap) {
  harvest_spill();
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  Rec r = {.level = lvl};
  r.message = mem_malloc(n > 0 ? (size_t)n + 1 : 1);
  r.message[0] = 0;
  if (n > 0) vsnprintf(r.message, (size_t)n + 1, fmt, ap);
  r.rule = sp && d->phase < sizeof rules / sizeof rules[0] ? (uint32_t)d->phase : 0;
  if (sp) {
    Span s2 = *sp;
    Source *s = diag_span_source(d, &s2);
    uint32_t last = s2.hi > s2.lo ? s2.hi - 1 : s2.lo, ucol_last;
    r.file = mem_strdup(s->name);
    locate(s, s2.lo, &r.line, &r.col, &r.ucol);
    locate(s, last < s2.lo ? s2.lo : last, &r.end_line, &r.end_col, &ucol_last);
    r.uend_col = ucol_last + 1;
  } else if (whole_file) {
    r.file = mem_strdup(d->src->name);
  }
  add_rec(r);
}

static const char *sarif_level(DiagLevel l) {
  return l == DIAG_ERROR ? "error" : l == DIAG_WARNING ? "warning" : "note";
}

static void json_position(FILE *out, const Rec *r) {
  fputs("\"file\": ", out);
  json_cstring(out, r->file);
  if (r->line)
    fprintf(out, ", \"line\": %u, \"column\": %u, \"end_line\": %u, \"end_column\": %u", r->line, r->col,
            r->end_line, r->end_col);
  else
    fputs(", \"line\": null, \"column\": null, \"end_line\": null, \"end_column\": null", out);
}

/* gcc's shape: one array, one object per error or warning, its notes inside. */
static void write_json(FILE *out) {
  fputc('[', out);
  bool first = true;
  for (size_t i = 0; i < coll.recs.len; i++) {
    const Rec *r = &coll.recs.data[i];
    if (!r->top) continue;
    fprintf(out, "%s\n{\"severity\": \"%s\", \"rule\": \"%s\", ", first ? "" : ",", level_name(r->level),
            rules[r->rule].id);
    first = false;
    json_position(out, r);
    fputs(", \"message\": ", out);
    json_cstring(out, r->message);
    fputs(", \"notes\": [", out);
    for (size_t k = i + 1; k < coll.recs.len && !coll.recs.data[k].top; k++) {
      const Rec *nt = &coll.recs.data[k];
      fprintf(out, "%s{\"severity\": \"note\", ", k > i + 1 ? ", " : "");
      json_position(out, nt);
      fputs(", \"message\": ", out);
      json_cstring(out, nt->message);
      fputc('}', out);
    }
    fputs("]}", out);
  }
  fputs(first ? "]\n" : "\n]\n", out);
}

/* A file name as a URI reference: absolute paths get file://, bytes outside
 * RFC 3986's unreserved and path characters are percent-encoded. */
static void sarif_uri(FILE *out, const char *name) {
  static const char keep[] = "-._~/!$&'()*+,;=:@";
  fputc('"', out);
  if (name[0] == '/') fputs("file://", out);
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
        (*p != 0 && strchr(keep, *p)))
      fputc(*p, out);
    else
      fprintf(out, "%%%02X", *p);
  }
  fputc('"', out);
}

static void sarif_physical(FILE *out, const Rec *r) {
  fputs("\"physicalLocation\": {\"artifactLocation\": {\"uri\": ", out);
  sarif_uri(out, r->file);
  fputc('}', out);
  if (r->line)
    fprintf(out, ", \"region\": {\"startLine\": %u, \"startColumn\": %u, \"endLine\": %u, \"endColumn\": %u}",
            r->line, r->ucol, r->end_line, r->uend_col);
  fputc('}', out);
}

static void sarif_result(FILE *out, size_t i) {
  const Rec *r = &coll.recs.data[i];
  size_t end = i + 1;
  while (end < coll.recs.len && !coll.recs.data[end].top) end++;
  fprintf(out, "        {\"ruleId\": \"%s\", \"ruleIndex\": %u, \"level\": \"%s\",\n", rules[r->rule].id, r->rule,
          sarif_level(r->level));
  /* the message, then the notes that have no location of their own */
  size_t len = strlen(r->message);
  for (size_t k = i + 1; k < end; k++)
    if (!coll.recs.data[k].file) len += 1 + strlen(coll.recs.data[k].message);
  char *text = mem_malloc(len + 1);
  size_t at = strlen(r->message);
  memcpy(text, r->message, at);
  for (size_t k = i + 1; k < end; k++) {
    const Rec *nt = &coll.recs.data[k];
    if (nt->file) continue;
    text[at++] = '\n';
    memcpy(text + at, nt->message, strlen(nt->message));
    at += strlen(nt->message);
  }
  text[at] = 0;
  fputs("         \"message\": {\"text\": ", out);
  json_string(out, text, at);
  mem_free(text);
  fputs("},\n         \"locations\": [", out);
  if (r->file) {
    fputc('{', out);
    sarif_physical(out, r);
    fputc('}', out);
  }
  fputs("],\n         \"relatedLocations\": [", out);
  uint32_t id = 0;
  for (size_t k = i + 1; k < end; k++) {
    const Rec *nt = &coll.recs.data[k];
    if (!nt->file) continue;
    fprintf(out, "%s\n           {\"id\": %u, \"message\": {\"text\": ", id ? "," : "", id);
    json_cstring(out, nt->message);
    fputs("}, ", out);
    sarif_physical(out, nt);
    fputc('}', out);
    id++;
  }
  fputs("]}", out);
}

static void write_sarif(FILE *out, const char *version, int exit_status) {
  fputs("{\n  \"$schema\": \"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
        "sarif-schema-2.1.0.json\",\n  \"version\": \"2.1.0\",\n  \"runs\": [\n    {\n"
        "      \"tool\": {\"driver\": {\"name\": \"relayc\", \"version\": ",
        out);
  json_cstring(out, version);
  fputs(", \"informationUri\": \"man:relayc(1)\",\n        \"rules\": [", out);
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    fprintf(out, "%s\n          {\"id\": \"%s\", \"name\": \"%s\", \"shortDescription\": {\"text\": ", i ? "," : "",
            rules[i].id, rules[i].name);
    json_cstring(out, rules[i].text);
    fputs("}}", out);
  }
  fputs("]}},\n      \"columnKind\": \"unicodeCodePoints\",\n", out);
  fprintf(out, "      \"invocations\": [{\"executionSuccessful\": %s, \"exitCode\": %d}],\n",
          exit_status == 2 ? "false" : "true", exit_status);
  fputs("      \"results\": [", out);
  bool first = true;
  for (size_t i = 0; i < coll.recs.len; i++) {
    if (!coll.recs.data[i].top) continue;
    fputs(first ? "\n" : ",\n", out);
    first = false;
    sarif_result(out, i);
  }
  fputs(first ? "]\n    }\n  ]\n}\n" : "\n      ]\n    }\n  ]\n}\n", out);
}

void diag_collect_end(FILE *out, const char *version, int exit_status) {
  if (!coll.spill) return;
  harvest_spill();
  if (coll.format == DIAG_FORMAT_SARIF) write_sarif(out, version, exit_status);
  else write_json(out);
  fflush(out);
  for (size_t i = 0; i < coll.recs.len; i++) {
    mem_free(coll.recs.data[i].file);
    mem_free(coll.recs.data[i].message);
  }
  vec_free(coll.recs);
  fclose(coll.spill);
  free(coll.spill_buf);
  coll.spill = NULL;
  coll.spill_buf = NULL;
  coll.spill_len = coll.spill_done = 0;
  coll.any_top = false;
}

_Noreturn void relayc_assert_fail(const char *what, const char *file, int line) {
  fprintf(stderr, "relayc: internal error: %s (%s:%d)\n", what, file, line);
  abort();
}

static _Thread_local uintptr_t stack_limit;

void stack_guard_init(size_t stack_size) {
  char here;
  size_t margin = stack_size / 8 > (256u << 10) ? stack_size / 8 : (256u << 10);
  stack_limit = (uintptr_t)&here - (stack_size - margin);
}

bool stack_exhausted(void) {
  char here;
  return stack_limit && (uintptr_t)&here < stack_limit;
}
