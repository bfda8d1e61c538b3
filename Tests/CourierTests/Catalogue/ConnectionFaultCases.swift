import Courier
import CourierTestServer
import Foundation
import Testing

/// Reliability catalogue, section A: connection faults. One test per case, on both transports;
/// each checks the outcome, one terminal callback, no leak and a pool that still serves
/// (see ``runCase(_:on:_:timeout:configure:prepare:during:sourceLocation:)``).
@Suite("Catalogue A: connection faults")
struct ConnectionFaultCases {
    @Test("A1 connection refused: cannotConnect", arguments: TransportUnderTest.allCases)
    func refused(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "http://127.0.0.1:1/a"))
        #expect(outcome.error == .cannotConnect, "\(outcome.result)")
    }

    @Test("A2 server closes before reading the request: connectionLost", arguments: TransportUnderTest.allCases)
    func closedBeforeReading(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        let closing = try TestServer(configuration: .init(closeBeforeReading: true))
        defer { server.shutdown(); closing.shutdown() }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, closing.url("/echo").absoluteString),
                                        during: { context, _ in context.leaks.watch(closing) })
        #expect(outcome.error == .connectionLost, "\(outcome.result)")
    }

    @Test("A3 server reads the request, then closes without answering: connectionLost, not retried", arguments: TransportUnderTest.allCases)
    func closedWithoutAnswer(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/fault/close-before-response"))
        #expect(outcome.error == .connectionLost, "\(outcome.result)")
        #expect(server.requestCount(path: "/fault/close-before-response") == 1)
    }

    @Test("A4 server closes in the middle of the head, and of the body: connectionLost", arguments: TransportUnderTest.allCases)
    func closedMidResponse(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // FoundationNetworking stops the process when a head is cut short ("Transfer completed,
        // but there's no response"), so URLSession is only given the cut body here; the cut head
        // runs in a child process (ProcessStoppingCases).
        let targets = transport == .native ? ["/fault/close-mid-head", "/fault/close-mid-body"] : ["/fault/close-mid-body"]
        let outcomes = try await runCase(transport, on: server, targets.map { HTTPRequest(.get, $0) })
        for outcome in outcomes {
            #expect(outcome.error == .connectionLost, "\(outcome.result)")
        }
    }

    @Test("A5 a pooled connection closed while idle: GET is re-sent once on a fresh one, POST fails clearly", arguments: TransportUnderTest.allCases)
    func staleConnection(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // The second request on any connection is read, then the connection closes without an
        // answer: exactly what a keep-alive connection closed under a request looks like.
        server.route("/flaky") { request in
            request.requestNumber >= 2 ? .script([.close]) : .text("fine \(request.connectionNumber)")
        }
        let get = try await runCase(transport, on: server, HTTPRequest(.get, "/flaky"),
                                    prepare: { _ = try await $0.get("/flaky") })
        #expect(get.response?.text == "fine 2", "\(get.result)")

        let before = server.requestCount(path: "/flaky")
        let post = try await runCase(transport, on: server, HTTPRequest(.post, "/flaky", body: .text("two")), timeout: .seconds(2),
                                     prepare: { _ = try await $0.post("/flaky", body: .text("one")) })
        switch transport {
        case .native:
            #expect(post.error == .staleConnection, "\(post.result)")
        case .urlSession:  // libcurl neither reports nor repeats it: the request waits for its timeout
            #expect(post.error == .staleConnection || post.error == .connectionLost || post.error == .timedOut, "\(post.result)")
        }
        #expect(server.requestCount(path: "/flaky") == before + 2, "the POST was repeated")
    }

    @Test("A6 server alternates keep-alive and Connection: close: every response arrives", arguments: TransportUnderTest.allCases)
    func alternatingKeepAlive(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/alternate") { request in
            request.requestNumber % 2 == 0
                ? .response(status: 200, headers: [("Connection", "close")], body: Data("close".utf8))
                : .text("keep")
        }
        let outcome = try await runCase(transport, on: server, HTTPRequest(.get, "/alternate"), prepare: { connection in
            for _ in 0..<6 {
                let response = try await connection.get("/alternate")
                #expect(response.status.code == 200)
            }
        })
        #expect(outcome.status == 200, "\(outcome.result)")
        #expect(server.requestCount(path: "/alternate") == 7)
        #expect(server.connectionsAccepted >= 4)
    }

    @Test("A7 server answers early and half-closes while a large body is still being sent: the answer or connectionLost", arguments: TransportUnderTest.allCases)
    func halfCloseDuringUpload(transport: TransportUnderTest) async throws {
        // Over its body limit the server answers 413 at once, shuts down its sending side and
        // keeps reading for a moment, while the client still has megabytes to send.
        let server = try TestServer(configuration: .init(maxBodyBytes: 64 * 1024))
        defer { server.shutdown() }
        let body = Data(repeating: 0x61, count: 8 << 20)
        let outcome = try await runCase(transport, on: server, HTTPRequest(.post, "/echo", body: .data(body)), timeout: .seconds(20))
        if let error = outcome.error, error != .connectionLost {
            #expect(error == .unacceptableStatus && outcome.status == 413, "\(outcome.result)")
        }
    }
}
