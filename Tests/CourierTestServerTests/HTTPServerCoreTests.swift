import CourierTestServer
import CourierTestSupport
import CourierWire
import Dispatch
import Foundation
import HTTPServerCore
import Synchronization
import Testing

@Suite("HTTPServerCore server and responder", .ownThread)
struct HTTPServerCoreTests {
    @Test("a responder works from another thread, later")
    func respondLater() throws {
        let server = try HTTPServer { request, responder in
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
                responder.respond(status: 200, headers: [("X-Path", request.path)], body: Array("later".utf8))
            }
        }
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("GET", "/a?b")
        #expect(response.text == "later")
        #expect(response.header("x-path") == "/a")
        #expect(response.header("content-length") == "5")
        #expect(response.header("date")?.hasSuffix(" GMT") == true)
    }

    @Test("only the first completion of a request counts")
    func exactlyOnce() throws {
        let server = try HTTPServer { request, responder in
            responder.respond(status: 201, body: Array("first \(request.requestNumber)".utf8))
            responder.respond(status: 500, body: Array("second".utf8))
            responder.writeRaw(Array("garbage".utf8))
            responder.closeConnection()
            responder.complete()
        }
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.exchange("GET", "/").text == "first 1")
        #expect(try client.exchange("GET", "/").text == "first 2")
        #expect(client.pending.isEmpty)
    }

    @Test("responding after the client left is a no-op")
    func respondAfterDeath() throws {
        let responders = Mutex<[HTTPServerResponder]>([])
        let server = try HTTPServer { _, responder in
            responders.withLock { $0.append(responder) }
        }
        defer { server.shutdown() }
        do {
            let client = try RawHTTPClient(port: server.port)
            try client.sendRequest("GET", "/gone")
            #expect(eventuallyBlocking { server.totalRequests == 1 })
        }
        #expect(eventuallyBlocking { server.connectionsOpen == 0 })
        for responder in responders.withLock({ $0 }) {
            responder.respond(status: 200, body: Array("too late".utf8))
            responder.writeRaw([1, 2, 3])
            responder.shutdownWrite()
        }
        let fresh = try RawHTTPClient(port: server.port, timeout: 0.3)
        try fresh.sendRequest("GET", "/next")
        #expect(eventuallyBlocking { server.totalRequests == 2 })
        #expect(server.requestCount(path: "/gone") == 1)
        #expect(server.connectionsAccepted == 2)
    }

    @Test("two event loops share the connections")
    func twoLoops() throws {
        let loops = Mutex<Set<String>>([])
        let server = try HTTPServer(configuration: .init(eventLoopCount: 2)) { request, responder in
            #expect(responder.eventLoop.inEventLoop)
            loops.withLock { _ = $0.insert(responder.eventLoop.name) }
            responder.respond(status: 200, body: Array("\(request.connectionNumber)".utf8))
        }
        defer { server.shutdown() }
        #expect(server.eventLoops.count == 2)
        for index in 1...4 {
            #expect(try RawHTTPClient(port: server.port).exchange("GET", "/").text == "\(index)")
        }
        #expect(loops.withLock { $0.count } == 2)
    }

    @Test("binding a port in use throws a SocketError")
    func portInUse() throws {
        let first = try HTTPServer { _, responder in responder.respond(status: 204) }
        defer { first.shutdown() }
        #expect(throws: SocketError.self) {
            _ = try HTTPServer(port: first.port) { _, responder in responder.respond(status: 204) }
        }
    }

    @Test("request targets split into path and query")
    func targets() {
        #expect(HTTPServerRequest.split(target: "/a/b?c=1&d") == ("/a/b", "c=1&d"))
        #expect(HTTPServerRequest.split(target: "/") == ("/", ""))
        #expect(HTTPServerRequest.split(target: "http://host:80/p?q") == ("/p", "q"))
        #expect(HTTPServerRequest.split(target: "http://host") == ("/", ""))
        #expect(HTTPServerRequest.split(target: "*") == ("*", ""))
        #expect(HTTPServerRequest.split(target: "/?") == ("/", ""))
    }
}
