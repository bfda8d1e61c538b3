import Courier
import Foundation
import Glibc
import Synchronization
import Testing

/// A real proxy of the test's own: squid (HTTP proxy: forwarding, `CONNECT`, Basic proxy
/// authentication) or dante (`danted`, SOCKS5 with and without username/password), configured
/// in a temporary directory, listening on 127.0.0.1 and a port that was free a moment ago (their
/// configurations cannot ask for port 0), started in the foreground and stopped by its pid.
///
/// Tests that need one are skipped, with a visible reason, when it is not installed.
package final class ProxyPeer: Sendable {
    /// The squid executable, if installed.
    package static let squidExecutable: String? = ["/usr/sbin/squid", "/usr/bin/squid"].first { FileManager.default.isExecutableFile(atPath: $0) }
    /// The dante server executable, if installed.
    package static let danteExecutable: String? = ["/usr/sbin/danted", "/usr/bin/danted"].first { FileManager.default.isExecutableFile(atPath: $0) }
    /// squid's Basic authentication helper.
    package static let squidAuthHelper = "/usr/lib/squid/basic_ncsa_auth"

    /// Whether squid and its Basic authentication helper are installed.
    package static var squidInstalled: Bool { squidExecutable != nil && FileManager.default.isExecutableFile(atPath: squidAuthHelper) }
    /// Why squid tests are skipped.
    package static let squidSkipReason: Comment = "squid is not installed (apt-get install squid); the HTTP proxy tests against squid are skipped"
    /// Whether dante is installed.
    package static var danteInstalled: Bool { danteExecutable != nil }
    /// Why dante tests are skipped.
    package static let danteSkipReason: Comment = "dante-server is not installed (apt-get install dante-server); the SOCKS5 tests against danted are skipped"

    /// The system account dante checks SOCKS5 usernames and passwords against (`.ci/run`
    /// creates it: dante's `username` method reads the system's password database).
    package static let socksUser = ProxyCredentials(username: "courier-socks", password: "socks-pass")
    /// Whether ``socksUser`` exists on this machine.
    package static var socksUserExists: Bool { getpwnam(socksUser.username) != nil }
    /// Why the authenticated SOCKS5 tests are skipped.
    package static let socksUserSkipReason: Comment = "dante-server or the account courier-socks (password socks-pass; .ci/run creates it) is missing; the SOCKS5 username/password tests are skipped"

    /// The user and password squid accepts when started with authentication.
    package static let squidUser = ProxyCredentials(username: "courier", password: "pr0xy:secret")

    /// The port it listens on.
    package let port: Int
    /// What the proxy logged about the requests it carried: squid's access log (one line per
    /// request, e.g. `… CONNECT 127.0.0.1:8443 …`), or dante's log (`… pass(1): tcp/connect …`).
    package var requestLog: String {
        let name = FileManager.default.fileExists(atPath: directory.appendingPathComponent("access.log").path) ? "access.log" : "danted.log"
        return (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }
    private let directory: URL
    private let process: RunningPeer

    /// Starts squid.
    /// - Parameters:
    ///   - authenticated: whether it requires Basic credentials (``squidUser``).
    ///   - tlsFiles: the paths of a certificate and its key: squid then listens with TLS
    ///     (`https_port`), an `https://` proxy.
    package static func squid(authenticated: Bool = false, tlsFiles: (certificate: String, key: String)? = nil) async throws -> ProxyPeer {
        try await blocking { try ProxyPeer(squidAuthenticated: authenticated, tls: tlsFiles) }
    }

    /// Starts dante.
    /// - Parameter authenticated: whether it requires a username and password (``socksUser``).
    package static func dante(authenticated: Bool = false) async throws -> ProxyPeer {
        try await blocking { try ProxyPeer(danteAuthenticated: authenticated) }
    }

    /// The proxy as a ``Proxy`` of `kind`, with `credentials` and, for `https`, `tls` options.
    package func proxy(_ kind: Proxy.Kind, credentials: ProxyCredentials? = nil, tls: TLSOptions = TLSOptions()) -> Proxy {
        Proxy(kind, host: "127.0.0.1", port: port, credentials: credentials, tls: tls)
    }

    private convenience init(squidAuthenticated authenticated: Bool, tls: (certificate: String, key: String)?) throws {
        guard let executable = ProxyPeer.squidExecutable else { throw PeerError("squid is not installed") }
        try self.init(name: "squid", ready: tls == nil ? "Accepting HTTP Socket connections" : "Accepting HTTPS Socket connections") { directory, port in
            var listen = "http_port 127.0.0.1:\(port)"
            if let tls {
                // Copies squid (which drops to its own user) can read.
                let certificate = directory.appendingPathComponent("proxy-cert.pem").path
                let key = directory.appendingPathComponent("proxy-key.pem").path
                try? FileManager.default.removeItem(atPath: certificate)
                try? FileManager.default.removeItem(atPath: key)
                try FileManager.default.copyItem(atPath: tls.certificate, toPath: certificate)
                try FileManager.default.copyItem(atPath: tls.key, toPath: key)
                chmod(certificate, 0o644)
                chmod(key, 0o644)
                listen = "https_port 127.0.0.1:\(port) tls-cert=\(certificate) tls-key=\(key)"
            }
            var auth = ""
            if authenticated {
                // An apr1 (MD5) hash of squidUser's password, made by `openssl passwd -apr1 -salt courier1`.
                let file = directory.appendingPathComponent("passwd").path
                try "\(ProxyPeer.squidUser.username):$apr1$courier1$kXjL8eUaRvPlLTMmnaKWH0\n".write(toFile: file, atomically: true, encoding: .utf8)
                chmod(file, 0o644)
                auth = """
                    auth_param basic program \(ProxyPeer.squidAuthHelper) \(file)
                    auth_param basic realm courier-tests
                    acl authenticated proxy_auth REQUIRED
                    http_access allow localhost authenticated
                    """
            }
            let root = directory.path
            let config = """
                \(listen)
                pid_filename \(root)/squid.pid
                cache_log \(root)/cache.log
                access_log stdio:\(root)/access.log
                cache deny all
                cache_mem 1 MB
                coredump_dir \(root)
                shutdown_lifetime 0 seconds
                pinger_enable off
                dns_nameservers 127.0.0.1
                \(auth)
                http_access \(authenticated ? "deny" : "allow") localhost
                http_access deny all
                """
            try config.write(to: directory.appendingPathComponent("squid.conf"), atomically: true, encoding: .utf8)
            return (executable, ["-N", "-f", "\(root)/squid.conf"], "\(root)/cache.log")
        }
    }

    private convenience init(danteAuthenticated authenticated: Bool) throws {
        guard let executable = ProxyPeer.danteExecutable else { throw PeerError("dante-server is not installed") }
        try self.init(name: "dante", ready: "running") { directory, port in
            let root = directory.path
            let config = """
                logoutput: \(root)/danted.log
                internal: 127.0.0.1 port = \(port)
                external: 127.0.0.1
                socksmethod: \(authenticated ? "username" : "none")
                user.privileged: root
                user.unprivileged: nobody
                client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }
                socks pass { from: 127.0.0.0/8 to: 0.0.0.0/0 log: connect }
                """
            try config.write(to: directory.appendingPathComponent("danted.conf"), atomically: true, encoding: .utf8)
            return (executable, ["-f", "\(root)/danted.conf", "-p", "\(root)/danted.pid", "-N", "1"], "\(root)/danted.log")
        }
    }

    /// Writes a configuration for a free port (`configure` returns the command and the log file),
    /// starts it and waits until the log says `ready` and the port accepts; tries a few ports.
    private init(name: String, ready: String,
                 configure: (URL, Int) throws -> (executable: String, arguments: [String], log: String)) throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("courier-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o777)  // squid drops to its own user and writes its log here
        var lastError: Error = PeerError("\(name) did not start")
        for _ in 0..<5 {
            let port = try LoopbackPort.free()
            let (executable, arguments, log) = try configure(directory, port)
            try? FileManager.default.removeItem(atPath: log)
            let child = try ChildProcess.spawn(executable, arguments, stdout: directory.appendingPathComponent("stdout").path,
                                               stderr: directory.appendingPathComponent("stderr").path)
            if ProxyPeer.waitUntilReady(port: port, child: child, log: log, marker: ready) {
                self.port = port
                self.process = RunningPeer(child: child, directory: directory)
                return
            }
            child.kill()
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            lastError = PeerError("\(name) did not start: \(text.suffix(2000))")
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError
    }

    deinit {
        stop()
    }

    /// Stops the proxy (SIGKILL to its process group, by pid) and removes its directory. Idempotent.
    package func stop() {
        process.stop()
    }

    /// Polls (10 s at most) until the log holds `marker` and the port accepts a connection, or the process ends.
    private static func waitUntilReady(port: Int, child: ChildProcess, log: String, marker: String) -> Bool {
        for _ in 0..<500 {
            if !child.isRunning { return false }
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if text.contains(marker), LoopbackPort.accepts(port) { return true }
            usleep(20_000)
        }
        return false
    }
}
