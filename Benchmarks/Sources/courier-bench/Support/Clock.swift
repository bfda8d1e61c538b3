import Glibc

/// Monotonic time in nanoseconds, cheap enough to read around every request.
enum Nanoseconds {
    /// Now, on `CLOCK_MONOTONIC`.
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// The seconds from `start` to now.
    static func seconds(since start: UInt64) -> Double {
        Double(now() &- start) / 1e9
    }
}
