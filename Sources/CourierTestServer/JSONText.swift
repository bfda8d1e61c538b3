/// Builds small JSON documents with a fixed key order (the built-in routes' bodies).
struct JSONText {
    private var members: [String] = []

    /// Adds `"key": "value"`.
    mutating func add(_ key: String, _ value: String) {
        members.append("\(JSONText.quote(key)): \(JSONText.quote(value))")
    }

    /// Adds `"key": number`.
    mutating func add(_ key: String, _ value: Int) {
        members.append("\(JSONText.quote(key)): \(value)")
    }

    /// Adds `"key": <raw JSON>`.
    mutating func addRaw(_ key: String, _ json: String) {
        members.append("\(JSONText.quote(key)): \(json)")
    }

    /// The object: `{"a": 1, "b": "x"}`.
    var text: String { "{" + members.joined(separator: ", ") + "}" }

    /// One-member object `{"key": number}`.
    static func object(_ key: String, _ value: Int) -> String {
        var json = JSONText()
        json.add(key, value)
        return json.text
    }

    /// A JSON string literal for `text`, escaping quotes, backslashes and control characters.
    static func quote(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        let hex: [Character] = Array("0123456789abcdef")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u00"
                    out.append(hex[Int(scalar.value >> 4) & 0xF])
                    out.append(hex[Int(scalar.value) & 0xF])
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
