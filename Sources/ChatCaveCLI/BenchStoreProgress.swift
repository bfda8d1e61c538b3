import Foundation
import Synchronization

/// Counts the posts of `chatcave bench-store` and times each tenth of them.
///
/// Posts are numbered as they are handed out (``next()``); a slice ends when its last post is
/// acknowledged (``finished()``), so the rate of slice *k* is its posts divided by the time
/// from the end of slice *k − 1* to the end of slice *k*.
final class BenchStoreProgress: Sendable {
    /// One tenth of the run.
    struct Slice: Sendable {
        /// 1 to 10.
        let number: Int
        /// Posts in the slice.
        let posts: Int
        /// How long the slice took.
        let duration: Duration

        /// Posts per second over the slice.
        var postsPerSecond: Double { Double(posts) / BenchStoreProgress.seconds(duration) }
    }

    private struct State {
        var handedOut = 0
        var finished = 0
        var sliceStart: ContinuousClock.Instant
        var slices: [Slice] = []
    }

    /// How many posts the run makes.
    let total: Int
    private let state: Mutex<State>
    private let onSlice: @Sendable (Slice) -> Void

    /// Starts the clock for `total` posts; `onSlice` hears each slice as it ends.
    init(total: Int, onSlice: @escaping @Sendable (Slice) -> Void) {
        self.total = total
        self.onSlice = onSlice
        self.state = Mutex(State(sliceStart: .now))
    }

    /// The number of the next post to make, or `nil` when every post was handed out.
    func next() -> Int? {
        state.withLock { state in
            guard state.handedOut < total else { return nil }
            state.handedOut += 1
            return state.handedOut
        }
    }

    /// Records that one post was acknowledged, ending a slice when it was the slice's last.
    func finished() {
        let ended = state.withLock { state -> Slice? in
            state.finished += 1
            let number = state.slices.count + 1
            guard state.finished == Self.end(ofSlice: number, total: total) else { return nil }
            let now = ContinuousClock.now
            let slice = Slice(number: number, posts: state.finished - Self.end(ofSlice: number - 1, total: total),
                              duration: now - state.sliceStart)
            state.slices.append(slice)
            state.sliceStart = now
            return slice
        }
        if let ended { onSlice(ended) }
    }

    /// The slices that ended so far.
    var slices: [Slice] { state.withLock { $0.slices } }

    /// The number of posts acknowledged when slice `number` (0 to 10) ends.
    static func end(ofSlice number: Int, total: Int) -> Int {
        total * number / 10
    }

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
