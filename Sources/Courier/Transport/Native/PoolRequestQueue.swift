/// The first-in, first-out queue of requests waiting for a connection of one pool, for
/// ``PoolStateMachine``.
///
/// A request that leaves from the middle (cancelled, timed out) is only marked, and skipped when
/// it reaches the front, so leaving is O(1); ``count`` counts the requests still waiting. Request
/// ids are never reused, so a mark cannot hit a later request.
struct PoolRequestQueue {
    private var storage: [PoolStateMachine.RequestID] = []
    private var head = 0
    private var removed: Set<PoolStateMachine.RequestID> = []

    /// The requests still waiting.
    private(set) var count = 0

    /// Adds a request at the back.
    mutating func append(_ id: PoolStateMachine.RequestID) {
        storage.append(id)
        count += 1
    }

    /// Takes a waiting request out of the queue, wherever it stands. `id` must be in the queue:
    /// ``PoolStateMachine`` calls this only for a request in its `waiting` state, and a request
    /// leaves that state as it is popped or removed, so no id is removed twice or after its pop.
    mutating func remove(_ id: PoolStateMachine.RequestID) {
        guard removed.insert(id).inserted else { return }
        count -= 1
    }

    /// Removes and returns the oldest request still waiting.
    mutating func popFirst() -> PoolStateMachine.RequestID? {
        while head < storage.count {
            let candidate = storage[head]
            head += 1
            if removed.remove(candidate) != nil { continue }
            count -= 1
            compactIfNeeded()
            return candidate
        }
        compactIfNeeded()
        return nil
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
