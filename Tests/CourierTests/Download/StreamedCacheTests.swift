@testable import Courier
import CourierTestSupport
import CourierTestServer
import Foundation
import Testing

/// A streamed response in the HTTP cache: stored as it passes, only within the limit, only when
/// whole, and under the same rules as a collected one (issue 15, part 5).
@Suite("Streamed responses in the cache")
struct StreamedCacheTests {
    /// Reads a streamed body to its end (or its error).
    static func drain(_ body: HTTPBodyStream) async -> Int {
        var count = 0
        do throws(HTTPConnectionError) {
            for try await chunk in body { count += chunk.count }
        } catch {}
        return count
    }

    func server(size: Int, control: String = "max-age=60") throws -> TestServer {
        let server = try TestServer()
        let body = TestServer.bytesPattern(count: size)
        server.route("/item") { _ in .response(status: 200, headers: [("Cache-Control", control)], body: body) }
        return server
    }

    @Test("a 512 KiB streamed body under a 1 MiB limit is stored; the next request is a hit with the same bytes",
          arguments: TransportUnderTest.allCases)
    func storedWithinLimit(kind: TransportUnderTest) async throws {
        let server = try server(size: 512 << 10)
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let cache = HTTPCache(maxStreamedBodySize: 1 << 20)
            let connection = leaks.connection(server, kind) { $0.cache = cache }
            let first = try await connection.stream(HTTPRequest(.get, "/item"))
            #expect(await Self.drain(first.body) == 512 << 10)
            #expect(await eventually { cache.statistics.stores == 1 })
            let second = try await connection.get("/item")
            #expect(second.source == .cache)
            #expect(second.body == TestServer.bytesPattern(count: 512 << 10))
            #expect(server.requestCount(path: "/item") == 1)
        }
    }

    @Test("a streamed body over the limit is not stored (the partial entry is dropped); its reader gets it all")
    func overLimitDropped() async throws {
        let server = try server(size: 2 << 20)
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let cache = HTTPCache(maxStreamedBodySize: 1 << 20)
            let connection = leaks.connection(server, .native) { $0.cache = cache }
            let first = try await connection.stream(HTTPRequest(.get, "/item"))
            #expect(await Self.drain(first.body) == 2 << 20)
            _ = try await connection.get("/item")
            #expect(cache.statistics.stores == 1, "only the collected response was stored")
            #expect(server.requestCount(path: "/item") == 2)
        }
    }

    @Test("a streamed body abandoned part-way is not stored")
    func abandonedNotStored() async throws {
        let server = try server(size: 800 << 10)
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let cache = HTTPCache(maxStreamedBodySize: 1 << 20)
            let connection = leaks.connection(server, .native) { $0.cache = cache }
            let first = try await connection.stream(HTTPRequest(.get, "/item"))
            var iterator = first.body.makeAsyncIterator()
            _ = try await iterator.next()
            _ = consume iterator
            _ = consume first
            try await Task.sleep(for: .milliseconds(200))
            #expect(cache.statistics.stores == 0)
            #expect(!cache.containsResponse(for: server.url("/item")))
        }
    }

    @Test("the cache's rules still hold: no-store is not stored, and a credentialed request without public is not stored")
    func rulesHold() async throws {
        let noStore = try server(size: 1000, control: "no-store")
        defer { noStore.shutdown() }
        try await withLeakCheck { leaks throws in
            let cache = HTTPCache()
            let connection = leaks.connection(noStore, .native) { $0.cache = cache }
            #expect(await Self.drain(try await connection.stream(HTTPRequest(.get, "/item")).body) == 1000)
            var withCredential = HTTPRequest(.get, "/item")
            withCredential.headers.set("Bearer secret", for: "Authorization")
            #expect(await Self.drain(try await connection.stream(withCredential).body) == 1000)
            try await Task.sleep(for: .milliseconds(100))
            #expect(cache.statistics.stores == 0)
        }
        let privateOnly = try server(size: 1000, control: "max-age=60")
        defer { privateOnly.shutdown() }
        try await withLeakCheck { leaks throws in
            let cache = HTTPCache()
            let connection = leaks.connection(privateOnly, .native) { $0.cache = cache }
            var withCredential = HTTPRequest(.get, "/item")
            withCredential.headers.set("Bearer secret", for: "Authorization")
            #expect(await Self.drain(try await connection.stream(withCredential).body) == 1000)
            try await Task.sleep(for: .milliseconds(100))
            #expect(cache.statistics.stores == 0, "Authorization without public/must-revalidate/s-maxage is not stored")
        }
    }

    @Test("a download neither fills the cache nor is served from it")
    func downloadsBypassTheCache() async throws {
        let server = try server(size: 4000)
        defer { server.shutdown() }
        let folder = try DownloadTests.Folder()
        defer { folder.remove() }
        try await withLeakCheck { leaks throws in
            let cache = HTTPCache()
            let connection = leaks.connection(server, .native) { $0.cache = cache }
            let result = try await connection.download(HTTPRequest(.get, "/item"), to: folder.file("item.bin"))
            #expect(result.byteCount == 4000)
            #expect(cache.statistics.stores == 0)
            _ = try await connection.get("/item")  // stored now, as a collected response
            _ = try await connection.download(HTTPRequest(.get, "/item"), to: folder.file("again.bin"))
            #expect(server.requestCount(path: "/item") == 3, "the second download went to the server")
        }
    }
}
