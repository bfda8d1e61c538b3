import CTestConcurrency
import Foundation
import Synchronization
import Testing

/// The suite's own guard against overload: the test process runs a bounded number of tests at
/// once (see `Tests/CTestConcurrency`). Unbounded, the integration tests' servers and threads
/// stall Swift's cooperative pool on a 2-core machine and make unrelated timeouts fire late.
@Suite("Test process concurrency")
struct TestConcurrencyTests {
    /// Tests of this suite running now, and the most seen at once.
    static let running = Mutex((now: 0, most: 0))

    @Test("the parallelization width is set before the run starts")
    func widthIsSet() {
        #expect(courier_test_parallelization_width() > 0, "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH is not set")
    }

    @Test("no more tests run at once than the width", arguments: 0..<24)
    func bounded(index: Int) async throws {
        let width = courier_test_parallelization_width()
        Self.running.withLock { state in
            state.now += 1
            state.most = max(state.most, state.now)
        }
        try await Task.sleep(for: .milliseconds(150))
        let most = Self.running.withLock { state in
            defer { state.now -= 1 }
            return state.most
        }
        #expect(most <= width, "\(most) cases of this test ran at once; the width is \(width)")
    }
}
