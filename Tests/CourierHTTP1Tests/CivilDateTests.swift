import CourierHTTP1
import Foundation
import Testing

@Suite("CivilDate")
struct CivilDateTests {
    @Test("day counts agree with Foundation's Gregorian calendar from 1600 to 2400, both ways")
    func agreesWithFoundation() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        // Every 97th day over 800 years: all months, leap days and century rules are crossed.
        for days in stride(from: Int64(-135_140), through: 157_000, by: 97) {
            let date = Date(timeIntervalSince1970: Double(days) * 86_400)
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            let civil = CivilDate.date(fromDays: days)
            #expect(civil.year == Int64(parts.year!) && civil.month == Int64(parts.month!) && civil.day == Int64(parts.day!),
                    "day \(days)")
            #expect(CivilDate.days(year: civil.year, month: civil.month, day: civil.day) == days)
        }
    }

    @Test("known dates: the epoch, leap days, and the century rules")
    func knownDates() {
        #expect(CivilDate.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilDate.days(year: 2000, month: 2, day: 29) == 11_016)
        #expect(CivilDate.days(year: 1969, month: 12, day: 31) == -1)
        #expect(CivilDate.date(fromDays: 11_016) == (2000, 2, 29))
        #expect(CivilDate.date(fromDays: CivilDate.days(year: 2100, month: 3, day: 1) - 1) == (2100, 2, 28))  // 2100 is not leap
    }

    @Test("ISO 8601 with milliseconds, before and after the epoch")
    func iso8601() {
        #expect(CivilDate.iso8601(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(CivilDate.iso8601(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(CivilDate.iso8601(milliseconds: 1_395_426_153_123) == "2014-03-21T18:22:33.123Z")
    }
}
