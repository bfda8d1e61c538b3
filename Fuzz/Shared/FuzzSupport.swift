// Helpers shared by every fuzz target (compiled into each target's binary).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Stops the run when an invariant does not hold.
///
/// `abort()` raises SIGABRT, which libFuzzer reports as a crash and for which it saves the
/// input as an artifact, so every invariant failure is reproducible like a crash.
/// - Parameters:
///   - condition: The invariant.
///   - message: What went wrong, printed before aborting.
func invariant(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if condition() { return }
    let text = Array("INVARIANT FAILED (\(file):\(line)): \(message())\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// A deterministic hash of the input (FNV-1a, 64 bits).
///
/// Split points and other choices are derived from it instead of from a control prefix, so
/// that the corpus holds plain wire bytes and every input replays identically.
/// - Parameter bytes: The input.
/// - Returns: The hash.
func inputHash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01B3
    }
    return hash
}

/// A small deterministic random number generator (SplitMix64), seeded from the input.
struct SplitMix64 {
    private var state: UInt64

    /// Creates a generator.
    /// - Parameter seed: The seed.
    init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A number in `0...upper` (`upper` ≥ 0).
    mutating func next(upTo upper: Int) -> Int {
        guard upper > 0 else { return 0 }
        return Int(truncatingIfNeeded: next() % UInt64(upper &+ 1))
    }
}

/// The ways an input is cut into consecutive pieces, as ascending cut offsets.
///
/// Always: no cut (whole), one cut at a pseudo-random point, and two cuts; for short inputs
/// also a cut after every byte, the hardest case for an incremental parser.
/// - Parameters:
///   - count: The input size.
///   - seed: From `inputHash`.
///   - byteByByteUpTo: The largest size fed one byte at a time. Default: 512.
/// - Returns: Each split as its cut offsets (each in `1..<count`).
func splits(count: Int, seed: UInt64, byteByByteUpTo: Int = 512) -> [[Int]] {
    var random = SplitMix64(seed: seed)
    var result: [[Int]] = [[]]
    guard count > 1 else { return result }
    result.append([1 + random.next(upTo: count - 2)])
    let first = 1 + random.next(upTo: count - 2)
    let second = 1 + random.next(upTo: count - 2)
    result.append(first == second ? [first] : [Swift.min(first, second), Swift.max(first, second)])
    if count <= byteByByteUpTo {
        result.append(Array(1..<count))
    }
    return result
}

/// The pieces of `bytes` between the cuts.
/// - Parameters:
///   - bytes: The input.
///   - cuts: Ascending offsets inside `bytes`.
/// - Returns: Consecutive slices covering `bytes` (one slice when there are no cuts).
func pieces(_ bytes: UnsafeRawBufferPointer, cuts: [Int]) -> [(offset: Int, piece: UnsafeRawBufferPointer)] {
    var result: [(offset: Int, piece: UnsafeRawBufferPointer)] = []
    var start = 0
    for end in cuts + [bytes.count] where end > start {
        result.append((start, UnsafeRawBufferPointer(rebasing: bytes[start..<end])))
        start = end
    }
    if result.isEmpty { result.append((0, bytes)) }
    return result
}

/// Whether `byte` is an RFC 9110 `tchar` (an independent oracle, not the parser's table).
func isTokenCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    default: return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}

/// Whether `text` is a non-empty token.
func isToken(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy(isTokenCharacter)
}

/// Whether `text` may stand in a field value or reason phrase: no control bytes except HTAB, no DEL.
func isFieldText(_ text: String) -> Bool {
    text.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
}

/// Whether `text` is a valid, trimmed field value.
func isTrimmedFieldValue(_ text: String) -> Bool {
    guard isFieldText(text) else { return false }
    let bytes = Array(text.utf8)
    if let first = bytes.first, first == 0x20 || first == 0x09 { return false }
    if let last = bytes.last, last == 0x20 || last == 0x09 { return false }
    return true
}

/// The input as a readable string for messages (escaped, at most 200 bytes).
func printable<C: Collection<UInt8>>(_ bytes: C) -> String {
    var text = ""
    for byte in bytes.prefix(200) {
        switch byte {
        case 0x0D: text += "\\r"
        case 0x0A: text += "\\n"
        case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = Array("0123456789abcdef")
            text += "\\x" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
        }
    }
    return bytes.count > 200 ? text + "…" : text
}
