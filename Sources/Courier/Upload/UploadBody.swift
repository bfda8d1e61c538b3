import Foundation
import Synchronization

/// A request body that is not held in memory: a stream of chunks, a file, or a multipart form
/// of in-memory parts and files. A transport sends it in bounded chunks.
///
/// Create one through ``HTTPRequest/Body/stream(_:length:contentType:)``,
/// ``HTTPRequest/Body/file(_:contentType:)`` or ``HTTPRequest/Body/multipart(_:)``. A
/// ``Transport`` that cannot send it must fail with ``HTTPConnectionError/unsupportedByTransport``
/// rather than send an empty body (``URLSessionTransport`` sends files only).
public struct UploadBody: Sendable {
    /// Where the bytes come from.
    enum Content: Sendable {
        /// In-memory bytes and files, one after the other: can be read again from the start.
        case segments([UploadSegment])
        /// A caller's asynchronous sequence: read once.
        case stream(UploadStream)
    }

    let content: Content
    /// The body's length in bytes, when known: it is sent with `Content-Length`; `nil` sends it
    /// with the chunked transfer coding.
    public let length: Int64?

    /// Whether the body can be sent again from its start: `true` for files and multipart forms,
    /// `false` for streams.
    public var isReplayable: Bool {
        if case .segments = content { return true }
        return false
    }

    /// Whether a transport already began reading the body: a stream that was claimed cannot be
    /// sent again.
    public var wasConsumed: Bool {
        if case .stream(let stream) = content { return stream.wasClaimed }
        return false
    }

    /// The request carrying the body ended: a stream's producer stops at once (see
    /// ``UploadStream/abandon()``); other bodies need nothing.
    func abandon() {
        if case .stream(let stream) = content { stream.abandon() }
    }

    /// The file, when the body is exactly one whole file.
    var singleFile: (path: String, size: Int64)? {
        guard case .segments(let segments) = content, segments.count == 1, case .file(let path, let size) = segments[0] else { return nil }
        return (path, size)
    }

    init(segments: [UploadSegment]) {
        self.content = .segments(segments)
        self.length = segments.reduce(Int64(0)) { $0 + $1.length }
    }

    init(stream: UploadStream, length: Int64?) {
        self.content = .stream(stream)
        self.length = length
    }
}

/// One piece of a replayable upload: bytes in memory, or a whole file of a known size.
enum UploadSegment: Sendable {
    /// Bytes sent as they are.
    case bytes(Data)
    /// The file at `path`, which must still hold exactly `size` bytes when it is sent.
    case file(path: String, size: Int64)

    /// The segment's length in bytes.
    var length: Int64 {
        switch self {
        case .bytes(let data): Int64(data.count)
        case .file(_, let size): size
        }
    }
}

/// A caller's asynchronous sequence of chunks, type-erased, that may be read once.
final class UploadStream: Sendable {
    private struct Reading {
        var claimed = false
        var abandoned = false
        var buffer: UploadStreamBuffer?
    }

    /// Iterates the caller's sequence into a buffer; runs in a task of its own.
    let produce: @Sendable (UploadStreamBuffer) async -> Void
    private let reading = Mutex(Reading())

    init(produce: @escaping @Sendable (UploadStreamBuffer) async -> Void) {
        self.produce = produce
    }

    /// Marks the stream as being read; `false` when it was claimed before (it cannot be read again).
    func claim() -> Bool {
        reading.withLock { reading in
            if reading.claimed { return false }
            reading.claimed = true
            return true
        }
    }

    /// Whether a transport began reading it.
    var wasClaimed: Bool { reading.withLock { $0.claimed } }

    /// Records the buffer the stream is read into, so that ``abandon()`` can stop its producer;
    /// `false` when the request already ended (the producer must not start then).
    func attach(_ buffer: UploadStreamBuffer) -> Bool {
        reading.withLock { reading in
            if reading.abandoned { return false }
            reading.buffer = buffer
            return true
        }
    }

    /// The request ended (cancelled, or past its deadline): stops the producer at once, from the
    /// thread that ended it, before its callback runs and before the transport's loop hears of
    /// the end; the caller's sequence is asked for nothing more (but a chunk the producer
    /// already asked for). A later ``attach(_:)`` fails.
    func abandon() {
        let buffer = reading.withLock { reading -> UploadStreamBuffer? in
            reading.abandoned = true
            defer { reading.buffer = nil }
            return reading.buffer
        }
        buffer?.stop()
    }
}
