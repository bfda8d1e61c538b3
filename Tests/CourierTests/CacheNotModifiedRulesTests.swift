@testable import Courier
import Foundation
import Testing

/// A `304` that changes a stored response's `Cache-Control` is judged by the storing rules again
/// (found by ``CacheConversationTests``: the cache used to keep, and serve, a response a `304`
/// had made `no-store`, `private` in a shared cache, or no longer cacheable for a credential).
@Suite("HTTP cache: the storing rules after a 304")
struct CacheNotModifiedRulesTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let shared: Bool
        let credentials: HTTPHeaders
        /// The `Cache-Control` of the stored answer, and of the `304` that revalidates it.
        let stored: String, notModified: String
        var testDescription: String { name }
    }

    static let forbidding = [
        Case(name: "no-store", shared: false, credentials: [:], stored: "max-age=0", notModified: "no-store"),
        Case(name: "private, in a shared cache", shared: true, credentials: [:], stored: "max-age=0", notModified: "private, max-age=100"),
        Case(name: "no explicit permission, for a credential", shared: false, credentials: ["Authorization": "Bearer alice"],
             stored: "public, max-age=0", notModified: "max-age=100"),
    ]

    /// Sends three GETs for `/a` to a server in memory that answers `case.stored` with an ETag,
    /// then `304`s with `case.notModified`; returns the answers, the server and the cache.
    private func threeRequests(_ test: Case) async throws -> ([HTTPResponse], TaggingServer, HTTPCache) {
        let clock = ConversationClock()
        let server = TaggingServer(clock: clock)
        let cache = HTTPCache(scope: test.shared ? .shared : .private, now: { clock.now })
        let connection = HTTPConnection(baseURL: URL(string: "http://cache.test")!,
                                        configuration: .init(cachePolicy: .useProtocolCachePolicy, transport: server, cache: cache))
        server.plan = .init(headers: ["Cache-Control": test.stored, "ETag": "\"v1\""],
                            notModified: ["ETag": "\"v1\"", "Cache-Control": test.notModified])
        var answers: [HTTPResponse] = []
        for _ in 0..<3 { answers.append(try await connection.get("/a", headers: test.credentials)) }
        return (answers, server, cache)
    }

    @Test("a 304 whose Cache-Control forbids storing answers its request, then the entry is gone: the next request asks unconditionally",
          arguments: forbidding)
    func forbiddingNotModifiedDropsTheEntry(_ test: Case) async throws {
        let (answers, server, cache) = try await threeRequests(test)
        #expect(answers[1].source == .revalidatedCache && answers[1].body == answers[0].body)
        #expect(answers[2].source == .network)
        #expect(server.log.map(\.isConditional) == [false, true, false])
        #expect(cache.statistics.stores == 2)  // the first answer and the third, not the revalidated one
    }

    @Test("a 304 that keeps the storing rules keeps the entry, fresh for its new max-age")
    func allowingNotModifiedKeepsTheEntry() async throws {
        let test = Case(name: "public", shared: false, credentials: ["Authorization": "Bearer alice"],
                        stored: "public, max-age=0", notModified: "public, max-age=100")
        let (answers, server, _) = try await threeRequests(test)
        #expect(answers.map(\.source) == [.network, .revalidatedCache, .cache])
        #expect(server.log.count == 2)
    }
}
