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
        let millis = milliseconds(date)
        let dayLength: Int64 = 86_400_000
        var days = millis / dayLength
        var rest = millis % dayLength
        if rest < 0 {
            rest += dayLength
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(rest / 3_600_000, 2) + ":"
            + pad(rest / 60_000 % 60, 2) + ":" + pad(rest / 1_000 % 60, 2) + "." + pad(rest % 1_000, 3) + "Z"
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
        let days = daysFromCivil(year: year, month: month, day: day)
        let total = days * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1_000 + millis - offset
        return Date(timeIntervalSince1970: Double(total) / 1_000)
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000).rounded()
        guard value.isFinite, abs(value) < 1e15 else { return 0 }
        return Int64(value)
    }

    /// Howard Hinnant's `civil_from_days`.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Howard Hinnant's `days_from_civil`.
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
