@testable import CourierHTTP2
import CourierTestServer
import Testing

@Suite("HTTP/2 connection state machine against a model of RFC 9113")
struct HTTP2ConnectionModelTests {
    @Test("600 seeded conversations with a legal, randomly moving server: every response, failure, window and limit as the model predicts")
    func conversations() {
        let seed = SeededRandom.seed(default: 0x9113_6960)
        var responses = 0, failed = 0, cancels = 0, goAways = 0, limited = 0
        for index in 0..<600 {
            var generator = SeededRandom(seed: seed, stream: index)
            let conversationSeed = generator.next()
            var conversation = HTTP2ModelConversation(seed: conversationSeed)
            conversation.run(steps: 80)
            if let failure = conversation.failures.first {
                Issue.record("conversation \(index) (seed \(seed), conversation seed \(conversationSeed)): \(failure)")
                return
            }
            responses += conversation.responses
            failed += conversation.failedStreams
            cancels += conversation.cancels
            goAways += conversation.goAways
            if conversation.peakOpen < conversation.requestCount { limited += 1 }
        }
        print("HTTP/2 model: \(responses) responses, \(failed) failures, \(cancels) cancels, \(goAways) GOAWAYs, \(limited) limited")
        // The moves reach every kind of outcome often enough for the checks to mean something.
        #expect(responses > 800)
        #expect(failed > 500)
        #expect(cancels > 300)
        #expect(goAways > 200)
        #expect(limited > 100)
    }
}
