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
