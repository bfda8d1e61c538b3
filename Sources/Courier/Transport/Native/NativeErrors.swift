import CourierHTTP1
import CourierTLS
import CourierWire
import Foundation

/// Turns the errors of the wire, HTTP/1.1 and TLS layers into Courier's one error type, keeping
/// the original as ``HTTPConnectionError/underlying``.
enum NativeErrors {
    /// A failed name lookup or connect (to the proxy, when there is one).
    static func connect(_ error: SocketError, key: NativePoolKey) -> HTTPConnectionError {
        if let proxy = key.proxy {
            return .proxyUnreachable.with(detail: "\(proxy) (for \(key.secure ? "https" : "http")://\(key.host):\(key.port)): \(error.message)",
                                          underlying: error)
        }
        if error.isResolutionFailure {
            return .cannotResolveHost.with(detail: "\(key.host): \(error.message)", underlying: error)
        }
        return .cannotConnect.with(detail: "\(key): \(error.message)", underlying: error)
    }

    /// A failed connect to the Unix domain socket at `path`: missing, forbidden, not a socket, or
    /// nothing listening on it.
    static func unixSocket(_ error: SocketError, path: String, key: NativePoolKey) -> HTTPConnectionError {
        let detail = "unix:\(path) (for \(key.secure ? "https" : "http")://\(key.host)): \(error.message)"
        switch error.errno {
        case ENOENT, ENOTDIR:
            return .unixSocketNotFound.with(detail: detail, underlying: error)
        case EACCES, EPERM:
            return .unixSocketPermissionDenied.with(detail: detail, underlying: error)
        case ECONNREFUSED:
            // Linux refuses a connect to a file that is not a socket, and to a socket nobody listens on.
            let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
            if let type, type != .typeSocket {
                return .notAUnixSocket.with(detail: "unix:\(path) is a \(Self.describe(type)), not a socket", underlying: error)
            }
            return .cannotConnect.with(detail: "nothing listens on \(detail)", underlying: error)
        case ENAMETOOLONG, EINVAL:
            return .invalidURL.with(detail: detail, underlying: error)
        default:
            return .cannotConnect.with(detail: detail, underlying: error)
        }
    }

    /// "regular file", "directory", … for a file type in an error's detail.
    private static func describe(_ type: FileAttributeType) -> String {
        switch type {
        case .typeRegular: "regular file"
        case .typeDirectory: "directory"
        case .typeSymbolicLink: "symbolic link"
        case .typeCharacterSpecial, .typeBlockSpecial: "device"
        default: "file that is not a socket"
        }
    }

    /// A malformed or oversized response, or a body that could not be decoded.
    static func http(_ error: HTTP1Error) -> HTTPConnectionError {
        if error == .headTooLarge || error == .tooManyFields {
            return .headTooLarge.with(detail: error.description, underlying: error)
        }
        if error == .decompressionFailed || error == .decompressionLimitExceeded {
            return .decompressionFailed.with(detail: error.description, underlying: error)
        }
        if error == .truncatedBody {
            return .connectionLost.with(detail: error.description, underlying: error)
        }
        return .badResponse.with(detail: error.description, underlying: error)
    }

    /// A failed TLS session with `proxy`: ``HTTPConnectionError/proxyTLSFailed``, naming it.
    static func proxyTLS(_ error: TLSError, proxy: Proxy) -> HTTPConnectionError {
        .proxyTLSFailed.with(detail: "TLS to \(proxy) failed: \(error)", underlying: error)
    }

    /// A failed TLS handshake or session.
    static func tls(_ error: TLSError) -> HTTPConnectionError {
        let kind: HTTPConnectionError
        if error == .untrustedCertificate || error == .invalidCertificate {
            kind = .untrustedCertificate
        } else if error == .expiredCertificate || error == .notYetValidCertificate {
            kind = .expiredCertificate
        } else if error == .hostnameMismatch {
            kind = .hostnameMismatch
        } else if error == .pinMismatch {
            kind = .pinMismatch
        } else if let clientKind = clientIdentityKinds.first(where: { $0.0 == error })?.1 {
            kind = clientKind
        } else {
            kind = .tlsFailed
        }
        return kind.with(detail: error.description, underlying: error)
    }

    /// The client-certificate errors of the TLS layer and Courier's kind for each.
    private static let clientIdentityKinds: [(TLSError, HTTPConnectionError)] = [
        (.clientCertificateRequired, .clientCertificateRequired),
        (.clientCertificateRejected, .clientCertificateRejected),
        (.clientKeyMismatch, .clientKeyMismatch),
        (.clientKeyPassphraseIncorrect, .clientKeyPassphraseIncorrect),
    ]

    /// A read or write failed on an established connection.
    static func io(_ error: SocketError) -> HTTPConnectionError {
        .connectionLost.with(detail: error.description, underlying: error)
    }

    /// The body passed the request's maximum size.
    static func bodyTooLarge(limit: Int, declared: Int? = nil) -> HTTPConnectionError {
        if let declared {
            return .bodyTooLarge.with(detail: "the declared length \(declared) exceeds the limit of \(limit) bytes")
        }
        return .bodyTooLarge.with(detail: "the body exceeds the limit of \(limit) bytes")
    }

    /// The transport was shut down before or while the request ran.
    static let shutDown = HTTPConnectionError.cancelled.with(detail: "the transport was shut down")
}
