import Courier
import Foundation
import Synchronization

/// The ChatCave client: every route of the ChatCave API as model objects and domain errors.
///
/// Each operation comes in two styles with the same results:
///
/// ```swift
/// let service = ChatCaveService(serverURL: URL(string: "http://127.0.0.1:3000")!)
///
/// // async
/// let me = try await service.signIn(name: "alice", password: "secret")
/// let lobby = try await service.createChatroom(named: "Lobby")
///
/// // closures: one success callback with models, one failure callback with a ChatCaveError
/// let id = service.fetchChatrooms(success: { rooms in print(rooms) },
///                                 failure: { error in print(error) })
/// service.cancelRequest(id: id)
/// ```
///
/// No HTTP detail leaks out: no status codes, headers or requests, only ``User``,
/// ``Chatroom``, ``Chatter``, ``Message`` and ``ChatCaveError``.
///
/// **Authentication** runs through Courier's re-authentication queue. The service keeps the
/// signed-in user's id and API key and sends the key with every request. When the server
/// refuses it (a revoked key, nobody signed in), every request to the server is held, the
/// ``authenticationHandler`` (or the ``delegate``) is asked for a name and password — a UI
/// shows its sign-in screen, a CLI prompts — the service signs in, and every held request is
/// sent again. A wrong password asks again; giving up fails the held requests with
/// ``ChatCaveError/notAuthorized``.
///
/// Callbacks, poller deliveries and delegate calls run on ``callbackQueue``.
public final class ChatCaveService: Sendable {
    /// The server, e.g. `http://127.0.0.1:3000`.
    public let serverURL: URL
    /// The settings the service was created with.
    public let configuration: Configuration
    /// The serial queue every callback runs on.
    public let callbackQueue: DispatchQueue

    let connection: HTTPConnection
    let session: SessionState
    let hooks: AuthenticationHooks
    let collector: StatisticsCollector
    let running = Mutex<[ChatCaveRequestID: Task<Void, Never>]>([:])

    /// Creates a service for one server. Nothing is sent until a method is called.
    /// - Parameters:
    ///   - serverURL: the server's base URL.
    ///   - configuration: scheme, queue, timeout, transport; ``Configuration/init(authenticationScheme:callbackQueue:timeout:maxSignInAttempts:transport:)`` by default.
    public init(serverURL: URL, configuration: Configuration = Configuration()) {
        self.serverURL = serverURL
        self.configuration = configuration
        let queue = configuration.callbackQueue ?? DispatchQueue(label: "ChatCave.ChatCaveService.callbacks")
        self.callbackQueue = queue
        let collector = StatisticsCollector()
        self.collector = collector
        self.session = SessionState(scheme: configuration.authenticationScheme)
        self.hooks = AuthenticationHooks(callbackQueue: queue)
        self.connection = HTTPConnection(baseURL: serverURL, configuration: HTTPConnection.Configuration(
            timeout: configuration.timeout, retryPolicy: .never, headers: ["Accept": "application/json"],
            transport: configuration.transport, eventMonitor: collector.monitor))
        var prefix = serverURL.absoluteString
        while prefix.hasSuffix("/") { prefix.removeLast() }
        let authenticator = ChatCaveAuthenticator(
            session: session, hooks: hooks, statistics: collector,
            accountURL: URL(string: prefix + "/account") ?? serverURL,
            maxAttempts: max(1, configuration.maxSignInAttempts))
        // The authenticator sends the live session's credential (credentialToSend), from the first request on.
        connection.authenticate(matching: .prefix(prefix + "/"), with: authenticator)
        hooks.attach(self)
    }

    deinit {
        for task in running.withLock({ Array($0.values) }) { task.cancel() }
    }

    // MARK: - Session

    /// The signed-in user (with its id and API key), or `nil`.
    public var currentUser: User? { session.user }

    /// Resumes a session saved earlier (a CLI keeps one in a file): requests go out with this
    /// user's key at once. The server still decides: a stale key leads to the authentication handler.
    /// - Parameters:
    ///   - user: the user, with its API key.
    ///   - password: the password, needed only for the ``AuthenticationScheme/basic`` scheme; `nil` by default.
    public func restoreSession(user: User, password: String? = nil) {
        session.signedIn(user, password: password)
    }

    /// Asked for a name and password when the server refuses the credentials; see
    /// ``AuthenticationChallenge``. It may take its time (a sign-in screen): requests wait.
    /// `nil` by default, in which case the ``delegate`` is asked.
    public var authenticationHandler: AuthenticationHandler? {
        get { hooks.handler }
        set { hooks.handler = newValue }
    }

    /// Answers requests for credentials (when no handler is set) and hears of sign-ins.
    /// Held weakly; `nil` by default.
    public var delegate: (any ChatCaveServiceDelegate)? {
        get { hooks.delegate }
        set { hooks.delegate = newValue }
    }

    /// Requests, retries, re-authentications and latency so far.
    public var statistics: ChatCaveStatistics { collector.snapshot }

    // MARK: - Sending

    /// Sends a request and returns the response if the API calls it a success.
    func send(_ request: HTTPRequest) async throws(ChatCaveError) -> HTTPResponse {
        do {
            return try await connection.send(request)
        } catch {
            throw ChatCaveError(error)
        }
    }

    /// Decodes a successful response's body.
    func decode<Value: Decodable>(_ type: Value.Type, from response: HTTPResponse) throws(ChatCaveError) -> Value {
        do {
            return try JSONDecoder().decode(type, from: response.body)
        } catch {
            throw .invalidResponse("the answer from \(response.url.path) is not a valid \(Value.self): \(error)")
        }
    }

    /// The signed-in user's id.
    /// - Throws: ``ChatCaveError/notAuthorized`` when nobody is signed in.
    func currentUserID() throws(ChatCaveError) -> String {
        guard let user = session.user else { throw .notAuthorized }
        return user.id
    }

    /// A path segment with everything but unreserved characters percent-encoded. The dot
    /// segments `.` and `..` are encoded too (`%2E`), so that no proxy can read them as "this" or
    /// "the parent" directory and retarget the request.
    static func segment(_ value: String) -> String {
        if value == "." || value == ".." { return String(repeating: "%2E", count: value.count) }
        return value.addingPercentEncoding(withAllowedCharacters: .urlUnreservedCharacters) ?? value
    }
}

extension CharacterSet {
    /// RFC 3986's unreserved characters: `A–Z a–z 0–9 - . _ ~`.
    static let urlUnreservedCharacters = CharacterSet(charactersIn:
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
