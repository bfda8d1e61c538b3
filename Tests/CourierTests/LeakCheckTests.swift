import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The leak check (CourierTestSupport's ``LeakCheck``, with Courier's census in its extension)
/// finds each kind of leftover, and finds nothing once everything is released: a check that
/// cannot fail would let every integration test pass.
@Suite("The leak check finds what a test leaves behind")
struct LeakCheckTests {
    final class Token: Sendable {}

    @Test("an object still referenced is an issue; released, it is not")
    func survivingObject() async {
        let leaks = LeakCheck()
        let kept = leaks.track(Token())
        await withKnownIssue("the token is still referenced") { await leaks.verify(timeout: .milliseconds(100)) }
        #expect(leaks.survivors == ["Token"])
        withExtendedLifetime(kept) {}

        let clean = LeakCheck()
        do { _ = clean.track(Token()) }
        await clean.verify(timeout: .seconds(5))
        #expect(clean.survivors.isEmpty)
    }

    @Test("a client socket still open to a watched port is an issue, beyond its baseline; closed, it is not")
    func openSocket() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        var client: RawHTTPClient? = try RawHTTPClient(port: server.port)
        let leaks = LeakCheck(ports: [server.port])
        await withKnownIssue("a socket is still connected") { await leaks.verify(timeout: .milliseconds(100)) }
        #expect(leaks.openSockets == 1)
        let allowed = LeakCheck()
        allowed.watch(port: server.port, baseline: 1)
        await allowed.verify(timeout: .seconds(5))
        withExtendedLifetime(client) {}
        client = nil
        await leaks.verify(timeout: .seconds(5))
    }

    @Test("a watched count that stays above zero is an issue; back at zero, it is not")
    func nonZeroCount() async {
        let live = Atomic<Int>(2)
        let leaks = LeakCheck()
        leaks.watch("things") { live.load(ordering: .relaxed) }
        await withKnownIssue("two things are still alive") { await leaks.verify(timeout: .milliseconds(100)) }
        #expect(leaks.nonZeroCounts == ["things: 2"])
        live.store(0, ordering: .relaxed)
        await leaks.verify(timeout: .seconds(5))
    }

    @Test("a native transport still alive is an issue through its census too; released, neither is")
    func nativeCensus() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let leaks = LeakCheck()
        var connection: HTTPConnection? = leaks.connection(server, .native)
        _ = try await connection?.get("/echo")
        await withKnownIssue("the connection, its transport and its pool are alive") { await leaks.verify(timeout: .milliseconds(100)) }
        #expect(!leaks.nonZeroCounts.isEmpty, "the pool holds a connection")
        connection = nil
        await leaks.verify(timeout: .seconds(10))
    }
}
