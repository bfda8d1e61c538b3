import Foundation
import Synchronization

/// Samples this process's thread count on a thread of its own while a measurement runs, to
/// catch a peak that is gone by the time the run ends. (Peak memory needs no sampling: the
/// kernel keeps it, as `VmHWM`.)
///
/// The sampling thread itself is not counted in ``Peaks/threads``.
final class ResourceMonitor: Sendable {
    /// The highest values seen.
    struct Peaks: Sendable {
        /// The most threads seen at once, not counting the sampler.
        var threads = 0
    }

    private let peaks = Mutex(Peaks())
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts sampling every `interval`.
    /// - Parameter interval: the pause between samples; 20 ms by default.
    init(interval: Duration = .milliseconds(20)) {
        let thread = Thread { [self] in
            let pause = UInt32(interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000)
            while running.load(ordering: .relaxed) {
                sample()
                usleep(pause)
            }
            sample()
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling and returns the peaks; call once.
    func stop() -> Peaks {
        running.store(false, ordering: .relaxed)
        finished.wait()
        return peaks.withLock { $0 }
    }

    private func sample() {
        let threads = ProcessStatus.threadCount()
        peaks.withLock { $0.threads = max($0.threads, threads - 1) }
    }
}
