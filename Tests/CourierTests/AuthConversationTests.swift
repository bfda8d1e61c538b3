import Courier
import CourierTestServer
import Foundation
import Testing

/// The re-authentication queue, the pipeline and a transport together, over real sockets:
/// conversations of concurrent requests to a protected origin whose token service fails, answers
/// slowly or hands out tokens that expire soon, while the test revokes the accepted token and
/// cancels requests at random moments; some requests are redirected within the origin or to
/// another origin, some go to the other origin directly.
///
/// Whatever the timing, the queue's promises must hold:
/// - each request ends once, nothing leaks, and the connection serves on (``runCase``);
/// - at most one refresh runs at a time, and refreshes stay bounded by what made them needed
///   (one to start, one per revocation, per expiring token, per failed token call, and two per
///   refresh abandoned because every request waiting for it was cancelled: it may have made the
///   server issue a token nobody took);
/// - a request that is not cancelled succeeds with its own answer, unless a refresh gave up, when
///   it may end with its 401; never `authenticationFailed` (the refresh limit is far away);
/// - no credential reaches the other origin, and the token service's `Basic` credential never
///   reaches a protected route; no request carries two `Authorization` fields.
@Suite("Re-authentication: random conversations")
struct AuthConversationTests {
    /// Where a request goes.
    enum Kind: CaseIterable, Sendable {
        /// `GET /protected/p/…`
        case get
        /// `POST /protected/p/…` with a body, which a retry sends again.
        case post
        /// A protected route that redirects within its origin.
        case redirectWithin
        /// A protected route that redirects to the other origin.
        case redirectOut
        /// The other origin, directly.
        case other
    }

    @Test("24 conversations of 12 requests: one refresh at a time, refreshes bounded, every request ends with its own answer or, after a refresh gave up, its 401; credentials never leave their origin",
          arguments: TransportUnderTest.allCases)
    func randomConversations(_ transport: TransportUnderTest) async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0201)
        let server = try AuthConversationServer()
        defer { server.shutdown() }
        // What the conversations met, all told: each must have happened for the test to mean anything.
        var met = (revocations: 0, expiring: 0, givenUp: 0, rejected: 0, cancelled: 0, crossOrigin: 0)
        for conversation in 0..<24 {
            var random = SeededRandom(seed: seed, stream: conversation)
            let context = "conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
            let kinds = (0..<12).map { _ in Self.draw(random.next() % 20) }
            let plans = (0..<8).map { _ in
                AuthConversationServer.TokenPlan(fails: random.next() % 5 == 0, delay: .milliseconds(Int(random.next() % 13)),
                                                 expiresInMilliseconds: random.next() % 4 == 0 ? 5 + Int(random.next() % 26) : nil)
            }
            // Half the protected requests are answered slowly, so that their 401 can land
            // after a refresh that began meanwhile has finished.
            let names = (0..<12).map { "c\(conversation)-r\($0)" }
            var delays: [String: Duration] = [:]
            for (kind, name) in zip(kinds, names) where kind != .other && random.next() % 2 == 0 {
                delays[Self.request(kind, name, server).target] = .milliseconds(1 + Int(random.next() % 15))
            }
            server.state.withLock { $0 = AuthConversationServer.State(plans: plans, delays: delays) }
            let authenticator = CountingTokenAuthenticator(tokenURL: server.origin.url("/token"), retries: Int(random.next() % 2))
            let requests = zip(kinds, names).map { kind, name in Self.request(kind, name, server) }
            let cancelled = Set((0..<12).filter { _ in random.next() % 8 == 0 })
            // What the test does while the requests run, in time order: revocations and cancels.
            var moments: [(at: Int, cancel: Int?)] = (0..<Int(random.next() % 3)).map { _ in (Int(random.next() % 20), nil) }
            moments += cancelled.map { (Int(random.next() % 20), $0) }
            moments.sort { $0.at < $1.at }

            let outcomes = try await runCase(transport, on: server.origin, requests, prepare: { connection in
                connection.authenticate(matching: .prefix(server.origin.url("/protected").absoluteString), with: authenticator,
                                        refreshLimit: RefreshLimit(count: 100))
            }, during: { caseContext, ids in
                var elapsed = 0
                for moment in moments {
                    try await Task.sleep(for: .milliseconds(moment.at - elapsed))
                    elapsed = moment.at
                    if let index = moment.cancel { caseContext.connection.cancel(ids[index]) } else { server.rotate() }
                }
            })

            let counts = authenticator.counts.withLock { $0 }
            let state = server.state.withLock { $0 }
            let called = plans.prefix(state.calls)
            let bound = 1 + state.rotations + called.filter { !$0.fails && $0.expiresInMilliseconds != nil }.count
                + called.filter(\.fails).count + 2 * counts.abandoned
            let story = "\(context): kinds \(kinds), plans \(plans.map { "\($0.fails ? "fail" : "ok")+\($0.delay)\($0.expiresInMilliseconds.map { " exp \($0) ms" } ?? "")" }), retries \(authenticator.retries), \(state.rotations) revocations, cancelled \(cancelled.sorted()), \(counts)"
            #expect(counts.mostAtOnce <= 1, "refreshes ran at once: \(story)")
            #expect(counts.refreshes <= bound, "\(counts.refreshes) refreshes, at most \(bound) needed: \(story)")
            #expect(state.leaked.isEmpty, "a credential left its origin: \(state.leaked); \(story)")
            #expect(state.visits.allSatisfy { $0.authorizations.count <= 1 }, "two Authorization fields: \(story)")
            met.revocations += state.rotations
            met.expiring += called.filter { !$0.fails && $0.expiresInMilliseconds != nil }.count
            met.givenUp += counts.givenUp
            met.crossOrigin += kinds.filter { $0 == .redirectOut }.count
            for (index, outcome) in outcomes.enumerated() {
                if outcome.status == 401 { met.rejected += 1 }
                if cancelled.contains(index), outcome.error == .cancelled { met.cancelled += 1; continue }
                let history = "request \(index) (\(kinds[index])) ended with \(outcome.result); \(story)"
                switch outcome.result {
                case .success(let response):
                    let path = (try? response.decode([String: String].self))?["path"]
                    #expect(path == Self.answerPath(kinds[index], "c\(conversation)-r\(index)"), "\(history)")
                case .failure(let error):
                    let gaveUp = counts.givenUp > 0 && error == .unacceptableStatus && error.response?.status.code == 401
                    #expect(gaveUp, "\(history)")
                }
            }
        }
        #expect(met.revocations > 0 && met.expiring > 0 && met.givenUp > 0 && met.rejected > 0 && met.cancelled > 0 && met.crossOrigin > 0,
                "the conversations missed a situation: \(met)")
    }

    /// A kind, drawn from 20 outcomes: half plain GETs, then POSTs, redirects and the other origin.
    static func draw(_ roll: UInt64) -> Kind {
        switch roll {
        case 0..<10: .get
        case 10..<13: .post
        case 13..<15: .redirectWithin
        case 15..<17: .redirectOut
        default: .other
        }
    }

    static func request(_ kind: Kind, _ name: String, _ server: AuthConversationServer) -> HTTPRequest {
        switch kind {
        case .get: HTTPRequest(.get, "/protected/p/\(name)")
        case .post: HTTPRequest(.post, "/protected/p/\(name)", body: .data(Data(name.utf8)))
        case .redirectWithin: HTTPRequest(.get, "/protected/in/\(name)")
        case .redirectOut: HTTPRequest(.get, "/protected/out/\(name)")
        case .other: HTTPRequest(.get, server.other.url("/public/\(name)").absoluteString)
        }
    }

    /// The path the answer of a request of `kind` names.
    static func answerPath(_ kind: Kind, _ name: String) -> String {
        switch kind {
        case .get, .post: "/protected/p/\(name)"
        case .redirectWithin: "/protected/landed/\(name)"
        case .redirectOut, .other: "/public/\(name)"
        }
    }
}
