import Foundation

/// The directives of a `Cache-Control` header (RFC 9111 §5.2), as a private cache reads them.
struct CacheControl: Sendable, Equatable {
    var maxAge: Int?
    var noStore = false
    var noCache = false
    var mustRevalidate = false
    var isPublic = false
    var isPrivate = false
    var hasSharedMaxAge = false

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
                case "must-revalidate", "proxy-revalidate": mustRevalidate = true
                case "public": isPublic = true
                case "private": isPrivate = true
                case "s-maxage": hasSharedMaxAge = true  // ignored for freshness: this is a private cache
                default: break
                }
            }
        }
    }
}
