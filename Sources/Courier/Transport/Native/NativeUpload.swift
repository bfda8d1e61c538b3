import CourierWire
import Foundation

/// The body of one request that is not in memory (an ``UploadBody``), as its connection writes
/// it: one framed chunk at a time into ``pending``, refilled only when the socket took the last
/// one, so at most ``chunkSize`` bytes (plus the stream's bounded buffer) are held per request.
///
/// Files are read with `pread` on the loop thread (regular files never block for long); a stream
/// is iterated in a task of its own into an ``UploadStreamBuffer``, which wakes the connection
/// when it had nothing and bytes arrive. A declared length is enforced; without one the body is
/// framed with the chunked transfer coding.
///
/// Loop-confined: created by the exchange when a connection takes it, used by that connection.
final class NativeUpload {
    /// The most payload bytes read at once.
    static let chunkSize = 256 * 1024
    /// The most bytes a stream's producer runs ahead of the socket.
    static let streamBufferLimit = 256 * 1024
    /// The most bytes one writable event writes before the loop turns (and reads).
    static let writeBudget = 1 << 20
    /// Progress is reported after at least this many bytes...
    static let progressBytes: Int64 = 64 * 1024
    /// ...or this much time (nanoseconds) since the last report, and once at the end.
    static let progressInterval: UInt64 = 50_000_000

    /// What ``refill(wake:)`` found.
    enum Step {
        /// ``pending`` holds the next bytes to write.
        case ready
        /// A stream has nothing yet; the wake callback runs when it has.
        case waiting
        /// Every byte, framing included, was handed out.
        case finished
        /// The body cannot be sent: the request fails with this error.
        case failed(HTTPConnectionError)
    }

    private enum Source {
        case segments([UploadSegment])
        case stream(UploadStream)
    }

    /// The declared length; `nil` sends chunked.
    let length: Int64?
    private let source: Source
    /// The framed bytes to write next, and how many of them were written.
    var pending: [UInt8] = []
    var pendingOffset = 0
    /// Payload bytes handed to the socket (or TLS) and fully written.
    private(set) var bytesSent: Int64 = 0
    private var payloadInPending: Int64 = 0
    private var done = false

    // Reading segments.
    private var segmentIndex = 0
    private var segmentOffset: Int64 = 0
    private var file: Int32 = -1

    // Reading a stream.
    private var buffer: UploadStreamBuffer?
    private var producer: Task<Void, Never>?

    // Progress.
    private var reportedBytes: Int64 = 0
    private var reportedAt = EventLoop.now()
    private var reportedAny = false
    private var reportedEnd = false

    /// Whether a body without a length is framed with the chunked transfer coding (HTTP/1.1);
    /// HTTP/2 frames bodies itself.
    let framesChunks: Bool

    /// Prepares `body` for writing; `framesChunks` is `false` for HTTP/2, whose DATA frames
    /// carry a body of unknown length as it is.
    init(_ body: UploadBody, framesChunks: Bool = true) {
        length = body.length
        self.framesChunks = framesChunks
        switch body.content {
        case .segments(let segments): source = .segments(segments)
        case .stream(let stream): source = .stream(stream)
        }
    }

    deinit {
        if file >= 0 { close(file) }
    }

    /// Whether the body is framed with the chunked transfer coding.
    var isChunked: Bool { length == nil && framesChunks }
    /// Whether bytes of ``pending`` remain to be written.
    var hasPending: Bool { pendingOffset < pending.count }

    /// The bytes of ``pending`` were all written: prepares the next ones.
    /// - Parameter wake: called from any thread when a stream that had nothing has bytes again.
    func refill(wake: @escaping @Sendable () -> Void) -> Step {
        bytesSent += payloadInPending
        payloadInPending = 0
        pending.removeAll(keepingCapacity: true)
        pendingOffset = 0
        if done { return .finished }
        let read: Step
        switch source {
        case .segments(let segments): read = readSegments(segments)
        case .stream(let stream): read = readStream(stream, wake: wake)
        }
        switch read {
        case .ready:
            guard let length, bytesSent + payloadInPending > length else { return .ready }
            return .failed(.invalidBody.with(detail: "the body stream yielded more than its declared length of \(length) bytes"))
        case .finished:
            done = true
            if let length, bytesSent != length {
                return .failed(.invalidBody.with(detail: "the body stream ended after \(bytesSent) bytes, short of its declared length of \(length)"))
            }
            guard isChunked else { return .finished }
            pending.append(contentsOf: "0\r\n\r\n".utf8)
            return .ready
        case .waiting, .failed:
            return read
        }
    }

    /// Stops reading: closes the file, releases the stream's producer. Called when the request
    /// ends, however it ends (an early response included).
    func stop() {
        if file >= 0 {
            close(file)
            file = -1
        }
        buffer?.stop()
        buffer = nil
        producer?.cancel()
        producer = nil
        done = true
    }

    /// The progress to report now, if any: at least ``progressBytes`` or ``progressInterval``
    /// since the last report, or the end.
    func progressDue(at now: UInt64, final: Bool) -> Int64? {
        if final {
            // Once, unless the last throttled report already said the same.
            guard !reportedEnd, bytesSent != reportedBytes || !reportedAny else { return nil }
            reportedEnd = true
        } else {
            guard bytesSent != reportedBytes,
                  bytesSent - reportedBytes >= Self.progressBytes || now &- reportedAt >= Self.progressInterval else { return nil }
        }
        reportedBytes = bytesSent
        reportedAt = now
        reportedAny = true
        return bytesSent
    }

    // MARK: - Payload

    /// Appends the payload, framed as a chunk when chunked.
    private func take(_ bytes: UnsafeRawBufferPointer) {
        if isChunked {
            pending.append(contentsOf: String(bytes.count, radix: 16).utf8)
            pending.append(0x0D)
            pending.append(0x0A)
        }
        pending.append(contentsOf: bytes)
        if isChunked {
            pending.append(0x0D)
            pending.append(0x0A)
        }
        payloadInPending = Int64(bytes.count)
    }

    private func readStream(_ stream: UploadStream, wake: @escaping @Sendable () -> Void) -> Step {
        if buffer == nil {
            guard stream.claim() else {
                return .failed(.bodyNotReplayable.with(detail: "the body stream was already sent once and cannot be read again"))
            }
            let buffer = UploadStreamBuffer(limit: Self.streamBufferLimit, waker: wake)
            guard stream.attach(buffer) else { return .failed(.cancelled.with(detail: "the request ended before its body stream was read")) }
            self.buffer = buffer
            producer = Task { await stream.produce(buffer) }
        }
        guard let buffer else { return .finished }
        switch buffer.take(max: Self.chunkSize) {
        case .bytes(let data):
            data.withUnsafeBytes { take($0) }
            return .ready
        case .waiting:
            return .waiting
        case .finished:
            return .finished
        case .failed(let error):
            return .failed(.invalidBody.with(detail: "the body stream threw", underlying: error))
        }
    }

    private func readSegments(_ segments: [UploadSegment]) -> Step {
        while segmentIndex < segments.count {
            switch segments[segmentIndex] {
            case .bytes(let data):
                let offset = Int(segmentOffset)
                guard offset < data.count else { break }
                let count = min(Self.chunkSize, data.count - offset)
                data.withUnsafeBytes { all in take(UnsafeRawBufferPointer(rebasing: all[offset ..< offset + count])) }
                segmentOffset += Int64(count)
                return .ready
            case .file(let path, let size):
                let step = readFile(path: path, size: size)
                if case .finished = step { break }
                return step
            }
            segmentIndex += 1
            segmentOffset = 0
        }
        return .finished
    }

    /// The next chunk of a file segment; `.finished` when the segment is done.
    private func readFile(path: String, size: Int64) -> Step {
        let name = (path as NSString).lastPathComponent
        if file < 0 {
            file = open(path, O_RDONLY | O_CLOEXEC)
            if file < 0 {
                return .failed(.invalidBody.with(detail: "the file '\(name)' cannot be opened: \(String(cString: strerror(errno)))"))
            }
        }
        if segmentOffset >= size {
            var info = stat()
            let current = fstat(file, &info) == 0 ? Int64(info.st_size) : -1
            close(file)
            file = -1
            if current != size {
                return .failed(.invalidBody.with(detail: "the file '\(name)' changed size during the upload (\(size) bytes when the request was made, \(current) now)"))
            }
            return .finished
        }
        let count = Int(min(Int64(Self.chunkSize), size - segmentOffset))
        var got = 0
        var readError: Int32 = 0
        // Read straight into the chunk to send (after its chunked-coding size line, if any):
        // no copy between the file and the socket's buffer.
        let sizeLine: [UInt8] = isChunked ? Array(String(count, radix: 16).utf8) + [0x0D, 0x0A] : []
        let trailer = isChunked ? 2 : 0
        let offset = segmentOffset
        let descriptor = file
        pending = [UInt8](unsafeUninitializedCapacity: sizeLine.count + count + trailer) { bytes, initialized in
            _ = bytes.initialize(from: sizeLine)
            let payload = bytes.baseAddress! + sizeLine.count
            while got < count {
                let result = pread(descriptor, payload + got, count - got, off_t(offset) + off_t(got))
                if result < 0 {
                    if errno == EINTR { continue }
                    readError = errno
                    break
                }
                if result == 0 { break }
                got += result
            }
            if trailer > 0 {
                payload[got] = 0x0D
                payload[got + 1] = 0x0A
            }
            initialized = sizeLine.count + got + trailer
        }
        if readError != 0 {
            return .failed(.invalidBody.with(detail: "reading the file '\(name)' failed: \(String(cString: strerror(readError)))"))
        }
        if got < count {
            return .failed(.invalidBody.with(detail: "the file '\(name)' changed size during the upload (it ended after \(segmentOffset + Int64(got)) of its \(size) bytes)"))
        }
        payloadInPending = Int64(count)
        segmentOffset += Int64(count)
        return .ready
    }
}
