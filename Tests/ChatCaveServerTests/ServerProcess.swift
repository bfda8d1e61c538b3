import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `chatcave serve` as a separate process, for tests that kill the server: the `chatcave`
/// executable built beside the test bundle, started as a ``ChildProcess``, on a free loopback port.
///
/// Its standard output goes to a file, where ``start(dataDirectory:arguments:)`` reads the port
/// from the "listening on" line. The caller stops it (``kill(_:)``), always.
struct ServerProcess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The process (under its guard, in a process group of its own).
    let child: ChildProcess
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
        let child = try launch(dataDirectory: dataDirectory, arguments: arguments)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits), text[range.upperBound...].dropFirst(digits.count).first == " " {
                    return ServerProcess(child: child, port: port)
                }
            }
            if !child.isRunning {
                let reason = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                throw Failure(description: "chatcave serve exited before listening: \(reason)")
            }
            usleep(20_000)
        }
        child.kill()
        throw Failure(description: "chatcave serve did not listen within 20 s")
    }

    /// Starts `chatcave serve --port 0 --data-dir <dataDirectory>` without waiting for it, its
    /// standard output and error in `<dataDirectory>-stdout.txt` and `-stderr.txt`.
    /// - Throws: when it cannot be spawned.
    static func launch(dataDirectory: URL, arguments: [String] = []) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["PORT"] = nil
        environment["SWIFT_BACKTRACE"] = "enable=no"
        return try ChildProcess.spawn(try executable(), ["serve", "--port", "0", "--data-dir", dataDirectory.path] + arguments,
                                      stdout: dataDirectory.path + "-stdout.txt", stderr: dataDirectory.path + "-stderr.txt",
                                      environment: environment)
    }

    /// Sends `signal` (SIGKILL, or SIGTERM for a graceful stop) to the server and waits for it to end.
    func kill(_ signal: Int32) {
        child.stop(with: signal)
    }
}
