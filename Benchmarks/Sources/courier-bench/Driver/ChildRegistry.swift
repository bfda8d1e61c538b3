import Dispatch
import Foundation
import Glibc
import Synchronization

/// The children still running, so that Ctrl-C, SIGTERM or an early exit never leaves nginx,
/// the bench server or a worker behind.
final class ChildRegistry: Sendable {
    /// The one registry of the process.
    static let shared = ChildRegistry()

    private let children = Mutex<Set<pid_t>>([])
    private let signalSources = Mutex<[any DispatchSourceSignal]>([])

    /// Records a started child.
    func add(_ pid: pid_t) { _ = children.withLock { $0.insert(pid) } }

    /// Forgets a child that has ended.
    func remove(_ pid: pid_t) { _ = children.withLock { $0.remove(pid) } }

    /// Sends SIGTERM to every child still running.
    func terminateAll() {
        for pid in children.withLock({ $0 }) { kill(pid, SIGTERM) }
    }

    /// On SIGINT or SIGTERM: stops every child, then exits with 130.
    func trapSignals() {
        signalSources.withLock { $0 = makeSignalSources() }
    }

    private func makeSignalSources() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                FileHandle.standardError.write(Data("\ncourier-bench: interrupted; stopping the servers\n".utf8))
                terminateAll()
                usleep(300_000)
                Glibc.exit(130)
            }
            source.resume()
            return source
        }
    }
}
