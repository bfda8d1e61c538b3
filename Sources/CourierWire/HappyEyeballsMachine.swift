/// The connection race of Happy Eyeballs (RFC 8305) as a pure state machine: it takes events
/// (addresses resolved, an attempt connected or failed, the attempt-delay timer fired, the
/// overall timeout fired, cancelled) and returns the actions a driver performs with real sockets.
///
/// It does no I/O and reads no clock, so every transition can be tested with virtual time.
/// The rules:
/// - The resolved addresses are interleaved by family: the resolver's first family first, then
///   alternating (``interleave(_:)``), so a broken IPv6 or IPv4 path costs one attempt delay.
/// - One attempt starts at once; while earlier attempts are pending, the next starts when the
///   attempt delay passes (``Action/armAttemptTimer(generation:delay:)``). An attempt that fails
///   starts the next at once.
/// - The first attempt to connect wins (``Action/connected(_:)``); every other pending attempt is
///   closed, including one that connects in the same turn after the winner.
/// - When every attempt failed, or the overall timeout fired, the race fails with the most
///   relevant error (``Failure``).
///
/// Drive it in order: execute the returned actions first to last, and feed the events they
/// cause after them. Every attempt the machine starts is ended by ``Action/closeAttempt(_:)`` or
/// ``Action/connected(_:)`` (a late event about an ended attempt may repeat its closing, which
/// must then do nothing), and a race ends in exactly one ``Action/connected(_:)`` or
/// ``Action/failed(_:)``, unless it is cancelled (which closes everything and reports nothing).
public struct HappyEyeballsMachine: Sendable {
    /// What the driver does next.
    public enum Action: Sendable, Hashable {
        /// Open a socket and start connecting to `address` (the attempt's number is its index
        /// in ``addresses``); report the outcome with ``attemptConnected(_:)`` or
        /// ``attemptFailed(_:error:)``, even when it fails at once.
        case startAttempt(Int, SocketAddress)
        /// Schedule the attempt-delay timer, replacing any scheduled before; when it fires, call
        /// ``attemptDelayElapsed(generation:)`` with `generation`.
        case armAttemptTimer(generation: Int, delay: Duration)
        /// Cancel the attempt-delay timer.
        case cancelAttemptTimer
        /// Close the attempt's socket (a loser, or one that failed). Closing an attempt that is
        /// already closed must do nothing.
        case closeAttempt(Int)
        /// The attempt connected first: the caller keeps its socket. The race is over.
        case connected(Int)
        /// The race failed. Every attempt is closed by the actions before this one.
        case failed(Failure)
    }

    /// Why a race failed.
    public enum Failure: Error, Sendable, Hashable {
        /// The host name could not be resolved.
        case resolutionFailed(SocketError)
        /// The resolver returned no address.
        case noAddresses
        /// Every address was tried and every attempt failed; `last` is the latest failure.
        case allAttemptsFailed(last: SocketError)
        /// The overall timeout fired first; `last` is the latest attempt failure, if any.
        case timedOut(last: SocketError?)
    }

    /// Where the race is.
    public enum Phase: Sendable, Hashable {
        /// Waiting for the addresses.
        case resolving
        /// Attempts are pending or due.
        case connecting
        /// The attempt with this number won.
        case connected(Int)
        /// It failed, timed out or was cancelled.
        case finished
    }

    /// The time between the starts of two attempts while earlier ones are pending.
    public let attemptDelay: Duration
    /// Where the race is.
    public private(set) var phase = Phase.resolving
    /// The addresses in the order they are tried (after ``interleave(_:)``); attempt `n` is
    /// `addresses[n]`.
    public private(set) var addresses: [SocketAddress] = []
    /// The attempts started and not yet ended, oldest first.
    public private(set) var pendingAttempts: [Int] = []
    /// The latest attempt failure, if any.
    public private(set) var lastError: SocketError?
    private var nextAttempt = 0
    private var timerGeneration = 0
    private var timerArmed = false

    /// The shortest attempt delay RFC 8305 allows.
    public static let minimumAttemptDelay = Duration.milliseconds(10)

    /// Creates a machine waiting for addresses.
    ///
    /// - Parameter attemptDelay: The "connection attempt delay" of RFC 8305, 250 ms there;
    ///   values below ``minimumAttemptDelay`` count as that minimum.
    public init(attemptDelay: Duration = .milliseconds(250)) {
        self.attemptDelay = max(attemptDelay, Self.minimumAttemptDelay)
    }

    // MARK: - Events

    /// The addresses arrived (from a resolver, an override or a literal).
    ///
    /// - Parameter resolved: The addresses in the resolver's order; duplicates are tried once.
    /// - Returns: The first attempt and its timer, or ``Failure/noAddresses``.
    public mutating func resolved(_ resolved: [SocketAddress]) -> [Action] {
        guard phase == .resolving else { return [] }
        addresses = Self.interleave(resolved)
        if addresses.isEmpty { return finish(with: .noAddresses) }
        phase = .connecting
        return startNextAttempt()
    }

    /// Resolving failed.
    ///
    /// - Parameter error: The resolver's error.
    /// - Returns: ``Failure/resolutionFailed(_:)``, unless the race already ended.
    public mutating func resolutionFailed(_ error: SocketError) -> [Action] {
        guard phase == .resolving else { return [] }
        return finish(with: .resolutionFailed(error))
    }

    /// An attempt connected.
    ///
    /// - Parameter attempt: The attempt's number.
    /// - Returns: The win (closing every other attempt), or the attempt's closing when another
    ///   attempt already won or the race is over.
    public mutating func attemptConnected(_ attempt: Int) -> [Action] {
        guard phase == .connecting, let position = pendingAttempts.firstIndex(of: attempt) else {
            return phase == .connected(attempt) ? [] : [.closeAttempt(attempt)]
        }
        pendingAttempts.remove(at: position)
        phase = .connected(attempt)
        var actions = stopTimerAndCloseAll()
        actions.append(.connected(attempt))
        return actions
    }

    /// An attempt failed (at once, or later when the socket reported the error).
    ///
    /// - Parameters:
    ///   - attempt: The attempt's number.
    ///   - error: Why it failed.
    /// - Returns: Its closing and the next attempt at once; or the race's failure when it was
    ///   the last one.
    public mutating func attemptFailed(_ attempt: Int, error: SocketError) -> [Action] {
        guard phase == .connecting, let position = pendingAttempts.firstIndex(of: attempt) else {
            return phase == .connected(attempt) ? [] : [.closeAttempt(attempt)]
        }
        pendingAttempts.remove(at: position)
        lastError = error
        var actions: [Action] = [.closeAttempt(attempt)]
        if nextAttempt < addresses.count {
            actions += startNextAttempt()
        } else if pendingAttempts.isEmpty {
            actions += finish(with: .allAttemptsFailed(last: error))
        }
        return actions
    }

    /// The attempt-delay timer fired.
    ///
    /// - Parameter generation: The generation of the ``Action/armAttemptTimer(generation:delay:)``
    ///   that scheduled it; a timer that was replaced or cancelled meanwhile is ignored.
    /// - Returns: The next attempt (and the timer for the one after it).
    public mutating func attemptDelayElapsed(generation: Int) -> [Action] {
        guard phase == .connecting, timerArmed, generation == timerGeneration else { return [] }
        timerArmed = false
        return startNextAttempt()
    }

    /// The overall connect timeout fired.
    ///
    /// - Returns: Every pending attempt closed and ``Failure/timedOut(last:)``, unless the race
    ///   already ended.
    public mutating func timedOut() -> [Action] {
        guard phase == .resolving || phase == .connecting else { return [] }
        return finish(with: .timedOut(last: lastError))
    }

    /// The caller gave up.
    ///
    /// - Returns: Every pending attempt closed and the timer cancelled; nothing is reported.
    public mutating func cancel() -> [Action] {
        guard phase == .resolving || phase == .connecting else { return [] }
        phase = .finished
        return stopTimerAndCloseAll()
    }

    // MARK: - Ordering

    /// Orders addresses as RFC 8305 section 4 asks: the family of the first address first, then
    /// alternating between the families, each family keeping the resolver's order. Duplicates
    /// are dropped.
    ///
    /// - Parameter addresses: The resolver's answer.
    /// - Returns: `[v6a, v6b, v4a, v4b]` becomes `[v6a, v4a, v6b, v4b]`.
    public static func interleave(_ addresses: [SocketAddress]) -> [SocketAddress] {
        var unique: [SocketAddress] = []
        for address in addresses where !unique.contains(address) { unique.append(address) }
        guard let first = unique.first?.family else { return [] }
        let preferred = unique.filter { $0.family == first }
        let other = unique.filter { $0.family != first }
        var ordered: [SocketAddress] = []
        ordered.reserveCapacity(unique.count)
        for index in 0..<max(preferred.count, other.count) {
            if index < preferred.count { ordered.append(preferred[index]) }
            if index < other.count { ordered.append(other[index]) }
        }
        return ordered
    }

    // MARK: - Steps

    /// Starts the next attempt; arms the timer when another address is left after it.
    private mutating func startNextAttempt() -> [Action] {
        guard nextAttempt < addresses.count else { return [] }
        let attempt = nextAttempt
        nextAttempt += 1
        pendingAttempts.append(attempt)
        var actions: [Action] = []
        // The timer comes first: a driver whose attempt ends at once (and feeds the next event
        // before this list is done) then never arms a timer after the race moved on.
        if nextAttempt < addresses.count {
            timerGeneration += 1
            timerArmed = true
            actions.append(.armAttemptTimer(generation: timerGeneration, delay: attemptDelay))
        } else if timerArmed {
            timerArmed = false
            actions.append(.cancelAttemptTimer)
        }
        actions.append(.startAttempt(attempt, addresses[attempt]))
        return actions
    }

    private mutating func finish(with failure: Failure) -> [Action] {
        phase = .finished
        var actions = stopTimerAndCloseAll()
        actions.append(.failed(failure))
        return actions
    }

    private mutating func stopTimerAndCloseAll() -> [Action] {
        var actions: [Action] = []
        if timerArmed {
            timerArmed = false
            actions.append(.cancelAttemptTimer)
        }
        actions += pendingAttempts.map { .closeAttempt($0) }
        pendingAttempts = []
        return actions
    }
}
