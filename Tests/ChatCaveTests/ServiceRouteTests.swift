import ChatCave
import Foundation
import Testing

@Suite("ChatCaveService against the reference server: every route")
struct ServiceRouteTests {
    @Test("sign up, sign in and sign out; the service keeps the user's id and key")
    func account() async throws {
        try await withChatCave { fixture in
            let service = fixture.service()
            #expect(service.currentUser == nil)
            let created = try await service.signUp(name: "alice", password: "pw")
            #expect(service.currentUser == created)
            #expect(created.apiKey != nil)
            let other = fixture.service()
            let signedIn = try await other.signIn(name: "alice", password: "pw")
            #expect(signedIn.id == created.id)
            #expect(other.currentUser?.apiKey == signedIn.apiKey)
            try await other.signOut()
            #expect(other.currentUser == nil)
            // Signing out retired the key both services shared.
            #expect(await failure { try await service.fetchChatrooms() } == .notAuthorized)
        }
    }

    @Test("users: the list, one user, and 404 as .notFound")
    func users() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let bob = try await fixture.signedUp("bob")
            let users = try await alice.fetchUsers()
            #expect(users.map(\.name) == ["alice", "bob"])
            #expect(users.first?.apiKey == alice.currentUser?.apiKey)
            #expect(users.last?.apiKey == nil)
            let fetched = try await alice.fetchUser(id: try #require(bob.currentUser?.id))
            #expect(fetched.name == "bob")
            #expect(await failure { try await alice.fetchUser(id: "nobody") } == .notFound)
        }
    }

    @Test("rooms: create, list, fetch, join, chatters, leave, delete (following the 302 to the list)")
    func rooms() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let bob = try await fixture.signedUp("bob")
            let lobby = try await alice.createChatroom(named: "Lobby")
            let kitchen = try await alice.createChatroom(named: "Kitchen")
            #expect(lobby.name == "Lobby" && lobby.chatters.isEmpty)
            #expect(try await bob.fetchChatrooms().map(\.id) == [lobby.id, kitchen.id])
            #expect(try await alice.join(id: lobby.id).map(\.name) == ["alice"])
            #expect(try await bob.join(id: lobby.id).map(\.name) == ["alice", "bob"])
            #expect(try await alice.fetchChatroom(id: lobby.id).chatters.map(\.id) == [alice.currentUser?.id, bob.currentUser?.id])
            #expect(try await bob.fetchChatters(in: lobby.id).map(\.name) == ["alice", "bob"])
            try await bob.leave(id: lobby.id)
            #expect(try await alice.fetchChatters(in: lobby.id).map(\.name) == ["alice"])
            let remaining = try await alice.deleteChatroom(id: kitchen.id)
            #expect(remaining.map(\.id) == [lobby.id])
            try await alice.leave(id: lobby.id)
            #expect(try await alice.deleteChatroom(id: lobby.id).isEmpty)
        }
    }

    @Test("messages: post, fetch all, fetch since; the author is the signed-in user")
    func messages() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let room = try await alice.createChatroom(named: "Lobby")
            try await alice.join(id: room.id)
            let first = try await alice.postMessage(text: "hello & welcome + more", to: room.id)
            #expect(first.type == .chat && first.author == "alice" && first.text == "hello & welcome + more")
            let second = try await alice.postMessage(text: "ünïcödé 🎉", to: room.id)
            let all = try await alice.fetchMessages(for: room.id)
            #expect(all.map(\.type) == [.join, .chat, .chat])
            #expect(Array(all.suffix(2)) == [first, second])
            #expect(try await alice.fetchMessages(for: room.id, since: first.id) == [second])
            #expect(try await alice.fetchMessages(for: room.id, since: second.id).isEmpty)
        }
    }

    @Test("the Basic scheme works for every kind of request")
    func basicScheme() async throws {
        try await withChatCave { fixture in
            let alice = fixture.service(scheme: .basic)
            try await alice.signUp(name: "alice", password: "pw")
            fixture.server.revokeAPIKey(forUserNamed: "alice")  // Basic does not use the key
            let room = try await alice.createChatroom(named: "Lobby")
            try await alice.join(id: room.id)
            #expect(try await alice.postMessage(text: "basic", to: room.id).author == "alice")
            #expect(alice.statistics.reauthentications == 0)
        }
    }

    @Test("statistics count requests, completions and latency")
    func statistics() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            _ = try await alice.fetchChatrooms()
            _ = await failure { try await alice.fetchChatroom(id: "nope") }
            let figures = alice.statistics
            #expect(figures.requests == 3)
            #expect(figures.completed == 3)
            #expect(figures.failures == 1)
            #expect(figures.retries == 0)
            #expect(figures.inFlight == 0)
            #expect(figures.meanLatency > .zero)
        }
    }
}
