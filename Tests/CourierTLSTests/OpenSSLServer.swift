import Foundation
import Glibc

/// `openssl s_server -www` on a loopback port: an independent, real TLS peer.
///
/// `-www` answers `GET /` with `HTTP/1.0 200 ok` and an HTML status page,
/// then closes the connection. The process is started by ``start(leaf:extraArguments:)``
/// and must be stopped with ``stop()`` (use `defer`).
final class OpenSSLServer {
    let port: UInt16
    private let process: Process
    private let logURL: URL

    private init(port: UInt16, process: Process, logURL: URL) {
        self.port = port
        self.process = process
        self.logURL = logURL
    }

    /// Starts a server for a certificate and waits until it accepts connections.
    ///
    /// The port is found by binding port 0 on 127.0.0.1 and closing the socket;
    /// if another process grabs it in between, s_server exits and a new port is
    /// tried (at most 5 attempts).
    ///
    /// - Parameters:
    ///   - leaf: the certificate and key to serve.
    ///   - extraArguments: more s_server options, e.g. `["-tls1_2"]`.
    ///   - port: the port to listen on (one attempt); by default a free one.
    static func start(leaf: TestPKI.Leaf, extraArguments: [String] = [], port fixedPort: UInt16? = nil) throws -> OpenSSLServer {
        guard let path = OpenSSLTool.path else { throw TestFailure("openssl not found") }
        var lastLog = ""
        for _ in 0..<(fixedPort == nil ? 5 : 1) {
            let port = try fixedPort ?? freeLoopbackPort()
            let logURL = FileManager.default.temporaryDirectory
                .appendingPathComponent("courier-s_server-\(UUID().uuidString).log")
            guard FileManager.default.createFile(atPath: logURL.path, contents: nil) else {
                throw TestFailure("cannot create \(logURL.path)")
            }
            let log = try FileHandle(forWritingTo: logURL)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["s_server", "-accept", "127.0.0.1:\(port)",
                                 "-cert", leaf.certificatePath, "-key", leaf.keyPath, "-www"] + extraArguments
            process.standardOutput = log
            process.standardError = log
            process.standardInput = FileHandle.nullDevice
            try process.run()
            try? log.close()
            let server = OpenSSLServer(port: port, process: process, logURL: logURL)
            // Bounded wait (10 s) for s_server to report that it is listening.
            for _ in 0..<500 {
                let text = server.log
                if text.contains("ACCEPT") { return server }
                if !process.isRunning { break }
                usleep(20_000)
            }
            lastLog = server.log
            server.stop()
        }
        throw TestFailure("openssl s_server did not start: \(lastLog)")
    }

    /// What s_server printed so far (stdout and stderr).
    var log: String {
        (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
    }

    /// Kills the server, waits for it to exit and removes its log.
    ///
    /// SIGKILL rather than `Process.terminate()` (SIGTERM): the child inherits
    /// the signal mask of the thread that spawned it, and Swift's worker
    /// threads block SIGTERM, so s_server would never see it.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: logURL)
    }

    /// A loopback TCP port that was free a moment ago.
    private static func freeLoopbackPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else { throw TestFailure("bind() failed: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}
