import Foundation
import Synchronization

/// The re-authentication queue of one registered authenticator: the current credential, its
/// version, and the requests held while exactly one refresh runs.
///
/// Every credential gets a version number. A request remembers the version it went out with;
/// when it is rejected, a newer version (a refresh finished meanwhile) is handed back at once,
/// and only a rejection of the current version starts a refresh. Refreshes are counted in a
/// sliding window; past the ``RefreshLimit`` the queue answers `throttled` instead.
final class CredentialSession: Sendable {
    /// What a request waiting on the queue gets.
    enum Outcome: Sendable {
        /// Send with this credential (`nil`: none is known yet, send without).
        case credential(Credential?, version: Int)
        /// The refresh failed and the authenticator gave up.
        case gaveUp(any Error)
        /// Too many refreshes in the window.
        case throttled
        /// The waiting request was cancelled.
        case cancelled
    }

    private struct State {
        var credential: Credential?
        var version = 0
        var refreshing = false
        /// Increases with every refresh started, so that an abandoned refresh cannot finish a later one.
        var refreshGeneration = 0
        /// The running refresh, to cancel when every request waiting for it has gone.
        var refreshTask: Task<Void, Never>?
        /// The refresh started last, running, finished or abandoned: the next one waits for it to
        /// end before it calls the authenticator, so that an abandoned refresh still unwinding
        /// (its token request being cancelled) never runs beside a new one.
        var lastRefresh: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<Outcome, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var refreshStarts: [ContinuousClock.Instant] = []
        /// The last refresh that gave up, for requests that were already out when it did.
        var giveUp: (at: ContinuousClock.Instant, version: Int, error: any Error)?
    }

    /// What a locked decision asks the caller to do once the lock is released.
    private enum Step {
        case resume(Outcome)
        case wait
        case startRefresh(previous: Credential?, generation: Int)
    }

    let authenticator: any Authenticator
    let matcher: URLMatcher
    private let store: (any CredentialStore)?
    private let storeKey: String
    private let limit: RefreshLimit
    private let state: Mutex<State>
    /// The version of the credential last written to the store, held across each write: a
    /// refresh's write that comes after a newer one's is skipped, so the store never goes back
    /// to an older credential.
    private let saved = Mutex(0)

    init(authenticator: any Authenticator, matcher: URLMatcher, store: (any CredentialStore)?, limit: RefreshLimit) {
        self.authenticator = authenticator
        self.matcher = matcher
        self.store = store
        self.storeKey = matcher.description
        self.limit = limit
        let stored = try? store?.load(for: matcher.description)
        self.state = Mutex(State(credential: stored ?? nil, version: stored == nil ? 0 : 1))
    }

    /// The credential known now, if any.
    var currentCredential: Credential? {
        state.withLock { $0.credential }
    }

    /// The number of requests waiting for the running refresh.
    var waitingCount: Int {
        state.withLock { $0.waiters.count }
    }

    /// The number of refreshes started so far in the current window.
    var recentRefreshCount: Int {
        state.withLock { $0.refreshStarts.count }
    }

    /// The credential a new request should go out with. Waits while a refresh runs, and starts
    /// one when the authenticator says the credential needs it.
    /// - Parameter interruption: stops the wait of a request that runs in its caller's task.
    func credentialForSending(context: AuthenticationContext, interruption: RequestInterruption? = nil) async -> Outcome {
        let (credential, version, refreshing) = state.withLock { ($0.credential, $0.version, $0.refreshing) }
        let expired = credential.map { authenticator.needsRefresh($0, now: Date()) } ?? false
        if !refreshing, !expired {
            // The usual case: the credential known now, with no wait to set up.
            if Task.isCancelled || interruption?.isInterrupted == true { return .cancelled }
            return .credential(credential, version: version)
        }
        return await decide(context: context, interruption: interruption) { state in
            if state.refreshing { return .wait }
            if expired, state.version == version { return self.beginRefresh(&state) }
            return .resume(.credential(state.credential, version: state.version))
        }
    }

    /// A response rejected the credential of `version`: hands back a newer one, joins the
    /// refresh that is running, or starts one. A request sent before a refresh gave up shares
    /// that outcome instead of starting another refresh.
    /// - Parameter interruption: stops the wait of a request that runs in its caller's task.
    func rejected(version: Int, sentAt: ContinuousClock.Instant, context: AuthenticationContext,
                  interruption: RequestInterruption? = nil) async -> Outcome {
        await decide(context: context, interruption: interruption) { state in
            if state.refreshing { return .wait }
            if version < state.version { return .resume(.credential(state.credential, version: state.version)) }
            if let giveUp = state.giveUp, giveUp.version == version, sentAt <= giveUp.at {
                return .resume(.gaveUp(giveUp.error))
            }
            return self.beginRefresh(&state)
        }
    }

    // MARK: - Waiting

    /// Applies `rule` under the lock, and waits if it says so. Cancelling the task ends the wait
    /// with `.cancelled`; for a request that runs in its caller's task, `interruption` does
    /// instead (see ``RequestInterruption/wait(_:_:stop:)``).
    private func decide(context: AuthenticationContext, interruption: RequestInterruption?,
                        _ rule: @escaping @Sendable (inout State) -> Step) async -> Outcome {
        let waiter = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let leave: @Sendable () -> Void = { [self] in
            let (continuation, abandoned) = state.withLock { state in
                (state.waiters.removeValue(forKey: waiter), Self.abandonRefreshIfUnwanted(&state))
            }
            continuation?.resume(returning: .cancelled)
            abandoned?.cancel()
        }
        return await RequestInterruption.wait(interruption, { await wait(waiter, context: context, interruption: interruption, rule) },
                                              stop: leave)
    }

    /// Deciding and enqueuing under one lock: a refresh cannot finish in between, and a waiter
    /// cancelled or interrupted before it is enqueued does not wait.
    private func wait(_ waiter: UInt64, context: AuthenticationContext, interruption: RequestInterruption?,
                      _ rule: @escaping @Sendable (inout State) -> Step) async -> Outcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let step = state.withLock { state -> Step in
                if Task.isCancelled || interruption?.isInterrupted == true { return .resume(.cancelled) }
                let step = rule(&state)
                if case .resume = step { return step }
                state.waiters[waiter] = continuation
                return step
            }
            switch step {
            case .resume(let outcome): continuation.resume(returning: outcome)
            case .wait: break
            case .startRefresh(let previous, let generation):
                startRefresh(previous: previous, generation: generation, context: context)
            }
        }
    }

    /// When the last request waiting for a running refresh has gone (cancelled, or past its
    /// deadline), the refresh is no longer wanted: it is forgotten, so that it keeps nothing alive
    /// (its token request, the transport), and returned to be cancelled. The next rejection starts
    /// a new one. Called under the lock.
    private static func abandonRefreshIfUnwanted(_ state: inout State) -> Task<Void, Never>? {
        guard state.refreshing, state.waiters.isEmpty else { return nil }
        state.refreshing = false
        state.refreshGeneration += 1
        defer { state.refreshTask = nil }
        return state.refreshTask
    }

    /// Marks a refresh as running, unless the window is full. Called under the lock.
    private func beginRefresh(_ state: inout State) -> Step {
        guard admitRefresh(&state) else { return .resume(.throttled) }
        state.refreshing = true
        state.refreshGeneration += 1
        return .startRefresh(previous: state.credential, generation: state.refreshGeneration)
    }

    private func admitRefresh(_ state: inout State) -> Bool {
        let now = ContinuousClock.now
        state.refreshStarts.removeAll { now - $0 > limit.window }
        guard state.refreshStarts.count < limit.count else { return false }
        state.refreshStarts.append(now)
        return true
    }

    // MARK: - Refreshing

    /// Starts the refresh of `generation` in a task of its own, after the refresh before it has
    /// ended; one abandoned meanwhile is cancelled at once.
    private func startRefresh(previous: Credential?, generation: Int, context: AuthenticationContext) {
        let abandoned = state.withLock { state -> Task<Void, Never>? in
            let before = state.lastRefresh
            let task = Task { await self.refresh(previous: previous, generation: generation, context: context, after: before) }
            state.lastRefresh = task
            guard state.refreshGeneration == generation, state.refreshing else { return task }
            state.refreshTask = task
            return nil
        }
        abandoned?.cancel()
    }

    /// Calls the authenticator until it gives a credential or gives up, once the refresh `before`
    /// has ended, and finishes the refresh of `generation` with the outcome.
    private func refresh(previous: Credential?, generation: Int, context: AuthenticationContext,
                         after before: Task<Void, Never>?) async {
        await before?.value
        var failures = 0
        while !Task.isCancelled {
            do {
                let credential = try await authenticator.refresh(previous: previous, context: context)
                return finishRefresh(.success(credential), generation: generation)
            } catch {
                failures += 1
                guard !Task.isCancelled else { return }
                guard await authenticator.shouldRetryRefresh(after: error, attempt: failures) else {
                    return finishRefresh(.failure(error), generation: generation)
                }
                guard state.withLock({ admitRefresh(&$0) }) else { return finishRefresh(nil, generation: generation) }
            }
        }
    }

    /// Writes the credential of `version` to the store, unless a newer one was written first (the
    /// next refresh can finish while this one's write is still under way).
    private func save(_ credential: Credential, version: Int) {
        guard let store else { return }
        saved.withLock { saved in
            guard version > saved else { return }
            try? store.save(credential, for: storeKey)
            saved = version
        }
    }

    /// Ends the refresh and releases every held request. `nil` means the window filled up. A
    /// refresh that was abandoned meanwhile (``abandonRefreshIfUnwanted(_:)``) changes nothing.
    private func finishRefresh(_ result: Result<Credential, any Error>?, generation: Int) {
        let finished = state.withLock { state -> ([CheckedContinuation<Outcome, Never>], Outcome)? in
            guard state.refreshGeneration == generation, state.refreshing else { return nil }
            state.refreshing = false
            state.refreshTask = nil
            let waiters = Array(state.waiters.values)
            state.waiters.removeAll()
            switch result {
            case .success(let credential):
                state.credential = credential
                state.version += 1
                state.giveUp = nil
                return (waiters, .credential(credential, version: state.version))
            case .failure(let error):
                state.giveUp = (ContinuousClock.now, state.version, error)
                return (waiters, .gaveUp(error))
            case nil:
                return (waiters, .throttled)
            }
        }
        guard let (waiters, outcome) = finished else { return }
        // The held requests go on at once; the store's write (a synced file, maybe) follows.
        for waiter in waiters { waiter.resume(returning: outcome) }
        if case .credential(let credential?, let version) = outcome { save(credential, version: version) }
    }
}
