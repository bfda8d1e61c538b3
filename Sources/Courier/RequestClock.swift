import Foundation

/// The clock the retry stage waits on (backoff delays and `Retry-After`), and the wall-clock time
/// `Retry-After` dates are read against.
///
/// Courier uses ``SystemRequestClock``. Tests inject their own to check backoff without
/// sleeping for real. Whole-request deadlines do not use it: they run on a Dispatch timer, so
/// that a busy cooperative pool cannot delay them.
public protocol RequestClock: Sendable {
    /// Waits for `duration`.
    /// - Throws: when the waiting task is cancelled.
    func sleep(for duration: Duration) async throws
    /// The current wall-clock time, to read `Retry-After` dates against (the cache reads its own).
    func now() -> Date
}

/// The real clock: `Task.sleep` and `Date()`.
public struct SystemRequestClock: RequestClock {
    /// Creates the clock.
    public init() {}

    /// Sleeps with `Task.sleep`.
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }

    /// `Date()`.
    public func now() -> Date { Date() }
}
