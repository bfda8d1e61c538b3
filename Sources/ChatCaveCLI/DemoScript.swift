import ChatCave
import ChatCaveServer
import Courier
import Foundation
import Synchronization

/// The steps of the demo's conversation, and the two users' services and pollers.
final class DemoScript: Sendable {
    private static let passwords = ["alice": "open-sesame", "bob": "correct-horse"]

    private let server: ChatCaveServer
    private let options: ChatCaveDemo.Options
    private let output: CommandOutput
    private let transcript = DemoTranscript()
    private let alice: ChatCaveService
    private let bob: ChatCaveService
    private let pollers = Mutex<[MessagePoller]>([])

    init(server: ChatCaveServer, transport: NativeTransport, options: ChatCaveDemo.Options, output: CommandOutput) {
        self.server = server
        self.options = options
        self.output = output
        let configuration = ChatCaveService.Configuration(timeout: .seconds(10), transport: transport)
        alice = ChatCaveService(serverURL: server.baseURL, configuration: configuration)
        bob = ChatCaveService(serverURL: server.baseURL, configuration: configuration)
    }

    /// Stops the pollers and anything still running.
    func stop() {
        for poller in pollers.withLock({ $0 }) { poller.stop() }
        alice.authenticationHandler = nil
        bob.authenticationHandler = nil
        alice.cancelAllRequests()
        bob.cancelAllRequests()
    }

    func perform() async throws -> ChatCaveDemo.Summary {
        installAuthenticationHandlers()

        narrate("alice and bob sign up")
        async let signUpAlice = alice.signUp(name: "alice", password: Self.passwords["alice"] ?? "")
        async let signUpBob = bob.signUp(name: "bob", password: Self.passwords["bob"] ?? "")
        let (aliceUser, bobUser) = try await (signUpAlice, signUpBob)
        output.line("    alice is \(aliceUser.id), bob is \(bobUser.id)")

        narrate("alice creates the room \"Lobby\"; both join and poll it every \(Self.millis(options.pollInterval)) ms")
        let lobby = try await alice.createChatroom(named: "Lobby")
        try await alice.join(id: lobby.id)
        try await bob.join(id: lobby.id)
        startPolling(lobby.id, as: "alice", with: alice)
        startPolling(lobby.id, as: "bob", with: bob)
        try await transcript.waitUntil("alice", sees: "bob joining") { $0.type == .join && $0.author == "bob" }
        try await transcript.waitUntil("bob", sees: "bob joining") { $0.type == .join && $0.author == "bob" }

        try await say("Hi Bob! Welcome to the cave.", from: "alice", with: alice, in: lobby.id, seenBy: "bob")
        try await say("Hi Alice! Nice echo in here.", from: "bob", with: bob, in: lobby.id, seenBy: "alice")

        narrate("the server revokes bob's API key; bob posts and looks who is in the room at the same time")
        server.revokeAPIKey(forUserNamed: "bob")
        async let chatters = bob.fetchChatters(in: lobby.id)
        try await say("Sorry, I was away. Did I miss anything?", from: "bob", with: bob, in: lobby.id, seenBy: "alice")
        let names = try await chatters.map(\.name).joined(separator: " and ")
        output.line("  🔓 bob is signed in again: his held requests were resent and succeeded (\(names) are in the room)")

        try await say("Only the echoes. See you around!", from: "alice", with: alice, in: lobby.id, seenBy: "bob")

        narrate("bob leaves the room")
        try await bob.leave(id: lobby.id)
        try await transcript.waitUntil("alice", sees: "bob leaving") { $0.type == .leave && $0.author == "bob" }
        stop()
        return summarize()
    }

    // MARK: - Steps

    private func installAuthenticationHandlers() {
        alice.authenticationHandler = { _ in
            SignInCredentials(name: "alice", password: Self.passwords["alice"] ?? "")
        }
        let (output, delay) = (self.output, options.signInDelay)
        bob.authenticationHandler = { [weak bob] challenge in
            let held = bob?.statistics.inFlight ?? 0
            output.line("  🔒 the server refused bob's key (401): Courier holds bob's \(held) request\(held == 1 ? "" : "s") "
                        + "and asks him to sign in")
            try? await Task.sleep(for: delay)
            output.line("  🔑 bob's handler answers with his stored password (\(challenge.reason)); the service signs in again")
            return SignInCredentials(name: "bob", password: Self.passwords["bob"] ?? "")
        }
    }

    private func startPolling(_ roomID: String, as viewer: String, with service: ChatCaveService) {
        let poller = service.makePoller(for: roomID, interval: options.pollInterval)
        pollers.withLock { $0.append(poller) }
        let (output, transcript) = (self.output, self.transcript)
        let label = viewer.padding(toLength: 5, withPad: " ", startingAt: 0)
        poller.start(onMessages: { messages in
            transcript.record(messages, seenBy: viewer)
            for message in messages { output.line("    \(label) sees │ \(MessageFormatter.line(for: message))") }
        }, onError: { error in
            output.line("    \(label) poll failed: \(error)")
        })
    }

    private func say(_ text: String, from author: String, with service: ChatCaveService, in roomID: String,
                     seenBy reader: String) async throws {
        output.line("  💬 \(author) says \"\(text)\"")
        let message = try await service.postMessage(text: text, to: roomID)
        try await transcript.waitUntil(reader, sees: "\"\(text)\"") { $0.id == message.id }
    }

    private func narrate(_ text: String) {
        output.line("• " + text)
    }

    // MARK: - Summary

    private func summarize() -> ChatCaveDemo.Summary {
        let summary = ChatCaveDemo.Summary(
            alice: alice.statistics, bob: bob.statistics,
            aliceSaw: transcript.messages(seenBy: "alice"), bobSaw: transcript.messages(seenBy: "bob"),
            unauthorizedAnswers: server.responsesByStatus[401] ?? 0)
        let chats = { (messages: [Message]) in messages.filter { $0.type == .chat }.map(\.id) }
        let sameOrder = chats(summary.aliceSaw) == chats(summary.bobSaw)
        let unique = Set(summary.aliceSaw.map(\.id)).count == summary.aliceSaw.count
            && Set(summary.bobSaw.map(\.id)).count == summary.bobSaw.count
        var total = summary.alice
        total.requests += summary.bob.requests
        total.completed += summary.bob.completed
        total.failures += summary.bob.failures
        total.retries += summary.bob.retries
        total.heldForAuthentication += summary.bob.heldForAuthentication
        total.reauthentications += summary.bob.reauthentications
        total.totalLatency += summary.bob.totalLatency
        output.line()
        output.line("Summary")
        output.line("  alice   \(summary.alice)")
        output.line("  bob     \(summary.bob)")
        output.line("  total   \(total)")
        output.line("  server  answered \(server.totalRequests) requests, \(summary.unauthorizedAnswers) of them with 401 "
                    + "(each one held by Courier's queue, then resent with the new key)")
        output.line("  \(sameOrder && unique ? "✓" : "✗") both pollers delivered the \(chats(summary.aliceSaw).count) chat lines "
                    + "\(sameOrder ? "in the same order" : "in different orders"), \(unique ? "without duplicates" : "WITH duplicates")")
        return summary
    }

    private static func millis(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
