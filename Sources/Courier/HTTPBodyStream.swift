import Foundation

/// The body of a streamed response: its bytes in chunks as they arrive, read once with
/// `for try await`.
///
/// Courier holds at most about 256 KiB of it for you: while you have not taken that much, it
/// stops reading from the server (over HTTP/2 it stops giving the stream's window back, so up to
/// one window, 1 MiB, may still arrive), so a slow consumer costs no memory, whatever the body's
/// size. A gzip or deflate body is decoded as you take it, 32 KiB at a time, and what waits is
/// kept encoded, so the same bound holds whatever its compression ratio.
/// The body limit of collected responses (`maxResponseBodySize`) does not apply here.
///
/// ```swift
/// var total = 0
/// for try await chunk in streamed.body {
///     total += chunk.count
/// }
/// ```
///
/// Iterate it once. Stopping early (a `break`, a thrown error, a cancelled task, or dropping the
/// stream unread) abandons the rest: the connection it came on is closed, never reused. A body
/// that breaks off throws the ``HTTPConnectionError`` that ended it, such as
/// ``HTTPConnectionError/connectionLost`` or ``HTTPConnectionError/timedOut``.
public final class HTTPBodyStream: AsyncSequence, Sendable {
    /// A chunk of body bytes.
    public typealias Element = Data
    /// Why the body broke off.
    public typealias Failure = HTTPConnectionError

    let buffer: BodyStreamBuffer

    /// Wraps the consumer's side of `buffer`.
    init(buffer: BodyStreamBuffer) {
        self.buffer = buffer
    }

    /// A body that has already arrived whole (a response that was not streamed, such as a cache hit).
    convenience init(arrived body: Data) {
        self.init(buffer: BodyStreamBuffer(finished: body))
    }

    deinit {
        buffer.consumerLeft()
    }

    /// Starts reading the body.
    /// - Returns: the iterator; the body ends when it is dropped.
    public func makeAsyncIterator() -> Iterator {
        Iterator(stream: self, reading: Reading(buffer: buffer))
    }

    /// Reads every remaining chunk into one `Data`.
    /// - Parameter limit: the most bytes accepted.
    /// - Returns: the rest of the body.
    /// - Throws: ``HTTPConnectionError/bodyTooLarge`` past `limit` (the rest is abandoned), or
    ///   the error that broke the body off.
    public func collect(upTo limit: Int) async throws(HTTPConnectionError) -> Data {
        var collected = Data()
        for try await chunk in self {
            if collected.count + chunk.count > limit {
                throw HTTPConnectionError.bodyTooLarge.with(detail: "the streamed body exceeds \(limit) bytes")
            }
            collected.append(chunk)
        }
        return collected
    }

    /// Reads a body's chunks in order.
    public struct Iterator: AsyncIteratorProtocol {
        /// Keeps the stream alive while it is read.
        let stream: HTTPBodyStream
        /// Abandons the body when the last copy of the iterator goes.
        let reading: Reading

        /// Why the body broke off.
        public typealias Failure = HTTPConnectionError

        /// The next chunk, or `nil` after the last one.
        /// - Throws: the ``HTTPConnectionError`` that broke the body off, or
        ///   ``HTTPConnectionError/cancelled`` when the task was cancelled.
        public mutating func next() async throws(HTTPConnectionError) -> Data? {
            try await reading.buffer.next().get()
        }

        /// The next chunk, or `nil` after the last one (what `for try await` calls).
        /// - Parameter actor: the caller's isolation (unused: the buffer is thread-safe).
        /// - Throws: as ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(HTTPConnectionError) -> Data? {
            try await reading.buffer.next().get()
        }
    }

    /// One pass over the body; when it ends, whatever was not read is abandoned.
    final class Reading: Sendable {
        let buffer: BodyStreamBuffer

        init(buffer: BodyStreamBuffer) {
            self.buffer = buffer
        }

        deinit {
            buffer.consumerLeft()
        }
    }
}

/// A response whose body is read as it arrives (``HTTPBodyStream``).
public struct HTTPStreamingResponse: Sendable {
    /// The status line, the header fields and the URL the response came from.
    public let head: HTTPResponse.Head
    /// The body, in chunks.
    public let body: HTTPBodyStream

    /// Creates a streamed response.
    init(head: HTTPResponse.Head, body: HTTPBodyStream) {
        self.head = head
        self.body = body
    }

    /// The status.
    public var status: HTTPResponse.Status { head.status }
    /// The header fields.
    public var headers: HTTPHeaders { head.headers }
}
