import Foundation

/// Whether, and how, a failed request is retried automatically.
///
/// Set at three levels, the most specific winning: ``HTTPConnection/defaultRetryPolicy``,
/// ``HTTPConnection/retryPolicy`` and ``HTTPRequest/retryPolicy``.
///
/// By default only idempotent methods (GET, HEAD, PUT, DELETE, OPTIONS, TRACE) are retried;
/// ``allowingNonIdempotentMethods()`` opts a policy in to the others. A failure is retryable when
/// the connection was lost before a response, a pooled connection was stale, the connect failed,
/// or the status is 408, 429, 500, 502, 503 or 504. Cancellation, certificate failures, a TLS
/// handshake that failed or that the peer broke off (``HTTPConnectionError/tlsFailed``,
/// ``HTTPConnectionError/proxyTLSFailed``) and other 4xx statuses are never retried. A `Retry-After` header (seconds or an HTTP date) replaces the
/// backoff delay up to ``retryAfterCap``; a server asking for longer gets no retry: the request
/// ends with that response (as ``HTTPConnectionError/unacceptableStatus(_:)`` under the default
/// validation), never a request that sleeps for a day nor one that asks again too early. The
/// request's deadline caps every wait: a request
/// whose deadline passes while it waits fails with ``HTTPConnectionError/deadlineExceeded`` at that moment.
public struct RetryPolicy: Sendable {
    enum Strategy: Sendable {
        case never
        case exponentialBackoff(maxAttempts: Int, base: Duration, cap: Duration)
        case custom(@Sendable (RetryAttempt) -> RetryDecision)
    }

    let strategy: Strategy
    /// Whether POST, PATCH and other non-idempotent methods may be retried; `false` by default.
    public private(set) var retriesNonIdempotentMethods = false

    /// Never retry automatically. ``HTTPConnection/retry()`` still re-fires a request by hand.
    public static let never = RetryPolicy(strategy: .never)

    /// Whether this is ``never``: no attempt is ever retried.
    var neverRetries: Bool {
        if case .never = strategy { true } else { false }
    }

    /// Retries with exponential backoff and full jitter: before attempt *n + 1* it waits a random
    /// time between zero and `min(cap, base × 2ⁿ⁻¹)`.
    /// - Parameters:
    ///   - maxAttempts: the most attempts in all, the first included; 3 by default.
    ///   - base: the first backoff ceiling; 200 ms by default.
    ///   - cap: the largest backoff ceiling, and the longest `Retry-After` wait; 10 s by default.
    public static func exponentialBackoff(maxAttempts: Int = 3, base: Duration = .milliseconds(200),
                                          cap: Duration = .seconds(10)) -> RetryPolicy {
        RetryPolicy(strategy: .exponentialBackoff(maxAttempts: max(1, maxAttempts), base: base, cap: cap))
    }

    /// Decides each retry with a closure. The closure is called only for failures of methods the
    /// policy allows; it sees whether Courier considers the failure retryable.
    public static func custom(_ decide: @escaping @Sendable (RetryAttempt) -> RetryDecision) -> RetryPolicy {
        RetryPolicy(strategy: .custom(decide))
    }

    /// The same policy, also retrying non-idempotent methods such as POST.
    public func allowingNonIdempotentMethods() -> RetryPolicy {
        var copy = self
        copy.retriesNonIdempotentMethods = true
        return copy
    }

    /// The longest wait a `Retry-After` header may ask for: the backoff's `cap` for
    /// ``exponentialBackoff(maxAttempts:base:cap:)``, 10 s for the other policies. A response
    /// asking for longer is not retried: the request reports it.
    public var retryAfterCap: Duration {
        if case .exponentialBackoff(_, _, let cap) = strategy { return max(.zero, cap) }
        return .seconds(10)
    }

    /// What decides how this policy retries a GET or HEAD, as a value two policies can be
    /// compared by (request coalescing shares an exchange only under equal ones).
    struct Comparable: Hashable, Sendable {
        /// The most attempts (1 for ``RetryPolicy/never``), the backoff's base and cap (zero when
        /// there is no second attempt).
        let maxAttempts: Int, base: Duration, cap: Duration
    }

    /// This policy as a ``Comparable``; `nil` for a ``custom(_:)`` policy, whose closure cannot
    /// be compared. A backoff of one attempt is ``never``; whether non-idempotent methods are
    /// retried does not count (GET and HEAD are idempotent).
    var comparable: Comparable? {
        switch strategy {
        case .exponentialBackoff(let maxAttempts, let base, let cap) where maxAttempts > 1:
            return Comparable(maxAttempts: maxAttempts, base: base, cap: cap)
        case .never, .exponentialBackoff:
            return Comparable(maxAttempts: 1, base: .zero, cap: .zero)
        case .custom:
            return nil
        }
    }

    /// The decision for a failed attempt, before `Retry-After` and the deadline are considered.
    func decision(for attempt: RetryAttempt) -> RetryDecision {
        guard retriesNonIdempotentMethods || attempt.method.isIdempotent else { return .doNotRetry }
        switch strategy {
        case .never:
            return .doNotRetry
        case .exponentialBackoff(let maxAttempts, let base, let cap):
            guard attempt.isRetryable, attempt.number < maxAttempts else { return .doNotRetry }
            let ceiling = min(cap, base * Self.power(of: 2, attempt.number - 1))
            let seconds = ceiling.timeInterval
            return .retry(after: seconds > 0 ? .seconds(Double.random(in: 0...seconds)) : .zero)
        case .custom(let decide):
            return decide(attempt)
        }
    }

    private static func power(of base: Int, _ exponent: Int) -> Int {
        (0..<min(max(0, exponent), 30)).reduce(1) { value, _ in value * base }
    }
}

/// A failed attempt, as a retry policy sees it.
public struct RetryAttempt: Sendable {
    /// The number of the attempt that failed, starting at 1.
    public let number: Int
    /// The request's method.
    public let method: HTTPRequest.Method
    /// The request's URL.
    public let url: URL
    /// The error, when no response arrived.
    public let error: HTTPConnectionError?
    /// The response, when one arrived with a retryable status.
    public let response: HTTPResponse?

    /// Whether Courier considers this failure worth retrying (see ``RetryPolicy``).
    public var isRetryable: Bool {
        if let response { return Self.retryableStatuses.contains(response.status.code) }
        guard let error else { return false }
        return [HTTPConnectionError.connectionLost, .staleConnection, .cannotConnect].contains(error)
    }

    /// 408, 429, 500, 502, 503 and 504.
    public static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]
}

/// What to do after a failed attempt.
public enum RetryDecision: Sendable, Equatable {
    /// Try again after the delay.
    case retry(after: Duration)
    /// Report the failure.
    case doNotRetry
}
