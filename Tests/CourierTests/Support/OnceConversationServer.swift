import CourierTestServer
import Foundation

/// The server of the terminal-callback conversations: a ``TestServer`` whose `/once/*` routes
/// answer each path as planned, with the path's own bytes as the body, and every answer closing
/// its connection (so that a dropped attempt is never on a reused connection). It counts the
/// attempts on each path, holds gated answers until the test opens their gate, and says when a
/// gated answer has gone into the socket.
final class OnceConversationServer: Sendable {
    /// How the server answers a path.
    enum Behaviour: Sendable, CustomStringConvertible {
        /// 200 once the path's gate is open; once it is in the socket, the path's hook runs
        /// (``whenSent(_:_:)``) on the server's event loop and ``hasSent(_:)`` turns true.
        case gated
        /// 200 after this many milliseconds.
        case slow(milliseconds: Int)
        /// The head at once, then the body in 4 pieces 25 ms apart (75 ms of body).
        case slowBody
        /// The first attempt's connection closes unanswered; later attempts get 200.
        case drop
        /// The first attempt gets 503; later attempts get 200.
        case retryable
        /// Never answers: the connection stays open until the client closes it.
        case stall

        var description: String {
            switch self {
            case .gated: "gated 200"
            case .slow(let milliseconds): "200 after \(milliseconds) ms"
            case .slowBody: "slow body"
            case .drop: "drop, then 200"
            case .retryable: "503, then 200"
            case .stall: "stall"
            }
        }
    }

    let server: TestServer
    private let behaviours = Locked<[String: Behaviour]>([:])
    private let gates = Locked<[String: TestServer.Gate]>([:])
    private let sent = Locked<Set<String>>([])
    private let attempts = Locked<[String: Int]>([:])
    private let hooks = Locked<[String: @Sendable () -> Void]>([:])

    /// Starts the server on 127.0.0.1, port 0.
    init() throws {
        server = try TestServer()
        server.route("/once/*") { [behaviours, gates, sent, attempts, hooks] request in
            let path = request.path
            let attempt = attempts.withLock { counts -> Int in
                counts[path, default: 0] += 1
                return counts[path]!
            }
            let behaviour = behaviours.withLock { $0[path] } ?? .slow(milliseconds: 0)
            return Self.reply(behaviour, attempt: attempt, path: path,
                              gate: gates.withLock { $0[path] } ?? TestServer.Gate(),
                              sent: {
                                  hooks.withLock { $0.removeValue(forKey: path) }?()
                                  _ = sent.withLock { $0.insert(path) }
                              })
        }
    }

    /// Plans how `path` is answered (before its request is sent).
    func plan(_ path: String, _ behaviour: Behaviour) {
        behaviours.withLock { $0[path] = behaviour }
        if case .gated = behaviour { gates.withLock { $0[path] = TestServer.Gate() } }
    }

    /// Opens the gate of a gated path (a path without one is ignored).
    func open(_ path: String) {
        gates.withLock { $0[path] }?.open()
    }

    /// Runs `hook` on the server's event loop the moment the gated answer of `path` is in the
    /// socket (set it before opening the gate): the test's way to act at a precise point of the
    /// server's progress.
    func whenSent(_ path: String, _ hook: @escaping @Sendable () -> Void) {
        hooks.withLock { $0[path] = hook }
    }

    /// Drops the hook of `path`, if it has not run.
    func forgetHook(_ path: String) {
        _ = hooks.withLock { $0.removeValue(forKey: path) }
    }

    /// Whether the gate of `path` is open.
    func isOpen(_ path: String) -> Bool {
        gates.withLock { $0[path] }?.isOpen ?? false
    }

    /// Whether the gated answer of `path` has gone into the socket.
    func hasSent(_ path: String) -> Bool {
        sent.withLock { $0.contains(path) }
    }

    /// How many attempts at `path` reached the server.
    func attempts(_ path: String) -> Int {
        attempts.withLock { $0[path] ?? 0 }
    }

    /// The body every 200 for `path` carries.
    static func body(for path: String) -> Data { Data(path.utf8) }

    private static func reply(_ behaviour: Behaviour, attempt: Int, path: String, gate: TestServer.Gate,
                              sent: @escaping @Sendable () -> Void) -> TestServer.Reply {
        let body = body(for: path)
        let ok = TestServer.Reply.response(status: 200, headers: [("Connection", "close")], body: body)
        switch behaviour {
        case .gated:
            let head = "HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            return .whenOpen(gate, .script([.send(Data(head.utf8) + body), .whenSent(sent), .close]))
        case .slow(let milliseconds):
            return .delayed(.milliseconds(milliseconds), ok)
        case .slowBody:
            var steps: [TestServer.Step] = [.send("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n")]
            let piece = (body.count + 3) / 4
            for start in stride(from: 0, to: body.count, by: piece) {
                if start > 0 { steps.append(.pause(.milliseconds(25))) }
                steps.append(.send(body.subdata(in: start..<min(start + piece, body.count))))
            }
            return .script(steps + [.close])
        case .drop:
            return attempt == 1 ? .script([.close]) : ok
        case .retryable:
            return attempt == 1 ? .response(status: 503, headers: [("Connection", "close")]) : ok
        case .stall:
            return .script([.stall])
        }
    }
}
