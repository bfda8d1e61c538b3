import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("ChatCave server: crash safety", .ownThread)
struct ServerCrashTests {
    /// The messages one client had acknowledged with 201, in the order it posted them.
    private final class Acknowledged: Sendable {
        let ids = Mutex<[[String]]>([])
        init(clients: Int) { ids.withLock { $0 = Array(repeating: [], count: clients) } }
        var total: Int { ids.withLock { $0.reduce(0) { $0 + $1.count } } }
    }

    @Test("a server killed with SIGKILL while several clients post keeps every message it acknowledged with 201, in order, and since still works", .timeLimit(.minutes(1)))
    func killedMidLoad() throws {
        let directory = StoreKind.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(atPath: directory.path + "-stdout.txt")
            try? FileManager.default.removeItem(atPath: directory.path + "-stderr.txt")
        }
        let clients = 4
        var server = try ServerProcess.start(dataDirectory: directory)
        var killed = false
        defer { if !killed { server.kill(SIGKILL) } }

        // Each client signs up from its own loopback address (sign-ups are limited per address).
        var users: [(id: String, key: String)] = []
        for index in 0..<clients {
            let response = try RawHTTPClient(port: server.port, from: "127.0.0.\(index + 2)")
                .exchange("POST", "/users", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                         body: Array("user%5Bname%5D=client\(index)&user%5Bpassword%5D=pw".utf8))
            let object = try response.object()
            let user = (id: try #require(object["id"] as? String, "\(response)"), key: try #require(object["apiKey"] as? String))
            users.append(user)
        }
        let roomResponse = try RawHTTPClient(port: server.port).exchange("POST", "/rooms", headers: [
            ("X-Magic-Auth", users[0].key), ("Content-Type", "application/x-www-form-urlencoded")], body: Array("room%5Bname%5D=Crash".utf8))
        let roomID = try #require(try roomResponse.object()["id"] as? String)
        for user in users {
            let joined = try RawHTTPClient(port: server.port).exchange("PUT", "/rooms/\(roomID)/chatters/\(user.id)", headers: [("X-Magic-Auth", user.key)])
            #expect(joined.status == 201)
        }

        // Clients post as fast as they can until the server is gone (each at most 5,000 posts).
        let acknowledged = Acknowledged(clients: clients)
        let port = server.port
        let finished = DispatchGroup()
        for (index, user) in users.enumerated() {
            finished.enter()
            let thread = Thread {
                defer { finished.leave() }
                for number in 0..<5_000 {
                    guard let response = try? RawHTTPClient(port: port, timeout: 5).exchange(
                        "POST", "/rooms/\(roomID)/messages",
                        headers: [("X-Magic-Auth", user.key), ("Content-Type", "application/x-www-form-urlencoded")],
                        body: Array("message%5Btext%5D=c\(index)-\(number)".utf8)) else { return }
                    guard response.status == 201, let id = (try? response.object())?["id"] as? String else { return }
                    acknowledged.ids.withLock { $0[index].append(id) }
                }
            }
            thread.start()
        }
        // Kill it once enough posts were acknowledged (or after 5 s), while the clients keep posting.
        let deadline = ContinuousClock.now + .seconds(5)
        while acknowledged.total < 200 && ContinuousClock.now < deadline { usleep(10_000) }
        server.kill(SIGKILL)
        killed = true
        #expect(finished.wait(timeout: .now() + 20) == .success, "every client stopped once the server was gone")
        let perClient = acknowledged.ids.withLock { $0 }
        #expect(perClient.allSatisfy { !$0.isEmpty }, "every client had posts acknowledged: \(perClient.map(\.count))")

        server = try ServerProcess.start(dataDirectory: directory)
        killed = false
        let listed = try RawHTTPClient(port: server.port).exchange("GET", "/rooms/\(roomID)/messages", headers: [("X-Magic-Auth", users[0].key)])
        #expect(listed.status == 200)
        let stored = try listed.array().compactMap { $0["id"] as? String }
        let position = Dictionary(stored.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(position.count == stored.count, "no message is stored twice")
        for (index, ids) in perClient.enumerated() {
            let missing = ids.filter { position[$0] == nil }
            #expect(missing.isEmpty, "client \(index) lost \(missing.count) of its \(ids.count) acknowledged messages")
            let order = ids.compactMap { position[$0] }
            #expect(order == order.sorted(), "client \(index)'s messages are in the order it posted them")
        }
        // `since` an acknowledged message in the middle returns exactly what follows it.
        let middle = try #require(perClient[0].dropFirst(perClient[0].count / 2).first)
        let since = try RawHTTPClient(port: server.port).exchange("GET", "/rooms/\(roomID)/messages?since=\(middle)", headers: [("X-Magic-Auth", users[1].key)])
        let expected = Array(stored[(try #require(position[middle]) + 1)...])
        #expect(try since.array().compactMap { $0["id"] as? String } == expected)
        // The restarted server takes new posts after the old ones.
        let after = try RawHTTPClient(port: server.port).exchange("POST", "/rooms/\(roomID)/messages", headers: [
            ("X-Magic-Auth", users[2].key), ("Content-Type", "application/x-www-form-urlencoded")], body: Array("message%5Btext%5D=after".utf8))
        #expect(after.status == 201)
        let latest = try RawHTTPClient(port: server.port).exchange("GET", "/rooms/\(roomID)/messages?since=\(stored.last ?? "")", headers: [("X-Magic-Auth", users[2].key)])
        #expect(try latest.array().map { $0["text"] as? String } == ["after"])
        server.kill(SIGTERM)
        killed = true
    }
}
