import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// A cancelled upload stops reading its body stream before its callback runs: the caller's
/// sequence is not read on behind a request that already ended.
@Suite("Uploads: a cancelled stream is not read on")
struct UploadCancelSourceTests {
    /// A stream of 1,000-octet chunks that counts the chunks asked for, and those asked for
    /// after ``ended`` was set.
    struct CountedChunks: AsyncSequence, Sendable {
        typealias Element = Data
        let total: Int
        let ended = Locked(false)
        let readsAfterEnd = Locked(0)
        let reads = Locked(0)

        struct AsyncIterator: AsyncIteratorProtocol {
            let chunks: CountedChunks
            var sent = 0

            mutating func next() async -> Data? {
                chunks.reads.withLock { $0 += 1 }
                if chunks.ended.withLock({ $0 }) { chunks.readsAfterEnd.withLock { $0 += 1 } }
                guard sent < chunks.total else { return nil }
                sent += 1_000
                return Data(count: 1_000)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }
    }

    @Test("HTTP/1.1 and HTTP/2: a stream upload cancelled while its producer runs fast is read at most once more after the cancel returned, in 4 rounds",
          arguments: [false, true])
    func cancelStopsTheProducer(http2: Bool) async throws {
        let server = try TestServer(configuration: .init(maxBodyBytes: 64 << 20))
        defer { server.shutdown() }
        server.addHashRoute()
        let peer = try HTTP2ScriptedPeer { _, connection in
            try connection.start()
            try connection.serve()
        }
        defer { peer.close() }
        for round in 0..<4 {
            let chunks = CountedChunks(total: 40 << 20)
            let request = HTTPRequest(.post, "/sha", body: .stream(chunks))
            let cancel: (HTTPConnection, [RequestID]) async throws -> Void = { connection, ids in
                #expect(await eventually { chunks.reads.withLock { $0 } > 2_000 })
                connection.cancel(ids[0])
                chunks.ended.withLock { $0 = true }  // the request has ended: its callback is on its way
                try await Task.sleep(for: .milliseconds(100))  // a producer still running would read on meanwhile
            }
            let outcomes: [CaseOutcome]
            if http2 {
                outcomes = try await runNativeCase([request], on: peer, configuration: NativeTransport.Configuration().speakingH2C(), during: cancel)
            } else {
                var configuration = NativeTransport.Configuration()
                configuration.proxy = .none
                outcomes = try await runNativeCase([request], on: server, configuration: configuration, during: cancel)
            }
            #expect(outcomes.first?.error == .cancelled, "round \(round)")
            #expect(chunks.readsAfterEnd.withLock { $0 } <= 1, "round \(round): \(chunks.readsAfterEnd.withLock { $0 }) reads after the end")
        }
    }
}
