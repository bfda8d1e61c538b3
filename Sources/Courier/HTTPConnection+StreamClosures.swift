import Foundation

/// Streamed responses in the closure style.
extension HTTPConnection {
    /// Starts a request whose body is handed to `onChunk` as it arrives, never collected: the
    /// closure form of ``stream(_:)``.
    ///
    /// ```swift
    /// let output = FileHandle.standardOutput
    /// connection.stream(HTTPRequest(.get, "/logs/tail"),
    ///                   onChunk: { chunk in output.write(chunk) },
    ///                   onSuccess: { response in print("done:", response.status) },
    ///                   onError: { error in print(error) })
    /// ```
    ///
    /// Every closure runs on ``callbackQueue``. `onChunk` runs once per chunk, in order, and the
    /// next chunk is not taken until it returns: a slow closure makes Courier stop reading the
    /// socket once 256 KiB wait (the same backpressure as the `async` body; a closure cannot ask
    /// for less, so it must return for the body to go on). Then exactly one terminal call:
    /// `onSuccess` with the head (its ``HTTPResponse/body`` empty, metrics attached) after the last
    /// chunk, or `onError`. A status the connection's validation rejects goes to `onError` as
    /// ``HTTPConnectionError/unacceptableStatus`` without chunks. The delegate hears the request as
    /// any other, `didReceiveData` included (as bytes arrive, not paced by `onChunk`).
    /// - Parameters:
    ///   - request: the request.
    ///   - onChunk: called with each chunk of the body.
    ///   - onDidStart: called when the request starts; `nil` by default.
    ///   - onSuccess: called after the last chunk (terminal).
    ///   - onError: called with the error, `.cancelled` included (terminal); `nil` by default.
    /// - Returns: the request's id, for ``cancel(_:)``.
    @discardableResult
    public func stream(_ request: HTTPRequest,
                       onChunk: @escaping @Sendable (Data) -> Void,
                       onDidStart: (@Sendable (RequestID) -> Void)? = nil,
                       onSuccess: @escaping @Sendable (HTTPResponse) -> Void,
                       onError: (@Sendable (HTTPConnectionError) -> Void)? = nil) -> RequestID {
        let callbacks = RequestCallbacks(onDidStart: onDidStart, onSuccess: onSuccess, onError: onError,
                                         bodyConsumer: ChunkReader(onChunk: onChunk))
        return launch(request, id: RequestID.next(), callbacks: callbacks)
    }
}
