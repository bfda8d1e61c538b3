@testable import Courier
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The upload pieces without sockets: the stream buffer's hand-over and back-pressure, and the
/// framing and checks of ``NativeUpload``.
@Suite("Uploads: buffer and framing")
struct UploadInternalTests {
    /// Drains `upload` to its end; returns the bytes it framed, or the error it failed with.
    func drain(_ upload: NativeUpload, limit: Int = 1_000) -> Result<[UInt8], HTTPConnectionError> {
        var out: [UInt8] = []
        for _ in 0..<limit {
            switch upload.refill(wake: {}) {
            case .ready:
                out += upload.pending
                upload.pendingOffset = upload.pending.count
            case .finished: return .success(out)
            case .failed(let error): return .failure(error)
            case .waiting: Issue.record("a replayable body never waits"); return .success(out)
            }
        }
        Issue.record("the body did not end")
        return .success(out)
    }

    @Test("a stream of unknown length is framed in chunks with a last chunk; a known length goes out as it is")
    func framing() async throws {
        let plain = try drain(NativeUpload(UploadBody(segments: [.bytes(Data("hello ".utf8)), .bytes(Data()), .bytes(Data("world".utf8))]))).get()
        #expect(String(decoding: plain, as: UTF8.self) == "hello world")

        let stream = UploadStream { buffer in
            _ = await buffer.push(Data("ab".utf8))
            _ = await buffer.push(Data(count: 0))
            _ = await buffer.push(Data(repeating: 0x63, count: 17))
            buffer.finish(error: nil)
        }
        let upload = NativeUpload(UploadBody(stream: stream, length: nil))
        #expect(upload.isChunked)
        var out: [UInt8] = []
        var ended = false
        for _ in 0..<2_000 where !ended {
            switch upload.refill(wake: {}) {
            case .ready:
                out += upload.pending
                upload.pendingOffset = upload.pending.count
            case .waiting:
                try await Task.sleep(for: .milliseconds(1))
            case .finished:
                ended = true
            case .failed(let error):
                Issue.record("\(error)")
                ended = true
            }
        }
        #expect(String(decoding: out, as: UTF8.self) == "2\r\nab\r\n11\r\n" + String(repeating: "c", count: 17) + "\r\n0\r\n\r\n")
        #expect(upload.bytesSent == 19)
    }

    @Test("a 256 KiB + 1 in-memory segment is handed out in two chunks, the first at the 256 KiB bound")
    func chunkBound() throws {
        #expect(NativeUpload.chunkSize == 256 << 10)
        let upload = NativeUpload(UploadBody(segments: [.bytes(Data(count: (256 << 10) + 1))]))
        #expect(upload.refill(wake: {}).isReady)
        #expect(upload.pending.count == NativeUpload.chunkSize)
        upload.pendingOffset = upload.pending.count
        #expect(upload.refill(wake: {}).isReady)
        #expect(upload.pending.count == 1)
        upload.pendingOffset = 1
        #expect(upload.refill(wake: {}).isFinished)
        #expect(upload.bytesSent == (256 << 10) + 1)
    }

    @Test("a file that is missing when it is sent fails with invalidBody")
    func missingFile() {
        let upload = NativeUpload(UploadBody(segments: [.file(path: "/nonexistent/courier-\(UUID().uuidString)", size: 3)]))
        guard case .failure(let error) = drain(upload) else { Issue.record("no failure"); return }
        #expect(error == .invalidBody)
    }

    @Test("the stream buffer: the consumer waits, is woken by a push, and the producer waits while the buffer is full")
    func streamBuffer() async throws {
        let wakes = Atomic<Int>(0)
        let buffer = UploadStreamBuffer(limit: 100) { wakes.add(1, ordering: .relaxed) }
        guard case .waiting = buffer.take(max: 10) else { Issue.record("an empty buffer gave something"); return }
        let pushed = Atomic<Int>(0)
        let producer = Task {
            for _ in 0..<3 {
                guard await buffer.push(Data(count: 60)) else { return }
                pushed.add(1, ordering: .relaxed)
            }
            buffer.finish(error: nil)
        }
        #expect(await eventually { pushed.load(ordering: .relaxed) == 1 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(pushed.load(ordering: .relaxed) == 1)  // 120 bytes held ≥ the 100 limit: the producer waits
        #expect(wakes.load(ordering: .relaxed) == 1)  // the waiting consumer was woken once
        var taken = 0
        while taken < 180 {
            switch buffer.take(max: 25) {
            case .bytes(let data):
                #expect(data.count <= 25)
                taken += data.count
            case .waiting:
                try await Task.sleep(for: .milliseconds(1))
            case .finished, .failed:
                Issue.record("ended after \(taken) bytes")
                return
            }
        }
        await producer.value
        guard case .finished = buffer.take(max: 25) else { Issue.record("not finished"); return }
    }

    @Test("stopping the buffer releases a waiting producer, which then stops")
    func stopReleasesProducer() async {
        let buffer = UploadStreamBuffer(limit: 10) {}
        let producer = Task { await buffer.push(Data(count: 50)) }
        try? await Task.sleep(for: .milliseconds(20))
        buffer.stop()
        #expect(await producer.value == false)
        #expect(await buffer.push(Data(count: 1)) == false)
    }

    @Test("a stream is claimed once: a second reader fails with bodyNotReplayable")
    func claimOnce() {
        let stream = UploadStream { buffer in buffer.finish(error: nil) }
        let first = NativeUpload(UploadBody(stream: stream, length: 0))
        _ = first.refill(wake: {})
        let second = NativeUpload(UploadBody(stream: stream, length: 0))
        guard case .failed(let error) = second.refill(wake: {}) else { Issue.record("read twice"); return }
        #expect(error == .bodyNotReplayable)
        first.stop()
        #expect(UploadBody(stream: stream, length: 0).wasConsumed)
        #expect(!UploadBody(stream: stream, length: 0).isReplayable)
    }
}

extension NativeUpload.Step {
    var isReady: Bool { if case .ready = self { true } else { false } }
    var isFinished: Bool { if case .finished = self { true } else { false } }
}
