import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Security finding H1: the cache never serves one credential's response to another credential,
/// never replays `Set-Cookie`, and a shared cache follows RFC 9111's shared-cache rules.
@Suite("HTTP cache and credentials (H1)")
struct CacheCredentialTests {
    /// A server that answers each caller with its own identity (the value of its credential header)
    /// and the caching headers the route names, counting hits per path.
    static func identityServer() throws -> TestServer {
        let server = try TestServer()
        let routes: [(String, [(String, String)])] = [
            ("/me/private", [("Cache-Control", "private, max-age=60")]),
            ("/me/public", [("Cache-Control", "public, max-age=60")]),
            ("/me/plain", [("Cache-Control", "max-age=60")]),
            ("/me/shared", [("Cache-Control", "max-age=0, s-maxage=60")]),
            ("/me/cookie", [("Cache-Control", "max-age=60"), ("Set-Cookie", "session=for-the-first-caller; Path=/")]),
            ("/me/heuristic", [("Last-Modified", "Tue, 15 Nov 1994 12:45:26 GMT")]),
        ]
        for (path, headers) in routes {
            server.route(path) { request in
                let identity = request.value(for: "X-API-Key") ?? request.value(for: "Cookie")
                    ?? request.value(for: "X-Account") ?? request.value(for: "Authorization") ?? "anonymous"
                return .response(status: 200, headers: headers, body: Data("me: \(identity)".utf8))
            }
        }
        return server
    }

    func connection(_ server: TestServer, _ transport: TransportUnderTest, _ leaks: LeakCheck,
                    headers: HTTPHeaders = [:], cache: HTTPCache?? = .none) -> HTTPConnection {
        leaks.connection(server, transport) { configuration in
            configuration.cachePolicy = .useProtocolCachePolicy
            configuration.headers = headers
            if case .some(let cache) = cache { configuration.cache = cache }
        }
    }

    @Test("H1 two default connections with different API keys get their own bodies; the server counts 2",
          arguments: TransportUnderTest.allCases)
    func defaultConnectionsKeepTheirOwn(transport: TransportUnderTest) async throws {
        let server = try Self.identityServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let alice = connection(server, transport, leaks, headers: ["X-API-Key": "alice-key"])
            let bob = connection(server, transport, leaks, headers: ["X-API-Key": "bob-key"])
            for path in ["/me/private", "/me/plain", "/me/heuristic", "/me/public"] {
                #expect(try await alice.get(path).text == "me: alice-key", "\(path)")
                let answer = try await bob.get(path)
                #expect(answer.text == "me: bob-key", "\(path)")
                #expect(answer.source == .network, "\(path)")
                #expect(server.requestCount(path: path) == 2, "\(path)")
            }
        }
    }

    @Test("H1 one cache passed to connections with different credentials keeps each credential's responses apart",
          arguments: TransportUnderTest.allCases)
    func oneCacheManyCredentials(transport: TransportUnderTest) async throws {
        let server = try Self.identityServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let cache = HTTPCache()
            let alice = connection(server, transport, leaks, headers: ["X-API-Key": "alice-key"], cache: cache)
            let bob = connection(server, transport, leaks, headers: ["X-API-Key": "bob-key"], cache: cache)
            let anonymous = connection(server, transport, leaks, cache: cache)
            let aliceAgain = connection(server, transport, leaks, headers: ["X-API-Key": "alice-key"], cache: cache)

            #expect(try await alice.get("/me/public").text == "me: alice-key")
            #expect(try await bob.get("/me/public").text == "me: bob-key")
            #expect(try await anonymous.get("/me/public").text == "me: anonymous")
            #expect(server.requestCount(path: "/me/public") == 3)
            // The same credential is served from its own partition: the cache still works.
            let again = try await aliceAgain.get("/me/public")
            #expect(again.source == .cache && again.text == "me: alice-key")
            #expect(server.requestCount(path: "/me/public") == 3)
        }
    }

    @Test("H1 a response to a credentialed request is stored only when Cache-Control allows it explicitly",
          arguments: TransportUnderTest.allCases)
    func credentialedNeedsExplicitPermission(transport: TransportUnderTest) async throws {
        let server = try Self.identityServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            for credential: HTTPHeaders in [["X-API-Key": "k1"], ["Cookie": "session=1"], ["Authorization": "Bearer t1"]] {
                let user = connection(server, transport, leaks, headers: credential, cache: HTTPCache())
                let before = server.requestCount(path: "/me/plain")
                _ = try await user.get("/me/plain")
                #expect(try await user.get("/me/plain").source == .network, "\(credential.fields[0].name)")
                #expect(server.requestCount(path: "/me/plain") == before + 2)
                let publicBefore = server.requestCount(path: "/me/public")
                _ = try await user.get("/me/public")
                #expect(try await user.get("/me/public").source == .cache, "\(credential.fields[0].name)")
                #expect(server.requestCount(path: "/me/public") == publicBefore + 1)
            }
        }
    }

    @Test("H1 a custom authenticator's header counts as a credential: its responses need explicit permission and stay apart",
          arguments: TransportUnderTest.allCases)
    func authenticatorHeaderIsACredential(transport: TransportUnderTest) async throws {
        let server = try Self.identityServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let cache = HTTPCache()
            let alice = connection(server, transport, leaks, cache: cache)
            let bob = connection(server, transport, leaks, cache: cache)
            for (connection, account) in [(alice, "alice"), (bob, "bob")] {
                let store = InMemoryCredentialStore()
                store.save(Credential(secret: account), for: URLMatcher.everything.description)
                connection.authenticate(matching: .everything, with: AccountAuthenticator(account: account), store: store)
            }
            let first = try await alice.get("/me/plain")
            #expect(first.text == "me: alice")
            #expect(try await alice.get("/me/plain").source == .network)  // not stored: no explicit permission
            #expect(try await alice.get("/me/public").text == "me: alice")
            #expect(try await bob.get("/me/public").text == "me: bob")
            #expect(server.requestCount(path: "/me/public") == 2)
        }
    }

    @Test("H1 default headers partition the cache but do not stop it: a connection with Accept still caches, another value is kept apart",
          arguments: TransportUnderTest.allCases)
    func defaultHeadersPartition(transport: TransportUnderTest) async throws {
        let server = try Self.identityServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let cache = HTTPCache()
            let tenantA = connection(server, transport, leaks, headers: ["X-Account": "tenant-a", "Accept": "text/plain"], cache: cache)
            let tenantB = connection(server, transport, leaks, headers: ["X-Account": "tenant-b", "Accept": "text/plain"], cache: cache)
            #expect(try await tenantA.get("/me/plain").text == "me: tenant-a")
            #expect(try await tenantA.get("/me/plain").source == .cache)
            let other = try await tenantB.get("/me/plain")
            #expect(other.text == "me: tenant-b" && other.source == .network)
            #expect(server.requestCount(path: "/me/plain") == 2)
        }
    }

    @Test("H1 a shared cache never stores a private response and takes its freshness from s-maxage",
          arguments: TransportUnderTest.allCases)
    func sharedScopeRules(transport: TransportUnderTest) async throws {
        let server = try Self.identityServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let shared = connection(server, transport, leaks, cache: HTTPCache(scope: .shared))
            _ = try await shared.get("/me/private")
            #expect(try await shared.get("/me/private").source == .network)
            _ = try await shared.get("/me/shared")
            #expect(try await shared.get("/me/shared").source == .cache)

            let privateCache = connection(server, transport, leaks, cache: HTTPCache(scope: .private))
            _ = try await privateCache.get("/me/private")
            #expect(try await privateCache.get("/me/private").source == .cache)
            _ = try await privateCache.get("/me/shared")
            #expect(try await privateCache.get("/me/shared").source == .network)  // s-maxage is not for private caches
            #expect(server.requestCount(path: "/me/private") == 3)
            #expect(server.requestCount(path: "/me/shared") == 3)
            #expect(HTTPCache.shared.scope == .shared)
        }
    }

    @Test("H1 Set-Cookie is never stored or replayed from the cache", arguments: TransportUnderTest.allCases)
    func setCookieNeverReplayed(transport: TransportUnderTest) async throws {
        let server = try Self.identityServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let connection = connection(server, transport, leaks, cache: HTTPCache(directory: directory))
            let first = try await connection.get("/me/cookie")
            #expect(first.headers["Set-Cookie"] != nil)
            let second = try await connection.get("/me/cookie")
            #expect(second.source == .cache)
            #expect(second.headers["Set-Cookie"] == nil)
            let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            #expect(files.count == 1)
            for file in files { #expect(!String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("for-the-first-caller")) }
        }
    }

    @Test("H1 responses to credentialed requests and URLs with secrets never reach the disk", arguments: TransportUnderTest.allCases)
    func secretsStayOffDisk(transport: TransportUnderTest) async throws {
        let server = try Self.identityServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = HTTPCache(directory: directory)
            let user = connection(server, transport, leaks, headers: ["X-API-Key": "disk-key"], cache: cache)
            let anonymous = connection(server, transport, leaks, cache: cache)
            #expect(try await user.get("/me/public").text == "me: disk-key")
            #expect(try await user.get("/me/public").source == .cache)     // kept in memory
            _ = try await anonymous.get("/me/public", query: [.init("access_token", "s3cret")])
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
            _ = try await anonymous.get("/me/public")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 1)
        }
    }
}

/// The cache and redirects, and the cache on disk with default headers.
@Suite("HTTP cache: redirects and default headers")
struct CacheKeyingTests {
    @Test("a response reached through a redirect is not stored under the URL that was asked for", arguments: TransportUnderTest.allCases)
    func redirectedResponseNotStoredUnderOrigin(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        server.server.route("/moved") { _ in .response(status: 302, headers: [("Location", "/fresh")]) }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server.server, transport) { $0.cache = HTTPCache() }
            #expect(try await connection.get("/moved").text == "fresh")
            #expect(try await connection.get("/moved").text == "fresh")
            #expect(server.hits("/moved") == 2)  // the temporary redirect is asked again every time
        }
    }

    @Test("a connection with default headers still keeps its responses on disk, and reads them back after a restart",
          arguments: TransportUnderTest.allCases)
    func diskWithDefaultHeaders(transport: TransportUnderTest) async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        let directory = CacheDirectoryTests.temporaryPath()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withLeakCheck { leaks throws in
            func connection() -> HTTPConnection {
                leaks.connection(server.server, transport) { configuration in
                    configuration.headers = ["Accept": "application/json"]
                    configuration.cache = HTTPCache(directory: directory)
                }
            }
            _ = try await connection().get("/fresh")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 1)
            let reread = try await connection().get("/fresh")
            #expect(reread.source == .cache)
            #expect(server.hits("/fresh") == 1)
        }
    }
}

/// An authenticator that puts an account name in a header of its own, `X-Account`.
private struct AccountAuthenticator: Authenticator {
    let account: String
    func apply(_ credential: Credential, to request: inout TransportRequest) {
        request.headers.set(credential.secret, for: "X-Account")
    }
    func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
        Credential(secret: account)
    }
}

/// Security finding L11, the disk cache's part: its directory is private, or it is not used.
@Suite("HTTP cache on disk: a private directory (L11)")
struct CacheDirectoryTests {
    static func temporaryPath() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
    }

    @Test("L11 a cache directory the cache creates has mode 0700 and its files 0600")
    func createdPrivate() async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        let parent = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("nested")
        let cache = HTTPCache(directory: directory)
        #expect(cache.isPersistent)
        let transport = NativeTransport()
        defer { transport.shutdown() }
        let connection = HTTPConnection(baseURL: server.server.baseURL, configuration: .init(transport: transport, cache: cache))
        _ = try await connection.get("/fresh")
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 1)
        for file in files {
            let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(file).path)[.posixPermissions]
            #expect((mode as? Int) == 0o600)
        }
    }

    @Test("L11 a cache directory writable by others is refused: the cache stays in memory and a planted entry is never served")
    func sharedDirectoryRefused() async throws {
        let server = try CacheServer()
        defer { server.shutdown() }
        let directory = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A trusted cache writes a real entry; then the directory is opened to everyone, as an
        // attacker's pre-created directory in /tmp would be.
        let transport = NativeTransport()
        defer { transport.shutdown() }
        _ = try await HTTPConnection(baseURL: server.server.baseURL,
                                     configuration: .init(transport: transport, cache: HTTPCache(directory: directory))).get("/fresh")
        #expect(server.hits("/fresh") == 1)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)

        let cache = HTTPCache(directory: directory)
        #expect(!cache.isPersistent)
        let connection = HTTPConnection(baseURL: server.server.baseURL, configuration: .init(transport: transport, cache: cache))
        let answer = try await connection.get("/fresh")
        #expect(answer.source == .network)
        #expect(server.hits("/fresh") == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 1)  // nothing written there
    }
}
