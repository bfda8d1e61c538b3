@testable import ChatCave
import CourierTestServer
import Foundation
import Testing

/// The ChatCave client keeps its secrets home (security review L5, I11, I13).
@Suite("ChatCaveService: secrets stay home")
struct ClientSecurityTests {
    @Test("L5 a sign-in answered with a 307 to another port is not followed: that server receives nothing")
    func signInNotRedirected() async throws {
        let home = try TestServer()
        let foreign = try TestServer()
        defer { home.shutdown(); foreign.shutdown() }
        let elsewhere = foreign.url("/account").absoluteString
        home.route("/account") { _ in .response(status: 307, headers: [("Location", elsewhere)]) }
        home.route("/users") { _ in .response(status: 308, headers: [("Location", elsewhere)]) }
        home.route("/rooms") { _ in .response(status: 401) }
        try await withChatCave(watching: home.port, foreign.port) { fixture in
            let service = fixture.service(for: home.baseURL)
            #expect(await failure { try await service.signIn(name: "alice", password: "pa55word") } == .invalidResponse(""))
            #expect(await failure { try await service.signUp(name: "alice", password: "pa55word") } == .invalidResponse(""))
            let script = fixture.leaks.track(ScriptedHandler([SignInCredentials(name: "alice", password: "pa55word")]))
            service.authenticationHandler = script.handler
            #expect(await failure { try await service.fetchChatrooms() } == .notAuthorized)
            #expect(script.challenges.count == 1)
            #expect(home.requestCount(path: "/account") == 2)
            #expect(home.requestCount(path: "/users") == 1)
            #expect(foreign.totalRequests == 0)
            #expect(service.currentUser == nil)
        }
    }

    @Test("I11 a room id of . or .. is percent-encoded, so no proxy reads it as a dot segment")
    func dotSegmentsEncoded() async throws {
        #expect(ChatCaveService.segment(".") == "%2E")
        #expect(ChatCaveService.segment("..") == "%2E%2E")
        #expect(ChatCaveService.segment("...") == "...")
        #expect(ChatCaveService.segment("a/..") == "a%2F..")
        let test = try TestServer()
        defer { test.shutdown() }
        test.route("/rooms/*") { request in .json(#"{"id": "x", "name": "\#(request.path)", "chatters": []}"#) }
        try await withChatCave(watching: test.port) { fixture in
            let room = try await fixture.service(for: test.baseURL).fetchChatroom(id: "..")
            #expect(room.name == "/rooms/%2E%2E")
        }
    }

    @Test("I13 a user's description never shows its API key")
    func userDescriptionRedacted() {
        let user = User(id: "u1", name: "alice", apiKey: "SECRET-API-KEY-1234")
        for text in ["\(user)", String(reflecting: user), "\([user])"] {
            #expect(!text.contains("SECRET-API-KEY-1234"), "\(text)")
            #expect(text.contains("alice"))
        }
        #expect("\(user)".contains("<redacted>"))
        #expect("\(User(id: "u2", name: "bob"))".contains("apiKey: nil"))
    }
}
