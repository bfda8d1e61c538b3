import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `URLSessionTransport` keeps the connection limit of the configuration it is given.
@Suite("URLSessionTransport connection limit")
struct URLSessionConnectionLimitTests {
    /// Sends six requests at once, whose answers are held until `open` of them have reached the
    /// server (and a little longer, for any more to show up), and returns how many connections
    /// the server accepted. Holding the answers, rather than delaying them by a fixed time, keeps
    /// a slow machine (TSan) from freeing a connection before the last request is sent.
    func connectionsFor(_ transport: URLSessionTransport, open: Int) async throws -> Int {
        let server = try TestServer()
        defer { server.shutdown() }
        let gate = TestServer.Gate()
        server.route("/held") { _ in .whenOpen(gate, .text("ok")) }
        let connection = HTTPConnection(baseURL: server.baseURL, configuration: .init(transport: transport, cache: nil))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 { group.addTask { try await connection.get("/held").status.code } }
            #expect(await eventually(timeout: .seconds(30)) { server.requestCount(path: "/held") >= open })
            try? await Task.sleep(for: .milliseconds(300))  // no throw may skip the gate's opening
            gate.open()
            for try await status in group { #expect(status == 200) }
        }
        return server.connectionsAccepted
    }

    @Test("a configuration allowing 2 connections per host gets 2 for six concurrent requests")
    func keepsTheCallersLimit() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 2
        #expect(try await connectionsFor(URLSessionTransport(configuration: configuration), open: 2) == 2)
    }

    @Test("the default configuration allows 16 connections per host: six concurrent requests get six")
    func defaultAllowsSixteen() async throws {
        #expect(try await connectionsFor(URLSessionTransport(), open: 6) == 6)
    }
}
