#!/usr/bin/env python3
"""Writes every ```swift block of README.md as a Swift file that the compiler can check.

Each block becomes the body of its own `async throws` function, so that blocks may use `try`
and `await`, declare local types, and shadow the prelude's names without clashing; its
`import` lines move to the top of the file. The free names that blocks take from the prose
around them (`connection`, `request`, `lobby`, ...) are declared in prelude.swift, beside this
script. A block preceded by a line `<!-- not compiled: reason -->` is skipped, with its reason
printed.

Usage: extract.py README.md OUTPUT_FOLDER
"""
import pathlib
import re
import sys


def main() -> int:
    readme, output = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    output.mkdir(parents=True, exist_ok=True)
    text = readme.read_text()
    count = 0
    for match in re.finditer(r"(^[^\n]*\n)?^( *)```swift\n(.*?)^ *```", text, re.S | re.M):
        line = text[: match.start(2)].count("\n") + 1
        previous = (match.group(1) or "").strip()
        if previous.startswith("<!-- not compiled:"):
            print(f"README.md:{line}: not compiled: {previous[len('<!-- not compiled:'):-3].strip()}")
            continue
        indent = len(match.group(2))
        lines = [row[indent:] if row.startswith(" " * indent) else row for row in match.group(3).splitlines()]
        imports = [row for row in lines if row.startswith("import ")]
        body = [row for row in lines if not row.startswith("import ")]
        source = "\n".join(
            ["import Courier", "import Foundation", *imports, "",
             f"// README.md line {line}",
             f"func readmeExample{count}() async throws {{",
             *[f"    {row}" if row else "" for row in body],
             "}", ""])
        (output / f"Example{count}.swift").write_text(source)
        count += 1
    print(f"{count} examples from {readme}")
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main())
