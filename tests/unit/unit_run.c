/* tests/unit/unit_run.c — running a Check suite from main (tests/unit/unit_run.h). */
#include "tests/unit/unit_run.h"

#include <stdlib.h>

#include "runtime/threadpool.h"

int unit_run(Suite *s) {
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  threadpool_shutdown();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
