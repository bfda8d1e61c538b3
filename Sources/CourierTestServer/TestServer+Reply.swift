import Foundation
import Synchronization

extension TestServer {
    /// What a route answers: a well-formed response, a script of raw bytes and
    /// pauses, or either of them after a delay.
    public indirect enum Reply: Sendable {
        /// A complete response. `Content-Length` and `Date` are added unless present;
        /// add `("Connection", "close")` to close the connection afterwards.
        case response(status: Int, headers: [(String, String)] = [], body: Data = Data())
        /// Raw bytes, pauses and connection faults, run in order. When the steps run
        /// out without ``Step/close``, ``Step/shutdownWrite``, ``Step/reset`` or
        /// ``Step/stall``, the request counts as answered and the server reads the next
        /// request on the same connection.
        case script([Step])
        /// `reply` after `delay`, timed by the event loop (no thread sleeps).
        case delayed(Duration, Reply)
        /// `reply` once `gate` is open; until then the connection waits, with the event loop
        /// looking again every 5 ms (no thread sleeps). For a test that needs the response held
        /// until its clients have reached a point it can observe.
        case whenOpen(Gate, Reply)

        /// A JSON response from an `Encodable` value.
        ///
        /// - Parameters:
        ///   - status: The status. Default: 200.
        ///   - value: The value, encoded with `JSONEncoder` (sorted keys).
        /// - Returns: The reply; a 500 reply describing the error when encoding fails.
        public static func json(status: Int = 200, _ value: some Encodable) -> Reply {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            do {
                return .response(status: status, headers: [("Content-Type", "application/json")], body: try encoder.encode(value))
            } catch {
                return .text(status: 500, "JSON encoding failed: \(error)")
            }
        }

        /// A JSON response from JSON text, sent as is.
        ///
        /// - Parameters:
        ///   - status: The status. Default: 200.
        ///   - text: The JSON document.
        /// - Returns: The reply.
        public static func json(status: Int = 200, _ text: String) -> Reply {
            .response(status: status, headers: [("Content-Type", "application/json")], body: Data(text.utf8))
        }

        /// A `text/plain; charset=utf-8` response.
        ///
        /// - Parameters:
        ///   - status: The status. Default: 200.
        ///   - text: The body.
        /// - Returns: The reply.
        public static func text(status: Int = 200, _ text: String) -> Reply {
            .response(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8))
        }
    }

    /// A switch a test opens to release the replies held by ``Reply/whenOpen(_:_:)``.
    public final class Gate: Sendable {
        private let opened = Atomic(false)

        /// A closed gate.
        public init() {}

        /// Whether ``open()`` was called.
        public var isOpen: Bool { opened.load(ordering: .acquiring) }

        /// Opens the gate for good: every held reply goes out within about 5 ms.
        public func open() { opened.store(true, ordering: .releasing) }
    }

    /// One step of a ``Reply/script(_:)``.
    public enum Step: Sendable {
        /// Sends these bytes exactly as given.
        case send(Data)
        /// Waits, then goes on with the next step.
        case pause(Duration)
        /// Shuts down the server's sending side (FIN) but keeps reading; ends the script.
        case shutdownWrite
        /// Closes the connection after what was sent (FIN); ends the script.
        case close
        /// Closes the connection with a TCP reset (RST); ends the script.
        case reset
        /// Waits until every byte sent so far has gone into the socket (the kernel's buffers),
        /// calls the closure, and goes on with the next step: a client that stops reading holds
        /// the script here, so the calls count how far the response got.
        case whenSent(@Sendable () -> Void)
        /// Holds the connection open without sending anything more, until the client
        /// closes it or the server shuts down; ends the script.
        case stall

        /// Sends the UTF-8 bytes of `text` exactly as given.
        ///
        /// - Parameter text: The text; write `\r\n` line ends yourself.
        /// - Returns: The step.
        public static func send(_ text: String) -> Step {
            .send(Data(text.utf8))
        }
    }
}
