@testable import Courier
import CourierTestServer
import Testing

/// The pool state machine against a model of its driver, in random conversations: every race
/// between arrivals, cancels, connects, responses, stale connections, HTTP/2 changes, timers and
/// shutdown that a seed reaches (see ``PoolConversation``).
@Suite("Pool state machine: random conversations")
struct PoolStateMachineConversationTests {
    @Test("3,000 random conversations: FIFO placement, one end per request, limits kept, no wait without a connection coming, nothing left behind")
    func randomConversations() {
        let seed = SeededRandom.seed(default: 0x5EED_0003_9001)
        for index in 0..<3_000 {
            var conversation = PoolConversation(seed: seed, index: index)
            conversation.play(120)
        }
    }
}
