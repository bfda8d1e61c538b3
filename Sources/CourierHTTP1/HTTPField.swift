/// One header (or trailer) field: a name and its value, in wire order.
///
/// Names keep the case they had on the wire; look them up case-insensitively with
/// `value(for:)` / `values(for:)` on the head or on an `[HTTPField]`.
public struct HTTPField: Sendable, Equatable, Hashable {
    /// The field name, e.g. `Content-Type` (a token; compared case-insensitively).
    public var name: String
    /// The field value with leading and trailing whitespace removed.
    public var value: String

    /// Creates a field.
    /// - Parameters:
    ///   - name: The field name; it should be a token (see `isValidName(_:)`).
    ///   - value: The field value; it should not contain CR, LF, NUL or other control bytes
    ///     except HTAB (see `isValidValue(_:)`). Serialization replaces CR, LF and NUL with
    ///     spaces so that a bad value can never inject another field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Whether `name` is a valid field name: a non-empty RFC 9110 token.
    /// - Parameter name: A candidate field name.
    /// - Returns: `true` when every byte is a token character and the name is not empty.
    public static func isValidName(_ name: String) -> Bool {
        var count = 0
        for byte in name.utf8 {
            guard HTTPSyntax.isTokenByte(byte) else { return false }
            count += 1
        }
        return count > 0
    }

    /// Whether `value` is a valid field value: no control bytes except HTAB, no DEL, and no
    /// leading or trailing whitespace.
    /// - Parameter value: A candidate field value.
    /// - Returns: `true` when the value can be sent unchanged.
    public static func isValidValue(_ value: String) -> Bool {
        HTTPSyntax.withUTF8(value) { bytes in
            if let first = bytes.first, HTTPSyntax.isWhitespace(first) { return false }
            if let last = bytes.last, HTTPSyntax.isWhitespace(last) { return false }
            return HTTPSyntax.isValidFieldValue(bytes)
        }
    }
}

extension Array where Element == HTTPField {
    /// The value of the first field whose name matches `name`, ignoring ASCII case.
    /// - Parameter name: The field name to look up, e.g. `content-type`.
    /// - Returns: The first matching value, or `nil` when there is none.
    public func value(for name: String) -> String? {
        for i in indices where HTTPSyntax.equalsIgnoringCase(self[i].name, name) {
            return self[i].value
        }
        return nil
    }

    /// The values of every field whose name matches `name`, ignoring ASCII case, in wire order.
    /// Values are returned as received; comma-separated lists are not split.
    /// - Parameter name: The field name to look up.
    /// - Returns: The matching values (empty when there is none).
    public func values(for name: String) -> [String] {
        var result: [String] = []
        for field in self where HTTPSyntax.equalsIgnoringCase(field.name, name) {
            result.append(field.value)
        }
        return result
    }

    /// Whether the comma-separated lists of the fields named `name` contain `token`
    /// (both compared ignoring ASCII case, elements trimmed of whitespace).
    func containsToken(_ token: StaticString, inFieldsNamed name: StaticString) -> Bool {
        contains { HTTPSyntax.name($0.name, is: name) && HTTPFieldList.value($0.value, contains: token) }
    }

    /// Whether a message with these fields and `version` keeps its connection open:
    /// `Connection: close` always closes; HTTP/1.0 closes unless `Connection: keep-alive`.
    func keepAlive(version: HTTPVersion) -> Bool {
        if containsToken("close", inFieldsNamed: "connection") { return false }
        if version.persistsByDefault { return true }
        return containsToken("keep-alive", inFieldsNamed: "connection")
    }

    /// The number of bytes `write(to:)` produces.
    var serializedCount: Int {
        var total = 0
        for field in self { total &+= field.name.utf8.count &+ field.value.utf8.count &+ 4 }
        return total
    }

    /// Writes `name: value CRLF` for every field, replacing CR, LF and NUL with spaces.
    func write(to writer: inout WireWriter) {
        for field in self {
            writer.write(sanitized: field.name)
            writer.write(HTTPSyntax.colon)
            writer.write(HTTPSyntax.space)
            writer.write(sanitized: field.value)
            writer.writeCRLF()
        }
    }
}

/// Field values that are comma-separated lists (RFC 9110, section 5.6.1), such as `Connection`.
public enum HTTPFieldList {
    /// Whether the list `value` has `token` as an element, compared ignoring ASCII case, each
    /// element trimmed of the whitespace around it.
    /// - Parameters:
    ///   - value: a field value.
    ///   - token: the element to look for, in lower case.
    /// - Returns: whether an element is `token`.
    public static func value(_ value: String, contains token: StaticString) -> Bool {
        var found = false
        HTTPSyntax.withUTF8(value) { bytes in
            HTTPSyntax.forEachListElement(bytes) { element in
                found = HTTPSyntax.equalsIgnoringCase(element, lowercased: token)
                return !found
            }
        }
        return found
    }
}
