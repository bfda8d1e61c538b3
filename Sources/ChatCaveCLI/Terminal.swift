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

    /// Waits until the process receives SIGINT (Ctrl-C) or SIGTERM, or until the calling task
    /// is cancelled (how an in-process caller stops `tail` or `serve`). While waiting, those
    /// signals no longer end the process; afterwards they do again.
    /// - Returns: the signal's name, or `"cancellation"`.
    static func waitForInterrupt() async -> String {
        let resumption = Resumption()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
                resumption.install(continuation)
            }
        } onCancel: {
            resumption.resume("cancellation")
        }
    }

    /// Resumes a continuation once, on the first signal or on cancellation, and keeps the
    /// signal sources alive until then.
    private final class Resumption: Sendable {
        private struct State {
            var continuation: CheckedContinuation<String, Never>?
            var sources: [any DispatchSourceSignal] = []
            /// Why it ended, once it has.
            var ended: String?
        }

        private let state = Mutex(State())
        private let queue = DispatchQueue(label: "chatcave.signals")

        /// Ignores SIGINT and SIGTERM and listens for them instead; resumes at once when
        /// cancellation came first.
        func install(_ continuation: CheckedContinuation<String, Never>) {
            let early = state.withLock { state -> String? in
                if let ended = state.ended { return ended }
                state.continuation = continuation
                for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                    signal(number, SIG_IGN)
                    let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                    source.setEventHandler { self.resume(name) }
                    source.resume()
                    state.sources.append(source)
                }
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }

        /// Ends the wait (the first call wins) and restores the signals' default actions.
        func resume(_ reason: String) {
            let continuation = state.withLock { state -> CheckedContinuation<String, Never>? in
                guard state.ended == nil else { return nil }
                state.ended = reason
                defer { state.continuation = nil }
                if !state.sources.isEmpty {
                    for source in state.sources { source.cancel() }
                    state.sources = []
                    signal(SIGINT, SIG_DFL)
                    signal(SIGTERM, SIG_DFL)
                }
                return state.continuation
            }
            continuation?.resume(returning: reason)
        }
    }
}
