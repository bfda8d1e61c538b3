#!/bin/sh
# Runs courier-bench in release mode from anywhere; arguments go to courier-bench
# (see Benchmarks/README.md), e.g. `Benchmarks/run.sh --quick` or `Benchmarks/run.sh 2`.
set -eu
cd "$(dirname "$0")/.."
exec swift run -c release --package-path Benchmarks courier-bench "$@"
