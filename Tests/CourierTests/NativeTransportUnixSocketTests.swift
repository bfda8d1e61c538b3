@testable import Courier
import CourierTestSupport
import CourierTestServer
import CourierWire
import Foundation
import Glibc
import Testing

/// The native transport over Unix domain sockets (``NativeTransport/UnixSocketRoute``): against
/// CourierTestServer and nginx listening on a socket path, and each way connecting can fail.
@Suite("Native transport: Unix domain sockets")
struct NativeTransportUnixSocketTests {
    /// A fresh directory for socket files (a short path: `sun_path` holds 107 bytes).
    private static func socketDirectory() throws -> URL {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("courier-uds-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A CourierTestServer listening on a new Unix socket at `path`.
    private static func unixServer(_ path: String) throws -> TestServer {
        var configuration = TestServer.Configuration()
        configuration.unixSocketPath = path
        return try TestServer(configuration: configuration)
    }

    private func transport(_ leaks: LeakCheck, routes: [NativeTransport.UnixSocketRoute],
                           proxy: ProxyConfiguration = .none) -> NativeTransport {
        var configuration = NativeTransport.Configuration()
        configuration.unixSockets = routes
        configuration.proxy = proxy
        return leaks.native(configuration)
    }

    @Test("requests reach CourierTestServer over its Unix socket, reuse one connection, keep the URL's Host, and pool apart from TCP")
    func testServer() async throws {
        let directory = try Self.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("server.sock").path
        let unixServer = try Self.unixServer(path)
        defer { unixServer.shutdown() }
        let tcpServer = try TestServer()
        defer { tcpServer.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(tcpServer)
            // Even a proxy that does not exist is not used for a routed host.
            let transport = transport(leaks, routes: [try .init(host: "courier.test", path: path)],
                                      proxy: ProxyConfiguration(all: Proxy(.http, host: "127.0.0.1", port: 1)))
            defer { transport.shutdown() }
            var connections: Set<Int> = []
            for index in 0..<3 {
                let response = try await fetch(transport, unixServer.url("/echo/\(index)?q=\(index)"))
                let echo = try JSONDecoder().decode(Echo.self, from: response.body)
                #expect(echo.path == "/echo/\(index)" && echo.query == "q=\(index)")
                #expect(echo.header("Host") == "courier.test")
                connections.insert(echo.connection)
            }
            #expect(connections.count == 1, "one pooled Unix-socket connection carries every request")
            #expect(unixServer.connectionsAccepted == 1)
            let posted = try await fetch(transport, unixServer.url("/echo"), method: .post, body: Data("over unix".utf8))
            #expect(try JSONDecoder().decode(Echo.self, from: posted.body).body == "over unix")

            let tcp = self.transport(leaks, routes: [try .init(host: "127.0.0.1", port: 1, path: path)])
            defer { tcp.shutdown() }
            // The route is for port 1 only: this request goes over TCP.
            let overTCP = try JSONDecoder().decode(Echo.self, from: try await fetch(tcp, tcpServer.url("/echo")).body)
            #expect(overTCP.path == "/echo")
            let routed = try await fetch(tcp, URL(string: "http://127.0.0.1:1/echo/routed")!)
            #expect(try JSONDecoder().decode(Echo.self, from: routed.body).path == "/echo/routed")
            #expect(tcp.originCount == 2, "the Unix-socket pool and the TCP pool are apart")
        }
    }

    @Test("nginx listening on unix: answers over the socket",
          .enabled(if: Nginx.isInstalled, Nginx.skipReason))
    func nginx() async throws {
        let directory = try Self.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("nginx.sock").path
        let nginx = try await Nginx.start(http: """
            server {
                listen unix:\(path);
                location / { default_type text/plain; return 200 "nginx over unix: $request_uri for $host\\n"; }
            }
            """)
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            let transport = transport(leaks, routes: [try .init(host: "docker", path: path)])
            defer { transport.shutdown() }
            for _ in 0..<2 {
                let response = try await fetch(transport, URL(string: "http://docker/v1.43/containers/json?all=1")!)
                #expect(response.status.code == 200)
                #expect(String(decoding: response.body, as: UTF8.self) == "nginx over unix: /v1.43/containers/json?all=1 for docker\n")
            }
            #expect(transport.originCount == 1)
        }
    }

    @Test("a missing socket, a regular file, a directory and a socket nobody listens on: each its own error, naming the path")
    func connectFailures() async throws {
        let directory = try Self.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.sock").path
        let file = directory.appendingPathComponent("file.sock").path
        try Data("not a socket".utf8).write(to: URL(fileURLWithPath: file))
        let stale = directory.appendingPathComponent("stale.sock").path
        let listener = try Socket.listen(unixPath: stale)
        listener.close()  // the file stays; nothing listens
        try await withLeakCheck { leaks in
            let transport = transport(leaks, routes: [
                try .init(host: "missing", path: missing), try .init(host: "file", path: file),
                try .init(host: "directory", path: directory.path), try .init(host: "stale", path: stale),
                try .init(host: "nodir", path: "/nonexistent-courier-dir/x.sock"),
            ])
            defer { transport.shutdown() }
            let cases: [(String, HTTPConnectionError, String)] = [
                ("missing", .unixSocketNotFound, missing), ("nodir", .unixSocketNotFound, "/nonexistent-courier-dir/x.sock"),
                ("file", .notAUnixSocket, file), ("directory", .notAUnixSocket, directory.path),
                ("stale", .cannotConnect, stale),
            ]
            for (host, expected, shownPath) in cases {
                let error = await failure { () async throws(HTTPConnectionError) in
                    try await fetch(transport, URL(string: "http://\(host)/")!)
                }
                #expect(error == expected, "\(host): \(String(describing: error))")
                #expect(error?.detail?.contains(shownPath) == true, "\(host): \(String(describing: error?.detail))")
            }
            // The failures are not sticky: once something listens, the same route works.
            let server = try Self.unixServer(missing)
            defer { server.shutdown() }
            #expect(try await fetch(transport, URL(string: "http://missing/echo")!).status.code == 200)
        }
    }

    @Test("permission denied: a socket the process may not write to is unixSocketPermissionDenied",
          .enabled(if: getuid() != 0, "runs as root, which file permissions do not stop; the errno mapping is checked below"))
    func permissionDenied() async throws {
        let directory = try Self.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("locked.sock").path
        let server = try Self.unixServer(path)
        defer { server.shutdown() }
        chmod(path, 0o000)
        try await withLeakCheck { leaks in
            let transport = transport(leaks, routes: [try .init(host: "locked", path: path)])
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, URL(string: "http://locked/")!) }
            #expect(error == .unixSocketPermissionDenied, "\(String(describing: error))")
        }
    }

    @Test("the errors of connect(2) on a Unix socket map to their kinds")
    func errnoMapping() {
        let key = NativePoolKey(secure: false, host: "docker", port: 80, unixSocketPath: "/run/x.sock")
        let kinds: [(Int32, HTTPConnectionError)] = [
            (ENOENT, .unixSocketNotFound), (ENOTDIR, .unixSocketNotFound), (EACCES, .unixSocketPermissionDenied),
            (EPERM, .unixSocketPermissionDenied), (EAGAIN, .cannotConnect), (ENAMETOOLONG, .invalidURL),
        ]
        for (code, expected) in kinds {
            let error = NativeErrors.unixSocket(SocketError(operation: "connect", errno: code), path: "/run/x.sock", key: key)
            #expect(error == expected, "errno \(code): \(error)")
            #expect(error.detail?.contains("unix:/run/x.sock") == true)
        }
    }

    @Test("routes are checked when made: a path too long for sun_path, an empty path or host, a bad port")
    func routeValidation() throws {
        #expect(throws: HTTPConnectionError.invalidURL) { try NativeTransport.UnixSocketRoute(host: "a", path: "/" + String(repeating: "x", count: 107)) }
        #expect(throws: HTTPConnectionError.invalidURL) { try NativeTransport.UnixSocketRoute(host: "a", path: "") }
        #expect(throws: HTTPConnectionError.invalidURL) { try NativeTransport.UnixSocketRoute(host: "", path: "/x.sock") }
        #expect(throws: HTTPConnectionError.invalidURL) { try NativeTransport.UnixSocketRoute(host: "a", port: 0, path: "/x.sock") }
        let route = try NativeTransport.UnixSocketRoute(host: "Docker", path: "/" + String(repeating: "x", count: 106))
        #expect(route.host == "docker" && route.matches(host: "docker", port: 80) && route.matches(host: "docker", port: 2375))
        #expect(try NativeTransport.UnixSocketRoute(host: "docker", port: 2375, path: "/d.sock").description == "docker:2375 → unix:/d.sock")
        let target = try NativeRequestTarget(url: URL(string: "http://docker:2375/v1/info")!, proxies: .none, unixSockets: [route])
        #expect(target.key.unixSocketPath == route.path && target.key.proxy == nil && target.path == "/v1/info")
        #expect("\(target.key)".hasSuffix("via unix:\(route.path)"))
    }
}
