/// Where the pipeline of an `async` caller's request (``HTTPConnection/send(_:)``) runs.
///
/// On a task of its own, the request's end resumes the waiting caller: two tasks, and up to two
/// thread wake-ups, per request. In the caller's own task, the transport's answer resumes the
/// caller directly (measured at 16 in flight: 19% more requests a second, 13% less CPU per
/// request). A request that would be alone in flight does better on a task of its own, which
/// runs on the transport's event loop (``Transport/preferredTaskExecutor(for:)``) and is
/// resumed there without a thread wake-up; so `automatic` runs a request in its caller's task
/// exactly when its own task would prefer no executor (``HTTPConnection/requestExecutor()``:
/// the transport prefers none while other requests are in flight, and a connection whose cache
/// reads files keeps every request off the loop), and the pipeline can stop every wait of the
/// request without cancelling a task (``RequestPipeline/canRunInCallersTask``).
enum AwaitedRequestPlacement: Sendable {
    /// In the caller's task when a task of its own would prefer no executor, otherwise on a task of its own.
    case automatic
    /// Always on a task of its own.
    case ownTask
    /// In the caller's task whenever the pipeline can run there (tests of its races).
    case callersTask
}
