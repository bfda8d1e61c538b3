/// An error from a TLS context or session.
///
/// `TLSError` is a struct with a private code and static members rather than an
/// enum, so that new kinds can be added without breaking callers' `switch`
/// statements. Compare with `==`, which compares the *kind* only:
///
/// ```swift
/// catch let error as TLSError where error == .expiredCertificate { ... }
/// ```
///
/// Every thrown error carries a ``detail`` with OpenSSL's own words: the
/// certificate verification result (`X509_verify_cert_error_string`) and the
/// contents of OpenSSL's error queue. Neither ever contains key material or
/// application data.
public struct TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case untrustedCertificate
        case expiredCertificate
        case notYetValidCertificate
        case invalidCertificate
        case hostnameMismatch
        case pinMismatch
        case handshakeFailed
        case protocolVersionUnsupported
        case invalidConfiguration
        case protocolError
        case uncleanShutdown
        case invalidState
        case internalError
        case clientCertificateRequired
        case clientCertificateRejected
        case clientKeyMismatch
        case clientKeyPassphraseIncorrect
    }

    private let code: Code

    /// What went wrong in detail: OpenSSL's verification result and error queue,
    /// or the reason Courier rejected the input. Empty on the static members.
    public let detail: String

    /// The raw OpenSSL certificate verification result (`X509_V_ERR_*`) when
    /// the error came from chain or host name verification; otherwise `nil`.
    public let verifyResult: Int?

    private init(_ code: Code, detail: String = "", verifyResult: Int? = nil) {
        self.code = code
        self.detail = detail
        self.verifyResult = verifyResult
    }

    /// The certificate chain does not lead to a trusted root: an unknown or
    /// self-signed issuer, or a self-signed leaf.
    public static let untrustedCertificate = TLSError(.untrustedCertificate)
    /// A certificate in the chain has expired.
    public static let expiredCertificate = TLSError(.expiredCertificate)
    /// A certificate in the chain is not valid yet (its notBefore lies in the future).
    public static let notYetValidCertificate = TLSError(.notYetValidCertificate)
    /// Chain verification failed for another reason: a bad signature, a CA
    /// certificate that may not sign, a wrong key usage, a weak key, ...
    public static let invalidCertificate = TLSError(.invalidCertificate)
    /// The certificate does not name the server's host name or IP address.
    public static let hostnameMismatch = TLSError(.hostnameMismatch)
    /// None of the configured pins matches the server's leaf certificate.
    public static let pinMismatch = TLSError(.pinMismatch)
    /// The handshake failed for a reason other than certificate verification
    /// (no common cipher, a fatal alert from the server, a peer that does not
    /// speak TLS, or a connection closed during the handshake).
    public static let handshakeFailed = TLSError(.handshakeFailed)
    /// The server does not support any protocol version that the configuration allows.
    public static let protocolVersionUnsupported = TLSError(.protocolVersionUnsupported)
    /// The configuration cannot be used: an unreadable PEM bundle, an invalid
    /// ALPN protocol name, an empty or malformed server name.
    public static let invalidConfiguration = TLSError(.invalidConfiguration)
    /// The established connection failed: corrupt records or a fatal alert from the peer.
    public static let protocolError = TLSError(.protocolError)
    /// The peer closed the connection without sending close_notify, so the data
    /// received may be truncated. Whether that matters depends on the protocol
    /// above (an HTTP body with a known length is complete; a close-delimited one is not).
    public static let uncleanShutdown = TLSError(.uncleanShutdown)
    /// The call is not allowed in the session's current state (for example
    /// writing before the handshake completed, or after `close()`).
    public static let invalidState = TLSError(.invalidState)
    /// OpenSSL failed unexpectedly (typically an allocation failure).
    public static let internalError = TLSError(.internalError)
    /// The server asked for a client certificate and the configuration has none
    /// (see ``TLSConfiguration/clientIdentity``): it ended the handshake with a
    /// `certificate_required` alert (TLS 1.3) or with a fatal alert after asking.
    public static let clientCertificateRequired = TLSError(.clientCertificateRequired)
    /// The server refused the client certificate that was sent: it answered it
    /// with a certificate alert (`bad_certificate`, `unknown_ca`,
    /// `certificate_expired`, `access_denied`, ...). Under TLS 1.3 the alert
    /// arrives after the client finished its handshake, so the error surfaces on
    /// the first read.
    public static let clientCertificateRejected = TLSError(.clientCertificateRejected)
    /// The client private key does not belong to the client certificate (the
    /// first certificate of the chain). Found when the identity is loaded.
    public static let clientKeyMismatch = TLSError(.clientKeyMismatch)
    /// The client private key is encrypted and the passphrase is missing or
    /// does not decrypt it. Found when the identity is loaded.
    public static let clientKeyPassphraseIncorrect = TLSError(.clientKeyPassphraseIncorrect)

    /// Returns this kind of error with a detail message and verification result.
    ///
    /// - Parameters:
    ///   - detail: the detail text.
    ///   - verifyResult: the OpenSSL verification result, if any. Default: `nil`.
    /// - Returns: an error that compares equal to `self`.
    func with(detail: String, verifyResult: Int? = nil) -> TLSError {
        TLSError(code, detail: detail, verifyResult: verifyResult)
    }

    /// Whether the server's certificate was rejected (chain, dates, name or pin).
    ///
    /// Such failures are not worth retrying: the next attempt meets the same
    /// certificate.
    public var isCertificateError: Bool {
        switch code {
        case .untrustedCertificate, .expiredCertificate, .notYetValidCertificate,
             .invalidCertificate, .hostnameMismatch, .pinMismatch:
            true
        default:
            false
        }
    }

    /// A one-line summary of the kind, followed by the detail when there is one.
    public var description: String {
        detail.isEmpty ? summary : "\(summary): \(detail)"
    }

    private var summary: String {
        switch code {
        case .untrustedCertificate: "TLS certificate is not trusted"
        case .expiredCertificate: "TLS certificate has expired"
        case .notYetValidCertificate: "TLS certificate is not valid yet"
        case .invalidCertificate: "TLS certificate is invalid"
        case .hostnameMismatch: "TLS certificate does not match the server name"
        case .pinMismatch: "TLS certificate does not match any pin"
        case .handshakeFailed: "TLS handshake failed"
        case .protocolVersionUnsupported: "TLS protocol version not supported by the server"
        case .invalidConfiguration: "Invalid TLS configuration"
        case .protocolError: "TLS connection failed"
        case .uncleanShutdown: "TLS connection closed without close_notify"
        case .invalidState: "TLS session is not in a state that allows this call"
        case .internalError: "TLS internal error"
        case .clientCertificateRequired: "TLS server requires a client certificate and none is configured"
        case .clientCertificateRejected: "TLS server rejected the client certificate"
        case .clientKeyMismatch: "TLS client private key does not match the client certificate"
        case .clientKeyPassphraseIncorrect: "TLS client private key passphrase is missing or wrong"
        }
    }

    /// Compares the kinds of two errors; ``detail`` and ``verifyResult`` are ignored.
    ///
    /// - Parameters:
    ///   - lhs: an error.
    ///   - rhs: another error.
    /// - Returns: `true` if both are the same kind of error.
    public static func == (lhs: TLSError, rhs: TLSError) -> Bool {
        lhs.code == rhs.code
    }
}
