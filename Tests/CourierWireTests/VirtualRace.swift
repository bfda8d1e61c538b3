import CourierWire

/// Runs a ``HappyEyeballsMachine`` the way the native transport's connector does, but against
/// scripted addresses and a virtual clock: no sockets, no sleeps. Each address connects or
/// fails after a scripted time, fails at once, or never answers (a black hole).
struct VirtualRace {
    /// What connecting to one address does.
    enum Script {
        case connects(after: Duration)
        case fails(after: Duration)
        case failsAtOnce
        case blackHole
    }

    /// How the race ended.
    enum Outcome: Equatable {
        case won(attempt: Int, at: Duration)
        case failed(HappyEyeballsMachine.Failure, at: Duration)
        case unfinished
    }

    static let refused = SocketError(operation: "connect", errno: 111)

    private(set) var machine: HappyEyeballsMachine
    private let scripts: [SocketAddress: Script]
    private(set) var now = Duration.zero
    /// When each attempt started, by attempt number.
    private(set) var started: [Int: Duration] = [:]
    /// Every attempt the driver closed, in order.
    private(set) var closed: [Int] = []
    private(set) var outcome = Outcome.unfinished
    private var timer: (generation: Int, at: Duration)?
    private var answers: [(at: Duration, attempt: Int, connects: Bool)] = []
    private var queued: [HappyEyeballsMachine.Action] = []

    init(attemptDelay: Duration = .milliseconds(250), _ scripts: [(SocketAddress, Script)]) {
        machine = HappyEyeballsMachine(attemptDelay: attemptDelay)
        self.scripts = Dictionary(scripts, uniquingKeysWith: { first, _ in first })
    }

    /// Resolves to the scripted addresses (in the given order) and runs until the race ends,
    /// `timeout` passes (then the machine hears the overall timeout), or the clock reaches
    /// `pause` (then nothing more happens until the caller feeds an event).
    mutating func run(_ addresses: [SocketAddress], timeout: Duration = .seconds(10), pause: Duration? = nil) {
        perform(machine.resolved(addresses))
        // Bounded: every turn consumes a timer or an answer, and there are finitely many of both.
        for _ in 0..<1_000 where outcome == .unfinished {
            let nextAnswer = answers.min { $0.at < $1.at }
            let next = min(timer?.at ?? timeout, nextAnswer?.at ?? timeout, timeout)
            if let pause, next > pause {
                now = pause
                return
            }
            now = next
            if let answer = nextAnswer, answer.at == next {
                answers.removeAll { $0.attempt == answer.attempt }
                perform(answer.connects ? machine.attemptConnected(answer.attempt)
                                        : machine.attemptFailed(answer.attempt, error: Self.refused))
            } else if let armed = timer, armed.at == next {
                timer = nil
                perform(machine.attemptDelayElapsed(generation: armed.generation))
            } else {
                perform(machine.timedOut())
            }
        }
    }

    /// Feeds an event from outside (a cancel, a late answer) and performs its actions.
    mutating func feed(_ event: (inout HappyEyeballsMachine) -> [HappyEyeballsMachine.Action]) {
        perform(event(&machine))
    }

    private mutating func perform(_ actions: [HappyEyeballsMachine.Action]) {
        queued += actions
        while !queued.isEmpty {
            switch queued.removeFirst() {
            case .startAttempt(let attempt, let address):
                started[attempt] = now
                switch scripts[address] ?? .blackHole {
                case .connects(let delay): answers.append((now + delay, attempt, true))
                case .fails(let delay): answers.append((now + delay, attempt, false))
                case .failsAtOnce: queued += machine.attemptFailed(attempt, error: Self.refused)
                case .blackHole: break
                }
            case .armAttemptTimer(let generation, let delay):
                timer = (generation, now + delay)
            case .cancelAttemptTimer:
                timer = nil
            case .closeAttempt(let attempt):
                closed.append(attempt)
                answers.removeAll { $0.attempt == attempt }
            case .connected(let attempt):
                outcome = .won(attempt: attempt, at: now)
            case .failed(let failure):
                outcome = .failed(failure, at: now)
            }
        }
    }
}
