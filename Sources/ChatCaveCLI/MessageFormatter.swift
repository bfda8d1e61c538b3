import ChatCave
import Foundation

/// How the CLI and the demo print messages: `18:22:33.123  alice: hi`, `→ bob joined`.
enum MessageFormatter {
    /// One line for a message; the time is UTC.
    static func line(for message: Message) -> String {
        let stamp = message.dictionaryRepresentation["timestamp"] as? String ?? ""
        let time = stamp.count >= 23 ? String(stamp.dropFirst(11).prefix(12)) : stamp
        switch message.type {
        case .chat: return "\(time)  \(message.author): \(message.text ?? "")"
        case .join: return "\(time)  → \(message.author) joined"
        case .leave: return "\(time)  ← \(message.author) left"
        case .unknown: return "\(time)  · \(message.author) \(message.text ?? "")"
        }
    }
}
