import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Connecting like a modern client, over real sockets: address overrides instead of DNS, and
/// the Happy Eyeballs race (RFC 8305) between the addresses of one host.
@Suite("Native transport: address overrides and Happy Eyeballs")
struct NativeTransportEyeballsTests {
    /// A name no DNS knows: every test reaches it through an override only.
    static let host = "eyeballs.courier.test"

    private func transport(_ leaks: LeakCheck, port: Int = 80, addresses: [String],
                           attemptDelay: Duration = .milliseconds(250),
                           connectTimeout: Duration = .seconds(10)) throws -> NativeTransport {
        var configuration = NativeTransport.Configuration(connectTimeout: connectTimeout)
        configuration.addressOverrides = [try .init(host: Self.host, port: port, addresses: addresses)]
        configuration.connectionAttemptDelay = attemptDelay
        return leaks.native(configuration)
    }

    /// Fetches `/echo` from the overridden host; prints the time taken (the figure reported).
    private func timedEcho(_ transport: NativeTransport, _ label: String) async throws -> (HTTPResponse, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await fetch(transport, URL(string: "http://\(Self.host)/echo")!)
        let elapsed = clock.now - start
        print("Happy Eyeballs \(label): answered in \(elapsed)")
        return (response, elapsed)
    }

    @Test("[black hole, good address]: the request succeeds after one attempt delay, not the connect timeout, and the black-holed socket is closed")
    func blackHoleThenGood() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        let fillers = await TCPSocketTable.count(port: blackhole.port)
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            leaks.watch(port: blackhole.port, baseline: ProcessSockets.connected(toPort: blackhole.port))
            let transport = try transport(leaks, addresses: ["127.0.0.1:\(blackhole.port)", "127.0.0.1:\(server.port)"])
            defer { transport.shutdown() }
            let (response, elapsed) = try await timedEcho(transport, "[black hole, good]")
            #expect(response.status.code == 200)
            #expect(try response.decode(Echo.self).header("Host") == Self.host)  // the URL's host, not the address
            #expect(elapsed >= .milliseconds(240), "the good address waited for the attempt delay")
            // Generous for a loaded 2-core machine; the connect timeout it must beat is 10 s.
            #expect(elapsed < .seconds(5), "took \(elapsed); the connect timeout is 10 s")
            #expect(await TCPSocketTable.reach([blackhole.port: fillers]),
                    "the black-holed attempt's socket is closed once the good one won")
        }
    }

    @Test("[refused IPv6, good IPv4]: the IPv4 attempt starts at once, without waiting for the attempt delay")
    func refusedIPv6ThenIPv4() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            // An attempt delay far longer than the bound below: only an immediate next attempt passes.
            let transport = try transport(leaks, addresses: ["[::1]:1", "127.0.0.1:\(server.port)"],
                                          attemptDelay: .seconds(60), connectTimeout: .seconds(120))
            defer { transport.shutdown() }
            let (response, elapsed) = try await timedEcho(transport, "[refused IPv6, good IPv4]")
            #expect(response.status.code == 200)
            #expect(elapsed < .seconds(30), "took \(elapsed); the attempt delay is 60 s")
        }
    }

    @Test("[black-holed IPv6, good IPv4]: IPv4 wins after one attempt delay, the IPv6 attempt is closed")
    func blackHoledIPv6ThenIPv4() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let blackhole = try IPv6Blackhole()
        defer { blackhole.close() }
        let fillers = await TCPSocketTable.count(port: blackhole.port)
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            leaks.watch(port: blackhole.port, baseline: ProcessSockets.connected(toPort: blackhole.port))
            let transport = try transport(leaks, addresses: ["[::1]:\(blackhole.port)", "127.0.0.1:\(server.port)"])
            defer { transport.shutdown() }
            let (response, elapsed) = try await timedEcho(transport, "[black-holed IPv6, good IPv4]")
            #expect(response.status.code == 200)
            #expect(elapsed >= .milliseconds(240) && elapsed < .seconds(5), "took \(elapsed); the connect timeout is 10 s")
            #expect(await TCPSocketTable.reach([blackhole.port: fillers]), "the IPv6 attempt's socket is closed")
        }
    }

    @Test("every address black-holed: timedOut at the connect timeout, every attempt closed")
    func allBlackHoled() async throws {
        let first = try BlackholeListener()
        defer { first.close() }
        let second = try BlackholeListener()
        defer { second.close() }
        let fillers = (await TCPSocketTable.count(port: first.port), await TCPSocketTable.count(port: second.port))
        try await withLeakCheck { leaks throws in
            leaks.watch(port: first.port, baseline: ProcessSockets.connected(toPort: first.port))
            leaks.watch(port: second.port, baseline: ProcessSockets.connected(toPort: second.port))
            let transport = try transport(leaks, addresses: ["127.0.0.1:\(first.port)", "127.0.0.1:\(second.port)"],
                                          attemptDelay: .milliseconds(100), connectTimeout: .milliseconds(600))
            defer { transport.shutdown() }
            let clock = ContinuousClock()
            let start = clock.now
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, URL(string: "http://\(Self.host)/")!, timeout: .seconds(20))
            }
            let elapsed = clock.now - start
            #expect(error == .timedOut, "\(String(describing: error))")
            #expect(error?.description.contains("connecting to http://\(Self.host):80 timed out") == true, "\(String(describing: error))")
            #expect(elapsed >= .milliseconds(590) && elapsed < .seconds(20), "ended after \(elapsed)")  // a hang guard above
            #expect(await TCPSocketTable.reach([first.port: fillers.0, second.port: fillers.1]), "both attempts' sockets are closed")
        }
    }

    @Test("every address refused: cannotConnect at once, naming the addresses tried and the last failure")
    func allRefused() async throws {
        try await withLeakCheck { leaks throws in
            let transport = try transport(leaks, addresses: ["[::1]:1", "127.0.0.1:1"])
            defer { transport.shutdown() }
            let error = await failure { () async throws(HTTPConnectionError) in
                try await fetch(transport, URL(string: "http://\(Self.host)/")!)
            }
            #expect(error == .cannotConnect, "\(String(describing: error))")
            #expect(error?.detail?.contains("2 addresses tried") == true, "\(String(describing: error?.detail))")
            #expect(error?.underlying != nil)
        }
    }

    @Test("cancelling during the race ends the request at once; shutting the transport down closes every attempt")
    func cancelDuringRace() async throws {
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        let fillers = await TCPSocketTable.count(port: blackhole.port)
        try await withLeakCheck { leaks throws in
            leaks.watch(port: blackhole.port, baseline: ProcessSockets.connected(toPort: blackhole.port))
            let transport = try transport(leaks, addresses: ["127.0.0.1:\(blackhole.port)", "[::ffff:127.0.0.1]:\(blackhole.port)"],
                                          attemptDelay: .milliseconds(20), connectTimeout: .seconds(60))
            defer { transport.shutdown() }
            let task = Task { try await fetch(transport, URL(string: "http://\(Self.host)/")!, timeout: .seconds(30)) }
            #expect(await TCPSocketTable.reach([blackhole.port: fillers + 2]), "both attempts pending")
            let clock = ContinuousClock()
            let start = clock.now
            task.cancel()
            let result = await task.result
            #expect(throws: HTTPConnectionError.cancelled) { try result.get() }
            #expect(clock.now - start < .seconds(10))  // a hang guard: the race itself lasts 60 s
            // The connection keeps racing for the next request until the connect timeout (60 s),
            // unless the transport goes away: then every attempt closes at once.
            transport.shutdown()
            #expect(await TCPSocketTable.reach([blackhole.port: fillers], timeout: .seconds(20)))
        }
    }

    @Test("an override applies to its host and port only, matched without regard to case; others still resolve")
    func overrideIsScoped() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            var configuration = NativeTransport.Configuration()
            configuration.addressOverrides = [
                try .init(host: "LocalHost", port: 1, addresses: ["127.0.0.1:\(server.port)"]),
                try .init(host: Self.host, port: server.port, addresses: ["127.0.0.1"]),  // the URL's port
            ]
            let transport = leaks.native(configuration)
            defer { transport.shutdown() }
            let overridden = try await fetch(transport, URL(string: "http://localhost:1/echo")!)
            #expect(try overridden.decode(Echo.self).header("Host") == "localhost:1")
            let byName = try await fetch(transport, URL(string: "http://\(Self.host.uppercased()):\(server.port)/echo")!)
            #expect(byName.status.code == 200)
            let resolved = try await fetch(transport, URL(string: "http://localhost:\(server.port)/echo")!)
            #expect(try resolved.decode(Echo.self).header("Host") == "localhost:\(server.port)")
        }
    }
}
