import CourierWire

/// The pool's side of the direct lane (``NativeDirectLane``): parking idle plain-HTTP
/// connections for callers, taking them back, and adopting the requests callers sent on them.
///
/// Every request found on a connection goes through ``PoolStateMachine/callerTook(_:request:displacing:at:)``,
/// so the machine knows it before the connection carries it.
extension HostPool {
    /// Lets an idle connection rest: parks it for callers when the lane is on.
    func rest(_ connection: HTTP1ClientConnection) {
        guard let lane, let slot = connection.slot else { return }
        slot.markParked()
        lane.park(slot)
        connection.armWatchdog(deadline: EventLoop.now() &+ NativeDirectLane.horizon)
    }

    /// Takes a parked connection back from the callers; returns the request one of them sent on
    /// it meanwhile, if any.
    func reclaim(_ connection: HTTP1ClientConnection) -> NativeDirectRequest? {
        guard let slot = connection.slot else { return nil }
        let pending = slot.reclaim()
        lane?.unpark(slot)
        return pending
    }

    /// Like ``reclaim(_:)`` for a readiness event, but never waits for a caller that is in the
    /// middle of sending on the connection.
    /// - Returns: `false` when a caller holds the slot: the connection must wait for
    ///   ``slotReleased(_:)``.
    func adoptWithoutWaiting(_ connection: HTTP1ClientConnection) -> Bool {
        guard let slot = connection.slot else { return true }
        switch slot.tryReclaim() {
        case .busy:
            return false
        case .reclaimed(let pending):
            lane?.unpark(slot)
            if let pending { adopt(pending, on: connection, displacing: nil) }
            return true
        }
    }

    /// A caller released a slot the loop was waiting for.
    func slotReleased(_ slot: NativeDirectSlot) {
        connection(with: slot)?.resumeAfterWaitingForCaller()
    }

    /// A caller's request was not written completely: the loop takes it over now.
    func adoptUnfinished(_ slot: NativeDirectSlot, selfBound: LoopBound<HostPool>) {
        attach(selfBound)
        guard let connection = connection(with: slot), let pending = reclaim(connection) else { return }
        adopt(pending, on: connection, displacing: nil)
    }

    /// Cancels a request that a caller sent directly on `slot`.
    func cancelDirect(_ slot: NativeDirectSlot, exchange bound: LoopBound<NativeExchange>) {
        if let connection = connection(with: slot), slot.pendingRequest() != nil, let pending = reclaim(connection) {
            adopt(pending, on: connection, displacing: nil)
        }
        bound.value.cancel()
    }

    /// The watchdog of an idle connection ticked: times out a request sent on it, if any.
    func parkedTick(_ connection: HTTP1ClientConnection) {
        guard let slot = connection.slot else { return }
        let now = EventLoop.now()
        if let pending = slot.pendingRequest() {
            let deadline = pending.startedAt &+ pending.timeout
            if now >= deadline {
                // Adopted, its own watchdog then fails it at once.
                if let pending = reclaim(connection) { adopt(pending, on: connection, displacing: nil) }
            } else {
                connection.armWatchdog(deadline: min(deadline, now &+ NativeDirectLane.horizon))
            }
        } else if slot.isParked {
            connection.armWatchdog(deadline: now &+ NativeDirectLane.horizon)
        }
    }

    private func connection(with slot: NativeDirectSlot) -> HTTP1ClientConnection? {
        connections.values.first { $0.slot === slot }
    }
}
