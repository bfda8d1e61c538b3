@testable import Courier
import CourierTestSupport
import CourierTLS
import Foundation
import Testing

/// Large streamed bodies in constant memory against a slow consumer, each measured in a child
/// process of its own (so that other tests' allocations do not blur its resident set), from an
/// nginx in a process of its own (so that the server's bytes are not counted either).
@Suite("Streamed responses: memory", .enabled(if: Nginx.isInstalled, Nginx.skipReason))
struct StreamMemoryTests {
    static let size = 256 << 20
    /// The bound on the resident set's growth: a quarter of the body, far above the 256 KiB the
    /// body buffer holds, far below the body.
    static let bound = 64 << 20

    /// nginx serving `big.bin` (``size`` bytes written at run time, 1 MiB at a time) and its SHA-256.
    static func serveBigFile() async throws -> (Nginx, String) {
        let nginx = try await Nginx.start()
        let path = nginx.directory.appendingPathComponent("html/big.bin").path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var hasher = SHA256Hasher()
        var offset = 0
        while offset < size {
            let chunk = PatternChunks.bytes(from: offset, count: min(1 << 20, size - offset))
            try handle.write(contentsOf: chunk)
            hasher.update(chunk)
            offset += chunk.count
        }
        return (nginx, Digest.hex(hasher.finalize()))
    }

    /// Samples this process's resident set every 5 ms until cancelled; keeps the peak.
    final class PeakSampler: Sendable {
        let baseline = UploadMemoryTests.residentBytes()
        let peak: Locked<Int>
        private let task: Locked<Task<Void, Never>?> = Locked(nil)

        init() {
            peak = Locked(baseline)
            let peak = self.peak
            task.withLock {
                $0 = Task {
                    while !Task.isCancelled {
                        let now = UploadMemoryTests.residentBytes()
                        peak.withLock { $0 = max($0, now) }
                        try? await Task.sleep(for: .milliseconds(5))
                    }
                }
            }
        }

        /// Stops sampling. - Returns: the peak growth over the baseline, in bytes.
        func stop() -> Int {
            task.withLock { $0?.cancel() }
            return peak.withLock { $0 } - baseline
        }
    }

    @Test("async: a 256 MiB body read slowly keeps the resident set flat (< 64 MiB growth) and the body buffer near 256 KiB")
    func slowAsyncReader() async throws {
        try await slowAsyncReader(.native)
    }

    @Test("URLSession: a 256 MiB body read slowly arrives intact; there is no backpressure, so the growth is reported, not bounded")
    func slowAsyncReaderURLSession() async throws {
        try await slowAsyncReader(.urlSession)
    }

    func slowAsyncReader(_ kind: TransportUnderTest, test: String = #function) async throws {
        try await runInChildProcess(Self.self, test: test, timeout: .seconds(180)) {
            let (nginx, expected) = try await Self.serveBigFile()
            defer { nginx.stop() }
            let transport = kind.make()
            defer { (transport as? NativeTransport)?.shutdown() }
            let connection = HTTPConnection(baseURL: nginx.baseURL, configuration: .init(timeout: .seconds(30), transport: transport))
            let sampler = PeakSampler()
            let response = try await connection.stream(HTTPRequest(.get, "/big.bin"))
            var hasher = SHA256Hasher()
            var received = 0
            var sinceNap = 0
            for try await chunk in response.body {
                hasher.update(chunk)
                received += chunk.count
                sinceNap += chunk.count
                if sinceNap >= 256 << 10 {  // slower than loopback: about 1 ms per 256 KiB
                    sinceNap = 0
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            let growth = sampler.stop()
            let peakBuffered = response.body.buffer.peakBuffered
            print("STREAM-MEMORY async \(kind) 256 MiB: resident growth \(growth / 1024) KiB, body buffer peak \(peakBuffered / 1024) KiB")
            #expect(received == Self.size)
            #expect(Digest.hex(hasher.finalize()) == expected)
            if kind == .native {
                #expect(growth < Self.bound, "the resident set grew by \(growth) bytes")
                #expect(peakBuffered <= (256 << 10) + (1 << 20), "the buffer held \(peakBuffered) bytes at most")
            }
        } check: { child in
            #expect(child.status == 0 && child.ranOneTest, "\(child.output.suffix(3_000))")
            for line in child.output.split(separator: "\n") where line.contains("STREAM-MEMORY") { print(line) }
        }
    }

    @Test("closures: a 256 MiB body handed to a slow onChunk keeps the resident set flat (< 64 MiB growth)")
    func slowChunkClosure() async throws {
        try await runInChildProcess(Self.self, timeout: .seconds(180)) {
            let (nginx, expected) = try await Self.serveBigFile()
            defer { nginx.stop() }
            let transport = NativeTransport()
            defer { transport.shutdown() }
            let connection = HTTPConnection(baseURL: nginx.baseURL, configuration: .init(timeout: .seconds(30), transport: transport))
            let sampler = PeakSampler()
            let state = Locked((received: 0, sinceNap: 0, intact: true))
            let outcome: Result<HTTPResponse, HTTPConnectionError> = await withCheckedContinuation { continuation in
                connection.stream(HTTPRequest(.get, "/big.bin"),
                                  onChunk: { chunk in
                                      let nap = state.withLock { state -> Bool in
                                          state.intact = state.intact && chunk == PatternChunks.bytes(from: state.received, count: chunk.count)
                                          state.received += chunk.count
                                          state.sinceNap += chunk.count
                                          guard state.sinceNap >= 256 << 10 else { return false }
                                          state.sinceNap = 0
                                          return true
                                      }
                                      if nap { usleep(1_000) }
                                  },
                                  onSuccess: { continuation.resume(returning: .success($0)) },
                                  onError: { continuation.resume(returning: .failure($0)) })
            }
            let growth = sampler.stop()
            print("STREAM-MEMORY closure 256 MiB: resident growth \(growth / 1024) KiB")
            #expect(throws: Never.self) { try outcome.get() }
            #expect(state.withLock { $0.received } == Self.size)
            #expect(state.withLock { $0.intact }, "every chunk holds the file's bytes at its offset")
            _ = expected
            #expect(growth < Self.bound, "the resident set grew by \(growth) bytes")
        } check: { child in
            #expect(child.status == 0 && child.ranOneTest, "\(child.output.suffix(3_000))")
            for line in child.output.split(separator: "\n") where line.contains("STREAM-MEMORY") { print(line) }
        }
    }

    @Test("download: a 256 MiB file from nginx lands whole with the resident set flat (< 64 MiB growth)")
    func largeDownload() async throws {
        try await runInChildProcess(Self.self, timeout: .seconds(180)) {
            let (nginx, expected) = try await Self.serveBigFile()
            defer { nginx.stop() }
            let transport = NativeTransport()
            defer { transport.shutdown() }
            let connection = HTTPConnection(baseURL: nginx.baseURL, configuration: .init(timeout: .seconds(30), transport: transport))
            let folder = try DownloadTests.Folder()
            defer { folder.remove() }
            let sampler = PeakSampler()
            let clock = ContinuousClock()
            let start = clock.now
            let result = try await connection.download(HTTPRequest(.get, "/big.bin"), to: folder.file("big.bin"),
                                                       options: DownloadOptions(expectedSHA256: expected))
            let elapsed = clock.now - start
            let growth = sampler.stop()
            print("STREAM-MEMORY download 256 MiB: resident growth \(growth / 1024) KiB, \(elapsed)")
            #expect(result.byteCount == Int64(Self.size))
            #expect(result.sha256 == expected)
            #expect(growth < Self.bound, "the resident set grew by \(growth) bytes")
        } check: { child in
            #expect(child.status == 0 && child.ranOneTest, "\(child.output.suffix(3_000))")
            for line in child.output.split(separator: "\n") where line.contains("STREAM-MEMORY") { print(line) }
        }
    }
}
