import Courier
import CourierTestServer
import CourierTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// A deadline holds when its timer runs late. The timer runs on Dispatch's global queue, whose
/// threads a busy process (or a loaded machine) can keep busy past the deadline; an answer that
/// arrives meanwhile must not end the request as a success.
@Suite("Deadline with a late timer")
struct DeadlineLateTimerTests {
    /// Keeps Dispatch's global threads busy until ``release()``: `count` blocks that wait on a
    /// semaphore, each bounded to 10 seconds.
    final class GlobalQueueJam: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let count: Int

        init(count: Int) {
            self.count = count
            for _ in 0..<count {
                DispatchQueue.global().async { [semaphore] in _ = semaphore.wait(timeout: .now() + 10) }
            }
        }

        /// Lets every block go.
        func release() {
            for _ in 0..<count { semaphore.signal() }
        }
    }

    @Test("an answer that arrives after the deadline, while the deadline's timer cannot run yet, ends the request with deadlineExceeded, not a success")
    func answerAfterDeadlineWhileTimerLate() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let gate = TestServer.Gate()
        let sent = Atomic<Bool>(false)
        server.route("/late") { _ in
            .whenOpen(gate, .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate"), .whenSent { sent.store(true, ordering: .releasing) }]))
        }
        await withLeakCheck { leaks in
            leaks.watch(server)
            // The connection's callback queue targets the global queue too: the outcome is read
            // once the jam is gone.
            let connection = leaks.connection(server, .native)
            var request = HTTPRequest(.get, "/late")
            request.deadline = .milliseconds(100)
            let outcome = Locked<[Result<HTTPResponse, HTTPConnectionError>]>([])
            connection.start(request, completion: { result in outcome.withLock { $0.append(result) } })
            #expect(await eventually { server.requestCount(path: "/late") == 1 })
            // Jam the global threads, then, from a thread of the test's own, let the deadline pass
            // and the answer arrive while the jam holds.
            let done = Atomic<Bool>(false)
            let jam = Thread {
                let jam = GlobalQueueJam(count: 64)
                usleep(200_000)  // the deadline (100 ms) passes
                gate.open()
                let start = Date()
                while !sent.load(ordering: .acquiring), Date().timeIntervalSince(start) < 5 { usleep(1_000) }
                usleep(100_000)  // the client reads the answer (on its event loop, not on Dispatch)
                jam.release()
                done.store(true, ordering: .releasing)
            }
            jam.start()
            #expect(await eventually { done.load(ordering: .acquiring) && outcome.withLock { !$0.isEmpty } })
            try? await Task.sleep(for: .milliseconds(100))
            let results = outcome.withLock { $0 }
            #expect(results.count == 1, "\(results.count) terminal callbacks")
            if case .success(let response) = results.first {
                Issue.record("the answer that came after the deadline stood: \(response.status)")
            }
            if case .failure(let error) = results.first {
                #expect(error == .deadlineExceeded, "ended with \(error)")
            }
        }
    }
}
