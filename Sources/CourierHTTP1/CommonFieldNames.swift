/// Well-known field names, returned as string literals so that parsing them allocates nothing
/// and skips UTF-8 validation. Only exact matches of the canonical spelling (`Content-Type`)
/// or the all-lowercase spelling (`content-type`) are interned, so wire case is preserved.
enum CommonFieldNames {
    /// The interned string for `bytes`, or `nil` when it is not a well-known name.
    static func lookup(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let first = bytes.first else { return nil }
        switch (bytes.count, first | 0x20) {
        case (3, 0x61): // a
            if matches(bytes, "Age") { return "Age" }
            if matches(bytes, "age") { return "age" }
            return nil
        case (4, 0x64): // d
            if matches(bytes, "Date") { return "Date" }
            if matches(bytes, "date") { return "date" }
            return nil
        case (4, 0x65): // e
            if matches(bytes, "ETag") { return "ETag" }
            if matches(bytes, "etag") { return "etag" }
            return nil
        case (4, 0x68): // h
            if matches(bytes, "Host") { return "Host" }
            if matches(bytes, "host") { return "host" }
            return nil
        case (4, 0x6C): // l
            if matches(bytes, "Link") { return "Link" }
            if matches(bytes, "link") { return "link" }
            return nil
        case (4, 0x76): // v
            if matches(bytes, "Vary") { return "Vary" }
            if matches(bytes, "vary") { return "vary" }
            return nil
        case (5, 0x61): // a
            if matches(bytes, "Allow") { return "Allow" }
            if matches(bytes, "allow") { return "allow" }
            return nil
        case (5, 0x72): // r
            if matches(bytes, "Range") { return "Range" }
            if matches(bytes, "range") { return "range" }
            return nil
        case (6, 0x61): // a
            if matches(bytes, "Accept") { return "Accept" }
            if matches(bytes, "accept") { return "accept" }
            return nil
        case (6, 0x63): // c
            if matches(bytes, "Cookie") { return "Cookie" }
            if matches(bytes, "cookie") { return "cookie" }
            return nil
        case (6, 0x65): // e
            if matches(bytes, "Expect") { return "Expect" }
            if matches(bytes, "expect") { return "expect" }
            return nil
        case (6, 0x6F): // o
            if matches(bytes, "Origin") { return "Origin" }
            if matches(bytes, "origin") { return "origin" }
            return nil
        case (6, 0x70): // p
            if matches(bytes, "Pragma") { return "Pragma" }
            if matches(bytes, "pragma") { return "pragma" }
            return nil
        case (6, 0x73): // s
            if matches(bytes, "Server") { return "Server" }
            if matches(bytes, "server") { return "server" }
            return nil
        case (7, 0x61): // a
            if matches(bytes, "Alt-Svc") { return "Alt-Svc" }
            if matches(bytes, "alt-svc") { return "alt-svc" }
            return nil
        case (7, 0x65): // e
            if matches(bytes, "Expires") { return "Expires" }
            if matches(bytes, "expires") { return "expires" }
            return nil
        case (7, 0x72): // r
            if matches(bytes, "Referer") { return "Referer" }
            if matches(bytes, "referer") { return "referer" }
            return nil
        case (7, 0x74): // t
            if matches(bytes, "Trailer") { return "Trailer" }
            if matches(bytes, "trailer") { return "trailer" }
            return nil
        case (7, 0x75): // u
            if matches(bytes, "Upgrade") { return "Upgrade" }
            if matches(bytes, "upgrade") { return "upgrade" }
            return nil
        case (8, 0x69): // i
            if matches(bytes, "If-Range") { return "If-Range" }
            if matches(bytes, "if-range") { return "if-range" }
            if matches(bytes, "If-Match") { return "If-Match" }
            if matches(bytes, "if-match") { return "if-match" }
            return nil
        case (8, 0x6C): // l
            if matches(bytes, "Location") { return "Location" }
            if matches(bytes, "location") { return "location" }
            return nil
        case (10, 0x63): // c
            if matches(bytes, "Connection") { return "Connection" }
            if matches(bytes, "connection") { return "connection" }
            return nil
        case (10, 0x6B): // k
            if matches(bytes, "Keep-Alive") { return "Keep-Alive" }
            if matches(bytes, "keep-alive") { return "keep-alive" }
            return nil
        case (10, 0x73): // s
            if matches(bytes, "Set-Cookie") { return "Set-Cookie" }
            if matches(bytes, "set-cookie") { return "set-cookie" }
            return nil
        case (10, 0x75): // u
            if matches(bytes, "User-Agent") { return "User-Agent" }
            if matches(bytes, "user-agent") { return "user-agent" }
            return nil
        case (11, 0x72): // r
            if matches(bytes, "Retry-After") { return "Retry-After" }
            if matches(bytes, "retry-after") { return "retry-after" }
            return nil
        case (12, 0x63): // c
            if matches(bytes, "Content-Type") { return "Content-Type" }
            if matches(bytes, "content-type") { return "content-type" }
            return nil
        case (12, 0x78): // x
            if matches(bytes, "X-Powered-By") { return "X-Powered-By" }
            if matches(bytes, "x-powered-by") { return "x-powered-by" }
            if matches(bytes, "X-Request-Id") { return "X-Request-Id" }
            if matches(bytes, "x-request-id") { return "x-request-id" }
            return nil
        case (13, 0x61): // a
            if matches(bytes, "Accept-Ranges") { return "Accept-Ranges" }
            if matches(bytes, "accept-ranges") { return "accept-ranges" }
            if matches(bytes, "Authorization") { return "Authorization" }
            if matches(bytes, "authorization") { return "authorization" }
            return nil
        case (13, 0x63): // c
            if matches(bytes, "Cache-Control") { return "Cache-Control" }
            if matches(bytes, "cache-control") { return "cache-control" }
            if matches(bytes, "Content-Range") { return "Content-Range" }
            if matches(bytes, "content-range") { return "content-range" }
            return nil
        case (13, 0x69): // i
            if matches(bytes, "If-None-Match") { return "If-None-Match" }
            if matches(bytes, "if-none-match") { return "if-none-match" }
            return nil
        case (13, 0x6C): // l
            if matches(bytes, "Last-Modified") { return "Last-Modified" }
            if matches(bytes, "last-modified") { return "last-modified" }
            return nil
        case (14, 0x63): // c
            if matches(bytes, "Content-Length") { return "Content-Length" }
            if matches(bytes, "content-length") { return "content-length" }
            return nil
        case (15, 0x61): // a
            if matches(bytes, "Accept-Encoding") { return "Accept-Encoding" }
            if matches(bytes, "accept-encoding") { return "accept-encoding" }
            if matches(bytes, "Accept-Language") { return "Accept-Language" }
            if matches(bytes, "accept-language") { return "accept-language" }
            return nil
        case (15, 0x78): // x
            if matches(bytes, "X-Frame-Options") { return "X-Frame-Options" }
            if matches(bytes, "x-frame-options") { return "x-frame-options" }
            return nil
        case (16, 0x63): // c
            if matches(bytes, "Content-Encoding") { return "Content-Encoding" }
            if matches(bytes, "content-encoding") { return "content-encoding" }
            if matches(bytes, "Content-Language") { return "Content-Language" }
            if matches(bytes, "content-language") { return "content-language" }
            if matches(bytes, "Content-Location") { return "Content-Location" }
            if matches(bytes, "content-location") { return "content-location" }
            return nil
        case (16, 0x77): // w
            if matches(bytes, "WWW-Authenticate") { return "WWW-Authenticate" }
            if matches(bytes, "www-authenticate") { return "www-authenticate" }
            return nil
        case (17, 0x69): // i
            if matches(bytes, "If-Modified-Since") { return "If-Modified-Since" }
            if matches(bytes, "if-modified-since") { return "if-modified-since" }
            return nil
        case (17, 0x74): // t
            if matches(bytes, "Transfer-Encoding") { return "Transfer-Encoding" }
            if matches(bytes, "transfer-encoding") { return "transfer-encoding" }
            return nil
        case (18, 0x70): // p
            if matches(bytes, "Proxy-Authenticate") { return "Proxy-Authenticate" }
            if matches(bytes, "proxy-authenticate") { return "proxy-authenticate" }
            return nil
        case (19, 0x63): // c
            if matches(bytes, "Content-Disposition") { return "Content-Disposition" }
            if matches(bytes, "content-disposition") { return "content-disposition" }
            return nil
        case (19, 0x70): // p
            if matches(bytes, "Proxy-Authorization") { return "Proxy-Authorization" }
            if matches(bytes, "proxy-authorization") { return "proxy-authorization" }
            return nil
        case (22, 0x78): // x
            if matches(bytes, "X-Content-Type-Options") { return "X-Content-Type-Options" }
            if matches(bytes, "x-content-type-options") { return "x-content-type-options" }
            return nil
        case (25, 0x73): // s
            if matches(bytes, "Strict-Transport-Security") { return "Strict-Transport-Security" }
            if matches(bytes, "strict-transport-security") { return "strict-transport-security" }
            return nil
        case (27, 0x61): // a
            if matches(bytes, "Access-Control-Allow-Origin") { return "Access-Control-Allow-Origin" }
            if matches(bytes, "access-control-allow-origin") { return "access-control-allow-origin" }
            return nil
        default:
            return nil
        }
    }

    /// Whether `bytes` equals `literal` exactly (same length already known).
    @inline(__always)
    private static func matches(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        let lit = UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count == lit.count else { return false }
        for i in 0..<lit.count where bytes[i] != lit[i] { return false }
        return true
    }
}
