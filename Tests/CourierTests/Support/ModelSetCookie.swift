/// A `Set-Cookie` field a model-based test generated: the text sent to the jar, and what
/// RFC 6265 §5.2 makes of it, as the generator meant it (so that the model does not parse text).
struct ModelSetCookie: Sendable, CustomStringConvertible {
    /// One attribute, with the value RFC 6265 §5.2 gives it.
    enum Attribute: Sendable {
        /// `Expires`: the date in seconds since 1970, or `nil` when the text is no date (ignored).
        case expires(Double?)
        /// `Max-Age`: the seconds, or `nil` when the text is not a number (ignored).
        case maxAge(Int?)
        /// `Domain`, its value as sent (trimmed).
        case domain(String)
        /// `Path`, its value as sent (trimmed).
        case path(String)
        /// `Secure`.
        case secure
        /// `HttpOnly`.
        case httpOnly
        /// `SameSite`, its value as sent.
        case sameSite(String)
        /// An attribute the jar must ignore: unknown, or its value too long.
        case ignored
    }

    /// The field value.
    var line: String
    /// The cookie's name and value after trimming; `nil` when the whole field must be ignored.
    var pair: (name: String, value: String)?
    /// The attributes in the order they were written.
    var attributes: [Attribute]

    /// The field value (its first 100 characters), for failure messages.
    var description: String { (line.count > 100 ? String(line.prefix(100)) + "…" : line).debugDescription }
}
