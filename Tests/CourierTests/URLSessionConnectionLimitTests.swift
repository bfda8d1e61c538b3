import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `URLSessionTransport` keeps the connection limit of the configuration it is given.
@Suite("URLSessionTransport connection limit")
struct URLSessionConnectionLimitTests {
    /// Sends six slow requests at once and returns how many connections the server accepted.
    func connectionsFor(_ transport: URLSessionTransport) async throws -> Int {
        let server = try TestServer()
        defer { server.shutdown() }
        let connection = HTTPConnection(baseURL: server.baseURL, configuration: .init(transport: transport, cache: nil))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 { group.addTask { try await connection.get("/delay/300").status.code } }
            for try await status in group { #expect(status == 200) }
        }
        return server.connectionsAccepted
    }

    @Test("a configuration allowing 2 connections per host gets 2 for six concurrent requests")
    func keepsTheCallersLimit() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 2
        #expect(try await connectionsFor(URLSessionTransport(configuration: configuration)) == 2)
    }

    @Test("the default configuration allows 16 connections per host: six concurrent requests get six")
    func defaultAllowsSixteen() async throws {
        #expect(try await connectionsFor(URLSessionTransport()) == 6)
    }
}
