@testable import ChatCaveServer
import CourierTestServer
import Foundation
import Testing

@Suite("ChatCave server: migration from the JSON data file", .ownThread)
struct ServerMigrationTests {
    /// A new data directory holding `text` as `chatcave-store.json`.
    private static func directory(withLegacyFile text: String) throws -> URL {
        let directory = StoreKind.temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: directory.appendingPathComponent("chatcave-store.json"))
        return directory
    }

    private static func names(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix("chatcave.sqlite") }.sorted()
    }

    @Test("a data file written by the JSON server is imported whole: users, passwords, API keys, rooms, members, messages with their ids and timestamps")
    func importsTodaysFile() throws {
        let directory = try Self.directory(withLegacyFile: LegacyDataFile.text)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try ServerFixture(dataDirectory: directory)
        #expect(try Self.names(directory) == ["chatcave-store.json.migrated"])
        #expect(try String(contentsOf: directory.appendingPathComponent("chatcave-store.json.migrated"), encoding: .utf8)
                == LegacyDataFile.text, "the old file is kept as it was")

        let alice = ServerFixture.magic(LegacyDataFile.aliceKey)
        let users = try fixture.send("GET", "/users", headers: alice)
        #expect(users.status == 200)
        #expect(try users.array().map { $0["name"] as? String } == ["alice", "bob"])
        #expect(try users.array().first?["id"] as? String == LegacyDataFile.aliceID)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic(LegacyDataFile.bobKey)).status == 200, "bob's key works")
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("bob", "builder")).status == 200, "bob's password works")
        #expect(try fixture.signIn("alice", password: "wonderland").status == 201)
        #expect(try fixture.signIn("alice", password: "builder").status == 401)

        let rooms = try fixture.send("GET", "/rooms", headers: alice).array()
        #expect(rooms.map { $0["id"] as? String } == [LegacyDataFile.lobbyID, LegacyDataFile.emptyRoomID])
        #expect(rooms.map { $0["name"] as? String } == ["Lobby", "Empty room"])
        #expect((rooms.first?["chatters"] as? [[String: Any]])?.map { $0["name"] as? String } == ["alice"])

        let messages = try fixture.send("GET", "/rooms/\(LegacyDataFile.lobbyID)/messages", headers: alice).array()
        #expect(messages.map { $0["id"] as? String } == LegacyDataFile.lobbyMessageIDs)
        #expect(messages.map { $0["type"] as? String } == ["join", "join", "chat", "chat", "leave"])
        #expect(messages.map { $0["author"] as? String } == ["alice", "bob", "alice", "bob", "bob"])
        #expect(messages.map { $0["text"] as? String } == [nil, nil, "hello, bob ✓", "hi alice\ntwo lines", nil])
        #expect(messages.first?["timestamp"] as? String == "2026-11-23T13:09:02.491Z")
        #expect(messages.last?["timestamp"] as? String == "2026-11-23T13:09:02.649Z")
        let since = try fixture.send("GET", "/rooms/\(LegacyDataFile.lobbyID)/messages?since=\(LegacyDataFile.lobbyMessageIDs[2])", headers: alice)
        #expect(try since.array().map { $0["id"] as? String } == Array(LegacyDataFile.lobbyMessageIDs[3...]))
        #expect(try fixture.send("GET", "/rooms/\(LegacyDataFile.emptyRoomID)/messages", headers: alice).array().isEmpty)
        #expect(try fixture.send("DELETE", "/rooms/\(LegacyDataFile.emptyRoomID)", headers: alice).status == 302)
        _ = try fixture.post("after+the+move", to: LegacyDataFile.lobbyID, key: LegacyDataFile.aliceKey)
    }

    @Test("the file is never imported twice: a restart, even with the file put back, keeps one copy of everything")
    func importsOnce() throws {
        let directory = try Self.directory(withLegacyFile: LegacyDataFile.text)
        defer { try? FileManager.default.removeItem(at: directory) }
        let alice = ServerFixture.magic(LegacyDataFile.aliceKey)
        do {
            let fixture = try ServerFixture(dataDirectory: directory)
            _ = try fixture.post("one", to: LegacyDataFile.lobbyID, key: LegacyDataFile.aliceKey)
            fixture.server.shutdown()
        }
        try FileManager.default.copyItem(at: directory.appendingPathComponent("chatcave-store.json.migrated"),
                                         to: directory.appendingPathComponent("chatcave-store.json"))
        let restarted = try ServerFixture(dataDirectory: directory)
        #expect(try Self.names(directory) == ["chatcave-store.json.migrated", "chatcave-store.json.migrated.2"])
        #expect(try restarted.send("GET", "/users", headers: alice).array().count == 2)
        #expect(try restarted.send("GET", "/rooms", headers: alice).array().count == 2)
        let messages = try restarted.send("GET", "/rooms/\(LegacyDataFile.lobbyID)/messages", headers: alice).array()
        #expect(messages.count == LegacyDataFile.lobbyMessageIDs.count + 1)
        #expect(messages.last?["text"] as? String == "one")
    }

    @Test("L8 a data file of format 1 with plain-text API keys is imported with digests only, and the keys still work")
    func plaintextKeysImported() throws {
        let key = "0b6c1a1e-7d3f-4a51-9e0c-3f1f2a4b5c6d"
        let old = #"{"format":1,"rooms":[],"users":[{"apiKey":"\#(key)","id":"u1","name":"alice","passwordHash":"pbkdf2-sha256$1000$AAAA$BBBB"}]}"#
        let directory = try Self.directory(withLegacyFile: old)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try ServerFixture(dataDirectory: directory)
        let users = try fixture.send("GET", "/users", headers: ServerFixture.magic(key))
        #expect(users.status == 200)
        #expect(try users.array().first?["apiKey"] as? String == key)
        let database = ["chatcave.sqlite", "chatcave.sqlite-wal"].compactMap { FileManager.default.contents(atPath: directory.appendingPathComponent($0).path) }
        #expect(!database.contains { String(decoding: $0, as: UTF8.self).contains(key) })
        #expect(try Self.names(directory) == ["chatcave-store.json.migrated"])
    }

    @Test("L8 a data file of format 2 with one key digest per user is imported, and the key still works")
    func singleDigestImported() throws {
        let key = "0b6c1a1e-7d3f-4a51-9e0c-3f1f2a4b5c6d"  // aliceDigest is its SHA-256
        let digest = "8e7c8a1b1fc8b6d1ad5bb4cbb0e3f6e0d5b2b1a5d0d0b0c1e5c0b5f0a9b8c7d6"  // bob's, of a key unknown here
        let aliceDigest = "3c29bfaf458059033f4b42c91d5a23e1b6980d719cc1a88a1c1e8d9d6127255c"
        let old = #"{"format":2,"rooms":[],"users":[{"apiKeyDigest":"\#(aliceDigest)","id":"u1","name":"alice","passwordHash":"pbkdf2-sha256$1000$AAAA$BBBB"},"#
            + #"{"apiKeyDigest":"\#(digest)","id":"u2","name":"bob","passwordHash":"pbkdf2-sha256$1000$AAAA$BBBB"}]}"#
        let directory = try Self.directory(withLegacyFile: old)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try ServerFixture(dataDirectory: directory)
        let users = try fixture.send("GET", "/users", headers: ServerFixture.magic(key))
        #expect(users.status == 200)
        #expect(try users.array().map { $0["name"] as? String } == ["alice", "bob"])
        #expect(fixture.server.userID(named: "bob") == "u2")
    }

    @Test("an unreadable data file stops the server at start; it is neither imported nor renamed nor changed")
    func unreadableLegacyFile() throws {
        let directory = try Self.directory(withLegacyFile: "{not json")
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = #expect(throws: ChatCaveServer.StartupError.self) {
            _ = try ChatCaveServer(port: 0, configuration: .init(dataDirectory: directory, passwordIterations: 1_000))
        }
        #expect(error?.description.contains("chatcave-store.json") == true, "\(String(describing: error))")
        #expect(try String(contentsOf: directory.appendingPathComponent("chatcave-store.json"), encoding: .utf8) == "{not json")
        #expect(try Self.names(directory) == ["chatcave-store.json"])
    }

    @Test("a data file beside a database that already holds other data is refused, not merged")
    func refusesToMerge() throws {
        let directory = StoreKind.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let fixture = try ServerFixture(dataDirectory: directory)
            _ = try fixture.signUp("carol")
            fixture.server.shutdown()
        }
        try Data(LegacyDataFile.text.utf8).write(to: directory.appendingPathComponent("chatcave-store.json"))
        let error = #expect(throws: ChatCaveServer.StartupError.self) {
            _ = try ChatCaveServer(port: 0, configuration: .init(dataDirectory: directory, passwordIterations: 1_000))
        }
        #expect(error?.description.contains("already holds data") == true, "\(String(describing: error))")
        #expect(try Self.names(directory) == ["chatcave-store.json"])
    }
}
