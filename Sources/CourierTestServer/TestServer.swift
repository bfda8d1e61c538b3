import CourierWire
import Foundation
import HTTPServerCore

/// A real HTTP/1.1 server on `127.0.0.1` that answers correctly or misbehaves on
/// demand: Courier's MockWebServer, and a product for your own tests.
///
/// Start one per test, point a client at ``baseURL``, and shut it down (or let it
/// go: `deinit` shuts it down too). The server runs on its own event loop thread,
/// holds thousands of connections, and counts what it saw.
///
/// ```swift
/// let server = try TestServer()
/// defer { server.shutdown() }
/// server.route("/login") { request in
///     request.method == "POST" ? .json(#"{"token": "abc"}"#) : .response(status: 405)
/// }
/// // ... GET \(server.baseURL)/echo?x=1, then:
/// #expect(server.requestCount(path: "/echo") == 1)
/// ```
///
/// ## Built-in routes
/// Every route answers any method. Custom routes registered with
/// ``route(_:_:)`` take precedence. Unknown paths get `404` with
/// `{"error": "no route", "path": "..."}`.
///
/// | Route | Answer |
/// |---|---|
/// | `/echo`, `/echo/<anything>` | `200` `application/json`: `{"method": "GET", "path": "/echo/x", "query": "a=1", "headers": [["Host", "..."], ...], "body": "<UTF-8, lossy>", "bodyLength": N, "connection": C, "request": R}` — headers in received order, `connection` the 1-based connection number, `request` the 1-based request number on it. `?status=N` answers with status `N` instead (same body; none for 1xx/204/304). |
/// | `/status/<code>` | That status with `{"status": code}`; no body for 1xx, 204 and 304. A 1xx is sent alone, so the client waits for a final response that never comes. |
/// | `/delay/<ms>` | `200` `{"delayed": ms}` after `ms` milliseconds, timed by the event loop. |
/// | `/bytes/<n>` | `n` bytes of `application/octet-stream`, byte `i` being `i % 256` (see ``bytesPattern(count:)``), at most 256 MiB. `?chunked=1` sends them with the chunked coding, in chunks of `?chunk=` bytes (default 1024). |
///
/// ## Fault routes (reliability cases A–E)
/// | Route | Behaviour |
/// |---|---|
/// | `/fault/close-before-response` | Reads the request, then closes without answering (A3). |
/// | `/fault/close-mid-head` | Sends part of a response head, then closes (A4). |
/// | `/fault/close-mid-body` | Sends a head with `Content-Length: 100` and 40 body bytes, then closes (A4). |
/// | `/fault/stall` | Never answers; holds the connection until the client leaves or the server shuts down (B1). |
/// | `/fault/stall-body` | Sends a head with `Content-Length: 100` and 10 body bytes, then stalls (B2). |
/// | `/fault/short-length` | `Content-Length: 4`, sends `abc`, then stalls (B3). |
/// | `/fault/long-length` | `Content-Length: 4` but sends `abcdefgh`, then keeps the connection and reads the next request (D4). |
/// | `/fault/trickle?bytes=N&interval=ms` | `Content-Length: N` (default 10, at most 100,000), then one body byte every `ms` (default 10) milliseconds (B4). |
/// | `/fault/garbage-status` | `HTP/1.1 200 OK` as the status line, then closes (C1). |
/// | `/fault/chunked?chunks=N&size=M` | A correct chunked body of `N` chunks (default 3) of `M` bytes (default 5) of the byte pattern (E5 with `chunks=10000&size=1`). |
/// | `/fault/bad-chunk` | A chunked body whose chunk size is not hexadecimal (`zz`), then closes (C3). |
/// | `/fault/keepalive-then-close` | `200` with `Connection: close`, then closes the connection (A6). |
///
/// Connection-level faults: ``Configuration/closeBeforeReading`` closes every
/// connection as soon as it is accepted (A2); ``Configuration/proxyFault`` makes the server a
/// misbehaving proxy (refusals, closes mid-handshake, trickles). For any other misbehaviour, register
/// a route answering ``Reply/script(_:)`` with raw bytes, pauses, half-closes,
/// closes, resets and stalls.
///
/// ## Server-side robustness
/// Malformed request heads get `400`, heads over ``Configuration/maxHeadBytes`` or
/// ``Configuration/maxHeaderFields`` get `431`, bodies over
/// ``Configuration/maxBodyBytes`` get `413`; connections that do not send a
/// complete head within ``Configuration/headerTimeout`` are closed, and a body that does
/// not arrive whole within ``Configuration/bodyTimeout`` gets `408`.
public final class TestServer: Sendable {
    /// A custom route's handler: called on the server's event loop with each request.
    /// Keep it quick; use ``Reply/delayed(_:_:)`` or script pauses instead of sleeping.
    public typealias Handler = @Sendable (Request) -> Reply

    /// The port the server listens on (on `127.0.0.1`); 0 for a Unix-socket server.
    public let port: Int
    /// `http://127.0.0.1:<port>`, without a trailing slash; `http://courier.test` for a server on
    /// a Unix socket (``Configuration/unixSocketPath``).
    public let baseURL: URL
    /// The configuration the server runs with.
    public let configuration: Configuration

    private let server: HTTPServer
    private let routes = RouteTable()

    /// Binds `127.0.0.1` on a port the kernel picks (or the configuration's Unix socket) and
    /// starts serving.
    ///
    /// - Parameter configuration: Limits, timeouts and connection faults. Default: `Configuration()`.
    /// - Throws: `SocketError` when the socket cannot be bound or the event loop cannot start.
    public init(configuration: Configuration = Configuration()) throws {
        var limits = HTTPServer.Configuration().limits
        limits.maxHeadBytes = configuration.maxHeadBytes
        limits.maxFieldCount = configuration.maxHeaderFields
        var serverConfiguration = HTTPServer.Configuration(
            maxBodyBytes: configuration.maxBodyBytes,
            headerTimeout: configuration.headerTimeout,
            idleTimeout: configuration.idleTimeout,
            bodyTimeout: configuration.bodyTimeout,
            limits: limits,
            eventLoopCount: configuration.eventLoopCount,
            closeConnectionsOnAccept: configuration.closeBeforeReading
        )
        serverConfiguration.sendBufferSize = configuration.sendBufferSize
        let routes = self.routes
        let proxyFault = configuration.proxyFault
        let handler: HTTPServer.Handler = { request, responder in
            if let proxyFault {
                TestServer.perform(TestServer.proxyFaultReply(proxyFault), keepAlive: false, responder: responder)
            } else {
                TestServer.serve(request, responder, routes: routes)
            }
        }
        if let path = configuration.unixSocketPath {
            server = try HTTPServer(unixSocketPath: path, configuration: serverConfiguration, handler: handler)
        } else {
            server = try HTTPServer(host: "127.0.0.1", port: 0, configuration: serverConfiguration, handler: handler)
        }
        port = server.port
        self.configuration = configuration
        let base = configuration.unixSocketPath == nil ? "http://127.0.0.1:\(server.port)" : "http://courier.test"
        guard let url = URL(string: base) else {
            server.shutdown()
            throw SocketError(operation: "TestServer", message: "cannot form the base URL")
        }
        baseURL = url
    }

    deinit {
        server.shutdown()
    }

    /// Closes the listener and every connection and stops the event loop. Idempotent.
    public func shutdown() {
        server.shutdown()
    }

    /// The URL of `pathAndQuery` on this server, for example `url("/echo?x=1")`.
    ///
    /// - Parameter pathAndQuery: A path starting with `/`, optionally with a query.
    /// - Returns: `baseURL` followed by `pathAndQuery` (``baseURL`` when it cannot form a URL).
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery) ?? baseURL
    }

    /// Registers a custom route, overriding any built-in or earlier route for it.
    ///
    /// - Parameters:
    ///   - path: An exact path (`"/login"`), or a prefix ending with `*` (`"/api/*"`
    ///     matches `/api/` and everything below). Exact routes win over prefixes, and
    ///     longer prefixes over shorter ones. Queries are not part of the match.
    ///   - handler: Builds the reply; called on the server's event loop.
    public func route(_ path: String, _ handler: @escaping Handler) {
        routes.add(path, handler)
    }

    /// How many connections the server accepted (including ones closed since).
    public var connectionsAccepted: Int { server.connectionsAccepted }

    /// How many connections are open now.
    public var connectionsOpen: Int { server.connectionsOpen }

    /// How many requests were received, over all paths.
    public var totalRequests: Int { server.totalRequests }

    /// How many requests were received for `path`.
    ///
    /// Like ``HTTPServer/requestCount(path:)``: the first 1,023 distinct paths (of at most
    /// 1 KiB) are counted one by one, every other request under `"(other)"`.
    ///
    /// - Parameter path: A path without query, for example `"/echo"`.
    /// - Returns: The count; 0 for paths never requested.
    public func requestCount(path: String) -> Int {
        server.requestCount(path: path)
    }
}
