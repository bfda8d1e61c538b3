import ChatCave
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Collects what a poller delivers.
final class Deliveries: Sendable {
    private let batches = Mutex<[[Message]]>([])
    private let errors = Mutex<[ChatCaveError]>([])

    var messages: [Message] { batches.withLock { $0.flatMap { $0 } } }
    var batchCount: Int { batches.withLock { $0.count } }
    var errorCount: Int { errors.withLock { $0.count } }

    func start(_ poller: MessagePoller) {
        poller.start(onMessages: { [self] batch in batches.withLock { $0.append(batch) } },
                     onError: { [self] error in errors.withLock { $0.append(error) } })
    }
}

@Suite("MessagePoller")
struct PollerTests {
    @Test("delivers only new messages, in order, without duplicates, and moves since along")
    func newMessagesOnly() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let room = try await alice.createChatroom(named: "Lobby")
            try await alice.join(id: room.id)
            let poller = fixture.leaks.track(alice.makePoller(for: room.id, interval: .milliseconds(30)))
            let deliveries = fixture.leaks.track(Deliveries())
            deliveries.start(poller)
            #expect(poller.isRunning)
            #expect(await eventually { deliveries.messages.count == 1 })
            var posted: [String] = []
            for index in 0..<8 {
                posted.append(try await alice.postMessage(text: "line \(index)", to: room.id).id)
                if index % 3 == 0 { try await Task.sleep(for: .milliseconds(40)) }
            }
            #expect(await eventually { deliveries.messages.count == 9 })
            try await Task.sleep(for: .milliseconds(150))
            let ids = deliveries.messages.map(\.id)
            #expect(ids.count == 9)
            #expect(Array(ids.dropFirst()) == posted)
            #expect(Set(ids).count == ids.count)
            #expect(poller.lastMessageID == posted.last)
            poller.stop()
            #expect(!poller.isRunning)
        }
    }

    @Test("a server that ignores since never causes a duplicate")
    func forgetfulServer() async throws {
        let test = try TestServer()
        defer { test.shutdown() }
        let batch = #"[{"id":"a","type":"chat","text":"1","author":"x","timestamp":"2014-03-21T18:22:33.123Z"},"#
            + #"{"id":"b","type":"chat","text":"2","author":"x","timestamp":"2014-03-21T18:22:34.123Z"}]"#
        test.route("/rooms/r/messages") { _ in .json(batch) }
        try await withChatCave(watching: test.port) { fixture in
            let poller = fixture.leaks.track(fixture.service(for: test.baseURL).makePoller(for: "r", interval: .milliseconds(20)))
            let deliveries = fixture.leaks.track(Deliveries())
            deliveries.start(poller)
            #expect(await eventually { test.requestCount(path: "/rooms/r/messages") >= 5 })
            poller.stop()
            #expect(deliveries.messages.map(\.id) == ["a", "b"])
            #expect(deliveries.batchCount == 1)
        }
    }

    @Test("backs off on errors: each failure is reported and the pause doubles")
    func backoff() async throws {
        let test = try TestServer()
        defer { test.shutdown() }
        let arrivals = Mutex<[ContinuousClock.Instant]>([])
        test.route("/rooms/r/messages") { _ in
            arrivals.withLock { $0.append(.now) }
            return .json(status: 500, #"{"error":"down"}"#)
        }
        try await withChatCave(watching: test.port) { fixture in
            let poller = fixture.leaks.track(MessagePoller(service: fixture.service(for: test.baseURL), roomID: "r",
                                                           interval: .milliseconds(20), maxBackoff: .seconds(5)))
            let deliveries = fixture.leaks.track(Deliveries())
            deliveries.start(poller)
            #expect(await eventually(timeout: .seconds(30)) { deliveries.errorCount >= 4 })
            poller.stop()
            // The poller sleeps 40, 80, 160 ms after the 1st, 2nd, 3rd failure in a row, so the
            // requests arrive at least that far apart (a loaded machine only spreads them more).
            let times = arrivals.withLock { $0 }
            #expect(times.count >= 4)
            if times.count >= 4 {
                for (index, minimum) in [40, 80, 160].enumerated() {
                    let gap = times[index + 1] - times[index]
                    #expect(gap >= .milliseconds(minimum - 5), "gap \(index + 1) was \(gap)")
                }
            }
        }
    }

    @Test("stop() ends polling; releasing the poller ends it too")
    func stopping() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let room = try await alice.createChatroom(named: "Lobby")
            let stopped = fixture.leaks.track(alice.makePoller(for: room.id, interval: .milliseconds(20)))
            fixture.leaks.track(Deliveries()).start(stopped)
            #expect(await eventually { fixture.server.totalRequests >= 5 })
            stopped.stop()
            try await Task.sleep(for: .milliseconds(300))
            let afterStop = fixture.server.totalRequests
            try await Task.sleep(for: .milliseconds(200))
            #expect(fixture.server.totalRequests == afterStop)

            weak var weakPoller: MessagePoller?
            do {
                let released = fixture.leaks.track(alice.makePoller(for: room.id, interval: .milliseconds(20)))
                weakPoller = released
                fixture.leaks.track(Deliveries()).start(released)
                let before = fixture.server.totalRequests
                #expect(await eventually { fixture.server.totalRequests >= before + 3 })
            }
            #expect(weakPoller == nil)
            try await Task.sleep(for: .milliseconds(300))
            let afterRelease = fixture.server.totalRequests
            try await Task.sleep(for: .milliseconds(200))
            #expect(fixture.server.totalRequests == afterRelease)
        }
    }

    @Test("two users' pollers each see the other's messages, in the same order")
    func twoUsers() async throws {
        try await withChatCave { fixture in
            let alice = try await fixture.signedUp("alice")
            let bob = try await fixture.signedUp("bob")
            let room = try await alice.createChatroom(named: "Lobby")
            try await alice.join(id: room.id)
            try await bob.join(id: room.id)
            let aliceSees = fixture.leaks.track(Deliveries())
            let bobSees = fixture.leaks.track(Deliveries())
            let alicePoller = fixture.leaks.track(alice.makePoller(for: room.id, interval: .milliseconds(25)))
            let bobPoller = fixture.leaks.track(bob.makePoller(for: room.id, interval: .milliseconds(25)))
            aliceSees.start(alicePoller)
            bobSees.start(bobPoller)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for index in 0..<5 { _ = try await alice.postMessage(text: "alice \(index)", to: room.id) } }
                group.addTask { for index in 0..<5 { _ = try await bob.postMessage(text: "bob \(index)", to: room.id) } }
                try await group.waitForAll()
            }
            #expect(await eventually { aliceSees.messages.count == 12 && bobSees.messages.count == 12 })
            alicePoller.stop()
            bobPoller.stop()
            let stored = try await alice.fetchMessages(for: room.id).map(\.id)
            #expect(aliceSees.messages.map(\.id) == stored)
            #expect(bobSees.messages.map(\.id) == stored)
            let texts = aliceSees.messages.compactMap(\.text)
            #expect(texts.filter { $0.hasPrefix("bob") } == (0..<5).map { "bob \($0)" })
            #expect(texts.filter { $0.hasPrefix("alice") } == (0..<5).map { "alice \($0)" })
        }
    }
}
