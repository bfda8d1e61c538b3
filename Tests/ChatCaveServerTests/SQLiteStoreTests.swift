@testable import ChatCaveServer
import CourierTestServer
import Foundation
import Testing

@Suite("ChatCave server: the SQLite store", .ownThread)
struct SQLiteStoreTests {
    @Test("the database is in WAL mode at the current schema version, and since-reads search indexes instead of scanning")
    func walAndIndexes() throws {
        let directory = StoreKind.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteChatStore(directory: directory)
        let probe = try SQLiteConnection(path: store.path, busyTimeout: .seconds(1))
        #expect(try probe.query("PRAGMA journal_mode") { $0.text(0) }.first == "wal")
        #expect(try SQLiteSchema.userVersion(probe) == SQLiteSchema.currentVersion)
        let plan = try probe.query("EXPLAIN QUERY PLAN " + SQLiteChatStore.messagesSince, [.text("room"), .text("message")]) {
            $0.text(3) ?? ""
        }
        #expect(plan.contains { $0.contains("USING INDEX messages_by_room (room_id=? AND seq>?)") }, "\(plan)")
        #expect(plan.contains { $0.contains("(id=?)") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
    }

    @Test("since returns only later messages of the same room; an id of another room returns all", arguments: StoreKind.allCases)
    func sinceIsPerRoom(store kind: StoreKind) throws {
        let (store, directory) = try kind.makeStore()
        defer { directory.map { try? FileManager.default.removeItem(at: $0) } }
        let (alice, _) = try store.addUser(name: "alice", passwordHash: "x")
        let lobby = try store.createRoom(named: "Lobby").id
        let attic = try store.createRoom(named: "Attic").id
        _ = try store.join(roomID: lobby, userID: alice.id, requesterID: alice.id)
        _ = try store.join(roomID: attic, userID: alice.id, requesterID: alice.id)
        let posted = try (0..<5).map { try store.post(roomID: lobby, authorID: alice.id, text: "m\($0)").id }
        let elsewhere = try store.post(roomID: attic, authorID: alice.id, text: "attic").id
        #expect(try store.messages(roomID: lobby, since: posted[1]).map(\.id) == Array(posted[2...]))
        #expect(try store.messages(roomID: lobby, since: posted[4]).isEmpty)
        #expect(try store.messages(roomID: lobby, since: elsewhere).count == 6, "a join and five posts")
        #expect(try store.messages(roomID: lobby, since: "unknown").count == 6)
        #expect(throws: APIError.notFound("No room exists with ID 'nowhere'")) { try store.messages(roomID: "nowhere", since: nil) }
    }
}
