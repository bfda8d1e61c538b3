import Foundation
import Synchronization

/// A test peer that runs (nginx, squid, dante): its process and the temporary directory holding
/// its configuration and logs, stopped once, whoever asks first.
package final class RunningPeer: Sendable {
    /// The process, under its guard.
    package let child: ChildProcess
    /// The peer's temporary directory, removed by ``stop()``.
    package let directory: URL
    private let stopped = Mutex(false)

    /// Takes charge of a started peer.
    package init(child: ChildProcess, directory: URL) {
        self.child = child
        self.directory = directory
    }

    /// Kills the peer (SIGKILL to its process group, by pid: a test's peer holds nothing worth a
    /// graceful stop) and removes its directory. Idempotent.
    package func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        child.kill()
        try? FileManager.default.removeItem(at: directory)
    }
}
