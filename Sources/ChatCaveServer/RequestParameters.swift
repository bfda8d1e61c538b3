import Foundation

/// The fields of a request body, form or JSON, under canonical bracketed names.
///
/// The original client sent forms with bracketed names (`room[name]=Lobby`); a JSON body of
/// the same nested shape (`{"room": {"name": "Lobby"}}`) is flattened to the same names, so
/// handlers read `parameters["room[name]"]` whichever encoding arrived.
///
/// The encoding is chosen by `Content-Type` (`…json` or `…x-www-form-urlencoded`); without
/// one, a body starting with `{` is read as JSON and anything else as a form. Other content
/// types, malformed JSON and a JSON body that is not an object are 400s.
struct RequestParameters: Sendable {
    /// The deepest JSON nesting flattened; deeper values are ignored.
    static let maxDepth = 8

    private let values: [String: String]

    /// Reads the parameters of a request's body.
    /// - Parameter request: the request.
    /// - Throws: ``APIError/badRequest(_:)`` when the body cannot be read.
    init(_ request: APIRequest) throws(APIError) {
        guard !request.body.isEmpty else {
            values = [:]
            return
        }
        let type = request.header("Content-Type")?.lowercased() ?? ""
        if type.contains("json") {
            values = try Self.flattenJSON(request.body)
        } else if type.contains("x-www-form-urlencoded") {
            values = try FormDecoding.parse(request.body)
        } else if type.isEmpty {
            let first = request.body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            values = first == UInt8(ascii: "{") ? try Self.flattenJSON(request.body) : try FormDecoding.parse(request.body)
        } else {
            throw .badRequest("Unsupported Content-Type '\(type.prefix(100))': send a form or JSON")
        }
    }

    /// Creates parameters from names and values (for tests).
    init(values: [String: String]) {
        self.values = values
    }

    /// The value for a canonical name such as `"user[name]"`, or `nil`.
    subscript(name: String) -> String? { values[name] }

    private static func flattenJSON(_ bytes: [UInt8]) throws(APIError) -> [String: String] {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            throw .badRequest("The request body is not valid JSON")
        }
        guard let dictionary = object as? [String: Any] else {
            throw .badRequest("The JSON body must be an object, such as {\"room\": {\"name\": \"Lobby\"}}")
        }
        var result: [String: String] = [:]
        flatten(dictionary, prefix: nil, depth: 0, into: &result)
        return result
    }

    private static func flatten(_ dictionary: [String: Any], prefix: String?, depth: Int, into result: inout [String: String]) {
        guard depth < maxDepth else { return }
        for (key, value) in dictionary {
            let name = prefix.map { "\($0)[\(key)]" } ?? key
            switch value {
            case let text as String:
                result[name] = text
            case let nested as [String: Any]:
                flatten(nested, prefix: name, depth: depth + 1, into: &result)
            case let number as NSNumber where !(value is Bool):
                result[name] = number.stringValue
            default:
                continue  // null, booleans and arrays carry nothing the API reads
            }
        }
    }
}
