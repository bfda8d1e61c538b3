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
    ///   - unfoldingObsoleteFolds: Whether a line that starts with whitespace continues the
    ///     previous field's value (obs-fold), replaced by one space, as RFC 9112 §5.2 requires of
    ///     a user agent reading a response. When `false` (requests, trailers) it is an error.
    ///     Default: `false`.
    /// - Returns: The fields in wire order.
    /// - Throws: `.invalidHeaderField`, `.obsoleteLineFolding`.
    static func parseFields(_ cursor: inout LineCursor, capacity: Int,
                            unfoldingObsoleteFolds: Bool = false) throws(HTTP1Error) -> [HTTPField] {
        var fields: [HTTPField] = []
        fields.reserveCapacity(capacity)
        while let line = cursor.next(), !line.isEmpty {
            if HTTPSyntax.isWhitespace(line[0]) {
                guard let last = fields.last else {
                    throw HTTP1Error.invalidHeaderField.with(bytes: line)
                }
                guard unfoldingObsoleteFolds else {
                    throw HTTP1Error.obsoleteLineFolding.with(bytes: line)
                }
                fields[fields.count - 1] = try unfold(line, onto: last)
                continue
            }
            fields.append(try parseField(line))
        }
        return fields
    }

    /// Appends a continuation line (obs-fold) to a field's value, joined by one space.
    private static func unfold(_ line: UnsafeRawBufferPointer, onto field: HTTPField) throws(HTTP1Error) -> HTTPField {
        let continuation = try Self.value(of: line, from: 0)
        guard !continuation.isEmpty else { return field }
        let joined = field.value.isEmpty ? HTTPSyntax.string(continuation) : field.value + " " + HTTPSyntax.string(continuation)
        return HTTPField(name: field.name, value: joined)
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
        let value = try Self.value(of: line, from: colon + 1)
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        return HTTPField(name: CommonFieldNames.lookup(name) ?? HTTPSyntax.string(name),
                         value: HTTPSyntax.string(value))
    }

    /// The bytes of `line` from `start` on, without surrounding whitespace, checked as a field value.
    private static func value(of line: UnsafeRawBufferPointer, from start: Int) throws(HTTP1Error) -> UnsafeRawBufferPointer {
        var start = start
        var end = line.count
        while start < end, HTTPSyntax.isWhitespace(line[start]) { start += 1 }
        while end > start, HTTPSyntax.isWhitespace(line[end - 1]) { end -= 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[start..<end])
        guard HTTPSyntax.isValidFieldValue(value) else {
            throw HTTP1Error.invalidHeaderField.with(bytes: line)
        }
        return value
    }
}
