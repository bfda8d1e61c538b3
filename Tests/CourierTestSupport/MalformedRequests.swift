import Testing

/// Requests whose request line or head is malformed (reliability case S1, "Server side"): a
/// server answers each with 400 and closes the connection. One table for every server the
/// suite tests (CourierTestServer, the ChatCave server), each with its own routes.
package enum MalformedRequests {
    /// The named cases for a server with a `GET` route at `getPath` and a `POST` route at `postPath`.
    package static func cases(getPath: String, postPath: String) -> [(name: String, request: String)] {
        let get = getPath
        let post = postPath
        return [
            ("not HTTP", "GARBAGE\r\n\r\n"),
            ("no version", "GET \(get)\r\n\r\n"),
            ("HTTP/2.0", "GET \(get) HTTP/2.0\r\n\r\n"),
            ("a fourth word", "GET \(get) HTTP/1.1 extra\r\nHost: x\r\n\r\n"),
            ("leading space", " GET \(get) HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("double space", "GET  \(get) HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("method not a token", "G(T \(get) HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("DEL in the target", "GET \(get)\u{7F}x HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("bare CR", "GET \(get) HTTP/1.1\rHost: x\r\n\r\n"),
            ("binary", "\u{00}\u{01}\u{02}\u{03}\r\n\r\n"),
            ("field without colon", "GET \(get) HTTP/1.1\r\nHost x\r\n\r\n"),
            ("space before colon", "GET \(get) HTTP/1.1\r\nHost : x\r\n\r\n"),
            ("NUL in Host", "GET \(get) HTTP/1.1\r\nHost: a\u{00}b\r\n\r\n"),
            ("NUL in a value", "GET \(get) HTTP/1.1\r\nHost: x\r\nX-Token: a\u{00}b\r\n\r\n"),
            ("obs-fold", "GET \(get) HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  folded\r\n\r\n"),
            ("first field folded", "GET \(get) HTTP/1.1\r\n X-A: a\r\nHost: x\r\n\r\n"),
            ("two lengths", "POST \(post) HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"),
            ("negative length", "POST \(post) HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
            ("rubbish length", "POST \(post) HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\n"),
            ("non-hex chunk size", "POST \(post) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            ("chunk without CRLF", "POST \(post) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX0\r\n\r\n"),
        ]
    }

    /// Sends each case of ``cases(getPath:postPath:)`` on a connection of its own to
    /// 127.0.0.1:`port`, and expects a 400 with `Connection: close`, then the close; between
    /// two cases a keep-alive connection's `GET getPath` must still get 200.
    /// - Parameters:
    ///   - body: further checks of each refusal (its case's name and the response), e.g. its body.
    /// - Returns: how many cases were sent (the keeper's requests are the only ones a handler saw).
    @discardableResult
    package static func expectEachRefused(port: Int, getPath: String, postPath: String,
                                          sourceLocation: SourceLocation = #_sourceLocation,
                                          also body: (String, RawHTTPClient.Response) -> Void = { _, _ in }) throws -> Int {
        let keeper = try RawHTTPClient(port: port)
        let cases = cases(getPath: getPath, postPath: postPath)
        for (what, request) in cases {
            let client = try RawHTTPClient(port: port, timeout: 5)
            try client.send(request)
            let response = try client.readResponse()
            #expect(response.status == 400, "\(what)", sourceLocation: sourceLocation)
            #expect(response.header("Connection") == "close", "\(what)", sourceLocation: sourceLocation)
            body(what, response)
            #expect(client.waitForClose(), "\(what): the connection stays open", sourceLocation: sourceLocation)
            #expect(try keeper.exchange("GET", getPath).status == 200, "\(what): the keeper was not served", sourceLocation: sourceLocation)
        }
        return cases.count
    }
}
