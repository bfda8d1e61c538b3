/// The per-request receivers of a request's outcome: closures, or the continuation of an `async` caller.
struct RequestCallbacks: Sendable {
    typealias Continuation = CheckedContinuation<Result<HTTPResponse, HTTPConnectionError>, Never>
    typealias StreamContinuation = CheckedContinuation<Result<HTTPStreamingResponse, HTTPConnectionError>, Never>

    var onDidStart: (@Sendable (RequestID) -> Void)?
    var onSuccess: (@Sendable (HTTPResponse) -> Void)?
    var onError: (@Sendable (HTTPConnectionError) -> Void)?
    var continuation: Continuation?
    /// The `stream` caller waiting for the head; set for streamed requests only.
    var streamContinuation: StreamContinuation?
    /// Reads the streamed body for the caller (a download, a chunk closure); `nil` otherwise.
    var bodyConsumer: (any BodyConsumer)?
    /// Where an `async` caller whose request runs in the caller's own task takes the outcome; `nil` otherwise.
    var awaitedOutcome: AwaitedOutcome?

    /// Whether any closure is called on the callback queue (start, success or error).
    var hasClosures: Bool { onDidStart != nil || onSuccess != nil || onError != nil }

    /// Whether a failure reaches someone through these callbacks (an error closure or an `async` caller).
    var hearsFailures: Bool { onError != nil || continuation != nil || streamContinuation != nil || awaitedOutcome != nil }
    /// Whether the response is streamed rather than collected.
    var streamsResponse: Bool { streamContinuation != nil || bodyConsumer != nil }

    init(onDidStart: (@Sendable (RequestID) -> Void)? = nil,
         onSuccess: (@Sendable (HTTPResponse) -> Void)? = nil,
         onError: (@Sendable (HTTPConnectionError) -> Void)? = nil,
         continuation: Continuation? = nil,
         streamContinuation: StreamContinuation? = nil,
         bodyConsumer: (any BodyConsumer)? = nil,
         awaitedOutcome: AwaitedOutcome? = nil) {
        self.onDidStart = onDidStart
        self.onSuccess = onSuccess
        self.onError = onError
        self.continuation = continuation
        self.streamContinuation = streamContinuation
        self.bodyConsumer = bodyConsumer
        self.awaitedOutcome = awaitedOutcome
    }
}
