#if canImport(Glibc)
import Glibc
#endif
import CourierWire
import Dispatch
import Synchronization

/// An event-driven HTTP/1.1 server on CourierWire's event loops.
///
/// Connections are served by one or a few event loop threads (never a thread per
/// connection), so tens of thousands of idle or slow connections cost only memory.
/// On each connection requests are read and answered one at a time: bytes of
/// pipelined requests are buffered and processed in order.
///
/// What the server does on its own:
/// - keep-alive for HTTP/1.1 (and HTTP/1.0 with `Connection: keep-alive`);
/// - request bodies framed by `Content-Length` or the chunked coding, given to the
///   handler whole; `Expect: 100-continue` is answered with `100 Continue`;
/// - `400` for a malformed request line or head, `431` for a head over
///   ``Configuration/limits`` (size or field count), `413` for a body over
///   ``Configuration/maxBodyBytes``, `501` for an unsupported transfer coding;
///   after such an error the connection closes (with a short linger so the client
///   reads the answer);
/// - a request with both `Transfer-Encoding` and `Content-Length`, a head with a line
///   ending in a bare LF, and an HTTP/1.1 head without exactly one `Host` get `400` and the
///   connection closes (no request smuggling: nothing after such a head is read);
/// - a connection whose request head takes longer than
///   ``Configuration/headerTimeout`` is closed (slowloris), and so is a keep-alive
///   connection idle for ``Configuration/idleTimeout``; a request body that does not
///   arrive whole within ``Configuration/bodyTimeout`` gets `408` and the connection closes;
/// - at most ``Configuration/maxConnections`` connections are open at once; further ones
///   are closed as soon as they are accepted;
/// - a client that closes its side abandons its request: the connection closes and
///   the responder becomes a no-op.
///
/// The handler runs on a loop thread and must not block it; it answers through the
/// ``HTTPServerResponder``, at once or later from any thread.
///
/// ```swift
/// let server = try HTTPServer { request, responder in
///     responder.respond(status: 200, headers: [("Content-Type", "text/plain")], body: Array("hi".utf8))
/// }
/// defer { server.shutdown() }
/// print(server.port)
/// ```
public final class HTTPServer: Sendable {
    /// Called on a loop thread with each complete request.
    public typealias Handler = @Sendable (HTTPServerRequest, HTTPServerResponder) -> Void

    /// The bound port (the one the kernel picked when `port` was 0); 0 for a Unix-socket server.
    public let port: Int
    /// The bound address; `0.0.0.0:0` for a Unix-socket server (see ``unixSocketPath``).
    public let address: SocketAddress
    /// The path of the Unix domain socket it listens on, for a server made with
    /// ``init(unixSocketPath:configuration:handler:)``; `nil` for a TCP server.
    public let unixSocketPath: String?
    /// The configuration the server runs with.
    public let configuration: Configuration

    private let group: EventLoopGroup
    private let contexts: [LoopBound<LoopContext>]
    private let server: ServerContext
    private let stopped = Atomic<Bool>(false)

    /// Binds `host:port`, starts the event loops and begins accepting connections.
    ///
    /// Raises the process's open-file soft limit to its hard limit, so that the
    /// server can hold many connections.
    ///
    /// - Parameters:
    ///   - host: The address to bind. Default: `"127.0.0.1"`.
    ///   - port: The port; 0 (the default) lets the kernel pick one, see ``port``.
    ///   - configuration: Limits and timeouts. Default: `Configuration()`.
    ///   - handler: Called with every complete request.
    /// - Throws: ``SocketError`` when binding or starting the loops fails.
    public convenience init(
        host: String = "127.0.0.1",
        port: Int = 0,
        configuration: Configuration = Configuration(),
        handler: @escaping Handler
    ) throws(SocketError) {
        Socket.raiseOpenFileLimit()
        let listener = try Socket.listen(host: host, port: port, backlog: configuration.backlog)
        let address: SocketAddress
        do throws(SocketError) {
            address = try listener.localAddress()
        } catch {
            listener.close()
            throw error
        }
        try self.init(listener: listener, address: address, unixSocketPath: nil, configuration: configuration, handler: handler)
    }

    /// Listens on a new Unix domain socket at `unixSocketPath`, starts the event loops and begins
    /// accepting connections; ``shutdown()`` removes the socket file.
    ///
    /// - Parameters:
    ///   - unixSocketPath: Where to create the socket (at most 107 bytes); nothing may exist there.
    ///   - configuration: Limits and timeouts. Default: `Configuration()`.
    ///   - handler: Called with every complete request.
    /// - Throws: ``SocketError`` when binding (`EADDRINUSE` when the path exists) or starting the loops fails.
    public convenience init(
        unixSocketPath: String,
        configuration: Configuration = Configuration(),
        handler: @escaping Handler
    ) throws(SocketError) {
        Socket.raiseOpenFileLimit()
        let listener = try Socket.listen(unixPath: unixSocketPath, backlog: configuration.backlog)
        let unspecified = SocketAddress(ip: "0.0.0.0", port: 0)!
        do throws(SocketError) {
            try self.init(listener: listener, address: unspecified, unixSocketPath: unixSocketPath,
                          configuration: configuration, handler: handler)
        } catch {
            unlink(unixSocketPath)
            throw error
        }
    }

    /// Starts the loops and accepts on `listener` (closed here when starting fails).
    private init(listener: Socket, address: SocketAddress, unixSocketPath: String?,
                 configuration: Configuration, handler: @escaping Handler) throws(SocketError) {
        let group: EventLoopGroup
        do throws(SocketError) {
            group = try EventLoopGroup(count: max(1, configuration.eventLoopCount), name: "http-server")
        } catch {
            listener.close()
            throw error
        }
        self.address = address
        self.port = address.port
        self.unixSocketPath = unixSocketPath
        self.configuration = configuration
        self.group = group
        let server = ServerContext(configuration: configuration, handler: handler)
        self.server = server
        let contexts = group.loops.map { loop in LoopBound(sending: LoopContext(loop: loop, server: server), to: loop) }
        self.contexts = contexts

        let outcome = Mutex<SocketError??>(nil)
        let done = DispatchSemaphore(value: 0)
        let first = contexts[0]
        first.run { context in
            do throws(SocketError) {
                try context.loop.register(fd: listener.descriptor, interest: .readable) { _ in
                    first.value.acceptPending(from: listener, contexts: contexts)
                }
                context.listener = listener
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
            done.signal()
        }
        done.wait()
        if case .some(.some(let error)) = outcome.withLock({ $0 }) {
            listener.close()
            group.shutdown()
            throw error
        }
    }

    deinit {
        shutdown()
    }

    /// Stops accepting, closes the listener and every connection, and stops the loops.
    ///
    /// Idempotent and callable from any thread; it waits for the loop threads to end,
    /// except when called on one of them. Responders of open requests become no-ops.
    public func shutdown() {
        if stopped.exchange(true, ordering: .acquiringAndReleasing) {
            group.shutdown()
            return
        }
        server.isShuttingDown.store(true, ordering: .releasing)
        for context in contexts {
            context.run { $0.closeAll() }
        }
        group.shutdown()
        if let unixSocketPath { unlink(unixSocketPath) }
    }

    /// How many connections were accepted since the start (including ones closed since).
    public var connectionsAccepted: Int {
        server.statistics.withLock { $0.accepted }
    }

    /// How many connections are open now.
    public var connectionsOpen: Int {
        server.statistics.withLock { $0.open }
    }

    /// How many requests were handed to the handler, over all paths.
    public var totalRequests: Int {
        server.statistics.withLock { $0.total }
    }

    /// How many connections were closed at once because ``Configuration/maxConnections``
    /// were already open.
    public var connectionsRefused: Int {
        server.statistics.withLock { $0.refused }
    }

    /// How many requests for `path` were handed to the handler.
    ///
    /// Paths are counted one by one up to ``maxCountedPaths`` keys; requests for further
    /// paths, and for paths over ``maxCountedPathBytes``, are counted under ``otherPathsKey``.
    ///
    /// - Parameter path: A path without query, for example `"/echo"`, or ``otherPathsKey``.
    /// - Returns: The count; 0 for paths never requested (or counted under ``otherPathsKey``).
    public func requestCount(path: String) -> Int {
        server.statistics.withLock { $0.perPath.count(path) }
    }

    /// How many keys the per-path request counts hold now (at most ``maxCountedPaths``).
    public var countedPaths: Int {
        server.statistics.withLock { $0.perPath.counts.count }
    }

    /// The most keys the per-path request counts hold, ``otherPathsKey`` included: 1,024.
    public static let maxCountedPaths = 1024

    /// The longest path, in UTF-8 bytes, that gets a count of its own: 1,024.
    public static let maxCountedPathBytes = 1024

    /// The key that counts the requests whose paths get no count of their own: `"(other)"`.
    public static let otherPathsKey = "(other)"

    /// The event loops serving this server.
    public var eventLoops: [EventLoop] { group.loops }
}
