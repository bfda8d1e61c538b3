import Dispatch
import Foundation
import Glibc
import Synchronization

/// The children still running, so that Ctrl-C, SIGTERM or an early exit never leaves nginx,
/// the bench server or a worker behind.
final class ChildRegistry: Sendable {
    /// The one registry of the process.
    static let shared = ChildRegistry()

    private let children = Mutex<(running: Set<pid_t>, stopping: Bool)>(([], false))
    private let signalSources = Mutex<[any DispatchSourceSignal]>([])
    /// Folders to delete when a signal stops the driver (the large-body files).
    private let foldersToRemove = Mutex<[URL]>([])

    /// Deletes `folder` if a signal stops the driver; the driver deletes it itself otherwise.
    func removeOnInterrupt(_ folder: URL) {
        foldersToRemove.withLock { $0.append(folder) }
    }

    /// Records a started child; stops it at once when the driver is already stopping.
    func add(_ pid: pid_t) {
        let stopping = children.withLock { children in
            children.running.insert(pid)
            return children.stopping
        }
        if stopping { kill(pid, SIGTERM) }
    }

    /// Whether Ctrl-C or SIGTERM has asked the driver to stop.
    var isStopping: Bool { children.withLock { $0.stopping } }

    /// Forgets a child that has ended.
    func remove(_ pid: pid_t) { _ = children.withLock { $0.running.remove(pid) } }

    /// Sends SIGTERM to every child still running, and to every child started from now on.
    func terminateAll() {
        let running = children.withLock { children in
            children.stopping = true
            return children.running
        }
        for pid in running { kill(pid, SIGTERM) }
    }

    /// On SIGINT or SIGTERM: stops every child, deletes the folders it was given, then exits with 130.
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
                for folder in foldersToRemove.withLock({ $0 }) { try? FileManager.default.removeItem(at: folder) }
                usleep(300_000)
                Glibc.exit(130)
            }
            source.resume()
            return source
        }
    }
}
