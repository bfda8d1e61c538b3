import ChatCave
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Records the challenges an authentication handler receives and answers from a script.
final class ScriptedHandler: Sendable {
    private let answers: Mutex<[SignInCredentials?]>
    private let received = Mutex<[AuthenticationChallenge]>([])
    private let delay: Duration

    init(_ answers: [SignInCredentials?], delay: Duration = .zero) {
        self.answers = Mutex(answers)
        self.delay = delay
    }

    var challenges: [AuthenticationChallenge] { received.withLock { $0 } }

    var handler: ChatCaveService.AuthenticationHandler {
        { [self] challenge in
            received.withLock { $0.append(challenge) }
            if delay > .zero { try? await Task.sleep(for: delay) }
            return answers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }
    }
}

@Suite("ChatCaveService: the re-authentication loop")
struct AuthenticationLoopTests {
    private let right = SignInCredentials(name: "alice", password: "pw")
    private let wrong = SignInCredentials(name: "alice", password: "guess")

    @Test("a revoked key: a wrong password first, then the right one; the request then succeeds")
    func wrongThenRight() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let oldKey = alice.currentUser?.apiKey
            let script = fixture.leaks.track(ScriptedHandler([wrong, right]))
            alice.authenticationHandler = script.handler
            fixture.server.revokeAPIKey(forUserNamed: "alice")
            #expect(try await alice.fetchChatrooms().isEmpty)
            #expect(script.challenges.map(\.reason) == [.credentialsRejected, .wrongPassword])
            #expect(script.challenges.map(\.failedAttempts) == [0, 1])
            #expect(script.challenges.first?.userName == "alice")
            #expect(alice.currentUser?.apiKey != oldKey)
            #expect(alice.statistics.reauthentications == 1)
            #expect(alice.statistics.retries == 1)
        }
    }

    @Test("many requests at once: one prompt, every held request is resent and succeeds")
    func heldRequests() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let room = try await alice.createChatroom(named: "Lobby")
            try await alice.join(id: room.id)
            let script = fixture.leaks.track(ScriptedHandler([right], delay: .milliseconds(200)))
            alice.authenticationHandler = script.handler
            fixture.server.revokeAPIKey(forUserNamed: "alice")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        if index % 2 == 0 {
                            _ = try await alice.postMessage(text: "message \(index)", to: room.id)
                        } else {
                            _ = try await alice.fetchMessages(for: room.id)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(script.challenges.count == 1)
            #expect(try await alice.fetchMessages(for: room.id).filter { $0.type == .chat }.count == 3)
            #expect(alice.statistics.reauthentications == 1)
        }
    }

    @Test("nobody signed in: the first request asks the handler, signs in, and goes through")
    func notSignedIn() async throws {
        try await withChatCave { fixture in
            _ = try await fixture.signedUp("alice")
            let fresh = fixture.service()
            let script = fixture.leaks.track(ScriptedHandler([right]))
            fresh.authenticationHandler = script.handler
            #expect(try await fresh.fetchUsers().map(\.name) == ["alice"])
            #expect(script.challenges.map(\.reason) == [.notSignedIn])
            #expect(fresh.currentUser?.name == "alice")
        }
    }

    @Test("giving up fails the held requests with .notAuthorized; the next request asks again")
    func givingUp() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let script = fixture.leaks.track(ScriptedHandler([nil, right]))
            alice.authenticationHandler = script.handler
            fixture.server.revokeAPIKey(forUserNamed: "alice")
            #expect(await failure { try await alice.fetchChatrooms() } == .notAuthorized)
            #expect(try await alice.fetchChatrooms().isEmpty)
            #expect(script.challenges.count == 2)
            #expect(script.challenges.map(\.failedAttempts) == [0, 0])
        }
    }

    @Test("wrong passwords only: asked a bounded number of times, then .notAuthorized")
    func bounded() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let script = fixture.leaks.track(ScriptedHandler(Array(repeating: wrong, count: 20)))
            alice.authenticationHandler = script.handler
            fixture.server.revokeAPIKey(forUserNamed: "alice")
            #expect(await failure { try await alice.fetchChatrooms() } == .notAuthorized)
            #expect(script.challenges.count == 3)
        }
    }

    @Test("the delegate answers when no handler is set, and hears of every sign-in")
    func delegate() async throws {
        final class Keeper: ChatCaveServiceDelegate {
            let signIns = Mutex<[String]>([])
            func chatCaveService(_ service: ChatCaveService, credentialsFor challenge: AuthenticationChallenge) async -> SignInCredentials? {
                SignInCredentials(name: "alice", password: "pw")
            }
            func chatCaveService(_ service: ChatCaveService, didSignIn user: User) {
                signIns.withLock { $0.append(user.apiKey ?? "") }
            }
        }
        try await withChatCave { fixture in
            let alice = fixture.service()
            let keeper = fixture.leaks.track(Keeper())
            alice.delegate = keeper
            try await alice.signUp(name: "alice", password: "pw")
            fixture.server.revokeAPIKey(forUserNamed: "alice")
            _ = try await alice.fetchChatrooms()
            #expect(await eventually { keeper.signIns.withLock { $0.count } == 2 })
            #expect(keeper.signIns.withLock { $0.last } == alice.currentUser?.apiKey)
        }
    }

    @Test("with the Basic scheme a wrong password is asked again too")
    func basicLoop() async throws {
        try await withChatCave { fixture in
            _ = try await fixture.signedUp("alice")
            let service = fixture.service(scheme: .basic)
            let script = fixture.leaks.track(ScriptedHandler([wrong, right]))
            service.authenticationHandler = script.handler
            #expect(try await service.fetchChatrooms().isEmpty)
            #expect(script.challenges.map(\.reason) == [.notSignedIn, .wrongPassword])
        }
    }
}
