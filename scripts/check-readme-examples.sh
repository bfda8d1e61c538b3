#!/usr/bin/env bash
# Type-checks every ```swift block of README.md against the modules the last `swift build`
# made (scripts/readme-examples/extract.py explains how blocks become files, and prelude.swift
# declares the names they borrow from the prose). Fails when any block does not compile.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

modules=".build/debug/Modules"
[ -d "$modules" ] || swift build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 scripts/readme-examples/extract.py README.md "$work"
# The C modules the Swift modules import: system libraries by their module maps, C targets by
# the module maps SwiftPM generated for them.
swiftc -typecheck -parse-as-library -swift-version 6 -suppress-warnings -I "$modules" -I Sources/COpenSSL -I Sources/CZlib \
  -Xcc -fmodule-map-file=.build/debug/CLinuxSystem.build/module.modulemap \
  scripts/readme-examples/prelude.swift "$work"/Example*.swift
echo "every README example compiles"
