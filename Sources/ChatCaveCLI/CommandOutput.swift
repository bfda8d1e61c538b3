import Foundation
import Synchronization

/// Where a command writes: standard output and error, or (in tests) a buffer.
///
/// Every line passes through ``TerminalText/escaped(_:keepingNewlines:)`` (keeping line
/// breaks) before it is written, so no control or bidi character reaches the terminal, even
/// from an error detail that a formatter did not escape itself.
public struct CommandOutput: Sendable {
    private let writeLine: @Sendable (String, Bool) -> Void

    /// Writes through a closure.
    /// - Parameter writeLine: receives each line (without its newline) and whether it is an error.
    public init(_ writeLine: @escaping @Sendable (_ line: String, _ isError: Bool) -> Void) {
        self.writeLine = writeLine
    }

    /// Standard output and standard error, written unbuffered, one line at a time.
    public static let standard = CommandOutput { line, isError in
        let handle = isError ? FileHandle.standardError : FileHandle.standardOutput
        handle.write(Data((line + "\n").utf8))
    }

    /// Writes a line to the output, with control and bidi characters escaped.
    public func line(_ text: String = "") { writeLine(TerminalText.escaped(text, keepingNewlines: true), false) }

    /// Writes a line to the error output, with control and bidi characters escaped.
    public func error(_ text: String) { writeLine(TerminalText.escaped(text, keepingNewlines: true), true) }
}

/// Collects a command's output in memory (for tests and for the demo's callers).
public final class CapturedOutput: Sendable {
    private let lines = Mutex<[(String, Bool)]>([])

    /// Creates an empty buffer.
    public init() {}

    /// An output that appends to this buffer.
    public var output: CommandOutput {
        CommandOutput { [self] line, isError in lines.withLock { $0.append((line, isError)) } }
    }

    /// Everything written to standard output, one line per element.
    public var standardLines: [String] { lines.withLock { $0.filter { !$0.1 }.map(\.0) } }

    /// Everything written to standard error, one line per element.
    public var errorLines: [String] { lines.withLock { $0.filter(\.1).map(\.0) } }
}
