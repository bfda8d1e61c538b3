import Courier
import CourierTestSupport
import Foundation

/// A transport observer that, once armed, holds the event loop inside the next body callback
/// (the transport calls it just before it hands those bytes to the reader's buffer) until the
/// test releases it, or 20 s pass: the test can act while the loop is in the middle of a read.
final class BodyGate: TransportObserver {
    private enum Phase { case open, armed, holding, released }
    private let phase = Locked(Phase.open)

    var observesBody: Bool { true }

    func transportDidReceiveHead(_ head: HTTPResponse.Head) {}

    /// Holds the loop here when armed.
    func transportDidReceiveBody(_ data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        let hold = phase.withLock { phase -> Bool in
            guard phase == .armed else { return false }
            phase = .holding
            return true
        }
        guard hold else { return }
        _ = eventuallyBlocking(seconds: 20) { phase.withLock { $0 == .released } }
    }

    /// Holds the loop at the next body callback.
    func arm() {
        phase.withLock { $0 = .armed }
    }

    /// Waits until the loop is held.
    /// - Returns: `false` when 20 s passed first.
    func waitUntilHolding() async -> Bool {
        await eventually { phase.withLock { $0 == .holding } }
    }

    /// Lets the held loop go on (and the gate stays open).
    func release() {
        phase.withLock { $0 = .released }
    }
}
