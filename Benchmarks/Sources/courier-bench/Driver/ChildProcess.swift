import Foundation
import Glibc
import Synchronization

/// A program the driver starts with `posix_spawn` (a worker, wrk, nginx, the bench server),
/// its output sent to files. Every child is registered so that Ctrl-C or an error stops it.
final class ChildProcess: Sendable {
    /// How a child ended.
    struct Exit: Sendable {
        /// The exit code, or 128 + the signal that ended it.
        var status: Int32
        /// The child's user + system CPU time, in seconds.
        var cpuSeconds: Double
        /// The child's peak resident memory (`ru_maxrss`), in KiB.
        var peakResidentKiB: Int
        /// The child's context switches, voluntary and involuntary, over its whole run.
        var contextSwitches: Int
    }

    /// The process id.
    let pid: pid_t
    /// The program's name, for messages.
    let name: String
    private let exit = Mutex<Exit?>(nil)

    /// Starts `path` with `arguments`.
    /// - Parameters:
    ///   - path: the executable.
    ///   - arguments: its arguments, without the program name.
    ///   - standardOutput: a file for its standard output; inherited when `nil`.
    ///   - standardError: a file for its standard error; inherited when `nil`.
    /// - Throws: ``BenchError`` when `posix_spawn` fails.
    init(_ path: String, _ arguments: [String], standardOutput: String? = nil, standardError: String? = nil) throws {
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let flags = O_WRONLY | O_CREAT | O_TRUNC
        if let standardOutput { posix_spawn_file_actions_addopen(&actions, 1, standardOutput, flags, 0o644) }
        if let standardError { posix_spawn_file_actions_addopen(&actions, 2, standardError, flags, 0o644) }
        // The driver blocks or ignores SIGINT and SIGTERM to trap them; a child must not inherit that.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard result == 0 else { throw BenchError("cannot start \(path): \(String(cString: strerror(result)))") }
        self.pid = pid
        name = (path as NSString).lastPathComponent
        ChildRegistry.shared.add(pid)
    }

    /// Waits until the child ends or `timeout` seconds pass.
    /// - Returns: how it ended, or `nil` on timeout.
    func wait(timeout: Double) -> Exit? {
        let deadline = Nanoseconds.now() &+ UInt64(max(timeout, 0) * 1e9)
        while true {
            if let ended = poll() { return ended }
            if Nanoseconds.now() >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Whether the child is still running.
    var isRunning: Bool { poll() == nil }

    /// Asks the child to stop (SIGTERM), then kills it (SIGKILL) after `grace` seconds.
    /// - Returns: how it ended.
    @discardableResult
    func stop(grace: Double = 3) -> Exit? {
        if let ended = poll() { return ended }
        kill(pid, SIGTERM)
        if let ended = wait(timeout: grace) { return ended }
        kill(pid, SIGKILL)
        return wait(timeout: 5)
    }

    /// Reaps the child if it has ended.
    private func poll() -> Exit? {
        exit.withLock { exit in
            if let exit { return exit }
            var status: Int32 = 0
            var usage = rusage()
            guard wait4(pid, &status, WNOHANG, &usage) == pid else { return nil }
            let signal = status & 0x7f
            let code = signal == 0 ? (status >> 8) & 0xff : 128 + signal
            exit = Exit(status: code, cpuSeconds: usage.totalCPUSeconds, peakResidentKiB: usage.ru_maxrss,
                        contextSwitches: usage.contextSwitches)
            ChildRegistry.shared.remove(pid)
            return exit
        }
    }
}
