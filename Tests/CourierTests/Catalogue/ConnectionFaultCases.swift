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

    @Test("A7 server answers early and half-closes while a large body is still being sent: the answer (native); the answer or connectionLost (libcurl)", arguments: TransportUnderTest.allCases)
    func halfCloseDuringUpload(transport: TransportUnderTest) async throws {
        // Over its body limit the server answers 413 at once, shuts down its sending side and
        // keeps reading for a moment, while the client still has megabytes to send. The native
        // transport reads the answer after its write fails; libcurl sometimes reports the reset.
        let server = try TestServer(configuration: .init(maxBodyBytes: 64 * 1024))
        defer { server.shutdown() }
        let body = Data(repeating: 0x61, count: 8 << 20)
        let outcome = try await runCase(transport, on: server, HTTPRequest(.post, "/echo", body: .data(body)), timeout: .seconds(20))
        if transport == .urlSession, outcome.error == .connectionLost { return }
        #expect(outcome.error == .unacceptableStatus && outcome.status == 413, "\(outcome.result)")
    }

    @Test("A8 server answers 413 after the head and closes with the body unread, which resets the connection: the 413 (native); the 413 or connectionLost (libcurl)", arguments: TransportUnderTest.allCases)
    func resetAfterEarlyAnswer(transport: TransportUnderTest) async throws {
        // The peer reads the head and 0 or 64 KiB of a POST's body, answers and closes: its kernel
        // resets the connection, so the client's next write fails. The answer arrived before the
        // reset and is still in the client's socket.
        let peer = try ThreadedListener { fd, number in
            var reader = PeerReader(fd: fd)
            guard let head = reader.head() else { return }
            if head.method == "GET" {
                // The check that the connection still serves afterwards.
                ThreadedListener.send(fd, Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8))
                return
            }
            var framing = PeerBodyFraming(head)
            var body = Data()
            _ = framing.read(&reader, upTo: number.isMultiple(of: 2) ? 0 : 64 << 10, into: &body)
            ThreadedListener.send(fd, Data("HTTP/1.1 413 Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope".utf8))
        }
        defer { peer.close() }
        let body = Data(repeating: 0x61, count: 4 << 20)
        let requests = (0..<6).map { HTTPRequest(.post, "/up/\($0)", body: .data(body)) }
        let outcomes = try await runCase(transport, on: peer, requests, timeout: .seconds(20))
        for outcome in outcomes {
            if transport == .urlSession, outcome.error == .connectionLost { continue }
            #expect(outcome.error == .unacceptableStatus && outcome.status == 413, "\(outcome.result)")
        }
    }
}
