/// The first-in, first-out queue of exchanges waiting for a connection of one pool.
///
/// Exchanges that end while queued (cancelled, timed out) stay in place and are skipped when
/// they reach the front, so leaving the queue is O(1); ``liveCount`` counts only those still
/// waiting. Loop-confined, as part of its ``HostPool``.
struct NativeWaiterQueue {
    private var storage: [NativeExchange?] = []
    private var head = 0
    /// The exchanges still waiting.
    private(set) var liveCount = 0

    /// Adds an exchange at the back.
    mutating func append(_ exchange: NativeExchange) {
        storage.append(exchange)
        liveCount += 1
    }

    /// Records that a queued exchange ended where it stands.
    mutating func left() {
        liveCount -= 1
    }

    /// Removes and returns the oldest exchange still waiting, moving it out of the waiting phase.
    mutating func popLive() -> NativeExchange? {
        while head < storage.count {
            let candidate = storage[head]
            storage[head] = nil
            head += 1
            if let candidate, candidate.phase == .waiting {
                liveCount -= 1
                candidate.enter(.active)
                compactIfNeeded()
                return candidate
            }
        }
        compactIfNeeded()
        return nil
    }

    /// Removes every exchange still waiting.
    mutating func removeAll() -> [NativeExchange] {
        var live: [NativeExchange] = []
        while let exchange = popLive() { live.append(exchange) }
        storage = []
        head = 0
        liveCount = 0
        return live
    }

    private mutating func compactIfNeeded() {
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 1024)
            head = 0
        } else if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}
