/// Whether, and how, a failed request is retried automatically.
///
/// Set at three levels, the most specific winning: ``HTTPConnection/defaultRetryPolicy``,
/// ``HTTPConnection/retryPolicy`` and ``HTTPRequest/retryPolicy``.
public struct RetryPolicy: Sendable {
    enum Strategy: Sendable {
        case never
    }

    let strategy: Strategy

    /// Never retry automatically. ``HTTPConnection/retry()`` still re-fires a request by hand.
    public static let never = RetryPolicy(strategy: .never)
}
