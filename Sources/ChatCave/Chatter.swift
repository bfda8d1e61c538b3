/// A user inside a chatroom: `{"id": "...", "name": "alice"}`.
public struct Chatter: Codable, Sendable, Hashable, Identifiable {
    /// The user's id.
    public var id: String
    /// The user's name.
    public var name: String

    /// Creates a chatter.
    /// - Parameters:
    ///   - id: the user's id.
    ///   - name: the user's name.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }

    /// Reads a chatter from a JSON dictionary, as the original app did.
    /// - Parameter dictionary: `["id": String, "name": String]`.
    /// - Returns: `nil` when a field is missing or not a string.
    public init?(dictionary: [String: Any]) {
        guard let id = dictionary["id"] as? String, let name = dictionary["name"] as? String else { return nil }
        self.init(id: id, name: name)
    }

    /// The JSON dictionary form: `["id": id, "name": name]`. ``init(dictionary:)`` reads it back.
    public var dictionaryRepresentation: [String: Any] {
        ["id": id, "name": name]
    }
}
