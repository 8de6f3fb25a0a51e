/* tests/unit/unit_run.h — the end of every Check suite's main: run the suite.
 *
 * unit_run runs every test of s with Check's normal output (forking per
 * test unless CK_FORK=no), frees the runner and the kernels' thread pool
 * (so a memory checker sees it gone), and returns main's exit status:
 * EXIT_SUCCESS when no test failed, EXIT_FAILURE otherwise. Set-up a suite
 * needs (stack_guard_init, temporary folders, environment) stays in its
 * main, before the call; clean-up after it.
 *
 *   int main(void) { stack_guard_init(8u << 20); return unit_run(lexer_suite()); }
 */
#ifndef RELAYC_TESTS_UNIT_RUN_H
#define RELAYC_TESTS_UNIT_RUN_H

#include <check.h>

int unit_run(Suite *s);

#endif
