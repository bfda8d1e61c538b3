import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The terminal: prompts (the password without echo) and waiting for Ctrl-C.
enum Terminal {
    /// Whether standard input is a terminal, so that prompting makes sense.
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 }

    /// Asks for a line on standard error and reads it from standard input, off the
    /// concurrency pool's threads.
    /// - Parameters:
    ///   - prompt: the question, e.g. `"Name: "`.
    ///   - secret: whether to switch echo off while typing (for passwords).
    /// - Returns: the line without its newline, or `nil` at end of input.
    static func ask(_ prompt: String, secret: Bool = false) async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                FileHandle.standardError.write(Data(prompt.utf8))
                var saved = termios()
                let hideEcho = secret && tcgetattr(STDIN_FILENO, &saved) == 0
                if hideEcho {
                    var silent = saved
                    silent.c_lflag &= ~tcflag_t(ECHO)
                    tcsetattr(STDIN_FILENO, TCSANOW, &silent)
                }
                let line = readLine(strippingNewline: true)
                if hideEcho {
                    tcsetattr(STDIN_FILENO, TCSANOW, &saved)
                    FileHandle.standardError.write(Data("\n".utf8))
                }
                continuation.resume(returning: line)
            }
        }
    }

    /// Waits until the process receives SIGINT (Ctrl-C) or SIGTERM. While waiting, those
    /// signals no longer end the process; afterwards they do again.
    /// - Returns: the signal's name.
    static func waitForInterrupt() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            Resumption(continuation).install()
        }
    }

    /// Resumes a continuation on the first signal, and keeps the signal sources alive until then.
    private final class Resumption: Sendable {
        private struct State {
            var continuation: CheckedContinuation<String, Never>?
            var sources: [any DispatchSourceSignal] = []
        }

        private let state: Mutex<State>
        private let queue = DispatchQueue(label: "chatcave.signals")

        init(_ continuation: CheckedContinuation<String, Never>) {
            state = Mutex(State(continuation: continuation))
        }

        /// Ignores SIGINT and SIGTERM and listens for them instead.
        func install() {
            state.withLock { state in
                for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                    signal(number, SIG_IGN)
                    let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                    source.setEventHandler { self.resume(name) }
                    source.resume()
                    state.sources.append(source)
                }
            }
        }

        private func resume(_ name: String) {
            let continuation = state.withLock { state -> CheckedContinuation<String, Never>? in
                defer { state.continuation = nil }
                for source in state.sources { source.cancel() }
                state.sources = []
                signal(SIGINT, SIG_DFL)
                signal(SIGTERM, SIG_DFL)
                return state.continuation
            }
            continuation?.resume(returning: name)
        }
    }
}
