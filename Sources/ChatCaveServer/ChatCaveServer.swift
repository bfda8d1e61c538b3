import CourierTLS
import Dispatch
import Foundation
import HTTPServerCore

/// The reference ChatCave server: the whole contract of `chatcave-api.md`, over HTTP/1.1.
///
/// It runs on `HTTPServerCore` (one event loop thread for the sockets) and answers each
/// request on a thread of its own (``RequestWorkers``), since password hashing is deliberately
/// slow; hashes run in a bounded pool and failed password checks are throttled
/// (``Configuration/passwordLimits``). Users, rooms and messages live in a ``ChatStore``: in
/// memory only, or, with a ``Configuration/dataDirectory``, in an SQLite database there
/// (``SQLiteChatStore``), where every change is committed before it is answered.
///
/// It fixes the original's bugs: deleting one room deletes only that room; a wrong password
/// gets a 401 at once; duplicate names and unknown ids get 406 and 404; posting to an unknown
/// room is a 404; leaving a room one is not in is a 404; rooms list their chatters' ids; a
/// user can join or leave only as itself (403 otherwise); passwords are stored as salted
/// PBKDF2 hashes; joining twice adds no second `join` message. It also never shows a user's
/// API key to anyone but that user.
///
/// ```swift
/// let server = try ChatCaveServer(port: 0)          // a free port on 127.0.0.1
/// defer { server.shutdown() }
/// print(server.baseURL)                             // http://127.0.0.1:<port>
/// ```
public final class ChatCaveServer: Sendable {
    /// The port the server listens on (the one the kernel picked when 0 was asked for).
    public let port: Int
    /// The address the server is bound to.
    public let host: String
    /// The configuration it runs with.
    public let configuration: Configuration

    private let api: ChatCaveAPI
    private let server: HTTPServer
    private let workers: RequestWorkers

    /// Loads the data directory (if any), binds `host:port` and starts serving.
    /// - Parameters:
    ///   - host: the address to bind; `"127.0.0.1"` by default.
    ///   - port: the port; 0 (the default) lets the kernel pick a free one (see ``port``).
    ///     The contract's usual port is 3000.
    ///   - configuration: data directory, hashing cost and limits; ``Configuration/init(dataDirectory:passwordIterations:maxBodyBytes:headerTimeout:idleTimeout:passwordLimits:)`` by default.
    /// - Throws: ``StartupError`` when the data directory cannot be read or the port cannot be bound.
    public convenience init(host: String = "127.0.0.1", port: Int = 0, configuration: Configuration = Configuration()) throws(StartupError) {
        let store: any ChatStore
        if let directory = configuration.dataDirectory {
            do {
                store = try SQLiteChatStore(directory: directory, synchronous: configuration.durability == .synced ? .full : .normal)
            } catch {
                throw StartupError(description: "\(error)")
            }
        } else {
            store = MemoryChatStore()
        }
        try self.init(host: host, port: port, configuration: configuration, store: store)
    }

    /// Binds `host:port` and starts serving from `store` (the configuration's data directory is
    /// not used). Tests use it to run a server on a store they prepared.
    /// - Throws: ``StartupError`` when the port cannot be bound.
    init(host: String, port: Int, configuration: Configuration, store: any ChatStore) throws(StartupError) {
        let api = ChatCaveAPI(store: store, passwordIterations: configuration.passwordIterations,
                              passwordLimits: configuration.passwordLimits)
        let workers = RequestWorkers()
        let serverConfiguration = HTTPServer.Configuration(maxBodyBytes: configuration.maxBodyBytes,
                                                           headerTimeout: configuration.headerTimeout,
                                                           idleTimeout: configuration.idleTimeout,
                                                           errorBody: { status, message in  // every error body is JSON
                                                               ("application/json", APIResponse.error(status, message).body)
                                                           })
        do {
            server = try HTTPServer(host: host, port: port, configuration: serverConfiguration) { request, responder in
                let apiRequest = APIRequest(method: request.method, path: request.path, query: request.query,
                                            headers: request.fields.map { (name: $0.name, value: $0.value) },
                                            body: request.body, peerAddress: request.remoteAddress?.addressBytes)
                let started = workers.start {
                    let response = api.handle(apiRequest)
                    responder.respond(status: response.status, headers: response.headers, body: response.body)
                }
                if !started {
                    let response = APIError.busy(retryAfter: 1).response
                    responder.respond(status: response.status, headers: response.headers, body: response.body)
                }
            }
        } catch {
            throw StartupError(description: "cannot listen on \(host):\(port): \(error)")
        }
        self.port = server.port
        self.host = host
        self.configuration = configuration
        self.api = api
        self.workers = workers
    }

    deinit {
        server.shutdown()
    }

    /// `http://<host>:<port>`, without a trailing slash.
    public var baseURL: URL {
        let literal = host.contains(":") ? "[\(host)]" : host
        return URL(string: "http://\(literal):\(port)") ?? URL(fileURLWithPath: "/")
    }

    /// Stops accepting and closes every connection, then waits (up to 5 seconds) for requests
    /// being handled to finish, so that every answered change is on disk. Idempotent.
    public func shutdown() {
        server.shutdown()
        workers.wait(timeout: .now() + 5)
    }

    /// Revokes every API key of a user: requests with any of them get 401 until the user signs
    /// in again (which returns a new key). Basic credentials still work.
    /// - Parameter name: the user's name.
    /// - Returns: `true` when the user exists and the change was saved.
    @discardableResult
    public func revokeAPIKey(forUserNamed name: String) -> Bool {
        guard let user = try? api.store.user(named: name) else { return false }
        return (try? api.store.revokeAPIKeys(nil, userID: user.id)) != nil
    }

    /// The id of the user with this name, or `nil`.
    public func userID(named name: String) -> String? {
        (try? api.store.user(named: name))?.id
    }

    /// How many responses of each status the API has sent, e.g. `[200: 12, 401: 2]`.
    /// Errors the server core answers itself (malformed heads, oversized bodies) are not counted.
    public var responsesByStatus: [Int: Int] {
        api.statistics.responsesByStatus
    }

    /// The most password hashes that ran at the same time so far (at most
    /// ``PasswordLimits/concurrentHashes``).
    public var peakConcurrentPasswordHashes: Int {
        api.verifier.pool.peakConcurrency
    }

    /// How many requests the server core handed to the API.
    public var totalRequests: Int {
        server.totalRequests
    }
}
