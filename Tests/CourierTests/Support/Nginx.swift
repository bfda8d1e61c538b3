import Foundation
import Glibc
import Synchronization
import Testing

/// An nginx process of the test's own: a config written into a temporary directory, listening
/// on 127.0.0.1 and a free port, in the foreground (`daemon off; master_process off`), stopped
/// by ``stop()`` (or `deinit`).
///
/// Tests that need it are skipped, with a visible reason, when nginx is not installed
/// (`.enabled(if: Nginx.isInstalled, Nginx.skipReason)`).
final class Nginx: Sendable {

    /// The nginx executable, if installed.
    static let executable: String? = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether nginx is installed.
    static var isInstalled: Bool { executable != nil }

    /// Why nginx tests are skipped.
    static let skipReason: Comment = "nginx is not installed (apt-get install nginx); the nginx conformance tests are skipped"

    /// The port it listens on.
    let port: Int
    /// The directory holding its config, logs and document root (`html/`).
    let directory: URL
    private let child: ChildProcess
    private let stopped = Mutex(false)

    /// `http://127.0.0.1:<port>` or `https://…` for a TLS server.
    let baseURL: URL

    /// Starts nginx.
    /// - Parameters:
    ///   - files: files to put into the document root, by relative path.
    ///   - server: extra directives inside the `server { }` block (locations, `gzip on`, …).
    ///   - http: extra directives inside the `http { }` block.
    ///   - tls: a certificate and key file to serve `https` with.
    ///   - host: the name used in ``baseURL``; `127.0.0.1` by default.
    ///   - ipv6: whether to listen on `[::1]` too, on the same port.
    ///   - http2: whether the TLS listener offers HTTP/2 with ALPN (`listen … ssl http2`).
    init(files: [String: Data] = [:], server: String = "", http: String = "",
         tls: (certificate: String, key: String)? = nil, host: String = "127.0.0.1", ipv6: Bool = false,
         http2: Bool = false) throws {
        guard let executable = Nginx.executable else { throw NginxError("nginx is not installed") }
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("courier-nginx-\(UUID().uuidString)")
        let manager = FileManager.default
        try manager.createDirectory(at: directory.appendingPathComponent("html"), withIntermediateDirectories: true)
        try manager.createDirectory(at: directory.appendingPathComponent("logs"), withIntermediateDirectories: true)
        for (path, data) in files {
            let url = directory.appendingPathComponent("html").appendingPathComponent(path)
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        var lastError: Error = NginxError("nginx did not start")
        // A port found free may be taken before nginx binds it: try a few.
        for _ in 0..<5 {
            let port = try Nginx.freePort()
            let root = directory.path
            let sixListen = ipv6 ? "listen [::1]:\(port)\(tls == nil ? "" : " ssl");" : ""
            let listen = tls == nil ? "listen 127.0.0.1:\(port); \(sixListen)" : """
                listen 127.0.0.1:\(port) ssl\(http2 ? " http2" : ""); \(sixListen)
                ssl_certificate \(tls!.certificate);
                ssl_certificate_key \(tls!.key);
                ssl_protocols TLSv1.2 TLSv1.3;
                """
            let config = """
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(root)/nginx.pid;
                error_log \(root)/logs/error.log warn;
                events { worker_connections 1024; }
                http {
                    access_log off;
                    client_body_temp_path \(root)/body;
                    proxy_temp_path \(root)/proxy;
                    fastcgi_temp_path \(root)/fastcgi;
                    uwsgi_temp_path \(root)/uwsgi;
                    scgi_temp_path \(root)/scgi;
                    types { text/html html; application/json json; text/plain txt; application/octet-stream bin; }
                    default_type application/octet-stream;
                    \(http)
                    server {
                        \(listen)
                        server_name localhost;
                        root \(root)/html;
                        \(server)
                    }
                }
                """
            try config.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
            let pidFile = "\(root)/nginx.pid"
            try? manager.removeItem(atPath: pidFile)
            let child = try ChildProcess.spawn(executable, ["-p", root, "-c", "\(root)/nginx.conf", "-e", "\(root)/logs/error.log"])
            if Nginx.waitUntilListening(port: port, child: child, pidFile: pidFile) {
                self.port = port
                self.child = child
                self.baseURL = URL(string: "\(tls == nil ? "http" : "https")://\(host):\(port)")!
                return
            }
            child.kill()
            let log = (try? String(contentsOf: directory.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? ""
            lastError = NginxError("nginx did not start: \(log)")
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

    /// Starts nginx on a thread of its own (see ``blocking(_:)``); the parameters are those of
    /// ``init(files:server:http:tls:host:ipv6:http2:)``.
    static func start(files: [String: Data] = [:], server: String = "", http: String = "",
                      tls: (certificate: String, key: String)? = nil, host: String = "127.0.0.1",
                      ipv6: Bool = false, http2: Bool = false) async throws -> Nginx {
        let certificate = tls?.certificate
        let key = tls?.key
        return try await blocking {
            try Nginx(files: files, server: server, http: http,
                      tls: certificate.flatMap { c in key.map { (c, $0) } }, host: host, ipv6: ipv6, http2: http2)
        }
    }

    /// Stops nginx (SIGKILL: the test's nginx holds nothing worth a graceful stop) and removes
    /// its directory. Idempotent.
    func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        child.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A port that was free a moment ago on 127.0.0.1.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw NginxError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw NginxError("bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Polls until nginx has bound its port and accepts connections on it (5 s at most), or
    /// the process ends.
    ///
    /// nginx writes its pid file only after it has bound every listening socket. Until then a
    /// connection to `port` may reach another server that took the port after ``freePort()``
    /// released it, while nginx retries its `bind()` (seen as a 404 from the wrong server).
    private static func waitUntilListening(port: Int, child: ChildProcess, pidFile: String) -> Bool {
        for _ in 0..<250 {
            if !child.isRunning { return false }
            guard FileManager.default.fileExists(atPath: pidFile) else {
                usleep(20_000)
                continue
            }
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

/// A failure to set up nginx or certificates for a test.
struct NginxError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
