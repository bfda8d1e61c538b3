import ChatCave
import Courier
import CourierTestServer
import Foundation
import Testing

/// Security finding H1 inside one ChatCave client: after signing out and in as someone else, a
/// cached answer for the first user is never served to the second.
@Suite("ChatCave service and the cache (H1)")
struct ServiceCacheTests {
    /// A stand-in ChatCave server whose `GET /users` is explicitly cacheable (`public, max-age=60`)
    /// and names the caller by its API key, as a careless server or proxy could.
    static func cacheableServer() throws -> TestServer {
        let server = try TestServer()
        server.route("/account") { request in
            guard request.method == "PUT" else { return .response(status: 200, body: Data("{}".utf8)) }
            let form = String(decoding: request.body, as: UTF8.self)
            let name = form.contains("alice") ? "alice" : "bob"
            return .response(status: 201, headers: [("Content-Type", "application/json")],
                             body: Data(#"{"id":"\#(name)","name":"\#(name)","apiKey":"key-\#(name)"}"#.utf8))
        }
        server.route("/users") { request in
            let key = request.value(for: "X-Magic-Auth") ?? ""
            let name = key.hasPrefix("key-") ? String(key.dropFirst(4)) : "nobody"
            return .response(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "public, max-age=60")],
                             body: Data(#"[{"id":"\#(name)","name":"\#(name)","apiKey":"\#(key)"}]"#.utf8))
        }
        return server
    }

    @Test("H1 after sign-out and sign-in as another user, one ChatCaveService never gets the first user's cached answer")
    func signOutSignInAsSomeoneElse() async throws {
        let server = try Self.cacheableServer()
        defer { server.shutdown() }
        let transport = NativeTransport()
        defer { transport.shutdown() }
        let service = ChatCaveService(serverURL: server.baseURL, configuration: .init(timeout: .seconds(5), transport: transport))

        try await service.signIn(name: "alice", password: "pw")
        #expect(try await service.fetchUsers().map(\.apiKey) == ["key-alice"])
        #expect(try await service.fetchUsers().map(\.apiKey) == ["key-alice"])  // alice's own repeat may come from the cache
        #expect(server.requestCount(path: "/users") == 1)
        try await service.signOut()

        try await service.signIn(name: "bob", password: "pw")
        let users = try await service.fetchUsers()
        #expect(users.map(\.apiKey) == ["key-bob"])
        #expect(server.requestCount(path: "/users") == 2)
    }
}
