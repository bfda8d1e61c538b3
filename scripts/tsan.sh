#!/usr/bin/env bash
# Builds the package and its tests with ThreadSanitizer and runs the whole suite under it.
#
#   scripts/tsan.sh [extra `swift test` arguments for every group, e.g. --skip K2]
#
# Scratch folder: .build-tsan (override with TSAN_SCRATCH). Log: $TSAN_SCRATCH/tsan-test.log.
# Exits non-zero when the build fails, a test fails, or TSan reports anything at all.
#
# Two things make the run meaningful on Linux:
# - scripts/tsan-mutex-annotations.c is preloaded into the test process. Swift's
#   Synchronization.Mutex hands a contended lock over inside libswiftSynchronization.so (not
#   built with TSan) through the kernel, so without it TSan reports every contended critical
#   section as a race. The library tells TSan about those hand-overs; it suppresses nothing.
# - scripts/tsan-suppressions.txt silences reports that lie entirely inside uninstrumented
#   system libraries; every entry says why. It never names a frame of this package.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="/opt/swift/usr/bin:$PATH"
scratch="${TSAN_SCRATCH:-.build-tsan}"
root="$(pwd)"
mkdir -p "$scratch"
log="$scratch/tsan-test.log"
annotations="$scratch/libtsan-mutex-annotations.so"

stamp() { date +%s; }
start=$(stamp)

echo "== building scripts/tsan-mutex-annotations.c"
clang -O1 -Wall -Wextra -Werror -shared -fPIC -fdollars-in-identifiers \
  scripts/tsan-mutex-annotations.c -o "$annotations" -ldl

echo "== swift build --build-tests --sanitize=thread --scratch-path $scratch"
build_log="$scratch/tsan-build.log"
if ! swift build --build-tests --sanitize=thread --scratch-path "$scratch" >"$build_log" 2>&1; then
  grep -E "error:" "$build_log" | sort -u | head -40 || true
  tail -20 "$build_log"
  echo "error: the TSan build failed (full log: $build_log)" >&2
  exit 1
fi
if grep -E "(Sources|Tests)/.*: warning:" "$build_log"; then
  echo "error: the build has warnings (above)" >&2
  exit 1
fi
built=$(stamp)
echo "   built in $((built - start)) s"

# Under TSan everything is several times slower; running the tests one at a time keeps the
# 2-core machines from starving the cooperative pool (hang guards are sized for a normal
# parallel run). Each group runs in a process of its own: TSan's runtime has been seen to
# crash or spin inside itself (TraceSwitchPart, MetaMap::FreeRange) late in one long process
# of the whole suite, never in shorter ones. Extra arguments go to every group.
# Each group: a --filter pattern, and optionally a --skip pattern after a "|".
groups=(
  "CourierWireTests"
  "CourierHTTP1Tests"
  "CourierTLSTests"
  "CourierTestServerTests"
  "CourierTests\\..*Cases"
  "CourierTests\\.|Cases"
  "ChatCaveServerTests"
  "ChatCaveTests"
)
: >"$log"
test_status=0
runtime_crashes=0
group_log="$scratch/tsan-group.log"

# TSan's own runtime sometimes crashes: at exit (a SEGV in its interceptor metadata under
# __cxa_finalize / ios_base::Init::~Init, after every test passed), or inside itself late in a
# long process ("CHECK failed: tsan_rtl.cpp … trace_part_recycle", "nested bug in the same
# thread"). With no TSan report and no failed test in the log, that is no finding about this
# package's code: such a group is run once more, and the crash is counted apart. A second crash
# fails the run.
runtime_crash() {
  ! grep -qE "^WARNING: ThreadSanitizer:" "$1" \
    && ! grep -qE "^✘ Test .* (failed after|recorded an issue)" "$1" \
    && grep -qE "^==[0-9]+==ERROR: ThreadSanitizer: SEGV|CHECK failed: tsan|ThreadSanitizer: nested bug|ThreadSanitizer:DEADLYSIGNAL" "$1"
}

run_group() {
  COURIER_TSAN=1 TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 suppressions=$root/scripts/tsan-suppressions.txt" \
  LD_PRELOAD="$root/$annotations${LD_PRELOAD:+:$LD_PRELOAD}" \
    timeout --signal=INT --kill-after=60s "${TSAN_GROUP_TIMEOUT:-20m}" \
    swift test --skip-build --sanitize=thread --scratch-path "$scratch" --no-parallel "$@" \
    >"$group_log" 2>&1
}

for group in "${groups[@]}"; do
  selection=(--filter "${group%%|*}")
  if [[ "$group" == *"|"* ]]; then selection+=(--skip "${group#*|}"); fi
  echo "== swift test --sanitize=thread --no-parallel ${selection[*]}"
  group_start=$(stamp)
  status=0
  # The time limit turns a hang into a failure.
  run_group "${selection[@]}" "$@" || status=$?
  if [ "$status" -ne 0 ] && runtime_crash "$group_log"; then
    runtime_crashes=$((runtime_crashes + 1))
    echo "   TSan's runtime crashed, with no report and no failed test (see $log); running the group again"
    sed -E 's/^==([0-9]+)==ERROR: ThreadSanitizer:/==\1== (TSan runtime crash, not counted):/' "$group_log" >>"$log"
    status=0
    run_group "${selection[@]}" "$@" || status=$?
  fi
  cat "$group_log" >>"$log"
  echo "   exit status $status after $(($(stamp) - group_start)) s"
  if [ "$status" -ne 0 ] && ! grep -qE "^(✔|✘|━) Test run with" "$group_log"; then
    # The process ended without Swift Testing's closing line: it crashed or was killed. Show
    # what it printed last (the crash message and the tests that were running), so that a CI
    # log names the cause.
    echo "   the group's process ended without finishing its run; its last lines:"
    grep -E "Fatal error|fatal error|Crash|SIGSEGV|SIGILL|SIGABRT|SIGBUS|ThreadSanitizer" "$group_log" | head -10 | sed 's/^/   | /' || true
    tail -40 "$group_log" | cut -c1-300 | sed 's/^/   | /'
  fi
  if [ "$status" -ne 0 ]; then test_status=$status; fi
done
finished=$(stamp)

warnings=$(grep -cE "^WARNING: ThreadSanitizer:|^==[0-9]+==ERROR: ThreadSanitizer:" "$log" || true)
failures=$(grep -cE "^✘ Test .* failed after" "$log" || true)
echo "== summary"
grep -E "^WARNING: ThreadSanitizer:|^==[0-9]+==ERROR: ThreadSanitizer:" "$log" | sed -E 's/ \(pid=[0-9]+\)//; s/^==[0-9]+==//; s/ on unknown address.*//' | sort | uniq -c || true
grep -E "^SUMMARY: ThreadSanitizer:" "$log" | sort | uniq -c | sort -rn || true
grep -E "^✘ Test .* (failed after|recorded an issue)" "$log" | cut -c1-400 | head -60 || true
grep -E "^(✔|✘|━) Test run with" "$log" || tail -5 "$log"
tests=$(grep -E "^(✔|✘|━) Test run with" "$log" | sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/' | awk '{ sum += $1 } END { print sum + 0 }')
echo "tests run: ${tests:-0} in ${#groups[@]} processes"
echo "TSan warnings: $warnings"
echo "TSan runtime crashes with no report and no failed test (group re-run): $runtime_crashes"
echo "failed tests: $failures (swift test exit status $test_status; 124 or 137: timed out)"
echo "times: build $((built - start)) s, tests $((finished - built)) s, total $((finished - start)) s"
echo "log: $log"
if [ "$warnings" -ne 0 ] || [ "$failures" -ne 0 ] || [ "$test_status" -ne 0 ]; then
  exit 1
fi
