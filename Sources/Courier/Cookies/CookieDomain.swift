import Foundation

/// Hosts and domains as RFC 6265 compares them (§5.1.2 canonical host names, §5.1.3 domain
/// matching), and the public suffixes a cookie may not be set for.
enum CookieDomain {
    /// The request's host, lowercased, without a trailing dot; `nil` when the URL has none or
    /// the host is not ASCII (international names must come in their `xn--` form).
    static func canonicalHost(of url: URL) -> String? {
        guard var host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty, host.allSatisfy(\.isASCII) else {
            return nil
        }
        host = String(HostText.unbracketed(Substring(host)))
        if host.hasSuffix("."), host.count > 1 { host.removeLast() }
        return host
    }

    /// Whether `host` is an IP address (v4 dotted quad, or v6), which only ever matches itself.
    static func isIPAddress(_ host: String) -> Bool {
        if host.utf8.contains(UInt8(ascii: ":")) { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }

    /// RFC 6265 §5.1.3: `host` domain-matches `domain` when they are identical, or when `host`
    /// is a host name (not an IP address) that ends with `.` followed by `domain`.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        guard !domain.isEmpty, !isIPAddress(host), host.hasSuffix(domain) else { return false }
        return host.dropLast(domain.count).last == "."
    }

    /// The domains `host` domain-matches: itself, then, for a host name, each domain above it
    /// (`a.example.com` gives `a.example.com`, `example.com`, `com`).
    static func domains(containing host: String) -> [String] {
        guard !isIPAddress(host) else { return [host] }
        var result = [host]
        var rest = Substring(host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if !rest.isEmpty { result.append(String(rest)) }
        }
        return result
    }

    /// Whether `domain` is a public suffix under which anyone may register names, so that a
    /// cookie for it would go to unrelated sites: every single-label name (`com`, `uk`, `local`,
    /// …: all top-level domains), and the multi-label suffixes of ``multiLabelPublicSuffixes``.
    /// This is a small built-in subset of the Public Suffix List, not the whole list.
    static func isPublicSuffix(_ domain: String) -> Bool {
        !domain.contains(".") || multiLabelPublicSuffixes.contains(domain)
    }

    /// The multi-label public suffixes Courier knows: the common second-level registries of
    /// the United Kingdom, Australia, New Zealand, Japan, Brazil, China, India, South Africa,
    /// Korea, Mexico, Turkey, Taiwan, Singapore and Hong Kong, and the hosting platforms whose
    /// subdomains belong to different customers (GitHub Pages, Heroku, App Engine, Blogspot,
    /// CloudFront, Azure, Netlify, Vercel, Cloudflare Pages and Workers, S3).
    static let multiLabelPublicSuffixes: Set<String> = [
        "co.uk", "org.uk", "me.uk", "ltd.uk", "plc.uk", "net.uk", "ac.uk", "gov.uk", "nhs.uk", "sch.uk",
        "com.au", "net.au", "org.au", "edu.au", "gov.au", "asn.au", "id.au",
        "co.nz", "net.nz", "org.nz", "ac.nz", "govt.nz",
        "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp", "ad.jp", "ed.jp", "gr.jp", "lg.jp",
        "com.br", "net.br", "org.br", "gov.br", "edu.br",
        "com.cn", "net.cn", "org.cn", "gov.cn", "edu.cn",
        "co.in", "net.in", "org.in", "gov.in", "ac.in", "firm.in", "gen.in", "ind.in",
        "co.za", "org.za", "gov.za", "ac.za",
        "co.kr", "or.kr", "go.kr", "ac.kr", "ne.kr",
        "com.mx", "org.mx", "gob.mx", "edu.mx",
        "com.tr", "org.tr", "gov.tr", "edu.tr",
        "com.tw", "org.tw", "gov.tw", "edu.tw",
        "com.sg", "org.sg", "gov.sg", "edu.sg",
        "com.hk", "org.hk", "gov.hk", "edu.hk",
        "github.io", "herokuapp.com", "appspot.com", "blogspot.com", "cloudfront.net", "azurewebsites.net",
        "netlify.app", "vercel.app", "pages.dev", "workers.dev", "s3.amazonaws.com",
    ]
}

/// Paths as RFC 6265 compares them (§5.1.4).
enum CookiePath {
    /// The request URL's path, percent-encoded as it went on the wire; `/` when empty.
    static func requestPath(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        return path.isEmpty ? "/" : path
    }

    /// The default path of a cookie set by a response to `url`: the request path up to, not
    /// including, its last `/`; `/` when that leaves nothing.
    static func defaultPath(for url: URL) -> String {
        let path = requestPath(of: url)
        guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    /// RFC 6265 §5.1.4: `requestPath` path-matches `cookiePath` when they are identical, or
    /// `cookiePath` is a prefix of it that ends with `/` or is followed by `/` in it.
    static func matches(_ requestPath: String, _ cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if requestPath.count == cookiePath.count || cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).first == "/"
    }
}
