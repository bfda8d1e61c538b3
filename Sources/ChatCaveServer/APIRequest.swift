/// A request to the ChatCave API, independent of the server core that received it.
struct APIRequest: Sendable {
    /// The method token, e.g. `"GET"`.
    var method: String
    /// The path, still percent-encoded, without the query.
    var path: String
    /// The raw query, without `?`.
    var query: String
    /// The header fields, in received order.
    var headers: [(name: String, value: String)]
    /// The body bytes.
    var body: [UInt8]
    /// The client's IP address bytes (4 for IPv4, 16 for IPv6), when known.
    var peerAddress: [UInt8]?

    /// Creates a request.
    init(method: String, path: String, query: String = "", headers: [(name: String, value: String)] = [], body: [UInt8] = [],
         peerAddress: [UInt8]? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.peerAddress = peerAddress
    }

    /// The first value of the header field `name` (ASCII case-insensitive), or `nil`.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The decoded value of the first query parameter named `name`, or `nil`.
    /// Malformed escapes make the parameter count as absent.
    func queryValue(_ name: String) -> String? {
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = try? FormDecoding.decodeComponent(parts[0]), key == name else { continue }
            return parts.count > 1 ? try? FormDecoding.decodeComponent(parts[1]) : ""
        }
        return nil
    }

    /// Whether the client prefers an HTML page to JSON (a browser without `application/json`).
    var prefersHTML: Bool {
        guard let accept = header("Accept")?.lowercased() else { return false }
        return accept.contains("text/html") && !accept.contains("json")
    }
}
