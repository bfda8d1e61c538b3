import Courier
import CourierTestServer
import Foundation
import Synchronization

/// A clock that records every wait and returns at once, to check backoff without sleeping.
final class RecordingClock: RequestClock {
    private let waits = Mutex<[Duration]>([])
    let fixedNow: Date

    init(now: Date = Date()) {
        fixedNow = now
    }

    var sleeps: [Duration] { waits.withLock { $0 } }

    func sleep(for duration: Duration) async throws {
        waits.withLock { $0.append(duration) }
        try Task.checkCancellation()
    }

    func now() -> Date { fixedNow }
}

/// A route that fails a number of times, then answers with the echo of success.
final class FlakyRoute: Sendable {
    private let calls = Atomic<Int>(0)
    let failures: Int
    let failure: TestServer.Reply

    init(failures: Int, failure: TestServer.Reply) {
        self.failures = failures
        self.failure = failure
    }

    var count: Int { calls.load(ordering: .relaxed) }

    func reply(_ request: TestServer.Request) -> TestServer.Reply {
        let call = calls.add(1, ordering: .relaxed).newValue
        return call <= failures ? failure : .json(["attempt": call])
    }
}

