/// An absolute `http` or `https` URL's text taken apart in one pass over its bytes: what
/// ``NativeRequestTarget`` needs to route and write a request, and the check ``RequestPlan``
/// makes of every URL it resolves.
///
/// The text is the URL's percent-encoded form (`URL.absoluteString`); nothing is decoded. Only
/// ASCII letters are lower-cased in the host, which is what an encoded host holds.
struct URLSplit: Sendable {
    /// Whether the scheme is `https` (else `http`).
    let secure: Bool
    /// The host, ASCII letters lower-cased; an IPv6 literal without its brackets.
    let host: String
    /// The explicit port, else 443 for `https` and 80 for `http`.
    let port: Int
    /// The authority without userinfo: the `Host` field's value.
    let hostField: String
    /// The path (at least `/`) and the query, without the fragment.
    let originForm: String

    /// A reason a URL cannot be used, in words.
    struct FailureReason: Error, Sendable, ExpressibleByStringLiteral {
        /// The reason.
        let text: String
        init(stringLiteral text: String) { self.text = text }
        init(_ text: String) { self.text = text }
    }

    /// Where each part of a URL's text lies, found without making a string.
    struct Layout {
        /// Whether the scheme is `https`.
        let secure: Bool
        /// The host (inside the brackets of an IPv6 literal).
        let host: Range<Int>
        /// The authority without userinfo.
        let hostField: Range<Int>
        /// The port, explicit or the scheme's default.
        let port: Int
        /// The path and query, up to the fragment.
        let rest: Range<Int>
    }

    /// Splits `bytes`, the UTF-8 of an absolute URL.
    /// - Returns: the parts, or why they cannot be used.
    static func split(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<URLSplit, FailureReason> {
        layout(bytes).map { layout in
            let rest = bytes[layout.rest]
            let originForm = rest.first == UInt8(ascii: "/")
                ? String(decoding: rest, as: UTF8.self)
                : "/" + String(decoding: rest, as: UTF8.self)
            return URLSplit(secure: layout.secure, host: lowercased(bytes[layout.host]), port: layout.port,
                            hostField: String(decoding: bytes[layout.hostField], as: UTF8.self), originForm: originForm)
        }
    }

    /// Whether `bytes` are an absolute `http` or `https` URL with a host and a usable port.
    static func isUsable(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if case .success = layout(bytes) { return true }
        return false
    }

    /// Finds the parts of `bytes`, the UTF-8 of an absolute URL.
    /// - Returns: where they lie, or why they cannot be used.
    static func layout(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<Layout, FailureReason> {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return .failure("no scheme") }
        let secure: Bool
        if matchesLowercased(bytes[0..<colon], "http") {
            secure = false
        } else if matchesLowercased(bytes[0..<colon], "https") {
            secure = true
        } else {
            return .failure("the scheme must be http or https")
        }
        let slashes = colon + 1
        guard bytes.count >= slashes + 2, bytes[slashes] == UInt8(ascii: "/"), bytes[slashes + 1] == UInt8(ascii: "/") else {
            return .failure("no authority")
        }
        let authorityStart = slashes + 2
        var authorityEnd = authorityStart
        while authorityEnd < bytes.count, !isAuthorityEnd(bytes[authorityEnd]) { authorityEnd += 1 }
        var hostStart = authorityStart
        if let at = bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) { hostStart = at + 1 }

        var portRange = authorityEnd..<authorityEnd
        var hostRange = hostStart..<authorityEnd
        if hostStart < authorityEnd, bytes[hostStart] == UInt8(ascii: "[") {
            guard let close = bytes[hostStart..<authorityEnd].firstIndex(of: UInt8(ascii: "]")) else {
                return .failure("unterminated IPv6 literal")
            }
            hostRange = (hostStart + 1)..<close
            if close + 1 < authorityEnd {
                guard bytes[close + 1] == UInt8(ascii: ":") else { return .failure("unexpected text after the IPv6 literal") }
                portRange = (close + 2)..<authorityEnd
            }
        } else if let portColon = bytes[hostStart..<authorityEnd].lastIndex(of: UInt8(ascii: ":")) {
            hostRange = hostStart..<portColon
            portRange = (portColon + 1)..<authorityEnd
        }
        guard !hostRange.isEmpty else { return .failure("no host") }
        var port = secure ? 443 : 80
        if !portRange.isEmpty {
            guard let value = decimal(bytes[portRange]), (1...65535).contains(value) else {
                return .failure(FailureReason("the port '\(String(decoding: bytes[portRange], as: UTF8.self))' is not 1...65535"))
            }
            port = value
        }

        var restEnd = authorityEnd
        while restEnd < bytes.count, bytes[restEnd] != UInt8(ascii: "#") { restEnd += 1 }
        return .success(Layout(secure: secure, host: hostRange, hostField: hostStart..<authorityEnd, port: port,
                               rest: authorityEnd..<restEnd))
    }

    /// Whether `byte` ends the authority: `/`, `?` or `#`.
    private static func isAuthorityEnd(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    /// Whether `bytes`, ASCII letters lower-cased, spell `word`.
    private static func matchesLowercased(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        return zip(bytes, UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)).allSatisfy { asciiLower($0) == $1 }
    }

    /// The value of 1 to 5 decimal digits, else `nil`.
    private static func decimal(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard (1...5).contains(bytes.count) else { return nil }
        var value = 0
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// `bytes` as a string with ASCII letters lower-cased.
    private static func lowercased(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
            for (offset, byte) in bytes.enumerated() { buffer[offset] = asciiLower(byte) }
            return bytes.count
        }
    }

    /// `byte` with an ASCII capital letter lower-cased.
    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
