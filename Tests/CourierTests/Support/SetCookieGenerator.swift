import CourierTestServer
import Foundation

/// Random `Set-Cookie` fields for the cookie model tests, each with its meaning
/// (``ModelSetCookie``): odd names and values, duplicate attributes, `Domain` with and without a
/// leading dot (parents, public suffixes, IP addresses, foreign names), `Path` present, absent
/// and invalid, `Expires` in the date forms of RFC 6265 §5.1.1 and broken ones, `Max-Age`
/// positive, zero, negative and not a number, `Secure`, `HttpOnly`, `SameSite`.
struct SetCookieGenerator {
    /// Whether to leave out what cannot cross the wire (control characters, non-ASCII, huge values).
    var wireSafe = false

    /// Names, as written and as trimmed.
    static let names: [(String, String)] = [("a", "a"), ("b", "b"), ("sid", "sid"), ("Sid", "Sid"), (" a ", "a"), ("x y", "x y")]
    /// Values, as written and as trimmed.
    static let values: [(String, String)] = [
        ("1", "1"), ("2", "2"), ("", ""), ("two words", "two words"), ("\"quoted\"", "\"quoted\""), ("v=w", "v=w"),
        ("x,y=z", "x,y=z"), (" padded\t", "padded"), ("%41", "%41"),
    ]
    /// Values only the wire-free test writes.
    static let rawValues: [(String, String)] = [("é", "é"), ("a\tb", "a\tb")]
    /// `Domain` values.
    static let domains = ["example.test", ".example.test", "EXAMPLE.Test", "a.example.test", ".b.a.example.test", "test",
                          ".test", "other.test", "xample.test", "127.0.0.1", "0.0.1", "github.io", "", ".", "example.test."]
    /// `Path` values.
    static let paths = ["/", "/docs", "/docs/", "/docs/a", "docs", "", "/docsx", "/Docs", "/docs/a/b"]

    /// A field for a response at `now` (seconds since 1970).
    func make(now: Double, using random: inout SeededRandom) -> ModelSetCookie {
        switch Int.random(in: 0..<40, using: &random) {
        case 0: return ModelSetCookie(line: "novalue; Path=/", pair: nil, attributes: [])
        case 1: return ModelSetCookie(line: "=nameless; Path=/", pair: nil, attributes: [])
        case 2 where !wireSafe: return ModelSetCookie(line: "c=bell\u{07}; Path=/", pair: nil, attributes: [])
        case 3 where !wireSafe:
            let long = String(repeating: "v", count: Int.random(in: 4_090...4_100, using: &random))
            let fits = "big".utf8.count + long.utf8.count <= 4_096
            return ModelSetCookie(line: "big=\(long); Path=/", pair: fits ? ("big", long) : nil, attributes: [.path("/")])
        default: break
        }
        let name = Self.names.randomElement(using: &random)!
        let value = (wireSafe ? Self.values : Self.values + Self.rawValues).randomElement(using: &random)!
        var line = "\(name.0)=\(value.0)"
        var attributes: [ModelSetCookie.Attribute] = []
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            let (text, attribute) = makeAttribute(now: now, using: &random)
            line += [";", "; ", " ;  "].randomElement(using: &random)! + text
            attributes.append(attribute)
        }
        return ModelSetCookie(line: line, pair: (name.1, value.1), attributes: attributes)
    }

    /// One attribute: its text and meaning.
    private func makeAttribute(now: Double, using random: inout SeededRandom) -> (String, ModelSetCookie.Attribute) {
        func named(_ name: String, _ value: String) -> String {
            let spelled = [name, name.lowercased(), name.uppercased()].randomElement(using: &random)!
            return spelled + ["=", " = ", "="].randomElement(using: &random)! + value
        }
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<4:
            let (text, date) = Self.expires(now: now, using: &random)
            return (named("Expires", text), .expires(date))
        case 4..<8:
            let (text, seconds) = [("3600", 3_600), ("60", 60), ("86400", 86_400), ("0", 0), ("-1", -1), ("007", 7),
                                   ("abc", nil), ("", nil), ("+5", nil), ("1.5", nil), ("99999999999999999999", Int.max)]
                .randomElement(using: &random)!
            return (named("Max-Age", text), .maxAge(seconds))
        case 8..<12:
            let domain = Self.domains.randomElement(using: &random)!
            return (named("Domain", domain), .domain(domain))
        case 12..<15:
            let path = Self.paths.randomElement(using: &random)!
            return (named("Path", path), .path(path))
        case 15: return (["Secure", "secure", "SECURE"].randomElement(using: &random)!, .secure)
        case 16: return (["HttpOnly", "httponly"].randomElement(using: &random)!, .httpOnly)
        case 17:
            let value = ["Strict", "lax", "None", "bogus"].randomElement(using: &random)!
            return (named("SameSite", value), .sameSite(value))
        case 18 where !wireSafe:
            return (named("Path", "/" + String(repeating: "p", count: 1_024)), .ignored)
        default:
            return (["Priority=High", "Partitioned", "Comment=hi"].randomElement(using: &random)!, .ignored)
        }
    }

    /// An `Expires` value: a date some minutes to a year before or after `now`, in one of the
    /// forms of RFC 6265 §5.1.1, or text that is no date.
    static func expires(now: Double, using random: inout SeededRandom) -> (String, Double?) {
        let broken = ["tomorrow", "", "Wed, 30 Feb 2028 10:18:14 GMT", "Wed, 09 Jun 2028", "32 Jun 2028 10:00:00",
                      "09 Jun 1600 10:00:00", "09 Jun 2028 24:00:00", "Jun 2028 10:00:00"]
        if Int.random(in: 0..<5, using: &random) == 0 { return (broken.randomElement(using: &random)!, nil) }
        let offset = [60.0, 3_600, 86_400 * 3, 86_400 * 400].randomElement(using: &random)! * (Bool.random(using: &random) ? 1 : -1)
        let date = (now + offset).rounded(.down)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday],
                                            from: Date(timeIntervalSince1970: date))
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        let (year, month, day) = (parts.year!, months[parts.month! - 1], parts.day!)
        let weekday = parts.weekday! - 1
        func two(_ number: Int) -> String { number < 10 ? "0\(number)" : "\(number)" }
        let time = "\(two(parts.hour!)):\(two(parts.minute!)):\(two(parts.second!))"
        let text: String
        switch Int.random(in: 0..<7, using: &random) {
        case 0: text = "\(days[weekday]), \(two(day)) \(month) \(year) \(time) GMT"
        case 1: text = "\(longDays[weekday]), \(two(day))-\(month)-\(two(year % 100)) \(time) GMT"
        case 2: text = "\(days[weekday]) \(month) \(day < 10 ? " \(day)" : "\(day)") \(time) \(year)"
        case 3: text = "\(two(day)) \(month.lowercased()) \(year) \(time)"
        case 4: text = "\(two(day))-\(month.uppercased())-\(year) \(time) GMT"
        case 5: text = "\(day) \(month)ember \(year) \(parts.hour!):\(parts.minute!):\(parts.second!) UTC"
        default: text = "\(time) \(year) \(month) \(two(day))"
        }
        return (text, date)
    }
}
