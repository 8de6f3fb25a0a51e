/* ir/diag.h — source files, spans and compiler-style diagnostics.
 *
 * A Span is a half-open byte range [lo, hi) into one Source; line and column
 * are computed only when a diagnostic is printed. Every phase reports through
 * a Diag and returns a status; no phase exits the process. Output form:
 *
 *     prog.relay:12:9: error: unbound local variable %y
 *        12 |   add(%x, %y)
 *           |           ^~
 *
 * Errors are counted; after `max_errors` further errors are swallowed and one
 * "too many errors" line is printed. A warning is reported once per Diag:
 * the same warning (same text, same span) met again, as when a pass
 * pipeline re-checks the module after each pass, is dropped with its notes. Colour is used only when the sink is a
 * terminal and NO_COLOR is unset (decided by the CLI via `color`).
 *
 * Machine-readable output (--diagnostics-format=json|sarif): after
 * diag_collect_begin, every Diag initialised from then on records its reports
 * instead of printing them (text a phase writes straight to `out`, such as a
 * run-time backtrace, is kept as location-less notes of the report it
 * follows); diag_collect_end writes everything recorded as one JSON array or
 * one SARIF 2.1.0 log. The text form is untouched by all this.
 */
#ifndef RELAYC_IR_DIAG_H
#define RELAYC_IR_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct Span {
  uint32_t lo, hi; /* byte offsets, hi exclusive; lo == hi is a point */
} Span;

static inline Span span_make(uint32_t lo, uint32_t hi) { return (Span){lo, hi}; }
static inline Span span_join(Span a, Span b) {
  return (Span){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
}

typedef struct Source {
  const char *name;  /* as shown in diagnostics: the path, or "<stdin>" */
  const char *text;  /* the bytes; need not be NUL-terminated */
  size_t len;
  uint32_t *line_starts; /* lazily built offsets of each line start */
  uint32_t nlines;
  size_t mapped;         /* text is a read-only file mapping of this many bytes (0: heap) */
} Source;

/* The Source takes ownership of `text` (freed by source_free). */
Source *source_new(const char *name, char *text, size_t len);
/* Reads a whole file ("-" = stdin). A regular file is mapped read-only
 * rather than copied. NULL and errno set on I/O failure. */
Source *source_read_file(const char *path);
/* Tells the source that bytes [lo, hi) will rarely be read again (a decoded
 * metadata blob): a mapped file gives their pages back to the kernel (they
 * are read again from the file if a diagnostic needs them). */
void source_release(Source *s, size_t lo, size_t hi);
/* Tells the source that bytes [lo, hi) are about to be read once, in order
 * (a metadata blob): a mapped file maps their pages in one call rather than
 * fault by fault. A hint only; thread-safe, as is source_release. */
void source_prefetch(Source *s, size_t lo, size_t hi);
void source_free(Source *s);
/* 1-based line and column (in bytes) of an offset. */
void source_line_col(Source *s, uint32_t off, uint32_t *line, uint32_t *col);

typedef enum {
  DIAG_ERROR,   /* the input is rejected */
  DIAG_WARNING, /* suspicious but accepted */
  DIAG_NOTE,    /* attached to the previous error or warning */
} DiagLevel;

/* The phase a Diag reports for; it names the SARIF rule of a report. */
typedef enum {
  DIAG_PHASE_NONE,   /* options, files, declarations (rule "input") */
  DIAG_PHASE_SYNTAX, /* lexing, parsing, the metadata section */
  DIAG_PHASE_SCOPE,  /* name resolution */
  DIAG_PHASE_TYPE,   /* type inference, kinds, match checks */
  DIAG_PHASE_PASS,   /* program transformations */
  DIAG_PHASE_RUN,    /* evaluation (rule "runtime"); location-less reports: "input" */
} DiagPhase;

/* Spans at or above this offset refer to the Diag's extra source (the
 * --prelude library), shifted by this much; the user's file stays below. */
#define DIAG_EXTRA_BASE 0xE0000000u

typedef struct Diag {
  FILE *out;        /* where messages go (stderr in the CLI, a memstream in tests) */
  Source *src;      /* the file spans refer to */
  Source *extra;    /* spans >= DIAG_EXTRA_BASE: this text (not owned), or NULL */
  int nerrors, nwarnings;
  int max_errors;   /* 0 = unlimited */
  bool color;
  bool suppressed;  /* set once the error cap was hit */
  DiagPhase phase;  /* set by the driver before each phase (machine formats only) */
  bool repeat;      /* the last warning repeated an earlier one: its notes are dropped too */
  uint64_t warned[32]; /* recent warnings (hash of text and span), reported once each */
  bool silent;      /* count only, report nothing (diag_init_silent) */
} Diag;

void diag_init(Diag *d, FILE *out, Source *src);
/* A Diag that counts errors and warnings but reports nothing, not even to a
 * machine-format log: for a pass that tries something and falls back when
 * it would not type-check. */
void diag_init_silent(Diag *d, Source *src);
/* Lets spans >= DIAG_EXTRA_BASE point into `extra` (offset - DIAG_EXTRA_BASE). */
void diag_set_extra_source(Diag *d, Source *extra);
/* The source a span lies in (d->src or d->extra); *sp is made relative to it. */
Source *diag_span_source(const Diag *d, Span *sp);
void diag_report(Diag *d, DiagLevel lvl, Span sp, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_vreport(Diag *d, DiagLevel lvl, Span sp, const char *fmt, va_list ap);
#define diag_error(d, sp, ...) diag_report((d), DIAG_ERROR, (sp), __VA_ARGS__)
#define diag_warning(d, sp, ...) diag_report((d), DIAG_WARNING, (sp), __VA_ARGS__)
#define diag_note(d, sp, ...) diag_report((d), DIAG_NOTE, (sp), __VA_ARGS__)
/* A message with no location ("relayc: error: ..."). */
void diag_plain(Diag *d, DiagLevel lvl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A message about the whole of d->src ("prog.relay: error: ..."). */
void diag_file(Diag *d, DiagLevel lvl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- machine-readable diagnostics ---------------------------------------- */
typedef enum {
  DIAG_FORMAT_TEXT,  /* compiler-style text (the default) */
  DIAG_FORMAT_JSON,  /* one JSON array of diagnostic objects, like gcc's */
  DIAG_FORMAT_SARIF, /* a SARIF 2.1.0 log for CI systems */
} DiagFormat;

/* Parses "text", "json" or "sarif"; false for anything else. */
bool diag_format_parse(const char *s, DiagFormat *out);
/* Starts recording (json, sarif); text is a no-op. Call before any Diag exists. */
void diag_collect_begin(DiagFormat fmt);
/* True between diag_collect_begin(json|sarif) and diag_collect_end. */
bool diag_collecting(void);
/* Writes every recorded diagnostic to `out` in the chosen format, frees them
 * and stops recording. `version` and `exit_status` go into the SARIF log. */
void diag_collect_end(FILE *out, const char *version, int exit_status);

/* Levenshtein distance, capped: for "did you mean" suggestions. */
size_t edit_distance(const char *a, const char *b, size_t cap);

/* Cheap always-on assertions and unreachable markers. */
#define RELAYC_ASSERT(c)                                                        \
  do {                                                                          \
    if (!(c)) relayc_assert_fail(#c, __FILE__, __LINE__);                       \
  } while (0)
#define UNREACHABLE() relayc_assert_fail("unreachable", __FILE__, __LINE__)
_Noreturn void relayc_assert_fail(const char *what, const char *file, int line);

/* Stack-depth guard for recursive passes over deep ASTs. The CLI runs the
 * compiler on a thread with a large stack and calls stack_guard_init there;
 * stack_exhausted() is true when less than a safety margin remains. */
void stack_guard_init(size_t stack_size);
bool stack_exhausted(void);

#endif
