import Foundation

/// How ``HTTPConnection/download(_:to:options:)`` downloads a file.
///
/// ```swift
/// let options = DownloadOptions(resume: true, expectedSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
/// ```
public struct DownloadOptions: Sendable {
    /// Whether to go on from a partial file that an earlier download of the same URL to the same
    /// destination left (see ``HTTPConnection/download(_:to:options:)``); `false` by default,
    /// which starts over.
    public var resume: Bool
    /// The SHA-256 digest the whole file must have, as 64 hexadecimal digits (either case); the
    /// download fails with ``HTTPConnectionError/checksumMismatch`` and deletes the file when it
    /// differs. `nil` (the default) checks nothing.
    public var expectedSHA256: String?
    /// Whether to compute the file's SHA-256 digest as it is written and report it in
    /// ``DownloadResult/sha256``, without checking it; `false` by default, since hashing costs
    /// about half a second of CPU per GiB. An ``expectedSHA256`` computes it anyway.
    public var computesSHA256: Bool
    /// The permission bits of the finished file; `0o644` by default. While incomplete it is `0o600`.
    public var permissions: Int
    /// Called on the connection's callback queue as bytes reach the file: the bytes in the file
    /// (a resumed prefix included) and the whole file's length when the server declared it. At
    /// most every 1% of the length or 100 ms, and once when the last byte is written; `nil` by
    /// default.
    public var onProgress: (@Sendable (_ bytesWritten: Int64, _ expectedTotal: Int64?) -> Void)?

    /// Creates download options.
    /// - Parameters:
    ///   - resume: whether to go on from a partial file; `false` by default.
    ///   - expectedSHA256: the digest to check, in hexadecimal; `nil` by default.
    ///   - computesSHA256: whether to report the digest without checking it; `false` by default.
    ///   - permissions: the finished file's permission bits; `0o644` by default.
    ///   - onProgress: progress reports; `nil` by default.
    public init(resume: Bool = false, expectedSHA256: String? = nil, computesSHA256: Bool = false, permissions: Int = 0o644,
                onProgress: (@Sendable (_ bytesWritten: Int64, _ expectedTotal: Int64?) -> Void)? = nil) {
        self.resume = resume
        self.expectedSHA256 = expectedSHA256
        self.computesSHA256 = computesSHA256
        self.permissions = permissions
        self.onProgress = onProgress
    }
}

/// A finished download: the file, its digest, and the response it came from.
public struct DownloadResult: Sendable {
    /// The response's status, headers and URL (its ``HTTPResponse/body`` is empty: the body is
    /// in the file), with the request's metrics. A resumed download's status is `206`.
    public let response: HTTPResponse
    /// The finished file (the destination asked for).
    public let fileURL: URL
    /// The file's length in bytes.
    public let byteCount: Int64
    /// How many bytes came from an earlier partial download; 0 when it started from the beginning.
    public let resumedFrom: Int64
    /// The SHA-256 digest of the whole file, as 64 lowercase hexadecimal digits, when the
    /// options asked for it (``DownloadOptions/computesSHA256`` or
    /// ``DownloadOptions/expectedSHA256``); `nil` otherwise.
    public let sha256: String?
}
