import CourierTestSupport
import Courier
import CourierTestServer
import Foundation
import Testing

/// The catalogue cases where FoundationNetworking stops the whole process on the URLSession
/// transport (README, reliability table: A4 with a cut head, C3 with a trailer field). Each runs in
/// a child process (``runInChildProcess(_:test:timeout:body:check:)``): a crash is that test's
/// known issue, and the rest of the suite still runs and reports.
@Suite("Catalogue: cases that stop the process on URLSession")
struct ProcessStoppingCases {
    /// What FoundationNetworking's fatal error says in both cases.
    static let noResponse = "Transfer completed, but there's no response"

    @Test("A4 on URLSession, the server closes in the middle of the head: connectionLost, or FoundationNetworking's known crash, in a child process")
    func closedMidHead() async throws {
        try await runInChildProcess(Self.self) {
            let server = try TestServer()
            defer { server.shutdown() }
            let outcome = try await runCase(.urlSession, on: server, HTTPRequest(.get, "/fault/close-mid-head"))
            #expect(outcome.error == .connectionLost, "\(outcome.result)")
        } check: { child in
            expectPassOrKnownCrash(child, knownCrash: Self.noResponse)
        }
    }

    @Test("C3 on URLSession, a chunked body with a trailer field is accepted, or FoundationNetworking's known crash, in a child process")
    func chunkedTrailer() async throws {
        try await runInChildProcess(Self.self) {
            let server = try TestServer()
            defer { server.shutdown() }
            let raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nTrailer-Field: yes\r\n\r\n"
            server.route("/trailer") { _ in .script([.send(raw), .close]) }
            let outcome = try await runCase(.urlSession, on: server, HTTPRequest(.get, "/trailer"))
            #expect(outcome.response?.text == "hello world", "\(outcome.result)")
        } check: { child in
            expectPassOrKnownCrash(child, knownCrash: Self.noResponse)
        }
    }
}
