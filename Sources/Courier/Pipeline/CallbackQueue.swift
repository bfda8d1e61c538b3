import Foundation
import Synchronization

/// A connection's ``HTTPConnection/callbackQueue`` as its requests use it: every trip to it
/// (each one wakes a thread) is counted, so that tests can check which events make one.
struct CallbackQueue: Sendable {
    private final class Counter: Sendable {
        let trips = Atomic<Int>(0)
    }

    /// The queue every delegate call and closure runs on.
    let queue: DispatchQueue
    private let counter = Counter()

    init(_ queue: DispatchQueue) {
        self.queue = queue
    }

    /// The number of trips made so far.
    var trips: Int { counter.trips.load(ordering: .relaxed) }

    /// Runs `work` on the queue.
    func async(_ work: @escaping @Sendable () -> Void) {
        counter.trips.add(1, ordering: .relaxed)
        queue.async(execute: work)
    }
}
