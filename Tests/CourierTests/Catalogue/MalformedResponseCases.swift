import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Reliability catalogue, section C: malformed responses, on both transports. Each malformed
/// response is served raw by a script route, and then the connection closes, so that a client
/// that waits for more would time out instead of failing clearly.
@Suite("Catalogue C: malformed responses")
struct MalformedResponseCases {
    /// Registers `/raw/<index>` routes that send each response as is and close; returns the requests.
    ///
    /// A closing route also says `Connection: close` after the status line: the requests run
    /// at once, and a client that reused a connection the server was closing (libcurl does)
    /// would meet a reset instead of the malformed response under test.
    private func rawRoutes(_ responses: [String], on server: TestServer, closing: Bool = true) -> [HTTPRequest] {
        responses.enumerated().map { index, raw in
            let announced = closing ? Self.announcingClose(raw) : raw
            server.route("/raw/\(index)") { _ in .script(closing ? [.send(announced), .close] : [.send(raw)]) }
            return HTTPRequest(.get, "/raw/\(index)")
        }
    }

    /// `raw` with `Connection: close` after its first line.
    private static func announcingClose(_ raw: String) -> String {
        guard let end = raw.range(of: "\r\n") else { return raw }
        return raw[..<end.upperBound] + "Connection: close\r\n" + raw[end.upperBound...]
    }

    /// Expects every outcome to be one clear error of `kinds`, naming the response in the message.
    private func expectFailures(_ outcomes: [CaseOutcome], _ kinds: [HTTPConnectionError], _ responses: [String],
                                sourceLocation: SourceLocation = #_sourceLocation) {
        for (outcome, raw) in zip(outcomes, responses) {
            #expect(outcome.error.map(kinds.contains) == true, "\(raw.debugDescription): \(outcome.result)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test("C1 bad status lines: HTP/1.1, a 2-digit code, 00a, 2147483648, leading whitespace", arguments: TransportUnderTest.allCases)
    func badStatusLines(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let responses = ["HTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                         "HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nok",
                         "HTTP/1.1 00a OK\r\nContent-Length: 2\r\n\r\nok",
                         "HTTP/1.1 2147483648 OK\r\nContent-Length: 2\r\n\r\nok",
                         " HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]
        let outcomes = try await runCase(transport, on: server, rawRoutes(responses, on: server))
        expectFailures(outcomes, [.badResponse], responses)
    }

    @Test("C2 a header line without a colon or with a NUL byte fails; an obs-fold line is unfolded (RFC 9112 §5.2)", arguments: TransportUnderTest.allCases)
    func badHeaderLines(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let responses = ["HTTP/1.1 200 OK\r\nNo colon here\r\nContent-Length: 2\r\n\r\nok",
                         "HTTP/1.1 200 OK\r\nX-Bad: a\u{0}b\r\nContent-Length: 2\r\n\r\nok",
                         "HTTP/1.1 200 OK\r\nX-Folded: a\r\n  continued\r\nContent-Length: 2\r\n\r\nok"]
        let outcomes = try await runCase(transport, on: server, rawRoutes(responses, on: server))
        expectFailures(Array(outcomes[0..<2]), [.badResponse], responses)
        // A user agent must replace the fold with a space (RFC 9112 §5.2).
        #expect(outcomes[2].response?.headers["X-Folded"] == "a continued", "\(outcomes[2].result)")
    }

    @Test("C3 non-hex chunk size, missing chunk body, chunked stream closed early fail; chunk extensions and trailers are accepted", arguments: TransportUnderTest.allCases)
    func chunkedFaults(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        let broken = [head + "zz\r\nhello\r\n0\r\n\r\n",
                      head + "5\r\nhelloXX3\r\nabc\r\n0\r\n\r\n",
                      head + "5\r\nhello\r\n5\r\nwor"]
        // FoundationNetworking stops the process on a trailer field ("Transfer completed, but
        // there's no response"), so URLSession gets the extensions without trailers here; the
        // trailer runs in a child process (ProcessStoppingCases).
        let trailer = transport == .native ? "Trailer-Field: yes\r\n" : ""
        let good = [head + "5;name=value\r\nhello\r\n6;ext\r\n world\r\n0\r\n\(trailer)\r\n"]
        let outcomes = try await runCase(transport, on: server, rawRoutes(broken + good, on: server))
        expectFailures(Array(outcomes[0..<2]), [.badResponse], broken)
        #expect(outcomes[2].error == .connectionLost || outcomes[2].error == .badResponse, "\(outcomes[2].result)")
        #expect(outcomes[3].response?.text == "hello world", "\(outcomes[3].result)")
    }

    @Test("C4 Content-Length: two different values, rubbish, negative fail; equal repeats pass; chunked wins over a length", arguments: TransportUnderTest.allCases)
    func contentLengthFaults(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let broken = ["HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk",
                      "HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\nok",
                      "HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok"]
        let good = ["HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
                    "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"]
        let outcomes = try await runCase(transport, on: server, rawRoutes(broken + good, on: server))
        expectFailures(Array(outcomes[0..<3]), [.badResponse], broken)
        #expect(outcomes[3].response?.text == "ok", "\(outcomes[3].result)")
        #expect(outcomes[4].response?.text == "ok", "\(outcomes[4].result)")
    }

    @Test("C5 broken gzip and deflate data: decompressionFailed", arguments: TransportUnderTest.allCases)
    func brokenCompression(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let garbage = "\u{1f}\u{8b}\u{8}\u{0}this is not a gzip stream at all"
        let responses = ["gzip", "deflate"].map { coding in
            "HTTP/1.1 200 OK\r\nContent-Encoding: \(coding)\r\nContent-Length: \(garbage.utf8.count)\r\n\r\n\(garbage)"
        }
        let outcomes = try await runCase(transport, on: server, rawRoutes(responses, on: server))
        expectFailures(outcomes, [.decompressionFailed], responses)
    }

    @Test("C6 two responses for one request, the second arriving on the idle connection: only the first is an answer", arguments: TransportUnderTest.allCases)
    func unsolicitedResponse(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/twice") { _ in
            .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none"), .pause(.milliseconds(30)),
                     .send("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nunsolicited")])
        }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/twice"), during: { context, _ in
            #expect(await eventually { context.recorder.closureTerminalCount == 1 })
            if transport == .native {
                // The unsolicited response reached the idle connection, and the client closed it.
                #expect(await eventually { server.connectionsOpen == 0 })
            } else {
                try await Task.sleep(for: .milliseconds(150))  // the unsolicited response is on the idle connection now
            }
            // The next request must not take it for its answer.
            let echo = try? await context.connection.get("/echo").decode(Echo.self)
            if transport == .native {
                #expect(echo?.path == "/echo")
            } else {
                withKnownIssue("libcurl reuses the connection and reads the unsolicited response as the next answer", isIntermittent: true) {
                    #expect(echo?.path == "/echo")
                }
            }
        })
        #expect(outcome.response?.text == "one", "\(outcome.result)")
    }

    @Test("C7 (I6) a response with both Transfer-Encoding and Content-Length is read as chunked, and its connection is not reused", arguments: TransportUnderTest.allCases)
    func chunkedWithLength(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let both = "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
        let requests = rawRoutes([both], on: server, closing: false)
        let outcome = try await runCase(transport, on: server, requests[0], during: { context, _ in
            #expect(await eventually { context.recorder.closureTerminalCount == 1 })
            let echo = try await context.connection.get("/echo").decode(Echo.self)
            let expectFresh = { #expect(echo.connection == 2 && echo.request == 1, "reused: connection \(echo.connection), request \(echo.request)") }
            if transport == .native {
                expectFresh()
            } else {
                withKnownIssue("libcurl keeps the connection of a response framed two ways", isIntermittent: true, expectFresh)
            }
        })
        #expect(outcome.response?.text == "ok", "\(outcome.result)")
    }
}
