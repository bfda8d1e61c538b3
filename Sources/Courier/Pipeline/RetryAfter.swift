import Foundation
import Synchronization

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

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms.
enum HTTPDate {
    /// Built once: the cache parses dates on every freshness check. `DateFormatter` is not
    /// Sendable, so the formatters live behind a lock.
    private static let formatters = Mutex([
        "EEE, dd MMM yyyy HH:mm:ss 'GMT'",   // IMF-fixdate
        "EEEE, dd-MMM-yy HH:mm:ss 'GMT'",    // RFC 850
        "EEE MMM d HH:mm:ss yyyy",           // asctime
    ].map(makeFormatter))

    /// Parses an HTTP date, or returns `nil`.
    static func parse(_ text: String) -> Date? {
        let text = text.replacingOccurrences(of: "  ", with: " ")
        return formatters.withLock { formatters in
            formatters.lazy.compactMap { $0.date(from: text) }.first
        }
    }

    /// Formats a date as an IMF-fixdate.
    static func format(_ date: Date) -> String {
        formatters.withLock { $0[0].string(from: date) }
    }

    private static func makeFormatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }
}
