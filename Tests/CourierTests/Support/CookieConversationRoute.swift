import CourierTestServer
import Foundation
import Synchronization

/// The route of the cookie conversation tests, on every path of a ``TestServer``: it records
/// the `Cookie` field of each request (``receipts``), answers with a `Set-Cookie` field for each
/// `set=<percent-encoded field>` parameter, and with a 302 to `to=<percent-encoded URL>` when
/// that parameter is given (200 otherwise).
final class CookieConversationRoute: Sendable {
    private let received = Mutex<[String]>([])

    /// Installs the route on `server`, for every path.
    func install(on server: TestServer) {
        server.route("/*") { [self] request in
            received.withLock { $0.append(request.value(for: "Cookie") ?? "<none>") }
            var headers: [(String, String)] = []
            for pair in request.query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, let value = String(parts[1]).removingPercentEncoding else { continue }
                switch parts[0] {
                case "set": headers.append(("Set-Cookie", value))
                case "to": headers.append(("Location", value))
                default: break
                }
            }
            let redirects = headers.contains { $0.0 == "Location" }
            return .response(status: redirects ? 302 : 200, headers: headers)
        }
    }

    /// The `Cookie` fields received since the last call (`<none>` for a request without one), in order.
    func takeReceipts() -> [String] {
        received.withLock { received in
            defer { received = [] }
            return received
        }
    }

    /// `text` percent-encoded for a query value: everything but letters, digits and `-._~`.
    static func encoded(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed)!
    }
}
