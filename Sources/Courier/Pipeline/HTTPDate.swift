import CourierHTTP1
import Foundation
import Synchronization

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms.
enum HTTPDate {
    /// The obsolete forms, read by `DateFormatter`. Built once; `DateFormatter` is not Sendable,
    /// so they live behind a lock.
    private static let formatters = Mutex([
        "EEE, dd MMM yyyy HH:mm:ss 'GMT'",   // IMF-fixdate
        "EEEE, dd-MMM-yy HH:mm:ss 'GMT'",    // RFC 850
        "EEE MMM d HH:mm:ss yyyy",           // asctime
    ].map(makeFormatter))

    private static let months: [[UInt8]] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map { Array($0.utf8) }

    /// Parses an HTTP date, or returns `nil`. IMF-fixdate, the form every current server sends
    /// and the cache reads on every freshness check, is read directly; the obsolete forms go
    /// through `DateFormatter`, about a hundred times slower.
    static func parse(_ text: String) -> Date? {
        if let date = parseFixdate(Array(text.utf8)) { return date }
        let text = text.replacingOccurrences(of: "  ", with: " ")
        return formatters.withLock { formatters in
            formatters.lazy.compactMap { $0.date(from: text) }.first
        }
    }

    /// Formats a date as an IMF-fixdate.
    static func format(_ date: Date) -> String {
        formatters.withLock { $0[0].string(from: date) }
    }

    /// Reads `Sun, 06 Nov 1994 08:49:37 GMT` exactly, or returns `nil`.
    static func parseFixdate(_ bytes: [UInt8]) -> Date? {
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20,
              bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"),
              Array(bytes[25...]) == Array(" GMT".utf8),
              let month = months.firstIndex(of: Array(bytes[8..<11])),
              let day = number(bytes[5..<7]), let year = number(bytes[12..<16]),
              let hour = number(bytes[17..<19]), let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
              (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        let days = daysSinceEpoch(year: year, month: month + 1, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The decimal value of ASCII digits, or `nil` when one is not a digit.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (``CivilDate``).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        Int(CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day)))
    }

    private static func makeFormatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }
}
