import CourierHTTP1
import Foundation

extension HTTP1ConnectionStateMachine {
    /// What the machine needs to know about one request, as plain values: the driver builds it
    /// from the exchange, so the machine never holds the exchange itself.
    struct Request {
        /// The method, e.g. `GET`; decides the body framing (`HEAD`) and names it in errors.
        var method: String
        /// The URL, copied into the response and its head.
        var url: URL
        /// Whether the request may be repeated on a fresh connection after a stale one.
        var isIdempotent: Bool
        /// Whether the caller asked for `Connection: close`: the connection is not reused.
        var asksClose: Bool
        /// Whether this is already the one re-send after a stale pooled connection.
        var isRetry: Bool
        /// The longest silence allowed, as the caller gave it (named in timeout errors).
        var timeout: Duration
        /// The largest (decoded) body accepted, in bytes.
        var maxBodySize: Int
        /// Whether the observer wants the body bytes as they arrive.
        var observesBody: Bool
        /// Whether the body is streamed: handed out as it arrives, never accumulated, with no
        /// size limit, and read only while the consumer wants more.
        var streamsBody = false
        /// Whether the request carries `Expect: 100-continue` and a body: the head goes first,
        /// and the body only once the server answers `100 Continue`, or after
        /// ``HTTP1ConnectionStateMachine/continueWait`` without an answer.
        var expectsContinue = false

        /// The timeout in nanoseconds, clamped so that adding it to a monotonic time never overflows.
        var timeoutNanoseconds: UInt64 { timeout.nativeNanoseconds }
    }

    /// The connection's fixed settings, as values.
    struct Configuration {
        /// The origin, e.g. `http://example.com:80`, named in error details.
        var origin: String
        /// Whether a TLS handshake follows the TCP connect (and the tunnel, if any).
        var usesTLS: Bool
        /// Whether a tunnel through a proxy (`CONNECT` or SOCKS5) is opened after the TCP connect.
        var tunnels: Bool = false
        /// How long connecting (and the handshake) may take, in nanoseconds.
        var connectTimeout: UInt64
        /// The parser limits.
        var limits: HTTP1Limits
        /// Whether `gzip` and `deflate` bodies are decoded.
        var decompression: Bool
        /// The most decoded bytes one body may expand to.
        var maxDecompressedBytes: Int
        /// The largest ratio of decoded to encoded bytes.
        var maxDecompressionRatio: Int
    }
}

extension HTTP1ConnectionStateMachine.Configuration {
    /// The configuration of a connection to `origin` with the transport's `settings`.
    init(origin: String, usesTLS: Bool, tunnels: Bool = false, settings: NativeSettings) {
        self.init(origin: origin, usesTLS: usesTLS, tunnels: tunnels, connectTimeout: settings.connectTimeout, limits: settings.limits,
                  decompression: settings.decompression, maxDecompressedBytes: settings.maxDecompressedBytes,
                  maxDecompressionRatio: settings.maxDecompressionRatio)
    }
}
