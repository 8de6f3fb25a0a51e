/* eval/profile.h — `relayc --run --profile`: wall time per operator, reported after the run.
 *
 * The interpreter times every operator call that goes through its kernel
 * path (eval/vm.c's op_call: tensor kernels and the scalar slow path; the
 * VM's inline int32/float32 scalar arithmetic is not counted) and adds it to
 * the operator's row: calls and total nanoseconds. eval_main brackets vm_run
 * with profile_run_begin/profile_run_end and prints the table on stderr:
 *
 *     Operator profile: 229 calls in 152.310 ms (run 160.020 ms, ...)
 *     Name                           Calls   Total (ms)    Mean (us)  Share (%)
 *     nn.conv2d                         53      120.002       2264.2      78.79
 *     ...
 *
 * rows sorted by total time (then name), share = row / all operators, like
 * TVM's debug executor summary. When profiling is off (the default) the cost
 * is one predictable branch per operator call (profile_on is false).
 *
 *     if (profile_on) { uint64_t t0 = profile_now_ns(); ...; profile_add(op, profile_now_ns() - t0); }
 *
 * Single-threaded use: the interpreter records from its own thread only.
 */
#ifndef RELAYC_EVAL_PROFILE_H
#define RELAYC_EVAL_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* True between profile_enable and profile_disable. */
extern bool profile_on;

/* Starts collecting (clears previous figures). */
void profile_enable(void);
/* Stops collecting and frees the table. */
void profile_disable(void);

/* Monotonic clock in nanoseconds. */
static inline uint64_t profile_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Adds one call of operator `op_id` (a registry id) that took `ns`. */
void profile_add(int32_t op_id, uint64_t ns);

/* Brackets the whole run (the "run" total of the report). */
void profile_run_begin(void);
void profile_run_end(void);

/* Totals so far: operator calls and nanoseconds in operators; run time. */
uint64_t profile_total_calls(void);
uint64_t profile_total_op_ns(void);
uint64_t profile_run_ns(void);

/* Prints the table described above. */
void profile_report(FILE *out);

#endif
