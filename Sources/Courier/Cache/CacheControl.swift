import Foundation

/// The directives of a `Cache-Control` header (RFC 9111 §5.2).
struct CacheControl: Sendable, Equatable {
    var maxAge: Int?
    /// `s-maxage`: the freshness lifetime for a shared cache, which it uses instead of `max-age`.
    var sharedMaxAge: Int?
    var noStore = false
    var noCache = false
    var mustRevalidate = false
    /// `proxy-revalidate`: `must-revalidate` for shared caches only.
    var proxyRevalidate = false
    var isPublic = false
    var isPrivate = false

    /// Parses every `Cache-Control` field of the headers; unknown directives are ignored.
    init(_ headers: HTTPHeaders) {
        for field in headers.values(for: "Cache-Control") {
            for directive in field.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1)
                let name = parts.first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
                let value = parts.count > 1 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: " \"")) : nil
                switch name {
                case "max-age": if let seconds = value.flatMap({ Int($0) }), seconds >= 0 { maxAge = min(maxAge ?? .max, seconds) }
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "must-revalidate": mustRevalidate = true
                case "proxy-revalidate": proxyRevalidate = true
                case "public": isPublic = true
                case "private": isPrivate = true
                case "s-maxage": if let seconds = value.flatMap({ Int($0) }), seconds >= 0 { sharedMaxAge = min(sharedMaxAge ?? .max, seconds) }
                default: break
                }
            }
        }
    }

    /// Whether the response explicitly lets a cache answer requests that carried credentials with
    /// it (RFC 9111 §3.5): `public` or `must-revalidate`, and for a shared cache also `s-maxage`.
    func allowsStoringCredentialed(sharedCache: Bool) -> Bool {
        isPublic || mustRevalidate || (sharedCache && sharedMaxAge != nil)
    }
}
