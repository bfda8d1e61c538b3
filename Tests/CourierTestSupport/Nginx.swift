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
package final class Nginx: Sendable {

    /// The nginx executable, if installed.
    package static let executable: String? = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether nginx is installed.
    package static var isInstalled: Bool { executable != nil }

    /// Why nginx tests are skipped.
    package static let skipReason: Comment = "nginx is not installed (apt-get install nginx); the nginx conformance tests are skipped"

    /// The port it listens on.
    package let port: Int
    /// The directory holding its config, logs and document root (`html/`).
    package let directory: URL
    private let process: RunningPeer

    /// `http://127.0.0.1:<port>` or `https://…` for a TLS server.
    package let baseURL: URL

    /// Starts nginx.
    /// - Parameters:
    ///   - files: files to put into the document root, by relative path.
    ///   - server: extra directives inside the `server { }` block (locations, `gzip on`, …).
    ///   - http: extra directives inside the `http { }` block.
    ///   - tls: a certificate and key file to serve `https` with.
    ///   - host: the name used in ``baseURL``; `127.0.0.1` by default.
    ///   - ipv6: whether to listen on `[::1]` too, on the same port.
    ///   - http2: whether the TLS listener offers HTTP/2 with ALPN (`listen … ssl http2`).
    package init(files: [String: Data] = [:], server: String = "", http: String = "",
         tls: (certificate: String, key: String)? = nil, host: String = "127.0.0.1", ipv6: Bool = false,
         http2: Bool = false) throws {
        guard let executable = Nginx.executable else { throw PeerError("nginx is not installed") }
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("courier-nginx-\(UUID().uuidString)")
        let manager = FileManager.default
        try manager.createDirectory(at: directory.appendingPathComponent("html"), withIntermediateDirectories: true)
        try manager.createDirectory(at: directory.appendingPathComponent("logs"), withIntermediateDirectories: true)
        for (path, data) in files {
            let url = directory.appendingPathComponent("html").appendingPathComponent(path)
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        var lastError: Error = PeerError("nginx did not start")
        // A port found free may be taken before nginx binds it: try a few.
        for _ in 0..<5 {
            let port = try LoopbackPort.free()
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
                self.process = RunningPeer(child: child, directory: directory)
                self.baseURL = URL(string: "\(tls == nil ? "http" : "https")://\(host):\(port)")!
                return
            }
            child.kill()
            let log = (try? String(contentsOf: directory.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? ""
            lastError = PeerError("nginx did not start: \(log)")
        }
        try? manager.removeItem(at: directory)
        throw lastError
    }

    deinit {
        stop()
    }

    /// A URL on this server.
    package func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path)!
    }

    /// Starts nginx on a thread of its own (see ``blocking(_:)``); the parameters are those of
    /// ``init(files:server:http:tls:host:ipv6:http2:)``.
    package static func start(files: [String: Data] = [:], server: String = "", http: String = "",
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
    package func stop() {
        process.stop()
    }

    /// Polls until nginx has bound its port and accepts connections on it (5 s at most), or
    /// the process ends.
    ///
    /// nginx writes its pid file only after it has bound every listening socket. Until then a
    /// connection to `port` may reach another server that took the port after ``LoopbackPort/free()``
    /// released it, while nginx retries its `bind()` (seen as a 404 from the wrong server).
    private static func waitUntilListening(port: Int, child: ChildProcess, pidFile: String) -> Bool {
        for _ in 0..<250 {
            if !child.isRunning { return false }
            guard FileManager.default.fileExists(atPath: pidFile) else {
                usleep(20_000)
                continue
            }
            let connected = LoopbackPort.accepts(port)
            if connected { return true }
            usleep(20_000)
        }
        return false
    }
}
