#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Walks the lines of a complete section found by `HeadAccumulator`.
struct LineCursor {
    /// The section: lines each ending with LF (optionally preceded by CR).
    let bytes: UnsafeRawBufferPointer
    /// Offset of the next line.
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The next line without its CR LF / LF, or `nil` when the section is exhausted.
    mutating func next() -> UnsafeRawBufferPointer? {
        guard position < bytes.count, let base = bytes.baseAddress else { return nil }
        let end: Int
        if let found = memchr(base + position, Int32(HTTPSyntax.lf), bytes.count - position) {
            end = UnsafeRawPointer(found) - base
        } else {
            end = bytes.count
        }
        var contentEnd = end
        if contentEnd > position && bytes[contentEnd - 1] == HTTPSyntax.cr { contentEnd -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: bytes[position..<contentEnd])
        position = end + 1
        return line
    }
}

/// Parses field lines (`name ":" OWS value OWS`, RFC 9112 §5).
enum FieldLineParser {
    /// Parses field lines until the empty line that ends the section.
    /// - Parameters:
    ///   - cursor: Positioned on the first field line.
    ///   - capacity: The expected number of fields (to reserve storage once).
    /// - Returns: The fields in wire order.
    /// - Throws: `.invalidHeaderField`, `.obsoleteLineFolding`.
    static func parseFields(_ cursor: inout LineCursor, capacity: Int) throws(HTTP1Error) -> [HTTPField] {
        var fields: [HTTPField] = []
        fields.reserveCapacity(capacity)
        while let line = cursor.next(), !line.isEmpty {
            if HTTPSyntax.isWhitespace(line[0]) {
                if fields.isEmpty {
                    throw HTTP1Error.invalidHeaderField.with(bytes: line)
                }
                throw HTTP1Error.obsoleteLineFolding.with(bytes: line)
            }
            fields.append(try parseField(line))
        }
        return fields
    }

    /// Parses one non-empty field line that does not start with whitespace.
    static func parseField(_ line: UnsafeRawBufferPointer) throws(HTTP1Error) -> HTTPField {
        var colon = 0
        while colon < line.count {
            let byte = line[colon]
            if byte == HTTPSyntax.colon { break }
            guard HTTPSyntax.isTokenByte(byte) else {
                throw HTTP1Error.invalidHeaderField.with(bytes: line)
            }
            colon += 1
        }
        guard colon < line.count, colon > 0 else {
            throw HTTP1Error.invalidHeaderField.with(bytes: line)
        }
        var start = colon + 1
        var end = line.count
        while start < end, HTTPSyntax.isWhitespace(line[start]) { start += 1 }
        while end > start, HTTPSyntax.isWhitespace(line[end - 1]) { end -= 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[start..<end])
        guard HTTPSyntax.isValidFieldValue(value) else {
            throw HTTP1Error.invalidHeaderField.with(bytes: line)
        }
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        return HTTPField(name: CommonFieldNames.lookup(name) ?? HTTPSyntax.string(name),
                         value: HTTPSyntax.string(value))
    }
}
