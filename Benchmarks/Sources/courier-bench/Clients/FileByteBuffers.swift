import Foundation
import Glibc
import NIOCore

/// A file's bytes as an `AsyncSequence` of 64 KiB `ByteBuffer`s, read with `read(2)` as the
/// consumer asks for them: the streamed request body AsyncHTTPClient is given for an upload
/// from a file (it has no file body of its own in its async API).
struct FileByteBuffers: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// The file.
    let path: String
    /// Bytes per read.
    var chunkSize = 64 << 10

    /// Reads the file from its start; the descriptor closes when the iterator goes away.
    final class AsyncIterator: AsyncIteratorProtocol {
        private let descriptor: Int32
        private let chunkSize: Int
        private let allocator = ByteBufferAllocator()

        init(path: String, chunkSize: Int) {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            self.chunkSize = chunkSize
        }

        deinit {
            if descriptor >= 0 { close(descriptor) }
        }

        func next() async throws -> ByteBuffer? {
            guard descriptor >= 0 else { throw BenchError("cannot open the upload file: errno \(errno)") }
            var buffer = allocator.buffer(capacity: chunkSize)
            let count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: chunkSize) { raw in
                let count = read(descriptor, raw.baseAddress, chunkSize)
                guard count >= 0 else { throw BenchError("reading the upload file failed: errno \(errno)") }
                return count
            }
            return count == 0 ? nil : buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(path: path, chunkSize: chunkSize)
    }
}
