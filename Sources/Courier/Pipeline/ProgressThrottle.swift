/// Decides which progress reports reach the caller: at most one per 1% of the expected total or
/// per 100 ms, whichever comes first, and always the one that reaches the total. A report held
/// back is kept as ``pending``, so that the owner can deliver it when the request ends (the last
/// report of a body of unknown length is otherwise indistinguishable from any other).
///
/// A value type with no clock of its own: the caller passes the time, so tests drive it.
struct ProgressThrottle: Sendable {
    /// The smallest share of the total between two reports.
    static let fraction = 0.01
    /// The shortest time between two reports.
    static let interval = Duration.milliseconds(100)

    private var lastBytes: Int64?
    private var lastTime: ContinuousClock.Instant?
    /// The latest report held back, if the last one offered was.
    private(set) var pending: (bytes: Int64, total: Int64?)?

    /// Whether to deliver this report now.
    /// - Parameters:
    ///   - bytes: the bytes so far.
    ///   - total: the expected total, if known.
    ///   - now: the current time.
    /// - Returns: `true` to deliver it (then nothing is pending); `false` to hold it back.
    mutating func offer(_ bytes: Int64, total: Int64?, now: ContinuousClock.Instant) -> Bool {
        if bytes == lastBytes {  // already delivered: never the same value twice
            pending = nil
            return false
        }
        var due = lastBytes == nil || bytes < (lastBytes ?? 0)  // the first report, or a new attempt
        if let total, bytes >= total { due = true }
        if let lastTime, now - lastTime >= Self.interval { due = true }
        if let total, total > 0, let lastBytes, Double(bytes - lastBytes) >= Double(total) * Self.fraction { due = true }
        guard due else {
            pending = (bytes, total)
            return false
        }
        lastBytes = bytes
        lastTime = now
        pending = nil
        return true
    }

    /// Takes the report held back, if any.
    mutating func takePending() -> (bytes: Int64, total: Int64?)? {
        defer { pending = nil }
        if let pending {
            lastBytes = pending.bytes
        }
        return pending
    }
}
