extension NativeTransport {
    /// Which HTTP version a ``NativeTransport`` speaks to an origin.
    public enum HTTPVersionPolicy: Sendable, Equatable {
        /// Over `https`, ALPN decides: the transport offers `h2` then `http/1.1`, and speaks
        /// what the server picks (HTTP/1.1 when it picks nothing). Plain `http` is HTTP/1.1.
        case automatic
        /// HTTP/1.1 only: ALPN offers `http/1.1` alone.
        case http1Only
        /// HTTP/2 from the first byte: on `http`, cleartext HTTP/2 (h2c) by prior knowledge
        /// (RFC 9113 §3.3), which only a server that expects it understands; on `https`, ALPN
        /// offers `h2` alone, and a server that does not pick it fails the request: with
        /// ``HTTPConnectionError/tlsFailed`` when it refuses the handshake (nginx sends the
        /// `no_application_protocol` alert), with ``HTTPConnectionError/badResponse`` when it
        /// completes the handshake without ALPN. Plain `http` that a proxy forwards (an
        /// `http://` or `https://` proxy, without a tunnel) is still HTTP/1.1.
        case http2PriorKnowledge

        /// The ALPN protocol names offered over TLS, most preferred first.
        var applicationProtocols: [String] {
            switch self {
            case .automatic: ["h2", "http/1.1"]
            case .http1Only: ["http/1.1"]
            case .http2PriorKnowledge: ["h2"]
            }
        }
    }
}
