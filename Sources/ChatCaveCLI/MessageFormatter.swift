import ChatCave
import Foundation

/// How the CLI and the demo print messages: `18:22:33.123  alice: hi`, `→ bob joined`.
///
/// The author and the text come from the network, so they pass through
/// ``TerminalText/escaped(_:keepingNewlines:)``. A line break in a message's text stays a line
/// break, but every following line is indented by the width of the time column, so a message
/// can never print a line that looks like another message.
enum MessageFormatter {
    /// The indentation of a message's second and later lines: the width of `18:22:33.123  `.
    static let continuation = "\n" + String(repeating: " ", count: 14)

    /// One line for a message (more when its text has line breaks); the time is UTC.
    static func line(for message: Message) -> String {
        let stamp = message.dictionaryRepresentation["timestamp"] as? String ?? ""
        let time = stamp.count >= 23 ? String(stamp.dropFirst(11).prefix(12)) : stamp
        let author = TerminalText.escaped(message.author)
        let text = (message.text ?? "").split(separator: "\n", omittingEmptySubsequences: false)
            .map { TerminalText.escaped(String($0)) }.joined(separator: continuation)
        switch message.type {
        case .chat: return "\(time)  \(author): \(text)"
        case .join: return "\(time)  → \(author) joined"
        case .leave: return "\(time)  ← \(author) left"
        case .unknown: return "\(time)  · \(author) \(text)"
        }
    }
}
