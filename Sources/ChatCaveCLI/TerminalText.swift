/// Makes text that came from the network safe to print on a terminal.
///
/// A message, a name or an error detail can hold ESC (cursor movement, screen clearing, OSC
/// window titles and clipboard writes), CR (overwriting a line), BEL, or bidi and other
/// format characters (U+202E turns text around). Printed raw, they let another user, or a
/// malicious server, forge lines in the reader's terminal. Every such scalar is printed
/// escaped instead, as Swift writes it: ESC becomes `\u{1B}`, U+202E becomes `\u{202E}`.
enum TerminalText {
    /// `text` with every unsafe scalar escaped as `\u{HEX}`.
    ///
    /// Unsafe are the C0 and C1 controls and DEL (general category Cc, which includes tab and
    /// CR), every format character (Cf: U+200E/F, U+202A–U+202E, U+2066–U+2069, zero-width
    /// joiners, …), and the line and paragraph separators U+2028 and U+2029.
    /// - Parameters:
    ///   - text: what to print.
    ///   - keepingNewlines: whether "\n" stays a line break; only where a line break is meant
    ///     (the CLI's own multi-line texts, and the lines of a message's text).
    static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        let mustEscape = { (scalar: Unicode.Scalar) in isUnsafe(scalar) && !(keepingNewlines && scalar == "\n") }
        guard text.unicodeScalars.contains(where: mustEscape) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if mustEscape(scalar) {
                result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// Whether a scalar must not reach the terminal as it is.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
