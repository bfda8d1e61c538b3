/// What a ``Message`` is: a chat line, a note that someone joined or left, or something this
/// client does not know.
///
/// Read case-insensitively from the server's `type` (`"chat"`, `"JOIN"`, …). Any other value —
/// or none at all — is ``unknown``; it never makes decoding fail, so a server that adds new
/// kinds of messages does not break older clients.
public enum MessageType: String, Codable, Sendable, CaseIterable {
    /// A line of text someone posted.
    case chat
    /// Someone joined the room; the message has no text.
    case join
    /// Someone left the room; the message has no text.
    case leave
    /// A kind this client does not know.
    case unknown

    /// Reads a server's `type` value case-insensitively.
    /// - Parameter value: the value, e.g. `"Chat"`; `nil` for none.
    public init(serverValue value: String?) {
        self = value.flatMap { MessageType(rawValue: $0.lowercased()) } ?? .unknown
    }

    /// Decodes a `type` value; anything that is not a known string is ``unknown``.
    public init(from decoder: any Decoder) throws {
        let value = try? decoder.singleValueContainer().decode(String.self)
        self.init(serverValue: value)
    }
}
