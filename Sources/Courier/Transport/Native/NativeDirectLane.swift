import CourierWire
import Foundation
import Synchronization

/// The fast path of the native transport: idle plain-HTTP connections parked where the calling
/// thread can take one and write its request itself, without a hop through the event loop.
///
/// A hop costs an `eventfd` write, a loop wake-up and an `eventfd` read per request; on the hot
/// path of sequential keep-alive requests that is as much work as the request itself. With the
/// lane, the caller claims a parked connection and sends in one `send` call; the loop learns of
/// the request when the response makes the socket readable (or its watchdog ticks) and adopts
/// it, from then on exactly as if it had sent it.
///
/// Safety of the shared descriptor: a caller writes only while holding the connection's
/// ``NativeDirectSlot`` lock with the slot ``NativeDirectSlot/State/parked``; the loop closes or
/// reuses a connection only after moving its slot to ``NativeDirectSlot/State/loop`` under the same
/// lock. So a descriptor is never written after the loop closed it.
final class NativeDirectLane: Sendable {
    /// How often the loop checks a parked connection for a request sent on it (nanoseconds): its
    /// watchdog ticks at this interval, so requests with a shorter timeout take the regular path.
    static let horizon: UInt64 = 1_000_000_000

    private let parked = Mutex<[NativeDirectSlot]>([])

    /// Parks a connection's slot (loop thread; the slot is `.parked` already).
    func park(_ slot: NativeDirectSlot) {
        parked.withLock { $0.append(slot) }
    }

    /// Removes a slot from the parked list, if it is there (loop thread).
    func unpark(_ slot: NativeDirectSlot) {
        parked.withLock { list in
            if let index = list.lastIndex(where: { $0 === slot }) { list.remove(at: index) }
        }
    }

    /// Takes the most recently parked slot (caller thread).
    func take() -> NativeDirectSlot? {
        parked.withLock { $0.popLast() }
    }

    /// Sends a request on a parked connection, if one is free (caller thread).
    /// - Returns: the slot the request went to and whether it was written completely; `nil`
    ///   when no parked connection could take it (nothing was sent).
    ///   - notifyLoop: called (after the slot's lock is released) when the loop waited for it.
    func send(_ wire: [UInt8], ticket: NativeDirectTicket,
              request: (_ written: Int, _ error: SocketError?) -> NativeDirectRequest,
              notifyLoop: (NativeDirectSlot) -> Void) -> (slot: NativeDirectSlot, complete: Bool)? {
        // Bounded: every iteration removes one slot from the list.
        while let slot = take() {
            let outcome = slot.send(wire, ticket: ticket, request: request)
            if slot.takeLoopWaiting() { notifyLoop(slot) }
            switch outcome {
            case .notParked: continue
            case .cancelled:
                park(slot)
                return nil
            case .sent(let complete): return (slot, complete)
            }
        }
        return nil
    }
}

/// The part of one connection that a calling thread may touch: its descriptor and who owns it.
final class NativeDirectSlot: Sendable {
    /// Who may use the connection.
    enum State: Sendable {
        /// The loop owns it (connecting, busy, closing, closed).
        case loop
        /// Idle and parked: a caller may claim it.
        case parked
        /// A caller sent a request on it; the loop has not adopted it yet.
        case sent(NativeDirectRequest)
    }

    /// What a caller's attempt to send on a slot came to.
    enum SendOutcome {
        /// The slot was not parked any more; nothing was sent.
        case notParked
        /// The task was cancelled; nothing was sent.
        case cancelled
        /// The request was handed over: completely written, or not (the loop finishes it).
        case sent(complete: Bool)
    }

    /// The socket descriptor; valid while the slot is not `.loop`.
    let descriptor: Int32
    private let state = Mutex(State.loop)
    /// Set by the loop when it found the lock held by a caller; the caller then tells the loop
    /// once it has released the lock (the loop never waits for a caller's system call).
    private let loopWaiting = Atomic<Bool>(false)

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Marks the slot parked (loop thread).
    func markParked() {
        state.withLock { $0 = .parked }
    }

    /// Whether the slot is parked and unclaimed.
    var isParked: Bool {
        state.withLock { state in
            if case .parked = state { return true }
            return false
        }
    }

    /// Takes the slot back for the loop. Returns the request a caller sent on it meanwhile, if any.
    func reclaim() -> NativeDirectRequest? {
        state.withLock { state -> NativeDirectRequest? in
            defer { state = .loop }
            if case .sent(let request) = state { return request }
            return nil
        }
    }

    /// What ``tryReclaim()`` found.
    enum TryReclaim {
        /// The loop owns the slot now; a caller's request, if one was sent.
        case reclaimed(NativeDirectRequest?)
        /// A caller holds the lock; it will notify the loop when done.
        case busy
    }

    /// Takes the slot back for the loop without waiting for a caller that holds its lock
    /// (loop thread). On `.busy` the caller notifies the loop after releasing the lock.
    func tryReclaim() -> TryReclaim {
        if let pending = tryReclaimOnce() { return .reclaimed(pending) }
        loopWaiting.store(true, ordering: .sequentiallyConsistent)
        // The holder may have released the lock before it could see the flag: try once more.
        if let pending = tryReclaimOnce() {
            loopWaiting.store(false, ordering: .sequentiallyConsistent)
            return .reclaimed(pending)
        }
        return .busy
    }

    private func tryReclaimOnce() -> NativeDirectRequest?? {
        state.withLockIfAvailable { state -> NativeDirectRequest? in
            defer { state = .loop }
            if case .sent(let request) = state { return request }
            return nil
        }
    }

    /// Whether the loop is waiting for this caller to release the lock; clears the flag.
    func takeLoopWaiting() -> Bool {
        loopWaiting.load(ordering: .sequentiallyConsistent) && loopWaiting.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// The request a caller sent, if any, without taking the slot (loop thread).
    func pendingRequest() -> NativeDirectRequest? {
        state.withLock { state -> NativeDirectRequest? in
            if case .sent(let request) = state { return request }
            return nil
        }
    }

    /// Sends `wire` on the connection if it is still parked (caller thread). The write happens
    /// under the slot's lock, so the loop cannot close the descriptor meanwhile.
    func send(_ wire: [UInt8], ticket: NativeDirectTicket,
              request: (_ written: Int, _ error: SocketError?) -> NativeDirectRequest) -> SendOutcome {
        state.withLock { state -> SendOutcome in
            guard case .parked = state else { return .notParked }
            guard ticket.attach(self) else { return .cancelled }
            let socket = Socket(descriptor: descriptor)
            let outcome = wire.withUnsafeBytes { bytes in
                Result { () throws(SocketError) in try socket.write(bytes) }
            }
            switch outcome {
            case .success(.bytes(let count)):
                state = .sent(request(count, nil))
                return .sent(complete: count == wire.count)
            case .success(.wouldBlock):
                state = .sent(request(0, nil))
            case .success(.closed):
                state = .sent(request(0, SocketError(operation: "send", errno: EPIPE)))
            case .failure(let error):
                state = .sent(request(0, error))
            }
            return .sent(complete: false)
        }
    }
}

/// A request a calling thread sent on a parked connection, waiting for the loop to adopt it.
struct NativeDirectRequest: Sendable {
    let exchange: LoopBound<NativeExchange>
    let continuation: NativeExchange.Continuation
    /// Bytes of the wire form written by the caller.
    let written: Int
    /// Why the caller's write failed, if it did.
    let error: SocketError?
    /// When it was sent (monotonic nanoseconds).
    let startedAt: UInt64
    /// The request's timeout in nanoseconds.
    let timeout: UInt64
}

/// Ties a `send` call's cancellation to the slot its request went to, if any.
final class NativeDirectTicket: Sendable {
    private struct State {
        var cancelled = false
        var slot: NativeDirectSlot?
    }

    private let state = Mutex(State())

    /// Records the slot; fails when the task was cancelled first.
    func attach(_ slot: NativeDirectSlot) -> Bool {
        state.withLock { state in
            if state.cancelled { return false }
            state.slot = slot
            return true
        }
    }

    /// Marks the task cancelled; returns the slot its request went to, if any.
    func cancel() -> NativeDirectSlot? {
        state.withLock { state in
            state.cancelled = true
            return state.slot
        }
    }
}
