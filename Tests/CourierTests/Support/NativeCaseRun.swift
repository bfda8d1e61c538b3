import Courier
import Foundation
import Testing

/// Runs `requests` against `server` through a native transport made with `configuration`, with
/// every promise of ``runCase(_:on:_:timeout:configure:prepare:during:sourceLocation:)`` checked
/// (one terminal callback per request, a connection that still serves `GET /echo`, nothing
/// leaked, the transport included).
/// - Parameters:
///   - during: runs once every request has started, with the connection and the requests' ids.
///   - ended: runs with a request's index as its terminal closure runs.
/// - Returns: each request's outcome, in order.
func runNativeCase(_ requests: [HTTPRequest], on server: some CaseServer, configuration: NativeTransport.Configuration,
                   timeout: Duration = .seconds(10),
                   prepare: (HTTPConnection) async throws -> Void = { _ in },
                   during: (HTTPConnection, [RequestID]) async throws -> Void = { _, _ in },
                   ended: @escaping @Sendable (Int) -> Void = { _ in },
                   sourceLocation: SourceLocation = #_sourceLocation) async throws -> [CaseOutcome] {
    let made = WeakReference<NativeTransport>()
    return try await runCase(.native, on: server, requests, timeout: timeout,
                             configure: { connection in
                                 let transport = NativeTransport(configuration: configuration)
                                 made.value = transport
                                 connection.transport = transport
                             },
                             prepare: prepare,
                             during: { context, ids in
                                 if let transport = made.value { context.leaks.track(transport) }
                                 try await during(context.connection, ids)
                             },
                             ended: ended, sourceLocation: sourceLocation)
}

/// Runs `requests` against an ``HTTP2ScriptedPeer`` running `script` on each connection, through
/// a native transport speaking HTTP/2 by prior knowledge (see
/// ``runNativeCase(_:on:configuration:timeout:prepare:during:sourceLocation:)``).
/// - Returns: each request's outcome in order, and the peer (for its counts).
func runHTTP2Case(_ requests: [HTTPRequest], timeout: Duration = .seconds(10), connectTimeout: Duration = .seconds(10),
                  prepare: (HTTPConnection) async throws -> Void = { _ in },
                  during: (HTTPConnection, [RequestID]) async throws -> Void = { _, _ in },
                  sourceLocation: SourceLocation = #_sourceLocation,
                  script: @escaping HTTP2ScriptedPeer.Script) async throws -> (outcomes: [CaseOutcome], peer: HTTP2ScriptedPeer) {
    let peer = try HTTP2ScriptedPeer(script: script)
    defer { peer.close() }
    let configuration = NativeTransport.Configuration(connectTimeout: connectTimeout).speakingH2C()
    let outcomes = try await runNativeCase(requests, on: peer, configuration: configuration, timeout: timeout,
                                           prepare: prepare, during: during, sourceLocation: sourceLocation)
    return (outcomes, peer)
}

extension NativeTransport.Configuration {
    /// This configuration speaking HTTP/2 by prior knowledge (h2c) and taking no proxy from the
    /// environment: how a test reaches a local HTTP/2 server.
    func speakingH2C() -> Self {
        var configuration = self
        configuration.httpVersion = .http2PriorKnowledge
        configuration.proxy = .none
        return configuration
    }
}
