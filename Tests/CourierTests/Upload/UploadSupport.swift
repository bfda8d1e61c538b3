import Courier
import CourierTLS
import CourierTestServer
import Foundation

/// A body of `total` bytes of a fixed pattern (`index % 251`, so that chunk edges never line up
/// with it), produced lazily in chunks of `chunk` bytes; counts what it yielded.
struct PatternChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let total: Int
    let chunk: Int
    /// Bytes yielded so far, across iterations.
    let yielded = Locked(0)

    struct AsyncIterator: AsyncIteratorProtocol {
        let total: Int
        let chunk: Int
        let yielded: Locked<Int>
        var offset = 0

        mutating func next() async -> Data? {
            guard offset < total else { return nil }
            let count = Swift.min(chunk, total - offset)
            let piece = PatternChunks.bytes(from: offset, count: count)
            offset += count
            yielded.withLock { $0 += count }
            return piece
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(total: total, chunk: chunk, yielded: yielded)
    }

    /// The pattern's bytes `offset ..< offset + count`.
    static func bytes(from offset: Int, count: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in 0..<count { buffer[index] = UInt8((offset + index) % 251) }
        }
        return Data(bytes)
    }
}

/// Lowercase hexadecimal SHA-256 of `data`.
func sha256Hex(_ data: Data) -> String {
    Digest.sha256(data).map { String(format: "%02x", $0) }.joined()
}

/// What the `/sha` route reports about the body it received.
struct ReceivedBody: Equatable {
    let sha256: String
    let length: Int
    /// The request's `Transfer-Encoding`, or `-`.
    let transferEncoding: String
    /// The request's `Content-Length`, or `-`.
    let contentLength: String

    init(_ text: String) {
        let fields = text.split(separator: " ").map(String.init)
        sha256 = fields.first ?? ""
        length = fields.count > 1 ? Int(fields[1]) ?? -1 : -1
        transferEncoding = fields.count > 2 ? fields[2] : ""
        contentLength = fields.count > 3 ? fields[3] : ""
    }
}

extension TestServer {
    /// Adds `/sha` (and `/sha/*`): answers `<sha256> <length> <transfer-encoding> <content-length>`
    /// of the body it received.
    func addHashRoute() {
        let reply: Handler = { request in
            .text("\(sha256Hex(request.body)) \(request.body.count) \(request.value(for: "Transfer-Encoding") ?? "-") \(request.value(for: "Content-Length") ?? "-")")
        }
        route("/sha", reply)
        route("/sha/*", reply)
    }
}

/// A file in a private temporary directory, removed by ``remove()``.
struct TemporaryFile {
    let url: URL

    /// Writes `size` bytes of the ``PatternChunks`` pattern, 1 MiB at a time.
    init(size: Int, name: String = "upload.bin") throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        url = directory.appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var offset = 0
        while offset < size {
            let count = min(1 << 20, size - offset)
            try handle.write(contentsOf: PatternChunks.bytes(from: offset, count: count))
            offset += count
        }
    }

    func remove() {
        try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
    }
}

/// The error `body` failed with, or `nil` when it succeeded.
func failure(of body: () async throws(HTTPConnectionError) -> Void) async -> HTTPConnectionError? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}
