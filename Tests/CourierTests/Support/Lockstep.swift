import CourierTestSupport
import Foundation

/// Turns that a scripted peer's thread and a test's task take in order: each side says which
/// step it has finished and waits, at most 20 s, for the other side to finish one. A test that
/// orders its events this way waits on what it assumes, never on a delay.
final class Lockstep: Sendable {
    private let peerDone = Locked(0)
    private let testDone = Locked(0)

    /// The peer finished `step`.
    func peerFinished(_ step: Int) {
        peerDone.withLock { $0 = max($0, step) }
    }

    /// The test finished `step`.
    func testFinished(_ step: Int) {
        testDone.withLock { $0 = max($0, step) }
    }

    /// On the peer's thread: blocks until the test has finished `step`.
    /// - Returns: `false` when 20 s passed first.
    func peerWaits(for step: Int) -> Bool {
        eventuallyBlocking(seconds: 20) { testDone.withLock { $0 >= step } }
    }

    /// In the test: waits until the peer has finished `step`.
    /// - Returns: `false` when 20 s passed first.
    func testWaits(for step: Int) async -> Bool {
        await eventually { peerDone.withLock { $0 >= step } }
    }
}
