import Foundation

/// nginx on a loopback port, with a configuration written under the build folder: the
/// independent real server of the static scenarios. One process (`master_process off`),
/// keep-alive for millions of requests, no access log.
final class NginxServer {
    /// `http://127.0.0.1:<port>`.
    let baseURL: URL
    /// `https://127.0.0.1:<port>` with TLS 1.3 and session tickets, when certificates were given.
    let tlsURL: URL?
    /// `https://127.0.0.1:<port>` with TLS 1.3, no session tickets and no session cache: every
    /// handshake is a full one.
    let fullHandshakeURL: URL?
    /// `https://127.0.0.1:<port>` with TLS 1.3, session tickets, and HTTP/2 offered by ALPN.
    let http2URL: URL?
    /// The streams nginx lets an HTTP/2 client open at once on one connection
    /// (`http2_max_concurrent_streams`; nginx's default is 128): as many as the largest HTTP/2
    /// scenario keeps in flight, so that its 256 requests are all on the wire at once rather
    /// than half of them queued in the client.
    static let http2MaxConcurrentStreams = 256
    /// What `nginx -v` said, e.g. `nginx/1.22.1`.
    let version: String
    private let process: ChildProcess

    /// Where nginx usually is.
    static func locate() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"]
            + path.split(separator: ":").map { "\($0)/nginx" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Writes the configuration into `folder` and starts nginx serving `files`, the large-body
    /// files of `large` (under `/large/`, with PUT uploads stored under `/upload/`), and over
    /// HTTPS on three more ports (tickets, full handshakes, HTTP/2) when `certificates` are given.
    /// - Throws: ``BenchError`` when nginx does not start.
    init(executable: String, folder: URL, files: URL, large: URL, certificates: BenchCertificates?) throws {
        let port = try LoopbackPort.free()
        let tlsPorts = try certificates.map { _ in (try LoopbackPort.free(), try LoopbackPort.free(), try LoopbackPort.free()) }
        for temp in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("temp/" + temp),
                                                    withIntermediateDirectories: true)
        }
        let configuration = folder.appendingPathComponent("nginx.conf")
        try Self.configuration(port: port, folder: folder, files: files, large: large,
                               tls: certificates.flatMap { certificates in tlsPorts.map { (certificates, $0.0, $0.1, $0.2) } }).write(to: configuration, atomically: true, encoding: .utf8)
        let log = folder.appendingPathComponent("error.log").path
        version = Self.version(of: executable, folder: folder)
        process = try ChildProcess(executable, ["-p", folder.path, "-c", configuration.path, "-e", log],
                                   standardOutput: folder.appendingPathComponent("stdout.log").path,
                                   standardError: folder.appendingPathComponent("stderr.log").path)
        guard LoopbackPort.waitUntilAccepting(port, timeout: 10), process.isRunning else {
            process.stop()
            let errors = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw BenchError("nginx did not start on port \(port): \(errors.suffix(500))")
        }
        guard let url = URL(string: "http://127.0.0.1:\(port)") else { throw BenchError("bad port \(port)") }
        baseURL = url
        tlsURL = tlsPorts.flatMap { URL(string: "https://127.0.0.1:\($0.0)") }
        fullHandshakeURL = tlsPorts.flatMap { URL(string: "https://127.0.0.1:\($0.1)") }
        http2URL = tlsPorts.flatMap { URL(string: "https://127.0.0.1:\($0.2)") }
        for tlsPort in [tlsPorts?.0, tlsPorts?.1, tlsPorts?.2].compactMap({ $0 }) where !LoopbackPort.waitUntilAccepting(tlsPort, timeout: 10) {
            process.stop()
            throw BenchError("nginx does not accept HTTPS on port \(tlsPort)")
        }
    }

    /// Stops nginx.
    func stop() {
        process.stop()
    }

    /// The configuration text.
    static func configuration(port: Int, folder: URL, files: URL, large: URL,
                              tls: (certificates: BenchCertificates, tickets: Int, full: Int, http2: Int)?) -> String {
        let servers = tls.map { tls in
            tlsServer(port: tls.tickets, certificates: tls.certificates, files: files, session: "ssl_session_tickets on;")
                + tlsServer(port: tls.full, certificates: tls.certificates, files: files,
                            session: "ssl_session_tickets off; ssl_session_cache off;")
                + tlsServer(port: tls.http2, certificates: tls.certificates, files: files, session: "ssl_session_tickets on;",
                            http2: true)
        } ?? ""
        return plainConfiguration(port: port, folder: folder, files: files, large: large, tlsServers: servers)
    }

    /// A TLS 1.3 server block for the small document, which tells in `X-TLS` the connection's
    /// protocol, cipher and whether its session was resumed (`r`) or not (`.`), and in
    /// `X-Protocol` the request's HTTP version and the connection's serial number
    /// (`HTTP/2.0 12`). With `http2`, the port offers `h2` by ALPN and allows
    /// ``http2MaxConcurrentStreams`` streams at once.
    private static func tlsServer(port: Int, certificates: BenchCertificates, files: URL, session: String,
                                  http2: Bool = false) -> String {
        """
            server {
                listen 127.0.0.1:\(port) ssl\(http2 ? " http2" : "") backlog=16384;\(http2 ? "\n        http2_max_concurrent_streams \(http2MaxConcurrentStreams);" : "")
                ssl_certificate \(certificates.certificatePath);
                ssl_certificate_key \(certificates.keyPath);
                ssl_protocols TLSv1.3;
                \(session)
                root \(files.path);
                location = /\(StaticFiles.small) {
                    default_type application/json;
                    add_header Cache-Control "no-store";
                    add_header X-TLS "$ssl_protocol $ssl_cipher $ssl_session_reused";
                    add_header X-Protocol "$server_protocol $connection";
                }
            }

        """
    }

    /// The configuration text of the plain-HTTP server, with `tlsServers` added to its `http` block.
    private static func plainConfiguration(port: Int, folder: URL, files: URL, large: URL, tlsServers: String) -> String {
        """
        # Written by courier-bench; rewritten on every run.
        daemon off;
        master_process off;
        worker_processes 1;
        worker_rlimit_nofile 20000;
        pid \(folder.path)/nginx.pid;
        error_log \(folder.path)/error.log warn;
        events { worker_connections 16384; }
        http {
            access_log off;
            client_body_temp_path \(folder.path)/temp/client_body;
            proxy_temp_path \(folder.path)/temp/proxy;
            fastcgi_temp_path \(folder.path)/temp/fastcgi;
            uwsgi_temp_path \(folder.path)/temp/uwsgi;
            scgi_temp_path \(folder.path)/temp/scgi;
            keepalive_requests 100000000;
            keepalive_timeout 300s;
            sendfile on;
            tcp_nodelay on;
            server {
                listen 127.0.0.1:\(port) backlog=16384;
                root \(files.path);
                location = /\(StaticFiles.small) { default_type application/json; add_header Cache-Control "no-store"; }
                location = /\(StaticFiles.cached) { default_type application/json; add_header Cache-Control "max-age=86400"; }
                location = /\(StaticFiles.large) { default_type application/octet-stream; add_header Cache-Control "no-store"; }
                location = /\(StaticFiles.post) {
                    client_body_buffer_size 64k;
                    client_max_body_size 1m;
                    default_type application/json;
                    add_header Cache-Control "no-store";
                    return 200 '\(StaticFiles.postReply)';
                }
                location /large/ {
                    alias \(large.path)/;
                    default_type application/octet-stream;
                    add_header Cache-Control "no-store";
                }
                location /\(LargeFiles.uploads)/ {
                    alias \(large.path)/\(LargeFiles.uploads)/;
                    dav_methods PUT;
                    client_max_body_size 0;
                    client_body_buffer_size 1m;
                    client_body_temp_path \(large.path)/\(LargeFiles.uploadTemporaries);
                }
            }
        \(tlsServers)
        }

        """
    }

    /// `nginx -v`'s answer without the prefix, or "nginx" when it cannot be read.
    private static func version(of executable: String, folder: URL) -> String {
        let output = folder.appendingPathComponent("version.txt").path
        guard let child = try? ChildProcess(executable, ["-v"], standardOutput: output, standardError: output) else { return "nginx" }
        _ = child.wait(timeout: 5)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return text.components(separatedBy: "version: ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "nginx"
    }
}
