import Courier
import Foundation

/// The ChatCave side of Courier's re-authentication queue.
///
/// Registered by ``ChatCaveService`` for every URL of its server. It puts the signed-in user's
/// credentials on each request — `X-Magic-Auth: <apiKey>`, or `Authorization: Basic` with the
/// ``ChatCaveService/AuthenticationScheme/basic`` scheme — read from the live ``SessionState``
/// through ``credentialToSend(stored:)``, so an explicit sign-in or sign-out takes effect at once.
///
/// When the server answers 401, Courier holds that request and every other one to the server,
/// and runs ``refresh(previous:context:)`` once: it asks the service's authentication handler
/// (or delegate) for a name and password, signs in with `PUT /account` (an `HTTPRequest` resolved
/// against the server URL, sent around the queue), and
/// keeps the returned user id and key. Courier then resends every held request. A wrong
/// password makes the handler be asked again, at most `maxAttempts` times; the queue also
/// bounds refreshes in time (5 per 30 s).
///
/// 401s from `/account` itself (a sign-in with a wrong password, a sign-out) are answers,
/// not challenges: they go back to their caller.
struct ChatCaveAuthenticator: Authenticator {
    /// Why a refresh failed.
    enum RefreshFailure: Error, Equatable {
        /// The handler gave no credentials.
        case declined
        /// The server refused the name and password.
        case wrongPassword
        /// The sign-in request failed, or its answer could not be read.
        case signInFailed(String)
    }

    let session: SessionState
    let hooks: AuthenticationHooks
    let statistics: StatisticsCollector
    /// The server's `/account`, whose 401s are answers rather than challenges.
    let accountURL: URL
    let maxAttempts: Int

    /// The signed-in user's credential from the live ``SessionState`` (the key, or the name and
    /// password for Basic), whatever the queue holds: an explicit sign-in or sign-out takes
    /// effect on the next request; `nil` (signed out) sends none.
    func credentialToSend(stored: Credential?) -> Credential? {
        switch session.authorization {
        case .apiKey(let key): Credential(user: session.user?.name, secret: key)
        case .basic(let name, let password): Credential(user: name, secret: password)
        case nil: nil
        }
    }

    /// `X-Magic-Auth: <key>`, or `Authorization: Basic` for the Basic scheme; the other field removed.
    func apply(_ credential: Credential, to request: inout TransportRequest) {
        switch session.scheme {
        case .apiKey:
            request.headers.remove("Authorization")
            request.headers.set(credential.secret, for: "X-Magic-Auth")
        case .basic:
            request.headers.remove("X-Magic-Auth")
            request.headers.set(BasicAuthenticator.headerValue(user: credential.user ?? "", password: credential.secret),
                                for: "Authorization")
        }
    }

    func isChallenge(_ response: HTTPResponse) -> Bool {
        guard response.status.code == 401, !isAccountURL(response.url) else { return false }
        statistics.recordChallenge()
        return true
    }

    func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
        let failures = session.failedSignIns
        let reason: AuthenticationChallenge.Reason = failures > 0 ? .wrongPassword
            : (session.user == nil ? .notSignedIn : .credentialsRejected)
        let challenge = AuthenticationChallenge(reason: reason, userName: session.lastName, failedAttempts: failures)
        guard let answer = await hooks.credentials(for: challenge) else {
            session.resetFailures()
            throw RefreshFailure.declined
        }
        var request = HTTPRequest(.put, "/account", headers: ["Accept": "application/json"],
                                  body: .form(["user[name]": answer.name, "user[password]": answer.password]))
        request.timeout = .seconds(30)
        let response: HTTPResponse
        do {
            response = try await context.send(request)
        } catch {
            throw RefreshFailure.signInFailed(error.description)
        }
        switch response.status.code {
        case 200..<300:
            guard let user = try? JSONDecoder().decode(User.self, from: response.body), let key = user.apiKey else {
                throw RefreshFailure.signInFailed("the sign-in answer holds no user with an API key")
            }
            session.signedIn(user, password: answer.password)
            statistics.recordReauthentication()
            hooks.didSignIn(user)
            return Credential(user: user.name, secret: key)
        case 401, 406:
            session.recordFailedSignIn(name: answer.name)
            throw RefreshFailure.wrongPassword
        default:
            throw RefreshFailure.signInFailed("the sign-in answered \(response.status)")
        }
    }

    func shouldRetryRefresh(after error: any Error, attempt: Int) async -> Bool {
        if error as? RefreshFailure == .wrongPassword, attempt < maxAttempts { return true }
        session.resetFailures()
        return false
    }

    private func isAccountURL(_ url: URL) -> Bool {
        url.absoluteString.hasPrefix(accountURL.absoluteString)
            && url.path.hasSuffix("/account")
    }
}
