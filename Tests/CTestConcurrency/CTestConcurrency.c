// Bounds how many tests run at once in the test process.
//
// Swift Testing starts every test of the suite at once by default. Each integration test holds
// servers, event-loop threads and sockets, so on a 2-core machine several hundred threads
// compete, thread creation and joins queue on glibc's stack lock, and the few threads of
// Swift's cooperative pool wait behind them: unrelated tests then see their timeouts fire late
// (issue 22, found with the stall watchdog's thread dumps). Eight at a time keeps the suite
// fast and every timing honest.
//
// Swift Testing reads the width from the environment when the run starts, after this library's
// constructor has run. A value set by the caller wins.
#include "CTestConcurrency.h"

#include <stdlib.h>

static const char *const widthVariable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";

int courier_test_parallelization_width(void) {
    const char *value = getenv(widthVariable);
    return value ? atoi(value) : 0;
}

__attribute__((constructor)) static void courier_bound_test_parallelization(void) {
    setenv(widthVariable, "8", 0);
}
