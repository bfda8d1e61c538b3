import Foundation

/// Receives the events of every request on a connection.
///
/// Hold-weakly semantics: ``HTTPConnection/delegate`` is a weak reference. Every method has a
/// default that does nothing, so implement only what you need. All calls arrive on the
/// connection's ``HTTPConnection/callbackQueue``, in this order for each request:
///
/// 1. ``connection(_:willSend:id:)`` — may return an adjusted request (headers, for example);
/// 2. ``connection(_:didStart:)``;
/// 3. per attempt: ``connection(_:request:didReceiveResponseHead:)``, then
///    ``connection(_:request:didReceiveData:bytesSoFar:expectedTotal:)`` as bytes arrive;
/// 4. exactly one terminal call: ``connection(_:request:didFinishWith:)``,
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
    /// The request succeeded (terminal).
    func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse)
    /// The request failed (terminal).
    func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError)
    /// The request was cancelled (terminal).
    func connection(_ connection: HTTPConnection, didCancel id: RequestID)
}

extension HTTPConnectionDelegate {
    /// Sends the request unchanged.
    public func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest { request }
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, didStart id: RequestID) {}
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveResponseHead head: HTTPResponse.Head) {}
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveData data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {}
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {}
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError) {}
    /// Does nothing.
    public func connection(_ connection: HTTPConnection, didCancel id: RequestID) {}
}
