import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// After a transport decompresses a body, the response's `Content-Encoding` and `Content-Length`
/// describe the body the caller gets; the server's values stay in `contentDecoding`.
@Suite("Decoded bodies carry truthful headers")
struct ContentDecodingHeaderTests {
    static let plain = Data(String(repeating: "a decoded body, repeated. ", count: 200).utf8)
    static let gzip = Data(gzipCompressed(plain))

    static func server() throws -> TestServer {
        let server = try TestServer()
        server.route("/gzip") { request in
            .response(status: 200, headers: [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")],
                      body: request.method == "HEAD" ? Data() : Self.gzip)
        }
        server.route("/plain") { _ in .response(status: 200, headers: [("Content-Type", "text/plain")], body: Self.plain) }
        return server
    }

    @Test("a gzip body arrives decoded, without Content-Encoding, with its decoded Content-Length; the server's values in contentDecoding",
          arguments: TransportUnderTest.allCases)
    func collected(transport: TransportUnderTest) async throws {
        let server = try Self.server()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport)
            let response = try await connection.get("/gzip")
            #expect(response.body == Self.plain)
            #expect(response.headers["Content-Encoding"] == nil)
            #expect(response.headers["Content-Length"] == String(Self.plain.count))
            #expect(response.contentDecoding == HTTPResponse.ContentDecoding(contentEncoding: "gzip", encodedLength: Int64(Self.gzip.count)))
            #expect(response.head.contentDecoding == response.contentDecoding)

            // A body sent as it is keeps its fields and has no decoding.
            let plain = try await connection.get("/plain")
            #expect(plain.headers["Content-Length"] == String(Self.plain.count))
            #expect(plain.contentDecoding == nil)
        }
    }

    @Test("a HEAD response keeps Content-Encoding: no body was decoded", arguments: TransportUnderTest.allCases)
    func headKeepsFields(transport: TransportUnderTest) async throws {
        let server = try Self.server()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport)
            let response = try await connection.head("/gzip")
            #expect(response.headers["Content-Encoding"] == "gzip")
            #expect(response.contentDecoding == nil)
        }
    }

    @Test("a streamed gzip body: the head has neither field, and contentDecoding says what the server sent",
          arguments: TransportUnderTest.allCases)
    func streamed(transport: TransportUnderTest) async throws {
        let server = try Self.server()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport)
            let response = try await connection.stream(HTTPRequest(.get, "/gzip"))
            #expect(response.headers["Content-Encoding"] == nil)
            #expect(response.headers["Content-Length"] == nil)
            #expect(response.head.contentDecoding?.contentEncoding == "gzip")
            #expect(response.head.contentDecoding?.encodedLength == Int64(Self.gzip.count))
            var body = Data()
            for try await chunk in response.body { body.append(chunk) }
            #expect(body == Self.plain)

            // A streamed HEAD response has no body to decode: it keeps the server's fields.
            let head = try await connection.stream(HTTPRequest(.head, "/gzip"))
            #expect(head.headers["Content-Encoding"] == "gzip")
            #expect(head.head.contentDecoding == nil)
            for try await _ in head.body {}
        }
    }
}
