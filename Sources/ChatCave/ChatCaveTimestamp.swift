import CourierHTTP1
import Foundation

/// Reads and writes the timestamps of the ChatCave API: ISO 8601 in UTC with milliseconds,
/// e.g. `2014-03-21T18:22:33.123Z`.
///
/// Written by hand (no formatter object, so nothing to share between threads) and exact to the
/// millisecond: a date is rounded to whole milliseconds, so that text → date → text gives the
/// same text back. Reading accepts a missing fraction, any number of fraction digits, and a
/// `Z` or `±hh:mm` offset.
enum ChatCaveTimestamp {
    /// A date rounded to the nearest millisecond.
    static func rounded(_ date: Date) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds(date)) / 1_000)
    }

    /// Formats a date as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    static func string(from date: Date) -> String {
        CivilDate.iso8601(milliseconds: milliseconds(date))
    }

    /// Parses an ISO 8601 timestamp; `nil` when it is not one.
    static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in start..<(start + count) {
                let byte = bytes[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard let year = number(0, 4), bytes[4] == UInt8(ascii: "-"), let month = number(5, 2), bytes[7] == UInt8(ascii: "-"),
              let day = number(8, 2), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              let hour = number(11, 2), bytes[13] == UInt8(ascii: ":"), let minute = number(14, 2),
              bytes[16] == UInt8(ascii: ":"), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var index = 19
        var millis: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if digits < 3 { millis = millis * 10 + Int64(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            var scale = digits
            while scale < 3 {
                millis *= 10
                scale += 1
            }
        }
        guard index < bytes.count else { return nil }
        var offset: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, let hours = number(index + 1, 2), bytes[index + 3] == UInt8(ascii: ":"),
                  let minutes = number(index + 4, 2), hours < 24, minutes < 60 else { return nil }
            offset = (hours * 60 + minutes) * 60_000 * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        let days = CivilDate.days(year: year, month: month, day: day)
        let total = days * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1_000 + millis - offset
        return Date(timeIntervalSince1970: Double(total) / 1_000)
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000).rounded()
        guard value.isFinite, abs(value) < 1e15 else { return 0 }
        return Int64(value)
    }
}
