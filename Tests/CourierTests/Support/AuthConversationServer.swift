import Courier
import CourierTestServer
import Foundation

/// Two origins for the re-authentication conversations (``AuthConversationTests``).
///
/// The protected origin:
/// - `/token` takes `alice:pw` as Basic and answers each call as planned (``TokenPlan``): after a
///   delay, a 500 or a fresh token, which becomes the only one accepted (an expiring token
///   says how soon it expires, in `expires_in_ms`);
/// - `/protected/p/*` answers 200 with its path to a request that carries the accepted token as
///   `Authorization: Bearer`, else 401;
/// - `/protected/in/*` and `/protected/out/*` answer such a request with a redirect: within the
///   origin to `/protected/landed/*`, or to the other origin's `/public/*`.
///
/// The other origin answers `/public/*` with its path, and logs every `Authorization` field it
/// is sent: a credential of the protected origin must never reach it.
final class AuthConversationServer: Sendable {
    /// How the protected origin answers one call of `/token`.
    struct TokenPlan: Sendable {
        /// A 500 instead of a token.
        var fails = false
        /// How long the answer takes.
        var delay: Duration = .zero
        /// How soon the token expires, in milliseconds, when it does.
        var expiresInMilliseconds: Int?
    }

    /// One request the protected origin saw on a protected route.
    struct Visit: Sendable {
        let path: String
        /// The values of its `Authorization` fields, in order.
        let authorizations: [String]
        /// Whether it carried the accepted token.
        let accepted: Bool
    }

    struct State: Sendable {
        /// The one token the protected routes accept.
        var accepted: String?
        /// The plans of the coming `/token` calls, in order; a call past them gets a token at once.
        var plans: [TokenPlan] = []
        /// `/token` calls so far, and how many of them issued a token.
        var calls = 0, issued = 0
        /// Times the test invalidated the accepted token.
        var rotations = 0
        /// How long the answer to a protected path takes, when it is slow (judged when the request
        /// arrives, answered later: a 401 can then land after a refresh has finished).
        var delays: [String: Duration] = [:]
        var visits: [Visit] = []
        /// `Authorization` values the other origin was sent, and `Basic` ones a protected route was.
        var leaked: [String] = []
    }

    let origin: TestServer
    let other: TestServer
    let state = Locked(State())
    static let user = (name: "alice", password: "pw")

    init() throws {
        origin = try TestServer()
        other = try TestServer()
        let basic = BasicAuthenticator.headerValue(user: Self.user.name, password: Self.user.password)
        origin.route("/token") { [state] request in
            guard request.value(for: "Authorization") == basic else { return .response(status: 401) }
            let (plan, reply): (TokenPlan, TestServer.Reply) = state.withLock { state in
                state.calls += 1
                let plan = state.calls <= state.plans.count ? state.plans[state.calls - 1] : TokenPlan()
                if plan.fails { return (plan, .text(status: 500, "token service down")) }
                state.issued += 1
                let token = "tok-\(state.issued)"
                state.accepted = token
                var fields = ["access_token": token]
                if let lifetime = plan.expiresInMilliseconds { fields["expires_in_ms"] = "\(lifetime)" }
                return (plan, .json(fields))
            }
            return plan.delay == .zero ? reply : .delayed(plan.delay, reply)
        }
        origin.route("/protected/*") { [state, other] request in
            let (reply, delay) = state.withLock { state -> (TestServer.Reply, Duration?) in
                (Self.protectedReply(request, &state, other: other), state.delays[request.path])
            }
            return delay.map { .delayed($0, reply) } ?? reply
        }
        other.route("/public/*") { [state] request in
            state.withLock { $0.leaked += request.fields.filter { $0.name.lowercased() == "authorization" }.map(\.value) }
            return .json(["path": request.path])
        }
    }

    /// The answer of a protected route, decided when the request arrives; logs the visit.
    private static func protectedReply(_ request: TestServer.Request, _ state: inout State, other: TestServer) -> TestServer.Reply {
        let authorizations = request.fields.filter { $0.name.lowercased() == "authorization" }.map(\.value)
        let accepted = state.accepted.map { authorizations == ["Bearer \($0)"] } ?? false
        state.visits.append(Visit(path: request.path, authorizations: authorizations, accepted: accepted))
        state.leaked += authorizations.filter { $0.hasPrefix("Basic") }
        guard accepted else { return .response(status: 401, headers: [("WWW-Authenticate", "Bearer realm=\"test\"")]) }
        let parts = request.path.split(separator: "/", maxSplits: 3).map(String.init)  // protected, kind, rest
        switch parts.count == 3 ? parts[1] : "" {
        case "in": return .response(status: 302, headers: [("Location", "/protected/landed/\(parts[2])")])
        case "out": return .response(status: 302, headers: [("Location", other.url("/public/\(parts[2])").absoluteString)])
        default: return .json(["path": request.path])
        }
    }

    /// Makes the accepted token invalid, as a server that revoked it: the next one comes from `/token`.
    func rotate() {
        state.withLock { state in
            state.accepted = "revoked-\(state.rotations)"
            state.rotations += 1
        }
    }

    func shutdown() {
        origin.shutdown()
        other.shutdown()
    }
}

/// A bearer-token authenticator for ``AuthConversationServer`` that counts its refreshes, how
/// many ran at once, how many were abandoned (cancelled because every request waiting for them
/// had gone) and how often it gave up. It retries a failed refresh `retries` times in a row, then
/// gives up.
final class CountingTokenAuthenticator: Authenticator {
    struct Counts: Sendable {
        var refreshes = 0, running = 0, mostAtOnce = 0, abandoned = 0, givenUp = 0
    }

    struct TokenRefused: Error {
        let status: Int
    }

    let tokenURL: URL
    let retries: Int
    let counts = Locked(Counts())

    init(tokenURL: URL, retries: Int) {
        self.tokenURL = tokenURL
        self.retries = retries
    }

    func apply(_ credential: Credential, to request: inout TransportRequest) {
        request.headers.set("Bearer \(credential.secret)", for: "Authorization")
    }

    func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
        counts.withLock { counts in
            counts.refreshes += 1
            counts.running += 1
            counts.mostAtOnce = max(counts.mostAtOnce, counts.running)
        }
        defer {
            let cancelled = Task.isCancelled
            counts.withLock { counts in
                counts.running -= 1
                if cancelled { counts.abandoned += 1 }
            }
        }
        let basic = BasicAuthenticator.headerValue(user: AuthConversationServer.user.name, password: AuthConversationServer.user.password)
        let response = try await context.send(HTTPRequest(.post, tokenURL.absoluteString, headers: ["Authorization": basic]))
        guard response.status.code == 200 else { throw TokenRefused(status: response.status.code) }
        let fields = try response.decode([String: String].self)
        guard let token = fields["access_token"] else { throw TokenRefused(status: 200) }
        let expiry = fields["expires_in_ms"].flatMap(Double.init).map { Date().addingTimeInterval($0 / 1000) }
        return Credential(secret: token, expiresAt: expiry)
    }

    func shouldRetryRefresh(after error: any Error, attempt: Int) async -> Bool {
        if attempt <= retries { return true }
        counts.withLock { $0.givenUp += 1 }
        return false
    }
}
