@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// Which requests an HTTP/2 connection that breaks sends again (README, "GOAWAY and refused
/// streams"): only those left unanswered on a pooled connection that had carried a response
/// before, and only when they are safe to repeat. A connection that breaks under its first
/// requests fails them all with `connectionLost`: the server may have processed them.
@Suite("HTTP/2 connections that break unanswered")
struct HTTP2StaleConnectionTests {
    /// The outcome of `request` on `connection`: its response, or its error.
    private static func outcome(_ connection: HTTPConnection, _ request: HTTPRequest) async -> Result<HTTPResponse, HTTPConnectionError> {
        do {
            return .success(try await connection.send(request))
        } catch {
            return .failure(error)
        }
    }

    /// Sends `requests` at once and returns how each ended, in order.
    private static func burst(_ connection: HTTPConnection, _ requests: [HTTPRequest]) async -> [Result<HTTPResponse, HTTPConnectionError>] {
        await withTaskGroup(of: (Int, Result<HTTPResponse, HTTPConnectionError>).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { (index, await outcome(connection, request)) }
            }
            var results: [Int: Result<HTTPResponse, HTTPConnectionError>] = [:]
            for await (index, result) in group { results[index] = result }
            return requests.indices.map { results[$0]! }
        }
    }

    /// Runs `body` with a connection over a tracked h2c transport to `peer`, and checks that
    /// nothing leaked.
    private static func withClient(of peer: HTTP2ScriptedPeer, _ body: (HTTPConnection) async throws -> Void) async throws {
        try await withLeakCheck { leaks throws in
            leaks.watch(port: peer.port)
            let transport = leaks.native(NativeTransport.Configuration().speakingH2C())
            defer { transport.shutdown() }
            try await body(leaks.track(HTTPConnection(baseURL: peer.baseURL,
                                                      configuration: .init(timeout: .seconds(20), transport: transport, cache: nil))))
        }
    }

    @Test("a new connection that closes after reading its first 3 GETs, unanswered, fails all 3 with connectionLost and repeats none (the server got each once)")
    func firstRequestsAreNotRepeated() async throws {
        let arrivals = Locked<[String]>([])
        let peer = try HTTP2ScriptedPeer { index, connection in
            try connection.start()
            guard index == 0 else { return try connection.serve() }
            for _ in 0..<3 {
                guard let request = try connection.nextRequest() else { return }
                arrivals.withLock { $0.append(request.path) }
            }
        }
        defer { peer.close() }
        try await Self.withClient(of: peer) { connection in
            let results = await Self.burst(connection, (0..<3).map { HTTPRequest(.get, "/first/\($0)") })
            for (index, result) in results.enumerated() {
                guard case .failure(let error) = result else {
                    Issue.record("GET /first/\(index) was sent again and answered")
                    continue
                }
                #expect(error == .connectionLost, "GET /first/\(index): \(error)")
            }
            #expect(peer.connectionsAccepted == 1, "\(peer.connectionsAccepted) connections")
            #expect(arrivals.withLock { $0.sorted() } == ["/first/0", "/first/1", "/first/2"])
        }
    }

    @Test("a pooled connection that carried a response, then closes after reading the next GETs and POST unanswered: the GETs go out once more on a new connection, the POST fails with connectionLost")
    func pooledConnectionRepeatsItsUnansweredGETs() async throws {
        let arrivals = Locked<[String]>([])
        let peer = try HTTP2ScriptedPeer { index, connection in
            try connection.start()
            while let request = try connection.nextRequest() {
                arrivals.withLock { $0.append(request.path) }
                if index == 0, request.path != "/warm" {
                    if arrivals.withLock({ $0.count }) == 4 { return }
                    continue
                }
                connection.respond(request.streamID, body: Array(request.path.utf8))
            }
        }
        defer { peer.close() }
        try await Self.withClient(of: peer) { connection in
            let warm = try await connection.get("/warm")
            #expect(warm.body == Data("/warm".utf8))
            let results = await Self.burst(connection, [HTTPRequest(.get, "/again/0"), HTTPRequest(.post, "/post", body: .text("once")),
                                                        HTTPRequest(.get, "/again/1")])
            #expect((try? results[0].get().body) == Data("/again/0".utf8), "\(results[0])")
            #expect((try? results[2].get().body) == Data("/again/1".utf8), "\(results[2])")
            #expect(results[1].failure == .connectionLost, "\(results[1])")
            #expect(peer.connectionsAccepted == 2, "\(peer.connectionsAccepted) connections")
            #expect(arrivals.withLock { $0.filter { $0 == "/post" }.count } == 1)
        }
    }
}

private extension Result {
    /// The error, or `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
