import Foundation
import Synchronization

/// A wall clock that moves only when a test advances it, in whole seconds, for a ``CookieJar``'s
/// `now` closure.
final class ManualDateClock: Sendable {
    private let seconds: Mutex<Double>

    /// A clock that reads `start` seconds since 1970 until advanced.
    init(start: Double) {
        seconds = Mutex(start)
    }

    /// The time in seconds since 1970.
    var secondsSince1970: Double { seconds.withLock { $0 } }

    /// The time as a date.
    func now() -> Date { Date(timeIntervalSince1970: secondsSince1970) }

    /// Moves the clock forward by `delta` seconds.
    func advance(by delta: Double) {
        seconds.withLock { $0 += delta }
    }
}
