/* tests/unit/ut_prog.c — a test program through the front end (tests/unit/ut_prog.h). */
#include "tests/unit/ut_prog.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "parser/parser.h"
#include "sema/infer.h"
#include "sema/resolve.h"
#include "transform/pass.h"

bool ut_check(UtProg *p, const char *text) {
  memset(p, 0, sizeof *p);
  p->src = source_new("t.relay", mem_strdup(text), strlen(text));
  p->errf = open_memstream(&p->err, &p->errlen);
  diag_init(&p->d, p->errf, p->src);
  p->m = parse_module(p->src, &p->d);
  if (p->d.nerrors == 0) resolve_module(p->m, &p->d);
  if (p->d.nerrors == 0) infer_module(p->m, &p->d);
  return p->d.nerrors == 0;
}

void ut_load(UtProg *p, const char *text) {
  if (!ut_check(p, text)) ck_abort_msg("program rejected:\n%s\n%s", ut_errors(p), text);
}

void ut_passes(UtProg *p, const char *spec) {
  PassPipeline pl;
  pass_pipeline_init(&pl);
  ck_assert(pass_pipeline_parse(&pl, spec, stderr));
  int st = pass_pipeline_run(&pl, p->m, &p->d, NULL);
  pass_pipeline_fini(&pl);
  ck_assert_msg(st == 0, "%s failed:\n%s", spec, ut_errors(p));
}

const char *ut_errors(UtProg *p) {
  fflush(p->errf);
  return p->err ? p->err : "";
}

void ut_unload(UtProg *p) {
  module_free(p->m);
  source_free(p->src);
  fclose(p->errf);
  free(p->err);
}
