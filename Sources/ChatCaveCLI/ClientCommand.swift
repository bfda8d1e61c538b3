import ChatCave
import Foundation

/// The client commands: `signup signin signout rooms create join leave say tail delete`.
///
/// The server comes from `--server` or `CHATCAVE_SERVER` (else `http://127.0.0.1:3000`); the
/// name from `--name` or `CHATCAVE_NAME`; the password from ``PasswordOptions`` (`--password-stdin`,
/// `--password-file`, `--password`, `CHATCAVE_PASSWORD`); else a prompt when standard input is
/// a terminal. The signed-in user is remembered in a 0600 session file; when the server refuses
/// its key, the service asks for the name and password (the re-authentication queue) and the
/// file is updated. Everything printed that came from the server is escaped by ``TerminalText``.
enum ClientCommand: String, CaseIterable, Sendable {
    case signup, signin, signout, rooms, create, join, leave, say, tail, delete

    /// The usage line and description of the command.
    var usage: String {
        let (synopsis, summary) = switch self {
        case .signup: ("signup [--name NAME] [--password-stdin | --password-file PATH]", "Creates an account and signs in as it.")
        case .signin: ("signin [--name NAME] [--password-stdin | --password-file PATH]", "Signs in and remembers the session.")
        case .signout: ("signout", "Signs out (the server retires the API key) and forgets the session.")
        case .rooms: ("rooms", "Lists the chatrooms with their ids and chatters.")
        case .create: ("create <name>", "Creates a chatroom.")
        case .join: ("join <room>", "Joins a chatroom, given by id or name.")
        case .leave: ("leave <room>", "Leaves a chatroom, given by id or name.")
        case .say: ("say <room> <text...>", "Posts a message to a chatroom.")
        case .tail: ("tail <room> [--interval SECONDS]", "Prints the room's messages, then new ones as they arrive, until Ctrl-C.")
        case .delete: ("delete <room>", "Deletes an empty chatroom.")
        }
        return """
            USAGE: chatcave \(synopsis) [--server URL]

            \(summary)

            OPTIONS:
              --server URL          the server (or CHATCAVE_SERVER); http://127.0.0.1:3000 by default
              --name NAME           the user name (or CHATCAVE_NAME), when a sign-in is needed
              --password-stdin      read the password from the first line of standard input
              --password-file PATH  read the password from the first line of PATH (mode 0600: only you may read it)
              --password PASSWORD   the password; other local users can see it (ps), so prefer the two above
                                    or CHATCAVE_PASSWORD; without any, it is prompted for when needed
            """
    }

    private var positionalRange: (Int, Int?) {
        switch self {
        case .signup, .signin, .signout, .rooms: (0, 0)
        case .create, .join, .leave, .tail, .delete: (1, 1)
        case .say: (2, nil)
        }
    }

    /// Runs the command.
    /// - Returns: the exit code.
    /// - Throws: ``CommandArguments/UsageError`` for a usage mistake.
    func run(_ arguments: [String], environment: [String: String], standardInput: () -> String?,
             output: CommandOutput) async throws -> Int32 {
        let parsed = try CommandArguments(arguments, valueOptions: PasswordOptions.valueOptions.union(["server", "name", "interval"]),
                                          flagOptions: PasswordOptions.flagOptions)
        if parsed.wantsHelp {
            output.line(usage)
            return ChatCaveCommandLine.success
        }
        let (minimum, maximum) = positionalRange
        try parsed.requirePositionals(minimum, maximum, usage: usage.split(separator: "\n").first.map(String.init) ?? rawValue)
        if parsed[option: "interval"] != nil, self != .tail {
            throw CommandArguments.UsageError(description: "unknown option '--interval'")
        }
        let client = try ClientContext(arguments: parsed, environment: environment, standardInput: standardInput, output: output)
        defer { client.finish() }
        do {
            try await perform(parsed.positionals, client: client, arguments: parsed)
            return ChatCaveCommandLine.success
        } catch let error as ChatCaveError {
            let explanation = self == .signin && error == .notAuthorized ? "the name or password is wrong" : Self.explain(error)
            output.error("chatcave \(rawValue): \(explanation)")
            return ChatCaveCommandLine.failure
        }
    }

    private func perform(_ positionals: [String], client: ClientContext, arguments: CommandArguments) async throws {
        let service = client.service
        let output = client.output
        switch self {
        case .signup, .signin:
            let credentials = try await client.credentials(signingUp: self == .signup)
            let user = self == .signup ? try await service.signUp(name: credentials.name, password: credentials.password)
                : try await service.signIn(name: credentials.name, password: credentials.password)
            output.line("Signed \(self == .signup ? "up" : "in") as \(Self.shown(user.name)) (id \(Self.shown(user.id))) on \(service.serverURL.absoluteString).")
        case .signout:
            defer { client.forgetSession() }
            try await service.signOut()
            output.line("Signed out.")
        case .rooms:
            let rooms = try await service.fetchChatrooms()
            if rooms.isEmpty { output.line("No chatrooms yet. Create one: chatcave create <name>") }
            for room in rooms {
                let names = room.chatters.map { Self.shown($0.name) }.joined(separator: ", ")
                output.line("\(Self.shown(room.name))  [\(Self.shown(room.id))]  \(room.chatters.isEmpty ? "empty" : names)")
            }
        case .create:
            let room = try await service.createChatroom(named: positionals[0])
            output.line("Created \(Self.shown(room.name)) [\(Self.shown(room.id))].")
        case .join:
            let room = try await client.room(positionals[0])
            let chatters = try await service.join(id: room.id)
            output.line("Joined \(Self.shown(room.name)): \(chatters.map { Self.shown($0.name) }.joined(separator: ", ")).")
        case .leave:
            let room = try await client.room(positionals[0])
            try await service.leave(id: room.id)
            output.line("Left \(Self.shown(room.name)).")
        case .say:
            let room = try await client.room(positionals[0])
            let message = try await service.postMessage(text: positionals.dropFirst().joined(separator: " "), to: room.id)
            output.line(MessageFormatter.line(for: message))
        case .delete:
            let room = try await client.room(positionals[0])
            let remaining = try await service.deleteChatroom(id: room.id)
            output.line("Deleted \(Self.shown(room.name)); \(remaining.count) room\(remaining.count == 1 ? "" : "s") left.")
        case .tail:
            let room = try await client.room(positionals[0])
            try await TailCommand.run(room: room, service: service, arguments: arguments, output: output)
        }
    }

    /// Text from the network (a name, an id, a server's reason) as it may be printed: on one
    /// line, with control and bidi characters escaped.
    private static func shown(_ text: String) -> String {
        TerminalText.escaped(text)
    }

    /// A sentence for a failure, in the CLI's words; the server's own words are escaped.
    static func explain(_ error: ChatCaveError) -> String {
        switch error {
        case .notAuthorized: "not signed in, or the name and password were refused (try: chatcave signin)"
        case .forbidden: "forbidden: you may only act as yourself"
        case .notFound: "not found (run 'chatcave rooms' to see the rooms and their ids)"
        case .rejected(let reason): shown(reason)
        case .server: "the server failed; try again later"
        case .transport(let underlying): "cannot reach the server: \(shown("\(underlying)"))"
        case .cancelled: "cancelled"
        case .invalidResponse(let detail): "the server's answer is unreadable: \(shown(detail))"
        }
    }
}
