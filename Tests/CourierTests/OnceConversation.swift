import Courier
import CourierTestServer
import Foundation

/// The plan of one terminal-callback conversation (``TerminalCallbackConversationTests``), drawn
/// from a seeded random stream, and the model of the endings each request may have.
struct OnceConversation: Sendable, CustomStringConvertible {
    /// How the user starts a request and hears its end.
    enum Style: CaseIterable, Sendable {
        /// `try await connection.send(_:)` in a task of its own; cancelled by cancelling that task.
        case async
        /// `start(_:completion:)`.
        case completion
        /// `start(_:onDidStart:onSuccess:onError:)`.
        case closures
        /// `start(_:)` with no closure: only the delegate hears it.
        case delegate
    }

    /// What the test does to one request.
    enum Action: Sendable, CustomStringConvertible {
        case none
        /// Cancel right after the start (gated and stalled requests: before any answer exists).
        case cancelAtStart
        /// Cancel once the server holds the request (or after 300 ms), its gate still closed.
        case cancelWhileHeld
        /// Open the gate, wait until the answer is in the socket, spin for this share (in
        /// thousandths) of the time the client was measured to take to deliver an answer, then cancel.
        case cancelRacingAnswer(permille: Int)
        /// Cancel once the request's terminal callback has run.
        case cancelAfterEnd
        /// Cancel this long after the start.
        case cancelAfter(milliseconds: Int)
        /// A stalled request left to its timeout (`deadline` false) or deadline.
        case expire(deadline: Bool)
        /// A slow body cut by a 15 ms deadline.
        case deadlineMidBody

        var description: String {
            switch self {
            case .none: "none"
            case .cancelAtStart: "cancel at start"
            case .cancelWhileHeld: "cancel while held"
            case .cancelRacingAnswer(let permille): "cancel \(permille)‰ of the client's time after the answer was sent"
            case .cancelAfterEnd: "cancel after the end"
            case .cancelAfter(let milliseconds): "cancel after \(milliseconds) ms"
            case .expire(let deadline): deadline ? "deadline passes" : "timeout passes"
            case .deadlineMidBody: "deadline mid-body"
            }
        }
    }

    /// One request of the conversation.
    struct Request: Sendable, CustomStringConvertible {
        /// The request's place in the conversation.
        let index: Int
        /// Its path on the server, unique in the run.
        let path: String
        /// How it is started and heard.
        let style: Style
        /// How the server answers it.
        let behaviour: OnceConversationServer.Behaviour
        /// What the test does to it.
        let action: Action
        /// The request as sent: its timeout, deadline, lifetime and index header set.
        let request: HTTPRequest

        var description: String {
            "#\(index) \(path) \(style), \(behaviour), \(action), timeout \(request.timeout.map { "\($0)" } ?? "-"), deadline \(request.deadline.map { "\($0)" } ?? "-")"
        }
    }

    /// What the test knew when it cancelled a request, or released the connection.
    enum Knowledge: Sendable {
        /// No answer could exist yet: the request must end cancelled (or, at a release, silently).
        case beforeAnswer
        /// The answer may have been on its way: either ending is allowed.
        case racing
        /// The request's terminal callback had run: nothing may change.
        case ended
    }

    /// Whether the connection retries (2 attempts, 2–8 ms backoff) or never does.
    let retries: Bool
    /// 0: the connection's own queue; 1: a serial queue of the test's; 2: one that targets a global queue.
    let queueKind: Int
    /// The connection's timeout (`nil`: the global default).
    let connectionTimeout: Duration?
    /// Whether `async` requests run on a task of their own rather than in their caller's.
    let ownTask: Bool
    /// Whether every request is unmanaged.
    let unmanaged: Bool
    /// The test drops its reference to the connection at the end, with requests still held.
    let releases: Bool
    /// Before which action step `cancelAll` runs, if it does.
    let cancelAllStep: Int?
    /// The requests, in the order they start.
    let requests: [Request]

    var description: String {
        "retries \(retries), queue \(queueKind), timeout \(connectionTimeout.map { "\($0)" } ?? "-"), ownTask \(ownTask), unmanaged \(unmanaged), releases \(releases), cancelAll before step \(cancelAllStep.map(String.init) ?? "-")"
    }

    /// Draws conversation `number`: 10 to 16 requests; drops only where `drops` (the native
    /// transport: libcurl repeats requests by rules of its own).
    init(number: Int, random: inout SeededRandom, drops: Bool) {
        retries = random.next() % 2 == 0
        queueKind = Int(random.next() % 3)
        connectionTimeout = [nil, .seconds(5), .seconds(10)][Int(random.next() % 3)]
        ownTask = random.next() % 2 == 0
        // Conversation 1 always releases a connection of unmanaged requests, its first one held.
        unmanaged = random.next() % 3 == 0 || number == 1
        releases = (unmanaged && random.next() % 2 == 0) || number == 1
        let count = 10 + Int(random.next() % 7)
        let cancelAllStep = random.next() % 4 == 0 ? Int(random.next() % UInt64(count)) : nil
        // Conversation 1 keeps its held request from `cancelAll`; conversation 2 always calls it.
        self.cancelAllStep = number == 1 ? nil : number == 2 ? cancelAllStep ?? count / 2 : cancelAllStep
        var requests: [Request] = []
        for index in 0..<count {
            let path = "/once/c\(number)-r\(index)"
            var style = Style.allCases[Int(random.next() % 4)]
            if releases, style == .async { style = .completion }  // an `async` caller holds its connection
            var behaviour = Self.drawBehaviour(&random, drops: drops)
            var action = Self.drawAction(for: behaviour, &random, sweep: number * 16 + index)
            if number == 1, index == 0 {  // held, without a cancel, when the connection goes
                (behaviour, action) = (.gated, .none)
            }
            var request = HTTPRequest(.get, path, headers: [OnceLedger.indexHeader: "\(index)"])
            request.lifetime = unmanaged ? .unmanaged : .managed
            request.timeout = [nil, .seconds(5), .seconds(10)][Int(random.next() % 3)]
            request.deadline = random.next() % 4 == 0 ? .seconds(20) : nil
            switch action {
            case .expire(let deadline):
                let limit = Duration.milliseconds(150 + Int(random.next() % 150))
                if deadline { request.deadline = limit } else { request.timeout = limit }
            case .deadlineMidBody:
                request.deadline = .milliseconds(15)
            default:
                break
            }
            requests.append(Request(index: index, path: path, style: style, behaviour: behaviour, action: action, request: request))
        }
        self.requests = requests
    }

    private static func drawBehaviour(_ random: inout SeededRandom, drops: Bool) -> OnceConversationServer.Behaviour {
        switch random.next() % 20 {
        case 0..<9: .gated
        case 9..<10: .slow(milliseconds: Int(random.next() % 40))
        case 10..<12: .slowBody
        case 12..<14: drops ? .drop : .retryable
        case 14..<16: .retryable
        default: .stall
        }
    }

    /// An action that fits `behaviour`; a race's delay sweeps 0.5 to 1.3 times the client's measured
    /// time to deliver an answer, in 31 steps across the run's requests (`sweep`): that time is
    /// far longer in a debug or sanitized build, or on a loaded machine, than in a release build.
    private static func drawAction(for behaviour: OnceConversationServer.Behaviour, _ random: inout SeededRandom, sweep: Int) -> Action {
        let roll = random.next() % 20
        switch behaviour {
        case .gated:
            switch roll {
            case 0..<2: return .none
            case 2..<4: return .cancelAtStart
            case 4..<6: return .cancelWhileHeld
            case 6..<17: return .cancelRacingAnswer(permille: 500 + (sweep * 7 % 31) * 27)
            default: return .cancelAfterEnd
            }
        case .stall:
            switch roll {
            case 0..<10: return .expire(deadline: roll % 2 == 0)
            case 10..<13: return .cancelAtStart
            default: return .cancelWhileHeld
            }
        case .slowBody:
            switch roll {
            case 0..<6: return .deadlineMidBody
            case 6..<12: return .cancelAfter(milliseconds: Int(random.next() % 80))
            case 12..<16: return .none
            default: return .cancelAfterEnd
            }
        case .slow, .drop, .retryable:
            switch roll {
            case 0..<8: return .none
            case 8..<16: return .cancelAfter(milliseconds: Int(random.next() % 40))
            default: return .cancelAfterEnd
            }
        }
    }

    /// How `request` ends when nothing interrupts it (its own timeout or deadline included).
    func natural(_ request: Request) -> OnceLedger.Ending {
        switch (request.behaviour, request.action) {
        case (.stall, .expire(let deadline)):
            .failed((deadline ? HTTPConnectionError.deadlineExceeded : .timedOut).kindName)
        case (_, .deadlineMidBody):
            .failed(HTTPConnectionError.deadlineExceeded.kindName)
        case (.drop, _):
            retries ? .answered(200) : .failed(HTTPConnectionError.connectionLost.kindName)
        case (.retryable, _):
            retries ? .answered(200) : .failed(HTTPConnectionError.unacceptableStatus.kindName)
        case (.stall, _):
            .failed("(a stalled request that only a cancel can end)")
        case (.gated, _), (.slow, _), (.slowBody, _):
            .answered(200)
        }
    }

    /// The endings the model allows `request`, given what the test knew at each of its cancels.
    func allowed(_ request: Request, cancels: [Knowledge]) -> Set<OnceLedger.Ending> {
        let cancelled = OnceLedger.Ending.failed(HTTPConnectionError.cancelled.kindName)
        if cancels.contains(where: { if case .beforeAnswer = $0 { true } else { false } }) { return [cancelled] }
        if cancels.contains(where: { if case .racing = $0 { true } else { false } }) { return [natural(request), cancelled] }
        return [natural(request)]
    }
}
