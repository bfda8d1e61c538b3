#!/usr/bin/env python3
"""Sorts a `perf` profile of a Courier client into layers: CPU by layer, per request.

Feed it the self-time lines of `perf report` for the client's threads, for example:

    perf record -F 2999 -o perf.data -- Benchmarks/.build/release/courier-bench sequential \\
        --rounds 1 --duration 5 --clients courier-native
    perf report -i perf.data --comm courier-http-0,oot.default-qos,-qos.overcommit \\
        --no-children --sort dso,sym --stdio -g none | scripts/profile-layers.py --cpu-per-request 95.5

Each symbol goes to the first layer whose rule matches its demangled name or its library; the
shares are of the listed threads' samples, and `--cpu-per-request` (µs, from the benchmark's
table of the same run) turns them into µs per request.
"""
import argparse
import re
import subprocess
import sys

# (layer, library pattern or None, name pattern or None), first match wins.
RULES = [
    ("kernel: TCP/IP and sockets", r"kernel", r"tcp|skb|sock|ip_|inet|net_|__dev|loopback|nf_|dst_|release_sock|lock_sock|copy_(to|from)_iter|_copy_"),
    ("kernel: epoll", r"kernel", r"ep_|epoll"),
    ("kernel: scheduling and futexes", r"kernel", r"sched|switch|futex|wake|enqueue|dequeue|pick_|idle|update_|hrtimer|tick"),
    ("kernel: syscall entry and the rest", r"kernel", None),
    ("courier-bench harness", None, r"^courier_bench\.|\bcourier_bench\b"),
    ("API entry and RequestTask", None, r"Courier\.(HTTPConnection|RequestTask|RequestPlan|RequestCallbacks|RequestObserver|RequestContext|MetricsCollector|RequestID|HTTPRequest|HTTPResponse|ConnectionReference|Redaction|URLOrigin|HTTPHeaders)"),
    ("pipeline stages", None, r"Courier\.(RequestPipeline|PipelineNext|RetryStage|RedirectStage|CacheStage|AuthenticationStage|AuthenticationRegistry|CoalescingStage|CookieStage|HARStage|HTTPCache|CacheKey)"),
    ("transport: pool and connection machines", None, r"Courier\.(PoolStateMachine|PoolRequestQueue|HTTP1ConnectionStateMachine|HTTP1ResponseBody)"),
    ("transport: drivers and encoding", None, r"Courier\.(NativeTransport|HostPool|NativeExchange|HTTP1ClientConnection|NativeRequestEncoder|NativeRequestTarget|NativeLoopContext|NativeSettings|NativeCensus|BodyStreamBuffer|TransportRequest|TransportMetrics|LoopBound)"),
    ("HTTP/1 parser (CourierHTTP1)", None, r"CourierHTTP1\."),
    ("event loop and sockets (CourierWire)", None, r"CourierWire\."),
    ("other Courier", None, r"Courier"),
    ("Swift concurrency runtime", r"libswift_Concurrency", None),
    ("retain/release and allocation", None, r"^(swift_(retain|release|allocObject|deallocObject|bridgeObject|slowAlloc|slowDealloc|isUniquelyReferenced|beginAccess|endAccess)|_int_malloc|_int_free|malloc|free|cfree|__libc_malloc|__libc_free|malloc_consolidate|tcache)"),
    ("Swift standard library (strings, collections, generics)", r"libswiftCore|courier-bench", None),
    ("libdispatch", r"libdispatch", None),
    ("Foundation (URL, Data, Date)", r"Foundation", None),
    ("libc and the dynamic linker", r"libc|ld-linux|vdso", None),
]

LINE = re.compile(r"^\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)$")


def demangle(names):
    if not names:
        return []
    result = subprocess.run(["swift-demangle"], input="\n".join(names), capture_output=True, text=True)
    out = result.stdout.splitlines()
    return out if len(out) == len(names) else names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-per-request", type=float, help="µs of CPU per request, to convert shares")
    arguments = parser.parse_args()
    entries = []
    for line in sys.stdin:
        match = LINE.match(line)
        if match:
            entries.append((float(match.group(1)), match.group(2), match.group(4).strip()))
    names = demangle([name for _, _, name in entries])
    totals = {}
    for (share, library, _), name in zip(entries, names):
        for layer, library_rule, name_rule in RULES:
            if library_rule and not re.search(library_rule, library):
                continue
            if name_rule and not re.search(name_rule, name):
                continue
            totals[layer] = totals.get(layer, 0) + share
            break
        else:
            totals["unattributed"] = totals.get("unattributed", 0) + share
    whole = sum(totals.values()) or 1
    print("| layer | share of the client's CPU |" + (" µs per request |" if arguments.cpu_per_request else ""))
    print("|---|---:|" + ("---:|" if arguments.cpu_per_request else ""))
    for layer, share in sorted(totals.items(), key=lambda item: -item[1]):
        fraction = share / whole
        cells = f"| {layer} | {fraction * 100:.1f}% |"
        if arguments.cpu_per_request:
            cells += f" {fraction * arguments.cpu_per_request:.1f} |"
        print(cells)


if __name__ == "__main__":
    main()
