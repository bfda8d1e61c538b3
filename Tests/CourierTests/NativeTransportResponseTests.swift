import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// How the native transport reads responses: framing, protocol edge cases and malformed or
/// oversized input (reliability cases A4, C, D, E). Every failure is one clear error, its
/// connection is discarded, and the pool serves the next request.
@Suite("Native transport: responses")
struct NativeTransportResponseTests {
    /// Expects `path` to fail with `kind`, then a request on the same transport to succeed.
    private func expectFailure(_ kind: HTTPConnectionError, path: String, server: TestServer,
                               transport: NativeTransport, timeout: Duration = .seconds(10),
                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let error = await failure { () async throws(HTTPConnectionError) in
            try await fetch(transport, server.url(path), timeout: timeout)
        }
        #expect(error == kind, "\(path): \(String(describing: error))", sourceLocation: sourceLocation)
        let next = try await fetch(transport, server.url("/echo"))
        #expect(next.status.code == 200, sourceLocation: sourceLocation)
    }

    @Test("C1 a garbage status line fails with badResponse carrying the parser's error")
    func garbageStatus() async throws {
        try await withNativeServer { server, transport throws in
            let error = await failure { () async throws(HTTPConnectionError) in try await fetch(transport, server.url("/fault/garbage-status")) }
            #expect(error == .badResponse)
            #expect(error?.underlying != nil)
            let lines = ["HTTP/1.1 00a OK", "HTTP/1.1 2147483648 OK", " HTTP/1.1 200 OK", "HTTP/1.1 20 OK",
                         "HTTP/1.1 200 OK\r\nNo colon here", "HTTP/1.1 200 OK\r\nX: a\u{0}b",
                         "HTTP/1.1 200 OK\r\n  folded before any field"]  // a fold after a field is unfolded (RFC 9112 §5.2)
            for (index, line) in lines.enumerated() {
                let path = "/bad-\(index)"
                server.route(path) { _ in .script([.send(line + "\r\nContent-Length: 0\r\n\r\n"), .close]) }
                try await expectFailure(.badResponse, path: path, server: server, transport: transport)
            }
        }
    }

    @Test("C3 a non-hexadecimal chunk size fails with badResponse")
    func badChunk() async throws {
        try await withNativeServer { server, transport throws in
            try await expectFailure(.badResponse, path: "/fault/bad-chunk", server: server, transport: transport)
        }
    }

    @Test("C3 chunk extensions and trailers are accepted; a chunked stream closed early is connectionLost")
    func chunkExtensionsAndTruncation() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            server.route("/extensions") { _ in
                .script([.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;name=value\r\nabc\r\n2 ; x\r\nde\r\n0\r\nX-Trailer: yes\r\n\r\n")])
            }
            server.route("/truncated") { _ in
                .script([.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc"), .close])
            }
            let transport = leaks.native()
            defer { transport.shutdown() }
            #expect(try await fetch(transport, server.url("/extensions")).text == "abcde")
            try await expectFailure(.connectionLost, path: "/truncated", server: server, transport: transport)
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test("C4 Content-Length: conflicting values and rubbish fail; equal repeats pass; chunked wins over a length")
    func contentLengthRules() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            server.route("/conflict") { _ in .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc")]) }
            server.route("/negative") { _ in .script([.send("HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nab")]) }
            server.route("/rubbish") { _ in .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\nab")]) }
            server.route("/equal") { _ in .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab")]) }
            server.route("/both") { _ in
                .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"), .close])
            }
            let transport = leaks.native()
            defer { transport.shutdown() }
            for path in ["/conflict", "/negative", "/rubbish"] {
                try await expectFailure(.badResponse, path: path, server: server, transport: transport)
            }
            #expect(try await fetch(transport, server.url("/equal")).text == "ab")
            #expect(try await fetch(transport, server.url("/both")).text == "ok")
        }
    }

    @Test("A4 a close in the middle of the head or the body fails with connectionLost")
    func closeMidResponse() async throws {
        try await withNativeServer { server, transport throws in
            try await expectFailure(.connectionLost, path: "/fault/close-mid-head", server: server, transport: transport)
            try await expectFailure(.connectionLost, path: "/fault/close-mid-body", server: server, transport: transport)
        }
    }

    @Test("B3 a body shorter than its Content-Length that then stalls times out")
    func shortLength() async throws {
        try await withNativeServer { server, transport throws in
            try await expectFailure(.timedOut, path: "/fault/short-length", server: server, transport: transport,
                                    timeout: .milliseconds(300))
        }
    }

    @Test("D4 bytes after a Content-Length body are not read as the next response: the connection is discarded")
    func longLength() async throws {
        try await withNativeServer { server, transport throws in
            #expect(try await fetch(transport, server.url("/fault/long-length")).text == "abcd")
            let next = try await fetch(transport, server.url("/echo")).decode(Echo.self)
            #expect(next.connection == 2)
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test("C6 two responses for one request: the first is delivered, the connection is discarded")
    func twoResponses() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { (leaks) throws in
            leaks.watch(server)
            server.route("/twice") { _ in
                .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none"), .pause(.milliseconds(20)),
                         .send("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\ntwo")])
            }
            let transport = leaks.native()
            defer { transport.shutdown() }
            #expect(try await fetch(transport, server.url("/twice")).text == "one")
            // The second response reaches the idle connection, which the client then closes.
            #expect(await eventually { server.connectionsOpen == 0 })
            #expect(try await fetch(transport, server.url("/echo")).decode(Echo.self).connection == 2)
        }
    }

    @Test("D1 HEAD with a Content-Length reads no body, and the connection is reused")
    func headRequest() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            server.route("/head") { _ in .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n")]) }
            let transport = leaks.native()
            defer { transport.shutdown() }
            let head = try await fetch(transport, server.url("/head"), method: .head)
            #expect(head.status.code == 200)
            #expect(head.body.isEmpty)
            #expect(head.headers["Content-Length"] == "100")
            #expect(try await fetch(transport, server.url("/echo")).decode(Echo.self).connection == 1)
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test("D2 204 and 304 have no body, even when a 204 wrongly declares a length; the connection is reused")
    func noBodyStatuses() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            server.route("/lying-204") { _ in .script([.send("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")]) }
            let transport = leaks.native()
            defer { transport.shutdown() }
            for path in ["/status/204", "/status/304", "/lying-204"] {
                let response = try await fetch(transport, server.url(path))
                #expect([204, 304].contains(response.status.code))
                #expect(response.body.isEmpty)
            }
            #expect(try await fetch(transport, server.url("/echo")).decode(Echo.self).connection == 1)
        }
    }

    @Test("D3 1xx informational responses are skipped; a lone 100 ends in a timeout")
    func informational() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            server.route("/early") { _ in
                .script([.send("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")])
            }
            let transport = leaks.native()
            defer { transport.shutdown() }
            let observer = RecordingObserver()
            let response = try await fetch(transport, server.url("/early"), observer: observer)
            #expect(response.text == "ok")
            #expect(observer.headStatuses == [200])
            try await expectFailure(.timedOut, path: "/status/100", server: server, transport: transport, timeout: .milliseconds(300))
        }
    }

    @Test("D5, D6 empty bodies and close-delimited bodies")
    func emptyAndCloseDelimited() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            server.route("/empty") { _ in .response(status: 200) }
            server.route("/until-close") { _ in .script([.send("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it"), .close]) }
            let transport = leaks.native()
            defer { transport.shutdown() }
            #expect(try await fetch(transport, server.url("/empty")).body.isEmpty)
            #expect(try await fetch(transport, server.url("/until-close")).text == "all of it")
            #expect(try await fetch(transport, server.url("/echo")).status.code == 200)
        }
    }

    @Test("E1, E2 a head over the size limit or with too many fields fails with headTooLarge")
    func hugeHeads() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            server.route("/big-head") { _ in
                .script([.send("HTTP/1.1 200 OK\r\nX-Big: \(String(repeating: "a", count: 70_000))\r\nContent-Length: 0\r\n\r\n")])
            }
            server.route("/many-fields") { _ in
                let fields = (0..<150).map { "X-F\($0): v\r\n" }.joined()
                return .script([.send("HTTP/1.1 200 OK\r\n\(fields)Content-Length: 0\r\n\r\n")])
            }
            let transport = leaks.native()
            defer { transport.shutdown() }
            try await expectFailure(.headTooLarge, path: "/big-head", server: server, transport: transport)
            try await expectFailure(.headTooLarge, path: "/many-fields", server: server, transport: transport)
            let strict = leaks.native(.init(maxHeadBytes: 1024, maxHeaderFields: 10))
            defer { strict.shutdown() }
            server.route("/medium-head") { _ in
                .script([.send("HTTP/1.1 200 OK\r\nX-Medium: \(String(repeating: "b", count: 2000))\r\nContent-Length: 0\r\n\r\n")])
            }
            let error = await failure { () async throws(HTTPConnectionError) in try await fetch(strict, server.url("/medium-head")) }
            #expect(error == .headTooLarge)
            #expect(try await fetch(transport, server.url("/medium-head")).status.code == 200)
        }
    }

    @Test("E3 a body over the request's maximum fails with bodyTooLarge, for a declared length and for chunks")
    func bodyTooLarge() async throws {
        try await withNativeServer { server, transport throws in
            for path in ["/bytes/5000", "/bytes/5000?chunked=1&chunk=100"] {
                let observer = RecordingObserver()
                let error = await failure { () async throws(HTTPConnectionError) in
                    try await fetch(transport, server.url(path), maxBodySize: 1000, observer: observer)
                }
                #expect(error == .bodyTooLarge, "\(path)")
                #expect(observer.progress.reduce(0) { $0 + $1.count } <= 1000)
                #expect(try await fetch(transport, server.url("/bytes/1000"), maxBodySize: 1000).body.count == 1000)
            }
        }
    }

    @Test("E5 10,000 one-byte chunks arrive intact")
    func manyChunks() async throws {
        try await withNativeServer { server, transport throws in
            let response = try await fetch(transport, server.url("/fault/chunked?chunks=10000&size=1"))
            #expect(response.body == TestServer.bytesPattern(count: 10_000))
        }
    }

    @Test("bodies stream to the observer with progress against the declared length")
    func streaming() async throws {
        try await withNativeServer { server, transport throws in
            let observer = RecordingObserver()
            let response = try await fetch(transport, server.url("/fault/trickle?bytes=5&interval=20"), observer: observer)
            #expect(response.body == TestServer.bytesPattern(count: 5))
            #expect(observer.headStatuses == [200])
            // One callback per arrival: bytes sent 20 ms apart may still arrive together under load.
            #expect(observer.progress.count >= 2)
            #expect(observer.progress.reduce(0) { $0 + $1.count } == 5)
            #expect(observer.progress.last?.soFar == 5 && observer.progress.last?.expected == 5)
            let large = try await fetch(transport, server.url("/bytes/300000"), observer: observer)
            #expect(large.body == TestServer.bytesPattern(count: 300_000))
            let silent = RecordingObserver(observesBody: false)
            _ = try await fetch(transport, server.url("/bytes/1000"), observer: silent)
            #expect(silent.progress.isEmpty)
            #expect(silent.headStatuses == [200])
        }
    }
}
