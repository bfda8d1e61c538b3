import Foundation
import Synchronization

/// A task executor with a thread of its own: asynchronous code that prefers it runs there, so
/// that blocking calls in it (blocking sockets, child processes, sleeps) never hold one of the
/// few threads Swift's cooperative pool has (as many as cores: two on a small machine).
///
/// Made for tests that do blocking I/O while other tests run in parallel:
///
/// ```swift
/// try await ThreadTaskExecutor.run {
///     let reply = try blockingClient.roundTrip(request)   // blocks this thread only
///     #expect(reply.status == 200)
/// }
/// ```
///
/// Jobs run one at a time, in order, on the executor's thread. Child tasks of code that prefers
/// the executor prefer it too, so they queue behind a blocked job; keep such code sequential.
public final class ThreadTaskExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var stopping = false
    }

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)

    /// Starts the executor's thread.
    /// - Parameter name: the thread's name, for debuggers and crash reports. Default: `"blocking"`.
    public init(name: String = "blocking") {
        let thread = Thread { [self] in runJobs() }
        thread.name = name
        thread.start()
    }

    /// Runs `body` with this executor as its task executor preference, on a new executor whose
    /// thread ends when `body` returns.
    /// - Parameters:
    ///   - name: the thread's name. Default: `"blocking"`.
    ///   - body: the code to run.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public static func run<Result: Sendable>(name: String = "blocking",
                                             _ body: @Sendable () async throws -> Result) async throws -> Result {
        let executor = ThreadTaskExecutor(name: name)
        defer { executor.shutdown() }
        return try await withTaskExecutorPreference(executor) { try await body() }
    }

    /// Queues a job for the executor's thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.jobs.append(job) }
        wakeUp.signal()
    }

    /// Ends the thread once the jobs queued so far have run.
    public func shutdown() {
        state.withLock { $0.stopping = true }
        wakeUp.signal()
    }

    private func runJobs() {
        while true {
            wakeUp.wait()
            let (jobs, stopping) = state.withLock { state in
                defer { state.jobs.removeAll() }
                return (state.jobs, state.stopping)
            }
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if stopping && jobs.isEmpty && state.withLock({ $0.jobs.isEmpty }) { return }
        }
    }
}
