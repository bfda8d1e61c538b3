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
        let dayMilliseconds: Int64 = 86_400_000
        var days = milliseconds / dayMilliseconds
        var rest = milliseconds % dayMilliseconds
        if rest < 0 {
            rest += dayMilliseconds
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let hour = rest / 3_600_000
        let minute = rest / 60_000 % 60
        let second = rest / 1_000 % 60
        let millis = rest % 1_000
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(hour, 2) + ":" + pad(minute, 2)
            + ":" + pad(second, 2) + "." + pad(millis, 3) + "Z"
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
