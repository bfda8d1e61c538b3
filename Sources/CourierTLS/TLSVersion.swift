import COpenSSL

/// A TLS protocol version that Courier can negotiate.
///
/// Versions older than TLS 1.2 are not offered at all: they are insecure and
/// OpenSSL 3 disables them at its default security level anyway.
public enum TLSVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// TLS 1.2 (RFC 5246).
    case tls1_2
    /// TLS 1.3 (RFC 8446).
    case tls1_3

    /// The version in OpenSSL's spelling, e.g. `"TLSv1.3"`.
    public var description: String {
        switch self {
        case .tls1_2: "TLSv1.2"
        case .tls1_3: "TLSv1.3"
        }
    }

    /// OpenSSL's protocol constant (`TLS1_2_VERSION`, `TLS1_3_VERSION`).
    var openSSLValue: Int32 {
        switch self {
        case .tls1_2: TLS1_2_VERSION
        case .tls1_3: TLS1_3_VERSION
        }
    }

    /// Maps an OpenSSL protocol constant back to a version.
    ///
    /// - Parameter value: the result of `SSL_version`.
    /// - Returns: the version, or `nil` for anything other than TLS 1.2 / 1.3.
    init?(openSSLValue value: Int32) {
        switch value {
        case TLS1_2_VERSION: self = .tls1_2
        case TLS1_3_VERSION: self = .tls1_3
        default: return nil
        }
    }

    /// Orders versions from oldest to newest.
    ///
    /// - Parameters:
    ///   - lhs: a version.
    ///   - rhs: another version.
    /// - Returns: `true` if `lhs` is older than `rhs`.
    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool {
        lhs.openSSLValue < rhs.openSSLValue
    }
}
