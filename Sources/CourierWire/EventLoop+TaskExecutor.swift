import Dispatch

/// An event loop is a Swift task executor: a task that prefers it runs its jobs on the loop's
/// thread, in submission order with the loop's other work.
///
/// A task that awaits I/O on this loop and resumes here needs no thread wake-up: the loop
/// resumes it in the same turn as the readiness event that completed the I/O. Jobs must not
/// block, since they hold up every descriptor on the loop.
///
/// Once the loop has stopped, jobs run on Swift's global concurrent executor instead, so a task
/// that prefers a stopped loop still finishes.
extension EventLoop: TaskExecutor {
    /// Runs `job` on the loop's thread after the current turn (or on the global executor when the
    /// loop no longer accepts work).
    /// - Parameter job: the job the Swift runtime hands over.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !submit(.task(job)) {
            let fallback = globalConcurrentExecutor.asUnownedTaskExecutor()
            DispatchQueue.global().async { job.runSynchronously(on: fallback) }
        }
    }
}
