@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// "Exactly one terminal callback", over real sockets, in random conversations: each
/// conversation's connection (its callback queue, timeout, retry policy, placement of `async`
/// requests, managed or unmanaged requests drawn at random) sends 10 to 16 concurrent GETs in
/// the three styles (`async`, a completion or closures, the delegate alone) to a server that holds
/// answers behind gates, answers slowly, streams a body slowly, drops a connection, answers 503 or
/// never answers (``OnceConversationServer``); meanwhile the test cancels requests by id or by
/// their task at moments set against the server's progress (before it could answer, while it
/// holds the request, a swept few microseconds after the answer went into the socket, after the
/// end), calls `cancelAll`, lets timeouts and deadlines pass, and drops its last reference to a
/// connection of unmanaged requests.
///
/// Every request must end once: one terminal delegate callback and one end heard by the user's
/// code, on the callback queue, with nothing (`didCollect`, `willRetry`, progress, `onDidStart`)
/// after it; with an ending the model (``OnceConversation/allowed(_:cancels:)``) allows for what
/// the test knew when it cancelled; an unmanaged request still held when its connection goes
/// ends silently. Nothing leaks: connection, delegate, the closures' captures, transport, pools
/// and sockets are gone at the end.
@Suite("Terminal callbacks: random conversations")
struct TerminalCallbackConversationTests {
    /// What the run met, to show that the races happened both ways.
    struct Tally: CustomStringConvertible {
        /// Cancels racing an answer that ended the request cancelled.
        var raceCancelled = 0
        /// Cancels racing an answer that came after the answer had ended the request.
        var raceAnswered = 0
        /// Requests cancelled when no answer could exist yet.
        var cancelledBeforeAnswer = 0
        /// Requests ended by their own timeout or deadline.
        var expired = 0
        /// Unmanaged requests held when their connection went, which heard nothing.
        var silent = 0
        /// `cancelAll` calls.
        var cancelAlls = 0
        /// Whether every situation above came up at least once.
        var coversEverySituation: Bool {
            raceCancelled > 0 && raceAnswered > 0 && cancelledBeforeAnswer > 0 && expired > 0 && silent > 0 && cancelAlls > 0
        }
        /// The client's times from an answer in the socket to its terminal callback, measured so far.
        private var clientTimes: [Duration] = []

        /// The median of the measured client times (2 ms before any): the span a race's delay sweeps.
        var clientTime: Duration {
            clientTimes.isEmpty ? .milliseconds(2) : clientTimes.sorted()[clientTimes.count / 2]
        }

        /// Adds a measured client time.
        mutating func measured(_ time: Duration) {
            clientTimes.append(time)
        }

        var description: String {
            "client time \(clientTime), races cancelled \(raceCancelled), races answered \(raceAnswered), cancelled before an answer \(cancelledBeforeAnswer), expired \(expired), silent at release \(silent), cancelAll \(cancelAlls)"
        }
    }

    @Test("16 conversations of 10-16 requests in three styles, cancelled, timed out, released at moments swept across the server's progress: each request ends once, as the model allows, on its queue, and nothing leaks",
          arguments: TransportUnderTest.allCases)
    func randomConversations(_ transport: TransportUnderTest) async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0024_0001)
        let server = try OnceConversationServer()
        defer { server.server.shutdown() }
        var tally = Tally()
        // 16 conversations, and up to 32 more while a situation is still missing: which way a
        // race goes depends on the machine's load, so a loaded run may need more tries to see both.
        for number in 0..<48 where number < 16 || !tally.coversEverySituation {
            var random = SeededRandom(seed: seed, stream: number)
            let plan = OnceConversation(number: number, random: &random, drops: transport == .native)
            let context = "conversation \(number) (\(plan)), \(SeededRandom(seed: seed).replayHint)"
            try await OnceConversationRun(plan: plan, server: server, transport: transport, context: context)
                .run(random: &random, tally: &tally)
        }
        #expect(tally.coversEverySituation, "the conversations missed a situation: \(tally)")
    }
}
