/// The methods of ``HTTPConnectionDelegate``, as a set.
///
/// Every delegate call is a trip to the connection's callback queue, which wakes a thread. A
/// delegate that leaves a method to the protocol's default implementation (which does nothing, or
/// answers as if there were no delegate) needs no trip for it. A connection learns which methods
/// those are the first time it calls each one (``DelegateProfile``), and makes no trip for them
/// after that.
struct DelegateMethods: OptionSet, Sendable {
    let rawValue: UInt16

    static let willSend = DelegateMethods(rawValue: 1 << 0)
    static let didStart = DelegateMethods(rawValue: 1 << 1)
    static let didReceiveResponseHead = DelegateMethods(rawValue: 1 << 2)
    static let didReceiveData = DelegateMethods(rawValue: 1 << 3)
    static let didSendBodyData = DelegateMethods(rawValue: 1 << 4)
    static let willRetry = DelegateMethods(rawValue: 1 << 5)
    static let willRedirect = DelegateMethods(rawValue: 1 << 6)
    static let didCollect = DelegateMethods(rawValue: 1 << 7)
    static let didFinish = DelegateMethods(rawValue: 1 << 8)
    static let didFail = DelegateMethods(rawValue: 1 << 9)
    static let didCancel = DelegateMethods(rawValue: 1 << 10)

    /// A request's start: the delegate is asked for the request, then told it started.
    static let start: DelegateMethods = [.willSend, .didStart]
    /// What a response's arrival reports: its head, then its body as it comes.
    static let responseProgress: DelegateMethods = [.didReceiveResponseHead, .didReceiveData]

    /// The end of a request with `result`: its metrics, then the one terminal call.
    static func end(_ result: Result<HTTPResponse, HTTPConnectionError>) -> DelegateMethods {
        switch result {
        case .success: [.didCollect, .didFinish]
        case .failure(let error) where error == .cancelled: [.didCollect, .didCancel]
        case .failure: [.didCollect, .didFail]
        }
    }
}
