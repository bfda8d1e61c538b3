import ChatCaveServer
import Foundation

/// `chatcave serve [--port 3000] [--host 127.0.0.1] [--data-dir DIR] [--durability synced|flushed]`: runs the reference
/// server until SIGINT or SIGTERM (or, in-process, until its task is cancelled). Binding an
/// address beyond loopback prints a ``CleartextWarning`` on standard error.
enum ServeCommand {
    static let usage = """
        USAGE: chatcave serve [--port PORT] [--host HOST] [--data-dir DIR] [--durability synced|flushed]

        Runs the reference ChatCave server until interrupted (Ctrl-C or SIGTERM). Open its URL in a
        browser for the web app: sign up, chat, all served by this program.

        OPTIONS:
          --port PORT       the port; PORT from the environment, else 3000 (0 picks a free one)
          --host HOST       the address to bind; 127.0.0.1 by default (0.0.0.0 for every interface;
                            the server speaks plain HTTP, so any address beyond loopback is warned about)
          --data-dir DIR    keep users, rooms and messages in DIR/chatcave.sqlite (SQLite; the directory is
                            created, mode 0700, the files are mode 0600); memory only by default. A
                            chatcave-store.json of an older server there is imported once and renamed
                            chatcave-store.json.migrated
          --durability D    with --data-dir: 'synced' (the default) syncs every change to the disk before
                            answering it; 'flushed' answers once the change is in the database's log,
                            which survives a crash of the server but not of the system or a power loss
        """

    static func run(_ arguments: [String], environment: [String: String], output: CommandOutput) async throws -> Int32 {
        let parsed = try CommandArguments(arguments, valueOptions: ["port", "host", "data-dir", "durability"])
        if parsed.wantsHelp {
            output.line(usage)
            return ChatCaveCommandLine.success
        }
        try parsed.requirePositionals(0, 0, usage: "chatcave serve [--port PORT] [--data-dir DIR]")
        let port: Int
        if let value = try parsed.integer("port", in: 0...65_535) {
            port = value
        } else if let text = environment["PORT"], !text.isEmpty {
            guard let value = Int(text), (0...65_535).contains(value) else {
                throw CommandArguments.UsageError(description: "PORT must be a whole number from 0 to 65535, not '\(text)'")
            }
            port = value
        } else {
            port = 3_000
        }
        let directory = parsed[option: "data-dir"].map { URL(fileURLWithPath: $0, isDirectory: true) }
        let host = parsed[option: "host"] ?? "127.0.0.1"
        let durability = try durabilityOption(parsed)
        if let warning = CleartextWarning.forServer(binding: host) { output.error(warning) }
        let server: ChatCaveServer
        do {
            server = try ChatCaveServer(host: host, port: port,
                                        configuration: .init(dataDirectory: directory, durability: durability))
        } catch {
            output.error("chatcave serve: \(error)")
            return ChatCaveCommandLine.failure
        }
        output.line("ChatCave server listening on \(server.baseURL.absoluteString)"
                    + (directory.map { " (data in \($0.appendingPathComponent("chatcave.sqlite").path), durability \(durability.rawValue))" } ?? " (data in memory only)"))
        output.line("Open \(server.baseURL.absoluteString)/ in a browser for the web app. Press Ctrl-C to stop.")
        let signal = await Terminal.waitForInterrupt()
        server.shutdown()
        output.line("Stopped (\(signal)).")
        return ChatCaveCommandLine.success
    }

    /// The `--durability` option: `synced` (the default) or `flushed`.
    /// - Throws: ``CommandArguments/UsageError`` for any other value.
    static func durabilityOption(_ parsed: CommandArguments) throws -> ChatCaveServer.Durability {
        guard let text = parsed[option: "durability"] else { return .synced }
        guard let durability = ChatCaveServer.Durability(rawValue: text) else {
            throw CommandArguments.UsageError(description: "--durability must be 'synced' or 'flushed', not '\(text)'")
        }
        return durability
    }
}
