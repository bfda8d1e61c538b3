import CourierTestSupport
import Foundation

/// One request of the durability conversation to a ChatCave server, sent on a fresh
/// ``RawHTTPClient`` connection from a given loopback address.
///
/// Bodies are JSON of the contract's nested shape (`{"message": {"text": …}}`), so any Unicode
/// text goes out exactly as the model holds it. ``send(port:)`` returns the response, or `nil`
/// when no answer arrived (the server was killed, the connection reset, a read timed out).
struct DurabilityRequest: Sendable {
    /// How the request proves who sends it.
    enum Credentials: Sendable {
        case none
        /// `X-Magic-Auth: <key>`.
        case key(String)
        /// `Authorization: Basic base64(name:password)`.
        case basic(name: String, password: String)
    }

    var method: String
    var path: String
    var credentials: Credentials = .none
    /// The body as nested JSON fields, e.g. `["message": ["text": "hi"]]`; empty for none.
    var fields: [String: [String: String]] = [:]
    /// The loopback address the connection comes from (sign-ups are limited per address).
    var address: String = "127.0.0.1"

    /// Sends the request on a new connection and reads its answer (at most `timeout` seconds per read).
    /// - Returns: the response, or `nil` when the connection failed before a whole answer arrived.
    func send(port: Int, timeout: Double = 10) -> RawHTTPClient.Response? {
        var headers: [(String, String)] = []
        switch credentials {
        case .none: break
        case .key(let key): headers.append(("X-Magic-Auth", key))
        case .basic(let name, let password): headers.append(("Authorization", "Basic " + Data("\(name):\(password)".utf8).base64EncodedString()))
        }
        var body: [UInt8] = []
        if !fields.isEmpty {
            headers.append(("Content-Type", "application/json"))
            body = Array((try? JSONSerialization.data(withJSONObject: fields)) ?? Data())
        }
        guard let client = try? RawHTTPClient(port: port, timeout: timeout, from: address) else { return nil }
        return try? client.exchange(method, path, headers: headers, body: body)
    }
}
