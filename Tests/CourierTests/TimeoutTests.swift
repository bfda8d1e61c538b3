import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Timeout precedence (reliability case B1): global < connection < request.
@Suite("Timeouts", .serialized)
struct TimeoutTests {
    @Test("B1 the request's timeout wins over the connection's", arguments: TransportUnderTest.allCases)
    func requestWins(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, transport, timeout: .milliseconds(300))
            var patient = HTTPRequest(.get, "/delay/900")
            patient.timeout = .seconds(10)
            #expect(try await connection.send(patient).status == .ok)

            connection.timeout = .seconds(10)
            var impatient = HTTPRequest(.get, "/delay/3000")
            impatient.timeout = .milliseconds(300)
            await #expect(throws: HTTPConnectionError.timedOut) { try await connection.send(impatient) }
        }
    }

    @Test("B1 the connection's timeout wins over the global default", arguments: TransportUnderTest.allCases)
    func connectionWins(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, transport, timeout: .milliseconds(300))
            #expect(HTTPConnection.defaultTimeout == .seconds(60))
            let clock = ContinuousClock()
            let start = clock.now
            await #expect(throws: HTTPConnectionError.timedOut) { try await connection.get("/fault/stall") }
            #expect(clock.now - start < .seconds(30))  // far below the 60 s global default
        }
    }

    @Test("B1 the global default applies when nothing more specific is set, and a connection's own setting beats it", arguments: TransportUnderTest.allCases)
    func globalApplies(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let saved = HTTPConnection.defaultTimeout
            HTTPConnection.defaultTimeout = .milliseconds(500)
            let connection = leaks.connection(server, transport, timeout: nil)
            await #expect(throws: HTTPConnectionError.timedOut) { try await connection.get("/delay/3000") }
            // Restored at once: tests running in parallel read the global default too.
            HTTPConnection.defaultTimeout = saved
            connection.timeout = .seconds(10)
            #expect(try await connection.get("/delay/1000").status == .ok)
        }
    }

    @Test("B2 a body that stalls after the head times out", arguments: TransportUnderTest.allCases)
    func stalledBody(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.connection(server, transport, timeout: .milliseconds(400))
            await #expect(throws: HTTPConnectionError.timedOut) { try await connection.get("/fault/stall-body") }
            // The follow-up needs a new connection: a slow machine (TSan) may take longer than 400 ms.
            connection.timeout = .seconds(10)
            #expect(try await connection.get("/echo").status == .ok)
        }
    }
}
