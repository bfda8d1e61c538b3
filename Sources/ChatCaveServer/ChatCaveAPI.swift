import Foundation

/// The ChatCave API as a function from request to response, with no sockets involved.
///
/// ``handle(_:)`` matches the route, refuses cross-site state changes (``CrossSiteCheck``),
/// checks credentials (every route but `GET /`, the web app's files, sign-up and sign-in needs
/// them), reads the body and runs the route's handler; every response carries
/// ``WebApp/securityHeaders``. Every refusal becomes the
/// contract's status with a JSON `{"error": …}` body; a 401 has no body and carries
/// `WWW-Authenticate: Basic realm="ChatCave Server"`. Nothing a client sends can crash it.
///
/// Handlers may be slow (password hashing): call ``handle(_:)`` off the server's event loop.
final class ChatCaveAPI: Sendable {
    /// The data.
    let store: any ChatStore
    /// Checks credentials and hashes passwords.
    let verifier: CredentialVerifier
    /// The counters.
    let statistics: ServerStatistics

    /// Creates the API over a store.
    /// - Parameters:
    ///   - store: the data.
    ///   - passwordIterations: the PBKDF2 iteration count for new password hashes.
    ///   - passwordLimits: the hashing pool and the failed-attempt limits.
    init(store: any ChatStore, passwordIterations: Int, passwordLimits: ChatCaveServer.PasswordLimits) {
        self.store = store
        self.verifier = CredentialVerifier(store: store, iterations: passwordIterations, limits: passwordLimits)
        self.statistics = ServerStatistics()
    }

    /// Answers one request.
    /// - Parameter request: the request.
    /// - Returns: the response; never throws, never traps.
    func handle(_ request: APIRequest) -> APIResponse {
        var response: APIResponse
        do {
            response = try route(request)
        } catch {
            response = error.response
        }
        response.headers += WebApp.securityHeaders
        statistics.record(status: response.status)
        return response
    }

    private func route(_ request: APIRequest) throws(APIError) -> APIResponse {
        let route = try Route.match(method: request.method, path: request.path)
        try CrossSiteCheck.check(request)
        if route.isOpen { return try handleOpen(route, request) }
        guard let authentication = try verifier.authenticate(request) else { throw .unauthorized }
        let user = authentication.user
        switch route {
        case .root, .asset, .signUp, .signIn:
            return try handleOpen(route, request)
        case .signOut:
            // With X-Magic-Auth only that key is retired (the user's other clients keep theirs);
            // with Basic every key of the user is.
            try store.revokeAPIKeys(authentication.apiKey, userID: user.id)
            return .json(200, APIRepresentation.Empty())
        case .listUsers:
            let ownKey = try ownKey(authentication)
            return .json(200, try store.allUsers().map { APIRepresentation.User($0, apiKey: $0.id == user.id ? ownKey : nil) })
        case .user(let id):
            guard let found = try store.user(id: id) else { throw .notFound("No user exists with ID '\(id.prefix(100))'") }
            let ownKey = found.id == user.id ? try ownKey(authentication) : nil
            return .json(200, APIRepresentation.User(found, apiKey: ownKey))
        case .listRooms:
            return .json(200, try store.rooms())
        case .createRoom:
            let parameters = try RequestParameters(request)
            return .json(201, try store.createRoom(named: parameters["room[name]"]))
        case .room(let id):
            return .json(200, try store.room(id: id))
        case .deleteRoom(let id):
            try store.deleteRoom(id: id)
            return .redirect(to: "/rooms")
        case .chatters(let roomID):
            return .json(200, try store.chatters(roomID: roomID))
        case .join(let roomID, let userID):
            let members = try store.join(roomID: roomID, userID: userID, requesterID: user.id)
            return .json(201, APIRepresentation.Members(users: members))
        case .leave(let roomID, let userID):
            try store.leave(roomID: roomID, userID: userID, requesterID: user.id)
            return .json(200, APIRepresentation.Empty())
        case .messages(let roomID):
            return .json(200, try store.messages(roomID: roomID, since: request.queryValue("since")))
        case .postMessage(let roomID):
            let parameters = try RequestParameters(request)
            let message = try store.post(roomID: roomID, authorID: user.id, text: parameters["message[text]"])
            return .json(201, message, headers: [(name: "Location", value: "/rooms/\(roomID)/messages/\(message.id)")])
        }
    }

    /// The API key to show the authenticated user: the one it presented, else the one remembered.
    private func ownKey(_ authentication: CredentialVerifier.Authentication) throws(APIError) -> String? {
        if let key = authentication.apiKey { return key }
        return try store.knownKey(userID: authentication.user.id)
    }

    /// The open routes: the API description, sign-up and sign-in.
    /// At `/` a browser gets the web app's page instead of the description; the app's files are open too.
    private func handleOpen(_ route: Route, _ request: APIRequest) throws(APIError) -> APIResponse {
        switch route {
        case .signUp:
            let parameters = try RequestParameters(request)
            let name = try TextRules.name(parameters["user[name]"], what: "User name")
            let password = parameters["user[password]"] ?? ""
            guard !password.isEmpty else { throw .rejected("Password must not be empty") }
            guard try !store.nameIsTaken(name) else { throw .rejected("A user named '\(name)' already exists") }
            let added = try store.addUser(name: name, passwordHash: try verifier.hashForSignUp(password: password, from: request))
            return .json(201, APIRepresentation.User(added.user, apiKey: added.apiKey))
        case .signIn:
            let parameters = try RequestParameters(request)
            let name = (parameters["user[name]"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            let password = parameters["user[password]"] ?? ""
            guard !name.isEmpty, !password.isEmpty else { throw .rejected("User name and password must not be empty") }
            guard let user = try verifier.user(named: name, password: password, from: request) else { throw .invalidCombination }
            return .json(201, APIRepresentation.User(user, apiKey: try store.signInKey(userID: user.id)))
        case .asset(let name):
            guard let asset = WebApp.assets[name] else { throw .notFound("No file named '\(name.prefix(100))'") }
            return asset.response(to: request)
        default:
            if request.prefersHTML { return WebApp.page.response(to: request) }
            return .json(200, Self.description, headers: [(name: "Vary", value: "Accept")])
        }
    }
}
