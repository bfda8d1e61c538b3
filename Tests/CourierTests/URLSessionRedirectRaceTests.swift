@testable import Courier
import CourierTestServer
import Foundation
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
}
