/// Where the pipeline of an `async` caller's request (``HTTPConnection/send(_:)``) runs.
///
/// On a task of its own, the request's end resumes the waiting caller: two tasks per request,
/// and the request's answer reaches the caller only after that task has run the end of the
/// pipeline. In the caller's own task, the transport's answer resumes the caller directly, which
/// then runs the end of the pipeline itself. Measured on `NativeTransport`: at 16 in flight,
/// 19% more requests a second and 13% less CPU per request (2026-11-26, alternated rounds); one
/// request at a time (2026-11-27, three sets of 10 interleaved pairs), 5% less CPU per request
/// and 6% more requests a second, plain and over TLS, and 4% less CPU with the caller on the
/// loop (``HTTPConnection/executor``). So a request runs in its caller's task whenever the
/// pipeline can stop every wait of the request without cancelling a task
/// (``RequestPipeline/canRunInCallersTask``).
enum AwaitedRequestPlacement: Sendable {
    /// In the caller's task whenever the pipeline can run there (the default).
    case callersTask
    /// Always on a task of its own (tests of that path).
    case ownTask
}
