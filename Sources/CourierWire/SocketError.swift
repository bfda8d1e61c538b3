#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An error from a socket system call or from name resolution.
///
/// Every failing operation in CourierWire reports one of these: the name of the
/// operation that failed (`"connect"`, `"accept4"`, `"getaddrinfo"`, ...), the
/// system error number and the system's text for it.
///
/// For `getaddrinfo` failures, ``errno`` holds the resolver's own `EAI_*` code
/// (negative on glibc) and ``message`` the text from `gai_strerror`; check
/// ``isResolutionFailure`` to tell them apart from `errno` values.
public struct SocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system call or step that failed, for example `"connect"`.
    public let operation: String
    /// The `errno` value (or the `EAI_*` code for `getaddrinfo`).
    public let errno: Int32
    /// The system's text for ``errno`` (`strerror` or `gai_strerror`).
    public let message: String
    /// Whether ``errno`` is an `EAI_*` resolver code rather than an `errno` value.
    public let isResolutionFailure: Bool

    /// Creates an error from an `errno` value.
    ///
    /// - Parameters:
    ///   - operation: The system call or step that failed.
    ///   - errno: The `errno` value.
    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
        self.message = SocketError.describe(errno: errno)
        self.isResolutionFailure = false
    }

    /// Creates an error with a custom message (no system error number, `errno` is 0).
    ///
    /// - Parameters:
    ///   - operation: The step that failed.
    ///   - message: What went wrong.
    public init(operation: String, message: String) {
        self.operation = operation
        self.errno = 0
        self.message = message
        self.isResolutionFailure = false
    }

    /// Creates an error from a `getaddrinfo` result code.
    ///
    /// - Parameters:
    ///   - resolverCode: The `EAI_*` code `getaddrinfo` returned. For `EAI_SYSTEM`
    ///     the current `errno` is reported instead.
    ///   - host: The name that was being resolved, added to the message.
    /// - Returns: The error.
    static func resolution(code resolverCode: Int32, host: String) -> SocketError {
        if resolverCode == EAI_SYSTEM {
            let saved = Glibc.errno
            return SocketError(operation: "getaddrinfo(\(host))", errno: saved)
        }
        let text = gai_strerror(resolverCode).map { String(cString: $0) } ?? "resolver error \(resolverCode)"
        return SocketError(operation: "getaddrinfo(\(host))", code: resolverCode, text: text)
    }

    private init(operation: String, code: Int32, text: String) {
        self.operation = operation
        self.errno = code
        self.message = text
        self.isResolutionFailure = true
    }

    /// Captures the calling thread's current `errno` for `operation`.
    ///
    /// - Parameter operation: The system call that just failed.
    /// - Returns: The error.
    static func current(_ operation: String) -> SocketError {
        SocketError(operation: operation, errno: Glibc.errno)
    }

    /// A readable summary: `"connect failed: Connection refused (errno 111)"`.
    public var description: String {
        if errno == 0 { return "\(operation) failed: \(message)" }
        let kind = isResolutionFailure ? "code" : "errno"
        return "\(operation) failed: \(message) (\(kind) \(errno))"
    }

    /// Whether the peer refused the connection (`ECONNREFUSED`).
    public var isConnectionRefused: Bool { !isResolutionFailure && errno == ECONNREFUSED }

    /// Whether the peer reset the connection (`ECONNRESET`).
    public var isConnectionReset: Bool { !isResolutionFailure && errno == ECONNRESET }

    /// Whether the connection broke while writing (`EPIPE`).
    public var isBrokenPipe: Bool { !isResolutionFailure && errno == EPIPE }

    private static func describe(errno: Int32) -> String {
        // glibc's strerror is thread-safe: known codes are static strings and unknown
        // ones are formatted into a thread-local buffer.
        guard let text = strerror(errno) else { return "error \(errno)" }
        return String(cString: text)
    }
}
