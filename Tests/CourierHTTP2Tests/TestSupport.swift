@testable import CourierHTTP2

/// Bytes from hex text such as "8286 8441 0f77"; spaces and newlines are ignored.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.unicodeScalars.filter { !$0.properties.isWhitespace })
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    var bytes: [UInt8] = []
    var index = 0
    while index < digits.count {
        let pair = String(String.UnicodeScalarView(digits[index..<(index + 2)]))
        bytes.append(UInt8(pair, radix: 16)!)
        index += 2
    }
    return bytes
}

/// A field (for brevity in tests).
func field(_ name: String, _ value: String, _ indexing: HPACKIndexing = .automatic) -> HPACKHeaderField {
    HPACKHeaderField(name: name, value: value, indexing: indexing)
}

/// A deterministic pseudo-random generator (SplitMix64), so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
