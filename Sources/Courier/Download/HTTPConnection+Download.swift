import Foundation

/// Downloads to a file, in the `async` and closure styles (the delegate hears them as any request).
extension HTTPConnection {
    /// Downloads the response body of `request` into the file `destination`, in constant memory.
    ///
    /// ```swift
    /// let result = try await connection.download(HTTPRequest(.get, "/releases/tool.tar.gz"),
    ///                                            to: URL(fileURLWithPath: "/tmp/tool.tar.gz"),
    ///                                            options: DownloadOptions(resume: true, computesSHA256: true))
    /// print(result.byteCount, result.sha256 ?? "")
    /// ```
    ///
    /// The body streams (``stream(_:)``) into `.<name>.courier-partial` beside the destination
    /// (mode `0600`), hashed with SHA-256 as it goes when the options ask for the digest; at the end the file is synced, given
    /// ``DownloadOptions/permissions`` and renamed over the destination atomically, so the
    /// destination is never seen half-written. The request asks for `Accept-Encoding: identity`
    /// unless it sets that field itself, so that the bytes on the wire are the file's bytes and
    /// byte ranges mean file offsets.
    ///
    /// **Resume.** A download that breaks off (connection lost, timeout, deadline, cancel) leaves
    /// the partial file and a small record of its URL and validator
    /// (`.<name>.courier-partial.validator`). With ``DownloadOptions/resume`` the next download of
    /// the same URL to the same destination sends `Range: bytes=N-` and `If-Range` (the strong
    /// `ETag`, else `Last-Modified`); a `206` whose `Content-Range` starts at N is appended to the
    /// partial file (another range fails with ``HTTPConnectionError/rangeMismatch``), and a `200`
    /// (the resource changed, or the server ignores ranges) starts over. A `416` fails the
    /// download as ``HTTPConnectionError/unacceptableStatus`` and deletes the partial file, so the
    /// next one starts over. A response without a validator cannot be resumed: its partial file is
    /// started over next time.
    ///
    /// The request runs through the pipeline as any other (authentication, retries, redirects,
    /// validation, metrics; it neither reads nor fills the cache), off the transport's event loop, since
    /// it writes to disk. It ends, and the delegate hears of it, once the file is in place or the
    /// download failed, after the file is closed.
    ///
    /// **A download that cannot start** sends nothing and ends at once, as a request that fails
    /// before sending does (an invalid URL, in ``send(_:)``): the delegate hears
    /// `didFailWith`, then the caller gets the error. That is an expected digest that is not 64
    /// hex digits or a destination that is no file URL (``HTTPConnectionError/invalidRequest``),
    /// an invalid URL, or a destination folder that does not exist
    /// (``HTTPConnectionError/cannotWriteFile``).
    /// - Parameters:
    ///   - request: the request, usually a GET.
    ///   - destination: the file to create or replace; its folder must exist.
    ///   - options: resume, the expected digest, permissions and progress; none by default.
    /// - Returns: the file, its length and digest, and the response.
    /// - Throws: as ``send(_:)``; ``HTTPConnectionError/checksumMismatch`` (the file deleted),
    ///   ``HTTPConnectionError/rangeMismatch``, ``HTTPConnectionError/cannotWriteFile``, and
    ///   ``HTTPConnectionError/invalidRequest`` for an expected digest that is not 64 hex digits.
    ///   ``HTTPConnectionError/unsupportedByTransport`` from a transport that cannot stream.
    public func download(_ request: HTTPRequest, to destination: URL,
                         options: DownloadOptions = DownloadOptions()) async throws(HTTPConnectionError) -> DownloadResult {
        switch Result(catching: { () throws(HTTPConnectionError) in try prepareDownload(request, to: destination, options: options) }) {
        case .success(let (prepared, writer)):
            let response = try await awaitRequest(prepared) { RequestCallbacks(continuation: $0, bodyConsumer: writer) }
            return writer.result(response)
        case .failure(let error):
            // Ends at once with `error`, heard as any failure; `awaitRequest` throws it.
            let _: HTTPResponse = try await awaitRequest(request, failure: error) { RequestCallbacks(continuation: $0) }
            throw error
        }
    }

    /// Starts a download, reporting through closures and the delegate; see
    /// ``download(_:to:options:)`` for what it does with the file.
    /// - Parameters:
    ///   - request: the request.
    ///   - destination: the file to create or replace.
    ///   - options: resume, the expected digest, permissions and progress; none by default.
    ///   - onDidStart: called when the request starts; `nil` by default.
    ///   - onSuccess: called once the file is in place (terminal).
    ///   - onError: called with the error, `.cancelled` included (terminal); `nil` by default.
    /// - Returns: the request's id, for ``cancel(_:)``. A download that cannot start (see
    ///   ``download(_:to:options:)``) ends as any closure request that fails before sending:
    ///   `onDidStart` is not called; the delegate hears `didFailWith`, then `onError` runs; with
    ///   neither, the failure is reported as unhandled
    ///   (``EventMonitor/Event/unhandledFailure(_:error:)``, or ``unhandledFailureLog``).
    @discardableResult
    public func download(_ request: HTTPRequest, to destination: URL, options: DownloadOptions = DownloadOptions(),
                         onDidStart: (@Sendable (RequestID) -> Void)? = nil,
                         onSuccess: @escaping @Sendable (DownloadResult) -> Void,
                         onError: (@Sendable (HTTPConnectionError) -> Void)? = nil) -> RequestID {
        do {
            let (prepared, writer) = try prepareDownload(request, to: destination, options: options)
            let callbacks = RequestCallbacks(onDidStart: onDidStart, onSuccess: { onSuccess(writer.result($0)) },
                                             onError: onError, bodyConsumer: writer)
            return launch(prepared, id: RequestID.next(), callbacks: callbacks)
        } catch {
            let callbacks = RequestCallbacks(onDidStart: onDidStart, onError: onError)
            return launch(request, id: RequestID.next(), callbacks: callbacks, failure: error)
        }
    }

    /// The request as a download sends it (the resume fields, `Accept-Encoding: identity`), and
    /// the writer of its file.
    private func prepareDownload(_ request: HTTPRequest, to destination: URL,
                                 options: DownloadOptions) throws(HTTPConnectionError) -> (HTTPRequest, FileDownloadWriter) {
        if let expected = options.expectedSHA256 {
            guard expected.utf8.count == 64, expected.utf8.allSatisfy({ $0.isHexDigit }) else {
                throw .invalidRequest.with(detail: "the expected SHA-256 must be 64 hexadecimal digits")
            }
        }
        guard destination.isFileURL, !destination.lastPathComponent.isEmpty else {
            throw .invalidRequest.with(detail: "the download destination must be a file URL")
        }
        let folder = destination.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw .cannotWriteFile.with(detail: "the download's folder \(folder) does not exist")
        }
        let url = try RequestPlan.url(for: request, baseURL: baseURL)
        let partial = PartialDownload(destination: destination)
        let resumePoint = options.resume ? partial.resumePoint(for: url) : nil
        var prepared = request
        prepared.headers.remove("Range")
        prepared.headers.remove("If-Range")
        if let resumePoint {
            prepared.headers.set("bytes=\(resumePoint.offset)-", for: "Range")
            prepared.headers.set(resumePoint.ifRange, for: "If-Range")
        }
        if !prepared.headers.contains("Accept-Encoding") { prepared.headers.set("identity", for: "Accept-Encoding") }
        prepared.cachePolicy = .reloadIgnoringCache
        return (prepared, FileDownloadWriter(partial: partial, url: url, resumePoint: resumePoint, options: options))
    }
}

extension UInt8 {
    /// Whether the byte is an ASCII hexadecimal digit.
    var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
