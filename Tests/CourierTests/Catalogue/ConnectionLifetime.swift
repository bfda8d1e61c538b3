import CourierTestServer
import Foundation

/// How long a test server's first connection stayed open, watched from a thread of its own.
///
/// A request's own timing (its metrics, or polling in the test) needs Swift's cooperative
/// threads, which blocking tests running in parallel can hold for seconds; the server's count of
/// open connections does not. The watch polls every 5 ms and stops at the first close, or after
/// `limit`.
final class ConnectionLifetime: Sendable {
    private let span = Locked<(opened: ContinuousClock.Instant?, closed: ContinuousClock.Instant?)>((nil, nil))

    /// Starts watching `server`, which must have no connection open yet.
    init(_ server: TestServer, limit: Duration = .seconds(20)) {
        let thread = Thread { [span] in
            let clock = ContinuousClock()
            let end = clock.now + limit
            var opened = false
            while clock.now < end {
                let open = server.connectionsOpen
                if !opened, open > 0 {
                    opened = true
                    span.withLock { $0.opened = clock.now }
                } else if opened, open == 0 {
                    span.withLock { $0.closed = clock.now }
                    return
                }
                usleep(5_000)
            }
        }
        thread.start()
    }

    /// How long the first connection was open; `nil` until it has opened and closed.
    var duration: Duration? {
        span.withLock { span in
            guard let opened = span.opened, let closed = span.closed else { return nil }
            return closed - opened
        }
    }
}
