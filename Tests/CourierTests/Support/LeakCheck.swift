@testable import Courier
import CourierTestServer
import Foundation
import Synchronization
import Testing

/// The end-of-test check of reliability case K1: after a test released everything it made, no
/// `HTTPConnection`, delegate, transport, pool or pooled connection is still alive, and no socket of
/// this process is still connected to the test's servers.
///
/// Use it through ``withLeakCheck(_:_:)``, which runs the test's body in a scope of its own (so
/// that the body's locals are gone when the check runs) and then verifies:
/// - every object registered with ``track(_:)`` (connections, delegates, transports) was freed;
/// - every native transport made by ``transport(_:)`` freed all its pools and connection objects;
/// - no descriptor in `/proc/self/fd` is a TCP socket connected to one of the servers' ports.
///
/// The descriptors are counted per server port rather than in total, because the suite runs in
/// parallel: other tests open and close sockets all the time, but only this test talks to its
/// own server's port.
final class LeakCheck: Sendable {
    private struct Weak: @unchecked Sendable {  // only a weak pointer to a Sendable object
        weak var object: AnyObject?
        let name: String
    }

    private let objects = Mutex<[Weak]>([])
    private let censuses = Mutex<[NativeCensus]>([])
    private let ports = Mutex<[Int: Int]>([:])

    init() {}

    /// Registers an object that must be freed by the end of the test.
    /// - Returns: `object`, so that the call can wrap an initializer.
    @discardableResult
    func track<Object: AnyObject & Sendable>(_ object: Object) -> Object {
        add(object)
        return object
    }

    private func add(_ object: AnyObject) {
        objects.withLock { $0.append(Weak(object: object, name: String(describing: type(of: object)))) }
    }

    /// Registers a server whose port must have no client sockets of this process at the end.
    func watch(_ server: TestServer) {
        watch(port: server.port)
    }

    /// Registers a port that must have no more client sockets of this process at the end than
    /// `baseline` (sockets the test itself holds on purpose, such as a blackhole's fillers).
    func watch(port: Int, baseline: Int = 0) {
        ports.withLock { $0[port] = baseline }
    }

    /// A fresh transport of the given kind, tracked (and its pools counted, for the native one).
    func transport(_ kind: TransportUnderTest) -> any Transport {
        let transport = kind.make()
        if let native = transport as? NativeTransport { censuses.withLock { $0.append(native.census) } }
        add(transport as AnyObject)
        return transport
    }

    /// A fresh native transport with the given configuration, tracked, its pools and connection
    /// objects counted by its census.
    /// - Parameter configuration: the transport's configuration. Default: the default configuration.
    /// - Returns: the transport; shut it down or release it before the body ends.
    func native(_ configuration: NativeTransport.Configuration = .init()) -> NativeTransport {
        track(NativeTransport(configuration: configuration))
    }

    /// Registers a native transport you made yourself: it must be freed, and its census must
    /// reach zero (no pool or connection object alive).
    /// - Returns: `transport`, so that the call can wrap an initializer.
    @discardableResult
    func track(_ transport: NativeTransport) -> NativeTransport {
        censuses.withLock { $0.append(transport.census) }
        add(transport)
        return transport
    }

    /// A tracked connection to `server` over a fresh tracked transport; the server's port is watched.
    func connection(_ server: some CaseServer, _ kind: TransportUnderTest, timeout: Duration? = .seconds(10),
                    configure: (inout HTTPConnection.Configuration) -> Void = { _ in }) -> HTTPConnection {
        watch(port: server.port)
        var configuration = HTTPConnection.Configuration(timeout: timeout, transport: transport(kind))
        configure(&configuration)
        return track(HTTPConnection(baseURL: server.baseURL, configuration: configuration))
    }

    /// The tracked objects still alive.
    var survivors: [String] {
        objects.withLock { $0.filter { $0.object != nil }.map(\.name) }
    }

    /// Pools and connection objects still alive in the tracked native transports.
    var liveNativeObjects: Int {
        censuses.withLock { $0.reduce(0) { $0 + $1.livePools + $1.liveConnections } }
    }

    /// Client sockets of this process still connected to a watched port, beyond its baseline.
    var openSockets: Int {
        ports.withLock { $0 }.reduce(0) { $0 + max(ProcessSockets.connected(toPort: $1.key) - $1.value, 0) }
    }

    /// Waits (a bounded time) for everything to be released, then records an issue for whatever
    /// survived.
    /// - Parameter timeout: how long to wait for the last releases. Default: 20 s.
    func verify(timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation) async {
        // Cheap checks first; the sockets only once every object is gone. Polled every 20 ms:
        // many tests verify at once on a 2-core machine.
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var clean = false
        while !clean {
            clean = survivors.isEmpty && liveNativeObjects == 0 && openSockets == 0
            if clean || clock.now >= deadline { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard !clean else { return }
        #expect(survivors.isEmpty, "objects outlived their last reference: \(survivors)", sourceLocation: sourceLocation)
        #expect(liveNativeObjects == 0, "native pools or connections still alive", sourceLocation: sourceLocation)
        #expect(openSockets == 0, "client sockets still open to the test's servers", sourceLocation: sourceLocation)
    }
}

/// Runs an integration test's body with a ``LeakCheck``, then verifies that the body leaked
/// nothing it registered: connections, delegates, transports, pools, sockets.
///
/// The body runs in its own scope, so its locals are released before the check; keep no
/// reference to a tracked object outside it.
/// - Parameter timeout: how long the check waits for the last releases. Default: 20 s.
func withLeakCheck<Result>(timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation,
                           _ body: (LeakCheck) async throws -> Result) async rethrows -> Result {
    _ = StallWatchdog.started
    let check = LeakCheck()
    let result = try await body(check)
    await check.verify(timeout: timeout, sourceLocation: sourceLocation)
    return result
}
