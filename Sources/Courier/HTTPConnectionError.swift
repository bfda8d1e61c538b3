/// The one error type of Courier: every failed request ends in exactly one of these.
///
/// It is a struct with a private code and static members, so new kinds can be added without
/// breaking anyone's `switch`. Compare kinds with `==` (details are ignored):
///
/// ```swift
/// catch let error as HTTPConnectionError where error == .timedOut { … }
/// ```
///
/// Every error has a ``description`` that says what happened in plain words, keeps the
/// ``underlying`` error it came from, and, for status and decoding failures, the ``response``.
public struct HTTPConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case invalidURL, invalidRequest, invalidBody
        case cannotResolveHost, cannotConnect, timedOut, connectionLost, staleConnection, cancelled
        case badResponse, headTooLarge, unacceptableStatus, bodyTooLarge, decodingFailed, decompressionFailed
        case untrustedCertificate, expiredCertificate, hostnameMismatch, pinMismatch, tlsFailed
        case clientCertificateRequired, clientCertificateRejected, clientKeyMismatch, clientKeyPassphraseIncorrect
        case deadlineExceeded, tooManyRedirects, redirectCycle, redirectRefused
        case notCached, authenticationFailed, transportFailed, unsupportedByTransport
        case bodyNotReplayable
        case proxyUnreachable, proxyAuthenticationRequired, proxyForbidden, proxyCannotReachOrigin, proxyRejected
        case proxyClosedConnection, proxyBadResponse
        case proxyTLSFailed, proxyAuthenticationFailed
        case unixSocketNotFound, unixSocketPermissionDenied, notAUnixSocket
        case checksumMismatch, rangeMismatch, cannotWriteFile
    }

    /// What only some errors carry, kept apart so that the error itself stays two words long:
    /// every `throws(HTTPConnectionError)` call reserves room for one in its caller's frame, and
    /// a request in flight holds dozens of those frames.
    private final class Specifics: Sendable {
        let detail: String?
        let underlying: (any Error)?
        let response: HTTPResponse?

        init(detail: String?, underlying: (any Error)?, response: HTTPResponse?) {
            self.detail = detail
            self.underlying = underlying
            self.response = response
        }
    }

    private let code: Code
    private let specifics: Specifics?

    /// Specific words about this occurrence, e.g. the host that refused the connection.
    public var detail: String? { specifics?.detail }
    /// The error this one wraps (a socket error, a decoder error, a `URLError`, …), if any.
    public var underlying: (any Error)? { specifics?.underlying }
    /// The response, for ``unacceptableStatus`` and ``decodingFailed``, and when a body was cut short.
    public var response: HTTPResponse? { specifics?.response }

    private init(_ code: Code, detail: String? = nil, underlying: (any Error)? = nil, response: HTTPResponse? = nil) {
        self.code = code
        let nothing = detail == nil && underlying == nil && response == nil
        self.specifics = nothing ? nil : Specifics(detail: detail, underlying: underlying, response: response)
    }

    /// A copy with specific detail, an underlying error and a response attached.
    public func with(detail: String? = nil, underlying: (any Error)? = nil, response: HTTPResponse? = nil) -> Self {
        Self(code, detail: detail ?? self.detail, underlying: underlying ?? self.underlying, response: response ?? self.response)
    }

    /// Two errors are equal when they are of the same kind; details are not compared.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    /// A short, stable name for the kind, e.g. `"timedOut"`.
    public var kindName: String { code.rawValue }

    /// The URL could not be formed from the base URL and the request's target.
    public static let invalidURL = Self(.invalidURL)
    /// The request cannot be sent as it is (an invalid method token or header).
    public static let invalidRequest = Self(.invalidRequest)
    /// The request body could not be encoded.
    public static let invalidBody = Self(.invalidBody)
    /// The host name could not be resolved.
    public static let cannotResolveHost = Self(.cannotResolveHost)
    /// No connection could be made: refused or unreachable (a connect that takes too long is ``timedOut``).
    public static let cannotConnect = Self(.cannotConnect)
    /// Nothing arrived for longer than the request's timeout.
    public static let timedOut = Self(.timedOut)
    /// The connection closed before the response was complete.
    public static let connectionLost = Self(.connectionLost)
    /// A pooled connection turned out to be closed by the server, and the request could not be re-sent safely.
    public static let staleConnection = Self(.staleConnection)
    /// The request was cancelled.
    public static let cancelled = Self(.cancelled)
    /// The server's response broke the HTTP protocol.
    public static let badResponse = Self(.badResponse)
    /// The response head was larger than the limit, or had too many fields.
    public static let headTooLarge = Self(.headTooLarge)
    /// The status was not acceptable to the connection's validation (by default, not 2xx); the response is attached.
    public static let unacceptableStatus = Self(.unacceptableStatus)
    /// The response body was larger than the request's maximum.
    public static let bodyTooLarge = Self(.bodyTooLarge)
    /// The body could not be decoded into the requested type; the response is attached.
    public static let decodingFailed = Self(.decodingFailed)
    /// The body's `Content-Encoding` could not be decoded, or it exceeded the decompression limits.
    public static let decompressionFailed = Self(.decompressionFailed)
    /// The server's certificate chain is not trusted.
    public static let untrustedCertificate = Self(.untrustedCertificate)
    /// The server's certificate has expired or is not yet valid.
    public static let expiredCertificate = Self(.expiredCertificate)
    /// The server's certificate is not valid for the host name.
    public static let hostnameMismatch = Self(.hostnameMismatch)
    /// The server's certificate matches none of the pinned certificates or keys.
    public static let pinMismatch = Self(.pinMismatch)
    /// The TLS handshake or session failed for another reason.
    public static let tlsFailed = Self(.tlsFailed)
    /// The server requires a client certificate and ``TLSOptions/clientIdentity`` is `nil`.
    public static let clientCertificateRequired = Self(.clientCertificateRequired)
    /// The server refused the client certificate of ``TLSOptions/clientIdentity`` (an unknown
    /// issuer, an expired or revoked certificate, or access denied).
    public static let clientCertificateRejected = Self(.clientCertificateRejected)
    /// The private key of a ``TLSOptions/ClientIdentity`` is not the key of its certificate.
    public static let clientKeyMismatch = Self(.clientKeyMismatch)
    /// The private key of a ``TLSOptions/ClientIdentity`` is encrypted and its passphrase is
    /// missing or wrong.
    public static let clientKeyPassphraseIncorrect = Self(.clientKeyPassphraseIncorrect)
    /// The whole-request deadline passed.
    public static let deadlineExceeded = Self(.deadlineExceeded)
    /// More redirects than the limit.
    public static let tooManyRedirects = Self(.tooManyRedirects)
    /// A redirect led back to a URL already visited.
    public static let redirectCycle = Self(.redirectCycle)
    /// A redirect was refused by policy (a downgrade to http, a hook, or an unusable `Location`).
    public static let redirectRefused = Self(.redirectRefused)
    /// The cache policy forbade the network and nothing was cached.
    public static let notCached = Self(.notCached)
    /// Authentication could not be completed.
    public static let authenticationFailed = Self(.authenticationFailed)
    /// The transport failed in a way no other kind describes.
    public static let transportFailed = Self(.transportFailed)
    /// The request had to be sent again (a retry, a 307/308 redirect, a `401` answered with a new
    /// credential) but its body is a stream that was already read and cannot be sent twice.
    public static let bodyNotReplayable = Self(.bodyNotReplayable)
    /// The transport cannot do what the request asks, such as ``URLSessionTransport`` with a
    /// streamed or multipart request body; the detail says what.
    public static let unsupportedByTransport = Self(.unsupportedByTransport)

    /// A download's bytes do not have the SHA-256 digest the caller expected; the file was deleted.
    public static let checksumMismatch = Self(.checksumMismatch)
    /// A resumed download's `206` answer covers other bytes than the ones asked for (its
    /// `Content-Range` is missing or does not start where the partial file ends), or a `206`
    /// came to a request that asked for no range; the partial file is kept.
    public static let rangeMismatch = Self(.rangeMismatch)
    /// A download could not create, write, sync or rename its file; the detail names the step
    /// and `underlying` holds the system error.
    public static let cannotWriteFile = Self(.cannotWriteFile)

    /// No connection could be made to the proxy (refused, unreachable, or its name did not
    /// resolve); the origin was never contacted.
    public static let proxyUnreachable = Self(.proxyUnreachable)
    /// The proxy wants credentials, or refused the ones given: an HTTP proxy answered `CONNECT`
    /// with `407`, or a SOCKS5 proxy accepted none of the offered methods or rejected the
    /// username and password (RFC 1929).
    public static let proxyAuthenticationRequired = Self(.proxyAuthenticationRequired)
    /// The proxy's policy forbids the destination: `CONNECT` answered `403`, or SOCKS5 reply
    /// `0x02` (connection not allowed by ruleset).
    public static let proxyForbidden = Self(.proxyForbidden)
    /// The proxy could not reach the origin: `CONNECT` answered `502`, `503` or `504`, or SOCKS5
    /// replied network or host unreachable, connection refused or TTL expired (`0x03`–`0x06`).
    public static let proxyCannotReachOrigin = Self(.proxyCannotReachOrigin)
    /// The proxy refused the tunnel for another reason: another non-2xx answer to `CONNECT`, or
    /// SOCKS5 reply `0x01` (general failure), `0x07` (command not supported) or `0x08` (address
    /// type not supported). The detail names the status or reply.
    public static let proxyRejected = Self(.proxyRejected)
    /// The proxy closed the connection before the tunnel was open (during `CONNECT` or the SOCKS5
    /// handshake).
    public static let proxyClosedConnection = Self(.proxyClosedConnection)
    /// The proxy's answer broke its protocol (a malformed `CONNECT` response, a SOCKS5 reply of
    /// the wrong version or length, bytes after the reply).
    public static let proxyBadResponse = Self(.proxyBadResponse)
    /// The TLS handshake with an `https://` proxy failed: its certificate is not trusted by the
    /// proxy's ``Proxy/tls`` options or does not match the proxy's name, or the handshake broke.
    /// The origin was never contacted; ``underlying`` holds the TLS error.
    public static let proxyTLSFailed = Self(.proxyTLSFailed)
    /// The proxy refused the credentials its ``ProxyAuthenticator`` had just supplied: a second
    /// `407` for the same request after a refresh. The request is not sent again.
    public static let proxyAuthenticationFailed = Self(.proxyAuthenticationFailed)

    /// The Unix domain socket a request was routed to (``NativeTransport/UnixSocketRoute``) does
    /// not exist (`ENOENT`, or a directory on its path is missing).
    public static let unixSocketNotFound = Self(.unixSocketNotFound)
    /// The process may not connect to the Unix domain socket (`EACCES`: the socket file or a
    /// directory on its path is not writable or searchable by it).
    public static let unixSocketPermissionDenied = Self(.unixSocketPermissionDenied)
    /// The path a request was routed to exists but is not a Unix domain socket (a regular file,
    /// a directory).
    public static let notAUnixSocket = Self(.notAUnixSocket)

    /// A `401`, `404`, … answer with the response attached.
    public static func unacceptableStatus(_ response: HTTPResponse) -> Self {
        Self(.unacceptableStatus, detail: nil, response: response)
    }

    /// Whether the failure is about a certificate: the server's (untrusted, expired, another
    /// host's, unpinned), or the client's own identity (required, rejected, a key that does not
    /// match or cannot be decrypted). Never worth retrying: the next attempt meets the same one.
    public var isCertificateFailure: Bool {
        [.untrustedCertificate, .expiredCertificate, .hostnameMismatch, .pinMismatch,
         .clientCertificateRequired, .clientCertificateRejected, .clientKeyMismatch,
         .clientKeyPassphraseIncorrect].contains(code)
    }

    /// A plain sentence: what happened, then the specifics.
    public var description: String {
        var text = summary
        if let detail, !detail.isEmpty { text += ": \(detail)" }
        if let response, code == .unacceptableStatus || code == .decodingFailed {
            text += " (\(response.status) from \(Redaction.url(response.url)))"
        }
        if let underlying { text += " [\(underlying)]" }
        return text
    }

    private var summary: String {
        switch code {
        case .invalidURL: "The URL is invalid"
        case .invalidRequest: "The request is invalid"
        case .invalidBody: "The request body could not be encoded"
        case .cannotResolveHost: "The host name could not be resolved"
        case .cannotConnect: "Could not connect to the server"
        case .timedOut: "The request timed out"
        case .connectionLost: "The connection was lost before the response was complete"
        case .staleConnection: "The pooled connection had been closed by the server"
        case .cancelled: "The request was cancelled"
        case .badResponse: "The server sent an invalid HTTP response"
        case .headTooLarge: "The response head exceeds the limit"
        case .unacceptableStatus: "The server answered with an unacceptable status"
        case .bodyTooLarge: "The response body exceeds the maximum size"
        case .decodingFailed: "The response body could not be decoded"
        case .decompressionFailed: "The response body could not be decompressed"
        case .untrustedCertificate: "The server's certificate is not trusted"
        case .expiredCertificate: "The server's certificate has expired or is not yet valid"
        case .hostnameMismatch: "The server's certificate does not match the host name"
        case .pinMismatch: "The server's certificate matches no pinned certificate or key"
        case .tlsFailed: "The secure connection failed"
        case .clientCertificateRequired: "The server requires a client certificate and none is configured"
        case .clientCertificateRejected: "The server rejected the client certificate"
        case .clientKeyMismatch: "The client private key does not match the client certificate"
        case .clientKeyPassphraseIncorrect: "The client private key's passphrase is missing or wrong"
        case .deadlineExceeded: "The request's deadline passed"
        case .tooManyRedirects: "Too many redirects"
        case .redirectCycle: "The redirects form a cycle"
        case .redirectRefused: "A redirect was refused"
        case .notCached: "The response is not cached and the cache policy forbids loading it"
        case .authenticationFailed: "Authentication failed"
        case .transportFailed: "The transport failed"
        case .unsupportedByTransport: "The transport does not support this"
        case .bodyNotReplayable: "The request body is a stream that was already sent and cannot be sent again"
        case .proxyUnreachable: "Could not connect to the proxy"
        case .proxyAuthenticationRequired: "The proxy requires authentication, or rejected the credentials"
        case .proxyForbidden: "The proxy forbids connecting to the destination"
        case .proxyCannotReachOrigin: "The proxy could not reach the server"
        case .proxyRejected: "The proxy refused to open a tunnel"
        case .proxyClosedConnection: "The proxy closed the connection before the tunnel was open"
        case .proxyBadResponse: "The proxy sent an invalid answer"
        case .proxyTLSFailed: "The secure connection to the proxy failed"
        case .proxyAuthenticationFailed: "The proxy refused the credentials its authenticator supplied"
        case .unixSocketNotFound: "The Unix domain socket does not exist"
        case .unixSocketPermissionDenied: "Permission to connect to the Unix domain socket was denied"
        case .notAUnixSocket: "The path is not a Unix domain socket"
        case .checksumMismatch: "The downloaded file does not have the expected SHA-256 digest"
        case .rangeMismatch: "The server answered a resumed download with another range than the one asked for"
        case .cannotWriteFile: "The downloaded file could not be written"
        }
    }
}
