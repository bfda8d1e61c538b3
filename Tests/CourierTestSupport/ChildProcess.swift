import Foundation
import Glibc

/// A child process started with `posix_spawn`, for the test helpers (nginx, openssl).
///
/// Foundation's `Process` is not used: in a test process with hundreds of threads its `run()`
/// was seen crashing, and its `waitUntilExit()` waits for a run loop. Children start with an
/// empty signal mask (a dispatch thread's blocked signals would otherwise be inherited).
///
/// The child runs under a small shell guard, in a process group of its own: the guard kills it
/// when the test process ends without stopping it (a crash, a timeout's SIGKILL), so that no
/// server outlives the test run. ``kill()`` ends the whole group; the guard's exit status is
/// the child's.
package struct ChildProcess: Sendable {
    /// The guard's process id, which is also the group's.
    package let pid: pid_t

    /// Runs the command in the background and waits for it, so that the guard ends (with the
    /// child's status) as soon as the child does; beside it a watcher polls every half second
    /// that the test process (`$1`) is alive, and when it is gone, kills the child. The guard
    /// stops the watcher, and the watcher its `sleep`, so that nothing outlives the child. The
    /// shells' messages about the watcher ("Terminated", when it is stopped before its trap is
    /// set) stay out of the child's standard error.
    private static let guardScript = [
        #"parent=$1; shift; "$@" & child=$!"#,
        #"( trap 'kill "$nap" 2>/dev/null; exit 0' TERM"#,
        #"  while kill -0 "$parent" 2>/dev/null; do sleep 0.5 & nap=$!; wait "$nap"; done"#,
        #"  kill -9 "$child" 2>/dev/null ) 2>/dev/null & watcher=$!"#,
        #"wait "$child"; status=$?"#,
        #"kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null"#,
        #"exit "$status""#,
    ].joined(separator: "\n")

    /// Starts `executable` with `arguments`; standard output and error go to the given files
    /// (or `/dev/null`). Given the same file, they share one open file: their bytes follow each
    /// other in the order written. (Opened twice, each would write from offset 0 over the
    /// other's bytes: a line printed to standard output at exit would overwrite the start of
    /// what went to standard error, and could cut a UTF-8 character in two.)
    /// - Parameter environment: the child's environment; `nil` (the default) passes this process's on.
    package static func spawn(_ executable: String, _ arguments: [String], stdout: String = "/dev/null",
                              stderr: String = "/dev/null", environment: [String: String]? = nil) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if stderr == stdout {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        let shell = "/bin/sh"
        let command = [shell, "-c", guardScript, "guard", String(getpid()), executable] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let status = envp.map { posix_spawn(&pid, shell, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&pid, shell, &actions, &attributes, argv, environ)
        guard status == 0 else { throw PeerError("posix_spawn \(executable) failed: \(String(cString: strerror(status)))") }
        return ChildProcess(pid: pid)
    }

    /// Waits for the child to end; returns its exit status (128 + signal when killed).
    @discardableResult
    package func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        return Self.exitStatus(status)
    }

    /// The exit status `waitpid` reported, as a shell shows it (128 + signal when killed).
    private static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Waits at most `timeout` for the child to end, polling without blocking a thread; returns
    /// its exit status (128 + signal when killed), or `nil` when it was still running and was
    /// killed (``kill()``).
    package func wait(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return Self.exitStatus(status) }
            if reaped < 0 && errno != EINTR { return -1 }
            try? await Task.sleep(for: .milliseconds(50))
        }
        kill()
        return nil
    }

    /// Whether the child still runs (it is reaped when it ended).
    package var isRunning: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// Sends `signal` to the child and its guard (the whole group), reaps the guard, and waits
    /// (10 s at most) for the rest of the group to end, then kills what is left: a graceful stop
    /// (SIGTERM) that cannot leave a process behind.
    package func stop(with signal: Int32) {
        _ = Glibc.kill(-pid, signal)
        wait()
        waitUntilGroupEnded(polls: 500, interval: 20_000)
        _ = Glibc.kill(-pid, SIGKILL)
    }

    /// Kills the child and its guard (SIGKILL to the group), reaps the guard, and waits (2 s at
    /// most) until the rest of the group has ended. The child is the guard's, not ours: without
    /// the wait it may still hold its listening socket for a moment after the guard is reaped,
    /// and a connection to a peer the test has just stopped would be accepted, then reset.
    package func kill() {
        _ = Glibc.kill(-pid, SIGKILL)
        wait()
        waitUntilGroupEnded(polls: 400, interval: 5_000)
    }

    /// Polls until no process of the group runs. A process that has ended but is not yet reaped
    /// (a zombie, whose files are closed) counts as ended: orphans are reaped by the system's
    /// init, which can take a second.
    private func waitUntilGroupEnded(polls: Int, interval: useconds_t) {
        var polled = 0
        while polled < polls, groupHasRunningProcess() {
            usleep(interval)
            polled += 1
        }
    }

    /// Whether a process of the group, other than a zombie, exists (from `/proc/<pid>/stat`,
    /// read with plain system calls; a scan takes about a millisecond).
    private func groupHasRunningProcess() -> Bool {
        guard Glibc.kill(-pid, 0) == 0, let directory = opendir("/proc") else { return false }
        defer { closedir(directory) }
        let group = String(pid)
        var buffer = [UInt8](repeating: 0, count: 512)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let first = name.utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { continue }
            let file = open("/proc/\(name)/stat", O_RDONLY)
            guard file >= 0 else { continue }
            let count = read(file, &buffer, buffer.count)
            close(file)
            guard count > 0 else { continue }
            let stat = String(decoding: buffer[0..<count], as: UTF8.self)
            guard let nameEnd = stat.lastIndex(of: ")") else { continue }
            // After the name: state, parent, process group, ...
            let fields = stat[stat.index(after: nameEnd)...].split(separator: " ", maxSplits: 3)
            if fields.count > 2, fields[2] == group, fields[0] != "Z" { return true }
        }
        return false
    }
}
