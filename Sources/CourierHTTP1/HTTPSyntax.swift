/// Byte classes and small helpers of the HTTP/1.1 grammar (RFC 9110 §5.6, RFC 9112).
///
/// Everything works on `UInt8` so that the parsers never touch `Character`.
enum HTTPSyntax {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let htab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A

    /// Whether `byte` is a `tchar`: ALPHA, DIGIT or one of ``!#$%&'*+-.^_`|~``.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true // DIGIT, upper, lower
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
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

    /// Compares two strings byte-wise, ignoring ASCII case, without allocating.
    static func equalsIgnoringCase<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        var i = x.startIndex, j = y.startIndex
        while i != x.endIndex {
            if lower(x[i]) != lower(y[j]) { return false }
            x.formIndex(after: &i)
            y.formIndex(after: &j)
        }
        return true
    }

    /// Compares raw bytes with an ASCII-lowercase literal, ignoring case.
    static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, lowercased literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let lit = UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for i in 0..<bytes.count where lower(bytes[i]) != lit[i] { return false }
        return true
    }

    /// Calls `body` with each element of a comma-separated list, trimmed of SP/HTAB; empty
    /// elements are passed as empty substrings.
    static func forEachListElement(_ value: String, _ body: (Substring) throws(HTTP1Error) -> Void) throws(HTTP1Error) {
        var start = value.startIndex
        let utf8 = value.utf8
        while true {
            let end = utf8[start...].firstIndex(of: 0x2C) ?? utf8.endIndex
            try body(trimmed(value[start..<end]))
            guard end != utf8.endIndex else { return }
            start = utf8.index(after: end)
        }
    }

    /// Non-throwing variant of `forEachListElement(_:_:)`.
    static func forEachListElement(_ value: String, _ body: (Substring) -> Void) {
        var start = value.startIndex
        let utf8 = value.utf8
        while true {
            let end = utf8[start...].firstIndex(of: 0x2C) ?? utf8.endIndex
            body(trimmed(value[start..<end]))
            guard end != utf8.endIndex else { return }
            start = utf8.index(after: end)
        }
    }

    /// Removes leading and trailing SP/HTAB.
    static func trimmed(_ s: Substring) -> Substring {
        var lo = s.utf8.startIndex, hi = s.utf8.endIndex
        while lo != hi, isWhitespace(s.utf8[lo]) { lo = s.utf8.index(after: lo) }
        while hi != lo, isWhitespace(s.utf8[s.utf8.index(before: hi)]) { hi = s.utf8.index(before: hi) }
        return Substring(s.utf8[lo..<hi])
    }

    /// Appends the UTF-8 of `string`, replacing CR, LF and NUL with SP (no header injection).
    static func appendSanitized(_ string: String, to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: string.utf8)
        bytes.withUnsafeMutableBufferPointer { buffer in
            for i in start..<buffer.count {
                let byte = buffer[i]
                if byte == cr || byte == lf || byte == 0 { buffer[i] = space }
            }
        }
    }

    /// Makes a `String` from wire bytes (UTF-8; invalid sequences become U+FFFD).
    @inline(__always)
    static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
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
