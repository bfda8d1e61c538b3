import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Request coalescing (opt-in): identical GETs that overlap share one exchange, and each caller
/// still ends once with its own outcome.
@Suite("Request coalescing")
struct CoalescingTests {
    /// A server whose `/slow/who` answers with the caller's API key, counting hits: after 300 ms,
    /// or, given a gate, once the test opens it.
    static func server(heldBy gate: TestServer.Gate? = nil) throws -> TestServer {
        let server = try TestServer()
        server.route("/slow/who") { request in
            let answer = TestServer.Reply.response(status: 200, body: Data("who: \(request.value(for: "X-API-Key") ?? "nobody")".utf8))
            return gate.map { .whenOpen($0, answer) } ?? .delayed(.milliseconds(300), answer)
        }
        return server
    }

    /// A connection to `server`; `started` counts the requests that have begun (the first wait
    /// in their pipeline is the coalescing stage's).
    func connection(_ server: TestServer, _ transport: TransportUnderTest, _ leaks: LeakCheck,
                    coalescing: Bool = true, started: StartedRequests? = nil) -> HTTPConnection {
        // Held answers wait as long as StartedRequests.reach may (60 s), not the default 10 s.
        leaks.connection(server, transport, timeout: .seconds(90)) { configuration in
            configuration.coalescesRequests = coalescing
            configuration.cache = nil
            configuration.eventMonitor = started?.monitor
        }
    }

    /// Sends `count` copies of `request` at once and collects their outcomes.
    func sendAll(_ count: Int, _ request: HTTPRequest, on connection: HTTPConnection) async -> [Result<HTTPResponse, HTTPConnectionError>] {
        await withTaskGroup(of: Result<HTTPResponse, HTTPConnectionError>.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do throws(HTTPConnectionError) { return .success(try await connection.send(request)) } catch { return .failure(error) }
                }
            }
            var results: [Result<HTTPResponse, HTTPConnectionError>] = []
            for await result in group { results.append(result) }
            return results
        }
    }

    /// Plays a case on one flight: `leader` (by default a plain `GET /slow/who`) reaches the server,
    /// whose answer is held until the gate opens, then `count` plain GETs of the same path join it;
    /// `play` gets the leader's task, the followers' tasks, the server and the gate.
    func withHeldFlight(_ transport: TransportUnderTest, leader: HTTPRequest = HTTPRequest(.get, "/slow/who"), followers count: Int,
                        _ play: (Task<HTTPResponse, any Error>, [Task<HTTPResponse, any Error>], TestServer, TestServer.Gate) async throws -> Void)
        async throws {
        let gate = TestServer.Gate()
        let server = try Self.server(heldBy: gate)
        defer { server.shutdown() }
        try await withLeakCheck { (leaks) throws in
            let started = StartedRequests()
            let connection = connection(server, transport, leaks, started: started)
            let first = Task { try await connection.send(leader) }
            // Followers join once the leader is at the server (a loaded machine can take longer
            // than any fixed pause to get it there), while its answer is held.
            #expect(await eventually(timeout: .seconds(10)) { server.requestCount(path: "/slow/who") == 1 })
            let followers = (0..<count).map { _ in Task { try await connection.send(HTTPRequest(.get, "/slow/who")) } }
            #expect(await started.reach(count + 1))
            try await play(first, followers, server, gate)
        }
    }

    @Test("1,000 identical concurrent GETs make one request to the server, and every caller gets its answer",
          arguments: TransportUnderTest.allCases)
    func thousandShareOne(transport: TransportUnderTest) async throws {
        // The answer is held until all 1,000 have started: a slow machine (TSan) can take longer
        // than any fixed delay to start them, and a request that starts after the answer came
        // rightly goes out again. (From its start to its flight, a request makes a few calls
        // with no wait; StartedRequests.reach allows 200 ms for them.)
        let gate = TestServer.Gate()
        let server = try Self.server(heldBy: gate)
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            let started = StartedRequests()
            let connection = connection(server, transport, leaks, started: started)
            async let sent = sendAll(1_000, HTTPRequest(.get, "/slow/who", headers: ["X-API-Key": "k1"]), on: connection)
            #expect(await started.reach(1_000))
            gate.open()
            let results = await sent
            let texts = results.map { try? $0.get().text }
            #expect(texts.count == 1_000)
            #expect(texts.allSatisfy { $0 == "who: k1" })
            #expect(server.requestCount(path: "/slow/who") == 1)
        }
    }

    @Test("without coalescing, 20 identical concurrent GETs make 20 requests", arguments: TransportUnderTest.allCases)
    func offByDefault(transport: TransportUnderTest) async throws {
        let server = try Self.server()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            let connection = connection(server, transport, leaks, coalescing: false)
            let results = await sendAll(20, HTTPRequest(.get, "/slow/who"), on: connection)
            #expect(results.allSatisfy { (try? $0.get().status.code) == 200 })
            #expect(server.requestCount(path: "/slow/who") == 20)
        }
    }

    @Test("requests with different credentials never share: two API keys make two requests, each gets its own answer",
          arguments: TransportUnderTest.allCases)
    func credentialsKeepApart(transport: TransportUnderTest) async throws {
        let gate = TestServer.Gate()
        let server = try Self.server(heldBy: gate)
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            let started = StartedRequests()
            let connection = connection(server, transport, leaks, started: started)
            async let first = sendAll(10, HTTPRequest(.get, "/slow/who", headers: ["X-API-Key": "alice"]), on: connection)
            async let second = sendAll(10, HTTPRequest(.get, "/slow/who", headers: ["X-API-Key": "bob"]), on: connection)
            #expect(await started.reach(20))
            gate.open()
            let (alice, bob) = await (first, second)
            #expect(alice.allSatisfy { (try? $0.get().text) == "who: alice" })
            #expect(bob.allSatisfy { (try? $0.get().text) == "who: bob" })
            #expect(server.requestCount(path: "/slow/who") == 2)
        }
    }

    @Test("a waiting request that is cancelled ends cancelled alone; the others get the one response",
          arguments: TransportUnderTest.allCases)
    func cancelledFollowerLeavesAlone(transport: TransportUnderTest) async throws {
        try await withHeldFlight(transport, followers: 5) { leader, followers, server, gate throws in
            followers[0].cancel()
            await #expect(throws: HTTPConnectionError.cancelled) { try await followers[0].value }
            gate.open()
            #expect(try await leader.value.status.code == 200)
            for follower in followers.dropFirst() { #expect(try await follower.value.text == "who: nobody") }
            #expect(server.requestCount(path: "/slow/who") == 1)
        }
    }

    @Test("when the request that went out is cancelled, the ones waiting on it go out again and succeed",
          arguments: TransportUnderTest.allCases)
    func cancelledLeaderHandsOver(transport: TransportUnderTest) async throws {
        try await withHeldFlight(transport, followers: 5) { leader, followers, server, gate throws in
            leader.cancel()
            await #expect(throws: HTTPConnectionError.cancelled) { try await leader.value }
            // One of the followers goes out again for everyone; it reaches the server before the
            // answer is let out, so a late one cannot make a third request.
            #expect(await eventually(timeout: .seconds(10)) { server.requestCount(path: "/slow/who") == 2 })
            try? await Task.sleep(for: .milliseconds(200))  // no throw may skip the gate's opening
            gate.open()
            for follower in followers { #expect(try await follower.value.status.code == 200) }
            // The cancelled one reached the server, then one of the followers went out for everyone.
            #expect(server.requestCount(path: "/slow/who") == 2)
        }
    }

    @Test("when the deadline or the timeout of the request that went out passes, the ones waiting on it, with time left, go out again and succeed",
          arguments: TransportUnderTest.allCases, ["deadline", "timeout"])
    func leaderOutOfTime(transport: TransportUnderTest, limit: String) async throws {
        var hurried = HTTPRequest(.get, "/slow/who")
        if limit == "deadline" { hurried.deadline = .seconds(4) } else { hurried.timeout = .seconds(4) }
        try await withHeldFlight(transport, leader: hurried, followers: 3) { leader, followers, server, gate throws in
            do {
                _ = try await leader.value
                Issue.record("the held request succeeded")
            } catch let error as HTTPConnectionError {
                #expect(error == (limit == "deadline" ? .deadlineExceeded : .timedOut))
            }
            // The followers did not run out of time: one request goes out for the three of them (after
            // the first one's deadline, one of them goes out again; with a timeout of their own, they
            // never joined it).
            #expect(await eventually(timeout: .seconds(10)) { server.requestCount(path: "/slow/who") == 2 })
            gate.open()
            for follower in followers {
                let result = await follower.result
                #expect((try? result.get())?.status.code == 200, "a follower got \(result), the first request's ending")
            }
            #expect(server.requestCount(path: "/slow/who") == 2)
        }
    }

    @Test("POSTs and streamed responses are never coalesced", arguments: TransportUnderTest.allCases)
    func onlyPlainReads(transport: TransportUnderTest) async throws {
        let server = try Self.server()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            let connection = connection(server, transport, leaks)
            let posts = await sendAll(5, HTTPRequest(.post, "/slow/who", body: .data(Data("x".utf8))), on: connection)
            #expect(posts.allSatisfy { (try? $0.get().status.code) == 200 })
            #expect(server.requestCount(path: "/slow/who") == 5)
            guard transport == .native else { return }  // URLSessionTransport does not stream responses
            let streams = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        guard let response = try? await connection.stream(HTTPRequest(.get, "/slow/who")),
                              let body = try? await response.body.collect(upTo: 1 << 20) else { return 0 }
                        return body.count
                    }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(streams == [11, 11, 11])
            #expect(server.requestCount(path: "/slow/who") == 8)
        }
    }
}
