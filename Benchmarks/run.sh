#!/bin/sh
# Runs courier-bench in release mode from anywhere; arguments go to courier-bench
# (see Benchmarks/README.md), e.g. `Benchmarks/run.sh --quick` or `Benchmarks/run.sh 2`.
# It builds bench-server first: `swift run` builds only the product it runs, and courier-bench
# starts bench-server (a CourierTestServer in a process of its own) from the same folder.
set -eu
cd "$(dirname "$0")/.."
swift build -c release --package-path Benchmarks --product bench-server
exec swift run -c release --package-path Benchmarks courier-bench "$@"
