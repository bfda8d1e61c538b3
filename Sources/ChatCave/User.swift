/// A ChatCave user: `{"id": "...", "name": "alice", "apiKey": "<uuid>"}`.
///
/// The server sends the `apiKey` only to its owner (after sign-up or sign-in); other users
/// come without one. Its `description` and `debugDescription` never show the key.
public struct User: Codable, Sendable, Hashable, Identifiable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The user's id; a client learns its own from sign-up or sign-in (there is no `/me`).
    public var id: String
    /// The user's name, unique on its server.
    public var name: String
    /// The key that authenticates this user's requests; `nil` for other users.
    public var apiKey: String?

    /// Creates a user.
    /// - Parameters:
    ///   - id: the user's id.
    ///   - name: the user's name.
    ///   - apiKey: the API key; `nil` by default.
    public init(id: String, name: String, apiKey: String? = nil) {
        self.id = id
        self.name = name
        self.apiKey = apiKey
    }

    /// Reads a user from a JSON dictionary, as the original app did.
    /// - Parameter dictionary: `["id": String, "name": String, "apiKey": String?]`.
    /// - Returns: `nil` when `id` or `name` is missing or not a string.
    public init?(dictionary: [String: Any]) {
        guard let id = dictionary["id"] as? String, let name = dictionary["name"] as? String else { return nil }
        self.init(id: id, name: name, apiKey: dictionary["apiKey"] as? String)
    }

    /// The JSON dictionary form (`apiKey` only when known). ``init(dictionary:)`` reads it back.
    public var dictionaryRepresentation: [String: Any] {
        var dictionary: [String: Any] = ["id": id, "name": name]
        if let apiKey { dictionary["apiKey"] = apiKey }
        return dictionary
    }

    /// `User(id: "…", name: "…", apiKey: <redacted>)`: the key, when known, is never shown.
    public var description: String {
        "User(id: \"\(id)\", name: \"\(name)\", apiKey: \(apiKey == nil ? "nil" : "<redacted>"))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }
}
