import CourierTestSupport
@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Issue 22: a deadline or a cancel that lands while FoundationNetworking waits for the answer to
/// its redirect callback made corelibs stop the process ("Received callback for HTTP redirection,
/// but we're not waiting for it"). Many requests run an endless redirect chain on one
/// `URLSessionTransport` and end at seeded random moments, so that some end inside that window.
@Suite("URLSession redirect races")
struct URLSessionRedirectRaceTests {
    /// Requests started at once in a round: they keep the transport's one delegate queue busy,
    /// which widens the window between a redirect and its answer.
    static let requestsPerRound = 40
    /// At most this many rounds, and no new round after ``timeBudget``; rounds stop early once a
    /// cancel has met a redirect callback (``URLSessionExchange/redirectRaces``) in two rounds.
    static let rounds = 12
    static let timeBudget = Duration.seconds(15)

    /// A server whose `/loop/<n>` answers at once with a 302 to `/loop/<n+1>`, forever.
    func loopServer() throws -> TestServer {
        let server = try TestServer()
        server.route("/loop/*") { request in
            let hop = Int(request.path.split(separator: "/").last ?? "") ?? 0
            return .response(status: 302, headers: [("Location", "/loop/\(hop + 1)")])
        }
        return server
    }

    /// A request that follows the loop until something else ends it.
    func endlessChain(deadline: Duration? = nil) -> HTTPRequest {
        var request = HTTPRequest(.get, "/loop/0")
        request.redirectPolicy = .follow(limit: 100_000)
        request.deadline = deadline
        return request
    }

    /// Runs `round` until a cancel has met a redirect callback in two rounds, at most ``rounds``
    /// times within ``timeBudget``, then checks that the window was hit at all: a run that never hit
    /// it would prove nothing.
    func repeatRounds(_ round: () async throws -> Void) async throws {
        let clock = ContinuousClock()
        let end = clock.now + Self.timeBudget
        var roundsThatHit = 0
        for _ in 0..<Self.rounds where clock.now < end && roundsThatHit < 2 {
            let before = URLSessionExchange.redirectRaces.load(ordering: .relaxed)
            try await round()
            if URLSessionExchange.redirectRaces.load(ordering: .relaxed) > before { roundsThatHit += 1 }
        }
        #expect(roundsThatHit > 0, "no cancel met a redirect callback in \(Self.rounds) rounds: the race was not exercised")
    }

    @Test("issue 22 a deadline that fires during a redirect ends the request with deadlineExceeded, and the process survives")
    func deadlineDuringRedirect() async throws {
        var random = SeededRandom.forTest()
        let server = try loopServer()
        defer { server.shutdown() }
        try await repeatRounds {
            let requests = (0..<Self.requestsPerRound).map { _ in
                endlessChain(deadline: .milliseconds(Int.random(in: 2...60, using: &random)))
            }
            let outcomes = try await runCase(.urlSession, on: server, requests)
            for outcome in outcomes {
                #expect(outcome.error == .deadlineExceeded, "\(outcome.result), \(random.replayHint)")
            }
        }
    }

    @Test("issue 22 a cancel during a redirect ends the request with cancelled, and the process survives")
    func cancelDuringRedirect() async throws {
        var random = SeededRandom.forTest()
        let server = try loopServer()
        defer { server.shutdown() }
        try await repeatRounds {
            let pauses = (0..<Self.requestsPerRound).map { _ in Duration.microseconds(Int.random(in: 0...3_000, using: &random)) }
            let requests = (0..<Self.requestsPerRound).map { _ in endlessChain() }
            let outcomes = try await runCase(.urlSession, on: server, requests, during: { context, ids in
                for (id, pause) in zip(ids.shuffled(using: &random), pauses) {
                    try await Task.sleep(for: pause)
                    context.connection.cancel(id)
                }
            })
            for outcome in outcomes {
                #expect(outcome.error == .cancelled, "\(outcome.result), \(random.replayHint)")
            }
        }
    }

    /// A session whose delegate queue the test holds, routed by a ``URLSessionTaskRouter``, and
    /// one exchange with its task on `/loop/0` of `server`, not started yet.
    struct HeldSession {
        let queue: OperationQueue
        let router: URLSessionTaskRouter
        let session: URLSession
        let exchange: URLSessionExchange
        let task: URLSessionDataTask

        init(_ server: TestServer, observer: any TransportObserver = IgnoringTransportObserver()) throws {
            queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let router = URLSessionTaskRouter(delegateQueue: queue)
            self.router = router
            session = URLSession(configuration: .ephemeral, delegate: router, delegateQueue: queue)
            let url = try #require(URL(string: "/loop/0", relativeTo: server.baseURL)?.absoluteURL)
            exchange = URLSessionExchange(url: url, method: "GET", observer: observer, maxBodySize: 1 << 20, bytesSent: 0,
                                          cancel: { router.cancel($0) })
            task = session.dataTask(with: url)
            router.register(exchange, for: task)
        }

        /// Invalidates the session in the delegate queue's order, as the transport's deinit does.
        func invalidate() {
            let (router, session) = (self.router, self.session)
            router.inOrder { router.invalidate(session) }
        }
    }

    @Test("issue 22 a cancel that lands while corelibs waits for the redirect answer: the callback is answered once, then the cancel ends the task")
    func cancelWhileRedirectAnswerAwaited() async throws {
        let server = try loopServer()
        defer { server.shutdown() }
        let held = try HeldSession(server)
        defer { held.invalidate() }
        #expect(held.exchange.attach(held.task))
        held.queue.isSuspended = true
        held.task.resume()
        // The first 302 arrived: corelibs queued the redirect callback and waits for its answer.
        let queue = held.queue
        #expect(await eventually(timeout: .seconds(10)) { queue.operationCount > 0 }, "no redirect callback was queued")
        let racesBefore = URLSessionExchange.redirectRaces.load(ordering: .relaxed)
        held.exchange.abandon(error: URLError(.cancelled))
        held.queue.isSuspended = false
        let outcome = await withCheckedContinuation { held.exchange.begin($0) }
        #expect(throws: HTTPConnectionError.cancelled) { try outcome.get() }
        let task = held.task
        #expect(await eventually(timeout: .seconds(10)) { task.state == .completed }, "the task never completed: \(task.state)")
        // Answered with nil, corelibs makes the redirect itself the task's response.
        #expect((task.response as? HTTPURLResponse)?.statusCode == 302, "the redirect callback was not answered")
        #expect(URLSessionExchange.redirectRaces.load(ordering: .relaxed) > racesBefore)
    }

    @Test("issue 22 an exchange that ended keeps neither its observer nor its task, so a task corelibs still holds keeps no request alive")
    func endedExchangeLetsGo() async throws {
        let server = try loopServer()
        defer { server.shutdown() }
        let leaks = LeakCheck()
        let held = try HeldSession(server, observer: leaks.track(RecordingObserver()))
        defer { held.invalidate() }
        #expect(held.exchange.attach(held.task))
        held.exchange.abandon(error: URLError(.cancelled))
        await leaks.verify(timeout: .seconds(5))
        withExtendedLifetime(held) {}
    }

    @Test("issue 22 a transport released while its requests' starts are still queued does not stop the process, in a child process")
    func releasedWithStartsQueued() async throws {
        try await runInChildProcess(Self.self) {
            let server = try loopServer()
            defer { server.shutdown() }
            let url = try #require(URL(string: "/loop/0", relativeTo: server.baseURL)?.absoluteURL)
            let clock = ContinuousClock()
            let end = clock.now + .seconds(5)
            for _ in 0..<300 where clock.now < end {
                // Cancelled before it starts: send returns at once, and the last reference to the
                // transport goes while the task's creation is still queued behind it.
                let transport = URLSessionTransport()
                let send = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await transport.send(TransportRequest(method: .get, url: url), observer: IgnoringTransportObserver())
                }
                let result = await send.result
                #expect(throws: HTTPConnectionError.cancelled) { try result.get() }
            }
        } check: { child in
            let crashed = child.crashed
            #expect(!crashed, "\(child.crashReport)")
            #expect(child.status == 0 && child.ranOneTest, "\(child.output.suffix(2_000))")
        }
    }
}
