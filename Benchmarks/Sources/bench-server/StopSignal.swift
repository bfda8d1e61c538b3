import Glibc
import Synchronization

/// Whether SIGTERM or SIGINT has arrived.
enum StopSignal {
    private static let received = Atomic<Bool>(false)

    /// Whether a stop signal has arrived.
    static var isRaised: Bool { received.load(ordering: .relaxed) }

    /// Makes SIGTERM and SIGINT raise the flag instead of ending the process.
    static func install() {
        for number in [SIGTERM, SIGINT] {
            signal(number) { _ in StopSignal.received.store(true, ordering: .relaxed) }
        }
    }
}
