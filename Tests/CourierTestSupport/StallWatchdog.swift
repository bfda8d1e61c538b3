import Foundation
import Glibc
import Synchronization

/// A diagnostic for stalls of Swift's cooperative thread pool during the suite (issue 22):
/// when several unrelated tests finish late together, something holds the pool's threads.
///
/// Off unless `COURIER_STALL_DUMP` names a folder. Then a thread outside the pool starts a tiny
/// task every 250 ms; when one has not run after 2 s, it writes every thread's stack (through
/// `gdb -p`, once per stall) to `<folder>/stall-<pid>-<n>.txt`, which names whatever holds
/// the pool. Started by ``withLeakCheck(watching:timeout:sourceLocation:_:)``.
package enum StallWatchdog {
    /// Starts the watchdog once, if it is enabled.
    package static let started: Bool = {
        guard let folder = ProcessInfo.processInfo.environment["COURIER_STALL_DUMP"], !folder.isEmpty else { return false }
        let thread = Thread { watch(folder: folder) }
        thread.name = "stall-watchdog"
        thread.start()
        return true
    }()

    /// When the probe in flight was started (monotonic nanoseconds), or 0 when none is.
    private static let probeStarted = Atomic<UInt64>(0)

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func watch(folder: String) {
        var dumps = 0
        var dumpedThisStall = false
        while dumps < 5 {
            usleep(250_000)
            let started = probeStarted.load(ordering: .acquiring)
            if started == 0 {
                dumpedThisStall = false
                probeStarted.store(now(), ordering: .releasing)
                Task.detached { probeStarted.store(0, ordering: .releasing) }
            } else if !dumpedThisStall, now() &- started > 2_000_000_000 {
                dumpedThisStall = true
                dumps += 1
                dump(to: "\(folder)/stall-\(getpid())-\(dumps).txt")
                // gdb stopped the whole process while it dumped: measure the next stall afresh.
                probeStarted.store(0, ordering: .releasing)
            }
        }
    }

    private static func dump(to path: String) {
        let command = "gdb -p \(getpid()) -batch -ex 'thread apply all bt 25' > '\(path)' 2>&1"
        _ = try? ChildProcess.spawn("/bin/sh", ["-c", command]).wait()
    }
}
