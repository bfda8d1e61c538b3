import Foundation

extension HTTPRequest.Body {
    /// A body read from an asynchronous sequence of chunks as it is sent, never gathered.
    ///
    /// The sequence is iterated once, in a task of its own, at most 256 KiB ahead of the socket.
    /// With a `length` the body is sent with `Content-Length`, and a sequence that yields more
    /// or fewer bytes fails the request with ``HTTPConnectionError/invalidBody``; without one it
    /// is sent with the chunked transfer coding. A stream cannot be sent twice: a retry, a
    /// 307/308 redirect or a `401` that would need it again ends with
    /// ``HTTPConnectionError/bodyNotReplayable``.
    /// - Parameters:
    ///   - chunks: the chunks, in order; empty chunks are skipped.
    ///   - length: the total length in bytes, when known.
    ///   - contentType: the `Content-Type`; `application/octet-stream` by default.
    public static func stream<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, length: Int64? = nil, contentType: String = "application/octet-stream"
    ) -> Self where Chunks.Element == Data {
        let stream = UploadStream { buffer in
            do {
                for try await chunk in chunks {
                    guard await buffer.push(chunk) else { return }
                }
                buffer.finish(error: nil)
            } catch {
                buffer.finish(error: error)
            }
        }
        return Self(upload: UploadBody(stream: stream, length: length.map { max(0, $0) }), contentType: contentType)
    }

    /// A body read from an asynchronous sequence of byte arrays; as
    /// ``stream(_:length:contentType:)`` for `Data` chunks.
    public static func stream<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, length: Int64? = nil, contentType: String = "application/octet-stream"
    ) -> Self where Chunks.Element == [UInt8] {
        stream(chunks.map { Data($0) }, length: length, contentType: contentType)
    }

    /// The contents of a file, read in chunks of 256 KiB as they are sent (on the native transport), never loaded whole.
    ///
    /// The length is taken from the file now and sent as `Content-Length`; a file that holds
    /// another number of bytes when it is sent fails the request with
    /// ``HTTPConnectionError/invalidBody``. A file body can be sent again (retries, redirects).
    /// - Parameters:
    ///   - url: a `file:` URL of a regular file.
    ///   - contentType: the `Content-Type`; `application/octet-stream` by default.
    /// - Throws: ``HTTPConnectionError/invalidBody`` when the file cannot be read or is not a
    ///   regular file.
    public static func file(_ url: URL, contentType: String = "application/octet-stream") throws(HTTPConnectionError) -> Self {
        let size = try UploadFile.size(of: url)
        return Self(upload: UploadBody(segments: [.file(path: url.path, size: size)]), contentType: contentType)
    }

    /// A `multipart/form-data` body (RFC 7578) built with a ``MultipartForm``; its files are
    /// read as the body is sent. The `Content-Type` names the form's boundary.
    public static func multipart(_ form: MultipartForm) -> Self {
        Self(upload: UploadBody(segments: form.segments()), contentType: form.contentType)
    }
}

/// Checks the files an upload will read.
enum UploadFile {
    /// The size of the regular file at `url`.
    static func size(of url: URL) throws(HTTPConnectionError) -> Int64 {
        guard url.isFileURL else {
            throw .invalidBody.with(detail: "'\(url.absoluteString.prefix(200))' is not a file URL")
        }
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            throw .invalidBody.with(detail: "the file '\(url.lastPathComponent)' cannot be read: \(reason)")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .invalidBody.with(detail: "'\(url.lastPathComponent)' is not a regular file")
        }
        return Int64(info.st_size)
    }
}
