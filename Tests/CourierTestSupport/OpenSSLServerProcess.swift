import Foundation
import Glibc

/// `openssl s_server -www` on a loopback port: an independent, real TLS peer for the native
/// transport's and CourierTLS's tests; stopped by ``stop()`` (SIGKILL to its process group, by pid).
///
/// `-www` answers `GET /` with `HTTP/1.0 200 ok` and an HTML status page, then closes the connection.
package final class OpenSSLServerProcess: Sendable {
    /// The port it accepts on.
    package let port: Int
    private let child: ChildProcess
    private let log: String

    private init(port: Int, child: ChildProcess, log: String) {
        self.port = port
        self.child = child
        self.log = log
    }

    /// Starts `openssl s_server -www` with a certificate, a key and more options, off the Swift
    /// concurrency threads; as ``startNow(certificate:key:arguments:port:)`` otherwise.
    package static func start(certificate: String, key: String, arguments: [String],
                              port: Int? = nil) async throws -> OpenSSLServerProcess {
        try await blocking { try startNow(certificate: certificate, key: key, arguments: arguments, port: port) }
    }

    /// Starts `openssl s_server -www` and waits (5 s at most per try) until it accepts
    /// connections; blocks the calling thread.
    /// - Parameters:
    ///   - port: the port to listen on (one try); by default a free one, and a port another
    ///     process takes in between is retried with another (5 tries).
    package static func startNow(certificate: String, key: String, arguments: [String],
                                 port fixedPort: Int? = nil) throws -> OpenSSLServerProcess {
        guard let tool = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw PeerError("openssl is not installed") }
        var lastLog = ""
        for _ in 0..<(fixedPort == nil ? 5 : 1) {
            let port = try fixedPort ?? LoopbackPort.free()
            let log = NSTemporaryDirectory() + "courier-s_server-\(UUID().uuidString).log"
            let child = try ChildProcess.spawn(tool, ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate,
                                                      "-key", key, "-www"] + arguments, stdout: log, stderr: log)
            let server = OpenSSLServerProcess(port: port, child: child, log: log)
            for _ in 0..<250 where child.isRunning {
                if server.output.contains("ACCEPT") { return server }
                usleep(20_000)
            }
            lastLog = server.output
            server.stop()
        }
        throw PeerError("openssl s_server did not start: \(lastLog)")
    }

    /// What s_server printed so far.
    package var output: String {
        (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    }

    /// `https://127.0.0.1:<port>/`.
    package var url: URL {
        URL(string: "https://127.0.0.1:\(port)/")!
    }

    /// Kills the server and removes its log.
    package func stop() {
        child.kill()
        try? FileManager.default.removeItem(atPath: log)
    }
}
