@testable import Courier
import CourierTestSupport
import CourierTestServer
import Foundation
import Synchronization
import Testing

/// `HTTPConnection.stream(_:onChunk:…)`: a streamed body for closure callers (issue 15, part 2).
@Suite("Streamed responses in the closure style")
struct StreamClosureTests {
    @Test("every chunk reaches onChunk in order on the callback queue, then exactly one onSuccess; the body is never collected")
    func chunksThenSuccess() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let queue = DispatchQueue(label: "stream-closure-test")
            let connection = leaks.connection(server, .native) {
                $0.callbackQueue = queue
                $0.maxResponseBodySize = 1 << 20  // the body is 8 MiB: collecting it would fail
            }
            let size = 8 << 20
            let received = Locked(Data())
            let events = Locked<[String]>([])
            let offQueue = Atomic<Int>(0)
            connection.stream(HTTPRequest(.get, "/bytes/\(size)"),
                              onChunk: { chunk in
                                  if DispatchQueue.getSpecific(key: StreamClosureTests.key) == nil { offQueue.add(1, ordering: .relaxed) }
                                  received.withLock { $0.append(chunk) }
                              },
                              onSuccess: { response in
                                  events.withLock { $0.append("success \(response.status.code) \(response.body.count) \(received.withLock { $0.count })") }
                              },
                              onError: { error in events.withLock { $0.append("error \(error.kindName)") } })
            queue.setSpecific(key: StreamClosureTests.key, value: ())
            #expect(await eventually { !events.withLock { $0 }.isEmpty })
            try await Task.sleep(for: .milliseconds(100))
            #expect(events.withLock { $0 } == ["success 200 0 \(size)"], "the terminal call comes after the last chunk, once")
            #expect(received.withLock { $0 } == TestServer.bytesPattern(count: size))
            #expect(offQueue.load(ordering: .relaxed) <= 1, "chunks run on the callback queue")  // the first may beat setSpecific
        }
    }

    static let key = DispatchSpecificKey<Void>()

    @Test("cancelled mid-body: exactly one onError(.cancelled), no chunk after it, and no leaked socket")
    func cancelMidBody() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native)
            let events = Locked<[String]>([])
            let id = Locked<RequestID?>(nil)
            let chunks = Atomic<Int>(0)
            id.withLock { stored in
                stored = connection.stream(HTTPRequest(.get, "/bytes/\(64 << 20)"),
                                           onChunk: { _ in
                                               events.withLock { if $0.last != "chunk" { $0.append("chunk") } }
                                               if chunks.add(1, ordering: .relaxed).newValue == 3, let id = id.withLock({ $0 }) {
                                                   connection.cancel(id)
                                               }
                                           },
                                           onSuccess: { _ in events.withLock { $0.append("success") } },
                                           onError: { error in events.withLock { $0.append("error \(error.kindName)") } })
            }
            #expect(await eventually { events.withLock { $0.contains { $0.hasPrefix("error") || $0 == "success" } } })
            try await Task.sleep(for: .milliseconds(200))
            #expect(events.withLock { $0 } == ["chunk", "error cancelled"])
        }
    }
}
