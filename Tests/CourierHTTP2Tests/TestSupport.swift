@testable import CourierHTTP2
import CourierTestSupport
import CourierTestServer

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


/// The name this target's tests used for CourierTestServer's SplitMix64 generator before it had
/// one home; kept so that tests written against it still compile.
typealias SeededGenerator = SeededRandom
