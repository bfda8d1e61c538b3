import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@Suite("TestServer scale and lifecycle", .ownThread)
struct ScaleTests {
    @Test("2,000 concurrent connections are held open, then all answered")
    func manyConnections() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let count = 2000
        var clients: [RawHTTPClient] = []
        clients.reserveCapacity(count)
        for _ in 0..<count { clients.append(try RawHTTPClient(port: server.port)) }
        #expect(eventuallyBlocking { server.connectionsOpen == count })
        for (index, client) in clients.enumerated() { try client.sendRequest("GET", "/echo/\(index)") }
        var answered = 0
        for (index, client) in clients.enumerated() {
            let response = try client.readResponse()
            if response.status == 200, try response.object()["path"] as? String == "/echo/\(index)" { answered += 1 }
        }
        #expect(answered == count)
        #expect(server.connectionsAccepted == count)
        #expect(server.totalRequests == count)
    }

    @Test("shutdown closes every connection, is idempotent and leaks no descriptors")
    func shutdownCleans() throws {
        let server = try TestServer()
        let port = server.port
        var clients: [RawHTTPClient] = []
        for index in 0..<50 {
            let client = try RawHTTPClient(port: port)
            if index % 2 == 0 { try client.sendRequest("GET", "/fault/stall") }
            clients.append(client)
        }
        #expect(eventuallyBlocking { server.connectionsOpen == 50 })
        #expect(ProcessSockets.bound(toPort: port) == 51)
        server.shutdown()
        server.shutdown()
        // Every client sees its connection end.
        #expect(clients.allSatisfy { $0.waitForClose() })
        #expect(server.connectionsOpen == 0)
        #expect(ProcessSockets.bound(toPort: port) == 0)
        clients.removeAll()
        // Counted by port: a process-wide count would see the other tests running in parallel.
        #expect(eventuallyBlocking { ProcessSockets.connected(toPort: port) == 0 })
        #expect((try? RawHTTPClient(port: port)) == nil)
    }

    @Test("a server released without shutdown stops by itself")
    func deinitShutsDown() throws {
        var port = 0
        do {
            let server = try TestServer()
            port = server.port
            #expect(try RawHTTPClient(port: port).exchange("GET", "/echo").status == 200)
        }
        #expect(ProcessSockets.bound(toPort: port) == 0)
        #expect((try? RawHTTPClient(port: port)) == nil)
    }
}
