import Foundation

/// Whether and how redirects (301, 302, 303, 307, 308) are followed.
///
/// Following rewrites each hop the way browsers and RFC 9110 do: 303 becomes GET, 301 and 302
/// turn POST into GET, and 307 and 308 keep the method and the body. When a hop crosses to
/// another origin, every field that carries a credential is dropped: `Authorization`, `Cookie`,
/// `Proxy-Authorization`, every name ``HTTPHeaders/isSensitive(_:)`` flags, the fields an
/// ``Authenticator`` applied and the connection's default headers
/// (``TransportRequest/isCredential(_:)``). A hop from https to http is refused unless allowed. A chain longer than
/// the limit fails with ``HTTPConnectionError/tooManyRedirects``, and a chain that comes back to a
/// request already made (the same method and URL; a fragment, the case of scheme and host and a
/// written default port make no difference) fails with ``HTTPConnectionError/redirectCycle``.
///
/// These rules shape the request a hop proposes (``RedirectHop/request``). A request that a hook
/// or the delegate returns instead (``RedirectAction/followWith(_:)``) is sent as it is returned,
/// checked only for a stream body already sent and for a cycle: whoever changes the URL decides
/// which credentials go with it.
public struct RedirectPolicy: Sendable {
    /// The most redirects followed for one request.
    public let limit: Int
    /// Whether a redirect from https to http is followed; `false` by default.
    public let allowsInsecureDowngrade: Bool
    let hook: (@Sendable (RedirectHop) -> RedirectAction)?

    /// Follows up to 10 redirects. The default.
    public static let follow = RedirectPolicy.follow()

    /// Does not follow redirects: a 3xx response is the request's response.
    public static let doNotFollow = RedirectPolicy(limit: 0, allowsInsecureDowngrade: false, hook: nil)

    /// Follows redirects.
    /// - Parameters:
    ///   - limit: the most redirects for one request; 10 by default.
    ///   - allowingInsecureDowngrade: whether https → http hops are followed; `false` by default.
    ///   - hook: decides each hop (follow, follow a changed request, stop, or refuse); `nil` by default.
    public static func follow(limit: Int = 10, allowingInsecureDowngrade: Bool = false,
                              hook: (@Sendable (RedirectHop) -> RedirectAction)? = nil) -> RedirectPolicy {
        RedirectPolicy(limit: max(0, limit), allowsInsecureDowngrade: allowingInsecureDowngrade, hook: hook)
    }

    /// Follows up to 10 redirects within the request's origin (scheme, host and port); a hop to
    /// another origin stops, and that redirect response becomes the request's response. For
    /// requests whose body holds a secret, such as a sign-in form: the body never reaches another
    /// origin. Courier sends the requests of ``AuthenticationContext/send(_:)`` this way.
    public static let sameOriginOnly = RedirectPolicy.follow { hop in hop.crossesOrigin ? .stop : .follow }

    /// What decides this policy, as a value two policies can be compared by.
    struct Comparable: Hashable, Sendable {
        let limit: Int
        let allowsInsecureDowngrade: Bool
    }

    /// This policy as a ``Comparable``; `nil` when a hook decides each hop (a closure cannot be
    /// compared).
    var comparable: Comparable? {
        hook == nil ? Comparable(limit: limit, allowsInsecureDowngrade: allowsInsecureDowngrade) : nil
    }
}

/// One redirect about to be followed.
public struct RedirectHop: Sendable {
    /// The redirect response.
    public let response: HTTPResponse
    /// The request about to be sent to the new location, already rewritten by the rules.
    public let request: TransportRequest
    /// How many redirects this request has followed before this one.
    public let count: Int
    /// Whether the hop leaves the origin (scheme, host, port) of the previous request.
    public let crossesOrigin: Bool
}

/// The decision for one redirect.
public enum RedirectAction: Sendable {
    /// Follow with the rewritten request.
    case follow
    /// Follow with this request instead.
    case followWith(TransportRequest)
    /// Stop: the redirect response becomes the request's response.
    case stop
    /// Fail the request with ``HTTPConnectionError/redirectRefused``.
    case refuse
}
