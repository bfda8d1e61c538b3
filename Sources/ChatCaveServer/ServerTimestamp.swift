import CourierHTTP1
import Foundation

/// Formats message timestamps the way the ChatCave contract writes them: ISO 8601 in UTC with
/// milliseconds, e.g. `2014-03-21T18:22:33.123Z`.
///
/// Timestamps are kept as whole milliseconds since 1970 (UTC), so formatting is exact and
/// needs neither a formatter object nor the C library.
enum ServerTimestamp {
    /// The current time in milliseconds since 1970-01-01T00:00:00Z.
    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1_000).rounded(.down))
    }

    /// Formats milliseconds since 1970 as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    /// - Parameter milliseconds: the instant.
    /// - Returns: the ISO 8601 text.
    static func format(milliseconds: Int64) -> String {
        CivilDate.iso8601(milliseconds: milliseconds)
    }
}
