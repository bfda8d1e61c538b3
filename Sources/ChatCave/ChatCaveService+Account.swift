import Courier

/// Signing up, in and out, and the users of the server (`async` style).
extension ChatCaveService {
    /// Creates an account and signs in as it: the service keeps the user's id and API key.
    /// - Parameters:
    ///   - name: the user name (unique on the server).
    ///   - password: the password.
    /// - Returns: the new user, with its API key.
    /// - Throws: ``ChatCaveError/rejected(_:)`` for an empty field or a name already taken;
    ///   ``ChatCaveError/transport(_:)`` and the others as for any request.
    @discardableResult
    public func signUp(name: String, password: String) async throws(ChatCaveError) -> User {
        let response = try await send(Self.credentialsRequest(.post, "/users", name, password))
        let user = try decode(User.self, from: response)
        session.signedIn(user, password: password)
        hooks.didSignIn(user)
        return user
    }

    /// Signs in: the service keeps the user's id and API key for the following requests.
    /// - Returns: the user, with its API key.
    /// - Throws: ``ChatCaveError/notAuthorized`` for an unknown name or a wrong password
    ///   (the authentication handler is not asked); ``ChatCaveError/rejected(_:)`` for an empty field.
    @discardableResult
    public func signIn(name: String, password: String) async throws(ChatCaveError) -> User {
        let response = try await send(Self.credentialsRequest(.put, "/account", name, password))
        let user = try decode(User.self, from: response)
        session.signedIn(user, password: password)
        hooks.didSignIn(user)
        return user
    }

    /// Signs out: the server retires the API key, and the service forgets the user — even
    /// when the server could not be told.
    /// - Throws: ``ChatCaveError/notAuthorized`` when the server did not know the credentials.
    public func signOut() async throws(ChatCaveError) {
        defer { session.signedOut() }
        _ = try await send(HTTPRequest(.delete, "/account"))
    }

    /// Every user of the server; only the signed-in user comes with an API key.
    public func fetchUsers() async throws(ChatCaveError) -> [User] {
        try decode([User].self, from: try await send(HTTPRequest(.get, "/users")))
    }

    /// One user.
    /// - Throws: ``ChatCaveError/notFound`` when there is no such user.
    public func fetchUser(id: String) async throws(ChatCaveError) -> User {
        try decode(User.self, from: try await send(HTTPRequest(.get, "/users/" + Self.segment(id))))
    }

    static func credentialsForm(_ name: String, _ password: String) -> HTTPRequest.Body {
        .form(["user[name]": name, "user[password]": password])
    }

    /// A request whose body holds a password: redirects are followed within the server's origin
    /// only, so the password never reaches another one (the redirect comes back as an error).
    static func credentialsRequest(_ method: HTTPRequest.Method, _ target: String, _ name: String, _ password: String) -> HTTPRequest {
        var request = HTTPRequest(method, target, body: credentialsForm(name, password))
        request.redirectPolicy = .sameOriginOnly
        return request
    }
}
