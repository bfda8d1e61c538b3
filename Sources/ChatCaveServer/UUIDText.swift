import Foundation

/// The ids the server hands out: random UUIDs in lowercase text.
enum UUIDText {
    /// A new random id, e.g. `3f2b…-…`.
    static func make() -> String {
        UUID().uuidString.lowercased()
    }
}
