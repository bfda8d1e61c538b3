@testable import Courier
import CourierTestServer
import Testing

/// The HTTP/1.1 connection state machine in random conversations: responses of every framing
/// in random pieces, with faults (see ``HTTP1Conversation``).
@Suite("HTTP/1.1 connection state machine: random conversations")
struct HTTP1ConnectionConversationTests {
    @Test("3,000 random conversations: one end per request, the head before the body, clean bodies whole, reuse exactly when allowed, closed stays closed")
    func randomConversations() {
        let seed = SeededRandom.seed(default: 0x5EED_0004_0111)
        for index in 0..<3_000 {
            var conversation = HTTP1Conversation(seed: seed, index: index)
            conversation.play()
        }
    }
}
