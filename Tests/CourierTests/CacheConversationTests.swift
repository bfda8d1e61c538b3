@testable import Courier
import CourierTestServer
import Foundation
import Testing

/// The HTTP cache in random conversations with a server in memory, on a virtual clock: private
/// and shared caches, some with a disk directory and restarts (see ``CacheConversation``).
@Suite("HTTP cache: random conversations")
struct CacheConversationTests {
    @Test("300 random conversations: no answer crosses credentials, private, no-store, Set-Cookie, Vary and invalidation rules hold, fresh entries are served and stale ones revalidated")
    func randomConversations() async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0004_CAC4E)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-conversations-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var total = CacheConversation.Coverage()
        for index in 0..<300 {
            var conversation = CacheConversation(seed: seed, index: index, directory: directory.appendingPathComponent("\(index)"))
            total = total + (await conversation.play(50))
        }
        // The run reached what it checks (these counts hold for the default seed with room to spare).
        #expect(total.hits >= 200 && total.revalidations >= 200, "\(total)")
        #expect(total.credentialedHits >= 50 && total.variedHits >= 50, "\(total)")
        #expect(total.notCached >= 50 && total.invalidations >= 100 && total.restarts >= 30, "\(total)")
    }
}
