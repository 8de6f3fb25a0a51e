/* tests/fuzz/fuzz_frontend.c — libFuzzer target for the front end.
 * Any byte string goes through parse → resolve → infer → print; the only
 * acceptable outcomes are diagnostics, never a crash, hang or leak. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/ast.h"
#include "ir/mem.h"
#include "ir/print.h"
#include "parser/parser.h"
#include "sema/resolve.h"

bool infer_module(Module *m, Diag *d) __attribute__((weak));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *sink;
  if (!sink) {
    sink = fopen("/dev/null", "w");
    stack_guard_init(8u << 20);
  }
  char *text = mem_malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  Source *src = source_new("fuzz.relay", text, size);
  Diag d;
  diag_init(&d, sink, src);
  Module *m = parse_module(src, &d);
  if (d.nerrors == 0) resolve_module(m, &d);
  if (d.nerrors == 0 && infer_module) infer_module(m, &d);
  if (d.nerrors == 0) print_module(sink, m, (PrintOptions){.types = infer_module != NULL});
  module_free(m);
  source_free(src);
  return 0;
}
