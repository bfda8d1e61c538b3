#!/usr/bin/env python3
"""Lists the largest async frames of a Swift binary: the memory each suspended call holds.

Every async function has an "async function pointer" record (mangled name ending in `Tu`): a
32-bit relative offset to the code, then the 32-bit size of the frame ("context") the caller
allocates for it from the task's allocator. While a request waits on the network, each call on
its chain of awaits holds its frame, so the sum along that chain is what one request in flight
costs in task memory.

Usage: scripts/async-frames.py BINARY [--match Courier] [--top 40]
Needs `nm`, `readelf` (binutils) and `swift-demangle` on the PATH.
"""
import argparse
import struct
import subprocess


def sections(binary):
    """(virtual address, file offset, size) of every allocated section."""
    listing = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in listing.splitlines():
        line = line.strip()
        if not line.startswith("[") or "]" not in line:
            continue
        fields = line.split("]", 1)[1].split()
        try:
            found.append((int(fields[2], 16), int(fields[3], 16), int(fields[4], 16)))
        except (IndexError, ValueError):
            continue
    return [s for s in found if s[0] > 0]


def frame_sizes(binary, match):
    """(frame size, mangled name) of every async function whose name contains `match`."""
    names = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    image = open(binary, "rb").read()
    layout = sections(binary)
    sizes = []
    for line in names.splitlines():
        fields = line.split()
        if len(fields) != 3 or not fields[2].endswith("Tu") or match not in fields[2]:
            continue
        address = int(fields[0], 16)
        for start, offset, size in layout:
            if start <= address < start + size:
                at = offset + address - start
                _, context = struct.unpack("<iI", image[at:at + 8])
                sizes.append((context, fields[2]))
                break
    return sorted(sizes, reverse=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--match", default="Courier")
    parser.add_argument("--top", type=int, default=40)
    arguments = parser.parse_args()
    sizes = frame_sizes(arguments.binary, arguments.match)[: arguments.top]
    demangled = subprocess.run(["swift-demangle", "--simplified"], input="\n".join(name for _, name in sizes),
                               capture_output=True, text=True, check=True).stdout.splitlines()
    for (size, _), name in zip(sizes, demangled):
        print(f"{size:>7}  {name.removeprefix('async function pointer to ')}")


if __name__ == "__main__":
    main()
