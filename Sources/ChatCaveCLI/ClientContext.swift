import ChatCave
import Courier
import Foundation

/// What a client command works with: the service for the chosen server, the remembered
/// session, and where credentials come from.
final class ClientContext: ChatCaveServiceDelegate {
    let service: ChatCaveService
    let output: CommandOutput
    private let sessionFile: SessionFile
    private let givenName: String?
    private let givenPassword: String?
    /// The command's own transport, shut down when the command finishes, so that an in-process
    /// command leaves no pooled connection behind (the shared transport would keep it for its
    /// idle timeout).
    private let transport = NativeTransport()

    /// Sets up the service for the command's server and resumes the remembered session.
    /// Warns on standard error when the server is plain http beyond loopback.
    /// - Throws: ``CommandArguments/UsageError`` for an unusable server URL or password option.
    init(arguments: CommandArguments, environment: [String: String], standardInput: () -> String?,
         output: CommandOutput) throws {
        let text = arguments[option: "server"] ?? environment["CHATCAVE_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "http://127.0.0.1:3000"
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host?.isEmpty == false else {
            throw CommandArguments.UsageError(description: "'\(text)' is not an http(s) URL")
        }
        if let warning = CleartextWarning.forClient(talkingTo: url) { output.error(warning) }
        self.output = output
        self.sessionFile = SessionFile(environment: environment)
        self.givenName = arguments[option: "name"] ?? environment["CHATCAVE_NAME"].flatMap { $0.isEmpty ? nil : $0 }
        self.givenPassword = try PasswordOptions.password(from: arguments, environment: environment,
                                                          standardInput: standardInput, output: output)
        self.service = ChatCaveService(serverURL: url, configuration: .init(transport: transport))
        do {
            if let user = try sessionFile.load(server: url) { service.restoreSession(user: user) }
        } catch {
            output.error("chatcave: ignoring the saved session: \(error)")
        }
        let (name, password) = (givenName, givenPassword)
        service.authenticationHandler = { challenge in
            await Self.answer(challenge, name: name, password: password, output: output)
        }
        service.delegate = self
    }

    /// Ends the command: cancels what is still running and lets the callback queue finish
    /// (a session being saved after a sign-in is written before the program exits).
    func finish() {
        service.cancelAllRequests()
        service.callbackQueue.sync {}
        transport.shutdown()
    }

    /// Remembers every sign-in in the session file.
    func chatCaveService(_ service: ChatCaveService, didSignIn user: User) {
        do {
            try sessionFile.save(user, server: service.serverURL)
        } catch {
            output.error("chatcave: cannot save the session in \(sessionFile.url.path): \(error)")
        }
    }

    /// Forgets the remembered session.
    func forgetSession() {
        do {
            try sessionFile.remove()
        } catch {
            output.error("chatcave: cannot forget the session: \(error)")
        }
    }

    /// The name and password for `signup` and `signin`: from the options or environment, else
    /// prompted. `signin` without a name takes the saved session's user name.
    /// - Parameter signingUp: whether they are for `signup`, which never reuses the session's name.
    /// - Throws: ``ChatCaveError/rejected(_:)`` when none can be had.
    func credentials(signingUp: Bool) async throws -> SignInCredentials {
        let name = givenName ?? (signingUp ? nil : service.currentUser?.name)
        let challenge = AuthenticationChallenge(reason: .notSignedIn, userName: name, failedAttempts: 0)
        guard let credentials = await Self.answer(challenge, name: name, password: givenPassword, output: output) else {
            throw ChatCaveError.rejected("a name and password are needed: --name and --password-stdin (or --password-file), "
                                        + "or CHATCAVE_NAME and CHATCAVE_PASSWORD")
        }
        return credentials
    }

    /// A room given by id or by name.
    /// - Throws: ``ChatCaveError/notFound`` when no room has that id or name.
    func room(_ reference: String) async throws -> Chatroom {
        let rooms = try await service.fetchChatrooms()
        if let room = rooms.first(where: { $0.id == reference }) ?? rooms.first(where: { $0.name == reference }) {
            return room
        }
        throw ChatCaveError.notFound
    }

    /// Answers a request for credentials: the given ones first; after a refusal, or without
    /// them, a prompt when standard input is a terminal; else nothing.
    ///
    /// The name is the given one (`--name`, `CHATCAVE_NAME`), else the one the challenge carries
    /// (the saved session's user, or the name last used): with a revoked key and only a password
    /// given, the CLI signs in again as the session's user. The prompt asks only for what is
    /// missing: the password alone when the name is known, both after a wrong password.
    private static func answer(_ challenge: AuthenticationChallenge, name: String?, password: String?,
                               output: CommandOutput) async -> SignInCredentials? {
        let known = name ?? challenge.userName.flatMap { $0.isEmpty ? nil : $0 }
        if challenge.failedAttempts == 0, let known, let password, !password.isEmpty {
            return SignInCredentials(name: known, password: password)
        }
        guard Terminal.isInteractive else { return nil }
        switch challenge.reason {
        case .wrongPassword: output.error("The name or password was wrong; try again.")
        case .credentialsRejected: output.error("The server refused the saved session; please sign in.")
        case .notSignedIn: break
        }
        let chosen: String
        if let known, challenge.reason != .wrongPassword {
            chosen = known
        } else {
            let suggested = challenge.userName ?? name
            guard let typed = await Terminal.ask("Name\(suggested.map { " [\(TerminalText.escaped($0))]" } ?? ""): ") else { return nil }
            chosen = typed.isEmpty ? (suggested ?? "") : typed
        }
        let prompt = known == chosen ? "Password for \(TerminalText.escaped(chosen)): " : "Password: "
        guard !chosen.isEmpty, let secret = await Terminal.ask(prompt, secret: true), !secret.isEmpty else { return nil }
        return SignInCredentials(name: chosen, password: secret)
    }
}
