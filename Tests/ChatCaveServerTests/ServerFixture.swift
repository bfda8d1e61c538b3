@testable import ChatCaveServer
import CourierTestSupport
import Foundation

/// A reference server on a free loopback port (with cheap password hashing), and helpers
/// that speak the contract through ``RawHTTPClient``.
final class ServerFixture {
    let server: ChatCaveServer
    /// The temporary data directory the fixture made for an SQLite store, removed at the end.
    private let ownDirectory: URL?

    /// A server on `dataDirectory` (SQLite), or in memory without one.
    init(dataDirectory: URL? = nil, passwordIterations: Int = 1_000,
         passwordLimits: ChatCaveServer.PasswordLimits = .init()) throws {
        server = try ChatCaveServer(port: 0, configuration: .init(dataDirectory: dataDirectory, passwordIterations: passwordIterations,
                                                                  passwordLimits: passwordLimits))
        ownDirectory = nil
    }

    /// A server on a new, empty store of this kind (SQLite in a temporary directory, removed at
    /// the end).
    init(store kind: StoreKind, passwordIterations: Int = 1_000) throws {
        let (store, directory) = try kind.makeStore()
        ownDirectory = directory
        server = try ChatCaveServer(host: "127.0.0.1", port: 0, configuration: .init(passwordIterations: passwordIterations),
                                    store: store)
    }

    /// A server on a store the test prepared.
    init(store: any ChatStore, passwordIterations: Int = 1_000) throws {
        ownDirectory = nil
        server = try ChatCaveServer(host: "127.0.0.1", port: 0, configuration: .init(passwordIterations: passwordIterations),
                                    store: store)
    }

    deinit {
        server.shutdown()
        if let ownDirectory { try? FileManager.default.removeItem(at: ownDirectory) }
    }

    /// Sends one request on a new connection, from the loopback address `source` (127.0.0.1 by default).
    func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
              from source: String? = nil) throws -> RawHTTPClient.Response {
        try RawHTTPClient(port: server.port, from: source).exchange(method, target, headers: headers, body: body)
    }

    /// Sends a form body.
    func send(_ method: String, _ target: String, auth: [(String, String)] = [], form: String,
              from source: String? = nil) throws -> RawHTTPClient.Response {
        try send(method, target, headers: auth + [("Content-Type", "application/x-www-form-urlencoded")], body: Array(form.utf8),
                 from: source)
    }

    /// Signs in with a form body, from the loopback address `source` (127.0.0.1 by default).
    func signIn(_ name: String, password: String, from source: String? = nil) throws -> RawHTTPClient.Response {
        try send("PUT", "/account", form: "user%5Bname%5D=\(name)&user%5Bpassword%5D=\(password)", from: source)
    }

    /// Sends a JSON body.
    func send(_ method: String, _ target: String, auth: [(String, String)] = [], json: String) throws -> RawHTTPClient.Response {
        try send(method, target, headers: auth + [("Content-Type", "application/json")], body: Array(json.utf8))
    }

    /// Signs a user up with a form body and returns its id and API key.
    func signUp(_ name: String, password: String = "pw") throws -> (id: String, key: String) {
        let response = try send("POST", "/users", form: "user%5Bname%5D=\(name)&user%5Bpassword%5D=\(password)")
        let object = try response.object()
        guard response.status == 201, let id = object["id"] as? String, let key = object["apiKey"] as? String else {
            throw RawHTTPClient.Failure(description: "sign-up of \(name) failed: \(response)")
        }
        return (id, key)
    }

    /// Creates a room and returns its id.
    func createRoom(_ name: String, key: String) throws -> String {
        let response = try send("POST", "/rooms", auth: Self.magic(key), form: "room%5Bname%5D=\(name)")
        guard response.status == 201, let id = try response.object()["id"] as? String else {
            throw RawHTTPClient.Failure(description: "creating \(name) failed: \(response)")
        }
        return id
    }

    /// Signs a user up, creates a room and joins it; returns the user and the room's id.
    func signUpInNewRoom(_ name: String, room: String) throws -> (user: (id: String, key: String), roomID: String) {
        let user = try signUp(name)
        let roomID = try createRoom(room, key: user.key)
        try join(roomID, userID: user.id, key: user.key)
        return (user, roomID)
    }

    /// Joins a room as the key's owner.
    func join(_ roomID: String, userID: String, key: String) throws {
        let response = try send("PUT", "/rooms/\(roomID)/chatters/\(userID)", headers: Self.magic(key))
        guard response.status == 201 else { throw RawHTTPClient.Failure(description: "join failed: \(response)") }
    }

    /// Posts a message and returns its id.
    func post(_ text: String, to roomID: String, key: String) throws -> String {
        let response = try send("POST", "/rooms/\(roomID)/messages", auth: Self.magic(key), form: "message%5Btext%5D=\(text)")
        guard response.status == 201, let id = try response.object()["id"] as? String else {
            throw RawHTTPClient.Failure(description: "posting failed: \(response)")
        }
        return id
    }

    /// Percent-encodes a form value (every byte but ASCII letters and digits).
    static func formValue(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    static func magic(_ key: String) -> [(String, String)] {
        [("X-Magic-Auth", key)]
    }

    static func basic(_ name: String, _ password: String) -> [(String, String)] {
        [("Authorization", "Basic " + Data("\(name):\(password)".utf8).base64EncodedString())]
    }
}
