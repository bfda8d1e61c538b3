@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `Expect: 100-continue` over real sockets, HTTP/1.1: a server that refuses at the head costs
/// no upload, one that says `100 Continue` gets the body, one that never answers gets it after
/// the wait; nginx gets it over TLS. On both transports (libcurl holds the body as the native
/// transport does), except file bodies on `URLSessionTransport`, which FoundationNetworking can
/// crash on when an early answer ends them (see the README).
@Suite("Expect: 100-continue (HTTP/1.1)", .timeLimit(.minutes(2)))
struct ExpectContinueTests {
    static let body = Data(repeating: 0x5A, count: 4 << 20)

    /// A connection over `transport` that hands every status back as a response.
    static func connection(_ baseURL: URL, _ transport: any Transport, _ leaks: LeakCheck) -> HTTPConnection {
        leaks.track(HTTPConnection(baseURL: baseURL, configuration: .init(
            retryPolicy: .never, validation: .statusCodes(100..<600), transport: transport, cache: nil)))
    }

    /// Runs `body` with a new ``ExpectContinuePeer`` and a connection to it over a native
    /// transport of its own, under a leak check; the peer is closed and the transport shut down after.
    static func withNativePeer(_ body: (ExpectContinuePeer, HTTPConnection) async throws -> Void) async throws {
        let peer = try ExpectContinuePeer()
        defer { peer.close() }
        try await withLeakCheck { leaks in
            let transport = leaks.native()
            defer { transport.shutdown() }
            try await body(peer, Self.connection(peer.baseURL, transport, leaks))
        }
    }

    /// Sends a PUT of `body` to `path` with `Expect: 100-continue` and checks that the peer
    /// answered 200 with the octet count of the whole test body.
    @discardableResult
    static func sendStored(_ connection: HTTPConnection, _ path: String, _ body: HTTPRequest.Body,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws -> HTTPResponse {
        let response = try await connection.send(put(path, body))
        #expect(response.status.code == 200 && response.text == "\(Self.body.count)", "\(response.status.code) \(response.text ?? "")",
                sourceLocation: sourceLocation)
        return response
    }

    static func put(_ path: String, _ body: HTTPRequest.Body, expecting: Bool = true) -> HTTPRequest {
        HTTPRequest(.put, path, headers: expecting ? ["Expect": "100-continue"] : [:], body: body)
    }

    /// A 4 MiB file with the test body, removed after `work`.
    static func withFile(_ work: (URL) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-expect-\(UUID().uuidString)")
        try body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await work(file)
    }

    @Test("a server that answers 401 at the head: the caller gets the 401 and the server gets none of the body (4 MiB or 10 KiB from memory, 4 MiB from a file); without Expect it gets the body", arguments: TransportUnderTest.allCases)
    func rejectedAtHead(kind: TransportUnderTest) async throws {
        let peer = try ExpectContinuePeer()
        defer { peer.close() }
        try await withLeakCheck { leaks in
            let connection = Self.connection(peer.baseURL, leaks.transport(kind), leaks)
            let fromMemory = try await connection.send(Self.put("/reject", .data(Self.body)))
            #expect(fromMemory.status.code == 401)
            if kind == .native {
                // The metrics count the head alone: the body never went.
                #expect((fromMemory.metrics?.bytesSent ?? 0) < 1024, "\(String(describing: fromMemory.metrics?.bytesSent)) bytes sent")
            }
            let small = try await connection.send(Self.put("/reject", .data(Self.body.prefix(10 << 10))))
            #expect(small.status.code == 401)
            if kind == .native {
                try await Self.withFile { file in
                    let fromFile = try await connection.send(Self.put("/reject", try .file(file)))
                    #expect(fromFile.status.code == 401)
                }
            }
            let plain = try await connection.send(Self.put("/reject", .data(Self.body), expecting: false))
            #expect(plain.status.code == 401)
            let expected = kind == .native ? 4 : 3
            #expect(await eventually { peer.visits.count == expected })
            // In the order each visit ended, which is not the order they began.
            let visits = peer.visits
            let expecting = visits.filter(\.expectsContinue), unexpecting = visits.filter { !$0.expectsContinue }
            #expect(expecting.count == expected - 1 && unexpecting.count == 1)
            #expect(expecting.allSatisfy { $0.bodyOctets == 0 }, "body octets sent to a server that refused at the head: \(expecting.map(\.bodyOctets))")
            if kind == .native {
                // The native transport writes head and body in one writev, so some of it always
                // arrives (libcurl may read the 401 before it writes any of the body).
                #expect(unexpecting.allSatisfy { $0.bodyOctets > 0 }, "without Expect the body goes at once (the test can tell)")
            }
        }
    }

    @Test("a server that answers 100 Continue gets the whole body at once, from memory and from a file, on a connection that is reused", arguments: TransportUnderTest.allCases)
    func continued(kind: TransportUnderTest) async throws {
        let peer = try ExpectContinuePeer()
        defer { peer.close() }
        try await withLeakCheck { leaks in
            let connection = Self.connection(peer.baseURL, leaks.transport(kind), leaks)
            let fromMemory = try await Self.sendStored(connection, "/continue", .data(Self.body))
            if kind == .native {
                // The whole body counts, and the first byte is the final answer's, after the body
                // (the 100 came before it).
                #expect((fromMemory.metrics?.bytesSent ?? 0) > Int64(Self.body.count))
                #expect((fromMemory.metrics?.firstByte ?? .zero) > .zero, "\(String(describing: fromMemory.metrics?.firstByte))")
            }
            try await Self.withFile { file in
                let fromFile = try await Self.sendStored(connection, "/continue", try .file(file))
                if kind == .native { #expect(fromFile.metrics?.reusedConnection == true) }
            }
            let visits = peer.visits
            #expect(visits.count == 2 && visits.allSatisfy(\.expectsContinue))
            // Well under the 1 s wait: the body followed the 100 Continue.
            #expect(visits.allSatisfy { ($0.firstOctetAfter ?? 9) < 0.9 }, "\(visits.map(\.firstOctetAfter))")
        }
    }

    @Test("a server that refuses expectations with 417: the request goes again without the field and succeeds, from memory, from a file, and from a stream held back for the 100", arguments: TransportUnderTest.allCases)
    func expectationFailed(kind: TransportUnderTest) async throws {
        let peer = try ExpectContinuePeer()
        defer { peer.close() }
        try await withLeakCheck { leaks in
            let connection = Self.connection(peer.baseURL, leaks.transport(kind), leaks)
            try await Self.sendStored(connection, "/no-expectations", .data(Self.body))
            if kind == .native {
                try await Self.withFile { file in
                    try await Self.sendStored(connection, "/no-expectations", try .file(file))
                }
                // The stream was held back for the 100, so nothing of it was read: it goes with the repeat.
                let chunks = PatternChunks(total: Self.body.count, chunk: 16 << 10)
                try await Self.sendStored(connection, "/no-expectations", .stream(chunks, length: Int64(Self.body.count)))
            }
            // Each refused request, then its repeat without the field, which carried the body.
            let visits = peer.visits
            let expected: [Bool] = kind == .native ? [true, false, true, false, true, false] : [true, false]
            #expect(visits.map(\.expectsContinue) == expected, "\(visits.map(\.expectsContinue))")
            #expect(visits.allSatisfy { $0.expectsContinue ? $0.bodyOctets == 0 : $0.bodyOctets == Self.body.count },
                    "\(visits.map(\.bodyOctets))")
        }
    }

    @Test("a 417 after the body went (released by the wait): data goes again without the field; a stream already read is not, and the caller gets the 417")
    func expectationFailedLate() async throws {
        try await Self.withNativePeer { peer, connection in
            let small = Self.body.prefix(64 << 10)
            let fromMemory = try await connection.send(Self.put("/late-417", .data(small)))
            #expect(fromMemory.status.code == 200 && fromMemory.text == "\(small.count)")
            let chunks = PatternChunks(total: small.count, chunk: 16 << 10)
            let streamed = try await connection.send(Self.put("/late-417", .stream(chunks, length: Int64(small.count))))
            #expect(streamed.status.code == 417)
            let visits = peer.visits
            #expect(visits.map(\.expectsContinue) == [true, false, true], "\(visits.map(\.expectsContinue))")
            #expect(visits.allSatisfy { $0.bodyOctets == small.count }, "\(visits.map(\.bodyOctets))")
        }
    }

    @Test("a redirect hook that adds Expect: 100-continue to a hop: the hop's 417 repeats it without the field, as for the request's own field", arguments: TransportUnderTest.allCases)
    func expectationAddedByHook(kind: TransportUnderTest) async throws {
        let peer = try ExpectContinuePeer()
        defer { peer.close() }
        try await withLeakCheck { leaks in
            let policy = RedirectPolicy.follow { hop in
                var changed = hop.request
                changed.headers["Expect"] = "100-continue"
                return .followWith(changed)
            }
            let connection = leaks.track(HTTPConnection(baseURL: peer.baseURL, configuration: .init(
                retryPolicy: .never, validation: .statusCodes(100..<600), transport: leaks.transport(kind), redirectPolicy: policy, cache: nil)))
            let small = Self.body.prefix(64 << 10)
            let response = try await connection.send(Self.put("/redirect", .data(small), expecting: false))
            #expect(response.status.code == 200 && response.text == "\(small.count)", "\(response.status.code)")
            #expect(peer.visits.map(\.path) == ["/redirect", "/no-expectations", "/no-expectations"], "\(peer.visits.map(\.path))")
            #expect(peer.visits.map(\.expectsContinue) == [false, true, false], "\(peer.visits.map(\.expectsContinue))")
        }
    }

    @Test("a 417 to Expect: 100-continue among other expectations: the repeat drops only 100-continue and keeps the others (RFC 9110 §10.1.1)", arguments: TransportUnderTest.allCases)
    func expectationFailedKeepsOthers(kind: TransportUnderTest) async throws {
        let peer = try ExpectContinuePeer()
        defer { peer.close() }
        try await withLeakCheck { leaks in
            let connection = Self.connection(peer.baseURL, leaks.transport(kind), leaks)
            let small = Self.body.prefix(64 << 10)
            let request = HTTPRequest(.put, "/no-expectations", headers: ["Expect": "100-Continue, x-trace"], body: .data(small))
            let response = try await connection.send(request)
            #expect(response.status.code == 200 && response.text == "\(small.count)", "\(response.status.code)")
            #expect(peer.visits.map(\.expect) == ["100-Continue, x-trace", "x-trace"], "\(peer.visits.map(\.expect))")
        }
    }

    @Test("a server that never answers 100 Continue gets the body after the wait (about 1 s), and the upload succeeds", arguments: TransportUnderTest.allCases)
    func silentServer(kind: TransportUnderTest) async throws {
        let peer = try ExpectContinuePeer()
        defer { peer.close() }
        try await withLeakCheck { leaks in
            let connection = Self.connection(peer.baseURL, leaks.transport(kind), leaks)
            try await Self.sendStored(connection, "/silent", .data(Self.body))
            let visit = try #require(peer.visits.first)
            #expect(visit.expectsContinue)
            #expect((visit.firstOctetAfter ?? 0) >= 0.9, "the body came \(String(describing: visit.firstOctetAfter)) s after the head, before the wait ended")
        }
    }

    @Test("a server that takes the body released by the wait and never answers: the request times out (the silence counts from the release); 100 Continue and a 413 in one write: the caller gets the 413")
    func afterTheRelease() async throws {
        try await Self.withNativePeer { peer, connection in
            var swallowed = Self.put("/swallow", .data(Self.body.prefix(64 << 10)))
            swallowed.timeout = .milliseconds(1500)
            do throws(HTTPConnectionError) {
                let response = try await connection.send(swallowed)
                Issue.record("a server that never answered gave \(response.status.code)")
            } catch {
                #expect(error == .timedOut, "\(error)")
            }
            let refused = try await connection.send(Self.put("/continue-then-refuse", .data(Self.body)))
            #expect(refused.status.code == 413)
        }
    }

    @Test("nginx over TLS: PUT with Expect: 100-continue stores the body intact, from memory and from a file",
          .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable, "nginx and openssl are needed for the TLS test"))
    func nginxOverTLS() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let nginx = try await Nginx.start(server: "location /store/ { dav_methods PUT; create_full_put_path on; client_max_body_size 64m; }",
                                          tls: (certificates.valid.certificate, certificates.valid.key))
        defer { nginx.stop() }
        let body = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 >> 7) })
        try await withLeakCheck { leaks in
            leaks.watch(port: nginx.port)
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            defer { transport.shutdown() }
            let connection = Self.connection(nginx.baseURL, transport, leaks)
            let stored = try await connection.send(Self.put("/store/memory.bin", .data(body)))
            #expect(stored.status.code == 201)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-expect-\(UUID().uuidString)")
            try body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let fromFile = try await connection.send(Self.put("/store/file.bin", try .file(file)))
            #expect(fromFile.status.code == 201)
            for name in ["memory.bin", "file.bin"] {
                let copy = try Data(contentsOf: nginx.directory.appendingPathComponent("html/store/\(name)"))
                #expect(copy == body, "\(name): \(copy.count) octets stored of \(body.count)")
            }
        }
    }
}
