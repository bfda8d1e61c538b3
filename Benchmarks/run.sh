#!/bin/sh
# Runs courier-bench in release mode from anywhere; arguments go to courier-bench
# (see Benchmarks/README.md), e.g. `Benchmarks/run.sh --quick` or `Benchmarks/run.sh 2`.
# It builds bench-server first: `swift run` builds only the product it runs, and courier-bench
# starts bench-server (a CourierTestServer in a process of its own) from the same folder.
set -eu
cd "$(dirname "$0")/.."
# SwiftPM keeps its build plan for the parent package's sources across builds and does not see a
# source file added there since: the build then fails on the new file's symbols. Planning afresh
# costs a few seconds.
rm -f Benchmarks/.build/release.yaml Benchmarks/.build/release/description.json
swift build -c release --package-path Benchmarks --product bench-server
exec swift run -c release --package-path Benchmarks courier-bench "$@"
