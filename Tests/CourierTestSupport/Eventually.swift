import Foundation

// The one home of the test suites' polling helpers. Each bounds a hang; none times anything:
// the defaults are generous for a loaded 2-core machine.

/// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held.
package func eventually(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// Polls an asynchronous `condition` until it holds or `timeout` passes; returns whether it held.
package func eventuallyAsync(timeout: Duration = .seconds(20), _ condition: () async -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}

/// Polls `condition` from a blocking test (one that runs on a thread of its own, `.ownThread`),
/// sleeping the thread 5 ms between tries, until it holds or `seconds` pass.
package func eventuallyBlocking(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// Runs blocking work (child processes, polling loops) on a thread of its own, so that it never
/// holds one of the few Swift concurrency threads that the tests running in parallel need.
package func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try work() })
        }
        thread.start()
    }
}
