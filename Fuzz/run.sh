#!/usr/bin/env bash
# Builds Courier's libFuzzer targets and runs each for a bounded time.
#
#   Fuzz/run.sh [seconds] [target...]      # or FUZZ_SECONDS=300 Fuzz/run.sh
#   Fuzz/run.sh --build-only
#   Fuzz/run.sh --replay Fuzz/.build/artifacts/ChunkedBodyFuzzer/crash-…   # re-run one input
#
# Targets: ResponseHeadFuzzer RequestHeadFuzzer ChunkedBodyFuzzer ContentDecoderFuzzer
# ServerInputFuzzer HPACKDecoderFuzzer HTTP2FrameParserFuzzer HTTP2ConnectionFuzzer (all by default). Everything built or written goes under Fuzz/.build:
# bin/ (binaries), lib/ and modules/ (the instrumented modules), corpus/<target>/ (inputs
# found), artifacts/<target>/ (crashes), logs/<target>.log. Seeds come from
# Fuzz/Corpus/<target>/ and are never modified. Exits non-zero when a target crashed or an
# invariant failed.
set -euo pipefail

FUZZ_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$FUZZ_DIR/.." && pwd)
OUT="$FUZZ_DIR/.build"
SWIFTC=${SWIFTC:-/opt/swift/usr/bin/swiftc}
CLANG=${CLANG:-/opt/swift/usr/bin/clang}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}
ALL_TARGETS=(ResponseHeadFuzzer RequestHeadFuzzer ChunkedBodyFuzzer ContentDecoderFuzzer ServerInputFuzzer
             HPACKDecoderFuzzer HTTP2FrameParserFuzzer HTTP2ConnectionFuzzer)
# -O keeps the fuzzers fast; -g gives symbolized stack traces.
FLAGS=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6)

BUILD_ONLY=0
REPLAY=()
TARGETS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --build-only) BUILD_ONLY=1 ;;
        --replay) shift; REPLAY+=("$1") ;;
        [0-9]*) SECONDS_PER_TARGET=$1 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) TARGETS+=("$1") ;;
    esac
    shift
done
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=("${ALL_TARGETS[@]}")

mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/modules" "$OUT/logs"
cd "$ROOT"

# The gold linker warns about ASan's local symbols on every link; the warnings are harmless.
quiet_link() { grep -v "ld.gold: warning: Cannot export local symbol" || true; }

# Whether $1 is missing or older than any of the remaining files.
stale() {
    local product=$1; shift
    [[ ! -e "$product" ]] && return 0
    local file
    for file in "$@"; do [[ "$file" -nt "$product" ]] && return 0; done
    return 1
}

# build_module NAME SOURCE_DIR: an instrumented static library and its module.
build_module() {
    local name=$1 sources=("$ROOT"/Sources/$2/*.swift)
    local library="$OUT/lib/lib$name.a"
    stale "$library" "${sources[@]}" "$FUZZ_DIR/run.sh" || return 0
    echo "building module $name"
    "$SWIFTC" "${FLAGS[@]}" -module-name "$name" -emit-module -emit-module-path "$OUT/modules/$name.swiftmodule" \
        -emit-library -static -o "$library" -I "$OUT/modules" -I "$OUT/modules/CLinuxSystem" -I "$ROOT/Sources/CZlib" \
        "${sources[@]}" 2>&1 | quiet_link
    [[ ${PIPESTATUS[0]} -eq 0 ]]
}

# build_c_module NAME: the C target Sources/NAME (one .c file, its header in include/) as an
# instrumented static library, with a module map for swiftc.
build_c_module() {
    local name=$1 dir="$ROOT/Sources/$1"
    local library="$OUT/lib/lib$name.a"
    stale "$library" "$dir"/*.c "$dir"/include/*.h "$FUZZ_DIR/run.sh" || return 0
    echo "building C module $name"
    mkdir -p "$OUT/modules/$name"
    printf 'module %s {\n    header "%s"\n    export *\n}\n' "$name" "$dir/include/$name.h" >"$OUT/modules/$name/module.modulemap"
    "$CLANG" -fsanitize=fuzzer-no-link,address -O1 -g -I "$dir/include" -c "$dir"/*.c -o "$OUT/lib/$name.o"
    ar rcs "$library" "$OUT/lib/$name.o"
}

# build_target NAME: links the target's main.swift and Fuzz/Shared with the modules.
build_target() {
    local name=$1
    local sources=("$FUZZ_DIR/$name/main.swift" "$FUZZ_DIR"/Shared/*.swift)
    local binary="$OUT/bin/$name"
    stale "$binary" "${sources[@]}" "$OUT"/lib/*.a || return 0
    echo "building $name"
    local libraries=(-lCourierHTTP1)
    [[ $name == ServerInputFuzzer ]] && libraries=(-lHTTPServerCore -lCourierWire -lCLinuxSystem -lCourierHTTP1)
    [[ $name == HPACKDecoderFuzzer || $name == HTTP2FrameParserFuzzer || $name == HTTP2ConnectionFuzzer ]] &&
        libraries=(-lCourierHTTP2 -lCourierHTTP1)
    "$SWIFTC" "${FLAGS[@]}" -module-name "$name" -I "$OUT/modules" -I "$OUT/modules/CLinuxSystem" -I "$ROOT/Sources/CZlib" -L "$OUT/lib" \
        "${sources[@]}" "${libraries[@]}" -lz -o "$binary" 2>&1 | quiet_link
    [[ ${PIPESTATUS[0]} -eq 0 ]]
}

build_module CourierHTTP1 CourierHTTP1
for target in "${TARGETS[@]}"; do
    if [[ $target == ServerInputFuzzer ]]; then
        build_c_module CLinuxSystem
        build_module CourierWire CourierWire
        build_module HTTPServerCore HTTPServerCore
    fi
    if [[ $target == HPACKDecoderFuzzer || $target == HTTP2FrameParserFuzzer || $target == HTTP2ConnectionFuzzer ]]; then
        build_module CourierHTTP2 CourierHTTP2
    fi
done
for target in "${TARGETS[@]}"; do build_target "$target"; done
[[ $BUILD_ONLY -eq 1 ]] && exit 0

# Swift's own crash reporter would hold a crashing fuzzer for a long time; libFuzzer reports.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}

if [[ ${#REPLAY[@]} -gt 0 ]]; then
    for input in "${REPLAY[@]}"; do
        "$OUT/bin/${TARGETS[0]}" "$input"
    done
    exit 0
fi

failed=0
printf '\n%-22s %10s %12s %8s %8s %s\n' target "execs/s" runs cov ft outcome
for target in "${TARGETS[@]}"; do
    corpus="$OUT/corpus/$target"
    artifacts="$OUT/artifacts/$target"
    log="$OUT/logs/$target.log"
    mkdir -p "$corpus" "$artifacts"
    status=0
    extra=()
    # The server's loop thread allocates and frees across inputs, which makes libFuzzer run a
    # full leak scan after nearly every input; leaked connections are checked by the target.
    [[ $target == ServerInputFuzzer ]] && extra=(-detect_leaks=0)
    "$OUT/bin/$target" -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 -timeout=20 "${extra[@]}" \
        -dict="$FUZZ_DIR/http.dict" -artifact_prefix="$artifacts/" \
        "$corpus" "$FUZZ_DIR/Corpus/$target" > "$log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    coverage=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    cov=$(awk '{print $2}' <<< "$coverage")
    ft=$(awk '{print $4}' <<< "$coverage")
    if [[ $status -eq 0 ]]; then
        outcome="ok"
    else
        failed=1
        reason=$(grep -m1 -E 'INVARIANT FAILED|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|Fatal error' "$log" | cut -c1-160 || true)
        artifact=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | sed 's/Test unit written to //' || true)
        outcome="CRASHED (exit $status): ${reason:-see $log}${artifact:+ -> $artifact}"
    fi
    printf '%-22s %10s %12s %8s %8s %s\n' "$target" "${speed:-?}" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$outcome"
done
echo "logs: $OUT/logs"
exit $failed
