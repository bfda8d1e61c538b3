#ifndef C_TEST_CONCURRENCY_H
#define C_TEST_CONCURRENCY_H

/// How many tests the test process runs at once unless the environment says otherwise
/// (`SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH`); set before Swift Testing starts.
int courier_test_parallelization_width(void);

#endif
