import Foundation

/// The origin of an http(s) URL (RFC 6454): its scheme, host and effective port.
///
/// Redirects, default headers and authenticators compare origins to decide whether a credential
/// may go to a URL. Two URLs share an origin when all three parts are equal; scheme and host are
/// compared without regard to case, and a missing port counts as 80 for http and 443 for https.
struct URLOrigin: Hashable, Sendable {
    /// The lowercased scheme.
    let scheme: String
    /// The lowercased host.
    let host: String
    /// The port, explicit or implied by the scheme.
    let port: Int

    /// The origin of `url`, or `nil` when it has no scheme or host.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    /// Whether `a` and `b` have the same origin; URLs without one never do.
    static func same(_ a: URL, _ b: URL) -> Bool {
        guard let origin = URLOrigin(a) else { return false }
        return origin == URLOrigin(b)
    }
}
