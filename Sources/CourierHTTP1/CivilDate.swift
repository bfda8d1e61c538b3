/// Dates of the proleptic Gregorian calendar as day counts from 1970-01-01, and the ISO 8601
/// millisecond timestamps built on them: the one home of this arithmetic for HTTP dates, cookie
/// dates and ChatCave's timestamps. No formatter object and no C library, so nothing to share
/// between threads, and exact for any year.
///
/// The conversions are Howard Hinnant's `days_from_civil` and `civil_from_days`
/// ("chrono-Compatible Low-Level Date Algorithms"): a year is split into 400-year eras of
/// 146,097 days, and months are counted from March so that February's leap day comes last.
public enum CivilDate {
    /// Days from 1970-01-01 to a date (negative before it).
    /// - Parameters:
    ///   - year: the year, e.g. 1994.
    ///   - month: the month, 1 to 12.
    ///   - day: the day of the month, 1 to 31 (not checked against the month's length).
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` days after 1970-01-01 (before it, when negative).
    public static func date(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
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

    /// An instant as ISO 8601 in UTC with milliseconds, `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    /// - Parameter milliseconds: milliseconds since 1970-01-01T00:00:00Z.
    public static func iso8601(milliseconds: Int64) -> String {
        let dayLength: Int64 = 86_400_000
        var days = milliseconds / dayLength
        var rest = milliseconds % dayLength
        if rest < 0 {
            rest += dayLength
            days -= 1
        }
        let (year, month, day) = date(fromDays: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(rest / 3_600_000, 2) + ":"
            + pad(rest / 60_000 % 60, 2) + ":" + pad(rest / 1_000 % 60, 2) + "." + pad(rest % 1_000, 3) + "Z"
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
