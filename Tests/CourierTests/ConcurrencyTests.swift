import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// One connection used from many threads at once (reliability case J2).
@Suite("Concurrency")
struct ConcurrencyTests {
    @Test("J2 1,000 concurrent requests started from many threads on one connection all finish", arguments: TransportUnderTest.allCases)
    func thousandFromManyThreads(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport, timeout: .seconds(30))
            let successes = Atomic<Int>(0)
            let failures = Mutex<[String]>([])
            let ids = Mutex<Set<RequestID>>([])
            DispatchQueue.concurrentPerform(iterations: 1_000) { index in
                let id = connection.get("/echo/\(index)", onSuccess: { response in
                    if response.status == .ok { successes.add(1, ordering: .relaxed) }
                }, onError: { error in
                    failures.withLock { $0.append(error.description) }
                })
                ids.withLock { _ = $0.insert(id) }
            }
            #expect(ids.withLock { $0.count } == 1_000)  // every id unique
            #expect(await eventually(timeout: .seconds(60)) { successes.load(ordering: .relaxed) + failures.withLock { $0.count } == 1_000 })
            #expect(failures.withLock { $0 } == [])
            #expect(successes.load(ordering: .relaxed) == 1_000)
            #expect(server.totalRequests == 1_000)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("J2 200 concurrent async requests in a task group", arguments: TransportUnderTest.allCases)
    func asyncTaskGroup(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server)
            let connection = leaks.connection(server, transport, timeout: .seconds(30))
            let paths = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<200 {
                    group.addTask { try await connection.get("/echo/\(index)").decode(Echo.self).path }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(paths.count == 200)
            #expect(paths.contains("/echo/199"))
        }
    }
}
