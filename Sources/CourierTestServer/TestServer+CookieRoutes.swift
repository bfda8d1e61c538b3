import Foundation

extension TestServer {
    /// The httpbin-like cookie routes:
    ///
    /// - `/cookies` (and any path below it not listed here) answers
    ///   `{"cookie": "<the request's Cookie field>", "path": "<path>"}`, `""` when it had none;
    /// - `/cookies/set?a=1&b=2` sets each pair with `Set-Cookie: a=1; Path=/`, and answers like `/cookies`;
    /// - `/cookies/delete?a&b` expires each named cookie (`Max-Age=0`, `Path=/`);
    /// - `/cookies/raw?set=<percent-encoded Set-Cookie value>` (repeatable) sends each value as
    ///   it is, so tests can send any attribute.
    static func cookiesReply(_ request: Request) -> Reply {
        let pairs = request.query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).removingPercentEncoding ?? String(text) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
        var setCookies: [(String, String)] = []
        switch request.path {
        case "/cookies/set":
            setCookies = pairs.map { ("Set-Cookie", "\($0.0)=\($0.1); Path=/") }
        case "/cookies/delete":
            setCookies = pairs.map { ("Set-Cookie", "\($0.0)=; Max-Age=0; Path=/") }
        case "/cookies/raw":
            setCookies = pairs.filter { $0.0 == "set" }.map { ("Set-Cookie", $0.1) }
        default:
            break
        }
        var json = JSONText()
        json.add("cookie", request.value(for: "Cookie") ?? "")
        json.add("path", request.path)
        return .response(status: 200, headers: [("Content-Type", "application/json")] + setCookies, body: Data(json.text.utf8))
    }

    /// `/redirect-to?url=<percent-encoded URL>&status=<code>`: a redirect (302 unless `status`
    /// names another 3xx code) to `url`, which may be on another server; like `/cookies/set`, it
    /// first sets the cookies of any `set=<name>=<value>` parameters (`Path=/`).
    static func redirectTo(_ request: Request) -> Reply {
        guard let target = request.queryValue("url")?.removingPercentEncoding, !target.isEmpty else {
            return badRequest("redirect-to needs url=<percent-encoded URL>")
        }
        let status = request.queryInt("status").flatMap { (300...399).contains($0) ? $0 : nil } ?? 302
        var headers = [("Location", target)]
        for pair in request.query.split(separator: "&") where pair.hasPrefix("set=") {
            if let cookie = String(pair.dropFirst(4)).removingPercentEncoding { headers.append(("Set-Cookie", "\(cookie); Path=/")) }
        }
        return .response(status: status, headers: headers)
    }
}
