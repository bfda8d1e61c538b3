import Foundation

extension HTTPConnection {
    /// A request as a `curl` command line, resolved as this connection would send it: the
    /// absolute URL, the default headers, `Content-Type`, the body, and the cookie jar's cookies
    /// if the connection has a jar. An authenticator's credential is not in it (it is applied
    /// only when the request is sent).
    ///
    /// ```swift
    /// let command = try connection.curlCommand(for: HTTPRequest("/rooms"))
    /// print(command)   // curl --globoff --header 'Authorization: <redacted>' https://…/rooms
    /// ```
    ///
    /// - Parameters:
    ///   - request: the request.
    ///   - includingCredentials: whether credentials appear as they are; `false` (the default)
    ///     replaces them with `<redacted>` (see ``TransportRequest/curlCommand(includingCredentials:)``).
    /// - Returns: the command, quoted for a POSIX shell.
    /// - Throws: ``HTTPConnectionError/invalidURL`` or ``HTTPConnectionError/invalidRequest``
    ///   when the request could not be sent either.
    public func curlCommand(for request: HTTPRequest, includingCredentials: Bool = false) throws(HTTPConnectionError) -> String {
        var resolved = try RequestPlan(request, connection: self, settings: currentSettings()).transportRequest
        cookieJar?.attach(to: &resolved)
        return resolved.curlCommand(includingCredentials: includingCredentials)
    }
}
