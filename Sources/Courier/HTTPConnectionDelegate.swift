import Foundation

/// Receives the events of every request on a connection.
///
/// Hold-weakly semantics: ``HTTPConnection/delegate`` is a weak reference. Every method has a
/// default that does nothing, so implement only what you need: once a connection has called a
/// method and seen that a delegate of its type leaves it to the default, it makes no more trips
/// to the callback queue for that method, and a delegate that implements nothing costs a request
/// nothing after the first. All calls arrive on the connection's
/// ``HTTPConnection/callbackQueue``, in this order for each request:
///
/// 1. ``connection(_:willSend:id:)`` — may return an adjusted request (headers, for example);
/// 2. ``connection(_:didStart:)``;
/// 3. per attempt: ``connection(_:request:didSendBodyData:expectedTotal:)`` while a body that is
///    not in memory goes out, ``connection(_:request:didReceiveResponseHead:)``, then
///    ``connection(_:request:didReceiveData:bytesSoFar:expectedTotal:)`` as bytes arrive; between
///    attempts, ``connection(_:request:willRetry:after:reason:)`` or
///    ``connection(_:request:willRedirect:)``;
/// 4. ``connection(_:request:didCollect:)`` with the request's metrics;
/// 5. exactly one terminal call: ``connection(_:request:didFinishWith:)``,
///    ``connection(_:request:didFailWith:)`` or ``connection(_:didCancel:)``.
///
/// Nothing arrives after the terminal call. An unmanaged request whose connection was released
/// delivers no call at all.
public protocol HTTPConnectionDelegate: AnyObject, Sendable {
    /// The request is about to be sent; return it as it should go out.
    func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest
    /// The request has started.
    func connection(_ connection: HTTPConnection, didStart id: RequestID)
    /// A response head arrived (before its body).
    func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveResponseHead head: HTTPResponse.Head)
    /// Body bytes arrived.
    /// - Parameters:
    ///   - data: the bytes that just arrived.
    ///   - bytesSoFar: the body bytes received so far in this attempt.
    ///   - expectedTotal: the declared length, or `nil` when unknown (chunked, close-delimited).
    func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveData data: Data, bytesSoFar: Int64, expectedTotal: Int64?)
    /// Request body bytes went out: for streams, files and multipart forms, at most once per 1%
    /// of the total or per 100 ms, and always the last report, before the terminal call (on
    /// ``NativeTransport``).
    /// - Parameters:
    ///   - bytesSent: the body bytes written so far in this attempt.
    ///   - expectedTotal: the body's length, or `nil` for a stream of unknown length.
    func connection(_ connection: HTTPConnection, request id: RequestID, didSendBodyData bytesSent: Int64, expectedTotal: Int64?)
    /// An attempt failed and will be retried after `delay`.
    /// - Parameters:
    ///   - attempt: the number of the attempt about to be made (2 for the first retry).
    ///   - delay: the wait before it.
    ///   - reason: why the previous attempt failed (`.unacceptableStatus` with the response for a status).
    func connection(_ connection: HTTPConnection, request id: RequestID, willRetry attempt: Int, after delay: Duration, reason: HTTPConnectionError)
    /// A redirect is about to be followed; return how to proceed. Called after the policy's own hook.
    func connection(_ connection: HTTPConnection, request id: RequestID, willRedirect hop: RedirectHop) -> RedirectAction
    /// The request's metrics, just before its terminal call.
    func connection(_ connection: HTTPConnection, request id: RequestID, didCollect metrics: RequestMetrics)
    /// The request succeeded (terminal).
    func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse)
    /// The request failed (terminal).
    func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError)
    /// The request was cancelled (terminal).
    func connection(_ connection: HTTPConnection, didCancel id: RequestID)
}

extension HTTPConnectionDelegate {
    /// Sends the request unchanged.
    public func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest {
        DefaultDelegateImplementation.ran(.willSend, by: self)
        return request
    }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, didStart id: RequestID) { DefaultDelegateImplementation.ran(.didStart, by: self) }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveResponseHead head: HTTPResponse.Head) {
        DefaultDelegateImplementation.ran(.didReceiveResponseHead, by: self)
    }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveData data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        DefaultDelegateImplementation.ran(.didReceiveData, by: self)
    }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didSendBodyData bytesSent: Int64, expectedTotal: Int64?) {
        DefaultDelegateImplementation.ran(.didSendBodyData, by: self)
    }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, willRetry attempt: Int, after delay: Duration, reason: HTTPConnectionError) {
        DefaultDelegateImplementation.ran(.willRetry, by: self)
    }
    /// Follows the redirect.
    public func connection(_ connection: HTTPConnection, request id: RequestID, willRedirect hop: RedirectHop) -> RedirectAction {
        DefaultDelegateImplementation.ran(.willRedirect, by: self)
        return .follow
    }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didCollect metrics: RequestMetrics) {
        DefaultDelegateImplementation.ran(.didCollect, by: self)
    }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
        DefaultDelegateImplementation.ran(.didFinish, by: self)
    }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError) {
        DefaultDelegateImplementation.ran(.didFail, by: self)
    }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, didCancel id: RequestID) { DefaultDelegateImplementation.ran(.didCancel, by: self) }
}
