import Foundation

/// The closure style, NitroConnection's: one call per method, reporting through `onDidStart`,
/// `onSuccess` and `onError` on the connection's callback queue. Every call returns the request's
/// id; the requests are managed (they keep themselves alive) unless `lifetime` says otherwise.
extension HTTPConnection {
    /// Starts a GET.
    /// - Parameters:
    ///   - path: a path relative to the base URL, or an absolute URL.
    ///   - query: query items; none by default.
    ///   - headers: header fields; none by default.
    ///   - lifetime: managed by default.
    ///   - onDidStart: called when the request starts; `nil` by default.
    ///   - onSuccess: called with an acceptable response (terminal).
    ///   - onError: called with the error, `.cancelled` included (terminal); `nil` by default.
    /// - Returns: the request's id.
    @discardableResult
    public func get(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:],
                    lifetime: HTTPRequest.Lifetime = .managed,
                    onDidStart: (@Sendable (RequestID) -> Void)? = nil,
                    onSuccess: @escaping @Sendable (HTTPResponse) -> Void,
                    onError: (@Sendable (HTTPConnectionError) -> Void)? = nil) -> RequestID {
        start(.get, path, query, headers, .none, lifetime, onDidStart, onSuccess, onError)
    }

    /// Starts a HEAD. Parameters as for ``get(_:query:headers:lifetime:onDidStart:onSuccess:onError:)``.
    @discardableResult
    public func head(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:],
                     lifetime: HTTPRequest.Lifetime = .managed,
                     onDidStart: (@Sendable (RequestID) -> Void)? = nil,
                     onSuccess: @escaping @Sendable (HTTPResponse) -> Void,
                     onError: (@Sendable (HTTPConnectionError) -> Void)? = nil) -> RequestID {
        start(.head, path, query, headers, .none, lifetime, onDidStart, onSuccess, onError)
    }

    /// Starts a DELETE. Parameters as for ``get(_:query:headers:lifetime:onDidStart:onSuccess:onError:)``.
    @discardableResult
    public func delete(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:],
                       lifetime: HTTPRequest.Lifetime = .managed,
                       onDidStart: (@Sendable (RequestID) -> Void)? = nil,
                       onSuccess: @escaping @Sendable (HTTPResponse) -> Void,
                       onError: (@Sendable (HTTPConnectionError) -> Void)? = nil) -> RequestID {
        start(.delete, path, query, headers, .none, lifetime, onDidStart, onSuccess, onError)
    }

    /// Starts a POST.
    /// - Parameter body: the body: `.form([...])`, `.json(value)`, `.data(...)`; none by default.
    ///   Other parameters as for ``get(_:query:headers:lifetime:onDidStart:onSuccess:onError:)``.
    @discardableResult
    public func post(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:],
                     body: HTTPRequest.Body = .none, lifetime: HTTPRequest.Lifetime = .managed,
                     onDidStart: (@Sendable (RequestID) -> Void)? = nil,
                     onSuccess: @escaping @Sendable (HTTPResponse) -> Void,
                     onError: (@Sendable (HTTPConnectionError) -> Void)? = nil) -> RequestID {
        start(.post, path, query, headers, body, lifetime, onDidStart, onSuccess, onError)
    }

    /// Starts a PUT. Parameters as for ``post(_:query:headers:body:lifetime:onDidStart:onSuccess:onError:)``.
    @discardableResult
    public func put(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:],
                    body: HTTPRequest.Body = .none, lifetime: HTTPRequest.Lifetime = .managed,
                    onDidStart: (@Sendable (RequestID) -> Void)? = nil,
                    onSuccess: @escaping @Sendable (HTTPResponse) -> Void,
                    onError: (@Sendable (HTTPConnectionError) -> Void)? = nil) -> RequestID {
        start(.put, path, query, headers, body, lifetime, onDidStart, onSuccess, onError)
    }

    /// Starts a PATCH. Parameters as for ``post(_:query:headers:body:lifetime:onDidStart:onSuccess:onError:)``.
    @discardableResult
    public func patch(_ path: String, query: [HTTPRequest.QueryItem] = [], headers: HTTPHeaders = [:],
                      body: HTTPRequest.Body = .none, lifetime: HTTPRequest.Lifetime = .managed,
                      onDidStart: (@Sendable (RequestID) -> Void)? = nil,
                      onSuccess: @escaping @Sendable (HTTPResponse) -> Void,
                      onError: (@Sendable (HTTPConnectionError) -> Void)? = nil) -> RequestID {
        start(.patch, path, query, headers, body, lifetime, onDidStart, onSuccess, onError)
    }

    // swiftlint:disable:next function_parameter_count
    private func start(_ method: HTTPRequest.Method, _ path: String, _ query: [HTTPRequest.QueryItem],
                       _ headers: HTTPHeaders, _ body: HTTPRequest.Body, _ lifetime: HTTPRequest.Lifetime,
                       _ onDidStart: (@Sendable (RequestID) -> Void)?,
                       _ onSuccess: @escaping @Sendable (HTTPResponse) -> Void,
                       _ onError: (@Sendable (HTTPConnectionError) -> Void)?) -> RequestID {
        var request = HTTPRequest(method, path, query: query, headers: headers, body: body)
        request.lifetime = lifetime
        return start(request, onDidStart: onDidStart, onSuccess: onSuccess, onError: onError)
    }
}
