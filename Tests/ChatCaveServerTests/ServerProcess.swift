import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `chatcave serve` as a separate process, for tests that kill the server: the `chatcave`
/// executable built beside the test bundle, started with `posix_spawn`, on a free loopback port.
///
/// Its standard output goes to a file, where ``start(dataDirectory:arguments:)`` reads the port
/// from the "listening on" line. The caller stops it by its pid (``kill(_:)``), always.
struct ServerProcess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The process id.
    let pid: pid_t
    /// The port it listens on.
    let port: Int

    /// The `chatcave` executable of this build (beside the test bundle, as `swift build` puts it).
    static func executable() throws -> String {
        let testBinary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var folder = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
        // The bundle is …/debug/CourierPackageTests.xctest (a file on Linux); look beside it and one level up.
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("chatcave").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        throw Failure(description: "no chatcave executable beside \(testBinary): build the package (swift build) first")
    }

    /// Starts `chatcave serve --port 0 --data-dir <dataDirectory>` and waits (at most 20 s) until
    /// it listens.
    /// - Throws: ``Failure`` when it cannot be started, or exits or stays silent.
    static func start(dataDirectory: URL, arguments: [String] = []) throws -> ServerProcess {
        let output = dataDirectory.path + "-stdout.txt"
        let errors = dataDirectory.path + "-stderr.txt"
        let pid = try spawn(try executable(), ["serve", "--port", "0", "--data-dir", dataDirectory.path] + arguments,
                            stdout: output, stderr: errors)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits), text[range.upperBound...].dropFirst(digits.count).first == " " {
                    return ServerProcess(pid: pid, port: port)
                }
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                let reason = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                throw Failure(description: "chatcave serve exited (status \(status)) before listening: \(reason)")
            }
            usleep(20_000)
        }
        Glibc.kill(pid, SIGKILL)
        _ = waitpid(pid, nil, 0)
        throw Failure(description: "chatcave serve did not listen within 20 s")
    }

    /// Sends `signal` and waits for the process to end.
    func kill(_ signal: Int32) {
        Glibc.kill(pid, signal)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    private static func spawn(_ executable: String, _ arguments: [String], stdout: String, stderr: String) throws -> pid_t {
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
        posix_spawnattr_setsigmask(&attributes, &noSignals)  // a dispatch thread's blocked signals are not inherited
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let environment = ProcessInfo.processInfo.environment.filter { $0.key != "PORT" }.map { "\($0.key)=\($0.value)" }
            + ["SWIFT_BACKTRACE=enable=no"]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else { throw Failure(description: "posix_spawn \(executable) failed: \(String(cString: strerror(status)))") }
        return pid
    }
}
