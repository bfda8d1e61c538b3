/// Percent-encoding for URL queries and form bodies (RFC 3986 and the WHATWG form rules).
enum URLEncoding {
    /// Percent-encodes everything but the unreserved set `A–Z a–z 0–9 - . _ ~`.
    ///
    /// Space becomes `%20`; `+`, `&`, `=`, `/`, `?`, `#`, brackets and non-ASCII (as UTF-8)
    /// are all encoded, so a value can never break the query's structure.
    static func queryComponent(_ string: String) -> String {
        encode(string, spaceAsPlus: false)
    }

    /// Encodes one key or value of an `application/x-www-form-urlencoded` body: like
    /// ``queryComponent(_:)`` but with space as `+`.
    static func formComponent(_ string: String) -> String {
        encode(string, spaceAsPlus: true)
    }

    /// Encodes ordered query items as `a=1&b=x%20y`.
    static func query(_ items: [HTTPRequest.QueryItem]) -> String {
        items.map { item in
            let name = queryComponent(item.name)
            guard let value = item.value else { return name }
            return name + "=" + queryComponent(value)
        }.joined(separator: "&")
    }

    /// Encodes ordered pairs as a form body: `user%5Bname%5D=alice&note=a+b`.
    static func formEncoded(_ pairs: [(String, String)]) -> String {
        pairs.map { formComponent($0.0) + "=" + formComponent($0.1) }.joined(separator: "&")
    }

    /// Decodes a percent-encoded component; with `plusAsSpace`, `+` becomes a space.
    /// Malformed escapes are kept literally.
    static func decode(_ string: String, plusAsSpace: Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count)
        var input = Array(string.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "+"), plusAsSpace {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), input.count >= 2,
                      let high = hexValue(input[input.startIndex]),
                      let low = hexValue(input[input.startIndex + 1]) {
                bytes.append(high << 4 | low)
                input = input.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func encode(_ string: String, spaceAsPlus: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else if byte == UInt8(ascii: " "), spaceAsPlus {
                output.append(UInt8(ascii: "+"))
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
