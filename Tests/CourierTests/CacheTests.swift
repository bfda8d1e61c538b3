import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The HTTP cache: policies at three levels and RFC 9111 rules, on both transports.
@Suite("HTTP cache")
struct CacheTests {
    func connection(_ server: CacheServer, _ transport: TransportUnderTest, _ leaks: LeakCheck, cache: HTTPCache,
                    policy: CachePolicy? = .useProtocolCachePolicy) -> HTTPConnection {
        leaks.connection(server.server, transport) { configuration in
            configuration.cachePolicy = policy
            configuration.cache = cache
        }
    }

    @Test("a fresh response is served from the cache without the network", arguments: TransportUnderTest.allCases)
    func freshHit(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let cache = HTTPCache()
            let connection = connection(server, transport, leaks, cache: cache)
            let first = try await connection.get("/fresh")
            let second = try await connection.get("/fresh")
            #expect(first.source == .network)
            #expect(second.source == .cache)
            #expect(second.text == "fresh")
            #expect(second.metrics?.cache == .hit)
            #expect(server.hits("/fresh") == 1)
            let head = try await connection.head("/fresh")
            #expect(head.source == .cache && head.body.isEmpty)  // HEAD answered from the cached GET
            #expect(cache.statistics.hits == 2)
            #expect(cache.statistics.misses == 1)
        }
    }

    @Test("freshness expires with the clock", arguments: TransportUnderTest.allCases)
    func expiry(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let clock = ManualClock()
            let connection = connection(server, transport, leaks, cache: HTTPCache(now: { clock.now }))
            _ = try await connection.get("/fresh")
            clock.advance(by: 59)
            #expect(try await connection.get("/fresh").source == .cache)
            clock.advance(by: 2)
            #expect(try await connection.get("/fresh").source == .network)
            #expect(server.hits("/fresh") == 2)
        }
    }

    @Test("revalidation: an ETag match gets a 304 and the stored body; a change gets the new 200", arguments: TransportUnderTest.allCases)
    func etagRevalidation(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let cache = HTTPCache()
            let connection = connection(server, transport, leaks, cache: cache)
            #expect(try await connection.get("/etag").text == "body \"v1\"")
            let revalidated = try await connection.get("/etag")
            #expect(revalidated.source == .revalidatedCache)
            #expect(revalidated.status == .ok)
            #expect(revalidated.text == "body \"v1\"")
            #expect(revalidated.headers["X-Revalidated"] == "yes")  // the 304's headers update the stored ones
            #expect(cache.statistics.revalidations == 1)
            server.version.withLock { $0 = 2 }
            let changed = try await connection.get("/etag")
            #expect(changed.source == .network)
            #expect(changed.text == "body \"v2\"")
            #expect(server.hits("/etag") == 3)
        }
    }

    @Test("revalidation with Last-Modified", arguments: TransportUnderTest.allCases)
    func lastModifiedRevalidation(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let connection = connection(server, transport, leaks, cache: HTTPCache())
            _ = try await connection.get("/modified")
            let second = try await connection.get("/modified")
            #expect(second.source == .revalidatedCache)
            #expect(second.text == "modified")
        }
    }

    @Test("Vary keeps one variant per header value", arguments: TransportUnderTest.allCases)
    func vary(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let connection = connection(server, transport, leaks, cache: HTTPCache())
            #expect(try await connection.get("/vary", headers: ["Accept-Language": "en"]).text == "hello")
            #expect(try await connection.get("/vary", headers: ["Accept-Language": "fr"]).text == "bonjour")
            let english = try await connection.get("/vary", headers: ["Accept-Language": "en"])
            let french = try await connection.get("/vary", headers: ["Accept-Language": "fr"])
            #expect(english.text == "hello" && english.source == .cache)
            #expect(french.text == "bonjour" && french.source == .cache)
            #expect(server.hits("/vary") == 2)
        }
    }

    @Test("a successful unsafe method invalidates the stored entry", arguments: TransportUnderTest.allCases, ["POST", "PUT", "PATCH", "DELETE"])
    func invalidation(transport: TransportUnderTest, method: String) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let connection = connection(server, transport, leaks, cache: HTTPCache())
            _ = try await connection.get("/fresh")
            #expect(try await connection.get("/fresh").source == .cache)
            _ = try await connection.send(HTTPRequest(HTTPRequest.Method(rawValue: method), "/fresh"))
            #expect(try await connection.get("/fresh").source == .network)
        }
    }

    @Test("no-store responses are never stored", arguments: TransportUnderTest.allCases)
    func noStore(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let cache = HTTPCache()
            let connection = connection(server, transport, leaks, cache: cache)
            _ = try await connection.get("/no-store")
            #expect(try await connection.get("/no-store").source == .network)
            #expect(!cache.containsResponse(for: server.server.url("/no-store")))
        }
    }

    @Test("a response to a request with Authorization is stored only when Cache-Control allows it", arguments: TransportUnderTest.allCases)
    func authorizationRule(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let connection = connection(server, transport, leaks, cache: HTTPCache())
            let credentials: HTTPHeaders = ["Authorization": "Bearer t"]
            _ = try await connection.get("/fresh", headers: credentials)
            #expect(try await connection.get("/fresh", headers: credentials).source == .network)
            _ = try await connection.get("/public", headers: credentials)
            #expect(try await connection.get("/public", headers: credentials).source == .cache)
        }
    }

    @Test("each policy behaves as documented", arguments: TransportUnderTest.allCases)
    func policies(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server.server)
            let clock = ManualClock()
            let connection = connection(server, transport, leaks, cache: HTTPCache(now: { clock.now }))
            func get(_ path: String, _ policy: CachePolicy) async throws(HTTPConnectionError) -> HTTPResponse {
                var request = HTTPRequest(.get, path)
                request.cachePolicy = policy
                return try await connection.send(request)
            }
            await #expect(throws: HTTPConnectionError.notCached) { try await get("/fresh", .returnCacheDataDontLoad) }
            #expect(server.hits("/fresh") == 0)
            #expect(try await get("/fresh", .returnCacheDataElseLoad).source == .network)
            #expect(try await get("/fresh", .reloadIgnoringCache).source == .network)
            #expect(try await get("/etag", .useProtocolCachePolicy).source == .network)
            #expect(try await get("/etag", .reloadRevalidatingCache).source == .revalidatedCache)
            clock.advance(by: 3600)  // everything is stale now
            #expect(try await get("/fresh", .returnCacheDataElseLoad).source == .cache)
            #expect(try await get("/fresh", .returnCacheDataDontLoad).source == .cache)
            #expect(try await get("/fresh", .useProtocolCachePolicy).source == .network)
            #expect(server.hits("/fresh") == 3)
        }
    }

    @Test("policy precedence: the request's beats the connection's", arguments: TransportUnderTest.allCases)
    func requestBeatsConnection(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server.server)
            let connection = connection(server, transport, leaks, cache: HTTPCache(), policy: .returnCacheDataDontLoad)
            await #expect(throws: HTTPConnectionError.notCached) { try await connection.get("/fresh") }
            var request = HTTPRequest(.get, "/fresh")
            request.cachePolicy = .reloadIgnoringCache
            #expect(try await connection.send(request).source == .network)
            #expect(try await connection.get("/fresh").source == .cache)  // the connection's policy again
        }
    }

    @Test("policy precedence: the connection's beats the global default, which applies when nothing else is set", arguments: TransportUnderTest.allCases)
    func connectionBeatsGlobal(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            #expect(HTTPConnection.defaultCachePolicy == .useProtocolCachePolicy)
            let cache = HTTPCache()
            let defaulted = connection(server, transport, leaks, cache: cache, policy: nil)
            _ = try await defaulted.get("/fresh")
            #expect(try await defaulted.get("/fresh").source == .cache)  // the global default: protocol rules
            let reloading = connection(server, transport, leaks, cache: cache, policy: .reloadIgnoringCache)
            #expect(try await reloading.get("/fresh").source == .network)
        }
    }

    @Test("a disk store is read back by a new cache instance, and a corrupt file is dropped", arguments: TransportUnderTest.allCases)
    func diskStore(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            _ = try await connection(server, transport, leaks, cache: HTTPCache(directory: directory)).get("/fresh")
            let reopened = connection(server, transport, leaks, cache: HTTPCache(directory: directory))
            let fromDisk = try await reopened.get("/fresh")
            #expect(fromDisk.source == .cache)
            #expect(fromDisk.text == "fresh")
            #expect(server.hits("/fresh") == 1)

            // Truncate every stored file: a new instance must not serve them.
            for file in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) {
                let data = try Data(contentsOf: file)
                try data.prefix(data.count / 2).write(to: file)
            }
            let afterCorruption = try await connection(server, transport, leaks, cache: HTTPCache(directory: directory)).get("/fresh")
            #expect(afterCorruption.source == .network)
            #expect(afterCorruption.text == "fresh")
            #expect(server.hits("/fresh") == 2)
        }
    }

    @Test("memory is bounded by bytes and the least recently used entry goes first", arguments: TransportUnderTest.allCases)
    func lruEviction(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let cache = HTTPCache(memoryCapacity: 5_000)
            let connection = connection(server, transport, leaks, cache: cache)
            for size in [1_000, 1_001, 1_002] { _ = try await connection.get("/sized/\(size)") }
            _ = try await connection.get("/sized/1000")            // touch the oldest: now the newest
            _ = try await connection.get("/sized/1003")            // over capacity: evicts 1001
            #expect(cache.memoryBytes <= 5_000)
            #expect(cache.containsResponse(for: server.server.url("/sized/1000")))
            #expect(!cache.containsResponse(for: server.server.url("/sized/1001")))
            #expect(cache.containsResponse(for: server.server.url("/sized/1003")))
        }
    }

    @Test("concurrent requests for one URL do not corrupt the entry", arguments: TransportUnderTest.allCases)
    func concurrentStores(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            leaks.watch(server.server)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = HTTPCache(directory: directory)
            let connection = connection(server, transport, leaks, cache: cache, policy: .reloadIgnoringCache)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<50 { group.addTask { _ = try await connection.get("/fresh") } }
                try await group.waitForAll()
            }
            let reread = try await self.connection(server, transport, leaks, cache: HTTPCache(directory: directory)).get("/fresh")
            #expect(reread.source == .cache)
            #expect(reread.text == "fresh")
        }
    }

    @Test("nginx's own ETag and Last-Modified revalidate static files", .enabled(if: Nginx.isInstalled, Nginx.skipReason),
          arguments: TransportUnderTest.allCases)
    func nginxValidators(transport: TransportUnderTest) async throws {
        let nginx = try await Nginx.start(files: ["rooms.json": Data(#"[{"name":"Lobby"}]"#.utf8)])
        defer { nginx.stop() }
        try await withLeakCheck { leaks in
            leaks.watch(port: nginx.port)
            let connection = leaks.track(HTTPConnection(baseURL: nginx.baseURL, configuration: .init(
                timeout: .seconds(10), cachePolicy: .useProtocolCachePolicy, transport: leaks.transport(transport), cache: HTTPCache())))
            let first = try await connection.get("/rooms.json")
            #expect(first.headers["ETag"] != nil)
            let second = try await connection.get("/rooms.json")
            #expect(second.source == .revalidatedCache || second.source == .cache)
            #expect(second.text == #"[{"name":"Lobby"}]"#)
        }
    }
}
