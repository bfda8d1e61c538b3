import Foundation
import Glibc

/// The files a download keeps beside its destination while it runs, and what a resume needs
/// from them.
///
/// For a destination `dir/name`:
/// - `dir/.name.courier-partial` holds the bytes received so far (mode `0600`): a file that is
///   incomplete and not yet checked is readable by its owner only;
/// - `dir/.name.courier-partial.validator` (mode `0600`) is a small JSON record of what the bytes
///   belong to: the URL, and the response's `ETag` or `Last-Modified`. A sidecar file rather than
///   an extended attribute, because not every file system keeps user attributes (tmpfs before
///   Linux 6.6, many network file systems).
///
/// A resume sends `Range: bytes=N-` (N the partial file's size) with `If-Range` carrying the
/// strong `ETag`, else the `Last-Modified` date: the server then sends the rest (`206`) only if
/// the resource is unchanged, and the whole of it (`200`) otherwise. A partial file without a
/// record, or whose record is for another URL or has no usable validator, is started over.
struct PartialDownload: Sendable {
    /// What the partial bytes belong to.
    struct Record: Codable, Equatable, Sendable {
        /// The request's absolute URL.
        var url: String
        /// The strong `ETag` of the response the bytes came from, if it had one.
        var etag: String?
        /// The `Last-Modified` of that response, if it had one.
        var lastModified: String?

        /// The `If-Range` value: the strong entity tag, else the date; `nil` when neither can be
        /// used (RFC 9110, section 13.1.5: a weak entity tag never goes in `If-Range`).
        var ifRange: String? {
            if let etag, !etag.hasPrefix("W/") { return etag }
            return lastModified
        }

        /// The record for a response, or `nil` when it offers nothing to resume against.
        init?(url: URL, head: HTTPResponse) {
            self.url = url.absoluteString
            let etag = head.headers["ETag"]
            self.etag = etag?.hasPrefix("W/") == true ? nil : etag
            self.lastModified = head.headers["Last-Modified"]
            if ifRange == nil { return nil }
        }
    }

    /// The finished file.
    let destination: URL
    /// Where the bytes go while the download runs.
    let partialPath: String
    /// Where the record goes.
    let recordPath: String

    /// The files for `destination`.
    init(destination: URL) {
        self.destination = destination.standardizedFileURL
        let directory = self.destination.deletingLastPathComponent().path
        let name = self.destination.lastPathComponent
        partialPath = (directory as NSString).appendingPathComponent(".\(name).courier-partial")
        recordPath = partialPath + ".validator"
    }

    /// How far a resume of `url` can start: the partial file's size and the `If-Range` value, or
    /// `nil` when there is nothing usable to resume (no partial bytes, no record, another URL,
    /// no validator).
    func resumePoint(for url: URL) -> (offset: Int64, ifRange: String)? {
        var status = stat()
        guard stat(partialPath, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size > 0,
              let data = FileManager.default.contents(atPath: recordPath),
              let record = try? JSONDecoder().decode(Record.self, from: data),
              record.url == url.absoluteString, let ifRange = record.ifRange else { return nil }
        return (Int64(status.st_size), ifRange)
    }

    /// Keeps the record of the response the partial bytes now come from; removes it when the
    /// response offers no validator (such a download cannot be resumed).
    func saveRecord(_ record: Record?) throws(HTTPConnectionError) {
        guard let record else {
            unlink(recordPath)
            return
        }
        let data: Data
        do { data = try JSONEncoder().encode(record) } catch {
            throw .cannotWriteFile.with(detail: "could not encode the resume record", underlying: error)
        }
        try DownloadFile.writeAtomically(data, to: recordPath)
    }

    /// Deletes the partial file and its record.
    func removeAll() {
        unlink(partialPath)
        unlink(recordPath)
    }

    /// Deletes the record alone (after the partial file became the destination).
    func removeRecord() {
        unlink(recordPath)
    }
}
