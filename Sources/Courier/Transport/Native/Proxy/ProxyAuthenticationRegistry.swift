import Foundation
import Synchronization

/// The proxy re-authentication queues of one ``NativeTransport``: one ``CredentialSession`` per
/// proxy (kind, host, port and TLS options; credentials aside), created on the first request
/// through it. The session is the origin queue's own, so holding, the single refresh, versions,
/// the refresh limit and cancellation behave exactly alike; a ``ProxyAuthenticatorBridge`` lets it
/// ask a ``ProxyAuthenticator``.
final class ProxyAuthenticationRegistry: Sendable {
    /// One proxy's queue and the challenge its last `407` carried.
    struct Entry: Sendable {
        let session: CredentialSession
        let challenges: ChallengeBox
    }

    /// The latest `Proxy-Authenticate` values of one proxy, for the next refresh.
    final class ChallengeBox: Sendable {
        let values = Mutex<[String]>([])
    }

    private let authenticator: any ProxyAuthenticator
    private let entries = Mutex<[Proxy: Entry]>([:])

    init(authenticator: any ProxyAuthenticator) {
        self.authenticator = authenticator
    }

    /// The queue of `proxy`, created on first use.
    func entry(for proxy: Proxy) -> Entry {
        let bare = proxy.with(credentials: nil)
        return entries.withLock { entries in
            if let known = entries[bare] { return known }
            let box = ChallengeBox()
            let bridge = ProxyAuthenticatorBridge(authenticator: authenticator, proxy: bare, challenges: box)
            let entry = Entry(session: CredentialSession(authenticator: bridge, matcher: .everything, store: nil, limit: RefreshLimit()),
                              challenges: box)
            entries[bare] = entry
            return entry
        }
    }
}

/// A ``ProxyAuthenticator`` seen as an ``Authenticator``, so that a ``CredentialSession`` can run
/// its refreshes. The credential is never applied to a request (the transport writes
/// `Proxy-Authorization` on the wire itself), and a `nil` answer gives up.
struct ProxyAuthenticatorBridge: Authenticator {
    /// The authenticator gave up (returned `nil`).
    struct Declined: Error {}

    let authenticator: any ProxyAuthenticator
    let proxy: Proxy
    let challenges: ProxyAuthenticationRegistry.ChallengeBox

    func apply(_ credential: Credential, to request: inout TransportRequest) {}

    func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
        let challenge = ProxyChallenge(proxy: proxy, challenges: challenges.values.withLock { $0 },
                                       refused: previous.map(ProxyCredentials.init))
        guard let fresh = try await authenticator.credentials(for: challenge) else { throw Declined() }
        return Credential(user: fresh.username, secret: fresh.password)
    }
}

extension ProxyCredentials {
    /// The username and password of a credential from the proxy queue.
    init(_ credential: Credential) {
        self.init(username: credential.user ?? "", password: credential.secret)
    }
}

extension Proxy {
    /// The same proxy with other credentials.
    func with(credentials: ProxyCredentials?) -> Proxy {
        Proxy(kind, host: host, port: port, credentials: credentials, tls: tls)
    }
}
