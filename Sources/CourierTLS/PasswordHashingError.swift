/// An error from ``PasswordHashing``.
///
/// A struct with a private code and static members; `==` compares the kind.
public struct PasswordHashingError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case invalidIterations
        case invalidPassword
        case randomnessUnavailable
        case derivationFailed
    }

    private let code: Code

    /// Details from OpenSSL or about the rejected input; empty on the static members.
    public let detail: String

    private init(_ code: Code, detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// The iteration count is outside ``PasswordHashing/allowedIterations``.
    public static let invalidIterations = PasswordHashingError(.invalidIterations)
    /// The password is longer than ``PasswordHashing/maximumPasswordLength`` bytes.
    public static let invalidPassword = PasswordHashingError(.invalidPassword)
    /// OpenSSL's random generator (`RAND_bytes`) could not produce a salt.
    public static let randomnessUnavailable = PasswordHashingError(.randomnessUnavailable)
    /// OpenSSL's PBKDF2 (`PKCS5_PBKDF2_HMAC`) failed.
    public static let derivationFailed = PasswordHashingError(.derivationFailed)

    /// Returns this kind of error with a detail message.
    ///
    /// - Parameter detail: the detail text.
    /// - Returns: an error that compares equal to `self`.
    func with(detail: String) -> PasswordHashingError {
        PasswordHashingError(code, detail: detail)
    }

    /// A one-line summary of the kind, followed by the detail when there is one.
    public var description: String {
        let summary = switch code {
        case .invalidIterations: "Invalid PBKDF2 iteration count"
        case .invalidPassword: "Password too long"
        case .randomnessUnavailable: "No random bytes available for the salt"
        case .derivationFailed: "PBKDF2 key derivation failed"
        }
        return detail.isEmpty ? summary : "\(summary): \(detail)"
    }

    /// Compares the kinds of two errors; ``detail`` is ignored.
    ///
    /// - Parameters:
    ///   - lhs: an error.
    ///   - rhs: another error.
    /// - Returns: `true` if both are the same kind of error.
    public static func == (lhs: PasswordHashingError, rhs: PasswordHashingError) -> Bool {
        lhs.code == rhs.code
    }
}
