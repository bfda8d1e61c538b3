import Foundation
import Glibc

/// A child process started with `posix_spawn`, for the test helpers (nginx, openssl).
///
/// Foundation's `Process` is not used: in a test process with hundreds of threads its `run()`
/// was seen crashing, and its `waitUntilExit()` waits for a run loop. Children start with an
/// empty signal mask (a dispatch thread's blocked signals would otherwise be inherited).
struct ChildProcess: Sendable {
    let pid: pid_t

    /// Starts `executable` with `arguments`; standard output and error go to the given files
    /// (or `/dev/null`).
    static func spawn(_ executable: String, _ arguments: [String], stdout: String = "/dev/null",
                      stderr: String = "/dev/null") throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw NginxError("posix_spawn \(executable) failed: \(String(cString: strerror(status)))") }
        return ChildProcess(pid: pid)
    }

    /// Waits for the child to end; returns its exit status (128 + signal when killed).
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Whether the child still runs (it is reaped when it ended).
    var isRunning: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// Kills the child (SIGKILL) and reaps it.
    func kill() {
        _ = Glibc.kill(pid, SIGKILL)
        wait()
    }
}
