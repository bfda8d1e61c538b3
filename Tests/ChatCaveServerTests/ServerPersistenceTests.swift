@testable import ChatCaveServer
import CourierTestServer
import Foundation
import Testing

@Suite("ChatCave server: persistence in SQLite", .ownThread)
struct ServerPersistenceTests {
    private static func temporaryDirectory() -> URL {
        StoreKind.temporaryDirectory()
    }

    private static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// The bytes of the database and its write-ahead log, as text (lossy), to look for secrets.
    private static func databaseBytes(_ directory: URL) -> String {
        let paths = ["chatcave.sqlite", "chatcave.sqlite-wal"].map { directory.appendingPathComponent($0).path }
        return paths.compactMap { FileManager.default.contents(atPath: $0) }.map { String(decoding: $0, as: UTF8.self) }.joined()
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

    @Test("the database and its -wal and -shm files are mode 0600 in a 0700 directory, and hold salted hashes, never passwords")
    func secrets() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try ServerFixture(dataDirectory: directory)
        _ = try fixture.signUp("alice", password: "correct-horse-battery")
        _ = try fixture.signUp("bob", password: "correct-horse-battery")
        #expect(try Self.mode(directory.path) == 0o700)
        for name in ["chatcave.sqlite", "chatcave.sqlite-wal", "chatcave.sqlite-shm"] {
            #expect(try Self.mode(directory.appendingPathComponent(name).path) == 0o600, "\(name)")
        }
        let bytes = Self.databaseBytes(directory)
        #expect(!bytes.contains("correct-horse-battery"))
        #expect(bytes.contains("pbkdf2-sha256$"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                == ["chatcave.sqlite", "chatcave.sqlite-shm", "chatcave.sqlite-wal"])
    }

    @Test("a database file of another mode is set to 0600 when the server starts")
    func modeRepaired() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let fixture = try ServerFixture(dataDirectory: directory)
            _ = try fixture.signUp("alice")
            fixture.server.shutdown()
        }
        let file = directory.appendingPathComponent("chatcave.sqlite").path
        #expect(chmod(file, 0o644) == 0)
        let restarted = try ServerFixture(dataDirectory: directory)
        #expect(try Self.mode(file) == 0o600)
        #expect(try restarted.signIn("alice", password: "pw").status == 201)
    }

    @Test("L8 the database does not contain the API key, and the key still authenticates after a restart")
    func hashedKeys() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var alice = (id: "", key: "")
        do {
            let fixture = try ServerFixture(dataDirectory: directory)
            alice = try fixture.signUp("alice", password: "pw")
            #expect(!Self.databaseBytes(directory).contains(alice.key))
            #expect(Self.databaseBytes(directory).contains(StoredUser.digest(ofKey: alice.key)))
            fixture.server.shutdown()
        }
        let restarted = try ServerFixture(dataDirectory: directory)
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(alice.key)).status == 200)
        #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic("not-\(alice.key)")).status == 401)
        let signIn = try restarted.send("PUT", "/account", form: "user%5Bname%5D=alice&user%5Bpassword%5D=pw")
        #expect(try signIn.object()["apiKey"] as? String == alice.key, "a key presented since the restart is returned again")
        #expect(!Self.databaseBytes(directory).contains(alice.key))
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
        var second = ""
        do {
            let restarted = try ServerFixture(dataDirectory: directory)
            let signIn = try restarted.signIn("alice", password: "pw")
            #expect(signIn.status == 201)
            second = try #require(try signIn.object()["apiKey"] as? String)
            #expect(second != alice.key)
            #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(alice.key)).status == 200, "the old key still works")
            #expect(try restarted.send("GET", "/rooms", headers: ServerFixture.magic(second)).status == 200)
            #expect(try restarted.signIn("alice", password: "pw").object()["apiKey"] as? String == second, "no third key")
            #expect(!Self.databaseBytes(directory).contains(alice.key) && !Self.databaseBytes(directory).contains(second))
            restarted.server.shutdown()
        }
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

    @Test("L9 a change that cannot be committed (another process holds the write lock) gets 500 and changes nothing; reads go on; once the lock is released, changes are saved")
    func failedCommit() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteChatStore(directory: directory, busyTimeout: .milliseconds(50))
        let fixture = try ServerFixture(store: store)
        let alice = try fixture.signUp("alice")
        let auth = ServerFixture.magic(alice.key)
        let roomID = try fixture.createRoom("Lobby", key: alice.key)
        try fixture.join(roomID, userID: alice.id, key: alice.key)
        let before = try fixture.send("GET", "/rooms/\(roomID)/messages", headers: auth).array().count

        let holder = try SQLiteConnection(path: store.path, busyTimeout: .zero)
        try holder.execute("BEGIN IMMEDIATE")
        let refused = try fixture.send("POST", "/rooms", auth: auth, form: "room%5Bname%5D=Lost")
        #expect(refused.status == 500)
        #expect(refused.errorText == "The change could not be saved, so it was not made")
        #expect(try fixture.send("POST", "/rooms/\(roomID)/messages", auth: auth, form: "message%5Btext%5D=lost").status == 500)
        #expect(try fixture.send("DELETE", "/rooms/\(roomID)/chatters/\(alice.id)", headers: auth).status == 500)
        #expect(try fixture.send("POST", "/users", form: "user%5Bname%5D=bob&user%5Bpassword%5D=pw").status == 500)
        #expect(try fixture.send("DELETE", "/account", headers: auth).status == 500)
        #expect(try fixture.send("GET", "/rooms", headers: auth).array().map { $0["id"] as? String } == [roomID], "reads go on")
        #expect(try fixture.send("GET", "/users", headers: auth).array().count == 1)
        #expect(try fixture.send("GET", "/rooms/\(roomID)/messages", headers: auth).array().count == before)
        #expect(try fixture.send("GET", "/rooms/\(roomID)/chatters", headers: auth).array().count == 1, "the leave was not made")
        try holder.execute("ROLLBACK")

        _ = try fixture.post("saved", to: roomID, key: alice.key)
        let lost = try fixture.createRoom("Lost", key: alice.key)
        fixture.server.shutdown()
        let restarted = try ServerFixture(dataDirectory: directory)
        #expect(try restarted.send("GET", "/rooms", headers: auth).array().map { $0["id"] as? String } == [roomID, lost])
        let texts = try restarted.send("GET", "/rooms/\(roomID)/messages", headers: auth).array().map { $0["text"] as? String }
        #expect(texts == [nil, "saved"])
    }

    @Test("a damaged database file stops the server at start with a clear message, and is left as it was")
    func corruptDatabase() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("chatcave.sqlite")
        let garbage = Data((0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: file)
        let error = #expect(throws: ChatCaveServer.StartupError.self) {
            _ = try ChatCaveServer(port: 0, configuration: .init(dataDirectory: directory, passwordIterations: 1_000))
        }
        #expect(error?.description.contains("is not a ChatCave database or is damaged") == true, "\(String(describing: error))")
        #expect(error?.description.contains(file.path) == true)
        #expect(try Data(contentsOf: file) == garbage)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["chatcave.sqlite"])
    }

    @Test("another program's SQLite database, or one of a newer schema, stops the server at start and is left as it was")
    func foreignDatabase() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("chatcave.sqlite").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        do {
            let other = try SQLiteConnection(path: path, busyTimeout: .zero)
            try other.execute("CREATE TABLE notes (text TEXT)")
        }
        let foreign = #expect(throws: ChatCaveServer.StartupError.self) {
            _ = try ChatCaveServer(port: 0, configuration: .init(dataDirectory: directory, passwordIterations: 1_000))
        }
        #expect(foreign?.description.contains("not one of ChatCave") == true, "\(String(describing: foreign))")
        do {
            let other = try SQLiteConnection(path: path, busyTimeout: .zero)
            try other.execute("DROP TABLE notes; PRAGMA user_version = 99")
        }
        let newer = #expect(throws: ChatCaveServer.StartupError.self) {
            _ = try ChatCaveServer(port: 0, configuration: .init(dataDirectory: directory, passwordIterations: 1_000))
        }
        #expect(newer?.description.contains("schema version 99") == true, "\(String(describing: newer))")
    }
}
