import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Reliability catalogue, section G: the 401-triggered re-authentication queue, on both
/// transports, against ``AuthServer`` (a token endpoint and a protected route).
@Suite("Catalogue G: authentication")
struct AuthenticationCases {
    private func protected(_ count: Int) -> [HTTPRequest] {
        (0..<count).map { HTTPRequest(.get, "/protected/\($0)") }
    }

    @Test("G1 100 parallel requests all get 401: exactly one refresh, each retried once with the new token", arguments: TransportUnderTest.allCases)
    func parallelRefresh(transport: TransportUnderTest) async throws {
        let auth = try AuthServer()
        defer { auth.shutdown() }
        let outcomes = try await runCase(transport, on: auth.server, protected(100), timeout: .seconds(30),
                                         prepare: { $0.authenticate(matching: .everything, with: auth.bearer()) })
        #expect(outcomes.allSatisfy { $0.status == 200 }, "\(outcomes.map(\.result))")
        #expect(auth.tokenCalls == 1)
        #expect(auth.state.withLock { $0.authorized } == 100)
        #expect(auth.state.withLock { $0.unauthorized } <= 100)  // each request was refused at most once
    }

    @Test("G2 requests started while the refresh runs wait for it instead of going out with the stale credential", arguments: TransportUnderTest.allCases)
    func waitForRefresh(transport: TransportUnderTest) async throws {
        let auth = try AuthServer()
        defer { auth.shutdown() }
        auth.state.withLock { $0.tokenDelay = .milliseconds(400) }
        let outcome = try await runCase(transport, on: auth.server, HTTPRequest(.get, "/protected/first"), timeout: .seconds(30),
                                        prepare: { $0.authenticate(matching: .everything, with: auth.bearer()) },
                                        during: { context, _ in
            #expect(await eventually { auth.server.requestCount(path: "/token") == 1 })  // the refresh runs now
            let later = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 { group.addTask { try await context.connection.get("/protected/later-\(index)").status.code } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(later == Array(repeating: 200, count: 20))
        })
        #expect(outcome.status == 200, "\(outcome.result)")
        #expect(auth.state.withLock { $0.unauthorized } == 1)  // only the first went out without a credential
        #expect(auth.tokenCalls == 1)
    }

    @Test("G3 the refresh fails and the handler gives up: every held request fails with its 401, nothing stays queued", arguments: TransportUnderTest.allCases)
    func refreshGivesUp(transport: TransportUnderTest) async throws {
        let auth = try AuthServer()
        defer { auth.shutdown() }
        // The failing refresh answers once all 50 requests have started (sent or held), however
        // slow the run (ThreadSanitizer) is at starting them: a request started after the
        // refresh gave up would rightly start a second one.
        let gate = TestServer.Gate()
        auth.state.withLock { $0.tokenFailures = true; $0.tokenGate = gate }
        let decisions = Atomic<Int>(0)
        let authenticator = auth.bearer { _, _ in
            decisions.add(1, ordering: .relaxed)
            return false
        }
        let started = StartedRequests()
        let outcomes = try await runCase(transport, on: auth.server, protected(50), timeout: .seconds(30),
                                         configure: { $0.eventMonitor = started.monitor },
                                         prepare: { $0.authenticate(matching: .prefix(auth.server.url("/protected").absoluteString), with: authenticator) },
                                         during: { context, _ in
            #expect(await started.reach(50))  // throws nothing, so nothing can skip the opening
            gate.open()
            #expect(await eventually { context.recorder.closureTerminalCount == 50 })
            #expect(context.connection.activeRequestIDs.isEmpty)
        })
        #expect(outcomes.allSatisfy { $0.error == .unacceptableStatus && $0.status == 401 }, "\(outcomes.map(\.result))")
        #expect(auth.tokenCalls == 1)
        #expect(decisions.load(ordering: .relaxed) == 1)
    }

    @Test("G4 a request that gets 401 right after each fresh credential: a bounded number of refreshes, then authenticationFailed", arguments: TransportUnderTest.allCases)
    func boundedRefreshes(transport: TransportUnderTest) async throws {
        let auth = try AuthServer()
        defer { auth.shutdown() }
        auth.state.withLock { $0.rejectEverything = true }
        let outcome = try await runCase(transport, on: auth.server, HTTPRequest(.get, "/protected/forever"), timeout: .seconds(30),
                                        prepare: { $0.authenticate(matching: .prefix(auth.server.url("/protected").absoluteString), with: auth.bearer()) })
        #expect(outcome.error == .authenticationFailed && outcome.status == 401, "\(outcome.result)")
        #expect(auth.tokenCalls == RefreshLimit().count)
    }

    @Test("G5 requests that went out with the old token while a refresh completed are retried with the new one, without a second refresh", arguments: TransportUnderTest.allCases)
    func staleInFlight(transport: TransportUnderTest) async throws {
        let auth = try AuthServer()
        defer { auth.shutdown() }
        let outcomes = try await runCase(transport, on: auth.server, protected(50), timeout: .seconds(30), prepare: { connection in
            connection.authenticate(matching: .everything, with: auth.bearer())
            let warmUp = try await connection.get("/protected/warm-up")
            #expect(warmUp.status == .ok)
            auth.rotate()  // every request below goes out with the old token
        })
        #expect(outcomes.allSatisfy { $0.status == 200 }, "\(outcomes.map(\.result))")
        #expect(auth.tokenCalls == 2)  // the warm-up's token, then one refresh for all fifty
    }

    @Test("G6 the credential store writes mode 0600 and never shows a secret", arguments: TransportUnderTest.allCases)
    func storedSecrets(transport: TransportUnderTest) async throws {
        let auth = try AuthServer()
        defer { auth.shutdown() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-g6-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("credentials.json")
        let store = FileCredentialStore(fileURL: file)
        let monitorLines = Locked<[String]>([])
        let outcome = try await runCase(transport, on: auth.server, HTTPRequest(.get, "/protected/stored"), configure: {
            $0.eventMonitor = EventMonitor { event in monitorLines.withLock { $0.append("\(event)") } }
        }, prepare: { $0.authenticate(matching: .everything, with: auth.bearer(), store: store) })
        #expect(outcome.status == 200, "\(outcome.result)")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
        let token = try #require(auth.state.withLock { $0.validToken })
        #expect(try String(contentsOf: file, encoding: .utf8).contains(token))  // it is stored…
        let logged = monitorLines.withLock { $0 }
        #expect(!logged.isEmpty)
        #expect(logged.allSatisfy { !$0.contains(token) && !$0.contains("YWxpY2U6cHc") }, "\(logged)")  // …never logged (nor alice:pw)
        #expect(!store.description.contains(token))
    }
}
