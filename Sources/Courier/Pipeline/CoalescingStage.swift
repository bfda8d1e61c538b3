import Synchronization

/// Lets identical requests that overlap share one exchange (opt-in, see
/// ``HTTPConnection/Configuration/coalescesRequests``).
///
/// The first of a set of identical GET or HEAD requests (same URL, same header fields with the
/// same values, credentials included, and the same body limit, timeout, retry policy and
/// redirect policy) goes out; every identical request
/// that arrives while it is in flight waits for its outcome instead of sending its own. Each
/// caller still ends once, with its own terminal callback and metrics. It sits below the cache and
/// authentication (so requests with different credentials never share), above retries and
/// redirects (so those run once for everyone).
///
/// - A waiting request that is cancelled, or whose deadline passes, leaves alone; the others wait on.
/// - When the request that went out is cancelled, the ones waiting on it go out again themselves.
/// - Requests with a body, streamed responses, other methods, and requests whose retry or
///   redirect policy decides with a closure of its own (which cannot be compared) are never
///   coalesced.
struct CoalescingStage: PipelineStage {
    let flights = CoalescingTable()

    /// Not for a caller that reads the body as it arrives: a stream has one reader.
    func applies(to context: RequestContext) -> Bool { !context.streamsResponse }

    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        guard let key = CoalescingKey(request, retryPolicy: context.plan.retryPolicy, redirectPolicy: context.plan.redirectPolicy) else {
            return try await next(request)
        }
        while true {
            switch flights.join(key) {
            case .lead(let flight):
                let result: Result<HTTPResponse, HTTPConnectionError>
                do { result = .success(try await next(request)) } catch { result = .failure(error) }
                flights.land(flight, for: key, with: result)
                return try result.get()
            case .follow(let flight, let ticket):
                let result = await flight.outcome(for: ticket)
                // The request that went out was cancelled, not this one: go again.
                if case .failure(let error) = result, error == .cancelled, !Task.isCancelled { continue }
                return try result.get()
            }
        }
    }
}

/// What makes two requests the same for ``CoalescingStage``: what is sent, and every setting
/// that changes how the one exchange ends for its caller (a waiting request gets that ending).
struct CoalescingKey: Hashable, Sendable {
    let method: String
    let url: String
    let fields: [String]
    let maxResponseBodySize: Int
    /// The per-attempt timeout: a request that would wait longer must not end with a shorter
    /// one's `timedOut`.
    let timeout: Duration
    let retries: RetryPolicy.Comparable
    let redirects: RedirectPolicy.Comparable

    /// The key of `request` under its policies, or `nil` when it must go out on its own (a method
    /// other than GET or HEAD, a body, or a policy that decides with a closure).
    init?(_ request: TransportRequest, retryPolicy: RetryPolicy, redirectPolicy: RedirectPolicy) {
        guard request.method == .get || request.method == .head, request.body.isEmpty, request.upload == nil,
              let retries = retryPolicy.comparable, let redirects = redirectPolicy.comparable else { return nil }
        method = request.method.rawValue
        url = request.url.absoluteString
        fields = request.headers.map { "\($0.name.lowercased()):\($0.value)" }
        maxResponseBodySize = request.maxResponseBodySize
        timeout = request.timeout
        self.retries = retries
        self.redirects = redirects
    }
}

/// The requests in flight that others may join, by key.
final class CoalescingTable: Sendable {
    /// How a request takes part.
    enum Role {
        /// It goes out, and must ``CoalescingTable/land(_:for:with:)`` its flight.
        case lead(CoalescedFlight)
        /// It waits for an identical request that is already out.
        case follow(CoalescedFlight, ticket: Int)
    }

    private let flights = Mutex<[CoalescingKey: CoalescedFlight]>([:])

    /// Joins the flight for `key`, or starts it.
    func join(_ key: CoalescingKey) -> Role {
        flights.withLock { flights in
            if let flight = flights[key] { return .follow(flight, ticket: flight.board()) }
            let flight = CoalescedFlight()
            flights[key] = flight
            return .lead(flight)
        }
    }

    /// Ends `flight`: later requests for `key` start a new one, and everyone waiting hears `result`.
    func land(_ flight: CoalescedFlight, for key: CoalescingKey, with result: Result<HTTPResponse, HTTPConnectionError>) {
        flights.withLock { flights in
            if flights[key] === flight { flights[key] = nil }
        }
        flight.land(result)
    }
}

/// One request in flight and the identical requests waiting for its outcome.
final class CoalescedFlight: Sendable {
    private typealias Waiter = CheckedContinuation<Result<HTTPResponse, HTTPConnectionError>, Never>

    private struct State {
        var nextTicket = 0
        var waiting: [Int: Waiter] = [:]
        /// Tickets whose request was cancelled before it started waiting.
        var left: Set<Int> = []
        var result: Result<HTTPResponse, HTTPConnectionError>?
    }

    private let state = Mutex(State())

    /// A ticket for one more waiting request.
    func board() -> Int {
        state.withLock { state in
            state.nextTicket += 1
            return state.nextTicket
        }
    }

    /// Waits for the flight's outcome; `.cancelled` at once when the waiting task is cancelled.
    func outcome(for ticket: Int) async -> Result<HTTPResponse, HTTPConnectionError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                let answer = state.withLock { state -> Result<HTTPResponse, HTTPConnectionError>? in
                    if let result = state.result { return result }
                    if state.left.remove(ticket) != nil { return .failure(.cancelled) }
                    state.waiting[ticket] = waiter
                    return nil
                }
                if let answer { waiter.resume(returning: answer) }
            }
        } onCancel: {
            leave(ticket)
        }
    }

    /// The request holding `ticket` was cancelled: it stops waiting.
    private func leave(_ ticket: Int) {
        let waiter = state.withLock { state -> Waiter? in
            guard state.result == nil else { return nil }
            guard let waiter = state.waiting.removeValue(forKey: ticket) else {
                state.left.insert(ticket)
                return nil
            }
            return waiter
        }
        waiter?.resume(returning: .failure(.cancelled))
    }

    /// Tells every waiting request the outcome, and any that comes to wait later.
    func land(_ result: Result<HTTPResponse, HTTPConnectionError>) {
        let waiters = state.withLock { state -> [Waiter] in
            state.result = result
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }
}
