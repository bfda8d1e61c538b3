import Foundation
import Glibc

/// `openssl s_server -www` on a free loopback port, for the native transport's tests against an
/// independent TLS peer; stopped by ``stop()`` (SIGKILL to its process group, by pid).
final class OpenSSLServerProcess: Sendable {
    /// The port it accepts on.
    let port: Int
    private let child: ChildProcess
    private let log: String

    private init(port: Int, child: ChildProcess, log: String) {
        self.port = port
        self.child = child
        self.log = log
    }

    /// Starts `openssl s_server -www` with a certificate, a key and more options, and waits
    /// (5 s at most per try) until it accepts connections; a port taken in between is retried.
    static func start(certificate: String, key: String, arguments: [String]) async throws -> OpenSSLServerProcess {
        try await blocking { try startNow(certificate: certificate, key: key, arguments: arguments) }
    }

    private static func startNow(certificate: String, key: String, arguments: [String]) throws -> OpenSSLServerProcess {
        guard let tool = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw NginxError("openssl is not installed") }
        var lastLog = ""
        for _ in 0..<5 {
            let port = try Nginx.freePort()
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
        throw NginxError("openssl s_server did not start: \(lastLog)")
    }

    /// What s_server printed so far.
    var output: String {
        (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    }

    /// `https://127.0.0.1:<port>/`.
    var url: URL {
        URL(string: "https://127.0.0.1:\(port)/")!
    }

    /// Kills the server and removes its log.
    func stop() {
        child.kill()
        try? FileManager.default.removeItem(atPath: log)
    }
}
