import Foundation

/// The clock the request pipeline waits on: backoff delays, `Retry-After` and deadlines.
///
/// Courier uses ``SystemRequestClock``. Tests inject their own to check backoff without
/// sleeping for real.
public protocol RequestClock: Sendable {
    /// Waits for `duration`.
    /// - Throws: when the waiting task is cancelled.
    func sleep(for duration: Duration) async throws
    /// The current wall-clock time, to read `Retry-After` dates and cache ages against.
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
