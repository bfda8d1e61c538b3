import ChatCave
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Whether the error is a ``ChatCaveError/transport(_:)``.
func isTransport(_ error: ChatCaveError?) -> Bool {
    if case .transport = error { return true }
    return false
}

@Suite("ChatCaveService: every error mapping")
struct ServiceErrorTests {
    @Test("401 → .notAuthorized: a wrong password at sign-in, and no credentials without a handler")
    func notAuthorized() async throws {
        try await withChatCave { fixture in
            _ = try await fixture.signedUp("alice", password: "pw")
            let service = fixture.service()
            #expect(await failure { try await service.signIn(name: "alice", password: "wrong") } == .notAuthorized)
            #expect(await failure { try await service.fetchChatrooms() } == .notAuthorized)
            #expect(await failure { try await service.join(id: "any") } == .notAuthorized)
        }
    }

    @Test("403 → .forbidden: joining with another user's id")
    func forbidden() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let bob = try await fixture.signedUp("bob")
            let room = try await alice.createChatroom(named: "Lobby")
            // Bob's key, but Alice's id: the server refuses to let Bob act for Alice.
            let impostor = fixture.service()
            impostor.restoreSession(user: User(id: try #require(alice.currentUser?.id), name: "alice", apiKey: bob.currentUser?.apiKey))
            #expect(await failure { try await impostor.join(id: room.id) } == .forbidden)
        }
    }

    @Test("404 → .notFound; 406 → .rejected with the server's reason")
    func notFoundAndRejected() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            #expect(await failure { try await alice.fetchChatroom(id: "nope") } == .notFound)
            #expect(await failure { try await alice.fetchMessages(for: "nope") } == .notFound)
            #expect(await failure { try await alice.postMessage(text: "x", to: "nope") } == .notFound)
            #expect(await failure { try await alice.leave(id: "nope") } == .notFound)
            #expect(await failure { try await alice.deleteChatroom(id: "nope") } == .notFound)
            let room = try await alice.createChatroom(named: "Lobby")
            #expect(await failure { try await alice.createChatroom(named: "Lobby") } == .rejected("A room named 'Lobby' already exists"))
            #expect(await failure { try await alice.postMessage(text: "x", to: room.id) }
                    == .rejected("User alice is not a member of this chatroom"))
            #expect(await failure { try await fixture.service().signUp(name: "alice", password: "x") }
                    == .rejected("A user named 'alice' already exists"))
            try await alice.join(id: room.id)
            #expect(await failure { try await alice.deleteChatroom(id: room.id) } == .rejected("The room 'Lobby' still has chatters"))
        }
    }

    @Test("5xx → .server; an unreadable body → .invalidResponse")
    func serverFailures() async throws {
        let test = try TestServer()
        defer { test.shutdown() }
        test.route("/rooms") { _ in .json(status: 500, #"{"error": "boom"}"#) }
        test.route("/users") { _ in .json(status: 503, "{}") }
        test.route("/rooms/garbage") { _ in .json("not json at all") }
        test.route("/rooms/wrong-shape") { _ in .json(#"{"id": 1}"#) }
        try await withChatCave(watching: test.port) { fixture in
            let service = fixture.service(for: test.baseURL)
            #expect(await failure { try await service.fetchChatrooms() } == .server)
            #expect(await failure { try await service.fetchUsers() } == .server)
            #expect(await failure { try await service.fetchChatroom(id: "garbage") } == .invalidResponse(""))
            #expect(await failure { try await service.fetchChatroom(id: "wrong-shape") } == .invalidResponse(""))
        }
    }

    @Test("network failures → .transport: refused, cut connection, garbage status line")
    func transport() async throws {
        let test = try TestServer()
        test.route("/cut/rooms") { _ in .script([.close]) }
        test.route("/garbled/rooms") { _ in .script([.send("HTP/1.1 200 OK\r\n\r\n"), .close]) }
        let url = test.baseURL
        try await withChatCave(watching: test.port) { fixture in
            let service = fixture.service(for: url)
            #expect(await failure { try await service.fetchChatroom(id: "x") } == .notFound)  // the test server's own 404
            let cut = await failure { try await fixture.service(for: url.appendingPathComponent("cut")).fetchChatrooms() }
            #expect(isTransport(cut), "\(String(describing: cut))")
            let garbled = await failure { try await fixture.service(for: url.appendingPathComponent("garbled")).fetchChatrooms() }
            #expect(garbled != nil && garbled != .server, "\(String(describing: garbled))")
            test.shutdown()
            let refused = await failure { try await service.fetchChatrooms() }
            #expect(isTransport(refused), "\(String(describing: refused))")
        }
    }

    @Test("cancellation → .cancelled, in both styles, with exactly one callback")
    func cancellation() async throws {
        let test = try TestServer()
        defer { test.shutdown() }
        test.route("/rooms") { _ in .script([.stall]) }
        try await withChatCave(watching: test.port) { fixture in
            let service = fixture.service(for: test.baseURL)
            let outcomes = Mutex<[String]>([])
            let id = service.fetchChatrooms(success: { _ in outcomes.withLock { $0.append("success") } },
                                            failure: { error in outcomes.withLock { $0.append("\(error)") } })
            #expect(await eventually { test.requestCount(path: "/rooms") == 1 })
            service.cancelRequest(id: id)
            service.cancelRequest(id: id)
            #expect(await eventually { !outcomes.withLock { $0 }.isEmpty })
            try await Task.sleep(for: .milliseconds(100))
            #expect(outcomes.withLock { $0 } == ["\(ChatCaveError.cancelled)"])

            let task = Task { await failure { try await service.fetchChatrooms() } }
            #expect(await eventually { test.requestCount(path: "/rooms") == 2 })
            task.cancel()
            #expect(await task.value == .cancelled)
        }
    }
}
