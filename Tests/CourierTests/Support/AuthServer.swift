import Courier
import CourierTestServer
import Foundation
import Synchronization

/// A test server with a token endpoint and a protected route (reliability section G).
///
/// `/token` takes `alice:pw` as Basic and issues a fresh token, which becomes the only valid one;
/// it counts its calls and can be made to fail or to answer slowly. `/protected/*` answers 200
/// with the valid token as `Authorization: Bearer`, else 401. The test can rotate (invalidate)
/// the token, or make the route reject everything.
final class AuthServer: Sendable {
    struct State {
        var validToken: String?
        var issued = 0
        var tokenFailures = false
        var tokenDelay: Duration = .zero
        /// When set, `/token` answers only once the test opens it (``tokenDelay`` is then ignored).
        var tokenGate: TestServer.Gate?
        var rejectEverything = false
        var unauthorized = 0
        var authorized = 0
        var authorizationFieldCounts: [Int] = []
        /// Protected paths whose answer (decided when the request arrives) is held until the gate opens.
        var heldAnswers: [String: TestServer.Gate] = [:]
    }

    let server: TestServer
    let state = Locked(State())
    static let user = (name: "alice", password: "pw")

    init() throws {
        server = try TestServer()
        server.route("/token") { [state] request in
            let reply: TestServer.Reply = state.withLock { state in
                guard request.value(for: "Authorization") == BasicAuthenticator.headerValue(user: Self.user.name, password: Self.user.password) else {
                    return .response(status: 401)
                }
                state.issued += 1
                if state.tokenFailures { return .text(status: 500, "token service down") }
                let token = "tok-\(state.issued)"
                state.validToken = token
                return .json(["access_token": token])
            }
            let (delay, gate) = state.withLock { ($0.tokenDelay, $0.tokenGate) }
            if let gate { return .whenOpen(gate, reply) }
            return delay == .zero ? reply : .delayed(delay, reply)
        }
        server.route("/protected/*") { [state] request in
            state.withLock { state -> TestServer.Reply in
                state.authorizationFieldCounts.append(request.fields.filter { $0.name.lowercased() == "authorization" }.count)
                let valid = state.validToken.map { "Bearer \($0)" }
                let reply: TestServer.Reply
                if state.rejectEverything || valid == nil || request.value(for: "Authorization") != valid {
                    state.unauthorized += 1
                    reply = .response(status: 401, headers: [("WWW-Authenticate", "Bearer realm=\"test\"")])
                } else {
                    state.authorized += 1
                    reply = .json(["path": request.path])
                }
                return state.heldAnswers[request.path].map { .whenOpen($0, reply) } ?? reply
            }
        }
    }

    var tokenCalls: Int { state.withLock { $0.issued } }

    /// Invalidates the current token: the next valid one comes from `/token`.
    func rotate() { state.withLock { $0.validToken = "rotated-away" } }

    func shutdown() { server.shutdown() }

    /// A bearer-token authenticator for this server.
    func bearer(onRefreshFailure: (@Sendable (any Error, Int) async -> Bool)? = nil) -> BearerTokenAuthenticator {
        .bearerToken(tokenURL: server.url("/token"), credentials: { _ in (Self.user.name, Self.user.password) },
                     onRefreshFailure: onRefreshFailure) { response in
            struct Body: Decodable { let access_token: String }
            return .init(value: try response.decode(Body.self).access_token)
        }
    }
}
