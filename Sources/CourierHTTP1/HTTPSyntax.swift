/// Byte classes and small helpers of the HTTP/1.1 grammar (RFC 9110 §5.6, RFC 9112).
///
/// Everything works on `UInt8` so that the parsers never touch `Character`.
enum HTTPSyntax {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let htab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let comma: UInt8 = 0x2C

    /// Whether `byte` is a `tchar`: ALPHA, DIGIT or one of ``!#$%&'*+-.^_`|~``.
    ///
    /// A branch-free lookup in two 64-bit masks (bytes 0–63 and 64–127).
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        let low: UInt64 = 0x03FF_6CFA_0000_0000
        let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        let mask = byte < 64 ? low : high
        return byte < 128 && (mask >> UInt64(byte & 63)) & 1 == 1
    }

    /// Whether `byte` is SP or HTAB (optional whitespace).
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == htab
    }

    /// Whether `byte` may appear inside a field value (or a reason phrase): HTAB, SP, VCHAR or
    /// obs-text. Rejects NUL, CR, LF, the other C0 controls and DEL.
    @inline(__always)
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte >= 0x20 ? byte != 0x7F : byte == htab
    }

    /// Whether every byte of `bytes` is a field-value byte (`isFieldValueByte`).
    ///
    /// Checks eight bytes at a time: a word without any byte below 0x20 or equal to 0x7F is
    /// accepted at once; only words that might contain one (HTAB, or a real control byte) are
    /// checked byte by byte.
    static func isValidFieldValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var i = 0
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while i &+ 8 <= count {
            let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let below20 = (word &- ones &* 0x20) & ~word & highs
            let del = word ^ (ones &* 0x7F)
            let isDel = (del &- ones) & ~del & highs
            if below20 | isDel != 0 {
                for j in i..<(i &+ 8) where !isFieldValueByte(bytes[j]) { return false }
            }
            i &+= 8
        }
        while i < count {
            if !isFieldValueByte(bytes[i]) { return false }
            i &+= 1
        }
        return true
    }

    /// The value of a hexadecimal digit, or `nil`.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte &- 0x30
        case 0x41...0x46: byte &- 0x41 &+ 10
        case 0x61...0x66: byte &- 0x61 &+ 10
        default: nil
        }
    }

    /// ASCII-lowercases one byte.
    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }

    /// Calls `body` with the UTF-8 bytes of `string`, without copying native strings.
    @inline(__always)
    static func withUTF8<R>(_ string: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        var copy = string
        return copy.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    /// Compares two byte strings, ignoring ASCII case.
    static func equalsIgnoringCase(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] && lower(a[i]) != lower(b[i]) { return false }
        return true
    }

    /// Compares two strings byte-wise, ignoring ASCII case, without allocating.
    static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return withUTF8(a) { x in withUTF8(b) { y in equalsIgnoringCase(x, y) } }
    }

    /// Compares raw bytes with an ASCII-lowercase literal, ignoring case.
    static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, lowercased literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let lit = UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for i in 0..<bytes.count where lower(bytes[i]) != lit[i] { return false }
        return true
    }

    /// Whether a field name equals an ASCII-lowercase literal, ignoring case.
    @inline(__always)
    static func name(_ name: String, is literal: StaticString) -> Bool {
        guard name.utf8.count == literal.utf8CodeUnitCount else { return false }
        return withUTF8(name) { equalsIgnoringCase($0, lowercased: literal) }
    }

    /// Calls `body` with each element of a comma-separated list, trimmed of SP/HTAB (empty
    /// elements included) until `body` returns `false`.
    static func forEachListElement(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) {
        var start = 0
        while true {
            var end = start
            while end < bytes.count && bytes[end] != comma { end += 1 }
            guard body(trimmed(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))) else { return }
            guard end < bytes.count else { return }
            start = end + 1
        }
    }

    /// Removes leading and trailing SP/HTAB.
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var lo = 0, hi = bytes.count
        while lo < hi, isWhitespace(bytes[lo]) { lo += 1 }
        while hi > lo, isWhitespace(bytes[hi - 1]) { hi -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[lo..<hi])
    }

    /// Makes a `String` from wire bytes (UTF-8; invalid sequences become U+FFFD).
    @inline(__always)
    static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Builds a byte array of at most `capacity` bytes with a writer, in one allocation.
    static func build(capacity: Int, _ body: (inout WireWriter) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            var writer = WireWriter(buffer: buffer)
            body(&writer)
            count = writer.position
        }
    }
}

/// Writes wire bytes into preallocated storage (see `HTTPSyntax.build`).
struct WireWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var position = 0

    init(buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    /// Writes one byte.
    @inline(__always)
    mutating func write(_ byte: UInt8) {
        guard position < buffer.count else { return }
        buffer[position] = byte
        position &+= 1
    }

    /// Writes CR LF.
    @inline(__always)
    mutating func writeCRLF() {
        write(HTTPSyntax.cr)
        write(HTTPSyntax.lf)
    }

    /// Writes the UTF-8 of `string`, replacing CR, LF and NUL with SP (no header injection).
    ///
    /// Copies with `memcpy`, then checks eight bytes at a time for control bytes; only words
    /// that contain one are fixed byte by byte.
    mutating func write(sanitized string: String) {
        HTTPSyntax.withUTF8(string) { source in
            let count = Swift.min(source.count, buffer.count - position)
            guard count > 0, let from = source.baseAddress, let base = buffer.baseAddress else { return }
            let target = UnsafeMutableRawPointer(base + position)
            target.copyMemory(from: from, byteCount: count)
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            var i = 0
            while i < count {
                let end = Swift.min(i &+ 8, count)
                if end &- i == 8 {
                    let word = target.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    if (word &- ones &* 0x20) & ~word & highs == 0 {
                        i = end
                        continue
                    }
                }
                for j in i..<end {
                    let byte = buffer[position &+ j]
                    if byte == HTTPSyntax.cr || byte == HTTPSyntax.lf || byte == 0 {
                        buffer[position &+ j] = HTTPSyntax.space
                    }
                }
                i = end
            }
            position &+= count
        }
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body with typed throws (the standard one only rethrows `any Error`).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(HTTP1Error) -> R) throws(HTTP1Error) -> R {
        let result: Result<R, HTTP1Error> = withUnsafeBytes { buffer in
            do throws(HTTP1Error) {
                return .success(try body(buffer))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
