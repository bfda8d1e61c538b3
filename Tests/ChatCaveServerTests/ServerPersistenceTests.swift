import CourierTestServer
import ChatCaveServer
import Foundation
import Testing

@Suite("ChatCave server: persistence", .ownThread)
struct ServerPersistenceTests {
    private static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("chatcave-server-\(UUID().uuidString)", isDirectory: true)
    }

    private static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test("users, rooms, members and messages survive a restart with the same data directory")
    func restart() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var roomID = ""
        var alice = (id: "", key: "")
        do {
            let fixture = try ServerFixture(dataDirectory: directory)
            alice = try fixture.signUp("alice", password: "pw")
            roomID = try fixture.createRoom("Lobby", key: alice.key)
            try fixture.join(roomID, userID: alice.id, key: alice.key)
            _ = try fixture.post("still+here", to: roomID, key: alice.key)
            fixture.server.shutdown()
        }
        let restarted = try ServerFixture(dataDirectory: directory)
        let auth = ServerFixture.magic(alice.key)
        let room = try restarted.send("GET", "/rooms/\(roomID)", headers: auth)
        #expect(room.status == 200)
        #expect((try room.object()["chatters"] as? [[String: Any]])?.first?["name"] as? String == "alice")
        let texts = try restarted.send("GET", "/rooms/\(roomID)/messages", headers: auth).array().map { $0["text"] as? String }
        #expect(texts == [nil, "still here"])
        #expect(try restarted.send("PUT", "/account", form: "user%5Bname%5D=alice&user%5Bpassword%5D=pw").status == 201)
        #expect(try restarted.send("PUT", "/account", form: "user%5Bname%5D=alice&user%5Bpassword%5D=no").status == 401)
        let since = try restarted.send("GET", "/rooms/\(roomID)/messages", headers: auth).array().first?["id"] as? String
        #expect(try restarted.send("GET", "/rooms/\(roomID)/messages?since=\(since ?? "")", headers: auth).array().count == 1)
    }

    @Test("the data file is mode 0600 in a 0700 directory, and holds salted hashes, never passwords")
    func secrets() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try ServerFixture(dataDirectory: directory)
        _ = try fixture.signUp("alice", password: "correct-horse-battery")
        _ = try fixture.signUp("bob", password: "correct-horse-battery")
        let file = directory.appendingPathComponent("chatcave-store.json")
        #expect(try Self.mode(file.path) == 0o600)
        #expect(try Self.mode(directory.path) == 0o700)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("correct-horse-battery"))
        let hashes = text.components(separatedBy: "pbkdf2-sha256$").count - 1
        #expect(hashes == 2)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    @Test("L8 the data file does not contain the API key, and the key still authenticates after a restart")
    func hashedKeys() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("chatcave-store.json")
        var alice = (id: "", key: "")
        do {
            let fixture = try ServerFixture(dataDirectory: directory)
            alice = try fixture.signUp("alice", password: "pw")
            fixture.server.shutdown()
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains(alice.key))
        #expect(text.contains("apiKeyDigest"))
        let restarted = try ServerFixture(dataDirectory: directory)
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(alice.key)).status == 200)
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic("not-\(alice.key)")).status == 401)
        let signIn = try restarted.send("PUT", "/account", form: "user%5Bname%5D=alice&user%5Bpassword%5D=pw")
        #expect(try signIn.object()["apiKey"] as? String == alice.key, "a key presented since the restart is returned again")
        #expect(!(try String(contentsOf: file, encoding: .utf8)).contains(alice.key))
    }

    @Test("L8 a data file of format 1 with plain-text API keys is rewritten with digests on load, and the keys still work")
    func plaintextKeysMigrated() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("chatcave-store.json")
        let key = "0b6c1a1e-7d3f-4a51-9e0c-3f1f2a4b5c6d"
        let old = #"{"format":1,"rooms":[],"users":[{"apiKey":"\#(key)","id":"u1","name":"alice","passwordHash":"pbkdf2-sha256$1000$AAAA$BBBB"}]}"#
        try Data(old.utf8).write(to: file)
        let fixture = try ServerFixture(dataDirectory: directory)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains(key))
        #expect(text.contains(#""format":3"#))
        let users = try fixture.send("GET", "/users", headers: ServerFixture.magic(key))
        #expect(users.status == 200)
        #expect(try users.array().first?["apiKey"] as? String == key)
    }

    @Test("L8 a data file of format 2 with one key digest per user is rewritten in format 3 on load, and the key still works")
    func singleDigestMigrated() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("chatcave-store.json")
        let key = "0b6c1a1e-7d3f-4a51-9e0c-3f1f2a4b5c6d"  // aliceDigest is its SHA-256
        let digest = "8e7c8a1b1fc8b6d1ad5bb4cbb0e3f6e0d5b2b1a5d0d0b0c1e5c0b5f0a9b8c7d6"  // bob's, of a key unknown here
        let aliceDigest = "3c29bfaf458059033f4b42c91d5a23e1b6980d719cc1a88a1c1e8d9d6127255c"
        let old = #"{"format":2,"rooms":[],"users":[{"apiKeyDigest":"\#(aliceDigest)","id":"u1","name":"alice","passwordHash":"pbkdf2-sha256$1000$AAAA$BBBB"},"#
            + #"{"apiKeyDigest":"\#(digest)","id":"u2","name":"bob","passwordHash":"pbkdf2-sha256$1000$AAAA$BBBB"}]}"#
        try Data(old.utf8).write(to: file)
        let fixture = try ServerFixture(dataDirectory: directory)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains(#""format":3"#))
        #expect(text.contains(#""apiKeyDigests":["\#(digest)"]"#))
        let users = try fixture.send("GET", "/users", headers: ServerFixture.magic(key))
        #expect(users.status == 200)
        #expect(try users.array().map { $0["name"] as? String } == ["alice", "bob"])
    }

    @Test("sign-in after a restart, before the key was presented, adds a key: the old one keeps working")
    func signInAfterRestartKeepsOldKey() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var alice = (id: "", key: "")
        do {
            let fixture = try ServerFixture(dataDirectory: directory)
            alice = try fixture.signUp("alice", password: "pw")
            fixture.server.shutdown()
        }
        let restarted = try ServerFixture(dataDirectory: directory)
        let signIn = try restarted.signIn("alice", password: "pw")
        #expect(signIn.status == 201)
        let second = try #require(try signIn.object()["apiKey"] as? String)
        #expect(second != alice.key)
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(alice.key)).status == 200, "the old key still works")
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(second)).status == 200)
        #expect(try restarted.signIn("alice", password: "pw").object()["apiKey"] as? String == second, "no third key")
        let text = try String(contentsOf: directory.appendingPathComponent("chatcave-store.json"), encoding: .utf8)
        #expect(!text.contains(alice.key) && !text.contains(second))
        restarted.server.shutdown()
        let again = try ServerFixture(dataDirectory: directory)
        #expect(try again.send("GET", "/rooms", headers: ServerFixture.magic(alice.key)).status == 200)
        #expect(try again.send("GET", "/rooms", headers: ServerFixture.magic(second)).status == 200, "both keys were saved")
    }

    @Test("sign-out with X-Magic-Auth retires only that key; sign-out with Basic retires all of the user's keys")
    func signOutRetiresPresentedKey() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var first = ""
        do {
            let fixture = try ServerFixture(dataDirectory: directory)
            first = try fixture.signUp("alice", password: "pw").key
            fixture.server.shutdown()
        }
        let restarted = try ServerFixture(dataDirectory: directory)
        let second = try #require(try restarted.signIn("alice", password: "pw").object()["apiKey"] as? String)
        #expect(try restarted.send("DELETE", "/account", headers: ServerFixture.magic(first)).status == 200)
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(first)).status == 401)
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(second)).status == 200, "the other client keeps its key")
        #expect(try restarted.send("DELETE", "/account", headers: ServerFixture.basic("alice", "pw")).status == 200)
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(second)).status == 401)
        let third = try #require(try restarted.signIn("alice", password: "pw").object()["apiKey"] as? String)
        #expect(![first, second].contains(third))
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(third)).status == 200)
    }

    @Test("L9 a change that cannot be saved gets 500 and is not made; once the disk works again, changes are saved")
    func failedSave() throws {
        let directory = Self.temporaryDirectory()
        let moved = directory.appendingPathExtension("moved")
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: moved)
        }
        let fixture = try ServerFixture(dataDirectory: directory)
        let alice = try fixture.signUp("alice")
        let auth = ServerFixture.magic(alice.key)
        // Tests run as root, so permissions would not stop the write: a file takes the directory's place.
        try FileManager.default.moveItem(at: directory, to: moved)
        try Data("not a directory".utf8).write(to: directory)
        let refused = try fixture.send("POST", "/rooms", auth: auth, form: "room%5Bname%5D=Lost")
        #expect(refused.status == 500)
        #expect(refused.errorText == "The change could not be saved, so it was not made")
        #expect(try fixture.send("GET", "/rooms", headers: auth).array().isEmpty)
        #expect(try fixture.send("POST", "/users", form: "user%5Bname%5D=bob&user%5Bpassword%5D=pw").status == 500)
        #expect(try fixture.send("GET", "/users", headers: auth).array().count == 1)
        #expect(try fixture.send("DELETE", "/account", headers: auth).status == 500)
        #expect(try fixture.send("GET", "/rooms", headers: auth).status == 200, "the key was not retired")
        try FileManager.default.removeItem(at: directory)
        try FileManager.default.moveItem(at: moved, to: directory)
        let room = try fixture.createRoom("Lost", key: alice.key)
        fixture.server.shutdown()
        let restarted = try ServerFixture(dataDirectory: directory)
        #expect(try restarted.send("GET", "/rooms", headers: auth).array().map { $0["id"] as? String } == [room])
    }

    @Test("an unreadable data file stops the server from starting instead of being overwritten")
    func corruptFile() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("chatcave-store.json")
        try Data("{not json".utf8).write(to: file)
        #expect(throws: ChatCaveServer.StartupError.self) {
            _ = try ChatCaveServer(port: 0, configuration: .init(dataDirectory: directory, passwordIterations: 1_000))
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "{not json")
    }
}
