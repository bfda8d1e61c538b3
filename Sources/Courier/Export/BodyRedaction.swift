import Foundation

/// Removes credentials from bodies that are shown for debugging (curl commands, HAR files):
/// in a JSON body, the value of every member whose name suggests a secret (`password`,
/// `access_token`, `api_key`, …: ``HTTPHeaders/secretWords``) becomes `"<redacted>"`, at any
/// depth; in a form body (`application/x-www-form-urlencoded`), the value of every such field
/// becomes `redacted`. Other bodies are returned as they are.
enum BodyRedaction {
    /// The body with its secret-looking values replaced, per its media type.
    static func redacted(_ body: Data, contentType: String?) -> Data {
        guard !body.isEmpty, let type = contentType?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased() else { return body }
        if type == "application/x-www-form-urlencoded" { return form(body) }
        if type == "application/json" || type.hasSuffix("+json") { return json(body) }
        return body
    }

    static func isSecretName(_ name: String) -> Bool {
        let lower = name.lowercased()
        return HTTPHeaders.secretWords.contains { lower.contains($0) }
    }

    private static func form(_ body: Data) -> Data {
        let text = String(decoding: body, as: UTF8.self)
        let fields = text.split(separator: "&", omittingEmptySubsequences: false).map { field -> String in
            guard let equals = field.firstIndex(of: "=") else { return String(field) }
            let name = String(field[..<equals])
            let decoded = name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name
            return isSecretName(decoded) ? name + "=redacted" : String(field)
        }
        return Data(fields.joined(separator: "&").utf8)
    }

    private static func json(_ body: Data) -> Data {
        guard let value = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else { return body }
        var changed = false
        let cleaned = scrub(value, changed: &changed)
        guard changed, let data = try? JSONSerialization.data(withJSONObject: cleaned, options: [.fragmentsAllowed, .sortedKeys])
        else { return body }
        return data
    }

    private static func scrub(_ value: Any, changed: inout Bool) -> Any {
        if let object = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, member) in object {
                if isSecretName(key), !(member is NSNull) {
                    result[key] = "<redacted>"
                    changed = true
                } else {
                    result[key] = scrub(member, changed: &changed)
                }
            }
            return result
        }
        if let array = value as? [Any] { return array.map { scrub($0, changed: &changed) } }
        return value
    }
}
