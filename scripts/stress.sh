#!/usr/bin/env bash
# Runs the whole test suite N times to find flaky tests and crashes.
#
#   scripts/stress.sh N [extra swift test arguments, e.g. --filter Redirect]
#
# Builds once (swift build --build-tests), then runs `swift test --skip-build` N times, keeping
# each run's log in $STRESS_LOG_DIR (default .build/stress/<date-time>/run-<i>.log). Each run
# is bounded by $STRESS_RUN_TIMEOUT seconds (default 900). At the end it prints, for every test
# that failed, in how many runs it failed, and for every crash its fatal error line and the
# first frames of its stack trace.
#
# Exit status: 0 when every run passed, 1 when any run failed or crashed, 2 on a usage or
# build error.
set -u

usage() { echo "usage: $0 N [swift test arguments]" >&2; exit 2; }
[ $# -ge 1 ] || usage
runs=$1
shift
case $runs in '' | *[!0-9]*) usage ;; esac
[ "$runs" -ge 1 ] && [ "$runs" -le 1000 ] || usage

cd "$(dirname "$0")/.." || exit 2
command -v swift >/dev/null 2>&1 || PATH=/opt/swift/usr/bin:$PATH
run_timeout=${STRESS_RUN_TIMEOUT:-900}
logs=${STRESS_LOG_DIR:-.build/stress/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$logs" || exit 2

echo "building (log: $logs/build.log)"
if ! swift build --build-tests >"$logs/build.log" 2>&1; then
    grep -E "error:" "$logs/build.log" | head -20
    echo "build failed" >&2
    exit 2
fi

# A run crashed when the test process died before Swift Testing's closing "Test run with N tests"
# line. (Crash reports inside a passing run's log come from the child processes of
# Catalogue/ProcessStoppingCases, whose known crashes are that test's outcome, not the run's.)
crashed() { ! grep -qE "Test run with [0-9]+ tests?" "$1"; }

failed_runs=0
for i in $(seq 1 "$runs"); do
    log=$logs/run-$i.log
    start=$(date +%s)
    timeout -k 10 "$run_timeout" swift test --skip-build "$@" >"$log" 2>&1
    status=$?
    seconds=$(( $(date +%s) - start ))
    if [ $status -eq 0 ]; then
        echo "run $i/$runs: passed in ${seconds}s"
    else
        failed_runs=$((failed_runs + 1))
        case $status in
            124 | 137) what="timed out after ${run_timeout}s" ;;
            *) what="failed (exit status $status)" ;;
        esac
        crashed "$log" && what="$what, crashed"
        echo "run $i/$runs: $what in ${seconds}s, log: $log"
    fi
done

echo
echo "$failed_runs of $runs runs failed; logs in $logs"
[ $failed_runs -eq 0 ] && exit 0

echo
echo "Failing tests (runs failed in, test):"
# Swift Testing: '✘ Test "name" failed after …' (not the closing 'Test run with …' line);
# XCTest: "Test Case '…' failed". Counted once per run.
for log in "$logs"/run-*.log; do
    sed -nE -e 's/^.{0,8}Test (.+) failed after .*/\1/p' \
            -e "s/^Test Case '(.+)' failed .*/\\1/p" "$log" \
        | grep -v '^run with ' | sed -E 's/ with [0-9]+ test cases?$//' | sort -u
done | sort | uniq -c | sort -rn

echo
echo "Crashes (fatal error and first stack frames):"
crashes=0
for log in "$logs"/run-*.log; do
    if crashed "$log"; then
        crashes=$((crashes + 1))
        echo "--- $log"
        grep -m 3 -E "Fatal error|Program crashed|Precondition failed|Assertion failed" "$log"
        # The runtime's own trace ("Current stack trace:") or the backtracer's ("Thread N crashed:").
        grep -m 1 -A 10 -E 'Current stack trace:|Thread [0-9]+ ("[^"]*" )?crashed:' "$log" | tail -n +2
        # Swift Testing names the tests that had started; the crash happened in one of those without an end.
        started=$(sed -nE 's/^.{0,8}Test (".+") started\.$/\1/p' "$log" | sort -u)
        ended=$(sed -nE 's/^.{0,8}Test (".+") (passed|failed).*/\1/p' "$log" | sort -u)
        comm -23 <(echo "$started") <(echo "$ended") | sed 's/^/    still running: /' | head -10
    fi
done
[ $crashes -eq 0 ] && echo "none"
exit 1
