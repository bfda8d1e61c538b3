import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Reliability catalogue, section D: protocol edge cases, on both transports.
@Suite("Catalogue D: protocol edge cases")
struct ProtocolEdgeCases {
    /// Registers `path` to send `raw` and keep the connection open for the next request.
    private func raw(_ path: String, _ raw: String, on server: TestServer, then: [TestServer.Step] = []) {
        server.route(path) { _ in .script([.send(raw)] + then) }
    }

    /// Checks that the connection that served the case serves the next request too (it was reused).
    private func expectReused(_ context: CaseContext, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(await eventually { context.recorder.closureTerminalCount == 1 }, sourceLocation: sourceLocation)
        let echo = try await context.connection.get("/echo").decode(Echo.self)
        #expect(echo.connection == 1 && echo.request == 2, "not reused: \(echo.connection)/\(echo.request)", sourceLocation: sourceLocation)
    }

    @Test("D1 HEAD with a Content-Length: no body is read, the connection is reused", arguments: TransportUnderTest.allCases)
    func headWithLength(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        raw("/head", "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", on: server)
        let outcome = try await runCase(transport, on: server, HTTPRequest(.head, "/head"), during: { context, _ in
            try await expectReused(context)
        })
        #expect(outcome.status == 200 && outcome.response?.body.isEmpty == true, "\(outcome.result)")
    }

    @Test("D2 204 and 304 have no body, even a 204 that declares a length; the connection is reused", arguments: TransportUnderTest.allCases)
    func noContent(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        raw("/204", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", on: server)
        let noContent = try await runCase(transport, on: server, HTTPRequest(.get, "/204"), during: { context, _ in
            try await expectReused(context)
        })
        #expect(noContent.status == 204 && noContent.response?.body.isEmpty == true, "\(noContent.result)")

        raw("/304", "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n", on: server)
        let notModified = try await runCase(transport, on: server, HTTPRequest(.get, "/304"), configure: { $0.validation = .acceptAll })
        #expect(notModified.status == 304 && notModified.response?.body.isEmpty == true, "\(notModified.result)")
    }

    @Test("D3 1xx responses before the final one are skipped; a 100 with no final response times out", arguments: TransportUnderTest.allCases)
    func informational(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        raw("/early-hints", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfinal", on: server)
        let skipped = try await runCase(transport, on: server, HTTPRequest(.get, "/early-hints"))
        #expect(skipped.response?.text == "final", "\(skipped.result)")

        var lone = HTTPRequest(.get, "/status/100")
        lone.timeout = .milliseconds(400)
        let outcome = try await runCase(transport, on: server, lone)
        #expect(outcome.error == .timedOut, "\(outcome.result)")
    }

    @Test("D4 a body longer than its Content-Length is cut there (the rest is not the next response); a shorter one fails", arguments: TransportUnderTest.allCases)
    func lengthMismatch(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let longer = try await runCase(transport, on: server, HTTPRequest(.get, "/fault/long-length"), during: { context, _ in
            #expect(await eventually { context.recorder.closureTerminalCount == 1 })
            let echo = try await context.connection.get("/echo").decode(Echo.self)  // not "efgh…"
            #expect(echo.path == "/echo")
        })
        #expect(longer.response?.text == "abcd", "\(longer.result)")

        raw("/shorter", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabcd", on: server, then: [.close])
        let shorter = try await runCase(transport, on: server, HTTPRequest(.get, "/shorter"))
        #expect(shorter.error == .connectionLost, "\(shorter.result)")
    }

    @Test("D5 empty bodies (length 0, an empty chunked body) decode to an empty result without an error", arguments: TransportUnderTest.allCases)
    func emptyBodies(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        raw("/empty-length", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", on: server)
        raw("/empty-chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", on: server)
        let outcomes = try await runCase(transport, on: server, [HTTPRequest(.get, "/empty-length"), HTTPRequest(.get, "/empty-chunked")])
        for outcome in outcomes {
            #expect(outcome.response?.body.isEmpty == true && outcome.response?.text == "", "\(outcome.result)")
        }
    }

    @Test("D6 close-delimited bodies (no length, no chunking) end at the close", arguments: TransportUnderTest.allCases)
    func closeDelimited(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        raw("/http10", "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it", on: server, then: [.close])
        raw("/http11", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end", on: server, then: [.close])
        let outcomes = try await runCase(transport, on: server, [HTTPRequest(.get, "/http10"), HTTPRequest(.get, "/http11")])
        #expect(outcomes[0].response?.text == "all of it", "\(outcomes[0].result)")
        #expect(outcomes[1].response?.text == "until the end", "\(outcomes[1].result)")
    }

    /// Runs a single-request case and returns how long its connection stayed open: how long
    /// the transport kept the request alive (see ``ConnectionLifetime``).
    private func timedCase(_ transport: TransportUnderTest, on server: TestServer,
                           _ request: HTTPRequest) async throws -> (outcome: CaseOutcome, open: Duration?) {
        let lifetime = ConnectionLifetime(server)
        let outcome = try await runCase(transport, on: server, request)
        _ = await eventually { lifetime.duration != nil }
        return (outcome, lifetime.duration)
    }

    @Test("D7 (L1) interim (1xx) responses cannot keep a request alive: one every 200 ms does not stop a 1 s timeout, and more than 10 fail at once", arguments: TransportUnderTest.allCases)
    func interimFlood(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // 4 s of interim responses, then silence (bounded, in case a client accepts them all).
        let drip: [TestServer.Step] = (0..<20).flatMap { _ in [.send("HTTP/1.1 100 Continue\r\n\r\n"), .pause(.milliseconds(200))] }
        server.route("/interim-drip") { _ in .script(drip) }
        var request = HTTPRequest(.get, "/interim-drip")
        request.timeout = .seconds(1)
        let (dripped, time) = try await timedCase(transport, on: server, request)
        #expect(dripped.error == .timedOut || dripped.error == .badResponse, "\(dripped.result)")
        if transport == .native {
            #expect(dripped.error?.description.contains("no complete response head") == true, "\(dripped.result)")
        }
        // Ended by the 1 s timeout (with room for a slow machine), before the 11th interim
        // response at 2 s, which the cap of 10 would refuse: a timeout that each interim
        // response reset would end it there.
        let expectPrompt = { #expect(time.map { $0 < .milliseconds(1900) } == true, "open for \(String(describing: time))") }
        switch transport {
        case .native:
            expectPrompt()
        case .urlSession:
            // The request often outlives the interim responses (they stop after 4 s; open 4.8 s
            // measured); sometimes the idle watchdog (on Dispatch) ends it on time.
            withKnownIssue("on FoundationNetworking interim responses keep the request alive past its timeout",
                           isIntermittent: true, expectPrompt)
        }

        let burst = { (count: Int) in String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: count) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" }
        raw("/interim-10", burst(10), on: server)
        raw("/interim-11", burst(11), on: server)
        let outcomes = try await runCase(transport, on: server, [HTTPRequest(.get, "/interim-10"), HTTPRequest(.get, "/interim-11")])
        #expect(outcomes[0].response?.text == "ok", "\(outcomes[0].result)")
        switch transport {
        case .native:
            #expect(outcomes[1].error == .badResponse, "\(outcomes[1].result)")
            #expect(outcomes[1].error?.description.contains("more than 10 interim") == true, "\(outcomes[1].result)")
        case .urlSession:
            // libcurl has no limit on interim responses.
            #expect(outcomes[1].response?.text == "ok", "\(outcomes[1].result)")
        }
    }

    @Test("D8 (L1) a chunk-size line padded with an extension one byte at a time is not progress: a 1 s timeout ends it", arguments: TransportUnderTest.allCases)
    func chunkExtensionDrip(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // 15 s of extension bytes (within the 4 KiB chunk-size line limit), never a payload byte;
        // the script ends early when the client closes.
        let drip: [TestServer.Step] = (0..<150).flatMap { _ in [.pause(.milliseconds(100)), .send("a")] }
        server.route("/extension-drip") { _ in
            .script([.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;pad=")] + drip)
        }
        var request = HTTPRequest(.get, "/extension-drip")
        request.timeout = .seconds(1)
        let (outcome, time) = try await timedCase(transport, on: server, request)
        #expect(outcome.error == .timedOut, "\(outcome.result)")
        if transport == .native {
            #expect(outcome.error?.description.contains("no body bytes") == true, "\(outcome.result)")
        }
        // libcurl never delivers the padding to URLSessionTransport, whose idle watchdog (on
        // Dispatch) fires too: the request ends with timedOut above, and alone the connection
        // closes after 1.0 s, like the native transport's. But closing it goes through corelibs'
        // work queue, which a loaded machine slows: in a full parallel test run the connection was
        // once left open until the server's 15 s script ended (18.0 s).
        switch transport {
        case .native:
            // Closed by the 1 s timeout, long before the server's 15 s script ends.
            #expect(time.map { $0 < .seconds(5) } == true, "open for \(String(describing: time))")
        case .urlSession:
            withKnownIssue("on FoundationNetworking, under load, the timed-out connection can stay open until the server ends it",
                           isIntermittent: true) {
                #expect(time.map { $0 < .seconds(10) } == true, "open for \(String(describing: time))")
            }
        }
    }
}
