import Courier
import Foundation

/// The room `chatcave bench-store` posts to, and its clients: one user each, on a connection
/// of its own.
struct BenchStoreRoom: Sendable {
    /// One posting client: a user and its connection.
    struct Client: Sendable {
        /// The connection, with the user's API key in `X-Magic-Auth` on every request.
        let connection: HTTPConnection

        /// Posts `text` to the room; returns the new message's id.
        /// - Throws: ``BenchStoreCommand/Failure`` when the server does not answer 201.
        @discardableResult
        func post(room: String, text: String) async throws -> String {
            let response = try await connection.post("/rooms/\(room)/messages", body: .form([("message[text]", text)]))
            guard response.status.code == 201, let message = try? response.decode(Identified.self) else {
                throw BenchStoreCommand.Failure(description: "posting answered \(response.status.code): \(response.text ?? "")")
            }
            return message.id
        }
    }

    /// Latencies in milliseconds.
    struct Latencies: Sendable {
        let median: Double
        let p90: Double
        let p99: Double
        let max: Double
    }

    private struct Identified: Decodable {
        let id: String
    }

    /// The room's id.
    let id: String
    /// The clients, each a member of the room.
    let clients: [Client]

    /// Signs up `clients` users (`bench-<n>-<random>`), creates a room and has them all join it.
    /// - Throws: ``BenchStoreCommand/Failure`` or `HTTPConnectionError` when the server refuses.
    static func prepare(clients count: Int, baseURL: URL, transport: NativeTransport) async throws -> BenchStoreRoom {
        let tag = UUID().uuidString.prefix(8).lowercased()
        var clients: [Client] = []
        var userIDs: [String] = []
        for index in 0..<count {
            let signUp = HTTPConnection(baseURL: baseURL, configuration: .init(headers: ["Accept": "application/json"], transport: transport, cache: nil))
            let response = try await signUp.post("/users", body: .form([("user[name]", "bench-\(index)-\(tag)"), ("user[password]", "bench-\(tag)")]))
            let user = try response.decode(SignedUp.self)
            userIDs.append(user.id)
            clients.append(Client(connection: HTTPConnection(baseURL: baseURL, configuration: .init(
                headers: ["Accept": "application/json", "X-Magic-Auth": user.apiKey], transport: transport, cache: nil))))
        }
        let created = try await clients[0].connection.post("/rooms", body: .form([("room[name]", "bench-\(tag)")]))
        let roomID = try created.decode(Identified.self).id
        for (client, userID) in zip(clients, userIDs) {
            _ = try await client.connection.put("/rooms/\(roomID)/chatters/\(userID)")
        }
        return BenchStoreRoom(id: roomID, clients: clients)
    }

    /// Posts 11 more messages, then times `count` sequential polls `since` the first of them,
    /// each of which returns the last 10 messages.
    /// - Throws: ``BenchStoreCommand/Failure`` when a poll does not return those 10.
    static func timeSincePolls(_ count: Int, room: BenchStoreRoom) async throws -> Latencies {
        let client = room.clients[0]
        var ids: [String] = []
        for number in 0..<11 { ids.append(try await client.post(room: room.id, text: "last \(number)")) }
        var milliseconds: [Double] = []
        for _ in 0..<count {
            let started = ContinuousClock.now
            let response = try await client.connection.get("/rooms/\(room.id)/messages", query: [.init("since", ids[0])])
            let elapsed = ContinuousClock.now - started
            let returned = (try? response.decode([Identified].self))?.map(\.id)
            guard returned == Array(ids.dropFirst()) else {
                throw BenchStoreCommand.Failure(description: "a since-poll returned \(returned?.count ?? 0) messages, not the last 10")
            }
            milliseconds.append(BenchStoreProgress.seconds(elapsed) * 1_000)
        }
        milliseconds.sort()
        func percentile(_ fraction: Double) -> Double {
            milliseconds[min(milliseconds.count - 1, Int(Double(milliseconds.count) * fraction))]
        }
        return Latencies(median: percentile(0.5), p90: percentile(0.9), p99: percentile(0.99), max: milliseconds.last ?? 0)
    }

    private struct SignedUp: Decodable {
        let id: String
        let apiKey: String
    }
}
