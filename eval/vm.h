/* eval/vm.h — the interpreter loop over eval/code.h bytecode.
 *
 * Relay calls never recurse on the C stack: frames live in a heap array and
 * registers in one growable value stack; tail calls reuse the frame. Limits
 * (VmLimits) stop runaway recursion with "stack overflow: recursion deeper
 * than N calls" instead of exhausting memory. Run-time errors are reported
 * through the Diag at the failing expression's span, followed by a short
 * Relay-level backtrace, and the run returns VM_ERROR (exit status 3).
 */
#ifndef RELAYC_EVAL_VM_H
#define RELAYC_EVAL_VM_H

#include <stdint.h>

#include "eval/code.h"
#include "ir/diag.h"
#include "runtime/value.h"

enum { VM_OK = 0, VM_ERROR = 3 };

typedef struct VmLimits {
  uint64_t max_frames;     /* deepest call nesting (default 10^7) */
  uint64_t max_stack_bytes; /* bytes of registers (default 8 GiB) */
  uint64_t max_steps;      /* calls, tail calls and loop iterations before "step budget
                              exhausted" (default: no limit); for fuzzers and sandboxes */
} VmLimits;

#define VM_DEFAULT_MAX_FRAMES 10000000ull
#define VM_DEFAULT_MAX_STACK_BYTES (8ull << 30)

/* Process-wide defaults for the fields a run's VmLimits leaves 0 (or every
 * field when it passes NULL), e.g. FoldConstant's compile-time runs
 * (eval/closed.c); a field 0 here keeps the built-in default. Set once at
 * start-up, before any run (not thread-safe). tests/fuzz/fuzz_passes.c sets a
 * step budget this way so no input can hang it. */
void vm_set_default_limits(const VmLimits *limits);

/* Runs `entry` on `args` (CONSUMED; nargs == entry->nparams). On VM_OK the
 * result (owned) is in *result. `limits` may be NULL (defaults). */
int vm_run(const Program *p, const Code *entry, Value *args, uint32_t nargs, Value *result,
           Diag *d, const VmLimits *limits);

/* Calls a closure value (borrowed) on args (consumed), for hosts and tests. */
int vm_call_closure(const Program *p, const Value *closure, Value *args, uint32_t nargs,
                    Value *result, Diag *d, const VmLimits *limits);

#endif
