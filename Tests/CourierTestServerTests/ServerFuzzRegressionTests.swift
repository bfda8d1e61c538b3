import CourierTestServer
import CourierTestSupport
import Foundation
import HTTPServerCore
import Testing

/// Inputs that the ServerInputFuzzer under `Fuzz/` found, one test per finding, named after it.
@Suite("Fuzz regressions (HTTPServerCore)", .ownThread)
struct ServerFuzzRegressionTests {
    @Test("ServerInputFuzzer an error answer to HEAD has no body", arguments: [
        ("HEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", 413),
        ("HEAD / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        ("HEAD / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
    ])
    func headErrorWithoutBody(request: String, status: Int) throws {
        let server = try HTTPServer(configuration: .init(maxBodyBytes: 512)) { _, responder in
            responder.respond(status: 200)
        }
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port, timeout: 5)
        try client.send(request)
        let wire = try client.readUntilClose()
        let text = String(decoding: wire, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 \(status) "), "\(text)")
        // Everything received is the head: it ends with the first empty line.
        #expect(text.hasSuffix("\r\n\r\n") && text.components(separatedBy: "\r\n\r\n").count == 2, "\(text)")
        #expect(text.lowercased().contains("connection: close"))

        // The same request with GET still gets the error's body.
        let get = try RawHTTPClient(port: server.port, timeout: 5)
        try get.send("GET" + request.dropFirst(4))
        let response = try get.readResponse()
        #expect(response.status == status)
        #expect(!response.body.isEmpty)
        #expect(eventuallyBlocking { server.connectionsOpen == 0 })
    }
}
