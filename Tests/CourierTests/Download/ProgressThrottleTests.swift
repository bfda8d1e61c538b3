@testable import Courier
import CourierTestSupport
import CourierTestServer
import Foundation
import Testing

/// ``ProgressThrottle`` on virtual time: which progress reports reach the caller.
@Suite("Progress throttling")
struct ProgressThrottleTests {
    let start = ContinuousClock.now

    @Test("with a known total: the first report, then one per 1%, and always the one that reaches the total")
    func knownTotal() {
        var throttle = ProgressThrottle()
        var delivered: [Int64] = []
        // 10,000 reports of 100 bytes on a 1,000,000-byte body, all within the same instant.
        for step in 1...10_000 {
            let bytes = Int64(step * 100)
            if throttle.offer(bytes, total: 1_000_000, now: start) { delivered.append(bytes) }
        }
        #expect(delivered.first == 100)
        #expect(delivered.last == 1_000_000)
        #expect(delivered.count == 101, "the first, one per 10,000 bytes, and the last: \(delivered.count)")
        #expect(throttle.takePending() == nil, "the last report was delivered, nothing is held")
    }

    @Test("with no total: one per 100 ms, and the last held back for the end")
    func unknownTotal() {
        var throttle = ProgressThrottle()
        var delivered: [Int64] = []
        // A report every 10 ms for one second.
        for step in 1...100 {
            let now = start + .milliseconds(step * 10)
            if throttle.offer(Int64(step), total: nil, now: now) { delivered.append(Int64(step)) }
        }
        #expect(delivered.count == 10, "the first and one per 100 ms: \(delivered)")
        let held = throttle.takePending()
        #expect(held?.bytes == 100, "the last report waits for the end of the request")
        #expect(throttle.takePending() == nil)
    }

    @Test("a repeated value is never delivered twice; a new attempt (fewer bytes) is delivered at once")
    func repeatsAndRestarts() {
        var throttle = ProgressThrottle()
        let answers = [
            throttle.offer(500, total: 1000, now: start),
            throttle.offer(500, total: 1000, now: start + .seconds(1)),
            throttle.offer(1000, total: 1000, now: start + .seconds(1)),
            throttle.offer(1000, total: 1000, now: start + .seconds(2)),
            throttle.offer(10, total: 1000, now: start + .seconds(2)),  // a retry starts again from zero
        ]
        #expect(answers == [true, false, true, false, true])
    }
}

extension Optional where Wrapped == (bytes: Int64, total: Int64?) {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case let (left?, right?): left.bytes == right.bytes && left.total == right.total
        default: false
        }
    }
}

/// Upload progress over a socket, as the closure and the delegate see it.
@Suite("Upload progress throttling over sockets")
struct UploadProgressThrottleTests {
    final class Listener: HTTPConnectionDelegate {
        let reports = Locked<[Int64]>([])
        func connection(_ connection: HTTPConnection, request id: RequestID, didSendBodyData bytesSent: Int64, expectedTotal: Int64?) {
            reports.withLock { $0.append(bytesSent) }
        }
    }

    @Test("a 10 MiB file: the closure and the delegate each hear at most about 101 reports (1% steps), increasing, ending at the size")
    func tenMiB() async throws {
        let server = try TestServer(configuration: .init(maxBodyBytes: 16 << 20))
        server.addHashRoute()
        defer { server.shutdown() }
        let size = 10 << 20
        let file = try TemporaryFile(size: size)
        defer { file.remove() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            let listener = leaks.track(Listener())
            connection.delegate = listener
            let closure = Locked<[Int64]>([])
            var request = HTTPRequest(.put, "/sha", body: try .file(file.url))
            request.onUploadProgress = { sent, _ in closure.withLock { $0.append(sent) } }
            _ = try await connection.send(request)
            #expect(await eventually { closure.withLock { $0.last } == Int64(size) && listener.reports.withLock { $0.last } == Int64(size) })
            for reports in [closure.withLock { $0 }, listener.reports.withLock { $0 }] {
                #expect(reports.count >= 2 && reports.count <= 102, "\(reports.count) reports")
                #expect(reports == reports.sorted() && Set(reports).count == reports.count, "increasing, never repeated")
            }
            connection.delegate = nil
        }
    }
}
