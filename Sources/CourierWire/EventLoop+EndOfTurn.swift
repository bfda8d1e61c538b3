extension EventLoop {
    /// Runs `work` on the loop's thread at the end of the current turn: after this turn's
    /// readiness handlers, timers and submitted closures, before the loop waits again.
    ///
    /// It lets work that many events of one turn ask for be done once for all of them: a
    /// connection that several requests reach in one turn writes them in one system call.
    /// Deferred closures run in the order they were deferred; one deferred while the end of a
    /// turn is running runs at the end of the next turn (which then does not wait). Closures
    /// still deferred when the loop shuts down are dropped without running.
    ///
    /// Only callable on the loop's thread (from a handler, a timer, an executed closure or a
    /// deferred one); calling it elsewhere is a programming error and stops the process.
    /// - Parameter work: the closure to run; it may capture loop-confined state.
    public func atEndOfTurn(_ work: @escaping () -> Void) {
        preconditionInEventLoop()
        state.endOfTurn.append(work)
    }

    /// Runs the work deferred to the end of this turn (see ``atEndOfTurn(_:)``).
    func runEndOfTurnWork() {
        guard !state.endOfTurn.isEmpty else { return }
        let deferred = state.endOfTurn
        state.endOfTurn = []
        for work in deferred { work() }
    }
}
