import Foundation

/// Reads a `Retry-After` header (RFC 9110 §10.2.3): delta-seconds or an HTTP date.
enum RetryAfter {
    /// The wait the header asks for, or `nil` when it is absent or unreadable.
    /// A date in the past asks for no wait.
    static func delay(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard let seconds = Int(value.prefix(9)) else { return nil }
            return .seconds(seconds)
        }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now)))
    }
}
