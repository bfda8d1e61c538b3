import Courier
import CourierTestServer
import Foundation
import Testing

/// Reliability catalogue, section E: huge input, on both transports.
@Suite("Catalogue E: huge input")
struct HugeInputCases {
    @Test("E1 a response head over the 64 KiB limit: headTooLarge", arguments: TransportUnderTest.allCases)
    func headTooLarge(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // 2 MiB of header: over Courier's 64 KiB and over libcurl's own limits too.
        let huge = String(repeating: "a", count: 2 << 20)
        server.route("/huge-head") { _ in .script([.send("HTTP/1.1 200 OK\r\nX-Huge: \(huge)\r\nContent-Length: 2\r\n\r\nok"), .close]) }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/huge-head"))
        #expect(outcome.error == .headTooLarge, "\(outcome.result)")
    }

    @Test("E2 more header fields than allowed: headTooLarge (libcurl has no field limit and delivers them all)", arguments: TransportUnderTest.allCases)
    func tooManyFields(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let fields = (0..<500).map { "X-Field-\($0): \($0)\r\n" }.joined()
        server.route("/many-fields") { _ in .script([.send("HTTP/1.1 200 OK\r\n\(fields)Content-Length: 2\r\n\r\nok"), .close]) }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/many-fields"))
        switch transport {
        case .native:
            #expect(outcome.error == .headTooLarge, "\(outcome.result)")
        case .urlSession:
            #expect(outcome.response?.headers["X-Field-499"] == "499", "\(outcome.result)")
        }
    }

    @Test("E3 a body over the request's maximum size, with a length and chunked: bodyTooLarge", arguments: TransportUnderTest.allCases)
    func bodyTooLarge(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let outcomes = try await runCase(transport, on: server, [HTTPRequest(.get, "/bytes/1048576"), HTTPRequest(.get, "/bytes/1048576?chunked=1")],
                                         configure: { $0.maxResponseBodySize = 64 * 1024 })
        for outcome in outcomes {
            #expect(outcome.error == .bodyTooLarge, "\(outcome.result)")
        }
    }

    // Own thread: compressing 200 MiB blocks for seconds, and would stall the tests that run
    // in parallel on Swift's cooperative threads (their timeouts would seem to fire late).
    @Test("E4 a gzip bomb (200 MiB of zeros) stops at the decompression limit", .ownThread, arguments: TransportUnderTest.allCases)
    func gzipBomb(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let bomb = Data(gzipCompressed(Data(count: 200 << 20)))
        server.route("/bomb") { _ in .response(status: 200, headers: [("Content-Encoding", "gzip")], body: bomb) }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/bomb"), timeout: .seconds(30),
                                        configure: { $0.maxResponseBodySize = 8 << 20 })
        // Courier's own inflater stops at its ratio limit; libcurl inflates until the body limit.
        #expect(outcome.error == (transport == .native ? .decompressionFailed : .bodyTooLarge), "\(outcome.result)")
    }

    @Test("E5 10,000 one-byte chunks arrive intact", arguments: TransportUnderTest.allCases)
    func tinyChunks(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/fault/chunked?chunks=10000&size=1"), timeout: .seconds(30))
        #expect(outcome.response?.body == TestServer.bytesPattern(count: 10_000), "\(outcome.result)")
    }

    @Test("E6 (L1) 1-byte chunks padded with 4 KiB chunk extensions count toward the body limit: bodyTooLarge", arguments: TransportUnderTest.allCases)
    func paddedChunks(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // 2,000 payload bytes in 8 MB on the wire.
        let chunk = "1;pad=\(String(repeating: "a", count: 4000))\r\nx\r\n"
        let body = String(repeating: chunk, count: 2000) + "0\r\n\r\n"
        server.route("/padded") { _ in .script([.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body)]) }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/padded"), timeout: .seconds(30),
                                        configure: { $0.maxResponseBodySize = 64 * 1024 })
        switch transport {
        case .native:
            #expect(outcome.error == .bodyTooLarge, "\(outcome.result)")
        case .urlSession:
            // libcurl skips chunk extensions and counts only the payload against the limit.
            #expect(outcome.response?.body.count == 2000, "\(outcome.result)")
        }
    }

    @Test("E6 a body of small chunks exactly at the limit is read whole: framing has an allowance of its own", arguments: TransportUnderTest.allCases)
    func smallChunksAtTheLimit(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // 8,192 chunks of 8 bytes: 64 KiB of payload in about 112 KiB on the wire.
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/fault/chunked?chunks=8192&size=8"), timeout: .seconds(30),
                                        configure: { $0.maxResponseBodySize = 64 * 1024 })
        #expect(outcome.response?.body == TestServer.bytesPattern(count: 64 * 1024), "\(outcome.result)")
    }
}
