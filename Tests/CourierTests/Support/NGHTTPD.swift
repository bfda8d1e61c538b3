import CourierTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// An `nghttpd` process of the test's own (Debian's `nghttp2-server`): an independent HTTP/2
/// server, over TLS or as cleartext h2c (prior knowledge only), serving a temporary document
/// root on 127.0.0.1 and a free port, echoing POST and PUT bodies (`--echo-upload`), with its
/// frame log (`-v`) kept for the tests that count its connections. Stopped by ``stop()``.
final class NGHTTPD: Sendable {
    /// The executable, if installed.
    static let executable: String? = ["/usr/sbin/nghttpd", "/usr/bin/nghttpd", "/usr/local/bin/nghttpd"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether nghttpd is installed.
    static var isInstalled: Bool { executable != nil }

    /// Why nghttpd tests are skipped.
    static let skipReason: Comment = "nghttpd is not installed (apt-get install nghttp2-server); the nghttpd HTTP/2 tests are skipped"

    let port: Int
    let directory: URL
    let baseURL: URL
    private let child: ChildProcess
    private let stopped = Mutex(false)

    /// Starts nghttpd.
    /// - Parameters:
    ///   - files: files for the document root, by relative path.
    ///   - tls: a certificate and key to serve `https` with; `nil` for h2c.
    ///   - maxConcurrentStreams: the SETTINGS_MAX_CONCURRENT_STREAMS it announces.
    init(files: [String: Data] = [:], tls: (certificate: String, key: String)? = nil, maxConcurrentStreams: Int = 100) throws {
        guard let executable = NGHTTPD.executable else { throw PeerError("nghttpd is not installed") }
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("courier-nghttpd-\(UUID().uuidString)")
        let manager = FileManager.default
        try manager.createDirectory(at: directory.appendingPathComponent("html"), withIntermediateDirectories: true)
        for (path, data) in files {
            let url = directory.appendingPathComponent("html").appendingPathComponent(path)
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        var lastError: Error = PeerError("nghttpd did not start")
        for _ in 0..<5 {
            let port = try LoopbackPort.free()
            var arguments = ["-a", "127.0.0.1", "-d", directory.appendingPathComponent("html").path, "--echo-upload", "-v",
                             "-m", String(maxConcurrentStreams)]
            if let tls {
                arguments += [String(port), tls.key, tls.certificate]
            } else {
                arguments += ["--no-tls", String(port)]
            }
            let child = try ChildProcess.spawn(executable, arguments, stdout: directory.appendingPathComponent("log.txt").path,
                                               stderr: directory.appendingPathComponent("errors.txt").path)
            if NGHTTPD.waitUntilListening(port: port, child: child) {
                self.port = port
                self.child = child
                baseURL = URL(string: "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)")!
                return
            }
            child.kill()
            lastError = PeerError("nghttpd did not start: \((try? String(contentsOf: directory.appendingPathComponent("errors.txt"), encoding: .utf8)) ?? "")")
        }
        try? manager.removeItem(at: directory)
        throw lastError
    }

    deinit {
        stop()
    }

    /// A URL on this server.
    func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path)!
    }

    /// Starts nghttpd on a thread of its own; the parameters are those of ``init(files:tls:maxConcurrentStreams:)``.
    static func start(files: [String: Data] = [:], tls: (certificate: String, key: String)? = nil,
                      maxConcurrentStreams: Int = 100) async throws -> NGHTTPD {
        let certificate = tls?.certificate
        let key = tls?.key
        return try await blocking {
            try NGHTTPD(files: files, tls: certificate.flatMap { c in key.map { (c, $0) } }, maxConcurrentStreams: maxConcurrentStreams)
        }
    }

    /// The connections that sent at least one request: nghttpd's `-v` log numbers its sessions
    /// `[id=N]` (the probe connections made while it started sent no HEADERS, so do not count).
    func sessionCount() -> Int {
        var ids = Set<Substring>()
        for line in log().split(separator: "\n") where line.contains("recv HEADERS frame") {
            guard let start = line.range(of: "[id="), let end = line[start.upperBound...].firstIndex(of: "]") else { continue }
            ids.insert(line[start.upperBound..<end])
        }
        return ids.count
    }

    /// The frames nghttpd logged, as text (for tests that look for RST_STREAM).
    func log() -> String {
        (try? String(contentsOf: directory.appendingPathComponent("log.txt"), encoding: .utf8)) ?? ""
    }

    /// Stops nghttpd and removes its directory. Idempotent.
    func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        child.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func waitUntilListening(port: Int, child: ChildProcess) -> Bool {
        for _ in 0..<250 {
            if !child.isRunning { return false }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return true }
            usleep(20_000)
        }
        return false
    }
}
