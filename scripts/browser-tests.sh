#!/usr/bin/env bash
# The web app's tests in a real headless Chromium (scripts/browser_tests.py): builds
# `chatcave`, starts `chatcave serve` on a free loopback port, runs the scenarios, and stops
# the server by its pid. Screenshots and logs go to $BROWSER_TEST_OUTPUT (.build/browser-tests
# by default).
#
# Needs Debian's chromium, chromium-driver and python3-selenium (or Selenium from pip for the
# python3 on PATH). When one is missing the tests are skipped with the reason, unless
# BROWSER_TESTS_REQUIRED=1 (as .ci/run sets), which makes that a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
chromedriver=${CHROMEDRIVER:-$(command -v chromedriver || true)}

skip() {
  if [ "${BROWSER_TESTS_REQUIRED:-0}" = 1 ]; then
    echo "error: browser tests cannot run: $1" >&2
    exit 1
  fi
  echo "SKIPPED: browser tests: $1"
  exit 0
}
[ -n "$chromium" ] || skip "Chromium is not installed (apt-get install chromium chromium-driver)"
[ -n "$chromedriver" ] || skip "chromedriver is not installed (apt-get install chromium-driver)"
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import selenium" 2>/dev/null; then
    python=$candidate
    break
  fi
done
[ -n "$python" ] || skip "Selenium for Python is not installed (apt-get install python3-selenium, or pip install selenium)"

echo "== swift build --product chatcave"
swift build --product chatcave >/dev/null
chatcave="$(swift build --show-bin-path)/chatcave"

output=${BROWSER_TEST_OUTPUT:-.build/browser-tests}
rm -rf "$output"
mkdir -p "$output"
output=$(cd "$output" && pwd)

"$chatcave" serve --host 127.0.0.1 --port 0 >"$output/server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT

url=""
for _ in $(seq 1 100); do
  url=$(grep -o -m 1 'http://127\.0\.0\.1:[0-9]*' "$output/server.log" | head -n 1 || true)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  cat "$output/server.log" >&2
  echo "error: chatcave serve did not start" >&2
  exit 1
fi
echo "== browser tests against $url ($("$chromium" --version 2>/dev/null || echo chromium))"

status=0
timeout 180 "$python" scripts/browser_tests.py --server "$url" --chatcave "$chatcave" --output "$output" \
  --chromium "$chromium" --chromedriver "$chromedriver" || status=$?
if [ "$status" -eq 124 ]; then echo "error: the browser tests took longer than 180 s" >&2; fi
exit "$status"
