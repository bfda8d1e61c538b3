/// A binary min-heap of pending timers ordered by deadline, then by scheduling order.
///
/// Confined to its event loop's thread. Cancelled timers stay in the heap until
/// they reach the top or the heap is compacted (see ``compact()``).
struct TimerHeap {
    struct Entry {
        let deadline: UInt64
        let sequence: UInt64
        let timer: EventLoop.Timer

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private(set) var entries: [Entry] = []
    private var nextSequence: UInt64 = 0

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    var nearestDeadline: UInt64? { entries.first?.deadline }

    mutating func insert(_ timer: EventLoop.Timer) {
        nextSequence &+= 1
        entries.append(Entry(deadline: timer.deadline, sequence: nextSequence, timer: timer))
        siftUp(entries.count - 1)
    }

    /// Removes and returns the earliest timer if its deadline is at or before `now`.
    mutating func popExpired(now: UInt64) -> EventLoop.Timer? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(0)
        }
        return first.timer
    }

    /// Drops every cancelled timer and rebuilds the heap.
    ///
    /// - Returns: How many entries were dropped.
    mutating func compact() -> Int {
        let before = entries.count
        entries.removeAll { !$0.timer.isPending }
        var index = entries.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
        return before - entries.count
    }

    mutating func removeAll() -> [EventLoop.Timer] {
        let timers = entries.map(\.timer)
        entries = []
        return timers
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let count = entries.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            var best = left
            let right = left + 1
            if right < count, entries[right].precedes(entries[left]) { best = right }
            guard entries[best].precedes(entries[parent]) else { return }
            entries.swapAt(best, parent)
            parent = best
        }
    }
}
