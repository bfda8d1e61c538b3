import CourierTLS
import Foundation
import Synchronization

/// Writes a streamed response body into a download's partial file, hashing it as it goes when
/// the options ask for the digest, and turns the partial file into the destination at the end
/// (``PartialDownload`` describes the files).
///
/// - `206` to a resume: the `Content-Range` must start where the partial file ends
///   (``HTTPConnectionError/rangeMismatch`` otherwise); the partial bytes are hashed (if the
///   digest is wanted), then the new ones appended.
/// - Any other accepted status: the partial file is emptied and the body written from the start;
///   the response's validator is recorded for a later resume.
/// - At the end: fsync, the SHA-256 check (a mismatch deletes the partial file and its record:
///   ``HTTPConnectionError/checksumMismatch``), the final permissions, an atomic rename over the
///   destination, a sync of the directory, and the record removed.
/// - A body that breaks off (connection lost, timeout, cancel) leaves the partial file and its
///   record for a resume.
final class FileDownloadWriter: BodyConsumer {
    /// What a finished download produced.
    struct Summary: Sendable {
        var byteCount: Int64
        var resumedFrom: Int64
        var sha256: String?
    }

    let partial: PartialDownload
    /// The request's absolute URL (for the resume record).
    let url: URL
    /// Where the partial file starts from: its size and the `If-Range` sent; `nil` for a full download.
    let resumePoint: (offset: Int64, ifRange: String)?
    let options: DownloadOptions
    /// The expected digest, lowercased.
    private let expectedSHA256: String?
    private let summary = Mutex<Summary?>(nil)

    var runsOffLoop: Bool { true }
    /// `false`: a download's body goes to its file, not to the cache.
    var mayStoreInCache: Bool { false }

    init(partial: PartialDownload, url: URL, resumePoint: (offset: Int64, ifRange: String)?, options: DownloadOptions) {
        self.partial = partial
        self.url = url
        self.resumePoint = resumePoint
        self.options = options
        self.expectedSHA256 = options.expectedSHA256?.lowercased()
    }

    /// The result of the finished download, for the response it finished with.
    func result(_ response: HTTPResponse) -> DownloadResult {
        let summary = self.summary.withLock { $0 } ?? Summary(byteCount: 0, resumedFrom: 0, sha256: nil)
        return DownloadResult(response: response, fileURL: partial.destination, byteCount: summary.byteCount,
                              resumedFrom: summary.resumedFrom, sha256: summary.sha256)
    }

    /// A `416` to a resume means the partial file is no prefix the server can extend: it goes,
    /// so that the next download starts over.
    func rejected(_ response: HTTPResponse) {
        if resumePoint != nil, response.status.code == 416 { partial.removeAll() }
    }

    func consume(_ response: HTTPResponse, body: HTTPBodyStream, events: BodyConsumerEvents) async -> Result<HTTPResponse, HTTPConnectionError> {
        do throws(HTTPConnectionError) {
            let file = try await DownloadFile.opening(partial.partialPath)
            defer { file.close() }
            var hasher = expectedSHA256 != nil || options.computesSHA256 ? SHA256Hasher() : nil
            let start = try prepare(file, for: response, hasher: &hasher)
            var written = start.offset
            var throttle = ProgressThrottle()
            let clock = ContinuousClock()
            report(written, start.total, &throttle, clock.now, events)
            for try await chunk in body {
                try file.write(chunk)
                hasher?.update(chunk)
                written += Int64(chunk.count)
                report(written, start.total, &throttle, clock.now, events)
            }
            try file.sync()
            var digest: String?
            if let finished = hasher.take() { digest = Digest.hex(finished.finalize()) }
            if let expectedSHA256, let digest, expectedSHA256 != digest {
                partial.removeAll()
                throw .checksumMismatch.with(detail: "expected \(expectedSHA256), got \(digest); \(partial.destination.path) was not written")
            }
            try file.setPermissions(options.permissions)
            try file.rename(to: partial.destination.path)
            partial.removeRecord()
            if let last = throttle.takePending() { post(last.bytes, last.total, events) }
            summary.withLock { $0 = Summary(byteCount: written, resumedFrom: start.offset, sha256: digest) }
            return .success(response)
        } catch {
            return .failure(error)
        }
    }

    /// Makes the partial file ready for the body: keeps and hashes the resumed prefix for a
    /// matching `206`, empties it otherwise.
    /// - Returns: the offset the body starts at, and the whole file's length if known.
    private func prepare(_ file: DownloadFile, for response: HTTPResponse,
                         hasher: inout SHA256Hasher?) throws(HTTPConnectionError) -> (offset: Int64, total: Int64?) {
        let identity = response.headers["Content-Encoding"].map { $0.lowercased() == "identity" } ?? true
        if response.status.code == 206 {
            guard let resumePoint else {
                throw .rangeMismatch.with(detail: "a 206 answered a download that asked for no range")
            }
            guard let field = response.headers["Content-Range"], let range = ContentRange(field) else {
                throw .rangeMismatch.with(detail: "the 206 has no single byte range in Content-Range (\(response.headers["Content-Range"] ?? "absent"))")
            }
            guard range.first == resumePoint.offset else {
                throw .rangeMismatch.with(detail: "asked for bytes from \(resumePoint.offset), got \(range.first)-\(range.last)")
            }
            try file.truncate(to: resumePoint.offset)
            if hasher != nil { try file.hashPrefix(resumePoint.offset, into: &hasher!) }
            return (resumePoint.offset, range.completeLength)
        }
        try file.truncate(to: 0)
        try partial.saveRecord(PartialDownload.Record(url: url, head: response))
        let length = identity ? response.headers["Content-Length"].flatMap { Int64($0) } : nil
        return (0, length)
    }

    private func report(_ bytes: Int64, _ total: Int64?, _ throttle: inout ProgressThrottle,
                        _ now: ContinuousClock.Instant, _ events: BodyConsumerEvents) {
        guard options.onProgress != nil, throttle.offer(bytes, total: total, now: now) else { return }
        post(bytes, total, events)
    }

    private func post(_ bytes: Int64, _ total: Int64?, _ events: BodyConsumerEvents) {
        guard let onProgress = options.onProgress else { return }
        events.post { onProgress(bytes, total) }
    }
}
